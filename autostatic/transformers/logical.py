"""``and``/``or``/``not`` and ``x if c else y``: Python's short-circuit rules for Python
values, logical ops / select for symbolic ones.

Before::

    ok = a and b
    y = x if c else z

After::

    ok = (b if __v_0 else __v_0) if (__v_0 := a).__class__ is not _jst_Variable else \\
        _jst.logical_and(__v_0, b)
    y = (x if __v_1 else z) if (__v_1 := c).__class__ is not _jst_Variable else \\
        _jst.select(__v_1, x, z)

The left operand (or condition) is evaluated once, first, as Python does; ``b`` is evaluated
only when Python would evaluate it, unless ``a`` is symbolic (then both sides are needed to
build the op). ``a and b and c`` is ``a and (b and c)``.
"""

from __future__ import annotations

import gast

from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import name
from autostatic.transformers.base import Transformer


class LogicalTransformer(Transformer):
    """Dual-path boolean operators and conditional expressions (see the module docstring)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self._no_walrus = 0  # inside a comprehension's iterable, where := is not allowed

    def visit_comprehension(self, node: gast.comprehension):
        self._no_walrus += 1
        node.iter = self.visit(node.iter)
        self._no_walrus -= 1
        node.target = self.visit(node.target)
        node.ifs = [self.visit(i) for i in node.ifs]
        return node

    def _temp(self, value: gast.expr):
        tmp = self.temporary("v")
        walrus = gast.NamedExpr(
            target=gast.Name(id=tmp, ctx=gast.Store(), annotation=None, type_comment=None),
            value=value,
        )
        return tmp, walrus

    def _dual(self, tmp: str, walrus, python: gast.expr, symbolic: gast.expr, origin):
        test = self.is_symbolic(walrus, negate=True)
        return copy_location_deep(gast.IfExp(test=test, body=python, orelse=symbolic), origin)

    def visit_BoolOp(self, node: gast.BoolOp):
        self.generic_visit(node)
        if self._no_walrus:
            return node
        right = node.values[-1]
        for left in reversed(node.values[:-1]):
            right = self._pair(node, left, right)
        return right

    def _pair(self, node: gast.BoolOp, left: gast.expr, right: gast.expr) -> gast.expr:
        tmp, walrus = self._temp(left)
        if isinstance(node.op, gast.And):
            python = gast.IfExp(test=name(tmp), body=right, orelse=name(tmp))
            fn = "logical_and"
        else:
            python = gast.IfExp(test=name(tmp), body=name(tmp), orelse=right)
            fn = "logical_or"
        symbolic = gast.Call(func=self.jst(fn), args=[name(tmp), _copy(right)], keywords=[])
        return self._dual(tmp, walrus, python, symbolic, node)

    def visit_UnaryOp(self, node: gast.UnaryOp):
        self.generic_visit(node)
        if not isinstance(node.op, gast.Not) or self._no_walrus:
            return node
        tmp, walrus = self._temp(node.operand)
        python = gast.UnaryOp(op=gast.Not(), operand=name(tmp))
        symbolic = gast.Call(func=self.jst("logical_not"), args=[name(tmp)], keywords=[])
        return self._dual(tmp, walrus, python, symbolic, node)

    def visit_IfExp(self, node: gast.IfExp):
        self.generic_visit(node)
        if self._no_walrus:
            return node
        tmp, walrus = self._temp(node.test)
        python = gast.IfExp(test=name(tmp), body=node.body, orelse=node.orelse)
        symbolic = gast.Call(
            func=self.jst("select"),
            args=[name(tmp), _copy(node.body), _copy(node.orelse)],
            keywords=[],
        )
        return self._dual(tmp, walrus, python, symbolic, node)

    def visit_FunctionDef(self, node: gast.FunctionDef):
        saved, self._no_walrus = self._no_walrus, 0
        super().visit_FunctionDef(node)
        self._no_walrus = saved
        return node

    def visit_Lambda(self, node: gast.Lambda):
        saved, self._no_walrus = self._no_walrus, 0
        self.generic_visit(node)
        self._no_walrus = saved
        return node


def _copy(node: gast.expr) -> gast.expr:
    import copy

    return copy.deepcopy(node)

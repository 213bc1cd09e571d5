"""``and``/``or``/``not`` and ``x if c else y``: Python's short-circuit rules for Python
values, logical ops / select for symbolic ones.

Before::

    ok = a and b
    y = x if c else z

After::

    ok = __v_0 if (__v_0 := a).__class__ is not _jst_Variable and not __v_0 else \\
        _jst.convert_and(__v_0, b)
    y = (x if __v_1 else z) if (__v_1 := c).__class__ is not _jst_Variable else \\
        _jst.convert_ifexp(__v_1, lambda: x, lambda: z)

The left operand (or condition) is evaluated once, first, as Python does (its truth value
too); ``b`` is evaluated only when Python would evaluate it, unless ``a`` is symbolic (then
both sides are needed to build the op); it appears once in the converted code, so chains
stay linear in size. ``a and b and c`` is ``a and (b and c)``. A symbolic condition of a
ternary becomes a ``cond`` op: the untaken arm never reaches values or gradients. Large
arms are not copied: the Python path calls the same lambdas. An expression that is always
a Python bool (``mode in ("a", "b") and w is not None``: see ``pyct.activity.python_bool``)
stays as written.
"""

from __future__ import annotations

import gast

from autostatic.pyct.activity import python_bool
from autostatic.pyct.nodes import walk
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import name
from autostatic.transformers.base import Transformer, _node, clone


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
        walrus = _node(gast.NamedExpr, target=name(tmp, store=True), value=value)
        return tmp, walrus

    def _dual(self, tmp: str, walrus, python: gast.expr, symbolic: gast.expr, origin):
        test = self.is_symbolic(walrus, negate=True)
        dual = _node(gast.IfExp, test=test, body=python, orelse=symbolic)
        return copy_location_deep(dual, origin)

    def visit_BoolOp(self, node: gast.BoolOp):
        python = python_bool(node)  # (asked before its operands change)
        self.generic_visit(node)
        if self._no_walrus or python:
            return node
        right = node.values[-1]
        for left in reversed(node.values[:-1]):
            right = self._pair(node, left, right)
        return right

    def _pair(self, node: gast.BoolOp, left: gast.expr, right: gast.expr) -> gast.expr:
        tmp, walrus = self._temp(left)
        is_and = isinstance(node.op, gast.And)
        truth = name(tmp)
        if is_and:
            truth = _node(gast.UnaryOp, op=_node(gast.Not), operand=truth)
        unknown = self.is_symbolic(walrus, negate=True)
        done = _node(gast.BoolOp, op=_node(gast.And), values=[unknown, truth])
        fn = "convert_and" if is_and else "convert_or"
        rest = _node(gast.Call, func=self.jst(fn), args=[name(tmp), right], keywords=[])
        return copy_location_deep(_node(gast.IfExp, test=done, body=name(tmp), orelse=rest), node)

    def visit_UnaryOp(self, node: gast.UnaryOp):
        python = python_bool(node)
        self.generic_visit(node)
        if not isinstance(node.op, gast.Not) or self._no_walrus or python:
            return node
        tmp, walrus = self._temp(node.operand)
        python = _node(gast.UnaryOp, op=_node(gast.Not), operand=name(tmp))
        symbolic = _node(gast.Call, func=self.jst("logical_not"), args=[name(tmp)], keywords=[])
        return self._dual(tmp, walrus, python, symbolic, node)

    def visit_IfExp(self, node: gast.IfExp):
        python = python_bool(node.test)
        self.generic_visit(node)
        if self._no_walrus or python:
            return node
        tmp, walrus = self._temp(node.test)
        arms = (node.body, node.orelse)
        if any(_binds(arm, self.ctx.temporaries) for arm in arms):  # a lambda would bind it
            return node
        lambdas = [_lambda(arm) for arm in arms]
        symbolic = _node(
            gast.Call, func=self.jst("convert_ifexp"), args=[name(tmp), *lambdas], keywords=[]
        )
        if sum(_size(arm) for arm in arms) > _COPY_LIMIT:  # one copy: Python calls it too
            symbolic.args[0] = walrus
            return copy_location_deep(symbolic, node)
        arms = clone(node.body), clone(node.orelse)
        python = _node(gast.IfExp, test=name(tmp), body=arms[0], orelse=arms[1])
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


_COPY_LIMIT = 40  # nodes of both arms: copied for an inline Python path up to this size


def _size(node: gast.AST) -> int:
    """The nodes of ``node`` as ``ast.walk`` counts them (context nodes too)."""
    return sum(2 if isinstance(sub.__dict__.get("ctx"), gast.AST) else 1 for sub in walk(node))


def _binds(node: gast.AST, temporaries: set) -> bool:
    """Whether ``node`` holds a user's ``:=``, or ``yield``/``await`` (a lambda around it
    would change their scope; the converter's own ``:=`` temporaries are read at once)."""
    for sub in walk(node):
        if isinstance(sub, (gast.Yield, gast.YieldFrom, gast.Await)):
            return True
        if isinstance(sub, gast.NamedExpr) and getattr(sub.target, "id", None) not in temporaries:
            return True
    return False


def _lambda(body: gast.expr) -> gast.Lambda:
    args = _node(
        gast.arguments,
        args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[],
    )  # fmt: skip
    return _node(gast.Lambda, args=args, body=body)

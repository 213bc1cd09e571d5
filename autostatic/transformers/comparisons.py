"""Chained comparisons: ``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once.

Before::

    ok = lo <= x < hi

After (this pass; the logical pass then makes the ``and`` dual-path)::

    ok = lo <= (__cmp_0 := x) and __cmp_0 < hi
    # a < f() < g() < c:
    big = (a < (__cmp_1 := f()) and __cmp_1 < (__cmp_2 := g())) and __cmp_2 < c

That is Python's own definition of a chained comparison: each middle operand is evaluated
once, the chain stops at the first false link (whose value it returns), and links after it
are never evaluated. Once the logical pass has run, a symbolic link gives ``logical_and`` of
the links instead of Python's ``and``. This pass runs before the logical pass. Where an
assignment expression is not allowed (a comprehension's iterable, a comprehension in a class
body) the chain is left as Python wrote it.
"""

from __future__ import annotations

import gast

from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import LOAD, constant, name
from autostatic.transformers.base import Transformer, _node


class ComparisonTransformer(Transformer):
    """Splits chained comparisons into ``and``-ed links (see the module docstring)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self._no_walrus = 0  # > 0 where ``:=`` is a syntax error

    @classmethod
    def has_work(cls, census) -> bool:
        return census.chained

    def visit_comprehension(self, node: gast.comprehension):
        self._no_walrus += 1
        node.iter = self.visit(node.iter)
        self._no_walrus -= 1
        node.target = self.visit(node.target)
        node.ifs = [self.visit(i) for i in node.ifs]
        return node

    def visit_ClassDef(self, node: gast.ClassDef):
        self._no_walrus += 1  # comprehensions in a class body may not use ``:=``
        self.generic_visit(node)
        self._no_walrus -= 1
        return node

    def _fresh_scope(self, node, visit):
        saved, self._no_walrus = self._no_walrus, 0
        try:
            return visit(node)
        finally:
            self._no_walrus = saved

    def visit_FunctionDef(self, node: gast.FunctionDef):
        return self._fresh_scope(node, super().visit_FunctionDef)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: gast.Lambda):
        return self._fresh_scope(node, self.generic_visit)

    def visit_Compare(self, node: gast.Compare):
        self.generic_visit(node)
        if len(node.ops) < 2 or self._no_walrus:
            return node
        links = []
        left = node.left
        last = len(node.ops) - 1
        for i, (op, right) in enumerate(zip(node.ops, node.comparators)):
            if i < last and self._stable(right):  # a constant or local: reading it twice
                links.append(_node(gast.Compare, left=left, ops=[op], comparators=[right]))
                left = _copy(right)
            elif i < last:  # a middle operand: evaluate once, reuse in the next link
                tmp = self.temporary("cmp")
                target = name(tmp, store=True)
                right_expr = _node(gast.NamedExpr, target=target, value=right)
                links.append(_node(gast.Compare, left=left, ops=[op], comparators=[right_expr]))
                left = name(tmp)
            else:
                links.append(_node(gast.Compare, left=left, ops=[op], comparators=[right]))
        chain = links[0]
        for link in links[1:]:  # left-nested: the logical pass copies only one link each
            chain = _node(gast.BoolOp, op=_node(gast.And), values=[chain, link])
        return copy_location_deep(chain, node)

    def _stable(self, node: gast.expr) -> bool:
        """Reading ``node`` twice gives the same object and has no effect."""
        if isinstance(node, gast.Constant):
            return True
        return (
            isinstance(node, gast.Name)
            and self.ctx.info is not None
            and self.is_local(node.id)
            and node.id not in self.ctx.info.cell_vars
        )


def _copy(node: gast.expr) -> gast.expr:
    return (
        _node(gast.Name, id=node.id, ctx=LOAD, annotation=None, type_comment=None)
        if isinstance(node, gast.Name)
        else constant(node.value)
    )

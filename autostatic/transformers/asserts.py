"""``assert``: the user's statement for Python values, an ``assert`` op when symbolic.

Before::

    assert x.sum() > 0, "empty batch"

After::

    assert (
        __assert_0
        if (__assert_0 := x.sum() > 0).__class__ is not _jst_Variable
        else _jst.convert_assert(__assert_0, "empty batch", 'x.sum() > 0')  # an op: True
    ), "empty batch"                       # the message is evaluated only on failure

One ``assert`` statement: under ``python -O`` it disappears, as the user's does. A Python
value is asserted by the statement itself; a symbolic one becomes an ``assert`` op checked
at each run (``convert_assert`` gives True, so the statement passes while building). On the
symbolic path the message is evaluated while building (a tensor message is shown with its
values when the assertion fails); the op's error names the user's file and line and the
asserted expression.
"""

from __future__ import annotations

import ast
import linecache

import gast

from autostatic.pyct import anno
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import constant, name
from autostatic.transformers.base import _BLOCKS, Transformer, _node, clone


class AssertTransformer(Transformer):
    """Dual-path ``assert`` (see the module docstring)."""

    @classmethod
    def has_work(cls, census) -> bool:
        return census.asserts

    @classmethod
    def transform(cls, node: gast.AST, ctx) -> gast.AST:
        cls(ctx)._block_of(node)
        return node

    def _block_of(self, node: gast.AST) -> None:
        for field in _BLOCKS:
            stmts = getattr(node, field, None)
            if not stmts:
                continue
            out = []
            for stmt in stmts:
                if isinstance(stmt, gast.Assert):
                    out.extend(self.visit_Assert(stmt))
                elif anno.get(stmt, anno.LAZY, False):
                    out.append(stmt)
                else:
                    self._block_of(stmt)
                    out.append(stmt)
            setattr(node, field, out)

    def visit_Assert(self, node: gast.Assert) -> list:
        tmp = self.ctx.namer.new("assert")
        args = [name(tmp), clone(node.msg) if node.msg is not None else constant(None)]
        call = _node(gast.Call,
            func=self.jst("convert_assert"),
            args=args + [constant(self._source(node))],
            keywords=[],
        )
        bind = _node(gast.NamedExpr, target=name(tmp, store=True), value=node.test)
        test = _node(
            gast.IfExp, test=self.is_symbolic(bind, negate=True), body=name(tmp), orelse=call
        )
        return [copy_location_deep(_node(gast.Assert, test=test, msg=node.msg), node)]

    def _source(self, node: gast.Assert) -> str:
        """The asserted expression as the user wrote it (from the file), or ''."""
        lines = linecache.getlines(self.ctx.filename)
        end = getattr(node, "end_lineno", None)
        if not lines or end is None or end > len(lines):
            return ""
        chunk = [line.encode() for line in lines[node.lineno - 1 : end]]
        chunk[-1] = chunk[-1][: node.end_col_offset]
        chunk[0] = chunk[0][node.col_offset :]
        text = b"".join(chunk).decode(errors="replace")
        try:
            stmt = ast.parse(text).body[0]
        except SyntaxError:
            return ""
        if not isinstance(stmt, ast.Assert):
            return ""
        return ast.get_source_segment(text, stmt.test) or ""

"""Nested functions: kept as written in the tracing function, each with an entry check.

A ``def`` inside the function converted is not converted with it. It keeps the user's body
and gets the entry check the import hook gives every function (``autostatic.hook.entry``),
keyed by its file, line and name; the first trace that reaches it builds its own tracing
function from the file (``autostatic.lazy``)::

    def f(x):                                def f(x):
        if x > 0:                                ...  # f's converted body; the def below
            return x                                  # is copied into the guard's branch
        def g(y):                                     # function and the Python path
            while y > 1:                          def g(y):
                y = y / 2                             if _jst.tracing and _jst.traces_here():
            return y                                      return _jst.traced(KEY)(y)
        return g(x)                                   while y > 1:  # as written
                                                          y = y / 2
                                                      return y

So a ``def`` costs its own lines (plus one check) wherever the lowering of an early return
copies it, not its converted body, and code stays linear in the nesting of functions that
each return early. The later passes leave a def marked ``anno.LAZY`` untouched; the analysis
still reads its body (the names it uses from ``f``).

Left to be converted with ``f`` (as before): generators and ``async`` functions (they run as
written), functions that declare ``nonlocal`` (their entry check could not pass cells),
``@not_to_static`` ones, and every nested function when the source file is unknown (the
key needs its hash: ``Context.source_hash``).
"""

from __future__ import annotations

import gast

from autostatic.hook.entry import MARK
from autostatic.pyct import anno
from autostatic.pyct.templates import constant, name, replace, replace_expr
from autostatic.transformers.base import Transformer, _node

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_NOT_CONVERTED = "not_to_static"


class NestedFunctionTransformer(Transformer):
    """Marks nested functions ``anno.LAZY`` and gives them entry checks (module docstring)."""

    needs_analysis = False
    statements_only = True

    @classmethod
    def has_work(cls, census) -> bool:
        return census.closures

    @classmethod
    def transform(cls, node: gast.FunctionDef, ctx) -> gast.FunctionDef:
        if ctx.source_hash is None:
            return node
        self = cls(ctx)
        self.prefix = [f"{ctx.qualname or node.name}.<locals>."]  # of the scope's qualnames
        self.generic_visit(node)  # the function's own statements (not the function)
        return node

    def visit_FunctionDef(self, node: gast.FunctionDef):
        qualname = self.prefix[-1] + node.name
        if not _as_written(node):
            return self._inside(node, qualname + ".<locals>.")
        self._check(node, qualname)
        anno.set(node, anno.LAZY, True)
        return node

    def visit_AsyncFunctionDef(self, node: gast.AsyncFunctionDef):
        return self._inside(node, f"{self.prefix[-1]}{node.name}.<locals>.")

    def visit_ClassDef(self, node: gast.ClassDef):  # its methods: ``f.<locals>.C.m``
        return self._inside(node, f"{self.prefix[-1]}{node.name}.")

    def _inside(self, node, prefix: str):
        self.prefix.append(prefix)
        try:
            self.generic_visit(node)
        finally:
            self.prefix.pop()
        return node

    def _check(self, node: gast.FunctionDef, qualname: str) -> None:
        """``if _jst.tracing and _jst.traces_here(): return _jst.traced(KEY)(<params>)`` on
        the ``def`` line, after the docstring."""
        line = min([d.lineno for d in node.decorator_list] + [node.lineno])
        key = (MARK, self.ctx.source_hash, line, node.name, qualname)
        args = node.args
        positional = [name(a.id, at=node) for a in args.posonlyargs + args.args]
        if args.vararg is not None:
            star = _node(gast.Starred, value=name(args.vararg.id, at=node), ctx=_node(gast.Load))
            positional.append(star)
        keywords = [gast.keyword(arg=a.id, value=name(a.id, at=node)) for a in args.kwonlyargs]
        if args.kwarg is not None:
            keywords.append(gast.keyword(arg=None, value=name(args.kwarg.id, at=node)))
        traced = replace_expr("jst.traced(key)", node, jst=self.ctx.jst, key=constant(key))
        call = _node(gast.Call, func=traced, args=positional, keywords=keywords)
        check = replace(
            "if jst.tracing and jst.traces_here():\n    return call",
            node,
            jst=self.ctx.jst,
            call=call,
        )
        body = node.body
        at = 1 if _is_docstring(body[0]) else 0
        body[at:at] = check


def _as_written(node: gast.FunctionDef) -> bool:
    """Whether ``node`` can keep its body, converted on its own first trace."""
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, gast.Call) else deco
        if getattr(target, "attr", None) == _NOT_CONVERTED:
            return False
        if getattr(target, "id", None) == _NOT_CONVERTED:
            return False
    stack = list(node.body)
    while stack:  # its own scope: a yield, or a nonlocal
        sub = stack.pop()
        kind = sub.__class__
        if kind is gast.Yield or kind is gast.YieldFrom or kind is gast.Nonlocal:
            return False
        if isinstance(sub, _SCOPES):
            if kind is not gast.Lambda:
                stack.extend(sub.decorator_list)
            continue
        stack.extend(gast.iter_child_nodes(sub))
    return True


def _is_docstring(stmt: gast.stmt) -> bool:
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Constant)
        and isinstance(stmt.value.value, str)
    )

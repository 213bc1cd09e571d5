"""``ast.unparse``, with the standard library's own unparser run faster: the same text.

Converted functions are shown as source (``autostatic.to_code``, ``StaticFunction.code``,
``python -m autostatic show``) and a large one unparses to thousands of lines. The standard
unparser finds each node's method by name (``getattr`` of ``"visit_" + class name``) and
opens a generator-based context manager for every bracket and block; here a node's method
is found in a table per class and brackets and blocks are small objects. Every ``visit_*``
method, and so every decision about text, is the standard library's (``tests/compiler/pyct/
test_unparse.py`` compares the two on real files). On a Python whose unparser lacks the
pieces replaced here, ``unparse`` is ``ast.unparse``.
"""

from __future__ import annotations

import ast
from contextlib import nullcontext

__all__ = ["unparse"]

_Base = getattr(ast, "_Unparser", None)
_PIECES = ("traverse", "visit", "block", "delimit", "delimit_if", "require_parens")


class _Delimit:
    """``delimit(start, end)``: ``start`` written already, ``end`` on leaving."""

    __slots__ = ("unparser", "end")

    def __init__(self, unparser, end: str):
        self.unparser = unparser
        self.end = end

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        if exc[0] is None:  # (the generator-based one writes nothing after an exception)
            self.unparser._source.append(self.end)
        return False


class _Block:
    """``block()``: the colon (and ``extra``) written already, one indent more inside."""

    __slots__ = ("unparser",)

    def __init__(self, unparser):
        self.unparser = unparser

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        if exc[0] is None:
            self.unparser._indent -= 1
        return False


_NULL = nullcontext()

if _Base is not None and all(hasattr(_Base, piece) for piece in _PIECES):

    class _Unparser(_Base):
        _methods: dict = {}  # node class -> the visit function (a plain function: no cycle)

        def traverse(self, node):
            if node.__class__ is list:
                for item in node:
                    self.traverse(item)
                return
            kind = node.__class__
            method = self._methods.get(kind)
            if method is None:
                method = getattr(type(self), "visit_" + kind.__name__, None)
                if method is None:  # the standard route (generic_visit)
                    method = ast.NodeVisitor.visit
                self._methods[kind] = method
            method(self, node)

        def block(self, *, extra=None):
            source = self._source
            source.append(":")
            if extra:
                source.append(extra)
            self._indent += 1
            return _Block(self)

        def delimit(self, start, end):
            self._source.append(start)
            return _Delimit(self, end)

        def delimit_if(self, start, end, condition):
            if condition:
                self._source.append(start)
                return _Delimit(self, end)
            return _NULL

        def require_parens(self, precedence, node):
            if self.get_precedence(node) > precedence:
                self._source.append("(")
                return _Delimit(self, ")")
            return _NULL

    def unparse(node: ast.AST) -> str:
        """``ast.unparse(node)``: the same text."""
        return _Unparser().visit(node)

else:  # pragma: no cover - an unparser without these pieces
    unparse = ast.unparse

"""Code templates: Python source whose placeholder names are replaced by AST nodes.

    replace('''
        if not _jst.is_symbolic(pred):
            body
        else:
            symbolic
    ''', pred=pred_name, body=[...stmts], symbolic=[...stmts])

A placeholder standing alone as a statement is replaced by a list of statements; in an
expression it is replaced by one expression (a ``str`` becomes a ``Name``). Nodes that carry
no location take the location of ``origin``, so generated code reports the user's line.
"""

from __future__ import annotations

import copy
import functools
import textwrap
from typing import Any

import gast

from autostatic.pyct.origin import copy_location_deep


class _Replacer(gast.NodeTransformer):
    def __init__(self, replacements: dict[str, Any]):
        self.replacements = replacements

    def _expr(self, value: Any, ctx: Any) -> gast.expr:
        if isinstance(value, str):
            return gast.Name(id=value, ctx=ctx, annotation=None, type_comment=None)
        node = copy.copy(value)
        if hasattr(node, "ctx"):
            node.ctx = ctx
        return node

    def visit_Name(self, node: gast.Name) -> Any:
        if node.id in self.replacements:
            value = self.replacements[node.id]
            if isinstance(value, list):
                raise ValueError(f"placeholder {node.id!r} takes statements, not an expression")
            return self._expr(value, node.ctx)
        return node

    def visit_Expr(self, node: gast.Expr) -> Any:
        if isinstance(node.value, gast.Name) and node.value.id in self.replacements:
            value = self.replacements[node.value.id]
            if isinstance(value, list):
                return value
        return self.generic_visit(node)

    def visit_FunctionDef(self, node: gast.FunctionDef) -> Any:
        if node.name in self.replacements:
            node.name = self.replacements[node.name]
        return self.generic_visit(node)

    def visit_arg(self, node: Any) -> Any:  # gast uses Name for args
        return node


def _clone(node: Any) -> Any:
    from autostatic.transformers.base import clone

    return clone(node)


@functools.lru_cache(maxsize=256)
def _parsed(template: str) -> gast.Module:
    """The parsed template without locations (its nodes take the origin's)."""
    tree = gast.parse(textwrap.dedent(template))
    for node in gast.walk(tree):
        for field in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, field):
                delattr(node, field)
    return tree


def replace(template: str, origin: Any = None, **replacements: Any) -> list:
    """The template's statements with placeholders replaced; locations from ``origin``."""
    tree = _clone(_parsed(template))
    body = _Replacer(replacements).visit(tree).body
    flat = []
    for stmt in body:
        flat.extend(stmt if isinstance(stmt, list) else [stmt])
    if origin is not None:
        for stmt in flat:
            copy_location_deep(stmt, origin)
    return flat


def replace_expr(template: str, origin: Any = None, **replacements: Any) -> gast.expr:
    """One expression from an expression template."""
    (stmt,) = replace(template, origin, **replacements)
    return stmt.value


def name(id: str, store: bool = False) -> gast.Name:
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=id, ctx=ctx, annotation=None, type_comment=None)


def tuple_of(names: list[str], store: bool = False) -> gast.Tuple:
    ctx = gast.Store() if store else gast.Load()
    return gast.Tuple(elts=[name(n, store) for n in names], ctx=ctx)


def constant(value: Any) -> gast.Constant:
    return gast.Constant(value=value, kind=None)

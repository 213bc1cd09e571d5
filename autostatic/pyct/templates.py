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

import functools
import textwrap
from typing import Any

import gast

from autostatic.pyct.nodes import walk
from autostatic.pyct.origin import copy_location_deep


def _expr(value: gast.expr, ctx: Any) -> gast.expr:
    """A shallow copy of the node ``value`` in context ``ctx``."""
    kind = value.__class__
    node = kind.__new__(kind)  # a shallow copy (``copy.copy`` without its protocol)
    node.__dict__.update(value.__dict__)
    if "ctx" in node.__dict__:
        node.ctx = ctx
    return node


def _instantiate(node: Any, replacements: dict[str, Any], origin: Any) -> Any:
    """A copy of the template ``node`` with placeholders replaced, its new nodes located at
    ``origin`` as they are made (one walk: the template's nodes carry no locations or
    annotations, so a plain copy is enough); replacement nodes without a location get it
    too. Context nodes (``Load``...) hold nothing and are shared."""
    if type(node) is list:
        out = []
        for item in node:
            new = _instantiate(item, replacements, origin)
            if type(new) is list:
                out.extend(new)
            else:
                out.append(new)
        return out
    kind = type(node)
    if kind is gast.Name and node.id in replacements:
        value = replacements[node.id]
        if type(value) is str:  # a name, made located
            return name(value, ctx=node.ctx, at=origin)
        if isinstance(value, list):
            raise ValueError(f"placeholder {node.id!r} takes statements, not an expression")
        return copy_location_deep(_expr(value, node.ctx), origin)
    if (
        kind is gast.Expr
        and type(node.value) is gast.Name
        and isinstance(replacements.get(node.value.id), list)
    ):  # a statement placeholder: the statements
        return [copy_location_deep(s, origin) for s in replacements[node.value.id]]
    new = kind.__new__(kind)
    values = new.__dict__
    for field, value in node.__dict__.items():  # the template's fields (no locations)
        if type(value) is list or (isinstance(value, gast.AST) and field != "ctx"):
            value = _instantiate(value, replacements, origin)
        values[field] = value
    if kind is gast.FunctionDef and node.name in replacements:
        values["name"] = replacements[node.name]
    if origin is not None and "lineno" in kind._attributes:
        values["lineno"] = values["end_lineno"] = origin.lineno
        values["col_offset"] = values["end_col_offset"] = getattr(origin, "col_offset", 0)
    return new


@functools.lru_cache(maxsize=256)
def _parsed(template: str) -> gast.Module:
    """The parsed template without locations (its nodes take the origin's)."""
    tree = gast.parse(textwrap.dedent(template))
    for node in walk(tree):
        for field in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, field):
                delattr(node, field)
    return tree


def replace(template: str, origin: Any = None, **replacements: Any) -> list:
    """The template's statements with placeholders replaced; locations from ``origin``."""
    if origin is not None and getattr(origin, "lineno", None) is None:
        origin = None
    return _instantiate(_parsed(template).body, replacements, origin)


def replace_expr(template: str, origin: Any = None, **replacements: Any) -> gast.expr:
    """One expression from an expression template."""
    (stmt,) = replace(template, origin, **replacements)
    return stmt.value


_Name = gast.Name
#: the context nodes generated code shares (they hold nothing; Python's parser shares them too)
LOAD, STORE, PARAM = gast.Load(), gast.Store(), gast.Param()


def name(id: str, store: bool = False, ctx: Any = None, at: Any = None) -> gast.Name:
    """A ``Name`` (loaded, stored with ``store``, or in ``ctx``), located ``at`` a node."""
    node = _Name.__new__(_Name)  # ``gast.Name(...)`` without its generic constructor
    values = node.__dict__
    values.update(
        id=id,
        ctx=ctx or (STORE if store else LOAD),
        annotation=None,
        type_comment=None,
    )
    if getattr(at, "lineno", None) is not None:
        values["lineno"] = values["end_lineno"] = at.lineno
        values["col_offset"] = values["end_col_offset"] = getattr(at, "col_offset", 0)
    return node


def tuple_of(names: list[str], store: bool = False) -> gast.Tuple:
    ctx = STORE if store else LOAD
    return gast.Tuple(elts=[name(n, store) for n in names], ctx=ctx)


_Constant = gast.Constant


def constant(value: Any) -> gast.Constant:
    node = _Constant.__new__(_Constant)  # ``gast.Constant(...)`` without its constructor
    node.__dict__.update(value=value, kind=None)
    return node

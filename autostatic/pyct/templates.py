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
    build = _builders.get((template, *replacements))
    if build is None:
        build = _builders[(template, *replacements)] = _builder(template, replacements)
    return build(replacements, origin)


#: (template, placeholder names...) -> the function building its statements
_builders: dict = {}


def _builder(template: str, placeholders: Any):
    """A function ``build(replacements, origin)`` making what ``_instantiate`` makes from the
    template, written out as one expression per statement (no walk of the template)."""
    consts: list = []

    def const(value: Any) -> str:
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        consts.append(value)
        return f"C[{len(consts) - 1}]"

    def build(node: Any) -> str:
        kind = type(node)
        if kind is gast.Name and node.id in placeholders:
            return f"_sub(R[{node.id!r}], {const(node.ctx)}, origin, {node.id!r})"
        fields = []
        for field, value in node.__dict__.items():  # the template's fields (no locations)
            if type(value) is list:
                value = "[" + ", ".join(item(v) for v in value) + "]"
            elif isinstance(value, gast.AST) and field != "ctx":
                value = build(value)
            elif kind is gast.FunctionDef and field == "name" and value in placeholders:
                value = f"R[{value!r}]"
            else:
                value = const(value)
            fields.append(f"{field!r}: {value}")
        if "lineno" in kind._attributes:
            fields.append("**L")
        return f"_new({const(kind)}, {{{', '.join(fields)}}})"

    def item(node: Any) -> str:
        if not isinstance(node, gast.AST):
            return const(node)
        if type(node) is gast.Expr and type(node.value) is gast.Name and (
            node.value.id in placeholders
        ):  # a statement placeholder (when given statements)
            key = repr(node.value.id)
            return f"*(_stmts(R[{key}], origin) if type(R[{key}]) is list else [{build(node)}])"
        return build(node)

    body = "[" + ", ".join(item(stmt) for stmt in _parsed(template).body) + "]"
    source = (
        "def build(R, origin):\n"
        "    L = _at(origin)\n"
        f"    return {body}\n"
    )
    scope = {"C": consts, "_new": _new, "_sub": _sub, "_stmts": _stmts, "_at": _at}
    exec(compile(source, f"<template {template.strip()[:40]!r}>", "exec"), scope)
    return scope["build"]


def _new(kind: type, values: dict) -> gast.AST:
    node = kind.__new__(kind)
    node.__dict__ = values
    return node


_NOWHERE: dict = {}


def _at(origin: Any) -> dict:
    """The location fields of nodes made at ``origin`` (its first line only)."""
    if origin is None:
        return _NOWHERE
    line, col = origin.lineno, getattr(origin, "col_offset", 0)
    return {"lineno": line, "col_offset": col, "end_lineno": line, "end_col_offset": col}


def _sub(value: Any, ctx: Any, origin: Any, key: str) -> gast.expr:
    """What an expression placeholder becomes: a name for a ``str``, else a located copy."""
    if type(value) is str:  # a name, made located
        return name(value, ctx=ctx, at=origin)
    if isinstance(value, list):
        raise ValueError(f"placeholder {key!r} takes statements, not an expression")
    return copy_location_deep(_expr(value, ctx), origin)


def _stmts(stmts: list, origin: Any) -> list:
    return [copy_location_deep(s, origin) for s in stmts]


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
    ctx = ctx or (STORE if store else LOAD)
    line = None if at is None else getattr(at, "lineno", None)
    if line is None:
        node.__dict__ = {"id": id, "ctx": ctx, "annotation": None, "type_comment": None}
    else:
        col = getattr(at, "col_offset", 0)
        node.__dict__ = {
            "id": id, "ctx": ctx, "annotation": None, "type_comment": None,
            "lineno": line, "col_offset": col, "end_lineno": line, "end_col_offset": col,
        }  # fmt: skip
    return node


def copy_location(node: Any, origin: Any) -> Any:
    """``gast.copy_location`` (``origin``'s start, and its end or None) for two statements or
    expressions, without its ``hasattr``\\s."""
    source, values = origin.__dict__, node.__dict__
    if "lineno" in source:
        values["lineno"] = source["lineno"]
    if "col_offset" in source:
        values["col_offset"] = source["col_offset"]
    values["end_lineno"] = source.get("end_lineno")  # (gast's and ast's class default: None)
    values["end_col_offset"] = source.get("end_col_offset")
    return node


def tuple_of(names: list[str], store: bool = False) -> gast.Tuple:
    ctx = STORE if store else LOAD
    return gast.Tuple(elts=[name(n, store) for n in names], ctx=ctx)


_Constant = gast.Constant


def constant(value: Any) -> gast.Constant:
    node = _Constant.__new__(_Constant)  # ``gast.Constant(...)`` without its constructor
    node.__dict__.update(value=value, kind=None)
    return node

"""``ast`` -> ``gast`` in one direct recursion: the tree ``gast.ast_to_gast`` makes, 3x faster.

gast converts through a generic ``NodeTransformer`` (a keyword dict and ``setattr``\\s per
node); this builds each node's ``__dict__`` directly. gast's own special cases for this Python
are kept: ``Name`` gains ``annotation``/``type_comment``, an ``arg`` becomes a ``Name`` in
``Param`` context, an ``except ... as e`` name becomes a ``Name``, a definition gains empty
``type_params`` where Python's ``ast`` has none. Any other node gast converts specially is
handed to gast itself, so the result is gast's for every version the project accepts
(``tests/compiler/pyct/test_to_gast.py`` compares them on real files).
"""

from __future__ import annotations

import ast

import gast
from gast.ast3 import Ast3ToGAst

_OWN = {"visit_Name", "visit_arg", "visit_ExceptHandler"}
_TYPE_PARAMS = {"visit_FunctionDef", "visit_AsyncFunctionDef", "visit_ClassDef"}
_GENERIC = {"visit", "visit_Constant", "generic_visit", "_visit"}
#: ast class names gast converts with special code this module does not copy
_DELEGATED = {
    method[len("visit_") :]
    for method in dir(Ast3ToGAst)
    if method.startswith("visit_") and method not in _OWN | _TYPE_PARAMS | _GENERIC
}
#: definitions gast gives ``type_params=[]`` (Pythons whose ``ast`` has none)
_ADDS_TYPE_PARAMS = {m[len("visit_") :] for m in _TYPE_PARAMS if hasattr(Ast3ToGAst, m)}
_CONTEXTS = {ast.Load: gast.Load, ast.Store: gast.Store, ast.Del: gast.Del}
_kinds: dict = {}  # ast class -> (gast class, fields, attributes, adds type_params) or None


def to_gast(node: ast.AST) -> gast.AST:
    """The gast form of ``node`` (a new tree; ``node`` is not changed)."""
    kind = node.__class__
    if kind is ast.Name:
        new = _make(gast.Name, node)
        new.__dict__.update(
            id=node.id, ctx=_CONTEXTS[node.ctx.__class__](), annotation=None, type_comment=None
        )
        return new
    if kind is ast.arg:
        new = _make(gast.Name, node)
        annotation = node.annotation
        new.__dict__.update(
            id=node.arg,
            ctx=gast.Param(),
            annotation=None if annotation is None else to_gast(annotation),
            type_comment=node.type_comment,
        )
        return new
    known = _kinds.get(kind)
    if known is None:
        known = _kinds[kind] = _kind(kind)
    if known is False:
        return Ast3ToGAst().visit(node)
    cls, fields, adds_type_params = known
    new = _make(cls, node)
    values = new.__dict__
    for field in fields:
        value = getattr(node, field, _MISSING)
        if value is _MISSING:
            continue
        if value.__class__ is list:
            value = [to_gast(v) if isinstance(v, ast.AST) else v for v in value]
        elif isinstance(value, ast.AST):
            value = to_gast(value)
        values[field] = value
    if adds_type_params:
        values["type_params"] = []
    if kind is ast.ExceptHandler and node.name:
        values["name"] = gast.Name(node.name, gast.Store(), None, None)
    return new


_MISSING = object()


def _make(cls: type, node: ast.AST) -> gast.AST:
    """A new ``cls`` node with ``node``'s location."""
    new = cls.__new__(cls)
    values = new.__dict__
    for attr in node._attributes:
        value = getattr(node, attr, _MISSING)
        if value is not _MISSING:
            values[attr] = value
    return new


def _kind(kind: type):
    """(gast class, fields, adds type_params) for an ast class, or False: gast converts it."""
    name = kind.__name__
    cls = getattr(gast, name, None)
    if cls is None or name in _DELEGATED:
        return False
    return cls, kind._fields, name in _ADDS_TYPE_PARAMS

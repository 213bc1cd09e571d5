"""``ast`` <-> ``gast`` in one direct recursion each: the trees ``gast.ast_to_gast`` and
``gast.gast_to_ast`` make, 3x faster.

gast converts through a generic ``NodeTransformer`` (a keyword dict and ``setattr``\\s per
node); this builds each node's ``__dict__`` directly. gast's own special cases for this Python
are kept: ``Name`` gains ``annotation``/``type_comment``, an ``arg`` becomes a ``Name`` in
``Param`` context, an ``except ... as e`` name becomes a ``Name``, a definition gains empty
``type_params`` where Python's ``ast`` has none. Any other node gast converts specially is
handed to gast itself, so the result is gast's for every version the project accepts
(``tests/compiler/pyct/test_to_gast.py`` compares them on real files).

``to_ast`` goes back the same way (the converter's output, to compile and to unparse): a
``Name`` in ``Param`` context under ``arguments`` becomes an ``arg``, an ``except ... as e``
name a string, and fields this Python's ``ast`` lacks (``type_params`` before 3.12) are
dropped; the nodes gast converts in other special ways go to gast.
"""

from __future__ import annotations

import ast

import gast
from gast.ast3 import Ast3ToGAst, GAstToAst3

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
#: context nodes hold nothing: one of each is shared (Python's parser shares them too)
_CONTEXTS = {ast.Load: gast.Load(), ast.Store: gast.Store(), ast.Del: gast.Del()}
_PARAM = gast.Param()
_kinds: dict = {}  # ast class -> (gast class, fields, attributes, adds type_params) or None


def to_gast(node: ast.AST) -> gast.AST:
    """The gast form of ``node`` (a new tree; ``node`` is not changed)."""
    kind = node.__class__
    if kind is ast.Name:
        new = _make(gast.Name, node)
        new.__dict__.update(
            id=node.id, ctx=_CONTEXTS[node.ctx.__class__], annotation=None, type_comment=None
        )
        return new
    if kind is ast.arg:
        new = _make(gast.Name, node)
        annotation = node.annotation
        new.__dict__.update(
            id=node.arg,
            ctx=_PARAM,
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
            value = _CONTEXTS.get(value.__class__) or to_gast(value)
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


# -- gast -> ast -------------------------------------------------------------------------------

#: gast class names gast converts back with special code this module does not copy
_DELEGATED_BACK = {
    method[len("visit_") :]
    for method in dir(GAstToAst3)
    if method.startswith("visit_")
    and method
    not in {
        "visit_Name",
        "visit_arguments",
        "visit_ExceptHandler",
        "visit_Assign",
        "visit_FunctionDef",
        "visit_AsyncFunctionDef",
        "visit_ClassDef",
    }
    | _GENERIC
}
_AST_CONTEXTS = {gast.Load: ast.Load(), gast.Store: ast.Store(), gast.Del: ast.Del()}
_back: dict = {}  # gast class -> (ast class, fields) or False (gast converts it)


def to_ast(node: gast.AST) -> ast.AST:
    """The ``ast`` form of the gast ``node`` (a new tree; ``node`` is not changed)."""
    kind = node.__class__
    source = node.__dict__  # (gast's classes have no defaults for fields)
    if kind is gast.Name:  # (a third of the nodes: ``_locate`` inline)
        new = ast.Name.__new__(ast.Name)
        ctx = _AST_CONTEXTS.get(source["ctx"].__class__)
        values = {"id": source["id"], "ctx": to_ast(source["ctx"]) if ctx is None else ctx}
        value = source.get("lineno")
        if value is not None:
            values["lineno"] = value
        value = source.get("col_offset")
        if value is not None:
            values["col_offset"] = value
        values["end_lineno"] = source.get("end_lineno")  # (gast's class default: None)
        values["end_col_offset"] = source.get("end_col_offset")
        new.__dict__ = values
        return new
    known = _back.get(kind)
    if known is None:
        known = _back[kind] = _back_kind(kind)
    if known.__class__ is not tuple:
        if known is False:
            return GAstToAst3().visit(node)
        return known  # an operator: nothing in it, one shared (as Python's parser does)
    cls, fields, attributes, special = known
    new = cls.__new__(cls)
    values = {}
    for field in fields:
        value = source.get(field, _MISSING)
        if value is _MISSING:
            continue
        if value.__class__ is list:
            value = [to_ast(v) if isinstance(v, _GAST) else v for v in value]
        elif isinstance(value, _GAST):
            value = to_ast(value)
        values[field] = value
    if special:
        if kind is gast.arguments:
            _arguments(values, node)
        elif kind is gast.ExceptHandler and node.name:
            values["name"] = node.name.id
            _locate(values, node)
        else:
            _locate(values, node)
    else:
        for attr, default in attributes:  # gast's classes default many ends to None
            value = source.get(attr, default)
            if value is not _MISSING:
                values[attr] = value
    new.__dict__ = values
    return new


_GAST = gast.AST


#: converted with ``ast.copy_location`` by gast (the others copy every location attribute)
_LOCATED = {
    cls
    for cls in (gast.Assign, gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
    if hasattr(GAstToAst3, "visit_" + cls.__name__)
}


def _locate(values: dict, node: gast.AST) -> None:
    """``ast.copy_location(new, node)``: ``lineno``/``col_offset`` unless None, the ends even
    when None (if ``node`` has them)."""
    source = node.__dict__
    value = source.get("lineno")
    if value is not None:
        values["lineno"] = value
    value = source.get("col_offset")
    if value is not None:
        values["col_offset"] = value
    for attr in ("end_lineno", "end_col_offset"):
        value = source.get(attr, _MISSING)
        if value is _MISSING:
            value = getattr(node.__class__, attr, _MISSING)  # gast's class default
        if value is not _MISSING:
            values[attr] = value


def _arg(node: gast.Name | None) -> ast.arg | None:
    if node is None:
        return None
    new = ast.arg.__new__(ast.arg)
    annotation = node.annotation
    values = {
        "arg": node.id,
        "annotation": None if annotation is None else to_ast(annotation),
        "type_comment": node.type_comment,
    }
    _locate(values, node)
    new.__dict__ = values
    return new


def _arguments(values: dict, node: gast.arguments) -> None:
    """Parameters are ``arg`` nodes in ``ast`` (``Name`` nodes in ``Param`` context in gast)."""
    values["posonlyargs"] = [_arg(a) for a in node.posonlyargs]
    values["args"] = [_arg(a) for a in node.args]
    values["vararg"] = _arg(node.vararg)
    values["kwonlyargs"] = [_arg(a) for a in node.kwonlyargs]
    values["kwarg"] = _arg(node.kwarg)


def _back_kind(kind: type):
    """(ast class, fields, (location attribute, class default), converted specially) for a
    gast class, or False: gast converts it."""
    name = kind.__name__
    cls = getattr(ast, name, None)
    if cls is None or name in _DELEGATED_BACK:
        return False
    if not kind._fields and not kind._attributes and not cls._fields and not cls._attributes:
        return cls()  # an operator (``+``, ``not``, ``is``...) or a context
    fields = kind._fields
    if kind in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
        fields = tuple(f for f in fields if f in cls._fields)  # no type_params before 3.12
    elif kind is gast.Assign:
        fields = ("targets", "value")  # gast drops type_comment
    elif kind is gast.arguments:
        fields = ("kw_defaults", "defaults")  # the parameters: _arguments
    attributes = tuple((a, getattr(kind, a, _MISSING)) for a in kind._attributes)
    special = kind in _LOCATED or kind in (gast.arguments, gast.ExceptHandler)
    return cls, fields, attributes, special

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

from autostatic.pyct.nodes import _VALUES

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



def as_gast(node: ast.AST) -> gast.AST:
    """``to_gast(node)`` made in place: each node's class is swapped for gast's (the layout is
    the same) and its fields adjusted; for a tree nobody else holds (a fresh parse). Context
    and operator nodes, which Python's parser shares between all trees, are replaced, never
    changed. Returns the new root."""
    kind = node.__class__
    if kind is ast.Name:  # (a third of the nodes)
        values = node.__dict__
        values["ctx"] = _CONTEXTS[values["ctx"].__class__]
        values["annotation"] = values["type_comment"] = None
        node.__class__ = gast.Name
        return node
    if kind is ast.arg:
        values = node.__dict__
        annotation = values["annotation"]
        values["id"] = values.pop("arg")
        values["ctx"] = _PARAM
        if annotation is not None:
            values["annotation"] = as_gast(annotation)
        node.__class__ = gast.Name
        return node
    known = _in_place.get(kind)
    if known is None:
        known = _in_place[kind] = _in_place_kind(kind)
    if known.__class__ is not tuple:
        if known is False:
            return to_gast(node)  # gast converts it specially: a copy
        return known()  # a context or an operator: a gast one (never the shared ast one)
    cls, fields, adds_type_params = known
    values = node.__dict__
    for field in fields:
        value = values.get(field)
        if value.__class__ is list:
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    new = as_gast(item)
                    if new is not item:
                        value[i] = new
        elif isinstance(value, ast.AST):
            new = as_gast(value)
            if new is not value:
                values[field] = new
    if adds_type_params:
        values["type_params"] = []
    if kind is ast.ExceptHandler and values.get("name"):
        values["name"] = gast.Name(values["name"], gast.Store(), None, None)
    node.__class__ = cls
    return node


_in_place: dict = {}  # ast class -> (gast class, fields, adds type_params), False, or a maker


def _in_place_kind(kind: type):
    """How ``as_gast`` converts an ``ast`` class: like ``to_gast`` (``_kind``), a context
    gives the shared gast one and an operator a new gast one (a function making it)."""
    known = _kind(kind)
    if known is False:
        return False
    cls, fields, adds_type_params = known
    if kind in _CONTEXTS:
        shared = _CONTEXTS[kind]
        return lambda: shared
    if not fields and not kind._attributes:  # an operator (``+``, ``not``, ``is``...)
        return cls
    return cls, tuple(f for f in fields if f not in _VALUES or f == "ctx"), adds_type_params

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
_GAST_NAME, _GAST_CONSTANT = gast.Name, gast.Constant


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


# -- gast -> ast in place, located -------------------------------------------------------------


def as_ast(node: gast.AST, lineno: int = 1, col_offset: int = 0) -> ast.AST:
    """``ast.fix_missing_locations(to_ast(node))`` without the copy or the second walk: the
    gast tree ``node`` becomes the ``ast`` tree, in place (each node's class is swapped for
    ``ast``'s; ``gast``'s layout is the same), and a node without a location takes its
    parent's (``node`` itself, ``lineno``/``col_offset``). The gast tree is used up: only for
    a tree nobody reads afterwards (the converter's output, compiled once). Its context and
    operator nodes are replaced by ``ast``'s shared ones (the gast ones are left as they
    are); a node shared by two parents is converted once. Returns the new root."""
    return _own(node, lineno, col_offset, lineno, col_offset)


def _own(node, lineno, col_offset, end_lineno, end_col_offset):
    """``node`` as ``ast`` (itself, class swapped, or a replacement), located: a missing
    location attribute takes the parent's (the four arguments), as ``fix_missing_locations``
    does, and the node's own are its children's."""
    kind = node.__class__
    if kind is _GAST_NAME or kind is _GAST_CONSTANT:  # (half the nodes: nothing under them)
        values = node.__dict__
        if values.get("lineno") is None:
            values["lineno"] = lineno
            values["col_offset"] = col_offset
            values["end_lineno"] = end_lineno
            values["end_col_offset"] = end_col_offset
        else:
            if values.get("col_offset") is None:
                values["col_offset"] = col_offset
            if values.get("end_lineno") is None:
                values["end_lineno"] = end_lineno
            if values.get("end_col_offset") is None:
                values["end_col_offset"] = end_col_offset
        if kind is _GAST_NAME:
            node.__class__ = ast.Name
            values["ctx"] = _AST_CONTEXTS[values["ctx"].__class__]
        else:
            node.__class__ = ast.Constant
        return node
    known = _owned.get(kind)
    if known is None:
        known = _owned[kind] = _own_kind(kind)
    if known.__class__ is not tuple:
        if known is True:  # an ``ast`` node already (shared, converted before)
            return node
        if known is False:  # gast converts it specially: a located copy
            return _located_copy(node, lineno, col_offset, end_lineno, end_col_offset)
        return known  # a context or an operator: ``ast``'s shared one
    cls, fields, located, special = known
    values = node.__dict__
    if located:
        value = values.get("lineno")
        if value is None:  # a generated node: the four from the parent
            values["lineno"] = lineno
            values["col_offset"] = col_offset
            values["end_lineno"] = end_lineno
            values["end_col_offset"] = end_col_offset
        else:
            lineno = value
            value = values.get("col_offset")
            if value is None:
                values["col_offset"] = col_offset
            else:
                col_offset = value
            value = values.get("end_lineno")
            if value is None:
                values["end_lineno"] = end_lineno
            else:
                end_lineno = value
            value = values.get("end_col_offset")
            if value is None:
                values["end_col_offset"] = end_col_offset
            else:
                end_col_offset = value
    node.__class__ = cls
    if special:
        if kind is gast.arguments:
            _own_arguments(values, lineno, col_offset, end_lineno, end_col_offset)
        elif kind is gast.ExceptHandler:
            name = values.get("name")
            if name is not None and name.__class__ is not str:
                values["name"] = name.id
        else:  # a node with a context
            values["ctx"] = _AST_CONTEXTS[values["ctx"].__class__]
    for field in fields:
        value = values.get(field)
        if value.__class__ is list:
            for i, item in enumerate(value):
                if isinstance(item, _GAST):
                    new = _own(item, lineno, col_offset, end_lineno, end_col_offset)
                    if new is not item:
                        value[i] = new
        elif isinstance(value, _GAST):
            new = _own(value, lineno, col_offset, end_lineno, end_col_offset)
            if new is not value:
                values[field] = new
    return node


def _own_arguments(values: dict, *location) -> None:
    """The parameters (``Name`` nodes in ``Param`` context) become ``arg`` nodes in place."""
    for field in ("posonlyargs", "args", "kwonlyargs"):
        for param in values[field]:
            _own_arg(param, location)
    for field in ("vararg", "kwarg"):
        param = values.get(field)
        if param is not None:
            _own_arg(param, location)


def _own_arg(param: gast.Name, location: tuple) -> None:
    if param.__class__ is not gast.Name:
        return  # an ``arg`` already (a signature shared by two functions)
    lineno, col_offset, end_lineno, end_col_offset = location
    values = param.__dict__
    param.__class__ = ast.arg
    values["arg"] = values["id"]
    if values.get("lineno") is None:
        values["lineno"] = lineno
        values["col_offset"] = col_offset
        values["end_lineno"] = end_lineno
        values["end_col_offset"] = end_col_offset
    else:
        lineno = values["lineno"]
        col_offset = values.get("col_offset")
        if col_offset is None:
            col_offset = values["col_offset"] = location[1]
        end_lineno = values.get("end_lineno")
        if end_lineno is None:
            end_lineno = values["end_lineno"] = location[2]
        end_col_offset = values.get("end_col_offset")
        if end_col_offset is None:
            end_col_offset = values["end_col_offset"] = location[3]
    annotation = values.get("annotation")
    if annotation is not None:
        values["annotation"] = _own(annotation, lineno, col_offset, end_lineno, end_col_offset)


def _located_copy(node, lineno, col_offset, end_lineno, end_col_offset) -> ast.AST:
    new = to_ast(node)
    _fill(new, lineno, col_offset, end_lineno, end_col_offset)
    return new


def _fill(node: ast.AST, lineno, col_offset, end_lineno, end_col_offset) -> None:
    """``ast.fix_missing_locations`` below a parent located at the four arguments."""
    attributes = node._attributes
    if "lineno" in attributes:
        if getattr(node, "lineno", None) is None:
            node.lineno = lineno
        else:
            lineno = node.lineno
        if getattr(node, "col_offset", None) is None:
            node.col_offset = col_offset
        else:
            col_offset = node.col_offset
        if getattr(node, "end_lineno", None) is None:
            node.end_lineno = end_lineno
        else:
            end_lineno = node.end_lineno
        if getattr(node, "end_col_offset", None) is None:
            node.end_col_offset = end_col_offset
        else:
            end_col_offset = node.end_col_offset
    for child in ast.iter_child_nodes(node):
        _fill(child, lineno, col_offset, end_lineno, end_col_offset)


_owned: dict = {}  # class -> (ast class, fields, located, special), an ast node, True, False
_WITH_CONTEXT = ("Name", "Attribute", "Subscript", "Starred", "List", "Tuple")


def _own_kind(kind: type):
    """How ``_own`` converts a class: True for ``ast``'s own classes, False for the classes
    gast converts specially (``_DELEGATED_BACK``), the shared ``ast`` node of a context or
    operator, else (ast class, fields holding nodes, has a location, converted specially)."""
    if getattr(gast, kind.__name__, None) is not kind:
        return True
    known = _back_kind(kind)
    if known is False or known.__class__ is not tuple:
        return known
    cls = known[0]
    # (``type_params`` only where ``ast`` has it)
    fields = tuple(f for f in cls._fields if f in kind._fields and f not in _VALUES)
    if kind is gast.Constant:
        fields = ()
    elif kind is gast.arguments:
        fields = ("kw_defaults", "defaults")
    elif kind is gast.ExceptHandler:
        fields = ("type", "body")
    special = kind.__name__ in _WITH_CONTEXT or kind in (gast.arguments, gast.ExceptHandler)
    return cls, fields, "lineno" in cls._attributes, special


"""Python containers a block changes in place: ``xs.append(v)``, ``d[k] = v``, ``x[i] = v``.

A tensor-dependent ``if`` traces both branches one after the other; a list, dict or tensor
that a branch changes in place would carry the first branch's changes into the second. The
``if`` passes such names to ``convert_ifelse(..., containers=...)``, which gives each branch
its own copy (of the lists and dicts in it too: ``d["k"].append(v)`` changes ``d``) and
writes the merged result back into the original object.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.nodes import node_fields
from autostatic.transformers.base import _SCOPES

#: Methods that change a list, dict or set in place.
MUTATORS = frozenset(
    {
        "append", "extend", "insert", "pop", "remove", "clear", "add", "update", "setdefault",
        "discard", "popitem", "sort", "reverse",
    }
)  # fmt: skip


def callee(call: gast.Call) -> gast.expr:
    """What ``call`` calls: ``f`` for ``f(...)`` and for ``_jst.convert_call(f)(...)``."""
    func = call.func
    if (
        isinstance(func, gast.Call)
        and isinstance(func.func, gast.Attribute)
        and func.func.attr == "convert_call"
        and len(func.args) == 1
    ):
        return func.args[0]
    return func


def may_mutate(census) -> bool:
    """Whether a function (its ``Census``, None: unknown) may change a container in place:
    a subscript stored or deleted, or an attribute named like a mutating method. (The passes
    add neither.)"""
    return census is None or census.item_stores or not MUTATORS.isdisjoint(census.attrs)


def mutated_containers(stmts: list) -> list[str]:
    """Names changed in place by ``stmts`` (outside nested scopes), in order of appearance;
    attributes too, dotted (``self.cache`` for ``self.cache["k"] = v``). Each statement's
    names are remembered on it, so nested statements are walked once."""
    found: list[str] = []
    for stmt in stmts:
        for name_ in _mutated_by(stmt):
            if name_ not in found:
                found.append(name_)
    return found


def _mutated_by(stmt: gast.AST) -> tuple:
    known = anno.get(stmt, anno.MUTATED, None)
    if known is None:
        known = _walk(stmt)[0]
    return known


def calls_in(stmts: list) -> list[gast.Call]:
    """The calls in ``stmts`` (outside nested function and class bodies), depth-first in
    source order. Each statement's calls are remembered on it with its names changed in
    place: one walk of its expressions serves both, and nested statements are walked once."""
    found: list[gast.Call] = []
    for stmt in stmts:
        known = anno.get(stmt, anno.CALLS, None)
        found.extend(_walk(stmt)[1] if known is None else known)
    return found


def _walk(stmt: gast.AST) -> tuple[tuple, tuple]:
    """(names ``stmt`` changes in place, the calls in it), remembered on it."""
    found: list[str] = []
    calls: list[gast.Call] = []
    stack = [stmt]
    pop, push = stack.pop, stack.append
    while stack:  # depth-first in source order: children pushed last field first
        node = pop()
        kind = node.__class__
        how = _how.get(kind)
        if how is None:
            how = _how[kind] = _kind(kind)
        role, fields = how
        if role is _SCOPE:
            continue
        values = node.__dict__
        if role is _STATEMENT and node is not stmt:
            names = anno.get(node, anno.MUTATED, None)
            inner = anno.get(node, anno.CALLS, None)
            if names is None or inner is None:
                names, inner = _walk(node)
            found.extend(n for n in names if n not in found)
            calls.extend(inner)
            continue
        target = None
        if role is _SUBSCRIPT:
            if values["ctx"].__class__ is not gast.Load:
                target = values["value"]
        elif role is _CALL:
            calls.append(node)
            func = callee(node)
            if func.__class__ is gast.Attribute and func.attr in MUTATORS:
                target = func.value
        elif kind is gast.AugAssign and values["target"].__class__ is gast.Subscript:
            target = values["target"].value
        elif role is _ATTRIBUTE and values["ctx"].__class__ is not gast.Load:
            target = _held_object(values["value"])  # d["k"].x = v changes what d holds
        while target.__class__ is gast.Subscript:  # d["k"].append(v), d["a"]["b"] = v: d
            target = target.value
        if target is not None:
            changed = target.id if target.__class__ is gast.Name else _dotted(target)
            if changed is not None and changed not in found:
                found.append(changed)  # a name, or an attribute: self.cache["k"] = v
        for field in fields:  # (reversed: the first child is popped first)
            value = values.get(field)
            if value.__class__ is list:
                for item in reversed(value):
                    if item.__class__ not in _LEAVES and isinstance(item, gast.AST):
                        push(item)
            elif value.__class__ not in _LEAVES and isinstance(value, gast.AST):
                push(value)
    result = tuple(found), tuple(calls)
    anno.set(stmt, anno.MUTATED, result[0])
    anno.set(stmt, anno.CALLS, result[1])
    return result


def _held_object(node: gast.expr) -> gast.expr | None:
    """The subscript in ``node``'s chain of attributes (``d["k"]`` of ``d["k"].a``), else
    None: an attribute set on an object held in a container changes the container."""
    while node.__class__ is gast.Attribute:
        node = node.value
    return node if node.__class__ is gast.Subscript else None


def _dotted(node: gast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while node.__class__ is gast.Attribute:
        parts.append(node.attr)
        node = node.value
    if node.__class__ is not gast.Name or not parts:
        return None
    return ".".join([node.id, *reversed(parts)])


_OTHER, _SCOPE, _STATEMENT, _SUBSCRIPT, _CALL = "other", "scope", "statement", "subscript", "call"
_ATTRIBUTE = "attribute"
_how: dict = {}  # node class -> (its role in the walk, its node fields reversed)
_LEAVES = {gast.Name, gast.Constant}  # nothing under them to find (a parameter's annotation
#   is in a signature: a scope, not walked)


def _kind(kind: type) -> tuple:
    if issubclass(kind, _SCOPES):
        role = _SCOPE
    elif issubclass(kind, (gast.stmt, gast.ExceptHandler)):
        role = _STATEMENT
    elif kind is gast.Subscript:
        role = _SUBSCRIPT
    elif kind is gast.Call:
        role = _CALL
    elif kind is gast.Attribute:
        role = _ATTRIBUTE
    else:
        role = _OTHER
    return role, tuple(reversed(node_fields(kind)))

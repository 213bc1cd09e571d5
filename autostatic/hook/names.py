"""Names a module uses, and free names for what the hook adds to it (no gast: the hook's
import path stays light)."""

from __future__ import annotations

import ast


def names_used(tree) -> set[str]:
    """Every name a module (``ast`` or ``gast`` tree) uses or binds: generated names must not
    clash with any of them. (``ast.walk`` with a test per node, without its generators: the
    children are read from each node's dict, by fields found once per class.)"""
    names: set = set()
    add = names.add
    stack = [tree]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = node.__class__
        known = _kinds.get(kind)
        if known is None:
            known = _kinds[kind] = _kind(kind)
        how, fields = known
        values = node.__dict__
        if how == _NAME:  # (a third of the nodes; ``Name`` of ``gast`` too)
            add(values["id"])
            annotation = values.get("annotation")  # a gast parameter's
            if annotation is not None:
                push(annotation)
            continue
        if how == _ALIAS:
            add(values.get("asname") or values["name"].partition(".")[0])
        elif how == _ARG:
            add(values["arg"])
        elif how == _NAMED:
            name = values.get("name")
            if name.__class__ is str:
                add(name)
        for field in fields:
            value = values.get(field)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        push(item)
            elif isinstance(value, ast.AST):
                push(value)
    return names


_OTHER, _NAME, _ALIAS, _ARG, _NAMED = range(5)
#: fields that never hold nodes (``ctx`` holds a context node: no names under it)
_VALUES = frozenset({"ctx", "id", "attr", "arg", "kind", "type_comment", "level", "module",
                     "conversion", "is_async", "asname"})  # fmt: skip
_kinds: dict = {}  # node class -> (how its own name is found, fields that may hold nodes)


def _kind(kind: type) -> tuple:
    name = kind.__name__
    how = {"Name": _NAME, "alias": _ALIAS, "arg": _ARG}.get(name, _OTHER)
    fields = kind._fields
    if how == _OTHER and "name" in fields:
        how = _NAMED
    return how, tuple(f for f in fields if f not in _VALUES)


def free_name(name: str, taken: set) -> str:
    """``name`` or ``name1``, ``name2``... (``__x1__`` for a dunder), not in ``taken`` (and
    added to it): never a ``__name``, which class bodies would mangle."""
    stem, end = (name[:-2], "__") if name.endswith("__") else (name, "")
    candidate, i = name, 0
    while candidate in taken:
        i += 1
        candidate = f"{stem}{i}{end}"
    taken.add(candidate)
    return candidate

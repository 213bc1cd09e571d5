"""Fast walks over gast trees: ``ast.iter_child_nodes``/``ast.walk`` without generators and
without the ``Load``/``Store``/``Del`` context nodes (a third of a typical tree, which no
analysis needs as a node: they read ``node.ctx`` instead)."""

from __future__ import annotations

import gast

_AST = gast.AST
#: class -> its fields that may hold nodes (``ctx`` and the plain-value fields left out)
_fields: dict = {}
_VALUES = frozenset({"ctx", "id", "attr", "arg", "kind", "type_comment", "level", "module",
                     "conversion", "is_async"})  # fmt: skip


def node_fields(kind: type) -> tuple:
    """The fields of a node class that may hold nodes (``ctx`` and plain values left out)."""
    fields = _fields.get(kind)
    if fields is None:
        fields = _fields[kind] = tuple(f for f in kind._fields if f not in _VALUES)
    return fields


def child_nodes(node: gast.AST) -> list:
    """The nodes directly under ``node`` in field order (``ast.iter_child_nodes`` as a list,
    context nodes left out)."""
    fields = _fields.get(node.__class__)
    if fields is None:
        fields = node_fields(node.__class__)
    out = []
    values = node.__dict__  # (gast's classes have no defaults for fields)
    for field in fields:  # (a context node is only ever a ``ctx``, left out)
        value = values.get(field)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, _AST):
                    out.append(item)
        elif isinstance(value, _AST):
            out.append(value)
    return out


def walk(node: gast.AST) -> list:
    """``node`` and every node under it, parents first (``ast.walk``'s set of nodes as a list;
    context nodes left out)."""
    out = [node]
    append = out.append
    i = 0
    while i < len(out):  # (``child_nodes`` inline)
        sub = out[i]
        i += 1
        fields = _fields.get(sub.__class__)
        if fields is None:
            fields = node_fields(sub.__class__)
        values = sub.__dict__
        for field in fields:
            value = values.get(field)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
            elif isinstance(value, _AST):
                append(value)
    return out

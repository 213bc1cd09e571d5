"""Source locations: generated nodes carry the user's file lines, so tracebacks point there."""

from __future__ import annotations

from typing import Any

import gast

from autostatic.pyct.nodes import _fields as _FIELDS
from autostatic.pyct.nodes import node_fields


def copy_location_deep(node: Any, origin: Any) -> Any:
    """Give ``node`` and every descendant without a location the location of ``origin``."""
    if origin is None or getattr(origin, "lineno", None) is None:
        return node
    # Generated code spans the origin's first line only: tracebacks, f_lineno and error
    # locations show the statement's line, not the end of a multi-line statement.
    line, col = origin.lineno, getattr(origin, "col_offset", 0)
    stack = [node]
    while stack:  # a located node is the user's (or located already): its subtree is done
        sub = stack.pop()
        values = sub.__dict__
        if values.get("lineno") is not None:
            continue
        kind = sub.__class__
        if "lineno" in kind._attributes:
            values["lineno"] = values["end_lineno"] = line
            values["col_offset"] = values["end_col_offset"] = col
        if kind is _CONSTANT or (kind is _NAME and values.get("annotation") is None):
            continue  # a leaf: nothing under it
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = node_fields(kind)
        for field in fields:  # the children (``child_nodes`` inline; any order will do)
            value = values.get(field)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        stack.append(item)
            elif isinstance(value, _AST):
                stack.append(value)
    return node


_NAME, _CONSTANT, _AST = gast.Name, gast.Constant, gast.AST


def location(node: Any, filename: str) -> tuple[str, int, str]:
    """(file, line, '') of a node, for error messages."""
    return (filename, getattr(node, "lineno", 0) or 0, "")

"""Source locations: generated nodes carry the user's file lines, so tracebacks point there."""

from __future__ import annotations

from typing import Any

from autostatic.pyct.nodes import child_nodes


def copy_location_deep(node: Any, origin: Any) -> Any:
    """Give ``node`` and the statements in its blocks that have no location the location of
    ``origin``. Expressions are not walked: one without a location takes its parent's when
    the tree is compiled (``to_gast.as_ast``, or ``ast.fix_missing_locations``), the same
    location as here for a node made under a statement located at ``origin``."""
    values = node.__dict__
    if values.get("lineno") is not None or origin is None:
        return node
    at = origin.__dict__
    line = at.get("lineno")
    if line is None:
        return node
    # Generated code spans the origin's first line only: tracebacks, f_lineno and error
    # locations show the statement's line, not the end of a multi-line statement.
    col = at.get("col_offset", 0)
    kind = node.__class__
    fields = _BLOCKS.get(kind)
    if fields is None:
        fields = _BLOCKS[kind] = tuple(f for f in _BLOCK_NAMES if f in kind._fields)
    if not fields:  # an expression, or a simple statement: nothing under it to walk
        if "lineno" in kind._attributes:
            values["lineno"] = values["end_lineno"] = line
            values["col_offset"] = values["end_col_offset"] = col
        return node
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
        fields = _BLOCKS.get(kind)
        if fields is None:
            fields = _BLOCKS[kind] = tuple(f for f in _BLOCK_NAMES if f in kind._fields)
        for field in fields:  # the statements (and except/case clauses) under it
            block = values.get(field)
            if block.__class__ is list:
                stack.extend(block)
    return node


def copy_location_all(node: Any, origin: Any) -> Any:
    """Give ``node`` and every node under it without a location ``origin``'s first line (a
    located node's subtree is left as it is), expressions included: for generated nodes that
    end up under a parent whose location is another's (shared between two statements)."""
    if origin is None or getattr(origin, "lineno", None) is None:
        return node
    line, col = origin.lineno, getattr(origin, "col_offset", 0)
    stack = [node]
    while stack:
        sub = stack.pop()
        values = sub.__dict__
        if values.get("lineno") is not None:
            continue
        if "lineno" in sub.__class__._attributes:
            values["lineno"] = values["end_lineno"] = line
            values["col_offset"] = values["end_col_offset"] = col
        stack.extend(child_nodes(sub))
    return node


_BLOCK_NAMES = ("body", "orelse", "finalbody", "handlers", "cases")
_BLOCKS: dict = {}  # node class -> those of _BLOCK_NAMES among its fields (none: expressions)


def location(node: Any, filename: str) -> tuple[str, int, str]:
    """(file, line, '') of a node, for error messages."""
    return (filename, getattr(node, "lineno", 0) or 0, "")

"""Source locations: generated nodes carry the user's file lines, so tracebacks point there."""

from __future__ import annotations

from typing import Any

import gast


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
        if getattr(sub, "lineno", None) is not None:
            continue
        if "lineno" in sub._attributes:
            sub.lineno, sub.col_offset, sub.end_lineno, sub.end_col_offset = line, col, line, col
        for field in sub._fields:
            value = getattr(sub, field, None)
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, gast.AST))
            elif isinstance(value, gast.AST):
                stack.append(value)
    return node


def location(node: Any, filename: str) -> tuple[str, int, str]:
    """(file, line, '') of a node, for error messages."""
    return (filename, getattr(node, "lineno", 0) or 0, "")

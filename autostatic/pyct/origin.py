"""Source locations: generated nodes carry the user's file lines, so tracebacks point there."""

from __future__ import annotations

from typing import Any

import gast

_FIELDS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def copy_location_deep(node: Any, origin: Any) -> Any:
    """Give ``node`` and every descendant without a location the location of ``origin``."""
    if origin is None or not hasattr(origin, "lineno"):
        return node
    for sub in gast.walk(node):
        if not hasattr(sub, "lineno") or getattr(sub, "lineno", None) is None:
            for field in _FIELDS:
                if hasattr(origin, field):
                    setattr(sub, field, getattr(origin, field))
    return node


def location(node: Any, filename: str) -> tuple[str, int, str]:
    """(file, line, '') of a node, for error messages."""
    return (filename, getattr(node, "lineno", 0) or 0, "")

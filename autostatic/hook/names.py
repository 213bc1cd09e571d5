"""Names a module uses, and free names for what the hook adds to it (no gast: the hook's
import path stays light)."""

from __future__ import annotations

import ast


def names_used(tree) -> set[str]:
    """Every name a module (``ast`` or ``gast`` tree) uses or binds: generated names must not
    clash with any of them."""
    names = set()
    for node in ast.walk(tree):
        kind = type(node).__name__
        if kind == "Name":
            names.add(node.id)
        elif kind == "alias":
            names.add(node.asname or node.name.partition(".")[0])
        elif kind == "arg":
            names.add(node.arg)
        else:
            name = getattr(node, "name", None)
            if isinstance(name, str):
                names.add(name)
    return names


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

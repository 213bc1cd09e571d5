"""Shared helpers for the pyct tests: parse a source snippet and find its statements."""

from __future__ import annotations

import textwrap

import gast

from autostatic.pyct import analyze, anno
from autostatic.pyct.activity import FunctionInfo

_FUNCS = (gast.FunctionDef, gast.AsyncFunctionDef)


def parse(src: str) -> gast.AST:
    """The first function defined by ``src`` (dedented); line 1 is its ``def`` line."""
    tree = gast.parse(textwrap.dedent(src).strip("\n") + "\n")
    return tree.body[0]


def analyzed(src: str) -> tuple[gast.AST, FunctionInfo]:
    """Parse ``src`` and run every analysis on its function."""
    fn = parse(src)
    return fn, analyze(fn)


def statements(fn: gast.AST) -> list[gast.AST]:
    """Every statement of ``fn`` (not of nested functions), handlers and cases included."""
    out: list[gast.AST] = []

    def walk(stmts: list) -> None:
        for s in stmts:
            out.append(s)
            if isinstance(s, (*_FUNCS, gast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                walk(getattr(s, field, []) or [])
            for h in getattr(s, "handlers", []):
                out.append(h)
                walk(h.body)
            for c in getattr(s, "cases", []):
                out.append(c)
                walk(c.body)

    walk(fn.body)
    return out


def at(fn: gast.AST, line: int, kind: type | None = None) -> gast.AST:
    """The statement (or handler / case) starting on ``line`` (1 = the ``def`` line)."""
    found = [
        s for s in statements(fn) if _line(s) == line and (kind is None or isinstance(s, kind))
    ]
    assert len(found) == 1, f"{len(found)} statements on line {line}"
    return found[0]


def _line(s: gast.AST) -> int | None:
    if isinstance(s, gast.match_case):  # no location of its own
        return s.pattern.lineno
    return getattr(s, "lineno", None)


def get(fn: gast.AST, line: int, key: str, kind: type | None = None) -> set[str]:
    """Annotation ``key`` of the statement on ``line``, as a plain set."""
    return set(anno.get(at(fn, line, kind), key))

"""Qualified names ("symbols") as plain strings.

A symbol is a bare name (``"x"``) or an attribute chain rooted at a name (``"self.weight"``,
``"a.b.c"``). Subscripts are not symbols: ``a[i] = v`` modifies the *base* symbol ``a`` (and
``self.buf[i] = v`` modifies ``self.buf``). Strings keep the analyses fast: sets of symbols are
plain ``frozenset[str]``.
"""

from __future__ import annotations

import gast

_Name = gast.Name
_Attribute = gast.Attribute
_Subscript = gast.Subscript


def symbol_of(expr: gast.AST) -> str | None:
    """``"a.b.c"`` for the expression ``a.b.c``, ``"x"`` for ``x``, else None."""
    t = type(expr)
    if t is _Name:
        return expr.id
    if t is _Attribute:
        base = symbol_of(expr.value)
        return None if base is None else f"{base}.{expr.attr}"
    return None


def base_symbol(expr: gast.AST) -> str | None:
    """The symbol whose object an attribute/subscript store into ``expr`` mutates.

    ``a[i]`` -> ``"a"``, ``self.buf[i][j]`` -> ``"self.buf"``, ``a[i].x`` -> ``"a"``,
    ``f(x).y`` -> None.
    """
    while True:
        sym = symbol_of(expr)
        if sym is not None:
            return sym
        t = type(expr)
        if t is _Subscript or t is _Attribute:
            expr = expr.value
        else:
            return None


def base_name(sym: str) -> str:
    """The name a symbol is rooted at: ``"self.w"`` -> ``"self"``."""
    i = sym.find(".")
    return sym if i < 0 else sym[:i]


def is_composite(sym: str) -> bool:
    """Whether ``sym`` is an attribute chain rather than a bare name."""
    return "." in sym


def prefixes(sym: str) -> list[str]:
    """``"a.b.c"`` -> ``["a", "a.b", "a.b.c"]`` (reading ``a.b.c`` reads all of them)."""
    out = []
    i = sym.find(".")
    while i >= 0:
        out.append(sym[:i])
        i = sym.find(".", i + 1)
    out.append(sym)
    return out


def extensions(symbols: set[str] | frozenset[str]) -> dict[str, frozenset[str]]:
    """For every proper prefix of a composite symbol, the composites extending it."""
    ext: dict[str, set[str]] = {}
    for s in symbols:
        i = s.find(".")
        while i >= 0:
            ext.setdefault(s[:i], set()).add(s)
            i = s.find(".", i + 1)
    return {k: frozenset(v) for k, v in ext.items()}

"""Sets of symbols as Python ints, for the dataflow solvers.

Each symbol of a function gets one bit; union, intersection and difference become single int
operations, which is what makes liveness and reaching definitions cheap. Results are turned
back into frozensets (cached: neighbouring statements mostly share their sets).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress
from typing import Any

_EMPTY: frozenset[str] = frozenset()
_TO_01 = bytes.maketrans(b"01", b"\x00\x01")


class SymbolTable:
    """Bit positions of a fixed set of symbols."""

    def __init__(self, symbols: Iterable[str]) -> None:
        self.symbols = sorted(symbols)
        self.bit = {s: 1 << i for i, s in enumerate(self.symbols)}
        self.all = (1 << len(self.symbols)) - 1
        self._cache: dict[int, frozenset[str]] = {0: _EMPTY}
        self._ext: dict[str, int] | None = None

    def encode(self, syms: Iterable[str]) -> int:
        """The bits of ``syms`` (symbols outside the table are ignored)."""
        bit = self.bit
        try:
            return sum(map(bit.__getitem__, syms))  # distinct bits: the sum is the union
        except KeyError:
            pass
        v = 0
        for s in syms:
            b = bit.get(s)
            if b is not None:
                v |= b
        return v

    def decode(self, bits: int) -> frozenset[str]:
        """The frozenset of symbols whose bits are set."""
        r = self._cache.get(bits)
        if r is None:
            digits = bin(bits)[:1:-1].encode().translate(_TO_01)
            r = self._cache[bits] = frozenset(compress(self.symbols, digits))
        return r

    def with_extensions(self, names: Iterable[str]) -> int:
        """The bits of ``names`` and of every attribute chain rooted at one of them."""
        ext = self._ext
        if ext is None:
            ext = self._ext = {}
            for s, b in self.bit.items():
                i = s.find(".")
                while i >= 0:
                    p = s[:i]
                    ext[p] = ext.get(p, 0) | b
                    i = s.find(".", i + 1)
        bit = self.bit
        v = 0
        for s in names:
            v |= bit.get(s, 0) | ext.get(s, 0)
        return v


def symbol_table(info: Any) -> SymbolTable:
    """The bit table of every symbol the function reads, binds or deletes (cached on info)."""
    table = getattr(info, "_symbol_table", None)
    if table is None:
        b = info.body_scope
        table = SymbolTable(b.read | b.modified | b.deleted | set(info.params))
        info._symbol_table = table
    return table


class NodeSets:
    """Per-node bits of a graph: what each node reads, binds and unbinds."""

    __slots__ = ("read", "gen_must", "gen_may", "keep_must", "keep_may")

    def __init__(self, graph: Any, table: SymbolTable) -> None:
        encode, with_ext = table.encode, table.with_extensions
        self.read: list[int] = []
        self.gen_must: list[int] = []  # surely bound
        self.gen_may: list[int] = []  # maybe bound
        self.keep_must: list[int] = []  # ~(maybe unbound or rebound)
        self.keep_may: list[int] = []  # ~(surely unbound or rebound)
        for n in graph.nodes:
            sc = n.scope
            self.read.append(encode(sc.read) if sc.read else 0)
            mod, cond, dele, bound = sc.modified, sc.conditional, sc.deleted, sc.bound
            m = encode(mod) if mod else 0
            self.gen_may.append(m)
            if cond:
                self.gen_must.append(encode(mod - cond))
                self.keep_must.append(~with_ext(bound | dele))
                self.keep_may.append(~with_ext((bound - cond) | dele))
            else:
                self.gen_must.append(m)
                keep = ~with_ext(bound | dele) if bound or dele else -1
                self.keep_must.append(keep)
                self.keep_may.append(keep)


def node_sets(graph: Any, info: Any) -> NodeSets:
    """The NodeSets of ``graph`` (cached on it)."""
    sets = getattr(graph, "_node_sets", None)
    if sets is None:
        sets = graph._node_sets = NodeSets(graph, symbol_table(info))
    return sets

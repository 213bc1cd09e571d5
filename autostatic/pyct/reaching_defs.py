"""Reaching definitions: which symbols are bound, on every path or on some path.

Forward dataflow on the CFG over bitsets, swept to a fixed point; the "definitely" and
"maybe" problems are solved together. Parameters are bound at entry. A node binds what it
modifies (a conditional walrus only "maybe"); ``del x`` and the end of ``except E as e``
unbind; rebinding or deleting ``a`` also unbinds the attribute chains ``a.*`` (they were
assigned on the old object). An attribute chain counts as bound only once this function
assigns it. A partial edge (see ``cfg.py``) carries the state before *or* after its node.

Annotations (frozensets of symbols):

- ``DEFINED_IN`` / ``MAYBE_DEFINED_IN``: bound on every / some path reaching the statement
  from before it (a loop's back edges are not included).
- ``DEFINED_OUT`` / ``MAYBE_DEFINED_OUT``: bound on every / some path by which it completes
  normally; for a simple statement, right after it runs (even ``return``).
- ``LOOP_DEFINED_IN_HEADER`` / ``LOOP_MAYBE_DEFINED_IN_HEADER`` (While/For): before each
  evaluation of the test / ``next()``, back edges included.

On a statement no path reaches, "every path" is vacuous: ``DEFINED_*`` is every symbol the
function binds, ``MAYBE_DEFINED_*`` is empty.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.bitsets import node_sets, symbol_table
from autostatic.pyct.cfg import Edge, Graph
from autostatic.pyct.scope import FunctionInfo

_LOOPS = (gast.While, gast.For, gast.AsyncFor)
_ANNO = anno._ATTR
DEFINED_IN, MAYBE_DEFINED_IN = anno.DEFINED_IN, anno.MAYBE_DEFINED_IN
DEFINED_OUT, MAYBE_DEFINED_OUT = anno.DEFINED_OUT, anno.MAYBE_DEFINED_OUT


def solve(graph: Graph, info: FunctionInfo) -> tuple[list[int], list[int], int, int]:
    """Packed states per node index: ``(ins, outs, width, top)``.

    A state packs both problems into one int so that a single AND-meet solves them: bits
    ``[0, width)`` are "defined on every path", bits ``[width, 2*width)`` "unbound on every
    path" (the complement of "defined on some path"); see :func:`unpack`. ``top`` is the
    "every path" half of an unreachable point.
    """
    table = symbol_table(info)
    sets = node_sets(graph, info)
    width, mask = len(table.symbols), table.all
    gm, gy, km, ky = sets.gen_must, sets.gen_may, sets.keep_must, sets.keep_may
    top = 0
    for m in gy:
        top |= m
    # out = (in & K) | G on both halves: defined' = (defined & keep) | gen, and
    # unbound' = (unbound | kill) & ~gen = (unbound & ~gen) | (kill & ~gen)
    keep, gen = [], []
    for i in range(len(gm)):
        not_gen = ~gy[i] & mask
        keep.append((km[i] & mask) | (not_gen << width))
        gen.append(gm[i] | ((~ky[i] & not_gen) << width))
    succ, psucc, pred, ppred = graph.adjacency()
    n = len(graph.nodes)
    start = top | (mask << width)
    ins, outs = [start] * n, [start] * n
    ins[graph.entry.index] = mask << width
    dirty = _reachable(graph, succ, psucc)  # unreachable nodes keep `start`
    again = True
    while again:  # sweeps in program order; only loops' back edges need another one
        again = False
        for i in range(n):
            if not dirty[i]:
                continue
            dirty[i] = False
            before = ins[i]
            ps, pp = pred[i], ppred[i]
            if pp is None and len(ps) == 1:
                v = ins[i] = outs[ps[0]]
            elif ps or pp:
                v = start
                for p in ps:
                    v &= outs[p]
                if pp is not None:
                    for p in pp:  # left part-way: the state before or after the node
                        v &= outs[p] & ins[p]
                ins[i] = v
            else:
                v = ins[i]
            entered = v
            v = (v & keep[i]) | gen[i]
            if v != outs[i]:
                outs[i] = v
                for s in succ[i]:
                    dirty[s] = True
                    if s <= i:
                        again = True
                ps = psucc[i]
                if ps is not None:
                    for s in ps:
                        dirty[s] = True
                        if s <= i:
                            again = True
            elif entered != before and psucc[i] is not None:
                # a partial edge carries the state *before* the node too: its targets must
                # see a change of ``ins`` even when ``outs`` stays the same (``x = ...``
                # raising on a later iteration, where ``x`` was deleted before it)
                for s in psucc[i]:
                    dirty[s] = True
                    if s <= i:
                        again = True
    return ins, outs, width, top


def unpack(state: int, width: int) -> tuple[int, int]:
    """(defined on every path, defined on some path) bits of a packed state."""
    mask = (1 << width) - 1
    return state & mask, ~(state >> width) & mask


def _reachable(graph: Graph, succ: list, psucc: list) -> list[bool]:
    seen = [False] * len(graph.nodes)
    stack = [graph.entry.index]
    seen[stack[0]] = True
    while stack:
        i = stack.pop()
        for nexts in (succ[i], psucc[i] or ()):
            for j in nexts:
                if not seen[j]:
                    seen[j] = True
                    stack.append(j)
    return seen


def _meet(edges: list[Edge], ins: list[int], outs: list[int], start: int) -> int:
    """The packed state over ``edges`` (``start`` when there are none)."""
    v = start
    for node, partial in edges:
        i = node.index
        v &= outs[i] & ins[i] if partial else outs[i]
    return v


def analyze(graph: Graph, info: FunctionInfo) -> None:
    """Annotate the statements of ``graph`` with reaching definitions."""
    ins, outs, width, top = solve(graph, info)
    decode = symbol_table(info).decode
    mask = (1 << width) - 1
    start = top | (mask << width)
    cache: dict[int, tuple] = {}

    def sets(v: int) -> tuple:
        r = cache.get(v)
        if r is None:
            r = cache[v] = (decode(v & mask), decode(~(v >> width) & mask))
        return r

    for stmt, si in graph.stmts.items():
        a = stmt.__dict__.get(_ANNO)
        if a is None:
            a = stmt.__dict__[_ANNO] = {}
        e = si.entry
        if si.alt is None and len(e) == 1 and not e[0][1]:  # the common case: one plain edge
            v = outs[e[0][0].index]
        else:
            v = _meet([x for c in si.copies() for x in c.entry], ins, outs, start)
        a[DEFINED_IN], a[MAYBE_DEFINED_IN] = sets(v)
        first = si.first
        if first is not None and first.ast is stmt and first.kind == "stmt":
            v = start
            for c in si.copies():
                v &= outs[c.first.index]
        else:
            v = _meet([x for c in si.copies() for x in c.exits], ins, outs, start)
        a[DEFINED_OUT], a[MAYBE_DEFINED_OUT] = sets(v)
        if type(stmt) in _LOOPS:
            v = start
            for c in si.copies():
                v &= ins[c.first.index + (type(stmt) is not gast.While)]  # While test / For step
            a[anno.LOOP_DEFINED_IN_HEADER], a[anno.LOOP_MAYBE_DEFINED_IN_HEADER] = sets(v)

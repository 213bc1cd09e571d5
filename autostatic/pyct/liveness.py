"""Liveness: which symbols may be read before being rebound, at each point of a function.

Backward dataflow on the CFG (``cfg.py``) over bitsets (``bitsets.py``), swept to a fixed
point. A node *uses* the symbols it reads (reading ``self.x`` uses ``self`` and ``self.x``;
``del x`` uses ``x``) and *kills* the names it surely binds or deletes, together with the
attribute chains rooted at them (after ``a = ...``, ``a.b`` is a different object). A partial
edge (an exception, a failed ``case``, an exhausted ``for``) passes liveness through without
the kill: the node may not have bound.

Only symbols rooted at a local name are tracked (a global or builtin is never rebound here, so
it would just be live everywhere). Symbols in ``FunctionInfo.always_live`` (cell variables,
globals, nonlocals, modified attribute chains: all observable outside the function or by a
later call) are added to every set. Annotations (frozensets of symbols):

- ``LIVE_IN``: live right before the statement.
- ``LIVE_OUT``: live right after it completes normally (for an ``if``, after the whole
  if/else; for a loop, after the loop and its ``else``); for ``break``/``continue``/``return``,
  live at the place it jumps to; empty after ``raise``.
- ``LOOP_LIVE_IN_BODY`` (While/For): live at the start of the body (the target is bound).
- ``LOOP_LIVE_IN_HEADER`` (While/For): live before each evaluation of the test / ``next()``.

``ExceptHandler`` and ``match_case`` nodes get ``LIVE_IN``/``LIVE_OUT`` too.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.bitsets import node_sets, symbol_table
from autostatic.pyct.cfg import Graph
from autostatic.pyct.scope import FunctionInfo
from autostatic.pyct.symbols import base_name

_LOOPS = (gast.While, gast.For, gast.AsyncFor)
_ANNO = anno._ATTR
LIVE_IN, LIVE_OUT = anno.LIVE_IN, anno.LIVE_OUT


def solve(graph: Graph, info: FunctionInfo) -> list[int]:
    """Live-in bits of every node (indexed by ``node.index``), in ``symbol_table(info)``."""
    table = symbol_table(info)
    sets = node_sets(graph, info)
    local, always = info.locals, info.always_live
    tracked = table.encode(s for s in table.symbols if base_name(s) in local or s in always)
    gens = [r & tracked for r in sets.read]
    keeps = sets.keep_may
    succ, psucc, pred, ppred = graph.adjacency()
    n_nodes = len(graph.nodes)
    live = [0] * n_nodes
    dirty = [True] * n_nodes
    order = range(n_nodes - 1, -1, -1)
    again = True
    while again:  # sweeps in reverse order; only loops' back edges need another one
        again = False
        for i in order:
            if not dirty[i]:
                continue
            dirty[i] = False
            out = 0
            for j in succ[i]:
                out |= live[j]
            new = gens[i] | (out & keeps[i])
            ps = psucc[i]
            if ps is not None:
                for j in ps:
                    new |= live[j]
            if new != live[i]:
                live[i] = new
                for p in pred[i]:
                    dirty[p] = True
                    if p >= i:
                        again = True
                pp = ppred[i]
                if pp is not None:
                    for p in pp:
                        dirty[p] = True
                        if p >= i:
                            again = True
    return live


def analyze(graph: Graph, info: FunctionInfo) -> list[int]:
    """Annotate the statements of ``graph`` with liveness; return live-in bits per node."""
    live = solve(graph, info)
    table = symbol_table(info)
    always = table.encode(info.always_live)
    if always:
        live = [v | always for v in live]
    decode = table.decode
    stmts = graph.stmts
    for stmt, si in stmts.items():
        a = stmt.__dict__.get(_ANNO)
        if a is None:
            a = stmt.__dict__[_ANNO] = {}
        live_in, live_out = always, always
        for c in si.copies() if si.alt is not None else (si,):
            if c.first is not None:
                live_in |= live[c.first.index]
            for n in c.follow:
                live_out |= live[n.index]
        a[LIVE_IN] = decode(live_in)
        a[LIVE_OUT] = decode(live_out)
        if type(stmt) in _LOOPS:
            header = body = always
            for c, b in zip(si.copies(), stmts[stmt.body[0]].copies()):
                # the header is the While's test, or the For's step (created right after `iter`)
                header |= live[c.first.index + (type(stmt) is not gast.While)]
                body |= live[b.first.index]
            a[anno.LOOP_LIVE_IN_HEADER] = decode(header)
            a[anno.LOOP_LIVE_IN_BODY] = decode(body)
    return live

"""Lowerings of sequence ops: ``gather_tree`` (beam-search backtracking) as a ``Loop``."""

from __future__ import annotations

from autostatic.onnx.graph import value_info
from autostatic.onnx.lowerings import lowers

_INT64_MIN = -(2**63)


def _reversed(g, x: str) -> str:
    """``x[::-1]`` along the first axis."""
    ends = [g.ints([-1]), g.ints([_INT64_MIN]), g.ints([0]), g.ints([-1])]
    return g.node("Slice", [x, *ends])


@lowers("gather_tree")
def _gather_tree(g, op):
    """Walk back from the last step: a Loop over the reversed steps carries the beam each
    final beam came from at that step, and emits that beam's token (a scan output)."""
    ids, parents = g.x(op, 0), g.x(op, 1, "int64")
    back_ids, back_parents = _reversed(g, ids), _reversed(g, parents)
    shape = g.node("Shape", [ids])
    steps = g.node("Gather", [shape, g.scalar(0, "int64")])
    beams = g.node("Gather", [shape, g.scalar(2, "int64")])
    start = g.node("Range", [g.scalar(0, "int64"), beams, g.scalar(1, "int64")])
    first = g.node("Slice", [shape, g.ints([1]), g.ints([3])])
    chosen = g.node("Expand", [start, first])  # each beam starts from itself

    body = g.subgraph()
    step, go, beam = g.fresh("step"), g.fresh("go"), g.fresh("beam")
    token_row = body.node("Gather", [back_ids, step], axis=0)
    parent_row = body.node("Gather", [back_parents, step], axis=0)
    token = body.node("GatherElements", [token_row, beam], axis=-1)
    came_from = body.node("GatherElements", [parent_row, beam], axis=-1)
    go_on = body.node("Identity", [go])
    dtype, batch_beam = op.outputs[0].dtype, [-1, -1]
    graph = body.make(
        g.fresh("gather_tree_body"),
        [value_info(step, "int64", []), value_info(go, "bool", []),
         value_info(beam, "int64", batch_beam)],
        [value_info(go_on, "bool", []), value_info(came_from, "int64", batch_beam),
         value_info(token, dtype, batch_beam)],
    )  # fmt: skip
    _, rows = g.node("Loop", [steps, "", chosen], n_out=2, body=graph)
    g.node("Identity", [_reversed(g, rows)], outputs=[g.out(0)])

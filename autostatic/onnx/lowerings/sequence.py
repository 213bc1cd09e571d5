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


@lowers("cumprod")
def _cumprod(g, op):
    """Running products along ``axis``: a Loop over that axis (moved first) carrying the
    product so far and emitting it each step (exact, where exp(cumsum(log)) would not be)."""
    x, dt = g.x(op, 0), op.outputs[0].dtype
    rank, axis = len(op.inputs[0].shape), op.attrs["axis"]
    if axis is None or rank == 0:  # over the flattened tensor
        x, rank, axis = g.node("Reshape", [x, g.ints([-1])]), 1, 0
    axis %= rank
    perm = [axis] + [d for d in range(rank) if d != axis]
    moved = g.node("Transpose", [x], perm=perm)
    steps = g.node("Gather", [g.node("Shape", [moved]), g.scalar(0, "int64")])
    ones = g.node("Mul", [g.node("Gather", [moved, g.scalar(0, "int64")], axis=0), g.scalar(0, dt)])
    ones = g.node("Add", [ones, g.scalar(1, dt)])

    body = g.subgraph()
    step, go, total = g.fresh("step"), g.fresh("go"), g.fresh("product")
    row = body.node("Gather", [moved, step], axis=0)
    new = body.node("Mul", [total, row])
    go_on = body.node("Identity", [go])
    emitted = body.node("Identity", [new])
    graph = body.make(
        g.fresh("cumprod_body"),
        [value_info(step, "int64", []), value_info(go, "bool", []),
         value_info(total, dt, None)],
        [value_info(go_on, "bool", []), value_info(new, dt, None),
         value_info(emitted, dt, None)],
    )  # fmt: skip
    _, rows = g.node("Loop", [steps, "", ones], n_out=2, body=graph)
    back = [perm.index(d) for d in range(rank)]
    g.node("Transpose", [rows], outputs=[g.out(0)], perm=back)

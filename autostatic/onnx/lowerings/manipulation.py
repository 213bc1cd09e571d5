"""Lowerings of shape manipulation: reshape, transpose, concat/split, tile/expand, flip, pad,
slices, and the tensor-array ops (an array is a dense ``[length, *element]`` tensor)."""

from __future__ import annotations

import numpy as np

from autostatic.onnx.lowerings import lowers
from autostatic.onnx.lowerings.reduce import dim
from autostatic_runtime import dtypes

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


@lowers("reshape")
def _reshape(g, op):
    g.node("Reshape", [g.x(op, 0), g.ints(op.attrs["shape"])], outputs=[g.out(0)])


@lowers("reshape_as")
def _reshape_as(g, op):
    g.node("Reshape", [g.x(op, 0), g.node("Shape", [g.x(op, 1)])], outputs=[g.out(0)])


@lowers("reshape_dynamic")
def _reshape_dynamic(g, op):
    g.node("Reshape", [g.x(op, 0), g.x(op, 1, dtypes.int64)], outputs=[g.out(0)])


@lowers("transpose")
def _transpose(g, op):
    g.node("Transpose", [g.x(op, 0)], outputs=[g.out(0)], perm=list(op.attrs["perm"]))


@lowers("squeeze")
def _squeeze(g, op):
    shape = op.inputs[0].shape
    # like the op's inference: a listed dim of size 1, or unknown (Paddle assumes 1), goes
    axes = sorted({a % len(shape) for a in op.attrs["axis"]}) if shape else []
    axes = [a for a in axes if shape[a] in (1, -1)]
    if not axes:
        g.node("Identity", [g.x(op, 0)], outputs=[g.out(0)])
        return
    g.squeeze(g.x(op, 0), axes, outputs=[g.out(0)])


@lowers("unsqueeze")
def _unsqueeze(g, op):
    """Paddle inserts the dims one by one, each axis counted in the shape built so far."""
    dims = [False] * len(op.inputs[0].shape)
    for a in op.attrs["axis"]:
        dims.insert(a + len(dims) + 1 if a < 0 else a, True)
    axes = [i for i, new in enumerate(dims) if new]
    g.node("Unsqueeze", [g.x(op, 0), g.ints(axes)], outputs=[g.out(0)])


def dims(g, x: str, start: int, end: int) -> str:
    """``shape(x)[start:end]`` as an int64 tensor."""
    return g.node("Slice", [g.node("Shape", [x]), g.ints([start]), g.ints([end])])


@lowers("flatten")
def _flatten(g, op):
    x, rank = g.x(op, 0), len(op.inputs[0].shape)
    if rank == 0:
        g.node("Reshape", [x, g.ints([1])], outputs=[g.out(0)])
        return
    start, stop = op.attrs["start_axis"] % rank, op.attrs["stop_axis"] % rank
    if start == 1 and stop == rank - 1:  # [N, rest]: ONNX's Flatten keeps N symbolic
        g.node("Flatten", [x], outputs=[g.out(0)], axis=1)
        return
    shape = g.node(
        "Concat", [dims(g, x, 0, start), g.ints([-1]), dims(g, x, stop + 1, rank)], axis=0
    )
    g.node("Reshape", [x, shape], outputs=[g.out(0)])


@lowers("concat")
def _concat(g, op):
    dt = op.outputs[0].dtype
    parts = [g.x(op, i, dt) for i in range(len(op.inputs))]
    g.node("Concat", parts, outputs=[g.out(0)], axis=op.attrs["axis"])


@lowers("stack")
def _stack(g, op):
    dt, axis = op.outputs[0].dtype, op.attrs["axis"] % len(op.outputs[0].shape)
    parts = [g.unsqueeze(g.x(op, i, dt), [axis]) for i in range(len(op.inputs))]
    g.node("Concat", parts, outputs=[g.out(0)], axis=axis)


@lowers("unstack")
def _unstack(g, op):
    axis = op.attrs["axis"] % len(op.inputs[0].shape)
    n = len(op.outputs)
    pieces = g.node("Split", [g.x(op, 0), g.ints([1] * n)], n_out=n, axis=axis)
    for i, p in enumerate([pieces] if n == 1 else pieces):
        g.squeeze(p, [axis], outputs=[g.out(i)])


def _split_check(op, opset):
    if any(size < 0 for size in _split_sizes(op)) and not (op.attrs["num"] and opset >= 18):
        return "split of a dim unknown when the program was built (opset 18 splits it evenly)"
    return None


def _split_sizes(op) -> list:
    return [v.shape[op.attrs["axis"]] for v in op.outputs]


@lowers("split", check=_split_check)
def _split(g, op):
    outs = [g.out(i) for i in range(len(op.outputs))]
    axis, sizes = op.attrs["axis"], _split_sizes(op)
    if any(size < 0 for size in sizes):  # num equal pieces of a dim known only when run
        g.node("Split", [g.x(op, 0)], outputs=outs, axis=axis, num_outputs=len(outs))
        return
    g.node("Split", [g.x(op, 0), g.ints(sizes)], outputs=outs, axis=axis)


@lowers("tile")
def _tile(g, op):
    x, reps = g.x(op, 0), list(op.attrs["repeat_times"])
    rank = len(op.inputs[0].shape)
    if len(reps) > rank:
        x = g.unsqueeze(x, list(range(len(reps) - rank)))
    reps = [1] * (rank - len(reps)) + reps
    g.node("Tile", [x, g.ints(reps)], outputs=[g.out(0)])


@lowers("expand")
def _expand(g, op):
    shape = [1 if d == -1 else d for d in op.attrs["shape"]]  # a 1 keeps the input's dim
    g.node("Expand", [g.x(op, 0), g.ints(shape)], outputs=[g.out(0)])


@lowers("expand_as")
def _expand_as(g, op):
    g.node("Expand", [g.x(op, 0), g.node("Shape", [g.x(op, 1)])], outputs=[g.out(0)])


@lowers("expand_dynamic")
def _expand_dynamic(g, op):
    shape = g.x(op, 1, dtypes.int64)
    keep = g.node("Equal", [shape, g.scalar(-1, dtypes.int64)])
    shape = g.node("Where", [keep, g.scalar(1, dtypes.int64), shape])
    g.node("Expand", [g.x(op, 0), shape], outputs=[g.out(0)])


@lowers("flip")
def _flip(g, op):
    axes = list(op.attrs["axis"])
    n = len(axes)
    inputs = [g.x(op, 0), g.ints([-1] * n), g.ints([_INT64_MIN] * n), g.ints(axes)]
    g.node("Slice", [*inputs, g.ints([-1] * n)], outputs=[g.out(0)])


@lowers("roll")
def _roll(g, op):
    """Each axis: the last ``shift % size`` entries, then the others (sizes read at run
    time, so unknown dims roll too)."""
    x = g.x(op, 0)
    axes, shifts = op.attrs["axis"], list(op.attrs["shifts"])
    if axes is None:
        x, axes, shifts = g.node("Reshape", [x, g.ints([-1])]), [0], shifts[:1]
    for axis, shift in zip(axes, shifts):
        size = dim(g, x, axis)
        cut = g.node("Sub", [size, g.node("Mod", [g.ints([shift]), size])])
        tail = g.node("Slice", [x, cut, size, g.ints([axis])])
        head = g.node("Slice", [x, g.ints([0]), cut, g.ints([axis])])
        x = g.node("Concat", [tail, head], axis=axis)
    if op.attrs["axis"] is None:
        x = g.node("Reshape", [x, g.node("Shape", [g.x(op, 0)])])
    g.node("Identity", [x], outputs=[g.out(0)])


@lowers("tril_triu", check=lambda op, opset: None if opset >= 14 else "Trilu needs opset 14")
def _tril_triu(g, op):
    k = g.scalar(op.attrs["diagonal"], dtypes.int64)
    upper = 0 if op.attrs["lower"] else 1
    g.node("Trilu", [g.x(op, 0), k], outputs=[g.out(0)], upper=upper)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_check(op, opset):
    if op.attrs["mode"] == "circular" and opset < 19:
        return "circular padding needs opset 19"
    return None


@lowers("pad", check=_pad_check)
def _pad(g, op):
    p = list(op.attrs["paddings"])
    pads = p[0::2] + p[1::2]
    inputs = [g.x(op, 0), g.ints(pads)]
    if op.attrs["mode"] == "constant":
        inputs.append(g.scalar(op.attrs["value"], op.outputs[0].dtype))
    g.node("Pad", inputs, outputs=[g.out(0)], mode=_PAD_MODES[op.attrs["mode"]])


@lowers("pad_dynamic", check=_pad_check)
def _pad_dynamic(g, op):
    """ONNX's pads (every dim's befores, then its afters) gathered from ``[0, *amounts]``."""
    x, axes = g.x(op, 0), op.attrs["axes"]
    rank = len(op.inputs[0].shape)
    at = {d: k for k, d in enumerate(axes)}
    picks = [1 + 2 * at[d] if d in at else 0 for d in range(rank)]
    picks += [2 + 2 * at[d] if d in at else 0 for d in range(rank)]
    amounts = g.node("Concat", [g.ints([0]), g.x(op, 1, dtypes.int64)], axis=0)
    inputs = [x, g.node("Gather", [amounts, g.ints(picks)], axis=0)]
    if op.attrs["mode"] == "constant":
        inputs.append(g.scalar(op.attrs["value"], op.outputs[0].dtype))
    g.node("Pad", inputs, outputs=[g.out(0)], mode=_PAD_MODES[op.attrs["mode"]])


@lowers("slice")
def _slice(g, op):
    starts, ends = g.x(op, 1, dtypes.int64), g.x(op, 2, dtypes.int64)
    g.node("Slice", [g.x(op, 0), starts, ends, g.ints(op.attrs["axes"])], outputs=[g.out(0)])


# ---- tensor arrays: a dense [length, *element] buffer ---------------------------------------


def _index(g, i: str, n: str) -> str:
    """A 0-d int64 index with Python's negative indices resolved against length ``n``."""
    neg = g.node("Less", [i, g.scalar(0, dtypes.int64)])
    return g.node("Where", [neg, g.node("Add", [i, n]), i])


def _length(g, buffer: str) -> str:
    return g.node("Gather", [g.node("Shape", [buffer]), g.scalar(0, dtypes.int64)])


@lowers("array_length")
def _array_length(g, op):
    g.node("Identity", [_length(g, g.x(op, 0))], outputs=[g.out(0)])


@lowers("array_read")
def _array_read(g, op):
    buffer = g.x(op, 0)
    i = _index(g, g.x(op, 1, dtypes.int64), _length(g, buffer))
    g.node("Gather", [buffer, i], outputs=[g.out(0)], axis=0)


@lowers("array_write")
def _array_write(g, op):
    """Append (``i == len``) or overwrite in one form: append the value, scatter it to row
    ``i``, keep the first ``max(len, i + 1)`` rows."""
    dt = op.outputs[0].dtype
    value, buffer = g.unsqueeze(g.x(op, 0, dt), [0]), g.x(op, 2)
    n = _length(g, buffer)
    i = _index(g, g.x(op, 1, dtypes.int64), n)
    grown = g.node("Concat", [buffer, value], axis=0)
    written = g.node("ScatterND", [grown, g.node("Reshape", [i, g.ints([1, 1])]), value])
    keep = g.node("Max", [n, g.node("Add", [i, g.scalar(1, dtypes.int64)])])
    end = g.node("Reshape", [keep, g.ints([1])])
    g.node("Slice", [written, g.ints([0]), end, g.ints([0])], outputs=[g.out(0)])


@lowers("array_pop")
def _array_pop(g, op):
    buffer = g.x(op, 0)
    i = _index(g, g.x(op, 1, dtypes.int64), _length(g, buffer))
    k = g.node("Reshape", [i, g.ints([1])])
    after = g.node("Add", [k, g.ints([1])])
    head = g.node("Slice", [buffer, g.ints([0]), k, g.ints([0])])
    tail = g.node("Slice", [buffer, after, g.ints([_INT64_MAX]), g.ints([0])])
    g.node("Concat", [head, tail], outputs=[g.out(0)], axis=0)
    g.node("Gather", [buffer, i], outputs=[g.out(1)], axis=0)


def _static_axes_check(*names):
    """A check that the dims the op works on (its axis attrs) were known when building."""

    def check(op, opset):
        shape = op.inputs[0].shape
        axes = [op.attrs[n] for n in names] if names else list(range(len(shape)))
        if any(a is None or shape[a] < 0 for a in axes):
            return f"{op.type} along a dim unknown when the program was built"
        return None

    return check


@lowers("repeat_interleave")
def _repeat_interleave(g, op):
    x, axis, repeats = g.x(op, 0), op.attrs["axis"], op.attrs["repeats"]
    if not isinstance(repeats, int):  # counts per row: the rows to take are known now
        rows = np.repeat(np.arange(len(repeats)), repeats)
        g.node("Gather", [x, g.const(rows, dtypes.int64)], outputs=[g.out(0)], axis=axis)
        return
    rank = len(op.inputs[0].shape)
    axis %= rank
    tiles = [1] * (rank + 1)
    tiles[axis + 1] = repeats
    tiled = g.node("Tile", [g.unsqueeze(x, [axis + 1]), g.ints(tiles)])
    shape = g.node(
        "Concat", [dims(g, x, 0, axis), g.ints([-1]), dims(g, x, axis + 1, rank)], axis=0
    )
    g.node("Reshape", [tiled, shape], outputs=[g.out(0)])


def _moved_last(g, op, x: str) -> tuple[str, int, int]:
    """``x`` with ``axis1``, ``axis2`` moved last, and their sizes."""
    a = op.attrs
    shape = op.inputs[0].shape
    perm = [i for i in range(len(shape)) if i not in (a["axis1"], a["axis2"])]
    perm += [a["axis1"], a["axis2"]]
    return g.node("Transpose", [x], perm=perm), shape[a["axis1"]], shape[a["axis2"]]


@lowers("diagonal", check=_static_axes_check("axis1", "axis2"))
def _diagonal(g, op):
    y, n, m = _moved_last(g, op, g.x(op, 0))
    rank = len(op.inputs[0].shape)
    flat = g.node("Reshape", [y, g.ints([0] * (rank - 2) + [n * m])])
    offset = op.attrs["offset"]
    count = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    i = np.arange(count)
    positions = (i + max(-offset, 0)) * m + (i + max(offset, 0))
    index = g.const(positions, dtypes.int64)
    g.node("Gather", [flat, index], outputs=[g.out(0)], axis=rank - 2)


@lowers("trace", check=_static_axes_check("axis1", "axis2"))
def _trace(g, op):
    y, n, m = _moved_last(g, op, g.x(op, 0))
    mask = g.const(np.eye(n, m, k=op.attrs["offset"]), op.outputs[0].dtype)
    g.reduce("ReduceSum", g.node("Mul", [y, mask]), [-2, -1], False, outputs=[g.out(0)])


@lowers("cross")
def _cross(g, op):
    dt, axis = op.outputs[0].dtype, op.attrs["axis"]
    x, y = g.x(op, 0, dt), g.x(op, 1, dt)
    xs = [g.node("Gather", [x, g.ints([i])], axis=axis) for i in range(3)]
    ys = [g.node("Gather", [y, g.ints([i])], axis=axis) for i in range(3)]
    parts = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts.append(g.node("Sub", [g.node("Mul", [xs[j], ys[k]]), g.node("Mul", [xs[k], ys[j]])]))
    g.node("Concat", parts, outputs=[g.out(0)], axis=axis)


def _last_dim_check(op, opset):
    return "diag_embed of a last dim unknown when built" if op.inputs[0].shape[-1] < 0 else None


@lowers("diag_embed", check=_last_dim_check)
def _diag_embed(g, op):
    """``x`` [..., k] on the ``offset`` diagonal of [..., m, m]: a product with a 0/1
    placement matrix [k, m * m]."""
    k, offset = op.inputs[0].shape[-1], op.attrs["offset"]
    m = k + abs(offset)
    i = np.arange(k)
    place = np.zeros((k, m * m))
    place[i, (i + max(-offset, 0)) * m + (i + max(offset, 0))] = 1
    dt = op.outputs[0].dtype
    flat = g.node("MatMul", [g.x(op, 0), g.const(place, dt)])
    rank = len(op.inputs[0].shape)
    g.node("Reshape", [flat, g.ints([0] * (rank - 1) + [m, m])], outputs=[g.out(0)])

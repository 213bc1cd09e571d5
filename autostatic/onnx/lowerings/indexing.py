"""Lowerings of indexing: ``x[key]``, ``x[key] = v``, gather/scatter, one_hot, nonzero."""

from __future__ import annotations

import numpy as np

from autostatic.onnx.lowerings import lowers
from autostatic_runtime import dtypes
from autostatic_runtime.static.program import Variable

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _expand_key(key: tuple, rank: int) -> list:
    """``key`` with ``...`` replaced by full slices."""
    used = sum(1 for k in key if k not in ("...", "newaxis"))
    out = []
    for k in key:
        if k == "...":
            out.extend([("slice", None, None, None)] * (rank - used))
        else:
            out.append(k)
    if "..." not in key:
        out.extend([("slice", None, None, None)] * (rank - used))
    return out


def _is_tensor(k) -> bool:
    return type(k) is tuple and k[0] == "tensor"


def _getitem_check(op, opset):
    tensors = [k for k in op.attrs["key"] if _is_tensor(k)]
    if not tensors or _leading_tensors(op):
        return None
    if len(tensors) > 1:
        return "several index tensors apart from each other or after other indices"
    index = op.inputs[1 + tensors[0][1]]
    if index.dtype == dtypes.bool_ and len(index.shape) != 1:
        return "a multi-dimensional bool mask after other indices"
    if any(type(k) is int or k == "newaxis" for k in op.attrs["key"]):
        return "an index tensor combined with integer or None indices"
    return None


def _leading_tensors(op, first: int = 1) -> list:
    """The index Variables (inputs from ``first`` on) when ``key`` is tensors first, then only
    full slices (NumPy's ``x[i, j]``, ``x[mask]``): one GatherND or ScatterND. Else empty."""
    key = [k for k in op.attrs["key"] if k != "..."]
    n = 0
    while n < len(key) and _is_tensor(key[n]):
        n += 1
    if n == 0 or any(k != ("slice", None, None, None) for k in key[n:]):
        return []
    if "..." in op.attrs["key"] and op.attrs["key"].index("...") < n:
        return []
    index = [op.inputs[first + k[1]] for k in key[:n]]
    bools = [v for v in index if v.dtype == dtypes.bool_]
    if bools and len(index) > 1:
        return []
    return index


def _advanced_index(g, op, index: list) -> None:
    """``x[i, j, ...]`` (int tensors, broadcast together) or ``x[mask]`` as one GatherND."""
    g.node("GatherND", [g.x(op, 0), _index_rows(g, index)], outputs=[g.out(0)])


def _index_rows(g, index: list) -> str:
    """The ``[..., k]`` index tuples of leading index tensors (GatherND's, ScatterND's)."""
    if index[0].dtype == dtypes.bool_:
        return g.node("Transpose", [g.node("NonZero", [g.lookup(index[0].name)])], perm=[1, 0])
    names = [g.cast(g.lookup(v.name), v.dtype, dtypes.int64) for v in index]
    zero = g.scalar(0, dtypes.int64)
    total = names[0]
    for name in names[1:]:
        total = g.node("Add", [total, name])
    shape = g.node("Shape", [g.node("Mul", [total, zero])])
    parts = [g.unsqueeze(g.node("Expand", [name, shape]), [-1]) for name in names]
    return g.node("Concat", parts, axis=-1) if len(parts) > 1 else parts[0]


def _slice_bounds(k, axis: int):
    """(start, end, step) of one key item on ``axis`` (an int is the slice [i, i+1])."""
    if type(k) is int:
        return k, (_INT64_MAX if k == -1 else k + 1), 1
    _, start, stop, step = k
    step = 1 if step is None else step
    if start is None:
        start = 0 if step > 0 else _INT64_MAX
    if stop is None:
        stop = _INT64_MAX if step > 0 else _INT64_MIN
    return start, stop, step


@lowers("getitem", check=_getitem_check)
def _getitem(g, op):
    index = _leading_tensors(op)
    if index:
        _advanced_index(g, op, index)
        return
    x = g.x(op, 0)
    rank = len(op.inputs[0].shape)
    key = _expand_key(op.attrs["key"], rank)
    starts, ends, axes, steps = [], [], [], []
    ints, tensor, new_positions, pos, axis = [], None, [], 0, 0
    for k in key:
        if k == "newaxis":
            new_positions.append(pos)
            pos += 1
            continue
        if _is_tensor(k):
            tensor = (axis, op.inputs[1 + k[1]])
            pos += len(tensor[1].shape)
        else:
            if k != ("slice", None, None, None):
                s, e, st = _slice_bounds(k, axis)
                starts.append(s), ends.append(e), axes.append(axis), steps.append(st)
            if type(k) is int:
                ints.append(axis)
            else:
                pos += 1
        axis += 1
    if axes:
        x = g.node("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if tensor is not None:
        kind = "Compress" if tensor[1].dtype == dtypes.bool_ else "Gather"  # a 1-D mask
        x = g.node(kind, [x, g.lookup(tensor[1].name)], axis=tensor[0])
    if ints:
        x = g.squeeze(x, ints)
    if new_positions:
        x = g.unsqueeze(x, new_positions)
    g.node("Identity", [x], outputs=[g.out(0)])


def _set_value_check(op, opset):
    if _leading_tensors(op, first=2):
        return None
    if any(_is_tensor(k) for k in op.attrs["key"]):
        return "assignment through index tensors after other indices"
    if any(d < 0 for d in op.inputs[0].shape):
        return "assignment into a tensor whose shape is unknown when the program is built"
    return None


def _numpy_key(key: tuple) -> tuple:
    return tuple(
        slice(*k[1:])
        if type(k) is tuple
        else None
        if k == "newaxis"
        else Ellipsis
        if k == "..."
        else k
        for k in key
    )


@lowers("set_value", check=_set_value_check)
def _set_value(g, op):
    """``x[key] = v`` on a tensor of known shape: scatter into the flat positions ``key``
    selects (computed now, with NumPy)."""
    index = _leading_tensors(op, first=2)
    if index:
        _scatter_rows(g, op, index)
        return
    dt, shape = op.outputs[0].dtype, op.inputs[0].shape
    region = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[
        _numpy_key(op.attrs["key"])
    ]
    value = g.x(op, 1, dt)
    vshape = g.shape(op, 1)
    while len(vshape) > region.ndim and vshape[0] == 1:  # NumPy drops leading 1s
        vshape = vshape[1:]
    value = g.node("Reshape", [value, g.ints(vshape)])
    updates = g.node("Reshape", [g.node("Expand", [value, g.ints(region.shape)]), g.ints([-1])])
    flat = g.node("Reshape", [g.x(op, 0), g.ints([-1])])
    positions = g.const(region.reshape(-1, 1), dtypes.int64)
    written = g.node("ScatterND", [flat, positions, updates])
    g.node("Reshape", [written, g.ints(shape)], outputs=[g.out(0)])


def _scatter_rows(g, op, index: list) -> None:
    """``x[i, j] = v`` or ``x[mask] = v``: ScatterND of ``v`` broadcast to the rows."""
    x, rows = g.x(op, 0), _index_rows(g, index)
    k = len(index) if index[0].dtype != dtypes.bool_ else len(index[0].shape)
    lead = g.node("Slice", [g.node("Shape", [rows]), g.ints([0]), g.ints([-1])])
    rest = g.node("Slice", [g.node("Shape", [x]), g.ints([k]), g.ints([2**62])])
    target = g.node("Concat", [lead, rest], axis=0)
    updates = g.node("Expand", [g.x(op, 1, op.outputs[0].dtype), target])
    g.node("ScatterND", [x, rows, updates], outputs=[g.out(0)])


@lowers("gather")
def _gather(g, op):
    g.node("Gather", [g.x(op, 0), g.x(op, 1)], outputs=[g.out(0)], axis=op.attrs["axis"])


@lowers("gather_nd")
def _gather_nd(g, op):
    g.node("GatherND", [g.x(op, 0), g.x(op, 1, dtypes.int64)], outputs=[g.out(0)])


def _broadcast_index(g, op, x: str, index: str, axis: int):
    """``x`` and ``index`` broadcast against each other on every dim but ``axis``."""
    xs, ids = op.inputs[0].shape, op.inputs[1].shape
    want_x = [max(a, b) if i != axis else a for i, (a, b) in enumerate(zip(xs, ids))]
    want_i = [max(a, b) if i != axis else b for i, (a, b) in enumerate(zip(xs, ids))]
    if want_x != list(xs) and -1 not in want_x:
        x = g.node("Expand", [x, g.ints(want_x)])
    if want_i != list(ids) and -1 not in want_i:
        index = g.node("Expand", [index, g.ints(want_i)])
    return x, index


@lowers("take_along_axis")
def _take_along_axis(g, op):
    axis = op.attrs["axis"] % len(op.inputs[0].shape)
    x, index = _broadcast_index(g, op, g.x(op, 0), g.x(op, 1, dtypes.int64), axis)
    g.node("GatherElements", [x, index], outputs=[g.out(0)], axis=axis)


_REDUCTIONS = {"assign": None, "add": "add", "mul": "mul"}


def _put_check(op, opset):
    if op.attrs["reduce"] not in _REDUCTIONS:
        return f"reduce={op.attrs['reduce']!r}"
    return None if opset >= 16 or op.attrs["reduce"] == "assign" else "reductions need opset 16"


@lowers("put_along_axis", check=_put_check)
def _put_along_axis(g, op):
    dt, axis = op.outputs[0].dtype, op.attrs["axis"]
    index = g.x(op, 1, dtypes.int64)
    values = g.node("Expand", [g.x(op, 2, dt), g.node("Shape", [index])])
    g.node(
        "ScatterElements",
        [g.x(op, 0, dt), index, values],
        outputs=[g.out(0)],
        axis=axis,
        reduction=_REDUCTIONS[op.attrs["reduce"]],
    )


@lowers("scatter_nd_add", check=lambda op, opset: None if opset >= 16 else "needs opset 16")
def _scatter_nd_add(g, op):
    dt = op.outputs[0].dtype
    inputs = [g.x(op, 0, dt), g.x(op, 1, dtypes.int64), g.x(op, 2, dt)]
    g.node("ScatterND", inputs, outputs=[g.out(0)], reduction="add")


@lowers("one_hot_v2")
def _one_hot(g, op):
    values = g.const([0, 1], op.outputs[0].dtype)
    depth = g.scalar(op.attrs["num_classes"], dtypes.int64)
    g.node("OneHot", [g.x(op, 0), depth, values], outputs=[g.out(0)], axis=-1)


@lowers("where_index")
def _where_index(g, op):
    g.node("Transpose", [g.node("NonZero", [g.x(op, 0)])], outputs=[g.out(0)], perm=[1, 0])


@lowers("lookup_table_v2")
def _embedding(g, op):
    ids = g.x(op, 0)
    rows = g.node("Gather", [g.x(op, 1), ids], axis=0)
    pad = op.attrs.get("padding_idx")
    if pad is None:
        g.node("Identity", [rows], outputs=[g.out(0)])
        return
    hit = g.unsqueeze(g.node("Equal", [ids, g.scalar(pad, _dtype(op.inputs[0]))]), [-1])
    zero = g.scalar(0, op.outputs[0].dtype)
    g.node("Where", [hit, zero, rows], outputs=[g.out(0)])


def _dtype(v):
    return v.dtype if isinstance(v, Variable) else dtypes.int64


def _needs_16(op, opset):
    return None if opset >= 16 else f"{op.type} needs opset 16"


@lowers("scatter", check=_needs_16)
def _scatter(g, op):
    """Rows ``index`` of ``x`` replaced by ``updates`` (summed over repeated indices unless
    ``overwrite``)."""
    dt = op.outputs[0].dtype
    rows = g.unsqueeze(g.node("Reshape", [g.x(op, 1, dtypes.int64), g.ints([-1])]), [-1])
    updates = g.x(op, 2, dt)
    if op.attrs["overwrite"]:
        g.node("ScatterND", [g.x(op, 0), rows, updates], outputs=[g.out(0)])
        return
    zeros = g.node("Mul", [updates, g.scalar(0, dt)])
    cleared = g.node("ScatterND", [g.x(op, 0), rows, zeros])
    g.node("ScatterND", [cleared, rows, updates], outputs=[g.out(0)], reduction="add")


def _index_add_check(op, opset):
    if len(op.inputs[1].shape) != 1:
        return "index_add with a multi-dimensional index"
    return _needs_16(op, opset)


@lowers("index_add", check=_index_add_check)
def _index_add(g, op):
    dt, axis = op.outputs[0].dtype, op.attrs["axis"] % len(op.inputs[0].shape)
    value = g.x(op, 2, dt)
    shape = [1] * len(op.inputs[0].shape)
    shape[axis] = -1
    index = g.node("Reshape", [g.x(op, 1, dtypes.int64), g.ints(shape)])
    index = g.node("Expand", [index, g.node("Shape", [value])])
    g.node(
        "ScatterElements",
        [g.x(op, 0, dt), index, value],
        outputs=[g.out(0)],
        axis=axis,
        reduction="add",
    )

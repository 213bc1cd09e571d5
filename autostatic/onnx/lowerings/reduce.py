"""Lowerings of reductions, scans, arg-extremes and sorting."""

from __future__ import annotations

from autostatic.onnx.graph import onnx_dtype
from autostatic.onnx.lowerings import lowers
from autostatic_runtime import dtypes

_REDUCE = {
    "reduce_sum": "ReduceSum", "reduce_mean": "ReduceMean", "reduce_max": "ReduceMax",
    "reduce_min": "ReduceMin", "reduce_prod": "ReduceProd",
}  # fmt: skip


def _axes(op):
    axis = op.attrs.get("axis")
    if axis is None:
        return None
    return [axis] if isinstance(axis, int) else list(axis)


@lowers(*_REDUCE)
def _reduce(g, op):
    dt = op.outputs[0].dtype
    data = g.x(op, 0, dt)
    if _axes(op) == []:  # reducing over no axes: the input itself
        g.node("Identity", [data], outputs=[g.out(0)])
        return
    g.reduce(_REDUCE[op.type], data, _axes(op), op.attrs["keepdim"], outputs=[g.out(0)])


@lowers("reduce_all", "reduce_any")
def _reduce_logic(g, op):
    as_int = g.x(op, 0, dtypes.int32)
    kind = "ReduceMin" if op.type == "reduce_all" else "ReduceMax"
    r = g.reduce(kind, as_int, _axes(op), op.attrs["keepdim"])
    g.node("Cast", [r], outputs=[g.out(0)], to=onnx_dtype(dtypes.bool_))


@lowers("logsumexp")
def _logsumexp(g, op):
    x = g.x(op, 0)
    axes, keep = _axes(op), op.attrs["keepdim"]
    top = g.reduce("ReduceMax", x, axes, True)
    total = g.reduce("ReduceSum", g.node("Exp", [g.node("Sub", [x, top])]), axes, keep)
    if not keep:
        top = g.squeeze(top, axes) if axes is not None else g.node("Reshape", [top, g.ints([])])
    g.node("Add", [g.node("Log", [total]), top], outputs=[g.out(0)])


@lowers("arg_max", "arg_min")
def _arg(g, op):
    x, axis = g.x(op, 0), op.attrs["axis"]
    keep = int(bool(op.attrs["keepdim"]))
    kind = "ArgMax" if op.type == "arg_max" else "ArgMin"
    if axis is None:
        x, axis = g.node("Reshape", [x, g.ints([-1])]), 0
        rank = len(op.inputs[0].shape)
        r = g.node(kind, [x], axis=0, keepdims=keep)
        if keep:
            r = g.node("Reshape", [r, g.ints([1] * rank)])
    else:
        r = g.node(kind, [x], axis=axis, keepdims=keep)
    g.to(r, dtypes.int64)


@lowers("cumsum")
def _cumsum(g, op):
    axis = g.scalar(op.attrs["axis"], dtypes.int64)
    g.node("CumSum", [g.x(op, 0), axis], outputs=[g.out(0)])


def dim(g, x: str, axis: int) -> str:
    """Size of ``axis`` of ``x`` as a 1-D int64 tensor of one element."""
    return g.node("Gather", [g.node("Shape", [x]), g.ints([axis])])


@lowers("top_k_v2")
def _top_k(g, op):
    a = op.attrs
    x = g.x(op, 0)
    g.node(
        "TopK",
        [x, g.ints([a["k"]])],
        outputs=[g.out(0), g.out(1)],
        axis=a["axis"],
        largest=int(bool(a["largest"])),
        sorted=1,
    )


@lowers("argsort")
def _argsort(g, op):
    x, axis = g.x(op, 0), op.attrs["axis"]
    g.node(
        "TopK",
        [x, dim(g, x, axis)],
        outputs=[g.out(0), g.out(1)],
        axis=axis,
        largest=int(bool(op.attrs["descending"])),
        sorted=1,
    )


@lowers("kthvalue")
def _kthvalue(g, op):
    a = op.attrs
    axis, k = a["axis"], a["k"]
    found = g.node("TopK", [g.x(op, 0), g.ints([k])], n_out=2, axis=axis, largest=0)
    for i in (0, 1):
        last = g.node("Slice", [found[i], g.ints([k - 1]), g.ints([k]), g.ints([axis])])
        if a["keepdim"]:
            g.node("Identity", [last], outputs=[g.out(i)])
        else:
            g.squeeze(last, [axis], outputs=[g.out(i)])


@lowers("searchsorted")
def _searchsorted(g, op):
    """Insertion points as counts: how many sequence entries lie before each value."""
    dt = dtypes.promote(op.inputs[0].dtype, op.inputs[1].dtype)
    seq = g.unsqueeze(g.x(op, 0, dt), [-2])
    values = g.unsqueeze(g.x(op, 1, dt), [-1])
    before = g.node("LessOrEqual" if op.attrs["right"] else "Less", [seq, values])
    count = g.reduce("ReduceSum", g.node("Cast", [before], to=onnx_dtype("int64")), [-1], False)
    g.to(count, dtypes.int64)


def _unique_check(op, opset):
    if op.inputs[0].dtype not in (dtypes.float32, dtypes.int64, dtypes.int8):
        return f"unique of {op.inputs[0].dtype} (ONNX Runtime's Unique takes float32, int64, int8)"
    return None


@lowers("unique", check=_unique_check)
def _unique(g, op):
    axis = op.attrs["axis"]
    found = g.node("Unique", [g.x(op, 0)], n_out=4, sorted=1, axis=axis)
    g.node("Identity", [found[0]], outputs=[g.out(0)])
    for i in (1, 2, 3):
        g.to(found[i], dtypes.int64, i)


@lowers("unique_consecutive")
def _unique_consecutive(g, op):
    """Runs of equal values (rows along ``axis``): where a row differs from the one before
    starts a group; values, first indices, inverse and counts follow from those starts."""
    axis, rank = op.attrs["axis"], len(op.inputs[0].shape)
    x = g.x(op, 0)
    if axis is None:
        moved = g.node("Reshape", [x, g.ints([-1])])
    else:
        perm = [axis % rank] + [d for d in range(rank) if d != axis % rank]
        moved = g.node("Transpose", [x], perm=perm)
    rows = g.node("Reshape", [moved, g.ints([0, -1])])
    n = g.node("Gather", [g.node("Shape", [rows]), g.ints([0])])
    after = g.node("Slice", [rows, g.ints([1]), g.ints([2**62]), g.ints([0])])
    before = g.node("Slice", [rows, g.ints([0]), g.ints([-1]), g.ints([0])])
    differs = g.node(
        "Cast", [g.node("Not", [g.node("Equal", [after, before])])], to=onnx_dtype("int32")
    )
    changed = g.reduce("ReduceMax", differs, [1], False)
    first_row = g.const([1], "int32")
    new = g.node("Slice", [g.node("Concat", [first_row, changed], axis=0), g.ints([0]), n])
    starts = g.squeeze(g.node("NonZero", [new]), [0])
    counts = g.node(
        "Sub",
        [
            g.node("Concat", [g.node("Slice", [starts, g.ints([1]), g.ints([2**62])]), n], axis=0),
            starts,
        ],
    )
    group = g.node(
        "Sub",
        [
            g.node("CumSum", [g.node("Cast", [new], to=onnx_dtype("int64")), g.scalar(0, "int64")]),
            g.scalar(1, "int64"),
        ],
    )
    values = g.node("Gather", [moved, starts], axis=0)
    if axis is not None:
        back = [perm.index(d) for d in range(rank)]
        values = g.node("Transpose", [values], perm=back)
    g.node("Identity", [values], outputs=[g.out(0)])
    for i, found in ((1, starts), (2, group), (3, counts)):
        g.to(found, dtypes.int64, i)

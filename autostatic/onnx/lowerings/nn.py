"""Lowerings of neural-network ops: matmul, convolution, pooling, normalization,
activations, resampling."""

from __future__ import annotations

import math

from autostatic.onnx.lowerings import lowers

_NHWC_TO_NCHW, _NCHW_TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def _nchw(g, x: str, data_format: str) -> str:
    return g.node("Transpose", [x], perm=_NHWC_TO_NCHW) if data_format == "NHWC" else x


def _from_nchw(g, y: str, data_format: str, out: str) -> None:
    if data_format == "NHWC":
        g.node("Transpose", [y], outputs=[out], perm=_NCHW_TO_NHWC)
    else:
        g.node("Identity", [y], outputs=[out])


def _pads(paddings) -> list[int]:
    """(top, bottom, left, right) -> ONNX's (top, left, bottom, right)."""
    top, bottom, left, right = paddings
    return [top, left, bottom, right]


def _transposed(g, x: str, rank: int) -> str:
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.node("Transpose", [x], perm=perm)


@lowers("matmul_v2")
def _matmul(g, op):
    x, y = g.x(op, 0), g.x(op, 1)
    rx, ry = len(op.inputs[0].shape), len(op.inputs[1].shape)
    if op.attrs.get("trans_x") and rx > 1:
        x = _transposed(g, x, rx)
    if op.attrs.get("trans_y") and ry > 1:
        y = _transposed(g, y, ry)
    g.node("MatMul", [x, y], outputs=[g.out(0)])


@lowers("einsum")
def _einsum(g, op):
    inputs = [g.x(op, i) for i in range(len(op.inputs))]
    g.node("Einsum", inputs, outputs=[g.out(0)], equation=op.attrs["equation"])


def _convolution(g, op, node_type: str, **extra) -> None:
    """A Conv or ConvTranspose node for a conv2d-style op (NHWC through transposes)."""
    a = op.attrs
    inputs = [_nchw(g, g.x(op, 0), a["data_format"]), g.x(op, 1)]
    if not g.is_none(op, 2):
        inputs.append(g.x(op, 2))
    y = g.node(
        node_type,
        inputs,
        strides=list(a["strides"]),
        pads=_pads(a["paddings"]),
        dilations=list(a["dilations"]),
        group=a["groups"],
        **extra,
    )
    _from_nchw(g, y, a["data_format"], g.out(0))


@lowers("conv2d")
def _conv2d(g, op):
    _convolution(g, op, "Conv")


@lowers("conv2d_transpose")
def _conv2d_transpose(g, op):
    _convolution(g, op, "ConvTranspose", output_padding=list(op.attrs["output_padding"]))


def _pool_attrs(a) -> dict:
    return {
        "kernel_shape": list(a["ksize"]),
        "strides": list(a["strides"]),
        "pads": _pads(a["paddings"]),
        "ceil_mode": int(bool(a["ceil_mode"])),
    }


def _pool_check(op, opset):
    if op.attrs.get("divisor"):
        return "average pooling with a fixed divisor"
    return None


@lowers("pool2d", check=_pool_check)
def _pool2d(g, op):
    a = op.attrs
    x = _nchw(g, g.x(op, 0), a["data_format"])
    if a["pooling_type"] == "max":
        y = g.node("MaxPool", [x], **_pool_attrs(a))
    else:
        include = 0 if a["exclusive"] else 1
        y = g.node("AveragePool", [x], count_include_pad=include, **_pool_attrs(a))
    _from_nchw(g, y, a["data_format"], g.out(0))


@lowers("max_pool2d_with_index")
def _max_pool_with_index(g, op):
    """ONNX numbers positions over the whole tensor; autostatic within one (n, c) plane."""
    a = op.attrs
    x = _nchw(g, g.x(op, 0), a["data_format"])
    y, index = g.node("MaxPool", [x], n_out=2, **_pool_attrs(a))
    shape = g.node("Shape", [x])
    plane = g.node("ReduceProd", [g.node("Slice", [shape, g.ints([2]), g.ints([4])])], keepdims=1)
    _from_nchw(g, y, a["data_format"], g.out(0))
    _from_nchw(g, g.node("Mod", [index, plane]), a["data_format"], g.out(1))


def _per_channel(g, v: str, rank: int, axis: int) -> str:
    """A [C] vector shaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return g.node("Reshape", [v, g.ints(shape)])


def _batch_norm_check(op, opset):
    return "batch norm in training mode (export in eval mode)" if op.attrs["training"] else None


@lowers("batch_norm", check=_batch_norm_check)
def _batch_norm(g, op):
    a, dt = op.attrs, op.outputs[0].dtype
    rank = len(op.inputs[0].shape)
    axis = a["axis"] % rank
    mean, var = g.x(op, 3), g.x(op, 4)
    factor = g.node(
        "Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.scalar(a["epsilon"], dt)])])]
    )
    if not g.is_none(op, 1):
        factor = g.node("Mul", [factor, g.x(op, 1)])
    centered = g.node("Sub", [g.x(op, 0), _per_channel(g, mean, rank, axis)])
    y = g.node("Mul", [centered, _per_channel(g, factor, rank, axis)])
    if not g.is_none(op, 2):
        y = g.node("Add", [y, _per_channel(g, g.x(op, 2), rank, axis)])
    g.node("Identity", [y], outputs=[g.out(0)])
    g.node("Identity", [mean], outputs=[g.out(1)])
    g.node("Identity", [var], outputs=[g.out(2)])


@lowers("layer_norm")
def _layer_norm(g, op):
    dt, rank = op.outputs[0].dtype, len(op.inputs[0].shape)
    axes = list(range(op.attrs["begin_norm_axis"], rank))
    x = g.x(op, 0)
    centered = g.node("Sub", [x, g.reduce("ReduceMean", x, axes, True)])
    var = g.reduce("ReduceMean", g.node("Mul", [centered, centered]), axes, True)
    std = g.node("Sqrt", [g.node("Add", [var, g.scalar(op.attrs["epsilon"], dt)])])
    y = g.node("Div", [centered, std])
    if not g.is_none(op, 1):
        y = g.node("Mul", [y, g.x(op, 1)])
    if not g.is_none(op, 2):
        y = g.node("Add", [y, g.x(op, 2)])
    g.node("Identity", [y], outputs=[g.out(0)])


@lowers("softmax", "log_softmax")
def _softmax(g, op):
    kind = "Softmax" if op.type == "softmax" else "LogSoftmax"
    g.node(kind, [g.x(op, 0)], outputs=[g.out(0)], axis=op.attrs["axis"])


@lowers("gelu")
def _gelu(g, op):
    dt = op.outputs[0].dtype
    x = g.x(op, 0)
    half_x = g.node("Mul", [x, g.scalar(0.5, dt)])
    if op.attrs["approximate"]:
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.scalar(0.044715, dt)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.scalar(math.sqrt(2 / math.pi), dt)])])
    else:
        t = g.node("Erf", [g.node("Mul", [x, g.scalar(math.sqrt(0.5), dt)])])
    g.node("Mul", [half_x, g.node("Add", [t, g.scalar(1.0, dt)])], outputs=[g.out(0)])


def _log1p_exp_neg_abs(g, x: str, dt) -> str:
    """``log(1 + exp(-|x|))``: the stable half of softplus (float32 and float64 alike)."""
    e = g.node("Exp", [g.node("Neg", [g.node("Abs", [x])])])
    return g.node("Log", [g.node("Add", [e, g.scalar(1, dt)])])


@lowers("softplus")
def _softplus(g, op):
    dt = op.outputs[0].dtype
    x = g.x(op, 0)
    beta = g.scalar(op.attrs["beta"], dt)
    z = g.node("Mul", [x, beta])
    soft = g.node("Add", [g.node("Max", [z, g.scalar(0, dt)]), _log1p_exp_neg_abs(g, z, dt)])
    linear = g.node("Greater", [z, g.scalar(op.attrs["threshold"], dt)])
    g.node("Where", [linear, x, g.node("Div", [soft, beta])], outputs=[g.out(0)])


@lowers("logsigmoid")
def _logsigmoid(g, op):
    dt = op.outputs[0].dtype
    x = g.x(op, 0)
    low = g.node("Min", [x, g.scalar(0, dt)])
    g.node("Sub", [low, _log1p_exp_neg_abs(g, x, dt)], outputs=[g.out(0)])


@lowers("separable_resample2d")
def _resample(g, op):
    """``hm @ x @ wm.T`` (interpolation as two small matrices, as the kernel computes it)."""
    a = op.attrs
    x = _nchw(g, g.x(op, 0), a["data_format"])
    hm, wm = g.x(op, 1), g.x(op, 2)
    if a["transpose"]:
        hm, wm = _transposed(g, hm, 2), _transposed(g, wm, 2)
    y = g.node("MatMul", [g.node("MatMul", [hm, x]), _transposed(g, wm, 2)])
    _from_nchw(g, y, a["data_format"], g.out(0))


def _hard_labels(g, op, x_index: int, label_index: int, ignore_index: int):
    """(label with the class axis, label with ignored entries at 0, ignored mask)."""
    rank = len(op.inputs[x_index].shape)
    axis = op.attrs["axis"] % rank
    label = g.x(op, label_index, "int64")
    if len(op.inputs[label_index].shape) < rank:
        label = g.unsqueeze(label, [axis])
    ignored = g.node("Equal", [label, g.scalar(ignore_index, "int64")])
    safe = g.node("Where", [ignored, g.scalar(0, "int64"), label])
    return axis, safe, ignored


@lowers("softmax_with_cross_entropy")
def _softmax_cross_entropy(g, op):
    a, dt = op.attrs, op.outputs[0].dtype
    axis = a["axis"] % len(op.inputs[0].shape)
    logp = g.node("LogSoftmax", [g.x(op, 0)], axis=axis)
    g.node("Exp", [logp], outputs=[g.out(0)])
    if a["soft_label"]:
        total = g.reduce("ReduceSum", g.node("Mul", [g.x(op, 1, dt), logp]), [axis], True)
        g.node("Neg", [total], outputs=[g.out(1)])
        return
    axis, safe, ignored = _hard_labels(g, op, 0, 1, a["ignore_index"])
    picked = g.node("GatherElements", [logp, safe], axis=axis)
    loss = g.node("Where", [ignored, g.scalar(0, dt), g.node("Neg", [picked])])
    g.node("Reshape", [loss, g.node("Shape", [g.x(op, 1)])], outputs=[g.out(1)])


@lowers("nll_loss")
def _nll_loss(g, op):
    """``-x[label] * weight[label]`` and that weight (0 where the label is ignored)."""
    dt = op.outputs[0].dtype
    axis, safe, ignored = _hard_labels(g, op, 0, 1, op.attrs["ignore_index"])
    picked = g.node("GatherElements", [g.x(op, 0), safe], axis=axis)
    weight = g.scalar(1, dt) if g.is_none(op, 2) else g.node("Gather", [g.x(op, 2), safe])
    weight = g.node("Where", [ignored, g.scalar(0, dt), weight])
    shape = g.node("Shape", [g.x(op, 1)])
    loss = g.node("Mul", [g.node("Neg", [picked]), weight])
    g.node("Reshape", [loss, shape], outputs=[g.out(0)])
    g.node(
        "Reshape",
        [g.node("Expand", [weight, g.node("Shape", [picked])]), shape],
        outputs=[g.out(1)],
    )


@lowers("bce_loss")
def _bce_loss(g, op):
    """``-(y log x + (1 - y) log(1 - x))``, each log clipped at -100 as the kernel does."""
    dt = op.outputs[0].dtype
    x, y = g.x(op, 0, dt), g.x(op, 1, dt)
    one = g.scalar(1, dt)

    def clipped_log(v):
        safe = g.node("Max", [v, g.scalar(1e-44, dt)])
        return g.node("Max", [g.node("Log", [safe]), g.scalar(-100, dt)])

    hit = g.node("Mul", [y, clipped_log(x)])
    miss = g.node("Mul", [g.node("Sub", [one, y]), clipped_log(g.node("Sub", [one, x]))])
    g.node("Neg", [g.node("Add", [hit, miss])], outputs=[g.out(0)])


@lowers("max_pool2d_index_gather")
def _max_pool_index_gather(g, op):
    """The values of ``x`` at the positions a ``max_pool2d_with_index`` mask holds."""
    fmt = op.attrs["data_format"]
    x, mask = _nchw(g, g.x(op, 0), fmt), _nchw(g, g.x(op, 1), fmt)
    flat_x = g.node("Reshape", [x, g.ints([0, 0, -1])])
    flat_mask = g.node("Reshape", [mask, g.ints([0, 0, -1])])
    picked = g.node("GatherElements", [flat_x, flat_mask], axis=2)
    y = g.node("Reshape", [picked, g.node("Shape", [mask])])
    _from_nchw(g, y, fmt, g.out(0))

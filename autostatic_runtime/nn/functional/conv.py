"""2-D convolution: ``conv2d`` and its input/filter gradient ops.

The kernel is an im2col built from strided slices (one per kernel position) and one batched
matmul per call; groups are a batch dim of that matmul. The two gradient ops are adjoint to
the forward, so their own gradients are convolutions again:

    conv2d(x, w)                 -> y
    conv2d_grad_input(g, w, x)   -> dx   (x only gives the shape)
    conv2d_grad_filter(g, x, w)  -> dw   (w only gives the shape)

Attributes: ``strides``, ``dilations`` (pairs), ``paddings`` (top, bottom, left, right),
``groups`` and ``data_format`` ('NCHW' or 'NHWC'; the filter is always [O, C/groups, KH, KW]).
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.autograd import needs_grad
from autostatic_runtime.errors import DTypeError, user_location
from autostatic_runtime.nn.functional._utils import (
    add_window,
    channel_last,
    from_nchw,
    ints,
    out_size,
    pad_hw,
    shape_error,
    spatial_padding,
    to_nchw,
    window,
)
from autostatic_runtime.ops import reduce as R
from autostatic_runtime.ops.registry import (
    Spec,
    autocasting,
    dtype_of,
    op,
    require_float,
    shape_of,
)

__all__ = ["conv2d"]

_OP = "conv2d"


# ---- geometry --------------------------------------------------------------------------------


def _nchw_shape(shape: tuple, data_format: str) -> tuple:
    return (shape[0], shape[3], shape[1], shape[2]) if data_format == "NHWC" else tuple(shape)


def _from_nchw_shape(shape: tuple, data_format: str) -> tuple:
    return (shape[0], shape[2], shape[3], shape[1]) if data_format == "NHWC" else tuple(shape)


def _conv_out_shape(
    x_shape, w_shape, strides, paddings, dilations, groups, data_format, op_name=_OP
) -> tuple:
    """Output shape of conv2d, or a ShapeError naming the shapes."""
    if len(x_shape) != 4:
        raise shape_error(
            op_name,
            f"expects a 4-D input ({data_format}), got shape "
            f"{list(x_shape)}; add a batch dim with unsqueeze(x, 0)",
        )
    if len(w_shape) != 4:
        raise shape_error(
            op_name,
            f"expects a 4-D filter [out_channels, in_channels/groups, "
            f"kh, kw], got shape {list(w_shape)}",
        )
    n, c, h, w = _nchw_shape(x_shape, data_format)
    o, cg, kh, kw = w_shape
    if c >= 0 and cg >= 0 and c != cg * groups:
        raise shape_error(
            op_name,
            f"input has {c} channels but the filter {list(w_shape)} with "
            f"groups={groups} expects {cg * groups} (input shape "
            f"{list(x_shape)}, data_format {data_format})",
        )
    if o >= 0 and o % groups:
        raise shape_error(op_name, f"out_channels {o} is not divisible by groups={groups}")
    pt, pb, pl, pr = paddings
    ekh = dilations[0] * (kh - 1) + 1
    ekw = dilations[1] * (kw - 1) + 1
    oh = out_size(h, ekh, pt, pb, strides[0])
    ow = out_size(w, ekw, pl, pr, strides[1])
    if oh == 0 or ow == 0:
        raise shape_error(
            op_name,
            f"the filter {list(w_shape)} (dilation {list(dilations)}) is "
            f"larger than the padded input {list(x_shape)}",
        )
    return _from_nchw_shape((n, o, oh, ow), data_format)


def _positions(kh: int, kw: int, dilations: tuple):
    for i in range(kh):
        for j in range(kw):
            yield i * dilations[0], j * dilations[1]


# ---- kernels ---------------------------------------------------------------------------------


def _im2col(xp, x, kshape, strides, paddings, dilations, groups):
    """Columns [N, G, C/G*KH*KW, OH*OW] of ``x`` (NCHW) and the output size (OH, OW)."""
    n, c, h, w = x.shape
    kh, kw = kshape
    pt, pb, pl, pr = paddings
    oh = out_size(h, dilations[0] * (kh - 1) + 1, pt, pb, strides[0])
    ow = out_size(w, dilations[1] * (kw - 1) + 1, pl, pr, strides[1])
    xpad = pad_hw(xp, x, paddings)
    parts = [window(xpad, oh, ow, a, b, *strides) for a, b in _positions(kh, kw, dilations)]
    cols = xp.expand_dims(parts[0], axis=2) if len(parts) == 1 else xp.stack(parts, axis=2)
    return xp.reshape(cols, (n, groups, (c // groups) * kh * kw, oh * ow)), (oh, ow)


def _col2im(xp, dcols, x_shape, kshape, out_hw, strides, paddings, dilations):
    """The adjoint of ``_im2col``: sum columns [N, C, KH*KW, OH, OW] back into an NCHW image."""
    n, c, h, w = x_shape
    pt, pb, pl, pr = paddings
    dx = xp.zeros((n, c, h + pt + pb, w + pl + pr), dtype=dcols.dtype)
    for k, (a, b) in enumerate(_positions(kshape[0], kshape[1], dilations)):
        dx = add_window(xp, dx, dcols[:, :, k, :, :], a, b, *strides)
    return dx[:, :, pt : pt + h, pl : pl + w]


MEMO_BYTES = 256 << 20  # columns a compiled call keeps for the filter gradient, at most


def _columns(xp, x, kshape, strides, paddings, dilations, groups, memo, last: bool):
    """``_im2col``, shared within one compiled call through ``memo`` (see ``OpDef.memo``):
    the forward keeps the columns of its input (up to ``MEMO_BYTES`` per call) and the
    filter gradient of the same input array takes them instead of building them again
    (``last``: it is their last use)."""
    if memo is None:
        return _im2col(xp, x, kshape, strides, paddings, dilations, groups)
    key = ("im2col", id(x), kshape, strides, paddings, dilations, groups)
    found = memo.pop(key, None) if last else memo.get(key)
    if found is not None and found[0] is x:
        if last:
            memo["im2col bytes"] -= found[1][0].nbytes
        return found[1]
    made = _im2col(xp, x, kshape, strides, paddings, dilations, groups)
    used = memo.get("im2col bytes", 0)
    if not last and used + made[0].nbytes <= MEMO_BYTES:
        memo[key] = (x, made)
        memo["im2col bytes"] = used + made[0].nbytes
    return made


def _forward(xp, x, w, strides, paddings, dilations, groups, memo=None):
    o, cg, kh, kw = w.shape
    cols, (oh, ow) = _columns(xp, x, (kh, kw), strides, paddings, dilations, groups, memo, False)
    wm = xp.reshape(w, (groups, o // groups, cg * kh * kw))
    out = xp.matmul(wm, cols)  # [N, G, O/G, OH*OW]
    return xp.reshape(out, (x.shape[0], o, oh, ow))


def _grad_input(xp, g, w, x_shape, strides, paddings, dilations, groups):
    n, o, oh, ow = g.shape
    _, cg, kh, kw = w.shape
    gm = xp.reshape(g, (n, groups, o // groups, oh * ow))
    wm = xp.reshape(w, (groups, o // groups, cg * kh * kw))
    dcols = xp.matmul(xp.matrix_transpose(wm), gm)  # [N, G, CG*K, OH*OW]
    dcols = xp.reshape(dcols, (n, cg * groups, kh * kw, oh, ow))
    return _col2im(xp, dcols, x_shape, (kh, kw), (oh, ow), strides, paddings, dilations)


def _grad_filter(xp, g, x, w_shape, strides, paddings, dilations, groups, memo=None):
    o, cg, kh, kw = w_shape
    cols, (oh, ow) = _columns(xp, x, (kh, kw), strides, paddings, dilations, groups, memo, True)
    gm = xp.reshape(g, (g.shape[0], groups, o // groups, oh * ow))
    dw = xp.sum(xp.matmul(gm, xp.matrix_transpose(cols)), axis=0)  # batched: faster than tensordot
    return xp.reshape(dw, (o, cg, kh, kw))


# ---- ops -------------------------------------------------------------------------------------


def _geometry(attrs: dict) -> tuple:
    return attrs["strides"], attrs["paddings"], attrs["dilations"], attrs["groups"]


@op("conv2d")
class Conv2D:
    """2-D convolution (cross-correlation) of ``x`` with filter ``w``, plus optional ``bias``."""

    fresh = True
    memo = True

    def infer(x, w, bias, strides, paddings, dilations, groups, data_format):
        shape = _conv_out_shape(
            shape_of(x), shape_of(w), strides, paddings, dilations, groups, data_format
        )
        return Spec(shape, dtype_of(x))

    def kernel(xp, x, w, bias, strides, paddings, dilations, groups, data_format, memo=None):
        last = data_format == "NHWC"
        out = _forward(xp, to_nchw(xp, x, last), w, strides, paddings, dilations, groups, memo)
        if bias is not None:
            out = out + xp.reshape(bias, (1, -1, 1, 1))
        return from_nchw(xp, out, last)

    def grad(g, out, x, w, bias, **attrs):
        dx = Conv2DGradInput(g, w, x, **attrs) if needs_grad(0) else None  # not for data
        dw = Conv2DGradFilter(g, x, w, **attrs) if needs_grad(1) else None
        db = None
        if bias is not None and needs_grad(2):
            db = R.sum(g, axis=[0, 1, 2] if attrs["data_format"] == "NHWC" else [0, 2, 3])
        return dx, dw, db


@op("conv2d_grad_input")
class Conv2DGradInput:
    """The gradient of conv2d w.r.t. its input: ``g`` correlated back through ``w``."""

    fresh = True

    def infer(g, w, x, strides, paddings, dilations, groups, data_format):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, w, x, strides, paddings, dilations, groups, data_format):
        last = data_format == "NHWC"
        x_shape = _nchw_shape(tuple(x.shape), data_format)
        dx = _grad_input(xp, to_nchw(xp, g, last), w, x_shape, strides, paddings, dilations, groups)
        return from_nchw(xp, dx, last)

    def grad(gg, out, g, w, x, **attrs):
        return (Conv2D(gg, w, None, **attrs), Conv2DGradFilter(g, gg, w, **attrs), None)


@op("conv2d_grad_filter")
class Conv2DGradFilter:
    """The gradient of conv2d w.r.t. its filter: ``g`` contracted with the input's columns."""

    fresh = True
    memo = True

    def infer(g, x, w, strides, paddings, dilations, groups, data_format):
        return Spec(shape_of(w), dtype_of(g))

    def kernel(xp, g, x, w, strides, paddings, dilations, groups, data_format, memo=None):
        last = data_format == "NHWC"
        return _grad_filter(
            xp,
            to_nchw(xp, g, last),
            to_nchw(xp, x, last),
            tuple(w.shape),
            strides,
            paddings,
            dilations,
            groups,
            memo,
        )

    def grad(gw, out, g, x, w, **attrs):
        return (Conv2D(x, gw, None, **attrs), Conv2DGradInput(g, gw, x, **attrs), None)


# ---- public function -------------------------------------------------------------------------


def checked_geometry(op_name: str, x: Any, weight: Any, stride: Any, dilation: Any,
                     groups: Any) -> tuple:  # fmt: skip
    """``(strides, dilations, groups)`` of a 2-D convolution, after checking the dtypes of
    ``x`` and ``weight`` (float, alike) and that the numbers are positive."""
    require_float(op_name, x, weight)
    if x.dtype != weight.dtype and not autocasting():  # auto_cast casts both to one dtype
        raise DTypeError(
            op_name,
            f"input dtype {x.dtype} and filter dtype {weight.dtype} differ; "
            f"cast one with .astype()",
            user_location(),
        )
    strides = ints(stride, 2, op_name, "stride")
    dilations = ints(dilation, 2, op_name, "dilation")
    groups = int(groups)
    if groups < 1 or min(strides) < 1 or min(dilations) < 1:
        raise shape_error(
            op_name,
            f"stride {list(strides)}, dilation {list(dilations)} and groups "
            f"{groups} must be positive",
        )
    return strides, dilations, groups


def conv2d(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """2-D convolution of ``x`` (NCHW or NHWC) with ``weight`` [O, C/groups, KH, KW].

    ``padding``: an int, [ph, pw], [top, bottom, left, right], 4 pairs, 'SAME' or 'VALID'
    ('SAME' uses dilation 1, as Paddle does). ``bias`` has O entries.
    """
    last = channel_last(data_format, _OP)
    strides, dilations, groups = checked_geometry(_OP, x, weight, stride, dilation, groups)
    x_shape, w_shape = tuple(x.shape), tuple(weight.shape)
    if len(x_shape) != 4 or len(w_shape) != 4:
        _conv_out_shape(x_shape, w_shape, strides, (0,) * 4, dilations, groups, data_format)
    hw = (x_shape[1], x_shape[2]) if last else (x_shape[2], x_shape[3])
    paddings, same = spatial_padding(padding, hw, w_shape[2:], strides, _OP, last)
    if same:
        dilations = (1, 1)
    attrs = dict(
        strides=strides,
        paddings=paddings,
        dilations=dilations,
        groups=groups,
        data_format="NHWC" if last else "NCHW",
    )
    _conv_out_shape(x_shape, w_shape, **attrs)
    if bias is not None and tuple(bias.shape) not in ((w_shape[0],), (-1,)):
        raise shape_error(
            _OP,
            f"bias shape {list(bias.shape)} does not match out_channels "
            f"{w_shape[0]} of the filter {list(w_shape)}",
        )
    return Conv2D(x, weight, bias, **attrs)

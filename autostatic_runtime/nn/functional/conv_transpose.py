"""Transposed convolutions: ``conv2d_transpose`` (one op), ``conv1d_transpose`` and
``conv3d_transpose`` (made of it).

A transposed convolution is the adjoint of ``conv2d`` with the same filter and geometry: it
spreads each input pixel over a window of the output (a "deconvolution", the upsampling of
GANs and segmentation decoders). So its kernel is conv2d's input gradient and its own
gradients are a convolution and conv2d's filter gradient:

    conv2d_transpose(x, w)          -> y     w: [C_in, C_out/groups, KH, KW]
    d/dx = conv2d(g, w)                      (the forward convolution of the output gradient)
    d/dw = conv2d_grad_filter(x, g, w)       (x plays the convolution's output gradient)

The output size per spatial dim is ``(in - 1) * stride - pad_before - pad_after +
dilation * (k - 1) + 1 + output_padding``; ``output_padding`` (< stride, or < dilation) picks
one of the sizes a strided convolution maps onto the same input size.

    conv1d_transpose(x[N, C, L], w[C, O/g, K]) = squeeze(conv2d_transpose(x[N, C, 1, L],
                                                                          w[C, O/g, 1, K]))
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.autograd import needs_grad
from autostatic_runtime.nn.functional._utils import (
    channel_last,
    from_nchw,
    ints,
    shape_error,
    spatial_padding,
    to_nchw,
)
from autostatic_runtime.nn.functional.conv import (
    Conv2D,
    Conv2DGradFilter,
    _from_nchw_shape,
    _grad_input,
    _nchw_shape,
    checked_geometry,
)
from autostatic_runtime.ops import reduce as R
from autostatic_runtime.ops.registry import Spec, dtype_of, op, shape_of

__all__ = ["conv1d_transpose", "conv2d_transpose", "conv3d_transpose"]

_OP = "conv2d_transpose"


def _transpose_out_shape(x_shape, w_shape, strides, paddings, dilations, groups,
                         output_padding, data_format) -> tuple:  # fmt: skip
    """Output shape of conv2d_transpose, or a ShapeError naming the shapes."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise shape_error(
            _OP,
            f"expects a 4-D input ({data_format}) and a 4-D filter [in_channels, "
            f"out_channels/groups, kh, kw], got shapes {list(x_shape)} and {list(w_shape)}",
        )
    n, c, h, w = _nchw_shape(x_shape, data_format)
    cin, og, kh, kw = w_shape
    if c >= 0 and cin >= 0 and c != cin:
        raise shape_error(
            _OP,
            f"input has {c} channels but the filter {list(w_shape)} takes {cin} (its first "
            f"dim; input shape {list(x_shape)}, data_format {data_format})",
        )
    if cin >= 0 and cin % groups:
        raise shape_error(_OP, f"in_channels {cin} is not divisible by groups={groups}")
    sizes = []
    for size, k, s, d, p0, p1, extra in zip(
        (h, w), (kh, kw), strides, dilations, paddings[0::2], paddings[1::2], output_padding
    ):
        if size < 0:
            sizes.append(-1)
            continue
        out = (size - 1) * s - p0 - p1 + d * (k - 1) + 1 + extra
        if out <= 0:
            raise shape_error(
                _OP,
                f"the padding {list(paddings)} leaves no output for input {list(x_shape)} "
                f"and filter {list(w_shape)}",
            )
        sizes.append(out)
    return _from_nchw_shape((n, og * groups, sizes[0], sizes[1]), data_format)


@op("conv2d_transpose")
class Conv2DTranspose:
    """Transposed 2-D convolution of ``x`` with filter ``w`` [C_in, C_out/groups, KH, KW],
    plus optional ``bias`` (C_out entries)."""

    fresh = True

    def infer(x, w, bias, strides, paddings, dilations, groups, output_padding, data_format):
        shape = _transpose_out_shape(shape_of(x), shape_of(w), strides, paddings, dilations,
                                     groups, output_padding, data_format)  # fmt: skip
        return Spec(shape, dtype_of(x))

    def kernel(xp, x, w, bias, strides, paddings, dilations, groups, output_padding,
               data_format):  # fmt: skip
        last = data_format == "NHWC"
        x = to_nchw(xp, x, last)
        out_shape = _transpose_out_shape(tuple(x.shape), tuple(w.shape), strides, paddings,
                                         dilations, groups, output_padding, "NCHW")  # fmt: skip
        out = _grad_input(xp, x, w, out_shape, strides, paddings, dilations, groups)
        if bias is not None:
            out = out + xp.reshape(bias, (1, -1, 1, 1))
        return from_nchw(xp, out, last)

    def grad(g, out, x, w, bias, output_padding, **attrs):
        dx = Conv2D(g, w, None, **attrs) if needs_grad(0) else None
        dw = Conv2DGradFilter(x, g, w, **attrs) if needs_grad(1) else None
        db = None
        if bias is not None and needs_grad(2):
            db = R.sum(g, axis=[0, 1, 2] if attrs["data_format"] == "NHWC" else [0, 2, 3])
        return dx, dw, db


def _output_padding(output_padding, output_size, x_sizes, w_sizes, strides, paddings,
                    dilations, op=_OP):
    """``output_padding`` per spatial dim, from ``output_size`` when given (Paddle's rule:
    the size must lie in [computed, computed + stride))."""
    n = len(x_sizes)
    extra = ints(output_padding, n, op, "output_padding")
    if output_size is not None:
        sizes = ints(output_size, n, op, "output_size")
        if any(extra):
            raise shape_error(op, "give output_padding or output_size, not both")
        extra = []
        for size, want, k, s, d, p0, p1 in zip(x_sizes, sizes, w_sizes, strides, dilations,
                                               paddings[0::2], paddings[1::2]):  # fmt: skip
            least = (size - 1) * s - p0 - p1 + d * (k - 1) + 1 if size >= 0 else want
            if not least <= want < least + s:
                raise shape_error(
                    op,
                    f"output_size {list(sizes)} cannot be reached: along this dim the "
                    f"output has {least} to {least + s - 1} entries",
                )
            extra.append(want - least)
    for e, s, d in zip(extra, strides, dilations):
        if e < 0 or (e >= s and e >= d):
            raise shape_error(
                op,
                f"output_padding {list(extra)} must be smaller than the stride "
                f"{list(strides)} or the dilation {list(dilations)}",
            )
    return tuple(int(e) for e in extra)


def conv2d_transpose(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
    data_format: str = "NCHW",
    output_size: Any = None,
    name: str | None = None,
):
    """Transposed 2-D convolution of ``x`` (NCHW or NHWC) with ``weight`` [C_in,
    C_out/groups, KH, KW] (Paddle's ``F.conv2d_transpose``).

    ``padding`` takes conv2d's forms (an int, 2 or 4 ints, 4 pairs, 'SAME', 'VALID');
    ``output_padding`` or ``output_size`` choose among the output sizes a stride allows.
    """
    last = channel_last(data_format, _OP)
    strides, dilations, groups = checked_geometry(_OP, x, weight, stride, dilation, groups)
    x_shape, w_shape = tuple(x.shape), tuple(weight.shape)
    if len(x_shape) != 4 or len(w_shape) != 4:
        _transpose_out_shape(x_shape, w_shape, strides, (0,) * 4, dilations, groups, (0, 0),
                             data_format)  # fmt: skip
    hw = (x_shape[1], x_shape[2]) if last else (x_shape[2], x_shape[3])
    paddings, same = spatial_padding(padding, hw, w_shape[2:], strides, _OP, last)
    if same:
        dilations = (1, 1)
    extra = _output_padding(output_padding, output_size, hw, w_shape[2:], strides, paddings,
                            dilations)  # fmt: skip
    attrs = dict(
        strides=strides,
        paddings=paddings,
        dilations=dilations,
        groups=groups,
        output_padding=extra,
        data_format="NHWC" if last else "NCHW",
    )
    _transpose_out_shape(x_shape, w_shape, **attrs)
    if bias is not None and tuple(bias.shape) not in ((w_shape[1] * groups,), (-1,)):
        raise shape_error(
            _OP,
            f"bias shape {list(bias.shape)} does not match out_channels "
            f"{w_shape[1] * groups} of the filter {list(w_shape)} with groups={groups}",
        )
    return Conv2DTranspose(x, weight, bias, **attrs)


def conv1d_transpose(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
    output_size: Any = None,
    data_format: str = "NCL",
    name: str | None = None,
):
    """Transposed 1-D convolution of ``x`` [N, C, L] (or NLC) with ``weight`` [C, O/groups,
    K] (Paddle's ``F.conv1d_transpose``): ``conv2d_transpose`` over a unit height."""
    from autostatic_runtime.ops.manipulation import squeeze, unsqueeze

    if data_format not in ("NCL", "NLC"):
        raise ValueError(
            f"conv1d_transpose: data_format must be 'NCL' or 'NLC', got {data_format!r}"
        )
    if len(x.shape) != 3 or len(weight.shape) != 3:
        raise shape_error(
            "conv1d_transpose",
            f"expects a 3-D input and a 3-D filter [in, out/groups, k], got shapes "
            f"{list(x.shape)} and {list(weight.shape)}",
        )
    last = data_format == "NLC"
    pads = padding
    if not isinstance(padding, str):
        flat = ints(padding, 1, "conv1d_transpose", "padding") if isinstance(
            padding, int) or len(padding) == 1 else tuple(int(p) for p in padding)  # fmt: skip
        pads = [0, 0, flat[0], flat[-1]]
    x4 = unsqueeze(x, 1 if last else 2)
    out = conv2d_transpose(
        x4,
        unsqueeze(weight, 2),
        bias,
        stride=(1, ints(stride, 1, "conv1d_transpose", "stride")[0]),
        padding=pads,
        output_padding=(0, ints(output_padding, 1, "conv1d_transpose", "output_padding")[0]),
        groups=groups,
        dilation=(1, ints(dilation, 1, "conv1d_transpose", "dilation")[0]),
        data_format="NHWC" if last else "NCHW",
        output_size=None if output_size is None else (
            1, ints(output_size, 1, "conv1d_transpose", "output_size")[0]),  # fmt: skip
    )
    return squeeze(out, 1 if last else 2)


def conv3d_transpose(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
    data_format: str = "NCDHW",
    output_size: Any = None,
    name: str | None = None,
):
    """Transposed 3-D convolution of ``x`` [N, C, D, H, W] (or NDHWC) with ``weight`` [C,
    O/groups, KD, KH, KW] (Paddle's ``F.conv3d_transpose``): one ``conv2d_transpose`` per
    depth position of the filter over every input depth slice, each placed at its depths
    (input depth ``i`` and filter depth ``k`` reach output depth ``i * stride + k *
    dilation``) and summed; then the depth padding is cropped. ``padding``: an int, 3 ints,
    6 (front, back, top, bottom, left, right), 'SAME' or 'VALID'; ``output_padding`` or
    ``output_size`` choose among the output sizes a stride allows."""
    from autostatic_runtime.ops import manipulation as M

    op = "conv3d_transpose"
    if data_format not in ("NCDHW", "NDHWC"):
        raise ValueError(f"{op}: data_format must be 'NCDHW' or 'NDHWC', got {data_format!r}")
    if len(x.shape) != 5 or len(weight.shape) != 5:
        raise shape_error(
            op,
            f"expects a 5-D input and a 5-D filter [in, out/groups, kd, kh, kw], got shapes "
            f"{list(x.shape)} and {list(weight.shape)}",
        )
    last = data_format == "NDHWC"
    sizes = tuple(x.shape[1:4] if last else x.shape[2:5])
    strides = ints(stride, 3, op, "stride")
    dilations = ints(dilation, 3, op, "dilation")
    if isinstance(padding, str):  # 'SAME' (dilation 1, as Paddle) or 'VALID'
        pads, same = spatial_padding(padding, sizes, tuple(weight.shape[2:]), strides, op, last)
        pads = list(pads)
        if same:
            dilations = (1, 1, 1)
    else:
        pads = [int(p) for p in ([padding] if isinstance(padding, int) else padding)]
        if len(pads) == 1:
            pads = pads * 6
        elif len(pads) == 3:
            pads = [pads[0], pads[0], pads[1], pads[1], pads[2], pads[2]]
        if len(pads) != 6 or min(pads) < 0:
            raise ValueError(
                f"{op}: padding must be an int, 3 or 6 non-negative ints, 'SAME' or 'VALID', "
                f"got {padding}"
            )
    sd, sh, sw = strides
    dd, dh, dw = dilations
    od, oh, ow = _output_padding(output_padding, output_size, sizes, tuple(weight.shape[2:]),
                                 strides, pads, dilations, op)  # fmt: skip
    if last:  # to NCDHW
        x = M.transpose(x, [0, 4, 1, 2, 3])
    n, c, depth, h, w = x.shape
    kd = weight.shape[2]
    if depth < 0:
        raise ValueError(f"{op}: the input depth must be known while the program is built")
    # every depth slice as an image of the batch: [N*D, C, H, W]
    slices = M.reshape(M.transpose(x, [0, 2, 1, 3, 4]), [-1, c, h, w])
    full = (depth - 1) * sd + (kd - 1) * dd + 1 + od
    total = None
    for k in range(kd):
        y = conv2d_transpose(slices, weight[:, :, k], None, (sh, sw), pads[2:],
                             (oh, ow), groups, (dh, dw))  # fmt: skip
        o, hh, ww = y.shape[1], y.shape[2], y.shape[3]
        y = M.reshape(y, [-1, depth, o, hh, ww])  # [N, D, O, H', W']
        if sd > 1:  # each input depth, then sd - 1 zero depths
            zeros = y * 0.0
            y = M.stack([y] + [zeros] * (sd - 1), axis=2)  # [N, D, sd, O, H', W']
            y = M.reshape(y, [-1, depth * sd, o, hh, ww])[:, : (depth - 1) * sd + 1]
        before, after = k * dd, full - k * dd - ((depth - 1) * sd + 1)
        y = _pad_depth(y, before, after)
        total = y if total is None else total + y
    out = total[:, pads[0] : full - pads[1]]  # crop the depth padding
    out = M.transpose(out, [0, 2, 1, 3, 4])  # [N, O, D', H', W']
    if bias is not None:
        out = out + M.reshape(bias, [1, -1, 1, 1, 1])
    return M.transpose(out, [0, 2, 3, 4, 1]) if last else out


def _pad_depth(y: Any, before: int, after: int) -> Any:
    """``y`` [N, D, ...] with ``before`` and ``after`` zero depths around it."""
    from autostatic_runtime.nn.functional.common import pad

    if not (before or after):
        return y
    return pad(y, [0, 0, before, after] + [0, 0] * (y.ndim - 2))

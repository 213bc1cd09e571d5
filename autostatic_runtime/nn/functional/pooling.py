"""2-D pooling: max/avg pooling over strided windows, adaptive pooling.

Kernels pad the input (with -inf for max, 0 for avg) up to the extent the windows need
(``ceil_mode`` may reach past the padding) and reduce over the stacked window slices.
Paddle's conventions: avg pooling with ``exclusive=True`` divides by the number of real
(unpadded) elements in the window, else by KH*KW; max pooling keeps the first maximum, and
its mask holds flat indices ``h * W + w`` into each input plane.

Ops (attributes: ``ksize``, ``strides``, ``paddings`` (top, bottom, left, right),
``ceil_mode``, ``data_format``):
    pool2d(x)                               avg or max; adjoint of avg is pool2d_grad
    pool2d_grad(g, x)                       avg backward (x gives the shape)
    max_pool2d_with_index(x) -> out, mask   mask is int64
    max_pool2d_index_grad(g, mask, x)       scatter ``g`` to the mask positions
    max_pool2d_index_gather(gx, mask)       its adjoint: read ``gx`` at the mask positions
    separable_resample2d(x, hm, wm)         ``hm @ x @ wm^T`` per plane (adaptive avg pooling,
                                            interpolate)

``max_pool2d`` runs max_pool2d_with_index when a gradient will be needed (the mask serves the
backward) and the cheaper pool2d otherwise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.nn.functional._utils import (
    add_window,
    channel_last,
    from_nchw,
    ints,
    op_error,
    out_size,
    pad_hw,
    set_window,
    shape_error,
    spatial_padding,
    to_nchw,
    window,
)
from autostatic_runtime.ops.registry import Spec, dtype_of, op, shape_of

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d"]


# ---- geometry --------------------------------------------------------------------------------


def _pool_out_shape(x_shape, ksize, strides, paddings, ceil_mode, data_format, op_name):
    if len(x_shape) != 4:
        raise shape_error(
            op_name, f"expects a 4-D input ({data_format}), got shape {list(x_shape)}"
        )
    last = data_format == "NHWC"
    n, c, h, w = (x_shape[0], x_shape[3], x_shape[1], x_shape[2]) if last else x_shape
    pt, pb, pl, pr = paddings
    oh = out_size(h, ksize[0], pt, pb, strides[0], ceil_mode)
    ow = out_size(w, ksize[1], pl, pr, strides[1], ceil_mode)
    if oh == 0 or ow == 0:
        raise shape_error(
            op_name,
            f"kernel size {list(ksize)} is larger than the padded input "
            f"{list(x_shape)} (paddings {list(paddings)})",
        )
    return (n, oh, ow, c) if last else (n, c, oh, ow)


def _extent(h, w, ksize, strides, paddings, ceil_mode):
    """(OH, OW) and the padding (top, bottom, left, right) covering every window."""
    pt, pb, pl, pr = paddings
    oh = out_size(h, ksize[0], pt, pb, strides[0], ceil_mode)
    ow = out_size(w, ksize[1], pl, pr, strides[1], ceil_mode)
    eb = max((oh - 1) * strides[0] + ksize[0] - h - pt, 0)
    er = max((ow - 1) * strides[1] + ksize[1] - w - pl, 0)
    return (oh, ow), (pt, eb, pl, er)


def _offsets(ksize):
    return [(a, b) for a in range(ksize[0]) for b in range(ksize[1])]


def _windows(xp, x, ksize, strides, paddings, ceil_mode, value):
    """Stacked windows [N, C, K, OH, OW] of ``x`` (NCHW) padded with ``value``."""
    (oh, ow), full = _extent(x.shape[2], x.shape[3], ksize, strides, paddings, ceil_mode)
    xpad = pad_hw(xp, x, full, value)
    parts = [window(xpad, oh, ow, a, b, *strides) for a, b in _offsets(ksize)]
    return xp.stack(parts, axis=2), full


def _avg_divisor(xp, h, w, ksize, strides, paddings, oh, ow, exclusive, dtype):
    """Per-window divisor [OH, OW]: real element counts (exclusive) or KH*KW."""
    if not exclusive:
        return float(ksize[0] * ksize[1])

    def counts(size, k, s, p0, n):
        out = []
        for i in range(n):
            start = i * s - p0
            out.append(max(min(start + k, size) - max(start, 0), 1))
        return out

    ch = counts(h, ksize[0], strides[0], paddings[0], oh)
    cw = counts(w, ksize[1], strides[1], paddings[2], ow)
    rows = xp.reshape(xp.asarray(ch, dtype=dtype), (oh, 1))
    return rows * xp.reshape(xp.asarray(cw, dtype=dtype), (1, ow))


_MAX_CODED = 16  # window sizes whose maxima are found by a table of bits (else argmax)
_TABLES: dict = {}


def _first_bit_table(xp, k: int):
    """For every k-bit code (offset i at bit k-1-i), the first offset whose bit is set (0
    for none: a window of NaN), as int64 on ``xp``'s device."""
    key = (id(xp), k)
    table = _TABLES.get(key)
    if table is None:
        codes = np.arange(1 << k)
        first = np.where(codes > 0, k - 1 - np.floor(np.log2(np.maximum(codes, 1))), 0)
        table = _TABLES[key] = xp.asarray(first.astype(np.int64))
    return table


def _max_pool_argmax(xp, parts, w, strides, paddings, oh, ow, offsets, last):
    """Max pooling of a large window (more than ``_MAX_CODED`` cells): stacked windows,
    argmax."""
    wins = xp.stack(parts, axis=2)
    k = xp.argmax(wins, axis=2)
    steps = xp.asarray([a * w + b for a, b in offsets], dtype=xp.int64)
    base = _offset_position(xp, w, strides, paddings, oh, ow, 0, 0)
    mask = base + xp.reshape(xp.take(steps, xp.reshape(k, (-1,))), k.shape)
    return from_nchw(xp, xp.max(wins, axis=2), last), from_nchw(xp, mask, last)


def _offset_position(xp, w, strides, paddings, oh, ow, a, b, h=None):
    """Flat input index ``row * W + col`` of window offset (a, b) per output cell, [OH, OW]
    (int64). With the height ``h``, -1 where the cell is padding (else a padded cell's index
    may be a real cell's: the backward must not take it for one)."""
    rows = xp.arange(oh, dtype=xp.int64) * strides[0] + (a - paddings[0])
    cols = xp.arange(ow, dtype=xp.int64) * strides[1] + (b - paddings[2])
    rows, cols = xp.reshape(rows, (oh, 1)), xp.reshape(cols, (1, ow))
    pos = rows * w + cols
    if h is not None:
        inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
        pos = xp.where(inside, pos, xp.asarray(-1, dtype=xp.int64))
    return pos


def _flat_positions(xp, h, w, ksize, strides, paddings, oh, ow, a, b):
    """Flat input index ``row * W + col`` of window offset (a, b) per output cell (-1 outside)."""
    rows = [i * strides[0] - paddings[0] + a for i in range(oh)]
    cols = [j * strides[1] - paddings[2] + b for j in range(ow)]
    idx = [[r * w + c if 0 <= r < h and 0 <= c < w else -1 for c in cols] for r in rows]
    return xp.asarray(idx, dtype=xp.int64)


# ---- ops -------------------------------------------------------------------------------------


def _pool_spec(x, ksize, strides, paddings, ceil_mode, data_format, **rest):
    shape = _pool_out_shape(shape_of(x), ksize, strides, paddings, ceil_mode, data_format, "pool2d")
    return Spec(shape, dtype_of(x))


@op("pool2d")
class Pool2D:
    """Average (``pooling_type='avg'``) or max pooling over 2-D windows."""

    infer = _pool_spec

    def kernel(
        xp, x, pooling_type, ksize, strides, paddings, ceil_mode, exclusive, divisor, data_format
    ):
        last = data_format == "NHWC"
        x = to_nchw(xp, x, last)
        if pooling_type == "max":  # pairwise over the strided views: no stacked copy
            (oh, ow), full = _extent(x.shape[2], x.shape[3], ksize, strides, paddings, ceil_mode)
            xpad = pad_hw(xp, x, full, -math.inf)
            parts = [window(xpad, oh, ow, a, b, *strides) for a, b in _offsets(ksize)]
            out = parts[0] if len(parts) > 1 else xp.asarray(parts[0], copy=True)
            for part in parts[1:]:
                out = xp.maximum(out, part)
            return from_nchw(xp, out, last)
        wins, _ = _windows(xp, x, ksize, strides, paddings, ceil_mode, 0.0)
        total = xp.sum(wins, axis=2)
        oh, ow = total.shape[2], total.shape[3]
        d = divisor or _avg_divisor(
            xp, x.shape[2], x.shape[3], ksize, strides, paddings, oh, ow, exclusive, x.dtype
        )
        return from_nchw(xp, total / d, last)

    def grad(g, out, x, pooling_type, **attrs):
        if pooling_type == "max":
            mask = MaxPool2DWithIndex(x, **_index_attrs(attrs))[1]
            return MaxPool2DIndexGrad(g, mask, x, **_index_attrs(attrs))
        return Pool2DGrad(g, x, **attrs)


def _index_attrs(attrs: dict) -> dict:
    keep = ("ksize", "strides", "paddings", "ceil_mode", "data_format")
    return {k: attrs[k] for k in keep}


@op("pool2d_grad")
class Pool2DGrad:
    """The backward of average pooling: each window spreads ``g / divisor`` over its cells."""

    fresh = True

    def infer(g, x, **attrs):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, ksize, strides, paddings, ceil_mode, exclusive, divisor, data_format):
        last = data_format == "NHWC"
        g = to_nchw(xp, g, last)
        n, c, h, w = to_nchw(xp, x, last).shape
        oh, ow = g.shape[2], g.shape[3]
        (_, _), full = _extent(h, w, ksize, strides, paddings, ceil_mode)
        d = divisor or _avg_divisor(xp, h, w, ksize, strides, paddings, oh, ow, exclusive, g.dtype)
        share = g / d
        dx = xp.zeros((n, c, h + full[0] + full[1], w + full[2] + full[3]), dtype=g.dtype)
        for a, b in _offsets(ksize):
            dx = add_window(xp, dx, share, a, b, *strides)
        return from_nchw(xp, dx[:, :, full[0] : full[0] + h, full[2] : full[2] + w], last)

    def grad(gg, out, g, x, **attrs):
        return Pool2D(gg, pooling_type="avg", **attrs), None


@op("max_pool2d_with_index")
class MaxPool2DWithIndex:
    """Max pooling that also returns the flat index (``h * W + w``) of each maximum."""

    fresh = True

    multi_output = True
    nondiff_outputs = (1,)

    def infer(x, **attrs):
        spec = _pool_spec(x, **attrs)
        return spec, Spec(spec.shape, dtypes.int64)

    def kernel(xp, x, ksize, strides, paddings, ceil_mode, data_format):
        last = data_format == "NHWC"
        x = to_nchw(xp, x, last)
        h, w = x.shape[2], x.shape[3]
        (oh, ow), full = _extent(h, w, ksize, strides, paddings, ceil_mode)
        xpad = pad_hw(xp, x, full, -math.inf)
        offsets = _offsets(ksize)
        parts = [window(xpad, oh, ow, a, b, *strides) for a, b in offsets]
        if len(parts) > _MAX_CODED:
            return _max_pool_argmax(xp, parts, w, strides, paddings, oh, ow, offsets, last)
        out = parts[0]
        for part in parts[1:]:
            out = xp.maximum(out, part)  # NaN propagates, as max does
        if len(parts) == 1:
            out = xp.asarray(out, copy=True)
        # which offsets hold the maximum, one bit each (the first offset the highest): the
        # highest set bit is the first maximum, as argmax's; a table maps the bits to it
        code = xp.zeros(out.shape, dtype=xp.uint16)
        for part in parts:
            code = code * 2 + xp.astype(part == out, xp.uint16)
        first = xp.take(_first_bit_table(xp, len(parts)), xp.reshape(code, (-1,)))
        steps = xp.asarray([a * w + b for a, b in offsets], dtype=xp.int64)
        base = _offset_position(xp, w, strides, paddings, oh, ow, 0, 0)
        mask = base + xp.reshape(xp.take(steps, first), out.shape)
        return from_nchw(xp, out, last), from_nchw(xp, mask, last)

    def grad(gs, outs, x, **attrs):
        return MaxPool2DIndexGrad(gs[0], outs[1], x, **attrs)


def _scatter_spec(g, mask, x, **attrs):
    return Spec(shape_of(x), dtype_of(g))


@op("max_pool2d_index_grad")
class MaxPool2DIndexGrad:
    """Scatter-add ``g`` to the input cells named by ``mask`` (the backward of max pooling)."""

    fresh = True

    infer = _scatter_spec

    def kernel(xp, g, mask, x, ksize, strides, paddings, ceil_mode, data_format):
        last = data_format == "NHWC"
        g, mask = to_nchw(xp, g, last), to_nchw(xp, mask, last)
        n, c, h, w = to_nchw(xp, x, last).shape
        oh, ow = g.shape[2], g.shape[3]
        (_, _), full = _extent(h, w, ksize, strides, paddings, ceil_mode)
        dx = xp.zeros((n, c, h + full[0] + full[1], w + full[2] + full[3]), dtype=g.dtype)
        # windows that do not overlap own their cells: each offset's share is written, not added
        apart = strides[0] >= ksize[0] and strides[1] >= ksize[1]
        for a, b in _offsets(ksize):
            pos = _offset_position(xp, w, strides, paddings, oh, ow, a, b, h)
            share = g * xp.astype(mask == pos, g.dtype)
            if apart:
                dx = set_window(xp, dx, share, a, b, *strides)
            else:
                dx = add_window(xp, dx, share, a, b, *strides)
        return from_nchw(xp, dx[:, :, full[0] : full[0] + h, full[2] : full[2] + w], last)

    def grad(gg, out, g, mask, x, **attrs):
        return MaxPool2DIndexGather(gg, mask, **attrs), None, None


@op("max_pool2d_index_gather")
class MaxPool2DIndexGather:
    """Read ``gx`` at the input cells named by ``mask`` (adjoint of max_pool2d_index_grad)."""

    def infer(gx, mask, **attrs):
        return Spec(shape_of(mask), dtype_of(gx))

    def kernel(xp, gx, mask, ksize, strides, paddings, ceil_mode, data_format):
        last = data_format == "NHWC"
        gx, mask = to_nchw(xp, gx, last), to_nchw(xp, mask, last)
        h, w = gx.shape[2], gx.shape[3]
        oh, ow = mask.shape[2], mask.shape[3]
        wins, _ = _windows(xp, gx, ksize, strides, paddings, ceil_mode, 0.0)
        out = xp.zeros(mask.shape, dtype=gx.dtype)
        for i, (a, b) in enumerate(_offsets(ksize)):
            pos = _flat_positions(xp, h, w, ksize, strides, paddings, oh, ow, a, b)
            out = xp.where(mask == pos, wins[:, :, i, :, :], out)
        return from_nchw(xp, out, last)

    def grad(g, out, gx, mask, **attrs):
        return MaxPool2DIndexGrad(g, mask, gx, **attrs), None


@op("separable_resample2d")
class SeparableResample2D:
    """``hm @ plane @ wm^T`` for every [H, W] plane of ``x`` (``transpose``: the adjoint)."""

    def infer(x, hm, wm, transpose, data_format):
        s = list(shape_of(x))
        hw = (1, 2) if data_format == "NHWC" else (2, 3)
        k = 1 if transpose else 0
        if len(s) == 4:
            s[hw[0]], s[hw[1]] = shape_of(hm)[k], shape_of(wm)[k]
        return Spec(tuple(s), dtype_of(x))

    def kernel(xp, x, hm, wm, transpose, data_format):
        last = data_format == "NHWC"
        x = to_nchw(xp, x, last)
        if transpose:
            hm, wm = xp.matrix_transpose(hm), xp.matrix_transpose(wm)
        out = xp.matmul(xp.matmul(hm, x), xp.matrix_transpose(wm))
        return from_nchw(xp, out, last)

    def grad(g, out, x, hm, wm, transpose, data_format):
        return (
            SeparableResample2D(g, hm, wm, transpose=not transpose, data_format=data_format),
            None,
            None,
        )


# ---- public functions ------------------------------------------------------------------------


def _pool_attrs(x, kernel_size, stride, padding, ceil_mode, data_format, op_name):
    last = channel_last(data_format, op_name)
    if x.ndim != 4:
        raise shape_error(
            op_name, f"expects a 4-D input ({data_format}), got shape {list(x.shape)}"
        )
    ksize = ints(kernel_size, 2, op_name, "kernel_size")
    strides = ksize if stride is None else ints(stride, 2, op_name, "stride")
    if min(ksize) < 1 or min(strides) < 1:
        raise shape_error(
            op_name, f"kernel_size {list(ksize)} and stride {list(strides)} must be positive"
        )
    hw = (x.shape[1], x.shape[2]) if last else (x.shape[2], x.shape[3])
    paddings, _ = spatial_padding(padding, hw, ksize, strides, op_name, last)
    attrs = dict(
        ksize=ksize,
        strides=strides,
        paddings=paddings,
        ceil_mode=bool(ceil_mode),
        data_format="NHWC" if last else "NCHW",
    )
    _pool_out_shape(tuple(x.shape), **attrs, op_name=op_name)
    return attrs


def max_pool2d(
    x: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    return_mask: bool = False,
    ceil_mode: bool = False,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Max pooling; with ``return_mask`` also the flat index of each maximum per plane."""
    from autostatic_runtime.autograd import is_grad_enabled

    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, data_format, "max_pool2d")
    if return_mask:
        return MaxPool2DWithIndex(x, **attrs)
    if not x.stop_gradient and is_grad_enabled():
        return MaxPool2DWithIndex(x, **attrs)[0]  # keeps the mask for the backward
    return Pool2D(x, pooling_type="max", exclusive=True, divisor=None, **attrs)


def avg_pool2d(
    x: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    exclusive: bool = True,
    divisor_override: Any = None,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Average pooling; ``exclusive`` leaves padding out of each window's count."""
    attrs = _pool_attrs(x, kernel_size, stride, padding, ceil_mode, data_format, "avg_pool2d")
    divisor = None if divisor_override is None else float(divisor_override)
    return Pool2D(x, pooling_type="avg", exclusive=bool(exclusive), divisor=divisor, **attrs)


def _adaptive_sizes(x, output_size, op_name, data_format):
    last = channel_last(data_format, op_name)
    if x.ndim != 4:
        raise shape_error(
            op_name, f"expects a 4-D input ({data_format}), got shape {list(x.shape)}"
        )
    h, w = (x.shape[1], x.shape[2]) if last else (x.shape[2], x.shape[3])
    if isinstance(output_size, (list, tuple)):
        sizes = [
            h if output_size[0] is None else output_size[0],
            w if output_size[1] is None else output_size[1],
        ]
    else:
        sizes = [output_size, output_size]
    oh, ow = ints(sizes, 2, op_name, "output_size")
    if min(oh, ow) < 1:
        raise shape_error(op_name, f"output_size must be positive, got {[oh, ow]}")
    return last, h, w, oh, ow


def _adaptive_matrix(size: int, out: int) -> np.ndarray:
    """[out, size] averaging matrix over Paddle's adaptive windows [floor(i*n/m), ceil(...))."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m


def adaptive_avg_pool2d(
    x: Any, output_size: Any, data_format: str = "NCHW", name: str | None = None
):
    """Average pooling to a fixed ``output_size`` (an int or [OH, OW]; None keeps a dim)."""
    from autostatic_runtime.creation import to_tensor

    last, h, w, oh, ow = _adaptive_sizes(x, output_size, "adaptive_avg_pool2d", data_format)
    hm = to_tensor(_adaptive_matrix(h, oh), dtype=x.dtype)
    wm = to_tensor(_adaptive_matrix(w, ow), dtype=x.dtype)
    return SeparableResample2D(x, hm, wm, transpose=False, data_format="NHWC" if last else "NCHW")


def adaptive_max_pool2d(
    x: Any, output_size: Any, return_mask: bool = False, name: str | None = None
):
    """Max pooling to ``output_size``; the input size must be a multiple of it."""
    _, h, w, oh, ow = _adaptive_sizes(x, output_size, "adaptive_max_pool2d", "NCHW")
    if h % oh or w % ow:
        raise op_error(
            "adaptive_max_pool2d",
            f"input size {[h, w]} must be a multiple of "
            f"output_size {[oh, ow]} (uneven windows are not "
            f"supported)",
        )
    k = (h // oh, w // ow)
    return max_pool2d(x, k, k, 0, return_mask=return_mask)

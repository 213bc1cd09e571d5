"""Shared helpers of the functional package: argument normalization and 2-D window kernels.

Kernel helpers take ``xp`` (the backend namespace) and use array-API calls only. Spatial
kernels work in NCHW; ``to_nchw``/``from_nchw`` convert NHWC inputs at the kernel edges.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.errors import OpError, ShapeError, user_location
from autostatic_runtime.tensor import TensorLike

REDUCTIONS = ("none", "mean", "sum")


def shape_error(op_name: str, message: str) -> ShapeError:
    return ShapeError(op_name, message, user_location())


def op_error(op_name: str, message: str) -> OpError:
    return OpError(op_name, message, user_location())


def ints(v: Any, n: int, op_name: str, what: str) -> tuple:
    """``n`` ints from an int or a sequence of ``n`` ints (or 1-element tensors)."""
    if isinstance(v, TensorLike):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            v = list(v) * n
        if len(v) != n:
            raise op_error(op_name, f"{what} must be an int or {n} ints, got {list(v)}")
        return tuple(int(d) for d in v)
    return (int(v),) * n


def check_reduction(reduction: str, op_name: str) -> None:
    if reduction not in REDUCTIONS:
        raise op_error(op_name, f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def reduce_loss(out: Any, reduction: str):
    """Apply a loss reduction ('none' | 'mean' | 'sum')."""
    from autostatic_runtime.ops import reduce as R

    if reduction == "mean":
        return R.mean(out)
    if reduction == "sum":
        return R.sum(out)
    return out


def channel_last(data_format: str, op_name: str) -> bool:
    """True for NHWC-style formats, False for NCHW-style ones."""
    if data_format in ("NCHW", "NCL", "NCDHW", "NC"):
        return False
    if data_format in ("NHWC", "NLC", "NDHWC"):
        return True
    raise op_error(op_name, f"unknown data_format {data_format!r}; use 'NCHW' or 'NHWC'")


def spatial_padding(
    padding: Any, x_hw: tuple, k_hw: tuple, strides: tuple, op_name: str, last: bool
) -> tuple[tuple, bool]:
    """Resolve Paddle's padding forms to ``(top, bottom, left, right)``.

    Accepts an int, [ph, pw], [pt, pb, pl, pr], 4 pairs (one per NCHW/NHWC dim), 'SAME' or
    'VALID'. Returns the pads and whether 'SAME' was used (it resets dilation to 1, as Paddle).
    """
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return (0, 0, 0, 0), False
        if mode != "SAME":
            raise op_error(
                op_name, f"padding must be 'SAME', 'VALID', an int or a list, got {padding!r}"
            )
        pads = []
        for size, k, s in zip(x_hw, k_hw, strides, strict=True):
            if size < 0:
                raise op_error(op_name, "padding='SAME' needs known spatial sizes")
            out = -(-size // s)
            total = max((out - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return tuple(pads), True
    if isinstance(padding, TensorLike):
        padding = padding.tolist()
    if isinstance(padding, (list, tuple)):
        flat = list(padding)
        if len(flat) == 4 and all(isinstance(p, (list, tuple)) for p in flat):
            pairs = flat[1:3] if last else flat[2:4]
            flat = [int(pairs[0][0]), int(pairs[0][1]), int(pairs[1][0]), int(pairs[1][1])]
        if len(flat) == 1:
            flat = flat * 2
        if len(flat) == 2:
            return (int(flat[0]), int(flat[0]), int(flat[1]), int(flat[1])), False
        if len(flat) == 4:
            return tuple(int(p) for p in flat), False
        raise op_error(op_name, f"padding must have 1, 2 or 4 entries, got {list(padding)}")
    p = int(padding)
    return (p, p, p, p), False


def out_size(size: int, k: int, pad0: int, pad1: int, stride: int, ceil: bool = False) -> int:
    """Output length of a window op along one axis (-1 when ``size`` is unknown)."""
    if size < 0:
        return -1
    span = size + pad0 + pad1 - k
    if ceil:
        return (span + stride - 1) // stride + 1 if span >= 0 else 0
    return span // stride + 1 if span >= 0 else 0


# ---- kernel helpers (array API only) ---------------------------------------------------------


def to_nchw(xp, x, last: bool):
    return xp.permute_dims(x, (0, 3, 1, 2)) if last else x


def from_nchw(xp, x, last: bool):
    return xp.permute_dims(x, (0, 2, 3, 1)) if last else x


def pad_hw(xp, x, pads: tuple, value: float = 0.0):
    """``x`` (NCHW) padded by ``(top, bottom, left, right)`` with ``value`` (a new array)."""
    pt, pb, pl, pr = pads
    if not (pt or pb or pl or pr):
        return x
    n, c, h, w = x.shape
    out = xp.full((n, c, h + pt + pb, w + pl + pr), value, dtype=x.dtype)
    return xp.update(out, (slice(None), slice(None), slice(pt, pt + h), slice(pl, pl + w)), x)


def window(x, oh: int, ow: int, h0: int, w0: int, sh: int, sw: int):
    """The strided view ``x[:, :, h0 + i*sh, w0 + j*sw]`` for i < oh, j < ow."""
    return x[:, :, h0 : h0 + sh * (oh - 1) + 1 : sh, w0 : w0 + sw * (ow - 1) + 1 : sw]


def _window_key(v, h0: int, w0: int, sh: int, sw: int) -> tuple:
    oh, ow = v.shape[2], v.shape[3]
    return (
        slice(None),
        slice(None),
        slice(h0, h0 + sh * (oh - 1) + 1, sh),
        slice(w0, w0 + sw * (ow - 1) + 1, sw),
    )


def set_window(xp, x, v, h0: int, w0: int, sh: int, sw: int):
    """``window(x, ...) = v`` on a buffer this kernel owns; returns the updated buffer."""
    return xp.update(x, _window_key(v, h0, w0, sh, sw), v)


def add_window(xp, x, v, h0: int, w0: int, sh: int, sw: int):
    """``window(x, ...) += v`` on a buffer this kernel owns (in place where the backend
    allows it); returns the updated buffer."""
    key = _window_key(v, h0, w0, sh, sw)
    return xp.update(x, key, x[key] + v)

"""Common functional ops: linear, bilinear, dropout, pad, embedding, one_hot, similarity,
interpolate.

Ops here: ``dropout`` (random mask from the backend generator, so ``rt.seed`` governs it),
``pad``/``pad_grad`` (adjoint pair), ``lookup_table_v2``/``lookup_table_v2_grad``
(embedding and its adjoint). ``one_hot`` is the indexing family's, re-exported.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import OpError, user_location
from autostatic_runtime.nn.functional._utils import channel_last, op_error, shape_error
from autostatic_runtime.ops import elementwise as E
from autostatic_runtime.ops import reduce as R
from autostatic_runtime.ops.indexing import one_hot
from autostatic_runtime.ops.registry import Spec, dtype_of, normalize_axes, op, shape_of
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "linear", "bilinear", "dropout", "dropout2d", "dropout3d", "pad", "zeropad2d", "embedding",
    "one_hot", "cosine_similarity", "normalize", "interpolate", "upsample", "label_smooth",
]  # fmt: skip


def linear(x: Any, weight: Any, bias: Any = None, name: str | None = None):
    """``x @ weight + bias`` with ``weight`` of shape [in_features, out_features]."""
    from autostatic_runtime.ops.linalg import matmul

    if x.shape[-1] >= 0 and weight.ndim == 2 and x.shape[-1] != weight.shape[0]:
        raise shape_error(
            "linear",
            f"input shape {list(x.shape)} has {x.shape[-1]} features "
            f"but weight shape {list(weight.shape)} expects "
            f"{weight.shape[0]} (weight is [in, out])",
        )
    out = matmul(x, weight)
    return out if bias is None else out + bias


# ---- dropout ---------------------------------------------------------------------------------


def _mask_shape(shape: tuple, axis: tuple | None) -> tuple:
    return tuple(d if axis is None or i in axis else 1 for i, d in enumerate(shape))


@op("dropout")
class Dropout:
    """Zero each element (or slice along the non-``axis`` dims) with probability ``p``.

    Outputs the result and the mask (already scaled by 1/(1-p) for 'upscale_in_train').
    """

    multi_output = True
    nondiff_outputs = (1,)

    def infer(x, p, axis, mode):
        return Spec(shape_of(x), dtype_of(x)), Spec(_mask_shape(shape_of(x), axis), dtype_of(x))

    def kernel(xp, x, p, axis, mode):
        shape = _mask_shape(tuple(x.shape), axis)
        u = xp.random_uniform(shape, 0.0, 1.0, dtypes.convert_dtype(x.dtype))
        mask = xp.astype(u >= p, x.dtype)
        if mode == "upscale_in_train":
            mask = mask * (1.0 / (1.0 - p)) if p < 1.0 else mask * 0.0
        return x * mask, mask

    def grad(gs, outs, x, p, axis, mode):
        return gs[0] * outs[1]


_MODES = ("upscale_in_train", "downscale_in_infer")


def bilinear(x1: Any, x2: Any, weight: Any, bias: Any = None, name: str | None = None):
    """``out[b, o] = x1[b] @ weight[o] @ x2[b] (+ bias[o])`` (Paddle's ``F.bilinear``):
    ``x1`` [B, in1], ``x2`` [B, in2], ``weight`` [out, in1, in2], ``bias`` [1, out]."""
    from autostatic_runtime.ops.linalg import einsum

    if x1.ndim != 2 or x2.ndim != 2 or weight.ndim != 3:
        raise shape_error(
            "bilinear",
            f"x1 and x2 must be 2-D and weight 3-D, got shapes {list(x1.shape)}, "
            f"{list(x2.shape)} and {list(weight.shape)}",
        )
    pairs = ((x1.shape[1], weight.shape[1], "x1"), (x2.shape[1], weight.shape[2], "x2"))
    for got, want, what in pairs:
        if got >= 0 and want >= 0 and got != want:
            raise shape_error(
                "bilinear",
                f"{what} has {got} features but weight shape {list(weight.shape)} expects {want}",
            )
    out = einsum("bi,oij,bj->bo", x1, weight, x2)
    return out if bias is None else out + bias


def dropout(
    x: Any,
    p: float = 0.5,
    axis: Any = None,
    training: bool = True,
    mode: str = "upscale_in_train",
    name: str | None = None,
):
    """Randomly zero elements with probability ``p`` (identity-like when not ``training``).

    'upscale_in_train' scales kept values by 1/(1-p) in training; 'downscale_in_infer'
    instead scales by (1-p) at inference.
    """
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise op_error("dropout", f"p must be in [0, 1], got {p}")
    if mode not in _MODES:
        raise op_error("dropout", f"mode must be one of {_MODES}, got {mode!r}")
    if not training:
        return x if mode == "upscale_in_train" else x * (1.0 - p)
    if p == 0.0:
        return x
    axes = normalize_axes(axis, x.ndim, "dropout")
    return Dropout(x, p=p, axis=axes, mode=mode)[0]


def _channel_dropout(x: Any, p: float, training: bool, data_format: str, ndim: int, op: str):
    """Dropout of whole channels of an ``ndim``-D input (shared by dropout2d/3d)."""
    if x.ndim != ndim:
        raise shape_error(op, f"expects a {ndim}-D input, got shape {list(x.shape)}")
    axis = [0, ndim - 1] if channel_last(data_format, op) else [0, 1]
    return dropout(x, p, axis=axis, training=training)


def dropout2d(
    x: Any,
    p: float = 0.5,
    training: bool = True,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Drop whole channels of a 4-D input."""
    return _channel_dropout(x, p, training, data_format, 4, "dropout2d")


def dropout3d(
    x: Any,
    p: float = 0.5,
    training: bool = True,
    data_format: str = "NCDHW",
    name: str | None = None,
):
    """Drop whole channels of a 5-D input."""
    return _channel_dropout(x, p, training, data_format, 5, "dropout3d")


# ---- pad -------------------------------------------------------------------------------------


def _pairs(paddings: tuple) -> list:
    return [(paddings[2 * i], paddings[2 * i + 1]) for i in range(len(paddings) // 2)]


def _source_index(n: int, before: int, after: int, mode: str) -> list:
    """For each padded position, the input position it copies (reflect/replicate/circular)."""
    out = []
    for i in range(-before, n + after):
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            i = i % period
            i = period - i if i >= n else i
        elif mode == "replicate":
            i = min(max(i, 0), n - 1)
        else:  # circular
            i = i % n
        out.append(i)
    return out


def _with_dim(shape: tuple, axis: int, size: int) -> tuple:
    return shape[:axis] + (size,) + shape[axis + 1 :]


@op("pad")
class Pad:
    """Pad every dim by ``paddings`` (before0, after0, before1, ...) in ``mode``
    ('constant', 'reflect', 'replicate' or 'circular')."""

    def infer(x, paddings, mode, value):
        shape = tuple(
            d + b + a if d >= 0 else -1
            for d, (b, a) in zip(shape_of(x), _pairs(paddings), strict=False)
        )
        return Spec(shape, dtype_of(x))

    def kernel(xp, x, paddings, mode, value):
        for axis, (b, a) in enumerate(_pairs(paddings)):
            if not (b or a):
                continue
            shape = tuple(x.shape)
            if mode == "constant":
                parts = [
                    xp.full(_with_dim(shape, axis, b), value, dtype=x.dtype),
                    x,
                    xp.full(_with_dim(shape, axis, a), value, dtype=x.dtype),
                ]
                x = xp.concat(parts, axis=axis)
            else:
                idx = _source_index(shape[axis], b, a, mode)
                x = xp.take(x, xp.asarray(idx, dtype=xp.int64), axis=axis)
        return x

    def grad(g, out, x, paddings, mode, value):
        return PadGrad(g, x, paddings=paddings, mode=mode)


@op("pad_grad")
class PadGrad:
    """The adjoint of ``pad``: crop (constant) or sum the copies back (other modes)."""

    def infer(g, x, paddings, mode):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, paddings, mode):
        for axis, (b, a) in enumerate(_pairs(paddings)):
            if not (b or a):
                continue
            n = x.shape[axis]
            if mode == "constant":
                key = (slice(None),) * axis + (slice(b, b + n), Ellipsis)
                g = g[key]
            else:
                idx = xp.asarray(_source_index(n, b, a, mode), dtype=xp.int64)
                zeros = xp.zeros(_with_dim(tuple(g.shape), axis, n), dtype=g.dtype)
                g = xp.index_add(zeros, axis, idx, g)
        return g

    def grad(gg, out, g, x, paddings, mode):
        return Pad(gg, paddings=paddings, mode=mode, value=0.0), None


@op("pad_dynamic")
class PadDynamic:
    """``pad`` by amounts read at run time from the 1-D int tensor ``pad``: its pair ``k``
    (before, after) pads dim ``axes[k]`` (Paddle's ``F.pad`` with a tensor of amounts that
    are not known while the program is built). Those dims are unknown in the program."""

    def infer(x, pad, axes, mode, value):
        shape = [-1 if d in axes else n for d, n in enumerate(shape_of(x))]
        return Spec(tuple(shape), dtype_of(x))

    def kernel(xp, x, pad, axes, mode, value):
        paddings = _full_paddings(pad, axes, x.ndim, mode, x.shape)
        return Pad.kernel(xp, x, paddings, mode, value)

    def grad(g, out, x, pad, axes, mode, value):
        return PadDynamicGrad(g, x, pad, axes=axes, mode=mode), None


@op("pad_dynamic_grad")
class PadDynamicGrad:
    """The adjoint of ``pad_dynamic``: ``pad_grad`` by the amounts read at run time."""

    def infer(g, x, pad, axes, mode):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, pad, axes, mode):
        paddings = _full_paddings(pad, axes, x.ndim, mode, x.shape)
        return PadGrad.kernel(xp, g, x, paddings, mode)

    grad = None


def _full_paddings(pad, axes: tuple, ndim: int, mode: str, shape) -> tuple:
    """(before0, after0, before1, ...) for every dim, from the run-time amounts ``pad``."""
    amounts = [int(pad[i]) for i in range(pad.shape[0])]
    if len(amounts) != 2 * len(axes) or min(amounts, default=0) < 0:
        raise op_error(
            "pad", f"pad must hold {len(axes)} non-negative (before, after) pairs, got {amounts}"
        )
    full = [0] * (2 * ndim)
    for k, d in enumerate(axes):
        full[2 * d], full[2 * d + 1] = amounts[2 * k], amounts[2 * k + 1]
    _check_pad_sizes(_Shaped(shape), full, mode)
    return tuple(full)


class _Shaped:
    """What ``_check_pad_sizes`` reads of an input: its shape."""

    def __init__(self, shape):
        self.shape = tuple(shape)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_list(pad: Any) -> list:
    if isinstance(pad, TensorLike):
        pad = pad.tolist()
    if isinstance(pad, int):
        pad = [pad]
    return [int(p) for p in pad]


def pad(
    x: Any,
    pad: Any,
    mode: str = "constant",
    value: float = 0.0,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Pad ``x`` as Paddle does.

    With ``mode='constant'`` and ``len(pad) == 2 * x.ndim``, ``pad`` lists (before, after)
    for every dim from the first. Otherwise it pads the spatial dims of a 3/4/5-D input
    (per ``data_format``) starting from the last: [left, right, top, bottom, front, back].
    """
    if mode not in _PAD_MODES:
        raise op_error("pad", f"mode must be one of {_PAD_MODES}, got {mode!r}")
    nd = x.ndim
    if _traced(pad):  # amounts known at run time only
        return _pad_dynamic(x, pad, mode, value, data_format)
    pads = _pad_list(pad)
    if len(pads) % 2 or min(pads, default=0) < 0:
        raise op_error("pad", f"pad must hold non-negative (before, after) pairs, got {pads}")
    if mode == "constant" and len(pads) == 2 * nd:
        full = pads
    else:
        last = channel_last(data_format, "pad")
        spatial = list(range(1, nd - 1)) if last else list(range(2, nd))
        if len(pads) > 2 * len(spatial):
            raise shape_error(
                "pad",
                f"pad {pads} has more pairs than the {len(spatial)} "
                f"spatial dims of input shape {list(x.shape)} "
                f"({data_format})",
            )
        full = [0] * (2 * nd)
        for k, (b, a) in enumerate(_pairs(tuple(pads))):
            d = spatial[len(spatial) - 1 - k]
            full[2 * d], full[2 * d + 1] = b, a
    _check_pad_sizes(x, full, mode)
    return Pad(x, paddings=tuple(full), mode=mode, value=float(value))


def _traced(pad: Any) -> bool:
    from autostatic_runtime.tensor import Tensor

    return isinstance(pad, TensorLike) and not isinstance(pad, Tensor)


def _pad_dynamic(x, pad, mode: str, value: float, data_format: str):
    """``pad_dynamic`` for a traced 1-D tensor of amounts (its length is known)."""
    if pad.ndim != 1 or pad.shape[0] < 0 or pad.shape[0] % 2:
        raise op_error("pad", f"pad must be a 1-D tensor of (before, after) pairs, got shape "
                              f"{list(pad.shape)}")  # fmt: skip
    pairs = pad.shape[0] // 2
    if mode == "constant" and pairs == x.ndim:
        axes = tuple(range(x.ndim))
    else:
        last = channel_last(data_format, "pad")
        spatial = list(range(1, x.ndim - 1)) if last else list(range(2, x.ndim))
        if pairs > len(spatial):
            raise shape_error(
                "pad",
                f"pad of {pad.shape[0]} amounts has more pairs than the {len(spatial)} spatial "
                f"dims of input shape {list(x.shape)} ({data_format})",
            )
        axes = tuple(spatial[len(spatial) - 1 - k] for k in range(pairs))
    if pad.dtype not in (dtypes.int32, dtypes.int64):
        from autostatic_runtime.ops.elementwise import cast

        pad = cast(pad, "int64")
    return PadDynamic(x, pad, axes=axes, mode=mode, value=float(value))


def _check_pad_sizes(x, full: list, mode: str) -> None:
    for d, (b, a) in enumerate(_pairs(tuple(full))):
        n = x.shape[d]
        if mode == "reflect" and (b >= n or a >= n) and (b or a):
            raise shape_error(
                "pad",
                f"reflect padding ({b}, {a}) must be smaller than dim {d} "
                f"of input shape {list(x.shape)}",
            )
        if mode in ("replicate", "circular") and n == 0 and (b or a):
            raise shape_error("pad", f"cannot {mode}-pad the empty dim {d} of {list(x.shape)}")


def zeropad2d(x: Any, padding: Any, data_format: str = "NCHW", name: str | None = None):
    """Zero-pad the spatial dims of a 4-D input by [left, right, top, bottom]."""
    p = _pad_list(padding)
    return pad(x, p * 4 if len(p) == 1 else p, "constant", 0.0, data_format)


# ---- embedding / one_hot ---------------------------------------------------------------------


def _check_ids(xp, ids, n: int, op_name: str, what: str) -> None:
    if xp.checks_values and ids.size and bool(xp.any((ids < 0) | (ids >= n))):
        lo, hi = int(xp.min(ids)), int(xp.max(ids))
        raise OpError(
            op_name, f"{what} must be in [0, {n}), got values in [{lo}, {hi}]", user_location()
        )


@op("lookup_table_v2")
class Embedding:
    """Rows of ``weight`` [V, D] picked by integer ``ids``; ``padding_idx`` rows give zeros."""

    def infer(ids, weight, padding_idx):
        return Spec(tuple(shape_of(ids)) + (shape_of(weight)[1],), dtype_of(weight))

    def kernel(xp, ids, weight, padding_idx):
        _check_ids(xp, ids, weight.shape[0], "embedding", "ids")
        flat = xp.reshape(ids, (-1,))
        out = xp.take(weight, flat, axis=0)
        if padding_idx is not None:
            out = xp.where(xp.reshape(flat == padding_idx, (-1, 1)), xp.zeros_like(out), out)
        return xp.reshape(out, tuple(ids.shape) + (weight.shape[1],))

    def grad(g, out, ids, weight, padding_idx):
        return None, EmbeddingGrad(g, ids, weight, padding_idx=padding_idx)


@op("lookup_table_v2_grad")
class EmbeddingGrad:
    """The adjoint of ``lookup_table_v2``: rows of ``g`` summed into a ``weight``-shaped array."""

    def infer(g, ids, weight, padding_idx):
        return Spec(shape_of(weight), dtype_of(g))

    def kernel(xp, g, ids, weight, padding_idx):
        flat = xp.reshape(ids, (-1,))
        rows = xp.reshape(g, (-1, weight.shape[1]))
        if padding_idx is not None:
            rows = xp.where(xp.reshape(flat == padding_idx, (-1, 1)), xp.zeros_like(rows), rows)
        return xp.index_add(xp.zeros(weight.shape, dtype=g.dtype), 0, flat, rows)

    def grad(gw, out, g, ids, weight, padding_idx):
        return Embedding(ids, gw, padding_idx=padding_idx), None, None


def embedding(
    x: Any, weight: Any, padding_idx: Any = None, sparse: bool = False, name: str | None = None
):
    """Look up rows of ``weight`` [V, D] for the integer ids ``x`` (output: x.shape + [D]).

    ``padding_idx`` (negative counts from V) gives zero rows that receive no gradient.
    """
    if x.dtype.is_floating:
        raise op_error("embedding", f"ids must be an integer tensor, got {x.dtype}")
    if weight.ndim != 2:
        raise shape_error(
            "embedding", f"weight must be 2-D [vocab, dim], got shape {list(weight.shape)}"
        )
    if padding_idx is not None:
        v = weight.shape[0]
        padding_idx = int(padding_idx)
        if not -v <= padding_idx < v:
            raise op_error(
                "embedding", f"padding_idx {padding_idx} is out of range for vocabulary size {v}"
            )
        padding_idx %= v
    return Embedding(x, weight, padding_idx=padding_idx)


def label_smooth(label: Any, prior_dist: Any = None, epsilon: float = 0.1, name: str | None = None):
    """``(1 - epsilon) * label + epsilon * prior`` (uniform prior by default)."""
    eps = float(epsilon)
    if prior_dist is None:
        return label * (1.0 - eps) + eps / label.shape[-1]
    return label * (1.0 - eps) + prior_dist * eps


# ---- similarity ------------------------------------------------------------------------------


def cosine_similarity(x1: Any, x2: Any, axis: int = 1, eps: float = 1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``axis``."""
    w12 = R.sum(x1 * x2, axis=axis)
    w1 = R.sum(x1 * x1, axis=axis)
    w2 = R.sum(x2 * x2, axis=axis)
    return w12 / E.sqrt(E.maximum(w1 * w2, float(eps) ** 2))


def normalize(x: Any, p: float = 2, axis: int = 1, epsilon: float = 1e-12, name: str | None = None):
    """``x / max(||x||_p, epsilon)`` along ``axis``."""
    eps = float(epsilon)
    if p in (2, 2.0):
        norm = E.sqrt(E.maximum(R.sum(x * x, axis=axis, keepdim=True), eps * eps))
        return x / norm
    norm = E.pow(R.sum(E.pow(E.abs(x), float(p)), axis=axis, keepdim=True), 1.0 / float(p))
    return x / E.maximum(norm, eps)


# ---- interpolate -----------------------------------------------------------------------------


def _resize_matrix(
    n_in: int, n_out: int, mode: str, align_corners: bool, align_mode: int, scale: Any
):
    """[n_out, n_in] interpolation weights along one axis, as Paddle computes them."""
    rows = [[0.0] * n_in for _ in range(n_out)]
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
    for k in range(n_out):
        if mode == "nearest":
            src = int(ratio * k + 0.5) if align_corners else int(ratio * k)
            rows[k][min(src, n_in - 1)] = 1.0
            continue
        src = ratio * (k + 0.5) - 0.5 if not align_corners and align_mode == 0 else ratio * k
        src = max(src, 0.0)
        lo = min(int(src), n_in - 1)
        hi = min(lo + 1, n_in - 1)
        lam = src - lo
        rows[k][lo] += 1.0 - lam
        rows[k][hi] += lam
    return rows


def _host_size(size: Any) -> Any:
    """``interpolate``'s ``size`` as ints: a tensor's values, or while a program is built the
    value its ops determine from known dims (``rt.shape(x)[2:4] * 2``)."""
    if isinstance(size, (list, tuple)):
        return [_host_size(d) for d in size]
    if not isinstance(size, TensorLike):
        return size
    if isinstance(size, Tensor):
        return size.tolist()
    from autostatic_runtime.static.fold import build_time_value

    known = build_time_value(size)
    if known is None:
        raise op_error(
            "interpolate",
            "size is a traced tensor whose value is known only when the program runs (it "
            "depends on an input or on a dim unknown while tracing); give ints, a size "
            "computed from rt.shape(x) of known dims, or scale_factor",
        )
    return known.tolist()


def interpolate(
    x: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool = False,
    align_mode: int = 0,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Resize a 4-D input with 'nearest' or 'bilinear' interpolation (Paddle's rules)."""
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.nn.functional.pooling import SeparableResample2D

    mode = mode.lower()
    if mode not in ("nearest", "bilinear") or x.ndim != 4:
        raise op_error(
            "interpolate",
            f"supports 4-D inputs with mode 'nearest' or 'bilinear', "
            f"got mode {mode!r} and shape {list(x.shape)}",
        )
    if mode == "nearest" and align_corners:
        raise op_error("interpolate", "align_corners is not allowed with mode 'nearest'")
    last = channel_last(data_format, "interpolate")
    h, w = (x.shape[1], x.shape[2]) if last else (x.shape[2], x.shape[3])
    scales = [None, None]
    if size is not None:
        size = _host_size(size)
        oh, ow = (int(size), int(size)) if isinstance(size, int) else (int(size[0]), int(size[1]))
    elif scale_factor is not None:
        sf = scale_factor.tolist() if isinstance(scale_factor, TensorLike) else scale_factor
        scales = [float(sf), float(sf)] if isinstance(sf, (int, float)) else [float(s) for s in sf]
        oh, ow = int(h * scales[0]), int(w * scales[1])
    else:
        raise op_error("interpolate", "give either size or scale_factor")
    if min(oh, ow) < 1:
        raise shape_error("interpolate", f"output size {[oh, ow]} must be positive")
    hm = to_tensor(_resize_matrix(h, oh, mode, align_corners, align_mode, scales[0]), x.dtype)
    wm = to_tensor(_resize_matrix(w, ow, mode, align_corners, align_mode, scales[1]), x.dtype)
    return SeparableResample2D(x, hm, wm, transpose=False, data_format="NHWC" if last else "NCHW")


def upsample(
    x: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool = False,
    align_mode: int = 0,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Alias of ``interpolate``."""
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format)

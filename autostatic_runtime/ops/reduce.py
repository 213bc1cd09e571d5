"""Reductions: sum, mean, max/min, prod, arg max/min, all/any, cumulative sums, statistics.

``axis`` may be None (all axes), an int or a list; ``keepdim`` keeps reduced axes as size 1.
Gradients flow back through ``broadcast_reduced``, which restores the reduced axes of a
gradient and broadcasts it to the input (taking the input itself, so it also works when
static shapes hold -1).
"""

from __future__ import annotations

import builtins  # this module defines sum/max/min/any/all as ops
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.ops.registry import Spec, dtype_of, normalize_axes, op, shape_of
from autostatic_runtime.tensor import TensorLike

__all__ = [
    "sum", "mean", "max", "min", "amax", "amin", "prod", "argmax", "argmin", "all", "any",
    "cumsum", "cumprod", "logsumexp", "var", "std", "nansum", "nanmean", "count_nonzero",
    "numel", "norm", "dist",
]  # fmt: skip


def _reduced_shape(shape: tuple, axis: tuple | None, keepdim: bool) -> tuple:
    if axis is None:
        return tuple(1 for _ in shape) if keepdim else ()
    if keepdim:
        return tuple(1 if i in axis else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axis)


def _reduce_spec(x, axis, keepdim, dtype=None):
    return Spec(_reduced_shape(shape_of(x), axis, keepdim), dtype or dtype_of(x))


@op("broadcast_reduced")
class BroadcastReduced:
    """Undo a reduction's shape: put back the reduced axes of ``g`` and broadcast it to ``x``.

    With ``mean=True`` the result is also divided by the number of reduced elements.
    """

    def infer(g, x, axis, keepdim, mean=False):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, axis, keepdim, mean=False):
        if not keepdim:
            kept = _reduced_shape(tuple(x.shape), axis, True)
            g = xp.reshape(g, kept)
        out = xp.broadcast_to(g, x.shape)
        if mean:
            out = out / _count(tuple(x.shape), axis)
        return out

    def grad(gg, out, g, x, axis, keepdim, mean=False):
        reduce = ReduceMean if mean else ReduceSum
        return reduce(gg, axis=axis, keepdim=keepdim), None


def _count(shape: tuple, axis: tuple | None) -> int:
    n = 1
    for i, d in enumerate(shape):
        if axis is None or i in axis:
            n *= d
    return builtins.max(n, 1)


def _back(g, x, axis, keepdim, mean=False):
    return BroadcastReduced(g, x, axis=axis, keepdim=keepdim, mean=mean)


@op("reduce_sum")
class ReduceSum:
    infer = _reduce_spec

    def kernel(xp, x, axis, keepdim):
        return xp.sum(x, axis=axis, keepdims=keepdim)

    def grad(g, out, x, axis, keepdim):
        return _back(g, x, axis, keepdim)


@op("reduce_mean")
class ReduceMean:
    infer = _reduce_spec

    def kernel(xp, x, axis, keepdim):
        return xp.mean(x, axis=axis, keepdims=keepdim)

    def grad(g, out, x, axis, keepdim):
        return _back(g, x, axis, keepdim, mean=True)


def _extreme_grad(g, out, x, axis, keepdim):
    """Split ``g`` evenly among the elements that attain the max (or min)."""
    hit = cast_like(_back(out, x, axis, keepdim) == x, g)
    count = _back(ReduceSum(hit, axis=axis, keepdim=keepdim), x, axis, keepdim)
    return _back(g, x, axis, keepdim) * hit / count


def cast_like(mask, like):
    from autostatic_runtime.ops.elementwise import cast

    return cast(mask, like.dtype)


@op("reduce_max")
class ReduceMax:
    infer = _reduce_spec

    def kernel(xp, x, axis, keepdim):
        return xp.max(x, axis=axis, keepdims=keepdim)

    grad = _extreme_grad


@op("reduce_min")
class ReduceMin:
    infer = _reduce_spec

    def kernel(xp, x, axis, keepdim):
        return xp.min(x, axis=axis, keepdims=keepdim)

    grad = _extreme_grad


@op("reduce_prod")
class ReduceProd:
    infer = _reduce_spec

    def kernel(xp, x, axis, keepdim):
        return xp.prod(x, axis=axis, keepdims=keepdim)

    def grad(g, out, x, axis, keepdim):
        # d prod / d x_i = prod / x_i (inputs with zeros get no exact gradient, as in Paddle)
        return _back(g * out, x, axis, keepdim) / x


def _arg_spec(x, axis, keepdim, dtype):
    axes = None if axis is None else (axis,)
    shape = (
        _reduced_shape(shape_of(x), axes, keepdim)
        if axis is not None
        else ((1,) * len(shape_of(x)) if keepdim else ())
    )
    return Spec(shape, dtypes.convert_dtype(dtype))


@op("arg_max")
class ArgMax:
    infer = _arg_spec

    def kernel(xp, x, axis, keepdim, dtype):
        if axis is None:
            r = xp.argmax(xp.reshape(x, (-1,)))
            r = xp.reshape(r, (1,) * x.ndim) if keepdim else r
        else:
            r = xp.argmax(x, axis=axis, keepdims=keepdim)
        return xp.astype(r, xp.to_dtype(dtype))

    grad = None


@op("arg_min")
class ArgMin:
    infer = _arg_spec

    def kernel(xp, x, axis, keepdim, dtype):
        if axis is None:
            r = xp.argmin(xp.reshape(x, (-1,)))
            r = xp.reshape(r, (1,) * x.ndim) if keepdim else r
        else:
            r = xp.argmin(x, axis=axis, keepdims=keepdim)
        return xp.astype(r, xp.to_dtype(dtype))

    grad = None


@op("reduce_all")
class ReduceAll:
    def infer(x, axis, keepdim):
        return _reduce_spec(x, axis, keepdim, dtypes.bool_)

    def kernel(xp, x, axis, keepdim):
        return xp.all(x, axis=axis, keepdims=keepdim)

    grad = None


@op("reduce_any")
class ReduceAny:
    def infer(x, axis, keepdim):
        return _reduce_spec(x, axis, keepdim, dtypes.bool_)

    def kernel(xp, x, axis, keepdim):
        return xp.any(x, axis=axis, keepdims=keepdim)

    grad = None


@op("cumsum")
class CumSum:
    """Cumulative sum along ``axis`` (``reverse=True`` sums from the end)."""

    def infer(x, axis, reverse=False):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, axis, reverse=False):
        if reverse:
            return xp.flip(xp.cumulative_sum(xp.flip(x, axis=axis), axis=axis), axis=axis)
        return xp.cumulative_sum(x, axis=axis)

    def grad(g, out, x, axis, reverse=False):
        return CumSum(g, axis=axis, reverse=not reverse)


@op("cumprod")
class CumProd:
    def infer(x, axis):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, axis):
        return xp.cumulative_prod(x, axis=axis)

    def grad(g, out, x, axis):
        return CumSum(g * out, axis=axis, reverse=True) / x


@op("logsumexp")
class LogSumExp:
    def infer(x, axis, keepdim):
        return _reduce_spec(x, axis, keepdim)

    def kernel(xp, x, axis, keepdim):
        m = xp.max(x, axis=axis, keepdims=True)
        m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        s = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
        if not keepdim:
            s = xp.reshape(s, _reduced_shape(tuple(x.shape), axis, False))
        return s

    def grad(g, out, x, axis, keepdim):
        from autostatic_runtime.ops.elementwise import exp

        return _back(g, x, axis, keepdim) * exp(x - _back(out, x, axis, keepdim))


@op("size")
class Size:
    """The number of elements, as an int64 scalar tensor."""

    def infer(x):
        return Spec((), dtypes.int64)

    def kernel(xp, x):
        return xp.asarray(x.size if x.size is not None else 0, dtype=xp.int64)

    grad = None


# ---- public functions ---------------------------------------------------------------------


def _axes(x, axis, name):
    if isinstance(axis, TensorLike):
        axis = axis.tolist()
    return normalize_axes(axis, x.ndim, name)


def _sum_input(x, dtype):
    from autostatic_runtime.ops.elementwise import cast

    if dtype is not None:
        return cast(x, dtype)
    if x.dtype == dtypes.bool_ or x.dtype in (
        dtypes.int32,
        dtypes.int16,
        dtypes.int8,
        dtypes.uint8,
    ):
        return cast(x, dtypes.int64)
    return x


def sum(
    x: Any, axis: Any = None, dtype: Any = None, keepdim: bool = False, name: str | None = None
):
    """Sum over ``axis`` (all axes when None). bool and small ints sum as int64, as in Paddle."""
    return ReduceSum(_sum_input(x, dtype), axis=_axes(x, axis, "sum"), keepdim=bool(keepdim))


def mean(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """Arithmetic mean over ``axis`` (needs a float tensor)."""
    from autostatic_runtime.ops.elementwise import _float_input

    x = _float_input(x)
    return ReduceMean(x, axis=_axes(x, axis, "mean"), keepdim=bool(keepdim))


def max(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """Maximum over ``axis``; the gradient is shared equally among tied maxima."""
    return ReduceMax(x, axis=_axes(x, axis, "max"), keepdim=bool(keepdim))


def min(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """Minimum over ``axis``; the gradient is shared equally among tied minima."""
    return ReduceMin(x, axis=_axes(x, axis, "min"), keepdim=bool(keepdim))


amax, amin = max, min


def prod(
    x: Any, axis: Any = None, keepdim: bool = False, dtype: Any = None, name: str | None = None
):
    """Product over ``axis``."""
    from autostatic_runtime.ops.elementwise import cast

    if dtype is not None:
        x = cast(x, dtype)
    return ReduceProd(x, axis=_axes(x, axis, "prod"), keepdim=bool(keepdim))


def _single_axis(x, axis, name):
    if axis is None:
        return None
    return normalize_axes(int(axis), x.ndim, name)[0]


def argmax(
    x: Any, axis: Any = None, keepdim: bool = False, dtype: Any = "int64", name: str | None = None
):
    """Index of the maximum along ``axis`` (of the flattened tensor when None)."""
    return ArgMax(
        x,
        axis=_single_axis(x, axis, "argmax"),
        keepdim=bool(keepdim),
        dtype=dtypes.convert_dtype(dtype),
    )


def argmin(
    x: Any, axis: Any = None, keepdim: bool = False, dtype: Any = "int64", name: str | None = None
):
    """Index of the minimum along ``axis`` (of the flattened tensor when None)."""
    return ArgMin(
        x,
        axis=_single_axis(x, axis, "argmin"),
        keepdim=bool(keepdim),
        dtype=dtypes.convert_dtype(dtype),
    )


def all(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """True where every element along ``axis`` is true."""
    from autostatic_runtime.ops.elementwise import _as_bool

    return ReduceAll(_as_bool(x), axis=_axes(x, axis, "all"), keepdim=bool(keepdim))


def any(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """True where some element along ``axis`` is true."""
    from autostatic_runtime.ops.elementwise import _as_bool

    return ReduceAny(_as_bool(x), axis=_axes(x, axis, "any"), keepdim=bool(keepdim))


def _flat_or(x, axis, name):
    if axis is None:
        from autostatic_runtime.ops.manipulation import flatten

        return flatten(x), 0
    return x, _single_axis(x, axis, name)


def cumsum(x: Any, axis: Any = None, dtype: Any = None, name: str | None = None):
    """Cumulative sum along ``axis`` (of the flattened tensor when None)."""
    from autostatic_runtime.ops.elementwise import cast

    if dtype is not None:
        x = cast(x, dtype)
    x, axis = _flat_or(x, axis, "cumsum")
    return CumSum(x, axis=axis)


def cumprod(x: Any, dim: Any = None, dtype: Any = None, name: str | None = None):
    """Cumulative product along ``dim`` (of the flattened tensor when None)."""
    from autostatic_runtime.ops.elementwise import cast

    if dtype is not None:
        x = cast(x, dtype)
    x, axis = _flat_or(x, dim, "cumprod")
    return CumProd(x, axis=axis)


def logsumexp(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """``log(sum(exp(x)))`` over ``axis``, computed without overflow."""
    return LogSumExp(x, axis=_axes(x, axis, "logsumexp"), keepdim=bool(keepdim))


def var(
    x: Any, axis: Any = None, unbiased: bool = True, keepdim: bool = False, name: str | None = None
):
    """Variance over ``axis`` (divides by n - 1 when ``unbiased``)."""
    axes = _axes(x, axis, "var")
    d = x - mean(x, axis=axis, keepdim=True)
    biased = mean(d * d, axis=axis, keepdim=keepdim)
    if not unbiased:
        return biased
    shape = tuple(x.shape)
    if builtins.all(shape[i] >= 0 for i in (range(len(shape)) if axes is None else axes)):
        n = _count(shape, axes)
        return biased * (n / (n - 1)) if n > 1 else biased
    from autostatic_runtime.ops.elementwise import cast  # count known only at run time

    n = cast(numel(x), biased.dtype) / cast(numel(biased), biased.dtype)
    return biased * n / maximum_one(n - 1)


def maximum_one(v: Any):
    from autostatic_runtime.ops.elementwise import maximum

    return maximum(v, 1.0)


def std(
    x: Any, axis: Any = None, unbiased: bool = True, keepdim: bool = False, name: str | None = None
):
    """Standard deviation over ``axis``."""
    from autostatic_runtime.ops.elementwise import sqrt

    return sqrt(var(x, axis, unbiased, keepdim))


def nansum(
    x: Any, axis: Any = None, dtype: Any = None, keepdim: bool = False, name: str | None = None
):
    """Sum treating NaN as zero."""
    from autostatic_runtime.ops.elementwise import isnan, where

    return sum(where(isnan(x), 0.0, x), axis=axis, dtype=dtype, keepdim=keepdim)


def nanmean(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """Mean over the non-NaN elements."""
    from autostatic_runtime.ops.elementwise import cast, isnan, logical_not

    count = sum(cast(logical_not(isnan(x)), x.dtype), axis=axis, keepdim=keepdim)
    return nansum(x, axis=axis, keepdim=keepdim) / count


def count_nonzero(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None):
    """Number of non-zero elements along ``axis`` (int64)."""
    return sum(x != 0, axis=axis, keepdim=keepdim)


def numel(x: Any, name: str | None = None):
    """Number of elements, as an int64 0-D tensor."""
    return Size(x)


def norm(x: Any, p: Any = "fro", axis: Any = None, keepdim: bool = False, name: str | None = None):
    """Vector or Frobenius norm: p = 'fro', a positive number, ``inf`` or ``-inf``."""
    from autostatic_runtime.ops.elementwise import abs, pow, sqrt

    if p in ("fro", 2, 2.0):
        return sqrt(sum(x * x, axis=axis, keepdim=keepdim))
    if p == float("inf"):
        return max(abs(x), axis=axis, keepdim=keepdim)
    if p == float("-inf"):
        return min(abs(x), axis=axis, keepdim=keepdim)
    if p in (1, 1.0):
        return sum(abs(x), axis=axis, keepdim=keepdim)
    p = float(p)
    return pow(sum(pow(abs(x), p), axis=axis, keepdim=keepdim), 1.0 / p)


def dist(x: Any, y: Any, p: float = 2, name: str | None = None):
    """The p-norm of ``x - y``."""
    return norm(x - y, p=p)

"""Sorting and searching: sort, argsort, topk, kthvalue, median, unique, searchsorted.

Sorts are stable (a valid answer for Paddle's ``stable=False`` too), so ties keep their
input order on every backend. Values outputs carry gradients: ``sort_grad`` scatters the
gradient back to the positions the indices point at; indices outputs never do.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import OpError, ShapeError, user_location
from autostatic_runtime.ops.registry import Spec, dtype_of, normalize_axis, op, shape_of

__all__ = [
    "sort", "argsort", "topk", "kthvalue", "median", "unique", "unique_consecutive",
    "searchsorted", "bucketize",
]  # fmt: skip


def _err(op_name: str, message: str) -> ShapeError:
    return ShapeError(op_name, message, user_location())


def _with_dim(shape: tuple, axis: int, n: int) -> tuple:
    return shape[:axis] + (n,) + shape[axis + 1 :]


def _take_first(xp, idx, k: int, axis: int):
    return xp.take(idx, xp.arange(k, dtype=idx.dtype), axis=axis)


# ---- gradient helpers -----------------------------------------------------------------------


@op("sort_grad")
class SortGrad:
    """Zeros shaped like ``x`` with ``g`` added at ``indices`` along ``axis``.

    The backward of sort, topk and kthvalue (``indices`` has ``g``'s shape).
    """

    def infer(g, indices, x, axis):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, indices, x, axis):
        n = x.shape[axis]
        g = xp.moveaxis(g, axis, -1)
        idx = xp.moveaxis(indices, axis, -1)
        lead, k = tuple(g.shape[:-1]), g.shape[-1]
        rows = 1
        for d in lead:
            rows *= d
        offsets = xp.reshape(xp.arange(rows, dtype=idx.dtype) * n, (rows, 1))
        flat = xp.reshape(xp.reshape(idx, (rows, k)) + offsets, (-1,))
        out = xp.index_add(xp.zeros((rows * n,), dtype=g.dtype), 0, flat, xp.reshape(g, (-1,)))
        return xp.moveaxis(xp.reshape(out, lead + (n,)), -1, axis)

    def grad(gg, out, g, indices, x, axis):
        return SortGradGrad(gg, indices, axis=axis), None, None


@op("sort_grad_grad")
class SortGradGrad:
    """The elements of ``x`` at ``indices`` along ``axis`` (the backward of sort_grad)."""

    def infer(x, indices, axis):
        return Spec(shape_of(indices), dtype_of(x))

    def kernel(xp, x, indices, axis):
        return xp.take_along_axis(x, indices, axis=axis)

    def grad(g, out, x, indices, axis):
        return SortGrad(g, indices, x, axis=axis), None


def _values_grad(gs, outs, x, axis):
    return SortGrad(gs[0], outs[1], x, axis=axis)


# ---- sorting ops -----------------------------------------------------------------------------


def _pair(x, shape):
    return Spec(shape, dtype_of(x)), Spec(shape, dtypes.int64)


@op("argsort")
class ArgSort:
    """Sorted values and their int64 indices along ``axis`` (stable)."""

    multi_output = True
    nondiff_outputs = (1,)

    def infer(x, axis, descending):
        return _pair(x, shape_of(x))

    def kernel(xp, x, axis, descending):
        idx = xp.argsort(x, axis=axis, descending=descending, stable=True)
        return xp.take_along_axis(x, idx, axis=axis), xp.astype(idx, xp.int64)

    def grad(gs, outs, x, axis, descending):
        return _values_grad(gs, outs, x, axis)


@op("top_k_v2")
class TopK:
    """The ``k`` largest (or smallest) values along ``axis`` and their int64 indices."""

    multi_output = True
    nondiff_outputs = (1,)

    def infer(x, k, axis, largest):
        return _pair(x, _with_dim(shape_of(x), axis, k))

    def kernel(xp, x, k, axis, largest):
        idx = _take_first(xp, xp.argsort(x, axis=axis, descending=largest, stable=True), k, axis)
        return xp.take_along_axis(x, idx, axis=axis), xp.astype(idx, xp.int64)

    def grad(gs, outs, x, k, axis, largest):
        return _values_grad(gs, outs, x, axis)


@op("kthvalue")
class KthValue:
    """The ``k``-th smallest value along ``axis`` (1-based) and its int64 index."""

    multi_output = True
    nondiff_outputs = (1,)

    def infer(x, k, axis, keepdim):
        s = shape_of(x)
        return _pair(x, _with_dim(s, axis, 1) if keepdim else s[:axis] + s[axis + 1 :])

    def kernel(xp, x, k, axis, keepdim):
        idx = xp.argsort(x, axis=axis, stable=True)
        idx = xp.take(idx, xp.asarray([k - 1], dtype=idx.dtype), axis=axis)
        vals = xp.take_along_axis(x, idx, axis=axis)
        idx = xp.astype(idx, xp.int64)
        if keepdim:
            return vals, idx
        return xp.squeeze(vals, axis=axis), xp.squeeze(idx, axis=axis)

    def grad(gs, outs, x, k, axis, keepdim):
        g, idx = gs[0], outs[1]
        if not keepdim:
            from autostatic_runtime.ops.manipulation import unsqueeze

            g, idx = unsqueeze(g, axis), unsqueeze(idx, axis)
        return SortGrad(g, idx, x, axis=axis)


# ---- unique --------------------------------------------------------------------------------


def _unique(xp, x, axis, dtype, consecutive):
    """(values, first index, inverse, counts) of the rows of ``x`` along ``axis``."""
    moved = xp.reshape(x, (-1,)) if axis is None else xp.moveaxis(x, axis, 0)
    n, c = moved.shape[0], 1
    for d in moved.shape[1:]:
        c *= d
    rows = xp.reshape(moved, (n, c))
    perm = xp.arange(n)
    if not consecutive:
        for j in range(rows.shape[1] - 1, -1, -1):  # lexicographic: least significant first
            order = xp.argsort(xp.take(rows[:, j], perm), stable=True)
            perm = xp.take(perm, order)
    s = xp.take(rows, perm, axis=0)
    if n:
        differs = xp.any(s[1:, ...] != s[:-1, ...], axis=1)
        new = xp.concat([xp.ones((1,), dtype=xp.bool), differs])
    else:
        new = xp.zeros((0,), dtype=xp.bool)
    starts = xp.nonzero(new)[0]
    counts = xp.diff(xp.concat([starts, xp.asarray([n], dtype=starts.dtype)]))
    group = xp.cumulative_sum(xp.astype(new, xp.int64)) - 1
    inverse = xp.take(group, xp.argsort(perm, stable=True))
    first = xp.take(perm, starts)
    values = xp.take(moved, first, axis=0)
    if axis is not None:
        values = xp.moveaxis(values, 0, axis)
    d = xp.to_dtype(dtype)
    return values, xp.astype(first, d), xp.astype(inverse, d), xp.astype(counts, d)


def _unique_spec(x, axis, dtype):
    s = shape_of(x)
    n = 1
    for v in s if axis is None else (s[axis],):
        n = -1 if v < 0 or n < 0 else n * v
    d = dtypes.convert_dtype(dtype)
    vals = (-1,) if axis is None else _with_dim(s, axis, -1)
    return (Spec(vals, dtype_of(x)), Spec((-1,), d), Spec((n,), d), Spec((-1,), d))


@op("unique")
class Unique:
    """Sorted unique values (or rows along ``axis``) with first indices, inverse and counts."""

    multi_output = True
    grad = None

    def infer(x, axis, dtype):
        return _unique_spec(x, axis, dtype)

    def kernel(xp, x, axis, dtype):
        return _unique(xp, x, axis, dtype, consecutive=False)


@op("unique_consecutive")
class UniqueConsecutive:
    """Collapse runs of equal values (or rows along ``axis``); also inverse and counts."""

    multi_output = True
    grad = None

    def infer(x, axis, dtype):
        return _unique_spec(x, axis, dtype)

    def kernel(xp, x, axis, dtype):
        return _unique(xp, x, axis, dtype, consecutive=True)


@op("searchsorted")
class SearchSorted:
    """Insertion points of ``values`` into the innermost dim of ``sorted_sequence``."""

    def infer(sorted_sequence, values, right, out_int32):
        return Spec(shape_of(values), dtypes.int32 if out_int32 else dtypes.int64)

    def kernel(xp, sorted_sequence, values, right, out_int32):
        d = xp.int32 if out_int32 else xp.int64
        if sorted_sequence.ndim == 1:
            side = "right" if right else "left"
            return xp.astype(xp.searchsorted(sorted_sequence, values, side=side), d)
        seq = xp.expand_dims(sorted_sequence, axis=-2)
        v = xp.expand_dims(values, axis=-1)
        before = seq <= v if right else seq < v
        return xp.astype(xp.sum(xp.astype(before, xp.int64), axis=-1), d)

    grad = None


# ---- public functions ---------------------------------------------------------------------


def _axis(x, axis, name):
    return normalize_axis(int(axis), x.ndim, name)


def _sorted(x, axis, descending):
    if x.ndim == 0:
        from autostatic_runtime.ops.manipulation import reshape

        v, i = ArgSort(reshape(x, [1]), axis=0, descending=bool(descending))
        return reshape(v, []), reshape(i, [])
    return ArgSort(x, axis=_axis(x, axis, "sort"), descending=bool(descending))


def sort(
    x: Any, axis: int = -1, descending: bool = False, stable: bool = False, name: str | None = None
):
    """``x`` sorted along ``axis`` (always stably; gradients flow to the original positions)."""
    return _sorted(x, axis, descending)[0]


def argsort(
    x: Any, axis: int = -1, descending: bool = False, stable: bool = False, name: str | None = None
):
    """The int64 indices that sort ``x`` along ``axis`` (ties keep their input order)."""
    return _sorted(x, axis, descending)[1]


def topk(
    x: Any,
    k: Any,
    axis: int | None = None,
    largest: bool = True,
    sorted: bool = True,
    name: str | None = None,
):
    """The ``k`` largest (``largest=False``: smallest) values along ``axis`` (default -1) and
    their int64 indices, best first."""
    from autostatic_runtime.ops.manipulation import _int

    axis = _axis(x, -1 if axis is None else axis, "topk")
    k = _int(k)  # a tensor k must be known while building (a constant or a known dim)
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= n and n >= 0:
        raise _err(
            "topk",
            f"k={k} is out of range for dim {axis} of shape {list(x.shape)} "
            f"(size {n}); use 0 <= k <= {n}",
        )
    return TopK(x, k=k, axis=axis, largest=bool(largest))


def kthvalue(
    x: Any, k: Any, axis: int | None = None, keepdim: bool = False, name: str | None = None
):
    """The ``k``-th smallest value along ``axis`` (default -1; k is 1-based) and its index."""
    from autostatic_runtime.ops.manipulation import _int

    axis = _axis(x, -1 if axis is None else axis, "kthvalue")
    k = _int(k)
    n = x.shape[axis]
    if not 1 <= k <= n and n >= 0:
        raise _err(
            "kthvalue",
            f"k={k} is out of range for dim {axis} of shape "
            f"{list(x.shape)} (size {n}); use 1 <= k <= {n}",
        )
    return KthValue(x, k=k, axis=axis, keepdim=bool(keepdim))


def median(
    x: Any,
    axis: int | None = None,
    keepdim: bool = False,
    mode: str = "avg",
    name: str | None = None,
):
    """The median along ``axis`` (all elements when None). With an even count, ``mode='avg'``
    averages the two middle values (result float32, or float64 for float64 input) and
    ``mode='min'`` takes the lower one (and, with an axis, also returns its index)."""
    from autostatic_runtime.ops.elementwise import cast
    from autostatic_runtime.ops.manipulation import flatten, reshape

    if mode not in ("avg", "min"):
        raise OpError("median", f"mode must be 'avg' or 'min', got {mode!r}", user_location())
    if mode == "avg" and x.dtype != dtypes.float64 and x.dtype != dtypes.float32:
        x = cast(x, dtypes.float32)
    src = x
    flat = axis is None
    x, ax = (flatten(x), 0) if flat else (x, _axis(x, axis, "median"))
    n = x.shape[ax]
    if n <= 0:
        why = "is empty" if n == 0 else "has an unknown size (the middle is needed to build)"
        raise _err("median", f"dim {ax} of shape {list(src.shape)} {why}")
    keep = bool(keepdim) and not flat
    lo, idx = KthValue(x, k=(n + 1) // 2, axis=ax, keepdim=keep)
    if mode == "avg" and n % 2 == 0:
        lo = (lo + KthValue(x, k=n // 2 + 1, axis=ax, keepdim=keep)[0]) * 0.5
    if flat and keepdim:
        lo = reshape(lo, [1] * src.ndim)
    return (lo, idx) if mode == "min" and not flat else lo


def _unique_call(opdef, x, flags, axis, dtype, name):
    if axis is not None:
        axis = _axis(x, axis, name)
    outs = opdef(x, axis=axis, dtype=dtypes.convert_dtype(dtype))
    picked = [o for o, want in zip(outs[1:], flags, strict=True) if want]
    return outs[0] if not picked else tuple([outs[0]] + picked)


def unique(
    x: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    dtype: Any = "int64",
    name: str | None = None,
):
    """Sorted unique elements (of the flattened ``x``, or unique slices along ``axis``).

    Optionally also returns, in this order, the index of each value's first occurrence, the
    inverse (where each input element went) and the counts.
    """
    flags = (return_index, return_inverse, return_counts)
    return _unique_call(Unique, x, flags, axis, dtype, "unique")


def unique_consecutive(
    x: Any,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    dtype: Any = "int64",
    name: str | None = None,
):
    """Collapse consecutive runs of equal elements (or slices along ``axis``); optionally also
    returns the inverse and the run lengths."""
    flags = (False, return_inverse, return_counts)
    return _unique_call(UniqueConsecutive, x, flags, axis, dtype, "unique_consecutive")


def searchsorted(
    sorted_sequence: Any,
    values: Any,
    out_int32: bool = False,
    right: bool = False,
    name: str | None = None,
):
    """Where ``values`` would be inserted in the innermost dim of ``sorted_sequence`` to keep
    it sorted (``right=True``: after equal elements). Leading dims of both must match."""
    from autostatic_runtime.ops.elementwise import cast

    seq, v = sorted_sequence, values
    if seq.ndim > 1 and list(seq.shape[:-1]) != list(v.shape[:-1]):
        raise _err(
            "searchsorted",
            f"the leading dims of sorted_sequence {list(seq.shape)} and "
            f"values {list(v.shape)} differ; they must match (or use a 1-D sequence)",
        )
    if seq.dtype != v.dtype:
        d = dtypes.promote(seq.dtype, v.dtype)
        seq, v = (seq if seq.dtype == d else cast(seq, d)), (v if v.dtype == d else cast(v, d))
    return SearchSorted(seq, v, right=bool(right), out_int32=bool(out_int32))


def bucketize(
    x: Any,
    sorted_sequence: Any,
    out_int32: bool = False,
    right: bool = False,
    name: str | None = None,
):
    """The bucket of each element of ``x`` in the 1-D ``sorted_sequence`` (see searchsorted)."""
    if sorted_sequence.ndim != 1:
        raise _err(
            "bucketize", f"sorted_sequence must be 1-D, got shape {list(sorted_sequence.shape)}"
        )
    return searchsorted(sorted_sequence, x, out_int32=out_int32, right=right)

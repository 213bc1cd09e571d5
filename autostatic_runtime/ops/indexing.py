"""Indexing: ``x[key]``, ``x[key] = v``, gather/scatter, masks, ``one_hot``.

A key is split into a *template* of plain data (an attr a Program can serialize) and the
index tensors (positional inputs). Template items: an int, ``("slice", start, stop, step)``,
``"newaxis"``, ``"..."`` and ``("tensor", k)`` for the k-th index tensor (integer or bool).
A trailing ``"..."`` is always present, so every key names every axis. Kernels rebuild the
key; keys holding arrays go through the backend's ``xp.getitem`` extra (NumPy's advanced
indexing, or a generic take-based form elsewhere).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.errors import DTypeError, ShapeError, user_location
from autostatic_runtime.ops.broadcast import reduce_as
from autostatic_runtime.ops.registry import (
    Spec,
    broadcast,
    dtype_of,
    normalize_axis,
    numel,
    op,
    shape_of,
)
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "getitem", "setitem", "gather", "gather_nd", "scatter", "scatter_nd_add", "index_select",
    "masked_fill", "masked_select", "nonzero", "take_along_axis", "put_along_axis", "one_hot",
    "index_add",
]  # fmt: skip


_bcast = broadcast  # the along-axis functions have a parameter called broadcast


class IndexShapeError(ShapeError, IndexError):
    """An index is out of range or does not fit the tensor (also an ``IndexError``)."""


def _index_error(message: str) -> IndexShapeError:
    return IndexShapeError("getitem", message, user_location())


# ---- keys: templates and their shapes -------------------------------------------------------


def _is_tensor_item(t) -> bool:
    return type(t) is tuple and t[0] == "tensor"


def _key(template: tuple, arrays: tuple) -> tuple:
    """The backend key for a template and its index arrays."""
    return tuple(
        (arrays[t[1]] if t[0] == "tensor" else slice(t[1], t[2], t[3]))
        if type(t) is tuple
        else None
        if t == "newaxis"
        else Ellipsis
        if t == "..."
        else t
        for t in template
    )


def _slice_int(v: Any) -> int | None:
    return None if v is None else operator.index(v)


def _index_tensor(k: Any):
    from autostatic_runtime.creation import to_tensor

    t = k if isinstance(k, TensorLike) else to_tensor(k)
    if not isinstance(k, TensorLike) and t.dtype.is_floating and t.size == 0:
        t = to_tensor(k, dtype="int64")
    if not (t.dtype.is_integer or t.dtype == dtypes.bool_):
        raise DTypeError(
            "getitem", f"index tensors must be integer or bool, got {t.dtype}", user_location()
        )
    return t


def parse_key(key: Any) -> tuple[tuple, list]:
    """Split an indexing key into (template, index tensors)."""
    if type(key) is int:  # the commonest key, x[i]
        return (key, "..."), []
    items, tensors = [], []
    ellipsis = False
    for k in key if type(key) is tuple else (key,):
        t = type(k)
        if t is int:
            items.append(k)
        elif t is slice:
            a, b, c = k.start, k.stop, k.step
            if c is not None and operator.index(c) == 0:
                raise ValueError("slice step cannot be zero")
            if not (
                (a is None or type(a) is int)
                and (b is None or type(b) is int)
                and (c is None or type(c) is int)
            ):
                a, b, c = _slice_int(a), _slice_int(b), _slice_int(c)
            items.append(("slice", a, b, c))
        elif k is None:
            items.append("newaxis")
        elif k is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            items.append("...")
        elif isinstance(k, (bool, np.bool_)):
            raise TypeError("a Python bool is not a valid index; use a bool tensor as a mask")
        elif isinstance(k, Tensor) and k.ndim == 0 and k.dtype.is_integer:
            items.append(int(k.item()))  # an eager 0-D integer tensor indexes like an int
        elif isinstance(k, (TensorLike, list, tuple, np.ndarray)):
            items.append(("tensor", len(tensors)))
            tensors.append(_index_tensor(k))
        else:
            try:
                items.append(operator.index(k))
            except TypeError:
                raise TypeError(
                    f"invalid index {k!r} of type {type(k).__name__}: use ints, "
                    "slices, None, ..., lists or integer/bool tensors"
                ) from None
    if not ellipsis:
        items.append("...")
    return tuple(items), tensors


def _expand(shape: tuple, template: tuple, idx_shapes: list) -> list:
    """Template items with the ellipsis expanded: (item, [dims of x it indexes])."""

    def width(t):
        if t in ("newaxis", "..."):
            return 0
        if _is_tensor_item(t) and idx_shapes[t[1]][1]:
            return len(idx_shapes[t[1]][0])
        return 1

    used = sum(width(t) for t in template)
    if used > len(shape):
        raise _index_error(
            f"too many indices for a tensor of shape {list(shape)}: {used} axes indexed"
        )
    out, d = [], 0
    for t in template:
        if t == "...":
            for _ in range(len(shape) - used):
                out.append((("slice", None, None, None), [d]))
                d += 1
        else:
            w = width(t)
            out.append((t, list(range(d, d + w))))
            d += w
    return out


def getitem_shape(shape: tuple, template: tuple, idx_shapes: list) -> tuple:
    """The shape of ``x[key]`` (NumPy's rules); ``idx_shapes``: (shape, is_bool) per tensor."""
    entries = _expand(shape, template, idx_shapes)
    advanced = any(_is_tensor_item(t) for t, _ in entries)
    out, adv_pos, adv_shapes = [], [], []
    for pos, (t, dims) in enumerate(entries):
        if t == "newaxis":
            out.append(1)
        elif type(t) is int:
            n = shape[dims[0]]
            if n >= 0 and not -n <= t < n:
                raise _index_error(
                    f"index {t} is out of range for dim {dims[0]} of size {n} "
                    f"(tensor shape {list(shape)})"
                )
            if advanced:
                adv_pos.append(pos)
                adv_shapes.append(())
        elif t[0] == "slice":
            n = shape[dims[0]]
            out.append(len(range(*slice(t[1], t[2], t[3]).indices(n))) if n >= 0 else -1)
        else:
            ishape, is_bool = idx_shapes[t[1]]
            if is_bool:
                for d, m in zip(dims, ishape, strict=True):
                    if -1 not in (m, shape[d]) and m != shape[d]:
                        raise _index_error(
                            f"boolean mask of shape {list(ishape)} does not match the tensor's "
                            f"shape {list(shape)} at dim {d} ({m} != {shape[d]})"
                        )
                ishape = (-1,)
            adv_pos.append(pos)
            adv_shapes.append(tuple(ishape))
        if not advanced or not (type(t) is int or _is_tensor_item(t)):
            continue
        out.append(None)  # placeholder where the advanced block may go
    if not advanced:
        return tuple(d for d in out if d is not None)
    try:
        block = list(broadcast(*adv_shapes, op="getitem"))
    except ShapeError:
        raise _index_error(
            "index tensors cannot be broadcast together: shapes "
            + ", ".join(str(list(s)) for s in adv_shapes)
        ) from None
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    first = out.index(None)
    rest = [d for d in out if d is not None]
    if adjacent:
        return tuple(rest[:first] + block + rest[first:])
    return tuple(block + rest)


def _check_as_eager(x: Any, idx: tuple, key: tuple) -> None:
    """Raise the ``IndexShapeError`` eager indexing raises for this key when a kernel's index
    is out of range: a 0-D integer index tensor is an int eagerly (``parse_key``), which the
    shape rules check; a program gets it as an index array."""
    items, specs = [], []
    for t in key:
        if _is_tensor_item(t):
            a = idx[t[1]]
            kind = str(a.dtype)  # (array-api-strict's dtypes have no .kind)
            if a.ndim == 0 and "int" in kind:
                items.append(int(a))
                continue
            items.append(("tensor", len(specs)))
            specs.append((tuple(a.shape), "bool" in kind))
        else:
            items.append(t)
    getitem_shape(tuple(x.shape), tuple(items), specs)


def _idx_specs(idx: tuple) -> list:
    return [(shape_of(t), dtype_of(t) == dtypes.bool_) for t in idx]


# ---- getitem / setitem ops ---------------------------------------------------------------


@op("getitem")
class GetItem:
    """``x[key]``: ``key`` is a template, the index tensors follow ``x``."""

    def infer(x, *idx, key):
        return Spec(getitem_shape(shape_of(x), key, _idx_specs(idx)), dtype_of(x))

    def kernel(xp, x, *idx, key):
        if idx:
            try:
                return xp.getitem(x, _key(key, idx))
            except IndexError:
                _check_as_eager(x, idx, key)
                raise
        return x[_key(key, idx)]

    def grad(g, out, x, *idx, key):
        return (GetItemGrad(g, x, *idx, key=key),) + (None,) * len(idx)


@op("getitem_grad")
class GetItemGrad:
    """Zeros shaped like ``x`` with ``g`` accumulated at ``key`` (the backward of getitem)."""

    def infer(g, x, *idx, key):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, *idx, key):
        return xp.index_put(x.shape, g.dtype, _key(key, idx), g)

    def grad(gg, out, g, x, *idx, key):
        return (GetItem(gg, *idx, key=key), None) + (None,) * len(idx)


@op("set_value")
class SetItem:
    """A copy of ``x`` with ``x[key] = value`` (``value``: a tensor or a Python scalar)."""

    def infer(x, value, *idx, key):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, value, *idx, key):
        try:
            return xp.setitem(x, _key(key, idx), value)
        except IndexError:
            if not isinstance(value, (bool, int, float)):  # eager checks a tensor's key
                _check_as_eager(x, idx, key)
            raise

    def grad(g, out, x, value, *idx, key):
        gx = SetItem(g, 0.0, *idx, key=key)
        gv = reduce_as(GetItem(g, *idx, key=key), value) if isinstance(value, TensorLike) else None
        return (gx, gv) + (None,) * len(idx)


def getitem(x: Any, key: Any):
    """``x[key]`` with NumPy semantics: ints, slices, None, ..., int lists/tensors, bool masks.

    While tracing, slice bounds may be traced ints (``x[:, :n]``): those dims go through a
    ``slice`` op whose bounds are read when the program runs."""
    if type(key) is tuple or type(key) is slice:
        from autostatic_runtime.ops.shape_tensor import traced_slices

        x, key = traced_slices(x, key)
    template, tensors = parse_key(key)
    return GetItem(x, *tensors, key=template)


def setitem(x: Any, key: Any, value: Any):
    """``x[key] = value``: rebinds ``x`` to a new version (the old one stays in the graph).

    ``value`` (a scalar, tensor or array-like) is cast to ``x``'s dtype and broadcast.
    """
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.ops.elementwise import cast

    template, tensors = parse_key(key)
    d = x.dtype
    if isinstance(value, TensorLike):
        if value.dtype != d:
            value = cast(value, d)
        target = getitem_shape(tuple(x.shape), template, _idx_specs(tensors))
        extra = value.ndim - len(target)
        if extra > 0 and all(n == 1 for n in value.shape[:extra]):
            value = GetItem(value, key=(0,) * extra + ("...",))  # NumPy drops leading 1s
    elif isinstance(value, (bool, int, float)):
        value = bool(value) if d == dtypes.bool_ else int(value) if d.is_integer else float(value)
    else:
        value = to_tensor(value, dtype=d)
    new = SetItem(x._snapshot() if hasattr(x, "_snapshot") else x, value, *tensors, key=template)
    return x._replace(new)


# ---- gather / scatter -----------------------------------------------------------------------


def _flat(xp, index):
    return index if index.ndim == 1 else xp.reshape(index, (-1,))


@op("gather")
class Gather:
    """Rows of ``x`` at ``index`` along ``axis`` (index dims replace that axis)."""

    def infer(x, index, axis):
        s = shape_of(x)
        return Spec(s[:axis] + shape_of(index) + s[axis + 1 :], dtype_of(x))

    def kernel(xp, x, index, axis):
        out = xp.take(x, _flat(xp, index), axis=axis)
        if index.ndim != 1:
            shape = tuple(x.shape)
            out = xp.reshape(out, shape[:axis] + tuple(index.shape) + shape[axis + 1 :])
        return out

    def grad(g, out, x, index, axis):
        from autostatic_runtime.creation import zeros_like

        return IndexAdd(zeros_like(x), index, g, axis=axis), None


@op("index_add")
class IndexAdd:
    """``x`` plus ``value`` added at ``index`` along ``axis`` (repeated indices accumulate)."""

    def infer(x, index, value, axis):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, index, value, axis):
        if index.ndim != 1:
            value = xp.reshape(value, tuple(x.shape[:axis]) + (-1,) + tuple(x.shape[axis + 1 :]))
        return xp.index_add(x, axis, _flat(xp, index), value)

    def grad(g, out, x, index, value, axis):
        return g, None, Gather(g, index, axis=axis)


@op("scatter")
class Scatter:
    """Rows of ``x`` at ``index`` set to ``updates`` (or to their sums: ``overwrite=False``)."""

    def infer(x, index, updates, overwrite):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, index, updates, overwrite):
        index = _flat(xp, index)
        if overwrite:
            return xp.setitem(x, (index, Ellipsis), updates)
        n = x.shape[0]
        hits = xp.index_add(
            xp.zeros((n,), dtype=x.dtype), 0, index, xp.ones((index.shape[0],), dtype=x.dtype)
        )
        hit = xp.reshape(hits > 0, (n,) + (1,) * (x.ndim - 1))
        return xp.index_add(xp.where(hit, xp.zeros_like(x), x), 0, index, updates)

    def grad(g, out, x, index, updates, overwrite):
        from autostatic_runtime.creation import zeros_like

        gx = Scatter(g, index, zeros_like(updates), overwrite=True)
        return gx, None, Gather(g, index, axis=0)


def _linear(xp, x_shape, index):
    """Flat positions (over the first k dims of x) of the k-tuples in ``index[..., :k]``."""
    index = xp.astype(index, xp.int64)
    k = index.shape[-1]
    lin = xp.zeros(tuple(index.shape[:-1]), dtype=xp.int64)
    for i in range(k):
        n = x_shape[i]
        part = index[..., i]
        lin = lin * n + xp.where(part < 0, part + n, part)
    size = 1
    for d in x_shape[:k]:
        size *= d
    return xp.reshape(lin, (-1,)), (size,) + tuple(x_shape[k:])


@op("gather_nd")
class GatherNd:
    """``x[index[..., 0], ..., index[..., k-1]]`` for an index of shape ``[..., k]``."""

    def infer(x, index):
        si, sx = shape_of(index), shape_of(x)
        k = si[-1]
        return Spec(si[:-1] + (sx[k:] if k >= 0 else (-1,)), dtype_of(x))

    def kernel(xp, x, index):
        lin, flat_shape = _linear(xp, tuple(x.shape), index)
        out = xp.take(xp.reshape(x, flat_shape), lin, axis=0)
        return xp.reshape(out, tuple(index.shape[:-1]) + flat_shape[1:])

    def grad(g, out, x, index):
        from autostatic_runtime.creation import zeros_like

        return ScatterNdAdd(zeros_like(x), index, g), None


@op("scatter_nd_add")
class ScatterNdAdd:
    """``x`` plus ``updates`` accumulated at the k-tuples of ``index`` (shape ``[..., k]``)."""

    def infer(x, index, updates):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, index, updates):
        lin, flat_shape = _linear(xp, tuple(x.shape), index)
        flat = xp.reshape(x, flat_shape)
        out = xp.index_add(flat, 0, lin, xp.reshape(updates, (-1,) + flat_shape[1:]))
        return xp.reshape(out, x.shape)

    def grad(g, out, x, index, updates):
        return g, None, GatherNd(g, index)


def _err(name: str, message: str) -> ShapeError:
    return ShapeError(name, message, user_location())


def _check_shape(name: str, what: str, value, want: tuple) -> None:
    got = tuple(value.shape)
    if len(got) != len(want) or any(g != w and g >= 0 and w >= 0 for g, w in zip(got, want)):
        raise _err(name, f"{what} must have shape {list(want)}, got {list(value.shape)}")


def _like(v, x):
    """``v`` cast to ``x``'s dtype when it differs."""
    from autostatic_runtime.ops.elementwise import cast

    return v if v.dtype == x.dtype else cast(v, x.dtype)


def _axis(x, axis, name):
    if isinstance(axis, TensorLike):
        axis = axis.item()
    return normalize_axis(int(axis), x.ndim, name)


def _int_index(index, name):
    from autostatic_runtime.creation import to_tensor

    t = index if isinstance(index, TensorLike) else to_tensor(index, dtype="int64")
    if not t.dtype.is_integer:
        raise DTypeError(name, f"index must be an integer tensor, got {t.dtype}", user_location())
    return t


def gather(x: Any, index: Any, axis: Any = None, name: str | None = None):
    """Slices of ``x`` at ``index`` along ``axis`` (default 0), as ``paddle.gather``."""
    axis = _axis(x, 0 if axis is None else axis, "gather")
    return Gather(x, _int_index(index, "gather"), axis=axis)


def index_select(x: Any, index: Any, axis: int = 0, name: str | None = None):
    """Slices of ``x`` at the 1-D ``index`` along ``axis``."""
    index = _int_index(index, "index_select")
    if index.ndim != 1:
        raise _err("index_select", f"index must be 1-D, got shape {list(index.shape)}")
    return Gather(x, index, axis=_axis(x, axis, "index_select"))


def index_add(x: Any, index: Any, axis: int, value: Any, name: str | None = None):
    """``x`` with ``value`` added at the 1-D ``index`` along ``axis`` (duplicates accumulate)."""
    axis = _axis(x, axis, "index_add")
    index = _int_index(index, "index_add")
    want = tuple(x.shape[:axis]) + tuple(index.shape) + tuple(x.shape[axis + 1 :])
    _check_shape("index_add", f"value (x's shape with dim {axis} set to len(index))", value, want)
    return IndexAdd(x, index, _like(value, x), axis=axis)


def scatter(x: Any, index: Any, updates: Any, overwrite: bool = True, name: str | None = None):
    """Rows of ``x`` at ``index`` replaced by ``updates`` (Paddle's ``scatter``).

    ``overwrite=False`` zeroes the indexed rows, then adds every update (duplicates sum).
    """
    index = _int_index(index, "scatter")
    if index.ndim == 0:  # one row: updates has x's shape without its first dim
        index, updates = getitem(index, None), getitem(updates, None)
    _check_shape(
        "scatter",
        f"updates (for index {index.shape}, x {x.shape})",
        updates,
        (index.size,) + tuple(x.shape[1:]),
    )
    return Scatter(x, index, _like(updates, x), overwrite=bool(overwrite))


def _nd_check(x, index, name):
    index = _int_index(index, name)
    if index.ndim == 0 or index.shape[-1] > x.ndim:
        raise _err(
            name,
            f"index of shape {index.shape} must be [..., k] with k <= {x.ndim} "
            f"(the rank of x, shape {x.shape})",
        )
    return index


def gather_nd(x: Any, index: Any, name: str | None = None):
    """Elements (or slices) of ``x`` at the k-tuples in ``index`` (shape ``[..., k]``)."""
    return GatherNd(x, _nd_check(x, index, "gather_nd"))


def scatter_nd_add(x: Any, index: Any, updates: Any, name: str | None = None):
    """``x`` with ``updates`` added at the k-tuples of ``index`` (duplicates accumulate)."""
    index = _nd_check(x, index, "scatter_nd_add")
    want = tuple(index.shape[:-1]) + tuple(x.shape[index.shape[-1] :])
    _check_shape("scatter_nd_add", "updates", updates, want)
    return ScatterNdAdd(x, index, _like(updates, x))


# ---- masks -----------------------------------------------------------------------------------


def masked_fill(x: Any, mask: Any, value: Any, name: str | None = None):
    """``x`` with ``value`` where ``mask`` is true (``mask`` broadcasts to ``x``)."""
    from autostatic_runtime.ops.elementwise import cast, where

    d = x.dtype
    if isinstance(value, TensorLike):
        value = value if value.dtype == d else cast(value, d)
    elif isinstance(value, (bool, int, float)):  # keep x's dtype, as Paddle does
        value = bool(value) if d == dtypes.bool_ else int(value) if d.is_integer else float(value)
    return where(mask, value, x)


def masked_select(x: Any, mask: Any, name: str | None = None):
    """The elements of ``x`` where ``mask`` is true, as a 1-D tensor (both broadcast)."""
    from autostatic_runtime.ops.broadcast import broadcast_to
    from autostatic_runtime.ops.elementwise import _as_bool

    mask = _as_bool(mask)
    shape = broadcast(x, mask, op="masked_select")
    if tuple(x.shape) != shape:
        x = broadcast_to(x, shape)
    if tuple(mask.shape) != shape:
        mask = broadcast_to(mask, shape)
    return GetItem(x, mask, key=(("tensor", 0), "..."))


@op("where_index")
class NonZero:
    """Indices of the non-zero elements, shape ``[count, rank]`` (int64)."""

    def infer(x):
        return Spec((-1, len(shape_of(x))), dtypes.int64)

    def kernel(xp, x):
        if x.ndim == 0:
            n = xp.nonzero(xp.reshape(x, (1,)))[0].shape[0]
            return xp.zeros((n, 0), dtype=xp.int64)
        return xp.stack([xp.astype(i, xp.int64) for i in xp.nonzero(x)], axis=1)

    grad = None


def nonzero(x: Any, as_tuple: bool = False):
    """Indices of non-zero elements: ``[count, rank]``, or per-axis ``[count, 1]`` tensors."""
    out = NonZero(x)
    if not as_tuple:
        return out
    if x.ndim <= 1:
        return (out,)
    return tuple(getitem(out, (slice(None), slice(i, i + 1))) for i in range(x.ndim))


# ---- along an axis -------------------------------------------------------------------------


@op("take_along_axis")
class TakeAlongAxis:
    """``arr`` picked at ``indices`` along ``axis`` (both have the same rank)."""

    def infer(arr, indices, axis):
        return Spec(shape_of(indices), dtype_of(arr))

    def kernel(xp, arr, indices, axis):
        return xp.take_along_axis(arr, indices, axis=axis)

    def grad(g, out, arr, indices, axis):
        from autostatic_runtime.creation import zeros_like

        return PutAlongAxis(zeros_like(arr), indices, g, axis=axis, reduce="add"), None


def _along_key(xp, indices, axis):
    """An advanced key addressing ``arr[..., indices[i], ...]`` position by position."""
    key = []
    for d, n in enumerate(indices.shape):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * indices.ndim
            shape[d] = n
            key.append(xp.reshape(xp.arange(n, dtype=indices.dtype), tuple(shape)))
    return tuple(key)


@op("put_along_axis")
class PutAlongAxis:
    """``arr`` with ``values`` put at ``indices`` along ``axis``: assign, add or mul."""

    def infer(arr, indices, values, axis, reduce):
        return Spec(shape_of(arr), dtype_of(arr))

    def kernel(xp, arr, indices, values, axis, reduce):
        values = xp.broadcast_to(values, indices.shape)
        if reduce == "assign":
            return xp.setitem(arr, _along_key(xp, indices, axis), values)
        sub = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))
        if reduce == "add":
            pos = xp.reshape(xp.arange(numel(tuple(arr.shape)), dtype=xp.int64), arr.shape)
            lin = xp.take_along_axis(pos[sub], xp.astype(indices, xp.int64), axis=axis)
            flat = xp.index_add(
                xp.reshape(arr, (-1,)), 0, xp.reshape(lin, (-1,)), xp.reshape(values, (-1,))
            )
            return xp.reshape(flat, arr.shape)
        # mul: one index per fibre at a time, so no step has repeated targets
        shape = [1] * arr.ndim
        shape[axis] = arr.shape[axis]
        ids = xp.reshape(xp.arange(arr.shape[axis], dtype=indices.dtype), tuple(shape))
        part = arr[sub]
        for j in range(indices.shape[axis]):
            at = tuple(slice(j, j + 1) if d == axis else slice(None) for d in range(arr.ndim))
            part = xp.where(indices[at] == ids, part * values[at], part)
        return xp.setitem(arr, sub, part)

    def grad(g, out, arr, indices, values, axis, reduce):
        from autostatic_runtime.creation import ones_like, zeros_like

        picked = TakeAlongAxis(g, indices, axis=axis)
        if reduce == "assign":
            garr = PutAlongAxis(g, indices, zeros_like(values), axis=axis, reduce="assign")
            return garr, None, reduce_as(picked, values)
        if reduce == "add":
            return g, None, reduce_as(picked, values)
        garr = g * PutAlongAxis(ones_like(arr), indices, values, axis=axis, reduce="mul")
        gv = TakeAlongAxis(g * out, indices, axis=axis) / values
        return garr, None, reduce_as(gv, values)


def _along_args(arr, indices, axis, name):
    axis = _axis(arr, axis, name)
    indices = _int_index(indices, name)
    if indices.ndim != arr.ndim:
        raise _err(
            name, f"indices (shape {indices.shape}) must have the rank of arr (shape {arr.shape})"
        )
    return axis, indices


def take_along_axis(arr: Any, indices: Any, axis: int, broadcast: bool = True):
    """``arr`` picked at ``indices`` along ``axis``; the other dims broadcast (Paddle)."""
    from autostatic_runtime.ops.broadcast import broadcast_to

    axis, indices = _along_args(arr, indices, axis, "take_along_axis")
    if broadcast:
        sa, si = list(arr.shape), list(indices.shape)
        sa[axis] = si[axis] = 1
        common = list(_bcast(tuple(sa), tuple(si), op="take_along_axis"))
        want_i, want_a = list(common), list(common)
        want_i[axis], want_a[axis] = indices.shape[axis], arr.shape[axis]
        if list(indices.shape) != want_i:
            indices = broadcast_to(indices, want_i)
        if list(arr.shape) != want_a:
            arr = broadcast_to(arr, want_a)
    return TakeAlongAxis(arr, indices, axis=axis)


def put_along_axis(
    arr: Any,
    indices: Any,
    values: Any,
    axis: int,
    reduce: str = "assign",
    include_self: bool = True,
    broadcast: bool = True,
):
    """``arr`` with ``values`` (broadcast to ``indices``) put at ``indices`` along ``axis``.

    ``reduce``: ``'assign'`` (the last write wins), ``'add'`` or ``'mul'``/``'multiply'``.
    """
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.ops.elementwise import cast

    axis, indices = _along_args(arr, indices, axis, "put_along_axis")
    reduce = {"multiply": "mul"}.get(reduce, reduce)
    if reduce not in ("assign", "add", "mul"):
        raise ValueError(f"put_along_axis: reduce must be 'assign', 'add' or 'mul', got {reduce!r}")
    if not include_self:
        raise NotImplementedError("put_along_axis: include_self=False is not supported")
    if not isinstance(values, TensorLike):
        values = to_tensor(values, dtype=arr.dtype)
    elif values.dtype != arr.dtype:
        values = cast(values, arr.dtype)
    _bcast(tuple(values.shape), tuple(indices.shape), op="put_along_axis")
    for d, (m, n) in enumerate(zip(indices.shape, arr.shape, strict=True)):
        if d != axis and m > n:
            raise _err(
                "put_along_axis",
                f"indices (shape {indices.shape}) are larger than "
                f"arr (shape {arr.shape}) at dim {d}",
            )
    return PutAlongAxis(arr, indices, values, axis=axis, reduce=reduce)


# ---- one_hot ---------------------------------------------------------------------------------


@op("one_hot_v2")
class OneHot:
    """float32 one-hot rows for integer labels: shape ``x.shape + [num_classes]``."""

    def infer(x, num_classes):
        return Spec(shape_of(x) + (num_classes,), dtypes.float32)

    def kernel(xp, x, num_classes):
        hot = xp.expand_dims(x, axis=-1) == xp.arange(num_classes, dtype=x.dtype)
        return xp.astype(hot, xp.float32)

    grad = None


def one_hot(x: Any, num_classes: int, name: str | None = None):
    """One-hot float32 encoding of integer labels (labels outside [0, num_classes) give zeros)."""
    if isinstance(num_classes, TensorLike):
        num_classes = num_classes.item()
    if not x.dtype.is_integer:
        raise DTypeError("one_hot", f"expects integer labels, got {x.dtype}", user_location())
    return OneHot(x, num_classes=int(num_classes))

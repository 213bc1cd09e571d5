"""Shape manipulation: reshape, transpose, squeeze, concat/stack/split, tile, flip, roll, ...

Ops whose gradient only restores the input's shape (reshape, flatten, squeeze, unsqueeze)
use ``reshape_as(g, x)``, which takes ``x`` as an input rather than a shape attribute, so the
backward also works when static shapes hold -1.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import OpError, ShapeError, user_location
from autostatic_runtime.ops.registry import (
    Spec,
    dtype_of,
    normalize_axes,
    normalize_axis,
    numel,
    op,
    shape_of,
)
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "reshape", "transpose", "t", "moveaxis", "squeeze", "unsqueeze", "flatten", "concat",
    "stack", "unstack", "split", "chunk", "unbind", "tile", "flip", "roll",
    "repeat_interleave", "tril", "triu", "diagonal", "diag", "diag_embed", "shape",
]  # fmt: skip


def _err(op_name: str, message: str) -> ShapeError:
    return ShapeError(op_name, message, user_location())


def _host(v: Any) -> Any:
    """The Python value of a tensor: eager data, or the recorded value of a static constant."""
    if isinstance(v, Tensor):
        return v.tolist()
    const = getattr(v, "op", None)
    if const is not None and const.type == "assign_value":
        values = list(const.attrs["values"])
        return values if v.ndim else values[0]
    if const is not None and const.type == "fill_constant" and v.ndim <= 1:
        return [const.attrs["value"]] * numel(tuple(v.shape)) if v.ndim else const.attrs["value"]
    dim = _static_dim(const)
    if dim is not None and dim >= 0:  # shape(x)[i] of a dim known while building
        return dim
    raise OpError(
        "shape",
        f"{getattr(v, 'name', 'a tensor')} is only computed when the program "
        "runs, but shapes, axes and counts must be known while building it; pass "
        "Python ints (use -1 for an unknown dim)",
        user_location(),
    )


def _static_dim(const: Any) -> int | None:
    """The build-time value (-1 if unknown) of ``shape(x)[i]``, else None. An unknown dim is
    not folded to -1: ``split``/``tile`` would silently read it as "infer"/"-1 times"."""
    if const is None or const.type != "getitem" or not const.inputs:
        return None
    source = getattr(const.inputs[0], "op", None)
    key = const.attrs.get("key")
    if source is None or source.type != "shape" or not isinstance(key, tuple) or not key:
        return None
    if not isinstance(key[0], int) or isinstance(key[0], bool) or key[1:] not in ((), ("...",)):
        return None
    dims = tuple(source.inputs[0].shape)
    return dims[key[0]] if -len(dims) <= key[0] < len(dims) else None


def _int(v: Any) -> int:
    """An int from an int or a 1-element tensor."""
    if isinstance(v, TensorLike):
        v = _host(v)
        v = v[0] if isinstance(v, list) and len(v) == 1 else v
    return int(v)


def _ints(v: Any) -> tuple:
    """A tuple of ints from an int, a sequence (of ints or 1-element tensors) or a tensor."""
    if isinstance(v, TensorLike):
        v = _host(v)
    if isinstance(v, (list, tuple)):
        return tuple(_int(d) for d in v)
    return (int(v),)


def _same_spec(x, **attrs):
    return Spec(shape_of(x), dtype_of(x))


def _reshape_as_grad(g, out, x, **attrs):
    return ReshapeAs(g, x)


# ---- reshape family ---------------------------------------------------------------------


def _reshape_target(src: tuple, shape: tuple) -> tuple:
    """Resolve Paddle's reshape target: 0 copies the input dim, one -1 is inferred."""

    def fail(why: str):
        shown = f"a tensor of shape {list(src)} to {list(shape)}"
        raise _err("reshape", f"cannot reshape {shown}: {why}")

    if shape.count(-1) > 1:
        fail("only one dim may be -1")
    out = list(shape)
    for i, d in enumerate(shape):
        if d == 0:
            if i >= len(src):
                fail(f"0 at position {i} copies an input dim, but the input has {len(src)} dims")
            out[i] = src[i]
        elif d < -1:
            fail(f"dim {d} is negative")
    # dims copied by 0 cancel out, so -1 is inferred even when they are unknown
    copied = {i for i, d in enumerate(shape) if d == 0}
    j = shape.index(-1) if -1 in shape else None
    have = numel(tuple(d for i, d in enumerate(src) if i not in copied))
    want = numel(tuple(d for i, d in enumerate(out) if i not in copied and i != j))
    if have < 0 or want < 0:
        return tuple(out)
    n_in, n_out = numel(src), numel(tuple(d for i, d in enumerate(out) if i != j))
    if n_in < 0 or n_out < 0:
        n_in, n_out = have, want  # count only the dims not copied by 0
    if j is not None:
        if want == 0 or have % want:
            fail(
                f"{n_in} elements do not divide into dims of product {n_out}; choose dims "
                f"whose product divides {n_in}"
            )
        out[j] = have // want
    elif have != want:
        fail(
            f"{n_in} elements cannot fill {n_out}; the target must hold as many elements "
            "(use -1 for one dim to infer it)"
        )
    return tuple(out)


def _reshape_op(name: str, new_shape, doc: str):
    """Register a reshape-like op whose output shape is ``new_shape(x.shape, **attrs)``."""

    def infer(x, **attrs):
        return Spec(new_shape(shape_of(x), **attrs), dtype_of(x))

    def kernel(xp, x, **attrs):
        return xp.reshape(x, new_shape(tuple(x.shape), **attrs))

    body = {"infer": infer, "kernel": kernel, "grad": _reshape_as_grad, "__doc__": doc}
    return op(name)(type(name, (), body))


@op("reshape_as")
class ReshapeAs:
    """``x`` reshaped to ``target``'s shape (the backward of every reshape-like op)."""

    def infer(x, target):
        return Spec(shape_of(target), dtype_of(x))

    def kernel(xp, x, target):
        return xp.reshape(x, tuple(target.shape))

    def grad(g, out, x, target):
        return ReshapeAs(g, x), None


@op("reshape_dynamic")
class ReshapeDynamic:
    """``x`` reshaped to the dims in the 1-D int tensor ``shape``, known only when the program
    runs (``reshape(x, [x.shape[0], -1])`` with an unknown batch while tracing). ``static`` is
    the target as known while building (-1 for runtime dims); 0 copies an input dim and one
    -1 is inferred, as in ``reshape``."""

    def infer(x, shape, static=()):
        src = shape_of(x)
        return Spec(
            tuple(src[i] if d == 0 and i < len(src) else d for i, d in enumerate(static)),
            dtype_of(x),
        )

    def kernel(xp, x, shape, static=()):
        target = tuple(int(shape[i]) for i in range(shape.shape[0]))
        return xp.reshape(x, _reshape_target(tuple(x.shape), target))

    def grad(g, out, x, shape, static=()):
        return ReshapeAs(g, x), None


def _runtime_dim(d: Any) -> bool:
    """A symbolic dim computed only when the program runs (not a recorded constant)."""
    if not isinstance(d, TensorLike) or isinstance(d, Tensor):
        return False
    const = getattr(d, "op", None)
    if const is None:
        return True
    dim = _static_dim(const)
    return const.type not in ("assign_value", "fill_constant") and (dim is None or dim < 0)


def _reshape_dynamic(x: Any, dims: list) -> Any:
    from autostatic_runtime.ops.shape_tensor import shape_tensor

    static, tensor = shape_tensor(dims, "reshape")
    return ReshapeDynamic(x, tensor, static=static)


def _flatten_shape(src: tuple, start_axis: int, stop_axis: int) -> tuple:
    if not src:
        return (1,)
    return src[:start_axis] + (numel(src[start_axis : stop_axis + 1]),) + src[stop_axis + 1 :]


def _squeeze_shape(src: tuple, axis: tuple) -> tuple:
    """Drop the listed dims that are 1 (or unknown, as Paddle assumes at compile time)."""
    return tuple(d for i, d in enumerate(src) if not (i in axis and d in (1, -1)))


def _unsqueeze_shape(src: tuple, axis: tuple) -> tuple:
    """Insert size-1 dims one by one; each axis counts in the shape built so far."""
    out = list(src)
    for a in axis:
        r = len(out)
        if not -(r + 1) <= a <= r:
            raise _err(
                "unsqueeze",
                f"axis {a} is out of range for inserting into a tensor of "
                f"rank {r} (shape {list(out)}); use an axis in [{-(r + 1)}, {r}]",
            )
        out.insert(a + r + 1 if a < 0 else a, 1)
    return tuple(out)


Reshape = _reshape_op(
    "reshape",
    _reshape_target,
    "``x`` with a new ``shape`` (0 copies the input dim, one -1 is inferred).",
)
Flatten = _reshape_op(
    "flatten",
    _flatten_shape,
    "Merge dims ``start_axis..stop_axis`` (a 0-D tensor becomes shape [1]).",
)
Squeeze = _reshape_op(
    "squeeze",
    _squeeze_shape,
    "Remove the dims in ``axis`` that have size 1 (others are left alone).",
)
Unsqueeze = _reshape_op(
    "unsqueeze", _unsqueeze_shape, "Insert size-1 dims at ``axis``, one by one (as Paddle does)."
)


@op("transpose")
class Transpose:
    """Permute the dims of ``x`` by ``perm``."""

    def infer(x, perm):
        s = shape_of(x)
        if sorted(perm) != list(range(len(s))):
            raise _err(
                "transpose",
                f"perm {list(perm)} is not a permutation of the {len(s)} "
                f"dims of shape {list(s)}; list each of 0..{len(s) - 1} once",
            )
        return Spec(tuple(s[p] for p in perm), dtype_of(x))

    def kernel(xp, x, perm):
        return xp.permute_dims(x, perm)

    def grad(g, out, x, perm):
        inverse = tuple(sorted(range(len(perm)), key=lambda i: perm[i]))
        return Transpose(g, perm=inverse)


# ---- joining and splitting ----------------------------------------------------------------


def _joined(shapes: list, axis: int | None, op_name: str) -> list:
    """Merge equal-rank shapes dim by dim (-1 is unknown); dim ``axis`` may differ."""
    shown = ", ".join(str(list(s)) for s in shapes)
    if len({len(s) for s in shapes}) > 1:
        raise _err(
            op_name,
            f"inputs need the same rank, got shapes {shown}; reshape or unsqueeze them first",
        )
    out = []
    for i in range(len(shapes[0])):
        dims = {s[i] for s in shapes if s[i] >= 0}
        if i == axis:
            out.append(-1 if any(s[i] < 0 for s in shapes) else sum(s[i] for s in shapes))
            continue
        if len(dims) > 1:
            only = "" if axis is None else f" (only dim {axis}, the {op_name} axis, may differ)"
            raise _err(op_name, f"input shapes {shown} differ in dim {i}{only}")
        out.append(dims.pop() if dims else -1)
    return out


@op("concat")
class Concat:
    """Join tensors along an existing ``axis``."""

    def infer(*xs, axis):
        return Spec(tuple(_joined([shape_of(t) for t in xs], axis, "concat")), dtype_of(xs[0]))

    def kernel(xp, *xs, axis):
        return xp.concat(xs, axis=axis)

    def grad(g, out, *xs, axis):
        return ConcatGrad(g, *xs, axis=axis)


@op("concat_grad")
class ConcatGrad:
    """Split ``g`` along ``axis`` into pieces sized like ``xs`` (the backward of concat)."""

    multi_output = True

    def infer(g, *xs, axis):
        return tuple(Spec(shape_of(t), dtype_of(g)) for t in xs)

    def kernel(xp, g, *xs, axis):
        return _pieces(g, [t.shape[axis] for t in xs], axis)

    def grad(gs, out, g, *xs, axis):
        return (Concat(*gs, axis=axis),) + (None,) * len(xs)


def _pieces(a, sizes: list, axis: int) -> tuple:
    """Consecutive slices of ``a`` along ``axis`` with the given sizes."""
    lead = (slice(None),) * axis
    outs, start = [], 0
    for n in sizes:
        outs.append(a[lead + (slice(start, start + n), ...)])
        start += n
    return tuple(outs)


@op("stack")
class Stack:
    """Join same-shape tensors along a new ``axis``."""

    def infer(*xs, axis):
        s = _joined([shape_of(t) for t in xs], None, "stack")
        return Spec(tuple(s[:axis] + [len(xs)] + s[axis:]), dtype_of(xs[0]))

    def kernel(xp, *xs, axis):
        return xp.stack(xs, axis=axis)

    def grad(g, out, *xs, axis):
        return Unstack(g, axis=axis, num=len(xs))


@op("unstack")
class Unstack:
    """Split ``x`` into ``num`` tensors along ``axis``, removing that dim."""

    multi_output = True

    def infer(x, axis, num):
        s = shape_of(x)
        return (Spec(s[:axis] + s[axis + 1 :], dtype_of(x)),) * num

    def kernel(xp, x, axis, num):
        return tuple(xp.unstack(x, axis=axis))

    def grad(gs, out, x, axis, num):
        return Stack(*gs, axis=axis)


def _split_sizes(dim: int, axis: int, sections: tuple, num: int, shape: tuple) -> list:
    """Section sizes along an axis of size ``dim`` (-1 entries when ``dim`` is unknown)."""
    where = f"dim {axis} of shape {list(shape)} has size {dim}"
    if num:
        if dim < 0:
            return [-1] * num
        if dim % num:
            raise _err(
                "split",
                f"{where}, which cannot be split into {num} equal parts; pass "
                "a list of section sizes instead",
            )
        return [dim // num] * num
    if list(sections).count(-1) > 1 or any(s < -1 for s in sections):
        raise _err("split", f"sections {list(sections)} may hold one -1 and no other negatives")
    if dim < 0:
        return list(sections)
    known = sum(s for s in sections if s >= 0)
    if -1 in sections and known <= dim:
        return [dim - known if s == -1 else s for s in sections]
    if known != dim:
        raise _err(
            "split",
            f"sections {list(sections)} sum to {known} but {where}; make them "
            "add up (one may be -1 to take the rest)",
        )
    return list(sections)


@op("split")
class Split:
    """Split ``x`` along ``axis`` into ``num`` equal parts or pieces of sizes ``sections``."""

    multi_output = True

    def infer(x, axis, sections=(), num=0):
        s = shape_of(x)
        sizes = _split_sizes(s[axis], axis, sections, num, s)
        return tuple(Spec(s[:axis] + (n,) + s[axis + 1 :], dtype_of(x)) for n in sizes)

    def kernel(xp, x, axis, sections=(), num=0):
        s = tuple(x.shape)
        return _pieces(x, _split_sizes(s[axis], axis, sections, num, s), axis)

    def grad(gs, out, x, axis, sections=(), num=0):
        return Concat(*gs, axis=axis)


# ---- repetition, reordering ----------------------------------------------------------------


def _tile_shape(src: tuple, reps: tuple) -> tuple:
    n = max(len(src), len(reps))
    s = (1,) * (n - len(src)) + tuple(src)
    r = (1,) * (n - len(reps)) + tuple(reps)
    return tuple(-1 if d < 0 else d * k for d, k in zip(s, r, strict=True))


@op("tile")
class Tile:
    """Repeat ``x`` ``repeat_times[i]`` times along each dim (shapes are padded with 1s)."""

    def infer(x, repeat_times):
        return Spec(_tile_shape(shape_of(x), repeat_times), dtype_of(x))

    def kernel(xp, x, repeat_times):
        return xp.tile(x, repeat_times)

    def grad(g, out, x, repeat_times):
        return TileGrad(g, x, repeat_times=repeat_times)


@op("tile_grad")
class TileGrad:
    """Sum the tiles of ``g`` back to ``x``'s shape (the backward of tile)."""

    def infer(g, x, repeat_times):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, repeat_times):
        n = max(x.ndim, len(repeat_times))
        s = (1,) * (n - x.ndim) + tuple(x.shape)
        r = (1,) * (n - len(repeat_times)) + tuple(repeat_times)
        split = tuple(v for pair in zip(r, s, strict=True) for v in pair)
        summed = xp.sum(xp.reshape(g, split), axis=tuple(range(0, 2 * n, 2)))
        return xp.reshape(summed, tuple(x.shape))

    def grad(gg, out, g, x, repeat_times):
        return Tile(gg, repeat_times=repeat_times), None


@op("flip")
class Flip:
    """Reverse the order of elements along ``axis``."""

    infer = _same_spec

    def kernel(xp, x, axis):
        return xp.flip(x, axis=axis)

    def grad(g, out, x, axis):
        return Flip(g, axis=axis)


@op("roll")
class Roll:
    """Shift elements cyclically by ``shifts`` along ``axis`` (the flattened tensor if None)."""

    infer = _same_spec

    def kernel(xp, x, shifts, axis):
        return xp.roll(x, shifts[0] if axis is None else shifts, axis=axis)

    def grad(g, out, x, shifts, axis):
        return Roll(g, shifts=tuple(-s for s in shifts), axis=axis)


def _repeated(dim: int, repeats) -> int:
    if dim < 0:
        return -1
    return dim * repeats if isinstance(repeats, int) else sum(repeats)


@op("repeat_interleave")
class RepeatInterleave:
    """Repeat each element along ``axis`` ``repeats`` times (an int, or one count per element)."""

    def infer(x, repeats, axis):
        s = shape_of(x)
        return Spec(s[:axis] + (_repeated(s[axis], repeats),) + s[axis + 1 :], dtype_of(x))

    def kernel(xp, x, repeats, axis):
        return xp.repeat(x, repeats if isinstance(repeats, int) else xp.asarray(repeats), axis=axis)

    def grad(g, out, x, repeats, axis):
        return RepeatInterleaveGrad(g, x, repeats=repeats, axis=axis)


@op("repeat_interleave_grad")
class RepeatInterleaveGrad:
    """Sum the repeats of ``g`` back to ``x``'s shape (the backward of repeat_interleave)."""

    def infer(g, x, repeats, axis):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, repeats, axis):
        reps = repeats if isinstance(repeats, int) else xp.asarray(repeats)
        index = xp.repeat(xp.arange(x.shape[axis]), reps)
        return xp.index_add(xp.zeros(tuple(x.shape), dtype=g.dtype), axis, index, g)

    def grad(gg, out, g, x, repeats, axis):
        return RepeatInterleave(gg, repeats=repeats, axis=axis), None


# ---- triangles and diagonals ------------------------------------------------------------


@op("tril_triu")
class TrilTriu:
    """Keep the lower (``lower=True``) or upper triangle of the last two dims; zero the rest."""

    infer = _same_spec

    def kernel(xp, x, diagonal, lower):
        n, m = x.shape[-2], x.shape[-1]
        d = xp.reshape(xp.arange(m), (1, m)) - xp.reshape(xp.arange(n), (n, 1))
        keep = d <= diagonal if lower else d >= diagonal
        return xp.where(keep, x, xp.zeros_like(x))

    def grad(g, out, x, diagonal, lower):
        return TrilTriu(g, diagonal=diagonal, lower=lower)


def _diag_len(n: int, m: int, offset: int) -> int:
    if n < 0 or m < 0:
        return -1
    return max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))


def _diag_perm(ndim: int, axis1: int, axis2: int) -> tuple:
    return tuple(i for i in range(ndim) if i not in (axis1, axis2)) + (axis1, axis2)


def _diag_index(xp, n: int, m: int, offset: int):
    """Flat positions (in an n*m matrix) of the diagonal at ``offset``."""
    i = xp.arange(_diag_len(n, m, offset))
    return (i + max(-offset, 0)) * m + (i + max(offset, 0))


def _embed(xp, g, n: int, m: int, offset: int):
    """Zeros of shape (..., n, m) with ``g`` (shape (..., k)) on the diagonal at ``offset``."""
    lead = tuple(g.shape[:-1])
    flat = xp.zeros(lead + (n * m,), dtype=g.dtype)
    flat = xp.index_add(flat, len(lead), _diag_index(xp, n, m, offset), g)
    return xp.reshape(flat, lead + (n, m))


@op("diagonal")
class Diagonal:
    """The diagonal at ``offset`` of the planes (``axis1``, ``axis2``), as the last dim."""

    def infer(x, offset, axis1, axis2):
        s = shape_of(x)
        lead = tuple(d for i, d in enumerate(s) if i not in (axis1, axis2))
        return Spec(lead + (_diag_len(s[axis1], s[axis2], offset),), dtype_of(x))

    def kernel(xp, x, offset, axis1, axis2):
        y = xp.permute_dims(x, _diag_perm(x.ndim, axis1, axis2))
        n, m = y.shape[-2], y.shape[-1]
        flat = xp.reshape(y, tuple(y.shape[:-2]) + (n * m,))
        return xp.take(flat, _diag_index(xp, n, m, offset), axis=flat.ndim - 1)

    def grad(g, out, x, offset, axis1, axis2):
        return DiagonalGrad(g, x, offset=offset, axis1=axis1, axis2=axis2)


@op("diagonal_grad")
class DiagonalGrad:
    """Zeros shaped like ``x`` with ``g`` on the diagonal (the backward of diagonal)."""

    def infer(g, x, offset, axis1, axis2):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, offset, axis1, axis2):
        perm = _diag_perm(x.ndim, axis1, axis2)
        y = _embed(xp, g, x.shape[axis1], x.shape[axis2], offset)
        return xp.permute_dims(y, tuple(sorted(range(x.ndim), key=lambda i: perm[i])))

    def grad(gg, out, g, x, offset, axis1, axis2):
        return Diagonal(gg, offset=offset, axis1=axis1, axis2=axis2), None


@op("diag_embed")
class DiagEmbed:
    """Square matrices (last two dims) with the last dim of ``x`` on the diagonal at ``offset``."""

    def infer(x, offset):
        s = shape_of(x)
        m = -1 if s[-1] < 0 else s[-1] + abs(offset)
        return Spec(s[:-1] + (m, m), dtype_of(x))

    def kernel(xp, x, offset):
        m = x.shape[-1] + abs(offset)
        return _embed(xp, x, m, m, offset)

    def grad(g, out, x, offset):
        nd = len(shape_of(g))
        return Diagonal(g, offset=offset, axis1=nd - 2, axis2=nd - 1)


@op("shape")
class Shape:
    """The shape of ``x`` as a 1-D int32 tensor."""

    def infer(x):
        return Spec((len(shape_of(x)),), dtypes.int32)

    def kernel(xp, x):
        return xp.asarray(tuple(x.shape), dtype=xp.to_dtype(dtypes.int32))

    grad = None


# ---- public functions ---------------------------------------------------------------------


def reshape(x: Any, shape: Any, name: str | None = None):
    """``x`` with a new shape: 0 copies the input dim, one -1 is inferred from the rest."""
    if isinstance(shape, (list, tuple)) and any(_runtime_dim(d) for d in shape):
        return _reshape_dynamic(x, list(shape))
    if isinstance(shape, TensorLike) and not isinstance(shape, Tensor):
        from autostatic_runtime.ops.shape_tensor import shape_tensor

        dynamic = shape_tensor(shape, "reshape")  # a whole 1-D shape tensor
        if dynamic is not None:
            return ReshapeDynamic(x, dynamic[1], static=dynamic[0])
    target = _ints(shape)
    _reshape_target(tuple(x.shape), target)  # fail early, at the caller's line
    return Reshape(x, shape=target)


def transpose(x: Any, perm: Any, name: str | None = None):
    """Permute the dims of ``x``: output dim ``i`` is input dim ``perm[i]``."""
    perm = _ints(perm)
    if len(perm) != x.ndim:
        raise _err(
            "transpose",
            f"perm {list(perm)} has {len(perm)} entries but the tensor "
            f"has shape {list(x.shape)}; give one entry per dim",
        )
    return Transpose(x, perm=tuple(normalize_axis(p, x.ndim, "transpose") for p in perm))


def t(input: Any, name: str | None = None):
    """Transpose a 2-D tensor; 0-D and 1-D tensors are returned as they are."""
    if input.ndim > 2:
        raise _err(
            "t",
            f"expects a tensor of at most 2 dims, got shape {list(input.shape)}; "
            "use transpose(x, perm) for more dims",
        )
    return input if input.ndim < 2 else Transpose(input, perm=(1, 0))


def moveaxis(x: Any, source: Any, destination: Any, name: str | None = None):
    """Move dims ``source`` to positions ``destination`` (ints or equal-length lists)."""
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise _err(
            "moveaxis", f"source {list(src)} and destination {list(dst)} need the same length"
        )
    src = [normalize_axis(a, x.ndim, "moveaxis") for a in src]
    dst = [normalize_axis(a, x.ndim, "moveaxis") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise _err("moveaxis", f"repeated axis in source {src} or destination {dst}")
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return Transpose(x, perm=tuple(perm))


def squeeze(x: Any, axis: Any = None, name: str | None = None):
    """Remove size-1 dims: all of them (``axis`` None or empty), or those in ``axis`` (others
    are left alone)."""
    if axis is None or (isinstance(axis, (list, tuple)) and not axis):
        if -1 in x.shape:
            raise _err(
                "squeeze",
                f"which dims of shape {list(x.shape)} have size 1 is not "
                "known while building the program; pass axis explicitly",
            )
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = normalize_axes(_ints(axis), x.ndim, "squeeze")
    return Squeeze(x, axis=axes)


def unsqueeze(x: Any, axis: Any, name: str | None = None):
    """Insert size-1 dims at ``axis`` (an int or list, applied in order as in Paddle)."""
    axes = _ints(axis)
    _unsqueeze_shape(tuple(x.shape), axes)
    return Unsqueeze(x, axis=axes)


def flatten(x: Any, start_axis: int = 0, stop_axis: int = -1, name: str | None = None):
    """Merge dims ``start_axis..stop_axis`` into one (a 0-D tensor becomes shape [1])."""
    start = normalize_axis(int(start_axis), x.ndim, "flatten")
    stop = normalize_axis(int(stop_axis), x.ndim, "flatten")
    if start > stop:
        raise _err(
            "flatten",
            f"start_axis {start_axis} comes after stop_axis {stop_axis} for "
            f"shape {list(x.shape)}; swap them",
        )
    return Flatten(x, start_axis=start, stop_axis=stop)


def _tensor_list(x: Any, op_name: str) -> list:
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.ops.elementwise import cast

    if isinstance(x, TensorLike) or not isinstance(x, (list, tuple)) or not x:
        raise _err(op_name, "expects a non-empty list or tuple of tensors")
    ts = [v if isinstance(v, TensorLike) else to_tensor(v) for v in x]
    d = ts[0].dtype
    for v in ts[1:]:
        d = dtypes.promote(d, v.dtype)
    return [v if v.dtype == d else cast(v, d) for v in ts]


def concat(x: Any, axis: Any = 0, name: str | None = None):
    """Join a list of tensors along an existing ``axis`` (dtypes are promoted)."""
    if _is_tensor_array(x):
        return x.concat(_int(axis))
    ts = _tensor_list(x, "concat")
    if ts[0].ndim == 0:
        raise _err("concat", "cannot concatenate 0-D tensors; use stack instead")
    axis = normalize_axis(_int(axis), ts[0].ndim, "concat")
    _joined([tuple(v.shape) for v in ts], axis, "concat")
    return Concat(*ts, axis=axis)


def stack(x: Any, axis: int = 0, name: str | None = None):
    """Join a list of same-shape tensors along a new ``axis``."""
    if _is_tensor_array(x):
        return x.stack(_int(axis))
    ts = _tensor_list(x, "stack")
    axis = normalize_axis(_int(axis), ts[0].ndim + 1, "stack")
    _joined([tuple(v.shape) for v in ts], None, "stack")
    return Stack(*ts, axis=axis)


def _is_tensor_array(x: Any) -> bool:
    """A list appended to in a symbolic loop (``static/tensor_array.py``)."""
    return type(x).__name__ == "TensorArray" and hasattr(x, "buffer")


def unstack(x: Any, axis: int = 0, num: int | None = None):
    """Split ``x`` along ``axis`` into a list of tensors with that dim removed."""
    axis = normalize_axis(int(axis), x.ndim, "unstack")
    dim = x.shape[axis]
    if num is not None and dim >= 0 and int(num) != dim:
        raise _err("unstack", f"num={num} but dim {axis} of shape {list(x.shape)} has size {dim}")
    return list(Unstack(x, axis=axis, num=dim if num is None else int(num)))


def unbind(input: Any, axis: int = 0):
    """Split ``input`` along ``axis`` into a list of tensors with that dim removed."""
    return unstack(input, axis)


def split(x: Any, num_or_sections: Any, axis: Any = 0, name: str | None = None):
    """Split ``x`` along ``axis`` into a list: an int gives equal parts, a list gives sizes
    (one size may be -1 to take the rest)."""
    axis = normalize_axis(_int(axis), x.ndim, "split")
    if isinstance(num_or_sections, (list, tuple)):
        num, sections = 0, _ints(num_or_sections)
    else:
        num, sections = _int(num_or_sections), ()
        if num < 1:
            raise _err("split", f"num_or_sections={num} must be a positive int or a list")
    _split_sizes(x.shape[axis], axis, sections, num, tuple(x.shape))
    return list(Split(x, axis=axis, sections=sections, num=num))


def chunk(x: Any, chunks: int, axis: Any = 0, name: str | None = None):
    """Split ``x`` into ``chunks`` equal parts along ``axis`` (returns a list)."""
    return split(x, _int(chunks), axis)


def tile(x: Any, repeat_times: Any, name: str | None = None):
    """Repeat ``x`` ``repeat_times[i]`` times along dim ``i`` (shapes padded with leading 1s)."""
    from autostatic_runtime.ops.shape_tensor import shape_tensor, tile_dynamic

    dynamic = shape_tensor(repeat_times, "tile")
    if dynamic is not None:
        return tile_dynamic(x, *dynamic)
    reps = _ints(repeat_times)
    if any(r < 0 for r in reps):
        raise _err("tile", f"repeat_times {list(reps)} must not be negative")
    return Tile(x, repeat_times=reps)


def flip(x: Any, axis: Any, name: str | None = None):
    """Reverse the order of elements along ``axis`` (an int or list)."""
    return Flip(x, axis=normalize_axes(_ints(axis), x.ndim, "flip"))


def roll(x: Any, shifts: Any, axis: Any = None, name: str | None = None):
    """Shift elements cyclically along ``axis`` (over the flattened tensor when None)."""
    shifts = _ints(shifts)
    if axis is None:
        if len(shifts) != 1:
            raise _err("roll", f"with axis=None, shifts must be one int, got {list(shifts)}")
        return Roll(x, shifts=shifts, axis=None)
    axes = tuple(normalize_axis(a, x.ndim, "roll") for a in _ints(axis))
    if len(axes) != len(shifts):
        raise _err("roll", f"shifts {list(shifts)} and axis {list(axes)} need the same length")
    return Roll(x, shifts=shifts, axis=axes)


def repeat_interleave(x: Any, repeats: Any, axis: Any = None, name: str | None = None):
    """Repeat each element ``repeats`` times along ``axis`` (the flattened tensor when None);
    ``repeats`` is an int or one count per element."""
    if axis is None:
        x, axis = flatten(x), 0
    axis = normalize_axis(_int(axis), x.ndim, "repeat_interleave")
    reps = _ints(repeats)
    if any(r < 0 for r in reps):
        raise _err("repeat_interleave", f"repeats {list(reps)} must not be negative")
    if len(reps) == 1:
        reps = reps[0]
    elif x.shape[axis] >= 0 and len(reps) != x.shape[axis]:
        raise _err(
            "repeat_interleave",
            f"{len(reps)} repeat counts for dim {axis} of shape "
            f"{list(x.shape)}; give one count per element or a single int",
        )
    return RepeatInterleave(x, repeats=reps, axis=axis)


def _triangle(x, diagonal, lower, name):
    if x.ndim < 2:
        raise _err(name, f"expects a tensor of at least 2 dims, got shape {list(x.shape)}")
    return TrilTriu(x, diagonal=int(diagonal), lower=lower)


def tril(x: Any, diagonal: int = 0, name: str | None = None):
    """The lower triangle of the last two dims (below ``diagonal``); the rest is zero."""
    return _triangle(x, diagonal, True, "tril")


def triu(x: Any, diagonal: int = 0, name: str | None = None):
    """The upper triangle of the last two dims (above ``diagonal``); the rest is zero."""
    return _triangle(x, diagonal, False, "triu")


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, name: str | None = None):
    """The diagonal at ``offset`` of the planes (``axis1``, ``axis2``), as a new last dim."""
    if x.ndim < 2:
        raise _err("diagonal", f"expects a tensor of at least 2 dims, got shape {list(x.shape)}")
    a1 = normalize_axis(int(axis1), x.ndim, "diagonal")
    a2 = normalize_axis(int(axis2), x.ndim, "diagonal")
    if a1 == a2:
        raise _err("diagonal", f"axis1 and axis2 are both dim {a1}; give two different dims")
    return Diagonal(x, offset=int(offset), axis1=a1, axis2=a2)


def diag_embed(input: Any, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """Matrices with the last dim of ``input`` on their diagonal at ``offset``."""
    out = DiagEmbed(input, offset=int(offset))
    nd = out.ndim
    d1 = normalize_axis(int(dim1), nd, "diag_embed")
    d2 = normalize_axis(int(dim2), nd, "diag_embed")
    if (d1, d2) == (nd - 2, nd - 1):
        return out
    return moveaxis(out, [nd - 2, nd - 1], [d1, d2])


def diag(x: Any, offset: int = 0, padding_value: Any = 0, name: str | None = None):
    """A 1-D ``x`` becomes a square matrix with ``x`` on the diagonal at ``offset`` (other
    entries ``padding_value``); a 2-D ``x`` gives its diagonal at ``offset``."""
    if x.ndim == 2:
        return Diagonal(x, offset=int(offset), axis1=0, axis2=1)
    if x.ndim != 1:
        raise _err("diag", f"expects a 1-D or 2-D tensor, got shape {list(x.shape)}")
    out = DiagEmbed(x, offset=int(offset))
    if padding_value:
        from autostatic_runtime.creation import ones_like
        from autostatic_runtime.ops.elementwise import where

        mask = DiagEmbed(ones_like(x, "float32"), offset=int(offset)) > 0
        out = where(mask, out, padding_value)
    return out


def shape(input: Any):
    """The shape of ``input`` as a 1-D int32 tensor (Paddle's ``paddle.shape``)."""
    return Shape(input)

"""Shapes known only when the program runs: ops that read their shape from a tensor.

Eagerly every shape is a list of Python ints. While tracing, a dim can be a traced value
(``x.shape[0]`` or ``rt.shape(x)[0]`` of an input declared ``InputSpec([None, 3])``, or
arithmetic on it), and a whole shape can be a 1-D int Variable (``rt.shape(x)``). Paddle
turns those into ``ShapeTensor`` inputs; here each such op has a ``*_dynamic`` form taking a
1-D int64 shape tensor, with ``static`` (the shape as known while building, -1 for dims known
only at run time) as an attribute, so inference keeps what is known:

    rt.zeros([x.shape[0], 3])    # static mode, x: [-1, 3]
    # -> fill_constant_dynamic(concat([reshape(shape(x)[0], [1]), [3]]); static=(-1, 3))

``shape_tensor(shape)`` builds that tensor from a list mixing ints and traced dims (or from a
1-D int Variable) and returns ``None`` when every dim is a Python int, so the public creators
(``full``/``zeros``/``expand``/``tile``/``arange``/``slice``...) keep their plain ops then.
"""

from __future__ import annotations

import builtins
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import ShapeError, user_location
from autostatic_runtime.ops.registry import Spec, dtype_of, normalize_axis, op, shape_of
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = ["slice"]


def _symbolic(v: Any) -> bool:
    return isinstance(v, TensorLike) and not isinstance(v, Tensor)


def shape_tensor(shape: Any, op_name: str) -> tuple[tuple, Any] | None:
    """``(static_dims, int64 1-D tensor)`` for a shape holding dims computed only when the
    program runs (else ``None``): each runtime dim is -1 in ``static_dims``."""
    from autostatic_runtime.ops.elementwise import cast
    from autostatic_runtime.ops.manipulation import Reshape, _int, _runtime_dim, concat

    if _symbolic(shape):
        const = getattr(shape, "op", None)
        if const is not None and const.type in ("assign_value", "fill_constant"):
            return None  # a constant: its values are known while building
        if shape.ndim != 1 or shape.shape[0] < 0:
            raise ShapeError(
                op_name,
                f"a shape tensor must be 1-D with a known length, got shape {shape.shape}",
                user_location(),
            )
        if not shape.dtype.is_integer:
            raise ShapeError(
                op_name, f"a shape tensor must hold ints, got {shape.dtype}", user_location()
            )
        static = (-1,) * shape.shape[0]
        if const is not None and const.type == "shape":  # rt.shape(x): x's known dims
            static = tuple(const.inputs[0].shape)
        return static, cast(shape, dtypes.int64)
    if not isinstance(shape, (list, tuple)) or not any(_runtime_dim(d) for d in shape):
        return None
    from autostatic_runtime.creation import full

    parts, static = [], []
    for d in shape:
        if _runtime_dim(d):
            if d.size not in (1, -1):
                raise ShapeError(
                    op_name,
                    f"a dim of the shape has shape {d.shape}; give one number",
                    user_location(),
                )
            parts.append(Reshape(cast(d, dtypes.int64), shape=(1,)))
            static.append(-1)
        else:
            value = _int(d) if isinstance(d, TensorLike) else int(d)
            static.append(value)
            parts.append(full([1], value, dtypes.int64))
    return tuple(static), concat(parts)


def _dims(xp, shape) -> tuple:
    """The Python ints of a 1-D shape array (read from the device when it is a GPU array)."""
    return tuple(int(shape[i]) for i in range(shape.shape[0]))


@op("fill_constant_dynamic")
class FillConstantDynamic:
    """A tensor filled with ``value``, its shape read from the 1-D int ``shape`` tensor."""

    def infer(shape, value, dtype, static=()):
        return Spec(tuple(static), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, value, dtype, static=()):
        return xp.full(_dims(xp, shape), value, dtype=xp.to_dtype(dtypes.convert_dtype(dtype)))

    grad = None


def _random_dynamic(name: str, draw):
    """A random op whose shape is read from a 1-D int tensor (``rt.randn(x.shape)`` with an
    unknown batch); ``draw(xp, shape, **attrs)`` is the static op's kernel."""

    def infer(shape, dtype, static=(), **attrs):
        return Spec(tuple(static), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, dtype, static=(), **attrs):
        return draw(xp, _dims(xp, shape), dtype=dtype, **attrs)

    body = {"infer": infer, "kernel": kernel, "grad": None, "__doc__": draw.__doc__}
    return op(name)(type(name, (), body))


UniformRandomDynamic = _random_dynamic(
    "uniform_random_dynamic",
    lambda xp, shape, dtype, min, max: xp.random_uniform(shape, min, max, dtype),
)
GaussianRandomDynamic = _random_dynamic(
    "gaussian_random_dynamic",
    lambda xp, shape, dtype, mean, std: xp.random_normal(shape, mean, std, dtype),
)
RandIntDynamic = _random_dynamic(
    "randint_dynamic",
    lambda xp, shape, dtype, low, high: xp.random_integers(shape, low, high, dtype),
)


@op("expand_dynamic")
class ExpandDynamic:
    """``x`` broadcast to the dims of the 1-D int ``shape`` tensor (-1 keeps ``x``'s dim)."""

    def infer(x, shape, static=()):
        src = shape_of(x)
        lead = len(static) - len(src)
        out = list(static)
        for i, d in enumerate(src):
            if out[i + lead] < 0 and d != 1:
                out[i + lead] = d
        return Spec(tuple(out), dtype_of(x))

    def kernel(xp, x, shape, static=()):
        from autostatic_runtime.ops.broadcast import _expand_shape

        return xp.broadcast_to(x, _expand_shape(tuple(x.shape), _dims(xp, shape)))

    def grad(g, out, x, shape, static=()):
        from autostatic_runtime.ops.broadcast import reduce_as

        return reduce_as(g, x), None


@op("range")
class Range:
    """``arange(start, end, step)`` with bounds held in (1-element) tensors: the length is known
    only when the program runs."""

    def infer(start, end, step, dtype):
        return Spec((-1,), dtypes.convert_dtype(dtype))

    def kernel(xp, start, end, step, dtype):
        d = dtypes.convert_dtype(dtype)
        conv = int if d.is_integer else float
        a, b, s = (conv(xp.reshape(v, (-1,))[0]) for v in (start, end, step))
        return xp.arange(a, b, s, dtype=xp.to_dtype(d))

    grad = None


@op("slice")
class Slice:
    """``x[starts[i]:ends[i]]`` along each of ``axes``, bounds read from 1-D int tensors
    (Paddle's ``slice`` with ``StartsTensor``/``EndsTensor``); ``static`` is the out shape."""

    def infer(x, starts, ends, axes, static=()):
        return Spec(tuple(static), dtype_of(x))

    def kernel(xp, x, starts, ends, axes, static=()):
        return x[_slice_key(tuple(x.shape), axes, _dims(xp, starts), _dims(xp, ends))]

    def grad(g, out, x, starts, ends, axes, static=()):
        return SliceGrad(g, x, starts, ends, axes=axes), None, None


@op("slice_grad")
class SliceGrad:
    """Zeros shaped like ``x`` holding ``g`` at the slice (the backward of ``slice``)."""

    def infer(g, x, starts, ends, axes):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, x, starts, ends, axes):
        key = _slice_key(tuple(x.shape), axes, _dims(xp, starts), _dims(xp, ends))
        return xp.index_put(x.shape, g.dtype, key, g)

    def grad(gg, out, g, x, starts, ends, axes):
        return Slice(gg, starts, ends, axes=axes, static=shape_of(g)), None, None, None


def _slice_key(shape: tuple, axes: tuple, starts: tuple, ends: tuple) -> tuple:
    """The key cutting ``starts[i]:ends[i]`` along ``axes[i]``, bounds clipped to known dims
    (the array API leaves out-of-range bounds unspecified)."""
    key = [builtins.slice(None)] * len(shape)  # this module defines Paddle's ``slice``
    for a, s, e in zip(axes, starts, ends):
        cut = builtins.slice(s, e)
        key[a] = builtins.slice(*cut.indices(shape[a])[:2]) if shape[a] >= 0 else cut
    return tuple(key)


# ---- public functions ------------------------------------------------------------------


def slice(input: Any, axes: Any, starts: Any, ends: Any):  # noqa: A001  (Paddle's name)
    """``input`` sliced along ``axes`` from ``starts`` to ``ends`` (Paddle's ``paddle.slice``);
    starts and ends are lists of ints or traced ints, or 1-D int tensors; an end past the
    dim is clipped, negative bounds count from the end."""
    from autostatic_runtime.ops.indexing import getitem
    from autostatic_runtime.ops.manipulation import _ints

    axes = tuple(normalize_axis(a, input.ndim, "slice") for a in _ints(axes))
    n = len(axes)
    dyn_s, dyn_e = shape_tensor(_as_list(starts), "slice"), shape_tensor(_as_list(ends), "slice")
    if dyn_s is None and dyn_e is None:
        s, e = _ints(starts), _ints(ends)
        if not len(s) == len(e) == n:
            raise ShapeError(
                "slice", f"axes {list(axes)}, starts and ends need one entry each", user_location()
            )
        return getitem(input, _slice_key(tuple(input.shape), axes, s, e))
    starts_t = dyn_s[1] if dyn_s else _const_dims(_ints(starts))
    ends_t = dyn_e[1] if dyn_e else _const_dims(_ints(ends))
    if not starts_t.shape[0] == ends_t.shape[0] == n:
        raise ShapeError(
            "slice", f"axes {list(axes)}, starts and ends need one entry each", user_location()
        )
    static = list(shape_of(input))
    for i, a in enumerate(axes):
        s = dyn_s[0][i] if dyn_s else _ints(starts)[i]
        e = dyn_e[0][i] if dyn_e else _ints(ends)[i]
        d = static[a]
        static[a] = len(range(d)[s:e]) if min(s, e) >= 0 and d >= 0 else -1
    return Slice(input, starts_t, ends_t, axes=axes, static=tuple(static))


_END = 2**62  # an open end: Python slicing clips it to the dim


def traced_slices(x: Any, key: Any) -> tuple:
    """``(x', key')`` for ``x[key]``: the dims sliced with traced bounds (step 1) are cut by
    one ``slice`` op and become ``:`` in ``key'``; other keys come back unchanged."""
    items = key if type(key) is tuple else (key,)
    axes, starts, ends, rest = [], [], [], []
    for i, k in enumerate(items):
        if type(k) is builtins.slice and (_symbolic(k.start) or _symbolic(k.stop)):
            if k.step not in (None, 1) or not all(
                type(p) is int or type(p) is builtins.slice for p in items[:i]
            ):
                return x, key  # let parse_key report it
            axes.append(i)
            starts.append(0 if k.start is None else k.start)
            ends.append(_END if k.stop is None else k.stop)
            rest.append(builtins.slice(None))
        else:
            rest.append(k)
    if not axes:
        return x, key
    return slice(x, axes, starts, ends), tuple(rest)


def _as_list(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _const_dims(values: tuple):
    from autostatic_runtime.creation import to_tensor

    return to_tensor(list(values), dtype="int64")


def tile_dynamic(x: Any, static: tuple, reps: Any):
    """``tile`` with repeat counts known only when the program runs: ``x`` (padded to the
    counts' rank) gets a length-1 axis before each dim, is expanded to ``(r0, d0, r1, d1, ...)``
    and reshaped to ``(r0 * d0, ...)``; its gradient comes from those ops."""
    from autostatic_runtime.ops.broadcast import expand
    from autostatic_runtime.ops.manipulation import _reshape_dynamic, reshape, unsqueeze
    from autostatic_runtime.ops.manipulation import shape as shape_op

    n = max(x.ndim, len(static))
    if x.ndim < n:
        x = reshape(x, [1] * (n - x.ndim) + [0] * x.ndim)
    lead = n - len(static)
    src, dims = shape_of(x), shape_op(x)
    pairs = []
    for i in range(n):
        r = 1 if i < lead else reps[i - lead] if static[i - lead] < 0 else static[i - lead]
        pairs += [r, dims[i] if src[i] < 0 else src[i]]
    expanded = expand(unsqueeze(x, [2 * i for i in range(n)]), pairs)
    return _reshape_dynamic(expanded, [pairs[2 * i] * pairs[2 * i + 1] for i in range(n)])

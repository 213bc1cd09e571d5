"""Tensor creation: ``to_tensor``, ``zeros``, ``full``, ``arange``, random tensors, ``seed``.

Each creator is an op (no gradient), so a static program can contain it too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autostatic_runtime import backends, dtypes
from autostatic_runtime.errors import OpError, user_location
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.ops.registry import Spec, op
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "to_tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
    "empty_like", "arange", "linspace", "eye", "rand", "randn", "randint", "uniform", "normal",
    "randperm", "seed", "assign",
]  # fmt: skip


def _dtype(dtype: Any, default: dtypes.DType | None = None) -> dtypes.DType:
    return (default or dtypes.get_default_dtype()) if dtype is None else dtypes.convert_dtype(dtype)


def _known_dim(d: Any) -> int:
    """An int dim; a traced ``shape(x)[i]`` whose value is known while building counts."""
    if isinstance(d, TensorLike) and not isinstance(d, Tensor):
        from autostatic_runtime.ops.manipulation import _int, _static_dim

        const = getattr(d, "op", None)
        dim = _static_dim(const)
        if dim is not None and dim >= 0:
            return dim
        if const is not None and const.type in ("assign_value", "fill_constant"):
            return _int(d)  # a traced constant (a loop's start value): its recorded value
    return int(d)


def _shape(shape: Any, op_name: str) -> tuple:
    """A shape tuple from an int, a sequence of ints/1-element tensors, or a 1-D tensor."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(_known_dim(d) for d in shape)
    except TypeError:
        raise OpError(
            op_name, f"shape must be a list of ints, got {shape!r}", user_location()
        ) from None
    if any(d < 0 for d in out):
        hint = (
            ""
            if in_dynamic_mode()
            else "; a dim unknown while building a program is -1 in x.shape: use "
            "rt.shape(x)[i] for its value when the program runs"
        )
        raise OpError(op_name, f"shape {list(out)} has a negative dim{hint}", user_location())
    return out


_PYTHON_DATA = frozenset({list, tuple, int, float, bool, complex})


def _to_array(data: Any, dtype: Any, place: Any):
    """A backend array for ``data`` on ``place`` (default: the current device)."""
    backend = backends.current_backend() if place is None else _backend_for_place(place)
    want = None if dtype is None else dtypes.convert_dtype(dtype)
    if isinstance(data, Tensor):
        arr = data._data
        src = backends.backend_of(arr)
        if src is not backend:
            arr = backend.from_numpy(src.to_numpy(arr))
        arr = backend.ns.asarray(arr, copy=True)
        return arr if want is None else backend.ns.astype(arr, backend.to_dtype(want))
    if type(data) in backend.array_types and want is None:
        return data
    host_kind = isinstance(data, (np.ndarray, np.generic))
    if not (host_kind or type(data) in backend.array_types or type(data) in _PYTHON_DATA):
        src = backends.backend_of(data)
        if type(data) in src.array_types:  # another backend's array (CuPy's on a CPU place)
            data, host_kind = src.to_numpy(data), True
    if not host_kind and type(data) not in backend.array_types:
        arr = np.asarray(data)
        if arr.dtype == np.float64 and want is None:
            want = dtypes.get_default_dtype()  # Python floats become the default float dtype
        if arr.dtype.kind in "OUS":
            raise OpError(
                "to_tensor",
                f"cannot make a tensor from {type(data).__name__} data "
                f"({arr.dtype}); use numbers or nested lists of numbers",
                user_location(),
            )
        data = arr
    if type(data) in backend.array_types:
        arr = data
    else:
        arr = backend.from_numpy(np.asarray(data))
    if want is not None and dtypes.convert_dtype(arr.dtype) != want:
        arr = backend.ns.astype(arr, backend.to_dtype(want))
    return arr


def _backend_for_place(place: Any):
    name = str(place).lower()
    if name.startswith("cpu"):
        return backends.get_backend("numpy")
    if name.startswith(("gpu", "cuda")):
        return backends.get_backend("cupy")
    return backends.get_backend(name)


def to_tensor(
    data: Any, dtype: Any = None, place: Any = None, stop_gradient: bool = True
) -> Tensor:
    """A new tensor holding ``data`` (numbers, nested lists, NumPy arrays or tensors).

    Python floats become ``float32`` (the default dtype), ints ``int64``, bools ``bool``;
    NumPy arrays keep their dtype. ``data`` is copied. ``place`` is ``"cpu"``/``"gpu:0"`` or
    ``rt.CPUPlace()``/``rt.CUDAPlace(0)``. In a list, 1-element tensors mixed with numbers
    count as numbers.

    While building a program, ``data`` may be a traced Variable or a (nested) list mixing
    traced values and numbers: the result is computed by ops (``assign``/``cast``, ``stack``)
    and, as eagerly (Paddle's ``to_tensor`` copies and detaches), the result is a new leaf:
    no gradient flows back to the traced values (``rt.assign`` keeps them connected).
    """
    if not in_dynamic_mode():
        if _holds_traced(data):
            out = _traced_to_tensor(_numbers_in_lists(data), dtype).detach()
            out.stop_gradient = stop_gradient  # a new leaf, as eagerly
            return out
        arr = np.asarray(data.numpy() if isinstance(data, Tensor) else data)
        d = _dtype(
            dtype,
            dtypes.convert_dtype(arr.dtype)
            if arr.dtype != np.float64 or isinstance(data, np.ndarray)
            else None,
        )
        out = AssignValue(shape=tuple(arr.shape), dtype=d, values=tuple(arr.reshape(-1).tolist()))
        out.stop_gradient = stop_gradient
        return out
    try:
        arr = _to_array(data, dtype, place)
    except ValueError:  # ragged: 1-element tensors mixed with numbers in a list?
        mixed = _numbers_in_lists(data)
        if mixed is data:
            raise
        arr = _to_array(mixed, dtype, place)
    t = Tensor._rebuild(arr, None, 0)
    t.stop_gradient = stop_gradient
    if isinstance(data, np.ndarray) or isinstance(data, Tensor):
        # np.asarray shares memory; Paddle's to_tensor copies
        if isinstance(data, np.ndarray) and t._data is data:
            t._data = data.copy()
    return t


def _is_traced(v: Any) -> bool:
    return isinstance(v, TensorLike) and not isinstance(v, Tensor)


def _holds_traced(data: Any) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_holds_traced(v) for v in data)
    return _is_traced(data)


def _numbers_in_lists(data: Any) -> Any:
    """In a list whose items differ in shape, 1-element tensors become 0-D (so
    ``[rt.max(x).reshape([1]), 2.0]`` is a 2-vector, as Paddle's ``to_tensor`` gives)."""
    if not isinstance(data, (list, tuple)) or not data:
        return data
    items = [_numbers_in_lists(v) for v in data]
    tensors = [v for v in items if isinstance(v, TensorLike)]
    if not tensors:
        return items if any(a is not b for a, b in zip(items, data)) else data
    shapes = {tuple(v.shape) if isinstance(v, TensorLike) else np.shape(v) for v in items}
    if len(shapes) > 1 and all(v.size in (1, -1) and v.ndim <= 1 for v in tensors):
        from autostatic_runtime.ops.manipulation import reshape

        items = [reshape(v, []) if isinstance(v, TensorLike) and v.ndim else v for v in items]
    return items


def _traced_to_tensor(data: Any, dtype: Any) -> Any:
    """``to_tensor`` of traced values: ``assign``/``cast`` of one Variable, ``stack`` of a
    (nested) list; the dtype is the one eager ``to_tensor`` gives on the same values."""
    from autostatic_runtime.ops.elementwise import assign as _assign
    from autostatic_runtime.ops.elementwise import cast
    from autostatic_runtime.ops.manipulation import stack

    if dtype is None:
        arr = np.asarray(_placeholders(data))
        d = dtypes.get_default_dtype() if arr.dtype == np.float64 else arr.dtype
        want = dtypes.convert_dtype(d)
    else:
        want = _dtype(dtype)

    def build(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return stack([build(e) for e in v])
        if isinstance(v, TensorLike):
            return _assign(v) if v.dtype == want else cast(v, want)
        return full([], v, want)

    return build(data)


def _placeholders(data: Any) -> Any:
    """``data`` with each tensor replaced by zeros of its dtype (unknown dims as 1)."""
    if isinstance(data, (list, tuple)):
        return [_placeholders(v) for v in data]
    if isinstance(data, TensorLike):
        if data._weak and not data.shape:  # a Python number eagerly (a range item, len())
            kind = dtypes.kind(data.dtype)
            return False if kind == 0 else 0 if kind == 1 else 0.0
        shape = tuple(1 if d < 0 else d for d in data.shape)
        return np.zeros(shape, dtype=str(data.dtype))
    return data


def assign(x: Any, output: Tensor | None = None) -> Tensor:
    """Copy ``x`` (a tensor, array-like, or a list mixing tensors and numbers) into a new
    tensor, or into ``output``. A list holding tensors is stacked (differentiably)."""
    from autostatic_runtime.ops.elementwise import assign as _assign

    x = _numbers_in_lists(x)
    if isinstance(x, TensorLike):
        value = _assign(x)
    elif _holds_traced(x) or _holds_tensor(x):
        value = _traced_to_tensor(x, None)
    else:
        value = to_tensor(x)
    if output is None:
        return value
    output.set_value(value)
    return output


def _holds_tensor(data: Any) -> bool:
    if isinstance(data, (list, tuple)):
        return any(_holds_tensor(v) for v in data)
    return isinstance(data, TensorLike)


# ---- creation ops ----------------------------------------------------------------------


@op("assign_value")
class AssignValue:
    """A constant from Python values (how static programs hold ``to_tensor`` data)."""

    def infer(shape, dtype, values):
        return Spec(tuple(shape), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, dtype, values):
        return xp.reshape(xp.asarray(values, dtype=xp.to_dtype(dtypes.convert_dtype(dtype))), shape)

    grad = None


@op("fill_constant")
class FillConstant:
    def infer(shape, value, dtype):
        return Spec(tuple(shape), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, value, dtype):
        return xp.full(shape, value, dtype=xp.to_dtype(dtype))

    grad = None


@op("full_like")
class FullLike:
    def infer(x, value, dtype):
        return Spec(tuple(x.shape), dtypes.convert_dtype(dtype))

    def kernel(xp, x, value, dtype):
        return xp.full(x.shape, value, dtype=xp.to_dtype(dtype))

    grad = None


@op("arange")
class Arange:
    def infer(start, end, step, dtype):
        n = max(0, int(np.ceil((end - start) / step)))
        return Spec((n,), dtypes.convert_dtype(dtype))

    def kernel(xp, start, end, step, dtype):
        return xp.arange(start, end, step, dtype=xp.to_dtype(dtype))

    grad = None


@op("linspace")
class Linspace:
    def infer(start, stop, num, dtype):
        return Spec((num,), dtypes.convert_dtype(dtype))

    def kernel(xp, start, stop, num, dtype):
        return xp.linspace(start, stop, num, dtype=xp.to_dtype(dtype))

    grad = None


@op("eye")
class Eye:
    def infer(num_rows, num_columns, dtype):
        return Spec((num_rows, num_columns), dtypes.convert_dtype(dtype))

    def kernel(xp, num_rows, num_columns, dtype):
        return xp.eye(num_rows, num_columns, dtype=xp.to_dtype(dtype))

    grad = None


@op("uniform_random")
class UniformRandom:
    def infer(shape, min, max, dtype):
        return Spec(tuple(shape), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, min, max, dtype):
        return xp.random_uniform(shape, min, max, dtype)

    grad = None


@op("gaussian_random")
class GaussianRandom:
    def infer(shape, mean, std, dtype):
        return Spec(tuple(shape), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, mean, std, dtype):
        return xp.random_normal(shape, mean, std, dtype)

    grad = None


@op("randint")
class RandInt:
    def infer(low, high, shape, dtype):
        return Spec(tuple(shape), dtypes.convert_dtype(dtype))

    def kernel(xp, low, high, shape, dtype):
        return xp.random_integers(shape, low, high, dtype)

    grad = None


@op("randperm")
class RandPerm:
    def infer(n, dtype):
        return Spec((n,), dtypes.convert_dtype(dtype))

    def kernel(xp, n, dtype):
        keys = xp.random_uniform((n,), 0.0, 1.0, dtypes.float64)
        return xp.astype(xp.argsort(keys), xp.to_dtype(dtype))

    grad = None


# ---- public creators --------------------------------------------------------------------


def _fill(shape: Any, value: Any, dtype: dtypes.DType, op_name: str) -> Tensor:
    """``fill_constant``, or ``fill_constant_dynamic`` when ``shape`` holds dims traced from
    run-time values (see ``ops/shape_tensor.py``)."""
    from autostatic_runtime.ops.shape_tensor import FillConstantDynamic, shape_tensor

    dynamic = shape_tensor(shape, op_name)
    if dynamic is not None:
        static, tensor = dynamic
        return FillConstantDynamic(tensor, value=value, dtype=dtype, static=static)
    return FillConstant(shape=_shape(shape, op_name), value=value, dtype=dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (dtype from the value when not given).

    While tracing, ``shape`` may hold traced dims (``x.shape[0]``) or be a 1-D int tensor,
    and ``fill_value`` may be a traced 1-element tensor (then it is broadcast, differentiably).
    """
    if isinstance(fill_value, TensorLike) and not isinstance(fill_value, Tensor):
        from autostatic_runtime.ops.broadcast import expand
        from autostatic_runtime.ops.elementwise import cast
        from autostatic_runtime.ops.manipulation import reshape

        d = fill_value.dtype if dtype is None else _dtype(dtype)
        value = reshape(fill_value if fill_value.dtype == d else cast(fill_value, d), [])
        if isinstance(shape, TensorLike):
            shape = [shape[i] for i in range(shape.shape[0])]
        return expand(value, list(shape) if isinstance(shape, (list, tuple)) else [shape])
    if isinstance(fill_value, TensorLike):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = (
            dtypes.bool_
            if isinstance(fill_value, bool)
            else dtypes.int64
            if isinstance(fill_value, int)
            else dtypes.get_default_dtype()
        )
    return _fill(shape, fill_value, _dtype(dtype), "full")


def zeros(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return _fill(shape, 0, _dtype(dtype), "zeros")


def ones(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A tensor of ones (float32 unless ``dtype`` says otherwise)."""
    return _fill(shape, 1, _dtype(dtype), "ones")


def empty(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """An uninitialised tensor (filled with zeros here)."""
    return _fill(shape, 0, _dtype(dtype), "empty")


def full_like(x: TensorLike, fill_value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A tensor shaped like ``x`` filled with ``fill_value`` (``x``'s dtype by default); a
    traced 1-element ``fill_value`` is broadcast (differentiably)."""
    d = x.dtype if dtype is None else _dtype(dtype)
    if _is_traced(fill_value):
        from autostatic_runtime.ops.elementwise import cast

        return FullLike(x, value=0, dtype=d) + cast(fill_value, d).reshape([])
    return FullLike(x, value=_scalar(fill_value), dtype=d)


def zeros_like(x: TensorLike, dtype: Any = None, name: str | None = None) -> Tensor:
    """Zeros shaped like ``x`` (``x``'s dtype by default)."""
    return full_like(x, 0, dtype)


def ones_like(x: TensorLike, dtype: Any = None, name: str | None = None) -> Tensor:
    """Ones shaped like ``x`` (``x``'s dtype by default)."""
    return full_like(x, 1, dtype)


def empty_like(x: TensorLike, dtype: Any = None, name: str | None = None) -> Tensor:
    """An uninitialised tensor shaped like ``x`` (zeros here)."""
    return full_like(x, 0, dtype)


def _scalar(v: Any) -> Any:
    return v.item() if isinstance(v, TensorLike) else v


def arange(
    start: Any = 0, end: Any = None, step: Any = 1, dtype: Any = None, name: str | None = None
) -> Tensor:
    """Values from ``start`` up to ``end`` (exclusive) by ``step``; int64 for ints, else float32."""
    if any(_traced(v) for v in (start, end, step)):
        return _range(start, end, step, dtype)
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise OpError("arange", "step must not be 0", user_location())
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = dtypes.int64 if ints else dtypes.get_default_dtype()
    return Arange(start=start, end=end, step=step, dtype=_dtype(dtype))


def _traced(v: Any) -> bool:
    return isinstance(v, TensorLike) and not isinstance(v, Tensor)


def _range(start: Any, end: Any, step: Any, dtype: Any) -> Tensor:
    """``arange`` over traced bounds: a ``range`` op whose length is known at run time."""
    from autostatic_runtime.ops.elementwise import cast
    from autostatic_runtime.ops.shape_tensor import Range

    if end is None:
        start, end = 0, start
    values = (start, end, step)
    if dtype is None:
        floating = any(
            v.dtype.is_floating if isinstance(v, TensorLike) else isinstance(v, float)
            for v in values
        )
        dtype = dtypes.get_default_dtype() if floating else dtypes.int64
    d = _dtype(dtype)
    start, end, step = (
        cast(v, d) if isinstance(v, TensorLike) else full([1], v, d) for v in values
    )
    return Range(start, end, step, dtype=d)


def linspace(start: Any, stop: Any, num: int, dtype: Any = None, name: str | None = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    num = int(_scalar(num))
    if num < 0:
        raise OpError("linspace", f"num must be non-negative, got {num}", user_location())
    return Linspace(
        start=float(_scalar(start)), stop=float(_scalar(stop)), num=num, dtype=_dtype(dtype)
    )


def eye(
    num_rows: int, num_columns: int | None = None, dtype: Any = None, name: str | None = None
) -> Tensor:
    """A 2-D tensor with ones on the diagonal."""
    num_columns = num_rows if num_columns is None else num_columns
    return Eye(num_rows=int(num_rows), num_columns=int(num_columns), dtype=_dtype(dtype))


def uniform(
    shape: Any,
    dtype: Any = None,
    min: float = -1.0,
    max: float = 1.0,
    seed: int = 0,
    name: str | None = None,
) -> Tensor:
    """Uniform random values in ``[min, max)``."""
    d = _dtype(dtype)
    _require_float("uniform", d)
    if _is_traced(min) or _is_traced(max):  # values the program computes: u * (max - min) + min
        low, high = _bounds(min, d), _bounds(max, d)
        return _random("uniform", shape, d, min=0.0, max=1.0) * (high - low) + low
    return _random("uniform", shape, d, min=float(min), max=float(max))


def rand(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Uniform random values in ``[0, 1)``."""
    return uniform(shape, dtype, 0.0, 1.0)


def normal(
    mean: float = 0.0, std: float = 1.0, shape: Any = None, name: str | None = None
) -> Tensor:
    """Normal random values with the given mean and standard deviation."""
    shape = shape if shape is not None else [1]
    d = dtypes.get_default_dtype()
    if _is_traced(mean) or _is_traced(std):  # values the program computes: z * std + mean
        return _random("normal", shape, d, mean=0.0, std=1.0) * _bounds(std, d) + _bounds(mean, d)
    return _random("normal", shape, d, mean=float(mean), std=float(std))


def randn(shape: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Standard normal random values."""
    d = _dtype(dtype)
    _require_float("randn", d)
    return _random("randn", shape, d, mean=0.0, std=1.0)


def randint(
    low: int = 0,
    high: int | None = None,
    shape: Any = (1,),
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """Random integers in ``[low, high)`` (``[0, low)`` when ``high`` is None)."""
    if high is None:
        low, high = 0, low
    if _is_traced(low) or _is_traced(high):
        return _randint_traced(low, high, shape, _dtype(dtype, dtypes.int64))
    low, high = int(low), int(high)  # (an eager one-element tensor too)
    if high <= low:
        raise OpError("randint", f"high ({high}) must be greater than low ({low})", user_location())
    return _random("randint", shape, _dtype(dtype, dtypes.int64), low=low, high=high)


def _randint_traced(low: Any, high: Any, shape: Any, dtype: dtypes.DType) -> Any:
    """``randint`` with bounds the program computes (``rt.randint(0, n)`` with a traced
    ``n``, as TensorFlow's ``tf.random.uniform(..., maxval=n, dtype=tf.int32)`` takes them):
    ``low + floor(u * (high - low))`` for a float64 uniform ``u`` in [0, 1), at most
    ``high - 1``; bounds that leave the range empty raise eager's ``OpError`` when the
    program runs."""
    from autostatic_runtime.ops.debugging import Assert
    from autostatic_runtime.ops.elementwise import cast, floor, minimum

    lo, hi = _bounds(low, dtypes.float64), _bounds(high, dtypes.float64)
    Assert(hi > lo, message="randint: high must be greater than low",
           raises=OpError("randint", "high must be greater than low", user_location()))  # fmt: skip
    u = _random("uniform", shape, dtypes.float64, min=0.0, max=1.0)
    return cast(minimum(floor(u * (hi - lo)) + lo, hi - 1.0), dtype)


def _bounds(value: Any, dtype: dtypes.DType) -> Any:
    """A random creator's bound or parameter as a 0-D tensor of ``dtype`` (a traced one
    holds one element: a ``[1]`` counter, ``x.shape[0]``)."""
    from autostatic_runtime.ops.elementwise import cast
    from autostatic_runtime.ops.manipulation import reshape

    if not isinstance(value, TensorLike):
        return full([], value, dtype)
    if value.ndim:
        value = reshape(value, [])
    return value if value.dtype == dtype else cast(value, dtype)


def randperm(n: int, dtype: Any = "int64", name: str | None = None) -> Tensor:
    """A random permutation of ``0..n-1``."""
    return RandPerm(n=int(n), dtype=_dtype(dtype))


def _random(name: str, shape: Any, dtype: dtypes.DType, **attrs: Any) -> Tensor:
    """A random creator's op; its ``*_dynamic`` form when ``shape`` holds traced dims."""
    from autostatic_runtime.ops import shape_tensor as st

    static_op, dynamic_op = {
        "uniform": (UniformRandom, st.UniformRandomDynamic),
        "normal": (GaussianRandom, st.GaussianRandomDynamic),
        "randn": (GaussianRandom, st.GaussianRandomDynamic),
        "randint": (RandInt, st.RandIntDynamic),
    }[name]
    dynamic = st.shape_tensor(shape, name)
    if dynamic is not None:
        return dynamic_op(dynamic[1], dtype=dtype, static=dynamic[0], **attrs)
    return static_op(shape=_shape(shape, name), dtype=dtype, **attrs)


def seed(value: int) -> None:
    """Seed the random generators of every device (Paddle's ``paddle.seed``)."""
    backends.seed(value)


def _require_float(name: str, d: dtypes.DType) -> None:
    if not d.is_floating:
        raise OpError(name, f"dtype must be a float type, got {d}", user_location())

"""Tensor arrays: the ops behind a Python list appended to inside a symbolic loop.

A tensor array is stored as one dense tensor whose first axis is the array's length (its
*buffer*: ``[length, *element_shape]``); a ``while`` op carries it as a loop variable whose
first dim is unknown (-1). The ops below read and grow that buffer; each has a gradient, so
training through a loop that appends to a list works. In static mode the buffer is wrapped
in a ``TensorArray`` (``autostatic_runtime/static/tensor_array.py``) whose ``append``/``pop``/
``[i]``/``len`` emit these ops.

The public functions keep Paddle 2.x's names and dygraph behaviour: in eager mode an "array"
is a plain Python list of tensors (``create_array`` returns ``[]``), in static mode a
``TensorArray``.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import ShapeError, as_python, user_location
from autostatic_runtime.ops.registry import Spec, dtype_of, op, shape_of

__all__ = ["create_array", "array_write", "array_read", "array_length"]


def _index(i: Any, n: int, op_name: str, extend: bool = False) -> int:
    """``i`` (a 0-d array or int) as a non-negative index into ``n`` rows."""
    i = int(i)
    if i < 0:
        i += n
    if i < 0 or i > n or (i == n and not extend):
        raise as_python(  # an IndexError, as the Python list it stands for raises
            IndexError(f"{op_name}: index {i} is out of range for a tensor array of length {n}")
        )
    return i


def _rows(xp, x, start: int, stop: int):
    return x[start:stop, ...]


@op("create_array")
class CreateArray:
    """An empty tensor array of ``dtype`` whose elements have ``shape``: a ``[0, *shape]``
    buffer. A dim unknown when building (-1) is 0 in the buffer: a placeholder, since the
    first write into an empty array takes its element's shape (``array_write``)."""

    def infer(shape, dtype):
        return Spec((0, *shape), dtypes.convert_dtype(dtype))

    def kernel(xp, shape, dtype):
        dims = (0, *(d if d >= 0 else 0 for d in shape))
        return xp.zeros(dims, dtype=xp.to_dtype(dtypes.convert_dtype(dtype)))

    grad = None


@op("array_write")
class ArrayWrite:
    """``array[i] = x``; ``i == len(array)`` appends (Python's ``list.append``)."""

    def infer(x, i, array):
        return Spec((-1, *_element(array, x, "array_write")), dtype_of(array))

    def kernel(xp, x, i, array):
        n = array.shape[0]
        k = _index(i, n, "array_write", extend=True)
        x = xp.astype(x, array.dtype) if x.dtype != array.dtype else x
        if n == 0:  # an empty array's element shape may hold placeholder zeros (unknown dims)
            return xp.expand_dims(x, axis=0)
        if k == n:
            return xp.concat([array, xp.expand_dims(x, axis=0)], axis=0)
        return xp.setitem(array, (k, ...), x)

    def grad(g, out, x, i, array):
        return ArrayRead(g, i), None, ArrayWriteGrad(g, i, array)


@op("array_write_grad")
class ArrayWriteGrad:
    """The gradient of ``array_write`` for its ``array`` input: ``g``'s first ``len(array)``
    rows, with row ``i`` (overwritten by the write) set to zero."""

    def infer(g, i, array):
        return Spec(shape_of(array), dtype_of(g))

    def kernel(xp, g, i, array):
        n = array.shape[0]
        k = _index(i, n, "array_write", extend=True)
        rest = _rows(xp, g, 0, n)
        if k == n:
            return rest
        return xp.setitem(rest, (k, ...), xp.zeros(g.shape[1:], dtype=g.dtype))

    grad = None


@op("array_read")
class ArrayRead:
    """``array[i]`` for a (possibly symbolic) integer ``i``."""

    def infer(array, i):
        return Spec(tuple(shape_of(array)[1:]), dtype_of(array))

    def kernel(xp, array, i):
        return array[_index(i, array.shape[0], "array_read"), ...]

    def grad(g, out, array, i):
        return ArrayReadGrad(g, i, array), None


@op("array_read_grad")
class ArrayReadGrad:
    """Zeros shaped like ``array`` with ``g`` in row ``i`` (the gradient of ``array_read``)."""

    def infer(g, i, array):
        return Spec(shape_of(array), dtype_of(g))

    def kernel(xp, g, i, array):
        k = _index(i, array.shape[0], "array_read")
        return xp.setitem(xp.zeros(array.shape, dtype=g.dtype), (k, ...), g)

    def grad(gg, out, g, i, array):
        return ArrayRead(gg, i), None, None


@op("array_length")
class ArrayLength:
    """The length of a tensor array, an int64 0-d tensor."""

    def infer(array):
        return Spec((), dtypes.int64)

    def kernel(xp, array):
        return xp.asarray(array.shape[0], dtype=xp.to_dtype(dtypes.int64))

    grad = None


@op("array_pop")
class ArrayPop:
    """``item = array.pop(i)``: outputs the array without row ``i``, and that row."""

    multi_output = True

    def infer(array, i):
        s = shape_of(array)
        d = dtype_of(array)
        return Spec((-1 if s[0] < 0 else max(s[0] - 1, 0), *s[1:]), d), Spec(tuple(s[1:]), d)

    def kernel(xp, array, i):
        n = array.shape[0]
        if n == 0:
            raise as_python(IndexError("pop from an empty tensor array"))
        k = _index(i, n, "array_pop")
        rest = xp.concat([_rows(xp, array, 0, k), _rows(xp, array, k + 1, n)], axis=0)
        return rest, array[k, ...]

    def grad(gs, outs, array, i):
        return ArrayPopGrad(gs[0], gs[1], i), None


@op("array_pop_grad")
class ArrayPopGrad:
    """Row ``i`` put back: ``g_rest`` with ``g_item`` inserted at ``i`` (``array_pop``'s
    gradient)."""

    def infer(g_rest, g_item, i):
        s = shape_of(g_rest)
        return Spec((-1 if s[0] < 0 else s[0] + 1, *s[1:]), dtype_of(g_rest))

    def kernel(xp, g_rest, g_item, i):
        n = g_rest.shape[0] + 1
        k = _index(i, n, "array_pop")
        parts = [
            _rows(xp, g_rest, 0, k),
            xp.expand_dims(g_item, axis=0),
            _rows(xp, g_rest, k, n - 1),
        ]
        return xp.concat(parts, axis=0)

    def grad(gg, out, g_rest, g_item, i):
        rest, item = ArrayPop(gg, i)
        return rest, item, None


@op("stack_array")
class StackArray:
    """The elements of a tensor array stacked along a new first axis (its buffer)."""

    def infer(array):
        return Spec(shape_of(array), dtype_of(array))

    def kernel(xp, array):
        if array.shape[0] == 0:  # the ShapeError rt.stack([]) raises in eager mode
            raise ShapeError(
                "stack",
                "expects a non-empty list or tuple of tensors, and this tensor array is empty "
                "when the program runs (e.g. the loop appending to it ran no iterations)",
            )
        return array

    def grad(g, out, array):
        return g


def _element(array: Any, x: Any, op_name: str) -> tuple:
    """The element shape of ``array`` after writing ``x`` (unknown dims become -1)."""
    a, b = tuple(shape_of(array)[1:]), tuple(shape_of(x))
    if len(a) != len(b) or any(p != q and p >= 0 and q >= 0 for p, q in zip(a, b)):
        raise ShapeError(
            op_name,
            f"the tensor array holds elements of shape {list(a)} but the value written has "
            f"shape {list(b)}; every element must have the same shape",
            user_location(),
        )
    return tuple(p if p == q else (q if p < 0 else -1) for p, q in zip(a, b))


# ---- public functions (Paddle 2.x names) -----------------------------------------------------


def create_array(dtype: Any = "float32", initialized_list: Any = None) -> Any:
    """An empty array of tensors of ``dtype`` (Paddle's ``paddle.tensor.create_array``).

    Eager mode: a Python list (as Paddle's dygraph returns). Static mode: a ``TensorArray``
    whose element shape is set by the first ``array_write``/``append``.
    """
    from autostatic_runtime.mode import in_dynamic_mode

    items = list(initialized_list or [])
    if in_dynamic_mode():
        return _EagerArray(items, dtypes.convert_dtype(dtype))
    from autostatic_runtime.static.tensor_array import TensorArray

    return TensorArray.from_list(items, dtype=dtypes.convert_dtype(dtype))


def array_write(x: Any, i: Any, array: Any = None) -> Any:
    """``array[i] = x`` (``i == len(array)`` appends); returns the array. A new array is
    created when ``array`` is None."""
    if array is None:
        array = create_array(dtype_of(x))
    if isinstance(array, list):
        if type(x) in (bool, int, float) and getattr(array, "dtype", None) is not None:
            from autostatic_runtime.creation import to_tensor

            x = to_tensor(x, dtype=array.dtype)  # a number: an element of the array's dtype
        k = int(i)
        if k == len(array):
            array.append(x)
        elif k > len(array):
            raise IndexError(
                f"array_write: index {k} is past the end of an array of length {len(array)}"
            )
        else:
            array[k] = x
        return array
    array.write(i, x)
    return array


class _EagerArray(list):
    """An eager tensor array: a Python list (as Paddle's dygraph gives) that knows the dtype
    it was created with, so ``array_write`` of a Python number stores a tensor of it, as the
    static array does."""

    __slots__ = ("dtype",)

    def __init__(self, items: list, dtype: Any):
        super().__init__(items)
        self.dtype = dtype


def array_read(array: Any, i: Any) -> Any:
    """``array[i]``."""
    if isinstance(array, list):
        return array[int(i)]
    return array.read(i)


def array_length(array: Any) -> Any:
    """The number of elements of ``array`` (an int64 tensor in static mode)."""
    if isinstance(array, list):
        from autostatic_runtime.creation import to_tensor

        return to_tensor(len(array), dtype="int64")
    return array.length()

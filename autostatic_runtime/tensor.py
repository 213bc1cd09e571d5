"""The eager Tensor: a backend array plus autograd bookkeeping.

Operator overloading and the op methods (``x.sum()``, ``x.reshape(...)``) live on
``TensorLike`` and are attached by ``autostatic_runtime.ops.methods``; the static
``Variable`` shares them, so ``x + y`` means the same op in both modes.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.errors import AutostaticError

__all__ = ["Tensor", "TensorLike", "is_tensor"]

STATIC_HOOKS: dict[str, Any] = {}  # filled by autostatic_runtime.static at import (layering)
CONST = object()  # autograd edge of an input that is not a tensor (a Python scalar, None)


class _GradOverlay(threading.local):
    """While a thread traces a training step, ``.grad`` of its tensors is the step's symbolic
    gradient: ``steps`` is then that trace's ``static.step.StepTrace`` (None otherwise), which
    answers reads and writes of ``.grad`` in the tracing thread alone."""

    steps: Any = None


GRAD_OVERLAY = _GradOverlay()
_dtype_cache: dict[Any, dtypes.DType] = {}


class TensorLike:
    """Methods shared by eager Tensors and static Variables (filled in by ops.methods)."""

    __slots__ = ()
    __array_ufunc__ = None  # make NumPy defer: ndarray + Tensor -> Tensor.__radd__


class Tensor(TensorLike):
    """An n-dimensional array on a device, with optional gradient tracking.

    Create one with ``rt.to_tensor(data)``; ``stop_gradient=False`` makes autograd track it.
    """

    # Hot fields are slots; rarely-set ones live in the (lazily created) instance dict and
    # default to these class attributes, so wrapping an op's result sets only four fields.
    __slots__ = ("_data", "_node", "_index", "stop_gradient", "__dict__", "__weakref__")
    _grad = None
    name = None
    persistable = False
    _hooks = None

    def __init__(
        self,
        data: Any = None,
        dtype: Any = None,
        place: Any = None,
        stop_gradient: bool = True,
        name: str | None = None,
    ):
        from autostatic_runtime.creation import _to_array

        self._data = _to_array(np.zeros((0,), "float32") if data is None else data, dtype, place)
        self._node = None
        self._index = 0
        self.stop_gradient = stop_gradient
        self.name = name
        self.persistable = False
        self._hooks = None

    @classmethod
    def _rebuild(cls, data: Any, node: Any, index: int) -> Tensor:
        """Wrap a backend array without copying (internal; used on every op)."""
        t = _new(cls)
        t._data = data
        t._node = node
        t._index = index
        t.stop_gradient = node is None
        return t

    # -- metadata ------------------------------------------------------------------------
    @property
    def shape(self) -> list[int]:
        """The dims as a list of ints."""
        return list(self._data.shape)

    @property
    def dtype(self) -> dtypes.DType:
        """The element type (``rt.float32``, ...)."""
        d = self._data.dtype
        entry = _dtype_cache.get(id(d))
        if entry is None or entry[0] is not d:
            # keyed by identity: dtype objects of different libraries must not be compared
            entry = _dtype_cache[id(d)] = (d, dtypes.convert_dtype(d))
        return entry[1]

    @property
    def ndim(self) -> int:
        """The number of dims."""
        return self._data.ndim

    def dim(self) -> int:
        """The number of dims (Paddle's ``dim()``)."""
        return self._data.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self._data.shape:
            n *= d
        return n

    @property
    def place(self) -> str:
        """The device the data lives on: ``'cpu'``, ``'gpu:0'``, or a backend's name (a
        string with Paddle's place methods: ``_equals``, ``is_cpu_place``, ...)."""
        from autostatic_runtime.backends import backend_of
        from autostatic_runtime.place import DevicePlace

        b = backend_of(self._data)
        name = "cpu" if b.name == "numpy" else ("gpu:0" if b.name == "cupy" else b.name)
        return DevicePlace(name)

    def _copy_to(self, place: Any, blocking: bool = True) -> Tensor:
        """A copy on ``place`` (a place or device string), keeping ``stop_gradient``."""
        from autostatic_runtime.creation import to_tensor

        return to_tensor(self, place=place, stop_gradient=self.stop_gradient)

    def cpu(self) -> Tensor:
        """A copy on the host CPU (Paddle's ``Tensor.cpu()``)."""
        return self._copy_to("cpu")

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op produced (inputs, parameters)."""
        return self._node is None

    @property
    def T(self) -> Tensor:
        """The tensor with its dims reversed."""
        return self.transpose(list(range(self.ndim))[::-1])

    # -- conversion ----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (a copy on the GPU; shares memory on the CPU)."""
        from autostatic_runtime.backends import backend_of

        return backend_of(self._data).to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def item(self, *index: int) -> Any:
        """The Python scalar at ``index`` (one int: a position in the flattened tensor;
        one int per dim; none: the only element)."""
        a = self.numpy()
        return a.reshape(-1)[item_position(tuple(a.shape), index)].item()

    def tolist(self) -> Any:
        """The values as nested Python lists."""
        return self.numpy().tolist()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor with {self.size} elements is ambiguous; use "
                "rt.all(x) or rt.any(x)"
            )
        return bool(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __index__(self) -> int:
        if not self.dtype.is_integer and self.dtype != dtypes.bool_:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __format__(self, spec: str) -> str:
        if spec and self.size == 1:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-D tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-D tensor")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="       ")
        grad = "" if self.stop_gradient else ", stop_gradient=False"
        return (
            f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}{grad},\n"
            f"       {body})"
        )

    __str__ = __repr__

    def __copy__(self) -> Tensor:
        return self.detach()

    def __deepcopy__(self, memo) -> Tensor:
        t = self.clone().detach()
        t.stop_gradient = self.stop_gradient
        t.name = self.name
        t.persistable = self.persistable
        memo[id(self)] = t
        return t

    def __reduce__(self):
        raise TypeError(
            "autostatic tensors are not pickled; save them with rt.save/autostatic.save "
            "or convert with .numpy()"
        )

    # -- autograd --------------------------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (None before a backward); inside a traced training step,
        the step's symbolic gradient."""
        steps = GRAD_OVERLAY.steps
        if steps is not None:
            return steps.read_grad(self)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        steps = GRAD_OVERLAY.steps
        if steps is not None:
            steps.write_grad(self, value)
            return
        self._grad = value

    def backward(self, grad_tensor: Tensor | None = None, retain_graph: bool = False) -> None:
        """Accumulate gradients of this tensor into the ``.grad`` of every leaf it depends on."""
        from autostatic_runtime.autograd import backward

        backward(self, grad_tensor, retain_graph)

    def gradient(self) -> np.ndarray | None:
        """The gradient as a NumPy array (None before backward)."""
        return None if self.grad is None else self.grad.numpy()

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Reset ``.grad``: to zeros (Paddle's default) or to None."""
        steps = GRAD_OVERLAY.steps
        if steps is not None:
            steps.clear_grad(self, set_to_zero)
        elif self._grad is not None and set_to_zero:
            self._grad = zeros_grad(self._grad._data)
        else:
            self._grad = None

    clear_grad = clear_gradient

    def detach(self) -> Tensor:
        """The same values without gradient history (shares memory)."""
        return Tensor._rebuild(self._data, None, 0)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if self.stop_gradient:
            raise AutostaticError("register_hook on a tensor with stop_gradient=True")
        if self._node is None:
            self._hooks = (self._hooks or []) + [hook]
            return _HookHandle(self, None, hook)
        hooks = self._node.hooks = self._node.hooks or {}
        hooks.setdefault(self._index, []).append(hook)
        return _HookHandle(self._node.hooks, self._index, hook)

    # -- in-place updates (rebind to a new array; recorded arrays stay untouched) -----------
    def _replace(self, new: Tensor) -> Tensor:
        if self._node is None and not self.stop_gradient and new._node is not None:
            from autostatic_runtime.autograd import is_grad_enabled

            if is_grad_enabled():
                raise AutostaticError(
                    "a leaf tensor that needs a gradient (stop_gradient=False) cannot be "
                    "modified in place; do it under rt.no_grad() or use an out-of-place op"
                )
        self._data = new._data
        self._node = new._node
        self._index = new._index
        if new._node is not None:
            self.stop_gradient = False
        return self

    def _inplace_assign(self, y: Any) -> Tensor:
        """Paddle's ``x._inplace_assign(y)``: this tensor object becomes ``y`` (its values,
        shape and dtype; gradients flow on to ``y``'s inputs), a leaf included."""
        if not isinstance(y, Tensor):
            from autostatic_runtime.creation import to_tensor

            y = to_tensor(y)
        self._data, self._node, self._index = y._data, y._node, y._index
        self.stop_gradient = y.stop_gradient
        return self

    def set_value(self, value: Any) -> Tensor:
        """Overwrite the values (same shape) without recording a gradient.

        Given a static Variable (while a program is built), the program writes this tensor's
        persistable variable instead, each time it runs (running statistics, for example).
        """
        from autostatic_runtime.creation import _to_array

        if isinstance(value, TensorLike) and not isinstance(value, Tensor):
            STATIC_HOOKS["set_value"](self, value)  # a Variable: static mode is loaded
            return self
        arr = _to_array(value, self.dtype, None) if not isinstance(value, Tensor) else value._data
        if tuple(arr.shape) != tuple(self._data.shape):
            raise ValueError(
                f"set_value: shape {list(arr.shape)} does not match the tensor's shape {self.shape}"
            )
        self._data = arr
        return self

    def _snapshot(self) -> Tensor:
        """A separate Tensor object for the current version (in-place ops take this as input)."""
        t = Tensor._rebuild(self._data, self._node, self._index)
        t.stop_gradient = self.stop_gradient
        return t


class ItemIndexError(IndexError, ValueError):
    """An ``item()`` index out of bounds (an IndexError as NumPy's, a ValueError as
    Paddle's)."""


def item_position(shape: tuple, index: tuple) -> int:
    """The flat position ``x.item(*index)`` reads in a tensor of ``shape`` (known dims), with
    Paddle's and NumPy's errors for a wrong index."""
    size = 1
    for n in shape:
        size *= n
    for k, i in enumerate(index, start=1):
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"item(): argument (position {k}) must be long, but got "
                            f"{type(i).__name__}")  # fmt: skip
    if not index:
        if size != 1:
            raise ValueError(
                f"item(): only a tensor with one element can be converted to a "
                f"Python scalar, this one has shape {list(shape)}"
            )
        return 0
    if len(index) == 1:
        i = int(index[0])
        if not -size <= i < size:
            raise ItemIndexError(f"item(): index {i} is out of bounds for size {size}")
        return i % size
    if len(index) != len(shape):
        raise ValueError(
            f"item(): incorrect number of indices for Tensor: {len(index)} for shape "
            f"{list(shape)}"
        )
    position = 0
    for axis, (i, n) in enumerate(zip(index, shape)):
        i = int(i)
        if not -n <= i < n:
            raise ItemIndexError(
                f"item(): index {i} is out of bounds for axis {axis} with size {n}"
            )
        position = position * n + i % n
    return position


class _HookHandle:
    def __init__(self, owner, index, hook):
        self.owner, self.index, self.hook = owner, index, hook

    def remove(self) -> None:
        if self.index is None:
            self.owner._hooks = [h for h in self.owner._hooks or [] if h is not self.hook] or None
        else:
            self.owner[self.index].remove(self.hook)


_new = object.__new__


def zeros_grad(like: Any) -> Tensor:
    """A gradient of zeros shaped like the backend array ``like`` (what ``clear_grad()``
    leaves), marked as such: ``is_zeros_grad`` knows it for zeros while its array is the one
    made here, so a compiled training step need not read it."""
    from autostatic_runtime.backends import backend_of

    zeros = backend_of(like).zeros_for_grad(like)  # no op dispatch, no fill
    t = Tensor._rebuild(zeros, None, 0)
    t.__dict__["_zeros"] = zeros
    return t


def is_zeros_grad(grad: Tensor) -> bool:
    """Whether ``grad`` is a ``zeros_grad`` whose array is still the zeros it was made with."""
    return grad.__dict__.get("_zeros") is grad._data


def is_tensor(x: Any) -> bool:
    """True for an eager Tensor (Paddle's ``paddle.is_tensor``)."""
    return isinstance(x, Tensor)

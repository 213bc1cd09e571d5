"""``for`` loops over tensors: the iterables converted code builds and how it steps them.

Converted code evaluates a ``for`` statement's iterable once. The builtins ``range``,
``enumerate`` and ``zip`` called there go through ``convert_range``/``convert_enumerate``/
``convert_zip``, which return exactly what the builtin returns for Python values and eager
tensors; when an argument is symbolic (a static ``Variable``, or a symbolic iterable) they
return a *symbolic iterable* instead. A loop over a symbolic iterable (or over a symbolic
tensor, by rows) is stepped by index inside a ``while`` op::

    for target in ITER:               __it = ITER                      # evaluated once
        body                          if is_symbolic_iterable(__it):
                                          __n = loop_length(__it)      # an int64 Variable
                                          __i = 0
                                          while __i < __n:             # becomes a while op
                                              target = loop_item(__it, __i)
                                              __i = __i + 1
                                              body
                                      else:
                                          for target in __it:          # the user's loop
                                              body

Items are int64 tensors for ranges and enumerate counters, *weak* ones (``Variable._weak``:
they promote like the Python ints of the eager loop, so ``y_int32 + i`` stays int32), and
rows (``x[i]``) for tensors.
"""

from __future__ import annotations

import operator
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import StaticBuildError, user_location
from autostatic_runtime.static.program import Variable

__all__ = [
    "convert_range", "convert_enumerate", "convert_zip", "is_symbolic_iterable", "loop_length",
    "loop_item", "loop_placeholder", "check_loop_list", "SymbolicIterable",
]  # fmt: skip

_range, _enumerate, _zip = range, enumerate, zip


class SymbolicIterable:
    """An iterable whose length is only known when the program runs.

    ``length()`` is an int64 0-d tensor, ``item(i)`` the value at a symbolic index ``i``, and
    ``placeholder()`` a value with the items' shapes and dtypes (the loop target's value
    before the first iteration, so it can be a ``while`` loop variable).
    """

    __slots__ = ()

    def length(self) -> Variable:
        raise NotImplementedError

    def item(self, i: Variable) -> Any:
        raise NotImplementedError

    def placeholder(self) -> Any:
        raise NotImplementedError

    def __iter__(self):
        raise StaticBuildError(
            f"a {self.name} over tensors can only be iterated by a 'for' statement of a "
            "converted function (its length is known only when the program runs)",
            user_location(),
        )

    name = "symbolic iterable"


class TensorRows(SymbolicIterable):
    """``for row in x``: the rows of ``x`` along its first axis."""

    __slots__ = ("x",)
    name = "tensor"

    def __init__(self, x: Any, location: tuple | None = None):
        if len(x.shape) == 0:
            raise StaticBuildError("iteration over a 0-d tensor", location or user_location())
        self.x = x

    def length(self) -> Variable:
        from autostatic_runtime.ops.manipulation import shape

        return _int64(shape(self.x)[0])

    def item(self, i: Variable) -> Any:
        return self.x[i]

    def placeholder(self) -> Any:
        from autostatic_runtime.ops.reduce import sum as sum_

        zeros = sum_(self.x[0:1], axis=0)  # x[0] when there is a row (overwritten), else 0s
        return zeros if zeros.dtype == self.x.dtype else _cast(zeros, self.x.dtype)


class SymbolicRange(SymbolicIterable):
    """``range(start, stop, step)`` with tensor bounds: ``max(0, ceil((stop - start) / step))``
    items ``start + i * step``."""

    __slots__ = ("start", "stop", "step", "dtype")
    name = "range"

    def __init__(self, start: Any, stop: Any, step: Any, dtype: Any = None):
        """Bounds are Python ints or int64 0-d Variables (see ``convert_range``); items have
        the dtype of the tensor bounds (int32 for ``range(rt.shape(x)[0])``): Python ints
        from a range take the other operand's dtype in eager arithmetic, and so do these."""
        self.start, self.stop, self.step = start, stop, step
        self.dtype = dtype or dtypes.int64

    def length(self) -> Variable:
        from autostatic_runtime.ops.elementwise import maximum

        # ceil(a / b) == -((-a) // b) for ints of either sign (floor division)
        count = -((self.start - self.stop) // self.step)
        if not isinstance(count, Variable):  # every bound a Python int (from zip/enumerate)
            return _full(max(count, 0))
        return maximum(_int64(count), _full(0))

    def item(self, i: Variable) -> Any:
        value = _int64(self.start + i * self.step)
        return _weak(_cast(value, self.dtype) if self.dtype != dtypes.int64 else value)

    def placeholder(self) -> Any:
        value = _full(0)
        return _weak(_cast(value, self.dtype) if self.dtype != dtypes.int64 else value)


class SymbolicEnumerate(SymbolicIterable):
    """``enumerate(inner, start)``: items ``(start + i, inner[i])``."""

    __slots__ = ("inner", "start")
    name = "enumerate"

    def __init__(self, inner: SymbolicIterable, start: Any):
        self.inner, self.start = inner, start

    def length(self) -> Variable:
        return self.inner.length()

    def item(self, i: Variable) -> Any:
        return (_weak(_int64(self.start + i)), self.inner.item(i))

    def placeholder(self) -> Any:
        return (_weak(_full(0)), self.inner.placeholder())


class SymbolicZip(SymbolicIterable):
    """``zip(*parts)``: as long as the shortest part; items are tuples."""

    __slots__ = ("parts",)
    name = "zip"

    def __init__(self, parts: list[SymbolicIterable]):
        self.parts = parts

    def length(self) -> Variable:
        from autostatic_runtime.ops.elementwise import minimum

        out = self.parts[0].length()
        for part in self.parts[1:]:
            out = minimum(out, part.length())
        return out

    def item(self, i: Variable) -> Any:
        return tuple(part.item(i) for part in self.parts)

    def placeholder(self) -> Any:
        return tuple(part.placeholder() for part in self.parts)


# ---- what generated code calls -----------------------------------------------------------


def convert_range(fn: Any, *args: Any) -> Any:
    """``fn(*args)``, where ``fn`` is what the name ``range`` refers to at the call.

    The builtin ``range`` with a symbolic argument gives a ``SymbolicRange``; anything else
    is called as the user wrote it (Python values, or a user function named ``range``).
    """
    if fn is not _range or not any(_is_tensor_bound(a) for a in args):
        return fn(*args)
    if not 1 <= len(args) <= 3:
        return fn(*args)  # the builtin's own TypeError
    location = user_location()
    bounds = [_range_bound(a, i, location) for i, a in enumerate(args, start=1)]
    if len(bounds) == 1:
        bounds.insert(0, 0)
    if len(bounds) == 3 and isinstance(bounds[2], int) and bounds[2] == 0:
        raise ValueError("range() arg 3 must not be zero")
    kinds = [a.dtype for a in args if isinstance(a, Variable) and a.dtype.is_integer]
    dtype = dtypes.int64 if dtypes.int64 in kinds or not kinds else kinds[0]
    return SymbolicRange(bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1, dtype)


def convert_enumerate(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, where ``fn`` is what the name ``enumerate`` refers to.

    ``enumerate(iterable, start=0)`` over a symbolic iterable (or tensor) gives a
    ``SymbolicEnumerate``; anything else is the builtin's (or the user's) result.
    """
    if fn is not _enumerate or not args or not is_symbolic_iterable(args[0]):
        return fn(*args, **kwargs)
    bound = _bind(("iterable", "start"), args, kwargs)
    if bound is None:
        return fn(*args, **kwargs)  # the builtin's own TypeError
    start = bound.get("start", 0)
    if not (isinstance(start, int) or _is_tensor_bound(start)):
        return fn(*args, **kwargs)
    return SymbolicEnumerate(_as_symbolic(args[0], "enumerate"), start)


def convert_zip(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, where ``fn`` is what the name ``zip`` refers to.

    ``zip(*iterables)`` with a symbolic iterable (or tensor) among them gives a
    ``SymbolicZip`` (the other parts may be ranges, eager tensors, arrays or lists of
    numbers); anything else is the builtin's (or the user's) result.
    """
    if fn is not _zip or not any(is_symbolic_iterable(a) for a in args):
        return fn(*args, **kwargs)
    if kwargs.get("strict"):
        raise StaticBuildError(
            "zip(..., strict=True) over tensors is not supported yet; compare the lengths "
            "before the loop instead",
            user_location(),
        )
    return SymbolicZip([_as_symbolic(a, "zip") for a in args])


def is_symbolic_iterable(value: Any) -> bool:
    """True when ``for x in value`` must become a ``while`` op (a symbolic tensor, or what
    ``convert_range``/``convert_enumerate``/``convert_zip`` return for symbolic arguments)."""
    return value.__class__ is Variable or isinstance(value, (Variable, SymbolicIterable))


class _Symbolic:
    """No items: a symbolic iterable's Python loop runs no body; ``hand_over`` gives the
    iterable to ``convert_for_loop``."""

    __slots__ = ("iterable",)

    def __init__(self, iterable: Any):
        self.iterable = iterable

    def __iter__(self):
        return iter(())


class _Stoppable:
    """The items of a Python ``for`` whose body ends with an inner loop left by the same
    flag: that loop's ``hand_over`` sets ``stopped``, and this loop takes no further item."""

    __slots__ = ("items", "stopped")

    def __init__(self, items: Any):
        self.items, self.stopped = items, False

    def __iter__(self):
        for item in self.items:
            yield item
            if self.stopped:
                return


def python_items(value: Any, stoppable: bool = False) -> Any:
    """``iter(value)`` for the Python form of a ``for`` left by a flag (``break``, ``return``),
    or no items when ``value`` is symbolic (``is_symbolic_iterable``), for ``hand_over``;
    ``stoppable``: items an inner loop's ``hand_over`` can end (``_Stoppable``)."""
    if is_symbolic_iterable(value):
        return _Symbolic(value)
    return _Stoppable(iter(value)) if stoppable else iter(value)


def hand_over(items: Any, flag: Any = False, outer: _Stoppable | None = None) -> Any:
    """What ``convert_for_loop`` steps after the Python form of a ``for`` (``python_items``):
    the symbolic iterable itself; the other items after a tensor ``break`` or ``return`` (a
    symbolic ``flag``), or after an inner loop stopped them with the flag not set by Python;
    None when the Python loop was the whole loop. The ``outer`` loop's items stop once the
    flag is set or this loop is handed over (the rest of the outer loop is then stepped by
    its own ``hand_over``)."""
    cls = items.__class__
    if cls is _Symbolic:
        rest = items.iterable
    elif cls is _Stoppable:
        handed = flag.__class__ is Variable or (items.stopped and flag is not True)
        rest = items.items if handed else None
    else:
        rest = items if flag.__class__ is Variable else None
    if outer is not None and (rest is not None or flag is not False):
        outer.stopped = True
    return rest


def loop_continues(broke: Any, index: Any, length: Any) -> Any:
    """``not broke and index < length``: the test of a symbolic ``for`` with a ``break``
    (``broke`` is the lowered break flag, a Python bool until a tensor ``if`` sets it)."""
    from autostatic_runtime.ops.elementwise import logical_and, logical_not

    if not isinstance(broke, Variable):
        return False if broke else index < length
    return logical_and(logical_not(broke), index < length)


def loop_length(value: Any, location: tuple | None = None) -> Variable:
    """``len(value)`` as an int64 0-d tensor (``value``: see ``is_symbolic_iterable``)."""
    return _iterable(value, location).length()


def loop_item(value: Any, i: Variable) -> Any:
    """The ``i``-th item of ``value`` (``value[i]`` for a tensor), ``i`` a symbolic index."""
    return _iterable(value).item(i)


def loop_placeholder(value: Any) -> Any:
    """A value shaped like ``value``'s items: the loop target's value before the loop when it
    was not bound yet (Python leaves it unbound after a loop of no iterations)."""
    return _iterable(value).placeholder()


def check_loop_list(value: Any, name: str, method: str, location: tuple | None = None) -> None:
    """Reject ``name.method(...)`` on a Python list inside a ``for`` loop over a tensor (other
    than ``append``/``pop`` on a local list, which the loop carries as a tensor array)."""
    if isinstance(value, (list, dict, set)):
        raise StaticBuildError(
            f"'{name}.{method}(...)' inside a 'for' loop over a tensor is not supported yet: "
            f"the loop becomes one 'while' op, so the {type(value).__name__} would hold the "
            "values of a single traced iteration; 'append'/'pop' on a local list work (it "
            "becomes a tensor array), or build a tensor instead (e.g. preallocate it and assign "
            "rows), or loop over a Python range",
            location,
        )


# ---- helpers -------------------------------------------------------------------------------


def _iterable(value: Any, location: tuple | None = None) -> SymbolicIterable:
    if isinstance(value, SymbolicIterable):
        return value
    return TensorRows(value, location)


def _as_symbolic(value: Any, what: str) -> SymbolicIterable:
    """A part of a symbolic ``zip``/``enumerate`` as a SymbolicIterable."""
    from autostatic_runtime.tensor import Tensor

    if isinstance(value, SymbolicIterable):
        return value
    if isinstance(value, (Variable, Tensor)):
        return TensorRows(value)
    if isinstance(value, _range):
        return SymbolicRange(value.start, value.stop, value.step)
    if _is_array_like(value):
        from autostatic_runtime.creation import to_tensor

        try:
            return TensorRows(to_tensor(value))
        except Exception:  # a list of tensors, ragged lists...: say what to change below
            pass
    raise StaticBuildError(
        f"{what}() of a tensor and a {type(value).__name__} in a 'for' loop is not supported "
        "yet; the loop becomes a 'while' op, which can only step tensors, ranges and lists "
        "of numbers (convert it to a tensor first)",
        user_location(),
    )


def _is_array_like(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or type(value).__module__ == "numpy"


def _is_tensor_bound(value: Any) -> bool:
    return isinstance(value, Variable)


def _range_bound(value: Any, index: int, location: tuple | None) -> Any:
    """A range bound as a Python int or an int64 0-d Variable (what Python's range accepts)."""
    if isinstance(value, Variable):
        if not value.dtype.is_integer:
            raise StaticBuildError(
                f"range() argument {index} is a {value.dtype} tensor, but range() needs "
                "integers; cast it with .astype('int64')",
                location or user_location(),
            )
        if value.shape != []:
            if value.size not in (1, -1):
                raise StaticBuildError(
                    f"range() argument {index} is a tensor of shape {value.shape}; it must "
                    "hold one integer",
                    location or user_location(),
                )
            from autostatic_runtime.ops.manipulation import reshape

            value = reshape(value, [])
        return _int64(value)
    return operator.index(value)  # Python's TypeError for a float or a str


def _bind(names: tuple, args: tuple, kwargs: dict) -> dict | None:
    if len(args) > len(names) or any(k not in names for k in kwargs):
        return None
    bound = dict(_zip(names, args))
    for k, v in kwargs.items():
        if k in bound:
            return None
        bound[k] = v
    return bound


def _int64(v: Any) -> Any:
    if isinstance(v, Variable) and v.dtype != dtypes.int64:
        return _cast(v, dtypes.int64)
    return v


def _cast(v: Any, dtype: Any) -> Any:
    from autostatic_runtime.ops.elementwise import cast

    return cast(v, dtype)


def _weak(value: Any) -> Any:
    """A range item or ``enumerate`` counter: a Python int in the eager loop, so it promotes
    like one (``Variable._weak``; ``y_int32 + i`` stays int32). A Python int stays one."""
    if value.__class__ is Variable:
        value._weak = True
    return value


def _full(value: int) -> Variable:
    from autostatic_runtime.creation import full

    return full([], value, dtypes.int64)

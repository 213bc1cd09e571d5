"""``TensorArray``: a Python list of tensors carried by a symbolic loop.

When a ``while`` op is built for a loop whose body appends to (or pops from) a list, the
list becomes a ``TensorArray`` (Paddle's list -> LoDTensorArray conversion)::

    xs = []                          xs = TensorArray([])           # empty, element unknown
    for i in range(n):               while i < n:                   # a while op; xs.buffer is
        xs.append(x * i)                 xs.append(x * i)           # a loop variable [-1, *e]
    y = rt.stack(xs)                 y = stack_array(xs.buffer)

It holds one Variable, its *buffer* (``[length, *element_shape]``), and emits the
``ops/tensor_array.py`` ops: ``append``/``pop``/``xs[i]``/``len(xs)`` (through
``convert_len``)/``for x in xs`` (a symbolic iterable), ``rt.stack``/``rt.concat``.

Mutation is in place, as for the list: every change goes through ``_set``, which records the
previous buffer in the innermost *mutation log*. ``cond`` opens a log around each branch,
so an ``append`` inside a tensor-dependent ``if`` becomes a ``cond`` output; ``while`` opens
one around its body to reject a mutated array that is not a loop variable.
"""

from __future__ import annotations

import itertools
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.convert_loops import SymbolicIterable
from autostatic_runtime.errors import ShapeError, StaticBuildError, user_location
from autostatic_runtime.static.program import Variable
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "TensorArray", "MutationLog", "to_tensor_arrays", "held_lists_to_tensor_arrays", "carrying",
    "MutatedOuterArrays", "type_empty_arrays",
]  # fmt: skip

_serial = itertools.count()
_logs: list[MutationLog] = []


class _ProbeDone(Exception):
    """Raised by the first ``append`` on an empty array while its element type is probed."""

    def __init__(self, array: TensorArray, value: Variable):
        super().__init__()
        self.array, self.value = array, value


class MutationLog:
    """The arrays mutated while the log is open (created before it), with their buffers at
    the time the log opened."""

    def __init__(self):
        self.start = next(_serial)
        self.before: dict[int, tuple[TensorArray, Any]] = {}

    def __enter__(self) -> MutationLog:
        _logs.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _logs.remove(self)

    def restore(self) -> dict[int, Any]:
        """Undo the logged mutations; return id -> buffer as it was when the log closed."""
        after = {}
        for key, (array, buffer) in self.before.items():
            after[key] = array.buffer
            array.buffer = buffer
        return after


class TensorArray(SymbolicIterable):
    """A list of same-shape, same-dtype tensors whose length is known when the program runs.

    Attributes:
        buffer: a Variable ``[length, *element_shape]``, or None while the array is empty and
            its element type is unknown (the loop that fills it finds it out by tracing).
        name: the user's variable name, for error messages.
    """

    __slots__ = ("buffer", "name", "dtype", "serial", "probing")

    def __init__(self, buffer: Variable | None, name: str = "list", dtype: Any = None):
        self.buffer = buffer
        self.name = name
        self.dtype = dtype if buffer is None else buffer.dtype
        self.serial = next(_serial)
        self.probing = False

    @classmethod
    def from_list(cls, items: list, name: str = "list", dtype: Any = None) -> TensorArray:
        """The array holding ``items`` (tensors, or Python numbers)."""
        if not items:
            return cls(None, name, dtype)
        from autostatic_runtime.ops.manipulation import stack

        values = [_element_value(x, name, dtype) for x in items]
        array = cls(None, name, dtype)
        for v in values[1:]:
            array._check(v, values[0], "")
        return cls(stack(values, axis=0), name)

    # -- the list interface ---------------------------------------------------------------
    def append(self, value: Any) -> None:
        """``xs.append(value)``: an ``array_write`` at index ``len(xs)``."""
        self.write(None, value)

    def extend(self, values: Any) -> None:
        """``xs.extend(values)`` for a list or tuple of values: one ``append`` each."""
        if not isinstance(values, (list, tuple)):
            raise StaticBuildError(
                f"'{self.name}.extend(...)' in a tensor-dependent loop takes a list or tuple of "
                f"tensors, got {type(values).__name__}",
                user_location(),
            )
        for value in values:
            self.append(value)

    def write(self, i: Any, value: Any) -> None:
        """``xs[i] = value`` (``i`` None or ``len(xs)``: append)."""
        from autostatic_runtime.ops.tensor_array import ArrayLength, ArrayWrite, CreateArray

        dtype = self.dtype if self.buffer is None else self.buffer.dtype
        value = _element_value(value, self.name, dtype)
        if self.buffer is None:
            if self.probing:
                raise _ProbeDone(self, value)
            self._set(CreateArray(shape=_known(value.shape), dtype=value.dtype))
        self._check(value, None, "append")
        if value.dtype != self.buffer.dtype:
            from autostatic_runtime.ops.elementwise import cast

            value = cast(value, self.buffer.dtype)
        index = ArrayLength(self.buffer) if i is None else _index(i, "write")
        self._set(ArrayWrite(value, index, self.buffer))

    def pop(self, i: Any = -1) -> Variable:
        """``xs.pop(i)``: the element, removed from the array (an ``array_pop``)."""
        from autostatic_runtime.ops.tensor_array import ArrayPop

        rest, item = ArrayPop(self._filled("pop"), _index(i, "pop"))
        self._set(rest)
        return item

    def read(self, i: Any) -> Variable:
        from autostatic_runtime.ops.tensor_array import ArrayRead

        return ArrayRead(self._filled("read"), _index(i, "read"))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return TensorArray(self._filled("slice")[i], self.name)
        return self.read(i)

    def __setitem__(self, i: Any, value: Any) -> None:
        self.write(i, value)

    def __reversed__(self) -> TensorArray:
        """``reversed(xs)``: the elements last to first (a new array; ``for v in
        reversed(xs)`` steps it, as it steps ``xs``)."""
        return TensorArray(self._filled("reverse")[::-1], self.name)

    def reverse(self) -> None:
        """``xs.reverse()``: the elements last to first, in place."""
        self._set(self._filled("reverse")[::-1])

    def length(self) -> Variable:
        from autostatic_runtime.ops.tensor_array import ArrayLength

        if self.buffer is None:
            from autostatic_runtime.creation import full

            return full([], 0, dtypes.int64)
        return ArrayLength(self.buffer)

    def __len__(self) -> int:
        raise StaticBuildError(
            f"the length of '{self.name}' (a list appended to in a tensor-dependent loop) is "
            "known only when the program runs; use len() in a converted function or "
            "rt.array_length",
            user_location(),
        )

    def stack(self, axis: int = 0) -> Variable:
        """The elements stacked along a new ``axis`` (``rt.stack(xs, axis)``)."""
        from autostatic_runtime.ops.tensor_array import StackArray

        out = StackArray(self._filled("stack"))
        if axis in (0, -out.ndim):
            return out
        from autostatic_runtime.ops.manipulation import moveaxis

        return moveaxis(out, 0, axis)

    def concat(self, axis: int = 0) -> Variable:
        """The elements joined along their existing ``axis`` (``rt.concat(xs, axis)``)."""
        from autostatic_runtime.ops.manipulation import flatten

        out = self.stack(0)
        if out.ndim < 2:
            raise StaticBuildError(
                f"concat of '{self.name}': cannot concatenate 0-D tensors; use stack instead",
                user_location(),
            )
        ndim = out.ndim - 1
        axis = axis % ndim
        if axis:
            from autostatic_runtime.ops.manipulation import moveaxis

            out = moveaxis(out, 0, axis)
        return flatten(out, axis, axis + 1)

    # -- a symbolic iterable (``for x in xs``) ---------------------------------------------
    def item(self, i: Variable) -> Any:
        return self.read(i)

    def placeholder(self) -> Any:
        from autostatic_runtime.creation import zeros

        buf = self._filled("iterate over")
        return zeros([max(d, 1) for d in buf._shape[1:]], dtype=buf.dtype)

    def __iter__(self):
        raise StaticBuildError(
            f"'{self.name}' (a list appended to in a tensor-dependent loop) can only be iterated "
            "by a 'for' statement of a converted function (its length is known only when the "
            "program runs)",
            user_location(),
        )

    def __repr__(self) -> str:
        return f"TensorArray({self.name!r}, {self.buffer!r})"

    # -- helpers ----------------------------------------------------------------------------
    def _set(self, buffer: Variable) -> None:
        if _logs:
            log = _logs[-1]
            if self.serial < log.start:
                log.before.setdefault(id(self), (self, self.buffer))
        self.buffer = buffer

    def _filled(self, what: str) -> Variable:
        if self.buffer is None:
            if self.probing:
                raise _ProbeDone(self, None)
            if what == "stack":  # nothing was ever appended: empty when it runs, as eagerly
                raise ShapeError(
                    "stack",
                    f"expects a non-empty list or tuple of tensors, and '{self.name}' is an "
                    "empty list (nothing is appended to it before this line)",
                    user_location(),
                )
            raise StaticBuildError(
                f"cannot {what} '{self.name}': it is an empty list whose element type is not "
                "known yet (append a tensor first, or create it with "
                "rt.create_array(dtype, [first_value]))",
                user_location(),
            )
        return self.buffer

    def _check(self, value: Variable, like: Any, what: str) -> None:
        like = like if like is not None else self.buffer
        if like is None:
            return
        shape = list(like.shape[1:] if like is self.buffer else like.shape)
        dtype = like.dtype
        if value.dtype != dtype and not (value.dtype.is_floating and dtype.is_floating):
            raise StaticBuildError(
                f"'{self.name}' holds {dtype} tensors, but this value is {value.dtype}; a list "
                "appended to in a tensor-dependent loop must keep one dtype (cast the value)",
                user_location(),
            )
        got = list(value.shape)
        if len(got) != len(shape) or any(a != b and a >= 0 and b >= 0 for a, b in zip(got, shape)):
            raise StaticBuildError(
                f"'{self.name}' holds tensors of shape {shape}, but this value has shape {got}; "
                "a list appended to in a tensor-dependent loop must hold same-shape tensors",
                user_location(),
            )


class MutatedOuterArrays(Exception):
    """Raised while a loop body is traced that mutates tensor arrays made before the loop
    which the loop does not carry (``rt.array_write(x, i, arr)`` on an ``arr`` bound before
    it): the loop is built again carrying them (``carrying``)."""

    def __init__(self, arrays: list[TensorArray]):
        super().__init__()
        self.arrays = arrays


def carrying(fn: Any, arrays: list[TensorArray], count: int, is_body: bool) -> Any:
    """``fn`` for a loop that carries ``arrays`` (tensor arrays made before it, which its body
    mutates in place): it takes the loop's ``count`` values, then one ``TensorArray`` per
    array; while ``fn`` runs each array holds that one's buffer, and a body returns the
    buffers it leaves them with after its own values. Other arrays it mutates raise
    ``MutatedOuterArrays`` (the loop then carries them too)."""

    def run(*args: Any) -> Any:
        own, extra = args[:count], args[count:]
        with MutationLog() as log:
            try:
                for array, value in zip(arrays, extra):
                    array._set(value.buffer)
                    array.probing = value.probing
                try:
                    out = fn(*own)
                except _ProbeDone as done:  # the loop probes its own array, not the user's
                    k = next((k for k, a in enumerate(arrays) if a is done.array), None)
                    if k is None:
                        raise
                    raise _ProbeDone(extra[k], done.value) from None
                buffers = [a.buffer for a in arrays]
            finally:
                for array in arrays:
                    array.probing = False
                log.restore()
        others = [a for a, _ in log.before.values() if all(a is not b for b in arrays)]
        if others:
            raise MutatedOuterArrays(others)
        if not is_body:
            return out
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        return out + [TensorArray(b, a.name, a.dtype) for a, b in zip(arrays, buffers)]

    run.__wrapped__ = fn  # errors name the user's function
    return run


def _index(i: Any, what: str) -> Any:
    """An index into a tensor array: a Python int, or a 0-D integer Variable (Paddle's
    counters are ``[1]`` tensors, ``rt.full([1], 0, "int64")``: reshaped to 0-D)."""
    if isinstance(i, Tensor):
        from autostatic_runtime.static.builder import capture, default_main_program

        i = capture(default_main_program(), i)
    if not isinstance(i, Variable):
        return i
    if not i.dtype.is_integer or i.size not in (1, -1):
        raise StaticBuildError(
            f"cannot {what} a tensor array at index {i.name!r} ({i.dtype}, shape {i.shape}): "
            "an index is one integer (a Python int, or an int tensor of shape [] or [1])",
            user_location(),
        )
    if i._shape == ():
        return i
    from autostatic_runtime.ops.manipulation import reshape

    out = reshape(i, [])
    out._weak = i._weak
    return out


def _known(shape: Any) -> tuple:
    return tuple(int(d) for d in shape)


def _element_value(x: Any, name: str, dtype: Any) -> Variable:
    """An element as a Variable of the current program (Python numbers become tensors, in
    the dtype ``rt.stack`` gives a list of them: a *weak* value, a range item or counter that
    is a Python int eagerly, is int64 here, a float the default float)."""
    if isinstance(x, Variable):
        if x._weak:  # takes the array's dtype, as a Python number in a list would
            want = python_number_dtype(x.dtype) if dtype is None else dtype
            if want != x.dtype:
                from autostatic_runtime.ops.elementwise import cast

                return cast(x, want)
        return x
    if isinstance(x, Tensor):
        from autostatic_runtime.static.builder import capture, default_main_program

        return capture(default_main_program(), x)
    if isinstance(x, (bool, int, float)) and not isinstance(x, TensorLike):
        from autostatic_runtime.creation import full

        if dtype is None:
            dtype = (
                dtypes.bool_
                if isinstance(x, bool)
                else dtypes.int64
                if isinstance(x, int)
                else dtypes.get_default_dtype()
            )
        return full([], x, dtype)
    what = "a list" if isinstance(x, TensorArray) else f"a {type(x).__name__}"
    raise StaticBuildError(
        f"'{name}' is appended to in a tensor-dependent loop, so it becomes a tensor array, "
        f"which holds tensors only, but it is given {what} (nested lists and tuples are not "
        "supported; append a tensor, e.g. rt.stack(...) of the parts)",
        user_location(),
    )


def type_empty_arrays(probe: Any, values: Any) -> None:
    """Give each empty tensor array of unknown element type among ``values`` (walked through
    tuples, lists and dicts) the type of the first value a loop body appends to it:
    ``probe()`` traces the body once (then discards it, returning what it raised), and the
    array's first ``append`` stops it. A read before the first append inside a tensor
    ``if`` (``if i > 1: prev = xs[-2]``) does not stop it (``convert_ifelse``), one outside
    is left to the loop to report."""
    from autostatic_runtime.ops.tensor_array import CreateArray

    pending = [a for a in _arrays_in(values) if a.buffer is None]
    while pending:
        for array in pending:
            array.probing = True
        try:
            done = probe()
        finally:
            for array in pending:
                array.probing = False
        if not isinstance(done, _ProbeDone) or done.value is None:
            return
        shape = tuple(d if d >= 0 else 0 for d in done.value._shape)  # the first write's
        done.array.buffer = CreateArray(shape=shape, dtype=done.value.dtype)
        pending = [a for a in pending if a.buffer is None]


def _arrays_in(value: Any, depth: int = 0) -> list[TensorArray]:
    if value.__class__ is TensorArray:
        return [value]
    if depth > 3:
        return []
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays_in(v, depth + 1)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _arrays_in(v, depth + 1)]
    return []


def held_lists_to_tensor_arrays(entries: tuple) -> None:
    """Each list held in a container that a symbolic loop appends to (``(container, key,
    text)``: ``feats["key"].append(v)``) replaced there by a ``TensorArray`` of its items, which
    the loop then carries."""
    for container, key, text in entries:
        try:
            value = container[key]
        except (KeyError, IndexError, TypeError):
            continue  # the loop body's own KeyError, when it runs
        if type(value) is list:
            container[key] = TensorArray.from_list(value, text)


def python_number_dtype(dtype: Any) -> Any:
    """The dtype ``rt.to_tensor`` gives a Python number of ``dtype``'s kind."""
    k = dtypes.kind(dtype)
    return dtypes.bool_ if k == 0 else dtypes.int64 if k == 1 else dtypes.get_default_dtype()


def to_tensor_arrays(values: tuple, names: tuple, arrays: tuple) -> tuple:
    """``values`` with each Python list named in ``arrays`` turned into a ``TensorArray``
    (the loop variables of a loop that just became a ``while`` op)."""
    out = []
    for value, name in zip(values, names):
        if name in arrays and isinstance(value, list):
            value = TensorArray.from_list(value, name)
        out.append(value)
    return tuple(out)

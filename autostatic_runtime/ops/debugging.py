"""Debugging ops with side effects: ``print`` and ``assert`` (Paddle's ``Print``/``Assert``).

Both act each time the program runs, not while it is built::

    rt.static.Print(x, message="after fc")   # prints name, shape, dtype and values
    rt.static.Assert(x.sum() > 0, message="empty batch")

Converted code uses them for ``print(...)`` and ``assert`` statements on symbolic tensors
(``autostatic_runtime.convert_builtins``). Their Operators carry ``side_effect=True`` so the
executor's dead-code pruning keeps them although nothing reads their outputs; the attribute
survives serialization like any other. In eager mode both act at once.
"""

from __future__ import annotations

import sys
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import (
    AssertionFailedError,
    OpError,
    format_location,
    raised_again,
    remember_raise,
    user_location,
)
from autostatic_runtime.ops.registry import Spec, dtype_of, op, shape_of
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = ["Print", "Assert"]

_STREAMS = ("stdout", "stderr")


def _host_text(array: Any, summarize: int = -1) -> tuple[str, list, str]:
    """(values text, shape, dtype) of a backend array, via an eager Tensor."""
    t = Tensor._rebuild(array, None, 0)
    values = t.numpy()
    if summarize is not None and summarize >= 0 and values.size > summarize:
        flat = values.reshape(-1)[:summarize]
        body = " ".join(str(v) for v in flat.tolist()) + " ..."
    else:
        body = " ".join(str(v) for v in values.reshape(-1).tolist())
    return body, list(values.shape), str(t.dtype)


def _paddle_style(array: Any, name: str, message: str | None, summarize: int, show: tuple) -> str:
    """Paddle's ``Print`` layout: one line per field."""
    body, shape, dtype = _host_text(array, summarize)
    show_name, show_type, show_shape = show
    lines = [f"Variable: {name}"] if show_name else []
    if message:
        lines.append(f"  - message: {message}")
    if show_shape:
        lines.append(f"  - shape: {shape}")
    if show_type:
        lines.append(f"  - dtype: {dtype}")
    lines.append(f"  - data: [{body}]")
    return "\n".join(lines)


@op("print")
class PrintOp:
    """Print when the program runs; passes its first input through (Paddle's ``print`` op).

    ``parts`` is the printed line: a string per Python value (formatted while building) and
    ``None`` where the next tensor input goes, formatted as ``print`` formats an eager
    Tensor, or as it formats a NumPy array for the tensor inputs in ``numpy`` (positions: a
    function's NumPy array argument, which ``to_static`` feeds as a tensor), or a Python
    number for those in ``numbers`` (a Python counter a tensor loop carries). With
    ``style="paddle"`` each tensor is shown as Paddle's ``Print`` shows it (``names``,
    ``message``, ``summarize``, ``show`` = (name, dtype, shape) switches).
    """

    def infer(x, *more, **attrs):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(
        xp,
        x,
        *more,
        parts=(None,),
        sep=" ",
        end="\n",
        file="stdout",
        flush=False,
        style="python",
        names=(),
        message=None,
        summarize=20,
        show=(True, True, True),
        numpy=(),
        numbers=(),
        side_effect=True,
    ):
        values = (x, *more)
        if style == "paddle":
            texts = [
                _paddle_style(v, n, message, summarize, tuple(show)) for v, n in zip(values, names)
            ]
        else:
            shown = [Tensor._rebuild(v, None, 0) for v in values]
            for k in numpy:
                shown[k] = shown[k].numpy()
            for k in numbers:  # (a float: the shortest text of its own dtype)
                value = shown[k].numpy()
                shown[k] = value if value.dtype.kind == "f" else value.item()
            it = iter(shown)
            texts = [str(next(it)) if p is None else p for p in parts]
        stream = sys.stdout if file == "stdout" else sys.stderr
        print(*texts, sep=sep, end=end, file=stream, flush=flush)
        return x

    def grad(g, out, x, *more, **attrs):
        return (g,) + (None,) * len(more)


@op("assert")
class AssertOp:
    """Raise ``AssertionFailedError`` when the program runs and ``cond`` is false (Paddle's
    ``assert`` op). ``data`` tensors are shown in the message (``summarize`` elements each);
    ``location`` is the user's (file, line, function) that built it. No outputs."""

    multi_output = True

    def infer(cond, *data, **attrs):
        return ()

    def kernel(
        xp,
        cond,
        *data,
        message="",
        source="",
        summarize=20,
        location=None,
        names=(),
        side_effect=True,
        raises="",
        raises_args=(),
    ):
        if not bool(xp.all(cond)):
            where = tuple(location) if location else None
            if raises:  # a branch that raised while traced: the user's exception again
                note = f"{message}; the program took that branch{format_location(where)}"
                exc = raised_again(raises, tuple(raises_args), note)
                if exc is not None:
                    raise exc
            shown = [f"{n} = [{_host_text(d, summarize)[0]}]" for n, d in zip(names, data)]
            raise AssertionFailedError(_assert_text(source, message, shown), where)
        return ()

    grad = None


def _assert_text(source: str, message: str, shown: list) -> str:
    text = f"'assert {source}' failed" if source else "the assertion failed"
    if message:
        text += f": {message}"
    if shown:
        text += " (" + "; ".join(shown) + ")"
    return text


# ---- public functions ---------------------------------------------------------------------


def Print(  # noqa: N802  (Paddle's name)
    input: Any,
    first_n: int = -1,
    message: str | None = None,
    summarize: int = 20,
    print_tensor_name: bool = True,
    print_tensor_type: bool = True,
    print_tensor_shape: bool = True,
    print_tensor_layout: bool = True,
    print_tensor_lod: bool = True,
    print_phase: str = "both",
) -> Any:
    """Print ``input`` (name, shape, dtype and ``summarize`` values; -1 for all) with
    ``message`` each time the program runs, and return it (Paddle's ``paddle.static.Print``).
    ``first_n``, layout, LoD and ``print_phase`` are accepted for compatibility; gradients
    pass through unprinted."""
    if not isinstance(input, TensorLike):
        raise OpError("Print", f"expects a tensor, got {type(input).__name__}", user_location())
    return PrintOp(
        input,
        style="paddle",
        names=(getattr(input, "name", None) or "tensor",),
        message=message,
        summarize=int(summarize),
        show=(bool(print_tensor_name), bool(print_tensor_type), bool(print_tensor_shape)),
        side_effect=True,
    )


def print_values(
    args: tuple, sep: str = " ", end: str = "\n", stream: str = "stdout", flush: bool = False
) -> Any:
    """A ``print`` op for ``print(*args)``: tensors among ``args`` are printed when the
    program runs, everything else is formatted now with ``str``. Returns the op's output."""
    tensors = [a for a in args if isinstance(a, TensorLike)]
    parts = tuple(None if isinstance(a, TensorLike) else str(a) for a in args)
    if stream not in _STREAMS:
        raise ValueError(f"stream must be one of {_STREAMS}, got {stream!r}")
    if not tensors:  # a line of Python values: the op passes a constant through
        from autostatic_runtime.creation import full

        tensors = [full([], False, "bool")]
    # values eager code holds as NumPy arrays or Python numbers print as those do
    extra = {}
    numpy = tuple(k for k, t in enumerate(tensors) if getattr(t, "_numpy", False))
    if numpy:
        extra["numpy"] = numpy
    numbers = tuple(
        k for k, t in enumerate(tensors) if getattr(t, "_weak", False) and tuple(t.shape) == ()
    )
    if numbers:
        extra["numbers"] = numbers
    return PrintOp(
        *tensors,
        parts=parts,
        sep=sep,
        end=end,
        file=stream,
        flush=bool(flush),
        side_effect=True,
        **extra,
    )


def Assert(  # noqa: N802  (Paddle's name)
    cond: Any,
    data: Any = None,
    summarize: int = 20,
    name: str | None = None,
    message: str = "",
    source: str = "",
    raises: BaseException | None = None,
) -> None:
    """Raise ``AssertionFailedError`` if ``cond`` is false: when the program runs for a
    symbolic ``cond`` (an ``assert`` op), at once otherwise (Paddle's ``Assert``). ``data``
    (tensors) is shown in the message, ``summarize`` elements each. ``raises``: an exception
    to raise again instead (a copy, with ``message`` as a note), as a branch of a tensor
    ``if`` that raised it while traced does when the program takes it."""
    from autostatic_runtime.static.program import Variable

    data = [] if data is None else list(data) if isinstance(data, (list, tuple)) else [data]
    location = user_location()
    if not isinstance(cond, Variable):
        if not bool(_all(cond)):
            shown = [
                f"{getattr(d, 'name', None) or i} = [{_host_text(d._data, summarize)[0]}]"
                for i, d in enumerate(data)
                if isinstance(d, Tensor)
            ]
            raise AssertionFailedError(_assert_text(source, message, shown), location)
        return None
    if cond.dtype != dtypes.bool_:
        from autostatic_runtime.ops.elementwise import cast

        cond = cast(cond, dtypes.bool_)
    names = tuple(getattr(d, "name", None) or f"data{i}" for i, d in enumerate(data))
    again = {}
    if raises is not None:
        key, args = remember_raise(raises)
        if key:
            again = {"raises": key, "raises_args": args}
    AssertOp(
        cond,
        *data,
        message=str(message or ""),
        source=str(source or ""),
        summarize=int(summarize),
        location=location,
        names=names,
        side_effect=True,
        **again,
    )
    return None


def _all(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.numpy().all()
    return value

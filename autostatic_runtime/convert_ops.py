"""What converted code calls at run time (``_jst.<name>`` in generated source).

Converted code keeps every statement as the user wrote it for Python values and eager
tensors; it calls these functions only when a condition turned out to be *symbolic* (a
static ``Variable`` while a program is being traced). Each ``convert_*`` docstring shows the
plain Python it stands for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from autostatic_runtime import dtypes, mode
from autostatic_runtime.convert_builtins import (  # builtins in converted code
    builtins,
    convert_assert,
    convert_bool,
    convert_float,
    convert_int,
    convert_isinstance,
    convert_len,
    convert_print,
    convert_shape,
    convert_var_dtype,
)
from autostatic_runtime.convert_loops import (  # ``for`` loops
    check_loop_list,
    convert_enumerate,
    convert_range,
    convert_zip,
    is_symbolic_iterable,
    loop_continues,
    loop_item,
    loop_length,
    loop_placeholder,
)
from autostatic_runtime.errors import StaticBuildError
from autostatic_runtime.static.control_flow import PLACEHOLDER
from autostatic_runtime.static.program import Variable

__all__ = [
    "tracing", "traces_here", "traced", "convert_call", "is_symbolic", "convert_ifelse",
    "convert_while_loop",
    "logical_and", "logical_or", "logical_not", "select", "UNDEFINED", "Undefined",
    "PLACEHOLDER", "unsupported",
    "builtins", "convert_assert", "convert_print", "convert_var_dtype", "convert_int",
    "convert_float", "convert_bool", "convert_len", "convert_shape", "convert_isinstance",
    "convert_range", "convert_enumerate", "convert_zip", "is_symbolic_iterable", "loop_length",
    "loop_continues", "loop_item", "loop_placeholder", "check_loop_list",
]  # fmt: skip


#: ``AUTOSTATIC_FORCE_CONVERTED=1`` (read at import): converted functions always run their
#: converted body, on Python values too - a testing and diagnostic setting that makes a test
#: suite exercise the converter's Python semantics (see docs/reliability.md).
FORCE_CONVERTED = os.environ.get("AUTOSTATIC_FORCE_CONVERTED", "").strip().lower() in (
    "1", "true", "yes", "on",
)  # fmt: skip

#: True while static mode is on (or forced): converted functions run their converted body
tracing = FORCE_CONVERTED


def _follow_mode(static: bool) -> None:
    global tracing
    tracing = static or FORCE_CONVERTED


mode.on_switch(_follow_mode)


def traces_here() -> bool:
    """True when this thread is tracing a program (after ``tracing`` said some thread may be)."""
    return tracing


_traced_caller: list = [None]  # set by the compiler (autostatic) when it is imported


def traced(target: Any) -> Callable:
    """The tracing function of the converted function calling this, from its entry check::

        def f(a, b=2, *args, c, **kw):
            if __jst__.tracing and __jst__.traces_here():
                return __jst__.traced(KEY)(a, b, *args, c=c, **kw)   # same arguments
            <original body>

    The compiler finds (builds on first use) the function's *tracing function* - its body
    converted - from ``target`` (the key the hook compiled in, or the function
    ``autostatic.convert`` made) and the caller's frame (its globals and free variables).
    """
    finder = _traced_caller[0]
    if finder is None:
        raise StaticBuildError(
            "a converted function is being traced but the autostatic compiler is not loaded; "
            "import autostatic before tracing"
        )
    return finder(target, sys._getframe(1))


_call_converter: list = [None]  # set by the compiler (autostatic) when it is imported


def convert_call(fn: Callable) -> Callable:
    """``fn`` itself, or its converted form while tracing (``convert_call(f)(*args)`` is
    ``f(*args)``). The compiler converts user functions, methods, callable objects and
    ``Layer.forward``; builtins, the standard library, numpy and autostatic stay as they are.
    """
    converter = _call_converter[0]
    return fn if converter is None else converter(fn)


def is_symbolic(value: Any) -> bool:
    """True for a static Variable: the statement must become an op. (One type test.)"""
    return value.__class__ is Variable or isinstance(value, Variable)


class Undefined:
    """Stands for a variable that is not bound on the path taken (``UNDEFINED``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<undefined>"

    def __bool__(self) -> bool:
        raise NameError("a variable is used before it is defined on this path")


UNDEFINED = Undefined()

#: Generated names that hold a function's return value start with this (the early-return
#: lowering); a branch that has not returned yet gives a placeholder for them.
RETURN_VALUE = "__retval"


def convert_ifelse(
    pred: Variable,
    true_fn: Callable,
    false_fn: Callable,
    inputs: tuple,
    names: tuple,
    location: tuple | None = None,
    arrays: tuple = (),
) -> tuple:
    """The symbolic path of

        if pred:
            <true branch>        # true_fn(*inputs) returns the branch's outputs
        else:
            <false branch>

    as a ``cond`` op, or as exactly that statement when ``pred`` is not symbolic. Returns
    the values of ``names`` after the statement (``UNDEFINED`` where one is left unbound).
    """
    if not isinstance(pred, Variable):
        outs = true_fn(*inputs) if pred else false_fn(*inputs)
        if any(v is PLACEHOLDER for v in outs):
            return tuple(UNDEFINED if v is PLACEHOLDER else v for v in outs)
        return outs
    from autostatic_runtime.static.control_flow import cond

    def branch(fn: Callable, label: str) -> Callable:
        def run() -> tuple:
            outs = list(fn(*inputs))
            for i, (name, value) in enumerate(zip(names, outs)):
                if value is UNDEFINED and name.startswith(RETURN_VALUE):
                    outs[i] = PLACEHOLDER
                elif value is UNDEFINED:
                    raise StaticBuildError(
                        f"'{name}' is set in only one branch of this tensor-dependent 'if' but "
                        f"used after it; '{name}' must also be initialized in the {label} "
                        "branch (or before the 'if')",
                        location,
                    )
            return tuple(outs)

        run.__wrapped__ = fn  # errors name the branch's own lines
        return run

    outs = cond(pred, branch(true_fn, "true"), branch(false_fn, "else"))
    return tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)


def convert_while_loop(
    cond_fn: Callable,
    body_fn: Callable,
    loop_vars: tuple,
    consts: tuple,
    names: tuple,
    location: tuple | None = None,
    arrays: tuple = (),
) -> tuple:
    """The symbolic path of

        while cond_fn(*loop_vars, *consts):
            loop_vars = body_fn(*loop_vars, *consts)

    in Python while the condition is a Python value, then as a ``while`` op from the first
    iteration whose condition is symbolic (Python numbers among the loop variables become
    tensors). ``consts`` are the other values the loop reads. ``arrays`` names the loop
    variables the body ``append``s to or ``pop``s from: Python lists among them become
    ``TensorArray``s when the loop becomes a ``while`` op.
    """
    loop_vars = tuple(loop_vars)
    while True:
        pred = cond_fn(*loop_vars, *consts)
        if isinstance(pred, Variable):
            break
        if not pred:
            return loop_vars
        loop_vars = tuple(body_fn(*loop_vars, *consts))
    from autostatic_runtime.static.control_flow import _build_while

    for name, value in zip(names, loop_vars):
        if value is UNDEFINED and name.startswith(RETURN_VALUE):
            raise StaticBuildError(
                "'return' inside a loop whose condition is a tensor is not supported yet; "
                "keep the value in a variable, 'break', and return it after the loop",
                location,
            )
        if value is UNDEFINED:
            raise StaticBuildError(
                f"loop must iterate at least once to initialize '{name}' (this tensor-dependent "
                "loop uses it before it is set); set it before the loop",
                location,
            )
    if arrays:
        from autostatic_runtime.static.tensor_array import to_tensor_arrays

        loop_vars = to_tensor_arrays(loop_vars, names, arrays)
    try:
        out = _build_while(
            lambda *v: cond_fn(*v, *consts),
            lambda *v: tuple(body_fn(*v, *consts)),
            list(loop_vars),
            names,
        )
    except StaticBuildError as exc:
        raise StaticBuildError(exc.detail, location) from None
    return tuple(out)


# ---- expressions ------------------------------------------------------------------------


def logical_and(lhs: Variable, rhs: Any) -> Any:
    """``lhs and rhs`` once ``lhs`` is symbolic (both sides are evaluated)."""
    from autostatic_runtime.ops.elementwise import logical_and as op

    return op(lhs, rhs)


def logical_or(lhs: Variable, rhs: Any) -> Any:
    """``lhs or rhs`` once ``lhs`` is symbolic (both sides are evaluated)."""
    from autostatic_runtime.ops.elementwise import logical_or as op

    return op(lhs, rhs)


def logical_not(value: Variable) -> Any:
    """``not value`` for a symbolic value."""
    from autostatic_runtime.ops.elementwise import logical_not as op

    return op(value)


def select(pred: Variable, if_true: Any, if_false: Any) -> Any:
    """``if_true if pred else if_false`` for a symbolic ``pred`` (both sides evaluated)."""
    from autostatic_runtime.ops.elementwise import cast, where

    if pred.dtype != dtypes.bool_:
        pred = cast(pred, dtypes.bool_)
    return where(pred, if_true, if_false)


def unsupported(message: str, location: tuple | None = None) -> StaticBuildError:
    """The error for a construct the symbolic path cannot express (raised by converted code)."""
    return StaticBuildError(message, location)

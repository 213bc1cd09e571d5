"""Building programs: static mode, default programs, ``program_guard``, ``data``, op appending.

In static mode every op call appends an Operator to the current block of the main program
instead of running a kernel: ``static_apply`` runs the op's ``infer`` on the input Variables
(so shape and dtype errors surface at the user's line, while building) and creates the output
Variables. Eager Tensors used in static mode (a layer's parameters, a constant made earlier)
are captured as persistable variables whose values the Executor loads on first use.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from autostatic_runtime import dtypes, mode
from autostatic_runtime.dispatch import eager_apply
from autostatic_runtime.errors import OpError, user_location
from autostatic_runtime.ops import registry
from autostatic_runtime.ops.registry import Spec
from autostatic_runtime.static.program import Block, Literal, Parameter, Program, Variable
from autostatic_runtime.tensor import Tensor

__all__ = [
    "default_main_program",
    "default_startup_program",
    "program_guard",
    "data",
    "enable_static",
    "disable_static",
    "in_static_mode",
    "name_scope",
]

_main: list[Program] = [Program()]
_startup: list[Program] = [Program()]


class _Guarded(threading.local):
    """The programs a ``program_guard`` selected, per thread (None: the defaults)."""

    main: Program | None = None
    startup: Program | None = None


_guarded = _Guarded()


def default_main_program() -> Program:
    """The program ops are appended to (outside any ``program_guard``)."""
    main = _guarded.main
    return _main[0] if main is None else main


def default_startup_program() -> Program:
    """The program holding parameter initialisation (outside any ``program_guard``)."""
    startup = _guarded.startup
    return _startup[0] if startup is None else startup


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None) -> Iterator[None]:
    """Append ops to ``main_program`` (and parameter initialisers to ``startup_program``), in
    the calling thread: another thread building a program at the same time keeps its own."""
    if not isinstance(main_program, Program):
        raise TypeError(f"program_guard expects a Program, got {type(main_program).__name__}")
    saved = _guarded.main, _guarded.startup
    _guarded.main = main_program
    if startup_program is not None:
        _guarded.startup = startup_program
    try:
        yield
    finally:
        _guarded.main, _guarded.startup = saved
        if saved[0] is not main_program:  # the outermost guard of this program
            _restore_written(main_program)


@contextlib.contextmanager
def name_scope(prefix: str | None = None) -> Iterator[None]:
    """Accepted for Paddle compatibility; names are unique per program already."""
    yield


def enable_static() -> None:
    """Switch the calling thread to static mode: its ops append to the current program
    instead of running. Other threads keep running ops eagerly."""
    mode.set_static(True)


def disable_static() -> None:
    """Back to eager (dynamic) mode, the default, in the calling thread."""
    mode.set_static(False)


def in_static_mode() -> bool:
    """True when the calling thread is in static mode."""
    return mode.static_here()


def _thread_apply(op: registry.OpDef, inputs: tuple, attrs: dict):
    """The dispatch while some thread is in static mode: static in that thread, eager in
    the others (installed only then, so eager code pays nothing when nobody builds)."""
    if _mode_local.static:
        return static_apply(op, inputs, attrs)
    return eager_apply(op, inputs, attrs)


def _follow_mode(any_static: bool) -> None:
    registry._dispatch[0] = _thread_apply if any_static else eager_apply


_mode_local = mode._local


@contextlib.contextmanager
def static_guard() -> Iterator[None]:
    """Static mode inside the block, restoring the previous mode after."""
    was_static = in_static_mode()
    enable_static()
    try:
        yield
    finally:
        if not was_static:
            disable_static()


def data(name: str, shape: Any, dtype: Any = None, lod_level: int = 0) -> Variable:
    """A feed variable of the main program; ``None`` or -1 dims are filled at run time."""
    block = default_main_program().global_block()
    if name in block.vars:
        raise OpError("data", f"the program already has a variable named {name!r}", user_location())
    shape = [-1 if d is None else int(d) for d in shape]
    v = block.create_var(
        name, shape, dtype or dtypes.get_default_dtype(), stop_gradient=True, is_data=True
    )
    return v


# ---- appending ops ----------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """Attributes and literals as plain, serializable Python data."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dtypes.DType) or isinstance(value, Block):
        return value
    if isinstance(value, np.dtype):
        return dtypes.convert_dtype(value)
    return value


def static_apply(op: registry.OpDef, inputs: tuple, attrs: dict):
    """Append ``op`` to the current block; return its output Variable(s)."""
    program = _guarded.main
    if program is None:
        program = _main[0]
    block = program.current_block()
    attrs = {k: _plain(v) for k, v in attrs.items()}
    operands = []
    infer_args = []
    for v in inputs:
        if isinstance(v, Variable):
            operands.append(v)
            infer_args.append(v)
        elif isinstance(v, Tensor):
            var = capture(program, v)
            operands.append(var)
            infer_args.append(var)
        else:
            value = _plain(v)
            operands.append(Literal(value))
            infer_args.append(value)
    try:
        spec = op.infer(*infer_args, **attrs)
    except OpError as exc:  # name the op the user called, not an inference helper
        raise type(exc)(op.name, exc.detail, exc.location or user_location()) from None
    specs = spec if op.multi_output else (spec,)
    no_grad = op.grad is None or all(
        not isinstance(v, Variable) or v.stop_gradient for v in operands
    )
    outs = []
    for i, s in enumerate(specs):
        s = s if isinstance(s, Spec) else Spec(tuple(s.shape), s.dtype)
        stop = no_grad or i in op.nondiff_outputs or not dtypes.convert_dtype(s.dtype).is_floating
        outs.append(
            block.create_var(program.unique_name(op.name), s.shape, s.dtype, stop_gradient=stop)
        )
    op_attrs = attrs
    role = _current_role()
    if role != "forward":
        op_attrs = dict(attrs, op_role=role)
    block.append_op(op.name, operands, outs, op_attrs)
    return tuple(outs) if op.multi_output else outs[0]


def _current_role() -> str:
    from autostatic_runtime.static.backward import current_role

    return current_role()


_UNNAMED = itertools.count()


def capture(program: Program, tensor: Tensor) -> Variable:
    """The persistable variable standing for an eager Tensor inside ``program``."""
    captured = program.__dict__.setdefault("_captured", {})
    entry = captured.get(id(tensor))
    if entry is not None and entry[1] is tensor:
        return entry[0]
    block = program.global_block()
    if tensor.name:
        name = tensor.name if tensor.name not in block.vars else program.unique_name(tensor.name)
    else:  # unique across programs: they share the global scope, which keeps the first value
        name = f"{'param' if not tensor.stop_gradient else 'const'}_{next(_UNNAMED)}"
    if not tensor.stop_gradient:
        var = block.create_parameter(name, tensor.shape, tensor.dtype, trainable=True)
    else:
        var = block.create_var(
            name, tensor.shape, tensor.dtype, persistable=True, stop_gradient=True
        )
    captured[id(tensor)] = (var, tensor)
    if tensor.persistable or not tensor.stop_gradient:
        _initialize_in_startup(var, tensor)
    return var


def _initialize_in_startup(var: Variable, tensor: Tensor) -> None:
    """Parameters and buffers get their initial value from the startup program, as in Paddle:
    the layer's freshly initialised eager value is copied in by an ``assign`` op."""
    startup = default_startup_program()
    if startup is var.block.program:
        return
    block = startup.global_block()
    if var.name in block.vars:
        return
    init = block.create_var(
        f"{var.name}@INIT", var._shape, var.dtype, persistable=True, stop_gradient=True
    )
    startup.__dict__.setdefault("_captured", {})[id(tensor)] = (init, tensor)
    if isinstance(var, Parameter):
        target = block.create_parameter(var.name, var._shape, var.dtype, var.trainable)
    else:
        target = block.create_var(
            var.name, var._shape, var.dtype, persistable=True, stop_gradient=True
        )
    block.append_op("assign", [init], [target], {}, location=user_location())


def write_captured(store: dict, key: Any, value: Variable, check: Any = None) -> None:
    """``store[key] = value`` while a program is built, where ``store[key]`` held an eager
    Tensor (a layer's buffer): the program assigns the tensor's persistable variable, so
    each run updates the tensor as eager code would; the rest of the trace reads ``value``
    (gradients flow through it); ``store[key]`` holds the tensor again once the program's
    outermost guard exits. ``check(tensor, value)`` may reject the value first."""
    program = default_main_program()
    writes = program.__dict__.setdefault("_written_captures", {})
    entry = writes.get((id(store), key))
    if entry is None:
        tensor = store.get(key)
        if not isinstance(tensor, Tensor):  # made while tracing: the trace's own value
            store[key] = value
            return
        entry = writes[(id(store), key)] = (store, key, tensor)
    if check is not None:
        check(entry[2], value)
    capture(program, entry[2]).set_value(value)
    store[key] = value


def _restore_written(program: Program) -> None:
    for store, key, tensor in program.__dict__.pop("_written_captures", {}).values():
        if isinstance(store.get(key), Variable):
            store[key] = tensor


def captured_values(program: Program) -> dict[str, Tensor]:
    """Name -> eager Tensor for every tensor captured while building ``program``."""
    return {var.name: t for var, t in program.__dict__.get("_captured", {}).values()}


def is_parameter(v: Any) -> bool:
    return isinstance(v, Parameter)


mode.on_switch(_follow_mode)

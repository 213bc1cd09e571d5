"""``optimizer.minimize(loss)`` in static mode: the same update rules, appended as ops.

Each optimizer's ``_update`` is written against backend arrays and an ``xp`` namespace. Here
it runs on Variables instead: a parameter is represented by ``StaticParam`` (reading
``._data`` gives its Variable, assigning it appends an in-place write), ``xp`` by
``STATIC_XP`` (functions that append ops), and accumulators become persistable variables
initialised in the startup program.

Inside ``updates_skipped_when(flag)`` (``rt.amp.GradScaler`` in a compiled training step: a
step whose gradients hold an inf or nan changes nothing) every write of a parameter or an
accumulator becomes ``where(flag, old, new)``: the skip is an op, not a Python branch.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.static.program import Parameter, Program, Variable


def _asarray(value: Any, dtype: Any = None):
    from autostatic_runtime.creation import full

    return full([], value, dtype=dtypes.get_default_dtype() if dtype is None else dtype)


def _static_namespace() -> types.SimpleNamespace:
    import autostatic_runtime as rt

    return types.SimpleNamespace(
        sqrt=rt.sqrt,
        maximum=rt.maximum,
        minimum=rt.minimum,
        abs=rt.abs,
        sign=rt.sign,
        sum=lambda x, axis=None, keepdims=False: rt.sum(x, axis=axis, keepdim=keepdims),
        clip=rt.clip,
        astype=lambda x, dtype: rt.cast(x, dtype),
        asarray=_asarray,
        multiply=rt.multiply,
        where=rt.where,
    )


class StaticParam:
    """Stands in for a parameter while its update ops are appended: ``var`` is its Variable,
    ``eager`` the eager parameter behind it in a traced training step (None for a static
    program's own parameter)."""

    def __init__(self, var: Parameter, eager: Any = None):
        self.var = var
        self.eager = eager
        self.name = var.name
        self.shape = var.shape
        self.dtype = var.dtype
        source = eager if eager is not None else var
        self.optimize_attr = getattr(source, "optimize_attr", None) or {"learning_rate": 1.0}
        self.regularizer = getattr(source, "regularizer", None)
        self.need_clip = getattr(source, "need_clip", True)
        self.stop_gradient = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getattr__(self, name: str) -> Any:  # what the eager parameter has (a user's hook)
        eager = self.__dict__.get("eager")
        if eager is None:
            raise AttributeError(name)
        return getattr(eager, name)

    @property
    def _data(self) -> Variable:
        return self.var

    @_data.setter
    def _data(self, value: Variable) -> None:
        self.var.set_value(guarded(self.var, value))


class _Skip(threading.local):
    flag: Any = None  # a bool Variable: when true at run time, updates keep the old values


_SKIP = _Skip()


@contextmanager
def updates_skipped_when(flag: Variable) -> Iterator[None]:
    """Update ops appended inside the block write their targets only where ``flag`` (a 0-D
    bool Variable) is false at run time."""
    saved = _SKIP.flag
    _SKIP.flag = flag
    try:
        yield
    finally:
        _SKIP.flag = saved


def guarded(old: Variable, new: Any) -> Any:
    """What an update writes into ``old``: ``new``, or ``where(flag, old, new)`` inside
    ``updates_skipped_when(flag)``."""
    flag = _SKIP.flag
    if flag is None:
        return new
    from autostatic_runtime.ops.elementwise import where

    return where(flag, old, new)


def is_static(param: Any) -> bool:
    return isinstance(param, StaticParam)


def xp_of(value: Any):
    """The namespace update rules use for ``value``: the backend's, or ops for Variables."""
    if isinstance(value, Variable):
        return _static_namespace()
    from autostatic_runtime.backends import backend_of

    return backend_of(value).xp


def new_accumulator(key: str, param: StaticParam, fill: float, scalar: bool) -> Variable:
    """A persistable accumulator in the main program, zero/``fill``-initialised at startup."""
    from autostatic_runtime.static.builder import default_startup_program

    program: Program = param.var.block.program
    shape = () if scalar else tuple(param.var._shape)
    dtype = param.var.dtype
    main_var = program.global_block().create_var(
        key, shape, dtype, persistable=True, stop_gradient=True
    )
    startup = default_startup_program().global_block()
    if key not in startup.vars:
        init = startup.create_var(key, shape, dtype, persistable=True, stop_gradient=True)
        startup.append_op(
            "fill_constant", [], [init], {"shape": shape, "value": float(fill), "dtype": dtype}
        )
    return main_var


def state_var(value: Any, scalar: bool, captured: bool = True) -> Variable:
    """An accumulator inside the program being built: the persistable variable of a holder
    tensor (``captured``) or a static program's own variable; a scalar is read as a copy (a
    value read before its update must not follow the update)."""
    from autostatic_runtime.ops.elementwise import assign

    if captured:
        from autostatic_runtime.static.builder import capture, default_main_program

        value = capture(default_main_program(), value)
    return assign(value) if scalar else value


def traced_update(opt: Any, steps: Any, parameters: Any = None, skip: Any = None) -> list:
    """``opt.step()`` (``minimize``'s filters: ``parameters``, ``skip``) inside the training
    step ``steps`` traces: the optimizer's own update code, group by group, on the captured
    parameters and the step's symbolic gradients, with the learning rate fed at each call.
    Returns the (parameter, gradient) pairs."""
    from autostatic_runtime.errors import StaticBuildError, user_location
    from autostatic_runtime.ops.registry import autocast_suspended
    from autostatic_runtime.static.backward import op_role
    from autostatic_runtime.static.builder import capture, program_guard, static_guard

    program = steps.program
    lr = steps.learning_rate(opt)
    done = []
    with program_guard(program), static_guard(), op_role("optimize"), autocast_suspended():
        for group, pairs in steps.gradients_for(opt, parameters, skip):
            opt._apply([(StaticParam(capture(program, p), p), g) for p, g in pairs], group, lr)
            done += pairs
    if not done and any(not p.stop_gradient for p in opt._all_params()):
        name = type(opt).__name__
        raise StaticBuildError(
            f"{name}.step() in a compiled training step: none of the optimizer's "
            f"{len(opt._all_params())} parameters has a gradient (the step's backward() does "
            "not reach them and they had none before it); create the optimizer with the "
            f"parameters of the model the step trains, e.g. {name}(parameters=model.parameters())",
            user_location(),
        )
    return done


def traced_step(opt: Any, required: bool = True) -> Any:
    """The training step this thread is tracing (``static.step.StepTrace``), for an optimizer
    used inside it; None (or, when ``required``, an error) outside one."""
    from autostatic_runtime.static.step import current

    steps = current()
    if steps is None and required:
        from autostatic_runtime.errors import StaticBuildError, user_location

        raise StaticBuildError(
            f"{type(opt).__name__}.step() in static mode outside a training step compiled by "
            "to_static: there are no gradients to apply; in a static program use "
            "opt.minimize(loss), or compile the whole step (forward, loss.backward(), "
            "opt.step()) with autostatic.to_static",
            user_location(),
        )
    return steps


def static_minimize(
    opt: Any, loss: Variable, startup_program: Any, parameters: Any, no_grad_set: Any
) -> tuple[list, list]:
    """Append backward and update ops for ``loss``; returns (optimize_ops, params_grads)."""
    from autostatic_runtime.static.backward import append_backward, op_role
    from autostatic_runtime.static.builder import (
        default_startup_program,
        program_guard,
        static_guard,
    )

    program = loss.block.program
    startup = startup_program or default_startup_program()
    eager_by_var = _eager_parameters(opt, program)
    if parameters is not None:
        wanted = [p if isinstance(p, (str, Variable)) else _var_of(program, p) for p in parameters]
    elif eager_by_var:
        wanted = list(eager_by_var)
    else:
        wanted = None
    params_grads = append_backward(loss, wanted, no_grad_set)
    before = {id(op) for op in program.global_block().ops}
    with program_guard(program, startup), static_guard(), op_role("optimize"):
        lr = opt._static_lr(program, startup)
        pairs = [(StaticParam(p, eager_by_var.get(p.name)), g) for p, g in params_grads]
        for group, members in _by_group(opt, pairs):
            opt._apply(members, group, lr)
    ops = [op for op in program.global_block().ops if id(op) not in before]
    return ops, params_grads


def _by_group(opt: Any, pairs: list) -> list[tuple[dict, list]]:
    """``pairs`` split by the optimizer's parameter groups (their options apply); pairs of
    parameters in no group (a static program's own) go with the optimizer's defaults."""
    groups = opt._groups() if opt._parameter_list else []
    slot = {id(p): i for i, g in enumerate(groups) for p in g["params"]}
    split: list[list] = [[] for _ in groups]
    rest = []
    for sp, g in pairs:
        i = slot.get(id(sp.eager)) if sp.eager is not None else None
        (rest if i is None else split[i]).append((sp, g))
    found = [(group, members) for group, members in zip(groups, split) if members]
    if rest:
        found.append((dict(opt._default_dict), rest))
    return found


def _eager_parameters(opt: Any, program: Program) -> dict[str, Any]:
    """Program parameter name -> the eager Parameter the optimizer was given."""
    captured = program.__dict__.get("_captured", {})
    by_id = {id(t): var for var, t in captured.values()}
    out = {}
    if not opt._parameter_list:
        return out
    for p in opt._all_params():
        var = by_id.get(id(p))
        if var is not None:
            out[var.name] = p
        elif getattr(p, "name", None) and program.global_block().vars.get(p.name) is not None:
            out[p.name] = p
    return out


def _var_of(program: Program, p: Any) -> str:
    for var, t in program.__dict__.get("_captured", {}).values():
        if t is p:
            return var.name
    return p.name


def learning_rate_var(program: Program, startup: Program, value: float, scheduler: Any) -> Any:
    """The learning rate: a literal for a constant, a persistable variable for a scheduler
    (the Executor refreshes it from ``program.lr_scheduler`` before each run)."""
    if scheduler is None:
        return float(value)
    name = "learning_rate_0"
    block = program.global_block()
    if name not in block.vars:
        block.create_var(name, (), dtypes.get_default_dtype(), persistable=True, stop_gradient=True)
    program.lr_scheduler = scheduler
    program.lr_var_name = name
    return block.vars[name]

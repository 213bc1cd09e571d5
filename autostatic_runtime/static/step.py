"""A training step traced into one program: ``loss.backward()``, ``opt.step()``,
``opt.clear_grad()`` and ``p.grad`` inside ``to_static``.

Eagerly, a step is ``loss = f(model(x)); loss.backward(); opt.step(); opt.clear_grad()``, and
gradients, parameters and optimizer state are eager tensors that outlive it. While such a
function is traced, a ``StepTrace`` stands in for them, in the tracing thread alone
(``tensor.GRAD_OVERLAY``):

- ``loss.backward()`` appends the loss's gradient ops (``backward.backward_block``, parameters
  as leaves) and adds each trainable captured tensor's gradient to its symbolic ``.grad``;
- ``opt.step()`` appends the optimizer's update ops (``optimizer.static_update.traced_update``
  runs its own ``_apply`` on Variables, over ``gradients_for``: the parameters and its
  accumulators are captured tensors the program writes), with the learning rate a feed of
  the program (``learning_rate``: ``opt.get_lr()`` at each call);
- ``opt.clear_grad()`` and ``p.grad = ...`` change the symbolic gradients.

A gradient enters the step as None (``NONE``), as the zeros ``clear_grad()`` left (``ZERO``,
``tensor.is_zeros_grad``) or as a value, which the program then reads as a feed (``VALUE``).
The trace records the state it saw (``CLEAR`` when the step only added to it: None and zeros
then give the same result) as a guard the caller checks before each call, and the state the
step leaves is written back after the call (``finish``): a gradient the step leaves is an
output of the program; one it clears becomes None or zeros.

    y = f(x)                                  # data x, captured w
    dw = <gradient ops of y w.r.t. w>         # loss.backward()
    w = w - lr * dw                           # opt.step(): assign into the persistable w
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.creation import ones_like, zeros
from autostatic_runtime.errors import StaticBuildError, user_location
from autostatic_runtime.static.backward import backward_block, op_role
from autostatic_runtime.static.builder import capture, data, program_guard, static_guard
from autostatic_runtime.static.program import Program, Variable
from autostatic_runtime.tensor import GRAD_OVERLAY, Tensor, is_zeros_grad, zeros_grad

__all__ = ["StepTrace", "current", "grad_state", "NONE", "ZERO", "CLEAR", "VALUE"]

NONE, ZERO, CLEAR, VALUE = "None", "zeros", "None or zeros", "a tensor"


def grad_state(t: Tensor) -> str:
    """The state of an eager tensor's gradient: NONE, ZERO or VALUE."""
    g = t._grad
    if g is None:
        return NONE
    return ZERO if is_zeros_grad(g) else VALUE


def current() -> StepTrace | None:
    """The step being traced in this thread, or None."""
    return GRAD_OVERLAY.steps


class _Grad:
    """One tensor's gradient in a traced step: its state at entry, whether the step looked at
    that state before adding to it (``seen``), and its current value (NONE, ZERO or a
    Variable)."""

    __slots__ = ("tensor", "entry", "seen", "value", "fed")

    def __init__(self, tensor: Tensor, entry: str, value: Any):
        self.tensor, self.entry, self.value = tensor, entry, value
        self.seen = False
        self.fed = value if isinstance(value, Variable) else None

    def expected(self) -> str:
        """The entry state the program assumes."""
        if self.entry in (NONE, ZERO) and not self.seen:
            return CLEAR
        return self.entry


class StepTrace:
    """The gradients, learning rates and guards of one traced program (a context manager:
    ``.grad`` in this thread reads and writes its table while it is entered).

    After the trace: ``feeds`` — (data Variable, getter) the caller feeds at each call;
    ``guards`` — what the program assumes of the eager state (``check``/``describe``);
    ``grad_outputs`` — gradients the program computes for its caller to store (``finish``);
    ``stepped`` — whether it ran a backward or an optimizer step.
    """

    def __init__(self, program: Program):
        self.program = program
        self.grads: dict[int, _Grad] = {}
        self.feeds: list[tuple[Variable, Callable]] = []
        self.optimizers: dict[int, tuple[Any, Variable]] = {}  # id -> (opt, learning rate)
        self.stepped = False
        self._saved: Any = None

    def __enter__(self) -> StepTrace:
        self._saved = GRAD_OVERLAY.steps
        GRAD_OVERLAY.steps = self
        return self

    def __exit__(self, *exc: Any) -> None:
        GRAD_OVERLAY.steps = self._saved

    # -- .grad ---------------------------------------------------------------------------------
    def _entry(self, t: Tensor) -> _Grad:
        entry = self.grads.get(id(t))
        if entry is None:
            state = grad_state(t)
            value: Any = state
            if state is VALUE:
                value = self._feed(f"{t.name or 'tensor'}@GRAD", t._grad, _grad_of(t))
            entry = self.grads[id(t)] = _Grad(t, state, value)
        return entry

    def read_grad(self, t: Tensor) -> Variable | None:
        """``t.grad`` while tracing: None, or a Variable (zeros after ``clear_grad()``)."""
        entry = self._entry(t)
        value = entry.value
        if value is entry.entry:
            entry.seen = True
        if value is NONE:
            return None
        if value is ZERO:
            return self._zeros(t)
        return value

    def write_grad(self, t: Tensor, value: Any) -> None:
        """``t.grad = value`` while tracing."""
        entry = self._entry(t)
        if value is None:
            entry.value = NONE
        elif isinstance(value, Variable):
            entry.value = value
        elif isinstance(value, Tensor):
            entry.value = capture(self.program, value)
        else:
            raise StaticBuildError(
                f"the gradient of a tensor must be a tensor or None, not {type(value).__name__}",
                user_location(),
            )

    def clear_grad(self, t: Tensor, set_to_zero: bool = True) -> None:
        """``t.clear_gradient(set_to_zero)`` while tracing (a None gradient stays None)."""
        entry = self._entry(t)
        if entry.value is entry.entry:
            entry.seen = True
        if entry.value is not NONE:
            entry.value = ZERO if set_to_zero else NONE

    def _zeros(self, t: Tensor) -> Variable:

        return zeros(list(t._data.shape), dtype=t.dtype)

    def add_grad(self, t: Tensor, g: Variable) -> None:
        """What ``backward()`` does to a leaf: run its hooks, add ``g`` to its gradient."""
        for hook in t._hooks or ():
            changed = hook(g)
            if changed is not None:
                g = changed
        entry = self._entry(t)
        value = entry.value
        entry.value = g if value is NONE or value is ZERO else value + g

    # -- backward, step ---------------------------------------------------------------------
    def backward(self, loss: Variable, grad: Any = None) -> None:
        """``loss.backward(grad)``: the gradient ops of ``loss`` w.r.t. every trainable tensor
        the program captured, added to their gradients."""

        program = loss.block.program
        _check_loss(loss, grad, program, self.program)
        if grad is None:
            seed = ones_like(loss)
        elif isinstance(grad, Variable):
            seed = grad
        else:
            seed = capture(program, grad if isinstance(grad, Tensor) else Tensor(grad))
        block = program.global_block()
        for var in block.vars.values():  # inputs are data: the step computes no gradient
            if var.is_data:  # for them (nor for what only they compute from here on)
                var.stop_gradient = True
        with program_guard(program), static_guard(), op_role("backward"):
            grads = backward_block(block, {loss.name: seed}, False)
        for var, tensor in list(program.__dict__.get("_captured", {}).values()):
            if not tensor.stop_gradient and var.name in grads:
                self.add_grad(tensor, grads[var.name])
        self.stepped = True

    def learning_rate(self, opt: Any) -> Variable:
        """The learning rate of ``opt`` as a feed of the program (its ``get_lr()`` at each
        call, so a schedule stepped between calls changes the next step without a retrace)."""
        found = self.optimizers.get(id(opt))
        if found is None:
            dtype = dtypes.get_default_dtype()
            name = f"learning_rate_{len(self.optimizers)}"
            found = self.optimizers[id(opt)] = (opt, self._feed(name, None, _lr_of(opt, dtype)))
        return found[1]

    def gradients_for(self, opt: Any, parameters: Any = None, skip: Any = None) -> list:
        """What ``opt.step()`` updates, group by group: ``[(group, [(param, grad
        Variable), ...]), ...]`` for every trainable parameter (in ``parameters``, not in
        ``skip`` — ids or names — when given) whose gradient is not None."""
        chosen = None if parameters is None else {id(p) for p in parameters}
        skip = skip or set()
        found = []
        for group in opt._groups():
            pairs = []
            for p in group["params"]:
                if p.stop_gradient or (chosen is not None and id(p) not in chosen):
                    continue
                if id(p) in skip or p.name in skip:
                    continue
                g = self.read_grad(p)
                if g is not None:
                    pairs.append((p, g))
            if pairs:
                found.append((group, pairs))
        self.stepped = True
        return found

    # -- feeds, guards, results -------------------------------------------------------------
    def _feed(self, name: str, like: Any, getter: Callable) -> Variable:

        program = self.program
        base, i = name, 0
        while name in program.global_block().vars:
            i += 1
            name = f"{base}_{i}"
        if like is None:
            shape, dtype = [], dtypes.get_default_dtype()
        else:
            shape, dtype = list(like._data.shape), like.dtype
        with program_guard(program):
            var = data(name, shape, dtype)
        self.feeds.append((var, getter))
        return var

    @property
    def guards(self) -> list:
        """What the program assumes of the eager state: ``(kind, object, expected)``."""
        found: list = [
            ("grad", e.tensor, (e.expected(), e.tensor.stop_gradient)) for e in self.grads.values()
        ]
        for opt, _ in self.optimizers.values():
            found.append(("optimizer", opt, param_ids(opt)))
        return found

    @property
    def grad_outputs(self) -> list[tuple[Tensor, Variable]]:
        """Gradients the step leaves as computed values (outputs of the program)."""
        return [
            (e.tensor, e.value)
            for e in self.grads.values()
            if isinstance(e.value, Variable) and e.value is not e.fed
        ]

    @property
    def grad_finals(self) -> list[tuple[Tensor, str]]:
        """Gradients the step leaves None or zeros (where that differs from how they came)."""
        return [
            (e.tensor, e.value)
            for e in self.grads.values()
            if (e.value is NONE or e.value is ZERO) and e.value is not e.entry
        ]


def param_ids(opt: Any) -> tuple:
    """The identity of an optimizer's parameter list, group by group, with which of them
    are trainable."""
    return tuple(tuple((id(p), p.stop_gradient) for p in g["params"]) for g in opt._groups())


def check_guard(guard: tuple) -> bool:
    kind, obj, expected = guard
    if kind == "grad":
        state, frozen = expected
        if obj.stop_gradient is not frozen:
            return False
        now = grad_state(obj)
        return now == state or (state is CLEAR and now is not VALUE)
    return param_ids(obj) == expected


def describe_guard(guard: tuple) -> str:
    """Why ``guard`` no longer holds, in words."""
    kind, obj, expected = guard
    if kind == "grad":
        name = obj.name or "a tensor"
        state, frozen = expected
        if obj.stop_gradient is not frozen:
            return (
                f"{name!r} changed stop_gradient {frozen} → {obj.stop_gradient}: the step's "
                "gradients are traced for the tensors that need them"
            )
        return (
            f"the gradient of {name!r} was {state} when the step was traced and is "
            f"{grad_state(obj)} now (each state of the gradients a step starts from has its own "
            "program: a backward() outside the step, or clear_grad(set_to_zero=False), changes it)"
        )
    now = param_ids(obj)
    before, after = sum(map(len, expected)), sum(map(len, now))
    trainable = sum(not f for g in now for _, f in g)
    return (
        f"the parameter list of the optimizer {type(obj).__name__} changed ({before} → {after} "
        f"parameters, {trainable} trainable): the step's update ops are traced for the "
        "parameters it had"
    )


def finish(grad_outputs: list, values: list, grad_finals: list) -> None:
    """Store what a compiled step left in the gradients, after the call succeeded."""
    for (t, _), value in zip(grad_outputs, values):
        t._grad = Tensor._rebuild(value, None, 0)
    for t, state in grad_finals:
        if state is NONE:
            t._grad = None
        elif t._grad is None or not is_zeros_grad(t._grad):
            t._grad = zeros_grad(t._data)


def _grad_of(t: Tensor) -> Callable:
    return lambda: t._grad


def _lr_of(opt: Any, dtype: Any) -> Callable:
    """A getter of ``opt``'s learning rate as a 0-D array on its parameters' backend, the
    same array while the rate does not change."""
    from autostatic_runtime.backends import backend_of

    last: list = [None, None]
    params = opt._all_params()
    backend = backend_of(params[0]._data) if params else None

    def get() -> Any:
        lr = float(opt.get_lr())
        if lr != last[0]:
            value = np.asarray(lr, dtype=str(dtype))
            last[0], last[1] = lr, value if backend is None else backend.from_numpy(value)
        return last[1]

    return get


def _check_loss(loss: Variable, grad: Any, program: Program, traced: Program) -> None:
    where = user_location()
    if program is not traced:
        raise StaticBuildError(
            "backward() of a tensor that belongs to another program than the step being "
            "traced; compute the loss inside the function given to to_static",
            where,
        )
    if loss.block.idx != 0 or program.current_block_idx != 0:
        raise StaticBuildError(
            "loss.backward() inside a tensor-dependent if/while cannot be compiled: the "
            "gradient ops would run only on that path; compute the loss in the branch and "
            "call backward() after it",
            where,
        )
    if not loss.dtype.is_floating:
        raise StaticBuildError(
            f"backward() of a {loss.dtype} tensor: only float tensors have gradients", where
        )
    if loss.stop_gradient:
        raise StaticBuildError(
            "backward() on a tensor with stop_gradient=True: nothing it depends on needs a "
            "gradient (the model's parameters are not used, or the loss was detached)",
            where,
        )
    if grad is None and any(d != 1 for d in loss._shape):
        raise StaticBuildError(
            f"backward() of a tensor of shape {loss.shape} needs its gradient: reduce it to a "
            "scalar first (loss.mean(), loss.sum()) or pass one, loss.backward(grad) with a "
            "tensor of its shape",
            where,
        )

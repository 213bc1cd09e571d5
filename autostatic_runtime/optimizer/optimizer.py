"""The ``Optimizer`` base class (Paddle 2.x ``paddle.optimizer.Optimizer``).

The eager training step is Paddle's:

    loss.backward()      # gradients into p.grad
    opt.step()           # clip -> weight decay -> update, for every p with a gradient
    opt.clear_grad()

``minimize(loss)`` is ``step()`` over the gradients ``loss.backward()`` left, exactly as in
Paddle's dygraph mode: it does not run backward itself (calling it after ``loss.backward()``
must not double the gradients).

Updates work on backend arrays (``p._data``, ``p.grad._data``) with the backend's ``xp``
namespace, outside autograd, and rebind ``p._data`` to the new array, so every holder of
the Parameter object sees the new values. Per-parameter state ("accumulators": moments,
beta powers as 0-D arrays) lives in one tensor per parameter and accumulator, saved by
``state_dict()`` under Paddle's names (``<param name>_<accumulator>_0``); ``set_state_dict``
matches those names. A training step compiled by ``to_static`` runs the same update code on
Variables (``static_update``): its program reads and writes those tensors, so eager and
compiled steps share the optimizer's state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from autostatic_runtime import backends, dtypes
from autostatic_runtime.amp.master import load_master_state, master_state, master_weight
from autostatic_runtime.autograd import no_grad
from autostatic_runtime.backends.numpy_backend import aligned_empty
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.nn.parameter import unique_name
from autostatic_runtime.optimizer.lr import LRScheduler
from autostatic_runtime.optimizer.static_update import (
    guarded,
    is_static,
    learning_rate_var,
    new_accumulator,
    state_var,
    static_minimize,
    traced_step,
    traced_update,
    xp_of,
)
from autostatic_runtime.regularizer import L2Decay, WeightDecayRegularizer
from autostatic_runtime.static.program import Variable
from autostatic_runtime.tensor import Tensor

__all__ = ["Optimizer"]


class Optimizer:
    """Base class of optimizers; subclasses implement ``_update(p, g, lr, group)``.

    Args:
        learning_rate: a float or an ``rt.optimizer.lr.LRScheduler``.
        parameters: the Tensors to optimize, or a list of dicts (parameter groups) with
            ``'params'`` and optional ``'learning_rate'`` (a multiplier of the base rate),
            ``'weight_decay'``, ``'grad_clip'`` and optimizer-specific options.
        weight_decay: a float (L2 decay coefficient) or an ``rt.regularizer`` object; a
            parameter's own ``regularizer`` takes precedence.
        grad_clip: ``rt.nn.ClipGradByGlobalNorm``/``ClipGradByNorm``/``ClipGradByValue``.
        name: prefix of the accumulator names.
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        parameters: Iterable | None = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ):
        self._parameter_list = _check_parameters(parameters, type(self).__name__)
        self._learning_rate = _check_lr(learning_rate)
        self.regularization = _regularizer(weight_decay)
        if grad_clip is not None and not hasattr(grad_clip, "_clip"):
            raise TypeError(
                f"grad_clip must be a ClipGradByGlobalNorm, ClipGradByNorm or "
                f"ClipGradByValue, not {type(grad_clip).__name__}"
            )
        self._grad_clip = grad_clip
        self._name = name
        # accumulator name -> id(param) -> the Tensor holding its value
        self._accumulators: defaultdict[str, dict[int, Tensor]] = defaultdict(dict)
        self._static_accumulators: defaultdict[str, dict[int, Any]] = defaultdict(dict)
        self._accumulators_holder: dict[str, Any] = {}  # loaded, for accumulators not made yet
        self._acc_params: dict[int, Tensor] = {}
        self._default_dict = {"weight_decay": self.regularization, "grad_clip": grad_clip}
        self._param_groups: list = []
        if self._parameter_list and isinstance(self._parameter_list[0], dict):
            for group in self._parameter_list:
                self._add_param_group(dict(group))
        else:
            self._param_groups = self._parameter_list
        self.clear_gradients = self.clear_grad
        if "_multi_precision" not in self.__dict__:  # float32 master weights (amp.decorate)
            self._multi_precision = False

    # -- parameters and groups --------------------------------------------------------------
    def _add_param_group(self, group: dict) -> None:
        """Register a parameter group; its options override the optimizer's defaults.

        As in Paddle, a group's ``'weight_decay'`` overrides the parameters' own regularizers
        and its ``'learning_rate'`` replaces their ``ParamAttr`` learning-rate multiplier.
        """
        if "params" not in group:
            raise ValueError("each parameter group needs a 'params' entry")
        params = group["params"]
        if isinstance(params, set):
            raise TypeError("parameters must be an ordered collection (list), not a set")
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        group["_explicit_decay"] = "weight_decay" in group
        for key, value in self._default_dict.items():
            group.setdefault(key, value)
        seen = {id(p) for g in self._param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        for p in group["params"]:
            _ensure_param_attrs(p)
        self._param_groups.append(group)

    def _groups(self) -> list[dict]:
        if self._param_groups and isinstance(self._param_groups[0], dict):
            return self._param_groups
        return [dict(self._default_dict, params=self._param_groups)]

    def _all_params(self) -> list[Tensor]:
        return [p for g in self._groups() for p in g["params"]]

    # -- learning rate ------------------------------------------------------------------------
    def get_lr(self) -> float:
        """The current learning rate (the scheduler's value when one is used)."""
        lr = self._learning_rate
        return lr() if isinstance(lr, LRScheduler) else lr

    def _global_learning_rate(self) -> Tensor:
        """The current learning rate as a float32 tensor of shape [1] (Paddle's)."""
        from autostatic_runtime.creation import to_tensor

        return to_tensor([float(self.get_lr())], dtype="float32")

    def set_lr(self, value: float) -> None:
        """Set a float learning rate (not allowed when an LRScheduler drives it)."""
        if not isinstance(value, (int, float)):
            raise TypeError(f"set_lr: value must be a float, not {type(value).__name__}")
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError(
                "set_lr: this optimizer's learning rate is an LRScheduler; "
                "step the scheduler instead, or use set_lr_scheduler"
            )
        self._learning_rate = float(value)

    def set_lr_scheduler(self, scheduler: LRScheduler) -> None:
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(
                f"set_lr_scheduler: expected an LRScheduler, got {type(scheduler).__name__}"
            )
        self._learning_rate = scheduler

    # -- the step --------------------------------------------------------------------------
    @no_grad()
    def step(self) -> None:
        """Update every trainable parameter that has a gradient, once. Inside a training step
        compiled by ``to_static``, appends the update ops instead."""
        if not in_dynamic_mode():
            traced_update(self, traced_step(self))
            return
        lr = float(self.get_lr())
        for group in self._groups():
            pairs = [
                (p, p.grad._data)
                for p in group["params"]
                if not p.stop_gradient and p.grad is not None
            ]
            self._apply(pairs, group, lr)

    def _apply(self, pairs: list, group: dict, lr: float) -> None:
        clip = group.get("grad_clip")
        if clip is not None:
            pairs = clip._clip(pairs)
        group_lr = group.get("learning_rate")
        for p, g in pairs:
            if g is None:
                continue
            master = master_weight(self, p) if self._multi_precision else None
            target = p if master is None else master  # float16 p: its float32 master weight
            if master is not None:
                g = xp_of(g).astype(g, "float32")
            reg = self._regularizer_for(p, group)
            if reg is not None:
                g = g + reg._term(xp_of(target._data), target._data)
            if group_lr is not None:
                p_lr = lr * float(group_lr)
            else:
                attr = getattr(p, "optimize_attr", None)
                p_lr = lr * attr["learning_rate"] if attr else lr
            self._update(target, g, p_lr, group)
            if master is not None:
                p._data = xp_of(master._data).astype(master._data, p.dtype)

    def _regularizer_for(self, param: Tensor, group: dict) -> Any:
        """The regularizer added to ``param``'s gradient (None for none)."""
        group_reg = _regularizer(group.get("weight_decay", self.regularization))
        if group.get("_explicit_decay"):
            return group_reg
        return getattr(param, "regularizer", None) or group_reg

    def _update(self, param: Tensor, grad: Any, lr: float, group: dict) -> None:
        """Write the new value of ``param`` (backend arrays in, ``param._data`` rebound)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _update")

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Reset the gradients of the optimized parameters (to zeros, or to None)."""
        for p in self._all_params():
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    def backward(
        self,
        loss: Tensor,
        startup_program: Any = None,
        parameters: Any = None,
        no_grad_set: Any = None,
        callbacks: Any = None,
    ) -> list[tuple[Tensor, Tensor]]:
        """The (param, grad) pairs ``loss.backward()`` produced (eager: no autodiff runs here)."""
        params = list(parameters) if parameters else self._all_params()
        skip = {v if isinstance(v, str) else id(v) for v in no_grad_set or ()}
        return [
            (p, p.grad)
            for p in params
            if not p.stop_gradient
            and p.grad is not None
            and id(p) not in skip
            and p.name not in skip
        ]

    @no_grad()
    def apply_gradients(self, params_grads: list[tuple[Tensor, Tensor]]) -> list:
        """Update parameters from explicit (param, grad) pairs, group by group."""
        given = {id(p): (p, None if g is None else g._data) for p, g in params_grads}
        lr = float(self.get_lr())
        for group in self._groups():
            pairs = [given.pop(id(p)) for p in group["params"] if id(p) in given]
            if pairs:
                self._apply(pairs, group, lr)
        if given:
            self._apply(list(given.values()), dict(self._default_dict), lr)
        return []

    def minimize(
        self,
        loss: Tensor,
        startup_program: Any = None,
        parameters: Any = None,
        no_grad_set: Any = None,
    ) -> tuple[list, list]:
        """Update from the gradients of ``loss`` already computed by ``loss.backward()``.

        In static mode (``loss`` is a Variable) this appends the backward and update ops to
        the loss's program instead; run it with an Executor.

        Returns:
            (optimize_ops, params_grads); optimize_ops is empty in eager mode.
        """
        if isinstance(loss, Variable):
            steps = traced_step(self, required=False)
            if steps is not None:  # in a traced eager step: step() over what backward() left
                skip = {v if isinstance(v, str) else id(v) for v in no_grad_set or ()}
                return [], traced_update(self, steps, parameters, skip)
            return static_minimize(self, loss, startup_program, parameters, no_grad_set)
        params_grads = self.backward(loss, startup_program, parameters, no_grad_set)
        return self.apply_gradients(params_grads), params_grads

    def _static_lr(self, program: Any, startup: Any) -> Any:
        """The learning rate inside a static program (see ``static_update``)."""
        scheduler = self._learning_rate if isinstance(self._learning_rate, LRScheduler) else None
        return learning_rate_var(program, startup, self.get_lr(), scheduler)

    # -- accumulators --------------------------------------------------------------------------
    def _acc_key(self, name: str, param: Tensor) -> str:
        return f"{param.name}_{self._name + '_' if self._name else ''}{name}_0"

    def _get_acc(self, name: str, param: Tensor, fill: float = 0.0, scalar: bool = False):
        """The accumulator ``name`` of ``param`` (created filled with ``fill``): its backend
        array (0-D for a ``scalar``), or its Variable while update ops are appended."""
        if is_static(param) and param.eager is None:  # a static program's own parameter
            store = self._static_accumulators[name]
            value = store.get(id(param))
            if value is None:
                value = store[id(param)] = new_accumulator(
                    self._acc_key(name, param), param, fill, scalar
                )
            return state_var(value, scalar, captured=False)
        owner = param.eager if is_static(param) else param
        holder = self._accumulators[name].get(id(owner))
        if holder is None:
            holder = self._new_acc(name, owner, fill, scalar)
            self._accumulators[name][id(owner)] = holder
            self._acc_params[id(owner)] = owner
        if is_static(param):
            return state_var(holder, scalar)
        return holder._data

    def _new_acc(self, name: str, param: Tensor, fill: float, scalar: bool) -> Tensor:
        """The tensor holding a new accumulator (a value loaded by ``set_state_dict`` if any)."""
        key = self._acc_key(name, param)
        data = param._data
        backend = backends.backend_of(data)
        shape = () if scalar else tuple(data.shape)
        loaded = self._accumulators_holder.pop(key, None)
        if loaded is None:
            value = backend.ns.full(shape, fill, dtype=data.dtype)
        else:
            value = _load_array(key, loaded, shape, data.dtype, backend)
        holder = Tensor._rebuild(value, None, 0)
        holder.name = key
        holder.persistable = True
        return holder

    def _set_acc(self, name: str, param: Tensor, value: Any) -> None:
        if is_static(param) and param.eager is None:
            var = self._static_accumulators[name][id(param)]
            var.set_value(guarded(var, value))
            return
        owner = param.eager if is_static(param) else param
        holder = self._accumulators[name][id(owner)]
        if is_static(param):
            var = state_var(holder, False)
            var.set_value(guarded(var, value))
            return
        old = holder._data
        if type(value) is not type(old) or value.dtype != old.dtype or value.shape != old.shape:
            xp = xp_of(old)  # a NumPy scalar from 0-D math, another dtype: the holder's kind
            value = xp.reshape(xp.astype(xp.asarray(value), old.dtype), old.shape)
        holder._data = value

    # -- state -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Accumulators by name (Tensors of their current values; beta powers of shape [1])
        and, with a scheduler, ``'LR_Scheduler'``."""
        params = self._acc_params
        out: dict[str, Any] = {}
        for acc, per_param in self._accumulators.items():
            for pid, holder in per_param.items():
                data = holder._data
                if data.ndim == 0:
                    data = data.reshape((1,))
                out[self._acc_key(acc, params[pid])] = Tensor._rebuild(data, None, 0)
        if isinstance(self._learning_rate, LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        masters = master_state(self)
        if masters:
            out["master_weights"] = masters
        return out

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()``; accumulators not created yet are loaded when first used."""
        state = dict(state_dict)
        lr_state = state.pop("LR_Scheduler", None)
        if isinstance(self._learning_rate, LRScheduler) and lr_state is not None:
            self._learning_rate.set_state_dict(lr_state)
        load_master_state(self, state.pop("master_weights", None))
        params = self._acc_params
        for acc, per_param in self._accumulators.items():
            for pid, holder in per_param.items():
                key = self._acc_key(acc, params[pid])
                if key not in state:
                    raise KeyError(
                        f"set_state_dict: optimizer state '{key}' is missing from the state dict"
                    )
                old = holder._data
                holder._data = _load_array(
                    key, state.pop(key), old.shape, old.dtype, backends.backend_of(old)
                )
        self._accumulators_holder = state

    set_dict = set_state_dict


# ---- helpers -----------------------------------------------------------------------------------


def _check_parameters(parameters: Any, owner: str) -> list:
    if parameters is None:
        if not in_dynamic_mode():
            return []  # static mode: minimize() optimizes every trainable program parameter
        raise AttributeError(
            f"{owner}: parameters must be given in eager mode, e.g. "
            f"{owner}(parameters=model.parameters())"
        )
    if isinstance(parameters, Tensor):
        raise TypeError(f"{owner}: parameters must be an iterable of Tensors, not one Tensor")
    if isinstance(parameters, dict):
        raise TypeError(
            f"{owner}: parameters must be a list; for parameter groups pass a list of dicts"
        )
    params = list(parameters)
    for p in params:
        if isinstance(p, Tensor):
            _ensure_param_attrs(p)
    return params


def _ensure_param_attrs(p: Tensor) -> None:
    """Give a plain Tensor passed as a parameter the attributes optimizers read."""
    if p.name is None:
        p.name = unique_name("generated_tensor")
    if not hasattr(p, "optimize_attr"):
        try:
            p.optimize_attr = {"learning_rate": 1.0}
            p.regularizer = None
        except AttributeError:  # a plain Tensor has __slots__: the defaults apply
            pass


def _check_lr(lr: Any) -> Any:
    if isinstance(lr, LRScheduler):
        return lr
    if isinstance(lr, (int, float)) and not isinstance(lr, bool):
        return float(lr)
    raise TypeError(f"learning_rate must be a float or an LRScheduler, not {type(lr).__name__}")


def _regularizer(weight_decay: Any) -> Any:
    if weight_decay is None or isinstance(weight_decay, WeightDecayRegularizer):
        return weight_decay
    if isinstance(weight_decay, (int, float)):
        return L2Decay(float(weight_decay)) if weight_decay else None
    if isinstance(weight_decay, Tensor):
        return L2Decay(float(weight_decay))
    raise TypeError(
        f"weight_decay must be a float or a regularizer (rt.regularizer.L2Decay), "
        f"not {type(weight_decay).__name__}"
    )


# bytes from which an update's result is worth aligning: below, the aligned buffer costs more
# (~5 µs) than XLA's copy of an unaligned array
ALIGN_FROM = 1 << 16


def descend(value: Any, step: Any, scale: Any = None) -> Any:
    """``value - step * scale`` (``value - step`` without a scale): a parameter's new value,
    a new array. NumPy arrays of one shape and dtype, of ``ALIGN_FROM`` bytes or more, are
    computed into a 64-byte aligned buffer (``numpy_backend.aligned_empty``), in two passes
    without a temporary: a ``to_static(backend="xla")`` training step then passes the
    parameters an eager update just wrote to XLA without copying them. Same values as the
    expression."""
    if (
        type(value) is np.ndarray
        and type(step) is np.ndarray
        and value.nbytes >= ALIGN_FROM
        and value.dtype == step.dtype
        and value.shape == step.shape
        and (scale is None or type(scale) is float or type(scale) is int)  # weak: keeps dtype
    ):
        out = aligned_empty(value.shape, value.dtype)
        if scale is None:
            return np.subtract(value, step, out=out)
        np.multiply(step, scale, out=out)
        return np.subtract(value, out, out=out)
    return value - step if scale is None else value - step * scale


def _host(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, (int, float)):
        return np.asarray(value)
    return backends.backend_of(value).to_numpy(value)


def _load_array(key: str, value: Any, shape: tuple, dtype: Any, backend: Any):
    """A loaded accumulator as a new array of ``backend`` with ``shape`` and ``dtype`` (a
    scalar accumulator takes any one-element value)."""
    host = _host(value)
    if shape == () and host.size == 1:
        host = host.reshape(())
    if tuple(host.shape) != tuple(shape):
        raise ValueError(
            f"set_state_dict: optimizer state '{key}' has shape {list(host.shape)} "
            f"but its parameter has shape {list(shape)}"
        )
    return backend.from_numpy(np.array(host, dtype=np.dtype(str(dtypes.convert_dtype(dtype)))))

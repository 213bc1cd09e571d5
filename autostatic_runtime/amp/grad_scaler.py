"""``rt.amp.GradScaler``: dynamic loss scaling, eagerly and in a compiled training step.

    scaled = scaler.scale(loss)     # loss * scale
    scaled.backward()               # gradients scaled by the same factor
    scaler.minimize(opt, scaled)    # unscale, step unless a gradient is inf/nan, update scale
    # or: scaler.step(opt); scaler.update()

Paddle's rules: ``unscale_`` multiplies every gradient of the optimizer's parameters by
1/scale and records whether one of them holds an inf or a nan; ``step`` then updates the
parameters only if none does; ``update`` halves the scale (``decr_ratio``) after
``decr_every_n_nan_or_inf`` such steps and doubles it (``incr_ratio``) after
``incr_every_n_steps`` finite ones in a row.

The scale, the two counts and the found-inf flag are tensors (float32/int32/bool of shape
[1]), and the scaling rules are ops on them: eagerly they run now; in a training step that
``autostatic.to_static`` compiles they are the program's persistable state, like optimizer
state, and the skipped step is a ``where`` on every update (no Python branch on a tensor).
The ratios and step counts are tensors too, so ``set_incr_ratio`` & co. reach a compiled step.

Unlike Paddle's, which turns itself off on the CPU, the scaler works on every device: power-
of-two scaling is exact in float32, so it changes no result there.
"""

from __future__ import annotations

import numbers
import warnings
from enum import Enum
from typing import Any

import numpy as np

from autostatic_runtime.amp.autocast import LAST, AmpWarning
from autostatic_runtime.autograd import no_grad
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.ops.registry import autocast_suspended
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = ["AmpScaler", "GradScaler", "OptimizerState"]


class OptimizerState(Enum):
    INIT = 0
    UNSCALED = 1
    STEPPED = 2


def _state(value: Any, dtype: str, name: str) -> Tensor:
    from autostatic_runtime.nn.parameter import unique_name

    t = Tensor(np.array([value], dtype=dtype))
    t.name = unique_name(name)
    t.persistable = True
    return t


def _number(value: Any, argument: str, owner: str, integer: bool = False) -> Any:
    """``value`` as a Python int (``integer``) or float, or an error naming ``argument``."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an int" if integer else "a number"
        raise TypeError(f"{owner}: {argument} must be {what}, not {value!r}")
    if not np.isfinite(value):
        raise ValueError(f"{owner}: {argument} must be finite, not {value!r}")
    return int(value) if integer else float(value)


def _in_step() -> bool:
    """Whether a training step is being traced (False eagerly); a static program of its own
    cannot scale gradients it has not computed yet."""
    if in_dynamic_mode():
        return False
    from autostatic_runtime.static.step import current

    if current() is None:
        from autostatic_runtime.errors import StaticBuildError, user_location

        raise StaticBuildError(
            "GradScaler in a static program: its gradients do not exist before minimize(); "
            "compile the whole training step (forward, scaler.scale(loss).backward(), "
            "scaler.minimize(opt, scaled)) with autostatic.to_static",
            user_location(),
        )
    return True


class AmpScaler:
    """Loss scaling for mixed-precision training (Paddle's ``paddle.amp.AmpScaler``).

    Args:
        enable: False makes every method a pass-through (``scale`` returns the loss).
        init_loss_scaling: the initial scale (> 0).
        incr_ratio: the factor (> 1) that raises the scale.
        decr_ratio: the factor (in (0, 1)) that lowers the scale.
        incr_every_n_steps: raise the scale after this many finite steps in a row.
        decr_every_n_nan_or_inf: lower it after this many steps with inf/nan gradients.
        use_dynamic_loss_scaling: False keeps the scale fixed (steps with inf/nan gradients
            are still skipped).
    """

    _owner = "AmpScaler"

    def __init__(
        self,
        enable: bool = True,
        init_loss_scaling: float = 2.0**15,
        incr_ratio: float = 2.0,
        decr_ratio: float = 0.5,
        incr_every_n_steps: int = 1000,
        decr_every_n_nan_or_inf: int = 1,
        use_dynamic_loss_scaling: bool = True,
    ):
        owner = self._owner
        for argument, value in (
            ("enable", enable),
            ("use_dynamic_loss_scaling", use_dynamic_loss_scaling),
        ):
            if not isinstance(value, bool):
                raise TypeError(f"{owner}: {argument} must be True or False, not {value!r}")
        self._enable = enable
        self._use_dynamic_loss_scaling = False
        self._init_loss_scaling = 1.0
        self._optimizer_states: dict[int, OptimizerState] = {}
        if not enable:
            return
        if _number(init_loss_scaling, "init_loss_scaling", owner) <= 0:
            raise ValueError(f"{owner}: init_loss_scaling must be > 0, not {init_loss_scaling}")
        self._check_ratios(incr_ratio, decr_ratio)
        for argument, value in (
            ("incr_every_n_steps", incr_every_n_steps),
            ("decr_every_n_nan_or_inf", decr_every_n_nan_or_inf),
        ):
            if _number(value, argument, owner, integer=True) < 1:
                raise ValueError(f"{owner}: {argument} must be >= 1, not {value}")
        self._use_dynamic_loss_scaling = use_dynamic_loss_scaling
        self._init_loss_scaling = init_loss_scaling
        self._scale = _state(init_loss_scaling, "float32", "loss_scaling")
        self._incr_count = _state(0, "int32", "num_good_steps")
        self._decr_count = _state(0, "int32", "num_bad_steps")
        self._found_inf = _state(False, "bool", "found_infinite")
        self._incr_ratio = self._decr_ratio = None
        self._incr_every_n_steps = self._decr_every_n_nan_or_inf = None
        self._settings: dict[str, Tensor] = {}
        self.set_incr_ratio(incr_ratio)
        self.set_decr_ratio(decr_ratio)
        self.set_incr_every_n_steps(incr_every_n_steps)
        self.set_decr_every_n_nan_or_inf(decr_every_n_nan_or_inf)

    def _check_ratios(self, incr_ratio: Any = 2.0, decr_ratio: Any = 0.5) -> None:
        owner = self._owner
        if _number(incr_ratio, "incr_ratio", owner) <= 1.0:
            raise ValueError(f"{owner}: incr_ratio must be > 1.0, not {incr_ratio}")
        if not 0.0 < _number(decr_ratio, "decr_ratio", owner) < 1.0:
            raise ValueError(f"{owner}: decr_ratio must be in (0, 1), not {decr_ratio}")

    def _setting(self, name: str, value: Any, dtype: str) -> None:
        """Keep a setting as a Python value and as a tensor a compiled step reads."""
        setattr(self, name, value)
        held = self._settings.get(name)
        if held is None:
            self._settings[name] = _state(value, dtype, name.strip("_"))
        else:
            held.set_value(np.array([value], dtype=dtype))

    # -- scaling --------------------------------------------------------------------------
    def scale(self, var: Any) -> Any:
        """``var * scale`` (``var`` itself when the scaler is off)."""
        if not isinstance(var, TensorLike):
            raise TypeError(
                f"{self._owner}.scale: var must be a Tensor (the loss), not {type(var).__name__}"
            )
        if self._enable and LAST.dtype == "bfloat16" and self._use_dynamic_loss_scaling:
            self._enable = False
            self._use_dynamic_loss_scaling = False
            self._init_loss_scaling = 1.0
            warnings.warn(
                "GradScaler: dynamic loss scaling is not used with bfloat16 (its range is "
                "float32's), so this scaler is now disabled",
                AmpWarning,
                stacklevel=2,
            )
        if not self._enable:
            return var
        with autocast_suspended():
            return var * self._scale

    def _unscale(self, optimizer: Any) -> None:
        if not self._enable:
            return
        state = self._optimizer_states.get(id(optimizer), OptimizerState.INIT)
        if state is OptimizerState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state is OptimizerState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        traced = _in_step()
        with no_grad(), autocast_suspended():
            inverse = (1.0 / self._scale).reshape([])
            found = None
            for p in optimizer._all_params():
                g = p.grad
                if g is None:
                    continue
                if g.dtype == "float32":
                    unscaled = g * inverse
                else:  # float16 gradients are unscaled in float32, as Paddle's kernel does
                    unscaled = (g.astype("float32") * inverse).astype(g.dtype)
                bad = unscaled.isfinite().logical_not().any()
                found = bad if found is None else found.logical_or(bad)
                if traced:
                    p.grad = unscaled
                else:
                    g.set_value(unscaled)
            if found is None:
                from autostatic_runtime.creation import full

                found = full([], False, "bool")
            self._found_inf.set_value(found.reshape([1]))
        self._optimizer_states[id(optimizer)] = OptimizerState.UNSCALED

    def _skipped_update(self, update: Any) -> Any:
        """Run ``update()`` (the optimizer's step) unless a gradient held an inf or nan."""
        if _in_step():
            from autostatic_runtime.optimizer.static_update import updates_skipped_when

            with autocast_suspended():
                flag = self._found_inf.reshape([])
            with updates_skipped_when(flag):
                return update()
        if bool(self._found_inf):
            return None
        return update()

    def minimize(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.minimize(*args, **kwargs)`` on unscaled gradients, skipped when one of
        them is inf/nan; then ``update()``. Returns what ``optimizer.minimize`` returns, or
        (None, None) for a skipped step."""
        if not self._enable:
            return optimizer.minimize(*args, **kwargs)
        if self._optimizer_states.get(id(optimizer), OptimizerState.INIT) is OptimizerState.INIT:
            self._unscale(optimizer)
        found = self._skipped_update(lambda: optimizer.minimize(*args, **kwargs))
        if self._use_dynamic_loss_scaling:
            self._update()
        self._optimizer_states = {}
        return (None, None) if found is None else found

    def _update(self) -> None:
        """Paddle's loss-scaling rule, in ops (the same ops eagerly and in a compiled step)."""
        if not self._enable:
            return
        from autostatic_runtime.ops.elementwise import where

        s = self._settings
        with no_grad(), autocast_suspended():
            found = self._found_inf
            bad = where(found, self._decr_count + 1, self._decr_count * 0)
            good = where(found, self._incr_count * 0, self._incr_count + 1)
            lower = found.logical_and(bad == s["_decr_every_n_nan_or_inf"])
            raise_ = found.logical_not().logical_and(good == s["_incr_every_n_steps"])
            scale = self._scale
            scale = where(
                lower,
                scale * s["_decr_ratio"],
                where(raise_, scale * s["_incr_ratio"], scale),
            )
            self._scale.set_value(scale)
            self._decr_count.set_value(where(lower, bad * 0, bad))
            self._incr_count.set_value(where(raise_, good * 0, good))

    # -- settings ---------------------------------------------------------------------------
    def is_enable(self) -> bool:
        """Whether loss scaling is on."""
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        """Whether the scale changes with the gradients (False: fixed)."""
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        """The initial scale (what ``set_init_loss_scaling`` or a loaded state set last)."""
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling: float) -> None:
        """Set the initial scale, and the current scale to it."""
        if _number(new_init_loss_scaling, "new_init_loss_scaling", self._owner) <= 0:
            raise ValueError(
                f"{self._owner}: new_init_loss_scaling must be > 0, not {new_init_loss_scaling}"
            )
        self._init_loss_scaling = new_init_loss_scaling
        if self._enable:
            self._scale.set_value(np.array([new_init_loss_scaling], dtype="float32"))

    def get_incr_ratio(self) -> float:
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio: float) -> None:
        self._check_ratios(incr_ratio=new_incr_ratio)
        self._setting("_incr_ratio", float(new_incr_ratio), "float32")

    def get_decr_ratio(self) -> float:
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio: float) -> None:
        self._check_ratios(decr_ratio=new_decr_ratio)
        self._setting("_decr_ratio", float(new_decr_ratio), "float32")

    def get_incr_every_n_steps(self) -> int:
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps: int) -> None:
        value = _number(new_incr_every_n_steps, "incr_every_n_steps", self._owner, True)
        if value < 1:
            raise ValueError(f"{self._owner}: incr_every_n_steps must be >= 1")
        self._setting("_incr_every_n_steps", value, "int32")

    def get_decr_every_n_nan_or_inf(self) -> int:
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf: int) -> None:
        value = _number(new_decr_every_n_nan_or_inf, "decr_every_n_nan_or_inf", self._owner, True)
        if value < 1:
            raise ValueError(f"{self._owner}: decr_every_n_nan_or_inf must be >= 1")
        self._setting("_decr_every_n_nan_or_inf", value, "int32")

    # -- state ------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The scaler's state (Paddle's keys; empty when the scaler is off)."""
        if not self._enable:
            return {}
        return {
            "scale": self._scale.numpy(),
            "incr_ratio": self._incr_ratio,
            "decr_ratio": self._decr_ratio,
            "incr_every_n_steps": self._incr_every_n_steps,
            "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
            "incr_count": int(self._incr_count.numpy()[0]),
            "decr_count": int(self._decr_count.numpy()[0]),
            "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (nothing happens when the scaler is off)."""
        if not self._enable:
            return
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"{self._owner}.load_state_dict: state_dict must be a dict, "
                f"not {type(state_dict).__name__}"
            )
        if len(state_dict) == 0:
            raise RuntimeError(
                "The input state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        missing = [k for k in _STATE_KEYS if k not in state_dict]
        if missing:
            raise KeyError(f"{self._owner}.load_state_dict: the state dict lacks {missing}")
        scale = float(np.asarray(state_dict["scale"]).reshape(-1)[0])
        self._init_loss_scaling = scale
        self._scale.set_value(np.array([scale], dtype="float32"))
        self.set_incr_ratio(state_dict["incr_ratio"])
        self.set_decr_ratio(state_dict["decr_ratio"])
        self.set_incr_every_n_steps(state_dict["incr_every_n_steps"])
        self.set_decr_every_n_nan_or_inf(state_dict["decr_every_n_nan_or_inf"])
        self._incr_count.set_value(np.array([state_dict["incr_count"]], dtype="int32"))
        self._decr_count.set_value(np.array([state_dict["decr_count"]], dtype="int32"))
        self._use_dynamic_loss_scaling = bool(state_dict["use_dynamic_loss_scaling"])


_STATE_KEYS = (
    "scale",
    "incr_ratio",
    "decr_ratio",
    "incr_every_n_steps",
    "decr_every_n_nan_or_inf",
    "incr_count",
    "decr_count",
    "use_dynamic_loss_scaling",
)


class GradScaler(AmpScaler):
    """Paddle's ``paddle.amp.GradScaler``: dynamic loss scaling with ``step`` and ``update``.

    ``AmpScaler`` with ``step``/``update``/``unscale_`` and Paddle 3's defaults (scale
    2**16, raised after 2000 finite steps in a row, lowered after each step with inf/nan
    gradients)."""

    _owner = "GradScaler"

    def __init__(
        self,
        enable: bool = True,
        init_loss_scaling: float = 2.0**16,
        incr_ratio: float = 2.0,
        decr_ratio: float = 0.5,
        incr_every_n_steps: int = 2000,
        decr_every_n_nan_or_inf: int = 1,
        use_dynamic_loss_scaling: bool = True,
    ):
        super().__init__(
            enable,
            init_loss_scaling,
            incr_ratio,
            decr_ratio,
            incr_every_n_steps,
            decr_every_n_nan_or_inf,
            use_dynamic_loss_scaling,
        )

    def step(self, optimizer: Any) -> None:
        """``optimizer.step()`` on unscaled gradients, skipped when one of them is inf/nan."""
        if not self._enable:
            return optimizer.step()
        state = self._optimizer_states.get(id(optimizer), OptimizerState.INIT)
        if state is OptimizerState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state is OptimizerState.INIT:
            self._unscale(optimizer)
        self._skipped_update(optimizer.step)
        self._optimizer_states[id(optimizer)] = OptimizerState.STEPPED
        if not self._use_dynamic_loss_scaling:
            self._optimizer_states = {}

    def update(self) -> None:
        """Adjust the scale after ``step`` (with dynamic loss scaling)."""
        if not self._enable:
            return
        if self._use_dynamic_loss_scaling:
            self._update()
            self._optimizer_states = {}

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale now (to clip them
        before ``step``, for example); once per step."""
        return self._unscale(optimizer)

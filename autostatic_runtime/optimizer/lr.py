"""Learning-rate schedules (Paddle 2.x ``paddle.optimizer.lr``).

A scheduler is passed as an optimizer's ``learning_rate``; call ``scheduler.step()`` after
``opt.step()`` (per batch or per epoch). ``scheduler()`` / ``last_lr`` is the current rate,
``last_epoch`` the number of ``step()`` calls (0 right after construction).

    sched = rt.optimizer.lr.CosineAnnealingDecay(learning_rate=0.1, T_max=100)
    opt = rt.optimizer.Momentum(learning_rate=sched, parameters=model.parameters())
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "LRScheduler", "NoamDecay", "PiecewiseDecay", "NaturalExpDecay", "InverseTimeDecay",
    "PolynomialDecay", "LinearWarmup", "ExponentialDecay", "MultiStepDecay", "StepDecay",
    "LambdaDecay", "ReduceOnPlateau", "CosineAnnealingDecay", "MultiplicativeDecay", "LinearLR",
    "OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts",
]  # fmt: skip


class LRScheduler:
    """Base class: subclasses implement ``get_lr()`` from ``base_lr`` and ``last_epoch``.

    Args:
        learning_rate: the initial rate (``base_lr``).
        last_epoch: the epoch to resume from (-1 starts fresh).
        verbose: print the rate at every step.
    """

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose: bool = False):
        if not isinstance(learning_rate, (int, float)) or isinstance(learning_rate, bool):
            raise TypeError(f"learning_rate must be a float, not {type(learning_rate).__name__}")
        if learning_rate < 0:
            raise ValueError(f"invalid learning rate: {learning_rate}")
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self.step()

    def __call__(self) -> float:
        """The current learning rate."""
        return self.last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``) and recompute the rate."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed() if closed else self.get_lr()
        if self.verbose:
            print(
                f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                f"{self.last_lr}."
            )

    def get_lr(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def state_keys(self) -> None:
        """Set ``self.keys``, the attributes ``state_dict`` saves."""
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict[str, Any]:
        self.state_keys()
        return {k: _plain(self.__dict__[k]) for k in self.keys if k in self.__dict__}

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.state_keys()
        for key in self.keys:
            if key not in state_dict:
                raise RuntimeError(
                    f"{type(self).__name__}.set_state_dict: '{key}' is missing from the state dict"
                )
            self.__dict__[key] = state_dict[key]
        if len(state_dict) > len(self.keys):
            warnings.warn(
                f"{type(self).__name__}.set_state_dict: unused entries "
                f"{sorted(set(state_dict) - set(self.keys))}",
                stacklevel=2,
            )

    set_dict = set_state_dict

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, last_lr={self.last_lr})"


def _plain(value: Any) -> Any:
    return float(value) if hasattr(value, "numpy") else value


class NoamDecay(LRScheduler):
    """``lr * d_model**-0.5 * min(epoch**-0.5, epoch * warmup_steps**-1.5)`` (Transformer)."""

    def __init__(
        self,
        d_model: float,
        warmup_steps: int,
        learning_rate: float = 1.0,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if d_model <= 0:
            raise ValueError("NoamDecay: d_model must be greater than 0")
        self.d_model, self.warmup_steps = d_model, warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        a = 1.0 if self.last_epoch == 0 else self.last_epoch**-0.5
        b = self.warmup_steps**-1.5 * self.last_epoch
        return self.base_lr * self.d_model**-0.5 * min(a, b)


class PiecewiseDecay(LRScheduler):
    """``values[i]`` while ``epoch < boundaries[i]``, then ``values[-1]``."""

    def __init__(
        self,
        boundaries: Sequence[int],
        values: Sequence[float],
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                f"PiecewiseDecay: needs len(values) == len(boundaries) + 1, got "
                f"{len(values)} values and {len(boundaries)} boundaries"
            )
        self.boundaries, self.values = list(boundaries), list(values)
        super().__init__(last_epoch=last_epoch, verbose=verbose)

    def get_lr(self) -> float:
        for bound, value in zip(self.boundaries, self.values[:-1], strict=True):
            if self.last_epoch < bound:
                return value
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """``lr * exp(-gamma * epoch)``."""

    def __init__(
        self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False
    ):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * math.exp(-self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """``lr / (1 + gamma * epoch)``."""

    def __init__(
        self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False
    ):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """``(lr - end_lr) * (1 - epoch / decay_steps) ** power + end_lr`` (cycling if ``cycle``)."""

    def __init__(
        self,
        learning_rate: float,
        decay_steps: int,
        end_lr: float = 0.0001,
        power: float = 1.0,
        cycle: bool = False,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not (isinstance(decay_steps, int) and decay_steps > 0):
            raise ValueError("PolynomialDecay: decay_steps must be a positive integer")
        self.decay_steps, self.end_lr, self.power, self.cycle = decay_steps, end_lr, power, cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        epoch, steps = self.last_epoch, self.decay_steps
        if self.cycle:
            steps = self.decay_steps * (1 if epoch == 0 else math.ceil(epoch / self.decay_steps))
        else:
            epoch = min(epoch, steps)
        return (self.base_lr - self.end_lr) * (1 - epoch / steps) ** self.power + self.end_lr


class LinearWarmup(LRScheduler):
    """Rise linearly from ``start_lr`` to ``end_lr`` over ``warmup_steps``, then follow
    ``learning_rate`` (a float or another scheduler, stepped from 0 after the warmup)."""

    def __init__(
        self,
        learning_rate: float | LRScheduler,
        warmup_steps: int,
        start_lr: float,
        end_lr: float,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not isinstance(learning_rate, (int, float, LRScheduler)):
            raise TypeError(
                f"LinearWarmup: learning_rate must be a float or an LRScheduler, "
                f"not {type(learning_rate).__name__}"
            )
        if not (isinstance(warmup_steps, int) and warmup_steps > 0):
            raise ValueError("LinearWarmup: warmup_steps must be a positive integer")
        if end_lr <= start_lr:
            raise ValueError(
                f"LinearWarmup: end_lr ({end_lr}) must be greater than start_lr ({start_lr})"
            )
        self.learning_rate = learning_rate
        self.warmup_steps, self.start_lr, self.end_lr = warmup_steps, start_lr, end_lr
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            out["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        inner = dict(state_dict)
        nested = inner.pop("LinearWarmup_LR", None)
        super().set_state_dict(inner)
        if isinstance(self.learning_rate, LRScheduler) and nested is not None:
            self.learning_rate.set_state_dict(nested)

    def get_lr(self) -> float:
        if self.last_epoch < self.warmup_steps:
            frac = self.last_epoch / self.warmup_steps
            return (self.end_lr - self.start_lr) * frac + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)


class ExponentialDecay(LRScheduler):
    """``lr * gamma ** epoch``."""

    def __init__(
        self, learning_rate: float, gamma: float, last_epoch: int = -1, verbose: bool = False
    ):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma**self.last_epoch


class MultiStepDecay(LRScheduler):
    """``lr * gamma ** (number of milestones <= epoch)``."""

    def __init__(
        self,
        learning_rate: float,
        milestones: Sequence[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        milestones = list(milestones)
        if any(b <= a for a, b in zip(milestones, milestones[1:], strict=False)):
            raise ValueError(f"MultiStepDecay: milestones must increase, got {milestones}")
        if gamma >= 1.0:
            raise ValueError("MultiStepDecay: gamma must be < 1.0")
        self.milestones, self.gamma = milestones, gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        for i, milestone in enumerate(self.milestones):
            if self.last_epoch < milestone:
                return self.base_lr * self.gamma**i
        return self.base_lr * self.gamma ** len(self.milestones)


class StepDecay(LRScheduler):
    """``lr * gamma ** (epoch // step_size)``."""

    def __init__(
        self,
        learning_rate: float,
        step_size: int,
        gamma: float = 0.1,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepDecay: step_size must be a positive int, got {step_size!r}")
        if gamma >= 1.0:
            raise ValueError("StepDecay: gamma must be < 1.0")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class LambdaDecay(LRScheduler):
    """``lr * lr_lambda(epoch)``."""

    def __init__(
        self,
        learning_rate: float,
        lr_lambda: Callable[[int], float],
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not callable(lr_lambda):
            raise TypeError("LambdaDecay: lr_lambda must be a function of the epoch")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """Multiply the previous rate by ``lr_lambda(epoch)`` at each step."""

    def __init__(
        self,
        learning_rate: float,
        lr_lambda: Callable[[int], float],
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not callable(lr_lambda):
            raise TypeError("MultiplicativeDecay: lr_lambda must be a function of the epoch")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch > 0:
            return self.last_lr * self.lr_lambda(self.last_epoch)
        return self.base_lr


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from ``learning_rate`` to ``eta_min`` over ``T_max`` epochs (SGDR
    without restarts), computed recursively as Paddle does; ``step(epoch)`` uses the closed form
    ``eta_min + (lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``."""

    def __init__(
        self,
        learning_rate: float,
        T_max: int,
        eta_min: float = 0,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"CosineAnnealingDecay: T_max must be a positive int, got {T_max!r}")
        self.T_max, self.eta_min = T_max, float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        e, t = self.last_epoch, self.T_max
        if e == 0:
            return self.base_lr
        if (e - 1 - t) % (2 * t) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / t)) / 2
        ratio = (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
        return ratio * (self.last_lr - self.eta_min) + self.eta_min

    def _get_closed_form_lr(self) -> float:
        cos = math.cos(math.pi * self.last_epoch / self.T_max)
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + cos) / 2


class LinearLR(LRScheduler):
    """Scale ``lr`` by a factor moving linearly from ``start_factor`` to ``end_factor`` over
    ``total_steps``, then keep ``end_factor``.

    Each ``step()`` multiplies the previous rate as Paddle does (the same floats);
    ``step(epoch)`` and a ``last_epoch`` to resume from use the closed form
    ``lr * (start_factor + (end_factor - start_factor) * min(epoch, total_steps) / total_steps)``.
    """

    def __init__(
        self,
        learning_rate: float,
        total_steps: int,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        if not (0 < start_factor <= 1 and 0 <= end_factor <= 1):
            raise ValueError(
                f"LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got "
                f"{start_factor} and {end_factor}"
            )
        if total_steps <= 0:
            raise ValueError(f"LinearLR: total_steps must be positive, got {total_steps}")
        self.total_steps, self.start_factor, self.end_factor = total_steps, start_factor, end_factor
        self._resuming = last_epoch >= 0  # the first rate is not the previous one's successor
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self._resuming:
            self._resuming = False
            return self._get_closed_form_lr()
        if self.last_epoch == 0:
            return self.base_lr * self.start_factor
        if self.last_epoch > self.total_steps:
            return self.last_lr
        delta = self.end_factor - self.start_factor
        start = self.total_steps * self.start_factor
        return self.last_lr * (1.0 + delta / (start + (self.last_epoch - 1) * delta))

    def _get_closed_form_lr(self) -> float:
        frac = min(self.last_epoch, self.total_steps) / self.total_steps
        return self.base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)


class OneCycleLR(LRScheduler):
    """The one-cycle policy: from ``max_learning_rate / divide_factor`` up to
    ``max_learning_rate`` over the first ``phase_pct`` of ``total_steps``, then down to
    ``end_learning_rate`` (``three_phase``: down to the initial rate over as many steps, then
    to ``end_learning_rate``), by cosine or linear annealing. Step it once per batch; stepping
    beyond ``total_steps`` raises."""

    def __init__(
        self,
        max_learning_rate: float,
        total_steps: int,
        divide_factor: float = 25.0,
        end_learning_rate: float = 0.0001,
        phase_pct: float = 0.3,
        anneal_strategy: str = "cos",
        three_phase: bool = False,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        name = "OneCycleLR"
        max_lr = _number(name, "max_learning_rate", max_learning_rate, low=0.0)
        end_lr = _number(name, "end_learning_rate", end_learning_rate, low=0.0)
        divide = _number(name, "divide_factor", divide_factor)
        if divide <= 0:
            raise ValueError(f"{name}: divide_factor must be > 0, got {divide_factor}")
        self.total_steps = _positive_int(name, "total_steps", total_steps, TypeError)
        pct = _number(name, "phase_pct", phase_pct)
        if not 0 <= pct <= 1:
            raise ValueError(f"{name}: phase_pct must be in [0, 1], got {phase_pct}")
        if three_phase and pct >= 0.5:
            raise ValueError(f"{name}: with three_phase=True phase_pct must be < 0.5, got {pct}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"{name}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        initial_lr = max_lr / divide
        total = self.total_steps
        # (last step, learning rate there) of each phase; phase 0 starts at (0, initial_lr)
        up = pct * total - 1
        if three_phase:
            ends = [(up, max_lr), (2 * pct * total - 2, initial_lr), (total - 1, end_lr)]
        else:
            ends = [(up, max_lr), (total - 1, end_lr)]
        self._phases = list(zip([(0, initial_lr)] + ends[:-1], ends, strict=True))
        if any(end[0] == start[0] for start, end in self._phases):
            raise ValueError(
                f"{name}: phase_pct={pct} with total_steps={total} leaves a phase of 0 steps "
                f"(phase_pct * total_steps must not be 1, nor phase_pct 1 with two phases)"
            )
        self.anneal_strategy = anneal_strategy
        super().__init__(initial_lr, last_epoch, verbose)

    def step(self, epoch: int | None = None) -> None:
        target = self.last_epoch + 1 if epoch is None else epoch
        if target > self.total_steps:
            raise ValueError(
                f"OneCycleLR: stepped to step {target}, beyond total_steps={self.total_steps}; "
                f"create the scheduler with the number of steps the training runs"
            )
        super().step(epoch)

    def get_lr(self) -> float:
        step = self.last_epoch
        for i, ((start, start_lr), (end, end_lr)) in enumerate(self._phases):
            if step <= end or i == len(self._phases) - 1:
                pct = (step - start) / (end - start)
                if self.anneal_strategy == "cos":
                    return end_lr + (start_lr - end_lr) / 2.0 * (math.cos(math.pi * pct) + 1)
                return (end_lr - start_lr) * pct + start_lr
        raise AssertionError("unreachable: the last phase takes every step")


class CyclicLR(LRScheduler):
    """Cyclical learning rates: rise from ``base_learning_rate`` towards ``max_learning_rate``
    over ``step_size_up`` steps, fall back over ``step_size_down``, the amplitude scaled by
    ``mode`` ('triangular': 1; 'triangular2': halved each cycle; 'exp_range':
    ``exp_gamma ** iterations``) or by ``scale_fn(cycle or iterations)``."""

    def __init__(
        self,
        base_learning_rate: float,
        max_learning_rate: float,
        step_size_up: int,
        step_size_down: int | None = None,
        mode: str = "triangular",
        exp_gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        name = "CyclicLR"
        base_lr = _number(name, "base_learning_rate", base_learning_rate, low=0.0)
        self.max_lr = _number(name, "max_learning_rate", max_learning_rate, low=0.0)
        up = _positive_int(name, "step_size_up", step_size_up, TypeError)
        down = up
        if step_size_down is not None:
            down = _positive_int(name, "step_size_down", step_size_down, TypeError)
        self.gamma = _number(name, "exp_gamma", exp_gamma)
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(
                f"{name}: mode must be 'triangular', 'triangular2' or 'exp_range' when no "
                f"scale_fn is given, got {mode!r}"
            )
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(
                f"{name}: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}"
            )
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{name}: scale_fn must be a function, not {type(scale_fn).__name__}")
        self.cycle_size = float(up + down)
        self.step_up_pct = up / self.cycle_size
        self.amplitude = self.max_lr - base_lr
        self.mode = mode
        if scale_fn is not None:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        elif mode == "triangular":
            self.scale_fn, self.scale_mode = _triangular, "cycle"
        elif mode == "triangular2":
            self.scale_fn, self.scale_mode = _triangular2, "cycle"
        else:
            self.scale_fn, self.scale_mode = self._exp_range, "iterations"
        super().__init__(base_lr, last_epoch, verbose)

    def _exp_range(self, iterations: float) -> float:
        return self.gamma**iterations

    def get_lr(self) -> float:
        iterations = self.last_epoch
        cycle = 1 + iterations // self.cycle_size
        pct = 1.0 + iterations / self.cycle_size - cycle
        if pct <= self.step_up_pct:
            factor = pct / self.step_up_pct
        else:
            factor = (1 - pct) / (1 - self.step_up_pct)
        height = self.amplitude * factor
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else iterations)
        return self.base_lr + height * scale


def _triangular(cycle: float) -> float:
    return 1.0


def _triangular2(cycle: float) -> float:
    return 1 / (2.0 ** (cycle - 1))


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``learning_rate`` to ``eta_min`` restarted every ``T_i`` epochs
    (SGDR): ``T_0`` epochs first, each period ``T_mult`` times the previous one.
    ``step(epoch)`` accepts fractional epochs (``epoch + batch / batches``)."""

    def __init__(
        self,
        learning_rate: float,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0,
        last_epoch: int = -1,
        verbose: bool = False,
    ):
        name = "CosineAnnealingWarmRestarts"
        self.T_0 = _positive_int(name, "T_0", T_0, ValueError)
        if not isinstance(T_mult, int) or isinstance(T_mult, bool) or T_mult < 1:
            raise ValueError(f"{name}: T_mult must be an int >= 1, got {T_mult!r}")
        self.T_mult = T_mult
        self.eta_min = _number(name, "eta_min", eta_min, low=0.0)
        # resuming at last_epoch: the next step() advances from that epoch's place in its period
        self.T_cur, self.T_i = self._position(last_epoch) if last_epoch >= 0 else (-1, T_0)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        cos = math.cos(math.pi * self.T_cur / self.T_i)
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + cos) / 2

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (a float for a fraction of an epoch)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur - self.T_i, self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts: epoch must be >= 0, got {epoch}")
            self.T_cur, self.T_i = self._position(epoch)
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        if self.verbose:
            print(
                f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                f"{self.last_lr}."
            )

    def _position(self, epoch: float) -> tuple[float, int]:
        """(epochs since the last restart, current period) at ``epoch``."""
        if epoch < self.T_0:
            return epoch, self.T_0
        if self.T_mult == 1:
            return epoch % self.T_0, self.T_0
        n = 0  # restarts before epoch: T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch
        while self.T_0 * (self.T_mult ** (n + 1) - 1) // (self.T_mult - 1) <= epoch:
            n += 1
        since = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
        return since, self.T_0 * self.T_mult**n

    def state_keys(self) -> None:
        self.keys = ["last_epoch", "last_lr", "T_cur", "T_i"]

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()``; one without ``T_cur``/``T_i`` (as Paddle saves it) places
        the schedule from ``last_epoch``."""
        state = dict(state_dict)
        if "T_cur" not in state and "T_i" not in state and "last_epoch" in state:
            epoch = state["last_epoch"]
            state["T_cur"], state["T_i"] = self._position(epoch) if epoch >= 0 else (-1, self.T_0)
        super().set_state_dict(state)


def _number(owner: str, what: str, value: Any, low: float | None = None) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{owner}: {what} must be a float, not {type(value).__name__}")
    if low is not None and value < low:
        raise ValueError(f"{owner}: {what} must be >= {low}, got {value}")
    return float(value)


def _positive_int(owner: str, what: str, value: Any, type_error: type[Exception]) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise type_error(f"{owner}: {what} must be a positive int, got {value!r}")
    if value <= 0:
        raise ValueError(f"{owner}: {what} must be a positive int, got {value}")
    return value


class ReduceOnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when ``metrics`` (passed to ``step``) stops improving
    for more than ``patience`` epochs; then wait ``cooldown`` epochs."""

    def __init__(
        self,
        learning_rate: float,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float = 0,
        epsilon: float = 1e-8,
        verbose: bool = False,
    ):
        mode, threshold_mode = mode.lower(), threshold_mode.lower()
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceOnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceOnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        if factor >= 1.0:
            raise ValueError("ReduceOnPlateau: factor must be < 1.0")
        if not isinstance(learning_rate, (int, float)):
            raise TypeError("ReduceOnPlateau: learning_rate must be a float")
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.min_lr, self.epsilon = cooldown, min_lr, epsilon
        self.cooldown_counter, self.best, self.num_bad_epochs = 0, None, 0
        self.base_lr = self.last_lr = float(learning_rate)
        self.last_epoch, self.verbose = 0, verbose

    def state_keys(self) -> None:
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        """Record ``metrics`` (a number or a one-element tensor/array) for this epoch."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        value = float(metrics.item() if hasattr(metrics, "item") else metrics)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(value, self.best):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(
                        f"Epoch {self.last_epoch}: ReduceOnPlateau set learning rate to "
                        f"{self.last_lr}."
                    )

    def _is_better(self, current: float, best: float) -> bool:
        delta = best * self.threshold if self.threshold_mode == "rel" else self.threshold
        if self.mode == "min":
            return current < best - delta
        return current > best + delta

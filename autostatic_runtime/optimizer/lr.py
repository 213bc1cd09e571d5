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
    ``total_steps``."""

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
            raise ValueError("LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1]")
        if total_steps <= 0:
            raise ValueError("LinearLR: total_steps must be positive")
        self.total_steps, self.start_factor, self.end_factor = total_steps, start_factor, end_factor
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        frac = min(self.last_epoch, self.total_steps) / self.total_steps
        return self.base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)


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

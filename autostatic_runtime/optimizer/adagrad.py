"""Adagrad (Paddle 2.x ``paddle.optimizer.Adagrad``), with Paddle's kernel math:

    moment += g * g
    p -= lr * g / (sqrt(moment) + epsilon)

``moment`` starts at ``initial_accumulator_value``; ``g`` already includes weight decay.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.optimizer.optimizer import Optimizer
from autostatic_runtime.optimizer.static_update import xp_of

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adaptive gradient: each weight's step shrinks with its accumulated squared gradients.

    Args:
        learning_rate: a float or an LRScheduler.
        epsilon: keeps the denominator away from zero.
        parameters: the parameters, or parameter groups (which may set ``epsilon``).
        weight_decay: L2 coefficient (float) or an ``rt.regularizer`` object.
        grad_clip: a gradient clipping object.
        initial_accumulator_value: the starting value of the ``moment`` accumulator.
    """

    def __init__(
        self,
        learning_rate: Any,
        epsilon: float = 1.0e-6,
        parameters: Any = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
        initial_accumulator_value: float = 0.0,
    ):
        if learning_rate is None:
            raise ValueError("Adagrad: learning_rate is not set")
        if epsilon is None or float(epsilon) < 0:
            raise ValueError("Adagrad: epsilon must be a float >= 0")
        self._epsilon = float(epsilon)
        self._initial = float(initial_accumulator_value)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _update(self, param, grad, lr, group):
        eps = float(group.get("epsilon", self._epsilon))
        xp = xp_of(param._data)
        moment = self._get_acc("moment", param, fill=self._initial) + grad * grad
        self._set_acc("moment", param, moment)
        denom = xp.sqrt(moment)
        denom += eps
        param._data = param._data - grad / denom * lr

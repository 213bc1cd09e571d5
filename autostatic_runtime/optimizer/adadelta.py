"""Adadelta (Paddle 2.x ``paddle.optimizer.Adadelta``), with Paddle's kernel math (``g``
already includes weight decay):

    avg_sq_grad = rho * avg_sq_grad + (1 - rho) * g * g
    update = sqrt(avg_sq_update + epsilon) / sqrt(avg_sq_grad + epsilon) * g
    avg_sq_update = rho * avg_sq_update + (1 - rho) * update * update
    p -= lr * update

The accumulators are Paddle's ``_avg_squared_grad`` and ``_avg_squared_update``. As in Paddle's
current kernel the step is scaled by the learning rate (Paddle 2.4 and older ignored it; pass
``learning_rate=1.0`` for that behaviour).
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.optimizer.optimizer import Optimizer, descend
from autostatic_runtime.optimizer.static_update import xp_of

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta: steps scaled by the ratio of recent update and gradient magnitudes.

    Args:
        learning_rate: a float or an LRScheduler.
        epsilon: added under both square roots; must be > 0 (the first step is
            ``sqrt(epsilon)``-sized).
        rho: decay of the squared-gradient and squared-update averages, in [0, 1].
        parameters: the parameters, or parameter groups (which may set ``epsilon``, ``rho``).
        weight_decay: L2 coefficient (float) or an ``rt.regularizer`` object.
        grad_clip: a gradient clipping object.
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        epsilon: float = 1.0e-6,
        rho: float = 0.95,
        parameters: Any = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ):
        if learning_rate is None:
            raise ValueError("Adadelta: learning_rate is not set")
        self._epsilon, self._rho = _check_hyper(epsilon, rho)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _add_param_group(self, group: dict) -> None:
        _check_hyper(group.get("epsilon", self._epsilon), group.get("rho", self._rho))
        super()._add_param_group(group)

    def _update(self, param, grad, lr, group):
        eps = float(group.get("epsilon", self._epsilon))
        rho = float(group.get("rho", self._rho))
        xp = xp_of(param._data)
        avg_grad = self._get_acc("_avg_squared_grad", param) * rho + grad * grad * (1.0 - rho)
        avg_update = self._get_acc("_avg_squared_update", param)
        update = xp.sqrt(avg_update + eps) / xp.sqrt(avg_grad + eps) * grad
        self._set_acc("_avg_squared_grad", param, avg_grad)
        self._set_acc(
            "_avg_squared_update", param, avg_update * rho + update * update * (1.0 - rho)
        )
        param._data = descend(param._data, update, lr)


def _check_hyper(epsilon: Any, rho: Any) -> tuple[float, float]:
    for what, v in (("epsilon", epsilon), ("rho", rho)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError(f"Adadelta: {what} must be a float, not {type(v).__name__}")
    if not epsilon > 0:
        raise ValueError(
            f"Adadelta: epsilon must be > 0, got {epsilon} (with 0 no parameter ever moves: "
            f"every step is scaled by sqrt(avg_squared_update + epsilon), which starts at 0)"
        )
    if not 0 <= rho <= 1:
        raise ValueError(f"Adadelta: rho must be in [0, 1], got {rho}")
    return float(epsilon), float(rho)

"""RMSProp and Adamax (Paddle 2.x ``paddle.optimizer.RMSProp`` / ``Adamax``), with Paddle's
kernel math (``g`` already includes weight decay):

    RMSProp:  ms = rho * ms + (1 - rho) * g * g
              mg = rho * mg + (1 - rho) * g            (centered only)
              moment = momentum * moment + lr * g / sqrt(ms - mg * mg + epsilon)
              p -= moment                              (without centered: ms + epsilon)
    Adamax:   m = beta1 * m + (1 - beta1) * g
              inf_norm = max(beta2 * inf_norm + epsilon, |g|)
              p -= lr / (1 - beta1^t) * m / inf_norm   (beta1^t: the beta1_pow_acc accumulator)
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.optimizer.optimizer import Optimizer
from autostatic_runtime.optimizer.static_update import xp_of

__all__ = ["RMSProp", "Adamax"]


class RMSProp(Optimizer):
    """Root-mean-square propagation, optionally centered and with momentum.

    Args:
        learning_rate: a float or an LRScheduler.
        rho: decay of the mean square (and mean gradient) estimates.
        epsilon: keeps the denominator away from zero.
        momentum: decay of the ``moment`` accumulator.
        centered: normalise by the variance estimate rather than the mean square.
        parameters, weight_decay, grad_clip: as for every optimizer.
    """

    def __init__(self, learning_rate: Any, rho: float = 0.95, epsilon: float = 1.0e-6,
                 momentum: float = 0.0, centered: bool = False, parameters: Any = None,
                 weight_decay: Any = None, grad_clip: Any = None,
                 name: str | None = None):  # fmt: skip
        if learning_rate is None:
            raise ValueError("RMSProp: learning_rate is not set")
        for what, v in (("rho", rho), ("epsilon", epsilon), ("momentum", momentum)):
            if v is None or float(v) < 0:
                raise ValueError(f"RMSProp: {what} must be a float >= 0, got {v!r}")
        self._rho, self._epsilon = float(rho), float(epsilon)
        self._momentum, self._centered = float(momentum), bool(centered)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _update(self, param, grad, lr, group):
        rho = float(group.get("rho", self._rho))
        eps = float(group.get("epsilon", self._epsilon))
        mu = float(group.get("momentum", self._momentum))
        xp = xp_of(param._data)
        mean_square = self._get_acc("mean_square", param) * rho + grad * grad * (1.0 - rho)
        self._set_acc("mean_square", param, mean_square)
        denom = mean_square
        if group.get("centered", self._centered):
            mean_grad = self._get_acc("mean_grad", param) * rho + grad * (1.0 - rho)
            self._set_acc("mean_grad", param, mean_grad)
            denom = denom - mean_grad * mean_grad
        moment = self._get_acc("momentum", param) * mu + grad * lr / xp.sqrt(denom + eps)
        self._set_acc("momentum", param, moment)
        param._data = param._data - moment


class Adamax(Optimizer):
    """Adam with the infinity norm in place of the second moment.

    Args:
        learning_rate: a float or an LRScheduler.
        beta1, beta2: decay rates of the moment and of the infinity norm.
        epsilon: keeps the denominator away from zero.
        parameters, weight_decay, grad_clip: as for every optimizer.
    """

    def __init__(self, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1.0e-8, parameters: Any = None, weight_decay: Any = None,
                 grad_clip: Any = None, name: str | None = None):  # fmt: skip
        for what, v in (("beta1", beta1), ("beta2", beta2)):
            if not 0 <= float(v) < 1:
                raise ValueError(f"Adamax: {what} must be in [0, 1), got {v}")
        if float(epsilon) < 0:
            raise ValueError("Adamax: epsilon must be >= 0")
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _update(self, param, grad, lr, group):
        b1 = float(group.get("beta1", self._beta1))
        b2 = float(group.get("beta2", self._beta2))
        eps = float(group.get("epsilon", self._epsilon))
        xp = xp_of(param._data)
        m = self._get_acc("moment", param) * b1 + grad * (1.0 - b1)
        inf_norm = xp.maximum(self._get_acc("inf_norm", param) * b2 + eps, xp.abs(grad))
        b1p = self._get_acc("beta1_pow_acc", param, fill=b1, scalar=True)
        self._set_acc("moment", param, m)
        self._set_acc("inf_norm", param, inf_norm)
        self._set_acc("beta1_pow_acc", param, b1p * b1)
        param._data = param._data - m / inf_norm * (lr / (1.0 - b1p))

"""Lamb (Paddle 2.x ``paddle.optimizer.Lamb``), with Paddle's kernel math:

    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    r = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon) + decay * p
    trust = ||p|| / ||r||     (1 when either norm is 0, or when decay <= 0 and not always_adapt)
    p -= lr * trust * r

``beta1^t``/``beta2^t`` are the ``beta1_pow_acc``/``beta2_pow_acc`` accumulators (starting at
``beta1``/``beta2``). ``decay`` is ``lamb_weight_decay``, 0 for the parameters
``exclude_from_weight_decay_fn(param)`` accepts; it is part of ``r``, not of ``g``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autostatic_runtime.optimizer.adam import _float, update_moments
from autostatic_runtime.optimizer.optimizer import Optimizer, descend
from autostatic_runtime.optimizer.static_update import xp_of
from autostatic_runtime.tensor import Tensor

__all__ = ["Lamb"]


class Lamb(Optimizer):
    """Layer-wise adaptive moments (LAMB): Adam steps rescaled per parameter by a trust ratio.

    Args:
        learning_rate: a float or an LRScheduler.
        lamb_weight_decay: the decay coefficient inside the update (not an L2 term of the
            gradient).
        beta1, beta2: decay rates of the first and second moment estimates.
        epsilon: keeps the denominator away from zero.
        parameters: the parameters, or parameter groups (which may set ``beta1``, ``beta2``,
            ``epsilon``, ``lamb_weight_decay``, ``exclude_from_weight_decay_fn``).
        grad_clip: a gradient clipping object.
        exclude_from_weight_decay_fn: optional ``fn(param) -> bool``; no decay where True.
        multi_precision: update float16 parameters through float32 master weights.
        always_adapt: apply the trust ratio even when the decay is 0.
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        lamb_weight_decay: float = 0.01,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-6,
        parameters: Any = None,
        grad_clip: Any = None,
        exclude_from_weight_decay_fn: Callable[[Tensor], bool] | None = None,
        multi_precision: bool = False,
        always_adapt: bool = False,
        name: str | None = None,
    ):
        if learning_rate is None:
            raise ValueError("Lamb: learning_rate is not set")
        self._beta1, self._beta2 = _float(beta1, "beta1"), _float(beta2, "beta2")
        self._epsilon = _float(epsilon, "epsilon")
        self._decay = _float(lamb_weight_decay, "lamb_weight_decay")
        self._exclude = exclude_from_weight_decay_fn
        self._always_adapt = bool(always_adapt)
        self._multi_precision = multi_precision
        self._check(self._hyper({}), self._exclude)
        super().__init__(learning_rate, parameters, None, grad_clip, name)

    def _add_param_group(self, group: dict) -> None:
        self._check(self._hyper(group), group.get("exclude_from_weight_decay_fn"))
        super()._add_param_group(group)

    @staticmethod
    def _check(hyper: tuple[float, float, float, float], exclude: Any) -> None:
        b1, b2, eps, _ = hyper
        for what, v in (("beta1", b1), ("beta2", b2)):
            if not 0 <= v < 1:
                raise ValueError(f"Lamb: {what} must be in [0, 1), got {v}")
        if eps < 0:
            raise ValueError(f"Lamb: epsilon must be >= 0, got {eps}")
        if exclude is not None and not callable(exclude):
            raise TypeError(
                f"Lamb: exclude_from_weight_decay_fn must be a function of the parameter, "
                f"not {type(exclude).__name__}"
            )

    def _hyper(self, group: dict) -> tuple[float, float, float, float]:
        return (
            _float(group.get("beta1", self._beta1), "beta1"),
            _float(group.get("beta2", self._beta2), "beta2"),
            _float(group.get("epsilon", self._epsilon), "epsilon"),
            _float(group.get("lamb_weight_decay", self._decay), "lamb_weight_decay"),
        )

    def _update(self, param, grad, lr, group):
        b1, b2, eps, decay = self._hyper(group)
        exclude = group.get("exclude_from_weight_decay_fn", self._exclude)
        if exclude is not None and exclude(param):
            decay = 0.0
        xp = xp_of(param._data)
        m, v, b1p, b2p = update_moments(self, param, grad, b1, b2)
        denom = xp.sqrt(v / (1.0 - b2p))
        denom += eps
        r = m / (1.0 - b1p) / denom
        if decay:
            r = r + param._data * decay
        if decay > 0 or self._always_adapt:
            r = r * _trust_ratio(xp, param._data, r)
        param._data = descend(param._data, r, lr)


def _trust_ratio(xp: Any, p: Any, r: Any) -> Any:
    """``||p|| / ||r||``, 1 where either norm is 0 (a 0-d array or Variable, p's dtype)."""
    p_norm = xp.sqrt(xp.sum(p * p))
    r_norm = xp.sqrt(xp.sum(r * r))
    ratio = p_norm / xp.where(r_norm > 0, r_norm, 1.0)
    return xp.where(r_norm > 0, xp.where(p_norm > 0, ratio, 1.0), 1.0)

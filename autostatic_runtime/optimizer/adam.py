"""Adam and AdamW (Paddle 2.x ``paddle.optimizer.Adam`` / ``AdamW``), with Paddle's kernel math:

    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    p -= lr_t * m / (sqrt(v) + epsilon * sqrt(1 - beta2^t))

``beta1^t``/``beta2^t`` are the ``beta1_pow_acc``/``beta2_pow_acc`` accumulators (starting at
``beta1``/``beta2``). Adam's ``weight_decay`` is L2 regularization added to ``g``; AdamW's is
decoupled: ``p -= lr * coeff * p`` before the Adam step, for parameters
``apply_decay_param_fun(name)`` accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autostatic_runtime.optimizer.optimizer import Optimizer, descend
from autostatic_runtime.optimizer.static_update import xp_of
from autostatic_runtime.tensor import Tensor

__all__ = ["Adam", "AdamW"]


def _float(value: Any, what: str) -> float:
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a float or a 1-element Tensor, not {type(value).__name__}")
    return float(value)


class Adam(Optimizer):
    """Adaptive moment estimation.

    Args:
        learning_rate: a float or an LRScheduler.
        beta1, beta2: decay rates of the first and second moment estimates (floats or
            1-element Tensors).
        epsilon: keeps the denominator away from zero.
        parameters: the parameters, or parameter groups (which may set ``beta1``, ``beta2``,
            ``epsilon``).
        weight_decay: L2 coefficient (float) or an ``rt.regularizer`` object, added to the
            gradient.
        grad_clip: a gradient clipping object.
        lazy_mode: accepted for compatibility (gradients here are dense).
        multi_precision: update float16 parameters through float32 master weights
            (``rt.amp.decorate(level='O2')`` sets it).
        amsgrad: use the maximum of past second moments (AMSGrad).
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: float = 1e-8,
        parameters: Any = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        use_multi_tensor: bool = False,
        amsgrad: bool = False,
        name: str | None = None,
    ):
        self._beta1 = _float(beta1, "beta1")
        self._beta2 = _float(beta2, "beta2")
        self._epsilon = _float(epsilon, "epsilon")
        for what, v in (("beta1", self._beta1), ("beta2", self._beta2)):
            if not 0 <= v < 1:
                raise ValueError(f"{type(self).__name__}: {what} must be in [0, 1), got {v}")
        if self._epsilon < 0:
            raise ValueError(f"{type(self).__name__}: epsilon must be >= 0")
        self._lazy_mode = lazy_mode
        self._amsgrad = amsgrad
        self._multi_precision = bool(multi_precision)  # float32 master weights
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _hyper(self, group: dict) -> tuple[float, float, float]:
        return (
            _float(group.get("beta1", self._beta1), "beta1"),
            _float(group.get("beta2", self._beta2), "beta2"),
            _float(group.get("epsilon", self._epsilon), "epsilon"),
        )

    def _update(self, param, grad, lr, group):
        self._adam_step(param, grad, lr, group)

    def _adam_step(self, param: Tensor, grad: Any, lr: float, group: dict) -> None:
        b1, b2, eps = self._hyper(group)
        xp = xp_of(param._data)
        m, v, b1p, b2p = update_moments(self, param, grad, b1, b2)
        if self._amsgrad:
            v = xp.maximum(self._get_acc("moment2_max", param), v)
            self._set_acc("moment2_max", param, v)
        correction = (1.0 - b2p) ** 0.5  # b2p: a float eagerly, a Variable in static mode
        denom = xp.sqrt(v)
        denom += eps * correction
        step = m / denom
        step *= lr * correction / (1.0 - b1p)
        param._data = descend(param._data, step)


def update_moments(opt: Optimizer, param: Tensor, grad: Any, b1: float, b2: float) -> tuple:
    """Advance ``param``'s ``moment1``/``moment2`` and ``beta1_pow_acc``/``beta2_pow_acc``
    accumulators (Adam, Lamb); returns the new moments and the powers ``beta^t`` of this step
    (from before their update)."""
    m = opt._get_acc("moment1", param) * b1
    m += grad * (1.0 - b1)
    v = opt._get_acc("moment2", param) * b2
    v += grad * grad * (1.0 - b2)
    b1p = opt._get_acc("beta1_pow_acc", param, fill=b1, scalar=True)
    b2p = opt._get_acc("beta2_pow_acc", param, fill=b2, scalar=True)
    opt._set_acc("moment1", param, m)
    opt._set_acc("moment2", param, v)
    opt._set_acc("beta1_pow_acc", param, b1p * b1)
    opt._set_acc("beta2_pow_acc", param, b2p * b2)
    return m, v, b1p, b2p


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as Paddle computes it.

    Args:
        weight_decay: the decay coefficient (a float or 1-element Tensor), applied as
            ``p -= lr * lr_ratio(p) * coeff * p`` before the Adam step; not added to the gradient.
        lr_ratio: optional ``fn(param) -> float`` scaling the learning rate per parameter.
        apply_decay_param_fun: optional ``fn(param_name) -> bool``; decay only where True.
        Other arguments as for ``Adam``. A parameter's own ``ParamAttr`` regularizer is still
        added to its gradient.
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: float = 1e-8,
        parameters: Any = None,
        weight_decay: Any = 0.01,
        lr_ratio: Callable[[Tensor], float] | None = None,
        apply_decay_param_fun: Callable[[str], bool] | None = None,
        grad_clip: Any = None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        amsgrad: bool = False,
        name: str | None = None,
    ):
        self._coeff = _float(weight_decay, "AdamW weight_decay")
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun
        super().__init__(
            learning_rate,
            beta1,
            beta2,
            epsilon,
            parameters,
            None,
            grad_clip,
            lazy_mode,
            multi_precision,
            False,
            amsgrad,
            name,
        )

    def _add_param_group(self, group: dict) -> None:
        if "weight_decay" in group:  # a group's weight_decay is its decoupled coefficient
            group["coeff"] = group.pop("weight_decay")
        super()._add_param_group(group)

    def _regularizer_for(self, param, group):
        return getattr(param, "regularizer", None)

    def _update(self, param, grad, lr, group):
        if self._lr_ratio is not None:
            lr = lr * float(self._lr_ratio(param))
        coeff = _float(group.get("coeff", self._coeff), "AdamW weight_decay")
        decay = self._apply_decay_param_fun is None or self._apply_decay_param_fun(param.name)
        if decay and coeff:
            param._data = param._data * (1.0 - lr * coeff)
        self._adam_step(param, grad, lr, group)

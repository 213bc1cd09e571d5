"""Momentum SGD (Paddle 2.x ``paddle.optimizer.Momentum``).

    velocity = momentum * velocity + g
    p -= lr * velocity                         (use_nesterov=False)
    p -= lr * (g + momentum * velocity)        (use_nesterov=True)

``g`` already includes weight decay (``+ coeff * p`` for L2Decay) and ``rescale_grad``.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.optimizer.optimizer import Optimizer, descend

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """SGD with (optionally Nesterov) momentum; the velocity is the ``velocity`` accumulator.

    Args:
        learning_rate: a float or an LRScheduler.
        momentum: the velocity decay factor.
        parameters: the parameters (or parameter groups, which may set ``'momentum'``).
        use_nesterov: use Nesterov accelerated gradient.
        weight_decay: L2 coefficient (float) or an ``rt.regularizer`` object.
        grad_clip: a gradient clipping object.
        rescale_grad: multiplies the gradient before the update.
        multi_precision: update float16 parameters through float32 master weights
            (``rt.amp.decorate(level='O2')`` sets it).
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        momentum: float = 0.9,
        parameters: Any = None,
        use_nesterov: bool = False,
        weight_decay: Any = None,
        grad_clip: Any = None,
        multi_precision: bool = False,
        rescale_grad: float = 1.0,
        use_multi_tensor: bool = False,
        name: str | None = None,
    ):
        if momentum is None:
            raise ValueError("Momentum: momentum must be a float")
        self._momentum = float(momentum)
        self._use_nesterov = bool(use_nesterov)
        self._rescale_grad = float(rescale_grad)
        self._multi_precision = bool(multi_precision)  # float32 master weights
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _apply(self, pairs, group, lr):
        rescale = group.get("rescale_grad", self._rescale_grad)
        if rescale != 1.0:
            pairs = [(p, None if g is None else g * rescale) for p, g in pairs]
        super()._apply(pairs, group, lr)

    def _update(self, param, grad, lr, group):
        mu = float(group.get("momentum", self._momentum))
        velocity = self._get_acc("velocity", param) * mu
        velocity += grad
        self._set_acc("velocity", param, velocity)
        if group.get("use_nesterov", self._use_nesterov):
            step = velocity * mu
            step += grad
        else:
            step = velocity
        param._data = descend(param._data, step, lr)

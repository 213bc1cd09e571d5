"""Stochastic gradient descent (Paddle 2.x ``paddle.optimizer.SGD``): ``p -= lr * g``."""

from __future__ import annotations

from typing import Any

from autostatic_runtime.optimizer.optimizer import Optimizer, descend

__all__ = ["SGD"]


class SGD(Optimizer):
    """Plain gradient descent.

    Args:
        learning_rate: a float or an LRScheduler.
        parameters: the parameters (or parameter groups) to optimize.
        weight_decay: L2 coefficient (float) or an ``rt.regularizer`` object.
        grad_clip: a gradient clipping object (``rt.nn.ClipGradByGlobalNorm``...).
        multi_precision: update float16 parameters through float32 master weights
            (``rt.amp.decorate(level='O2')`` sets it).
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        parameters: Any = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        multi_precision: bool = False,
        name: str | None = None,
    ):
        self._multi_precision = bool(multi_precision)  # float32 master weights
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _update(self, param, grad, lr, group):
        param._data = descend(param._data, grad, lr)

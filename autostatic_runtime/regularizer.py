"""Weight-decay regularizers (Paddle 2.x ``paddle.regularizer``).

A regularizer adds a term to a parameter's gradient before the optimizer update:
``L2Decay(c)`` adds ``c * param``, ``L1Decay(c)`` adds ``c * sign(param)``. Pass one as an
optimizer's ``weight_decay`` (a float there means ``L2Decay(float)``) or in a parameter's
``ParamAttr(regularizer=...)``, which takes precedence for that parameter.
"""

from __future__ import annotations

from typing import Any

__all__ = ["L1Decay", "L2Decay", "WeightDecayRegularizer"]


class WeightDecayRegularizer:
    """Base class. ``_term(xp, param_array)`` returns the array added to the gradient."""

    def __init__(self, coeff: float = 0.0):
        self._regularization_coeff = float(coeff)

    @property
    def coeff(self) -> float:
        return self._regularization_coeff

    def _term(self, xp: Any, param: Any):
        raise NotImplementedError

    def __call__(self, param, grad, block=None):
        """The regularization term for ``param`` as a Tensor (Paddle's call form)."""
        from autostatic_runtime.backends import backend_of
        from autostatic_runtime.tensor import Tensor

        return Tensor._rebuild(self._term(backend_of(param._data).xp, param._data), None, 0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(coeff={self._regularization_coeff})"


class L2Decay(WeightDecayRegularizer):
    """Adds ``coeff * param`` to the gradient (the gradient of ``coeff/2 * ||param||^2``)."""

    def _term(self, xp, param):
        return param * self._regularization_coeff


class L1Decay(WeightDecayRegularizer):
    """Adds ``coeff * sign(param)`` to the gradient (the gradient of ``coeff * |param|_1``)."""

    def _term(self, xp, param):
        return xp.sign(param) * self._regularization_coeff

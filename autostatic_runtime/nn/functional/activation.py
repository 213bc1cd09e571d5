"""Activation functions (Paddle's ``paddle.nn.functional`` activations).

``softmax``, ``log_softmax`` and ``gelu`` are fused ops (stable kernels, dedicated
gradients); the other activations are compositions of elementwise ops, written so that no
branch of a ``where`` overflows (which would turn gradients into NaN).
"""

from __future__ import annotations

import math
from typing import Any

from autostatic_runtime.ops import elementwise as E
from autostatic_runtime.ops import reduce as R
from autostatic_runtime.ops.registry import Spec, dtype_of, normalize_axis, op, shape_of

__all__ = [
    "relu", "relu6", "relu_", "gelu", "silu", "swish", "leaky_relu", "elu", "celu", "selu",
    "softplus", "softsign", "softshrink", "hardshrink", "tanhshrink", "hardtanh",
    "hardsigmoid", "hardswish", "mish", "sigmoid", "tanh", "log_sigmoid", "thresholded_relu",
    "prelu", "softmax", "log_softmax", "glu",
]  # fmt: skip


def _same_spec(x, *rest, **attrs):
    return Spec(shape_of(x), dtype_of(x))


# ---- fused ops -------------------------------------------------------------------------------


@op("softmax")
class Softmax:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""

    infer = _same_spec

    def kernel(xp, x, axis):
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return e / xp.sum(e, axis=axis, keepdims=True)

    def grad(g, out, x, axis):
        return SoftmaxGrad(g, out, axis=axis)


@op("softmax_grad")
class SoftmaxGrad:
    """``out * (g - sum(g * out))``: the backward of softmax given its output."""

    infer = _same_spec

    def kernel(xp, g, out, axis):
        return out * (g - xp.sum(g * out, axis=axis, keepdims=True))

    def grad(gg, res, g, out, axis):
        s = R.sum(g * out, axis=axis, keepdim=True)
        d_out = gg * (g - s) - g * R.sum(gg * out, axis=axis, keepdim=True)
        return SoftmaxGrad(gg, out, axis=axis), d_out


@op("log_softmax")
class LogSoftmax:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""

    infer = _same_spec

    def kernel(xp, x, axis):
        s = x - xp.max(x, axis=axis, keepdims=True)
        return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))

    def grad(g, out, x, axis):
        return LogSoftmaxGrad(g, out, axis=axis)


@op("log_softmax_grad")
class LogSoftmaxGrad:
    """``g - exp(out) * sum(g)``: the backward of log_softmax given its output."""

    infer = _same_spec

    def kernel(xp, g, out, axis):
        return g - xp.exp(out) * xp.sum(g, axis=axis, keepdims=True)

    def grad(gg, res, g, out, axis):
        p = E.exp(out)
        d_g = gg - R.sum(gg * p, axis=axis, keepdim=True)
        d_out = -gg * p * R.sum(g, axis=axis, keepdim=True)
        return d_g, d_out


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_C = math.sqrt(2.0 / math.pi)


@op("gelu")
class Gelu:
    """``x * Phi(x)`` (``approximate=True``: the tanh approximation)."""

    infer = _same_spec

    def kernel(xp, x, approximate):
        if approximate:
            return 0.5 * x * (1.0 + xp.tanh(_TANH_C * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1.0 + xp.erf(x * _SQRT_HALF))

    def grad(g, out, x, approximate):
        if approximate:
            t = E.tanh(_TANH_C * (x + 0.044715 * x * x * x))
            dt = (1.0 - t * t) * _TANH_C * (1.0 + 0.134145 * x * x)
            return g * (0.5 * (1.0 + t) + 0.5 * x * dt)
        cdf = 0.5 * (1.0 + E.erf(x * _SQRT_HALF))
        pdf = E.exp(x * x * -0.5) * _INV_SQRT_2PI
        return g * (cdf + x * pdf)


@op("softplus")
class Softplus:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold``."""

    infer = _same_spec

    def kernel(xp, x, beta, threshold):
        z = x * beta
        soft = (xp.maximum(z, 0.0) + xp.log1p(xp.exp(-xp.abs(z)))) / beta
        return xp.where(z > threshold, x, soft)

    def grad(g, out, x, beta, threshold):
        z = x * beta
        return E.where(z > threshold, g, g * E.sigmoid(z))


@op("logsigmoid")
class LogSigmoid:
    """``log(sigmoid(x))`` = ``min(x, 0) - log(1 + exp(-|x|))``."""

    infer = _same_spec

    def kernel(xp, x):
        return xp.minimum(x, 0.0) - xp.log1p(xp.exp(-xp.abs(x)))

    def grad(g, out, x):
        return g * E.sigmoid(-x)


# ---- public functions -----------------------------------------------------------------------


def _cast_to(x, dtype):
    return x if dtype is None else E.cast(x, dtype)


def softmax(x: Any, axis: int = -1, dtype: Any = None, name: str | None = None):
    """Softmax along ``axis`` (``x`` is cast to ``dtype`` first when given)."""
    x = E._float_input(_cast_to(x, dtype))
    return Softmax(x, axis=normalize_axis(axis, x.ndim, "softmax"))


def log_softmax(x: Any, axis: int = -1, dtype: Any = None, name: str | None = None):
    """Log of softmax along ``axis``, computed stably."""
    x = E._float_input(_cast_to(x, dtype))
    return LogSoftmax(x, axis=normalize_axis(axis, x.ndim, "log_softmax"))


def gelu(x: Any, approximate: bool = False, name: str | None = None):
    """Gaussian error linear unit; exact (erf) unless ``approximate``."""
    return Gelu(E._float_input(x), approximate=bool(approximate))


relu = E.relu
sigmoid = E.sigmoid
tanh = E.tanh


def relu_(x: Any, name: str | None = None):
    """In-place relu (rebinds ``x`` to the result)."""
    return x._replace(E.relu(x._snapshot()))


def relu6(x: Any, name: str | None = None):
    """``min(max(x, 0), 6)``."""
    return E.clip(x, 0.0, 6.0)


def silu(x: Any, name: str | None = None):
    """``x * sigmoid(x)``."""
    return x * E.sigmoid(x)


def swish(x: Any, name: str | None = None):
    """``x * sigmoid(x)`` (same as silu)."""
    return x * E.sigmoid(x)


def leaky_relu(x: Any, negative_slope: float = 0.01, name: str | None = None):
    """``x`` where positive, else ``negative_slope * x``."""
    return E.where(x > 0, x, x * float(negative_slope))


def _expm1_neg(x):
    """``expm1(x)`` where ``x <= 0`` (0 elsewhere): the negative branch of elu-like functions,
    never overflowing, with the left derivative at 0 (as Paddle)."""
    return E.expm1(E.where(x > 0, 0.0, x))


def elu(x: Any, alpha: float = 1.0, name: str | None = None):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return E.where(x > 0, x, _expm1_neg(x) * float(alpha))


def celu(x: Any, alpha: float = 1.0, name: str | None = None):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    alpha = float(alpha)
    return E.where(x > 0, x, _expm1_neg(x / alpha) * alpha)


def selu(
    x: Any,
    scale: float = 1.0507009873554804934193349852946,
    alpha: float = 1.6732632423543772848170429916717,
    name: str | None = None,
):
    """``scale * elu(x, alpha)``."""
    return E.where(x > 0, x, _expm1_neg(x) * float(alpha)) * float(scale)


def softplus(x: Any, beta: float = 1, threshold: float = 20, name: str | None = None):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""
    return Softplus(E._float_input(x), beta=float(beta), threshold=float(threshold))


def softsign(x: Any, name: str | None = None):
    """``x / (1 + |x|)``."""
    return x / (E.abs(x) + 1.0)


def softshrink(x: Any, threshold: float = 0.5, name: str | None = None):
    """``x - t`` above ``t``, ``x + t`` below ``-t``, else 0."""
    t = float(threshold)
    return E.where(x > t, x - t, E.where(x < -t, x + t, 0.0))


def hardshrink(x: Any, threshold: float = 0.5, name: str | None = None):
    """``x`` where ``|x| > threshold``, else 0."""
    return E.where(E.abs(x) > float(threshold), x, 0.0)


def tanhshrink(x: Any, name: str | None = None):
    """``x - tanh(x)``."""
    return x - E.tanh(x)


def thresholded_relu(x: Any, threshold: float = 1.0, name: str | None = None):
    """``x`` where ``x > threshold``, else 0."""
    return E.where(x > float(threshold), x, 0.0)


def hardtanh(x: Any, min: float = -1.0, max: float = 1.0, name: str | None = None):
    """``x`` clipped to ``[min, max]``."""
    return E.clip(x, float(min), float(max))


def hardsigmoid(x: Any, slope: float = 0.1666667, offset: float = 0.5, name: str | None = None):
    """``clip(slope * x + offset, 0, 1)``."""
    return E.clip(x * float(slope) + float(offset), 0.0, 1.0)


def hardswish(x: Any, name: str | None = None):
    """``x * clip(x + 3, 0, 6) / 6``."""
    return x * E.clip(x + 3.0, 0.0, 6.0) / 6.0


def mish(x: Any, name: str | None = None):
    """``x * tanh(softplus(x))``."""
    return x * E.tanh(softplus(x))


def log_sigmoid(x: Any, name: str | None = None):
    """``log(sigmoid(x))``, computed without overflow."""
    return LogSigmoid(E._float_input(x))


def prelu(x: Any, weight: Any, data_format: str = "NCHW", name: str | None = None):
    """``x`` where positive, else ``weight * x``; ``weight`` has 1 or C (channel) entries."""
    from autostatic_runtime.ops.manipulation import reshape

    if weight.size != 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[-1 if data_format in ("NHWC", "NLC", "NDHWC") else 1] = weight.size
        weight = reshape(weight, shape)
    elif weight.size == 1 and weight.ndim != 0:
        weight = reshape(weight, [])
    return E.where(x > 0, x, x * weight)


def glu(x: Any, axis: int = -1, name: str | None = None):
    """Gated linear unit: split ``x`` in halves ``a, b`` along ``axis``; ``a * sigmoid(b)``."""
    from autostatic_runtime.ops.manipulation import split

    a, b = split(x, 2, axis=axis)
    return a * E.sigmoid(b)

"""Parameter initializers (Paddle 2.x ``paddle.nn.initializer``).

An initializer fills a parameter in place: ``rt.nn.initializer.Normal(0, 0.02)(layer.weight)``;
layers take one through ``ParamAttr(initializer=...)``. Values are drawn from the device
backend's generator, so ``rt.seed`` makes them reproducible.

Fans follow Paddle (``_compute_fans``): a 2-D weight ``[in, out]`` has ``fan_in = shape[0]``,
``fan_out = shape[1]``; a conv weight ``[out, in, k...]`` has ``fan_in = in * prod(k)`` and
``fan_out = out * prod(k)``; a 1-D shape uses its size for both.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autostatic_runtime import backends, dtypes
from autostatic_runtime.tensor import Tensor

__all__ = [
    "Initializer", "Constant", "Normal", "TruncatedNormal", "Uniform", "XavierNormal",
    "XavierUniform", "KaimingNormal", "KaimingUniform", "Assign", "Orthogonal",
    "calculate_gain", "set_global_initializer",
]  # fmt: skip

_global = {"weight": None, "bias": None}


class Initializer:
    """Base class: subclasses implement ``_host(shape, dtype, rng)`` or ``_array``."""

    def __call__(self, param: Tensor, block: Any = None) -> Tensor:
        """Fill ``param`` (keeping its shape, dtype and device) and return it."""
        backend = backends.backend_of(param._data)
        param._data = self._array(tuple(param.shape), param.dtype, backend)
        return param

    forward = __call__

    def _array(self, shape: tuple, dtype: Any, backend: Any = None):
        """A new backend array of ``shape`` and ``dtype`` with this initializer's values."""
        backend = backend or backends.current_backend()
        host = self._host(shape, dtypes.convert_dtype(dtype), backend.rng)
        return backend.from_numpy(np.asarray(host, dtype=str(dtypes.convert_dtype(dtype))))

    def _host(self, shape: tuple, dtype: dtypes.DType, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


def compute_fans(shape: tuple) -> tuple[float, float]:
    """(fan_in, fan_out) of a parameter shape, as Paddle computes them."""
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


class Constant(Initializer):
    """Every element equals ``value``."""

    def __init__(self, value: float = 0.0, name: str | None = None):
        self.value = value

    def _array(self, shape, dtype, backend=None):
        backend = backend or backends.current_backend()
        want = backend.to_dtype(dtypes.convert_dtype(dtype))
        return backend.ns.full(shape, self.value, dtype=want)


class Normal(Initializer):
    """Normal distribution with ``mean`` and standard deviation ``std``."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, name: str | None = None):
        self.mean, self.std = float(mean), float(std)

    def _host(self, shape, dtype, rng):
        return rng.normal(self.mean, self.std, size=shape)


class TruncatedNormal(Initializer):
    """Normal(mean, std) redrawn until inside ``[a, b]`` (default ``mean ± 2 std``, Paddle 2.x)."""

    def __init__(
        self,
        mean: float = 0.0,
        std: float = 1.0,
        a: float | None = None,
        b: float | None = None,
        name: str | None = None,
    ):
        self.mean, self.std = float(mean), float(std)
        self.a = self.mean - 2 * self.std if a is None else float(a)
        self.b = self.mean + 2 * self.std if b is None else float(b)

    def _host(self, shape, dtype, rng):
        out = rng.normal(self.mean, self.std, size=shape)
        bad = (out < self.a) | (out > self.b)
        while bad.any():
            out[bad] = rng.normal(self.mean, self.std, size=int(bad.sum()))
            bad = (out < self.a) | (out > self.b)
        return out


class Uniform(Initializer):
    """Uniform distribution on ``[low, high)``."""

    def __init__(self, low: float = -1.0, high: float = 1.0, name: str | None = None):
        if low > high:
            raise ValueError(f"Uniform: low ({low}) must not exceed high ({high})")
        self.low, self.high = float(low), float(high)

    def _host(self, shape, dtype, rng):
        return rng.uniform(self.low, self.high, size=shape)


class XavierNormal(Initializer):
    """Normal(0, gain * sqrt(2 / (fan_in + fan_out))) (Glorot & Bengio)."""

    def __init__(
        self,
        fan_in: float | None = None,
        fan_out: float | None = None,
        gain: float = 1.0,
        name: str | None = None,
    ):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def _fans(self, shape):
        fi, fo = compute_fans(shape)
        return (
            fi if self.fan_in is None else self.fan_in,
            fo if self.fan_out is None else self.fan_out,
        )

    def _host(self, shape, dtype, rng):
        fi, fo = self._fans(shape)
        return rng.normal(0.0, self.gain * math.sqrt(2.0 / (fi + fo)), size=shape)


class XavierUniform(XavierNormal):
    """Uniform(-x, x) with x = gain * sqrt(6 / (fan_in + fan_out)); Paddle's default weight init."""

    def _host(self, shape, dtype, rng):
        fi, fo = self._fans(shape)
        limit = self.gain * math.sqrt(6.0 / (fi + fo))
        return rng.uniform(-limit, limit, size=shape)


class KaimingNormal(Initializer):
    """Normal(0, gain / sqrt(fan_in)), gain from ``nonlinearity`` (He et al.; Paddle's MSRA)."""

    def __init__(
        self,
        fan_in: float | None = None,
        negative_slope: float = 0.0,
        nonlinearity: str = "relu",
        name: str | None = None,
    ):
        self.fan_in, self.negative_slope, self.nonlinearity = fan_in, negative_slope, nonlinearity

    def _std_parts(self, shape):
        fan_in = compute_fans(shape)[0] if self.fan_in is None else self.fan_in
        return calculate_gain(self.nonlinearity, self.negative_slope), float(fan_in)

    def _host(self, shape, dtype, rng):
        gain, fan_in = self._std_parts(shape)
        return rng.normal(0.0, gain / math.sqrt(fan_in), size=shape)


class KaimingUniform(KaimingNormal):
    """Uniform(-x, x) with x = gain * sqrt(3 / fan_in)."""

    def _host(self, shape, dtype, rng):
        gain, fan_in = self._std_parts(shape)
        limit = gain * math.sqrt(3.0 / fan_in)
        return rng.uniform(-limit, limit, size=shape)


class Assign(Initializer):
    """Copy given values (a NumPy array, nested list, number or Tensor) into the parameter."""

    def __init__(self, value: Any, name: str | None = None):
        self.value = value

    def _host(self, shape, dtype, rng):
        v = self.value.numpy() if isinstance(self.value, Tensor) else np.asarray(self.value)
        if v.size == 1 and int(np.prod(shape)) != 1:
            return np.full(shape, v.reshape(()))
        if int(v.size) != int(np.prod(shape)):
            raise ValueError(
                f"Assign: the value has shape {list(v.shape)} but the parameter has "
                f"shape {list(shape)}"
            )
        return v.reshape(shape)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix over the first dim vs the rest, times ``gain``."""

    def __init__(self, gain: float = 1.0, name: str | None = None):
        self.gain = gain

    def _host(self, shape, dtype, rng):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the parameter needs at least 2 dims, got {list(shape)}")
        rows, cols = shape[0], int(np.prod(shape[1:]))
        flat = rng.normal(0.0, 1.0, size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (Paddle's ``calculate_gain``)."""
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    gains = {
        "sigmoid": 1.0,
        "linear": 1.0,
        "tanh": 5.0 / 3,
        "relu": math.sqrt(2.0),
        "selu": 3.0 / 4,
    }
    if nonlinearity in gains:
        return gains[nonlinearity]
    if nonlinearity.startswith("conv"):
        return 1.0
    raise ValueError(
        f"calculate_gain: unknown nonlinearity {nonlinearity!r}; known: "
        f"{sorted(gains) + ['leaky_relu', 'conv1d', 'conv2d', 'conv3d']}"
    )


def set_global_initializer(
    weight_init: Initializer | None, bias_init: Initializer | None = None
) -> None:
    """Override the layers' default initializers (a ``ParamAttr`` initializer still wins).

    ``set_global_initializer(None)`` restores the defaults.
    """
    for value in (weight_init, bias_init):
        if value is not None and not isinstance(value, Initializer):
            raise TypeError(
                f"set_global_initializer: expected an Initializer or None, got "
                f"{type(value).__name__}"
            )
    _global["weight"], _global["bias"] = weight_init, bias_init


def _global_initializer(is_bias: bool) -> Initializer | None:
    return _global["bias" if is_bias else "weight"]

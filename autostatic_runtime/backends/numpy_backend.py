"""The default CPU backend: NumPy through array-api-compat, with NumPy-native extras."""

from __future__ import annotations

import math

import numpy as np

from autostatic_runtime.backends.base import Backend

ALIGNMENT = 64  # bytes: what XLA's CPU client needs to take a host array without a copy


def aligned_empty(shape: tuple, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts at a multiple of ``ALIGNMENT``
    bytes (NumPy's own allocations are 16-byte aligned). A ``jax.jit`` call on the CPU
    aliases such an array instead of copying it."""
    dtype = np.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    buffer = np.empty(size + ALIGNMENT, np.uint8)
    start = -buffer.__array_interface__["data"][0] % ALIGNMENT
    return buffer[start : start + size].view(dtype).reshape(shape)


class NumpyBackend(Backend):
    name = "numpy"
    device_type = "cpu"

    def __init__(self) -> None:
        super().__init__()
        # the compat wrapper only forwards to np.matmul; skip it on the hottest op
        self.xp.matmul = np.matmul

    def namespace(self):
        import array_api_compat.numpy as xp

        return xp

    def asarray(self, data, dtype=None):
        return np.asarray(data, dtype=None if dtype is None else str(dtype))

    def from_numpy(self, array):
        return array

    def to_numpy(self, array):
        return np.asarray(array)

    def index_add(self, x, axis, index, values):
        out = x.copy()
        key = (slice(None),) * (axis % x.ndim) + (index.reshape(-1),)
        np.add.at(out, key, values)
        return out

    def getitem(self, x, key):
        return x[key]

    def index_put(self, shape, dtype, key, values):
        out = np.zeros(shape, dtype=dtype)
        if _has_int_array(key):
            np.add.at(out, key, values)  # repeated indices accumulate
        else:
            out[key] = values
        return out

    def einsum(self, equation, *operands):
        return np.einsum(equation, *operands)


def _has_int_array(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, np.ndarray) and k.dtype != np.bool_ for k in keys)

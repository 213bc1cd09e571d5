"""The default CPU backend: NumPy through array-api-compat, with NumPy-native extras."""

from __future__ import annotations

import numpy as np

from autostatic_runtime.backends.base import Backend


class NumpyBackend(Backend):
    name = "numpy"
    device_type = "cpu"

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

    def index_put(self, shape, dtype, key, values):
        out = np.zeros(shape, dtype=dtype)
        np.add.at(out, key, values)
        return out

    def einsum(self, equation, *operands):
        return np.einsum(equation, *operands)

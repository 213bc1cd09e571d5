"""The GPU backend: CuPy through array-api-compat. Selected by ``rt.set_device('gpu')``."""

from __future__ import annotations

import numpy as np

from autostatic_runtime.backends.base import Backend


class CupyBackend(Backend):
    name = "cupy"
    device_type = "gpu"

    @staticmethod
    def available() -> bool:
        try:
            import cupy

            return cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:  # no CuPy, no driver, or no device
            return False

    def namespace(self):
        import array_api_compat.cupy as xp

        return xp

    def to_numpy(self, array):
        import cupy

        return cupy.asnumpy(array)

    def synchronize(self) -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()

    def index_add(self, x, axis, index, values):
        import cupyx

        out = x.copy()
        key = (slice(None),) * (axis % x.ndim) + (index.reshape(-1),)
        cupyx.scatter_add(out, key, values)
        return out

    def getitem(self, x, key):
        return x[key]

    def index_put(self, shape, dtype, key, values):
        import cupy
        import cupyx

        out = cupy.zeros(shape, dtype=dtype)
        keys = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, cupy.ndarray) and k.dtype != cupy.bool_ for k in keys):
            cupyx.scatter_add(out, key, values)  # repeated indices accumulate
        else:
            out[key] = values
        return out

    def einsum(self, equation, *operands):
        import cupy

        return cupy.einsum(equation, *operands)

    def from_numpy(self, array: np.ndarray):
        import cupy

        return cupy.asarray(array)

"""A reference backend on ``array_api_strict``: kernels that run here use only the standard.

It exists for the test suite (``rt.set_device('array_api_strict')``) so that no NumPy-only
call slips into shared kernel code; it is slow and CPU-only.
"""

from __future__ import annotations

import numpy as np

from autostatic_runtime.backends.base import Backend


class StrictBackend(Backend):
    name = "array_api_strict"
    device_type = "array_api_strict"

    requires = "array_api_strict"

    def namespace(self):
        import array_api_strict as xp

        return xp

    def asarray(self, data, dtype=None):
        if dtype is None:
            return self.ns.asarray(np.asarray(data))
        return self.ns.asarray(np.asarray(data, dtype=str(dtype)))

    def to_numpy(self, array):
        return np.asarray(array._array) if hasattr(array, "_array") else np.asarray(array)

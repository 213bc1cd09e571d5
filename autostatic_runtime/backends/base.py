"""The Backend interface: an array namespace plus the few extras kernels need.

Kernels receive ``xp``, a flat namespace holding every function of the backend's
array-API namespace *and* the extras below (``xp.index_add``, ``xp.erf``, ``xp.random_normal``...).
The generic extras here are written in array-API calls only; a backend overrides an extra
when it has a faster native form (NumPy's ``np.add.at``, ``np.einsum``...).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.errors import DTypeError

EXTRAS = (
    "index_add",
    "index_put",
    "setitem",
    "erf",
    "einsum",
    "random_uniform",
    "random_normal",
    "random_integers",
    "to_dtype",
)


class Backend:
    """One array library. Subclasses set ``name``, ``device_type`` and ``namespace()``."""

    name = "generic"
    device_type = "cpu"
    default_seed = 0

    def __init__(self) -> None:
        ns = self.namespace()
        self.ns = ns
        self.array_types: tuple[type, ...] = (type(ns.asarray(0.0)),)
        xp = types.SimpleNamespace(**{k: getattr(ns, k) for k in dir(ns) if not k.startswith("_")})
        for extra in EXTRAS:
            setattr(xp, extra, getattr(self, extra))
        xp.backend = self
        self.xp = xp
        self._dtypes = {d: getattr(ns, str(d)) for d in dtypes.ALL if hasattr(ns, str(d))}
        self.seed(Backend.default_seed)

    # -- to implement ------------------------------------------------------------------
    @staticmethod
    def available() -> bool:
        return True

    def namespace(self) -> Any:
        raise NotImplementedError

    # -- data movement -----------------------------------------------------------------
    def to_dtype(self, dtype: dtypes.DType) -> Any:
        """The namespace's dtype object for a canonical DType."""
        found = self._dtypes.get(dtype)
        if found is None:
            raise DTypeError("to_dtype", f"the {self.name} backend has no {dtype} type; "
                             f"it supports {sorted(self._dtypes)}")
        return found

    def asarray(self, data: Any, dtype: dtypes.DType | None = None) -> Any:
        if dtype is None:
            return self.ns.asarray(data)
        return self.ns.asarray(data, dtype=self.to_dtype(dtype))

    def from_numpy(self, array: np.ndarray) -> Any:
        return self.ns.asarray(array)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def synchronize(self) -> None:
        """Wait for queued device work (no-op on the CPU)."""

    # -- random numbers (host generator, moved to the device) ---------------------------
    def seed(self, seed: int) -> None:
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def random_uniform(self, shape, low, high, dtype):
        return self.asarray(self.rng.uniform(low, high, size=tuple(shape)).astype(str(dtype)))

    def random_normal(self, shape, mean, std, dtype):
        return self.asarray(self.rng.normal(mean, std, size=tuple(shape)).astype(str(dtype)))

    def random_integers(self, shape, low, high, dtype):
        return self.asarray(self.rng.integers(low, high, size=tuple(shape)).astype(str(dtype)))

    # -- generic extras, array-API only --------------------------------------------------
    def setitem(self, x, key, value):
        """A copy of ``x`` with ``x[key] = value``."""
        out = self.ns.asarray(x, copy=True)
        out[key] = value
        return out

    def index_add(self, x, axis, index, values):
        """A copy of ``x`` with ``values`` added at integer ``index`` along ``axis``.

        Repeated indices accumulate. Written as a one-hot matrix product.
        """
        ns = self.ns
        n = x.shape[axis]
        index = ns.reshape(index, (-1,))
        onehot = ns.astype(
            ns.equal(ns.reshape(index, (-1, 1)), ns.reshape(ns.arange(n, dtype=index.dtype), (1, -1))),
            x.dtype,
        )
        v = ns.moveaxis(values, axis, -1)
        added = ns.matmul(v, onehot)
        return x + ns.moveaxis(added, -1, axis)

    def index_put(self, shape, dtype, key, values):
        """Zeros of ``shape`` with ``values`` accumulated at ``key`` (the gradient of ``x[key]``).

        Generic form: basic keys (ints, slices, None, Ellipsis) and one integer-array axis.
        """
        ns = self.ns
        out = ns.zeros(shape, dtype=dtype)
        if not any(_is_array_key(k) for k in _as_tuple(key)):
            out[key] = values
            return out
        raise NotImplementedError(f"{self.name}: gradient of advanced indexing")

    def erf(self, x):
        """Error function (Numerical Recipes' erfc Chebyshev fit: |error| < 1.2e-7)."""
        ns = self.ns
        z = ns.abs(x)
        t = 1.0 / (1.0 + 0.5 * z)
        poly = 0.0
        for c in _ERFC_COEFFS:
            poly = poly * t + c
        r = 1.0 - t * ns.exp(poly - z * z)
        return ns.where(x >= 0, r, -r)

    def einsum(self, equation, *operands):
        """einsum through NumPy (the array-API standard has none)."""
        host = [self.to_numpy(o) for o in operands]
        return self.from_numpy(np.asarray(np.einsum(equation, *host)))


def _as_tuple(key):
    return key if isinstance(key, tuple) else (key,)


def _is_array_key(k) -> bool:
    return not (k is None or k is Ellipsis or isinstance(k, (int, slice)))


_ERFC_COEFFS = (
    0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
    -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223,
)  # fmt: skip

"""The Backend interface: an array namespace plus the few extras kernels need.

Kernels receive ``xp``, a flat namespace holding every function of the backend's
array-API namespace *and* the extras below (``xp.index_add``, ``xp.erf``, ``xp.random_normal``...).
``xp.checks_values`` is False while a compiler (XLA) traces kernels: a kernel reads array
values (to check them or to choose a fast path) only when it is True.
The generic extras here are written in array-API calls only; a backend overrides an extra
when it has a faster native form (NumPy's ``np.add.at``, ``np.einsum``...).
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.errors import DTypeError

EXTRAS = (
    "getitem",
    "index_add",
    "index_put",
    "setitem",
    "update",
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
    requires: str | None = None  # the module the backend needs (available() imports it)

    def __init__(self) -> None:
        ns = self.namespace()
        self.ns = ns
        self.array_types: tuple[type, ...] = (type(ns.asarray(0.0)),)
        xp = types.SimpleNamespace(**{k: getattr(ns, k) for k in dir(ns) if not k.startswith("_")})
        for extra in EXTRAS:
            setattr(xp, extra, getattr(self, extra))
        if not hasattr(xp, "linalg") and hasattr(ns, "linalg"):  # an extension, not in dir()
            xp.linalg = ns.linalg
        xp.backend = self
        # False while a compiler traces the kernels (values unknown): kernels then skip the
        # checks and fast paths that read values, and take the general path
        xp.checks_values = True
        self.xp = xp
        self._dtypes = {d: getattr(ns, str(d)) for d in dtypes.ALL if hasattr(ns, str(d))}
        self.seed(Backend.default_seed)

    # -- to implement ------------------------------------------------------------------
    @classmethod
    def available(cls) -> bool:
        if cls.requires is None:
            return True
        try:
            __import__(cls.requires)
        except ImportError:
            return False
        return True

    def namespace(self) -> Any:
        raise NotImplementedError

    # -- data movement -----------------------------------------------------------------
    def to_dtype(self, dtype: dtypes.DType) -> Any:
        """The namespace's dtype object for a canonical DType."""
        found = self._dtypes.get(dtype)
        if found is None:
            raise DTypeError(
                "to_dtype",
                f"the {self.name} backend has no {dtype} type; it supports {sorted(self._dtypes)}",
            )
        return found

    def asarray(self, data: Any, dtype: dtypes.DType | None = None) -> Any:
        if dtype is None:
            return self.ns.asarray(data)
        return self.ns.asarray(data, dtype=self.to_dtype(dtype))

    def from_numpy(self, array: np.ndarray) -> Any:
        return self.ns.asarray(array)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def zeros_for_grad(self, like: Any) -> Any:
        """Zeros shaped like ``like`` for a cleared gradient (``clear_grad()``)."""
        return self.ns.zeros(like.shape, dtype=like.dtype)

    def host_view(self, array: Any) -> np.ndarray | None:
        """For a backend whose arrays a compiled training step leaves in the parameters
        (JAX's): ``array`` as a NumPy array to read, a view when its memory is the host's,
        else a copy. None for every other backend. An eager op mixing such arrays with
        another backend's runs on that backend (``dispatch._one_device``)."""
        return None

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
    def getitem(self, x, key):
        """``x[key]`` for keys holding integer or boolean arrays (NumPy's advanced indexing).

        Generic form: masks become integer arrays (``nonzero``), the basic part of the key is
        applied first, then the integer arrays become one ``take`` over the indexed axes.
        """
        ns = self.ns
        keys = _as_tuple(key)
        if _sole_mask(keys, x.ndim, ns):
            return x[keys[0]]
        items = []
        for k in keys:
            items.extend(ns.nonzero(k) if _is_array_key(k) and k.dtype == ns.bool else (k,))
        items = _expand_ellipsis(items, x.ndim)
        adv = [i for i, k in enumerate(items) if _is_array_key(k) or isinstance(k, int)]
        y = x[tuple(slice(None) if i in adv else k for i, k in enumerate(items))]
        arrays = ns.broadcast_arrays(
            *[
                ns.asarray(items[i], dtype=ns.int64)
                if isinstance(items[i], int)
                else ns.astype(items[i], ns.int64)
                for i in adv
            ]
        )
        lin = ns.zeros(arrays[0].shape, dtype=ns.int64)
        for i, a in zip(adv, arrays, strict=True):
            n = y.shape[i]
            if bool(ns.any((a >= n) | (a < -n))):
                dim = sum(1 for k in items[:i] if k is not None)
                raise IndexError(f"index out of bounds for axis {dim} with size {n}")
            lin = lin * n + ns.where(a < 0, a + n, a)
        rest = [i for i in range(y.ndim) if i not in adv]
        tail = tuple(y.shape[i] for i in rest)
        y = ns.reshape(ns.permute_dims(y, tuple(adv) + tuple(rest)), (-1,) + tail)
        out = ns.reshape(ns.take(y, ns.reshape(lin, (-1,)), axis=0), tuple(lin.shape) + tail)
        first, nb = adv[0], lin.ndim
        if adv == list(range(first, first + len(adv))) and first > 0:  # adjacent: stay in place
            lead = tuple(range(nb, nb + first))
            out = ns.permute_dims(out, lead + tuple(range(nb)) + tuple(range(nb + first, out.ndim)))
        return out

    def setitem(self, x, key, value):
        """A copy of ``x`` with ``x[key] = value`` (the last write wins for repeated indices)."""
        ns = self.ns
        keys = _as_tuple(key)
        if any(_is_array_key(k) for k in keys) and not _sole_mask(keys, x.ndim, ns):
            # generic form: flat positions of the selection, then a one-hot "last write wins"
            n = _size(x.shape)
            lin = self.getitem(ns.reshape(ns.arange(n, dtype=ns.int64), x.shape), key)
            vals = ns.reshape(ns.broadcast_to(ns.asarray(value, dtype=x.dtype), lin.shape), (-1,))
            lin = ns.reshape(lin, (-1, 1))
            m = lin.shape[0]
            if m == 0:
                return ns.asarray(x, copy=True)
            hit = lin == ns.reshape(ns.arange(n, dtype=ns.int64), (1, n))
            order = ns.reshape(ns.arange(m, dtype=ns.int64), (m, 1))
            last = ns.max(ns.where(hit, order, ns.asarray(-1, dtype=ns.int64)), axis=0)
            new = ns.take(vals, ns.where(last >= 0, last, ns.zeros_like(last)), axis=0)
            return ns.reshape(ns.where(last >= 0, new, ns.reshape(x, (-1,))), x.shape)
        if any(k is None for k in keys):
            keys, value = _drop_newaxis(ns, keys, x.ndim, value, x[key].shape, x.dtype)
            key = keys
        out = ns.asarray(x, copy=True)
        out[keys[0] if _sole_mask(keys, x.ndim, ns) else key] = value
        return out

    def update(self, x, key, value):
        """``x[key] = value`` for a basic ``key`` on an array the kernel owns: in place here,
        a new array on backends whose arrays are immutable (JAX). Use the result."""
        x[key] = value
        return x

    def index_add(self, x, axis, index, values):
        """A copy of ``x`` with ``values`` added at integer ``index`` along ``axis``.

        Repeated indices accumulate. Written as a one-hot matrix product.
        """
        ns = self.ns
        n = x.shape[axis]
        index = ns.reshape(index, (-1,))
        onehot = ns.astype(
            ns.equal(
                ns.reshape(index, (-1, 1)), ns.reshape(ns.arange(n, dtype=index.dtype), (1, -1))
            ),
            x.dtype,
        )
        v = ns.moveaxis(values, axis, -1)
        added = ns.matmul(v, onehot)
        return x + ns.moveaxis(added, -1, axis)

    def index_put(self, shape, dtype, key, values):
        """Zeros of ``shape`` with ``values`` accumulated at ``key`` (the gradient of ``x[key]``).

        Generic form: basic keys and masks directly; integer arrays through ``index_add``.
        """
        ns = self.ns
        keys = _as_tuple(key)
        if not any(_is_array_key(k) for k in keys) or _sole_mask(keys, len(shape), ns):
            if any(k is None for k in keys):
                keys, values = _drop_newaxis(ns, keys, len(shape), values, values.shape, dtype)
                key = keys
            out = ns.zeros(shape, dtype=dtype)
            out[keys[0] if _sole_mask(keys, len(shape), ns) else key] = values
            return out
        n = _size(shape)
        lin = self.getitem(ns.reshape(ns.arange(n, dtype=ns.int64), shape), key)
        vals = ns.reshape(ns.broadcast_to(values, lin.shape), (-1,))
        flat = self.index_add(ns.zeros((n,), dtype=dtype), 0, ns.reshape(lin, (-1,)), vals)
        return ns.reshape(flat, shape)

    def erf(self, x):
        """Error function: its Taylor series below |x| = 0.5 (exact to ~1e-10, and odd, so
        smooth through 0), Numerical Recipes' erfc Chebyshev fit above (|error| < 1.2e-7)."""
        ns = self.ns
        z = ns.abs(x)
        t = 1.0 / (1.0 + 0.5 * z)
        poly = 0.0
        for c in _ERFC_COEFFS:
            poly = poly * t + c
        r = 1.0 - t * ns.exp(poly - z * z)
        x2 = x * x
        series = 0.0
        for c in _ERF_TAYLOR:
            series = series * x2 + c
        return ns.where(z < 0.5, series * x, ns.where(x >= 0, r, -r))

    def einsum(self, equation, *operands):
        """einsum through NumPy (the array-API standard has none)."""
        host = [self.to_numpy(o) for o in operands]
        return self.from_numpy(np.asarray(np.einsum(equation, *host)))


def _as_tuple(key):
    return key if isinstance(key, tuple) else (key,)


def _is_array_key(k) -> bool:
    return not (k is None or k is Ellipsis or isinstance(k, (int, slice)))


def _sole_mask(keys, ndim, ns) -> bool:
    """True for ``(mask,)`` or ``(mask, ...)`` with a boolean mask covering every axis."""
    k = keys[0] if keys else None
    return (
        (len(keys) == 1 or (len(keys) == 2 and keys[1] is Ellipsis))
        and _is_array_key(k)
        and k.dtype == ns.bool
        and k.ndim == ndim
    )


def _drop_newaxis(ns, keys, ndim, value, selected_shape, dtype):
    """A basic key without None, and ``value`` (broadcast to the selection) to match it.

    The standard's ``__setitem__`` takes no None; in a basic key each None and each slice
    makes one dim of the selection, in order, so the None dims are known positions.
    """
    value = ns.broadcast_to(ns.asarray(value, dtype=dtype), tuple(selected_shape))
    dims = [k for k in _expand_ellipsis(list(keys), ndim) if not isinstance(k, int)]
    kept = tuple(d for d, k in zip(value.shape, dims, strict=True) if k is not None)
    return tuple(k for k in keys if k is not None), ns.reshape(value, kept)


def _expand_ellipsis(items, ndim):
    """``items`` with the Ellipsis (or a trailing one) replaced by full slices."""
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    fill = [slice(None)] * (ndim - used)
    for i, k in enumerate(items):
        if k is Ellipsis:
            return items[:i] + fill + [k for k in items[i + 1 :] if k is not Ellipsis]
    return items + fill


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# 2/sqrt(pi) * sum (-1)^n x^(2n) / (n! (2n+1)), highest power first (Horner in x^2)
_ERF_TAYLOR = tuple(
    1.1283791670955126 * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(8)
)[::-1]
_ERFC_COEFFS = (
    0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
    -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223,
)  # fmt: skip

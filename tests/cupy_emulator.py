"""A CPU stand-in for CuPy, to run the GPU path's code where there is no GPU.

``emulated_cupy()`` puts modules named ``cupy``, ``cupyx`` and ``array_api_compat.cupy`` in
``sys.modules`` for the duration of a ``with`` block, so ``rt.set_device("gpu")`` selects the
real ``CupyBackend`` and every ``name == "cupy"`` branch of the runtime runs. Their arrays
(``DeviceArray``) hold NumPy arrays and refuse what CuPy's refuse, which is where code written
for NumPy breaks on a GPU:

- implicit conversion to NumPy (``np.asarray(x)``, ``np.array(x)``, a NumPy array's
  ``__setitem__`` given one): ``TypeError``, as CuPy's ``__array__`` raises;
- a NumPy array among the operands of a device op (``x + np_array``, ``xp.where(m, x, np_a)``):
  ``TypeError`` (NumPy scalars and Python numbers are accepted, as CuPy accepts them);
- any op result is a device array, a reduction to a 0-d device array (never a NumPy scalar).

Explicit transfers are what CuPy has: ``cupy.asarray(np_array)``, ``cupy.asnumpy(x)``,
``x.get()``. The modules and the arrays have only the names CuPy's have
(``cupy_names.json``, read from CuPy 14.2 and array-api-compat 1.16 with ``dir()``), so a
NumPy function CuPy lacks is an ``AttributeError`` here too. It is no GPU: speed, float16
arithmetic and asynchrony are NumPy's.
"""

from __future__ import annotations

import contextlib
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

NAMES = json.loads((Path(__file__).parent / "cupy_names.json").read_text())
_ARRAY_NAMES = frozenset(NAMES["cupy.ndarray"])

_MIXED = (
    "Unsupported type <class 'numpy.ndarray'>: a NumPy array among the operands of a device "
    "operation (CuPy refuses it; move it with cupy.asarray)"
)
_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
    "a NumPy array explicitly."
)


def _raw(value: Any) -> Any:
    """The NumPy data of device arrays inside ``value``; a NumPy array there is an error."""
    if isinstance(value, DeviceArray):
        return value._a
    if isinstance(value, np.ndarray):
        raise TypeError(_MIXED)
    if (
        isinstance(value, (list, tuple))
        and value
        and any(isinstance(v, (DeviceArray, np.ndarray, list, tuple)) for v in value)
    ):
        return type(value)(_raw(v) for v in value)
    return value


def _wrap(value: Any) -> Any:
    """Device arrays for the NumPy arrays and scalars an operation returned."""
    if isinstance(value, np.ndarray):
        return DeviceArray(value)
    if isinstance(value, np.generic):
        return DeviceArray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _device_call(fn):
    def call(*args, **kwargs):
        return _wrap(fn(*_raw(args), **{k: _raw(v) for k, v in kwargs.items()}))

    call.__name__ = getattr(fn, "__name__", "call")
    call.__wrapped__ = fn
    return call


class DeviceArray(NDArrayOperatorsMixin):
    """An array "on the device": NumPy data that takes part only in device operations."""

    __slots__ = ("_a",)
    __array_priority__ = 100
    __module__ = "cupy"  # as ``cupy.ndarray`` says (the runtime finds its backend by it)

    def __init__(self, data: np.ndarray):
        self._a = data

    # -- what CuPy refuses ----------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        kwargs = {k: _raw(v) for k, v in kwargs.items()}
        if out is not None:
            kwargs["out"] = tuple(_raw(o) for o in out)
        result = getattr(ufunc, method)(*_raw(inputs), **kwargs)
        if out is not None and len(out) == 1 and isinstance(out[0], DeviceArray):
            return out[0]
        return _wrap(result)

    def __array_function__(self, func, types_, args, kwargs):
        return _wrap(func(*_raw(args), **{k: _raw(v) for k, v in kwargs.items()}))

    # -- what CuPy has ----------------------------------------------------------------------
    def get(self) -> np.ndarray:
        return self._a.copy()

    @property
    def device(self):
        return _Device(0)

    def __getattr__(self, name: str):
        if name not in _ARRAY_NAMES:  # (NumPy's buffer protocols among them)
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        attr = getattr(self._a, name)
        return _device_call(attr) if callable(attr) else _wrap(attr)

    def __getitem__(self, key):
        return _wrap(self._a[_index(key)])

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray):  # a host array is copied in, as CuPy does
            value = value.copy()
        self._a[_index(key)] = _raw(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (_wrap(row) for row in self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __repr__(self) -> str:
        return "device_" + repr(self._a)

    def __copy__(self):
        return DeviceArray(self._a.copy())

    def __deepcopy__(self, memo):
        return DeviceArray(self._a.copy())

    def __reduce__(self):
        return (DeviceArray, (self._a,))

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    __hash__ = None  # type: ignore[assignment]


def _index(key: Any) -> Any:
    """An index with device arrays in it (NumPy index arrays are taken, as CuPy takes them)."""
    if isinstance(key, DeviceArray):
        return key._a
    if isinstance(key, tuple):
        return tuple(k._a if isinstance(k, DeviceArray) else k for k in key)
    return key


class _Device:
    def __init__(self, index: int = 0):
        self.id = index

    def use(self) -> None:
        if self.id != 0:
            raise RuntimeError(f"cudaErrorInvalidDevice: device {self.id} (one emulated device)")

    def synchronize(self) -> None:
        pass

    def __eq__(self, other) -> bool:
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("device", self.id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id} (emulated)>"


class _Stream:
    def synchronize(self) -> None:
        pass


def _host_to_device(data, dtype=None, copy=None, **kwargs):
    if isinstance(data, DeviceArray):
        out = data._a if dtype is None else data._a.astype(dtype, copy=False)
        return DeviceArray(out.copy() if copy else out)
    return DeviceArray(np.array(_raw_nested(data), dtype=dtype, copy=True))


def _raw_nested(data):
    """Python sequences of device scalars (``cupy.asarray([x0, x1])``) taken element-wise."""
    if isinstance(data, DeviceArray):
        return data._a
    if isinstance(data, (list, tuple)):
        return [_raw_nested(v) for v in data]
    return data


def _asnumpy(a, stream=None, order="C", out=None):
    if isinstance(a, DeviceArray):
        return a._a.copy()
    return np.asarray(a)


def _namespace(name: str, source: Any, transfers: bool) -> types.ModuleType:
    """A module holding ``source``'s public functions as device operations: those CuPy's
    module ``name`` has."""
    module = types.ModuleType(name)
    for attr in NAMES[name]:
        if not hasattr(source, attr):
            continue
        value = getattr(source, attr)
        if isinstance(value, type) or not callable(value):
            setattr(module, attr, value)
        else:
            setattr(module, attr, _device_call(value))
    if transfers:
        module.asarray = _host_to_device
        module.array = _host_to_device
    module.ndarray = DeviceArray
    return module


def _cupy_modules() -> dict[str, types.ModuleType]:
    import array_api_compat.numpy as compat_np

    cupy = _namespace("cupy", np, transfers=True)
    cupy.__version__ = "emulated"
    cupy.asnumpy = _asnumpy
    cupy.bool_ = np.bool_
    cupy.linalg = _namespace("cupy.linalg", np.linalg, transfers=False)
    cupy.fft = _namespace("cupy.fft", np.fft, transfers=False)
    cupy.random = _namespace("cupy.random", np.random, transfers=False)
    cuda = types.ModuleType("cupy.cuda")
    cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    cuda.Device = _Device
    cuda.get_current_stream = _Stream
    cupy.cuda = cuda

    cupyx = types.ModuleType("cupyx")

    def scatter_add(a, slices, value):
        np.add.at(_raw(a), _index(slices), value._a if isinstance(value, DeviceArray) else value)

    cupyx.scatter_add = scatter_add

    compat = _namespace("array_api_compat.cupy", compat_np, transfers=True)
    compat.linalg = _namespace("array_api_compat.cupy.linalg", compat_np.linalg, transfers=False)
    compat.fft = _namespace("array_api_compat.cupy.fft", compat_np.fft, transfers=False)
    return {
        "cupy": cupy,
        "cupy.cuda": cuda,
        "cupy.linalg": cupy.linalg,
        "cupy.fft": cupy.fft,
        "cupy.random": cupy.random,
        "cupyx": cupyx,
        "array_api_compat.cupy": compat,
    }


@contextlib.contextmanager
def emulated_cupy() -> Iterator[types.ModuleType]:
    """Within the block, ``rt.set_device("gpu")`` runs on the emulated CuPy; the registry's
    backends and the device are restored after."""
    import array_api_compat

    import autostatic_runtime as rt
    from autostatic_runtime import backends

    saved_modules = {k: sys.modules.get(k) for k in _cupy_modules_names()}
    saved_attr = getattr(array_api_compat, "cupy", None)
    saved_registry = (
        dict(backends._instances),
        dict(backends._by_array_type),
        list(backends._current),
        list(backends._device),
    )
    modules = _cupy_modules()
    sys.modules.update(modules)
    array_api_compat.cupy = modules["array_api_compat.cupy"]
    try:
        yield modules["cupy"]
    finally:
        rt.set_device("cpu")
        for name, module in saved_modules.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        if saved_attr is None:
            with contextlib.suppress(AttributeError):
                del array_api_compat.cupy
        else:
            array_api_compat.cupy = saved_attr
        instances, by_type, current, device = saved_registry
        backends._instances.clear()
        backends._instances.update(instances)
        backends._by_array_type.clear()
        backends._by_array_type.update(by_type)
        backends._current[:] = current
        backends._device[:] = device


def _cupy_modules_names() -> tuple[str, ...]:
    return (
        "cupy",
        "cupy.cuda",
        "cupy.linalg",
        "cupy.fft",
        "cupy.random",
        "cupyx",
        "array_api_compat.cupy",
    )

"""Backend registry and device selection.

Built-in backends: ``numpy`` (device ``cpu``, the default), ``cupy`` (device ``gpu``),
``array_api_strict`` (a reference backend for tests) and ``jax`` (``jax.numpy``: the XLA
block compiler's namespace; optional, ``pip install 'autostatic[xla]'``). Third parties add
one through the ``autostatic_runtime.backends`` entry-point group, naming a ``Backend``
subclass.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from autostatic_runtime.backends.base import Backend
from autostatic_runtime.errors import DeviceError, user_location

__all__ = ["Backend", "set_device", "get_device", "get_backend", "backend_of", "list_backends"]

_BUILTIN = {
    "numpy": "autostatic_runtime.backends.numpy_backend:NumpyBackend",
    "cupy": "autostatic_runtime.backends.cupy_backend:CupyBackend",
    "array_api_strict": "autostatic_runtime.backends.strict_backend:StrictBackend",
    "jax": "autostatic_runtime.backends.jax_backend:JaxBackend",
}
_classes: dict[str, str | type[Backend]] = dict(_BUILTIN)
_instances: dict[str, Backend] = {}
_by_array_type: dict[type, Backend] = {}
_discovered = False


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    for ep in entry_points(group="autostatic_runtime.backends"):
        _classes.setdefault(ep.name, ep.value)


def register_backend(cls: type[Backend]) -> None:
    """Register a Backend subclass under ``cls.name`` (entry points do this automatically)."""
    _classes[cls.name] = cls


def list_backends() -> list[str]:
    """Names of the registered backends (built-in and from entry points)."""
    _discover()
    return sorted(_classes)


def _load_class(spec: str | type[Backend]) -> type[Backend]:
    if isinstance(spec, type):
        return spec
    module, _, attr = spec.partition(":")
    mod = __import__(module, fromlist=[attr])
    return getattr(mod, attr)


def get_backend(name: str) -> Backend:
    """The backend instance called ``name``, created on first use."""
    backend = _instances.get(name)
    if backend is not None:
        return backend
    _discover()
    if name not in _classes:
        raise DeviceError(
            "set_device", f"no backend {name!r}; known: {list_backends()}", user_location()
        )
    cls = _load_class(_classes[name])
    if not cls.available():
        hint = {
            "cupy": " (pip install 'autostatic[gpu]' on a machine with CUDA)",
            "jax": " (pip install 'autostatic[xla]')",
        }.get(name, "")
        raise DeviceError(
            "set_device", f"backend {name!r} is not available here{hint}", user_location()
        )
    backend = cls()
    _instances[name] = backend
    for t in backend.array_types:
        _by_array_type[t] = backend
    return backend


_current: list[Backend] = []
_device: list[str] = ["cpu"]


def current_backend() -> Backend:
    """The backend new tensors are created on."""
    if not _current:
        _current.append(get_backend("numpy"))
    return _current[0]


def backend_of(array: object) -> Backend:
    """The backend that owns ``array`` (by its type)."""
    b = _by_array_type.get(type(array))
    if b is None:
        return current_backend() if not _by_array_type else _find_by_type(array)
    return b


# the backend of an array library's arrays by the library's module, for one not created yet
# (a CuPy array given while the current device is the CPU)
_BY_MODULE = {"cupy": "cupy", "jax": "jax", "jaxlib": "jax", "array_api_strict": "array_api_strict"}


def _find_by_type(array: object) -> Backend:
    for t, b in list(_by_array_type.items()):
        if isinstance(array, t):
            _by_array_type[type(array)] = b
            return b
    name = _BY_MODULE.get(type(array).__module__.partition(".")[0])
    if name is not None and name not in _instances and _load_class(_classes[name]).available():
        backend = get_backend(name)
        if isinstance(array, backend.array_types):
            return backend
    return current_backend()


def set_device(device: str) -> str:
    """Select where new tensors live: ``'cpu'``, ``'gpu'``/``'gpu:0'``, or a backend's name.

    Returns the canonical device string. Ops run on the device of their inputs.
    """
    kind, _, index = str(device).partition(":")
    kind = kind.lower()
    if kind == "cpu":
        name = "numpy"
    elif kind in ("gpu", "cuda"):
        name = "cupy"
    else:
        _discover()
        name = kind
    backend = get_backend(name)
    if index and name == "cupy":
        import cupy

        cupy.cuda.Device(int(index)).use()
    _current[:] = [backend]
    _device[0] = "cpu" if name == "numpy" else ("gpu:" + (index or "0") if name == "cupy" else name)
    return _device[0]


def get_device() -> str:
    """The current device string: ``'cpu'``, ``'gpu:0'``, or a third-party backend's name."""
    return _device[0]


def seed(value: int) -> None:
    """Seed the random generators of every backend (created now or later)."""
    from autostatic_runtime.backends import base

    base.Backend.default_seed = int(value)
    for b in _instances.values():
        b.seed(int(value))

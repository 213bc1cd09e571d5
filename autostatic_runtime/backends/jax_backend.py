"""A JAX backend: ``jax.numpy`` as the kernels' array namespace (the XLA block compiler's).

``jax.numpy`` follows the array-API standard, so the shared kernels run on it unchanged; the
extras NumPy does in place (``setitem``, ``update``, ``index_put``, ``index_add``) are
functional ``.at[...]`` updates here. Arrays are 64-bit only inside ``x64()`` (JAX truncates
float64 and int64 to 32 bits by default); the XLA compiler traces and calls its functions with
it on (``x64_switch``), so programs keep the dtypes they have on NumPy without changing JAX's
default for other code.

Random numbers come from the host generator, as on the other backends; a compiled program
never draws them (the XLA compiler has no lowering for random ops, see ``static/xla``).
"""

from __future__ import annotations

import functools

import numpy as np

from autostatic_runtime.backends.base import Backend


def x64():
    """A new context in which JAX keeps float64/int64 (a thread-local JAX setting)."""
    import jax

    scoped = getattr(jax, "enable_x64", None)
    if scoped is None:  # JAX before 0.4.36
        from jax.experimental import enable_x64

        return enable_x64()
    return scoped(True)


def x64_switch() -> tuple:
    """``(on, off)``: ``token = on()`` turns JAX's 64-bit mode on for the calling thread and
    ``off(token)`` restores what was there, as entering and leaving ``x64()`` would, without
    a context object (~0.1 µs instead of ~0.35 µs around each compiled call). With a JAX
    whose setting is not a plain thread-local state, both go through ``x64()``."""
    import jax

    try:
        from jax._src.config import enable_x64 as state

        swap, restore = state.swap_local, state.set_local
        plain = getattr(state, "_update_thread_local_hook", None) is None
    except (ImportError, AttributeError):
        plain = False
    if plain and getattr(jax, "enable_x64", None) is not None:
        return functools.partial(swap, True), restore

    def on_context():
        cm = x64()
        cm.__enter__()
        return cm

    def off_context(cm):
        cm.__exit__(None, None, None)

    return on_context, off_context


class JaxBackend(Backend):
    name = "jax"
    device_type = "cpu"

    requires = "jax"

    def __init__(self) -> None:
        with x64():
            super().__init__()
        import jax

        self.xp.erf = jax.scipy.special.erf
        self.xp.einsum = self.ns.einsum

    def namespace(self):
        import jax.numpy as jnp

        return jnp

    def asarray(self, data, dtype=None):
        with x64():
            return self.ns.asarray(data, dtype=None if dtype is None else self.to_dtype(dtype))

    def from_numpy(self, array):
        import jax

        with x64():
            return jax.device_put(array)

    def to_numpy(self, array):
        return np.asarray(array)

    def zeros_for_grad(self, like):
        """On the CPU, NumPy zeros (what a compiled step's parameter gets after
        ``clear_grad()``: made without compiling a fill for each shape)."""
        if _on_cpu(like):
            return np.zeros(like.shape, dtype=np.dtype(str(like.dtype)))
        return self.ns.zeros(like.shape, dtype=like.dtype)

    def host_view(self, array):
        return np.asarray(array)  # a view on JAX's CPU device, a copy from an accelerator

    def synchronize(self) -> None:
        import jax

        jax.effects_barrier()

    def getitem(self, x, key):
        return x[key]

    def setitem(self, x, key, value):
        return self.ns.asarray(x).at[key].set(value)  # (x may be a folded NumPy constant)

    def update(self, x, key, value):
        return self.ns.asarray(x).at[key].set(value)

    def index_put(self, shape, dtype, key, values):
        return self.ns.zeros(shape, dtype=dtype).at[key].add(values)  # repeats accumulate

    def index_add(self, x, axis, index, values):
        key = (slice(None),) * (axis % x.ndim) + (self.ns.reshape(index, (-1,)),)
        return self.ns.asarray(x).at[key].add(values)


def _on_cpu(array) -> bool:
    """Whether a JAX array lives in the host's memory (JAX's CPU device)."""
    devices = array.devices() if hasattr(array, "devices") else ()
    return all(d.platform == "cpu" for d in devices)

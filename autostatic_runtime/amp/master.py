"""Float32 master weights of low-precision parameters (``decorate(level='O2')``).

An optimizer with ``_multi_precision`` updates, for each float16 parameter, a float32 copy
(its master weight, with its own float32 accumulators) from the gradient cast to float32,
and writes the result back into the parameter cast to float16: small updates are not lost
to float16 rounding. The master is a persistable tensor of the optimizer
(``opt._master_weights``), so a compiled training step reads and writes it as it does the
optimizer's other state.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.tensor import Tensor

__all__ = ["master_weight", "master_state", "load_master_state"]

_LOW = ("float16", "bfloat16")


def master_weight(opt: Any, param: Any) -> Any:
    """The float32 stand-in ``opt`` updates for ``param`` (a parameter, or a ``StaticParam``
    while update ops are appended), or None when ``param`` is updated itself."""
    from autostatic_runtime.optimizer.static_update import StaticParam, is_static

    if not is_static(param):
        return _master(opt, param) if param.dtype in _LOW else None
    eager = param.eager
    if eager is None or eager.dtype not in _LOW:
        return None
    from autostatic_runtime.static.builder import capture

    master = _master(opt, eager)
    return StaticParam(capture(param.var.block.program, master), master)


def _master(opt: Any, param: Tensor) -> Tensor:
    masters = opt.__dict__.setdefault("_master_weights", {})
    found = masters.get(id(param))
    if found is None:
        from autostatic_runtime.backends import backend_of

        data = param._data
        backend = backend_of(data)
        loaded = opt.__dict__.get("_master_weights_loaded", {}).pop(param.name, None)
        if loaded is not None:  # from set_state_dict before the first update
            value = backend.from_numpy(_float32_host(loaded, param))
        else:
            value = backend.xp.astype(data, "float32")
        found = Tensor._rebuild(value, None, 0)
        found.name = param.name  # accumulators keep Paddle's names: <param>_moment1_0
        found.persistable = True
        for attr in ("optimize_attr", "regularizer", "need_clip"):
            if hasattr(param, attr):
                setattr(found, attr, getattr(param, attr))
        masters[id(param)] = found
    return found


def master_state(opt: Any) -> dict[str, Tensor]:
    """Paddle's ``state_dict()['master_weights']``: parameter name -> its float32 master."""
    masters = opt.__dict__.get("_master_weights") or {}
    return {m.name: Tensor._rebuild(m._data, None, 0) for m in masters.values()}


def load_master_state(opt: Any, state: Any) -> None:
    """Load ``state_dict()['master_weights']``: into the masters that exist, the others kept
    until their parameter's first update."""
    if not state:
        return
    pending = dict(state)
    for master in (opt.__dict__.get("_master_weights") or {}).values():
        value = pending.pop(master.name, None)
        if value is not None:
            from autostatic_runtime.backends import backend_of

            master._data = backend_of(master._data).from_numpy(_float32_host(value, master))
    opt._master_weights_loaded = pending


def _float32_host(value: Any, like: Tensor):
    import numpy as np

    host = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
    if tuple(host.shape) != tuple(like._data.shape):
        raise ValueError(
            f"set_state_dict: master weight '{like.name}' has shape {list(host.shape)} but "
            f"its parameter has shape {list(like._data.shape)}"
        )
    return np.array(host, dtype="float32")

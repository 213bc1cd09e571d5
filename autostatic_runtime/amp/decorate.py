"""``rt.amp.decorate``: prepare models and optimizers for pure low-precision training (O2).

At level 'O2', on a device that computes in ``dtype`` (``autocast.is_float16_supported``),
the floating parameters and buffers of every layer become ``dtype``, except those of batch
norms (always float32) and, for float16, of layer and instance norms; the optimizers keep a
float32 master copy of each low-precision parameter (``master.py``) unless
``master_weight=False``. At 'O1', or on a device without mixed precision in ``dtype`` (the
CPU), models and optimizers come back unchanged, as in Paddle.
"""

from __future__ import annotations

import functools
from typing import Any

from autostatic_runtime.amp.autocast import _supports, check_dtype, check_level
from autostatic_runtime.autograd import no_grad
from autostatic_runtime.tensor import Tensor

__all__ = ["decorate", "amp_decorate"]

_SAVE_DTYPES = (None, "float16", "bfloat16", "float32", "float64")


def _as_list(value: Any, kind: type, argument: str, what: str) -> tuple[list, bool]:
    if isinstance(value, kind):
        return [value], False
    if isinstance(value, (list, tuple)) and all(isinstance(v, kind) for v in value):
        return list(value), True
    raise TypeError(
        f"decorate: {argument} must be {what} or a list of them, not {type(value).__name__}"
    )


def _keeps_float32(layer: Any, dtype: str, excluded: tuple) -> bool:
    from autostatic_runtime.nn.layer import norm

    if any(layer is e or (isinstance(e, type) and isinstance(layer, e)) for e in excluded):
        return True
    if isinstance(layer, norm._BatchNormBase):
        return True
    return dtype == "float16" and isinstance(layer, (norm.LayerNorm, norm._InstanceNormBase))


def _cast_layer(layer: Any, dtype: str) -> None:
    from autostatic_runtime.backends import backend_of

    for store in (layer._parameters, layer._buffers):
        for t in store.values():
            if t is not None and t.dtype == "float32":
                t._data = backend_of(t._data).xp.astype(t._data, dtype)
    layer._dtype = dtype


def _excluded(excluded_layers: Any) -> tuple:
    from autostatic_runtime.nn import Layer

    if excluded_layers is None:
        return ()
    items = excluded_layers if isinstance(excluded_layers, (list, tuple)) else [excluded_layers]
    for item in items:
        if not (isinstance(item, Layer) or (isinstance(item, type) and issubclass(item, Layer))):
            raise TypeError(
                "decorate: excluded_layers must be a Layer, a Layer class or a list of them, "
                f"not {item!r}"
            )
    found: list = []
    for item in items:  # a layer instance excludes its sublayers too
        found += item.sublayers(include_self=True) if isinstance(item, Layer) else [item]
    return tuple(found)


def decorate(
    models: Any,
    optimizers: Any = None,
    level: str = "O1",
    dtype: str = "float16",
    master_weight: bool | None = None,
    save_dtype: str | None = None,
    master_grad: bool = False,
    excluded_layers: Any = None,
) -> Any:
    """Paddle's ``paddle.amp.decorate``.

    Args:
        models: a Layer or a list of Layers.
        optimizers: an Optimizer, a list of them, or None.
        level: 'O1' (nothing changes) or 'O2' (parameters in ``dtype``).
        dtype: 'float16' or 'bfloat16'.
        master_weight: at O2, whether optimizers update float32 master weights (None: yes).
        save_dtype: 'float16', 'bfloat16', 'float32', 'float64' or None: at O2, the
            dtype ``state_dict()`` gives the floating parameters and buffers in (so
            ``rt.save`` writes them so); the parameters keep theirs.
        master_grad: accepted for compatibility (gradients keep the parameters' dtype).
        excluded_layers: Layers (with their sublayers) or Layer classes kept in float32.

    Returns:
        ``models`` (and ``optimizers`` when given), in the form they were passed.
    """
    from autostatic_runtime.nn import Layer
    from autostatic_runtime.optimizer import Optimizer

    level = check_level(level, ("O1", "O2"), "decorate")
    dtype = check_dtype(dtype, "decorate")
    if master_weight not in (None, True, False):
        raise TypeError(
            f"decorate: master_weight must be None, True or False, not {master_weight!r}"
        )
    if save_dtype not in _SAVE_DTYPES:
        raise ValueError(
            f"decorate: save_dtype must be one of {list(_SAVE_DTYPES)}, not {save_dtype!r}"
        )
    model_list, _ = _as_list(models, Layer, "models", "a Layer")
    opt_list: list = []
    if optimizers is not None:
        opt_list, _ = _as_list(optimizers, Optimizer, "optimizers", "an Optimizer")
    excluded = _excluded(excluded_layers)
    result = models if optimizers is None else (models, optimizers)
    if level == "O1" or not _supports(dtype):
        return result
    for model in model_list:
        for layer in model.sublayers(include_self=True):
            if not _keeps_float32(layer, dtype, excluded):
                _cast_layer(layer, dtype)
    for opt in opt_list:
        opt._multi_precision = master_weight is not False
    if save_dtype is not None:
        for model in model_list:
            for layer in model.sublayers(include_self=True):
                layer.register_state_dict_hook(functools.partial(_cast_state, save_dtype))
    return result


def _cast_state(dtype: str, state: dict) -> dict:
    """``state`` with its floating tensors cast to ``dtype`` (new tensors: the layer's own
    keep their dtype)."""
    from autostatic_runtime.ops.elementwise import cast

    for key, value in state.items():
        if isinstance(value, Tensor) and value.dtype.is_floating and str(value.dtype) != dtype:
            with no_grad():
                cast_value = cast(value, dtype)
            cast_value.name = value.name
            state[key] = cast_value
    return state


amp_decorate = decorate

"""Trainable parameters: ``Parameter``, ``ParamAttr`` and ``create_parameter`` (Paddle 2.x).

A ``Parameter`` is an eager ``Tensor`` that autograd tracks by default
(``stop_gradient=False``), is persistable, and carries what optimizers read: a per-parameter
learning-rate multiplier (``optimize_attr['learning_rate']``), an optional ``regularizer``
that takes precedence over the optimizer's ``weight_decay``, and ``need_clip``.

    w = rt.create_parameter([3, 4], "float32")             # Xavier-uniform values
    b = rt.create_parameter([4], "float32", is_bias=True)  # zeros
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.tensor import Tensor

__all__ = ["Parameter", "ParamAttr", "create_parameter", "unique_name"]

_name_counters: defaultdict[str, itertools.count] = defaultdict(itertools.count)


def unique_name(key: str) -> str:
    """``key_0``, ``key_1``, ... (Paddle's ``unique_name.generate``)."""
    return f"{key}_{next(_name_counters[key])}"


class Parameter(Tensor):
    """A trainable tensor owned by a layer (Paddle's ``EagerParamBase``).

    Args:
        data: initial values (array-like or Tensor).
        dtype: element type (default: that of ``data``).
        name: unique name; generated when None.
        trainable: False makes it ``stop_gradient=True`` (optimizers skip it).
        optimize_attr: ``{'learning_rate': multiplier}`` read by optimizers.
        regularizer: a ``rt.regularizer`` object overriding the optimizer's weight decay.
        need_clip: whether gradient clipping applies to this parameter.
    """

    def __init__(
        self,
        data: Any,
        dtype: Any = None,
        name: str | None = None,
        trainable: bool = True,
        optimize_attr: dict | None = None,
        regularizer: Any = None,
        need_clip: bool = True,
        do_model_average: bool | None = None,
    ):
        super().__init__(
            data,
            dtype=dtype,
            stop_gradient=not trainable,
            name=name or unique_name("create_parameter"),
        )
        self.persistable = True
        self.optimize_attr = dict(optimize_attr or {"learning_rate": 1.0})
        self.regularizer = regularizer
        self.need_clip = need_clip
        self.do_model_average = do_model_average
        self.is_distributed = False

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.stop_gradient = not value

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo) -> Parameter:
        p = Parameter(
            self,
            name=self.name + "_deepcopy",
            trainable=self.trainable,
            optimize_attr=self.optimize_attr,
            regularizer=self.regularizer,
            need_clip=self.need_clip,
            do_model_average=self.do_model_average,
        )
        memo[id(self)] = p
        return p


class ParamAttr:
    """How a layer creates one of its parameters (Paddle's ``paddle.ParamAttr``).

    Args:
        name: the parameter's name (generated when None).
        initializer: an ``rt.nn.initializer`` object (the layer's default when None).
        learning_rate: multiplier of the optimizer's learning rate for this parameter.
        regularizer: ``rt.regularizer.L1Decay``/``L2Decay``; overrides the optimizer's.
        trainable: False creates a parameter with ``stop_gradient=True``.
        do_model_average, need_clip: carried to the parameter.

    A layer's ``weight_attr``/``bias_attr`` also accept ``None`` (defaults), a name string,
    an initializer, or ``False`` (no such parameter; e.g. ``bias_attr=False`` means no bias).
    """

    def __init__(
        self,
        name: str | None = None,
        initializer: Any = None,
        learning_rate: float = 1.0,
        regularizer: Any = None,
        trainable: bool = True,
        do_model_average: bool = True,
        need_clip: bool = True,
    ):
        if learning_rate < 0:
            raise ValueError(f"ParamAttr: learning_rate must be >= 0, got {learning_rate}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = trainable
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    def __repr__(self) -> str:
        return (
            f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
            f"learning_rate={self.learning_rate}, trainable={self.trainable})"
        )

    @staticmethod
    def _to_attr(arg: Any) -> ParamAttr | bool:
        """Normalize a ``weight_attr``/``bias_attr`` argument (``False`` stays ``False``)."""
        from autostatic_runtime.nn.initializer import Initializer
        from autostatic_runtime.regularizer import WeightDecayRegularizer

        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return False
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        if isinstance(arg, WeightDecayRegularizer):
            return ParamAttr(regularizer=arg)
        raise TypeError(
            f"a parameter attribute must be None, False, a name, an initializer or a "
            f"ParamAttr, not {type(arg).__name__}"
        )


def create_parameter(
    shape: Any,
    dtype: Any = None,
    name: str | None = None,
    attr: Any = None,
    is_bias: bool = False,
    default_initializer: Any = None,
) -> Parameter:
    """A new Parameter of ``shape`` (Paddle's ``paddle.create_parameter``).

    The initializer is, in order of precedence: ``attr.initializer``, the global one from
    ``rt.nn.initializer.set_global_initializer``, ``default_initializer``, then zeros for a
    bias and Xavier-uniform for a weight (Paddle's defaults).

    Returns:
        the Parameter (``stop_gradient=False`` unless ``attr.trainable`` is False).
    """
    from autostatic_runtime.nn import initializer as init_mod

    attr = ParamAttr._to_attr(attr)
    if attr is False:
        attr = ParamAttr()
    shape = _check_shape(shape)
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.convert_dtype(dtype)
    init = (
        attr.initializer
        or init_mod._global_initializer(is_bias)
        or default_initializer
        or (init_mod.Constant(0.0) if is_bias else init_mod.XavierUniform())
    )
    data = init._array(shape, dtype)
    return Parameter(
        data,
        name=attr.name or name,
        trainable=attr.trainable,
        optimize_attr={"learning_rate": attr.learning_rate},
        regularizer=attr.regularizer,
        need_clip=attr.need_clip,
        do_model_average=attr.do_model_average,
    )


def _check_shape(shape: Any) -> tuple:
    if isinstance(shape, int):
        shape = (shape,)
    try:
        out = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"create_parameter: shape must be a list of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"create_parameter: shape {list(out)} has a negative dim")
    return out

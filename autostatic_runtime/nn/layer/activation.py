"""Activation layers: thin wrappers over ``rt.nn.functional`` (Paddle 2.x class names).

Each class stores its constructor options and calls the functional of the same name, e.g.
``LeakyReLU(0.2)(x) == F.leaky_relu(x, negative_slope=0.2)``.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.initializer import Constant
from autostatic_runtime.nn.layer.layers import Layer

__all__ = [
    "ReLU", "ReLU6", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "LeakyReLU", "SiLU",
    "Swish", "ELU", "CELU", "SELU", "Softplus", "Softsign", "Softshrink", "Hardshrink",
    "Tanhshrink", "ThresholdedReLU", "Hardtanh", "Hardsigmoid", "Hardswish", "Mish",
    "LogSigmoid", "GLU", "PReLU", "Silu",
]  # fmt: skip


class _Activation(Layer):
    """Calls ``F.<_fn>(x, **options)``; ``_options`` lists (name, default) pairs in order."""

    _fn = ""
    _options: tuple = ()

    def __init__(self, *args: Any, name: str | None = None, **kwargs: Any):
        super().__init__()
        keys = [k for k, _ in self._options]
        if len(args) > len(keys):  # Paddle's signatures end with `name`
            if len(args) > len(keys) + 1 or name is not None:
                raise TypeError(
                    f"{type(self).__name__} takes at most {len(keys) + 1} "
                    f"positional arguments, got {len(args)}"
                )
            args, name = args[:-1], args[-1]
        unknown = set(kwargs) - set(keys)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {sorted(unknown)}")
        self._kwargs = dict(self._options)
        self._kwargs.update(zip(keys, args, strict=False))
        self._kwargs.update(kwargs)
        self._name = name

    def forward(self, x: Any) -> Any:
        return getattr(F, self._fn)(x, **self._kwargs)

    def extra_repr(self) -> str:
        parts = [f"{k}={v}" for k, v in self._kwargs.items()]
        if self._name:
            parts.append(f"name={self._name}")
        return ", ".join(parts)


def _activation(cls_name: str, fn: str, options: tuple = (), doc: str = "") -> type:
    cls = type(
        cls_name,
        (_Activation,),
        {
            "_fn": fn,
            "_options": options,
            "__doc__": doc or f"Applies ``F.{fn}``.",
            "__module__": __name__,
        },
    )
    return cls


ReLU = _activation("ReLU", "relu", doc="``max(x, 0)``.")
ReLU6 = _activation("ReLU6", "relu6", doc="``min(max(x, 0), 6)``.")
GELU = _activation(
    "GELU",
    "gelu",
    (("approximate", False),),
    "Gaussian error linear unit (tanh approximation if ``approximate``).",
)
Tanh = _activation("Tanh", "tanh")
Sigmoid = _activation("Sigmoid", "sigmoid")
Softmax = _activation("Softmax", "softmax", (("axis", -1),), "Softmax along ``axis``.")
LogSoftmax = _activation(
    "LogSoftmax", "log_softmax", (("axis", -1),), "Log-softmax along ``axis``."
)
LeakyReLU = _activation(
    "LeakyReLU",
    "leaky_relu",
    (("negative_slope", 0.01),),
    "``x`` if positive else ``negative_slope * x``.",
)
SiLU = _activation("SiLU", "silu", doc="``x * sigmoid(x)``.")
Silu = SiLU  # Paddle 2.x spells it paddle.nn.Silu
Swish = _activation("Swish", "swish", doc="``x * sigmoid(x)``.")
ELU = _activation("ELU", "elu", (("alpha", 1.0),))
CELU = _activation("CELU", "celu", (("alpha", 1.0),))
SELU = _activation(
    "SELU",
    "selu",
    (("scale", 1.0507009873554804934193349852946), ("alpha", 1.6732632423543772848170429916717)),
)
Softplus = _activation("Softplus", "softplus", (("beta", 1), ("threshold", 20)))
Softsign = _activation("Softsign", "softsign")
Softshrink = _activation("Softshrink", "softshrink", (("threshold", 0.5),))
Hardshrink = _activation("Hardshrink", "hardshrink", (("threshold", 0.5),))
Tanhshrink = _activation("Tanhshrink", "tanhshrink")
ThresholdedReLU = _activation("ThresholdedReLU", "thresholded_relu", (("threshold", 1.0),))
Hardtanh = _activation("Hardtanh", "hardtanh", (("min", -1.0), ("max", 1.0)))
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid")
Hardswish = _activation("Hardswish", "hardswish")
Mish = _activation("Mish", "mish")
LogSigmoid = _activation("LogSigmoid", "log_sigmoid")
GLU = _activation("GLU", "glu", (("axis", -1),), "Gated linear unit along ``axis``.")


class PReLU(Layer):
    """``x`` if positive else ``weight * x``, with a learnable slope per channel (or one shared).

    Args:
        num_parameters: 1, or the number of channels.
        init: initial slope.
        weight_attr: ParamAttr of the slope.
        data_format: where the channel dim is ('NCHW'-like or 'NHWC'-like).
    """

    def __init__(
        self,
        num_parameters: int = 1,
        init: float = 0.25,
        weight_attr: Any = None,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__()
        self._num_parameters, self._init, self._data_format = num_parameters, init, data_format
        self.weight = self.create_parameter(
            [num_parameters], attr=weight_attr, default_initializer=Constant(init)
        )

    def forward(self, x: Any) -> Any:
        return F.prelu(x, self.weight, data_format=self._data_format)

    def extra_repr(self) -> str:
        return (
            f"num_parameters={self._num_parameters}, data_format={self._data_format}, "
            f"init={self._init}, dtype={self._dtype}"
        )

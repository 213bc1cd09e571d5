"""Normalization layers: ``BatchNorm1D/2D/3D``, ``BatchNorm``, ``LayerNorm``, ``GroupNorm``,
``InstanceNorm1D/2D/3D``.

As in Paddle, batch norm's running statistics are the non-trainable parameters ``_mean``
(zeros) and ``_variance`` (ones): they appear in ``parameters()`` with
``stop_gradient=True`` (optimizers skip them) and in ``state_dict()`` as ``_mean``/``_variance``.
In training mode ``F.batch_norm`` normalizes with the batch statistics and updates them:
``running = momentum * running + (1 - momentum) * batch``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autostatic_runtime import dtypes
from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.initializer import Constant
from autostatic_runtime.nn.layer.layers import Layer
from autostatic_runtime.nn.parameter import ParamAttr

__all__ = [
    "BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "LayerNorm", "GroupNorm",
    "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D",
]  # fmt: skip


def _affine(layer: Layer, shape: list, attr: Any, is_bias: bool, value: float) -> Any:
    """Scale/shift parameter; ``attr=False`` gives a fixed (non-trainable) one, as Paddle."""
    init = Constant(value)
    if attr is False:
        p = layer.create_parameter(shape, None, is_bias=is_bias, default_initializer=init)
        p.stop_gradient = True
        return p
    p = layer.create_parameter(shape, attr, is_bias=is_bias, default_initializer=init)
    if isinstance(attr, ParamAttr) and attr.learning_rate == 0:
        p.stop_gradient = True
    return p


class _BatchNormBase(Layer):
    """Shared construction of the batch norm layers."""

    _formats: dict[str, str] = {}
    _ranks: tuple = ()

    def __init__(
        self,
        num_features: int,
        momentum: float = 0.9,
        epsilon: float = 1e-05,
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str = "NCHW",
        use_global_stats: bool | None = None,
        name: str | None = None,
    ):
        super().__init__(dtype=_float_dtype())
        if data_format not in self._formats:
            raise ValueError(
                f"{type(self).__name__}: data_format must be one of "
                f"{sorted(self._formats)}, got {data_format!r}"
            )
        self._num_features, self._momentum, self._epsilon = num_features, momentum, epsilon
        self._data_format = self._formats[data_format]
        self._use_global_stats, self._name = use_global_stats, name
        shape = [num_features]
        self.weight = _affine(self, shape, weight_attr, False, 1.0)
        self.bias = _affine(self, shape, bias_attr, True, 0.0)
        stat = {"trainable": False, "do_model_average": True}
        self._mean = self.create_parameter(
            shape, ParamAttr(name=name and name + "_mean", initializer=Constant(0.0), **stat)
        )
        self._variance = self.create_parameter(
            shape, ParamAttr(name=name and name + "_variance", initializer=Constant(1.0), **stat)
        )

    def forward(self, input: Any) -> Any:
        if self._ranks and input.ndim not in self._ranks:
            ranks = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(
                f"{type(self).__name__}: expected {ranks} input, got "
                f"{input.ndim}D input of shape {list(input.shape)}"
            )
        return F.batch_norm(
            input,
            self._mean,
            self._variance,
            weight=self.weight,
            bias=self.bias,
            training=self.training,
            momentum=self._momentum,
            epsilon=self._epsilon,
            data_format=self._data_format,
            use_global_stats=self._use_global_stats,
        )

    def extra_repr(self) -> str:
        return (
            f"num_features={self._num_features}, momentum={self._momentum}, epsilon={self._epsilon}"
        )


def _float_dtype() -> dtypes.DType:
    d = dtypes.get_default_dtype()
    return dtypes.float32 if d == dtypes.float16 else d


class BatchNorm1D(_BatchNormBase):
    """Batch norm over [N, C] or [N, C, L] (``data_format`` 'NC'/'NCL', or 'NLC')."""

    _formats = {"NC": "NCHW", "NCL": "NCHW", "NCHW": "NCHW", "NLC": "NHWC", "NHWC": "NHWC"}
    _ranks = (2, 3)

    def __init__(
        self,
        num_features: int,
        momentum: float = 0.9,
        epsilon: float = 1e-05,
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str = "NCL",
        use_global_stats: bool | None = None,
        name: str | None = None,
    ):
        super().__init__(
            num_features,
            momentum,
            epsilon,
            weight_attr,
            bias_attr,
            data_format,
            use_global_stats,
            name,
        )


class BatchNorm2D(_BatchNormBase):
    """Batch norm over [N, C, H, W] (or NHWC)."""

    _formats = {"NCHW": "NCHW", "NHWC": "NHWC"}
    _ranks = (4,)


class BatchNorm3D(_BatchNormBase):
    """Batch norm over [N, C, D, H, W] (or NDHWC)."""

    _formats = {"NCDHW": "NCHW", "NCHW": "NCHW", "NDHWC": "NHWC", "NHWC": "NHWC"}
    _ranks = (5,)

    def __init__(
        self,
        num_features: int,
        momentum: float = 0.9,
        epsilon: float = 1e-05,
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str = "NCDHW",
        use_global_stats: bool | None = None,
        name: str | None = None,
    ):
        super().__init__(
            num_features,
            momentum,
            epsilon,
            weight_attr,
            bias_attr,
            data_format,
            use_global_stats,
            name,
        )


class BatchNorm(_BatchNormBase):
    """Paddle's older ``paddle.nn.BatchNorm``: any rank, optional activation ``act``."""

    _formats = {"NCHW": "NCHW", "NHWC": "NHWC"}

    def __init__(
        self,
        num_channels: int,
        act: str | None = None,
        is_test: bool = False,
        momentum: float = 0.9,
        epsilon: float = 1e-05,
        param_attr: Any = None,
        bias_attr: Any = None,
        dtype: Any = "float32",
        data_layout: str = "NCHW",
        in_place: bool = False,
        moving_mean_name: str | None = None,
        moving_variance_name: str | None = None,
        do_model_average_for_mean_and_var: bool = True,
        use_global_stats: bool = False,
        trainable_statistics: bool = False,
    ):
        super().__init__(
            num_channels,
            momentum,
            epsilon,
            param_attr,
            bias_attr,
            data_layout,
            use_global_stats or is_test or None,
        )
        self._act = act

    def forward(self, input: Any) -> Any:
        out = super().forward(input)
        return getattr(F, self._act)(out) if self._act else out


class LayerNorm(Layer):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    ``weight`` (ones) and ``bias`` (zeros) have shape ``[prod(normalized_shape)]`` as in Paddle;
    ``weight_attr=False``/``bias_attr=False`` drop them.
    """

    def __init__(
        self,
        normalized_shape: Any,
        epsilon: float = 1e-05,
        weight_attr: Any = None,
        bias_attr: Any = None,
        name: str | None = None,
    ):
        super().__init__(dtype=_float_dtype())
        if isinstance(normalized_shape, int):
            normalized_shape = [normalized_shape]
        self._normalized_shape = [int(d) for d in normalized_shape]
        self._epsilon, self._name = epsilon, name
        shape = [int(np.prod(self._normalized_shape))]
        self.weight = self.create_parameter(shape, weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter(shape, bias_attr, is_bias=True)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(
            input,
            normalized_shape=self._normalized_shape,
            weight=self.weight,
            bias=self.bias,
            epsilon=self._epsilon,
        )

    def extra_repr(self) -> str:
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Normalize over groups of channels of an NCHW-like input, then scale/shift per channel."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        epsilon: float = 1e-05,
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__(dtype=_float_dtype())
        if num_channels % num_groups:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                f"num_groups ({num_groups})"
            )
        self._num_groups, self._num_channels = num_groups, num_channels
        self._epsilon, self._data_format = epsilon, data_format
        shape = [num_channels]
        self.weight = None if weight_attr is False else _affine(self, shape, weight_attr, 0, 1.0)
        self.bias = None if bias_attr is False else _affine(self, shape, bias_attr, 1, 0.0)

    def forward(self, input: Any) -> Any:
        return F.group_norm(
            input,
            self._num_groups,
            epsilon=self._epsilon,
            weight=self.weight,
            bias=self.bias,
            data_format=self._data_format,
        )

    def extra_repr(self) -> str:
        return (
            f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
            f"epsilon={self._epsilon}"
        )


class _InstanceNormBase(Layer):
    """Per-sample, per-channel normalization; the affine parameters are ``scale`` and ``bias``
    (Paddle's names), both dropped when ``weight_attr``/``bias_attr`` are False."""

    _rank = 0

    def __init__(
        self,
        num_features: int,
        epsilon: float = 1e-05,
        momentum: float = 0.9,
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__(dtype=_float_dtype())
        if (weight_attr is False) != (bias_attr is False):
            raise ValueError(
                f"{type(self).__name__}: weight_attr and bias_attr must be False together"
            )
        self._num_features, self._epsilon, self._data_format = num_features, epsilon, data_format
        if weight_attr is False:
            self.scale, self.bias = None, None
        else:
            self.scale = self.create_parameter(
                [num_features], weight_attr, default_initializer=Constant(1.0)
            )
            self.bias = self.create_parameter([num_features], bias_attr, is_bias=True)

    def forward(self, input: Any) -> Any:
        if input.ndim != self._rank:
            raise ValueError(
                f"{type(self).__name__}: expected {self._rank}D input, got "
                f"{input.ndim}D input of shape {list(input.shape)}"
            )
        return F.instance_norm(
            input,
            weight=self.scale,
            bias=self.bias,
            eps=self._epsilon,
            data_format=self._data_format,
        )

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance norm over [N, C, L]."""

    _rank = 3


class InstanceNorm2D(_InstanceNormBase):
    """Instance norm over [N, C, H, W]."""

    _rank = 4


class InstanceNorm3D(_InstanceNormBase):
    """Instance norm over [N, C, D, H, W]."""

    _rank = 5

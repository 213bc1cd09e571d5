"""Convolution layers (Paddle 2.x ``paddle.nn.Conv2D``).

The weight has shape ``[out_channels, in_channels // groups, kh, kw]``; Paddle's default
initialization is ``Normal(0, sqrt(2 / (kh * kw * in_channels)))`` for it and zeros for the bias.
"""

from __future__ import annotations

import math
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.initializer import Normal
from autostatic_runtime.nn.layer.layers import Layer

__all__ = ["Conv2D"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _pair(value: Any, what: str) -> list[int]:
    if isinstance(value, int):
        return [value, value]
    out = [int(v) for v in value]
    if len(out) != 2:
        raise ValueError(f"Conv2D: {what} must be an int or 2 ints, got {value!r}")
    return out


class Conv2D(Layer):
    """2-D convolution over NCHW (or NHWC) input.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, dilation: an int or (h, w).
        padding: an int, (h, w), 4 ints, pairs, 'SAME' or 'VALID' (as ``F.conv2d``).
        groups: split the channels into groups (``in_channels`` divisible by it).
        padding_mode: 'zeros', or 'reflect'/'replicate'/'circular' (then ``padding`` is an int).
        weight_attr, bias_attr: ParamAttr; ``bias_attr=False`` means no bias.
        data_format: 'NCHW' or 'NHWC'.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        padding_mode: str = "zeros",
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str = "NCHW",
    ):
        super().__init__(dtype=dtypes.get_default_dtype())
        if weight_attr is False:
            raise ValueError("Conv2D: weight_attr cannot be False")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"Conv2D: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}"
            )
        if padding_mode != "zeros" and not isinstance(padding, int):
            raise TypeError(f"Conv2D: padding must be an int when padding_mode is {padding_mode!r}")
        if in_channels % groups:
            raise ValueError(
                f"Conv2D: in_channels ({in_channels}) must be divisible by groups ({groups})"
            )
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"Conv2D: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
        self._in_channels, self._out_channels, self._groups = in_channels, out_channels, groups
        self._kernel_size = _pair(kernel_size, "kernel_size")
        self._stride, self._dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
        self._padding, self._padding_mode, self._data_format = padding, padding_mode, data_format
        std = math.sqrt(2.0 / (self._kernel_size[0] * self._kernel_size[1] * in_channels))
        self.weight = self.create_parameter(
            [out_channels, in_channels // groups, *self._kernel_size],
            attr=weight_attr,
            default_initializer=Normal(0.0, std),
        )
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x: Any) -> Any:
        padding = self._padding
        if self._padding_mode != "zeros":
            p = self._padding
            x = F.pad(x, [p, p, p, p], mode=self._padding_mode, data_format=self._data_format)
            padding = 0
        return F.conv2d(
            x,
            self.weight,
            bias=self.bias,
            stride=self._stride,
            padding=padding,
            dilation=self._dilation,
            groups=self._groups,
            data_format=self._data_format,
        )

    def extra_repr(self) -> str:
        out = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1, 1]:
            out += f", stride={self._stride}"
        if self._padding != 0:
            out += f", padding={self._padding}"
        if self._padding_mode != "zeros":
            out += f", padding_mode={self._padding_mode}"
        if self._dilation != [1, 1]:
            out += f", dilation={self._dilation}"
        if self._groups != 1:
            out += f", groups={self._groups}"
        return out + f", data_format={self._data_format}"

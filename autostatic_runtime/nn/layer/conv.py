"""Convolution layers (Paddle 2.x ``paddle.nn.Conv1D``, ``Conv2D``, ``Conv3D``) and the
transposed ones (``Conv1DTranspose``, ``Conv2DTranspose``).

The weight has shape ``[out_channels, in_channels // groups, *kernel]`` (transposed:
``[in_channels, out_channels // groups, *kernel]``); Paddle's default initialization is
``Normal(0, sqrt(2 / (prod(kernel) * in_channels)))`` for it and zeros for the bias.
"""

from __future__ import annotations

import math
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.initializer import Normal
from autostatic_runtime.nn.layer.layers import Layer

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _pair(value: Any, what: str, n: int = 2, layer: str = "Conv2D") -> list[int]:
    if isinstance(value, int):
        return [value] * n
    out = [int(v) for v in value]
    if len(out) != n:
        raise ValueError(f"{layer}: {what} must be an int or {n} ints, got {value!r}")
    return out


class _ConvNd(Layer):
    """N-D convolution over channel-first (or channel-last) input; subclasses say N.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, dilation: an int or one per spatial dim.
        padding: an int, one per dim, a (before, after) pair per dim, 'SAME' or 'VALID'.
        groups: split the channels into groups (``in_channels`` divisible by it).
        padding_mode: 'zeros', or 'reflect'/'replicate'/'circular' (then ``padding`` is an int).
        weight_attr, bias_attr: ParamAttr; ``bias_attr=False`` means no bias.
        data_format: channels first ('NCL', 'NCHW', 'NCDHW') or last.
    """

    _DIMS = 2
    _FORMATS = ("NCHW", "NHWC")
    _TRANSPOSED = False

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
        data_format: str | None = None,
    ):
        super().__init__(dtype=dtypes.get_default_dtype())
        name, dims = type(self).__name__, self._DIMS
        data_format = data_format or self._FORMATS[0]
        if weight_attr is False:
            raise ValueError(f"{name}: weight_attr cannot be False")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"{name}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}"
            )
        if padding_mode != "zeros" and not isinstance(padding, int):
            raise TypeError(f"{name}: padding must be an int when padding_mode is {padding_mode!r}")
        if in_channels % groups:
            raise ValueError(
                f"{name}: in_channels ({in_channels}) must be divisible by groups ({groups})"
            )
        if data_format not in self._FORMATS:
            raise ValueError(
                f"{name}: data_format must be {' or '.join(map(repr, self._FORMATS))}, "
                f"got {data_format!r}"
            )
        self._in_channels, self._out_channels, self._groups = in_channels, out_channels, groups
        self._kernel_size = _pair(kernel_size, "kernel_size", dims, name)
        self._stride = _pair(stride, "stride", dims, name)
        self._dilation = _pair(dilation, "dilation", dims, name)
        self._padding, self._padding_mode, self._data_format = padding, padding_mode, data_format
        std = math.sqrt(2.0 / (math.prod(self._kernel_size) * in_channels))
        shape = [out_channels, in_channels // groups]
        if self._TRANSPOSED:
            if out_channels % groups:
                raise ValueError(
                    f"{name}: out_channels ({out_channels}) must be divisible by groups "
                    f"({groups})"
                )
            shape = [in_channels, out_channels // groups]
        self.weight = self.create_parameter(
            [*shape, *self._kernel_size],
            attr=weight_attr,
            default_initializer=None if self._TRANSPOSED else Normal(0.0, std),  # Paddle's
        )
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def _convolve(self, x: Any, padding: Any) -> Any:
        raise NotImplementedError

    def forward(self, x: Any) -> Any:
        padding = self._padding
        if self._padding_mode != "zeros":
            p = self._padding
            x = F.pad(x, [p] * (2 * self._DIMS), mode=self._padding_mode,
                      data_format=self._data_format)  # fmt: skip
            padding = 0
        return self._convolve(x, padding)

    def extra_repr(self) -> str:
        out = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1] * self._DIMS:
            out += f", stride={self._stride}"
        if self._padding != 0:
            out += f", padding={self._padding}"
        if self._padding_mode != "zeros":
            out += f", padding_mode={self._padding_mode}"
        if self._dilation != [1] * self._DIMS:
            out += f", dilation={self._dilation}"
        if self._groups != 1:
            out += f", groups={self._groups}"
        return out + f", data_format={self._data_format}"


class Conv2D(_ConvNd):
    """2-D convolution over NCHW (or NHWC) input (``padding`` as ``F.conv2d`` takes it).

    Args: in/out channels, ``kernel_size``/``stride``/``dilation`` (an int or one per spatial
    dim), ``padding``, ``groups``, ``padding_mode`` ('zeros', 'reflect', 'replicate',
    'circular'), ``weight_attr``/``bias_attr`` (``bias_attr=False``: no bias), ``data_format``.
    """

    def _convolve(self, x: Any, padding: Any) -> Any:
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


class Conv1D(_ConvNd):
    """1-D convolution over NCL (or NLC) input; arguments as Conv2D's, one per dim."""

    _DIMS = 1
    _FORMATS = ("NCL", "NLC")

    def _convolve(self, x: Any, padding: Any) -> Any:
        return F.conv1d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)  # fmt: skip


class Conv3D(_ConvNd):
    """3-D convolution over NCDHW (or NDHWC) input; arguments as Conv2D's, one per dim."""

    _DIMS = 3
    _FORMATS = ("NCDHW", "NDHWC")

    def _convolve(self, x: Any, padding: Any) -> Any:
        return F.conv3d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                        self._groups, self._data_format)  # fmt: skip


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution (``output_padding`` picks among the sizes a stride allows;
    ``forward(x, output_size=None)`` may ask for one instead). No padding modes."""

    _TRANSPOSED = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        dilation: Any = 1,
        weight_attr: Any = None,
        bias_attr: Any = None,
        data_format: str | None = None,
    ):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", weight_attr, bias_attr, data_format)  # fmt: skip
        self._output_padding = output_padding

    def forward(self, x: Any, output_size: Any = None) -> Any:
        return self._FUNCTION(
            x,
            self.weight,
            bias=self.bias,
            stride=self._stride,
            padding=self._padding,
            output_padding=self._output_padding,
            groups=self._groups,
            dilation=self._dilation,
            data_format=self._data_format,
            output_size=output_size,
        )


class Conv2DTranspose(_ConvTransposeNd):
    """Transposed 2-D convolution over NCHW (or NHWC) input (``F.conv2d_transpose``).

    Args: in/out channels, ``kernel_size``/``stride``/``dilation`` (an int or one per
    spatial dim), ``padding`` (conv2d's forms), ``output_padding``, ``groups``,
    ``weight_attr``/``bias_attr`` (``bias_attr=False``: no bias), ``data_format``.
    """

    _FUNCTION = staticmethod(F.conv2d_transpose)


class Conv3DTranspose(_ConvTransposeNd):
    """Transposed 3-D convolution over NCDHW (or NDHWC) input (``F.conv3d_transpose``);
    arguments as Conv2DTranspose's, one per dim (``padding``: an int, 3 or 6 ints, 'SAME'
    or 'VALID')."""

    _DIMS = 3
    _FORMATS = ("NCDHW", "NDHWC")
    _FUNCTION = staticmethod(F.conv3d_transpose)


class Conv1DTranspose(_ConvTransposeNd):
    """Transposed 1-D convolution over NCL (or NLC) input; arguments as Conv2DTranspose's."""

    _DIMS = 1
    _FORMATS = ("NCL", "NLC")
    _FUNCTION = staticmethod(F.conv1d_transpose)

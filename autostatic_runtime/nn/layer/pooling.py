"""Pooling layers (Paddle 2.x ``MaxPool2D``, ``AvgPool2D``, ``AdaptiveAvgPool2D``,
``AdaptiveMaxPool2D``): each stores its options and calls the functional of the same name."""

from __future__ import annotations

from typing import Any

from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.layer.layers import Layer

__all__ = ["MaxPool2D", "AvgPool2D", "AdaptiveAvgPool2D", "AdaptiveMaxPool2D"]


class MaxPool2D(Layer):
    """Max over ``kernel_size`` windows (``stride`` defaults to ``kernel_size``)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        return_mask: bool = False,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.return_mask, self.data_format = ceil_mode, return_mask, data_format

    def forward(self, x: Any) -> Any:
        return F.max_pool2d(
            x,
            kernel_size=self.ksize,
            stride=self.stride,
            padding=self.padding,
            return_mask=self.return_mask,
            ceil_mode=self.ceil_mode,
            data_format=self.data_format,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(Layer):
    """Mean over ``kernel_size`` windows; ``exclusive`` leaves padding out of the count."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        exclusive: bool = True,
        divisor_override: Any = None,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.exclusive = ceil_mode, exclusive
        self.divisor, self.data_format = divisor_override, data_format

    def forward(self, x: Any) -> Any:
        return F.avg_pool2d(
            x,
            kernel_size=self.ksize,
            stride=self.stride,
            padding=self.padding,
            ceil_mode=self.ceil_mode,
            exclusive=self.exclusive,
            divisor_override=self.divisor,
            data_format=self.data_format,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2D(Layer):
    """Mean pooling to a fixed ``output_size`` (an int or (h, w); None keeps that dim)."""

    def __init__(self, output_size: Any, data_format: str = "NCHW", name: str | None = None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    def forward(self, x: Any) -> Any:
        return F.adaptive_avg_pool2d(
            x, output_size=self._output_size, data_format=self._data_format
        )

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"


class AdaptiveMaxPool2D(Layer):
    """Max pooling to a fixed ``output_size``."""

    def __init__(self, output_size: Any, return_mask: bool = False, name: str | None = None):
        super().__init__()
        self._output_size, self._return_mask = output_size, return_mask

    def forward(self, x: Any) -> Any:
        return F.adaptive_max_pool2d(
            x, output_size=self._output_size, return_mask=self._return_mask
        )

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, return_mask={self._return_mask}"

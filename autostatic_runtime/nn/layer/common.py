"""Common layers: ``Linear``, ``Bilinear``, ``Embedding``, ``Flatten``, ``Dropout``,
``Identity``, padding, ``Upsample`` and ``CosineSimilarity``."""

from __future__ import annotations

from typing import Any

from autostatic_runtime import backends, dtypes
from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.layer.layers import Layer

__all__ = [
    "Linear", "Bilinear", "Embedding", "Flatten", "Dropout", "Dropout2D", "Identity", "Pad2D",
    "ZeroPad2D", "Upsample", "CosineSimilarity",
]  # fmt: skip


class Linear(Layer):
    """``y = x @ weight + bias`` with ``weight`` of shape ``[in_features, out_features]``.

    Default initialization (Paddle's): weight Xavier-uniform, bias zeros.
    ``bias_attr=False`` creates no bias.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        weight_attr: Any = None,
        bias_attr: Any = None,
        name: str | None = None,
    ):
        super().__init__(dtype=dtypes.get_default_dtype())
        self._in_features, self._out_features = in_features, out_features
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)
        self.name = name

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return (
            f"in_features={self._in_features}, out_features={self._out_features}, "
            f"dtype={self._dtype}{name}"
        )


class Bilinear(Layer):
    """``out = x1 @ weight[o] @ x2 + bias`` per output feature ``o`` (Paddle's
    ``paddle.nn.Bilinear``): ``weight`` [out_features, in1_features, in2_features], ``bias``
    [1, out_features]. Default initialization (Paddle's): weight Xavier-uniform, bias zeros."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        weight_attr: Any = None,
        bias_attr: Any = None,
        name: str | None = None,
    ):
        super().__init__(dtype=dtypes.get_default_dtype())
        if min(in1_features, in2_features, out_features) <= 0:
            raise ValueError(
                f"Bilinear: in1_features ({in1_features}), in2_features ({in2_features}) and "
                f"out_features ({out_features}) must be positive"
            )
        self._in1, self._in2, self._out = in1_features, in2_features, out_features
        self.weight = self.create_parameter(
            [out_features, in1_features, in2_features], attr=weight_attr
        )
        self.bias = self.create_parameter([1, out_features], attr=bias_attr, is_bias=True)
        self.name = name

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in1_features={self._in1}, in2_features={self._in2}, out_features={self._out}"


class Embedding(Layer):
    """A lookup table ``weight[num_embeddings, embedding_dim]`` indexed by integer ids.

    Row ``padding_idx`` (negative counts from the end) starts at zero and gets no gradient.
    Default initialization: Xavier-uniform.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        sparse: bool = False,
        weight_attr: Any = None,
        name: str | None = None,
    ):
        super().__init__(dtype=dtypes.get_default_dtype())
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise ValueError(
                f"Embedding: num_embeddings ({num_embeddings}) and embedding_dim "
                f"({embedding_dim}) must be positive"
            )
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(
                f"Embedding: padding_idx must be within [-{num_embeddings}, "
                f"{num_embeddings}), got {padding_idx}"
            )
        self._num_embeddings, self._embedding_dim = num_embeddings, embedding_dim
        self._padding_idx, self._sparse, self._name = padding_idx, sparse, name
        self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
        if padding_idx is not None:
            _zero_row(self.weight, padding_idx % num_embeddings)

    def forward(self, x: Any) -> Any:
        return F.embedding(
            x, weight=self.weight, padding_idx=self._padding_idx, sparse=self._sparse
        )

    def extra_repr(self) -> str:
        pad = "" if self._padding_idx is None else f", padding_idx={self._padding_idx}"
        sparse = ", sparse=True" if self._sparse else ""
        return f"{self._num_embeddings}, {self._embedding_dim}{pad}{sparse}"


def _zero_row(param: Any, row: int) -> None:
    backend = backends.backend_of(param._data)
    host = backend.to_numpy(param._data).copy()
    host[row] = 0
    param._data = backend.from_numpy(host)


class Flatten(Layer):
    """Merge dims ``start_axis..stop_axis`` into one."""

    def __init__(self, start_axis: int = 1, stop_axis: int = -1):
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, input: Any) -> Any:
        from autostatic_runtime.ops.manipulation import flatten

        return flatten(input, start_axis=self.start_axis, stop_axis=self.stop_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


class Dropout(Layer):
    """Zero elements with probability ``p`` while training (``mode='upscale_in_train'`` scales
    the kept ones by ``1/(1-p)``; ``'downscale_in_infer'`` scales by ``1-p`` in eval instead)."""

    def __init__(
        self,
        p: float = 0.5,
        axis: Any = None,
        mode: str = "upscale_in_train",
        name: str | None = None,
    ):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        if mode not in ("upscale_in_train", "downscale_in_infer"):
            raise ValueError(
                f"Dropout: mode must be 'upscale_in_train' or 'downscale_in_infer', got {mode!r}"
            )
        self.p, self.axis, self.mode, self.name = p, axis, mode, name

    def forward(self, input: Any) -> Any:
        return F.dropout(input, p=self.p, axis=self.axis, training=self.training, mode=self.mode)

    def extra_repr(self) -> str:
        name = f", name={self.name}" if self.name else ""
        return f"p={self.p}, axis={self.axis}, mode={self.mode}{name}"


class Dropout2D(Layer):
    """Zero whole channels of an NCHW/NHWC input with probability ``p`` while training."""

    def __init__(self, p: float = 0.5, data_format: str = "NCHW", name: str | None = None):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout2D: p must be in [0, 1], got {p}")
        self.p, self.data_format = p, data_format

    def forward(self, input: Any) -> Any:
        return F.dropout2d(input, p=self.p, training=self.training, data_format=self.data_format)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}"


class Identity(Layer):
    """Returns its input unchanged (extra constructor arguments are ignored)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Pad2D(Layer):
    """Pad the two spatial dims: ``padding`` is an int or [left, right, top, bottom]."""

    def __init__(
        self,
        padding: Any,
        mode: str = "constant",
        value: float = 0.0,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__()
        self._pad = [padding] * 4 if isinstance(padding, int) else list(padding)
        self._mode, self._value, self._data_format = mode, value, data_format

    def forward(self, x: Any) -> Any:
        return F.pad(
            x, pad=self._pad, mode=self._mode, value=self._value, data_format=self._data_format
        )

    def extra_repr(self) -> str:
        return (
            f"padding={self._pad}, mode={self._mode}, value={self._value}, "
            f"data_format={self._data_format}"
        )


class ZeroPad2D(Pad2D):
    """Pad the two spatial dims with zeros: ``padding`` is an int or [left, right, top, bottom]."""

    def __init__(self, padding: Any, data_format: str = "NCHW", name: str | None = None):
        super().__init__(padding, "constant", 0.0, data_format)


class Upsample(Layer):
    """Resize the spatial dims to ``size`` or by ``scale_factor`` (``F.interpolate``)."""

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool = False,
        align_mode: int = 0,
        data_format: str = "NCHW",
        name: str | None = None,
    ):
        super().__init__()
        if size is None and scale_factor is None:
            raise ValueError("Upsample: give size or scale_factor")
        self.size, self.scale_factor, self.mode = size, scale_factor, mode.lower()
        self.align_corners, self.align_mode, self.data_format = (
            align_corners,
            align_mode,
            data_format,
        )

    def forward(self, x: Any) -> Any:
        return F.interpolate(
            x,
            size=self.size,
            scale_factor=self.scale_factor,
            mode=self.mode,
            align_corners=self.align_corners,
            align_mode=self.align_mode,
            data_format=self.data_format,
        )

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode}, align_corners={self.align_corners}"


class CosineSimilarity(Layer):
    """Cosine similarity of two inputs along ``axis``."""

    def __init__(self, axis: int = 1, eps: float = 1e-8):
        super().__init__()
        self._axis, self._eps = axis, eps

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.cosine_similarity(x1, x2, axis=self._axis, eps=self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"

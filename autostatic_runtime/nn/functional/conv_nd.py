"""1-D and 3-D convolutions and the temporal shift, built from ``conv2d`` and tensor ops.

No op of their own: their gradients are those of the ops they are made of, and every
executor, the XLA lowering and the ONNX export already take those ops.

    conv1d(x[N, C, L], w[O, C/g, K])            = squeeze(conv2d(x[N, C, 1, L], w[O, C/g, 1, K]))
    conv3d(x[N, C, D, H, W], w[O, C/g, KD, KH, KW])
        = sum over kd of conv2d(depth slices of x (stride sd, offset kd * dd) as a batch,
                                w[:, :, kd])
    temporal_shift(x[N*T, C, H, W]) = the first C*r channels taken from the frame before,
        the next C*r from the frame after (zeros past either end), the rest unchanged
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.nn.functional._utils import ints, shape_error
from autostatic_runtime.nn.functional.conv import conv2d

__all__ = ["conv1d", "conv3d", "temporal_shift"]


def _pairs(padding: Any, n: int, op_name: str) -> list[tuple[int, int]]:
    """(before, after) padding of each of ``n`` spatial dims from Paddle's forms: an int, n
    ints, 2n ints (before/after per dim) or n pairs."""
    if isinstance(padding, int):
        return [(padding, padding)] * n
    flat = [p for item in padding for p in (item if isinstance(item, (list, tuple)) else [item])]
    flat = [int(p) for p in flat]
    if len(flat) == n:
        return [(p, p) for p in flat]
    if len(flat) == 2 * n + 4 and not any(flat[:4]):  # pairs that include batch and channels
        flat = flat[4:]
    if len(flat) == 2 * n:
        return [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]
    raise shape_error(op_name, f"padding {padding!r} does not fit {n} spatial dims")


def _same_or_valid(padding: Any, sizes: list, kernel: list, strides: list) -> Any:
    """Explicit pairs for 'SAME' / 'VALID' (dilation 1, as Paddle's), else ``padding``."""
    if not isinstance(padding, str):
        return padding
    mode = padding.upper()
    if mode == "VALID":
        return 0
    if mode != "SAME":
        raise ValueError(f"padding must be 'SAME', 'VALID' or numbers, got {padding!r}")
    out = []
    for size, k, s in zip(sizes, kernel, strides):
        if size is None or size < 0:
            raise ValueError("padding='SAME' needs the spatial sizes known while tracing")
        total = max((-(-size // s) - 1) * s + k - size, 0)
        out.append((total // 2, total - total // 2))
    return out


def conv1d(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
    data_format: str = "NCL",
    name: str | None = None,
):
    """1-D convolution of ``x`` [N, C, L] (or NLC) with ``weight`` [O, C/groups, K]."""
    if data_format not in ("NCL", "NLC"):
        raise ValueError(f"conv1d: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if len(weight.shape) != 3 or len(x.shape) != 3:
        raise shape_error(
            "conv1d",
            f"expects a 3-D input and a 3-D filter [out, in/groups, k], got shapes "
            f"{list(x.shape)} and {list(weight.shape)}",
        )
    last = data_format == "NLC"
    length = x.shape[1] if last else x.shape[2]
    (s,), (d,) = ints(stride, 1, "conv1d", "stride"), ints(dilation, 1, "conv1d", "dilation")
    padding = _same_or_valid(padding, [length], [weight.shape[2]], [s])
    ((left, right),) = _pairs(padding, 1, "conv1d")
    x4 = x.unsqueeze(1 if last else 2)
    out = conv2d(
        x4,
        weight.unsqueeze(2),
        bias,
        stride=(1, s),
        padding=[0, 0, left, right],
        dilation=(1, d),
        groups=groups,
        data_format="NHWC" if last else "NCHW",
    )
    return out.squeeze(1 if last else 2)


def conv3d(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
    data_format: str = "NCDHW",
    name: str | None = None,
):
    """3-D convolution of ``x`` [N, C, D, H, W] (or NDHWC) with ``weight``
    [O, C/groups, KD, KH, KW]; one ``conv2d`` per depth position of the filter."""
    from autostatic_runtime.creation import zeros_like
    from autostatic_runtime.ops.manipulation import concat, reshape, transpose

    if data_format not in ("NCDHW", "NDHWC"):
        raise ValueError(f"conv3d: data_format must be 'NCDHW' or 'NDHWC', got {data_format!r}")
    if len(weight.shape) != 5 or len(x.shape) != 5:
        raise shape_error(
            "conv3d",
            f"expects a 5-D input and a 5-D filter [out, in/groups, kd, kh, kw], got shapes "
            f"{list(x.shape)} and {list(weight.shape)}",
        )
    if data_format == "NDHWC":
        x = transpose(x, [0, 4, 1, 2, 3])
    strides = ints(stride, 3, "conv3d", "stride")
    dilations = ints(dilation, 3, "conv3d", "dilation")
    kd, kh, kw = (int(k) for k in weight.shape[2:])
    padding = _same_or_valid(padding, list(x.shape[2:]), [kd, kh, kw], strides)
    (front, back), (top, bottom), (left, right) = _pairs(padding, 3, "conv3d")
    if front or back:
        zeros = zeros_like(x[:, :, :1])
        x = concat([zeros] * front + [x] + [zeros] * back, axis=2)
    n, c, depth = x.shape[0], x.shape[1], x.shape[2]
    reach = dilations[0] * (kd - 1)
    if depth >= 0 and depth - reach < 1:
        raise shape_error(
            "conv3d",
            f"the filter depth {kd} (dilation {dilations[0]}) is larger than the padded input "
            f"depth {depth}",
        )
    out_depth = (depth - reach - 1) // strides[0] + 1 if depth >= 0 else -1
    total = None
    for i in range(kd):
        start, stop = i * dilations[0], depth - reach + i * dilations[0] if depth >= 0 else None
        part = x[:, :, start : stop : strides[0]]  # [N, C, OD, H, W]
        part = transpose(part, [0, 2, 1, 3, 4])
        part = reshape(part, [-1, c, part.shape[3], part.shape[4]])
        y = conv2d(
            part,
            weight[:, :, i],
            stride=strides[1:],
            padding=[top, bottom, left, right],
            dilation=dilations[1:],
            groups=groups,
        )
        total = y if total is None else total + y
    o, oh, ow = total.shape[1], total.shape[2], total.shape[3]
    out = transpose(reshape(total, [n if out_depth < 0 else -1, out_depth, o, oh, ow]),
                    [0, 2, 1, 3, 4])  # fmt: skip
    if bias is not None:
        out = out + reshape(bias, [1, -1, 1, 1, 1])
    if data_format == "NDHWC":
        out = transpose(out, [0, 2, 3, 4, 1])
    return out


def temporal_shift(
    x: Any, seg_num: int, shift_ratio: float = 0.25, name: str | None = None,
    data_format: str = "NCHW",
):  # fmt: skip
    """Paddle's temporal shift of ``x`` [N*T, C, H, W] (T = ``seg_num``): channels
    ``[0, C*r)`` take the previous frame's values, ``[C*r, 2*C*r)`` the next frame's (zeros
    past either end of each clip), the rest stay."""
    from autostatic_runtime.creation import zeros_like
    from autostatic_runtime.ops.manipulation import concat, reshape, transpose

    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(
            f"temporal_shift: data_format must be 'NCHW' or 'NHWC', got {data_format!r}"
        )
    if len(x.shape) != 4:
        raise shape_error("temporal_shift", f"expects a 4-D input, got shape {list(x.shape)}")
    if data_format == "NHWC":
        x = transpose(x, [0, 3, 1, 2])
    seg_num = int(seg_num)
    _, c, h, w = x.shape
    clips = reshape(x, [-1, seg_num, c, h, w])
    zero = zeros_like(clips[:, :1])
    before = concat([zero, clips[:, :-1]], axis=1)  # frame t-1 at t
    after = concat([clips[:, 1:], zero], axis=1)  # frame t+1 at t
    c1, c2 = int(c * shift_ratio), int(c * 2 * shift_ratio)
    out = concat([before[:, :, :c1], after[:, :, c1:c2], clips[:, :, c2:]], axis=2)
    out = reshape(out, [-1, c, h, w])
    return transpose(out, [0, 2, 3, 1]) if data_format == "NHWC" else out

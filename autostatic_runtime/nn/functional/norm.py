"""Normalization: batch_norm, layer_norm, instance_norm, group_norm.

``batch_norm`` and ``layer_norm`` are fused ops (one kernel forward). Their gradients are
written in ops and recompute the batch statistics from ``x``, so higher-order gradients
are right too. Per-channel vectors meet ``x`` through ``broadcast_reduced``, which puts a
[C] tensor back into the reduced axes (no reshape needed).

``batch_norm`` in training mode updates ``running_mean``/``running_var`` in place the way
Paddle does: ``running = momentum * running + (1 - momentum) * batch_stat``, where the batch
variance is the biased one (divided by N*H*W, as Paddle's kernel does). While a
``DataParallel`` layer is traced over several devices, the statistics are each device's
own (``distributed/batch_norm.py``).
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.distributed import batch_norm as _per_device
from autostatic_runtime.nn.functional._utils import channel_last, op_error, shape_error
from autostatic_runtime.ops import elementwise as E
from autostatic_runtime.ops import reduce as R
from autostatic_runtime.ops.reduce import BroadcastReduced
from autostatic_runtime.ops.registry import Spec, dtype_of, op, require_float, shape_of
from autostatic_runtime.tensor import TensorLike

__all__ = ["batch_norm", "layer_norm", "instance_norm", "group_norm"]


def _other_axes(ndim: int, axis: int) -> tuple:
    return tuple(i for i in range(ndim) if i != axis)


def _per_channel(xp, v, ndim: int, axis: int):
    """A [C] array reshaped to broadcast along ``axis`` of an ``ndim``-D array."""
    shape = [1] * ndim
    shape[axis] = -1
    return xp.reshape(v, tuple(shape))


def _spread(v, x, axes: tuple):
    """Broadcast a [C] tensor to ``x``'s shape, filling the ``axes`` that were reduced."""
    return BroadcastReduced(v, x, axis=axes, keepdim=False)


def _normalized(x, axes: tuple, epsilon: float):
    """(x - mean) * rsqrt(var + eps) over ``axes`` (keepdim), and that rsqrt, in ops."""
    mu = R.ReduceMean(x, axis=axes, keepdim=True)
    xc = x - mu
    r = E.rsqrt(R.ReduceMean(xc * xc, axis=axes, keepdim=True) + epsilon)
    return xc * r, r


def _norm_backward(g, xhat, r, axes: tuple):
    """dx of ``xhat = normalize(x)`` given dxhat = ``g``: r * (g - mean(g) - xhat*mean(g*xhat))."""
    gm = R.ReduceMean(g, axis=axes, keepdim=True)
    gxm = R.ReduceMean(g * xhat, axis=axes, keepdim=True)
    return (g - gm - xhat * gxm) * r


# ---- batch norm ------------------------------------------------------------------------------


@op("batch_norm")
class BatchNorm:
    """Normalize per channel (``axis``) with batch stats (``training``) or the given ones.

    Outputs ``y``, the batch mean and the (biased) batch variance; the last two carry no
    gradient (in eval mode they are the given mean and variance).
    """

    fresh = True

    multi_output = True
    nondiff_outputs = (1, 2)

    def infer(x, scale, bias, mean, variance, epsilon, training, axis):
        c = Spec((shape_of(x)[axis],), dtype_of(x))
        return Spec(shape_of(x), dtype_of(x)), c, c

    def kernel(xp, x, scale, bias, mean, variance, epsilon, training, axis):
        axes = _other_axes(x.ndim, axis)
        if training:
            mean = xp.mean(x, axis=axes)
            xc = x - _per_channel(xp, mean, x.ndim, axis)
            variance = xp.mean(xc * xc, axis=axes)
        else:
            xc = x - _per_channel(xp, mean, x.ndim, axis)
        factor = 1.0 / xp.sqrt(variance + epsilon)
        if scale is not None:
            factor = factor * scale
        y = xc * _per_channel(xp, factor, x.ndim, axis)
        if bias is not None:
            y = y + _per_channel(xp, bias, x.ndim, axis)
        return y, mean, variance

    def grad(gs, outs, x, scale, bias, mean, variance, epsilon, training, axis):
        g = gs[0]
        axes = _other_axes(x.ndim, axis)
        if training:
            xhat, r = _normalized(x, axes, epsilon)
            dx = _norm_backward(g, xhat, r, axes)
            if scale is not None:
                dx = dx * _spread(scale, x, axes)
        else:
            r = E.rsqrt(variance + epsilon)
            xhat = (x - _spread(mean, x, axes)) * _spread(r, x, axes)
            dx = g * _spread(r if scale is None else r * scale, x, axes)
        dscale = None if scale is None else R.ReduceSum(g * xhat, axis=axes, keepdim=False)
        dbias = None if bias is None else R.ReduceSum(g, axis=axes, keepdim=False)
        return dx, dscale, dbias, None, None


def _update_running(running: Any, batch: Any, momentum: float) -> None:
    from autostatic_runtime.autograd import no_grad

    if running is None:
        return
    with no_grad():
        running.set_value(running * momentum + batch * (1.0 - momentum))


def batch_norm(
    x: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: float = 0.9,
    epsilon: float = 1e-05,
    data_format: str = "NCHW",
    use_global_stats: Any = None,
    name: str | None = None,
):
    """Batch normalization over every axis but the channel one (axis 1, or the last for NHWC).

    In training mode (unless ``use_global_stats``) normalizes with the batch statistics and
    updates ``running_mean``/``running_var`` in place.
    """
    require_float("batch_norm", x)
    if not 2 <= x.ndim <= 5:
        raise shape_error("batch_norm", f"expects a 2-D to 5-D input, got shape {list(x.shape)}")
    axis = x.ndim - 1 if channel_last(data_format, "batch_norm") and x.ndim > 2 else 1
    c = x.shape[axis]
    for label, v in (
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ):
        if v is not None and tuple(v.shape) != (c,) and c >= 0:
            raise shape_error(
                "batch_norm",
                f"{label} has shape {list(v.shape)} but the input "
                f"{list(x.shape)} has {c} channels on axis {axis}",
            )
    batch_stats = training if use_global_stats is None else not use_global_stats
    if not batch_stats and (running_mean is None or running_var is None):
        raise op_error(
            "batch_norm",
            "running_mean and running_var are needed when not "
            "training (or with use_global_stats=True)",
        )
    groups = _per_device.device_groups()
    if batch_stats and groups > 1:  # a DataParallel step: each device's own statistics
        return _per_device.grouped_batch_norm(
            x, running_mean, running_var, weight, bias, float(momentum), float(epsilon), axis,
            groups,
        )  # fmt: skip
    y, bmean, bvar = BatchNorm(
        x,
        weight,
        bias,
        running_mean,
        running_var,
        epsilon=float(epsilon),
        training=bool(batch_stats),
        axis=axis,
    )
    if batch_stats and isinstance(running_mean, TensorLike):
        _update_running(running_mean, bmean, float(momentum))
        _update_running(running_var, bvar, float(momentum))
    return y


# ---- layer norm ------------------------------------------------------------------------------


@op("layer_norm")
class LayerNorm:
    """Normalize over the trailing dims from ``begin_norm_axis``; ``scale``/``bias`` have
    the normalized shape."""

    def infer(x, scale, bias, epsilon, begin_norm_axis):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, scale, bias, epsilon, begin_norm_axis):
        axes = tuple(range(begin_norm_axis, x.ndim))
        xc = x - xp.mean(x, axis=axes, keepdims=True)
        y = xc / xp.sqrt(xp.mean(xc * xc, axis=axes, keepdims=True) + epsilon)
        if scale is not None:
            y = y * scale
        if bias is not None:
            y = y + bias
        return y

    def grad(g, out, x, scale, bias, epsilon, begin_norm_axis):
        axes = tuple(range(begin_norm_axis, x.ndim))
        lead = tuple(range(begin_norm_axis))
        xhat, r = _normalized(x, axes, epsilon)
        dxhat = g if scale is None else g * scale
        dx = _norm_backward(dxhat, xhat, r, axes)
        dscale = None if scale is None else R.ReduceSum(g * xhat, axis=lead, keepdim=False)
        dbias = None if bias is None else R.ReduceSum(g, axis=lead, keepdim=False)
        return dx, dscale, dbias


def _as_shape(v: Any, shape: list):
    from autostatic_runtime.ops.manipulation import reshape

    if v is None or list(v.shape) == shape:
        return v
    return reshape(v, shape)


def layer_norm(
    x: Any,
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    epsilon: float = 1e-05,
    name: str | None = None,
):
    """Layer normalization over the last ``len(normalized_shape)`` dims of ``x``."""
    require_float("layer_norm", x)
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    begin = x.ndim - len(ns)
    if begin < 0 or list(x.shape[begin:]) != [int(d) for d in ns]:
        raise shape_error(
            "layer_norm",
            f"normalized_shape {ns} does not match the trailing "
            f"dims of the input shape {list(x.shape)}",
        )
    weight, bias = _as_shape(weight, ns), _as_shape(bias, ns)
    return LayerNorm(x, weight, bias, epsilon=float(epsilon), begin_norm_axis=begin)


# ---- composite norms -------------------------------------------------------------------------


def _affine(y, weight, bias, axes):
    if weight is not None:
        y = y * _spread(weight, y, axes)
    if bias is not None:
        y = y + _spread(bias, y, axes)
    return y


def instance_norm(
    x: Any,
    running_mean: Any = None,
    running_var: Any = None,
    weight: Any = None,
    bias: Any = None,
    use_input_stats: bool = True,
    momentum: float = 0.9,
    eps: float = 1e-05,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Normalize each sample's channel over its spatial dims, then scale/shift per channel."""
    require_float("instance_norm", x)
    if x.ndim < 3:
        raise shape_error("instance_norm", f"expects a 3-D to 5-D input, got {list(x.shape)}")
    last = channel_last(data_format, "instance_norm")
    caxis = x.ndim - 1 if last else 1
    spatial = tuple(i for i in range(1, x.ndim) if i != caxis)
    y, _ = _normalized(x, spatial, float(eps))
    return _affine(y, weight, bias, _other_axes(x.ndim, caxis))


def group_norm(
    x: Any,
    num_groups: int,
    epsilon: float = 1e-05,
    weight: Any = None,
    bias: Any = None,
    data_format: str = "NCHW",
    name: str | None = None,
):
    """Normalize over groups of ``C / num_groups`` channels (and the spatial dims)."""
    from autostatic_runtime.ops.manipulation import reshape, transpose

    require_float("group_norm", x)
    last = channel_last(data_format, "group_norm")
    if x.ndim < 2:
        raise shape_error("group_norm", f"expects at least a 2-D input, got {list(x.shape)}")
    if last:
        x = transpose(x, [0, x.ndim - 1] + list(range(1, x.ndim - 1)))
    n, c = x.shape[0], x.shape[1]
    if c % num_groups:
        raise shape_error(
            "group_norm",
            f"{c} channels are not divisible into {num_groups} "
            f"groups (input shape {list(x.shape)})",
        )
    grouped = reshape(x, [n, num_groups, -1])
    y, _ = _normalized(grouped, (2,), float(epsilon))
    y = _affine(reshape(y, x.shape), weight, bias, _other_axes(x.ndim, 1))
    if last:
        y = transpose(y, [0] + list(range(2, x.ndim)) + [1])
    return y

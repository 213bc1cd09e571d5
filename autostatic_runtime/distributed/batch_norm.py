"""Batch norm with per-device statistics in a data-parallel program.

Paddle's ``DataParallel`` runs one copy of the model per device, so each ``BatchNorm``
normalizes with the mean and variance of its own device's part of the batch. A compiled
data-parallel step here is one program over the whole batch that XLA splits across the
devices; while ``DataParallel`` traces its layer over ``D`` devices (``grouped``), training
batch norm computes the statistics of each of the ``D`` consecutive parts of the batch —
the part each device holds — and normalizes each part with its own::

    xg = reshape(x, [D, N / D, C, H, W])               # part d is device d's
    mean = mean(xg, axis=[1, 3, 4], keepdim=True)      # [D, 1, C, 1, 1]: per device
    var = mean((xg - mean) ** 2, axis=[1, 3, 4], keepdim=True)
    y = reshape((xg - mean) * rsqrt(var + eps), [N, C, H, W]) * weight + bias

XLA partitions these reductions along the split dimension, so they need no communication.
The running statistics are updated with the average over the devices of their batch
statistics (``running = momentum * running + (1 - momentum) * mean_d(stat_d)``): what one
gets by averaging the running statistics of Paddle's per-device copies, which start equal
and are updated linearly. (Paddle keeps each device's own; a checkpoint saved from rank 0
holds rank 0's.)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_local = threading.local()


def device_groups() -> int:
    """The number of devices whose statistics ``batch_norm`` keeps apart in this thread (1:
    the whole batch)."""
    return getattr(_local, "groups", 1)


@contextlib.contextmanager
def grouped(groups: int) -> Iterator[None]:
    """Trace batch norm with the statistics of ``groups`` parts of the batch."""
    saved = device_groups()
    _local.groups = groups
    try:
        yield
    finally:
        _local.groups = saved


def grouped_batch_norm(
    x: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any,
    bias: Any,
    momentum: float,
    epsilon: float,
    axis: int,
    groups: int,
) -> Any:
    """Training batch norm of ``x`` (channels on ``axis``) with the statistics of each of
    ``groups`` consecutive parts of its batch (see the module docstring); updates the running
    statistics with their average."""
    import autostatic_runtime as rt
    from autostatic_runtime.errors import DistributedError, user_location
    from autostatic_runtime.nn.functional.norm import _update_running

    shape = list(x.shape)
    if shape[0] >= 0 and shape[0] % groups:
        raise DistributedError(
            f"batch_norm in a DataParallel step over {groups} devices: its input has "
            f"{shape[0]} rows, which do not divide by {groups} (each device normalizes "
            "its own part of the batch)",
            user_location(),
        )
    rest = [d if d >= 0 else -1 for d in shape[1:]]
    part = shape[0] // groups if shape[0] >= 0 else -1
    if part < 0 and -1 in rest:
        raise DistributedError(
            "batch_norm in a DataParallel step: the input's batch and another dimension are "
            "both unknown while tracing; give the other dimensions in the InputSpec",
            user_location(),
        )
    xg = rt.reshape(x, [groups, part, *rest])
    axes = [1] + [i + 1 for i in range(1, len(shape)) if i != axis]
    mean = rt.mean(xg, axis=axes, keepdim=True)
    centered = xg - mean
    var = rt.mean(centered * centered, axis=axes, keepdim=True)
    y = rt.reshape(centered * rt.rsqrt(var + epsilon), [-1, *rest])
    spread = [1] * len(shape)
    spread[axis] = -1
    if weight is not None:
        y = y * rt.reshape(weight, spread)
    if bias is not None:
        y = y + rt.reshape(bias, spread)
    if running_mean is not None:
        _update_running(running_mean, _average(mean), momentum)
        _update_running(running_var, _average(var), momentum)
    return y


def _average(stat: Any) -> Any:
    """The [C] average over the devices of a per-device statistic of shape [D, 1, ...C...]."""
    import autostatic_runtime as rt

    return rt.reshape(rt.mean(stat, axis=0), [-1])

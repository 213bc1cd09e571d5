"""Paddle's ``paddle.distributed.sharding.group_sharded_parallel``: a model and its optimizer
prepared for training with the optimizer state split over the devices (ZeRO).

    model, opt, scaler = group_sharded_parallel(model, opt, level="os")
    step = autostatic.to_static(train_step, backend="xla")
    ...
    save_group_sharded_model(model, "out", opt)    # every rank calls it; rank 0 writes

Levels ``"os"`` (the optimizer state split, ZeRO stage 1) and ``"os_g"`` (stage 2: the
gradients too) are ``DataParallel(model, shard_optimizer_state=True)``: the gradients exist
only inside the compiled step, where XLA's partitioner already reduces each one to the
devices whose state part needs it. ``"p_g_os"`` (stage 3, the parameters split as well) is
not supported.
"""

from __future__ import annotations

import os
from typing import Any

from autostatic_runtime.distributed.parallel import DataParallel
from autostatic_runtime.errors import DistributedError, user_location

__all__ = ["group_sharded_parallel", "save_group_sharded_model"]

LEVELS = ("os", "os_g", "p_g_os")


def group_sharded_parallel(
    model: Any,
    optimizer: Any,
    level: str,
    scaler: Any = None,
    group: Any = None,
    offload: bool = False,
    sync_buffers: bool = False,
    buffer_max_size: int = 2**23,
    segment_size: int = 2**20,
    sync_comm: bool = False,
    dp_group: Any = None,
    exclude_layer: Any = None,
) -> tuple:
    """``(model, optimizer, scaler)`` for sharded data-parallel training: ``model`` wrapped
    in ``DataParallel(..., shard_optimizer_state=True)`` (a ``DataParallel`` already is
    switched to it); the optimizer and scaler as they are (their state is split when the
    compiled step runs). Paddle's buffer and communication knobs are accepted and unused;
    ``group``/``dp_group`` must be None and ``offload`` False."""
    if level not in LEVELS:
        raise ValueError(f"group_sharded_parallel: level must be one of {LEVELS}, got {level!r}")
    if level == "p_g_os":
        raise DistributedError(
            "group_sharded_parallel(level='p_g_os'): splitting the parameters (ZeRO stage 3) "
            "is not supported; use level='os' or 'os_g' (the optimizer state split over the "
            "devices, the parameters replicated)",
            user_location(),
        )
    if group is not None or dp_group is not None:
        raise DistributedError(
            "group_sharded_parallel: groups are not supported (group and dp_group must be "
            "None: the state is split over every device of the job)",
            user_location(),
        )
    if offload:
        raise DistributedError(
            "group_sharded_parallel(offload=True): offloading the state to the host is not "
            "supported; leave offload=False",
            user_location(),
        )
    if isinstance(model, DataParallel):
        model.shard_optimizer_state = True
    else:
        model = DataParallel(model, shard_optimizer_state=True)
    return model, optimizer, scaler


def save_group_sharded_model(model: Any, output: str, optimizer: Any = None) -> None:
    """Save ``model`` (and ``optimizer``) under the folder ``output`` as Paddle does:
    ``model.pdmodel`` and ``model.pdopt``, whole arrays gathered from the devices and
    processes (every rank must call it; rank 0 writes). Load them with ``rt.load``."""
    from autostatic_runtime.io import save

    if os.path.isfile(output):
        raise ValueError(f"save_group_sharded_model: output {output!r} is a file, not a folder")
    os.makedirs(output, exist_ok=True)
    layer = model._layers if isinstance(model, DataParallel) else model
    save(layer.state_dict(), os.path.join(output, "model.pdmodel"))
    if optimizer is not None:
        save(optimizer.state_dict(), os.path.join(output, "model.pdopt"))

"""Collectives on eager tensors between the processes of a job (Paddle's
``paddle.distributed.all_reduce``/``all_gather``/``broadcast``), for what a script does
outside its compiled step: averaging a metric, agreeing on a value.

    correct = rt.to_tensor([float(hits)])
    rt.distributed.all_reduce(correct)            # in place: the sum over the ranks

They run on JAX's own cross-process collectives (``jax.experimental.multihost_utils``, the
job ``init_parallel_env`` joined); in a single process they leave the tensor as it is. A
compiled step needs none: its loss and gradients are the whole batch's already.
"""

from __future__ import annotations

import enum
import os
from typing import Any

import numpy as np

from autostatic_runtime.distributed.env import get_rank, get_world_size, is_initialized
from autostatic_runtime.errors import DistributedError, user_location
from autostatic_runtime.tensor import Tensor

__all__ = ["ReduceOp", "all_reduce", "all_gather", "broadcast", "ParallelEnv"]


class ReduceOp(enum.IntEnum):
    """How ``all_reduce`` combines the ranks' values (``paddle.distributed.ReduceOp``)."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_REDUCE = {
    ReduceOp.SUM: np.sum,
    ReduceOp.MAX: np.max,
    ReduceOp.MIN: np.min,
    ReduceOp.PROD: np.prod,
    ReduceOp.AVG: np.mean,
}


def _eager(name: str, tensor: Any) -> Tensor:
    if not isinstance(tensor, Tensor):
        kind = type(tensor).__name__
        hint = (
            "inside a compiled step the loss and gradients are the whole batch's already; "
            "call it on an eager tensor, outside the step"
            if hasattr(tensor, "block")
            else "give it a tensor (rt.to_tensor)"
        )
        raise DistributedError(
            f"{name}: takes an eager Tensor, not {kind}; {hint}", user_location()
        )
    return tensor


def _check_group(name: str, group: Any) -> None:
    if group is not None:
        raise DistributedError(
            f"{name}: groups are not supported (group must be None: every rank of the job)",
            user_location(),
        )


def _gathered(tensor: Tensor) -> np.ndarray:
    """Every rank's value of ``tensor``, stacked in rank order (a collective: every rank
    must call it)."""
    from jax.experimental import multihost_utils

    value = tensor.numpy()
    try:
        return np.asarray(multihost_utils.process_allgather(value, tiled=False))
    except Exception as exc:  # noqa: BLE001 - a rank gone, or shapes that differ
        raise DistributedError(
            f"a collective of a job of {get_world_size()} processes failed (every rank must "
            f"call it, with tensors of one shape and dtype; shape here {list(value.shape)}): "
            f"{type(exc).__name__}: {exc}",
            user_location(),
        ) from exc


def _set(tensor: Tensor, value: np.ndarray) -> None:
    tensor.set_value(value.astype(tensor.numpy().dtype, copy=False))


def all_reduce(
    tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, sync_op: bool = True
):
    """Combine ``tensor`` over the ranks with ``op``, in place on every rank."""
    tensor = _eager("all_reduce", tensor)
    _check_group("all_reduce", group)
    try:
        reduce = _REDUCE[ReduceOp(op)]
    except ValueError:
        raise DistributedError(
            f"all_reduce: op {op!r} is not one of ReduceOp.SUM/MAX/MIN/PROD/AVG", user_location()
        ) from None
    if is_initialized() and get_world_size() > 1:
        _set(tensor, reduce(_gathered(tensor), axis=0))
    return None


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None, sync_op: bool = True):
    """Append every rank's ``tensor`` to ``tensor_list``, in rank order, on every rank."""
    tensor = _eager("all_gather", tensor)
    _check_group("all_gather", group)
    if not (is_initialized() and get_world_size() > 1):
        tensor_list.append(tensor.clone())
        return None
    from autostatic_runtime.creation import to_tensor

    tensor_list.extend(to_tensor(v) for v in _gathered(tensor))
    return None


def broadcast(tensor: Tensor, src: int = 0, group: Any = None, sync_op: bool = True):
    """Give every rank rank ``src``'s value of ``tensor``, in place."""
    tensor = _eager("broadcast", tensor)
    _check_group("broadcast", group)
    world = get_world_size()
    if not 0 <= int(src) < world:
        raise DistributedError(
            f"broadcast: src {src} is not one of the job's ranks 0..{world - 1}", user_location()
        )
    if is_initialized() and world > 1:
        _set(tensor, _gathered(tensor)[int(src)])
    return None


class ParallelEnv:
    """This process's place in the job (``paddle.distributed.ParallelEnv``)."""

    @property
    def rank(self) -> int:
        return get_rank()

    @property
    def local_rank(self) -> int:
        """The rank among this host's processes (``LOCAL_RANK`` from the launcher)."""
        from autostatic_runtime.distributed.env import _env_int

        return _env_int(("PADDLE_LOCAL_RANK", "LOCAL_RANK"), get_rank())

    @property
    def world_size(self) -> int:
        return get_world_size()

    nranks = world_size

    @property
    def device_id(self) -> int:
        """The first local device this process takes (``--devices`` of the launcher)."""
        local = os.environ.get("AUTOSTATIC_LOCAL_DEVICES")
        return int(local.split(",")[0]) if local else 0

    dev_id = device_id

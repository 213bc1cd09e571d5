"""Checkpoints in a job: ``rt.save`` from every rank, written by rank 0.

Parameters and replicated state are the same in every process, so rank 0 alone can save
them: ``rt.save`` writes the file in rank 0 only and returns at once elsewhere, so both
Paddle's idiom (``if dist.get_rank() == 0: paddle.save(...)``) and calling it on every rank
work. Optimizer state split over the processes (``DataParallel(...,
shard_optimizer_state=True)`` in a job of several) is gathered first, which every rank must
take part in: ``rt.save`` then waits (at most ``GATHER_TIMEOUT`` seconds) for every rank to
call it too, and otherwise raises a ``DistributedError`` saying so instead of hanging. The
file holds whole arrays, so a job of any size (one process included) loads it.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from autostatic_runtime.distributed.env import _client, get_rank, get_world_size
from autostatic_runtime.errors import DistributedError, user_location
from autostatic_runtime.tensor import Tensor

__all__ = ["host_arrays", "writes_here"]

GATHER_TIMEOUT = 120  # seconds every rank gets to reach a save that gathers
_saves = itertools.count()


def writes_here() -> bool:
    """Whether this process writes the files ``rt.save`` is asked for (rank 0's)."""
    return get_rank() == 0


def host_arrays(values: dict[str, Any]) -> dict[str, np.ndarray]:
    """``values`` (Tensors and NumPy arrays) as NumPy arrays: the whole value of each,
    gathered from the processes that hold its parts."""
    out: dict[str, np.ndarray] = {}
    split: list[str] = []
    for key, value in values.items():
        if not isinstance(value, Tensor):
            out[key] = value
        elif _split_over_processes(value._data):
            split.append(key)
        else:
            out[key] = value.numpy()
    if split:
        gathered = _gather([values[key]._data for key in split])
        out.update(zip(split, gathered))
        return {key: out[key] for key in values}
    return out


def _split_over_processes(array: Any) -> bool:
    """Whether ``array`` is a JAX array whose parts live in other processes too."""
    if type(array).__module__.split(".")[0] not in ("jax", "jaxlib"):
        return False
    return not array.is_fully_addressable and not array.is_fully_replicated


def _gather(arrays: list) -> list[np.ndarray]:
    from jax.experimental import multihost_utils

    from autostatic_runtime.backends.jax_backend import x64

    client = _client()
    barrier = f"autostatic_save_{next(_saves)}"
    try:
        client.wait_at_barrier(barrier, GATHER_TIMEOUT * 1000)
    except Exception as exc:  # noqa: BLE001  (JAX's runtime error: a rank did not come)
        raise DistributedError(
            f"rt.save: the state holds arrays split over the job's {get_world_size()} "
            "processes (DataParallel(..., shard_optimizer_state=True)); gathering them needs "
            f"every rank, but not all called rt.save within {GATHER_TIMEOUT} s: call rt.save "
            "on every rank (only rank 0 writes the file)",
            user_location(),
        ) from exc
    with x64():
        return [np.asarray(a) for a in multihost_utils.process_allgather(arrays, tiled=True)]

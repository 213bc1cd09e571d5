"""The job this process belongs to: its rank, the number of processes, and joining them.

A job is several processes started together (``autostatic launch``, or by hand with the same
environment variables Paddle's launcher and ``torchrun`` set), each with its own devices,
that form one JAX runtime through ``jax.distributed``: ``jax.devices()`` is then every
device of every process, and a computation sharded over them runs XLA's collectives between
the processes (NCCL on GPUs, Gloo on CPUs). Nothing here communicates by itself.

    PADDLE_TRAINER_ID / RANK            this process's rank (0 .. world size - 1)
    PADDLE_TRAINERS_NUM / WORLD_SIZE    the number of processes
    MASTER_ADDR, MASTER_PORT            the coordinator (rank 0's host and a free port)
    AUTOSTATIC_LOCAL_DEVICES            the local device ids this process takes (e.g. "0")

Without them a process is a job of one: rank 0, world size 1.
"""

from __future__ import annotations

import os
import socket
import sys

from autostatic_runtime.errors import DistributedError

__all__ = ["init_parallel_env", "get_rank", "get_world_size", "is_initialized", "barrier"]

RANK_VARS = ("PADDLE_TRAINER_ID", "RANK")
WORLD_VARS = ("PADDLE_TRAINERS_NUM", "WORLD_SIZE")
INIT_TIMEOUT = 120  # seconds for every process to reach the coordinator


def _env_int(names: tuple, default: int) -> int:
    for name in names:
        value = os.environ.get(name)
        if value:
            try:
                return int(value)
            except ValueError:
                raise DistributedError(
                    f"the environment variable {name}={value!r} is not an int"
                ) from None
    return default


def _client():
    """The ``jax.distributed`` client of this process, or None outside a joined job."""
    if "jax" not in sys.modules:  # never joined: jax.distributed needs jax imported
        return None
    from jax._src import distributed

    return distributed.global_state.client


def is_initialized() -> bool:
    """Whether this process has joined a job of several processes (``init_parallel_env``)."""
    return _client() is not None


def get_rank() -> int:
    """This process's rank in the job (``paddle.distributed.get_rank``); 0 alone.

    Before ``init_parallel_env`` it is read from the environment (``PADDLE_TRAINER_ID`` or
    ``RANK``)."""
    if is_initialized():
        import jax

        return jax.process_index()
    return _env_int(RANK_VARS, 0)


def get_world_size() -> int:
    """The number of processes of the job (``paddle.distributed.get_world_size``); 1 alone.

    ``DataParallel`` splits a batch over every *device* of the job, which can be more
    (``device_count()``)."""
    if is_initialized():
        import jax

        return jax.process_count()
    return _env_int(WORLD_VARS, 1)


def coordinator() -> str | None:
    """``host:port`` of the job's coordinator from the environment, or None."""
    address = os.environ.get("MASTER_ADDR")
    port = os.environ.get("MASTER_PORT")
    if address and port:
        return f"{address}:{port}"
    return None


def free_port() -> int:
    """A TCP port nobody listens on at this moment (a job's coordinator binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_environment(rank: int, world: int, port: int, devices: str | None = None) -> dict:
    """The environment variables of rank ``rank`` of a job of ``world`` processes on this
    host (coordinator at ``127.0.0.1:port``), as Paddle's launcher and ``torchrun`` set
    them; ``devices``: the local device ids the rank takes. (``autostatic launch`` sets the
    same in ``hook/launch.py``, which does not load the runtime: it starts in ~0.06 s.)"""
    n = str(world)
    env = dict(
        PADDLE_TRAINER_ID=str(rank), PADDLE_TRAINERS_NUM=n, PADDLE_LOCAL_RANK=str(rank),
        RANK=str(rank), WORLD_SIZE=n, LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=n,
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), PYTHONUNBUFFERED="1",
    )  # fmt: skip
    if devices is not None:
        env["AUTOSTATIC_LOCAL_DEVICES"] = devices
    return env


def init_parallel_env() -> None:
    """Join the job of several processes (``paddle.distributed.init_parallel_env``).

    With a world size above one in the environment, connect to the coordinator through
    ``jax.distributed.initialize`` (CPU collectives over Gloo), so that ``jax.devices()``
    holds every process's devices. Call it first, before any JAX computation (before the
    first compiled step). In a single process, or when already joined, it does nothing."""
    world = _env_int(WORLD_VARS, 1)
    if world <= 1 or is_initialized():
        return
    rank = _env_int(RANK_VARS, 0)
    address = coordinator()
    if address is None:
        raise DistributedError(
            f"init_parallel_env: the environment says this is rank {rank} of {world} "
            "processes but names no coordinator (MASTER_ADDR and MASTER_PORT); start the "
            "job with `python -m autostatic launch --nproc_per_node N train.py`"
        )
    import jax
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        raise DistributedError(
            "init_parallel_env() must run before any JAX computation in this process (a "
            "compiled step, an XLA program, a JAX array): call it first in the script"
        )
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    kwargs = {}
    local = os.environ.get("AUTOSTATIC_LOCAL_DEVICES")
    if local:
        kwargs["local_device_ids"] = [int(i) for i in local.split(",")]
    jax.distributed.initialize(address, world, rank, initialization_timeout=INIT_TIMEOUT, **kwargs)


def barrier(name: str = "barrier") -> None:
    """Wait until every process of the job reaches here (``paddle.distributed.barrier``).

    Nothing to wait for in a single process."""
    if not is_initialized():
        return
    from jax.experimental import multihost_utils

    multihost_utils.sync_global_devices(name)

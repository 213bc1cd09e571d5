"""Training on several devices and processes (Paddle's ``paddle.distributed``).

    rt.distributed.init_parallel_env()        # join the job (``autostatic launch``, ``spawn``)
    rank, world = rt.distributed.get_rank(), rt.distributed.get_world_size()
    model = rt.DataParallel(model)            # compiled steps split the batch over devices

A data-parallel step is one XLA computation sharded over every device of the job by XLA's
own partitioner (``jax.sharding``; ``jax.distributed`` joins the processes): see
``parallel.py`` and ``sharding.py``. Importing this package imports no JAX.
"""

from autostatic_runtime.distributed import fleet  # (Paddle's submodule)
from autostatic_runtime.distributed.collective import (
    ParallelEnv,
    ReduceOp,
    all_gather,
    all_reduce,
    broadcast,
)
from autostatic_runtime.distributed.env import (
    barrier,
    get_rank,
    get_world_size,
    init_parallel_env,
    is_initialized,
)
from autostatic_runtime.distributed.group_sharded import (
    group_sharded_parallel,
    save_group_sharded_model,
)
from autostatic_runtime.distributed.parallel import DataParallel, device_count
from autostatic_runtime.distributed.spawn import spawn

__all__ = [
    "init_parallel_env",
    "get_rank",
    "get_world_size",
    "is_initialized",
    "barrier",
    "device_count",
    "DataParallel",
    "ParallelEnv",
    "ReduceOp",
    "all_reduce",
    "all_gather",
    "broadcast",
    "spawn",
    "group_sharded_parallel",
    "save_group_sharded_model",
    "fleet",
]

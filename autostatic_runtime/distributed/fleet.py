"""Paddle's ``paddle.distributed.fleet`` for collective (data-parallel) training, the other
way Paddle's scripts start one:

    from autostatic_runtime.distributed import fleet

    fleet.init(is_collective=True)                 # init_parallel_env()
    model = fleet.distributed_model(model)         # DataParallel(model)
    opt = fleet.distributed_optimizer(opt)         # opt: XLA averages inside the step

A ``DistributedStrategy`` with ``sharding`` (stage 1 or 2) splits the optimizer state
(``DataParallel(..., shard_optimizer_state=True)``). Model and pipeline parallelism
(``hybrid_configs`` with ``mp_degree``/``pp_degree`` above one), parameter servers and
sharding stage 3 are clear errors; the strategy's other switches (``amp``, ``recompute``,
fusion and communication knobs) are accepted and unused: mixed precision is ``rt.amp``'s,
and XLA schedules the step.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.distributed.env import (
    barrier,
    get_rank,
    get_world_size,
    init_parallel_env,
)
from autostatic_runtime.distributed.parallel import DataParallel
from autostatic_runtime.errors import DistributedError, user_location

__all__ = [
    "DistributedStrategy",
    "init",
    "distributed_model",
    "distributed_optimizer",
    "worker_index",
    "worker_num",
    "is_first_worker",
    "barrier_worker",
]


class DistributedStrategy:
    """Paddle's ``fleet.DistributedStrategy``: switches set as attributes. Read here:
    ``sharding`` with ``sharding_configs["stage"]``, and ``hybrid_configs``' degrees."""

    def __init__(self) -> None:
        self.sharding = False
        self.sharding_configs: dict = {}
        self.hybrid_configs: dict = {}
        self.amp = False
        self.amp_configs: dict = {}
        self.recompute = False
        self.find_unused_parameters = False

    def __repr__(self) -> str:
        return f"DistributedStrategy({vars(self)})"


_strategy: list = [None]  # the strategy fleet.init was given


def init(
    role_maker: Any = None,
    is_collective: bool = False,
    strategy: DistributedStrategy | None = None,
    log_level: Any = "INFO",
) -> None:
    """Join the job for collective training (``init_parallel_env``); ``strategy`` is kept
    for ``distributed_model``."""
    if not is_collective:
        raise DistributedError(
            "fleet.init: only collective (data-parallel) training is supported: call "
            "fleet.init(is_collective=True); parameter-server training is not",
            user_location(),
        )
    if strategy is not None:
        _check(strategy)
    _strategy[0] = strategy
    init_parallel_env()


def distributed_model(model: Any) -> DataParallel:
    """``model`` for data-parallel training: ``DataParallel(model)``, with the optimizer
    state split when the strategy asks for sharding (stage 1 or 2)."""
    strategy = _strategy[0]
    sharded = bool(strategy is not None and strategy.sharding)
    if isinstance(model, DataParallel):
        model.shard_optimizer_state = model.shard_optimizer_state or sharded
        return model
    return DataParallel(model, shard_optimizer_state=sharded)


def distributed_optimizer(optimizer: Any, strategy: DistributedStrategy | None = None) -> Any:
    """``optimizer`` itself: the gradients it is given inside a compiled step are already
    the whole batch's (XLA all-reduces them). A ``strategy`` given here replaces ``init``'s."""
    if strategy is not None:
        _check(strategy)
        _strategy[0] = strategy
    return optimizer


def worker_index() -> int:
    """This process's rank."""
    return get_rank()


def worker_num() -> int:
    """The number of processes of the job."""
    return get_world_size()


def is_first_worker() -> bool:
    return get_rank() == 0


def barrier_worker() -> None:
    """Wait for every rank (``rt.distributed.barrier``)."""
    barrier("fleet_barrier_worker")


def _check(strategy: Any) -> None:
    if not isinstance(strategy, DistributedStrategy):
        raise TypeError(
            f"fleet: strategy must be a DistributedStrategy, not {type(strategy).__name__}"
        )
    degrees = {k: v for k, v in dict(strategy.hybrid_configs).items() if k != "dp_degree"}
    beyond = {k: v for k, v in degrees.items() if k.endswith("_degree") and int(v) > 1}
    if beyond:
        raise DistributedError(
            f"fleet: hybrid_configs {beyond} ask for model, pipeline or sequence parallelism, "
            "which is not supported; the job is data-parallel only (dp_degree, sharding)",
            user_location(),
        )
    stage = int(dict(strategy.sharding_configs).get("stage", 1))
    if strategy.sharding and stage not in (1, 2):
        raise DistributedError(
            f"fleet: sharding stage {stage} is not supported; stages 1 and 2 split the "
            "optimizer state over the devices (the parameters stay replicated)",
            user_location(),
        )

"""``rt.distributed.fleet``, Paddle's other way to start data-parallel training, in a single
process (two processes: ``spawn_job.py``, which trains through it): ``distributed_model`` is
``DataParallel``, sharding splits the optimizer state, what is not data parallelism is a
clear error."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.distributed import fleet
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, state_of, train


@pytest.fixture(autouse=True)
def _no_strategy():
    yield
    fleet._strategy[0] = None


def test_fleet_wraps_the_model_and_keeps_the_optimizer():
    fleet.init(is_collective=True)
    assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker()) == (0, 1, True)
    fleet.barrier_worker()
    net = BranchMLP()
    model = fleet.distributed_model(net)
    opt = OPTIMIZERS["Adam"](0.05, model.parameters())
    assert isinstance(model, rt.DataParallel) and model._layers is net
    assert not model.shard_optimizer_state
    assert fleet.distributed_optimizer(opt) is opt

    def through_fleet():
        return fleet.distributed_model(BranchMLP())

    plain = train(False, BranchMLP, OPTIMIZERS["Adam"])
    wrapped = train(True, through_fleet, OPTIMIZERS["Adam"], backend="xla")
    np.testing.assert_allclose(wrapped[0], plain[0], rtol=1e-5)
    for want, got in zip(state_of(*plain[1:3]), state_of(*wrapped[1:3])):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_sharding_strategy_splits_the_optimizer_state():
    strategy = fleet.DistributedStrategy()
    strategy.sharding = True
    strategy.sharding_configs = {"sharding_degree": 2, "stage": 2}
    strategy.hybrid_configs = {"dp_degree": 2, "mp_degree": 1, "pp_degree": 1}
    fleet.init(is_collective=True, strategy=strategy)
    assert fleet.distributed_model(BranchMLP()).shard_optimizer_state


def test_what_is_not_data_parallelism_is_a_clear_error():
    with pytest.raises(rt.DistributedError, match="is_collective=True"):
        fleet.init()
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2, "pp_degree": 1}
    with pytest.raises(rt.DistributedError, match="'mp_degree': 2.*data-parallel only"):
        fleet.init(is_collective=True, strategy=strategy)
    strategy = fleet.DistributedStrategy()
    strategy.sharding, strategy.sharding_configs = True, {"stage": 3}
    with pytest.raises(rt.DistributedError, match="sharding stage 3 is not supported"):
        fleet.distributed_optimizer(object(), strategy)
    with pytest.raises(TypeError, match="must be a DistributedStrategy"):
        fleet.init(is_collective=True, strategy={"sharding": True})

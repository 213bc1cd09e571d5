"""``rt.DataParallel`` steps compiled by XLA over several devices (4 simulated CPU devices in
a subprocess, ``dp_devices.py``) give the losses and state of their one-device references;
on one device, eagerly and on the default executor a ``DataParallel`` layer is its layer;
``rt.distributed`` in a single process is a job of one."""

from __future__ import annotations

import json

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.errors import DistributedError
from tests.distributed.cases import DEVICES, data_parallel
from tests.distributed.conftest import run
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, state_of, train

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    done = run(
        ["-m", "tests.distributed.dp_devices"], tmp_path_factory.mktemp("dp"),
        XLA_FLAGS=f"--xla_force_host_platform_device_count={DEVICES}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_data_parallel_mlp_trains_as_the_whole_batch_on_one_device(report):
    assert report["devices"] == DEVICES
    for case in ("mlp", "zero"):  # zero: Adam's moments split over the devices (ZeRO-1)
        assert report[case]["losses"] < TOLERANCE, case
        assert report[case]["state"] < TOLERANCE, case
        assert report[case]["count"] == 20  # 4 parameters, 16 accumulators
    assert report["replicated"] == "P()"
    assert report["zero_specs"] == ["P('dp',)", "P()"]  # moments split, beta powers not
    assert report["group_sharded"]["losses"] < TOLERANCE  # Paddle's group_sharded_parallel
    assert report["group_sharded"]["state"] < TOLERANCE
    assert report["group_sharded_specs"] == ["P('dp',)", "P()"]
    assert report["saved_moments"] == 0.0  # save_group_sharded_model gathers them whole
    assert report["saved_model"] == sorted(BranchMLP().state_dict())
    assert "data-parallel over 4 devices" in report["explain"][0]


def test_random_numbers_are_a_one_device_steps(report):
    assert report["dropout"]["losses"] < TOLERANCE
    assert report["dropout"]["state"] < TOLERANCE


def test_batch_norm_statistics_are_each_devices_own(report):
    assert report["conv"]["losses"] < TOLERANCE
    assert report["conv"]["state"] < TOLERANCE  # running statistics: the replicas' average
    # the statistics of the whole batch would give other values
    assert report["conv_whole_batch"]["losses"] > 1e-3


def test_a_batch_that_does_not_divide_by_the_devices_is_a_clear_error(report):
    message = report["odd_batch"]
    assert message is not None
    assert "the batch has 6 samples, which does not divide by 4 devices" in message
    assert "train_cases.py:" in message  # the user's line: net(x) in the step
    assert report["eager_same"]


def test_on_one_device_a_data_parallel_step_is_the_layers_step():
    adam = OPTIMIZERS["Adam"]
    plain = train(False, BranchMLP, adam)
    for backend in (None, "xla"):
        dp = train(True, data_parallel(BranchMLP), adam, backend=backend)
        np.testing.assert_allclose(dp[0], plain[0], rtol=1e-5)
        for want, got in zip(state_of(*plain[1:3]), state_of(*dp[1:3])):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    model = dp[1]
    assert list(model.state_dict()) == list(model._layers.state_dict())  # no prefix
    assert all(a is b for a, b in zip(model.parameters(), model._layers.parameters()))
    loss = rt.mean(model(rt.ones([2, 6])))  # Paddle 1.x's explicit scaling and all-reduce
    assert model.scale_loss(loss) is loss and model.apply_collective_grads() is None


def test_group_sharded_parallel_levels_and_errors(tmp_path):
    from autostatic_runtime.distributed.sharding import group_sharded_parallel

    net = BranchMLP()
    opt = OPTIMIZERS["Adam"](0.1, net.parameters())
    model, same_opt, scaler = group_sharded_parallel(net, opt, "os")
    assert isinstance(model, rt.DataParallel) and model.shard_optimizer_state
    assert model._layers is net and same_opt is opt and scaler is None
    assert group_sharded_parallel(model, opt, "os_g")[0] is model
    with pytest.raises(DistributedError, match="ZeRO stage 3.*use level='os' or 'os_g'"):
        group_sharded_parallel(net, opt, "p_g_os")
    with pytest.raises(ValueError, match="level must be one of"):
        group_sharded_parallel(net, opt, "zero1")
    with pytest.raises(DistributedError, match="offload"):
        group_sharded_parallel(net, opt, "os", offload=True)
    rt.distributed.save_group_sharded_model(model, str(tmp_path / "out"), opt)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model.pdmodel", "model.pdopt"]
    assert sorted(rt.load(str(tmp_path / "out" / "model.pdmodel"))) == sorted(net.state_dict())


def test_a_single_process_is_a_job_of_one(monkeypatch, tmp_path):
    dist = rt.distributed
    rt.distributed.init_parallel_env()  # nothing to join
    assert (dist.get_rank(), dist.get_world_size(), dist.is_initialized()) == (0, 1, False)
    dist.barrier()
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    assert (dist.get_rank(), dist.get_world_size()) == (1, 2)
    rt.save({"w": rt.ones([2])}, tmp_path / "rank1.pd")  # only rank 0 writes
    assert not (tmp_path / "rank1.pd").exists()
    with pytest.raises(DistributedError, match="init_parallel_env"):
        rt.DataParallel(BranchMLP())  # a job of two that was never joined
    with pytest.raises(DistributedError, match="MASTER_ADDR and MASTER_PORT"):
        dist.init_parallel_env()
    monkeypatch.setenv("PADDLE_TRAINER_ID", "0")
    rt.save({"w": rt.ones([2])}, tmp_path / "rank0.pd")
    assert (tmp_path / "rank0.pd").exists()


def test_what_a_job_of_several_processes_cannot_train_is_a_clear_error(monkeypatch):
    """Only a whole step compiled by XLA averages the gradients over the processes."""
    from autostatic_runtime.distributed import parallel

    monkeypatch.setattr(parallel, "get_world_size", lambda: 2)
    monkeypatch.setattr(parallel, "is_initialized", lambda: True)
    monkeypatch.setattr(parallel, "_sync_from_rank_zero", lambda layer: None)
    adam = OPTIMIZERS["Adam"]
    with pytest.raises(DistributedError, match="2 processes a model trains only inside"):
        train(False, data_parallel(BranchMLP), adam, steps=1)
    with pytest.raises(DistributedError, match="traced for the default executor"):
        train(True, data_parallel(BranchMLP), adam, steps=1)
    model = rt.DataParallel(BranchMLP())
    model.eval()  # evaluating is each process's own business
    with rt.no_grad():
        model(rt.ones([2, 6]))

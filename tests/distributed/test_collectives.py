"""``rt.distributed``'s eager collectives and ``ParallelEnv`` in a single process (a job of
several: ``test_launch.py``): the tensor as it is, Paddle's signatures, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import distributed as dist


def test_in_a_single_process_collectives_leave_the_tensor_as_it_is():
    t = rt.to_tensor([1.0, -2.0])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.AVG):
        assert dist.all_reduce(t, op=op) is None
    np.testing.assert_array_equal(t.numpy(), [1.0, -2.0])
    gathered: list = []
    dist.all_gather(gathered, t)
    assert len(gathered) == 1 and gathered[0] is not t
    np.testing.assert_array_equal(gathered[0].numpy(), [1.0, -2.0])
    dist.broadcast(t, src=0)
    np.testing.assert_array_equal(t.numpy(), [1.0, -2.0])


def test_parallel_env_reads_the_job(monkeypatch):
    env = dist.ParallelEnv()
    assert (env.rank, env.world_size, env.nranks, env.local_rank, env.dev_id) == (0, 1, 1, 0, 0)
    monkeypatch.setenv("PADDLE_TRAINER_ID", "3")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("AUTOSTATIC_LOCAL_DEVICES", "1")
    assert (env.rank, env.nranks, env.local_rank, env.device_id) == (3, 4, 1, 1)


def test_collective_errors_say_what_to_do():
    t = rt.to_tensor([1.0])
    with pytest.raises(rt.DistributedError, match="src 2 is not one of the job's ranks 0..0"):
        dist.broadcast(t, src=2)
    with pytest.raises(rt.DistributedError, match="op 9 is not one of ReduceOp"):
        dist.all_reduce(t, op=9)
    with pytest.raises(rt.DistributedError, match="groups are not supported"):
        dist.all_reduce(t, group=object())
    with pytest.raises(rt.DistributedError, match="give it a tensor"):
        dist.all_reduce(np.ones(2))

    @autostatic.to_static
    def step(x):
        dist.all_reduce(x)
        return x

    with pytest.raises(rt.DistributedError, match="inside a compiled step") as info:
        step(t)
    assert "test_collectives.py" in str(info.value)

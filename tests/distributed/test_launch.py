"""``autostatic launch``: two processes on this host form one job whose data-parallel steps
give the one-device losses; their checkpoint (optimizer state split over the processes,
gathered by ``rt.save``) loads into a job of one; a killed rank ends the job at once with
its status and a line saying so."""

from __future__ import annotations

import numpy as np
import pytest

from autostatic.hook import launch
from tests.distributed.conftest import json_lines, run
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, batches, train

LAUNCH = ["-m", "autostatic", "launch", "--nproc_per_node", "2", "--log_dir", "log"]
JOB = ["-m", "tests.distributed.job"]


def losses_of(lines: list[dict], rank: int) -> list[float]:
    return [d["loss"] for d in lines if d["rank"] == rank and "loss" in d]


def test_two_processes_train_as_one_device_and_their_checkpoint_loads_in_one(tmp_path):
    done = run([*LAUNCH, *JOB, "--save", "ckpt.pd"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    reference = train(False, BranchMLP, OPTIMIZERS["Adam"], data=batches(4, shape=(8, 6)))[0]
    logs = [(tmp_path / "log" / f"workerlog.{r}").read_text() for r in (0, 1)]
    for rank, log in enumerate(logs):
        np.testing.assert_allclose(losses_of(json_lines(log), rank), reference[:3], rtol=1e-5)
    assert losses_of(json_lines(done.stdout), 0)  # rank 0's output is printed too
    for rank, log in enumerate(logs):  # the eager collectives
        (found,) = [d for d in json_lines(log) if "sum" in d]
        assert found == {"rank": rank, "sum": 3.0, "gathered": [0, 1], "broadcast": 10.0}
    (alone,) = [d["alone"] for d in json_lines(logs[0]) if "alone" in d]
    assert "needs every rank, but not all called rt.save within 1 s" in alone
    assert not (tmp_path / "ckpt.pd.alone").exists()
    resumed = run([*JOB, "--resume", "ckpt.pd"], tmp_path)  # a job of one process
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    np.testing.assert_allclose(losses_of(json_lines(resumed.stdout), 0), reference[3:], rtol=1e-5)


def test_a_killed_rank_stops_the_job_with_its_status(tmp_path):
    done = run([*LAUNCH, *JOB, "--die-after", "0"], tmp_path)
    assert done.returncode == 128 + 9  # rank 1's SIGKILL
    assert "autostatic launch: rank 1 of 2 was killed by SIGKILL" in done.stderr
    assert "the other ranks were stopped" in done.stderr
    rank0 = (tmp_path / "log" / "workerlog.0").read_text()
    assert "Traceback" not in rank0 or "DistributedError" in rank0  # stopped, or said why


def test_launch_options():
    opts = launch.parse(["--nproc_per_node=3", "--log_dir", "out", "train.py", "--lr", "1"])
    assert (opts.nproc, opts.log_dir, opts.command) == (3, "out", ["train.py", "--lr", "1"])
    env = launch.rank_env(2, opts, 1234)
    assert (env["PADDLE_TRAINER_ID"], env["PADDLE_TRAINERS_NUM"]) == ("2", "3")
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"]) == ("2", "3", "2")
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "1234")
    for bad in (["--nproc_per_node", "0", "t.py"], ["--nproc_per_node", "2"], ["--bogus", "t.py"]):
        with pytest.raises(ValueError):
            launch.parse(bad)
    opts = launch.parse(["--devices", "0,1", "train.py"])  # one process per device, as Paddle's
    assert (opts.nproc, opts.devices) == (2, ["0", "1"])
    assert launch.rank_env(1, opts, 1)["AUTOSTATIC_LOCAL_DEVICES"] == "1"
    assert launch.parse(["--gpus=0,1,2", "--nproc_per_node", "2", "t.py"]).nproc == 2
    paddle_style = launch.parse(["--master", "127.0.0.1:8090", "--nnodes", "1", "t.py"])
    assert paddle_style.master_port == 8090
    with pytest.raises(ValueError, match="on this host only; for several hosts"):
        launch.parse(["--master", "10.0.0.5:8090", "t.py"])
    with pytest.raises(ValueError, match="--nnodes 2: the launcher starts a job on this host"):
        launch.parse(["--nnodes", "2", "t.py"])
    assert launch.exit_status(-9) == 137 and launch.exit_status(3) == 3
    assert launch.main(["--nproc_per_node", "x", "t.py"]) == 2

"""``rt.distributed.spawn``: two processes started from Python form one job whose
data-parallel steps give the one-device losses; a rank that fails stops the job, and
``spawn`` raises with its traceback (never a hang)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import autostatic_runtime as rt
from tests.distributed.conftest import run
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, batches, train

JOB = ["-m", "tests.distributed.spawn_job"]


def test_two_spawned_processes_train_as_one_device(tmp_path):
    done = run([*JOB, "2"], tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    reference = train(False, BranchMLP, OPTIMIZERS["Momentum"], data=batches(3, shape=(8, 6)))[0]
    for rank in (0, 1):
        losses = json.loads((tmp_path / f"losses.{rank}").read_text())
        np.testing.assert_allclose(losses, reference, rtol=1e-5)


def test_a_failing_rank_stops_the_spawned_job_and_spawn_raises_its_error(tmp_path):
    start = time.monotonic()
    done = run([*JOB, "2", "--fail-rank", "1"], tmp_path)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-3000:]
    assert "spawn failed: spawn: rank 1 of 2 exited with status 1 with:" in done.stdout
    assert "ValueError: rank 1 fails on purpose" in done.stdout
    assert "the other ranks were stopped" in done.stdout
    assert time.monotonic() - start < 60
    assert not (tmp_path / "losses.0").exists()


def test_spawn_arguments():
    with pytest.raises(ValueError, match="nprocs must be a positive int"):
        rt.distributed.spawn(print, nprocs=0)
    with pytest.raises(ValueError, match="gpus names 1 devices for 2 processes"):
        rt.distributed.spawn(print, nprocs=2, gpus="0")
    with pytest.raises(TypeError, match="func must be callable"):
        rt.distributed.spawn("train")

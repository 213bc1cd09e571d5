"""Running the data-parallel scripts in subprocesses: JAX's device count and the job's
environment must be set before JAX starts, so these tests run their cases in fresh
interpreters (a few, each bounded by a timeout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 240  # seconds any one subprocess may take (a hang fails the test, never the suite)


def environment(**extra: str) -> dict:
    """The environment of a subprocess: this checkout first on the path, no job variables
    inherited, XLA's optimisation passes skipped (they change no compared value)."""
    env = {k: v for k, v in os.environ.items() if k not in JOB_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"
    env["JAX_PLATFORMS"] = "cpu"
    env.update(extra)
    return env


JOB_VARIABLES = (
    "XLA_FLAGS", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "RANK", "WORLD_SIZE",
    "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "AUTOSTATIC_LOCAL_DEVICES",
)  # fmt: skip


def run(args: list[str], tmp_path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=tmp_path, env=environment(**extra), capture_output=True,
        text=True, timeout=TIMEOUT,
    )  # fmt: skip


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture(autouse=True)
def _needs_jax():
    pytest.importorskip("jax")

"""Runtime test fixtures: every op applied in a runtime test has its inference checked."""

from __future__ import annotations

import pytest

import autostatic_runtime as rt
from tests.runtime.harness import inference_checked


@pytest.fixture(autouse=True)
def _check_inference():
    """Compare each op's shape/dtype inference with what its kernel returned."""
    with inference_checked():
        yield


@pytest.fixture(autouse=True)
def _restore_device_and_seed():
    device = rt.get_device()
    dtype = rt.get_default_dtype()
    rt.seed(2024)
    yield
    rt.set_device(device)
    rt.set_default_dtype(dtype)

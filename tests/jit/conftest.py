"""to_static tests start and end in eager mode, with to_static enabled and a fixed seed."""

from __future__ import annotations

import pytest

import autostatic_runtime as rt
from autostatic.jit import static_function


@pytest.fixture(autouse=True)
def _fresh_state():
    rt.seed(2024)
    static_function.enable_to_static(True)
    yield
    static_function.enable_to_static(True)
    rt.disable_static()

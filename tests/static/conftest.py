"""Static-program tests start and end in eager mode with fresh default programs."""

from __future__ import annotations

import pytest

import autostatic_runtime as rt
from autostatic_runtime.static import builder, executor


@pytest.fixture(autouse=True)
def _fresh_static_state():
    builder._main[0] = rt.static.Program()
    builder._startup[0] = rt.static.Program()
    executor._global_scope[0] = rt.static.Scope()
    rt.seed(2024)
    yield
    rt.disable_static()

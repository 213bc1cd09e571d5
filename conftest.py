"""Project-wide pytest set-up: hypothesis profiles and the GPU marker.

``AUTOSTATIC_EMULATED_GPU=1`` runs the session on ``tests/cupy_emulator.py``'s CPU stand-in
for CuPy (the ``gpu``-marked tests then run, on it); ``AUTOSTATIC_EMULATED_GPU=default``
also makes "gpu" every test's starting device (docs/distributed.md, "Before a GPU").
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(  # random search (README); tests/conftest.py loads it for the suite
    "explore", derandomize=False, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


_EMULATED_GPU = os.environ.get("AUTOSTATIC_EMULATED_GPU", "")
if _EMULATED_GPU:
    from tests.cupy_emulator import emulated_cupy

    _EMULATOR = emulated_cupy()  # (held: a collected generator would restore at once)
    _EMULATOR.__enter__()  # for the whole session

    if _EMULATED_GPU == "default":

        @pytest.fixture(autouse=True)
        def _start_on_the_emulated_gpu():
            import autostatic_runtime as rt

            rt.set_device("gpu")
            yield
            rt.set_device("gpu")


def _has_gpu() -> bool:
    try:
        from autostatic_runtime.backends.cupy_backend import CupyBackend

        return CupyBackend.available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

"""A long run (``AUTOSTATIC_FUZZ_EXAMPLES=N``) raises every fuzzer's example count, so no
fuzz test keeps the suite's per-test timeout then: it takes as long as its examples do."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("AUTOSTATIC_FUZZ_EXAMPLES"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.timeout(0))

"""Differential fuzzing on Python values: original == converted (both bodies).

``AUTOSTATIC_FUZZ_EXAMPLES=N`` sets the number of generated functions (default: a bounded
number that keeps CI fast); ``-m slow`` tests run a long campaign only when it is set.
Every shrunk counterexample found is kept in ``regressions.py``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.differential import check
from tests.fuzz.generator import functions
from tests.fuzz.regressions import PYTHON_CASES

EXAMPLES = int(os.environ.get("AUTOSTATIC_FUZZ_EXAMPLES", "0") or 0)

ARGS = st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.lists(st.integers(-3, 3), max_size=3))
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(max_examples=EXAMPLES or 40, **SETTINGS)
@given(source=functions(), inputs=st.lists(ARGS, min_size=1, max_size=4))
def test_converted_equals_original(source, inputs):
    check(source, inputs)


@pytest.mark.slow
@pytest.mark.skipif(not EXAMPLES, reason="set AUTOSTATIC_FUZZ_EXAMPLES=N for a long run")
@settings(max_examples=max(EXAMPLES, 1), derandomize=False, **SETTINGS)
@given(source=functions(), inputs=st.lists(ARGS, min_size=1, max_size=6))
def test_long_run(source, inputs):
    check(source, inputs)


@pytest.mark.parametrize("source, args", PYTHON_CASES)
def test_regression(source, args):
    check(source, [args])

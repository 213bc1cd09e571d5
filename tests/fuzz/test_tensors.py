"""Differential fuzzing on tensors: eager result == static program result.

The generator's ``tensor=True`` functions take two int64 tensors of shape [1]; their ``if``,
``while`` (with ``break``/``continue``/``else``), ternaries and ``and``/``or``/``not`` on tensor
conditions become ``cond``/``while``/``select``/logical ops. A function the symbolic path
cannot express must be rejected with a ``StaticBuildError`` (a clear error naming the line);
any other exception while tracing, or a different result, is a bug.

The comparison traces with ``rt.enable_static`` + ``static.program_guard`` + ``static.data`` and
runs with ``static.Executor`` (as ``tests/compiler/test_symbolic_path.py`` does); it can switch
to ``autostatic.testing.assert_equivalent`` once that lands.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import StaticBuildError
from tests.fuzz.differential import load
from tests.fuzz.generator import functions
from tests.fuzz.regressions import TENSOR_CASES

EXAMPLES = int(os.environ.get("AUTOSTATIC_FUZZ_EXAMPLES", "0") or 0)
STATS = {"traced": 0, "rejected": 0}


def eager(fn, arrays):
    try:
        out = fn(*[rt.to_tensor(a) for a in arrays])
    except Exception as exc:
        return ("raised", type(exc).__name__)
    return ("ok", np.asarray(out).reshape(-1).tolist())


def static_result(fn, arrays):
    """The program traced from ``fn`` run on ``arrays`` (``None``: rejected while tracing)."""
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = [static.data(f"a{i}", [1], "int64") for i in range(len(arrays))]
            try:
                out = fn(*args)
            except StaticBuildError:
                return None
    finally:
        rt.disable_static()
    feed = {f"a{i}": a for i, a in enumerate(arrays)}
    if not isinstance(out, static.Variable):  # a Python value: the result does not depend
        return ("ok", np.asarray(out).reshape(-1).tolist())  # on the inputs
    try:
        (got,) = static.Executor().run(main, feed, [out])
    except Exception as exc:
        return ("raised", type(exc).__name__)
    return ("ok", np.asarray(got).reshape(-1).tolist())


def check_tensors(source: str, inputs: list) -> None:
    original, converted = load(source)
    for a, b in inputs:
        arrays = [np.array([a], dtype=np.int64), np.array([b], dtype=np.int64)]
        want = eager(original, arrays)
        assert eager(converted, arrays) == want
        got = static_result(converted, arrays)
        if got is None:
            STATS["rejected"] += 1
            return
        STATS["traced"] += 1
        assert got == want, f"static differs on {(a, b)}:\n{source}\n{got} != {want}"


ARGS = st.tuples(st.integers(-5, 5), st.integers(-5, 5))
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(max_examples=EXAMPLES or 25, **SETTINGS)
@given(source=functions(tensor=True), inputs=st.lists(ARGS, min_size=1, max_size=3))
def test_static_equals_eager(source, inputs):
    check_tensors(source, inputs)


@pytest.mark.slow
@pytest.mark.skipif(not EXAMPLES, reason="set AUTOSTATIC_FUZZ_EXAMPLES=N for a long run")
@settings(max_examples=max(EXAMPLES, 1), derandomize=False, **SETTINGS)
@given(source=functions(tensor=True), inputs=st.lists(ARGS, min_size=1, max_size=3))
def test_long_run(source, inputs):
    check_tensors(source, inputs)


@pytest.mark.parametrize("source, args", TENSOR_CASES)
def test_regression(source, args):
    check_tensors(source, [args])

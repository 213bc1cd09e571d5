"""Generic checks over every op sample: inference, gradients, the strict array-API backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import autostatic_runtime as rt
from autostatic_runtime.ops.registry import OPS
from tests.runtime import harness
from tests.runtime.catalogue import EXEMPT, SAMPLES
from tests.runtime.harness import Arg, check_grad, example_values, run_sample

IDS = [s.id for s in SAMPLES]


def test_sample_ids_are_unique():
    dupes = {i for i in IDS if IDS.count(i) > 1}
    assert not dupes, f"give these samples distinct names: {sorted(dupes)}"


def test_every_registered_op_has_a_sample():
    covered = {s.op for s in SAMPLES} | {o for s in SAMPLES for o in s.also} | set(EXEMPT)
    missing = sorted(set(OPS) - covered)
    assert not missing, f"ops without a sample in tests/runtime/catalogue: {missing}"


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_runs_its_op_with_checked_inference(sample, dtype):
    harness.SEEN_OPS.clear()
    outs = run_sample(sample, example_values(sample, 0, dtype))
    assert outs, "the sample returned no tensor"
    assert sample.op in harness.SEEN_OPS, f"{sample.op} was not applied; ran {harness.SEEN_OPS}"
    for o in outs:
        if (
            o.dtype.kind == "f"
            and dtype == "float64"
            and any(isinstance(a, Arg) and a.kind == "float" for a in sample.args)
        ):
            assert o.dtype in (np.float64, np.float32)


GRAD_SAMPLES = [s for s in SAMPLES if s.grad]


@pytest.mark.parametrize("sample", GRAD_SAMPLES, ids=[s.id for s in GRAD_SAMPLES])
def test_gradient_matches_central_differences(sample):
    float_args = [a for a in sample.args if isinstance(a, Arg)]

    strategies = [
        a.distinct_strategy() if sample.distinct and a.kind == "float" else a.strategy("float64")
        for a in float_args
    ]

    @settings(max_examples=6, deadline=None)
    @given(st.tuples(*strategies))
    def check(values):
        values = list(values)
        if sample.distinct and len(values) == 2:  # max/min of two tensors: no ties between them
            gap = np.abs(np.subtract(*np.broadcast_arrays(*values)))
            assume(gap.size == 0 or gap.min() > 1e-3)
        inputs = harness.make_inputs(sample, values)
        wrt = [
            i
            for i, a in enumerate(sample.args)
            if isinstance(a, Arg) and a.kind == "float" and a.grad
        ]
        check_grad(sample.fn, inputs, wrt, rtol=sample.rtol, atol=sample.atol, label=sample.id)

    check()


STRICT_SAMPLES = [s for s in SAMPLES if s.strict]


@pytest.mark.parametrize("sample", STRICT_SAMPLES, ids=[s.id for s in STRICT_SAMPLES])
def test_same_result_on_array_api_strict(sample):
    values = example_values(sample, 1)
    expected = run_sample(sample, values)
    rt.set_device("array_api_strict")
    try:
        got = run_sample(sample, values)
    finally:
        rt.set_device("cpu")
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_no_strict_exclusion_without_reason():
    unexplained = [s.id for s in SAMPLES if not s.strict and not s.why_no_strict]
    assert not unexplained, f"set why_no_strict for: {unexplained}"

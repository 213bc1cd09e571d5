"""Strategies (shapes, dtypes, shared dims), the coverage observer and its warnings, the
failure report, and the zero cost of the observe hook when nobody observes."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.convert_ops as convert_ops
from autostatic import InputSpec
from autostatic.testing import (
    BranchCoverage,
    BranchCoverageWarning,
    EquivalenceError,
    assert_equivalent,
    input_specs_to_strategy,
    tensors,
)
from autostatic_runtime.static import observe

SPECS = [InputSpec([None, 3], "float32", "x"), InputSpec([None], "int64", "y"), 2.5]


@settings(max_examples=25, deadline=None)
@given(input_specs_to_strategy(SPECS))
def test_none_dims_at_the_same_position_share_a_size(args):
    x, y, c = args
    assert x.dtype == np.float32 and y.dtype == np.int64 and c == 2.5
    assert x.shape[1] == 3 and x.shape[0] == y.shape[0] and 1 <= x.shape[0] <= 4
    assert np.all(np.isfinite(x)) and np.all(np.abs(y) <= 8)


@settings(max_examples=25, deadline=None)
@given(
    input_specs_to_strategy(
        [InputSpec([None, None], name="q"), InputSpec([None, None], name="k")],
        dims={"q": ("batch", "len"), "k": ("batch", None)},
        max_side=6,
    )
)
def test_named_dims_are_consistent_across_arguments(args):
    q, k = args
    assert q.shape[0] == k.shape[0]
    assert max(q.shape + k.shape) <= 6


@settings(max_examples=10, deadline=None)
@given(tensors([None, 2], "float64", elements=st.floats(0, 1), max_side=3))
def test_tensors_gives_eager_tensors(t):
    assert isinstance(t, rt.Tensor) and t.dtype == "float64" and t.shape[1] == 2
    assert 0 <= float(rt.min(t)) and float(rt.max(t)) <= 1


def test_dims_must_match_the_rank():
    with pytest.raises(ValueError, match="has 1 entries"):
        input_specs_to_strategy([InputSpec([None, 2], name="x")], dims={"x": ("n",)})


def rarely(x):
    if rt.mean(x) > 100:  # never with the default elements
        x = x * 0
    return x


def test_a_branch_never_taken_is_warned_with_its_line():
    with pytest.warns(
        BranchCoverageWarning, match=r"test_strategies_and_coverage.py:\d+: the true"
    ):
        result = assert_equivalent(rarely, InputSpec([None], "float32", "x"), max_examples=5)
    (site,) = result.coverage.sites.values()
    assert site.taken[False] >= 1 and site.taken[True] == 0
    assert site.location[1] == rarely.__code__.co_firstlineno + 1


def both(x):
    if rt.mean(x) > 0:
        x = x * 2
    else:
        x = x - 1
    return x


def test_no_warning_when_both_branches_are_taken():
    with warnings.catch_warnings():
        warnings.simplefilter("error", BranchCoverageWarning)
        result = assert_equivalent(both, InputSpec([None], "float32", "x"), max_examples=30)
    assert "true" in result.coverage.summary()


def test_a_misconverted_branch_is_reported_at_the_users_line(monkeypatch):
    original = convert_ops.convert_ifelse

    def swapped(pred, true_fn, false_fn, *args, **kwargs):
        return original(pred, false_fn, true_fn, *args, **kwargs)

    monkeypatch.setattr(convert_ops, "convert_ifelse", swapped)
    with pytest.raises(EquivalenceError) as info:
        assert_equivalent(both, InputSpec([None], "float32", "x"), max_examples=30)
    err = info.value
    line = both.__code__.co_firstlineno + 1
    assert err.which == "c" and err.location[1] == line and err.max_difference > 0
    text = str(err)
    assert "the static program disagrees" in text and "x = array(" in text
    assert "First diverging op: cond at " in text and f":{line} (in both)" in text
    assert "if rt.mean(x) > 0:" in text and "convert_ifelse" in text


def test_observing_counts_cond_and_while_and_is_free_otherwise():
    def loop(x):
        i = rt.zeros([1])
        while i < rt.sum(x):
            i = i + 1
        return i

    plain = autostatic.to_static(loop, input_spec=[InputSpec([None], "float32", "x")])
    program = plain.get_concrete_program()
    fn = program.runner.prepare()
    assert "notify" not in fn.__source__ and "_n" not in fn.__source__  # not observing
    cov = BranchCoverage()
    watched = autostatic.to_static(loop, input_spec=[InputSpec([None], "float32", "x")])
    with cov.observing():
        watched(rt.to_tensor(np.array([1.0, 2.0], "float32")))
        watched(rt.to_tensor(np.array([-1.0], "float32")))
    (site,) = cov.sites.values()
    assert site.kind == "while" and dict(site.iterations) == {3: 1, 0: 1}
    assert not observe.active()


def test_importing_the_testing_package_and_plugin_does_not_import_gast():
    code = (
        "import sys; import autostatic, autostatic.testing, autostatic.testing.pytest_plugin; "
        "assert 'gast' not in sys.modules and 'hypothesis' not in sys.modules, 'loaded'"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def test_a_converted_function_that_disagrees_is_reported_as_such(monkeypatch):
    monkeypatch.setattr(autostatic, "convert", lambda fn: lambda x: fn(x) + 1)
    with pytest.raises(EquivalenceError, match=r"the converted function \(eager\) disagrees"):
        assert_equivalent(both, InputSpec([None], "float32", "x"), max_examples=5)


def picky(x):
    return x + rt.ones([3])  # raises eagerly unless x has 1 or 3 elements


def test_the_converted_function_must_raise_what_the_original_raises():
    result = assert_equivalent(picky, InputSpec([None], "float32", "x"), max_examples=20)
    assert result.examples >= 1

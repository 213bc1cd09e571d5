"""The project's own converter and op tests through ``assert_equivalent``: the converter's
tensor catalogue (``tests/compiler/test_symbolic_path.py``) and a few ops, original vs
converted vs static program, with gradients."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import strategies as st

import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic.testing import BranchCoverageWarning, assert_equivalent
from tests.compiler import test_symbolic_path as sp

X3 = InputSpec([3], "float32", "x")
SMALL = st.floats(-3, 3, width=32)

CATALOGUE = [
    sp.dyfunc_with_ifElse,
    sp.dyfunc_with_nested_ifElse,
    sp.depend_tensor_if,
    sp.elif_chain,
    sp.logic_in_conditions,
    sp.python_scalar_promoted_in_loop,
    sp.loop_then_if,
]


@pytest.mark.parametrize("fn", CATALOGUE, ids=[f.__name__ for f in CATALOGUE])
def test_catalogue_is_equivalent_with_gradients(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchCoverageWarning)  # narrow inputs, on purpose
        result = assert_equivalent(fn, X3, max_examples=10, check_grad=True, elements=SMALL)
    assert result.examples >= 1


def test_tensor_while_over_a_symbolic_length():
    result = assert_equivalent(
        sp.depend_tensor_while, InputSpec([None, 2], "float32", "x"), max_examples=8
    )
    assert result.coverage.sites  # the while op reported its iterations
    (site,) = result.coverage.sites.values()
    assert site.kind == "while" and min(site.iterations) >= 1


def _ops(x, y):
    h = rt.matmul(x, y)
    if rt.max(h) > 0:
        h = rt.nn.functional.relu(h) + rt.exp(-rt.abs(h))
    else:
        h = rt.tanh(h) * 2
    return {"h": h, "stats": (rt.mean(h), rt.sum(h, axis=0))}


def test_ops_with_named_dims_nested_outputs_and_gradients():
    specs = [InputSpec([None, None], "float32", "x"), InputSpec([None, 2], "float32", "y")]
    assert_equivalent(
        _ops, *specs, max_examples=10, check_grad=True, dims={"x": ("n", "k"), "y": ("k", None)}
    )


def _integer_ops(a):
    if rt.sum(a) > 0:
        a = a * 2
    return a % 3, rt.argmax(a)


def test_integer_outputs_compare_exactly():
    assert_equivalent(_integer_ops, InputSpec([None], "int64", "a"), max_examples=10)


class _Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = rt.nn.Linear(4, 8)
        self.fc2 = rt.nn.Linear(8, 2)

    def forward(self, x):
        h = rt.tanh(self.fc1(x))
        if rt.mean(h) > 0:
            h = rt.nn.functional.relu(h)
        else:
            h = h * 0.5
        return self.fc2(h)


def test_a_layer_with_parameter_gradients():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchCoverageWarning)
        result = assert_equivalent(
            _Net(), InputSpec([None, 4], "float32", "x"), max_examples=10, check_grad=True
        )
    assert result.examples >= 1

"""The converter's tensor catalogue through to_static: values and gradients agree with eager,
for any input (hypothesis), with one program per input shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autostatic
import autostatic_runtime as rt
from tests.compiler import test_symbolic_path as sp

FUNCTIONS = [
    sp.dyfunc_with_ifElse,
    sp.dyfunc_with_nested_ifElse,
    sp.depend_tensor_if,
    sp.elif_chain,
    sp.logic_in_conditions,
    sp.python_scalar_promoted_in_loop,
    sp.loop_then_if,
]
STATIC = {f.__name__: autostatic.to_static(f) for f in FUNCTIONS}


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _loss(outs):
    total = None
    for o in outs:
        if isinstance(o, rt.Tensor) and not o.stop_gradient:
            s = rt.sum(o * o)
            total = s if total is None else total + s
    return total


@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
@settings(max_examples=12, deadline=None)
@given(x=hnp.arrays(np.float32, (3,), elements=st.floats(-3, 3, width=32)))
def test_to_static_agrees_with_eager_in_values_and_gradients(fn, x):
    sf = STATIC[fn.__name__]
    xe = rt.to_tensor(x, stop_gradient=False)
    xs = rt.to_tensor(x, stop_gradient=False)
    want, got = _leaves(fn(xe)), _leaves(sf(xs))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
    le, ls = _loss(want), _loss(got)
    if le is None:
        return
    le.backward()
    ls.backward()
    np.testing.assert_allclose(xs.grad.numpy(), xe.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert len(sf.program_cache) == 1

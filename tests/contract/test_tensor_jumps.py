"""Return, break and continue lowered under tensor conditions give the
eager results when traced with ``autostatic.to_static`` (one program per spec, run on inputs
taking different paths at run time)."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from tests.contract import tensor_cases as tc

X1 = [[-5.0, -4.0], [-1.0, 0.0], [0.5, 0.5], [1.0, 2.0], [2.5, 3.5], [6.0, 1.0], [9.0, 9.0]]


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(u) for u in v]
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype=np.float64)


def _same(a, b):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
        return
    np.testing.assert_allclose(b.reshape(-1), a.reshape(-1), rtol=1e-5, atol=1e-5)


ONE_INPUT = [
    tc.ret_in_if, tc.ret_in_both_branches, tc.ret_nested_ifs, tc.ret_after_ret_dead_code,
    tc.ret_in_tensor_while, tc.ret_in_for_range_python, tc.ret_in_nested_loops, tc.ret_tuple,
    tc.continue_in_python_for, tc.continue_at_end, tc.continue_in_tensor_while,
    tc.break_in_python_for, tc.break_in_tensor_while, tc.break_and_continue, tc.break_on_data,
    tc.break_in_else_branch_loop, tc.while_with_break_then_return,
    tc.while_tensor_ret_break_continue, tc.early_returns_dispatch, tc.return_in_loop_with_else,
    tc.nested_tensor_whiles_inner_break, tc.nested_tensor_whiles_inner_return,
    tc.python_for_with_tensor_while_return, tc.continue_then_break_same_loop, tc.return_loop_var,
    tc.ternary_and_return, tc.walrus_in_tensor_if_return, tc.while_tensor_flag_loop,
    tc.while_with_inner_python_break_and_return, tc.return_in_else_branch_tensor_while,
    tc.while_else_continue_break, tc.helper_with_returns_in_loop,
    tc.while_over_dynamic_length_jumps,
]


@pytest.mark.parametrize("fn", ONE_INPUT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("spec", ["none", "batch"])
def test_eager_equals_static(fn, spec):
    specs = None if spec == "none" else [InputSpec([None], "float32", "x")]
    static = autostatic.to_static(fn, input_spec=specs)
    for values in X1:
        x = rt.to_tensor(np.array(values, dtype=np.float32))
        want = fn(x)
        got = static(x)
        _same(want, got)


@pytest.mark.parametrize("fn", [tc.for_over_tensor_rows_break, tc.for_over_tensor_rows_return,
                                tc.rows_with_inner_continue_then_break],
                         ids=lambda f: f.__name__)
def test_for_over_tensor_rows(fn):
    static = autostatic.to_static(fn, input_spec=[InputSpec([None, 2], "float32", "x")])
    for rows in ([[1.0, 2.0], [3.0, -9.0], [1.0, 1.0]], [[1.0, 1.0]], [[4.0, 4.0], [1.0, 0.0]],
                 [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [9.0, 9.0]]):
        x = rt.to_tensor(np.array(rows, dtype=np.float32))
        _same(fn(x), static(x))


def test_for_range_tensor_bound_with_continue():
    fn = tc.for_range_tensor_continue
    static = autostatic.to_static(fn)
    x = rt.to_tensor(np.array([2.0], dtype=np.float32))
    for n in (0, 1, 4, 7):
        nt = rt.to_tensor(np.array(n, dtype=np.int64))
        _same(fn(x, nt), static(x, nt))


GRAD_CASES = [tc.ret_in_if, tc.ret_nested_ifs, tc.ret_in_tensor_while, tc.break_on_data,
              tc.ret_in_nested_loops, tc.continue_in_python_for, tc.early_returns_dispatch,
              tc.while_tensor_ret_break_continue, tc.return_loop_var]


@pytest.mark.parametrize("fn", GRAD_CASES, ids=lambda f: f.__name__)
def test_gradients_through_lowered_jumps(fn):
    static = autostatic.to_static(fn, input_spec=[InputSpec([None], "float32", "x")])
    for values in X1:
        xe = rt.to_tensor(np.array(values, dtype=np.float32), stop_gradient=False)
        xs = rt.to_tensor(np.array(values, dtype=np.float32), stop_gradient=False)
        (ge,) = rt.grad(rt.sum(fn(xe) * 1.5), [xe])
        (gs,) = rt.grad(rt.sum(static(xs) * 1.5), [xs])
        np.testing.assert_allclose(gs.numpy(), ge.numpy(), rtol=1e-5, atol=1e-5)

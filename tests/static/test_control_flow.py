"""cond and while_loop: building, running, errors, and gradients that match eager mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import StaticBuildError

cond, while_loop = static.nn.cond, static.nn.while_loop


def run_static(fn, *arrays, grad_of=None):
    """Build ``fn`` over data vars for ``arrays``, run it; optionally d(sum(out))/d(inputs)."""
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = []
            for i, a in enumerate(arrays):
                v = static.data(f"a{i}", list(a.shape), str(a.dtype))
                v.stop_gradient = a.dtype.kind != "f"
                args.append(v)
            out = fn(*args)
            fetch = [out]
            if grad_of:
                grads = static.gradients(rt.sum(out), [args[i] for i in grad_of])
                fetch += grads
    finally:
        rt.disable_static()
    return static.Executor().run(main, {f"a{i}": a for i, a in enumerate(arrays)}, fetch), main


def run_eager(fn, *arrays, grad_of=None):
    ts = [rt.to_tensor(a, stop_gradient=a.dtype.kind != "f") for a in arrays]
    out = fn(*ts)
    res = [out.numpy()]
    if grad_of:
        res += [g.numpy() for g in rt.grad(rt.sum(out), [ts[i] for i in grad_of])]
    return res


def w1(x):
    """The benchmark workload W1: a tensor if, then a 10-step tensor while loop."""
    y = cond(rt.mean(x) > 0, lambda: rt.relu(x) * 2.0, lambda: x - 1.0)

    def body(i, y):
        return i + 1, y * 0.9 + 0.1

    _, y = while_loop(lambda i, y: i < 10, body, [rt.full([], 0, "int64"), y])
    return rt.sum(y)


def loop_with_inner_cond(x, n):
    def body(i, h):
        h = cond(rt.sum(h) > 0, lambda: rt.tanh(h) * 1.5, lambda: h * h - 0.5)
        return i + 1, h

    _, h = while_loop(lambda i, h: i < n, body, [rt.full([], 0, "int64"), x])
    return h


floats = hnp.arrays(np.float64, (3, 4), elements=st.floats(-2, 2, width=32))


@settings(max_examples=25, deadline=None)
@given(floats)
def test_w1_values_and_gradients_match_eager(x):
    got, _ = run_static(w1, x, grad_of=[0])
    want = run_eager(w1, x, grad_of=[0])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(floats, st.integers(0, 5))
def test_symbolic_trip_count_with_nested_cond_matches_eager(x, n):
    nn = np.array(n, np.int64)
    got, _ = run_static(loop_with_inner_cond, x, nn, grad_of=[0])
    want = run_eager(loop_with_inner_cond, x, nn, grad_of=[0])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-12)


def test_gradient_flows_to_values_captured_by_the_loop_body():
    def fn(x, w):
        def body(i, h):
            return i + 1, h * w + x

        _, h = while_loop(lambda i, h: i < 4, body, [rt.full([], 0, "int64"), x])
        return h

    x = np.array([0.5, -1.0, 2.0])
    w = np.array([1.1, 0.9, -0.7])
    got, _ = run_static(fn, x, w, grad_of=[0, 1])
    want = run_eager(fn, x, w, grad_of=[0, 1])
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_zero_iterations_give_zero_body_gradients():
    def fn(x, w):
        _, h = while_loop(
            lambda i, h: i < 0, lambda i, h: (i + 1, h * w), [rt.full([], 0, "int64"), x]
        )
        return h

    got, _ = run_static(fn, np.ones(2), np.full(2, 3.0), grad_of=[0, 1])
    np.testing.assert_array_equal(got[1], [1, 1])
    np.testing.assert_array_equal(got[2], [0, 0])


def test_cond_with_nested_structures_and_constants():
    def fn(x):
        out = cond(
            rt.sum(x) > 0,
            lambda: {"v": x + 1, "pair": (x * 2, 7), "tag": "same"},
            lambda: {"v": x - 1, "pair": (x * 3, 7), "tag": "same"},
        )
        assert out["tag"] == "same" and out["pair"][1] == 7
        return out["v"] + out["pair"][0]

    for x in (np.ones(2), -np.ones(2)):
        got, _ = run_static(fn, x)
        np.testing.assert_allclose(got[0], run_eager(fn, x)[0])


def test_cond_promotes_python_numbers_that_differ():
    def fn(x):
        return cond(rt.sum(x) > 0, lambda: 1.5, lambda: x * 0 - 2.0)

    got, _ = run_static(fn, np.ones(1, np.float32))
    assert got[0].item() == 1.5


def test_cond_branch_shapes_may_differ_and_become_unknown():
    def fn(x):
        return cond(rt.sum(x) > 0, lambda: x, lambda: rt.concat([x, x]))

    main = static.Program()
    rt.enable_static()
    with static.program_guard(main):
        out = fn(static.data("x", [2], "float32"))
    rt.disable_static()
    assert out.shape == [-1]


def test_cond_errors_name_both_branches():
    def t_branch():
        return rt.ones([2])

    def f_branch():
        return rt.ones([2], "int64")

    rt.enable_static()
    with static.program_guard(static.Program()):
        p = static.data("p", [], "bool")
        two_typed = cond(p, t_branch, f_branch)  # can be returned (Paddle allows it) ...
        with pytest.raises(StaticBuildError) as info:
            two_typed + 1  # ... but not computed with
        msg = str(info.value)
        assert "float32[2]" in msg and "int64[2]" in msg and "same rank and dtype" in msg
        assert f"{__file__}:" in msg and msg.count("test_control_flow.py:") >= 2
        with pytest.raises(StaticBuildError, match="same structure"):
            cond(p, lambda: (rt.ones([1]), rt.ones([1])), lambda: rt.ones([1]))
        with pytest.raises(StaticBuildError, match="one element"):
            cond(rt.ones([3]) > 0, lambda: 1, lambda: 2)
    rt.disable_static()


def test_while_loop_shape_change_becomes_unknown_dim():
    def fn(x):
        def body(i, v):
            return i + 1, rt.concat([v, v])

        _, v = while_loop(lambda i, v: i < 2, body, [rt.full([], 0, "int64"), x])
        return v

    got, main = run_static(fn, np.ones(3, np.float32))
    assert got[0].shape == (12,)
    assert main.global_block().ops[-1].outputs[1].shape == [-1]


def test_while_loop_variable_widened_by_its_body_takes_the_wider_dtype():
    def fn(x):
        def body(i, v):
            return i + 1, rt.cast(v, "float64") * 2

        return while_loop(lambda i, v: i < 2, body, [rt.full([], 0, "int64"), x])[1]

    (got,), _ = run_static(fn, np.array([1.5, 2.0], np.float32))
    assert got.dtype == np.float64  # as eager: float64 from the first iteration on
    np.testing.assert_array_equal(got, [6.0, 8.0])


def test_while_loop_variable_narrowed_by_its_body_runs_its_first_iteration_as_a_cond():
    def fn(x, n):
        def body(i, v):  # reads the float before making it an int: 0.75 * 2 + 1 -> 2
            return i + 1, rt.cast(v * 2 + 1, "int64")

        return while_loop(lambda i, v: i < n, body, [rt.full([], 0, "int64"), x])[1]

    x = np.array([0.75, 1.25], np.float32)
    for n in (1, 3):
        n = np.array(n, "int64")
        (got,), main = run_static(fn, x, n)
        want = fn(rt.to_tensor(x), rt.to_tensor(n)).numpy()  # eager: the same loop in Python
        assert got.dtype == want.dtype == np.int64
        np.testing.assert_array_equal(got, want)
        assert "cond" in {op.type for op in main.global_block().ops}


def test_while_loop_dtype_change_after_the_first_iteration_is_an_error_with_the_body_line():
    def body(i, v):  # float32 -> int64 -> float32 ...: no dtype holds from iteration two on
        return i + 1, v.astype("int64") if v.dtype == rt.float32 else v.astype("float32")

    rt.enable_static()
    with static.program_guard(static.Program()):
        x = static.data("x", [2], "float32")
        with pytest.raises(StaticBuildError) as info:
            while_loop(lambda i, v: i < 2, body, [rt.full([], 0, "int64"), x])
    rt.disable_static()
    msg = str(info.value)
    assert "before an iteration, but int64 after it" in msg
    assert "may change its dtype in the first iteration only" in msg
    assert f"{__file__}:{body.__code__.co_firstlineno}" in msg


def test_while_loop_python_scalars_are_promoted_to_tensors():
    def fn(x):
        def body(i, total):
            return i + 1, total + rt.sum(x)

        _, total = while_loop(lambda i, t: i < 3, body, [0, 0.0])
        return total

    got, _ = run_static(fn, np.array([1.0, 2.0], np.float32))
    assert got[0].item() == pytest.approx(9.0)


def test_eager_mode_runs_plain_python():
    calls = []
    out = cond(rt.to_tensor(True), lambda: calls.append("t") or 1, lambda: 2)
    assert out == 1 and calls == ["t"]
    i, v = while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), [rt.to_tensor(0), rt.to_tensor(1.0)]
    )
    assert int(i) == 3 and float(v) == 8.0
    assert cond(False, lambda: 1, lambda: 2) == 2
    with pytest.raises(TypeError, match="list or tuple"):
        while_loop(lambda v: v < 1, lambda v: v, rt.to_tensor(0))


def test_deeply_nested_control_flow_runs():
    def fn(x):
        def outer(i, v):
            def inner(j, u):
                u = cond(rt.mean(u) > 0.5, lambda: u * 0.5, lambda: u + 0.25)
                return j + 1, u

            _, v = while_loop(lambda j, u: j < 2, inner, [rt.full([], 0, "int64"), v])
            return i + 1, v

        _, v = while_loop(lambda i, v: i < 3, outer, [rt.full([], 0, "int64"), x])
        return v

    x = np.linspace(-1, 1, 6)
    got, main = run_static(fn, x, grad_of=[0])
    want = run_eager(fn, x, grad_of=[0])
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    assert main.num_blocks > 5


def test_a_loop_var_starting_constant_carries_gradients_from_the_body():
    """``h = zeros; while ...: h = h + x[i]``: the carried h needs the gradient of x."""

    def fn(x):
        def body(i, h):
            return i + 1, h + x[i] * 2.0

        n = rt.shape(x)[0]
        _, h = while_loop(lambda i, h: i < n, body, [rt.full([], 0, "int64"), rt.zeros([3])])
        return h

    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    (out, grad), _ = run_static(fn, x, grad_of=[0])
    np.testing.assert_allclose(out, x.sum(0) * 2)
    np.testing.assert_allclose(grad, np.full((3, 3), 2.0))


def tanh_or_relu(x):
    h = x * 2.0
    return static.nn.cond(rt.mean(h) > 0, lambda: rt.tanh(h), lambda: rt.nn.functional.relu(h))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_cond_gradient_reads_the_forward_branch_outputs_instead_of_replaying_them(sign):
    """The gradient ``cond`` takes the branch the forward took, so its gradient ops read the
    forward ``cond``'s outputs: the ``tanh``/``relu`` that made them is not run again."""
    x = np.linspace(-1, 2, 6).astype(np.float32) * sign
    got, main = run_static(tanh_or_relu, x, grad_of=[0])
    want = run_eager(tanh_or_relu, x, grad_of=[0])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    from autostatic_runtime.static.compiler import prune

    (grad_cond,) = [
        op for op in main.global_block().ops
        if op.type == "cond" and op.attrs.get("op_role") == "backward"
    ]  # fmt: skip
    for key, outs in (("true_block", "true_outputs"), ("false_block", "false_outputs")):
        kept = [op.type for op in prune(grad_cond.attrs[key], list(grad_cond.attrs[outs]))]
        assert "tanh" not in kept and "relu" not in kept, kept

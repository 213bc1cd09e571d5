"""Loops that grow a list or a tensor, compiled by XLA into one while loop over buffers
preallocated at a bound (``static/xla/growing.py``, ``bounded.py``): values and shapes equal
eager's for early exits at every step (none, some, the bound), the stated bound
(``max_loop_iterations``) and its error, and the fallback (naming the loop) without a bound."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
from autostatic import InputSpec  # noqa: E402
from autostatic_runtime.errors import ExecutionError  # noqa: E402
from autostatic_runtime.jit.run_program import compiled_functions  # noqa: E402
from autostatic_runtime.static.xla import XlaFallbackWarning  # noqa: E402
from tests.xla.test_to_static import no_fallback  # noqa: E402


def compiled(f):
    """``f``'s programs ran on XLA, none of them on the default executor."""
    runner = f.concrete_program.runner
    return all(fn.fallback is None for fn in compiled_functions(runner))


def check(fn, *args, input_spec=None, **options):
    """``fn`` eagerly, on the default executor and on XLA (no fallback): equal values and
    shapes; returns the XLA StaticFunction."""
    want = fn(*args)
    default = autostatic.to_static(fn, input_spec=input_spec, **options)
    xla = autostatic.to_static(fn, input_spec=input_spec, backend="xla", **options)
    with no_fallback():
        got = xla(*args)
    for name, value in (("default", default(*args)), ("xla", got)):
        assert value.shape == want.shape, name
        np.testing.assert_allclose(value.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert compiled(xla)
    return xla


# ---- lists ------------------------------------------------------------------------------


def halve_until(x, limit):
    """Appends until the sum is small or 6 steps: ``limit`` decides the exit step."""
    out = [x]
    i = 0
    while i < 6 and rt.sum(x) > limit:
        x = x * 0.5
        out.append(x)
        i += 1
    return rt.stack(out, axis=1)


@pytest.mark.parametrize("limit, steps", [(100.0, 0), (7.0, 1), (1.5, 3), (0.0, 6)])
def test_a_list_with_an_early_exit_equals_eager(limit, steps):
    x = rt.to_tensor(np.full([2], 4.0, "float32"))
    assert halve_until(x, limit).shape == [2, steps + 1]
    f = check(halve_until, x, limit)
    for other, n in ((100.0, 0), (0.0, 6)):  # new Python values: new programs, also compiled
        with no_fallback():
            assert f(x, other).shape == [2, n + 1]


def last_and_length(x):
    """The body reads the list it grows: its last element, its length, an element by a
    tensor index."""
    out = rt.create_array("float32", [x])
    i = rt.zeros([], "int64")
    while i < 5 and rt.max(out[-1]) < 3.0:
        nxt = out[-1] + rt.cast(rt.array_length(out), "float32") * 0.25
        out.append(nxt + rt.array_read(out, i) * 0.0)
        i += 1
    return rt.stack(out) + rt.cast(len(out), "float32")


def test_the_body_reads_the_list_it_grows():
    check(last_and_length, rt.to_tensor(np.array([0.5, 1.0], "float32")))


def pops(x):
    stack = [x, x * 2.0, x * 3.0]
    i = 0
    while i < 4 and rt.sum(stack[-1]) > 0.5:
        top = stack.pop()
        stack.append(top * 0.25)
        stack.append(top * 0.1)
        i += 1
    return rt.stack(stack)


def test_pop_and_append_in_a_bounded_loop():
    check(pops, rt.to_tensor(np.array([1.0, 2.0], "float32")))


def empty_list(x, limit):
    out = []
    i = 0
    while i < 3 and rt.sum(x) > limit:
        x = x - 1.0
        out.append(x)
        i += 1
    return rt.stack(out)


def test_stacking_a_list_left_empty_fails_as_eagerly():
    x = rt.to_tensor(np.array([1.0], "float32"))
    f = autostatic.to_static(empty_list, backend="xla")
    with no_fallback():
        assert f(x, -10.0).shape == [3, 1]
        with pytest.raises(rt.ShapeError, match="stack: .* list is empty when the program runs"):
            f(x, 10.0)


# ---- tensors concatenated to --------------------------------------------------------------


def attend(q, x, limit):
    """A growing key/value cache: concatenated to at each step, attended over."""
    keys = x[:, :1]
    values = x[:, :1] * 2.0
    t = 1
    out = q
    while t < 5 and rt.max(out) < limit:
        step = x[:, t][:, None]
        keys = rt.concat([keys, step + out[:, None]], axis=1)
        values = rt.concat([values, step * out[:, None]], axis=1)
        w = rt.nn.functional.softmax(rt.matmul(out[:, None], keys, transpose_y=True), axis=-1)
        out = rt.matmul(w, values)[:, 0] + rt.mean(keys, axis=1) * 0.1
        t += 1
    return keys, out


@pytest.mark.parametrize("limit", [-1.0, 0.2, 0.5, 100.0], ids=["none", "early", "mid", "all"])
def test_a_concatenated_cache_equals_eager(limit):
    rng = np.random.default_rng(0)
    q = rt.to_tensor(rng.normal(size=(2, 3)).astype("float32"))
    x = rt.to_tensor(rng.normal(size=(2, 6, 3)).astype("float32"))
    want = attend(q, x, limit)
    xla = autostatic.to_static(attend, backend="xla")
    with no_fallback():
        got = xla(q, x, limit)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def scan(x):
    acc = rt.zeros([x.shape[0], 0])
    for t in range(x.shape[1]):
        acc = rt.concat([acc, x[:, t][:, None] - rt.sum(acc, axis=1, keepdim=True) * 0.01], 1)
    return acc * 2.0


def test_an_exact_count_from_an_input_spec_dim():
    """``range(x.shape[1])`` with an unknown dim: the count is known in each compiled
    specialisation, and the grown tensor leaves the loop at its size."""
    spec = [InputSpec([2, None], "float32")]
    f = check(scan, rt.to_tensor(np.ones((2, 4), "float32")), input_spec=spec)
    long = rt.to_tensor(np.ones((2, 1100), "float32"))  # past what a loop may be unrolled to
    with no_fallback():
        got = f(long)
    want = autostatic.to_static(scan, input_spec=spec)(long)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


# ---- the stated bound ---------------------------------------------------------------------


def until_small(x):
    out = []
    while rt.sum(x) > 1.0:
        x = x * 0.5
        out.append(x)
    return rt.stack(out)


def test_a_stated_bound_compiles_and_raises_past_it():
    x = rt.to_tensor(np.full([4], 4.0, "float32"))
    xla = check(until_small, x, max_loop_iterations=8)
    line = until_small.__code__.co_firstlineno + 2
    for f in (xla, autostatic.to_static(until_small, max_loop_iterations=8)):
        with pytest.raises(ExecutionError, match=rf"test_bounded_loops.py:{line}.*more than 8"):
            f(x * 1000.0)


def counts_down(n):
    while n > 0:
        n = n - 1
    return n


def test_a_stated_bound_on_a_loop_that_does_not_grow():
    xla = check(counts_down, rt.to_tensor(5), max_loop_iterations=5)
    with pytest.raises(ExecutionError, match="more than 5"):
        xla(rt.to_tensor(6))


def test_a_stated_bound_is_checked_by_a_flag_not_a_callback():
    """A top-level guarded loop, growing or not, is stopped inside the computation and
    returns a flag the call checks: no host callback in every call's path (~1 ms a call)."""
    x = rt.to_tensor(np.full([4], 4.0, "float32"))
    for fn, arg in ((until_small, x), (counts_down, rt.to_tensor(5))):
        f = check(fn, arg, max_loop_iterations=8)
        (xla,) = compiled_functions(f.concrete_program.runner)
        assert xla._stops and not xla._effects


class Until(rt.nn.Layer):
    def forward(self, x):
        return until_small(x)


def test_a_loaded_models_default_budget_sizes_no_buffers(tmp_path):
    """load's 1,000,000 iterations are a budget against runaway loops: buffers for them
    ([1,000,000, 4] here) would be zeroed and copied back at every call, so the growing loop
    stays on the default executor; a smaller limit given to load is a stated bound."""
    path = str(tmp_path / "m")
    autostatic.save(Until(), path, input_spec=[InputSpec([4], "float32", "x")])
    x = rt.to_tensor(np.full([4], 4.0, "float32"))
    want = until_small(x).numpy()
    layer = autostatic.load(path, backend="xla")
    with pytest.warns(XlaFallbackWarning, match="below 1,000,000"):
        np.testing.assert_allclose(layer(x).numpy(), want)
    layer = autostatic.load(path, backend="xla", max_loop_iterations=8)
    with no_fallback():
        np.testing.assert_allclose(layer(x).numpy(), want)
        with pytest.raises(ExecutionError, match="more than 8 iterations"):
            layer(x * 1000.0)


def test_max_loop_iterations_must_be_a_count():
    with pytest.raises(autostatic.jit.ToStaticError, match="non-negative int"):
        autostatic.to_static(until_small, max_loop_iterations=-1)


def test_without_a_bound_the_loop_is_named_and_explained():
    f = autostatic.to_static(until_small, backend="xla")
    line = until_small.__code__.co_firstlineno + 2
    with pytest.warns(XlaFallbackWarning, match="no bound the compiler can see") as caught:
        got = f(rt.to_tensor(np.full([4], 4.0, "float32")))
    assert got.shape == [4, 4]
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    (why,) = f.explain()
    assert "max_loop_iterations" in why and f"test_bounded_loops.py:{line}" in why


# ---- gradients ----------------------------------------------------------------------------


def grows_with_weights(x, w):
    outs = []
    h = x
    while rt.sum(h) < 20.0:
        h = h * w + 1.0
        outs.append(h)
    return rt.sum(rt.stack(outs))


def test_gradients_through_a_growing_loop_with_a_data_dependent_count():
    """A loop whose gradient is needed keeps each iteration's values (a trajectory); with a
    count that depends on values it runs on the default executor, gradients as eager's."""
    x = rt.to_tensor(np.array([1.0, 2.0], "float32"))

    def grads(fn):
        w = rt.to_tensor(np.array([1.5, 1.2], "float32"), stop_gradient=False)
        fn(x, w).backward()
        return w.grad.numpy()

    f = autostatic.to_static(grows_with_weights, backend="xla")
    with pytest.warns(XlaFallbackWarning, match="gradient is needed.*no_grad"):
        got = grads(f)
    np.testing.assert_allclose(got, grads(grows_with_weights), rtol=1e-5)


# ---- argmax in a 32-bit program -------------------------------------------------------------


def greedy(h, w):
    return rt.argmax(rt.matmul(h, w), axis=-1)


def test_argmax_in_a_32_bit_program_compiles():
    """int64 positions lowered outside 64-bit mode failed to verify (an int64 iota)."""
    rng = np.random.default_rng(1)
    h = rt.to_tensor(rng.normal(size=(3, 4)).astype("float32"))
    w = rt.to_tensor(rng.normal(size=(4, 5)).astype("float32"))
    f = check(greedy, h, w)
    assert f(h, w).dtype == rt.int64


def keeps_some(x, tensor_loop):
    """Appends in a tensor-dependent branch: in a Python loop, a list whose size depends on
    the branches taken; in a tensor loop, one that grows by 0 or 1 per step."""
    kept = [x]
    i = rt.zeros([], "int64") if tensor_loop else 0
    while i < 6:
        x = x * 0.8
        if rt.sum(x) > 1.0:
            kept.append(x)
        i += 1
    return rt.stack(kept)


@pytest.mark.parametrize("tensor_loop", [False, True], ids=["python-loop", "tensor-loop"])
def test_appending_in_a_branch(tensor_loop):
    check(keeps_some, rt.to_tensor(np.array([1.0, 0.6], "float32")), tensor_loop)

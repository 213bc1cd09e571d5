"""The Executor's prepared call for XLA functions (``static/xla/prepared.py``): the feed,
scope and plan checks done once, with everything it does not take sent to the generic path
so that results stay the default executor's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic_runtime as rt  # noqa: E402
from autostatic_runtime import static  # noqa: E402
from autostatic_runtime.errors import OpError  # noqa: E402
from autostatic_runtime.static.xla import XlaFallbackWarning  # noqa: E402

from .test_programs import assert_same, build  # noqa: E402

cond, while_loop = static.nn.cond, static.nn.while_loop


def branchy(x):
    y = cond(rt.mean(x) > 0, lambda: rt.relu(x) * 2.0, lambda: x - 1.0)
    _, y = while_loop(
        lambda i, y: i < 10, lambda i, y: (i + 1, y * 0.9 + 0.1), [rt.full([], 0, "int64"), y]
    )
    return [rt.sum(y, axis=-1), y]


def runner_of(exe, program):
    (runner,) = [r for r in exe._cache.values() if r.program is program]
    return runner


def generic_calls(exe):
    """The Executor's generated ``run`` (``Executor._enter``), its calls of the class's own
    ``run`` (what it does not take) recorded in ``.misses``."""
    run = vars(exe)["run"]  # an instance attribute in front of Executor.run
    generic = run.__globals__["generic"]

    def spy(*args):
        run.misses.append(args)
        return generic(*args)

    run.misses = []
    run.__globals__["generic"] = spy
    return run


@pytest.fixture
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlaFallbackWarning)
        yield


def test_the_second_call_is_prepared_and_equals_the_default_executor(strict):
    main, _, outs = build(branchy, [("x", [4, 16], "float32")])
    xla, default = static.Executor(compiler="xla"), static.Executor()
    rng = np.random.default_rng(0)
    feeds = [rng.normal(size=(4, 16)).astype("float32") for _ in range(4)]
    feeds[1] = np.abs(feeds[1])  # both branches
    xla.run(main, {"x": feeds[0]}, outs)
    runner = runner_of(xla, main)
    assert runner.prepared is not None
    xla.run(main, {"x": feeds[0]}, outs)
    run = generic_calls(xla)
    for x in feeds:
        got, want = xla.run(main, {"x": x}, outs), default.run(main, {"x": x}, outs)
        assert isinstance(got, list)
        assert_same([want], [got], rtol=1e-6)
    assert run.misses == []  # each call taken by the generated run
    tensors = xla.run(main, {"x": feeds[0]}, outs, return_numpy=False)
    assert isinstance(tensors[1], rt.Tensor)
    np.testing.assert_allclose(tensors[1].numpy(), default.run(main, {"x": feeds[0]}, outs)[1])


def test_executor_run_tries_the_prepared_call_first_but_sees_what_changed(strict):
    """Once a runner has a prepared call, Executor.run calls it before any other check;
    a fetch list changed in place, a changed program, other feed names, a tuple fetch list,
    Tensors asked for and another global scope are still what a new call gives."""
    main, x_var = static.Program(), None
    rt.enable_static()
    try:
        with static.program_guard(main, static.Program()):
            x_var = static.data("x", [2], "float32")
            doubled, tripled = x_var * 2.0, x_var * 3.0
    finally:
        rt.disable_static()
    exe = static.Executor(compiler="xla")
    feed = {"x": np.ones(2, "float32")}
    fetch = [doubled]
    for _ in range(3):
        assert exe.run(main, feed, fetch)[0].tolist() == [2.0, 2.0]
    run = generic_calls(exe)
    assert exe.run(main, feed, fetch)[0].tolist() == [2.0, 2.0]
    assert run.misses == []  # the generated run took it
    fetch[0] = tripled  # the same list object, another variable
    for _ in range(2):
        assert exe.run(main, feed, fetch)[0].tolist() == [3.0, 3.0]
    fetch.append(doubled)
    for _ in range(2):
        assert [r.tolist() for r in exe.run(main, feed, fetch)] == [[3.0, 3.0], [2.0, 2.0]]
    with pytest.raises(OpError, match="feed 'y'"):
        exe.run(main, {"y": np.ones(2, "float32")}, fetch)
    tensors = exe.run(main, feed, fetch, return_numpy=False)
    assert [type(t) for t in tensors] == [rt.Tensor, rt.Tensor]
    rt.enable_static()
    try:
        with static.program_guard(main):
            quadrupled = x_var * 4.0  # the program changes
    finally:
        rt.disable_static()
    fetch[:] = [quadrupled]
    for _ in range(2):
        assert exe.run(main, feed, fetch)[0].tolist() == [4.0, 4.0]
    for _ in range(2):
        assert exe.run(main, feed, (doubled,))[0].tolist() == [2.0, 2.0]


def test_executor_run_reads_the_global_scope_of_each_call(strict):
    """A prepared call made under one global scope reads the parameters of the scope that
    is global at the next call (``scope_guard``), as the default executor does."""
    rt.seed(4)
    net = rt.nn.Linear(3, 2)

    def fn(x):
        return [net(x)]

    main, startup, outs = build(fn, [("x", [4, 3], "float32")])
    x = np.random.default_rng(4).normal(size=(4, 3)).astype("float32")
    scopes = [static.Scope(), static.Scope()]
    results = []
    for compiler in ("xla", None):
        exe, got = static.Executor(compiler=compiler), []
        for i, scope in enumerate(scopes):
            with static.scope_guard(scope):
                exe.run(startup)
                scope.var(net.weight.name).set(np.full((3, 2), i + 1.0, "float32"))
        for scope in scopes + scopes:
            with static.scope_guard(scope):
                got += [exe.run(main, {"x": x}, outs)[0] for _ in range(2)]
        if compiler == "xla":
            assert runner_of(exe, main).prepared is not None
        results.append(got)
    assert_same(*results, rtol=1e-6)
    xla_got = results[0]  # the second scope's weights are twice the first's (zero bias)
    np.testing.assert_allclose(xla_got[2], 2 * xla_got[0], rtol=1e-6)
    np.testing.assert_allclose(xla_got[4], xla_got[0], rtol=1e-6)


def test_results_are_fresh_writable_arrays_every_call(strict):
    main, _, outs = build(branchy, [("x", [4, 16], "float32")])
    exe = static.Executor(compiler="xla")
    x = np.ones((4, 16), "float32")
    exe.run(main, {"x": x}, outs)
    first = exe.run(main, {"x": x}, outs)  # prepared
    kept = [r.copy() for r in first]
    for r in first:
        assert r.flags.writeable
        r[...] = -5.0
    x[...] = 1.0  # the fed array, unchanged in value but written after the call
    again = exe.run(main, {"x": x}, outs)
    assert again is not first
    for want, got in zip(kept, again, strict=True):
        np.testing.assert_array_equal(got, want)


def test_what_the_prepared_call_does_not_take_goes_the_generic_way(strict):
    """A list, a Tensor and a float64 array are converted as the default executor converts
    them; a shape that does not fit and unknown feed names raise its errors."""
    main, _, outs = build(branchy, [("x", [4, 16], "float32")])
    xla, default = static.Executor(compiler="xla"), static.Executor()
    x = np.random.default_rng(1).normal(size=(4, 16))
    xla.run(main, {"x": x.astype("float32")}, outs)
    assert runner_of(xla, main).prepared is not None
    for value in (x, x.tolist(), rt.to_tensor(x.astype("float32")), x.astype("float32")[::1]):
        got, want = xla.run(main, {"x": value}, outs), default.run(main, {"x": value}, outs)
        assert_same([want], [got], rtol=1e-6)
    for _ in range(2):  # the shape is checked by the trace JAX starts for it
        with pytest.raises(OpError, match="shape"):
            xla.run(main, {"x": np.ones((4, 15), "float32")}, outs)
        with pytest.raises(OpError, match="shape"):
            xla.run(main, {"x": np.ones((16, 4), "float32")}, outs)
    assert runner_of(xla, main).fn._lean and runner_of(xla, main).fn.fallback is None
    with pytest.raises(OpError, match="not a variable"):
        xla.run(main, {"z": x.astype("float32")}, outs)
    with pytest.raises(OpError, match="not a variable"):
        xla.run(main, {"x": x.astype("float32"), "z": x}, outs)
    got = xla.run(main, {"x": x.astype("float32")}, outs)  # and the prepared call again
    assert_same([default.run(main, {"x": x.astype("float32")}, outs)], [got], rtol=1e-6)


def test_a_new_batch_size_plans_again(strict):
    main, _, outs = build(branchy, [("x", [-1, 16], "float32")])
    xla, default = static.Executor(compiler="xla"), static.Executor()
    rng = np.random.default_rng(2)
    for n in (4, 4, 7, 1, 7, 4):
        x = rng.normal(size=(n, 16)).astype("float32")
        got, want = xla.run(main, {"x": x}, outs), default.run(main, {"x": x}, outs)
        assert got[1].shape == (n, 16)
        assert_same([want], [got], rtol=1e-6)
    with pytest.raises(OpError, match="shape"):
        xla.run(main, {"x": np.ones((4, 16, 1), "float32")}, outs)


def test_training_through_the_prepared_call_follows_scope_changes(strict):
    """Parameters stay on the device between prepared calls; a value the user sets in the
    scope is read by the next call, and a captured value removed from the scope comes back
    as the generic path would put it."""
    rt.seed(3)
    net = rt.nn.Linear(6, 3)

    def fn(x):
        loss = rt.mean(net(x) ** 2)
        rt.optimizer.Momentum(0.05).minimize(loss)
        return [loss]

    main, startup, outs = build(fn, [("x", [5, 6], "float32")])
    x = np.random.default_rng(3).normal(size=(5, 6)).astype("float32")
    results = []
    for compiler in (None, "xla"):
        scope, exe = static.Scope(), static.Executor(compiler=compiler)
        exe.run(startup, scope=scope)
        steps = [exe.run(main, {"x": x}, outs, scope=scope) for _ in range(4)]
        scope.var(net.weight.name).set(np.full((6, 3), 0.25, "float32"))
        steps += [exe.run(main, {"x": x}, outs, scope=scope) for _ in range(3)]
        results.append(steps)
        if compiler == "xla":
            assert runner_of(exe, main).prepared is not None
    assert_same(*results, rtol=1e-5)


def test_random_programs_draw_a_new_key_at_every_prepared_call(strict):
    def fn(x):
        return [rt.nn.functional.dropout(x, 0.5, training=True)]

    main, _, outs = build(fn, [("x", [64], "float32")])
    x = np.ones(64, "float32")

    def draws(exe):
        rt.seed(11)
        return [exe.run(main, {"x": x}, outs)[0] for _ in range(4)]

    exe = static.Executor(compiler="xla")
    first = draws(exe)
    assert runner_of(exe, main).prepared is not None
    assert not any(np.array_equal(first[0], d) for d in first[1:])
    again = draws(exe)  # all prepared calls now
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_lean_function_traced_into_effects_plans_again(capsys):
    """A retrace for a new shape that finds what the lean call does not handle (here: a
    function made to look lean while it prints and asserts) runs the generic call, which
    prints and raises the assert's error."""

    def fn(x):
        y = rt.sum(x * 2.0)
        static.Print(y, message="total")
        static.nn.Assert(y < 8.0, message="too big")
        return [y]

    main, _, outs = build(fn, [("x", [-1], "float32")])
    exe = static.Executor(compiler="xla")
    exe.run(main, {"x": np.ones(3, "float32")}, outs)
    runner = runner_of(exe, main)
    fn_ = runner.fn
    assert not fn_._lean  # it has effects: never lean
    fn_._lean = True  # pretend, as if the first trace had had none
    runner._prepare_call()
    capsys.readouterr()
    with pytest.raises(rt.errors.AssertionFailedError, match="too big"):
        exe.run(main, {"x": np.ones(5, "float32")}, outs)
    assert "total" in capsys.readouterr().out
    assert not fn_._lean
    (got,) = exe.run(main, {"x": np.ones(2, "float32")}, outs)
    assert got == 4.0


def test_the_generated_run_is_kept_per_call_form_and_dropped_by_close(strict):
    """Alternating two programs on one Executor switches between their generated runs
    (each made once) with the results of each; misses go through the class's run, and
    ``close()`` leaves the class's run alone."""
    main_a, _, outs_a = build(branchy, [("x", [4, 16], "float32")])
    main_b, _, outs_b = build(lambda x: [x * 3.0], [("x", [4, 16], "float32")])
    exe, default = static.Executor(compiler="xla"), static.Executor()
    x = np.random.default_rng(2).normal(size=(4, 16)).astype("float32")
    made = {}
    for _ in range(4):
        for main, outs in ((main_a, outs_a), (main_b, outs_b)):
            got = exe.run(main, {"x": x}, outs)
            assert_same([default.run(main, {"x": x}, outs)], [got], rtol=1e-6)
            run = vars(exe).get("run")
            if run is not None:
                made.setdefault(main.id, set()).add(id(run))
    assert len(made) == 2 and all(len(ids) == 1 for ids in made.values())
    assert len([f for f in exe._entries.values() if f]) == 2
    got = exe.run(main_b, {"x": x.astype("float64")}, outs_b)  # a miss: cast, as default
    assert got[0].dtype == np.float32
    np.testing.assert_allclose(got[0], x * 3.0, rtol=1e-6)
    exe.close()
    assert "run" not in vars(exe) and exe._entries == {}
    np.testing.assert_allclose(exe.run(main_b, {"x": x}, outs_b)[0], x * 3.0, rtol=1e-6)

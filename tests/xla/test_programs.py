"""Static programs on ``Executor(compiler="xla")``: nested control flow, gradients, training
with an optimizer, dtypes, and the fallback to the default executor."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic_runtime as rt  # noqa: E402
from autostatic_runtime import static  # noqa: E402
from autostatic_runtime.static.xla import XlaFallbackWarning  # noqa: E402

cond, while_loop = static.nn.cond, static.nn.while_loop


def build(fn, specs):
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            args = [static.data(n, s, d) for n, s, d in specs]
            for a in args:
                a.stop_gradient = not a.dtype.is_floating
            outs = fn(*args)
    finally:
        rt.disable_static()
    return main, startup, outs


def run_both(main, feed, fetch, startup=None, steps=1):
    """Fetches of ``steps`` runs on the default executor and on XLA (fresh scopes); XLA must
    not fall back."""
    results = []
    for compiler in (None, "xla"):
        scope, exe = static.Scope(), static.Executor(compiler=compiler)
        with warnings.catch_warnings():
            warnings.simplefilter("error", XlaFallbackWarning)
            if startup is not None:
                exe.run(startup, scope=scope)
            results.append([exe.run(main, feed, fetch, scope=scope) for _ in range(steps)])
    return results


def assert_same(expected, got, rtol=1e-5):
    for e_step, g_step in zip(expected, got, strict=True):
        for e, g in zip(e_step, g_step, strict=True):
            assert e.dtype == g.dtype and e.shape == g.shape
            assert g.flags.writeable  # the caller's own array, as the default executor gives
            np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-6)


def nested(x, y):
    """A while whose body holds a cond, inside a cond; gradients need no while_grad here
    because the loop only reads ``x`` through a cond taken after it."""

    def loop(i, acc):
        step = cond(rt.sum(acc) > 0, lambda: acc * 0.5 + y, lambda: acc - y * 0.25)
        return i + 1, step

    def outer_true():
        _, acc = while_loop(lambda i, acc: i < 5, loop, [rt.full([], 0, "int64"), y])
        return acc

    z = cond(rt.mean(x) > 0, outer_true, lambda: y * 3.0)
    w = cond(
        rt.max(x) > 1.0,
        lambda: rt.tanh(x * z),
        lambda: cond(rt.min(x) < -1.0, lambda: x * x, lambda: rt.exp(x) * z),
    )
    return [z, w, rt.sum(w * x)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nested_cond_and_while(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4)) * (1.0 if seed else -1.0)
    y = rng.normal(size=(3, 4))
    main, _, outs = build(nested, [("x", [3, 4], "float64"), ("y", [3, 4], "float64")])
    expected, got = run_both(main, {"x": x, "y": y}, outs)
    assert_same(expected, got, rtol=1e-10)


def test_gradients_through_nested_cond():
    def fn(x, y):
        z = cond(
            rt.mean(x) > 0,
            lambda: cond(rt.sum(y) > 0, lambda: x * y, lambda: x - y),
            lambda: rt.sin(x) * y,
        )
        loss = rt.sum(z * z)
        return [loss, *static.gradients(loss, [x, y])]

    rng = np.random.default_rng(3)
    for sign in (1.0, -1.0):
        feed = {"x": sign * np.abs(rng.normal(size=(2, 5))), "y": rng.normal(size=(2, 5))}
        main, _, outs = build(fn, [("x", [2, 5], "float64"), ("y", [2, 5], "float64")])
        expected, got = run_both(main, feed, outs)
        assert_same(expected, got, rtol=1e-10)


@pytest.mark.parametrize("keep_on_device", [None, True], ids=["cpu-policy", "device-cache"])
def test_training_with_an_optimizer_matches_over_steps(keep_on_device, monkeypatch):
    from autostatic_runtime.static.xla import compiler

    monkeypatch.setattr(compiler, "KEEP_ON_DEVICE", keep_on_device)
    rt.seed(5)
    net = rt.nn.Sequential(rt.nn.Linear(6, 8), rt.nn.Tanh(), rt.nn.Linear(8, 2))

    def fn(x, label):
        h = net(x)
        h = cond(rt.mean(h) > 0, lambda: h * 2.0, lambda: h - 1.0)
        loss = rt.nn.functional.cross_entropy(h, label)
        rt.optimizer.Adam(0.05).minimize(loss)
        return [loss, h]

    main, startup, outs = build(fn, [("x", [4, 6], "float32"), ("label", [4], "int64")])
    rng = np.random.default_rng(0)
    feed = {"x": rng.normal(size=(4, 6)).astype("float32"), "label": np.array([0, 1, 1, 0])}
    expected, got = run_both(main, feed, outs, startup=startup, steps=4)
    assert_same(expected, got, rtol=1e-4)
    assert not np.allclose(got[0][0], got[-1][0])  # the parameters moved


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda: rt.optimizer.Adadelta(1.0, weight_decay=0.01),
        lambda: rt.optimizer.Lamb(0.05, exclude_from_weight_decay_fn=lambda p: "b_" in p.name),
    ],
    ids=["adadelta", "lamb"],
)
def test_adadelta_and_lamb_updates_match_over_steps(make_opt):
    rt.seed(6)
    net = rt.nn.Sequential(rt.nn.Linear(6, 8), rt.nn.Tanh(), rt.nn.Linear(8, 2))

    def fn(x, label):
        loss = rt.nn.functional.cross_entropy(net(x), label)
        make_opt().minimize(loss)
        return [loss]

    main, startup, outs = build(fn, [("x", [4, 6], "float32"), ("label", [4], "int64")])
    rng = np.random.default_rng(1)
    feed = {"x": rng.normal(size=(4, 6)).astype("float32"), "label": np.array([0, 1, 1, 0])}
    expected, got = run_both(main, feed, outs, startup=startup, steps=3)
    assert_same(expected, got, rtol=1e-4)
    assert got[0][0] != got[-1][0]  # the loss moved


def test_int64_and_float64_keep_their_dtypes():
    def fn(n, v):
        _, total, out = while_loop(
            lambda i, t, v: i < n,
            lambda i, t, v: (i + 1, t + i * 3_000_000_000, v * 1.000000001),
            [rt.full([], 0, "int64"), rt.full([], 0, "int64"), v],
        )
        return [total, out]

    main, _, outs = build(fn, [("n", [], "int64"), ("v", [3], "float64")])
    expected, got = run_both(main, {"n": np.array(4), "v": np.array([1.0, 2.0, 3.0])}, outs)
    assert got[0][0].dtype == np.int64 and int(got[0][0]) == 18_000_000_000
    assert got[0][1].dtype == np.float64
    assert_same(expected, got, rtol=1e-15)


def test_executor_spellings_and_errors():
    main, _, out = build(lambda x: x * 2.0, [("x", [2], "float32")])
    a = static.Executor(backend="xla").run(main, {"x": np.ones(2, "float32")}, [out])
    b = static.Executor(compiler="xla").run(main, {"x": np.ones(2, "float32")}, [out])
    np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(ValueError, match="no block compiler 'tpu'"):
        static.Executor(compiler="tpu")


def test_an_unlowerable_op_falls_back_once_naming_op_and_line():
    def fn(x):
        y = x[x > 0]  # the output shape depends on the values
        return [rt.sum(y * 2.0)]

    main, _, outs = build(fn, [("x", [3, 4], "float32")])
    line = fn.__code__.co_firstlineno + 1
    feed = {"x": np.random.default_rng(0).normal(size=(3, 4)).astype("float32")}
    exe = static.Executor(compiler="xla")
    with pytest.warns(XlaFallbackWarning) as caught:
        got = [exe.run(main, feed, outs) for _ in range(3)]
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'getitem'" in message and f"{__file__}:{line}" in message
    assert caught[0].filename == __file__ and caught[0].lineno == line
    expected = static.Executor().run(main, feed, outs)
    for g in got:
        np.testing.assert_allclose(g[0], expected[0], rtol=1e-6)


@pytest.mark.parametrize("steps", [0, 3, 200])
def test_gradient_through_a_while(steps):
    """The trajectory buffers start at 64 rows; 200 iterations make the compiler grow them."""

    def fn(x, n):
        _, y = while_loop(
            lambda i, y: i < n,
            lambda i, y: (i + 1, rt.sin(y) * x + 0.1),
            [rt.full([], 0, "int64"), x],
        )
        loss = rt.sum(y * y)
        return [loss, *static.gradients(loss, [x])]

    main, _, outs = build(fn, [("x", [4], "float64"), ("n", [], "int64")])
    feed = {"x": np.linspace(-1, 1, 4), "n": np.array(steps)}
    expected, got = run_both(main, feed, outs, steps=2)
    assert_same(expected, got, rtol=1e-12)


def test_parameters_stay_on_the_device_between_calls_and_user_updates_are_seen():
    """A training program's parameters go into the next call as the device arrays the last
    call wrote (no host round trip); a value the user sets in the scope between calls is
    the one the next call reads."""
    import jax

    rt.seed(6)
    net = rt.nn.Linear(3, 2)

    def fn(x):
        loss = rt.mean(net(x) ** 2)
        rt.optimizer.SGD(0.1).minimize(loss)
        return [loss]

    main, startup, outs = build(fn, [("x", [4, 3], "float32")])
    x = np.random.default_rng(1).normal(size=(4, 3)).astype("float32")
    scope, exe = static.Scope(), static.Executor(compiler="xla")
    exe.run(startup, scope=scope)
    exe.run(main, {"x": x}, outs, scope=scope)
    (xla_fn,) = [r.fn for r in exe._cache.values() if r.program is main]
    jitted, passed = xla_fn._jitted, []

    def spy(*args):
        passed.append(args)
        return jitted(*args)

    xla_fn._jitted = spy
    for _ in range(2):
        written = {n: xla_fn._device[n][1] for n in xla_fn.writes}
        exe.run(main, {"x": x}, outs, scope=scope)
        args = passed[-1][: len(xla_fn.reads)]
        assert all(isinstance(a, jax.Array) for a in args)
        assert all(a is written[n] for n, a in zip(xla_fn.reads, args))
    weight, bias = net.weight.name, net.bias.name
    new = np.full((3, 2), 0.5, "float32")
    scope.var(weight).set(new)  # the user replaces a parameter between calls
    b = np.array(scope[bias])
    (loss,) = exe.run(main, {"x": x}, outs, scope=scope)
    np.testing.assert_allclose(loss, np.mean((x @ new + b) ** 2), rtol=1e-6)
    assert not np.array_equal(scope[weight], new)  # and updated it


def test_repeated_calls_with_new_shapes_dtypes_and_feeds_never_reuse_a_stale_call():
    """The Executor's repeat-call path and the function's call plan key on what was fed:
    a new batch size, a float64 feed (cast to the variable's float32), a different fetch
    list in the same list object and a new feed dict each give the default executor's
    results."""

    def fn(x):
        return [rt.sum(x * 2.0, axis=1), rt.mean(x)]

    main, _, outs = build(fn, [("x", [-1, 3], "float32")])
    rng = np.random.default_rng(8)
    feeds = [rng.normal(size=(n, 3)).astype("float32") for n in (2, 5, 2, 1)]
    feeds.append(rng.normal(size=(4, 3)))  # float64: cast to float32 as the default does
    xla, default = static.Executor(compiler="xla"), static.Executor()
    fetch = list(outs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlaFallbackWarning)
        for x in feeds:
            got, want = xla.run(main, {"x": x}, fetch), default.run(main, {"x": x}, fetch)
            assert_same([want], [got], rtol=1e-6)
        fetch[:] = fetch[::-1]  # the same list object, other items
        got = xla.run(main, {"x": feeds[0]}, fetch)
    assert got[0].shape == () and got[1].shape == (2,)
    np.testing.assert_allclose(got[1], feeds[0].sum(axis=1) * 2.0, rtol=1e-6)


def test_a_result_the_caller_mutates_does_not_change_later_calls():
    """Results are the caller's own arrays: writing into one (or into the fed array
    afterwards) changes neither the next result nor a persistable in the scope."""
    rt.seed(9)
    net = rt.nn.Linear(3, 3)

    def fn(x):
        return [net(x), x * 1.0]

    main, startup, outs = build(fn, [("x", [2, 3], "float32")])
    outs = [*outs, net.weight.name]  # a persistable fetched as it is
    x = np.ones((2, 3), "float32")
    scope, exe = static.Scope(), static.Executor(compiler="xla")
    exe.run(startup, scope=scope)
    first = exe.run(main, {"x": x}, outs, scope=scope)
    kept = [np.array(r) for r in first]
    for r in first:
        assert r.flags.writeable
        r[...] = -7.0
    again = exe.run(main, {"x": x}, outs, scope=scope)
    for want, got in zip(kept, again, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(scope[net.weight.name]), kept[2])


def test_64_bit_mode_is_on_only_during_the_call():
    """The compiled call turns JAX's 64-bit mode on for itself and restores the caller's
    setting afterwards, also when the call raises."""
    import jax
    import jax.numpy as jnp

    def fn(x):
        static.nn.Assert(rt.sum(x) < 10.0, message="too big")
        return [x * 2.0]

    main, _, outs = build(fn, [("x", [2], "float64")])
    exe = static.Executor(compiler="xla")
    got = exe.run(main, {"x": np.ones(2)}, outs)[0]
    assert got.dtype == np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # JAX: float64 truncated to float32
        assert jnp.zeros(1, "float64").dtype == jnp.float32  # off again for other code
    with pytest.raises(rt.errors.AssertionFailedError, match="too big"):
        exe.run(main, {"x": np.full(2, 9.0)}, outs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert jnp.zeros(1, "float64").dtype == jnp.float32
    with jax.enable_x64(True):  # a caller already in 64-bit mode stays in it
        exe.run(main, {"x": np.ones(2)}, outs)
        assert jnp.zeros(1, "float64").dtype == jnp.float64


def test_32_bit_arguments_call_without_the_64_bit_switch():
    """A function whose parameters and persistable reads are all 32-bit traces in 64-bit
    mode and is called without it (``fn._inside``): int64 and float64 values inside and out
    keep their dtypes and equal the default executor's, the caller's mode is untouched, and
    the generated calls do without the switch; a float64 feed is cast by the generic path."""
    import jax.numpy as jnp

    def fn(x):
        _, big, y = while_loop(
            lambda i, b, y: i < 4,
            lambda i, b, y: (i + 1, b + i * 3_000_000_000, y * 0.5 + 1.0),
            [rt.full([], 0, "int64"), rt.full([], 0, "int64"), x],
        )
        wide = rt.cast(y, "float64") * 1e-300
        return [big, rt.sum(y), wide]

    main, _, outs = build(fn, [("x", [3], "float32")])
    feed = {"x": np.array([1.0, 2.0, 3.0], "float32")}
    expected, got = run_both(main, feed, outs, steps=3)
    assert got[0][0].dtype == np.int64 and int(got[0][0]) == 18_000_000_000
    assert got[0][2].dtype == np.float64 and got[0][2][0] > 0  # not flushed to float32
    assert_same(expected, got, rtol=1e-15)
    exe = static.Executor(compiler="xla")
    for _ in range(3):
        exe.run(main, feed, outs)
    (runner,) = [r for r in exe._cache.values() if r.program is main]
    assert runner.fn._inside and "x64" not in runner.prepared.__source__
    calls = []
    on = runner.fn._x64_on
    runner.fn._x64_on = lambda: calls.append(1) or on()
    got = exe.run(main, feed, outs)
    assert calls == [] and int(got[0]) == 18_000_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # JAX: float64 truncated to float32
        assert jnp.zeros(1, "float64").dtype == jnp.float32  # the caller's mode stays off
    cast = exe.run(main, {"x": feed["x"].astype("float64")}, outs)  # float64 feed: cast
    assert_same([expected[0]], [cast])


def test_a_64_bit_scope_value_for_a_32_bit_persistable_turns_the_switch_back_on():
    """A float64 array the user puts in the scope for a float32 persistable reaches the
    computation as float64 (as on the default executor), not cut to 32 bits: the function
    goes back to calls in 64-bit mode."""
    rt.seed(3)
    net = rt.nn.Linear(3, 2)

    def fn(x):
        return [net(x)]

    main, startup, outs = build(fn, [("x", [2, 3], "float32")])
    x = np.ones((2, 3), "float32")
    results = []
    for compiler in (None, "xla"):
        scope, exe = static.Scope(), static.Executor(compiler=compiler)
        exe.run(startup, scope=scope)
        for _ in range(3):
            exe.run(main, {"x": x}, outs, scope=scope)
        scope.var(net.weight.name).set(np.full((3, 2), 1 / 3))  # float64
        results.append([exe.run(main, {"x": x}, outs, scope=scope) for _ in range(2)])
        if compiler == "xla":
            (runner,) = [r for r in exe._cache.values() if r.program is main]
            assert not runner.fn._inside
    assert_same(*results, rtol=1e-15)


def _jaxpr_text(main, feed, fetch, startup=None) -> str:
    """The jaxpr of the XLA function that runs ``main`` (after one call)."""
    import functools

    import jax

    scope, exe = static.Scope(), static.Executor(compiler="xla")
    if startup is not None:
        exe.run(startup, scope=scope)
    exe.run(main, feed, fetch, scope=scope)
    (runner,) = [r for r in exe._cache.values() if r.program is main]
    fn = runner.fn
    args = (*fn._plan[1], *[feed[name] for name in fn.params])
    token = fn._x64_on()
    try:
        traced = functools.partial(fn._traced, fn.capacity, fn._random, False)
        return str(jax.make_jaxpr(traced)(*args))
    finally:
        fn._x64_off(token)


def test_transposed_matmul_operands_stay_in_the_dot():
    """``x^T @ y`` and ``x @ y^T`` (``transpose_x``/``transpose_y``), plain and batched, give
    the default executor's values, with no array of their own for the transposed operand."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(6, 5)).astype("float32")
    y = rng.normal(size=(6, 3)).astype("float32")

    def transposed(a, b):
        return [rt.matmul(a, b, transpose_x=True), rt.matmul(b, b, transpose_y=True)]

    main, _, outs = build(transposed, [("a", [6, 5], "float32"), ("b", [6, 3], "float32")])
    feed = {"a": x, "b": y}
    assert_same(*run_both(main, feed, outs))
    assert "optimization_barrier" not in _jaxpr_text(main, feed, outs)

    def batched(a, b):
        return [rt.matmul(a, b, transpose_x=True)]

    main, _, outs = build(batched, [("a", [2, 6, 5], "float32"), ("b", [2, 6, 3], "float32")])
    feed = {"a": np.stack([x, x]), "b": np.stack([y, -y])}
    assert_same(*run_both(main, feed, outs))


def test_a_training_steps_weight_gradients_take_the_transposed_operand_in_the_dot():
    """A linear layer trained by SGD: the weight gradient ``x^T @ g`` is one dot on the
    transposed operand (no array of its own for ``x^T``), and the steps equal the default
    executor's."""
    rt.seed(5)
    net = rt.nn.Linear(5, 3)

    def fn(x):
        loss = rt.mean(rt.tanh(net(x)) ** 2)
        rt.optimizer.SGD(0.1).minimize(loss)
        return [loss]

    main, startup, outs = build(fn, [("x", [8, 5], "float32")])
    feed = {"x": np.random.default_rng(5).normal(size=(8, 5)).astype("float32")}
    assert_same(*run_both(main, feed, outs, startup=startup, steps=3))
    assert "optimization_barrier" not in _jaxpr_text(main, feed, outs, startup=startup)


def _counted_loop(start, compare, bound, step, sub=False, swap=False, dtype="int64"):
    """``while i <compare> bound: i += step; v = v * 0.999 + 0.001`` (also counting down)."""
    ops = {"<": rt.less_than, "<=": rt.less_equal, ">": rt.greater_than, ">=": rt.greater_equal}
    flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}

    def fn(v):
        def cond_fn(i, v):
            return ops[flipped[compare]](bound, i) if swap else ops[compare](i, bound)

        def body(i, v):
            return (i - step if sub else i + step), v * 0.999 + 0.001

        i, v = while_loop(cond_fn, body, [rt.full([], start, dtype), v])
        return [i, v]

    return fn


@pytest.mark.parametrize(
    "start, compare, bound, step, sub, swap",
    [
        (0, "<", 1000, 1, False, False),  # W3: 250 rounds of 4 bodies, no rest
        (0, "<", 37, 1, False, False),  # 9 rounds and one more body
        (3, "<=", 40, 2, False, False),  # counter 3, 5, ..., 39: 19 bodies
        (50, ">", 4, 3, True, False),  # counting down: 50, 47, ..., 5
        (50, ">=", 4, 3, True, True),  # 4 <= i, written the other way round
        (0, "<", 70, 1, False, True),  # 70 > i
        (0, "<", 7, 1, False, False),  # too short to unroll: one plain loop
        (10, "<", 5, 1, False, False),  # never runs
    ],
)
def test_a_counted_loop_runs_several_bodies_per_iteration(start, compare, bound, step, sub, swap):
    """A loop whose trip count is known while tracing (a counter from a constant, compared
    with a constant, stepped by one) runs UNROLL_FACTOR bodies per ``lax.while_loop``
    iteration and the rest in a plain loop: the counter and the values are the default
    executor's."""
    from autostatic_runtime.static.xla import lowering

    fn = _counted_loop(start, compare, bound, step, sub, swap)
    main, _, outs = build(fn, [("v", [8], "float32")])
    feed = {"v": np.random.default_rng(3).normal(size=(8,)).astype("float32")}
    expected, got = run_both(main, feed, outs)
    assert_same(expected, got)
    np.testing.assert_array_equal(got[0][0], expected[0][0])  # the counter, exactly
    span = {"<": bound - start, "<=": bound - start + 1}.get(compare)
    if span is None:
        span = start - bound + (compare == ">=")
    trips = max(0, -(-span // step))
    rounds = trips // lowering.UNROLL_FACTOR
    text = _jaxpr_text(main, feed, outs)
    loops = text.count("while[")
    muls = text.count(" mul ")
    if rounds >= lowering.UNROLL_MIN_ROUNDS:
        rest = trips % lowering.UNROLL_FACTOR
        assert loops == 1 + (rest > 0)
        assert muls == lowering.UNROLL_FACTOR + (rest > 0)
    else:
        assert (loops, muls) == (1, 1)


def test_a_loop_whose_count_is_not_known_while_tracing_is_not_unrolled():
    """A bound fed at run time, a condition with more than a comparison, or a body of more
    than UNROLL_BODY_OPS ops: one body per iteration."""

    def fed_bound(v, n):
        start = rt.full([], 0, "int64")
        _, v = while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 0.5), [start, v])
        return [v]

    def two_tests(v, n):
        def cond_fn(i, v):
            return rt.logical_and(i < 100, rt.sum(v) > -1e9)

        _, v = while_loop(cond_fn, lambda i, v: (i + 1, v * 0.5), [rt.full([], 0, "int64"), v])
        return [v]

    def long_body(v, n):  # 4 ops: four bodies would make one long fused chain
        body = lambda i, v: (i + 1, (v * 0.5 + 0.25) * 0.75)  # noqa: E731
        _, v = while_loop(lambda i, v: i < 100, body, [rt.full([], 0, "int64"), v])
        return [v]

    rng = np.random.default_rng(4)
    feed = {"v": rng.normal(size=(4,)).astype("float32"), "n": np.array(60, "int64")}
    for fn in (fed_bound, two_tests, long_body):
        main, _, outs = build(fn, [("v", [4], "float32"), ("n", [], "int64")])
        assert_same(*run_both(main, feed, outs))
        text = _jaxpr_text(main, feed, outs)
        assert text.count("while[") == 1 and text.count(" mul ") == (2 if fn is long_body else 1)


def test_a_counted_loop_with_a_print_prints_every_iteration(capfd):
    """An effect in an unrolled body runs once per iteration, in order (22 = 5 rounds of 4
    and 2 more)."""

    def fn(v):
        def body(i, v):
            static.Print(i, message="step")
            return i + 1, v * 0.5

        _, v = while_loop(lambda i, v: i < 22, body, [rt.full([], 0, "int64"), v])
        return [v]

    main, _, outs = build(fn, [("v", [4], "float32")])
    feed = {"v": np.ones(4, "float32")}
    capfd.readouterr()
    scope, exe = static.Scope(), static.Executor()
    expected = exe.run(main, feed, outs, scope=scope)
    printed = capfd.readouterr().out
    scope, exe = static.Scope(), static.Executor(compiler="xla")
    got = exe.run(main, feed, outs, scope=scope)
    assert capfd.readouterr().out == printed
    assert printed.count("step") == 22
    assert_same([expected], [got])
    assert _jaxpr_text(main, feed, outs).count("while[") == 2


def test_counted_loops_nested_and_with_a_one_element_counter():
    """An inner counted loop restarted by each outer iteration, and a counter of shape [1]
    (Paddle style), unrolled: the values are the default executor's."""

    def fn(v):
        def outer(i, v):
            def inner(j, w):
                return j + 1, w * 0.99 + 0.01

            _, v = while_loop(lambda j, w: j < 23, inner, [rt.full([], 0, "int64"), v])
            return i + 1, v + 0.5

        _, v = while_loop(lambda i, v: i < 3, outer, [rt.full([], 0, "int64"), v])
        k, w = while_loop(
            lambda k, w: k < 44, lambda k, w: (k + 2, w - 0.25), [rt.full([1], 1, "int32"), v]
        )
        return [v, k, w]

    main, _, outs = build(fn, [("v", [5], "float32")])
    feed = {"v": np.random.default_rng(6).normal(size=(5,)).astype("float32")}
    expected, got = run_both(main, feed, outs)
    assert_same(expected, got)
    np.testing.assert_array_equal(got[0][1], expected[0][1])
    text = _jaxpr_text(main, feed, outs)
    assert text.count("while[") == 5  # outer; inner rounds and rest; [1] counter rounds and rest


def test_counted_loop_trip_counts_over_a_grid_of_bounds_and_steps():
    """The trip count the unrolled loop assumes, against the default executor's loop, for
    starts and bounds on both sides, steps 1-5 and each comparison (the counter exactly)."""
    rng = np.random.default_rng(9)
    feed = {"v": rng.normal(size=(3,)).astype("float32")}
    cases = []
    for compare in ("<", "<=", ">", ">="):
        down = compare.startswith(">")
        for start, bound in ((0, 16), (3, 40), (-7, 21), (40, 3), (21, -7), (5, 5)):
            if down:
                start, bound = bound, start
            for step in (1, 2, 3, 5):
                cases.append((start, compare, bound, step, down, step == 3))
    for start, compare, bound, step, sub, swap in cases:
        fn = _counted_loop(start, compare, bound, step, sub, swap, dtype="int32")
        main, _, outs = build(fn, [("v", [3], "float32")])
        expected, got = run_both(main, feed, outs)
        np.testing.assert_array_equal(got[0][0], expected[0][0], err_msg=str((start, compare)))
        np.testing.assert_allclose(got[0][1], expected[0][1], rtol=1e-5)


def test_products_and_convolutions_ask_for_their_dtypes_full_precision():
    """Every dot and convolution of a compiled training step, backward included, is traced
    with ``Precision.HIGHEST``: on GPUs from Ampere on, JAX's default computes float32
    products in TF32, which the eager kernels (NumPy, CuPy) do not."""
    rt.seed(4)
    conv, fc = rt.nn.Conv2D(2, 3, 3, padding=1), rt.nn.Linear(3 * 4 * 4, 2)

    def fn(x):
        h = rt.nn.functional.relu(conv(x))
        loss = rt.mean(fc(rt.flatten(h, 1)) ** 2)
        rt.optimizer.SGD(0.1).minimize(loss)
        return [loss]

    main, startup, outs = build(fn, [("x", [2, 2, 4, 4], "float32")])
    feed = {"x": np.random.default_rng(4).normal(size=(2, 2, 4, 4)).astype("float32")}
    text = _jaxpr_text(main, feed, outs, startup=startup)
    heavy = [line for line in text.splitlines() if "dot_general[" in line or "conv_general" in line]
    assert len(heavy) >= 4, text
    products = text.count("precision=")
    assert products >= len(heavy)
    assert text.count("precision=(Precision.HIGHEST, Precision.HIGHEST)") == products, text

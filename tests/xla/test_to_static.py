"""``to_static(..., backend="xla")``: results and training equal eager, parameters stay on
the device until an update, ``load(backend="xla")``, and the fallback with ``explain()``."""

from __future__ import annotations

import contextlib
import copy
import warnings

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
from autostatic import InputSpec  # noqa: E402
from autostatic_runtime import nn  # noqa: E402
from autostatic_runtime.errors import AssertionFailedError  # noqa: E402
from autostatic_runtime.jit.run_program import compiled_functions  # noqa: E402
from autostatic_runtime.static.xla import XlaFallbackWarning, XlaFunction  # noqa: E402


class BranchNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = rt.tanh(self.fc1(x))
        if rt.mean(h) > 0.0:
            h = rt.nn.functional.relu(h) * 2.0
        else:
            h = rt.sigmoid(h)
        i = rt.zeros([], "int64")
        while i < 3:  # a tensor while: its gradient walks the recorded trajectory
            h = h * 0.9 + rt.tanh(h) * 0.05
            i += 1
        return self.fc2(h)


class Unrolled(nn.Layer):
    """A list appended to in a tensor loop with a constant bound: unrolled while tracing."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 3)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        outs = []
        i = rt.zeros([], "int64")
        h = self.inp(x)
        while i < 3:
            h = rt.tanh(self.fc(h))
            outs.append(h)
            i += 1
        return rt.stack(outs).sum(axis=0)


def train(model, steps=4):
    opt = rt.optimizer.Momentum(0.1, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = rt.to_tensor(rng.normal(size=(5, 8)).astype("float32"))
    label = rt.to_tensor(rng.integers(0, 3, 5))
    losses = []
    for _ in range(steps):
        loss = rt.nn.functional.cross_entropy(model(x), label)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()]


@contextlib.contextmanager
def no_fallback():
    """Make an XlaFallbackWarning an error: the block must compile."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlaFallbackWarning)
        yield


@pytest.mark.parametrize("keep_on_device", [None, True], ids=["cpu-policy", "device-cache"])
@pytest.mark.parametrize("model", [BranchNet, Unrolled])
def test_training_equals_eager(model, keep_on_device, monkeypatch):
    from autostatic_runtime.static.xla import compiler

    monkeypatch.setattr(compiler, "KEEP_ON_DEVICE", keep_on_device)
    rt.seed(1)
    eager = model()
    compiled = autostatic.to_static(copy.deepcopy(eager), backend="xla")
    with no_fallback():
        got_losses, got_params = train(compiled)
    want_losses, want_params = train(eager)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    for g, w in zip(got_params, want_params, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    functions = compiled_functions(compiled.forward.concrete_program.runner)
    assert functions and all(isinstance(f, XlaFunction) and f.fallback is None for f in functions)


def test_parameters_stay_on_the_device_until_an_update(monkeypatch):
    """The accelerator policy (on JAX's CPU device, NumPy arrays go in without a copy)."""
    from autostatic_runtime.static.xla import compiler

    monkeypatch.setattr(compiler, "KEEP_ON_DEVICE", True)
    rt.seed(2)
    layer = nn.Linear(4, 2)
    f = autostatic.to_static(layer, backend="xla")
    x = rt.to_tensor(np.ones((3, 4), "float32"))
    with rt.no_grad():
        f(x)  # first sight: copied by the call
        (fn,) = compiled_functions(f.forward.concrete_program.runner)
        assert fn._device[layer.weight.name][1] is None
        f(x)  # second sight: moved to the device to stay
        device = {name: entry[1] for name, entry in fn._device.items()}
        assert all(d is not None for d in device.values())
        f(x)
        assert all(fn._device[n][1] is d for n, d in device.items())  # reused, not copied
        layer.weight.set_value(layer.weight.numpy() * 2.0)
        got = f(x)
    assert fn._device[layer.weight.name][1] is None  # replaced: not the old copy
    np.testing.assert_allclose(got.numpy(), x.numpy() @ layer.weight.numpy() + layer.bias.numpy())


def test_decorator_form_and_float64():
    @autostatic.to_static(backend="xla")
    def f(x, n):
        i = rt.zeros([], "int64")
        while i < n:
            x = rt.sin(x) + 0.5
            i += 1
        return x

    x = rt.to_tensor(np.linspace(-1, 1, 6))
    n = rt.to_tensor(7)
    got = f(x, n)
    want = x.numpy()
    for _ in range(7):
        want = np.sin(want) + 0.5
    assert got.dtype == rt.float64
    got.numpy()[0] = 0.0  # writable, as an eager or default-executor result
    np.testing.assert_allclose(got.numpy()[1:], want[1:], rtol=1e-14)
    assert f.explain() == [
        "program 1 (x: [6] float64, n: [] int64): compiled by XLA (one jax.jit computation "
        "per block)"
    ]


def test_fallback_warns_once_and_explain_says_why():
    @autostatic.to_static(backend="xla")
    def f(x):
        return rt.sum(x[x > 0]) * 2.0  # the selection's size depends on the values

    x = rt.to_tensor(np.array([1.0, -2.0, 3.0]))
    with pytest.warns(XlaFallbackWarning) as caught:
        got = [float(f(x)) for _ in range(3)]
    assert len(caught) == 1
    line = f.dygraph_function.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in str(caught[0].message)
    assert got == [8.0, 8.0, 8.0]
    (text,) = f.explain()
    assert "backend='xla' fell back to the default executor" in text
    assert "'getitem'" in text and f"{__file__}:{line}" in text


def test_random_ops_draw_a_new_stream_at_every_call_and_train():
    @autostatic.to_static(backend="xla")
    def f(x):
        return rt.nn.functional.dropout(x, p=0.5, training=True)

    x = rt.to_tensor(np.full((16, 32), 3.0))
    x.stop_gradient = False
    with no_fallback():
        rt.seed(7)
        first, second = f(x), f(x)
        rt.seed(7)
        again = f(x)
        f(x).sum().backward()
    kept = first.numpy() != 0
    assert 0.35 < kept.mean() < 0.65
    np.testing.assert_array_equal(first.numpy()[kept], 6.0)  # scaled by 1/(1-p)
    assert not np.array_equal(first.numpy(), second.numpy())
    np.testing.assert_array_equal(again.numpy(), first.numpy())  # rt.seed reproduces
    assert set(np.unique(x.grad.numpy())) <= {0.0, 2.0}  # the mask of that call


def test_a_random_op_inside_a_tensor_loop_falls_back():
    @autostatic.to_static(backend="xla")
    def f(x, n):
        i = rt.zeros([], "int64")
        while i < n:
            x = x + rt.rand([2])
            i += 1
        return x

    with pytest.warns(XlaFallbackWarning, match="random numbers inside a loop"):
        got = f(rt.to_tensor(np.zeros(2, "float32")), rt.to_tensor(3))
    assert got.shape == [2]


def test_load_with_the_xla_backend(tmp_path):
    rt.seed(3)
    model = BranchNet()
    model.eval()
    path = str(tmp_path / "model")
    autostatic.save(
        autostatic.to_static(model, input_spec=[InputSpec([None, 8], "float32", "x")]), path
    )
    x = rt.to_tensor(np.random.default_rng(4).normal(size=(3, 8)).astype("float32"))
    with no_fallback(), rt.no_grad():
        got = autostatic.load(path, backend="xla")(x)
    with rt.no_grad():
        want = autostatic.load(path)(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(autostatic.jit.ToStaticError, match="backend must be None or 'xla'"):
        autostatic.to_static(lambda x: x, backend="cinn")


def test_shapes_from_an_unknown_batch_dim_are_static_in_each_compilation():
    @autostatic.to_static(input_spec=[InputSpec([None, 4], "float32")], backend="xla")
    def f(x):
        z = rt.zeros([x.shape[0], 3])
        y = rt.reshape(x, [x.shape[0] * 2, -1])
        return z, y, rt.arange(x.shape[0])

    with no_fallback():
        for batch in (2, 5):
            z, y, n = f(rt.to_tensor(np.ones((batch, 4), "float32")))
            assert z.shape == [batch, 3] and y.shape == [2 * batch, 2]
            np.testing.assert_array_equal(n.numpy(), np.arange(batch))


def test_print_and_assert_run_at_every_call_in_order(capsys):
    @autostatic.to_static(backend="xla")
    def f(x):
        i = rt.zeros([], "int64")
        while i < 2:
            print("step", i, rt.sum(x))
            x = x * 2.0
            i += 1
        assert rt.sum(x) < 100.0, "too big"
        return x

    with no_fallback():
        for _ in range(2):
            np.testing.assert_array_equal(f(rt.to_tensor(np.ones(2))).numpy(), [4.0, 4.0])
        printed = capsys.readouterr().out
        assert printed.count("step") == 4
        assert printed.index("2.") < printed.index("4.")  # program order
        with pytest.raises(AssertionFailedError, match="too big") as failed:
            f(rt.to_tensor(np.full(2, 40.0)))
    line = f.dygraph_function.__code__.co_firstlineno + 7
    assert f"{__file__}:{line}" in str(failed.value)


def test_a_list_growing_for_a_data_dependent_count_falls_back():
    @autostatic.to_static(backend="xla")
    def f(x, n):
        outs = []
        i = rt.zeros([], "int64")
        while i < n:
            outs.append(x * 2.0)
            i += 1
        return rt.stack(outs)

    with pytest.warns(XlaFallbackWarning, match="no bound the compiler can see"):
        got = f(rt.to_tensor(np.ones(2)), rt.to_tensor(3))
    assert got.shape == [3, 2]


def test_training_through_a_fallback_warns_once():
    class Masked(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return rt.sum(self.fc(x)[x > 0.5])  # the selection's size depends on the values

    layer = Masked()
    f = autostatic.to_static(layer, backend="xla")
    x = rt.to_tensor(np.ones((8, 4), "float32"))
    with pytest.warns(XlaFallbackWarning) as caught:
        for _ in range(2):
            f(x).sum().backward()  # a training forward and a backward: two functions
        with rt.no_grad():
            f(x)  # and an inference one
    assert len(caught) == 1
    assert layer.fc.weight.grad is not None


def test_cached_calls_follow_new_shapes_and_own_their_results():
    """A cached call with another batch size runs that shape's computation, and a result
    the caller writes into changes no later result."""

    @autostatic.to_static(input_spec=[InputSpec([None, 3], "float32")], backend="xla")
    def f(x):
        return rt.tanh(x) * 2.0

    rng = np.random.default_rng(10)
    with no_fallback():
        for batch in (2, 4, 2, 1):
            x = rng.normal(size=(batch, 3)).astype("float32")
            got = f(rt.to_tensor(x))
            np.testing.assert_allclose(got.numpy(), np.tanh(x) * 2.0, rtol=1e-6)
            got.numpy()[...] = 5.0  # the caller's own array
            again = f(rt.to_tensor(x))
            np.testing.assert_allclose(again.numpy(), np.tanh(x) * 2.0, rtol=1e-6)


def _fused_functions(layer):
    runner = layer.forward.concrete_program.runner
    return [fn for train in runner._train.values() for fn in train._fused.values() if fn]


def _eager_grads(model, x, label, scale=1.0):
    loss = rt.nn.functional.cross_entropy(model(x), label) * scale
    loss.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    for p in model.parameters():
        p.clear_gradient(False)
    return float(loss), grads


class LossNet(nn.Layer):
    """A network returning its scalar loss: the shape the fused training step is for."""

    def __init__(self, inner, scale=1.0):
        super().__init__()
        self.inner = inner
        self.scale = scale

    def forward(self, x, label):
        return rt.nn.functional.cross_entropy(self.inner(x), label) * self.scale


def test_a_training_step_fuses_forward_and_backward_after_steps_with_a_backward():
    """Once a step's backward (seed one) followed its forward FUSE_AFTER times, the forward
    computes the gradients too (one computation); the gradients equal eager ones, also for
    a backward with another seed, a second backward of the same loss, and after a forward
    without a backward (which stops the fusing until backwards follow again)."""
    from autostatic_runtime.jit.run_program import FUSE_AFTER

    rt.seed(11)
    eager = BranchNet()
    compiled = autostatic.to_static(LossNet(copy.deepcopy(eager)), backend="xla")
    rng = np.random.default_rng(12)
    x = rt.to_tensor(rng.normal(size=(5, 8)).astype("float32"))
    label = rt.to_tensor(rng.integers(0, 3, 5))
    params = list(compiled.parameters())

    def step(scale=1.0, twice=False):
        loss = compiled(x, label)
        (loss * scale if scale != 1.0 else loss).backward(retain_graph=twice)
        got = [p.grad.numpy().copy() for p in params]
        if twice:
            params[0].grad.numpy()[...] = 123.0  # the caller's own array
            for p in params:
                p.clear_gradient(False)
            (loss * scale if scale != 1.0 else loss).backward()
            again = [p.grad.numpy().copy() for p in params]
            for g, a in zip(got, again, strict=True):
                np.testing.assert_array_equal(a, g)
        for p in params:
            p.clear_gradient(False)
        want_loss, want = _eager_grads(eager, x, label, scale)
        np.testing.assert_allclose(float(loss) * scale, want_loss, rtol=1e-5)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)

    with no_fallback():
        for _ in range(FUSE_AFTER):
            step()
        assert not _fused_functions(compiled)
        step(twice=True)  # fused from here on
        (fused,) = _fused_functions(compiled)
        calls = []
        original = fused._jitted
        fused._jitted = lambda *a: calls.append(1) or original(*a)
        step(scale=0.5)  # fused; another seed: its backward runs the split forward again
        assert len(calls) == 1
        compiled(x, label)  # a forward without a backward: split again from here
        for _ in range(FUSE_AFTER):
            step()
        assert len(calls) == 1
        step(twice=True)
        assert len(calls) == 2


def test_a_program_drawing_random_numbers_never_fuses():
    class Dropped(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return rt.sum(rt.nn.functional.dropout(self.fc(x), p=0.5, training=True))

    layer = autostatic.to_static(Dropped(), backend="xla")
    x = rt.to_tensor(np.ones((3, 4), "float32"))
    with no_fallback():
        for _ in range(4):
            layer(x).backward()
            assert layer.fc.weight.grad is not None
    assert not _fused_functions(layer)


def test_inference_calls_go_through_the_lean_call_and_see_parameter_updates():
    """After its first call a to_static program runs its XLA function's generated lean call;
    a parameter replaced between calls (a new array: the plan no longer matches) is the one
    the next call reads, and results stay the caller's own."""
    rt.seed(12)
    net = nn.Linear(4, 3)
    static_net = autostatic.to_static(copy.deepcopy(net), backend="xla")
    x = rt.to_tensor(np.random.default_rng(12).normal(size=(2, 4)).astype("float32"))
    with no_fallback(), rt.no_grad():
        static_net(x)
        (program,) = static_net.forward.program_cache._programs.values()
        fast = program.runner._fast["numpy"]
        assert "lean_call" in fast.__source__
        calls = []
        program.runner._fast["numpy"] = lambda *a: calls.append(1) or fast(*a)
        for step in range(3):
            got = static_net(x)
            np.testing.assert_allclose(got.numpy(), net(x).numpy(), rtol=1e-6)
            got.numpy()[...] = 7.0
            new = np.full((4, 3), 0.1 * (step + 1), "float32")
            net.weight.set_value(new)
            static_net.weight.set_value(new)
        assert calls == [1, 1, 1]


def test_fused_steps_give_the_default_executors_gradients_as_arrays_the_user_owns():
    """Fused steps hand out parameter gradients without copying them (views that autograd
    adds into ``.grad``): ``.grad`` is still the user's own writable array, equal to the
    default executor's, through accumulation without ``clear_grad``, ``clear_grad(False)``
    (a gradient stored as it is), ``rt.grad``, a parameter hook changing its argument in
    place and gradients changed in place before the update."""
    from autostatic_runtime.jit.run_program import FUSE_AFTER

    rt.seed(21)
    base = LossNet(BranchNet())
    nets = [autostatic.to_static(copy.deepcopy(base), backend=b) for b in (None, "xla")]
    opts = [rt.optimizer.SGD(0.05, parameters=n.parameters()) for n in nets]
    rng = np.random.default_rng(22)
    x = rt.to_tensor(rng.normal(size=(5, 8)).astype("float32"))
    label = rt.to_tensor(rng.integers(0, 3, 5))

    def grads(net):
        return [None if p.grad is None else p.grad.numpy() for p in net.parameters()]

    def same(got, want):
        for g, w in zip(got, want, strict=True):
            assert (g is None) == (w is None)
            if g is not None:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)

    def owned(net):
        arrays = [g for g in grads(net) if g is not None]
        for a in arrays:
            assert a.flags.writeable
            assert not any(np.shares_memory(a, b) for b in arrays if b is not a)

    def each(action):
        return [action(net, opt) for net, opt in zip(nets, opts)]

    def step(net, opt, backwards=1, zero=True, scale_in_place=None):
        for _ in range(backwards):  # more than one: accumulated into .grad
            net(x, label).backward()
        if scale_in_place is not None:
            for g in grads(net):
                g *= scale_in_place
        opt.step()
        opt.clear_grad(zero)

    with no_fallback():
        for _ in range(FUSE_AFTER + 2):
            each(step)
        assert _fused_functions(nets[1])
        each(lambda net, opt: step(net, opt, backwards=2))
        each(lambda net, opt: step(net, opt, zero=False))  # .grad None before the next
        each(lambda net, opt: net(x, label).backward())  # stored as it is: a copy
        same(*each(lambda net, opt: grads(net)))
        owned(nets[1])
        each(lambda net, opt: step(net, opt, scale_in_place=0.5))
        got, want = each(lambda net, opt: rt.grad(net(x, label), list(net.parameters())))
        for g in got:
            assert g.numpy().flags.writeable
        same([g.numpy() for g in got], [w.numpy() for w in want])

        def double(g):
            g.numpy()[...] *= 2.0  # in place: the hook's argument is its to change

        for net in nets:
            net.inner.fc2.weight.register_hook(double)
        each(step)
        each(lambda net, opt: net(x, label).backward())
        same(*each(lambda net, opt: grads(net)))
        owned(nets[1])
    for p, q in zip(*(net.parameters() for net in nets), strict=True):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6)


def test_an_item_set_in_a_constant_from_an_input_compiles_with_xla():
    """``pads = rt.zeros([4]); pads[3] = h // 2``: the zeros are a constant folded to a NumPy
    array, the item set into it a JAX value (the XLA compiler gave up on ``set_value``)."""

    def f(x, h):
        pads = rt.zeros([4], dtype="int32")
        pads[3] = h // 2
        return x + rt.cast(pads, "float32")

    x, h = rt.ones([4]), rt.full([1], 6, dtype="int32")
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlaFallbackWarning)
        out = autostatic.to_static(f, backend="xla")(x, h)
    np.testing.assert_array_equal(out.numpy(), f(x, h).numpy())

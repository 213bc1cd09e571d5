"""``rt.amp`` under ``autostatic.to_static``: a forward compiled inside ``auto_cast`` (Paddle's
test_mnist_amp and test_amp_case idioms) and whole training steps with ``GradScaler``
compiled into one program give the eager losses, parameters and loss-scale state.

The casts run on NumPy made to declare float16 (``fp16_numpy``; the CPU has no mixed
precision, so there auto_cast warns and does nothing, which is tested too) and on CuPy
behind the GPU marker.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from autostatic_runtime import nn
from autostatic_runtime.amp import AmpWarning
from autostatic_runtime.amp import autocast as autocast_module


@pytest.fixture
def fp16_numpy(monkeypatch):
    """NumPy counts as a device with float16 mixed precision."""
    monkeypatch.setitem(autocast_module.AMP_DTYPES, "numpy", frozenset({"float16"}))


@pytest.fixture
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AmpWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # inf * 0 in injected steps
        yield


class SmallMnist(nn.Layer):
    """Paddle's dy2static MNIST, shrunk: conv-pool, a data-dependent branch, a linear head
    with softmax, and the loss and accuracy computed in forward."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2D(2, 2)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x, label=None):
        h = F.relu(self.pool(self.conv(x)))
        if rt.mean(h) > 10.0:  # a tensor branch (not taken with these inputs)
            h = h * 0.5
        prediction = F.softmax(self.fc(rt.flatten(h, 1)))
        if label is None:
            return prediction
        acc = rt.metric.accuracy(prediction, label)
        loss = F.cross_entropy(prediction, label, use_softmax=False)
        return prediction, acc, rt.mean(loss)


def _batches(n=3):
    rng = np.random.default_rng(7)
    return [
        (
            rt.to_tensor(rng.standard_normal((4, 1, 8, 8)).astype("float32")),
            rt.to_tensor(rng.integers(0, 10, (4, 1)).astype("int64")),
        )
        for _ in range(n)
    ]


def _train_forward_compiled(to_static: bool, level: str) -> list:
    """Paddle's test_mnist_amp (O1) and test_mnist_pure_fp16 (O2, ``decorate``) loops: the
    model (maybe compiled) under auto_cast, the scaled backward and ``scaler.minimize``
    eager."""
    rt.seed(11)
    model = SmallMnist()
    if to_static:
        model = autostatic.to_static(model)
    adam = rt.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    scaler = rt.amp.GradScaler(init_loss_scaling=1024)
    if level == "O2":
        model, adam = rt.amp.decorate(model, adam, level="O2", save_dtype="float32")
    losses = []
    for img, label in _batches():
        with rt.amp.auto_cast(level=level):
            _, _, avg_loss = model(img, label=label)
        scaled = scaler.scale(avg_loss)
        scaled.backward()
        scaler.minimize(adam, scaled)
        losses.append(float(avg_loss))
        model.clear_gradients()
    return losses


@pytest.mark.parametrize("level", ["O1", "O2"])
@pytest.mark.parametrize("device", ["cpu", "fp16_numpy"])
def test_mnist_forward_compiled_under_auto_cast_trains_as_eager(device, level, request, quiet):
    if device == "fp16_numpy":
        request.getfixturevalue("fp16_numpy")
    dygraph = _train_forward_compiled(False, level)
    static = _train_forward_compiled(True, level)
    np.testing.assert_allclose(dygraph, static, rtol=1e-5, atol=1e-3)


def _step(net, x, y, opt, scaler, level):
    with rt.amp.auto_cast(level=level):
        logits = net(x)
    loss = F.cross_entropy(logits.astype("float32"), y)
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.minimize(opt, scaled)
    opt.clear_grad()
    return loss


def _train_steps(compiled: bool, level: str, backend: str | None = None):
    rt.seed(3)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = rt.optimizer.Momentum(learning_rate=0.05, parameters=net.parameters())
    net, opt = rt.amp.decorate(net, opt, level=level)
    scaler = rt.amp.GradScaler(init_loss_scaling=1024, incr_every_n_steps=2)
    step = autostatic.to_static(_step, backend=backend) if compiled else _step
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(4):
        x = rt.to_tensor(rng.standard_normal((6, 8)).astype("float32"))
        y = rt.to_tensor(rng.integers(0, 4, (6, 1)))
        losses.append(float(step(net, x, y, opt, scaler, level)))
    return losses, net, scaler, step


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_a_compiled_amp_training_step_equals_the_eager_step(level, fp16_numpy):
    eager, net_e, scaler_e, _ = _train_steps(False, level)
    compiled, net_c, scaler_c, step = _train_steps(True, level)
    assert step.program_cache.misses == 1
    np.testing.assert_array_equal(eager, compiled)
    for a, b in zip(net_e.parameters(), net_c.parameters()):
        assert a.dtype == b.dtype == ("float16" if level == "O2" else "float32")
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
    state = scaler_c.state_dict()
    assert state["scale"][0] == 4096.0 and state == scaler_e.state_dict() | {
        "scale": state["scale"]
    }
    program = str(step.concrete_program.main_program)
    assert "cast[dtype=autostatic_runtime.float16]" in program


def test_an_amp_training_step_compiled_by_xla_equals_the_eager_step(fp16_numpy):
    pytest.importorskip("jax")
    eager, net_e, scaler_e, _ = _train_steps(False, "O2")
    compiled, net_c, scaler_c, step = _train_steps(True, "O2", backend="xla")
    assert "compiled by XLA as one computation" in step.explain()[0]
    np.testing.assert_allclose(eager, compiled, rtol=1e-5, atol=1e-3)  # float16 kernels differ
    assert float(scaler_c.state_dict()["scale"][0]) == float(scaler_e.state_dict()["scale"][0])


def _inf_step(net, x, k, opt, scaler):
    loss = (net(x) * k).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    return loss


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_a_compiled_step_skips_updates_on_inf_gradients_as_eager(compiled, quiet):
    rt.seed(1)
    net = nn.Linear(4, 2)
    opt = rt.optimizer.Adam(learning_rate=0.1, parameters=net.parameters())
    scaler = rt.amp.GradScaler(
        init_loss_scaling=8.0, incr_every_n_steps=3, decr_every_n_nan_or_inf=2
    )
    step = autostatic.to_static(_inf_step) if compiled else _inf_step
    x = rt.ones([3, 4])
    seen = []
    for k in [1.0, np.inf, np.nan, 1.0, 1.0, 1.0]:
        before = [p.numpy().copy() for p in [net.weight, *opt.state_dict().values()]]
        step(net, x, rt.to_tensor([k], dtype="float32"), opt, scaler)
        after = [p.numpy() for p in [net.weight, *opt.state_dict().values()]]
        changed = len(before) != len(after) or any(
            not np.array_equal(a, b) for a, b in zip(before, after)
        )
        s = scaler.state_dict()
        seen.append((changed, float(s["scale"][0]), s["incr_count"], s["decr_count"]))
    assert seen == [
        (True, 8.0, 1, 0),
        (False, 8.0, 0, 1),  # parameters and Adam's moments untouched
        (False, 4.0, 0, 0),  # halved after the second bad step
        (True, 4.0, 1, 0),
        (True, 4.0, 2, 0),
        (True, 8.0, 0, 0),  # doubled after three good ones
    ]
    if compiled:
        assert step.program_cache.misses == 1
        scaler.set_incr_every_n_steps(1)  # settings are state the compiled step reads
        step(net, x, rt.to_tensor([1.0]), opt, scaler)
        assert float(scaler.state_dict()["scale"][0]) == 16.0
        assert step.program_cache.misses == 1


def _cast_ops_of_step(backward_inside: bool) -> int:
    rt.seed(0)
    lin = nn.Linear(4, 3)
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=lin.parameters())

    def step(x):
        with rt.amp.auto_cast(level="O2", use_promote=False):
            loss = F.softmax(lin(x)).mean()
            if backward_inside:
                loss.backward()
                opt.step()
        if not backward_inside:
            loss.backward()
            opt.step()
        opt.clear_grad()
        return loss

    compiled = autostatic.to_static(step)
    compiled(rt.ones([2, 4]))
    ops = compiled.concrete_program.main_program.global_block().ops
    return sum(op.type == "cast" for op in ops)


def test_backward_and_update_inside_auto_cast_append_no_casts(fp16_numpy):
    assert _cast_ops_of_step(True) == _cast_ops_of_step(False)


def test_each_auto_cast_setting_has_its_own_program(fp16_numpy):
    lin = nn.Linear(4, 3)
    f = autostatic.to_static(lambda x: lin(x))
    x = rt.ones([2, 4])
    assert f(x).dtype == rt.float32
    with rt.amp.auto_cast(custom_white_list={"elementwise_add"}):
        assert f(x).dtype == rt.float16
        assert f(x).dtype == rt.float16  # the fast path keys the setting too
    assert f(x).dtype == rt.float32
    with rt.amp.auto_cast(False):
        assert f(x).dtype == rt.float32
    assert f.program_cache.misses == 2
    assert "rt.amp.auto_cast changed (off → O1 float16)" in f.explain_retraces()[0]


class PartialAutoCast(nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(5, 5)

    def forward(self, x):
        out = self.linear(x)
        with rt.amp.auto_cast(level="O2"):
            out = self.linear(out)
        return out


def test_auto_cast_inside_a_compiled_forward_appends_cast_ops(fp16_numpy):
    net = autostatic.to_static(PartialAutoCast())
    x = rt.randn([5, 5])
    out = net(x)
    ops = [op.type for op in net.forward.main_program.global_block().ops]
    assert ops.count("cast") == 3  # the input and the weight down, the product up (the bias)
    eager = PartialAutoCast()
    eager.set_state_dict(net.state_dict())
    np.testing.assert_array_equal(out.numpy(), eager(x).numpy())


def test_on_the_cpu_a_compiled_forward_has_no_casts_and_one_program(quiet):
    net = autostatic.to_static(PartialAutoCast())
    net(rt.randn([5, 5]))
    with rt.amp.auto_cast():
        net(rt.randn([5, 5]))
    assert "cast" not in [op.type for op in net.forward.main_program.global_block().ops]
    assert net.forward.program_cache.misses == 1


def _float64_slice(x):
    return x[0:3].astype("float32")


def test_float64_inputs_are_not_cast(fp16_numpy):
    x = rt.randn((10, 10)).astype("float64")
    static = autostatic.to_static(_float64_slice)
    with rt.amp.auto_cast(True, level="O2"):
        dy, st = _float64_slice(x), static(x)
    assert dy.dtype == st.dtype == rt.float32
    np.testing.assert_array_equal(dy.numpy(), st.numpy())


@pytest.mark.gpu
def test_auto_cast_computes_in_float16_on_the_gpu():
    pytest.importorskip("cupy")
    if not rt.is_compiled_with_cuda():
        pytest.skip("no CUDA device")
    saved = rt.get_device()
    rt.set_device("gpu")
    try:
        assert rt.amp.is_float16_supported()
        lin = nn.Linear(8, 8)
        x = rt.randn([4, 8])
        with rt.amp.auto_cast():
            y = lin(x)
            z = rt.matmul(x, lin.weight)
        assert z.dtype == rt.float16 and y.dtype == rt.float32
        static = autostatic.to_static(lambda t: rt.matmul(t, lin.weight))
        with rt.amp.auto_cast():
            np.testing.assert_array_equal(static(x).numpy(), z.numpy())
    finally:
        rt.set_device(saved)

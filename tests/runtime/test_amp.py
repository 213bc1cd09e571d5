"""``rt.amp``: auto_cast's casts, GradScaler's dynamic loss scaling, decorate, eagerly.

The CPU (NumPy) has no mixed precision, as Paddle's CPU place has none: there auto_cast warns
and does nothing. The casts themselves are tested on NumPy made to declare float16
(``fp16_numpy``), which computes in float16 as a GPU would; ``tests/jit/test_amp.py`` runs
them on CuPy behind the GPU marker.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.amp import AmpWarning
from autostatic_runtime.amp import autocast as autocast_module

F = rt.nn.functional


@pytest.fixture
def fp16_numpy(monkeypatch):
    """NumPy counts as a device with float16 mixed precision."""
    monkeypatch.setitem(autocast_module.AMP_DTYPES, "numpy", frozenset({"float16"}))


def _x(*shape):
    return rt.to_tensor(np.random.default_rng(0).standard_normal(shape).astype("float32"))


# ---- auto_cast ---------------------------------------------------------------------------------


def test_on_the_cpu_auto_cast_warns_and_changes_nothing():
    lin = rt.nn.Linear(4, 3)
    x = _x(2, 4)
    with pytest.warns(AmpWarning, match="'cpu' does not compute mixed precision in float16"):
        with rt.amp.auto_cast():
            y = lin(x)
    assert y.dtype == rt.float32
    np.testing.assert_array_equal(y.numpy(), lin(x).numpy())
    assert not rt.amp.is_float16_supported()
    assert not rt.amp.is_float16_supported("cpu")
    assert not rt.amp.is_bfloat16_supported()


def test_o1_casts_white_ops_down_and_black_ops_up(fp16_numpy):
    x, w = _x(3, 4), _x(4, 5)
    with rt.amp.auto_cast():
        y = rt.matmul(x, w)  # white: float16
        s = F.softmax(y)  # black: float32
        m = y.mean()  # black (reduce_mean): float32
        r = F.relu(y)  # gray, all inputs float16: float16
        a = y + s  # gray, a float32 input: float32
        d = x.astype("float64") * 2  # float64 is never cast
    assert (y.dtype, s.dtype, m.dtype, r.dtype, a.dtype, d.dtype) == (
        "float16", "float32", "float32", "float16", "float32", "float64",
    )  # fmt: skip
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy(), rtol=2e-3, atol=2e-3)


def test_custom_lists_and_o2_and_od(fp16_numpy):
    x, y = _x(2, 3), _x(2, 3)
    with rt.amp.auto_cast(custom_white_list={"elementwise_add"}):
        assert (x + y).dtype == rt.float16
    with rt.amp.auto_cast(custom_black_list=["matmul"]):  # Paddle's newer name for matmul_v2
        assert rt.matmul(x, y.T).dtype == rt.float32
    with rt.amp.auto_cast(level="O2", use_promote=False):
        assert (x * y).dtype == rt.float16  # everything off the black list in float16
        assert F.softmax(x).dtype == rt.float16  # not on O2's black list
    with rt.amp.auto_cast(level="O2"):
        assert (x * y).dtype == rt.float32  # promote: float32 inputs keep it float32
    with rt.amp.auto_cast(level="OD"):
        assert rt.matmul(x, y.T).dtype == rt.float16
        assert (x.astype("float16") * 2).dtype == rt.float32  # off the white list: float32


def test_nesting_and_disable_inside(fp16_numpy):
    x, w = _x(2, 3), _x(3, 3)
    with rt.amp.auto_cast():
        with rt.amp.auto_cast(False):
            assert rt.matmul(x, w).dtype == rt.float32
        with rt.amp.auto_cast(custom_black_list={"matmul_v2"}):
            assert rt.matmul(x, w).dtype == rt.float32
        assert rt.matmul(x, w).dtype == rt.float16
    assert rt.matmul(x, w).dtype == rt.float32
    assert rt.amp.amp_guard is rt.amp.auto_cast

    @rt.amp.auto_cast()
    def decorated(a, b):
        return rt.matmul(a, b)

    assert decorated(x, w).dtype == rt.float16


def test_auto_cast_belongs_to_its_thread(fp16_numpy):
    x, w = _x(2, 3), _x(3, 3)
    entered, done = threading.Event(), threading.Event()
    seen = []

    def other():
        entered.wait()
        seen.append(rt.matmul(x, w).dtype)
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with rt.amp.auto_cast():
        entered.set()
        done.wait()
        here = rt.matmul(x, w).dtype
    t.join()
    assert (here, seen) == (rt.float16, [rt.float32])


def test_gradients_flow_back_in_float32_without_casts_of_their_own(fp16_numpy):
    lin = rt.nn.Linear(4, 3)
    x = _x(2, 4)
    with rt.amp.auto_cast(level="O2", use_promote=False):  # every op in float16
        for _ in range(2):  # inside the block: the backward still runs in the forward's
            F.softmax(lin(x)).mean().backward()  # dtypes, and accumulates in float32
    assert lin.weight.grad.dtype == lin.bias.grad.dtype == rt.float32
    ref = rt.nn.Linear(4, 3)
    ref.set_state_dict(lin.state_dict())
    for _ in range(2):
        F.softmax(ref(x)).mean().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), atol=2e-3)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"level": "O3"}, ValueError, "level must be one of O0, OD, O1, O2, not 'O3'"),
        ({"dtype": "float64"}, ValueError, "dtype must be 'float16' or 'bfloat16'"),
        ({"enable": 1}, TypeError, "enable must be True or False"),
        ({"custom_white_list": "matmul"}, TypeError, "custom_white_list must be a list"),
        ({"custom_black_list": [1]}, TypeError, "custom_black_list holds 1"),
        (
            {"custom_white_list": {"conv2d"}, "custom_black_list": ["conv2d"]},
            ValueError,
            "in both custom_white_list and custom_black_list",
        ),
        ({"use_promote": None}, TypeError, "use_promote must be True or False"),
    ],
)
def test_auto_cast_argument_errors(kwargs, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace("[", r"\[")):
        rt.amp.auto_cast(**kwargs)


def test_bfloat16_is_supported_nowhere_and_warns(fp16_numpy):
    scaler = rt.amp.GradScaler()
    with pytest.warns(AmpWarning, match="in bfloat16"):
        with rt.amp.auto_cast(dtype="bfloat16"):
            assert rt.matmul(_x(2, 2), _x(2, 2)).dtype == rt.float32
    loss = _x(1).sum()
    with pytest.warns(AmpWarning, match="not used with bfloat16"):
        assert scaler.scale(loss) is loss  # Paddle's scaler turns itself off for bfloat16
    assert not scaler.is_enable() and not scaler.is_use_dynamic_loss_scaling()
    with rt.amp.auto_cast(False):  # the thread's last AMP dtype is float16 again
        pass
    assert rt.amp.GradScaler().scale(loss) is not loss


# ---- GradScaler ------------------------------------------------------------------------------


def _step(net, opt, scaler, k):
    loss = (net(rt.ones([3, 4])) * k).mean()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    return scaled


def _scaling_history(scaler_kwargs, factors):
    rt.seed(1)
    net = rt.nn.Linear(4, 2)
    opt = rt.optimizer.Adam(learning_rate=0.1, parameters=net.parameters())
    scaler = rt.amp.GradScaler(**scaler_kwargs)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # inf * 0 in the injected steps
        for k in factors:
            before = net.weight.numpy().copy()
            _step(net, opt, scaler, rt.to_tensor([k], dtype="float32"))
            state = scaler.state_dict()
            stepped = not np.array_equal(before, net.weight.numpy())
            out.append(
                (stepped, float(state["scale"][0]), state["incr_count"], state["decr_count"])
            )
    return out, opt, net


def test_dynamic_loss_scaling_skips_inf_steps_and_adjusts_the_scale():
    inf = np.inf
    history, opt, net = _scaling_history(
        {"init_loss_scaling": 8.0, "incr_every_n_steps": 3, "decr_every_n_nan_or_inf": 2},
        [1.0, inf, inf, 1.0, 1.0, 1.0, inf],
    )
    assert history == [
        (True, 8.0, 1, 0),
        (False, 8.0, 0, 1),  # skipped; one bad step is not enough to lower the scale
        (False, 4.0, 0, 0),  # the second halves it
        (True, 4.0, 1, 0),
        (True, 4.0, 2, 0),
        (True, 8.0, 0, 0),  # three finite steps in a row double it
        (False, 8.0, 0, 1),
    ]
    _, finite_only, twin = _scaling_history({"init_loss_scaling": 8.0}, [1.0] * 4)
    key = net.weight.name + "_beta1_pow_acc_0"  # Adam counted only the 4 steps taken
    np.testing.assert_array_equal(
        opt.state_dict()[key].numpy(),
        finite_only.state_dict()[twin.weight.name + "_beta1_pow_acc_0"].numpy(),
    )
    np.testing.assert_allclose(net.weight.numpy(), twin.weight.numpy(), rtol=1e-6)


def test_minimize_unscales_gradients_exactly():
    rt.seed(5)
    a, b = rt.nn.Linear(3, 2), rt.nn.Linear(3, 2)
    b.set_state_dict(a.state_dict())
    opt_a = rt.optimizer.SGD(learning_rate=0.1, parameters=a.parameters())
    opt_b = rt.optimizer.SGD(learning_rate=0.1, parameters=b.parameters())
    scaler = rt.amp.GradScaler(init_loss_scaling=1024.0)
    x = _x(4, 3)
    scaled = scaler.scale(a(x).mean())
    assert scaled.shape == [1]
    scaled.backward()
    scaler.unscale_(opt_a)
    g = a.weight.grad.numpy().copy()
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt_a)
    assert scaler.minimize(opt_a, scaled) == (
        [],
        [(a.weight, a.weight.grad), (a.bias, a.bias.grad)],
    )
    b(x).mean().backward()
    np.testing.assert_array_equal(g, b.weight.grad.numpy())
    opt_b.step()
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    assert float(scaler.state_dict()["scale"][0]) == 1024.0


def test_step_twice_without_update_is_an_error():
    net = rt.nn.Linear(2, 1)
    opt = rt.optimizer.SGD(parameters=net.parameters())
    scaler = rt.amp.GradScaler()
    scaler.scale(net(rt.ones([1, 2])).sum()).backward()
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        scaler.unscale_(opt)
    scaler.update()
    scaler.step(opt)  # a new step after update()


def test_state_dict_round_trip_and_settings():
    scaler = rt.amp.GradScaler(init_loss_scaling=512, incr_every_n_steps=7)
    assert scaler.is_enable() and scaler.is_use_dynamic_loss_scaling()
    assert scaler.get_init_loss_scaling() == 512
    saved = rt.amp.GradScaler(init_loss_scaling=8.0)
    saved._decr_count.set_value(np.array([1], "int32"))
    state = saved.state_dict()
    assert set(state) == {
        "scale", "incr_ratio", "decr_ratio", "incr_every_n_steps", "decr_every_n_nan_or_inf",
        "incr_count", "decr_count", "use_dynamic_loss_scaling",
    }  # fmt: skip
    assert (state["incr_every_n_steps"], state["decr_every_n_nan_or_inf"]) == (2000, 1)
    scaler.load_state_dict(state)
    assert scaler.state_dict().keys() == state.keys()
    for key, value in state.items():
        np.testing.assert_array_equal(scaler.state_dict()[key], value)
    scaler.set_init_loss_scaling(64.0)
    assert float(scaler.state_dict()["scale"][0]) == 64.0
    scaler.set_incr_ratio(3.0)
    scaler.set_decr_ratio(0.25)
    scaler.set_incr_every_n_steps(5)
    scaler.set_decr_every_n_nan_or_inf(4)
    assert (
        scaler.get_incr_ratio(),
        scaler.get_decr_ratio(),
        scaler.get_incr_every_n_steps(),
        scaler.get_decr_every_n_nan_or_inf(),
    ) == (3.0, 0.25, 5, 4)
    with pytest.raises(RuntimeError, match="empty"):
        scaler.load_state_dict({})
    with pytest.raises(KeyError, match="lacks \\['incr_count', 'decr_count'"):
        scaler.load_state_dict({k: v for k, v in state.items() if "count" not in k})


def test_a_disabled_scaler_passes_through():
    net = rt.nn.Linear(2, 1)
    opt = rt.optimizer.SGD(learning_rate=0.5, parameters=net.parameters())
    scaler = rt.amp.GradScaler(enable=False)
    loss = net(rt.ones([1, 2])).sum()
    assert scaler.scale(loss) is loss and not scaler.is_enable()
    assert scaler.state_dict() == {}
    loss.backward()
    before = net.weight.numpy().copy()
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(before, net.weight.numpy())


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"init_loss_scaling": 0}, ValueError, "init_loss_scaling must be > 0"),
        ({"init_loss_scaling": "1024"}, TypeError, "init_loss_scaling must be a number"),
        ({"incr_ratio": 1.0}, ValueError, "incr_ratio must be > 1.0"),
        ({"decr_ratio": 1.5}, ValueError, "decr_ratio must be in \\(0, 1\\)"),
        ({"incr_every_n_steps": 0}, ValueError, "incr_every_n_steps must be >= 1"),
        ({"decr_every_n_nan_or_inf": 2.5}, TypeError, "decr_every_n_nan_or_inf must be an int"),
        ({"use_dynamic_loss_scaling": "yes"}, TypeError, "use_dynamic_loss_scaling must be"),
        ({"enable": None}, TypeError, "enable must be True or False"),
    ],
)
def test_grad_scaler_argument_errors(kwargs, error, words):
    with pytest.raises(error, match="GradScaler: " + words):
        rt.amp.GradScaler(**kwargs)


def test_scale_of_a_non_tensor_is_an_error():
    with pytest.raises(TypeError, match="GradScaler.scale: var must be a Tensor"):
        rt.amp.GradScaler().scale(1.0)


# ---- decorate ------------------------------------------------------------------------------------


class _Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 4)
        self.bn = rt.nn.BatchNorm1D(4)
        self.ln = rt.nn.LayerNorm(4)

    def forward(self, x):
        return self.ln(self.bn(self.fc(x)))


def test_decorate_on_the_cpu_and_at_o1_changes_nothing():
    net = _Net()
    opt = rt.optimizer.SGD(parameters=net.parameters())
    assert rt.amp.decorate(net, opt, level="O2") == (net, opt)
    assert rt.amp.decorate(net) is net
    assert {str(p.dtype) for p in net.parameters()} == {"float32"}


def test_decorate_o2_keeps_norms_float32_and_trains_through_master_weights(fp16_numpy):
    rt.seed(4)
    net = _Net()
    opt = rt.optimizer.Adam(learning_rate=0.01, parameters=net.parameters())
    models, opts = rt.amp.decorate([net], [opt], level="O2")
    assert models == [net] and opts == [opt]
    dtypes_ = {n: str(p.dtype) for n, p in net.named_parameters() if "._" not in n}
    assert dtypes_ == {
        "fc.weight": "float16", "fc.bias": "float16", "bn.weight": "float32",
        "bn.bias": "float32", "ln.weight": "float32", "ln.bias": "float32",
    }  # fmt: skip
    scaler = rt.amp.GradScaler(init_loss_scaling=128)
    x = _x(8, 4)
    losses = []
    for _ in range(3):
        with rt.amp.auto_cast(level="O2"):
            loss = (net(x) ** 2).mean()
        scaled = scaler.scale(loss)
        scaled.backward()
        assert net.fc.weight.grad.dtype == rt.float16
        scaler.minimize(opt, scaled)
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    master = opt._master_weights[id(net.fc.weight)]
    assert master.dtype == rt.float32 and net.fc.weight.dtype == rt.float16
    np.testing.assert_array_equal(master.numpy().astype("float16"), net.fc.weight.numpy())
    assert opt.state_dict()[net.fc.weight.name + "_moment1_0"].dtype == rt.float32


def test_decorate_excluded_layers_stay_float32(fp16_numpy):
    net = rt.nn.Sequential(rt.nn.Linear(2, 2), rt.nn.Sequential(rt.nn.Linear(2, 2)))
    rt.amp.decorate(net, level="O2", excluded_layers=[net[1]])
    assert [str(p.dtype) for p in net.parameters()] == ["float16"] * 2 + ["float32"] * 2
    other = rt.nn.Sequential(rt.nn.Linear(2, 2), rt.nn.Conv2D(1, 1, 1))
    rt.amp.decorate(other, level="O2", excluded_layers=rt.nn.Conv2D)
    assert [str(p.dtype) for p in other.parameters()] == ["float16"] * 2 + ["float32"] * 2


def test_decorate_master_weight_false_updates_in_float16(fp16_numpy):
    net = rt.nn.Linear(2, 2)
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    rt.amp.decorate(net, opt, level="O2", master_weight=False)
    assert not opt._multi_precision and net.weight.dtype == rt.float16


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"level": "O0"}, ValueError, "decorate: level must be one of O1, O2, not 'O0'"),
        ({"dtype": "float32"}, ValueError, "decorate: dtype must be 'float16' or 'bfloat16'"),
        ({"save_dtype": "int8"}, ValueError, "decorate: save_dtype must be one of"),
        ({"master_weight": "yes"}, TypeError, "decorate: master_weight must be None, True"),
        ({"models": 3}, TypeError, "decorate: models must be a Layer or a list of them, not int"),
        ({"optimizers": "sgd"}, TypeError, "decorate: optimizers must be an Optimizer"),
        ({"excluded_layers": 1}, TypeError, "decorate: excluded_layers must be a Layer"),
    ],
)
def test_decorate_argument_errors(kwargs, error, words):
    args = {"models": rt.nn.Linear(2, 2), **kwargs}
    with pytest.raises(error, match=words):
        rt.amp.decorate(**args)


def _o2_run(state=None, steps=2):
    rt.seed(6)  # optimizer state is keyed by parameter names: the same names in every run
    net = rt.nn.Linear(4, 3, rt.ParamAttr(name="amp_w"), rt.ParamAttr(name="amp_b"))
    opt = rt.optimizer.Adam(learning_rate=0.05, parameters=net.parameters())
    net, opt = rt.amp.decorate(net, opt, level="O2")
    if state is not None:
        net.set_state_dict(state[0])
        opt.set_state_dict(state[1])
    x = _x(5, 4)
    losses = []
    for _ in range(steps):
        with rt.amp.auto_cast(level="O2"):
            loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, net, opt


def test_master_weights_are_optimizer_state(fp16_numpy):
    full, _, _ = _o2_run(steps=4)
    first, net, opt = _o2_run(steps=2)
    state = opt.state_dict()
    masters = state["master_weights"]
    assert sorted(masters) == sorted([net.weight.name, net.bias.name])
    assert masters[net.weight.name].dtype == rt.float32
    saved = ({k: v.numpy() for k, v in net.state_dict().items()}, state)
    resumed, _, _ = _o2_run(saved, steps=2)
    assert first + resumed == full  # the float32 masters, not the float16 weights, resume


@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adam", "AdamW", "Lamb"])
def test_multi_precision_optimizers_keep_float32_masters(name):
    rt.seed(8)
    net = rt.nn.Linear(3, 2).to(dtype="float16")
    opt = getattr(rt.optimizer, name)(
        learning_rate=1e-3, parameters=net.parameters(), multi_precision=True
    )
    before = net.weight.numpy().astype("float32")
    for _ in range(3):
        (net(_x(4, 3).astype("float16")) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    master = opt._master_weights[id(net.weight)]
    assert master.dtype == rt.float32 and net.weight.dtype == rt.float16
    np.testing.assert_array_equal(master.numpy().astype("float16"), net.weight.numpy())
    assert not np.array_equal(master.numpy(), before)  # steps below float16's resolution count

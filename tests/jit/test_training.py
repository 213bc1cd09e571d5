"""Training through static programs: ``run_program`` joins the eager tape, so
``loss.backward(); opt.step()`` updates the layer's parameters through ``cond`` and ``while``,
and N steps with to_static give the eager losses."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn


class BranchMLP(nn.Layer):
    """An MLP whose middle activation depends on a tensor condition."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 3)

    def forward(self, x):
        h = rt.tanh(self.fc1(x))
        if rt.mean(h) > 0.0:
            h = rt.nn.functional.relu(self.fc2(h))
        else:
            h = rt.sigmoid(self.fc2(h)) * 2.0
        return self.fc3(h)


class GatedCell(nn.Layer):
    """One LSTM-style step: a gated update of the hidden state."""

    def __init__(self):
        super().__init__()
        self.wx = nn.Linear(4, 8)
        self.wh = nn.Linear(8, 8, bias_attr=False)
        self.gate = nn.Linear(8, 8)

    def forward(self, x_t, h):
        z = self.wx(x_t) + self.wh(h)
        g = rt.sigmoid(self.gate(h))
        return g * rt.tanh(z) + (1.0 - g) * h


class LoopRNN(nn.Layer):
    """A recurrence over a symbolic sequence length (a tensor ``while``)."""

    def __init__(self):
        super().__init__()
        self.cell = GatedCell()
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        n = rt.shape(x)[1]
        h = rt.matmul(x[:, 0, :], rt.zeros([4, 8]))
        i = 0
        while i < n:
            h = self.cell(x[:, i, :], h)
            i = i + 1
        return self.head(h)


def _train(model, batches, steps, static: bool, opt_cls=rt.optimizer.Adam):
    if static:
        model = autostatic.to_static(model, input_spec=[InputSpec([None] * batches[0][0].ndim)])
    opt = opt_cls(learning_rate=0.05, parameters=model.parameters())
    losses = []
    for step in range(steps):
        x, label = batches[step % len(batches)]
        out = model(x)
        loss = nn.functional.cross_entropy(out, label)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    return losses, model


def _same_init(cls):
    rt.seed(7)
    a = cls()
    b = copy.deepcopy(a)
    return a, b


def test_mlp_with_a_tensor_branch_trains_like_eager():
    eager, static = _same_init(BranchMLP)
    rng = np.random.default_rng(0)
    batches = [
        (rt.to_tensor(rng.normal(size=(16, 8)).astype("float32") * s), rt.to_tensor(
            rng.integers(0, 3, size=16))) for s in (1.0, -3.0, 0.5)
    ]  # fmt: skip
    want, _ = _train(eager, batches, 12, static=False)
    got, model = _train(static, batches, 12, static=True)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert want[-1] < want[0]
    assert len(model.forward.program_cache) == 1
    ops = [op.type for op in model.forward.concrete_program.main_program.global_block().ops]
    assert "cond" in ops
    for p, q in zip(eager.parameters(), static.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5)


def test_lstm_style_loop_over_a_symbolic_length_trains_like_eager():
    eager, static = _same_init(LoopRNN)
    rng = np.random.default_rng(1)
    batches = [
        (rt.to_tensor(rng.normal(size=(6, t, 4)).astype("float32")), rt.to_tensor(
            rng.integers(0, 2, size=6))) for t in (3, 5, 1, 4)
    ]  # fmt: skip
    want, _ = _train(eager, batches, 8, static=False, opt_cls=rt.optimizer.SGD)
    got, model = _train(static, batches, 8, static=True, opt_cls=rt.optimizer.SGD)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(model.forward.program_cache) == 1  # every sequence length, one program
    for p, q in zip(eager.parameters(), static.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5)


def test_gradients_reach_inputs_that_need_them():
    def f(x, w):
        y = x * w
        if rt.sum(y) > 0:
            y = y * y
        return rt.sum(y)

    sf = autostatic.to_static(f)
    for sign in (1.0, -1.0):
        x = rt.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        w = rt.to_tensor([sign, 1.0, 0.5], stop_gradient=False)
        f(x, w).backward()
        gx, gw = x.grad.numpy(), w.grad.numpy()
        x.clear_gradient(False)
        w.clear_gradient(False)
        sf(x, w).backward()
        np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-6)
    x = rt.to_tensor([1.0, 2.0, 3.0])  # no gradient needed: none computed
    w = rt.to_tensor([1.0, 1.0, 1.0], stop_gradient=False)
    sf(x, w).backward()
    assert x.grad is None and w.grad is not None


def test_no_grad_and_frozen_parameters():
    net = autostatic.to_static(BranchMLP())
    x = rt.randn([4, 8])
    with rt.no_grad():
        assert net(x).stop_gradient
    net.fc1.weight.stop_gradient = True
    net(x).sum().backward()
    assert net.fc1.weight.grad is None
    assert net.fc3.weight.grad is not None


def test_outputs_combine_with_eager_ops_on_the_tape():
    net = BranchMLP()
    x = rt.randn([4, 8])
    ref = (net(x) * 3).sum()
    ref.backward()
    want = [p.grad.numpy().copy() for p in net.parameters()]
    net.clear_gradients(False)
    autostatic.to_static(net)
    out = net(x)
    (out * 3).sum().backward()
    for p, g in zip(net.parameters(), want):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-5, atol=1e-6)


def test_batch_norm_running_statistics_update_as_in_eager():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.bn = nn.BatchNorm1D(4)

        def forward(self, x):
            return self.bn(self.fc(x))

    eager, static = _same_init(Net)
    autostatic.to_static(static)
    for _ in range(3):
        x = rt.randn([8, 3])
        e, s = eager(x), static(x)
        np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-5, atol=1e-5)
        e.sum().backward()
        s.sum().backward()
    np.testing.assert_allclose(static.bn._mean.numpy(), eager.bn._mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(static.bn._variance.numpy(), eager.bn._variance.numpy(), rtol=1e-5)
    for p, q in zip(eager.parameters(), static.parameters()):
        if p.stop_gradient:  # the running statistics
            assert p.grad is None and q.grad is None
        else:
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5)
    eager.eval()
    static.eval()
    x = rt.randn([5, 3])
    np.testing.assert_allclose(static(x).numpy(), eager(x).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("steps", [3])
def test_dropout_trains_through_the_program(steps):
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 6)
            self.drop = nn.Dropout(0.3)

        def forward(self, x):
            return self.drop(self.fc(x))

    net = autostatic.to_static(Net())
    x = rt.ones([32, 6])
    for _ in range(steps):
        out = net(x)
        out.sum().backward()
        mask = out.numpy() != 0
        # d(sum)/d(bias) counts the kept entries, scaled by 1/(1-p)
        np.testing.assert_allclose(net.fc.bias.grad.numpy(), mask.sum(0) / 0.7, rtol=1e-5)
        net.clear_gradients(False)


class NestedLoopNet(nn.Layer):
    """A tensor-dependent ``if`` nested inside a tensor ``while``, both touching parameters."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = self.create_parameter([4], default_initializer=nn.initializer.Constant(0.5))

    def forward(self, x, n):
        i = rt.zeros([], dtype="int64")
        while i < n:
            h = rt.tanh(self.fc(x))
            if rt.mean(h) > 0.0:
                x = h * self.scale
            else:
                x = h + self.scale
            i = i + 1
        return rt.mean(x * x)


def test_gradients_through_an_if_nested_in_a_while_match_eager():
    eager, static = _same_init(NestedLoopNet)
    autostatic.to_static(static, input_spec=[InputSpec.from_tensor(rt.ones([3, 4])), None])
    rng = np.random.default_rng(5)
    for n in (0, 1, 3, 6):
        x = rt.to_tensor(rng.normal(size=(3, 4)).astype("float32"))
        nt = rt.to_tensor(n, dtype="int64")
        le, ls = eager(x, nt), static(x, nt)
        np.testing.assert_allclose(ls.numpy(), le.numpy(), rtol=1e-5, atol=1e-7)
        if n == 0:
            continue  # the loss does not depend on the parameters
        le.backward()
        ls.backward()
        for p, q in zip(eager.parameters(), static.parameters()):
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6)
        eager.clear_gradients(False)
        static.clear_gradients(False)
    assert len(static.forward.program_cache) == 1

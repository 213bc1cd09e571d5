"""Models, training steps and a runner shared by the compiled-training-step tests (default
executor in ``tests/jit``, XLA in ``tests/xla``): the same step run eagerly and compiled by
``to_static``, losses, parameters, optimizer state and gradients compared."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from autostatic_runtime import nn


class BranchMLP(nn.Layer):
    """An MLP with a tensor-dependent branch."""

    def __init__(self, n_in: int = 6, n_out: int = 3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, 16)
        self.fc2 = nn.Linear(16, n_out)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        if rt.mean(h) > 0.3:
            h = h * 0.5
        return self.fc2(h)


class LoopNet(nn.Layer):
    """A tensor ``while`` whose trip count depends on the data."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        h = rt.tanh(self.fc(x))
        i = rt.zeros([], "int64")
        while rt.sum(rt.abs(h)) > 1.0 and i < 4:
            h = h * 0.7
            i += 1
        return self.head(h)


class ConvBN(nn.Layer):
    """A small ResNet-style block: conv-BN-ReLU with a residual, pooling, a linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 4, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(4)
        self.conv2 = nn.Conv2D(4, 4, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(4)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)) + h)
        h = self.pool(h)
        return self.fc(rt.flatten(h, 1))


def train_step(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def minimize_step(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.minimize(loss)
    opt.clear_gradients()
    return loss


def accumulating_step(net, x, y, opt):
    """Two backward() before one step(): the gradients add up."""
    half = x.shape[0] // 2
    loss1 = F.cross_entropy(net(x[:half]), y[:half])
    loss1.backward()
    loss2 = F.cross_entropy(net(x[half:]), y[half:])
    loss2.backward()
    opt.step()
    opt.clear_grad()
    return loss1 + loss2


def batches(n: int, shape=(8, 6), classes: int = 3, seed: int = 1) -> list:
    r = np.random.default_rng(seed)
    return [
        (
            rt.to_tensor(r.standard_normal(shape).astype("float32")),
            rt.to_tensor(r.integers(0, classes, shape[0]).astype("int64")),
        )
        for _ in range(n)
    ]


def train(
    compiled: bool,
    make_net,
    make_opt,
    steps: int = 4,
    step=train_step,
    schedule=None,
    backend=None,
    data=None,
    after=None,
):
    """Train a fresh net for ``steps`` steps (eagerly or compiled): (losses, net, opt,
    the step function). ``schedule()`` makes an LR scheduler passed to ``make_opt`` and
    stepped after each step (with the loss for ReduceOnPlateau); ``after(i, net, opt)`` runs
    between steps."""
    rt.seed(7)
    net = make_net()
    lr = schedule() if schedule else 0.05
    opt = make_opt(lr, net.parameters())
    fn = autostatic.to_static(step, backend=backend) if compiled else step
    losses = []
    for i, (x, y) in enumerate(data or batches(steps, shape=_input_shape(net))):
        loss = fn(net, x, y, opt)
        losses.append(float(loss))
        if isinstance(lr, rt.optimizer.lr.ReduceOnPlateau):
            lr.step(loss)
        elif schedule:
            lr.step()
        if after is not None:
            after(i, net, opt)
    return losses, net, opt, fn


def _input_shape(net) -> tuple:
    return (4, 3, 8, 8) if isinstance(net, ConvBN) else (8, 6)


def state_of(net, opt) -> list:
    """Parameters, buffers and optimizer state as arrays, in a fixed order (names differ
    between two nets, so values are compared by position)."""
    values = [v.numpy() for v in net.state_dict().values()]
    state = opt.state_dict()
    names = [p.name for p in net.parameters()]

    def order(key: str) -> tuple:  # (its parameter's place, the accumulator)
        found = [i for i, n in enumerate(names) if key.startswith(n + "_")]
        return (found[0], key[len(names[found[0]]) :]) if found else (len(names), key)

    keys = sorted((k for k in state if k != "LR_Scheduler"), key=order)
    return values + [np.asarray(state[k].numpy()) for k in keys]


def assert_same_training(eager, compiled, rtol=1e-4, atol=1e-6) -> None:
    """Losses, parameters, buffers and optimizer state of two runs of ``train`` agree."""
    np.testing.assert_allclose(compiled[0], eager[0], rtol=rtol, atol=atol)
    want, got = state_of(eager[1], eager[2]), state_of(compiled[1], compiled[2])
    assert len(want) == len(got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-5)
    if isinstance(eager[2]._learning_rate, rt.optimizer.lr.LRScheduler):
        want = eager[2].state_dict()["LR_Scheduler"]
        got = compiled[2].state_dict()["LR_Scheduler"]
        assert set(got) == set(want)
        for k, v in want.items():  # ReduceOnPlateau keeps the best loss: float rounding
            assert got[k] == pytest.approx(v, rel=rtol), k


OPTIMIZERS = {
    "SGD": lambda lr, p: rt.optimizer.SGD(learning_rate=lr, parameters=p),
    "SGD+L2": lambda lr, p: rt.optimizer.SGD(lr, parameters=p, weight_decay=0.01),
    "Momentum": lambda lr, p: rt.optimizer.Momentum(learning_rate=lr, parameters=p),
    "Nesterov": lambda lr, p: rt.optimizer.Momentum(lr, 0.8, p, use_nesterov=True),
    "Adam": lambda lr, p: rt.optimizer.Adam(learning_rate=lr, parameters=p),
    "Adam+amsgrad": lambda lr, p: rt.optimizer.Adam(lr, parameters=p, amsgrad=True),
    "AdamW": lambda lr, p: rt.optimizer.AdamW(learning_rate=lr, parameters=p),
    "Adamax": lambda lr, p: rt.optimizer.Adamax(learning_rate=lr, parameters=p),
    "Adagrad": lambda lr, p: rt.optimizer.Adagrad(learning_rate=lr, parameters=p),
    "RMSProp": lambda lr, p: rt.optimizer.RMSProp(learning_rate=lr, parameters=p),
    "RMSProp centered": lambda lr, p: rt.optimizer.RMSProp(
        lr, parameters=p, centered=True, momentum=0.5
    ),
}
for _name in ("Adadelta", "Lamb"):  # Paddle's other optimizers
    if hasattr(rt.optimizer, _name):
        OPTIMIZERS[_name] = (lambda cls: lambda lr, p: cls(learning_rate=lr, parameters=p))(
            getattr(rt.optimizer, _name)
        )

_L = rt.optimizer.lr
SCHEDULES = {
    "StepDecay": lambda: _L.StepDecay(learning_rate=0.1, step_size=1, gamma=0.5),
    "NoamDecay": lambda: _L.NoamDecay(d_model=0.01, warmup_steps=100),
    "PiecewiseDecay": lambda: _L.PiecewiseDecay(boundaries=[1, 2], values=[0.1, 0.05, 0.02]),
    "NaturalExpDecay": lambda: _L.NaturalExpDecay(learning_rate=0.1, gamma=0.1),
    "InverseTimeDecay": lambda: _L.InverseTimeDecay(learning_rate=0.1, gamma=0.1),
    "PolynomialDecay": lambda: _L.PolynomialDecay(learning_rate=0.1, decay_steps=3),
    "LinearWarmup": lambda: _L.LinearWarmup(
        learning_rate=0.1, warmup_steps=2, start_lr=0.0, end_lr=0.1
    ),
    "ExponentialDecay": lambda: _L.ExponentialDecay(learning_rate=0.1, gamma=0.9),
    "MultiStepDecay": lambda: _L.MultiStepDecay(learning_rate=0.1, milestones=[1, 3]),
    "LambdaDecay": lambda: _L.LambdaDecay(learning_rate=0.1, lr_lambda=lambda e: 0.9**e),
    "MultiplicativeDecay": lambda: _L.MultiplicativeDecay(0.1, lr_lambda=lambda e: 0.9),
    "CosineAnnealingDecay": lambda: _L.CosineAnnealingDecay(learning_rate=0.1, T_max=3),
    "LinearLR": lambda: _L.LinearLR(learning_rate=0.1, total_steps=3),
    "ReduceOnPlateau": lambda: _L.ReduceOnPlateau(learning_rate=0.1, factor=0.5, patience=0),
}
_MORE = {  # Paddle's other schedules
    "OneCycleLR": lambda: _L.OneCycleLR(max_learning_rate=0.1, total_steps=5),
    "CyclicLR": lambda: _L.CyclicLR(
        base_learning_rate=0.01, max_learning_rate=0.1, step_size_up=2, step_size_down=1
    ),
    "CosineAnnealingWarmRestarts": lambda: _L.CosineAnnealingWarmRestarts(
        learning_rate=0.1, T_0=1, T_mult=1
    ),
}
SCHEDULES.update({k: v for k, v in _MORE.items() if hasattr(_L, k)})

"""Models exported in tests/onnx (written in dygraph style; ``to_static`` converts them)."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime import nn
from autostatic_runtime.nn import functional as F


def nested_control(x, n):
    """A tensor ``while`` holding a tensor ``if`` whose false branch holds a tensor ``while``."""
    i = rt.zeros([1], "int64")
    out = x
    while i < n:
        if rt.mean(out) > 1.0:
            out = out * 0.5
        else:
            k = rt.zeros([1], "int64")
            while k < i:
                out = out + 0.25
                k = k + 1
        i = i + 1
    return out


class SmallCNN(nn.Layer):
    """conv -> batch norm -> relu -> max pool, twice, then a linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2D(8)
        self.conv2 = nn.Conv2D(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2D(8)
        self.pool = nn.MaxPool2D(2)
        self.head = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        return F.softmax(self.head(rt.flatten(x, 1)), axis=-1)


class TinyRNN(nn.Layer):
    """An Elman RNN written as a Python loop over time steps (a ``while`` op when traced)."""

    def __init__(self, features: int = 4, hidden: int = 6):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.rec = nn.Linear(hidden, hidden)

    def forward(self, xs):
        h = rt.tanh(self.inp(xs[:, 0, :]))
        states = []
        steps = rt.shape(xs)[1]
        for t in range(steps):
            h = rt.tanh(self.inp(xs[:, t, :]) + self.rec(h))
            states.append(h)
        return rt.stack(states, axis=1), h


def uses_unsupported(x):
    y = x.reshape([2, 2])
    z = rt.inverse(rt.cholesky(y @ y.T + rt.eye(2)))
    return z + 1.0


def with_dead_code(x):
    """Returns ``y``; the inverse, the print and the assert feed nothing returned."""
    unused = rt.inverse(rt.eye(2) * x.mean())  # noqa: F841
    print(x.sum())
    if x.mean() > 0:
        y = x * 2.0
        debug = rt.cumprod(y, dim=0)  # noqa: F841
    else:
        y = x - 1.0
    assert x.sum() > -1000.0, "a tensor assert: an assert op"
    return y


def never_traced(x):
    """Exported without input specs (and never called): its shapes are unknown."""
    return x * 2.0

"""What the data-parallel tests share with the scripts they run in subprocesses (several
simulated devices, a launched job): the eager references a data-parallel step must match.

On one device a ``DataParallel`` step is the step of the whole batch, except for batch norm,
whose statistics are each device's own, as Paddle's ``DataParallel`` computes them: the
reference for a model with batch norm is ``replica_step``, Paddle's data parallelism run
eagerly on one device — one copy of the model per part of the batch, each normalizing with
its part's statistics, the gradients averaged over the copies, and the running statistics
the average of the copies' (see ``docs/distributed.md``).
"""

from __future__ import annotations

import functools

import numpy as np

import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from tests.jit.train_cases import ConvBN, batches

DEVICES = 4  # what the subprocess tests simulate (--xla_force_host_platform_device_count)


def statistics(net) -> list:
    """The running statistics of every batch norm layer of ``net``."""
    return [
        t
        for layer in net.sublayers(include_self=True)
        if isinstance(layer, rt.nn.layer.norm._BatchNormBase)
        for t in (layer._mean, layer._variance)
    ]


def replica_step(net, x, y, opt, devices: int = DEVICES):
    """One step of Paddle's data parallelism over ``devices`` copies of ``net``, eagerly."""
    stats = statistics(net)
    start = [t.numpy().copy() for t in stats]
    losses, seen = [], []
    for xs, ys in zip(rt.split(x, devices), rt.split(y, devices)):
        for t, value in zip(stats, start):
            t.set_value(value)
        losses.append(F.cross_entropy(net(xs), ys))
        seen.append([t.numpy().copy() for t in stats])
    for t, *values in zip(stats, *seen):
        t.set_value(np.mean(values, axis=0))
    loss = functools.reduce(lambda a, b: a + b, losses) / devices
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def conv_batches(n: int, rows: int = 8, seed: int = 3) -> list:
    return batches(n, shape=(rows, 3, 8, 8), seed=seed)


class DropoutMLP(rt.nn.Layer):
    """An MLP with dropout: a step that draws random numbers."""

    def __init__(self):
        super().__init__()
        self.fc1 = rt.nn.Linear(6, 16)
        self.fc2 = rt.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.dropout(F.relu(self.fc1(x)), 0.5, training=self.training))


def data_parallel(make_net, **options):
    """``make_net`` wrapped in ``DataParallel``, for ``train_cases.train``."""
    return lambda: rt.DataParallel(make_net(), **options)


__all__ = [
    "ConvBN", "DEVICES", "DropoutMLP", "conv_batches", "data_parallel", "replica_step",
    "statistics",
]  # fmt: skip

"""Run by ``test_data_parallel.py`` in a subprocess whose JAX has 4 CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``, which must be set before JAX starts):
data-parallel steps compiled by XLA against their one-device eager references. Prints one
JSON object: per case, the largest difference in losses and in the state (parameters,
buffers, optimizer state), and what the other checks saw."""

from __future__ import annotations

import json
import sys

import numpy as np

import autostatic_runtime as rt
from autostatic_runtime.distributed.sharding import group_sharded_parallel, save_group_sharded_model
from autostatic_runtime.errors import DistributedError
from tests.distributed.cases import (
    DEVICES,
    ConvBN,
    DropoutMLP,
    conv_batches,
    data_parallel,
    replica_step,
)
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, batches, state_of, train


def difference(want, got) -> dict:
    """Largest absolute differences between two runs of ``train``."""
    losses = float(np.max(np.abs(np.subtract(want[0], got[0]))))
    states = [np.max(np.abs(w - g)) for w, g in zip(state_of(*want[1:3]), state_of(*got[1:3]))]
    return {"losses": losses, "state": float(max(states)), "count": len(states)}


def compiled(make_net, opt, data, **options):
    return train(True, data_parallel(make_net, **options), opt, data=data, backend="xla")


def main() -> dict:
    import jax

    report: dict = {"devices": jax.device_count()}
    adam, momentum = OPTIMIZERS["Adam"], OPTIMIZERS["Momentum"]
    mlp_data = batches(3, shape=(8, 6))
    eager = train(False, BranchMLP, adam, data=mlp_data)
    mlp = compiled(BranchMLP, adam, mlp_data)
    report["mlp"] = difference(eager, mlp)
    report["explain"] = mlp[3].explain()
    weight = mlp[1]._layers.fc1.weight._data
    report["replicated"] = str(weight.sharding.spec)

    zero = compiled(BranchMLP, adam, mlp_data, shard_optimizer_state=True)
    report["zero"] = difference(eager, zero)
    moments = [t._data for per in zero[2]._accumulators.values() for t in per.values()]
    report["zero_specs"] = sorted({str(m.sharding.spec) for m in moments})

    # Paddle's spelling of the same: group_sharded_parallel(level="os_g"), and its save
    sharded_net = lambda: group_sharded_parallel(BranchMLP(), None, "os_g")[0]  # noqa: E731
    paddle_zero = train(True, sharded_net, adam, data=mlp_data, backend="xla")
    report["group_sharded"] = difference(eager, paddle_zero)
    moments = [t._data for per in paddle_zero[2]._accumulators.values() for t in per.values()]
    report["group_sharded_specs"] = sorted({str(m.sharding.spec) for m in moments})
    save_group_sharded_model(paddle_zero[1], "sharded", paddle_zero[2])
    saved = rt.load("sharded/model.pdopt")
    report["saved_moments"] = float(max(
        np.max(np.abs(saved[k].numpy() - v.numpy()))
        for k, v in paddle_zero[2].state_dict().items() if k != "LR_Scheduler"
    ))  # fmt: skip
    report["saved_model"] = sorted(rt.load("sharded/model.pdmodel"))

    conv_data = conv_batches(3)
    replicas = train(False, ConvBN, momentum, data=conv_data, step=replica_step)
    conv = compiled(ConvBN, momentum, conv_data)
    report["conv"] = difference(replicas, conv)
    whole = train(False, ConvBN, momentum, data=conv_data)  # BN over the whole batch: differs
    report["conv_whole_batch"] = difference(whole, conv)

    sgd = OPTIMIZERS["SGD"]  # random numbers: as a one-device XLA step draws them
    one = train(True, DropoutMLP, sgd, data=mlp_data, backend="xla")
    report["dropout"] = difference(one, compiled(DropoutMLP, sgd, mlp_data))

    step, net, opt = mlp[3], mlp[1], mlp[2]
    x, y = batches(1, shape=(DEVICES + 2, 6))[0]
    try:
        step(net, x, y, opt)
        report["odd_batch"] = None
    except DistributedError as exc:
        report["odd_batch"] = str(exc)
    eager_net = rt.DataParallel(BranchMLP())  # eagerly: the layer itself
    report["eager_same"] = bool(np.array_equal(eager_net(x).numpy(), eager_net._layers(x).numpy()))
    return report


if __name__ == "__main__":
    json.dump(main(), sys.stdout)

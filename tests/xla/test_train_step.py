"""Whole training steps compiled by ``to_static(..., backend="xla")``: forward, backward and
update as one XLA computation whose state (parameters, buffers, optimizer state) stays on
the device between steps, donated to the next; compared with the eager step."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
from autostatic_runtime.errors import AutostaticError  # noqa: E402
from tests.jit.test_train_step import checked_step  # noqa: E402
from tests.jit.train_cases import (  # noqa: E402
    OPTIMIZERS,
    SCHEDULES,
    BranchMLP,
    ConvBN,
    LoopNet,
    accumulating_step,
    assert_same_training,
    batches,
    train,
    train_step,
)


def xla(*args, **kw):
    return train(True, *args, backend="xla", **kw)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_trains_as_eagerly(name):
    make = OPTIMIZERS[name]
    compiled = xla(BranchMLP, make)
    assert_same_training(train(False, BranchMLP, make), compiled)
    (line,) = compiled[3].explain()
    assert "a training step (forward, backward" in line and "compiled by XLA as one" in line


@pytest.mark.parametrize("name", ["StepDecay", "ReduceOnPlateau", "CosineAnnealingDecay"])
def test_schedules_stepped_between_calls(name):
    sgd = OPTIMIZERS["SGD"]
    eager = train(False, BranchMLP, sgd, steps=5, schedule=SCHEDULES[name])
    compiled = xla(BranchMLP, sgd, steps=5, schedule=SCHEDULES[name])
    assert_same_training(eager, compiled)
    assert compiled[3].program_cache.misses == 1


@pytest.mark.parametrize("opt", ["Momentum", "Adam"])
def test_batch_norm_and_a_tensor_loop(opt):
    assert_same_training(
        train(False, ConvBN, OPTIMIZERS[opt], steps=3), xla(ConvBN, OPTIMIZERS[opt], steps=3)
    )
    assert_same_training(train(False, LoopNet, OPTIMIZERS[opt]), xla(LoopNet, OPTIMIZERS[opt]))


def test_gradient_accumulation():
    make = OPTIMIZERS["Adam"]
    assert_same_training(
        train(False, BranchMLP, make, step=accumulating_step),
        xla(BranchMLP, make, step=accumulating_step),
    )


def test_the_state_stays_on_the_device_and_is_donated_to_the_next_step():
    import jax

    losses, net, opt, step = xla(BranchMLP, OPTIMIZERS["Adam"], steps=3)
    weight = net.fc1.weight
    assert isinstance(weight._data, jax.Array)  # no host copy per step
    moments = [t for per in opt._accumulators.values() for t in per.values()]
    assert all(isinstance(t._data, jax.Array) for t in moments)
    state = net.parameters() + moments
    before = {t._data.unsafe_buffer_pointer() for t in state}
    x, y = batches(1, seed=5)[0]
    step(net, x, y, opt)
    after = {t._data.unsafe_buffer_pointer() for t in state}
    # updated in the buffers it came in (without donation the inputs are alive while the
    # outputs are made: the two sets would not meet)
    assert len(before & after) >= len(state) // 2

    # a device array somebody else holds is never donated: it keeps its values
    kept = weight.detach()
    values = kept.numpy().copy()
    snapshot = opt.state_dict()
    step(net, x, y, opt)
    np.testing.assert_array_equal(kept.numpy(), values)
    assert all(np.isfinite(v.numpy()).all() for k, v in snapshot.items() if k != "LR_Scheduler")
    assert not np.array_equal(weight.numpy(), values)


def test_eager_use_of_the_model_and_a_checkpoint_between_xla_steps(tmp_path):
    data = batches(5)

    def poke(i, net, opt):
        if i == 1:
            net(data[0][0])  # an eager forward on the device-held parameters
            rt.save(net.state_dict(), str(tmp_path / "net.pdparams"))
            rt.save(opt.state_dict(), str(tmp_path / "opt.pdopt"))
            net.fc2.bias.set_value(np.full([3], 0.1, "float32"))  # seen by the next step

    eager = train(False, BranchMLP, OPTIMIZERS["Adam"], steps=5, data=data, after=poke)
    compiled = xla(BranchMLP, OPTIMIZERS["Adam"], steps=5, data=data, after=poke)
    assert_same_training(eager, compiled)
    loaded = rt.load(str(tmp_path / "opt.pdopt"))
    assert all(np.isfinite(v.numpy()).all() for k, v in loaded.items() if k != "LR_Scheduler")


def test_a_step_that_raises_leaves_the_state_untouched():
    rt.seed(7)
    net = BranchMLP()
    opt = rt.optimizer.Adam(0.05, parameters=net.parameters())
    step = autostatic.to_static(checked_step, backend="xla")
    (x, y), (x2, y2) = batches(2)
    step(net, x, y, opt)
    before = [v.numpy().copy() for v in net.state_dict().values()]
    opt_before = {k: v.numpy().copy() for k, v in opt.state_dict().items()}
    bad = x2.numpy().copy()
    bad[0, 0] = np.nan
    with pytest.raises(AutostaticError, match="a batch with a NaN"):
        step(net, rt.to_tensor(bad), y2, opt)
    for b, v in zip(before, net.state_dict().values()):
        np.testing.assert_array_equal(v.numpy(), b)
    for k, v in opt.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), opt_before[k])
    step(net, x2, y2, opt)


def test_xla_and_the_default_executor_agree_step_by_step():
    make = OPTIMIZERS["Momentum"]
    default = train(True, ConvBN, make, steps=3)
    compiled = xla(ConvBN, make, steps=3)
    assert_same_training(default, compiled, rtol=1e-5)
    assert train_step is compiled[3].dygraph_function

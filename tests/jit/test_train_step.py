"""Whole training steps compiled by ``to_static`` on the default executor: forward,
``loss.backward()``, ``opt.step()`` and ``opt.clear_grad()`` in one program, compared with
the same step run eagerly (losses, parameters, buffers, optimizer state, gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from autostatic_runtime import nn
from autostatic_runtime.errors import AutostaticError
from tests.jit.train_cases import (
    OPTIMIZERS,
    SCHEDULES,
    BranchMLP,
    ConvBN,
    LoopNet,
    accumulating_step,
    assert_same_training,
    batches,
    minimize_step,
    train,
    train_step,
)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_trains_as_eagerly(name):
    make = OPTIMIZERS[name]
    eager, compiled = train(False, BranchMLP, make), train(True, BranchMLP, make)
    assert_same_training(eager, compiled)
    assert compiled[3].program_cache.misses == 1  # one program for every step


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_every_schedule_stepped_between_calls_changes_the_next_step(name):
    sgd = OPTIMIZERS["SGD"]
    eager = train(False, BranchMLP, sgd, steps=5, schedule=SCHEDULES[name])
    compiled = train(True, BranchMLP, sgd, steps=5, schedule=SCHEDULES[name])
    assert_same_training(eager, compiled)
    assert compiled[3].program_cache.misses == 1  # the learning rate is fed, not baked in


def test_set_lr_between_calls_is_seen_without_a_retrace():
    def lower(i, net, opt):
        opt.set_lr(0.01 * (i + 2))

    eager = train(False, BranchMLP, OPTIMIZERS["Adam"], after=lower)
    compiled = train(True, BranchMLP, OPTIMIZERS["Adam"], after=lower)
    assert_same_training(eager, compiled)
    assert compiled[3].program_cache.misses == 1


@pytest.mark.parametrize("opt", ["Momentum", "Adam"])
def test_a_resnet_style_block_with_batch_norm(opt):
    eager = train(False, ConvBN, OPTIMIZERS[opt], steps=3)
    compiled = train(True, ConvBN, OPTIMIZERS[opt], steps=3)
    assert_same_training(eager, compiled)  # running statistics included (buffers)
    assert compiled[1].bn1._mean.numpy().any()


def test_a_tensor_while_in_the_model():
    assert_same_training(
        train(False, LoopNet, OPTIMIZERS["Adam"]), train(True, LoopNet, OPTIMIZERS["Adam"])
    )


@pytest.mark.parametrize("step", [minimize_step, accumulating_step], ids=["minimize", "accum"])
def test_minimize_and_gradient_accumulation(step):
    make = OPTIMIZERS["Momentum"]
    assert_same_training(
        train(False, BranchMLP, make, step=step), train(True, BranchMLP, make, step=step)
    )


def accumulate_over_calls(net, x, y, opt, apply):
    """backward() at every call, step() only when ``apply``: gradients carry across calls."""
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    if apply:
        opt.step()
        opt.clear_grad()
    return loss


def test_gradients_accumulate_across_calls_until_a_step():
    def run(compiled):
        rt.seed(7)
        net = BranchMLP()
        opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
        fn = autostatic.to_static(accumulate_over_calls) if compiled else accumulate_over_calls
        out = []
        for i, (x, y) in enumerate(batches(6)):
            out.append(float(fn(net, x, y, opt, i % 3 == 2)))
            out.append(float(net.fc1.weight.grad.numpy().sum()) if i % 3 != 2 else 0.0)
        return out, net, fn

    (eager, net_e, _), (compiled, net_c, fn) = run(False), run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net_c.fc2.weight.numpy(), net_e.fc2.weight.numpy(), rtol=1e-5)
    # programs: accumulate from no gradient, accumulate onto one, step
    assert fn.program_cache.misses == 3
    assert any("gradient" in why for why in fn.explain_retraces())


def grad_sgd_step(net, x, y, lr):
    """rt.grad inside the step and a hand-written update through set_value."""
    loss = F.cross_entropy(net(x), y)
    params = net.parameters()
    grads = rt.grad(loss, params)
    for p, g in zip(params, grads):
        p.set_value(p - lr * g)
    return loss


def test_rt_grad_inside_the_step_with_a_hand_written_update():
    def run(compiled):
        rt.seed(7)
        net = BranchMLP()
        fn = autostatic.to_static(grad_sgd_step) if compiled else grad_sgd_step
        losses = [float(fn(net, x, y, 0.1)) for x, y in batches(4)]
        return losses, net

    (eager, net_e), (compiled, net_c) = run(False), run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    np.testing.assert_allclose(net_c.fc1.weight.numpy(), net_e.fc1.weight.numpy(), rtol=1e-5)


@pytest.mark.parametrize(
    "clip",
    [nn.ClipGradByGlobalNorm(0.1), nn.ClipGradByNorm(0.05), nn.ClipGradByValue(0.01)],
    ids=["global_norm", "norm", "value"],
)
def test_gradient_clipping(clip):
    def make(lr, p):
        return rt.optimizer.Adam(lr, parameters=p, grad_clip=clip)

    assert_same_training(train(False, BranchMLP, make), train(True, BranchMLP, make))


def test_weight_decay_regularizers_and_parameter_groups():
    def make(lr, p):
        return rt.optimizer.Momentum(
            lr,
            parameters=[
                {"params": p[:2], "weight_decay": rt.regularizer.L1Decay(0.01)},
                {"params": p[2:], "learning_rate": 0.5},
            ],
            weight_decay=rt.regularizer.L2Decay(0.02),
        )

    assert_same_training(train(False, BranchMLP, make), train(True, BranchMLP, make))


def test_state_read_and_written_between_steps_is_the_current_one():
    def poke(i, net, opt):
        if i == 1:  # an eager forward, a read, and writes the next step must see
            net(rt.ones([2, 6]))
            assert np.isfinite(net.fc1.weight.numpy()).all()
            net.fc2.bias.set_value(np.full([3], 0.25, "float32"))
            state = opt.state_dict()
            key = next(k for k in sorted(state) if k.endswith("moment1_0"))
            state[key] = rt.to_tensor(np.ones(state[key].shape, "float32") * 0.01)
            opt.set_state_dict(state)

    eager = train(False, BranchMLP, OPTIMIZERS["Adam"], after=poke)
    compiled = train(True, BranchMLP, OPTIMIZERS["Adam"], after=poke)
    assert_same_training(eager, compiled)


def test_eager_and_compiled_steps_share_one_optimizer_state():
    def run(mixed):
        rt.seed(7)
        net = BranchMLP()
        opt = rt.optimizer.Adam(0.05, parameters=net.parameters())
        compiled = autostatic.to_static(train_step)
        losses = []
        for i, (x, y) in enumerate(batches(4)):
            fn = compiled if mixed and i % 2 else train_step
            losses.append(float(fn(net, x, y, opt)))
        return losses, net, opt, None

    assert_same_training(run(False), run(True))


def test_a_checkpoint_between_compiled_steps_resumes_to_the_same_losses(tmp_path):
    data = batches(6)
    losses, net, opt, step = train(True, BranchMLP, OPTIMIZERS["Adam"], steps=3, data=data[:3])
    rt.save(net.state_dict(), str(tmp_path / "net.pdparams"))
    rt.save(opt.state_dict(), str(tmp_path / "opt.pdopt"))
    later = [float(step(net, x, y, opt)) for x, y in data[3:]]  # the run goes on

    # resume from the files: the same parameters (names), a new optimizer and step
    net.set_state_dict(rt.load(str(tmp_path / "net.pdparams")))
    opt = OPTIMIZERS["Adam"](0.05, net.parameters())
    opt.set_state_dict(rt.load(str(tmp_path / "opt.pdopt")))
    step = autostatic.to_static(train_step)
    resumed = [float(step(net, x, y, opt)) for x, y in data[3:]]
    np.testing.assert_allclose(resumed, later, rtol=1e-6)
    full = train(False, BranchMLP, OPTIMIZERS["Adam"], steps=6, data=data)[0]
    np.testing.assert_allclose(losses + resumed, full, rtol=1e-4, atol=1e-6)


def checked_step(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    assert rt.all(rt.isfinite(x)), "a batch with a NaN"
    opt.clear_grad()
    return loss


def test_a_step_that_raises_leaves_the_state_untouched():
    rt.seed(7)
    net = BranchMLP()
    opt = rt.optimizer.Adam(0.05, parameters=net.parameters())
    step = autostatic.to_static(checked_step)
    (x, y), (x2, y2) = batches(2)
    step(net, x, y, opt)
    before = [a.copy() for a in (v.numpy() for v in net.state_dict().values())]
    opt_before = {k: v.numpy().copy() for k, v in opt.state_dict().items()}
    grads = [p.grad for p in net.parameters()]
    bad = x2.numpy().copy()
    bad[0, 0] = np.nan
    with pytest.raises(AutostaticError, match="a batch with a NaN"):
        step(net, rt.to_tensor(bad), y2, opt)
    for b, v in zip(before, net.state_dict().values()):
        np.testing.assert_array_equal(v.numpy(), b)
    for k, v in opt.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), opt_before[k])
    assert [p.grad for p in net.parameters()] == grads
    step(net, x2, y2, opt)  # and the next good step runs


def leaves_gradients(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    return loss


def clears_to_none(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss


@pytest.mark.parametrize("step", [leaves_gradients, clears_to_none, train_step])
def test_gradients_after_the_step_are_the_eager_ones(step):
    eager = train(False, BranchMLP, OPTIMIZERS["SGD"], step=step, steps=3)
    compiled = train(True, BranchMLP, OPTIMIZERS["SGD"], step=step, steps=3)
    assert_same_training(eager, compiled)
    for pe, pc in zip(eager[1].parameters(), compiled[1].parameters()):
        if pe.grad is None:
            assert pc.grad is None
        else:
            np.testing.assert_allclose(pc.grad.numpy(), pe.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_a_step_method_of_a_trainer_object():
    class Trainer:
        def __init__(self):
            self.net = BranchMLP()
            self.opt = rt.optimizer.Adam(0.05, parameters=self.net.parameters())

        @autostatic.to_static
        def step(self, x, y):
            loss = F.cross_entropy(self.net(x), y)
            loss.backward()
            self.opt.step()
            self.opt.clear_grad()
            return loss

    rt.seed(7)
    trainer = Trainer()
    rt.seed(7)
    net = BranchMLP()
    opt = rt.optimizer.Adam(0.05, parameters=net.parameters())
    for x, y in batches(3):
        np.testing.assert_allclose(
            float(trainer.step(x, y)), float(train_step(net, x, y, opt)), rtol=1e-5
        )


def test_the_loss_returned_is_a_plain_tensor():
    rt.seed(7)
    net = BranchMLP()
    opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
    x, y = batches(1)[0]
    loss = autostatic.to_static(train_step)(net, x, y, opt)
    assert isinstance(loss, rt.Tensor) and loss.stop_gradient and loss.shape == []


# ---- errors at the user's line --------------------------------------------------------------


def _line_of(fn, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def formats_the_loss(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    text = f"{loss:.3f}"
    loss.backward()
    opt.step()
    return text


def test_formatting_the_loss_inside_the_step_says_to_return_it():
    net = BranchMLP()
    opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
    with pytest.raises(AutostaticError, match="return the tensor") as info:
        autostatic.to_static(formats_the_loss)(net, *batches(1)[0], opt)
    assert f"test_train_step.py:{_line_of(formats_the_loss, '{loss:.3f}')}" in str(info.value)


HISTORY: list = []


def keeps_the_loss(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    HISTORY.append(loss)  # runs while tracing: a symbolic variable
    print("loss", loss)  # prints at every call
    loss.backward()
    opt.step()
    opt.clear_grad()
    return float(loss)  # a cast to a 0-D tensor, as Paddle converts float()


def test_a_loss_kept_while_tracing_says_to_return_it_and_print_prints_each_call(capfd):
    net = BranchMLP()
    opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
    step = autostatic.to_static(keeps_the_loss)
    values = [float(step(net, x, y, opt)) for x, y in batches(2)]
    printed = capfd.readouterr().out
    assert printed.count("loss") == 2 and f"{values[1]:.4f}"[:5] in printed
    with pytest.raises(AutostaticError, match="return it from that function"):
        float(HISTORY[0])


def backward_of_a_batch(net, x, y, opt):
    losses = F.cross_entropy(net(x), y, reduction="none")
    losses.backward()
    opt.step()
    return losses


def test_backward_of_a_non_scalar_needs_a_gradient():
    net = BranchMLP()
    opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
    x, y = batches(1)[0]
    with pytest.raises(AutostaticError, match=r"shape \[8\].*loss.mean\(\)") as info:
        autostatic.to_static(backward_of_a_batch)(net, x, y, opt)
    assert f":{_line_of(backward_of_a_batch, 'losses.backward()')}" in str(info.value)


def test_an_optimizer_over_parameters_the_step_never_uses():
    net, other = BranchMLP(), BranchMLP()
    opt = rt.optimizer.Adam(0.1, parameters=other.parameters())
    x, y = batches(1)[0]
    with pytest.raises(AutostaticError, match="none of the optimizer's 4 parameters") as info:
        autostatic.to_static(train_step)(net, x, y, opt)
    assert f":{_line_of(train_step, 'opt.step()')}" in str(info.value)


def test_changing_the_optimizers_parameters_retraces_and_says_why():
    def run(compiled):
        rt.seed(7)
        net = BranchMLP()
        opt = rt.optimizer.SGD(0.1, parameters=net.fc2.parameters())
        step = autostatic.to_static(train_step) if compiled else train_step
        losses = []
        for i, (x, y) in enumerate(batches(5)):
            if i == 1:  # more parameters
                opt._parameter_list.extend(net.fc1.parameters())
            if i == 3:  # a frozen layer
                for p in net.fc2.parameters():
                    p.stop_gradient = True
            losses.append(float(step(net, x, y, opt)))
        return losses, net, step

    (eager, net_e, _), (compiled, net_c, step) = run(False), run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    for pe, pc in zip(net_e.parameters(), net_c.parameters()):
        np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-5)
    # fc1's gradients, which no optimizer cleared at first, are a state of their own too
    whys = step.explain_retraces()
    assert step.program_cache.misses == len(whys) + 1 == 4
    assert "the parameter list of the optimizer SGD changed (2 → 4 parameters" in whys[0]
    assert "was None or zeros when the step was traced and is a tensor now" in whys[0]
    assert "was a tensor when the step was traced and is zeros now" in whys[1]
    assert "changed stop_gradient False → True" in whys[2]


def test_backward_inside_a_tensor_branch_is_a_clear_error():
    def step_fn(net, x, y, opt):
        loss = F.cross_entropy(net(x), y)
        if loss > 1.0:
            loss.backward()
        opt.step()
        return loss

    net = BranchMLP()
    opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
    with pytest.raises(AutostaticError, match="inside a tensor-dependent if/while"):
        autostatic.to_static(step_fn)(net, *batches(1)[0], opt)


def test_backward_of_a_variable_outside_a_step_is_a_clear_error():
    main = rt.static.Program()
    rt.enable_static()
    try:
        with rt.static.program_guard(main):
            x = rt.static.data("x", [2, 3])
            loss = rt.mean(nn.Linear(3, 1)(x))
            with pytest.raises(AutostaticError, match="append_backward"):
                loss.backward()
            with pytest.raises(AutostaticError, match="opt.minimize"):
                rt.optimizer.SGD(0.1).step()
    finally:
        rt.disable_static()

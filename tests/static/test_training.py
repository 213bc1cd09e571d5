"""Training static programs: the seed-003 workflow, optimizers, batch norm, LR schedules."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import static


def test_seed_003_workflow_trains():
    """The PaddlePaddle static-graph example, with autostatic's names, as written."""
    import autostatic_runtime as paddle
    from autostatic_runtime.optimizer import Adam
    from autostatic_runtime.static import Executor, Program, program_guard

    paddle.enable_static()
    main_program = Program()
    startup_program = Program()
    with program_guard(main_program, startup_program):
        x = paddle.static.data(shape=[16, 16], name="x")
        label = paddle.static.data(shape=[16, 1], name="label")
        out = paddle.nn.Linear(in_features=16, out_features=1)(x)
        loss = paddle.nn.MSELoss()(out, label)
        optimizer = Adam(learning_rate=0.05)
        optimizer.minimize(loss)
    paddle.disable_static()

    exe = Executor()
    exe.run(startup_program)
    rng = np.random.default_rng(0)
    w = rng.normal(size=(16, 1)).astype(np.float32)
    losses = []
    for _ in range(100):
        xb = rng.normal(size=(16, 16)).astype(np.float32)
        (value,) = exe.run(main_program, feed={"x": xb, "label": xb @ w}, fetch_list=[loss])
        losses.append(float(value))
    assert losses[-1] < 0.05 * losses[0]


def mlp():
    rt.seed(3)
    return rt.nn.Sequential(rt.nn.Linear(5, 8), rt.nn.Tanh(), rt.nn.Linear(8, 2))


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: rt.optimizer.SGD(0.1, parameters=ps),
        lambda ps: rt.optimizer.Momentum(0.05, momentum=0.9, parameters=ps, use_nesterov=True),
        lambda ps: rt.optimizer.Adam(0.01, parameters=ps, weight_decay=0.01),
        lambda ps: rt.optimizer.AdamW(0.01, parameters=ps, weight_decay=0.1),
        lambda ps: rt.optimizer.SGD(0.1, parameters=ps, grad_clip=rt.nn.ClipGradByGlobalNorm(0.5)),
        lambda ps: rt.optimizer.Adagrad(0.1, parameters=ps, initial_accumulator_value=0.1),
        lambda ps: rt.optimizer.RMSProp(0.01, momentum=0.5, centered=True, parameters=ps),
        lambda ps: rt.optimizer.Adamax(0.01, parameters=ps, weight_decay=0.01),
        lambda ps: rt.optimizer.Adadelta(1.0, parameters=ps, weight_decay=0.01),
        lambda ps: rt.optimizer.Lamb(
            0.01,
            lamb_weight_decay=0.1,
            parameters=ps,
            exclude_from_weight_decay_fn=lambda p: p.name.endswith("b_0"),
        ),
        lambda ps: rt.optimizer.Lamb(0.01, lamb_weight_decay=0.0, always_adapt=True, parameters=ps),
    ],
    ids=[
        "sgd",
        "nesterov",
        "adam_l2",
        "adamw",
        "sgd_clip",
        "adagrad",
        "rmsprop",
        "adamax",
        "adadelta",
        "lamb",
        "lamb_always_adapt",
    ],  # fmt: skip
)
def test_static_optimizer_steps_match_eager(make_opt):
    assert_static_minimize_matches_eager(make_opt, steps=5, rtol=2e-5)


def assert_static_minimize_matches_eager(make_opt, steps: int, rtol: float) -> None:
    """``steps`` eager steps of ``mlp()`` and the same through ``minimize`` in a static
    program give the same losses."""
    rng = np.random.default_rng(0)
    batches = [
        (rng.normal(size=(6, 5)).astype(np.float32), rng.integers(0, 2, (6,)))
        for _ in range(steps)
    ]

    net = mlp()
    opt = make_opt(net.parameters())
    eager = []
    for xb, yb in batches:
        loss = rt.nn.functional.cross_entropy(net(rt.to_tensor(xb)), rt.to_tensor(yb))
        loss.backward()
        opt.step()
        opt.clear_grad()
        eager.append(float(loss))

    net = mlp()
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [None, 5], "float32")
            y = static.data("y", [None], "int64")
            loss = rt.nn.functional.cross_entropy(net(x), y)
            make_opt(net.parameters()).minimize(loss)
    finally:
        rt.disable_static()
    exe = static.Executor()
    exe.run(startup)
    got = [float(exe.run(main, {"x": xb, "y": yb}, [loss])[0]) for xb, yb in batches]
    np.testing.assert_allclose(got, eager, rtol=rtol)


def test_static_batch_norm_updates_running_stats_and_eval_clone_uses_them():
    rt.seed(0)
    bn = rt.nn.BatchNorm1D(3, momentum=0.5)
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    with static.program_guard(main, startup):
        x = static.data("x", [None, 3], "float32")
        out = bn(x)
    rt.disable_static()
    test_prog = main.clone(for_test=True)
    exe = static.Executor()
    exe.run(startup)
    xb = np.random.default_rng(0).normal(2.0, 3.0, size=(64, 3)).astype(np.float32)
    exe.run(main, {"x": xb}, [out])
    mean_name = bn._mean.name
    mean = static.global_scope().find_var(mean_name).get_tensor()
    np.testing.assert_allclose(mean, 0.5 * xb.mean(0), rtol=1e-5)
    (ev,) = exe.run(test_prog, {"x": xb}, [out.name])
    var = static.global_scope().find_var(bn._variance.name).get_tensor()
    np.testing.assert_allclose(ev, (xb - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)


def test_lr_scheduler_drives_the_static_learning_rate():
    w0 = np.ones((1,), np.float32)
    param = rt.create_parameter([1], "float32", default_initializer=rt.nn.initializer.Constant(1.0))
    sched = rt.optimizer.lr.StepDecay(learning_rate=1.0, step_size=1, gamma=0.5)
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    with static.program_guard(main, startup):
        loss = rt.sum(param * 1.0)
        rt.optimizer.SGD(sched, parameters=[param]).minimize(loss)
    rt.disable_static()
    exe = static.Executor()
    exe.run(startup)
    values = []
    for _ in range(3):
        exe.run(main, {}, [loss])
        values.append(static.global_scope().find_var(param.name).get_tensor().item())
        sched.step()
    np.testing.assert_allclose(values, [w0[0] - 1.0, w0[0] - 1.5, w0[0] - 1.75])


def test_cyclic_and_one_cycle_schedules_drive_the_static_learning_rate():
    """d(loss)/d(param) is 1: each run lowers the parameter by that step's learning rate."""
    for sched in (
        rt.optimizer.lr.CyclicLR(0.1, 0.5, step_size_up=2, step_size_down=1, mode="triangular2"),
        rt.optimizer.lr.OneCycleLR(1.0, total_steps=6, phase_pct=0.4, three_phase=True),
    ):
        param = rt.create_parameter(
            [1], "float32", default_initializer=rt.nn.initializer.Constant(1.0)
        )
        main, startup = static.Program(), static.Program()
        rt.enable_static()
        with static.program_guard(main, startup):
            loss = rt.sum(param * 1.0)
            rt.optimizer.Momentum(sched, momentum=0.0, parameters=[param]).minimize(loss)
        rt.disable_static()
        exe = static.Executor()
        exe.run(startup)
        values, rates = [], []
        for _ in range(6):
            rates.append(sched())
            exe.run(main, {}, [loss])
            values.append(static.global_scope().find_var(param.name).get_tensor().item())
            sched.step()
        assert len(set(rates)) > 3  # the schedule moves
        np.testing.assert_allclose(values, 1.0 - np.cumsum(rates), rtol=1e-6, atol=1e-6)


def test_minimize_applies_parameter_groups_options():
    """A group's own learning rate and betas hold in a static program too."""

    def make(ps):
        groups = [{"params": ps[:2], "beta1": 0.5, "learning_rate": 0.3}, {"params": ps[2:]}]
        return rt.optimizer.Adam(0.01, parameters=groups)

    assert_static_minimize_matches_eager(make, steps=4, rtol=1e-5)

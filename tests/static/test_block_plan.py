"""The code generator's view of a whole block (``static/block_plan.py``): repeated ops are
computed once, dead values are deleted, an elementwise op may be computed into a dead operand
— and none of it changes a result: programs built to tempt each rule wrongly are compared
with the same ops run eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import static
from tests.jit.train_cases import train_step


def build(fn, *shapes):
    """(program, feeds, fetched Variables) of ``fn`` on float32 data variables."""
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, static.Program()):
            xs = [static.data(f"x{i}", list(s), "float32") for i, s in enumerate(shapes)]
            outs = fn(*xs)
    finally:
        rt.disable_static()
    return main, [x.name for x in xs], list(outs)


def run(fn, *arrays):
    main, names, outs = build(fn, *[a.shape for a in arrays])
    exe = static.Executor()
    got = exe.run(main, feed=dict(zip(names, arrays)), fetch_list=outs)
    want = [t.numpy() for t in fn(*[rt.to_tensor(a) for a in arrays])]
    return got, want, exe


A = np.arange(12, dtype=np.float32).reshape(3, 4) / 7.0


def test_a_view_of_a_value_is_not_overwritten_when_the_value_dies():
    def f(x):
        y = x * 2.0
        z = rt.reshape(y, [4, 3])  # a view of y's memory
        w = y + 1.0  # y's last use: its memory must not take w
        return z, w

    got, want, _ = run(f, A)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_values_returned_or_read_later_are_never_computed_into():
    def f(x):
        y = x * 3.0
        a = y - 1.0  # y is read again below
        b = y * a  # y's and a's last uses
        c = b + x  # x is the caller's array
        return y, c

    got, want, _ = run(f, A)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_repeated_ops_are_computed_once_and_give_the_same_values():
    def f(x, y):
        a = x * y
        b = x * y  # the same op: computed once
        c = rt.tanh(a) + rt.tanh(b)
        return c, a - b

    got, want, _ = run(f, A, A + 1)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_random_ops_and_ops_separated_by_a_write_are_not_merged():
    rt.seed(3)
    main = static.Program()
    startup = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [64], "float32")
            d1 = rt.nn.functional.dropout(x, 0.5, training=True)
            d2 = rt.nn.functional.dropout(x, 0.5, training=True)
    finally:
        rt.disable_static()
    exe = static.Executor()
    exe.run(startup)
    a, b = exe.run(main, feed={"x": np.ones(64, "float32")}, fetch_list=[d1, d2])
    assert not np.array_equal(a, b)  # two draws, not one


def test_a_parameter_updated_between_two_equal_reads_is_read_again():
    """Two forwards around an update (a step that steps twice): the second matmul reads the
    new weight, so it is not the first one's repeat."""
    import autostatic
    import autostatic_runtime.nn.functional as F

    def two_steps(net, x, y, opt):
        for _ in range(2):
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
        return loss

    def run_steps(compiled):
        rt.seed(5)
        net = rt.nn.Linear(4, 3)
        opt = rt.optimizer.SGD(0.5, parameters=net.parameters())
        fn = autostatic.to_static(two_steps) if compiled else two_steps
        x, y = rt.to_tensor(A[:, :4].copy()), rt.to_tensor(np.array([0, 1, 2]))
        return [float(fn(net, x, y, opt)) for _ in range(2)]

    np.testing.assert_allclose(run_steps(True), run_steps(False), rtol=1e-6)


@pytest.mark.parametrize("backend", [None])
def test_a_compiled_training_step_deletes_dead_values_and_reuses_arrays(backend):
    import autostatic

    net = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.BatchNorm1D(8), rt.nn.ReLU(),
                           rt.nn.Linear(8, 3))  # fmt: skip
    opt = rt.optimizer.Momentum(0.1, parameters=net.parameters())
    compiled = autostatic.to_static(train_step, backend=backend)
    compiled(net, rt.to_tensor(A[:, :4].copy()), rt.to_tensor(np.array([0, 1, 2])), opt)
    source = compiled.concrete_program.runner._infer["numpy"].__source__
    assert "\n        del " in source  # liveness
    assert any(f" {op}= " in source for op in "+-*/")  # an op computed into a dead operand


@pytest.mark.parametrize("budget", [0, 256 << 20], ids=["no-room", "kept"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_a_convolutions_columns_shared_with_its_filter_gradient(monkeypatch, budget, layout):
    """The forward keeps its input's columns for the filter gradient of the same call (or
    does not, when they do not fit the budget): the gradients are the eager ones."""
    import autostatic
    import autostatic_runtime.nn.functional as F
    from autostatic_runtime.nn.functional import conv

    monkeypatch.setattr(conv, "MEMO_BYTES", budget)

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = rt.nn.Conv2D(3, 4, 3, padding=1, data_format=layout)
            self.fc = rt.nn.Linear(4 * 5 * 5, 2)

        def forward(self, x):
            return self.fc(rt.flatten(F.relu(self.conv(x)), 1))

    def run(compiled):
        rt.seed(4)
        net = Net()
        opt = rt.optimizer.SGD(0.1, parameters=net.parameters())
        fn = autostatic.to_static(train_step) if compiled else train_step
        shape = (2, 3, 5, 5) if layout == "NCHW" else (2, 5, 5, 3)
        x = rt.to_tensor(np.random.default_rng(0).standard_normal(shape).astype("float32"))
        losses = [float(fn(net, x, rt.to_tensor(np.array([0, 1])), opt)) for _ in range(3)]
        return losses, net.conv.weight.numpy(), fn

    (eager, w_eager, _), (compiled, w_compiled, fn) = run(False), run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    np.testing.assert_allclose(w_compiled, w_eager, rtol=1e-5, atol=1e-6)
    assert "memo=_memo" in fn.concrete_program.runner._infer["numpy"].__source__

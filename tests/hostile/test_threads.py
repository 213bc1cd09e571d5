"""Threads: one StaticFunction called from several threads with different shapes traces once
per cache key and gives each thread its own correct result; marked modules imported from
several threads at once are converted once and work; tracing in one thread never changes what
eager code in another computes (static mode, dispatch, program_guard, op roles and the
converted functions' switch are per thread - issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np

import autostatic
import autostatic_runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _shapes_and_traces():
    traces = []

    def f(x):
        traces.append(1)  # runs only while tracing
        if rt.mean(x) > 0:
            y = x * 2.0
        else:
            y = x - 1.0
        i = 0
        while i < 3:
            y = y + 1.0
            i += 1
        return y

    return f, traces


def test_threads_calling_one_static_function_with_different_shapes():
    f, traces = _shapes_and_traces()
    static = autostatic.to_static(f)
    shapes = [(2, 3), (4,), (1, 5), (3, 3), (6,)]
    errors: list = []
    barrier = threading.Barrier(len(shapes) * 2)

    def worker(shape, sign):
        try:
            data = np.full(shape, sign * 0.5, dtype=np.float32)
            barrier.wait()
            for _ in range(5):
                got = np.asarray(static(rt.to_tensor(data)))
                want = (data * 2.0 if sign > 0 else data - 1.0) + 3.0
                np.testing.assert_allclose(got, want, rtol=1e-6)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(shape, sign)) for shape in shapes for sign in (1, -1)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    assert len(static.program_cache) == len(shapes)  # one program per shape
    assert len(traces) == len(shapes)  # each traced exactly once
    assert rt.in_dynamic_mode()


def test_concurrent_imports_of_marked_modules(tmp_path):
    pkg = tmp_path / "tpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(8):
        (pkg / f"m{i}.py").write_text(
            textwrap.dedent(
                f"""\
                # autostatic: enable
                def f(n):
                    total = 0
                    while n > 0:
                        if n % 2:
                            total += n
                        n -= 1
                    return total + {i}
                """
            )
        )
    code = textwrap.dedent(
        """\
        import importlib, threading, autostatic
        autostatic.install()
        out, errors = {}, []
        barrier = threading.Barrier(16)
        def work(i):
            try:
                barrier.wait()
                m = importlib.import_module(f"tpkg.m{i % 8}")
                out[i] = (m.f(5), "__jst__" in vars(m))
            except BaseException as exc:
                errors.append(repr(exc))
        ts = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(errors or sorted(set(out.values())))
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path)]))
    env.pop("AUTOSTATIC_HOOK", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    want = sorted({(9 + i, True) for i in range(8)})
    assert done.stdout.strip() == str(want), done.stdout + done.stderr


def _eager_sign(x):
    if rt.mean(x) > 0:  # a tensor condition: a cond op while tracing, Python `if` eagerly
        return x * 2.0 + 1.0
    return x - 1.0


_converted_sign = autostatic.convert(_eager_sign)


def test_eager_threads_never_see_another_threads_trace():
    """Issue 14: while the main thread traces program after program, worker threads hammer
    eager ops and a converted function; every eager result must be exact and eager."""
    stop = threading.Event()
    stats = {"calls": 0, "errors": [], "wrong": 0}
    lock = threading.Lock()

    def worker(seed):
        calls = wrong = 0
        try:
            while not stop.is_set() and calls < 20_000:
                data = np.arange(4, dtype=np.float32) + (seed + calls % 7) * (-1) ** calls
                x = rt.to_tensor(data)
                y = x * 2.0 + 1.0
                z = _converted_sign(x)
                want_z = data * 2.0 + 1.0 if data.mean() > 0 else data - 1.0
                if (
                    type(y) is not rt.Tensor
                    or type(z) is not rt.Tensor
                    or not np.array_equal(y.numpy(), data * 2.0 + 1.0)
                    or not np.array_equal(z.numpy(), want_z)
                    or not rt.in_dynamic_mode()
                ):
                    wrong += 1
                calls += 1
        except BaseException as exc:  # reported below
            with lock:
                stats["errors"].append(exc)
        with lock:
            stats["calls"] += calls
            stats["wrong"] += wrong

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the threads finely
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    try:
        for t in workers:
            t.start()
        for n in range(150):  # a fresh StaticFunction per round: convert + trace + compile
            static = autostatic.to_static(_eager_sign)
            x = rt.to_tensor(np.full([n % 5 + 1, 3], (-1.0) ** n, np.float32))
            want = x.numpy() * 2.0 + 1.0 if n % 2 == 0 else x.numpy() - 1.0
            np.testing.assert_allclose(static(x).numpy(), want)
    finally:
        stop.set()
        for t in workers:
            t.join(60)
        sys.setswitchinterval(switch)
    assert not stats["errors"], stats["errors"][:3]
    assert stats["wrong"] == 0, f"{stats['wrong']} wrong of {stats['calls']} eager calls"
    assert stats["calls"] > 0
    assert rt.in_dynamic_mode()


def test_static_mode_is_per_thread():
    seen = {}

    def other():
        seen["dynamic"] = rt.in_dynamic_mode()
        seen["value"] = (rt.ones([2]) + 1).numpy().tolist()

    rt.enable_static()
    try:
        assert not rt.in_dynamic_mode()
        t = threading.Thread(target=other)
        t.start()
        t.join(30)
    finally:
        rt.disable_static()
    assert seen == {"dynamic": True, "value": [2.0, 2.0]}
    assert rt.in_dynamic_mode()


def test_traces_here_is_true_only_in_the_tracing_thread():
    from autostatic_runtime import convert_ops
    from autostatic_runtime.static.builder import static_guard

    seen = {}

    def other():
        seen["tracing"], seen["here"] = convert_ops.tracing, convert_ops.traces_here()

    with static_guard():
        assert convert_ops.tracing and convert_ops.traces_here()
        t = threading.Thread(target=other)
        t.start()
        t.join(30)
    assert seen == {"tracing": True, "here": convert_ops.FORCE_CONVERTED}
    assert convert_ops.tracing == convert_ops.FORCE_CONVERTED


def test_two_threads_building_programs_at_once(tmp_path):
    """A loaded model building its backward program (static mode, op roles) in one thread
    while another thread traces: each builds its own program."""
    path = str(tmp_path / "m")

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(3, 2)

        def forward(self, x):
            y = self.fc(x)
            if rt.mean(y) > 0:
                y = y * 2.0
            return y

    autostatic.save(Net(), path, input_spec=[autostatic.InputSpec([None, 3])])
    errors: list = []
    done = threading.Event()

    def trainer():
        try:
            for _ in range(15):
                layer = autostatic.load(path)  # a fresh layer: builds its backward again
                x = rt.to_tensor(np.ones([2, 3], np.float32), stop_gradient=False)
                layer(x).sum().backward()
                assert x.grad is not None and list(x.grad.shape) == [2, 3]
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            done.set()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    t = threading.Thread(target=trainer)
    t.start()
    n = 0
    while not done.is_set() and n < 200:
        static = autostatic.to_static(_eager_sign)
        x = rt.to_tensor(np.full([2, n % 4 + 1], -1.0, np.float32))
        np.testing.assert_allclose(static(x).numpy(), x.numpy() - 1.0)
        program = static.concrete_program.main_program
        roles = {op.attrs.get("op_role", "forward") for op in program.global_block().ops}
        assert roles == {"forward"}, roles
        n += 1
    t.join(120)
    sys.setswitchinterval(switch)
    assert not errors, errors[:3]
    assert n > 0


def test_a_trace_entering_no_grad_does_not_stop_other_threads_recording():
    """Tracing a BatchNorm in train mode runs ``no_grad`` (the running statistics): in the
    tracing thread that must not turn gradient recording off for the other threads."""
    stop = threading.Event()
    stats = {"steps": 0, "missed": 0, "errors": []}

    def trainer():
        w = rt.to_tensor(np.ones([4], np.float32), stop_gradient=False)
        try:
            while not stop.is_set() and stats["steps"] < 50_000:
                (w * 2.0).sum().backward()
                if w.grad is None or not np.array_equal(w.grad.numpy(), np.full(4, 2.0)):
                    stats["missed"] += 1
                w.clear_grad()
                stats["steps"] += 1
        except BaseException as exc:  # reported below
            stats["errors"].append(exc)

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.bn = rt.nn.BatchNorm1D(3)

        def forward(self, x):
            return self.bn(x) * 2.0

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    t = threading.Thread(target=trainer)
    t.start()
    try:
        for n in range(60):
            net = autostatic.to_static(Net())  # a fresh trace (train mode) every round
            net(rt.ones([n % 3 + 2, 3]))
    finally:
        stop.set()
        t.join(60)
        sys.setswitchinterval(switch)
    assert not stats["errors"], stats["errors"][:3]
    assert stats["missed"] == 0, f"{stats['missed']} of {stats['steps']} steps lost gradients"
    assert rt.is_grad_enabled()


def test_no_grad_in_one_thread_leaves_the_others_recording():
    """Gradient mode belongs to a thread: an eager ``no_grad`` held open in one thread (a
    layer's initializers, an evaluation loop) must not stop another thread's backward."""
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def evaluator():
        with rt.no_grad():
            seen["inside"] = rt.is_grad_enabled()
            entered.set()
            done.wait(30)
        seen["after"] = rt.is_grad_enabled()

    t = threading.Thread(target=evaluator)
    t.start()
    try:
        assert entered.wait(30)
        assert rt.is_grad_enabled()
        w = rt.to_tensor(np.ones([4], np.float32), stop_gradient=False)
        y = (w * 3.0).sum()
        assert not y.stop_gradient
        y.backward()
        assert np.array_equal(w.grad.numpy(), np.full(4, 3.0))
        with rt.no_grad():  # and this thread's own switch still works while the other is off
            assert (w * 2.0).stop_gradient
        assert not (w * 2.0).stop_gradient
    finally:
        done.set()
        t.join(30)
    assert seen == {"inside": False, "after": True}


def test_a_thread_ending_inside_no_grad_does_not_turn_recording_off_elsewhere():
    t = threading.Thread(target=lambda: rt.set_grad_enabled(False))  # never switched back
    t.start()
    t.join(30)
    w = rt.to_tensor(np.ones([2], np.float32), stop_gradient=False)
    (w * w).sum().backward()
    assert np.array_equal(w.grad.numpy(), np.full(2, 2.0))

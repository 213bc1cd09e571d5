"""Threads: one StaticFunction called from several threads with different shapes traces once
per cache key and gives each thread its own correct result; marked modules imported from
several threads at once are converted once and work."""

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

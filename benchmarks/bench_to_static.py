"""to_static against hand-written NumPy, eager autostatic and the bare executor.

    python benchmarks/bench_to_static.py [--json out.json]

Workloads (those of ``bench_static.py``, written as plain Python and converted):
W1: ``if mean(x) > 0`` + a 10-step tensor ``while`` on float32 [4,16].
W2: a 784-256-256-10 MLP, batch 64, whose hidden activation depends on ``mean(h) > 0``,
    softmax cross-entropy: forward, and forward + ``loss.backward()`` + ``opt.step()``.
W3: a 1000-step tensor ``while`` on a float32 [8] vector.

Reported: cached-call time against NumPy (ratio) and against eager autostatic (ratio), the
cached call's overhead above running the same program with the bare executor, and the first
call (convert + trace + first run; ``cold`` also clears the converter's cache; ``1st-cached``
is the first call minus a cached call: what conversion, tracing and compiling add).
Goals (issue 6): cached overhead under 20 us above the executor; first call under 50 ms on W2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import compare  # noqa: E402
from bench_static import mlp_data, mlp_numpy_forward, mlp_numpy_step, w1_numpy, w3_numpy  # noqa: E402

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
import autostatic_runtime.nn.functional as F  # noqa: E402
from autostatic import InputSpec  # noqa: E402
from autostatic_runtime import static  # noqa: E402


def w1(x):
    if rt.mean(x) > 0:
        y = rt.relu(x) * 2.0
    else:
        y = x - 1.0
    i = rt.zeros([], "int64")
    while i < 10:
        y = y * 0.9 + 0.1
        i = i + 1
    return rt.sum(y)


def w3(v):
    i = rt.zeros([], "int64")
    while i < 1000:
        v = v * 0.999 + 0.001
        i = i + 1
    return v


class CondMLP(rt.nn.Layer):
    def __init__(self, ws, bs):
        super().__init__()
        self.fc0 = rt.nn.Linear(784, 256)
        self.fc1 = rt.nn.Linear(256, 256)
        self.fc2 = rt.nn.Linear(256, 10)
        for layer, w, b in zip((self.fc0, self.fc1, self.fc2), ws, bs):
            layer.weight.set_value(w)
            layer.bias.set_value(b)

    def forward(self, x, y):
        h = self.fc0(x)
        if rt.mean(h) > 0:
            h = F.relu(h)
        else:
            h = rt.tanh(h)
        h = F.relu(self.fc1(h))
        return F.cross_entropy(self.fc2(h), y)


def _above_executor(sf, args) -> float:
    """Seconds a cached call takes above the same program run by a bare Executor (feeds by
    name, parameters in a scope), from alternating rounds."""
    program = sf.concrete_program
    exe = static.Executor()
    scope = static.Scope()
    feed = {v.name: a.numpy() for v, a in zip(program.inputs, args)}
    fetch = [program.outputs[0]]
    with static.scope_guard(scope):
        exe.run(program.main_program, feed, fetch)
        exe_s, sf_s, _ = compare(
            lambda: exe.run(program.main_program, feed, fetch), lambda: sf(*args)
        )
    return sf_s - exe_s


def _first_call(make, args, cold: bool, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        if cold:
            from autostatic import conversion

            conversion._cache.clear()
        t0 = time.perf_counter()
        sf = make()
        sf(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def workloads() -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []

    def add(name, numpy_fn, eager_fn, sf, args, make):
        ref, got, ratio = compare(numpy_fn, lambda: sf(*args))
        _, eager, eager_ratio = compare(eager_fn, lambda: sf(*args))
        over = _above_executor(sf, args)
        rows.append(
            {
                "case": name,
                "numpy_s": ref,
                "to_static_s": got,
                "ratio_numpy": ratio,
                "eager_s": eager,
                "ratio_eager": eager_ratio,
                "overhead_above_executor_s": over,
                "first_call_s": _first_call(make, args, cold=False),
                "first_call_cold_s": _first_call(make, args, cold=True),
                "first_call_overhead_s": _first_call(make, args, cold=False) - got,
            }
        )

    x = rt.to_tensor(rng.normal(size=(4, 16)).astype(np.float32))
    xn = x.numpy()
    sf = autostatic.to_static(w1)
    np.testing.assert_allclose(sf(x).numpy(), w1_numpy(xn), rtol=1e-5)
    add("W1 cond + 10-step while", lambda: w1_numpy(xn), lambda: w1(x), sf, [x],
        lambda: autostatic.to_static(w1))  # fmt: skip

    ws, bs, xb, yb = mlp_data(rng)
    xt, yt = rt.to_tensor(xb), rt.to_tensor(yb)
    specs = [InputSpec([None, 784], "float32", "x"), InputSpec([None], "int64", "y")]
    eager_net = CondMLP(ws, bs)
    net = autostatic.to_static(CondMLP(ws, bs), input_spec=specs)
    with rt.no_grad():
        np.testing.assert_allclose(
            net(xt, yt).numpy(), mlp_numpy_forward(xb, yb, ws, bs), rtol=1e-4
        )

    def fwd_eager():
        with rt.no_grad():
            return eager_net(xt, yt)

    class NoGrad:
        """Calls a StaticFunction under no_grad (inference), exposing its program."""

        def __init__(self, sf):
            self.sf = sf
            self.concrete_program = sf.concrete_program

        def __call__(self, *a):
            with rt.no_grad():
                return self.sf(*a)

    fresh = [CondMLP(ws, bs) for _ in range(15)]  # built ahead: layer set-up is not timed

    def make_w2():
        sf = autostatic.to_static(fresh.pop(), input_spec=specs).forward
        return NoGrad(sf)

    add("W2 MLP forward", lambda: mlp_numpy_forward(xb, yb, ws, bs), fwd_eager,
        NoGrad(net.forward), [xt, yt], make_w2)  # fmt: skip

    opt_s = rt.optimizer.SGD(0.01, parameters=net.parameters())
    opt_e = rt.optimizer.SGD(0.01, parameters=eager_net.parameters())
    wn, bn = [w.copy() for w in ws], [b.copy() for b in bs]
    for _ in range(3):
        loss = net(xt, yt)
        loss.backward()
        opt_s.step()
        opt_s.clear_grad()
        np.testing.assert_allclose(loss.numpy(), mlp_numpy_step(xb, yb, wn, bn), rtol=1e-4)

    def step(model, opt):
        loss = model(xt, yt)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    ref, got, ratio = compare(lambda: mlp_numpy_step(xb, yb, wn, bn), lambda: step(net, opt_s))
    _, eager, eager_ratio = compare(lambda: step(eager_net, opt_e), lambda: step(net, opt_s))
    rows.append(
        {
            "case": "W2 MLP forward+backward+SGD",
            "numpy_s": ref,
            "to_static_s": got,
            "ratio_numpy": ratio,
            "eager_s": eager,
            "ratio_eager": eager_ratio,
        }
    )

    v = rt.to_tensor(rng.normal(size=(8,)).astype(np.float32))
    vn = v.numpy()
    sf = autostatic.to_static(w3)
    np.testing.assert_allclose(sf(v).numpy(), w3_numpy(vn), rtol=1e-5)
    add("W3 1000-step while", lambda: w3_numpy(vn), lambda: w3(v), sf, [v],
        lambda: autostatic.to_static(w3))  # fmt: skip
    return rows


def render(rows: list[dict]) -> str:
    lines = [
        "to_static (median per call; ratios from alternating rounds)",
        f"{'case':30s} {'numpy':>9s} {'to_static':>10s} {'/numpy':>7s} {'/eager':>7s} "
        f"{'>exec':>8s} {'1st call':>9s} {'cold':>8s} {'1st-cached':>10s}",
    ]
    for r in rows:
        over = r.get("overhead_above_executor_s")
        first, cold = r.get("first_call_s"), r.get("first_call_cold_s")
        lines.append(
            f"{r['case']:30s} {r['numpy_s'] * 1e6:7.1f}us {r['to_static_s'] * 1e6:8.1f}us "
            f"{r['ratio_numpy']:6.2f}x {r['ratio_eager']:6.2f}x "
            + (f"{over * 1e6:6.1f}us " if over is not None else f"{'-':>8s} ")
            + (
                f"{first * 1e3:7.1f}ms {cold * 1e3:6.1f}ms "
                f"{r['first_call_overhead_s'] * 1e3:8.1f}ms"
                if first is not None
                else ""
            )
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    rows = workloads()
    print(render(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

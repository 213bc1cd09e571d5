"""Whole training steps compiled by ``to_static``, against NumPy, eager autostatic and JAX.

    python benchmarks/bench_train_step.py [--json out.json] [--quick] [--device gpu]

Two workloads, each a step ``loss = f(net(x), y); loss.backward(); opt.step();
opt.clear_grad()`` run through the documented API in this process:

- W2t: bench_static's MLP 784-256-256-10 with a tensor ``if``, batch 64, SGD 0.01, against
  the hand-written NumPy step (ratios to it, from alternating rounds);
- CNN: conv-BN-ReLU-pool twice (3->16->32 channels, 3x3) and a linear head, batch 32,
  3x32x32 images, SGD with momentum 0.9, against autostatic's eager step.

Runners: eager; ``to_static`` of the forward with the backward and update eager (the way
before whole steps compiled), on the default executor and with ``backend="xla"``; the whole
step compiled by ``to_static`` on the default executor and by XLA; JAX's own ``jax.jit`` of
the same step written by hand (parameters and optimizer state passed from step to step;
full float32 products, as autostatic's XLA steps have: JAX's own default on GPUs from Ampere
on is TF32);
PyTorch eager and PaddlePaddle's ``to_static`` step when they are installed (each in a
process of its own, against eager's time of the same run). The whole XLA
step is also timed against the ``jax.jit`` step in alternating rounds (the goal's ratio),
and first calls (trace + compile + run) are medians of three fresh processes.

``--device gpu`` builds the models on CuPy (``rt.set_device("gpu")``): eager and the default
executor run CuPy kernels, each call waiting for its loss; the XLA runners then take CuPy
arrays through host memory. Without it, on a machine with JAX's CUDA build, the XLA runners
(and ``jax.jit``) run on the GPU with the parameters kept there (``tools/gpu_check.sh`` runs
both).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import compare, median_in_fresh_processes  # noqa: E402
from bench_static import mlp_data, mlp_numpy_step  # noqa: E402
from bench_to_static import CondMLP  # noqa: E402  (W2t's network: the loss is its output)

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
import autostatic_runtime.nn.functional as F  # noqa: E402
from autostatic_runtime import nn  # noqa: E402

# ---- the models ------------------------------------------------------------------------------


class CNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2D(16)
        self.conv2 = nn.Conv2D(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2D(32)
        self.pool = nn.MaxPool2D(2)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        h = self.pool(F.relu(self.bn1(self.conv1(x))))
        h = self.pool(F.relu(self.bn2(self.conv2(h))))
        return self.fc(rt.flatten(h, 1))


def mlp_step(net, x, y, opt):
    loss = net(x, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def cnn_step(net, x, y, opt):
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss


def forward_only(net, loss_of, opt):
    """The step with only the forward compiled: ``net`` is a to_static layer."""

    def step(x, y):
        loss = loss_of(net, x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


def setup(workload: str, runner: str):
    """A ready-to-call step of ``runner`` on ``workload`` (its first call not made yet)."""
    rng = np.random.default_rng(0)
    if workload == "W2t":
        ws, bs, xb, yb = mlp_data(rng)
        net = CondMLP(ws, bs)
        opt = rt.optimizer.SGD(0.01, parameters=net.parameters())
        step, loss_of = mlp_step, lambda n, x, y: n(x, y)
    else:
        xb = rng.standard_normal((32, 3, 32, 32)).astype(np.float32)
        yb = rng.integers(0, 10, 32)
        rt.seed(0)
        net = CNN()
        opt = rt.optimizer.Momentum(0.01, momentum=0.9, parameters=net.parameters())
        step, loss_of = cnn_step, lambda n, x, y: F.cross_entropy(n(x), y)
    x, y = rt.to_tensor(xb), rt.to_tensor(yb)
    if runner == "eager":
        return _synced(lambda: step(net, x, y, opt))
    if runner.startswith("forward"):
        backend = "xla" if runner.endswith("xla") else None
        fwd = forward_only(autostatic.to_static(net, backend=backend), loss_of, opt)
        return _synced(lambda: fwd(x, y))
    compiled = autostatic.to_static(step, backend="xla" if runner.endswith("xla") else None)
    return _synced(lambda: compiled(net, x, y, opt))


def _synced(call):
    """On a GPU, the call waiting for its loss (CuPy's kernels run asynchronously), as the
    ``jax.jit`` runner waits for its own."""
    if rt.get_device() == "cpu":
        return call
    return lambda: float(call())


# ---- JAX's own jitted step -----------------------------------------------------------------


def jax_setup(workload: str):
    """JAX's jitted step, written by hand, chained (each call takes the last one's state)."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    if workload == "W2t":
        ws, bs, xb, yb = mlp_data(rng)

        def loss_fn(params, x, y):
            (w0, w1, w2), (b0, b1, b2) = params
            h = x @ w0 + b0
            h = jax.lax.cond(jnp.mean(h) > 0, lambda: jnp.maximum(h, 0), lambda: jnp.tanh(h))
            h = jnp.maximum(h @ w1 + b1, 0)
            logp = jax.nn.log_softmax(h @ w2 + b2, axis=1)
            return -jnp.mean(logp[jnp.arange(y.shape[0]), y])

        def step(state, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(state, x, y)
            return loss, jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, state, grads)

        state = (tuple(map(jnp.asarray, ws)), tuple(map(jnp.asarray, bs)))
    else:
        xb = rng.standard_normal((32, 3, 32, 32)).astype(np.float32)
        yb = rng.integers(0, 10, 32)
        r = np.random.default_rng(1)

        def he(*shape):
            fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
            return jnp.asarray(r.normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32))

        params = {
            "c1": he(16, 3, 3, 3), "b1": jnp.zeros(16), "g1": jnp.ones(16), "s1": jnp.zeros(16),
            "c2": he(32, 16, 3, 3), "b2": jnp.zeros(32), "g2": jnp.ones(32), "s2": jnp.zeros(32),
            "w": he(2048, 10), "bw": jnp.zeros(10),
        }  # fmt: skip
        stats = {k: jnp.zeros(n) for k, n in (("m1", 16), ("m2", 32))}
        stats.update(v1=jnp.ones(16), v2=jnp.ones(32))

        def block(h, w, b, g, s, mean, var):
            h = jax.lax.conv_general_dilated(h, w, (1, 1), "SAME") + b[None, :, None, None]
            mu, sigma2 = h.mean((0, 2, 3)), h.var((0, 2, 3))
            h = (h - mu[None, :, None, None]) / jnp.sqrt(sigma2[None, :, None, None] + 1e-5)
            h = jnp.maximum(h * g[None, :, None, None] + s[None, :, None, None], 0)
            h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
            n = h.size // h.shape[1]
            new = (0.9 * mean + 0.1 * mu, 0.9 * var + 0.1 * sigma2 * n / (n - 1))
            return h, new

        def loss_fn(p, st, x, y):
            h, (m1, v1) = block(x, p["c1"], p["b1"], p["g1"], p["s1"], st["m1"], st["v1"])
            h, (m2, v2) = block(h, p["c2"], p["b2"], p["g2"], p["s2"], st["m2"], st["v2"])
            logp = jax.nn.log_softmax(h.reshape(h.shape[0], -1) @ p["w"] + p["bw"], axis=1)
            loss = -jnp.mean(logp[jnp.arange(y.shape[0]), y])
            return loss, {"m1": m1, "v1": v1, "m2": m2, "v2": v2}

        def step(state, x, y):
            p, velocity, st = state
            (loss, st), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, st, x, y)
            velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
            p = jax.tree_util.tree_map(lambda w, v: w - 0.01 * v, p, velocity)
            return loss, (p, velocity, st)

        state = (params, jax.tree_util.tree_map(jnp.zeros_like, params), stats)
    def precise(*args):  # full float32 products, as autostatic's XLA steps (not TF32 on GPUs)
        with jax.default_matmul_precision("highest"):
            return step(*args)

    jitted = jax.jit(precise)
    held = [state]

    def call():
        loss, held[0] = jitted(held[0], xb, yb)
        return jax.block_until_ready(loss)

    return call


TORCH_STEP = """
import sys, time, numpy as np
import torch
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32),
    torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(2048, 10),
)
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
rng = np.random.default_rng(0)
x = torch.from_numpy(rng.standard_normal((32, 3, 32, 32)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 10, 32))

def compiled(net, x, y, opt):
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss
"""

PADDLE_STEP = """
import sys, time, numpy as np
import paddle
paddle.seed(0)

class PCNN(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = paddle.nn.Conv2D(3, 16, 3, padding=1), paddle.nn.BatchNorm2D(16)
        self.c2, self.b2 = paddle.nn.Conv2D(16, 32, 3, padding=1), paddle.nn.BatchNorm2D(32)
        self.pool, self.fc = paddle.nn.MaxPool2D(2), paddle.nn.Linear(2048, 10)

    def forward(self, x):
        h = self.pool(paddle.nn.functional.relu(self.b1(self.c1(x))))
        h = self.pool(paddle.nn.functional.relu(self.b2(self.c2(h))))
        return self.fc(paddle.flatten(h, 1))

def step(net, x, y, opt):
    loss = paddle.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    return loss

net = PCNN()
opt = paddle.optimizer.Momentum(0.01, momentum=0.9, parameters=net.parameters())
traced = paddle.jit.to_static(step, full_graph=True)


def compiled(net, x, y, opt):  # Paddle asks for this around a Momentum step's views
    with paddle.base.framework._stride_in_no_check_dy2st_diff():
        return traced(net, x, y, opt)


rng = np.random.default_rng(0)
x = paddle.to_tensor(rng.standard_normal((32, 3, 32, 32)).astype(np.float32))
y = paddle.to_tensor(rng.integers(0, 10, 32))
"""

TIMING = """
for _ in range(3):
    float(compiled(net, x, y, opt))
times = []
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter()
    float(compiled(net, x, y, opt))
    times.append(time.perf_counter() - t0)
print(sorted(times)[len(times) // 2])
"""


def other_framework_seconds(name: str, steps: int) -> float | None:
    """Median seconds of PyTorch's eager or PaddlePaddle's ``to_static`` CNN step, in a
    process of its own (their thread pools stay out of this one's timings); None when the
    framework is not installed. Paddle compiles a whole step with the program IR it had
    before PIR (``FLAGS_enable_pir_api=0``; 3.3.1's PIR path fails at ``loss.backward()``),
    and converts a function only from a file."""
    import importlib.util
    import tempfile

    module, script = {"torch": ("torch", TORCH_STEP), "paddle": ("paddle", PADDLE_STEP)}[name]
    if importlib.util.find_spec(module) is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}_step.py")
        with open(path, "w") as f:
            f.write(script + TIMING)
        done = subprocess.run(
            [sys.executable, path, str(steps)], capture_output=True, text=True,
            env=dict(os.environ, FLAGS_enable_pir_api="0"),
        )  # fmt: skip
    if done.returncode != 0:
        print(f"{name}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return float(done.stdout.split()[-1])


# ---- measuring -----------------------------------------------------------------------------


def first_call_here(workload: str, runner: str, device: str = "cpu") -> float:
    """Seconds of the first call (trace + compile + run) in this process, after JAX has
    compiled one unrelated function (its start-up is not the workload's)."""
    import jax

    rt.set_device(device)
    jax.block_until_ready(jax.jit(lambda a: a + 1)(np.ones(3, np.float32)))
    call = jax_setup(workload) if runner == "jax.jit" else setup(workload, runner)
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def first_call(workload: str, runner: str, repeats: int = 3) -> float:
    """Median over fresh processes (in one process XLA's compilation cache would answer)."""
    return median_in_fresh_processes(
        "bench_train_step", "first_call_here", (workload, runner, rt.get_device()), repeats
    )


RUNNERS = ["eager", "forward default", "forward xla", "whole default", "whole xla"]


def measure_workload(workload: str, rounds: int, quick: bool) -> tuple[list, dict]:
    """(rows, paired) for one workload: each runner's per-call time against the reference
    (NumPy for W2t, eager for the CNN), and the XLA step against JAX's in alternating rounds."""
    calls = {r: setup(workload, r) for r in RUNNERS}
    calls["jax.jit"] = jax_setup(workload)
    for call in calls.values():  # trace, compile, settle
        for _ in range(3):
            call()
    if workload == "W2t":
        rng = np.random.default_rng(0)
        ws, bs, xb, yb = mlp_data(rng)
        wn, bn = [w.copy() for w in ws], [b.copy() for b in bs]
        reference = lambda: mlp_numpy_step(xb, yb, wn, bn)  # noqa: E731
        ref_name = "numpy"
    else:
        reference, ref_name = calls["eager"], "eager"
    rows = []
    for runner, call in calls.items():
        ref, meas, ratio = compare(reference, call, rounds=rounds)
        first = None
        if not quick and (runner.startswith("whole") or runner == "jax.jit"):
            first = first_call(workload, runner)
        rows.append((workload, runner, ref_name, ref, meas, ratio, first))
    if workload == "CNN" and rt.get_device() == "cpu":  # each in a process of its own
        eager = next(r for r in rows if r[1] == "eager")[4]
        for name, label in (("torch", "PyTorch eager"), ("paddle", "Paddle to_static")):
            seconds = other_framework_seconds(name, 5 if quick else 15)
            if seconds is not None:
                rows.append((workload, label, "eager", eager, seconds, seconds / eager, None))
    paired = {
        "whole xla / jax.jit": compare(calls["jax.jit"], calls["whole xla"], rounds=2 * rounds + 1),
        "whole default / eager": compare(calls["eager"], calls["whole default"], rounds=rounds),
        "whole default / forward default": compare(
            calls["forward default"], calls["whole default"], rounds=rounds
        ),
        "forward xla / forward default": compare(
            calls["forward default"], calls["forward xla"], rounds=rounds
        ),
    }
    return rows, {f"{workload}: {k}": v for k, v in paired.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no first calls")
    parser.add_argument("--workload", choices=["W2t", "CNN"], action="append")
    parser.add_argument("--device", default="cpu", help="rt.set_device: cpu or gpu (CuPy)")
    args = parser.parse_args()
    rt.set_device(args.device)
    rounds = 3 if args.quick else 9
    rows, paired = [], {}
    for workload in args.workload or ["W2t", "CNN"]:
        r, p = measure_workload(workload, rounds, args.quick)
        rows += r
        paired.update(p)
    print("Training steps (median per call; ratio = time / the reference's in the same run)")
    print(f"{'case':6s} {'runner':18s} {'ref':>6s} {'ref time':>10s} {'per call':>10s} "
          f"{'ratio':>8s} {'first call':>11s}")  # fmt: skip
    for workload, runner, ref_name, ref, meas, ratio, first in rows:
        first_s = f"{first * 1e3:9.0f}ms" if first is not None else ""
        print(f"{workload:6s} {runner:18s} {ref_name:>6s} {ref * 1e3:8.3f}ms {meas * 1e3:8.3f}ms "
              f"{ratio:7.3f}x {first_s:>11s}")  # fmt: skip
    print("\nAlternating rounds, two runners side by side (median of per-round ratios)")
    for name, (ref, meas, ratio) in paired.items():
        print(f"{name:48s} {ref * 1e3:8.3f}ms {meas * 1e3:8.3f}ms {ratio:7.3f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "rows": [
                        dict(zip(("case", "runner", "ref", "ref_s", "s", "ratio", "first_s"), r))
                        for r in rows
                    ],
                    "paired": {k: dict(zip(("ref_s", "s", "ratio"), v)) for k, v in paired.items()},
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

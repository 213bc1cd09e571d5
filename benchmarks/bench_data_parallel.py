"""Data-parallel training steps on several devices, and the launcher's start-up overhead.

    python benchmarks/bench_data_parallel.py [--devices 4] [--quick] [--json out.json]

Steps: bench_train_step's workloads (W2t: the MLP 784-256-256-10 with a tensor ``if``, batch
64, SGD; CNN: conv-BN-ReLU-pool twice and a linear head, batch 32, Momentum), the whole step
compiled with ``backend="xla"`` on one device against the same step over
``rt.DataParallel(net)`` on ``--devices`` devices (JAX's CPU devices simulated with
``--xla_force_host_platform_device_count``, set here before JAX starts), in alternating
rounds. On a machine with fewer cores than devices this measures the partitioning's
overhead, not a speed-up.

Launcher: the wall time of ``autostatic launch --nproc_per_node 2`` running a script that
only joins the job (``rt.distributed.init_parallel_env()``) against ``python`` running the
same script alone (which imports autostatic and JAX and joins nothing), medians of fresh runs:
the difference is what the launcher adds per job.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _devices_flag(devices: int) -> None:
    flag = f"--xla_force_host_platform_device_count={devices}"
    if "jax" in sys.modules:
        raise SystemExit("bench_data_parallel: JAX was imported before the device count was set")
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()


def steps(quick: bool) -> list[tuple]:
    """(workload, one-device seconds, data-parallel seconds, ratio) per workload."""
    sys.path.insert(0, ROOT)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import jax
    import numpy as np
    from _timing import compare
    from bench_static import mlp_data
    from bench_to_static import CondMLP
    from bench_train_step import CNN, cnn_step, mlp_step

    import autostatic
    import autostatic_runtime as rt

    def make(workload: str, parallel: bool):
        rng = np.random.default_rng(0)
        rt.seed(0)
        if workload == "W2t":
            ws, bs, xb, yb = mlp_data(rng)
            net, step = CondMLP(ws, bs), mlp_step
            opt = rt.optimizer.SGD(0.01, parameters=net.parameters())
        else:
            xb = rng.standard_normal((32, 3, 32, 32)).astype(np.float32)
            yb = rng.integers(0, 10, 32)
            net, step = CNN(), cnn_step
            opt = rt.optimizer.Momentum(0.01, momentum=0.9, parameters=net.parameters())
        model = rt.DataParallel(net) if parallel else net
        x, y = rt.to_tensor(xb), rt.to_tensor(yb)
        compiled = autostatic.to_static(step, backend="xla")
        return lambda: compiled(model, x, y, opt)

    rows = []
    for workload in ("W2t", "CNN"):
        one, many = make(workload, False), make(workload, True)
        ref, meas, ratio = compare(one, many, rounds=3 if quick else 9)
        rows.append((workload, jax.device_count(), ref, meas, ratio))
    return rows


JOIN = "import autostatic_runtime as rt, jax\nrt.distributed.init_parallel_env()\n"


def launcher(repeats: int) -> tuple[float, float]:
    """(median seconds of the script alone, median seconds of a 2-process launch of it)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "join.py")
        with open(script, "w") as f:
            f.write(JOIN)
        alone = [sys.executable, script]
        launch = [sys.executable, "-m", "autostatic", "launch", "--nproc_per_node", "2",
                  "--log_dir", os.path.join(tmp, "log"), script]  # fmt: skip
        times: dict = {"alone": [], "launch": []}
        for _ in range(repeats):
            for name, command in (("alone", alone), ("launch", launch)):
                start = time.perf_counter()
                subprocess.run(command, env=env, cwd=tmp, check=True, capture_output=True)
                times[name].append(time.perf_counter() - start)
    return statistics.median(times["alone"]), statistics.median(times["launch"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    _devices_flag(args.devices)
    rows = steps(args.quick)
    print("Whole XLA training step: one device against DataParallel (median per call)")
    for workload, devices, ref, meas, ratio in rows:
        print(f"{workload:4s} 1 device {ref * 1e3:8.3f}ms   {devices} devices "
              f"{meas * 1e3:8.3f}ms   {ratio:6.3f}x")  # fmt: skip
    alone, launched = launcher(3 if args.quick else 5)
    print(f"\nlauncher: script alone {alone:.2f}s, 'launch --nproc_per_node 2' {launched:.2f}s, "
          f"overhead {launched - alone:.2f}s per job")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "steps": [
                        dict(zip(("workload", "devices", "one_s", "parallel_s", "ratio"), r))
                        for r in rows
                    ],
                    "launcher": {"alone_s": alone, "launch_s": launched},
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

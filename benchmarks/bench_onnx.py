"""ONNX export: export time of a 100-op program, and ONNX Runtime's per-call time against
autostatic's executor and hand-written NumPy on the static workloads W1-W3, in one run.

    python benchmarks/bench_onnx.py [--json out.json]

W1-W3 are bench_static.py's (the same programs; W2 is the MLP forward with its loss). ONNX
Runtime runs on the CPU provider with one intra-op thread (the executor's NumPy is
single-threaded apart from BLAS). Times are medians of alternating rounds; ratios are per
round, then the median (see _timing.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import onnxruntime  # noqa: E402
from _timing import _batch_size, _run, measure  # noqa: E402
from bench_static import (  # noqa: E402
    CondMLP,
    build,
    mlp_data,
    mlp_numpy_forward,
    w1_numpy,
    w1_program,
    w3_numpy,
    w3_program,
)

import autostatic_runtime as rt  # noqa: E402
from autostatic.onnx.exporter import ProgramSpec, to_model  # noqa: E402
from autostatic_runtime import static  # noqa: E402


def hundred_ops(x):
    """33 x (mul, add, tanh) and a sum: a 100-op program."""
    h = x
    for i in range(33):
        h = rt.tanh(h * (1.0 + i / 100) + 0.5)
    return rt.sum(h)


def session(model) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def spec_of(main, feeds: dict, outs: list, scope=None) -> ProgramSpec:
    inputs = [(n, list(v.shape), str(v.dtype)) for n, v in feeds.items()]
    params = {}
    if scope is not None:
        for name, var in main.global_block().vars.items():
            if var.persistable and name in scope:
                params[name] = np.asarray(scope[name])
    return ProgramSpec(main, inputs, [o.name for o in outs], params)


def compare3(numpy_fn, exe_fn, ort_fn, rounds: int = 9, min_time: float = 0.03):
    """Median seconds per call of each, and the median per-round ratios to NumPy."""
    fns = (numpy_fn, exe_fn, ort_fn)
    sizes = [_batch_size(f, min_time) for f in fns]
    times: list[list[float]] = [[], [], []]
    for _ in range(rounds):
        for k, (f, n) in enumerate(zip(fns, sizes)):
            times[k].append(_run(f, n))
    medians = [statistics.median(t) for t in times]
    exe_ratio = statistics.median(e / r for e, r in zip(times[1], times[0]))
    ort_ratio = statistics.median(o / r for o, r in zip(times[2], times[0]))
    ort_vs_exe = statistics.median(o / e for o, e in zip(times[2], times[1]))
    return medians, exe_ratio, ort_ratio, ort_vs_exe


def workloads():
    rng = np.random.default_rng(0)
    exe = static.Executor()
    cases = []

    x = rng.normal(size=(4, 16)).astype(np.float32)
    main, _, out = build(w1_program, [("x", [4, 16], "float32")])
    cases.append(("W1 cond + 10-step while", main, {"x": x}, [out], None, lambda: w1_numpy(x)))

    ws, bs, xb, yb = mlp_data(rng)
    net = CondMLP(ws, bs)
    main, startup, loss = build(net, [("x", [64, 784], "float32"), ("y", [64], "int64")])
    scope = static.Scope()
    exe.run(startup, scope=scope)
    cases.append(
        (
            "W2 MLP forward",
            main,
            {"x": xb, "y": yb},
            [loss],
            scope,
            lambda: mlp_numpy_forward(xb, yb, ws, bs),
        )
    )

    v = rng.normal(size=(8,)).astype(np.float32)
    main, _, out = build(w3_program, [("v", [8], "float32")])
    cases.append(("W3 1000-step while", main, {"v": v}, [out], None, lambda: w3_numpy(v)))

    return [(case[0], *measure_case(exe, *case[1:])) for case in cases]


def measure_case(exe, main, feeds, outs, scope, numpy_fn):
    """Check ONNX Runtime against the executor, then time NumPy, the executor and ORT."""
    sess = session(to_model(spec_of(main, feeds, outs, scope)))
    expected = exe.run(main, feeds, outs, scope=scope)[0]
    np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=1e-4, atol=1e-5)
    medians, exe_ratio, ort_ratio, ort_vs_exe = compare3(
        numpy_fn,
        lambda: exe.run(main, feeds, outs, scope=scope),
        lambda: sess.run(None, feeds),
    )
    return (*medians, exe_ratio, ort_ratio, ort_vs_exe)


def export_time() -> tuple[int, float]:
    main, _, out = build(hundred_ops, [("x", [4, 16], "float32")])
    n_ops = len(main.global_block().ops)
    spec = spec_of(main, {"x": np.zeros((4, 16), np.float32)}, [out])
    return n_ops, measure(lambda: to_model(spec), rounds=5, min_time=0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    n_ops, seconds = export_time()
    print(
        f"export of a {n_ops}-op program (lowering + onnx.checker full check): "
        f"{seconds * 1e3:.1f} ms"
    )
    rows = workloads()
    print("per call (median): numpy | executor | onnxruntime ; ratios to numpy ; ORT/executor")
    for name, t_np, t_exe, t_ort, r_exe, r_ort, r_oe in rows:
        print(
            f"  {name:26s} {t_np * 1e6:9.1f} us | {t_exe * 1e6:9.1f} us | {t_ort * 1e6:9.1f} us"
            f" ; exe {r_exe:4.2f}x  ort {r_ort:4.2f}x ; ort/exe {r_oe:4.2f}x"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "export_ops": n_ops,
                    "export_s": seconds,
                    "workloads": [
                        dict(
                            zip(
                                (
                                    "case",
                                    "numpy_s",
                                    "executor_s",
                                    "ort_s",
                                    "executor_ratio",
                                    "ort_ratio",
                                    "ort_vs_executor",
                                ),
                                row,
                            )
                        )
                        for row in rows
                    ],
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

"""Eager-mode overhead against hand-written NumPy, measured in one run.

    python benchmarks/bench_eager.py [--json out.json]

Cases: per-op dispatch on small tensors (``x + 1``, ``add``, ``matmul``, ``relu``), and a
784-256-256-10 MLP on a batch of 64 (forward; forward + backward with softmax cross-entropy).
Goals (issue 2): MLP forward within 1.3x of NumPy; per-op overhead under 3 us.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import compare, table  # noqa: E402

import autostatic_runtime as rt  # noqa: E402
import autostatic_runtime.nn.functional as F  # noqa: E402


def small_ops() -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 16)).astype(np.float32)
    b = rng.normal(size=(16, 16)).astype(np.float32)
    ta, tb = rt.to_tensor(a), rt.to_tensor(b)
    return [
        ("x + 1 [4,16]", *compare(lambda: a + 1, lambda: ta + 1)),
        ("add(x, x) [4,16]", *compare(lambda: np.add(a, a), lambda: rt.add(ta, ta))),
        ("matmul [4,16]x[16,16]", *compare(lambda: a @ b, lambda: rt.matmul(ta, tb))),
        ("relu [4,16]", *compare(lambda: np.maximum(a, 0), lambda: rt.relu(ta))),
    ]


def mlp_params(rng):
    sizes = [784, 256, 256, 10]
    ws = [
        (rng.normal(size=(i, o)) * np.sqrt(2 / i)).astype(np.float32)
        for i, o in zip(sizes, sizes[1:])
    ]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    return ws, bs


def numpy_forward(x, ws, bs):
    h = x
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = h @ w + b
        if i < len(ws) - 1:
            h = np.maximum(h, 0)
    return h


def numpy_train_step(x, y, ws, bs):
    """Forward + backward of mean softmax cross-entropy, by hand."""
    acts = [x]
    h = x
    for i, (w, b) in enumerate(zip(ws, bs)):
        h = h @ w + b
        if i < len(ws) - 1:
            h = np.maximum(h, 0)
        acts.append(h)
    logits = acts[-1]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y]).mean()
    g = p
    g[np.arange(len(y)), y] -= 1
    g /= len(y)
    grads = []
    for i in range(len(ws) - 1, -1, -1):
        grads.append((acts[i].T @ g, g.sum(axis=0)))
        if i:
            g = (g @ ws[i].T) * (acts[i] > 0)
    return loss, grads


def mlp() -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(0)
    ws, bs = mlp_params(rng)
    x = rng.normal(size=(64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    tw = [rt.to_tensor(w, stop_gradient=False) for w in ws]
    tb = [rt.to_tensor(b, stop_gradient=False) for b in bs]
    tx, ty = rt.to_tensor(x), rt.to_tensor(y)

    def rt_forward():
        h = tx
        for i, (w, b) in enumerate(zip(tw, tb)):
            h = F.linear(h, w, b)
            if i < len(tw) - 1:
                h = F.relu(h)
        return h

    def rt_train_step():
        loss = F.cross_entropy(rt_forward(), ty)
        loss.backward()
        for p in tw + tb:
            p.grad = None
        return loss

    np.testing.assert_allclose(rt_forward().numpy(), numpy_forward(x, ws, bs), rtol=1e-4, atol=1e-4)

    def rt_forward_no_grad():
        with rt.no_grad():
            return rt_forward()

    return [
        ("MLP forward (grad tracked)", *compare(lambda: numpy_forward(x, ws, bs), rt_forward)),
        ("MLP forward (no_grad)", *compare(lambda: numpy_forward(x, ws, bs), rt_forward_no_grad)),
        ("MLP forward+backward", *compare(lambda: numpy_train_step(x, y, ws, bs), rt_train_step)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    rows = small_ops() + mlp()
    print(table(rows, "eager overhead (median per call; ratio = autostatic / numpy)"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                [{"case": n, "numpy_s": r, "autostatic_s": g, "ratio": q} for n, r, g, q in rows],
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

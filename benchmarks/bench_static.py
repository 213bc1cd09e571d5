"""Static-program executor time against hand-written NumPy, measured in one run.

    python benchmarks/bench_static.py [--json out.json]

W1: ``if mean(x) > 0: y = relu(x) * 2 else: y = x - 1`` on float32 [4,16], then a 10-step
    tensor-conditioned while loop ``y = y * 0.9 + 0.1``, returning ``sum(y)``.
W2: a 784-256-256-10 MLP on batch 64 whose hidden activation is chosen by a tensor cond
    (``mean(h) > 0`` -> relu else tanh), softmax cross-entropy; forward only, and
    forward + backward + SGD.
W3: a 1000-iteration tensor while loop of ``v = v * 0.999 + 0.001`` on a float32 [8] vector.
Goals (issue 3): at most 2x NumPy on W1, 1.3x on W2, 2x on W3.
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
from autostatic_runtime import static  # noqa: E402

cond, while_loop = static.nn.cond, static.nn.while_loop


# ---- hand-written NumPy references ------------------------------------------------------


def w1_numpy(x):
    y = np.maximum(x, 0) * np.float32(2) if x.mean() > 0 else x - np.float32(1)
    i = 0
    while i < 10:
        y = y * np.float32(0.9) + np.float32(0.1)
        i += 1
    return y.sum()


def w3_numpy(v):
    i = 0
    while i < 1000:
        v = v * np.float32(0.999) + np.float32(0.001)
        i += 1
    return v


def mlp_numpy_forward(x, y, ws, bs):
    h = x @ ws[0] + bs[0]
    h = np.maximum(h, 0) if h.mean() > 0 else np.tanh(h)
    h = np.maximum(h @ ws[1] + bs[1], 0)
    logits = h @ ws[2] + bs[2]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.log(p[np.arange(len(y)), y]).mean()


def mlp_numpy_step(x, y, ws, bs, lr=np.float32(0.01)):
    z1 = x @ ws[0] + bs[0]
    use_relu = z1.mean() > 0
    h1 = np.maximum(z1, 0) if use_relu else np.tanh(z1)
    z2 = h1 @ ws[1] + bs[1]
    h2 = np.maximum(z2, 0)
    logits = h2 @ ws[2] + bs[2]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y]).mean()
    g = p
    g[np.arange(len(y)), y] -= 1
    g /= len(y)
    grads = [None] * 3
    grads[2] = (h2.T @ g, g.sum(0))
    g = (g @ ws[2].T) * (z2 > 0)
    grads[1] = (h1.T @ g, g.sum(0))
    g = g @ ws[1].T
    g = g * (z1 > 0) if use_relu else g * (1 - h1 * h1)
    grads[0] = (x.T @ g, g.sum(0))
    for i, (gw, gb) in enumerate(grads):
        ws[i] -= lr * gw
        bs[i] -= lr * gb
    return loss


# ---- static programs --------------------------------------------------------------------


def build(fn, specs):
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            args = [static.data(n, s, d) for n, s, d in specs]
            out = fn(*args)
    finally:
        rt.disable_static()
    return main, startup, out


def w1_program(x):
    y = cond(rt.mean(x) > 0, lambda: rt.relu(x) * 2.0, lambda: x - 1.0)
    _, y = while_loop(
        lambda i, y: i < 10, lambda i, y: (i + 1, y * 0.9 + 0.1), [rt.full([], 0, "int64"), y]
    )
    return rt.sum(y)


def w3_program(v):
    _, v = while_loop(
        lambda i, v: i < 1000, lambda i, v: (i + 1, v * 0.999 + 0.001), [rt.full([], 0, "int64"), v]
    )
    return v


class CondMLP(rt.nn.Layer):
    def __init__(self, ws, bs):
        super().__init__()
        self.fc = rt.nn.LayerList([rt.nn.Linear(w.shape[0], w.shape[1]) for w in ws])
        for layer, w, b in zip(self.fc, ws, bs):
            layer.weight.set_value(w)
            layer.bias.set_value(b)

    def forward(self, x, y):
        h = self.fc[0](x)
        h = cond(rt.mean(h) > 0, lambda: F.relu(h), lambda: rt.tanh(h))
        h = F.relu(self.fc[1](h))
        return F.cross_entropy(self.fc[2](h), y)


def mlp_data(rng):
    """W2's weights, biases and batch: (ws, bs, x, y)."""
    sizes = [784, 256, 256, 10]
    ws = [
        (rng.normal(size=(i, o)) * np.sqrt(2 / i)).astype(np.float32)
        for i, o in zip(sizes, sizes[1:])
    ]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    return ws, bs, rng.normal(size=(64, 784)).astype(np.float32), rng.integers(0, 10, 64)


def workloads():
    rng = np.random.default_rng(0)
    exe = static.Executor()
    rows = []

    x = rng.normal(size=(4, 16)).astype(np.float32)
    main, _, out = build(w1_program, [("x", [4, 16], "float32")])
    feed = {"x": x}
    np.testing.assert_allclose(exe.run(main, feed, [out])[0], w1_numpy(x), rtol=1e-5)
    rows.append(
        (
            "W1 cond + 10-step while",
            *compare(lambda: w1_numpy(x), lambda: exe.run(main, feed, [out])),
        )
    )

    ws, bs, xb, yb = mlp_data(rng)
    net = CondMLP(ws, bs)
    main, startup, loss = build(net, [("x", [64, 784], "float32"), ("y", [64], "int64")])
    exe.run(startup)
    feed = {"x": xb, "y": yb}
    np.testing.assert_allclose(
        exe.run(main, feed, [loss])[0], mlp_numpy_forward(xb, yb, ws, bs), rtol=1e-4
    )
    rows.append(
        (
            "W2 MLP forward",
            *compare(
                lambda: mlp_numpy_forward(xb, yb, ws, bs), lambda: exe.run(main, feed, [loss])
            ),
        )
    )

    main, startup, loss = training_program(ws, bs)
    scope = static.Scope()
    exe.run(startup, scope=scope)
    wn, bn = [w.copy() for w in ws], [b.copy() for b in bs]
    for _ in range(3):
        a = exe.run(main, feed, [loss], scope=scope)[0]
        b = mlp_numpy_step(xb, yb, wn, bn)
        np.testing.assert_allclose(a, b, rtol=1e-4)
    rows.append(
        (
            "W2 MLP forward+backward+SGD",
            *compare(
                lambda: mlp_numpy_step(xb, yb, wn, bn),
                lambda: exe.run(main, feed, [loss], scope=scope),
            ),
        )
    )

    v = rng.normal(size=(8,)).astype(np.float32)
    main, _, out = build(w3_program, [("v", [8], "float32")])
    feed = {"v": v}
    np.testing.assert_allclose(exe.run(main, feed, [out])[0], w3_numpy(v), rtol=1e-5)
    rows.append(
        ("W3 1000-step while", *compare(lambda: w3_numpy(v), lambda: exe.run(main, feed, [out])))
    )
    return rows


def training_program(ws, bs):
    """W2 forward + backward + SGD as one program: (main, startup, loss)."""
    net = CondMLP(ws, bs)
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            loss = net(static.data("x", [64, 784], "float32"), static.data("y", [64], "int64"))
            rt.optimizer.SGD(0.01).minimize(loss)
    finally:
        rt.disable_static()
    return main, startup, loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    rows = workloads()
    print(table(rows, "static executor (median per call; ratio = autostatic / numpy)"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                [{"case": n, "numpy_s": r, "autostatic_s": g, "ratio": q} for n, r, g, q in rows],
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()

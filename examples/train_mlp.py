"""Train an MLP and a small CNN on synthetic data; the loss must drop. The CNN is trained
twice: eagerly, and converted with ``autostatic.to_static`` (a cached static program trained
through ``loss.backward()``), which is then saved, loaded back and checked to agree.

    python examples/train_mlp.py            # full run
    python examples/train_mlp.py --quick    # a few steps (used by the tests)

The data is generated here (no downloads): Gaussian blobs for the MLP, and 12x12 images of
horizontal vs vertical vs diagonal strokes for the CNN.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import autostatic
import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from autostatic_runtime import nn


def blobs(n: int, dim: int, classes: int, rng: np.random.Generator):
    centers = rng.normal(0, 3.0, (classes, dim))
    labels = rng.integers(0, classes, n)
    x = centers[labels] + rng.normal(0, 1.0, (n, dim))
    return x.astype(np.float32), labels.astype(np.int64)


def strokes(n: int, size: int, rng: np.random.Generator):
    """Images with one horizontal (0), vertical (1) or diagonal (2) stroke plus noise."""
    x = rng.normal(0, 0.3, (n, 1, size, size)).astype(np.float32)
    labels = rng.integers(0, 3, n)
    for i, c in enumerate(labels):
        k = rng.integers(2, size - 2)
        if c == 0:
            x[i, 0, k, :] += 2.0
        elif c == 1:
            x[i, 0, :, k] += 2.0
        else:
            idx = np.arange(size)
            x[i, 0, idx, idx] += 2.0
    return x, labels.astype(np.int64)


class MLP(nn.Layer):
    def __init__(self, dim: int, hidden: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.relu(self.fc2(h))
        return self.out(h)


class SmallCNN(nn.Layer):
    def __init__(self, classes: int):
        super().__init__()
        self.conv1 = nn.Conv2D(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2D(8)
        self.pool = nn.MaxPool2D(2)
        self.conv2 = nn.Conv2D(8, 16, 3, padding=1)
        self.gap = nn.AdaptiveAvgPool2D(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        h = self.pool(F.relu(self.bn1(self.conv1(x))))
        h = F.relu(self.conv2(h))
        return self.fc(self.flatten(self.gap(h)))


def progress(label: str, step: int, total: int, loss: float, started: float) -> None:
    width = 30
    done = int(width * step / total)
    rate = step / max(time.perf_counter() - started, 1e-9)
    bar = "#" * done + "." * (width - done)
    end = "\n" if step == total else ""
    print(
        f"\r{label:4s} [{bar}] {step:4d}/{total} loss {loss:.4f} ({rate:.0f} it/s)",
        end=end,
        flush=True,
    )


def train(
    label: str, model: nn.Layer, x: np.ndarray, y: np.ndarray, steps: int, batch: int, lr: float
) -> tuple[float, float]:
    opt = rt.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(1)
    first = last = float("nan")
    started = time.perf_counter()
    model.train()
    for step in range(1, steps + 1):
        idx = rng.integers(0, len(x), batch)
        logits = model(rt.to_tensor(x[idx]))
        loss = loss_fn(logits, rt.to_tensor(y[idx]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        last = float(loss)
        first = last if step == 1 else first
        if step % 5 == 0 or step == steps:
            progress(label, step, steps, last, started)
    model.eval()
    with rt.no_grad():
        pred = rt.argmax(model(rt.to_tensor(x[:512])), axis=-1).numpy()
    print(f"{label}: loss {first:.4f} -> {last:.4f}, accuracy {np.mean(pred == y[:512]):.1%}")
    return first, last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps only")
    args = parser.parse_args(argv)
    rt.seed(0)
    rng = np.random.default_rng(0)
    mlp_steps, cnn_steps = (30, 20) if args.quick else (300, 150)

    x, y = blobs(4096, 20, 4, rng)
    mlp_first, mlp_last = train("mlp", MLP(20, 64, 4), x, y, mlp_steps, 64, 1e-2)
    xi, yi = strokes(2048, 12, rng)
    cnn_first, cnn_last = train("cnn", SmallCNN(3), xi, yi, cnn_steps, 32, 1e-2)

    spec = [autostatic.InputSpec([None, 1, 12, 12], "float32", "image")]
    cnn = autostatic.to_static(SmallCNN(3), input_spec=spec)
    st_first, st_last = train("cnn (to_static)", cnn, xi, yi, cnn_steps, 32, 1e-2)
    agree = save_and_reload(cnn, spec, xi[:64])

    ok = mlp_last < 0.5 * mlp_first and cnn_last < 0.7 * cnn_first and st_last < 0.7 * st_first
    print("loss dropped for both models" if ok else "LOSS DID NOT DROP")
    return 0 if ok and agree else 1


def save_and_reload(model: nn.Layer, spec: list, x: np.ndarray) -> bool:
    """Save the static model, load it back (no source needed) and compare outputs."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cnn")
        autostatic.save(model, path, input_spec=spec)
        loaded = autostatic.load(path)
        model.eval()
        with rt.no_grad():
            want, got = model(rt.to_tensor(x)).numpy(), loaded(rt.to_tensor(x)).numpy()
    agree = np.allclose(want, got, rtol=1e-4, atol=1e-5)
    print(f"saved, loaded back: outputs {'agree' if agree else 'DIFFER'}")
    return agree


if __name__ == "__main__":
    sys.exit(main())

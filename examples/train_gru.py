"""The main job: train a GRU whose loop stops when every sequence has ended, with the whole
training step compiled, then save it, load it in a fresh process without the source, and
export it to ONNX.

    python -m autostatic run examples/train_gru.py            # through the import hook
    python -m autostatic run examples/train_gru.py --quick    # a few steps (the tests)

The model lives in ``stopping_gru.py``, a module marked ``# autostatic: enable``: imported
under the hook, its tensor ``while`` becomes a ``while`` op when the model is traced. The
same training step (forward, ``loss.backward()``, ``opt.step()``, ``opt.clear_grad()``) runs
three times from the same start on the same batches: eagerly, compiled by
``autostatic.to_static`` on the default executor, and compiled as one XLA computation
(``backend="xla"``); the losses agree and the steps per second are compared. The trained
model is then saved (``autostatic.save``), loaded and run by a fresh Python process that
cannot import the model's source, and exported to ONNX and checked in ONNX Runtime.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import autostatic

autostatic.install()  # (python -m autostatic run installed it already; this keeps its settings)

import stopping_gru  # noqa: E402  (marked: converted as it is imported)

import autostatic_runtime as rt  # noqa: E402
from autostatic import InputSpec  # noqa: E402

LENGTH, BATCH = 12, 32


def progress(label: str, step: int, total: int, loss: float, started: float) -> None:
    width = 30
    done = int(width * step / total)
    rate = step / max(time.perf_counter() - started, 1e-9)
    bar = "#" * done + "." * (width - done)
    end = "\n" if step == total else ""
    print(
        f"\r{label:9s} [{bar}] {step:4d}/{total} loss {loss:.4f} ({rate:.0f} steps/s)",
        end=end,
        flush=True,
    )


def train(label: str, backend: str | None, batches: list) -> tuple[list, object, float, float]:
    """Train a fresh model on ``batches``: eagerly (``backend='eager'``) or with the step
    compiled by ``to_static``. Returns (losses, model, first call s, steps/s after it)."""
    rt.seed(0)
    model = stopping_gru.StoppingGRU()
    opt = rt.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    step = stopping_gru.train_step
    if backend != "eager":
        step = autostatic.to_static(step, backend=backend)
    losses = []
    started = first = time.perf_counter()
    for i, (tokens, labels) in enumerate(batches, 1):
        losses.append(float(step(model, tokens, labels, opt)))
        if i == 1:
            first = time.perf_counter() - started
            started = time.perf_counter()
        if i % 10 == 0 or i == len(batches):
            progress(label, i, len(batches), losses[-1], started)
    rate = (len(batches) - 1) / max(time.perf_counter() - started, 1e-9)
    return losses, model, first, rate


def fresh_process_check(model, tokens: np.ndarray, tmp: str) -> bool:
    """Save the model, then load and run it in a new Python process that cannot import the
    model's source; compare its outputs with this process's."""
    prefix = os.path.join(tmp, "stopping_gru")
    autostatic.save(model, prefix, input_spec=[InputSpec([None, LENGTH], "int64", "tokens")])
    model.eval()
    with rt.no_grad():
        want = model(rt.to_tensor(tokens)).numpy()
    np.save(os.path.join(tmp, "tokens.npy"), tokens)
    code = (
        "import sys, numpy as np, autostatic, autostatic_runtime as rt\n"
        "loaded = autostatic.load(sys.argv[1])\n"
        "print(np.asarray(loaded(rt.to_tensor(np.load(sys.argv[2]))).numpy()).tolist())\n"
        "assert 'stopping_gru' not in sys.modules\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)  # the project, not examples/
    env.pop("AUTOSTATIC_HOOK", None)
    done = subprocess.run(
        [sys.executable, "-c", code, prefix, os.path.join(tmp, "tokens.npy")],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        print(done.stderr)
        return False
    got = np.array(eval(done.stdout.strip().splitlines()[-1]), dtype=np.float32)  # noqa: S307
    agree = np.allclose(got, want, rtol=1e-4, atol=1e-5)
    sizes = [os.path.getsize(prefix + ext) for ext in (".pdmodel", ".pdiparams")]
    print(
        f"saved ({sizes[0]:,} + {sizes[1]:,} bytes), loaded in a fresh process without the "
        f"source: outputs {'agree' if agree else 'DIFFER'}"
    )
    return agree


def onnx_check(model, tokens: np.ndarray, tmp: str) -> bool:
    """Export to ONNX (the while loop becomes a Loop) and run it in ONNX Runtime."""
    try:
        import onnxruntime
    except ImportError:
        print("onnx: skipped (pip install -e '.[onnx]')")
        return True
    path = os.path.join(tmp, "stopping_gru.onnx")
    autostatic.onnx.export(model, path, input_spec=[InputSpec([None, LENGTH], "int64", "tokens")])
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: tokens})
    with rt.no_grad():
        want = model(rt.to_tensor(tokens)).numpy()
    agree = np.allclose(got, want, rtol=1e-4, atol=1e-5)
    print(f"exported to ONNX, run in ONNX Runtime: outputs {'agree' if agree else 'DIFFER'}")
    return agree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps only")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    tokens, labels = stopping_gru.sequences(2048, LENGTH, rng)
    steps = 30 if args.quick else 200
    picks = [rng.integers(0, len(tokens), BATCH) for _ in range(steps)]
    batches = [(rt.to_tensor(tokens[i]), rt.to_tensor(labels[i])) for i in picks]

    backends = [("eager", "eager"), ("compiled", None)]
    try:
        import jax  # noqa: F401

        backends.append(("xla", "xla"))
    except ImportError:
        print("xla: skipped (pip install -e '.[xla]')")
    runs = {label: train(label, backend, batches) for label, backend in backends}

    eager = runs["eager"][0]
    print()
    for label, (losses, _, first, rate) in runs.items():
        same = np.allclose(losses, eager, rtol=1e-3, atol=1e-5)
        print(
            f"{label:9s} {rate:7.1f} steps/s ({rate / runs['eager'][3]:4.1f}x eager), first "
            f"step {first * 1e3:6.0f} ms, loss {losses[0]:.4f} -> {losses[-1]:.4f}"
            + ("" if label == "eager" else f", losses {'equal' if same else 'DIFFER'} to eager")
        )
    ok = all(
        np.allclose(losses, eager, rtol=1e-3, atol=1e-5) for losses, *_ in runs.values()
    ) and np.mean(eager[-10:]) < 0.5 * eager[0]
    print("the loss dropped, the same way on every path" if ok else "TRAINING DIFFERS")

    model = runs[list(runs)[-1]][1]  # the last one trained (XLA when installed)
    check = tokens[:64]
    with tempfile.TemporaryDirectory() as tmp:
        ok = fresh_process_check(model, check, tmp) and ok
        ok = onnx_check(model, check, tmp) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Train the small CNN of ``train_mlp.py``, export it to ONNX with a dynamic batch, and serve
it with ONNX Runtime: the predictions must equal autostatic's (needs the ``onnx`` extra).

    python examples/deploy_onnx.py            # train, export, compare, time one batch
    python examples/deploy_onnx.py --quick    # a few training steps (used by the tests)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_mlp import SmallCNN, strokes, train  # noqa: E402

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few training steps only")
    args = parser.parse_args(argv)
    try:
        import onnxruntime as ort
    except ImportError:
        print("this example needs the onnx extra: pip install -e '.[onnx]'")
        return 1
    rt.seed(0)
    rng = np.random.default_rng(0)
    x, y = strokes(1024, 12, rng)
    model = SmallCNN(3)
    train("cnn", model, x, y, 20 if args.quick else 150, 32, 0.01)

    with tempfile.TemporaryDirectory() as tmp:
        spec = [autostatic.InputSpec([None, 1, 12, 12], "float32", "image")]
        path = os.path.join(tmp, "cnn")
        autostatic.onnx.export(model, path, input_spec=spec)  # writes cnn.onnx
        session = ort.InferenceSession(path + ".onnx", providers=["CPUExecutionProvider"])

    model.eval()
    for batch in (1, 7, 256):  # the batch dim is symbolic in the ONNX model
        images = x[:batch]
        (logits,) = session.run(None, {"image": images})
        expected = model(rt.to_tensor(images)).numpy()
        np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)
    print("ONNX Runtime's logits equal autostatic's at batch sizes 1, 7 and 256")

    images = x[:256]
    started = time.perf_counter()
    for _ in range(20):
        session.run(None, {"image": images})
    per_call = (time.perf_counter() - started) / 20
    accuracy = np.mean(np.argmax(session.run(None, {"image": images})[0], -1) == y[:256])
    print(f"ONNX Runtime: {per_call * 1e3:.2f} ms per batch of 256, accuracy {accuracy:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

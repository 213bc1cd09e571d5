"""Helpers: export a program in memory and run it in ONNX Runtime."""

from __future__ import annotations

import numpy as np
import onnxruntime

from autostatic.onnx.exporter import ProgramSpec, to_model

__autostatic_internal__ = True


def session(model) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def run_model(model, feeds: dict) -> list[np.ndarray]:
    sess = session(model)
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: np.asarray(feeds[n]) for n in names})


def export_program(program, feeds: dict, outputs: list, params=None, opset: int = 17, dynamic=()):
    """The ONNX model of ``program`` fed by ``feeds`` (name -> array) fetching ``outputs``."""
    inputs = []
    for name, value in feeds.items():
        shape = [None if i in dynamic else d for i, d in enumerate(np.shape(value))]
        inputs.append((name, shape, str(np.asarray(value).dtype)))
    spec = ProgramSpec(program, inputs, [v.name for v in outputs], dict(params or {}))
    return to_model(spec, opset)


def assert_close(got, expected, label: str = "") -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype} != {expected.dtype}"
    tol = {np.dtype("float32"): (2e-5, 2e-5), np.dtype("float64"): (1e-9, 1e-10)}
    rtol, atol = tol.get(got.dtype, (0, 0))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=label)

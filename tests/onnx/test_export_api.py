"""Export errors (an op without a lowering, a bad opset) and the ``export`` command."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import autostatic
from autostatic import InputSpec
from autostatic.hook import cli
from autostatic_runtime.errors import ExportError
from tests.onnx import models
from tests.onnx.ort import assert_close, run_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "tests", "onnx", "models.py")


def _line_of(text: str) -> int:
    with open(MODELS) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_ops_without_lowering_are_all_named_with_their_lines_and_nothing_is_written(tmp_path):
    with pytest.raises(ExportError) as info:
        autostatic.onnx.export(models.uses_unsupported, str(tmp_path / "m"), [InputSpec([4])])
    message = str(info.value)
    assert "cholesky" in message and "inverse" in message
    line = _line_of("rt.inverse(rt.cholesky(")
    assert message.count(f"models.py:{line} (uses_unsupported)") == 2
    assert "no ONNX operator" in message
    assert os.listdir(tmp_path) == []


def test_a_bad_opset_is_refused(tmp_path):
    with pytest.raises(ExportError, match="opset_version"):
        autostatic.onnx.export(models.nested_control, str(tmp_path / "m"), opset_version=11)
    assert os.listdir(tmp_path) == []


def _saved(tmp_path):
    net = models.SmallCNN()
    net(autostatic.runtime.randn([2, 3, 8, 8]))
    prefix = str(tmp_path / "cnn")
    autostatic.save(net, prefix, input_spec=[InputSpec([None, 3, 8, 8], "float32", "image")])
    return prefix


def test_export_command_converts_a_saved_model(tmp_path, capsys):
    prefix = _saved(tmp_path)
    out = str(tmp_path / "out" / "cnn.onnx")
    assert cli.main(["export", prefix + ".pdmodel", out, "--opset", "18"]) == 0
    assert "wrote" in capsys.readouterr().out
    loaded = autostatic.load(prefix)
    x = np.random.default_rng(0).standard_normal((7, 3, 8, 8)).astype("float32")
    import onnx

    assert_close(run_model(onnx.load(out), {"image": x})[0], loaded(x).numpy(), "cli")


def test_export_command_errors_are_one_line(tmp_path, capsys):
    assert cli.main(["export", str(tmp_path / "missing"), str(tmp_path / "o.onnx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autostatic: error: no saved model") and "Traceback" not in err
    assert not (tmp_path / "o.onnx").exists()


def test_importing_the_packages_does_not_import_onnx():
    code = (
        "import sys, autostatic, autostatic_runtime, autostatic.onnx, autostatic.jit; "
        "assert 'onnx' not in sys.modules and 'onnxruntime' not in sys.modules"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def test_python_dash_m_autostatic_export(tmp_path):
    prefix = _saved(tmp_path)
    out = str(tmp_path / "cnn.onnx")
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "autostatic", "export", prefix, out],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    import onnx

    onnx.checker.check_model(onnx.load(out), full_check=True)


def test_dead_code_prints_and_asserts_do_not_block_an_export(tmp_path):
    model = autostatic.onnx.export(
        models.with_dead_code, str(tmp_path / "m"), [InputSpec([None, 4], "float32", "x")]
    )
    program = (
        autostatic.to_static(models.with_dead_code)
        .get_concrete_program(InputSpec([None, 4], "float32"))
        .main_program
    )
    built = {op.type for block in program.blocks for op in block.ops}
    assert {"inverse", "cumprod", "print", "assert", "cond"} <= built  # all traced, then pruned
    assert "If" in {n.op_type for n in model.graph.node}
    for sign in (1.0, -1.0):
        x = np.full((3, 4), sign, "float32")
        expected = models.with_dead_code(autostatic.runtime.to_tensor(x)).numpy()
        assert_close(run_model(model, {"x": x})[0], expected, f"sign {sign}")


def test_unknown_input_shapes_are_a_clear_error(tmp_path):
    from autostatic.jit.program_cache import ToStaticError

    with pytest.raises(ToStaticError, match="input shapes are unknown.*input_spec"):
        autostatic.onnx.export(models.never_traced, str(tmp_path / "m"))
    assert os.listdir(tmp_path) == []


def test_the_deployment_example_runs():
    example = os.path.join(ROOT, "examples", "deploy_onnx.py")
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, example, "--quick"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "logits equal autostatic's" in done.stdout

"""Project-level checks: the README's main job runs, the API reference is current."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_main_example_trains_and_the_loss_drops():
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "train_mlp.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loss dropped for both models" in proc.stdout


def test_the_readme_main_job_trains_through_the_hook_saves_loads_and_exports():
    """``python -m autostatic run examples/train_gru.py`` (quick): the marked model module
    converted on import, the compiled step's losses equal eager's on every path, the model
    run by a fresh process without the source and by ONNX Runtime."""
    proc = subprocess.run(
        [sys.executable, "-m", "autostatic", "run", "examples/train_gru.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "the loss dropped, the same way on every path" in out
    assert out.count("losses equal to eager") == 2  # compiled, and compiled by XLA
    assert "loaded in a fresh process without the source: outputs agree" in out
    assert "run in ONNX Runtime: outputs agree" in out


def test_api_reference_is_generated_from_the_current_code():
    spec = importlib.util.spec_from_file_location(
        "gen_api_docs", os.path.join(ROOT, "tools", "gen_api_docs.py")
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(gen.OUT) as f:
        assert f.read() == gen.render(), "docs/api.md is stale: run python tools/gen_api_docs.py"


def test_runtime_does_not_import_the_compiler_or_gast():
    code = (
        "import sys, autostatic_runtime as rt; rt.ones([2]) + 1; "
        "bad = [m for m in sys.modules if m == 'gast' or m.startswith('autostatic.')"
        " or m == 'autostatic']; print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_readmes_random_search_profile_loads():
    """``HYPOTHESIS_PROFILE=explore python -m pytest ...`` (README) starts and searches at
    random: the profile is registered before the first conftest loads it."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
         os.path.join(ROOT, "tests", "compiler", "pyct", "test_anno_symbols.py")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "HYPOTHESIS_PROFILE": "explore"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr

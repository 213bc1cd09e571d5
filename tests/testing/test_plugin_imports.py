"""The pytest plugin is loaded in every pytest run where autostatic is installed (issue 14):
a plain run must not pay for NumPy, the runtime, hypothesis or the converter."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PLAIN_TEST = """\
import sys


def test_plain():
    heavy = ("numpy", "autostatic_runtime", "autostatic.jit", "hypothesis", "gast")
    print("LOADED", "autostatic.testing.pytest_plugin" in sys.modules)
    print("HEAVY", [m for m in heavy if m in sys.modules])
"""


def _run(tmp_path, *args):
    (tmp_path / "test_plain.py").write_text(PLAIN_TEST)
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("CI", None)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         "-p", "autostatic.testing.pytest_plugin", *args, "test_plain.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return lines


def test_a_plain_run_imports_nothing_heavy(tmp_path):
    lines = _run(tmp_path)
    assert lines["LOADED"] == "True"
    assert lines["HEAVY"] == "[]"


def test_an_autostatic_option_still_works(tmp_path):
    lines = _run(tmp_path, "--autostatic-max-examples", "3")
    assert lines["LOADED"] == "True"


def test_import_autostatic_is_light():
    code = (
        "import sys, autostatic\n"
        "print([m for m in ('numpy', 'autostatic_runtime', 'gast') if m in sys.modules])\n"
        "autostatic.InputSpec; print('numpy' in sys.modules, 'gast' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[:2] == ["[]", "True False"]

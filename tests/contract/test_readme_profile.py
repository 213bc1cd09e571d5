"""The README's test command is deterministic (the suite's hypothesis profile is
derandomized by default), randomised exploration is a separate opt-in, and the dataflow
property test (which once found the ``del``-in-``for...else`` unsoundness) passes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env(**extra):
    e = dict(os.environ)
    for k in ("HYPOTHESIS_PROFILE", "CI", "PYCT_EXPLORE", "PYCT_EXAMPLES"):
        e.pop(k, None)
    e["PYTHONPATH"] = ROOT
    e.update(extra)
    return e


@pytest.mark.skipif("HYPOTHESIS_PROFILE" in os.environ, reason="a profile was chosen")
def test_suite_profile_is_derandomized_in_process():
    assert settings.default.derandomize is True
    assert settings.default.database is None


def _probe(**env):
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:randomly",
         "tests/contract/probe_profile.py"],
        cwd=ROOT, env=_env(**env), capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return [line for line in p.stdout.splitlines() if line.startswith("PROFILE")][0]


def test_default_and_ci_profiles_are_derandomized_explore_is_not():
    assert "derandomize=True" in _probe()
    assert "derandomize=True" in _probe(CI="1")
    assert "derandomize=False" in _probe(HYPOTHESIS_PROFILE="explore")


def test_readme_documents_both_commands():
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert "python -m pytest" in readme
    assert "HYPOTHESIS_PROFILE=explore" in readme
    assert "PYCT_EXPLORE=1" in readme


def test_dataflow_property_tests_pass_deterministically():
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
         "tests/compiler/pyct/test_properties.py"],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stdout[-3000:]

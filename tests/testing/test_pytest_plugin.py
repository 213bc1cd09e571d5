"""The pytest plugin on sample projects, each run by pytest in a subprocess (pytester).

The plugin is loaded explicitly (``-p autostatic.testing.pytest_plugin``) so these tests do
not depend on the installed entry-point metadata; the children get this checkout on
``PYTHONPATH``.
"""

from __future__ import annotations

import os
import tomllib

import pytest

pytest_plugins = ["pytester"]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = ("-p", "autostatic.testing.pytest_plugin", "-p", "no:cacheprovider", "-p", "no:xdist")

MODEL = """
import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec


@autostatic.to_static(input_spec=[InputSpec([None, 3], "float32", "x")])
def step(x):
    h = rt.tanh(x)
    if rt.mean(h) > 0:
        h = h * 2
    else:
        h = h - 1
    return h


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    @autostatic.to_static(input_spec=[InputSpec([None, 3], "float32", "x")])
    def forward(self, x):
        y = self.fc(x)
        if rt.sum(y) > 0:
            y = rt.nn.functional.relu(y)
        return y


def helper(x):  # not a to_static function: not collected
    return x
"""

TEST_MODEL = """
import pytest
from autostatic import InputSpec
from model import step


@pytest.mark.autostatic(specs=[InputSpec([None, 3], "float32", "x")], max_examples=15)
def test_step(autostatic_equivalence):
    result = autostatic_equivalence(step.dygraph_function)
    assert result.examples >= 1
"""

# A test-only mis-conversion: every tensor-dependent `if` runs the wrong branch.
BROKEN_CONFTEST = """
import autostatic_runtime.convert_ops as convert_ops

_original = convert_ops.convert_ifelse


def _swapped(pred, true_fn, false_fn, *args, **kwargs):
    return _original(pred, false_fn, true_fn, *args, **kwargs)


convert_ops.convert_ifelse = _swapped
"""


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT, str(pytester.path)]))
    monkeypatch.delenv("AUTOSTATIC_HOOK", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    pytester.makefile(".ini", pytest="[pytest]\n")
    return pytester


def _run(pytester, *args):
    return pytester.runpytest_subprocess(*PLUGIN, *args, timeout=300)


def test_a_correct_model_passes(project):
    project.makepyfile(model=MODEL, test_model=TEST_MODEL)
    result = _run(project, "-q")
    result.assert_outcomes(passed=1)


def test_a_broken_conversion_fails_with_a_readable_report_naming_the_line(project):
    project.makepyfile(model=MODEL, test_model=TEST_MODEL, conftest=BROKEN_CONFTEST)
    result = _run(project, "-q")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the static program disagrees with the original function" in out
    assert "Example (shrunk):" in out and "x = array(" in out
    assert "max abs difference" in out
    assert "First diverging op: cond at model.py:9 (in step)" in out
    assert ">    9 |     if rt.mean(h) > 0:" in out
    assert "convert_ifelse" in out  # the converted code at that line
    assert "E       Example (shrunk):" in out  # printed as pytest prints an assertion
    assert "def assert_equivalent(" not in out  # autostatic's own frames are hidden


def test_check_collects_and_tests_decorated_functions(project):
    project.makepyfile(model=MODEL)
    result = _run(project, "-v", "--autostatic-check", "model", "--autostatic-max-examples", "5")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*model.step PASSED*", "*model.Net.forward PASSED*"])
    assert "helper" not in result.stdout.str()


def test_check_reports_a_broken_conversion_at_the_users_line(project):
    project.makepyfile(model=MODEL, conftest=BROKEN_CONFTEST)
    result = _run(project, "--autostatic-check", "model", "--autostatic-max-examples", "20")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "First diverging op: cond at model.py:9" in out
    assert "First diverging op: cond at model.py:24 (in forward)" in out


def test_ini_settings_and_the_hook_in_initial_conftests(project):
    # The conftest imports a marked module: the hook must already be installed then.
    project.makepyfile(
        mymodel="# autostatic: enable\ndef f(x):\n    if x:\n        return 1\n    return 0\n",
        conftest="import mymodel\n",
        test_hooked=(
            'import mymodel\n\ndef test_converted():\n    assert "__jst__" in vars(mymodel)\n'
        ),
    )
    project.makefile(
        ".ini", pytest="[pytest]\nautostatic_hook = true\nautostatic_max_examples = 3\n"
    )
    _run(project, "-q").assert_outcomes(passed=1)


def test_without_options_the_hook_is_not_installed(project):
    project.makepyfile(
        mymodel="# autostatic: enable\ndef f(x):\n    return x\n",
        test_plain='import mymodel\n\ndef test_plain():\n    assert "_jst" not in vars(mymodel)\n',
    )
    _run(project, "-q").assert_outcomes(passed=1)


def test_profile_option_loads_the_hypothesis_profile(project):
    project.makepyfile(
        test_profile="""
        from hypothesis import settings

        def test_profile():
            assert settings().derandomize and settings().deadline is None
        """
    )
    _run(project, "-q", "--autostatic-profile", "ci").assert_outcomes(passed=1)


def test_the_entry_point_is_declared():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    points = meta["project"]["entry-points"]["pytest11"]
    assert points == {"autostatic.testing.pytest_plugin": "autostatic.testing.pytest_plugin"}


def test_check_reports_a_layer_it_cannot_build_and_an_import_error(project):
    project.makepyfile(
        sized="""
        import autostatic
        import autostatic_runtime as rt
        from autostatic import InputSpec


        class Sized(rt.nn.Layer):
            def __init__(self, n):
                super().__init__()
                self.fc = rt.nn.Linear(n, 2)

            @autostatic.to_static(input_spec=[InputSpec([None, 3])])
            def forward(self, x):
                return self.fc(x)
        """
    )
    result = _run(project, "-q", "--autostatic-check", "sized", "--autostatic-check", "nowhere")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "cannot build Sized() without arguments" in out
    assert "cannot import nowhere: ModuleNotFoundError" in out


def test_ci_selects_the_ci_profile_for_checks(project, monkeypatch):
    monkeypatch.setenv("CI", "1")
    project.makepyfile(
        test_ci="""
        from hypothesis import settings
        from autostatic.testing import DEFAULTS

        def test_ci():
            assert DEFAULTS["profile"] == "ci"  # assert_equivalent's parent settings
            ci = settings.get_profile("ci")  # hypothesis's own, or the plugin's
            assert ci.derandomize and ci.deadline is None
        """
    )
    _run(project, "-q").assert_outcomes(passed=1)


def test_include_option_converts_modules_a_conftest_imports(project):
    project.makepyfile(
        unmarked="def f(x):\n    if x:\n        return 1\n    return 0\n",
        conftest="import unmarked\n",
        test_inc=(
            'import unmarked\n\ndef test_converted():\n    assert "__jst__" in vars(unmarked)\n'
        ),
    )
    _run(project, "-q", "--autostatic-include", "unmarked").assert_outcomes(passed=1)

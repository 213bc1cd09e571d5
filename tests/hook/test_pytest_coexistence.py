"""Subprocesses: the hook and pytest's assertion rewriting together, and xdist workers."""

from __future__ import annotations

import glob
import os

from tests.hook.conftest import run, write_files

LIB = """
# autostatic: enable
def double(x):
    if x:
        return x * 2
    return 0
"""

MARKED_TEST = """
# autostatic: enable
import lib


def test_converted_and_rewritten():
    assert "__jst__" in globals() and "__jst__" in vars(lib)


def test_assertion_is_rewritten():
    x = 3
    assert lib.double(x) + 1 == 5
"""

PLAIN_TEST = """
def test_plain_rewritten():
    y = [1, 2]
    assert len(y) == 3
"""


def _project(tmp_path, conftest: str | None):
    files = {
        "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n",
        "lib.py": LIB,
        "test_marked.py": MARKED_TEST,
        "test_plain.py": PLAIN_TEST,
    }
    if conftest is not None:
        files["conftest.py"] = conftest
    write_files(tmp_path, files)


def _check(proc):
    out = proc.stdout + proc.stderr
    assert "2 failed, 1 passed" in out, out
    assert "assert (6 + 1) == 5" in out  # the marked test module is rewritten
    assert "+  where 6 = <function double" in out
    assert "assert 2 == 3" in out and "+  where 2 = len([1, 2])" in out
    assert "PytestAssertRewriteWarning" not in out and "already imported" not in out


def test_a_conftest_install_keeps_assertion_rewriting(tmp_path):
    _project(tmp_path, "import autostatic\nautostatic.install()\n")
    _check(run(["-m", "pytest", "-q", "-W", "error::pytest.PytestAssertRewriteWarning"], tmp_path))
    assert glob.glob(str(tmp_path / "__pycache__" / "test_marked.*-autostatic-*-pytest-*.pyc"))


def test_autostatic_run_dash_m_pytest(tmp_path):
    _project(tmp_path, None)
    _check(run(["-m", "autostatic", "run", "-m", "pytest", "-q"], tmp_path))


def test_xdist_workers_share_one_cache(tmp_path):
    files = {
        "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n",
        "conftest.py": "import autostatic\nautostatic.install()\n",
        "lib.py": LIB,
    }
    for i in range(4):
        files[f"test_w{i}.py"] = (
            "import lib\n\ndef test_it():\n"
            "    assert lib.double(2) == 4 and '__jst__' in vars(lib)\n"
        )
    write_files(tmp_path, files)
    proc = run(["-m", "pytest", "-q", "-n", "2"], tmp_path, timeout=240)
    assert "4 passed" in proc.stdout, proc.stdout + proc.stderr
    names = os.listdir(tmp_path / "__pycache__")
    assert len([n for n in names if n.startswith("lib.") and "autostatic" in n]) == 1
    assert not [n for n in names if n.endswith(".tmp")]

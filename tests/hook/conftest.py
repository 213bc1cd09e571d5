"""Helpers for the import hook's tests: sample packages in ``tmp_path`` and subprocesses.

Subprocesses get this checkout on ``PYTHONPATH`` (so they test this code whether or not the
project is installed) and may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_files(base, files: dict[str, str]) -> None:
    """Write ``{"pkg/mod.py": source}`` under ``base`` (sources are dedented)."""
    for rel, text in files.items():
        path = os.path.join(str(base), rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).lstrip("\n"))


def settle(*paths) -> None:
    """Wait (under 0.1 s after a write) until the files changed long enough ago that the
    cache records their source key (``cache.settled``): a warm import then reads no source."""
    from autostatic.hook import cache

    while not all(cache.settled(cache.source_key(str(p))) for p in paths):
        time.sleep(0.01)


def child_env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("AUTOSTATIC_HOOK", None)
    env.pop("AUTOSTATIC_STRICT", None)
    path = extra.pop("PYTHONPATH", None) or env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, path) if p)
    env.update(extra)
    return env


def run(args, cwd, timeout=120, **env) -> subprocess.CompletedProcess:
    """``python *args`` in ``cwd``; ``args`` as a string is ``-c`` code (dedented)."""
    if isinstance(args, str):
        args = ["-c", textwrap.dedent(args)]
    return subprocess.run(
        [sys.executable, *args],
        cwd=str(cwd),
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


MARKED = '''
# autostatic: enable
"""A marked module."""
from __future__ import annotations


def sign(x):
    if x > 0:
        y = 1
    else:
        y = -1
    return y


def count(n):
    total = 0
    while n > 0:
        total += n
        n -= 1
    return total


class Model:
    def forward(self, x):
        return x and x * 2
'''


@pytest.fixture
def marked_pkg(tmp_path):
    """``pkg`` with a marked module ``pkg.mod`` and an unmarked ``pkg.plain``."""
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": MARKED,
            "pkg/plain.py": "def f(x):\n    if x:\n        return 1\n    return 2\n",
        },
    )
    return tmp_path

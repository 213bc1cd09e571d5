"""Run a third-party package's own test suite plain, through the hook, and forced converted.

Each package's sdist (which carries its tests) is downloaded once with ``pip download`` into a
cache directory (``AUTOSTATIC_REALWORLD_CACHE``, default ``~/.cache/autostatic-realworld``) and
extracted afresh for every run, so the hook's on-disk cache starts cold. The package is
imported from the extracted source (first on ``PYTHONPATH``), so the tests exercise exactly the
pinned version whatever else is installed. Three subprocess runs of ``pytest``:

1. ``plain``: ``python -m pytest ...``
2. ``hook``: ``python -m autostatic run --include PKG -m pytest ...`` - every module of the
   package converted; converted functions run their original body (the eager switch).
3. ``forced``: the same with ``AUTOSTATIC_FORCE_CONVERTED=1`` - converted functions run their
   *converted* body on Python values, which is what tests the converter's Python semantics.

Outcomes come from ``--junitxml``; the three runs must pass exactly the same tests.
"""

from __future__ import annotations

import ast
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_dir() -> str:
    """Where downloaded sdists are kept."""
    return os.environ.get("AUTOSTATIC_REALWORLD_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "autostatic-realworld"
    )


#: ``convert_*`` calls that give a statement its symbolic path.
SYMBOLIC = ("convert_ifelse", "convert_while_loop")


@dataclass(frozen=True)
class Package:
    """A package whose sdist carries a test suite that runs in seconds."""

    dist: str  # name on the package index
    version: str
    include: str  # the top-level import name converted by the hook
    source: str = "."  # directory of the extracted sdist that holds the package
    tests: tuple[str, ...] = ("tests",)
    pytest_args: tuple[str, ...] = ()


@dataclass
class Run:
    passed: set = field(default_factory=set)
    failed: set = field(default_factory=set)
    skipped: int = 0
    seconds: float = 0.0
    returncode: int = 0
    output: str = ""


class Unavailable(Exception):
    """The sdist cannot be had (no network, no pip): the test is skipped with this reason."""


def _find(cache: str, pkg: Package) -> str | None:
    want = f"{pkg.dist}-{pkg.version}.tar.gz".lower().replace("-", "_")
    for candidate in glob.glob(os.path.join(cache, "*.tar.gz")):
        if os.path.basename(candidate).lower().replace("-", "_") == want:
            return candidate
    return None


def sdist(pkg: Package) -> str:
    """The path of the package's sdist in the cache, downloading it if needed."""
    cache = cache_dir()
    os.makedirs(cache, exist_ok=True)
    found = _find(cache, pkg)
    if found:
        return found
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps"]
    cmd += ["-d", cache, f"{pkg.dist}=={pkg.version}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"cannot download the {pkg.dist} {pkg.version} sdist: {exc}") from exc
    found = _find(cache, pkg)
    if done.returncode or not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no file"]
        raise Unavailable(f"cannot download the {pkg.dist} {pkg.version} sdist: {tail[0]}")
    return found


def extract(archive: str, into: str) -> str:
    """Extract ``archive`` under ``into``; returns the top directory."""
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
        top = tar.getnames()[0].split("/")[0]
    return os.path.join(into, top)


def _env(pkg: Package, top: str, **extra) -> dict:
    env = dict(os.environ)
    for name in ("AUTOSTATIC_HOOK", "AUTOSTATIC_STRICT", "AUTOSTATIC_FORCE_CONVERTED"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(top, pkg.source), ROOT])
    env["PYTHONHASHSEED"] = "0"
    env.update(extra)
    return env


def run_suite(pkg: Package, top: str, mode: str, timeout: float = 400) -> Run:
    """Run the package's tests in ``mode`` (``plain``, ``hook`` or ``forced``)."""
    xml = os.path.join(top, f"junit-{mode}.xml")
    pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    pytest_args += ["-o", "addopts=", "-W", "ignore", f"--junitxml={xml}", "--rootdir", top]
    pytest_args += [*pkg.pytest_args, *pkg.tests]
    if mode == "plain":
        cmd = [sys.executable, *pytest_args]
    else:
        cmd = [sys.executable, "-m", "autostatic", "run", "--include", pkg.include, *pytest_args]
    extra = {"AUTOSTATIC_FORCE_CONVERTED": "1"} if mode == "forced" else {}
    start = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=top, env=_env(pkg, top, **extra), capture_output=True, text=True, timeout=timeout
    )
    run = Run(seconds=time.perf_counter() - start, returncode=done.returncode)
    run.output = (done.stdout + done.stderr)[-6000:]
    if os.path.exists(xml):
        _read_junit(xml, run)
    return run


def _read_junit(path: str, run: Run) -> None:
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        if "skipped" in tags:
            run.skipped += 1
        elif tags & {"failure", "error"}:
            run.failed.add(name)
        else:
            run.passed.add(name)


@dataclass
class Counts:
    modules: int = 0
    functions: int = 0
    symbolic: int = 0
    failures: list = field(default_factory=list)


def conversion_counts(pkg: Package, top: str) -> Counts:
    """Modules and functions the hook converts and the statements given a symbolic path."""
    from autostatic.hook.module_conversion import convert_tree

    counts = Counts()
    base = os.path.join(top, pkg.source, pkg.include)
    files = [base + ".py"] if os.path.isfile(base + ".py") else []
    files += sorted(glob.glob(os.path.join(base, "**", "*.py"), recursive=True))
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        try:
            result = convert_tree(data, path)
        except SyntaxError:
            continue
        counts.modules += 1
        counts.functions += result.converted
        counts.failures += [f"{path}:{f.lineno}: {f.reason}" for f in result.failures]
        for node in ast.walk(result.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in SYMBOLIC
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == result.jst
            ):
                counts.symbolic += 1
    return counts


def cached_conversions(pkg: Package, top: str) -> list[str]:
    """The hook's cache entries (converted modules) under the package's source, after a run."""
    base = os.path.join(top, pkg.source)
    found = glob.glob(os.path.join(base, pkg.include, "**", "*-autostatic-*.pyc"), recursive=True)
    found += glob.glob(os.path.join(base, "__pycache__", f"{pkg.include}.*-autostatic-*.pyc"))
    return sorted(found)


def fresh_copy(pkg: Package, workdir: str) -> str:
    """A freshly extracted sdist under ``workdir`` (cold hook cache)."""
    top = extract(sdist(pkg), workdir)
    for cache in glob.glob(os.path.join(top, "**", "__pycache__"), recursive=True):
        shutil.rmtree(cache, ignore_errors=True)
    return top

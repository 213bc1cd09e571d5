"""Third-party test suites: plain == through the hook == forced converted bodies.

One test per package (so ``pytest -n`` runs packages in parallel); each runs the package's own
suite three times in subprocesses (see ``harness.py``). Skipped with the reason when the sdist
cannot be downloaded. ``AUTOSTATIC_REALWORLD_REPORT=path`` appends one JSON line per package
(the numbers in docs/reliability.md). ``AUTOSTATIC_REALWORLD_ALL=1`` adds the packages of
``packages.EXTRA``, which are too slow for CI.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.realworld import harness
from tests.realworld.packages import EXTRA, PACKAGES

_ALL = os.environ.get("AUTOSTATIC_REALWORLD_ALL", "") not in ("", "0")
_CASES = [pytest.param(p, id=p.dist) for p in PACKAGES] + [
    pytest.param(p, id=p.dist, marks=pytest.mark.skipif(not _ALL, reason=why)) for p, why in EXTRA
]


def _report(pkg, counts, runs) -> None:
    path = os.environ.get("AUTOSTATIC_REALWORLD_REPORT")
    if not path:
        return
    row = {
        "package": f"{pkg.dist} {pkg.version}",
        "modules": counts.modules,
        "functions": counts.functions,
        "symbolic": counts.symbolic,
        "unconverted": len(counts.failures),
        **{f"{m}_passed": len(r.passed) for m, r in runs.items()},
        **{f"{m}_failed": len(r.failed) for m, r in runs.items()},
        **{f"{m}_seconds": round(r.seconds, 2) for m, r in runs.items()},
        "when": time.strftime("%Y-%m-%d"),
    }
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")


@pytest.mark.parametrize("pkg", _CASES)
def test_suite_passes_the_same_tests_converted(pkg, tmp_path):
    try:
        top = harness.fresh_copy(pkg, str(tmp_path))
    except harness.Unavailable as exc:
        pytest.skip(str(exc))
    # the static counts convert every module once more in this process (seconds for the big
    # packages): only for the report
    if os.environ.get("AUTOSTATIC_REALWORLD_REPORT"):
        counts = harness.conversion_counts(pkg, top)
        assert counts.modules and counts.functions
    # forced first: it fills the hook's cache, so the hook run's time is a warm import's
    runs = {mode: harness.run_suite(pkg, top, mode) for mode in ("plain", "forced", "hook")}
    if os.environ.get("AUTOSTATIC_REALWORLD_REPORT"):
        _report(pkg, counts, runs)
    assert harness.cached_conversions(pkg, top), f"the hook converted no module of {pkg.dist}"
    plain = runs["plain"]
    assert plain.passed, f"the plain run passed nothing:\n{plain.output}"
    for mode in ("hook", "forced"):
        run = runs[mode]
        lost = plain.passed - run.passed
        assert not lost, (
            f"{pkg.dist}: {len(lost)} tests pass plain but not in the {mode} run, e.g. "
            f"{sorted(lost)[:5]}\n{run.output}"
        )
        assert run.passed == plain.passed


def test_the_realworld_extra_pins_the_same_versions():
    import tomllib

    with open(os.path.join(harness.ROOT, "pyproject.toml"), "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["realworld"]
    pins = dict(req.split("==") for req in extra)
    for pkg in PACKAGES + [p for p, _ in EXTRA]:
        assert pins.get(pkg.dist) == pkg.version, pkg.dist

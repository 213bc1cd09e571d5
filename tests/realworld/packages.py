"""The third-party packages whose own test suites run converted (pinned: see pyproject's
``realworld`` extra, which must list the same versions)."""

from __future__ import annotations

from tests.realworld.harness import Package

PACKAGES = [
    Package("more-itertools", "11.2.1", "more_itertools"),
    Package("toolz", "1.2.0", "toolz", tests=("toolz/tests",)),
    Package("boltons", "26.2.0", "boltons"),
    Package("cachetools", "8.0.0", "cachetools", source="src"),
    Package("parse", "1.22.4", "parse"),
    Package("inflect", "7.6.0", "inflect"),
]

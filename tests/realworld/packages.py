"""The third-party packages whose own test suites run converted (pinned: see pyproject's
``realworld`` extra, which must list the same versions)."""

from __future__ import annotations

from tests.realworld.harness import Package

PACKAGES = [
    Package(  # without its five slowest tests (prime sieves, concurrency, big transforms)
        "more-itertools",
        "11.2.1",
        "more_itertools",
        pytest_args=(
            "-k",
            "not test_primes and not test_nth_prime_approximate and not test_concurrent "
            "and not test_roundtrip and not test_large",
        ),
    ),
    Package("toolz", "1.2.0", "toolz", tests=("toolz/tests",)),
    Package("boltons", "26.2.0", "boltons"),
    Package("cachetools", "8.0.0", "cachetools", source="src"),
    Package("parse", "1.22.4", "parse"),
    Package("six", "1.17.0", "six", tests=("test_six.py",)),
]

#: Run only with ``AUTOSTATIC_REALWORLD_ALL=1``, each with the reason it is not in CI.
EXTRA = [
    (
        Package("inflect", "7.6.0", "inflect"),
        "converting inflect takes minutes: engine._plnoun and others, with dozens of "
        "sequential early returns, each take over 20 s (converted code grows exponentially "
        "with the nesting the early-return lowering creates)",
    ),
]

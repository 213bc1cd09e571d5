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
    Package("inflect", "7.6.0", "inflect"),
    Package("pyflakes", "3.4.0", "pyflakes", tests=("pyflakes/test",)),
    Package(  # without the hypothesis property tests (random) and 5,160 of the 6,329 UTS #46
        # conformance vectors (one generated test each: pytest's per-test cost dominated);
        # the kept ones are the tests whose number starts with 1 (1,075 of them)
        "idna",
        "3.20",
        "idna",
        pytest_args=(
            "--ignore",
            "tests/test_idna_properties.py",
            "-k",
            "not UTS46Tests or test_uts46_1",
        ),
    ),
    Package("sqlparse", "0.6.1", "sqlparse"),
    Package(  # without the opt-in property tests (packaging's own addopts leave them out),
        # test_version.py (collecting its 51,000 pairwise comparisons alone takes 6 s; versions
        # are parsed and compared all through test_specifiers) and two generated products:
        # test_basic_valid_requirement_parsing (5,184 cases) and test_parses_valid of markers
        # (1,440)
        "packaging",
        "26.3",
        "packaging",
        source="src",
        pytest_args=(
            "-m",
            "not property",
            "--ignore",
            "tests/test_version.py",
            "--deselect",
            "tests/test_requirements.py::test_basic_valid_requirement_parsing",
            "--deselect",
            "tests/test_markers.py::TestMarker::test_parses_valid",
        ),
    ),
]

#: Run only with ``AUTOSTATIC_REALWORLD_ALL=1``, each with the reason it is not in CI.
EXTRA: list = [
    (  # without tests/test_diagram.py (it needs railroad-diagrams)
        Package(
            "pyparsing", "3.3.2", "pyparsing", pytest_args=("--ignore", "tests/test_diagram.py")
        ),
        "its suite takes 65 s plain and 295 s with converted bodies forced",
    ),
    (
        Package(  # without the hypothesis property tests (random), test_tzpath_data.py (checks
            # every zone of the machine's tzdata: 9 s plain, 30 s forced), the test_tzfile cases
            # run with the "slim" and "fat" zoneinfo caches (1,560 cases; those with the "v1"
            # cache are kept) and two tests that fail plain on a machine whose local zone is
            # UTC (gettz answers the abbreviation "UTC" with tzutc(), not tzlocal()) and whose
            # system tzdata keeps Europe/Monaco a zone of its own rather than a link to
            # Europe/Paris
            "python-dateutil",
            "4.0.0",
            "dateutil",
            source="src",
            pytest_args=(
                "--ignore",
                "tests/property",
                "--ignore",
                "tests/test_tzpath_data.py",
                "-k",
                "not slim and not fat",
                "--deselect",
                "tests/test_tz.py::test_gettz_link[tzpath-Europe/Monaco-Europe/Paris]",
                "--deselect",
                "tests/test_tzfile.py::test_gettz_local_abbreviation_without_time_zone_data",
            ),
        ),
        "its three runs take 40-60 s of one core, the longest of the suite's packages: with the "
        "rest of the README's test command that came near its 5 minutes on two cores",
    ),
]

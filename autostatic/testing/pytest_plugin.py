"""The autostatic pytest plugin (registered as the ``autostatic`` ``pytest11`` entry point).

It does nothing unless asked: without an ``--autostatic-*`` option or an ``autostatic_*``
ini setting a test run behaves exactly as without it (only the ``autostatic`` marker is
registered).

Options (each also an ini setting in ``[tool.pytest.ini_options]`` / ``pytest.ini``):

- ``--autostatic-max-examples N`` / ``autostatic_max_examples``: examples per check;
- ``--autostatic-profile {dev,ci}`` / ``autostatic_profile``: load that hypothesis profile;
- ``--autostatic-check PKG`` / ``autostatic_check``: test every ``to_static`` function with
  an ``input_spec`` in PKG, each as its own item;
- ``--autostatic-include PKG`` / ``autostatic_include``: install the import hook for PKG;
- ``autostatic_hook = true``: install the hook (for pragma-marked modules only).

The hook is installed in ``pytest_load_initial_conftests``, before conftest files are
imported, so model modules they import are converted. Profiles: ``dev`` and ``ci`` (ci:
derandomized, no deadline) are registered unless the project registers its own under those
names; with ``CI`` set and no profile chosen, ``assert_equivalent`` uses ``ci``. No example
ever has a deadline, because the first call of a shape converts, traces and compiles.

``@pytest.mark.autostatic(specs=[...], rtol=..., atol=..., check_grad=..., max_examples=...)``
gives defaults to the ``autostatic_equivalence`` fixture, a callable
``autostatic_equivalence(fn, *specs, **options)`` running ``assert_equivalent``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

_INI = {
    "autostatic_max_examples": ("examples per assert_equivalent (autostatic)", "string"),
    "autostatic_profile": ("hypothesis profile for autostatic checks: dev or ci", "string"),
    "autostatic_check": ("packages whose to_static functions are property-tested", "linelist"),
    "autostatic_include": ("packages the autostatic import hook converts", "linelist"),
    "autostatic_hook": ("install the autostatic import hook for marked modules", "bool"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autostatic", "autostatic equivalence checks")
    group.addoption(
        "--autostatic-max-examples",
        type=int,
        default=None,
        metavar="N",
        help="hypothesis examples per assert_equivalent / --autostatic-check item",
    )
    group.addoption(
        "--autostatic-profile",
        choices=("dev", "ci"),
        default=None,
        help="hypothesis profile for the checks (ci: derandomized, no deadline)",
    )
    group.addoption(
        "--autostatic-check",
        action="append",
        default=[],
        metavar="PKG",
        help="collect every to_static function with an input_spec in PKG (imported "
        "through the import hook) and property-test it as its own test item",
    )
    group.addoption(
        "--autostatic-include",
        action="append",
        default=[],
        metavar="PKG",
        help="install the import hook for PKG before conftest files are imported",
    )
    for name, (help_text, kind) in _INI.items():
        parser.addini(name, help_text, type=kind, default=False if kind == "bool" else None)


def _ini(config: pytest.Config, name: str) -> Any:
    try:
        return config.getini(name)
    except (ValueError, KeyError):
        return None


def _settings(config: pytest.Config, ns: Any = None) -> dict:
    """The plugin's effective settings (options win over ini values); ``ns`` is the parsed
    options (``config.option`` unless given: early, only ``known_args_namespace`` is)."""
    ns = config.option if ns is None else ns

    def get(attr, default=None):
        return getattr(ns, attr, default) if ns is not None else default

    max_examples = get("autostatic_max_examples") or _ini(config, "autostatic_max_examples")
    return {
        "max_examples": int(max_examples) if max_examples else None,
        "profile": get("autostatic_profile") or _ini(config, "autostatic_profile") or None,
        "check": list(get("autostatic_check", []) or [])
        + list(_ini(config, "autostatic_check") or []),
        "include": list(get("autostatic_include", []) or [])
        + list(_ini(config, "autostatic_include") or []),
        "hook": bool(_ini(config, "autostatic_hook")),
    }


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser, args) -> None:
    """Install the import hook before conftest files import model modules (only when asked)."""
    s = _settings(early_config, early_config.known_args_namespace)
    if not (s["include"] or s["check"] or s["hook"]):
        return
    import autostatic

    autostatic.install(include=s["include"] + s["check"])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "autostatic(specs=None, rtol=None, atol=None, check_grad=False, max_examples=None): "
        "defaults for the autostatic_equivalence fixture",
    )
    s = _settings(config)
    config._autostatic = s  # type: ignore[attr-defined]
    from autostatic.testing import DEFAULTS  # a plain dict: imports nothing else

    if s["max_examples"] is not None:
        DEFAULTS["max_examples"] = s["max_examples"]
    profile = s["profile"]
    if profile is not None:
        DEFAULTS["profile"] = profile
        if not config.getoption("hypothesis_profile", None):
            from hypothesis import settings

            _register_profiles()
            settings.load_profile(profile)  # asked for explicitly: the whole run uses it
    elif os.environ.get("CI"):
        DEFAULTS["profile"] = "ci"  # autostatic's own checks only; other tests keep theirs


def _register_profiles() -> None:
    from autostatic.testing.equivalence import register_profiles

    register_profiles()


# ---- the marker and the fixture ----------------------------------------------------------------

_MARK_OPTIONS = ("rtol", "atol", "check_grad", "max_examples", "dims", "elements")


@pytest.fixture
def autostatic_equivalence(request: pytest.FixtureRequest):
    """``check(fn, *specs, **options)``: ``assert_equivalent`` with the test's
    ``@pytest.mark.autostatic(...)`` values as defaults (specs, tolerances, examples)."""
    from autostatic.testing import assert_equivalent

    marker = request.node.get_closest_marker("autostatic")
    defaults = dict(marker.kwargs) if marker is not None else {}
    unknown = set(defaults) - set(_MARK_OPTIONS) - {"specs"}
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.autostatic: unknown options {sorted(unknown)}")

    def check(fn, *specs, **options):
        __tracebackhide__ = True
        if not specs and defaults.get("specs") is not None:
            specs = tuple(defaults["specs"])
        merged = {k: v for k, v in defaults.items() if k != "specs"}
        merged.update(options)
        return assert_equivalent(fn, *specs, **merged)

    return check


# ---- --autostatic-check: one item per to_static function -----------------------------------


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items) -> None:
    s = getattr(config, "_autostatic", None)
    if not s or not s["check"]:
        return
    for package in s["check"]:
        name = f"autostatic-check[{package}]"
        collector = AutostaticPackage.from_parent(session, name=name, nodeid=name)
        collector.package = package
        # as pytest collects a node: the report is counted ("collected N items") and a
        # failure to collect is shown as a collection error
        report = collector.ihook.pytest_make_collect_report(collector=collector)
        collector.ihook.pytest_collectreport(report=report)
        if report.passed:
            items.extend(report.result)


class AutostaticPackage(pytest.Collector):
    """The to_static functions (with an input_spec) of one package."""

    package: str = ""

    def collect(self) -> list:
        from autostatic.testing.discovery import find_static_functions

        found = []
        for qualname, fn, error in find_static_functions(self.package):
            found.append(AutostaticCheckItem.from_parent(self, name=qualname, target=fn,
                                                         error=error))  # fmt: skip
        return found


class AutostaticCheckItem(pytest.Item):
    """``assert_equivalent`` on one to_static function, with its declared input_spec."""

    def __init__(self, *, target: Any, error: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.target = target
        self.error = error
        self.add_marker(pytest.mark.autostatic)

    def runtest(self) -> None:
        if self.error is not None:
            raise CheckSetupError(self.error)
        from autostatic.testing import assert_equivalent

        assert_equivalent(self.target)

    def repr_failure(self, excinfo, style=None):
        from autostatic.testing import EquivalenceError

        if isinstance(excinfo.value, (EquivalenceError, CheckSetupError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        fn = getattr(self.target, "dygraph_function", self.target)
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is None:
            return self.path, None, f"autostatic check {self.name}"
        return code.co_filename, code.co_firstlineno - 1, f"autostatic check {self.name}"


class CheckSetupError(Exception):
    """A decorated function could not be prepared for checking (its module failed, or its
    layer cannot be built without arguments)."""

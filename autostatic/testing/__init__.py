"""Property-tested equivalence of eager code, its conversion and its static program.

    from autostatic import InputSpec
    from autostatic.testing import assert_equivalent, tensors

    assert_equivalent(model_step, InputSpec([None, 10], "float32", "x"), check_grad=True)

- ``strategies``: ``tensors`` and ``input_specs_to_strategy`` (hypothesis strategies).
- ``equivalence``: ``assert_equivalent`` (original vs converted vs static program).
- ``coverage``: ``BranchCoverage`` and ``BranchCoverageWarning`` (cond branches never taken).
- ``pytest_plugin``: the ``pytest11`` plugin (``--autostatic-*`` options, the ``autostatic``
  marker and the ``autostatic_equivalence`` fixture).

Needs hypothesis (``pip install autostatic[test]``). Importing this package does not import
the converter (gast); ``assert_equivalent`` loads it on first use.
"""

from __future__ import annotations

# Settings the pytest plugin (or a user) may change: max_examples None keeps the hypothesis
# profile's; profile None uses the current hypothesis settings, "dev"/"ci" that profile.
DEFAULTS: dict = {"max_examples": None, "profile": None, "warn_coverage": True}

# Loaded on first use, so that the pytest plugin (a submodule) costs nothing to import.
_LAZY = {
    "assert_equivalent": "equivalence",
    "EquivalenceError": "equivalence",
    "EquivalenceResult": "equivalence",
    "tolerance": "equivalence",
    "tensors": "strategies",
    "arrays": "strategies",
    "input_specs_to_strategy": "strategies",
    "BranchCoverage": "coverage",
    "BranchCoverageWarning": "coverage",
}
__all__ = list(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'autostatic.testing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"autostatic.testing.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

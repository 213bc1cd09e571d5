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

from autostatic.testing.coverage import BranchCoverage, BranchCoverageWarning
from autostatic.testing.equivalence import (
    EquivalenceError,
    EquivalenceResult,
    assert_equivalent,
    tolerance,
)
from autostatic.testing.strategies import arrays, input_specs_to_strategy, tensors

__all__ = [
    "assert_equivalent",
    "EquivalenceError",
    "EquivalenceResult",
    "tolerance",
    "tensors",
    "arrays",
    "input_specs_to_strategy",
    "BranchCoverage",
    "BranchCoverageWarning",
]

"""Samples: the debugging ops (``print``; ``assert`` has no outputs, see EXEMPT)."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime.ops.debugging import print_values
from tests.runtime.harness import F, I, Sample

S = Sample

SAMPLES = [
    S("print", lambda x: rt.static.Print(x * 1.0, message="sample", summarize=2), [F(2, 3)]),
    S("print", lambda x, n: print_values(("x:", x, n), sep="|"), [F(3), I(2)], name="print_line"),
]

EXEMPT = {
    "assert": "no outputs to compare; tests/compiler/test_builtins.py runs it in programs "
    "(passing, failing, serialized, inside while)",
}

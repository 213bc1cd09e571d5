"""The converter's passes, one per file; ``PIPELINE`` lists them in the order they run.

The lowering passes (early return, break/continue) rewrite statements first; the dataflow
analysis runs after them; the dual-path passes then read its annotations.
"""

from autostatic.transformers.asserts import AssertTransformer
from autostatic.transformers.break_continue import BreakContinueTransformer
from autostatic.transformers.builtin_calls import BuiltinCallTransformer
from autostatic.transformers.calls import CallTransformer
from autostatic.transformers.comparisons import ComparisonTransformer
from autostatic.transformers.early_return import ReturnTransformer
from autostatic.transformers.for_loops import ForTransformer
from autostatic.transformers.ifelse import IfElseTransformer
from autostatic.transformers.logical import LogicalTransformer
from autostatic.transformers.loops import WhileTransformer
from autostatic.transformers.shapes import ShapeTransformer

# comparisons before logical (it makes their ``and`` dual-path); shapes early (the tree is
# smallest before if/while duplicate it); builtins after calls (they keep its ``convert_call``
# as the fallback); for loops after if/else (their dispatch ``if`` tests a Python bool) and
# before while (which converts the ``while`` they make); asserts last (their ``if`` is final)
PIPELINE = (
    ReturnTransformer,
    BreakContinueTransformer,
    ComparisonTransformer,
    ShapeTransformer,
    LogicalTransformer,
    IfElseTransformer,
    ForTransformer,  # after IfElse (its dispatch `if` is on a Python bool), before While
    WhileTransformer,
    CallTransformer,
    BuiltinCallTransformer,
    AssertTransformer,
)

__all__ = [
    "PIPELINE",
    "AssertTransformer",
    "BreakContinueTransformer",
    "BuiltinCallTransformer",
    "CallTransformer",
    "ComparisonTransformer",
    "ForTransformer",
    "IfElseTransformer",
    "LogicalTransformer",
    "ReturnTransformer",
    "ShapeTransformer",
    "WhileTransformer",
]

"""The converter's passes, one per file; ``PIPELINE`` lists them in the order they run.

The lowering passes (early return, break/continue) rewrite statements first; the dataflow
analysis runs after them; the expression passes rewrite expressions in place; the
control-flow pass runs last and gives every ``if``/``while``/``for`` its dual form (the
user's statement, or the functional call when the condition is symbolic) and its branch
functions, defined once each (converted code grows linearly with the source).
"""

from autostatic.transformers.asserts import AssertTransformer
from autostatic.transformers.break_continue import BreakContinueTransformer
from autostatic.transformers.calls import CallTransformer
from autostatic.transformers.comparisons import ComparisonTransformer
from autostatic.transformers.control_flow import ControlFlowTransformer
from autostatic.transformers.early_return import ReturnTransformer
from autostatic.transformers.expressions import ExpressionTransformer
from autostatic.transformers.logical import LogicalTransformer
from autostatic.transformers.nested_functions import NestedFunctionTransformer
from autostatic.transformers.shapes import ShapeTransformer

# nested functions first: they keep their bodies as written (converted on their own trace);
# comparisons before logical (it makes their ``and`` dual-path); the logical and call
# rewrites in one walk (ExpressionTransformer); asserts before control flow (their ``if`` is
# Python's); control flow last: it copies statements into branch functions, so every
# expression pass has run on them already
PIPELINE = (
    NestedFunctionTransformer,
    ReturnTransformer,
    BreakContinueTransformer,
    ComparisonTransformer,
    ShapeTransformer,
    ExpressionTransformer,
    AssertTransformer,
    ControlFlowTransformer,
)

__all__ = [
    "PIPELINE",
    "AssertTransformer",
    "BreakContinueTransformer",
    "CallTransformer",
    "ComparisonTransformer",
    "ControlFlowTransformer",
    "ExpressionTransformer",
    "LogicalTransformer",
    "NestedFunctionTransformer",
    "ReturnTransformer",
    "ShapeTransformer",
]

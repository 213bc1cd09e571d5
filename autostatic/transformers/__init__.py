"""The converter's passes, one per file; ``PIPELINE`` lists them in the order they run.

The lowering passes (early return, break/continue) rewrite statements first; the dataflow
analysis runs after them; the dual-path passes then read its annotations.
"""

from autostatic.transformers.break_continue import BreakContinueTransformer
from autostatic.transformers.calls import CallTransformer
from autostatic.transformers.early_return import ReturnTransformer
from autostatic.transformers.ifelse import IfElseTransformer
from autostatic.transformers.logical import LogicalTransformer
from autostatic.transformers.loops import WhileTransformer

PIPELINE = (
    ReturnTransformer,
    BreakContinueTransformer,
    LogicalTransformer,
    IfElseTransformer,
    WhileTransformer,
    CallTransformer,
)

__all__ = [
    "PIPELINE",
    "BreakContinueTransformer",
    "CallTransformer",
    "IfElseTransformer",
    "LogicalTransformer",
    "ReturnTransformer",
    "WhileTransformer",
]

"""The converter's passes, one per file; ``PIPELINE`` lists them in the order they run."""

from autostatic.transformers.calls import CallTransformer
from autostatic.transformers.for_loops import ForTransformer
from autostatic.transformers.ifelse import IfElseTransformer
from autostatic.transformers.logical import LogicalTransformer
from autostatic.transformers.loops import WhileTransformer

PIPELINE = (
    LogicalTransformer,
    IfElseTransformer,
    ForTransformer,  # after IfElse (its dispatch `if` is on a Python bool), before While
    WhileTransformer,
    CallTransformer,
)

__all__ = [
    "PIPELINE",
    "CallTransformer",
    "ForTransformer",
    "IfElseTransformer",
    "LogicalTransformer",
    "WhileTransformer",
]

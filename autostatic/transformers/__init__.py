"""The converter's passes, one per file; ``PIPELINE`` lists them in the order they run."""

from autostatic.transformers.calls import CallTransformer
from autostatic.transformers.ifelse import IfElseTransformer
from autostatic.transformers.logical import LogicalTransformer
from autostatic.transformers.loops import WhileTransformer

PIPELINE = (LogicalTransformer, IfElseTransformer, WhileTransformer, CallTransformer)

__all__ = [
    "PIPELINE",
    "CallTransformer",
    "IfElseTransformer",
    "LogicalTransformer",
    "WhileTransformer",
]

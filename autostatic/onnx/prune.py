"""The ops an export needs: those the outputs depend on, in every block.

An op nobody reads (a debugging ``print``, an ``assert``, a value computed and dropped) is
left out, as the executor leaves it out, so dead code never blocks an export. A ``cond`` or
``while`` that is needed keeps what its sub-blocks need for all of their outputs.
"""

from __future__ import annotations

from autostatic_runtime.static.program import Block, Program, Variable

__all__ = ["live_ops"]


def live_ops(program: Program, outputs: list[str]) -> set[int]:
    """``id``s of the ops of ``program`` that ``outputs`` (names in block 0) depend on."""
    live: set[int] = set()
    _mark(program.global_block(), set(outputs), live)
    return live


def _mark(block: Block, needed: set[str], live: set[int]) -> None:
    needed = set(needed)
    for op in reversed(block.ops):
        if not any(v.name in needed for v in op.outputs):
            continue
        live.add(id(op))
        needed |= {x.name for x in op.inputs if isinstance(x, Variable)}
        if op.type == "cond":
            _mark(op.attrs["true_block"], set(op.attrs["true_outputs"]), live)
            _mark(op.attrs["false_block"], set(op.attrs["false_outputs"]), live)
        elif op.type == "while":
            _mark(op.attrs["cond_block"], {op.attrs["cond_output"]}, live)
            _mark(op.attrs["body_block"], set(op.attrs["body_outputs"]), live)

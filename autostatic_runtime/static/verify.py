"""Checks of a loaded Program's declared sizes against a memory budget, before anything runs.

A saved program declares shapes (its variables) and sizes (attributes such as the ``shape``
of ``fill_constant`` or the bounds of ``arange``). A crafted file can declare a
[65536, 65536] constant: 32 GiB asked for by one op. ``check_sizes`` runs each op's shape
inference on the declared input shapes and rejects any value, declared or inferred, whose
known size exceeds the budget - with the op and the source line that built it:

    ProgramFormatError: model.pdmodel: op 'fill_constant' (built at model.py:12) would
    make a float64[65536, 65536] value of 32.0 GiB, over the memory budget of 4.0 GiB
    per value; pass autostatic.load(..., memory_budget=...) to allow it

Sizes that depend on the inputs (``-1`` dims) are not known here; they grow with the inputs,
which the caller chooses.
"""

from __future__ import annotations

import os
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import ProgramFormatError, format_location
from autostatic_runtime.static.program import Block, Literal, Program, Variable

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "DEFAULT_MAX_LOOP_ITERATIONS",
    "check_sizes",
    "memory_budget",
    "loop_limit",
]

#: Bytes one value of a loaded program may take (``AUTOSTATIC_MEMORY_BUDGET`` overrides it).
DEFAULT_MEMORY_BUDGET = 4 * 1024**3
#: Iterations one run of a loaded program's ``while`` op may take: seconds of work for the
#: default executor, far more than a model's loops over tokens, steps or layers take.
DEFAULT_MAX_LOOP_ITERATIONS = 1_000_000
_META_ATTRS = frozenset({"op_role", "side_effect"})


def memory_budget(budget: int | None = None) -> int:
    """``budget``, else ``AUTOSTATIC_MEMORY_BUDGET`` (bytes) from the environment, else 4 GiB."""
    if budget is not None:
        if type(budget) is not int or budget <= 0:
            raise ValueError(f"memory_budget must be a positive number of bytes, got {budget!r}")
        return budget
    env = os.environ.get("AUTOSTATIC_MEMORY_BUDGET", "").strip()
    return int(env) if env.isdigit() and int(env) > 0 else DEFAULT_MEMORY_BUDGET


def loop_limit(limit: int | None) -> int | None:
    """``limit`` checked: a non-negative int, or None (no limit)."""
    if limit is not None and (type(limit) is not int or limit < 0):
        raise ValueError(f"max_loop_iterations must be a non-negative int or None, got {limit!r}")
    return limit


def _gib(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB" if n >= 1024**3 else f"{n / 1024**2:.1f} MiB"


def _nbytes(shape: Any, dtype: Any) -> int:
    """Bytes of a value of fully known ``shape`` (-1 when a dim is unknown)."""
    n = 1
    for d in shape:
        if type(d) is not int or d < 0:
            return -1
        n *= d
    try:
        return n * dtypes.convert_dtype(dtype).itemsize
    except (TypeError, ValueError):
        return n


def _too_big(op: Any, what: str, shape: Any, dtype: Any, budget: int, where: str) -> None:
    size = _nbytes(shape, dtype)
    if size > budget:
        loc = op.location if op is not None and op.location and op.location[0] else None
        built = f" (built{format_location(loc)})" if loc else ""
        who = f"op {op.type!r}{built} would make" if op is not None else "the program declares"
        raise ProgramFormatError(
            f"{where}: {who} {what} {dtype}{list(shape)} of {_gib(size)}, over the memory "
            f"budget of {_gib(budget)} per value; pass autostatic.load(..., memory_budget=N) "
            "(bytes) to allow it"
        )


def check_sizes(program: Program, budget: int, where: str = "program") -> None:
    """Raise a ProgramFormatError if a declared or inferred value is larger than ``budget``."""
    for block in program.blocks:
        for v in block.vars.values():
            _too_big(getattr(v, "op", None), f"variable {v.name!r},", v._shape, v.dtype, budget,
                     where)  # fmt: skip
        for op in block.ops:
            for shape, dtype in _inferred(op):
                _too_big(op, "a", shape, dtype, budget, where)


def _inferred(op: Any) -> list[tuple]:
    """(shape, dtype) of each output as the op's inference computes it from the declared
    input shapes and the attributes; nothing when inference cannot run (control flow, or
    inputs it rejects - the program's run reports those)."""
    from autostatic_runtime.ops.registry import OPS

    opdef = OPS.get(op.type)
    if opdef is None:
        return []
    args = [x.value if isinstance(x, Literal) else x for x in op.inputs]
    if not all(isinstance(a, Variable) or not isinstance(a, Block) for a in args):
        return []
    attrs = {k: v for k, v in op.attrs.items() if k not in _META_ATTRS}
    try:
        spec = opdef.infer(*args, **attrs)
    except Exception:  # noqa: BLE001 - a malformed op fails when it runs, with its line
        return []
    specs = spec if opdef.multi_output else (spec,)
    out = []
    for s in specs:
        shape, dtype = getattr(s, "shape", None), getattr(s, "dtype", None)
        if isinstance(shape, (tuple, list)):
            out.append((tuple(shape), dtype))
    return out

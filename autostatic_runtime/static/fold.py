"""Values a program being built already determines: sizes computed from known dims.

    shape_hw = rt.cast(rt.slice(rt.shape(x), axes=[0], starts=[2], ends=[4]), "int32") * 2
    build_time_value(shape_hw)      # array([38, 38]) while tracing x of shape [4, 3, 19, 19]

A traced ``shape(x)`` whose dims are all known, literals and the results of a few pure
shape-arithmetic ops on those are evaluated with the ops' own kernels on NumPy; anything
else (a data input, an unknown dim, another op) has no build-time value (None). Functions
that need concrete sizes (``interpolate``'s ``size``) use it before asking for a value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autostatic_runtime.static.program import Literal, Variable

__all__ = ["build_time_value"]

# pure ops whose outputs follow from their inputs' values (no randomness, no side effects)
_FOLDABLE = frozenset({
    "cast", "slice", "getitem", "elementwise_add", "elementwise_sub", "elementwise_mul",
    "elementwise_floordiv", "elementwise_div", "scale", "concat", "stack", "reshape2",
    "reshape", "squeeze2", "squeeze", "unsqueeze2", "unsqueeze", "assign", "fill_constant",
})  # fmt: skip


def build_time_value(value: Any, depth: int = 12) -> np.ndarray | None:
    """The NumPy value of ``value`` (a Variable of the program being built) if the program
    determines it without running, else None; a non-Variable is returned as it is."""
    if isinstance(value, Literal):
        return value.value
    if not isinstance(value, Variable):
        return value
    op = value.op
    if op is None or depth <= 0:
        return None
    if op.type == "shape":
        dims = list(op.inputs[0].shape)
        return np.asarray(dims, dtype=np.int64) if all(d >= 0 for d in dims) else None
    if op.type not in _FOLDABLE:
        return None
    from autostatic_runtime.backends import get_backend
    from autostatic_runtime.ops.registry import OPS

    args = []
    for x in op.inputs:
        folded = build_time_value(x, depth - 1) if isinstance(x, (Variable, Literal)) else x
        if folded is None and x is not None:
            return None
        args.append(folded)
    opdef = OPS.get(op.type)
    if opdef is None:
        return None
    try:
        out = opdef.kernel(get_backend("numpy").xp, *args, **op.attrs)
    except Exception:  # a kernel that wants other inputs: no build-time value
        return None
    if opdef.multi_output:
        out = out[[o is value or getattr(o, "name", None) == value.name
                   for o in op.outputs].index(True)]  # fmt: skip
    return np.asarray(out)

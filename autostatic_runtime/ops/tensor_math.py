"""Paddle's ``paddle.tensor`` namespace beyond the top-level names: ``fill_constant`` and
``paddle.tensor.math`` with its private ``_<op>_with_axis`` helpers, which Paddle's own model
code calls (seq2seq and transformer beam search):

    _multiply_with_axis(x[B, H], mask[B], axis=0)  ==  x * unsqueeze(mask, [1])

The operand of lower rank is aligned with the other one's dims starting at ``axis`` (Paddle
1.x's elementwise ``axis`` attribute), then the usual broadcasting applies.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.creation import full
from autostatic_runtime.ops.elementwise import *  # noqa: F401,F403  (paddle.tensor.math.add, ...)
from autostatic_runtime.ops.elementwise import add, divide, multiply, subtract
from autostatic_runtime.ops.manipulation import unsqueeze

__all__ = ["fill_constant"]


def fill_constant(shape: Any, dtype: Any, value: Any, force_cpu: bool = False, out: Any = None,
                  name: str | None = None):  # fmt: skip
    """A tensor of ``shape`` filled with ``value`` (``rt.full`` with Paddle 1.x's argument
    order; ``shape`` may hold traced dims). ``out``, when given, is overwritten with it."""
    made = full(shape, value, dtype)
    if out is None:
        return made
    from autostatic_runtime.creation import assign

    return assign(made, out)


def _aligned(small: Any, rank: int, axis: int) -> Any:
    """``small`` with unit dims added so its dims line up with a rank-``rank`` operand's
    from ``axis`` on."""
    low = len(small.shape)
    if axis < 0:
        axis += rank - low + 1  # -1: the trailing dims, as broadcasting
    if not 0 <= axis <= rank - low:
        raise ValueError(
            f"axis {axis} cannot align an operand of rank {low} with one of rank {rank}"
        )
    dims = list(range(axis)) + list(range(axis + low, rank))
    return unsqueeze(small, dims) if dims else small


def _with_axis(op: Any, x: Any, y: Any, axis: int) -> Any:
    rx, ry = len(x.shape), len(y.shape)
    if axis == -1 or rx == ry:
        return op(x, y)
    if rx > ry:
        return op(x, _aligned(y, rx, axis))
    return op(_aligned(x, ry, axis), y)


def _add_with_axis(x: Any, y: Any, axis: int = -1, name: str | None = None):
    """``x + y`` with the lower-rank operand aligned at ``axis``."""
    return _with_axis(add, x, y, axis)


def _subtract_with_axis(x: Any, y: Any, axis: int = -1, name: str | None = None):
    """``x - y`` with the lower-rank operand aligned at ``axis``."""
    return _with_axis(subtract, x, y, axis)


def _multiply_with_axis(x: Any, y: Any, axis: int = -1, name: str | None = None):
    """``x * y`` with the lower-rank operand aligned at ``axis``."""
    return _with_axis(multiply, x, y, axis)


def _divide_with_axis(x: Any, y: Any, axis: int = -1, name: str | None = None):
    """``x / y`` with the lower-rank operand aligned at ``axis``."""
    return _with_axis(divide, x, y, axis)

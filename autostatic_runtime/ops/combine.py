"""Ops over a list of tensors: ``add_n`` (Paddle's ``sum`` op)."""

from __future__ import annotations

from typing import Any

from autostatic_runtime.errors import ShapeError, user_location
from autostatic_runtime.ops.broadcast import reduce_as
from autostatic_runtime.ops.registry import Spec, broadcast, dtype_of, op
from autostatic_runtime.tensor import TensorLike

__all__ = ["add_n"]


@op("sum")
class AddN:
    """The elementwise sum of its inputs (Paddle's ``sum`` op behind ``add_n``)."""

    def infer(*xs):
        return Spec(broadcast(*xs, op="add_n"), dtype_of(xs[0]))

    def kernel(xp, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return xp.asarray(out, copy=True) if len(xs) == 1 else out

    def grad(g, out, *xs):
        return tuple(reduce_as(g, x) for x in xs)


def add_n(inputs: Any, name: str | None = None):
    """The sum of a tensor or a list of same-shape tensors (Paddle's ``paddle.add_n``)."""
    if isinstance(inputs, TensorLike):
        inputs = [inputs]
    if hasattr(inputs, "stack") and hasattr(inputs, "length"):  # a tensor array
        from autostatic_runtime.ops.reduce import sum as reduce_sum

        return reduce_sum(inputs.stack(), axis=0)
    inputs = list(inputs)
    if not inputs or not all(isinstance(t, TensorLike) for t in inputs):
        raise ShapeError("add_n", "expects a non-empty list of tensors", user_location())
    dtypes = {t.dtype for t in inputs}
    if len(dtypes) > 1:
        raise ShapeError(
            "add_n",
            f"inputs have different dtypes {sorted(map(str, dtypes))}; cast them first",
            user_location(),
        )
    return AddN(*inputs)

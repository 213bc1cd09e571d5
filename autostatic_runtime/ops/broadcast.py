"""Broadcasting ops and their adjoint: ``reduce_as``, ``expand_as``, ``broadcast_to``, ``expand``.

``reduce_as(g, x)`` sums ``g`` down to ``x``'s shape: it is the gradient of every
broadcasting op and takes ``x`` as an input (not a shape attribute), so it also works when
static shapes hold -1.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.errors import ShapeError, user_location
from autostatic_runtime.ops.registry import Spec, broadcast, op, shape_of

__all__ = [
    "reduce_as",
    "expand_as",
    "broadcast_to",
    "expand",
    "broadcast_shape",
    "broadcast_tensors",
]


def _reduced_axes(src: tuple, dst: tuple) -> tuple[tuple, tuple]:
    """Axes of ``src`` to sum so it matches ``dst``: (leading axes, kept-dim axes)."""
    lead = len(src) - len(dst)
    keep = tuple(i + lead for i, d in enumerate(dst) if d == 1 and src[i + lead] != 1)
    return tuple(range(lead)), keep


@op("reduce_as")
class ReduceAs:
    """Sum ``x`` over its broadcast axes so the result has ``target``'s shape."""

    def infer(x, target):
        return Spec(shape_of(target), x.dtype)

    def kernel(xp, x, target):
        if x.shape == target.shape:
            return x
        lead, keep = _reduced_axes(tuple(x.shape), tuple(target.shape))
        if keep:
            x = xp.sum(x, axis=keep, keepdims=True)
        if lead:
            x = xp.sum(x, axis=lead)
        return x

    def grad(g, out, x, target):
        return expand_as(g, x), None


@op("expand_as")
class ExpandAs:
    """Broadcast ``x`` to ``target``'s shape."""

    def infer(x, target):
        return Spec(broadcast(x, target, op="expand_as"), x.dtype)

    def kernel(xp, x, target):
        return xp.broadcast_to(x, target.shape)

    def grad(g, out, x, target):
        return reduce_as(g, x), None


@op("expand")
class Expand:
    """Broadcast ``x`` to a fixed ``shape`` (-1 keeps the input's dim)."""

    def infer(x, shape):
        return Spec(_expand_shape(shape_of(x), shape), x.dtype)

    def kernel(xp, x, shape):
        return xp.broadcast_to(x, _expand_shape(tuple(x.shape), shape))

    def grad(g, out, x, shape):
        return (reduce_as(g, x),)


def _expand_shape(src: tuple, shape: tuple) -> tuple:
    if len(shape) < len(src):
        raise ShapeError(
            "expand",
            f"cannot expand shape {list(src)} to fewer dims {list(shape)}",
            user_location(),
        )
    lead = len(shape) - len(src)
    out = list(shape)
    for i, d in enumerate(src):
        want = shape[i + lead]
        if want == -1:
            out[i + lead] = d
        elif d not in (1, -1, want):
            raise ShapeError(
                "expand",
                f"cannot expand shape {list(src)} to {list(shape)} (dim {i}: {d} vs {want})",
                user_location(),
            )
    return tuple(out)


def reduce_as(x: Any, target: Any):
    """Sum ``x`` down to ``target``'s shape (no-op when the shapes are known to be equal)."""
    sx, st = shape_of(x), shape_of(target)
    if sx == st and -1 not in sx:
        return x
    return ReduceAs(x, target)


def expand_as(x: Any, y: Any, name: str | None = None):
    """Broadcast ``x`` to the shape of ``y``."""
    return ExpandAs(x, y)


def broadcast_to(x: Any, shape: Any, name: str | None = None):
    """Broadcast ``x`` to ``shape`` (Paddle's ``broadcast_to``; -1 keeps a dim). While
    tracing, ``shape`` may hold traced dims or be a 1-D int tensor."""
    from autostatic_runtime.ops.shape_tensor import ExpandDynamic, shape_tensor

    dynamic = shape_tensor(shape, "expand")
    if dynamic is not None:
        return ExpandDynamic(x, dynamic[1], static=dynamic[0])
    return Expand(x, shape=_int_shape(shape))


def expand(x: Any, shape: Any, name: str | None = None):
    """Alias of ``broadcast_to`` (Paddle's ``expand``)."""
    return broadcast_to(x, shape)


def broadcast_shape(x_shape: Any, y_shape: Any) -> list:
    """The broadcast of two shapes (Paddle's ``broadcast_shape``)."""
    return list(broadcast(tuple(x_shape), tuple(y_shape)))


def broadcast_tensors(input: list, name: str | None = None) -> list:
    """Broadcast every tensor of ``input`` to their common shape."""
    shape = broadcast(*input, op="broadcast_tensors")
    return [Expand(t, shape=shape) for t in input]


def _int_shape(shape: Any) -> tuple:
    from autostatic_runtime.ops.manipulation import _ints

    return _ints(shape)

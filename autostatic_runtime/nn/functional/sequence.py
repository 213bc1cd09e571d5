"""Sequence helpers of Paddle 2.x ``paddle.nn.functional``: ``sequence_mask`` (padding masks
from lengths) and ``gather_tree`` (the backtrace of beam search)."""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import DTypeError, ShapeError, user_location
from autostatic_runtime.ops.registry import Spec, dtype_of, op, shape_of

__all__ = ["sequence_mask", "gather_tree"]


def sequence_mask(x: Any, maxlen: Any = None, dtype: Any = "int64", name: str | None = None):
    """``mask[..., j] = j < x[...]`` for ``j < maxlen``: the padding mask of sequences of
    lengths ``x`` (``maxlen`` defaults to ``max(x)``; it may be a traced int while tracing).

    Returns a tensor of shape ``x.shape + [maxlen]`` and dtype ``dtype``.
    """
    import autostatic_runtime as rt

    if not dtype_of(x).is_integer:
        raise DTypeError(
            "sequence_mask", f"lengths must be integers, got {dtype_of(x)}", user_location()
        )
    if maxlen is None:
        maxlen = rt.max(x)
    steps = rt.arange(maxlen, dtype=dtype_of(x))
    return rt.cast(steps < rt.unsqueeze(x, -1), dtypes.convert_dtype(dtype))


@op("gather_tree")
class GatherTree:
    """Full beam-search paths from per-step ``ids`` and ``parents`` ([steps, batch, beam]):
    walking back from the last step, each beam's token at step ``t`` is ``ids[t]`` at the
    beam its successor came from."""

    def infer(ids, parents):
        return Spec(shape_of(ids), dtype_of(ids))

    def kernel(xp, ids, parents):
        steps = ids.shape[0]
        if steps == 0:
            return xp.asarray(ids, copy=True)
        rows = [ids[steps - 1, ...]]
        parent = parents[steps - 1, ...]
        for t in range(steps - 2, -1, -1):
            rows.append(xp.take_along_axis(ids[t, ...], parent, axis=-1))
            parent = xp.take_along_axis(parents[t, ...], parent, axis=-1)
        return xp.stack(rows[::-1])

    grad = None


def gather_tree(ids: Any, parents: Any):
    """The token paths of beam search (Paddle's ``gather_tree``): ``ids`` and ``parents`` are
    int tensors of shape [max_time, batch, beam]; returns the ids along each final beam's
    ancestry, same shape."""
    if len(shape_of(ids)) != 3 or shape_of(ids) != shape_of(parents):
        raise ShapeError(
            "gather_tree",
            f"ids {list(shape_of(ids))} and parents {list(shape_of(parents))} must both be "
            "[max_time, batch, beam]",
            user_location(),
        )
    if not (dtype_of(ids).is_integer and dtype_of(parents).is_integer):
        raise DTypeError("gather_tree", "ids and parents must be integer tensors", user_location())
    if dtype_of(parents) != dtype_of(ids):
        import autostatic_runtime as rt

        parents = rt.cast(parents, dtype_of(ids))
    return GatherTree(ids, parents)

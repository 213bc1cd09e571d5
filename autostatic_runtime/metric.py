"""Metrics (Paddle 2.x ``paddle.metric``): ``accuracy``."""

from __future__ import annotations

from typing import Any

__all__ = ["accuracy"]


def accuracy(input: Any, label: Any, k: int = 1, correct: Any = None, total: Any = None,
             name: str | None = None):  # fmt: skip
    """Top-``k`` accuracy: the fraction of rows of ``input`` ([N, C] scores) whose ``k``
    largest scores include ``label`` ([N, 1] or [N] ints). Returns a float32 tensor of shape
    [1]; ``correct``/``total`` (int tensors), when given, receive the counts. Works eagerly
    and in static programs (``rt.static.accuracy`` is the same function)."""
    import autostatic_runtime as rt

    if label.ndim == input.ndim - 1:
        label = rt.unsqueeze(label, -1)
    _, indices = rt.topk(input, k=int(k), axis=-1)
    hits = rt.any(rt.equal(indices, rt.cast(label, indices.dtype)), axis=-1)
    num_correct = rt.reshape(rt.sum(rt.cast(hits, "int32")), [1])
    num_total = rt.reshape(rt.shape(hits)[0], [1])
    acc = rt.cast(num_correct, "float32") / rt.cast(num_total, "float32")
    if correct is not None:
        rt.assign(rt.cast(num_correct, correct.dtype), correct)
    if total is not None:
        rt.assign(rt.cast(num_total, total.dtype), total)
    return acc

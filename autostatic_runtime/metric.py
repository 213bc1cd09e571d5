"""Metrics (Paddle 2.x ``paddle.metric``): ``accuracy`` (an op, eager and static), ``Auc`` and
``chunk_eval`` (computed on the host from eager values between steps)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["accuracy", "Auc", "chunk_eval"]


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


class Auc:
    """The area under the ROC curve of binary predictions seen so far (Paddle's
    ``paddle.metric.Auc``): ``update`` bins the positive-class probabilities into
    ``num_thresholds + 1`` buckets per label, ``accumulate`` integrates the curve they make.

    Args:
        curve: 'ROC' (the only curve).
        num_thresholds: bucket count minus one.
        name: what ``name()`` returns.
    """

    def __init__(self, curve: str = "ROC", num_thresholds: int = 4095, name: str = "auc"):
        if curve != "ROC":
            raise ValueError(f"Auc: only curve='ROC' is supported, got {curve!r}")
        self._num_thresholds = int(num_thresholds)
        self._name = name
        self.reset()

    def update(self, preds: Any, labels: Any) -> None:
        """Add a batch: ``preds`` [N, 2] class probabilities (column 1: positive),
        ``labels`` [N] or [N, 1] of 0/1."""
        p = np.asarray(preds.numpy() if hasattr(preds, "numpy") else preds, dtype=np.float64)
        y = np.asarray(labels.numpy() if hasattr(labels, "numpy") else labels).reshape(-1)
        if p.ndim != 2 or p.shape[1] < 2 or p.shape[0] != y.shape[0]:
            raise ValueError(
                f"Auc.update: preds must be [N, 2] and labels [N] or [N, 1], got "
                f"{list(p.shape)} and {list(np.shape(labels))}"
            )
        bins = np.clip((p[:, 1] * self._num_thresholds).astype(np.int64), 0,
                       self._num_thresholds)  # fmt: skip
        np.add.at(self._stat_pos, bins[y != 0], 1)
        np.add.at(self._stat_neg, bins[y == 0], 1)

    def accumulate(self) -> float:
        """The area under the curve of everything added since the last ``reset``."""
        pos = np.cumsum(self._stat_pos[::-1])  # true positives from the highest threshold down
        neg = np.cumsum(self._stat_neg[::-1])
        if pos[-1] <= 0 or neg[-1] <= 0:
            return 0.0
        prev_pos = np.concatenate([[0.0], pos[:-1]])
        prev_neg = np.concatenate([[0.0], neg[:-1]])
        area = np.sum(np.abs(neg - prev_neg) * (pos + prev_pos) / 2.0)
        return float(area / pos[-1] / neg[-1])

    def reset(self) -> None:
        """Forget what was added."""
        self._stat_pos = np.zeros(self._num_thresholds + 1)
        self._stat_neg = np.zeros(self._num_thresholds + 1)

    def name(self) -> str:
        return self._name


def _segments(tags: Any, num_chunk_types: int, num_tag_types: int, begin: int, inside: int,
              end: int, single: int, excluded: set) -> set:  # fmt: skip
    """The chunks ``(start, stop, type)`` of one tag sequence (Paddle's chunk rules)."""
    other = num_chunk_types
    found, start, in_chunk = set(), 0, False
    tag, kind = -1, other
    for i, label in enumerate(int(v) for v in tags):
        prev_tag, prev_kind = tag, kind
        tag, kind = label % num_tag_types, label // num_tag_types
        if in_chunk and prev_kind != other and (
            kind == other or kind != prev_kind or prev_tag in (end, single)
            or (prev_tag in (begin, inside) and tag == begin)
        ):  # fmt: skip
            if prev_kind not in excluded:
                found.add((start, i - 1, prev_kind))
            in_chunk = False
        starts = kind != other if prev_kind == other else (
            kind != other and (kind != prev_kind or tag in (begin, single)))  # fmt: skip
        if starts:
            start, in_chunk = i, True
    if in_chunk and kind not in excluded:
        found.add((start, len(tags) - 1, kind))
    return found


_SCHEMES = {"IOB": (2, 0, 1, -1, -1), "IOE": (2, -1, 0, 1, -1), "IOBES": (4, 0, 1, 2, 3),
            "plain": (1, -1, -1, -1, -1)}  # fmt: skip


def chunk_eval(input: Any, label: Any, seq_length: Any = None, num_chunk_types: int = 1,
               chunk_scheme: str = "IOB", excluded_chunk_types: Any = None):  # fmt: skip
    """Chunk precision, recall and F1 of tagged sequences (Paddle's ``chunk_eval``, padded
    form): ``input``/``label`` [N, T] (or [N, T, 1]) tag ids, ``seq_length`` [N]. Returns
    ``(precision, recall, f1, num_infer_chunks, num_label_chunks, num_correct_chunks)`` as
    [1] tensors. Evaluated on the host from eager values (a metric between steps)."""
    import autostatic_runtime as rt

    if not all(isinstance(t, rt.Tensor) for t in (input, label)):
        raise rt.AutostaticError(
            "chunk_eval: evaluate it on the eager results of a step (after the call), not "
            "inside a converted function"
        )
    if chunk_scheme not in _SCHEMES:
        raise ValueError(f"chunk_eval: chunk_scheme must be one of {sorted(_SCHEMES)}")
    infer, gold = input.numpy(), label.numpy()
    infer, gold = infer.reshape(infer.shape[0], -1), gold.reshape(gold.shape[0], -1)
    lengths = ([infer.shape[1]] * infer.shape[0] if seq_length is None
               else [int(v) for v in np.asarray(seq_length.numpy()).reshape(-1)])  # fmt: skip
    rules = (num_chunk_types, *_SCHEMES[chunk_scheme], set(excluded_chunk_types or ()))
    n_infer = n_label = n_correct = 0
    for row, length in enumerate(lengths):
        got = _segments(infer[row, :length], *rules)
        want = _segments(gold[row, :length], *rules)
        n_infer, n_label, n_correct = n_infer + len(got), n_label + len(want), (
            n_correct + len(got & want))  # fmt: skip
    precision = n_correct / n_infer if n_infer else 0.0
    recall = n_correct / n_label if n_label else 0.0
    f1 = 2 * precision * recall / (precision + recall) if n_correct else 0.0
    floats = [rt.to_tensor([v], dtype="float32") for v in (precision, recall, f1)]
    return (*floats, *(rt.to_tensor([v], dtype="int64") for v in (n_infer, n_label, n_correct)))

"""Linear-chain CRF: the sequence tagger's cost ``linear_chain_crf`` and its Viterbi decoder
``crf_decoding`` (Paddle's ops of those names, padded form: ``[N, T, D]`` emissions and a
length per sequence).

The transition parameter ``w`` is ``[D + 2, D]``: row 0 scores starting in a tag, row 1
ending in it, rows ``2 + i`` moving from tag ``i`` to each tag. For one sequence of length
``L`` with emissions ``x`` and tags ``y``:

    score(y) = w[0, y0] + sum_t x[t, y_t] + sum_{0<t<L} w[2 + y_{t-1}, y_t] + w[1, y_{L-1}]
    linear_chain_crf = log Z - score(y)          (the negative log-likelihood, [N, 1])
    crf_decoding     = argmax_y score(y)         ([N, T] int64, 0 past each length)

``log Z`` comes from the forward recursion in log space, run over the batch at once and
frozen past each sequence's length. The gradient op runs the backward recursion:
``d/dx = marginals - onehot(y)``, ``d/dw`` = expected minus observed start, end and
transition counts.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import DTypeError, user_location
from autostatic_runtime.nn.functional._utils import shape_error
from autostatic_runtime.ops.registry import Spec, dtype_of, op, require_float, shape_of

__all__ = ["linear_chain_crf", "crf_decoding"]


def _logsumexp(xp, a, axis: int):
    top = xp.max(a, axis=axis, keepdims=True)
    top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    return xp.squeeze(top, axis=axis) + xp.log(xp.sum(xp.exp(a - top), axis=axis))


def _lengths(xp, length, n: int, t: int):
    if length is None:
        return xp.full((n,), t, dtype=xp.int64)
    return xp.astype(xp.reshape(length, (n,)), xp.int64)


def _onehot(xp, labels, d: int, dtype):
    """``[..., D]`` float one-hot rows of int ``labels``."""
    return xp.astype(labels[..., None] == xp.arange(d, dtype=labels.dtype), dtype)


def _forward(xp, x, w, lengths):
    """The log-space forward table ``[N, T, D]`` (frozen past each length) and log Z [N]."""
    n, t_max, _ = x.shape
    start, end, trans = w[0, :], w[1, :], w[2:, :]
    alpha = start[None, :] + x[:, 0, :]
    table = [alpha]
    for t in range(1, t_max):
        step = _logsumexp(xp, alpha[:, :, None] + trans[None, :, :], 1) + x[:, t, :]
        alpha = xp.where((lengths > t)[:, None], step, alpha)
        table.append(alpha)
    return xp.stack(table, axis=1), _logsumexp(xp, alpha + end[None, :], 1)


def _gold_score(xp, x, w, labels, lengths):
    """``score(y)`` of the given tags [N]."""
    n, t_max, d = x.shape
    steps = xp.arange(t_max, dtype=xp.int64)
    inside = xp.astype(steps[None, :] < lengths[:, None], x.dtype)  # [N, T]
    hot = _onehot(xp, labels, d, x.dtype)  # [N, T, D]
    score = xp.sum(xp.sum(x * hot, axis=2) * inside, axis=1)
    score = score + xp.sum(w[0, :][None, :] * hot[:, 0, :], axis=1)
    last = xp.take_along_axis(labels, xp.maximum(lengths - 1, 0)[:, None], axis=1)
    score = score + xp.sum(w[1, :][None, :] * _onehot(xp, last[:, 0], d, x.dtype), axis=1)
    if t_max > 1:
        trans = w[2:, :][None, None, :, :]
        pairs = xp.sum(hot[:, :-1, :, None] * hot[:, 1:, None, :] * trans, axis=(2, 3))
        score = score + xp.sum(pairs * inside[:, 1:], axis=1)
    return score


@op("linear_chain_crf")
class LinearChainCRF:
    """The negative log-likelihood ``[N, 1]`` of tags ``label`` [N, T] under a linear-chain
    CRF (emissions ``x`` [N, T, D], transitions ``w`` [D + 2, D], lengths [N] or None), with
    Paddle's other outputs: the forward table (log space), exp of the emissions (each row
    shifted by its max) and exp of the transitions."""

    multi_output = True
    nondiff_outputs = (0, 1, 2)

    def infer(x, w, label, length):
        n, t, d = shape_of(x)
        return (Spec((n, t, d), dtype_of(x)), Spec((n, t, d), dtype_of(x)),
                Spec(tuple(shape_of(w)), dtype_of(w)), Spec((n, 1), dtype_of(x)))  # fmt: skip

    def kernel(xp, x, w, label, length):
        n, t, _ = x.shape
        lengths = _lengths(xp, length, n, t)
        table, log_z = _forward(xp, x, w, lengths)
        nll = log_z - _gold_score(xp, x, w, xp.astype(label, xp.int64), lengths)
        exps = xp.exp(x - xp.max(x, axis=2, keepdims=True))
        return table, exps, xp.exp(w), xp.reshape(nll, (n, 1))

    def grad(gs, outs, x, w, label, length):
        dx, dw = LinearChainCRFGrad(x, w, label, length, outs[0], gs[3])
        return dx, dw, None, None


@op("linear_chain_crf_grad")
class LinearChainCRFGrad:
    """The gradients of ``linear_chain_crf``'s cost (scaled by ``g`` [N, 1]) w.r.t. the
    emissions and the transitions, from the forward table and the backward recursion."""

    multi_output = True
    grad = None  # no second derivatives of the CRF cost

    def infer(x, w, label, length, table, g):
        return Spec(tuple(shape_of(x)), dtype_of(x)), Spec(tuple(shape_of(w)), dtype_of(w))

    def kernel(xp, x, w, label, length, table, g):
        n, t_max, d = x.shape
        lengths = _lengths(xp, length, n, t_max)
        labels = xp.astype(label, xp.int64)
        end, trans = w[1, :], w[2:, :]
        at_last = xp.maximum(lengths - 1, 0)[:, None, None] * xp.ones((1, 1, d), dtype=xp.int64)
        last = xp.take_along_axis(table, at_last, axis=1)[:, 0, :]
        log_z = _logsumexp(xp, last + end[None, :], 1)
        beta = xp.broadcast_to(end[None, :], (n, d))
        betas = [beta]
        for t in range(t_max - 2, -1, -1):
            step = _logsumexp(xp, trans[None, :, :] + (x[:, t + 1, :] + beta)[:, None, :], 2)
            beta = xp.where((lengths - 1 > t)[:, None], step, beta)
            betas.append(beta)
        beta_table = xp.stack(betas[::-1], axis=1)  # [N, T, D]
        steps = xp.arange(t_max, dtype=xp.int64)
        inside = xp.astype(steps[None, :] < lengths[:, None], x.dtype)[:, :, None]
        scale = xp.reshape(g, (n, 1, 1))
        hot = _onehot(xp, labels, d, x.dtype)
        marginal = xp.exp(table + beta_table - log_z[:, None, None])
        dx = (marginal - hot) * inside * scale
        is_last = xp.astype(steps[None, :] == (lengths - 1)[:, None], x.dtype)[:, :, None]
        d_start = xp.sum((marginal[:, 0, :] - hot[:, 0, :]) * scale[:, 0, :], axis=0)
        d_end = xp.sum(xp.sum((marginal - hot) * is_last, axis=1) * scale[:, 0, :], axis=0)
        d_trans = xp.zeros((d, d), dtype=x.dtype)
        if t_max > 1:
            ahead = (x[:, 1:, :] + beta_table[:, 1:, :])[:, :, None, :]
            pair = table[:, :-1, :, None] + trans[None, None, :, :] + ahead
            pair = pair - log_z[:, None, None, None]
            observed = hot[:, :-1, :, None] * hot[:, 1:, None, :]
            weight = inside[:, 1:, :, None] * scale[:, :, :, None]
            d_trans = xp.sum((xp.exp(pair) - observed) * weight, axis=(0, 1))
        dw = xp.concat([d_start[None, :], d_end[None, :], d_trans], axis=0)
        return dx, dw


@op("crf_decoding")
class CRFDecoding:
    """The highest-scoring tags ``[N, T]`` int64 (Viterbi; 0 past each length) of
    emissions ``x`` [N, T, D] under transitions ``w`` [D + 2, D]; given ``label``, 1 where
    the decoded tag equals it and 0 elsewhere (Paddle's)."""

    grad = None

    def infer(x, w, label, length):
        n, t, _ = shape_of(x)
        return Spec((n, t), "int64")

    def kernel(xp, x, w, label, length):
        n, t_max, d = x.shape
        lengths = _lengths(xp, length, n, t_max)
        start, end, trans = w[0, :], w[1, :], w[2:, :]
        delta = start[None, :] + x[:, 0, :]
        pointers = []
        for t in range(1, t_max):
            scores = delta[:, :, None] + trans[None, :, :]  # from i (axis 1) to j
            best = xp.argmax(scores, axis=1)
            step = xp.max(scores, axis=1) + x[:, t, :]
            delta = xp.where((lengths > t)[:, None], step, delta)
            pointers.append(best)
        current = xp.argmax(delta + end[None, :], axis=1)
        path = []
        for t in range(t_max - 1, -1, -1):
            if t < t_max - 1:  # follow the pointer into step t + 1 where it lies inside
                back = xp.take_along_axis(pointers[t], current[:, None], axis=1)[:, 0]
                current = xp.where(lengths - 1 > t, back, current)
            path.append(xp.where(lengths > t, current, xp.zeros_like(current)))
        path = xp.astype(xp.stack(path[::-1], axis=1), xp.int64)
        if label is None:
            return path
        hit = path == xp.reshape(xp.astype(label, xp.int64), path.shape)
        inside = xp.arange(t_max, dtype=xp.int64)[None, :] < lengths[:, None]
        return xp.astype(hit & inside, xp.int64)


def _checked(op_name: str, x: Any, w: Any, label: Any, length: Any) -> Any:
    require_float(op_name, x, w)
    xs, ws = list(x.shape), list(w.shape)
    if len(xs) != 3 or len(ws) != 2 or (ws[1] >= 0 and xs[2] >= 0 and ws != [xs[2] + 2, xs[2]]):
        raise shape_error(
            op_name,
            f"expects emissions [N, T, D] and transitions [D + 2, D], got {xs} and {ws} (the "
            "padded form: pass the lengths as Length)",
        )
    if label is not None and not dtypes.convert_dtype(label.dtype).is_integer:
        raise DTypeError(op_name, f"label must hold int tag ids, got {label.dtype}",
                         user_location())  # fmt: skip
    if label is not None and len(label.shape) == 3:
        from autostatic_runtime.ops.manipulation import squeeze

        label = squeeze(label, [2])  # Paddle's [N, T, 1]
    return label


def linear_chain_crf(input: Any, transition: Any, label: Any, length: Any = None):
    """``(alpha, emission_exps, transition_exps, log_likelihood)`` as Paddle's op: the last
    is the cost ``log Z - score(label)`` per sequence, ``[N, 1]`` (differentiable w.r.t.
    ``input`` and ``transition``). ``input`` [N, T, D], ``transition`` [D + 2, D], ``label``
    [N, T] or [N, T, 1] ints, ``length`` [N] (None: every sequence has T steps)."""
    label = _checked("linear_chain_crf", input, transition, label, length)
    return LinearChainCRF(input, transition, label, length)


def crf_decoding(input: Any, transition: Any, label: Any = None, length: Any = None):
    """The Viterbi tags ``[N, T]`` int64 of ``input`` [N, T, D] under ``transition``
    [D + 2, D] (0 past each ``length``); with ``label``, 1 where they agree with it."""
    label = _checked("crf_decoding", input, transition, label, length)
    return CRFDecoding(input, transition, label, length)

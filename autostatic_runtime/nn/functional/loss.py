"""Loss functions (Paddle's ``paddle.nn.functional`` losses).

Fused ops:
    softmax_with_cross_entropy(logits, label) -> softmax, loss    (stable, log-sum-exp)
    softmax_with_cross_entropy_grad(g, softmax, label)            (softmax - onehot) * g
    nll_loss(x, label, weight) -> loss, sample_weight             (-x[label] * w[label])
    nll_loss_grad(g, label, weight, x)                            its adjoint

Hard labels have the logits' shape with the class axis of size 1, or that axis left out;
the loss then has the label's shape. Soft labels have the logits' shape and the loss keeps
the class axis as size 1. Labels equal to ``ignore_index`` give zero loss and gradient.
Reductions follow Paddle: a weighted mean divides by the sum of the picked class weights;
an unweighted mean divides by the count of non-ignored labels only when
``ignore_index >= 0`` (otherwise by the number of elements).
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.autograd import is_grad_enabled
from autostatic_runtime.creation import ones_like, zeros_like
from autostatic_runtime.errors import OpError, user_location
from autostatic_runtime.nn.functional._utils import (
    check_reduction,
    op_error,
    reduce_loss,
    shape_error,
)
from autostatic_runtime.nn.functional.activation import (
    LogSigmoid,
    LogSoftmax,
    Softmax,
    SoftmaxGrad,
)
from autostatic_runtime.ops import elementwise as E
from autostatic_runtime.ops import reduce as R
from autostatic_runtime.ops.registry import Spec, dtype_of, normalize_axis, op, shape_of

__all__ = [
    "cross_entropy", "softmax_with_cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "margin_ranking_loss", "square_error_cost", "log_loss",
]  # fmt: skip


# ---- kernel helpers --------------------------------------------------------------------------


def _along(xp, v, ndim: int, axis: int):
    shape = [1] * ndim
    shape[axis] = -1
    return xp.reshape(v, tuple(shape))


def _hard(xp, label, ndim: int, axis: int):
    """The label with the class axis present (size 1)."""
    return label if label.ndim == ndim else xp.expand_dims(label, axis=axis)


def _onehot(xp, lab, n: int, ndim: int, axis: int):
    return lab == _along(xp, xp.arange(n, dtype=lab.dtype), ndim, axis)


def _check_labels(xp, lab, n: int, ignore_index: int, op_name: str) -> None:
    if not lab.size or not xp.checks_values:
        return
    lo, hi = int(xp.min(lab)), int(xp.max(lab))  # the common case: two reads, no mask
    if (0 <= lo and hi < n) or not bool(xp.any(((lab < 0) | (lab >= n)) & (lab != ignore_index))):
        return
    raise OpError(
        op_name,
        f"label values must be in [0, {n}) (or equal ignore_index="
        f"{ignore_index}); got values in [{lo}, {hi}] for "
        f"{n} classes",
        user_location(),
    )


def _loss_shape(x_shape: tuple, label_shape: tuple, soft: bool, axis: int, op_name: str):
    """Shape of the per-sample loss, or a ShapeError naming both shapes."""
    x_shape, label_shape = tuple(x_shape), tuple(label_shape)
    kept = x_shape[:axis] + (1,) + x_shape[axis + 1 :]
    if soft:
        ok = len(label_shape) == len(x_shape) and all(
            a == b or -1 in (a, b) for a, b in zip(label_shape, x_shape, strict=True)
        )
        if not ok:
            raise shape_error(
                op_name,
                f"soft labels must have the input's shape {list(x_shape)}, got {list(label_shape)}",
            )
        return kept
    dropped = x_shape[:axis] + x_shape[axis + 1 :]
    for want in (kept, dropped):
        if len(label_shape) == len(want) and all(
            a == b or -1 in (a, b) for a, b in zip(label_shape, want, strict=True)
        ):
            return label_shape
    raise shape_error(
        op_name,
        f"hard labels for input shape {list(x_shape)} (class axis "
        f"{axis}) must have shape {list(dropped)} or {list(kept)}, got "
        f"{list(label_shape)}",
    )


# ---- softmax with cross entropy --------------------------------------------------------------


@op("softmax_with_cross_entropy")
class SoftmaxWithCrossEntropy:
    """Softmax of ``logits`` along ``axis`` and the cross entropy with ``label``.

    The softmax output carries no gradient (as in Paddle); the loss does.
    """

    multi_output = True
    nondiff_outputs = (0,)

    def infer(logits, label, soft_label, ignore_index, axis):
        loss = _loss_shape(
            shape_of(logits), shape_of(label), soft_label, axis, "softmax_with_cross_entropy"
        )
        return Spec(shape_of(logits), dtype_of(logits)), Spec(loss, dtype_of(logits))

    def kernel(xp, logits, label, soft_label, ignore_index, axis):
        shifted = logits - xp.max(logits, axis=axis, keepdims=True)
        logp = shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
        if soft_label:
            return xp.exp(logp), -xp.sum(label * logp, axis=axis, keepdims=True)
        n = logits.shape[axis]
        lab = xp.astype(_hard(xp, label, logits.ndim, axis), xp.int64)
        if xp.checks_values and lab.size and int(xp.min(lab)) >= 0 and not 0 <= ignore_index < n:
            try:  # the common case: every label is a class (take_along_axis checks < n)
                loss = -xp.take_along_axis(logp, lab, axis=axis)
            except IndexError:
                _check_labels(xp, lab, n, ignore_index, "softmax_with_cross_entropy")
                raise
        else:
            _check_labels(xp, lab, n, ignore_index, "softmax_with_cross_entropy")
            ignored = lab == ignore_index
            safe = xp.where(ignored, xp.zeros_like(lab), lab)
            picked = xp.take_along_axis(logp, safe, axis=axis)
            loss = xp.where(ignored, xp.zeros_like(picked), -picked)
        return xp.exp(logp), xp.reshape(loss, tuple(label.shape))

    def grad(gs, outs, logits, label, soft_label, ignore_index, axis):
        g_sm, g_loss = gs
        # the softmax output carries no gradient: recompute it when this backward must itself
        # be differentiable (create_graph), so higher-order gradients see its dependence
        sm = Softmax(logits, axis=axis) if is_grad_enabled() else outs[0]
        attrs = dict(soft_label=soft_label, ignore_index=ignore_index, axis=axis)
        d = SoftmaxCrossEntropyGrad(g_loss, sm, label, **attrs)
        if g_sm is not None:
            d = d + SoftmaxGrad(g_sm, sm, axis=axis)
        d_label = -g_loss * LogSoftmax(logits, axis=axis) if soft_label else None
        return d, d_label


@op("softmax_with_cross_entropy_grad")
class SoftmaxCrossEntropyGrad:
    """``(softmax - onehot(label)) * g`` (hard) or ``(softmax * sum(label) - label) * g``."""

    def infer(g, softmax, label, soft_label, ignore_index, axis):
        return Spec(shape_of(softmax), dtype_of(softmax))

    def kernel(xp, g, softmax, label, soft_label, ignore_index, axis):
        nd = softmax.ndim
        g = g if g.ndim == nd else xp.expand_dims(g, axis=axis)
        if soft_label:
            return (softmax * xp.sum(label, axis=axis, keepdims=True) - label) * g
        lab = _hard(xp, label, nd, axis)
        hot = xp.astype(_onehot(xp, lab, softmax.shape[axis], nd, axis), softmax.dtype)
        valid = xp.astype(lab != ignore_index, softmax.dtype)
        return (softmax - hot) * (g * valid)

    def grad(gg, out, g, softmax, label, soft_label, ignore_index, axis):
        attrs = dict(soft_label=soft_label, ignore_index=ignore_index, axis=axis)
        unit = SoftmaxCrossEntropyGrad(ones_like(g), softmax, label, **attrs)
        d_g = R.sum(gg * unit, axis=axis, keepdim=g.ndim == softmax.ndim)
        # the op is linear in softmax: d/d softmax = op(g, gg) - op(g, 0)
        d_sm = SoftmaxCrossEntropyGrad(g, gg, label, **attrs) - SoftmaxCrossEntropyGrad(
            g, zeros_like(gg), label, **attrs
        )
        d_label = None
        if soft_label:
            d_label = g * (R.sum(gg * softmax, axis=axis, keepdim=True) - gg)
        return d_g, d_sm, d_label


# ---- nll -------------------------------------------------------------------------------------


def _picked_weight(xp, hot, lab, weight, ignore_index, like, axis):
    """Per-sample weight ``weight[label]`` (1 without weights), 0 for ignored labels."""
    valid = xp.astype(lab != ignore_index, like.dtype)
    if weight is None:
        return valid
    w = _along(xp, weight, like.ndim, axis)
    picked = xp.sum(xp.where(hot, w, xp.zeros_like(w)), axis=axis, keepdims=True)
    return picked * valid


@op("nll_loss")
class NllLoss:
    """``-x[label] * weight[label]`` along the class ``axis``, and that picked weight."""

    multi_output = True
    nondiff_outputs = (1,)

    def infer(x, label, weight, ignore_index, axis):
        shape = _loss_shape(shape_of(x), shape_of(label), False, axis, "nll_loss")
        return Spec(shape, dtype_of(x)), Spec(shape, dtype_of(x))

    def kernel(xp, x, label, weight, ignore_index, axis):
        n = x.shape[axis]
        lab = _hard(xp, label, x.ndim, axis)
        _check_labels(xp, lab, n, ignore_index, "nll_loss")
        hot = _onehot(xp, lab, n, x.ndim, axis)
        sw = _picked_weight(xp, hot, lab, weight, ignore_index, x, axis)
        picked = xp.sum(xp.where(hot, x, xp.zeros_like(x)), axis=axis, keepdims=True)
        shape = tuple(label.shape)
        return xp.reshape(-picked * sw, shape), xp.reshape(sw, shape)

    def grad(gs, outs, x, label, weight, ignore_index, axis):
        dx = NllLossGrad(gs[0], label, weight, x, ignore_index=ignore_index, axis=axis)
        return dx, None, None


@op("nll_loss_grad")
class NllLossGrad:
    """The adjoint of nll_loss: ``-g * weight[label]`` placed at the label's class."""

    def infer(g, label, weight, x, ignore_index, axis):
        return Spec(shape_of(x), dtype_of(g))

    def kernel(xp, g, label, weight, x, ignore_index, axis):
        nd = x.ndim
        lab = _hard(xp, label, nd, axis)
        g = g if g.ndim == nd else xp.expand_dims(g, axis=axis)
        hot = _onehot(xp, lab, x.shape[axis], nd, axis)
        sw = _picked_weight(xp, hot, lab, weight, ignore_index, g, axis)
        return -xp.astype(hot, g.dtype) * (g * sw)

    def grad(gg, out, g, label, weight, x, ignore_index, axis):
        back = NllLoss(gg, label, weight, ignore_index=ignore_index, axis=axis)[0]
        return back, None, None, None


# ---- public: cross entropy -------------------------------------------------------------------


def _nonzero(den):
    """``den`` with zeros replaced by 1 (Paddle's ``den + (den == 0)``)."""
    return den + E.cast(den == 0.0, den.dtype)


def _smooth(input, label, axis: int, soft_label: bool, epsilon: float):
    """Hard labels to one-hot, then ``(1 - eps) * label + eps / C`` (soft labels)."""
    from autostatic_runtime.nn.functional.common import one_hot
    from autostatic_runtime.ops.manipulation import moveaxis, squeeze

    if not soft_label:
        if label.ndim == input.ndim:
            label = squeeze(label, axis)
        label = one_hot(label, input.shape[axis])
        if axis != input.ndim - 1:
            label = moveaxis(label, -1, axis)
    label = E.cast(label, input.dtype)
    return label * (1.0 - epsilon) + epsilon / input.shape[axis]


def _class_weight_soft(label, weight, axis: int):
    from autostatic_runtime.ops.manipulation import reshape

    shape = [1] * label.ndim
    shape[axis] = -1
    return R.sum(label * reshape(weight, shape), axis=axis, keepdim=True)


def _hard_label(label, input, axis: int):
    if label.dtype.is_floating:
        label = E.cast(label, dtypes.int64)
    if label.ndim == input.ndim and label.shape[axis] not in (1, -1):
        raise shape_error(
            "cross_entropy",
            f"hard labels with the input's rank need size 1 on "
            f"the class axis {axis}; got label shape "
            f"{list(label.shape)} for input {list(input.shape)} "
            f"(pass soft_label=True for distributions)",
        )
    return label


def cross_entropy(
    input: Any,
    label: Any,
    weight: Any = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    soft_label: bool = False,
    axis: int = -1,
    use_softmax: bool = True,
    label_smoothing: float = 0.0,
    name: str | None = None,
):
    """Cross entropy between ``input`` logits (probabilities if not ``use_softmax``) and labels.

    Hard labels: ints of shape input.shape without the class ``axis`` (or with it as 1).
    Soft labels (``soft_label=True``): distributions of the input's shape. ``weight`` has one
    entry per class. ``label_smoothing`` turns labels into smoothed soft labels.
    """
    check_reduction(reduction, "cross_entropy")
    if soft_label and ignore_index > 0:
        raise op_error(
            "cross_entropy",
            "ignore_index applies to hard labels only; leave it at -100 with soft_label=True",
        )
    axis = normalize_axis(axis, input.ndim, "cross_entropy")
    if label.ndim not in (input.ndim, input.ndim - 1):
        raise shape_error(
            "cross_entropy",
            f"label rank must be the input's ({input.ndim}) or "
            f"one less; got label shape {list(label.shape)} for "
            f"input {list(input.shape)}",
        )
    if weight is not None and input.shape[axis] not in (weight.shape[-1], -1):
        raise shape_error(
            "cross_entropy",
            f"weight has {weight.shape[-1]} entries but the "
            f"input {list(input.shape)} has {input.shape[axis]} "
            f"classes on axis {axis}",
        )
    if label_smoothing > 0.0:
        label, soft_label = _smooth(input, label, axis, soft_label, float(label_smoothing)), True
    elif soft_label:
        label = E.cast(label, input.dtype) if label.dtype != input.dtype else label
    else:
        label = _hard_label(label, input, axis)
    _loss_shape(input.shape, label.shape, soft_label, axis, "cross_entropy")
    attrs = dict(ignore_index=int(ignore_index), axis=axis)
    if use_softmax:
        loss = SoftmaxWithCrossEntropy(input, label, soft_label=bool(soft_label), **attrs)[1]
    elif soft_label:
        loss = -R.sum(label * E.log(input), axis=axis, keepdim=True)
    else:
        loss = NllLoss(E.log(input), label, None, **attrs)[0]
    sw = None
    if weight is not None:
        sw = (
            _class_weight_soft(label, weight, axis)
            if soft_label
            else NllLoss(input, label, weight, **attrs)[1]
        )
        loss = loss * sw
    if reduction != "mean":
        return reduce_loss(loss, reduction)
    if sw is not None:
        return R.sum(loss) / _nonzero(R.sum(sw))
    if not soft_label and ignore_index >= 0:
        count = R.sum(NllLoss(input, label, None, **attrs)[1])
        return R.sum(loss) / _nonzero(count)
    return R.mean(loss)


def softmax_with_cross_entropy(
    logits: Any,
    label: Any,
    soft_label: bool = False,
    ignore_index: int = -100,
    numeric_stable_mode: bool = True,
    return_softmax: bool = False,
    axis: int = -1,
):
    """Per-sample softmax cross entropy (the loss keeps the class axis as size 1 for labels
    of the logits' rank). With ``return_softmax`` also the softmax (no gradient through it)."""
    axis = normalize_axis(axis, logits.ndim, "softmax_with_cross_entropy")
    if soft_label:
        label = E.cast(label, logits.dtype) if label.dtype != logits.dtype else label
    else:
        label = _hard_label(label, logits, axis)
    _loss_shape(logits.shape, label.shape, soft_label, axis, "softmax_with_cross_entropy")
    sm, loss = SoftmaxWithCrossEntropy(
        logits, label, soft_label=bool(soft_label), ignore_index=int(ignore_index), axis=axis
    )
    return (loss, sm) if return_softmax else loss


def nll_loss(
    input: Any,
    label: Any,
    weight: Any = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    name: str | None = None,
):
    """Negative log likelihood of log-probabilities ``input`` [N, C, d...] at labels [N, d...].

    'mean' divides by the sum of the picked class weights (the count without ``weight``).
    """
    check_reduction(reduction, "nll_loss")
    if input.ndim < 2 or label.ndim != input.ndim - 1:
        raise shape_error(
            "nll_loss",
            f"expects input [N, C, d...] and label [N, d...]; got "
            f"input {list(input.shape)} and label {list(label.shape)}",
        )
    label = _hard_label(label, input, 1)
    out, sw = NllLoss(input, label, weight, ignore_index=int(ignore_index), axis=1)
    if reduction == "mean":
        return R.sum(out) / R.sum(sw)
    return reduce_loss(out, reduction)


# ---- binary cross entropy --------------------------------------------------------------------


def _clipped_log(xp, v):
    """``max(log(v), -100)`` without evaluating log(0)."""
    return xp.maximum(xp.log(xp.maximum(v, 1e-44)), -100.0)


@op("bce_loss")
class BCELoss:
    """``-(label * log(x) + (1 - label) * log(1 - x))`` with the logs clipped at -100."""

    def infer(x, label):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, label):
        return -(label * _clipped_log(xp, x) + (1.0 - label) * _clipped_log(xp, 1.0 - x))

    def grad(g, out, x, label):
        # Paddle's form: finite at x = 0 and x = 1
        dx = g * (x - label) / E.maximum((1.0 - x) * x, 1e-12)
        dlabel = g * (BCELoss(x, ones_like(label)) - BCELoss(x, zeros_like(label)))
        return dx, dlabel


# ---- public: regression and binary losses ----------------------------------------------------


def mse_loss(input: Any, label: Any, reduction: str = "mean", name: str | None = None):
    """Mean squared error ``(input - label)^2``, reduced."""
    check_reduction(reduction, "mse_loss")
    d = input - label
    return reduce_loss(d * d, reduction)


def square_error_cost(input: Any, label: Any):
    """Elementwise ``(input - label)^2``."""
    d = input - label
    return d * d


def l1_loss(input: Any, label: Any, reduction: str = "mean", name: str | None = None):
    """Mean absolute error ``|input - label|``, reduced."""
    check_reduction(reduction, "l1_loss")
    return reduce_loss(E.abs(input - label), reduction)


def smooth_l1_loss(
    input: Any, label: Any, reduction: str = "mean", delta: float = 1.0, name: str | None = None
):
    """Huber loss: ``0.5 r^2`` where ``|r| < delta``, else ``delta * (|r| - 0.5 delta)``."""
    check_reduction(reduction, "smooth_l1_loss")
    delta = float(delta)
    r = E.abs(input - label)
    small = r * r * 0.5
    large = (r - 0.5 * delta) * delta
    return reduce_loss(E.where(r < delta, small, large), reduction)


def binary_cross_entropy(
    input: Any, label: Any, weight: Any = None, reduction: str = "mean", name: str | None = None
):
    """``-(label log p + (1 - label) log(1 - p))`` for probabilities ``p``; logs clipped at
    -100 as Paddle does."""
    check_reduction(reduction, "binary_cross_entropy")
    out = BCELoss(input, label)
    if weight is not None:
        out = out * weight
    return reduce_loss(out, reduction)


def binary_cross_entropy_with_logits(
    logit: Any,
    label: Any,
    weight: Any = None,
    reduction: str = "mean",
    pos_weight: Any = None,
    name: str | None = None,
):
    """Sigmoid cross entropy from logits, stably: ``logit * (1 - label) - log_sigmoid(logit)``.

    As in Paddle, ``pos_weight`` scales the loss by ``1 + (pos_weight - 1) * label``.
    """
    check_reduction(reduction, "binary_cross_entropy_with_logits")
    out = logit * (1.0 - label) - LogSigmoid(logit)
    if pos_weight is not None:
        out = out * (label * (pos_weight - 1.0) + 1.0)
    if weight is not None:
        out = out * weight
    return reduce_loss(out, reduction)


def kl_div(input: Any, label: Any, reduction: str = "mean", name: str | None = None):
    """``label * (log(label) - input)`` where ``label > 0`` (input holds log-probabilities).

    ``reduction``: 'none', 'mean' (over all elements), 'batchmean' (sum / batch size), 'sum'.
    """
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise op_error(
            "kl_div", f"reduction must be 'none', 'mean', 'sum' or 'batchmean', got {reduction!r}"
        )
    pos = label > 0.0
    safe = E.where(pos, label, 1.0)
    out = E.where(pos, label * (E.log(safe) - input), 0.0)
    if reduction == "batchmean":
        return R.sum(out) / _batch_size(input)
    return reduce_loss(out, reduction)


def _batch_size(x):
    """The leading dim as a number, or as a tensor when a static shape leaves it unknown."""
    if x.ndim == 0 or x.shape[0] >= 0:
        return x.shape[0] if x.ndim else 1
    rest = 1
    for d in x.shape[1:]:
        if d < 0:
            raise op_error(
                "kl_div", f"'batchmean' needs the non-batch dims known, got shape {list(x.shape)}"
            )
        rest *= d
    return E.cast(R.numel(x), x.dtype) / rest


def margin_ranking_loss(
    input: Any,
    other: Any,
    label: Any,
    margin: float = 0.0,
    reduction: str = "mean",
    name: str | None = None,
):
    """``max(0, -label * (input - other) + margin)``, reduced."""
    check_reduction(reduction, "margin_ranking_loss")
    return reduce_loss(E.relu(-label * (input - other) + float(margin)), reduction)


def log_loss(input: Any, label: Any, epsilon: float = 1e-4, name: str | None = None):
    """``-label log(input + eps) - (1 - label) log(1 - input + eps)``."""
    eps = float(epsilon)
    return -label * E.log(input + eps) - (1.0 - label) * E.log(1.0 - input + eps)

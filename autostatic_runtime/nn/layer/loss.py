"""Loss layers (Paddle 2.x ``paddle.nn`` losses): each stores its options and calls the
functional loss of the same name with ``forward(input, label)``."""

from __future__ import annotations

from typing import Any

from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.layer.layers import Layer

__all__ = [
    "CrossEntropyLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss",
    "SmoothL1Loss", "KLDivLoss",
]  # fmt: skip

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(owner: str, reduction: str) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{owner}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


class CrossEntropyLoss(Layer):
    """Softmax cross entropy of logits ``input`` against class ids (or soft labels).

    Args:
        weight: per-class weights (a Tensor of C entries).
        ignore_index: label value that contributes nothing (hard labels only).
        reduction: 'mean' (weighted mean), 'sum' or 'none'.
        soft_label: ``label`` holds probabilities with the shape of ``input``.
        axis: the class axis.
        use_softmax: False when ``input`` already holds probabilities.
        label_smoothing: mix the one-hot labels with a uniform distribution.
    """

    def __init__(
        self,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        soft_label: bool = False,
        axis: int = -1,
        use_softmax: bool = True,
        label_smoothing: float = 0.0,
        name: str | None = None,
    ):
        super().__init__()
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction = _check_reduction("CrossEntropyLoss", reduction)
        self.soft_label, self.axis, self.use_softmax = soft_label, axis, use_softmax
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, label: Any) -> Any:
        extra = {"label_smoothing": self.label_smoothing} if self.label_smoothing else {}
        return F.cross_entropy(
            input,
            label,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            soft_label=self.soft_label,
            axis=self.axis,
            use_softmax=self.use_softmax,
            **extra,
        )


class MSELoss(Layer):
    """Squared error ``(input - label) ** 2``, reduced."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _check_reduction("MSELoss", reduction)

    def forward(self, input: Any, label: Any) -> Any:
        return F.mse_loss(input, label, reduction=self.reduction)


class L1Loss(Layer):
    """Absolute error ``|input - label|``, reduced."""

    def __init__(self, reduction: str = "mean", name: str | None = None):
        super().__init__()
        self.reduction = _check_reduction("L1Loss", reduction)

    def forward(self, input: Any, label: Any) -> Any:
        return F.l1_loss(input, label, reduction=self.reduction)


class BCELoss(Layer):
    """Binary cross entropy of probabilities ``input`` against 0/1 ``label``."""

    def __init__(self, weight: Any = None, reduction: str = "mean", name: str | None = None):
        super().__init__()
        self.weight = weight
        self.reduction = _check_reduction("BCELoss", reduction)

    def forward(self, input: Any, label: Any) -> Any:
        return F.binary_cross_entropy(input, label, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(Layer):
    """Binary cross entropy of ``sigmoid(logit)``, computed stably; ``pos_weight`` scales the
    positive term."""

    def __init__(
        self,
        weight: Any = None,
        reduction: str = "mean",
        pos_weight: Any = None,
        name: str | None = None,
    ):
        super().__init__()
        self.weight, self.pos_weight = weight, pos_weight
        self.reduction = _check_reduction("BCEWithLogitsLoss", reduction)

    def forward(self, logit: Any, label: Any) -> Any:
        return F.binary_cross_entropy_with_logits(
            logit, label, weight=self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class NLLLoss(Layer):
    """Negative log likelihood of log-probabilities ``input`` [N, C, ...] at class ids ``label``."""

    def __init__(
        self,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        name: str | None = None,
    ):
        super().__init__()
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction = _check_reduction("NLLLoss", reduction)

    def forward(self, input: Any, label: Any) -> Any:
        return F.nll_loss(
            input,
            label,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class SmoothL1Loss(Layer):
    """Huber-style loss: ``0.5 * d**2 / delta`` where ``|d| < delta``, else ``|d| - 0.5 * delta``
    (as ``F.smooth_l1_loss`` defines it)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0, name: str | None = None):
        super().__init__()
        self.reduction = _check_reduction("SmoothL1Loss", reduction)
        self.delta = delta

    def forward(self, input: Any, label: Any) -> Any:
        return F.smooth_l1_loss(input, label, reduction=self.reduction, delta=self.delta)


class KLDivLoss(Layer):
    """Kullback-Leibler divergence of log-probabilities ``input`` from probabilities ``label``."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in _REDUCTIONS + ("batchmean",):
            raise ValueError(
                f"KLDivLoss: reduction must be one of "
                f"{_REDUCTIONS + ('batchmean',)}, got {reduction!r}"
            )
        self.reduction = reduction

    def forward(self, input: Any, label: Any) -> Any:
        return F.kl_div(input, label, reduction=self.reduction)

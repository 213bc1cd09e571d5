"""Gradient clipping for optimizers (Paddle 2.x ``paddle.nn.ClipGradBy*``).

Pass one as an optimizer's ``grad_clip``; it runs on the gradients before weight decay.
Parameters with ``need_clip=False`` are left out (and, for the global norm, not counted).

    opt = rt.optimizer.Adam(parameters=model.parameters(),
                            grad_clip=rt.nn.ClipGradByGlobalNorm(clip_norm=1.0))
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.optimizer.static_update import xp_of
from autostatic_runtime.tensor import Tensor

__all__ = ["ClipGradBase", "ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue"]


class ClipGradBase:
    """Base class. Subclasses implement ``_clip(pairs)`` over ``(param, grad_array)`` pairs."""

    def __call__(self, params_grads: list[tuple[Any, Tensor]]) -> list[tuple[Any, Tensor]]:
        """Clip ``[(param, grad Tensor)]`` and return new pairs (Paddle's call form)."""
        pairs = [(p, None if g is None else g._data) for p, g in params_grads]
        return [
            (p, None if g is None else Tensor._rebuild(g, None, 0)) for p, g in self._clip(pairs)
        ]

    def _clip(self, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        raise NotImplementedError


def _clipped(p: Any, g: Any) -> bool:
    return g is not None and getattr(p, "need_clip", True)


class ClipGradByGlobalNorm(ClipGradBase):
    """Scale all gradients by ``clip_norm / max(global_norm, clip_norm)``.

    ``global_norm = sqrt(sum over gradients of sum(g ** 2))``. With ``auto_skip_clip``
    the gradients are left untouched when the norm is within ``clip_norm``.
    """

    def __init__(
        self, clip_norm: float, group_name: str = "default_group", auto_skip_clip: bool = False
    ):
        self.clip_norm = float(clip_norm)
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def __repr__(self) -> str:
        return f"ClipGradByGlobalNorm(global_clip_norm={self.clip_norm})"

    def _clip(self, pairs):
        squares = [_sum_squares(g) for p, g in pairs if _clipped(p, g)]
        if not squares:
            return pairs
        total = squares[0]
        for s in squares[1:]:
            total = total + s
        xp = xp_of(total)
        norm = xp.sqrt(total)
        if self.auto_skip_clip and float(norm) <= self.clip_norm:
            return pairs
        scale = self.clip_norm / xp.maximum(norm, xp.asarray(self.clip_norm, dtype=norm.dtype))
        return [(p, xp.astype(scale, g.dtype) * g if _clipped(p, g) else g) for p, g in pairs]


class ClipGradByNorm(ClipGradBase):
    """Scale each gradient whose L2 norm exceeds ``clip_norm`` down to norm ``clip_norm``."""

    def __init__(self, clip_norm: float):
        self.clip_norm = float(clip_norm)

    def __repr__(self) -> str:
        return f"ClipGradByNorm(clip_norm={self.clip_norm})"

    def _clip(self, pairs):
        out = []
        for p, g in pairs:
            if _clipped(p, g):
                xp = xp_of(g)
                norm = xp.sqrt(_sum_squares(g))
                limit = xp.asarray(self.clip_norm, dtype=norm.dtype)
                g = g * xp.astype(self.clip_norm / xp.maximum(norm, limit), g.dtype)
            out.append((p, g))
        return out


class ClipGradByValue(ClipGradBase):
    """Clip every gradient element into ``[min, max]`` (``min`` defaults to ``-max``)."""

    def __init__(self, max: float, min: float | None = None):
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise ValueError(f"ClipGradByValue: min ({self.min}) must not exceed max ({self.max})")

    def __repr__(self) -> str:
        return f"ClipGradByValue(min={self.min}, max={self.max})"

    def _clip(self, pairs):
        return [
            (p, xp_of(g).clip(g, self.min, self.max) if _clipped(p, g) else g) for p, g in pairs
        ]


def _sum_squares(g: Any) -> Any:
    xp = xp_of(g)
    if str(g.dtype).endswith("float16"):
        g = xp.astype(g, xp.float32)
    return xp.sum(g * g)

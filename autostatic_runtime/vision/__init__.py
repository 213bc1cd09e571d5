"""Paddle's ``paddle.vision`` names that models use (``paddle.vision.ops.yolo_loss``)."""

from autostatic_runtime.vision import ops

__all__ = ["ops"]

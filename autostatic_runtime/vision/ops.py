"""Paddle's ``paddle.vision.ops``: detection losses (defined in ``nn/functional/detection``)."""

from autostatic_runtime.nn.functional.detection import yolo_loss

__all__ = ["yolo_loss"]

"""Optimizers and learning-rate schedules (Paddle 2.x ``paddle.optimizer``)."""

from autostatic_runtime.optimizer import lr  # noqa: F401
from autostatic_runtime.optimizer.adadelta import Adadelta
from autostatic_runtime.optimizer.adagrad import Adagrad
from autostatic_runtime.optimizer.adam import Adam, AdamW
from autostatic_runtime.optimizer.lamb import Lamb
from autostatic_runtime.optimizer.momentum import Momentum
from autostatic_runtime.optimizer.optimizer import Optimizer
from autostatic_runtime.optimizer.rmsprop import Adamax, RMSProp
from autostatic_runtime.optimizer.sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Momentum", "Adam", "AdamW", "Adagrad", "Adadelta", "RMSProp", "Adamax",
    "Lamb", "lr",
]  # fmt: skip

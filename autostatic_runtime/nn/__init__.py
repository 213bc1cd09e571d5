"""Neural-network layers and functions (Paddle 2.x ``paddle.nn``)."""

from autostatic_runtime.nn import functional  # noqa: F401

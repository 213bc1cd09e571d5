"""Paddle's ``paddle.jit.api`` names (``from paddle.jit.api import to_static``): the same
objects as ``autostatic.jit``'s."""

from autostatic.jit.save_load import save
from autostatic.jit.static_function import enable_to_static, to_static
from autostatic.markers import not_to_static
from autostatic_runtime.jit import load

__all__ = ["to_static", "not_to_static", "enable_to_static", "save", "load"]

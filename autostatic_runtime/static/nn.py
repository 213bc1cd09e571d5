"""Static-graph layers of ``rt.static.nn``: the control-flow builders and ``Assert``."""

from autostatic_runtime.ops.debugging import Assert
from autostatic_runtime.static.control_flow import cond, while_loop

__all__ = ["cond", "while_loop", "Assert"]

"""Static-graph layers of ``rt.static.nn``: the control-flow builders."""

from autostatic_runtime.static.control_flow import cond, while_loop

__all__ = ["cond", "while_loop"]

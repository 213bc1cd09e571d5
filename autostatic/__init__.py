"""autostatic: convert eager ("dygraph") model code into static programs.

The compiler half of the project. It imports ``autostatic_runtime`` (tensors, ops, layers,
static programs) and never the reverse; converted code and saved models need only the
runtime. The converter, the import hook and ``to_static`` arrive here in later milestones;
see docs/architecture.md.
"""

from __future__ import annotations

__version__ = "0.1.0"

import autostatic_runtime as runtime  # noqa: E402,F401

__all__ = ["__version__", "runtime"]

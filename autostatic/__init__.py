"""autostatic: convert eager ("dygraph") model code into static programs.

The compiler half of the project. It imports ``autostatic_runtime`` (tensors, ops, layers,
static programs) and never the reverse; converted code and saved models need only the
runtime.

    import autostatic
    fast = autostatic.convert(model_step)     # same results on Python values and tensors
    print(autostatic.to_code(model_step))     # the converted source
"""

from __future__ import annotations

__version__ = "0.1.0"

import autostatic_runtime as runtime  # noqa: E402
from autostatic.api import (  # noqa: E402
    convert,
    not_to_static,
    set_code_level,
    set_verbosity,
    to_code,
)

__all__ = [
    "__version__",
    "runtime",
    "convert",
    "to_code",
    "not_to_static",
    "set_code_level",
    "set_verbosity",
]

"""autostatic: convert eager ("dygraph") model code into static programs.

The compiler half of the project. It imports ``autostatic_runtime`` (tensors, ops, layers,
static programs) and never the reverse; converted code and saved models need only the
runtime.

    import autostatic
    fast = autostatic.convert(model_step)     # same results on Python values and tensors
    print(autostatic.to_code(model_step))     # the converted source
    net = autostatic.to_static(net)           # net(x) runs a cached static program
    autostatic.save(net, "out/net", input_spec=[autostatic.InputSpec([None, 10])])
    loaded = autostatic.load("out/net")       # no source, no converter needed

The converter (and gast) is imported on first use, so ``import autostatic`` followed by
``autostatic.load`` never loads it.
"""

from __future__ import annotations

__version__ = "0.1.0"

import autostatic_runtime as runtime  # noqa: E402
from autostatic.jit import (  # noqa: E402
    InputSpec,
    StaticFunction,
    TranslatedLayer,
    enable_to_static,
    load,
    save,
    to_static,
)

_LAZY = {"convert", "not_to_static", "set_code_level", "set_verbosity", "to_code"}


def __getattr__(name: str):
    if name in _LAZY:
        from autostatic import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'autostatic' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)


__all__ = [
    "__version__",
    "runtime",
    "convert",
    "to_code",
    "not_to_static",
    "set_code_level",
    "set_verbosity",
    "to_static",
    "StaticFunction",
    "InputSpec",
    "enable_to_static",
    "save",
    "load",
    "TranslatedLayer",
]

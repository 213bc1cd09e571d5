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
    autostatic.install()                      # convert modules marked "# autostatic: enable"

The converter (and gast) is imported on first use, so ``import autostatic`` followed by
``autostatic.load``, or importing converted modules from the hook's warm cache, never
loads it.

PYTEST_DONT_REWRITE: pytest leaves this package's own asserts alone (its plugin is in it).
"""

from __future__ import annotations

__version__ = "0.1.0"

import autostatic_runtime as runtime  # noqa: E402
from autostatic.hook import install, uninstall  # noqa: E402
from autostatic.jit import (  # noqa: E402
    InputSpec,
    StaticFunction,
    TranslatedLayer,
    enable_to_static,
    load,
    save,
    to_static,
)
from autostatic.markers import not_to_static  # noqa: E402

# The converter (gast, the transformers) loads on first use, so that importing converted
# modules from the hook's warm cache never loads it.
_LAZY = {
    "convert": "autostatic.api",
    "set_code_level": "autostatic.api",
    "set_verbosity": "autostatic.api",
    "to_code": "autostatic.api",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'autostatic' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


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
    "install",
    "uninstall",
]

import autostatic.hook.finder as _finder  # noqa: E402
import autostatic.lazy as _lazy  # noqa: E402

_lazy.install()  # the runtime's ``traced`` reaches the compiler through this
_finder.install_from_env()

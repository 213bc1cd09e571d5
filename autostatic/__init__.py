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

from autostatic.hook import install, uninstall  # noqa: E402
from autostatic.markers import not_to_static  # noqa: E402

# Everything else loads on first use: ``import autostatic`` imports neither NumPy nor the
# runtime (so the pytest plugin, loaded in every pytest run, costs nothing until used), and
# the converter (gast, the transformers) loads only when something is converted, so that
# importing converted modules from the hook's warm cache never loads it.
_LAZY = {
    "runtime": "autostatic_runtime",
    "InputSpec": "autostatic.jit",
    "StaticFunction": "autostatic.jit",
    "TranslatedLayer": "autostatic.jit",
    "TracedLayer": "autostatic.jit.traced_layer",
    "enable_to_static": "autostatic.jit",
    "load": "autostatic.jit",
    "save": "autostatic.jit",
    "to_static": "autostatic.jit",
    "convert": "autostatic.api",
    "to_code": "autostatic.api",
    "set_code_level": "autostatic.verbosity",
    "set_verbosity": "autostatic.verbosity",
}


def __getattr__(name: str):
    import importlib
    import importlib.util

    module = _LAZY.get(name)
    if module is None:
        if name.startswith("_") or importlib.util.find_spec(f"autostatic.{name}") is None:
            raise AttributeError(f"module 'autostatic' has no attribute {name!r}")
        return importlib.import_module(f"autostatic.{name}")  # a subpackage: autostatic.jit
    loaded = importlib.import_module(module)
    value = loaded if name == "runtime" else getattr(loaded, name)
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
    "TracedLayer",
    "InputSpec",
    "enable_to_static",
    "save",
    "load",
    "TranslatedLayer",
    "install",
    "uninstall",
]

import autostatic.hook.finder as _finder  # noqa: E402

# the runtime's ``traced`` reaches the compiler's ``autostatic.lazy`` once autostatic is
# imported (it looks it up then, so importing autostatic loads neither the runtime nor NumPy)
_finder.install_from_env()

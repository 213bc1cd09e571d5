"""``to_static``, ``StaticFunction``, the program cache, ``save`` and ``load``.

Importing this package does not import the converter (gast): it is loaded on the first
trace, so ``autostatic.load`` works in a process that never converts anything.
"""

from autostatic.jit import api, translated_layer  # noqa: F401  (paddle.jit.api & co.)
from autostatic.jit.program_cache import ConcreteProgram, ProgramCache, ToStaticError
from autostatic.jit.save_load import save
from autostatic.jit.static_function import StaticFunction, enable_to_static, to_static
from autostatic.jit.traced_layer import TracedLayer
from autostatic_runtime.jit import InputMismatchError, TranslatedLayer, load
from autostatic_runtime.static.input_spec import InputSpec

__all__ = [
    "to_static", "StaticFunction", "enable_to_static", "InputSpec", "ConcreteProgram",
    "ProgramCache", "ToStaticError", "save", "load", "TranslatedLayer", "InputMismatchError",
    "TracedLayer",
]  # fmt: skip

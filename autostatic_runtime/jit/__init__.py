"""Running traced programs eagerly (``run_program``) and loading saved models.

What a saved model needs at run time lives here, so ``load`` works with NumPy and protobuf
alone (no compiler, no gast, no model source).
"""

from autostatic_runtime.jit.model_file import save_model
from autostatic_runtime.jit.run_program import ProgramRunner
from autostatic_runtime.jit.translated_layer import InputMismatchError, TranslatedLayer, load

__all__ = ["ProgramRunner", "TranslatedLayer", "InputMismatchError", "load", "save_model"]

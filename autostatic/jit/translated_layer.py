"""Paddle's ``paddle.jit.translated_layer`` names: the loaded-model layer and the suffixes of
a saved model's files (the runtime's ``autostatic_runtime.jit.translated_layer``)."""

from autostatic_runtime.jit.translated_layer import (  # noqa: F401
    INFER_MODEL_SUFFIX,
    INFER_PARAMS_INFO_SUFFIX,
    INFER_PARAMS_SUFFIX,
    TranslatedLayer,
)

__all__ = [
    "TranslatedLayer", "INFER_MODEL_SUFFIX", "INFER_PARAMS_SUFFIX", "INFER_PARAMS_INFO_SUFFIX",
]  # fmt: skip

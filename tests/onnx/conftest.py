"""tests/onnx needs the ``onnx`` extra; without it the directory is skipped."""

import importlib.util

collect_ignore_glob = (
    ["test_*.py"]
    if importlib.util.find_spec("onnx") is None or importlib.util.find_spec("onnxruntime") is None
    else []
)

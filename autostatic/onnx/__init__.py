"""ONNX export: hand a traced program to ONNX Runtime, TensorRT, OpenVINO or Triton.

    import autostatic
    autostatic.onnx.export(net, "out/net", input_spec=[autostatic.InputSpec([None, 3, 32, 32])])
    # python -m autostatic export out/net.pdmodel out/net.onnx   (a saved model)

Needs the ``onnx`` extra (``pip install "autostatic[onnx]"``). Every op with an ONNX
equivalent is lowered through one table (``autostatic/onnx/lowerings``); see
docs/deployment.md.
"""

from __future__ import annotations

from autostatic.onnx.api import export, export_saved
from autostatic.onnx.lowerings import LOWERINGS, UNSUPPORTED
from autostatic_runtime.errors import ExportError

__all__ = ["export", "export_saved", "ExportError", "LOWERINGS", "UNSUPPORTED"]

"""ONNX export: hand a traced program to ONNX Runtime, TensorRT, OpenVINO or Triton.

    import autostatic
    autostatic.onnx.export(net, "out/net", input_spec=[autostatic.InputSpec([None, 3, 32, 32])])
    # python -m autostatic export out/net.pdmodel out/net.onnx   (a saved model)

Needs the ``onnx`` extra (``pip install "autostatic[onnx]"``), imported on the first export.
Every op with an ONNX equivalent is lowered through one table (``autostatic/onnx/lowerings``:
``LOWERINGS``; the ops without one and why: ``UNSUPPORTED``); see docs/deployment.md.
"""

from __future__ import annotations

import os
from typing import Any

from autostatic_runtime.errors import ExportError

__all__ = ["export", "export_saved", "ExportError", "LOWERINGS", "UNSUPPORTED"]


def export(
    layer_or_function: Any,
    path: str | os.PathLike,
    input_spec: Any = None,
    opset_version: int = 17,
) -> Any:
    """Trace ``layer_or_function`` in eval mode and write it to ``path + ".onnx"``.

    Args:
        layer_or_function: an ``rt.nn.Layer`` (its ``forward``), a function, a
            ``StaticFunction`` from ``to_static``, or a layer from ``autostatic.load``.
        path: the file prefix (``".onnx"`` is appended unless it ends with it already;
            directories are created). The file is written atomically.
        input_spec: InputSpecs of the inputs (``None`` dims become symbolic ONNX dims);
            default: as ``autostatic.save``. A loaded layer uses its saved specs.
        opset_version: the ONNX opset (13 or newer; default 17).

    Returns:
        The ONNX ``ModelProto`` that was written (it passes ``onnx.checker``'s full check).

    Raises:
        ExportError: some op cannot be exported (all of them are listed, each with the
            user's file and line); nothing is written.
    """
    return _api().export(layer_or_function, path, input_spec, opset_version)


def export_saved(
    prefix: str | os.PathLike, file: str | os.PathLike, opset_version: int = 17
) -> Any:
    """Convert the model ``autostatic.save`` wrote at ``prefix`` (or ``prefix.pdmodel``) into
    the ONNX file ``file``; returns the ``ModelProto`` (what ``autostatic export`` runs)."""
    return _api().export_saved(prefix, file, opset_version)


def _api():
    try:
        import onnx  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "ONNX export needs the onnx extra: pip install 'autostatic[onnx]' "
            f"(onnx and onnxruntime); {exc}"
        ) from exc
    from autostatic.onnx import api

    return api


def __getattr__(name: str):
    if name in ("LOWERINGS", "UNSUPPORTED"):
        from autostatic.onnx import lowerings

        return getattr(lowerings, name)
    raise AttributeError(f"module 'autostatic.onnx' has no attribute {name!r}")

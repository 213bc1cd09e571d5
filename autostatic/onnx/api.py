"""``autostatic.onnx.export``: a layer, function or saved model as an ONNX file."""

from __future__ import annotations

import os
from typing import Any

import onnx

from autostatic.onnx.exporter import ProgramSpec, check_opset, to_model
from autostatic_runtime import backends
from autostatic_runtime.jit.model_file import _write_atomic, read_model
from autostatic_runtime.jit.translated_layer import TranslatedLayer

__all__ = ["export", "export_saved"]


def export(
    layer_or_function: Any,
    path: str | os.PathLike,
    input_spec: Any = None,
    opset_version: int = 17,
) -> onnx.ModelProto:
    """See ``autostatic.onnx.export``."""
    check_opset(opset_version)
    file = os.fspath(path)
    if not file.endswith(".onnx"):
        file += ".onnx"
    model = to_model(_spec_of(layer_or_function, input_spec), opset_version)
    _write(model, file)
    return model


def export_saved(prefix: str, file: str, opset_version: int = 17) -> onnx.ModelProto:
    """See ``autostatic.onnx.export_saved``."""
    prefix, file = os.fspath(prefix), os.fspath(file)
    if prefix.endswith(".pdmodel"):
        prefix = prefix[: -len(".pdmodel")]
    program, params, meta = read_model(prefix)
    inputs = [(s["name"], s["shape"], s["dtype"]) for s in meta["inputs"]]
    name = os.path.basename(prefix) or "autostatic"
    model = to_model(ProgramSpec(program, inputs, meta["outputs"], params, name), opset_version)
    _write(model, file)
    return model


def _spec_of(target: Any, input_spec: Any) -> ProgramSpec:
    if isinstance(target, TranslatedLayer):
        return _loaded_spec(target)
    from autostatic.jit.traced_layer import TracedLayer

    if isinstance(target, TracedLayer):  # its recorded program, as a loaded one
        from autostatic.jit.save_load import check_traced_specs

        check_traced_specs(target, input_spec)
        return _loaded_spec(target._layer)
    from autostatic.jit.save_load import persistable_values, trace_for_inference

    program = trace_for_inference(target, input_spec)
    inputs = [
        (v.name, [None if d < 0 else d for d in v.shape], str(v.dtype)) for v in program.inputs
    ]
    name = getattr(program.function, "__name__", None) or type(target).__name__
    return ProgramSpec(
        program.main_program,
        inputs,
        [v.name for v in program.outputs],
        persistable_values(program),
        name,
    )


def _loaded_spec(layer: TranslatedLayer) -> ProgramSpec:
    runner = layer._runner
    params = {}
    for name, t in zip(runner.param_names, runner.param_tensors):
        params[name] = backends.backend_of(t._data).to_numpy(t._data)
    inputs = [(s.name, list(s.shape), str(s.dtype)) for s in layer.input_spec]
    return ProgramSpec(layer.program(), inputs, list(runner.outputs), params, "loaded_model")


def _write(model: onnx.ModelProto, file: str) -> None:
    """Write ``model`` atomically (a temporary file, then ``os.replace``)."""
    directory = os.path.dirname(os.path.abspath(file))
    os.makedirs(directory, exist_ok=True)
    _write_atomic(file, model.SerializeToString())

"""``autostatic.save``: trace a layer or function and write it as a deployable model.

The model is traced in eval mode (dropout off, batch norm on running statistics) and written
by ``autostatic_runtime.jit.model_file``; ``autostatic.load`` (the runtime's) reads it back.
"""

from __future__ import annotations

import os
from typing import Any

import autostatic_runtime as rt
from autostatic.jit.program_cache import ConcreteProgram, ToStaticError
from autostatic.jit.static_function import StaticFunction, takes_no_arguments, to_static
from autostatic_runtime.jit.model_file import encode_structure, save_model
from autostatic_runtime.static.program import Variable

__all__ = ["save"]


def save(layer_or_function: Any, path: str | os.PathLike, input_spec: Any = None) -> None:
    """Write ``path.pdmodel`` (the program), ``path.pdiparams`` (weights) and ``path.pdmeta``.

    Args:
        layer_or_function: an ``rt.nn.Layer`` (its ``forward``), a function, a
            StaticFunction, or a ``TracedLayer`` (its recorded program, for its inputs'
            shapes: ``TracedLayer.save_inference_model``).
        path: the file prefix (directories are created).
        input_spec: InputSpecs of the inputs; default: the ``input_spec`` given to
            ``to_static``, else the shapes of the most recent call.
    """
    from autostatic.jit.traced_layer import TracedLayer

    if isinstance(layer_or_function, TracedLayer):
        check_traced_specs(layer_or_function, input_spec)
        layer_or_function.save_inference_model(path)
        return
    _write(trace_for_inference(layer_or_function, input_spec), os.fspath(path))


def check_traced_specs(traced: Any, input_spec: Any) -> None:
    """Reject an ``input_spec`` a ``TracedLayer``'s recorded program cannot take (it holds
    the exact shapes and dtypes of the inputs it was traced with)."""
    if input_spec is None:
        return
    specs = list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
    recorded = traced.input_spec
    fits = len(specs) == len(recorded) and all(
        str(want.dtype) == str(have.dtype)
        and len(want.shape) == len(have.shape)
        and all(a == b for a, b in zip(want.shape, have.shape))
        for want, have in zip(specs, recorded)
    )
    if not fits:
        shown = ", ".join(f"{list(s.shape)} {s.dtype}" for s in recorded)
        raise ToStaticError(
            f"a TracedLayer's program holds the shapes it was traced with ({shown}); "
            "trace it again with inputs of the shapes you want, or use to_static with "
            "InputSpec(None) dims for a model that takes any batch"
        )


def trace_for_inference(layer_or_function: Any, input_spec: Any = None) -> ConcreteProgram:
    """The program of a layer (its ``forward``), function or StaticFunction traced in eval
    mode (dropout off, batch norm on running statistics) for ``input_spec``."""
    target = layer_or_function
    layer = target if isinstance(target, rt.nn.Layer) else None
    if layer is not None:
        fn = layer.forward
        sf = (
            fn
            if isinstance(fn, StaticFunction)
            else StaticFunction(fn.__func__, None, True, instance=layer)
        )
    elif isinstance(target, StaticFunction):
        sf = target
        layer = sf._instance if isinstance(sf._instance, rt.nn.Layer) else None
    else:
        sf = to_static(target)
    modes = [(m, m.training) for m in layer.sublayers(include_self=True)] if layer else []
    if layer is not None:
        layer.eval()
    try:
        return _program_for(sf, input_spec)
    finally:
        for m, training in modes:
            object.__setattr__(m, "training", training)


def persistable_values(program: ConcreteProgram) -> dict[str, Any]:
    """NumPy values of the program's persistable variables (parameters, buffers, captures)."""
    params = {}
    captured = rt.static.builder.captured_values(program.main_program)
    for name, var in program.main_program.global_block().vars.items():
        if var.persistable:
            t = captured.get(name)
            if t is None:
                raise ToStaticError(f"the persistable variable {name!r} has no value")
            params[name] = rt.backends.backend_of(t._data).to_numpy(t._data)
    return params


def _program_for(sf: StaticFunction, input_spec: Any) -> ConcreteProgram:
    if input_spec is not None:
        specs = list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
        return sf.get_concrete_program(*specs)
    if sf.input_spec is not None:
        return sf.get_concrete_program()
    for program in reversed(sf.program_cache.concrete_programs()):
        specs = [rt.static.InputSpec(v.shape, v.dtype, v.name) for v in program.inputs]
        return sf.get_concrete_program(*specs)
    if takes_no_arguments(sf._parameters()):  # forward(self) or forward(self, x=None)
        return sf.get_concrete_program()
    raise ToStaticError(
        f"{sf.__name__}: the input shapes are unknown, so it cannot be traced to save or "
        "export it; pass input_spec=[InputSpec(...)] or call the function once first"
    )


def _write(program: ConcreteProgram, path: str) -> None:
    params = persistable_values(program)
    leaves = []
    for leaf in program.output_leaves:
        if isinstance(leaf, Variable):
            leaves.append("out")
        elif leaf is None or isinstance(leaf, (bool, int, float, str)):
            leaves.append({"const": leaf})
        else:
            raise ToStaticError(
                f"save: the function returns a {type(leaf).__name__}, which a saved model "
                "cannot hold; return tensors (and numbers or strings)"
            )
    inputs = [
        {"name": v.name, "shape": [None if d < 0 else d for d in v._shape], "dtype": str(v.dtype)}
        for v in program.inputs
    ]
    save_model(
        path,
        program.main_program,
        inputs,
        [v.name for v in program.outputs],
        encode_structure(program.output_structure),
        leaves,
        params,
    )

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
from autostatic_runtime import convert_ops
from autostatic_runtime.jit.model_file import encode_structure, save_model
from autostatic_runtime.static.inference_model import prune_program
from autostatic_runtime.static.program import Variable

__all__ = ["save"]


# Paddle's paddle.jit.save configs: the two that choose what is saved, and those that only
# choose how Paddle lays out its files (accepted; the three files here are always the same)
CONFIGS = ("output_spec", "input_names_after_prune", "combine_params", "clip_extra",
           "skip_forward", "skip_prune_program", "separate_params", "with_hook")  # fmt: skip


def save(
    layer_or_function: Any, path: str | os.PathLike, input_spec: Any = None, **configs: Any
) -> None:
    """Write ``path.pdmodel`` (the program), ``path.pdiparams`` (weights) and ``path.pdmeta``.

    Args:
        layer_or_function: an ``rt.nn.Layer`` (its ``forward``), a function, a
            StaticFunction, or a ``TracedLayer`` (its recorded program, for its inputs'
            shapes: ``TracedLayer.save_inference_model``).
        path: the file prefix (directories are created).
        input_spec: InputSpecs (or example tensors) of the inputs; default: the
            ``input_spec`` given to ``to_static``, else the shapes of the most recent call.
        **configs: Paddle's ``output_spec`` (the outputs to keep: tensors a call returned,
            matched by name, else by the only output of their shape and dtype) and
            ``input_names_after_prune`` (the inputs to keep, by the names of ``input_spec``'s
            entries or of the program's inputs); the model is pruned to what they need.
            ``combine_params``, ``clip_extra``, ``skip_forward``, ``skip_prune_program``,
            ``separate_params`` and ``with_hook`` are accepted and change nothing.
    """
    from autostatic.jit.traced_layer import TracedLayer

    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        raise ToStaticError(
            f"save: unknown config {', '.join(map(repr, unknown))}; the configs are "
            f"{', '.join(CONFIGS)}"
        )
    if isinstance(layer_or_function, TracedLayer):
        check_traced_specs(layer_or_function, input_spec)
        layer_or_function.save_inference_model(path)
        return
    program = trace_for_inference(layer_or_function, input_spec)
    _write(program, os.fspath(path), input_spec, configs.get("output_spec"),
           configs.get("input_names_after_prune"))  # fmt: skip


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
        if layer is not None and (layer._forward_pre_hooks or layer._forward_post_hooks):
            hooked = StaticFunction(_with_hooks(sf._function), None, True, instance=layer)
            return hooked.get_concrete_program(*_specs_for(sf, input_spec))
        return _program_for(sf, input_spec)
    finally:
        for m, training in modes:
            object.__setattr__(m, "training", training)


def _with_hooks(forward: Any) -> Any:
    """``forward`` with the layer's forward pre- and post-hooks around it, as ``layer(...)``
    runs them: a saved layer's program holds what its hooks compute (the hooks of its
    sublayers run inside ``forward`` already)."""
    import functools

    @functools.wraps(forward)  # (the same parameter names for the program's inputs)
    def forward_with_hooks(self, *inputs, **kwargs):
        converted = convert_ops.convert_call(forward.__get__(self))
        return self._call_with(converted, *inputs, **kwargs)

    return forward_with_hooks


def _specs_for(sf: StaticFunction, input_spec: Any) -> list:
    """The InputSpecs ``sf`` is traced with to save it (see ``_program_for``)."""
    if input_spec is not None:
        return list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
    if sf.input_spec is not None:
        return list(sf.input_spec)
    for program in reversed(sf.program_cache.concrete_programs()):
        return [rt.static.InputSpec(v.shape, v.dtype, v.name) for v in program.inputs]
    if takes_no_arguments(sf._parameters()):  # forward(self) or forward(self, x=None)
        return []
    raise ToStaticError(
        f"{sf.__name__}: the input shapes are unknown, so it cannot be traced to save or "
        "export it; pass input_spec=[InputSpec(...)] or call the function once first"
    )


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
    if input_spec is None and sf.input_spec is not None:
        return sf.get_concrete_program()
    return sf.get_concrete_program(*_specs_for(sf, input_spec))


def _write(
    program: ConcreteProgram,
    path: str,
    input_spec: Any = None,
    output_spec: Any = None,
    input_names: Any = None,
) -> None:
    params = persistable_values(program)
    main, inputs, outputs = program.main_program, list(program.inputs), list(program.outputs)
    structure, leaves = program.output_structure, program.output_leaves
    if output_spec is not None or input_names is not None:
        if output_spec is not None:
            outputs = [outputs[i] for i in _chosen_outputs(outputs, output_spec)]
            structure = None if len(outputs) == 1 else (list, tuple(None for _ in outputs))
            leaves = outputs
        if input_names is not None:
            inputs = [inputs[i] for i in _kept_inputs(inputs, input_spec, input_names)]
        main = prune_program(main.clone(), [v.name for v in inputs],
                             [v.name for v in outputs], "save")  # fmt: skip
        params = {k: v for k, v in params.items() if k in main.global_block().vars}
    encoded = []
    for leaf in leaves:
        if isinstance(leaf, Variable):
            encoded.append("out")
        elif leaf is None or isinstance(leaf, (bool, int, float, str)):
            encoded.append({"const": leaf})
        else:
            raise ToStaticError(
                f"save: the function returns a {type(leaf).__name__}, which a saved model "
                "cannot hold; return tensors (and numbers or strings)"
            )
    specs = [
        {"name": v.name, "shape": [None if d < 0 else d for d in v._shape], "dtype": str(v.dtype)}
        for v in inputs
    ]
    save_model(path, main, specs, [v.name for v in outputs], encode_structure(structure),
               encoded, params)  # fmt: skip


def _chosen_outputs(outputs: list, output_spec: Any) -> list[int]:
    """Indices of the program outputs ``output_spec`` names: a Variable or tensor of an
    output's name, else the one not yet chosen output of its shape and dtype (tensors a call
    returned carry no program names here)."""
    chosen: list[int] = []
    for spec in output_spec if isinstance(output_spec, (list, tuple)) else [output_spec]:
        name = getattr(spec, "name", None)
        found = [i for i, v in enumerate(outputs) if name is not None and v.name == name]
        if not found:
            shape, dtype = list(getattr(spec, "shape", ())), str(getattr(spec, "dtype", ""))
            found = [
                i for i, v in enumerate(outputs)
                if i not in chosen and str(v.dtype) == dtype and len(v.shape) == len(shape)
                and all(a in (b, -1) or b == -1 for a, b in zip(v.shape, shape))
            ]  # fmt: skip
        if len(found) != 1:
            have = ", ".join(f"{v.name} {list(v.shape)} {v.dtype}" for v in outputs)
            raise ToStaticError(
                f"save: output_spec entry {name or type(spec).__name__!r} matches "
                f"{'no' if not found else len(found)} of the outputs ({have}); give tensors "
                "the function returned, one output of each shape and dtype"
            )
        chosen.append(found[0])
    return chosen


def _kept_inputs(inputs: list, input_spec: Any, names: Any) -> list[int]:
    """Indices of the program inputs ``input_names_after_prune`` keeps: each name picks the
    first input not yet kept whose ``input_spec`` entry (an InputSpec or example tensor) or
    program variable has that name."""
    given = list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
    spec_names = [getattr(s, "name", None) for s in given]
    if input_spec is None or len(spec_names) != len(inputs):
        spec_names = [v.name for v in inputs]
    kept: list[int] = []
    for name in names:
        for i, v in enumerate(inputs):
            if i not in kept and name in (spec_names[i], v.name):
                kept.append(i)
                break
        else:
            raise ToStaticError(
                f"save: input_names_after_prune names {name!r}, which is none of the inputs "
                f"({', '.join(v.name for v in inputs)})"
            )
    return sorted(kept)

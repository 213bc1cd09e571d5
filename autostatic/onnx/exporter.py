"""A static Program (plus its inputs, outputs and weights) as an ONNX ``ModelProto``.

The ops the outputs depend on (``prune.py``) are checked first: ops without a lowering are
collected and reported together (op type and the user's line for each) before anything is
built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from autostatic import __version__
from autostatic.onnx.graph import Graph, Names, value_info
from autostatic.onnx.lowerings import LOWERINGS, reason
from autostatic.onnx.prune import live_ops
from autostatic_runtime.errors import ExportError
from autostatic_runtime.static.program import Program, Variable

__all__ = ["ProgramSpec", "to_model", "check_opset", "MIN_OPSET"]

MIN_OPSET = 13


@dataclass
class ProgramSpec:
    """What to export: the program, its inputs (name, shape with None for any size, dtype),
    its output variable names and the values of its persistable variables."""

    program: Program
    inputs: list[tuple[str, list, str]]
    outputs: list[str]
    params: dict[str, np.ndarray]
    name: str = "autostatic"


def to_model(spec: ProgramSpec, opset: int = 17) -> onnx.ModelProto:
    """The checked ONNX model of ``spec`` (``ExportError`` if some op cannot be exported)."""
    check_opset(opset)
    live = live_ops(spec.program, spec.outputs)
    _check_ops(spec.program, opset, live)
    names = Names()
    graph = Graph(names, opset, LOWERINGS, live=live)
    inputs = _inputs(spec, graph, names)
    initializers = []
    read = _read_by(spec.program, live) | set(spec.outputs)
    for name, value in spec.params.items():
        if name not in read:  # a weight only dead code uses
            continue
        graph.bind(name, names.fresh(name))
        initializers.append(numpy_helper.from_array(np.asarray(value), graph.lookup(name)))
    block = spec.program.global_block()
    graph.lower_block(block)
    fixed = {v.name for v in inputs} | {t.name for t in initializers}
    outputs = _outputs(spec, graph, block, fixed)
    onnx_graph = graph.make(spec.name, inputs, outputs, initializers)
    opset_ids = [helper.make_opsetid("", opset)]
    model = helper.make_model(
        onnx_graph,
        opset_imports=opset_ids,
        producer_name="autostatic",
        producer_version=__version__,
    )
    model.ir_version = helper.find_min_ir_version_for(opset_ids)
    model = _with_output_shapes(model)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:
        raise ExportError(f"the exported ONNX model does not pass onnx.checker: {exc}") from exc
    return model


def _read_by(program: Program, live: set[int]) -> set[str]:
    """Names of the variables the live ops read."""
    return {
        x.name
        for block in program.blocks
        for op in block.ops
        if id(op) in live
        for x in op.inputs
        if isinstance(x, Variable)
    }


def check_opset(opset: int) -> None:
    """Refuse an opset outside 13..(the newest the installed onnx knows)."""
    newest = onnx.defs.onnx_opset_version()
    if type(opset) is not int or not MIN_OPSET <= opset <= newest:
        raise ExportError(
            f"opset_version must be an int from {MIN_OPSET} to {newest} (this onnx), got {opset!r}"
        )


def _check_ops(program: Program, opset: int, live: set[int]) -> None:
    problems = []
    for block in program.blocks:
        for op in block.ops:
            why = reason(op, opset) if id(op) in live else None
            if why is not None:
                problems.append((op, why))
    if not problems:
        return
    lines = []
    for op, why in problems:
        loc = op.location
        where = f"{loc[0]}:{loc[1]} ({loc[2]})" if loc and loc[0] else "an unknown line"
        lines.append(f"  - {op.type} at {where}: {why}")
    kinds = sorted({op.type for op, _ in problems})
    raise ExportError(
        f"cannot export to ONNX: {len(problems)} op(s) cannot be lowered "
        f"({', '.join(kinds)}):\n" + "\n".join(lines) + "\nSee docs/deployment.md for the "
        "supported ops; rewrite these lines with supported ones, or leave them out of the "
        "exported function",
        problems[0][0].location,
    )


def _inputs(spec: ProgramSpec, graph: Graph, names: Names) -> list:
    inputs, k = [], 0
    for name, shape, dtype in spec.inputs:
        dims = []
        for d in shape:
            if d is None or d < 0:
                dims.append(f"N_{k}")
                k += 1
            else:
                dims.append(d)
        graph.bind(name, names.fresh(name))
        inputs.append(value_info(graph.lookup(name), dtype, dims))
    return inputs


def _outputs(spec: ProgramSpec, graph: Graph, block, fixed: set[str]) -> list:
    """Graph outputs; an input, a weight or a repeated output is passed through Identity."""
    outputs, taken = [], set()
    for name in spec.outputs:
        try:
            var, value = block.var(name), graph.lookup(name)
        except KeyError:
            raise ExportError(f"the output {name!r} is not computed by the program") from None
        if value in fixed or value in taken:
            value = graph.node("Identity", [value], outputs=[graph.fresh(f"{name}_output")])
        taken.add(value)
        outputs.append(value_info(value, var.dtype, var.shape))
    return outputs


def _with_output_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Graph outputs typed with what shape inference finds: sizes, and the inputs' symbolic
    dims where they carry through (``N_0``: the batch)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # the checker below reports real problems
        return model
    known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
    ours = {
        d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param
    }
    for out in model.graph.output:
        found = known.get(out.name)
        if found is None or not found.type.tensor_type.HasField("shape"):
            continue
        dims = found.type.tensor_type.shape.dim
        mine = out.type.tensor_type.shape.dim
        if len(dims) != len(mine):
            continue
        for a, b in zip(mine, dims):
            if not a.HasField("dim_value") and b.dim_param in ours:
                a.dim_param = b.dim_param
            elif not a.HasField("dim_value") and b.HasField("dim_value"):
                a.dim_value = b.dim_value
    return model

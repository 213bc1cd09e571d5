"""Readable text for Programs, in the style of a jaxpr.

    { block0 (x:f32[-1,3], w:f32[3,4]) .
        t0:f32[-1,4] = matmul_v2 x w                     # model.py:12
        t1:bool[] = greater_than t0 0.0 {}
        t2:f32[-1,4] = cond[true=block1 false=block2] t1 t0
          { block1 ... }
      }

Names are printed as the program holds them; attributes sit in brackets after the op type.
"""

from __future__ import annotations

import os

from autostatic_runtime.static.program import Block, Literal, Operator, Program, Variable

_SHORT = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "bool": "bool",
}


def format_type(v: Variable) -> str:
    return f"{_SHORT.get(str(v.dtype), str(v.dtype))}[{','.join(str(d) for d in v._shape)}]"


def _format_attr(value) -> str:
    if isinstance(value, Block):
        return f"block{value.idx}"
    if isinstance(value, tuple):
        return "(" + ",".join(_format_attr(v) for v in value) + ")"
    return repr(value) if isinstance(value, str) else str(value)


def format_op(op: Operator, with_location: bool = True) -> str:
    outs = " ".join(f"{v.name}:{format_type(v)}" for v in op.outputs)
    attrs = " ".join(
        f"{k}={_format_attr(v)}" for k, v in sorted(op.attrs.items()) if k != "op_role"
    )
    args = " ".join(
        v.name if isinstance(v, Variable) else repr(v.value if isinstance(v, Literal) else v)
        for v in op.inputs
    )
    text = (
        (f"{outs} = " if outs else "")
        + op.type
        + (f"[{attrs}]" if attrs else "")
        + (f" {args}" if args else "")
    )
    if with_location and op.location and op.location[0]:
        text = f"{text:<60s} # {os.path.basename(op.location[0])}:{op.location[1]}"
    return text


def format_block(block: Block, indent: int = 1, with_locations: bool = True) -> list[str]:
    pad = "    " * indent
    lines = []
    for op in block.ops:
        lines.append(pad + format_op(op, with_locations))
        for sub in op.sub_blocks():
            lines.append(pad + "  { " + f"block{sub.idx}")
            lines.extend(format_block(sub, indent + 1, with_locations))
            lines.append(pad + "  }")
    return lines


def format_program(program: Program, with_locations: bool = True) -> str:
    gb = program.global_block()
    inputs = [v for v in gb.vars.values() if v.is_data or v.persistable]
    head = ", ".join(f"{v.name}:{format_type(v)}" for v in inputs)
    lines = ["{ program (" + head + ") ."]
    lines.extend(format_block(gb, 1, with_locations))
    lines.append("}")
    return "\n".join(lines)

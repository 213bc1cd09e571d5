"""Program <-> ProgramDesc protobuf. Parsing validates everything it reads and never runs code."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from autostatic_runtime import dtypes
from autostatic_runtime.errors import ProgramFormatError
from autostatic_runtime.static import framework_pb2 as pb
from autostatic_runtime.static.program import Block, Literal, Parameter, Program, Variable

MAGIC = "autostatic.program"
FORMAT_VERSION = 1
_MAX_NESTING = 64
_MAX_BLOCK_DEPTH = 64  # the generated Python allows ~100 nested statements


# ---- attributes ------------------------------------------------------------------------------


def encode_attr(value: Any, out: pb.Attr) -> None:
    """Write a plain-data attribute value into ``out``."""
    if value is None:
        out.none = True
    elif isinstance(value, bool):
        out.b = value
    elif isinstance(value, dtypes.DType):
        out.dtype = str(value)
    elif isinstance(value, int):
        out.i = value
    elif isinstance(value, float):
        out.f = value
    elif isinstance(value, str):
        out.s = value
    elif isinstance(value, Block):
        out.block = value.idx
    elif isinstance(value, (tuple, list)):
        items = out.list.items
        out.list.SetInParent()
        for v in value:
            encode_attr(v, items.add())
    else:
        raise TypeError(
            f"attribute value {value!r} of type {type(value).__name__} cannot be "
            "serialized; ops take ints, floats, bools, strings, dtypes and tuples"
        )


def decode_attr(attr: pb.Attr, program: Program, depth: int = 0) -> Any:
    if depth > _MAX_NESTING:
        raise ProgramFormatError("attribute nesting is too deep")
    kind = attr.WhichOneof("value")
    if kind is None or kind == "none":
        return None
    if kind == "dtype":
        try:
            return dtypes.convert_dtype(attr.dtype)
        except TypeError as exc:
            raise ProgramFormatError(f"unknown dtype {attr.dtype!r} in an attribute") from exc
    if kind == "block":
        if not 0 <= attr.block < len(program.blocks):
            raise ProgramFormatError(
                f"attribute refers to block {attr.block}, but the program "
                f"has {len(program.blocks)} blocks"
            )
        return program.blocks[attr.block]
    if kind == "list":
        return tuple(decode_attr(a, program, depth + 1) for a in attr.list.items)
    return getattr(attr, kind)


# ---- whole programs ------------------------------------------------------------------------


def program_to_desc(program: Program) -> pb.ProgramDesc:
    desc = pb.ProgramDesc(magic=MAGIC, version=FORMAT_VERSION, random_seed=program.random_seed)
    for block in program.blocks:
        bd = desc.blocks.add(idx=block.idx, parent_idx=block.parent_idx)
        for v in block.vars.values():
            bd.vars.add(
                name=v.name,
                dtype=str(v.dtype),
                shape=list(v._shape),
                persistable=v.persistable,
                stop_gradient=v.stop_gradient,
                is_parameter=isinstance(v, Parameter),
                trainable=v.trainable,
                is_data=v.is_data,
            )
        for op in block.ops:
            od = bd.ops.add(type=op.type, outputs=[v.name for v in op.outputs])
            for operand in op.inputs:
                o = od.inputs.add()
                if isinstance(operand, Variable):
                    o.var = operand.name
                else:
                    encode_attr(
                        operand.value if isinstance(operand, Literal) else operand, o.literal
                    )
            for name in sorted(op.attrs):
                encode_attr(op.attrs[name], od.attrs.add(name=name).value)
            if op.location:
                f, line, fn = op.location
                od.location.file, od.location.line, od.location.function = f, line, fn
    return desc


def parse_program(data: bytes) -> Program:
    """A Program from ProgramDesc bytes, or a ProgramFormatError saying what is wrong."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProgramFormatError(f"expected bytes, got {type(data).__name__}")
    desc = pb.ProgramDesc()
    try:
        desc.ParseFromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ProgramFormatError(
            f"not a valid program file ({exc}); it may be truncated or corrupt"
        ) from None
    return program_from_desc(desc)


def program_from_desc(desc: pb.ProgramDesc) -> Program:
    if desc.magic != MAGIC:
        raise ProgramFormatError(f"not an autostatic program (magic {desc.magic!r})")
    if desc.version > FORMAT_VERSION:
        raise ProgramFormatError(
            f"program format version {desc.version} is newer than this "
            f"autostatic_runtime supports ({FORMAT_VERSION}); upgrade it"
        )
    if not desc.blocks:
        raise ProgramFormatError("the program has no blocks")
    from autostatic_runtime.ops.registry import OPS
    from autostatic_runtime.static.control_flow import CONTROL_FLOW_OPS

    program = Program()
    program.random_seed = desc.random_seed
    program.blocks = []
    depth: list[int] = []  # nesting depth of each block (parents come first)
    for i, bd in enumerate(desc.blocks):
        if bd.idx != i or not -1 <= bd.parent_idx < len(desc.blocks) or bd.parent_idx >= i > 0:
            raise ProgramFormatError(
                f"block {i} has a bad index or parent ({bd.idx}, {bd.parent_idx})"
            )
        program.blocks.append(Block(program, i, bd.parent_idx))
        depth.append(0 if i == 0 else depth[bd.parent_idx] + 1)
        if depth[i] > _MAX_BLOCK_DEPTH:
            raise ProgramFormatError(
                f"block {i} is nested {depth[i]} blocks deep; programs nest control flow at "
                f"most {_MAX_BLOCK_DEPTH} deep"
            )
    for bd, block in zip(desc.blocks, program.blocks):
        for vd in bd.vars:
            if any(d < -1 for d in vd.shape):
                raise ProgramFormatError(
                    f"variable {vd.name!r} has a bad shape {list(vd.shape)} (dims are sizes, "
                    "or -1 where unknown)"
                )
            try:
                dtype = dtypes.convert_dtype(vd.dtype)
            except TypeError as exc:
                raise ProgramFormatError(
                    f"variable {vd.name!r} has unknown dtype {vd.dtype!r}"
                ) from exc
            if vd.is_parameter:
                v = block.create_parameter(vd.name, vd.shape, dtype, vd.trainable)
                v.stop_gradient = vd.stop_gradient
            else:
                v = block.create_var(
                    vd.name, vd.shape, dtype, vd.persistable, vd.stop_gradient, vd.is_data
                )
    owners: dict[int, tuple[int, str]] = {}  # sub-block -> (block, op type) that owns it
    for bd, block in zip(desc.blocks, program.blocks):
        for od in bd.ops:
            if od.type not in OPS and od.type not in CONTROL_FLOW_OPS:
                raise ProgramFormatError(
                    f"unknown op {od.type!r} (saved by a newer autostatic_runtime?)"
                )
            inputs = [_operand(o, block, program, od.type) for o in od.inputs]
            outputs = [_lookup(block, name, od.type) for name in od.outputs]
            attrs = {a.name: decode_attr(a.value, program) for a in od.attrs}
            loc = od.location
            location = (loc.file, loc.line, loc.function) if loc.file else None
            block.append_op(od.type, inputs, outputs, attrs, location=location or ("", 0, ""))
            _claim_sub_blocks(attrs.values(), block, od.type, owners)
    program.current_block_idx = 0
    return program


def _claim_sub_blocks(values: Any, block: Block, op_type: str, owners: dict) -> None:
    """Record that an op of ``block`` owns the sub-blocks among ``values``.

    Each sub-block belongs to exactly one op, and to an op of a block *before* it, so the
    blocks form a tree: the block compiler inlines every sub-block once, and compiling takes
    time linear in the file. A crafted file that shares a sub-block between ops (2^k copies
    after k levels) or makes blocks refer to each other in a cycle is rejected here.
    """
    for value in values:
        if isinstance(value, tuple):
            _claim_sub_blocks(value, block, op_type, owners)
        elif isinstance(value, Block):
            if value.idx <= block.idx:
                raise ProgramFormatError(
                    f"op {op_type!r} in block {block.idx} uses block {value.idx} as a "
                    "sub-block; a sub-block must come after the block of its op (blocks "
                    "cannot contain themselves or an earlier block)"
                )
            other = owners.get(value.idx)
            if other is not None:
                raise ProgramFormatError(
                    f"block {value.idx} is the sub-block of two ops ({other[1]!r} in block "
                    f"{other[0]} and {op_type!r} in block {block.idx}); each sub-block "
                    "belongs to one op"
                )
            owners[value.idx] = (block.idx, op_type)


def _operand(o: pb.Operand, block: Block, program: Program, op_type: str):
    if o.WhichOneof("kind") == "var":
        return _lookup(block, o.var, op_type)
    return Literal(decode_attr(o.literal, program))


def _lookup(block: Block, name: str, op_type: str) -> Variable:
    try:
        return block.var(name)
    except KeyError:
        raise ProgramFormatError(
            f"op {op_type!r} in block {block.idx} uses variable {name!r}, "
            "which the program does not define"
        ) from None

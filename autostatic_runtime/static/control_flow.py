"""Control-flow ops: ``cond`` and ``while`` (building, code generation) and nested structures.

A ``cond`` op holds two sub-blocks; its inputs are the predicate followed by every outer
variable either branch reads (so a compiled branch is a plain function of them). A ``while``
op holds a condition block and a body block, each taking the loop variables as parameters;
its inputs are the initial loop values followed by the outer variables the blocks read.

In eager mode ``cond`` and ``while_loop`` simply run Python.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import ExecutionError, StaticBuildError, user_location
from autostatic_runtime.mode import in_dynamic_mode
from autostatic_runtime.static import observe as _observe
from autostatic_runtime.static.builder import capture, default_main_program
from autostatic_runtime.static.mutation import alias
from autostatic_runtime.static.program import Block, Literal, Program, Variable
from autostatic_runtime.static.tensor_array import (
    MutatedOuterArrays,
    MutationLog,
    TensorArray,
    _ProbeDone,
    carrying,
)
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = ["cond", "while_loop", "CONTROL_FLOW_OPS"]


# ---- nested structures ------------------------------------------------------------------


def flatten(value: Any) -> tuple[list, Any]:
    """Leaves (tensors and Python values) and a structure to rebuild ``value`` from them."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        leaves, parts = [], []
        for v in value:
            lv, s = flatten(v)
            leaves.extend(lv)
            parts.append(s)
        return leaves, (type(value), tuple(parts))
    if isinstance(value, tuple):  # namedtuple
        leaves, parts = [], []
        for v in value:
            lv, s = flatten(v)
            leaves.extend(lv)
            parts.append(s)
        return leaves, ("namedtuple", type(value), tuple(parts))
    if isinstance(value, dict):
        leaves, parts = [], []
        for k in value:
            lv, s = flatten(value[k])
            leaves.extend(lv)
            parts.append((k, s))
        return leaves, (dict, tuple(parts))
    if value.__class__ is TensorArray:  # its buffer is the leaf; rebuilt around the new one
        return [value.buffer], ("tensor_array", value.name)
    if _is_record(value):  # a dataclass or small object of tensors: carried by its fields
        leaves, parts = [], []
        for k, v in vars(value).items():
            lv, s = flatten(v)
            leaves.extend(lv)
            parts.append((k, s))
        return leaves, ("object", type(value), tuple(parts))
    return [value], None


def _is_record(value: Any) -> bool:
    """A dataclass instance, or a plain object whose attributes hold tensors (or lists,
    tuples and dicts of them; not a layer, tensor, module or class): control flow carries it
    attribute by attribute."""
    if isinstance(value, (TensorLike, type)) or not hasattr(value, "__dict__"):
        return False
    if type(value).__module__ in ("builtins", "types") or callable(value):
        return False
    if dataclasses.is_dataclass(value):
        return True
    return any(_holds_tensor(v) for v in vars(value).values())


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, TensorLike):
        return True
    kind = type(value)
    if kind is list or kind is tuple:
        return any(isinstance(v, TensorLike) for v in value)
    if kind is dict:
        return any(isinstance(v, TensorLike) for v in value.values())
    return False


def unflatten(structure: Any, leaves: list) -> Any:
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        if s[0] == "namedtuple":
            return s[1](*(build(p) for p in s[2]))
        if s[0] == "object":
            obj = s[1].__new__(s[1])
            obj.__dict__.update((k, build(p)) for k, p in s[2])
            return obj
        if s[0] is dict:
            return {k: build(p) for k, p in s[1]}
        if s[0] == "tensor_array":
            leaf = next(it)
            if isinstance(leaf, Variable) or leaf is None:
                return TensorArray(leaf, s[1])
            return [leaf[k] for k in range(leaf.shape[0])]  # a program's output: a list
        return s[0](build(p) for p in s[1])

    return build(structure)


def _describe(structure: Any) -> str:
    if structure is None:
        return "a tensor"
    if structure[0] is dict:
        inner = ", ".join(f"{k!r}: {_describe(p)}" for k, p in structure[1])
        return "a dict {" + inner + "}"
    if structure[0] == "tensor_array":
        return "a tensor array"
    if structure[0] == "object":
        inner = ", ".join(f"{k}={_describe(p)}" for k, p in structure[2])
        return f"a {structure[1].__name__}({inner})"
    kind = structure[1].__name__ if structure[0] == "namedtuple" else structure[0].__name__
    return f"a {kind} ({', '.join(_describe(p) for p in structure[-1])})"


def _match_placeholders(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` with a ``PLACEHOLDER`` that stands where the other side has a tuple,
    list or dict expanded into one of placeholders (a function's return value that one
    branch has not given yet)."""
    if a is PLACEHOLDER and b is not PLACEHOLDER:
        return _placeholders_like(b), b
    if b is PLACEHOLDER and a is not PLACEHOLDER:
        return a, _placeholders_like(a)
    if type(a) is type(b) and isinstance(a, (tuple, list)) and len(a) == len(b):
        pairs = [_match_placeholders(x, y) for x, y in zip(a, b)]
        rebuild = type(a) if type(a) in (tuple, list) else (lambda it: type(a)(*it))
        return rebuild(p[0] for p in pairs), rebuild(p[1] for p in pairs)
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        pairs = {k: _match_placeholders(a[k], b[k]) for k in a}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    return a, b


def _placeholders_like(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _placeholders_like(v) for k, v in value.items()}
    if type(value) in (tuple, list):
        return type(value)(_placeholders_like(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_placeholders_like(v) for v in value))
    if _is_record(value):
        new = type(value).__new__(type(value))
        new.__dict__.update((k, _placeholders_like(v)) for k, v in vars(value).items())
        return new
    return PLACEHOLDER


def _fn_location(fn: Callable) -> tuple | None:
    while getattr(fn, "location", None) is None and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__  # the user's function under the runtime's wrappers
    where = getattr(fn, "location", None)  # an empty branch: the statement's location
    if where is not None:
        return where
    code = getattr(fn, "__code__", None)
    return (code.co_filename, code.co_firstlineno, code.co_name) if code else None


def _kind(value: Any) -> str:
    if isinstance(value, TensorLike):
        return "a tensor"
    if callable(value) and hasattr(value, "__name__"):
        kind = "class" if isinstance(value, type) else "function"
        return f"the {kind} {value.__name__!r}"
    return f"{type(value).__name__} {repr(value)[:40]}"


def _leaf_name(structure: Any, names: Any, index: int) -> str | None:
    """The name (of ``names``, one per part of a tuple ``structure``) whose value holds leaf
    ``index``: ``'y'``, or "the return value" for the early-return lowering's value."""
    if not names or not structure or structure[0] is not tuple:
        return None
    parts = structure[1]
    if len(parts) != len(names):
        return None
    first = 0
    for name, part in zip(names, parts):
        first += _count_leaves(part)
        if index < first:
            return "the return value" if name.startswith("__retval") else f"{name!r}"
    return None


def _count_leaves(structure: Any) -> int:
    if structure is None:
        return 1
    if structure[0] is dict or structure[0] == "object":
        return sum(_count_leaves(p) for _, p in structure[-1])
    if structure[0] == "tensor_array":
        return 1
    return sum(_count_leaves(p) for p in structure[-1])


def _where(loc: tuple | None) -> str:
    return f"{loc[0]}:{loc[1]}" if loc else "?"


# ---- free variables --------------------------------------------------------------------


def free_vars(block: Block, extra_names: list[str] = ()) -> list[Variable]:
    """Outer variables a block reads (its ops' inputs and ``extra_names``), in first-use order."""
    seen: dict[str, Variable] = {}
    defined = set(block.vars)
    for op in block.ops:
        for x in op.inputs:
            if isinstance(x, Variable) and x.name not in defined and x.name not in seen:
                seen[x.name] = x
    for name in extra_names:
        if name not in defined and name not in seen:
            seen[name] = block.var(name)
    return list(seen.values())


def _merge(*lists: list[Variable]) -> list[Variable]:
    out: dict[str, Variable] = {}
    for lst in lists:
        for v in lst:
            out.setdefault(v.name, v)
    return list(out.values())


# ---- cond ----------------------------------------------------------------------------------


def _as_pred(pred: Any, op: str) -> Any:
    if isinstance(pred, Variable):
        if pred.dtype != dtypes.bool_:
            from autostatic_runtime.ops.elementwise import cast

            pred = cast(pred, dtypes.bool_)
        if pred.size not in (1, -1) and pred._shape != ():
            if op == "cond" and default_main_program().current_block_idx != 0:
                return _ambiguous_when_run(pred)
            raise StaticBuildError(
                f"{op}: the predicate must hold one element, but has shape "
                f"{pred.shape}; reduce it with rt.all/rt.any",
                user_location(),
            )
    return pred


def _ambiguous_when_run(pred: Variable) -> Variable:
    """The predicate of an ``if`` inside a tensor branch or loop body that holds several
    elements: eager code raises only if it gets there (``if y.numpy()[0] < c`` in a branch
    the data never takes, where the traced ``y`` has more rows), so the program raises
    eager's ``ValueError`` when it reaches this ``if``; the op gets a one-element stand-in."""
    from autostatic_runtime.creation import full
    from autostatic_runtime.ops.debugging import Assert
    from autostatic_runtime.ops.reduce import all as reduce_all

    where = user_location()
    n = pred.size
    exc = ValueError(
        f"the truth value of a tensor with {n} elements is ambiguous; use rt.all(x) or rt.any(x)"
    )
    at = f"{where[0]}:{where[1]}" if where else "this 'if'"
    Assert(full([], False, dtypes.bool_), message=f"the 'if' at {at} tests shape {pred.shape}",
           raises=exc)  # fmt: skip
    return reduce_all(pred)


def _trace_branch(program: Program, fn: Callable | None) -> tuple[Block, list, Any, dict]:
    """Trace ``fn`` into a new block; also return the tensor arrays it mutated in place
    (``xs.append`` in a branch), restored to their previous buffers: id -> (array, new)."""
    block = program._create_block()
    try:
        with MutationLog() as log:
            try:
                out = fn() if fn is not None else None
            finally:
                after = log.restore()
    finally:
        program._rollback()
    leaves, structure = flatten(out)
    mutated = {k: (log.before[k][0], after[k]) for k in after}
    return block, leaves, structure, mutated


def _empty_like(block: Block, program: Program, buffer: Variable) -> Variable | None:
    """A buffer of no elements shaped like ``buffer``'s; an element dim unknown when building
    is 0 there (a placeholder: the first write into an empty array takes its element's shape,
    ``array_write``)."""
    elem = [d if d >= 0 else 0 for d in buffer._shape[1:]]
    from autostatic_runtime.creation import zeros

    saved = program.current_block_idx
    program.current_block_idx = block.idx
    try:
        return zeros([0, *elem], dtype=buffer.dtype)
    finally:
        program.current_block_idx = saved


def _with_mutations(tmut, fmut, tleaves, fleaves, tstruct, fstruct, tblock, fblock, program):
    """Branch outputs extended with the buffers of the tensor arrays either branch mutated
    (the other branch gives the array's buffer unchanged)."""
    arrays = [a for a, _ in tmut.values()] + [a for k, (a, _) in fmut.items() if k not in tmut]
    tl, fl = list(tleaves), list(fleaves)
    for a in arrays:
        tl.append(tmut[id(a)][1] if id(a) in tmut else a.buffer)
        fl.append(fmut[id(a)][1] if id(a) in fmut else a.buffer)
        if (tl[-1] is None) != (fl[-1] is None):  # empty on one side: an empty buffer
            filled = tl[-1] if fl[-1] is None else fl[-1]
            block = fblock if fl[-1] is None else tblock
            empty = _empty_like(block, program, filled)
            if empty is not None:
                if fl[-1] is None:
                    fl[-1] = empty
                else:
                    tl[-1] = empty
        if tl[-1] is None or fl[-1] is None:
            raise StaticBuildError(
                f"'{a.name}' is an empty list appended to in only one branch of a "
                "tensor-dependent 'if'; its element type must be known in both (append to it "
                "before the 'if', or create it with rt.create_array(dtype, [first_value]))",
                user_location(),
            )
    return arrays, tl, fl, tstruct, fstruct


class _Placeholder:
    """A branch output that is never read on that branch's path (``PLACEHOLDER``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<placeholder>"


#: Returned by a ``cond`` branch for an output its path never reads (a function's return
#: value before it returns): the op gets zeros shaped like the other branch's value.
PLACEHOLDER = _Placeholder()


def _placeholder_like(block: Block, program: Program, like: Any) -> Any:
    if not isinstance(like, TensorLike):
        return like
    from autostatic_runtime.creation import zeros

    saved = program.current_block_idx
    program.current_block_idx = block.idx
    try:
        return zeros([1 if d == -1 else d for d in like.shape], dtype=like.dtype)
    finally:
        program.current_block_idx = saved


def _same_kind(a: Any, b: Any) -> bool:
    """Both integer or both floating dtypes (a branch output may then be widened)."""
    return dtypes.kind(a) == dtypes.kind(b) and a != dtypes.bool_ and b != dtypes.bool_


def _cast_in(block: Block, program: Program, value: Variable, dtype: Any) -> Variable:
    if value.dtype == dtype:
        return value
    from autostatic_runtime.ops.elementwise import cast

    saved = program.current_block_idx
    program.current_block_idx = block.idx
    try:
        return _weak_as(cast(value, dtype), value._weak)
    finally:
        program.current_block_idx = saved


def _weak_as(var: Variable, weak: bool) -> Variable:
    """``var`` marked as standing for a Python number when ``weak`` (``Variable._weak``)."""
    if weak:
        var._weak = True
    return var


def _to_var(block: Block, program: Program, value: Any, like: Any = None) -> Variable:
    """Turn a branch/loop leaf into a Variable visible from ``block``; a Python number
    takes the shape and dtype of ``like`` (the other branch's value) when that is known."""
    if isinstance(value, Variable):
        return value
    if isinstance(value, Tensor):
        return capture(program, value)
    from autostatic_runtime.creation import full

    saved = program.current_block_idx
    program.current_block_idx = block.idx
    try:
        if isinstance(like, TensorLike) and -1 not in tuple(like.shape):
            out = full(like.shape, value, dtype=like.dtype)
            out._weak = like._weak
            return out
        dt = (
            dtypes.bool_
            if isinstance(value, bool)
            else (dtypes.int64 if isinstance(value, int) else dtypes.get_default_dtype())
        )
        out = full([], value, dtype=dt)
        out._weak = True  # it stands for the Python number (``dtypes.weak_result``)
        return out
    finally:
        program.current_block_idx = saved


def cond(
    pred: Any,
    true_fn: Callable | None = None,
    false_fn: Callable | None = None,
    name: str | None = None,
    return_names: Any = None,
) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``; a ``cond`` op when ``pred`` is symbolic.

    Both branches must return the same structure (tuples, lists, dicts of tensors) with
    matching dtypes; shapes that differ become -1 in the result.
    """
    if not isinstance(pred, Variable):
        if in_dynamic_mode() or not isinstance(pred, TensorLike):
            branch = true_fn if bool(pred) else false_fn
            return branch() if branch is not None else None
    pred = _as_pred(pred, "cond")
    program = default_main_program()
    tblock, tleaves, tstruct, tmut = _trace_branch(program, true_fn)
    fblock, fleaves, fstruct, fmut = _trace_branch(program, false_fn)
    tloc, floc = _fn_location(true_fn), _fn_location(false_fn)
    if tstruct != fstruct:  # a return value one branch has not given yet: shape it alike
        tout, fout = _match_placeholders(unflatten(tstruct, tleaves), unflatten(fstruct, fleaves))
        tleaves, tstruct = flatten(tout)
        fleaves, fstruct = flatten(fout)
    nresults = len(tleaves)
    arrays = []
    if tmut or fmut:
        arrays, tleaves, fleaves, tstruct, fstruct = _with_mutations(
            tmut, fmut, tleaves, fleaves, tstruct, fstruct, tblock, fblock, program
        )
    if tstruct != fstruct or len(tleaves) != len(fleaves):
        raise StaticBuildError(
            f"cond: the true branch ({_where(tloc)}) returns {_describe(tstruct)} but the false "
            f"branch ({_where(floc)}) returns {_describe(fstruct)}; both must return the same "
            "structure",
            user_location(),
        )
    results, touts, fouts, two_typed, described = [], [], [], [], []
    for i, (t, f) in enumerate(zip(tleaves, fleaves)):
        if t is PLACEHOLDER and f is not PLACEHOLDER:
            t = _placeholder_like(tblock, program, f)
        elif f is PLACEHOLDER and t is not PLACEHOLDER:
            f = _placeholder_like(fblock, program, t)
        if not isinstance(t, TensorLike) and not isinstance(f, TensorLike):
            if t is f or (type(t) is type(f) and t == f):
                results.append(("const", t))
                continue
        for value in (t, f):
            if not isinstance(value, (TensorLike, bool, int, float)):
                what = _leaf_name(tstruct, return_names, i) or f"output {i}"
                sides = f"{_kind(t)} in the true branch and {_kind(f)} in the false branch"
                if tloc or floc:
                    sides += f" (true branch: {_where(tloc)}, false branch: {_where(floc)})"
                raise StaticBuildError(
                    f"cond: {what} is {sides}; a tensor-dependent branch must give "
                    "tensors or numbers on both sides (and a function must return a tensor "
                    "on every path)",
                    user_location(),
                )
        tv = _to_var(tblock, program, t, like=f)
        fv = _to_var(fblock, program, f, like=t)
        same_rank = len(tv._shape) == len(fv._shape)
        if same_rank and tv.dtype != fv.dtype and _same_kind(tv.dtype, fv.dtype):  # int32/64
            # a Python number on one side takes the other side's dtype, as eager arithmetic
            # would give it; else the wider one
            wide = (
                fv.dtype
                if tv._weak and not fv._weak
                else tv.dtype
                if fv._weak and not tv._weak
                else dtypes.promote(tv.dtype, fv.dtype)
            )
            tv = _cast_in(tblock, program, tv, wide)
            fv = _cast_in(fblock, program, fv, wide)
        earlier = program._two_typed.get(tv.name) or program._two_typed.get(fv.name)
        if tv.dtype != fv.dtype or not same_rank or earlier:
            # one value of two types (Paddle's cond allows it): it holds the taken branch's
            # value when the program runs; returning it is fine, an op reading it is an error
            # (a value that was one already stays one when a later cond passes it on)
            two_typed.append(len(touts))
            shape = [-1] * len(tv._shape)
            results.append(("var", shape, tv.dtype, tv.stop_gradient and fv.stop_gradient, False))
            described.append(
                earlier
                or f"a value that is {tv.dtype}{tv.shape} when the condition holds (true branch "
                f"at {_where(tloc)}) and {fv.dtype}{fv.shape} when it does not ({_where(floc)})"
            )
            touts.append(tv.name)
            fouts.append(fv.name)
            continue
        shape = [a if a == b else -1 for a, b in zip(tv._shape, fv._shape)]
        results.append(
            ("var", shape, tv.dtype, tv.stop_gradient and fv.stop_gradient, tv._weak and fv._weak)
        )
        touts.append(tv.name)
        fouts.append(fv.name)
    parent = program.current_block()
    inputs = _merge(free_vars(tblock, touts), free_vars(fblock, fouts))
    outs = [
        _weak_as(
            parent.create_var(program.unique_name("cond"), r[1], r[2], stop_gradient=r[3]), r[4]
        )
        for r in results
        if r[0] == "var"
    ]
    parent.append_op(
        "cond",
        [pred] + inputs,
        outs,
        {
            "true_block": tblock,
            "false_block": fblock,
            "true_outputs": tuple(touts),
            "false_outputs": tuple(fouts),
        },
    )
    for k, text in zip(two_typed, described):
        program._two_typed[outs[k].name] = text
    it = iter(outs)
    leaves = [next(it) if r[0] == "var" else r[1] for r in results]
    for array, buffer in zip(arrays, leaves[nresults:]):
        array._set(buffer)
    return unflatten(tstruct, leaves[:nresults])


def emit_cond(w, op) -> None:
    """``if pred:`` with both branches inlined; each ends by assigning the cond's outputs."""
    pred = w.read(op.inputs[0])
    for x in op.inputs[1:]:
        w.read(x)
    targets = [w.local(v.name) for v in op.outputs]
    probe = _observe.instrument(op) and w.const(op, "O")  # branch coverage (observe.py)
    for keyword, key, outs in (
        ("if _bool(" + pred + "):", "true_block", "true_outputs"),
        ("else:", "false_block", "false_outputs"),
    ):
        w.emit(keyword)
        with w.scoped():
            if probe:
                w.emit(f"{w.const(_observe.notify_cond, 'N')}({probe}, {key == 'true_block'})")
            results = w.emit_block(op.attrs[key], list(op.attrs[outs]))
            w.assign(targets, results)
            w.emit("pass")
    for v in op.outputs:
        w.write(v)


# ---- while ------------------------------------------------------------------------------------


def while_loop(
    cond: Callable, body: Callable, loop_vars: Any, is_test: bool = False, name: str | None = None
) -> Any:
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; a ``while`` op
    when the condition is symbolic. Returns the final loop variables (same structure)."""
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError("while_loop: loop_vars must be a list or tuple")
    if in_dynamic_mode():
        values = list(loop_vars)
        while bool(cond(*values)):
            out = body(*values)
            values = list(out) if isinstance(out, (list, tuple)) else [out]
        return values
    return _build_while(cond, body, list(loop_vars))


def _build_while(
    cond_fn: Callable, body_fn: Callable, loop_vars: list, names: tuple | None = None
) -> list:
    """The ``while`` op; ``names`` (one per loop variable, from the converter) label errors.

    Tensor arrays made before the loop that the body mutates in place (``rt.array_write(x,
    i, arr)``, ``arr.append``: found while tracing it) are carried by the op too, and hold
    its results after it, as the Python list holds the appended values eagerly."""
    arrays: list = []
    count = len(loop_vars)
    while True:
        extra = [TensorArray(a.buffer, a.name, a.dtype) for a in arrays]
        try:
            if not arrays:
                return _build_while_op(cond_fn, body_fn, loop_vars, names)
            out = _build_while_op(
                carrying(cond_fn, arrays, count, False),
                carrying(body_fn, arrays, count, True),
                list(loop_vars) + extra,
                None if names is None else tuple(names) + tuple(a.name for a in arrays),
            )
            break
        except MutatedOuterArrays as found:  # build it again, carrying them
            arrays += [a for a in found.arrays if all(a is not b for b in arrays)]
    for array, result in zip(arrays, out[count:]):
        array._set(result.buffer)
    return out[:count]


def _build_while_op(
    cond_fn: Callable, body_fn: Callable, loop_vars: list, names: tuple | None = None
) -> list:
    program = default_main_program()
    parent = program.current_block()
    leaves, structure = flatten(loop_vars)
    labels = (
        [f"'{n}'" for n in names]
        if names is not None and len(names) == len(leaves)
        else [f"loop variable {i}" for i in range(len(leaves))]
    )
    empty = [
        i for i, a in enumerate(_leaf_arrays(structure)) if a is not None and leaves[i] is None
    ]
    init = [None if i in empty else _to_var(parent, program, v) for i, v in enumerate(leaves)]
    if empty:
        outer = [a for a in _walk_arrays(loop_vars)]
        _probe_empty_arrays(program, body_fn, init, structure, empty, outer)
    body_loc = _fn_location(body_fn)
    peeled = False
    shapes = [list(v._shape) for v in init]
    stops = [v.stop_gradient for v in init]
    weak = [v._weak for v in init]
    for _attempt in range(12):
        first_block = len(program.blocks)
        traced = _trace_while_blocks(program, cond_fn, body_fn, init, shapes, structure,
                                     stops, weak)  # fmt: skip
        cblock, cparams, cout, bblock, bparams, body_vars = traced
        casts, peel = _dtype_changes(init, body_vars)
        if casts or peel:
            del program.blocks[first_block:]
            if peel and peeled:
                i = peel[0]
                raise StaticBuildError(
                    f"while_loop: {labels[i]} has dtype {init[i].dtype} before an iteration, "
                    f"but {body_vars[i].dtype} after it (body at {_where(body_loc)}); a loop "
                    "variable may change its dtype in the first iteration only",
                    user_location(),
                )
            if peel:  # the first iteration as a cond op; its dtypes hold from then on
                init = _peel_first_iteration(program, cond_fn, body_fn, init, structure,
                                             body_vars)  # fmt: skip
                peeled = True
                shapes = [list(v._shape) for v in init]
                stops = [v.stop_gradient for v in init]
                weak = [v._weak for v in init]
            for i, dtype in casts.items():  # eager's first iteration promotes it so anyway
                init[i] = _cast_in(parent, program, init[i], dtype)
            continue
        relaxed = _relax(body_vars, shapes, body_loc, labels)
        # a loop var that starts constant but takes a gradient in the body must carry it
        flowing = [s and b.stop_gradient for s, b in zip(stops, body_vars)]
        weak_now = [w and b._weak for w, b in zip(weak, body_vars)]
        if relaxed == shapes and flowing == stops and weak_now == weak:
            break
        del program.blocks[first_block:]  # retrace with the relaxed shapes / flags
        shapes, stops, weak = relaxed, flowing, weak_now
    cvar = cout[0] if isinstance(cout, list) else cout
    if not isinstance(cvar, Variable):
        raise StaticBuildError(
            "while_loop: the condition must return a tensor built from the loop variables",
            user_location(),
        )
    cvar = _as_pred(cvar, "while_loop")
    cnames = [p.name for p in cparams]
    bnames = [p.name for p in bparams]
    outer = _merge(
        [v for v in free_vars(cblock, [cvar.name]) if v.name not in cnames],
        [v for v in free_vars(bblock, [v.name for v in body_vars]) if v.name not in bnames],
    )
    outs = [
        _weak_as(
            parent.create_var(
                program.unique_name("while"),
                s,
                v.dtype,
                stop_gradient=v.stop_gradient and b.stop_gradient,
            ),
            w,
        )
        for s, v, b, w in zip(shapes, init, body_vars, weak)
    ]
    parent.append_op(
        "while",
        init + outer,
        outs,
        {
            "cond_block": cblock,
            "body_block": bblock,
            "cond_params": tuple(cnames),
            "body_params": tuple(bnames),
            "cond_output": cvar.name,
            "body_outputs": tuple(v.name for v in body_vars),
            "num_loop_vars": len(init),
        },
    )
    return list(unflatten(structure, outs))


def _trace_while_blocks(program, cond_fn, body_fn, init, shapes, structure, stops, weak):
    """The condition and body blocks of a ``while`` op for loop variables typed like
    ``init`` with ``shapes``/``stops``/``weak``: (cond block, its parameters, its output,
    body block, its parameters, the body's results as Variables)."""
    cblock, cparams, cout = _trace_loop_block(
        program, cond_fn, init, shapes, structure, stops, weak
    )
    bblock, bparams, bouts = _trace_loop_block(
        program, body_fn, init, shapes, structure, stops, weak, is_body=True
    )
    out_leaves, out_struct = flatten(bouts)
    if _erase_sequence_kind(out_struct) != _erase_sequence_kind(structure):
        raise StaticBuildError(
            f"while_loop: the body ({_where(_fn_location(body_fn))}) returns "
            f"{_describe(out_struct)} but the loop variables are {_describe(structure)}",
            user_location(),
        )
    body_vars = [_to_var(bblock, program, v) for v in out_leaves]
    return cblock, cparams, cout, bblock, bparams, body_vars


def _dtype_changes(init: list, body_vars: list) -> tuple[dict, list]:
    """Loop variables whose dtype one iteration changes: ``{i: dtype}`` for those whose
    initial value can be cast to it first (a Python number that eager arithmetic types so
    in the first iteration, or a widening: int32 -> int64, int -> float), and the positions
    of the others (a float becoming an int): their first iteration must run as traced."""
    casts, peel = {}, []
    for i, (v, b) in enumerate(zip(init, body_vars)):
        before, after = v.dtype, b.dtype
        if before == after:
            continue
        kb, ka = dtypes.kind(before), dtypes.kind(after)
        if ka > kb or (ka == kb and (v._weak or dtypes.promote(before, after) == after)):
            casts[i] = after
        else:
            peel.append(i)
    return casts, peel


def _peel_first_iteration(program, cond_fn, body_fn, init, structure, body_vars) -> list:
    """``if cond(init): init = body(init)`` as a ``cond`` op (the untaken side casts the
    initial values to the body's dtypes): the loop variables eager has after its first
    iteration, typed as every later iteration keeps them."""
    from autostatic_runtime.ops.elementwise import cast

    pred = cond_fn(*unflatten(structure, list(init)))
    pred = pred[0] if isinstance(pred, list) else pred

    def first():  # the leaves the body gives (a tensor array's buffer for the array)
        return flatten(body_fn(*unflatten(structure, [alias(v) for v in init])))[0]

    def skip():
        return [
            v if v.dtype == b.dtype else _weak_as(cast(v, b.dtype), v._weak)
            for v, b in zip(init, body_vars)
        ]

    first.location = skip.location = _fn_location(body_fn)
    out = cond(_as_pred(pred, "while_loop"), first, skip)
    return [_to_var(program.current_block(), program, v) for v in out]


def _trace_loop_block(program, fn, init, shapes, structure, stops, weak, is_body=False):
    block = program._create_block()
    try:
        params = [
            _weak_as(
                block.create_var(program.unique_name("loop_var"), s, v.dtype, stop_gradient=stop),
                w,
            )
            for v, s, stop, w in zip(init, shapes, stops, weak)
        ]
        with MutationLog() as log:  # opened first: the arrays of ``args`` are the loop's own
            # aliases: ``x[i] = v`` in the body moves its Python object, never the parameter
            args = unflatten(structure, [alias(p) for p in params])
            try:
                out = fn(*args)
            finally:
                log.restore()
        if log.before:  # arrays made before the loop: the loop must carry them
            raise MutatedOuterArrays([array for array, _ in log.before.values()])
        if is_body and not isinstance(out, (list, tuple)):
            out = [out]
    finally:
        program._rollback()
    return block, params, out


def _leaf_arrays(structure: Any) -> list:
    """For each leaf of ``structure``: the tensor array's name if the leaf is one's buffer."""
    out: list = []

    def walk(s):
        if s is None:
            out.append(None)
        elif s[0] == "tensor_array":
            out.append(s[1])
        elif s[0] == "namedtuple":
            for p in s[2]:
                walk(p)
        elif s[0] == "object":
            for _, p in s[2]:
                walk(p)
        elif s[0] is dict:
            for _, p in s[1]:
                walk(p)
        else:
            for p in s[1]:
                walk(p)

    walk(structure)
    return out


def _probe_empty_arrays(program, body_fn, init, structure, empty, outer) -> None:
    """Give each empty tensor array among the loop variables (``init[i]`` None for ``i`` in
    ``empty``) an initial ``create_array`` buffer, typed like the first value the body appends
    to it: trace the body until that ``append`` (then discard the trace), once per array."""
    from autostatic_runtime.ops.tensor_array import CreateArray

    names = _leaf_arrays(structure)
    while any(init[i] is None for i in empty):
        first_block = len(program.blocks)
        block = program._create_block()
        found = None
        try:
            params = [
                None
                if v is None
                else _weak_as(
                    block.create_var(program.unique_name("loop_var"), v._shape, v.dtype), v._weak
                )
                for v in init
            ]
            args = unflatten(structure, params)
            arrays = [a for a in _walk_arrays(args)]
            for a, original in zip(arrays, outer):
                a.probing = a.buffer is None
                if a.buffer is None:  # the dtype it was created with, if any
                    a.dtype = original.dtype
            try:
                with MutationLog() as log:
                    try:
                        body_fn(*args)
                    finally:
                        log.restore()
            except _ProbeDone as done:
                found = done
        finally:
            program._rollback()
            del program.blocks[first_block:]
        if found is None or found.value is None:
            name = names[next(i for i in empty if init[i] is None)]
            what = "reads it before appending" if found is not None else "never appends to it"
            raise StaticBuildError(
                f"'{name}' is an empty list before this tensor-dependent loop and the loop body "
                f"{what}, so its element type is unknown; create it with "
                "rt.create_array(dtype, [first_value]) or append a first value before the loop",
                user_location(),
            )
        position = [k for k, a in enumerate(arrays) if a is found.array][0]
        if outer[position].probing:  # an enclosing loop is probing this array: tell it
            raise _ProbeDone(outer[position], found.value)
        index = _array_leaf_indices(names)[position]
        value = found.value
        shape = tuple(d if d >= 0 else 0 for d in value._shape)  # the first write sets them
        init[index] = CreateArray(shape=shape, dtype=value.dtype)


def _array_leaf_indices(names: list) -> list[int]:
    return [i for i, n in enumerate(names) if n is not None]


def _walk_arrays(value: Any):
    """The tensor arrays in a nested structure, in ``flatten`` order."""
    if value.__class__ is TensorArray:
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _walk_arrays(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _walk_arrays(v)


def _erase_sequence_kind(structure: Any) -> Any:
    """The structure with list/tuple distinctions removed (a body may return either)."""
    if structure is None:
        return None
    if structure[0] in (list, tuple):
        return ("seq", tuple(_erase_sequence_kind(p) for p in structure[1]))
    return structure


def _relax(body_vars, shapes, body_loc, labels) -> list:
    relaxed = []
    for label, b, s in zip(labels, body_vars, shapes):
        if len(b._shape) != len(s):
            raise StaticBuildError(
                f"while_loop: {label} has shape {list(s)} before the loop, but "
                f"{b.shape} after one iteration (body at {_where(body_loc)}); loop variables "
                "must keep their rank",
                user_location(),
            )
        relaxed.append([a if a == c else -1 for a, c in zip(s, b._shape)])
    return relaxed


def emit_while(w, op) -> None:
    """An inlined ``while True:`` loop; the cond block's parameters carry the loop values."""
    n = op.attrs["num_loop_vars"]
    init = [w.read(x) for x in op.inputs[:n]]
    for x in op.inputs[n:]:
        w.read(x)
    cond_params = list(op.attrs["cond_params"])
    body_params = list(op.attrs["body_params"])
    carry = [w.local(p) for p in cond_params]
    body_in = [w.local(p) for p in body_params]
    w.assign(carry, init)
    trajectory = op.attrs.get("trajectory")
    if trajectory:
        history = w.write(op.block.var(trajectory))
        w.emit(f"{history} = []")
    probe = _observe.instrument(op) and w.const(op, "O")  # iteration counts (observe.py)
    limit = op.block.program.max_loop_iterations  # to_static's or load's guard (else None)
    if probe or limit is not None:
        count = w.fresh("n")
        w.emit(f"{count} = 0")
    w.emit("while True:")
    with w.scoped():
        w.assigned.update(cond_params)
        (pred,) = w.emit_block(op.attrs["cond_block"], [op.attrs["cond_output"]])
        w.emit(f"if not _bool({pred}):")
        w.emit("    break")
        if probe or limit is not None:
            w.emit(f"{count} += 1")
        if limit is not None:
            w.emit(f"if {count} > {int(limit)}:")
            w.emit(f"    raise {w.const(loop_limit_error, 'E')}({w.const(op, 'O')}, {int(limit)})")
        w.assign(body_in, carry)
        w.assigned.update(body_params)
        if trajectory:
            w.emit(f"{history}.append(({', '.join(body_in)},))")
        w.assign(carry, w.emit_block(op.attrs["body_block"], list(op.attrs["body_outputs"])))
    w.assign([w.write(v) for v in op.outputs if v.name != trajectory], carry)
    if probe:
        w.emit(f"{w.const(_observe.notify_while, 'N')}({probe}, {count})")


def loop_limit_error(op, limit: int) -> ExecutionError:
    return ExecutionError(
        "while",
        op.location if op.location and op.location[0] else None,
        RuntimeError(
            f"the loop ran more than {limit:,} iterations, the program's max_loop_iterations; "
            "the model (or its input) loops too long. If it needs more, state a larger bound: "
            "to_static(..., max_loop_iterations=N), or autostatic.load(path, "
            "max_loop_iterations=N) for a loaded model (None: no limit)"
        ),
    )


def _emit_while_grad(w, op) -> None:
    from autostatic_runtime.static.backward import emit_while_grad

    emit_while_grad(w, op)


CONTROL_FLOW_OPS: dict[str, Callable] = {
    "cond": emit_cond,
    "while": emit_while,
    "while_grad": _emit_while_grad,
}


def is_literal(x: Any) -> bool:
    return isinstance(x, Literal)

"""Static reverse-mode differentiation: gradient ops appended to the program.

Each op's ``grad`` rule (the same function eager autograd calls) runs on Variables in static
mode, so it appends ops. Control flow is differentiated by *replaying* the forward sub-block
inside the gradient sub-block (values local to a branch or an iteration are recomputed, not
stored): a ``cond`` gets a gradient ``cond`` whose branches replay the forward branch and then
differentiate it (its gradient ops read the forward ``cond``'s own outputs, so the ops that
made only those are pruned); a ``while`` records the loop variables entering each iteration (its
trajectory), and a ``while_grad`` op walks that trajectory backwards, replaying one body
iteration and differentiating it at each step.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.autograd import computing_grads_for
from autostatic_runtime.errors import StaticBuildError, user_location
from autostatic_runtime.ops.registry import OPS, autocast_suspended
from autostatic_runtime.static.builder import program_guard, static_guard
from autostatic_runtime.static.compiler import has_side_effect
from autostatic_runtime.static.program import Block, Literal, Parameter, Program, Variable

__all__ = ["append_backward", "gradients", "backward_block"]

META_ATTRS = frozenset({"op_role"})


class _Role(threading.local):
    """The role of ops being appended, per thread (like static mode itself)."""

    value = "forward"


_role = _Role()


@contextlib.contextmanager
def op_role(role: str) -> Iterator[None]:
    """Tag ops appended inside the block (``backward``/``optimize``) for ``clone(for_test)``."""
    saved = _role.value
    _role.value = role
    try:
        yield
    finally:
        _role.value = saved


def current_role() -> str:
    return _role.value


def _differentiable(x: Any) -> bool:
    return isinstance(x, Variable) and not x.stop_gradient and x.dtype.is_floating


def _zeros_like(v: Variable) -> Variable:
    from autostatic_runtime.creation import zeros_like

    return zeros_like(v)


def _grad_or_zeros(grads: dict, v: Variable) -> Variable:
    g = grads.get(v.name)
    return _zeros_like(v) if g is None else g


def _accumulate(grads: dict, name: str, g: Variable) -> None:
    prev = grads.get(name)
    grads[name] = g if prev is None else prev + g


@autocast_suspended()  # gradient ops take the dtypes of the forward (rt.amp.auto_cast)
def backward_block(
    block: Block, seeds: dict[str, Variable], through_writes: bool = True
) -> dict[str, Variable]:
    """Gradients of the seeded outputs w.r.t. every variable ``block``'s ops read.

    Appends gradient ops to the program's current block (``block`` itself, or the gradient
    sub-block being built). Returns name -> gradient Variable. With ``through_writes=False``
    an op that writes a persistable variable (an optimizer's update of a parameter, a running
    statistic) is not differentiated: a parameter is a leaf, whose gradient sums over every
    op that reads it, before or after an update (as eager autograd sums over the versions of
    one leaf tensor).
    """
    grads = dict(seeds)
    for op in reversed(list(block.ops)):
        gouts = [grads.get(v.name) for v in op.outputs]
        if all(g is None for g in gouts):
            continue
        if not through_writes and any(v.persistable for v in op.outputs):
            continue
        if op.type == "cond":
            in_grads = _cond_grad(op, gouts)
        elif op.type == "while":
            in_grads = _while_grad(op, gouts)
        else:
            in_grads = _op_grad(op, gouts)
        for x, g in zip(op.inputs, in_grads):
            if g is not None and _differentiable(x):
                _accumulate(grads, x.name, g)
    return grads


def _op_grad(op, gouts: list) -> tuple:
    opdef = OPS.get(op.type)
    if opdef is None or opdef.grad is None:
        return ()
    ins = [x.value if isinstance(x, Literal) else x for x in op.inputs]
    attrs = {k: v for k, v in op.attrs.items() if k not in META_ATTRS}
    if opdef.multi_output:
        g_arg = tuple(
            g if g is not None or i in opdef.nondiff_outputs else _zeros_like(o)
            for i, (g, o) in enumerate(zip(gouts, op.outputs))
        )
        out_arg = tuple(op.outputs)
    else:
        g_arg, out_arg = gouts[0], op.outputs[0]
    with computing_grads_for(tuple(_differentiable(x) for x in op.inputs)):
        result = opdef.grad(g_arg, out_arg, *ins, **attrs)
    return result if isinstance(result, (tuple, list)) else (result,)


# ---- control flow ----------------------------------------------------------------------------


def replay(source: Block, target: Block) -> dict[str, Variable]:
    """Copy ``source``'s variables and ops into ``target`` (same names); return the new vars."""
    mapping: dict[str, Variable] = {}
    for name, v in source.vars.items():
        mapping[name] = target.create_var(
            name, v._shape, v.dtype, v.persistable, v.stop_gradient, v.is_data
        )

    def local(x):
        return mapping.get(x.name, x) if isinstance(x, Variable) else x

    for op in source.ops:
        # a replayed print/assert runs only if its output is needed: it acted in the forward
        attrs = dict(op.attrs)
        if has_side_effect(op):
            attrs["side_effect"] = False
        target.append_op(
            op.type,
            [local(x) for x in op.inputs],
            [local(v) for v in op.outputs],
            attrs,
            location=op.location,
        )
    return mapping


def _seed_grads(op, gouts: list, count: int) -> list[Variable]:
    return [
        g if g is not None else _zeros_like(out)
        for g, out in zip(gouts[:count], op.outputs[:count])
    ]


def _cond_grad(op, gouts: list) -> list:
    from autostatic_runtime.static.control_flow import free_vars

    need = [x for x in op.inputs[1:] if _differentiable(x)]
    if not need:
        return []
    program: Program = op.block.program
    parent = program.current_block()
    seeds = _seed_grads(op, gouts, len(op.outputs))
    written = _writers(program)
    branches, results = [], []
    for key, outs in (("true_block", "true_outputs"), ("false_block", "false_outputs")):
        gb = program._create_block()
        try:
            mapping = replay(op.attrs[key], gb)
            replayed = len(gb.ops)
            bseeds: dict[str, Variable] = {}
            for name, s in zip(op.attrs[outs], seeds):
                _accumulate(bseeds, mapping[name].name if name in mapping else name, s)
            grads = backward_block(gb, bseeds)
            results.append([_grad_or_zeros(grads, x) for x in need])
            _read_forward_outputs(op, gb, op.attrs[outs], replayed, written)
        finally:
            program._rollback()
        branches.append(gb)
    inputs = _merge_vars(
        free_vars(branches[0], [v.name for v in results[0]]),
        free_vars(branches[1], [v.name for v in results[1]]),
    )
    outs = [
        parent.create_var(program.unique_name(f"{x.name}@GRAD"), x._shape, x.dtype) for x in need
    ]
    parent.append_op(
        "cond",
        [op.inputs[0]] + inputs,
        outs,
        {
            "true_block": branches[0],
            "false_block": branches[1],
            "true_outputs": tuple(v.name for v in results[0]),
            "false_outputs": tuple(v.name for v in results[1]),
            "op_role": "backward",
        },
        location=op.location,
    )
    by_name = {x.name: g for x, g in zip(need, outs)}
    return [by_name.get(x.name) if isinstance(x, Variable) else None for x in op.inputs]


def _writers(program: Program) -> dict[str, int]:
    """How many ops of ``program`` write each variable name."""
    count: dict[str, int] = {}
    for block in program.blocks:
        for op in block.ops:
            for v in op.outputs:
                count[v.name] = count.get(v.name, 0) + 1
    return count


def _read_forward_outputs(op, gb: Block, names: tuple, replayed: int, written: dict) -> None:
    """Let the gradient ops of a ``cond`` branch (``gb.ops[replayed:]``) read the forward
    ``cond``'s own outputs instead of their replayed values: the gradient ``cond`` takes the
    same branch, so they are equal, and the replayed ops that made them are then pruned (a
    ``tanh`` branch is not computed again). Only outputs no other op writes, not persistable."""
    swap = {}
    for name, out in zip(names, op.outputs):
        if name in gb.vars and not out.persistable and written.get(out.name) == 1:
            swap[name] = out
    if not swap:
        return
    for grad_op in gb.ops[replayed:]:
        grad_op.inputs = [
            swap.get(x.name, x) if isinstance(x, Variable) and x.block is gb else x
            for x in grad_op.inputs
        ]


def _while_grad(op, gouts: list) -> list:
    from autostatic_runtime.static.control_flow import free_vars

    n = op.attrs["num_loop_vars"]
    init, outer = op.inputs[:n], op.inputs[n:]
    need_outer = [x for x in outer if _differentiable(x)]
    if not any(_differentiable(x) for x in init) and not need_outer:
        return []
    program: Program = op.block.program
    parent = program.current_block()
    trajectory = op.attrs.get("trajectory")
    if trajectory is None:
        traj = op.block.create_var(
            program.unique_name("while_trajectory"), (), "float32", stop_gradient=True
        )
        op.attrs["trajectory"] = traj.name
        op.outputs.append(traj)
        traj.op = op
        program._bump()
    else:
        traj = op.block.var(trajectory)
    seeds = _seed_grads(op, gouts, n)
    body: Block = op.attrs["body_block"]
    gb = program._create_block()
    try:
        mapping = replay(body, gb)
        seed_params = [
            gb.create_var(program.unique_name("loop_grad"), s._shape, s.dtype) for s in seeds
        ]
        bseeds: dict[str, Variable] = {}
        for name, s in zip(op.attrs["body_outputs"], seed_params):
            _accumulate(bseeds, mapping[name].name if name in mapping else name, s)
        grads = backward_block(gb, bseeds)
        params = [mapping[p] for p in op.attrs["body_params"]]
        results = [_grad_or_zeros(grads, p) for p in params]
        results += [_grad_or_zeros(grads, x) for x in need_outer]
    finally:
        program._rollback()
    local = {p.name for p in params} | {p.name for p in seed_params}
    free = [v for v in free_vars(gb, [v.name for v in results]) if v.name not in local]
    outs = [
        parent.create_var(program.unique_name(f"{x.name}@GRAD"), x._shape, x.dtype)
        for x in list(init) + need_outer
    ]
    parent.append_op(
        "while_grad",
        [traj] + seeds + free + need_outer,
        outs,
        {
            "body_grad_block": gb,
            "body_params": tuple(p.name for p in params),
            "seed_params": tuple(p.name for p in seed_params),
            "grad_outputs": tuple(v.name for v in results),
            "num_loop_vars": n,
            "num_free": len(free),
            "op_role": "backward",
        },
        location=op.location,
    )
    grads_in = list(outs[:n]) + [None] * len(outer)
    by_name = {x.name: g for x, g in zip(need_outer, outs[n:])}
    for i, x in enumerate(outer):
        if isinstance(x, Variable) and x.name in by_name:
            grads_in[n + i] = by_name[x.name]
    return grads_in


def _merge_vars(*lists):
    out: dict[str, Variable] = {}
    for lst in lists:
        for v in lst:
            out.setdefault(v.name, v)
    return list(out.values())


def emit_while_grad(w, op) -> None:
    """Walk the forward trajectory backwards, replaying and differentiating one iteration
    per step (inlined); gradients of outer variables are summed over the iterations."""
    n, nfree = op.attrs["num_loop_vars"], op.attrs["num_free"]
    history = w.read(op.inputs[0])
    seeds = [w.read(x) for x in op.inputs[1 : 1 + n]]
    for x in op.inputs[1 + n : 1 + n + nfree]:
        w.read(x)
    outer = [w.read(x) for x in op.inputs[1 + n + nfree :]]
    body_params, seed_params = list(op.attrs["body_params"]), list(op.attrs["seed_params"])
    carried = [w.fresh("gl") for _ in range(n)]
    summed = [w.fresh("go") for _ in outer]
    w.assign(carried, seeds)
    w.assign(summed, ["None"] * len(summed))
    step = w.fresh("st")
    w.emit(f"for {step} in reversed({history}):")
    with w.scoped():
        w.assign([w.local(p) for p in body_params], [f"{step}[{i}]" for i in range(n)])
        w.assign([w.local(p) for p in seed_params], carried)
        w.assigned.update(body_params + seed_params)
        results = w.emit_block(op.attrs["body_grad_block"], list(op.attrs["grad_outputs"]))
        w.assign(carried, results[:n])
        for acc, r in zip(summed, results[n:]):
            w.emit(f"{acc} = {r} if {acc} is None else {acc} + {r}")
    zeros = w.const(w.backend.xp.zeros_like, "Z")
    for acc, value in zip(summed, outer):
        w.emit(f"if {acc} is None:")
        w.emit(f"    {acc} = {zeros}({value})")
    w.assign([w.write(v) for v in op.outputs], carried + summed)


# ---- public API --------------------------------------------------------------------------


def append_backward(
    loss: Variable,
    parameter_list: list | None = None,
    no_grad_set: set | None = None,
    callbacks: Any = None,
) -> list[tuple]:
    """Append the gradient ops of ``loss`` to its program; return ``[(param, grad), ...]``.

    ``parameter_list`` (Parameters or names) limits which parameters are returned; by default
    every trainable parameter the loss depends on.
    """
    if not isinstance(loss, Variable):
        raise StaticBuildError(
            f"append_backward expects the loss Variable of a static program, "
            f"got {type(loss).__name__}",
            user_location(),
        )
    if not loss.dtype.is_floating:
        raise StaticBuildError(
            f"append_backward: the loss must be a float tensor, got {loss.dtype}", user_location()
        )
    program = loss.block.program
    block = loss.block
    skip = {getattr(v, "name", v) for v in (no_grad_set or ())}
    with program_guard(program), static_guard(), op_role("backward"):
        saved = program.current_block_idx
        program.current_block_idx = block.idx
        try:
            from autostatic_runtime.creation import ones_like

            grads = backward_block(block, {loss.name: ones_like(loss)})
        finally:
            program.current_block_idx = saved
    if parameter_list is None:
        params = [p for p in program.all_parameters() if p.trainable]
    else:
        params = [block.var(p if isinstance(p, str) else p.name) for p in parameter_list]
    return [(p, grads[p.name]) for p in params if p.name in grads and p.name not in skip]


def gradients(
    targets: Any, inputs: Any, target_gradients: Any = None, no_grad_set: Any = None
) -> list:
    """Gradients of ``targets`` w.r.t. ``inputs`` (Variables) as new program variables."""
    targets = [targets] if isinstance(targets, Variable) else list(targets)
    inputs = [inputs] if isinstance(inputs, Variable) else list(inputs)
    program = targets[0].block.program
    with program_guard(program), static_guard(), op_role("backward"):
        from autostatic_runtime.creation import ones_like

        seeds: dict[str, Variable] = {}
        tg = target_gradients or [None] * len(targets)
        for t, g in zip(targets, tg):
            _accumulate(seeds, t.name, g if g is not None else ones_like(t))
        grads = backward_block(targets[0].block, seeds)
    return [grads.get(x.name) for x in inputs]


def is_parameter(v: Any) -> bool:
    return isinstance(v, Parameter)


def _dtype_ok(v: Variable) -> bool:
    return dtypes.convert_dtype(v.dtype).is_floating

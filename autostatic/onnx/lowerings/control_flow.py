"""Lowerings of ``cond`` (ONNX ``If``) and ``while`` (ONNX ``Loop``).

A ``cond``'s branches become the ``If``'s two subgraphs; they read outer values by name, as
the sub-blocks do. A ``while`` becomes a ``Loop`` without a trip count whose loop-carried
values are the op's loop variables (tensor arrays among them are their ``[length, ...]``
buffers, which may grow every iteration): the body subgraph runs the body block, then the
condition block on the new values to decide whether to go on. The first test of the
condition runs before the ``Loop``. A list the loop only appends to, starting empty, is a
scan output instead (``_appended_arrays``).
"""

from __future__ import annotations

from autostatic.onnx.graph import value_info
from autostatic.onnx.lowerings import lowers
from autostatic_runtime import dtypes
from autostatic_runtime.static.program import Variable


def _scalar_bool(g, name: str, var) -> str:
    """``var`` (named ``name`` in ``g``) as the 0-d bool that If and Loop take."""
    name = g.cast(name, var.dtype, dtypes.bool_)
    return name if var.shape == [] else g.node("Reshape", [name, g.ints([])])


def _results(sub, names: list[str], bases: list[str]) -> list[str]:
    """``names`` as the outputs of subgraph ``sub``: a value ``sub`` computes is used as it
    is; an input, an outer value or a repeated output goes through an Identity."""
    produced = {name for node in sub.nodes for name in node.output}
    out = []
    for name, base in zip(names, bases):
        if name not in produced or name in out:
            name = sub.node("Identity", [name], outputs=[sub.fresh(base)])
        out.append(name)
    return out


@lowers("cond")
def _cond(g, op):
    pred = _scalar_bool(g, g.x(op, 0), op.inputs[0])
    branches = {}
    for key, names in (("then_branch", "true_outputs"), ("else_branch", "false_outputs")):
        block = op.attrs["true_block" if key == "then_branch" else "false_block"]
        sub = g.subgraph()
        sub.lower_block(block)
        found = [sub.lookup(name) for name in op.attrs[names]]
        results = _results(sub, found, [f"{name}_out" for name in op.attrs[names]])
        outputs = [value_info(r, v.dtype, v.shape) for r, v in zip(results, op.outputs)]
        branches[key] = sub.make(g.fresh(f"{key}_{block.idx}"), [], outputs)
    outs = [g.out(i) for i in range(len(op.outputs))]
    if outs:
        g.node("If", [pred], outputs=outs, **branches)


def _while_check(op, opset):
    if op.attrs.get("trajectory"):
        return "a loop recorded for training (export the inference program)"
    return None


def _condition(scope, op, values: list) -> str:
    """The loop condition on ``values`` (the cond block lowered into ``scope``; None for a
    loop variable the condition does not read)."""
    for param, name in zip(op.attrs["cond_params"], values):
        if name is not None:
            scope.bind(param, name)
    block = op.attrs["cond_block"]
    scope.lower_block(block)
    cond = block.var(op.attrs["cond_output"])
    return _scalar_bool(scope, scope.lookup(cond.name), cond)


@lowers("while", check=_while_check)
def _while(g, op):
    n = op.attrs["num_loop_vars"]
    init = [g.x(op, i) for i in range(n)]
    scans = _appended_arrays(op)
    carried = [k for k in range(n) if k not in scans]
    first = _condition(g.scope(), op, [None if k in scans else init[k] for k in range(n)])

    body = g.subgraph()
    bblock = op.attrs["body_block"]
    params = [bblock.var(p) for p in op.attrs["body_params"]]
    inputs = [value_info(g.fresh("iteration"), "int64", []), value_info(g.fresh("go"), "bool", [])]
    for k in carried:
        name = g.fresh(params[k].name)
        body.bind(params[k].name, name)
        inputs.append(value_info(name, params[k].dtype, params[k].shape))
    skipped = {id(o) for write in scans.values() for o in (write, write.inputs[1].op)}
    body.lower_block(bblock, skip=skipped)
    new = [None if k in scans else body.lookup(op.attrs["body_outputs"][k]) for k in range(n)]
    go_on = _condition(body.scope(), op, new)
    elements = [_element(body, scans[k]) for k in scans]
    names = ["go_on"] + [f"{params[k].name}_next" for k in carried] + ["element"] * len(scans)
    results = _results(body, [go_on, *(new[k] for k in carried), *elements], names)
    specs = [("bool", [])] + [(params[k].dtype, params[k].shape) for k in carried]
    specs += [(scans[k].inputs[0].dtype, None) for k in scans]
    outputs = [value_info(r, dt, shape) for r, (dt, shape) in zip(results, specs)]
    graph = body.make(g.fresh(f"loop_body_{bblock.idx}"), inputs, outputs)
    outs = [g.out(k) for k in carried] + [g.out(k) for k in scans]
    g.node("Loop", ["", first, *(init[k] for k in carried)], outputs=outs, body=graph)


def _element(body, write) -> str:
    """The value one iteration appends to a scanned array."""
    value = write.inputs[0]
    return body.cast(body.lookup(value.name), value.dtype, write.outputs[0].dtype)


def _appended_arrays(op) -> dict:
    """Loop variables that are tensor arrays the loop only appends to (``xs.append(h)`` in an
    RNN), starting empty: index -> the body's ``array_write``. They become the Loop's scan
    outputs (one element per iteration, stacked by ONNX Runtime), not carried buffers that
    would be copied whole on every append."""
    n, body = op.attrs["num_loop_vars"], op.attrs["body_block"]
    cond_reads = {x.name for o in op.attrs["cond_block"].ops for x in o.inputs if _is_var(x)}
    found = {}
    for k in range(n):
        start = op.inputs[k]
        if not (_is_var(start) and start.op is not None and start.op.type == "create_array"):
            continue
        if op.attrs["cond_params"][k] in cond_reads:
            continue
        writes = _readers(body, op.attrs["body_params"][k])
        if [o.type for o in writes] != ["array_length", "array_write"]:
            continue
        length, write = writes
        out = write.outputs[0].name
        if (
            _readers(body, length.outputs[0].name) == [write]
            and write.inputs[1] is length.outputs[0]
            and not _readers(body, out)
            and list(op.attrs["body_outputs"]).count(out) == 1
            and op.attrs["body_outputs"][k] == out
        ):
            found[k] = write
    return found


def _readers(block, name: str) -> list:
    return [o for o in block.ops if any(_is_var(x) and x.name == name for x in o.inputs)]


def _is_var(x) -> bool:
    return isinstance(x, Variable)

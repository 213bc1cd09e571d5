"""Lowerings of ``cond`` (ONNX ``If``) and ``while`` (ONNX ``Loop``).

A ``cond``'s branches become the ``If``'s two subgraphs; they read outer values by name, as
the sub-blocks do. A ``while`` becomes a ``Loop`` without a trip count whose loop-carried
values are the op's loop variables (tensor arrays among them are their ``[length, ...]``
buffers, which may grow every iteration): the body subgraph runs the body block, then the
condition block on the new values to decide whether to go on. The first test of the
condition runs before the ``Loop``.
"""

from __future__ import annotations

from autostatic.onnx.graph import value_info
from autostatic.onnx.lowerings import lowers
from autostatic_runtime import dtypes


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


def _condition(scope, op, values: list[str]) -> str:
    """The loop condition on ``values`` (the cond block lowered into ``scope``)."""
    for param, name in zip(op.attrs["cond_params"], values):
        scope.bind(param, name)
    block = op.attrs["cond_block"]
    scope.lower_block(block)
    cond = block.var(op.attrs["cond_output"])
    return _scalar_bool(scope, scope.lookup(cond.name), cond)


@lowers("while", check=_while_check)
def _while(g, op):
    n = op.attrs["num_loop_vars"]
    init = [g.x(op, i) for i in range(n)]
    first = _condition(g.scope(), op, init)

    body = g.subgraph()
    bblock = op.attrs["body_block"]
    params = [bblock.var(p) for p in op.attrs["body_params"]]
    inputs = [value_info(g.fresh("iteration"), "int64", []), value_info(g.fresh("go"), "bool", [])]
    for p in params:
        name = g.fresh(p.name)
        body.bind(p.name, name)
        inputs.append(value_info(name, p.dtype, p.shape))
    body.lower_block(bblock)
    new = [body.lookup(name) for name in op.attrs["body_outputs"]]
    go_on = _condition(body.scope(), op, new)
    results = _results(body, [go_on, *new], ["go_on"] + [f"{p.name}_next" for p in params])
    outputs = [value_info(results[0], "bool", [])]
    outputs += [value_info(r, p.dtype, p.shape) for r, p in zip(results[1:], params)]
    graph = body.make(g.fresh(f"loop_body_{bblock.idx}"), inputs, outputs)
    g.node("Loop", ["", first, *init], outputs=[g.out(i) for i in range(n)], body=graph)

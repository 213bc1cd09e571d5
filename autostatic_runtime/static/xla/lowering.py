"""Lowering a block to JAX: each op's own kernel on ``jax.numpy``, control flow to ``lax``.

``run_block`` walks a block's ops (pruned to the results, as ``PythonCodegen`` does) once,
while ``jax.jit`` traces: a kernel op calls ``opdef.kernel(xp, *inputs, **attrs)`` with ``xp``
the JAX backend's namespace, so there is one definition per op. Only control flow has a
lowering here (``LOWERINGS``): ``cond`` becomes ``lax.cond`` and ``while`` ``lax.while_loop``.
What cannot be lowered raises ``Unlowerable`` naming the op; the compiler then runs the
program on the default executor.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from autostatic_runtime.ops.registry import OPS
from autostatic_runtime.static.compiler import META_ATTRS, prune
from autostatic_runtime.static.program import Block, Literal

RANDOM_EXTRAS = ("random_uniform", "random_normal", "random_integers")


class Unlowerable(Exception):
    """``op`` cannot run inside one XLA computation, for ``reason``."""

    def __init__(self, op: Any, reason: str):
        super().__init__(reason)
        self.op, self.reason = op, reason


class Lowering:
    """State of one trace: the kernels' namespace and the op being lowered."""

    def __init__(self, backend: Any):
        import jax

        self.lax = jax.lax
        self.jnp = backend.ns
        xp = types.SimpleNamespace(**vars(backend.xp))
        for name in RANDOM_EXTRAS:  # a trace would freeze one draw into the program
            setattr(xp, name, self._no_random)
        xp.checks_values = False  # values are unknown while tracing
        self.xp = xp
        self.op: Any = None

    def _no_random(self, *args, **kwargs):
        raise Unlowerable(
            self.op, "it draws random numbers, which a compiled program would draw once"
        )

    def run_block(self, block: Block, env: dict, results: list[str]) -> list:
        """Lower ``block``'s ops into the current trace; ``env`` maps names to values."""
        for op in prune(block, results):
            self.op = op
            lower = LOWERINGS.get(op.type)
            if lower is not None:
                lower(self, op, env)
            else:
                self._kernel(op, env)
        return [env[name] for name in results]

    def _kernel(self, op, env: dict) -> None:
        opdef = OPS.get(op.type)
        if opdef is None:
            raise Unlowerable(op, "it has no kernel and no lowering")
        if op.attrs.get("side_effect"):
            raise Unlowerable(op, "it has a side effect (print/assert) at run time")
        attrs = {k: v for k, v in op.attrs.items() if k not in META_ATTRS}
        out = opdef.kernel(self.xp, *[read(env, x) for x in op.inputs], **attrs)
        outs = out if opdef.multi_output else (out,)
        for var, value in zip(op.outputs, outs):
            env[var.name] = value

    def pred(self, value: Any) -> Any:
        """A scalar bool from a predicate of one element (``[1]`` in Paddle style)."""
        return self.jnp.reshape(value, ()).astype(bool)

    def strong(self, value: Any) -> Any:
        """``value`` as a JAX array of its own dtype (not weakly typed), as loop carries
        and branch results must be."""
        value = self.jnp.asarray(value)
        return self.lax.convert_element_type(value, value.dtype)


def read(env: dict, operand: Any) -> Any:
    return operand.value if isinstance(operand, Literal) else env[operand.name]


def _scoped(env: dict, names: list[str], values) -> dict:
    inner = dict(env)  # outer values are closed over: JAX passes them to the sub-computation
    inner.update(zip(names, values))
    return inner


def lower_cond(low: Lowering, op, env: dict) -> None:
    pred = low.pred(read(env, op.inputs[0]))

    def branch(block_key: str, outputs_key: str) -> Callable:
        def run(_):
            results = low.run_block(op.attrs[block_key], dict(env), list(op.attrs[outputs_key]))
            return tuple(low.strong(r) for r in results)

        return run

    outs = low.lax.cond(
        pred, branch("true_block", "true_outputs"), branch("false_block", "false_outputs"), None
    )
    for var, value in zip(op.outputs, outs):
        env[var.name] = value


def lower_while(low: Lowering, op, env: dict) -> None:
    if op.attrs.get("trajectory"):
        raise Unlowerable(
            op, "its gradient needs every iteration's values, and the iteration count has no bound"
        )
    if op.block.program.max_loop_iterations is not None:
        raise Unlowerable(op, "the program has a max_loop_iterations guard")
    n = op.attrs["num_loop_vars"]
    init = tuple(low.strong(read(env, x)) for x in op.inputs[:n])
    cond_params, body_params = list(op.attrs["cond_params"]), list(op.attrs["body_params"])

    def cond_fn(carry):
        inner = _scoped(env, cond_params, carry)
        (pred,) = low.run_block(op.attrs["cond_block"], inner, [op.attrs["cond_output"]])
        return low.pred(pred)

    def body_fn(carry):
        inner = _scoped(env, body_params, carry)
        outs = low.run_block(op.attrs["body_block"], inner, list(op.attrs["body_outputs"]))
        return tuple(
            low.strong(low.jnp.astype(o, c.dtype)) if o.dtype != c.dtype else low.strong(o)
            for o, c in zip(map(low.jnp.asarray, outs), carry)
        )

    outs = low.lax.while_loop(cond_fn, body_fn, init)
    for var, value in zip(op.outputs, outs):
        env[var.name] = value


def lower_while_grad(low: Lowering, op, env: dict) -> None:
    raise Unlowerable(op, "the loop's iteration count has no bound to store its trajectory")


LOWERINGS: dict[str, Callable] = {
    "cond": lower_cond,
    "while": lower_while,
    "while_grad": lower_while_grad,
}


def sub_block_writes(block: Block) -> Any:
    """The first op inside a sub-block of ``block`` that writes a persistable variable (a
    compiled branch or loop body cannot store into the scope), or None."""
    for op in block.ops:
        for sub in op.sub_blocks():
            for inner in sub.ops:
                if any(v.persistable for v in inner.outputs):
                    return inner
            found = sub_block_writes(sub)
            if found is not None:
                return found
    return None

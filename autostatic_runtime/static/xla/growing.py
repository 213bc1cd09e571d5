"""Loops whose variables grow (a list appended to, a tensor concatenated to) as one XLA
while loop: preallocated buffers carried with their lengths (``bounded.Bounded``).

``lax.while_loop`` carries values of fixed shapes. A loop that grows a value by the same
size at every iteration (found by tracing its body once, ``jax.eval_shape``) is compiled
when its trip count has a bound known while tracing (``trip_bound``): a ``range(n)`` or
``i < n`` term of its condition (``and`` with anything else), with ``n`` a Python number,
a shape, an ``InputSpec`` dim, or the program's ``max_loop_iterations`` (``to_static(...,
max_loop_iterations=n)``, ``autostatic.load(..., max_loop_iterations=n)``). Each growing
variable is then carried as a buffer of ``start + step * bound`` entries along the growing
axis and its length::

    toks = []                              buffer [40, 16], length 0
    while i < 40 and rt.any(~done):        while i < 40 and any(~done):
        toks.append(tok)                       buffer[length] = tok; length += 1

When the condition is only the counter comparison, the trip count is exact and the grown
values leave the loop as plain arrays of their final size. Otherwise they stay ``Bounded``
after it; a program result that is one is cut to its length on the host. When the bound is
the program's ``max_loop_iterations`` (no counter term shows a lower one), the loop is
guarded as any loop under it is (``lowering._guarded``): it stops at the bound, and one that
would run past it raises the default executor's ``ExecutionError`` (naming the loop's line)
after the call. A loaded model's default of 1,000,000 is a budget against runaway loops,
not a size to allocate (buffers that every call zeroes and copies back): a limit that large
gives no bound.

A loop without a bound is run out while tracing when its condition is known then
(``lowering._unrolled``); otherwise the program stays on the default executor, and the
fallback warning says which loop and how to state a bound. A loop whose gradient is needed
(a trajectory) is only ever unrolled.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.static.compiler import prune
from autostatic_runtime.static.program import Variable
from autostatic_runtime.static.verify import DEFAULT_MAX_LOOP_ITERATIONS
from autostatic_runtime.static.xla.bounded import Bounded, origin
from autostatic_runtime.static.xla.errors import Unlowerable
from autostatic_runtime.static.xla.lowering import (
    _guarded,
    _scoped,
    _unrolled,
    read,
    trip_count,
)

NO_BOUND = (
    "it grows a loop variable at every iteration (a list appended to, a tensor concatenated "
    "to) and its iteration count has no bound the compiler can see: give its condition a "
    "'range(n)' or 'i < n' term whose n is known when compiling (a Python number, a shape, "
    "an InputSpec dim), or state one below 1,000,000 (a loaded model's default budget) "
    "with to_static(..., max_loop_iterations=n) or autostatic.load(..., max_loop_iterations=n)"
)


RECORDED = (
    "its loop variables change shape and its gradient is needed (run it under rt.no_grad() "
    "when no gradient is wanted)"
)


def lower_growing(low: Any, op: Any, env: dict, trajectory: Any, limit: int | None) -> tuple:
    """``(outputs, trajectory)`` of a ``while`` whose body changes a loop variable's shape."""
    if trajectory:  # a gradient walks it back: only an unrolled loop keeps each step's shapes
        return _unrolled(low, op, env, RECORDED, limit)
    n = op.attrs["num_loop_vars"]
    init = tuple(low.strong(read(env, x)) for x in op.inputs[:n])
    growth = _growth(low, op, env, init)
    trips, exact = trip_bound(low, op, env, init)
    check = limit is not None and (trips is None or trips > limit)
    bound = limit if check else trips
    if check and limit >= DEFAULT_MAX_LOOP_ITERATIONS:  # a budget, not a size to allocate
        bound = None
    if bound is None:
        try:
            return _unrolled(low, op, env, "its loop variables change shape", limit)
        except Unlowerable:
            raise Unlowerable(op, NO_BOUND) from None
    try:
        return bounded_while(low, op, env, init, growth, bound, exact and not check, check), None
    except Unlowerable as exc:
        if not exact:
            raise
        try:  # an op the bounded form cannot take: the known count can still be run out
            return _unrolled(low, op, env, "its loop variables change shape", limit)
        except Unlowerable:
            raise exc from None


def trip_bound(low: Any, op: Any, env: dict, init: tuple) -> tuple[int | None, bool]:
    """``(trips, exact)``: the least bound on the loop's iterations that a counter term of
    its condition gives (``lowering.trip_count``; terms joined by ``and``), and whether that
    term is the whole condition (then the loop runs exactly ``trips`` iterations)."""
    cond = op.attrs["cond_block"]
    ops = {v.name: o for o in prune(cond, [op.attrs["cond_output"]]) for v in o.outputs}
    best, exact = None, False
    pending = [op.attrs["cond_output"]]
    while pending:
        term = ops.get(pending.pop())
        if term is None:
            continue
        if term.type == "logical_and":
            pending += [x.name for x in term.inputs if isinstance(x, Variable)]
            continue
        counted = trip_count(low, op, env, init, term)
        if counted is not None and (best is None or counted[1] < best):
            best = counted[1]
            exact = term.outputs[0].name == op.attrs["cond_output"]
    return best, exact


def _growth(low: Any, op: Any, env: dict, init: tuple) -> dict[int, tuple]:
    """``{p: (axis, step, shape, exact)}``: loop variable ``p`` grows by ``step`` along
    ``axis`` at every iteration (at most, unless ``exact``), its other dims as ``shape`` has
    them, from one body traced abstractly (``jax.eval_shape``). A variable that grows in a
    branch, or a list the body indexes with a traced position (``xs[i]``), is traced again
    as a ``Bounded`` value, whose buffer the growing ops lengthen by what they write: the
    step found is then an upper bound."""
    try:
        after = _probe(low, op, env, init)
        probed = {p: a.axis for p, a in enumerate(after)
                  if type(a) is Bounded and type(init[p]) is not Bounded}  # fmt: skip
    except Unlowerable:
        raise
    except Exception:  # noqa: BLE001  (an op needs concrete values: try the lists bounded)
        probed = dict.fromkeys(_lists(op), 0)
    growth = {}
    if probed:
        jnp = low.jnp
        init = tuple(
            Bounded(c, jnp.asarray(c.shape[probed[p]], jnp.int64), probed[p], True)
            if p in probed
            else c
            for p, c in enumerate(init)
        )
        try:
            after = _probe(low, op, env, init)
        except Unlowerable:
            raise
        except Exception as exc:  # noqa: BLE001  (a body the trace cannot take: say why)
            raise Unlowerable(
                op, f"its loop variables change shape, and its body fails: {_first_line(exc)}"
            ) from exc
        for p, axis in probed.items():
            if type(after[p]) is not Bounded or after[p].axis != axis:
                raise Unlowerable(op, "a loop variable changes how it grows")
            step = max(after[p].capacity - init[p].capacity, 0)
            growth[p] = (axis, step, _shape(after[p]), False)
    for p, (before, now) in enumerate(zip(init, after)):
        if p in growth:
            continue
        a, b = _shape(before), _shape(now)
        if a == b and (type(before) is Bounded) == (type(now) is Bounded):
            continue
        if type(before) is Bounded or type(now) is Bounded or len(a) != len(b):
            raise Unlowerable(op, "a loop variable changes rank or how it grows")
        # an empty list's element dims may be placeholders (0) until the first append
        axes = [i for i in range(len(a)) if a[i] != b[i] and not (i > 0 and a[0] == 0)]
        if len(axes) != 1:
            raise Unlowerable(op, "a loop variable changes shape in more than one dim")
        axis = axes[0]
        growth[p] = (axis, b[axis] - a[axis], b, True)
    return growth


def _probe(low: Any, op: Any, env: dict, init: tuple) -> tuple:
    """The loop variables' shapes after one iteration (the body traced abstractly)."""
    import jax

    params, block = list(op.attrs["body_params"]), op.attrs["body_block"]
    outputs = list(op.attrs["body_outputs"])

    def body(carry):
        return tuple(low.nested(block, _scoped(env, params, carry), outputs))

    return jax.eval_shape(low.loop_body(body), init)


def _lists(op: Any) -> set[int]:
    """The loop variables that are lists (tensor arrays): made by a list op in the body."""
    made = {v.name: o.type for o in op.attrs["body_block"].ops for v in o.outputs[:1]}
    return {
        p for p, name in enumerate(op.attrs["body_outputs"])
        if made.get(name) in ("array_write", "array_pop", "create_array")
    }  # fmt: skip


def _shape(value: Any) -> tuple:
    return tuple((value.array if type(value) is Bounded else value).shape)


def bounded_while(
    low: Any, op: Any, env: dict, init: tuple, growth: dict, bound: int, exact: bool, check: bool
) -> tuple:
    """The loop as one ``lax.while_loop`` over buffers of ``bound`` iterations' growth: a
    counter term of the condition stops it within them, or (``check``: the bound is the
    program's ``max_loop_iterations``) it is guarded (``lowering._guarded``)."""
    jnp, lax = low.jnp, low.lax
    carries = list(init)
    for p, (axis, step, shape, _) in growth.items():
        start = init[p].shape[axis]
        size = list(shape)
        size[axis] = start + max(step, 0) * bound
        buffer = jnp.zeros(size, init[p].dtype)
        if start:
            buffer = lax.dynamic_update_slice_in_dim(buffer, init[p], 0, axis)
        length = jnp.asarray(start, jnp.int64)
        why = origin(op, "the iteration count of the loop")
        carries[p] = Bounded(low.strong(buffer), length, axis, True, why)
    room = {op.attrs["body_outputs"][p]: carries[p].capacity for p in growth}
    cond_params, body_params = list(op.attrs["cond_params"]), list(op.attrs["body_params"])
    outputs = list(op.attrs["body_outputs"])

    def cond_fn(state):
        inner = _scoped(env, cond_params, state[0])
        (pred,) = low.nested(op.attrs["cond_block"], inner, [op.attrs["cond_output"]])
        return low.pred(pred)

    def body_fn(state):
        saved, low.room = low.room, room
        try:
            outs = low.nested(op.attrs["body_block"], _scoped(env, body_params, state[0]), outputs)
        finally:
            low.room = saved
        return (tuple(low.like(o, c) for o, c in zip(outs, state[0])),)

    state = (tuple(carries),)
    if check:
        (final,) = _guarded(low, op, cond_fn, body_fn, state, bound)
    else:
        (final,) = lax.while_loop(cond_fn, low.loop_body(body_fn), state)
    if not exact:
        return final
    final = list(final)
    for p, (axis, step, _, static) in growth.items():  # the exact count: the final size
        if static:
            size = init[p].shape[axis] + step * bound
            final[p] = lax.slice_in_dim(final[p].array, 0, size, axis=axis)
    return tuple(final)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__

"""Lowering a block to JAX: each op's own kernel on ``jax.numpy``, control flow to ``lax``.

``run_block`` walks a block's ops (pruned to the results, as ``PythonCodegen`` does) once,
while ``jax.jit`` traces: a kernel op calls ``opdef.kernel(xp, *inputs, **attrs)`` with ``xp``
the JAX backend's namespace, so there is one definition per op. Only control flow has a
lowering here (``LOWERINGS``): ``cond`` becomes ``lax.cond`` and ``while`` ``lax.while_loop``
(and ``matmul_v2`` with a transposed ``x`` gets the transpose as its own array first, which
XLA's CPU dots run faster).

A ``while`` whose gradient is needed records its *trajectory* (the loop values entering each
iteration) into buffers of ``capacity`` rows carried through the loop, with the iteration
count; ``while_grad`` walks them backwards in another ``lax.while_loop``. The compiler reads
the counts after each call and compiles again with a larger capacity when a loop ran longer
(the rows past the capacity were dropped), so the bound is found, not guessed. Inside a
branch or another loop the count cannot leave the computation: such a loop is unrolled.

An op whose inputs are all known while tracing (``shape``, constants, and what is computed
from them alone) runs its kernel on NumPy at once: its result is a concrete array, so a
shape built from ``x.shape[0]`` (a ``fill_constant_dynamic``, a dynamic ``reshape``) is
static in the XLA computation, as the input shapes of one ``jax.jit`` specialisation are.

A loop whose body changes a carry's shape (a tensor array appended to), or whose gradient is
needed inside a branch or another loop, is unrolled while tracing when its condition is
known then (a counter from a constant; at most ``UNROLL_LIMIT`` iterations): each iteration
then has its own static shapes, and its trajectory is the list of loop values (``Unrolled``),
which ``while_grad`` walks back unrolled too.

Random ops draw from a key passed to every call (new each call, from the host generator
that ``rt.seed`` seeds) folded with a number per random op, so each call and each op has its
own stream (not NumPy's numbers: the same distribution). A block is traced without a key
first; its first random op raises ``NeedsKey`` and the compiler traces it again with one.
Inside a ``lax.while_loop`` body a draw would repeat at every iteration, so such an op is
unlowerable.

``print`` and ``assert`` ops run their own kernels on NumPy from inside the computation
(``jax.debug.callback``, ordered), so they print and check at every call, in program order.

What cannot be lowered raises ``Unlowerable`` naming the op; the compiler then runs the
program on the default executor.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from autostatic_runtime.ops.registry import OPS
from autostatic_runtime.static.compiler import META_ATTRS, has_side_effect, prune
from autostatic_runtime.static.control_flow import loop_limit_error
from autostatic_runtime.static.program import Block, Literal, Variable
from autostatic_runtime.static.xla import bounded
from autostatic_runtime.static.xla.bounded import Bounded
from autostatic_runtime.static.xla.errors import NeedsKey, Unlowerable  # noqa: F401

SHAPE_ONLY = frozenset({"shape", "array_length"})  # ops that read only their input's shape
UNROLL_LIMIT = 1000  # iterations of a loop unrolled while tracing (its carries change shape)
# a counted loop (its trip count known while tracing) with a body of at most UNROLL_BODY_OPS
# ops, none holding a block, runs UNROLL_FACTOR bodies per lax.while_loop iteration when
# that leaves at least UNROLL_MIN_ROUNDS iterations (``_counted``): XLA's CPU loop costs
# ~4 ns an iteration, but a fused chain of 16 or more elementwise ops can run several times
# slower than the same ops in four shorter iterations, so only small bodies qualify
UNROLL_FACTOR = 4
UNROLL_BODY_OPS = 3
UNROLL_MIN_ROUNDS = 4


class Lowering:
    """State of one trace: the kernels' namespace and the op being lowered."""

    def __init__(self, backend: Any, capacity: int, errors: list, call_key: Any):
        import jax

        from autostatic_runtime import backends

        self.lax = jax.lax
        self.jnp = backend.ns
        self.random = jax.random
        # XLA's CPU dots: a transposed matmul operand is faster as its own array
        # (``lower_matmul``); other platforms' dots take transposes as they are
        self.call_key = call_key  # a legacy uint32[2] key, new at every call (None: no key)
        self.random_ops = 0  # random ops lowered so far (each folds its number into the key)
        self.in_loop = False  # inside a lax.while_loop body
        self.xp = self._namespace(backend)
        self.xp.checks_values = False  # values are unknown while tracing
        # ops whose inputs are all known while tracing (shapes, constants, values computed
        # from them) run on NumPy now, so their results are concrete: a shape computed from
        # ``x.shape[0]`` stays a Python-visible value, as jax.jit's static shapes are
        self.host_xp = self._namespace(backends.get_backend("numpy"))
        self.traced = _Traced(jax.core.Tracer)
        _register_pytrees()
        self.op: Any = None
        self.capacity = capacity  # trajectory rows per recording loop
        self.counts: list = []  # iteration counts of the loops that record a trajectory
        self.stops: list = []  # (op, limit, stopped) of the loops guarded by a limit
        self.depth = 0  # nesting inside lowered branches and loop bodies
        self.errors = errors  # (op, exception) of a print/assert that failed in this call
        self.effects = False  # whether the block has print/assert ops
        # op output name -> capacity, for the loop variables a bounded loop body is making:
        # a growing op there writes into its buffer in place (``bounded._room``)
        self.room: dict[str, int] = {}

    def _namespace(self, backend: Any) -> types.SimpleNamespace:
        xp = types.SimpleNamespace(**vars(backend.xp))
        xp.random_uniform, xp.random_normal = self._uniform, self._normal
        xp.random_integers = self._integers
        if backend.name == "jax":  # int32 positions (the kernels cast them)
            xp.argmax, xp.argmin = _positions(self.lax.argmax), _positions(self.lax.argmin)
        return xp

    # -- random numbers: from the call's key, one stream per op -------------------------------
    def _key(self):
        """A key for the op being lowered: the call's key folded with a number per random
        op of the trace. In a ``lax.while_loop`` body the same key would serve every
        iteration, so a random op there is unlowerable (an unrolled loop is fine)."""
        if self.in_loop:
            raise Unlowerable(
                self.op, "it draws random numbers inside a loop, which would repeat one draw"
            )
        if self.call_key is None:  # traced without a key, as a block without random ops is
            raise NeedsKey
        self.random_ops += 1
        return self.random.fold_in(self.call_key, self.random_ops)

    def _uniform(self, shape, low, high, dtype):
        kind = self.jnp.dtype(str(dtype))
        return self.random.uniform(self._key(), tuple(shape), kind, low, high)

    def _normal(self, shape, mean, std, dtype):
        kind = self.jnp.dtype(str(dtype))
        return mean + std * self.random.normal(self._key(), tuple(shape), kind)

    def _integers(self, shape, low, high, dtype):
        kind = self.jnp.dtype(str(dtype))
        return self.random.randint(self._key(), tuple(shape), low, high, kind)

    def loop_body(self, body: Callable) -> Callable:
        """``body`` as a ``lax.while_loop`` body: while it is traced, a random op is
        unlowerable (one key would serve every iteration)."""

        def traced(state):
            saved, self.in_loop = self.in_loop, True
            try:
                return body(state)
            finally:
                self.in_loop = saved

        return traced

    def nested(self, block: Block, env: dict, results: list[str]) -> list:
        """``run_block`` for a branch or loop body (one level deeper)."""
        self.depth += 1
        try:
            return self.run_block(block, env, results)
        finally:
            self.depth -= 1

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
        attrs = {k: v for k, v in op.attrs.items() if k not in META_ATTRS}
        args = [read(env, x) for x in op.inputs]
        if any(type(a) is Bounded for a in args):  # a value a bounded loop is growing
            out = bounded.apply(self, op, opdef, args, attrs)
            outs = out if opdef.multi_output else (out,)
            for var, value in zip(op.outputs, outs):
                env[var.name] = value
            return
        if op.attrs.get("side_effect"):
            self._effect(op, opdef, args, attrs, env)
            return
        known = op.type in SHAPE_ONLY or all(type(a) not in self.traced for a in args)
        out = opdef.kernel(self.host_xp if known else self.xp, *args, **attrs)
        outs = out if opdef.multi_output else (out,)
        for var, value in zip(op.outputs, outs):
            env[var.name] = value

    def _effect(self, op, opdef, args: list, attrs: dict, env: dict) -> None:
        """A ``print``/``assert``: its own kernel runs on NumPy from the computation (a JAX
        debug callback, in program order), when the values exist. A failure is kept in
        ``errors`` (raised by the compiler after the call) and stops later effects."""
        import jax

        host_xp, errors = self.host_xp, self.errors

        def run(*arrays):
            if errors:
                return
            try:
                opdef.kernel(host_xp, *[np.asarray(a) for a in arrays], **attrs)
            except Exception as exc:  # noqa: BLE001  (handed to the caller after the call)
                errors.append((op, exc))

        jax.debug.callback(run, *args, ordered=True)
        self.effects = True
        if not opdef.multi_output:  # print returns its first input
            env[op.outputs[0].name] = args[0]

    def pred(self, value: Any) -> Any:
        """A scalar bool from a predicate of one element (``[1]`` in Paddle style)."""
        return self.jnp.reshape(value, ()).astype(bool)

    def like(self, value: Any, carry: Any) -> Any:
        """``value`` with ``carry``'s dtype, strongly typed (a loop carry must keep its type);
        a ``Bounded`` carry keeps its capacity (``bounded.fit``)."""
        if type(carry) is Bounded or type(value) is Bounded:
            return bounded.fit(self, value, carry)
        value = self.jnp.asarray(value)
        if value.dtype != carry.dtype:
            value = self.jnp.astype(value, carry.dtype)
        return self.strong(value)

    def strong(self, value: Any) -> Any:
        """``value`` as a JAX array of its own dtype (not weakly typed), as loop carries
        and branch results must be."""
        if type(value) is Bounded:
            array, length = self.strong(value.array), self.strong(value.length)
            return value.like(array, length=length, zeros=value.zeros)
        value = self.jnp.asarray(value)
        return self.lax.convert_element_type(value, value.dtype)


def _positions(arg: Callable) -> Callable:
    """``xp.argmax``/``argmin`` giving int32 positions (``lax.argmax`` with
    ``index_dtype=int32``): a 64-bit one lowers to an int64 iota, which JAX cuts to int32 when
    the computation is lowered outside 64-bit mode (a block whose arguments are all 32-bit,
    ``compiler.NARROW``), and the lowered module fails to verify. The kernels cast the
    positions to the op's dtype."""
    import jax.numpy as jnp

    def positions(x, axis=None, keepdims=False):
        if axis is None:
            x, axis = jnp.ravel(x), 0
        axis = axis % x.ndim
        out = arg(x, axis, jnp.int32)
        return jnp.expand_dims(out, axis) if keepdims else out

    return positions


_registered: list = []


def _register_pytrees() -> None:
    if not _registered:
        import jax

        jax.tree_util.register_pytree_node_class(Unrolled)
        jax.tree_util.register_pytree_node_class(Bounded)
        _registered.append(Unrolled)


class _Traced:
    """``type(a) in traced``: whether ``a`` is a value of the trace (a JAX tracer or array),
    cached per type."""

    def __init__(self, tracer: type):
        self.tracer = tracer
        self.known: dict[type, bool] = {}

    def __contains__(self, kind: type) -> bool:
        found = self.known.get(kind)
        if found is None:
            import jax

            found = self.known[kind] = issubclass(kind, (self.tracer, jax.Array))
        return found


def read(env: dict, operand: Any) -> Any:
    return operand.value if isinstance(operand, Literal) else env[operand.name]


def _scoped(env: dict, names: list[str], values) -> dict:
    inner = dict(env)  # outer values are closed over: JAX passes them to the sub-computation
    inner.update(zip(names, values))
    return inner


def lower_cond(low: Lowering, op, env: dict) -> None:
    pred = low.pred(read(env, op.inputs[0]))

    def branch(block_key: str, outputs_key: str, targets: Any = None) -> Callable:
        def run(_):
            results = low.nested(op.attrs[block_key], dict(env), list(op.attrs[outputs_key]))
            results = tuple(low.strong(r) for r in results)
            if targets is None:
                return results
            return tuple(r if t is None else low.like(r, t) for r, t in zip(results, targets))

        return run

    true_fn = branch("true_block", "true_outputs")
    false_fn = branch("false_block", "false_outputs")
    try:
        outs = low.lax.cond(pred, true_fn, false_fn, None)
    except TypeError:  # a list one branch appends to: the results made alike (``joined``)
        import jax

        shapes = zip(jax.eval_shape(true_fn, None), jax.eval_shape(false_fn, None))
        targets = [bounded.joined(op, a, b) for a, b in shapes]
        true_fn = branch("true_block", "true_outputs", targets)
        false_fn = branch("false_block", "false_outputs", targets)
        outs = low.lax.cond(pred, true_fn, false_fn, None)
    for var, value in zip(op.outputs, outs):
        env[var.name] = value


def lower_while(low: Lowering, op, env: dict) -> None:
    trajectory = op.attrs.get("trajectory")
    limit = op.block.program.max_loop_iterations  # to_static's or load's guard (else None)
    if trajectory and low.depth:  # its iteration count could not leave the computation
        why = "its gradient is needed inside a branch or loop"
        outs, history = _unrolled(low, op, env, why, limit)
    else:
        try:
            outs, history = _while_loop(low, op, env, trajectory, limit)
        except TypeError:  # the body changes a carry's shape (a list grows): ``growing.py``
            from autostatic_runtime.static.xla.growing import lower_growing

            outs, history = lower_growing(low, op, env, trajectory, limit)
    if trajectory:
        env[trajectory] = history
    for var, value in zip([v for v in op.outputs if v.name != trajectory], outs):
        env[var.name] = value


def _while_loop(low: Lowering, op, env: dict, trajectory: str | None, limit: int | None) -> tuple:
    """``lax.while_loop``; with a trajectory, rows of ``capacity`` carried along; with a
    ``limit`` (``max_loop_iterations``), guarded (``_guarded``) unless a counter term of its
    condition stops it within the limit (``growing.trip_bound``)."""
    jnp, lax = low.jnp, low.lax
    n = op.attrs["num_loop_vars"]
    init = tuple(low.strong(read(env, x)) for x in op.inputs[:n])
    guarded = limit is not None and _may_pass(low, op, env, init, limit)
    cond_params, body_params = list(op.attrs["cond_params"]), list(op.attrs["body_params"])

    def cond_fn(state):
        inner = _scoped(env, cond_params, state[0])
        (pred,) = low.nested(op.attrs["cond_block"], inner, [op.attrs["cond_output"]])
        return low.pred(pred)

    def body_fn(state):
        carry, *recorded = state
        if trajectory:  # row k: the values entering iteration k (clamped past the capacity)
            rows, k = recorded
            rows = tuple(lax.dynamic_update_index_in_dim(r, c, k, 0) for r, c in zip(rows, carry))
            recorded = (rows, k + 1)
        inner = _scoped(env, body_params, carry)
        outs = low.nested(op.attrs["body_block"], inner, list(op.attrs["body_outputs"]))
        return (tuple(low.like(o, c) for o, c in zip(outs, carry)), *recorded)

    counted = None if trajectory or guarded else _counted(low, op, env, init)
    if counted is not None:  # k bodies per iteration up to the bound, then the rest
        p, bound, k, less, rest = counted
        kind = init[p].dtype

        def rounds_cond(state):  # (the bound a constant of the condition, not a carry)
            end = jnp.asarray(bound, kind)
            return low.pred(state[0][p] < end if less else state[0][p] > end)

        def rounds_body(state):
            for _ in range(k):
                state = body_fn(state)
            return state

        (init,) = lax.while_loop(rounds_cond, low.loop_body(rounds_body), (init,))
        if not rest:  # the condition (without effects) would fail now
            return init, None
    state = (init,)
    if trajectory:
        rows = tuple(jnp.zeros((low.capacity,) + c.shape, c.dtype) for c in init)
        state = (init, rows, jnp.asarray(0, jnp.int64))
    if guarded:
        outs, *recorded = _guarded(low, op, cond_fn, body_fn, state, limit)
    else:
        outs, *recorded = lax.while_loop(cond_fn, low.loop_body(body_fn), state)
    if not trajectory:
        return outs, None
    low.counts.append(recorded[1])
    return outs, tuple(recorded)


def _may_pass(low: Lowering, op, env: dict, init: tuple, limit: int) -> bool:
    """Whether the loop may run more than ``limit`` iterations: no counter term of its
    condition (``growing.trip_bound``) stops it within them."""
    from autostatic_runtime.static.xla.growing import trip_bound

    trips, _ = trip_bound(low, op, env, init)
    return trips is None or trips > limit


def _guarded(low: Lowering, op, cond_fn: Callable, body_fn: Callable, state: tuple, limit: int):
    """``lax.while_loop(cond_fn, body_fn, state)`` stopped after ``limit`` iterations (the
    program's ``max_loop_iterations``; a growing loop's buffers too, ``growing.py``): the
    condition is tested before the loop and after each body (the same tests, in the same
    order), the loop runs while it holds and fewer than ``limit`` bodies ran, and a loop that
    stopped with it still holding fails after the call with the default executor's error:
    the computation returns a flag per loop (a host callback, taken only when the loop
    stopped, for a loop inside a branch or loop body: any callback makes each call ~1 ms
    slower, as it waits for the host)."""
    jnp, lax = low.jnp, low.lax

    def cond(guarded):
        return guarded[-1] & (guarded[-2] < limit)

    def body(guarded):
        new = body_fn(guarded[:-2])
        return (*new, guarded[-2] + 1, cond_fn(new))

    start = (*state, jnp.asarray(0, jnp.int64), cond_fn(state))
    *final, _, stopped = lax.while_loop(cond, low.loop_body(body), start)
    if not low.depth:
        low.stops.append((op, limit, stopped))  # the compiler raises after the call
        return tuple(final)
    # inside a branch or loop body the flag cannot leave the computation: a host callback
    # (only when the loop stopped) records the error, as a failed assert's is
    import jax

    errors = low.errors

    def report():
        if not errors:
            errors.append((op, loop_limit_error(op, limit)))

    lax.cond(stopped, lambda: jax.debug.callback(report, ordered=True), lambda: None)
    low.effects = True
    return tuple(final)


_COMPARES = {"less_than": 1, "less_equal": 1, "greater_than": -1, "greater_equal": -1}
_STEPS = {"elementwise_add": 1, "elementwise_sub": -1}


def _counted(low: Lowering, op, env: dict, init: tuple) -> tuple | None:
    """``(p, bound, k, up, rest)`` for a counted loop worth running ``k`` bodies per
    iteration: the condition is only ``counter < n`` (``trip_count``), so the trip count
    ``t`` is known; the loop runs ``t // k`` rounds of ``k`` bodies while the counter has not
    reached ``bound`` (``t // k * k`` steps from its start), and then the ``t % k`` others as
    before. The bodies are the same ops in the same order: the values are those of one body
    an iteration. None otherwise (a long body, a short loop, an effect in the condition,
    anything else)."""
    body, cond = op.attrs["body_block"], op.attrs["cond_block"]
    if len(body.ops) > UNROLL_BODY_OPS or any(o.sub_blocks() for o in body.ops):
        return None
    compare = prune(cond, [op.attrs["cond_output"]])
    if len(compare) != 1:
        return None
    counted = trip_count(low, op, env, init, compare[0])
    if counted is None:
        return None
    p, trips, start, s = counted
    k = UNROLL_FACTOR
    if trips // k < UNROLL_MIN_ROUNDS:
        return None
    bound = start + trips // k * k * s
    info = np.iinfo(init[p].dtype)
    if not info.min <= bound <= info.max:
        return None
    return p, bound, k, s > 0, trips % k


def trip_count(low: Lowering, op, env: dict, init: tuple, compare) -> tuple | None:
    """``(p, trips, start, step)`` when the condition op ``compare`` (in the loop's condition
    block) is ``counter < n`` (``<=``, ``>``, ``>=``, either way round) on loop variable
    ``p``, an integer counter known while tracing whose only change in the body is
    ``counter + s`` (``- s``) with ``n`` and ``s`` known too: the loop stops after at most
    ``trips`` iterations (exactly that many when this is the whole condition). None
    otherwise."""
    if compare.type not in _COMPARES or _attrs(compare):
        return None
    body, cond = op.attrs["body_block"], op.attrs["cond_block"]
    direction = _COMPARES[compare.type]
    params = list(op.attrs["cond_params"])
    x, y = compare.inputs
    if isinstance(x, Literal) or x.name not in params:  # n > counter: counter < n
        x, y, direction = y, x, -direction
    if isinstance(x, Literal) or x.name not in params or _operand(y, params) is None:
        return None
    p = params.index(x.name)
    name = op.attrs["body_params"][p]
    step = [o for o in prune(body, [op.attrs["body_outputs"][p]]) if not has_side_effect(o)]
    if len(step) != 1 or step[0].type not in _STEPS or _attrs(step[0]):
        return None
    u, v = step[0].inputs
    if _is_var(u, name) and _operand(v, [name]) is not None:  # counter + s, counter - s
        by = v
    elif step[0].type == "elementwise_add" and _is_var(v, name) and _operand(u, [name]) is not None:
        by = u  # s + counter
    else:
        return None
    start = _integer(low, read(env, op.inputs[p]))
    n = _integer(low, _bound_value(low, cond, env, y, params))
    s = _integer(low, _known(env, by))
    if start is None or n is None or s is None:
        return None
    s *= _STEPS[step[0].type]
    if direction * s <= 0:  # moving away from n, or not at all: not a counted loop
        return None
    inclusive = compare.type in ("less_equal", "greater_equal")
    span = (n - start) * direction + (1 if inclusive else 0)  # values the counter may take
    return p, max(0, -(-span // abs(s))), start, s


def _bound_value(low: Lowering, cond: Block, env: dict, operand: Any, params: list) -> Any:
    """The value of a comparison's bound: a literal or outer value, or one the condition
    block computes from outer values alone (``i < x.shape[0]``), known while tracing when
    those are; None when it depends on the loop variables."""
    known = _known(env, operand)
    if known is not None or isinstance(operand, Literal):
        return known
    ops = prune(cond, [operand.name])
    if any(isinstance(x, Variable) and x.name in params for o in ops for x in o.inputs):
        return None
    if any(o.sub_blocks() or has_side_effect(o) for o in ops):
        return None
    (value,) = low.run_block(cond, dict(env), [operand.name])
    return value


def _known(env: dict, operand: Any) -> Any:
    """``operand``'s value, or None when the block defines it itself."""
    return operand.value if isinstance(operand, Literal) else env.get(operand.name)


def _attrs(op) -> dict:
    return {k: v for k, v in op.attrs.items() if k not in META_ATTRS}


def _is_var(operand: Any, name: str) -> bool:
    return not isinstance(operand, Literal) and operand.name == name


def _operand(operand: Any, params: list) -> Any:
    """``operand`` when it is not a loop variable (a literal, or an outer value), else None."""
    if isinstance(operand, Literal) or operand.name not in params:
        return operand
    return None


def _integer(low: Lowering, value: Any) -> int | None:
    """A one-element integer value known while tracing, as an int; None otherwise."""
    if value is None or isinstance(value, bool) or type(value) in low.traced:
        return None
    if isinstance(value, int):
        return value
    value = np.asarray(value)
    if value.size != 1 or value.dtype.kind not in "iu":
        return None
    return int(value.reshape(()))


class Unrolled:
    """The trajectory of an unrolled loop: the loop values entering each iteration (their
    shapes may differ from one iteration to the next). A JAX pytree."""

    def __init__(self, steps: tuple):
        self.steps = steps

    def tree_flatten(self):
        return (self.steps,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def _unrolled(low: Lowering, op, env: dict, why: str, limit: int | None = None) -> tuple:
    """The loop run out while tracing, one body after another: possible when its condition
    is known while tracing (a counter from a constant), as each iteration may then have its
    own shapes (a tensor array one row longer). Returns the outputs and the trajectory. Past
    ``limit`` iterations (``max_loop_iterations``) it is unlowerable: the default executor
    then runs the program, and raises its error."""
    n = op.attrs["num_loop_vars"]
    carry = [read(env, x) for x in op.inputs[:n]]
    cond_params, body_params = list(op.attrs["cond_params"]), list(op.attrs["body_params"])
    steps = []
    for _ in range(UNROLL_LIMIT + 1):
        inner = _scoped(env, cond_params, carry)
        (pred,) = low.nested(op.attrs["cond_block"], inner, [op.attrs["cond_output"]])
        if type(pred) in low.traced:
            raise Unlowerable(op, f"{why} and its iteration count depends on values")
        if not bool(np.reshape(np.asarray(pred), ())):
            return carry, Unrolled(tuple(steps))
        if limit is not None and len(steps) >= limit:
            raise Unlowerable(op, f"it runs more than max_loop_iterations={limit} iterations")
        steps.append(tuple(carry))
        inner = _scoped(env, body_params, carry)
        carry = low.nested(op.attrs["body_block"], inner, list(op.attrs["body_outputs"]))
    raise Unlowerable(op, f"{why} and it runs more than {UNROLL_LIMIT} iterations")


def lower_while_grad(low: Lowering, op, env: dict) -> None:
    """The forward trajectory walked backwards: one replayed, differentiated iteration per
    row; gradients of outer variables summed over the iterations (zero for none)."""
    jnp, lax = low.jnp, low.lax
    n, nfree = op.attrs["num_loop_vars"], op.attrs["num_free"]
    history = read(env, op.inputs[0])
    if isinstance(history, Unrolled):
        _unrolled_grad(low, op, env, history)
        return
    rows, count = history
    seeds = tuple(low.strong(read(env, x)) for x in op.inputs[1 : 1 + n])
    outer = [read(env, x) for x in op.inputs[1 + n + nfree :]]
    names = list(op.attrs["body_params"]) + list(op.attrs["seed_params"])
    block, wanted = op.attrs["body_grad_block"], list(op.attrs["grad_outputs"])

    def body_fn(state):
        k, carried, summed = state
        step = [lax.dynamic_index_in_dim(r, k, 0, keepdims=False) for r in rows]
        results = low.nested(block, _scoped(env, names, step + list(carried)), wanted)
        carried = tuple(low.like(r, c) for r, c in zip(results[:n], carried))
        summed = tuple(low.like(s + r, s) for s, r in zip(summed, results[n:]))
        return k - 1, carried, summed

    zeros = tuple(low.strong(jnp.zeros_like(jnp.asarray(o))) for o in outer)
    _, carried, summed = lax.while_loop(
        lambda s: s[0] >= 0, low.loop_body(body_fn), (count - 1, seeds, zeros)
    )
    for var, value in zip(op.outputs, carried + summed):
        env[var.name] = value


def _unrolled_grad(low: Lowering, op, env: dict, history: Unrolled) -> None:
    """``while_grad`` over an unrolled loop's trajectory, unrolled too."""
    n, nfree = op.attrs["num_loop_vars"], op.attrs["num_free"]
    carried = [read(env, x) for x in op.inputs[1 : 1 + n]]
    outer = [read(env, x) for x in op.inputs[1 + n + nfree :]]
    names = list(op.attrs["body_params"]) + list(op.attrs["seed_params"])
    block, wanted = op.attrs["body_grad_block"], list(op.attrs["grad_outputs"])
    summed = [None] * len(outer)
    for step in reversed(history.steps):
        results = low.nested(block, _scoped(env, names, list(step) + carried), wanted)
        carried = results[:n]
        summed = [r if s is None else s + r for s, r in zip(summed, results[n:])]
    summed = [low.jnp.zeros_like(o) if s is None else s for s, o in zip(summed, outer)]
    for var, value in zip(op.outputs, carried + summed):
        env[var.name] = value


def lower_matmul(low: Lowering, op, env: dict) -> None:
    """``matmul_v2`` by its own kernel; on a grown value by ``bounded._matmul``. (A weight
    gradient ``x^T @ g`` used to get ``x^T`` as an array of its own first, which XLA's
    Eigen CPU dots ran faster; with the YNNPACK dots of jaxlib 0.10 that copy made W2's
    training step 1.07-1.09x slower, paired rounds: the dot takes the transposed operand.)"""
    x = read(env, op.inputs[0])
    if type(x) is Bounded or type(read(env, op.inputs[1])) is Bounded:
        low._kernel(op, env)  # (``bounded._matmul``)
        return
    low._kernel(op, env)


LOWERINGS: dict[str, Callable] = {
    "cond": lower_cond,
    "while": lower_while,
    "while_grad": lower_while_grad,
    "matmul_v2": lower_matmul,
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

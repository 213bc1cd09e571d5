"""``XlaCompiler``: a ``BlockCompiler`` that runs a whole block as one ``jax.jit`` function.

``compile`` returns an ``XlaFunction`` with the usual ``fn(scope, *params) -> results``
contract. The jitted function takes the persistable variables the block reads (parameters,
optimizer state, the learning rate) and the parameters as arguments, and returns the results
and the persistable values it writes; the wrapper moves them between the scope and JAX:

- on JAX's CPU device a scope value goes in as it is (the jitted call aliases NumPy memory);
  on an accelerator, a value seen for the second time is moved to the device and reused
  while the scope holds the same host array (parameters stay on the device between calls
  until an update replaces them; a value replaced at every call is copied once);
- written persistables go back into the scope as host arrays (NumPy views of the device
  arrays) and their device arrays are remembered: the next call passes those;
- results come back as host arrays of the caller's backend, writable copies (a NumPy view
  of a device array is read-only).

A call after the first follows a plan: the scope values it read last (checked by identity)
and the arguments passed for them, one flat tuple given positionally to the jitted function
(JAX's C++ fast path); the values a call writes become the next call's plan.

Tracing runs with JAX's 64-bit mode on for the calling thread
(``backends.jax_backend.x64_switch``: on before, the caller's setting restored after, also
when it raises), so float64 and int64 values keep their dtypes. When every argument is
declared 32-bit or narrower (``NARROW``), the trace turns the mode on itself and calls go
without the switch (JAX keys its compiled calls on the caller's mode, which only matters
for how it takes 64-bit arguments); otherwise each call runs in 64-bit mode too. A block the trace
cannot take (an op without a lowering, a shape that depends on data) runs on
``PythonCodegen`` instead, after one ``XlaFallbackWarning`` naming the op and its source
line; ``fn.fallback`` says why.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from autostatic_runtime import backends
from autostatic_runtime.errors import op_failure
from autostatic_runtime.static.compiler import PythonCodegen, _load, has_side_effect, prune
from autostatic_runtime.static.control_flow import loop_limit_error
from autostatic_runtime.static.program import Block, Variable
from autostatic_runtime.static.xla.bounded import Bounded
from autostatic_runtime.static.xla.lowering import (
    Lowering,
    NeedsKey,
    Unlowerable,
    Unrolled,
    sub_block_writes,
)
from autostatic_runtime.static.xla.prepared import (
    Replan,
    lean_call,
    prepared_call,
    state_call,
    tensor_call,
)

KEEP_ON_DEVICE: bool | None = None  # cache device copies of scope values (None: off on CPU)


class XlaFallbackWarning(UserWarning):
    """A program runs on the default executor because the XLA compiler cannot take it."""


class XlaCompiler:
    """Compiles a block into one XLA computation (``jax.jit``) over the ops' own kernels."""

    name = "xla"
    # a training step runs faster as one computation than as a forward and a backward
    # (``run_program`` fuses them once a step's backward is seen to follow its forward)
    fuse_training = True

    def __init__(self) -> None:
        # shared by every function this compiler makes (a runner's forward and backward):
        # persistable name -> (host array, device array), and the programs warned about
        self.device: dict[str, tuple] = {}
        self.warned: set[int] = set()

    def compile(
        self, block: Block, params: list[str], results: list[str], backend: Any
    ) -> Callable:
        return XlaFunction(block, list(params), list(results), backend, self)


class XlaFunction:
    """One compiled block: ``fn(scope, *params) -> tuple(results)``. ``fallback`` is None,
    or why the block runs on the default executor instead."""

    _lean = False  # traced, without effects or counted loops: the lean ``__call__``
    _state = False  # state mode (``keep_state``): written persistables stay device arrays
    _donated: tuple = ()  # state mode: indices of the reads donated to the call
    _simple = False  # lean, and returning NumPy results only (no writes, no saved values)
    _random = False  # whether it draws random numbers (a trace that does retraces)
    _wide = False  # a 64-bit value came for a narrower argument: generic calls in 64-bit mode
    # the declared shapes of the parameters once a prepared call feeds them unchecked: a
    # shape that does not fit them is found when the jitted call traces for it
    _feed_shapes: list | None = None

    def __init__(
        self,
        block: Block,
        params: list[str],
        results: list[str],
        host: Any,
        compiler: XlaCompiler | None = None,
    ):
        import jax

        from autostatic_runtime.backends.jax_backend import x64_switch

        self.block, self.params, self.results, self.host = block, params, results, host
        self.fallback: str | None = None
        self._python: Callable | None = None
        self.reads, self.writes = _persistables(block, params, results)
        self.jax = backends.get_backend("jax")
        self._x64_on, self._x64_off = x64_switch()  # around traces (and calls, see below)
        self._n = len(results)
        self._numpy_host = host.name == "numpy"
        # results from this index on only go back into compiled code (a training forward's
        # saved values): they stay device arrays (see BlockCompiler)
        self.device_results_from: int | None = None
        keep = KEEP_ON_DEVICE
        self._keep = jax.default_backend() != "cpu" if keep is None else keep
        compiler = compiler or XlaCompiler()
        self._device = compiler.device  # name -> (host array, device array)
        self._warned = compiler.warned
        written = sub_block_writes(block)
        if written is not None:
            reason = "it writes a persistable variable inside a branch or loop body"
            self._fall_back(Unlowerable(written, reason))
            return
        self.capacity = 64  # trajectory rows of a loop whose gradient is needed (grows)
        self._errors: list = []  # (op, exception) of a print/assert that failed in a call
        self._effects = False  # whether the block has print/assert ops (known after a trace)
        self._counted = False  # whether the block has such loops (known after a trace)
        self._stops: list = []  # (op, limit) of each loop guarded by max_loop_iterations
        self._random = False  # whether it draws random numbers (a trace that does retraces)
        self._plain = False  # no result is a loop trajectory (known after a trace)
        # the call plan: the scope values last read (by identity) and what went into the
        # call for them (device arrays), one flat tuple passed positionally
        self._get = _getter(self.reads)
        self._unknown = (None,) * len(self.reads)  # never a scope value: no plan yet
        self._plan: tuple = (self._unknown, ())  # (hosts, arguments)
        self._slots = tuple(self.reads.index(n) if n in self.reads else -1 for n in self.writes)
        # 64-bit mode inside the trace only: when no argument can be 64-bit (every parameter
        # and persistable read is declared with a dtype JAX keeps in 32-bit mode), the calls
        # need no switch (JAX's jit key holds the caller's mode; the trace, and so the
        # computation, is the same). Otherwise every call runs in 64-bit mode, which JAX
        # needs to take int64/float64 arguments as they are.
        # A block with print/assert ops runs its calls in 64-bit mode too: JAX hands the
        # host callback its values as the calling thread's mode has them (an int64 as int32).
        self._inside = all(
            str(block.var(name).dtype) in NARROW for name in self.reads + self.params
        ) and not any(has_side_effect(op) for op in block.ops)
        self._jit()

    def _jit(self) -> None:
        import jax

        traced = functools.partial(self._traced, self.capacity, self._random, self._inside)
        self._traced_fn = traced
        self._jitted = jax.jit(traced)
        self._donating = None  # state mode: not decided yet (see _pick)

    def keep_state(self) -> None:
        """State mode, for a compiled training step (``run_program``'s step programs): the
        persistables the block writes stay device arrays between calls — stored as they come
        out of the computation, never copied to the host (JAX's arrays are host arrays for
        whoever reads them) — and, once the function is lean, the ones it reads and writes
        are donated to the call, which then updates them in place. A device array someone
        else still holds is never donated (``state_call``'s reference counts, and the
        generic path, which donates host arrays only)."""
        self._state = True

    def _pick(self, loaded: tuple, args: tuple, key: tuple) -> Callable:
        """The jitted function for a generic call: in state mode, once a trace has shown the
        function lean, the donating one while no device array is passed for a written
        persistable (host arrays are copied into the call: donating those is safe)."""
        if not self._state:
            return self._jitted
        if self._donating is None:
            self._jitted.trace(*key, *loaded, *args)  # learns its kind; the call reuses it
            lean = not (self._effects or self._counted or self._wide)
            self._donating = self._donor() if lean else False
        if self._donating and not any(_is_device(loaded[i]) for i in self._donated):
            return self._donating
        return self._jitted

    def _donor(self) -> Callable:
        """The jitted function donating the persistables it reads and writes (the same
        traced function as ``_jitted``, so it is traced once)."""
        import jax

        self._donated = tuple(sorted({i for i in self._slots if i >= 0}))
        first = 1 if self._random else 0
        return jax.jit(self._traced_fn, donate_argnums=tuple(first + i for i in self._donated))

    def _widen(self) -> None:
        """A 64-bit value came for an argument declared narrower (set in the scope by the
        user): from now on every call runs in 64-bit mode, on the generic path."""
        self._inside = self._lean = self._simple = False
        self._wide = True
        self._jit()

    # -- the traced function -------------------------------------------------------------
    def _traced(self, capacity: int, random: bool, inside: bool, *args):
        if not inside:  # the caller turned 64-bit mode on
            return self._trace(capacity, random, args)
        token = self._x64_on()
        try:
            return self._trace(capacity, random, args)
        finally:
            self._x64_off(token)

    def _trace(self, capacity: int, random: bool, args: tuple):
        key, args = (args[0], args[1:]) if random else (None, args)
        shapes = self._feed_shapes
        if shapes is not None:  # a prepared call's feed: its shape is checked here, once
            fed = args[len(self.reads) :]
            if not all(map(_fits, [tuple(a.shape) for a in fed], shapes)):
                raise Replan  # the generic path raises the default executor's error
        low = Lowering(self.jax, capacity, self._errors, key)
        env = dict(zip(self.reads + self.params, args))
        try:
            with _full_precision():
                outs = low.run_block(self.block, env, self.results + self.writes)
        except (Unlowerable, NeedsKey):
            raise
        except Exception as exc:  # a kernel that needs concrete values or NumPy alone
            raise Unlowerable(low.op, f"{type(exc).__name__}: {_first_line(exc)}") from exc
        outs = tuple(o if isinstance(o, (tuple, Unrolled)) else low.strong(o) for o in outs)
        n, keep = self._n, self.device_results_from
        if any(type(o) is Bounded for o in outs[n:]):
            raise Unlowerable(None, "it stores a value a loop grew into a persistable")
        host = outs[: n if keep is None else keep]
        # a loop trajectory, or a value a loop grew (cut to its length on the host)
        plain = not any(isinstance(o, (tuple, Unrolled, Bounded)) for o in host)
        if self._lean and (low.counts or low.effects or low.stops or plain != self._plain):
            # traced again for a new input shape, into what the lean calls do not handle
            self._lean = self._simple = False
            raise Replan
        self._counted = bool(low.counts)
        self._effects = low.effects
        self._plain = plain
        if low.counts:  # the longest recorded loop, to check against the capacity
            outs += (low.jnp.max(low.jnp.stack(low.counts)),)
        self._stops = [(op, limit) for op, limit, _ in low.stops]
        if low.stops:  # whether each guarded loop stopped at its limit
            outs += (low.jnp.stack([stopped for _, _, stopped in low.stops]),)
        return outs

    # -- calls ---------------------------------------------------------------------------
    def __call__(self, scope: dict, *args):
        if not self._lean:
            return self._call(scope, args)
        given = args
        if not self._numpy_host:
            args = self._from_host(args)
        plan = self._plan
        if self.reads:
            try:
                hosts = self._get(scope)
            except KeyError:  # a value missing from the scope: the full call says which
                return self._call(scope, given)
            if not all(map(is_, hosts, plan[0])):
                plan = self._load(scope, hosts)
                if not self._lean:  # a 64-bit value for a narrower argument: _widen
                    return self._call(scope, given)
        token = None if self._inside else self._x64_on()
        try:
            if self._random:
                outs = self._jitted(self._call_key(), *plan[1], *args)
            else:
                outs = self._jitted(*plan[1], *args)
        except Replan:
            return self._call(scope, given)
        finally:
            if token is not None:
                self._x64_off(token)
        if self._simple:  # results only, all for the caller: NumPy copies (writable)
            return tuple(map(np.array, outs))
        return self._finish(scope, outs, plan)

    def prepare(
        self, feeds: list[tuple], needed: list[str], slow: Callable, entry: Any = None
    ) -> Callable | None:
        """A prepared call for the Executor (``prepared.prepared_call``): the checks of a
        call done once, for a function whose calls no longer trace into anything new (None
        before that, or on another backend than NumPy). ``feeds``: (name, dtype, declared
        shape) per parameter; ``needed``: scope names that must be present; ``slow``: the
        generic path, ``slow(scope, feed) -> list``; ``entry``: the Executor's checks to
        generate in front (``prepared.prepared_call``), making the call ``Executor.run`` itself for
        one call form."""
        if not (self._lean and self._numpy_host and self._plain):
            return None
        if self.device_results_from is not None or len(feeds) != len(self.params):
            return None
        self._feed_shapes = [tuple(shape) for _, _, shape in feeds]
        return prepared_call(self, feeds, needed, slow, entry)

    def lean(self) -> Callable | None:
        """``prepared.lean_call``: this function's call generated for its lean state (None
        before it is lean, or on another backend than NumPy). ``run_program`` uses it."""
        if not (self._lean and self._numpy_host and self._plain):
            return None
        return lean_call(self)

    def state_call(self, reads: list, writes: list) -> Callable | None:
        """``prepared.state_call``: the call of a compiled training step on the tensors
        holding its state (state mode; None before the function is lean, or off NumPy)."""
        if not (self._state and self._lean and self._numpy_host and self._plain):
            return None
        if self.device_results_from is not None or not self._donating:
            return None
        return state_call(self, reads, writes)

    def tensor_call(self, inputs: list, params: list, guard: Any, finish: Any, miss: Any):
        """``prepared.tensor_call``: a to_static call on eager Tensors generated for this
        function's lean state (None before it is lean, or when it writes persistables, keeps
        device results or runs on another backend than NumPy)."""
        if not (self._lean and self._simple):
            return None
        return tensor_call(self, inputs, params, guard, finish, miss)

    def _from_host(self, args: tuple) -> tuple:
        """The arguments of a call on another host backend than NumPy (CuPy) as NumPy arrays
        for JAX, which takes no other library's arrays (a copy through the host)."""
        host, kind = self.host, self.host.array_types
        return tuple([host.to_numpy(a) if isinstance(a, kind) else a for a in args])

    def _call(self, scope: dict, args: tuple):
        """A call that may trace, fall back, grow the loop capacity or raise an effect's
        error; the lean ``__call__`` once none of that can happen."""
        if self.fallback is not None:
            return self._python(scope, *args)
        given = args
        if not self._numpy_host:
            args = self._from_host(args)
        hosts = tuple([_load(scope, name) for name in self.reads])
        if self._inside and not all(map(_narrow, args)):
            self._widen()
        plan = self._load(scope, hosts) if self.reads else self._plan
        try:
            outs = self._invoke(plan[1], args)
        except Unlowerable as exc:
            self._fall_back(exc)
            return self._python(scope, *given)
        except Exception as exc:  # noqa: BLE001  (any trace failure: the executor can run it)
            self._fall_back(Unlowerable(None, f"{type(exc).__name__}: {_first_line(exc)}"))
            return self._python(scope, *given)
        if self._effects:
            self._raise_failed_effect(outs)
        if self._stops:
            stopped = np.asarray(outs[-1])
            if stopped.any():
                raise loop_limit_error(*self._stops[int(stopped.argmax())])
            outs = outs[:-1]
        if self._counted:
            longest = int(outs[-1])
            if longest > self.capacity:  # rows were dropped: compile for the longest loop
                self.capacity = 1 << (longest - 1).bit_length()
                self._jit()
                return self._call(scope, given)
            outs = outs[:-1]
        self._lean = not (self._effects or self._counted or self._stops or self._wide)
        self._simple = self._numpy_host and self._plain and not self.writes
        self._simple = self._simple and self.device_results_from is None
        return self._finish(scope, outs, plan)

    def _invoke(self, loaded: tuple, args: tuple):
        """Call (tracing if needed; in 64-bit mode unless the trace turns it on itself); a
        trace that meets a random op raises ``NeedsKey``: trace again with a key argument."""
        token = None if self._inside else self._x64_on()
        try:
            try:
                key = (_TRACE_KEY,) if self._random else ()
                jitted = self._pick(loaded, args, key)
                if self._random:
                    return jitted(self._call_key(), *loaded, *args)
                return jitted(*loaded, *args)
            except NeedsKey:
                self._random = True
                self._jit()
                jitted = self._pick(loaded, args, (_TRACE_KEY,))
                return jitted(self._call_key(), *loaded, *args)
        finally:
            if token is not None:
                self._x64_off(token)

    def _load(self, scope: dict, hosts: tuple) -> tuple:
        """The call plan for the scope values ``hosts``: their arguments (``_to_device``),
        kept for the next call while the scope holds the same values, and when each is
        final (not a first sight on an accelerator)."""
        if self._inside and not all(map(_narrow, hosts)):
            self._widen()
        loaded = tuple([self._to_device(scope, n, v) for n, v in zip(self.reads, hosts)])
        final = not self._keep or all(map(_is_device, loaded))
        plan = self._plan = (hosts if final else self._unknown, loaded)
        return plan

    def _finish(self, scope: dict, outs: tuple, plan: tuple) -> tuple:
        """Store the written persistables (host views in the scope, their device arrays in
        the call plan) and return the results as the caller's host arrays."""
        n = self._n
        if self.writes:
            self._store(scope, outs[n:], plan)
        keep = self.device_results_from
        if self._numpy_host and self._plain:
            if keep is None:
                return tuple(map(np.array, outs[:n]))
            return tuple(map(np.array, outs[:keep])) + tuple(outs[keep:n])
        result = self._result
        if keep is None:
            return tuple([result(v) for v in outs[:n]])
        return tuple([result(v) for v in outs[:keep]]) + tuple(outs[keep:n])

    def _store(self, scope: dict, values: tuple, plan: tuple) -> None:
        if self._state:  # the device arrays themselves (see keep_state); no plan to keep
            for name, value in zip(self.writes, values):
                scope[name] = value
            self._plan = (self._unknown, ())
            return
        hosts, loaded = list(plan[0]), list(plan[1])
        device = self._device
        for name, value, slot in zip(self.writes, values, self._slots):
            host = self._host_array(value)  # a view: the scope is ours
            scope[name] = host
            device[name] = (host, value)
            if slot >= 0:  # read back by the next call: the plan passes the device array
                hosts[slot], loaded[slot] = host, value
        if plan[0] is not self._unknown:
            self._plan = (tuple(hosts), tuple(loaded))

    def _call_key(self) -> np.ndarray:
        """This call's random key (a legacy JAX key: two uint32), from the host generator
        ``rt.seed`` seeds."""
        return self.host.rng.integers(0, 2**32, size=2, dtype=np.uint32)

    def _raise_failed_effect(self, outs) -> None:
        """Wait for the call's prints/asserts; re-raise the first failure as the default
        executor would (the call's persistable writes are dropped)."""
        import jax

        jax.block_until_ready(outs)
        if self._errors:
            op, exc = self._errors[0]
            self._errors.clear()
            failure = op_failure(op.type, op.location, exc)
            if failure is exc:
                raise exc
            raise failure from exc

    def _to_device(self, scope: dict, name: str, value: Any) -> Any:
        """The value of ``name`` for the jitted call: the device array of a value this
        compiler wrote. Otherwise, on JAX's CPU device, the host array itself (the call
        aliases NumPy memory: no copy); on an accelerator, the device copy of the scope's
        array when it was seen before, while a new array goes in as it is (the call copies
        it) and moves to the device to stay when it comes back a second time, so a parameter
        an eager optimizer replaces at every step is never copied twice."""
        cached = self._device.get(name)
        if cached is not None and cached[0] is value and cached[1] is not None:
            return cached[1]  # a value this compiler wrote (or moved): its device array
        if not self._keep:
            return value if self._numpy_host else self.host.to_numpy(value)
        if cached is None or cached[0] is not value:
            self._device[name] = (value, None)
            return self.host.to_numpy(value)
        if cached[1] is None:
            cached = self._device[name] = (value, self.jax.from_numpy(self.host.to_numpy(value)))
        return cached[1]

    @property
    def random(self) -> bool:
        """Whether a compiled call draws random numbers (known after the first call; a
        function that fell back says False, see ``fallback``)."""
        return self._python is None and self._random

    def to_host(self, values: tuple, copy: list | None = None) -> tuple:
        """Results kept as device arrays (``device_results_from``) as the caller's own host
        arrays, as the call would have returned them; where ``copy`` says False, as the host
        view of the device array instead (read-only on NumPy: no copy on JAX's CPU device)."""
        if copy is None:
            return tuple([self._result(v) for v in values])
        return tuple([self._result(v) if c else self._host_array(v) for v, c in zip(values, copy)])

    def _result(self, value: Any) -> Any:
        """A result for the caller: a writable host array of its own, as the default
        executor gives (a NumPy view of a device array is read-only)."""
        if type(value) is tuple or isinstance(value, Unrolled):
            return self._host_array(value)
        if type(value) is Bounded:  # cut to its length: eager's shape
            return value.host(self._result(value.array))
        return np.array(value) if self._numpy_host else self.host.from_numpy(np.asarray(value))

    def _host_array(self, value: Any) -> Any:
        if type(value) is tuple:  # a loop trajectory: (rows, count)
            return tuple([self._host_array(v) for v in value])
        if isinstance(value, Unrolled):  # an unrolled loop's trajectory: only for compiled code
            return value
        if type(value) is Bounded:
            return value.host(self._host_array(value.array))
        return np.asarray(value) if self._numpy_host else self.host.from_numpy(np.asarray(value))

    def _fall_back(self, exc: Unlowerable) -> None:
        op = exc.op
        loc = op.location if op is not None and op.location and op.location[0] else None
        where = ""
        if op is not None:
            where = f" (op {op.type!r}" + (f" at {loc[0]}:{loc[1]}" if loc else "") + ")"
        self.fallback = f"{exc.reason}{where}"
        message = XlaFallbackWarning(
            f"the XLA compiler cannot take this program: {self.fallback}; it runs on the "
            "default executor"
        )
        program = self.block.program  # one warning per program (its training clone included)
        source = getattr(program, "source_id", program.id)
        if source in self._warned:
            pass
        elif loc is not None:  # reported at the user's line that built the op
            warnings.warn_explicit(message, XlaFallbackWarning, loc[0], loc[1])
        else:
            warnings.warn(message, stacklevel=4)
        self._warned.add(source)
        self._python = PythonCodegen().compile(self.block, self.params, self.results, self.host)


def _persistables(block: Block, params: list[str], results: list[str]) -> tuple[list, list]:
    """The persistable variables ``block`` reads before writing them (loaded from the scope),
    and those it writes (stored back), in op order."""
    reads: dict[str, None] = {}
    writes: dict[str, None] = {}
    defined = set(params)
    for op in prune(block, results):
        for x in op.inputs:
            if isinstance(x, Variable) and x.name not in defined:
                if block.var(x.name).persistable:
                    reads.setdefault(x.name)
                defined.add(x.name)
        for v in op.outputs:
            defined.add(v.name)
            if v.persistable:
                writes.setdefault(v.name)
    for name in results:
        if name not in defined and block.var(name).persistable:
            reads.setdefault(name)
    return list(reads), list(writes)


def _getter(names: list[str]) -> Callable:
    """``scope -> tuple of the values of names`` in one C call (``operator.itemgetter``)."""
    if not names:
        return lambda scope: ()
    if len(names) == 1:
        (name,) = names
        return lambda scope: (scope[name],)
    return operator.itemgetter(*names)


# dtypes JAX keeps as they are in 32-bit mode (arguments of these need no 64-bit mode)
NARROW = frozenset(
    ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16",
     "float32", "complex64"]
)  # fmt: skip


def _narrow(value: Any) -> bool:
    """Whether an argument's dtype is one JAX keeps in 32-bit mode."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and str(dtype) in NARROW


def _fits(shape: tuple, want: tuple) -> bool:
    return len(shape) == len(want) and all(w == -1 or w == s for w, s in zip(want, shape))


def _is_device(value: Any) -> bool:
    return not isinstance(value, np.ndarray)


_TRACE_KEY = np.zeros(2, np.uint32)  # the key argument of a trace ahead of a call


def _full_precision():
    """Matrix products and convolutions in the full precision of their dtype, as eager
    kernels compute them: JAX's default on GPUs from Ampere on is TF32 for float32 (10-bit
    mantissas), which would make a compiled step differ from the eager one by ~1e-3."""
    import jax

    return jax.default_matmul_precision("highest")


is_ = operator.is_


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

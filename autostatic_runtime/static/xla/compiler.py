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

Tracing and calls run with JAX's 64-bit mode on (``backends.jax_backend.x64``), so
float64 and int64 programs keep their dtypes. A block the trace cannot take (an op without a
lowering, a shape that depends on data) runs on ``PythonCodegen`` instead, after one
``XlaFallbackWarning`` naming the op and its source line; ``fn.fallback`` says why.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from autostatic_runtime import backends
from autostatic_runtime.errors import ExecutionError
from autostatic_runtime.static.compiler import PythonCodegen, _load, prune
from autostatic_runtime.static.program import Block, Variable
from autostatic_runtime.static.xla.lowering import (
    Lowering,
    Unlowerable,
    Unrolled,
    sub_block_writes,
)

KEEP_ON_DEVICE: bool | None = None  # cache device copies of scope values (None: off on CPU)


class XlaFallbackWarning(UserWarning):
    """A program runs on the default executor because the XLA compiler cannot take it."""


class XlaCompiler:
    """Compiles a block into one XLA computation (``jax.jit``) over the ops' own kernels."""

    name = "xla"

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

    def __init__(
        self,
        block: Block,
        params: list[str],
        results: list[str],
        host: Any,
        compiler: XlaCompiler | None = None,
    ):
        import jax

        from autostatic_runtime.backends.jax_backend import call_x64

        self.block, self.params, self.results, self.host = block, params, results, host
        self.fallback: str | None = None
        self._python: Callable | None = None
        self.reads, self.writes = _persistables(block, params, results)
        self.jax = backends.get_backend("jax")
        self._x64 = call_x64
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
        self._random: bool | None = None  # whether it draws random numbers (after a trace)
        self._no_key = np.zeros(2, np.uint32)
        self._jit()

    def _jit(self) -> None:
        import jax

        self._jitted = jax.jit(functools.partial(self._traced, self.capacity))

    # -- the traced function -------------------------------------------------------------
    def _traced(self, capacity: int, key, *args):
        low = Lowering(self.jax, capacity, self._errors, key)
        env = dict(zip(self.reads + self.params, args))
        try:
            outs = low.run_block(self.block, env, self.results + self.writes)
        except Unlowerable:
            raise
        except Exception as exc:  # a kernel that needs concrete values or NumPy alone
            raise Unlowerable(low.op, f"{type(exc).__name__}: {_first_line(exc)}") from exc
        outs = tuple(o if isinstance(o, (tuple, Unrolled)) else low.strong(o) for o in outs)
        self._counted = bool(low.counts)
        self._effects = low.effects
        self._random = bool(low.random_ops)
        if low.counts:  # the longest recorded loop, to check against the capacity
            outs += (low.jnp.max(low.jnp.stack(low.counts)),)
        return outs

    # -- calls ---------------------------------------------------------------------------
    def __call__(self, scope: dict, *args):
        if self.fallback is not None:
            return self._python(scope, *args)
        loaded = [self._to_device(scope, name) for name in self.reads] if self.reads else ()
        try:
            with self._x64():
                if self._random is None:  # trace first: draw no key for a block without
                    self._jitted.trace(self._no_key, *loaded, *args)  # random ops
                key = self._call_key() if self._random else self._no_key
                outs = self._jitted(key, *loaded, *args)
        except Unlowerable as exc:
            self._fall_back(exc)
            return self._python(scope, *args)
        except Exception as exc:  # noqa: BLE001  (any trace failure: the executor can run it)
            self._fall_back(Unlowerable(None, f"{type(exc).__name__}: {_first_line(exc)}"))
            return self._python(scope, *args)
        if self._effects:
            self._raise_failed_effect(outs)
        if self._counted:
            longest = int(outs[-1])
            if longest > self.capacity:  # rows were dropped: compile for the longest loop
                self.capacity = 1 << (longest - 1).bit_length()
                self._jit()
                return self(scope, *args)
            outs = outs[:-1]
        n = self._n
        if self.writes:
            for name, value in zip(self.writes, outs[n:]):
                host = self._host_array(value)  # a view: the scope is ours
                scope[name] = host
                self._device[name] = (host, value)
        result = self._result
        keep = self.device_results_from
        if keep is None:
            return tuple([result(v) for v in outs[:n]])
        return tuple([result(v) for v in outs[:keep]]) + tuple(outs[keep:n])

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
            if isinstance(exc, ExecutionError):
                raise exc
            raise ExecutionError(op.type, op.location, exc) from exc

    def _to_device(self, scope: dict, name: str) -> Any:
        """The value of ``name`` for the jitted call: the device array of a value this
        compiler wrote. Otherwise, on JAX's CPU device, the host array itself (the call
        aliases NumPy memory: no copy); on an accelerator, the device copy of the scope's
        array when it was seen before, while a new array goes in as it is (the call copies
        it) and moves to the device to stay when it comes back a second time, so a parameter
        an eager optimizer replaces at every step is never copied twice."""
        value = scope[name] if name in scope else _load(scope, name)
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

    def _result(self, value: Any) -> Any:
        """A result for the caller: a writable host array of its own, as the default
        executor gives (a NumPy view of a device array is read-only)."""
        if type(value) is tuple or isinstance(value, Unrolled):
            return self._host_array(value)
        return np.array(value) if self._numpy_host else self.host.from_numpy(np.asarray(value))

    def _host_array(self, value: Any) -> Any:
        if type(value) is tuple:  # a loop trajectory: (rows, count)
            return tuple([self._host_array(v) for v in value])
        if isinstance(value, Unrolled):  # an unrolled loop's trajectory: only for compiled code
            return value
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

"""Cache keys, traced programs and the program cache of a StaticFunction.

A call's key is built from its arguments: a tensor (or NumPy array) contributes its spec
(the ``InputSpec`` it is matched with when the function was given ``input_spec``, else its
exact shape and dtype), a Python value contributes itself (by value when hashable, else by
identity, with a warning when that forces a retrace), nested lists/tuples/dicts contribute
their structure, and a layer contributes its ``training`` flag. The function itself is not in
the key: each StaticFunction (and each layer instance's bound one) has its own cache.

``trace`` calls the converted function inside static mode on ``data`` variables made from
the specs and records the result as a ``ConcreteProgram``.
"""

from __future__ import annotations

import collections
import inspect
import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

import autostatic_runtime as rt
from autostatic_runtime.errors import user_location
from autostatic_runtime.jit.run_program import ProgramRunner
from autostatic_runtime.static.builder import captured_values, program_guard, static_guard
from autostatic_runtime.static.control_flow import flatten, unflatten
from autostatic_runtime.static.input_spec import InputSpec
from autostatic_runtime.static.program import Program, Variable
from autostatic_runtime.static.step import StepTrace, check_guard, describe_guard, finish
from autostatic_runtime.tensor import Tensor

__all__ = [
    "ConcreteProgram", "ProgramCache", "build_key", "trace", "ToStaticError",
    "describe_key_change",
]  # fmt: skip


class ToStaticError(rt.AutostaticError, TypeError, ValueError):
    """A call or spec a StaticFunction cannot handle (message says what and how to fix)."""


# ---- keys ------------------------------------------------------------------------------------


class _Unhashable:
    """A key part for an unhashable argument: its identity (the object is kept alive)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashable) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __repr__(self) -> str:
        return f"<{type(self.obj).__name__} at {id(self.obj):#x}>"


def _spec_of(value: Any) -> InputSpec:
    if isinstance(value, Tensor):
        data = value._data
        return InputSpec(tuple(data.shape), rt.dtypes.convert_dtype(data.dtype))
    return InputSpec.from_numpy(value)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, (Tensor, np.ndarray))


class InputSpecWarning(UserWarning):
    """A tensor argument that does not fit its ``InputSpec`` (traced with its own shape)."""


def check_fits(spec: InputSpec, value: Any, where: str) -> InputSpec:
    """The spec tensor ``value`` is traced with, as Paddle's ``to_static`` chooses it:
    ``spec`` when the tensor fits it (same rank, equal fixed dims), with the tensor's own
    dtype when the two differ (``InputSpec([None, 4])`` declares float32 by default); a
    tensor that does not fit is traced with its own shape and dtype, with an
    ``InputSpecWarning`` saying so."""
    shape = tuple(value.shape)
    dtype = rt.dtypes.convert_dtype(value.dtype)
    problem = None
    if len(shape) != len(spec.shape):
        problem = f"is {len(shape)}-D"
    else:
        for i, (want, got) in enumerate(zip(spec.shape, shape)):
            if want is not None and want != got:
                problem = f"has {got} in dimension {i}"
                break
    if problem is not None:
        message = InputSpecWarning(
            f"{where}: the tensor of shape {list(shape)} {problem}, which does not fit its "
            f"InputSpec {list(spec.shape)} (None = any size); it is traced with its own shape "
            "and dtype, as Paddle does"
        )
        loc = user_location()
        if loc is not None:  # the user's call
            warnings.warn_explicit(message, InputSpecWarning, loc[0], loc[1])
        else:
            warnings.warn(message, stacklevel=2)
        return InputSpec(shape, dtype, spec.name, spec.stop_gradient)
    if dtype != spec.dtype:
        return InputSpec(spec.shape, dtype, spec.name, spec.stop_gradient)
    return spec


def _key_part(value: Any, spec: Any, where: str, notes: list) -> Any:
    """The hashable key part of one argument (walking lists, tuples and dicts)."""
    if isinstance(spec, InputSpec):
        if isinstance(value, InputSpec):
            return value if value == spec else _fail_spec(value, spec, where)
        if not _is_tensor(value):
            raise ToStaticError(
                f"{where}: input_spec says {spec} but the argument is a "
                f"{type(value).__name__}, not a tensor"
            )
        return check_fits(spec, value, where)
    if isinstance(value, InputSpec):
        return value
    if _is_tensor(value):
        return _spec_of(value)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        specs = spec if isinstance(spec, (list, tuple)) and len(spec) == len(value) else None
        return (
            type(value),
            tuple(
                _key_part(v, specs[i] if specs else None, f"{where}[{i}]", notes)
                for i, v in enumerate(value)
            ),
        )
    if isinstance(value, dict):
        specs = spec if isinstance(spec, dict) else {}
        return (
            dict,
            tuple(
                (k, _key_part(v, specs.get(k), f"{where}[{k!r}]", notes)) for k, v in value.items()
            ),
        )
    if isinstance(value, rt.nn.Layer):
        return ("layer", _Unhashable(value), value.training)
    try:
        hash(value)
    except TypeError:
        notes.append(f"{where} ({type(value).__name__}) is unhashable")
        return _Unhashable(value)
    return (type(value), value)


def _fail_spec(value: InputSpec, spec: InputSpec, where: str):
    raise ToStaticError(f"{where}: got {value}, but the function was declared with {spec}")


def build_key(
    args: tuple, kwargs: dict, input_spec: list | None, names: list[str], training: Any
) -> tuple[tuple, list]:
    """(key, notes about unhashable arguments) for one call."""
    notes: list[str] = []
    specs = list(input_spec or ())
    parts = []
    for i, a in enumerate(args):
        where = f"argument {names[i] if i < len(names) else i!r}"
        parts.append(_key_part(a, specs[i] if i < len(specs) else None, where, notes))
    kw = tuple(sorted((k, _key_part(v, None, f"argument {k!r}", notes)) for k, v in kwargs.items()))
    return (tuple(parts), kw, training), notes


# ---- traced programs -------------------------------------------------------------------------


MISS = object()  # what a ConcreteProgram's tensor call returns when it does not apply


@dataclass
class ConcreteProgram:
    """One traced program: ``main_program`` with its ``inputs``/``outputs`` Variables, the
    eager ``parameters`` (parameters and buffers, in program order) it reads, and how to run
    it as an eager op."""

    main_program: Program
    startup_program: Program
    inputs: list[Variable]
    outputs: list[Variable]
    parameters: list[Tensor]
    output_structure: Any
    output_leaves: list  # Variables and Python constants, in structure order
    input_structure: Any
    function: Callable | None = None
    compiler: Any = None  # the block compiler: None/"python" (default) or "xla"
    # a traced training step (``static.step``): values fed at each call (data Variable,
    # getter), what it assumes of the eager state, the gradients it leaves (computed, or
    # None/zeros), and whether it runs a backward or an update (then no tape records it)
    feeds: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    grad_outputs: list = field(default_factory=list)
    grad_finals: list = field(default_factory=list)
    is_step: bool = False
    runner: ProgramRunner = field(init=False, repr=False)
    # the generated calls on eager Tensors (``tensor_call``), by signature: a call, or False
    # when the compiled function never has one
    _tensor_calls: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        params = captured_values(self.main_program)
        self.runner = ProgramRunner(
            self.main_program,
            [v.name for v in self.inputs] + [v.name for v, _ in self.feeds],
            [v.name for v in self.outputs] + [v.name for _, v in self.grad_outputs],
            params,
            self.compiler,
            records=not self.is_step,
        )
        self._getters = [get for _, get in self.feeds]
        self._plain = not (self.feeds or self.grad_outputs or self.grad_finals)

    def __call__(self, tensors: list | tuple) -> Any:
        if self._plain:
            results = self.runner(tensors)
        else:
            results = self._run_step(tensors)
        if self.output_structure is None and self.outputs:  # one tensor: the common case
            return results[0]
        return _structure(self.output_structure, self.output_leaves, results)

    def _run_step(self, tensors: list | tuple) -> list:
        """Run with the step's feeds, then store the gradients it leaves."""
        results = self.runner([*tensors, *[get() for get in self._getters]])
        n = len(self.outputs)
        finish(self.grad_outputs, [t._data for t in results[n:]], self.grad_finals)
        return results[:n]

    def step_summary(self) -> str:
        """A training step's parts in words: ``"a training step (forward, backward, Adam's
        update of 4 parameters)"``."""
        parts = ["forward"]
        ops = self.main_program.global_block().ops
        if any(op.attrs.get("op_role") == "backward" for op in ops):
            parts.append("backward")
        for kind, opt, ids in self.guards:
            if kind == "optimizer":
                n = sum(1 for group in ids for _, frozen in group if not frozen)
                parts.append(f"{type(opt).__name__}'s update of {n} parameters")
        return f"a training step ({', '.join(parts)})"

    def guards_hold(self) -> bool:
        """Whether the eager state is what the trace assumed (always, without guards)."""
        return all(map(check_guard, self.guards))

    def broken_guard(self) -> str | None:
        """Why the guards that fail do, in words (None when all hold)."""
        broken = [describe_guard(g) for g in self.guards if not check_guard(g)]
        return "; ".join(broken) or None

    def tensor_call(self, signature: tuple, layer: Any) -> Callable | None:
        """The runner's generated call for inputs of exactly ``signature`` (a StaticFunction's
        ``(training, (shape, dtype), ...)``) and ``layer``'s training flag: ``call(args)``
        returns the function's result, or ``MISS`` when the call needs the generic way
        (another shape, a gradient wanted, a parameter replaced). None when there is none
        (yet: XLA makes one once its function is lean). One call per signature (a program
        traced for an ``InputSpec`` with None dims serves several), the latest 8."""
        if not self._plain or self.guards:
            return None
        calls = self._tensor_calls
        call = calls.get(signature)
        if call is None:
            inputs = [(dtype, shape) for shape, dtype in signature[1:]]
            training = signature[0]
            if isinstance(training, tuple):  # (training, auto_cast setting)
                training = training[0]
            guard = None if layer is None else (layer, "training", training)
            single = self.output_structure is None and len(self.outputs) == 1
            finish = None
            if not single:  # a partial, not a bound method: the program would hold itself
                finish = partial(_structure, self.output_structure, self.output_leaves)
            call = self.runner.tensor_call(inputs, guard, finish, MISS)
            if call is not None:
                if len(calls) >= 8:
                    calls.clear()
                calls[signature] = call
        return call or None

    def __repr__(self) -> str:
        return (
            f"<ConcreteProgram inputs={[v.name for v in self.inputs]} "
            f"outputs={[v.name for v in self.outputs]} parameters={len(self.parameters)}>"
        )


def _structure(structure: Any, leaves: list, results: list) -> Any:
    """A function's return value from its program's output Tensors (``results``) and the
    output leaves (Variables and Python constants) in structure order."""
    outs = iter(results)
    values = [next(outs) if isinstance(v, Variable) else v for v in leaves]
    return unflatten(structure, values)


def arg_names(function: Callable, bound: bool) -> list[str]:
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return []
    if bound and params:
        params = params[1:]
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def trace(
    converted: Callable,
    args: tuple,
    kwargs: dict,
    key: tuple,
    names: list[str],
    compiler: Any = None,
    max_loop_iterations: int | None = None,
) -> ConcreteProgram:
    """Call ``converted`` in static mode on data variables built from ``key``'s specs;
    ``max_loop_iterations`` bounds the program's loops (``to_static``'s). A program in which
    a ``DataParallel`` layer ran goes to ``distributed.parallel.finish_step``."""
    again = partial(_trace_program, converted, args, kwargs)
    program = again(key, names, compiler, max_loop_iterations)
    if "data_parallel" not in program.main_program.__dict__:
        return program
    from autostatic_runtime.distributed.parallel import finish_step

    def retrace(batch: int, factor: int) -> ConcreteProgram:  # for the whole batch of a job
        whole = _scaled_key(key, batch, factor)
        return again(whole, names, compiler, max_loop_iterations, global_batch=True)

    return finish_step(program, retrace)


def _scaled_key(key: tuple, batch: int, factor: int) -> tuple:
    """``key`` with the first dimension of every spec of ``batch`` rows times ``factor``."""

    def scale(part: Any) -> Any:
        if isinstance(part, InputSpec):
            shape = part.shape
            if shape and batch > 0 and shape[0] == batch:
                shape = (shape[0] * factor, *shape[1:])
            return InputSpec(shape, part.dtype, part.name, part.stop_gradient)
        if isinstance(part, tuple) and len(part) == 2 and part[0] in (list, tuple, dict):
            if part[0] is dict:
                return (dict, tuple((k, scale(p)) for k, p in part[1]))
            return (part[0], tuple(scale(p) for p in part[1]))
        return part

    arg_parts, kw_parts, training = key
    return (
        tuple(scale(p) for p in arg_parts),
        tuple((k, scale(p)) for k, p in kw_parts),
        training,
    )


def _trace_program(
    converted: Callable,
    args: tuple,
    kwargs: dict,
    key: tuple,
    names: list[str],
    compiler: Any = None,
    max_loop_iterations: int | None = None,
    global_batch: bool = False,
) -> ConcreteProgram:
    main, startup = Program(), Program()
    main.max_loop_iterations = max_loop_iterations
    main.block_compiler = compiler  # what DataParallel asks while tracing
    main.global_batch = global_batch
    inputs: list[Variable] = []
    used: set[str] = set()

    def make(spec: InputSpec, base: str) -> Variable:
        name = spec.name or base
        while name in used:
            name = f"{name}_{len(used)}"
        used.add(name)
        v = rt.static.data(name, list(spec.shape), spec.dtype)
        v.stop_gradient = bool(spec.stop_gradient)
        inputs.append(v)
        return v._alias()  # (``x[i] = v`` on an argument moves the alias, never the feed)

    def symbolic(value: Any, part: Any, base: str) -> Any:
        if isinstance(part, InputSpec):
            v = make(part, base)
            v._numpy = isinstance(value, np.ndarray)  # print(a) shows it as eagerly: [1 2 3]
            return v
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(
                symbolic(v, p, f"{base}_{i}") for i, (v, p) in enumerate(zip(value, part[1]))
            )
        if isinstance(value, dict):
            return {k: symbolic(value[k], p, str(k)) for k, p in part[1]}  # Paddle: the key
        return value

    arg_parts, kw_parts, _ = key
    steps = StepTrace(main)
    with static_guard(), program_guard(main, startup), steps:
        sym_args = [
            symbolic(a, p, names[i] if i < len(names) else f"arg{i}")
            for i, (a, p) in enumerate(zip(args, arg_parts))
        ]
        sym_kwargs = {k: symbolic(kwargs[k], p, k) for k, p in kw_parts}
        result = converted(*sym_args, **sym_kwargs)
        leaves, structure = flatten(result)
        out_leaves = []
        for leaf in leaves:
            if isinstance(leaf, Tensor):  # an eager tensor returned as is (a parameter)
                leaf = rt.static.builder.capture(main, leaf)
            out_leaves.append(leaf)
    in_leaves, in_structure = flatten((sym_args, sym_kwargs))
    captured = captured_values(main)
    return ConcreteProgram(
        main_program=main,
        startup_program=startup,
        inputs=inputs,
        outputs=[v for v in out_leaves if isinstance(v, Variable)],
        parameters=list(captured.values()),
        output_structure=structure,
        output_leaves=out_leaves,
        input_structure=in_structure,
        function=converted,
        compiler=compiler,
        feeds=steps.feeds,
        guards=steps.guards,
        grad_outputs=steps.grad_outputs,
        grad_finals=steps.grad_finals,
        is_step=steps.stepped,
    )


# ---- the cache -------------------------------------------------------------------------------

EAGER = object()  # cache value: this key runs eagerly (full_graph=False fallback)
MAX_VARIANTS = 8  # programs kept per key for other guard states


class GuardMiss:
    """``ProgramCache.get``'s answer when programs exist for a key but the eager state they
    assume differs: ``why`` says how, in words."""

    __slots__ = ("why",)

    def __init__(self, why: str | None):
        self.why = why


#: Defaults of ``to_static(max_programs=..., warn_retraces=...)``.
MAX_PROGRAMS = 64
WARN_RETRACES = 8
_ticks = itertools.count(1)  # recency of use, for the LRU cap


class ProgramCache:
    """Key -> ConcreteProgram (or the eager-fallback marker), with hit and miss counts.

    At most ``max_programs`` programs are kept (None: no cap); past that, the least recently
    used one is dropped. ``retraces`` holds one explanation per trace after the first
    (``explain``), in words (the latest 256).
    """

    def __init__(self, max_programs: int | None = MAX_PROGRAMS) -> None:
        if max_programs is not None and (type(max_programs) is not int or max_programs < 1):
            raise ToStaticError(
                f"max_programs must be a positive int or None, got {max_programs!r}"
            )
        self.max_programs = max_programs
        self._programs: dict[tuple, Any] = {}
        # key -> programs traced for it under other guards (a step's gradient states, an
        # optimizer's parameters), most recent first; the one in _programs is tried first
        self._variants: dict[tuple, list] = {}
        self._used: dict[tuple, int] = {}  # key -> tick of its last slow-path use
        self.fast: dict[tuple, ConcreteProgram] = {}  # exact tensor signature -> program
        # (program, its generated tensor call) of the latest fast hit that has one: the
        # StaticFunction tries it before anything else (dropped with its program)
        self.tensor_call: tuple | None = None
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.retraces: collections.deque = collections.deque(maxlen=256)  # the latest
        self._recent: collections.deque = collections.deque(maxlen=32)  # keys traced lately

    def __len__(self) -> int:
        return len(self._programs)

    def __contains__(self, key: object) -> bool:
        return key in self._programs

    def get(self, key: tuple) -> Any:
        """The program for ``key`` whose guards hold; None when there is none; a
        ``GuardMiss`` when programs were traced for ``key`` but the eager state differs."""
        found = self._programs.get(key)
        if found is not None:
            if type(found) is ConcreteProgram and found.guards and not found.guards_hold():
                found = self._variant(key, found)
                if type(found) is GuardMiss:
                    return found
            self.hits += 1
            self._used[key] = next(_ticks)
        return found

    def _variant(self, key: tuple, primary: ConcreteProgram) -> Any:
        variants = self._variants.get(key, [])
        for i, program in enumerate(variants):
            if program.guards_hold():  # it becomes the one tried first
                variants[i] = primary
                self._programs[key] = program
                return program
        return GuardMiss(primary.broken_guard())

    def put_variant(self, key: tuple, program: ConcreteProgram) -> None:
        """Add a program traced for ``key`` under other guards; it is tried first."""
        old = self._programs.get(key)
        if old is not None:
            variants = self._variants.setdefault(key, [])
            variants.insert(0, old)
            del variants[MAX_VARIANTS:]
        self.put(key, program)

    def put(self, key: tuple, value: Any) -> None:
        self.misses += 1
        self._programs[key] = value
        self._used[key] = next(_ticks)
        self._recent.append(key)
        if self.max_programs is not None and len(self._programs) > self.max_programs:
            self._evict()

    def _recency(self, key: tuple) -> int:
        """When ``key``'s program was last traced or used (fast-path hits count as uses)."""
        return max(self._used.get(key, 0), getattr(self._programs[key], "_tick", 0))

    def _evict(self) -> None:
        """Drop the least recently used program."""
        oldest = min(self._programs, key=self._recency)
        dropped = self._programs.pop(oldest)
        self._used.pop(oldest, None)
        self._variants.pop(oldest, None)
        self.evictions += 1
        for sig in [s for s, p in self.fast.items() if p is dropped]:
            del self.fast[sig]
        if self.tensor_call is not None and self.tensor_call[0] is dropped:
            self.tensor_call = None

    def explain(self, key: tuple, names: list[str]) -> str | None:
        """Why ``key`` needs a new trace, compared with the closest key traced before it
        (None for the first trace)."""
        if not self._recent:
            return None
        best = None
        for old in reversed(self._recent):
            reasons = describe_key_change(old, key, names)
            if best is None or len(reasons) < len(best):
                best = reasons
        if not best:
            return (
                "the same arguments as an earlier trace, whose program was dropped to keep "
                f"max_programs={self.max_programs} programs (the least recently used go first)"
            )
        return "; ".join(best)

    def last(self) -> ConcreteProgram | None:
        """The program traced or run most recently (None when there is none), as Paddle's
        ``program_cache.last()``."""
        programs = [k for k, p in self._programs.items() if isinstance(p, ConcreteProgram)]
        return self._programs[max(programs, key=self._recency)] if programs else None

    def concrete_programs(self) -> list[ConcreteProgram]:
        return [p for p in self._programs.values() if isinstance(p, ConcreteProgram)]

    def keys(self) -> list[tuple]:
        return list(self._programs)

    def clear(self) -> None:
        self._programs.clear()
        self._variants.clear()
        self._used.clear()
        self.fast.clear()
        self.tensor_call = None

    def __repr__(self) -> str:
        return f"<ProgramCache {len(self)} programs, {self.hits} hits, {self.misses} misses>"


# ---- why a key changed ------------------------------------------------------------------------


def _shape(shape: Any) -> str:
    return "[" + ", ".join("None" if d is None else str(d) for d in shape) + "]"


def _spec_change(where: str, a: InputSpec, b: InputSpec) -> list[str]:
    out = []
    if a.dtype != b.dtype:
        out.append(f"{where} changed dtype {a.dtype} → {b.dtype}: each dtype needs its own program")
    if tuple(a.shape) != tuple(b.shape):
        change = f"{where} changed shape {_shape(a.shape)} → {_shape(b.shape)}"
        if len(a.shape) == len(b.shape):
            shared = [x if x == y else None for x, y in zip(a.shape, b.shape)]
            dtype = "" if b.dtype == "float32" else f", {str(b.dtype)!r}"
            out.append(f"{change}: give InputSpec({_shape(shared)}{dtype}) to share one program")
        else:
            out.append(f"{change}: a different rank needs its own program")
    return out


def _part_change(where: str, a: Any, b: Any) -> list[str]:
    if a == b:
        return []
    if isinstance(a, InputSpec) and isinstance(b, InputSpec):
        return _spec_change(where, a, b)
    if isinstance(a, _Unhashable) and isinstance(b, _Unhashable):
        return [
            f"{where} is a different {type(b.obj).__name__} object; it is unhashable, so it is "
            "keyed by identity: pass a tuple, a number or a tensor to share one program"
        ]
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2:
        if a[0] is b[0] and a[0] in (list, tuple) and len(a[1]) == len(b[1]):
            return [r for i, (x, y) in enumerate(zip(a[1], b[1]))
                    for r in _part_change(f"{where}[{i}]", x, y)]  # fmt: skip
        if a[0] is b[0] is dict and [k for k, _ in a[1]] == [k for k, _ in b[1]]:
            return [r for (k, x), (_, y) in zip(a[1], b[1])
                    for r in _part_change(f"{where}[{k!r}]", x, y)]  # fmt: skip
        if isinstance(a[0], type) and a[0] is b[0] and a[0] not in (list, tuple, dict):
            return [
                f"{where} changed value {a[1]!r} → {b[1]!r}: Python values are part of the "
                "key (each value traces its own program); pass it as a tensor to share one"
            ]
    if (
        isinstance(a, tuple)
        and isinstance(b, tuple)
        and len(a) == len(b) == 3
        and (a[0] == b[0] == "layer")
    ):
        if a[1] != b[1]:
            return [f"{where} is a different layer object"]
        return [f"{where} switched {'train' if a[2] else 'eval'} → {'train' if b[2] else 'eval'}"]
    return [f"{where} changed from {_kind(a)} to {_kind(b)}"]


def _kind(part: Any) -> str:
    if isinstance(part, InputSpec):
        return f"a tensor {part.dtype}{_shape(part.shape)}"
    if isinstance(part, _Unhashable):
        return f"an unhashable {type(part.obj).__name__}"
    if isinstance(part, tuple) and len(part) == 2 and part[0] in (list, tuple, dict):
        return f"a {part[0].__name__} of {len(part[1])}"
    if isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], type):
        return f"the {part[0].__name__} {part[1]!r}"
    return repr(part)


def _split_mode(mode: Any) -> tuple:
    """(training flag, auto_cast setting or None) of a key's mode part."""
    if isinstance(mode, tuple):
        return mode[0], mode[1]
    return mode, None


def _amp_words(setting: Any) -> str:
    if setting is None:
        return "off"
    _, level, dtype, *_ = setting
    return f"{level} {dtype}"


def describe_key_change(old: tuple, new: tuple, names: list[str]) -> list[str]:
    """What differs between two cache keys, one phrase per difference, in words."""
    (old_args, old_kw, old_training), (new_args, new_kw, new_training) = old, new
    out: list[str] = []
    old_training, old_amp = _split_mode(old_training)
    new_training, new_amp = _split_mode(new_training)
    if old_amp != new_amp:
        out.append(
            f"rt.amp.auto_cast changed ({_amp_words(old_amp)} → {_amp_words(new_amp)}): each "
            "mixed-precision setting has its own program"
        )
    if old_training != new_training:
        mode = {True: "train()", False: "eval()"}
        out.append(
            f"the layer switched from {mode.get(old_training)} to {mode.get(new_training)}: "
            "each mode has its own program"
        )
    if len(old_args) != len(new_args):
        out.append(f"{len(old_args)} → {len(new_args)} positional arguments")
    for i, (a, b) in enumerate(zip(old_args, new_args)):
        out += _part_change(f"argument {names[i]!r}" if i < len(names) else f"argument {i}", a, b)
    old_kw, new_kw = dict(old_kw), dict(new_kw)
    if set(old_kw) != set(new_kw):
        out.append(f"keyword arguments {sorted(old_kw)} → {sorted(new_kw)}")
    for k in sorted(set(old_kw) & set(new_kw)):
        out += _part_change(f"argument {k!r}", old_kw[k], new_kw[k])
    return out


def warn_unhashable(notes: list[str], name: str) -> None:
    warnings.warn(
        f"to_static({name}): {'; '.join(notes)}, so it is keyed by identity: every new object "
        "retraces the program; pass tensors or hashable values (tuples, numbers, strings)",
        stacklevel=4,
    )


def feed_values(args: tuple, kwargs: dict, key: tuple) -> list:
    """The tensor arguments of a call, in the order ``trace`` made their data variables."""
    out: list = []

    def walk(value: Any, part: Any) -> None:
        if isinstance(part, InputSpec):
            out.append(value)
        elif isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            for v, p in zip(value, part[1]):
                walk(v, p)
        elif isinstance(value, dict):
            for k, p in part[1]:
                walk(value[k], p)

    arg_parts, kw_parts, _ = key
    for a, p in zip(args, arg_parts):
        walk(a, p)
    for k, p in kw_parts:
        walk(kwargs[k], p)
    return out

"""``to_static`` and ``StaticFunction``: a function (or a layer's ``forward``) run as a
cached static program.

    @autostatic.to_static(input_spec=[autostatic.InputSpec([None, 10])])
    def f(x): ...

    net = autostatic.to_static(net)      # converts net.forward; net(x) runs the program

The first call with a new cache key (see ``program_cache``) converts the function (once) and
traces it into a Program; later calls with the same key run the cached program as one eager
op (``run_program``) that joins autograd, so ``loss.backward()`` reaches the parameters.
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import autostatic_runtime as rt
from autostatic.jit.program_cache import (
    EAGER,
    MAX_PROGRAMS,
    MISS,
    WARN_RETRACES,
    ConcreteProgram,
    GuardMiss,
    ProgramCache,
    ToStaticError,
    _ticks,
    arg_names,
    build_key,
    feed_values,
    trace,
    warn_unhashable,
)
from autostatic.verbosity import say
from autostatic_runtime import mode as _mode
from autostatic_runtime.amp.autocast import active_key
from autostatic_runtime.errors import StaticBuildError
from autostatic_runtime.ops.registry import _autocasting
from autostatic_runtime.static.input_spec import InputSpec
from autostatic_runtime.tensor import Tensor

__all__ = ["to_static", "StaticFunction", "enable_to_static", "RetraceWarning"]


class RetraceWarning(UserWarning):
    """A StaticFunction has been traced more often than ``warn_retraces``."""


_enabled = [True]
_FAST_ENTRIES = 256
# argument types a call signature holds by value (as their cache key does); containers and
# arrays are never in one (their key is their structure, or their spec)
_BY_VALUE = frozenset({type(None), bool, int, float, complex, str, bytes})
_STRUCTURES = (list, tuple, dict, set, np.ndarray, InputSpec)
#: One lock around cache lookups and traces: a key is traced once even when several threads
#: call with it at once. Static mode itself is per thread (``autostatic_runtime.mode``), so
#: eager code in other threads never sees a trace.
_LOCK = threading.RLock()


def enable_to_static(enable: bool = True) -> None:
    """Turn every StaticFunction on or off: with ``False`` they call the original function
    eagerly (handy for debugging with print and pdb)."""
    _enabled[0] = bool(enable)


class StaticFunction:
    """A function or method that runs as a cached static program (made by ``to_static``).

    Attributes:
        program_cache: the ProgramCache (``hits``, ``misses``, ``len()``).
    """

    def __init__(
        self,
        function: Callable,
        input_spec: Any = None,
        full_graph: bool = True,
        instance: Any = None,
        max_programs: int | None = MAX_PROGRAMS,
        warn_retraces: int | None = WARN_RETRACES,
        backend: str | None = None,
        max_loop_iterations: int | None = None,
    ):
        if isinstance(function, (staticmethod, classmethod)):
            function = function.__func__
        _reject_generators(function)
        self._function = function
        self._options = {
            "max_programs": max_programs,
            "warn_retraces": warn_retraces,
            "backend": backend,
            "max_loop_iterations": _loop_limit(max_loop_iterations),
        }
        self._compiler = _block_compiler(backend)
        self._instance = instance
        self._layer = instance if isinstance(instance, rt.nn.Layer) else None  # its .training
        self._input_spec = _check_specs(input_spec)
        self._full_graph = bool(full_graph)
        self._converted: Callable | None = None
        self._slot = f"__autostatic_{getattr(function, '__name__', 'function')}_{id(self):x}"
        self._names = arg_names(function, instance is not None)
        if self._input_spec is not None and (instance is not None or self._names[:1] != ["self"]):
            _name_specs(self._input_spec, self._names)
        self.program_cache = ProgramCache(max_programs)
        self._warn_retraces = warn_retraces
        self._warned = False
        self._eager_reasons: dict = {}
        name = getattr(function, "__name__", None) or type(function).__name__
        self.__name__ = name
        self.__qualname__ = getattr(function, "__qualname__", name)
        functools.update_wrapper(self, function)

    # -- descriptor: ``@to_static`` on a method ----------------------------------------------
    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None or self._instance is not None:
            return self
        # The bound StaticFunction (with its own cache) lives on the instance, so it dies
        # with it (a dict keyed by instances would keep them alive through the values).
        store = getattr(instance, "__dict__", None)
        bound = store.get(self._slot) if store is not None else None
        if bound is None:
            bound = StaticFunction(
                self._function, self._input_spec, self._full_graph, instance, **self._options
            )
            if store is not None:
                store[self._slot] = bound
        return bound

    def __deepcopy__(self, memo: dict) -> StaticFunction | Callable:
        """A copy (of a copied layer's ``forward``) starts with an empty program cache; a
        function's copy is the function itself, as ``copy.deepcopy`` of a function is (and
        Paddle's is its dygraph function)."""
        import copy

        if self._instance is None:
            return self._function
        instance = copy.deepcopy(self._instance, memo)
        return StaticFunction(
            self._function, self._input_spec, self._full_graph, instance, **self._options
        )

    @property
    def class_instance(self) -> Any:
        """The instance a method is bound to (None for a function), as Paddle's."""
        return self._instance

    # -- the original and converted functions ------------------------------------------------
    @property
    def dygraph_function(self) -> Callable:
        """The original function (bound to its instance for methods)."""
        if self._instance is not None:
            return types.MethodType(self._function, self._instance)
        return self._function

    def _converted_function(self) -> Callable:
        if self._converted is None:
            # the converter (gast) only for a function whose tracing body is not cached:
            # neither autostatic.api nor autostatic.lazy loads it
            from autostatic.api import convert

            try:
                self._converted = convert(self._function)
                from autostatic.lazy import prepare

                prepare(self._converted)  # convert now, before static mode: not while tracing
            except Exception as exc:
                from autostatic.pyct.errors import SourceUnavailableError  # (loads gast)

                if not isinstance(exc, SourceUnavailableError):
                    raise
                warnings.warn(
                    f"to_static: {exc}; it is traced as written, so a tensor-dependent "
                    "if/while in it cannot become a cond/while op",
                    stacklevel=4,
                )
                self._converted = self._function
        return self._converted

    @property
    def code(self) -> str:
        """The converted source of the function."""
        from autostatic.api import to_code

        return to_code(self._function)

    @property
    def input_spec(self) -> list | None:
        return self._input_spec

    # -- calls ---------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _enabled[0]:
            return self.dygraph_function(*args, **kwargs)
        if _mode._static[0] and _mode._local.static:
            return self._call_converted(args, kwargs)  # called while this thread traces: inline
        cache = self.program_cache
        fast = cache.tensor_call
        if fast is not None and not kwargs:
            # the last program's generated call (no lock: it neither traces nor changes the
            # cache, and it checks the inputs itself); MISS: the generic way below
            result = fast[1](args)
            if result is not MISS:
                cache.hits += 1
                fast[0]._tick = next(_ticks)
                return result
        with _LOCK:
            return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        if not kwargs:  # fast path: flat arguments seen before (tensors of these shapes)
            sig, feeds = self._signature(args)
            if sig is not None:
                program = self.program_cache.fast.get(sig)
                if program is not None and (not program.guards or program.guards_hold()):
                    self.program_cache.hits += 1
                    program._tick = next(_ticks)  # recency, for the LRU cap
                    result = program(feeds)
                    if feeds is args:
                        call = program.tensor_call(sig, self._layer)
                        if call is not None:  # the next calls try it first
                            self.program_cache.tensor_call = (program, call)
                    return result
        else:
            sig = None
        args, kwargs = self._normalized(args, kwargs)
        key, notes = self._key(args, kwargs)
        found = self.program_cache.get(key)
        if found is None:
            if notes:
                warn_unhashable(notes, self.__name__)
            found = self._trace(args, kwargs, key)
        elif type(found) is GuardMiss:
            found = self._trace(args, kwargs, key, found.why)
        if found is EAGER:
            return self.dygraph_function(*args, **kwargs)
        if sig is not None:
            if len(self.program_cache.fast) >= _FAST_ENTRIES:
                self.program_cache.fast.clear()
            self.program_cache.fast[sig] = found
        return found(feed_values(args, kwargs, key))

    def _signature(self, args: tuple) -> tuple:
        """``(signature, feeds)`` of flat arguments: after the layer's ``training`` flag, each
        tensor's exact shape and dtype, and each other argument as its cache key has it by
        value (None, bools, numbers, strings) or by identity (objects hashed by identity:
        layers, with their ``training`` flag, optimizers, functions); the feeds are the
        tensors. ``(None, None)`` for anything else (the cache key decides)."""
        layer = self._layer
        parts = [None if layer is None else layer.training]
        if _autocasting[0]:
            parts[0] = self._mode()
        feeds: Any = args
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                data = a._data
                parts.append((data.shape, data.dtype))
                continue
            kind = type(a)
            if kind in _BY_VALUE:
                parts.append((kind, a))
            elif kind.__hash__ is not object.__hash__ or isinstance(a, _STRUCTURES):
                return None, None
            elif isinstance(a, rt.nn.Layer):
                parts.append((kind, a, a.training))
            else:
                parts.append((kind, a))
            if feeds is args:
                feeds = [t for t in args[:i] if isinstance(t, Tensor)]
        if feeds is not args:
            feeds = [t for t in args if isinstance(t, Tensor)]
        return tuple(parts), feeds

    def _call_converted(self, args: tuple, kwargs: dict) -> Any:
        fn = self._converted_function()
        if self._instance is not None:
            return fn(self._instance, *args, **kwargs)
        return fn(*args, **kwargs)

    def _normalized(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """``(args, kwargs)`` of one call in one form, so that equal calls share a key (as
        Paddle's ``FunctionSpec`` unifies them): a keyword for a positional parameter is passed
        by position, trailing arguments equal to their defaults are left out; arguments the
        function does not take, or fewer than its ``input_spec`` entries, are a ToStaticError
        (a TypeError and a ValueError, as Paddle raises)."""
        signature = self._parameters()
        if signature is None:
            return args, kwargs
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ToStaticError(f"{self.__qualname__}(): {exc}") from None
        args, kwargs = list(bound.args), bound.kwargs
        positional = [
            p for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]  # fmt: skip
        keep = len(self._input_spec or ())
        while keep < len(args) <= len(positional):
            if not _is_default(args[-1], positional[len(args) - 1].default):
                break
            args.pop()
        if len(args) < keep:
            raise ToStaticError(
                f"{self.__qualname__}: input_spec has {keep} entries but the call passes "
                f"{len(args)} positional arguments; give at most one InputSpec per argument"
            )
        return tuple(args), kwargs

    def _parameters(self) -> inspect.Signature | None:
        """The function's signature without its bound instance (None when it has none)."""
        found = self.__dict__.get("_signature_of_call", False)
        if found is False:
            try:
                found = inspect.signature(self._function)
                if self._instance is not None:
                    params = list(found.parameters.values())[1:]
                    found = found.replace(parameters=params)
            except (TypeError, ValueError):
                found = None
            self.__dict__["_signature_of_call"] = found
        return found

    def _mode(self) -> Any:
        """The key's mode part: the layer's ``training`` flag, with this thread's
        ``rt.amp.auto_cast`` setting when one casts (each has its own program)."""
        training = None if self._layer is None else self._layer.training
        amp = active_key()
        return training if amp is None else (training, amp)

    def _key(self, args: tuple, kwargs: dict) -> tuple:
        return build_key(args, kwargs, self._input_spec, self._names, self._mode())

    def _trace(self, args: tuple, kwargs: dict, key: tuple, guard: str | None = None) -> Any:
        """Trace a program for ``key`` (``guard``: why the programs traced for it before do
        not fit the eager state, in words)."""
        why = guard or self.program_cache.explain(key, self._names)  # before the key is added
        try:
            fn = self._converted_function()
            if self._instance is not None:
                fn = functools.partial(fn, self._instance)
            program = trace(
                fn, args, kwargs, key, self._names, self._compiler,
                self._options["max_loop_iterations"],
            )  # fmt: skip
        except ToStaticError:
            raise
        except Exception as exc:
            if self._full_graph:
                raise
            reason = f"{type(exc).__name__}: {exc}"
            warnings.warn(
                f"to_static(full_graph=False): {self.__qualname__} runs eagerly because it "
                f"could not be made static: {reason}",
                stacklevel=3,
            )
            self._eager_reasons[key] = reason
            self.program_cache.put(key, EAGER)
            self._note_retrace(why)
            return EAGER
        if guard is None:
            self.program_cache.put(key, program)
        else:
            self.program_cache.put_variant(key, program)
        self._note_retrace(why)
        return program

    def _note_retrace(self, reason: str | None) -> None:
        """Record why this trace happened; print it at verbosity 1; warn once past
        ``warn_retraces`` traces (as tf.function warns about frequent retracing)."""
        traces = self.program_cache.misses
        if reason is None:
            return
        self.program_cache.retraces.append(f"trace {traces}: {reason}")
        say(1, f"retracing {self.__qualname__} (trace {traces}): {reason}")
        limit = self._warn_retraces
        if limit is not None and traces > limit and not self._warned:
            self._warned = True
            warnings.warn(
                f"to_static: {self.__qualname__} has been traced {traces} times (more than "
                f"warn_retraces={limit}); each trace builds and compiles a program. "
                f"The latest: {reason}. {self.__name__}.explain_retraces() lists every "
                "retrace; autostatic.set_verbosity(1) prints them as they happen",
                RetraceWarning,
                stacklevel=5,
            )

    def explain_retraces(self) -> list[str]:
        """Why each trace after the first happened, in words, oldest first, e.g.
        ``"trace 2: argument 'x' changed shape [3, 4] → [5, 4]: give InputSpec([None, 4])
        to share one program"``."""
        return list(self.program_cache.retraces)

    # -- inspection ----------------------------------------------------------------------------
    def explain(self) -> list[str]:
        """How each cached program runs, in words: on the default executor, compiled by XLA,
        or — for ``backend="xla"`` — on the default executor because XLA could not take it
        (the op, its source line and why)."""
        from autostatic_runtime.jit.run_program import compiled_functions

        lines = []
        for i, program in enumerate(self.program_cache._programs.values(), 1):
            if program is EAGER:
                lines.append(f"program {i}: runs eagerly (it could not be made static)")
                continue
            inputs = ", ".join(f"{v.name}: {v.shape} {v.dtype}" for v in program.inputs)
            head = f"program {i} ({inputs})"
            if program.is_step:
                head += f", {program.step_summary()}"
            if self._options["backend"] != "xla":
                lines.append(f"{head}: runs on the default executor")
                continue
            compiled = compiled_functions(program.runner)
            reasons = [f.fallback for f in compiled if getattr(f, "fallback", None)]
            if reasons:
                lines += [
                    f"{head}: backend='xla' fell back to the default executor: {r}" for r in reasons
                ]
            elif compiled and program.is_step:
                plan = getattr(program.compiler, "plan", None)  # a DataParallel step's
                where = f" ({plan.describe()})" if plan is not None else ""
                lines.append(
                    f"{head}: compiled by XLA as one computation{where}; its parameters, "
                    "buffers and optimizer state stay on the device between calls, donated to "
                    "the next"
                )
            elif compiled:
                lines.append(f"{head}: compiled by XLA (one jax.jit computation per block)")
            else:
                lines.append(f"{head}: not compiled yet (backend='xla')")
        return lines

    def get_concrete_program(self, *args: Any, **kwargs: Any) -> ConcreteProgram:
        """The ConcreteProgram for these arguments (InputSpecs or tensors), tracing if needed.

        Without arguments, uses the ``input_spec`` the function was declared with.
        """
        if not args and not kwargs:
            if self._input_spec is not None:
                args = tuple(self._input_spec)
            elif not takes_no_arguments(self._parameters()):
                raise ToStaticError(
                    f"get_concrete_program({self.__name__}) needs InputSpecs or tensors, or "
                    "an input_spec given to to_static"
                )
        args, kwargs = self._normalized(args, kwargs)
        key, notes = self._key(args, kwargs)
        with _LOCK:
            found = self.program_cache.get(key)
            if found is None:
                found = self._trace(args, kwargs, key)
            elif type(found) is GuardMiss:
                found = self._trace(args, kwargs, key, found.why)
        if found is EAGER:
            raise ToStaticError(
                f"{self.__qualname__} cannot be made static: {self._eager_reasons.get(key)}"
            )
        return found

    @property
    def concrete_program(self) -> ConcreteProgram:
        """The program of the declared ``input_spec``, else of the most recent trace."""
        if self._input_spec is not None:
            return self.get_concrete_program()
        last = self.program_cache.last()
        if last is None:
            raise ToStaticError(
                f"{self.__name__} has not been traced yet: call it once, or give to_static "
                "an input_spec"
            )
        return last

    @property
    def main_program(self):
        return self.concrete_program.main_program

    @property
    def inputs(self) -> list:
        """The data variables of ``concrete_program`` (Paddle's ``StaticFunction.inputs``)."""
        return self.concrete_program.inputs

    @property
    def outputs(self) -> list:
        """The output variables of ``concrete_program``."""
        return self.concrete_program.outputs

    def rollback(self) -> Callable:
        """Undo ``to_static``: return the original function; a layer's ``forward`` is
        restored, so calling the layer runs eagerly again."""
        inst = self._instance
        if inst is not None:
            original = types.MethodType(self._function, inst)
            if inst.__dict__.get("forward") is self:
                del inst.__dict__["forward"]
            elif isinstance(inspect.getattr_static(type(inst), "forward", None), StaticFunction):
                object.__setattr__(inst, "forward", original)
            return original
        return self._function

    def __repr__(self) -> str:
        return f"<StaticFunction {self.__qualname__}: {self.program_cache!r}>"


def _loop_limit(limit: Any) -> int | None:
    if limit is not None and (type(limit) is not int or limit < 0):
        raise ToStaticError(
            f"to_static: max_loop_iterations must be a non-negative int, got {limit!r}"
        )
    return limit


def _block_compiler(backend: str | None) -> Any:
    """The runtime's block compiler for ``to_static(backend=...)``."""
    if backend not in (None, "python", "xla"):
        raise ToStaticError(f"to_static: backend must be None or 'xla', got {backend!r}")
    from autostatic_runtime.static.compiler import get_compiler

    return get_compiler(backend)


def _reject_generators(function: Any) -> None:
    """A generator or async function cannot be a program: say so at ``to_static`` time, at
    the user's ``def`` line, instead of failing later inside the tracer."""
    if inspect.isasyncgenfunction(function):
        kind, why = "an async generator function", "async generator functions"
    elif inspect.iscoroutinefunction(function):
        kind, why = "an async function", "async functions"
    elif inspect.isgeneratorfunction(function):
        kind, why = "a generator function", "generator functions"
    else:
        return
    code = function.__code__
    name = getattr(function, "__qualname__", code.co_name)
    raise StaticBuildError(
        f"to_static({name}): {name} is {kind}, and {why} cannot become programs (a program "
        "runs to the end and returns its outputs once; it cannot yield or await); make it "
        "return its results (collect yielded values in a list), or call it without to_static",
        (code.co_filename, code.co_firstlineno, code.co_name),
    )


def _is_default(value: Any, default: Any) -> bool:
    """Whether an argument is its parameter's default (the object, or an equal plain value)."""
    if value is default:
        return True
    kind = type(value)
    return kind is type(default) and kind in _BY_VALUE and value == default


def takes_no_arguments(signature: inspect.Signature | None) -> bool:
    """Whether a function of ``signature`` can be called without arguments."""
    if signature is None:
        return False
    try:
        signature.bind()
    except TypeError:
        return False
    return True


def _name_specs(specs: list, names: list[str]) -> None:
    """Give each unnamed top-level InputSpec the name of its parameter, in place, as Paddle's
    to_static does (``jit.save(..., input_names_after_prune=[spec.name])`` relies on it)."""
    for spec, name in zip(specs, names):
        if isinstance(spec, InputSpec) and spec.name is None:
            spec.name = name


def _check_specs(input_spec: Any) -> list | None:
    if input_spec is None:
        return None
    if isinstance(input_spec, InputSpec):
        input_spec = [input_spec]
    if not isinstance(input_spec, (list, tuple)):
        raise ToStaticError(
            f"input_spec must be a list of InputSpec, got {type(input_spec).__name__}"
        )

    def walk(s):
        if isinstance(s, (list, tuple)):
            return type(s)(walk(x) for x in s)
        if isinstance(s, dict):
            return {k: walk(v) for k, v in s.items()}
        if isinstance(s, InputSpec) or s is None:
            return s
        if isinstance(s, rt.Tensor):
            return InputSpec.from_tensor(s)
        raise ToStaticError(f"input_spec entries must be InputSpec, got {type(s).__name__}")

    return list(walk(list(input_spec)))


def to_static(
    function: Any = None,
    input_spec: Any = None,
    full_graph: bool = True,
    *,
    max_programs: int | None = MAX_PROGRAMS,
    warn_retraces: int | None = WARN_RETRACES,
    backend: str | None = None,
    max_loop_iterations: int | None = None,
) -> Any:
    """Run ``function`` as a cached static program (decorator with or without arguments).

    Args:
        function: a function, a bound method, or an ``rt.nn.Layer`` (its ``forward`` is
            converted and the layer is returned).
        input_spec: a list of ``InputSpec`` for the tensor arguments (``None`` dims accept any
            size); without it, each new shape and dtype is traced separately.
        full_graph: when False, a function that cannot be made static runs eagerly with a
            warning saying why, instead of raising.
        max_programs: keep at most this many programs (per function, or per layer instance),
            dropping the least recently used; None keeps every program.
        warn_retraces: warn (once, a ``RetraceWarning``) when the function has been traced
            more than this many times; None never warns. ``explain_retraces()`` says why
            each retrace happened; ``autostatic.set_verbosity(1)`` prints it as it happens.
        backend: the block compiler running the programs: None (the default executor) or
            ``"xla"`` (the whole program as one ``jax.jit`` computation; needs the ``xla``
            extra). A program XLA cannot take runs on the default executor after one
            ``XlaFallbackWarning``; ``explain()`` says why.
        max_loop_iterations: a bound on every tensor loop's iterations: a loop that would run
            more raises an ``ExecutionError`` naming its line (on every executor). With
            ``backend="xla"``, a loop that grows a list or a tensor and has no bound of its
            own in its condition compiles into one XLA loop with buffers of this size (when
            it is below 1,000,000).

    Returns:
        A StaticFunction (the layer itself for a Layer).
    """
    if function is None:
        return lambda fn: to_static(
            fn,
            input_spec,
            full_graph,
            max_programs=max_programs,
            warn_retraces=warn_retraces,
            backend=backend,
            max_loop_iterations=max_loop_iterations,
        )
    options = {"max_programs": max_programs, "warn_retraces": warn_retraces, "backend": backend,
               "max_loop_iterations": max_loop_iterations}  # fmt: skip
    _block_compiler(backend)  # an unknown name or a missing JAX fails here, at the decorator
    if isinstance(function, StaticFunction):
        same = (backend, max_loop_iterations) == (
            function._options["backend"],
            function._options["max_loop_iterations"],
        )
        if input_spec is None and same:
            return function
        input_spec = function.input_spec if input_spec is None else input_spec
        function = function.dygraph_function
    if isinstance(function, rt.nn.Layer):
        layer = function
        current = layer.forward
        base = current.dygraph_function if isinstance(current, StaticFunction) else current
        spec = input_spec
        if spec is None and isinstance(current, StaticFunction):
            spec = current.input_spec
        sf = StaticFunction(base.__func__, spec, full_graph, layer, **options)
        object.__setattr__(layer, "forward", sf)
        return layer
    if inspect.ismethod(function):
        return StaticFunction(
            function.__func__, input_spec, full_graph, function.__self__, **options
        )
    if not callable(function):
        raise ToStaticError(f"to_static expects a function or a Layer, got {function!r}")
    return StaticFunction(function, input_spec, full_graph, **options)

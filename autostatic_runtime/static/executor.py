"""The Executor: runs Programs with feeds and fetches over a scope of persistable values."""

from __future__ import annotations

from operator import is_
from typing import Any

import numpy as np

from autostatic_runtime import backends, dtypes
from autostatic_runtime.errors import OpError, user_location
from autostatic_runtime.static.builder import captured_values, default_main_program
from autostatic_runtime.static.compiler import get_compiler
from autostatic_runtime.static.program import Program, Variable
from autostatic_runtime.tensor import Tensor

__all__ = ["Executor", "Scope", "global_scope", "scope_guard"]

_current = backends._current  # the current backend (a list changed in place), for run()
_rebuild = Tensor._rebuild


class Scope(dict):
    """Name -> backend array for the persistable variables (parameters, optimizer state)."""

    def find_var(self, name: str) -> _ScopeVar | None:
        return _ScopeVar(self, name) if name in self else None

    def var(self, name: str) -> _ScopeVar:
        return _ScopeVar(self, name)


class _ScopeVar:
    """Paddle-style handle: ``scope.find_var(name).get_tensor()``."""

    def __init__(self, scope: Scope, name: str):
        self.scope, self.name = scope, name

    def get_tensor(self) -> np.ndarray:
        value = self.scope[self.name]
        return backends.backend_of(value).to_numpy(value)

    def set(self, value: Any) -> None:
        self.scope[self.name] = value


_global_scope = [Scope()]


def global_scope() -> Scope:
    """The scope Executors use when ``run`` gets none."""
    return _global_scope[0]


class scope_guard:
    """Use ``scope`` as the global scope inside the block."""

    def __init__(self, scope: Scope):
        self.scope = scope

    def __enter__(self):
        self.saved = _global_scope[0]
        _global_scope[0] = self.scope

    def __exit__(self, *exc):
        _global_scope[0] = self.saved


class Executor:
    """Runs programs on a device: ``exe.run(startup)``, then ``exe.run(main, feed, fetch_list)``.

    Each (program version, feed names, fetch names) is compiled once and cached: into a
    Python function over backend kernels by default, into one XLA computation with
    ``compiler="xla"`` (``backend="xla"`` is the same; needs the ``xla`` extra).
    """

    def __init__(self, place: Any = None, compiler: Any = None, *, backend: Any = None):
        self.place = place
        self.compiler = get_compiler(compiler if backend is None else backend)
        self._cache: dict[tuple, Any] = {}
        # the last call: (program, version, fetch_list, its items, feed names, backend,
        # runner); a call with the same objects skips building the cache key
        self._last: tuple | None = None
        # the last call's form when its runner has a prepared call (program, fetch_list,
        # version, fetch items, backend, runner, the one fetch item of a list of one):
        # run() tries that call first
        self._fast: tuple | None = None
        # call form -> ``run`` generated for it (``_enter``), or False when there is none
        self._entries: dict[tuple, Any] = {}

    def _backend(self):
        if self.place is None:
            return backends.current_backend()
        name = str(self.place).lower()
        if name.startswith(("gpu", "cuda")):
            return backends.get_backend("cupy")
        if name.startswith("cpu"):
            return backends.get_backend("numpy")
        return backends.get_backend(name)

    def run(
        self,
        program: Program | None = None,
        feed: dict | None = None,
        fetch_list: list | None = None,
        scope: Scope | None = None,
        return_numpy: bool = True,
        use_program_cache: bool = True,
    ):
        """Run ``program``; returns the fetched values (NumPy arrays, or Tensors)."""
        fast = self._fast
        if (  # the last call again, and its runner has a prepared call: that checks the rest
            fast is not None
            and program is fast[0]
            and fetch_list is fast[1]
            and program._version == fast[2]
            and use_program_cache
            and (
                fast[3] is None  # a fetch list that cannot change (tuple, name, Variable)
                or (len(fetch_list) == 1 and fetch_list[0] is fast[6])
                or _same(fetch_list, fast[3])
            )
            and (_current[0] if self.place is None and _current else self._backend()) is fast[4]
        ):
            results = fast[5].prepared(
                _global_scope[0] if scope is None else scope, {} if feed is None else feed
            )
            if results is not None:  # None: other feed names
                return results if return_numpy else [_rebuild(r, None, 0) for r in results]
        scope = _global_scope[0] if scope is None else scope
        feed = {} if feed is None else feed
        last = self._last
        if (  # the call before this one, again: its runner
            last is not None
            and program is last[0]
            and fetch_list is last[2]
            and program._version == last[1]
            and use_program_cache
            and (last[3] is None or _same(fetch_list, last[3]))
            and (_current[0] if self.place is None and _current else self._backend()) is last[5]
            and feed.keys() == last[4]
        ):
            backend, runner = last[5], last[6]
        else:
            backend, runner = self._runner(program, feed, fetch_list, use_program_cache)
        results = runner(scope, feed)
        if runner.prepared is not None and self._last is not None and self._last[6] is runner:
            last = self._last  # from now on its prepared call takes this call's form first
            items = last[3]
            single = items[0] if items is not None and len(items) == 1 else _NOTHING
            self._fast = (last[0], last[2], last[1], items, last[5], runner, single)
            self._enter(self._fast)
        if return_numpy:
            to_numpy = backend.to_numpy
            return [r if type(r) is np.ndarray else to_numpy(r) for r in results]
        return [_rebuild(r, None, 0) for r in results]

    def _runner(self, program: Any, feed: dict, fetch_list: Any, use_cache: bool) -> tuple:
        """The backend and the compiled runner for a call (from the cache, or compiled now)."""
        given = program
        program = program or default_main_program()
        if not isinstance(program, Program):
            raise TypeError(f"Executor.run expects a Program, got {type(program).__name__}")
        if fetch_list is None:
            fetch_names = ()
        elif isinstance(fetch_list, (Variable, str)):
            fetch_names = (_name(fetch_list),)
        else:
            fetch_names = tuple([_name(f) for f in fetch_list])
        backend = self._backend()
        key = (program.id, program.version, tuple(feed), fetch_names, backend.name)
        runner = self._cache.get(key) if use_cache else None
        if runner is None:
            runner = _Runner(self.compiler, program, list(feed), list(fetch_names), backend)
            self._cache[key] = runner
        if use_cache and given is not None:
            fixed = fetch_list is None or isinstance(fetch_list, (tuple, str, Variable))
            items = None if fixed else tuple(fetch_list)  # a list may change between calls
            self._last = (program, program.version, fetch_list, items, feed.keys() | set(),
                          backend, runner)  # fmt: skip
        return backend, runner

    def _enter(self, fast: tuple) -> None:
        """Make ``run`` itself, for the call form ``fast``, one generated function: this
        Executor's checks of ``fast`` in front of the runner's prepared call (an instance
        attribute; anything it does not take goes to the class's ``run``). Kept per form,
        so that alternating programs or fetch lists do not generate it again."""
        program, fetch_list, version, items, backend, runner, single = fast
        ids = None if items is None else tuple(map(id, items))
        key = (id(runner), id(fetch_list), version, ids, id(backend))
        found = self._entries.get(key)
        if found is None:
            found = runner.entry(self, fast) or False
            if len(self._entries) >= 16:
                self._entries.clear()
            self._entries[key] = found  # (holds the objects whose ids make the key)
        if found is not False:
            self.run = found

    def close(self) -> None:
        self._cache.clear()
        self._entries.clear()
        self._last = self._fast = None
        self.__dict__.pop("run", None)


_NOTHING = object()  # never a fetch item


def _same(items: Any, before: tuple) -> bool:
    """Whether a fetch list reused between calls still holds the same objects."""
    return len(items) == len(before) and all(map(is_, items, before))


def _name(f: Any) -> str:
    return f.name if isinstance(f, Variable) else str(f)


class _Runner:
    """One compiled (program version, feed names, fetch names): checks feeds cheaply, loads
    captured tensors and the scheduled learning rate into the scope, calls the code."""

    def __init__(
        self,
        compiler: Any,
        program: Program,
        feed_names: list[str],
        fetch_names: list[str],
        backend: Any,
    ):
        block = program.global_block()
        for name in feed_names:
            if name not in block.vars:
                raise OpError(
                    "Executor.run",
                    f"feed {name!r} is not a variable of the program; "
                    f"its data variables are {_data_names(program)}",
                    user_location(),
                )
        for name in fetch_names:
            if not block.has_var(name):
                raise OpError(
                    "Executor.run",
                    f"fetch {name!r} is not a variable of the program",
                    user_location(),
                )
        self.program = program
        self.backend = backend
        self.fn = compiler.compile(block, feed_names, fetch_names, backend)
        self.feeds = [(name, block.vars[name]) for name in feed_names]
        self.captured = list(captured_values(program).items())
        self.scheduler = getattr(program, "lr_scheduler", None)
        self.array_type = backend.array_types[0]
        self.np_dtypes = {name: backend.to_dtype(var.dtype) for name, var in self.feeds}
        # per feed: the backend dtype and the exact shape when every dim is known (one compare)
        self.checks = [
            (name, var, self.np_dtypes[name], var._shape if -1 not in var._shape else None)
            for name, var in self.feeds
        ]
        # a compiled function may offer a prepared call (XLA): the checks below and its own
        # done in one generated function, once it is in its steady state
        self.prepared: Any = None
        self._prepare = getattr(self.fn, "prepare", None)
        if backend.name != "numpy" or self.scheduler is not None:
            self._prepare = None

    def __call__(self, scope: Scope, feed: dict) -> tuple:
        if self.captured:
            backend = self.backend
            for name, tensor in self.captured:
                if name not in scope:
                    scope[name] = _on(backend, tensor._data)
        if self.scheduler is not None:
            scope[self.program.lr_var_name] = self.backend.asarray(
                float(self.scheduler()), dtypes.get_default_dtype()
            )
        array_type = self.array_type
        args = []
        for name, var, dtype, shape in self.checks:
            value = feed[name]
            if not (  # the backend's array with the variable's dtype and a shape that fits
                type(value) is array_type
                and value.dtype == dtype
                and (value.shape == shape or _fits(value.shape, var._shape))
            ):
                value = _feed_value(name, var, value, self.backend)
            args.append(value)
        results = self.fn(scope, *args)
        if self._prepare is not None and self.prepared is None:
            self._prepare_call()
        return results

    def _prepare_call(self) -> None:
        feeds = [(name, dtype, var._shape) for name, var, dtype, _ in self.checks]
        needed = [name for name, _ in self.captured]
        self.prepared = self._prepare(feeds, needed, self._slow)

    def entry(self, exe: Executor, fast: tuple) -> Any:
        """``Executor.run`` generated for one call form (``Executor._enter``): the checks of
        ``fast`` (program and version, fetch list and its items, backend,
        ``use_program_cache``) in front of the prepared call's own; None when the function
        offers none."""
        if self.prepared is None:
            return None
        program, fetch_list, version, items, backend, _, single = fast
        ns = {"P": program, "F": fetch_list, "V": version, "B": backend, "I": items,
              "F0": single, "exe": exe, "current": _current, "same": _same,
              "global_scope": _global_scope}  # fmt: skip
        checks = ["program is P", "fetch_list is F", "program._version == V", "use_program_cache"]
        if items is not None:
            one = "len(fetch_list) == 1 and fetch_list[0] is F0"
            checks.append(one if len(items) == 1 else "same(fetch_list, I)")
        if exe.place is None:
            checks.append("exe.place is None and current and current[0] is B")
        else:
            checks.append("exe._backend() is B")
        feeds = [(name, dtype, var._shape) for name, var, dtype, _ in self.checks]
        needed = [name for name, _ in self.captured]
        entry = _RunEntry(checks, ns, Executor.run.__get__(exe), _rebuild)
        return self._prepare(feeds, needed, self._slow, entry)

    def _slow(self, scope: Scope, feed: dict) -> list:
        """The generic call, as the prepared call returns it (a list of NumPy arrays)."""
        return [r if type(r) is np.ndarray else np.asarray(r) for r in self(scope, feed)]


class _RunEntry:
    """What ``prepared_call(..., entry=)`` generates in front: the checks (over ``run``'s
    arguments and the names in ``ns``), the Executor's own ``run``, the Tensor maker."""

    def __init__(self, checks: list[str], ns: dict, generic: Any, rebuild: Any):
        self.checks, self.ns, self.generic, self.rebuild = checks, ns, generic, rebuild


def _on(backend, value: Any) -> Any:
    """``value`` as an array of ``backend``: Python data and NumPy arrays moved there, another
    backend's arrays (a tensor made on the GPU for a CPU executor) through the host."""
    if type(value) in backend.array_types:
        return value
    if not isinstance(value, (np.ndarray, np.generic, list, tuple, bool, int, float, complex)):
        owner = backends.backend_of(value)
        if owner is not backend:
            value = owner.to_numpy(value)
    return backend.from_numpy(np.asarray(value))


def _fits(shape: tuple, want: tuple) -> bool:
    return len(shape) == len(want) and all(w == -1 or w == s for w, s in zip(want, shape))


def _feed_value(name: str, var: Variable, value: Any, backend):
    arr = _on(backend, value._data if isinstance(value, Tensor) else value)
    if dtypes.convert_dtype(arr.dtype) != var.dtype:
        arr = backend.ns.astype(arr, backend.to_dtype(var.dtype))
    if not _fits(tuple(arr.shape), var._shape):
        raise OpError(
            "Executor.run",
            f"feed {name!r} has shape {list(arr.shape)}, but the "
            f"variable was declared with shape {list(var._shape)} (-1 = any)",
            user_location(),
        )
    return arr


def _data_names(program: Program) -> list[str]:
    return [v.name for v in program.global_block().vars.values() if v.is_data]

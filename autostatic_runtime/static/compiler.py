"""Block compilation: turn a Block into one Python function over backend kernels.

``PythonCodegen`` (the reference compiler) writes straight-line Python source for a block:
one line per op calling the op's kernel (attributes bound ahead of time), locals for every
variable, scope loads and stores only for persistable variables, and ``if``/``while``
statements for control-flow ops. The source is compiled once per program version and cached
by the Executor. Another compiler (whole-block Numba, fused CuPy kernels) can take its
place by implementing ``BlockCompiler.compile``.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Callable, Protocol

from autostatic_runtime.errors import ExecutionError
from autostatic_runtime.ops.registry import OPS
from autostatic_runtime.static.program import Block, Literal, Variable

_ids = itertools.count()
META_ATTRS = frozenset({"op_role", "side_effect"})  # op bookkeeping, not kernel arguments


class BlockCompiler(Protocol):
    """Compiles a block into ``fn(scope, *params) -> tuple(results)``."""

    def compile(self, block: Block, params: list[str], results: list[str],
                backend: Any) -> Callable: ...


class UninitializedError(ExecutionError):
    pass


class CodeWriter:
    """Accumulates the source and the constants one compiled block needs."""

    def __init__(self, block: Block, backend: Any, compiler: PythonCodegen):
        self.block = block
        self.backend = backend
        self.compiler = compiler
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self.names: dict[str, str] = {}
        self.assigned: set[str] = set()
        self.indent = 2

    def local(self, name: str) -> str:
        """The Python identifier holding variable ``name``."""
        found = self.names.get(name)
        if found is None:
            found = self.names[name] = f"v{len(self.names)}"
        return found

    def const(self, value: Any, prefix: str = "c") -> str:
        key = f"{prefix}{len(self.consts)}"
        self.consts[key] = value
        return key

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def read(self, operand: Any) -> str:
        """An expression for an op input, loading persistables from the scope on first use."""
        if isinstance(operand, Literal):
            return self.const(operand.value, "L")
        name = operand.name
        if name not in self.assigned:
            self.assigned.add(name)
            var = self.block.var(name)
            if var.persistable:
                self.emit(f"{self.local(name)} = _load(scope, {name!r})")
            else:
                raise ExecutionError(
                    "compile", None, KeyError(f"variable {name!r} is used before any op "
                                              "computes it (is it fed?)"))
        return self.local(name)

    def write(self, var: Variable) -> str:
        self.assigned.add(var.name)
        return self.local(var.name)

    def store_persistables(self, outputs: list[Variable]) -> None:
        for v in outputs:
            if v.persistable:
                self.emit(f"scope[{v.name!r}] = {self.local(v.name)}")


class PythonCodegen:
    """The reference block compiler: generated straight-line Python."""

    def __init__(self) -> None:
        self.emitters: dict[str, Callable] = {}

    def compile(self, block: Block, params: list[str], results: list[str],
                backend: Any) -> Callable:
        from autostatic_runtime.static.control_flow import CONTROL_FLOW_OPS

        w = CodeWriter(block, backend, self)
        args = [w.local(p) for p in params]
        w.assigned.update(params)
        ops = prune(block, results)
        w.consts["_ops"] = ops
        for i, op in enumerate(ops):
            w.emit(f"_i = {i}")
            emitter = CONTROL_FLOW_OPS.get(op.type)
            if emitter is not None:
                emitter(w, op)
            else:
                self._emit_kernel(w, op)
            w.store_persistables(op.outputs)
        returns = ", ".join(w.read(block.var(r)) if r not in w.assigned else w.local(r)
                            for r in results)
        name = f"block{block.idx}_{next(_ids)}"
        src = [f"def {name}(scope{''.join(', ' + a for a in args)}):", "    _i = -1", "    try:"]
        src += w.lines or ["        pass"]
        src += ["    except _ExecutionError:",
                "        raise",
                "    except Exception as exc:",
                "        raise _fail(_ops, _i, exc) from exc",
                f"    return ({returns}{',' if len(results) == 1 else ''})"]
        source = "\n".join(src)
        namespace = {"_load": _load, "_fail": _fail, "_bool": _to_bool,
                     "_ExecutionError": ExecutionError, **w.consts}
        code = compile(source, f"<autostatic block {block.idx}>", "exec")
        exec(code, namespace)  # noqa: S102  (our own generated source)
        fn = namespace[name]
        fn.__source__ = source
        return fn

    def _emit_kernel(self, w: CodeWriter, op) -> None:
        opdef = OPS[op.type]
        args = [w.read(x) for x in op.inputs]
        attrs = {k: v for k, v in op.attrs.items() if k not in META_ATTRS}
        kernel = functools.partial(opdef.kernel, w.backend.xp, **attrs)
        k = w.const(kernel, "K")
        outs = [w.write(v) for v in op.outputs]
        if opdef.multi_output:
            target = ", ".join(outs) + ("," if len(outs) == 1 else "")
        else:
            target = outs[0]
        w.emit(f"{target} = {k}({', '.join(args)})")


def prune(block: Block, results: list[str]) -> list:
    """The ops needed for ``results`` plus every op that writes a persistable variable."""
    needed = set(results)
    kept = []
    for op in reversed(block.ops):
        writes = {v.name for v in op.outputs}
        persistent = any(v.persistable for v in op.outputs)
        if persistent or writes & needed or op.attrs.get("side_effect"):
            kept.append(op)
            needed |= {x.name for x in op.inputs if isinstance(x, Variable)}
    kept.reverse()
    return kept


def _load(scope: dict, name: str):
    try:
        return scope[name]
    except KeyError:
        raise UninitializedError(
            "load", None, KeyError(f"persistable variable {name!r} has no value in the scope; "
                                   "run the startup program first (exe.run(startup_program))")
        ) from None


def _to_bool(value) -> bool:
    return bool(value)


def _fail(ops: list, i: int, exc: BaseException) -> BaseException:
    if i < 0:
        return exc
    op = ops[i]
    return ExecutionError(op.type, op.location, exc)

"""Block compilation: turn a Block into one Python function over backend kernels.

``PythonCodegen`` (the reference compiler) writes straight-line Python source for a block:
one line per op calling the op's kernel (attributes bound ahead of time), a local variable
for every program variable, scope loads and stores only for persistable variables, and the
sub-blocks of ``cond``/``while`` inlined as Python ``if``/``while`` statements (so a loop
iteration costs no function call). The source is compiled once per program version and
cached by the Executor; ``fn.__source__`` shows it.

Another compiler can take its place by implementing ``BlockCompiler.compile``:
``static/xla`` lowers a whole block to one ``jax.jit`` computation. ``get_compiler`` resolves
the names ``"python"`` (this one) and ``"xla"``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any, Protocol

from autostatic_runtime.errors import (
    DeviceError,
    ExecutionError,
    is_raised_again,
    op_failure,
    user_location,
)
from autostatic_runtime.ops.registry import OPS
from autostatic_runtime.static.block_plan import BlockPlan
from autostatic_runtime.static.program import Block, Literal, Variable

_ids = itertools.count()
META_ATTRS = frozenset({"op_role", "side_effect"})  # op bookkeeping, not kernel arguments


class BlockCompiler(Protocol):
    """Compiles a block into ``fn(scope, *params) -> tuple(results)``.

    A caller that passes results from index ``k`` on only back into functions of the same
    compiler (a training forward's saved values) may set ``fn.device_results_from = k``; a
    compiler with its own device (XLA) then leaves them there. A function may also offer
    ``fn.prepare(feeds, needed, slow)`` (the Executor's prepared call) and ``fn.lean()``
    (its steady-state call, for ``run_program``); both return None until they apply.
    """

    def compile(
        self, block: Block, params: list[str], results: list[str], backend: Any
    ) -> Callable: ...


COMPILERS = ("python", "xla")


def get_compiler(compiler: Any = None) -> Any:
    """A BlockCompiler from a name (``"python"``, the default, or ``"xla"``) or an instance."""
    if compiler is None or compiler == "python":
        return PythonCodegen()
    if compiler == "xla":
        from autostatic_runtime.backends.jax_backend import JaxBackend

        if not JaxBackend.available():
            raise DeviceError(
                "xla",
                "the XLA block compiler needs JAX, which is not installed here: "
                "pip install 'autostatic[xla]'",
                user_location(),
            )
        from autostatic_runtime.static.xla import XlaCompiler

        return XlaCompiler()
    if isinstance(compiler, str):
        raise ValueError(f"no block compiler {compiler!r}; known: {', '.join(COMPILERS)}")
    return compiler


class UninitializedError(ExecutionError):
    pass


class CodeWriter:
    """Accumulates the source, constants and op table of one compiled function."""

    def __init__(self, backend: Any):
        self.backend = backend
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self.names: dict[str, str] = {}
        self.assigned: set[str] = set()
        self.ops: list = []
        self.indent = 2
        self.block: Block | None = None
        self.params: set[str] = set()  # the function's parameters: the caller's arrays
        # what is known of the function's own block (``block_plan``): removed ops' outputs ->
        # the kept ones', names an op may hold a view of, the names the op being emitted
        # reads last
        self.alias: dict[str, str] = {}
        self.viewed: set[str] = set()
        self.dead: Any = ()
        self.fresh_names: set[str] = set()  # arrays an op made here, which nothing else sees
        self.args: dict[int, list[str]] = {}  # op index -> its kernel's input expressions
        self.memo = False  # whether a kernel takes the call's memo (``OpDef.memo``)

    def local(self, name: str) -> str:
        """The Python identifier holding variable ``name``."""
        found = self.names.get(name)
        if found is None:
            found = self.names[name] = f"v{len(self.names)}"
        return found

    def fresh(self, prefix: str) -> str:
        return f"_{prefix}{len(self.consts) + len(self.names)}_{next(_ids)}"

    def const(self, value: Any, prefix: str = "c") -> str:
        key = f"{prefix}{len(self.consts)}"
        self.consts[key] = value
        return key

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def read(self, operand: Any) -> str:
        """An expression for an op input, loading persistables from the scope on first use."""
        if isinstance(operand, Literal):
            value = operand.value
            if (
                value is None
                or isinstance(value, (bool, int))
                or (isinstance(value, float) and math.isfinite(value))
            ):
                return repr(value)
            return self.const(value, "L")
        name = self.alias.get(operand.name, operand.name)
        if name not in self.assigned:
            var = self.block.var(name) if self.block is not None else operand
            if not var.persistable:
                raise ExecutionError(
                    "compile",
                    None,
                    KeyError(f"variable {name!r} is used before any op computes it (is it fed?)"),
                )
            self.emit(f"{self.local(name)} = _load(scope, {name!r})")
            self.assigned.add(name)
        return self.local(name)

    def write(self, var: Variable) -> str:
        self.assigned.add(var.name)
        return self.local(var.name)

    def assign(self, targets: list[str], values: list[str]) -> None:
        """``t0, t1 = e0, e1`` (nothing for no targets)."""
        if targets:
            comma = "," if len(targets) == 1 else ""
            self.emit(f"{', '.join(targets)}{comma} = {', '.join(values)}{comma}")

    def emit_block(self, block: Block, results: list[str]) -> list[str]:
        """Emit ``block``'s ops (pruned to ``results``) here; return the result expressions.

        Names a branch or loop body assigns stay unknown to the code after it, so later
        persistable reads still load from the scope.
        """
        from autostatic_runtime.static.control_flow import CONTROL_FLOW_OPS

        saved_block, self.block = self.block, block
        top = self.indent == 2 and saved_block is None  # the function's own block
        try:
            ops = prune(block, results)
            dead: dict = {}
            if top:
                plan = BlockPlan(ops, results)
                ops, dead, self.alias, self.viewed = plan.ops, plan.dead, plan.alias, plan.viewed
            for i, op in enumerate(ops):
                self.dead = dead.get(i, ())
                self.emit(f"_i = {len(self.ops)}")
                self.ops.append(op)
                emitter = CONTROL_FLOW_OPS.get(op.type)
                if emitter is not None:
                    emitter(self, op)
                else:
                    self._emit_kernel(op)
                for v in op.outputs:
                    if v.persistable:
                        self.emit(f"scope[{v.name!r}] = {self.local(v.name)}")
                gone = [self.local(n) for n in dead.get(i, ()) if n in self.assigned]
                if gone:  # free arrays nothing reads any more: a smaller, reused footprint
                    self.emit(f"del {', '.join(gone)}")
                    self.assigned.difference_update(dead[i])
            return [self.read(block.var(r)) for r in results]
        finally:
            self.block = saved_block
            if top:
                self.viewed, self.dead = set(), ()

    def _canon(self, x: Any) -> str | None:
        return self.alias.get(x.name, x.name) if isinstance(x, Variable) else None

    def _reusable(self, op) -> int | None:
        """Which operand of the elementwise ``op`` may hold its result in place: an array an
        op of this function made new (``fresh``), dead after this op, that no op read which
        could have kept a view of it, of the result's static shape and dtype; None for none. The
        first operand for any of the four ops, the second too for ``+`` and ``*``
        (commutative in IEEE arithmetic: the same values)."""
        if op.type not in _IN_PLACE or self.indent != 2:
            return None
        out = op.outputs[0]
        if any(d < 0 for d in out._shape):
            return None
        order = (0, 1) if op.type in _COMMUTATIVE else (0,)
        names = [self._canon(x) for x in op.inputs]
        for i in order:
            x, name = op.inputs[i], names[i]
            if (
                name is not None
                and name in self.fresh_names
                and name in self.dead
                and name not in self.viewed
                and tuple(x._shape) == tuple(out._shape)
                and x.dtype == out.dtype
                and names.count(name) == 1
            ):
                return i
        return None

    def _made_here(self, x: Any) -> bool:
        """Whether ``x`` is a value an op of this function computed (not a feed, not a
        persistable: arrays the caller or the scope may also hold)."""
        if not isinstance(x, Variable):
            return False
        name = self.alias.get(x.name, x.name)
        if name not in self.assigned or name in self.params:
            return False
        if self.block is None or self.block.idx != 0 or self.indent != 2:
            return False  # a branch or loop body: its values may be the caller's arrays
        var = self.block.var(name)
        return not (var.persistable or var.is_data)

    def scoped(self):
        """Context for a nested branch: names assigned inside are forgotten after it."""
        writer = self

        class _Scope:
            def __enter__(self):
                self.saved = set(writer.assigned)
                writer.indent += 1

            def __exit__(self, *exc):
                writer.assigned = self.saved
                writer.indent -= 1

        return _Scope()

    def _emit_kernel(self, op) -> None:
        opdef = OPS[op.type]
        args = [self.read(x) for x in op.inputs]
        self.args[len(self.ops) - 1] = args  # (read again only when the kernel fails)
        if op.type == "assign" and self._made_here(op.inputs[0]):
            # generated code never changes an array in place, so a value computed here
            # needs no copy (an optimizer's new parameter or moment written to the scope)
            self.emit(f"{self.write(op.outputs[0])} = {args[0]}")
            return
        attrs = {k: v for k, v in op.attrs.items() if k not in META_ATTRS}
        if opdef.expr is not None and not attrs:
            into = self._reusable(op)
            if into is not None:  # the result goes into a dead operand's array
                other = args[1 - into] if op.type in _COMMUTATIVE else args[1]
                self.emit(f"{args[into]} {_IN_PLACE[op.type]}= {other}")
                self.emit(f"{self.write(op.outputs[0])} = {args[into]}")
                self.fresh_names.add(op.outputs[0].name)
                return
            inline = {n: f"({a})" if a.startswith("-") else a for n, a in zip(opdef.inputs, args)}
            self.emit(f"{self.write(op.outputs[0])} = {opdef.expr.format(**inline)}")
            if opdef.fresh:
                self.fresh_names.add(op.outputs[0].name)
            return
        kernel = (
            functools.partial(opdef.kernel, self.backend.xp, **attrs)
            if attrs
            else functools.partial(opdef.kernel, self.backend.xp)
        )
        k = self.const(kernel, "K")
        outs = [self.write(v) for v in op.outputs]
        if not outs:  # an op run for its side effect only (assert)
            self.emit(f"{k}({', '.join(args)})")
            return
        if opdef.memo and self.indent == 2:  # (a branch or loop body keeps no memo)
            self.memo = True
            args = args + ["memo=_memo"]
        target = ", ".join(outs) + ("," if opdef.multi_output and len(outs) == 1 else "")
        self.emit(f"{target} = {k}({', '.join(args)})")
        if opdef.fresh:
            self.fresh_names.add(op.outputs[0].name)


class PythonCodegen:
    """The reference block compiler: generated straight-line Python."""

    def compile(
        self, block: Block, params: list[str], results: list[str], backend: Any
    ) -> Callable:
        w = CodeWriter(backend)
        args = [w.local(p) for p in params]
        w.assigned.update(params)
        w.params.update(params)
        returns = w.emit_block(block, results)
        name = f"block{block.idx}_{next(_ids)}"
        src = [f"def {name}(scope{''.join(', ' + a for a in args)}):", "    _i = -1", "    try:"]
        if w.memo:
            src.append("        _memo = {}")
        src += w.lines or ["        pass"]
        src += [
            "    except _ExecutionError:",
            "        raise",
            "    except Exception as exc:",
            "        raise _fail(_ops, _i, exc, _args) from exc",
            f"    return ({', '.join(returns)}{',' if len(returns) == 1 else ''})",
        ]
        source = "\n".join(src)
        namespace = {
            "_load": _load,
            "_fail": _fail,
            "_bool": bool,
            "_ops": w.ops,
            "_args": w.args,
            "xp": backend.xp,
            "_ExecutionError": ExecutionError,
            **w.consts,
        }
        exec(compile(source, f"<autostatic block {block.idx}>", "exec"), namespace)  # noqa: S102
        fn = namespace[name]
        fn.__source__ = source
        return fn


# elementwise ops whose result may be computed into a dead operand (``x op= y``), and those
# among them whose operands may be swapped
_IN_PLACE = {"elementwise_add": "+", "elementwise_sub": "-", "elementwise_mul": "*",
             "elementwise_div": "/"}  # fmt: skip
_COMMUTATIVE = frozenset({"elementwise_add", "elementwise_mul"})


def prune(block: Block, results: list[str]) -> list:
    """The ops needed for ``results`` plus every op that writes a persistable variable or has
    a side effect (``print``/``assert``, or a ``cond``/``while`` holding one)."""
    needed = set(results)
    kept = []
    for op in reversed(block.ops):
        writes = {v.name for v in op.outputs}
        persistent = any(v.persistable for v in op.outputs)
        if persistent or writes & needed or has_side_effect(op):
            kept.append(op)
            needed |= {x.name for x in op.inputs if isinstance(x, Variable)}
    kept.reverse()
    return kept


def has_side_effect(op) -> bool:
    """True for an op marked ``side_effect`` or owning a sub-block with such an op (unless
    marked ``side_effect=False``, as the gradient's replay of a forward op is)."""
    flag = op.attrs.get("side_effect")
    if flag is not None:
        return bool(flag)
    return any(has_side_effect(inner) for sub in op.sub_blocks() for inner in sub.ops)


def _load(scope: dict, name: str):
    try:
        return scope[name]
    except KeyError:
        raise UninitializedError(
            "load",
            None,
            KeyError(
                f"persistable variable {name!r} has no value in the scope; "
                "run the startup program first (exe.run(startup_program))"
            ),
        ) from None


def _fail(ops: list, i: int, exc: BaseException, args: dict | None = None) -> BaseException:
    """What the program raises for ``exc``, raised while op ``i`` ran: the error eager mode
    raises for that op, at the user's line that built it (``op_failure``). A kernel's own
    failure is explained as eager mode explains it, from the op's inference on the values
    it was given (``ShapeError: elementwise_add: shapes [3] and [4] cannot be broadcast``
    where NumPy said "operands could not be broadcast")."""
    if i < 0:
        return exc
    op = ops[i]
    if (
        args is not None
        and i in args
        and type(exc).__module__ == "builtins"  # (not an op's own error, nor the program's)
        and not getattr(exc, "autostatic_python", False)  # (a Python list's IndexError)
        and not is_raised_again(exc)  # (the user's own exception)
    ):
        explained = _as_eager(op, args[i], exc)
        if explained is not None:
            exc = explained
    return op_failure(op.type, op.location, exc)


def _as_eager(op, args: list[str], exc: BaseException) -> BaseException | None:
    """The error eager mode raises when ``op``'s kernel fails with ``exc`` on the values its
    input expressions ``args`` held in the failed function's frame (None if unknown)."""
    from autostatic_runtime.dispatch import _explain
    from autostatic_runtime.tensor import Tensor

    frame, tb = None, exc.__traceback__
    while tb is not None:  # the innermost generated frame: the one that called the kernel
        if tb.tb_frame.f_code.co_filename.startswith("<autostatic block"):
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return None
    try:
        values = [eval(a, frame.f_globals, frame.f_locals) for a in args]  # noqa: S307 (ours)
    except Exception:  # noqa: BLE001 - a value gone: the generic form
        return None
    inputs = [
        v if v is None or isinstance(v, (bool, int, float)) else Tensor._rebuild(v, None, 0)
        for v in values
    ]
    attrs = {k: v for k, v in op.attrs.items() if k not in META_ATTRS}
    try:
        return _explain(OPS[op.type], inputs, attrs, exc)
    except Exception:  # noqa: BLE001 - an explanation that fails: the generic form
        return None

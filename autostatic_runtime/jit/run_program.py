"""``run_program``: a traced forward program run as ONE eager op that joins the autograd tape.

A ``ProgramRunner`` holds a forward Program (block 0), its input and output variables and the
eager tensors standing behind its persistable variables (a layer's parameters and buffers).
Calling it with eager inputs:

- when no gradient is needed, runs the compiled forward block and returns plain Tensors;
- otherwise runs a *training* forward that also returns the values the backward needs, and
  records one tape ``Node`` whose gradient rule runs the compiled backward block.

The backward lives in a clone of the program: ``backward_block`` appends the gradient ops of
block 0 to a new child block 1 (gradients through ``cond``/``while`` included), so the two
compiled functions share variable names and nothing is recomputed. One clone is built per
set of inputs that need gradients (frozen parameters and data inputs cost nothing).

With a compiler for which one computation is cheaper than two (``fuse_training``: XLA), a
program whose one differentiable output is a scalar (a loss) and that writes no persistable
is run as a *fused step* once ``FUSE_AFTER`` forwards in a row were followed by their
``backward()`` with a seed of one: the forward also computes the gradients (the gradient ops
appended to block 0 of another clone, seeded with ones), which the Node keeps as device
arrays and its backward hands out as host arrays (read-only views for parameters, which
autograd adds into ``.grad`` or copies; the caller's own copies for inputs). A backward
with another seed runs the split forward again on the Node's inputs, then the split
backward (so the fused step is only for programs without random ops); a forward without a
backward switches back to the split forward until backwards follow again.

Persistable variables the program writes (batch-norm running statistics) are copied back
into their eager tensors after each run, as an eager forward would have updated them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from autostatic_runtime import autograd, backends
from autostatic_runtime.static.program import Program, Variable
from autostatic_runtime.tensor import Tensor

__all__ = ["ProgramRunner"]

_rebuild = Tensor._rebuild
_by_array_type = backends._by_array_type
_recording = autograd.is_grad_enabled


class _RunProgramOp:
    """What a tape Node needs of an op: a name, a gradient rule and the output flags."""

    multi_output = True

    def __init__(self, train: _TrainProgram, nondiff: frozenset):
        self.name = "run_program"
        self.train = train
        self.nondiff_outputs = nondiff

    def grad(self, gs, outs, *ins, saved=()):
        return self.train.backward(gs, ins, saved)


class ProgramRunner:
    """Runs ``program`` as one eager op.

    Args:
        program: the forward program (its block 0 computes ``outputs`` from ``inputs``).
        inputs: names of the data variables, in call order.
        outputs: names of the output variables (repeats allowed).
        params: persistable variable name -> the eager Tensor holding its value.
        compiler: the block compiler (a name, ``"python"`` by default or ``"xla"``, or a
            ``BlockCompiler``); it compiles the forward and, for training, the backward.
        records: whether a call that needs gradients is recorded on the tape; False for a
            compiled training step, which ran its backward and update itself.
    """

    def __init__(
        self,
        program: Program,
        inputs: Sequence[str],
        outputs: Sequence[str],
        params: dict[str, Tensor],
        compiler: Any = None,
        records: bool = True,
    ):
        from autostatic_runtime.static.compiler import get_compiler

        self.program = program
        self.compiler = get_compiler(compiler)
        block = program.global_block()
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.param_names = list(params)
        self.param_tensors = list(params.values())
        self.written = sorted(_written_persistables(program) & set(params))
        out_vars = [block.var(n) for n in self.outputs]
        self.diff_outputs = tuple(not v.stop_gradient and v.dtype.is_floating for v in out_vars)
        self._float_inputs = tuple(block.var(n).dtype.is_floating for n in self.inputs)
        self._infer: dict[str, Any] = {}
        self._fast: dict[str, Any] = {}  # backend name -> the inference call in steady state
        self._train: dict[tuple, _TrainProgram] = {}
        self.records = records
        self._written_pairs: list | None = None  # (name, tensor) of ``written``
        self._state_calls: dict[str, Any] = {}  # backend name -> a step's state call

    # -- running -------------------------------------------------------------------------------
    def __call__(self, inputs: Sequence[Any]) -> list[Tensor]:
        arrays = [t._data if isinstance(t, Tensor) else t for t in inputs]
        backend = _by_array_type.get(type(arrays[0])) if arrays else None
        if backend is None:
            backend = backends.backend_of(arrays[0]) if arrays else backends.current_backend()
        params = self.param_tensors
        if not self.records:
            return self._run_step(backend, arrays)
        if _recording() and (
            not all([t.stop_gradient for t in params])
            or not all([t.stop_gradient for t in inputs if isinstance(t, Tensor)])
        ):
            mask = self._mask(inputs)
            if mask is not None:
                return self._run_training(mask, backend, inputs, arrays)
        scope = dict(zip(self.param_names, [t._data for t in params])) if params else {}
        fn = self._fast.get(backend.name)
        if fn is not None:
            outs = fn(scope, *arrays)
        else:
            fn = self._infer.get(backend.name) or self.prepare(backend)
            outs = fn(scope, *arrays)
            self._fast_call(backend.name, fn)
        if self.written:
            self._write_back(scope)
        return [_rebuild(o, None, 0) for o in outs]

    def _run_step(self, backend: Any, arrays: list) -> list[Tensor]:
        """A compiled training step: the compiled function's state call when it has one
        (XLA: the state stays on the device, donated), else the generic call; the written
        persistables go back into their tensors either way. Not recorded on the tape."""
        call = self._state_calls.get(backend.name)
        if call is not None:
            outs = call(arrays)
            if outs is not None:
                return [_rebuild(o, None, 0) for o in outs]
        params = self.param_tensors
        scope = dict(zip(self.param_names, [t._data for t in params])) if params else {}
        fn = self._infer.get(backend.name) or self.prepare(backend)
        outs = fn(scope, *arrays)
        if self.written:
            self._write_back(scope)
        if call is None:
            self._make_state_call(backend.name, fn)
        return [_rebuild(o, None, 0) for o in outs]

    def _make_state_call(self, name: str, fn: Any) -> None:
        make = getattr(fn, "state_call", None)
        if make is None:
            return
        held = dict(zip(self.param_names, self.param_tensors))
        if not all(n in held for n in fn.reads + fn.writes):
            return
        made = make([held[n] for n in fn.reads], [held[n] for n in fn.writes])
        if made is not None:
            self._state_calls[name] = made

    def _mask(self, inputs: Sequence[Any]) -> tuple | None:
        """Which inputs and parameters need a gradient (None: none do)."""
        need = [
            isinstance(t, Tensor) and not t.stop_gradient and f
            for t, f in zip(inputs, self._float_inputs)
        ]
        need += [not t.stop_gradient for t in self.param_tensors]
        return tuple(need) if any(need) else None

    def _run_training(self, mask: tuple, backend: Any, inputs: Sequence[Any], arrays: list):
        """The training forward for ``mask``, recorded on the tape as one op."""
        params = self.param_tensors
        scope = {name: t._data for name, t in zip(self.param_names, params)}
        train = self._train.get(mask)
        if train is None:
            train = self._train[mask] = _TrainProgram(self, mask)
        outs, saved = train.forward(backend, scope, arrays)
        self._write_back(scope)
        edges = [_edge(t) for t in inputs] + [_edge(t) for t in params]
        node = autograd.Node(
            train.op,
            {"saved": saved},
            tuple(arrays) + tuple(t._data for t in params),
            tuple(edges),
            tuple(outs),
        )
        return [
            _rebuild(o, node if d else None, i)
            for i, (o, d) in enumerate(zip(outs, self.diff_outputs))
        ]

    def _fast_call(self, name: str, fn: Any) -> None:
        """Call ``fn``'s steady-state form from now on: an XLA function's lean call once it
        has one (``XlaFunction.lean``), any other compiled function as it is."""
        lean = getattr(fn, "lean", None)
        if lean is None:
            self._fast[name] = fn
            return
        fast = lean()
        if fast is not None:
            self._fast[name] = fast

    def tensor_call(self, inputs: list, guard: Any, finish: Any, miss: Any) -> Any:
        """A call of the inference program on eager Tensors of exactly ``inputs`` ((dtype,
        shape) each, NumPy), generated by the compiled function in its steady state (XLA's
        ``tensor_call``): ``call(args) -> result or miss``. None while it has none yet;
        False when it never will (another compiler, a program that writes persistables).
        ``guard`` and ``finish``: see ``static.xla.prepared.tensor_call``."""
        if self.written or not inputs:
            return False
        fn = self._infer.get("numpy")
        if fn is None:
            return None
        make = getattr(fn, "tensor_call", None)
        if make is None or getattr(fn, "fallback", None) is not None:
            return False
        return make(inputs, list(zip(self.param_names, self.param_tensors)), guard, finish, miss)

    def prepare(self, backend: Any = None) -> Any:
        """Compile the inference function for ``backend`` (the current one by default)."""
        backend = backend or backends.current_backend()
        fn = self._infer.get(backend.name)
        if fn is None:
            fn = self._infer[backend.name] = self.compiler.compile(
                self.program.global_block(), list(self.inputs), list(self.outputs), backend
            )
            if not self.records and hasattr(fn, "keep_state"):
                fn.keep_state()  # a training step: its state stays where it runs
        return fn

    def _write_back(self, scope: dict) -> None:
        pairs = self._written_pairs
        if pairs is None:
            held = dict(zip(self.param_names, self.param_tensors))
            pairs = self._written_pairs = [(n, held[n]) for n in self.written]
        for name, t in pairs:
            t._data = scope[name]


def _edge(t: Any):
    if not isinstance(t, Tensor) or t.stop_gradient:
        return None
    return t if t._node is None else (t._node, t._index)


def compiled_functions(runner: ProgramRunner) -> list:
    """Every function ``runner`` has compiled so far (forward, training forward, backward)."""
    found = list(runner._infer.values())
    for train in runner._train.values():
        found += list(train._fwd.values()) + list(train._bwd.values())
        found += [fn for fn in train._fused.values() if fn is not None]
    return found


class _TrainProgram:
    """The forward + backward of one runner for one mask of inputs needing gradients."""

    def __init__(self, runner: ProgramRunner, mask: tuple):
        from autostatic_runtime.static.backward import backward_block, op_role
        from autostatic_runtime.static.builder import program_guard, static_guard

        self.runner = runner
        program, names = _differentiable_clone(runner, mask)
        block0 = program.global_block()
        with program_guard(program), static_guard(), op_role("backward"):
            gb = program._create_block(parent_idx=0)
            try:
                seeds: dict[str, Variable] = {}
                self.seed_names = []
                for name, diff in zip(runner.outputs, runner.diff_outputs):
                    if not diff:
                        continue
                    v = block0.var(name)
                    s = gb.create_var(program.unique_name("out_grad"), v._shape, v.dtype)
                    self.seed_names.append(s.name)
                    prev = seeds.get(name)
                    seeds[name] = s if prev is None else prev + s
                grads = backward_block(block0, seeds)
            finally:
                program.current_block_idx = 0
        self.grad_names = [
            grads[n].name if need and n in grads else None for n, need in zip(names, mask)
        ]
        defined = set(gb.vars)
        saved: dict[str, None] = {}
        for op in gb.ops:
            for x in op.inputs:
                if isinstance(x, Variable) and x.name not in defined:
                    var = block0.var(x.name)
                    if not var.persistable:
                        saved[x.name] = None
        self.saved_names = list(saved)
        self.program = program
        self.block1 = gb
        self.op = _RunProgramOp(
            self, frozenset(i for i, d in enumerate(runner.diff_outputs) if not d)
        )
        self._fwd: dict[str, Any] = {}
        self._bwd: dict[str, Any] = {}
        # the fused step (forward + gradients for a seed of one, one compiled function) for a
        # single scalar differentiable output, a compiler that asks for it and a program that
        # writes no persistable; used after FUSE_AFTER steps whose backward followed
        self.mask = mask
        diff = [n for n, d in zip(runner.outputs, runner.diff_outputs) if d]
        self._fusable = (
            getattr(runner.compiler, "fuse_training", False)
            and len(diff) == 1
            and tuple(block0.var(diff[0])._shape) == ()
            and not runner.written
        )
        self._fused: dict[str, Any] = {}  # backend name -> fused function (None: not used)
        self._streak = 0  # steps in a row whose backward followed with a seed of one
        self._last: _Step | None = None

    def forward(self, backend, scope: dict, arrays: list) -> tuple:
        """``(outputs, saved)``: the outputs for the caller and what the tape Node keeps for
        the backward (a ``_Step``, then the saved values or the precomputed gradients)."""
        last = self._last
        if last is not None and not last.used:
            self._streak = 0  # a step without a backward: compute no gradients ahead
        step = self._last = _Step()
        n = len(self.runner.outputs)
        if self._streak >= FUSE_AFTER and self._fusable:
            fused = self._fused_fn(backend)
            if fused is not None:
                results = fused(scope, *arrays)
                return results[:n], (step, _Precomputed(fused, results[n:]))
        results = self._forward_fn(backend)(scope, *arrays)
        return results[:n], (step, *results[n:])

    def _forward_fn(self, backend) -> Any:
        fn = self._fwd.get(backend.name)
        if fn is None:  # compile both halves now, so a bad program fails in the forward call
            fn = self._fwd[backend.name] = self.runner.compiler.compile(
                self.program.global_block(),
                list(self.runner.inputs),
                self.runner.outputs + self.saved_names,
                backend,
            )
            fn.device_results_from = len(self.runner.outputs)  # saved: only for the backward
            self._backward_fn(backend)
        return fn

    def _fused_fn(self, backend) -> Any:
        """The fused step for ``backend``, compiled on first use; None when the split
        forward draws random numbers or fell back (a backward with another seed must be
        able to run the forward again and get the same values)."""
        name = backend.name
        if name in self._fused:
            return self._fused[name]
        split = self._fwd.get(name)
        if split is None or getattr(split, "fallback", None) is not None or split.random:
            self._fused[name] = None
            return None
        program, grads = _fused_program(self.runner, self.mask)
        fn = self.runner.compiler.compile(
            program.global_block(),
            list(self.runner.inputs),
            self.runner.outputs + grads,
            backend,
        )
        fn.device_results_from = len(self.runner.outputs)  # the gradients wait for backward
        self._fused[name] = fn
        return fn

    def _backward_fn(self, backend) -> Any:
        fn = self._bwd.get(backend.name)
        if fn is None:
            wanted = [n for n in self.grad_names if n is not None]
            fn = self._bwd[backend.name] = self.runner.compiler.compile(
                self.block1, self.saved_names + self.seed_names, wanted, backend
            )
        return fn

    def backward(self, gs, ins, saved) -> tuple:
        runner = self.runner
        step, *saved = saved
        step.used = True
        n_in = len(runner.inputs)
        params = ins[n_in:]
        scope = {name: t._data for name, t in zip(runner.param_names, params)}
        seeds = [g._data for g, d in zip(gs, runner.diff_outputs) if d]
        one = len(seeds) == 1 and _is_one(seeds[0])
        self._streak = self._streak + 1 if one else 0
        first = seeds[0] if seeds else (saved[0] if saved else None)
        backend = backends.backend_of(first) if first is not None else backends.current_backend()
        if saved and type(saved[0]) is _Precomputed:
            if one:  # what the fused step computed
                return self._gradients(self._handout(saved[0]))
            # another seed: the split forward again on the same values, then its backward
            arrays = [t._data for t in ins[:n_in]]
            forward = self._forward_fn(backend)
            saved = forward(dict(scope), *arrays)[len(runner.outputs) :]
        return self._gradients(self._backward_fn(backend)(scope, *saved, *seeds))

    def _handout(self, pre: _Precomputed) -> tuple:
        """The fused step's gradients as the caller's own host arrays (one copy each:
        autograd takes a gradient arriving at the zeros ``clear_grad`` left as it is)."""
        return pre.fn.to_host(pre.grads)

    def _gradients(self, results: tuple) -> tuple:
        """One Tensor (or None) per input and parameter, from the computed gradients."""
        found = iter(results)
        return tuple(None if n is None else _rebuild(next(found), None, 0) for n in self.grad_names)


FUSE_AFTER = 2  # steps in a row with a backward (seed one) before the fused step is used


class _Step:
    """One training forward, marked when its backward runs."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = False


class _Precomputed:
    """The gradients a fused step computed for a seed of one (device arrays of ``fn``)."""

    __slots__ = ("fn", "grads")

    def __init__(self, fn: Any, grads: tuple):
        self.fn, self.grads = fn, grads


def _is_one(seed: Any) -> bool:
    """Whether a scalar output's gradient is exactly one (``loss.backward()``)."""
    try:
        return tuple(seed.shape) == () and float(seed) == 1.0
    except (TypeError, ValueError, AttributeError):
        return False


def _fused_program(runner: ProgramRunner, mask: tuple) -> tuple[Program, list[str]]:
    """A clone of the forward program with the gradients of its one differentiable output
    (seeded with one) appended to block 0: ``(program, gradient names)``, the names of the
    inputs and parameters that need one, in order."""
    from autostatic_runtime.creation import ones_like
    from autostatic_runtime.static.backward import backward_block, op_role
    from autostatic_runtime.static.builder import program_guard, static_guard

    program, names = _differentiable_clone(runner, mask)
    block0 = program.global_block()
    (out,) = [n for n, d in zip(runner.outputs, runner.diff_outputs) if d]
    with program_guard(program), static_guard(), op_role("backward"):
        grads = backward_block(block0, {out: ones_like(block0.var(out))})
    wanted = [grads[n].name for n, need in zip(names, mask) if need and n in grads]
    return program, wanted


def _written_persistables(program: Program) -> set[str]:
    return {v.name for b in program.blocks for op in b.ops for v in op.outputs if v.persistable}


_SUFFIX = re.compile(r"_(\d+)$")


def _differentiable_clone(runner: ProgramRunner, mask: tuple) -> tuple[Program, list[str]]:
    """A clone of the runner's program whose inputs and parameters need gradients where
    ``mask`` says (and they are floating), and their names in ``mask``'s order."""
    program = runner.program.clone()
    program.source_id = runner.program.id  # the same program, for a compiler's reports
    _advance_names(program)
    block0 = program.global_block()
    names = runner.inputs + runner.param_names
    for name, need in zip(names, mask):
        v = block0.var(name)
        v.stop_gradient = not need or not v.dtype.is_floating
    return program, names


def _advance_names(program: Program) -> None:
    """A cloned or loaded program restarts its name counter; move it past every name in use
    so new gradient variables never shadow existing ones."""
    top = -1
    for b in program.blocks:
        for name in b.vars:
            m = _SUFFIX.search(name)
            if m:
                top = max(top, int(m.group(1)))
    program._counter = itertools.count(top + 1)

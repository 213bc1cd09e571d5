"""``assert_equivalent``: the original function, the converted function and the static program
agree on hypothesis-generated inputs.

    from autostatic import InputSpec
    from autostatic.testing import assert_equivalent

    assert_equivalent(model_step, InputSpec([None, 10], "float32", "x"), check_grad=True)

For each example it runs (a) the original function eagerly, (b) the converted function
(``autostatic.convert``) eagerly and (c) the static program (``autostatic.to_static`` with the
specs), and compares every output leaf (nested tuples, lists and dicts): structure, dtype,
shape and values within a dtype-aware tolerance. With ``check_grad`` it also compares the
gradients of a scalar reduction of the outputs with respect to every floating input, eager
autograd (a) against the static program's backward (c). Programs compiled while it runs
report their ``cond``/``while`` decisions (``coverage.BranchCoverage``); a branch no example
took gives a ``BranchCoverageWarning`` naming its line.

On a mismatch hypothesis shrinks the example, and an ``EquivalenceError`` (an
``AssertionError``) reports the example, which of the three disagreed, the largest
difference, and, for the static program, the first op whose value no eager op computed,
with the user's source and the converted code at that op's line.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hsettings

import autostatic_runtime as rt
from autostatic.testing import DEFAULTS
from autostatic.testing.coverage import BranchCoverage
from autostatic.testing.strategies import input_specs_to_strategy
from autostatic_runtime.static.input_spec import InputSpec
from autostatic_runtime.tensor import Tensor

__all__ = ["assert_equivalent", "EquivalenceError", "EquivalenceResult", "tolerance"]

_PROFILES = {
    "dev": {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]},
    "ci": {
        "derandomize": True,
        "deadline": None,
        "print_blob": True,
        "suppress_health_check": [HealthCheck.too_slow],
    },
}


def register_profiles() -> None:
    """Register hypothesis profiles ``dev`` and ``ci`` unless the project has its own."""
    from hypothesis.errors import InvalidArgument

    for name, options in _PROFILES.items():
        try:
            hsettings.get_profile(name)
        except InvalidArgument:
            hsettings.register_profile(name, **options)


def _parent_settings() -> hsettings:
    name = DEFAULTS["profile"]
    if name is None:
        return hsettings()
    register_profiles()
    return hsettings.get_profile(name)


# (rtol, atol) per dtype; integers and bools compare exactly.
_TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-9),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-7, 1e-9),
}
NAMES = {
    "a": "the original function",
    "b": "the converted function (eager)",
    "c": "the static program",
}


def tolerance(dtype: Any, rtol: float | None = None, atol: float | None = None) -> tuple:
    """The (rtol, atol) used for ``dtype``; explicit values win."""
    base = _TOLERANCES.get(str(dtype), (0.0, 0.0))
    return (base[0] if rtol is None else rtol, base[1] if atol is None else atol)


class EquivalenceError(AssertionError):
    """The three runs disagreed. Attributes: ``which`` ("b" converted or "c" static),
    ``example`` (name -> value), ``max_difference``, ``location`` (file, line, fn) or None."""

    def __init__(self, message: str, which: str, example: dict, max_difference: float | None,
                 location: tuple | None):  # fmt: skip
        super().__init__(message)
        self.which = which
        self.example = example
        self.max_difference = max_difference
        self.location = location


@dataclass
class EquivalenceResult:
    """What ``assert_equivalent`` checked: examples run and branch coverage."""

    examples: int = 0
    coverage: BranchCoverage = field(default_factory=BranchCoverage)


class _Mismatch(AssertionError):
    """Raised inside the hypothesis test; turned into an EquivalenceError after shrinking."""

    def __init__(self, which, args, detail, max_diff=None, output=None, grad=False):
        super().__init__(f"{NAMES[which]} disagrees: {detail}")
        self.which, self.args, self.detail = which, args, detail
        self.max_diff, self.output, self.grad = max_diff, output, grad


# ---- comparing -------------------------------------------------------------------------------


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        out = [(f"{path}#type", type(value).__name__ + f"[{len(value)}]")]
        for i, v in enumerate(value):
            out += _leaves(v, f"{path}[{i}]")
        return out
    if isinstance(value, dict):
        out = [(f"{path}#keys", sorted(map(repr, value)))]
        for k in value:
            out += _leaves(value[k], f"{path}[{k!r}]")
        return out
    return [(path or "output", value)]


def _as_array(v: Any) -> np.ndarray | None:
    if isinstance(v, Tensor):
        return np.asarray(v.numpy())
    if isinstance(v, np.ndarray):
        return v
    return None


def _compare(want: Any, got: Any, rtol, atol) -> tuple[str, float | None] | None:
    """None when equal; else (what differs, max abs difference or None)."""
    wa, ga = _as_array(want), _as_array(got)
    if wa is None and ga is None:
        if type(want) is not type(got) or not _py_equal(want, got):
            return f"{want!r} != {got!r}", None
        return None
    if wa is None or ga is None:
        # A Python number the eager run computed may be a promoted scalar tensor in the
        # static program (a number carried by a tensor-dependent loop): compare values.
        number = want if wa is None else got
        array = ga if wa is None else wa
        if isinstance(number, (bool, int, float)) and array.size == 1:
            r, a = tolerance(array.dtype, rtol, atol)
            if np.isclose(float(array.reshape(())), float(number), rtol=r, atol=a):
                return None
            return f"{want!r} != {got!r}", abs(float(array.reshape(())) - float(number))
        return f"{type(want).__name__} {want!r} vs {type(got).__name__} {got!r}", None
    if str(wa.dtype) != str(ga.dtype):
        return f"dtype {wa.dtype} vs {ga.dtype}", None
    if wa.shape != ga.shape:
        return f"shape {list(wa.shape)} vs {list(ga.shape)}", None
    r, a = tolerance(wa.dtype, rtol, atol)
    if wa.dtype.kind in "fc":
        ok = np.isclose(ga, wa, rtol=r, atol=a, equal_nan=True)
    else:
        ok = wa == ga
    if np.all(ok):
        return None
    if wa.dtype.kind == "c":
        diff = np.abs(wa - ga)
    else:
        diff = np.abs(wa.astype(np.float64) - ga.astype(np.float64))
    diff = np.where(ok, 0, np.nan_to_num(diff, nan=np.inf))
    idx = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    worst = float(diff[idx]) if diff.ndim else float(diff)
    return (
        f"max abs difference {worst:.6g} at index {tuple(int(i) for i in idx)} "
        f"(expected {wa[idx].item()!r}, got {ga[idx].item()!r}; "
        f"{int(np.sum(~ok))} of {ok.size} elements differ; rtol={r:g}, atol={a:g})",
        worst,
    )


def _py_equal(x: Any, y: Any) -> bool:
    try:
        return bool(x == y) or (x != x and y != y)
    except Exception:
        return x is y


def _compare_outputs(want: Any, got: Any, rtol, atol) -> tuple[str, str, float | None] | None:
    lw, lg = _leaves(want), _leaves(got)
    if [p for p, _ in lw] != [p for p, _ in lg]:
        return "structure", f"returned {_shape_of(want)} vs {_shape_of(got)}", None
    for (path, w), (_, g) in zip(lw, lg):
        found = _compare(w, g, rtol, atol)
        if found is not None:
            return path, found[0], found[1]
    return None


def _shape_of(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{', '.join(_shape_of(v) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_shape_of(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Tensor):
        return f"Tensor{list(value.shape)}"
    return type(value).__name__


# ---- running ---------------------------------------------------------------------------------


def _tensors(args: tuple, specs: list, grad: bool) -> list:
    def make(value, spec):
        if isinstance(spec, InputSpec):
            floating = np.asarray(value).dtype.kind == "f"
            return rt.to_tensor(np.array(value), stop_gradient=not (grad and floating))
        if isinstance(spec, (list, tuple)):
            return type(spec)(make(v, s) for v, s in zip(value, spec))
        if isinstance(spec, dict):
            return {k: make(value[k], s) for k, s in spec.items()}
        return value

    return [make(a, s) for a, s in zip(args, specs)]


def _input_leaves(values: list) -> list:
    return [v for _, v in _leaves(list(values)) if isinstance(v, Tensor)]


def _run(fn: Callable, tensors: list) -> tuple[bool, Any]:
    try:
        return True, fn(*tensors)
    except Exception as exc:  # compared between the runs
        return False, exc


def _loss(outputs: Any) -> Any:
    """sum(out * w) over the floating output tensors, w fixed pseudo-random weights."""
    total = None
    for _, leaf in _leaves(outputs):
        if isinstance(leaf, Tensor) and not leaf.stop_gradient and leaf.dtype.is_floating:
            w = np.random.default_rng(len(leaf.shape)).uniform(0.5, 1.5, tuple(leaf.shape))
            term = rt.sum(leaf * rt.to_tensor(w.astype(str(leaf.dtype))))
            total = term if total is None else total + term
    return total


def _parameters(fn: Callable) -> list:
    """The trainable parameters of the layer ``fn`` is bound to (none for a function)."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, rt.nn.Layer):
        return [p for p in owner.parameters() if not p.stop_gradient]
    return []


def _grads(inputs: list, outputs: Any, params: list) -> list | None:
    """Gradients of ``_loss(outputs)`` for the floating inputs, then for ``params``."""
    loss = _loss(outputs)
    if loss is None:
        return None
    for p in params:
        p.clear_gradient(set_to_zero=False)
    loss.backward()
    out = []
    for t in _input_leaves(inputs) + params:
        if t.stop_gradient:
            continue
        g = t.grad
        out.append(np.zeros(tuple(t.shape), str(t.dtype)) if g is None else np.asarray(g.numpy()))
    for p in params:
        p.clear_gradient(set_to_zero=False)
    return out


class _Check:
    """One assert_equivalent run: the three callables and how to compare them."""

    def __init__(self, original, converted, static, specs, rtol, atol, check_grad):
        self.original, self.converted, self.static = original, converted, static
        self.specs, self.rtol, self.atol, self.check_grad = specs, rtol, atol, check_grad
        self.examples = 0

    def __call__(self, args: tuple) -> None:
        self.examples += 1
        ins = {k: _tensors(args, self.specs, self.check_grad) for k in "abc"}
        ok_a, out_a = _run(self.original, ins["a"])
        ok_b, out_b = _run(self.converted, ins["b"])
        if not ok_a:
            if ok_b or type(out_b) is not type(out_a):
                got = f"raised {type(out_b).__name__}: {out_b}" if not ok_b else "returned"
                raise _Mismatch("b", args, f"the original raised {type(out_a).__name__}: "
                                f"{out_a}, the converted function {got}")  # fmt: skip
            return  # both raised alike; the static program is not defined here
        if not ok_b:
            raise _Mismatch("b", args, f"raised {type(out_b).__name__}: {out_b}") from out_b
        ok_c, out_c = _run(self.static, ins["c"])
        if not ok_c:
            raise _Mismatch("c", args, f"raised {type(out_c).__name__}: {out_c}") from out_c
        for which, out in (("b", out_b), ("c", out_c)):
            found = _compare_outputs(out_a, out, self.rtol, self.atol)
            if found is not None:
                path, detail, worst = found
                raise _Mismatch(which, args, f"{path}: {detail}", worst, path)
        if self.check_grad:
            self._check_grads(args, ins, out_a, out_b, out_c)

    def _check_grads(self, args, ins, out_a, out_b, out_c) -> None:
        params = _parameters(self.original)
        ga = _grads(ins["a"], out_a, params)
        if ga is None:
            return
        for which, out in (("b", out_b), ("c", out_c)):
            g = _grads(ins[which], out, params)
            for i, (w, x) in enumerate(zip(ga, g or [])):
                r, a = tolerance(w.dtype, self.rtol, self.atol)
                r = r * 10 if self.rtol is None else r  # gradients sum more terms
                a = a * 10 if self.atol is None else a
                found = _compare(w, x, r, a)
                if found is not None:
                    n = len(ga) - len(params)
                    what = f"input {i}" if i < n else f"parameter {params[i - n].name}"
                    raise _Mismatch(which, args, f"gradient of {what}: {found[0]}",
                                    found[1], None, grad=True)  # fmt: skip


def _resolve(fn: Any, specs: tuple) -> tuple[Callable, list]:
    from autostatic.jit.static_function import StaticFunction

    if isinstance(fn, rt.nn.Layer):
        fn = fn.forward
    if isinstance(fn, StaticFunction):
        specs = specs or tuple(fn.input_spec or ())
        fn = fn.dygraph_function
    if not specs:
        raise TypeError(
            "assert_equivalent needs the input specs: assert_equivalent(fn, InputSpec(...), ...) "
            "or a to_static function declared with input_spec"
        )
    if len(specs) == 1 and isinstance(specs[0], list):
        specs = tuple(specs[0])
    return fn, list(specs)


def assert_equivalent(
    fn: Callable,
    *specs: Any,
    rtol: float | None = None,
    atol: float | None = None,
    max_examples: int | None = None,
    check_grad: bool = False,
    dims: dict | None = None,
    elements: Any = None,
    warn_coverage: bool | None = None,
) -> EquivalenceResult:
    """Check on hypothesis-generated inputs that ``fn`` eager, converted, and static agree.

    Args:
        fn: a function, a bound method, a ``StaticFunction`` (its ``input_spec`` is used
            when no specs are given) or a Layer (its ``forward``).
        *specs: one ``InputSpec`` (or nested list/dict of them, or a Python value passed as
            is) per positional argument.
        rtol, atol: tolerances for floating outputs (default per dtype, see ``tolerance``;
            gradients get 10x).
        max_examples: examples to draw (default: the plugin's ``--autostatic-max-examples``
            or the current hypothesis profile).
        check_grad: also compare gradients of a scalar reduction of the outputs.
        dims: named dimensions shared between arguments (see ``strategies``).
        elements: a strategy for tensor values, or a mapping spec name -> strategy.
        warn_coverage: warn about cond branches / loop bodies no example exercised
            (default True).

    Returns:
        An ``EquivalenceResult`` (examples run, branch coverage).

    Raises:
        EquivalenceError: on the shrunk failing example, saying which run disagreed, the
            largest difference, and the source around the first diverging op.
    """
    __tracebackhide__ = True  # pytest shows the caller's line and our report, not this frame
    import autostatic

    original, specs = _resolve(fn, specs)
    converted = autostatic.convert(original)
    static = autostatic.to_static(original, input_spec=specs)
    check = _Check(original, converted, static, specs, rtol, atol, check_grad)
    strategy = input_specs_to_strategy(specs, dims=dims, elements=elements)
    parent = _parent_settings()
    options: dict[str, Any] = {
        "deadline": None,  # the first call of each shape converts, traces and compiles
        # our report locates the divergence; hypothesis's explain phase would rerun the
        # example many times (seconds) to say which argument parts matter
        "phases": tuple(p for p in parent.phases if p != Phase.explain),
        "report_multiple_bugs": False,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    }
    n = max_examples if max_examples is not None else DEFAULTS["max_examples"]
    if n is not None:
        options["max_examples"] = int(n)
    result = EquivalenceResult()

    @hsettings(parent, **options)
    @given(strategy)
    def run_examples(args):
        check(args)

    # one database entry per checked function and specs (they all share run_examples' code)
    run_examples.hypothesis.inner_test._hypothesis_internal_add_digest = repr(
        (getattr(original, "__module__", None), getattr(original, "__qualname__", None), specs)
    ).encode()
    try:
        with result.coverage.observing():
            run_examples()
    except _Mismatch as m:
        raise _report(m, original, static, specs, rtol, atol) from None
    result.examples = check.examples
    if warn_coverage if warn_coverage is not None else DEFAULTS["warn_coverage"]:
        result.coverage.warn_untaken(stacklevel=2)
    return result


# ---- reporting -------------------------------------------------------------------------------


def _arg_names(fn: Callable, n: int) -> list[str]:
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def _format_value(v: Any) -> str:
    if isinstance(v, np.ndarray):
        body = np.array2string(v, precision=6, separator=", ", threshold=64)
        return f"array({body}, dtype={v.dtype})"
    return repr(v)


def _report(m: _Mismatch, original, static, specs, rtol, atol) -> EquivalenceError:
    name = getattr(original, "__qualname__", repr(original))
    example = dict(zip(_arg_names(original, len(m.args)), m.args))
    lines = [f"assert_equivalent({name}): {NAMES[m.which]} disagrees with the original function"]
    lines.append("Example (shrunk):")
    lines += [f"    {k} = {_format_value(v)}" for k, v in example.items()]
    detail = m.detail[len("output: ") :] if m.detail.startswith("output: ") else m.detail
    lines.append(f"{'Gradient' if m.grad else 'Output'}: {detail}")
    location = None
    if m.which == "c" and not m.detail.startswith("raised "):
        try:
            op, location = _first_diverging_op(original, static, specs, m.args, rtol, atol)
        except Exception as exc:  # diagnosis is best effort; the mismatch is the finding
            op, location, why = None, None, f"{type(exc).__name__}: {exc}"
        else:
            why = None
        if op is not None and location:
            lines.append(
                f"First diverging op: {op.type} at {_short(location[0])}:{location[1]} "
                f"(in {location[2]})"
            )
            lines += _source_context(location)
            lines += _converted_context(original, location)
        elif why:
            lines.append(f"(could not locate the diverging op: {why})")
    return EquivalenceError("\n".join(lines), m.which, example, m.max_diff, location)


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _source_context(location: tuple, around: int = 2) -> list[str]:
    file, line = location[0], location[1]
    out = [f"Source ({_short(file)}):"]
    for n in range(max(1, line - around), line + around + 1):
        text = linecache.getline(file, n)
        if not text:
            continue
        out.append(f"  {'>' if n == line else ' '} {n:4d} | {text.rstrip()}")
    return out if len(out) > 1 else []


def _converted_context(original: Callable, location: tuple, limit: int = 8) -> list[str]:
    """The converted statements the converter emitted for the user's line."""
    try:
        import gast

        from autostatic.conversion import convert_code

        fn = getattr(original, "__func__", original)
        fn = getattr(fn, "__autostatic_original__", fn)
        tree = gast.gast_to_ast(convert_code(fn).node)
    except Exception:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or getattr(node, "lineno", None) != location[1]:
            continue
        if any(isinstance(c, ast.stmt) for c in ast.iter_child_nodes(node)):
            continue  # a compound statement: its leaves are listed instead
        text = ast.unparse(node)
        if text not in found:
            found.append(text)
    if not found:
        return []
    out = [f"Converted code for line {location[1]}:"]
    for text in found[:limit]:
        out += [f"    {t}" for t in text.splitlines()[:4]]
    return out


def _display_location(op, block, original) -> tuple | None:
    """``op.location``, or when that is outside the user's file (a cond built by a wrapper
    of ``convert_ifelse``), the location of the op that computed its first input."""
    fn = getattr(original, "__func__", original)
    fn = getattr(fn, "__autostatic_original__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return tuple(op.location) if op.location else None
    last = max([line for *_, line in code.co_lines() if line] or [code.co_firstlineno])

    def inside(loc) -> bool:
        return bool(loc) and loc[0] == code.co_filename and code.co_firstlineno <= loc[1] <= last

    if inside(op.location):
        return tuple(op.location)
    first = op.inputs[0] if op.inputs else None
    for other in block.ops:
        if first is not None and any(v is first for v in other.outputs) and inside(other.location):
            return tuple(other.location)
    return tuple(op.location) if op.location else None


def _op_lines(op) -> set:
    """The user lines of ``op`` and of every op in its sub-blocks (a cond's branches)."""
    lines = {tuple(op.location[:2])} if op.location else set()
    for sub in op.sub_blocks():
        for inner in sub.ops:
            lines |= _op_lines(inner)
    return lines


def _matches(got: np.ndarray, values: list, rtol, atol) -> bool:
    r, a = tolerance(got.dtype, rtol, atol)
    for e in values:
        if e.shape != got.shape or e.dtype != got.dtype:
            continue
        if got.dtype.kind in "fc":
            if np.allclose(e, got, rtol=r, atol=a, equal_nan=True):
                return True
        elif np.array_equal(e, got):
            return True
    return False


def _first_diverging_op(original, static, specs, args, rtol, atol):
    """The first block-0 op of the static program whose value no eager op at the same user
    line computed (for a cond or while: at the lines of its branches or body)."""
    from autostatic_runtime.backends import current_backend
    from autostatic_runtime.errors import user_location
    from autostatic_runtime.ops import registry
    from autostatic_runtime.static.builder import captured_values
    from autostatic_runtime.static.compiler import PythonCodegen

    eager: dict[tuple, list] = {}
    dispatch = registry._dispatch[0]

    def recording(op, inputs, attrs):
        out = dispatch(op, inputs, attrs)
        loc = user_location()
        key = tuple(loc[:2]) if loc else None
        for o in out if isinstance(out, tuple) else (out,):
            if isinstance(o, Tensor):
                eager.setdefault(key, []).append(np.asarray(o.numpy()))
        return out

    registry._dispatch[0] = recording
    try:
        _run(original, _tensors(args, specs, False))
    finally:
        registry._dispatch[0] = dispatch
    cp = static.get_concrete_program(*_tensors(args, specs, False))
    block = cp.main_program.global_block()
    candidates = []
    for op in block.ops:
        if not any(hasattr(x, "persistable") for x in op.inputs):
            continue  # constants: the eager run made Python values for them
        for v in op.outputs:
            if not v.persistable and v.name != op.attrs.get("trajectory"):
                candidates.append((op, v.name))
    names = list(dict.fromkeys([n for _, n in candidates] + [v.name for v in cp.inputs]))
    feeds = [t._data for t in _input_leaves(_tensors(args, specs, False))]
    fn = PythonCodegen().compile(block, [v.name for v in cp.inputs], names, current_backend())
    scope = {k: t._data for k, t in captured_values(cp.main_program).items()}
    values = {k: np.asarray(v) for k, v in zip(names, fn(scope, *feeds))}
    for op, n in candidates:
        pool = [e for line in _op_lines(op) for e in eager.get(line, ())]
        if op.type == "while":  # a loop that ran zero times passes its inputs through
            pool += [values[x.name] for x in op.inputs if getattr(x, "name", None) in values]
        if not _matches(values[n], pool, rtol, atol):
            return op, _display_location(op, block, original)
    return None, None

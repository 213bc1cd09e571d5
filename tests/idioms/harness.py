"""Harness of the idiom suite: run a function eagerly and through ``autostatic.to_static`` on
the same inputs and compare values and gradients.

    check(fn, [(a,), (b,)], input_spec="batch")   # one StaticFunction, both input sets
    expect_error(fn, [(a,)], match="not supported")

``inputs`` is a list of argument tuples (one per call; choose them so that every branch is
taken).  NumPy arrays become tensors (float arrays with ``stop_gradient=False`` when
``grad=True``); any other argument is passed as it is.  The same ``StaticFunction`` serves
every call, so with ``None`` dims in the spec one program is run with inputs that take
different branches at run time.

``input_spec``: ``None`` (no spec: exact shapes of each call), ``"batch"`` (dim 0 of
each array is ``None``), ``"dynamic"`` (every dim ``None``) or a list of ``InputSpec``.
Specs are given for the leading array arguments only (put Python arguments last).

``fn`` may be an ``rt.nn.Layer``: then the layer's parameter gradients are compared too (the
layer's ``forward`` is converted for the static run and rolled back afterwards).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime.errors import AutostaticError, StaticBuildError

# frames of this module are not "the user" for autostatic's error locations
__autostatic_internal__ = True

TIMEOUT = 5  # seconds; a static loop that never ends fails instead of hanging the suite
RTOL = 1e-5
ATOL = 1e-6


# ---- building pytest cases ---------------------------------------------------------------


# test id -> kind (the numbered kinds of the suite's README section in docs/converter.md)
KINDS: dict[str, str] = {}


def case(
    fn: Any, inputs: list, *, kind: str, xfail: str | None = None, id: str | None = None, **kw
):
    """A ``pytest.param`` for ``check(fn, inputs, **kw)``; ``xfail`` is "<category>: <cause>"
    (strict: a test that starts to pass fails, so the mark gets removed)."""
    name = id or getattr(fn, "__name__", None) or type(fn).__name__
    assert name not in KINDS, f"duplicate case id {name}"
    KINDS[name] = kind
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    if "timeout" in kw:  # a shorter limit for a case known to hang today
        marks.append(pytest.mark.timeout(kw.pop("timeout")))
    return pytest.param(fn, inputs, kw, marks=marks, id=name)


def apply_xfails(cases: list, xfails: Mapping[str, str]) -> list:
    """Attach strict xfail marks from ``{test id: "<category>: <cause>"}`` to cases."""
    known = {c.id for c in cases}
    unknown = set(xfails) - known
    assert not unknown, f"xfail entries for unknown cases: {sorted(unknown)}"
    out = []
    for c in cases:
        marks = list(c.marks)
        if not any(m.name == "timeout" for m in marks):
            marks.append(pytest.mark.timeout(TIMEOUT))
        reason = xfails.get(c.id)
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(*c.values, marks=marks, id=c.id))
    return out


# ---- inputs ------------------------------------------------------------------------------


def _is_float(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.floating)


def _make_args(args: tuple, grad: bool) -> tuple[list, list]:
    """(arguments, input tensors to take gradients of)."""
    out, leaves = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            t = rt.to_tensor(a.copy(), stop_gradient=not (grad and _is_float(a)))
            if grad and _is_float(a):
                leaves.append(t)
            out.append(t)
        else:
            out.append(a)
    return out, leaves


def _specs(input_spec: Any, first_args: tuple) -> list | None:
    if input_spec is None:
        return None  # exact shapes of each call (a new program per new shape)
    if isinstance(input_spec, (list, tuple)):
        return list(input_spec)
    specs = []
    for a in first_args:
        if not isinstance(a, np.ndarray):
            break
        shape = list(a.shape)
        if input_spec == "batch" and shape:
            shape[0] = None
        elif input_spec == "dynamic":
            shape = [None] * len(shape)
        specs.append(InputSpec(shape, str(a.dtype)))
    return specs or None


# ---- comparing ---------------------------------------------------------------------------


def _is_tensor(v: Any) -> bool:
    return isinstance(v, rt.Tensor)


def _np(v: Any) -> np.ndarray:
    return np.asarray(v.numpy()) if _is_tensor(v) else np.asarray(v)


def _compare(want: Any, got: Any, path: str, rtol: float, atol: float) -> None:
    where = path or "output"
    if _is_tensor(want) or isinstance(want, np.ndarray):
        assert _is_tensor(got) or isinstance(got, np.ndarray), (
            f"{where}: eager gives a tensor, static gives {type(got).__name__}: {got!r}"
        )
        w, g = _np(want), _np(got)
        assert w.shape == g.shape, f"{where}: shape eager {w.shape} vs static {g.shape}"
        assert w.dtype == g.dtype, f"{where}: dtype eager {w.dtype} vs static {g.dtype}"
        if w.dtype == np.bool_ or np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w, err_msg=where)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=where)
        return
    if isinstance(want, Mapping):
        assert isinstance(got, Mapping), f"{where}: eager dict, static {type(got).__name__}"
        assert list(want) == list(got), f"{where}: keys eager {list(want)} vs {list(got)}"
        for k in want:
            _compare(want[k], got[k], f"{path}[{k!r}]", rtol, atol)
        return
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), (
            f"{where}: eager {type(want).__name__}, static {type(got).__name__}: {got!r}"
        )
        if isinstance(want, tuple) and hasattr(want, "_fields"):
            assert type(got) is type(want), f"{where}: eager {type(want)}, static {type(got)}"
        assert len(want) == len(got), f"{where}: length eager {len(want)} vs {len(got)}"
        for i, (w, g) in enumerate(zip(want, got)):
            _compare(w, g, f"{path}[{i}]", rtol, atol)
        return
    if hasattr(want, "__dataclass_fields__"):
        assert type(got) is type(want), f"{where}: eager {type(want)}, static {type(got)}"
        for k in want.__dataclass_fields__:
            _compare(getattr(want, k), getattr(got, k), f"{path}.{k}", rtol, atol)
        return
    # a Python value: static may hold it as a one-element tensor (a value chosen by a tensor
    # condition), which must have the same value
    if _is_tensor(got):
        g = _np(got)
        assert g.size == 1, f"{where}: eager {want!r}, static a tensor of shape {g.shape}"
        assert g.reshape(()).item() == want, f"{where}: eager {want!r} vs static {g}"
        return
    assert type(got) is type(want) and got == want, f"{where}: eager {want!r} vs static {got!r}"


def _leaves(v: Any) -> list:
    if _is_tensor(v):
        return [v]
    if isinstance(v, Mapping):
        return [x for k in v for x in _leaves(v[k])]
    if isinstance(v, (list, tuple)):
        return [x for e in v for x in _leaves(e)]
    if hasattr(v, "__dataclass_fields__"):
        return [x for k in v.__dataclass_fields__ for x in _leaves(getattr(v, k))]
    return []


def _backward(out: Any) -> bool:
    diff = [t for t in _leaves(out) if not t.stop_gradient and t.dtype in (rt.float32, rt.float64)]
    if not diff:
        return False
    loss = rt.sum(diff[0] * 1.0)
    for t in diff[1:]:
        loss = loss + rt.sum(t * 1.0)
    loss.backward()
    return True


def _grads(leaves: list, params: list) -> list:
    return [None if t.grad is None else t.grad.numpy().copy() for t in [*leaves, *params]]


def _compare_grads(want: list, got: list, names: list, rtol: float, atol: float) -> None:
    for w, g, name in zip(want, got, names):
        if w is None:
            assert g is None or not np.any(g), f"grad of {name}: eager None vs static {g}"
            continue
        assert g is not None, f"grad of {name}: eager {w} vs static None"
        assert np.all(np.isfinite(g)) or not np.all(np.isfinite(w)), (
            f"grad of {name}: static has non-finite values {g} (eager {w})"
        )
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"grad of {name}")


# ---- the checks --------------------------------------------------------------------------


def check(
    fn: Callable | rt.nn.Layer,
    inputs: list,
    input_spec: Any = None,
    grad: bool = True,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> None:
    """Eager == static for every argument tuple in ``inputs`` (values, and gradients of the
    float inputs and of the layer's parameters when ``grad``)."""
    assert inputs and all(isinstance(a, tuple) for a in inputs), "inputs: a list of tuples"
    layer = fn if isinstance(fn, rt.nn.Layer) else None
    params = list(layer.parameters()) if layer is not None else []
    names = None

    eager = []
    for args in inputs:
        call_args, leaves = _make_args(args, grad)
        for p in params:
            p.clear_gradient()
        out = fn(*call_args)
        did = grad and _backward(out)
        eager.append((out, _grads(leaves, params) if did else None))

    specs = _specs(input_spec, inputs[0])
    sf = autostatic.to_static(fn, input_spec=specs)
    try:
        for args, (want, want_grads) in zip(inputs, eager):
            call_args, leaves = _make_args(args, grad)
            for p in params:
                p.clear_gradient()
            got = sf(*call_args)
            _compare(want, got, "", rtol, atol)
            if want_grads is not None:
                assert _backward(got), "static output has no differentiable tensor"
                names = [f"input {i}" for i in range(len(leaves))]
                names += [getattr(p, "name", f"param {i}") for i, p in enumerate(params)]
                _compare_grads(want_grads, _grads(leaves, params), names, rtol, atol)
    finally:
        if layer is not None:
            layer.forward.rollback()
            for p in params:
                p.clear_gradient()


def expect_error(fn: Callable, inputs: list, match: str, input_spec: Any = None) -> None:
    """``to_static(fn)`` on ``inputs[0]`` raises a ``StaticBuildError`` matching ``match`` that
    names the file and a line of ``fn``."""
    call_args, _ = _make_args(inputs[0], grad=False)
    sf = autostatic.to_static(fn, input_spec=_specs(input_spec, inputs[0]))
    with pytest.raises(StaticBuildError, match=match) as info:
        sf(*call_args)
    lines, first = inspect.getsourcelines(fn)
    fname = os.path.basename(inspect.getsourcefile(fn))
    msg = str(info.value)
    named = [
        n for n in range(first, first + len(lines)) if f"{fname}:{n}" in msg
    ]
    assert named, f"the error does not name {fname} and a line of {fn.__name__}: {msg}"


def describe_failure(exc: BaseException) -> str:
    """'<Type>: <message>' with "internal" when the exception is not one of autostatic's
    own errors (used when triaging)."""
    internal = not isinstance(exc, (AutostaticError, AssertionError))
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = f"{type(exc).__name__}: {' | '.join(lines[:3])}"
    return ("internal " if internal else "") + text


# ---- small helpers for writing inputs ----------------------------------------------------


def arr(*values, dtype="float32") -> np.ndarray:
    return np.asarray(values, dtype=dtype)


def rand(*shape, seed: int = 0, dtype="float32", low=-1.0, high=1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=shape).astype(dtype)


def run_case(fn, inputs, kw) -> None:
    """Dispatch a ``case``: ``kw['error']`` selects ``expect_error``."""
    kw = dict(kw)
    if "error" in kw:
        expect_error(fn, inputs, match=kw.pop("error"), **kw)
    else:
        check(fn, inputs, **kw)

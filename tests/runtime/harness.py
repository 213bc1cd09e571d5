"""Op test harness: argument descriptors, samples, inference checking, gradient checking.

An op family's tests describe calls as ``Sample``s (see ``tests/runtime/catalogue``); the
generic tests in ``test_op_catalogue.py`` then check, for every sample: inference agrees with
the kernel, gradients agree with central differences on hypothesis-drawn values, and the
kernels give the same result on the ``array_api_strict`` backend.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autostatic_runtime as rt
from autostatic_runtime.ops import registry
from autostatic_runtime.tensor import TensorLike

__autostatic_internal__ = True  # errors point past this module, at the test's own line
SEEN_OPS: set[str] = set()


# ---- argument descriptors ----------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """A tensor argument of a sample: shape, kind and value range."""

    shape: tuple
    kind: str = "float"  # float | int | bool
    low: float = -2.0
    high: float = 2.0
    grad: bool = True  # float args only: is the gradient checked?
    away: tuple = ()  # values to keep away from (kinks of abs, relu, ...)

    def strategy(self, dtype: str = "float64"):
        if self.kind == "bool":
            return hnp.arrays(np.bool_, self.shape)
        if self.kind == "int":
            return hnp.arrays(
                np.int64, self.shape, elements=st.integers(int(self.low), int(self.high) - 1)
            )
        away = self.away
        elements = st.floats(self.low, self.high, allow_nan=False, allow_infinity=False)
        if away:
            elements = elements.map(lambda v: _push_away(v, away, self.low, self.high))
        return hnp.arrays(dtype, self.shape, elements=elements)

    def distinct_strategy(self, dtype: str = "float64"):
        """Values at least (high - low) / (2n) apart: a shuffled ramp plus small jitter."""
        n = int(np.prod(self.shape)) if self.shape else 1
        step = (self.high - self.low) / n
        jitter = hnp.arrays(np.float64, (n,), elements=st.floats(0.0, 0.45))

        def build(args):
            perm, noise = args
            v = self.low + (np.asarray(perm, np.float64) + 0.05 + noise) * step
            return v.reshape(self.shape).astype(dtype)

        return st.tuples(st.permutations(range(n)), jitter).map(build)

    def example(self, rng: np.random.Generator, dtype: str = "float32") -> np.ndarray:
        if self.kind == "bool":
            return rng.random(self.shape) > 0.5
        if self.kind == "int":
            return rng.integers(int(self.low), int(self.high), self.shape).astype(np.int64)
        v = rng.uniform(self.low, self.high, self.shape)
        for p in self.away:
            v = np.where(np.abs(v - p) < 0.05, p + 0.1, v)
        return v.astype(dtype)


def _push_away(v: float, points: tuple, low: float, high: float) -> float:
    """``v`` moved at least 0.05 away from each kink in ``points``, staying in range."""
    for p in points:
        if abs(v - p) < 0.05:
            v = p + 0.05 if p + 0.05 <= high else p - 0.05
    return min(max(v, low), high)


def F(*shape: int, low: float = -2.0, high: float = 2.0, grad: bool = True, away=()) -> Arg:
    """A float tensor argument (gradient checked unless ``grad=False``)."""
    return Arg(tuple(shape), "float", low, high, grad, tuple(away))


def I(*shape: int, low: int = 0, high: int = 5) -> Arg:  # noqa: E743
    """An int64 tensor argument with values in ``[low, high)``."""
    return Arg(tuple(shape), "int", low, high, False)


def B(*shape: int) -> Arg:
    """A bool tensor argument."""
    return Arg(tuple(shape), "bool", 0, 1, False)


@dataclass
class Sample:
    """One call of one op, for the generic op tests.

    ``fn`` receives one Tensor per ``Arg`` in ``args`` (other entries are passed as they
    are) and returns a Tensor or a tuple of Tensors.
    """

    op: str
    fn: Callable
    args: list
    grad: bool = True
    strict: bool = True
    distinct: bool = False  # values must not tie (max, sort, ...)
    rtol: float = 1e-4
    atol: float = 1e-5
    name: str = ""
    also: tuple = ()  # other ops this sample covers
    why_no_strict: str = ""
    static: bool = True  # also checked in a static program (tests/static/test_ops_static.py)

    @property
    def id(self) -> str:
        return self.name or self.op


@dataclass
class Case:
    values: list = field(default_factory=list)


def make_inputs(sample: Sample, values: list, stop_gradient: bool = False) -> list:
    out = []
    vi = iter(values)
    for a in sample.args:
        if isinstance(a, Arg):
            v = next(vi)
            t = rt.to_tensor(v)
            if a.kind == "float" and a.grad and not stop_gradient:
                t.stop_gradient = False
            out.append(t)
        else:
            out.append(a)
    return out


def example_values(sample: Sample, seed: int = 0, dtype: str = "float32") -> list:
    rng = np.random.default_rng(seed)
    vals = [a.example(rng, dtype) for a in sample.args if isinstance(a, Arg)]
    if sample.distinct:
        vals = [_spread(v) if v.dtype.kind == "f" else v for v in vals]
    return vals


def _spread(v: np.ndarray) -> np.ndarray:
    """Same shape, distinct values (a shuffled ramp), for ops that must not see ties."""
    n = v.size
    ramp = np.linspace(-1.5, 1.5, n) if n > 1 else np.zeros(1)
    return np.random.default_rng(n).permutation(ramp).reshape(v.shape).astype(v.dtype)


def outputs_of(result: Any) -> list:
    if isinstance(result, (tuple, list)):
        flat = []
        for r in result:
            flat.extend(outputs_of(r))
        return flat
    return [result] if isinstance(result, TensorLike) else []


# ---- inference checking --------------------------------------------------------------------


@contextlib.contextmanager
def inference_checked():
    """Wrap op dispatch so every eager op also runs its ``infer`` and the two are compared."""
    inner = registry._dispatch[0]

    def checked(opdef, inputs, attrs):
        result = inner(opdef, inputs, attrs)
        SEEN_OPS.add(opdef.name)
        spec = opdef.infer(*inputs, **attrs)
        outs = result if opdef.multi_output else (result,)
        specs = (
            spec
            if isinstance(spec, (tuple, list)) and not isinstance(spec, registry.Spec)
            else (spec,)
        )
        assert len(specs) == len(outs), (
            f"{opdef.name}: infer gave {len(specs)} outputs, kernel {len(outs)}"
        )
        for i, (s, o) in enumerate(zip(specs, outs)):
            shape = tuple(s.shape)
            got = tuple(o.shape)
            ok = len(shape) == len(got) and all(a == -1 or a == b for a, b in zip(shape, got))
            assert ok, (
                f"{opdef.name} output {i}: infer says shape {list(shape)}, kernel gave {list(got)}"
            )
            assert rt.dtypes.convert_dtype(s.dtype) == o.dtype, (
                f"{opdef.name} output {i}: infer says dtype {s.dtype}, kernel gave {o.dtype}"
            )
        return result

    registry._dispatch[0] = checked
    try:
        yield
    finally:
        registry._dispatch[0] = inner


# ---- gradient checking --------------------------------------------------------------------


def check_grad(
    fn: Callable,
    inputs: list,
    wrt: list[int],
    rtol: float = 1e-4,
    atol: float = 1e-5,
    eps: float = 1e-6,
    label: str = "",
) -> None:
    """Compare autograd gradients of ``fn`` with central differences (float64 inputs).

    ``inputs`` are Tensors (or constants); ``wrt`` lists the positions to differentiate.
    The scalar checked is ``sum(out * w)`` over float outputs with fixed random weights ``w``.
    """
    inputs = list(inputs)
    for i in wrt:
        inputs[i] = rt.to_tensor(inputs[i].numpy().astype(np.float64), stop_gradient=False)
    outs = outputs_of(fn(*inputs))
    outs = [o for o in outs if o.dtype.is_floating]
    rng = np.random.default_rng(7)
    weights = [rng.uniform(0.5, 1.5, o.shape) for o in outs]

    def scalar(*args) -> float:
        # inputs still need gradients: samples of grad ops call rt.grad themselves
        res = [o for o in outputs_of(fn(*args)) if o.dtype.is_floating]
        return float(sum(np.sum(o.numpy().astype(np.float64) * w) for o, w in zip(res, weights)))

    loss = None
    for o, w in zip(outs, weights):
        term = (o * rt.to_tensor(w.astype(o.numpy().dtype))).sum()
        loss = term if loss is None else loss + term
    targets = [inputs[i] for i in wrt]
    if loss is None or loss.stop_gradient:
        grads = [None] * len(targets)
    else:
        grads = rt.grad(loss, targets, allow_unused=True)
    for pos, t, g in zip(wrt, targets, grads):
        base = t.numpy().copy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            args = list(inputs)
            plus, minus = base.copy(), base.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args[pos] = rt.to_tensor(plus, stop_gradient=False)
            fp = scalar(*args)
            args[pos] = rt.to_tensor(minus, stop_gradient=False)
            fm = scalar(*args)
            numeric[idx] = (fp - fm) / (2 * eps)
        got = np.zeros_like(base) if g is None else g.numpy()
        assert got.shape == base.shape, (
            f"{label}: gradient of argument {pos} has shape {got.shape}, input {base.shape}"
        )
        bad = ~np.isclose(got, numeric, rtol=rtol, atol=atol)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise AssertionError(
                f"{label}: gradient of argument {pos} at index {list(idx)}: got {got[idx]!r}, "
                f"expected {numeric[idx]!r} (central difference); {int(bad.sum())} of "
                f"{bad.size} entries differ"
            )


def run_sample(sample: Sample, values: list) -> list[np.ndarray]:
    """Run a sample eagerly on the current device and return its outputs as NumPy arrays."""
    inputs = make_inputs(sample, values)
    return [o.numpy() for o in outputs_of(sample.fn(*inputs))]

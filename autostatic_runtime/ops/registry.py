"""The op registry: every op is defined once, with its inference, kernel and gradient.

    @op("multiply")
    class Multiply:
        def infer(x, y):              # shapes/dtypes only (Specs, Tensors or Variables)
            return Spec(broadcast(x, y), x.dtype)
        def kernel(xp, x, y):         # xp: the backend namespace (NumPy, CuPy, ...)
            return xp.multiply(x, y)
        def grad(g, out, x, y):       # written in ops, so eager and static share it
            return reduce_as(g * y, x), reduce_as(g * x, y)

Calling the resulting ``OpDef`` (``Multiply(x, y)``) runs the kernel now (eager mode) or
appends an Operator to the current block (static mode, installed by ``autostatic_runtime.static``).
Class options: ``multi_output`` (the kernel returns a tuple), ``nondiff_outputs`` (indices of
outputs that never carry gradients), ``grad = None`` (the op has no gradient, said explicitly),
``expr = "{x} + {y}"`` (a one-expression kernel over the inputs named by ``infer``; the kernel
is derived from it and the static compiler inlines it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from autostatic_runtime import dtypes
from autostatic_runtime.errors import DTypeError, ShapeError, user_location

OPS: dict[str, OpDef] = {}


class Spec(NamedTuple):
    """Static description of a value: shape (``-1`` where unknown) and dtype."""

    shape: tuple
    dtype: dtypes.DType

    @property
    def ndim(self) -> int:
        return len(self.shape)


class OpDef:
    """One registered op. Call it with inputs (tensors, Python scalars) and keyword attrs."""

    __slots__ = (
        "name",
        "infer",
        "kernel",
        "grad",
        "multi_output",
        "nondiff_outputs",
        "doc",
        "expr",
        "inputs",
        "fresh",
        "memo",
    )

    def __init__(
        self,
        name: str,
        infer,
        kernel,
        grad,
        multi_output=False,
        nondiff_outputs=(),
        expr=None,
        inputs=(),
        fresh=False,
        memo=False,
    ):
        self.name = name
        self.infer = infer
        self.kernel = kernel
        self.grad = grad
        self.multi_output = multi_output
        self.nondiff_outputs = frozenset(nondiff_outputs)
        self.expr = expr
        self.inputs = tuple(inputs)
        # the kernel's first output is always a new array, never a view of an input: the
        # static compiler may then compute an elementwise op into it once it is dead
        self.fresh = fresh
        # the kernel takes ``memo=``: a dict the kernels of one compiled call share, to reuse
        # a value another kernel computed from the same array (a convolution's columns)
        self.memo = memo

    def __call__(self, *inputs: Any, **attrs: Any):
        if _autocasting[0]:  # some thread is in rt.amp.auto_cast: this one, maybe
            rule = AUTOCAST.rule
            if rule is not None:
                inputs = rule(self, inputs)
        return _dispatch[0](self, inputs, attrs)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


_MISSING = object()


def op(name: str) -> Callable[[type], OpDef]:
    """Class decorator registering an op under ``name`` (a Paddle op name, lowercase)."""

    def register(cls: type) -> OpDef:
        body = dict(cls.__dict__)
        expr, inputs = body.get("expr"), ()
        if expr is not None:
            inputs = _expression_inputs(body["infer"])
            body.setdefault("kernel", _kernel_from_expression(expr, inputs))
        grad = body.get("grad", _MISSING)
        missing = [r for r in ("infer", "kernel") if r not in body]
        if grad is _MISSING:
            missing.append("grad (or 'grad = None' for an op without gradient)")
        if missing:
            raise TypeError(f"op {name!r} lacks {', '.join(missing)}")
        if name in OPS:
            raise TypeError(f"op {name!r} is defined twice")
        opdef = OpDef(
            name,
            body["infer"],
            body["kernel"],
            grad,
            body.get("multi_output", False),
            body.get("nondiff_outputs", ()),
            expr,
            inputs,
            body.get("fresh", False),
            body.get("memo", False),
        )
        opdef.doc = cls.__doc__
        OPS[name] = opdef
        return opdef

    return register


def _expression_inputs(infer) -> tuple[str, ...]:
    import inspect

    params = inspect.signature(infer).parameters.values()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _kernel_from_expression(expr: str, inputs: tuple[str, ...]):
    """``expr = "{x} + {y}"`` defines the kernel ``lambda xp, x, y: x + y``; the static
    compiler inlines the same expression into generated code (no call per op)."""
    args = ", ".join(inputs)
    body = expr.format(**{n: n for n in inputs})
    return eval(f"lambda xp, {args}: {body}")  # noqa: S307  (our own op definitions)


def _no_dispatch(opdef, inputs, attrs):  # replaced by autostatic_runtime.dispatch at import
    raise RuntimeError("autostatic_runtime.dispatch is not loaded")


_dispatch: list[Callable] = [_no_dispatch]


class _AutoCast(threading.local):
    """The mixed-precision rule of this thread (``rt.amp.auto_cast``): a callable
    ``rule(op, inputs) -> inputs`` that casts an op's inputs before it runs or is appended,
    or None."""

    rule: Any = None


AUTOCAST = _AutoCast()
# how many auto_cast blocks are in effect, in all threads: while 0, an op call looks no further
_autocasting = [0]
_autocasting_lock = threading.Lock()


def count_autocast(delta: int) -> None:
    """Count an ``auto_cast`` block in effect entered (+1) or left (-1)."""
    with _autocasting_lock:
        _autocasting[0] += delta


def autocasting() -> bool:
    """Whether ops called in this thread now have their inputs cast (``rt.amp.auto_cast``):
    a wrapper then leaves dtype agreement between inputs to the op's casts."""
    return bool(_autocasting[0]) and AUTOCAST.rule is not None


@contextmanager
def autocast_suspended() -> Iterator[None]:
    """No automatic casts in this thread inside the block: gradients (the backward runs in the
    dtypes of the forward), optimizer updates and loss scaling."""
    saved = AUTOCAST.rule
    if saved is None:
        yield
        return
    AUTOCAST.rule = None
    try:
        yield
    finally:
        AUTOCAST.rule = saved


# ---- inference helpers ------------------------------------------------------------------


def shape_of(v: Any) -> tuple:
    """The shape of a tensor-like (or ``()`` for a Python scalar)."""
    s = getattr(v, "shape", None)
    return () if s is None else tuple(s)


def dtype_of(v: Any) -> dtypes.DType:
    d = getattr(v, "dtype", None)
    if d is not None:
        return dtypes.convert_dtype(d)
    if isinstance(v, bool):
        return dtypes.bool_
    if isinstance(v, int):
        return dtypes.int64
    return dtypes.get_default_dtype()


def broadcast(*args: Any, op: str = "broadcast") -> tuple:
    """Broadcast shapes of tensor-likes or shape tuples, keeping -1 where unknown."""
    shapes = [a if isinstance(a, (tuple, list)) else shape_of(a) for a in args]
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dim = 1
        for s in shapes:
            k = i - (ndim - len(s))
            if k < 0:
                continue
            d = s[k]
            if d == 1 or d == dim:
                continue
            if dim == 1:
                dim = d
            elif d == -1:
                continue
            elif dim == -1:
                dim = d
            else:
                shown = " and ".join(str(list(s)) for s in shapes)
                raise ShapeError(
                    op, f"shapes {shown} cannot be broadcast (dim {d} vs {dim})", user_location()
                )
        out.append(dim)
    return tuple(out)


def normalize_axis(axis: int, ndim: int, op: str) -> int:
    """A non-negative axis, or a clear error naming the op."""
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ShapeError(
            op, f"axis {axis} is out of range for a tensor of rank {ndim}", user_location()
        )
    return axis % ndim if ndim else 0


def normalize_axes(axis: Any, ndim: int, op: str) -> tuple | None:
    """Normalize ``None``/int/sequence axes to a sorted tuple (None means all)."""
    if axis is None:
        return None
    if isinstance(axis, int):
        return (normalize_axis(axis, ndim, op),)
    axes = tuple(sorted(normalize_axis(int(a), ndim, op) for a in axis))
    if len(set(axes)) != len(axes):
        raise ShapeError(op, f"repeated axis in {list(axis)}", user_location())
    return axes


def require_float(op: str, *values: Any) -> None:
    for v in values:
        d = dtype_of(v)
        if not d.is_floating:
            raise DTypeError(
                op,
                f"expects a floating-point tensor, got {d}; cast it first with .astype('float32')",
                user_location(),
            )


def known(shape: tuple) -> bool:
    """True when every dim is known (no -1)."""
    return all(d >= 0 for d in shape)


def numel(shape: tuple) -> int:
    """Element count, or -1 when a dim is unknown."""
    n = 1
    for d in shape:
        if d < 0:
            return -1
        n *= d
    return n

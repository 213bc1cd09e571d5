"""Elementwise ops: arithmetic, math functions, comparisons, logic, ``where``, ``cast``.

Binary public functions promote like Paddle before the op runs (``_binary``): a Python
scalar takes the tensor's dtype unless it is a float meeting an integer tensor (then both
become the default float), and tensors of different kinds meet at the float one's dtype.
"""

from __future__ import annotations

import math
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.autograd import needs_grad
from autostatic_runtime.errors import DTypeError, user_location
from autostatic_runtime.ops.broadcast import reduce_as
from autostatic_runtime.ops.registry import Spec, broadcast, dtype_of, op, shape_of
from autostatic_runtime.tensor import Tensor, TensorLike

__all__ = [
    "add", "subtract", "multiply", "divide", "floor_divide", "mod", "remainder", "floor_mod",
    "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "abs", "neg", "exp", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "relu", "sign", "floor",
    "ceil", "round", "trunc", "clip", "scale", "equal", "not_equal", "less_than", "less_equal",
    "greater_than", "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isfinite", "isinf",
    "where", "cast", "increment", "lerp", "allclose", "isclose", "equal_all",
]  # fmt: skip

_NUMBER = (int, float, bool)


def _to_tensor(v: Any):
    from autostatic_runtime.creation import to_tensor

    return to_tensor(v)


def _binary(opdef, x: Any, y: Any):
    """Apply a binary op after Paddle's type promotion of tensors and Python scalars.

    A *weak* symbolic operand (``Variable._weak``: it stands for a Python number of the eager
    code, see ``dtypes.weak_result``) promotes like that number, and the result of weak
    operands (and Python scalars) is weak too, as Python's arithmetic on numbers gives
    numbers. Eager tensors are never weak."""
    tx = isinstance(x, TensorLike)
    ty = isinstance(y, TensorLike)
    if tx and ty:
        dx, dy = x.dtype, y.dtype
        wx, wy = x._weak, y._weak
        if dx is not dy and dx != dy:
            if wx is wy:
                d = dtypes.promote(dx, dy)
            else:
                d = dtypes.weak_result(dy, dx) if wx else dtypes.weak_result(dx, dy)
            if dx != d:
                x = cast(x, d)
            if dy != d:
                y = cast(y, d)
        return _weak(opdef(x, y)) if wx and wy else opdef(x, y)
    if tx:
        if type(y) in _NUMBER:
            d = dtypes.scalar_result(x.dtype, y)
            out = opdef(x if d is x.dtype else cast(x, d), y)
            return _weak(out) if x._weak else out
        return _binary(opdef, x, _to_tensor(y))
    if ty:
        if type(x) in _NUMBER:
            d = dtypes.scalar_result(y.dtype, x)
            out = opdef(x, y if d is y.dtype else cast(y, d))
            return _weak(out) if y._weak else out
        return _binary(opdef, _to_tensor(x), y)
    return _binary(opdef, _to_tensor(x), y)


def _weak(out: Any) -> Any:
    """``out`` (a symbolic result of weak operands) marked weak."""
    out._weak = True
    return out


def _binary_float(opdef, x: Any, y: Any):
    """Like ``_binary`` but integer results become the default float (true division)."""
    if isinstance(x, TensorLike) and not x.dtype.is_floating:
        x = _cast_keeping_weak(x, dtypes.get_default_dtype())
    elif isinstance(y, TensorLike) and not y.dtype.is_floating and not isinstance(x, TensorLike):
        y = _cast_keeping_weak(y, dtypes.get_default_dtype())
    return _binary(opdef, x, y)


def _cast_keeping_weak(x: Any, dtype: Any) -> Any:
    out = cast(x, dtype)
    return _weak(out) if x._weak else out


def _binary_spec(x, y):
    return Spec(broadcast(x, y, op="elementwise"), _result_dtype(x, y))


def _result_dtype(x, y):
    if not hasattr(x, "dtype"):
        return dtypes.scalar_result(dtype_of(y), x)
    if not hasattr(y, "dtype"):
        return dtypes.scalar_result(dtype_of(x), y)
    return dtypes.promote(dtype_of(x), dtype_of(y))


def _compare_spec(x, y):
    return Spec(broadcast(x, y, op="compare"), dtypes.bool_)


def _same_spec(x, **attrs):
    return Spec(shape_of(x), dtype_of(x))


def _bool_spec(x):
    return Spec(shape_of(x), dtypes.bool_)


def _grads(x, y, gx, gy, first: int = 0):
    """Gradients of a binary op (inputs ``first`` and ``first + 1``), reduced to the inputs'
    shapes; ``gx``/``gy`` are thunks, called only for inputs that need a gradient."""
    return (
        reduce_as(gx(), x) if isinstance(x, TensorLike) and needs_grad(first) else None,
        reduce_as(gy(), y) if isinstance(y, TensorLike) and needs_grad(first + 1) else None,
    )


# ---- arithmetic ---------------------------------------------------------------------------


@op("elementwise_add")
class Add:
    fresh = True

    infer = _binary_spec

    expr = "{x} + {y}"

    def grad(g, out, x, y):
        return _grads(x, y, lambda: g, lambda: g)


@op("elementwise_sub")
class Subtract:
    fresh = True

    infer = _binary_spec

    expr = "{x} - {y}"

    def grad(g, out, x, y):
        return _grads(x, y, lambda: g, lambda: -g)


@op("elementwise_mul")
class Multiply:
    fresh = True

    infer = _binary_spec

    expr = "{x} * {y}"

    def grad(g, out, x, y):
        return _grads(x, y, lambda: g * y, lambda: g * x)


@op("elementwise_div")
class Divide:
    fresh = True

    infer = _binary_spec

    expr = "{x} / {y}"

    def grad(g, out, x, y):
        return _grads(x, y, lambda: g / y, lambda: -g * out / y)


@op("elementwise_floordiv")
class FloorDivide:
    infer = _binary_spec

    expr = "{x} // {y}"

    def grad(g, out, x, y):
        return _grads(x, y, lambda: g * 0, lambda: g * 0)


@op("elementwise_mod")
class Mod:
    infer = _binary_spec

    expr = "{x} % {y}"

    def grad(g, out, x, y):
        return _grads(x, y, lambda: g, lambda: -g * FloorDivide(x, y))


@op("elementwise_pow")
class ElementwisePow:
    infer = _binary_spec

    expr = "{x} ** {y}"

    def grad(g, out, x, y):
        return _grads(
            x,
            y,
            lambda: g * y * ElementwisePow(x, y - 1),
            lambda: g * out * (log(x) if isinstance(x, TensorLike) else math.log(x)),
        )


@op("pow")
class Pow:
    """``x ** factor`` for a Python-number factor."""

    def infer(x, factor):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, factor):
        if factor == 2:
            return xp.multiply(x, x)
        return xp.pow(x, factor)

    def grad(g, out, x, factor):
        if factor == 2:
            return g * x * 2.0
        return g * factor * Pow(x, factor=factor - 1)


@op("elementwise_max")
class Maximum:
    fresh = True

    infer = _binary_spec

    expr = "xp.maximum({x}, {y})"

    def grad(g, out, x, y):
        mask = greater_than(x, y)
        zero = g * 0
        return _grads(x, y, lambda: where(mask, g, zero), lambda: where(mask, zero, g))


@op("elementwise_min")
class Minimum:
    fresh = True

    infer = _binary_spec

    expr = "xp.minimum({x}, {y})"

    def grad(g, out, x, y):
        mask = less_than(x, y)
        zero = g * 0
        return _grads(x, y, lambda: where(mask, g, zero), lambda: where(mask, zero, g))


@op("atan2")
class Atan2:
    infer = _binary_spec

    def kernel(xp, x, y):
        return xp.atan2(x, y)

    def grad(g, out, x, y):
        d = x * x + y * y
        return _grads(x, y, lambda: g * y / d, lambda: -g * x / d)


def add(x: Any, y: Any, name: str | None = None):
    """``x + y`` with broadcasting."""
    return _binary(Add, x, y)


def subtract(x: Any, y: Any, name: str | None = None):
    """``x - y`` with broadcasting."""
    return _binary(Subtract, x, y)


def multiply(x: Any, y: Any, name: str | None = None):
    """``x * y`` with broadcasting."""
    return _binary(Multiply, x, y)


def divide(x: Any, y: Any, name: str | None = None):
    """True division ``x / y``; integer inputs give the default float dtype."""
    return _binary_float(Divide, x, y)


def floor_divide(x: Any, y: Any, name: str | None = None):
    """``x // y`` (rounds toward negative infinity, as Python does)."""
    return _binary(FloorDivide, x, y)


def mod(x: Any, y: Any, name: str | None = None):
    """``x % y`` with the sign of ``y``, as Python does."""
    return _binary(Mod, x, y)


remainder = floor_mod = mod


def pow(x: Any, y: Any, name: str | None = None):
    """``x ** y``; ``y`` may be a Python number or a tensor."""
    if isinstance(x, TensorLike) and type(y) in _NUMBER and not isinstance(y, bool):
        if isinstance(y, float) and not x.dtype.is_floating:
            x = cast(x, dtypes.get_default_dtype())
        return Pow(x, factor=y)
    return _binary(ElementwisePow, x, y)


def maximum(x: Any, y: Any, name: str | None = None):
    """Elementwise maximum."""
    return _binary(Maximum, x, y)


def minimum(x: Any, y: Any, name: str | None = None):
    """Elementwise minimum."""
    return _binary(Minimum, x, y)


fmax, fmin = maximum, minimum


def atan2(x: Any, y: Any, name: str | None = None):
    """Elementwise arctangent of ``x / y`` using the signs of both."""
    return _binary_float(Atan2, x, y)


def scale(
    x: Any,
    scale: float = 1.0,
    bias: float = 0.0,
    bias_after_scale: bool = True,
    act: Any = None,
    name: str | None = None,
):
    """``x * scale + bias`` (or ``(x + bias) * scale``)."""
    return x * scale + bias if bias_after_scale else (x + bias) * scale


def lerp(x: Any, y: Any, weight: Any, name: str | None = None):
    """``x + weight * (y - x)``."""
    return x + weight * (y - x)


# ---- unary math ------------------------------------------------------------------------------


def _unary(name: str, fn_name: str, grad_fn, floating: bool = True):
    """Define and register a unary op computed by ``xp.<fn_name>``."""

    def kernel(xp, x):
        return getattr(xp, fn_name)(x)

    cls = type(
        name,
        (),
        {
            "infer": _same_spec,
            "kernel": kernel,
            "grad": grad_fn,
            "__doc__": f"Elementwise {fn_name}.",
        },
    )
    return op(name)(cls), floating


def _float_input(x: Any):
    if isinstance(x, TensorLike) and not x.dtype.is_floating:
        return cast(x, dtypes.get_default_dtype())
    return x


_UNARY = {
    "abs": _unary("abs", "abs", lambda g, out, x: g * sign(x), floating=False),
    "neg": _unary("neg", "negative", lambda g, out, x: -g, floating=False),
    "exp": _unary("exp", "exp", lambda g, out, x: g * out),
    "expm1": _unary("expm1", "expm1", lambda g, out, x: g * (out + 1.0)),
    "log": _unary("log", "log", lambda g, out, x: g / x),
    "log2": _unary("log2", "log2", lambda g, out, x: g / (x * 0.6931471805599453)),
    "log10": _unary("log10", "log10", lambda g, out, x: g / (x * 2.302585092994046)),
    "log1p": _unary("log1p", "log1p", lambda g, out, x: g / (x + 1.0)),
    "sqrt": _unary("sqrt", "sqrt", lambda g, out, x: g * 0.5 / out),
    "square": _unary("square", "square", lambda g, out, x: g * x * 2.0, floating=False),
    "sin": _unary("sin", "sin", lambda g, out, x: g * cos(x)),
    "cos": _unary("cos", "cos", lambda g, out, x: -g * sin(x)),
    "tan": _unary("tan", "tan", lambda g, out, x: g * (out * out + 1.0)),
    "asin": _unary("asin", "asin", lambda g, out, x: g * rsqrt(1.0 - x * x)),
    "acos": _unary("acos", "acos", lambda g, out, x: -g * rsqrt(1.0 - x * x)),
    "atan": _unary("atan", "atan", lambda g, out, x: g / (x * x + 1.0)),
    "sinh": _unary("sinh", "sinh", lambda g, out, x: g * cosh(x)),
    "cosh": _unary("cosh", "cosh", lambda g, out, x: g * sinh(x)),
    "tanh": _unary("tanh", "tanh", lambda g, out, x: g * (1.0 - out * out)),
    "erf": _unary("erf", "erf", lambda g, out, x: g * 1.1283791670955126 * exp(-x * x)),
    "sign": _unary("sign", "sign", lambda g, out, x: g * 0, floating=False),
    "floor": _unary("floor", "floor", lambda g, out, x: g * 0, floating=False),
    "ceil": _unary("ceil", "ceil", lambda g, out, x: g * 0, floating=False),
    "round": _unary("round", "round", lambda g, out, x: g * 0, floating=False),
    "trunc": _unary("trunc", "trunc", lambda g, out, x: g * 0, floating=False),
}


@op("rsqrt")
class Rsqrt:
    infer = _same_spec

    def kernel(xp, x):
        return 1.0 / xp.sqrt(x)

    def grad(g, out, x):
        return g * out * out * out * -0.5


@op("reciprocal")
class Reciprocal:
    infer = _same_spec

    def kernel(xp, x):
        return 1.0 / x

    def grad(g, out, x):
        return -g * out * out


@op("sigmoid")
class Sigmoid:
    infer = _same_spec

    def kernel(xp, x):
        # split by sign so exp never overflows
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def grad(g, out, x):
        return g * out * (1.0 - out)


@op("relu")
class Relu:
    fresh = True

    infer = _same_spec
    expr = "xp.maximum({x}, 0)"

    def grad(g, out, x):
        return ReluGrad(g, out)


@op("relu_grad")
class ReluGrad:
    """``g`` where ``out > 0``, else 0 (the backward of relu, one kernel)."""

    fresh = True

    def infer(g, out):
        return Spec(shape_of(g), dtype_of(g))

    def kernel(xp, g, out):
        return g * xp.astype(out > 0, g.dtype)

    def grad(gg, out, g, relu_out):
        return ReluGrad(gg, relu_out), None


@op("clip")
class Clip:
    def infer(x, min, max):
        return Spec(shape_of(x), dtype_of(x))

    def kernel(xp, x, min, max):
        return xp.clip(x, min, max)

    def grad(g, out, x, min, max):
        lo = x >= min if min is not None else None
        hi = x <= max if max is not None else None
        inside = lo if hi is None else (hi if lo is None else logical_and(lo, hi))
        if inside is None:
            return g
        return where(inside, g, g * 0)


def _make_public(name: str):
    opdef, floating = _UNARY[name]

    def fn(x: Any, name: str | None = None):
        return opdef(_float_input(x) if floating else x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}``" + (" (integers become float32)." if floating else ".")
    return fn


abs = _make_public("abs")
neg = _make_public("neg")
exp = _make_public("exp")
expm1 = _make_public("expm1")
log = _make_public("log")
log2 = _make_public("log2")
log10 = _make_public("log10")
log1p = _make_public("log1p")
sqrt = _make_public("sqrt")
square = _make_public("square")
sin = _make_public("sin")
cos = _make_public("cos")
tan = _make_public("tan")
asin = _make_public("asin")
acos = _make_public("acos")
atan = _make_public("atan")
sinh = _make_public("sinh")
cosh = _make_public("cosh")
tanh = _make_public("tanh")
erf = _make_public("erf")
sign = _make_public("sign")
floor = _make_public("floor")
ceil = _make_public("ceil")
round = _make_public("round")
trunc = _make_public("trunc")


def rsqrt(x: Any, name: str | None = None):
    """``1 / sqrt(x)``."""
    return Rsqrt(_float_input(x))


def reciprocal(x: Any, name: str | None = None):
    """``1 / x``."""
    return Reciprocal(_float_input(x))


def sigmoid(x: Any, name: str | None = None):
    """``1 / (1 + exp(-x))``, computed without overflow."""
    return Sigmoid(_float_input(x))


def relu(x: Any, name: str | None = None):
    """``max(x, 0)``."""
    return Relu(x)


def _traced(v: Any) -> bool:
    return isinstance(v, TensorLike) and not isinstance(v, Tensor)


def clip(x: Any, min: Any = None, max: Any = None, name: str | None = None):
    """Limit values to ``[min, max]`` (either bound may be None, a number or a 1-element
    tensor; a traced bound becomes ``maximum``/``minimum`` ops; gradients reach ``x`` only,
    as eagerly)."""
    if _traced(min) or _traced(max):

        def bound(v):
            return cast(v.detach(), x.dtype).reshape([]) if isinstance(v, TensorLike) else v

        out = x if min is None else maximum(x, bound(min))
        return out if max is None else minimum(out, bound(max))
    min = min.item() if isinstance(min, TensorLike) else min
    max = max.item() if isinstance(max, TensorLike) else max
    if min is None and max is None:
        return assign(x)
    if not x.dtype.is_floating:
        min = None if min is None else int(min)
        max = None if max is None else int(max)
    else:
        min = None if min is None else float(min)
        max = None if max is None else float(max)
    return Clip(x, min=min, max=max)


# ---- comparisons and logic ---------------------------------------------------------------


def _no_grad_binary(name: str, expr: str, infer=_compare_spec):
    return op(name)(type(name, (), {"infer": infer, "expr": expr, "grad": None}))


Equal = _no_grad_binary("equal", "{x} == {y}")
NotEqual = _no_grad_binary("not_equal", "{x} != {y}")
LessThan = _no_grad_binary("less_than", "{x} < {y}")
LessEqual = _no_grad_binary("less_equal", "{x} <= {y}")
GreaterThan = _no_grad_binary("greater_than", "{x} > {y}")
GreaterEqual = _no_grad_binary("greater_equal", "{x} >= {y}")
LogicalAnd = _no_grad_binary("logical_and", "xp.logical_and({x}, {y})")
LogicalOr = _no_grad_binary("logical_or", "xp.logical_or({x}, {y})")
LogicalXor = _no_grad_binary("logical_xor", "xp.logical_xor({x}, {y})")
BitwiseAnd = _no_grad_binary("bitwise_and", "{x} & {y}", _binary_spec)
BitwiseOr = _no_grad_binary("bitwise_or", "{x} | {y}", _binary_spec)
BitwiseXor = _no_grad_binary("bitwise_xor", "{x} ^ {y}", _binary_spec)


def _no_grad_unary(name: str, fn_name: str, infer):
    def kernel(xp, x):
        return getattr(xp, fn_name)(x)

    return op(name)(type(name, (), {"infer": infer, "kernel": kernel, "grad": None}))


LogicalNot = _no_grad_unary("logical_not", "logical_not", _bool_spec)
BitwiseNot = _no_grad_unary("bitwise_not", "bitwise_invert", _same_spec)
IsNan = _no_grad_unary("isnan", "isnan", _bool_spec)
IsFinite = _no_grad_unary("isfinite", "isfinite", _bool_spec)
IsInf = _no_grad_unary("isinf", "isinf", _bool_spec)


def equal(x: Any, y: Any, name: str | None = None):
    """Elementwise ``x == y`` (bool)."""
    return _binary(Equal, x, y)


def not_equal(x: Any, y: Any, name: str | None = None):
    """Elementwise ``x != y`` (bool)."""
    return _binary(NotEqual, x, y)


def less_than(x: Any, y: Any, name: str | None = None):
    """Elementwise ``x < y`` (bool)."""
    return _binary(LessThan, x, y)


def less_equal(x: Any, y: Any, name: str | None = None):
    """Elementwise ``x <= y`` (bool)."""
    return _binary(LessEqual, x, y)


def greater_than(x: Any, y: Any, name: str | None = None):
    """Elementwise ``x > y`` (bool)."""
    return _binary(GreaterThan, x, y)


def greater_equal(x: Any, y: Any, name: str | None = None):
    """Elementwise ``x >= y`` (bool)."""
    return _binary(GreaterEqual, x, y)


def _as_bool(x: Any):
    if isinstance(x, TensorLike):
        return x if x.dtype == dtypes.bool_ else cast(x, dtypes.bool_)
    from autostatic_runtime.creation import to_tensor

    return to_tensor(x, dtype="bool")


def logical_and(x: Any, y: Any, out: Any = None, name: str | None = None):
    """Elementwise ``x and y`` (inputs are read as booleans)."""
    return LogicalAnd(_as_bool(x), _as_bool(y))


def logical_or(x: Any, y: Any, out: Any = None, name: str | None = None):
    """Elementwise ``x or y`` (inputs are read as booleans)."""
    return LogicalOr(_as_bool(x), _as_bool(y))


def logical_xor(x: Any, y: Any, out: Any = None, name: str | None = None):
    """Elementwise exclusive or (inputs are read as booleans)."""
    return LogicalXor(_as_bool(x), _as_bool(y))


def logical_not(x: Any, out: Any = None, name: str | None = None):
    """Elementwise ``not x`` (input read as booleans)."""
    return LogicalNot(_as_bool(x))


def _require_int_or_bool(name: str, *values: Any) -> None:
    for v in values:
        if isinstance(v, TensorLike) and v.dtype.is_floating:
            raise DTypeError(
                name, f"expects integer or bool tensors, got {v.dtype}", user_location()
            )


def bitwise_and(x: Any, y: Any, out: Any = None, name: str | None = None):
    """Bitwise ``x & y`` of integer (or bool) tensors."""
    _require_int_or_bool("bitwise_and", x, y)
    return _binary(BitwiseAnd, x, y)


def bitwise_or(x: Any, y: Any, out: Any = None, name: str | None = None):
    """Bitwise ``x | y`` of integer (or bool) tensors."""
    _require_int_or_bool("bitwise_or", x, y)
    return _binary(BitwiseOr, x, y)


def bitwise_xor(x: Any, y: Any, out: Any = None, name: str | None = None):
    """Bitwise ``x ^ y`` of integer (or bool) tensors."""
    _require_int_or_bool("bitwise_xor", x, y)
    return _binary(BitwiseXor, x, y)


def bitwise_not(x: Any, out: Any = None, name: str | None = None):
    """Bitwise ``~x`` of an integer (or bool) tensor."""
    _require_int_or_bool("bitwise_not", x)
    return BitwiseNot(x)


def isnan(x: Any, name: str | None = None):
    """True where ``x`` is NaN."""
    return IsNan(x)


def isfinite(x: Any, name: str | None = None):
    """True where ``x`` is neither infinite nor NaN."""
    return IsFinite(x)


def isinf(x: Any, name: str | None = None):
    """True where ``x`` is +inf or -inf."""
    return IsInf(x)


def isclose(
    x: Any,
    y: Any,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
    name: str | None = None,
):
    """Elementwise ``|x - y| <= atol + rtol * |y|``."""
    close = less_equal(abs(x - y), atol + rtol * abs(y))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(x), isnan(y)))
    return close


def allclose(
    x: Any,
    y: Any,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool = False,
    name: str | None = None,
):
    """A bool tensor: are all elements close?"""
    from autostatic_runtime.ops.reduce import all as all_

    return all_(isclose(x, y, rtol, atol, equal_nan))


def equal_all(x: Any, y: Any, name: str | None = None):
    """A bool tensor: same shape and all elements equal?"""
    from autostatic_runtime.creation import to_tensor
    from autostatic_runtime.ops.reduce import all as all_

    if list(x.shape) != list(y.shape):
        return to_tensor(False)
    return all_(equal(x, y))


# ---- selection and conversion ----------------------------------------------------------


@op("where")
class Where:
    def infer(condition, x, y):
        return Spec(broadcast(condition, x, y, op="where"), _result_dtype(x, y))

    def kernel(xp, condition, x, y):
        return xp.where(condition, x, y)

    def grad(g, out, condition, x, y):
        zero = g * 0
        gx, gy = _grads(
            x, y, lambda: Where(condition, g, zero), lambda: Where(condition, zero, g), first=1
        )
        return None, gx, gy


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None):
    """Elements of ``x`` where ``condition`` holds, else of ``y``.

    With only ``condition``, returns the indices of its true elements (``nonzero``).
    """
    if x is None and y is None:
        from autostatic_runtime.ops.indexing import nonzero

        return nonzero(condition, as_tuple=True)
    condition = _as_bool(condition)
    if isinstance(x, TensorLike) and isinstance(y, TensorLike) and x.dtype != y.dtype:
        d = dtypes.promote(x.dtype, y.dtype)
        x, y = cast(x, d), cast(y, d)
    elif isinstance(x, TensorLike) and not isinstance(y, TensorLike):
        y = _scalar_like(y, x)
    elif isinstance(y, TensorLike) and not isinstance(x, TensorLike):
        x = _scalar_like(x, y)
    elif not isinstance(x, TensorLike):
        from autostatic_runtime.creation import to_tensor

        x, y = to_tensor(x), to_tensor(y)
    return Where(condition, x, y)


def _scalar_like(v: Any, like: Any):
    from autostatic_runtime.creation import to_tensor

    d = dtypes.scalar_result(like.dtype, v) if type(v) in _NUMBER else None
    return to_tensor(v, dtype=d or like.dtype)


@op("cast")
class Cast:
    def infer(x, dtype):
        return Spec(shape_of(x), dtypes.convert_dtype(dtype))

    def kernel(xp, x, dtype):
        return xp.astype(x, xp.to_dtype(dtype))

    def grad(g, out, x, dtype):
        if not dtype_of(x).is_floating:
            return None
        return Cast(g, dtype=dtype_of(x))


def cast(x: Any, dtype: Any):
    """``x`` converted to ``dtype`` (a copy; gradients flow between float types)."""
    d = dtypes.convert_dtype(dtype)
    if not isinstance(x, TensorLike):
        from autostatic_runtime.creation import to_tensor

        return to_tensor(x, dtype=d)
    return Cast(x, dtype=d)


@op("assign")
class Assign:
    infer = _same_spec

    def kernel(xp, x):
        return xp.asarray(x, copy=True)

    def grad(g, out, x):
        return g


def assign(x: Any, output: Any = None):
    """A copy of ``x``."""
    return Assign(x)


def increment(x: Any, value: float = 1.0, name: str | None = None):
    """``x + value`` (Paddle's ``increment``)."""
    return x + value

"""Lowerings of elementwise math, comparison, logic and casts."""

from __future__ import annotations

import math

from autostatic.onnx.graph import onnx_dtype
from autostatic.onnx.lowerings import lowers
from autostatic_runtime import dtypes

_UNARY = {
    "abs": "Abs", "acos": "Acos", "asin": "Asin", "atan": "Atan", "ceil": "Ceil",
    "cos": "Cos", "cosh": "Cosh", "erf": "Erf", "exp": "Exp", "floor": "Floor",
    "log": "Log", "neg": "Neg", "reciprocal": "Reciprocal", "sigmoid": "Sigmoid",
    "sign": "Sign", "sin": "Sin", "sinh": "Sinh", "sqrt": "Sqrt", "tan": "Tan",
    "tanh": "Tanh", "round": "Round", "relu": "Relu", "isnan": "IsNaN", "isinf": "IsInf",
    "logical_not": "Not", "assign": "Identity", "stack_array": "Identity",
    "print": "Identity",
}  # fmt: skip

_ARITHMETIC = {
    "elementwise_add": "Add", "elementwise_sub": "Sub", "elementwise_mul": "Mul",
    "elementwise_div": "Div", "elementwise_max": "Max", "elementwise_min": "Min",
    "elementwise_pow": "Pow",
}  # fmt: skip

_COMPARE = {
    "equal": "Equal", "greater_than": "Greater", "greater_equal": "GreaterOrEqual",
    "less_than": "Less", "less_equal": "LessOrEqual",
}  # fmt: skip

_LOGIC = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}
_BITWISE = {"bitwise_and": ("And", "BitwiseAnd"), "bitwise_or": ("Or", "BitwiseOr"),
            "bitwise_xor": ("Xor", "BitwiseXor")}  # fmt: skip


@lowers(*_UNARY)
def _unary(g, op):
    g.node(_UNARY[op.type], [g.x(op, 0)], outputs=[g.out(0)])


@lowers(*_ARITHMETIC)
def _arithmetic(g, op):
    out = op.outputs[0].dtype
    g.node(_ARITHMETIC[op.type], [g.x(op, 0, out), g.x(op, 1, out)], outputs=[g.out(0)])


def compare_dtype(op):
    """The dtype both operands of a comparison are brought to."""
    kinds = [v.dtype for v in op.inputs if hasattr(v, "dtype")]
    if len(kinds) == 2:
        return dtypes.promote(*kinds)
    literal = next(v.value for v in op.inputs if not hasattr(v, "dtype"))
    return dtypes.scalar_result(kinds[0], literal)


@lowers(*_COMPARE, "not_equal")
def _compare(g, op):
    dt = compare_dtype(op)
    a, b = g.x(op, 0, dt), g.x(op, 1, dt)
    if op.type == "not_equal":
        g.node("Not", [g.node("Equal", [a, b])], outputs=[g.out(0)])
    else:
        g.node(_COMPARE[op.type], [a, b], outputs=[g.out(0)])


@lowers(*_LOGIC)
def _logic(g, op):
    b = dtypes.bool_
    g.node(_LOGIC[op.type], [g.x(op, 0, b), g.x(op, 1, b)], outputs=[g.out(0)])


def _needs_18(op, opset):
    if op.outputs[0].dtype != dtypes.bool_ and opset < 18:
        return "bitwise ops on integers need opset 18"
    return None


@lowers(*_BITWISE, check=_needs_18)
def _bitwise(g, op):
    out = op.outputs[0].dtype
    kind = _BITWISE[op.type][0 if out == dtypes.bool_ else 1]
    g.node(kind, [g.x(op, 0, out), g.x(op, 1, out)], outputs=[g.out(0)])


@lowers("bitwise_not", check=_needs_18)
def _bitwise_not(g, op):
    kind = "Not" if op.outputs[0].dtype == dtypes.bool_ else "BitwiseNot"
    g.node(kind, [g.x(op, 0)], outputs=[g.out(0)])


@lowers("assert")
def _assert(g, op):
    """Nothing: ONNX has no assertion (an ``assert`` has no outputs, so it is pruned as dead
    code before it gets here; docs/deployment.md says asserts are left out)."""


@lowers("cast")
def _cast(g, op):
    g.node("Cast", [g.x(op, 0)], outputs=[g.out(0)], to=onnx_dtype(op.attrs["dtype"]))


@lowers("elementwise_floordiv")
def _floordiv(g, op):
    dt = op.outputs[0].dtype
    x, y = g.x(op, 0, dt), g.x(op, 1, dt)
    if dtypes.kind(dt) == 2:
        g.node("Floor", [g.node("Div", [x, y])], outputs=[g.out(0)])
        return
    # integer Div truncates; Python floors: one less where the signs differ and y ∤ x
    q = g.node("Div", [x, y])
    inexact = g.node("Not", [g.node("Equal", [g.node("Mul", [q, y]), x])])
    zero = g.scalar(0, dt)
    signs = g.node("Xor", [g.node("Less", [x, zero]), g.node("Less", [y, zero])])
    fix = g.node("Cast", [g.node("And", [inexact, signs])], to=onnx_dtype(dt))
    g.node("Sub", [q, fix], outputs=[g.out(0)])


@lowers("elementwise_mod")
def _mod(g, op):
    dt = op.outputs[0].dtype
    x, y = g.x(op, 0, dt), g.x(op, 1, dt)
    if dtypes.kind(dt) != 2:
        g.node("Mod", [x, y], outputs=[g.out(0)], fmod=0)  # integer Mod: Python's sign rule
        return
    r = g.node("Mod", [x, y], fmod=1)  # C's fmod; Python's result has the divisor's sign
    zero = g.scalar(0, dt)
    differ = g.node("Xor", [g.node("Less", [r, zero]), g.node("Less", [y, zero])])
    fix = g.node("And", [differ, g.node("Not", [g.node("Equal", [r, zero])])])
    g.node("Where", [fix, g.node("Add", [r, y]), r], outputs=[g.out(0)])


@lowers("pow")
def _pow(g, op):
    dt = op.outputs[0].dtype
    g.node("Pow", [g.x(op, 0, dt), g.scalar(op.attrs["factor"], dt)], outputs=[g.out(0)])


@lowers("atan2")
def _atan2(g, op):
    dt = op.outputs[0].dtype
    a, b = g.x(op, 0, dt), g.x(op, 1, dt)
    zero = g.scalar(0, dt)
    base = g.node("Atan", [g.node("Div", [a, b])])
    pi = g.node("Where", [g.node("Less", [a, zero]), g.scalar(-math.pi, dt), g.scalar(math.pi, dt)])
    left = g.node("Add", [base, pi])
    half = g.node("Mul", [g.node("Sign", [a]), g.scalar(math.pi / 2, dt)])
    at_zero = g.node("Where", [g.node("Equal", [b, zero]), half, base])
    g.node("Where", [g.node("Less", [b, zero]), left, at_zero], outputs=[g.out(0)])


def _shifted_log(g, op, base: float | None, plus_one: bool):
    dt = op.outputs[0].dtype
    x = g.x(op, 0, dt)
    if plus_one:
        x = g.node("Add", [x, g.scalar(1, dt)])
    if base is None:
        return g.node("Log", [x], outputs=[g.out(0)])
    g.node("Div", [g.node("Log", [x]), g.scalar(math.log(base), dt)], outputs=[g.out(0)])


@lowers("log2", "log10", "log1p")
def _logs(g, op):
    _shifted_log(g, op, {"log2": 2.0, "log10": 10.0}.get(op.type), op.type == "log1p")


@lowers("expm1")
def _expm1(g, op):
    dt = op.outputs[0].dtype
    g.node("Sub", [g.node("Exp", [g.x(op, 0)]), g.scalar(1, dt)], outputs=[g.out(0)])


@lowers("rsqrt")
def _rsqrt(g, op):
    g.node("Reciprocal", [g.node("Sqrt", [g.x(op, 0)])], outputs=[g.out(0)])


@lowers("square")
def _square(g, op):
    x = g.x(op, 0)
    g.node("Mul", [x, x], outputs=[g.out(0)])


@lowers("trunc")
def _trunc(g, op):
    x = g.x(op, 0)
    neg = g.node("Less", [x, g.scalar(0, op.outputs[0].dtype)])
    g.node("Where", [neg, g.node("Ceil", [x]), g.node("Floor", [x])], outputs=[g.out(0)])


@lowers("isfinite")
def _isfinite(g, op):
    x = g.x(op, 0)
    bad = g.node("Or", [g.node("IsNaN", [x]), g.node("IsInf", [x])])
    g.node("Not", [bad], outputs=[g.out(0)])


@lowers("clip")
def _clip(g, op):
    dt = op.outputs[0].dtype
    lo, hi = op.attrs.get("min"), op.attrs.get("max")
    bounds = ["" if v is None else g.scalar(v, dt) for v in (lo, hi)]
    g.node("Clip", [g.x(op, 0, dt), *bounds], outputs=[g.out(0)])


@lowers("where")
def _where(g, op):
    dt = op.outputs[0].dtype
    cond = g.x(op, 0, dtypes.bool_)
    g.node("Where", [cond, g.x(op, 1, dt), g.x(op, 2, dt)], outputs=[g.out(0)])


@lowers("sum")
def _sum(g, op):
    dt = op.outputs[0].dtype
    total = g.x(op, 0, dt)
    for i in range(1, len(op.inputs)):  # Add, not Sum: Sum takes floats only
        total = g.node("Add", [total, g.x(op, i, dt)])
    g.node("Identity", [total], outputs=[g.out(0)])

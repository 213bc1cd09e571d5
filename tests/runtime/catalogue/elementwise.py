"""Samples: elementwise arithmetic, math, comparison and logic ops; broadcasting; creation."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime import creation
from tests.runtime.harness import B, F, I, Sample

S = Sample

_BINARY = [
    ("elementwise_add", lambda x, y: x + y, {}),
    ("elementwise_sub", lambda x, y: x - y, {}),
    ("elementwise_mul", lambda x, y: x * y, {}),
    ("elementwise_div", lambda x, y: x / y, {"high": 3.0}),
    ("elementwise_max", rt.maximum, {}),
    ("elementwise_min", rt.minimum, {}),
    ("atan2", rt.atan2, {}),
]

SAMPLES = []
for _name, _fn, _kw in _BINARY:
    _pos = _name in ("elementwise_div", "atan2")  # keep away from the singular point
    _y = (F(4, low=0.5, high=2.0), F(1, 3, low=0.5, high=2.0)) if _pos else (F(4), F(1, 3))
    _distinct = _name.endswith(("max", "min"))
    SAMPLES.append(S(_name, _fn, [F(3, 4), _y[0]], distinct=_distinct))
    SAMPLES.append(
        S(_name, _fn, [F(2, 1), _y[1]], name=f"{_name}_both_broadcast", distinct=_distinct)
    )

SAMPLES += [
    S("elementwise_add", lambda x: x + 1, [F(3)], name="add_scalar"),
    S("elementwise_sub", lambda x: 2.0 - x, [F(3)], name="rsub_scalar"),
    S("elementwise_mul", lambda x: x * 3, [F(2, 3)], name="mul_scalar"),
    S("elementwise_div", lambda x: 1.0 / x, [F(3, low=0.5)], name="rdiv_scalar"),
    S(
        "elementwise_div",
        lambda x, y: x / y,
        [I(3, low=1), I(3, low=1)],
        grad=False,
        name="div_ints_is_float",
        also=("cast",),
    ),
    S("elementwise_floordiv", lambda x, y: x // y, [I(2, 3, low=-5), I(3, low=1)], grad=False),
    S(
        "elementwise_floordiv",
        lambda x, y: x // y,
        [F(2, 3), F(3, low=0.5)],
        grad=False,
        name="floordiv_float",
    ),
    # x / y stays inside (1, 2): away from the jumps of x % y at multiples of y
    S(
        "elementwise_mod",
        lambda x, y: x % y,
        [F(2, 3, low=2.1, high=3.9), F(3, low=2.0, high=2.05)],
    ),
    S(
        "elementwise_mod",
        lambda x, y: x % y,
        [I(4, low=-7, high=7), I(4, low=1)],
        grad=False,
        name="mod_int",
    ),
    S("elementwise_pow", lambda x, y: x**y, [F(3, low=0.5, high=2), F(3, low=-1, high=2)]),
    S("elementwise_pow", lambda x: 2.0**x, [F(3)], name="rpow_scalar"),
    S("pow", lambda x: x**2, [F(2, 3)]),
    S("pow", lambda x: x**3.5, [F(2, 3, low=0.2)], name="pow_fraction"),
    S("pow", lambda x: rt.pow(x, -1), [F(3, low=0.5)], name="pow_negative"),
    S("abs", rt.abs, [F(5, away=(0,))]),
    S("neg", lambda x: -x, [F(5)]),
    S("exp", rt.exp, [F(5)]),
    S("expm1", rt.expm1, [F(5)]),
    S("log", rt.log, [F(5, low=0.2, high=3)]),
    S("log2", rt.log2, [F(5, low=0.2, high=3)]),
    S("log10", rt.log10, [F(5, low=0.2, high=3)]),
    S("log1p", rt.log1p, [F(5, low=-0.5, high=3)]),
    S("sqrt", rt.sqrt, [F(5, low=0.2, high=3)]),
    S("rsqrt", rt.rsqrt, [F(5, low=0.2, high=3)]),
    S("square", rt.square, [F(5)]),
    S("reciprocal", rt.reciprocal, [F(5, low=0.5, high=3)]),
    S("sin", rt.sin, [F(5)]),
    S("cos", rt.cos, [F(5)]),
    S("tan", rt.tan, [F(5, low=-1, high=1)]),
    S("asin", rt.asin, [F(5, low=-0.9, high=0.9)]),
    S("acos", rt.acos, [F(5, low=-0.9, high=0.9)]),
    S("atan", rt.atan, [F(5)]),
    S("sinh", rt.sinh, [F(5)]),
    S("cosh", rt.cosh, [F(5)]),
    S("tanh", rt.tanh, [F(5)]),
    S("sigmoid", rt.sigmoid, [F(5, low=-30, high=30)]),
    S("erf", rt.erf, [F(5, away=(-0.5, 0.5))], rtol=1e-3, atol=1e-5),
    S("relu", rt.relu, [F(2, 3, away=(0,))]),
    S(
        "relu_grad",
        lambda x: rt.grad(rt.relu(x * x - 1).sum(), x, create_graph=True)[0],
        [F(2, 3, away=(-1, 1))],
    ),
    S("sign", rt.sign, [F(5, away=(0,))]),
    S("floor", rt.floor, [F(5, low=-1.9, high=1.9, away=(-1, 0, 1))]),
    S("ceil", rt.ceil, [F(5, low=-1.9, high=1.9, away=(-1, 0, 1))]),
    S("round", rt.round, [F(5, away=(-1.5, -0.5, 0.5, 1.5))]),
    S("trunc", rt.trunc, [F(5, low=-1.9, high=1.9, away=(-1, 0, 1))]),
    S("exp", rt.exp, [I(3)], grad=False, name="exp_int_is_float", also=("cast",)),
    S("clip", lambda x: rt.clip(x, -0.5, 0.7), [F(2, 4, away=(-0.5, 0.7))]),
    S("clip", lambda x: rt.clip(x, min=0.0), [F(6, away=(0,))], name="clip_min_only"),
    S("clip", lambda x: rt.clip(x, 1, 3), [I(6)], grad=False, name="clip_int"),
    S("equal", lambda x, y: x == y, [I(3, 4), I(4)], grad=False),
    S("not_equal", lambda x, y: x != y, [I(3, 4), I(4)], grad=False),
    S("less_than", lambda x, y: x < y, [F(3, 4), F(4)], grad=False),
    S("less_equal", lambda x: x <= 0.5, [F(3, 4)], grad=False),
    S("greater_than", lambda x, y: x > y, [F(3), F(3)], grad=False),
    S("greater_equal", lambda x, y: rt.greater_equal(x, y), [I(3), I(3)], grad=False),
    S("logical_and", lambda a, b: a & b, [B(3, 2), B(2)], grad=False),
    S("logical_or", lambda a, b: a | b, [B(3, 2), B(2)], grad=False),
    S("logical_xor", lambda a, b: a ^ b, [B(4), B(4)], grad=False),
    S("logical_not", lambda a: ~a, [B(4)], grad=False),
    S(
        "logical_and",
        lambda x: rt.logical_and(x, x > 2),
        [I(4)],
        grad=False,
        name="logical_and_of_ints",
    ),
    S("bitwise_and", lambda a, b: a & b, [I(4, high=8), I(4, high=8)], grad=False),
    S("bitwise_or", lambda a, b: a | b, [I(4, high=8), I(4, high=8)], grad=False),
    S("bitwise_xor", lambda a, b: a ^ b, [I(4, high=8), I(4, high=8)], grad=False),
    S("bitwise_not", lambda a: ~a, [I(4, high=8)], grad=False),
    S("isnan", lambda x: rt.isnan(rt.log(x)), [F(4)], grad=False, also=("log",)),
    S("isfinite", lambda x: rt.isfinite(1.0 / x), [F(4)], grad=False),
    S("isinf", lambda x: rt.isinf(x / 0.0), [F(4)], grad=False),
    S("where", lambda c, x, y: rt.where(c, x, y), [B(3, 1), F(3, 4), F(4)]),
    S("where", lambda x: rt.where(x > 0, x, 0.0), [F(5, away=(0,))], name="where_scalar"),
    S("cast", lambda x: x.astype("float64") * 2, [F(3)]),
    S("cast", lambda x: rt.cast(x, "int32"), [F(3)], grad=False, name="cast_to_int"),
    S("assign", lambda x: x.clone(), [F(3)]),
    S("reduce_as", lambda x: rt.ops.broadcast.reduce_as(x, rt.zeros([3, 1])), [F(2, 3, 4)]),
    S("expand_as", lambda x, y: rt.expand_as(x, y), [F(3, 1), F(2, 3, 4, grad=False)]),
    S("expand", lambda x: rt.broadcast_to(x, [2, 3, 4]), [F(3, 1)]),
    S("expand", lambda x: rt.expand(x, [2, -1, 4]), [F(3, 1)], name="expand_keep_dim"),
    S(
        "assign_value",
        lambda: creation.AssignValue(shape=(2, 2), dtype=rt.float32, values=(1.0, 2.0, 3.0, 4.0)),
        [],
    ),
    S("fill_constant", lambda: rt.full([2, 3], 1.5), []),
    S("fill_constant", lambda: rt.zeros([2], "int32"), [], name="zeros_int"),
    S("full_like", lambda x: rt.ones_like(x) + rt.zeros_like(x, "float32"), [F(2, 3)]),
    S("arange", lambda: rt.arange(1, 10, 2), []),
    S("arange", lambda: rt.arange(0.0, 1.0, 0.25), [], name="arange_float"),
    S("linspace", lambda: rt.linspace(0, 1, 5), []),
    S("eye", lambda: rt.eye(3, 4), []),
    S("uniform_random", lambda: rt.rand([2, 3]), []),
    S("gaussian_random", lambda: rt.randn([2, 3]), []),
    S("randint", lambda: rt.randint(0, 10, [4]), []),
    S("randperm", lambda: rt.randperm(6), []),
]

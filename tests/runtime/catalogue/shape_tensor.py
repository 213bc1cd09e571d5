"""Samples: ops whose shape, bounds or length come from a tensor (``ops/shape_tensor.py``),
and ``add_n``."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime.ops.shape_tensor import (
    ExpandDynamic,
    FillConstantDynamic,
    GaussianRandomDynamic,
    RandIntDynamic,
    Range,
    Slice,
    UniformRandomDynamic,
)
from tests.runtime.harness import F, I, Sample

S = Sample


def _i64(values):
    return rt.to_tensor(values, dtype="int64")


SAMPLES = [
    S(
        "fill_constant_dynamic",
        lambda: FillConstantDynamic(_i64([2, 3]), value=1.5, dtype="float32", static=(-1, 3)),
        [],
        grad=False,
    ),
    S(  # eagerly a fill_constant; in a static program a fill_constant_dynamic
        "fill_constant",
        lambda x: rt.zeros(rt.shape(x), "int32"),
        [F(2, 3)],
        grad=False,
        name="zeros_of_shape",
    ),
    S(
        "expand",
        lambda x: rt.expand(x[:1], [rt.shape(x)[0], 3]) * x,
        [F(4, 3)],
        name="expand_to_traced_dim",
    ),
    S(
        "tile",
        lambda x: rt.tile(x, [rt.shape(x)[1], 1]),
        [F(2, 3)],
        name="tile_traced_count",
    ),
    S(
        "getitem",
        lambda x: x[:, 1 : rt.shape(x)[1] - 1],
        [F(2, 5)],
        name="getitem_traced_bounds",
    ),
    S(
        "arange",
        lambda x: rt.arange(rt.shape(x)[0]),
        [F(4, 3)],
        grad=False,
        name="arange_traced_end",
    ),
    S(
        "expand_dynamic",
        lambda x: ExpandDynamic(x, _i64([4, 2, -1]), static=(-1, 2, -1)),
        [F(2, 3)],
    ),
    S(
        "expand_dynamic",
        lambda x: ExpandDynamic(x, _i64([3, 2]), static=(-1, -1)),
        [F(1, 2)],
        name="expand_dynamic_broadcasts_ones",
    ),
    S(
        "range",
        lambda: Range(_i64([1]), _i64(7), _i64([2]), dtype="int64"),
        [],
        grad=False,
    ),
    S(
        "range",
        lambda: Range(rt.to_tensor(0.5), rt.to_tensor(2.0), rt.to_tensor(0.5), dtype="float32"),
        [],
        grad=False,
        name="range_float",
    ),
    S(
        "slice",
        lambda x: Slice(x, _i64([1, 0]), _i64([3, -1]), axes=(0, 2), static=(-1, 4, -1)),
        [F(4, 4, 5)],
        also=("slice_grad",),
    ),
    S("getitem", lambda x: rt.slice(x, [1], [-3], [100]), [F(2, 5)], name="slice_api_clips"),
    S(
        "uniform_random_dynamic",
        lambda: UniformRandomDynamic(_i64([2, 3]), dtype="float32", static=(-1, 3), min=0.0,
                                     max=1.0),  # fmt: skip
        [],
        grad=False,
        static=False,
    ),
    S(
        "gaussian_random_dynamic",
        lambda: GaussianRandomDynamic(_i64([4]), dtype="float64", static=(-1,), mean=1.0, std=2.0),
        [],
        grad=False,
        static=False,
    ),
    S(
        "randint_dynamic",
        lambda: RandIntDynamic(_i64([2, 2]), dtype="int32", static=(2, -1), low=0, high=5),
        [],
        grad=False,
        static=False,
    ),
    S("sum", lambda x, y: rt.add_n([x, y, x]), [F(2, 3), F(2, 3)], also=("sum",)),
    S("sum", lambda x: rt.add_n(x), [F(3)], name="add_n_one"),
    S("sum", lambda x, y: rt.add_n([x, y]), [I(2, 2), I(2, 2)], grad=False, name="add_n_int"),
]

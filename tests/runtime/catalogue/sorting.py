"""Samples: sort, argsort, topk, kthvalue, median, unique, searchsorted."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime.ops.manipulation import ReshapeAs
from tests.runtime.catalogue.manipulation import grad_of
from tests.runtime.harness import F, I, Sample

S = Sample


def apart(x):
    """``x`` plus a scrambled ramp of step 5 (built from ops, so unknown static dims work):
    values in [-2, 2] then never tie, and sort in a fixed non-trivial order."""
    ramp = rt.cumsum(rt.ones_like(x))  # 1..N over the flattened x (N < 101)
    return x + ReshapeAs((ramp * 37.0) % 101.0 * 5.0, x)


SAMPLES = [
    S("argsort", lambda x: rt.sort(apart(x)), [F(3, 4)]),
    S(
        "argsort",
        lambda x: apart(x).sort(axis=0, descending=True),
        [F(3, 4)],
        name="sort_descending",
    ),
    S("argsort", lambda x: x.argsort(axis=1), [I(3, 4)], grad=False, name="argsort_ties"),
    S(
        "argsort",
        lambda x: rt.argsort(x, descending=True),
        [I(6, high=3)],
        grad=False,
        name="argsort_descending_ties",
    ),
    S("top_k_v2", lambda x: rt.topk(apart(x), 2), [F(3, 5)]),
    S(
        "top_k_v2",
        lambda x: apart(x).topk(2, axis=0, largest=False),
        [F(3, 4)],
        name="topk_smallest",
    ),
    S("top_k_v2", lambda x: rt.topk(x, 3), [I(6, high=3)], grad=False, name="topk_int_ties"),
    S("kthvalue", lambda x: rt.kthvalue(apart(x), 2, axis=1), [F(3, 5)]),
    S(
        "kthvalue",
        lambda x: rt.kthvalue(apart(x), 3, axis=0, keepdim=True),
        [F(4, 2)],
        name="kthvalue_keepdim",
    ),
    S("kthvalue", lambda x: apart(x).median(axis=1), [F(3, 4)], name="median_even"),
    S(
        "kthvalue",
        lambda x: rt.median(apart(x), keepdim=True),
        [F(3, 3)],
        name="median_flat_odd",
        also=("flatten", "reshape"),
    ),
    S("kthvalue", lambda x: rt.median(apart(x), axis=0, mode="min"), [F(4, 3)], name="median_min"),
    S("kthvalue", lambda x: rt.median(x), [I(5)], grad=False, name="median_int"),
    S("sort_grad", grad_of(lambda x: rt.sort(apart(x))), [F(2, 4)]),
    S(
        "sort_grad_grad",
        grad_of(lambda x: grad_of(lambda y: rt.topk(apart(y), 2)[0], 3)(x)[0]),
        [F(2, 4)],
    ),
    S("unique", lambda x: rt.unique(x, True, True, True), [I(8)], grad=False),
    S(
        "unique",
        lambda x: x.unique(return_inverse=True, axis=0),
        [I(5, 2, high=2)],
        grad=False,
        name="unique_rows",
    ),
    S(
        "unique",
        lambda x: rt.unique(x, return_counts=True, dtype="int32"),
        [F(2, 3)],
        grad=False,
        name="unique_float_int32",
    ),
    S(
        "unique_consecutive",
        lambda x: rt.unique_consecutive(x, True, True),
        [I(8, high=2)],
        grad=False,
    ),
    S("searchsorted", lambda s, v: rt.searchsorted(rt.sort(s), v), [F(5), F(2, 3)], grad=False),
    S(
        "searchsorted",
        lambda s, v: rt.searchsorted(rt.sort(s), v, right=True, out_int32=True),
        [I(2, 5), I(2, 3)],
        grad=False,
        name="searchsorted_batched",
    ),
    S(
        "searchsorted",
        lambda s, x: rt.bucketize(x, rt.sort(s)),
        [I(4), F(3)],
        grad=False,
        name="bucketize",
        also=("cast",),
    ),
]

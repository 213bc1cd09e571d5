"""Samples: reductions and cumulative ops."""

from __future__ import annotations

import autostatic_runtime as rt
from tests.runtime.harness import B, F, I, Sample

S = Sample

SAMPLES = [
    S("reduce_sum", lambda x: x.sum(), [F(3, 4)]),
    S("reduce_sum", lambda x: rt.sum(x, axis=1), [F(3, 4)], name="sum_axis"),
    S(
        "reduce_sum",
        lambda x: rt.sum(x, axis=[0, 2], keepdim=True),
        [F(2, 3, 4)],
        name="sum_axes_keepdim",
    ),
    S("reduce_sum", lambda x: rt.sum(x, axis=-1), [I(3, 4)], grad=False, name="sum_int"),
    S(
        "reduce_sum",
        lambda b: rt.sum(b),
        [B(5)],
        grad=False,
        name="sum_bool_is_int64",
        also=("cast",),
    ),
    S("reduce_mean", lambda x: x.mean(), [F(3, 4)]),
    S("reduce_mean", lambda x: rt.mean(x, axis=0, keepdim=True), [F(3, 4)], name="mean_axis"),
    S("reduce_max", lambda x: x.max(), [F(3, 4)], distinct=True),
    S(
        "reduce_max",
        lambda x: rt.max(x, axis=1, keepdim=True),
        [F(3, 4)],
        distinct=True,
        name="max_axis",
    ),
    S("reduce_min", lambda x: rt.min(x, axis=0), [F(3, 4)], distinct=True),
    S("reduce_prod", lambda x: rt.prod(x, axis=1), [F(2, 3, low=0.5, high=1.5)]),
    S("arg_max", lambda x: rt.argmax(x, axis=1), [F(3, 4)], grad=False, distinct=True),
    S("arg_max", lambda x: rt.argmax(x), [F(3, 4)], grad=False, distinct=True, name="argmax_flat"),
    S(
        "arg_min",
        lambda x: rt.argmin(x, axis=0, keepdim=True),
        [F(3, 4)],
        grad=False,
        distinct=True,
    ),
    S("reduce_all", lambda b: rt.all(b, axis=0), [B(3, 2)], grad=False),
    S("reduce_any", lambda b: rt.any(b), [B(3, 2)], grad=False),
    S("cumsum", lambda x: rt.cumsum(x, axis=1), [F(2, 4)]),
    S("cumsum", lambda x: rt.cumsum(x), [F(2, 3)], name="cumsum_flat", also=("reshape",)),
    S("cumprod", lambda x: rt.cumprod(x, dim=1), [F(2, 4, low=0.5, high=1.5)]),
    S("logsumexp", lambda x: rt.logsumexp(x, axis=1), [F(3, 4)]),
    S("logsumexp", lambda x: rt.logsumexp(x * 100.0), [F(3, 4)], name="logsumexp_large"),
    S("reduce_mean", lambda x: rt.var(x, axis=1), [F(3, 4)], name="var"),
    S("reduce_mean", lambda x: rt.std(x), [F(3, 4)], name="std", also=("sqrt",), distinct=True),
    S("reduce_sum", lambda x: rt.norm(x, p=2, axis=1), [F(3, 4, away=(0,))], name="norm2"),
    S("reduce_sum", lambda x: rt.norm(x, p=3), [F(3, 4, away=(0,))], name="norm3"),
    S("size", lambda x: rt.numel(x), [F(3, 4)], grad=False),
    S(
        "broadcast_reduced",
        lambda x: rt.grad(rt.sum(x * x, axis=1), x, create_graph=True)[0],
        [F(2, 3)],
    ),
]

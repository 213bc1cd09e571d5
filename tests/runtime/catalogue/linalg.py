"""Samples: matmul and its variants, einsum, cross, kron, trace, inverse, cholesky."""

from __future__ import annotations

import numpy as np

import autostatic_runtime as rt
from tests.runtime.catalogue.indexing import second_order
from tests.runtime.harness import F, I, Sample

S = Sample


def _spd(a):
    """A well-conditioned symmetric positive-definite matrix (batch) from ``a``."""
    n = a.shape[-1]
    return rt.matmul(a, a, transpose_y=True) + rt.to_tensor(np.eye(n) * n, dtype=a.dtype)


def _well_conditioned(a):
    n = a.shape[-1]
    return a + rt.to_tensor(np.eye(n) * 3 * n, dtype=a.dtype)  # diagonally dominant


SAMPLES = [
    S("matmul_v2", lambda x, y: x @ y, [F(3, 4), F(4, 5)]),
    S("matmul_v2", rt.matmul, [F(2, 1, 3, 4), F(3, 4, 2)], name="matmul_batch_broadcast"),
    S(
        "matmul_v2",
        rt.matmul,
        [F(4), F(2, 4, 3)],
        name="matmul_vector_matrix",
        also=("unsqueeze", "squeeze"),
    ),
    S("matmul_v2", rt.matmul, [F(2, 3, 4), F(4)], name="matmul_matrix_vector"),
    S("matmul_v2", rt.matmul, [F(4), F(4)], name="matmul_vector_vector"),
    S(
        "matmul_v2",
        lambda x, y: rt.matmul(x, y, transpose_x=True),
        [F(4, 3), F(4, 5)],
        name="matmul_transpose_x",
    ),
    S(
        "matmul_v2",
        lambda x, y: rt.matmul(x, y, transpose_y=True),
        [F(2, 3, 4), F(5, 4)],
        name="matmul_transpose_y",
    ),
    S(
        "matmul_v2",
        lambda x, y: rt.matmul(x, y, True, True),
        [F(4, 3), F(2, 5, 4)],
        name="matmul_transpose_both",
    ),
    S(
        "matmul_v2",
        lambda x, y: rt.matmul(x, y, transpose_y=True),
        [F(4), F(3, 4)],
        name="matmul_vector_transpose",
    ),
    S("matmul_v2", lambda x, y: x @ y, [I(2, 3), I(3, 2)], grad=False, name="matmul_int"),
    S("matmul_v2", rt.mm, [F(3, 4), F(4, 2)], name="mm"),
    S("matmul_v2", rt.bmm, [F(2, 3, 4), F(2, 4, 2)], name="bmm"),
    S("matmul_v2", rt.mv, [F(3, 4), F(4)], name="mv"),
    S("reduce_sum", rt.dot, [F(4), F(4)], name="dot", also=("elementwise_mul",)),
    S("reduce_sum", rt.dot, [F(3, 4), F(3, 4)], name="dot_rows"),
    S("einsum", lambda x, y: rt.einsum("ij,jk->ik", x, y), [F(2, 3), F(3, 4)]),
    S(
        "einsum",
        lambda x, y: rt.einsum("bij,bjk->bik", x, y),
        [F(2, 2, 3), F(2, 3, 4)],
        name="einsum_batched",
    ),
    S("einsum", lambda x: rt.einsum("ij->ji", x), [F(2, 3)], name="einsum_transpose"),
    S("einsum", lambda x: rt.einsum("ii", x), [F(3, 3)], name="einsum_trace"),
    S("einsum", lambda x: rt.einsum("iij->j", x), [F(3, 3, 2)], name="einsum_diagonal_sum"),
    S("einsum", lambda x, y: rt.einsum("i,j->ij", x, y), [F(3), F(4)], name="einsum_outer"),
    S("einsum", lambda x: rt.einsum("ij->", x), [F(2, 3)], name="einsum_sum"),
    S("einsum", lambda x, y: rt.einsum("ij,jk", x, y), [F(2, 3), F(3, 2)], name="einsum_implicit"),
    S(
        "einsum",
        lambda x, y: rt.einsum("...ij,...jk->...ik", x, y),
        [F(2, 2, 3), F(3, 2)],
        name="einsum_ellipsis",
    ),
    S(
        "einsum",
        lambda x, y: rt.einsum("ij,kj->ik", x, y),
        [F(2, 1), F(3, 4)],
        name="einsum_broadcast_dim",
    ),
    S("einsum", rt.inner, [F(2, 3), F(4, 3)], name="inner"),
    S("elementwise_mul", rt.outer, [F(3), F(4)], name="outer", also=("getitem",)),
    S("elementwise_mul", rt.outer, [F(2, 2), F(3)], name="outer_flattens", also=("flatten",)),
    S("elementwise_mul", rt.kron, [F(2, 3), F(2, 2)], name="kron", also=("reshape",)),
    S("elementwise_mul", rt.kron, [F(2), F(2, 3)], name="kron_ranks_differ"),
    S("cross", rt.cross, [F(4, 3), F(4, 3)]),
    S("cross", lambda x, y: rt.cross(x, y, axis=0), [F(3, 2), F(3, 1)], name="cross_axis"),
    S("trace", rt.trace, [F(3, 4)]),
    S(
        "trace",
        lambda x: rt.trace(x, offset=-1, axis1=2, axis2=0),
        [F(3, 2, 4)],
        name="trace_offset_axes",
    ),
    S("trace_grad", second_order(lambda x: rt.trace(x * x, offset=1)), [F(3, 3)]),
    S("inverse", lambda a: rt.inverse(_well_conditioned(a)), [F(3, 3)], rtol=1e-3),
    S(
        "inverse",
        lambda a: rt.inverse(_well_conditioned(a)),
        [F(2, 2, 2)],
        rtol=1e-3,
        name="inverse_batch",
    ),
    S("cholesky", lambda a: rt.cholesky(_spd(a)), [F(3, 3)], rtol=1e-3),
    S(
        "cholesky",
        lambda a: rt.cholesky(_spd(a), upper=True),
        [F(2, 3, 3)],
        rtol=1e-3,
        name="cholesky_upper_batch",
    ),
]

"""Semantics of the sorting ops against NumPy and Paddle's documented behaviour."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt

RNG = np.random.default_rng(3)
A = RNG.permutation(24).reshape(2, 3, 4).astype("float32")  # distinct values


def T(a, grad=False):
    return rt.to_tensor(a, stop_gradient=not grad)


def same(t, expected, dtype=None):
    expected = np.asarray(expected)
    got = t.numpy()
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected)
    if dtype is not None:
        assert t.dtype == dtype


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_sort_and_argsort_match_numpy(axis):
    x = T(A)
    same(rt.sort(x, axis), np.sort(A, axis))
    same(rt.argsort(x, axis), np.argsort(A, axis), rt.int64)
    same(rt.sort(x, axis, descending=True), -np.sort(-A, axis))
    same(x.argsort(axis=axis, descending=True), np.argsort(-A, axis))


def test_sort_keeps_ties_in_input_order_and_int_dtype():
    v = np.array([2, 1, 2, 1, 0], "int32")
    same(rt.sort(T(v)), np.sort(v), rt.int32)
    same(rt.argsort(T(v)), np.argsort(v, kind="stable"))
    same(rt.argsort(T(v), descending=True), [0, 2, 1, 3, 4])


def test_sort_of_0d_and_size_one_dims():
    s = T(np.float32(2.5))
    same(rt.sort(s), np.float32(2.5))
    same(rt.argsort(s), np.int64(0))
    same(rt.sort(T(A[:, :1]), axis=1), A[:, :1])


def test_sort_gradient_goes_to_original_positions():
    x = T(A[0], grad=True)
    w = np.arange(12, dtype="float32").reshape(3, 4)
    (rt.sort(x, axis=1) * T(w)).sum().backward()
    expected = np.zeros_like(w)
    np.put_along_axis(expected, np.argsort(A[0], 1), w, 1)
    same(x.grad, expected)


def test_argsort_output_has_no_gradient():
    x = T(A, grad=True)
    assert rt.argsort(x).stop_gradient


@pytest.mark.parametrize(
    "k, axis, largest", [(2, -1, True), (1, 0, False), (3, 1, True), (4, 2, False)]
)
def test_topk_matches_numpy(k, axis, largest):
    values, indices = rt.topk(T(A), k, axis=axis, largest=largest)
    order = np.argsort(-A if largest else A, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    same(indices, idx, rt.int64)
    same(values, np.take_along_axis(A, idx, axis))


def test_topk_ties_int_and_tensor_k():
    v = np.array([1, 3, 3, 2, 3], "int64")
    values, indices = rt.topk(T(v), rt.to_tensor(2))
    same(values, [3, 3], rt.int64)
    same(indices, [1, 2])
    with pytest.raises(rt.ShapeError, match="k=6 is out of range"):
        rt.topk(T(v), 6)


def test_topk_gradient_scatters_to_the_chosen_positions():
    x = T(A[0], grad=True)
    values, indices = rt.topk(x, 2, axis=0)
    (values * T(np.array([[1.0] * 4, [10.0] * 4], "float32"))).sum().backward()
    expected = np.zeros((3, 4), "float32")
    np.put_along_axis(expected, indices.numpy(), np.array([[1.0] * 4, [10.0] * 4]), 0)
    same(x.grad, expected)
    assert indices.stop_gradient


@pytest.mark.parametrize("k, axis, keepdim", [(1, -1, False), (2, 0, True), (3, 1, False)])
def test_kthvalue_matches_numpy(k, axis, keepdim):
    values, indices = rt.kthvalue(T(A), k, axis=axis, keepdim=keepdim)
    idx = np.take(np.argsort(A, axis=axis), [k - 1], axis=axis)
    expected = np.take_along_axis(A, idx, axis)
    if not keepdim:
        idx, expected = np.squeeze(idx, axis), np.squeeze(expected, axis)
    same(values, expected)
    same(indices, idx, rt.int64)


def test_kthvalue_errors_and_gradient():
    with pytest.raises(rt.ShapeError, match="k=0"):
        rt.kthvalue(T(A), 0)
    x = T(A[0], grad=True)
    rt.kthvalue(x, 2, axis=1)[0].sum().backward()
    expected = np.zeros((3, 4), "float32")
    np.put_along_axis(expected, np.argsort(A[0], 1)[:, 1:2], 1.0, 1)
    same(x.grad, expected)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_matches_numpy(axis, keepdim):
    out = rt.median(T(A), axis=axis, keepdim=keepdim)
    same(out, np.median(A, axis=axis, keepdims=keepdim).astype("float32"), rt.float32)


def test_median_dtypes_and_even_counts():
    x = T(np.arange(12).reshape(3, 4))
    same(rt.median(x), np.float32(5.5), rt.float32)
    same(rt.median(x, axis=1), [1.5, 5.5, 9.5])
    same(x.median(axis=0, keepdim=True), [[4.0, 5.0, 6.0, 7.0]])
    same(rt.median(T(A.astype("float64"))), np.median(A), rt.float64)


def test_median_min_mode_returns_value_and_index():
    x = T(np.array([[3, 1, 2, 4], [8, 5, 7, 6]], "int64"))
    values, indices = rt.median(x, axis=1, mode="min")
    same(values, [2, 6], rt.int64)
    same(indices, [2, 3], rt.int64)
    same(rt.median(x, mode="min"), np.int64(4))
    with pytest.raises(rt.OpError, match="mode must be"):
        rt.median(x, mode="max")


def test_median_gradient_splits_between_the_middle_values():
    x = T(np.array([4.0, 1.0, 3.0, 2.0], "float32"), grad=True)
    rt.median(x).backward()
    same(x.grad, [0.0, 0.0, 0.5, 0.5])


def test_unique_flattened_matches_numpy():
    v = np.array([[2, 5, 2], [1, 5, 7]], "int64")
    out, index, inverse, counts = rt.unique(T(v), True, True, True)
    e_out, e_index, e_inverse, e_counts = np.unique(v, True, True, True)
    same(out, e_out, rt.int64)
    same(index, e_index, rt.int64)
    same(inverse, e_inverse.reshape(-1), rt.int64)
    same(counts, e_counts, rt.int64)
    same(rt.unique(T(v)), e_out)
    assert rt.unique(T(v), return_counts=True, dtype="int32")[1].dtype == rt.int32


def test_unique_float_and_along_axis():
    f = np.array([0.5, -1.0, 0.5, 2.0], "float32")
    same(rt.unique(T(f)), np.unique(f), rt.float32)
    rows = np.array([[1, 2], [0, 5], [1, 2], [0, 1]], "int64")
    out, inverse, counts = rt.unique(T(rows), return_inverse=True, return_counts=True, axis=0)
    e_out, e_inverse, e_counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    same(out, e_out)
    same(inverse, e_inverse.reshape(-1))
    same(counts, e_counts)
    same(rt.unique(T(rows), axis=-1), np.unique(rows, axis=1))


def test_unique_consecutive():
    v = np.array([1, 1, 2, 2, 3, 1, 1, 2], "int64")
    out, inverse, counts = rt.unique_consecutive(T(v), return_inverse=True, return_counts=True)
    same(out, [1, 2, 3, 1, 2])
    same(inverse, [0, 0, 1, 1, 2, 3, 3, 4])
    same(counts, [2, 2, 1, 2, 1])


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_numpy(right):
    seq = np.array([1.0, 3.0, 3.0, 5.0, 7.0], "float32")
    vals = np.array([[0.0, 3.0], [5.5, 9.0]], "float32")
    side = "right" if right else "left"
    same(rt.searchsorted(T(seq), T(vals), right=right), np.searchsorted(seq, vals, side), rt.int64)
    batched = np.stack([seq, seq * 2])
    got = rt.searchsorted(T(batched), T(vals), right=right, out_int32=True)
    expected = np.stack([np.searchsorted(batched[i], vals[i], side) for i in range(2)])
    same(got, expected, rt.int32)
    same(rt.bucketize(T(vals), T(seq), right=right), np.searchsorted(seq, vals, side))


def test_searchsorted_promotes_and_checks_leading_dims():
    same(rt.searchsorted(T(np.array([1, 3, 5])), T(np.array([2.5], "float32"))), [1])
    with pytest.raises(rt.ShapeError, match="leading dims"):
        rt.searchsorted(T(np.zeros((2, 3))), T(np.zeros((3, 1))))


def test_methods_are_attached():
    x = T(A)
    for name in ("sort", "argsort", "topk", "unique", "median"):
        assert callable(getattr(x, name)), name

"""Indexing semantics against NumPy: every key kind for getitem/setitem, their gradients,
gather/scatter and friends, the generic (array-API only) forms, and the failure modes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.ops.indexing import getitem_shape, parse_key

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype("float32")
MASK01 = RNG.random((3, 4)) > 0.5

# keys as NumPy sees them; numpy arrays become tensors for autostatic
KEYS = [
    1,
    -1,
    (0, 2),
    (-1, -2, -3),
    slice(None),
    slice(1, None),
    slice(None, None, -1),
    (slice(1, None), slice(None, None, -2)),
    (Ellipsis, 1),
    (Ellipsis, None),
    (None, 1),
    (1, None, Ellipsis, None),
    (slice(3, 0, -1), Ellipsis, slice(None, None, 2)),
    (),
    Ellipsis,
    [0, 2, 2],
    ([0, 2], [1, 1]),
    np.array([[1, 0], [2, 2]]),
    (slice(None), [3, 0, 3]),
    (0, slice(None), np.array([4, 0])),
    (np.array([0, 1]), slice(None), np.array([1, 2])),
    (np.array([[0], [2]]), np.array([1, 3])),
    (Ellipsis, np.array([-1, 0])),
    np.array([True, False, True]),
    MASK01,
    (MASK01, slice(1, 3)),
    (slice(None), np.ones(4, bool)),
    (1, np.array([False, True, True, False])),
    np.array(2),
    (np.array(1), slice(None), 0),
    (None, np.array([0, 1]), None),
    (np.array([1, 2]), None, np.array([0, 3])),
]


def _conv(k):
    return rt.to_tensor(k) if isinstance(k, np.ndarray) else k


def _tkey(key):
    return tuple(_conv(k) for k in key) if isinstance(key, tuple) else _conv(key)


def _id(k):
    return repr(k).replace("\n", "")[:40]


@pytest.mark.parametrize("key", KEYS, ids=[_id(k) for k in KEYS])
def test_getitem_matches_numpy(key):
    got = rt.to_tensor(X)[_tkey(key)]
    np.testing.assert_array_equal(got.numpy(), X[key])


@pytest.mark.parametrize("key", KEYS, ids=[_id(k) for k in KEYS])
def test_getitem_on_the_generic_backend(key):
    rt.set_device("array_api_strict")
    got = rt.to_tensor(X)[_tkey(key)]
    np.testing.assert_array_equal(got.numpy(), X[key])


@pytest.mark.parametrize("key", KEYS, ids=[_id(k) for k in KEYS])
@pytest.mark.parametrize("device", ["cpu", "array_api_strict"])
def test_getitem_gradient_scatters_and_accumulates(key, device):
    rt.set_device(device)
    x = rt.to_tensor(X.astype("float64"), stop_gradient=False)
    w = RNG.standard_normal(X[key].shape)
    (x[_tkey(key)] * rt.to_tensor(w)).sum().backward()
    expected = np.zeros_like(X, dtype="float64")
    np.add.at(expected, key, w)
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_shape_inference_agrees_with_numpy_on_key_combinations():
    items = [
        0,
        -1,
        slice(None, None, -2),
        None,
        Ellipsis,
        [2, 0],
        np.array([[1], [0]]),
        np.array([True, False, True]),
    ]
    checked = 0
    for n in (1, 2, 3):
        for combo in itertools.product(items, repeat=n):
            try:
                want = X[combo].shape
            except IndexError:
                continue
            template, tensors = parse_key(_tkey(combo))
            specs = [(tuple(t.shape), t.dtype == rt.bool) for t in tensors]
            got = getitem_shape(X.shape, template, specs)
            assert len(got) == len(want), combo
            assert all(g in (-1, w) for g, w in zip(got, want, strict=True)), combo
            checked += 1
    assert checked > 300


SET_KEYS = [
    (1, 7.0),
    ((slice(1, None), slice(None, None, -2)), 3.0),
    ((Ellipsis, 0), np.arange(4, dtype="float32")),
    ([0, 2], -1.0),
    (np.array([2, 0]), np.ones((2, 4, 5), "float32")),
    ((slice(None), [1, 3]), 0.0),
    (MASK01, np.float32(2.0)),
    (X > 0.5, -5.0),
    ((0, None, slice(None, 2)), np.ones((1, 2, 5), "float32")),
    ((Ellipsis, None), 4.0),
    ((np.array([0, 1]), slice(None), np.array([4, 0])), 9.0),
]


@pytest.mark.parametrize("device", ["cpu", "array_api_strict"])
@pytest.mark.parametrize("key,value", SET_KEYS, ids=[_id(k) for k, _ in SET_KEYS])
def test_setitem_matches_numpy(key, value, device):
    rt.set_device(device)
    t = rt.to_tensor(X)
    t[_tkey(key)] = rt.to_tensor(value) if isinstance(value, np.ndarray) else value
    want = X.copy()
    want[key] = value
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_casts_the_value_and_takes_array_likes():
    t = rt.zeros([2, 3], "int64")
    t[0] = 2.7
    t[1, :2] = [5, 6]
    t[1, 2] = rt.to_tensor(9.0)
    np.testing.assert_array_equal(t.numpy(), [[2, 2, 2], [5, 6, 9]])
    assert t.dtype == rt.int64
    b = rt.zeros([3], "bool")
    b[1] = 1
    assert b.numpy().tolist() == [False, True, False]


def test_setitem_gradient_flows_to_x_and_value():
    x = rt.to_tensor(RNG.standard_normal((3, 4)), stop_gradient=False)
    v = rt.to_tensor(RNG.standard_normal((4,)), stop_gradient=False)
    y = x * 2.0
    y[[0, 2]] = v * 3.0  # value broadcast over two rows
    (y * y).sum().backward()
    xg = 8.0 * x.numpy()
    xg[[0, 2]] = 0
    np.testing.assert_allclose(x.grad.numpy(), xg)
    np.testing.assert_allclose(v.grad.numpy(), 2 * 18.0 * v.numpy())


def test_setitem_keeps_the_old_version_in_the_graph():
    x = rt.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = x * 1.0
    z = y * y  # uses y before the update
    y[1] = 10.0
    (z.sum() + y.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0, 7.0])  # 2x + (1, 0, 1)
    np.testing.assert_allclose(y.numpy(), [1.0, 10.0, 3.0])


def test_setitem_makes_a_no_grad_tensor_track_the_value():
    x = rt.zeros([3])
    v = rt.to_tensor(2.0, stop_gradient=False)
    x[1] = v
    assert not x.stop_gradient
    (x * x).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), 4.0)


def test_setitem_on_a_leaf_that_needs_grad_raises_unless_no_grad():
    x = rt.ones([3])
    x.stop_gradient = False
    with pytest.raises(rt.AutostaticError, match="cannot be modified in place"):
        x[0] = 5.0
    with rt.no_grad():
        x[1] = 6.0
    assert x.numpy().tolist() == [1.0, 6.0, 1.0] and x.is_leaf and not x.stop_gradient


def test_setitem_does_not_touch_views_or_snapshots():
    x = rt.to_tensor(np.arange(6.0).reshape(2, 3))
    row = x[0]
    alias = x.detach()
    x[0, 0] = 100.0
    assert row.numpy()[0] == 0.0 and alias.numpy()[0, 0] == 0.0


def test_iteration_and_zero_d_index():
    t = rt.to_tensor(X)
    rows = [r.numpy() for r in t]
    np.testing.assert_array_equal(np.stack(rows), X)
    np.testing.assert_array_equal(t[rt.to_tensor(2)].numpy(), X[2])


def test_out_of_range_int_raises_index_error_naming_index_and_size():
    t = rt.to_tensor(X)
    with pytest.raises(IndexError, match=r"index 3 is out of range for dim 0 of size 3") as info:
        t[3]
    assert isinstance(info.value, rt.ShapeError)
    assert "test_indexing.py" in str(info.value)
    with pytest.raises(IndexError, match=r"index -6 is out of range for dim 2 of size 5"):
        t[..., -6]
    with pytest.raises(IndexError):
        t[0] = t[1, 9]


def test_out_of_range_tensor_index_raises_index_error():
    t = rt.to_tensor(X)
    with pytest.raises(IndexError, match="4 is out of bounds for axis 1 with size 4"):
        t[:, [0, 4]]
    rt.set_device("array_api_strict")
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        rt.to_tensor(X)[:, [0, 4]]


def test_bad_keys_have_clear_errors():
    t = rt.to_tensor(X)
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="boolean mask of shape \\[2\\] does not match"):
        t[rt.to_tensor([True, False])]
    with pytest.raises(rt.DTypeError, match="integer or bool"):
        t[rt.to_tensor([0.0, 1.0])]
    with pytest.raises(TypeError, match="invalid index"):
        t["a"]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(ValueError, match="step cannot be zero"):
        t[::0]


# ---- gather / scatter family ----------------------------------------------------------------


def test_gather_and_index_select():
    x = rt.to_tensor(X)
    idx = rt.to_tensor([2, 0, 2])
    np.testing.assert_array_equal(rt.gather(x, idx).numpy(), X[[2, 0, 2]])
    np.testing.assert_array_equal(rt.gather(x, idx, axis=2).numpy(), X[:, :, [2, 0, 2]])
    np.testing.assert_array_equal(rt.index_select(x, idx, axis=-1).numpy(), X[..., [2, 0, 2]])
    np.testing.assert_array_equal(x.gather(rt.to_tensor(1)).numpy(), X[1])
    with pytest.raises(rt.ShapeError, match="index must be 1-D"):
        rt.index_select(x, rt.to_tensor([[0]]))
    with pytest.raises(rt.ShapeError, match="axis 3 is out of range"):
        rt.gather(x, idx, axis=3)


def test_gather_gradient_accumulates_duplicates():
    x = rt.to_tensor(np.ones((3, 2)), stop_gradient=False)
    rt.gather(x, rt.to_tensor([2, 2, 0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1], [0, 0], [2, 2]])


def test_index_add():
    x = np.zeros((2, 4), "float32")
    v = np.arange(6, dtype="float32").reshape(2, 3)
    got = rt.index_add(rt.to_tensor(x), rt.to_tensor([1, 3, 1]), 1, rt.to_tensor(v))
    want = x.copy()
    np.add.at(want, (slice(None), [1, 3, 1]), v)
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(rt.ShapeError, match="must have shape \\[2, 3\\], got \\[3, 2\\]"):
        rt.index_add(rt.to_tensor(x), rt.to_tensor([1, 3, 1]), 1, rt.ones([3, 2]))


def test_scatter_overwrite_and_accumulate_follow_paddle():
    x = rt.to_tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    idx = rt.to_tensor([2, 0, 2])
    upd = rt.to_tensor([[10.0, 10.0], [20.0, 20.0], [30.0, 30.0]])
    np.testing.assert_array_equal(rt.scatter(x, idx, upd).numpy(), [[20, 20], [2, 2], [30, 30]])
    np.testing.assert_array_equal(
        rt.scatter(x, idx, upd, overwrite=False).numpy(), [[20, 20], [2, 2], [40, 40]]
    )
    one = rt.scatter(x, rt.to_tensor(1), rt.to_tensor([7.0, 8.0]))
    np.testing.assert_array_equal(one.numpy(), [[1, 1], [7, 8], [3, 3]])
    with pytest.raises(rt.ShapeError, match="must have shape \\[3, 2\\], got \\[2, 2\\]"):
        rt.scatter(x, idx, rt.ones([2, 2]))


def test_gather_nd_and_scatter_nd_add():
    x = rt.to_tensor(X)
    idx = np.array([[[1, 3]], [[0, 0]], [[2, 1]]])
    got = rt.gather_nd(x, rt.to_tensor(idx))
    np.testing.assert_array_equal(got.numpy(), X[idx[..., 0], idx[..., 1]])
    full = rt.gather_nd(x, rt.to_tensor([[0, 1, 2], [2, 3, 4]]))
    np.testing.assert_array_equal(full.numpy(), [X[0, 1, 2], X[2, 3, 4]])
    upd = RNG.standard_normal((3, 1, 5)).astype("float32")
    added = rt.scatter_nd_add(
        x, rt.to_tensor(np.array([[[1, 3]], [[1, 3]], [[0, 0]]])), rt.to_tensor(upd)
    )
    want = X.copy()
    np.add.at(want, ([[1], [1], [0]], [[3], [3], [0]]), upd)
    np.testing.assert_allclose(added.numpy(), want, rtol=1e-6)
    with pytest.raises(rt.ShapeError, match="k <= 3"):
        rt.gather_nd(x, rt.zeros([2, 4], "int64"))


def test_masked_fill_and_masked_select():
    x = rt.to_tensor(X[0])
    m = X[0, 0] > 0  # shape [5], broadcast over the rows
    np.testing.assert_array_equal(
        rt.masked_fill(x, rt.to_tensor(m), 0.5).numpy(), np.where(m, 0.5, X[0])
    )
    np.testing.assert_array_equal(
        rt.masked_fill(x, rt.to_tensor(m), rt.to_tensor(2)).numpy(), np.where(m, 2.0, X[0])
    )
    ints = rt.masked_fill(rt.to_tensor([1, 2, 3]), rt.to_tensor([True, False, True]), 7.9)
    assert ints.dtype == rt.int64 and ints.numpy().tolist() == [7, 2, 7]
    np.testing.assert_array_equal(
        rt.masked_select(x, rt.to_tensor(m)).numpy(), X[0][np.broadcast_to(m, X[0].shape)]
    )
    picked = rt.masked_select(rt.to_tensor(X), rt.to_tensor(MASK01)[..., None])
    np.testing.assert_array_equal(picked.numpy(), X[np.broadcast_to(MASK01[..., None], X.shape)])


def test_nonzero():
    a = np.array([[0, 1.5, 0], [2, 0, 3]], "float32")
    out = rt.nonzero(rt.to_tensor(a))
    np.testing.assert_array_equal(out.numpy(), np.argwhere(a))
    assert out.dtype == rt.int64
    rows, cols = rt.nonzero(rt.to_tensor(a), as_tuple=True)
    assert rows.shape == [3, 1]
    np.testing.assert_array_equal(cols.numpy()[:, 0], np.nonzero(a)[1])
    (only,) = rt.nonzero(rt.to_tensor([0, 3, 4]), as_tuple=True)
    np.testing.assert_array_equal(only.numpy(), [[1], [2]])
    np.testing.assert_array_equal(rt.where(rt.to_tensor(a) > 1)[1].numpy()[:, 0], [1, 0, 2])


def test_take_and_put_along_axis():
    a = RNG.standard_normal((3, 4)).astype("float32")
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    got = rt.take_along_axis(rt.to_tensor(a), rt.to_tensor(idx), axis=1)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(a, idx, axis=1))
    bc = rt.take_along_axis(rt.to_tensor(a), rt.to_tensor([[1, 0, 2, 2]]), axis=0)
    np.testing.assert_array_equal(bc.numpy(), np.take_along_axis(a, np.array([[1, 0, 2, 2]]), 0))
    v = np.array([[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]], "float32")
    put = rt.put_along_axis(rt.to_tensor(a), rt.to_tensor(idx), rt.to_tensor(v), 1)
    want = a.copy()
    np.put_along_axis(want, idx, v, axis=1)
    np.testing.assert_array_equal(put.numpy(), want)
    add = rt.put_along_axis(rt.to_tensor(a), rt.to_tensor(idx), rt.to_tensor(v), 1, "add")
    want = a.copy()
    np.add.at(want, (np.arange(3)[:, None], idx), v)
    np.testing.assert_allclose(add.numpy(), want)
    mul = rt.put_along_axis(rt.to_tensor(a), rt.to_tensor(idx), 2.0, 1, reduce="multiply")
    want = a.copy()
    np.multiply.at(want, (np.arange(3)[:, None], idx), 2.0)
    np.testing.assert_allclose(mul.numpy(), want)
    with pytest.raises(ValueError, match="reduce must be"):
        rt.put_along_axis(rt.to_tensor(a), rt.to_tensor(idx), 1.0, 1, reduce="max")
    with pytest.raises(rt.ShapeError, match="rank of arr"):
        rt.take_along_axis(rt.to_tensor(a), rt.to_tensor([0]), axis=0)


def test_one_hot():
    labels = np.array([[0, 3], [2, 1]])
    out = rt.one_hot(rt.to_tensor(labels), 4)
    assert out.dtype == rt.float32 and out.shape == [2, 2, 4]
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype="float32")[labels])
    with pytest.raises(rt.DTypeError, match="integer labels"):
        rt.one_hot(rt.to_tensor([0.0]), 2)


def test_tensor_methods_are_attached():
    x = rt.to_tensor(X)
    np.testing.assert_array_equal(x.index_select(rt.to_tensor([1]), axis=1).numpy(), X[:, [1]])
    np.testing.assert_array_equal(x.masked_select(x > 1).numpy(), X[X > 1])

"""Linear algebra semantics against NumPy: matmul shapes and gradients, einsum, the other
products, trace/inverse/cholesky, and the shape errors users see."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.backends import get_backend
from tests.runtime.harness import check_grad

RNG = np.random.default_rng(1)


def _r(*shape):
    return RNG.standard_normal(shape).astype("float64")


MATMUL = [
    ((3, 4), (4, 5), False, False),
    ((4,), (4,), False, False),
    ((4,), (2, 4, 3), False, False),
    ((2, 3, 4), (4,), False, False),
    ((2, 1, 3, 4), (5, 4, 2), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((2, 4, 3), (5, 4), True, True),
    ((4,), (3, 4), True, True),
    ((1, 3, 4), (2, 4, 4), False, False),
]


@pytest.mark.parametrize(
    "xs,ys,tx,ty", MATMUL, ids=[f"{a}@{b}{'T' * c}{'T' * d}" for a, b, c, d in MATMUL]
)
def test_matmul_matches_numpy_and_its_gradient_checks(xs, ys, tx, ty):
    x, y = _r(*xs), _r(*ys)
    a = np.swapaxes(x, -1, -2) if tx and x.ndim > 1 else x
    b = np.swapaxes(y, -1, -2) if ty and y.ndim > 1 else y
    got = rt.matmul(rt.to_tensor(x), rt.to_tensor(y), transpose_x=tx, transpose_y=ty)
    np.testing.assert_allclose(got.numpy(), np.matmul(a, b), rtol=1e-12)
    check_grad(
        lambda p, q: rt.matmul(p, q, tx, ty),
        [rt.to_tensor(x), rt.to_tensor(y)],
        [0, 1],
        label="matmul",
    )


def test_matmul_gradient_sums_broadcast_batch_dims():
    x = rt.to_tensor(_r(2, 3, 4), stop_gradient=False)
    w = rt.to_tensor(_r(4, 5), stop_gradient=False)
    (x @ w).sum().backward()
    np.testing.assert_allclose(
        w.grad.numpy(),
        np.ones((2, 3, 5)).reshape(6, 5).T.dot(x.numpy().reshape(6, 4)).T,
        rtol=1e-12,
    )
    assert x.grad.shape == [2, 3, 4]


def test_matmul_promotes_dtypes_and_accepts_array_likes():
    a = rt.to_tensor([[1, 2], [3, 4]])
    b = rt.to_tensor([[0.5], [1.0]])
    out = a @ b
    assert out.dtype == rt.float32
    np.testing.assert_allclose(out.numpy(), [[2.5], [5.5]])
    assert (a @ a).dtype == rt.int64
    np.testing.assert_allclose((b.T @ [[1.0], [2.0]]).numpy(), [[2.5]])
    np.testing.assert_allclose(rt.matmul([[1.0, 2.0]], b).numpy(), [[2.5]])


def test_matmul_numpy_kernel_is_np_matmul():
    assert get_backend("numpy").xp.matmul is np.matmul


def test_matmul_shape_errors_name_the_shapes_and_the_callers_line():
    a, b = rt.ones([3, 4]), rt.ones([5, 6])
    with pytest.raises(rt.ShapeError) as info:
        rt.matmul(a, b)
    msg = str(info.value)
    assert msg.startswith("matmul: shapes [3, 4] and [5, 6] do not match (inner dims 4 != 5)")
    assert "test_linalg.py" in msg
    with pytest.raises(rt.ShapeError, match=r"^matmul: shapes \[3, 4\] and \[5, 6\]"):
        a @ b
    with pytest.raises(rt.ShapeError, match=r"inner dims 3 != 5 after transpose_x\)"):
        rt.matmul(a, b, transpose_x=True)
    with pytest.raises(rt.ShapeError, match=r"inner dims 3 != 6 after transpose_x and transpose_y"):
        rt.matmul(a, b, transpose_x=True, transpose_y=True)
    with pytest.raises(rt.ShapeError, match=r"batch dims of shapes \[2, 3, 4\] and \[5, 4, 2\]"):
        rt.matmul(rt.ones([2, 3, 4]), rt.ones([5, 4, 2]))
    with pytest.raises(rt.ShapeError, match="rank >= 1"):
        rt.matmul(rt.to_tensor(2.0), a)
    with pytest.raises(rt.ShapeError, match=r"^mm: shapes \[3, 4\] and \[5, 6\]"):
        rt.mm(a, b)


def test_bmm_mv_dot_checks():
    x, y = _r(2, 3, 4), _r(2, 4, 5)
    np.testing.assert_allclose(rt.bmm(rt.to_tensor(x), rt.to_tensor(y)).numpy(), x @ y)
    with pytest.raises(rt.ShapeError, match=r"bmm: expects two 3-D tensors, got shapes \[3, 4\]"):
        rt.bmm(rt.ones([3, 4]), rt.ones([4, 3]))
    with pytest.raises(rt.ShapeError, match=r"bmm: batch sizes differ"):
        rt.bmm(rt.ones([2, 3, 4]), rt.ones([3, 4, 3]))
    m, v = _r(3, 4), _r(4)
    np.testing.assert_allclose(rt.mv(rt.to_tensor(m), rt.to_tensor(v)).numpy(), m @ v)
    with pytest.raises(rt.ShapeError, match="mv: expects a 2-D matrix and a 1-D vector"):
        rt.mv(rt.to_tensor(m), rt.to_tensor(m))
    np.testing.assert_allclose(rt.dot(rt.to_tensor(v), rt.to_tensor(v)).numpy(), v @ v)
    rows = rt.dot(rt.to_tensor(m), rt.to_tensor(m))
    assert rows.shape == [3]
    np.testing.assert_allclose(rows.numpy(), (m * m).sum(-1))
    with pytest.raises(rt.ShapeError, match="dot: expects two 1-D or 2-D tensors of one shape"):
        rt.dot(rt.to_tensor(v), rt.to_tensor(m))


def test_inner_outer_kron_cross():
    a, b = _r(2, 3), _r(4, 3)
    np.testing.assert_allclose(rt.inner(rt.to_tensor(a), rt.to_tensor(b)).numpy(), np.inner(a, b))
    np.testing.assert_allclose(
        rt.inner(rt.to_tensor(a[0]), rt.to_tensor(b[0])).numpy(), np.inner(a[0], b[0])
    )
    with pytest.raises(rt.ShapeError, match="inner: last dims differ"):
        rt.inner(rt.to_tensor(a), rt.to_tensor(a.T))
    np.testing.assert_allclose(
        rt.outer(rt.to_tensor(a), rt.to_tensor(b[0])).numpy(), np.outer(a, b[0])
    )
    for p, q in [((2, 3), (2, 2)), ((2,), (3, 2)), ((2, 1, 2), (3, 2))]:
        x, y = _r(*p), _r(*q)
        np.testing.assert_allclose(rt.kron(rt.to_tensor(x), rt.to_tensor(y)).numpy(), np.kron(x, y))
    u, v = _r(3, 4), _r(3, 4)
    np.testing.assert_allclose(
        rt.cross(rt.to_tensor(u), rt.to_tensor(v)).numpy(), np.cross(u, v, axis=0)
    )  # default: the first axis of size 3
    u, v = _r(4, 3), _r(1, 3)
    np.testing.assert_allclose(
        rt.cross(rt.to_tensor(u), rt.to_tensor(v), axis=-1).numpy(), np.cross(u, v)
    )
    with pytest.raises(rt.ShapeError, match="no axis of size 3"):
        rt.cross(rt.ones([2, 4]), rt.ones([2, 4]))
    with pytest.raises(rt.ShapeError, match="axis 1 must have size 3"):
        rt.cross(rt.ones([3, 4]), rt.ones([3, 4]), axis=1)


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk", [(2, 3), (3, 2)]),
    ("ba", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("ij...->...", [(2, 3, 4)]),
    ("i,i", [(4,), (4,)]),
    ("ij,ij,ij->i", [(2, 3)] * 3),
    ("ij,kj->ik", [(2, 1), (3, 4)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]),
    ("...", [(2, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_numpy_and_its_gradient_checks(eq, shapes):
    ops = [_r(*s) for s in shapes]
    got = rt.einsum(eq, *[rt.to_tensor(o) for o in ops])
    np.testing.assert_allclose(got.numpy(), np.einsum(eq.replace(" ", ""), *ops), rtol=1e-12)
    check_grad(
        lambda *ts: rt.einsum(eq, *ts),
        [rt.to_tensor(o) for o in ops],
        list(range(len(ops))),
        label=eq,
    )


def test_einsum_errors():
    with pytest.raises(rt.ShapeError, match="names 2 operands, got 1"):
        rt.einsum("ij,jk->ik", rt.ones([2, 2]))
    with pytest.raises(rt.ShapeError, match="subscript 'j' has size 3 in one operand and 4"):
        rt.einsum("ij,jk->ik", rt.ones([2, 3]), rt.ones([4, 2]))
    with pytest.raises(rt.ShapeError, match="operand 0 has shape \\[2, 3\\] but subscripts 'i'"):
        rt.einsum("i->i", rt.ones([2, 3]))
    with pytest.raises(rt.ShapeError, match="invalid subscripts"):
        rt.einsum("i1->i", rt.ones([2]))


def test_einsum_list_form_and_dtype_promotion():
    out = rt.einsum("i,i->", [rt.to_tensor([1, 2]), rt.to_tensor([0.5, 0.5])])
    assert out.dtype == rt.float32 and float(out) == 1.5


def test_trace():
    x = _r(3, 4, 5)
    for offset, a1, a2 in [(0, 0, 1), (1, 0, 1), (-1, 2, 0), (2, 1, 2)]:
        got = rt.trace(rt.to_tensor(x), offset=offset, axis1=a1, axis2=a2)
        np.testing.assert_allclose(got.numpy(), np.trace(x, offset, a1, a2), rtol=1e-12)
        check_grad(
            lambda t, o=offset, p=a1, q=a2: rt.trace(t, o, p, q),
            [rt.to_tensor(x)],
            [0],
            label="trace",
        )
    with pytest.raises(rt.ShapeError, match="axis1 and axis2 must differ"):
        rt.trace(rt.to_tensor(x), axis1=1, axis2=-2)
    with pytest.raises(rt.ShapeError, match="rank >= 2"):
        rt.trace(rt.ones([3]))


def test_inverse_and_cholesky():
    a = _r(2, 3, 3)
    spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    np.testing.assert_allclose(
        rt.inverse(rt.to_tensor(spd)).numpy(), np.linalg.inv(spd), rtol=1e-10
    )
    low = rt.cholesky(rt.to_tensor(spd))
    np.testing.assert_allclose(low.numpy(), np.linalg.cholesky(spd), rtol=1e-10)
    up = rt.cholesky(rt.to_tensor(spd), upper=True)
    np.testing.assert_allclose(up.numpy(), np.swapaxes(np.linalg.cholesky(spd), -1, -2), rtol=1e-10)
    with pytest.raises(rt.ShapeError, match="square matrices"):
        rt.inverse(rt.ones([2, 3]))
    with pytest.raises(rt.DTypeError, match="float tensor"):
        rt.cholesky(rt.to_tensor([[1, 0], [0, 1]]))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradient_is_symmetric_and_matches_symmetric_perturbations(upper):
    a = _r(3, 3)
    spd = a @ a.T + 3 * np.eye(3)
    w = _r(3, 3)
    x = rt.to_tensor(spd, stop_gradient=False)
    (rt.cholesky(x, upper=upper) * rt.to_tensor(w)).sum().backward()
    g = x.grad.numpy()
    np.testing.assert_allclose(g, g.T, atol=1e-12)

    def f(m):
        c = np.linalg.cholesky(m)
        return np.sum((c.T if upper else c) * w)

    eps = 1e-6
    for i, j in [(0, 0), (1, 0), (2, 1), (2, 2)]:
        e = np.zeros((3, 3))
        e[i, j] = e[j, i] = eps
        numeric = (f(spd + e) - f(spd - e)) / (2 * eps)
        analytic = g[i, j] * (1 if i == j else 2)  # d/dt f(A + t(E_ij + E_ji))
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6)


def test_linalg_on_the_generic_backend():
    rt.set_device("array_api_strict")
    x, y = _r(2, 3, 4), _r(4, 2)
    np.testing.assert_allclose(rt.matmul(rt.to_tensor(x), rt.to_tensor(y)).numpy(), x @ y)
    np.testing.assert_allclose(rt.einsum("bij->j", rt.to_tensor(x)).numpy(), np.einsum("bij->j", x))
    spd = y.T @ y + np.eye(2)
    np.testing.assert_allclose(rt.inverse(rt.to_tensor(spd)).numpy(), np.linalg.inv(spd))
    t = rt.to_tensor(x, stop_gradient=False)
    rt.trace(t, axis1=1, axis2=2).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.broadcast_to(np.eye(3, 4), (2, 3, 4)))

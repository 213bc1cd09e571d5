"""The eager Tensor: creation, metadata, conversions, operators and Python protocols."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import autostatic_runtime as rt


def test_to_tensor_dtypes_follow_paddle():
    assert rt.to_tensor(1.5).dtype == rt.float32
    assert rt.to_tensor([1, 2]).dtype == rt.int64
    assert rt.to_tensor([True]).dtype == rt.bool
    assert rt.to_tensor(np.ones(2, np.float64)).dtype == rt.float64
    assert rt.to_tensor([1, 2], dtype="float16").dtype == rt.float16
    assert rt.to_tensor(rt.to_tensor([1.0]), dtype="float64").dtype == rt.float64


def test_to_tensor_copies_numpy_data():
    a = np.zeros(3, np.float32)
    t = rt.to_tensor(a)
    a[0] = 5
    assert t.numpy()[0] == 0


def test_to_tensor_rejects_strings_with_a_clear_message():
    with pytest.raises(rt.OpError, match="to_tensor: cannot make a tensor from list data"):
        rt.to_tensor(["a", "b"])


def test_metadata():
    t = rt.zeros([2, 3, 4])
    assert t.shape == [2, 3, 4]
    assert t.ndim == 3 and t.dim() == 3
    assert t.size == 24
    assert t.place == "cpu"
    assert t.stop_gradient is True
    assert t.grad is None
    assert t.is_leaf


def test_scalar_protocols():
    t = rt.to_tensor(3)
    assert int(t) == 3 and float(t) == 3.0 and bool(t) is True
    assert list(range(rt.to_tensor(3))) == [0, 1, 2]
    assert [10, 20, 30, 40][rt.to_tensor(2)] == 30
    assert f"{rt.to_tensor(1.23456):.2f}" == "1.23"
    assert rt.to_tensor([2.5]).item() == 2.5
    with pytest.raises(ValueError, match="ambiguous"):
        bool(rt.ones([2]))
    with pytest.raises(ValueError, match="one element"):
        rt.ones([2]).item()
    with pytest.raises(TypeError, match="integer"):
        [1, 2][rt.to_tensor(1.0)]


def test_len_and_iteration():
    t = rt.to_tensor([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = [r.numpy().tolist() for r in t]
    assert rows == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError):
        len(rt.to_tensor(1.0))


def test_repr_shows_shape_dtype_place_and_values():
    r = repr(rt.to_tensor([1.0, 2.0], stop_gradient=False))
    assert r.startswith("Tensor(shape=[2], dtype=float32, place=cpu, stop_gradient=False,")
    assert "[1., 2.]" in r


@pytest.mark.parametrize(
    "expr",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a**2,
        lambda a, b: -a,
        lambda a, b: abs(a),
        lambda a, b: a < b,
        lambda a, b: a <= b,
        lambda a, b: a > b,
        lambda a, b: a >= b,
        lambda a, b: a == b,
        lambda a, b: a != b,
        lambda a, b: 2 - a,
        lambda a, b: 1 / b,
        lambda a, b: 3 * a,
        lambda a, b: 7 // b,
        lambda a, b: 5 % b,
        lambda a, b: 2**a,
    ],
)
def test_operators_match_numpy(expr):
    a = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    b = np.array([2.0, 3.0, -4.0], np.float32)
    got = expr(rt.to_tensor(a), rt.to_tensor(b))
    want = expr(a, b)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert got.dtype == want.dtype


def test_numpy_array_on_the_left_gives_a_tensor():
    out = np.ones(3, np.float32) + rt.ones([3])
    assert isinstance(out, rt.Tensor)


def test_logic_operators_on_bool_and_int():
    a = rt.to_tensor([True, False, True])
    b = rt.to_tensor([True, True, False])
    assert (a & b).numpy().tolist() == [True, False, False]
    assert (a | b).numpy().tolist() == [True, True, True]
    assert (a ^ b).numpy().tolist() == [False, True, True]
    assert (~a).numpy().tolist() == [False, True, False]
    i = rt.to_tensor([6, 3])
    assert (i & 5).numpy().tolist() == [4, 1]
    assert (~i).numpy().tolist() == [-7, -4]


def test_comparison_with_unrelated_objects_falls_back_to_python():
    t = rt.ones([2])
    assert (t == None) is False  # noqa: E711
    assert (t != "text") is True
    assert t in [t]


def test_tensors_are_hashable_by_identity():
    a, b = rt.ones([1]), rt.ones([1])
    assert len({a, b}) == 2


def test_deepcopy_and_copy():
    t = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    d = copy.deepcopy(t)
    assert d is not t and d.stop_gradient is False
    np.testing.assert_array_equal(d.numpy(), t.numpy())
    assert copy.copy(t).stop_gradient


def test_tensors_refuse_pickle():
    with pytest.raises(TypeError, match="not pickled"):
        pickle.dumps(rt.ones([1]))


def test_astype_and_cast():
    t = rt.to_tensor([1.7, -1.7])
    assert t.astype("int32").numpy().tolist() == [1, -1]
    assert rt.cast(t, rt.float64).dtype == rt.float64


def test_set_value_checks_shape():
    t = rt.zeros([2])
    t.set_value(np.array([1.0, 2.0]))
    assert t.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="shape"):
        t.set_value(np.zeros(3))


def test_creation_functions():
    assert rt.full([2], 7).dtype == rt.int64
    assert rt.full([2], 7.0).numpy().tolist() == [7.0, 7.0]
    assert rt.arange(5).numpy().tolist() == [0, 1, 2, 3, 4]
    assert rt.arange(1, 2, 0.5).dtype == rt.float32
    np.testing.assert_allclose(rt.linspace(0, 1, 3).numpy(), [0, 0.5, 1])
    np.testing.assert_array_equal(rt.eye(2).numpy(), np.eye(2))
    assert rt.zeros_like(rt.ones([2], "int32")).dtype == rt.int32
    assert rt.full_like(rt.ones([2]), 3).numpy().tolist() == [3, 3]
    r = rt.randint(2, 5, [100])
    assert r.dtype == rt.int64 and 2 <= r.numpy().min() and r.numpy().max() < 5
    assert sorted(rt.randperm(5).numpy().tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(rt.OpError, match="arange: step must not be 0"):
        rt.arange(0, 1, 0)
    with pytest.raises(rt.OpError, match="negative"):
        rt.zeros([-1, 2])


def test_seed_makes_random_tensors_reproducible():
    rt.seed(5)
    a = rt.randn([3]).numpy()
    b = rt.rand([3]).numpy()
    rt.seed(5)
    np.testing.assert_array_equal(rt.randn([3]).numpy(), a)
    np.testing.assert_array_equal(rt.rand([3]).numpy(), b)
    assert not np.array_equal(rt.randn([3]).numpy(), a)


def test_random_statistics():
    rt.seed(0)
    x = rt.randn([20000]).numpy()
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    u = rt.uniform([20000], min=2.0, max=4.0).numpy()
    assert 2 <= u.min() and u.max() < 4 and abs(u.mean() - 3) < 0.03


def test_errors_name_the_op_the_shapes_and_the_callers_line():
    a, b = rt.ones([2, 3]), rt.ones([4])
    with pytest.raises(rt.ShapeError) as info:
        a + b
    msg = str(info.value)
    assert msg.startswith("elementwise_add: shapes [2, 3] and [4] cannot be broadcast")
    assert f"{__file__}:" in msg
    assert info.value.location[0] == __file__


def test_kernel_errors_keep_their_python_category():
    with pytest.raises(IndexError):
        rt.ones([2]).numpy()[5]  # plain numpy, as a reference for the category test below
    err = rt.errors.OpError("x", "y")
    assert isinstance(err, ValueError)

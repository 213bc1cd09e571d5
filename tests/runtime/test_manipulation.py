"""Semantics of the manipulation ops against NumPy and Paddle's documented behaviour."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.ops import manipulation as m
from autostatic_runtime.ops.registry import Spec

A = np.arange(24, dtype="float32").reshape(2, 3, 4)


def T(a, grad=False):
    return rt.to_tensor(a, stop_gradient=not grad)


def same(t, expected, dtype=None):
    expected = np.asarray(expected)
    got = t.numpy()
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)
    if dtype is not None:
        assert t.dtype == dtype


# ---- reshape family ------------------------------------------------------------------------


@pytest.mark.parametrize("shape, expected", [
    ([6, 4], (6, 4)), ([-1, 4], (6, 4)), ([0, -1], (2, 12)), ([0, 0, 2, 2], (2, 3, 2, 2)),
    ([24], (24,)), ((4, -1, 3), (4, 2, 3)),
])  # fmt: skip
def test_reshape_matches_paddle(shape, expected):
    out = rt.reshape(T(A), shape)
    same(out, A.reshape(expected))


def test_reshape_accepts_tensor_dims_and_keeps_int_dtype():
    x = T(np.arange(6))
    out = x.reshape([rt.to_tensor(3), rt.to_tensor([2])])
    same(out, np.arange(6).reshape(3, 2), rt.int64)
    same(rt.reshape(x, rt.to_tensor([2, 3])), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("shape, words", [
    ([5, -1], ["[3, 4]", "[5, -1]", "12"]),
    ([5, 2], ["[3, 4]", "12", "10"]),
    ([-1, -1], ["only one dim may be -1"]),
    ([0, 0, 0], ["0 at position 2"]),
    ([3, -2], ["negative"]),
])  # fmt: skip
def test_reshape_errors_name_the_shapes(shape, words):
    with pytest.raises(rt.ShapeError) as info:
        rt.reshape(T(np.zeros((3, 4))), shape)
    message = str(info.value)
    assert message.startswith("reshape:")
    for w in words:
        assert w in message


def test_reshape_infer_keeps_unknown_dims():
    spec = Spec((-1, 3, 4), rt.float32)
    assert m.Reshape.infer(spec, shape=(0, -1)).shape == (-1, 12)
    assert m.Reshape.infer(spec, shape=(-1, 4)).shape == (-1, 4)
    assert m.Flatten.infer(Spec((2, -1, 4), rt.float32), start_axis=1, stop_axis=2).shape == (2, -1)
    assert m.Squeeze.infer(Spec((-1, 1, 3), rt.float32), axis=(0, 1)).shape == (3,)


def test_reshape_gradient_restores_the_shape():
    x = T(A, grad=True)
    (rt.reshape(x, [4, -1]) * 2.0).sum().backward()
    same(x.grad, np.full(A.shape, 2.0, "float32"))


def test_flatten_ranges_and_0d():
    x = T(A)
    same(rt.flatten(x), A.reshape(-1))
    same(rt.flatten(x, 1), A.reshape(2, 12))
    same(rt.flatten(x, start_axis=-3, stop_axis=-2), A.reshape(6, 4))
    same(rt.flatten(T(np.float32(3.0))), np.array([3.0], "float32"))
    with pytest.raises(rt.ShapeError, match="start_axis"):
        rt.flatten(x, 2, 1)


def test_squeeze_leaves_non_one_dims_alone():
    a = np.zeros((1, 3, 1, 2), "int32")
    x = T(a)
    assert rt.squeeze(x).shape == [3, 2]
    assert rt.squeeze(x, []).shape == [3, 2]
    assert rt.squeeze(x, axis=-2).shape == [1, 3, 2]
    assert rt.squeeze(x, axis=[0, 1]).shape == [3, 1, 2]  # dim 1 has size 3: kept
    assert rt.squeeze(x, 1).shape == [1, 3, 1, 2]
    assert rt.squeeze(x).dtype == rt.int32
    with pytest.raises(rt.ShapeError, match="out of range"):
        rt.squeeze(x, 4)


def test_unsqueeze_inserts_in_order_like_paddle():
    x = T(np.zeros((5, 10)))
    assert rt.unsqueeze(x, [0, 2]).shape == [1, 5, 1, 10]
    assert rt.unsqueeze(x, [0, 3]).shape == [1, 5, 10, 1]  # 3 counts in the rank-3 result
    assert rt.unsqueeze(x, -1).shape == [5, 10, 1]
    assert rt.unsqueeze(x, [-1, -1]).shape == [5, 10, 1, 1]
    assert x.unsqueeze(rt.to_tensor([1])).shape == [5, 1, 10]
    with pytest.raises(rt.ShapeError, match="unsqueeze: axis 3"):
        rt.unsqueeze(x, 3)
    with pytest.raises(rt.ShapeError, match="axis 4"):
        rt.unsqueeze(x, [0, 4])


def test_transpose_t_and_moveaxis():
    x = T(A)
    same(rt.transpose(x, [2, 0, 1]), A.transpose(2, 0, 1))
    same(x.transpose([-1, 0, 1]), A.transpose(2, 0, 1))
    same(rt.t(T(A[0])), A[0].T)
    v = T(np.arange(3))
    assert rt.t(v) is v
    same(rt.moveaxis(x, 0, -1), np.moveaxis(A, 0, -1))
    same(rt.moveaxis(x, [0, 1], [-1, 0]), np.moveaxis(A, [0, 1], [-1, 0]))
    with pytest.raises(rt.ShapeError, match="permutation"):
        rt.transpose(x, [0, 0, 1])
    with pytest.raises(rt.ShapeError, match="one entry per dim"):
        rt.transpose(x, [1, 0])
    with pytest.raises(rt.ShapeError, match="at most 2 dims"):
        rt.t(x)


def test_transpose_gradient():
    x = T(A, grad=True)
    w = np.random.default_rng(0).random((4, 2, 3)).astype("float32")
    (rt.transpose(x, [2, 0, 1]) * T(w)).sum().backward()
    same(x.grad, w.transpose(1, 2, 0))


# ---- joining and splitting --------------------------------------------------------------


def test_concat_and_stack_match_numpy():
    a, b = A[:, :1], A[:, 1:]
    same(rt.concat([T(a), T(b)], axis=1), A)
    same(rt.concat([T(a), T(b)], axis=-2), A)
    same(rt.concat((T(A), T(A)), axis=rt.to_tensor(2)), np.concatenate([A, A], 2))
    same(rt.stack([T(A), T(A)], axis=-1), np.stack([A, A], -1))
    same(rt.stack([T(A[0]), T(A[1])]), A)


def test_concat_promotes_dtypes():
    out = rt.concat([T(np.ones((1, 2), "int32")), T(np.ones((1, 2), "float32"))])
    assert out.dtype == rt.float32 and out.shape == [2, 2]
    assert rt.concat([T(np.ones(2, "int32")), T(np.ones(2, "int64"))]).dtype == rt.int64


def test_concat_and_stack_errors():
    with pytest.raises(rt.ShapeError) as info:
        rt.concat([T(np.zeros((2, 3))), T(np.zeros((3, 3)))], axis=1)
    message = str(info.value)
    assert "[2, 3]" in message and "[3, 3]" in message and "dim 0" in message
    with pytest.raises(rt.ShapeError, match="same rank"):
        rt.concat([T(np.zeros((2, 3))), T(np.zeros(3))])
    with pytest.raises(rt.ShapeError, match="differ in dim 1"):
        rt.stack([T(np.zeros((2, 3))), T(np.zeros((2, 4)))])
    with pytest.raises(rt.ShapeError, match="list"):
        rt.concat(T(np.zeros(3)))


def test_concat_and_stack_gradients():
    x, y = T(A[:, :1], grad=True), T(A[:, 1:], grad=True)
    w = np.arange(24, dtype="float32").reshape(A.shape)
    (rt.concat([x, y], axis=1) * T(w)).sum().backward()
    same(x.grad, w[:, :1])
    same(y.grad, w[:, 1:])
    p, q = T(A[0], grad=True), T(A[1], grad=True)
    (rt.stack([p, q], axis=1) * T(w.transpose(1, 0, 2))).sum().backward()
    same(p.grad, w[0])
    same(q.grad, w[1])


def test_split_chunk_unbind_unstack():
    x = T(A)
    parts = rt.split(x, [1, -1, 1], axis=2)
    assert [p.shape for p in parts] == [[2, 3, 1], [2, 3, 2], [2, 3, 1]]
    same(parts[1], A[:, :, 1:3])
    assert isinstance(parts, list)
    same(rt.split(x, 2, axis=-1)[1], A[:, :, 2:])
    same(rt.split(x, [rt.to_tensor(2), 1], axis=1)[1], A[:, 2:])
    same(rt.chunk(x, 3, axis=1)[2], A[:, 2:])
    same(x.unbind(1)[2], A[:, 2])
    outs = rt.unstack(x, axis=-1)
    assert len(outs) == 4
    same(outs[3], A[..., 3])
    assert rt.split(T(np.arange(4)), 2)[0].dtype == rt.int64


def test_split_errors():
    x = T(np.zeros((3, 5)))
    with pytest.raises(rt.ShapeError, match="cannot be split into 2 equal parts"):
        rt.split(x, 2, axis=1)
    with pytest.raises(rt.ShapeError, match=r"sum to 4 but dim 1 of shape \[3, 5\] has size 5"):
        rt.split(x, [2, 2], axis=1)
    with pytest.raises(rt.ShapeError, match="one -1"):
        rt.split(x, [-1, -1], axis=1)
    with pytest.raises(rt.ShapeError, match="num=2"):
        rt.unstack(x, 0, num=2)


def test_split_gradient_fills_missing_pieces_with_zeros():
    x = T(A, grad=True)
    a, b = rt.split(x, [1, 2], axis=1)
    (b * 3.0).sum().backward()
    expected = np.zeros(A.shape, "float32")
    expected[:, 1:] = 3.0
    same(x.grad, expected)


# ---- repetition and reordering ------------------------------------------------------------


@pytest.mark.parametrize("reps", [[2, 1, 3], [2], [2, 1, 1, 2], (1, 1, 1)])
def test_tile_matches_numpy(reps):
    same(rt.tile(T(A), reps), np.tile(A, reps))


def test_tile_gradient_sums_the_copies():
    x = T(A[0], grad=True)
    rt.tile(x, [2, 1, 3]).sum().backward()
    same(x.grad, np.full((3, 4), 6.0, "float32"))


def test_flip_and_roll():
    x = T(A)
    same(rt.flip(x, -1), A[..., ::-1])
    same(rt.flip(x, [0, 2]), A[::-1, :, ::-1])
    same(rt.roll(x, 3), np.roll(A, 3))
    same(rt.roll(x, [1, -2], axis=[0, -1]), np.roll(A, (1, -2), axis=(0, 2)))
    same(rt.roll(x, 1, axis=1), np.roll(A, 1, axis=1))
    with pytest.raises(rt.ShapeError, match="same length"):
        rt.roll(x, [1, 2], axis=0)


def test_roll_gradient_rolls_back():
    x = T(A[0], grad=True)
    w = np.arange(12, dtype="float32").reshape(3, 4)
    (rt.roll(x, 1, axis=1) * T(w)).sum().backward()
    same(x.grad, np.roll(w, -1, axis=1))


def test_repeat_interleave():
    x = T(A[0])
    same(rt.repeat_interleave(x, 2), np.repeat(A[0], 2))
    same(rt.repeat_interleave(x, 2, axis=-1), np.repeat(A[0], 2, axis=1))
    same(rt.repeat_interleave(x, [1, 0, 3], axis=0), np.repeat(A[0], [1, 0, 3], axis=0))
    same(x.repeat_interleave(rt.to_tensor([2, 1, 1]), 0), np.repeat(A[0], [2, 1, 1], axis=0))
    with pytest.raises(rt.ShapeError, match="one count per element"):
        rt.repeat_interleave(x, [1, 2], axis=0)
    y = T(A[0], grad=True)
    rt.repeat_interleave(y, [1, 0, 3], axis=0).sum().backward()
    same(y.grad, np.repeat(np.array([1.0, 0.0, 3.0], "float32")[:, None], 4, axis=1))


# ---- triangles and diagonals -----------------------------------------------------------


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu_match_numpy(k):
    x = T(A)
    same(rt.tril(x, k), np.tril(A, k))
    same(rt.triu(x, k), np.triu(A, k))
    same(rt.tril(T(np.ones((3, 3), "int64")), k), np.tril(np.ones((3, 3), "int64"), k), rt.int64)


def test_tril_needs_a_matrix():
    with pytest.raises(rt.ShapeError, match="at least 2 dims"):
        rt.tril(T(np.ones(3)))


@pytest.mark.parametrize(
    "offset, a1, a2", [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (0, -1, -2), (5, 0, 1)]
)
def test_diagonal_matches_numpy(offset, a1, a2):
    same(rt.diagonal(T(A), offset, a1, a2), np.diagonal(A, offset, a1, a2))


def test_diagonal_gradient_and_errors():
    x = T(A, grad=True)
    rt.diagonal(x, 1, axis1=1, axis2=2).sum().backward()
    expected = np.zeros(A.shape, "float32")
    for i in range(3):
        expected[:, i, i + 1] = 1.0
    same(x.grad, expected)
    with pytest.raises(rt.ShapeError, match="two different dims"):
        rt.diagonal(T(A), 0, 1, -2)


def test_diag_and_diag_embed():
    v = np.array([1.0, 2.0, 3.0], "float32")
    same(rt.diag(T(v)), np.diag(v))
    same(rt.diag(T(v), 1), np.diag(v, 1))
    padded = np.where(np.diag(np.ones(3), -1) > 0, np.diag(v, -1), 7)
    same(rt.diag(T(v), -1, padding_value=7.0), padded)
    same(rt.diag(T(A[0]), 1), np.diag(A[0], 1))
    same(rt.diag_embed(T(A[0])), np.stack([np.diag(r) for r in A[0]]))
    moved = rt.diag_embed(T(A[0]), 0, dim1=0, dim2=2)
    same(moved, np.stack([np.diag(r) for r in A[0]]).transpose(1, 0, 2))


def test_shape_is_int32_and_has_no_grad():
    x = T(A, grad=True)
    s = rt.shape(x)
    same(s, np.array([2, 3, 4], "int32"), rt.int32)
    assert s.stop_gradient
    same(rt.shape(T(np.float32(1.0))), np.zeros(0, "int32"))


def test_methods_are_attached():
    x = T(A)
    for name in (
        "reshape",
        "transpose",
        "squeeze",
        "unsqueeze",
        "flatten",
        "split",
        "chunk",
        "unbind",
        "tile",
        "flip",
        "roll",
        "moveaxis",
        "repeat_interleave",
        "tril",
        "triu",
        "diagonal",
        "t",
        "concat",
    ):
        assert callable(getattr(x, name)), name
    assert x.T.shape == [4, 3, 2]


def test_ops_preserve_int_and_bool_dtypes():
    x = T(np.arange(6, dtype="int32").reshape(2, 3))
    b = T(np.array([[True, False, True]]))
    for out in (
        x.reshape([3, 2]),
        x.transpose([1, 0]),
        x.flip(0),
        x.roll(1),
        x.tile([2]),
        x.flatten(),
        x.unsqueeze(0),
        rt.stack([x, x]),
        x.diagonal(),
    ):
        assert out.dtype == rt.int32
    assert rt.triu(b).dtype == rt.bool and rt.concat([b, b]).dtype == rt.bool


def test_static_programs_keep_unknown_dims_and_explain_ambiguity():
    from autostatic_runtime import static

    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            x = static.data("x", [None, 3, 4], "float32")
            y = rt.reshape(x, [0, rt.to_tensor(2), -1])  # a constant tensor dim is folded
            z = rt.split(rt.flatten(x, 1), [5, -1], axis=1)[1]
            assert y.shape == [-1, 2, 6] and z.shape == [-1, 7]
            with pytest.raises(rt.ShapeError, match="pass axis explicitly"):
                rt.squeeze(x)
            tiled = rt.tile(x, [rt.shape(x)[0], 1, 1])  # a run-time count: built from ops
            assert tiled.shape == [-1, 3, 4]
            with pytest.raises(rt.OpError, match="known while building"):
                rt.split(x, rt.shape(x)[0])
            w = rt.reshape(x, [rt.shape(x)[0], 12])  # a run-time dim: reshape_dynamic
            assert w.op.type == "reshape_dynamic" and w.shape == [-1, 12]
    finally:
        rt.disable_static()
    got_y, got_z, got_w, got_t = static.Executor().run(
        main, feed={"x": A}, fetch_list=[y, z, w, tiled]
    )
    np.testing.assert_array_equal(got_t, np.tile(A, (2, 1, 1)))
    np.testing.assert_array_equal(got_y, A.reshape(2, 2, 6))
    np.testing.assert_array_equal(got_z, A.reshape(2, 12)[:, 5:])
    np.testing.assert_array_equal(got_w, A.reshape(2, 12))

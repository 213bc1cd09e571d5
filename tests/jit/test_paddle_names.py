"""Paddle 2.x functions that dygraph models use, eagerly and under ``to_static`` with an
unknown batch (values and gradients): index_sample, scatter_nd, meshgrid, strided_slice,
clone, rank, is_empty, tolist, topk/clip/full_like with tensor arguments, nn.Silu."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime.errors import StaticBuildError

SPEC = [InputSpec([None, 4], "float32", "x")]


def _index_sample(x):
    idx = rt.argsort(x, axis=1)[:, :2]
    return rt.index_sample(x, idx) * 2


def _scatter_nd(x):
    index = rt.to_tensor([[0], [2], [0]])
    return rt.scatter_nd(index, x[:3], [x.shape[0], 4]) + x


def _meshgrid(x):
    a, b = rt.meshgrid(rt.arange(x.shape[0]), rt.arange(4))
    return a.astype("float32") * x + b.astype("float32")


def _strided(x):
    return rt.strided_slice(x, [1], [3], [-5], [-2]) * rt.clone(x)[:, :2]


def _rank_empty(x):
    return x * rt.rank(x).astype("float32") + rt.is_empty(x).astype("float32")


def _topk_tensor_k(x):
    return rt.topk(x, rt.to_tensor(2))[0]


def _scatter_rows(x):
    return rt.scatter(x, rt.to_tensor([1, 0]), x[:2] * 2)


def _full_like_traced(x):
    return rt.full_like(x, rt.max(x)) - x


def _clip_traced(x):
    return rt.clip(x, rt.min(x) / 2, rt.max(x) / 2) + rt.clip(x, -0.5, rt.max(x) / 3)


def _silu(x):
    return rt.nn.Silu()(x)


CASES = [_index_sample, _scatter_nd, _meshgrid, _strided, _rank_empty, _topk_tensor_k,
         _scatter_rows, _full_like_traced, _clip_traced, _silu]  # fmt: skip
DIFFERENTIABLE = {_index_sample, _scatter_nd, _meshgrid, _strided, _rank_empty, _topk_tensor_k,
                  _scatter_rows, _clip_traced, _silu}  # fmt: skip


def _run(f, x_np):
    x = rt.to_tensor(x_np, stop_gradient=False)
    out = f(x)
    w = rt.to_tensor(np.linspace(0.5, 1.5, out.size).reshape(out.shape).astype("float32"))
    (out * w).sum().backward()
    return out.numpy(), None if x.grad is None else x.grad.numpy()


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__.strip("_") for f in CASES])
def test_eager_and_static_agree_with_gradients(fn):
    x_np = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")
    want, want_grad = _run(fn, x_np)
    got, got_grad = _run(autostatic.to_static(fn, input_spec=SPEC), x_np)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if fn in DIFFERENTIABLE:
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-6)


def test_eager_values():
    x = rt.arange(12).reshape([3, 4]).astype("float32")
    got = rt.index_sample(x, rt.to_tensor([[0, 3], [1, 1], [2, 0]]))
    assert got.tolist() == [[0.0, 3.0], [5.0, 5.0], [10.0, 8.0]]
    got = rt.scatter_nd(rt.to_tensor([[1], [2], [1]]), rt.ones([3, 2]), [4, 2])
    assert got.tolist() == [[0, 0], [2, 2], [1, 1], [0, 0]]
    a, b = rt.meshgrid(rt.arange(3), rt.arange(2))
    np.testing.assert_array_equal(a.numpy(), np.meshgrid(range(3), range(2), indexing="ij")[0])
    np.testing.assert_array_equal(b.numpy(), np.meshgrid(range(3), range(2), indexing="ij")[1])
    got = rt.strided_slice(x, [0, 1], [0, 3], [3, -5], [2, -2])
    np.testing.assert_array_equal(got.numpy(), x.numpy()[0:3:2, 3::-2])
    assert rt.rank(x).item() == 2 and not rt.is_empty(x).item() and rt.is_empty(x[:0]).item()
    assert rt.tolist(x)[1] == [4.0, 5.0, 6.0, 7.0]
    with pytest.raises(rt.ShapeError, match="one row each"):
        rt.index_sample(x, rt.zeros([2, 1], "int64"))
    with pytest.raises(rt.ShapeError, match="stride"):
        rt.strided_slice(x, [0], [0], [2], [0])


def _global_mask(x):
    mask = rt.static.create_global_var(shape=[2, 4], value=0, dtype="float32", persistable=True)
    rt.assign(np.tril(np.ones([2, 4], "float32")), mask)
    mask.stop_gradient = True
    return x * mask


def test_create_global_var_written_by_assign_eagerly_and_static():
    x = rt.ones([2, 4])
    want = _global_mask(x)
    got = autostatic.to_static(_global_mask)(x)
    np.testing.assert_array_equal(got.numpy(), np.tril(np.ones([2, 4])))
    np.testing.assert_array_equal(want.numpy(), got.numpy())
    assert rt.static.create_global_var([1], 3, "int64", persistable=True).persistable


def _video_block(x):
    conv = rt.nn.Conv3D(2, 3, (2, 1, 1), stride=(2, 1, 1))
    conv.weight.set_value(np.linspace(-1, 1, 12).reshape(3, 2, 2, 1, 1).astype("float32"))
    shifted = rt.nn.functional.temporal_shift(x.reshape([-1, 2, 3, 3]), 2, 0.25)
    one_d = rt.nn.functional.conv1d(x[:, :, 0], rt.ones([3, 2, 3]) / 6, padding=1)
    return conv(x.reshape([2, 2, 2, 3, 3])), shifted, one_d


def test_conv1d_conv3d_temporal_shift_with_an_unknown_batch():
    x = rt.to_tensor(np.random.default_rng(1).normal(size=(4, 2, 3, 3)).astype("float32"))
    want = _video_block(x)
    got = autostatic.to_static(_video_block, input_spec=[InputSpec([None, 2, 3, 3])])(x)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-6)


def test_inplace_assign_takes_the_other_tensor_eagerly_and_static():
    """Paddle's ``a._inplace_assign(b)``: ``a`` becomes ``b`` (another shape too), gradients
    flow to ``b``'s inputs, a leaf included, eagerly and in a traced function."""
    a, b = rt.ones((4, 2)), rt.ones((4, 3)) * 2
    a._inplace_assign(b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())

    def f(x):
        a = 1 * x
        a._inplace_assign(3 * x)
        return a

    for fn in (f, autostatic.to_static(f)):
        x = rt.ones((3,))
        x.stop_gradient = False
        fn(x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])

    traced = autostatic.to_static(lambda a, x: rt.tanh(a) * x)
    a, x = rt.randn((2,)), rt.ones((2,))
    a.stop_gradient = x.stop_gradient = False
    x._inplace_assign(traced(a, x))  # a leaf takes a program's output
    x.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1 - np.tanh(a.numpy()) ** 2, rtol=1e-6)


def test_item_positions_and_errors_as_paddle_eagerly_and_static():
    """``x.item(i)`` reads the flattened tensor, ``x.item(i, j, k)`` an element; wrong
    indices raise Paddle's errors (an out-of-bounds index is a ValueError and an IndexError)."""
    x = rt.rand([2, 3, 4])

    def one(x):
        return x.item(6)

    def three(x):
        return x.item(1, 2, 0)

    for fn, want in ((one, x.numpy().reshape(-1)[6]), (three, x.numpy()[1, 2, 0])):
        assert fn(x) == pytest.approx(float(want))
        assert float(autostatic.to_static(fn)(x)) == pytest.approx(float(want))
    for args, error, text in (
        ((10000,), ValueError, "index 10000 is out of bounds for size 24"),
        ((6, 7), ValueError, "incorrect number of indices for Tensor"),
        ((1.0, 2.0, 0.0), TypeError, r"argument \(position 1\) must be long, but got float"),
        ((2, 0, 0), IndexError, "index 2 is out of bounds for axis 0 with size 2"),
    ):
        def f(x, args=args):
            return x.item(*args)

        for fn in (f, autostatic.to_static(f)):
            with pytest.raises(error, match=text):
                fn(x)


def test_bilinear_layer_as_paddle_eagerly_and_static():
    """Paddle's test_basic_api_transformation: ``nn.Bilinear(5, 4, 1000)`` with constant
    initializers; ``out[b, o] = x1[b] @ W[o] @ x2[b] + bias[o]``."""
    const = rt.nn.initializer.Constant

    def f(a, b):
        layer = rt.nn.Bilinear(
            5, 4, 7,
            weight_attr=rt.ParamAttr(initializer=const(0.99)),
            bias_attr=rt.ParamAttr(initializer=const(0.5)),
        )  # fmt: skip
        return layer(a, b)

    a, b = rt.rand([3, 5]), rt.rand([3, 4])
    want = np.einsum("bi,oij,bj->bo", a.numpy(), np.full((7, 5, 4), 0.99), b.numpy()) + 0.5
    np.testing.assert_allclose(f(a, b).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(autostatic.to_static(f)(a, b).numpy(), want, rtol=1e-5)
    assert rt.nn.Bilinear(5, 4, 7).bias.shape == [1, 7]
    with pytest.raises(ValueError, match="x2 has 3 features"):
        rt.nn.functional.bilinear(a, rt.rand([3, 3]), rt.rand([7, 5, 4]))


def _beam_helpers(x, mask):
    """Paddle's seq2seq and transformer beam-search helpers, and simnet's constant layer."""
    kept = rt.tensor.math._multiply_with_axis(x, mask, axis=0) - rt.tensor.math._multiply_with_axis(
        x * 2, mask - 1, axis=0
    )
    scores = rt.tensor.math._add_with_axis(x=rt.unsqueeze(x, [1]), y=mask, axis=0)
    shape = list(x.shape)
    shape[0] = rt.shape(x)[0]
    margin = rt.tensor.fill_constant(shape, "float32", 0.25)
    count = rt.tensor.fill_constant(shape=[1], dtype="int64", value=3)
    caches = rt.utils.map_structure(lambda t: t * 2, [{"k": kept, "v": scores}])
    return caches[0]["k"] + margin, caches[0]["v"], count


def test_paddle_tensor_namespace_helpers_with_an_unknown_batch():
    x = rt.to_tensor(np.arange(12, dtype="float32").reshape(3, 4))
    mask = rt.to_tensor([1.0, 0.0, 1.0])
    want = _beam_helpers(x, mask)
    spec = [InputSpec([None, 4]), InputSpec([None])]
    got = autostatic.to_static(_beam_helpers, input_spec=spec)(x, mask)
    np.testing.assert_allclose(want[0].numpy()[1], [4 * v + 0.25 for v in range(4, 8)])
    assert want[1].shape == [3, 1, 4] and want[2].dtype == rt.int64
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    with pytest.raises(ValueError, match="axis 2 cannot align"):
        rt.tensor.math._add_with_axis(x, mask, axis=2)


def test_nest_helpers_unique_names_and_auc():
    nest = {"b": (1, [2, 3]), "a": 4}
    assert rt.utils.flatten(nest) == [4, 1, 2, 3]  # dicts by sorted key, as Paddle's
    assert rt.utils.pack_sequence_as(nest, [40, 10, 20, 30]) == {"b": (10, [20, 30]), "a": 40}
    assert rt.utils.map_structure(lambda a, b: a + b, [1, (2,)], [10, (20,)]) == [11, (22,)]
    with rt.utils.unique_name.guard():
        first = rt.nn.Linear(2, 2).weight.name
    with rt.utils.unique_name.guard():
        assert rt.nn.Linear(2, 2).weight.name == first  # a model built twice: the same names
    auc = rt.metric.Auc(name="auc")
    probs = rt.to_tensor([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    auc.update(probs, np.array([0, 1, 1, 0]))
    assert auc.accumulate() == 0.75 and auc.name() == "auc"  # 3 of the 4 pairs ranked right
    auc.reset()
    assert auc.accumulate() == 0.0


def test_framework_place_and_jit_module_names():
    rt.framework.random._manual_program_seed(2020)
    assert rt.static.default_main_program().random_seed == 2020
    img = rt.randn([2, 3]).astype("float32").cpu()
    assert img.place._equals(rt.framework._current_expected_place()) and img.place == "cpu"
    copied = img._copy_to(rt.CPUPlace(), False)
    assert copied.stop_gradient and copied is not img
    from autostatic.jit.api import to_static
    from autostatic.jit.translated_layer import INFER_MODEL_SUFFIX, INFER_PARAMS_SUFFIX

    assert to_static is autostatic.to_static and (INFER_MODEL_SUFFIX, INFER_PARAMS_SUFFIX) == (
        ".pdmodel", ".pdiparams")  # fmt: skip
    assert rt.static.io.load_inference_model is rt.static.load_inference_model
    schedule = rt.optimizer.lr.PiecewiseDecay([1], [0.5, 0.25])
    opt = rt.optimizer.Momentum(schedule, parameters=rt.nn.Linear(2, 2).parameters())
    schedule.step()
    assert opt._global_learning_rate().numpy().tolist() == [0.25]  # SE-ResNeXt's read


def test_chunk_eval_counts_the_chunks_of_each_scheme():
    # IOB over 2 chunk types: B-0=0 I-0=1 B-1=2 I-1=3, O=4
    gold = rt.to_tensor([[0, 1, 4, 2, 3, 3], [2, 4, 0, 1, 0, 0]])
    pred = rt.to_tensor([[0, 1, 4, 2, 3, 4], [2, 4, 0, 1, 1, 0]])
    p, r, f1, n_pred, n_gold, n_ok = rt._legacy_C_ops.chunk_eval(
        pred, gold, rt.to_tensor([6, 5]), "num_chunk_types", 2, "chunk_scheme", "IOB",
        "excluded_chunk_types", [])  # fmt: skip
    assert (n_pred.numpy().tolist(), n_gold.numpy().tolist(), n_ok.numpy().tolist()) == (
        [4], [5], [2])  # fmt: skip
    np.testing.assert_allclose([float(p), float(r), float(f1)], [0.5, 0.4, 4 / 9], rtol=1e-6)
    only_type_1 = rt.metric.chunk_eval(pred, gold, None, 2, "IOB", excluded_chunk_types=[0])
    assert only_type_1[5].numpy().tolist() == [1]  # (0, 0, type 1) of row 2 only
    with pytest.raises(StaticBuildError, match="append_op.*'mul'.*linear_chain_crf"):
        rt.nn.Linear(2, 2)._helper.append_op(type="mul", inputs={}, outputs={})


def _upsample(x):
    """YOLOv3's Upsample: the output size computed from the traced shape."""
    hw = rt.cast(rt.slice(rt.shape(x), axes=[0], starts=[2], ends=[4]), dtype="int32")
    return rt.nn.functional.interpolate(x=x, size=hw * 2, mode="nearest")


def test_interpolate_to_a_size_computed_from_the_traced_shape():
    x = rt.to_tensor(np.arange(8, dtype="float32").reshape(1, 2, 2, 2))
    want = _upsample(x)
    got = autostatic.to_static(_upsample)(x)  # 'Variable' has no attribute 'tolist' before
    assert got.shape == [1, 2, 4, 4]
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    unknown = autostatic.to_static(_upsample, input_spec=[InputSpec([1, 2, None, None])])
    with pytest.raises(rt.OpError, match="size is a traced tensor whose value is known only"):
        unknown(x)


def test_base_and_fluid_names_of_older_dygraph_code():
    """``paddle.base`` / ``paddle.fluid``: ``dygraph.guard()`` runs its block eagerly (also
    inside static mode, restored after), ``to_variable`` is ``to_tensor``; the places and
    static entry points are the runtime's own."""
    assert rt.fluid is rt.base and rt.base.Program is rt.static.Program
    assert rt.base.dygraph.base.to_variable is rt.base.dygraph.to_variable

    def mean_plus_one(x):
        x = rt.base.dygraph.to_variable(x)
        return rt.mean(x) + 1

    with rt.base.dygraph.guard(rt.base.CPUPlace()):
        data = np.arange(4, dtype="float32")
        assert float(mean_plus_one(data)) == float(autostatic.to_static(mean_plus_one)(data))
    rt.enable_static()
    try:
        with rt.fluid.dygraph.guard():
            assert rt.in_dynamic_mode()
            np.testing.assert_array_equal(rt.fluid.dygraph.to_variable([1, 2]).numpy(), [1, 2])
        assert not rt.in_dynamic_mode()
    finally:
        rt.disable_static()

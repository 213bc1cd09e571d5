"""Paddle 2.x APIs of issue 12: sequence_mask, gather_tree, accuracy, places, rt.save/rt.load,
save_inference_model/load_inference_model; eager and in static programs."""

from __future__ import annotations

import os

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import ProgramFormatError

F = rt.nn.functional


def _static(fn, feeds: dict, shapes: dict | None = None):
    """Run ``fn(*data_vars)`` in a static program on ``feeds``; returns the fetched arrays."""
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = [
                static.data(n, (shapes or {}).get(n, list(v.shape)), str(v.dtype))
                for n, v in feeds.items()
            ]
            outs = fn(*args)
    finally:
        rt.disable_static()
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return static.Executor().run(main, feed=feeds, fetch_list=outs)


# ---- sequence_mask / gather_tree -------------------------------------------------------------


def test_sequence_mask_matches_numpy_and_paddle_defaults():
    lengths = np.array([[1, 3], [0, 2]], "int64")
    got = F.sequence_mask(rt.to_tensor(lengths))
    assert got.dtype == rt.int64 and got.shape == [2, 2, 3]
    np.testing.assert_array_equal(got.numpy(), np.arange(3) < lengths[..., None])
    got = F.sequence_mask(rt.to_tensor(lengths), maxlen=5, dtype="float32")
    assert got.dtype == rt.float32
    np.testing.assert_array_equal(got.numpy(), (np.arange(5) < lengths[..., None]).astype("f4"))
    with pytest.raises(rt.DTypeError, match="integers"):
        F.sequence_mask(rt.to_tensor([1.0]))


@pytest.mark.parametrize("maxlen", [None, 6, "traced"])
def test_sequence_mask_in_a_static_program(maxlen):
    lengths = np.array([2, 5, 1], "int64")

    def fn(lens):
        m = rt.max(lens) + 1 if maxlen == "traced" else maxlen
        return F.sequence_mask(lens, maxlen=m, dtype="bool")

    (got,) = _static(fn, {"lens": lengths}, {"lens": [None]})
    width = {None: 5, 6: 6, "traced": 6}[maxlen]
    np.testing.assert_array_equal(got, np.arange(width) < lengths[:, None])


def test_sequence_mask_masks_a_loss_under_to_static_with_gradients():
    def masked_mean(x, lens):
        mask = F.sequence_mask(lens, maxlen=x.shape[1], dtype=x.dtype)
        return (x * mask).sum() / mask.sum()

    x_np = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    lens = rt.to_tensor([4, 1, 2])
    grads = []
    for f in (masked_mean, autostatic.to_static(masked_mean)):
        x = rt.to_tensor(x_np, stop_gradient=False)
        out = f(x, lens)
        out.backward()
        grads.append((out.numpy(), x.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-6)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-6)
    np.testing.assert_allclose(grads[0][1], (np.arange(4) < [[4], [1], [2]]) / 7.0)


IDS = np.array([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]], "int64")
PARENTS = np.array([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]], "int64")
PATHS = [[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]]  # Paddle's documented example


def test_gather_tree_backtraces_beams_eagerly_and_statically():
    np.testing.assert_array_equal(F.gather_tree(rt.to_tensor(IDS), rt.to_tensor(PARENTS)), PATHS)
    (got,) = _static(F.gather_tree, {"ids": IDS, "parents": PARENTS},
                     {"ids": [None, 2, 2], "parents": [None, 2, 2]})  # fmt: skip
    np.testing.assert_array_equal(got, PATHS)
    with pytest.raises(rt.ShapeError, match="max_time, batch, beam"):
        F.gather_tree(rt.to_tensor(IDS[0]), rt.to_tensor(PARENTS[0]))


# ---- accuracy ------------------------------------------------------------------------------------

SCORES = np.array(
    [[0.1, 0.9, 0.0], [0.8, 0.15, 0.05], [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]], "float32"
)
LABELS = np.array([[1], [1], [2], [2]], "int64")


@pytest.mark.parametrize("k, want", [(1, 0.5), (2, 0.75), (3, 1.0)])
def test_accuracy_eager_static_and_counts(k, want):
    correct, total = rt.zeros([1], "int64"), rt.zeros([1], "int32")
    got = rt.metric.accuracy(rt.to_tensor(SCORES), rt.to_tensor(LABELS), k, correct, total)
    assert got.dtype == rt.float32 and got.shape == [1]
    np.testing.assert_allclose(got.numpy(), [want])
    assert correct.item() == round(want * 4) and total.item() == 4
    assert rt.static.accuracy is rt.metric.accuracy
    (s,) = _static(lambda x, y: static.accuracy(x, y, k=k), {"x": SCORES, "y": LABELS},
                   {"x": [None, 3], "y": [None, 1]})  # fmt: skip
    np.testing.assert_allclose(s, [want])


# ---- places ------------------------------------------------------------------------------------


def test_places_are_accepted_where_devices_are():
    assert str(rt.CPUPlace()) == "cpu" and repr(rt.CUDAPlace(1)) == "Place(gpu:1)"
    assert rt.CPUPlace() == rt.CPUPlace() and rt.CUDAPlace(0) != rt.CPUPlace()
    t = rt.to_tensor([1.0, 2.0], place=rt.CPUPlace())
    assert t.place == "cpu"
    exe = static.Executor(rt.CPUPlace())
    (out,) = _static(lambda x: x * 2, {"x": np.ones(2, "float32")})
    assert exe._backend().name == "numpy" and out.tolist() == [2.0, 2.0]
    assert isinstance(rt.is_compiled_with_cuda(), bool)
    if not rt.is_compiled_with_cuda():
        with pytest.raises(rt.DeviceError):
            rt.to_tensor([1.0], place=rt.CUDAPlace(0))


# ---- rt.save / rt.load --------------------------------------------------------------------------


def test_save_and_load_layer_and_optimizer_state(tmp_path):
    net = rt.nn.Sequential(rt.nn.Linear(4, 3), rt.nn.ReLU(), rt.nn.Linear(3, 2))
    opt = rt.optimizer.Adam(0.01, parameters=net.parameters())
    x = rt.randn([5, 4])

    def step(o):
        net(x).sum().backward()
        o.step()
        o.clear_grad()

    step(opt)
    rt.save(net.state_dict(), str(tmp_path / "m.pdparams"))
    rt.save(opt.state_dict(), str(tmp_path / "m.pdopt"))
    assert sorted(os.listdir(tmp_path)) == ["m.pdopt", "m.pdparams"]  # no temporary left
    step(opt)
    want = net(x).numpy()

    net.set_state_dict(rt.load(str(tmp_path / "m.pdparams")))  # back to the saved point
    opt2 = rt.optimizer.Adam(0.01, parameters=net.parameters())
    opt2.set_state_dict(rt.load(str(tmp_path / "m.pdopt")))
    step(opt2)
    np.testing.assert_allclose(net(x).numpy(), want, rtol=1e-5, atol=1e-6)  # f32 beta pows


def test_save_and_load_nested_objects(tmp_path):
    obj = {
        "epoch": 3, "lr": 0.5, "name": "run", "flag": True, "none": None,
        "layers": [rt.to_tensor([1, 2]), (np.arange(3.0), {"w": rt.ones([2, 2], "float64")})],
        7: "int key",
    }  # fmt: skip
    path = tmp_path / "state.pdstate"
    rt.save(obj, path)
    back = rt.load(path)
    assert back["epoch"] == 3 and back["lr"] == 0.5 and back["flag"] is True
    assert back["none"] is None and back[7] == "int key" and back["name"] == "run"
    t, (arr, inner) = back["layers"]
    assert isinstance(t, rt.Tensor) and t.dtype == rt.int64 and t.tolist() == [1, 2]
    assert isinstance(arr, np.ndarray) and arr.tolist() == [0.0, 1.0, 2.0]
    assert inner["w"].dtype == rt.float64
    assert isinstance(rt.load(path, return_numpy=True)["layers"][0], np.ndarray)
    with pytest.raises(TypeError, match="cannot save a"):
        rt.save({"f": lambda: 1}, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_load_rejects_corrupt_and_truncated_files(tmp_path):
    path = tmp_path / "m.pdparams"
    rt.save({"w": rt.ones([4, 4])}, path)
    data = path.read_bytes()
    for i, bad in enumerate([data[:5], data[:-8], b"\x00" * 8 + data[8:], b"garbage" * 9]):
        p = tmp_path / f"bad{i}"
        p.write_bytes(bad)
        with pytest.raises(ProgramFormatError):
            rt.load(p)
    with pytest.raises(FileNotFoundError):
        rt.load(tmp_path / "missing")


def test_load_reads_the_weights_of_a_saved_model(tmp_path):
    net = rt.nn.Linear(3, 2)
    autostatic.save(net, str(tmp_path / "net"), input_spec=[static.InputSpec([None, 3])])
    weights = rt.load(tmp_path / "net.pdiparams")
    assert {tuple(v.shape) for v in weights.values()} == {(3, 2), (2,)}


# ---- inference models -----------------------------------------------------------------------


def _trained_program():
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data("x", [None, 4], "float32")
            label = static.data("label", [None, 1], "float32")
            h = rt.nn.Linear(4, 8)(x)
            out = rt.nn.Linear(8, 1)(rt.nn.functional.relu(h))
            loss = rt.nn.functional.mse_loss(out, label)
            rt.optimizer.Adam(0.05).minimize(loss)
    finally:
        rt.disable_static()
    exe = static.Executor(rt.CPUPlace())
    exe.run(startup)
    rng = np.random.default_rng(0)
    for _ in range(5):
        xb = rng.normal(size=(8, 4)).astype("float32")
        exe.run(main, feed={"x": xb, "label": xb[:, :1]}, fetch_list=[loss])
    return main, exe, x, out


def test_save_and_load_inference_model(tmp_path):
    main, exe, x, out = _trained_program()
    xb = np.random.default_rng(1).normal(size=(3, 4)).astype("float32")
    want = exe.run(main.clone(for_test=True), feed={"x": xb}, fetch_list=[out])[0]
    static.save_inference_model(str(tmp_path / "infer"), [x], [out], exe)
    assert sorted(os.listdir(tmp_path)) == ["infer.pdiparams", "infer.pdmeta", "infer.pdmodel"]

    with static.scope_guard(static.Scope()):
        exe2 = static.Executor()
        program, feed_names, fetch_targets = static.load_inference_model(
            str(tmp_path / "infer"), exe2
        )
        assert feed_names == ["x"] and [v.name for v in fetch_targets] == [out.name]
        types = {op.type for op in program.global_block().ops}
        assert not any(t.endswith("_grad") or t in ("adam", "sgd") for t in types)
        (got,) = exe2.run(program, feed={"x": xb}, fetch_list=fetch_targets)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    (again,) = autostatic.load(str(tmp_path / "infer"))(rt.to_tensor(xb))
    np.testing.assert_allclose(again.numpy(), want, rtol=1e-6)


def test_save_inference_model_errors(tmp_path):
    main, exe, x, out = _trained_program()
    label = main.global_block().vars["label"]
    with pytest.raises(rt.AutostaticError, match="add them to feed_vars"):
        static.save_inference_model(str(tmp_path / "m"), [label], [out], exe, program=main)
    with pytest.raises(TypeError, match="fetch_vars"):
        static.save_inference_model(str(tmp_path / "m"), [x], ["nope"], exe, program=main)

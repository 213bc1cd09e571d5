"""Exported models run in ONNX Runtime as they run eagerly: nested tensor if/while, a CNN
with batch norm (eval) and a dynamic batch, an RNN-style loop; at batch sizes 1 and 7."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from tests.onnx import models
from tests.onnx.ort import assert_close, run_model

BATCHES = (1, 7)


def _op_types(graph) -> set[str]:
    found = set()
    for node in graph.node:
        found.add(node.op_type)
        for attr in node.attribute:
            if attr.g.node:
                found |= _op_types(attr.g)
    return found


def _close(got, expected, label):
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=label)
    assert got.dtype == expected.dtype and got.shape == expected.shape, label


def test_nested_tensor_if_and_while(tmp_path):
    specs = [InputSpec([None, 4], "float32", "x"), InputSpec([1], "int64", "n")]
    model = autostatic.onnx.export(models.nested_control, str(tmp_path / "nested"), specs)
    assert {"If", "Loop"} <= _op_types(model.graph)
    assert (tmp_path / "nested.onnx").is_file()
    rng = np.random.default_rng(0)
    for batch in BATCHES:
        for n, scale in ((0, 1.0), (4, 1.0), (5, 3.0)):  # both branches, zero iterations
            x = (rng.standard_normal((batch, 4)) * scale + scale).astype("float32")
            feeds = {"x": x, "n": np.array([n], "int64")}
            (got,) = run_model(model, feeds)
            expected = models.nested_control(rt.to_tensor(x), rt.to_tensor(feeds["n"]))
            _close(got, expected.numpy(), f"batch {batch}, n {n}")


def _trained_cnn():
    rt.seed(3)
    net = models.SmallCNN()
    for _ in range(2):  # move the running statistics away from 0 and 1
        net(rt.randn([6, 3, 8, 8]) * 2.0 + 0.5)
    return net


def test_cnn_with_batch_norm_and_dynamic_batch(tmp_path):
    net = _trained_cnn()
    spec = [InputSpec([None, 3, 8, 8], "float32", "image")]
    model = autostatic.onnx.export(net, str(tmp_path / "cnn"), input_spec=spec)
    assert net.training  # export traced in eval mode and restored the mode
    dim = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param and not dim.HasField("dim_value")
    out = model.graph.output[0].type.tensor_type.shape.dim
    assert [out[0].dim_param, out[1].dim_value] == [dim.dim_param, 5]  # inferred
    assert len(model.graph.initializer) >= 12  # weights, biases, running statistics
    net.eval()
    for batch in BATCHES:
        x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype("float32")
        (got,) = run_model(model, {"image": x})
        _close(got, net(rt.to_tensor(x)).numpy(), f"batch {batch}")


@pytest.mark.parametrize("opset", [13, 18])
def test_other_opsets(tmp_path, opset):
    net = _trained_cnn()
    spec = [InputSpec([None, 3, 8, 8], "float32", "image")]
    model = autostatic.onnx.export(net, str(tmp_path / "cnn"), spec, opset_version=opset)
    assert model.opset_import[0].version == opset
    net.eval()
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype("float32")
    _close(run_model(model, {"image": x})[0], net(rt.to_tensor(x)).numpy(), f"opset {opset}")


def test_rnn_style_loop_over_time_steps(tmp_path):
    rt.seed(5)
    net = models.TinyRNN()
    spec = [InputSpec([None, None, 4], "float32", "xs")]
    model = autostatic.onnx.export(net, str(tmp_path / "rnn"), input_spec=spec)
    assert "Loop" in _op_types(model.graph)
    for batch in BATCHES:
        for steps in (1, 5):
            xs = np.random.default_rng(steps).standard_normal((batch, steps, 4)).astype("float32")
            states, last = run_model(model, {"xs": xs})
            e_states, e_last = net(rt.to_tensor(xs))
            _close(states, e_states.numpy(), f"states, batch {batch}, {steps} steps")
            _close(last, e_last.numpy(), f"last state, batch {batch}, {steps} steps")


def test_static_function_and_loaded_model_export_alike(tmp_path):
    net = _trained_cnn()
    spec = [InputSpec([None, 3, 8, 8], "float32", "image")]
    autostatic.save(net, str(tmp_path / "saved"), input_spec=spec)
    loaded = autostatic.load(str(tmp_path / "saved"))
    from_loaded = autostatic.onnx.export(loaded, str(tmp_path / "from_loaded.onnx"))
    fn = autostatic.to_static(models.nested_control)
    from_fn = autostatic.onnx.export(
        fn, str(tmp_path / "fn"), [InputSpec([None, 4], "float32"), InputSpec([1], "int64")]
    )
    assert (tmp_path / "from_loaded.onnx").is_file() and (tmp_path / "fn.onnx").is_file()
    x = np.random.default_rng(2).standard_normal((3, 3, 8, 8)).astype("float32")
    assert_close(run_model(from_loaded, {"image": x})[0], loaded(x).numpy(), "loaded")
    names = [i.name for i in from_fn.graph.input]
    feeds = dict(zip(names, [np.ones((2, 4), "float32"), np.array([3], "int64")]))
    expected = models.nested_control(rt.ones([2, 4]), rt.to_tensor([3]))
    _close(run_model(from_fn, feeds)[0], expected.numpy(), "StaticFunction")


@pytest.mark.parametrize("layer", ["SimpleRNN", "LSTM", "GRU"])
def test_recurrent_layers_with_dynamic_batch_and_time(tmp_path, layer):
    rt.seed(7)
    net = getattr(rt.nn, layer)(4, 6, num_layers=2, direction="bidirect")
    spec = [InputSpec([None, None, 4], "float32", "x")]
    model = autostatic.onnx.export(net, str(tmp_path / layer), input_spec=spec)
    assert "Loop" in _op_types(model.graph)
    net.eval()
    for batch, steps in ((1, 1), (7, 5)):
        x = np.random.default_rng(batch).standard_normal((batch, steps, 4)).astype("float32")
        out, state = net(rt.to_tensor(x))
        expected = [out] + (list(state) if isinstance(state, (tuple, list)) else [state])
        got = run_model(model, {"x": x})
        assert len(got) == len(expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            _close(g, e.numpy(), f"{layer} output {i}, batch {batch}, {steps} steps")


def test_dropout_batch_norm_a_captured_tensor_and_two_inputs(tmp_path):
    from tests.jit.test_save_load import Net, _specs

    net = Net()
    for _ in range(2):
        net(rt.randn([8, 10]), rt.randn([3]))
    model = autostatic.onnx.export(net, str(tmp_path / "net"), input_spec=_specs())
    net.eval()
    rng = np.random.default_rng(4)
    for batch in BATCHES:
        for sign in (1.0, -1.0):  # both branches of the tensor `if`
            x = (rng.random((batch, 10)) * sign).astype("float32")
            y = (rng.random(3) * sign).astype("float32")
            expected = net(rt.to_tensor(x), rt.to_tensor(y)).numpy()
            _close(run_model(model, {"x": x, "y": y})[0], expected, f"batch {batch}")


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_beam_search_decoding(tmp_path, cell):
    """An encoder, a beam-search ``while`` that stops when every beam is finished, and
    ``gather_tree``: ids, scores and lengths as eager, for any batch and source length."""
    from tests.jit.test_decode import Translator

    rt.seed(3)
    model = Translator(cell, end_token=1)
    model.eval()
    spec = [InputSpec([None, None], "int64", "src")]
    onnx_model = autostatic.onnx.export(model, str(tmp_path / cell), input_spec=spec)
    for shape in ((1, 1), (7, 3)):
        src = np.random.default_rng(shape[0]).integers(2, 10, shape)
        expected = model(rt.to_tensor(src))
        got = run_model(onnx_model, {"src": src})
        for i, (g, e) in enumerate(zip(got, expected)):
            _close(g, e.numpy(), f"{cell} output {i}, source {shape}")

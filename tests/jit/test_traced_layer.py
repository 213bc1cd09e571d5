"""TracedLayer: a program recorded from one eager call (Paddle's ``TracedLayer``)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1D(4)
        self.scale = rt.to_tensor([1.0, 2.0, 3.0, 4.0])

    def forward(self, x, y):
        h = self.fc(x)
        if float(h.mean()) > 100.0:  # Python control flow: frozen at the traced inputs
            h = h * 0
        out = nn.functional.relu(self.bn(h)) * self.scale
        h[:, 0] = y.sum()  # an in-place write is recorded too
        return {"out": out, "pair": (h, rt.max(out, axis=1))}


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rt.to_tensor(rng.normal(size=(2, 3)).astype("float32")),
            rt.to_tensor(rng.normal(size=(2,)).astype("float32"))]  # fmt: skip


def _flat(result):
    return [result["out"], *result["pair"]]


def test_trace_returns_eager_outputs_and_a_program_that_reproduces_them():
    net = Net()
    net.eval()
    inputs = _inputs()
    outs, traced = autostatic.TracedLayer.trace(net, inputs)
    want = _flat(net(*inputs))
    for o, w in zip(_flat(outs), want):
        np.testing.assert_array_equal(o.numpy(), w.numpy())
    for seed in (0, 1):  # new values of the traced shapes
        x = _inputs(seed)
        got = traced(x)
        assert isinstance(got, list) and len(got) == 3
        for g, w in zip(got, _flat(net(*x))):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    types = [op.type for op in traced.program.global_block().ops]
    assert "set_value" in types and "batch_norm" in types


def test_python_branches_are_frozen_at_the_traced_inputs():
    def fn(x):
        return x * 2 if float(x.sum()) > 0 else x - 100

    _, traced = autostatic.TracedLayer.trace(fn, rt.ones([3]))
    (got,) = traced(-rt.ones([3]))
    np.testing.assert_array_equal(got.numpy(), [-2.0, -2.0, -2.0])  # the traced branch


def test_save_inference_model_and_load(tmp_path):
    net = Net()
    net.eval()
    inputs = _inputs()
    outs, traced = autostatic.TracedLayer.trace(net, inputs)
    traced.save_inference_model(str(tmp_path / "full"))
    loaded = autostatic.load(str(tmp_path / "full"))
    got = loaded(*inputs)
    assert set(got) == {"out", "pair"}
    for g, w in zip(_flat(got), _flat(outs)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)

    traced.save_inference_model(str(tmp_path / "part"), feed=[0], fetch=[0])
    (out,) = autostatic.load(str(tmp_path / "part"))(inputs[0])  # y is not needed for "out"
    np.testing.assert_allclose(out.numpy(), outs["out"].numpy(), rtol=1e-6)


def test_only_the_tracing_thread_is_recorded():
    box = {}

    def fn(x):
        worker = threading.Thread(target=lambda: box.setdefault("v", rt.ones([2]) * 5))
        worker.start()
        worker.join()
        return x + 1

    _, traced = autostatic.TracedLayer.trace(fn, rt.zeros([2]))
    assert [op.type for op in traced.program.global_block().ops] == ["elementwise_add"]
    assert box["v"].tolist() == [5.0, 5.0]
    assert rt.ones([1]).tolist() == [1.0]  # eager dispatch is back


def test_trace_errors():
    with pytest.raises(TypeError, match="inputs must be tensors"):
        autostatic.TracedLayer.trace(lambda x: x, [np.ones(2)])
    with pytest.raises(TypeError, match="returned a str"):
        autostatic.TracedLayer.trace(lambda x: "no", [rt.ones([1])])
    assert rt.ones([1]).tolist() == [1.0]


def test_traces_recurrent_models_and_beam_search():
    from tests.jit import test_models as M

    rt.seed(0)
    cases = [
        (M.Seq2Seq(), [rt.randint(2, 12, [4, 5]), rt.to_tensor([5, 3, 2, 4])]),
        (M.Sentiment(), [rt.randint(1, 20, [3, 6]), rt.to_tensor([6, 2, 4])]),
    ]
    for model, inputs in cases:
        model.eval()
        outs, traced = autostatic.TracedLayer.trace(model, inputs)
        flat = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        for g, w in zip(traced(inputs), flat):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_autostatic_save_and_onnx_export_take_a_traced_layer(tmp_path):
    from autostatic import InputSpec
    from autostatic.jit.program_cache import ToStaticError

    net = Net()
    net.eval()
    inputs = _inputs()
    outs, traced = autostatic.TracedLayer.trace(net, inputs=inputs)
    autostatic.save(traced, tmp_path / "traced")  # the recorded shapes: no input_spec needed
    loaded = autostatic.load(str(tmp_path / "traced"))
    assert [list(s.shape) for s in loaded.input_spec] == [[2, 3], [2]]
    for got, want in zip(_flat(loaded(*inputs)), _flat(outs)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    autostatic.save(traced, tmp_path / "same", input_spec=[InputSpec([2, 3]), InputSpec([2])])
    with pytest.raises(ToStaticError, match=r"holds the shapes it was traced with \(\[2, 3\]"):
        autostatic.save(traced, tmp_path / "other", input_spec=[InputSpec([None, 3]),
                                                                InputSpec([None])])  # fmt: skip
    onnx = pytest.importorskip("onnx")
    model = autostatic.onnx.export(traced, str(tmp_path / "traced.onnx"))
    assert isinstance(model, onnx.ModelProto) and len(model.graph.input) == 2

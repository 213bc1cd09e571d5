"""Transformer layers on XLA, and a small transformer's greedy decode with a KV cache that
grows each step (a tensor stop condition): eager, both executors, XLA as one computation,
and ONNX Runtime (``Loop``), all equal."""

from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic  # noqa: E402
import autostatic_runtime as rt  # noqa: E402
from autostatic import InputSpec  # noqa: E402
from autostatic_runtime import nn  # noqa: E402
from autostatic_runtime.jit.run_program import compiled_functions  # noqa: E402
from autostatic_runtime.static.xla import XlaFunction  # noqa: E402
from tests.xla.test_to_static import no_fallback  # noqa: E402


def _x(*shape, seed=0):
    return rt.to_tensor(np.random.default_rng(seed).normal(size=shape).astype("float32"))


def on_xla(layer):
    """The layer's programs all ran as XLA computations."""
    functions = compiled_functions(layer.forward.concrete_program.runner)
    return functions and all(isinstance(f, XlaFunction) and f.fallback is None for f in functions)


class Regressor(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, normalize_before=True), 2
        )
        self.head = nn.Linear(8, 1)

    def forward(self, x, mask):
        return self.head(self.encoder(x, mask)).mean()


def train(net, args, steps=3):
    opt = rt.optimizer.SGD(0.05, parameters=net.parameters())
    losses = []
    for _ in range(steps):
        loss = net(*args)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in net.parameters()]


def test_encoder_training_on_xla_equals_eager():
    rt.seed(0)
    net = Regressor()
    mask = rt.to_tensor(np.random.default_rng(1).random((2, 1, 4, 4)) > 0.2)
    args = (_x(2, 4, 8), mask)
    compiled = autostatic.to_static(copy.deepcopy(net), backend="xla")
    with no_fallback():
        got_losses, got_params = train(compiled, args)
    want_losses, want_params = train(net, args)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-4)
    for g, w in zip(got_params, want_params, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    assert on_xla(compiled)


# ---- greedy decoding with a growing KV cache ------------------------------------------------


class TinyLM(nn.Layer):
    """A decoder-only transformer decoding greedily: its layers' ``Cache`` s grow by one
    position per step, and it stops when every sequence produced ``eos`` or after ``steps``
    tokens."""

    def __init__(self, vocab=12, d=8, heads=2, layers=2, steps=6, eos=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.position = nn.Embedding(steps, d)
        self.blocks = nn.LayerList(
            [nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0) for _ in range(layers)]
        )
        self.head = nn.Linear(d, vocab)
        self.steps, self.eos = steps, eos

    def forward(self, tok):
        caches = [block.gen_cache(self.embedding(tok)[:, None, :]) for block in self.blocks]
        finished = tok == self.eos
        out = []
        i = 0
        while i < self.steps and rt.any(~finished):
            x = self.embedding(tok)[:, None, :] + self.position(rt.full([1], i, "int64"))
            for j in range(len(self.blocks)):
                x, caches[j] = self.blocks[j](x, None, caches[j])
            tok = rt.argmax(self.head(x[:, 0]), axis=-1)
            out.append(tok)
            finished = finished | (tok == self.eos)
            i += 1
        return rt.stack(out, axis=1), caches[-1].k


def _decoder(seed):
    rt.seed(seed)
    model = TinyLM()
    model.eval()
    return model


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_decode_equals_eager_on_every_path(seed, tmp_path):
    """The decode runs eagerly, on the default executor, on XLA as one computation (one
    compiled block, no fallback) and in ONNX Runtime, with equal results; which step the
    stop condition ends it at depends on the weights (seeded)."""
    model = _decoder(seed)
    tok = rt.to_tensor(np.array([3, 5, 7, 9], "int64"))
    want = [t.numpy() for t in model(tok)]  # the tokens, the last layer's key cache
    default = autostatic.to_static(copy.deepcopy(model))
    xla = autostatic.to_static(copy.deepcopy(model), backend="xla")
    with no_fallback(), rt.no_grad():  # (with gradients on, the loop records itself)
        runs = [default(tok), xla(tok)]
    for got in runs:
        np.testing.assert_array_equal(got[0].numpy(), want[0])
        np.testing.assert_allclose(got[1].numpy(), want[1], rtol=1e-5, atol=1e-5)
    assert on_xla(xla) and len(compiled_functions(xla.forward.concrete_program.runner)) == 1
    pytest.importorskip("onnxruntime")
    import onnxruntime as ort

    proto = autostatic.onnx.export(model, str(tmp_path / "lm"), [InputSpec([4], "int64", "tok")])
    assert any(node.op_type == "Loop" for node in proto.graph.node)
    session = ort.InferenceSession(str(tmp_path / "lm.onnx"))
    tokens, keys = session.run(None, {"tok": tok.numpy()})
    np.testing.assert_array_equal(tokens, want[0])
    np.testing.assert_allclose(keys, want[1], rtol=1e-5, atol=1e-5)


def test_a_decode_that_stops_at_once():
    """Every sequence starts finished: the loop runs no iteration (the list holds nothing,
    so stacking it fails as it does eagerly)."""
    model = _decoder(0)
    tok = rt.to_tensor(np.zeros(4, "int64"))
    xla = autostatic.to_static(copy.deepcopy(model), backend="xla")
    with pytest.raises(rt.ShapeError, match="stack"):
        model(tok)
    with pytest.raises(rt.ShapeError, match="stack.*test_transformer.py"), rt.no_grad():
        xla(tok)


def test_decode_with_an_unknown_batch():
    """``gen_cache`` of a batch known only when the program runs (``InputSpec([None])``)."""
    model = _decoder(1)
    spec = [InputSpec([None], "int64", "tok")]
    for backend in (None, "xla"):
        f = autostatic.to_static(copy.deepcopy(model), input_spec=spec, backend=backend)
        for tok in ([3, 5, 7, 9, 2], [4, 1]):
            tok = rt.to_tensor(np.array(tok, "int64"))
            with no_fallback(), rt.no_grad():
                got = f(tok)
            for g, w in zip(got, model(tok), strict=True):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)

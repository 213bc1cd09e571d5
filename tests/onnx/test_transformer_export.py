"""Paddle's transformer layers exported to ONNX run in ONNX Runtime as they run eagerly: an
encoder-decoder ``Transformer`` with a causal and a padding mask (bool), and
``scaled_dot_product_attention``, at two batch sizes (the batch dim is dynamic)."""

from __future__ import annotations

import numpy as np

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn
from autostatic_runtime.nn import functional as F
from tests.onnx.ort import run_model


class Translator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.1, normalize_before=True)

    def forward(self, src, tgt, keep):
        causal = self.model.generate_square_subsequent_mask(tgt.shape[1])
        return self.model(src, tgt, tgt_mask=causal, memory_mask=keep[:, None, None, :])


def attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_transformer_and_attention_in_onnx_runtime(tmp_path):
    rt.seed(0)
    net = Translator()
    specs = [InputSpec([None, 5, 8], "float32", "src"), InputSpec([None, 3, 8], "float32", "tgt"),
             InputSpec([None, 5], "bool", "keep")]  # fmt: skip
    model = autostatic.onnx.export(net, str(tmp_path / "translator"), specs)
    qkv = [InputSpec([None, 4, 2, 4], "float32", n) for n in "qkv"]
    sdpa = autostatic.onnx.export(attention, str(tmp_path / "sdpa"), qkv)
    rng = np.random.default_rng(1)
    net.eval()  # (export traced in eval mode: dropout off)
    for batch in (1, 3):
        src, tgt = (rng.normal(size=(batch, n, 8)).astype("float32") for n in (5, 3))
        keep = rng.random((batch, 5)) > 0.3
        keep[:, 0] = True
        (got,) = run_model(model, {"src": src, "tgt": tgt, "keep": keep})
        want = net(*(rt.to_tensor(a) for a in (src, tgt, keep)))
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)
        feeds = {n: rng.normal(size=(batch, 4, 2, 4)).astype("float32") for n in "qkv"}
        (got,) = run_model(sdpa, feeds)
        want = attention(*(rt.to_tensor(feeds[n]) for n in "qkv"))
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-5)

"""Paddle's transformer layers against NumPy references of the same formulas (written here),
eagerly and under ``to_static``; gradients by central differences and eager vs static; the
incremental-decoding caches against full causal attention."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import nn
from autostatic_runtime.nn import functional as F
from tests.runtime.harness import check_grad

RTOL, ATOL = 1e-4, 1e-5


def _x(*shape, seed=0):
    return rt.to_tensor(np.random.default_rng(seed).normal(size=shape).astype("float32"))


# ---- NumPy references --------------------------------------------------------------------


def np_linear(x, layer):
    out = x @ layer.weight.numpy()
    return out if layer.bias is None else out + layer.bias.numpy()


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_layer_norm(x, norm, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * norm.weight.numpy() + norm.bias.numpy()


def np_mask(mask):
    if mask is None:
        return 0.0
    mask = np.asarray(mask)
    if mask.dtype.kind in "biu":  # bool/int: 0 where masked out (Paddle's conversion)
        return (mask.astype(np.float32) - 1.0) * 1e9
    return mask


def np_mha(mha, q, k=None, v=None, mask=None):
    k = q if k is None else k
    v = q if v is None else v
    b, lq, _ = q.shape
    h, hd = mha.num_heads, mha.head_dim

    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], h, hd).transpose(0, 2, 1, 3)

    qh, kh, vh = (
        heads(np_linear(q, mha.q_proj)),
        heads(np_linear(k, mha.k_proj)),
        heads(np_linear(v, mha.v_proj)),
    )
    weights = np_softmax(qh @ kh.transpose(0, 1, 3, 2) * hd**-0.5 + np_mask(mask))
    out = (weights @ vh).transpose(0, 2, 1, 3).reshape(b, lq, h * hd)
    return np_linear(out, mha.out_proj), weights


def np_ffn(layer, x):
    act = {"relu": lambda a: np.maximum(a, 0), "gelu": lambda a: F.gelu(rt.to_tensor(a)).numpy()}
    hidden = act[layer._config["activation"]](np_linear(x, layer.linear1))
    return np_linear(hidden, layer.linear2)


def np_sublayer(layer, x, norm, fn):
    """Pre-norm: x + f(norm(x)); post-norm: norm(x + f(x))."""
    if layer.normalize_before:
        return x + fn(np_layer_norm(x, norm))
    return np_layer_norm(x + fn(x), norm)


def np_encoder_layer(layer, x, mask=None):
    x = np_sublayer(layer, x, layer.norm1, lambda h: np_mha(layer.self_attn, h, mask=mask)[0])
    return np_sublayer(layer, x, layer.norm2, lambda h: np_ffn(layer, h))


def np_decoder_layer(layer, x, memory, tgt_mask=None, memory_mask=None):
    x = np_sublayer(layer, x, layer.norm1, lambda h: np_mha(layer.self_attn, h, mask=tgt_mask)[0])
    x = np_sublayer(
        layer, x, layer.norm2, lambda h: np_mha(layer.cross_attn, h, memory, memory, memory_mask)[0]
    )
    return np_sublayer(layer, x, layer.norm3, lambda h: np_ffn(layer, h))


def causal(n):
    return np.triu(np.full((n, n), -np.inf, np.float32), 1)


# ---- MultiHeadAttention ---------------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", [None, "float", "bool", "int"])
def test_multi_head_attention_matches_numpy(mask_kind):
    rt.seed(0)
    mha = nn.MultiHeadAttention(8, 2, kdim=6, vdim=5, need_weights=True)
    q, k, v = _x(2, 3, 8), _x(2, 4, 6, seed=1), _x(2, 4, 5, seed=2)
    rng = np.random.default_rng(3)
    mask = {
        None: None,
        "float": rng.normal(size=(2, 1, 3, 4)).astype("float32"),
        "bool": rng.random((2, 2, 3, 4)) > 0.3,
        "int": (rng.random((3, 4)) > 0.3).astype("int64"),
    }[mask_kind]
    out, weights = mha(q, k, v, None if mask is None else rt.to_tensor(mask))
    want, want_weights = np_mha(mha, q.numpy(), k.numpy(), v.numpy(), mask)
    np.testing.assert_allclose(out.numpy(), want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(weights.numpy(), want_weights, rtol=RTOL, atol=ATOL)


def test_multi_head_attention_options():
    mha = nn.MultiHeadAttention(8, 4, bias_attr=False)
    assert all(m.bias is None for m in (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj))
    assert mha(_x(1, 2, 8)).shape == [1, 2, 8]  # one tensor: no weights, no cache
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(8, 3)
    with pytest.raises(ValueError, match="positive"):
        nn.MultiHeadAttention(0, 1)


def test_incremental_cache_equals_causal_attention():
    """Decoding one position at a time with ``Cache`` (keys and values concatenated to)
    gives the outputs of attention over the whole sequence with a causal mask."""
    rt.seed(1)
    mha = nn.MultiHeadAttention(8, 2)
    x = _x(2, 5, 8)
    full = mha(x, attn_mask=rt.to_tensor(causal(5)))
    cache = mha.gen_cache(x)
    assert cache.k.shape == [2, 2, 0, 4]
    steps = []
    for t in range(5):
        out, cache = mha(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], None, cache)
        steps.append(out.numpy())
    assert cache.k.shape == [2, 2, 5, 4] and isinstance(cache, nn.MultiHeadAttention.Cache)
    np.testing.assert_allclose(np.concatenate(steps, 1), full.numpy(), rtol=RTOL, atol=ATOL)


def test_static_cache_holds_the_projected_keys_and_values():
    rt.seed(2)
    mha = nn.MultiHeadAttention(8, 2)
    q, memory = _x(2, 3, 8), _x(2, 4, 8, seed=1)
    cache = mha.gen_cache(memory, memory, type=nn.MultiHeadAttention.StaticCache)
    out, same = mha(q, None, None, None, cache)
    assert same is cache
    np.testing.assert_allclose(out.numpy(), mha(q, memory, memory).numpy(), rtol=RTOL, atol=ATOL)
    given = mha.gen_cache(cache.k, cache.v)  # a Cache holding given keys and values
    assert isinstance(given, nn.MultiHeadAttention.Cache) and given.k is cache.k


# ---- encoder and decoder layers --------------------------------------------------------------


@pytest.mark.parametrize("normalize_before", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_numpy(normalize_before, activation):
    rt.seed(3)
    layer = nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation=activation, normalize_before=normalize_before
    )
    x = _x(2, 4, 8)
    mask = np.random.default_rng(4).random((2, 1, 4, 4)) > 0.2
    got = layer(x, rt.to_tensor(mask))
    np.testing.assert_allclose(
        got.numpy(), np_encoder_layer(layer, x.numpy(), mask), rtol=RTOL, atol=ATOL
    )


def test_encoder_stack_copies_the_layer_and_normalizes():
    rt.seed(4)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, normalize_before=True)
    encoder = nn.TransformerEncoder(layer, 3, nn.LayerNorm(8))
    assert encoder.layers[0] is layer and len(encoder.layers) == 3
    second = encoder.layers[1]
    assert second.normalize_before and second.linear1.weight is not layer.linear1.weight
    assert len(encoder.parameters()) == 3 * len(layer.parameters()) + 2
    x = _x(2, 4, 8).numpy()
    want = x
    for one in encoder.layers:
        want = np_encoder_layer(one, want)
    want = np_layer_norm(want, encoder.norm)
    got = encoder(rt.to_tensor(x))
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)


def test_decoder_layer_and_stack_match_numpy():
    rt.seed(5)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    tgt, memory = _x(2, 3, 8), _x(2, 5, 8, seed=1)
    memory_mask = np.random.default_rng(6).random((2, 1, 1, 5)) > 0.2
    got = layer(tgt, memory, rt.to_tensor(causal(3)), rt.to_tensor(memory_mask))
    want = np_decoder_layer(layer, tgt.numpy(), memory.numpy(), causal(3), memory_mask)
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)
    decoder = nn.TransformerDecoder(layer, 2)
    want = np_decoder_layer(decoder.layers[1], want, memory.numpy(), causal(3), memory_mask)
    got = decoder(tgt, memory, rt.to_tensor(causal(3)), rt.to_tensor(memory_mask))
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)


def test_decoder_caches_decode_as_the_causal_decoder():
    rt.seed(6)
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2)
    tgt, memory = _x(2, 4, 8), _x(2, 3, 8, seed=1)
    full = decoder(tgt, memory, rt.to_tensor(causal(4)))
    caches = decoder.gen_cache(memory)
    assert len(caches) == 2 and isinstance(caches[0][1], nn.MultiHeadAttention.StaticCache)
    zipped = decoder.gen_cache(memory, do_zip=True)
    assert len(zipped) == 2 and len(zipped[0]) == 2
    steps = []
    for t in range(4):
        out, caches = decoder(tgt[:, t : t + 1], memory, None, None, caches)
        steps.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full.numpy(), rtol=RTOL, atol=ATOL)


def test_transformer_matches_its_encoder_and_decoder():
    rt.seed(7)
    model = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0)
    src, tgt = _x(2, 5, 8), _x(2, 3, 8, seed=1)
    mask = model.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(mask.numpy(), causal(3))
    got = model(src, tgt, tgt_mask=mask)
    want = model.decoder(tgt, model.encoder(src), tgt_mask=mask)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=ATOL)
    assert isinstance(model.encoder.norm, nn.LayerNorm) and len(model.decoder.layers) == 2


def test_parameter_attributes_are_spread_as_paddle_spreads_them():
    layer = nn.TransformerDecoderLayer(8, 2, 16, bias_attr=[False, None, False])
    assert layer.self_attn.q_proj.bias is None and layer.linear1.bias is None
    assert layer.cross_attn.q_proj.bias is not None
    named = nn.TransformerEncoderLayer(8, 2, 16, weight_attr=nn.ParamAttr(name="w"))
    names = {p.name for p in named.parameters()}
    assert {"w_0", "w_1"} <= names
    model = nn.Transformer(8, 2, 1, 1, 16, bias_attr=[False, None])
    assert model.encoder.layers[0].self_attn.q_proj.bias is None
    assert model.encoder.layers[0].linear1.bias is not None
    assert model.decoder.layers[0].cross_attn.q_proj.bias is None


def test_dropout_applies_in_training_only():
    rt.seed(8)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = _x(2, 4, 8)
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), np_encoder_layer(layer, x.numpy()), rtol=RTOL,
                               atol=ATOL)  # fmt: skip
    layer.train()
    assert not np.allclose(layer(x).numpy(), layer(x).numpy())


# ---- scaled_dot_product_attention ---------------------------------------------------------


@pytest.mark.parametrize("is_causal", [False, True])
def test_scaled_dot_product_attention_matches_numpy(is_causal):
    q, k, v = _x(2, 3, 2, 4), _x(2, 3, 2, 4, seed=1), _x(2, 3, 2, 4, seed=2)
    mask = np.random.default_rng(9).random((2, 2, 3, 3)) > 0.3
    mask[..., 0] = True  # every query keeps a key
    got = F.scaled_dot_product_attention(q, k, v, rt.to_tensor(mask), is_causal=is_causal)
    qh, kh, vh = (t.numpy().transpose(0, 2, 1, 3) for t in (q, k, v))
    scores = qh @ kh.transpose(0, 1, 3, 2) / 2.0 + np_mask(mask)
    if is_causal:
        scores = scores + causal(3)
    want = (np_softmax(scores) @ vh).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)
    with pytest.raises(rt.errors.ShapeError, match="4-D"):
        F.scaled_dot_product_attention(q[0, 0], k, v)


# ---- gradients and to_static ------------------------------------------------------------


def test_gradients_by_central_differences():
    rt.seed(10)
    mha = nn.MultiHeadAttention(4, 2)
    mask = rt.to_tensor(np.random.default_rng(11).random((1, 1, 3, 3)) > 0.3)
    check_grad(lambda q, k: mha(q, k, k, mask), [_x(1, 3, 4), _x(1, 3, 4, seed=1)], [0, 1],
               rtol=1e-3, atol=1e-4, label="MultiHeadAttention")  # fmt: skip
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, normalize_before=True)
    check_grad(layer, [_x(1, 3, 4)], [0], rtol=1e-3, atol=1e-4, label="encoder layer")
    check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
               [_x(1, 3, 2, 2), _x(1, 3, 2, 2, seed=1), _x(1, 3, 2, 2, seed=2)], [0, 1, 2],
               rtol=1e-3, atol=1e-4, label="sdpa")  # fmt: skip


class Seq2Seq(nn.Layer):
    def __init__(self):
        super().__init__()
        self.model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)

    def forward(self, src, tgt, mask):
        return self.model(src, tgt, tgt_mask=mask).sum()


def _loss_and_grads(net, args):
    loss = net(*args)
    loss.backward()
    grads = [p.grad.numpy() for p in net.parameters()]
    net.clear_gradients()
    return float(loss), grads


def test_to_static_matches_eager_values_and_gradients():
    rt.seed(12)
    net = Seq2Seq()
    args = (_x(2, 5, 8), _x(2, 3, 8, seed=1), rt.to_tensor(causal(3)))
    want_loss, want_grads = _loss_and_grads(net, args)
    static = autostatic.to_static(net)
    got_loss, got_grads = _loss_and_grads(static, args)
    np.testing.assert_allclose(got_loss, want_loss, rtol=RTOL)
    for g, w in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5)

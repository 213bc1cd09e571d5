"""Transformer layers (Paddle 2.x ``paddle.nn``): ``MultiHeadAttention`` with its incremental
decoding caches, ``TransformerEncoderLayer``/``TransformerEncoder``,
``TransformerDecoderLayer``/``TransformerDecoder`` and ``Transformer``.

They are built from ``Linear``, ``LayerNorm``, ``Dropout`` and
``functional.attention.attention_heads`` (no op of their own), with Paddle's signatures,
parameter layout and semantics: ``normalize_before`` puts layer normalization before each
sub-layer (pre-norm) instead of after the residual sum (post-norm, the default);
``attn_dropout``/``act_dropout`` default to ``dropout``; attention masks broadcast to
``[batch, heads, query_len, key_len]`` and are additive floats, or bool/int masks whose
False/0 positions are masked out.

Incremental decoding (``MultiHeadAttention.Cache``): the keys and values of the positions
decoded so far, ``[batch, heads, length, head_dim]``, concatenated with the new step's at
each call; ``StaticCache`` holds keys and values computed once (cross attention over the
encoder's output)::

    cache = mha.gen_cache(x)                # empty: [batch, heads, 0, head_dim]
    for t in range(steps):
        out, cache = mha(x_t, x_t, x_t, None, cache)   # cache.k grows by one position
"""

from __future__ import annotations

import collections
import copy
from typing import Any

from autostatic_runtime.nn import functional as F
from autostatic_runtime.nn.functional.attention import attention_heads, attention_mask
from autostatic_runtime.nn.layer.common import Dropout, Linear
from autostatic_runtime.nn.layer.container import LayerList
from autostatic_runtime.nn.layer.layers import Layer
from autostatic_runtime.nn.layer.norm import LayerNorm

__all__ = [
    "MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder",
    "TransformerDecoderLayer", "TransformerDecoder", "Transformer",
]  # fmt: skip


def _rt():
    import autostatic_runtime as rt

    return rt


def _attrs(attr: Any, n: int) -> list:
    """``weight_attr``/``bias_attr`` for ``n`` sub-layers: a list or tuple gives one each (it
    must have ``n`` entries); a bool gives ``n`` defaults (True) or ``n`` False (no such
    parameter); anything else is shared, a named ``ParamAttr`` copied with ``_0``, ``_1``...
    appended to its name so the parameters keep distinct names (as Paddle does)."""
    if isinstance(attr, (list, tuple)):
        if len(attr) != n:
            raise ValueError(f"weight_attr/bias_attr must have {n} entries, got {len(attr)}")
        return [None if a is True else a for a in attr]
    if isinstance(attr, bool):
        return [None if attr else False] * n
    if getattr(attr, "name", None):
        out = []
        for i in range(n):
            one = copy.deepcopy(attr)
            one.name = f"{attr.name}_{i}"
            out.append(one)
        return out
    return [attr] * n


def _positive(layer: str, **sizes: int) -> None:
    for what, size in sizes.items():
        if not isinstance(size, int) or size <= 0:
            raise ValueError(f"{layer}: {what} must be a positive int, got {size!r}")


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al.): queries, keys and values projected by
    ``q_proj``/``k_proj``/``v_proj``, split into ``num_heads`` heads, scaled dot-product
    attention per head, heads joined and projected by ``out_proj``.

    Args:
        embed_dim: feature size of queries and outputs.
        num_heads: number of heads (must divide ``embed_dim``).
        dropout: dropout probability on the attention weights (in training).
        kdim, vdim: feature sizes of keys and values (``embed_dim`` when None).
        need_weights: also return the attention weights ``[batch, heads, Lq, Lk]``.
        weight_attr, bias_attr: the projections' parameter attributes (``bias_attr=False``:
            no biases).

    ``forward(query, key=None, value=None, attn_mask=None, cache=None)`` returns ``out``, or
    a tuple ``(out, weights?, cache?)`` when ``need_weights`` is set or a cache is given.
    """

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        kdim: int | None = None,
        vdim: int | None = None,
        need_weights: bool = False,
        weight_attr: Any = None,
        bias_attr: Any = None,
    ):
        super().__init__()
        _positive("MultiHeadAttention", embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiHeadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                f"({num_heads})"
            )
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self.num_heads = num_heads
        self.dropout = dropout
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x: Any) -> Any:
        """``[batch, length, embed_dim]`` -> ``[batch, heads, length, head_dim]``."""
        rt = _rt()
        return rt.transpose(rt.reshape(x, [0, 0, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def compute_kv(self, key: Any, value: Any) -> tuple[Any, Any]:
        """The projected keys and values split into heads: two ``[batch, heads, length,
        head_dim]`` tensors (what a cache holds)."""
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key: Any, value: Any = None, type: Any = Cache) -> Any:
        """A cache for ``forward``: ``StaticCache`` of ``compute_kv(key, value)``; a
        ``Cache`` holding ``key`` and ``value`` as given; or, without ``value``, an empty
        ``Cache`` (``[batch, heads, 0, head_dim]``, batch size and dtype from ``key``)."""
        if type is MultiHeadAttention.StaticCache:
            return self.StaticCache(*self.compute_kv(key, value))
        if value is None:
            rt = _rt()
            batch = key.shape[0]
            if batch < 0:  # a batch known only when the program runs
                batch = rt.shape(key)[0]
            shape = [batch, self.num_heads, 0, self.head_dim]
            return self.Cache(rt.zeros(shape, key.dtype), rt.zeros(shape, key.dtype))
        return self.Cache(key, value)

    def forward(
        self, query: Any, key: Any = None, value: Any = None, attn_mask: Any = None,
        cache: Any = None,
    ) -> Any:  # fmt: skip
        rt = _rt()
        key = query if key is None else key
        value = query if value is None else value
        q = self._heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k = rt.concat([cache.k, k], axis=2)
            v = rt.concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        out, weights = attention_heads(
            q, k, v, attn_mask, self.dropout, self.training, self.head_dim**-0.5
        )
        out = rt.reshape(rt.transpose(out, [0, 2, 1, 3]), [0, 0, self.embed_dim])
        out = self.out_proj(out)
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(cache)
        return out if len(outs) == 1 else tuple(outs)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


class _Sublayers(Layer):
    """What the encoder and decoder layers share: the feed-forward network, the norms and
    dropouts, pre-/post-norm residual blocks, and the configuration a stack copies."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int,
        dropout: float = 0.1,
        activation: str = "relu",
        attn_dropout: float | None = None,
        act_dropout: float | None = None,
        normalize_before: bool = False,
        weight_attr: Any = None,
        bias_attr: Any = None,
    ):
        """The sub-layers, in Paddle's order: the attentions named in ``_attentions``, the
        feed-forward network, one norm and one dropout per sub-layer."""
        config = _config(locals())
        super().__init__()
        ffn = dim_feedforward
        _positive(type(self).__name__, d_model=d_model, nhead=nhead, dim_feedforward=ffn)
        self._config = config  # what a stack copies (``_Stack``)
        n = len(self._attentions) + 1
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        weights, biases = _attrs(weight_attr, n), _attrs(bias_attr, n)
        for name, w, b in zip(self._attentions, weights, biases):
            attention = MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=w, bias_attr=b)
            setattr(self, name, attention)
        self.linear1 = Linear(d_model, ffn, weights[-1], bias_attr=biases[-1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(ffn, d_model, weights[-1], bias_attr=biases[-1])
        for i in range(1, n + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model))
        for i in range(1, n + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
        self.activation = getattr(F, activation)

    def _pre(self, x: Any, norm: Any) -> Any:
        return norm(x) if self.normalize_before else x

    def _post(self, residual: Any, x: Any, dropout: Any, norm: Any) -> Any:
        x = residual + dropout(x)
        return x if self.normalize_before else norm(x)

    def _feed_forward(self, x: Any, dropout: Any, norm: Any) -> Any:
        h = self._pre(x, norm)
        h = self.linear2(self.dropout(self.activation(self.linear1(h))))
        return self._post(x, h, dropout, norm)


def _config(local: dict) -> dict:
    return {k: v for k, v in local.items() if k not in ("self", "__class__")}


class TransformerEncoderLayer(_Sublayers):
    """Self attention and a feed-forward network, each with a residual connection, dropout
    and layer normalization (after the sum; before the sub-layer with ``normalize_before``).

    Args:
        d_model: feature size; nhead: attention heads; dim_feedforward: hidden size of the
            feed-forward network.
        dropout: dropout after each sub-layer (default 0.1); attn_dropout: on the attention
            weights; act_dropout: after the activation (both default to ``dropout``).
        activation: a name in ``nn.functional`` (``"relu"``, ``"gelu"``...).
        normalize_before: pre-norm instead of post-norm.
        weight_attr, bias_attr: one for all, or a list of two (attention, feed-forward).

    ``forward(src, src_mask=None, cache=None)``: ``[batch, length, d_model]``; with a
    ``cache`` (``gen_cache``) returns ``(out, new_cache)``.
    """

    _attentions = ("self_attn",)

    def forward(self, src: Any, src_mask: Any = None, cache: Any = None) -> Any:
        src_mask = attention_mask(src_mask, src.dtype)
        h = self._pre(src, self.norm1)
        if cache is None:
            h = self.self_attn(h, h, h, src_mask)
        else:
            h, cache = self.self_attn(h, h, h, src_mask, cache)
        out = self._post(src, h, self.dropout1, self.norm1)
        out = self._feed_forward(out, self.dropout2, self.norm2)
        return out if cache is None else (out, cache)

    def gen_cache(self, src: Any) -> Any:
        """An empty ``MultiHeadAttention.Cache`` for the self attention."""
        return self.self_attn.gen_cache(src, type=MultiHeadAttention.Cache)


class TransformerDecoderLayer(_Sublayers):
    """Self attention, cross attention over the encoder's output (``memory``) and a
    feed-forward network, each with residual, dropout and layer normalization as in
    ``TransformerEncoderLayer``. ``weight_attr``/``bias_attr``: one for all, or a list of
    three (self attention, cross attention, feed-forward).

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)``; ``cache`` is
    ``(Cache, StaticCache)`` from ``gen_cache(memory)``, and then ``(out, new_cache)`` is
    returned.
    """

    _attentions = ("self_attn", "cross_attn")

    def forward(
        self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
        cache: Any = None,
    ) -> Any:  # fmt: skip
        tgt_mask = attention_mask(tgt_mask, tgt.dtype)
        memory_mask = attention_mask(memory_mask, memory.dtype)
        h = self._pre(tgt, self.norm1)
        if cache is None:
            h = self.self_attn(h, h, h, tgt_mask, None)
        else:
            h, incremental = self.self_attn(h, h, h, tgt_mask, cache[0])
        out = self._post(tgt, h, self.dropout1, self.norm1)
        h = self._pre(out, self.norm2)
        if cache is None:
            h = self.cross_attn(h, memory, memory, memory_mask, None)
        else:
            h, static = self.cross_attn(h, memory, memory, memory_mask, cache[1])
        out = self._post(out, h, self.dropout2, self.norm2)
        out = self._feed_forward(out, self.dropout3, self.norm3)
        return out if cache is None else (out, (incremental, static))

    def gen_cache(self, memory: Any) -> tuple:
        """``(Cache, StaticCache)``: an empty cache for the self attention and the cross
        attention's keys and values of ``memory``."""
        incremental = self.self_attn.gen_cache(memory, type=MultiHeadAttention.Cache)
        static = self.cross_attn.gen_cache(memory, memory, type=MultiHeadAttention.StaticCache)
        return incremental, static


class _Stack(Layer):
    """``num_layers`` layers: the one given and copies of its configuration (new
    parameters), then an optional final ``norm``."""

    def __init__(self, layer: Layer, num_layers: int, norm: Any = None):
        super().__init__()
        _positive(type(self).__name__, num_layers=num_layers)
        self.layers = LayerList(
            [layer if i == 0 else type(layer)(**layer._config) for i in range(num_layers)]
        )
        self.num_layers = num_layers
        self.norm = norm

    def _finish(self, output: Any, caches: list | None) -> Any:
        if self.norm is not None:
            output = self.norm(output)
        return output if caches is None else (output, caches)


class TransformerEncoder(_Stack):
    """A stack of ``num_layers`` ``TransformerEncoderLayer`` s (``encoder_layer`` and copies
    of its configuration) and an optional final ``norm``. ``forward(src, src_mask=None,
    cache=None)``; ``cache`` is a list of one cache per layer (``gen_cache``)."""

    def __init__(self, encoder_layer: Layer, num_layers: int, norm: Any = None):
        super().__init__(encoder_layer, num_layers, norm)

    def forward(self, src: Any, src_mask: Any = None, cache: Any = None) -> Any:
        src_mask = attention_mask(src_mask, src.dtype)
        output = src
        caches = None if cache is None else []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, src_mask=src_mask)
            else:
                output, new = layer(output, src_mask=src_mask, cache=cache[i])
                caches.append(new)
        return self._finish(output, caches)

    def gen_cache(self, src: Any) -> list:
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoder(_Stack):
    """A stack of ``num_layers`` ``TransformerDecoderLayer`` s and an optional final
    ``norm``. ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)``;
    ``cache`` is a list of one ``(Cache, StaticCache)`` per layer (``gen_cache``)."""

    def __init__(self, decoder_layer: Layer, num_layers: int, norm: Any = None):
        super().__init__(decoder_layer, num_layers, norm)

    def forward(
        self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
        cache: Any = None,
    ) -> Any:  # fmt: skip
        tgt_mask = attention_mask(tgt_mask, tgt.dtype)
        memory_mask = attention_mask(memory_mask, memory.dtype)
        output = tgt
        caches = None if cache is None else []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
            else:
                output, new = layer(
                    output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=cache[i]
                )
                caches.append(new)
        return self._finish(output, caches)

    def gen_cache(self, memory: Any, do_zip: bool = False) -> list:
        """One ``(Cache, StaticCache)`` per layer; with ``do_zip``, two lists (all the
        ``Cache`` s, all the ``StaticCache`` s)."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*cache)) if do_zip else cache


def _split_attrs(attr: Any) -> tuple[Any, Any]:
    """``Transformer``'s ``weight_attr``/``bias_attr`` as (encoder's, decoder's): a list of
    1, 2 or 3 entries spread as Paddle does, anything else shared."""
    if not isinstance(attr, (list, tuple)):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]] * 2, [attr[0]] * 3
    if len(attr) == 2:
        return list(attr), [attr[0], attr[0], attr[-1]]
    if len(attr) == 3:
        return [attr[0], attr[-1]], list(attr)
    raise ValueError(f"Transformer: weight_attr/bias_attr lists have 1-3 entries, got {len(attr)}")


class Transformer(Layer):
    """An encoder (``TransformerEncoder`` of ``num_encoder_layers``, final ``LayerNorm``) and
    a decoder (``TransformerDecoder`` of ``num_decoder_layers``, final ``LayerNorm``), without
    embeddings or output projection. ``custom_encoder``/``custom_decoder`` replace them.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None)`` returns the
    decoder's output ``[batch, tgt_len, d_model]``.
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str = "relu",
        attn_dropout: float | None = None,
        act_dropout: float | None = None,
        normalize_before: bool = False,
        weight_attr: Any = None,
        bias_attr: Any = None,
        custom_encoder: Any = None,
        custom_decoder: Any = None,
    ):
        super().__init__()
        enc_w, dec_w = _split_attrs(weight_attr)
        enc_b, dec_b = _split_attrs(bias_attr)
        shared = (d_model, nhead, dim_feedforward, dropout, activation, attn_dropout,
                  act_dropout, normalize_before)  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*shared, enc_w, enc_b)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*shared, dec_w, dec_b)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model = d_model
        self.nhead = nhead

    def forward(
        self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None,
        memory_mask: Any = None,
    ) -> Any:  # fmt: skip
        memory = self.encoder(src, src_mask=attention_mask(src_mask, src.dtype))
        return self.decoder(
            tgt,
            memory,
            tgt_mask=attention_mask(tgt_mask, tgt.dtype),
            memory_mask=attention_mask(memory_mask, memory.dtype),
        )

    def generate_square_subsequent_mask(self, length: Any) -> Any:
        """``[length, length]`` additive mask: 0 on and below the diagonal, ``-inf`` above,
        so position ``i`` attends to positions ``0..i`` only."""
        from autostatic_runtime import dtypes
        from autostatic_runtime.nn.functional.attention import causal_mask

        return causal_mask(length, length, dtypes.get_default_dtype())

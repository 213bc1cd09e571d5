"""Scaled dot-product attention (Paddle's ``paddle.nn.functional.scaled_dot_product_attention``).

Built from existing ops (``matmul``, ``softmax``, ``dropout``, ``triu``), so eager, static,
XLA, gradients and ONNX export come with them. ``attention_heads`` is the one place the
formula lives; ``MultiHeadAttention`` calls it on ``[batch, heads, length, head_dim]``
tensors, ``scaled_dot_product_attention`` on Paddle's ``[batch, length, heads, head_dim]``
layout::

    weights = softmax(q @ k^T * scale + mask)     # mask: additive, or bool/int converted
    out = dropout(weights) @ v
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.nn.functional._utils import shape_error

__all__ = ["scaled_dot_product_attention"]

# what a bool/int mask's False/0 positions add to the scores (Paddle's conversion)
MASKED = -1e9


def attention_mask(mask: Any, dtype: Any) -> Any:
    """An attention mask as scores to add, of ``dtype``: a bool or integer mask keeps the
    positions that are True/1 and adds ``-1e9`` to the others (Paddle's
    ``_convert_attention_mask``); a float mask is added as it is. None stays None."""
    if mask is None or mask.dtype == dtype:
        return mask
    from autostatic_runtime.ops.elementwise import cast

    if dtypes.kind(mask.dtype) < 2:  # bool or integer
        return (cast(mask, dtype) - 1.0) * -MASKED
    return cast(mask, dtype)


def causal_mask(queries: Any, keys: Any, dtype: Any) -> Any:
    """``[queries, keys]`` additive mask: query ``i`` sees keys ``0..i`` (``-inf`` above the
    diagonal), as Paddle's ``Transformer.generate_square_subsequent_mask`` for a square one."""
    from autostatic_runtime.creation import full
    from autostatic_runtime.ops.manipulation import triu

    return triu(full([queries, keys], float("-inf"), dtype), 1)


def attention_heads(
    q: Any,
    k: Any,
    v: Any,
    mask: Any = None,
    dropout: float = 0.0,
    training: bool = True,
    scale: float | None = None,
) -> tuple[Any, Any]:
    """Attention over ``[..., length, head_dim]`` tensors: returns ``(out, weights)``.

    Args:
        q, k, v: queries ``[..., Lq, D]``, keys ``[..., Lk, D]``, values ``[..., Lk, Dv]``.
        mask: scores added before the softmax (broadcast to ``[..., Lq, Lk]``), or a
            bool/int mask (``attention_mask``); None for none.
        dropout: the probability of dropping an attention weight (``upscale_in_train``).
        training: whether dropout applies.
        scale: the scores' factor; ``D ** -0.5`` when None.
    """
    from autostatic_runtime.nn.functional.activation import softmax
    from autostatic_runtime.nn.functional.common import dropout as drop
    from autostatic_runtime.ops.linalg import matmul

    if scale is None:
        scale = q.shape[-1] ** -0.5
    scores = matmul(q, k, transpose_y=True) * scale
    mask = attention_mask(mask, scores.dtype)
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
    if dropout:
        weights = drop(weights, dropout, training=training, mode="upscale_in_train")
    return matmul(weights, v), weights


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    training: bool = True,
    name: str | None = None,
) -> Any:
    """``softmax(Q K^T / sqrt(d) + mask) V`` on Paddle's layout.

    Args:
        query: ``[batch, seq_len, num_heads, head_dim]`` (or without the batch dim).
        key, value: ``[batch, kv_len, num_heads, head_dim]``.
        attn_mask: added to the scores (broadcast to ``[batch, num_heads, seq_len, kv_len]``);
            a bool mask keeps the True positions.
        dropout_p: dropout probability on the attention weights (when ``training``).
        is_causal: query ``i`` attends to keys ``0..i`` only (with ``attn_mask``, both apply).
        training: whether dropout applies.

    Returns:
        ``[batch, seq_len, num_heads, head_dim]``.
    """
    from autostatic_runtime.ops.manipulation import transpose

    if query.ndim not in (3, 4) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise shape_error(
            "scaled_dot_product_attention",
            f"query, key and value must all be 4-D [batch, seq_len, num_heads, head_dim] (or "
            f"3-D without the batch), got {list(query.shape)}, {list(key.shape)}, "
            f"{list(value.shape)}",
        )
    perm = [0, 2, 1, 3] if query.ndim == 4 else [1, 0, 2]
    q, k, v = transpose(query, perm), transpose(key, perm), transpose(value, perm)
    mask = attention_mask(attn_mask, q.dtype)
    if is_causal:
        causal = causal_mask(q.shape[-2], k.shape[-2], q.dtype)
        mask = causal if mask is None else mask + causal
    out, _ = attention_heads(q, k, v, mask, dropout_p, training)
    return transpose(out, perm)

"""Which ops run in low precision under ``rt.amp.auto_cast``: Paddle's white and black lists.

White ops (matmul, convolution, einsum, max pooling) take their float32 inputs cast to the
AMP dtype; black ops (exp/log/pow, reductions, softmax, norms, cross entropy and the other
losses) take float16/bfloat16 inputs cast to float32. Every other op is "gray": it runs in
float32 when any of its inputs is float32 (``use_promote``), else in the AMP dtype.

Names are Paddle's op names, which are this runtime's (``matmul_v2``, ``elementwise_add``);
a custom list may also use Paddle's newer spellings (``matmul``, ``add``), mapped by
``ALIASES``.
"""

from __future__ import annotations

__all__ = ["white_list", "black_list", "resolve", "NEVER_CAST"]

FP16_WHITE = frozenset({"conv2d", "einsum", "matmul", "matmul_v2", "max_pool2d_with_index", "mul"})
FP16_BLACK = frozenset(
    {
        "tan", "acos", "asin", "sinh", "cosh", "atanh", "tanh_shrink", "cos_sim", "erfinv",
        "exp", "expm1", "log", "log10", "log2", "reciprocal", "rsqrt", "pow", "square",
        "reduce_sum", "mean", "reduce_mean", "reduce_prod", "cumprod",
        "cumsum", "dist", "pnorm", "frobenius_norm", "renorm", "group_norm", "layer_norm",
        "softmax", "softmin", "softplus", "log_softmax", "softmax_with_cross_entropy",
        "sigmoid_cross_entropy_with_logits", "cross_entropy", "cross_entropy2", "nll_loss",
        "huber_loss", "triplet_margin_loss", "log_loss", "hsigmoid_loss",
        "margin_cross_entropy",
    }
)  # fmt: skip
# slower in low precision (their gradients): float32 at O1 and O2
EXTRA_BLACK = frozenset(
    {
        "linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2", "bicubic_interp_v2",
        "trilinear_interp_v2", "lookup_table", "lookup_table_v2", "scatter",
    }
)  # fmt: skip
BF16_WHITE = frozenset({"conv2d", "einsum", "matmul_v2"})

# ops whose inputs are never cast: explicit conversions and copies keep what the user asked
# for, state and control ops move values as they are
NEVER_CAST = frozenset(
    {
        "cast", "assign", "assign_value", "set_value", "print", "assert", "shape", "size",
        "create_array", "array_write", "array_read", "array_length", "array_pop",
        "stack_array", "fill_constant", "full_like",
    }
)  # fmt: skip

# Paddle's newer (PIR) names -> this runtime's op names
ALIASES = {
    "matmul": "matmul_v2",
    "add": "elementwise_add",
    "subtract": "elementwise_sub",
    "multiply": "elementwise_mul",
    "divide": "elementwise_div",
    "maximum": "elementwise_max",
    "minimum": "elementwise_min",
    "embedding": "lookup_table_v2",
    "cross_entropy_with_softmax": "softmax_with_cross_entropy",
    "max": "reduce_max",
    "min": "reduce_min",
    "prod": "reduce_prod",
    "linear": "matmul_v2",
}


def white_list(dtype: str, level: str) -> frozenset:
    """The default white list of ``dtype`` ('float16'/'bfloat16') at ``level``."""
    if level == "O0":
        return frozenset()
    return FP16_WHITE if dtype == "float16" else BF16_WHITE


def black_list(dtype: str, level: str) -> frozenset:
    """The default black list: Paddle's at O1, only the slow-gradient ops at O2, none at OD."""
    if level in ("O0", "OD"):
        return frozenset()
    if level == "O2":
        return EXTRA_BLACK
    return (FP16_BLACK if dtype == "float16" else frozenset()) | EXTRA_BLACK


def resolve(names: frozenset | set) -> set:
    """The names and the runtime op names they stand for."""
    return set(names) | {ALIASES[n] for n in names if n in ALIASES}

"""Samples: nn.functional ops (activations, conv, pooling, norms, dropout, pad, embedding, losses).

Gradient ops (``*_grad``, the pooling scatter/gather) are sampled through
``rt.grad(..., create_graph=True)``, so the harness checks their own gradients too (second
order). Shapes stay tiny so central differences stay fast.
"""

from __future__ import annotations

import numpy as np

import autostatic_runtime as rt
import autostatic_runtime.nn.functional as Fn
from autostatic_runtime.nn.functional import pooling
from autostatic_runtime.nn.functional.common import PadDynamic
from tests.runtime.harness import F, I, Sample

S = Sample


def _i64(values):
    return rt.to_tensor(values, dtype="int64")


def _leaf(x):
    t = x.detach()
    t.stop_gradient = False
    return t


def _crf_grads(x, w, y):
    """The emission and transition gradients of the CRF cost of tags ``y``."""
    with rt.enable_grad():
        x, w = _leaf(x), _leaf(w)
        cost = Fn.linear_chain_crf(x, w, y)[3]
        return tuple(rt.grad((cost * rt.to_tensor([[1.0], [0.5]])).sum(), [x, w]))


_YOLO_BOXES = [[[0.3, 0.4, 0.2, 0.3], [0.7, 0.6, 0.6, 0.7], [0.0, 0.0, 0.0, 0.0]]]


def _yolo(x, targets_only=False):
    """YOLOv3's loss of a 2x2 grid, 2 anchors of 4, 2 classes, one padding box (no box near
    the ignore threshold, so central differences stay on one side of it)."""
    from autostatic_runtime.nn.functional.detection import YoloLossTargets

    boxes, labels = rt.to_tensor(_YOLO_BOXES, "float32"), rt.to_tensor([[1, 0, 1]])
    scores = rt.to_tensor([[1.0, 0.5, 0.0]], "float32")
    args = dict(anchors=(3, 4, 5, 6, 8, 9, 12, 11), anchor_mask=(2, 3), class_num=2)
    if targets_only:
        return YoloLossTargets(x, boxes.astype(x.dtype), labels, scores.astype(x.dtype),
                               ignore_thresh=0.5, downsample_ratio=8, scale_x_y=1.0, **args)
    return Fn.yolo_loss(x, boxes.astype(x.dtype), labels, ignore_thresh=0.999,
                        downsample_ratio=8, gt_score=scores.astype(x.dtype), **args)


def _vjp(f, wrt=0):
    """``x -> d/dx sum(f(x, ...) * c)`` with create_graph, ``c`` being the last arg.

    Works under ``no_grad`` with plain inputs too (the harness's central differences call
    samples that way): the gradient is then taken of a leaf copy with recording on.
    """

    def run(*args):
        *ins, c = args
        with rt.enable_grad():
            if ins[wrt].stop_gradient:
                ins[wrt] = _leaf(ins[wrt])
            out = f(*ins)
            return rt.grad((out * c).sum(), ins[wrt], create_graph=True)[0]

    return run


def _ramp(*shape):
    """Distinct constants 0.1 apart (shuffled), so ``x * 0.02 + ramp`` never ties."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(n).permutation(np.arange(n) * 0.1).reshape(shape)
    return rt.to_tensor(vals.astype("float32"))


def _untied(x):
    """``x`` nudged apart per sample (the batch dim may be unknown in static programs)."""
    return x * 0.02 + _ramp(*x.shape[1:]).astype(x.dtype)


def _seeded(f, seed=5):
    def run(*args):
        rt.seed(seed)
        return f(*args)

    return run


def _gather(x, gx):
    """Read ``gx`` at the max positions of ``x`` (3x3 windows, stride 2, padding 1)."""
    attrs = dict(
        ksize=(3, 3), strides=(2, 2), paddings=(1, 1, 1, 1), ceil_mode=False, data_format="NCHW"
    )
    mask = pooling.MaxPool2DWithIndex(x, **attrs)[1]
    return pooling.MaxPool2DIndexGather(gx, mask, **attrs)


def _max_pool_op(x):
    """The pool2d op in max mode (what max_pool2d runs when no gradient is needed)."""
    return pooling.Pool2D(
        x,
        pooling_type="max",
        ksize=(2, 2),
        strides=(2, 2),
        paddings=(0, 0, 0, 0),
        ceil_mode=False,
        exclusive=True,
        divisor=None,
        data_format="NCHW",
    )


_ACT = [
    S("softmax", lambda x: Fn.softmax(x), [F(3, 4)]),
    S(
        "softmax",
        lambda x: Fn.softmax(x * 50.0, axis=0),
        [F(3, 4)],
        name="softmax_axis0_large",
        rtol=1e-3,
        atol=1e-4,
    ),
    S("softmax_grad", _vjp(lambda x: Fn.softmax(x, axis=1)), [F(2, 3), F(2, 3, grad=False)]),
    S("log_softmax", lambda x: Fn.log_softmax(x, axis=1), [F(2, 3, 2)]),
    S(
        "log_softmax",
        lambda x: Fn.log_softmax(x * 100.0),
        [F(2, 4)],
        name="log_softmax_large",
        rtol=1e-3,
        atol=1e-4,
    ),
    S("log_softmax_grad", _vjp(Fn.log_softmax), [F(2, 3), F(2, 3, grad=False)]),
    S("gelu", Fn.gelu, [F(6)], rtol=1e-3, atol=1e-5, also=("erf",)),
    S("gelu", lambda x: Fn.gelu(x, approximate=True), [F(6)], name="gelu_tanh"),
    S("expm1", lambda x: Fn.elu(x * 40.0), [F(5)], name="elu_no_overflow"),
    S("where", lambda x: Fn.leaky_relu(x, 0.1), [F(5, away=(0,))], name="leaky_relu"),
    S(
        "softplus",
        lambda x: Fn.softplus(x * 10.0, beta=2, threshold=15),
        [F(5, away=(0.75,))],
        rtol=1e-3,
    ),
    S("logsigmoid", lambda x: Fn.log_sigmoid(x * 30.0), [F(5)]),
    S("tanh", lambda x: Fn.mish(x), [F(5)], name="mish"),
    S("clip", lambda x: Fn.hardswish(x * 3.0), [F(5, away=(-1, 1))], name="hardswish"),
    S("where", lambda x: Fn.selu(x), [F(5, away=(0,))], name="selu"),
]

_CONV = [
    S("conv2d", lambda x, w: Fn.conv2d(x, w, padding=1), [F(1, 2, 5, 5), F(3, 2, 3, 3)]),
    S(
        "conv2d",
        lambda x, w, b: Fn.conv2d(x, w, b, stride=2, padding=[1, 0, 0, 1], dilation=2),
        [F(1, 2, 6, 5), F(2, 2, 2, 2), F(2)],
        name="conv2d_stride_dilation_bias",
    ),
    S(
        "conv2d",
        lambda x, w: Fn.conv2d(x, w, groups=2, padding="SAME"),
        [F(2, 4, 4, 3), F(4, 2, 2, 2)],
        name="conv2d_groups_same",
    ),
    S(
        "conv2d",
        lambda x, w, b: Fn.conv2d(x, w, b, padding=1, data_format="NHWC"),
        [F(1, 4, 3, 2), F(3, 2, 3, 2), F(3)],
        name="conv2d_nhwc",
    ),
    S(
        "conv2d_grad_input",
        _vjp(lambda x, w: Fn.conv2d(x, w, stride=2, padding=1)),
        [F(1, 2, 4, 4), F(2, 2, 3, 3), F(1, 2, 2, 2, grad=False)],
        also=("conv2d_grad_filter",),
    ),
    S(
        "conv2d_grad_filter",
        _vjp(lambda x, w: Fn.conv2d(x, w, groups=2, dilation=(1, 2)), 1),
        [F(1, 2, 4, 5), F(4, 1, 2, 2), F(1, 4, 3, 3, grad=False)],
        also=("conv2d_grad_input",),
    ),
    S(
        "conv2d_grad_input",
        _vjp(lambda x, w: Fn.conv2d(x, w, padding=1, data_format="NHWC")),
        [F(1, 3, 3, 2), F(2, 2, 2, 2), F(1, 4, 4, 2, grad=False)],
        name="conv2d_grad_nhwc",
    ),
    S(  # conv1d, conv3d and temporal_shift are made of conv2d and tensor ops
        "conv2d",
        lambda x, w, b: Fn.conv1d(x, w, b, stride=2, padding=[1, 0], dilation=2),
        [F(2, 2, 7), F(3, 2, 2), F(3)],
        name="conv1d_stride_dilation_bias",
    ),
    S(
        "conv2d",
        lambda x, w, b: Fn.conv3d(x, w, b, stride=(2, 1, 1), padding=1, groups=2),
        [F(1, 4, 4, 3, 3), F(2, 2, 2, 2, 2), F(2)],
        name="conv3d_stride_groups_bias",
    ),
    S(
        "conv2d_transpose",
        lambda x, w, b: Fn.conv2d_transpose(x, w, b, stride=2, padding=1, output_padding=1),
        [F(1, 2, 3, 3), F(2, 3, 3, 3), F(3)],
        name="conv2d_transpose_stride_bias",
    ),
    S(  # Paddle's F.conv3d_transpose: a conv2d_transpose per filter depth, placed and summed
        "conv2d_transpose",
        lambda x, w, b: Fn.conv3d_transpose(x, w, b, stride=(2, 1, 1), padding=[1, 0, 0, 1, 0, 0],
                                            output_padding=(1, 0, 0)),  # fmt: skip
        [F(1, 2, 2, 3, 2), F(2, 2, 2, 2, 2), F(2)],
        name="conv3d_transpose",
    ),
    S(
        "conv2d_transpose",
        lambda x, w: Fn.conv2d_transpose(x, w, stride=(2, 1), padding=[1, 0, 0, 1], groups=2,
                                         dilation=(1, 2), data_format="NHWC"),  # fmt: skip
        [F(1, 3, 2, 4), F(4, 1, 2, 2)],
        name="conv2d_transpose_groups_dilation_nhwc",
    ),
    S(  # its gradients: a conv2d and a conv2d_grad_filter, and theirs (second order)
        "conv2d_transpose",
        _vjp(lambda x, w: Fn.conv2d_transpose(x, w, stride=2, output_padding=(0, 1)), 1),
        [F(1, 2, 2, 3), F(2, 2, 2, 2), F(1, 2, 4, 7, grad=False)],
        name="conv2d_transpose_filter_grad",
        also=("conv2d_grad_filter",),
    ),
    S(
        "conv2d_transpose",
        lambda x, w, b: Fn.conv1d_transpose(x, w, b, stride=2, padding=1, output_padding=1),
        [F(2, 2, 4), F(2, 3, 3), F(3)],
        name="conv1d_transpose_stride_bias",
    ),
    S(  # the CRF cost; its gradient op is checked by central differences through it
        "linear_chain_crf",
        lambda x, w, y: Fn.linear_chain_crf(x, w, y, rt.to_tensor([3, 1]))[3],
        [F(2, 3, 3), F(5, 3), I(2, 3, high=3)],
        also=("linear_chain_crf_grad",),
    ),
    S(
        "linear_chain_crf_grad",
        _crf_grads,
        [F(2, 3, 3, grad=False), F(5, 3, grad=False), I(2, 3, high=3)],
        grad=False,
    ),
    S(
        "crf_decoding",
        lambda x, w: Fn.crf_decoding(x, w, length=rt.to_tensor([2, 3])),
        [F(2, 3, 3), F(5, 3)],
        grad=False,
        distinct=True,
    ),
    S(  # targets and weights of YOLOv3's loss; the loss's gradient is that of its parts
        "yolo_loss_targets",
        lambda x: _yolo(x, targets_only=True),
        [F(1, 2 * 7, 2, 2)],
        grad=False,
    ),
    S("take_along_axis", _yolo, [F(1, 2 * 7, 2, 2)], name="yolo_loss"),
    S(
        "concat",
        lambda x: Fn.temporal_shift(x, 2, 0.25),
        [F(4, 4, 2, 1)],
        name="temporal_shift",
    ),
]

_POOL = [
    S(
        "pool2d",
        lambda x: _max_pool_op(_untied(x)),
        [F(1, 2, 4, 4)],
        name="pool2d_max",
        also=("max_pool2d_with_index", "max_pool2d_index_grad"),
    ),
    S(
        "max_pool2d_with_index",
        lambda x: Fn.max_pool2d(_untied(x), 2),
        [F(1, 2, 4, 4)],
        name="max_pool2d",
    ),
    S(
        "max_pool2d_with_index",
        lambda x: Fn.max_pool2d(_untied(x), 3, 2, padding=1, ceil_mode=True),
        [F(1, 1, 5, 6)],
        name="max_pool2d_ceil_pad",
    ),
    S(
        "pool2d",
        lambda x: Fn.max_pool2d(x, 2, 1),
        [F(1, 1, 3, 3, grad=False)],
        grad=False,
        name="max_pool2d_inference",
    ),
    S(
        "pool2d",
        lambda x: Fn.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True),
        [F(1, 2, 5, 4)],
        name="avg_pool2d_ceil_exclusive",
    ),
    S(
        "pool2d",
        lambda x: Fn.avg_pool2d(x, [2, 3], 1, padding=[1, 0], exclusive=False, data_format="NHWC"),
        [F(1, 3, 4, 2)],
        name="avg_pool2d_inclusive_nhwc",
    ),
    S(
        "pool2d_grad",
        _vjp(lambda x: Fn.avg_pool2d(x, 2, 1, padding=1) ** 2),
        [F(1, 1, 3, 3), F(1, 1, 4, 4, grad=False)],
    ),
    S(
        "max_pool2d_with_index",
        lambda x: Fn.max_pool2d(_untied(x), 2, 1, padding=1, return_mask=True),
        [F(1, 2, 3, 3)],
    ),
    S(
        "max_pool2d_index_grad",
        _vjp(lambda x: Fn.max_pool2d(_untied(x), 2, 2, return_mask=True)[0] * x.sum()),
        [F(1, 1, 4, 4), F(1, 1, 2, 2, grad=False)],
        also=("max_pool2d_index_gather",),
    ),
    S(
        "max_pool2d_index_grad",
        _vjp(lambda x: Fn.max_pool2d(_untied(x), 3, 2, padding=1, data_format="NHWC") ** 2),
        [F(1, 4, 3, 2), F(1, 2, 2, 2, grad=False)],
        name="max_pool2d_double_grad_nhwc",
        also=("max_pool2d_index_gather",),
    ),
    S("max_pool2d_index_gather", _gather, [F(1, 2, 4, 4, grad=False), F(1, 2, 4, 4)]),
    S(
        "separable_resample2d",
        lambda x: Fn.adaptive_avg_pool2d(x, [2, 3]),
        [F(1, 2, 5, 4)],
        also=("assign_value",),
    ),
    S(
        "separable_resample2d",
        lambda x: Fn.interpolate(x, scale_factor=2, mode="bilinear"),
        [F(1, 1, 2, 3)],
        name="interpolate_bilinear",
    ),
    S(
        "separable_resample2d",
        lambda x: Fn.interpolate(x, size=[3, 5], data_format="NHWC"),
        [F(1, 2, 2, 2)],
        name="interpolate_nearest_nhwc",
    ),
]

_NORM = [
    S(
        "batch_norm",
        lambda x, w, b: Fn.batch_norm(x, rt.zeros([3]), rt.ones([3]), w, b, training=True),
        [F(2, 3, 2, 2), F(3), F(3)],
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "batch_norm",
        lambda x, w, b, m, v: Fn.batch_norm(x, m, v, w, b),
        [F(2, 3, 2), F(3), F(3), F(3, grad=False), F(3, low=0.5, high=2, grad=False)],
        name="batch_norm_eval",
    ),
    S(
        "batch_norm",
        lambda x: Fn.batch_norm(x, rt.zeros([3]), rt.ones([3]), training=True, data_format="NHWC"),
        [F(2, 2, 3)],
        name="batch_norm_nhwc_no_affine",
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "layer_norm",
        lambda x, w, b: Fn.layer_norm(x, [3], w, b),
        [F(2, 3), F(3), F(3)],
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "layer_norm",
        lambda x: Fn.layer_norm(x, [2, 3]),
        [F(2, 2, 3)],
        name="layer_norm_2d",
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "batch_norm",
        _vjp(lambda x, w: Fn.batch_norm(x, rt.zeros([2]), rt.ones([2]), w, training=True) ** 2),
        [F(3, 2, 2), F(2), F(3, 2, 2, grad=False)],
        name="batch_norm_double_grad",
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "layer_norm",
        _vjp(lambda x, w: Fn.layer_norm(x, 3, w) ** 2),
        [F(2, 3), F(3), F(2, 3, grad=False)],
        name="layer_norm_double_grad",
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "reduce_mean",
        lambda x, w: Fn.instance_norm(x, weight=w),
        [F(2, 2, 3), F(2)],
        name="instance_norm",
        rtol=1e-3,
        atol=1e-4,
    ),
    S(
        "reshape",
        lambda x: Fn.group_norm(x, 2),
        [F(2, 4, 3)],
        name="group_norm",
        rtol=1e-3,
        atol=1e-4,
    ),
]

_COMMON = [
    S("dropout", _seeded(lambda x: Fn.dropout(x, 0.4)), [F(3, 4)]),
    S(
        "dropout",
        _seeded(lambda x: Fn.dropout(x, 0.5, axis=1, mode="downscale_in_infer")),
        [F(2, 3)],
        name="dropout_axis_downscale",
    ),
    S("pad", lambda x: Fn.pad(x, [1, 2, 0, 1]), [F(1, 1, 2, 3)], also=("pad_grad",)),
    S(
        "pad",
        lambda x: Fn.pad(x, [2, 1, 1, 0], mode="reflect"),
        [F(1, 2, 3, 4)],
        name="pad_reflect",
    ),
    S(
        "pad",
        lambda x: Fn.pad(x, [1, 1, 2, 0], mode="replicate", data_format="NHWC"),
        [F(1, 2, 3, 1)],
        name="pad_replicate_nhwc",
    ),
    S(
        "pad",
        lambda x: Fn.pad(x, [0, 0, 1, 1, 0, 2], value=1.5),
        [F(2, 1, 2)],
        name="pad_constant_all_dims",
    ),
    S(
        "pad_grad",
        _vjp(lambda x: Fn.pad(x, [1, 2], mode="circular") ** 2),
        [F(1, 2, 3), F(1, 2, 6, grad=False)],
    ),
    S(  # Paddle's F.bilinear: an einsum of three operands and a bias
        "einsum",
        lambda a, b, w, bias: Fn.bilinear(a, b, w, bias),
        [F(3, 2), F(3, 4), F(5, 2, 4), F(1, 5)],
        name="bilinear",
    ),
    S(
        "pad_dynamic",
        lambda x: PadDynamic(x, _i64([1, 2, 0, 1]), axes=(3, 2), mode="reflect", value=0.0),
        [F(1, 1, 2, 3)],
        also=("pad_dynamic_grad",),
    ),
    S(  # eagerly a pad; in a static program the amounts are traced: a pad_dynamic
        "pad",
        lambda x: Fn.pad(x, rt.shape(x)[1:3] // 2, data_format="NHWC", value=2.0),
        [F(1, 2, 4, 3)],
        name="pad_by_traced_amounts",
    ),
    S(
        "lookup_table_v2",
        lambda i, w: Fn.embedding(i, w, padding_idx=1),
        [I(2, 3, high=4), F(4, 3)],
        also=("lookup_table_v2_grad",),
    ),
    S(
        "lookup_table_v2_grad",
        _vjp(lambda w, i: Fn.embedding(i, w) ** 2),
        [F(3, 2), I(5, high=3), F(5, 2, grad=False)],
    ),
    S("one_hot_v2", lambda i: Fn.one_hot(i, 4), [I(2, 3, high=4)], grad=False, name="nn_one_hot"),
    S(
        "elementwise_div",
        lambda a, b: Fn.cosine_similarity(a, b, axis=1),
        [F(2, 3, low=0.5), F(2, 3, low=-2.0, high=-0.5)],
        name="cosine_similarity",
    ),
    S("elementwise_div", lambda x: Fn.normalize(x, axis=0), [F(3, 2, away=(0,))], name="normalize"),
]

_LOSS = [
    S(
        "softmax_with_cross_entropy",
        lambda x, y: Fn.cross_entropy(x, y),
        [F(3, 4), I(3, high=4)],
        also=("softmax_with_cross_entropy_grad",),
    ),
    S(
        "softmax_with_cross_entropy",
        lambda x, y: Fn.softmax_with_cross_entropy(x, y, axis=1),
        [F(2, 3, 2), I(2, 1, 2, high=3)],
        name="softmax_ce_axis1",
    ),
    S(
        "softmax_with_cross_entropy",
        lambda x, y: Fn.cross_entropy(x * 30.0, y, soft_label=True, reduction="none"),
        [F(2, 3), F(2, 3, low=0.0, high=1.0)],
        name="softmax_ce_soft_label",
        rtol=1e-3,
    ),
    S(
        "softmax_with_cross_entropy_grad",
        _vjp(lambda x, y: Fn.softmax_with_cross_entropy(x, y) ** 2),
        [F(3, 4), I(3, 1, high=4), F(3, 1, grad=False)],
    ),
    S(
        "softmax_with_cross_entropy_grad",
        _vjp(lambda x, y: Fn.softmax_with_cross_entropy(x, y, soft_label=True) ** 2),
        [F(2, 3), F(2, 3, low=0.0, high=1.0), F(2, 1, grad=False)],
        name="softmax_ce_soft_grad",
    ),
    S(
        "nll_loss",
        lambda x, y, w: Fn.nll_loss(x, y, w, reduction="none"),
        [F(3, 4), I(3, high=4), F(4, low=0.5, grad=False)],
        also=("nll_loss_grad",),
    ),
    S(
        "nll_loss_grad",
        _vjp(lambda x, y: Fn.nll_loss(x, y, ignore_index=1, reduction="none") ** 2),
        [F(2, 3, 2), I(2, 2, high=3), F(2, 2, grad=False)],
    ),
    S(
        "nll_loss",
        lambda p, y: Fn.cross_entropy(p, y, use_softmax=False),
        [F(3, 4, low=0.125, high=1.0), I(3, high=4)],
        name="cross_entropy_probabilities",
    ),
    S(
        "softmax_with_cross_entropy",
        lambda x, y, w: Fn.cross_entropy(x, y, weight=w, label_smoothing=0.1),
        [F(3, 4), I(3, high=4), F(4, low=0.5, grad=False)],
        name="cross_entropy_smooth_weight",
        also=("one_hot_v2",),
    ),
    S(
        "bce_loss",
        lambda p, y: Fn.binary_cross_entropy(p, y),
        [F(4, low=0.0625, high=0.9375), F(4, low=0.0, high=1.0)],
        name="binary_cross_entropy",
        rtol=1e-3,
    ),
    S(
        "logsigmoid",
        lambda x, y, pw: Fn.binary_cross_entropy_with_logits(x * 20.0, y, pos_weight=pw),
        [F(2, 3), F(2, 3, low=0.0, high=1.0), F(3, low=0.5)],
        name="bce_with_logits",
        rtol=1e-3,
    ),
    S(
        "where",
        lambda x, y: Fn.smooth_l1_loss(x, y, delta=0.5),
        [F(6), F(6, grad=False)],
        name="smooth_l1_loss",
        rtol=1e-3,
    ),
    S(
        "where",
        lambda x, y: Fn.kl_div(x, y, reduction="batchmean"),
        [F(2, 3), F(2, 3, low=-0.5, high=1.0, away=(0,))],
        name="kl_div",
    ),
]

SAMPLES = _ACT + _CONV + _POOL + _NORM + _COMMON + _LOSS

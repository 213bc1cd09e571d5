"""Semantics of autostatic_runtime.nn.functional against straightforward NumPy references.

The references follow Paddle's definitions (window rules of conv/pooling, batch-norm
running statistics, cross-entropy reductions). Gradients of every op are checked against
central differences by the op catalogue; here a few gradients are compared with closed forms.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import autostatic_runtime as rt
import autostatic_runtime.nn.functional as F
from autostatic_runtime.errors import OpError, ShapeError
from tests.work import python_calls

RNG = np.random.default_rng(0)


def T(a, grad=False, dtype="float64"):
    t = rt.to_tensor(np.asarray(a, dtype=dtype) if dtype else np.asarray(a))
    t.stop_gradient = not grad
    return t


def randn(*shape):
    return RNG.standard_normal(shape)


def close(t, ref, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(t.numpy() if hasattr(t, "numpy") else t, ref, rtol=rtol, atol=atol)


# ---- references ------------------------------------------------------------------------------


def conv2d_ref(x, w, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    oh = (h + pads[0] + pads[1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[2] + pads[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                hs, ws = i * stride[0], j * stride[1]
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    hs : hs + dil[0] * (kh - 1) + 1 : dil[0],
                    ws : ws + dil[1] * (kw - 1) + 1 : dil[1],
                ]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out


def pool_out(size, k, p0, p1, s, ceil):
    span = size + p0 + p1 - k
    return (span + s - 1) // s + 1 if ceil else span // s + 1


def pool2d_ref(x, k, s, pads, ceil=False, kind="max", exclusive=True):
    """Paddle's loops: window [i*s - pad, +k) clipped to the input; first max wins."""
    n, c, h, w = x.shape
    oh = pool_out(h, k[0], pads[0], pads[1], s[0], ceil)
    ow = pool_out(w, k[1], pads[2], pads[3], s[1], ceil)
    out = np.zeros((n, c, oh, ow))
    mask = np.zeros((n, c, oh, ow), dtype=np.int64)
    for i in range(oh):
        hs = i * s[0] - pads[0]
        he, hs = min(hs + k[0], h), max(hs, 0)
        for j in range(ow):
            ws = j * s[1] - pads[2]
            we, ws = min(ws + k[1], w), max(ws, 0)
            win = x[:, :, hs:he, ws:we].reshape(n, c, -1)
            if kind == "max":
                out[:, :, i, j] = win.max(-1)
                arg = win.argmax(-1)
                mask[:, :, i, j] = (hs + arg // (we - ws)) * w + ws + arg % (we - ws)
            else:
                count = (he - hs) * (we - ws) if exclusive else k[0] * k[1]
                out[:, :, i, j] = win.sum(-1) / count
    return out, mask


def log_softmax_ref(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# ---- activations -----------------------------------------------------------------------------


def _erf(v):
    return np.vectorize(math.erf)(v)


ACTIVATIONS = [
    ("relu", F.relu, lambda x: np.maximum(x, 0)),
    ("relu6", F.relu6, lambda x: np.clip(x, 0, 6)),
    ("gelu", F.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    (
        "gelu_tanh",
        lambda x: F.gelu(x, approximate=True),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    ("silu", F.silu, lambda x: x / (1 + np.exp(-x))),
    ("swish", F.swish, lambda x: x / (1 + np.exp(-x))),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("elu", lambda x: F.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("celu", lambda x: F.celu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    (
        "selu",
        F.selu,
        lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    ),
    (
        "softplus",
        lambda x: F.softplus(x, beta=2, threshold=3),
        lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2),
    ),
    ("softsign", F.softsign, lambda x: x / (1 + np.abs(x))),
    (
        "softshrink",
        F.softshrink,
        lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
    ),
    ("hardshrink", F.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    ("tanhshrink", F.tanhshrink, lambda x: x - np.tanh(x)),
    ("hardtanh", F.hardtanh, lambda x: np.clip(x, -1, 1)),
    ("hardsigmoid", F.hardsigmoid, lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    ("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("mish", F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    ("tanh", F.tanh, np.tanh),
    ("log_sigmoid", F.log_sigmoid, lambda x: -np.log1p(np.exp(-x))),
    ("thresholded_relu", F.thresholded_relu, lambda x: np.where(x > 1, x, 0)),
    ("softmax", F.softmax, lambda x: np.exp(log_softmax_ref(x))),
    ("log_softmax", F.log_softmax, log_softmax_ref),
]


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_numpy(name, fn, ref):
    x = randn(3, 5) * 3
    close(fn(T(x)), ref(x), rtol=1e-6, atol=1e-7)


def test_softmax_axis_dtype_and_extreme_values():
    x = randn(2, 3, 4) * 1000
    close(F.softmax(T(x), axis=1), np.exp(log_softmax_ref(x, 1)))
    close(F.log_softmax(T(x), axis=0), log_softmax_ref(x, 0))
    out = F.softmax(T(x[0], dtype="float32"), dtype="float64")
    assert out.dtype == rt.float64
    assert np.isfinite(F.log_softmax(T(x)).numpy()).all()


def test_activations_do_not_overflow_into_nan_gradients():
    x = T([-800.0, -30.0, 0.0, 30.0, 800.0], grad=True)
    for fn in (F.elu, F.selu, F.celu, F.softplus, F.log_sigmoid, F.mish, F.silu):
        y = fn(x)
        (g,) = rt.grad(y.sum(), x)
        assert np.isfinite(y.numpy()).all() and np.isfinite(g.numpy()).all(), fn.__name__


def test_kink_gradients_at_zero_follow_paddle():
    x = T([0.0], grad=True)
    assert rt.grad(F.softplus(x).sum(), x)[0].item() == pytest.approx(0.5)
    assert rt.grad(F.log_sigmoid(x).sum(), x)[0].item() == pytest.approx(0.5)
    assert rt.grad(F.elu(x, alpha=0.7).sum(), x)[0].item() == pytest.approx(0.7)


def test_softmax_gradient_closed_form():
    x, c = randn(2, 4), randn(2, 4)
    xt = T(x, grad=True)
    (g,) = rt.grad((F.softmax(xt) * T(c)).sum(), xt)
    p = np.exp(log_softmax_ref(x))
    close(g, p * (c - (c * p).sum(-1, keepdims=True)))
    (g,) = rt.grad((F.log_softmax(xt) * T(c)).sum(), xt)
    close(g, c - p * c.sum(-1, keepdims=True))


def test_relu_inplace():
    x = T([-1.0, 2.0])
    y = x * 3
    out = F.relu_(y)
    assert out is y
    close(y, [0.0, 6.0])


def test_prelu_and_glu():
    x, w = randn(2, 3, 2), np.array([0.1, 0.2, 0.3])
    close(F.prelu(T(x), T(w)), np.where(x > 0, x, x * w[None, :, None]))
    close(F.glu(T(x)), x[..., :1] / (1 + np.exp(-x[..., 1:])))


# ---- conv2d ----------------------------------------------------------------------------------

CONV_CASES = [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=(1, 2), padding=[1, 2], dilation=(2, 1), groups=1),
    dict(stride=1, padding=[0, 1, 2, 1], dilation=1, groups=2),
    dict(stride=2, padding=[[0, 0], [0, 0], [1, 0], [0, 1]], dilation=2, groups=4),
]


def _pads(padding):
    if isinstance(padding, int):
        return (padding,) * 4
    if len(padding) == 2 and isinstance(padding[0], int):
        return (padding[0], padding[0], padding[1], padding[1])
    if isinstance(padding[0], list):
        return (*padding[2], *padding[3])
    return tuple(padding)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("case", CONV_CASES, ids=[str(i) for i in range(len(CONV_CASES))])
def test_conv2d_matches_reference(case):
    x, w, b = randn(2, 4, 7, 6), randn(8, 4 // case["groups"], 3, 2), randn(8)
    out = F.conv2d(T(x), T(w), T(b), **case)
    ref = (
        conv2d_ref(
            x,
            w,
            _pair(case["stride"]),
            _pads(case["padding"]),
            _pair(case["dilation"]),
            case["groups"],
        )
        + b[None, :, None, None]
    )
    close(out, ref, rtol=1e-10, atol=1e-10)


def test_conv2d_nhwc_same_and_valid():
    x, w = randn(2, 5, 6, 3), randn(4, 3, 3, 3)
    out = F.conv2d(T(x), T(w), stride=2, padding="SAME", data_format="NHWC")
    assert out.shape == [2, 3, 3, 4]
    # SAME: total pad max((out-1)*s + k - in, 0), split top/bottom
    ref = conv2d_ref(x.transpose(0, 3, 1, 2), w, (2, 2), (1, 1, 0, 1))
    close(out, ref.transpose(0, 2, 3, 1), rtol=1e-10, atol=1e-10)
    out = F.conv2d(T(x.transpose(0, 3, 1, 2)), T(w), padding="VALID")
    assert out.shape == [2, 4, 3, 4]


def test_conv2d_gradients_match_reference_adjoints():
    x, w, c = randn(2, 4, 5, 5), randn(6, 2, 3, 3), randn(2, 6, 3, 2)
    xt, wt = T(x, grad=True), T(w, grad=True)
    out = F.conv2d(xt, wt, stride=(1, 2), padding=0, dilation=1, groups=2)
    gx, gw = rt.grad((out * T(c)).sum(), [xt, wt])
    # <conv(x, w), c> is linear in each argument: compare with finite directional change
    dx, dw = randn(*x.shape), randn(*w.shape)
    base = (conv2d_ref(x, w, (1, 2), (0,) * 4, (1, 1), 2) * c).sum()
    ex = (conv2d_ref(x + dx, w, (1, 2), (0,) * 4, (1, 1), 2) * c).sum() - base
    ew = (conv2d_ref(x, w + dw, (1, 2), (0,) * 4, (1, 1), 2) * c).sum() - base
    assert (gx.numpy() * dx).sum() == pytest.approx(ex, rel=1e-9)
    assert (gw.numpy() * dw).sum() == pytest.approx(ew, rel=1e-9)


def test_conv2d_bias_gradient_and_float32():
    x, w = randn(2, 3, 4, 4).astype("float32"), randn(5, 3, 3, 3).astype("float32")
    b = T(np.zeros(5), grad=True, dtype="float32")
    out = F.conv2d(T(x, dtype="float32"), T(w, dtype="float32"), b, padding=1)
    assert out.dtype == rt.float32
    (gb,) = rt.grad(out.sum(), b)
    close(gb, np.full(5, 2 * 4 * 4.0))


def test_conv2d_errors_name_op_and_shapes():
    x, w = T(randn(3, 5, 5)), T(randn(2, 3, 3, 3))
    with pytest.raises(ShapeError, match=r"conv2d.*4-D input.*\[3, 5, 5\]"):
        F.conv2d(x, w)
    with pytest.raises(ShapeError, match=r"conv2d.*2 channels.*\[4, 3, 3, 3\]"):
        F.conv2d(T(randn(1, 2, 5, 5)), T(randn(4, 3, 3, 3)))
    with pytest.raises(ShapeError, match="larger than the padded input"):
        F.conv2d(T(randn(1, 3, 2, 2)), w)
    with pytest.raises(ShapeError, match="not divisible by groups"):
        F.conv2d(T(randn(1, 4, 5, 5)), T(randn(3, 2, 3, 3)), groups=2)
    with pytest.raises(rt.DTypeError, match="conv2d"):
        F.conv2d(T(randn(1, 3, 5, 5), dtype="float32"), w)
    with pytest.raises(ShapeError, match="bias"):
        F.conv2d(T(randn(1, 3, 5, 5)), w, T(randn(3)))


def conv3d_ref(x, w, stride, pads, dil, groups=1):
    """conv2d_ref's loops over one more spatial dim (``pads``: one (before, after) per dim)."""
    n, c, d, h, wd = x.shape
    o, cg, kd, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    size = [
        (s + p0 + p1 - q * (k - 1) - 1) // st + 1
        for s, (p0, p1), q, k, st in zip((d, h, wd), pads, dil, (kd, kh, kw), stride)
    ]
    out = np.zeros((n, o, *size))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for idx in np.ndindex(*size):
            window = tuple(
                slice(i * st, i * st + q * (k - 1) + 1, q)
                for i, st, q, k in zip(idx, stride, dil, (kd, kh, kw))
            )
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg), *window)]
            out[(slice(None), oc, *idx)] = (patch * w[oc]).sum(axis=(1, 2, 3, 4))
    return out


def test_conv3d_and_conv1d_match_reference():
    x, w, b = randn(2, 4, 5, 6, 5), randn(6, 2, 3, 2, 3), randn(6)
    out = F.conv3d(T(x), T(w), T(b), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1),
                   groups=2)  # fmt: skip
    ref = conv3d_ref(x, w, (2, 1, 2), ((1, 1), (0, 0), (1, 1)), (1, 2, 1), 2)
    close(out, ref + b[None, :, None, None, None], rtol=1e-10, atol=1e-10)
    last = F.conv3d(T(x.transpose(0, 2, 3, 4, 1)), T(w), padding="SAME", groups=2,
                    data_format="NDHWC")  # fmt: skip
    ref = conv3d_ref(x, w, (1, 1, 1), ((1, 1), (0, 1), (1, 1)), (1, 1, 1), 2)
    close(last, ref.transpose(0, 2, 3, 4, 1), rtol=1e-10, atol=1e-10)
    x1, w1 = randn(2, 4, 9), randn(6, 4, 3)
    ref1 = conv3d_ref(x1[:, :, None, None], w1[:, :, None, None], (1, 1, 2),
                      ((0, 0), (0, 0), (1, 2)), (1, 1, 2))[:, :, 0, 0]  # fmt: skip
    close(F.conv1d(T(x1), T(w1), stride=2, padding=[1, 2], dilation=2), ref1, rtol=1e-10)
    nlc = F.conv1d(T(x1.transpose(0, 2, 1)), T(w1), stride=2, padding=[1, 2], dilation=2,
                   data_format="NLC")  # fmt: skip
    close(nlc, ref1.transpose(0, 2, 1), rtol=1e-10)


def test_conv_layers_of_one_and_three_dims():
    conv1 = rt.nn.Conv1D(4, 6, 3, padding=1, groups=2)
    conv3 = rt.nn.Conv3D(4, 6, (3, 1, 1), stride=(2, 1, 1), bias_attr=False)
    assert conv1.weight.shape == [6, 2, 3] and conv3.weight.shape == [6, 4, 3, 1, 1]
    assert conv3.bias is None and "stride=[2, 1, 1]" in repr(conv3)
    assert conv1(rt.randn([2, 4, 7])).shape == [2, 6, 7]
    assert conv3(rt.randn([2, 4, 5, 3, 3])).shape == [2, 6, 2, 3, 3]
    with pytest.raises(ValueError, match="Conv3D: kernel_size must be an int or 3 ints"):
        rt.nn.Conv3D(4, 6, (3, 3))


def conv2d_transpose_ref(x, w, stride, pads, out_pad, dilation, groups):
    """Each input pixel spreads ``x * w`` over a window of the padded output, which is then
    cropped by ``pads`` (top, bottom, left, right): the definition, loop by loop."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    oh = (h - 1) * stride[0] - pads[0] - pads[1] + dilation[0] * (kh - 1) + 1 + out_pad[0]
    ow = (wd - 1) * stride[1] - pads[2] - pads[3] + dilation[1] * (kw - 1) + 1 + out_pad[1]
    full = np.zeros((n, og * groups, oh + pads[0] + pads[1], ow + pads[2] + pads[3]))
    cg = c // groups
    for ci in range(c):
        outs = slice(ci // cg * og, (ci // cg + 1) * og)
        for i, j, a, b in np.ndindex(h, wd, kh, kw):
            r, q = i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1]
            full[:, outs, r, q] += x[:, ci, i, j, None] * w[ci, :, a, b]
    return full[:, :, pads[0] : pads[0] + oh, pads[2] : pads[2] + ow]


def test_conv2d_transpose_and_conv1d_transpose_match_reference():
    x, w, b = randn(2, 4, 3, 4), randn(4, 3, 3, 2), randn(6)
    out = F.conv2d_transpose(T(x), T(w), T(b), stride=(2, 1), padding=[1, 0, 0, 2],
                             output_padding=(1, 0), dilation=(1, 2), groups=2)  # fmt: skip
    ref = conv2d_transpose_ref(x, w, (2, 1), (1, 0, 0, 2), (1, 0), (1, 2), 2)
    close(out, ref + b[None, :, None, None], rtol=1e-10, atol=1e-10)
    last = F.conv2d_transpose(T(x.transpose(0, 2, 3, 1)), T(w[:, :2]), stride=3, padding=1,
                              output_size=[8, 11], data_format="NHWC")  # fmt: skip
    ref = conv2d_transpose_ref(x, w[:, :2], (3, 3), (1, 1, 1, 1), (1, 2), (1, 1), 1)
    close(last, ref.transpose(0, 2, 3, 1), rtol=1e-10, atol=1e-10)
    same = F.conv2d_transpose(T(x), T(w), stride=2, padding="SAME")
    assert same.shape == [2, 3, 5, 8]  # Paddle's: the pads conv2d's 'SAME' gives the input
    x1, w1 = randn(2, 4, 5), randn(4, 3, 3)
    ref1 = conv2d_transpose_ref(x1[:, :, None], w1[:, :, None], (1, 2), (0, 0, 1, 1), (0, 1),
                                (1, 1), 1)[:, :, 0]  # fmt: skip
    close(F.conv1d_transpose(T(x1), T(w1), stride=2, padding=1, output_padding=1), ref1,
          rtol=1e-10)  # fmt: skip
    with pytest.raises(ShapeError, match="output_size \\[9, 9\\] cannot be reached"):
        F.conv2d_transpose(T(x), T(w), stride=2, output_size=[9, 9], groups=2)


def conv3d_transpose_ref(x, w, stride, pads, out_pad, dilation, groups):
    """The 3-D definition, loop by loop (``pads``: front, back, top, bottom, left, right)."""
    n, c = x.shape[:2]
    og, ks = w.shape[1], w.shape[2:]
    full = [(x.shape[2 + a] - 1) * stride[a] + dilation[a] * (ks[a] - 1) + 1 + out_pad[a]
            for a in range(3)]  # fmt: skip
    out = np.zeros((n, og * groups, *full))
    cg = c // groups
    for ci in range(c):
        outs = slice(ci // cg * og, (ci // cg + 1) * og)
        for i, j, k, a, b, e in np.ndindex(*x.shape[2:], *ks):
            d, r, q = (i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1],
                       k * stride[2] + e * dilation[2])  # fmt: skip
            out[:, outs, d, r, q] += x[:, ci, i, j, k, None] * w[ci, :, a, b, e]
    return out[:, :, pads[0] : full[0] - pads[1], pads[2] : full[1] - pads[3],
               pads[4] : full[2] - pads[5]]  # fmt: skip


def test_conv3d_transpose_matches_reference():
    """Paddle's F.conv3d_transpose / nn.Conv3DTranspose: made of a conv2d_transpose per
    filter depth, each placed at its output depths and summed."""
    x, w, b = randn(2, 4, 3, 3, 2), randn(4, 3, 2, 3, 2), randn(6)
    out = F.conv3d_transpose(T(x), T(w), T(b), stride=(2, 1, 2), padding=[1, 0, 0, 1, 1, 0],
                             output_padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)  # fmt: skip
    ref = conv3d_transpose_ref(x, w, (2, 1, 2), (1, 0, 0, 1, 1, 0), (1, 0, 1), (1, 2, 1), 2)
    close(out, ref + b[None, :, None, None, None], rtol=1e-10, atol=1e-10)
    last = F.conv3d_transpose(T(x.transpose(0, 2, 3, 4, 1)), T(w), stride=3, padding=1,
                              data_format="NDHWC")  # fmt: skip
    ref = conv3d_transpose_ref(x, w, (3, 3, 3), (1,) * 6, (0, 0, 0), (1, 1, 1), 1)
    close(last, ref.transpose(0, 2, 3, 4, 1), rtol=1e-10, atol=1e-10)
    layer = rt.nn.Conv3DTranspose(4, 6, 3, stride=2, padding=1, groups=2)
    assert layer.weight.shape == [4, 3, 3, 3, 3]
    assert layer(rt.randn([1, 4, 3, 4, 2])).shape == [1, 6, 5, 7, 3]
    # output_size in place of output_padding; 'SAME' (pads as conv3d's, dilation 1); 'VALID'
    geometry = dict(stride=(2, 1, 2), padding=[1, 0, 0, 1, 1, 0], dilation=(1, 2, 1), groups=2)
    sized = F.conv3d_transpose(T(x), T(w), output_size=out.shape[2:], **geometry)
    close(sized, out.numpy() - b[None, :, None, None, None], rtol=1e-10, atol=1e-10)
    same = F.conv3d_transpose(T(x), T(w), stride=2, padding="SAME", dilation=3, groups=2)
    ref = conv3d_transpose_ref(x, w, (2, 2, 2), (0, 1, 1, 1, 0, 0), (0, 0, 0), (1, 1, 1), 2)
    close(same, ref, rtol=1e-10, atol=1e-10)
    valid = F.conv3d_transpose(T(x), T(w), stride=2, padding="valid", groups=2)
    ref = conv3d_transpose_ref(x, w, (2, 2, 2), (0,) * 6, (0, 0, 0), (1, 1, 1), 2)
    close(valid, ref, rtol=1e-10, atol=1e-10)
    with pytest.raises(rt.ShapeError, match="output_size \\[9, 9, 9\\] cannot be reached"):
        F.conv3d_transpose(T(x), T(w), output_size=[9, 9, 9], **geometry)
    with pytest.raises(rt.ShapeError, match="output_padding or output_size, not both"):
        F.conv3d_transpose(T(x), T(w), output_size=out.shape[2:], output_padding=1, **geometry)
    with pytest.raises(Exception, match="padding must be 'SAME', 'VALID'"):
        F.conv3d_transpose(T(x), T(w), padding="FULL")


def test_transposed_conv_layers():
    up = rt.nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, groups=2, bias_attr=False)
    assert up.weight.shape == [4, 3, 3, 3] and up.bias is None
    x = rt.randn([2, 4, 5, 5])
    assert up(x).shape == [2, 6, 9, 9] and up(x, output_size=[10, 10]).shape == [2, 6, 10, 10]
    up1 = rt.nn.Conv1DTranspose(4, 6, 3, stride=2, output_padding=1)
    assert up1.weight.shape == [4, 6, 3] and up1(rt.randn([2, 4, 7])).shape == [2, 6, 16]
    with pytest.raises(ValueError, match="out_channels \\(5\\) must be divisible by groups"):
        rt.nn.Conv2DTranspose(4, 5, 3, groups=2)


def crf_ref(x, w, tags, lengths):
    """The CRF cost and best path of each sequence by enumerating every tag sequence."""
    costs, paths = [], []
    for n, length in enumerate(lengths):
        def score(y, n=n):
            s = w[0, y[0]] + w[1, y[-1]] + sum(x[n, t, y[t]] for t in range(len(y)))
            return s + sum(w[2 + y[t - 1], y[t]] for t in range(1, len(y)))

        scores = {y: score(y) for y in itertools.product(range(x.shape[2]), repeat=length)}
        log_z = np.log(sum(np.exp(v) for v in scores.values()))
        costs.append(log_z - scores[tuple(tags[n, :length])])
        best = max(scores, key=scores.get)
        paths.append(list(best) + [0] * (x.shape[1] - length))
    return np.array(costs)[:, None], np.array(paths)


def test_linear_chain_crf_and_crf_decoding_match_enumeration():
    x, w = randn(3, 4, 3), randn(5, 3)
    tags, lengths = np.random.default_rng(2).integers(0, 3, (3, 4)), np.array([4, 2, 1])
    cost, path = crf_ref(x, w, tags, lengths)
    tags_t, lengths_t = rt.to_tensor(tags), rt.to_tensor(lengths)
    out = F.linear_chain_crf(T(x), T(w), rt.to_tensor(tags[:, :, None]), lengths_t)
    close(out[3], cost, rtol=1e-10)
    assert out[0].shape == [3, 4, 3] and out[2].shape == [5, 3]
    decoded = F.crf_decoding(T(x), T(w), length=lengths_t)
    assert decoded.dtype == rt.int64 and decoded.numpy().tolist() == path.tolist()
    hits = F.crf_decoding(T(x), T(w), label=tags_t, length=lengths_t).numpy()
    assert hits.tolist() == ((path == tags) & (np.arange(4) < lengths[:, None])).tolist()
    full, _ = crf_ref(x, w, tags, [4, 4, 4])
    close(F.linear_chain_crf(T(x), T(w), tags_t)[3], full, rtol=1e-10)  # no lengths: all T
    with pytest.raises(ShapeError, match=r"transitions \[D \+ 2, D\]"):
        F.linear_chain_crf(T(x), T(randn(3, 3)), tags_t)
    with pytest.raises(rt.DTypeError, match="label must hold int tag ids"):
        F.linear_chain_crf(T(x), T(w), T(tags))


def temporal_shift_ref(x, seg_num, ratio):
    """Each clip of ``seg_num`` frames padded with a zero frame at both ends, then channel
    group 1 read one frame back, group 2 one frame ahead."""
    n, c, h, w = x.shape
    clips = np.pad(x.reshape(-1, seg_num, c, h, w), ((0, 0), (1, 1), (0, 0), (0, 0), (0, 0)))
    c1, c2 = int(c * ratio), int(c * 2 * ratio)
    out = clips[:, 1:-1].copy()
    out[:, :, :c1] = clips[:, :-2, :c1]
    out[:, :, c1:c2] = clips[:, 2:, c1:c2]
    return out.reshape(n, c, h, w)


def test_temporal_shift_matches_reference_in_both_layouts():
    x = randn(6, 8, 2, 3)
    close(F.temporal_shift(T(x), 3, 0.25), temporal_shift_ref(x, 3, 0.25))
    last = F.temporal_shift(T(x.transpose(0, 2, 3, 1)), 2, 1 / 8, data_format="NHWC")
    close(last, temporal_shift_ref(x, 2, 1 / 8).transpose(0, 2, 3, 1))


def test_conv2d_small_cnn_is_vectorized():
    x = rt.randn([32, 1, 28, 28])
    w = rt.randn([8, 1, 3, 3])
    w.stop_gradient = False

    def step():
        F.conv2d(x, w, padding=1).sum().backward()

    step()
    # a few hundred calls; a loop over the 25,088 output pixels would make tens of thousands
    assert python_calls(step) < 3_000


# ---- pooling ---------------------------------------------------------------------------------

POOL_CASES = [
    dict(k=2, s=2, p=0, ceil=False),
    dict(k=3, s=2, p=1, ceil=False),
    dict(k=3, s=2, p=1, ceil=True),
    dict(k=(2, 3), s=(1, 2), p=(1, 0), ceil=True),
    dict(k=3, s=3, p=0, ceil=True),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
def test_max_pool2d_matches_paddle_loops(case):
    x = randn(2, 3, 7, 8)
    k, s = _pair(case["k"]), _pair(case["s"])
    pads = _pads(list(case["p"]) if isinstance(case["p"], tuple) else case["p"])
    ref, ref_mask = pool2d_ref(x, k, s, pads, case["ceil"], "max")
    out = F.max_pool2d(T(x), case["k"], case["s"], case["p"], ceil_mode=case["ceil"])
    close(out, ref)
    out, mask = F.max_pool2d(
        T(x), case["k"], case["s"], case["p"], return_mask=True, ceil_mode=case["ceil"]
    )
    close(out, ref)
    assert mask.dtype == rt.int64
    np.testing.assert_array_equal(mask.numpy(), ref_mask)


@pytest.mark.parametrize("case", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
@pytest.mark.parametrize("exclusive", [True, False])
def test_avg_pool2d_matches_paddle_loops(case, exclusive):
    x = randn(2, 3, 7, 8)
    k, s = _pair(case["k"]), _pair(case["s"])
    pads = _pads(list(case["p"]) if isinstance(case["p"], tuple) else case["p"])
    ref, _ = pool2d_ref(x, k, s, pads, case["ceil"], "avg", exclusive)
    out = F.avg_pool2d(
        T(x), case["k"], case["s"], case["p"], ceil_mode=case["ceil"], exclusive=exclusive
    )
    close(out, ref)


def test_pooling_gradients():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    xt = T(x, grad=True)
    (g,) = rt.grad(F.max_pool2d(xt, 2).sum(), xt)
    expect = np.zeros((4, 4))
    expect[1::2, 1::2] = 1
    close(g, expect[None, None])
    # ties: the first maximum gets the gradient, as in Paddle
    xt = T(np.ones((1, 1, 2, 2)), grad=True)
    (g,) = rt.grad(F.max_pool2d(xt, 2).sum(), xt)
    close(g, [[[[1, 0], [0, 0]]]])
    # avg with exclusive counts: the corner cell is alone in its padded window
    xt = T(np.ones((1, 1, 2, 2)), grad=True)
    (g,) = rt.grad(F.avg_pool2d(xt, 2, 1, padding=1).sum(), xt)
    close(g, np.full((1, 1, 2, 2), 1 + 0.5 + 0.5 + 0.25))


def test_pooling_nhwc_and_divisor_override():
    x = randn(2, 5, 6, 3)
    ref, _ = pool2d_ref(x.transpose(0, 3, 1, 2), (2, 2), (2, 2), (0,) * 4, False, "max")
    close(F.max_pool2d(T(x), 2, data_format="NHWC"), ref.transpose(0, 2, 3, 1))
    out = F.avg_pool2d(T(x), 2, divisor_override=2, data_format="NHWC")
    ref, _ = pool2d_ref(x.transpose(0, 3, 1, 2), (2, 2), (2, 2), (0,) * 4, False, "avg")
    close(out, ref.transpose(0, 2, 3, 1) * 2)


def test_adaptive_pooling():
    x = randn(2, 3, 7, 5)
    out = F.adaptive_avg_pool2d(T(x), [3, 2])
    ref = np.zeros((2, 3, 3, 2))
    for i in range(3):
        hs, he = (i * 7) // 3, -(-((i + 1) * 7) // 3)
        for j in range(2):
            ws, we = (j * 5) // 2, -(-((j + 1) * 5) // 2)
            ref[:, :, i, j] = x[:, :, hs:he, ws:we].mean(axis=(2, 3))
    close(out, ref)
    close(F.adaptive_avg_pool2d(T(x), 1), x.mean(axis=(2, 3), keepdims=True))
    close(
        F.adaptive_max_pool2d(T(x[:, :, :6, :4]), [3, 2]),
        x[:, :, :6, :4].reshape(2, 3, 3, 2, 2, 2).max(axis=(3, 5)),
    )
    with pytest.raises(OpError, match="adaptive_max_pool2d"):
        F.adaptive_max_pool2d(T(x), 2)


def test_pooling_errors():
    with pytest.raises(ShapeError, match=r"max_pool2d.*4-D.*\[2, 3\]"):
        F.max_pool2d(T(randn(2, 3)), 2)
    with pytest.raises(ShapeError, match="kernel size"):
        F.avg_pool2d(T(randn(1, 1, 2, 2)), 3)


# ---- normalization ---------------------------------------------------------------------------


def test_batch_norm_training_updates_running_stats_like_paddle():
    x, w, b = randn(4, 3, 2, 5), randn(3), randn(3)
    rm, rv = T(np.zeros(3)), T(np.ones(3))
    y = F.batch_norm(T(x), rm, rv, T(w), T(b), training=True, momentum=0.8, epsilon=1e-5)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    ref = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    close(y, ref * w[:, None, None] + b[:, None, None])
    close(rm, 0.2 * mean)
    close(rv, 0.8 + 0.2 * var)  # biased batch variance, as Paddle's kernel
    assert rm.stop_gradient and rm.grad is None


def test_batch_norm_eval_and_global_stats():
    x, w, b = randn(4, 3, 5), randn(3), randn(3)
    rm, rv = randn(3), np.abs(randn(3)) + 0.5
    ref = (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5) * w[:, None] + b[:, None]
    close(F.batch_norm(T(x), T(rm), T(rv), T(w), T(b)), ref)
    rmt = T(rm)
    close(F.batch_norm(T(x), rmt, T(rv), T(w), T(b), training=True, use_global_stats=True), ref)
    close(rmt, rm)  # global stats: no update


def test_batch_norm_nhwc_and_2d():
    x = randn(6, 4)
    y = F.batch_norm(T(x), T(np.zeros(4)), T(np.ones(4)), training=True)
    close(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5))
    x = randn(2, 3, 3, 4)
    y = F.batch_norm(T(x), T(np.zeros(4)), T(np.ones(4)), training=True, data_format="NHWC")
    close(y, (x - x.mean((0, 1, 2))) / np.sqrt(x.var((0, 1, 2)) + 1e-5))


def test_batch_norm_gradient_closed_form():
    x, w, c = randn(5, 3, 2), randn(3), randn(5, 3, 2)
    xt, wt, bt = T(x, grad=True), T(w, grad=True), T(randn(3), grad=True)
    y = F.batch_norm(xt, T(np.zeros(3)), T(np.ones(3)), wt, bt, training=True)
    gx, gw, gb = rt.grad((y * T(c)).sum(), [xt, wt, bt])
    ax = (0, 2)
    mu, var = x.mean(ax, keepdims=True), x.var(ax, keepdims=True)
    r = 1 / np.sqrt(var + 1e-5)
    xhat = (x - mu) * r
    dx = r * (c - c.mean(ax, keepdims=True) - xhat * (c * xhat).mean(ax, keepdims=True))
    close(gx, dx * w[None, :, None])
    close(gw, (c * xhat).sum(ax))
    close(gb, c.sum(ax))


def test_batch_norm_errors():
    with pytest.raises(ShapeError, match=r"batch_norm.*weight.*\[4\].*3 channels"):
        F.batch_norm(T(randn(2, 3, 4)), T(np.zeros(3)), T(np.ones(3)), T(randn(4)))
    with pytest.raises(OpError, match="running_mean"):
        F.batch_norm(T(randn(2, 3)), None, None)


def test_layer_group_instance_norm():
    x, w, b = randn(2, 3, 4), randn(3, 4), randn(3, 4)
    mu, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    close(F.layer_norm(T(x), [3, 4], T(w), T(b)), (x - mu) / np.sqrt(var + 1e-5) * w + b)
    close(
        F.layer_norm(T(x), 4),
        (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
    )
    close(F.layer_norm(T(x), [3, 4], T(w.reshape(-1)), None), (x - mu) / np.sqrt(var + 1e-5) * w)
    x = randn(2, 4, 3)
    g = x.reshape(2, 2, 6)
    ref = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    close(F.group_norm(T(x), 2), ref.reshape(2, 4, 3))
    w = randn(4)
    close(
        F.instance_norm(T(x), weight=T(w)),
        (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * w[:, None],
    )
    with pytest.raises(ShapeError, match="layer_norm"):
        F.layer_norm(T(x), [4])


# ---- losses ----------------------------------------------------------------------------------


def ce_ref(x, y, axis=-1, weight=None, ignore=-100, reduction="mean"):
    """Paddle's hard-label cross entropy (class axis last after moveaxis)."""
    lp = np.moveaxis(log_softmax_ref(x, axis), axis, -1)
    valid = y != ignore
    ys = np.where(valid, y, 0)
    loss = -np.take_along_axis(lp, ys[..., None], -1)[..., 0] * valid
    w = (weight[ys] if weight is not None else np.ones_like(loss)) * valid
    if weight is not None:
        loss = loss * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if weight is not None:
        return loss.sum() / w.sum()
    return loss.sum() / valid.sum() if ignore >= 0 else loss.mean()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_hard_labels(reduction):
    x, y = randn(6, 5), RNG.integers(0, 5, 6)
    out = F.cross_entropy(T(x), T(y, dtype="int64"), reduction=reduction)
    close(out, ce_ref(x, y, reduction=reduction))
    if reduction == "none":
        assert out.shape == [6]
        col = F.cross_entropy(T(x), T(y[:, None], dtype="int64"), reduction="none")
        assert col.shape == [6, 1]
        close(col, ce_ref(x, y, reduction="none")[:, None])


def test_cross_entropy_ignore_index_and_weights():
    x, y = randn(8, 4), RNG.integers(0, 4, 8)
    y[[1, 5]] = 2
    w = np.abs(randn(4)) + 0.1
    for kw in (dict(ignore_index=2), dict(weight=w), dict(weight=w, ignore_index=2)):
        for reduction in ("mean", "sum", "none"):
            out = F.cross_entropy(
                T(x),
                T(y, dtype="int64"),
                reduction=reduction,
                **{k: T(v) if k == "weight" else v for k, v in kw.items()},
            )
            close(
                out,
                ce_ref(
                    x,
                    y,
                    weight=kw.get("weight"),
                    ignore=kw.get("ignore_index", -100),
                    reduction=reduction,
                ),
            )
    # default ignore_index=-100 labels give 0 loss; the unweighted mean divides by N (Paddle)
    y2 = y.copy()
    y2[0] = -100
    out = F.cross_entropy(T(x), T(y2, dtype="int64"))
    close(out, ce_ref(x, y2))


def test_cross_entropy_axis_and_spatial():
    x, y = randn(2, 3, 4, 5), RNG.integers(0, 3, (2, 4, 5))
    out = F.cross_entropy(T(x), T(y, dtype="int64"), axis=1, reduction="none")
    assert out.shape == [2, 4, 5]
    close(out, ce_ref(x, y, axis=1, reduction="none"))
    w = np.abs(randn(3))
    close(
        F.cross_entropy(T(x), T(y, dtype="int64"), weight=T(w), axis=1),
        ce_ref(x, y, axis=1, weight=w),
    )


def test_cross_entropy_soft_labels_and_smoothing():
    x = randn(4, 5)
    p = np.abs(randn(4, 5))
    p /= p.sum(-1, keepdims=True)
    lp = log_softmax_ref(x)
    out = F.cross_entropy(T(x), T(p), soft_label=True, reduction="none")
    assert out.shape == [4, 1]
    close(out, -(p * lp).sum(-1, keepdims=True))
    w = np.abs(randn(5))
    sw = (p * w).sum(-1, keepdims=True)
    close(
        F.cross_entropy(T(x), T(p), soft_label=True, weight=T(w)),
        (-(p * lp).sum(-1, keepdims=True) * sw).sum() / sw.sum(),
    )
    y = RNG.integers(0, 5, 4)
    smooth = np.eye(5)[y] * 0.9 + 0.1 / 5
    close(
        F.cross_entropy(T(x), T(y, dtype="int64"), label_smoothing=0.1),
        (-(smooth * lp).sum(-1)).mean(),
    )


def test_cross_entropy_without_softmax_and_gradient():
    x, y = randn(5, 3), RNG.integers(0, 3, 5)
    p = np.exp(log_softmax_ref(x))
    close(F.cross_entropy(T(p), T(y, dtype="int64"), use_softmax=False), ce_ref(x, y))
    xt = T(x, grad=True)
    (g,) = rt.grad(F.cross_entropy(xt, T(y, dtype="int64")), xt)
    close(g, (p - np.eye(3)[y]) / 5)
    y[2] = -100
    (g,) = rt.grad(F.cross_entropy(xt, T(y, dtype="int64"), reduction="sum"), xt)
    expect = p - np.eye(3)[np.where(y < 0, 0, y)]
    expect[2] = 0
    close(g, expect)


def test_cross_entropy_stable_for_huge_logits():
    x = T([[1000.0, -1000.0, 0.0]], grad=True)
    loss = F.cross_entropy(x, T([1], dtype="int64"))
    assert loss.item() == pytest.approx(2000.0)
    (g,) = rt.grad(loss, x)
    close(g, [[1.0, -1.0, 0.0]], atol=1e-12)


def test_softmax_with_cross_entropy_returns_softmax():
    x, y = randn(3, 4), RNG.integers(0, 4, (3, 1))
    loss, sm = F.softmax_with_cross_entropy(T(x), T(y, dtype="int64"), return_softmax=True)
    assert loss.shape == [3, 1]
    close(sm, np.exp(log_softmax_ref(x)))
    close(loss, ce_ref(x, y[:, 0], reduction="none")[:, None])


def test_cross_entropy_errors():
    x = T(randn(3, 4))
    with pytest.raises(
        OpError,
        match=r"softmax_with_cross_entropy.*label values must be in "
        r"\[0, 4\).*\[0, 7\]",
    ):
        F.cross_entropy(x, T([0, 7, 1], dtype="int64"))
    with pytest.raises(OpError, match="softmax_with_cross_entropy"):
        F.cross_entropy(x, T([0, -3, 1], dtype="int64"))
    with pytest.raises(ShapeError, match=r"cross_entropy.*\[3, 4, 1, 1\]"):
        F.cross_entropy(x, T(np.zeros((3, 4, 1, 1)), dtype="int64"))
    with pytest.raises(ShapeError, match=r"hard labels.*\[2\]"):
        F.cross_entropy(x, T([0, 1], dtype="int64"))
    with pytest.raises(OpError, match="reduction"):
        F.cross_entropy(x, T([0, 1, 2], dtype="int64"), reduction="avg")
    with pytest.raises(ShapeError, match="weight has 3 entries"):
        F.cross_entropy(x, T([0, 1, 2], dtype="int64"), weight=T(np.ones(3)))
    with pytest.raises(OpError, match=r"nll_loss.*\[0, 4\)"):
        F.nll_loss(x, T([0, 4, 1], dtype="int64"))


def test_nll_loss():
    x, y = log_softmax_ref(randn(5, 4, 3), 1), RNG.integers(0, 4, (5, 3))
    y[0, 0] = 1
    w = np.abs(randn(4)) + 0.1
    picked = -np.take_along_axis(x, y[:, None], 1)[:, 0]
    close(F.nll_loss(T(x), T(y, dtype="int64"), reduction="none"), picked)
    close(F.nll_loss(T(x), T(y, dtype="int64"), T(w)), (picked * w[y]).sum() / w[y].sum())
    mask = y != 1
    close(
        F.nll_loss(T(x), T(y, dtype="int64"), T(w), ignore_index=1),
        (picked * w[y] * mask).sum() / (w[y] * mask).sum(),
    )
    close(F.nll_loss(T(x), T(y, dtype="int64"), reduction="sum"), picked.sum())


def test_regression_and_binary_losses():
    a, b = randn(4, 3), randn(4, 3)
    close(F.mse_loss(T(a), T(b)), ((a - b) ** 2).mean())
    close(F.mse_loss(T(a), T(b), "sum"), ((a - b) ** 2).sum())
    close(F.l1_loss(T(a), T(b), "none"), np.abs(a - b))
    r = np.abs(a - b)
    close(
        F.smooth_l1_loss(T(a), T(b), delta=0.5),
        np.where(r < 0.5, 0.5 * r * r, 0.5 * r - 0.125).mean(),
    )
    p = 1 / (1 + np.exp(-a))
    y = (RNG.random((4, 3)) > 0.5).astype(float)
    w = np.abs(randn(3))
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    close(F.binary_cross_entropy(T(p), T(y), T(w), "none"), bce * w)
    close(F.binary_cross_entropy_with_logits(T(a), T(y)), bce.mean())
    pw = np.abs(randn(3)) + 0.5
    close(
        F.binary_cross_entropy_with_logits(T(a), T(y), T(w), "sum", T(pw)),
        (bce * (1 + (pw - 1) * y) * w).sum(),
    )
    edge = T([0.0, 1.0], grad=True)
    bce = F.binary_cross_entropy(edge, T([1.0, 0.0]), reduction="sum")
    close(bce, 200.0)  # logs clipped at -100, as Paddle
    assert np.isfinite(rt.grad(bce, edge)[0].numpy()).all()
    big = F.binary_cross_entropy_with_logits(T([800.0, -800.0]), T([0.0, 1.0]), reduction="none")
    close(big, [800.0, 800.0])
    q = np.abs(randn(4, 3))
    q[0, 0] = 0
    kl = np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - a), 0)
    close(F.kl_div(T(a), T(q), "batchmean"), kl.sum() / 4)
    close(F.kl_div(T(a), T(q)), kl.mean())
    close(
        F.margin_ranking_loss(T(a), T(b), T(np.sign(randn(4, 3))), 0.1, "none").numpy().min(), 0.0
    )


# ---- dropout, pad, embedding, linear, misc ---------------------------------------------------


def test_dropout_modes_and_seed():
    x = T(np.ones((200, 50)))
    assert F.dropout(x, 0.3, training=False) is x
    close(F.dropout(x, 0.3, training=False, mode="downscale_in_infer"), 0.7 * np.ones((200, 50)))
    rt.seed(11)
    a = F.dropout(x, 0.3).numpy()
    rt.seed(11)
    b = F.dropout(x, 0.3).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 1 / 0.7}
    assert abs((a == 0).mean() - 0.3) < 0.02
    c = F.dropout(x, 0.3, mode="downscale_in_infer").numpy()
    assert set(np.unique(c)) <= {0.0, 1.0}
    close(F.dropout(x, 1.0), np.zeros((200, 50)))
    rows = F.dropout(x, 0.5, axis=0).numpy()
    assert (rows == rows[:, :1]).all()
    y = F.dropout2d(T(np.ones((4, 6, 3, 3))), 0.5).numpy()
    assert (y == y[:, :, :1, :1]).all()  # whole channels
    with pytest.raises(OpError, match="dropout"):
        F.dropout(x, 1.5)


def test_dropout_gradient_uses_the_mask():
    xt = T(randn(30, 20), grad=True)
    y = F.dropout(xt, 0.4)
    (g,) = rt.grad(y.sum(), xt)
    kept = y.numpy() != 0
    close(g, np.where(kept, 1 / 0.6, 0.0))


@pytest.mark.parametrize(
    "mode,np_mode",
    [("constant", "constant"), ("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")],
)
def test_pad_modes_match_numpy(mode, np_mode):
    x = randn(2, 3, 4, 5)
    out = F.pad(T(x), [1, 2, 3, 0], mode=mode, value=0.0)
    close(out, np.pad(x, ((0, 0), (0, 0), (3, 0), (1, 2)), mode=np_mode))
    out = F.pad(T(x), [2, 1], mode=mode, data_format="NHWC")
    close(out, np.pad(x, ((0, 0), (0, 0), (2, 1), (0, 0)), mode=np_mode))


def test_pad_all_dims_constant_and_gradient():
    x = randn(2, 3)
    close(F.pad(T(x), [1, 0, 0, 2], value=-1.0), np.pad(x, ((1, 0), (0, 2)), constant_values=-1.0))
    xt = T(randn(1, 1, 3), grad=True)
    (g,) = rt.grad(F.pad(xt, [2, 2], mode="reflect").sum(), xt)
    close(g, [[[2.0, 3.0, 2.0]]])
    with pytest.raises(ShapeError, match="reflect padding"):
        F.pad(T(x[None]), [3, 0], mode="reflect")


def test_embedding_and_gradient():
    w = randn(6, 3)
    ids = np.array([[0, 5, 2], [2, 2, 1]])
    out = F.embedding(T(ids, dtype="int64"), T(w), padding_idx=-1)
    ref = w[ids]
    ref[ids == 5] = 0
    close(out, ref)
    wt = T(w, grad=True)
    (g,) = rt.grad(F.embedding(T(ids, dtype="int64"), wt, padding_idx=5).sum(), wt)
    close(g, np.array([1, 1, 3, 0, 0, 0])[:, None] * np.ones(3))
    with pytest.raises(OpError, match=r"embedding.*\[0, 6\)"):
        F.embedding(T([0, 6], dtype="int64"), T(w))


def test_linear_one_hot_and_similarity():
    x, w, b = randn(4, 3), randn(3, 2), randn(2)
    close(F.linear(T(x), T(w), T(b)), x @ w + b)
    with pytest.raises(ShapeError, match=r"linear.*\[4, 3\].*\[2, 3\]"):
        F.linear(T(x), T(w.T))
    close(F.one_hot(T([0, 2], dtype="int64"), 3), np.eye(3)[[0, 2]])
    a, c = randn(3, 4), randn(3, 4)
    cos = (a * c).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(c, axis=1)
    close(F.cosine_similarity(T(a), T(c)), cos)
    close(F.normalize(T(a)), a / np.linalg.norm(a, axis=1, keepdims=True))
    close(F.normalize(T(a), p=1, axis=0), a / np.abs(a).sum(0))
    z = T(np.zeros((2, 3)), grad=True)
    (g,) = rt.grad(F.normalize(z).sum(), z)
    assert np.isfinite(g.numpy()).all()


def test_interpolate_nearest_and_bilinear():
    x = randn(1, 2, 3, 4)
    out = F.interpolate(T(x), scale_factor=2, mode="nearest")
    close(out, x.repeat(2, axis=2).repeat(2, axis=3))
    out = F.interpolate(T(x), size=[5, 7], mode="bilinear", align_corners=True)
    hs, ws = np.linspace(0, 2, 5), np.linspace(0, 3, 7)
    ref = np.zeros((1, 2, 5, 7))
    for i, sh in enumerate(hs):
        for j, sw in enumerate(ws):
            h0, w0 = int(sh), int(sw)
            h1, w1 = min(h0 + 1, 2), min(w0 + 1, 3)
            lh, lw = sh - h0, sw - w0
            ref[..., i, j] = (
                (1 - lh) * (1 - lw) * x[..., h0, w0]
                + (1 - lh) * lw * x[..., h0, w1]
                + lh * (1 - lw) * x[..., h1, w0]
                + lh * lw * x[..., h1, w1]
            )
    close(out, ref)
    # half-pixel (align_corners=False, align_mode=0): 2x upsampling keeps the mean
    up = F.interpolate(T(x), scale_factor=2, mode="bilinear")
    assert up.shape == [1, 2, 6, 8]
    close(up.numpy().mean(), x.mean(), rtol=0.2)

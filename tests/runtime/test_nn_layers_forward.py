"""Layer outputs against NumPy references, parameter shapes and default initialization
(Paddle's), recurrent cells against their gate equations, and gradient flow."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import nn

RNG = np.random.default_rng(3)


def T(a, grad=False):
    return rt.to_tensor(np.asarray(a, dtype="float32"), stop_gradient=not grad)


def randn(*shape):
    return RNG.normal(size=shape).astype("float32")


def close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(
        got.numpy() if isinstance(got, rt.Tensor) else got, want, rtol=rtol, atol=atol
    )


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


# ---- common layers -------------------------------------------------------------------------------


def test_linear_forward_backward_and_shapes():
    layer = nn.Linear(4, 3)
    assert layer.weight.shape == [4, 3] and layer.bias.shape == [3]
    x = randn(5, 4)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    out = layer(T(x))
    close(out, x @ w + b)
    g = randn(5, 3)
    (out * T(g)).sum().backward()
    close(layer.weight.grad, x.T @ g, rtol=1e-4)
    close(layer.bias.grad, g.sum(0), rtol=1e-4)
    assert nn.Linear(4, 3, bias_attr=False).bias is None


def test_linear_default_init_is_xavier_uniform_and_bias_zero():
    layer = nn.Linear(300, 200)
    w = layer.weight.numpy()
    limit = math.sqrt(6 / 500)
    assert np.abs(w).max() <= limit and abs(w.std() - limit / math.sqrt(3)) < 0.03 * limit
    assert np.all(layer.bias.numpy() == 0)


def test_embedding_lookup_padding_and_gradient():
    emb = nn.Embedding(6, 4, padding_idx=-1)
    assert emb.weight.shape == [6, 4] and np.all(emb.weight.numpy()[5] == 0)
    ids = np.array([[0, 5], [2, 0]])
    out = emb(rt.to_tensor(ids))
    close(out, emb.weight.numpy()[ids])
    out.sum().backward()
    grad = emb.weight.grad.numpy()
    np.testing.assert_allclose(grad[0], np.full(4, 2.0))
    np.testing.assert_allclose(grad[5], np.zeros(4))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


def test_flatten_identity_and_dropout_modes():
    x = randn(2, 3, 4, 5)
    assert nn.Flatten()(T(x)).shape == [2, 60]
    assert nn.Flatten(0, 2)(T(x)).shape == [24, 5]
    assert nn.Identity(3, key=1)(T(x)).shape == [2, 3, 4, 5]
    drop = nn.Dropout(0.4)
    big = np.ones((200, 100), "float32")
    y = drop(T(big)).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.6) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.6, rtol=1e-5)
    drop.eval()
    close(drop(T(big)), big)
    infer = nn.Dropout(0.4, mode="downscale_in_infer").eval()
    close(infer(T(big)), big * 0.6)
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(1.5)


# ---- activations -----------------------------------------------------------------------------

_X = np.linspace(-3, 3, 24).astype("float32").reshape(4, 6)
_ERF = np.vectorize(math.erf)


@pytest.mark.parametrize(
    "layer, ref",
    [
        (nn.ReLU(), lambda x: np.maximum(x, 0)),
        (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
        (nn.GELU(), lambda x: 0.5 * x * (1 + _ERF(x / math.sqrt(2)))),
        (
            nn.GELU(approximate=True),
            lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        ),
        (nn.Tanh(), np.tanh),
        (nn.Sigmoid(), sigmoid),
        (nn.Softmax(axis=0), lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
        (nn.LogSoftmax(), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
        (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
        (nn.SiLU(), lambda x: x * sigmoid(x)),
        (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
        (nn.Softplus(beta=2), lambda x: np.log1p(np.exp(2 * x)) / 2),
        (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
        (nn.Hardtanh(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
        (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
        (nn.LogSigmoid(), lambda x: np.log(sigmoid(x))),
        (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    ],
)
def test_activation_layers(layer, ref):
    close(layer(T(_X)), ref(_X.astype("float64")), rtol=1e-5, atol=1e-5)


def test_activation_layer_argument_checks():
    with pytest.raises(TypeError, match="unexpected"):
        nn.Softmax(dim=1)
    assert nn.ReLU("my_relu")._name == "my_relu"  # Paddle's positional name


def test_prelu_parameter_and_forward():
    layer = nn.PReLU(num_parameters=3, init=0.1)
    assert layer.weight.shape == [3] and np.allclose(layer.weight.numpy(), 0.1)
    x = randn(2, 3, 4)
    close(layer(T(x)), np.where(x > 0, x, 0.1 * x))


# ---- convolution and pooling -----------------------------------------------------------------


def np_conv2d(x, w, b, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    per = o // groups
    for oc in range(o):
        g = oc // per
        for i in range(oh):
            for j in range(ow):
                r, s = i * stride[0], j * stride[1]
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    r : r + dil[0] * (kh - 1) + 1 : dil[0],
                    s : s + dil[1] * (kw - 1) + 1 : dil[1],
                ]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(kernel_size=3),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=(2, 3), padding=(1, 0), dilation=2),
        dict(kernel_size=3, padding=1, groups=2, bias_attr=False),
    ],
)
def test_conv2d_matches_reference(kwargs):
    layer = nn.Conv2D(4, 6, **kwargs)
    x = randn(2, 4, 7, 8)
    k = layer._kernel_size
    assert layer.weight.shape == [6, 4 // layer._groups, *k]
    b = None if layer.bias is None else layer.bias.numpy()
    ref = np_conv2d(
        x, layer.weight.numpy(), b, layer._stride, _pads(kwargs), layer._dilation, layer._groups
    )
    close(layer(T(x)), ref, rtol=1e-4, atol=1e-4)


def _pads(kwargs):
    p = kwargs.get("padding", 0)
    return (p, p) if isinstance(p, int) else tuple(p)


def test_conv2d_reflect_padding_and_nhwc():
    layer = nn.Conv2D(2, 3, 3, padding=1, padding_mode="reflect")
    x = randn(1, 2, 5, 5)
    xr = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    close(
        layer(T(x)), np_conv2d(xr, layer.weight.numpy(), layer.bias.numpy()), rtol=1e-4, atol=1e-4
    )
    nhwc = nn.Conv2D(2, 3, 3, data_format="NHWC")
    nhwc.weight.set_value(layer.weight.numpy())
    out = nhwc(T(x.transpose(0, 2, 3, 1))).numpy().transpose(0, 3, 1, 2)
    close(out, np_conv2d(x, layer.weight.numpy(), None), rtol=1e-4, atol=1e-4)


def test_conv2d_default_init_and_errors():
    layer = nn.Conv2D(32, 64, 3)
    std = math.sqrt(2.0 / (3 * 3 * 32))
    w = layer.weight.numpy()
    assert abs(w.std() - std) < 0.03 * std and abs(w.mean()) < 0.05 * std
    assert np.all(layer.bias.numpy() == 0)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2D(3, 6, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2D(3, 6, 3, padding_mode="mirror")


def test_pooling_layers():
    x = randn(2, 3, 6, 6)
    close(nn.MaxPool2D(2)(T(x)), x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    close(nn.AvgPool2D(3, stride=3)(T(x)), x.reshape(2, 3, 2, 3, 2, 3).mean(axis=(3, 5)))
    close(nn.AdaptiveAvgPool2D(1)(T(x)), x.mean(axis=(2, 3), keepdims=True))
    close(nn.AdaptiveAvgPool2D((2, 3))(T(x)), x.reshape(2, 3, 2, 3, 3, 2).mean(axis=(3, 5)))
    close(nn.AdaptiveMaxPool2D(3)(T(x)), x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    padded = nn.AvgPool2D(2, stride=2, padding=1)(T(x)).numpy()
    assert padded.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(padded[:, :, 0, 0], x[:, :, 0, 0], rtol=1e-6)  # exclusive


# ---- normalization ---------------------------------------------------------------------------


def test_batch_norm_2d_training_eval_and_running_stats():
    bn = nn.BatchNorm2D(3, momentum=0.8)
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias", "_mean", "_variance"]
    assert bn._mean.stop_gradient and bn._variance.stop_gradient and not bn.weight.stop_gradient
    x = randn(4, 3, 5, 5) * 2 + 1
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    out = bn(T(x))
    close(out, (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5), rtol=1e-4, atol=1e-4)
    close(bn._mean, 0.2 * mean, rtol=1e-5)
    close(bn._variance, 0.8 + 0.2 * var, rtol=1e-5)
    bn.eval()
    rm, rv = bn._mean.numpy(), bn._variance.numpy()
    close(
        bn(T(x)), (x - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5), rtol=1e-4, atol=1e-4
    )
    close(bn._mean, rm)  # eval leaves running stats alone
    assert list(bn.state_dict()) == ["weight", "bias", "_mean", "_variance"]


def test_batch_norm_1d_ranks_and_fixed_affine():
    bn = nn.BatchNorm1D(4, weight_attr=False, bias_attr=False)
    assert bn.weight.stop_gradient and bn.bias.stop_gradient
    for shape in [(8, 4), (8, 4, 3)]:
        x = randn(*shape)
        axes = (0,) if len(shape) == 2 else (0, 2)
        m, v = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
        close(nn.BatchNorm1D(4)(T(x)), (x - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="2D or 3D"):
        bn(T(randn(2, 4, 3, 3)))
    with pytest.raises(ValueError, match="data_format"):
        nn.BatchNorm2D(3, data_format="NCL")


def test_layer_norm_over_trailing_dims():
    ln = nn.LayerNorm([3, 4])
    assert ln.weight.shape == [12] and ln.bias.shape == [12]
    ln.weight.set_value(np.arange(12, dtype="float32"))
    x = randn(2, 3, 4)
    m, v = x.mean(axis=(1, 2), keepdims=True), x.var(axis=(1, 2), keepdims=True)
    close(
        ln(T(x)), (x - m) / np.sqrt(v + 1e-5) * np.arange(12.0).reshape(3, 4), rtol=1e-4, atol=1e-4
    )
    assert nn.LayerNorm(4, weight_attr=False).weight is None


def test_group_norm():
    gn = nn.GroupNorm(2, 4)
    x = randn(2, 4, 3, 3)
    xg = x.reshape(2, 2, -1)
    ref = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
    close(gn(T(x)), ref.reshape(x.shape), rtol=1e-4, atol=1e-4)


def test_instance_norm():
    inn = nn.InstanceNorm2D(3)
    assert [n for n, _ in inn.named_parameters()] == ["scale", "bias"]
    x = randn(2, 3, 4, 4)
    m, v = x.mean(axis=(2, 3), keepdims=True), x.var(axis=(2, 3), keepdims=True)
    close(inn(T(x)), (x - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-4)
    assert nn.InstanceNorm1D(3, weight_attr=False, bias_attr=False).scale is None
    with pytest.raises(ValueError, match="3D input"):
        nn.InstanceNorm1D(3)(T(x))


def test_padding_upsample_and_cosine_similarity():
    x = randn(1, 2, 3, 3)
    close(nn.ZeroPad2D([1, 0, 0, 2])(T(x)), np.pad(x, ((0, 0), (0, 0), (0, 2), (1, 0))))
    close(
        nn.Pad2D(1, mode="reflect")(T(x)),
        np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect"),
    )
    close(nn.Upsample(scale_factor=2)(T(x)), x.repeat(2, axis=2).repeat(2, axis=3))
    a, b = randn(4, 5), randn(4, 5)
    want = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    close(nn.CosineSimilarity()(T(a), T(b)), want, rtol=1e-5)


# ---- recurrent cells -------------------------------------------------------------------------


def _np_params(cell):
    return [
        p.numpy().astype("float64")
        for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    ]


def test_lstm_cell_matches_gate_equations():
    cell = nn.LSTMCell(5, 4)
    assert [p.shape for p in cell.parameters()] == [[16, 5], [16, 4], [16], [16]]
    bound = 1 / math.sqrt(4)
    assert all(np.abs(p.numpy()).max() <= bound for p in cell.parameters())
    wih, whh, bih, bhh = _np_params(cell)
    x, h0, c0 = randn(3, 5), randn(3, 4), randn(3, 4)
    i, f, g, o = np.split(x @ wih.T + bih + h0 @ whh.T + bhh, 4, axis=-1)
    c1 = sigmoid(f) * c0 + sigmoid(i) * np.tanh(g)
    h1 = sigmoid(o) * np.tanh(c1)
    out, (h, c) = cell(T(x), (T(h0), T(c0)))
    close(out, h1, rtol=1e-4)
    close(h, h1, rtol=1e-4)
    close(c, c1, rtol=1e-4)
    _, (h_zero, c_zero) = cell(T(x))
    i, f, g, o = np.split(x @ wih.T + bih + bhh, 4, axis=-1)
    close(c_zero, sigmoid(i) * np.tanh(g), rtol=1e-4, atol=1e-6)


def test_gru_cell_matches_gate_equations():
    cell = nn.GRUCell(5, 4)
    assert [p.shape for p in cell.parameters()] == [[12, 5], [12, 4], [12], [12]]
    wih, whh, bih, bhh = _np_params(cell)
    x, h0 = randn(3, 5), randn(3, 4)
    x_r, x_z, x_c = np.split(x @ wih.T + bih, 3, axis=-1)
    h_r, h_z, h_c = np.split(h0 @ whh.T + bhh, 3, axis=-1)
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    c = np.tanh(x_c + r * h_c)
    want = (h0 - c) * z + c
    out, h = cell(T(x), T(h0))
    close(out, want, rtol=1e-4, atol=1e-6)
    close(h, want, rtol=1e-4, atol=1e-6)


def test_simple_rnn_cell_and_gradients_reach_every_cell_parameter():
    cell = nn.SimpleRNNCell(3, 2, activation="relu")
    wih, whh, bih, bhh = _np_params(cell)
    x, h0 = randn(4, 3), randn(4, 2)
    out, _ = cell(T(x), T(h0))
    close(out, np.maximum(x @ wih.T + bih + h0 @ whh.T + bhh, 0), rtol=1e-4, atol=1e-6)
    for cell in (nn.LSTMCell(3, 2), nn.GRUCell(3, 2)):
        h = None
        state = None
        for _ in range(3):
            h, state = cell(T(x), state)
        h.sum().backward()
        for name, p in cell.named_parameters():
            assert p.grad is not None and np.abs(p.grad.numpy()).sum() > 0, name


# ---- losses ----------------------------------------------------------------------------------


def _log_softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def test_cross_entropy_loss_hard_soft_weighted_and_ignored():
    logits, labels = randn(6, 5), np.array([0, 1, 2, 3, 4, 1])
    lp = _log_softmax(logits.astype("float64"))
    picked = -lp[np.arange(6), labels]
    close(nn.CrossEntropyLoss()(T(logits), rt.to_tensor(labels)), picked.mean(), rtol=1e-5)
    close(
        nn.CrossEntropyLoss(reduction="none")(T(logits), rt.to_tensor(labels)).reshape([-1]),
        picked,
        rtol=1e-5,
    )
    weight = np.linspace(0.5, 1.5, 5).astype("float32")
    got = nn.CrossEntropyLoss(weight=T(weight))(T(logits), rt.to_tensor(labels))
    close(got, (picked * weight[labels]).sum() / weight[labels].sum(), rtol=1e-5)
    masked = labels.copy()
    masked[0] = -100  # Paddle: a negative ignore_index still divides by the full batch
    close(nn.CrossEntropyLoss()(T(logits), rt.to_tensor(masked)), picked[1:].sum() / 6, rtol=1e-5)
    keep = labels != 2  # a class-valued ignore_index divides by the kept count
    close(
        nn.CrossEntropyLoss(ignore_index=2)(T(logits), rt.to_tensor(labels)),
        picked[keep].mean(),
        rtol=1e-5,
    )
    soft = np.abs(randn(6, 5))
    soft /= soft.sum(-1, keepdims=True)
    close(
        nn.CrossEntropyLoss(soft_label=True)(T(logits), T(soft)),
        (-(soft * lp).sum(-1)).mean(),
        rtol=1e-5,
    )


def test_regression_and_binary_losses():
    a, b = randn(4, 3), randn(4, 3)
    close(nn.MSELoss()(T(a), T(b)), ((a - b) ** 2).mean(), rtol=1e-5)
    close(nn.MSELoss("sum")(T(a), T(b)), ((a - b) ** 2).sum(), rtol=1e-5)
    close(nn.L1Loss()(T(a), T(b)), np.abs(a - b).mean(), rtol=1e-5)
    d = np.abs(a - b)
    close(nn.SmoothL1Loss()(T(a), T(b)), np.where(d < 1, 0.5 * d**2, d - 0.5).mean(), rtol=1e-5)
    y = (RNG.random((4, 3)) > 0.5).astype("float32")
    bce = -(y * np.log(sigmoid(a)) + (1 - y) * np.log(1 - sigmoid(a)))
    close(nn.BCEWithLogitsLoss()(T(a), T(y)), bce.mean(), rtol=1e-5)
    close(nn.BCELoss()(T(sigmoid(a)), T(y)), bce.mean(), rtol=1e-4)
    lp = _log_softmax(a.astype("float64"))
    labels = np.array([0, 2, 1, 2])
    close(nn.NLLLoss()(T(lp), rt.to_tensor(labels)), -lp[np.arange(4), labels].mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("avg")


# ---- whole models ----------------------------------------------------------------------------


class SmallCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(), nn.MaxPool2D(2)
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(4 * 4 * 4, 3))

    def forward(self, x):
        return self.head(self.features(x))


def test_gradients_flow_to_every_trainable_parameter():
    model = SmallCNN()
    loss = nn.CrossEntropyLoss()(model(T(randn(5, 1, 8, 8))), rt.to_tensor([0, 1, 2, 0, 1]))
    loss.backward()
    for name, p in model.named_parameters():
        if p.stop_gradient:
            assert p.grad is None and name.endswith(("_mean", "_variance")), name
        else:
            assert p.grad is not None and np.abs(p.grad.numpy()).sum() > 0, name


def test_small_cnn_learns_a_toy_task_and_state_dict_reloads():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 1, 8, 8)).astype("float32")
    labels = np.argmax(
        [x[:, 0, :4].mean((1, 2)), x[:, 0, 4:].mean((1, 2)), np.zeros(24, "float32")], axis=0
    )
    model = SmallCNN()
    opt = rt.optimizer.Adam(0.01, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for _ in range(60):
        loss = loss_fn(model(T(x)), rt.to_tensor(labels))
        first = first if first is not None else float(loss)
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert float(loss) < 0.5 * first
    model.eval()
    clone = SmallCNN()
    clone.set_state_dict(model.state_dict())
    clone.eval()
    close(clone(T(x)), model(T(x)).numpy(), rtol=1e-5, atol=1e-6)

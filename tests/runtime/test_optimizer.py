"""Optimizers, gradient clipping, regularizers and LR schedules against NumPy references
written from Paddle's kernel formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime.nn.parameter import Parameter
from autostatic_runtime.optimizer import lr as L
from autostatic_runtime.regularizer import L1Decay, L2Decay

RNG = np.random.default_rng(0)
P0 = RNG.normal(size=(3, 4))
GRADS = [RNG.normal(size=(3, 4)) for _ in range(4)]


def _param(value=P0, dtype="float32", **kw) -> Parameter:
    return Parameter(np.asarray(value, dtype=dtype), **kw)


def _run(opt, params, grads_per_step):
    """Feed fixed gradients (as if from backward) for several steps; return param values."""
    for grads in grads_per_step:
        for p, g in zip(params, grads, strict=True):
            p.grad = rt.to_tensor(np.asarray(g, dtype=p.numpy().dtype))
        opt.step()
    return [p.numpy() for p in params]


def _steps(grads):
    return [[g] for g in grads]


# ---- reference updates (Paddle's formulas) --------------------------------------------------


def ref_sgd(p, grads, lr, decay=0.0):
    for g in grads:
        p = p - lr * (g + decay * p)
    return p


def ref_momentum(p, grads, lr, mu, nesterov=False, decay=0.0):
    v = np.zeros_like(p)
    for g in grads:
        g = g + decay * p
        v = mu * v + g
        p = p - lr * (g + mu * v) if nesterov else p - lr * v
    return p


def ref_adam(
    p, grads, lr, b1=0.9, b2=0.999, eps=1e-8, decay=0.0, coeff=0.0, decay_mask=True, amsgrad=False
):
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    b1p, b2p = b1, b2
    for g in grads:
        g = g + decay * p
        if decay_mask:
            p = p - lr * coeff * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        lr_t = lr * math.sqrt(1 - b2p) / (1 - b1p)
        p = p - lr_t * m / (np.sqrt(vmax if amsgrad else v) + eps * math.sqrt(1 - b2p))
        b1p, b2p = b1p * b1, b2p * b2
    return p


# ---- optimizers -------------------------------------------------------------------------------


def test_sgd_matches_reference_and_keeps_the_parameter_object():
    p = _param()
    obj = p
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=[p])
    (got,) = _run(opt, [p], _steps(GRADS))
    assert p is obj and p.dtype == rt.float32 and not p.stop_gradient and p.is_leaf
    np.testing.assert_allclose(got, ref_sgd(P0, GRADS, 0.1), rtol=1e-5, atol=1e-6)


def test_sgd_l2_weight_decay_float_and_l2decay_object_agree():
    for wd in (0.05, L2Decay(0.05)):
        p = _param()
        (got,) = _run(rt.optimizer.SGD(0.1, [p], weight_decay=wd), [p], _steps(GRADS))
        np.testing.assert_allclose(got, ref_sgd(P0, GRADS, 0.1, 0.05), rtol=1e-5, atol=1e-6)


def test_l1_decay_adds_coeff_times_sign():
    p = _param()
    (got,) = _run(rt.optimizer.SGD(0.1, [p], weight_decay=L1Decay(0.3)), [p], _steps(GRADS[:1]))
    np.testing.assert_allclose(got, P0 - 0.1 * (GRADS[0] + 0.3 * np.sign(P0)), rtol=1e-5)


def test_param_attr_regularizer_and_learning_rate_take_precedence():
    p = _param(regularizer=L2Decay(0.5), optimize_attr={"learning_rate": 2.0})
    q = _param()
    opt = rt.optimizer.SGD(0.1, [p, q], weight_decay=0.01)
    got_p, got_q = _run(opt, [p, q], [[g, g] for g in GRADS])
    np.testing.assert_allclose(got_p, ref_sgd(P0, GRADS, 0.2, 0.5), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_q, ref_sgd(P0, GRADS, 0.1, 0.01), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_reference_with_weight_decay(nesterov):
    p = _param(dtype="float64")
    opt = rt.optimizer.Momentum(
        0.05, momentum=0.9, parameters=[p], use_nesterov=nesterov, weight_decay=0.01
    )
    (got,) = _run(opt, [p], _steps(GRADS))
    assert p.dtype == rt.float64
    np.testing.assert_allclose(got, ref_momentum(P0, GRADS, 0.05, 0.9, nesterov, 0.01), rtol=1e-12)


def ref_adagrad(p, grads, lr, eps=1e-6, init=0.0, decay=0.0):
    p, moment = p.copy(), np.full_like(p, init)
    for g in grads:
        g = g + decay * p
        moment = moment + g * g
        p = p - lr * g / (np.sqrt(moment) + eps)
    return p


def test_adagrad_matches_paddle_formula():
    p = _param(dtype="float64")
    opt = rt.optimizer.Adagrad(
        0.1, parameters=[p], initial_accumulator_value=0.2, weight_decay=0.01
    )
    (got,) = _run(opt, [p], _steps(GRADS))
    np.testing.assert_allclose(got, ref_adagrad(P0, GRADS, 0.1, 1e-6, 0.2, 0.01), rtol=1e-12)
    state = opt.state_dict()
    assert any(k.endswith("moment_0") for k in state)
    with pytest.raises(ValueError, match="epsilon"):
        rt.optimizer.Adagrad(0.1, epsilon=-1.0, parameters=[p])


def ref_rmsprop(p, grads, lr, rho=0.95, eps=1e-6, mu=0.0, centered=False):
    p, ms, mg, mom = p.copy(), np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        ms = rho * ms + (1 - rho) * g * g
        mg = rho * mg + (1 - rho) * g
        denom = ms - mg * mg if centered else ms
        mom = mu * mom + lr * g / np.sqrt(denom + eps)
        p = p - mom
    return p


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_matches_paddle_formula(centered):
    p = _param(dtype="float64")
    opt = rt.optimizer.RMSProp(0.01, rho=0.9, momentum=0.5, centered=centered, parameters=[p])
    (got,) = _run(opt, [p], _steps(GRADS))
    np.testing.assert_allclose(got, ref_rmsprop(P0, GRADS, 0.01, 0.9, 1e-6, 0.5, centered),
                               rtol=1e-12)  # fmt: skip


def test_adamax_matches_paddle_formula():
    p = _param(dtype="float64")
    opt = rt.optimizer.Adamax(0.01, beta1=0.8, beta2=0.9, parameters=[p])
    (got,) = _run(opt, [p], _steps(GRADS))
    want, m, u, b1p = P0.copy(), np.zeros_like(P0), np.zeros_like(P0), 0.8
    for g in GRADS:
        m = 0.8 * m + 0.2 * g
        u = np.maximum(0.9 * u + 1e-8, np.abs(g))
        want = want - 0.01 / (1 - b1p) * m / u
        b1p *= 0.8
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="beta1"):
        rt.optimizer.Adamax(0.01, beta1=1.5, parameters=[p])


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_matches_paddle_formula(amsgrad):
    p = _param(dtype="float64")
    opt = rt.optimizer.Adam(
        0.01, beta1=0.8, beta2=0.99, epsilon=1e-6, parameters=[p], amsgrad=amsgrad
    )
    (got,) = _run(opt, [p], _steps(GRADS))
    np.testing.assert_allclose(
        got, ref_adam(P0, GRADS, 0.01, 0.8, 0.99, 1e-6, amsgrad=amsgrad), rtol=1e-12
    )


def test_adam_weight_decay_is_l2_on_the_gradient_and_float32_stays_float32():
    p = _param()
    opt = rt.optimizer.Adam(0.01, parameters=[p], weight_decay=0.1)
    (got,) = _run(opt, [p], _steps(GRADS))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref_adam(P0, GRADS, 0.01, decay=0.1), rtol=1e-5, atol=1e-6)


def test_adam_accepts_tensor_betas():
    p = _param(dtype="float64")
    opt = rt.optimizer.Adam(
        0.01, beta1=rt.to_tensor([0.8]), beta2=rt.to_tensor([0.99]), parameters=[p]
    )
    (got,) = _run(opt, [p], _steps(GRADS[:2]))
    np.testing.assert_allclose(got, ref_adam(P0, GRADS[:2], 0.01, 0.8, 0.99), rtol=1e-6)


def test_adamw_decouples_weight_decay():
    w, b = _param(dtype="float64", name="fc.w_0"), _param(dtype="float64", name="fc.b_0")
    opt = rt.optimizer.AdamW(
        0.01, parameters=[w, b], weight_decay=0.1, apply_decay_param_fun=lambda n: n.endswith("w_0")
    )
    got_w, got_b = _run(opt, [w, b], [[g, g] for g in GRADS])
    np.testing.assert_allclose(got_w, ref_adam(P0, GRADS, 0.01, coeff=0.1), rtol=1e-12)
    np.testing.assert_allclose(got_b, ref_adam(P0, GRADS, 0.01), rtol=1e-12)
    assert not np.allclose(got_w, ref_adam(P0, GRADS, 0.01, decay=0.1))


def test_adamw_lr_ratio_scales_the_whole_update():
    p = _param(dtype="float64")
    opt = rt.optimizer.AdamW(0.01, parameters=[p], weight_decay=0.1, lr_ratio=lambda _: 0.5)
    (got,) = _run(opt, [p], _steps(GRADS))
    np.testing.assert_allclose(got, ref_adam(P0, GRADS, 0.005, coeff=0.1), rtol=1e-12)


def test_parameter_groups_set_learning_rate_and_weight_decay():
    p, q = _param(dtype="float64"), _param(dtype="float64")
    opt = rt.optimizer.SGD(
        0.1,
        parameters=[{"params": [p]}, {"params": [q], "learning_rate": 0.5, "weight_decay": 0.2}],
        weight_decay=0.01,
    )
    got_p, got_q = _run(opt, [p, q], [[g, g] for g in GRADS])
    np.testing.assert_allclose(got_p, ref_sgd(P0, GRADS, 0.1, 0.01), rtol=1e-12)
    np.testing.assert_allclose(got_q, ref_sgd(P0, GRADS, 0.05, 0.2), rtol=1e-12)


def test_adam_group_overrides_betas():
    p, q = _param(dtype="float64"), _param(dtype="float64")
    opt = rt.optimizer.Adam(0.01, parameters=[{"params": [p]}, {"params": [q], "beta1": 0.5}])
    got_p, got_q = _run(opt, [p, q], [[g, g] for g in GRADS])
    np.testing.assert_allclose(got_p, ref_adam(P0, GRADS, 0.01), rtol=1e-12)
    np.testing.assert_allclose(got_q, ref_adam(P0, GRADS, 0.01, b1=0.5), rtol=1e-12)


def ref_adadelta(p, grads, lr, eps=1e-6, rho=0.95, decay=0.0):
    p, avg_g, avg_u = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = g + decay * p
        avg_g = rho * avg_g + (1 - rho) * g * g
        update = np.sqrt(avg_u + eps) / np.sqrt(avg_g + eps) * g
        avg_u = rho * avg_u + (1 - rho) * update * update
        p = p - lr * update
    return p


def test_adadelta_matches_paddle_formula_with_decay_and_groups():
    p, q = _param(dtype="float64"), _param(dtype="float64")
    opt = rt.optimizer.Adadelta(
        0.5,
        parameters=[{"params": [p]}, {"params": [q], "rho": 0.8, "learning_rate": 2.0}],
        weight_decay=0.01,
    )
    got_p, got_q = _run(opt, [p, q], [[g, g] for g in GRADS])
    np.testing.assert_allclose(got_p, ref_adadelta(P0, GRADS, 0.5, decay=0.01), rtol=1e-12)
    np.testing.assert_allclose(got_q, ref_adadelta(P0, GRADS, 1.0, rho=0.8, decay=0.01), rtol=1e-12)
    assert not np.allclose(got_p, ref_adadelta(P0, GRADS, 0.5))  # the decay counted


def test_adadelta_rejects_bad_hyperparameters():
    p = _param()
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        rt.optimizer.Adadelta(0.1, epsilon=0.0, parameters=[p])
    with pytest.raises(ValueError, match=r"rho must be in \[0, 1\]"):
        rt.optimizer.Adadelta(0.1, rho=1.5, parameters=[p])
    with pytest.raises(ValueError, match="rho"):
        rt.optimizer.Adadelta(0.1, parameters=[{"params": [p], "rho": -0.1}])
    with pytest.raises(TypeError, match="epsilon must be a float"):
        rt.optimizer.Adadelta(0.1, epsilon="1e-6", parameters=[p])


def ref_lamb(p, grads, lr, decay=0.01, b1=0.9, b2=0.999, eps=1e-6, always_adapt=False):
    p, m, v, b1p, b2p = p.copy(), np.zeros_like(p), np.zeros_like(p), b1, b2
    for g in grads:
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        r = (m / (1 - b1p)) / (np.sqrt(v / (1 - b2p)) + eps) + decay * p
        trust = 1.0
        if decay > 0 or always_adapt:
            p_norm, r_norm = np.linalg.norm(p), np.linalg.norm(r)
            trust = p_norm / r_norm if p_norm > 0 and r_norm > 0 else 1.0
        p = p - lr * trust * r
        b1p, b2p = b1p * b1, b2p * b2
    return p


def test_lamb_matches_paddle_formula_with_exclusion_and_groups():
    w, b = _param(dtype="float64", name="fc.w_0"), _param(dtype="float64", name="fc.b_0")
    q = _param(dtype="float64", name="head.w_0")
    opt = rt.optimizer.Lamb(
        0.01,
        lamb_weight_decay=0.1,
        beta1=0.8,
        parameters=[
            {"params": [w, b]},
            {"params": [q], "lamb_weight_decay": 0.3, "beta2": 0.9, "learning_rate": 0.5},
        ],
        exclude_from_weight_decay_fn=lambda param: param.name.endswith("b_0"),
    )
    got_w, got_b, got_q = _run(opt, [w, b, q], [[g, g, g] for g in GRADS])
    np.testing.assert_allclose(got_w, ref_lamb(P0, GRADS, 0.01, 0.1, b1=0.8), rtol=1e-12)
    np.testing.assert_allclose(got_b, ref_lamb(P0, GRADS, 0.01, 0.0, b1=0.8), rtol=1e-12)
    np.testing.assert_allclose(got_q, ref_lamb(P0, GRADS, 0.005, 0.3, b1=0.8, b2=0.9), rtol=1e-12)
    # the trust ratio made a difference: without it the decayed weight lands elsewhere
    assert not np.allclose(got_w, got_b)


def test_lamb_trust_ratio_always_adapt_zero_norms_and_float32():
    p = _param(dtype="float64")
    opt = rt.optimizer.Lamb(0.01, lamb_weight_decay=0.0, always_adapt=True, parameters=[p])
    (got,) = _run(opt, [p], _steps(GRADS))
    want = ref_lamb(P0, GRADS, 0.01, 0.0, always_adapt=True)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert not np.allclose(want, ref_lamb(P0, GRADS, 0.01, 0.0))
    # a zero parameter has ||p|| = 0: the ratio is 1 and the step is the plain one
    zero = _param(np.zeros((3, 4)), dtype="float64")
    opt = rt.optimizer.Lamb(0.01, parameters=[zero])
    (got,) = _run(opt, [zero], _steps(GRADS[:1]))
    np.testing.assert_allclose(got, ref_lamb(np.zeros((3, 4)), GRADS[:1], 0.01), rtol=1e-12)
    np.testing.assert_allclose(np.abs(got), 0.01, rtol=1e-3)  # first Adam-like step: lr * sign
    # a zero gradient on a zero parameter leaves ||r|| = 0: no NaN, no move
    opt = rt.optimizer.Lamb(0.01, parameters=[zero], always_adapt=True)
    zero.set_value(np.zeros((3, 4)))
    (got,) = _run(opt, [zero], [[np.zeros((3, 4))]])
    np.testing.assert_array_equal(got, np.zeros((3, 4)))
    p32 = _param()
    (got,) = _run(rt.optimizer.Lamb(0.01, parameters=[p32]), [p32], _steps(GRADS))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref_lamb(P0, GRADS, 0.01), rtol=1e-5, atol=1e-6)


def test_lamb_rejects_bad_hyperparameters():
    p = _param()
    with pytest.raises(ValueError, match=r"beta1 must be in \[0, 1\)"):
        rt.optimizer.Lamb(0.01, beta1=1.0, parameters=[p])
    with pytest.raises(ValueError, match="beta2"):
        rt.optimizer.Lamb(0.01, parameters=[{"params": [p], "beta2": -0.5}])
    with pytest.raises(TypeError, match="exclude_from_weight_decay_fn must be a function"):
        rt.optimizer.Lamb(0.01, parameters=[p], exclude_from_weight_decay_fn="bias")
    with pytest.raises(TypeError, match="lamb_weight_decay must be a float"):
        rt.optimizer.Lamb(0.01, lamb_weight_decay="0.1", parameters=[p])


def test_parameters_in_two_groups_are_rejected():
    p = _param()
    with pytest.raises(ValueError, match="more than one parameter group"):
        rt.optimizer.SGD(0.1, parameters=[{"params": [p]}, {"params": [p]}])


def test_step_skips_frozen_parameters_and_those_without_gradient():
    p, frozen, nograd = _param(), _param(trainable=False), _param()
    opt = rt.optimizer.SGD(0.1, parameters=[p, frozen, nograd])
    p.grad = rt.to_tensor(np.ones((3, 4), "float32"))
    frozen.grad = rt.to_tensor(np.ones((3, 4), "float32"))
    opt.step()
    np.testing.assert_allclose(p.numpy(), P0.astype("float32") - 0.1, rtol=1e-6)
    np.testing.assert_array_equal(frozen.numpy(), P0.astype("float32"))
    np.testing.assert_array_equal(nograd.numpy(), P0.astype("float32"))


def test_step_records_no_gradient_and_leaves_grad_alone():
    p = _param()
    opt = rt.optimizer.Adam(0.1, parameters=[p])
    (p * p).sum().backward()
    g = p.grad.numpy().copy()
    opt.step()
    assert p._node is None and p.is_leaf and not p.stop_gradient
    np.testing.assert_array_equal(p.grad.numpy(), g)


def test_clear_grad_to_zero_or_none():
    p = _param()
    opt = rt.optimizer.SGD(0.1, parameters=[p])
    (p * 2.0).sum().backward()
    opt.clear_grad()
    np.testing.assert_array_equal(p.grad.numpy(), np.zeros((3, 4), "float32"))
    opt.clear_grad(set_to_zero=False)
    assert p.grad is None


def test_minimize_uses_existing_gradients_like_paddle():
    p = _param()
    opt = rt.optimizer.SGD(0.1, parameters=[p])
    loss = (p * 3.0).sum()
    loss.backward()
    _, params_grads = opt.minimize(loss)
    assert params_grads[0][0] is p
    np.testing.assert_allclose(p.numpy(), P0.astype("float32") - 0.3, rtol=1e-6)
    np.testing.assert_allclose(p.grad.numpy(), np.full((3, 4), 3.0), rtol=1e-6)


def test_parameters_are_required_and_validated():
    with pytest.raises(AttributeError, match="parameters must be given"):
        rt.optimizer.SGD(0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        rt.optimizer.SGD(0.1, parameters=_param())
    with pytest.raises(TypeError, match="learning_rate"):
        rt.optimizer.SGD("fast", parameters=[_param()])


def test_plain_tensor_with_stop_gradient_false_can_be_optimized():
    t = rt.to_tensor(P0.astype("float32"), stop_gradient=False)
    opt = rt.optimizer.Adam(0.01, parameters=[t])
    (got,) = _run(opt, [t], _steps(GRADS[:2]))
    np.testing.assert_allclose(got, ref_adam(P0, GRADS[:2], 0.01), rtol=1e-5, atol=1e-6)
    assert t.name and "moment1" in " ".join(opt.state_dict())


# ---- gradient clipping --------------------------------------------------------------------------


def test_clip_by_global_norm():
    p, q = _param(dtype="float64"), _param(dtype="float64")
    clip = rt.nn.ClipGradByGlobalNorm(clip_norm=1.0)
    opt = rt.optimizer.SGD(1.0, parameters=[p, q], grad_clip=clip)
    g1, g2 = GRADS[0], GRADS[1]
    _run(opt, [p, q], [[g1, g2]])
    norm = math.sqrt((g1**2).sum() + (g2**2).sum())
    np.testing.assert_allclose(p.numpy(), P0 - g1 / norm, rtol=1e-12)
    np.testing.assert_allclose(q.numpy(), P0 - g2 / norm, rtol=1e-12)


def test_clip_by_global_norm_leaves_small_gradients_and_need_clip_false():
    p, q = _param(dtype="float64"), _param(dtype="float64", need_clip=False)
    opt = rt.optimizer.SGD(1.0, [p, q], grad_clip=rt.nn.ClipGradByGlobalNorm(100.0))
    _run(opt, [p, q], [[GRADS[0], GRADS[1] * 1000]])
    np.testing.assert_allclose(p.numpy(), P0 - GRADS[0], rtol=1e-12)
    np.testing.assert_allclose(q.numpy(), P0 - GRADS[1] * 1000, rtol=1e-12)


def test_clip_by_norm_and_by_value():
    p, q = _param(dtype="float64"), _param(dtype="float64")
    _run(rt.optimizer.SGD(1.0, [p], grad_clip=rt.nn.ClipGradByNorm(0.5)), [p], [[GRADS[0]]])
    np.testing.assert_allclose(
        p.numpy(), P0 - GRADS[0] * 0.5 / np.linalg.norm(GRADS[0]), rtol=1e-12
    )
    _run(rt.optimizer.SGD(1.0, [q], grad_clip=rt.nn.ClipGradByValue(0.3)), [q], [[GRADS[0]]])
    np.testing.assert_allclose(q.numpy(), P0 - np.clip(GRADS[0], -0.3, 0.3), rtol=1e-12)


def test_clip_call_form_takes_and_returns_tensors():
    p = _param()
    g = rt.to_tensor(np.full((3, 4), 2.0, "float32"))
    ((p2, g2),) = rt.nn.ClipGradByGlobalNorm(1.0)([(p, g)])
    assert p2 is p and isinstance(g2, rt.Tensor)
    np.testing.assert_allclose(np.linalg.norm(g2.numpy()), 1.0, rtol=1e-6)


# ---- state dicts --------------------------------------------------------------------------------


def _adam_pair(scheduler=False):
    p = _param(name="layer_0.w_0")
    lr = L.StepDecay(0.01, step_size=2) if scheduler else 0.01
    return p, rt.optimizer.Adam(lr, parameters=[p])


def test_optimizer_state_dict_round_trip_continues_identically():
    p, opt = _adam_pair(scheduler=True)
    _run(opt, [p], _steps(GRADS[:3]))
    opt._learning_rate.step()
    state = opt.state_dict()
    assert set(state) == {
        "layer_0.w_0_moment1_0",
        "layer_0.w_0_moment2_0",
        "layer_0.w_0_beta1_pow_acc_0",
        "layer_0.w_0_beta2_pow_acc_0",
        "LR_Scheduler",
    }
    assert state["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.01}
    saved = {k: (v.numpy().copy() if isinstance(v, rt.Tensor) else v) for k, v in state.items()}
    start = p.numpy().copy()

    _run(opt, [p], _steps(GRADS[3:]))
    expected = p.numpy().copy()

    p.set_value(start)
    opt2 = rt.optimizer.Adam(L.StepDecay(0.5, step_size=2), parameters=[p])
    opt2.set_state_dict(saved)  # before any step: accumulators load lazily
    assert opt2.get_lr() == 0.01
    _run(opt2, [p], _steps(GRADS[3:]))
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-6, atol=1e-7)  # beta pows saved as f32


def test_optimizer_set_state_dict_after_steps_and_errors():
    p, opt = _adam_pair()
    _run(opt, [p], _steps(GRADS[:1]))
    state = opt.state_dict()
    opt.set_state_dict(state)
    bad = dict(state)
    bad["layer_0.w_0_moment1_0"] = np.zeros((2, 2), "float32")
    with pytest.raises(ValueError, match="layer_0.w_0_moment1_0.*shape"):
        opt.set_state_dict(bad)
    del bad["layer_0.w_0_moment1_0"]
    with pytest.raises(KeyError, match="layer_0.w_0_moment1_0"):
        opt.set_state_dict(bad)


def test_momentum_state_dict_has_velocity():
    p = _param(name="fc_0.w_0")
    opt = rt.optimizer.Momentum(0.1, parameters=[p])
    _run(opt, [p], _steps(GRADS[:1]))
    np.testing.assert_allclose(
        opt.state_dict()["fc_0.w_0_velocity_0"].numpy(), GRADS[0].astype("float32"), rtol=1e-6
    )


@pytest.mark.parametrize(
    "make, keys",
    [
        (
            lambda ps: rt.optimizer.Adadelta(0.5, parameters=ps, weight_decay=0.01),
            {"_avg_squared_grad", "_avg_squared_update"},
        ),
        (
            lambda ps: rt.optimizer.Lamb(0.01, lamb_weight_decay=0.1, parameters=ps),
            {"moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc"},
        ),
    ],
    ids=["adadelta", "lamb"],
)
def test_new_optimizers_state_dict_round_trip_continues_identically(make, keys):
    p = _param(name="layer_0.w_0")
    opt = make([p])
    _run(opt, [p], _steps(GRADS[:2]))
    state = opt.state_dict()
    assert set(state) == {f"layer_0.w_0_{k}_0" for k in keys}
    saved = {k: v.numpy().copy() for k, v in state.items()}
    start = p.numpy().copy()
    _run(opt, [p], _steps(GRADS[2:]))
    expected = p.numpy().copy()

    p.set_value(start)
    opt2 = make([p])
    opt2.set_state_dict(saved)
    _run(opt2, [p], _steps(GRADS[2:]))
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-6, atol=1e-7)  # beta pows as f32
    fresh = _param(start, name="layer_0.w_0")
    _run(make([fresh]), [fresh], _steps(GRADS[2:]))
    assert not np.allclose(fresh.numpy(), expected, rtol=1e-6, atol=1e-7)  # the state counted


# ---- learning rates --------------------------------------------------------------------------


def _values(sched, n):
    out = []
    for _ in range(n):
        out.append(sched())
        sched.step()
    return out


@pytest.mark.parametrize(
    "make, closed",
    [
        (lambda: L.StepDecay(0.5, step_size=3, gamma=0.1), lambda e: 0.5 * 0.1 ** (e // 3)),
        (
            lambda: L.MultiStepDecay(0.5, milestones=[2, 5], gamma=0.5),
            lambda e: 0.5 * 0.5 ** ((e >= 2) + (e >= 5)),
        ),
        (lambda: L.ExponentialDecay(0.5, gamma=0.9), lambda e: 0.5 * 0.9**e),
        (lambda: L.NaturalExpDecay(0.5, gamma=0.1), lambda e: 0.5 * math.exp(-0.1 * e)),
        (lambda: L.InverseTimeDecay(0.5, gamma=0.1), lambda e: 0.5 / (1 + 0.1 * e)),
        (lambda: L.LambdaDecay(0.5, lambda e: 0.95**e), lambda e: 0.5 * 0.95**e),
        (lambda: L.MultiplicativeDecay(0.5, lambda e: 0.9), lambda e: 0.5 * 0.9**e),
        (
            lambda: L.PiecewiseDecay([3, 6], [1.0, 0.5, 0.1]),
            lambda e: 1.0 if e < 3 else 0.5 if e < 6 else 0.1,
        ),
        (
            lambda: L.PolynomialDecay(0.5, decay_steps=5, end_lr=0.1, power=2.0),
            lambda e: (0.5 - 0.1) * (1 - min(e, 5) / 5) ** 2 + 0.1,
        ),
        (
            lambda: L.NoamDecay(d_model=64, warmup_steps=4),
            lambda e: 64**-0.5 * min(1.0 if e == 0 else e**-0.5, e * 4**-1.5),
        ),
        (
            lambda: L.CosineAnnealingDecay(0.5, T_max=8, eta_min=0.01),
            lambda e: 0.01 + (0.5 - 0.01) * (1 + math.cos(math.pi * e / 8)) / 2,
        ),
        (
            lambda: L.LinearLR(0.5, total_steps=4, start_factor=0.25),
            lambda e: 0.5 * (0.25 + 0.75 * min(e, 4) / 4),
        ),
    ],
)
def test_schedules_match_closed_forms(make, closed):
    got = _values(make(), 9)
    np.testing.assert_allclose(got, [closed(e) for e in range(9)], rtol=1e-9, atol=1e-12)


def test_cosine_annealing_jump_uses_closed_form():
    s = L.CosineAnnealingDecay(1.0, T_max=10)
    s.step(5)
    assert s.last_epoch == 5 and s() == pytest.approx(0.5)


def test_linear_lr_steps_multiply_as_paddle_and_jumps_use_the_closed_form():
    s = L.LinearLR(0.5, total_steps=5, start_factor=0.2, end_factor=0.9)
    want, delta = [0.5 * 0.2], 0.9 - 0.2  # Paddle: each step scales the previous rate
    for e in range(1, 9):
        prev = want[-1]
        want.append(prev if e > 5 else prev * (1.0 + delta / (5 * 0.2 + (e - 1) * delta)))
    assert _values(s, 9) == want  # the same floats
    np.testing.assert_allclose(want, [0.5 * (0.2 + 0.7 * min(e, 5) / 5) for e in range(9)])
    s.step(3)
    assert s() == pytest.approx(0.5 * (0.2 + 0.7 * 3 / 5), rel=1e-12)
    resumed = L.LinearLR(0.5, total_steps=5, start_factor=0.2, end_factor=0.9, last_epoch=2)
    assert resumed.last_epoch == 3 and resumed() == pytest.approx(s(), rel=1e-12)
    resumed.step()
    assert resumed() == pytest.approx(0.5 * (0.2 + 0.7 * 4 / 5), rel=1e-12)


def ref_one_cycle(e, max_lr, total, div=25.0, end=1e-4, pct=0.3, anneal="cos", three=False):
    """Paddle's OneCycleLR: anneal between knots (step, rate); the last phase extrapolates."""
    knots = [(0, max_lr / div), (pct * total - 1, max_lr)]
    knots += [(2 * pct * total - 2, max_lr / div)] if three else []
    knots += [(total - 1, end)]
    phases = list(zip(knots, knots[1:], strict=False))
    (s0, l0), (s1, l1) = next((a, b) for a, b in phases if e <= b[0] or (a, b) == phases[-1])
    frac = (e - s0) / (s1 - s0)
    if anneal == "cos":
        return l1 + (l0 - l1) * (1 + math.cos(math.pi * frac)) / 2
    return l0 + (l1 - l0) * frac


@pytest.mark.parametrize("anneal", ["cos", "linear"])
@pytest.mark.parametrize("three", [False, True], ids=["two_phase", "three_phase"])
def test_one_cycle_lr_matches_reference_over_every_phase(anneal, three):
    kw = dict(divide_factor=10.0, end_learning_rate=0.001, phase_pct=0.25)
    s = L.OneCycleLR(0.5, 20, anneal_strategy=anneal, three_phase=three, **kw)
    got = _values(s, 20) + [s()]  # steps 0..20: total_steps is the last one allowed
    want = [ref_one_cycle(e, 0.5, 20, 10.0, 0.001, 0.25, anneal, three) for e in range(21)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[0] == pytest.approx(0.05) and got[4] == pytest.approx(0.5)  # up: 0.25 * 20 - 1
    if three:
        assert got[8] == pytest.approx(0.05)  # back to the initial rate after as many steps
    assert got[19] == pytest.approx(0.001)
    with pytest.raises(ValueError, match="beyond total_steps=20"):
        s.step()
    assert s.last_epoch == 20 and s() == got[-1]  # a refused step changes nothing


def ref_cyclic(e, base, top, up, down, scale, on_cycle):
    """A triangle wave: up for ``up`` steps, down for ``down``, its height scaled."""
    cycle, t = divmod(e, up + down)
    frac = t / up if t <= up else (up + down - t) / down
    return base + (top - base) * frac * scale(cycle + 1 if on_cycle else e)


@pytest.mark.parametrize(
    "kw, scale, on_cycle",
    [
        ({}, lambda c: 1.0, True),
        ({"mode": "triangular2"}, lambda c: 0.5 ** (c - 1), True),
        ({"mode": "exp_range", "exp_gamma": 0.9}, lambda n: 0.9**n, False),
        ({"scale_fn": lambda c: 1 / c}, lambda c: 1 / c, True),
        ({"scale_fn": lambda n: 1 / (1 + n), "scale_mode": "iterations"}, lambda n: 1 / (1 + n),
         False),
    ],
    ids=["triangular", "triangular2", "exp_range", "scale_fn_cycle", "scale_fn_iterations"],
)  # fmt: skip
def test_cyclic_lr_matches_a_scaled_triangle_wave(kw, scale, on_cycle):
    s = L.CyclicLR(0.1, 0.6, step_size_up=3, step_size_down=2, **kw)
    got = _values(s, 16)  # three cycles and more
    want = [ref_cyclic(e, 0.1, 0.6, 3, 2, scale, on_cycle) for e in range(16)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    symmetric = L.CyclicLR(0.1, 0.6, step_size_up=4, **kw)  # step_size_down defaults to up
    want = [ref_cyclic(e, 0.1, 0.6, 4, 4, scale, on_cycle) for e in range(17)]
    np.testing.assert_allclose(_values(symmetric, 17), want, rtol=1e-12)


def ref_restarts(e, lr, t0, mult, eta_min=0.0):
    start, period = 0, t0
    while e >= start + period:
        start, period = start + period, period * mult
    return eta_min + (lr - eta_min) * (1 + math.cos(math.pi * (e - start) / period)) / 2


@pytest.mark.parametrize("mult", [1, 2])
def test_cosine_annealing_warm_restarts_matches_sgdr(mult):
    s = L.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=mult, eta_min=0.01)
    want = [ref_restarts(e, 0.5, 3, mult, 0.01) for e in range(22)]
    np.testing.assert_allclose(_values(s, 22), want, rtol=1e-12)
    for epoch in (0, 2, 3, 9.5, 21, 7):  # jumps, a fractional epoch, and back
        s.step(epoch)
        assert s() == pytest.approx(ref_restarts(epoch, 0.5, 3, mult, 0.01), rel=1e-12)
        assert s.last_epoch == math.floor(epoch)
    s.step()  # a step after a jump continues from it
    assert s() == pytest.approx(ref_restarts(8, 0.5, 3, mult, 0.01), rel=1e-12)
    with pytest.raises(ValueError, match="epoch must be >= 0"):
        s.step(-1)
    resumed = L.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=mult, eta_min=0.01, last_epoch=12)
    assert resumed.last_epoch == 13
    np.testing.assert_allclose(_values(resumed, 5), want[13:18], rtol=1e-12)


def test_warm_restarts_epoch_at_a_restart_starts_a_period():
    # 1 + 10 + 100 = 111: epoch 111 starts the fourth period (no log rounding error)
    s = L.CosineAnnealingWarmRestarts(1.0, T_0=1, T_mult=10)
    s.step(111)
    assert (s.T_cur, s.T_i, s()) == (0, 1000, 1.0)
    s.step(110)
    assert s.T_i == 100 and s() == pytest.approx(ref_restarts(110, 1.0, 1, 10), rel=1e-12)


@pytest.mark.parametrize(
    "make, done",
    [
        (lambda: L.LinearLR(0.5, total_steps=6, start_factor=0.1), 3),
        (lambda: L.OneCycleLR(0.5, total_steps=12, three_phase=True), 5),
        (lambda: L.CyclicLR(0.1, 0.6, step_size_up=3, mode="triangular2"), 7),
        (lambda: L.CosineAnnealingWarmRestarts(0.5, T_0=2, T_mult=2), 4),
    ],
    ids=["linear", "one_cycle", "cyclic", "warm_restarts"],
)
def test_new_schedules_state_dict_round_trip_continues_identically(make, done):
    s = make()
    _values(s, done)
    state = s.state_dict()
    assert {"last_epoch", "last_lr"} <= set(state) and state["last_epoch"] == done
    want = _values(s, 6)
    s2 = make()
    s2.set_state_dict(state)
    assert _values(s2, 6) == want
    fresh = make()
    assert _values(fresh, 6) != want  # the state counted


def test_warm_restarts_loads_a_state_without_its_period():
    s = L.CosineAnnealingWarmRestarts(0.5, T_0=2, T_mult=2)
    _values(s, 5)  # epoch 5, inside the second period (epochs 2 to 5)
    state = s.state_dict()
    assert (state["T_cur"], state["T_i"]) == (3, 4)
    want = _values(s, 8)
    s2 = L.CosineAnnealingWarmRestarts(0.5, T_0=2, T_mult=2)
    s2.set_state_dict({"last_epoch": state["last_epoch"], "last_lr": state["last_lr"]})
    np.testing.assert_allclose(_values(s2, 8), want, rtol=1e-12)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: L.OneCycleLR("0.1", 20), TypeError, "max_learning_rate must be a float"),
        (lambda: L.OneCycleLR(-1.0, 20), ValueError, "max_learning_rate must be >= 0"),
        (lambda: L.OneCycleLR(0.1, 20, end_learning_rate=-1), ValueError, "end_learning_rate"),
        (lambda: L.OneCycleLR(0.1, 20.0), TypeError, "total_steps must be a positive int"),
        (lambda: L.OneCycleLR(0.1, 0), ValueError, "total_steps must be a positive int"),
        (lambda: L.OneCycleLR(0.1, 20, phase_pct=1.5), ValueError, r"phase_pct must be in \[0,"),
        (lambda: L.OneCycleLR(0.1, 20, phase_pct=0.6, three_phase=True), ValueError, "< 0.5"),
        (lambda: L.OneCycleLR(0.1, 20, anneal_strategy="exp"), ValueError, "'cos' or 'linear'"),
        (lambda: L.OneCycleLR(0.1, 20, divide_factor=0), ValueError, "divide_factor must be > 0"),
        (lambda: L.OneCycleLR(0.1, 10, phase_pct=0.1), ValueError, "a phase of 0 steps"),
        (lambda: L.CyclicLR(0.1, "1", 5), TypeError, "max_learning_rate must be a float"),
        (lambda: L.CyclicLR(0.1, -1.0, 5), ValueError, "max_learning_rate must be >= 0"),
        (lambda: L.CyclicLR(-0.1, 1.0, 5), ValueError, "base_learning_rate must be >= 0"),
        (lambda: L.CyclicLR(0.1, 1.0, "5"), TypeError, "step_size_up must be a positive int"),
        (lambda: L.CyclicLR(0.1, 1.0, 0), ValueError, "step_size_up must be a positive int"),
        (lambda: L.CyclicLR(0.1, 1.0, 5, -1), ValueError, "step_size_down must be a positive"),
        (lambda: L.CyclicLR(0.1, 1.0, 5, mode="tri"), ValueError, "mode must be 'triangular'"),
        (lambda: L.CyclicLR(0.1, 1.0, 5, scale_mode="x"), ValueError, "scale_mode must be"),
        (lambda: L.CyclicLR(0.1, 1.0, 5, exp_gamma="a"), TypeError, "exp_gamma must be a float"),
        (lambda: L.CyclicLR(0.1, 1.0, 5, scale_fn=0.5), TypeError, "scale_fn must be a function"),
        (lambda: L.CosineAnnealingWarmRestarts(0.1, T_0=0), ValueError, "T_0 must be a positive"),
        (lambda: L.CosineAnnealingWarmRestarts(0.1, T_0=1.0), ValueError, "T_0 must be a positive"),
        (lambda: L.CosineAnnealingWarmRestarts(0.1, 2, T_mult=0), ValueError, "T_mult must be"),
        (lambda: L.CosineAnnealingWarmRestarts(0.1, 2, T_mult=1.5), ValueError, "T_mult must be"),
        (lambda: L.CosineAnnealingWarmRestarts(0.1, 2, eta_min=-1), ValueError, "eta_min must be"),
        (lambda: L.LinearLR(0.1, 5, start_factor=0.0), ValueError, "start_factor must be in"),
        (lambda: L.LinearLR(0.1, 0), ValueError, "total_steps must be positive"),
    ],
)
def test_new_schedules_validate_their_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_linear_warmup_then_float_or_scheduler():
    s = L.LinearWarmup(0.5, warmup_steps=4, start_lr=0.0, end_lr=0.5)
    assert _values(s, 6) == pytest.approx([0.0, 0.125, 0.25, 0.375, 0.5, 0.5])
    inner = L.StepDecay(0.5, step_size=2, gamma=0.1)
    s = L.LinearWarmup(inner, warmup_steps=2, start_lr=0.0, end_lr=0.5)
    assert _values(s, 6) == pytest.approx([0.0, 0.25, 0.5, 0.5, 0.05, 0.05])
    state = s.state_dict()
    assert "LinearWarmup_LR" in state
    s2 = L.LinearWarmup(L.StepDecay(0.5, step_size=2, gamma=0.1), 2, 0.0, 0.5)
    s2.set_state_dict(state)
    assert s2() == s() and s2.learning_rate.last_epoch == inner.last_epoch


def test_reduce_on_plateau():
    s = L.ReduceOnPlateau(1.0, factor=0.5, patience=1, cooldown=1)
    lrs = []
    for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95]:
        s.step(rt.to_tensor([metric]))
        lrs.append(s())
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]
    state = s.state_dict()
    assert state["best"] == pytest.approx(0.9) and state["last_lr"] == 0.25


def test_scheduler_state_dict_round_trip_and_errors():
    s = L.ExponentialDecay(0.5, gamma=0.5)
    _values(s, 3)
    s2 = L.ExponentialDecay(0.5, gamma=0.5)
    s2.set_state_dict(s.state_dict())
    assert (s2.last_epoch, s2()) == (3, s())
    with pytest.raises(RuntimeError, match="last_lr"):
        s2.set_state_dict({"last_epoch": 1})
    with pytest.raises(ValueError, match="T_max"):
        L.CosineAnnealingDecay(0.1, T_max=0)


def test_optimizer_follows_its_scheduler():
    p = _param(dtype="float64")
    sched = L.StepDecay(0.1, step_size=1, gamma=0.5)
    opt = rt.optimizer.SGD(sched, parameters=[p])
    expected = P0.copy()
    for g in GRADS:
        assert opt.get_lr() == sched()
        expected = expected - sched() * g
        _run(opt, [p], [[g]])
        sched.step()
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-12)
    with pytest.raises(RuntimeError, match="LRScheduler"):
        opt.set_lr(0.1)
    opt2 = rt.optimizer.SGD(0.1, parameters=[p])
    opt2.set_lr(0.25)
    assert opt2.get_lr() == 0.25


# ---- training ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: rt.optimizer.SGD(0.1, ps),
        lambda ps: rt.optimizer.Momentum(0.05, 0.9, ps, use_nesterov=True),
        lambda ps: rt.optimizer.Adam(0.05, parameters=ps),
        lambda ps: rt.optimizer.AdamW(0.05, parameters=ps, weight_decay=1e-4),
        lambda ps: rt.optimizer.Adagrad(0.3, parameters=ps),
        lambda ps: rt.optimizer.RMSProp(0.02, parameters=ps, centered=True),
        lambda ps: rt.optimizer.Adamax(0.1, parameters=ps),
        lambda ps: rt.optimizer.Lamb(0.05, lamb_weight_decay=0.0, parameters=ps),
    ],
)
def test_tiny_regression_trains_to_low_loss(make):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 3)).astype("float32")
    y = (x @ np.array([1.5, -2.0, 0.5], "float32") + 0.3)[:, None]
    w = rt.nn.create_parameter([3, 1], "float32")
    b = rt.nn.create_parameter([1], "float32", is_bias=True)
    opt = make([w, b])
    xt, yt = rt.to_tensor(x), rt.to_tensor(y)
    for _ in range(300):
        pred = (xt.unsqueeze(-1) * w.unsqueeze(0)).sum(axis=1) + b
        loss = ((pred - yt) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert float(loss) < 1e-3


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (3,), (7, 5), (0, 4), (160, 130)])
def test_descend_equals_the_expression_in_a_new_array_aligned_when_large(dtype, shape):
    from autostatic_runtime.optimizer.optimizer import ALIGN_FROM, descend

    rng = np.random.default_rng(3)
    value = rng.normal(size=shape).astype(dtype)
    step = rng.normal(size=shape).astype(dtype)
    for scale, want in ((0.1, value - step * 0.1), (2, value - step * 2), (None, value - step)):
        got = descend(value, step, scale)
        assert type(got) is type(want)  # a NumPy scalar for 0-d arrays, as the expression
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # the same roundings, bit for bit
        if got.nbytes >= ALIGN_FROM:
            assert got.flags.writeable and got.flags.c_contiguous
            assert not np.shares_memory(got, value) and not np.shares_memory(got, step)
            assert got.ctypes.data % 64 == 0


def test_descend_keeps_numpy_promotion_where_it_cannot_take_the_aligned_path():
    from autostatic_runtime.optimizer.optimizer import descend

    value = np.ones(3, "float32")
    # a NumPy float64 scale is not weak: the expression gives float64, and so does descend
    got = descend(value, np.ones(3, "float32"), np.float64(0.5))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, value - np.ones(3, "float32") * np.float64(0.5))
    got = descend(value, np.ones(3, "float64"), 0.5)  # mixed dtypes: promoted as NumPy does
    assert got.dtype == np.float64
    got = descend(value, np.ones((2, 3), "float32"), 0.5)  # broadcast
    assert got.shape == (2, 3)


def _plain(value, step, scale=None):
    return value - step if scale is None else value - step * scale


@pytest.mark.parametrize("make", [
    lambda ps: rt.optimizer.SGD(0.1, parameters=ps),
    lambda ps: rt.optimizer.Momentum(0.1, parameters=ps, use_nesterov=True),
    lambda ps: rt.optimizer.Adam(0.1, parameters=ps),
], ids=["sgd", "momentum", "adam"])  # fmt: skip
def test_updated_parameters_are_new_aligned_arrays_the_user_may_write(make, monkeypatch):
    """An update rebinds the parameter to a new array (an array taken before keeps its
    values), 64-byte aligned on NumPy and writable, with the values of the plain expression
    ``p - step * lr``."""
    from autostatic_runtime.optimizer import adam, momentum, sgd

    rng = np.random.default_rng(5)
    start = rng.normal(size=(160, 130)).astype("float32")  # large enough to be aligned
    grads = [rng.normal(size=(160, 130)).astype("float32") for _ in range(3)]

    def run(check):
        w = Parameter(start.copy())
        opt = make([w])
        for g in grads:
            before = w.numpy()
            kept = before.copy()
            w.grad = rt.to_tensor(g.copy())
            opt.step()
            np.testing.assert_array_equal(before, kept)
            after = w.numpy()
            assert after.dtype == np.float32 and after.flags.writeable
            if check:
                assert after.ctypes.data % 64 == 0
            after[0, 0] = 5.0  # the user's to change: the next update starts from it
        return w.numpy()

    got = run(check=True)
    with monkeypatch.context() as m:
        for module in (sgd, momentum, adam):
            m.setattr(module, "descend", _plain)
        want = run(check=False)
    np.testing.assert_array_equal(got, want)

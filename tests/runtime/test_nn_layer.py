"""The Layer base class: registration, traversal, state dicts, hooks, modes, containers,
printing, parameters, ParamAttr and initializers."""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import nn
from autostatic_runtime.nn import initializer as I
from autostatic_runtime.nn.parameter import ParamAttr, Parameter
from autostatic_runtime.regularizer import L2Decay


class Scale(nn.Layer):
    """y = x * w + b, with a persistable and a non-persistable buffer."""

    def __init__(self, n=3):
        super().__init__()
        self.w = self.create_parameter([n], default_initializer=I.Constant(2.0))
        self.b = self.create_parameter([n], is_bias=True)
        self.register_buffer("calls", rt.zeros([1]))
        self.scratch = rt.ones([n])  # a plain Tensor: non-persistable buffer

    def forward(self, x):
        return x * self.w + self.b


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.first = Scale()
        self.blocks = nn.LayerList([Scale(), Scale()])
        self.head = Scale()

    def forward(self, x):
        x = self.first(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


# ---- registration and traversal -------------------------------------------------------------


def test_attributes_register_parameters_sublayers_and_buffers():
    s = Scale()
    assert list(s._parameters) == ["w", "b"]
    assert list(s._buffers) == ["calls", "scratch"]
    assert isinstance(s.w, Parameter) and not s.w.stop_gradient and s.w.trainable
    np.testing.assert_array_equal(s.w.numpy(), np.full(3, 2.0, "float32"))
    np.testing.assert_array_equal(s.b.numpy(), np.zeros(3, "float32"))
    assert "w" not in s.__dict__ and "w" in dir(s)


def test_named_parameters_sublayers_and_buffers_are_ordered_and_deduplicated():
    net = Net()
    net.alias = net.first  # the same layer twice: its parameters appear once
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "first.w",
        "first.b",
        "blocks.0.w",
        "blocks.0.b",
        "blocks.1.w",
        "blocks.1.b",
        "head.w",
        "head.b",
    ]
    assert len(net.parameters()) == 8
    assert [n for n, _ in net.named_sublayers()] == [
        "first",
        "blocks",
        "blocks.0",
        "blocks.1",
        "head",
    ]
    assert net.sublayers(include_self=True)[0] is net
    assert [n for n, _ in net.named_children()] == ["first", "blocks", "head"]
    assert [n for n, _ in net.named_buffers()][:2] == ["first.calls", "first.scratch"]
    assert net.parameters(include_sublayers=False) == []


def test_reassignment_moves_between_kinds_and_delattr_removes():
    s = Scale()
    s.w = None
    assert s._parameters["w"] is None and s.w is None
    with pytest.raises(TypeError, match="parameter 'w'"):
        s.w = rt.ones([3])
    s.sub = Scale()
    with pytest.raises(TypeError, match="sublayer 'sub'"):
        s.sub = 3
    s.sub = None
    del s.b
    assert "b" not in s._parameters
    with pytest.raises(AttributeError, match="no attribute 'b'"):
        _ = s.b
    s.b = 5  # now a plain attribute
    assert s.b == 5 and "b" not in s._parameters


def test_assigning_before_init_is_a_clear_error():
    class Bad(nn.Layer):
        def __init__(self):
            self.fc = nn.Identity()
            super().__init__()

    with pytest.raises(RuntimeError, match="super\\(\\).__init__\\(\\)"):
        Bad()


def test_add_parameter_add_sublayer_register_buffer_checks():
    s = Scale()
    p = rt.nn.create_parameter([2], "float32")
    assert s.add_parameter("extra", p) is p and s.extra is p
    with pytest.raises(TypeError, match="Parameter"):
        s.add_parameter("t", rt.ones([2]))
    with pytest.raises(KeyError, match="'.'"):
        s.add_parameter("a.b", p)
    with pytest.raises(KeyError, match="already exists"):
        s.add_parameter("forward", p)
    with pytest.raises(TypeError, match="Layer"):
        s.add_sublayer("x", 3)
    with pytest.raises(KeyError, match="empty"):
        s.register_buffer("", rt.ones([1]))
    with pytest.raises(TypeError, match="Tensor"):
        s.register_buffer("np", np.ones(2))
    s.register_buffer("temp", rt.ones([1]), persistable=False)
    assert "temp" not in s.state_dict()


def test_create_parameter_names_attrs_and_false():
    s = Scale()
    assert s.w.name.startswith(s.full_name() + ".w_") and s.b.name.startswith(s.full_name() + ".b_")
    assert s.full_name().startswith("scale_")
    attr = ParamAttr(
        name="my_w",
        initializer=I.Constant(0.5),
        learning_rate=0.1,
        regularizer=L2Decay(0.01),
        trainable=False,
    )
    p = s.create_parameter([2, 2], attr=attr)
    assert p.name == "my_w" and p.stop_gradient and not p.trainable
    assert p.optimize_attr == {"learning_rate": 0.1} and p.regularizer.coeff == 0.01
    np.testing.assert_array_equal(p.numpy(), np.full((2, 2), 0.5, "float32"))
    assert s.create_parameter([2], attr=False) is None
    assert s.create_parameter([2], attr="named").name == "named"
    assert np.all(s.create_parameter([2], attr=I.Constant(3.0)).numpy() == 3.0)
    assert s.create_parameter([2], dtype="float64").dtype == rt.float64


# ---- state dicts ---------------------------------------------------------------------------------


def test_state_dict_holds_parameters_then_persistable_buffers_per_layer():
    net = Net()
    keys = list(net.state_dict())
    assert keys[:3] == ["first.w", "first.b", "first.calls"]
    assert "first.scratch" not in keys and "blocks.1.calls" in keys and len(keys) == 12
    assert net.state_dict()["head.w"] is net.head.w


def test_state_dict_round_trip_with_tensors_and_numpy():
    a, b = Net(), Net()
    for i, p in enumerate(a.parameters()):
        p.set_value(np.full(p.shape, float(i), "float32"))
    b.set_state_dict(a.state_dict())
    for (n, pa), pb in zip(a.named_parameters(), b.parameters(), strict=True):
        np.testing.assert_array_equal(pa.numpy(), pb.numpy(), err_msg=n)
    as_numpy = {k: v.numpy().astype("float64") for k, v in a.state_dict().items()}
    c = Net()
    missing, unexpected = c.set_state_dict(as_numpy)
    assert missing == [] and unexpected == []
    assert c.head.w.dtype == rt.float32  # keeps the parameter's dtype
    as_numpy["head.w"][0] = 99.0
    assert c.head.w.numpy()[0] != 99.0  # loading copies


def test_set_state_dict_errors_name_every_bad_key_and_load_nothing():
    net = Net()
    before = net.head.w.numpy().copy()
    state = {k: v.numpy() for k, v in Net().state_dict().items()}
    state["head.w"] = np.zeros(3, "float32") + 7
    state["first.w"] = np.zeros((2, 2), "float32")
    del state["head.b"]
    state["extra.weight"] = np.zeros(1)
    with pytest.raises(ValueError) as info:
        net.set_state_dict(state)
    msg = str(info.value)
    assert "'head.b'" in msg and "'extra.weight'" in msg and "'first.w' has shape [2, 2]" in msg
    np.testing.assert_array_equal(net.head.w.numpy(), before)


def test_set_state_dict_non_strict_loads_what_matches_and_warns():
    net = Net()
    state = {k: v.numpy() + 1 for k, v in Net().state_dict().items()}
    del state["head.b"]
    state["extra"] = np.zeros(1)
    with pytest.warns(UserWarning, match="head.b"):
        missing, unexpected = net.set_state_dict(state, strict=False)
    assert missing == ["head.b"] and unexpected == ["extra"]
    np.testing.assert_array_equal(net.head.w.numpy(), state["head.w"])


def test_set_state_dict_by_parameter_names():
    a, b = Scale(), Scale()
    b.w.set_value(np.arange(3, dtype="float32"))
    pairs = zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    by_name = {ta.name: tb.numpy() for ta, tb in pairs}
    a.set_state_dict(by_name, use_structured_name=False)
    np.testing.assert_array_equal(a.w.numpy(), np.arange(3, dtype="float32"))


# ---- forward, hooks, modes -------------------------------------------------------------------


def test_call_runs_forward_and_hooks_can_replace_inputs_and_outputs():
    s = Scale()
    seen = []
    pre = s.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 10.0,))
    post = s.register_forward_post_hook(lambda layer, inputs, out: seen.append(out) or out + 1.0)
    out = s(rt.ones([3]))
    np.testing.assert_allclose(out.numpy(), np.full(3, 21.0))
    assert len(seen) == 1
    pre.remove()
    post.remove()
    np.testing.assert_allclose(s(rt.ones([3])).numpy(), np.full(3, 2.0))


def test_pre_hook_returning_a_single_tensor_and_none():
    s = Scale()
    s.register_forward_pre_hook(lambda layer, inputs: None)
    s.register_forward_pre_hook(lambda layer, inputs: inputs[0] + 1.0)
    np.testing.assert_allclose(s(rt.zeros([3])).numpy(), np.full(3, 2.0))


def test_state_dict_hooks_see_or_replace_the_state_and_can_be_removed():
    net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    seen = []
    handle = net[0].register_state_dict_hook(lambda state: seen.append(sorted(state)))
    net.register_state_dict_hook(lambda state: {k: v for k, v in state.items() if "bias" in k})
    assert sorted(net.state_dict()) == ["0.bias", "1.bias"]
    assert seen == [["0.bias", "0.weight"]]  # the sublayer's own part, before the parent's
    assert len(net.state_dict(use_hook=False)) == 4 and len(seen) == 1
    handle.remove()
    net.state_dict()
    assert len(seen) == 1
    net.set_state_dict({k: v.numpy() for k, v in net.state_dict(use_hook=False).items()})


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Layer()(rt.ones([1]))


def test_train_eval_propagate_to_sublayers():
    net = Net()
    assert all(layer.training for layer in net.sublayers(include_self=True))
    assert net.eval() is net
    assert not any(layer.training for layer in net.sublayers(include_self=True))
    net.blocks.train()
    assert net.blocks[1].training and not net.head.training


def test_gradients_reach_every_parameter_and_clear_gradients():
    net = Net()
    net(rt.ones([3])).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.clear_gradients()
    assert all(np.all(p.grad.numpy() == 0) for p in net.parameters())
    net.clear_gradients(set_to_zero=False)
    assert all(p.grad is None for p in net.parameters())


def test_apply_visits_children_then_self():
    order = []
    Net().apply(lambda layer: order.append(type(layer).__name__))
    assert order == ["Scale", "Scale", "Scale", "LayerList", "Scale", "Net"]


def test_to_casts_floating_parameters_and_buffers():
    s = Scale()
    s.register_buffer("count", rt.to_tensor([3]))
    assert s.to(dtype="float64") is s
    assert s.w.dtype == rt.float64 and s.calls.dtype == rt.float64 and s.count.dtype == rt.int64
    assert s.float().w.dtype == rt.float32
    assert s.to(device="cpu").w.place == "cpu"


def test_deepcopy_gives_independent_parameters():
    s = Scale()
    t = copy.deepcopy(s)
    assert isinstance(t.w, Parameter) and t.w is not s.w and t.w.name == s.w.name + "_deepcopy"
    t.w.set_value(np.zeros(3, "float32"))
    assert np.all(s.w.numpy() == 2.0)


# ---- printing --------------------------------------------------------------------------------


def test_repr_nests_sublayers_with_extra_repr():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Dropout(0.1)))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, dtype=float32)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Dropout(p=0.1, axis=None, mode=upscale_in_train)\n"
        "  )\n"
        ")"
    )
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(negative_slope=0.2)"
    assert repr(nn.Linear(2, 3).weight).startswith("Parameter containing:\nTensor(shape=[2, 3]")


# ---- containers ------------------------------------------------------------------------------


def test_sequential_forms_indexing_and_slicing():
    a, b, c = Scale(), Scale(), Scale()
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    assert isinstance(seq[1:], nn.Sequential) and list(seq[1:]) == [b, c]
    named = nn.Sequential(("x", a), ("y", b))
    assert named["y"] is b and list(named.state_dict())[0] == "x.w"
    assert list(nn.Sequential(OrderedDict(p=a, q=b))._sub_layers) == ["p", "q"]
    seq[1] = c
    assert seq[1] is c
    del seq[0]
    assert len(seq) == 2
    with pytest.raises(IndexError, match="out of range"):
        seq[5]
    out = nn.Sequential(Scale(), Scale())(rt.ones([3]))
    np.testing.assert_allclose(out.numpy(), np.full(3, 4.0))


def test_layer_list_operations():
    layers = nn.LayerList([Scale()])
    x = Scale()
    layers.append(x)
    layers.extend([Scale()])
    layers.insert(0, Scale())
    assert len(layers) == 4 and layers[2] is x and list(layers._sub_layers) == ["0", "1", "2", "3"]
    assert isinstance(layers[1:3], nn.LayerList) and layers[1:3][1] is x
    del layers[0]
    assert layers[1] is x and list(layers._sub_layers) == ["0", "1", "2"]
    layers[-1] = x
    assert layers[2] is x and len(list(iter(layers))) == 3
    assert len(layers.parameters()) == 4  # x appears twice, counted once


def test_layer_dict_operations():
    d = nn.LayerDict({"a": Scale(), "b": Scale()})
    d["c"] = Scale()
    assert list(d) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert list(d.keys()) == ["a", "b", "c"] and len(list(d.values())) == 3
    popped = d.pop("a")
    assert isinstance(popped, Scale) and "a" not in d
    d.update([("z", Scale())])
    assert list(d.state_dict())[0] == "b.w" and list(d)[-1] == "z"
    with pytest.raises(ValueError, match="pair"):
        d.update([Scale()])
    d.clear()
    assert len(d) == 0


def test_parameter_list_and_dict():
    ps = nn.ParameterList([rt.nn.create_parameter([2], "float32") for _ in range(2)])
    ps.append(rt.nn.create_parameter([3], "float32"))
    assert len(ps) == 3 and ps[-1].shape == [3] and list(ps.state_dict()) == ["0", "1", "2"]
    pd = nn.ParameterDict({"a": rt.nn.create_parameter([1], "float32")})
    assert "a" in pd and pd["a"].shape == [1] and len(pd.parameters()) == 1


# ---- parameters and initializers -------------------------------------------------------------


def test_parameter_and_create_parameter_defaults():
    w = rt.nn.create_parameter([40, 60], "float32")
    limit = math.sqrt(6 / 100)
    assert w.persistable and not w.stop_gradient and w.name
    assert np.abs(w.numpy()).max() <= limit and np.abs(w.numpy()).max() > 0.8 * limit
    b = rt.nn.create_parameter([5], "float32", is_bias=True)
    assert np.all(b.numpy() == 0)
    w.trainable = False
    assert w.stop_gradient


def _stats(init, shape):
    a = init._array(shape, "float64")
    return np.asarray(a)


@pytest.mark.parametrize(
    "init, shape, mean, std",
    [
        (I.Normal(1.0, 0.5), (200, 100), 1.0, 0.5),
        (I.XavierNormal(), (200, 100), 0.0, math.sqrt(2 / 300)),
        (I.XavierUniform(), (200, 100), 0.0, math.sqrt(6 / 300) / math.sqrt(3)),
        (I.KaimingNormal(), (64, 8, 3, 3), 0.0, math.sqrt(2 / 72)),
        (I.KaimingUniform(), (64, 8, 3, 3), 0.0, math.sqrt(6 / 72) / math.sqrt(3)),
        (I.Uniform(-2.0, 4.0), (200, 100), 1.0, 6 / math.sqrt(12)),
        (I.XavierNormal(fan_in=10, fan_out=40, gain=2.0), (200, 100), 0.0, 2 * math.sqrt(2 / 50)),
        (
            I.KaimingNormal(nonlinearity="leaky_relu", negative_slope=0.2),
            (300, 50),
            0.0,
            math.sqrt(2 / 1.04) / math.sqrt(300),
        ),
    ],
)
def test_random_initializer_statistics(init, shape, mean, std):
    a = _stats(init, shape)
    assert a.shape == shape
    assert abs(a.mean() - mean) < 0.05 * max(std, 0.1)
    assert abs(a.std() - std) < 0.03 * std


def test_truncated_normal_assign_constant_orthogonal():
    t = _stats(I.TruncatedNormal(0.0, 0.02), (100, 100))
    assert np.abs(t).max() <= 0.04 + 1e-12 and abs(t.std() - 0.02 * 0.88) < 0.001
    np.testing.assert_array_equal(
        _stats(I.Assign(np.arange(6)), (2, 3)), np.arange(6.0).reshape(2, 3)
    )
    np.testing.assert_array_equal(_stats(I.Assign(rt.to_tensor([1.0, 2.0])), (2,)), [1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        _stats(I.Assign([1.0, 2.0, 3.0]), (2,))
    np.testing.assert_array_equal(_stats(I.Constant(0.3), (2,)), [0.3, 0.3])
    q = _stats(I.Orthogonal(), (4, 6))
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-10)


def test_initializer_fills_in_place_and_seed_reproduces():
    p = rt.nn.create_parameter([3], "float32")
    assert I.Constant(1.5)(p) is p and np.all(p.numpy() == 1.5)
    rt.seed(5)
    a = nn.Linear(4, 4).weight.numpy()
    rt.seed(5)
    np.testing.assert_array_equal(nn.Linear(4, 4).weight.numpy(), a)


def test_global_initializer_overrides_layer_defaults_but_not_param_attr():
    I.set_global_initializer(I.Constant(0.7), I.Constant(0.2))
    try:
        lin = nn.Linear(2, 2)
        assert np.all(lin.weight.numpy() == np.float32(0.7))
        assert np.all(lin.bias.numpy() == np.float32(0.2))
        lin2 = nn.Linear(2, 2, weight_attr=ParamAttr(initializer=I.Constant(1.0)))
        assert np.all(lin2.weight.numpy() == 1.0)
    finally:
        I.set_global_initializer(None)
    assert not np.all(nn.Linear(2, 2).weight.numpy() == np.float32(0.7))


def test_calculate_gain():
    assert I.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert I.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert I.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="unknown nonlinearity"):
        I.calculate_gain("swishy")

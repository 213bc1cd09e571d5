"""to_static: decorator forms, StaticFunction inspection, the program cache and its keys,
layers (parameters, buffers, train/eval), eager fallback and input checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic.jit import StaticFunction, ToStaticError
from autostatic_runtime import nn
from autostatic_runtime.errors import StaticBuildError


class SimpleNet(nn.Layer):
    """The seed example: Linear(10, 3) plus a [3] input."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 3)

    def forward(self, x, y):
        out = self.linear(x)
        out = out + y
        return out


class MaskNet(nn.Layer):
    """The seed's buffer example: a mask tensor assigned in ``__init__``."""

    def __init__(self, mask):
        super().__init__()
        self.linear = nn.Linear(10, 3)
        self.mask = rt.to_tensor(mask, dtype="float32")
        self.register_buffer("scale", rt.to_tensor([2.0, 2.0, 2.0]))

    def forward(self, x, y):
        out = self.linear(x)
        out = out + y
        return out * self.mask * self.scale


def _specs():
    return [InputSpec(shape=[None, 10], name="x"), InputSpec(shape=[3], name="y")]


def test_seed_simple_net_runs_any_batch_size_from_one_trace():
    net = SimpleNet()
    x, y = rt.randn([4, 10]), rt.randn([3])
    expected = net(x, y).numpy()
    snet = autostatic.to_static(net, input_spec=_specs())
    assert snet is net and isinstance(net.forward, StaticFunction)
    np.testing.assert_allclose(net(x, y).numpy(), expected, rtol=1e-6)
    for batch in (1, 7, 32):
        xb = rt.randn([batch, 10])
        assert net(xb, y).shape == [batch, 3]
    assert len(net.forward.program_cache) == 1
    assert net.forward.program_cache.misses == 1
    assert net.forward.program_cache.hits == 3
    program = net.forward.concrete_program
    assert [v.name for v in program.inputs] == ["x", "y"]
    assert program.inputs[0].shape == [-1, 10]
    assert program.outputs[0].shape == [-1, 3]
    assert {p.name for p in program.parameters} == {p.name for p in net.parameters()}


def test_seed_buffers_become_persistable_variables_and_python_data_constants():
    net = MaskNet([0.0, 1.0, 1.0])
    x, y = rt.randn([2, 10]), rt.randn([3])
    expected = net(x, y).numpy()
    autostatic.to_static(net, input_spec=_specs())
    np.testing.assert_allclose(net(x, y).numpy(), expected, rtol=1e-6)
    program = net.forward.concrete_program
    block = program.main_program.global_block()
    persistable = {v.name for v in block.vars.values() if v.persistable}
    assert net.mask.name in persistable and net.scale.name in persistable
    assert any(t is net.mask for t in program.parameters)

    # a tensor made inside forward from Python data is a constant op, not a variable
    @autostatic.to_static
    def f(x):
        return x * rt.to_tensor([0.0, 1.0, 1.0])

    f(rt.ones([2, 3]))
    ops = [op.type for op in f.concrete_program.main_program.global_block().ops]
    assert "assign_value" in ops
    assert not [v for v in f.concrete_program.main_program.list_vars() if v.persistable]


def test_buffers_are_read_at_every_run():
    net = MaskNet([0.0, 1.0, 1.0])
    autostatic.to_static(net, input_spec=_specs())
    x, y = rt.ones([1, 10]), rt.zeros([3])
    first = net(x, y).numpy()
    assert first[0, 0] == 0.0
    net.mask.set_value(rt.to_tensor([1.0, 1.0, 1.0]))
    assert net(x, y).numpy()[0, 0] != 0.0
    assert net.forward.program_cache.misses == 1


def test_decorator_forms():
    def plain(x):
        return x * 2

    @autostatic.to_static
    def bare(x):
        return x * 2

    @autostatic.to_static(input_spec=[InputSpec([None], "float32")])
    def with_args(x):
        return x * 2

    x = rt.to_tensor([1.0, 2.0])
    for f in (autostatic.to_static(plain), bare, with_args):
        assert isinstance(f, StaticFunction)
        np.testing.assert_allclose(f(x).numpy(), [2.0, 4.0])
    assert bare.__name__ == "bare"
    assert autostatic.to_static(bare) is bare


def test_to_static_on_methods_and_bound_methods():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        @autostatic.to_static
        def forward(self, x):
            return self.fc(x)

        def helper(self, x):
            return self.fc(x) + 1

    a, b = Net(), Net()
    x = rt.randn([4, 3])
    assert a.forward is a.forward  # one bound StaticFunction (one cache) per instance
    ya, yb = a(x), b(x)
    assert not np.allclose(ya.numpy(), yb.numpy())  # each instance has its own parameters
    np.testing.assert_allclose(ya.numpy(), a.forward.dygraph_function(x).numpy(), rtol=1e-6)
    assert len(a.forward.program_cache) == 1 and len(b.forward.program_cache) == 1
    h = autostatic.to_static(a.helper)
    np.testing.assert_allclose(h(x).numpy(), a.helper(x).numpy(), rtol=1e-6)


def test_code_shows_the_converted_source():
    @autostatic.to_static
    def f(x):
        if rt.mean(x) > 0:
            y = x + 1
        else:
            y = x - 1
        return y

    assert "convert_ifelse" in f.code
    f(rt.ones([2]))
    assert "cond" in [op.type for op in f.concrete_program.main_program.global_block().ops]


def test_get_concrete_program_traces_from_specs_without_data():
    calls = []

    @autostatic.to_static
    def f(x, y):
        calls.append(1)
        return rt.matmul(x, y)

    program = f.get_concrete_program(InputSpec([None, 4], name="a"), InputSpec([4, 2]))
    assert len(calls) == 1
    assert program.outputs[0].shape == [-1, 2]
    assert [v.name for v in program.inputs] == ["a", "y"]
    assert f.get_concrete_program(InputSpec([None, 4], name="a"), InputSpec([4, 2])) is program
    assert len(calls) == 1
    assert f.concrete_program is program


def test_concrete_program_before_any_trace_is_a_clear_error():
    @autostatic.to_static
    def f(x):
        return x

    with pytest.raises(ToStaticError, match="not been traced yet"):
        _ = f.concrete_program


def test_rollback_restores_the_eager_forward():
    net = SimpleNet()
    autostatic.to_static(net)
    x, y = rt.randn([2, 10]), rt.randn([3])
    net(x, y)
    original = net.forward.rollback()
    assert not isinstance(net.forward, StaticFunction)
    np.testing.assert_allclose(original(x, y).numpy(), net(x, y).numpy())

    def f(x):
        return x

    assert autostatic.to_static(f).rollback() is f


# ---- cache keys: retrace exactly when the key changes -----------------------------------------


def _counting():
    traces = []

    @autostatic.to_static
    def f(x, k=1, flag=None):
        traces.append(1)  # Python side effects run only while tracing
        return x * k

    return f, traces


def test_cache_key_shapes_and_dtypes_without_input_spec():
    f, traces = _counting()
    f(rt.ones([2, 3]))
    f(rt.ones([2, 3]) * 5)
    assert len(traces) == 1
    f(rt.ones([4, 3]))  # new shape: retrace
    assert len(traces) == 2
    f(rt.ones([2, 3], dtype="float64"))  # new dtype: retrace
    assert len(traces) == 3
    f(rt.ones([4, 3]))
    assert len(traces) == 3
    assert f.program_cache.misses == 3 and f.program_cache.hits == 2 and len(f.program_cache) == 3


def test_cache_key_python_values_by_value():
    f, traces = _counting()
    x = rt.ones([2])
    np.testing.assert_allclose(f(x, 2).numpy(), [2.0, 2.0])
    np.testing.assert_allclose(f(x, 2).numpy(), [2.0, 2.0])
    assert len(traces) == 1
    np.testing.assert_allclose(f(x, 3).numpy(), [3.0, 3.0])
    assert len(traces) == 2
    f(x, 2.0)  # 2.0 is not 2: its own program (the dtype of the result may differ)
    assert len(traces) == 3
    f(x, 3, flag=("a", 1))
    f(x, 3, flag=("a", 1))
    assert len(traces) == 4


def test_equal_calls_share_a_program_however_their_arguments_are_passed():
    # a keyword for a positional parameter, or a default passed explicitly, is the same call
    # (Paddle's FunctionSpec unifies them); each of these traced a program of its own before
    f, traces = _counting()
    x = rt.ones([2])
    f(x)
    for args, kwargs in [((x, 1), {}), ((x, 1, None), {}), ((x,), {"k": 1}), ((), {"x": x})]:
        np.testing.assert_allclose(f(*args, **kwargs).numpy(), [1.0, 1.0])
    assert len(traces) == 1 and len(f.program_cache) == 1
    f(x, k=3)
    assert f(x, 3).numpy().tolist() == [3.0, 3.0] and len(traces) == 2
    assert f.program_cache.last() is f.program_cache.concrete_programs()[1]
    f(x)  # the program run last is the cache's last (Paddle's program_cache.last())
    assert f.program_cache.last() is f.program_cache.concrete_programs()[0]
    assert f.concrete_program is f.program_cache.last()


def test_calls_the_function_does_not_take_are_errors_of_both_kinds_paddle_raises():
    f, _ = _counting()
    with pytest.raises(ToStaticError, match="unexpected keyword argument 'other'") as err:
        f(rt.ones([2]), other=2)
    assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError)
    g = autostatic.to_static(lambda x, y: x + y, input_spec=[InputSpec([2])] * 3)
    with pytest.raises(ValueError, match="input_spec has 3 entries but the call passes 2"):
        g(rt.ones([2]), rt.ones([2]))


def test_inputs_outputs_and_programs_of_functions_without_arguments(tmp_path):
    class Counter(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = rt.to_tensor([1])

        @autostatic.to_static
        def forward(self):
            self.a = self.a + 1
            return self.a

    net = Counter()
    assert net().numpy().tolist() == [2]
    assert net.forward.inputs == [] and len(net.forward.outputs) == 1
    autostatic.save(net, str(tmp_path / "counter"))  # 'the input shapes are unknown' before
    spec = autostatic.to_static(
        lambda d: d["x"] + d["y"], input_spec=[{"x": InputSpec([2]), "y": InputSpec([2])}]
    )
    assert [v.name for v in spec.inputs] == ["x", "y"]  # Paddle names dict entries by key


def test_shapes_of_program_variables_equal_tuples_and_eager_only_methods_are_clear_errors():
    g = autostatic.to_static(lambda x: x + 1, input_spec=[InputSpec([None, 4], "float32", "x")])
    shape = g.get_concrete_program().inputs[0].shape
    assert shape == (-1, 4) and shape == [-1, 4] and shape != (4, -1)  # Paddle's: a tuple
    assert shape + [2] == [-1, 4, 2] and str(shape) == "[-1, 4]"

    def clears(x):
        y = x * 2
        y.clear_gradient()  # an eager tensor's method: Paddle raises AssertionError
        return y

    with pytest.raises(AssertionError, match=r"clear_gradient\(\) of .* eager tensors only"):
        autostatic.to_static(clears)(rt.ones([2]))
    with pytest.raises(StaticBuildError, match=r"gradient\(\) of"):
        autostatic.to_static(lambda x: (x * 2).gradient())(rt.ones([2]))


def test_cache_key_unhashable_values_by_identity_with_a_warning():
    f, traces = _counting()
    x = rt.ones([2])

    class Opaque:
        __hash__ = None

    o = Opaque()
    with pytest.warns(UserWarning, match="unhashable"):
        f(x, 1, flag=o)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x, 1, flag=o)  # same object: a hit, no warning
    assert len(traces) == 1
    with pytest.warns(UserWarning, match="retraces"):
        f(x, 1, flag=Opaque())
    assert len(traces) == 2


def test_cache_key_nested_structures_of_tensors():
    traces = []

    @autostatic.to_static
    def f(pair, d):
        traces.append(1)
        return pair[0] + pair[1] * d["w"]

    a, b, w = rt.ones([2]), rt.ones([2]) * 2, rt.ones([2]) * 3
    np.testing.assert_allclose(f([a, b], {"w": w}).numpy(), [7.0, 7.0])
    np.testing.assert_allclose(f([b, a], {"w": w}).numpy(), [5.0, 5.0])
    assert len(traces) == 1
    f((a, b), {"w": w})  # a tuple, not a list: another structure
    assert len(traces) == 2
    assert len(f.concrete_program.inputs) == 3


def test_cache_key_training_flag_and_dropout_behaviour():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)
            self.traces = 0

        def forward(self, x):
            self.traces += 1
            return self.drop(x)

    net = autostatic.to_static(Net())
    x = rt.ones([200])
    out = net(x).numpy()
    assert (out == 0).any() and np.allclose(out[out != 0], 2.0)
    net.eval()
    np.testing.assert_allclose(net(x).numpy(), np.ones(200))
    assert net.traces == 2
    net.train()
    net(x)
    net.eval()
    net(x)
    assert net.traces == 2 and net.forward.program_cache.hits == 2


def test_a_tensor_that_does_not_fit_its_input_spec_is_traced_with_its_own_shape():
    """Paddle's rule (its test_grid_generator passes a [1, 20, 2] tensor for an InputSpec
    [None, 3, 32, 100]): the tensor's own shape and dtype, with a warning at the call."""
    from autostatic.jit.program_cache import InputSpecWarning

    f = autostatic.to_static(lambda x: x + 1, input_spec=[InputSpec([None, 3], "float32", "x")])
    f(rt.ones([5, 3]))
    for x, problem in ((rt.ones([3]), "is 1-D"), (rt.ones([2, 4]), "has 4 in dimension 1")):
        with pytest.warns(InputSpecWarning, match=problem) as caught:
            np.testing.assert_array_equal(f(x).numpy(), x.numpy() + 1)
        assert caught[0].filename == __file__
        assert f.program_cache.last().inputs[0].shape == list(x.shape)
    assert len(f.program_cache) == 3
    with pytest.raises(ToStaticError, match="input_spec entries must be InputSpec"):
        autostatic.to_static(lambda x: x, input_spec=["nope"])


def test_an_argument_of_another_dtype_than_its_input_spec_is_traced_with_its_own():
    # Paddle's rule: InputSpec([None, 4, 4]) declares float32 by default, and an int64 tensor
    # passed for it is traced as int64 (the spec's shape kept); a ToStaticError before
    def halves(x):
        return x[::2], x[::-2] * 2

    f = autostatic.to_static(halves, input_spec=[InputSpec([None, 4, 4])])
    x = rt.to_tensor(np.arange(48).reshape(3, 4, 4))
    for want, got in zip(halves(x), f(x)):
        assert got.dtype == want.dtype == rt.int64
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    (program,) = f.program_cache.concrete_programs()
    assert program.inputs[0].shape == [-1, 4, 4] and program.inputs[0].dtype == rt.int64
    assert f(rt.ones([5, 4, 4]))[0].dtype == rt.float32 and len(f.program_cache) == 2


def test_enable_to_static_false_runs_eagerly():
    f, traces = _counting()
    autostatic.enable_to_static(False)
    try:
        np.testing.assert_allclose(f(rt.ones([2]), 3).numpy(), [3.0, 3.0])
        assert len(traces) == 1 and len(f.program_cache) == 0  # ran the Python body
    finally:
        autostatic.enable_to_static(True)
    f(rt.ones([2]), 3)
    assert len(f.program_cache) == 1


def test_full_graph_false_falls_back_to_eager_with_the_reason():
    def one_branch(x):
        if x.sum() > 0:
            y = x * 2
        return y

    strict = autostatic.to_static(one_branch)
    with pytest.raises(rt.AutostaticError, match="only one branch"):
        strict(rt.ones([2]))
    lenient = autostatic.to_static(one_branch, full_graph=False)
    with pytest.warns(UserWarning, match=r"runs eagerly because .*only one branch"):
        out = lenient(rt.ones([2]))
    np.testing.assert_allclose(out.numpy(), [2.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # decided once per key
        np.testing.assert_allclose(lenient(rt.ones([2]) * 3).numpy(), [6.0, 6.0])


def test_nested_tensor_if_inside_a_tensor_while():
    def f(x, n):
        i = rt.zeros([], dtype="int64")
        while i < n:
            if rt.mean(x) > 10.0:
                x = x - 3.0
            else:
                if rt.max(x) > 4.0:
                    x = x * 1.5
                else:
                    x = x + 2.0
            i = i + 1
        return x

    sf = autostatic.to_static(f)
    for n in (0, 1, 5, 9):
        x = rt.to_tensor([1.0, -2.0, 3.0])
        nt = rt.to_tensor(n, dtype="int64")
        np.testing.assert_allclose(sf(x, nt).numpy(), f(x, nt).numpy(), rtol=1e-6)
    assert len(sf.program_cache) == 1
    types = [op.type for op in sf.concrete_program.main_program.global_block().ops]
    assert "while" in types


def test_static_function_called_while_tracing_is_inlined():
    @autostatic.to_static
    def inner(x):
        return x * 3

    @autostatic.to_static
    def outer(x):
        return inner(x) + 1

    np.testing.assert_allclose(outer(rt.ones([2])).numpy(), [4.0, 4.0])
    assert len(inner.program_cache) == 0
    assert "run_program" not in str(outer.concrete_program.main_program)


def test_nested_outputs_and_python_constants():
    @autostatic.to_static
    def f(x):
        return {"double": x * 2, "pair": (x + 1, 7)}

    out = f(rt.ones([2]))
    np.testing.assert_allclose(out["double"].numpy(), [2.0, 2.0])
    np.testing.assert_allclose(out["pair"][0].numpy(), [2.0, 2.0])
    assert out["pair"][1] == 7


def test_numpy_arrays_are_tensor_inputs():
    f = autostatic.to_static(lambda x: x + 1)
    np.testing.assert_allclose(f(np.ones(3, "float32")).numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(f(np.zeros(3, "float32")).numpy(), [1.0, 1.0, 1.0])
    assert len(f.program_cache) == 1


def test_rollback_of_a_decorated_forward_and_to_static_of_such_a_layer():
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        @autostatic.to_static
        def forward(self, x):
            return self.fc(x)

    net = Net()
    x = rt.ones([1, 2])
    y = net(x)
    assert len(net.forward.program_cache) == 1
    eager = net.forward.rollback()
    assert not isinstance(net.forward, StaticFunction)
    np.testing.assert_allclose(net(x).numpy(), y.numpy())
    np.testing.assert_allclose(eager(x).numpy(), y.numpy())
    other = autostatic.to_static(Net(), input_spec=[InputSpec.from_tensor(x)])
    assert isinstance(other.forward, StaticFunction)
    assert other.forward.input_spec == [InputSpec([1, 2], "float32", "x")]  # named as Paddle
    other(x)
    from autostatic.jit.program_cache import InputSpecWarning

    with pytest.warns(InputSpecWarning, match="has 3 in dimension 0"):  # (the spec is used)
        other(rt.ones([3, 2]))


def test_a_layer_argument_is_keyed_by_identity_and_mode():
    traces = []

    @autostatic.to_static
    def apply(layer, x):
        traces.append(1)
        return layer(x)

    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    x = rt.ones([1, 2])
    np.testing.assert_allclose(apply(a, x).numpy(), a(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(apply(b, x).numpy(), b(x).numpy(), rtol=1e-6)
    apply(a, x)
    assert len(traces) == 2
    a.eval()
    apply(a, x)
    assert len(traces) == 3


def test_sublayers_methods_and_helpers_are_converted_through_convert_call():
    def clip_high(h):
        if rt.max(h) > 1.0:
            h = h / rt.max(h)
        return h

    class Block(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if rt.mean(h) > 0:
                h = h * 2.0
            return self.post(h)

        def post(self, h):
            return clip_high(h)

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([Block(), Block()])

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    net = Net()
    x = rt.randn([3, 4])
    want = net(x).numpy()
    autostatic.to_static(net)
    np.testing.assert_allclose(net(x).numpy(), want, rtol=1e-5)
    for sign in (-1.0, 5.0):
        xs = x * sign
        np.testing.assert_allclose(
            net(xs).numpy(), net.forward.dygraph_function(xs).numpy(), rtol=1e-5
        )
    text = str(net.forward.concrete_program.main_program)
    assert text.count("= cond[") == 4  # two blocks, each with two tensor ifs
    assert len(net.forward.program_cache) == 1


def test_methods_of_unhashable_objects_keep_one_cache_per_instance():
    class Model:
        __hash__ = None  # defines __eq__ semantics elsewhere; not usable as a dict key

        def __init__(self, k):
            self.k = k

        @autostatic.to_static
        def run(self, x):
            return x * self.k

    m = Model(3.0)
    x = rt.ones([2])
    np.testing.assert_allclose(m.run(x).numpy(), [3.0, 3.0])
    m.run(x)
    assert m.run is m.run and m.run.program_cache.hits == 1


def test_deepcopy_of_a_converted_layer_gets_its_own_program_cache():
    import copy

    net = autostatic.to_static(SimpleNet(), input_spec=_specs())
    x, y = rt.randn([2, 10]), rt.randn([3])
    net(x, y)
    twin = copy.deepcopy(net)
    assert isinstance(twin.forward, StaticFunction) and twin.forward._instance is twin
    assert len(twin.forward.program_cache) == 0
    twin.linear.weight.set_value(rt.zeros([10, 3]))
    np.testing.assert_allclose(twin(x, y).numpy(), np.broadcast_to(
        twin.linear.bias.numpy() + y.numpy(), (2, 3)), rtol=1e-6)  # fmt: skip
    assert not np.allclose(net(x, y).numpy(), twin(x, y).numpy())


def test_deepcopy_as_paddle_class_instance_rollback_and_functions():
    """Paddle's test_deepcopy: the copy's ``forward.class_instance`` is the copy, it rolls back
    on its own, an inner layer's ``forward`` stays a bound method of the copied inner layer,
    and a converted function's deep copy is the function itself."""
    import copy
    import types

    class Inner(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)

    class Outer(nn.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return rt.tanh(self.inner(x)) if x.mean() > 0 else self.inner(x) * 2

    net = autostatic.to_static(Outer())
    x = rt.randn([3, 4])
    want = net(x)
    twin = copy.deepcopy(net)
    assert net.forward.class_instance is net and twin.forward.class_instance is twin
    assert isinstance(twin.inner.forward, types.MethodType)
    assert twin.inner.forward.__self__ is twin.inner is not net.inner
    np.testing.assert_array_equal(twin(x).numpy(), want.numpy())
    twin.forward.rollback()
    assert not isinstance(twin.forward, StaticFunction)
    np.testing.assert_array_equal(twin(x).numpy(), want.numpy())
    assert isinstance(net.forward, StaticFunction)

    def double(v):
        return v * 2

    converted = autostatic.to_static(double)
    assert converted.class_instance is None and copy.deepcopy(converted) is double


def test_instances_with_decorated_methods_are_freed():
    import gc
    import weakref

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        @autostatic.to_static
        def forward(self, x):
            return self.fc(x)

    net = Net()
    net(rt.ones([1, 2]))
    ref = weakref.ref(net)
    del net
    gc.collect()
    assert ref() is None


def test_partials_and_callable_objects():
    import functools

    def scale(x, k):
        if rt.mean(x) > 0:
            return x * k
        return x

    class Shift:
        def __call__(self, x):
            if rt.mean(x) > 0:
                x = x + 1
            return x

    p = autostatic.to_static(functools.partial(scale, k=3.0))
    c = autostatic.to_static(Shift())
    x = rt.ones([2])
    np.testing.assert_allclose(p(x).numpy(), [3.0, 3.0])
    np.testing.assert_allclose(c(x).numpy(), [2.0, 2.0])
    np.testing.assert_allclose(c(-x).numpy(), [-1.0, -1.0])
    assert "cond" in str(c.concrete_program.main_program)
    assert p.__name__ == "partial" and repr(c).startswith("<StaticFunction Shift")


def test_an_argument_changed_in_place_keeps_its_feed():
    def fill(t, n):
        for k in range(n):
            t[k] = k * 3  # moves the Python object `t` to the new value, not the input
        return t + 1

    sf = autostatic.to_static(fill)
    got = sf(rt.zeros([4], "int32"), 3)
    np.testing.assert_array_equal(got.numpy(), [1, 4, 7, 1])
    np.testing.assert_array_equal(sf(rt.ones([4], "int32"), 3).numpy(), [1, 4, 7, 2])


def test_duplicate_outputs_and_a_one_dim_input_to_linear_backward():
    """Paddle's test_duplicate_output: ``forward`` returns ``x, x`` of a Linear fed a 1-D
    tensor (data: no gradient of its own); the backward of one output reaches the weight
    (the matmul gradient squeezed a missing input gradient before)."""

    class Twice(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1, 1)

        def forward(self, x):
            x = self.fc(x)
            return x, x

    net = autostatic.to_static(Twice())
    first, second = net(rt.to_tensor([1.0]))
    first.backward()
    assert net.fc.weight.grad.numpy().item() == 1.0
    np.testing.assert_array_equal(first.numpy(), second.numpy())

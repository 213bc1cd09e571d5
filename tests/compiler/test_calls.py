"""convert_call: helpers, methods, sublayers and callable objects are converted while tracing."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic.callables import convert_callable
from autostatic_runtime import nn, static
from tests.compiler.test_symbolic_path import eager, op_types, run, trace


def add_two(x, y):
    if rt.mean(x) > 0:  # tensor-dependent: must become a cond op inside the helper
        out = x + y
    else:
        out = x - y
    return out


class SimpleNet(nn.Layer):
    """The seed's example: forward calls a method and a plain function."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 3)

    def forward(self, x, y):
        out = self.my_fc(x)
        out = add_two(out, y)
        return out

    def my_fc(self, x):
        out = self.linear(x)
        return out


class Gate(nn.Layer):
    def forward(self, x):
        if rt.sum(x) > 0:
            return_value = x * 2
        else:
            return_value = -x
        return return_value


class Outer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.layers = nn.LayerList([Gate(), Gate()])

    def forward(self, x):
        x = self.gate(x)
        for layer in self.layers:
            x = layer(x)
        return x


def test_seed_simple_net_converts_methods_and_functions():
    rt.seed(0)
    net = SimpleNet()
    x = np.random.default_rng(0).normal(size=(2, 10)).astype("float32")
    y = np.ones(3, "float32")
    main, outs = trace(net.forward, x, y)
    assert "cond" in op_types(main)  # add_two's if became an op through convert_call
    (got,) = run(main, outs, x, y)
    np.testing.assert_allclose(got, eager(net.forward, x, y)[0], rtol=1e-5, atol=1e-6)
    code = autostatic.to_code(net.forward)
    assert "convert_call(self.my_fc)(x)" in code
    assert "convert_call(add_two)(out, y)" in code


def test_sublayers_and_layer_lists_are_converted():
    net = Outer()
    x = np.array([[1.0, -3.0], [0.5, 0.25]], "float32")
    main, outs = trace(net.forward, x)
    conds = [op for op in main.global_block().ops if op.type == "cond"]
    assert len(conds) == 3
    (got,) = run(main, outs, x)
    np.testing.assert_allclose(got, eager(net.forward, x)[0])


def test_hooks_still_run_around_a_converted_forward():
    net = Gate()
    seen = []
    net.register_forward_pre_hook(lambda layer, inputs: seen.append("pre"))
    net.register_forward_post_hook(lambda layer, inputs, out: out + 1)
    x = np.array([1.0, 2.0], "float32")
    main, outs = trace(lambda v: net(v), x)
    assert seen == ["pre"]
    (got,) = run(main, outs, x)
    np.testing.assert_allclose(got, [3.0, 5.0])


def test_libraries_builtins_and_classes_are_not_converted():
    for fn in (math.sqrt, np.mean, rt.relu, functools.reduce, SimpleNet, abs, sorted):
        assert convert_callable(fn) is fn
    # builtins the converter gives forms of their own: the same on Python values
    assert convert_callable(len)([1, 2]) == 2 and convert_callable(int)("7") == 7
    assert list(convert_callable(range)(1, 4)) == [1, 2, 3]
    part = functools.partial(add_two, y=1)
    assert convert_callable(part) is part


def test_user_functions_are_converted_once_and_cached():
    first = convert_callable(add_two)
    assert first is not add_two and first.__autostatic_original__ is add_two
    assert convert_callable(add_two) is first
    assert convert_callable(first) is first  # already converted


def test_not_to_static_and_sourceless_functions_run_as_they_are():
    @autostatic.not_to_static
    def keep(x):
        return x

    made = eval("lambda x: x + 1")  # no source to convert: still callable, unconverted
    assert convert_callable(keep) is keep
    assert convert_callable(made) is made
    assert convert_callable(made)(1) == 2


def test_callable_objects_are_converted():
    class Scale:
        def __call__(self, x):
            if rt.mean(x) > 0:
                y = x * 3
            else:
                y = x
            return y

    obj = Scale()
    x = np.array([1.0, 2.0], "float32")
    main, outs = trace(lambda v: obj(v), x)
    assert "cond" in op_types(main)
    np.testing.assert_allclose(run(main, outs, x)[0], [3.0, 6.0])


def test_frame_dependent_builtins_are_called_directly():
    class Base:
        def value(self):
            return 1

    class Child(Base):
        def value(self):
            return super().value() + len(locals())

    rt.enable_static()
    try:
        with static.program_guard(static.Program()):
            assert autostatic.convert(Child().value)() == Child().value()
    finally:
        rt.disable_static()


class _AddsOne(nn.Layer):
    def add_one(self, x):
        return x + 1


class _SuperInBranches(_AddsOne):
    def forward(self, x):
        if rt.mean(x) > 0:  # the branch functions' first parameter is not self
            return super().add_one(x)
        while rt.mean(x) < -1:
            x = super().add_one(x)
        return x


def test_zero_argument_super_inside_tensor_branches_and_loops():
    """Paddle's test_capture_free_vars: ``super()`` in a tensor ``if`` (and loop) of a
    method reads the method's class and first parameter, not the branch function's."""
    layer = _SuperInBranches()
    converted = autostatic.to_static(layer)
    for x in ([1.0, 2.0], [-3.0, -4.0], [-0.5, -0.5]):
        x = rt.to_tensor(x)
        np.testing.assert_array_equal(converted(x).numpy(), layer(x).numpy())

    def not_a_method(x):  # no class: Python's RuntimeError stays
        if rt.mean(x) > 0:
            return super().add_one(x)
        return x

    with pytest.raises(RuntimeError, match="__class__ cell not found"):
        autostatic.to_static(not_a_method)(rt.ones([2]))


def test_generated_calls_report_the_statement_line():
    def f(x):
        if rt.mean(x) > 0:
            out = x + 1
        else:
            out = x - 1
        return out

    main, _ = trace(f, np.ones(2, "float32"))
    (cond,) = [op for op in main.global_block().ops if op.type == "cond"]
    assert cond.location[1] == f.__code__.co_firstlineno + 1


def test_converted_helpers_are_freed_with_their_function():
    import gc
    import weakref

    def make():
        def inner(x):
            return x + 1

        return inner

    fn = make()
    convert_callable(fn)
    ref = weakref.ref(fn)
    del fn
    gc.collect()
    assert ref() is None


def digits_through(fn, count, x):
    total = rt.zeros([], "int32")
    for k in fn(x.shape[0]):  # fn = range, passed in: a symbolic range too
        total = total * 10 + x[k]
    return total, count(x)


def test_builtins_called_through_another_name_take_their_converted_forms():
    from autostatic import InputSpec

    x = np.array([3, 1, 4], "int32")
    want = digits_through(range, len, rt.to_tensor(x))
    sf = autostatic.to_static(digits_through, input_spec=[None, None, InputSpec([None], "int32")])
    total, n = sf(range, len, rt.to_tensor(x))
    assert total.dtype == want[0].dtype and int(total) == int(want[0]) == 314
    assert int(n) == want[1] == 3

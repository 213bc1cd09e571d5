"""The static IR: building, printing, serialization, clone, and the Executor's contract."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import ExecutionError, ProgramFormatError, StaticBuildError
from autostatic_runtime.static import framework_pb2 as pb


def build(fn, *specs):
    """Build ``fn`` over data vars of ``specs`` [(name, shape, dtype)] in a new program."""
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, startup):
            args = [static.data(n, s, d) for n, s, d in specs]
            out = fn(*args)
    finally:
        rt.disable_static()
    return main, startup, out


def nested_control_flow(x):
    def body(i, v):
        v = static.nn.cond(rt.mean(v) > 0, lambda: v * 0.5, lambda: v + 1.0)
        return i + 1, v

    _, v = static.nn.while_loop(lambda i, v: i < 3, body, [rt.full([], 0, "int64"), x])
    return static.nn.cond(
        rt.sum(v) > 1, lambda: {"a": v, "b": (v * 2, v - 1)}, lambda: {"a": v * 3, "b": (v, v)}
    )


def test_program_structure_and_ops():
    main, _, out = build(lambda x: rt.relu(x) + 1, ("x", [None, 3], "float32"))
    block = main.global_block()
    assert [op.type for op in block.ops] == ["relu", "elementwise_add"]
    op = block.ops[0]
    assert op.inputs[0].name == "x" and op.outputs[0] is block.ops[1].inputs[0]
    assert out.shape == [-1, 3] and out.dtype == rt.float32
    assert op.location[0] == __file__
    assert main.blocks == [block] and main.num_blocks == 1


def test_printer_shows_types_attrs_blocks_and_lines():
    main, _, _ = build(nested_control_flow, ("x", [2, 3], "float32"))
    text = str(main)
    assert text.startswith("{ program (x:f32[2,3]) .")
    assert "= while[" in text and "= cond[" in text
    assert "{ block" in text and "test_program.py:" in text
    assert "f32[2,3]" in text and "i64[]" in text


def test_serialization_round_trips_nested_control_flow():
    main, _, out = build(nested_control_flow, ("x", [2, 3], "float32"))
    data = main.serialize()
    again = static.Program.parse(data)
    assert again.serialize() == data
    assert again.to_string() == main.to_string()
    for b1, b2 in zip(main.blocks, again.blocks):
        assert b1.parent_idx == b2.parent_idx
        assert [o.type for o in b1.ops] == [o.type for o in b2.ops]
        for o1, o2 in zip(b1.ops, b2.ops):
            assert o1.input_names() == o2.input_names()
            assert o1.output_names() == o2.output_names()
            assert set(o1.attrs) == set(o2.attrs)
            assert o1.location == o2.location
        assert {n: (v.shape, v.dtype, v.persistable) for n, v in b1.vars.items()} == {
            n: (v.shape, v.dtype, v.persistable) for n, v in b2.vars.items()
        }
    x = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    fetch = [out["a"].name, out["b"][0].name]
    exe = static.Executor()
    np.testing.assert_allclose(
        exe.run(main, {"x": x}, fetch)[0], exe.run(again, {"x": x}, fetch)[0]
    )


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d[: len(d) // 2], "truncated or corrupt|not an autostatic program"),
        (lambda d: b"\xff\xff\xff" + d, "truncated or corrupt"),
        (lambda d: b"", "not an autostatic program"),
    ],
)
def test_parse_rejects_broken_bytes(mutate, message):
    main, _, _ = build(nested_control_flow, ("x", [2, 3], "float32"))
    with pytest.raises(ProgramFormatError, match=message):
        static.Program.parse(mutate(main.serialize()))


def _desc(main):
    d = pb.ProgramDesc()
    d.ParseFromString(main.serialize())
    return d


def test_parse_rejects_wrong_magic_newer_version_unknown_op_and_missing_var():
    main, _, _ = build(lambda x: rt.exp(x), ("x", [2], "float32"))
    d = _desc(main)
    d.magic = "something else"
    with pytest.raises(ProgramFormatError, match="not an autostatic program"):
        static.Program.parse(d.SerializeToString())
    d = _desc(main)
    d.version = 99
    with pytest.raises(ProgramFormatError, match="newer than this"):
        static.Program.parse(d.SerializeToString())
    d = _desc(main)
    d.blocks[0].ops[0].type = "rm_rf"
    with pytest.raises(ProgramFormatError, match="unknown op 'rm_rf'"):
        static.Program.parse(d.SerializeToString())
    d = _desc(main)
    d.blocks[0].ops[0].inputs[0].var = "ghost"
    with pytest.raises(ProgramFormatError, match="'ghost'"):
        static.Program.parse(d.SerializeToString())
    with pytest.raises(ProgramFormatError, match="expected bytes"):
        static.Program.parse("text")


def test_clone_for_test_drops_backward_and_optimizer_ops():
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    with static.program_guard(main, startup):
        x = static.data("x", [4, 3], "float32")
        net = rt.nn.Sequential(rt.nn.Linear(3, 4), rt.nn.Dropout(0.5), rt.nn.Linear(4, 1))
        loss = rt.mean(net(x))
        rt.optimizer.SGD(0.1).minimize(loss)
    rt.disable_static()
    test = main.clone(for_test=True)
    kinds = {op.attrs.get("op_role", "forward") for op in test.global_block().ops}
    assert kinds == {"forward"}
    assert len(test.global_block().ops) < len(main.global_block().ops)
    full = main.clone()
    assert len(full.global_block().ops) == len(main.global_block().ops)


def test_shape_errors_surface_at_build_time_at_the_users_line():
    with pytest.raises(rt.ShapeError) as info:
        build(lambda x, y: x + y, ("x", [2, 3], "float32"), ("y", [4], "float32"))
    assert "elementwise_add" in str(info.value) and "[2, 3]" in str(info.value)
    assert info.value.location[0] == __file__


def test_kernel_failure_at_run_time_is_the_eager_error_at_the_line():
    main, _, out = build(lambda x: rt.reshape(x, [-1, 4]), ("x", [None, 2], "float32"))
    with pytest.raises(rt.ShapeError) as eager:
        rt.reshape(rt.zeros([3, 2]), [-1, 4])
    with pytest.raises(rt.ShapeError) as info:
        static.Executor().run(main, {"x": np.zeros((3, 2), np.float32)}, [out])
    assert type(info.value) is type(eager.value)
    assert "reshape" in info.value.op
    assert info.value.location[0] == __file__ and f"{__file__}:" in str(info.value)
    assert info.value.__cause__ is not None


def test_executor_feed_checks():
    main, _, out = build(lambda x: x * 2, ("x", [None, 2], "float32"))
    exe = static.Executor()
    with pytest.raises(rt.OpError, match="feed 'x' has shape \\[3\\]"):
        exe.run(main, {"x": np.zeros(3, np.float32)}, [out])
    with pytest.raises(rt.OpError, match="feed 'y' is not a variable"):
        exe.run(main, {"y": np.zeros((1, 2), np.float32)}, [out])
    with pytest.raises(ExecutionError, match="fed"):
        exe.run(main, {}, [out])
    got = exe.run(main, {"x": np.ones((5, 2), np.float64)}, [out])[0]
    assert got.shape == (5, 2) and got.dtype == np.float32


def test_uninitialized_parameter_says_run_startup():
    main, startup = static.Program(), static.Program()
    rt.enable_static()
    with static.program_guard(main, startup):
        x = static.data("x", [1, 2], "float32")
        y = rt.nn.Linear(2, 1)(x)
    rt.disable_static()
    scope = static.Scope()
    exe = static.Executor()
    exe.run(startup, scope=scope)
    out = exe.run(main, {"x": np.ones((1, 2), np.float32)}, [y], scope=scope)[0]
    assert out.shape == (1, 1)
    main.global_block().create_parameter("orphan", [1], "float32")
    rt.enable_static()
    with static.program_guard(main):
        z = y + main.global_block().var("orphan")
    rt.disable_static()
    with pytest.raises(ExecutionError, match="run the startup program first"):
        exe.run(main, {"x": np.ones((1, 2), np.float32)}, [z], scope=scope)


def test_compiled_code_is_cached_per_program_version():
    main, _, out = build(lambda x: x + 1, ("x", [2], "float32"))
    exe = static.Executor()
    feed = {"x": np.zeros(2, np.float32)}
    exe.run(main, feed, [out])
    exe.run(main, feed, [out])
    assert len(exe._cache) == 1
    rt.enable_static()
    with static.program_guard(main):
        out2 = out * 3
    rt.disable_static()
    np.testing.assert_allclose(exe.run(main, feed, [out2])[0], [3, 3])
    assert len(exe._cache) == 2


def test_unneeded_ops_are_pruned_but_persistable_writes_kept():
    main, _, out = build(lambda x: (x + 1, rt.exp(x) * 1000), ("x", [2], "float32"))
    fn = static.Executor().compiler.compile(
        main.global_block(), ["x"], [out[0].name], rt.backends.current_backend()
    )
    assert [op.type for op in fn.__globals__["_ops"]] == ["elementwise_add"]


def test_variables_refuse_python_truth_and_values():
    def use_bool(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="truth value of the symbolic variable"):
        build(use_bool, ("x", [1], "float32"))
    _, _, out = build(lambda x: x.numpy()[0] > 5, ("x", [2], "float32"))
    assert isinstance(out, static.Variable) and out.dtype == rt.bool


def test_data_name_clash_is_an_error():
    rt.enable_static()
    with static.program_guard(static.Program()):
        static.data("x", [1])
        with pytest.raises(rt.OpError, match="already has a variable named 'x'"):
            static.data("x", [1])
    rt.disable_static()


def test_setitem_on_variables_keeps_earlier_uses_intact():
    def fn(x):
        before = x * 1.0
        x[0] = 5.0
        return before, x

    main, _, (before, after) = build(fn, ("x", [3], "float32"))
    got = static.Executor().run(main, {"x": np.array([1, 2, 3], np.float32)}, [before, after])
    np.testing.assert_array_equal(got[0], [1, 2, 3])
    np.testing.assert_array_equal(got[1], [5, 2, 3])


def test_static_mode_switch():
    assert rt.in_dynamic_mode()
    rt.enable_static()
    assert not rt.in_dynamic_mode()
    rt.disable_static()
    assert isinstance(rt.ones([1]), rt.Tensor)


def test_build_errors_are_static_build_errors():
    with pytest.raises(StaticBuildError):
        build(
            lambda x: static.nn.cond(x.sum() > 0, lambda: x, lambda: (x, x)), ("x", [2], "float32")
        )


def test_a_repeated_call_follows_a_device_change():
    """The Executor's path for a call like the last one checks the current device too."""
    pytest.importorskip("array_api_strict")
    main, _, out = build(lambda x: x * 2, ("x", [2], "float32"))
    exe = static.Executor()
    feed = {"x": np.ones(2, np.float32)}
    fetch = [out]
    exe.run(main, feed, fetch)
    rt.set_device("array_api_strict")
    try:
        (got,) = exe.run(main, feed, fetch, return_numpy=False)
        strict = rt.backends.get_backend("array_api_strict")
        assert type(got._data) in strict.array_types
    finally:
        rt.set_device("cpu")
    (again,) = exe.run(main, feed, fetch, return_numpy=False)
    assert type(again._data) is np.ndarray
    np.testing.assert_array_equal(again.numpy(), [2.0, 2.0])


def test_programs_capturing_other_eager_tensors_each_see_their_own_values():
    """Unnamed eager tensors captured by two programs get names of their own: the programs
    share the global scope, which keeps a captured value once it holds one."""
    exe = static.Executor()
    for k in range(3):
        captured = rt.to_tensor(np.full([2], k, np.float32))
        main, _, out = build(lambda x, c=captured: x + c, ("x", [2], "float32"))
        (got,) = exe.run(main, {"x": np.ones([2], np.float32)}, [out])
        np.testing.assert_array_equal(got, np.full([2], k + 1, np.float32))

"""Lists appended to / popped from in symbolic loops: tensor arrays.

The Python-semantics catalogue (tests/programs.py: ``list_append_pop_in_loops``,
``list_append_errors``) checks converted == original on Python values; here: the symbolic
path (the program holds the array ops and gives the eager result), gradients through the
stacked list, errors at the user's line, and a serialization round trip.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.errors import StaticBuildError
from autostatic_runtime.static.serialize import parse_program, program_to_desc

# ---- helpers -------------------------------------------------------------------------------


def build(fn, *arrays, grad_of=()):
    """Trace converted ``fn`` on data Variables ``a0, a1...`` shaped like ``arrays`` (the
    first dim of a float input unknown); optionally d(sum(outs[0]))/d(inputs)."""
    converted = autostatic.convert(fn)
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main):
            args = []
            for i, a in enumerate(arrays):
                shape = [None, *a.shape[1:]] if a.ndim and a.dtype.kind == "f" else a.shape
                v = static.data(f"a{i}", list(shape), str(a.dtype))
                v.stop_gradient = a.dtype.kind != "f"
                args.append(v)
            out = converted(*args)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if grad_of:
                outs += static.gradients(rt.sum(outs[0]), [args[i] for i in grad_of])
    finally:
        rt.disable_static()
    return main, outs


def run(program, *arrays):
    main, outs = program
    got = static.Executor().run(main, {f"a{i}": a for i, a in enumerate(arrays)}, outs)
    return [np.asarray(g) for g in got]


def eager(fn, *arrays, grad_of=()):
    ts = [rt.to_tensor(a, stop_gradient=a.dtype.kind != "f") for a in arrays]
    out = fn(*ts)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if grad_of:
        outs += rt.grad(rt.sum(outs[0]), [ts[i] for i in grad_of])
    return [np.asarray(o) for o in outs]


def op_types(program) -> list[str]:
    main, _ = program
    return [op.type for b in main.blocks for op in b.ops]


def assert_close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


X = np.array([1.0, -2.0, 3.0], np.float32)


def n_(k: int) -> np.ndarray:
    return np.array(k, np.int64)


_CACHE: dict = {}


def cached(fn, *arrays, grad_of=()):
    key = (fn, tuple((a.shape, a.dtype.str) for a in arrays), grad_of)
    if key not in _CACHE:
        _CACHE[key] = build(fn, *arrays, grad_of=grad_of)
    return _CACHE[key]


# ---- the user's functions --------------------------------------------------------------------


def for_append_stack(x, n):
    xs = []
    for i in range(n):
        xs.append(x * i + 1.0)
    return rt.stack(xs)


def while_append_stack(x, n):
    xs = []
    i = 0
    while i < n:
        xs.append(rt.sin(x) * i)
        i = i + 1
    return rt.stack(xs, axis=1), rt.concat(xs)


def append_in_if(x, n):
    xs = [x]
    for i in range(n):
        if x.sum() * i > 2.0:
            xs.append(x * i)
        else:
            xs.append(-x)
            xs.append(x + i)
    return rt.stack(xs)


def append_in_one_branch(x, n):
    xs = [x * 0.5]
    for i in range(n):
        if i % 2 == 0:
            xs.append(x + i)
    return rt.stack(xs)


def pop_in_loop(x, n):
    xs = [x, x * 2.0, x * 3.0, x * 4.0, x * 5.0, x * 6.0]
    total = x * 0.0
    for _ in range(n):
        total = total + xs.pop()
    return total, rt.stack(xs), xs.pop(0)


def read_back(x, n):
    xs = []
    for i in range(n):
        xs.append(x * (i + 1))
    first, last = xs[0], xs[-1]
    total = x * 0.0
    for v in xs:
        total = total + v * v
    count = len(xs)
    return first + last + total, count


def api_names(x, n):
    arr = rt.create_array("float32")
    i = 0
    while i < n:
        arr = rt.array_write(x * i, rt.array_length(arr), arr)
        i = i + 1
    return rt.array_read(arr, 1) + rt.tensor.array_read(arr, 0), rt.array_length(arr)


def nested_loops(x, n):
    rows = []
    for i in range(n):
        row = []
        for j in range(n):
            row.append(x[0] * i + j)
        rows.append(rt.stack(row).sum())
    return rt.stack(rows)


def nested_loops_one_list(x, n):
    xs = []  # empty: the outer loop learns its element type from the inner loop's append
    for i in range(n):
        j = 0
        while j < i:
            xs.append(x * j + i)
            j = j + 1
    xs.append(x)
    return rt.stack(xs)


def while_pops_front(x, n):
    xs = [x, x + 1.0, x + 2.0]
    acc = x * 0.0
    while len(xs) > n:
        acc = acc + xs.pop(0) * len(xs)
    return acc, rt.stack(xs)


# ---- symbolic path == eager -------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, ops",
    [
        (for_append_stack, {"create_array", "array_write", "array_length", "stack_array"}),
        (while_append_stack, {"create_array", "array_write", "stack_array"}),
        (append_in_if, {"array_write", "cond"}),
        (pop_in_loop, {"array_pop"}),
        (read_back, {"array_read", "array_length"}),
        (api_names, {"create_array", "array_write", "array_read", "array_length"}),
    ],
)
def test_program_holds_array_ops(fn, ops):
    program = cached(fn, X, n_(3))
    types = set(op_types(program))
    assert "while" in types
    assert ops <= types


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 5), x=st.lists(st.floats(-3, 3, width=32), min_size=3, max_size=3))
@pytest.mark.parametrize(
    "fn",
    [
        for_append_stack,
        while_append_stack,
        append_in_if,
        append_in_one_branch,
        read_back,
        api_names,
        nested_loops,
    ],
)
def test_static_equals_eager(fn, n, x):
    if fn is api_names and n < 2:
        n = 2  # reads element 1
    x = np.asarray(x, np.float32)
    assert_close(run(cached(fn, x, n_(3)), x, n_(n)), eager(fn, x, n_(n)))


@settings(max_examples=8, deadline=None)
@given(n=st.integers(0, 5))
def test_pops_match_eager(n):
    got = run(cached(pop_in_loop, X, n_(3)), X, n_(n))
    want = eager(pop_in_loop, X, n_(n))
    assert_close(got, want)


@pytest.mark.parametrize(
    "fn, lengths", [(nested_loops_one_list, (0, 1, 3, 4)), (while_pops_front, (1, 2, 3, 4))]
)
def test_nested_loops_and_pops_with_gradients(fn, lengths):
    program = cached(fn, X, n_(3), grad_of=(0,))
    assert "while" in op_types(program)
    for n in lengths:
        assert_close(run(program, X, n_(n)), eager(fn, X, n_(n), grad_of=(0,)))


def test_zero_iterations():
    # an empty list stacked: eager's rt.stack([]) fails, and so does the program
    with pytest.raises(rt.ShapeError, match="stack: expects a non-empty list"):
        eager(for_append_stack, X, n_(0))
    with pytest.raises(rt.ShapeError, match="stack: .*tensor array is empty when the program"):
        run(cached(for_append_stack, X, n_(3)), X, n_(0))
    # a list with a first element before the loop: the eager result
    assert_close(run(cached(append_in_if, X, n_(3)), X, n_(0)), eager(append_in_if, X, n_(0)))


def test_python_values_stay_lists():
    converted = autostatic.convert(for_append_stack)
    out = converted(X, 3)
    np.testing.assert_allclose(np.asarray(out), np.asarray(for_append_stack(rt.to_tensor(X), 3)))

    def collect(n):
        xs = []
        for i in range(n):
            xs.append(i)
        ys = [xs.pop() for _ in range(2)]
        return xs, ys

    assert autostatic.convert(collect)(5) == collect(5)


# ---- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn", [for_append_stack, while_append_stack, append_in_if, pop_in_loop, read_back]
)
def test_gradient_through_the_array(fn):
    program = cached(fn, X, n_(3), grad_of=(0,))
    for n in (1, 3, 4):
        got = run(program, X, n_(n))
        want = eager(fn, X, n_(n), grad_of=(0,))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5, atol=1e-5)


def test_gradient_matches_central_differences():
    program = cached(while_append_stack, X, n_(3), grad_of=(0,))
    grad = run(program, X, n_(4))[-1]
    eps = 1e-3
    for k in range(3):
        hi, lo = X.copy(), X.copy()
        hi[k] += eps
        lo[k] -= eps
        numeric = (run(program, hi, n_(4))[0].sum() - run(program, lo, n_(4))[0].sum()) / (2 * eps)
        np.testing.assert_allclose(grad[k], numeric, rtol=1e-2, atol=1e-2)


def test_array_ops_differentiate_eagerly():
    from autostatic_runtime.ops.tensor_array import ArrayPop, ArrayRead, ArrayWrite, StackArray

    buf = rt.to_tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), stop_gradient=False)
    v = rt.to_tensor(X, stop_gradient=False)
    grown = ArrayWrite(v, rt.to_tensor(2), buf)
    rest, item = ArrayPop(grown, 0)
    loss = (StackArray(rest) * 2.0).sum() + (ArrayRead(grown, 1) * item).sum()
    gbuf, gv = rt.grad(loss, [buf, v])
    np.testing.assert_allclose(gbuf.numpy(), [[3.0, 4.0, 5.0], [2.0 + 0.0, 2.0 + 1.0, 2.0 + 2.0]])
    np.testing.assert_allclose(gv.numpy(), [2.0, 2.0, 2.0])


# ---- serialization ----------------------------------------------------------------------------


def test_serialization_round_trip():
    main, outs = cached(pop_in_loop, X, n_(3))
    loaded = parse_program(program_to_desc(main).SerializeToString())
    fetch = [loaded.global_block().var(v.name) for v in outs]
    for n in (0, 2, 5):
        got = static.Executor().run(loaded, {"a0": X, "a1": n_(n)}, fetch)
        assert_close([np.asarray(g) for g in got], eager(pop_in_loop, X, n_(n)))


def test_to_static_trains_through_the_array():
    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(3, 3)

        def forward(self, x, n):
            hs = []
            h = x
            for _ in range(n):
                h = rt.tanh(self.fc(h))
                hs.append(h)
            return rt.stack(hs).mean()

    net = Net()
    x, n = rt.to_tensor(X[None, :]), rt.to_tensor(3)
    want = net(x, n)
    want.backward()
    want_grad = net.fc.weight.grad.numpy().copy()
    net.clear_gradients()
    static_net = autostatic.to_static(net)
    got = static_net(x, n)
    got.backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(net.fc.weight.grad.numpy(), want_grad, rtol=1e-4, atol=1e-6)


# ---- errors at the user's line ----------------------------------------------------------------


def mixed_dtypes(x, n):
    xs = [x]
    for _ in range(n):
        xs.append(rt.cast(x, "int64"))
    return rt.stack(xs)


def mixed_shapes(x, n):
    xs = [x]
    for _ in range(n):
        xs.append(rt.stack([x, x]))
    return rt.stack(xs)


def nested_list(x, n):
    xs = []
    for _ in range(n):
        xs.append([x, x])
    return xs


def never_appends(x, n):
    xs = []
    for _ in range(n):
        xs.pop()
    return xs


def extends(x, n):
    xs = []
    for _ in range(n):
        xs.extend(x)  # a tensor, not a list of them
    return xs


class Holder:
    def __init__(self):
        self.xs = []

    def fill(self, x, n):
        for _ in range(n):
            self.xs.append(x)
        return x


@pytest.mark.parametrize(
    "fn, message",
    [
        (mixed_dtypes, "holds float32 tensors, but this value is int64"),
        (mixed_shapes, r"holds tensors of shape \[-1\], but this value has shape \[2, -1\]"),
        (nested_list, "given a list .nested lists and tuples are not supported"),
        (never_appends, "element type is unknown"),
        (extends, r"'xs.extend\(...\)' in a tensor-dependent loop takes a list or tuple"),
        (Holder().fill, r"'self.xs.append\(...\)'"),
    ],
)
def test_clear_errors(fn, message):
    with pytest.raises(StaticBuildError, match=message) as info:
        build(fn, np.ones(3, np.float32), n_(2))
    assert "test_tensor_arrays.py" in str(info.value)


# ---- what to_static returns, saving ---------------------------------------------------------


def returns_the_list(x, n):
    xs = [x]
    for i in range(n):
        xs.append(x * i)
    return xs[1:], len(xs)


def test_returned_array_is_a_list_and_saves(tmp_path):
    from autostatic_runtime.static import InputSpec

    specs = [InputSpec([3], "float32"), InputSpec([], "int64")]
    fn = autostatic.to_static(returns_the_list, input_spec=specs)
    x = rt.to_tensor(X)
    for n in (0, 2, 4):
        got, count = fn(x, rt.to_tensor(n))
        want, want_count = returns_the_list(x, n)
        assert isinstance(got, list) and len(got) == len(want) == n
        assert int(count.numpy()) == want_count
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy())
    autostatic.save(fn, str(tmp_path / "m"))
    loaded = autostatic.load(str(tmp_path / "m"))
    got, count = loaded(x, rt.to_tensor(3))
    assert isinstance(got, list) and len(got) == 3 and int(count.numpy()) == 4
    np.testing.assert_allclose(got[2].numpy(), X * 2)


# ---- a None state and elements with an unknown dim ------------------------------------------


def collect_states(x, n):
    """The RNN idiom: a state that starts as None, each step's output appended (the first
    iteration is traced as a cond op so the body sees None; elements have the unknown batch
    dim of ``x``)."""
    outputs = []
    state = None
    for t in range(n):
        if state is None:
            state = x * 0
        state = state * 0.5 + x * (t + 1)
        outputs.append(state)
    return rt.stack(outputs, axis=1)


def test_a_none_state_and_appends_of_unknown_shape_elements():
    xs = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32)  # [batch=-1, 3]
    program = build(collect_states, xs, n_(3), grad_of=(0,))
    assert "cond" in op_types(program) and "while" in op_types(program)
    for batch, n in ((2, 1), (2, 4), (1, 3), (3, 2)):
        x = np.resize(xs, (batch, 3)).astype(np.float32)
        got = run(program, x, n_(n))
        want = eager(collect_states, x, n_(n), grad_of=(0,))
        assert got[0].shape == want[0].shape == (batch, n, 3)
        assert_close(got, want)


# ---- Paddle's index tensors, arrays mutated in place, held lists, reversal ------------------


def counters_of_shape_one(x):
    i = rt.full([1], 0, "int64")  # Paddle's fill_constant([1], 'int64', 0) counter
    arr = rt.tensor.create_array("float32")
    rt.tensor.array_write(x, i, arr)
    i = i + 1
    arr = rt.tensor.array_write(x * 2, i, array=arr)
    return rt.tensor.array_read(arr, i) + rt.tensor.array_read(arr, i - 1), len(arr)


def written_in_while_without_assignment(x):
    arr = rt.tensor.create_array("float32")
    i = rt.zeros([1], "int64")
    while i < rt.shape(x)[0]:
        rt.tensor.array_write(x[i] * 2, i, arr)  # arr is not rebound: it is written in place
        i = i + 1
    return rt.stack(arr), rt.tensor.array_length(arr)


def rewritten_while_enumerated(x):
    arr = rt.tensor.create_array("float32")
    for k in range(rt.shape(x)[0]):
        rt.tensor.array_write(x[k], k, arr)
    for k, row in enumerate(arr):
        rt.tensor.array_write(row * 3 + k, k, arr)
    return rt.stack(arr)


def list_in_dict_read_two_back(x):
    feats = {"rows": []}
    for k, row in enumerate(x):
        if k > 1:
            two_back = feats["rows"][-2]  # a list held in a dict: a tensor array too
        feats["rows"].append(row * (k + 1))
    return two_back, rt.stack(feats["rows"])


def reversed_and_reverse(x):
    xs = []
    for row in x:
        xs.append(rt.exp(row))
    acc = rt.zeros([3], "float32")
    for k, v in enumerate(reversed(xs)):
        acc = acc * 0.5 + v * k
    xs.reverse()
    return acc, rt.stack(xs), rt.stack(xs[::-1])


def ranks_differ_per_branch(x):
    picked = []
    if rt.sum(x) > 0:
        picked.append(x)
    else:
        picked.append(rt.full([1, 2], 9, "int64"))  # another rank and dtype
    return picked[0]


def ranks_differ_then_replaced_under_another_if(x):
    picked = []
    if rt.sum(x) > 0:
        picked.append(x)
    else:
        picked.append(rt.full([1, 2], 9, "int64"))
    if rt.sum(x) > 1:
        picked[0] = x * 2  # the other branch passes the two-typed value on
    kept = picked[0]
    picked[0] = x + 1
    return picked[0], kept


F3 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3], [-2.0, 1.0, 0.5]], "f4")


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (counters_of_shape_one, [(F3[0],)]),
        (written_in_while_without_assignment, [(F3,), (F3[:2],)]),
        (rewritten_while_enumerated, [(F3,), (F3[:1],)]),
        (list_in_dict_read_two_back, [(F3,), (F3[:3],)]),
        (reversed_and_reverse, [(F3,), (F3[:2],)]),
        (ranks_differ_per_branch, [(F3[0],), (-F3[0],)]),
        (ranks_differ_then_replaced_under_another_if, [(F3[0],), (F3[2],), (-F3[0],)]),
    ],
)
def test_paddle_array_idioms_match_eager(fn, inputs):
    from tests.idioms.harness import check

    exact = (
        counters_of_shape_one,
        ranks_differ_per_branch,
        ranks_differ_then_replaced_under_another_if,
    )
    spec = None if fn in exact else "batch"
    check(fn, inputs, input_spec=spec)


def test_a_two_typed_value_passed_on_by_a_later_if_is_still_an_error_for_an_op():
    def add_after_second_if(x):
        picked = [x]
        if rt.sum(x) > 0:
            picked[0] = rt.full([1, 2], 9, "int64")
        if rt.sum(x) > 1:
            picked[0] = x
        return picked[0] + 1

    with pytest.raises(
        StaticBuildError, match=r"reads a value that is int64\[1, 2\] when the condition holds"
    ):
        autostatic.to_static(add_after_second_if)(rt.to_tensor(F3[0]))


def test_an_array_index_of_many_elements_is_a_clear_error():
    def bad(x):
        arr = rt.tensor.create_array("float32")
        return rt.tensor.array_write(x, rt.zeros([2], "int64"), arr)

    with pytest.raises(StaticBuildError, match=r"shape \[2\]\): an index is one integer") as e:
        build(bad, F3[0])
    assert e.value.location[1] == bad.__code__.co_firstlineno + 2


def counters_collected(n):
    items = []
    for k in range(n):  # k is a Python int eagerly: the list stacks to int64
        items.append(k * 2)
    rows = []
    for k in range(n):
        row = []
        for j in range(k + 1):
            row.append(j)
        rows.append(rt.stack(row)[-1])
    return rt.stack(items), rt.stack(rows)


def test_python_numbers_collected_in_a_tensor_loop_stack_as_eagerly():
    from tests.idioms.harness import check

    n32 = np.array(3, "int32")  # range(an int32 tensor): int32 bounds, Python-int items
    check(counters_collected, [(n32,), (np.array(1, "int32"),)], grad=False)


def row_codes_into_int32_array(n, m):
    codes = rt.tensor.create_array("int32")  # the declared dtype: eagerly too
    i = 0
    while i < n:
        j, code = 0, 0
        while j < m:
            code = code * 10 + i * j  # Python ints: stored as int32 elements
            j += 1
        codes = rt.tensor.array_write(code, i, codes)
        i += 1
    return rt.stack(codes)


def test_an_array_created_with_a_dtype_holds_numbers_of_it_eagerly_and_static():
    from tests.idioms.harness import check

    eager = row_codes_into_int32_array(2, 3)
    assert eager.dtype == rt.int32  # (int64 before: the eager array ignored its dtype)
    check(row_codes_into_int32_array, [(np.array(2, "int32"), np.array(3, "int32"))],
          grad=False)  # fmt: skip

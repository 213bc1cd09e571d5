"""Generic dygraph idioms: nested ``if``/``elif`` chains on tensors, tensor conditions inside
helpers and methods, conditions from ``.numpy()``/``.item()``-style reads, mixed Python and
tensor conditions at several depths."""

import numpy as np
import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, arr, case, rand, run_case

F = rt.nn.functional


def elif_chain_on_mean(x):
    m = rt.mean(x)
    if m > 0.6:
        y = x * 3
    elif m > 0.2:
        y = x * 2
    elif m > -0.2:
        y = x
    else:
        y = -x
    return y


def nested_if_three_deep(x):
    y = x
    if rt.sum(x) > 0:
        if rt.max(x) > 0.8:
            if rt.min(x) > 0.2:
                y = x * 4
            else:
                y = x * 3
        else:
            y = x * 2
    else:
        y = x - 1
    return y


def numpy_read_in_condition(x):
    if x.numpy()[0] > 0.5:
        return x * 2
    return x


def if_without_else_updates_two_vars(x):
    a = x
    b = rt.zeros_like(x)
    if rt.mean(x) > 0:
        a = a * 2
        b = b + 1
    return a + b


def _activation(h, kind):
    if kind == "relu":
        return F.relu(h)
    if rt.mean(h) > 0:
        return rt.tanh(h)
    return F.sigmoid(h)


def helper_mixing_python_and_tensor_conditions(x):
    return _activation(x, "relu") + _activation(x, "auto")


class Clipper:
    def __init__(self, hi):
        self.hi = hi

    def __call__(self, x):
        if rt.max(x) > self.hi:
            return rt.clip(x, max=self.hi)
        return x


def callable_object_with_tensor_if(x):
    clip = Clipper(0.5)
    return clip(x) + clip(x * 2)


def python_if_around_tensor_if(x, use_norm=True):
    if use_norm:
        if rt.std(x) > 0.1:
            x = (x - rt.mean(x)) / rt.std(x)
    return x


def tensor_if_around_python_loop(x):
    if rt.sum(x) > 0:
        for k in range(3):
            x = x * 0.5 + k
    else:
        for k in range(2):
            x = x - k
    return x


def if_on_item_of_reduction(x):
    s = rt.sum(x)
    if s.item() > 0:
        return x / s
    return x


def augmented_assign_in_branches(x):
    y = x * 1.0
    if rt.max(x) > 0.5:
        y += 1
        y *= 2
    else:
        y -= 1
    return y


def tensor_while_with_inner_tensor_if(x):
    i = rt.to_tensor(0)
    h = x
    while i < 4:
        if rt.mean(h) > 0:
            h = h - 0.3
        else:
            h = h + 0.2
        i += 1
    return h


def comparison_between_two_tensors(x, y):
    if rt.sum(x) > rt.sum(y):
        return x - y
    return y - x


def early_python_return_before_tensor_code(x, skip=False):
    if skip:
        return x
    if rt.mean(x) > 0:
        return x * 2
    return x * 3


def assert_inside_tensor_loop(x):
    total = rt.zeros([1], "float32")
    for row in x:
        assert rt.all(rt.isfinite(row)), "row must be finite"
        total = total + rt.sum(row)
    return total


def print_inside_tensor_while(x):
    i = rt.to_tensor(0)
    while i < 2:
        print("step", i, rt.mean(x))
        x = x * 0.5
        i += 1
    return x


P = rand(4, seed=101, low=0.1, high=1.0)
N = rand(4, seed=102, low=-1.0, high=-0.1)
MX = arr(0.9, -0.4, 0.3, 0.1)
M4 = rand(2, 4, seed=63, low=0.2, high=1.0)
M3 = rand(3, 3, seed=103)

# ---- shapes seen while tracing: a branch the data never takes is traced too ------------


def row_test_inside_untaken_branch(x):
    if rt.mean(x) < -5:  # never taken by the inputs: eagerly, the row test never runs
        y = x * 2
        if y.numpy()[0] < 10:  # a row of many elements: ambiguous, if it ever ran
            y = y + 1
    else:
        y = x - 1
        if y.numpy()[0][0] < 10:  # one element: a cond op
            y = rt.abs(y)
    return y


class CachedConstantsNet(rt.nn.Layer):
    """A layer keeping tensors in a dict attribute, set in nested tensor branches (one of
    them only in one branch): Paddle's layer-with-control-flow idiom."""

    def __init__(self):
        super().__init__()
        rt.seed(7)
        self.fc = rt.nn.Linear(4, 3)
        self.consts = {}

    def forward(self, x):
        self.consts["bias"] = rt.full([3], 1.0, "float32")
        h = self.fc(x)
        if rt.mean(h) < 0:
            y = h + self.consts["bias"]
            self.consts["w"] = rt.full([3], 10.0, "float32")  # set in this branch only
            if y.numpy()[0][0] < 5:
                y = rt.relu(y * self.consts["w"])
        else:
            y = h - self.consts["bias"]
        return rt.mean(y)


CASES = [
    case(elif_chain_on_mean, [(P,), (P * 0.4,), (MX * 0.1,), (N,)], kind="generic"),
    case(nested_if_three_deep, [(P + 0.3,), (P,), (P * 0.5,), (N,)], kind="generic"),
    case(numpy_read_in_condition, [(P,), (N,)], kind="generic"),
    case(if_without_else_updates_two_vars, [(P,), (N,)], kind="generic"),
    case(helper_mixing_python_and_tensor_conditions, [(P,), (N,)], kind="generic"),
    case(callable_object_with_tensor_if, [(P,), (N,)], kind="generic"),
    case(python_if_around_tensor_if, [(P,), (np.full(4, 0.3, "float32"),)], kind="generic"),
    case(tensor_if_around_python_loop, [(P,), (N,)], kind="generic"),
    case(if_on_item_of_reduction, [(P,), (N,)], kind="generic"),
    case(augmented_assign_in_branches, [(P,), (N,)], kind="generic"),
    case(tensor_while_with_inner_tensor_if, [(P,), (N,)], kind="generic"),
    case(comparison_between_two_tensors, [(P, N), (N, P)], kind="generic"),
    case(early_python_return_before_tensor_code, [(P,), (N,)], kind="generic"),
    case(assert_inside_tensor_loop, [(M3,), (M3[:1],)], kind="generic", input_spec="batch"),
    case(print_inside_tensor_while, [(P,)], kind="generic"),
    case(row_test_inside_untaken_branch, [(M3,), (-M3,)], kind="generic", input_spec="batch"),
    case(CachedConstantsNet(), [(M4,), (-M4,)], kind="generic", id="dict_attribute_in_branches"),
]

XFAIL: dict[str, str] = {}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)

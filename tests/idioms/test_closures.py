"""Idioms: nested functions and closures reading a variable that a tensor loop or branch
carries (they must see its current value), and Python objects carried through tensor loops
(namedtuple, dataclass, a value object whose method returns a new one) (kind 12)."""

import functools
from collections import namedtuple
from dataclasses import dataclass

import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, case, rand, run_case


def closure_reads_loop_carried_scale(x):
    scale = rt.ones([1], "float32")

    def apply(v):
        return v * scale

    out = rt.zeros([3], "float32")
    for row in x:
        scale = scale * 0.5
        out = out + apply(row)
    return out


def lambda_reads_branch_variable(x):
    if rt.mean(x) > 0:
        shift = rt.max(x)
    else:
        shift = rt.min(x)
    f = lambda v: v - shift  # noqa: E731
    return f(x) * 2


def nested_def_reads_loop_index(x):
    def weight(k):
        return rt.cast(k, "float32") + 1.0

    s = rt.zeros([1], "float32")
    for i in range(rt.shape(x)[0]):
        s = s + x[i] * weight(i)
    return s


def closure_called_in_while_condition(x):
    limit = rt.sum(rt.abs(x))

    def not_done(v):
        return v < limit

    acc = rt.zeros([1], "float32")
    while not_done(acc):
        acc = acc + 0.3
    return acc


def closure_reads_var_updated_in_tensor_while(x):
    h = x

    def energy():
        return rt.sum(h * h)

    n = 0
    while energy() > 0.1:
        h = h * 0.5
        n += 1
    return h, n


def nonlocal_counter_in_tensor_loop(x):
    count = rt.zeros([1], "float32")

    def bump(v):
        nonlocal count
        count = count + v

    for row in x:
        if rt.sum(row) > 0:
            bump(1.0)
    return count


def partial_helper_with_loop_var(x):
    def mix(a, b, alpha):
        return a * alpha + b * (1 - alpha)

    h = rt.zeros([3], "float32")
    for row in x:
        step = functools.partial(mix, alpha=0.7)
        h = step(h, row)
    return h


State = namedtuple("State", ["h", "c"])


def namedtuple_carried_by_while(x):
    st = State(h=x, c=rt.zeros_like(x))
    i = 0
    while i < 3:
        st = State(h=rt.tanh(st.h + st.c), c=st.c + st.h * 0.1)
        i += 1
    return st.h + st.c


def namedtuple_carried_by_tensor_for(x):
    st = State(h=rt.zeros([3], "float32"), c=rt.zeros([3], "float32"))
    for row in x:
        st = State(h=st.h * 0.5 + row, c=rt.maximum(st.c, row))
    return st


@dataclass
class Stats:
    total: rt.Tensor
    peak: rt.Tensor


def dataclass_carried_by_tensor_for(x):
    s = Stats(total=rt.zeros([3], "float32"), peak=rt.full([3], -1e9, "float32"))
    for row in x:
        s = Stats(total=s.total + row, peak=rt.maximum(s.peak, row))
    return s.total - s.peak


class Vec:
    def __init__(self, v):
        self.v = v

    def step(self, d):
        return Vec(self.v + d)

    def norm(self):
        return rt.sqrt(rt.sum(self.v * self.v))


def value_object_method_in_while(x):
    p = Vec(rt.zeros([3], "float32"))
    i = rt.to_tensor(0)
    while p.norm() < rt.sum(rt.abs(x)):
        p = p.step(x)
        i += 1
    return p.v, i


def namedtuple_from_tensor_branches(x):
    if rt.mean(x) > 0:
        st = State(h=x * 2, c=x)
    else:
        st = State(h=x, c=-x)
    return st.h * st.c


def _summarize(x):
    if rt.sum(x) > 0:
        return Stats(total=rt.sum(x), peak=rt.max(x))
    return Stats(total=-rt.sum(x), peak=rt.min(x))


def dataclass_returned_from_branching_helper(x):
    s = _summarize(x)
    return s.total * s.peak


def closure_factory_inside_tensor_branch(x):
    if rt.mean(x) > 0:
        def act(v):
            return rt.nn.functional.relu(v)
    else:
        def act(v):
            return rt.tanh(v)
    return act(x) + act(x * 2)


def closure_reads_variable_rebound_after_definition(x):
    factor = rt.ones([1], "float32")

    def scaled(v):
        return v * factor

    if rt.sum(x) > 0:
        factor = factor * 3
    return scaled(x)


def closure_rebinds_a_variable_the_other_branch_reads(x):
    scale = rt.ones([1], "float32")

    def triple():
        nonlocal scale
        scale = scale * 3
        return scale

    if rt.mean(x) > 0:  # traced first: sets the cell the else branch reads
        scale = scale + 10
        out = triple() * x
    else:
        shift = scale - 1
        out = x * 2 + shift
    return out + scale


SEEN = []  # a module-level cache a branch appends to


def branch_keeps_tensor_in_global_list(x):
    if rt.mean(x) > 0:
        y = x * 2
        SEEN.append(y)
    else:
        y = x
    return y + SEEN[-1]


M1 = rand(3, 3, seed=71, low=-0.2, high=1.0)
M2 = rand(2, 3, seed=72, low=-1.0, high=0.2)
P = rand(3, seed=73, low=0.1, high=1.0)
N = rand(3, seed=74, low=-1.0, high=-0.1)
B = "batch"

CASES = [
    case(closure_reads_loop_carried_scale, [(M1,), (M2,)], kind="12", input_spec=B),
    case(lambda_reads_branch_variable, [(P,), (N,)], kind="12"),
    case(nested_def_reads_loop_index, [(P,), (N[:2],)], kind="12", input_spec=B),
    case(closure_called_in_while_condition, [(P,), (N * 2,)], kind="12"),
    case(closure_reads_var_updated_in_tensor_while, [(P,), (N * 3,)], kind="12", timeout=2),
    case(nonlocal_counter_in_tensor_loop, [(M1,), (M2,)], kind="12", input_spec=B, grad=False),
    case(partial_helper_with_loop_var, [(M1,), (M2,)], kind="12", input_spec=B),
    case(namedtuple_carried_by_while, [(P,), (N,)], kind="12"),
    case(namedtuple_carried_by_tensor_for, [(M1,), (M2,)], kind="12", input_spec=B),
    case(dataclass_carried_by_tensor_for, [(M1,), (M2,)], kind="12", input_spec=B),
    case(value_object_method_in_while, [(P,), (N * 2,)], kind="12"),
    case(namedtuple_from_tensor_branches, [(P,), (N,)], kind="12"),
    case(dataclass_returned_from_branching_helper, [(P,), (N,)], kind="12"),
    # a function chosen by a tensor cannot be a program value: a clear error at the user's line
    case(closure_factory_inside_tensor_branch, [(P,), (N,)], kind="12",
         error=r"function\b.*\bact\b"),
    case(closure_reads_variable_rebound_after_definition, [(P,), (N,)], kind="12"),
    case(closure_rebinds_a_variable_the_other_branch_reads, [(P,), (N,)], kind="12"),
    # a tensor kept outside its branch (a global list): a clear error, not a missing name
    case(branch_keeps_tensor_in_global_list, [(P,)], kind="12",
         error=r"computed inside a tensor-dependent 'if' branch or loop body"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)

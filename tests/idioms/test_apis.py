"""Idioms: Paddle APIs used in converted code (kind 11): ``sequence_mask``, ``gather_tree``,
``add_n``, ``metric.accuracy``; ``autostatic.not_to_static`` on a bound method and a function;
recursive helpers (Python-level recursion on Python ints) called from traced code."""

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt

from .harness import apply_xfails, case, rand, run_case

F = rt.nn.functional


def sequence_mask_on_lengths(x, lengths):
    mask = F.sequence_mask(lengths, maxlen=x.shape[1], dtype="float32")
    return x * mask


def sequence_mask_masked_mean(x, lengths):
    mask = F.sequence_mask(lengths, dtype=x.dtype)
    mask = mask[:, : x.shape[1]]
    total = rt.sum(x[:, : mask.shape[1]] * mask, axis=1)
    return total / rt.cast(lengths, "float32")


def sequence_mask_in_tensor_if(x, lengths):
    if rt.max(lengths) > 3:
        m = F.sequence_mask(lengths, maxlen=6, dtype="float32")
    else:
        m = rt.ones_like(x)
    return x * m


def gather_tree_backtrace(ids, parents):
    return F.gather_tree(ids, parents)


def gather_tree_after_loop(step_ids, parents):
    ids = step_ids * 1
    for t in range(rt.shape(ids)[0]):
        if t > 0:
            ids[t] = rt.where(ids[t] < 0, rt.zeros_like(ids[t]), ids[t])
    return F.gather_tree(ids, parents)


def add_n_of_scaled_inputs(x):
    parts = [x * k for k in range(1, 4)]
    return rt.add_n(parts)


def add_n_of_list_built_in_tensor_loop(x):
    parts = []
    for row in x:
        parts.append(rt.tanh(row))
    return rt.add_n(parts)


def add_n_in_tensor_branch(x):
    if rt.sum(x) > 0:
        y = rt.add_n([x, x * 2])
    else:
        y = rt.add_n([x, -x, x])
    return y


def accuracy_top1(logits, label):
    probs = F.softmax(logits)
    return rt.metric.accuracy(probs, label, k=1)


def accuracy_top2_with_branch(logits, label):
    acc = rt.metric.accuracy(F.softmax(logits), label, k=2)
    if acc > 0.5:
        return acc, rt.ones([1], "float32")
    return acc, rt.zeros([1], "float32")


class Preprocessor:
    def __init__(self):
        self.calls = 0

    def normalize(self, x):
        # runs unconverted; a tensor condition here would not become a cond op
        self.calls += 1
        return (x - rt.mean(x)) / (rt.std(x) + 1e-5)


_PRE = Preprocessor()


def not_to_static_bound_method(x):
    normalize = autostatic.not_to_static(_PRE.normalize)
    h = normalize(x)
    if rt.mean(h * x) > 0:
        return h * 2
    return h


def pad_by_amounts_set_from_input_tensors(x, h, w):
    pads = rt.zeros([4], dtype="int32")  # Paddle's setitem idiom: amounts known at run time
    pads[3] = h // 2
    pads[1] = w // 2
    return F.pad(x, pads, mode="reflect", data_format="NHWC") * 2


class Scorer(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        rt.seed(61)
        self.fc = rt.nn.Linear(3, 1)

    @autostatic.not_to_static
    def debug_stats(self, h):
        return rt.max(h) - rt.min(h)

    def forward(self, x):
        h = self.fc(x)
        spread = self.debug_stats(h)
        if spread > 0.1:
            h = h / spread
        return h


@autostatic.not_to_static
def _py_only_clip(x, lo, hi):
    return rt.clip(x, lo, hi)


def not_to_static_function(x):
    y = _py_only_clip(x, -0.5, 0.5)
    if rt.sum(y) > 0:
        return y * 2
    return y


def _apply_n(x, depth):
    if depth == 0:
        return x
    h = _apply_n(x, depth - 1)
    if rt.mean(h) > 0:
        return h * 0.5
    return h + 0.25


def recursive_helper_with_tensor_if(x):
    return _apply_n(x, 3)


def _tree_sum(xs, lo, hi):
    if hi - lo == 1:
        return xs[lo]
    mid = (lo + hi) // 2
    return _tree_sum(xs, lo, mid) + _tree_sum(xs, mid, hi)


def recursive_pairwise_sum(x):
    rows = [x[i] for i in range(4)]
    total = _tree_sum(rows, 0, 4)
    if rt.max(total) > 1:
        total = total / rt.max(total)
    return total


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def recursion_on_python_ints_in_tensor_loop(x):
    s = rt.zeros([1], "float32")
    i = 0
    while s < rt.sum(rt.abs(x)):
        s = s + _fib(5) * 0.1
        i += 1
    return s, i


LEN4 = np.array([2, 6, 1, 4], "int64")
LEN2 = np.array([3, 5], "int64")
X46 = rand(4, 6, seed=62)
X26 = rand(2, 6, seed=63)
IDS = np.array([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]], "int64")
PAR = np.array([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]], "int64")
LOG = rand(5, 4, seed=64)
LAB = np.array([[0], [1], [3], [2], [1]], "int64")
P = rand(4, seed=65, low=0.1, high=1.0)
N = rand(4, seed=66, low=-1.0, high=-0.1)
M = rand(4, 3, seed=67)
IMG = rand(1, 6, 5, 3, seed=68)

CASES = [
    case(sequence_mask_on_lengths, [(X46, LEN4), (X26, LEN2)], kind="11", input_spec="batch"),
    case(sequence_mask_masked_mean, [(X46, LEN4), (X26, LEN2)], kind="11"),
    case(sequence_mask_in_tensor_if, [(X46, LEN4), (X46, np.minimum(LEN4, 3))], kind="11"),
    case(gather_tree_backtrace, [(IDS, PAR)], kind="11", grad=False),
    case(gather_tree_after_loop, [(IDS, PAR)], kind="11", grad=False, input_spec="batch"),
    case(add_n_of_scaled_inputs, [(P,)], kind="11"),
    case(add_n_of_list_built_in_tensor_loop, [(M,), (M[:2],)], kind="11", input_spec="batch"),
    case(add_n_in_tensor_branch, [(P,), (N,)], kind="11"),
    case(accuracy_top1, [(LOG, LAB)], kind="11", grad=False),
    case(accuracy_top2_with_branch, [(LOG, LAB), (-LOG, LAB)], kind="11", grad=False),
    case(
        pad_by_amounts_set_from_input_tensors,
        [(IMG, np.array([6], "int32"), np.array([4], "int32")),
         (IMG, np.array([2], "int32"), np.array([0], "int32"))],
        kind="11",
    ),  # fmt: skip
    case(not_to_static_bound_method, [(P,), (N,)], kind="11"),
    case(Scorer(), [(M,), (M * 0.01,)], kind="11", id="not_to_static_layer_method"),
    case(not_to_static_function, [(P,), (N,)], kind="11"),
    case(recursive_helper_with_tensor_if, [(P,), (N,)], kind="11"),
    case(recursive_pairwise_sum, [(M,), (M * 0.1,)], kind="11"),
    case(recursion_on_python_ints_in_tensor_loop, [(P,), (N * 3,)], kind="11"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)

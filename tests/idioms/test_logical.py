"""Idioms: ``and``/``or``/``not`` mixing tensors with Python values (kind 4), walrus ``:=`` in
tensor conditions (kind 7), and tensor ternaries whose untaken arm gives nan/inf (kind 9)."""

from types import SimpleNamespace

import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, arr, case, rand, run_case

# the untaken arms of guarded ternaries compute log/sqrt of negatives on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# ---- kind 4: and / or / not with Python operands -----------------------------------------


def or_with_none_scale(x, scale=None):
    if rt.mean(x) < 0 or scale:
        return x * 3
    return x


def or_with_number_scale(x, scale=2):
    if rt.mean(x) < 0 or scale:
        return x * scale
    return x


def python_flag_and_tensor(x, use_relu=1):
    if use_relu and rt.sum(x) > 0:
        return rt.nn.functional.relu(x)
    return x * 0.5


def python_zero_flag_and_tensor(x, use_relu=0):
    if use_relu and rt.sum(x) > 0:
        return rt.nn.functional.relu(x)
    return x * 0.5


def not_tensor_any(x):
    if not rt.any(x > 1.0):
        return x + 1
    return x


def string_mode_and_tensor(x, mode="train"):
    if mode == "train" and rt.mean(x) > 0:
        return x * 2
    elif mode and rt.max(x) > 0.5:
        return x - 1
    return x


def empty_string_mode_and_tensor(x, mode=""):
    if mode and rt.max(x) > 0.5:
        return x - 1
    return x + 1


def empty_list_or_tensor(x, extra=()):
    if extra or rt.max(x) > 0:
        return x * 4
    return x


def none_guard_with_attribute(x, cfg=None):
    if cfg is not None and cfg.scale > 1 and rt.mean(x) > 0:
        return x * cfg.scale
    return x


def none_guard_with_config(x, cfg=SimpleNamespace(scale=3)):
    if cfg is not None and cfg.scale > 1 and rt.mean(x) > 0:
        return x * cfg.scale
    return x


def optional_mask_or_all(x, mask=None):
    if mask is None or rt.all(x > -1):
        return x
    return x * mask


def while_with_python_flag_and_tensor(x, go=True):
    s = rt.zeros([1], "float32")
    i = 0
    while go and s < rt.sum(rt.abs(x)):
        s = s + 0.5
        i += 1
    return s, i


def not_of_conjunction(x):
    if not (rt.sum(x) > 0 and rt.max(x) > 1):
        return x * -1
    return x


def list_of_tensors_truthiness_and(x, items=None):
    items = items or []
    if items and rt.sum(items[0]) > 0:
        return x + items[0]
    return x


def tensor_flag_variable_then_if(x, training=True):
    flag = training and rt.mean(x) > 0
    if flag:
        return x * 2
    return x


def chained_comparison(x):
    if 0 < rt.mean(x) < 0.5:
        return x * 10
    return x


def or_value_used_as_number(x, lr=None):
    step = lr or 0.1
    if rt.sum(x) > 0:
        return x - step * x
    return x + step


def python_flag_and_tensor_in_for_body(x, use_bias=True, bias=None):
    out = rt.zeros([3], "float32")
    for row in x:
        if use_bias and rt.sum(row) > 0:
            out = out + row + 1
        elif bias is None or rt.max(row) > 0.5:
            out = out - row
    return out


def not_tensor_in_while_test(x):
    h = x
    n = 0
    while not rt.all(h < 0.2) and n < 10:
        h = h - 0.25
        n += 1
    return h, n


# ---- kind 7: walrus ----------------------------------------------------------------------


def walrus_in_if(x):
    if (m := rt.mean(x)) > 0:
        return x - m
    return x + m


def walrus_in_while(x):
    steps = 0
    while (s := rt.sum(rt.abs(x))) > 1.0:
        x = x / 2
        steps += 1
    return x, s, steps


def walrus_in_and(x):
    if (m := rt.max(x)) > 0 and m < 2:
        return x / m
    return x


def walrus_in_or(x):
    if (n := rt.min(x)) > 0 or n < -0.5:
        return x * n
    return x


def walrus_in_elif(x):
    if (a := rt.mean(x)) > 0.5:
        return x * a
    elif (b := rt.max(x)) > 0:
        return x * b
    return x


def walrus_in_if_inside_for(x):
    total = rt.zeros([3], "float32")
    for row in x:
        if (r := rt.sum(row)) > 0:
            total = total + row * r
    return total


def walrus_counter_used_after_while(x):
    i = rt.to_tensor(0)
    while (i := i + 1) < rt.shape(x)[0]:
        x = x * 1.1
    return x, i


def walrus_in_ternary_condition(x):
    y = x if (m := rt.mean(x)) > 0 else -x
    return y + m


def walrus_in_while_and_with_break(x):
    h = x
    while (n := rt.max(rt.abs(h))) > 0.1 and n < 100:
        h = h * 0.5
        if rt.sum(h) < -1:
            break
    return h


def walrus_in_python_and_tensor_or(x, eps=0.0):
    if (e := eps) or (s := rt.sum(x)) > 0:  # noqa: F841 (the idiom: a walrus in an or)
        return x + e
    return x - 1


def walrus_in_if_inside_while(x):
    i = rt.to_tensor(0)
    acc = rt.zeros([1], "float32")
    while i < rt.shape(x)[0]:
        if (v := x[i]) > 0:
            acc = acc + v
        i += 1
    return acc


def walrus_in_and_inside_for(x, limit=0.5):
    out = rt.zeros([3], "float32")
    for row in x:
        if limit and (m := rt.max(row)) > limit:
            out = out + row / m
    return out


# ---- kind 9: ternaries whose untaken arm is nan/inf --------------------------------------


def ternary_guarding_log(x):
    return rt.log(x) if rt.min(x) > 0 else x


def ternary_guarding_sqrt(x):
    return rt.sqrt(x) if rt.min(x) >= 0 else rt.abs(x)


def ternary_guarding_division(x):
    s = rt.sum(x)
    return x / s if rt.abs(s) > 1e-3 else x


def ternary_guarding_reciprocal(x):
    y = rt.reciprocal(x) if rt.min(rt.abs(x)) > 0.1 else x * 0
    return y * 2


def nested_ternary_guards(x):
    return rt.log(x) if rt.min(x) > 0 else (rt.sqrt(-x) if rt.max(x) < 0 else x)


def ternary_with_number_arms(x):
    scale = 1.0 if rt.mean(x) > 0 else 0.0
    return x * scale


def ternary_inside_for(x):
    out = rt.zeros([3], "float32")
    for row in x:
        out = out + (rt.log(row) if rt.min(row) > 0 else row)
    return out


def _safe_log(v):
    return rt.log(v) if rt.min(v) > 0 else v - 1


def ternary_in_helper(x):
    return _safe_log(x) + _safe_log(x * 2)


def ternary_inside_expression(x):
    return x * (rt.log(x) if rt.min(x) > 0 else 1.0) + 1


def ternary_guarding_pow(x):
    return rt.pow(x, 0.5) if rt.min(x) > 0 else rt.pow(x, 2.0)


def ternary_guarding_log_of_sum(x):
    s = rt.sum(x)
    y = rt.log(s) if s > 0 else -s
    return y * x


def ternary_guarding_log_in_while(x):
    h = x + 2.0
    n = 0
    while rt.max(h) > 1.5 and n < 5:
        h = rt.log(h) if rt.min(h) > 1.0 else h * 0.5
        n += 1
    return h


P = rand(4, seed=31, low=0.1, high=1.0)
N = rand(4, seed=32, low=-1.0, high=-0.1)
MX = arr(0.5, -0.3, 0.9, -0.8)
ZS = arr(0.0, 0.2, 0.7, 0.9)
M2P = rand(3, 3, seed=33, low=0.1, high=1.0)
M2N = rand(3, 3, seed=34, low=-1.0, high=0.1)

CASES = [
    case(or_with_none_scale, [(P,), (N,)], kind="4"),
    case(or_with_number_scale, [(P,), (N,)], kind="4"),
    case(python_flag_and_tensor, [(MX,), (N,)], kind="4"),
    case(python_zero_flag_and_tensor, [(MX,), (N,)], kind="4"),
    case(not_tensor_any, [(P,), (P * 3,)], kind="4"),
    case(string_mode_and_tensor, [(P,), (N,)], kind="4"),
    case(empty_string_mode_and_tensor, [(P,), (N,)], kind="4"),
    case(empty_list_or_tensor, [(P,), (N,)], kind="4"),
    case(none_guard_with_attribute, [(P,), (N,)], kind="4"),
    case(none_guard_with_config, [(P,), (N,)], kind="4"),
    case(optional_mask_or_all, [(P,), (N * 3,)], kind="4"),
    case(while_with_python_flag_and_tensor, [(P,), (N * 3,)], kind="4"),
    case(not_of_conjunction, [(P * 3,), (N,), (P * 0.1,)], kind="4"),
    case(list_of_tensors_truthiness_and, [(P,), (N,)], kind="4"),
    case(tensor_flag_variable_then_if, [(P,), (N,)], kind="4"),
    case(chained_comparison, [(P * 0.5,), (N,), (P * 2,)], kind="4"),
    case(or_value_used_as_number, [(P,), (N,)], kind="4"),
    case(python_flag_and_tensor_in_for_body, [(M2P,), (M2N,)], kind="4", input_spec="batch"),
    case(not_tensor_in_while_test, [(P,), (N,)], kind="4"),
    case(walrus_in_if, [(P,), (N,)], kind="7"),
    case(walrus_in_while, [(P,), (N * 5,)], kind="7"),
    case(walrus_in_and, [(P,), (N,), (P * 3,)], kind="7"),
    case(walrus_in_or, [(P,), (N,), (MX,)], kind="7"),
    case(walrus_in_elif, [(P,), (MX,), (N,)], kind="7"),
    case(walrus_in_if_inside_for, [(M2P,), (M2N,)], kind="7", input_spec="batch"),
    case(walrus_counter_used_after_while, [(M2P,), (M2N[:1],)], kind="7", input_spec="batch",
         timeout=2),
    case(walrus_in_ternary_condition, [(P,), (N,)], kind="7"),
    case(walrus_in_while_and_with_break, [(P,), (N * 5,)], kind="7"),
    case(walrus_in_python_and_tensor_or, [(P,), (N,)], kind="7"),
    case(walrus_in_if_inside_while, [(P,), (MX,)], kind="7", input_spec="batch"),
    case(walrus_in_and_inside_for, [(M2P,), (M2N,)], kind="7", input_spec="batch"),
    case(ternary_guarding_log, [(P,), (MX,)], kind="9"),
    case(ternary_guarding_sqrt, [(ZS,), (MX,)], kind="9"),
    case(ternary_guarding_division, [(P,), (arr(1.0, -1.0, 0.5, -0.5),)], kind="9"),
    case(ternary_guarding_reciprocal, [(P + 0.1,), (ZS,)], kind="9"),
    case(nested_ternary_guards, [(P,), (N,), (MX,)], kind="9"),
    case(ternary_with_number_arms, [(P,), (N,)], kind="9"),
    case(ternary_inside_for, [(M2P,), (M2N,)], kind="9", input_spec="batch"),
    case(ternary_in_helper, [(P,), (N,)], kind="9"),
    case(ternary_inside_expression, [(P,), (MX,)], kind="9"),
    case(ternary_guarding_pow, [(P,), (MX,)], kind="9"),
    case(ternary_guarding_log_of_sum, [(P,), (N,)], kind="9"),
    case(ternary_guarding_log_in_while, [(P,), (N * 0.5,)], kind="9"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)

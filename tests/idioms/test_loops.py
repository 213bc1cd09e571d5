"""Idioms: variables first bound inside tensor loops and read after them, Python-valued ``if``s
inside tensor loops (kind 5); loop variables whose dtype/shape changes, Python numbers
starting loop variables (kind 10); generic loops (tensor counters, over tensors, ``enumerate``,
``zip``, nesting)."""

import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, arr, case, rand, run_case

REVERSE = True
FORWARD = False

# ---- kind 5: bound inside the loop, read after it ----------------------------------------


def value_first_set_in_for(x):
    for i in range(rt.shape(x)[0]):
        last = x[i] * 2
    return last


def value_first_set_in_while(x):
    i = rt.to_tensor(0)
    while i < rt.shape(x)[0]:
        row = x[i]
        i += 1
    return row + 1


def reverse_index_from_python_flag(x):
    out = rt.zeros([rt.shape(x)[1]], "float32")
    for i in range(x.shape[0]):
        if REVERSE:
            j = x.shape[0] - 1 - i
        else:
            j = i
        out = out * 0.5 + x[j]
    return out


def forward_index_from_python_flag(x):
    out = rt.zeros([3], "float32")
    for i in range(rt.shape(x)[0]):
        if FORWARD:
            j = i
        else:
            j = rt.shape(x)[0] - 1 - i
        out = out * 0.5 + x[j]
    return out, j


def value_first_set_in_nested_for(x):
    for i in range(rt.shape(x)[0]):
        for j in range(rt.shape(x)[1]):
            cell = x[i, j] * (i + j)
    return cell


def value_first_set_in_for_over_rows(x):
    for row in x:
        norm = rt.sqrt(rt.sum(row * row))
    return norm * 2


def set_in_both_branches_inside_loop(x):
    for row in x:
        if rt.sum(row) > 0:
            sign = rt.ones([1], "float32")
        else:
            sign = -rt.ones([1], "float32")
    return sign * x[0]


def python_mode_branch_in_tensor_while(x, mode="sum"):
    i = rt.to_tensor(0)
    acc = rt.zeros([3], "float32")
    while i < rt.shape(x)[0]:
        if mode == "sum":
            step = x[i]
        else:
            step = x[i] * x[i]
        acc = acc + step
        i += 1
    return acc, step


def loop_index_used_after(x):
    total = rt.zeros([1], "float32")
    for i in range(rt.shape(x)[0]):
        total = total + x[i]
    return total, i


def enumerate_target_used_after(x):
    for k, row in enumerate(x):  # noqa: B007 (the idiom: the targets are read after)
        pass
    return row * k


def first_set_in_if_inside_while(x):
    i = 0
    best = x[0]
    while i < rt.shape(x)[0]:
        if rt.sum(x[i]) > rt.sum(best):
            best = x[i]
            where = i
        else:
            where = -1
        i += 1
    return best, where


def first_bound_in_loop_inside_tensor_if(x):
    if rt.mean(x) > 0:
        for row in x:
            peak = rt.max(row)
    else:
        peak = rt.min(x)
    return peak * x[0]


def first_bound_in_inner_while_of_for(x):
    out = rt.zeros([3], "float32")
    for i in range(rt.shape(x)[0]):
        k = 0
        while k < 2:
            scaled = x[i] * (k + 1)
            k += 1
        out = out + scaled
    return out


# ---- kind 10: dtype / shape changes; Python numbers start loop variables -----------------


def digits_into_int32_number(x):
    s = 0
    for i in range(rt.shape(x)[0]):
        s = s * 10 + x[i]
    return s


def python_zero_accumulates_floats(x):
    total = 0
    for row in x:
        total = total + rt.sum(row)
    return total


def python_float_start_then_maximum(x):
    m = 0.0
    for i in range(rt.shape(x)[0]):
        m = rt.maximum(rt.to_tensor(m, dtype="float32"), rt.max(x[i]))
    return m


def python_int_counter_in_tensor_while(x):
    i = 0
    while i < rt.shape(x)[0]:
        i += 1
    return i


def python_bool_flag_in_loop(x):
    found = False
    for v in x:
        if v > 0.5:
            found = True
    return found


def none_start_then_tensor(x):
    best = None
    for row in x:
        if best is None:
            best = row
        else:
            best = rt.maximum(best, row)
    return best


def product_from_python_one(x):
    p = 1
    for v in x:
        p = p * v
    return p


def growing_concat_in_while(x):
    out = x[0:1]
    i = 1
    while i < rt.shape(x)[0]:
        out = rt.concat([out, x[i : i + 1] * 2])
        i += 1
    return out


def int32_sum_stays_int32(x):
    s = rt.zeros([1], "int32")
    for i in range(rt.shape(x)[0]):
        s = s + x[i]
    return s


def mean_of_python_count(x):
    count = 0
    total = rt.zeros([3], "float32")
    for row in x:
        if rt.max(row) > 0:
            total = total + row
            count += 1
    return total / max(count, 1)


def python_float_zero_accumulates(x):
    acc = 0.0
    for row in x:
        acc = acc + rt.mean(row)
    return acc


def python_int_counts_int64_hits(x):
    hits = 0
    for row in x:
        hits = hits + rt.sum(rt.cast(row > 0, "int64"))
    return hits


def rows_concatenated_over_tensor_for(x):
    acc = x[0:1] * 0
    for row in x:
        acc = rt.concat([acc, rt.unsqueeze(row, 0)])
    return acc


# ---- generic loops -----------------------------------------------------------------------


def while_with_tensor_counter(x):
    i = rt.zeros([1], "int64")
    h = x
    while i < 3:
        h = rt.tanh(h) + x
        i = i + 1
    return h


def for_over_tensor_rows(x):
    s = rt.zeros([3], "float32")
    for row in x:
        s = s + rt.exp(row)
    return s


def for_over_enumerate_weighted(x):
    s = rt.zeros([3], "float32")
    for k, row in enumerate(x):
        s = s + row * (k + 1)
    return s


def for_over_zip_of_tensors(x, y):
    s = rt.zeros([1], "float32")
    for a, b in zip(x, y):
        s = s + rt.sum(a * b)
    return s


def nested_for_with_tensor_bounds(x):
    s = rt.zeros([1], "float32")
    for i in range(rt.shape(x)[0]):
        for j in range(i + 1):
            s = s + x[i, j]
    return s


def while_else_without_break(x):
    i = 0
    s = rt.zeros([1], "float32")
    while i < rt.shape(x)[0]:
        s = s + x[i]
        i += 1
    else:
        s = s * 2
    return s


def python_loop_over_layers_inside_tensor_while(x):
    scales = [0.5, 2.0, 1.5]
    h = x
    while rt.sum(rt.abs(h)) < 10:
        for sc in scales:
            h = h * sc
    return h


def for_over_enumerate_with_start(x):
    s = rt.zeros([3], "float32")
    for k, row in enumerate(x, start=1):
        if k % 2 == 0:
            s = s + row
        else:
            s = s - row
    return s


def while_loop_with_two_tensor_carries(x):
    a = rt.sum(x)
    b = rt.zeros([1], "float32")
    while rt.abs(a) > 0.01:
        a = a * 0.5
        b = b + a
    return a, b



# ---- kind 10: loop-carried dtypes follow eager (range items, counters and Python numbers
# are Python ints eagerly: they take a tensor's dtype, they never widen it) ----------------


def enumerate_counter_into_int32(x):
    y = rt.full([1], 0, "int32")
    for i, _row in enumerate(x.numpy()):
        y = y + i
    return y


def range_item_scales_int16(x):
    acc = rt.full([2], 1, "int16")
    for k in range(rt.shape(x)[0]):
        acc = acc * 2 + k
    return acc


def python_counter_added_to_int32_rows(x):
    total = rt.zeros([3], "int32")
    n = 0
    while n < rt.shape(x)[0]:
        total = total + x[n] * n
        n += 1
    return total, n


def python_digits_over_empty_then_int32_rows(x, y):
    number = 0
    for v in x:  # no iterations: eagerly, number is still the Python 0 here
        number = number * 10 + v
    for v in y:
        number = number * 10 + v
    return number


def int_of_traced_value_added_to_int32(x):
    base = rt.full([2], 7, "int32")
    for row in x:
        base = base - int(row[0])
    return base


def length_of_collected_list_added_to_int32(x):
    kept = []
    for row in x:
        kept.append(row[0])
    return rt.full([1], 3, "int32") + len(kept)


def counter_scales_float16(x):
    h = rt.cast(x[0], "float16")
    for k in range(rt.shape(x)[0]):
        h = h + k * 0.5
    return h


def python_float_start_becomes_int(x):
    level = 0.5
    for row in x:
        level = rt.cast(level * 2 + rt.sum(row), "int64")
    return level


def float_tensor_start_becomes_int(x):
    level = rt.sum(x[0]) + 0.25
    for row in x:
        level = rt.cast(rt.floor(level + rt.sum(row)), "int64")
    return level


def int32_widened_by_int64_counter(x):
    y = rt.full([1], 2, "int32")
    k = rt.zeros([1], "int64")
    while k < rt.shape(x)[0]:
        y = y + k
        k = k + 1
    return y


def counter_or_int32_value_chosen_by_tensor_if(x):
    pick = rt.full([], -1, "int32")
    for k, row in enumerate(x):
        if rt.sum(row) > 0:
            pick = k
        else:
            pick = rt.cast(rt.sum(row) * 0, "int32")
    return pick

def zeros_sized_by_python_counter_first_set_in_loop(x):
    i = 0
    while i < rt.shape(x)[0]:
        pad = rt.zeros([1, i, 2])  # the counter's start value is a constant while typing it
        i += 1
    return pad + rt.sum(x)


M1 = rand(4, 3, seed=41, low=-1.0, high=1.0)
M2 = rand(2, 3, seed=42, low=-1.0, high=0.5)
SQ = rand(3, 3, seed=43)
DIG = arr(3, 1, 4, dtype="int32")
DIG2 = rand(3, 3, seed=44, low=0, high=9).astype("int32")
V1 = arr(0.2, 0.9, -0.3)
V2 = arr(-0.2, 0.1, -0.3)

CASES = [
    case(value_first_set_in_for, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(value_first_set_in_while, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(reverse_index_from_python_flag, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(forward_index_from_python_flag, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(value_first_set_in_nested_for, [(M1,), (M2,)], kind="5"),
    case(value_first_set_in_for_over_rows, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(set_in_both_branches_inside_loop, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(python_mode_branch_in_tensor_while, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(loop_index_used_after, [(V1,), (V2[:2],)], kind="5", input_spec="batch"),
    case(enumerate_target_used_after, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(first_set_in_if_inside_while, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(first_bound_in_loop_inside_tensor_if, [(M1 + 1,), (M2 - 1,)], kind="5",
         input_spec="batch"),
    case(first_bound_in_inner_while_of_for, [(M1,), (M2,)], kind="5", input_spec="batch"),
    case(zeros_sized_by_python_counter_first_set_in_loop, [(M1,), (M2,)], kind="5",
         input_spec="batch"),
    case(digits_into_int32_number, [(DIG,), (DIG[:2],)], kind="10", input_spec="batch"),
    case(python_zero_accumulates_floats, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(python_float_start_then_maximum, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(python_int_counter_in_tensor_while, [(M1,), (M2,)], kind="10", input_spec="batch",
         grad=False),
    case(python_bool_flag_in_loop, [(V1,), (V2,)], kind="10", input_spec="batch", grad=False),
    case(none_start_then_tensor, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(product_from_python_one, [(V1,), (V2,)], kind="10", input_spec="batch"),
    case(growing_concat_in_while, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(int32_sum_stays_int32, [(DIG,), (DIG[:1],)], kind="10", input_spec="batch"),
    case(mean_of_python_count, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(python_float_zero_accumulates, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(python_int_counts_int64_hits, [(M1,), (M2,)], kind="10", input_spec="batch",
         grad=False),
    case(rows_concatenated_over_tensor_for, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(enumerate_counter_into_int32, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(range_item_scales_int16, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(python_counter_added_to_int32_rows, [(DIG2,), (DIG2[:1],)], kind="10",
         input_spec="batch"),
    case(python_digits_over_empty_then_int32_rows, [(DIG[:0], DIG), (DIG, DIG[:1])],
         kind="10"),
    case(int_of_traced_value_added_to_int32, [(DIG2,), (DIG2[:2],)], kind="10",
         input_spec="batch"),
    case(length_of_collected_list_added_to_int32, [(M1,), (M2,)], kind="10",
         input_spec="batch"),
    case(counter_scales_float16, [(M1,), (M2,)], kind="10", input_spec="batch", grad=False),
    case(python_float_start_becomes_int, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(float_tensor_start_becomes_int, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(int32_widened_by_int64_counter, [(M1,), (M2,)], kind="10", input_spec="batch"),
    case(counter_or_int32_value_chosen_by_tensor_if, [(M1,), (M2,), (M1[:3],)], kind="10",
         input_spec="batch"),
    case(while_with_tensor_counter, [(M1,)], kind="generic"),
    case(for_over_tensor_rows, [(M1,), (M2,)], kind="generic", input_spec="batch"),
    case(for_over_enumerate_weighted, [(M1,), (M2,)], kind="generic", input_spec="batch"),
    case(for_over_zip_of_tensors, [(M1, M1 * 2), (M2, M2 + 1)], kind="generic",
         input_spec="batch"),
    case(nested_for_with_tensor_bounds, [(SQ,), (SQ[:2],)], kind="generic", input_spec="batch"),
    case(while_else_without_break, [(V1,), (V2[:1],)], kind="generic", input_spec="batch"),
    case(python_loop_over_layers_inside_tensor_while, [(V1,), (V2,)], kind="generic"),
    case(for_over_enumerate_with_start, [(M1,), (M2,)], kind="generic", input_spec="batch"),
    case(while_loop_with_two_tensor_carries, [(M1,), (M2,)], kind="generic"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)

"""Return / break / continue lowering under tensor conditions, in the style of AutoGraph's
return-statement tests and Paddle dy2static's return / break-continue tests (written here
from their ideas). Every function is run eagerly and through ``autostatic.to_static``."""

from __future__ import annotations

import autostatic_runtime as rt


def ret_in_if(x):
    if rt.mean(x) > 0:
        return x + 1
    return x - 1


def ret_in_both_branches(x):
    if rt.mean(x) > 0:
        y = x * 2
        return y
    else:
        y = x * 3
        return y - 1


def ret_nested_ifs(x):
    if rt.sum(x) > 0:
        if rt.max(x) > 2:
            return x * 10
        x = x + 1
    elif rt.min(x) < -2:
        return x * -10
    x = x * 2
    return x


def ret_after_ret_dead_code(x):
    if rt.mean(x) > 1:
        return x
        x = x + 10086  # (dead code after return)
    return x + 1


def ret_in_tensor_while(x):
    i = rt.zeros([1], "int64")
    while i < 10:
        i += 1
        if rt.sum(x) + i.astype("float32") > 6:
            return x + i.astype("float32")
    return x - 100


def ret_in_for_range_python(x):
    for i in range(6):
        x = x + 1
        if rt.mean(x) > 4:
            return x * 2
    return x


def ret_in_nested_loops(x):
    for i in range(3):
        for j in range(3):
            if rt.sum(x) > 8:
                return x - i * 10 - j
            x = x + 1
    return x


def ret_tuple(x):
    if rt.mean(x) > 0:
        return x, x + 1
    return x - 1, x


def continue_in_python_for(x):
    for i in range(8):
        x = x + 1
        if rt.sum(x) > 6:
            continue
            x = x + 10086  # noqa
        x = x + i
    return x


def continue_at_end(x):
    for i in range(8):
        x = x + 1
        if rt.mean(x) > 3:
            continue
    return x


def continue_in_tensor_while(x):
    i = rt.zeros([1], "int32")
    while i < 10:
        i += 1
        if i > 5:
            continue
            x = x + 10086  # noqa
        x = x + i.astype("float32")
    return x


def break_in_python_for(x):
    for i in range(10):
        x = x + 1
        if rt.sum(x) > 12:
            break
            x = x + 10086  # noqa
        x = x + i
    return x


def break_in_tensor_while(x):
    i = rt.zeros([1], "int32")
    while i < 10:
        if i > 5:
            break
            x = x + 10086  # noqa
        x = x + i.astype("float32")
        i += 1
    return x


def break_and_continue(x):
    a = rt.zeros([1], "int32")
    for i in range(1, 10):
        if a <= 4:
            x = x + 1
            a += 1
            continue
        else:
            x = x + 1000
            break
        x = x + 10086
    return x


def break_on_data(x):
    for i in range(10):
        if rt.sum(x) > 5:
            break
            x = x + 10086  # noqa
        x = x + i
        if i < 3:
            x = x * 2
    return x


def break_in_else_branch_loop(x):
    if False:
        pass
    else:
        for i in range(0, 10):
            if rt.mean(x) > 5:
                x = x + 1
                break
            x = x + i
    return x


def while_with_break_then_return(x):
    i = rt.zeros([1], "int64")
    total = rt.zeros([1])
    while i < 20:
        i += 1
        total = total + rt.sum(x)
        if total > 10:
            break
    if total > 15:
        return total * 2
    return total


def for_over_tensor_rows_break(x):
    acc = rt.zeros([2])
    for row in x:
        if rt.sum(row) < 0:
            break
        acc = acc + row
    return acc


def for_over_tensor_rows_return(x):
    acc = rt.zeros([2])
    for row in x:
        if rt.sum(row) > 5:
            return acc + 100
        acc = acc + row
    return acc


def for_range_tensor_continue(x, n):
    s = rt.zeros([1])
    for i in range(n):
        if i % 2 == 0:
            continue
        s = s + x[0] * i
    return s


def while_tensor_ret_break_continue(x):
    i = rt.zeros([1], "int64")
    s = rt.zeros([1])
    while i < 12:
        i += 1
        if i % 3 == 0:
            continue
        s = s + rt.sum(x)
        if s > 20:
            return s * -1
        if s < -20:
            break
    return s


def early_returns_dispatch(x):
    m = rt.mean(x)
    if m > 3:
        return x * 3
    if m > 2:
        return x * 2
    if m > 1:
        return x + 1
    if m > 0:
        return x
    return x * 0


def return_in_loop_with_else(x):
    i = 0
    while i < 4:
        i += 1
        if rt.sum(x) > 10:
            return x - 1
        x = x + 2
    else:
        x = x * 100
    return x


def nested_tensor_whiles_inner_break(x):
    i = rt.zeros([1], "int64")
    s = rt.zeros([1])
    while i < 4:
        i += 1
        j = rt.zeros([1], "int64")
        while j < 5:
            j += 1
            if j > i:
                break
            s = s + rt.mean(x)
        s = s + 0.5
    return s


def nested_tensor_whiles_inner_return(x):
    i = rt.zeros([1], "int64")
    s = rt.zeros([1])
    while i < 4:
        i += 1
        j = rt.zeros([1], "int64")
        while j < 3:
            j += 1
            s = s + rt.mean(x)
            if s > 7:
                return s * 10
    return s


def python_for_with_tensor_while_return(x):
    for k in range(3):
        i = rt.zeros([1], "int64")
        while i < 3:
            i += 1
            x = x + k
            if rt.sum(x) > 9:
                return x
    return -x


def continue_then_break_same_loop(x):
    s = rt.zeros([1])
    for i in range(10):
        v = x[0] * i
        if v < 2:
            continue
        if v > 12:
            break
        s = s + v
    return s


def return_loop_var(x):
    found = rt.zeros([1])
    for i in range(5):
        found = x * i
        if rt.sum(found) > 6:
            return found
    return found + 1000


def ternary_and_return(x):
    y = x * 2 if rt.mean(x) > 1 else x - 2
    if rt.max(y) > 3:
        return y
    return y * 0.5


def walrus_in_tensor_if_return(x):
    if (m := rt.mean(x)) > 1:
        return x + m
    return x - m


def while_tensor_flag_loop(x):
    done = rt.zeros([1], "bool")
    i = rt.zeros([1], "int64")
    while rt.logical_not(done):
        i += 1
        x = x * 1.5
        if rt.sum(x) > 10:
            done = rt.ones([1], "bool")
        if i > 8:
            break
    return x


def while_with_inner_python_break_and_return(x):
    i = rt.zeros([1], "int64")
    while i < 5:
        i += 1
        for j in range(3):
            if rt.sum(x) * j > 4:
                break
            x = x + 0.5
        if rt.mean(x) > 3:
            return x * 10
    return x


def rows_with_inner_continue_then_break(x):
    s = rt.zeros([1])
    for row in x:
        for j in range(2):
            if rt.sum(row) > 3:
                continue
            s = s + rt.sum(row) * j
        if s > 5:
            break
    return s


def return_in_else_branch_tensor_while(x):
    if rt.mean(x) > 0:
        if rt.max(x) > 5:
            return x
        else:
            x = x * 2
    else:
        i = rt.zeros([1], "int64")
        while i < 3:
            i += 1
            x = x - 1
            if rt.min(x) < -5:
                return x * 0
    return x + 1


def while_else_continue_break(x):
    out = x
    k = 0
    while k < 4:
        k += 1
        if rt.mean(out) > 2:
            out = out - 1
            continue
        if rt.mean(out) < -2:
            break
        out = out * 1.5
    else:
        out = out + 100
    return out


def helper_with_returns_in_loop(x):
    def helper(v):
        if rt.mean(v) > 1:
            return v * 2
        return v - 3

    total = rt.zeros_like(x)
    for i in range(3):
        total = total + helper(x + i)
        if rt.sum(total) > 20:
            return total
    return -total


def while_over_dynamic_length_jumps(x):
    y = x
    n = rt.shape(x)[0]
    i = rt.zeros([1], "int64")
    while i < n:
        if x[i] < 0:
            y = y + x[i]
            i += 1
            continue
        if x[i] > 5:
            return y * 3
        y = y - 1
        i += 1
    return y

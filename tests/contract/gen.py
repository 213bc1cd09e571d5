"""Generated adversarial functions (source text) for the size and speed checks."""

from __future__ import annotations


def sequential_returns(n: int) -> str:
    body = "".join(
        f"    if k == {j}:\n        y = x + {j}\n        return y * 2\n" for j in range(n)
    )
    return f"def f(k, x):\n{body}    return x\n"


def elif_chain(n: int) -> str:
    body = "    if k == 0:\n        return 0\n" + "".join(
        f"    elif k == {j}:\n        return x * {j}\n" for j in range(1, n)
    )
    return f"def f(k, x):\n{body}    else:\n        return -1\n"


def nested_ifs(depth: int) -> str:
    lines = ["def f(x):"]
    for d in range(depth):
        ind = "    " * (d + 1)
        lines.append(f"{ind}if x > {d}:")
        lines.append(f"{ind}    x = x - 1")
        lines.append(f"{ind}    if x == {d * 7}:")
        lines.append(f"{ind}        return {d}")
    lines.append("    " * (depth + 1) + "return x")
    lines.append("    return -x")
    return "\n".join(lines) + "\n"


def nested_loops(depth: int) -> str:
    lines = ["def f(xs, t):", "    acc = 0"]
    for d in range(depth):
        ind = "    " * (d + 1)
        kind = d % 3
        if kind == 0:
            lines.append(f"{ind}for i{d} in xs:")
        elif kind == 1:
            lines.append(f"{ind}i{d} = 0")
            lines.append(f"{ind}while i{d} < t:")
            lines.append(f"{ind}    i{d} += 1")
        else:
            lines.append(f"{ind}for i{d} in range(t):")
        lines.append(f"{ind}    if i{d} == t:")
        lines.append(f"{ind}        return acc")
        lines.append(f"{ind}    if i{d} < 0:")
        lines.append(f"{ind}        continue")
        lines.append(f"{ind}    if acc > 100:")
        lines.append(f"{ind}        break")
        lines.append(f"{ind}    acc += i{d}")
    lines.append("    return acc")
    return "\n".join(lines) + "\n"


def mixed_blocks(depth: int) -> str:
    """if/for/while/try/with/match nested in turn, each with a jump."""
    lines = ["def f(x, xs, cm):", "    r = 0"]
    ind = "    "
    for d in range(depth):
        kind = d % 6
        if kind == 0:
            lines.append(f"{ind}if x > {d}:")
        elif kind == 1:
            lines.append(f"{ind}for v{d} in xs:")
            lines.append(f"{ind}    if v{d} == {d}:")
            lines.append(f"{ind}        continue")
        elif kind == 2:
            lines.append(f"{ind}while r < {d + 10}:")
            lines.append(f"{ind}    r += 1")
            lines.append(f"{ind}    if r == {d}:")
            lines.append(f"{ind}        break")
        elif kind == 3:
            lines.append(f"{ind}try:")
        elif kind == 4:
            lines.append(f"{ind}with cm:")
        else:
            lines.append(f"{ind}match x:")
            lines.append(f"{ind}    case {d}:")
            lines.append(f"{ind}        return r")
            lines.append(f"{ind}    case _:")
            ind += "    "
        ind += "    "
        lines.append(f"{ind}if r == {d * 3}:")
        lines.append(f"{ind}    return r + {d}")
    lines.append(f"{ind}r += x")
    # close the try blocks
    out = []
    for line in lines:
        out.append(line)
    # add except clauses for every try (walk back)
    result = []
    ind_try = []
    for line in out:
        result.append(line)
        if line.strip() == "try:":
            ind_try.append(line[: len(line) - len(line.lstrip())])
    for t in reversed(ind_try):
        result.append(f"{t}except ValueError:")
        result.append(f"{t}    return -1")
    result.append("    return r")
    return "\n".join(result) + "\n"


def many_breaks_continues(n: int) -> str:
    lines = ["def f(xs, t):", "    out = []", "    for x in xs:"]
    for j in range(n):
        lines.append(f"        if x == t + {j}:")
        lines.append("            break" if j % 2 else "            continue")
        lines.append(f"        out.append(x * {j})")
    lines.append("    else:")
    lines.append("        out.append(None)")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def loops_left_by_return(n: int) -> str:
    lines = ["def f(xs, t):"]
    for j in range(n):
        lines.append("    for i, x in enumerate(xs):")
        lines.append(f"        if x == t + {j}:")
        lines.append(f"            return i + {j}")
    lines.append("    return -1")
    return "\n".join(lines) + "\n"


def comprehensions_lambdas(n: int) -> str:
    lines = ["def f(xs, k):"]
    for j in range(n):
        lines.append(f"    g{j} = lambda v, j={j}: v * j if v > k else -v")
        lines.append(f"    a{j} = [g{j}(x) for x in xs if x % {j + 2}]")
        lines.append(f"    if sum(a{j}) > {j}:")
        lines.append(f"        xs = [y for y in a{j} if (z := y) > 0] or xs")
        lines.append("        if not xs:")
        lines.append(f"            return a{j}")
    lines.append("    return xs")
    return "\n".join(lines) + "\n"


def nested_functions(n: int) -> str:
    lines = ["def f(x):", "    total = 0"]
    for j in range(n):
        lines += [
            f"    def h{j}(v):",
            "        nonlocal total",
            f"        if v > {j}:",
            "            total += v",
            "            return v",
            "        for q in range(v):",
            f"            if q == {j}:",
            "                return q",
            "        return None",
            f"    if h{j}(x) is None:",
            f"        x += {j}",
        ]
    lines.append("    return x, total")
    return "\n".join(lines) + "\n"


def realistic_50() -> str:
    return '''def f(x, n, k):
    """A 50-line function with nested control flow."""
    total = 0
    acc = []
    i = 0
    while i < n:
        if x > i:
            total += i
            if total > 10:
                break
        elif x == i:
            total -= 1
        else:
            acc.append(i)
        i += 1
    while k > 0:
        k -= 1
        if k % 2 == 0:
            total += k
        else:
            total -= 1
    if total > 100 and x > 0:
        total = 100
    elif total < -100 or x < 0:
        total = -100
    y = total if total > 0 else -total
    z = 0
    while z < 3:
        z += 1
        if z == 2:
            continue
        y += z
    if y > 50:
        result = y - 50
    elif y > 20:
        result = y - 20
    else:
        result = y
    for v in acc:
        result += v
    if not acc:
        result = result * 2
    count = 0
    while count < 2 and result > 0:
        count += 1
        result -= 1
    for j in range(k):
        if j > result:
            return j
    return result + len(acc)
'''


def async_and_generators(n: int) -> str:
    lines = ["async def f(xs):", "    out = []"]
    for j in range(n):
        lines += [
            "    for x in xs:",
            f"        if x == {j}:",
            "            break",
            "        out.append(x)",
            "    async with xs:",
            f"        if len(out) > {j}:",
            "            return out",
        ]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def classes(n: int) -> str:
    lines = ["def f(x):"]
    for j in range(n):
        lines += [
            f"    class C{j}:",
            "        def m(self, v):",
            f"            if v > {j}:",
            "                return v",
            "            while v < 0:",
            "                v += 1",
            "                if v == -3:",
            "                    break",
            "            return -v",
            f"    if C{j}().m(x) == {j}:",
            "        return x",
        ]
    lines.append("    return None")
    return "\n".join(lines) + "\n"


def generator_fn(n: int) -> str:
    lines = ["def f(xs):"]
    for j in range(n):
        lines += [
            "    for x in xs:",
            f"        if x == {j}:",
            "            return",
            "        if x < 0:",
            "            continue",
            "        yield x",
        ]
    return "\n".join(lines) + "\n"


def decorators(n: int) -> str:
    lines = ["def deco(fn):", "    return fn", "def deco2(k):", "    return lambda fn: fn",
             "@deco", "@deco2(3)", "def f(x):"]
    for j in range(n):
        lines += [f"    if x == {j}:", f"        return {j}"]
    lines.append("    return x")
    return "\n".join(lines) + "\n"


def try_heavy(n: int) -> str:
    lines = ["def f(xs):", "    out = []", "    for x in xs:"]
    for j in range(n):
        lines += [
            "        try:",
            f"            if x == {j}:",
            "                return out",
            f"            if x == -{j}:",
            "                continue",
            "        except ValueError:",
            "            break",
            "        finally:",
            "            out.append(x)",
        ]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def while_else_nest(depth: int) -> str:
    lines = ["def f(n):", "    r = 0"]
    for d in range(depth):
        ind = "    " * (d + 1)
        lines += [f"{ind}i{d} = n", f"{ind}while i{d} > 0:", f"{ind}    i{d} -= 1",
                  f"{ind}    if i{d} == {d}:", f"{ind}        break",
                  f"{ind}    r += 1"]
    for d in reversed(range(depth)):
        ind = "    " * (d + 1)
        lines += [f"{ind}else:", f"{ind}    r -= {d}"]
        if d % 2:
            lines += [f"{ind}if r > {d * 10}:", f"{ind}    return r"]
    lines.append("    return r")
    return "\n".join(lines) + "\n"


def nested_defs(depth: int) -> str:
    """Functions nested in functions, each after an early return."""
    lines = ["def f(x):"]
    for k in range(depth):
        ind = "    " * (k + 1)
        lines += [f"{ind}if x == {k}:", f"{ind}    return {k}", f"{ind}def g{k}(x):"]
    lines += ["    " * (depth + 1) + "return x"]
    for k in reversed(range(depth)):
        lines += ["    " * (k + 1) + f"return g{k}(x - 1)"]
    return "\n".join(lines) + "\n"


def defs_after_return(n: int) -> str:
    lines = ["def f(x):", "    if x:", "        return 1"]
    for k in range(n):
        lines += [f"    def g{k}(v):", "        if v > 0:", "            return v",
                  "        while v < 0:", "            v += 1", "            if v == -3:",
                  "                break", "        return -v"]
    lines += ["    return g0(x)"]
    return "\n".join(lines) + "\n"


FAMILIES = {
    "sequential_returns_12": lambda: sequential_returns(12),
    "sequential_returns_60": lambda: sequential_returns(60),
    "elif_chain_40": lambda: elif_chain(40),
    "nested_ifs_18": lambda: nested_ifs(18),
    "nested_loops_6": lambda: nested_loops(6),
    "nested_loops_12": lambda: nested_loops(12),
    "mixed_blocks_12": lambda: mixed_blocks(12),
    "many_breaks_continues_20": lambda: many_breaks_continues(20),
    "loops_left_by_return_20": lambda: loops_left_by_return(20),
    "comprehensions_lambdas_10": lambda: comprehensions_lambdas(10),
    "nested_functions_6": lambda: nested_functions(6),
    "realistic_50": realistic_50,
    "async_6": lambda: async_and_generators(6),
    "classes_5": lambda: classes(5),
    "generator_8": lambda: generator_fn(8),
    "decorators_10": lambda: decorators(10),
    "try_heavy_8": lambda: try_heavy(8),
    "while_else_nest_8": lambda: while_else_nest(8),
    "nested_defs_3": lambda: nested_defs(3),
    "nested_defs_8": lambda: nested_defs(8),
    "defs_after_return_1": lambda: defs_after_return(1),
    "nested_loops_3": lambda: nested_loops(3),
}

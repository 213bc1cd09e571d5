"""Random control-flow programs (loops with else, del, try, break/continue, early
returns, walrus, match) give the same result or exception with the converted body forced as
written. Our own generator; derandomized, so deterministic."""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile
import traceback

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autostatic
import autostatic_runtime.convert_ops as convert_ops
from tests.contract.sizes import render

NAMES = ("a", "b", "c")
_counter = itertools.count()
_DIR = tempfile.mkdtemp(prefix="contract_rand_")


@st.composite
def expr(draw):
    v = draw(st.sampled_from(NAMES + ("k",)))
    return draw(st.sampled_from([
        f"{v} > {draw(st.integers(0, 3))}",
        f"{v} % 2",
        f"({v} := {v} + 1) > 2" if v != "k" else "k > 1",
        f"{v} == k",
        f"not {v}",
        f"{v} and k",
    ]))


@st.composite
def block(draw, depth, in_loop):
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out.extend(draw(stmt(depth, in_loop)))
    return out


@st.composite
def stmt(draw, depth, in_loop):
    kinds = ["assign", "aug", "del", "return", "append"]
    if in_loop:
        kinds += ["break", "continue"]
    if depth < 3:
        kinds += ["if", "for", "while", "try", "match", "with", "closure", "comprehension"]
    kind = draw(st.sampled_from(kinds))
    v = draw(st.sampled_from(NAMES))
    e = draw(expr())
    if kind == "assign":
        return [f"{v} = {draw(st.sampled_from(NAMES + ('k', '0', '5')))}"]
    if kind == "aug":
        return [f"{v} += {draw(st.integers(1, 3))}"]
    if kind == "del":
        return [f"del {v}"]
    if kind == "return":
        return [f"if {e}:", [f"return ({v}, k)"]]
    if kind == "append":
        return [f"log.append({v})"]
    if kind in ("break", "continue"):
        return [f"if {e}:", [kind]]
    if kind == "if":
        res = [f"if {e}:", draw(block(depth + 1, in_loop))]
        if draw(st.booleans()):
            res += ["else:", draw(block(depth + 1, in_loop))]
        return res
    if kind == "for":
        it = draw(st.sampled_from(["range(k)", "[]", "range(2)", "log[:]"]))
        res = [f"for {v} in {it}:", draw(block(depth + 1, True))]
        if draw(st.booleans()):
            res += ["else:", draw(block(depth + 1, in_loop))]
        return res
    if kind == "while":
        c = f"w{depth}"
        res = [f"{c} = 0", f"while {c} < 3:", [f"{c} += 1"] + draw(block(depth + 1, True))]
        if draw(st.booleans()):
            res += ["else:", draw(block(depth + 1, in_loop))]
        return res
    if kind == "with":
        return ["with suppress(NameError, UnboundLocalError):", draw(block(depth + 1, in_loop))]
    if kind == "closure":
        return [f"def g{depth}():", [f"nonlocal {v}", f"{v} = {v} + 1", f"return {v}"],
                "try:", [f"log.append(g{depth}())"], "except NameError:", ["log.append('ne')"]]
    if kind == "comprehension":
        return [f"log.append([{v} * 2 for {v} in range(k) if {v} != c])",
                "log.append(sum(x for x in range(k) if (y := x) > 0))"]
    if kind == "match":
        return [f"match {v}:", ["case 0 | 1:", draw(block(depth + 2, in_loop)),
                                "case int(n) if n > k:", draw(block(depth + 2, in_loop)),
                                "case _:", ["pass"]]]
    res = ["try:", draw(block(depth + 1, in_loop)),
           "except (NameError, UnboundLocalError, TypeError):", draw(block(depth + 1, in_loop))]
    if draw(st.booleans()):
        res += ["finally:", [f"log.append({draw(st.integers(0, 9))})"]]
    return res


@st.composite
def programs(draw):
    body = ["log = []", "a = 1", "b = 2"] + draw(block(0, False)) + ["return (a, b, log)"]
    return "from contextlib import suppress\n\n\ndef f(k, c):\n" + render(body)


def load(source):
    name = f"contract_rand_{next(_counter)}"
    path = os.path.join(_DIR, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def outcome(fn, *args):
    try:
        return ("ok", repr(fn(*args)))
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return ("raised", type(exc).__name__, str(exc), tb.lineno)


def check(source):
    fn = load(source)
    converted = autostatic.convert(fn)
    old = convert_ops.tracing
    for k, c in ((0, 0), (1, 3), (3, -1), (4, 2)):
        want = outcome(fn, k, c)
        convert_ops.tracing = True
        try:
            got = outcome(converted, k, c)
        finally:
            convert_ops.tracing = old
        assert got == want, f"f({k}, {c}): converted {got} != {want}\n{source}"


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_forced_converted(source):
    check(source)

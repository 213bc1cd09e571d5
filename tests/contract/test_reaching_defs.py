"""Reaching definitions must be sound: at every statement a program reaches, each
name the analysis calls defined (``DEFINED_IN``) is bound, and each bound local is among the
names it calls maybe-defined (``MAYBE_DEFINED_IN``). Checked by running the programs under
``sys.settrace``: hand-written cases (the issue's ``del`` in a ``for ... else`` whose loop
never runs) and programs drawn by a generator of our own (derandomized, so deterministic)."""

from __future__ import annotations

import dis
import sys
import textwrap

import gast
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autostatic.pyct import analyze, anno
from tests.contract.sizes import render

_CLEANUP = {"COPY", "POP_EXCEPT", "RERAISE", "PUSH_EXC_INFO", "WITH_EXCEPT_START", "POP_TOP",
            "END_FOR", "JUMP_BACKWARD", "NOP"}


def _statements(body, out):
    for s in body:
        out.append(s)
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            _statements(getattr(s, field, []) or [], out)
        for h in getattr(s, "handlers", []):
            _statements(h.body, out)
    return out


def _events(source, args):
    ns: dict = {}
    exec(compile(source, "<contract-rd>", "exec"), ns)
    code = ns["f"].__code__
    ops = {i.offset: i.opname for i in dis.get_instructions(code)}
    events = []

    def local(frame, event, arg):
        if event == "line" and ops.get(frame.f_lasti) not in _CLEANUP:
            if not events or events[-1][0] != frame.f_lineno:
                events.append((frame.f_lineno, frozenset(frame.f_locals)))
        return local

    def glob(frame, event, arg):
        return local if frame.f_code is code else None

    old = sys.gettrace()
    sys.settrace(glob)
    try:
        ns["f"](*args)
    except Exception:  # noqa: BLE001 - the program's own failure ends it
        pass
    finally:
        sys.settrace(old)
    return events


def check_sound(source: str, args=(1, 2)) -> None:
    fn = gast.parse(source).body[0]
    analyze(fn)
    local = anno.get(fn, anno.FUNCTION_INFO).locals
    by_line = {}
    for s in _statements(fn.body, []):
        by_line.setdefault(s.lineno, s)
    for line, bound in _events(source, args):
        node = by_line.get(line)
        if node is None or isinstance(node, (gast.With, gast.Try)):
            continue
        must = anno.get(node, anno.DEFINED_IN)
        may = anno.get(node, anno.MAYBE_DEFINED_IN)
        if isinstance(node, gast.While):
            must = anno.get(node, anno.LOOP_DEFINED_IN_HEADER)
            may = anno.get(node, anno.LOOP_MAYBE_DEFINED_IN_HEADER)
        elif isinstance(node, gast.For):
            must = must & anno.get(node, anno.LOOP_DEFINED_IN_HEADER)
            may = may | anno.get(node, anno.LOOP_MAYBE_DEFINED_IN_HEADER)
        assert must <= bound, f"line {line}: {sorted(must - bound)} said bound\n{source}"
        unexpected = sorted(bound & local - may)
        assert bound & local <= may, f"line {line}: {unexpected} unexpected\n{source}"


HAND_WRITTEN = [
    # the case: `del b` in the else of a for that never runs, twice
    """
    def f(a, b):
        i = 0
        while i < 3:
            i += 1
            for b in []:
                pass
            else:
                del b
        return b
    """,
    """
    def f(a, b):
        for _ in range(2):
            for c in []:
                b = 1
            else:
                del b
        return a
    """,
    """
    def f(a, b):
        n = 0
        while n < 2:
            n += 1
            while a > 5:
                a -= 1
            else:
                del b
        return n
    """,
    """
    def f(a, b):
        for i in range(3):
            try:
                if i:
                    del a
                c = a
            except NameError:
                del b
            else:
                c = 2
        return c
    """,
    """
    def f(a, b):
        for i in range(3):
            if i == 1:
                del a
                continue
            if i == 2:
                a = 5
                break
            d = a
        else:
            d = 0
        return d
    """,
    """
    def f(a, b):
        i = 0
        while True:
            i += 1
            match i:
                case 1:
                    del b
                case 2:
                    b = a
                case _:
                    break
        return b
    """,
    """
    def f(a, b):
        for x in [1, 2]:
            try:
                del b
            finally:
                b = x
        return b
    """,
    """
    def f(a, b):
        i = 0
        while i < 2:
            i += 1
            try:
                del a
            except NameError:
                continue
            finally:
                e = 1
        return e
    """,
    """
    def f(a, b):
        for a in []:
            del b
        else:
            for c in [1]:
                break
            else:
                del a
        return a
    """,
    """
    def f(a, b):
        if (w := a) > 0:
            del a
        for b in range(w):
            del w
            break
        return b
    """,
]


def test_hand_written_programs_are_sound():
    for src in HAND_WRITTEN:
        src = textwrap.dedent(src).strip("\n") + "\n"
        for args in ((1, 2), (0, 2), (7, 2)):
            check_sound(src, args)


# --- a generator of our own: loops, else clauses, del, try, break/continue -----------------

NAMES = ("a", "b", "c")


@st.composite
def blocks(draw, depth=0, in_loop=False):
    n = draw(st.integers(1, 3))
    out = []
    for _ in range(n):
        out.extend(draw(stmts(depth, in_loop)))
    return out


@st.composite
def stmts(draw, depth, in_loop):
    kinds = ["assign", "del", "guarded_del"]
    if in_loop:
        kinds += ["break", "continue"]
    if depth < 3:
        kinds += ["if", "for", "for_empty", "while", "try"]
    kind = draw(st.sampled_from(kinds))
    v = draw(st.sampled_from(NAMES))
    if kind == "assign":
        return [f"{v} = {draw(st.sampled_from(NAMES + ('1',)))}"] if False else [f"{v} = 1"]
    if kind == "del":
        return [f"del {v}"]
    if kind == "guarded_del":
        return ["try:", [f"del {v}"], "except NameError:", ["pass"]]
    if kind in ("break", "continue"):
        return ["if k % 2:", [kind]]
    if kind == "if":
        res = [f"if k > {draw(st.integers(0, 3))}:", draw(blocks(depth + 1, in_loop))]
        if draw(st.booleans()):
            res += ["else:", draw(blocks(depth + 1, in_loop))]
        return res
    if kind in ("for", "for_empty"):
        it = "[]" if kind == "for_empty" else f"range({draw(st.integers(0, 2))})"
        res = [f"for {v} in {it}:", draw(blocks(depth + 1, True))]
        if draw(st.booleans()):
            res += ["else:", draw(blocks(depth + 1, in_loop))]
        return res
    if kind == "while":
        c = f"w{depth}"
        res = [f"{c} = 0", f"while {c} < 2:", [f"{c} += 1"] + draw(blocks(depth + 1, True))]
        if draw(st.booleans()):
            res += ["else:", draw(blocks(depth + 1, in_loop))]
        return res
    return ["try:", draw(blocks(depth + 1, in_loop)), "except NameError:",
            draw(blocks(depth + 1, in_loop))]


@st.composite
def programs(draw):
    body = ["k = 0", "while k < 3:", ["k += 1"] + draw(blocks(1, True))]
    return "def f(a, b):\n" + render(body) + "    return k\n"


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_are_sound(source):
    check_sound(source)

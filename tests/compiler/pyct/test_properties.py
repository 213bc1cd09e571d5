"""Soundness of liveness and reaching definitions on random programs, checked by running them.

- Liveness: if ``v`` is not in ``LIVE_OUT(S)`` (``LIVE_IN(S)``), then overwriting ``v`` with a
  sentinel, or deleting it, right after (before) ``S`` cannot change the program's result.
- Reaching definitions: whenever a statement starts (a ``line`` trace event), every name in its
  ``DEFINED_IN`` is bound and every bound name is in its ``MAYBE_DEFINED_IN`` (the loop-header
  sets for ``while`` lines, which run once per iteration; either set for ``for`` lines).
"""

from __future__ import annotations

import dis
import os
import sys

import gast
from hypothesis import HealthCheck, example, given, settings

from autostatic.pyct import analyze, anno

from . import randprog
from .helpers import statements

# Deterministic by default (the same examples on every run and in CI: a failure is never
# luck); PYCT_EXPLORE=1 PYCT_EXAMPLES=5000 for a long random search.
SETTINGS = settings(
    max_examples=int(os.environ.get("PYCT_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=os.environ.get("PYCT_EXPLORE", "") != "1",
    database=None if os.environ.get("PYCT_EXPLORE", "") != "1" else settings().database,
)

S = randprog.Stmt


def _loop(*body: randprog.Stmt, orelse=None, head="while i0 < 3 and 1:") -> list:
    blocks = [("", list(body))] + ([("else:", orelse)] if orelse is not None else [])
    return [S("i0 = 0"), S(head, blocks)]


# Programs the random search once found: a definition that changes only the state *before* a
# node left part-way (an exception inside it, an exhausted ``for`` step) on a later iteration.
FOUND = [
    # `a = d` raises NameError on every iteration; the handler's `del a` fails on the second
    _loop(
        S("i0 += 1"),
        S(
            "try:",
            [
                ("", [S("a = d"), S("break", jump=True), S("del a")]),
                ("except (NameError, ZeroDivisionError):", [S("del a")]),
            ],
        ),
    ),
    # a `for` that never runs: its `else` deletes `b`, which the second iteration lacks
    _loop(S("i0 += 1"), S("for b in []:", [("", [S("pass")]), ("else:", [S("del b")])])),
    _loop(S("i0 += 1"), S("for c in []:", [("", [S("b = 1")]), ("else:", [S("del b")])])),
]


def _analyzed(body: list[randprog.Stmt]) -> tuple[str, gast.AST, dict[int, gast.AST]]:
    source = randprog.render(body)
    fn = gast.parse(source).body[0]
    analyze(fn)
    by_line = {}
    for s in statements(fn):
        if not isinstance(s, gast.match_case):
            by_line.setdefault(s.lineno, s)
    return source, fn, by_line


def _perturbations(v: str) -> list[str]:
    return [f"{v} = SENTINEL", f"{v} = 0; del {v}"]


@SETTINGS
@given(randprog.programs())
def test_liveness_is_sound(body):
    source, fn, by_line = _analyzed(body)
    expected = randprog.run(source)
    local = anno.get(fn, anno.FUNCTION_INFO).locals
    for stmt in randprog.walk(body):
        node = by_line[stmt.line]
        places = [("before", anno.get(node, anno.LIVE_IN))]
        if not stmt.jump:
            places.append(("after", anno.get(node, anno.LIVE_OUT)))
        for where, live in places:
            for v in sorted(local - live):
                for code in _perturbations(v):
                    changed = randprog.render(body, (stmt, where, code))
                    got = randprog.run(changed)
                    assert got == expected, (
                        f"{v!r} is not live {where} line {stmt.line}, but `{code}` there "
                        f"changes the result {expected} -> {got}\n{source}"
                    )


# exception-cleanup code carries the line of the last statement before it: not a statement start
_CLEANUP = {"COPY", "POP_EXCEPT", "RERAISE", "PUSH_EXC_INFO", "WITH_EXCEPT_START"}


def _trace_bound(source: str) -> list[tuple[int, frozenset[str]]]:
    """(line, names bound) at every line event of f that starts a statement."""
    events: list[tuple[int, frozenset[str]]] = []
    ns = {"suppress": randprog.contextlib.suppress, "SENTINEL": randprog.SENTINEL}
    exec(compile(source, "<randprog>", "exec"), ns)
    code = ns["f"].__code__
    ops = {i.offset: i.opname for i in dis.get_instructions(code)}

    def local(frame, event, arg):
        if event == "line" and ops.get(frame.f_lasti) not in _CLEANUP:
            line = frame.f_lineno
            if not events or events[-1][0] != line:  # a jump inside one line: same statement
                events.append((line, frozenset(frame.f_locals)))
        return local

    def global_(frame, event, arg):
        return local if frame.f_code is code else None

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        ns["f"](1, 2)
    except Exception:  # noqa: BLE001 - the program's own failure
        pass
    finally:
        sys.settrace(old)
    return events


@SETTINGS
@given(randprog.programs())
@example(FOUND[0])
@example(FOUND[1])
@example(FOUND[2])
def test_reaching_definitions_are_sound(body):
    source, fn, by_line = _analyzed(body)
    local = anno.get(fn, anno.FUNCTION_INFO).locals
    for line, bound in _trace_bound(source):
        node = by_line.get(line)
        if node is None or isinstance(node, (gast.With, gast.Try)):
            continue  # `with` lines also run __exit__; `try` lines are not statements
        must = anno.get(node, anno.DEFINED_IN)
        may = anno.get(node, anno.MAYBE_DEFINED_IN)
        if isinstance(node, gast.While):  # every test runs at the header
            must = anno.get(node, anno.LOOP_DEFINED_IN_HEADER)
            may = anno.get(node, anno.LOOP_MAYBE_DEFINED_IN_HEADER)
        elif isinstance(node, gast.For):  # the iterable (before the loop) or a step
            must = must & anno.get(node, anno.LOOP_DEFINED_IN_HEADER)
            may = may | anno.get(node, anno.LOOP_MAYBE_DEFINED_IN_HEADER)
        assert must <= bound, f"line {line}: {sorted(must - bound)} unbound\n{source}"
        assert bound & local <= may, f"line {line}: {sorted(bound - may)} bound\n{source}"

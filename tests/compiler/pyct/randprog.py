"""Random small programs for the dataflow property tests.

A program is a function ``f(a, b)`` over the variables a, b, c, d with assignments, augmented
assignments, ``del``, walrus, a closure ``g = lambda: v`` called as ``g()``,
``if``/``while``/``for`` (with ``else``, ``break``, ``continue``),
``try``/``except``/``else``/``finally``, ``with suppress(...)``, ``match`` and ``return``.
Loops are bounded (``while`` carries its own counter), so every program ends; it may end with
an exception (unbound variable, division by zero), which is part of its result.

Statements are :class:`Stmt` trees, rendered to source with an optional extra line inserted
before or after one statement (how the liveness test perturbs a program).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from hypothesis import strategies as st

VARS = ("a", "b", "c", "d")
SENTINEL = object()
EXCEPTIONS = "(NameError, ZeroDivisionError)"


@dataclass(eq=False)
class Stmt:
    """One statement; ``head`` is its first line, ``blocks`` its (header, body) parts."""

    head: str
    blocks: list[tuple[str, list[Stmt]]] = field(default_factory=list)
    jump: bool = False  # break / continue / return: nothing runs right after it
    line: int = 0  # set by render (without an insertion)


def render(body: list[Stmt], insert: tuple[Stmt, str, str] | None = None) -> str:
    """The source of ``def f(a, b)``; ``insert`` = (stmt, "before" | "after", code)."""
    lines = ["def f(a, b):"]

    def emit(stmts: list[Stmt], indent: str) -> None:
        for s in stmts:
            if insert is not None and insert[0] is s and insert[1] == "before":
                lines.append(indent + insert[2])
            if insert is None:
                s.line = len(lines) + 1
            lines.append(indent + s.head)
            for header, block in s.blocks:
                if header:
                    lines.append(indent + header)
                extra = header[: len(header) - len(header.lstrip())]  # `case` is indented
                emit(block, indent + "    " + extra)
            if insert is not None and insert[0] is s and insert[1] == "after":
                lines.append(indent + insert[2])

    emit(body, "    ")
    return "\n".join(lines) + "\n"


def walk(body: list[Stmt]) -> list[Stmt]:
    """Every statement, in source order."""
    out = []
    for s in body:
        out.append(s)
        for _, block in s.blocks:
            out.extend(walk(block))
    return out


def run(source: str) -> tuple[str, object]:
    """("ok", value) or ("raise", exception type name) of ``f(1, 2)``."""
    ns = {"suppress": contextlib.suppress, "SENTINEL": SENTINEL}
    exec(compile(source, "<randprog>", "exec"), ns)
    try:
        value = ns["f"](1, 2)
    except NameError:  # UnboundLocalError or NameError: the same failure
        return ("raise", "NameError")
    except Exception as e:  # noqa: BLE001 - any exception is a result
        return ("raise", type(e).__name__)
    if isinstance(value, BaseException):  # a caught exception returned: compare its kind
        return ("ok", ("exception", type(value).__name__, str(value)))
    return ("ok", value)


@st.composite
def expressions(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 9 if depth < 2 else 3))
    if kind <= 1:
        return str(draw(st.integers(0, 3)))
    if kind <= 3:
        return draw(st.sampled_from(VARS))
    sub = expressions(depth + 1)
    if kind <= 6:
        op = draw(st.sampled_from(["+", "-", "*", "//", "<", "==", "and", "or"]))
        return f"({draw(sub)} {op} {draw(sub)})"
    if kind == 7:
        return f"({draw(st.sampled_from(VARS))} := {draw(sub)})"
    if kind == 8:
        return draw(st.sampled_from([f"(not {draw(sub)})", "g()"]))  # g: a closure, maybe
    return f"({draw(sub)} if {draw(sub)} else {draw(sub)})"


class _Gen:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.counters = 0

    def block(self, depth: int, loop: bool) -> list[Stmt]:
        n = self.draw(st.integers(1, 3))
        out: list[Stmt] = []
        for _ in range(n):
            out.extend(self.stmt(depth, loop))
        return out

    def stmt(self, depth: int, loop: bool) -> list[Stmt]:
        draw = self.draw
        simple = ["assign", "assign", "assign", "aug", "aug", "del", "pass", "return", "closure"]
        if loop:
            simple += ["break", "continue"]
        compound = ["if", "if", "while", "for", "try", "with", "match"] if depth < 3 else []
        kind = draw(st.sampled_from(simple + compound))
        var = draw(st.sampled_from(VARS))
        e = lambda: draw(expressions())  # noqa: E731
        if kind == "assign":
            return [Stmt(f"{var} = {e()}")]
        if kind == "aug":
            return [Stmt(f"{var} += {e()}")]
        if kind == "del":
            return [Stmt(f"del {var}")]
        if kind == "pass":
            return [Stmt("pass")]
        if kind == "closure":  # g reads var whenever it is called, not here
            return [Stmt(f"g = lambda: {var}")]
        if kind == "return":
            return [Stmt(f"return {e()}", jump=True)]
        if kind in ("break", "continue"):
            return [Stmt(kind, jump=True)]
        return getattr(self, kind)(depth + 1, loop, var, e)

    def orelse(self, depth: int, loop: bool) -> list[tuple[str, list[Stmt]]]:
        return [("else:", self.block(depth, loop))] if self.draw(st.booleans()) else []

    def if_(self, depth: int, loop: bool, var: str, e) -> list[Stmt]:
        return [Stmt(f"if {e()}:", [("", self.block(depth, loop)), *self.orelse(depth, loop)])]

    def while_(self, depth: int, loop: bool, var: str, e) -> list[Stmt]:
        i = f"i{self.counters}"
        self.counters += 1
        body = [Stmt(f"{i} += 1"), *self.block(depth, True)]
        loop_ = Stmt(f"while {i} < 3 and {e()}:", [("", body), *self.orelse(depth, loop)])
        return [Stmt(f"{i} = 0"), loop_]

    def for_(self, depth: int, loop: bool, var: str, e) -> list[Stmt]:
        it = self.draw(st.sampled_from(["range(0)", "range(2)", f"({e()}, {e()})"]))
        body = self.block(depth, True)
        return [Stmt(f"for {var} in {it}:", [("", body), *self.orelse(depth, loop)])]

    def try_(self, depth: int, loop: bool, var: str, e) -> list[Stmt]:
        blocks = [("", self.block(depth, loop))]
        handler = self.draw(st.sampled_from(["none", "plain", "as"]))
        if handler != "none":
            name = f" as {var}" if handler == "as" else ""
            blocks.append((f"except {EXCEPTIONS}{name}:", self.block(depth, loop)))
            blocks += self.orelse(depth, loop)
        if handler == "none" or self.draw(st.booleans()):
            blocks.append(("finally:", self.block(depth, loop)))
        return [Stmt("try:", blocks)]

    def with_(self, depth: int, loop: bool, var: str, e) -> list[Stmt]:
        return [Stmt(f"with suppress{EXCEPTIONS}:", [("", self.block(depth, loop))])]

    def match(self, depth: int, loop: bool, var: str, e) -> list[Stmt]:
        blocks = [
            ("    case 0:", self.block(depth + 1, loop)),
            (f"    case {var} if {e()}:", self.block(depth + 1, loop)),
        ]
        if self.draw(st.booleans()):
            blocks.append(("    case _:", self.block(depth + 1, loop)))
        return [Stmt(f"match {e()}:", blocks)]


for _name in ("if", "while", "for", "try", "with"):
    setattr(_Gen, _name, getattr(_Gen, _name + "_"))


@st.composite
def programs(draw: st.DrawFn) -> list[Stmt]:
    """A program body (a list of statements ending with a return)."""
    gen = _Gen(draw)
    body = [Stmt(f"{v} = {draw(st.integers(0, 3))}") for v in ("c", "d") if draw(st.booleans())]
    body += gen.block(0, False)
    body.append(Stmt(f"return {draw(expressions())}", jump=True))
    return body

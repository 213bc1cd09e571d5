"""A hypothesis strategy for random but runnable functions over ints, floats and lists.

``functions()`` draws the source of ``def f(a, b, x, xs): ...`` built from nested
``if``/``elif``/``else``, ``while``/``for`` with ``break``/``continue``/``else``, early
``return``, ``and``/``or``/``not``, ternaries, augmented assignment, ``try``/``except``,
closures and list appends. Every loop is bounded (a counter incremented first thing in the
body, so ``continue`` cannot spin), so every function terminates; exceptions
(``ZeroDivisionError``, ``IndexError``, ``UnboundLocalError``...) are part of the behaviour
compared. With ``tensor=True`` the functions use only what the symbolic path supports
(tensor arithmetic, comparisons, loops bounded by a counter) so they can be traced.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

INT_VARS = ("a", "b", "v0", "v1")
PROLOGUE = ["v0 = 0", "v1 = 1", "fl = 0.5"]


@dataclass
class Ctx:
    depth: int = 0
    loops: int = 0  # enclosing loops (break/continue allowed when > 0)
    over_xs: bool = False  # inside ``for ... in xs``: no appends to xs
    counters: int = 0
    tensor: bool = False


def _int_atom(draw, ctx: Ctx) -> str:
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return str(draw(st.integers(-3, 5)))
    if choice == 1 and not ctx.tensor:
        return draw(st.sampled_from(["len(xs)", "xs[0]", "xs[-1]", "int(fl)"]))
    return draw(st.sampled_from(INT_VARS))


def int_expr(draw, ctx: Ctx, depth: int = 0) -> str:
    """An int-valued expression (may raise, e.g. ZeroDivisionError or IndexError)."""
    if depth >= 2 or draw(st.booleans()):
        return _int_atom(draw, ctx)
    kind = draw(st.integers(0, 4 if not ctx.tensor else 2))
    lhs, rhs = int_expr(draw, ctx, depth + 1), int_expr(draw, ctx, depth + 1)
    if kind == 0:
        return f"({lhs} {draw(st.sampled_from(['+', '-']))} {rhs})"
    if kind == 1:
        return f"({lhs} * {draw(st.integers(-2, 3))})"
    if kind == 2:
        return f"({lhs} if {bool_expr(draw, ctx, depth + 1)} else {rhs})"
    if kind == 3:
        return f"({lhs} {draw(st.sampled_from(['//', '%']))} {rhs})"
    return f"{draw(st.sampled_from(['abs', 'min', 'max']))}({lhs}{', ' + rhs if draw(st.booleans()) else ', 0'})"  # noqa: E501


def bool_expr(draw, ctx: Ctx, depth: int = 0) -> str:
    """A condition: comparisons joined by and/or/not."""
    kind = draw(st.integers(0, 3 if depth < 2 else 0))
    if kind == 0:
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        return f"{int_expr(draw, ctx, 2)} {op} {int_expr(draw, ctx, 2)}"
    if kind == 1:
        return f"not ({bool_expr(draw, ctx, depth + 1)})"
    op = "and" if kind == 2 else "or"
    return f"({bool_expr(draw, ctx, depth + 1)} {op} {bool_expr(draw, ctx, depth + 1)})"


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def block(draw, ctx: Ctx, size: int | None = None) -> list[str]:
    n = size if size is not None else draw(st.integers(1, 3))
    lines: list[str] = []
    for _ in range(n):
        lines += statement(draw, ctx)
    return lines


def _nested(ctx: Ctx, **changes) -> Ctx:
    fields = dict(ctx.__dict__)
    fields["depth"] = ctx.depth + 1
    fields.update(changes)
    return Ctx(**fields)


def statement(draw, ctx: Ctx) -> list[str]:
    simple = ["assign", "augassign", "assign", "return"]
    compound = ["if", "while", "for", "try", "closure"]
    if ctx.tensor:
        compound = ["if", "while", "for_range"]
    kinds = simple + (compound if ctx.depth < 3 else [])
    if ctx.loops:
        kinds += ["break", "continue"]
    if not ctx.tensor and not ctx.over_xs:
        kinds.append("append")
    if not ctx.tensor:
        kinds.append("float")
    kind = draw(st.sampled_from(kinds))
    target = draw(st.sampled_from(["v0", "v1"]))
    if kind == "assign":
        return [f"{target} = {int_expr(draw, ctx)}"]
    if kind == "augassign":
        op = draw(
            st.sampled_from(["+=", "-=", "*=", "//=", "%="] if not ctx.tensor else ["+=", "-="])
        )
        rhs = str(draw(st.integers(-2, 3))) if op == "*=" else int_expr(draw, ctx, 1)
        return [f"{target} {op} {rhs}"]
    if kind == "float":
        return [f"fl = fl {draw(st.sampled_from(['+', '*', '/']))} ({int_expr(draw, ctx, 1)})"]
    if kind == "append":
        return [f"xs.append({int_expr(draw, ctx, 1)})"]
    if kind == "return":  # a value that may raise (inside try/except: not returned)
        value = int_expr(draw, ctx) if draw(st.booleans()) else _result(draw, ctx)
        return [f"return {value}"]
    if kind in ("break", "continue"):
        return [f"if {bool_expr(draw, ctx, 1)}:", f"    {kind}"]
    if kind == "if":
        inner = _nested(ctx)
        lines = [f"if {bool_expr(draw, ctx)}:", *_indent(block(draw, inner))]
        for _ in range(draw(st.integers(0, 2))):
            lines += [f"elif {bool_expr(draw, ctx)}:", *_indent(block(draw, inner))]
        if draw(st.booleans()):
            lines += ["else:", *_indent(block(draw, inner))]
        return lines
    if kind == "while":
        k = f"k{ctx.depth}"
        inner = _nested(ctx, loops=ctx.loops + 1)
        cond = f"{k} < {draw(st.integers(0, 4))}"
        if draw(st.booleans()):
            cond = f"{cond} and {bool_expr(draw, ctx, 1)}"
        lines = [f"{k} = 0", f"while {cond}:", f"    {k} += 1", *_indent(block(draw, inner))]
        if draw(st.booleans()):
            lines += ["else:", *_indent(block(draw, _nested(ctx)))]
        return lines
    if kind in ("for", "for_range"):
        t = f"t{ctx.depth}"
        over_xs = False
        if kind == "for_range":
            iterable = f"range({draw(st.integers(0, 4))})"
        else:
            choice = draw(st.integers(0, 2))
            iterable = [f"range({int_expr(draw, ctx, 1)} % 5)", "xs", "enumerate(xs)"][choice]
            over_xs = choice > 0
            if choice == 2:
                t = f"i{ctx.depth}, t{ctx.depth}"
        inner = _nested(ctx, loops=ctx.loops + 1, over_xs=ctx.over_xs or over_xs)
        body = block(draw, inner)
        body.insert(0, f"v0 += t{ctx.depth}")
        lines = [f"for {t} in {iterable}:", *_indent(body)]
        if draw(st.booleans()):
            lines += ["else:", *_indent(block(draw, _nested(ctx)))]
        if draw(st.booleans()):  # the target after the loop: the item where it broke
            lines = [f"t{ctx.depth} = 0", *lines, f"v1 += t{ctx.depth}"]
        return lines
    if kind == "try":
        inner = _nested(ctx)
        exc = draw(st.sampled_from(["ZeroDivisionError", "IndexError", "(ValueError, IndexError)"]))
        lines = ["try:", *_indent(block(draw, inner)), f"except {exc}:"]
        lines += _indent(block(draw, inner))
        if draw(st.booleans()):
            lines += ["finally:", f"    v1 += {draw(st.integers(0, 3))}"]
        return lines
    # closure: reads (and maybe writes through nonlocal) an enclosing variable
    name = f"g{ctx.depth}"
    body = [f"def {name}(y):"]
    if draw(st.booleans()):
        body += ["    nonlocal v1", "    v1 += y", "    return v1"]
    else:
        body += [f"    return y + {draw(st.sampled_from(['v0', 'v1', 'a']))}"]
    return body + [f"{target} = {name}({int_expr(draw, ctx, 1)})"]


def _result(draw, ctx: Ctx) -> str:
    if ctx.tensor:
        return draw(st.sampled_from(["v0", "v1", "v0 + v1", "v0 - a"]))
    return draw(st.sampled_from(["(v0, v1, fl)", "v0", "(v0, list(xs))", "v1 - v0"]))


@st.composite
def functions(draw, tensor: bool = False) -> str:
    """The source of a random ``def f(a, b, x, xs)`` (``tensor``: traceable on tensors)."""
    ctx = Ctx(tensor=tensor)
    body = (["v0 = a", "v1 = b"] if tensor else list(PROLOGUE)) + block(
        draw, ctx, draw(st.integers(1, 4))
    )
    body.append(f"return {_result(draw, ctx)}")
    args = "a, b" if tensor else "a, b, xs"
    return "\n".join([f"def f({args}):", *_indent(body)]) + "\n"

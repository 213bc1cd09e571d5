"""cfg.build: the edges of every construct."""

from __future__ import annotations

import gast

from autostatic.pyct import activity, cfg

from .helpers import at, parse


def graph(src: str) -> tuple[gast.AST, cfg.Graph]:
    fn = parse(src)
    activity.analyze(fn)
    return fn, cfg.build(fn)


def label(n: cfg.Node) -> tuple:
    if n.kind in ("entry", "exit"):
        return (n.kind,)
    line = n.ast.pattern.lineno if isinstance(n.ast, gast.match_case) else n.ast.lineno
    return (line, n.kind)


def succ(g: cfg.Graph, line: int, kind: str = "stmt", copy: int = 0) -> set[tuple]:
    """Normal successors of the node for line/kind, as labels; partial ones end with '~'."""
    node = [n for n in g.nodes if n.kind == kind and label(n)[0] == line][copy]
    return {label(s) + (("~",) if node.partial and s in node.partial else ()) for s in node.next}


EXIT = ("exit",)


def test_straight_line_and_return():
    _, g = graph("def f(a):\n    b = a\n    return b\n")
    assert [n.kind for n in g.nodes] == ["entry", "stmt", "stmt", "exit"]
    assert g.entry.next == [g.nodes[1]] and g.nodes[1].prev == [g.entry]
    assert succ(g, 3) == {EXIT}
    assert g.exit.prev == [g.nodes[2]]


def test_if_elif_else():
    src = """
    def f(a):
        if a > 0:
            b = 1
        elif a < 0:
            b = 2
        else:
            b = 3
        return b
    """
    _, g = graph(src)
    assert succ(g, 2, "test") == {(3, "stmt"), (4, "test")}
    assert succ(g, 4, "test") == {(5, "stmt"), (7, "stmt")}
    assert succ(g, 3) == succ(g, 5) == succ(g, 7) == {(8, "stmt")}


def test_if_without_else_falls_through_from_the_test():
    _, g = graph("def f(a):\n    if a:\n        a = 1\n    return a\n")
    assert succ(g, 2, "test") == {(3, "stmt"), (4, "stmt")}


def test_while_else_break_continue():
    src = """
    def f(n):
        while n > 0:
            n -= 1
            if n == 5:
                break
            if n == 3:
                continue
            n -= 1
        else:
            n = -1
        return n
    """
    _, g = graph(src)
    assert succ(g, 2, "test") == {(3, "stmt"), (10, "stmt")}  # body, else
    assert succ(g, 5) == {(11, "stmt")}  # break skips the else
    assert succ(g, 7) == {(2, "test")}  # continue
    assert succ(g, 8) == {(2, "test")}  # end of body
    assert succ(g, 10) == {(11, "stmt")}


def test_while_true_has_no_exit_from_the_test():
    _, g = graph("def f():\n    while True:\n        if g():\n            break\n    return 1\n")
    assert succ(g, 2, "test") == {(3, "test")}
    assert succ(g, 4) == {(5, "stmt")}


def test_for_else():
    src = """
    def f(xs):
        for x in xs:
            if x:
                break
        else:
            x = 0
        return x
    """
    _, g = graph(src)
    assert succ(g, 2, "iter") == {(2, "step")}
    # an exhausted iterator leaves part-way: the target is not bound
    assert succ(g, 2, "step") == {(3, "test"), (6, "stmt", "~")}
    assert succ(g, 3, "test") == {(4, "stmt"), (2, "step")}
    assert succ(g, 4) == {(7, "stmt")}
    assert succ(g, 6) == {(7, "stmt")}


def test_nested_loops_break_the_inner_one():
    src = """
    def f(a):
        for i in a:
            while i:
                break
            continue
        return i
    """
    _, g = graph(src)
    assert succ(g, 4) == {(5, "stmt")}
    assert succ(g, 5) == {(2, "step")}


def test_try_except_else_finally():
    src = """
    def f(a):
        try:
            b = g(a)
            c = b
        except KeyError:
            c = 1
        except Exception as e:
            c = e
        else:
            c = 3
        finally:
            d = 4
        return c
    """
    _, g = graph(src)
    handlers = {(5, "handler", "~"), (7, "handler", "~")}
    # every statement of the body may jump to every handler; unhandled: the finally
    assert succ(g, 3) == {(4, "stmt")} | handlers | {(12, "stmt", "~")}
    assert succ(g, 4) == {(10, "stmt")} | handlers | {(12, "stmt", "~")}
    assert succ(g, 5, "handler") == {(6, "stmt"), (12, "stmt", "~")}
    assert succ(g, 6) == {(12, "stmt")} | {(12, "stmt", "~")}
    assert succ(g, 7, "handler") == {(8, "stmt"), (12, "stmt", "~")}
    # `except ... as e` ends with `del e`, on the normal path and (a copy) on the raising one
    assert succ(g, 8) == {(7, "handler_exit"), (7, "handler_exit", "~")}
    # (it can raise too, as far as the model goes: then it enters the finally's raising copy)
    assert succ(g, 7, "handler_exit", 0) == {(12, "stmt"), (12, "stmt", "~")}
    assert succ(g, 10) == {(12, "stmt")} | {(12, "stmt", "~")}
    # the finally block: the copy for normal completion goes on, the other only re-raises
    normal, raising = [n for n in g.nodes if label(n) == (12, "stmt")]
    assert {label(s) for s in normal.next} == {(13, "stmt")}
    assert raising.next == []


def test_return_and_break_go_through_finally():
    src = """
    def f(a):
        for x in a:
            try:
                if x:
                    return 1
                break
            finally:
                y = 2
        return 3
    """
    fn, g = graph(src)
    finally_ = {(8, "stmt"), (8, "stmt", "~")}  # the normal copy; the raising copy
    assert succ(g, 5) == finally_  # return -> finally
    assert succ(g, 6) == finally_  # break -> finally
    normal = [n for n in g.nodes if label(n) == (8, "stmt")][0]
    # the finally re-issues both jumps
    assert {label(s) for s in normal.next} == {EXIT, (9, "stmt")}
    info = g.stmts[at(fn, 8)]
    assert info.alt is not None and {label(n) for n in info.follow} == {EXIT, (9, "stmt")}


def test_raise_has_only_exception_edges():
    src = """
    def f(a):
        try:
            raise ValueError(a)
        except ValueError:
            a = 1
        raise KeyError(a)
    """
    _, g = graph(src)
    assert succ(g, 3) == {(4, "handler", "~")}
    assert succ(g, 6) == set()


def test_bare_except_stops_propagation():
    src = """
    def f():
        try:
            try:
                a = 1
            except:
                a = 2
        except KeyError:
            a = 3
    """
    _, g = graph(src)
    assert succ(g, 4) == {(5, "handler", "~"), EXIT}  # not (7, "handler"): `except:` catches all
    assert (7, "handler", "~") in succ(g, 6)  # the inner handler may itself raise


def test_with():
    src = """
    def f(p):
        with open(p) as fh:
            d = fh.read()
            return d
        return None
    """
    _, g = graph(src)
    assert succ(g, 2, "with") == {(3, "stmt")}
    assert succ(g, 3) == {(4, "stmt"), (2, "with_exit", "~")}
    # return goes through __exit__ (as a jump and, like any statement, by raising)
    assert succ(g, 4) == {(2, "with_exit", "~")}
    # __exit__ re-issues the return; it may also swallow an exception and fall through
    assert succ(g, 2, "with_exit") == {EXIT, (5, "stmt")}


def test_match():
    src = """
    def f(p):
        match p:
            case 1:
                a = 1
            case [x, y] if x > y:
                a = 2
            case other:
                a = 3
        return a
    """
    _, g = graph(src)
    assert succ(g, 2, "subject") == {(3, "case")}
    assert succ(g, 3, "case") == {(4, "stmt"), (5, "case", "~")}
    assert succ(g, 5, "case") == {(6, "stmt"), (7, "case", "~")}
    assert succ(g, 7, "case") == {(8, "stmt")}  # irrefutable: nothing falls through
    assert succ(g, 4) == succ(g, 6) == succ(g, 8) == {(9, "stmt")}


def test_match_without_irrefutable_case_falls_through():
    _, g = graph("def f(p):\n    match p:\n        case 1:\n            a = 1\n    return p\n")
    assert succ(g, 3, "case") == {(4, "stmt"), (5, "stmt", "~")}


def test_nested_function_is_one_node():
    src = """
    def f(a):
        def g(x):
            if x:
                return 1
            return 2
        return g(a)
    """
    _, g = graph(src)
    assert [label(n) for n in g.nodes] == [("entry",), (2, "stmt"), (6, "stmt"), EXIT]


def test_stmt_infos():
    src = """
    def f(a):
        if a:
            b = 1
        c = 2
    """
    fn, g = graph(src)
    info = g.stmts[at(fn, 2)]
    assert label(info.first) == (2, "test")
    assert [label(n) for n, _ in info.entry] == [("entry",)]
    assert {label(n) for n, _ in info.exits} == {(3, "stmt"), (2, "test")}
    assert [label(n) for n in info.follow] == [(4, "stmt")]
    assert g.node_of(at(fn, 2)) is info.first
    assert "test" in repr(g)


def test_lambda_graph():
    lam = gast.parse("lambda x: x + 1").body[0].value
    activity.analyze(lam)
    g = cfg.build(lam)
    assert [n.kind for n in g.nodes] == ["entry", "stmt", "exit"]


def test_finally_inside_finally_has_four_copies():
    src = """
    def f(g):
        try:
            g()
        finally:
            try:
                g()
            finally:
                x = 1
        return x
    """
    fn, g = graph(src)
    assert len(g.stmts[at(fn, 8)].copies()) == 4
    assert len(g.nodes_of(at(fn, 8))) == 4
    assert len(g.stmts[at(fn, 5)].copies()) == 2

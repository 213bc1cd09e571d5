"""anno (node annotations) and symbols (qualified names)."""

from __future__ import annotations

import gast
import pytest

from autostatic.pyct import anno, symbols


def _expr(src: str) -> gast.expr:
    return gast.parse(src).body[0].value


def test_set_get_has_delete():
    node = _expr("x")
    assert not anno.has(node, anno.SCOPE)
    assert anno.get(node, anno.SCOPE, None) is None
    with pytest.raises(KeyError, match="scope"):
        anno.get(node, anno.SCOPE)
    anno.set(node, anno.SCOPE, 1)
    anno.set(node, anno.LIVE_IN, 2)
    assert anno.has(node, anno.SCOPE) and anno.get(node, anno.SCOPE) == 1
    assert anno.keys(node) == {anno.SCOPE, anno.LIVE_IN}
    other = _expr("y")
    anno.copy(node, other, anno.LIVE_IN)
    assert anno.keys(other) == {anno.LIVE_IN}
    anno.delete(node, anno.SCOPE)
    assert not anno.has(node, anno.SCOPE)
    anno.clear(node)
    assert anno.keys(node) == frozenset()


def test_annotations_do_not_reach_compiled_code():
    tree = gast.parse("x = 1")
    anno.set(tree.body[0], anno.SCOPE, object())
    code = compile(gast.gast_to_ast(tree), "<t>", "exec")
    ns: dict = {}
    exec(code, ns)
    assert ns["x"] == 1


@pytest.mark.parametrize(
    "src, sym, base",
    [
        ("x", "x", "x"),
        ("self.w", "self.w", "self.w"),
        ("a.b.c", "a.b.c", "a.b.c"),
        ("a[i]", None, "a"),
        ("self.buf[i][j]", None, "self.buf"),
        ("a[i].x", None, "a"),
        ("f(x).y", None, None),
        ("(a + b).c", None, None),
    ],
)
def test_symbol_of_and_base_symbol(src, sym, base):
    expr = _expr(src)
    assert symbols.symbol_of(expr) == sym
    assert symbols.base_symbol(expr) == base


def test_name_helpers():
    assert symbols.base_name("self.w.x") == "self" and symbols.base_name("x") == "x"
    assert symbols.is_composite("a.b") and not symbols.is_composite("a")
    assert symbols.prefixes("a.b.c") == ["a", "a.b", "a.b.c"]
    assert symbols.prefixes("a") == ["a"]
    ext = symbols.extensions({"a.b.c", "a.d", "x"})
    assert ext == {"a": {"a.b.c", "a.d"}, "a.b": {"a.b.c"}}

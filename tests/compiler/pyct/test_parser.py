"""parser.parse_function: original line numbers and columns, lambdas, decorators, errors."""

from __future__ import annotations

import ast
import functools
import inspect

import gast
import pytest

from autostatic.pyct import anno, parser
from autostatic.pyct.errors import SourceUnavailableError

THIS_FILE = inspect.getsourcefile(lambda: None)
LINES = open(THIS_FILE).read().splitlines()


def line_of(marker: str) -> int:
    """1-based line of the only line of this file containing ``marker``."""
    hits = [i + 1 for i, text in enumerate(LINES) if marker in text and "line_of(" not in text]
    assert len(hits) == 1, hits
    return hits[0]


def make_model():
    class Model:
        def forward(self, x):
            y = x + 1  # MARK-forward-y
            if y > 2:
                y = -y  # MARK-forward-neg
            return y

    return Model


def _identity(f):
    return f


@_identity
def decorated(x):  # MARK-decorated-def
    return x * 2  # MARK-decorated-return


class Holder:
    def method(self):
        s = """first
second"""
        return s  # MARK-holder-return


def _capture(key=None):
    return key


class LongSignature:
    def method(
        self, word: str, count: int | None = None
    ) -> str:  # fmt: skip
        return word * (count or 1)  # MARK-long-signature-return


PAIR = (lambda a: a + 1, lambda b: b * 2)  # MARK-pair
NESTED = lambda: lambda q: q - 1  # noqa: E731  MARK-nested
SPREAD = _capture(
    key=lambda v: -v  # MARK-spread
)


def test_method_in_class_in_function_keeps_file_lines_and_columns():
    src = parser.parse_function(make_model().forward)
    node = src.node
    assert isinstance(node, gast.FunctionDef) and node.name == "forward"
    assert src.filename == THIS_FILE
    assert src.first_line == node.lineno == line_of("def forward(self, x)")
    assign = node.body[0]
    assert assign.lineno == line_of("MARK-forward-y")
    assert assign.col_offset == LINES[assign.lineno - 1].index("y = x + 1")
    inner = node.body[1].body[0]
    assert inner.lineno == line_of("MARK-forward-neg")
    assert inner.targets[0].col_offset == LINES[inner.lineno - 1].index("y = -y")
    assert src.source.splitlines()[0] == LINES[src.first_line - 1]


def test_every_node_line_is_in_the_original_span():
    src = parser.parse_function(make_model().forward)
    last = src.first_line + len(src.source.splitlines()) - 1
    for n in gast.walk(src.node):
        if hasattr(n, "lineno"):
            assert src.first_line <= n.lineno <= last


def test_multiline_string_in_method():
    node = parser.parse_function(Holder().method).node  # a bound method works too
    assert node.body[1].lineno == line_of("MARK-holder-return")
    assert node.body[0].value.value == "first\nsecond"


def test_a_signature_over_several_lines_is_read_from_the_file_alone():
    code = LongSignature.method.__code__
    found = parser._by_indentation(code)  # not inspect's tokenizer (3x slower)
    assert found is not None and found[0] == "".join(inspect.getsourcelines(code)[0])
    node = parser.parse_function(LongSignature.method).node
    assert node.body[0].lineno == line_of("MARK-long-signature-return")


def test_decorators_are_kept_and_marked():
    src = parser.parse_function(decorated)
    node = src.node
    assert src.first_line == line_of("MARK-decorated-def") - 1  # the decorator line
    assert node.lineno == line_of("MARK-decorated-def")
    assert node.body[0].lineno == line_of("MARK-decorated-return")
    assert [d.id for d in node.decorator_list] == ["_identity"]
    assert anno.get(node, anno.DECORATORS) == tuple(node.decorator_list)
    assert anno.get(node.decorator_list[0], anno.IS_DECORATOR) is True


def _body_text(node: gast.Lambda) -> str:
    return ast.unparse(gast.gast_to_ast(node.body))


def test_two_lambdas_on_one_line():
    first, second = (parser.parse_function(f) for f in PAIR)
    assert _body_text(first.node) == "a + 1"
    assert _body_text(second.node) == "b * 2"
    assert first.node.lineno == second.node.lineno == line_of("MARK-pair")
    assert first.node.col_offset < second.node.col_offset


def test_nested_lambdas():
    outer = parser.parse_function(NESTED).node
    inner = parser.parse_function(NESTED()).node
    assert isinstance(outer.body, gast.Lambda)
    assert _body_text(inner) == "q - 1"
    assert inner.col_offset == outer.body.col_offset


def test_lambda_inside_a_multiline_call():
    src = parser.parse_function(SPREAD)
    assert _body_text(src.node) == "-v"
    assert src.node.lineno == src.first_line == line_of("MARK-spread")


@pytest.mark.parametrize(
    "fn",
    [len, functools.partial(decorated, 1), object.__init__],
    ids=["builtin", "partial", "slot-wrapper"],
)
def test_no_python_source(fn):
    with pytest.raises(SourceUnavailableError, match="cannot get the source"):
        parser.parse_function(fn)


def test_exec_code_has_no_source():
    ns: dict = {}
    exec("def g(x):\n    return x\nh = lambda: 1\n", ns)
    for fn in (ns["g"], ns["h"]):
        with pytest.raises(SourceUnavailableError, match="<string>"):
            parser.parse_function(fn)


def test_async_function():
    async def coro(x):
        return await x

    node = parser.parse_function(coro).node
    assert isinstance(node, gast.AsyncFunctionDef)
    assert node.lineno == line_of("async def coro(x)")

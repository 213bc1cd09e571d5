"""The hook's first trace reads a def from its file (``lazy._locate``): its own lines, parsed
alone and converted in place (the rest of the file is never parsed); when they do not parse
alone (a line of the def's text at the def's indentation), the file's tree of the trace
session, where a def no other def holds or is in is converted in place (given away) and any
other is copied, so the defs around or inside it stay as the file has them."""

from __future__ import annotations

import ast
import importlib.util
import textwrap

import gast
import pytest

from autostatic import lazy

SOURCE = textwrap.dedent(
    """
    def alone(x):
        return x + 1

    def outer(x):
        def inner(y):
            return y * x
        return inner

    class K:
        def method(self, x):
            return [x for _ in range(2)]

    def cut(x):
        words = [
    "a string at the def's indentation: these lines do not parse alone",
        ]
        return words

    ﬁle_name = 1
    """
)


@pytest.fixture
def module(tmp_path):
    """(file name, source hash) of SOURCE in a file; a trace session's trees around it."""
    path = tmp_path / "mod_trees.py"
    path.write_text(SOURCE)
    lazy._trees.clear()
    yield str(path), importlib.util.source_hash(path.read_bytes()).hex()
    lazy._trees.clear()


def _own(filename, digest, line, name):
    tree, _ = lazy._locate(filename, digest, line, name, name)
    return tree, lazy._own_tree(filename, line, name, tree)


def test_a_def_is_parsed_alone_and_converted_in_place(module):
    filename, digest = module
    for line, name in ((2, "alone"), (5, "outer"), (6, "inner"), (11, "method")):
        tree, node = _own(filename, digest, line, name)
        assert node is tree and isinstance(node, gast.FunctionDef)  # in place
        assert (node.lineno, node.name) == (line, name)
        again, _ = lazy._locate(filename, digest, line, name, name)
        assert again is not tree and isinstance(again, ast.FunctionDef)  # parsed again
    assert lazy._trees[filename].index is None  # the whole file never parsed
    outer, _ = lazy._locate(filename, digest, 5, "outer", "outer")
    assert isinstance(outer.body[0], ast.FunctionDef)  # inner is ast's in a fresh def


def test_the_names_a_module_uses_are_every_identifier_of_its_text(module):
    filename, digest = module
    _, taken = lazy._locate(filename, digest, 2, "alone", "alone")
    assert {"alone", "outer", "inner", "K", "method", "words", "x", "y"} <= taken
    assert "file_name" in taken  # as Python reads the identifier (NFKC)


def test_a_def_that_does_not_parse_alone_comes_from_the_files_tree(module):
    filename, digest = module
    tree, node = _own(filename, digest, 14, "cut")
    assert lazy._trees[filename].index is not None  # the whole file, once
    assert node is tree and isinstance(node, gast.FunctionDef)  # alone: given away
    again, _ = lazy._locate(filename, digest, 14, "cut", "cut")  # the file again
    assert again is not tree and isinstance(again, ast.FunctionDef)
    for line, name in ((5, "outer"), (6, "inner")):  # the tree's defs from now on
        tree, node = _own(filename, digest, line, name)
        assert node is not tree and isinstance(tree, ast.FunctionDef)  # copied
        assert lazy._locate(filename, digest, line, name, name)[0] is tree  # kept
    outer, _ = lazy._locate(filename, digest, 5, "outer", "outer")
    assert isinstance(outer.body[0], ast.FunctionDef)  # inner is still ast's

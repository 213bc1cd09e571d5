"""The hook's first trace reads the def from the file's tree of the trace session
(``lazy._locate``): a def no other def holds or is in is converted in place (given away);
any other is copied, so the defs around or inside it stay as the file has them."""

from __future__ import annotations

import ast
import importlib.util
import textwrap

import gast

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
    """
)


def _setup(tmp_path):
    path = tmp_path / "mod_trees.py"
    path.write_text(SOURCE)
    data = path.read_bytes()
    return str(path), importlib.util.source_hash(data).hex()


def _own(filename, digest, line, name):
    tree, _ = lazy._locate(filename, digest, line, name, name)
    return tree, lazy._own_tree(filename, line, name, tree)


def test_a_def_alone_is_given_away_then_parsed_again(tmp_path):
    filename, digest = _setup(tmp_path)
    lazy._trees.clear()
    try:
        tree, node = _own(filename, digest, 2, "alone")
        assert node is tree and isinstance(node, gast.FunctionDef)  # in place
        again, _ = lazy._locate(filename, digest, 2, "alone", "alone")  # the file again
        assert again is not tree and isinstance(again, ast.FunctionDef)
        tree, node = _own(filename, digest, 11, "method")  # a method: alone too
        assert node is tree
    finally:
        lazy._trees.clear()


def test_defs_around_or_inside_others_are_copied(tmp_path):
    filename, digest = _setup(tmp_path)
    lazy._trees.clear()
    try:
        for line, name in ((5, "outer"), (6, "inner")):
            tree, node = _own(filename, digest, line, name)
            assert node is not tree and isinstance(tree, ast.FunctionDef)
            assert lazy._locate(filename, digest, line, name, name)[0] is tree  # kept
        outer, _ = lazy._locate(filename, digest, 5, "outer", "outer")
        assert isinstance(outer.body[0], ast.FunctionDef)  # inner is still ast's
    finally:
        lazy._trees.clear()

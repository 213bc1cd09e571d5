"""Converted code stays within 4x the lines of its source (non-blank lines), for every
function of the catalogue and for the shapes that used to grow fastest: sequences of loops
left by ``return``, nested loops with a ``return``, ``elif`` chains of early returns."""

from __future__ import annotations

import inspect

import pytest

from autostatic import lazy
from tests.programs import PROGRAMS


def nonblank(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def ratio(fn) -> float:
    return nonblank(lazy.tracing_source(fn)) / nonblank(inspect.getsource(fn))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_catalogue_functions_convert_within_4x_their_lines(fn):
    assert ratio(fn) <= 4.0


def _load(tmp_path, name: str, source: str):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


SHAPES = {
    "loops_left_by_return": lambda n: (
        "def f(t, *xs):\n"
        + "".join(
            f"    for i in xs[{k}]:\n        if i == t:\n            return i\n" for k in range(n)
        )
        + "    return -1\n"
    ),
    "nested_loops_with_return": lambda n: (
        "def f(t, xs):\n"
        + "".join(f"{'    ' * (k + 1)}for i{k} in xs:\n" for k in range(n))
        + f"{'    ' * (n + 1)}if i{n - 1} == t:\n{'    ' * (n + 2)}return i0\n"
        + "    return -1\n"
    ),
    "elif_chain_of_returns": lambda n: (
        "def f(kind, x):\n"
        + "".join(
            f"    {'if' if k == 0 else 'elif'} kind == {k}:\n        y = x + {k}\n"
            f"        return y * 2\n"
            for k in range(n)
        )
        + "    return x\n"
    ),
    "continues_and_breaks": lambda n: (
        "def f(xs):\n    s = 0\n    for x in xs:\n"
        + "".join(
            f"        if x == {k}:\n            {'break' if k % 3 == 2 else 'continue'}\n"
            f"        s += {k}\n"
            for k in range(n)
        )
        + "    return s\n"
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("n", [1, 3, 4, 16, 19])  # Python nests at most 20 blocks
def test_fast_growing_shapes_convert_within_4x_their_lines(tmp_path, shape, n):
    fn = _load(tmp_path, f"{shape}_{n}", SHAPES[shape](n))
    assert ratio(fn) <= 4.0

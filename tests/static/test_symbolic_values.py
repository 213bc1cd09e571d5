"""Python asking for a symbolic Variable's value (``if x:``, ``int(x)``, ``x[i]``) while a
program is built (issue 14): the error names the user's line and says how to get the code
converted - the import hook for a marked module imported without it, else to_static or the
pragma."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

import autostatic_runtime as rt
from autostatic_runtime.errors import StaticBuildError, SymbolicValueError

MODULE = """\
# autostatic: enable
import autostatic_runtime as rt


def f(x):
    if rt.mean(x) > 0:
        return x + 1.0
    return x - 1.0
"""


def _import(tmp_path, name, source):
    (tmp_path / f"{name}.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_a_marked_module_imported_without_the_hook_says_to_install_it(tmp_path):
    mod = _import(tmp_path, "marked_without_hook", MODULE)
    rt.enable_static()
    x = rt.static.data("x", [3], "float32")
    with pytest.raises(SymbolicValueError) as info:
        mod.f(x)
    message = str(info.value)
    assert message.startswith("the truth value of the symbolic variable")
    assert "marked_without_hook.py carries the '# autostatic: enable' pragma" in message
    assert "call autostatic.install() before importing it" in message
    assert "python -m autostatic run" in message
    assert message.endswith(f"at {tmp_path / 'marked_without_hook.py'}:6")
    assert isinstance(info.value, TypeError) and isinstance(info.value, StaticBuildError)


def test_unmarked_code_is_told_to_use_to_static_or_the_pragma(tmp_path):
    mod = _import(tmp_path, "unmarked_module", MODULE.replace("# autostatic: enable\n", ""))
    rt.enable_static()
    x = rt.static.data("x", [3], "float32")
    with pytest.raises(SymbolicValueError) as info:
        mod.f(x)
    message = str(info.value)
    assert "f was not converted: wrap it (or the function calling it) with " in message
    assert "autostatic.to_static" in message and "'# autostatic: enable'" in message
    assert "install()" in message and message.endswith("unmarked_module.py:5")


@pytest.mark.parametrize(
    "use, asked",
    [
        (lambda v: int(v), "int()"),
        (lambda v: float(v), "float()"),
        (lambda v: [1, 2, 3][v], "the Python index value"),
        (lambda v: bool(v), "the truth value"),
    ],
)
def test_int_float_index_and_bool_name_the_line(use, asked):
    rt.enable_static()
    v = rt.static.data("n", [], "int64")
    with pytest.raises(SymbolicValueError) as info:
        use(v)
    message = str(info.value)
    assert message.startswith(f"{asked} of the symbolic variable 'n' is not known")
    assert f"{__file__}:" in message


@pytest.mark.parametrize(
    "alias",
    ["import autostatic_runtime.convert_ops as _jst", "import autostatic_switch as __jst__"],
    ids=["converted whole", "hook's entry checks"],
)
def test_converted_code_that_still_asks_says_which_expressions_convert(tmp_path, alias):
    source = textwrap.dedent(
        f"""\
        import autostatic_runtime as rt
        {alias}


        def f(x):
            return [1 for _ in range(3) if rt.mean(x) > 0]
        """
    )
    mod = _import(tmp_path, "converted_like", source)
    rt.enable_static()
    x = rt.static.data("x", [3], "float32")
    match = "converted_like.py was converted, but this expression is not"
    with pytest.raises(SymbolicValueError, match=match):
        mod.f(x)


def test_iterating_a_variable_of_unknown_length_is_an_error_not_an_endless_loop():
    rt.enable_static()
    v = rt.static.data("v", [None, 3], "float32")
    with pytest.raises(SymbolicValueError, match="the length \\(to iterate over it\\) of the"):
        for _ in v:
            pass
    w = rt.static.data("w", [2, 3], "float32")
    rows = list(w)
    assert len(rows) == 2 and all(r.shape == [3] for r in rows)
    with pytest.raises(TypeError, match="0-D"):
        list(rt.static.data("s", [], "float32"))

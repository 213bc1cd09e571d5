"""Tree level: converting a module's source, and which modules the hook marks."""

from __future__ import annotations

import ast
import operator
import textwrap
import types

import pytest

from autostatic.hook import finder as import_hook
from autostatic.hook.module_conversion import convert_module_source, convert_tree

SOURCE = textwrap.dedent(
    '''
    """Doc."""
    from __future__ import annotations

    import autostatic


    def f(x):
        if x > 0:
            y = x
        else:
            y = -x
        return y


    class A:
        def m(self, n):
            while n > 0:
                n -= 1
            return n

        class B:
            @staticmethod
            def s(a, b):
                return a and b


    if True:
        def g(x):
            return x if x else 1
    try:
        def h(x):
            return not x
    except ImportError:
        def h(x):
            return x


    def k(x: Undefined):
        return x


    @autostatic.not_to_static
    def left(x):
        if x:
            return 1
        return 2
    '''
)


def _run(source: str, filename: str = "/virtual/mod.py") -> dict:
    code, report = convert_module_source(source, filename, "mod")
    namespace = {"__name__": "mod"}
    exec(code, namespace)
    return namespace, report


def test_every_function_outside_functions_is_converted_but_not_to_static():
    namespace, report = _run(SOURCE)
    assert report.converted == 7 and report.skipped == 1 and not report.failures
    assert "_jst" in namespace["f"].__code__.co_names
    assert "_jst" in namespace["A"].m.__code__.co_names
    assert "_jst" in namespace["A"].B.s.__code__.co_names
    assert "_jst" in namespace["g"].__code__.co_names
    assert "_jst" in namespace["h"].__code__.co_names
    assert "_jst" not in namespace["left"].__code__.co_names
    assert namespace["f"](-3) == 3 and namespace["A"]().m(4) == 0 and namespace["g"](0) == 1
    assert namespace["__doc__"] == "Doc."
    assert namespace["k"].__annotations__ == {"x": "Undefined"}  # the future import holds


def test_aliases_go_after_docstring_and_future_imports():
    tree = convert_tree(SOURCE, "/virtual/mod.py").tree
    kinds = [type(stmt).__name__ for stmt in tree.body[:5]]
    assert kinds == ["Expr", "ImportFrom", "Import", "ImportFrom", "Import"]
    assert ast.unparse(tree.body[2]) == "import autostatic_runtime.convert_ops as _jst"


def test_line_numbers_stay_the_users():
    source = "def f(x):\n    if x:\n        pass\n    raise ValueError(x)\n"
    namespace, _ = _run(source, "/virtual/lines.py")
    with pytest.raises(ValueError) as info:
        namespace["f"](1)
    tb = info.tb
    while tb.tb_next:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_filename == "/virtual/lines.py"
    assert tb.tb_lineno == 4


def test_generated_names_never_clash_with_the_modules():
    source = (
        "_jst = 'mine'\n_jst_Variable = 2\ndef f(x):\n    if x:\n        return _jst\n"
        "    return 0\n"
        "class A:\n    def m(self, x):\n        while x > 0:\n            x -= 1\n"
        "        return x\n"
    )
    namespace, report = _run(source)
    assert report.jst != "_jst" and report.sym != "_jst_Variable"
    assert namespace["f"](1) == "mine"
    convert_ops = __import__("autostatic_runtime.convert_ops").convert_ops
    old, convert_ops.tracing = convert_ops.tracing, True  # the converted body, in a class
    try:
        assert namespace["A"]().m(3) == 0 and namespace["f"](1) == "mine"
    finally:
        convert_ops.tracing = old


def test_a_function_that_fails_to_convert_stays_as_written(monkeypatch):
    import autostatic.tracing_factory as mc

    real = mc.tracing_node

    def flaky(node, *args, **kwargs):
        if node.name == "bad":
            raise RuntimeError("no luck")
        return real(node, *args, **kwargs)

    monkeypatch.setattr(mc, "tracing_node", flaky)
    source = (
        "def good(x):\n    return x\n\ndef bad(x):\n    if x:\n        return 1\n    return 2\n"
    )
    namespace, report = _run(source)
    assert [(f.qualname, f.lineno) for f in report.failures] == [("bad", 4)]
    assert "RuntimeError: no luck" in report.failures[0].reason
    assert namespace["bad"](0) == 2 and "_jst" not in namespace["bad"].__code__.co_names
    assert report.converted == 1


def test_syntax_errors_propagate():
    with pytest.raises(SyntaxError):
        convert_tree("def f(:\n", "x.py")


@pytest.mark.parametrize(
    "head, expected",
    [
        (b"# autostatic: enable\nx = 1\n", "enable"),
        (b"#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\n#autostatic:enable\n", "enable"),
        (b"# autostatic: disable\n", "disable"),
        (b'"""doc"""\n# autostatic: enable\n', None),
        (b"x = 1  # autostatic: enable\n", None),
        (b"# autostatic: enabled-not\n", None),
        (b"", None),
    ],
)
def test_the_pragma_is_read_from_the_leading_comment_lines(head, expected):
    assert import_hook.pragma(head) == expected


@pytest.mark.parametrize(
    "name, patterns, expected",
    [
        ("pkg", ["pkg"], True),
        ("pkg.a.b", ["pkg"], True),
        ("pkgx", ["pkg"], False),
        ("pkg", ["pkg.*"], False),
        ("pkg.a", ["pkg.*"], True),
        ("other", ["pkg", "oth*"], True),
    ],
)
def test_include_and_exclude_patterns(name, patterns, expected):
    assert import_hook.matches(name, patterns) is expected


def test_settings_merge_pyproject_arguments_and_environment(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.autostatic]\ninclude = ["a", "b.*"]\nexclude = "c"\ncache = false\n'
    )
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    monkeypatch.delenv("AUTOSTATIC_STRICT", raising=False)
    s = import_hook.resolve_settings(include="x")
    assert s == import_hook.Settings(("x", "a", "b.*"), ("c",), False, False)
    monkeypatch.setenv("AUTOSTATIC_STRICT", "1")
    assert import_hook.resolve_settings().strict is True
    assert import_hook.Settings.from_env(s.to_env()) == s


@pytest.mark.parametrize(
    "text, settings",
    [
        ('[project]\nname = "app"\ndependencies = ["autostatic>=0.1"]\n', None),
        ("[tool.black]\nline-length = 99\n", None),
        ('[tool.autostatic]\ninclude = ["app"]\n', ("app",)),
        ('[tool]\nautostatic.include = ["app"]\n', ("app",)),
        ('tool = { autostatic = { include = ["app"] } }\n', ("app",)),
        ('[tool."autost\\u0061tic"]\ninclude = ["app"]\n', ("app",)),
        ('[ tool . "autostatic" ]\ninclude = "app"\n', ("app",)),
    ],
)
def test_a_pyproject_is_parsed_only_when_it_can_configure_autostatic(
    tmp_path, monkeypatch, text, settings
):
    import sys
    import tomllib

    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    parsed = []
    monkeypatch.setattr(tomllib, "loads", lambda t, _l=tomllib.loads: parsed.append(1) or _l(t))
    monkeypatch.setitem(sys.modules, "tomllib", tomllib)
    assert import_hook.resolve_settings().include == (settings or ())
    assert bool(parsed) is (settings is not None)


def test_a_broken_pyproject_that_configures_autostatic_warns(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.autostatic\ninclude = [\n")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="cannot read"):
        assert import_hook.resolve_settings().include == ()


def test_install_is_idempotent_a_context_manager_and_uninstall_removes_it(monkeypatch, tmp_path):
    import sys

    monkeypatch.chdir(tmp_path)
    import_hook.uninstall()
    before = list(sys.meta_path)
    try:
        with import_hook.install(include="a") as outer:
            assert sum(isinstance(f, import_hook.AutostaticFinder) for f in sys.meta_path) == 1
            assert sys.meta_path[0] is outer.finder
            with import_hook.install(include="b") as inner:
                assert inner.finder is outer.finder and inner.settings.include == ("b",)
                assert sum(isinstance(f, import_hook.AutostaticFinder) for f in sys.meta_path) == 1
            assert outer.settings.include == ("a",)
        assert sys.meta_path == before
        import_hook.install()
        import_hook.uninstall()
        assert sys.meta_path == before
    finally:
        import_hook.uninstall()


def test_the_public_names():
    import autostatic

    assert autostatic.install is import_hook.install
    assert autostatic.uninstall is import_hook.uninstall
    assert isinstance(autostatic.convert, types.FunctionType)


def test_the_variable_alias_is_a_dunder_that_namespace_walkers_skip():
    # toolz.curried curries every callable of a module namespace whose name has no '__'
    source = "def f(x):\n    if x:\n        return 1\n    return 0\n"
    namespace, report = _run(source)
    public = sorted(k for k, v in namespace.items() if callable(v) and "__" not in k)
    assert public == ["f"] and report.sym == "__jst_Variable__"
    namespace, report = _run("__jst_Variable__ = 2\n" + source)
    assert report.sym == "__jst_Variable1__" and namespace["__jst_Variable__"] == 2
    assert namespace["f"](1) == 1


def test_a_module_without_functions_gets_no_callable_alias():
    # toolz.curried.operator fills its namespace from locals() and checks every callable in it
    namespace, report = _run("import operator\nlocals().update(vars(operator))\nx = 1\n")
    assert report.converted == 0 and "__jst_Variable__" not in namespace
    assert [k for k, v in namespace.items() if callable(v) and k not in vars(operator)] == []

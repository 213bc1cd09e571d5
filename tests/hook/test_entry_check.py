"""The entry check: eager calls run the original body; tracing builds the tracing body lazily."""

from __future__ import annotations

import glob
import importlib
import itertools
import json
import os
import shutil
import sys
import types
import warnings

import pytest

import autostatic
import autostatic.lazy as lazy
import autostatic.tracing_factory as tf
import autostatic_switch
from autostatic.hook.bytecode import instrument_code
from autostatic.hook.entry import MARK, SOURCE, instrument, is_checked
from autostatic_runtime import convert_ops
from autostatic_runtime.errors import StaticBuildError
from tests.hook.conftest import ok, run, write_files

MODULE = '''
# autostatic: enable
"""A marked module."""
from __future__ import annotations

import sys
import warnings

Z = 100


def caller_file():
    return sys._getframe(1).f_code.co_filename


def warn():
    warnings.warn("careful", stacklevel=2)


def sign(x):
    """Doc."""
    if x > 0:
        return 1
    return -1


def signature(a, b=2, /, c=3, *args, d, e=5, **kw):
    return [a, b, c, list(args), d, e, sorted(kw.items())]


def make_closure(q):
    unbound_later = None
    del unbound_later

    def inner(a, *args, c=3, **kw):
        if a > 0:
            return a + q + c + len(args) + len(kw) + Z
        return unbound_later

    return inner


class Base:
    def m(self, x):
        return x * 10


class Net(Base):
    __secret = 5

    def m(self, x: int = 2, *, k=1):
        if x > 0:
            return super().m(x) + self.__secret + k
        return 0

    def same(self, other):
        return isinstance(other, Net)  # the class's own name: the module's global


def gen(n):
    yield from range(n)


async def coro():
    return 1


def counter():
    count = 0

    def bump():
        nonlocal count
        count += 1
        return count

    return bump


square = lambda v: v * v  # noqa: E731
'''

_names = itertools.count()


@pytest.fixture
def load(tmp_path, monkeypatch):
    """``load(source)``: a fresh marked module imported through the hook (no disk cache)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = []

    def load(source: str = MODULE):
        name = f"entry_mod_{next(_names)}"
        write_files(tmp_path, {f"{name}.py": source})
        importlib.invalidate_caches()
        with autostatic.install(cache=False):
            module = importlib.import_module(name)
        loaded.append(name)
        return module

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


@pytest.fixture
def tracing(monkeypatch):
    """Turn the tracing flag on (as static mode does) for the block's calls."""

    class Switch:
        def __enter__(self):  # (the hook's entry checks read autostatic_switch's)
            monkeypatch.setattr(convert_ops, "tracing", True)
            monkeypatch.setattr(autostatic_switch, "tracing", True)

        def __exit__(self, *exc):
            monkeypatch.setattr(convert_ops, "tracing", convert_ops.FORCE_CONVERTED)
            monkeypatch.setattr(autostatic_switch, "tracing", convert_ops.FORCE_CONVERTED)

    return Switch()


@pytest.fixture
def builds(monkeypatch):
    """The qualnames ``tracing_factory`` converted, in order."""
    made = []
    real = tf.tracing_factory

    def counting(node, **kwargs):
        made.append(kwargs["qualname"])
        return real(node, **kwargs)

    monkeypatch.setattr(tf, "tracing_factory", counting)
    return made


def test_every_function_but_generators_async_and_nonlocal_writers_gets_a_check(load):
    m = load()
    for fn in (m.caller_file, m.sign, m.signature, m.make_closure, m.make_closure(1), m.Net.m):
        assert is_checked(fn.__code__), fn
    for fn in (m.gen, m.coro, m.counter().__code__, m.square):
        code = fn if isinstance(fn, types.CodeType) else fn.__code__
        assert not is_checked(code), fn
    assert m.counter.__code__ and is_checked(m.counter.__code__)


def test_eager_calls_are_the_original_body_with_exact_frames(load, builds):
    m = load()
    assert m.caller_file() == __file__
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        m.warn()
    assert [w.filename for w in got] == [__file__]
    assert m.sign.__doc__ == "Doc." and m.sign(3) == 1
    assert m.Net().m(3) == 36 and list(m.gen(2)) == [0, 1] and m.square(3) == 9
    with pytest.raises(NameError):
        m.make_closure(1)(0)
    assert builds == []  # nothing converted by eager calls


def test_the_tracing_body_is_built_on_the_first_traced_call_only(load, builds, tracing):
    m = load()
    with tracing:
        assert m.sign(3) == 1 and m.sign(-3) == -1
        assert builds == ["sign"]
        assert m.sign(0) == -1
    assert builds == ["sign"]
    assert m.sign(5) == 1  # eager again


def test_arguments_closures_super_and_defaults_reach_the_tracing_function(load, tracing, builds):
    m = load()
    inner = m.make_closure(2)  # made eagerly: its own entry check gets its free variables
    calls = [
        lambda: m.signature(1, d=4),
        lambda: m.signature(1, 2, 3, 4, 5, d=6, e=7, f=8, g=9),
        lambda: inner(1, 9, 9, c=4, x=1),
        lambda: m.Net().m(),
        lambda: m.Net().m(3, k=2),
        lambda: m.Net().m(-1),
        lambda: m.counter()(),
        lambda: m.Net().same(m.Net()),
    ]
    eager = [call() for call in calls]
    with tracing:
        traced = [call() for call in calls]
        with pytest.raises(NameError):  # an unbound free variable stays unbound
            inner(0)
    assert traced == eager
    assert {"signature", "make_closure.<locals>.inner", "Net.m"} <= set(builds)


def test_a_changed_source_is_never_traced(load, tracing, tmp_path):
    m = load()
    with open(m.__file__, "a") as f:
        f.write("\n# edited after the import\n")
    with tracing, pytest.raises(StaticBuildError) as info:
        m.sign(1)
    assert m.__file__ in str(info.value) and "re-import the module" in str(info.value)
    assert m.sign(1) == 1  # the eager body is what was imported


def test_convert_writes_nothing_into_globals_and_uses_the_real_cells(tracing):
    def outer():
        total = 0

        def add(x):
            nonlocal total
            if x > 0:
                total += x
            return total

        return add, lambda: total

    add, read = outer()
    before = set(globals())
    converted = autostatic.convert(add)
    assert set(globals()) == before
    with tracing:
        assert converted(2) == 2 and converted(3) == 5
    assert read() == 5  # the tracing body wrote the function's own cell
    assert converted.__wrapped__ is add and converted(0) == 5


def test_the_entry_check_is_keyed_by_its_code_and_the_modules_source_hash():
    """No constant per function (a key tuple in each made a warm import unmarshal a third
    more): ``traced()`` rebuilds the key from the caller's code and ``__autostatic_source__``."""
    source = "def f(x):\n    'Doc.'\n    return x\n"
    tree = instrument(source, "m.py", b"\x01" * 8).tree
    assign = tree.body[1]
    assert assign.targets[0].id == SOURCE and assign.value.value == "01" * 8
    check = tree.body[2].body[1]
    assert check.body[0].value.func.args == []  # traced()
    assert check.lineno == 1  # on the def line: the body's lines are untouched
    ns = {}
    exec(compile(tree, "m.py", "exec"), ns)
    assert lazy._hook_key(ns["f"].__code__, ns) == ("autostatic.entry", "01" * 8, 1, "f")


def test_a_module_using_the_source_hash_name_keeps_keys_in_its_checks():
    source = f"{SOURCE} = 1\ndef f(x):\n    return x\n"
    tree = instrument(source, "m.py", b"\x01" * 8).tree
    assert instrument_code(source.encode(), "m.py", b"\x01" * 8) is None  # the ast path
    check = tree.body[2].body[0]
    assert check.body[0].value.func.args[0].value == ("autostatic.entry", "01" * 8, 2, "f")


def test_a_checked_function_run_with_other_globals_says_what_is_missing():
    code = instrument_code(b"def f(x):\n    return x\n", "/virtual/g.py", b"\x04" * 8)
    ns = {"__jst__": convert_ops}
    exec(code, ns)
    frame = types.SimpleNamespace(f_code=ns["f"].__code__, f_globals={"__jst__": convert_ops})
    with pytest.raises(StaticBuildError, match=SOURCE):
        lazy.traced(None, frame)


def _keys(code: types.CodeType, out: dict, digest: str) -> dict:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _keys(const, out, digest)
            checked = is_checked(const)
            out[const.co_qualname] = lazy._hook_key(const, {SOURCE: digest}) if checked else None
    return out


def test_bytecode_and_ast_entry_checks_agree():
    source = (MODULE + "\n@staticmethod\n@staticmethod\ndef decorated(x):\n    return x\n").encode()
    digest = b"\x02" * 8
    by_ast = compile(instrument(source, "m.py", digest).tree, "m.py", "exec", dont_inherit=True)
    by_bytecode = instrument_code(source, "m.py", digest)
    assert by_bytecode is not None
    keys = _keys(by_bytecode, {}, "02" * 8)
    assert keys == _keys(by_ast, {}, "02" * 8)
    for module in (by_ast, by_bytecode):  # the source hash, set first thing
        ns = {}
        exec(module, ns)
        assert ns[SOURCE] == "02" * 8
    assert keys["decorated"] == (MARK, "02" * 8, source.count(b"\n") - 3, "decorated")
    assert keys["gen"] is None and keys["counter.<locals>.bump"] is None
    assert keys["Net.m"] is not None and keys["make_closure.<locals>.inner"] is not None


def test_bytecode_entry_checks_keep_lines_and_exception_handling():
    source = b"""
def f(x):
    try:
        y = 1 / x
    except ZeroDivisionError:
        return "zero"
    finally:
        pass
    with open(__file__) as fh:
        pass
    for i in range(3):
        if i == x:
            break
    return y
def fail(x):
    return [1][x]
"""
    code = instrument_code(source, "/virtual/b.py", b"\x03" * 8)
    ns = {"__jst__": convert_ops, "__file__": __file__}
    exec(code, ns)
    assert ns["f"](0) == "zero" and ns["f"](2) == 0.5
    with pytest.raises(IndexError) as info:
        ns["fail"](3)
    tb = info.tb
    while tb.tb_next:
        tb = tb.tb_next
    assert (tb.tb_frame.f_code.co_filename, tb.tb_lineno) == ("/virtual/b.py", 16)
    plain = compile(source, "/virtual/b.py", "exec")
    f_plain = next(c for c in plain.co_consts if getattr(c, "co_name", "") == "f")
    f_checked = ns["f"].__code__
    lines = {p[0] for p in f_plain.co_positions()}
    assert {p[0] for p in f_checked.co_positions()} == lines  # the check sits on the def line


# -- subprocesses: the disk cache -----------------------------------------------------------

TRACE = """
import json, sys, traceback
import autostatic
autostatic.install()
import app.mod as m
import autostatic_switch
autostatic_switch.tracing = True
out = [m.sign(3), m.Net().m(2), m.make_closure(1)(1)]
try:
    m.Net().m("x")
except TypeError as exc:
    tb = exc.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    out.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
out.append("gast" in sys.modules)
print(json.dumps(out))
"""


def _app(base):
    write_files(base, {"app/__init__.py": "", "app/mod.py": MODULE})


def test_tracing_factories_are_cached_and_a_moved_project_gets_its_new_file_names(tmp_path):
    first = tmp_path / "first"
    _app(first)
    cold = json.loads(ok(run(TRACE, first)))
    where = str(first / "app" / "mod.py")
    line = MODULE.lstrip("\n").splitlines().index("        if x > 0:", 40) + 1
    assert cold == [1, 26, 105, [where, line], True]
    (tracing_file,) = glob.glob(str(first / "app" / "__pycache__" / "mod.*-tracing.pyc"))
    warm = json.loads(ok(run(TRACE, first)))
    assert warm[:-1] == cold[:-1] and warm[-1] is False  # no converter: all from the cache
    moved = tmp_path / "moved"
    shutil.move(str(first), str(moved))
    after = json.loads(ok(run(TRACE, moved)))
    assert after == [1, 26, 105, [str(moved / "app" / "mod.py"), line], False]
    assert os.path.exists(tracing_file.replace(str(first), str(moved)))


def test_a_damaged_tracing_cache_is_a_miss(tmp_path):
    _app(tmp_path)
    want = json.loads(ok(run(TRACE, tmp_path)))
    (path,) = glob.glob(str(tmp_path / "app" / "__pycache__" / "mod.*-tracing.pyc"))
    good = open(path, "rb").read()
    flipped = bytearray(good)
    flipped[-5] ^= 0xFF
    for damage in (b"", good[:40], bytes(flipped), b"\0" * len(good)):
        with open(path, "wb") as f:
            f.write(damage)
        got = json.loads(ok(run(TRACE, tmp_path)))
        assert got[:-1] == want[:-1] and got[-1] is True  # converted again
        assert open(path, "rb").read() != damage  # and rewritten


def test_forced_converted_runs_every_call_through_the_tracing_body(tmp_path):
    _app(tmp_path)
    write_files(tmp_path, {"app/plain.py": "def plain(x):\n    return x + 1\n"})
    code = """
import json, sys
import autostatic, autostatic.lazy as lazy
autostatic.install()
import app.mod as m
from app.plain import plain
print(json.dumps([m.sign(2), m.caller_file(), "_jst" in vars(m), autostatic.convert(plain)(1),
                  sum(bool(e.functions) for e in lazy._entries.values())]))
"""
    # forced: the hook converts every function at import (converted bodies in the functions'
    # own frames: frame inspection sees what it sees unconverted); convert() goes through its
    # tracing function
    assert json.loads(ok(run(code, tmp_path, AUTOSTATIC_FORCE_CONVERTED="1"))) == [
        1, "<string>", True, 2, 1
    ]  # fmt: skip
    assert json.loads(ok(run(code, tmp_path))) == [1, "<string>", False, 2, 0]
    forced = glob.glob(str(tmp_path / "app" / "__pycache__" / "mod.*-autostatic-*-forced.pyc"))
    assert len(forced) == 1  # cached apart from the entry-checked module


def test_lazy_registers_itself_with_the_runtime_on_the_first_trace(load, tracing):
    m = load()
    saved, convert_ops._traced_caller[0] = convert_ops._traced_caller[0], None  # a fresh process
    try:
        with tracing:
            assert m.sign(3) == 1
        assert convert_ops._traced_caller[0] is lazy.traced
    finally:
        convert_ops._traced_caller[0] = convert_ops._traced_caller[0] or saved


def test_a_function_calling_a_global_of_its_own_name(load, tracing):
    m = load(
        "# autostatic: enable\n"
        "def to_text(x):\n    return str(x)\n\n"
        "class Table:\n    def to_text(self, sep=','):\n"
        "        return sep.join(to_text(v) for v in (1, 2))\n"
    )
    with tracing:
        assert m.Table().to_text() == "1,2"
    converted = autostatic.convert(_recursive)  # calls itself: the module's global
    with tracing:
        assert converted(3) == 6


def _recursive(n):
    return 0 if n <= 0 else n + _recursive(n - 1)


def test_only_modules_the_hook_compiled_count_as_the_hooks(load):
    """A module that imports ``convert_ops`` itself (as this one does) is not the hook's: with
    converted bodies forced, ``convert_call`` must still convert its functions."""
    from autostatic.callables import _hook_converted

    m = load()
    assert _hook_converted(m.sign)
    assert not _hook_converted(test_only_modules_the_hook_compiled_count_as_the_hooks)

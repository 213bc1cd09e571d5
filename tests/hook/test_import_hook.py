"""Subprocesses: real packages imported through the hook."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import zipfile

import numpy as np

from tests.hook.conftest import child_env, ok, run, settle, write_files

PREAMBLE = """
import sys, json, warnings
import autostatic
autostatic.install()
"""


def test_a_marked_package_converts_and_behaves_as_written(marked_pkg):
    out = ok(
        run(
            PREAMBLE
            + """
import pkg.mod as m, pkg.plain as p
print(json.dumps([
    "__jst__" in vars(m), "__jst__" in vars(p), m.sign(-2), m.count(4), m.Model().forward(3),
    m.__file__, m.__cached__, type(m.__spec__.loader).__name__, m.__spec__.name,
]))
""",
            marked_pkg,
        )
    )
    conv, plain, sign, count, fwd, file, cached, loader, name = json.loads(out)
    assert conv and not plain
    assert (sign, count, fwd) == (-1, 10, 6)
    assert file == str(marked_pkg / "pkg" / "mod.py")
    assert cached.endswith(f"mod.{sys.implementation.cache_tag}-autostatic-0.1.0.pyc")
    assert os.path.exists(cached)
    assert (loader, name) == ("AutostaticLoader", "pkg.mod")
    # Python's own bytecode cache never receives converted code
    standard = marked_pkg / "pkg" / "__pycache__" / f"mod.{sys.implementation.cache_tag}.pyc"
    assert not standard.exists()
    plain_import = ok(run("import pkg.mod as m; print('__jst__' in vars(m))", marked_pkg))
    assert plain_import.strip() == "False"


def test_importing_never_loads_the_converter_tracing_does(marked_pkg):
    code = PREAMBLE + (
        "import pkg.mod as m\n"
        "def loaded():\n"
        "    return sorted(k for k in sys.modules if k == 'gast' or k.startswith(\n"
        "        ('autostatic.transformers', 'autostatic.conversion', 'autostatic.pyct')))\n"
        "print('__jst__' in vars(m), loaded())\n"
        "import autostatic_switch\n"
        "autostatic_switch.tracing = True\n"
        "print(m.sign(-3), loaded()[:2])\n"
    )
    cold = ok(run(code, marked_pkg)).splitlines()
    assert cold == ["True []", "-1 ['autostatic.conversion', 'autostatic.pyct']"]
    warm = ok(run(code, marked_pkg)).splitlines()  # tracing factories come from the cache
    assert warm == ["True []", "-1 []"]


def test_include_exclude_and_disable(tmp_path):
    write_files(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/a.py": "def f(x):\n    return x\n",
            "lib/b.py": "# autostatic: disable\ndef f(x):\n    return x\n",
            "lib/sub/__init__.py": "",
            "lib/sub/c.py": "def f(x):\n    return x\n",
            "lib/sub/d.py": "# autostatic: enable\ndef f(x):\n    return x\n",
        },
    )
    out = ok(
        run(
            """
import autostatic
autostatic.install(include=["lib"], exclude=["lib.sub.*"])
import lib, lib.a, lib.b, lib.sub.c, lib.sub.d
print([("__jst__" in vars(m)) for m in (lib, lib.a, lib.b, lib.sub.c, lib.sub.d)])
""",
            tmp_path,
        )
    )
    assert out.strip() == "[True, True, False, False, False]"


def test_pyproject_settings_apply(tmp_path):
    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.autostatic]\ninclude = ["app.*"]\ncache = false\n',
            "app/__init__.py": "",
            "app/x.py": "def f(x):\n    return x\n",
        },
    )
    out = ok(run(PREAMBLE + "import app.x as x; print('__jst__' in vars(x))", tmp_path))
    assert out.strip() == "True"
    assert not glob.glob(str(tmp_path / "app" / "__pycache__" / "*autostatic*"))


def test_relative_circular_imports_and_reload(tmp_path):
    write_files(
        tmp_path,
        {
            "cyc/__init__.py": "# autostatic: enable\nfrom . import a\n",
            "cyc/a.py": "# autostatic: enable\nfrom . import b\n\ndef fa(n):\n"
            "    return 0 if n <= 0 else b.fb(n - 1) + 1\n",
            "cyc/b.py": "# autostatic: enable\nfrom . import a\n\ndef fb(n):\n"
            "    if n <= 0:\n        return 0\n    return a.fa(n - 1) + 1\n",
        },
    )
    out = ok(
        run(
            PREAMBLE
            + """
import importlib, os
import cyc
from cyc import a, b
first = a.fa(5)
with open(b.__file__, "a") as f:
    f.write("\\ndef extra():\\n    if True:\\n        return 'reloaded'\\n")
importlib.invalidate_caches()
b2 = importlib.reload(b)
print(json.dumps([first, "__jst__" in vars(a), "__jst__" in vars(b2), b2.extra(), b2 is b]))
""",
            tmp_path,
        )
    )
    assert json.loads(out) == [5, True, True, "reloaded", True]


def test_a_source_edit_between_imports_is_picked_up(marked_pkg):
    code = PREAMBLE + "import pkg.mod as m; print(m.sign(5), '__jst__' in vars(m))"
    assert ok(run(code, marked_pkg)).split() == ["1", "True"]
    mod = marked_pkg / "pkg" / "mod.py"
    text = mod.read_text().replace("y = 1\n", "y = 100\n")
    mtime = os.stat(mod).st_mtime_ns
    mod.write_text(text)
    os.utime(mod, ns=(mtime, mtime))  # same mtime: only the source hash can tell
    assert ok(run(code, marked_pkg)).split() == ["100", "True"]


def test_a_same_size_edit_keeping_the_mtime_is_picked_up(marked_pkg):
    """An edit in the same tick of the file system's clock keeps the modification time, and
    tools restore it (here: os.utime); the size is the same. The change time tells (and the
    entry of a source changed within the tick has no stat key: test_cache.py)."""
    mod = marked_pkg / "pkg" / "mod.py"
    settle(mod)  # the cold import records the source's stat key
    code = PREAMBLE + "import pkg.mod as m; print(m.sign(5), m.sign(-5), '__jst__' in vars(m))"
    assert ok(run(code, marked_pkg)).split() == ["1", "-1", "True"]
    st = os.stat(mod)
    mod.write_text(mod.read_text().replace("y = 1\n", "y = 7\n"))
    os.utime(mod, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(mod).st_size == st.st_size
    assert ok(run(code, marked_pkg)).split() == ["7", "-1", "True"]


def test_a_corrupted_cache_file_is_ignored_and_replaced(marked_pkg):
    code = PREAMBLE + "import pkg.mod as m; print(m.count(3), '__jst__' in vars(m))"
    ok(run(code, marked_pkg))
    (cached,) = glob.glob(str(marked_pkg / "pkg" / "__pycache__" / "mod.*autostatic*.pyc"))
    for damage in (b"", b"garbage" * 10, open(cached, "rb").read()[:40]):
        with open(cached, "wb") as f:
            f.write(damage)
        assert ok(run(code, marked_pkg)).split() == ["6", "True"]
        assert os.path.getsize(cached) > 40  # rewritten


def test_an_unwritable_pycache_is_skipped(marked_pkg):
    pycache = marked_pkg / "pkg" / "__pycache__"
    pycache.write_text("not a directory")  # works as root too, unlike chmod
    code = PREAMBLE + "import pkg.mod as m; print(m.sign(-1), '__jst__' in vars(m), m.__cached__)"
    out = ok(run(code, marked_pkg))
    assert out.split()[:2] == ["-1", "True"]
    assert pycache.read_text() == "not a directory"
    if os.geteuid() != 0:
        pycache.unlink()
        pycache.mkdir()
        os.chmod(pycache, 0o555)
        try:
            assert ok(run(code, marked_pkg)).split()[:2] == ["-1", "True"]
            assert os.listdir(pycache) == []
        finally:
            os.chmod(pycache, 0o755)


def test_pycache_prefix_and_dont_write_bytecode(marked_pkg, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    code = PREAMBLE + "import pkg.mod as m; print(m.__cached__)"
    cached = ok(run(["-X", f"pycache_prefix={prefix}", "-c", code], marked_pkg)).strip()
    assert cached.startswith(str(prefix)) and os.path.exists(cached)
    assert not (marked_pkg / "pkg" / "__pycache__").exists()
    ok(run(["-B", "-c", code], marked_pkg))
    assert not (marked_pkg / "pkg" / "__pycache__").exists()


def test_a_function_that_cannot_be_converted_traces_as_written_with_a_warning(tmp_path):
    write_files(
        tmp_path,
        {
            "bad.py": """
            # autostatic: enable
            def fine(x):
                return x

            def broken(x):
                return x
            """
        },
    )
    code = """
import warnings, autostatic.tracing_factory as tf
real = tf.tracing_factory
def flaky(node, **k):
    if node.name == "broken":
        raise NotImplementedError("construct X at line 5")
    return real(node, **k)
tf.tracing_factory = flaky
import autostatic
autostatic.install(cache=False)
with warnings.catch_warnings(record=True) as got:
    warnings.simplefilter("always")
    import bad
    print(len(got))
    import autostatic_switch
    autostatic_switch.tracing = True
    print(bad.broken(7), bad.fine(8), bad.broken(9))
for w in got:
    print(w.category.__name__, w.filename, w.lineno, str(w.message))
"""
    lines = ok(run(code, tmp_path)).splitlines()
    assert lines[:2] == ["0", "7 8 9"]
    assert len(lines) == 3  # warned once
    category, filename, lineno, message = lines[2].split(" ", 3)
    assert category == "ConversionWarning"
    assert filename == str(tmp_path / "bad.py") and lineno == "5"
    assert "broken" in message and "NotImplementedError" in message
    assert "construct X at line 5" in message and "traced as written" in message


def test_a_module_that_fails_as_a_whole_imports_unconverted(tmp_path):
    write_files(tmp_path, {"whole.py": "# autostatic: enable\ndef f(x):\n    return x\n"})
    code = """
import warnings, autostatic.hook.entry as entry, autostatic.hook.bytecode as bytecode
def boom(*a, **k):
    raise MemoryError("out of luck")
entry.instrument = bytecode.instrument_code = boom
import autostatic
autostatic.install()
with warnings.catch_warnings(record=True) as got:
    warnings.simplefilter("always")
    import whole
print(whole.f(1), "__jst__" in vars(whole), [str(w.message) for w in got])
"""
    out = ok(run(code, tmp_path))
    assert out.startswith("1 False ['autostatic: whole (")
    assert "MemoryError: out of luck" in out and "imported unconverted" in out
    strict = run(code.replace("install()", "install(strict=True)"), tmp_path)
    assert strict.returncode == 1 and "ConversionError" in strict.stderr


def test_a_syntax_error_is_pythons_own(tmp_path):
    write_files(tmp_path, {"broken.py": "# autostatic: enable\ndef f(x):\n    return x +\n"})
    code = """
import sys
try:
    import broken
except SyntaxError as e:
    print(type(e).__name__, e.msg, e.filename, e.lineno, e.offset, e.text)
"""
    plain = ok(run(code, tmp_path))
    hooked = ok(run("import autostatic; autostatic.install()\n" + code, tmp_path))
    assert hooked == plain and hooked.startswith("SyntaxError")


def test_a_traceback_from_deep_in_converted_code_shows_the_users_lines(tmp_path):
    write_files(
        tmp_path,
        {
            "deep.py": """
            # autostatic: enable
            def outer(n):
                while n > 0:
                    n -= 1
                    if n == 1:
                        return inner(n)
                return 0

            def inner(n):
                if n:
                    raise ValueError("deep " + str(n))
                return n
            """
        },
    )
    proc = run(PREAMBLE + "import deep\ndeep.outer(3)\n", tmp_path)
    assert proc.returncode == 1
    path = str(tmp_path / "deep.py")
    assert f'File "{path}", line 6, in outer' in proc.stderr
    assert f'File "{path}", line 11, in inner' in proc.stderr
    assert 'raise ValueError("deep " + str(n))' in proc.stderr


def test_resources_namespace_extension_frozen_pkgutil_and_zip_imports(tmp_path):
    write_files(
        tmp_path,
        {
            "res/__init__.py": "# autostatic: enable\n",
            "res/data.txt": "payload",
            "ns/inner/mod.py": "# autostatic: enable\ndef f(x):\n    return x\n",
            "ns/m2.py": "X = 2\n",
        },
    )
    with zipfile.ZipFile(tmp_path / "lib.zip", "w") as z:
        z.writestr("zipped.py", "# autostatic: enable\ndef f(x):\n    return x * 3\n")
    out = ok(
        run(
            PREAMBLE
            + """
import importlib.resources, pkgutil
sys.path.append("lib.zip")
import res, ns, ns.inner.mod, zipped
import _ctypes, __phello__.spam  # an extension module, a frozen package
print(json.dumps([
    type(_ctypes.__loader__).__name__, __phello__.__spec__.origin,
    importlib.resources.files("res").joinpath("data.txt").read_text(),
    "__jst__" in vars(res),
    list(ns.__path__) != [], ns.__spec__.origin, "__jst__" in vars(ns.inner.mod),
    sorted(m.name for m in pkgutil.iter_modules(ns.__path__)),
    sorted(m.name for m in pkgutil.iter_modules(["."]) if m.name in ("res", "ns", "deep")),
    zipped.f(2), type(zipped.__loader__).__name__,
]))
""",
            tmp_path,
        )
    )
    ext, frozen, *rest = json.loads(out)
    assert (ext, frozen) == ("ExtensionFileLoader", "frozen")
    data, res_conv, ns_path, ns_origin, ns_mod_conv, ns_names, top, zipped, zloader = rest
    assert data == "payload" and res_conv and ns_path and ns_origin is None and ns_mod_conv
    assert ns_names == ["m2"] and top == ["res"]  # as without the hook
    assert zipped == 6 and zloader == "zipimporter"  # zip imports work (left unconverted)


def test_concurrent_processes_share_one_cache(marked_pkg):
    code = PREAMBLE + "import pkg.mod as m; print(m.count(10), '__jst__' in vars(m))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=marked_pkg,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.split() == ["55", "True"]
    pycache = marked_pkg / "pkg" / "__pycache__"
    assert not [n for n in os.listdir(pycache) if n.endswith(".tmp")]
    warm = PREAMBLE + "import pkg.mod as m; print('gast' in sys.modules, '__jst__' in vars(m))"
    assert ok(run(warm, marked_pkg)).split() == ["False", "True"]


def test_a_warm_import_of_an_enabled_module_reads_neither_its_source_nor_the_cache_twice(
    marked_pkg,
):
    """The cache entry records that the module enables itself: a warm import finds it with
    one read of the entry (no look at the source's first lines, no second read at load)."""
    code = PREAMBLE + (
        "import autostatic.hook.finder as finder, autostatic.hook.cache as cache\n"
        "import autostatic_runtime.convert_ops\n"  # loaded, as after any traced program
        "heads, reads = [], []\n"
        "real_head, real_read = finder._read_head, cache._read\n"
        "finder._read_head = lambda p: heads.append(p) or real_head(p)\n"
        "cache._read = lambda *a, **k: reads.append(a[0]) or real_read(*a, **k)\n"
        "import pkg.mod as m\n"
        "print(json.dumps(['__jst__' in vars(m), m.sign(-2),\n"
        "    [h for h in heads if h.endswith('mod.py')], [r for r in reads if 'mod.' in r]]))\n"
    )
    settle(marked_pkg / "pkg" / "mod.py")  # (a source just written is read: cache.settled)
    ok(run(code, marked_pkg))  # cold: writes the entry
    converted, sign, heads, reads = json.loads(ok(run(code, marked_pkg)))
    assert converted and sign == -1
    assert heads == [] and len(reads) == 1


def test_an_entry_written_for_include_settings_is_not_used_without_them(tmp_path):
    write_files(tmp_path, {"lib/__init__.py": "", "lib/a.py": "def f(x):\n    return x\n"})
    code = (
        "import autostatic, sys\n"
        "import autostatic_runtime.convert_ops\n"
        "autostatic.install(include=sys.argv[1:])\n"
        "import lib.a\n"
        "print('__jst__' in vars(lib.a))\n"
    )
    (tmp_path / "imp.py").write_text(code)
    assert ok(run(["imp.py", "lib"], tmp_path)).strip() == "True"
    assert glob.glob(str(tmp_path / "lib" / "__pycache__" / "a.*autostatic*.pyc"))
    assert ok(run(["imp.py"], tmp_path)).strip() == "False"  # the entry is current, unused


def test_importing_a_marked_module_loads_neither_numpy_nor_the_runtime(marked_pkg):
    """Its entry checks read ``autostatic_switch``: a marked module imports (cold, then from
    the cache) at the cost of Python's own import. Tracing loads the runtime when it starts,
    and the module's functions then trace."""
    code = PREAMBLE + (
        "import pkg.mod as m\n"
        "heavy = sorted(k for k in ('numpy', 'autostatic_runtime', 'gast') if k in sys.modules)\n"
        "print(json.dumps([heavy, m.sign(-2), m.count(3), type(m.__jst__).__name__,\n"
        "                  m.__jst__.__name__]))\n"
        "import autostatic_runtime as rt\n"
        "from autostatic_runtime import static\n"
        "sf = autostatic.to_static(m.sign)\n"
        "print(float(sf(rt.to_tensor(3.0))), float(sf(rt.to_tensor(-3.0))))\n"
        "ops = sf.concrete_program.main_program.global_block().ops\n"
        "print(sum(op.type == 'cond' for op in ops))\n"
    )
    for _ in ("cold", "warm"):
        lines = ok(run(code, marked_pkg)).splitlines()
        heavy, sign, count, kind, name = json.loads(lines[0])
        assert heavy == [] and (sign, count) == (-1, 6)
        assert (kind, name) == ("module", "autostatic_switch")
        assert lines[1] == "1.0 -1.0"
        assert lines[2] == "1"  # the tensor `if` is a cond op


def test_a_marked_layer_traces_in_static_mode_entered_by_hand(tmp_path):
    """``rt.enable_static()`` and a ``program_guard``, no ``to_static``: nothing but the mode
    switch tells the marked module's entry checks to trace (the runtime's converter support
    is not loaded yet), and its tensor ``if`` becomes a cond op."""
    write_files(
        tmp_path,
        {
            "mymodel.py": (
                "# autostatic: enable\n"
                "import autostatic_runtime as rt\n\n\n"
                "class Net(rt.nn.Layer):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.fc = rt.nn.Linear(3, 3)\n\n"
                "    def forward(self, x):\n"
                "        y = self.fc(x)\n"
                "        if y.mean() > 0:\n"
                "            y = y * 2\n"
                "        else:\n"
                "            y = y - 1\n"
                "        return y\n"
            )
        },
    )
    code = PREAMBLE + (
        "import mymodel\n"
        "import autostatic_runtime as rt\n"
        "from autostatic_runtime import static\n"
        "loaded = 'autostatic_runtime.convert_ops' in sys.modules\n"
        "net = mymodel.Net()\n"
        "main, startup = static.Program(), static.Program()\n"
        "rt.enable_static()\n"
        "with static.program_guard(main, startup):\n"
        "    out = net(static.data('x', [1, 3], 'float32'))\n"
        "rt.disable_static()\n"
        "print(json.dumps([loaded, sorted({op.type for b in main.blocks for op in b.ops})]))\n"
    )
    loaded, ops = json.loads(ok(run(code, tmp_path)).splitlines()[-1])
    assert not loaded  # (so the mode itself must keep the switch in step)
    assert "cond" in ops


def test_a_training_step_of_a_marked_module_compiles_whole(tmp_path):
    """A marked module's model (a tensor ``if``) and training step, imported under the hook:
    ``to_static`` of the step traces the model's branch into a cond op and appends the
    backward and the update; N compiled steps give the eager losses."""
    write_files(
        tmp_path,
        {
            "trainer.py": (
                "# autostatic: enable\n"
                "import autostatic_runtime as rt\n"
                "import autostatic_runtime.nn.functional as F\n\n\n"
                "class Net(rt.nn.Layer):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.fc = rt.nn.Linear(4, 3)\n\n"
                "    def forward(self, x):\n"
                "        y = self.fc(x)\n"
                "        if y.mean() > 0:\n"
                "            y = y * 2\n"
                "        return y\n\n\n"
                "def train_step(net, x, y, opt):\n"
                "    loss = F.cross_entropy(net(x), y)\n"
                "    loss.backward()\n"
                "    opt.step()\n"
                "    opt.clear_grad()\n"
                "    return loss\n"
            )
        },
    )
    code = PREAMBLE + (
        "import numpy as np, autostatic, trainer\n"
        "import autostatic_runtime as rt\n"
        "def run(step):\n"
        "    rt.seed(1)\n"
        "    net = trainer.Net()\n"
        "    opt = rt.optimizer.Adam(0.05, parameters=net.parameters())\n"
        "    r = np.random.default_rng(0)\n"
        "    x = rt.to_tensor(r.standard_normal((6, 4)).astype('float32'))\n"
        "    y = rt.to_tensor(r.integers(0, 3, 6))\n"
        "    return [float(step(net, x, y, opt)) for _ in range(4)]\n"
        "compiled = autostatic.to_static(trainer.train_step)\n"
        "eager, static = run(trainer.train_step), run(compiled)\n"
        "ops = {op.type for op in compiled.concrete_program.main_program.global_block().ops}\n"
        "print(json.dumps([eager, static, 'cond' in ops, compiled.program_cache.misses]))\n"
    )
    eager, static, has_cond, traces = json.loads(ok(run(code, tmp_path)).splitlines()[-1])
    assert np.allclose(eager, static, rtol=1e-5) and has_cond and traces == 1

"""The hook compiles a marked module as Python does plus an entry check; tracing
bodies are converted lazily (first trace, show/explain/to_code), cached in memory and on disk
beside the module's cache, keyed so a stale entry never runs; moved projects name their new
paths. Each scenario runs fresh Python processes on a small project in ``tmp_path``."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MOD = '''\
# autostatic: enable
"""A marked module."""
import autostatic_runtime as rt


def f(x):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        y = x - 1
    return y


def g(x):
    if rt.mean(x) > 10:
        y = x + 100
    else:
        y = x + 1
    return y


def boom(x, n):
    if n > 0:
        raise ValueError("boom")
    return x


def half(x):
    if rt.mean(x) > 0:
        y = x * 2
    return y
'''

DRIVER = '''\
import json, os, sys, traceback
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autostatic
autostatic.install()
import autostatic_runtime as rt
import mod
out = {"gast_after_import": "gast" in sys.modules,
       "converter_after_import": "autostatic.conversion" in sys.modules}
x = rt.to_tensor([1.0, 2.0])
for name in ("f", "g"):
    fn = getattr(mod, name)
    out[name + "_eager"] = fn(x).numpy().tolist()
    try:
        out[name + "_static"] = autostatic.to_static(fn)(x).numpy().tolist()
    except Exception as e:
        out[name + "_static_error"] = type(e).__name__ + ": " + str(e)
out["gast_after_trace"] = "gast" in sys.modules
out["code_file"] = mod.f.__code__.co_filename
frames = {}
for label, call in (("eager", lambda: mod.boom(x, 1)),
                    ("traced", lambda: autostatic.to_static(mod.boom)(x, 1))):
    try:
        call()
    except Exception as e:
        frames[label] = [fs.filename for fs in traceback.extract_tb(e.__traceback__)]
out["frames"] = frames
try:
    autostatic.to_static(mod.half)(x)
except Exception as e:
    out["half_error"] = type(e).__name__ + ": " + str(e)
print(json.dumps(out))
'''


def env(pythonpath=ROOT):
    e = dict(os.environ)
    for k in ("PYTHONDONTWRITEBYTECODE", "AUTOSTATIC_HOOK", "AUTOSTATIC_FORCE_CONVERTED"):
        e.pop(k, None)
    e["PYTHONPATH"] = pythonpath
    return e


def run_driver(proj, pythonpath=ROOT):
    p = subprocess.run([sys.executable, os.path.join(str(proj), "driver.py")], cwd=str(proj),
                       env=env(pythonpath), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def make_project(base):
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, "mod.py"), "w") as fh:
        fh.write(MOD)
    with open(os.path.join(base, "driver.py"), "w") as fh:
        fh.write(DRIVER)
    return base


def caches(proj):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(proj, "__pycache__", "*")))


def edit(path, old, new, keep_stat=False):
    st = os.stat(path)
    text = open(path).read()
    assert old in text
    text = text.replace(old, new)
    with open(path, "w") as fh:
        fh.write(text)
    if keep_stat:
        assert len(old) == len(new)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


EXPECTED = {"f_eager": [2.0, 4.0], "f_static": [2.0, 4.0], "g_eager": [2.0, 3.0],
            "g_static": [2.0, 3.0]}


def values(out):
    return {k: out.get(k) for k in EXPECTED}


def test_cold_then_warm_lazy_and_cached(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    first = run_driver(proj)
    assert values(first) == EXPECTED
    # importing converts nothing: neither gast nor the converter is loaded
    assert not first["gast_after_import"] and not first["converter_after_import"]
    names = caches(proj)
    assert any(n.endswith("-tracing.pyc") for n in names), names  # beside the module's cache
    assert any("-autostatic-" in n and not n.endswith("-tracing.pyc") for n in names), names
    second = run_driver(proj)
    assert values(second) == EXPECTED
    assert not second["gast_after_import"]
    # tracing bodies come from the disk cache: the converter is not loaded (docs/hook.md)
    assert not second["gast_after_trace"]


def test_eager_calls_do_not_write_tracing_bodies(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    code = textwrap.dedent('''
        import sys, os
        sys.path.insert(0, os.getcwd())
        import autostatic; autostatic.install()
        import autostatic_runtime as rt, mod
        mod.f(rt.to_tensor([1.0])); mod.g(rt.to_tensor([1.0]))
        print("gast" in sys.modules)
    ''')
    p = subprocess.run([sys.executable, "-c", code], cwd=proj, env=env(), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
    assert not any(n.endswith("-tracing.pyc") for n in caches(proj))


def test_edited_source_is_never_stale(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj)
    edit(os.path.join(proj, "mod.py"), "y = x * 2", "y = x * 3")  # change f only
    out = run_driver(proj)
    assert out["f_eager"] == [3.0, 6.0]
    assert out["f_static"] == [3.0, 6.0]
    assert out["g_static"] == [2.0, 3.0]


def test_same_size_same_mtime_edit_never_runs_a_stale_tracing_body(tmp_path):
    """Python itself would run the stale module code (its .pyc is keyed by mtime and size);
    the tracing body must then not be built from the edited source silently, nor the stale
    one from the new: either the static result agrees with the eager one, or it raises."""
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj)
    edit(os.path.join(proj, "mod.py"), "y = x * 2", "y = x * 5", keep_stat=True)
    out = run_driver(proj)
    if "f_static" in out:
        assert out["f_static"] == out["f_eager"]
    else:
        assert "StaticBuildError" in out["f_static_error"]


def test_touched_file_is_still_a_hit(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj)
    before = {n: os.stat(os.path.join(proj, "__pycache__", n)).st_mtime_ns for n in caches(proj)}
    st = os.stat(os.path.join(proj, "mod.py"))
    os.utime(os.path.join(proj, "mod.py"), ns=(st.st_atime_ns + 10**9, st.st_mtime_ns + 10**9))
    out = run_driver(proj)
    assert values(out) == EXPECTED
    assert not out["gast_after_trace"]  # the tracing bodies were reused, not reconverted
    tracing = [n for n in before if n.endswith("-tracing.pyc")]
    assert tracing


def test_edit_while_running_raises_static_build_error(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    code = textwrap.dedent('''
        import sys, os
        sys.path.insert(0, os.getcwd())
        import autostatic; autostatic.install()
        import autostatic_runtime as rt, mod
        src = open("mod.py").read().replace("y = x * 2", "y = x * 7")
        open("mod.py", "w").write(src)
        try:
            r = autostatic.to_static(mod.f)(rt.to_tensor([1.0]))
            print("RESULT", r.numpy().tolist())
        except Exception as e:
            print("ERROR", type(e).__name__, str(e))
    ''')
    p = subprocess.run([sys.executable, "-c", code], cwd=proj, env=env(), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ERROR StaticBuildError"), p.stdout
    assert "mod.py" in p.stdout


def test_moved_project_names_its_new_paths(tmp_path):
    old = make_project(str(tmp_path / "old"))
    run_driver(old)
    new = str(tmp_path / "new")
    shutil.copytree(old, new)  # with its __pycache__
    shutil.rmtree(old)
    out = run_driver(new)
    assert values(out) == EXPECTED
    assert not out["gast_after_trace"]  # the copied cache was used
    assert out["code_file"] == os.path.join(new, "mod.py")
    for label in ("eager", "traced"):
        frames = out["frames"][label]
        assert os.path.join(new, "mod.py") in frames, (label, frames)
        assert not any(fr.startswith(old) for fr in frames), (label, frames)
    # the locations inside cached tracing bodies (error messages, op locations) moved too
    assert out["half_error"].startswith("StaticBuildError"), out["half_error"]
    assert os.path.join(new, "mod.py") + ":" in out["half_error"], out["half_error"]
    assert old not in out["half_error"]


def test_moved_forced_project_names_its_new_paths(tmp_path):
    """AUTOSTATIC_FORCE_CONVERTED=1 caches whole converted modules (-forced.pyc): moved, their
    converted bodies' locations name the new file too."""
    old = make_project(str(tmp_path / "old"))
    e = env()
    e["AUTOSTATIC_FORCE_CONVERTED"] = "1"
    first = subprocess.run([sys.executable, "driver.py"], cwd=old, env=e, capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert glob.glob(os.path.join(old, "__pycache__", "*-forced*.pyc"))
    new = str(tmp_path / "new")
    shutil.copytree(old, new)
    shutil.rmtree(old)
    p = subprocess.run([sys.executable, "driver.py"], cwd=new, env=e, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.splitlines()[-1])
    assert values(out) == EXPECTED
    assert out["code_file"] == os.path.join(new, "mod.py")
    assert os.path.join(new, "mod.py") + ":" in out["half_error"], out["half_error"]
    assert old not in out["half_error"] and old not in json.dumps(out["frames"])


def _copy_packages(dest):
    for pkg in ("autostatic", "autostatic_runtime", "autostatic_switch"):
        shutil.copytree(os.path.join(ROOT, pkg), os.path.join(dest, pkg),
                        ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_edited_compiler_invalidates_entries(tmp_path):
    lib = _copy_packages(str(tmp_path / "lib"))
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj, lib)
    names = caches(proj)
    path = os.path.join(lib, "autostatic", "transformers", "ifelse.py")
    with open(path, "a") as fh:
        fh.write("\n# edited\n")
    out = run_driver(proj, lib)
    assert values(out) == EXPECTED
    assert out["gast_after_trace"]  # converted again: the old entries are not used
    assert caches(proj) == names  # rewritten in place, same names


def test_new_autostatic_version_invalidates_entries(tmp_path):
    lib = _copy_packages(str(tmp_path / "lib"))
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj, lib)
    init = os.path.join(lib, "autostatic", "__init__.py")
    text = open(init).read()
    import autostatic

    assert f'"{autostatic.__version__}"' in text or f"'{autostatic.__version__}'" in text
    text = text.replace(autostatic.__version__, "99.0.0", 1)
    open(init, "w").write(text)
    out = run_driver(proj, lib)
    assert values(out) == EXPECTED
    assert out["gast_after_trace"]
    assert any("-autostatic-99.0.0" in n for n in caches(proj))


def test_edited_runtime_invalidates_tracing_entries(tmp_path):
    """Converted code calls the runtime's convert_* modules: editing one is a new compiler."""
    lib = _copy_packages(str(tmp_path / "lib"))
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj, lib)
    with open(os.path.join(lib, "autostatic_runtime", "convert_ops.py"), "a") as fh:
        fh.write("\n# edited\n")
    out = run_driver(proj, lib)
    assert out["gast_after_trace"]


def test_show_explain_to_code_convert_on_demand(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    e = env(ROOT + os.pathsep + proj)
    show = subprocess.run([sys.executable, "-m", "autostatic", "show", "mod:f"], cwd=proj, env=e,
                          capture_output=True, text=True, timeout=120)
    assert show.returncode == 0, show.stderr
    assert "convert_ifelse" in show.stdout
    explain = subprocess.run([sys.executable, "-m", "autostatic", "explain", "mod.py"], cwd=proj,
                             env=e, capture_output=True, text=True, timeout=120)
    assert explain.returncode == 0, explain.stderr
    assert "mod.py:7" in explain.stdout and "cond" in explain.stdout
    bad = subprocess.run([sys.executable, "-m", "autostatic", "show", "mod:nope"], cwd=proj,
                         env=e, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr


def test_pycache_prefix_and_dont_write_bytecode(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    prefix = str(tmp_path / "prefix")
    e = env()
    e["PYTHONPYCACHEPREFIX"] = prefix
    p = subprocess.run([sys.executable, "driver.py"], cwd=proj, env=e, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert values(json.loads(p.stdout.splitlines()[-1])) == EXPECTED
    assert not os.path.exists(os.path.join(proj, "__pycache__"))
    written = [os.path.basename(f) for f in glob.glob(os.path.join(prefix, "**", "*.pyc"),
                                                      recursive=True)]
    assert any(n.startswith("mod.") and n.endswith("-tracing.pyc") for n in written), written
    # python -B: nothing written, everything still works
    proj2 = make_project(str(tmp_path / "proj2"))
    p = subprocess.run([sys.executable, "-B", "driver.py"], cwd=proj2, env=env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert values(json.loads(p.stdout.splitlines()[-1])) == EXPECTED
    assert not os.path.exists(os.path.join(proj2, "__pycache__"))


def test_corrupt_tracing_entry_is_a_miss(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    run_driver(proj)
    (tracing,) = glob.glob(os.path.join(proj, "__pycache__", "*-tracing.pyc"))
    data = bytearray(open(tracing, "rb").read())
    data[len(data) // 2] ^= 0x10
    open(tracing, "wb").write(bytes(data))
    out = run_driver(proj)
    assert values(out) == EXPECTED
    assert out["gast_after_trace"]  # converted again
    out = run_driver(proj)  # and rewritten: a hit again
    assert not out["gast_after_trace"]


def test_processes_tracing_different_functions_keep_each_others_bodies(tmp_path):
    proj = make_project(str(tmp_path / "proj"))
    code = textwrap.dedent('''
        import sys, os
        sys.path.insert(0, os.getcwd())
        import autostatic; autostatic.install()
        import autostatic_runtime as rt, mod
        for name in sys.argv[1:]:
            autostatic.to_static(getattr(mod, name))(rt.to_tensor([1.0]))
        print("gast" in sys.modules)
    ''')

    def trace(*names):
        p = subprocess.run([sys.executable, "-c", code, *names], cwd=proj, env=env(),
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout.strip()

    assert trace("f") == "True"  # converts f
    assert trace("g") == "True"  # converts g, keeps f's
    assert trace("f", "g") == "False"  # both from the disk cache

"""``python -m autostatic run`` and ``AUTOSTATIC_FORCE_CONVERTED=1`` through the
import hook: a marked module of tricky functions (``cases.py``) gives, with every function's
converted body forced, exactly what plain Python gives (results, exceptions, traceback lines)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))

DRIVER = '''
import json, sys, traceback, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract_cases as cases

def outcome(fn, args):
    try:
        r = fn(*args)
        if hasattr(r, "__next__"):
            r = list(r)
        return ["ok", repr(r), repr(cases.G)]
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return ["raised", type(exc).__name__, str(exc), os.path.basename(tb.filename), tb.lineno]

out = {}
for fn, argsets in cases.CASES:
    out[fn.__name__] = [outcome(fn, a) for a in argsets]
out["yield"] = outcome(cases.yield_function, (7,))
out["converted"] = "convert_ifelse" in cases.many_early_returns.__code__.co_names
print(json.dumps(out))
'''


def env(**extra):
    e = dict(os.environ)
    for k in ("PYTHONDONTWRITEBYTECODE", "AUTOSTATIC_HOOK", "AUTOSTATIC_FORCE_CONVERTED"):
        e.pop(k, None)
    e["PYTHONPATH"] = ROOT
    e.update(extra)
    return e


def test_forced_converted_module_matches_plain_python(tmp_path):
    shutil.copy(os.path.join(HERE, "cases.py"), tmp_path / "contract_cases.py")
    (tmp_path / "driver.py").write_text(DRIVER)
    plain = subprocess.run([sys.executable, "driver.py"], cwd=tmp_path, env=env(),
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr
    forced = subprocess.run([sys.executable, "-m", "autostatic", "run", "driver.py"],
                            cwd=tmp_path, env=env(AUTOSTATIC_FORCE_CONVERTED="1"),
                            capture_output=True, text=True, timeout=120)
    assert forced.returncode == 0, forced.stderr
    want, got = json.loads(plain.stdout), json.loads(forced.stdout)
    assert not want.pop("converted") and got.pop("converted")
    for name in want:
        assert got[name] == want[name], name
    assert glob.glob(str(tmp_path / "__pycache__" / "*-forced*.pyc"))


SCRIPT = '''\
# autostatic: enable
import sys
import autostatic
import autostatic_runtime as rt
import helper

print("argv", sys.argv[1:])
print("name", __name__)
here = __import__("os").path.dirname(__import__("os").path.abspath(__file__))
print("path0", sys.path[0] == here)
x = rt.to_tensor([1.0, -3.0])
print("static", autostatic.to_static(helper.f)(x).numpy().tolist())
print("eager", helper.f(x).numpy().tolist())
print("converted", "__jst__" in vars(helper))
if "--fail" in sys.argv:
    helper.fail(3)
sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
'''

HELPER = '''\
# autostatic: enable
import autostatic_runtime as rt


def f(x):
    if rt.sum(x) > 0:
        return x * 2
    return x - 1


def fail(n):
    if n > 1:
        raise KeyError("bad key")
    return n
'''


def test_run_script(tmp_path):
    (tmp_path / "main.py").write_text(SCRIPT)
    (tmp_path / "helper.py").write_text(HELPER)
    p = subprocess.run([sys.executable, "-m", "autostatic", "run", "main.py", "--opt", "3"],
                       cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, p.stderr
    lines = p.stdout.splitlines()
    assert "argv ['--opt', '3']" in lines
    assert "name __main__" in lines
    assert "path0 True" in lines
    assert "static [0.0, -4.0]" in lines and "eager [0.0, -4.0]" in lines
    assert "converted True" in lines


def test_run_script_traceback_starts_at_user_code(tmp_path):
    (tmp_path / "main.py").write_text(SCRIPT)
    (tmp_path / "helper.py").write_text(HELPER)
    p = subprocess.run([sys.executable, "-m", "autostatic", "run", "main.py", "--fail"],
                       cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    tb = p.stderr.strip().splitlines()
    assert tb[0] == "Traceback (most recent call last):", p.stderr
    assert "main.py" in tb[1], p.stderr  # the first frame is the script's
    assert tb[-1] == "KeyError: 'bad key'"
    assert any('helper.py", line 13, in fail' in line for line in tb), p.stderr


def test_run_module(tmp_path):
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(textwrap.dedent('''\
        import sys
        import autostatic_runtime as rt
        from app import helper
        print("converted", "__jst__" in vars(helper), sys.argv[1:])
        print(helper.f(rt.to_tensor([2.0])).numpy().tolist())
    '''))
    (pkg / "helper.py").write_text(HELPER.replace("# autostatic: enable\n", ""))
    p = subprocess.run([sys.executable, "-m", "autostatic", "run", "--include", "app", "-m", "app",
                        "x"], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "converted True ['x']" in p.stdout
    assert "[4.0]" in p.stdout


def test_user_mistake_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "autostatic", "run", "missing.py"], cwd=tmp_path,
                       env=env(), capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1

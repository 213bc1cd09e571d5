"""Subprocesses: ``python -m autostatic`` runs scripts and modules as Python would."""

from __future__ import annotations

import json
import os
import signal
import sys

from tests.hook.conftest import ok, run, write_files

SCRIPT = """
# autostatic: enable
import json, sys
import pkg.mod as m

def main(n):
    if n > 2:
        return m.count(n)
    return 0

print(json.dumps([sys.argv, sys.path[0], __name__, __file__, __spec__, main(int(sys.argv[1])),
                  "__jst__" in globals(), "__jst__" in vars(m),
                  "__jst__" in main.__code__.co_names]))
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
"""


def test_run_a_marked_script_as_python_would(marked_pkg):
    write_files(marked_pkg, {"tools/script.py": SCRIPT})
    path = str(marked_pkg)
    proc = run(
        ["-m", "autostatic", "run", "tools/script.py", "4", "3"], marked_pkg, PYTHONPATH=path
    )
    assert proc.returncode == 3, proc.stderr
    argv, path0, name, file, spec, result, conv_main, conv_mod, conv_fn = json.loads(proc.stdout)
    assert argv == ["tools/script.py", "4", "3"]
    assert path0 == str(marked_pkg / "tools")
    assert (name, file, spec) == ("__main__", str(marked_pkg / "tools" / "script.py"), None)
    assert (result, conv_main, conv_mod, conv_fn) == (10, True, True, True)
    # plain Python sees the same, unconverted (sys.path[0] set so pkg is importable)
    plain = run(["tools/script.py", "4"], marked_pkg, PYTHONPATH=path)
    assert json.loads(plain.stdout)[:6] == [["tools/script.py", "4"], *json.loads(proc.stdout)[1:6]]


def test_run_an_unmarked_script_leaves_it_alone_and_include_converts_modules(marked_pkg):
    write_files(
        marked_pkg,
        {"s.py": "import pkg.plain as p\nprint('__jst__' in globals(), '__jst__' in vars(p))\n"},
    )
    assert ok(run(["-m", "autostatic", "run", "s.py"], marked_pkg)).split() == ["False", "False"]
    out = ok(run(["-m", "autostatic", "run", "--include", "pkg", "s.py"], marked_pkg))
    assert out.split() == ["False", "True"]


def test_tracebacks_start_at_the_users_code(tmp_path):
    write_files(
        tmp_path,
        {
            "boom.py": """
            # autostatic: enable
            def deep(x):
                if x:
                    raise ValueError("deep")

            deep(1)
            """
        },
    )
    proc = run(["-m", "autostatic", "run", "boom.py"], tmp_path)
    plain = run(["boom.py"], tmp_path)
    assert proc.returncode == plain.returncode == 1
    assert proc.stderr == plain.stderr
    assert "autostatic" not in proc.stderr and "line 4, in deep" in proc.stderr


def test_the_console_script_entry_point_behaves_the_same(tmp_path):
    write_files(tmp_path, {"e.py": "import sys\nprint(sys.argv)\nraise SystemExit(4)\n"})
    entry = (
        "import sys; from autostatic.hook.cli import main; sys.argv[0] = 'autostatic'; "
        "sys.exit(main())"
    )
    proc = run(["-c", entry, "run", "e.py", "x"], tmp_path)
    assert proc.returncode == 4 and proc.stdout.strip() == "['e.py', 'x']", proc.stderr


def test_a_script_with_a_syntax_error_fails_as_python_does(tmp_path):
    for marked in ("", "# autostatic: enable\n"):
        write_files(tmp_path, {"bad.py": marked + "def f(:\n    pass\n"})
        proc = run(["-m", "autostatic", "run", "bad.py"], tmp_path)
        plain = run(["bad.py"], tmp_path)
        assert proc.returncode == plain.returncode == 1
        assert proc.stderr == plain.stderr and "Traceback" not in proc.stderr


def test_keyboard_interrupt_ends_the_process_as_python_does(tmp_path):
    write_files(tmp_path, {"k.py": "raise KeyboardInterrupt\n"})
    proc = run(["-m", "autostatic", "run", "k.py"], tmp_path)
    plain = run(["k.py"], tmp_path)
    assert proc.returncode == plain.returncode == -signal.SIGINT
    assert proc.stderr == plain.stderr


def test_run_dash_m_a_package_with_main(tmp_path):
    write_files(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/__main__.py": """
            # autostatic: enable
            import json, sys
            from . import helper
            print(json.dumps([__name__, __spec__.name, sys.argv, helper.h(0),
                              "__jst__" in globals(), "__jst__" in vars(helper)]))
            """,
            "app/helper.py": "def h(x):\n    return x if x else -1\n",
        },
    )
    out = ok(
        run(["-m", "autostatic", "run", "--include", "app.helper", "-m", "app", "a"], tmp_path)
    )
    name, spec_name, argv, h, conv_main, conv_helper = json.loads(out)
    assert (name, spec_name, h, conv_main, conv_helper) == ("__main__", "app.__main__", -1, 1, 1)
    assert argv == [str(tmp_path / "app" / "__main__.py"), "a"]


def test_user_mistakes_are_one_line_without_traceback(tmp_path):
    for args, status, text in [
        (["run", "missing.py"], 2, "can't open file 'missing.py'"),
        (["run", "-m", "no_such_module_xyz"], 1, "No module named no_such_module_xyz"),
        (["run"], 2, "run needs a script"),
        (["run", "--bogus", "x.py"], 2, "unknown option"),
        (["show", "no_such_module_xyz"], 2, "no module named"),
        (["frobnicate"], 2, "unknown command"),
    ]:
        proc = run(["-m", "autostatic", *args], tmp_path)
        assert proc.returncode == status, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and text in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_version_and_help(tmp_path):
    assert ok(run(["-m", "autostatic", "--version"], tmp_path)).strip() == "autostatic 0.1.0"
    assert "autostatic run" in ok(run(["-m", "autostatic", "--help"], tmp_path))


def test_show_and_explain(marked_pkg):
    shown = ok(run(["-m", "autostatic", "show", "pkg.mod:sign"], marked_pkg))
    assert shown.startswith("def sign(x):\n") and "convert_ifelse" in shown  # the tracing body
    assert "_jst.tracing" not in shown
    diff = ok(run(["-m", "autostatic", "show", "pkg/mod.py", "--diff"], marked_pkg))
    assert "+++ pkg/mod.py (converted)" in diff and "+import autostatic_runtime.convert_ops" in diff
    level0 = ok(run(["-m", "autostatic", "show", "pkg.mod:count", "--level", "0"], marked_pkg))
    assert "_jst" not in level0 and "while n > 0" in level0
    write_files(
        marked_pkg,
        {
            "ex.py": """
            def f(x, xs):
                if x > 0:
                    x = x - 1
                while x > 0:
                    if x > 5:
                        return x
                    x = x - 1
                for v in xs:
                    x = x + v
                while x < 0:
                    x = x + 1
                if xs is None or "relu" in xs:
                    x = -x
                return x
            """
        },
    )
    report = ok(run(["-m", "autostatic", "explain", "ex.py"], marked_pkg)).splitlines()
    assert report[0] == "f (ex.py:1)"
    assert report[1] == "    ex.py:2: if: can become a 'cond' op"
    assert report[2] == "    ex.py:4: while: can become a 'while' op"  # return: lowered
    assert report[3] == "    ex.py:5: if: can become a 'cond' op"
    assert report[4].startswith("    ex.py:8: for: can become a 'while' op when it iterates")
    assert report[5] == "    ex.py:10: while: can become a 'while' op"
    assert report[6] == (
        "    ex.py:12: if: stays Python: its test (in/is, == with a string, isinstance...) is "
        "always a Python bool, never a tensor"
    )


def test_spawned_children_keep_the_hook(tmp_path):
    write_files(
        tmp_path,
        {
            "work.py": """
            # autostatic: enable
            def job(x):
                if x > 0:
                    return ["__jst__" in globals(), x * 2]
                return [False, 0]
            """,
            "mp_main.py": """
            # autostatic: enable
            import json, multiprocessing as mp
            import work

            def local(x):
                return ["__jst__" in globals(), __name__]

            if __name__ == "__main__":
                with mp.get_context("spawn").Pool(1) as pool:
                    print(json.dumps([pool.map(work.job, [1, 2]), pool.apply(local, (1,))]))
            """,
        },
    )
    out = ok(run(["-m", "autostatic", "run", "mp_main.py"], tmp_path, timeout=180))
    assert json.loads(out) == [[[True, 2], [True, 4]], [True, "__mp_main__"]]


def test_import_autostatic_installs_the_hook_when_the_environment_says_so(marked_pkg):
    code = "import autostatic, pkg.mod as m; print('__jst__' in vars(m))"
    assert ok(run(code, marked_pkg)).strip() == "False"
    env = json.dumps({"include": [], "exclude": [], "cache": True, "strict": False})
    assert ok(run(code, marked_pkg, AUTOSTATIC_HOOK=env)).strip() == "True"


def test_the_console_script_is_declared():
    import tomllib

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["autostatic"] == "autostatic.hook.cli:main"
    assert sys.modules.get("autostatic.hook.cli") is None or True

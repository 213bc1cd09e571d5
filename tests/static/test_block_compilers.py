"""Choosing a block compiler by name, with or without JAX installed."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.backends.jax_backend import JaxBackend
from autostatic_runtime.errors import OpError
from autostatic_runtime.static.compiler import PythonCodegen, get_compiler


def test_names_resolve_to_compilers():
    assert isinstance(get_compiler(None), PythonCodegen)
    assert isinstance(get_compiler("python"), PythonCodegen)
    mine = PythonCodegen()
    assert get_compiler(mine) is mine
    with pytest.raises(ValueError, match="no block compiler 'numba'; known: python, xla"):
        get_compiler("numba")


def test_xla_without_jax_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(JaxBackend, "available", classmethod(lambda cls: False))
    for make in (
        lambda: static.Executor(compiler="xla"),
        lambda: autostatic.to_static(lambda x: x, backend="xla"),
    ):
        with pytest.raises(rt.DeviceError, match=r"needs JAX.*pip install 'autostatic\[xla\]'"):
            make()


def _doubling_program():
    main = static.Program()
    rt.enable_static()
    try:
        with static.program_guard(main, static.Program()):
            x = static.data("x", [2], "float32")
            doubled, tripled = x * 2.0, x * 3.0
    finally:
        rt.disable_static()
    return main, doubled, tripled


def test_a_repeated_call_reuses_its_runner_but_sees_what_changed():
    """Executor.run skips building its cache key when a call repeats the last one's
    program, fetch list and feed names; a fetch list changed in place, other feed names or
    a changed program are new calls."""
    main, doubled, tripled = _doubling_program()
    exe = static.Executor()
    feed = {"x": np.ones(2, "float32")}
    fetch = [doubled]
    assert exe.run(main, feed, fetch)[0].tolist() == [2.0, 2.0]
    assert exe.run(main, feed, fetch)[0].tolist() == [2.0, 2.0]
    assert len(exe._cache) == 1
    fetch[0] = tripled  # the same list object, another variable
    assert exe.run(main, feed, fetch)[0].tolist() == [3.0, 3.0]
    fetch.append(doubled)
    assert [r.tolist() for r in exe.run(main, feed, fetch)] == [[3.0, 3.0], [2.0, 2.0]]
    with pytest.raises(OpError, match="feed 'y'"):
        exe.run(main, {"y": np.ones(2, "float32")}, fetch)
    rt.enable_static()
    try:
        with static.program_guard(main):
            quadrupled = main.global_block().var("x") * 4.0  # the program changes
    finally:
        rt.disable_static()
    fetch[:] = [quadrupled]
    assert exe.run(main, feed, fetch)[0].tolist() == [4.0, 4.0]
    assert exe.run(main, feed, (doubled,))[0].tolist() == [2.0, 2.0]

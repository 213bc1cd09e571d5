"""Choosing a block compiler by name, with or without JAX installed."""

from __future__ import annotations

import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime import static
from autostatic_runtime.backends.jax_backend import JaxBackend
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

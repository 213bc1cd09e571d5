"""Python-semantics tests run each function's both bodies: eager (the original body) and
tracing (the converted, dual-path body that runs while a static program is built)."""

from __future__ import annotations

import pytest

import autostatic_runtime.convert_ops as convert_ops


@pytest.fixture(params=["eager", "tracing"])
def body(request, monkeypatch):
    """Which body a converted function runs: its original one or the converted one."""
    monkeypatch.setattr(convert_ops, "tracing", request.param == "tracing")
    return request.param

"""hypothesmith-generated modules: the hook's conversion either gives code that compiles or
falls back to the plain module with a note (a ConversionWarning), never an exception; source
Python rejects gives Python's own SyntaxError."""

from __future__ import annotations

import os
import types

import pytest
from hypothesis import HealthCheck, given, settings

from autostatic.hook import finder as import_hook

hypothesmith = pytest.importorskip("hypothesmith")

EXAMPLES = int(os.environ.get("AUTOSTATIC_FUZZ_EXAMPLES", "0") or 0)
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large
    ],
)  # fmt: skip


def check_module(source: str) -> None:
    path = "/virtual/generated.py"
    data = source.encode("utf-8")
    loader = import_hook.AutostaticLoader("generated", path, import_hook.Settings())
    try:
        compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as expected:
        with pytest.raises(type(expected)):
            import_hook._convert(loader, "generated", path, data)
        return
    notes, code = import_hook._convert(loader, "generated", path, data)
    assert isinstance(code, types.CodeType)
    assert all(isinstance(line, int) and isinstance(text, str) for line, text in notes)


@settings(max_examples=EXAMPLES or 20, **SETTINGS)
@given(source=hypothesmith.from_grammar())
def test_generated_modules_convert_or_fall_back(source):
    check_module(source)


@settings(max_examples=EXAMPLES or 8, **SETTINGS)
@given(source=hypothesmith.from_node())
def test_generated_syntax_trees_convert_or_fall_back(source):
    check_module(source)

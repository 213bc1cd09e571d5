"""The cache's marshal rewrite: equal local-name tuples written once, code unchanged."""

from __future__ import annotations

import glob
import marshal
import os
import sys

import pytest

from autostatic.hook.bytecode import instrument_code
from autostatic.hook.shared_names import share_local_names

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="CPython 3.11 format")

FUNCTIONS = "".join(
    f"def f{i}(x, n, k):\n    total = x\n    for j in range(n):\n        total += j * k\n"
    f"    return total\n\n"
    for i in range(20)
)
STDLIB = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))[::7]


def _payload(source: bytes, path: str) -> bytes:
    code = instrument_code(source, path, b"\x05" * 8)
    assert code is not None
    return marshal.dumps(((), code, True))


def test_equal_functions_share_one_names_tuple_and_load_the_same_code():
    payload = _payload(FUNCTIONS.encode(), "m.py")
    shared = share_local_names(payload)
    assert len(shared) < len(payload) - 19 * 20  # 19 copies of (x, n, k, total, j) gone
    assert marshal.loads(shared) == marshal.loads(payload)
    code = marshal.loads(shared)[1]
    ns = {"__jst__": __import__("autostatic_runtime.convert_ops", fromlist=["x"])}
    exec(code, ns)
    assert ns["f7"](1, 3, 2) == 7
    # loaded, the functions hold one tuple: marshal writes it once again
    assert len(marshal.dumps(marshal.loads(shared))) == len(shared)


@pytest.mark.parametrize("path", STDLIB, ids=os.path.basename)
def test_standard_library_modules_load_equal_after_the_rewrite(path):
    with open(path, "rb") as f:
        source = f.read()
    for code in (compile(source, path, "exec", dont_inherit=True),
                 instrument_code(source, path, b"\x05" * 8)):  # fmt: skip
        if code is None:
            continue
        payload = marshal.dumps(((), code, False))
        shared = share_local_names(payload)
        assert len(shared) <= len(payload)
        assert marshal.loads(shared) == marshal.loads(payload)


@pytest.mark.parametrize(
    "payload",
    [b"", b"\xff\x00", marshal.dumps(((), 1.5, 2j, b"x", frozenset({1}), {"a": [1]}))[:-3]],
)
def test_anything_unexpected_comes_back_unchanged(payload):
    assert share_local_names(payload) is payload

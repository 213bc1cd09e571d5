"""The hook's on-disk cache under damage, beyond tests/hook: every single-bit flip of an entry
(header or payload) is a miss, never different code, and an import through a damaged or
foreign cache still gives the converted module's correct behaviour."""

from __future__ import annotations

import glob
import sys

import pytest

from autostatic.hook import cache as hook_cache
from tests.hook.conftest import marked_pkg as marked_pkg  # noqa: F401  (a fixture)
from tests.hook.conftest import ok, run

SOURCE = b"def f(x):\n    if x > 0:\n        return x + 1\n    return -x\n"


@pytest.fixture
def entry(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    src = tmp_path / "m.py"
    src.write_bytes(SOURCE)
    path = hook_cache.cache_path(str(src))
    code = compile(SOURCE, str(src), "exec")
    assert hook_cache.write(path, SOURCE, (), code)
    return path, code


@pytest.mark.parametrize("numpy_loaded", [True, False], ids=["word_sum", "crc32"])
def test_every_bit_flip_misses_or_reads_the_same_code(entry, numpy_loaded, monkeypatch):
    if numpy_loaded:  # the word sum, once the CRCs of a process would have paid NumPy's setup
        monkeypatch.setattr(hook_cache, "crc_left", 0)
    else:  # the hook never imports NumPy: a read then checks the CRC
        monkeypatch.setitem(sys.modules, "numpy", None)
    path, code = entry
    blob = open(path, "rb").read()
    for i in range(len(blob)):
        for bit in (0, 3, 7):
            damaged = bytearray(blob)
            damaged[i] ^= 1 << bit
            with open(path, "wb") as f:
                f.write(damaged)
            got = hook_cache.read(path, SOURCE)
            assert got is None or got[1] == code, f"byte {i} bit {bit} gave other code"


PREAMBLE = "import autostatic\nautostatic.install()\n"


@pytest.mark.parametrize("damage", ["other_compiler", "payload_flip", "directory", "foreign"])
def test_imports_through_a_damaged_cache_are_correct(marked_pkg, damage):  # noqa: F811
    code = PREAMBLE + "import pkg.mod as m; print(m.count(3), m.sign(-2), '__jst__' in vars(m))"
    assert ok(run(code, marked_pkg)).split() == ["6", "-1", "True"]
    (cached,) = glob.glob(str(marked_pkg / "pkg" / "__pycache__" / "mod.*autostatic*.pyc"))
    blob = bytearray(open(cached, "rb").read())
    if damage == "other_compiler":
        blob[8:16] = bytes(8)
    elif damage == "payload_flip":
        blob[-20] ^= 0x10
    elif damage == "foreign":  # a valid entry of another module's source
        blob[16:24] = hook_cache.source_hash(b"x = 1\n")
    if damage == "directory":
        import os

        os.unlink(cached)
        os.mkdir(cached)
    else:
        with open(cached, "wb") as f:
            f.write(blob)
    assert ok(run(code, marked_pkg)).split() == ["6", "-1", "True"]

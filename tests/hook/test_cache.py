"""In process: the on-disk cache's file names, validation and atomic writes."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from autostatic import __version__
from autostatic.hook import cache as hook_cache

SOURCE = b"def f(x):\n    return x + 1\n"


@pytest.fixture
def entry(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    src = tmp_path / "m.py"
    src.write_bytes(SOURCE)
    path = hook_cache.cache_path(str(src))
    code = compile(SOURCE, str(src), "exec")
    assert hook_cache.write(path, SOURCE, ((3, "a note"),), code)
    return path, code


def test_the_cache_lives_beside_the_bytecode_under_its_own_tag(tmp_path):
    src = str(tmp_path / "m.py")
    tag = sys.implementation.cache_tag
    assert hook_cache.cache_path(src) == str(
        tmp_path / "__pycache__" / f"m.{tag}-autostatic-{__version__}.pyc"
    )
    assert hook_cache.cache_path(src, "-pytest-9").endswith(
        f"-autostatic-{__version__}-pytest-9.pyc"
    )
    assert importlib.util.cache_from_source(src) == str(tmp_path / "__pycache__" / f"m.{tag}.pyc")


def test_sys_pycache_prefix_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    path = hook_cache.cache_path(str(tmp_path / "src" / "m.py"))
    assert path.startswith(str(tmp_path / "prefix"))
    assert "__pycache__" not in path


def test_a_written_entry_reads_back(entry):
    path, code = entry
    notes, got = hook_cache.read(path, SOURCE)
    assert notes == ((3, "a note"),) and got == code
    assert [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".tmp")] == []


def test_an_edited_source_misses(entry):
    path, _ = entry
    assert hook_cache.read(path, SOURCE + b"# edited in the same second\n") is None


@pytest.mark.parametrize(
    "damage",
    [
        "truncate_header",
        "truncate_payload",
        "garbage_payload",
        "magic",
        "version",
        "empty",
        "extra",
    ],
)
def test_damaged_or_foreign_entries_miss(entry, damage):
    path, _ = entry
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    if damage == "truncate_header":
        blob = blob[:10]
    elif damage == "truncate_payload":
        blob = blob[:-5]
    elif damage == "garbage_payload":
        blob[28:] = b"\xff" * (len(blob) - 28)
    elif damage == "magic":
        blob[0] ^= 0xFF
    elif damage == "version":  # another compiler (version or sources) wrote it
        blob[8] ^= 0xFF
    elif damage == "empty":
        blob = b""
    elif damage == "extra":
        blob += b"junk"
    with open(path, "wb") as f:
        f.write(bytes(blob))
    assert hook_cache.read(path, SOURCE) is None


def _checks(monkeypatch) -> list:
    """The payload checks a read makes (recorded, then made as usual)."""
    made, intact = [], hook_cache._intact
    monkeypatch.setattr(hook_cache, "_intact", lambda *a: made.append(1) or intact(*a))
    return made


def test_an_entry_as_written_is_read_without_its_checksums(entry, monkeypatch):
    path, code = entry
    header = open(path, "rb").read()[: hook_cache._HEADER]
    assert os.stat(path).st_mtime_ns == int.from_bytes(header[64:72], "little")
    made = _checks(monkeypatch)
    assert hook_cache.read(path, SOURCE) == (((3, "a note"),), code)
    assert made == []


@pytest.mark.parametrize("change", ["rewritten", "given_another_time"])
def test_a_file_changed_since_it_was_written_is_checked(entry, monkeypatch, change):
    path, code = entry
    blob = bytearray(open(path, "rb").read())
    written = os.stat(path).st_mtime_ns
    if change == "rewritten":  # the same bytes written again: a new modification time
        with open(path, "wb") as f:
            f.write(blob)
        os.utime(path, ns=(written + 1000, written + 1000))
    else:  # a copy or a tool gave the file another time
        os.utime(path, ns=(written - 10**9, written - 10**9))
    made = _checks(monkeypatch)
    assert hook_cache.read(path, SOURCE) == (((3, "a note"),), code)
    assert made == [1]
    blob[-3] ^= 0x04  # and damage in such a file is a miss
    with open(path, "wb") as f:
        f.write(blob)
    assert hook_cache.read(path, SOURCE) is None


def test_a_file_system_that_cannot_keep_the_time_leaves_entries_checked(entry, monkeypatch):
    path, code = entry
    monkeypatch.setattr(os, "utime", lambda *a, **k: (_ for _ in ()).throw(OSError("no")))
    assert hook_cache.write(path, SOURCE, (), code)  # written all the same
    made = _checks(monkeypatch)
    assert hook_cache.read(path, SOURCE) == ((), code) and made == [1]


def test_a_missing_entry_misses(tmp_path):
    assert hook_cache.read(str(tmp_path / "nope.pyc"), SOURCE) is None


def test_no_write_when_dont_write_bytecode(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = str(tmp_path / "__pycache__" / "m.pyc")
    assert not hook_cache.write(path, SOURCE, (), compile(SOURCE, "m.py", "exec"))
    assert not os.path.exists(path)


def test_an_unwritable_directory_skips_the_write(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "__pycache__").write_text("a file where the directory should be")
    path = str(tmp_path / "__pycache__" / "m.pyc")
    assert not hook_cache.write(path, SOURCE, (), compile(SOURCE, "m.py", "exec"))

    real_open = os.open

    def read_only(path, flags, *args):
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    other = str(tmp_path / "ro" / "__pycache__" / "m.pyc")
    assert not hook_cache.write(other, SOURCE, (), compile(SOURCE, "m.py", "exec"))
    assert not os.path.exists(other)


def test_a_failed_replace_leaves_no_temporary_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    path = str(tmp_path / "__pycache__" / "m.pyc")
    assert not hook_cache.write(path, SOURCE, (), compile(SOURCE, "m.py", "exec"))
    assert os.listdir(tmp_path / "__pycache__") == []


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 4097])
def test_the_word_sum_is_the_same_with_and_without_numpy(size, monkeypatch):
    payload = bytes((i * 37 + 11) % 256 for i in range(size))
    with_numpy = hook_cache.word_sum(payload)
    monkeypatch.setitem(sys.modules, "numpy", None)
    words = [int.from_bytes(payload[i : i + 8], "little") for i in range(0, size, 8)]
    assert hook_cache.word_sum(payload) == with_numpy == sum(words) % 2**64


def test_a_source_changed_within_the_clock_tick_gets_no_stat_key(tmp_path, monkeypatch):
    """A source changed within a tick of the file system's clock before it was read may be
    edited again with the same times: its entry is recognised by the source's hash until
    the source has settled, then rewritten with its stat key (a warm import reads no source)."""
    from autostatic.hook.finder import AutostaticLoader, Settings

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    src = tmp_path / "m.py"
    src.write_bytes(b"# autostatic: enable\n" + SOURCE)
    where = hook_cache.cache_path(str(src))
    key = hook_cache.source_key(str(src))
    monkeypatch.setattr(hook_cache, "SETTLED_NS", 10**18)  # every source was just changed
    AutostaticLoader("m", str(src), Settings()).get_code("m")
    assert hook_cache.read_by_stat(where, key) is None  # no stat key: the hash decides
    assert hook_cache.read(where, src.read_bytes()) is not None
    monkeypatch.setattr(hook_cache, "SETTLED_NS", 0)
    AutostaticLoader("m", str(src), Settings()).get_code("m")  # a hit by hash, now settled
    assert hook_cache.read_by_stat(where, key) is not None


def test_times_in_whole_seconds_settle_after_two_seconds():
    second = 10**9
    fine = (1000 * second + 1234, 10, 1000 * second + 5678)  # ext4, NTFS, APFS...
    coarse = (1000 * second, 10, 1000 * second)  # FAT, ext3, HFS+
    assert not hook_cache.settled(fine, fine[2] + hook_cache.SETTLED_NS - 1)
    assert hook_cache.settled(fine, fine[2] + hook_cache.SETTLED_NS)
    assert not hook_cache.settled(coarse, coarse[2] + second)
    assert hook_cache.settled(coarse, coarse[2] + 2 * second)
    # the later of the two times counts (ctime: Linux's change time, Windows' creation time)
    assert not hook_cache.settled((fine[0] - 10 * second, 10, fine[2]), fine[2] + 1)
    assert not hook_cache.settled((fine[2], 10, fine[0] - 10 * second), fine[2] + 1)

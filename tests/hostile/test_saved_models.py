"""Hostile saved models, beyond tests/jit/test_save_load.py: hypothesis-mutated weight and
program bytes, a huge declared header or tensor size, a missing parameter and a parameter of
the wrong dtype. Each is a ProgramFormatError (an AutostaticError) - never another exception,
never code execution, never an allocation the file's own size does not bound."""

from __future__ import annotations

import hashlib
import json
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn
from autostatic_runtime.errors import ProgramFormatError
from autostatic_runtime.jit import params_file
from autostatic_runtime.static.program import Program

WEIGHTS = params_file.dumps(
    {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], dtype=np.int64)}
)


class Small(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        out = self.fc(x)
        if rt.mean(out) > 0:
            out = out * 2.0
        return out


@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("model") / "small")
    autostatic.save(Small(), path, input_spec=[InputSpec([None, 4], "float32", "x")])
    return path, {s: open(path + s, "rb").read() for s in (".pdmodel", ".pdiparams", ".pdmeta")}


def _mutations():
    flip = st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255))
    cut = st.tuples(st.just("cut"), st.integers(0, 10**6), st.just(0))
    insert = st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255))
    return st.lists(st.one_of(flip, cut, insert), min_size=1, max_size=6)


def _mutate(data: bytes, steps) -> bytes:
    buf = bytearray(data)
    for kind, where, value in steps:
        if not buf:
            break
        i = where % len(buf)
        if kind == "flip":
            buf[i] ^= value
        elif kind == "cut":
            del buf[i:]
        else:
            buf.insert(i, value)
    return bytes(buf)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=_mutations())
def test_mutated_weights_load_or_raise_a_format_error(steps):
    data = _mutate(WEIGHTS, steps)
    try:
        out = params_file.loads(data)
    except ProgramFormatError:
        return
    assert all(isinstance(v, np.ndarray) for v in out.values())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=_mutations())
def test_mutated_programs_parse_or_raise_a_format_error(model_bytes, steps):
    _, files = model_bytes
    data = _mutate(files[".pdmodel"], steps)
    try:
        Program.parse(data)
    except ProgramFormatError:
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.sampled_from([".pdmodel", ".pdiparams"]), steps=_mutations())
def test_mutated_models_load_and_run_or_raise_an_autostatic_error(
    model_bytes, tmp_path_factory, which, steps
):
    """Checksums updated so the parsers and the checks against the program are reached."""
    _, files = model_bytes
    path = str(tmp_path_factory.mktemp("mut") / "m")
    files = dict(files)
    files[which] = _mutate(files[which], steps)
    meta = json.loads(files[".pdmeta"])
    for suffix in (".pdmodel", ".pdiparams"):
        meta[f"{suffix[1:]}_sha256"] = hashlib.sha256(files[suffix]).hexdigest()
    files[".pdmeta"] = json.dumps(meta).encode()
    for suffix, data in files.items():
        with open(path + suffix, "wb") as f:
            f.write(data)
    try:
        autostatic.load(path)(rt.ones([3, 4]))
    except rt.AutostaticError:
        pass


def _weights_with_header(header: dict, body: bytes = b"\0" * 8) -> bytes:
    raw = json.dumps({"__metadata__": {"format": params_file.FORMAT, "version": "1"}, **header})
    return struct.pack("<Q", len(raw)) + raw.encode() + body


def test_huge_declared_sizes_allocate_nothing():
    huge = [[2**39, 2**39], [2**20] * 3]
    cases = [struct.pack("<Q", 2**63) + b"{}"]  # header length
    cases += [
        _weights_with_header({"w": {"dtype": "F32", "shape": s, "data_offsets": [0, 8]}})
        for s in huge
    ]
    tracemalloc.start()
    try:
        for data in cases:
            with pytest.raises(ProgramFormatError):
                params_file.loads(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def _resave(path: str, files: dict, weights: dict) -> None:
    files = dict(files)
    files[".pdiparams"] = params_file.dumps(weights)
    meta = json.loads(files[".pdmeta"])
    meta["pdiparams_sha256"] = hashlib.sha256(files[".pdiparams"]).hexdigest()
    files[".pdmeta"] = json.dumps(meta).encode()
    for suffix, data in files.items():
        with open(path + suffix, "wb") as f:
            f.write(data)


def test_a_missing_parameter_is_named(model_bytes, tmp_path):
    _, files = model_bytes
    weights = params_file.loads(files[".pdiparams"])
    dropped = sorted(weights)[0]
    del weights[dropped]
    _resave(str(tmp_path / "m"), files, weights)
    with pytest.raises(
        ProgramFormatError, match=f"no value for the program's variable '{dropped}'"
    ):
        autostatic.load(str(tmp_path / "m"))


def test_a_parameter_of_the_wrong_dtype_or_shape_is_named(model_bytes, tmp_path):
    _, files = model_bytes
    weights = params_file.loads(files[".pdiparams"])
    name = sorted(weights)[0]
    weights[name] = weights[name].astype(np.float64)
    _resave(str(tmp_path / "m"), files, weights)
    with pytest.raises(ProgramFormatError, match="float64.*but the program declares float32"):
        autostatic.load(str(tmp_path / "m"))
    weights[name] = np.zeros([7], np.float32)
    _resave(str(tmp_path / "m"), files, weights)
    with pytest.raises(ProgramFormatError, match=r"\[7\] but the program declares"):
        autostatic.load(str(tmp_path / "m"))


# ---- what is in place of the files --------------------------------------------------------


@pytest.mark.parametrize("suffix", [".pdmodel", ".pdiparams", ".pdmeta"])
@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink_loop", "device", "unreadable"])
def test_anything_but_a_readable_file_is_a_format_error(
    model_bytes, tmp_path, monkeypatch, suffix, kind
):
    """A directory, a FIFO (reading one waited forever for a writer), a symlink loop, a
    device (/dev/zero never ends) or a file that cannot be read, in place of any of the three
    files: a ProgramFormatError naming the file (was IsADirectoryError, OSError, a hang)."""
    import os

    path = str(tmp_path / "m")
    for s, data in model_bytes[1].items():
        with open(path + s, "wb") as f:
            f.write(data)
    target = path + suffix
    os.unlink(target)
    if kind == "directory":
        os.mkdir(target)
    elif kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(target)
    elif kind == "symlink_loop":
        os.symlink(target, target)
    elif kind == "device":
        if not os.path.exists("/dev/zero"):
            pytest.skip("no /dev/zero here")
        os.symlink("/dev/zero", target)
    else:
        with open(target, "wb") as f:
            f.write(model_bytes[1][suffix])
        real_open = os.open

        def refuse(name, *args, **kwargs):
            if os.fspath(name) == target:
                raise PermissionError(13, "Permission denied", target)
            return real_open(name, *args, **kwargs)

        monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(ProgramFormatError, match=f"m\\{suffix}"):
        autostatic.load(path)


@pytest.mark.parametrize("version", ["9" * 5000, "\u00b2", "1" * 12, [1], 2.0])
def test_a_weights_file_version_that_is_no_small_number_is_a_format_error(version):
    """int() refuses 4,300 digits and more, and str.isdigit() takes '²': both were a bare
    ValueError."""
    header = {"__metadata__": {"format": params_file.FORMAT, "version": version}}
    raw = json.dumps(header).encode()
    data = struct.pack("<Q", len(raw)) + raw
    with pytest.raises(ProgramFormatError, match="version"):
        params_file.loads(data)


@pytest.mark.parametrize("version", ["9" * 4000, "-" + "9" * 4000, "1e999", '"1"', "[1]"])
def test_a_metadata_version_that_is_no_small_number_is_a_format_error(
    model_bytes, tmp_path, version
):
    path = str(tmp_path / "m")
    for s, data in model_bytes[1].items():
        with open(path + s, "wb") as f:
            f.write(data)
    meta = model_bytes[1][".pdmeta"].decode()
    assert '"version": 1' in meta
    with open(path + ".pdmeta", "w") as f:
        f.write(meta.replace('"version": 1', f'"version": {version}'))
    with pytest.raises(ProgramFormatError, match="version") as info:
        autostatic.load(path)
    assert len(str(info.value)) < 400  # a 4,000-digit number is not printed whole

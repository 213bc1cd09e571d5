"""Shrunk counterexamples found by the fuzzers, kept as regression tests."""

from __future__ import annotations

#: ``(source, (a, b, xs))`` checked original == converted on both bodies.
PYTHON_CASES: list = []

#: ``(source, (a, b))``: eager == static on int64 tensors of shape [1].
TENSOR_CASES: list = []

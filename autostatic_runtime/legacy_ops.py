"""Paddle's ``_legacy_C_ops`` calls that model code makes eagerly: positional inputs, then
attributes as ``"name", value`` pairs (``_legacy_C_ops.linear_chain_crf(x, w, label,
length, "is_test", False)``). Each maps to the runtime function of the same op.
"""

from __future__ import annotations

from typing import Any

__all__ = ["linear_chain_crf", "crf_decoding", "chunk_eval"]


def _attrs(op_name: str, pairs: tuple) -> dict:
    if len(pairs) % 2:
        raise TypeError(f"_legacy_C_ops.{op_name}: attributes come as name, value pairs")
    return dict(zip(pairs[0::2], pairs[1::2]))


def linear_chain_crf(emission: Any, transition: Any, label: Any, length: Any = None,
                     *attrs: Any):  # fmt: skip
    """``(alpha, emission_exps, transition_exps, log_likelihood)``; ``is_test`` is ignored."""
    from autostatic_runtime.nn.functional.crf import linear_chain_crf as crf

    _attrs("linear_chain_crf", attrs)
    return crf(emission, transition, label, length)


def crf_decoding(emission: Any, transition: Any, label: Any = None, length: Any = None,
                 *attrs: Any):  # fmt: skip
    """The Viterbi path (or, given ``label``, where it agrees with it)."""
    from autostatic_runtime.nn.functional.crf import crf_decoding as decode

    _attrs("crf_decoding", attrs)
    return decode(emission, transition, label, length)


def chunk_eval(inference: Any, label: Any, seq_length: Any = None, *attrs: Any):
    """``(precision, recall, f1, num_infer, num_label, num_correct)`` (``rt.metric``'s)."""
    from autostatic_runtime.metric import chunk_eval as evaluate

    options = _attrs("chunk_eval", attrs)
    return evaluate(
        inference,
        label,
        seq_length,
        int(options.get("num_chunk_types", 1)),
        options.get("chunk_scheme", "IOB"),
        options.get("excluded_chunk_types") or None,
    )

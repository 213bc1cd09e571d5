"""Samples: sequence helpers of ``nn.functional`` (``sequence_mask``, ``gather_tree``)."""

from __future__ import annotations

import autostatic_runtime.nn.functional as Fn
from tests.runtime.harness import I, Sample

S = Sample

SAMPLES = [
    S("gather_tree", lambda ids, parents: Fn.gather_tree(ids, parents),
      [I(4, 2, 3, low=0, high=9), I(4, 2, 3, low=0, high=3)], grad=False),  # fmt: skip
    S("arange", lambda lens: Fn.sequence_mask(lens, maxlen=6, dtype="float32"),
      [I(2, 3, low=0, high=6)], grad=False, name="sequence_mask"),  # fmt: skip
    S("arange", lambda lens: Fn.sequence_mask(lens + 1),
      [I(4, low=0, high=6)], grad=False, name="sequence_mask_default_maxlen"),  # fmt: skip
]

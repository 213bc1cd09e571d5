"""Every op sample, compiled by XLA, matches the default executor: values and gradients.

One program per sample computes its outputs and the gradients of a weighted sum of them (in
float64, so 64-bit dtypes are checked too); both executors run it on the same inputs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("jax")

import autostatic_runtime as rt  # noqa: E402
from autostatic_runtime import static  # noqa: E402
from autostatic_runtime.static.xla import XlaFallbackWarning  # noqa: E402
from tests.runtime.harness import Arg, example_values  # noqa: E402
from tests.static.test_ops_static import STATIC_SAMPLES, build  # noqa: E402

# samples whose op the XLA compiler hands to the default executor, and why
FALLBACK = {
    "masked_select": "the output shape depends on values",
    "where_index": "the output shape depends on values",
    "nonzero_tuple": "the output shape depends on values",
    "getitem_mask": "the output shape depends on values",
    "getitem_mask_of_self": "the output shape depends on values",
    "getitem_mask_after_slice": "the output shape depends on values",
    "unique_consecutive": "the output shape depends on values",
    "repeat_interleave_counts": "the output shape depends on values",
    "repeat_interleave_grad": "the output shape depends on values",
    "sequence_mask_default_maxlen": "the output shape depends on values",
    "unique": "the output shape depends on values",
    "unique_rows": "the output shape depends on values",
    "unique_float_int32": "the output shape depends on values",
}


def _differentiable(sample) -> list[int]:
    return [
        i
        for i, a in enumerate(sample.args)
        if sample.grad and isinstance(a, Arg) and a.kind == "float" and a.grad
    ]


def build_with_gradients(sample, values):
    """The sample's program, fetching its outputs and the gradients of a weighted sum."""
    main, feeds, outs, args = build(sample, values)
    fetch = list(outs)
    wrt = [args[i] for i in _differentiable(sample)]
    floats = [o for o in outs if o.dtype.is_floating]
    if wrt and floats:
        rt.enable_static()
        try:
            with static.program_guard(main):
                loss = sum((o * rt.sin(o) + o).sum() for o in floats)  # a gradient per element
                fetch += [g for g in static.gradients(loss, wrt) if g is not None]
        finally:
            rt.disable_static()
    return main, feeds, fetch


@pytest.mark.parametrize("sample", STATIC_SAMPLES, ids=[s.id for s in STATIC_SAMPLES])
def test_sample_matches_the_default_executor(sample):
    values = [v.astype(np.float64) if v.dtype.kind == "f" else v for v in example_values(sample, 3)]
    main, feeds, fetch = build_with_gradients(sample, values)
    expected = static.Executor().run(main, feed=feeds, fetch_list=fetch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = static.Executor(compiler="xla").run(main, feed=feeds, fetch_list=fetch)
    fell_back = [w for w in caught if issubclass(w.category, XlaFallbackWarning)]
    if sample.id in FALLBACK:
        assert len(fell_back) == 1, "expected this sample to run on the default executor"
    else:
        assert not fell_back, [str(w.message) for w in fell_back]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=max(sample.rtol * 1e-2, 1e-7), atol=1e-9)

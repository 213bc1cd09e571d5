"""Lists appended to, read and popped in tensor loops (tensor arrays) run in ONNX Runtime as
eagerly: carried ``[length, ...]`` buffers, and Loop scan outputs for append-only lists."""

from __future__ import annotations

import numpy as np
import pytest

from tests.compiler import test_tensor_arrays as arrays
from tests.onnx.ort import export_program, run_model

X = np.array([1.0, -2.0, 3.0], np.float32)

CASES = [
    (arrays.for_append_stack, (1, 2, 4)),
    (arrays.while_append_stack, (1, 3)),
    (arrays.append_in_if, (0, 1, 4)),
    (arrays.append_in_one_branch, (0, 1, 4)),
    (arrays.pop_in_loop, (0, 2, 5)),
    (arrays.read_back, (1, 3)),
    (arrays.api_names, (2, 4)),
    (arrays.nested_loops, (1, 3)),
    (arrays.nested_loops_one_list, (0, 1, 4)),
    (arrays.while_pops_front, (1, 3)),
]


def _scan_outputs(model) -> int:
    loops = [n for n in model.graph.node if n.op_type == "Loop"]
    return sum(len(n.output) - (len(n.input) - 2) for n in loops)


@pytest.mark.parametrize("fn, lengths", CASES, ids=[c[0].__name__ for c in CASES])
def test_onnx_runtime_matches_eager(fn, lengths):
    main, outs = arrays.build(fn, X, np.array(3, np.int64))
    model = export_program(main, {"a0": X, "a1": np.array(3, np.int64)}, outs, dynamic={0})
    if fn is arrays.for_append_stack:
        assert _scan_outputs(model) == 1  # the appended list is a scan output, not copied
    for n in lengths:
        got = run_model(model, {"a0": X, "a1": np.array(n, np.int64)})
        want = arrays.eager(fn, X, np.array(n, np.int64))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"n={n}")

"""Samples: tensor-array ops (a list carried by a symbolic loop, stored as a dense buffer)."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime.ops.tensor_array import (
    ArrayLength,
    ArrayPop,
    ArrayPopGrad,
    ArrayRead,
    ArrayReadGrad,
    ArrayWrite,
    CreateArray,
    StackArray,
)
from tests.runtime.harness import F, Sample

S = Sample

SAMPLES = [
    S("create_array", lambda x: ArrayWrite(x, 0, CreateArray(shape=(2,), dtype=x.dtype)), [F(2)]),
    S("array_write", lambda x, a: ArrayWrite(x, 2, a), [F(3), F(2, 3)]),
    S(
        "array_write",
        lambda x, a: ArrayWrite(x, rt.to_tensor(1), a),
        [F(3), F(2, 3)],
        name="array_write_overwrite",
        also=("array_write_grad",),
    ),
    S("array_read", lambda a: ArrayRead(a, -1), [F(3, 2)]),
    S("array_read_grad", lambda g, a: ArrayReadGrad(g, 1, a), [F(2), F(3, 2, grad=False)]),
    S("array_length", lambda a: ArrayLength(a), [F(4, 2)], grad=False),
    S("array_pop", lambda a: ArrayPop(a, 1), [F(3, 2)]),
    S("array_pop", lambda a: ArrayPop(a, -1), [F(3)], name="array_pop_last"),
    S("array_pop_grad", lambda r, i: ArrayPopGrad(r, i, 0), [F(2, 3), F(3)]),
    S("stack_array", lambda a: StackArray(a), [F(3, 2)]),
]

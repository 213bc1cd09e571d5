"""Samples: reshape-like ops, transpose, joining and splitting, tile, flip, roll, diagonals."""

from __future__ import annotations

import autostatic_runtime as rt
from autostatic_runtime.ops.manipulation import ReshapeDynamic
from tests.runtime.harness import F, I, Sample

S = Sample


def _leaf(x):
    t = x.detach()
    t.stop_gradient = False
    return t


def grad_of(fn, power=2):
    """``x -> d sum(fn(x) ** power) / dx`` with ``create_graph``, so fn's backward op runs as a
    differentiable forward op. Works under ``no_grad`` too (the harness evaluates that way)."""

    def run(*xs):
        with rt.enable_grad():
            xs = [_leaf(x) if x.stop_gradient else x for x in xs]
            return rt.grad((fn(*xs) ** power).sum(), xs, create_graph=True)

    return run


SAMPLES = [
    S("reshape", lambda x: rt.reshape(x, [2, -1]), [F(3, 4)]),
    S("reshape", lambda x: x.reshape([0, 2, 2]), [F(3, 4)], name="reshape_copy_dim"),
    S(
        "reshape",
        lambda x: rt.reshape(x, [rt.to_tensor(4), 3]),
        [I(2, 6)],
        grad=False,
        name="reshape_int_tensor_dim",
    ),
    S("reshape", lambda x: rt.reshape(x, []), [F(1, 1)], name="reshape_to_0d"),
    S("reshape_as", grad_of(lambda x: rt.reshape(x, [6])), [F(2, 3)], also=("pow",)),
    S(
        "reshape_dynamic",
        lambda x: ReshapeDynamic(x, rt.to_tensor([3, 2, -1]), static=(-1, 2, -1)),
        [F(6, 2)],
    ),
    S("flatten", lambda x: rt.flatten(x, 1, 2), [F(2, 3, 4)]),
    S("flatten", lambda x: x.flatten(), [F()], name="flatten_0d"),
    S("squeeze", lambda x: rt.squeeze(x), [F(1, 3, 1)]),
    S("squeeze", lambda x: x.squeeze([0, 1]), [F(1, 3, 1)], name="squeeze_keeps_non_one"),
    S("unsqueeze", lambda x: rt.unsqueeze(x, [0, -1]), [F(3)]),
    S("unsqueeze", lambda x: x.unsqueeze(1), [I(2, 3)], grad=False, name="unsqueeze_int"),
    S("transpose", lambda x: rt.transpose(x, [2, 0, 1]), [F(2, 3, 4)]),
    S("transpose", lambda x: x.T, [F(2, 3)], name="transpose_T"),
    S("transpose", lambda x: rt.t(x), [F(3, 2)], name="t"),
    S("transpose", lambda x: rt.moveaxis(x, [0, 1], [-1, 0]), [F(2, 3, 4)], name="moveaxis"),
    S("concat", lambda x, y: rt.concat([x, y], axis=1), [F(2, 3), F(2, 1)]),
    S(
        "concat",
        lambda x, y: rt.concat([x, y], axis=-1),
        [F(2, 2), I(2, 1)],
        name="concat_promote",
        also=("cast",),
    ),
    S("concat_grad", grad_of(lambda x, y: rt.concat([x, y], axis=0)), [F(1, 3), F(2, 3)]),
    S("stack", lambda x, y: rt.stack([x, y], axis=-1), [F(2, 3), F(2, 3)]),
    S("stack", lambda x: rt.stack([x, x, x]), [I(2)], grad=False, name="stack_int"),
    S("unstack", lambda x: rt.unstack(x, axis=1), [F(2, 3)]),
    S("unstack", lambda x: rt.unbind(x, -1), [F(2, 2)], name="unbind"),
    S("split", lambda x: x.split([2, -1], axis=1), [F(2, 5)]),
    S("split", lambda x: rt.split(x, 2), [F(4, 3)], name="split_equal"),
    S("split", lambda x: x.chunk(3, axis=-1), [F(2, 3)], name="chunk"),
    S("tile", lambda x: rt.tile(x, [2, 1, 2]), [F(2, 3)]),
    S("tile", lambda x: x.tile([2]), [I(2, 3)], grad=False, name="tile_short_reps"),
    S("tile_grad", grad_of(lambda x: rt.tile(x, [3, 2])), [F(2, 1)]),
    S("flip", lambda x: rt.flip(x, [0, -1]), [F(2, 3)]),
    S("roll", lambda x: rt.roll(x, 2), [F(2, 3)]),
    S("roll", lambda x: rt.roll(x, [1, -1], axis=[0, 1]), [F(2, 3)], name="roll_axes"),
    S("repeat_interleave", lambda x: rt.repeat_interleave(x, 2, axis=1), [F(2, 3)]),
    S(
        "repeat_interleave",
        lambda x: x.repeat_interleave([1, 0, 2], axis=0),
        [F(3, 2)],
        name="repeat_interleave_counts",
    ),
    S(
        "repeat_interleave",
        lambda x: rt.repeat_interleave(x, 2),
        [I(2, 2)],
        grad=False,
        name="repeat_interleave_flat",
        also=("flatten",),
    ),
    S(
        "repeat_interleave_grad",
        grad_of(lambda x: rt.repeat_interleave(x, [2, 1], axis=1)),
        [F(2, 2)],
    ),
    S("tril_triu", lambda x: rt.tril(x), [F(2, 3, 4)]),
    S("tril_triu", lambda x: x.triu(-1), [F(3, 4)], name="triu"),
    S("tril_triu", lambda x: rt.tril(x, 1), [I(3, 3)], grad=False, name="tril_int"),
    S("diagonal", lambda x: rt.diagonal(x, 1), [F(3, 4)]),
    S("diagonal", lambda x: x.diagonal(-1, axis1=2, axis2=0), [F(3, 2, 4)], name="diagonal_axes"),
    S("diagonal_grad", grad_of(lambda x: rt.diagonal(x, offset=-1)), [F(3, 3)]),
    S("diag_embed", lambda x: rt.diag_embed(x, 1), [F(2, 3)]),
    S(
        "diag_embed",
        lambda x: rt.diag(x, -1, padding_value=9.0),
        [F(3)],
        name="diag_padding",
        also=("where", "full_like"),
    ),
    S("diagonal", lambda x: rt.diag(x), [F(3, 2)], name="diag_of_matrix"),
    S("shape", lambda x: rt.shape(x), [F(2, 3)], grad=False),
]

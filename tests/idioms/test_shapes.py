"""Idioms: shapes as traced values (kind 8). Inputs are declared with ``None`` dims, so
``x.shape[0]`` and ``rt.shape(x)[0]`` are run-time values: creation ops, ``reshape``,
``expand``, ``tile``, ``arange``, ``range`` and shape arithmetic take them."""

import pytest

import autostatic_runtime as rt

from .harness import apply_xfails, case, rand, run_case


def full_with_batch_dim(x):
    return x + rt.full([x.shape[0], 3], 1.5)


def zeros_from_shape_op(x):
    z = rt.zeros([rt.shape(x)[0], 1], "float32")
    return rt.concat([x, z], axis=1)


def ones_with_named_dim(x):
    n = x.shape[0]
    y = rt.reshape(x, [n, -1])
    return y + rt.ones([n, 1], "float32")


def reshape_with_shape_product(x):
    n = x.shape[0] * x.shape[1]
    flat = rt.reshape(x, [n])
    return flat * 2


def expand_bias_to_batch(x):
    b = rt.shape(x)[0]
    bias = rt.expand(rt.ones([1, 3], "float32"), [b, 3])
    return x + bias


def tile_row_to_batch(x):
    row = rt.mean(x, axis=0, keepdim=True)
    return x - rt.tile(row, [x.shape[0], 1])


def arange_positions(x):
    pos = rt.arange(x.shape[0], dtype="float32")
    return x * rt.unsqueeze(pos, 1)


def range_over_dim_attribute(x):
    s = rt.zeros([3], "float32")
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def mean_by_dim_division(x):
    return rt.sum(x, axis=0) / x.shape[0]


def shape_in_condition(x):
    if x.shape[0] > 2:
        return x[:2] * 2
    return x


def len_in_range(x):
    s = rt.zeros([3], "float32")
    for i in range(len(x)):
        s = s + x[i] * i
    return s


def zeros_of_whole_shape(x):
    z = rt.zeros(rt.shape(x), "float32")
    return z + x * 3


def full_like_scalar_from_shape(x):
    n = rt.shape(x)[0]
    return rt.full([n], 2.0, "float32") * rt.sum(x, axis=1)


def reshape_split_heads(x):
    b = x.shape[0]
    h = rt.reshape(x, [b, 2, 3])
    return rt.transpose(h, [1, 0, 2])


def unknown_dim_times_known(x):
    n = x.shape[0]
    d = x.shape[1]
    y = rt.reshape(x, [n * d // 3, 3])
    return y


def arange_mask_against_lengths(x, lengths):
    steps = rt.arange(x.shape[1])
    mask = rt.cast(rt.unsqueeze(steps, 0) < rt.unsqueeze(lengths, 1), "float32")
    return x * mask


def int_of_unknown_dim(x):
    n = int(x.shape[0])
    return rt.reshape(x, [n, 6]) * 1.0


def shape_list_unpacked(x):
    b, t, d = x.shape
    y = rt.reshape(x, [b * t, d])
    return rt.reshape(y * 2, [b, t, d])


def eye_like_batch(x):
    n = rt.shape(x)[0]
    idx = rt.arange(n)
    return x * rt.cast(rt.unsqueeze(idx, 1) == rt.unsqueeze(idx, 0), "float32")


def last_dim_from_shape_op(x):
    d = rt.shape(x)[-1]
    return rt.reshape(x, [-1, d]) / rt.cast(d, "float32")


def slice_with_shape_bound(x):
    half = x.shape[0] // 2
    return x[:half] * 2


def rank_from_len_of_shape(x):
    if len(x.shape) == 2:
        return rt.sum(x, axis=-1)
    return x


def shape_tuple_compared_in_if(x, y):
    if x.shape[0] == y.shape[0]:
        return x + y
    return x


X43 = rand(4, 3, seed=51)
X23 = rand(2, 3, seed=52)
X46 = rand(4, 6, seed=53)
X26 = rand(2, 6, seed=54)
X426 = rand(4, 2, 6, seed=55)
X326 = rand(3, 2, 6, seed=56)
SQ4 = rand(4, 4, seed=57)
SQ2 = rand(2, 2, seed=58)
B = "batch"

CASES = [
    case(full_with_batch_dim, [(X43,), (X23,)], kind="8", input_spec=B),
    case(zeros_from_shape_op, [(X43,), (X23,)], kind="8", input_spec=B),
    case(ones_with_named_dim, [(X43,), (X23,)], kind="8", input_spec=B),
    case(reshape_with_shape_product, [(X43,), (X23,)], kind="8", input_spec=B),
    case(expand_bias_to_batch, [(X43,), (X23,)], kind="8", input_spec=B),
    case(tile_row_to_batch, [(X43,), (X23,)], kind="8", input_spec=B),
    case(arange_positions, [(X43,), (X23,)], kind="8", input_spec=B),
    case(range_over_dim_attribute, [(X43,), (X23,)], kind="8", input_spec=B),
    case(mean_by_dim_division, [(X43,), (X23,)], kind="8", input_spec=B),
    case(shape_in_condition, [(X43,), (X23,)], kind="8", input_spec=B),
    case(len_in_range, [(X43,), (X23,)], kind="8", input_spec=B),
    case(zeros_of_whole_shape, [(X43,), (X23,)], kind="8", input_spec=B),
    case(full_like_scalar_from_shape, [(X43,), (X23,)], kind="8", input_spec=B),
    case(reshape_split_heads, [(X46,), (X26,)], kind="8", input_spec=B),
    case(unknown_dim_times_known, [(X46,), (X26,)], kind="8", input_spec=B),
    case(arange_mask_against_lengths, [(X46, rand(4, seed=1, low=0, high=6).astype("int64")),
                                       (X26, rand(2, seed=2, low=0, high=6).astype("int64"))],
         kind="8", input_spec=B),
    case(int_of_unknown_dim, [(X46,), (X26,)], kind="8", input_spec=B),
    case(shape_list_unpacked, [(X426,), (X326,)], kind="8", input_spec=B),
    case(last_dim_from_shape_op, [(X43,), (X23,)], kind="8", input_spec="dynamic"),
    case(slice_with_shape_bound, [(X43,), (X23,)], kind="8", input_spec=B),
    case(rank_from_len_of_shape, [(X43,), (X23,)], kind="8", input_spec=B),
    case(shape_tuple_compared_in_if, [(X43, X43 * 2), (X23, X23 + 1)], kind="8", input_spec=B),
    case(eye_like_batch, [(SQ4,), (SQ2,)], kind="8", input_spec="dynamic"),
]

XFAIL: dict[str, str] = {
}


@pytest.mark.parametrize("fn,inputs,kw", apply_xfails(CASES, XFAIL))
def test_idiom(fn, inputs, kw):
    run_case(fn, inputs, kw)

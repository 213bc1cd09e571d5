"""Samples: getitem/setitem, gather/scatter, masks, along-axis ops, one_hot."""

from __future__ import annotations

import autostatic_runtime as rt
from tests.runtime.harness import B, F, I, Sample

S = Sample


def _t(v, dtype="int64"):
    return rt.to_tensor(v, dtype=dtype)


def second_order(loss_fn):
    """``x -> d loss_fn(x) / dx``, itself differentiable (runs a backward op forward).

    The harness's central differences call samples under ``no_grad`` with plain inputs, so
    then the gradient is taken of a copy with recording switched back on.
    """

    def run(x):
        if x.stop_gradient:
            with rt.enable_grad():
                x = x.detach()
                x.stop_gradient = False
                return rt.grad(loss_fn(x), x)[0]
        return rt.grad(loss_fn(x), x, create_graph=True)[0]

    return run


def _set(key, value_fn=None, scalar=None):
    """x (copied) with x[key] set to a value computed from the other args, or a scalar."""

    def fn(x, *rest):
        y = x.clone()
        k = key() if callable(key) else key
        y[k] = scalar if value_fn is None else value_fn(*rest)
        return y

    return fn


SAMPLES = [
    # getitem: basic keys
    S("getitem", lambda x: x[1], [F(3, 4)]),
    S("getitem", lambda x: x[-1, 1:3], [F(3, 4)], name="getitem_neg_int_slice"),
    S("getitem", lambda x: x[1:, ::-2], [F(3, 5)], name="getitem_neg_step"),
    S("getitem", lambda x: x[::-1, None, ..., 1], [F(3, 2, 4)], name="getitem_none_ellipsis"),
    S("getitem", lambda x: x[..., None], [F(2, 3)], name="getitem_trailing_none"),
    # getitem: advanced keys
    S("getitem", lambda x: x[[0, 2, 2]], [F(3, 4)], name="getitem_list_duplicates"),
    S("getitem", lambda x, i: x[i], [F(4, 3), I(2, 3, high=4)], name="getitem_int_tensor"),
    S(
        "getitem",
        lambda x, i: x[:, i],
        [F(2, 4, 3), I(5, high=4)],
        name="getitem_tensor_after_slice",
    ),
    S(
        "getitem",
        lambda x: x[_t([0, 1]), :, _t([2, 0])],
        [F(2, 3, 4)],
        name="getitem_split_tensors",
    ),
    S(
        "getitem",
        lambda x: x[_t([[0], [1]]), _t([1, 2, 0])],
        [F(2, 3)],
        name="getitem_broadcast_tensors",
    ),
    S("getitem", lambda x, m: x[m], [F(3, 4), B(3, 4)], name="getitem_mask"),
    S(
        "getitem",
        lambda x: x[x > 0.5],
        [F(3, 4, away=(0.5,))],
        name="getitem_mask_of_self",
        also=("greater_than",),
    ),
    S("getitem", lambda x, m: x[1:, m], [F(3, 4), B(4)], name="getitem_mask_after_slice"),
    S("getitem", lambda x: x[_t(1)], [F(3, 2)], name="getitem_0d_tensor"),
    S("getitem_grad", second_order(lambda x: (x[[1, 1, 0]] ** 2).sum()), [F(3, 2)]),
    S(
        "getitem_grad",
        second_order(lambda x: (x[1:, ::-1] ** 2).sum()),
        [F(3, 2)],
        name="getitem_grad_basic",
    ),
    # setitem (Paddle's set_value)
    S("set_value", _set((slice(1, None), slice(None, None, -2)), lambda v: v), [F(3, 5), F(3)]),
    S("set_value", _set(0, scalar=2.5), [F(3, 4)], name="setitem_scalar"),
    S(
        "set_value",
        _set(lambda: _t([2, 0]), lambda v: v),
        [F(3, 4), F(2, 4)],
        name="setitem_int_tensor",
    ),
    S(
        "set_value",
        _set(lambda: (slice(None), _t([3, 1])), lambda v: v),
        [F(2, 4), F(2, 1)],
        name="setitem_tensor_after_slice",
    ),
    S(
        "set_value",
        _set(lambda: _t([[True, False], [False, True], [True, True]], "bool"), lambda v: v),
        [F(3, 2), F(1)],
        name="setitem_mask",
    ),
    S(
        "set_value",
        _set((Ellipsis, None, 1), lambda v: v),
        [F(2, 3), F(2, 1)],
        name="setitem_none_ellipsis",
    ),
    S("set_value", _set(1, lambda v: v), [F(3, 2), F(1, 2)], name="setitem_leading_one"),
    S(
        "set_value",
        _set(lambda: _t([0, 0]), scalar=7),
        [I(3, 2)],
        grad=False,
        name="setitem_int_tensor_in_ints",
    ),
    # gather / scatter
    S("gather", lambda x, i: rt.gather(x, i), [F(4, 3), I(5, high=4)]),
    S("gather", lambda x, i: rt.gather(x, i, axis=1), [F(2, 4), I(3, high=4)], name="gather_axis"),
    S(
        "gather",
        lambda x, i: rt.index_select(x, i, axis=-1),
        [F(2, 4), I(6, high=4)],
        name="index_select",
    ),
    S("gather", lambda x: rt.gather(x, _t(2)), [F(4, 3)], name="gather_0d_index"),
    S("index_add", lambda x, v: rt.index_add(x, _t([0, 2, 0]), 1, v), [F(2, 3), F(2, 3)]),
    S("scatter", lambda x, u: rt.scatter(x, _t([2, 0]), u), [F(4, 3), F(2, 3)]),
    S(
        "scatter",
        lambda x, u: rt.scatter(x, _t([1, 3, 1]), u, overwrite=False),
        [F(4, 3), F(3, 3)],
        name="scatter_accumulate",
    ),
    S("gather_nd", lambda x, i: rt.gather_nd(x, i), [F(3, 4, 2), I(5, 2, high=3)]),
    S(
        "gather_nd",
        lambda x: rt.gather_nd(x, _t([[[1, 3]], [[0, 0]]])),
        [F(3, 4)],
        name="gather_nd_elements",
    ),
    S(
        "scatter_nd_add",
        lambda x, i, u: rt.scatter_nd_add(x, i, u),
        [F(3, 4), I(5, 1, high=3), F(5, 4)],
    ),
    S(
        "scatter_nd_add",
        lambda x, u: rt.scatter_nd_add(x, _t([[0, 1], [2, 3], [0, 1]]), u),
        [F(3, 4), F(3)],
        name="scatter_nd_add_elements",
    ),
    # masks
    S("where", lambda x, m: rt.masked_fill(x, m, -1.0), [F(3, 4), B(4)], name="masked_fill"),
    S(
        "getitem",
        lambda x, m: rt.masked_select(x, m),
        [F(3, 4), B(3, 1)],
        name="masked_select",
        also=("expand",),
    ),
    S("where_index", lambda x: rt.nonzero(x > 0), [F(3, 4)], grad=False),
    S(
        "where_index",
        lambda x: rt.nonzero(x > 0, as_tuple=True),
        [F(2, 3)],
        grad=False,
        name="nonzero_tuple",
    ),
    # along an axis
    S("take_along_axis", lambda x, i: rt.take_along_axis(x, i, axis=1), [F(3, 4), I(3, 2, high=4)]),
    S(
        "take_along_axis",
        lambda x, i: rt.take_along_axis(x, i, axis=0),
        [F(3, 4), I(2, 1, high=3)],
        name="take_along_axis_broadcast",
        also=("expand",),
    ),
    S(
        "put_along_axis",
        lambda x, v: rt.put_along_axis(x, _t([[1, 0], [2, 3], [0, 3]]), v, 1),
        [F(3, 4), F(3, 2)],
    ),
    S(
        "put_along_axis",
        lambda x, i, v: rt.put_along_axis(x, i, v, 1, reduce="add"),
        [F(3, 4), I(3, 5, high=4), F(3, 5)],
        name="put_along_axis_add",
    ),
    S(
        "put_along_axis",
        lambda x, i, v: rt.put_along_axis(x, i, v, 0, reduce="mul"),
        [F(3, 2), I(4, 2, high=3), F(1, 2, low=0.5, high=1.5)],
        name="put_along_axis_mul",
    ),
    S(
        "put_along_axis",
        lambda x: rt.put_along_axis(x, _t([[0], [2]]), 9.0, 1),
        [F(2, 3)],
        name="put_along_axis_scalar",
    ),
    S("one_hot_v2", lambda i: rt.one_hot(i, 5), [I(2, 3, high=5)], grad=False, name="one_hot"),
]

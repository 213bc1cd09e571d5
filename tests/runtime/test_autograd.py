"""Autograd: backward, accumulation, rt.grad, higher order, no_grad, hooks, in-place rules."""

from __future__ import annotations

import numpy as np
import pytest

import autostatic_runtime as rt


def leaf(values, dtype="float64"):
    return rt.to_tensor(np.asarray(values, dtype), stop_gradient=False)


def test_backward_accumulates_into_leaves():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 4, 6])
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5, 7, 9])
    x.clear_gradient()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0, 0])
    x.clear_gradient(set_to_zero=False)
    assert x.grad is None


def test_gradient_flows_through_a_shared_subexpression():
    x = leaf([2.0])
    y = x * x
    z = y * y + y  # x^4 + x^2
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4 * 8 + 2 * 2])


def test_non_scalar_backward_uses_ones():
    x = leaf([1.0, 2.0])
    (x * 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 2])
    x2 = leaf([1.0, 2.0])
    (x2 * 2).backward(rt.to_tensor(np.array([1.0, 10.0])))
    np.testing.assert_allclose(x2.grad.numpy(), [2, 20])


def test_stop_gradient_blocks_and_backward_without_graph_errors():
    x = leaf([1.0])
    c = rt.to_tensor([5.0], dtype="float64")
    (x * c).sum().backward()
    assert c.grad is None
    with pytest.raises(rt.AutostaticError, match="stop_gradient=True"):
        c.sum().backward()


def test_detach_cuts_the_graph():
    x = leaf([3.0])
    y = x.detach() * x
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0])


def test_grad_returns_gradients_without_touching_dot_grad():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, 4.0])
    gx, gy = rt.grad((x * y).sum(), [x, y])
    np.testing.assert_allclose(gx.numpy(), [3, 4])
    np.testing.assert_allclose(gy.numpy(), [1, 2])
    assert x.grad is None and y.grad is None


def test_grad_of_an_intermediate_tensor():
    x = leaf([1.0, 2.0])
    h = x * 2
    out = (h * h).sum()
    (gh,) = rt.grad(out, [h])
    np.testing.assert_allclose(gh.numpy(), 2 * h.numpy())


def test_grad_unused_input():
    x, y = leaf([1.0]), leaf([2.0])
    with pytest.raises(rt.AutostaticError, match="allow_unused"):
        rt.grad((x * 2).sum(), [x, y])
    gx, gy = rt.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert gy is None


def test_second_order_gradient_with_create_graph():
    x = leaf([0.5, -1.0])
    y = (rt.exp(x) * x * x).sum()
    (g,) = rt.grad(y, [x], create_graph=True)
    (gg,) = rt.grad(g.sum(), [x])
    xv = np.array([0.5, -1.0])
    np.testing.assert_allclose(g.numpy(), np.exp(xv) * (xv * xv + 2 * xv))
    np.testing.assert_allclose(gg.numpy(), np.exp(xv) * (xv * xv + 4 * xv + 2))


def test_second_order_through_tanh_uses_the_output_correctly():
    x = leaf([0.3])
    (g,) = rt.grad(rt.tanh(x).sum(), [x], create_graph=True)
    (gg,) = rt.grad(g.sum(), [x])
    t = np.tanh(0.3)
    np.testing.assert_allclose(gg.numpy(), [-2 * t * (1 - t * t)])


def test_no_grad_context_and_decorator():
    x = leaf([1.0])
    with rt.no_grad():
        y = x * 2
    assert y.stop_gradient and rt.is_grad_enabled() is not False

    @rt.no_grad()
    def f(t):
        return t * 3

    assert f(x).stop_gradient
    assert rt.is_grad_enabled()
    with rt.set_grad_enabled(False):
        assert (x * 1).stop_gradient
    with rt.no_grad():
        with rt.enable_grad():
            assert not (x * 1).stop_gradient


def test_hooks_on_leaf_and_intermediate():
    x = leaf([1.0, 2.0])
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    h = x * 3
    h.register_hook(lambda g: g * 10)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30, 30])
    np.testing.assert_allclose(seen[0], [30, 30])
    handle.remove()
    x.clear_gradient(False)
    (x * 1).sum().backward()
    assert len(seen) == 1


def test_int_tensors_do_not_receive_gradients():
    x = leaf([1.0, 2.0])
    idx = rt.to_tensor([1, 0])
    y = x * idx
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 0])
    assert idx.grad is None


def test_gradient_of_cast_between_floats():
    x = leaf([1.0, 2.0], "float32")
    y = (x.astype("float64") ** 2).sum()
    y.backward()
    assert x.grad.dtype == rt.float32
    np.testing.assert_allclose(x.grad.numpy(), [2, 4])


def test_graph_memory_is_released_with_the_output():
    import gc
    import weakref

    x = leaf(np.ones(10))
    y = (x * 2).sum()
    ref = weakref.ref(y._node)
    del y
    gc.collect()
    assert ref() is None


def test_a_read_only_gradient_becomes_a_writable_grad_of_its_own():
    """A leaf's gradient whose array is read-only (here from a hook; a compiled program's
    zero-copy results are such) is copied before it becomes ``.grad``: the user may write
    into ``.grad``, and the array behind the gradient is left alone."""
    frozen = np.full((2, 3), 4.0, "float32")
    frozen.flags.writeable = False
    x = rt.to_tensor(np.ones((2, 3), "float32"), stop_gradient=False)
    x.register_hook(lambda g: rt.Tensor._rebuild(frozen, None, 0))
    (x * 3.0).sum().backward()
    got = x.grad.numpy()
    assert got.flags.writeable and not np.shares_memory(got, frozen)
    got[...] = 0.0
    np.testing.assert_array_equal(frozen, 4.0)
    (x * 3.0).sum().backward()  # accumulated: a new array, the old one left as it was
    np.testing.assert_array_equal(x.grad.numpy(), 4.0)
    np.testing.assert_array_equal(got, 0.0)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_accumulated_gradients_are_new_arrays_with_the_add_ops_values(shape):
    x = rt.to_tensor(np.full(shape, 2.0, "float32"), stop_gradient=False)
    (x * x).sum().backward()
    first = x.grad
    kept = first.numpy().copy()
    (x * 5.0).sum().backward()
    assert x.grad is not first
    np.testing.assert_array_equal(first.numpy(), kept)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(shape, 9.0, "float32"))
    assert x.grad.dtype == first.dtype and x.grad.shape == list(shape)
    x.grad = rt.to_tensor(np.ones(shape, "float64"))  # another dtype: promoted, as `+` does
    (x * 5.0).sum().backward()
    assert x.grad.dtype == rt.float64
    np.testing.assert_array_equal(x.grad.numpy(), np.full(shape, 6.0))


def test_clear_grad_sets_new_writable_zeros_and_leaves_the_old_gradient_alone():
    x = rt.to_tensor(np.ones((2, 3), "float16"), stop_gradient=False)
    (x * 3.0).sum().backward()
    old = x.grad.numpy()
    x.clear_grad()
    assert x.grad.dtype == rt.float16 and x.grad.shape == [2, 3] and x.grad.stop_gradient
    zeros = x.grad.numpy()
    np.testing.assert_array_equal(zeros, 0.0)
    assert zeros.flags.writeable and not np.shares_memory(zeros, old)
    np.testing.assert_array_equal(old, 3.0)

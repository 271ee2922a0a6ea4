"""Contractions (einsum, matmul, tensordot, ...) beyond the catalogue: NumPy's broadcasting corners,
gradients against float64 central differences, errors."""

import re

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(11)


def _central_difference(f, xs, k, eps=1e-6):
    """d sum(f(xs)) / d xs[k] for real float64 arrays, by central differences."""
    grad = np.zeros_like(xs[k])
    for idx in np.ndindex(xs[k].shape):
        up, down = [x.copy() for x in xs], [x.copy() for x in xs]
        up[k][idx] += eps
        down[k][idx] -= eps
        grad[idx] = (f(*up) - f(*down)) / (2 * eps)
    return grad


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("i,i", [(1,), (3,)]),
        ("ij,ij", [(1, 3), (2, 3)]),
        ("ij,jk->ik", [(2, 1), (3, 4)]),
        ("ij,ij->", [(1, 1), (2, 3)]),
        ("ij,j->", [(2, 1), (3,)]),
        ("i,j,ij->", [(1,), (3,), (2, 1)]),
        ("ii,j->ij", [(2, 2), (1,)]),
    ],
)
def test_einsum_gradient_through_a_size_one_axis_broadcast_against_a_longer_one(equation, shapes):
    # NumPy's einsum lets a size-1 axis meet a longer one under the same letter; the gradient of the
    # longer operand came back with the size-1 length (a GradientRuleError), now it is spread over it.
    xs = [RNG.standard_normal(s) for s in shapes]
    weights = RNG.standard_normal(np.einsum(equation, *xs).shape)

    def loss_np(*a):
        return np.sum(weights * np.einsum(equation, *a))

    def loss(*a):
        return tl.sum(tl.tensor(weights) * tl.einsum(equation, *a))

    for k in range(len(xs)):
        expected = _central_difference(loss_np, xs, k)
        eager = tl.grad(loss, argnums=k)(*[tl.tensor(x) for x in xs]).numpy()
        traced = tl.function(tl.grad(loss, argnums=k))(*[tl.tensor(x) for x in xs]).numpy()
        np.testing.assert_allclose(eager, expected, atol=1e-6)
        np.testing.assert_allclose(traced, expected, atol=1e-6)


@pytest.mark.parametrize(
    "fn, reference, name, a_shape, b_shape",
    [
        (lambda a, b: tl.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1), "tensordot", (2, 1), (4, 5)),
        (
            lambda a, b: tl.tensordot(a, b, ([0], [1])),
            lambda a, b: np.tensordot(a, b, ([0], [1])),
            "tensordot",
            (1, 3),
            (2, 4),
        ),
        (tl.dot, np.dot, "dot", (2, 1), (4, 5)),
        (tl.dot, np.dot, "dot", (1,), (3,)),
        (tl.inner, np.inner, "inner", (2, 1), (4, 3)),
        (tl.vdot, np.vdot, "vdot", (1,), (3,)),
        (tl.vdot, np.vdot, "vdot", (2, 3), (5,)),
    ],
)
def test_products_refuse_unequal_contracted_lengths_as_numpy_does(fn, reference, name, a_shape, b_shape):
    # A size-1 axis was broadcast against the other (tl.dot of (2, 1) and (4, 5) gave a (2, 5) result,
    # tl.vdot of 1 and 3 elements gave 3.0) where NumPy, PyTorch and JAX refuse the shapes.
    a, b = np.ones(a_shape), np.ones(b_shape)
    with pytest.raises(ValueError):
        reference(a, b)
    expected = rf"^{name}: .*shape {re.escape(str(a_shape))} float64, b: shape {re.escape(str(b_shape))} float64"
    for f in (fn, tl.function(fn)):
        with pytest.raises(ValueError, match=expected):
            f(a, b)
    np.testing.assert_array_equal(a, np.ones(a_shape))

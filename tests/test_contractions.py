"""Contractions (einsum, matmul, tensordot, ...) beyond the catalogue: NumPy's broadcasting corners,
gradients against float64 central differences, errors."""

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

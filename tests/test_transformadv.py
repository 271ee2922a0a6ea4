"""The function transformations and custom derivatives, attacked as an adversary: argnums given twice or as
NumPy integers, custom_vjp/custom_jvp arguments at nondiff_argnums that are differentiated anyway, keyword
calls, rules returning the wrong shapes, random draws under jacfwd, Jacobians of batches.

References: float64 central finite differences and NumPy formulas everywhere; JAX, PyTorch (torch.func) and
TensorFlow only behind ``pytest.importorskip``.
"""

import numpy as np
import pytest

import tensorlib as tl

X = np.array([0.5, -1.2, 2.0])


def _fd_grad(f, x, eps=1e-6):
    """Central differences of a scalar NumPy function ``f`` at ``x`` (float64)."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ---------------------------------------------------------------- argnums


def test_argnums_naming_an_argument_twice_is_an_error_not_a_zero_gradient():
    # grad(f, argnums=(0, 0)) gave (0, df/da): the second place replaced the argument the first had watched.
    def f(a, b):
        return tl.sum(a * b * b)

    x, y = tl.tensor(X), tl.tensor(2.0 * X)
    for argnums in ((0, 0), (1, -1), [0, 1, 0]):
        for transform in (tl.grad, tl.value_and_grad, tl.jacobian, tl.jacfwd, tl.hessian):
            with pytest.raises(ValueError, match=r"argnums .* names an argument twice"):
                transform(f, argnums=argnums)(x, y)
    got = tl.grad(f, argnums=(0, -1))(x, y)
    np.testing.assert_allclose(got[0].numpy(), (2 * X) ** 2, rtol=1e-14)
    np.testing.assert_allclose(got[1].numpy(), 2 * X * 2 * X, rtol=1e-14)


def test_argnums_may_be_numpy_integers_as_in_jax():
    def f(a, b):
        return tl.sum(tl.sin(a) * b)

    x, y = tl.tensor(X), tl.tensor(2.0 * X)
    got = tl.grad(f, argnums=np.int64(1))(x, y)  # was a TypeError: argnums must be an int
    np.testing.assert_allclose(got.numpy(), _fd_grad(lambda b: np.sum(np.sin(X) * b), 2 * X), rtol=1e-8)
    both = tl.jacobian(f, argnums=(np.int32(0), 1))(x, y)
    np.testing.assert_allclose(both[0].numpy(), np.cos(X) * 2 * X, rtol=1e-14)
    with pytest.raises(TypeError, match=r"argnums must be an int or a tuple of ints, got True"):
        tl.grad(f, argnums=True)(x, y)
    with pytest.raises(TypeError, match=r"argnums must be an int or a tuple of ints"):
        tl.grad(f, argnums=0.0)(x, y)

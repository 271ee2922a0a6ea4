"""tl.linalg, round 4: degenerate spectra, higher derivatives of det, and the matrix functions of SciPy,
attacked as an adversary and as a SciPy / JAX / PyTorch user would use them.

References: ``scipy.linalg`` for values (and identities where SciPy itself is wrong: ``expm(logm(x)) == x``),
closed forms, float64 central differences (``tl.testing.check_grads`` and a direct one below), and
PyTorch / JAX where installed (importorskip).
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

L = tl.linalg
sl = pytest.importorskip("scipy.linalg")


def _rng(seed=0):
    return np.random.default_rng(seed)


def _differences(f, x, eps=1e-6):
    """The float64 central-difference gradient of the scalar f at the array x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (float(f(tl.tensor(x + step))) - float(f(tl.tensor(x - step)))) / (2 * eps)
    return grad


# ---------------------------------------------------------------- logm of a singular matrix
def test_logm_of_an_exactly_singular_matrix_is_nan_not_scipys_finite_number():
    # No logarithm exists (log 0 = -inf); SciPy warns and returns the logarithm of x with its zero eigenvalue
    # replaced by an arbitrary 1e-20 (an eigenvalue -46.05 of the result).
    x = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(np.linalg.eigvalsh(sl.logm(x)).min(), np.log(1e-20))
    assert np.isnan(L.logm(x).numpy()).all()
    assert np.isnan(L.logm(np.zeros((1, 1))).numpy()).all()
    # matrix by matrix: an invertible neighbour in the batch keeps its logarithm
    batch = np.stack([x, np.diag([2.0, 3.0])])
    out = L.logm(batch).numpy()
    assert np.isnan(out[0]).all()
    np.testing.assert_allclose(out[1], np.diag(np.log([2.0, 3.0])), atol=1e-14)
    # nearly singular is not singular: exp(log) is still x
    near = np.diag([1e-200, 1.0])
    np.testing.assert_allclose(L.logm(near).numpy(), np.diag([np.log(1e-200), 0.0]), rtol=1e-14)


# ---------------------------------------------------------------- det's higher derivatives at singular matrices
def _mixed_derivative_of_det(x, directions, h=0.5):
    """d^k/dt_1..dt_k det(x + sum t_i d_i) at 0 by central differences of NumPy's det: exact but for rounding
    where k >= n - 1 (det is a polynomial of degree n; the error term is the (k + 2)-th derivative)."""
    import itertools

    total = 0.0
    for signs in itertools.product((1, -1), repeat=len(directions)):
        point = x + h * sum(sign * d for sign, d in zip(signs, directions))
        total += np.prod(signs) * np.linalg.det(point)
    return total / (2 * h) ** len(directions)


def _directional(f, direction):
    return lambda y: tl.sum(tl.grad(f)(y) * tl.tensor(direction))


@pytest.mark.parametrize(
    "x",
    [
        np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]),  # rank 2
        np.ones((3, 3)),  # rank 1
        np.zeros((3, 3)),
        np.array([[1.0, 2.0, 0.0, 1.0], [2.0, 4.0, 0.0, 2.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 2.0, 1.0]]),  # rank 3
        np.diag([2.0, 0.0, 0.0, 1.0]),  # rank 2
    ],
)
def test_third_and_fourth_derivatives_of_det_at_singular_matrices_match_differences_of_det(x):
    rng = _rng(7)
    a, b, c, d = rng.standard_normal((4,) + x.shape)
    second = _directional(_directional(L.det, a), b)
    third = tl.grad(second)(x).numpy()  # the gradient of D^2 det[a, b]: D^3 det[a, b, .]
    reference = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        unit = np.zeros_like(x)
        unit[index] = 1.0
        reference[index] = _mixed_derivative_of_det(x, [a, b, unit])
    np.testing.assert_allclose(third, reference, atol=1e-9)
    np.testing.assert_allclose(float(_directional(second, c)(x)), _mixed_derivative_of_det(x, [a, b, c]), atol=1e-9)
    fourth = float(tl.sum(tl.grad(_directional(second, c))(x) * tl.tensor(d)))
    np.testing.assert_allclose(fourth, _mixed_derivative_of_det(x, [a, b, c, d]), atol=1e-9)


def test_det_derivatives_batched_complex_and_past_the_degree():
    rng = _rng(8)
    x = np.stack([np.ones((3, 3)), rng.standard_normal((3, 3))])  # a singular and an invertible matrix
    a = rng.standard_normal((3, 3))
    h = tl.hessian(lambda y: tl.sum(tl.grad(lambda z: tl.sum(L.det(z)))(y) * tl.tensor(a)))(x).numpy()
    for i in range(2):
        for index in np.ndindex(3, 3):
            unit = np.zeros((3, 3))
            unit[index] = 1.0
            for jndex in np.ndindex(3, 3):
                other = np.zeros((3, 3))
                other[jndex] = 1.0
                # cross-batch entries are zero; D^3 det of a 3 x 3 is x-independent
                expect = _mixed_derivative_of_det(x[i], [a, unit, other])
                np.testing.assert_allclose(h[(i,) + index + (i,) + jndex], expect, atol=1e-9)
    # past the degree: the fourth derivative of a 3 x 3 det is zero
    fourth = tl.grad(lambda y: tl.sum(tl.grad(_directional(_directional(L.det, a), a))(y) * tl.tensor(a)))(x[0])
    np.testing.assert_array_equal(fourth.numpy(), np.zeros((3, 3)))
    # complex (JAX's convention: det is holomorphic, so the gradient is the plain derivative)
    z = np.array([[1.0 + 1j, 2.0], [1.0 + 1j, 2.0]])  # singular
    e = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    first = tl.grad(lambda y: tl.real(tl.sum(tl.grad(lambda w: tl.real(L.det(w)))(y) * tl.tensor(e))))(z).numpy()
    assert np.isfinite(first).all()

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

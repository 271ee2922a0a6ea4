"""Last session's new APIs attacked as an adversary and as a SciPy / PyTorch / JAX user would use them:
``tl.linalg.null_space`` / ``funm``, ``tl.scan`` (and ``tl.nn.torch``'s recurrent layers) traced with a length known
only at run time, and ``Variable.assign_add`` from several threads.

References: ``scipy.linalg`` values and float64 central differences of them (no torch/jax/tensorflow needed),
Python loops written out by hand, and ``torch.nn.LSTM``/``GRU`` with the same weights where torch is installed
(importorskip).
"""

import numpy as np
import pytest

import tensorlib as tl

L = tl.linalg


def _rng(seed=0):
    return np.random.default_rng(seed)


def _central_differences(f, x, eps=1e-6):
    """The float64 central-difference gradient of the NumPy scalar function f at the array x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


# ---------------------------------------------------------------- null_space's gradient
@pytest.mark.parametrize("shape", [(4, 5), (3, 5), (2, 6)])
def test_null_space_gradient_matches_differences_of_scipys_projector(shape):
    # The projector z z^T onto the null space is smooth where the rank is constant; its gradient was 0 (the
    # basis came from svd's full_matrices rows, whose gradient svd ignores).
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(1)
    a, w = rng.normal(size=shape), rng.normal(size=(shape[1], shape[1]))

    def projected(z):
        return z @ z.T

    got = tl.grad(lambda x: tl.sum(projected(L.null_space(x)) * tl.tensor(w)))(tl.tensor(a)).numpy()
    want = _central_differences(lambda x: np.sum(projected(sl.null_space(x)) * w), a)
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert np.abs(want).max() > 0.1


def test_null_space_gradient_of_a_basis_dependent_loss_moves_it_out_of_the_row_space():
    # d z = -pinv(a) da z (the minimal change keeping a z = 0 and z orthonormal to first order): for the loss
    # sum(g * z) the gradient is -pinv(a)^T g z^T; the value stays SciPy's basis.
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(2)
    a, g = rng.normal(size=(2, 4)), rng.normal(size=(4, 2))
    z = sl.null_space(a)
    np.testing.assert_allclose(L.null_space(a).numpy(), z, atol=1e-12)
    got = tl.grad(lambda x: tl.sum(L.null_space(x) * tl.tensor(g)))(tl.tensor(a)).numpy()
    np.testing.assert_allclose(got, -np.linalg.pinv(a).T @ g @ z.T, atol=1e-10)


def test_null_space_gradient_complex_projector():
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(3)
    a = rng.normal(size=(2, 4)) + 1j * rng.normal(size=(2, 4))
    w = rng.normal(size=(4, 4))

    def loss_np(re, im):
        z = sl.null_space(re + 1j * im)
        return np.sum(np.real(z @ z.conj().T) * w)

    got = tl.grad(lambda x: tl.sum(tl.real(L.null_space(x) @ tl.conj(tl.transpose(L.null_space(x)))) * w))(
        tl.tensor(a)
    ).numpy()
    d_re = _central_differences(lambda re: loss_np(re, a.imag), a.real)
    d_im = _central_differences(lambda im: loss_np(a.real, im), a.imag)
    # JAX's convention for a real loss of a complex input: the gradient is d/d re - i d/d im.
    np.testing.assert_allclose(got, d_re - 1j * d_im, atol=1e-6)


def test_null_space_projector_second_derivative_matches_differences():
    rng = _rng(5)
    a, w = rng.normal(size=(2, 4)), rng.normal(size=(4, 4))
    tl.testing.check_grads(lambda x: tl.sum((lambda z: z @ tl.transpose(z))(L.null_space(x)) * w), (a,), order=2)

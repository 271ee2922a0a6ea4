"""``tl.linalg`` and ``tl.fft`` attacked as an adversary: complex factors, singular and empty matrices, integer
inputs and the keyword arguments NumPy, SciPy, PyTorch and JAX users pass.

References: NumPy/SciPy values and formulas, float64 central differences (``tl.testing.check_grads``), and
PyTorch / JAX where installed (``pytest.importorskip``)."""

import numpy as np
import pytest
import scipy.linalg

import tensorlib as tl

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hermitian_positive(rng, n, batch=()):
    c = _complex(rng, *batch, n, n)
    return c @ np.conj(np.swapaxes(c, -1, -2)) + n * np.eye(n)


# ---------------------------------------------------------------- cholesky_solve / solve_triangular, complex
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky_solve_of_a_complex_factor_solves_with_the_hermitian_matrix(upper, batch):
    # a = L L^H for a complex factor (PyTorch's cholesky_solve, SciPy's cho_solve); L L^T was solved instead.
    rng = np.random.default_rng(0)
    a = _hermitian_positive(rng, 3, batch)
    factor = np.linalg.cholesky(a)
    factor = np.conj(np.swapaxes(factor, -1, -2)) if upper else factor
    b = _complex(rng, *batch, 3, 2)
    got = tl.linalg.cholesky_solve(tl.tensor(b), tl.tensor(factor), upper=upper).numpy()
    np.testing.assert_allclose(got, np.linalg.solve(a, b), atol=1e-12)
    tl.testing.check_grads(lambda b, f: tl.linalg.cholesky_solve(b, f, upper=upper), [b, factor], order=2)


@pytest.mark.parametrize("trans", [2, "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_conjugate_transpose(trans, lower):
    # SciPy's trans=2 / 'C': solve t^H x = b; it raised ValueError.
    rng = np.random.default_rng(1)
    a = _complex(rng, 3, 3) + 3 * np.eye(3)
    b = _complex(rng, 3, 2)
    got = tl.linalg.solve_triangular(tl.tensor(a), tl.tensor(b), trans=trans, lower=lower).numpy()
    np.testing.assert_allclose(got, scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower), atol=1e-12)
    real = a.real.copy()
    got = tl.linalg.solve_triangular(tl.tensor(real), tl.tensor(b.real), trans=trans, lower=lower, unit_diagonal=True)
    want = scipy.linalg.solve_triangular(real, b.real, trans=trans, lower=lower, unit_diagonal=True)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    tl.testing.check_grads(lambda a, b: tl.linalg.solve_triangular(a, b, trans=trans, lower=lower), [a, b], order=2)


def test_cholesky_solve_and_conjugate_triangular_solve_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    rng = np.random.default_rng(2)
    factor = np.linalg.cholesky(_hermitian_positive(rng, 3))
    b = _complex(rng, 3, 2)
    w = _complex(rng, 3, 2)

    def loss_jax(b, factor):
        return jnp.sum(jnp.real(jsl.cho_solve((factor, True), b) * w))

    def loss_tl(b, factor):
        return tl.sum(tl.real(tl.linalg.cholesky_solve(b, factor) * w))

    want = jax.grad(loss_jax, argnums=(0, 1))(b, factor)
    got = tl.grad(loss_tl, argnums=(0, 1))(tl.tensor(b), tl.tensor(factor))
    np.testing.assert_allclose(got[0].numpy(), want[0], atol=1e-12)
    # JAX's cho_solve reads the whole factor; ours only its lower triangle (the other gets 0).
    np.testing.assert_allclose(got[1].numpy(), np.tril(want[1]), atol=1e-12)

    a = _complex(rng, 3, 3) + 3 * np.eye(3)
    want = jax.grad(lambda a, b: jnp.sum(jnp.real(jsl.solve_triangular(a, b, trans=2) * w)), argnums=(0, 1))(a, b)
    got = tl.grad(lambda a, b: tl.sum(tl.real(tl.linalg.solve_triangular(a, b, trans=2) * w)), argnums=(0, 1))(
        tl.tensor(a), tl.tensor(b)
    )
    for g, h in zip(got, want):
        np.testing.assert_allclose(g.numpy(), h, atol=1e-12)

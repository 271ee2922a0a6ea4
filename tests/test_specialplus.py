"""The special functions added to ``tl.special`` beyond the first set (betainc, ...), attacked where they are
hard: gradients in every argument (against mpmath's arbitrary-precision derivatives and float64 central
differences of SciPy), float32 accuracy (one rounding of SciPy's float64 value), SciPy's edge values at 0, 1,
inf and NaN, integer inputs, broadcasting and clear errors.  References: SciPy, mpmath (importorskip),
closed forms, jax.scipy.special (importorskip).  The catalogue (``tensorlib/testing/op_db_special.py``) checks
the rest: values, gradients to second order, traced == eager."""

import numpy as np
import pytest
import scipy.special as sp

import tensorlib as tl


def _f64(*values):
    return [tl.tensor(np.asarray(v, np.float64)) for v in values]


# ---------------------------------------------------------------- betainc
# (a, b, x): moderate, tiny and large parameters, both sides of the symmetry switch x = (a + 1) / (a + b + 2)
BETAINC_POINTS = [
    (0.5, 0.5, 0.3),
    (2.0, 3.0, 0.4),
    (2.0, 3.0, 0.9),
    (10.0, 0.5, 0.99),
    (0.1, 20.0, 0.001),
    (100.0, 200.0, 0.33),
    (3.0, 2.0, 1e-5),
    (0.01, 0.01, 0.5),
    (1e-3, 5.0, 0.9),
    (3.0, 1e-3, 0.2),
    (30.0, 0.5, 0.999),
    (1e-8, 2.0, 0.3),
]


def _betainc_partials(a, b, x):
    return [float(g) for g in tl.grad(tl.special.betainc, argnums=(0, 1))(*_f64(a, b, x))]


@pytest.mark.parametrize("a, b, x", BETAINC_POINTS)
def test_betainc_gradients_in_a_and_b_match_mpmath(a, b, x):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        want_a = mpmath.diff(lambda t: mpmath.betainc(t, b, 0, x, regularized=True), a)
        want_b = mpmath.diff(lambda t: mpmath.betainc(a, t, 0, x, regularized=True), b)
    got_a, got_b = _betainc_partials(a, b, x)
    np.testing.assert_allclose([got_a, got_b], [float(want_a), float(want_b)], rtol=1e-12)


def test_betainc_gradients_in_a_and_b_match_central_differences_of_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 40.0, (2, 30))
    x = rng.uniform(0.02, 0.98, 30)
    got_a, got_b = (g.numpy() for g in tl.grad(lambda *v: tl.sum(tl.special.betainc(*v)), argnums=(0, 1))(a, b, x))
    h = 1e-6
    np.testing.assert_allclose(
        got_a, (sp.betainc(a + h, b, x) - sp.betainc(a - h, b, x)) / (2 * h), rtol=1e-6, atol=1e-9
    )
    np.testing.assert_allclose(
        got_b, (sp.betainc(a, b + h, x) - sp.betainc(a, b - h, x)) / (2 * h), rtol=1e-6, atol=1e-9
    )


def test_betainc_gradients_for_large_parameters_match_scipy_differences_and_symmetry():
    # I_x(a, b) = 1 - I_{1-x}(b, a), and at x = 1/2 with a = b: I = 1/2 for every a, so dI/da = -dI/db there
    got_a, got_b = _betainc_partials(1e4, 1e4, 0.5)
    np.testing.assert_allclose(got_a, -got_b, rtol=1e-10)
    got_a, got_b = _betainc_partials(1e4, 2e4, 0.334)
    h = 1e-2
    np.testing.assert_allclose(
        got_a, (sp.betainc(1e4 + h, 2e4, 0.334) - sp.betainc(1e4 - h, 2e4, 0.334)) / (2 * h), rtol=1e-6
    )
    np.testing.assert_allclose(
        got_b, (sp.betainc(1e4, 2e4 + h, 0.334) - sp.betainc(1e4, 2e4 - h, 0.334)) / (2 * h), rtol=1e-6
    )


def test_betainc_gradient_in_x_is_the_beta_density_to_second_order():
    a, b, x = 2.5, 3.5, np.array([0.1, 0.5, 0.85])
    density = x ** (a - 1) * (1 - x) ** (b - 1) / sp.beta(a, b)
    first = tl.grad(lambda x: tl.sum(tl.special.betainc(a, b, x)))
    np.testing.assert_allclose(first(x).numpy(), density, rtol=1e-13)
    second = tl.grad(lambda x: tl.sum(first(x)))(x).numpy()
    np.testing.assert_allclose(second, density * ((a - 1) / x - (b - 1) / (1 - x)), rtol=1e-12)


def test_betainc_mixed_second_derivative_in_x_of_the_parameter_gradients():
    # d/dx dI/da = density (log x - digamma(a) + digamma(a + b)); d/dx dI/db with log1p(-x) and digamma(b)
    a, b, x = 2.5, 1.5, 0.3
    density = x ** (a - 1) * (1 - x) ** (b - 1) / sp.beta(a, b)
    ta, tb, tx = _f64(a, b, x)
    by_a, by_b = (float(tl.grad(lambda x: tl.grad(tl.special.betainc, argnums=k)(ta, tb, x))(tx)) for k in (0, 1))
    np.testing.assert_allclose(by_a, density * (np.log(x) - sp.digamma(a) + sp.digamma(a + b)), rtol=1e-12)
    np.testing.assert_allclose(by_b, density * (np.log1p(-x) - sp.digamma(b) + sp.digamma(a + b)), rtol=1e-12)


def test_betainc_second_derivative_in_a_raises_a_clear_lookup_error():
    second = tl.grad(tl.grad(tl.special.betainc, argnums=0), argnums=0)
    with pytest.raises(LookupError, match="BetaincGrad: the second derivatives of betainc in a and b"):
        second(2.0, 3.0, 0.5)


def test_betainc_float32_is_one_rounding_of_scipys_float64():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.1, 50.0, (2, 500)).astype(np.float32)
    x = rng.uniform(0.0, 1.0, 500).astype(np.float32)
    got = tl.special.betainc(a, b, x)
    want = sp.betainc(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))  # SciPy's float32 loop was 100 ulps off
    grads = tl.grad(lambda *v: tl.sum(tl.special.betainc(*v)), argnums=(0, 1, 2))(a, b, x)
    wide = tl.grad(lambda *v: tl.sum(tl.special.betainc(*v)), argnums=(0, 1, 2))(
        *(v.astype(np.float64) for v in (a, b, x))
    )
    for g, w in zip(grads, wide):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-30)


def test_betainc_edge_values_match_scipy_and_have_zero_parameter_gradients_at_0_and_1():
    a = np.array([0.0, 1.0, 2.0, np.nan, 1.0, 2.0, 2.0, np.inf, 2.0, 2.0, -1.0])
    b = np.array([1.0, 0.0, 3.0, 1.0, np.nan, 2.0, 2.0, 1.0, 3.0, 3.0, 1.0])
    x = np.array([0.5, 0.5, -0.1, 0.5, 0.5, 1.1, np.nan, 0.5, 0.0, 1.0, 0.5])
    np.testing.assert_array_equal(tl.special.betainc(a, b, x).numpy(), sp.betainc(a, b, x))
    ga, gb = (g.numpy() for g in tl.grad(lambda *v: tl.sum(tl.special.betainc(*v)), argnums=(0, 1))(a, b, x))
    np.testing.assert_array_equal(ga[8:10], [0.0, 0.0])
    np.testing.assert_array_equal(gb[8:10], [0.0, 0.0])
    assert np.isnan(ga[2:8]).all() and np.isnan(ga[10]) and np.isnan(gb[3:7]).all()


def test_betainc_promotes_integers_broadcasts_and_names_itself_in_errors():
    assert tl.special.betainc(np.array([1, 2]), np.array([2, 3]), np.array([0, 1])).dtype == np.float64
    a, b, x = np.array([[1.5], [2.5], [4.0]]), np.array([0.5, 1.0, 2.0, 7.0]), 0.3
    np.testing.assert_allclose(tl.special.betainc(a, b, x).numpy(), sp.betainc(a, b, x), rtol=1e-15)
    ga, gb, gx = tl.grad(lambda *v: tl.sum(tl.special.betainc(*v)), argnums=(0, 1, 2))(*_f64(a, b, x))
    assert (ga.shape, gb.shape, gx.shape) == ((3, 1), (4,), ())
    with pytest.raises(ValueError, match=r"Betainc: shapes \(2,\) and \(3,\) and \(\) are not broadcastable"):
        tl.special.betainc(np.ones(2), np.ones(3), 0.5)
    with pytest.raises(TypeError, match="Betainc: not defined for complex64"):
        tl.special.betainc(1 + 1j, 1.0, 0.5)


def test_betainc_and_its_x_gradient_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    a, b, x = np.array([0.5, 2.0, 7.0]), np.array([3.0, 0.7, 7.0]), np.array([0.2, 0.6, 0.45])
    want = jax.scipy.special.betainc(a, b, x)
    want_x = jax.grad(lambda x: jax.scipy.special.betainc(a, b, x).sum())(x)
    np.testing.assert_allclose(tl.special.betainc(a, b, x).numpy(), want, rtol=1e-12)
    got_x = tl.grad(lambda x: tl.sum(tl.special.betainc(a, b, x)))(x).numpy()
    np.testing.assert_allclose(got_x, want_x, rtol=1e-12)

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


def _grad(f, *args, argnums=0):
    """The gradient of sum(f) at float64 ``args``, as NumPy arrays."""
    g = tl.grad(lambda *v: tl.sum(f(*v)), argnums=argnums)(*_f64(*args))
    return tuple(v.numpy() for v in g) if isinstance(argnums, tuple) else g.numpy()


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def _same(got, want):
    np.testing.assert_array_equal(got.numpy() if isinstance(got, tl.Tensor) else got, want)


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


@pytest.mark.parametrize("a, b, x", [(1e4, 1e4, 0.5), (1e6, 1e6, 0.5003), (1e8, 2e8, 0.33334), (3e3, 7.0, 0.9985)])
def test_betainc_gradient_in_x_for_large_parameters_matches_mpmath(a, b, x):
    # the density's textbook log, (a - 1) log x + (b - 1) log1p(-x) - betaln(a, b), cancelled terms of size
    # a log x: 1.8e-8 relative at a = 1e8, b = 2e8; Loader's form (tl.stats.beta.logpdf's) keeps 1e-13
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        A, B, X = (mpmath.mpf(v) for v in (a, b, x))
        want = float(mpmath.exp((A - 1) * mpmath.log(X) + (B - 1) * mpmath.log1p(-X) - mpmath.log(mpmath.beta(A, B))))
    np.testing.assert_allclose(_grad(tl.special.betainc, a, b, x, argnums=2), want, rtol=1e-12)


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


# ---------------------------------------------------------------- zeta, multigammaln, loggamma, factorial, comb, poch
def test_zeta_values_match_scipy_for_hurwitz_and_riemann_including_below_1():
    x = np.array([2.0, 3.5, 0.5, 1.0, -1.0, np.nan, 2.0, 2.0])
    q = np.array([1.0, 0.3, 2.0, 2.0, 1.0, 1.0, 0.0, -1.5])
    _same(tl.special.zeta(x, q), sp.zeta(x, q))
    _same(tl.special.zeta(x), sp.zeta(x))  # Riemann: -1/12 at -1, by the functional equation
    assert tl.special.zeta(np.array([2, 3])).dtype == np.float64


def test_zeta_gradient_in_q_is_minus_x_zeta_x_plus_1():
    x, q = np.array([2.0, 3.5, 1.5]), np.array([0.7, 2.0, 5.0])
    np.testing.assert_allclose(_grad(tl.special.zeta, x, q, argnums=1), -x * sp.zeta(x + 1, q), rtol=1e-14)
    np.testing.assert_allclose(_grad(tl.special.zeta, x, q, argnums=1), _central(lambda q: sp.zeta(x, q), q), rtol=1e-7)


def test_zeta_derivatives_in_x_match_central_differences_of_scipy():
    x, q = np.array([2.0, 3.5, 1.2, 7.0, 5.0]), np.array([0.3, 2.0, 1e-3, 50.0, 1.0])
    np.testing.assert_allclose(_grad(tl.special.zeta, x, q), _central(lambda x: sp.zeta(x, q), x, 1e-5), rtol=1e-8)
    r = np.array([-7.5, -3.0, -0.5, 0.3, 0.9, 1.1, 2.5])  # Riemann: the functional equation below 0
    np.testing.assert_allclose(_grad(tl.special.zeta, r), _central(sp.zeta, r, 1e-6), rtol=1e-7)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_zeta_derivatives_of_every_order_in_x_match_mpmath(order):
    mpmath = pytest.importorskip("mpmath")
    # both sides of x = -1/2, where the Riemann function's derivatives change method; near 0 (its functional
    # equation's derivative cancelled there: 5e-5 off at -1e-6)
    x = np.array([2.0, 3.5, 1.01, 0.5, 0.0, -1e-6, -0.4999, -0.5001, -1.0, -3.0, -7.5, -20.5, 20.0, 60.0])
    q = np.array([1.0, 0.3, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1e-3, 3.0])

    def derivative(f, x):
        for _ in range(order):
            f = (lambda f: lambda x: tl.grad(lambda x: tl.sum(f(x)))(x))(f)
        return f(tl.tensor(x)).numpy()

    with mpmath.workdps(30):
        riemann = [float(mpmath.zeta(v, 1, order)) for v in x]
        hurwitz = [float(mpmath.zeta(v, u, order)) for v, u in zip(x[x > 1], q[x > 1])]
    np.testing.assert_allclose(derivative(tl.special.zeta, x), riemann, rtol=1e-12)
    got = derivative(lambda x: tl.special.zeta(x, q[x_hurwitz]), x[x_hurwitz]) if (x_hurwitz := x > 1).any() else []
    np.testing.assert_allclose(got, hurwitz, rtol=1e-13)


def test_multigammaln_matches_scipy_its_gradient_is_a_sum_of_digammas_and_nan_outside_the_domain():
    a = np.array([1.7, 3.0, 12.5])
    for d in (1, 2, 3, 4):
        np.testing.assert_allclose(
            tl.special.multigammaln(a, d).numpy(), [sp.multigammaln(v, d) for v in a], rtol=1e-14
        )
        want = sum(sp.digamma(a - 0.5 * j) for j in range(d))
        np.testing.assert_allclose(_grad(lambda a: tl.special.multigammaln(a, d), a), want, rtol=1e-14)
    assert np.isnan(tl.special.multigammaln(np.array([0.4]), 2).numpy()).all()  # SciPy raises: a <= (d - 1) / 2
    for d in (0, 1.5, True):
        with pytest.raises(ValueError, match="multigammaln: the dimension d must be a positive integer"):
            tl.special.multigammaln(3.0, d)


def test_loggamma_and_factorial_edge_values_match_scipy_with_closed_form_gradients():
    x = np.array([0.0, -0.0, -1.5, -2.0, 2.5, np.inf, -np.inf, np.nan])
    _same(tl.special.loggamma(x), sp.loggamma(x))
    n = np.array([-1.0, 0.0, 2.5, 3.0, np.nan, 170.0, 171.0, 172.0])
    np.testing.assert_allclose(tl.special.factorial(n).numpy(), sp.factorial(n), rtol=1e-14)
    assert tl.special.factorial(np.array([1, 2, 3])).dtype == np.float64
    v = np.array([0.5, 2.0, 6.3])
    np.testing.assert_allclose(_grad(tl.special.loggamma, v), sp.digamma(v), rtol=1e-14)
    np.testing.assert_allclose(_grad(tl.special.factorial, v), sp.gamma(v + 1) * sp.digamma(v + 1), rtol=1e-14)
    with pytest.raises(ValueError, match="factorial: exact=True gives Python integers"):
        tl.special.factorial(3, exact=True)


def test_comb_binom_and_poch_match_scipy_and_central_differences():
    N = np.array([5.0, 5.0, -1.0, 5.0, 5.5, 10.0, 30.0, 3.0])
    k = np.array([2.0, 6.0, 1.0, -1.0, 2.0, 3.5, 12.0, 0.0])
    np.testing.assert_allclose(tl.special.comb(N, k).numpy(), sp.comb(N, k), rtol=1e-14)
    np.testing.assert_allclose(
        tl.special.comb(N, np.abs(k), repetition=True).numpy(), sp.comb(N, np.abs(k), repetition=True), rtol=1e-13
    )
    n, k = np.array([5.5, 7.0, 12.3]), np.array([2.2, 3.0, 0.7])
    gn, gk = _grad(tl.special.binom, n, k, argnums=(0, 1))
    np.testing.assert_allclose(gn, _central(lambda n: sp.binom(n, k), n), rtol=1e-7)
    np.testing.assert_allclose(gk, _central(lambda k: sp.binom(n, k), k), rtol=1e-7)
    z, m = np.array([2.0, -2.5, 0.7, 1.5]), np.array([3.0, 1.2, 2.0, -1.2])
    np.testing.assert_allclose(tl.special.poch(z, m).numpy(), sp.poch(z, m), rtol=1e-14)
    gz, gm = _grad(tl.special.poch, z, m, argnums=(0, 1))
    np.testing.assert_allclose(gz, _central(lambda z: sp.poch(z, m), z), rtol=1e-7)
    np.testing.assert_allclose(gm, _central(lambda m: sp.poch(z, m), m), rtol=1e-7)


def test_gammasgn_matches_scipy_at_zeros_poles_and_infinities_and_has_zero_gradient():
    x = np.array([0.0, -0.0, -1.0, -1.5, -2.5, 3.0, np.inf, -np.inf, np.nan])
    _same(tl.special.gammasgn(x), sp.gammasgn(x))
    np.testing.assert_array_equal(_grad(tl.special.gammasgn, np.array([2.5, -0.5])), [0.0, 0.0])


# ---------------------------------------------------------------- entropies, softmax
def test_entr_rel_entr_kl_div_edge_values_match_scipy():
    x = np.array([0.0, -1.0, np.inf, np.nan, 0.5, 1e-300])
    _same(tl.special.entr(x), sp.entr(x))
    x = np.array([0.0, 0.0, 1.0, -1.0, 1.0, 1.0, np.nan, np.inf, 0.0, 2.0])
    y = np.array([0.0, 1.0, 0.0, 1.0, -1.0, np.inf, 1.0, 1.0, np.nan, 3.0])
    _same(tl.special.rel_entr(x, y), sp.rel_entr(x, y))
    _same(tl.special.kl_div(x, y), sp.kl_div(x, y))
    p, q = np.array([0.2, 0.5, 0.3]), np.array([0.1, 0.1, 0.8])
    np.testing.assert_allclose(float(tl.sum(tl.special.rel_entr(p, q))), scipy_stats().entropy(p, q), rtol=1e-14)
    assert tl.special.entr(np.array([1, 2])).dtype == np.float64


def scipy_stats():
    import scipy.stats

    return scipy.stats


def test_entropy_gradients_are_the_closed_forms_and_zero_for_y_where_x_is_zero():
    x, y = np.array([0.3, 2.0, 0.0, 0.0]), np.array([0.5, 0.7, 1.0, 0.0])
    gx, gy = _grad(tl.special.rel_entr, x[:2], y[:2], argnums=(0, 1))
    np.testing.assert_allclose(gx, np.log(x[:2] / y[:2]) + 1, rtol=1e-14)
    np.testing.assert_allclose(gy, -x[:2] / y[:2], rtol=1e-14)
    _same(_grad(tl.special.rel_entr, x[2:], y[2:], argnums=1), [0.0, 0.0])  # x = 0: rel_entr is 0 for every y >= 0
    _same(_grad(tl.special.kl_div, x[2:], y[2:], argnums=1), [1.0, 1.0])  # kl_div = y there
    gx, gy = _grad(tl.special.kl_div, x[:2], y[:2], argnums=(0, 1))
    np.testing.assert_allclose(gx, np.log(x[:2] / y[:2]), rtol=1e-14)
    np.testing.assert_allclose(gy, 1 - x[:2] / y[:2], rtol=1e-14)
    np.testing.assert_allclose(_grad(tl.special.entr, x[:2]), -(np.log(x[:2]) + 1), rtol=1e-14)
    assert _grad(tl.special.entr, np.array([0.0]))[0] == np.inf  # its limit from the right


def test_kl_div_where_scipy_overflows_and_rel_entr_where_the_quotient_does():
    # x log(x / y) - x + y: SciPy's kl_div gives -inf at (5e-324, 2) and (1e-300, 1e300), inf at (1, 5e-324)
    x = np.array([5e-324, 1e-300, 1.0, 1e300, 3.0])
    y = np.array([2.0, 1e300, 5e-324, 1e-300, 3.0])
    want_log_ratio = np.log(x) - np.log(y)
    np.testing.assert_allclose(tl.special.kl_div(x, y).numpy(), x * want_log_ratio - x + y, rtol=1e-14)
    np.testing.assert_allclose(tl.special.rel_entr(x, y).numpy(), sp.rel_entr(x, y), rtol=1e-15)
    np.testing.assert_allclose(_grad(tl.special.rel_entr, x, y), want_log_ratio + 1, rtol=1e-14)  # log(x / y): inf
    assert tl.special.kl_div(x.astype(np.float32)[4:], y.astype(np.float32)[4:]).dtype == np.float32


def test_kl_div_gradient_near_x_equal_y_keeps_its_digits():
    # log(x / y) rounded the quotient first: 1e-6 relative at x = 1 + 1e-10, y = 1; log1p((x - y) / y) is exact
    mpmath = pytest.importorskip("mpmath")
    x, y = np.array([1 + 1e-10, 0.3 + 1e-12, 7.0]), np.array([1.0, 0.3, 7.0 - 1e-9])
    with mpmath.workdps(40):
        want = [float(mpmath.log(mpmath.mpf(u) / mpmath.mpf(v))) for u, v in zip(x, y)]
    np.testing.assert_allclose(_grad(tl.special.kl_div, x, y), want, rtol=1e-13)
    np.testing.assert_allclose(_grad(tl.special.rel_entr, x, y), np.array(want) + 1, rtol=1e-15)


def test_generic_entropy_kernels_give_scipys_values_on_any_namespace():
    # the kernels that run on array_api_strict and CuPy, here on NumPy's namespace, against SciPy over a grid of edges
    from tensorlib.ops import special as ops_special

    e = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 5e-324, 1e300, np.inf, -np.inf, np.nan, 1 + 1e-10, 0.7])
    x, y = np.repeat(e, e.size), np.tile(e, e.size)
    _same(ops_special._entr_kernel(np, e), sp.entr(e))
    np.testing.assert_allclose(ops_special._relative_entropy(False)(np, x, y), sp.rel_entr(x, y), rtol=1e-15)
    want = sp.kl_div(x, y)
    fine = ~np.isinf(want) | (x <= 0) | (y <= 0)  # where SciPy's is not an overflow of x log(x / y)
    np.testing.assert_allclose(ops_special._relative_entropy(True)(np, x, y)[fine], want[fine], rtol=1e-13)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
def test_softmax_log_softmax_logsumexp_take_scipys_axes(axis):
    x = np.random.default_rng(2).normal(size=(3, 4, 2)) * 5
    np.testing.assert_allclose(tl.special.softmax(x, axis).numpy(), sp.softmax(x, axis=axis), rtol=1e-14)
    np.testing.assert_allclose(tl.special.log_softmax(x, axis).numpy(), sp.log_softmax(x, axis=axis), rtol=1e-13)
    np.testing.assert_allclose(tl.special.logsumexp(x, axis).numpy(), sp.logsumexp(x, axis=axis), rtol=1e-14)
    b = np.linspace(-1, 1, 24).reshape(3, 4, 2)
    got = tl.special.logsumexp(x, axis, b=b, return_sign=True)
    for g, w in zip(got, sp.logsumexp(x, axis=axis, b=b, return_sign=True)):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-13)


def test_softmax_of_integers_is_float64_and_a_slice_with_inf_is_nan_as_in_scipy():
    assert tl.special.softmax(np.array([1, 2, 3])).dtype == np.float64
    _same(tl.special.softmax(np.array([np.inf, 1.0])), sp.softmax(np.array([np.inf, 1.0])))
    _same(tl.special.softmax(np.array([-np.inf, 0.0])), sp.softmax(np.array([-np.inf, 0.0])))


# ---------------------------------------------------------------- exponential integrals, Dawson, Spence, Owen's T
def test_exponential_integrals_match_scipy_at_edges_with_closed_form_gradients():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 30.0, 800.0, np.inf, np.nan])
    _same(tl.special.expi(x), sp.expi(x))
    _same(tl.special.exp1(x), sp.exp1(x))
    n = np.array([0, 1, 3, 5, 2, 1, 1, 0])
    _same(tl.special.expn(n, x), sp.expn(n, x))
    v = np.array([0.3, 1.7, 6.0])
    np.testing.assert_allclose(_grad(tl.special.expi, v), np.exp(v) / v, rtol=1e-14)
    np.testing.assert_allclose(_grad(tl.special.exp1, v), -np.exp(-v) / v, rtol=1e-14)
    for order in (0, 1, 4):
        np.testing.assert_allclose(
            _grad(lambda x: tl.special.expn(order, x), v), _central(lambda x: sp.expn(order, x), v), rtol=1e-7
        )
    with pytest.raises(ValueError, match=r"Expn: the order n must be a non-negative integer"):
        tl.special.expn(1.5, v)


def test_dawsn_gradient_has_no_cancellation_for_large_x():
    mpmath = pytest.importorskip("mpmath")
    x = np.array([0.5, 3.0, 19.0, 21.0, 1e4, -1e8])
    with mpmath.workdps(60):
        want = [
            float(
                1
                - 2
                * mpmath.mpf(v)
                * mpmath.sqrt(mpmath.pi)
                / 2
                * mpmath.exp(-(mpmath.mpf(v) ** 2))
                * mpmath.erfi(mpmath.mpf(v))
            )
            for v in x
        ]
    np.testing.assert_allclose(_grad(tl.special.dawsn, x), want, rtol=1e-13)  # 1 - 2 x D(x) kept 8 digits at 1e4
    got32 = tl.grad(lambda x: tl.sum(tl.special.dawsn(x)))(x.astype(np.float32)).numpy()
    np.testing.assert_allclose(got32, want, rtol=2e-7)


def test_spence_gradient_at_and_near_1_to_second_order():
    z = np.array([1.0, 1.0 + 1e-9, 0.25, 3.0])
    np.testing.assert_allclose(
        _grad(tl.special.spence, z), np.log(z) / (1 - np.where(z == 1, 0.5, z)) * (z != 1) - (z == 1), rtol=1e-9
    )
    second = tl.grad(lambda z: tl.sum(tl.grad(lambda z: tl.sum(tl.special.spence(z)))(z)))(*_f64(z)).numpy()
    np.testing.assert_allclose(second[:2], [0.5, 0.5], rtol=1e-8)  # d/dz log(z) / (1 - z) at 1
    np.testing.assert_allclose(second[2:], (1 - z[2:] + z[2:] * np.log(z[2:])) / (z[2:] * (1 - z[2:]) ** 2), rtol=1e-13)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan])
    _same(tl.special.spence(x), sp.spence(x))


def test_owens_t_matches_scipy_a_closed_form_and_central_differences():
    a = np.array([0.5, 1.0, -3.0])
    np.testing.assert_allclose(tl.special.owens_t(np.zeros(3), a).numpy(), np.arctan(a) / (2 * np.pi), rtol=1e-14)
    h, a = np.array([0.3, -1.2, 2.5]), np.array([0.7, 2.0, -0.4])
    gh, ga = _grad(tl.special.owens_t, h, a, argnums=(0, 1))
    np.testing.assert_allclose(gh, _central(lambda h: sp.owens_t(h, a), h), rtol=1e-7)
    np.testing.assert_allclose(ga, _central(lambda a: sp.owens_t(h, a), a), rtol=1e-7)


# ---------------------------------------------------------------- Box-Cox
def test_boxcox_edge_values_match_scipy():
    x = np.array([0.0, 0.0, -1.0, 2.0, np.inf, np.inf, 4.0, 1e-300, 3.0, np.nan, 5.0])
    lmbda = np.array([0.0, 2.0, 2.0, 0.0, -1.0, 0.0, 1e-20, 0.5, -2.0, 1.0, 1e-3])
    np.testing.assert_allclose(tl.special.boxcox(x, lmbda).numpy(), sp.boxcox(x, lmbda), rtol=1e-15)
    np.testing.assert_allclose(tl.special.boxcox1p(x - 1, lmbda).numpy(), sp.boxcox1p(x - 1, lmbda), rtol=1e-15)
    np.testing.assert_allclose(
        tl.special.boxcox1p(np.array([1e-12, -1e-12]), 0.5).numpy(),
        sp.boxcox1p(np.array([1e-12, -1e-12]), 0.5),
        rtol=1e-15,
    )


def test_boxcox_gradient_in_lambda_at_and_near_zero_has_no_cancellation():
    # d/dl (x**l - 1) / l = (x**l log x) / l - (x**l - 1) / l**2 -> log(x)**2 / 2 at l = 0; second: log(x)**3 / 3
    x = np.array([0.3, 2.0, 7.0, 7.0, 7.0])
    lmbda = np.array([0.0, 0.0, 1e-9, -1e-4, 0.3])
    L = np.log(x)
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(50):
        want = [
            float(mpmath.diff(lambda t: mpmath.expm1(t * mpmath.log(v)) / t if t else mpmath.log(v), lv))
            for v, lv in zip(x[2:], lmbda[2:])
        ]
    got = _grad(tl.special.boxcox, x, lmbda, argnums=1)
    np.testing.assert_allclose(got[:2], L[:2] ** 2 / 2, rtol=1e-14)
    np.testing.assert_allclose(got[2:], want, rtol=1e-13)
    second = tl.grad(lambda l: tl.sum(tl.grad(lambda l: tl.sum(tl.special.boxcox(x, l)))(l)))(*_f64(lmbda)).numpy()
    np.testing.assert_allclose(second[:2], L[:2] ** 3 / 3, rtol=1e-13)
    np.testing.assert_allclose(_grad(tl.special.boxcox, x, lmbda, argnums=0), x ** (lmbda - 1), rtol=1e-14)


@pytest.mark.parametrize(
    "name, ranges",
    [
        ("entr", [(0, 50)]),
        ("rel_entr", [(0, 5), (0, 5)]),
        ("kl_div", [(0, 5), (0, 5)]),
        ("expi", [(-30, 80)]),
        ("exp1", [(0, 80)]),
        ("dawsn", [(-50, 50)]),
        ("spence", [(0, 50)]),
        ("owens_t", [(-5, 5), (-5, 5)]),
        ("zeta", [(1.1, 20), (0.1, 10)]),
        ("binom", [(0, 50), (0, 20)]),
        ("poch", [(0.1, 10), (-3, 10)]),
        ("boxcox", [(0, 50), (-3, 3)]),  # a float32 composite lost 13 ulps: it computes in float64
        ("boxcox1p", [(-0.9, 50), (-3, 3)]),
    ],
)
def test_float32_results_are_one_rounding_of_scipys_float64(name, ranges):
    rng = np.random.default_rng(5)
    args = [rng.uniform(lo, hi, 2000).astype(np.float32) for lo, hi in ranges]
    got = getattr(tl.special, name)(*args)
    want = getattr(sp, name)(*(a.astype(np.float64) for a in args))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))


# ---------------------------------------------------------------- Bessel K, J, Y
BESSEL_EDGES = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 1e-8, 1e8, 700.0, 800.0, np.inf, -np.inf, np.nan, 30.0]
)


@pytest.mark.parametrize("name", ["k0", "k1", "k0e", "k1e", "j0", "j1", "y0", "y1"])
def test_bessel_edge_values_match_scipy_in_float64_and_float32(name):
    for dtype in (np.float64, np.float32):
        x = BESSEL_EDGES.astype(dtype)
        _same(getattr(tl.special, name)(x), getattr(sp, name)(x.astype(np.float64)).astype(dtype))


def test_bessel_gradients_are_the_recurrences():
    x = np.array([0.3, 1.0, 5.0, 17.0])
    np.testing.assert_allclose(_grad(tl.special.k0, x), -sp.k1(x), rtol=1e-15)
    np.testing.assert_allclose(_grad(tl.special.k1, x), -sp.k0(x) - sp.k1(x) / x, rtol=1e-14)
    np.testing.assert_allclose(_grad(tl.special.j0, x), -sp.j1(x), rtol=1e-15)
    np.testing.assert_allclose(_grad(tl.special.j1, x), sp.j0(x) - sp.j1(x) / x, rtol=1e-13)
    np.testing.assert_allclose(_grad(tl.special.y0, x), -sp.y1(x), rtol=1e-15)
    np.testing.assert_allclose(_grad(tl.special.y1, x), sp.y0(x) - sp.y1(x) / x, rtol=1e-13)
    np.testing.assert_allclose(_grad(tl.special.j1, np.array([0.0, 1e-5])), [0.5, 0.5], rtol=1e-9)  # j1(x) / x -> 1/2


def test_scaled_k_gradients_for_large_x_match_mpmath_in_both_dtypes():
    # k0e' = k0e - k1e cancels about 2x relative: past x = 30 Hankel's expansion takes over
    mpmath = pytest.importorskip("mpmath")
    x = np.array([25.0, 31.0, 100.0, 1e4, 1e8])
    for nu, name in ((0, "k0e"), (1, "k1e")):
        with mpmath.workdps(40):
            want = [float(mpmath.diff(lambda t: mpmath.exp(t) * mpmath.besselk(nu, t), mpmath.mpf(v))) for v in x]
        f = getattr(tl.special, name)
        np.testing.assert_allclose(_grad(f, x), want, rtol=1e-14)
        g32 = tl.grad(lambda x: tl.sum(f(x)))(x.astype(np.float32))
        assert g32.dtype == np.float32
        np.testing.assert_allclose(g32.numpy(), want, rtol=1e-7)

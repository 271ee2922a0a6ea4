"""tl.stats, the statsfix round: what the statsplus note left open (the log-tail ops batched under vmap, the lower
gamma log tail for a huge shape, vonmises' distribution function, multinomial with probabilities that do not sum to
1) and an attack on the ten newest families (truncnorm, gumbel_r, gumbel_l, lognorm, weibull_min, halfnorm, rayleigh,
invgamma, f, loggamma) and every family's log tails.

References: scipy.stats in float64 where SciPy is accurate; closed forms, SciPy's special functions and mpmath
(importorskip) where SciPy underflows or loses digits; float64 central differences for gradients; a Python loop for
vmap.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import tensorlib as tl
from tests._helpers import central_differences


# ------------------------------------------------------------------ the log-tail ops under vmap
def _calls(f, *args):
    """``{op type: kernel calls}`` while ``f(*args)`` runs."""
    with tl.profile() as prof:
        f(*args)
    counts = {}
    for event in prof.events:
        counts[event.op_type] = counts.get(event.op_type, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("op_type", "f", "x"),
    [
        ("LogIgammaFactor", lambda x: tl.stats.gamma.logsf(x, 2.5), [800.0, 900.0, 1500.0, 2.0, 3000.0]),
        ("LogIgammaFactor", lambda x: tl.stats.poisson.logcdf(x, 900.0), [1.0, 5.0, 20.0, 899.0, 40.0]),
        ("LogBetaincFraction", lambda x: tl.stats.beta.logcdf(x, 3.0, 2.0), [1e-200, 1e-150, 1e-300, 0.3, 1e-250]),
    ],
)
def test_log_tail_ops_run_once_under_vmap_and_agree_with_a_loop(op_type, f, x):
    x = tl.tensor(np.array(x))
    batched = tl.vmap(f)(x).numpy()
    loop = np.array([float(f(x[i])) for i in range(x.shape[0])])
    np.testing.assert_allclose(batched, loop, rtol=1e-14)
    assert _calls(tl.vmap(f), x)[op_type] == 1
    grads = tl.vmap(tl.grad(f))(x).numpy()
    np.testing.assert_allclose(grads, [float(tl.grad(f)(x[i])) for i in range(x.shape[0])], rtol=1e-12)


def test_log_betainc_fraction_gradient_op_runs_once_under_vmap():
    f = tl.grad(lambda a: tl.stats.beta.logcdf(1e-200, a, 2.0))
    a = tl.tensor(np.array([3.0, 4.0, 5.5]))
    batched = tl.vmap(f)(a).numpy()
    np.testing.assert_allclose(batched, [float(f(a[i])) for i in range(3)], rtol=1e-13)
    assert _calls(tl.vmap(f), a)["LogBetaincFractionGrad"] == 1


# ------------------------------------------------------------------ the gamma log tails for a huge shape
def _log_gamma_tail_by_quadrature(a, x, upper):
    """``log P(a, x)`` (``x`` below the mode) or ``log Q(a, x)`` (above), by mpmath's quadrature of ``t**(a - 1)
    e**-t`` from ``x`` outward, on points spaced by the integrand's decay length (mpmath's own gammainc does not
    converge from a ~ 1e8)."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40):
        a, x = mp.mpf(a), mp.mpf(x)

        def g(t):
            return (a - 1) * mp.log(t) - t

        length = 1 / abs((a - 1) / x - 1)
        steps = [length * 10**k for k in range(-1, 12)]
        if upper:
            points = [x] + [x + s for s in steps if s < 1e6 * x] + [mp.inf]
        else:
            points = [0] + [x - s for s in steps if s < x][::-1] + [x]
        integral = mp.quad(lambda t: mp.exp(g(t) - g(x)), points)
        return float(g(x) + mp.log(integral) - mp.loggamma(a))


def _huge_shape_points(sds):
    return [(a, a - k * math.sqrt(a)) for a in (1e8, 1e10, 1e12, 1e14, 1e16) for k in sds]


@pytest.mark.parametrize(("a", "x"), _huge_shape_points((39.0, 60.0, 1000.0)) + [(1e12, 5e11), (1e14, 3.0)])
def test_lower_gamma_log_tail_for_a_huge_shape_matches_quadrature(a, x):
    # the series' term cap: gamma.logcdf(1e12 - 39e6, 1e12) was NaN for -765.102930117182 (mpmath)
    want = _log_gamma_tail_by_quadrature(a, x, upper=False)
    got = tl.stats.gamma.logcdf(tl.tensor(np.float64(x)), np.float64(a)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-12 * max(1.0, abs(want) / 1e3))


def _log_lower_gamma_by_numpy_series(a, x, terms):
    """log P(a, x) = log S + a log x - x - gammaln(a + 1), S = sum_n prod_k x / (a + k) (``terms`` terms, summed as
    logs), the prefactor as -a (d - log1p(d)) - stirling(a) - log(2 pi a) / 2 with d = x / a - 1 (d - log1p(d) by its
    series: the difference cancels; a >= 1e5, where stirling(a) is 1 / (12 a) to 1e-17)."""
    k = np.arange(1.0, terms + 1.0)
    log_terms = np.concatenate([[0.0], np.cumsum(np.log1p((x - a - k) / (a + k)))])
    log_s = log_terms.max() + np.log(np.exp(log_terms - log_terms.max()).sum())
    d = (x - a) / a
    half_eta_square = math.fsum((-d) ** j / j for j in range(2, 60))
    return log_s - a * half_eta_square - 1 / (12 * a) - 0.5 * math.log(2 * math.pi * a)


def test_lower_gamma_log_tail_for_a_huge_shape_matches_its_series_summed_in_numpy():
    a = 1e12
    x = a - 40.0 * math.sqrt(a)
    want = _log_lower_gamma_by_numpy_series(a, x, 2_000_000)
    got = tl.stats.gamma.logcdf(tl.tensor(np.float64(x)), np.float64(a)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-8)


# ------------------------------------------------------------------ gammainc and its inverses for a large shape
LARGE_SHAPE = [(a, k) for a in (1e6, 1e8, 1e10) for k in (5.0, 10.0, 30.0)]


@pytest.mark.parametrize(("a", "k"), LARGE_SHAPE)
def test_gammainc_for_a_large_shape_below_the_mean_matches_its_series(a, k):
    # SciPy's (Cephes') series stops at 2000 terms: gammainc(1e8, 1e8 - 1e5) was 6.413e-24 for 7.370e-24
    x = a - k * math.sqrt(a)
    want = _log_lower_gamma_by_numpy_series(a, x, int(60 * a / (a - x)) + 1000)
    a_, x_ = tl.tensor(np.float64(a)), tl.tensor(np.float64(x))
    np.testing.assert_allclose(np.log(tl.special.gammainc(a_, x_).numpy()), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(tl.special.gammaincc(a_, x_).numpy(), -np.expm1(want), rtol=1e-15)
    np.testing.assert_allclose(np.log(tl.stats.gamma.cdf(x_, a_).numpy()), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.log(tl.stats.chi2.cdf(2.0 * x_, 2.0 * a_).numpy()), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.log(tl.stats.poisson.sf(a_ - 1.0, x_).numpy()), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(tl.stats.gamma.logcdf(x_, a_).numpy(), want, rtol=0, atol=1e-9)


@pytest.mark.parametrize(("a", "k"), LARGE_SHAPE)
def test_gammainc_for_a_large_shape_matches_quadrature(a, k):
    x = a - k * math.sqrt(a)
    want = _log_gamma_tail_by_quadrature(a, x, upper=False)
    got = np.log(tl.special.gammainc(tl.tensor(np.float64(a)), tl.tensor(np.float64(x))).numpy())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1.0, abs(want)))


@pytest.mark.parametrize("a", [1e6, 1e8])
def test_gammaincinv_for_a_large_shape_inverts_the_right_gammainc(a):
    # SciPy's inverse inverted its short series: gammaincinv(1e8, 1e-7) had P(a, x) = 1.04e-7 (1e9: 2.6e-7)
    q = np.array([1e-7, 1e-20, 1e-100, 1e-300])
    a_ = tl.tensor(np.float64(a))
    x = tl.special.gammaincinv(a_, tl.tensor(q)).numpy()
    residual = np.array([_log_lower_gamma_by_numpy_series(a, xi, int(60 * a / (a - xi)) + 1000) for xi in x])
    slope = np.exp(ss.gamma.logpdf(x, a) - np.log(q))  # d log P / dx
    assert (np.abs((residual - np.log(q)) / slope) <= 1e-13 * x).all(), (residual - np.log(q)) / slope / x
    np.testing.assert_allclose(tl.stats.gamma.ppf(tl.tensor(q), a_).numpy(), x, rtol=1e-15)
    # Q = 1 - 1e-7: the same x, to the rounding of 1 - q
    np.testing.assert_allclose(tl.special.gammainccinv(a_, tl.tensor(1.0 - q[:1])).numpy(), x[:1], rtol=1e-12)
    np.testing.assert_allclose(tl.stats.gamma.isf(tl.tensor(1.0 - q[:1]), a_).numpy(), x[:1], rtol=1e-12)


def test_gammaincinv_for_a_huge_shape_round_trips():
    a = np.float64(1e12)
    q = np.array([1e-7, 1e-20, 1e-100, 1e-300])
    x = tl.special.gammaincinv(tl.tensor(a), tl.tensor(q))
    slope = np.exp(ss.gamma.logpdf(x.numpy(), a) - np.log(q))
    error = (tl.stats.gamma.logcdf(x, tl.tensor(a)).numpy() - np.log(q)) / slope
    assert (np.abs(error) <= 1e-13 * x.numpy()).all(), error


@pytest.mark.parametrize("a", [1e8, 1e10])
def test_gammainc_gradients_for_a_large_shape(a):
    # IgammaGradA's density x**(a - 1) e**-x / Gamma(a) in the textbook form lost a log x times float64's precision:
    # d/da log gammainc(1e10, 1e10 - 5e5) was 1.0e-5 relative off (-5.186678e-05 for -5.186625e-05, mpmath)
    x = a - np.array([5.0, 10.0, 30.0]) * math.sqrt(a)

    def f(x, a):
        return tl.log(tl.special.gammainc(a, x))

    gx, ga = tl.grad(lambda x, a: f(x, a).sum(), argnums=(0, 1))(tl.tensor(x), tl.tensor(np.float64(a)))
    h = 1e-3 * math.sqrt(a)
    by_a = [(f(xi, a + h).numpy() - f(xi, a - h).numpy()) / (2 * h) for xi in x]
    by_x = (f(x + h, a).numpy() - f(x - h, a).numpy()) / (2 * h)
    np.testing.assert_allclose(gx.numpy(), by_x, rtol=1e-8)
    np.testing.assert_allclose(float(ga), sum(by_a), rtol=1e-8)


# ------------------------------------------------------------------ multinomial with probabilities off the simplex
def _multinomial_logpmf_formula(x, n, p):
    return sp.gammaln(n + 1) - sp.gammaln(x + 1).sum(-1) + sp.xlogy(x, p).sum(-1)


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_multinomial_probabilities_normalized_in_float32_pass_and_others_are_nan(mode):
    x = np.array([1.0, 2.0, 3.0])
    logits = np.random.default_rng(7).normal(size=(6, 3)).astype(np.float32)
    softmax = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(np.float64)  # sums to 1 +- 5e-8
    assert np.abs(softmax.sum(-1) - 1).max() > 1e-8  # beyond sqrt(eps) of float64: was NaN
    off = np.array([[0.2, 0.3, 0.4], [0.5, 0.6, -0.1], [0.2, 0.3, 0.5 + 1e-3]])  # sums 0.9, a negative entry, 1.001
    p = np.concatenate([softmax, off, [[0.2, 0.3, 0.5]]])

    def both(x, p):
        return tl.stats.multinomial.logpmf(x, 6, p), tl.stats.multinomial.pmf(x, 6, p)

    logpmf, pmf = both(tl.tensor(x), tl.tensor(p)) if mode == "eager" else tl.function(both)(tl.tensor(x), tl.tensor(p))
    want = _multinomial_logpmf_formula(x, 6, p)
    want[6:9] = np.nan  # SciPy's value from 1.18 (1.17 adjusts the last entry and warns that it will be NaN)
    np.testing.assert_allclose(logpmf.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(pmf.numpy(), np.exp(want), rtol=1e-14)
    np.testing.assert_allclose(logpmf.numpy()[-1], ss.multinomial.logpmf(x, 6, [0.2, 0.3, 0.5]), rtol=1e-14)
    # float32 p: its own tolerance, the same as float32 dirichlet's
    got32 = tl.stats.multinomial.logpmf(tl.tensor(x.astype(np.float32)), 6, tl.tensor(p.astype(np.float32)))
    assert got32.dtype == np.float32 and np.isnan(got32.numpy()[6:9]).all() and np.isfinite(got32.numpy()[:6]).all()


# ------------------------------------------------------------------ vonmises.cdf and sf
VM_X = np.array([-3.1, -2.0, -1.0, -0.3, -1e-3, 0.0, 0.05, 0.3, 1.0, 2.5, math.pi, -math.pi])
VM_KAPPA = [0.0, 1e-3, 0.5, 2.0, 10.0, 30.0, 49.9, 50.0, 60.0, 200.0, 1e4]


def _vonmises_cdf_by_quadrature(x, kappa):
    """``int_-pi^x`` of SciPy's density (scipy.integrate.quad, split at the peak 0), for x in [-pi, pi]."""
    from scipy.integrate import quad

    def mass(lo, hi):
        return quad(lambda t: ss.vonmises.pdf(t, kappa), lo, hi, epsabs=1e-17, epsrel=1e-14, limit=200)[0]

    return mass(-math.pi, x) if x <= 0 else 1.0 - mass(-math.pi, -x)


@pytest.mark.parametrize("kappa", VM_KAPPA)
def test_vonmises_cdf_and_sf_match_quadrature_and_scipy(kappa):
    want = np.array([_vonmises_cdf_by_quadrature(x, kappa) for x in VM_X])
    x = tl.tensor(VM_X)
    cdf, sf = tl.stats.vonmises.cdf(x, kappa).numpy(), tl.stats.vonmises.sf(x, kappa).numpy()
    np.testing.assert_allclose(cdf, want, rtol=0, atol=2e-15)
    np.testing.assert_allclose(sf, np.array([_vonmises_cdf_by_quadrature(-v, kappa) for v in VM_X]), rtol=0, atol=2e-15)
    # SciPy: its series below kappa = 50 (1e-13 absolute off at 30), its normal approximation from 50 (3e-6 off)
    np.testing.assert_allclose(cdf, ss.vonmises.cdf(VM_X, kappa), rtol=0, atol=2e-13 if kappa < 50 else 3e-6)
    where = want > 1e-2  # relative accuracy in the bulk (below, a few ulps of 1 absolute)
    np.testing.assert_allclose(cdf[where], want[where], rtol=1e-13)


def test_vonmises_cdf_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    for kappa, x in ((0.5, -2.5), (10.0, -1.0), (49.9, 0.4), (50.0, -0.1), (1000.0, -0.1)):
        with mp.workdps(30):
            k = mp.mpf(kappa)

            def density(t, k=k):
                return mp.exp(k * (mp.cos(t) - 1)) / (2 * mp.pi * mp.besseli(0, k) * mp.exp(-k))

            points = [-mp.pi] + [mp.mpf(x) - mp.mpf(10) ** -j for j in range(8) if x - 10**-j > -math.pi] + [x]
            want = float(mp.quad(density, points))
        got = float(tl.stats.vonmises.cdf(tl.tensor(np.float64(x)), kappa))
        # within a few ulps of 1 absolute; relative too in the bulk (the series' tails keep it absolute only)
        assert abs(got - want) <= 2e-15 and (want < 1e-2 or abs(got - want) <= 1e-13 * want), (kappa, x, got, want)


def test_vonmises_cdf_counts_whole_turns_loc_scale_and_invalid_kappa_as_scipy():
    x = np.array([4.0, -4.0, 10.0, 3 * math.pi, -7.0, 20.0])
    for kappa in (1.0, 80.0):
        np.testing.assert_allclose(
            tl.stats.vonmises.cdf(tl.tensor(x), kappa).numpy(), ss.vonmises.cdf(x, kappa), atol=3e-6
        )
        np.testing.assert_allclose(
            tl.stats.vonmises.sf(tl.tensor(x), kappa).numpy(), ss.vonmises.sf(x, kappa), atol=3e-6
        )
    args = (tl.tensor(VM_X), 3.0, 0.4, 1.7)
    np.testing.assert_allclose(tl.stats.vonmises.cdf(*args).numpy(), ss.vonmises.cdf(VM_X, 3.0, 0.4, 1.7), atol=1e-13)
    # kappa = 0 is SciPy's uniform distribution on the circle (it was NaN); a negative or NaN kappa is NaN
    np.testing.assert_allclose(tl.stats.vonmises.logpdf(tl.tensor(VM_X), 0.0).numpy(), -math.log(2 * math.pi))
    np.testing.assert_allclose(tl.stats.vonmises.cdf(tl.tensor(VM_X), 0.0).numpy(), 0.5 + VM_X / (2 * math.pi))
    for bad in (-1.0, np.nan):
        for method in ("logpdf", "cdf", "sf", "logcdf", "logsf"):
            assert np.isnan(getattr(tl.stats.vonmises, method)(tl.tensor(VM_X), bad).numpy()).all(), method
    assert np.isnan(tl.stats.vonmises.cdf(tl.tensor(np.array([np.nan])), 2.0).numpy()).all()


@pytest.mark.parametrize("kappa", [0.0, 0.5, 10.0, 49.9, 50.0, 200.0])
def test_vonmises_cdf_gradients(kappa):
    x = tl.tensor(VM_X)
    k = tl.tensor(np.float64(kappa))
    gx, gk = tl.grad(lambda x, k: tl.stats.vonmises.cdf(x, k).sum(), argnums=(0, 1))(x, k)
    np.testing.assert_allclose(gx.numpy(), ss.vonmises.pdf(VM_X, kappa), rtol=1e-12, atol=1e-13)  # the density
    gs = tl.grad(lambda x: tl.stats.vonmises.sf(x, k).sum())(x)
    np.testing.assert_allclose(gs.numpy(), -ss.vonmises.pdf(VM_X, kappa), rtol=1e-12, atol=1e-13)
    second = tl.grad(tl.grad(lambda x: tl.stats.vonmises.cdf(x, k)))(tl.tensor(np.float64(0.3)))
    np.testing.assert_allclose(float(second), -kappa * math.sin(0.3) * ss.vonmises.pdf(0.3, kappa), rtol=1e-11)
    # in kappa: central differences of the quadrature (one-sided at kappa = 0)
    h = 1e-4 * max(kappa, 1.0)

    def total(kappa):
        return sum(_vonmises_cdf_by_quadrature(v, kappa) for v in VM_X)

    want = (total(kappa + h) - total(kappa)) / h if kappa == 0 else (total(kappa + h) - total(kappa - h)) / (2 * h)
    np.testing.assert_allclose(float(gk), want, rtol=1e-5 if kappa == 0 else 1e-7, atol=1e-12)


def test_vonmises_cdf_traced_vmapped_and_float32():
    f = lambda x: tl.stats.vonmises.cdf(x, 60.0) + tl.stats.vonmises.sf(x, 3.0)  # noqa: E731
    x = tl.tensor(VM_X)
    eager = f(x).numpy()
    np.testing.assert_array_equal(tl.function(f)(x).numpy(), eager)
    np.testing.assert_allclose(tl.vmap(f)(x).numpy(), eager, rtol=1e-15, atol=1e-16)
    x32 = VM_X.astype(np.float32)
    got = tl.stats.vonmises.cdf(tl.tensor(x32), np.float32(60.0))
    want = np.array([_vonmises_cdf_by_quadrature(float(v), 60.0) for v in np.clip(x32, -math.pi, math.pi)])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-7, atol=1e-30)


# ------------------------------------------------------------------ the newest families at their edges
def test_loggamma_distribution_functions_where_exp_z_underflows():
    # P(c, e**z) with e**z = 0: loggamma.cdf(-800, 0.001) was 0 for 0.4496 (SciPy), logsf(-800, 0.6) 0 for -3.9e-209
    z = np.array([-5000.0, -800.0, -701.0, -699.0, -3.0, 0.5])
    for c in (0.001, 0.6, 20.0):
        x = tl.tensor(z)
        log_p = c * z - sp.gammaln(c + 1)  # the leading term, exact to O(e**z)
        want_cdf = np.where(z < -600, np.exp(log_p), ss.loggamma.cdf(z, c))
        np.testing.assert_allclose(tl.stats.loggamma.cdf(x, c).numpy(), want_cdf, rtol=1e-13, atol=0)
        want_sf = np.where(z < -600, -np.expm1(log_p), ss.loggamma.sf(z, c))
        np.testing.assert_allclose(tl.stats.loggamma.sf(x, c).numpy(), want_sf, rtol=1e-13)
        want_logsf = np.where(z < -600, np.log1p(-np.exp(log_p)), ss.loggamma.logsf(z, c))
        np.testing.assert_allclose(tl.stats.loggamma.logsf(x, c).numpy(), want_logsf, rtol=1e-13, atol=0)
        np.testing.assert_allclose(
            tl.stats.loggamma.logcdf(x, c).numpy(), np.where(z < -600, log_p, ss.loggamma.logcdf(z, c)), rtol=1e-13
        )
        g = tl.grad(lambda x: tl.stats.loggamma.cdf(x, c).sum())(x).numpy()  # the density, c z - e**z - gammaln(c)
        np.testing.assert_allclose(g, np.exp(c * z - np.exp(z) - sp.gammaln(c)), rtol=1e-12, atol=0)


def test_f_survival_function_next_to_zero_with_a_small_dfn():
    # dfd / (dfn z + dfd) rounded to 1: f.sf(1e-20, 0.5, 0.5) was 1 for 0.99999460647398808 (SciPy; mpmath agrees)
    z = np.array([1e-300, 1e-20, 1e-10, 1e-3, 1.0, 1e3, 1e20, 1e300])
    for dfn, dfd in ((0.5, 0.5), (0.2, 3.0), (3.0, 0.2)):
        x = tl.tensor(z)
        np.testing.assert_allclose(tl.stats.f.sf(x, dfn, dfd).numpy(), ss.f.sf(z, dfn, dfd), rtol=1e-12)
        np.testing.assert_allclose(tl.stats.f.cdf(x, dfn, dfd).numpy(), ss.f.cdf(z, dfn, dfd), rtol=1e-12)
        g = tl.grad(lambda x: tl.stats.f.sf(x, dfn, dfd).sum())(x).numpy()
        np.testing.assert_allclose(g, -ss.f.pdf(z, dfn, dfd), rtol=1e-11)


def test_halfnorm_logsf_next_to_zero():
    # log_ndtr(-z) + log 2 rounded to 0: halfnorm.logsf(1e-20) was 0 for -7.98e-21 (-z sqrt(2 / pi), SciPy)
    z = np.array([0.0, 1e-300, 1e-20, 1e-8, 0.5, 0.999, 1.0, 1.001, 5.0, 30.0])
    np.testing.assert_allclose(tl.stats.halfnorm.logsf(tl.tensor(z)).numpy(), ss.halfnorm.logsf(z), rtol=1e-14)
    far = tl.stats.halfnorm.logsf(tl.tensor(np.array([40.0])), loc=0.0).numpy()  # SciPy's -inf: log 2 + log_ndtr(-40)
    np.testing.assert_allclose(far, math.log(2) + float(sp.log_ndtr(-40.0)), rtol=1e-14)
    g = tl.grad(lambda x: tl.stats.halfnorm.logsf(x).sum())(tl.tensor(z)).numpy()
    np.testing.assert_allclose(g, -ss.halfnorm.pdf(z) / ss.halfnorm.sf(z), rtol=1e-12)


NARROW = [(39.0, 40.0), (0.0, 1e-8), (3.0, 3.0001), (-40.0, -39.9999), (-1e-3, 1e-3), (10.0, 10.000001), (-2.0, 3.0)]


def _normal_mass_by_quadrature(lo, hi, centre):
    """``(Phi(hi) - Phi(lo)) e**(centre**2 / 2) sqrt(2 pi)``: scipy.integrate.quad of ``e**(-(t**2 - centre**2) / 2)``
    (relative accuracy for a narrow interval, and no underflow at 40); from the tails for a wide one."""
    from scipy.integrate import quad

    if hi - lo > 1.0:
        mass = ss.norm.sf(lo) - ss.norm.sf(hi) if lo >= 0 else ss.norm.cdf(hi) - ss.norm.cdf(lo)
        return mass * math.exp(0.5 * centre * centre) * math.sqrt(2 * math.pi)
    return quad(lambda t: math.exp(-0.5 * (t - centre) * (t + centre)), lo, hi, epsabs=0, epsrel=2e-14)[0]


@pytest.mark.parametrize(("a", "b"), NARROW)
def test_truncnorm_narrow_intervals_keep_their_digits(a, b):
    # log Phi(near) - log Phi(far) as a difference of logs kept 1e-16 |log Phi| / (b - a): truncnorm(0, 1e-8).sf at
    # b - 3e-17 was 0 for 2.98e-9, truncnorm(39, 40).cdf(39 + 1 ulp) 2.27e-13 for 2.77e-13 (SciPy is 18% off too)
    width = b - a
    x = np.unique(
        np.concatenate([[np.nextafter(a, b)], [a + width * f for f in (1e-6, 0.3, 0.5, 0.9)], [b - width * 3e-9]])
    )
    x = x[(x > a) & (x < b)]
    centre = min(abs(a), abs(b)) if a * b > 0 else 0.0
    total = _normal_mass_by_quadrature(a, b, centre)
    below = np.array([_normal_mass_by_quadrature(a, v, centre) for v in x]) / total
    above = np.array([_normal_mass_by_quadrature(v, b, centre) for v in x]) / total
    log_total = math.log(total) - 0.5 * centre * centre - 0.5 * math.log(2 * math.pi)
    t = tl.tensor(x)
    np.testing.assert_allclose(tl.stats.truncnorm.cdf(t, a, b).numpy(), below, rtol=1e-11)
    np.testing.assert_allclose(tl.stats.truncnorm.sf(t, a, b).numpy(), above, rtol=1e-11)
    log_below = np.where(below > 0.5, np.log1p(-above), np.log(below))  # the log of a value near 1 from the other
    log_above = np.where(above > 0.5, np.log1p(-below), np.log(above))
    np.testing.assert_allclose(tl.stats.truncnorm.logcdf(t, a, b).numpy(), log_below, rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(tl.stats.truncnorm.logsf(t, a, b).numpy(), log_above, rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(
        tl.stats.truncnorm.logpdf(t, a, b).numpy(), ss.norm.logpdf(x) - log_total, rtol=1e-12, atol=1e-12
    )
    g = tl.grad(lambda t: tl.stats.truncnorm.cdf(t, a, b).sum())(t).numpy()
    np.testing.assert_allclose(g, np.exp(ss.norm.logpdf(x) - log_total), rtol=1e-9)


@pytest.mark.parametrize(("a", "b"), [(0.0, 1e-8), (-1.0, 2.0), (39.0, 40.0), (1.0, 3.0), (-np.inf, 0.5)])
def test_truncnorm_gradients_at_the_ends_of_the_support(a, b):
    # the density there: exp(log mass) of a mass 0 met d log(mass) = inf (NaN at x = a and x = b)
    ends = np.array([a, b]) if np.isfinite(a) else np.array([b])
    x = tl.tensor(ends)
    if np.isfinite(a):
        centre = min(abs(a), abs(b)) if a * b > 0 else 0.0
        log_total = math.log(_normal_mass_by_quadrature(a, b, centre)) - 0.5 * centre**2 - 0.5 * math.log(2 * math.pi)
    else:
        log_total = ss.norm.logcdf(b)
    density = np.exp(ss.norm.logpdf(ends) - log_total)
    for method, sign in (("cdf", 1.0), ("sf", -1.0)):
        g = tl.grad(lambda x: getattr(tl.stats.truncnorm, method)(x, a, b).sum())(x).numpy()
        np.testing.assert_allclose(g, sign * density, rtol=1e-9, err_msg=method)
    np.testing.assert_array_equal(tl.stats.truncnorm.cdf(x, a, b).numpy(), [0.0, 1.0][-len(ends) :])


def test_f_with_an_infinite_df_is_nan_in_every_method_as_scipy():
    # cdf(0.3, inf, 7) and sf(0.3, 3, inf) were 1, logsf and logcdf -inf, the other methods NaN (SciPy: all NaN)
    x, q = np.array([0.3, 1.2, 2.5]), np.array([0.1, 0.5, 0.9])
    for dfn, dfd in ((np.inf, 7.0), (3.0, np.inf), (np.inf, np.inf)):
        for method in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"):
            arg = q if method in ("ppf", "isf") else x
            got = getattr(tl.stats.f, method)(tl.tensor(arg), dfn, dfd).numpy()
            assert np.isnan(got).all() and np.isnan(getattr(ss.f, method)(arg, dfn, dfd)).all(), (method, got)


@pytest.mark.parametrize("method", ["logcdf", "logsf"])
def test_f_log_tails_gradients_next_to_zero_with_a_small_dfn(method):
    # the branch not taken met 1 - x rounded to 1 (an infinite derivative for a shape below 1): NaN in x, dfn, dfd
    z = np.array([1e-300, 1e-30, 1e-17, 1e-10, 1e-3, 1e10])
    grads = tl.grad(lambda x, a, b: getattr(tl.stats.f, method)(x, a, b).sum(), argnums=(0, 1, 2))(
        tl.tensor(z), tl.tensor(np.float64(0.7)), tl.tensor(np.float64(1.3))
    )
    assert all(np.isfinite(g.numpy()).all() for g in grads)
    # in x: the density over the tail (SciPy's, where its tails are right)
    tail = ss.f.cdf(z, 0.7, 1.3) if method == "logcdf" else ss.f.sf(z, 0.7, 1.3)
    sign = 1.0 if method == "logcdf" else -1.0
    np.testing.assert_allclose(grads[0].numpy(), sign * ss.f.pdf(z, 0.7, 1.3) / tail, rtol=1e-9)
    # in dfn and dfd: central differences
    for i, (a, b) in enumerate([(0.7 + 1e-6, 1.3), (0.7, 1.3 + 1e-6)]):
        up = getattr(tl.stats.f, method)(tl.tensor(z), a, b).numpy().sum()
        down = getattr(tl.stats.f, method)(tl.tensor(z), *((0.7 - 1e-6, 1.3) if i == 0 else (0.7, 1.3 - 1e-6))).numpy()
        np.testing.assert_allclose(float(grads[i + 1]), (up - down.sum()) / 2e-6, rtol=1e-6)


def test_gradients_where_a_branch_not_taken_or_a_saturated_value_met_an_infinity():
    # each was NaN (0 * inf): the log of a tail through log1p(-complement) with the complement rounded to 1 (cauchy,
    # vonmises, halfnorm), exp(-exp(-z)) past exp's range (gumbel), IgammaGradA's density at x = 0 for a < 1 (gamma's
    # gradient in a off the support), truncnorm's log tails at the ends of the support
    def grad(f, *args):
        return [g.numpy() for g in tl.grad(f, argnums=tuple(range(len(args))))(*(tl.tensor(a) for a in args))]

    z = np.array([-1e300, -1e20, -1e5])
    (g,) = grad(lambda x: tl.stats.cauchy.logcdf(x).sum(), z)
    np.testing.assert_allclose(g, -1.0 / z, rtol=1e-9)  # pdf / cdf = 1 / (pi (1 + z**2) cdf), cdf ~ 1 / (pi |z|)
    (g,) = grad(lambda x: tl.stats.cauchy.logsf(x).sum(), -z)
    np.testing.assert_allclose(g, 1.0 / z, rtol=1e-9)
    for method in ("cdf", "sf", "logsf"):
        (g,) = grad(lambda x: getattr(tl.stats.gumbel_r, method)(x).sum(), np.array([-1e300, -1e5, -1000.0]))
        np.testing.assert_array_equal(g, 0.0)  # the density underflows to 0 there
        (g,) = grad(lambda x: getattr(tl.stats.gumbel_l, {"logsf": "logcdf"}.get(method, method))(x).sum(), 1000.0)
        assert g == 0.0
    ga = grad(lambda a: tl.stats.gamma.cdf(np.array([-5.0, -1e-8, 0.0]), a).sum(), np.float64(0.3))[0]
    assert ga == 0.0  # the CDF is 0 there for every a
    assert grad(lambda a: tl.special.gammainc(a, 0.0), np.float64(0.3))[0] == 0.0
    x = np.array([-1.0, -0.5])
    (g,) = grad(lambda x: tl.stats.vonmises.logcdf(x, 100.0).sum(), x)
    np.testing.assert_allclose(
        g, ss.vonmises.pdf(x, 100.0) / tl.stats.vonmises.cdf(tl.tensor(x), 100.0).numpy(), rtol=1e-6
    )
    (g,) = grad(lambda x: tl.stats.halfnorm.logcdf(x).sum(), np.array([1e-300, 1e-100]))
    np.testing.assert_allclose(g, [1e300, 1e100], rtol=1e-12)  # pdf / cdf = 1 / x next to 0
    mass = ss.norm.cdf(2.0) - ss.norm.cdf(-1.0)
    (g,) = grad(lambda x: tl.stats.truncnorm.logcdf(x, -1.0, 2.0), np.float64(2.0))
    np.testing.assert_allclose(g, ss.norm.pdf(2.0) / mass, rtol=1e-12)
    (g,) = grad(lambda x: tl.stats.truncnorm.logsf(x, -1.0, 2.0), np.float64(-1.0))
    np.testing.assert_allclose(g, -ss.norm.pdf(-1.0) / mass, rtol=1e-12)

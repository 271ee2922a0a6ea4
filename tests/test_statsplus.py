"""tl.stats, the distributions added in the statsplus round (gumbel_r, gumbel_l, lognorm, weibull_min, halfnorm,
rayleigh, invgamma, f, loggamma, truncnorm, vonmises.cdf) and the attack on the others' far tails and edges.

References: scipy.stats' float64 values where SciPy is accurate; closed forms and mpmath (importorskip) where SciPy
underflows or loses digits (far tails, quantiles of tiny probabilities); float64 central differences
(``check_grads``) for gradients in x, loc, scale and the shape parameters.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import tensorlib as tl
from tensorlib.testing import check_grads
from tests._helpers import assert_methods_match_scipy

RNG = np.random.default_rng(2026)
X = np.concatenate(
    [RNG.normal(size=20) * 3, RNG.uniform(0, 5, 12), [0.0, 1.0, -1e-300, 1e-300, 0.5, 30.0, -30.0, 1e-5, np.nan]]
)
Q = np.concatenate([RNG.uniform(size=16), [0.0, 1.0, 0.5, 1e-3, 0.999, -0.1, 1.1, np.nan]])
NEW = [
    ("gumbel_r", ()),
    ("gumbel_l", ()),
    ("lognorm", (0.7,)),
    ("lognorm", (2.5,)),
    ("weibull_min", (0.5,)),
    ("weibull_min", (1.0,)),
    ("weibull_min", (2.7,)),
    ("halfnorm", ()),
    ("rayleigh", ()),
    ("invgamma", (0.7,)),
    ("invgamma", (4.0,)),
    ("f", (3.0, 7.0)),
    ("f", (1.0, 2.0)),
    ("f", (2.0, 30.0)),
    ("loggamma", (0.6,)),
    ("loggamma", (20.0,)),
]
METHODS = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


@pytest.mark.parametrize(("name", "shapes"), NEW)
@pytest.mark.parametrize(("loc", "scale"), [(0.0, 1.0), (0.7, 2.5)])
def test_new_families_match_scipy(name, shapes, loc, scale):
    assert_methods_match_scipy(name, shapes, loc, scale, X, Q, rtol=1e-9)


@pytest.mark.parametrize(("name", "shapes"), NEW)
def test_new_families_off_the_support_invalid_parameters_and_infinities(name, shapes):
    dist = getattr(tl.stats, name)
    ends = tl.tensor(np.array([-np.inf, np.inf]))
    # the distribution functions' ends at +-inf (the formulas read inf - inf or inf / inf there)
    np.testing.assert_array_equal(dist.cdf(ends, *shapes).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(dist.sf(ends, *shapes).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(dist.logcdf(ends, *shapes).numpy(), [-np.inf, 0.0])
    np.testing.assert_array_equal(dist.logsf(ends, *shapes).numpy(), [0.0, -np.inf])
    x = tl.tensor(np.array([0.5, 2.0]))
    for method in METHODS:
        assert np.isnan(getattr(dist, method)(x, *shapes, scale=0.0).numpy()).all(), method
        assert np.isnan(getattr(dist, method)(x, *shapes, scale=-1.0).numpy()).all(), method
        for i in range(len(shapes)):
            bad = list(shapes)
            bad[i] = -1.0
            assert np.isnan(getattr(dist, method)(x, *bad).numpy()).all(), (method, i)
    assert dist.cdf(tl.tensor(np.float32(0.5)), *shapes).dtype == np.float32


@pytest.mark.parametrize(("name", "shapes"), NEW)
def test_new_families_gradients(name, shapes):
    dist = getattr(tl.stats, name)
    x = tl.tensor(RNG.uniform(0.6, 2.5, size=3))  # inside every support with loc 0.1 and scale 1.5
    args = (x, tl.tensor(0.1, "float64"), tl.tensor(1.5, "float64"), *(tl.tensor(s, "float64") for s in shapes))

    def call(method):
        return lambda x, loc, scale, *sh: getattr(dist, method)(x, *sh, loc, scale)

    for method in ("logpdf", "cdf", "sf", "logcdf", "logsf"):
        # the incomplete gamma and beta functions differentiate once in their shape parameters
        order = 1 if shapes and name in ("invgamma", "f", "loggamma") and method != "logpdf" else 2
        check_grads(call(method), args, order=order, rtol=1e-5, atol=1e-8)
    q = tl.tensor(RNG.uniform(0.05, 0.95, size=3))
    for method in ("ppf", "isf"):
        order = 1 if shapes and name in ("invgamma", "f", "loggamma") else 2
        check_grads(call(method), (q, *args[1:]), order=order, rtol=1e-5, atol=1e-8)
    g = tl.grad(lambda x: tl.sum(dist.cdf(x, *shapes)))(x)
    np.testing.assert_allclose(g.numpy(), getattr(ss, name).pdf(x.numpy(), *shapes), rtol=1e-10)


def test_new_families_far_tails_where_scipy_underflows_or_rounds():
    f64 = _f64
    # halfnorm: log sf = log 2 + log_ndtr(-z) (SciPy: -inf at 700); its quantile of a tiny q is q sqrt(pi / 2)
    np.testing.assert_allclose(
        tl.stats.halfnorm.logsf(f64([700.0])).numpy(), math.log(2) + ss.norm.logsf(700.0), rtol=1e-14
    )
    np.testing.assert_allclose(tl.stats.halfnorm.ppf(f64([1e-300])).numpy(), 1e-300 * math.sqrt(math.pi / 2))
    # gumbel: log cdf = -exp(-z) exactly, log sf of a large z = -z (1 - exp(-exp(-z)) ~ exp(-z))
    np.testing.assert_allclose(tl.stats.gumbel_r.logcdf(f64([-5.0])).numpy(), -math.exp(5.0), rtol=1e-15)
    np.testing.assert_allclose(tl.stats.gumbel_r.logsf(f64([800.0])).numpy(), -800.0, rtol=1e-15)
    np.testing.assert_allclose(tl.stats.gumbel_l.logcdf(f64([-800.0])).numpy(), -800.0, rtol=1e-15)
    # weibull_min and rayleigh: log sf = -z**c, -z**2 / 2 (SciPy: -inf)
    np.testing.assert_allclose(tl.stats.weibull_min.logsf(f64([100.0]), 2.0).numpy(), -1e4, rtol=1e-15)
    np.testing.assert_allclose(tl.stats.rayleigh.logsf(f64([100.0])).numpy(), -5e3, rtol=1e-15)
    # f: F(1, 2)'s sf is 1 - sqrt(x / (x + 2)) (I_y(1, 1/2) = 1 - sqrt(1 - y)), so isf(q) = 2 (1 - q)**2 / (q (2 - q))
    q = 1e-10
    exact = 2 * (1 - q) ** 2 / (q * (2 - q))
    np.testing.assert_allclose(tl.stats.f.isf(f64([q]), 1.0, 2.0).numpy(), exact, rtol=1e-12)
    np.testing.assert_allclose(tl.stats.f.sf(f64([exact]), 1.0, 2.0).numpy(), q, rtol=1e-12)
    # loggamma: P(c, y) = y**c / Gamma(c + 1) (1 - O(y)): ppf(q) = (log q + gammaln(c + 1)) / c (SciPy: -inf)
    c = 0.6
    np.testing.assert_allclose(
        tl.stats.loggamma.ppf(f64([1e-300]), c).numpy(), (math.log(1e-300) + math.lgamma(c + 1)) / c, rtol=1e-14
    )
    np.testing.assert_allclose(
        tl.stats.loggamma.logpdf(f64([-800.0, 1e5]), c).numpy(), [-800 * c - math.lgamma(c), -np.inf], rtol=1e-14
    )


def test_new_families_against_mpmath_in_the_tails():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40

    def f_sf(x, m, n):
        return mp.betainc(mp.mpf(n) / 2, mp.mpf(m) / 2, 0, mp.mpf(n) / (m * x + n), regularized=True)

    for m, n, q in [(3.0, 7.0, 1e-10), (2.0, 30.0, 1e-10), (3.0, 7.0, 1e-200)]:
        got = float(tl.stats.f.isf(tl.tensor(q, "float64"), m, n))
        assert float(abs(f_sf(got, m, n) / q - 1)) < 1e-11, (m, n, q)
    c = 3.0
    want = mp.findroot(lambda t: mp.gammainc(c, 0, mp.exp(t), regularized=True) - mp.mpf(1e-300), -229.0)
    np.testing.assert_allclose(float(tl.stats.loggamma.ppf(tl.tensor(1e-300, "float64"), c)), float(want), rtol=1e-14)


def test_new_families_traced_equals_eager_and_vmap():
    x = tl.tensor(RNG.uniform(0.2, 3.0, size=(3, 4)))
    s = tl.tensor(np.array([0.5, 1.0, 2.0]))

    def fn(x, s):
        return (
            tl.stats.lognorm.logcdf(x, s[:, None])
            + tl.stats.f.logpdf(x, 3.0, s[:, None] + 1)
            + (tl.stats.weibull_min.sf(x, s[:, None]))
        )

    np.testing.assert_allclose(tl.function(fn)(x, s).numpy(), fn(x, s).numpy(), rtol=1e-14)
    per_row = tl.vmap(lambda row, si: tl.stats.invgamma.logsf(row, si))(x, s)
    np.testing.assert_allclose(per_row.numpy(), ss.invgamma.logsf(x.numpy(), s.numpy()[:, None]), rtol=1e-12)


def test_log_cdfs_next_to_zero_where_the_power_underflows():
    # log(1 - exp(-z**c)) = c log z - z**c / 2 + ... for z**c below 1e-300 (log1mexp of an underflowed 0 was -inf)
    z = tl.tensor(np.array([1e-200, 1e-30]))
    np.testing.assert_allclose(tl.stats.weibull_min.logcdf(z, 2.0).numpy(), 2 * np.log([1e-200, 1e-30]), rtol=1e-15)
    np.testing.assert_allclose(
        tl.stats.rayleigh.logcdf(z).numpy(), 2 * np.log([1e-200, 1e-30]) - math.log(2), rtol=1e-15
    )
    np.testing.assert_allclose(tl.stats.gumbel_l.logcdf(tl.tensor(np.array([-800.0]))).numpy(), [-800.0], rtol=1e-15)
    g = tl.grad(lambda z: tl.sum(tl.stats.weibull_min.logcdf(z, 2.0)))(z).numpy()
    np.testing.assert_allclose(g, 2 / z.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- log tails where the tail underflows
def _f64(v):
    return tl.tensor(np.asarray(v, np.float64))


def _log_sum(log_terms):
    return float(sp.logsumexp(log_terms))


def _gamma_log_q_asymptotic(a, x, terms=8):
    """log Q(a, x) for x >> a: (a - 1) log x - x - gammaln(a) + log(1 + (a - 1) / x + (a - 1)(a - 2) / x**2 + ...)."""
    series, term = 1.0, 1.0
    for j in range(1, terms):
        term *= (a - j) / x
        series += term
    return (a - 1) * math.log(x) - x - math.lgamma(a) + math.log(series)


def test_log_tails_where_the_tail_underflows_against_closed_forms():
    # Each was -inf (the log of an underflowed tail); the values are the tails' leading terms and exact sums.
    cases = [
        (tl.stats.gamma.logsf(_f64(800.0), 2.5), _gamma_log_q_asymptotic(2.5, 800.0)),  # the lead's -783.7 case
        (tl.stats.gamma.logsf(_f64(900.0), 2.0), -900.0 + math.log1p(900.0)),  # Q(2, x) = e**-x (1 + x)
        (tl.stats.gamma.logcdf(_f64(1e-300), 2.5), 2.5 * math.log(1e-300) - math.lgamma(3.5)),
        (tl.stats.chi2.logsf(_f64(3000.0), 4.0), -1500.0 + math.log1p(1500.0)),
        (tl.stats.chi2.logcdf(_f64(1e-300), 3.0), 1.5 * math.log(0.5e-300) - math.lgamma(2.5)),
        (tl.stats.invgamma.logcdf(_f64(1e-5), 0.7), _gamma_log_q_asymptotic(0.7, 1e5)),
        (tl.stats.loggamma.logcdf(_f64(-700.0), 20.0), -14000.0 - math.lgamma(21.0)),
        (tl.stats.loggamma.logsf(_f64(30.0), 0.6), _gamma_log_q_asymptotic(0.6, math.exp(30.0)) + 30.0 * 0.0),
        (tl.stats.gennorm.logsf(_f64(100.0), 2.0), float(sp.log_ndtr(-100.0 * math.sqrt(2.0)))),  # N(0, 1/2)
        (tl.stats.gennorm.logcdf(_f64(-100.0), 2.0), float(sp.log_ndtr(-100.0 * math.sqrt(2.0)))),
        # t: the tail's leading term (df / z**2)**(df / 2) / (df B(df / 2, 1 / 2)), corrections O(df / z**2)
        (
            tl.stats.t.logsf(_f64(1e100), 5.0),
            2.5 * math.log(5.0) - 5 * math.log(1e100) - math.log(5) - sp.betaln(2.5, 0.5),
        ),
        (
            tl.stats.t.logcdf(_f64(-1e100), 5.0),
            2.5 * math.log(5.0) - 5 * math.log(1e100) - math.log(5) - sp.betaln(2.5, 0.5),
        ),
        # beta: I_x(a, b) = x**a / (a B(a, b)) (1 + O(x)); the upper tail from 1 - x
        (tl.stats.beta.logcdf(_f64(1e-200), 3.0, 2.0), 3 * math.log(1e-200) + math.log(4.0)),
        (
            tl.stats.beta.logsf(_f64(1 - 2.0**-50), 2.0, 300.0),
            300 * math.log(2.0**-50) - math.log(300) - sp.betaln(300, 2),
        ),
        (tl.stats.f.logcdf(_f64(1e-300), 3.0, 7.0), 1.5 * math.log(3e-300 / 7) - math.log(1.5) - sp.betaln(1.5, 3.5)),
        # counts: the exact sums of the probabilities past k, in logs
        (tl.stats.geom.logsf(_f64(1e4), 0.5), 1e4 * math.log(0.5)),
        (tl.stats.poisson.logsf(_f64(1000.0), 2.0), _log_sum(ss.poisson.logpmf(np.arange(1001, 1200), 2.0))),
        (tl.stats.poisson.logcdf(_f64(3.0), 2000.0), _log_sum(ss.poisson.logpmf(np.arange(0, 4), 2000.0))),
        (tl.stats.binom.logsf(_f64(900.0), 1000, 0.1), _log_sum(ss.binom.logpmf(np.arange(901, 1001), 1000, 0.1))),
        (tl.stats.binom.logcdf(_f64(10.0), 1000, 0.9), _log_sum(ss.binom.logpmf(np.arange(0, 11), 1000, 0.9))),
        (tl.stats.nbinom.logsf(_f64(5000.0), 3.0, 0.5), _log_sum(ss.nbinom.logpmf(np.arange(5001, 7000), 3.0, 0.5))),
        (tl.stats.nbinom.logcdf(_f64(2.0), 3000.0, 0.01), _log_sum(ss.nbinom.logpmf(np.arange(0, 3), 3000.0, 0.01))),
    ]
    for i, (got, want) in enumerate(cases):
        assert want < -690, (i, want)  # where the tail itself underflows
        np.testing.assert_allclose(float(got), want, rtol=1e-12, err_msg=str(i))


def test_log_tail_gradients_where_the_tail_underflows():
    # d/dx log Q(2, x) = -1 + 1 / (1 + x); d/dx log P(a, x) ~ a / x; t: -df / z
    g = tl.grad(lambda x: tl.stats.gamma.logsf(x, 2.0))(_f64(900.0))
    np.testing.assert_allclose(float(g), -1 + 1 / 901, rtol=1e-13)
    g = tl.grad(lambda x: tl.stats.gamma.logcdf(x, 2.5))(_f64(1e-300))
    np.testing.assert_allclose(float(g), 2.5 / 1e-300, rtol=1e-13)
    g = tl.grad(lambda x: tl.stats.t.logsf(x, 5.0))(_f64(1e100))
    np.testing.assert_allclose(float(g), -5.0 / 1e100, rtol=1e-12)
    # the shape parameters, against float64 central differences of the closed form (a = 2.5 at x = 800)
    h = 1e-6
    want = (_gamma_log_q_asymptotic(2.5 + h, 800.0) - _gamma_log_q_asymptotic(2.5 - h, 800.0)) / (2 * h)
    np.testing.assert_allclose(
        float(tl.grad(lambda a: tl.stats.gamma.logsf(_f64(800.0), a))(_f64(2.5))), want, rtol=1e-8
    )
    # every argument, by check_grads: second order in x, first in the shapes
    check_grads(lambda x: tl.stats.gamma.logsf(x, 2.5, scale=1.5), (_f64([900.0, 1500.0]),), order=2)
    check_grads(lambda x, a: tl.stats.gamma.logsf(x, a), (_f64([900.0, 1500.0]), _f64(2.5)), order=1)
    check_grads(lambda x, a: tl.stats.gamma.logcdf(x, a), (_f64([1e-3, 2.0]), _f64(500.0)), order=1)
    check_grads(lambda x, a, b: tl.stats.beta.logcdf(x, a, b), (_f64([2e-4, 5e-4]), _f64(100.0), _f64(3.0)), order=1)
    # a step of 1e-8: the log tail changes on the scale 1 - x = 1e-4, where steps of 1e-6 are 1e-4 relative off
    check_grads(
        lambda x, a, b: tl.stats.beta.logsf(x, a, b),
        (_f64([0.999, 0.9999]), _f64(3.0), _f64(200.0)),
        order=1,
        eps=1e-8,
    )
    check_grads(lambda x: tl.stats.beta.logcdf(x, 100.0, 3.0), (_f64([2e-4, 5e-4]),), order=2)
    check_grads(lambda x, df: tl.stats.t.logsf(x, df), (_f64([1e60, 1e90]), _f64(5.0)), order=1)
    check_grads(lambda mu: tl.stats.poisson.logsf(_f64([1000.0]), mu), (_f64(2.0),), order=1)
    check_grads(lambda p: tl.stats.binom.logsf(_f64([900.0]), 1000, p), (_f64(0.1),), order=1)


def test_log_tails_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    for a, x in [(2.5, 800.0), (100.0, 2000.0), (0.1, 1000.0), (30.0, 1e4)]:
        want = float(mp.log(mp.gammainc(a, x, mp.inf, regularized=True)))
        np.testing.assert_allclose(float(tl.stats.gamma.logsf(_f64(x), a)), want, rtol=1e-14)
    for a, x in [(1000.0, 100.0), (1e4, 6200.0), (50.0, 1e-10)]:
        want = float(mp.log(mp.gammainc(a, 0, x, regularized=True)))
        np.testing.assert_allclose(float(tl.stats.gamma.logcdf(_f64(x), a)), want, rtol=1e-14)
    for a, b, x in [(3.0, 2.0, 1e-200), (2.5, 0.5, 1e-250), (50.0, 60.0, 1e-10)]:
        want = float(mp.log(mp.betainc(a, b, 0, x, regularized=True)))
        np.testing.assert_allclose(float(tl.stats.beta.logcdf(_f64(x), a, b)), want, rtol=1e-14)
    for df, z in [(5.0, 1e100), (0.7, 1e300), (30.0, 1e12)]:
        want = float(mp.log(mp.betainc(df / 2, 0.5, 0, df / (df + mp.mpf(z) ** 2), regularized=True) / 2))
        np.testing.assert_allclose(float(tl.stats.t.logsf(_f64(z), df)), want, rtol=1e-13)


def test_log_tails_traced_equal_eager():
    x = _f64([1e-3, 5.0, 900.0])

    def fn(x):
        return tl.stats.gamma.logsf(x, 2.5) + tl.stats.chi2.logcdf(x, 3.0) + tl.stats.t.logsf(x * 1e90, 4.0)

    np.testing.assert_array_equal(tl.function(fn)(x).numpy(), fn(x).numpy())


def _t_leading_quantile(q, df):
    """The lower tail's leading term inverted: P(T <= x) ~ C |x|**-df, C = df**(df / 2) / (df B(df / 2, 1 / 2))."""
    log_c = 0.5 * df * math.log(df) - math.log(df) - sp.betaln(0.5 * df, 0.5)
    return -math.exp((log_c - math.log(q)) / df)


@pytest.mark.parametrize("df", [1.0, 2.0, 3.0, 30.0])
def test_t_ppf_gradient_far_in_the_tail_is_one_over_the_density(df):
    # The gradient in q was NaN from q ~ 1e-100 (df = 3): an inversion whose result was not used had an infinite
    # derivative, times 0; at df = 1 the chain through x overflowed (inf for 1e249).
    for q in [1e-60, 1e-100, 1e-125, 1e-130, 1e-200, 1e-300]:
        x = float(tl.stats.t.ppf(_f64(q), df))
        if df < 30:  # the leading term is exact to O(x**-2) relative there
            np.testing.assert_allclose(x, _t_leading_quantile(q, df), rtol=1e-13)
        g = float(tl.grad(lambda q: tl.stats.t.ppf(q, df))(_f64(q)))
        log_want = -float(ss.t.logpdf(x, df))  # dx/dq = 1 / pdf(x); inf where that overflows
        if log_want < 700:
            np.testing.assert_allclose(math.log(g), log_want, rtol=1e-12)
        else:
            assert g == math.inf, (q, g)
    # in df, against central differences of the leading term inverted (q = 1e-100)
    h = 1e-6 * df
    want = (_t_leading_quantile(1e-100, df + h) - _t_leading_quantile(1e-100, df - h)) / (2 * h)
    if df < 30:
        got = float(tl.grad(lambda d: tl.stats.t.ppf(_f64(1e-100), d))(_f64(df)))
        np.testing.assert_allclose(got, want, rtol=1e-7)


# ---------------------------------------------------------------- truncnorm
TRUNCATIONS = [(-1.0, 2.0), (0.0, 1.0), (-3.0, -1.0), (2.0, 30.0), (-np.inf, 0.5), (1.0, np.inf), (-0.5, 0.3)]


@pytest.mark.parametrize(("a", "b"), TRUNCATIONS)
def test_truncnorm_matches_scipy(a, b):
    lo, hi = max(a, -6.0), min(b, 6.0)
    x = np.concatenate([RNG.uniform(lo - 1, hi + 1, 16), [lo, hi, np.nan]])
    q = np.concatenate([RNG.uniform(0.01, 0.99, 8), [0.0, 1.0, 0.5, -0.1, np.nan]])
    for loc, scale in [(0.0, 1.0), (0.5, 2.0)]:
        for method in METHODS:
            arg = q if method in ("ppf", "isf") else x * scale + loc
            got = getattr(tl.stats.truncnorm, method)(tl.tensor(arg), a, b, loc, scale).numpy()
            want = getattr(ss.truncnorm, method)(arg, a, b, loc, scale)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300, err_msg=method)


def test_truncnorm_far_in_the_tails():
    # a = 40, b = 41: Phi(a) rounds to 1, Phi(-a) underflows; the tail-symmetric log form keeps every digit
    a, b = 40.0, 41.0
    log_mass = sp.log_ndtr(-a) + np.log(-np.expm1(sp.log_ndtr(-b) - sp.log_ndtr(-a)))
    x = np.array([40.01, 40.5, 40.99])
    np.testing.assert_allclose(
        tl.stats.truncnorm.logpdf(_f64(x), a, b).numpy(), ss.norm.logpdf(x) - log_mass, rtol=1e-13
    )
    q = np.array([2.0**-33, 0.25, 0.75, 1 - 2.0**-40])  # 1 - q exact
    for lo, hi in [(10.0, 11.0), (40.0, 41.0), (-41.0, -40.0)]:
        z = tl.stats.truncnorm.ppf(_f64(q), lo, hi)
        assert ((z.numpy() >= lo) & (z.numpy() <= hi)).all()
        # to z's rounding: cdf'(z) ulp(z) is about 3e-13 at 40
        np.testing.assert_allclose(tl.stats.truncnorm.cdf(z, lo, hi).numpy(), q, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tl.stats.truncnorm.isf(_f64(1 - q), lo, hi).numpy(), z.numpy(), rtol=1e-13)
    # ppf next to q = 0 with a = 0: z = sqrt(2) erfinv(2 q Z), relative (SciPy's is 5e-8 off at q = 1e-10)
    z0 = float(tl.stats.truncnorm.ppf(_f64(1e-10), 0.0, 1.0))
    np.testing.assert_allclose(z0, math.sqrt(2) * sp.erfinv(2e-10 * (ss.norm.cdf(1.0) - 0.5)), rtol=1e-14)
    # ends, invalid parameters
    np.testing.assert_array_equal(tl.stats.truncnorm.ppf(_f64([0.0, 1.0]), -np.inf, 0.5).numpy(), [-np.inf, 0.5])
    for bad in [{"a": 1.0, "b": 1.0}, {"a": 2.0, "b": 1.0}, {"a": 0.0, "b": 1.0, "scale": 0.0}]:
        assert np.isnan(tl.stats.truncnorm.logpdf(_f64([0.5]), **bad).numpy()).all()


def test_truncnorm_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    for a, b in [(10.0, 11.0), (40.0, 41.0)]:
        mass = mp.ncdf(-a) - mp.ncdf(-b)
        x = np.array([a + 0.01, (a + b) / 2, b - 0.01])
        want = {
            "logpdf": [mp.log(mp.npdf(v) / mass) for v in x],
            "logcdf": [mp.log((mp.ncdf(-a) - mp.ncdf(-v)) / mass) for v in x],
            "logsf": [mp.log((mp.ncdf(-v) - mp.ncdf(-b)) / mass) for v in x],
        }
        for method, values in want.items():
            got = getattr(tl.stats.truncnorm, method)(_f64(x), a, b).numpy()
            np.testing.assert_allclose(got, [float(v) for v in values], rtol=3e-13, err_msg=method)


def test_truncnorm_gradients():
    args = (_f64([0.3, 1.2]), _f64(0.1), _f64(1.5), _f64(-0.5), _f64(1.7))
    for method in ("logpdf", "cdf", "sf", "logcdf", "logsf"):
        check_grads(
            lambda x, loc, scale, a, b, m=method: getattr(tl.stats.truncnorm, m)(x, a, b, loc, scale), args, order=2
        )
    for method in ("ppf", "isf"):
        check_grads(
            lambda q, loc, scale, a, b, m=method: getattr(tl.stats.truncnorm, m)(q, a, b, loc, scale),
            (_f64([0.2, 0.7]), *args[1:]),
            order=2,
        )
    check_grads(
        lambda x, a, b: tl.stats.truncnorm.logcdf(x, a, b), (_f64([10.3, 10.6]), _f64(10.0), _f64(11.0)), order=2
    )
    check_grads(lambda q, a, b: tl.stats.truncnorm.ppf(q, a, b), (_f64([0.3, 0.6]), _f64(10.0), _f64(11.0)), order=2)
    g = tl.grad(lambda x: tl.sum(tl.stats.truncnorm.cdf(x, -1.0, 2.0)))(_f64([0.3, 1.2]))
    np.testing.assert_allclose(g.numpy(), ss.truncnorm.pdf([0.3, 1.2], -1.0, 2.0), rtol=1e-13)

"""tl.stats' closed-form families (uniform, expon, laplace, logistic, cauchy, chi2): every method against SciPy on
random and edge inputs (off the support, the ends, NaN, inf, invalid scales), the tails against closed forms where
SciPy underflows, SciPy's calling conventions (loc and scale by position), and gradients in x, loc, scale and the
shape parameters against float64 finite differences (check_grads)."""

import math

import numpy as np
import pytest
import scipy.stats as ss

import tensorlib as tl
from tensorlib.testing import check_grads
from tests._helpers import assert_methods_match_scipy, unless_underflowed

RNG = np.random.default_rng(11)
X = np.concatenate(
    [RNG.normal(size=30) * 3, [0.0, 1.0, -1e-300, 1e-300, 0.5, 30.0, -30.0, 700.0, -700.0, np.inf, -np.inf, np.nan]]
)
Q = np.concatenate([RNG.uniform(size=20), [0.0, 1.0, 1e-300, 1 - 1e-16, 0.5, -0.1, 1.1, np.nan]])
FAMILIES = [
    ("uniform", ()),
    ("expon", ()),
    ("laplace", ()),
    ("logistic", ()),
    ("cauchy", ()),
    ("chi2", (3.0,)),
    ("chi2", (0.5,)),
    ("pareto", (2.5,)),
    ("pareto", (0.5,)),
    ("gennorm", (1.5,)),
    ("gennorm", (0.5,)),
]
METHODS = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


@pytest.mark.parametrize(("name", "shapes"), FAMILIES)
@pytest.mark.parametrize(("loc", "scale"), [(0.0, 1.0), (0.7, 2.5)])
def test_every_method_matches_scipy(name, shapes, loc, scale):
    assert_methods_match_scipy(name, shapes, loc, scale, X, Q, rtol=1e-12)


def test_tails_where_scipy_underflows():
    # SciPy's laplace.logpdf and logsf are log(pdf) and log(sf): -inf at 1e10; the values are -1e10 - log 2
    z = np.array([1e10, 1e300])
    np.testing.assert_allclose(tl.stats.laplace.logpdf(tl.tensor(z)).numpy(), -z - math.log(2.0), rtol=1e-15)
    np.testing.assert_allclose(tl.stats.laplace.logsf(tl.tensor(z)).numpy(), -z - math.log(2.0), rtol=1e-15)
    np.testing.assert_allclose(tl.stats.expon.logsf(tl.tensor(z)).numpy(), -z, rtol=1e-15)
    np.testing.assert_allclose(tl.stats.logistic.logsf(tl.tensor(z)).numpy(), -z, rtol=1e-15)
    # Cauchy: the left tail without cancellation, and its quantiles next to the poles
    np.testing.assert_allclose(
        tl.stats.cauchy.cdf(tl.tensor(-1e12, "float64")).numpy(), 1 / (math.pi * 1e12), rtol=1e-12
    )
    np.testing.assert_allclose(
        tl.stats.cauchy.ppf(tl.tensor(1e-20, "float64")).numpy(), -1 / (math.pi * 1e-20), rtol=1e-12
    )
    np.testing.assert_allclose(
        tl.stats.cauchy.isf(tl.tensor(1e-20, "float64")).numpy(), 1 / (math.pi * 1e-20), rtol=1e-12
    )
    assert float(tl.stats.cauchy.ppf(tl.tensor(0.5, "float64"))) == 0.0
    # the gradient far in a tail is finite (the side not taken overflowed: 0 * inf = NaN)
    far = tl.tensor(np.array([-800.0, 800.0]))
    for method in ("cdf", "sf", "logcdf", "logsf"):
        g = tl.grad(lambda x, m=method: tl.sum(getattr(tl.stats.laplace, m)(x)))(far).numpy()
        assert np.isfinite(g).all(), (method, g)


def test_scipy_calling_conventions_and_clear_errors():
    x = tl.tensor(np.array([0.3, 2.0]))
    np.testing.assert_allclose(tl.stats.expon.cdf(x, 0.1, 2.0).numpy(), ss.expon.cdf([0.3, 2.0], 0.1, 2.0), rtol=1e-15)
    np.testing.assert_allclose(
        tl.stats.chi2.sf(x, df=4.0, scale=2.0).numpy(), ss.chi2.sf([0.3, 2.0], df=4.0, scale=2.0), rtol=1e-14
    )
    with pytest.raises(TypeError, match=r"expon.cdf: takes x and at most 2 more \(loc, scale\), got 3"):
        tl.stats.expon.cdf(x, 0.0, 1.0, 5.0)
    with pytest.raises(TypeError, match=r"chi2.cdf: missing the shape parameter\(s\) \['df'\]"):
        tl.stats.chi2.cdf(x)
    with pytest.raises(TypeError, match=r"laplace.pdf: argument 'scale' twice"):
        tl.stats.laplace.pdf(x, 0.0, 1.0, scale=2.0)
    with pytest.raises(TypeError, match=r"cauchy.ppf: argument 'df' unexpected"):
        tl.stats.cauchy.ppf(x, df=1.0)
    bad = tl.stats.chi2.logpdf(tl.tensor(np.array([1.0, 1.0])), tl.tensor(np.array([-1.0, 2.0])), scale=-1.0)
    assert np.isnan(bad.numpy()).all()
    assert tl.stats.logistic.cdf(tl.tensor(np.float32(0.5))).dtype == np.float32


@pytest.mark.parametrize("name", ["expon", "laplace", "logistic", "cauchy", "uniform"])
def test_gradients_in_x_loc_scale(name):
    dist = getattr(tl.stats, name)
    x = tl.tensor(RNG.uniform(0.6, 2.5, size=4))  # inside every support with loc 0.1 and scale 3
    for method in ("logpdf", "cdf", "sf", "logcdf", "logsf"):
        check_grads(
            lambda x, loc, scale, m=method: getattr(dist, m)(x, loc, scale), (x, tl.tensor(0.1), tl.tensor(3.0))
        )
    q = tl.tensor(RNG.uniform(0.05, 0.95, size=4))
    check_grads(lambda q, loc, scale: dist.ppf(q, loc, scale), (q, tl.tensor(0.1), tl.tensor(3.0)))


def test_chi2_gradients_in_df_and_density():
    x = tl.tensor(RNG.uniform(0.5, 6, size=4))
    check_grads(lambda x, df: tl.stats.chi2.cdf(x, df), (x, tl.tensor(3.5)), order=1)
    check_grads(lambda x, df: tl.stats.chi2.logpdf(x, df), (x, tl.tensor(3.5)), order=2)
    g = tl.grad(lambda x: tl.sum(tl.stats.chi2.cdf(x, 5.0)))(x)
    np.testing.assert_allclose(g.numpy(), ss.chi2.pdf(x.numpy(), 5.0), rtol=1e-12)


def test_traced_equals_eager():
    x = tl.tensor(RNG.normal(size=5))
    f = tl.function(lambda x: (tl.stats.laplace.logcdf(x, 0.2, 1.5), tl.stats.cauchy.sf(x), tl.stats.expon.pdf(x)))
    for got, want in zip(f(x), (tl.stats.laplace.logcdf(x, 0.2, 1.5), tl.stats.cauchy.sf(x), tl.stats.expon.pdf(x))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 2.5, 20.0, 1000.0, np.inf, -np.inf, np.nan])
COUNTS = [
    ("binom", (10, 0.3)),
    ("binom", (10, 0.0)),
    ("binom", (10, 1.0)),
    ("binom", (0, 0.3)),
    ("bernoulli", (0.3,)),
    ("bernoulli", (1.0,)),
    ("geom", (0.2,)),
    ("geom", (1.0,)),
    ("nbinom", (3.5, 0.4)),
    ("nbinom", (1.0, 0.999)),
]


@pytest.mark.parametrize(("name", "shapes"), COUNTS)
@pytest.mark.parametrize("loc", [0.0, 2.0])
def test_count_distributions_match_scipy(name, shapes, loc):
    ours, theirs = getattr(tl.stats, name), getattr(ss, name)
    for method in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"):
        got = getattr(ours, method)(tl.tensor(K), *shapes, loc).numpy()
        # SciPy's logcdf/logsf are log(cdf): 0 where the value is log1p(-1e-97) (checked exactly below)
        atol = 1e-90 if method.startswith("logs") or method == "logcdf" else 1e-300
        want = unless_underflowed(method, got, getattr(theirs, method)(K, *shapes, loc))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=atol)


def test_log_tails_near_one_keep_their_digits():
    assert float(tl.stats.geom.logcdf(tl.tensor(1000.0, "float64"), 0.2)) == pytest.approx(math.log1p(-(0.8**1000)))
    assert float(tl.stats.geom.logcdf(tl.tensor(1000.0, "float64"), 0.2)) < 0
    want = math.log1p(-(0.5**30))  # binom(30, 1/2).logsf(-0.5): P(K > 0) = 1 - 2**-30
    assert float(tl.stats.binom.logsf(tl.tensor(0.0, "float64"), 30, 0.5)) == pytest.approx(want, rel=1e-14)


def test_count_distributions_invalid_parameters_are_nan():
    k = tl.tensor(np.array([0.0, 3.0]))
    for values in (tl.stats.binom.pmf(k, 10.5, 0.3), tl.stats.binom.cdf(k, 10, 1.5), tl.stats.geom.sf(k, 0.0)):
        assert np.isnan(values.numpy()).all()
    assert np.isnan(tl.stats.nbinom.logpmf(k, -1.0, 0.5).numpy()).all()


def test_binomial_probabilities_of_large_counts_against_mpmath():
    # Loader's saddle-point form: 1e-16 relative where SciPy's binom.logpmf(1000, 1e6, 1e-3) is 2e-10 off
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    n, p = 10**6, mpmath.mpf("0.001")
    k = np.array([500.0, 900.0, 1000.0, 1100.0, 2000.0])
    got = tl.stats.binom.logpmf(tl.tensor(k), 1e6, 0.001).numpy()
    for g, kk in zip(got, k.astype(int)):
        exact = mpmath.log(mpmath.binomial(n, kk)) + kk * mpmath.log(p) + (n - kk) * mpmath.log(1 - p)
        assert abs(g - float(exact)) <= 1e-14 * abs(float(exact))
    size, q = 10**5, mpmath.mpf("0.99")
    for kk in (0, 500, 1010):
        exact = mpmath.log(mpmath.binomial(size + kk - 1, kk)) + size * mpmath.log(q) + kk * mpmath.log(1 - q)
        got = float(tl.stats.nbinom.logpmf(tl.tensor(float(kk), "float64"), 1e5, 0.99))
        assert abs(got - float(exact)) <= 1e-14 * abs(float(exact))


def test_binomial_logpmf_without_mpmath_sums_to_one_and_matches_the_product_formula():
    n, p = 60, 0.37
    k = np.arange(n + 1.0)
    logp = tl.stats.binom.logpmf(tl.tensor(k), n, p).numpy()
    log_comb = np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in range(n + 1)])
    np.testing.assert_allclose(logp, log_comb + k * math.log(p) + (n - k) * math.log1p(-p), rtol=1e-13)
    assert math.fsum(np.exp(logp)) == pytest.approx(1.0, abs=1e-14)


def test_count_distribution_gradients():
    k = tl.tensor(np.array([0.0, 2.0, 5.0, 9.0]))
    for fn in (
        lambda p: tl.stats.binom.logpmf(k, 10, p),
        lambda p: tl.stats.binom.cdf(k, 10, p),
        lambda p: tl.stats.geom.logsf(k + 1.0, p),
        lambda p: tl.stats.bernoulli.logpmf(tl.tensor(np.array([0.0, 1.0])), p),
    ):
        check_grads(fn, (tl.tensor(0.35),), order=2)
    check_grads(lambda n, p: tl.stats.nbinom.logpmf(k, n, p), (tl.tensor(3.5), tl.tensor(0.4)), order=2)
    check_grads(lambda n, p: tl.stats.nbinom.sf(k, n, p), (tl.tensor(3.5), tl.tensor(0.4)), order=1)
    # d/dp of the binomial log-likelihood: k/p - (n - k)/(1 - p)
    g = tl.grad(lambda p: tl.sum(tl.stats.binom.logpmf(k, 10, p)))(tl.tensor(0.35, "float64"))
    assert float(g) == pytest.approx(float(np.sum(k.numpy() / 0.35 - (10 - k.numpy()) / 0.65)), rel=1e-13)


def test_pareto_tail_where_scipy_underflows():
    # log P(X > x) = -b log x: -1727 at 1e300 with b = 2.5 (SciPy's log of the underflowed sf: -inf)
    got = float(tl.stats.pareto.logsf(tl.tensor(1e300, "float64"), 2.5))
    assert got == pytest.approx(-2.5 * math.log(1e300), rel=1e-15)
    check_grads(lambda x, b: tl.stats.pareto.logpdf(x, b), (tl.tensor(np.array([1.5, 4.0])), tl.tensor(2.5)), order=2)


def test_multinomial_matches_scipy_and_the_formula():
    x = np.array(
        [[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 1.0], [2.0, 2.0, 0.0], [1.5, 1.5, 0.0], [-1.0, 2.0, 2.0]]
    )
    p = np.array([0.2, 0.3, 0.5])
    got = tl.stats.multinomial.logpmf(tl.tensor(x), 3, tl.tensor(p)).numpy()
    np.testing.assert_allclose(got, ss.multinomial.logpmf(x, 3, p), rtol=1e-13)
    # 3! / (1! 1! 1!) * 0.2 * 0.3 * 0.5
    assert float(tl.stats.multinomial.pmf(tl.tensor(x[2]), 3, tl.tensor(p))) == pytest.approx(6 * 0.03, rel=1e-14)
    # SciPy truncates n = 3.5 to 3; a count that is not an integer, or p that is no probability vector, is NaN
    assert np.isnan(tl.stats.multinomial.logpmf(tl.tensor(x[:2]), 3.5, tl.tensor(p)).numpy()).all()
    assert np.isnan(tl.stats.multinomial.logpmf(tl.tensor(x[0]), 3, tl.tensor(np.array([0.5, 0.6, -0.1]))).numpy())
    # d/dp of sum_i x_i log p_i: x_i / p_i
    g = tl.grad(lambda p: tl.stats.multinomial.logpmf(tl.tensor(x[2]), 3, p))(tl.tensor(p))
    np.testing.assert_allclose(g.numpy(), x[2] / p, rtol=1e-14)
    with pytest.raises(ValueError, match=r"multinomial.logpmf: x and p must have the categories on their last axis"):
        tl.stats.multinomial.logpmf(tl.tensor(x), 3, tl.tensor(p[:2]))


@pytest.mark.parametrize(("name", "shapes"), [("vonmises", (2.0,)), ("vonmises", (800.0,)), ("wrapcauchy", (0.3,))])
def test_circular_densities_match_scipy(name, shapes):
    x = np.concatenate([RNG.normal(size=20) * 3, [0.0, 6.2, 6.3, 7.0, -7.0, np.inf, np.nan]])
    for method in ("logpdf", "pdf"):
        for loc, scale in ((0.0, 1.0), (0.7, 2.5)):
            got = getattr(getattr(tl.stats, name), method)(tl.tensor(x), *shapes, loc, scale).numpy()
            want = getattr(getattr(ss, name), method)(x, *shapes, loc, scale)
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300)
    # the von Mises normalizer with I0 scaled: finite at kappa = 1e4 (I0 itself overflows past 700)
    assert np.isfinite(tl.stats.vonmises.logpdf(tl.tensor(0.0, "float64"), 1e4).numpy())
    check_grads(
        lambda x, k: tl.stats.vonmises.logpdf(x, k), (tl.tensor(np.array([0.3, -2.0])), tl.tensor(2.5)), order=2
    )


def test_betabinom_matches_scipy_and_sums_to_one():
    k = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 5.0, 6.0, np.inf, np.nan])
    for loc in (0.0, 1.0):
        for method in ("logpmf", "pmf"):
            got = getattr(tl.stats.betabinom, method)(tl.tensor(k), 5, 2.0, 3.0, loc).numpy()
            np.testing.assert_allclose(got, getattr(ss.betabinom, method)(k, 5, 2.0, 3.0, loc), rtol=1e-12)
    total = tl.sum(tl.stats.betabinom.pmf(tl.tensor(np.arange(31.0)), 30, 0.7, 2.5))
    assert float(total) == pytest.approx(1.0, abs=1e-13)
    check_grads(
        lambda a, b: tl.stats.betabinom.logpmf(tl.tensor(np.array([0.0, 3.0])), 5, a, b),
        (tl.tensor(2.0), tl.tensor(3.0)),
        order=2,
    )

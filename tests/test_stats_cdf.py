"""tl.stats.t and tl.stats.beta distribution functions (cdf, sf, logcdf, logsf) and tl.special.betaincc, built on
the regularized incomplete beta function: SciPy's values, closed forms where SciPy loses digits (the Cauchy and
df = 2 CDFs near 0 and in the tails, mpmath when installed), SciPy's values off the support, and gradients in every
argument against float64 finite differences (check_grads)."""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import tensorlib as tl
from tensorlib.testing import check_grads
from tests._helpers import unless_underflowed

RNG = np.random.default_rng(3)
X = np.concatenate([RNG.normal(size=40) * 4, [0.0, 1e3, -1e3, 1e20, -1e20, 1e100, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("df", [0.3, 2.5, 10.0, 1e3, 1e8, np.inf])
@pytest.mark.parametrize("method", ["cdf", "sf", "logcdf", "logsf"])
def test_t_matches_scipy(method, df):
    got = getattr(tl.stats.t, method)(tl.tensor(X), df).numpy()
    np.testing.assert_allclose(got, unless_underflowed(method, got, getattr(ss.t, method)(X, df)), rtol=1e-12, atol=0)


def test_t_closed_forms_where_the_tail_is_tiny_or_near_one_half():
    # Cauchy (df = 1): F(z) = 1/2 + atan(z)/pi; df = 2: F(z) = 1/2 + z / (2 sqrt(2 + z^2)).  SciPy's t.cdf(1e-8, 1)
    # is 0.500000004743 where the value is 0.500000003183.
    z = np.array([1e-8, -1e-8, 1e-3, 0.5, -3.0, 50.0, -1e6, 1e12])
    cauchy = np.array([math.atan2(1.0, -v) / math.pi for v in z])  # 1/2 + atan(z)/pi, without cancellation
    cauchy_sf = np.array([math.atan2(1.0, v) / math.pi for v in z])
    # within 3e-12 near 1/2 (scipy.special.betaincc(1/2, 1/2, 1e-16) itself is 2.3e-12 off), 1e-13 relative elsewhere
    for method, want in (("cdf", cauchy), ("sf", cauchy_sf)):
        got = getattr(tl.stats.t, method)(tl.tensor(z), 1.0).numpy()
        np.testing.assert_allclose(got[:2], want[:2], rtol=0, atol=3e-12)
        np.testing.assert_allclose(got[2:], want[2:], rtol=1e-13)
    two = np.array([0.5 + v / (2 * math.sqrt(2 + v * v)) for v in z])
    np.testing.assert_allclose(tl.stats.t.cdf(tl.tensor(z[:5]), 2.0).numpy(), two[:5], rtol=0, atol=3e-12)
    # the lower tail of df = 2 directly: F(-z) = (1 - z / sqrt(2 + z^2)) / 2 = 1 / (sqrt(2 + z^2) (sqrt(2 + z^2) + z))
    far = np.array([1e3, 1e6, 1e9])
    lower = 1 / (np.sqrt(2 + far**2) * (np.sqrt(2 + far**2) + far))
    np.testing.assert_allclose(tl.stats.t.cdf(tl.tensor(-far), 2.0).numpy(), lower, rtol=1e-12)
    np.testing.assert_allclose(tl.stats.t.logsf(tl.tensor(far), 2.0).numpy(), np.log(lower), rtol=1e-13)


def test_t_with_mpmath_at_a_large_df():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for df, z in [(1e3, -6.3), (1e3, 11.6), (1e6, 7.0), (5.0, 0.01)]:
        nu, x = mpmath.mpf(df), mpmath.mpf(z)
        tail = mpmath.betainc(nu / 2, mpmath.mpf(1) / 2, 0, nu / (nu + x * x), regularized=True) / 2
        want = float(tail if z < 0 else 1 - tail)
        want_sf = float(1 - tail if z < 0 else tail)
        assert float(tl.stats.t.cdf(tl.tensor(np.float64(z)), df)) == pytest.approx(want, rel=1e-12)
        assert float(tl.stats.t.sf(tl.tensor(np.float64(z)), df)) == pytest.approx(want_sf, rel=1e-12)


def test_t_far_tails_do_not_underflow_to_zero():
    # past |z| = 1e150 (z**2 overflows) the tail is its leading term (df / z^2)^(df / 2) / (df B(df/2, 1/2)): for
    # df = 1, 1 / (pi z) exactly in float64; SciPy gives 0 there
    z = np.array([1e151, 1e200, 1e300])
    # (through exp of its log: |log| * eps, 1e-13)
    np.testing.assert_allclose(tl.stats.t.sf(tl.tensor(z), 1.0).numpy(), 1 / (math.pi * z), rtol=1e-13)
    np.testing.assert_allclose(tl.stats.t.cdf(tl.tensor(-z), 1.0).numpy(), 1 / (math.pi * z), rtol=1e-13)
    np.testing.assert_allclose(tl.stats.t.logsf(tl.tensor(z), 1.0).numpy(), -np.log(math.pi * z), rtol=1e-14)
    df = 2.5  # log P(T > z) = (df/2) log df - df log z - log df - log B(df/2, 1/2), finite where the tail underflows
    want = 0.5 * df * math.log(df) - df * np.log(z) - math.log(df) - float(sp.betaln(df / 2, 0.5))
    np.testing.assert_allclose(tl.stats.t.logcdf(tl.tensor(-z), df).numpy(), want, rtol=1e-14)
    # the quantile of df = 1 is the Cauchy's into the far tail, and inverts the cdf
    q = np.array([1e-300, 1e-20, 1e-5, 0.3, 0.5 + 1e-12])
    np.testing.assert_allclose(tl.stats.t.cdf(tl.stats.t.ppf(tl.tensor(q), 1.0), 1.0).numpy(), q, rtol=1e-13)


@pytest.mark.parametrize("df", [0.7, 1.0, 2.5, 30.0, 1e5, np.inf])
def test_t_quantiles_invert_the_distribution_function(df):
    q = np.concatenate([RNG.uniform(size=10), [1e-12, 1e-5, 0.5, 0.5 + 1e-12, 1 - 1e-9]])
    z = tl.stats.t.ppf(tl.tensor(q), df)
    np.testing.assert_allclose(tl.stats.t.cdf(z, df).numpy(), q, rtol=1e-11)  # SciPy's betaincinv: 1e-12
    np.testing.assert_allclose(tl.stats.t.isf(tl.tensor(q), df).numpy(), -z.numpy(), rtol=1e-13)
    away = np.abs(q - 0.5) > 1e-6  # next to 1/2 SciPy's t.ppf(0.5 + 1e-12, 1) is 8e-6 off (the round trip above holds)
    np.testing.assert_allclose(z.numpy()[away], ss.t.ppf(q[away], df), rtol=1e-9)
    assert np.isnan(tl.stats.t.ppf(tl.tensor(np.array([-0.1, 1.1, np.nan])), df).numpy()).all()
    # dz/dq is 1 / density
    g = tl.grad(lambda q: tl.sum(tl.stats.t.ppf(q, df)))(tl.tensor(q[:10]))
    np.testing.assert_allclose(g.numpy(), 1 / ss.t.pdf(z.numpy()[:10], df), rtol=1e-9)


def test_t_location_scale_invalid_parameters_and_float32():
    x = RNG.normal(size=6)
    np.testing.assert_allclose(
        tl.stats.t.cdf(tl.tensor(x), 4.0, loc=0.5, scale=2.0).numpy(), ss.t.cdf(x, 4.0, 0.5, 2.0), rtol=1e-13
    )
    bad = tl.stats.t.cdf(tl.tensor(np.array([0.3, 0.3, 0.3])), tl.tensor(np.array([-1.0, 0.0, 3.0])), scale=-1.0)
    assert np.isnan(bad.numpy()).all() and np.isnan(ss.t.cdf(0.3, [-1.0, 0.0, 3.0], scale=-1.0)).all()
    got32 = tl.stats.t.sf(tl.tensor(x.astype(np.float32)), 3.0)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32.numpy(), ss.t.sf(x.astype(np.float32).astype(float), 3.0), rtol=2e-7)


def test_t_gradients():
    x = tl.tensor(RNG.normal(size=4) * 2)
    check_grads(lambda x, loc, scale: tl.stats.t.cdf(x, 3.5, loc, scale), (x, tl.tensor(0.3), tl.tensor(1.7)), order=2)
    check_grads(lambda df: tl.stats.t.sf(x, df), (tl.tensor(np.array([2.5, 4.0, 9.0, 30.0])),), order=1)
    check_grads(lambda x: tl.stats.t.logcdf(x, 2.0), (tl.tensor(np.array([-30.0, -1.0, 0.5, 40.0])),), order=2)
    # d/dx cdf is the density
    g = tl.grad(lambda x: tl.sum(tl.stats.t.cdf(x, 6.0)))(x)
    np.testing.assert_allclose(g.numpy(), ss.t.pdf(x.numpy(), 6.0), rtol=1e-12)


XB = np.concatenate(
    [RNG.uniform(size=30), [0.0, 1.0, 1e-300, 1 - 1e-16, 1e-10, 1 - 1e-10, -1.0, 2.0, np.nan, np.inf, -np.inf]]
)


@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (2.0, 3.0), (1e-3, 5.0), (50.0, 0.2), (1e4, 1e4)])
def test_beta_cdf_and_sf_match_scipy(a, b):
    np.testing.assert_allclose(tl.stats.beta.cdf(tl.tensor(XB), a, b).numpy(), ss.beta.cdf(XB, a, b), rtol=1e-12)
    np.testing.assert_allclose(tl.stats.beta.sf(tl.tensor(XB), a, b).numpy(), ss.beta.sf(XB, a, b), rtol=1e-12)


def test_beta_sf_near_zero_does_not_round_one_minus_x():
    # sf = 1 - I_x(a, b); at x = 1e-300 with a = 0.001, I is 0.502: computing it as I_{1 - x}(b, a) rounds 1 - x to 1
    # and gives sf = 1.
    assert float(tl.stats.beta.sf(tl.tensor(1e-300, "float64"), 1e-3, 5.0)) == pytest.approx(
        ss.beta.sf(1e-300, 1e-3, 5.0), rel=1e-12
    )


def test_beta_location_scale_invalid_and_gradients():
    x = RNG.uniform(-0.9, 0.9, size=5)
    np.testing.assert_allclose(
        tl.stats.beta.cdf(tl.tensor(x), 2.0, 3.0, loc=-1.0, scale=2.0).numpy(), ss.beta.cdf(x, 2, 3, -1, 2), rtol=1e-13
    )
    assert np.isnan(tl.stats.beta.sf(tl.tensor(0.5), -1.0, 2.0).numpy())
    xs = tl.tensor(RNG.uniform(0.1, 0.9, size=4))
    check_grads(
        lambda x, loc, scale: tl.stats.beta.cdf(x, 2.5, 1.5, loc, scale),
        (xs, tl.tensor(-0.05), tl.tensor(1.1)),
        order=2,
    )
    check_grads(lambda a, b: tl.stats.beta.sf(xs, a, b), (tl.tensor(2.5), tl.tensor(1.5)), order=1)


def test_betaincc_near_one_keeps_its_digits():
    # SciPy 1.17's betaincc(1/2, 1/2, 1e-20) is 1.0; the value is 1 - (2/pi) asin(1e-10)
    for y in (1e-20, 1e-30):
        want = 1.0 - 2.0 / math.pi * math.asin(math.sqrt(y))
        assert float(tl.special.betaincc(tl.tensor(0.5, "float64"), 0.5, y)) == pytest.approx(want, rel=1e-15, abs=0)
    # and the Cauchy CDF next to 1/2 through it: 1/2 + atan(z)/pi
    z = np.array([3.14e-12, 1e-15])
    np.testing.assert_allclose(tl.stats.t.cdf(tl.tensor(z), 1.0).numpy(), 0.5 + np.arctan(z) / math.pi, rtol=1e-15)


def test_betaincc_matches_scipy_and_its_gradients_are_minus_betaincs():
    a, b, x = RNG.uniform(0.3, 6, size=(3, 8))
    x = x / 6.5
    got = tl.special.betaincc(tl.tensor(a), tl.tensor(b), tl.tensor(x)).numpy()
    np.testing.assert_allclose(got, sp.betaincc(a, b, x), rtol=1e-13)
    grads = tl.grad(lambda *v: tl.sum(tl.special.betaincc(*v)), (0, 1, 2))(tl.tensor(a), tl.tensor(b), tl.tensor(x))
    minus = tl.grad(lambda *v: tl.sum(tl.special.betainc(*v)), (0, 1, 2))(tl.tensor(a), tl.tensor(b), tl.tensor(x))
    for g, m in zip(grads, minus):
        np.testing.assert_allclose(g.numpy(), -m.numpy(), rtol=1e-15)
    check_grads(tl.special.betaincc, (tl.tensor(a[:3]), tl.tensor(b[:3]), tl.tensor(x[:3])), order=1)


def test_traced_equals_eager():
    x = tl.tensor(RNG.normal(size=5))
    f = tl.function(lambda x: (tl.stats.t.cdf(x, 3.0), tl.stats.beta.sf(tl.sigmoid(x), 2.0, 0.5)))
    for got, want in zip(f(x), (tl.stats.t.cdf(x, 3.0), tl.stats.beta.sf(tl.sigmoid(x), 2.0, 0.5))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


QS = np.concatenate([RNG.uniform(size=12), [0.0, 1.0, 1e-30, 1e-5, 0.5, 1 - 1e-9, -0.1, 1.1, np.nan]])


@pytest.mark.parametrize(
    ("name", "shapes"),
    [("gamma", (2.5,)), ("gamma", (0.1,)), ("chi2", (3.0,)), ("beta", (2.0, 3.0)), ("beta", (0.1, 0.5))],
)
def test_quantiles_match_scipy_and_invert(name, shapes):
    ours, theirs = getattr(tl.stats, name), getattr(ss, name)
    for method in ("ppf", "isf"):
        for loc, scale in ((0.0, 1.0), (0.7, 2.5)):
            got = getattr(ours, method)(tl.tensor(QS), *shapes, loc, scale).numpy()
            np.testing.assert_allclose(got, getattr(theirs, method)(QS, *shapes, loc, scale), rtol=1e-12)
    q = RNG.uniform(0.01, 0.99, size=8)
    x = ours.ppf(tl.tensor(q), *shapes)
    np.testing.assert_allclose(ours.cdf(x, *shapes).numpy(), q, rtol=1e-11)
    np.testing.assert_allclose(ours.sf(ours.isf(tl.tensor(q), *shapes), *shapes).numpy(), q, rtol=1e-11)


def test_inverse_special_functions_and_their_gradients():
    a, b = RNG.uniform(0.5, 5, size=(2, 6))
    q = RNG.uniform(0.02, 0.98, size=6)
    pairs = [
        (tl.special.gammaincinv, sp.gammaincinv, (a, q)),
        (tl.special.gammainccinv, sp.gammainccinv, (a, q)),
        (tl.special.betaincinv, sp.betaincinv, (a, b, q)),
        (tl.special.betainccinv, sp.betainccinv, (a, b, q)),
    ]
    for ours, theirs, args in pairs:
        np.testing.assert_allclose(ours(*map(tl.tensor, args)).numpy(), theirs(*args), rtol=1e-13)
        check_grads(ours, tuple(map(tl.tensor, args)), order=1)
        # every order in q
        check_grads(lambda q, f=ours, rest=args[:-1]: f(*map(tl.tensor, rest), q), (tl.tensor(args[-1]),), order=2)
    # dx/dq = 1 / density at x: the Gamma(a) density for gammaincinv
    x = tl.special.gammaincinv(tl.tensor(a), tl.tensor(q))
    g = tl.grad(lambda q: tl.sum(tl.special.gammaincinv(tl.tensor(a), q)))(tl.tensor(q))
    np.testing.assert_allclose(g.numpy(), 1 / ss.gamma.pdf(x.numpy(), a), rtol=1e-12)


def test_quantile_gradients_in_the_parameters():
    q = tl.tensor(RNG.uniform(0.05, 0.95, size=4))
    check_grads(lambda a, scale: tl.stats.gamma.ppf(q, a, scale=scale), (tl.tensor(2.5), tl.tensor(1.5)), order=1)
    check_grads(lambda a, b: tl.stats.beta.isf(q, a, b), (tl.tensor(2.5), tl.tensor(1.5)), order=1)
    check_grads(lambda df: tl.stats.t.ppf(q, df), (tl.tensor(np.array([3.0, 7.0, 20.0, 2.5])),), order=1)
    check_grads(lambda df: tl.stats.chi2.isf(q, df), (tl.tensor(4.5),), order=1)


def test_log_distribution_functions_of_beta_gamma_poisson():
    x = np.array([1e-300, 0.01, 0.3, 0.5, 0.9, 0.999999, 1.0, 1.5, -1.0, np.nan])
    for method in ("logcdf", "logsf"):
        got = getattr(tl.stats.beta, method)(tl.tensor(x), 0.1, 0.5).numpy()
        want = unless_underflowed(method, got, getattr(ss.beta, method)(x, 0.1, 0.5))
        np.testing.assert_allclose(got, want, rtol=1e-12)
        g = np.array([0.0, 1e-300, 0.5, 3.0, 50.0, -1.0, np.inf, np.nan])
        got = getattr(tl.stats.gamma, method)(tl.tensor(g), 2.5).numpy()
        np.testing.assert_allclose(got, unless_underflowed(method, got, getattr(ss.gamma, method)(g, 2.5)), rtol=1e-12)
    # near 1 the log keeps the complement's digits: log P(K <= 100) for Poisson(3) is log1p(-P(K > 100)), where
    # SciPy's logcdf gives 0
    sf = float(tl.stats.poisson.sf(tl.tensor(100.0, "float64"), 3.0))
    assert sf > 0
    assert float(tl.stats.poisson.logcdf(tl.tensor(100.0, "float64"), 3.0)) == pytest.approx(math.log1p(-sf), rel=1e-14)
    k = np.array([-1.0, 0.0, 2.0, 3.5, 10.0, np.inf])
    np.testing.assert_allclose(tl.stats.poisson.logsf(tl.tensor(k), 3.0).numpy(), ss.poisson.logsf(k, 3.0), rtol=1e-12)

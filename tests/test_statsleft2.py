"""tl.stats gaps, attacked: gradients at the lower end ``x == loc`` of a support whose density is a power ``z**k`` there
(gamma with a < 1, weibull_min with c < 1: NaN in the scale and loc).  References: scipy.stats, float64 central
differences of SciPy's values just inside the support, and the closed forms of the limits."""

import math

import numpy as np
import pytest
import scipy.stats as ss

import tensorlib as tl


def _t(v):
    return tl.tensor(v, "float64")


def _grads(dist, method, shape, x, loc, scale):
    f = getattr(getattr(tl.stats, dist), method)
    return [float(g) for g in tl.grad(lambda x, l, s: f(x, shape, loc=l, scale=s), argnums=(0, 1, 2))(x, loc, scale)]


def _scipy_scale_slope(dist, method, shape, loc, scale, offset=1e-9, h=1e-6):
    """d method / d scale at ``x = loc + offset``, inside the support, by a float64 central difference of SciPy."""
    f = getattr(getattr(ss, dist), method)
    x = loc + offset
    return (f(x, shape, loc=loc, scale=scale + h) - f(x, shape, loc=loc, scale=scale - h)) / (2 * h)


# the density is ~ z**k at x = loc, k = a - 1 (gamma, chi2: df / 2 - 1) or c - 1 (weibull_min); the log-density's
# scale slope there is -(k + 1) / scale, the log distribution function's too (log P ~ (k + 1) log z), the others' 0
@pytest.mark.parametrize(
    "dist, shape, power",
    [
        ("gamma", 0.5, 0.5),
        ("gamma", 2.5, 2.5),
        ("weibull_min", 0.5, 0.5),
        ("weibull_min", 3.0, 3.0),
        ("chi2", 1.0, 0.5),
    ],
)
def test_gradients_at_x_equal_loc_are_the_limits_not_nan(dist, shape, power):
    x, loc, scale = _t(1.0), _t(1.0), _t(2.0)
    for method in ("logpdf", "logcdf"):
        gx, gloc, gscale = _grads(dist, method, shape, x, loc, scale)
        assert gscale == pytest.approx(-power / 2.0, rel=1e-12)
        # SciPy's own slope a hair inside the support tends to the same limit
        assert gscale == pytest.approx(_scipy_scale_slope(dist, method, shape, 1.0, 2.0), abs=1e-4)
        rising = method == "logcdf" or power > 1.0  # +-inf: the sign of (power - [logpdf]) / z
        assert gx == (math.inf if rising else -math.inf) and gloc == -gx
    for method in ("cdf", "sf", "logsf"):
        gx, gloc, gscale = _grads(dist, method, shape, x, loc, scale)
        assert gscale == 0.0
        assert not math.isnan(gx) and gloc == -gx
        want = getattr(ss, dist).pdf(1.0, shape, loc=1.0, scale=2.0)  # inf for a power below 1
        assert abs(gx) == pytest.approx(want, rel=1e-9) or abs(gx) == want
    gx, gloc, gscale = _grads(dist, "pdf", shape, x, loc, scale)
    assert not any(math.isnan(g) for g in (gx, gloc, gscale))


@pytest.mark.parametrize("dist", ["expon", "halfnorm"])
def test_logcdf_scale_gradient_at_x_equal_loc_is_minus_one_over_scale(dist):
    f = getattr(tl.stats, dist).logcdf
    g = tl.grad(lambda s: f(_t(1.0), loc=_t(1.0), scale=s))(_t(2.0))
    assert float(g) == pytest.approx(-0.5, rel=1e-12)
    h = 1e-6
    ref = (getattr(ss, dist).logcdf(1.0 + 1e-9, 1.0, 2.0 + h) - getattr(ss, dist).logcdf(1.0 + 1e-9, 1.0, 2.0 - h)) / (
        2 * h
    )
    assert float(g) == pytest.approx(ref, abs=1e-4)


def test_log_gamma_tail_upper_at_zero_has_the_limit_slope():
    from tensorlib.ops.special import log_gamma_tail

    g = tl.grad(lambda x: log_gamma_tail(_t(0.5), x, True))(_t(0.0))
    assert float(g) == -math.inf  # -pdf / sf there, pdf = inf for a < 1
    g = tl.grad(lambda x: log_gamma_tail(_t(1.0), x, True))(_t(0.0))
    assert float(g) == pytest.approx(-1.0, rel=1e-12)  # log Q(1, x) = -x


def test_values_at_and_near_x_equal_loc_are_unchanged():
    x = np.array([1.0, 1.0 + 1e-12, 1.5, 4.0])
    for dist, shape in [("gamma", 0.5), ("gamma", 1.0), ("weibull_min", 0.5), ("chi2", 1.0)]:
        for method in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
            got = getattr(getattr(tl.stats, dist), method)(_t(x), shape, loc=1.0, scale=2.0).numpy()
            want = getattr(getattr(ss, dist), method)(x, shape, loc=1.0, scale=2.0)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    for dist in ("expon", "halfnorm"):
        for method in ("logpdf", "pdf", "logcdf"):
            got = getattr(getattr(tl.stats, dist), method)(_t(x), loc=1.0, scale=2.0).numpy()
            np.testing.assert_allclose(got, getattr(getattr(ss, dist), method)(x, loc=1.0, scale=2.0), rtol=1e-12)


# ---------------------------------------------------------------- the shape families' mean, var, std, stats, entropy
SUMMARY_GRID = {
    "gamma": [(0.1,), (1.0,), (3.7,), (249.0,), (251.0,), (1e6,)],
    "beta": [(0.5, 0.5), (2.0, 3.0), (0.1, 7.0), (1e3, 2.0), (5e6, 6e6)],
    # SciPy 1.17: the mean is inf for df <= 1, the variance inf in (1, 2] and NaN below, the kurtosis inf in (2, 4]
    "t": [(0.5,), (1.0,), (1.5,), (2.0,), (2.5,), (3.0,), (4.0,), (5.0,), (99.0,), (101.0,), (np.inf,)],
    "chi2": [(0.5,), (3.0,), (249.0,), (251.0,)],
    "f": [(3.0, 1.0), (3.0, 2.0), (3.0, 3.0), (3.0, 5.0), (3.0, 7.0), (3.0, 9.0), (0.5, 20.0)],
    "lognorm": [(0.01,), (1.0,), (3.0,)],
    "weibull_min": [(0.5,), (1.0,), (5.0,)],
    "gennorm": [(0.5,), (2.0,), (8.0,)],
    "loggamma": [(0.5,), (10.0,), (44.0,), (46.0,)],
    "pareto": [(0.5,), (1.5,), (2.5,), (3.5,), (4.5,)],
    "invgamma": [(0.5,), (1.5,), (2.5,), (3.5,), (4.5,), (199.0,), (201.0,)],
}


@pytest.mark.parametrize("name", sorted(SUMMARY_GRID))
def test_shape_family_summaries_match_scipy(name):
    d, ref = getattr(tl.stats, name), getattr(ss, name)
    for shapes in SUMMARY_GRID[name]:
        for loc, scale in [(0.0, 1.0), (1.5, 2.5)]:
            got = [float(v) for v in d.stats(*shapes, loc=loc, scale=scale, moments="mvsk")]
            want = [float(v) for v in ref.stats(*shapes, loc=loc, scale=scale, moments="mvsk")]
            for m in ("mean", "var", "std", "entropy"):
                got.append(float(getattr(d, m)(*shapes, loc=loc, scale=scale)))
                want.append(float(getattr(ref, m)(*shapes, loc=loc, scale=scale)))
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13, err_msg=f"{name}{shapes} {loc} {scale}")


def test_beta_entropy_where_scipy_has_no_case_is_its_series_not_zero():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for a, b in [(2.0, 3e7), (3e7, 2.0), (4.95e6, 4.95e6)]:
        am, bm = mpmath.mpf(a), mpmath.mpf(b)
        want = float(
            mpmath.log(mpmath.beta(am, bm))
            - (am - 1) * mpmath.digamma(am)
            - (bm - 1) * mpmath.digamma(bm)
            + (am + bm - 2) * mpmath.digamma(am + bm)
        )
        assert float(tl.stats.beta.entropy(a, b)) == pytest.approx(want, rel=1e-8)


SUMMARY_POINTS = {
    "gamma": (2.5,),
    "beta": (2.0, 3.5),
    "t": (5.5,),
    "chi2": (3.0,),
    "f": (3.0, 11.0),
    "lognorm": (0.7,),
    "weibull_min": (1.7,),
    "gennorm": (1.3,),
    "loggamma": (2.2,),
    "pareto": (5.5,),
    "invgamma": (5.5,),
}


@pytest.mark.parametrize("name", sorted(SUMMARY_POINTS))
def test_shape_family_summary_gradients_match_scipy_central_differences(name):
    d, ref, shapes = getattr(tl.stats, name), getattr(ss, name), SUMMARY_POINTS[name]
    arguments = [*shapes, 1.7]  # the shapes and the scale
    for m in ("mean", "var", "std", "entropy"):

        def ours(*values):
            return getattr(d, m)(*values[:-1], loc=_t(0.3), scale=values[-1])

        grads = tl.grad(ours, argnums=tuple(range(len(arguments))))(*[_t(v) for v in arguments])
        for i, g in enumerate(grads):
            h = 1e-6 * arguments[i]
            up, down = list(arguments), list(arguments)
            up[i] += h
            down[i] -= h
            want = (
                getattr(ref, m)(*up[:-1], loc=0.3, scale=up[-1]) - getattr(ref, m)(*down[:-1], loc=0.3, scale=down[-1])
            ) / (2 * h)
            assert float(g) == pytest.approx(want, rel=1e-6, abs=1e-6), (name, m, i)


@pytest.mark.parametrize(
    "name, values",
    [("t", (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, np.inf)), ("pareto", (0.5, 2.0, 4.0)), ("invgamma", (0.5, 2.0, 4.0))],
)
def test_undefined_moments_have_no_nan_gradient_where_the_value_is_a_number(name, values):
    d = getattr(tl.stats, name)
    for v in values:
        for m in ("mean", "var", "std", "entropy"):
            value = float(getattr(d, m)(_t(v), loc=_t(0.0), scale=_t(1.0)))
            grads = tl.grad(lambda loc, scale: getattr(d, m)(_t(v), loc=loc, scale=scale), argnums=(0, 1))(
                _t(0.0), _t(1.0)
            )
            if not math.isnan(value):
                assert not any(math.isnan(float(g)) for g in grads), (name, v, m)


def test_shape_family_summaries_dtypes_invalid_broadcasting_and_traced():
    assert tl.stats.gamma.mean(tl.tensor(np.float32(2.0))).dtype == tl.float32
    assert tl.stats.gamma.entropy(tl.tensor(2)).dtype == tl.float64  # ints: float64 (DESIGN 6)
    assert tl.stats.beta.var(tl.tensor([1, 2]), True).dtype == tl.float64
    np.testing.assert_array_equal(np.isnan(tl.stats.t.var(_t([np.nan, -1.0, 3.0])).numpy()), [True, True, False])
    assert np.isnan(float(tl.stats.gamma.mean(2.0, scale=-1.0)))
    m, v = tl.stats.gamma.stats(np.array([[1.0], [2.0]]), scale=[1.0, 2.0, 3.0], moments="mv")
    np.testing.assert_allclose(v.numpy(), ss.gamma.var(np.array([[1.0], [2.0]]), scale=[1.0, 2.0, 3.0]), rtol=1e-14)
    assert tl.stats.weibull_min.mean(np.zeros((0,)) + 1.0).shape == (0,)
    a = _t([1.0, 5e6, 3e7])
    np.testing.assert_array_equal(
        tl.function(lambda a: tl.stats.beta.entropy(a, 2.0))(a).numpy(), tl.stats.beta.entropy(a, 2.0).numpy()
    )


# ---------------------------------------------------------------- wrapcauchy's distribution function and quantiles
def _wrapcauchy_cdf_mpmath(x, c, upper=False):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x, c = mpmath.mpf(x), mpmath.mpf(c)
    h = (2 * mpmath.pi - x) / 2 if upper else x / 2
    return float(mpmath.atan2((1 + c) * mpmath.sin(h), (1 - c) * mpmath.cos(h)) / mpmath.pi)


@pytest.mark.parametrize("c", [0.01, 0.3, 0.9])
def test_wrapcauchy_cdf_sf_ppf_isf_match_scipy_and_mpmath(c):
    x = np.array([-1.0, 0.0, 1e-8, 0.5, 1.0, 3.0, np.pi, 3.3, 6.0, 7.0, np.nan])
    for m in ("cdf", "sf", "logcdf", "logsf"):
        got = getattr(tl.stats.wrapcauchy, m)(x, c).numpy()
        np.testing.assert_allclose(got, getattr(ss.wrapcauchy, m)(x, c), rtol=1e-13, atol=1e-15, err_msg=m)
    # next to 2 pi the sf keeps its digits (SciPy's 1 - cdf: 1e-7 relative off at 2 pi - 1e-9, 0 at 2 pi)
    for v in (2 * np.pi - 1e-9, 2 * np.pi):
        assert float(tl.stats.wrapcauchy.sf(v, c)) == pytest.approx(_wrapcauchy_cdf_mpmath(v, c, upper=True), rel=1e-14)
    q = np.array([0.0, 1e-10, 0.1, 0.5, 0.7, 1 - 1e-10, 1.0, 1.5, -0.1])
    for m in ("ppf", "isf"):
        got = getattr(tl.stats.wrapcauchy, m)(q, c).numpy()
        np.testing.assert_allclose(got, getattr(ss.wrapcauchy, m)(q, c), rtol=1e-12, atol=1e-15, err_msg=m)
    inner = x[1:-2]
    np.testing.assert_allclose(tl.stats.wrapcauchy.ppf(tl.stats.wrapcauchy.cdf(inner, c), c).numpy(), inner, rtol=1e-12)
    np.testing.assert_allclose(
        tl.stats.wrapcauchy.cdf(inner, c, loc=0.5, scale=2.0).numpy(), ss.wrapcauchy.cdf(inner, c, loc=0.5, scale=2.0)
    )


def test_wrapcauchy_cdf_and_ppf_gradients():
    x, c = _t([0.3, 2.0, 4.0, 6.0]), 0.4
    g = tl.grad(lambda x: tl.sum(tl.stats.wrapcauchy.cdf(x, c)))(x)
    np.testing.assert_allclose(g.numpy(), ss.wrapcauchy.pdf(x.numpy(), c), rtol=1e-12)
    gc = tl.grad(lambda c: tl.sum(tl.stats.wrapcauchy.cdf(x, c)))(_t(c))
    h = 1e-6
    want = np.sum(ss.wrapcauchy.cdf(x.numpy(), c + h) - ss.wrapcauchy.cdf(x.numpy(), c - h)) / (2 * h)
    assert float(gc) == pytest.approx(want, rel=1e-7)
    q = _t([0.1, 0.5, 0.9])
    gq = tl.grad(lambda q: tl.sum(tl.stats.wrapcauchy.ppf(q, c)))(q)
    np.testing.assert_allclose(gq.numpy(), 1 / ss.wrapcauchy.pdf(ss.wrapcauchy.ppf(q.numpy(), c), c), rtol=1e-10)
    gi = tl.grad(lambda q: tl.sum(tl.stats.wrapcauchy.isf(q, c)))(q)
    np.testing.assert_allclose(gi.numpy(), -gq.numpy()[::-1], rtol=1e-10)


# ---------------------------------------------------------------- no RuntimeWarning from ordinary calls
@pytest.mark.parametrize(
    "name, method, arg, shapes",
    [
        ("uniform", "logcdf", [0.0, 0.5, 1.0, 2.0], ()),
        ("uniform", "logsf", [0.0, 0.5, 1.0, 2.0], ()),
        ("gamma", "logpdf", [-1.0, 0.0, 1.0], (0.5,)),
        ("gamma", "pdf", [-1.0, 0.0, 1.0], (0.5,)),
        ("weibull_min", "pdf", [-1.0, 0.0, 1.0], (0.5,)),
        ("pareto", "logcdf", [0.5, 1.0, 2.0], (2.0,)),
        ("wrapcauchy", "logcdf", [0.0, 1.0], (0.5,)),
        ("t", "ppf", [0.0, 0.3, 1.0], (3.0,)),
        ("t", "isf", [0.0, 0.3, 1.0], (3.0,)),
        ("bernoulli", "logcdf", [-1.0, 0.0, 1.0], (0.3,)),
        ("bernoulli", "logsf", [-1.0, 0.0, 1.0], (0.3,)),
    ],
)
def test_ordinary_calls_leak_no_runtime_warning_and_keep_scipys_values(name, method, arg, shapes):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = getattr(getattr(tl.stats, name), method)(_t(arg), *shapes).numpy()
    with np.errstate(all="ignore"):
        want = getattr(getattr(ss, name), method)(np.array(arg), *shapes)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---------------------------------------------------------------- vonmises quantiles
def test_vonmises_ppf_isf_match_scipy_ends_and_invalid():
    q = np.array([0.0, 1e-6, 0.3, 0.5, 0.9, 1.0, 1.2, -0.1, np.nan])
    for kappa in (0.0, 2.0, 20.0):  # below 50, where SciPy's cdf is its exact series
        for m in ("ppf", "isf"):
            got = getattr(tl.stats.vonmises, m)(q, kappa).numpy()
            # SciPy's generic root search stops 1e-9 short (mpmath below checks ours)
            np.testing.assert_allclose(
                got, getattr(ss.vonmises, m)(q, kappa), rtol=0, atol=1e-8, err_msg=f"{m} {kappa}"
            )
    assert np.isnan(float(tl.stats.vonmises.ppf(0.3, -1.0)))
    got = tl.stats.vonmises.ppf(0.3, 2.0, loc=1.0, scale=2.0)
    assert float(got) == pytest.approx(ss.vonmises.ppf(0.3, 2.0, loc=1.0, scale=2.0), abs=1e-11)
    assert tl.stats.vonmises.ppf(tl.tensor(np.float32(0.3)), 2.0).dtype == tl.float32


def test_vonmises_ppf_inverts_the_distribution_function_in_the_tails_and_for_a_large_kappa():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    # from kappa = 50 SciPy's cdf is a normal approximation (3e-6 relative off), so its ppf too: mpmath instead
    for kappa, q in ((20.0, 1e-6), (80.0, 1e-3), (80.0, 0.3), (80.0, 0.99)):
        z = float(tl.stats.vonmises.ppf(q, kappa))
        k = mpmath.mpf(kappa)
        mass = mpmath.quad(lambda t: mpmath.exp(k * mpmath.cos(t)), [-mpmath.pi, 0, z]) / (
            2 * mpmath.pi * mpmath.besseli(0, k)
        )
        assert float(mass) == pytest.approx(q, rel=1e-9)


def test_vonmises_ppf_gradients_by_the_implicit_function_theorem():
    q, kappa = _t([0.1, 0.3, 0.8]), 2.0
    g = tl.grad(lambda q: tl.sum(tl.stats.vonmises.ppf(q, kappa)))(q)
    z = ss.vonmises.ppf(q.numpy(), kappa)
    np.testing.assert_allclose(g.numpy(), 1 / ss.vonmises.pdf(z, kappa), rtol=1e-9)
    gk = tl.grad(lambda k: tl.sum(tl.stats.vonmises.ppf(q, k)))(_t(kappa))
    h = 1e-5
    want = np.sum(ss.vonmises.ppf(q.numpy(), kappa + h) - ss.vonmises.ppf(q.numpy(), kappa - h)) / (2 * h)
    assert float(gk) == pytest.approx(want, rel=1e-6)
    gi = tl.grad(lambda q: tl.sum(tl.stats.vonmises.isf(q, kappa)))(q)
    np.testing.assert_allclose(gi.numpy(), -1 / ss.vonmises.pdf(ss.vonmises.isf(q.numpy(), kappa), kappa), rtol=1e-9)


# ---------------------------------------------------------------- poisson entropy
def _poisson_entropy_mpmath(mu):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    m = mpmath.mpf(mu)
    total = mpmath.mpf(0)
    for k in range(int(mu + 60 * math.sqrt(mu) + 60)):
        log_p = k * mpmath.log(m) - m - mpmath.loggamma(k + 1)
        total -= mpmath.exp(log_p) * log_p
    return float(total)


def test_poisson_entropy_matches_scipy_and_mpmath():
    mu = np.array([0.0, 1e-3, 0.5, 5.0, 50.0, 299.0, 301.0, 1000.0])
    np.testing.assert_allclose(tl.stats.poisson.entropy(mu).numpy(), ss.poisson.entropy(mu), rtol=1e-11, atol=0)
    # SciPy's generic sum is 3e-9 relative off at mu = 1e-10 and 2x off at mu = 1e6 (8.33 for 16.7)
    for m in (1e-10, 300.0, 5000.0):
        assert float(tl.stats.poisson.entropy(m)) == pytest.approx(_poisson_entropy_mpmath(m), rel=1e-11)
    want = 0.5 * math.log(2 * math.pi * math.e * 1e6) - 1 / 12e6 - 1 / 24e12  # its leading terms, O(1e-18) left
    assert float(tl.stats.poisson.entropy(1e6)) == pytest.approx(want, rel=1e-14)
    assert np.isnan(float(tl.stats.poisson.entropy(-1.0)))
    assert tl.stats.poisson.entropy(tl.tensor(np.float32(2.0))).dtype == tl.float32
    assert tl.stats.poisson.entropy(tl.tensor(3)).dtype == tl.float64
    m = _t([0.5, 400.0])
    np.testing.assert_array_equal(tl.function(tl.stats.poisson.entropy)(m).numpy(), tl.stats.poisson.entropy(m).numpy())


def test_poisson_entropy_gradient():
    for m in (1e-3, 0.5, 5.0):
        h = 1e-6 * m
        want = (ss.poisson.entropy(m + h) - ss.poisson.entropy(m - h)) / (2 * h)
        assert float(tl.grad(tl.stats.poisson.entropy)(_t(m))) == pytest.approx(want, rel=1e-7)
    for m in (299.0, 301.0):  # SciPy's central differences are noisy there: the series' derivative (3e-12 off)
        want = 1 / (2 * m) + 1 / (12 * m**2) + 1 / (12 * m**3) + 19 / (120 * m**4)
        assert float(tl.grad(tl.stats.poisson.entropy)(_t(m))) == pytest.approx(want, rel=1e-8)


@pytest.mark.parametrize("dfn", [1.0, 2.0, 3.0])
def test_f_gradients_at_x_equal_loc_are_not_nan(dfn):
    args = (_t(1.0), _t(1.0), _t(2.0), _t(dfn), _t(3.0))
    for method in ("cdf", "sf", "logcdf", "logsf", "logpdf"):
        f = getattr(tl.stats.f, method)
        gx, gloc, gscale, gn, gd = tl.grad(lambda x, l, s, a, b: f(x, a, b, loc=l, scale=s), argnums=(0, 1, 2, 3, 4))(
            *args
        )
        assert not any(math.isnan(float(g)) for g in (gx, gloc, gscale, gn, gd)), method
        if method in ("cdf", "sf"):
            # the density at the end: inf for dfn < 2, SciPy's pdf(loc) otherwise
            want = ss.f.pdf(1.0, dfn, 3.0, loc=1.0, scale=2.0) if dfn >= 2 else math.inf
            assert abs(float(gx)) == pytest.approx(want, rel=1e-12) and float(gscale) == 0.0
        if method == "logcdf":  # log P ~ (dfn / 2) log z: its scale slope -dfn / 2 / scale
            assert float(gscale) == pytest.approx(-dfn / 4.0, rel=1e-12)

"""tl.stats' discrete families completed: ``ppf``, ``isf``, ``median``, ``interval``, ``mean``, ``var``, ``std``,
``stats(moments=)`` and ``entropy`` of binom, bernoulli, geom, nbinom, poisson (betabinom's moments), attacked at the
extremes (q at 0, 1, 1e-300 and outside; p next to 0 and 1; n = 0; a huge mu).  References: the quantile's definition
(SciPy's convention: the smallest k with cdf(k) >= q, the smallest with sf(k) <= q) against distribution functions
summed here in Python floats from the mass functions, moments summed over the support with NumPy, float64 central
differences, and scipy.stats where installed (where SciPy loses the tail, 1 - q rounded, the definition decides)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl


def _binom_pmf(n, p):
    return np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])


def _poisson_pmf(mu, top):
    return np.array([math.exp(k * math.log(mu) - mu - math.lgamma(k + 1)) if mu else float(k == 0) for k in range(top)])


def _nbinom_pmf(n, p, top):
    return np.array(
        [
            math.exp(math.lgamma(n + k) - math.lgamma(k + 1) - math.lgamma(n) + n * math.log(p) + k * math.log1p(-p))
            for k in range(top)
        ]
    )


def _geom_pmf(p, top):  # support 1, 2, ...: index k - 1
    return np.array([(1 - p) ** (k - 1) * p for k in range(1, top + 1)])


# (name, params, pmf over the support from its lower end, that end)
CASES = [
    ("binom", (12, 0.3), _binom_pmf(12, 0.3), 0),
    ("binom", (7, 0.97), _binom_pmf(7, 0.97), 0),
    ("binom", (0, 0.4), _binom_pmf(0, 0.4), 0),
    ("bernoulli", (0.35,), np.array([0.65, 0.35]), 0),
    ("poisson", (4.5,), _poisson_pmf(4.5, 80), 0),
    ("poisson", (0.02,), _poisson_pmf(0.02, 40), 0),
    ("nbinom", (2.5, 0.4), _nbinom_pmf(2.5, 0.4, 200), 0),
    ("geom", (0.15,), _geom_pmf(0.15, 400), 1),
]


def _method(name, m):
    return getattr(getattr(tl.stats, name), m)


@pytest.mark.parametrize("name, params, pmf, low", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_quantiles_are_the_smallest_count_reaching_q(name, params, pmf, low):
    cdf = np.cumsum(pmf)
    sf = np.cumsum(pmf[::-1])[::-1] - pmf  # P(K > k)
    # q away from the steps (a rounding of the reference sum cannot decide), both tails, and the ends
    qs = np.array([0.001, 0.02, 0.2, 0.37, 0.5, 0.63, 0.81, 0.95, 0.999])
    qs = qs[np.min(np.abs(cdf[:, None] - qs[None]), axis=0) > 1e-9]
    ppf = _method(name, "ppf")(tl.tensor(qs), *params).numpy()
    expected = low + np.array([np.argmax(cdf >= q * (1 - 1e-12)) for q in qs])
    np.testing.assert_array_equal(ppf, expected)
    isf = _method(name, "isf")(tl.tensor(qs), *params).numpy()
    expected = low + np.array([np.argmax(sf <= q * (1 + 1e-12)) for q in qs])
    np.testing.assert_array_equal(isf, expected)
    top = low + len(pmf) - 1 if name in ("binom", "bernoulli") else math.inf
    ends = _method(name, "ppf")(tl.tensor([0.0, 1.0, -0.5, 1.5, math.nan]), *params).numpy()
    np.testing.assert_array_equal(ends, [low - 1, top, math.nan, math.nan, math.nan])
    ends = _method(name, "isf")(tl.tensor([0.0, 1.0, -0.5, 1.5, math.nan]), *params).numpy()
    np.testing.assert_array_equal(ends, [top, low - 1, math.nan, math.nan, math.nan])
    assert float(_method(name, "median")(*params)) == low + np.argmax(cdf >= 0.5)
    lo, hi = _method(name, "interval")(0.9, *params)
    assert (float(lo), float(hi)) == (low + np.argmax(cdf >= 0.05), low + np.argmax(cdf >= 0.95 * (1 - 1e-12)))
    # loc shifts every quantile
    assert float(_method(name, "ppf")(0.5, *params, loc=3.0)) == 3 + low + np.argmax(cdf >= 0.5)


@pytest.mark.parametrize("name, params, pmf, low", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_moments_and_entropy_match_sums_over_the_support(name, params, pmf, low):
    k = low + np.arange(len(pmf), dtype=float)
    mean = np.sum(k * pmf)
    var = np.sum((k - mean) ** 2 * pmf)
    skew = np.sum((k - mean) ** 3 * pmf) / var**1.5
    kurt = np.sum((k - mean) ** 4 * pmf) / var**2 - 3.0
    m, v, s, c = (float(t) for t in _method(name, "stats")(*params, moments="mvsk"))
    if var == 0:  # n = 0: one point
        assert (m, v) == (0.0, 0.0) and math.isnan(s) and math.isnan(c)
        return
    np.testing.assert_allclose([m, v, s, c], [mean, var, skew, kurt], rtol=1e-9)
    assert float(_method(name, "mean")(*params, loc=2.0)) == pytest.approx(mean + 2.0, rel=1e-12)
    assert float(_method(name, "std")(*params)) == pytest.approx(math.sqrt(var), rel=1e-12)
    assert float(_method(name, "var")(*params)) == float(_method(name, "stats")(*params, moments="v"))
    if hasattr(getattr(tl.stats, name), "entropy"):
        entropy = -np.sum(pmf[pmf > 0] * np.log(pmf[pmf > 0]))
        assert float(_method(name, "entropy")(*params)) == pytest.approx(entropy, rel=1e-12)


def test_betabinom_moments_match_sums_over_the_support():
    n, a, b = 9, 2.5, 0.7
    k = np.arange(n + 1)
    pmf = np.array(
        [
            math.comb(n, j)
            * math.exp(
                math.lgamma(j + a)
                + math.lgamma(n - j + b)
                - math.lgamma(n + a + b)
                - math.lgamma(a)
                - math.lgamma(b)
                + math.lgamma(a + b)
            )
            for j in k
        ]
    )
    mean = np.sum(k * pmf)
    var = np.sum((k - mean) ** 2 * pmf)
    skew = np.sum((k - mean) ** 3 * pmf) / var**1.5
    kurt = np.sum((k - mean) ** 4 * pmf) / var**2 - 3.0
    got = [float(t) for t in tl.stats.betabinom.stats(n, a, b, moments="mvsk")]
    np.testing.assert_allclose(got, [mean, var, skew, kurt], rtol=1e-10)


def _central_difference(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize(
    "name, method, args, position",
    [
        ("binom", "var", (10.0, 0.3), 1),
        ("binom", "std", (10.0, 0.3), 1),
        ("bernoulli", "entropy", (0.3,), 0),
        ("geom", "entropy", (0.3,), 0),
        ("geom", "var", (0.3,), 0),
        ("nbinom", "mean", (2.5, 0.4), 0),
        ("nbinom", "var", (2.5, 0.4), 1),
        ("poisson", "std", (4.0,), 0),
        ("betabinom", "var", (6.0, 2.0, 3.0), 1),
    ],
)
def test_summary_gradients_match_central_differences(name, method, args, position):
    f = _method(name, method)

    def at(value):
        return [*args[:position], value, *args[position + 1 :]]

    got = float(tl.grad(lambda v: f(*at(v)))(tl.tensor(args[position], "float64")))
    expected = _central_difference(lambda v: float(f(*at(tl.tensor(v, "float64")))), args[position])
    assert got == pytest.approx(expected, rel=1e-7)


def test_quantiles_have_zero_gradient_and_agree_traced():
    p = tl.tensor([0.2, 0.5, 0.9], "float64")
    assert np.array_equal(tl.grad(lambda p: tl.stats.binom.ppf(0.3, 10.0, p).sum())(p).numpy(), [0.0, 0.0, 0.0])
    assert np.array_equal(tl.grad(lambda mu: tl.stats.poisson.isf(0.3, mu).sum())(p).numpy(), [0.0, 0.0, 0.0])
    q = np.array([0.05, 0.5, 0.99])
    traced = tl.function(lambda q, p: tl.stats.nbinom.ppf(q, 3.0, p))
    np.testing.assert_array_equal(traced(q, p.numpy()).numpy(), tl.stats.nbinom.ppf(q, 3.0, p).numpy())
    # float32 in, float32 out; a Python q is weak
    assert tl.stats.binom.ppf(0.5, 10, tl.tensor([0.3], "float32")).dtype == tl.float32
    # parameters broadcast against q
    got = tl.stats.binom.ppf(tl.tensor([[0.1], [0.9]], "float64"), tl.tensor([5.0, 50.0], "float64"), 0.5).numpy()
    assert got.shape == (2, 2) and got[0, 0] < got[1, 0] and got[0, 1] < got[1, 1]


def test_invalid_parameters_are_nan():
    for name, params in [
        ("binom", (2.5, 0.3)),
        ("binom", (10, 1.2)),
        ("bernoulli", (-0.1,)),
        ("geom", (0.0,)),
        ("nbinom", (0.0, 0.5)),
        ("poisson", (-1.0,)),
    ]:
        for m in ("ppf", "isf"):
            assert math.isnan(float(_method(name, m)(0.5, *params))), (name, m, params)
        for m in ("mean", "var", "std"):
            assert math.isnan(float(_method(name, m)(*params))), (name, m, params)
    assert all(math.isnan(float(t)) for t in tl.stats.poisson.interval(1.5, 3.0))


def test_bad_calls_name_the_method():
    with pytest.raises(ValueError, match=r"binom\.stats: moments must be letters of 'mvsk', got 'mx'"):
        tl.stats.binom.stats(10, 0.3, moments="mx")
    with pytest.raises(TypeError, match=r"poisson\.mean: takes at most 2 \(mu, loc\), got 3"):
        tl.stats.poisson.mean(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match=r"geom\.entropy: missing the shape parameter"):
        tl.stats.geom.entropy()


def test_far_tails_follow_the_definition():
    # isf from the sf itself: q = 1e-300 is beyond 1 - q's rounding (SciPy's geom.isf inverts ppf(1 - q): inf there)
    k = float(tl.stats.geom.isf(1e-300, 0.2))
    assert k == math.ceil(-300 * math.log(10) / math.log(0.8))
    assert float(tl.stats.geom.isf(1e-12, 1e-9)) == math.ceil(math.log(1e-12) / math.log1p(-1e-9))
    # poisson: sf(k) = P(K > k) summed in log space from the mass (the terms fall fast past the mode)
    k = float(tl.stats.poisson.isf(1e-300, 3.0))
    log_terms = [j * math.log(3.0) - 3.0 - math.lgamma(j + 1) for j in range(int(k) - 1, int(k) + 60)]
    log_sf = lambda i: np.logaddexp.reduce(log_terms[i:])  # P(K >= k - 1 + i)
    assert log_sf(2) <= math.log(1e-300) < log_sf(1)
    # a huge mu: the median of Poisson(mu) is within mu - log 2 .. mu + 1/3 (Choi 1994)
    mu = 1e15
    assert mu - math.log(2) <= float(tl.stats.poisson.median(tl.tensor(mu, "float64"))) <= mu + 1 / 3


def test_entropy_at_the_ends():
    assert np.array_equal(tl.stats.bernoulli.entropy(tl.tensor([0.0, 1.0], "float64")).numpy(), [0.0, 0.0])
    # geom at p = 1 is a point mass: 0 (SciPy's formula reads 0 * -inf there: NaN)
    assert float(tl.stats.geom.entropy(tl.tensor(1.0, "float64"))) == 0.0


PARAMS = {
    "binom": st.tuples(
        st.sampled_from([0.0, 1.0, 3.0, 40.0, 1e4, 1e9]), st.sampled_from([0.0, 1e-12, 1e-3, 0.3, 0.5, 0.999, 1.0])
    ),
    "bernoulli": st.tuples(st.sampled_from([0.0, 1e-12, 0.3, 0.5, 1 - 1e-9, 1.0])),
    "geom": st.tuples(st.sampled_from([1e-12, 1e-4, 0.3, 0.9, 1.0])),
    "nbinom": st.tuples(st.sampled_from([0.01, 1.0, 7.5, 1e6]), st.sampled_from([1e-6, 0.3, 0.9, 1.0])),
    "poisson": st.tuples(st.sampled_from([0.0, 1e-8, 2.5, 700.0, 1e8])),
}


@pytest.mark.parametrize("name", sorted(PARAMS))
@given(data=st.data())
def test_against_scipy_on_a_grid_of_extremes(name, data):
    stats = pytest.importorskip("scipy.stats")
    params = data.draw(PARAMS[name])
    q = np.array(
        data.draw(
            st.lists(
                st.sampled_from([0.0, 1e-300, 1e-9, 0.01, 0.3, 0.5, 0.77, 0.99, 1 - 1e-9, 1.0, 1.2]),
                min_size=1,
                max_size=4,
            )
        )
    )
    dist = getattr(stats, name)
    for m, probability, side in (("ppf", dist.cdf, 1), ("isf", dist.sf, -1)):
        got = _method(name, m)(tl.tensor(q), *params).numpy()
        with np.errstate(all="ignore"):
            expected = getattr(dist, m)(q, *params)
        inner = (q > 0) & (q < 1)
        np.testing.assert_array_equal(got[~inner], expected[~inner])
        for k, qi in zip(got[inner], q[inner]):
            # the definition with SciPy's distribution functions (a relative slack for their last digits)
            at, before = probability(k, *params), probability(k - 1, *params)
            if side == 1:
                assert at >= qi * (1 - 1e-9) and before < qi * (1 + 1e-9), (m, k, qi, params)
            else:
                assert at <= qi * (1 + 1e-9) and before > qi * (1 - 1e-9), (m, k, qi, params)
    with np.errstate(all="ignore"):
        expected = np.array(dist.stats(*params, moments="mvsk"), dtype=float)
    got = np.array([t.numpy() for t in _method(name, "stats")(*params, moments="mvsk")])
    # SciPy's binomial variance is n p - n p**2 (cancelling next to p = 1: 1e-7 relative off at p = 1 - 1e-9)
    np.testing.assert_allclose(got[:2], expected[:2], rtol=1e-6)
    if expected[1] > 0:  # a point mass has no skewness or kurtosis (SciPy's formulas read 1 / 0 there, or nan)
        np.testing.assert_allclose(got[2:], expected[2:], rtol=1e-6)


@given(p=st.sampled_from([1e-12, 1e-5, 0.25, 0.5, 1 - 1e-5, 1 - 1e-9]), n=st.sampled_from([1, 2, 17, 10**6, 10**12]))
def test_binomial_moments_are_exact_at_the_ends(p, n):
    from fractions import Fraction

    exact_p = Fraction(p)
    pq = exact_p * (1 - exact_p)
    got = [float(t) for t in tl.stats.binom.stats(float(n), tl.tensor(p, "float64"), moments="mvsk")]
    expected = [n * exact_p, n * pq, (1 - 2 * exact_p) / Fraction(math.sqrt(n * pq)), (1 - 6 * pq) / (n * pq)]
    np.testing.assert_allclose(got, [float(e) for e in expected], rtol=1e-13)


def _gradient_and_difference(name, method, x, params, position):
    f = _method(name, method)
    args = [tl.tensor(v, "float64") for v in params]

    def at(v):
        return f(tl.tensor(x, "float64"), *args[:position], v, *args[position + 1 :])

    got = float(tl.grad(at)(args[position]))
    h = 1e-6 * max(1.0, abs(params[position]))
    difference = (float(at(args[position] + h)) - float(at(args[position] - h))) / (2 * h)
    return got, difference


# (family, method, x, shapes + (loc, scale), the argument) where the value saturates (0, 1, or a log of 1) at a huge x:
# each gradient was NaN, the derivative there is 0 (the value is constant around the point, central differences)
SATURATED = [
    ("gumbel_r", "pdf", -1e6, (0.0, 1.0), 0),
    ("gumbel_r", "pdf", -1e300, (0.0, 1.0), 1),
    ("gumbel_l", "pdf", 1e3, (0.0, 1.0), 0),
    ("gumbel_l", "pdf", 1e30, (0.0, 1.0), 1),
    ("loggamma", "cdf", 1e3, (2.0, 0.0, 1.0), 1),
    ("loggamma", "sf", 1e6, (2.0, 0.0, 1.0), 2),
    ("loggamma", "logcdf", 1e30, (2.0, 0.0, 1.0), 1),
    ("loggamma", "pdf", 1e300, (2.0, 0.0, 1.0), 2),
    ("loggamma", "pdf", 1e3, (2.0, 0.0, 1.0), 0),
    ("weibull_min", "cdf", 1e300, (2.0, 0.0, 1.0), 0),
    ("weibull_min", "sf", 1e300, (2.0, 0.0, 1.0), 0),
    ("weibull_min", "pdf", 1e300, (2.0, 0.0, 1.0), 0),
    ("gennorm", "cdf", 1e300, (1.5, 0.0, 1.0), 0),
    ("gennorm", "sf", -1e300, (1.5, 0.0, 1.0), 0),
    ("gennorm", "logcdf", 1e300, (1.5, 0.0, 1.0), 2),
    ("gennorm", "logsf", -1e300, (1.5, 0.0, 1.0), 1),
    ("gennorm", "pdf", -1e300, (1.5, 0.0, 1.0), 0),
    ("f", "pdf", 0.0, (3.0, 4.0, 0.0, 1.0), 0),
    ("f", "pdf", 0.0, (3.0, 4.0, 0.0, 1.0), 3),
]


@pytest.mark.parametrize("name, method, x, params, position", SATURATED)
def test_saturated_values_have_zero_gradients(name, method, x, params, position):
    got, difference = _gradient_and_difference(name, method, x, params, position)
    assert difference == 0.0 and got == 0.0, (got, difference)


def test_gennorm_scale_gradient_at_the_cusp():
    # logpdf(loc) = log(beta / 2) - gammaln(1 / beta) - log(scale): d / dscale = -1 / scale (it was NaN for beta < 1)
    for beta in (0.1, 0.5, 1.5, 2.0):
        got, difference = _gradient_and_difference("gennorm", "logpdf", 0.0, (beta, 0.0, 2.0), 2)
        assert got == pytest.approx(-0.5, rel=1e-12) and difference == pytest.approx(-0.5, rel=1e-6)


@pytest.mark.parametrize(
    "name, method, x, params, position, expected",
    [
        # log_betainc's unused branch took log(betainc(a, b, 0.5)), 0 for a large a: NaN in every df gradient from 1e4
        ("t", "logcdf", 0.0, (1e5, 0.0, 1.0), 0, 0.0),
        ("t", "logsf", 5.0, (1e5, 0.0, 1.0), 0, None),
        ("t", "logcdf", 1e4, (1e6, 0.0, 1.0), 0, 0.0),
        ("nbinom", "logsf", 1e6, (2.5, 0.4), 0, None),
        ("nbinom", "logsf", 5000.0, (2.5, 0.4), 0, None),
        # BetaincGrad with b = 1e155 (the count + 1): its continued fraction overflowed where the prefactor is 0
        ("nbinom", "cdf", 1e300, (2.5, 0.4), 0, 0.0),
        ("nbinom", "sf", 1e200, (2.5, 0.4), 0, 0.0),
    ],
)
def test_log_tail_gradients_in_a_large_parameter(name, method, x, params, position, expected):
    got, difference = _gradient_and_difference(name, method, x, params, position)
    if expected is None:
        assert got == pytest.approx(difference, rel=1e-5)
    else:
        assert got == expected and difference == expected


def test_betainc_gradient_where_its_prefactor_underflows():
    b = tl.tensor([1e155, 1e300], "float64")
    got = tl.grad(lambda a: tl.special.betainc(a, b, tl.tensor(0.4, "float64")).sum())(tl.tensor(2.5, "float64"))
    assert float(got) == 0.0
    got = tl.grad(lambda b: tl.special.betainc(tl.tensor(2.5, "float64"), b, tl.tensor(0.4, "float64")).sum())(b)
    assert np.array_equal(got.numpy(), [0.0, 0.0])


def test_polygamma_takes_integer_valued_float_orders():
    # SciPy and JAX take n = 1.0 as order 1 (it was a ValueError); a non-integer order stays one (SciPy: NaN)
    x = tl.tensor([1.0, 2.5], "float64")
    for n in (1.0, np.array([1.0, 3.0]), tl.tensor([2.0, 0.0], "float64")):
        whole = np.asarray(n.numpy() if isinstance(n, tl.Tensor) else n).astype(np.int64)
        whole = int(whole) if whole.ndim == 0 else tl.tensor(whole)
        np.testing.assert_array_equal(tl.special.polygamma(n, x).numpy(), tl.special.polygamma(whole, x).numpy())
    # the value: polygamma(1, 1) = pi**2 / 6, and its gradient polygamma(2, 1) = -2 zeta(3)
    assert float(tl.special.polygamma(1.0, tl.tensor(1.0, "float64"))) == pytest.approx(math.pi**2 / 6, rel=1e-14)
    slope = tl.grad(lambda t: tl.special.polygamma(1.0, t))(tl.tensor(1.0, "float64"))
    assert float(slope) == pytest.approx(-2 * 1.2020569031595942, rel=1e-13)
    with pytest.raises(ValueError, match=r"Polygamma: the order n must be a non-negative integer .*got 1\.5"):
        tl.special.polygamma(1.5, x)


# (v, x) with v**2 ~ x: past AMOS's range (x above ~1.07e9) and below Hankel's expansion's reach (4 v**2): SciPy's
# ive and kve are NaN there, and so were tensorlib's; the uniform (Debye) expansion now fills it
DEBYE_POINTS = [(1e5, 5e9), (3e4, 2e9), (1e5, 3.9e10), (2e5, 1e10)]


@pytest.mark.parametrize("v, x", DEBYE_POINTS)
def test_scaled_bessel_values_where_v_squared_is_near_x(v, x):
    v_, x_ = tl.tensor(v, "float64"), tl.tensor(x, "float64")
    ive = [float(tl.special.ive(v_ + d, x_)) for d in (0.0, 1.0)]
    kve = [float(tl.special.kve(v_ + d, x_)) for d in (0.0, 1.0)]
    # the Wronskian I_v K_{v+1} + I_{v+1} K_v = 1 / x (DLMF 10.28.2), in the scaled functions: no reference needed
    assert ive[0] * kve[1] + ive[1] * kve[0] == pytest.approx(1.0 / x, rel=1e-13)
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 25
    assert ive[0] == pytest.approx(float(mp.besseli(v, x) * mp.exp(-x)), rel=1e-13)
    assert kve[0] == pytest.approx(float(mp.besselk(v, x) * mp.exp(x)), rel=1e-13)


@pytest.mark.parametrize("name", ["ive", "kve"])
@pytest.mark.parametrize("v, x", [(1e4, 1e8), (1e4, 2e6), (3e3, 3e7), (60.0, 5e3), *DEBYE_POINTS])
def test_scaled_bessel_slopes_where_v_squared_is_near_x(name, v, x):
    # the recurrence (f_{v-1} + f_{v+1}) / 2 - f cancelled like x / v: ive's slope at (1e4, 1e8) was -1.0e-20 for
    # 6.0e-22 (its scale f / x is 4e-13); NaN past AMOS's range.  Five-point central differences with the step 1e-4 x
    # are exact to about 1e-11 of f / x here (f's log-slope is at most ~25 / x on these points).
    f = getattr(tl.special, name)
    v_ = tl.tensor(v, "float64")
    got = float(tl.grad(lambda t: f(v_, t))(tl.tensor(x, "float64")))
    h = 1e-4 * x
    at = {k: float(f(v_, tl.tensor(x + k * h, "float64"))) for k in (-2, -1, 1, 2)}
    difference = (at[-2] - 8 * at[-1] + 8 * at[1] - at[2]) / (12 * h)
    scale = float(f(v_, tl.tensor(x, "float64"))) / x
    assert abs(got - difference) <= 1e-7 * scale, (got, difference, scale)


# the standard densities in NumPy, on a grid that holds all but ~1e-20 of their mass
STANDARD_DENSITIES = {
    "norm": (lambda x: np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi), -40.0, 40.0),
    "uniform": (lambda x: np.ones_like(x), 0.0, 1.0),
    "expon": (lambda x: np.exp(-x), 0.0, 60.0),
    "laplace": (lambda x: 0.5 * np.exp(-np.abs(x)), -60.0, 60.0),
    "logistic": (lambda x: np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))) ** 2, -60.0, 60.0),
    "gumbel_r": (lambda x: np.exp(-x - np.exp(-x)), -5.0, 60.0),
    "gumbel_l": (lambda x: np.exp(x - np.exp(x)), -60.0, 5.0),
    "halfnorm": (lambda x: math.sqrt(2 / math.pi) * np.exp(-0.5 * x * x), 0.0, 40.0),
    "rayleigh": (lambda x: x * np.exp(-0.5 * x * x), 0.0, 40.0),
}


@pytest.mark.parametrize("name", sorted(STANDARD_DENSITIES))
def test_continuous_summaries_match_integrals_of_the_density(name):
    density, low, high = STANDARD_DENSITIES[name]
    x = np.linspace(low, high, 400001)
    f = density(x)

    def integral(values):  # Simpson's rule
        h = x[1] - x[0]
        return h / 3 * (values[0] + values[-1] + 4 * values[1:-1:2].sum() + 2 * values[2:-1:2].sum())

    mean = integral(x * f)
    var = integral((x - mean) ** 2 * f)
    skew = integral((x - mean) ** 3 * f) / var**1.5
    kurt = integral((x - mean) ** 4 * f) / var**2 - 3
    entropy = -integral(np.where(f > 0, f * np.log(np.where(f > 0, f, 1.0)), 0.0))
    loc, scale = 0.7, 2.5
    dist = getattr(tl.stats, name)
    got = [float(t) for t in dist.stats(loc, scale, moments="mvsk")]
    np.testing.assert_allclose(got, [loc + scale * mean, scale**2 * var, skew, kurt], rtol=1e-9, atol=1e-10)
    assert float(dist.entropy(loc=loc, scale=scale)) == pytest.approx(entropy + math.log(scale), rel=1e-9, abs=1e-12)
    assert float(dist.std(loc=loc, scale=scale)) == pytest.approx(scale * math.sqrt(var), rel=1e-9)
    # median and interval: the cdf's 1/2, 5% and 95% (cumulative Simpson sums of the NumPy density)
    cdf = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2 * (x[1] - x[0]))])
    for q, value in [(0.5, dist.median(loc=loc, scale=scale)), *zip((0.05, 0.95), dist.interval(0.9, loc, scale))]:
        assert float(value) == pytest.approx(loc + scale * np.interp(q, cdf, x), rel=1e-6, abs=1e-6)
    # gradients: d mean / d scale is the standard mean, d entropy / d scale is 1 / scale
    assert float(tl.grad(lambda s: dist.mean(loc=loc, scale=s))(tl.tensor(scale, "float64"))) == pytest.approx(
        mean, abs=1e-9
    )
    assert float(tl.grad(lambda s: dist.entropy(loc=loc, scale=s))(tl.tensor(scale, "float64"))) == pytest.approx(
        1 / scale
    )
    assert math.isnan(float(dist.var(loc=loc, scale=-1.0)))


def test_continuous_summaries_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for name in sorted(STANDARD_DENSITIES) + ["cauchy"]:
        dist, ref = getattr(tl.stats, name), getattr(stats, name)
        got = [float(t) for t in dist.stats(loc=0.3, scale=2.5, moments="mvsk")]
        np.testing.assert_allclose(got, ref.stats(loc=0.3, scale=2.5, moments="mvsk"), rtol=1e-13, equal_nan=True)
        assert float(dist.entropy(loc=0.3, scale=2.5)) == pytest.approx(ref.entropy(loc=0.3, scale=2.5), rel=1e-13)
        assert float(dist.median(loc=0.3, scale=2.5)) == pytest.approx(ref.median(loc=0.3, scale=2.5), rel=1e-13)
        np.testing.assert_allclose(
            [float(t) for t in dist.interval(0.9, 0.3, 2.5)], ref.interval(0.9, 0.3, 2.5), rtol=1e-13
        )
    # every family with a quantile has median and interval: weibull_min's median is scale (log 2)**(1 / c)
    assert float(tl.stats.weibull_min.median(2.0, scale=3.0)) == pytest.approx(
        3.0 * math.sqrt(math.log(2.0)), rel=1e-14
    )

"""tl.stats and tl.special leftovers, attacked at the edges: infinite and overflowing arguments (float32 1e150 is
inf), the densities' limits at +-inf, the exponentially scaled Bessel functions' slopes at a huge x, the discrete
families' methods.  References: scipy.stats / scipy.special, float64 central differences, mpmath where installed,
and closed forms."""

import math

import numpy as np
import pytest

import tensorlib as tl

CONTINUOUS = [
    ("norm", ()),
    ("t", (3.0,)),
    ("beta", (2.0, 3.0)),
    ("gamma", (2.0,)),
    ("chi2", (3.0,)),
    ("uniform", ()),
    ("expon", ()),
    ("laplace", ()),
    ("logistic", ()),
    ("cauchy", ()),
    ("pareto", (2.0,)),
    ("gennorm", (1.5,)),
    ("gumbel_r", ()),
    ("gumbel_l", ()),
    ("lognorm", (1.0,)),
    ("weibull_min", (2.0,)),
    ("halfnorm", ()),
    ("rayleigh", ()),
    ("invgamma", (2.0,)),
    ("f", (3.0, 4.0)),
    ("loggamma", (2.0,)),
    ("truncnorm", (-1.0, 2.0)),
]
METHODS = ("cdf", "sf", "logcdf", "logsf", "pdf", "logpdf")


def _grads(f, *args):
    args = [tl.tensor(a) for a in args]
    return [g.numpy() for g in tl.grad(f, argnums=tuple(range(len(args))))(*args)]


@pytest.mark.parametrize(("name", "shapes"), CONTINUOUS)
def test_gradients_at_an_infinite_x_are_finite_in_every_argument(name, shapes):
    # z = (x - loc) / scale has the derivative -z / scale = inf in the scale at x = inf: every family's scale
    # gradient was 0 * inf = NaN there (float32 x = 1e150 is inf), t's in df, gamma's logsf in a too.  Every method
    # is constant there (an end value, or the density's limit), so the gradient is 0 in every argument (logpdf's, of
    # -inf, only finite: its -log(scale) term keeps -1 / scale).
    dist = getattr(tl.stats, name)
    for x in (np.inf, -np.inf):
        for method in METHODS:
            f = getattr(dist, method)
            for dtype in ("float32", "float64"):
                args = [np.array(v, dtype) for v in (x, *shapes, 0.5, 2.0)]
                grads = _grads(lambda *a, f=f: f(*a), *args)
                for i, g in enumerate(grads):
                    assert np.isfinite(g) if method == "logpdf" else g == 0.0, (name, method, x, dtype, i, g)


@pytest.mark.parametrize("name", ["weibull_min", "rayleigh"])
@pytest.mark.parametrize("method", ["cdf", "sf", "logcdf"])
def test_float32_overflowing_x_scale_gradient_is_float64s_central_difference(name, method):
    # float32 1e150 is inf: the scale gradient of weibull_min.cdf and rayleigh.cdf was NaN; in float64 at x = 1e150
    # the function is flat in the scale (central differences: 0), and so is the float32 gradient now
    shapes = (2.0,) if name == "weibull_min" else ()
    f = getattr(getattr(tl.stats, name), method)

    def value(scale):
        return float(f(tl.tensor(np.float64(1e150)), *shapes, scale=scale).numpy())

    reference = (value(2.0 + 1e-6) - value(2.0 - 1e-6)) / 2e-6
    (g,) = _grads(lambda s: f(tl.tensor(np.float32(1e150)), *shapes, scale=s), np.float32(2.0))
    assert g.dtype == np.float32 and g == reference == 0.0


@pytest.mark.parametrize(
    ("name", "shapes"),
    [("chi2", (3.0,)), ("weibull_min", (2.0,)), ("gamma", (2.0,)), ("f", (3.0, 4.0)), ("loggamma", (2.0,))],
)
def test_densities_at_infinity_are_their_limit_zero(name, shapes):
    # SciPy's formulas read inf - inf at x = inf (NaN) for these, where its norm, rayleigh, invgamma (and chi2
    # with df <= 2) give the limit 0: tl.stats gives the limit for every family, eagerly and traced
    dist = getattr(tl.stats, name)
    x = np.array([np.inf, -np.inf, np.nan, 1.5])
    for dtype in ("float32", "float64"):
        xs = x.astype(dtype)
        pdf, logpdf = dist.pdf(xs, *shapes).numpy(), dist.logpdf(xs, *shapes).numpy()
        traced = tl.function(lambda v: dist.pdf(v, *shapes))(xs).numpy()
        np.testing.assert_array_equal(pdf[:2], 0.0)
        np.testing.assert_array_equal(logpdf[:2], -np.inf)
        assert np.isnan(pdf[2]) and np.isnan(logpdf[2]) and pdf[3] > 0
        np.testing.assert_array_equal(traced, pdf)
    # the density falls to 0: its value far out is below any positive number, and shrinking
    far = dist.pdf(np.array([1e3, 1e6, 1e12]), *shapes).numpy()
    assert far[0] < 1e-6 and (np.diff(far) <= 0).all()


def test_vonmises_density_at_infinity_stays_nan():
    # periodic: no limit at +-inf (SciPy: NaN), unlike the other families
    got = tl.stats.vonmises.pdf(np.array([np.inf, -np.inf]), 1.0).numpy()
    assert np.isnan(got).all()


# ------------------------------------------------------------------ ive / kve at a huge x
def _half_integer_scaled(name, v, x):
    """Closed forms (x large, e**-2x dropped): ive(1/2, x) = 1 / sqrt(2 pi x), ive(3/2, x) = (1 - 1/x) / sqrt(2 pi x),
    kve(1/2, x) = sqrt(pi / (2 x)), kve(3/2, x) = sqrt(pi / (2 x)) (1 + 1/x); with their first two derivatives."""
    s = 1.0 if v == 0.5 else (-1.0 if name == "ive" else 1.0)
    c = 1.0 / math.sqrt(2 * math.pi) if name == "ive" else math.sqrt(math.pi / 2)
    # c (x**-1/2 + s x**-3/2)
    value = c * (x**-0.5 + (s * x**-1.5 if v == 1.5 else 0.0))
    first = c * (-0.5 * x**-1.5 + (-1.5 * s * x**-2.5 if v == 1.5 else 0.0))
    second = c * (0.75 * x**-2.5 + (3.75 * s * x**-3.5 if v == 1.5 else 0.0))
    return value, first, second


@pytest.mark.parametrize("name", ["ive", "kve"])
@pytest.mark.parametrize("v", [0.5, 1.5])
def test_scaled_bessel_slopes_at_a_huge_x_match_closed_forms(name, v):
    # the recurrence ive' = (ive_{v-1} + ive_{v+1}) / 2 - ive is an O(1 / x) difference of O(1) terms: ive'(0.5, 1e7)
    # was 1e-9 relative off, its second derivative 3%, at 1e9 180 times off; and SciPy's ive / kve are NaN past
    # x ~ 1.07e9 (AMOS), so the value and both derivatives were NaN at 1e12
    f = getattr(tl.special, name)
    x = np.array([1e3, 1e7, 1e9, 1e12, 1e20, 1e100])
    first = tl.grad(lambda t: tl.sum(f(v, t)))
    second = tl.grad(lambda t: tl.sum(first(t)))
    want = _half_integer_scaled(name, v, x)
    for got, ref in zip((f(v, tl.tensor(x)), first(tl.tensor(x)), second(tl.tensor(x))), want):
        np.testing.assert_allclose(got.numpy(), ref, rtol=2e-14)


def test_ive_of_an_integer_order_keeps_its_parity_at_a_huge_negative_x():
    # ive(n, -x) = (-1)**n ive(n, x), and its slope is -(-1)**n ive'(n, x): past AMOS's range too
    x = np.array([1e7, 1e12])
    for n in (0.0, 1.0, 2.0):
        value = tl.special.ive(n, tl.tensor(-x)).numpy()
        np.testing.assert_allclose(value, (-1) ** n * tl.special.ive(n, tl.tensor(x)).numpy(), rtol=1e-15)
        slope = tl.grad(lambda t: tl.sum(tl.special.ive(n, t)))
        np.testing.assert_allclose(slope(tl.tensor(-x)).numpy(), -((-1) ** n) * slope(tl.tensor(x)).numpy(), rtol=1e-15)
    assert np.isnan(tl.special.ive(2.5, tl.tensor(np.array([-1e12]))).numpy()).all()  # SciPy's NaN: x < 0, v not whole


def test_scaled_bessel_slopes_match_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 60
    for name in ("ive", "kve"):
        f = getattr(tl.special, name)
        for v in (0.0, 1.0, 2.5, 10.0):
            for x in (50.0, 1e4, 1e7, 1e10):
                if name == "ive":
                    want = mp.exp(-x) * ((mp.besseli(v - 1, x) + mp.besseli(v + 1, x)) / 2 - mp.besseli(v, x))
                else:
                    want = mp.exp(x) * (mp.besselk(v, x) - (mp.besselk(v - 1, x) + mp.besselk(v + 1, x)) / 2)
                got = tl.grad(lambda t, f=f, v=v: f(v, t))(tl.tensor(np.float64(x))).numpy()
                np.testing.assert_allclose(got, float(want), rtol=5e-14, err_msg=f"{name}({v}, {x})")


# ------------------------------------------------------------------ lpmv
def _legendre_closed_forms(x):
    """(m, v) -> (P_v^m(x), d/dx) with the Condon-Shortley phase, SciPy's lpmv convention."""
    s = np.sqrt(1 - x * x)
    return {
        (0, 2.0): ((3 * x * x - 1) / 2, 3 * x),
        (1, 2.0): (-3 * x * s, -3 * (1 - 2 * x * x) / s),
        (2, 2.0): (3 * (1 - x * x), -6 * x),
        (1, 3.0): (-1.5 * (5 * x * x - 1) * s, -1.5 * (10 * x * s - (5 * x * x - 1) * x / s)),
        (3, 3.0): (-15 * s**3, 45 * x * s),
        (-1, 1.0): (s / 2, -x / (2 * s)),
    }


def test_lpmv_values_and_slopes_match_closed_forms():
    x = np.array([-0.95, -0.4, 0.0, 0.3, 0.77, 0.999])
    for (m, v), (value, slope) in _legendre_closed_forms(x).items():
        np.testing.assert_allclose(tl.special.lpmv(m, v, tl.tensor(x)).numpy(), value, rtol=1e-13, atol=1e-15)
        got = tl.grad(lambda t, m=m, v=v: tl.sum(tl.special.lpmv(m, v, t)))(tl.tensor(x)).numpy()
        np.testing.assert_allclose(got, slope, rtol=1e-12, atol=1e-13, err_msg=f"m={m}, v={v}")


@pytest.mark.parametrize(("m", "v"), [(0, 2.5), (1, 2.5), (2, 3.7), (-1, 2.5), (-2, 1.3), (3, 5.5), (0, -1.5)])
def test_lpmv_slopes_match_central_differences_of_scipy(m, v):
    special = pytest.importorskip("scipy.special")
    x = np.array([-0.9, -0.31, 0.05, 0.5, 0.93])
    h = 1e-6
    want = (special.lpmv(m, v, x + h) - special.lpmv(m, v, x - h)) / (2 * h)
    got = tl.grad(lambda t: tl.sum(tl.special.lpmv(m, v, t)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(tl.special.lpmv(m, v, tl.tensor(x)).numpy(), special.lpmv(m, v, x), rtol=1e-15)
    # and the second derivative, from the first one's central differences
    first = tl.grad(lambda t: tl.sum(tl.special.lpmv(m, v, t)))
    second = tl.grad(lambda t: tl.sum(first(t)))(tl.tensor(x)).numpy()
    differences = (first(tl.tensor(x + h)).numpy() - first(tl.tensor(x - h)).numpy()) / (2 * h)
    np.testing.assert_allclose(second, differences, rtol=1e-6, atol=1e-6)


def test_lpmv_slopes_at_the_ends_are_the_limits():
    # P_v'(1) = v (v + 1) / 2; P_v^2'(1) = -(v + 2)(v + 1) v (v - 1) / 4; m = 1: infinite (sqrt(1 - x**2)); m >= 3: 0;
    # m = -2: -1/4; at -1 the parity (-1)**(v + m + 1) for an integer v; NaN for a non-integer order
    def slope(m, v, x):
        return float(tl.grad(lambda t: tl.special.lpmv(m, v, t))(tl.tensor(np.float64(x))))

    assert slope(0, 2.5, 1.0) == 2.5 * 3.5 / 2 and slope(0, 3.0, 1.0) == 6.0 and slope(0, 3.0, -1.0) == 6.0
    assert slope(0, 2.0, -1.0) == -3.0 and slope(2, 3.0, 1.0) == -30.0 and slope(2, 3.0, -1.0) == -30.0
    assert slope(1, 3.0, 1.0) == np.inf and slope(1, 3.0, -1.0) == -np.inf and slope(-1, 2.0, 1.0) == -np.inf
    assert slope(3, 5.0, 1.0) == 0.0 and slope(-2, 3.0, 1.0) == -0.25
    assert math.isnan(slope(1.5, 3.0, 1.0)) and math.isnan(slope(0, 2.5, -1.0))
    # against one-sided differences of the closed forms where the limit is finite
    x = 1 - 1e-7
    np.testing.assert_allclose(slope(2, 2.0, x), -6.0, rtol=1e-6)


def test_lpmv_dtypes_nan_outside_and_clear_errors():
    got = tl.special.lpmv(1, 2.0, tl.tensor(np.array([0.5, 1.5, np.nan], np.float32)))
    assert got.dtype == tl.float32
    np.testing.assert_allclose(got.numpy()[0], np.float32(-3 * 0.5 * math.sqrt(0.75)), rtol=1e-6)
    assert np.isnan(got.numpy()[1:]).all()  # SciPy: NaN outside [-1, 1] for m != 0, and for a NaN x
    assert np.isnan(tl.special.lpmv(1.5, 2.0, tl.tensor(0.5)).numpy())  # a non-integer order
    g32 = tl.grad(lambda t: tl.special.lpmv(2, 3.0, t))(tl.tensor(np.float32(0.999)))
    assert g32.dtype == tl.float32
    x32 = float(np.float32(0.999))
    np.testing.assert_allclose(g32.numpy(), 15 * (1 - 3 * x32 * x32), rtol=1e-6)  # P_3^2 = 15 x (1 - x**2)
    with pytest.raises(LookupError, match=r"Lpmv: the order m is an integer"):
        tl.grad(lambda m: tl.special.lpmv(m, 2.0, tl.tensor(0.5, "float64")))(tl.tensor(1.0, "float64"))
    with pytest.raises(LookupError, match=r"Lpmv: the derivative in the degree v is not implemented"):
        tl.grad(lambda v: tl.special.lpmv(1, v, tl.tensor(0.5, "float64")))(tl.tensor(2.0, "float64"))


def test_lpmv_broadcasts_and_traces_with_unknown_sizes():
    m = np.array([[0.0], [1.0], [2.0]])
    v = np.array([2.0, 3.5])
    x = np.linspace(-0.9, 0.9, 4)[:, None, None]
    eager = tl.special.lpmv(m, v, x)
    assert eager.shape == (4, 3, 2)
    traced = tl.function(lambda m, v, x: tl.special.lpmv(m, v, x))
    np.testing.assert_array_equal(traced(m, v, x).numpy(), eager.numpy())
    graph = tl.function(lambda x: tl.special.lpmv(1, 2.0, x)).get_graph(tl.TensorSpec((None,), "float64"))
    assert graph.outputs[0].shape == (None,)
    x = np.array([0.5, -0.2, 0.9])
    np.testing.assert_allclose(graph(x).numpy(), -3 * x * np.sqrt(1 - x * x), rtol=1e-14)


# ------------------------------------------------------------------ the counts at p = 0 and p = 1
def _slope(f, p):
    return float(tl.grad(f)(tl.tensor(np.float64(p))))


def _one_sided(f, p, h=1e-7):
    """The one-sided difference of the float64 NumPy function ``f`` into [0, 1] from ``p``."""
    step = h if p == 0.0 else -h
    return (f(p + step) - f(p)) / step


@pytest.mark.parametrize(
    ("name", "k", "shapes", "p", "mass"),
    [
        ("binom", 1.0, (10.0,), 0.0, lambda p: 10 * p * (1 - p) ** 9),  # slope 10, was 0 (exp(-inf))
        ("binom", 0.0, (10.0,), 0.0, lambda p: (1 - p) ** 10),
        ("binom", 9.0, (10.0,), 1.0, lambda p: 10 * p**9 * (1 - p)),  # slope -10, was 0
        ("binom", 10.0, (10.0,), 1.0, lambda p: p**10),
        ("binom", 0.0, (1.0,), 1.0, lambda p: 1 - p),  # was NaN
        ("bernoulli", 1.0, (), 0.0, lambda p: p),  # was NaN
        ("bernoulli", 0.0, (), 1.0, lambda p: 1 - p),
        ("geom", 2.0, (), 1.0, lambda p: (1 - p) * p),  # was NaN
        ("geom", 1.0, (), 1.0, lambda p: p),
        ("nbinom", 1.0, (2.5,), 1.0, lambda p: 2.5 * p**2.5 * (1 - p)),  # C(n, 1) p**n (1 - p): slope -n
        ("nbinom", 0.0, (2.5,), 1.0, lambda p: p**2.5),
    ],
)
def test_pmf_gradients_at_a_probability_of_zero_or_one_are_the_one_sided_limits(name, k, shapes, p, mass):
    # exp(logpmf) at logpmf = -inf has the gradient 0 (where the mass rises linearly: wrong) or 0 * inf = NaN
    pmf = getattr(tl.stats, name).pmf
    got = _slope(lambda q: pmf(tl.tensor(np.float64(k)), *shapes, q), p)
    want = _one_sided(mass, p)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert float(pmf(tl.tensor(np.float64(k)), *shapes, tl.tensor(np.float64(p)))) == mass(p)


def test_count_tails_and_off_support_gradients_at_a_probability_of_one_are_finite():
    # geom's cdf/sf/logcdf went through log1p(-p), whose derivative at p = 1 is infinite (NaN gradients; the
    # limits: cdf'(1) = 1 for k = 1 and 0 beyond); off the support, and in a tail that is constant there, the
    # formula at its stand-in k met log(1 - p) (binom.logcdf(10, 10, p) at p = 1, binom.pmf(11, 10, p)): 0
    k = tl.tensor(np.float64(1.0))
    assert _slope(lambda q: tl.stats.geom.cdf(k, q), 1.0) == 1.0
    assert _slope(lambda q: tl.stats.geom.sf(k, q), 1.0) == -1.0
    assert _slope(lambda q: tl.stats.geom.logcdf(k, q), 1.0) == 1.0
    assert _slope(lambda q: tl.stats.geom.cdf(tl.tensor(np.float64(3.0)), q), 1.0) == 0.0
    for k, method in ((10.0, "logcdf"), (11.0, "pmf"), (-1.0, "pmf"), (11.0, "logpmf"), (10.0, "cdf")):
        f = getattr(tl.stats.binom, method)
        assert _slope(lambda q: f(tl.tensor(np.float64(k)), 10.0, q), 1.0) == 0.0, (k, method)
    assert _slope(lambda q: tl.stats.binom.logsf(tl.tensor(np.float64(10.0)), 10.0, q), 0.0) == 0.0
    # and geom's tails keep their digits for a small p (exp(k log1p(-p)), not (1 - p)**k)
    got = tl.stats.geom.cdf(tl.tensor(np.float64(3.0)), tl.tensor(np.float64(1e-12))).numpy()
    np.testing.assert_allclose(got, -np.expm1(3 * np.log1p(-1e-12)), rtol=1e-15)


@pytest.mark.parametrize("name", ["binom", "bernoulli", "geom", "nbinom"])
def test_count_gradients_inside_match_central_differences(name):
    special = pytest.importorskip("scipy.stats")
    shapes = {"binom": (12.0,), "bernoulli": (), "geom": (), "nbinom": (3.5,)}[name]
    ks = np.array([0.0, 1.0, 3.0, 7.0, 12.0])
    for method in ("pmf", "logpmf", "cdf", "sf", "logcdf", "logsf"):
        f, ref = getattr(getattr(tl.stats, name), method), getattr(getattr(special, name), method)
        for p in (0.07, 0.5, 0.93):
            got = tl.grad(lambda q: tl.sum(f(tl.tensor(ks), *shapes, q)))(tl.tensor(np.float64(p))).numpy()
            want = (np.sum(ref(ks, *shapes, p + 1e-7)) - np.sum(ref(ks, *shapes, p - 1e-7))) / 2e-7
            if np.isfinite(want):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=f"{name}.{method} at {p}")


# ------------------------------------------------------------------ the gamma family next to its poles, tiny shapes
def _digamma_series(x):
    """psi(x) next to the pole at -n (x = -n + e): -1/e + psi(n + 1) + sum_k ... to O(e): -1/e + psi(n + 1) + e
    (zeta(2) + sum_{j<=n} 1/j**2), from the reflection psi(x) = psi(1 - x) - pi cot(pi x) (float64, closed form)."""
    n = round(-x)
    e = x + n
    harmonic = sum(1.0 / j for j in range(1, n + 1))
    squares = sum(1.0 / j**2 for j in range(1, n + 1))
    return -1.0 / e + (-0.5772156649015329 + harmonic) + e * (math.pi**2 / 6 + squares)


@pytest.mark.parametrize("x", [-4 + 1e-12, -1 + 1e-14, -1 + 1e-9, -7 - 3e-11, -2e-13])
def test_digamma_next_to_a_negative_pole(x):
    # SciPy's psi reflects with tan(pi x) of the rounded pi x: psi(-1 + 1e-14) was 0.8% off, psi(-4 + 1e-12) 6e-5;
    # gammaln's gradient is digamma, off the same
    want = _digamma_series(x)
    np.testing.assert_allclose(float(tl.special.digamma(tl.tensor(np.float64(x)))), want, rtol=1e-13)
    np.testing.assert_allclose(float(tl.grad(tl.special.gammaln)(tl.tensor(np.float64(x)))), want, rtol=1e-13)


def test_digamma_off_the_poles_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    x = np.array([-0.5, -1.5, -2.25, -0.75, -1e6 - 0.3, -37.1, 2.5])
    want = [float(mp.digamma(mp.mpf(v))) for v in x]
    np.testing.assert_allclose(tl.special.digamma(tl.tensor(x)).numpy(), want, rtol=2e-15)
    assert np.isnan(tl.special.digamma(tl.tensor(np.array([-3.0, -np.inf]))).numpy()).all()


@pytest.mark.parametrize("a", [1e-10, 1e-14, 3e-7])
def test_gamma_density_for_a_tiny_shape_keeps_its_digits(a):
    # gamma_log_density was the Poisson form at k = a - 1: gammaln((a - 1) + 1) lost a's digits (a - 1 rounds), so
    # gammainc's slope in x at a = 1e-10 was 8e-8 relative off, and gamma.pdf with it
    x = np.array([1e-5, 0.5, 1.0, 30.0])
    want = np.exp((a - 1) * np.log(x) - x - math.lgamma(a))
    got = tl.grad(lambda t: tl.sum(tl.special.gammainc(tl.tensor(np.float64(a)), t)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(tl.stats.gamma.pdf(tl.tensor(x), a).numpy(), want, rtol=1e-14)

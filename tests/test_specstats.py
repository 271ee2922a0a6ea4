"""``tl.special`` and ``tl.stats``, the specstats round: what the specialfix and statsfix notes left open. The second
derivatives of ``hyp1f1`` in its parameters and of the incomplete elliptic integrals and ``ellipj`` in ``m``; the
densities' gradients at the end of their support (rayleigh, weibull_min, chi2, gamma, beta: NaN from exp(-inf)); and
``multivariate_normal.cdf`` in one and two dimensions and for a diagonal covariance.

References: mpmath (importorskip) for high-order derivatives, float64 central, second and one-sided differences of
SciPy, SciPy's quadrature (the bivariate normal as a one-dimensional integral), closed forms (``1F1(a; a; x) =
e**x``, the complete elliptic integrals at phi = pi/2, the bivariate normal's partials), scipy.stats' values.
"""

import numpy as np
import pytest
import scipy.special as sp

import tensorlib as tl
from tests.test_specialfix import HYP1F1_POINTS as SPECIALFIX_HYP1F1_POINTS


def _f64(*values):
    return [tl.tensor(np.asarray(v, np.float64)) for v in values]


def _second(f, *args, first, then, dtype=np.float64):
    """``d/d(then) d/d(first) sum(f)`` at ``args``, as a NumPy array."""
    tensors = [tl.tensor(np.asarray(v, dtype)) for v in args]
    inner = tl.grad(lambda *v: tl.sum(f(*v)), argnums=first)
    return tl.grad(lambda *v: tl.sum(inner(*v)), argnums=then)(*tensors).numpy()


# ---------------------------------------------------------------- hyp1f1: second derivatives in a and b
# last session's points, but for |x| = 800 (mpmath's eighth derivatives there take seconds)
HYP1F1_POINTS = [p for p in SPECIALFIX_HYP1F1_POINTS if abs(p[2]) < 500]


@pytest.mark.parametrize("a, b, x", HYP1F1_POINTS)
def test_hyp1f1_hessian_in_a_b_x_matches_mpmath(a, b, x):
    mpmath = pytest.importorskip("mpmath")
    got = tl.hessian(lambda v: tl.special.hyp1f1(v[0], v[1], v[2]))(*_f64([a, b, x])).numpy()
    want = np.zeros((3, 3))
    with mpmath.workdps(40):
        for i in range(3):
            for j in range(3):
                orders = [0, 0, 0]
                orders[i] += 1
                orders[j] += 1
                point = tuple(mpmath.mpf(v) for v in (a, b, x))
                want[i, j] = float(mpmath.diff(lambda *v: mpmath.hyp1f1(*v), point, tuple(orders)))
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13 * np.abs(want).max())


def test_hyp1f1_second_derivatives_in_a_and_b_match_differences_of_scipy_and_a_closed_form():
    rng = np.random.default_rng(1)
    a, b, x = rng.uniform(-2.5, 3.0, 30), rng.uniform(0.5, 4.0, 30), rng.uniform(-12.0, 12.0, 30)
    h = 1e-3
    f = lambda a, b: sp.hyp1f1(a, b, x)
    want = {
        (0, 0): (f(a + h, b) - 2 * f(a, b) + f(a - h, b)) / h**2,
        (1, 1): (f(a, b + h) - 2 * f(a, b) + f(a, b - h)) / h**2,
        (0, 1): (f(a + h, b + h) - f(a + h, b - h) - f(a - h, b + h) + f(a - h, b - h)) / (4 * h * h),
    }
    for (first, then), expected in want.items():
        got = _second(tl.special.hyp1f1, a, b, x, first=first, then=then)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    # 1F1(c; c; x) = e**x for every c: along a = b = c the second derivative F_aa + 2 F_ab + F_bb is 0, the first 0
    c, xs = np.array([0.5, 2.0, 3.5, 1.0]), np.array([-6.0, 0.5, 4.0, 20.0])
    along = tl.grad(lambda c: tl.sum(tl.grad(lambda c: tl.sum(tl.special.hyp1f1(c, c, xs)))(c)))(*_f64(c)).numpy()
    scale = np.abs(_second(tl.special.hyp1f1, c, c, xs, first=0, then=0))
    np.testing.assert_allclose(along, 0.0, atol=1e-13 * scale.max())
    # mixed in x and twice in a: d/dx F_aa = d2/da2 ((a / b) F(a + 1; b + 1; x)) against differences in x
    aa = lambda xs: _second(tl.special.hyp1f1, a, b, xs, first=0, then=0)
    twice_in_a = lambda a, x: tl.grad(lambda a: tl.sum(tl.grad(lambda a: tl.sum(tl.special.hyp1f1(a, b, x)))(a)))(a)
    got = tl.grad(lambda x: tl.sum(twice_in_a(tl.tensor(a), x)))(*_f64(x)).numpy()
    np.testing.assert_allclose(got, (aa(x + 1e-5) - aa(x - 1e-5)) / 2e-5, rtol=1e-6, atol=1e-8)


def test_hyp1f1_third_derivative_in_the_parameters_refuses_clearly():
    f = lambda a: tl.grad(lambda a: tl.grad(tl.special.hyp1f1)(a, 2.0, 1.0))(a)
    with pytest.raises(LookupError, match=r"Hyp1f1Grad: the third derivatives of hyp1f1 in a and b are not"):
        tl.grad(f)(*_f64(1.0))


# ---------------------------------------------------------------- elliptic integrals: second derivatives in m
ELLIPTIC_POINTS = [(phi, m) for phi in (1e-4, 0.3, 1.5, 4.0, -2.5) for m in (-50.0, -0.3, 0.0, 1e-8, 0.49, 0.51, 0.9)]


@pytest.mark.parametrize("name, reference", [("ellipkinc", "ellipf"), ("ellipeinc", "ellipe")])
def test_incomplete_elliptic_second_derivatives_in_m_match_mpmath(name, reference):
    mpmath = pytest.importorskip("mpmath")
    phi, m = (np.array(v) for v in zip(*ELLIPTIC_POINTS))
    got = _second(getattr(tl.special, name), phi, m, first=1, then=1)
    with mpmath.workdps(40):
        f = getattr(mpmath, reference)
        want = [float(mpmath.diff(lambda t: f(mpmath.mpf(p), t), mpmath.mpf(q), 2)) for p, q in ELLIPTIC_POINTS]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("name", ["ellipkinc", "ellipeinc"])
def test_incomplete_elliptic_second_derivatives_match_differences_of_scipy_and_the_complete_ones(name):
    rng = np.random.default_rng(2)
    phi, m = rng.uniform(-4.0, 4.0, 40), rng.uniform(-3.0, 0.9, 40)
    f, h = getattr(sp, name), 1e-3
    want = (f(phi, m + h) - 2 * f(phi, m) + f(phi, m - h)) / h**2
    np.testing.assert_allclose(_second(getattr(tl.special, name), phi, m, first=1, then=1), want, rtol=1e-5, atol=1e-8)
    # mixed: d/dphi d/dm against differences in phi of SciPy's m-differences
    k = 1e-4
    mixed = (f(phi + k, m + h) - f(phi + k, m - h) - f(phi - k, m + h) + f(phi - k, m - h)) / (4 * h * k)
    np.testing.assert_allclose(_second(getattr(tl.special, name), phi, m, first=1, then=0), mixed, rtol=1e-5, atol=1e-7)
    # at phi = pi/2 they are the complete integrals (whose second derivatives are formulas in K and E)
    complete = getattr(tl.special, {"ellipkinc": "ellipk", "ellipeinc": "ellipe"}[name])
    m = np.array([-2.0, 1e-9, 0.3, 0.8])
    got = _second(getattr(tl.special, name), np.full(4, np.pi / 2), m, first=1, then=1)
    np.testing.assert_allclose(got, _second(complete, m, first=0, then=0), rtol=1e-12)
    with pytest.raises(LookupError, match=r"EllipticIncGradM: the third derivatives of ellipkinc and ellipeinc"):
        by_m = tl.grad(lambda m: getattr(tl.special, name)(1.0, m))
        tl.grad(tl.grad(by_m))(*_f64(0.3))


def test_ellipj_second_derivatives_in_m_match_differences_of_scipy_and_mpmath():
    u, m = np.array([0.3, 1.0, 2.5, -1.7, 1.0]), np.array([0.2, 0.7, 0.95, 0.4, 0.0])
    h = 1e-3
    for k in range(4):
        inside = m > 0  # SciPy is NaN below m = 0
        f = lambda m: sp.ellipj(u[inside], m)[k]
        got = _second(lambda u, m: tl.special.ellipj(u, m)[k], u, m, first=1, then=1)
        want = (f(m[inside] + h) - 2 * f(m[inside]) + f(m[inside] - h)) / h**2
        np.testing.assert_allclose(got[inside], want, rtol=1e-5, atol=1e-8)
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        for k, name in enumerate(["sn", "cn", "dn"]):
            got = _second(lambda u, m: tl.special.ellipj(u, m)[k], u, m, first=1, then=1)
            want = [
                float(mpmath.re(mpmath.diff(lambda t: mpmath.ellipfun(name, mpmath.mpf(a), m=t), mpmath.mpf(b), 2)))
                for a, b in zip(u, m)
            ]
            np.testing.assert_allclose(got, want, rtol=1e-10)


# ---------------------------------------------------------------- densities at the end of their support
# (family, shape parameters, the end, the sign of "inside"); the density is C d**k near the end (d the distance)
DENSITY_ENDS = [
    ("rayleigh", (), 0.0, 1),  # k = 1
    ("weibull_min", (1.7,), 0.0, 1),  # k = 0.7: inf
    ("weibull_min", (2.0,), 0.0, 1),
    ("weibull_min", (3.5,), 0.0, 1),
    ("weibull_min", (1.0,), 0.0, 1),  # k = 0: the exponential
    ("chi2", (3.0,), 0.0, 1),
    ("chi2", (4.0,), 0.0, 1),
    ("chi2", (2.0,), 0.0, 1),
    ("gamma", (2.5,), 0.0, 1),
    ("gamma", (2.0,), 0.0, 1),
    ("gamma", (1.5,), 0.0, 1),
    ("beta", (2.0, 1.5), 0.0, 1),
    ("beta", (2.0, 1.5), 1.0, -1),  # k = 0.5 at 1
    ("beta", (3.0, 2.0), 1.0, -1),
]


@pytest.mark.parametrize("name, shapes, end, inside", DENSITY_ENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pdf_gradients_at_the_end_of_the_support_are_the_limits_from_inside(name, shapes, end, inside, dtype):
    # exp(logpdf) at the end was exp(-inf) with the gradient 0 * inf = NaN (rayleigh.pdf'(0) is 1, gamma(2).pdf'(0) 1)
    ss = pytest.importorskip("scipy.stats")
    loc, scale = 0.5, 2.0
    x = loc + scale * end
    f = lambda x, loc, scale: getattr(tl.stats, name).pdf(x, *shapes, loc=loc, scale=scale)
    args = [tl.tensor(np.asarray(v, dtype)) for v in (x, loc, scale)]
    by_x, by_loc, by_scale = (g.numpy() for g in tl.grad(f, argnums=(0, 1, 2))(*args))
    reference = lambda x: getattr(ss, name).pdf(x, *shapes, loc=loc, scale=scale)
    h = 1e-7 * inside
    one_sided = (reference(x + h) - reference(x)) / h
    closer = (reference(x + h / 100) - reference(x)) / (h / 100)
    if np.abs(closer) > 2 * np.abs(one_sided):  # a power below 1: the limit is infinite, with the difference's sign
        assert by_x == np.sign(one_sided) * np.inf and by_loc == -by_x
    else:
        # the one-sided difference's error shrinks with the step (like h**(k - 1) between k = 1 and 2)
        np.testing.assert_allclose(by_x, closer, rtol=1e-5, atol=2 * np.abs(closer - one_sided) + 1e-6)
        np.testing.assert_allclose(by_loc, -by_x, rtol=1e-6)
    # d/dscale of pdf((x - loc) / scale) / scale = -z d/dx - pdf / scale: the far end (beta's z = 1) moves, loc not
    want_scale = (-by_x * end if end else 0.0) - reference(x) / scale
    np.testing.assert_allclose(by_scale, want_scale, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(f(*args).numpy(), reference(x), rtol=1e-6, atol=1e-300)


# ---------------------------------------------------------------- multivariate_normal.cdf (k = 1, 2, diagonal)
def _bivariate_by_quadrature(h, k, rho):
    """P(X <= h, Y <= k) = int_{-inf}^h phi(t) Phi((k - rho t) / sqrt(1 - rho**2)) dt by SciPy's quad."""
    from scipy.integrate import quad

    s = np.sqrt(1.0 - rho * rho)
    density = lambda t: np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi) * sp.ndtr((k - rho * t) / s)
    return quad(density, -np.inf, h, epsabs=1e-15, epsrel=1e-13)[0]


BIVARIATE_POINTS = [
    (0.0, 0.0, 0.5),
    (0.0, 1.0, 0.3),
    (1.0, -0.0, 0.0),
    (1e-200, -1e-210, 0.0),  # h k underflows: its sign still picks Owen's branch
    (0.0, -2.0, 0.2),
    (-1.0, 2.0, 0.9),
    (2.0, -1.0, -0.95),
    (-3.0, -3.0, 0.5),
    (-3.0, -3.0, -0.5),
    (5.0, 5.0, 0.99),
    (-8.0, 1.0, 0.7),
    (1.5, 0.7, -0.3),
]


def test_multivariate_normal_cdf_in_two_dimensions_matches_quadrature_and_its_gradients_the_closed_forms():
    h, k, rho = (np.array(v) for v in zip(*BIVARIATE_POINTS))
    mean, sd = np.array([0.3, -1.2]), np.array([1.5, 0.4])
    x = np.stack([mean[0] + sd[0] * h, mean[1] + sd[1] * k], axis=-1)
    covs = np.array([[[sd[0] ** 2, r * sd[0] * sd[1]], [r * sd[0] * sd[1], sd[1] ** 2]] for r in rho])
    want = np.array([_bivariate_by_quadrature(*p) for p in BIVARIATE_POINTS])
    cdf = tl.stats.multivariate_normal.cdf
    np.testing.assert_allclose(cdf(x, mean, covs).numpy(), want, rtol=1e-13, atol=1e-15)
    # d/dx_0 = phi(h) Phi((k - rho h) / s) / sd_0 (central differences of the quadrature agree), d/drho the density
    by_x, by_cov = tl.grad(lambda x, c: tl.sum(cdf(x, mean, c)), argnums=(0, 1))(*_f64(x, covs))
    s = np.sqrt(1 - rho**2)
    phi = lambda t: np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(by_x.numpy()[:, 0], phi(h) * sp.ndtr((k - rho * h) / s) / sd[0], rtol=1e-12)
    np.testing.assert_allclose(by_x.numpy()[:, 1], phi(k) * sp.ndtr((h - rho * k) / s) / sd[1], rtol=1e-12)
    density = np.exp(-(h * h - 2 * rho * h * k + k * k) / (2 * s * s)) / (2 * np.pi * s)
    # the covariance's off-diagonal pair shares d/dcov01 = density / (sd_0 sd_1) (the gradient is symmetric)
    np.testing.assert_allclose(by_cov.numpy()[:, 0, 1], 0.5 * density / (sd[0] * sd[1]), rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(by_cov.numpy()[:, 0, 1], by_cov.numpy()[:, 1, 0])
    i, step = 7, 1e-6  # a central difference of the quadrature in h
    central = _bivariate_by_quadrature(h[i] + step, k[i], rho[i]) - _bivariate_by_quadrature(h[i] - step, k[i], rho[i])
    np.testing.assert_allclose(by_x.numpy()[i, 0] * sd[0], central / (2 * step), rtol=1e-6)


def test_multivariate_normal_cdf_edges_one_dimension_diagonal_and_refusals():
    cdf = tl.stats.multivariate_normal.cdf
    eye = np.eye(2)
    inf = np.inf
    x = np.array([[inf, 0.5], [0.5, inf], [-inf, 0.5], [inf, inf], [np.nan, 0.0]])
    np.testing.assert_allclose(cdf(x, np.zeros(2), eye).numpy()[:4], [sp.ndtr(0.5), sp.ndtr(0.5), 0.0, 1.0])
    assert np.isnan(cdf(x, np.zeros(2), eye).numpy()[4])
    for r, want in ((1.0, sp.ndtr(-0.3)), (-1.0, sp.ndtr(0.4) - sp.ndtr(0.3))):  # degenerate: min and max(.., 0)
        got = cdf(np.array([0.4, -0.3]), np.zeros(2), np.array([[1.0, r], [r, 1.0]])).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-14)
    # one dimension, a diagonal (1-D cov) in three, a scalar cov: ndtr and their products
    np.testing.assert_allclose(cdf(np.array([0.7]), np.array([0.2]), np.array([[4.0]])).numpy(), sp.ndtr(0.25))
    x3, var = np.array([0.1, -0.4, 1.2]), np.array([1.0, 0.25, 9.0])
    np.testing.assert_allclose(cdf(x3, np.zeros(3), var).numpy(), np.prod(sp.ndtr(x3 / np.sqrt(var))), rtol=1e-14)
    np.testing.assert_allclose(cdf(x3, 0.0, 4.0).numpy(), sp.ndtr(x3 / 2.0), rtol=1e-14)
    # float32: the float64 value rounded once
    got32 = cdf(np.float32([0.4, -0.3]), np.zeros(2, np.float32), np.float32([[1.0, 0.3], [0.3, 1.0]]))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32.numpy(), _bivariate_by_quadrature(0.4, -0.3, np.float32(0.3)), rtol=1e-6)
    # a full identity cov in three (Genz's integration, tests/test_mvn_genz.py): the product, to its accuracy
    np.testing.assert_allclose(cdf(x3, np.zeros(3), np.eye(3)).numpy(), np.prod(sp.ndtr(x3)), atol=1e-9)
    with pytest.raises(ValueError, match=r"multivariate_normal.cdf: x \(..., k\), mean \(..., k\) and cov"):
        cdf(x3, np.zeros(2), eye)
    g = tl.function(lambda x, m, c: cdf(x, m, c))
    with pytest.raises(ValueError, match=r"multivariate_normal.cdf: the number of dimensions must be known"):
        g.get_graph(
            tl.TensorSpec((None,), "float64"), tl.TensorSpec((None,), "float64"), tl.TensorSpec((None, None), "float64")
        )


def test_multivariate_normal_cdf_second_order_modes_and_scipy():
    ss = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    cov, mean, x = np.array([[2.0, 0.6], [0.6, 0.5]]), np.array([0.3, -0.2]), rng.normal(size=(6, 2))
    cdf = lambda x: tl.stats.multivariate_normal.cdf(x, mean, cov)
    want = ss.multivariate_normal(mean, cov).cdf(x)  # Genz's integration, 1e-5 absolute by default
    np.testing.assert_allclose(cdf(x).numpy(), want, atol=1e-5)
    np.testing.assert_array_equal(tl.function(cdf)(x).numpy(), cdf(x).numpy())
    # the Hessian in x of one point against central differences of the gradient
    point = x[0]
    hess = tl.hessian(cdf)(*_f64(point)).numpy()
    grad = lambda p: tl.grad(cdf)(*_f64(p)).numpy()
    step = 1e-6
    numeric = np.stack([(grad(point + step * e) - grad(point - step * e)) / (2 * step) for e in np.eye(2)])
    np.testing.assert_allclose(hess, numeric, rtol=1e-6, atol=1e-9)

"""``tl.special`` and ``tl.stats``, the specstats round: what the specialfix and statsfix notes left open (the second
derivatives of ``hyp1f1`` in its parameters, ...) and a sweep of values and gradients at the edges.

References: mpmath (importorskip) for high-order derivatives, float64 central differences of SciPy, closed forms
(``1F1(a; a; x) = e**x``), and SciPy's values.
"""

import numpy as np
import pytest
import scipy.special as sp

import tensorlib as tl


def _f64(*values):
    return [tl.tensor(np.asarray(v, np.float64)) for v in values]


def _second(f, *args, first, then, dtype=np.float64):
    """``d/d(then) d/d(first) sum(f)`` at ``args``, as a NumPy array."""
    tensors = [tl.tensor(np.asarray(v, dtype)) for v in args]
    inner = tl.grad(lambda *v: tl.sum(f(*v)), argnums=first)
    return tl.grad(lambda *v: tl.sum(inner(*v)), argnums=then)(*tensors).numpy()


# ---------------------------------------------------------------- hyp1f1: second derivatives in a and b
HYP1F1_POINTS = [
    (1.0, 2.0, 1.0),
    (0.5, 1.5, -3.0),
    (2.0, 3.0, 10.0),
    (3.0, 1.0, -20.0),
    (-2.5, 1.0, 3.0),
    (0.7, -0.5, 2.0),
    (-3.0, 2.0, 4.0),
    (5.0, 2.0, -100.0),
    (0.3, 4.0, 300.0),
    (1.5, 2.5, 1e-8),
]


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

"""``tl.special`` attacked as an adversary: gradients where the function is smooth but the textbook formula meets a
pole, a log of a rounded argument or a product 0 * inf (Spence's function near 0, binom, poch and beta where a
gamma in the denominator has a pole), and the functions of ``jax.scipy.special`` that were missing.

References: closed forms, float64 central differences of SciPy, SciPy's values; mpmath where installed
(importorskip)."""

import math

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


def _central(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


# ---------------------------------------------------------------- spence
def test_spence_gradient_near_0_is_log_z_over_1_minus_z_to_full_precision():
    z = np.array([1e-300, 3e-14, 1e-10, 1.2345e-7, 0.3, 0.9, 1.5, 40.0])
    want = np.log(z) / (1.0 - z)  # 1 - z rounds only where it does not matter (z < 2**-53 or far from 1)
    np.testing.assert_allclose(_grad(tl.special.spence, z), want, rtol=1e-14)
    z32 = np.array([1e-3, 1e-30, 0.1], np.float32)
    got32 = tl.grad(lambda z: tl.sum(tl.special.spence(z)))(tl.tensor(z32)).numpy()
    z64 = z32.astype(np.float64)
    np.testing.assert_allclose(got32, np.log(z64) / (1.0 - z64), rtol=2e-7)


# ---------------------------------------------------------------- gamma ratios at a pole of a denominator gamma
# (function, args, argnum): F = 0 there (1 / Gamma(pole) = 0) but smooth; the textbook F * (digamma - digamma) is NaN
POLE_POINTS = [
    ("binom", (3.0, 5.0), 0),  # Gamma(n - k + 1) = Gamma(-1)
    ("binom", (3.0, 5.0), 1),
    ("binom", (0.5, 2.5), 0),
    ("binom", (0.5, 2.5), 1),
    ("binom", (3.5, -1.0), 1),  # Gamma(k + 1) = Gamma(0)
    ("binom", (3.0, 500.0), 0),  # 497! and 500! overflow; their quotient does not
    ("binom", (200.5, 205.5), 1),
    ("poch", (-2.0, 0.5), 0),  # Gamma(z) = Gamma(-2)
    ("poch", (-2.0, 3.0), 0),  # z (z + 1) (z + 2) at -2
    ("poch", (-5.0, 2.5), 0),
    ("beta", (-0.5, -0.5), 0),  # Gamma(a + b) = Gamma(-1)
    ("beta", (1.5, -1.5), 1),
    ("beta", (0.3, -3.3), 0),
]


def _scipy_partials(name, args, argnum, h):
    """First and second central differences of SciPy in float64."""

    def f(t):
        shifted = list(args)
        shifted[argnum] = args[argnum] + t
        return getattr(sp, name)(*shifted)

    return (f(h) - f(-h)) / (2 * h), (f(h) - 2 * f(0.0) + f(-h)) / h**2


@pytest.mark.parametrize("name, args, argnum", POLE_POINTS)
def test_gamma_ratio_gradients_at_a_denominator_pole_match_central_differences(name, args, argnum):
    f = getattr(tl.special, name)
    scale = max(1.0, abs(args[argnum]))
    first, _ = _scipy_partials(name, args, argnum, 1e-6 * scale)
    _, second = _scipy_partials(name, args, argnum, 1e-4)
    x = _f64(*args)
    got = tl.grad(f, argnums=argnum)(*x).numpy()
    got2 = tl.grad(lambda *v: tl.grad(f, argnums=argnum)(*v), argnums=argnum)(*x).numpy()
    assert np.isfinite(got) and np.isfinite(got2)
    np.testing.assert_allclose(got, first, rtol=1e-7, atol=1e-14)
    np.testing.assert_allclose(got2, second, rtol=1e-4, atol=1e-12)


def test_binom_gradients_at_integer_n_below_k_are_the_polynomial_derivatives():
    # binom(n, 5) = n (n - 1) (n - 2) (n - 3) (n - 4) / 120; d/dk at n = 3 by symmetry of the digamma terms
    poly = np.poly1d(np.poly([0.0, 1.0, 2.0, 3.0, 4.0])) / 120.0
    n, k = _f64(3.0, 5.0)
    first = tl.grad(tl.special.binom)(n, k)
    second = tl.grad(lambda n, k: tl.grad(tl.special.binom)(n, k))(n, k)
    mixed = tl.grad(lambda n, k: tl.grad(tl.special.binom)(n, k), argnums=1)(n, k)
    np.testing.assert_allclose([float(first), float(second)], [poly.deriv()(3.0), poly.deriv(2)(3.0)], rtol=1e-13)
    assert float(tl.special.binom(n, k)) == 0.0
    # the mixed partial against a central difference of the n-gradient in k (float64 SciPy)
    h = 1e-5
    want = (
        (sp.binom(3.0 + h, 5.0 + h) - sp.binom(3.0 - h, 5.0 + h))
        - (sp.binom(3.0 + h, 5.0 - h) - sp.binom(3.0 - h, 5.0 - h))
    ) / (4 * h * h)
    np.testing.assert_allclose(float(mixed), want, rtol=1e-5)
    f32 = tl.grad(tl.special.binom)(tl.tensor(np.float32(3.0)), tl.tensor(np.float32(5.0)))
    assert f32.dtype == tl.float32
    np.testing.assert_allclose(float(f32), -0.05, rtol=5e-7)


def test_gamma_ratio_gradients_at_a_pole_match_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    cases = [
        (tl.special.binom, mp.binomial, (0.5, 2.5)),
        (tl.special.poch, mp.rf, (-5.0, 2.5)),
        (tl.special.beta, mp.beta, (0.3, -3.3)),
    ]
    for f, ref, args in cases:
        for i in (0, 1):
            for j in (0, 1):
                order = [0, 0]
                order[i] += 1
                order[j] += 1
                want = float(mp.diff(ref, args, tuple(order)))
                got = tl.grad(lambda *v, i=i, f=f: tl.grad(f, argnums=i)(*v), argnums=j)(*_f64(*args))
                np.testing.assert_allclose(float(got), want, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- float32 gradients of the inverse incomplete functions
def _implicit_reference(forward, density_sign, params, q, wrt):
    """d inverse / d(params[wrt] or q) in float64 by the implicit function theorem: x = SciPy's inverse,
    dF/dx the Gamma or Beta density (scipy.stats), dF/dparameter a central difference of SciPy's F."""
    import scipy.stats

    x = getattr(sp, forward + "inv")(*params, q)
    dist = scipy.stats.gamma(params[0]) if len(params) == 1 else scipy.stats.beta(*params)
    slope_x = density_sign * dist.pdf(x)
    if wrt == len(params):
        return 1.0 / slope_x
    h = 1e-6 * params[wrt]
    up, down = list(params), list(params)
    up[wrt] += h
    down[wrt] -= h
    slope = (getattr(sp, forward)(*up, x) - getattr(sp, forward)(*down, x)) / (2 * h)
    return -slope / slope_x


INVERSE_CASES = [
    ("betaincc", -1.0, (30.0, 0.5), 0.01),  # 1 - x = 2.6e-6: float32 x kept two digits of it
    ("betainc", 1.0, (30.0, 0.5), 0.9),
    ("betainc", 1.0, (2.0, 5.0), 0.3),
    ("gammainc", 1.0, (100.0,), 0.01),
    ("gammaincc", -1.0, (0.1,), 0.99),
]


@pytest.mark.parametrize("forward, density_sign, params, q", INVERSE_CASES)
def test_float32_gradients_of_the_inverses_are_one_rounding_of_the_float64_value(forward, density_sign, params, q):
    inverse = getattr(tl.special, forward + "inv")
    args = [np.float32(v) for v in (*params, q)]
    for wrt in range(len(args)):
        want = _implicit_reference(forward, density_sign, [float(v) for v in args[:-1]], float(args[-1]), wrt)
        got = tl.grad(inverse, argnums=wrt)(*[tl.tensor(v) for v in args])
        assert got.dtype == tl.float32
        np.testing.assert_allclose(float(got), want, rtol=3e-7, err_msg=f"d/d{wrt}")


def test_float32_gamma_density_gradient_of_gammainc_is_one_rounding():
    import scipy.stats

    a, x = np.float32(100.0), np.float32(50.0)  # the log-density is -21.8: float32 kept 1e-6 of it
    got = tl.grad(tl.special.gammainc, argnums=1)(tl.tensor(a), tl.tensor(x))
    np.testing.assert_allclose(float(got), scipy.stats.gamma(100.0).pdf(50.0), rtol=2e-7)


# ---------------------------------------------------------------- zeta' far below 0
@pytest.mark.parametrize(
    "dtype, x", [("float64", -172.5), ("float64", -200.5), ("float64", -250.5), ("float32", -35.5)]
)
def test_riemann_zeta_gradient_far_below_zero_is_finite_where_zeta_is(dtype, x):
    x = float(np.asarray(x, dtype))  # Gamma(1 - x) overflows there, zeta(x) and zeta'(x) do not
    want = _central(sp.zeta, x, 1e-5)
    got = tl.grad(tl.special.zeta)(tl.tensor(np.asarray(x, dtype)))
    assert got.dtype == dtype
    np.testing.assert_allclose(float(got), want, rtol=1e-6 if dtype == "float64" else 3e-7)


def test_riemann_zeta_gradient_far_below_zero_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    x = np.array([-250.5, -171.25, -60.1, -3.3])
    np.testing.assert_allclose(_grad(tl.special.zeta, x), [float(mp.diff(mp.zeta, v)) for v in x], rtol=1e-12)


# ---------------------------------------------------------------- the functions of jax.scipy.special that were missing
EDGES = np.array([-np.inf, -30.0, -2.5, -1e-5, -0.0, 0.0, 1e-300, 1e-5, 0.5, 1.0, 2.5, 30.0, 1e10, np.inf, np.nan])


@pytest.mark.parametrize("name", ["fresnel", "sici", "shichi"])
def test_pair_integrals_match_scipy_at_edges_in_float64_and_float32(name):
    for dtype in ("float64", "float32"):
        x = EDGES.astype(dtype)
        got = getattr(tl.special, name)(tl.tensor(x))
        want = getattr(sp, name)(x.astype(np.float64))
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            assert g.dtype == dtype
            np.testing.assert_allclose(g.numpy(), w.astype(dtype), rtol=1e-14 if dtype == "float64" else 0)


def test_fresnel_gradients_are_sin_and_cos_of_pi_x_squared_over_2_also_for_large_x():
    x = np.array([-3.3, 0.0, 0.7, 2.0, 100.3, 3000.7])
    # x**2 mod 4 in exact rationals: the angle's digits survive (the rounded x**2 had lost 1e-9 at 3000.7)
    turns = np.array([float(__import__("fractions").Fraction(v) ** 2 % 4) for v in x])
    s, c = (tl.grad(lambda x, i=i: tl.sum(tl.special.fresnel(x)[i]))(*_f64(x)).numpy() for i in (0, 1))
    np.testing.assert_allclose(s, np.sin(0.5 * np.pi * turns), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(c, np.cos(0.5 * np.pi * turns), rtol=1e-13, atol=1e-15)
    second = tl.grad(lambda x: tl.sum(tl.grad(lambda x: tl.sum(tl.special.fresnel(x)[0]))(x)))(*_f64(x[:4])).numpy()
    np.testing.assert_allclose(second, np.pi * x[:4] * np.cos(0.5 * np.pi * x[:4] ** 2), rtol=1e-13, atol=1e-15)
    x32 = np.array([0.7, 150.3], np.float32)  # float32: x**2 exact in float64, reduced there
    got32 = tl.grad(lambda x: tl.sum(tl.special.fresnel(x)[1]))(tl.tensor(x32)).numpy()
    np.testing.assert_allclose(got32, np.cos(0.5 * np.pi * np.mod(x32.astype(np.float64) ** 2, 4.0)), rtol=2e-7)


@pytest.mark.parametrize(
    "name, odd, even", [("sici", np.sin, np.cos), ("shichi", np.sinh, np.cosh)], ids=["sici", "shichi"]
)
def test_sine_and_cosine_integral_gradients_including_zero(name, odd, even):
    f = getattr(tl.special, name)
    x = np.array([-3.3, -1e-3, 1e-8, 0.7, 2.0, 10.5])
    first, second = (tl.grad(lambda x, i=i: tl.sum(f(x)[i]))(*_f64(x)).numpy() for i in (0, 1))
    np.testing.assert_allclose(first, odd(x) / x, rtol=1e-14)
    np.testing.assert_allclose(second, even(x) / x, rtol=1e-14)
    # at 0: the odd one's slope is 1, its second derivative 0, and the even one's infinite slope does not leak
    zero = _f64(0.0)
    assert float(tl.grad(lambda x: f(x)[0])(*zero)) == 1.0
    assert float(tl.grad(lambda x: tl.grad(lambda x: f(x)[0])(x))(*zero)) == 0.0
    assert float(tl.grad(lambda x: f(x)[1])(*_f64(1e-300))) == pytest.approx(even(0.0) / 1e-300)
    h = 1e-6 * np.abs(x)
    second_order = tl.grad(lambda x: tl.sum(tl.grad(lambda x: tl.sum(f(x)[1]))(x)))(*_f64(x)).numpy()
    np.testing.assert_allclose(second_order, (even(x + h) / (x + h) - even(x - h) / (x - h)) / (2 * h), rtol=1e-6)


def test_elliptic_integrals_match_scipy_and_their_gradients_the_closed_forms_and_series():
    m = np.array([-100.0, -3.0, -0.5, -1e-3, 0.0, 1e-9, 1e-3, 0.0999, 0.1001, 0.3, 0.9, 0.999999])
    k, e = sp.ellipk(m), sp.ellipe(m)
    np.testing.assert_allclose(tl.special.ellipk(*_f64(m)).numpy(), k, rtol=1e-15)
    np.testing.assert_allclose(tl.special.ellipe(*_f64(m)).numpy(), e, rtol=1e-15)
    edges = np.array([1.0, 1.5, -np.inf, np.nan])
    np.testing.assert_array_equal(tl.special.ellipk(*_f64(edges)).numpy(), sp.ellipk(edges))
    np.testing.assert_array_equal(tl.special.ellipe(*_f64(edges)).numpy(), sp.ellipe(edges))
    away = np.abs(m) > 0.05  # the closed forms, where they do not cancel; pi/8 and -pi/8 at 0
    np.testing.assert_allclose(_grad(tl.special.ellipe, m)[away], ((e - k) / (2 * m))[away], rtol=1e-13)
    np.testing.assert_allclose(
        _grad(tl.special.ellipk, m)[away], ((e - (1 - m) * k) / (2 * m * (1 - m)))[away], rtol=1e-13
    )
    np.testing.assert_allclose(_grad(tl.special.ellipk, [0.0, 1e-9]), np.pi / 8 * (1 + 9 / 16 * np.array([0, 1e-9])))
    np.testing.assert_allclose(_grad(tl.special.ellipe, [0.0, 1e-9]), -np.pi / 8 * (1 + 3 / 16 * np.array([0, 1e-9])))
    for f, ref in ((tl.special.ellipk, sp.ellipk), (tl.special.ellipe, sp.ellipe)):  # second order, both sides of 0.1
        h = 1e-4
        second = tl.grad(lambda m, f=f: tl.sum(tl.grad(lambda m: tl.sum(f(m)))(m)))(*_f64(m[1:-1])).numpy()
        want = (ref(m[1:-1] + h) - 2 * ref(m[1:-1]) + ref(m[1:-1] - h)) / h**2
        np.testing.assert_allclose(second, want, rtol=1e-5)
    m32 = np.array([1e-3, 0.3, 0.9], np.float32)  # float32 derivatives formed in float64: one rounding
    k32, e32 = sp.ellipk(m32.astype(np.float64)), sp.ellipe(m32.astype(np.float64))
    got = tl.grad(lambda m: tl.sum(tl.special.ellipe(m)))(tl.tensor(m32)).numpy()
    np.testing.assert_allclose(got, (e32 - k32) / (2 * m32.astype(np.float64)), rtol=2e-7)


def test_lambertw_is_scipys_real_branches_and_its_gradient_w_over_x_1_plus_w():
    x0 = np.array([-0.36787944, -0.3, -1e-3, 0.0, 1e-3, 1.0, 10.0, 1e10, 1e300, np.inf])
    w0 = tl.special.lambertw(*_f64(x0)).numpy()
    np.testing.assert_allclose(w0, sp.lambertw(x0).real, rtol=1e-14)
    np.testing.assert_allclose((w0 * np.exp(w0))[:-2], x0[:-2], rtol=1e-14)  # w exp(w) = x
    xm = np.array([-0.36787944, -0.3, -1e-3, -1e-100])
    wm = tl.special.lambertw(*_f64(xm), k=-1).numpy()
    np.testing.assert_allclose(wm, sp.lambertw(xm, -1).real, rtol=1e-14)
    # complex in SciPy: NaN here (below -1/e; x >= 0 on k = -1); -inf at 0 on k = -1
    outside = tl.special.lambertw(*_f64([-0.5, -1.0]))
    assert np.isnan(outside.numpy()).all()
    assert np.isnan(tl.special.lambertw(*_f64([0.5]), k=-1).numpy()).all()
    assert float(tl.special.lambertw(*_f64(0.0), k=-1)) == -np.inf
    finite = np.isfinite(x0)
    np.testing.assert_allclose(
        _grad(tl.special.lambertw, x0[finite]), np.exp(-w0[finite]) / (1 + w0[finite]), rtol=1e-13
    )
    assert float(tl.grad(tl.special.lambertw)(*_f64(0.0))) == 1.0  # 0 / 0 in W / (x (1 + W))
    np.testing.assert_allclose(_grad(lambda x: tl.special.lambertw(x, k=-1), xm), wm / (xm * (1 + wm)), rtol=1e-13)
    inner = xm[1:3]  # away from the branch point -1/e, where a difference would straddle it
    h = 1e-7 * np.abs(inner)
    second = tl.grad(lambda x: tl.sum(tl.grad(lambda x: tl.sum(tl.special.lambertw(x, k=-1)))(x)))(*_f64(inner))
    d = lambda x: sp.lambertw(x, -1).real / (x * (1 + sp.lambertw(x, -1).real))  # noqa: E731
    np.testing.assert_allclose(second.numpy(), (d(inner + h) - d(inner - h)) / (2 * h), rtol=1e-5)
    x32 = np.float32(-0.3678)  # near the branch point 1 + W cancels: float32 forms the derivative in float64
    w = sp.lambertw(np.float64(x32)).real
    np.testing.assert_allclose(float(tl.grad(tl.special.lambertw)(tl.tensor(x32))), w / (x32 * (1 + w)), rtol=3e-7)
    with pytest.raises(ValueError, match=r"lambertw: the branch k must be 0 or -1 \(the real branches\), got 1"):
        tl.special.lambertw(*_f64(1.0), k=1)


def test_hyp1f1_matches_scipy_and_is_differentiable_in_x_to_every_order():
    a, b = np.array([0.5, 1.0, -2.5, 3.0]), np.array([1.5, 2.0, 3.0, 0.5])
    x = np.array([-10.0, 0.5, 3.0, 20.0])
    np.testing.assert_allclose(tl.special.hyp1f1(*_f64(a, b, x)).numpy(), sp.hyp1f1(a, b, x), rtol=1e-14)
    np.testing.assert_allclose(
        _grad(tl.special.hyp1f1, a, b, x, argnums=2), a / b * sp.hyp1f1(a + 1, b + 1, x), rtol=1e-13
    )
    second = tl.grad(lambda x: tl.sum(tl.grad(lambda x: tl.sum(tl.special.hyp1f1(*_f64(a, b), x)))(x)))(
        *_f64(x)
    ).numpy()
    np.testing.assert_allclose(second, a * (a + 1) / (b * (b + 1)) * sp.hyp1f1(a + 2, b + 2, x), rtol=1e-13)
    assert float(tl.special.hyp1f1(*_f64(1.0, 2.0, 1.0))) == pytest.approx(math.e - 1, rel=1e-15)


def test_bernoulli_numbers_are_exact_rationals_rounded_once():
    from fractions import Fraction

    got = tl.special.bernoulli(30)
    assert got.dtype == tl.float64 and got.shape == (31,)
    # B_0 .. B_12 from their definition's table; B_1 = -1/2 as SciPy and JAX
    table = [1, Fraction(-1, 2), Fraction(1, 6), 0, Fraction(-1, 30), 0, Fraction(1, 42), 0, Fraction(-1, 30), 0]
    table += [Fraction(5, 66), 0, Fraction(-691, 2730)]
    np.testing.assert_array_equal(got.numpy()[:13], [float(v) for v in table])
    np.testing.assert_allclose(got.numpy(), sp.bernoulli(30), rtol=1e-11)  # SciPy: 1.7e-12 off at B_30
    assert float(tl.special.bernoulli(30)[30]) == float(Fraction(8615841276005, 14322))
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match=r"bernoulli: n must be a non-negative integer"):
            tl.special.bernoulli(bad)


# ---------------------------------------------------------------- betainc's parameter gradient for a tiny a and a large b
@pytest.mark.parametrize("a, b, x", [(1e-6, 1e4, 1e-20), (2e-6, 5e3, 1e-30), (1e-4, 1e6, 1e-25)])
def test_betainc_gradient_in_b_for_tiny_a_does_not_subtract_digammas(a, b, x):
    # for x -> 0, I_x(a, b) = x**a / (a B(a, b)) (1 + O(x)), so d/db I = I (psi(a + b) - psi(b)), and that
    # difference is a psi'(b) + a**2 psi''(b) / 2 + O(a**3): 1e-10 formed from two values of size 9.2
    want = sp.betainc(a, b, x) * (a * sp.polygamma(1, b) + a**2 / 2 * sp.polygamma(2, b))
    got = tl.grad(tl.special.betainc, argnums=1)(*_f64(a, b, x))
    np.testing.assert_allclose(float(got), want, rtol=1e-13)


def test_betainc_parameter_gradients_at_extreme_parameters_match_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 80
    for a, b, x, wrt in [(1e-6, 1e4, 1e-20, 1), (1e4, 1e-6, 1 - 1e-12, 0), (0.01, 1000.0, 1e-3, 0)]:
        args = [a, b]

        def f(u, wrt=wrt, a=a, b=b, x=x):
            return mp.betainc(u, b, 0, x, regularized=True) if wrt == 0 else mp.betainc(a, u, 0, x, regularized=True)

        want = float(mp.diff(f, args[wrt], h=mp.mpf(args[wrt]) * mp.mpf(10) ** -30))
        got = tl.grad(tl.special.betainc, argnums=wrt)(*_f64(a, b, x))
        np.testing.assert_allclose(float(got), want, rtol=1e-13)


# ---------------------------------------------------------------- binom and poch gradients: steps of digamma
def test_binom_and_poch_gradients_take_digamma_steps_without_cancellation():
    # binom(n, 2) = n (n - 1) / 2: d/dn = n - 1/2 (the digamma difference psi(n + 1) - psi(n - 1) lost 1e-7)
    np.testing.assert_allclose(_grad(tl.special.binom, [1e8, 1e12], [2.0, 2.0]), [1e8 - 0.5, 1e12 - 0.5], rtol=1e-15)
    # d/dk binom(n, k) near k = n / 2: binom (psi(n - k + 1) - psi(k + 1)), a step of size d = n - 2k
    n, k = 100.0, 49.999999
    d = n - 2 * k
    step = d * sp.polygamma(1, k + 1) + d**2 / 2 * sp.polygamma(2, k + 1) + d**3 / 6 * sp.polygamma(3, k + 1)
    np.testing.assert_allclose(_grad(tl.special.binom, n, k, argnums=1), sp.binom(n, k) * step, rtol=1e-12)
    # d/dz poch(z, m) = poch (psi(z + m) - psi(z)) ~ poch (m psi'(z) + m**2 psi''(z) / 2) for a tiny m
    z, m = 1e4, 1e-6
    want = sp.poch(z, m) * (m * sp.polygamma(1, z) + m**2 / 2 * sp.polygamma(2, z))
    np.testing.assert_allclose(_grad(tl.special.poch, z, m), want, rtol=1e-10)  # SciPy's poch: 5e-12


@pytest.mark.parametrize("tiny", [1e-214, 1e-300, 1e-8])
def test_digamma_step_differentiates_again_at_a_tiny_step(tiny):
    # d/dm d/dz poch(z, m) = psi(z) poch (psi(z + m) - psi(z)) + poch psi'(z + m); d/db d/da betaln = -psi'(a + b)
    z = 1.5
    mixed = tl.grad(lambda z, m: tl.grad(tl.special.poch)(z, m), argnums=1)(*_f64(z, tiny))
    want = sp.poch(z, tiny) * (sp.psi(z) * tiny * sp.polygamma(1, z) + sp.polygamma(1, z + tiny))
    np.testing.assert_allclose(float(mixed), want, rtol=1e-13)
    mixed = tl.grad(lambda a, b: tl.grad(tl.special.betaln)(a, b), argnums=1)(*_f64(z, tiny))
    np.testing.assert_allclose(float(mixed), -sp.polygamma(1, z + tiny), rtol=1e-13)

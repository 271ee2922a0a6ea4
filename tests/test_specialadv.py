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

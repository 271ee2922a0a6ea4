"""``tl.special`` attacked where the last notes left it open: Box-Cox at the base's zero (its limits), Kummer's
1F1 differentiated in its parameters, the edges of the functions added last session, and the SciPy names
users reach for next.  References: SciPy's values, float64 central (or one-sided, where only one side is
defined) differences of SciPy, closed forms, mpmath (importorskip) and JAX (importorskip)."""

import numpy as np
import pytest
import scipy.special as sp

import tensorlib as tl


def _f64(*values):
    return [tl.tensor(np.asarray(v, np.float64)) for v in values]


def _grad(f, *args, argnums=0, dtype=np.float64):
    """The gradient of sum(f) at ``args`` (as ``dtype``), as NumPy arrays."""
    tensors = [tl.tensor(np.asarray(v, dtype)) for v in args]
    g = tl.grad(lambda *v: tl.sum(f(*v)), argnums=argnums)(*tensors)
    return tuple(v.numpy() for v in g) if isinstance(argnums, tuple) else g.numpy()


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


# ---------------------------------------------------------------- Box-Cox at the base's zero
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, pole", [("boxcox", 0.0), ("boxcox1p", -1.0)])
def test_boxcox_gradients_at_the_base_zero_are_the_limits_from_inside(name, pole, dtype):
    # boxcox(0, l) = -1 / l for l > 0: d/dl = 1 / l**2 (central differences of SciPy in l are defined there);
    # d/dx = x**(l - 1) -> inf, 1, 0 for l <, =, > 1 (one-sided differences from x > 0); for l <= 0 the value is
    # -inf and both partials' limits are +inf.  Through log(x) both were NaN.
    f, lmbda = getattr(tl.special, name), np.array([0.5, 1.0, 2.0, 3.0, 1e-3, -0.5, 0.0])
    x = np.full_like(lmbda, pole)
    by_x, by_lmbda = _grad(f, x, lmbda, argnums=(0, 1), dtype=dtype)
    want_l = _central(lambda l: getattr(sp, name)(pole, l), lmbda[:5], 1e-7 * lmbda[:5])
    np.testing.assert_allclose(by_lmbda[:5], want_l, rtol=1e-6 if dtype == np.float32 else 1e-8)
    np.testing.assert_allclose(by_lmbda[:5], 1 / lmbda[:5] ** 2, rtol=1e-6)
    h = 1e-7
    one_sided = (getattr(sp, name)(pole + h, lmbda[1:4]) - getattr(sp, name)(pole, lmbda[1:4])) / h
    np.testing.assert_allclose(by_x[1:4], one_sided, atol=1e-5)
    assert by_x[0] == np.inf and by_x[4] == np.inf
    np.testing.assert_array_equal(by_x[5:], np.inf)
    np.testing.assert_array_equal(by_lmbda[5:], np.inf)
    want = getattr(sp, name)(x, lmbda.astype(dtype).astype(np.float64))
    np.testing.assert_allclose(f(x.astype(dtype), lmbda.astype(dtype)).numpy(), want, rtol=1e-7)


def test_boxcox_second_derivatives_at_zero_and_the_modes_agree():
    lmbda = np.array([0.5, 2.0, 3.0])
    second = tl.grad(lambda l: tl.sum(tl.grad(lambda l: tl.sum(tl.special.boxcox(0.0, l)))(l)))(*_f64(lmbda))
    np.testing.assert_allclose(second.numpy(), -2 / lmbda**3, rtol=1e-14)  # (-1 / l)''
    # d2/dx2 at 0 for l = 2: (l - 1) x**(l - 2) = 1 (the polynomial (x**2 - 1) / 2)
    xx = tl.grad(lambda x: tl.grad(lambda x: tl.special.boxcox(x, 2.0))(x))(*_f64(0.0))
    assert float(xx) == 1.0
    x, lmbda = _f64([0.0, 1.0, 0.0, 2.0], [0.5, 0.5, 2.0, 0.0])
    grads = tl.function(lambda x, l: tl.grad(lambda x, l: tl.sum(tl.special.boxcox(x, l)), argnums=(0, 1))(x, l))
    eager = tl.grad(lambda x, l: tl.sum(tl.special.boxcox(x, l)), argnums=(0, 1))(x, lmbda)
    for traced, want in zip(grads(x, lmbda), eager):
        np.testing.assert_array_equal(traced.numpy(), want.numpy())
    mapped = tl.vmap(tl.grad(tl.special.boxcox, argnums=1))(x, lmbda).numpy()
    np.testing.assert_array_equal(mapped, eager[1].numpy())
    np.testing.assert_allclose(eager[1].numpy()[[0, 2, 3]], [4.0, 0.25, np.log(2.0) ** 2 / 2], rtol=1e-14)


# ---------------------------------------------------------------- hyp1f1 in its parameters
# (a, b, x): both signs of x (x < 0 goes through Kummer's transformation), negative a and b, a polynomial (a a
# negative integer), large |x| (the terms rescaled) and tiny x
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
    (2.0, 5.0, -800.0),
    (1.5, 2.5, 1e-8),
    (-2.0, 1.0, -5.0),
]


def _hyp1f1_partials(a, b, x, dtype=np.float64):
    return _grad(tl.special.hyp1f1, a, b, x, argnums=(0, 1), dtype=dtype)


@pytest.mark.parametrize("a, b, x", HYP1F1_POINTS)
def test_hyp1f1_gradients_in_a_and_b_match_mpmath(a, b, x):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        want_a = float(mpmath.diff(lambda t: mpmath.hyp1f1(t, b, x), a))
        want_b = float(mpmath.diff(lambda t: mpmath.hyp1f1(a, t, x), b))
    got_a, got_b = _hyp1f1_partials(a, b, x)
    np.testing.assert_allclose([got_a, got_b], [want_a, want_b], rtol=5e-13)


def test_hyp1f1_gradients_in_a_and_b_match_central_differences_of_scipy():
    rng = np.random.default_rng(0)
    a, b, x = rng.uniform(-2.5, 3.0, 40), rng.uniform(0.5, 4.0, 40), rng.uniform(-15.0, 15.0, 40)
    got_a, got_b = _hyp1f1_partials(a, b, x)
    np.testing.assert_allclose(got_a, _central(lambda t: sp.hyp1f1(t, b, x), a, 1e-5), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got_b, _central(lambda t: sp.hyp1f1(a, t, x), b, 1e-5), rtol=1e-7, atol=1e-9)
    # closed forms: 1F1(a; a; x) = e**x, so d/da + d/db = 0 there; 1F1(1; 2; x) = (e**x - 1) / x
    by_a, by_b = _hyp1f1_partials(2.0, 2.0, np.array([-3.0, 0.5, 4.0]))
    np.testing.assert_allclose(by_a, -by_b, rtol=1e-14)


def test_hyp1f1_mixed_second_derivatives_in_x_and_float32_and_modes():
    a, b, x = 0.7, 1.9, np.array([-4.0, -0.3, 0.0, 2.5])
    av, bv, xv = _f64(np.full(4, a), np.full(4, b), x)
    total = lambda *v: tl.sum(tl.special.hyp1f1(*v))
    for wrt in (0, 1):
        mixed = tl.grad(lambda x: tl.sum(tl.grad(total, argnums=wrt)(av, bv, x)))(xv).numpy()
        step = 1e-5
        first = lambda xs: _hyp1f1_partials(np.full(4, a), np.full(4, b), xs)[wrt]
        np.testing.assert_allclose(mixed, _central(first, x, step), rtol=1e-8)
    # float32: the float64 series, rounded once
    a, b = np.full(4, a), np.full(4, b)
    got32 = _hyp1f1_partials(a, b, x, dtype=np.float32)
    a32, b32, x32 = (v.astype(np.float32).astype(np.float64) for v in (a, b, x))
    for g32, g64 in zip(got32, _hyp1f1_partials(a32, b32, x32)):
        assert g32.dtype == np.float32
        np.testing.assert_array_equal(g32, g64.astype(np.float32))
    eager = tl.grad(total, argnums=(0, 1))(av, bv, xv)
    traced = tl.function(lambda *v: tl.grad(total, argnums=(0, 1))(*v))(av, bv, xv)
    mapped = tl.vmap(tl.grad(tl.special.hyp1f1, argnums=(0, 1)))(av, bv, xv)
    for e, t, m in zip(eager, traced, mapped):
        np.testing.assert_array_equal(t.numpy(), e.numpy())
        np.testing.assert_array_equal(m.numpy(), e.numpy())


def test_hyp1f1_parameter_gradient_refuses_a_series_that_cannot_converge():
    with pytest.raises(ValueError, match=r"Hyp1f1Grad: the series of the derivatives of hyp1f1 in a and b did not"):
        tl.grad(tl.special.hyp1f1)(*_f64(1.0, 2.0, 3e5))
    # a pole of 1F1 in b (a non-positive integer) is not an error: NaN, as the value is not finite there
    by_a, by_b = _hyp1f1_partials(1.0, -1.0, 0.5)
    assert np.isnan(by_a) and np.isnan(by_b)


# ---------------------------------------------------------------- hyp1f1 where SciPy overflows or never returns
def test_hyp1f1_returns_at_large_and_infinite_x_with_the_sign_of_its_leading_term():
    # SciPy's hyp1f1 takes time like x (0.1 s at 1e11) and never returns at x = inf or 1e15; where the value
    # overflows it is +inf whatever the sign: 1F1(-1/2; 3/2; 1000) = -4.94e427 (mpmath).  Past its largest term
    # the series has the sign of Gamma(b) / Gamma(a), which a value below the overflow confirms.
    a = np.array([2.0, 0.5, -0.5, 0.5, -0.5, 0.5, 1.0, 3.0])
    b = np.array([3.0, 1.5, 1.5, -0.5, -1.5, 1e10, -1.0, 1.0])
    x = np.array([np.inf, 1e300, 1e3, 1e3, np.inf, 1e9, 5.0, -np.inf])
    for dtype in (np.float64, np.float32):
        got = tl.special.hyp1f1(*(v.astype(dtype) for v in (a, b, x))).numpy()
        np.testing.assert_array_equal(got[:5], [np.inf, np.inf, -np.inf, -np.inf, -np.inf])
        np.testing.assert_allclose(got[5], sp.hyp1f1(0.5, 1e10, 1e9), rtol=1e-6)  # b ~ x: SciPy's value
        assert np.isnan(got[6]) and np.isnan(got[7])  # a pole in b, and SciPy's NaN at -inf
    below = np.array([600.0, 700.0])
    assert (sp.hyp1f1(-0.5, 1.5, below) < 0).all() and (sp.hyp1f1(0.5, -0.5, below) < 0).all()
    # the gradient in x, (a / b) 1F1(a + 1; b + 1; x), has the same limits
    g = _grad(tl.special.hyp1f1, a[:5], b[:5], x[:5], argnums=2)
    np.testing.assert_array_equal(g, [np.inf, np.inf, -np.inf, -np.inf, -np.inf])


def test_hyp1f1_beyond_scipys_overflow_matches_mpmath_in_sign():
    mpmath = pytest.importorskip("mpmath")
    for a, b, x in [(-0.5, 1.5, 1000.0), (0.5, -0.5, 1000.0), (-1.5, 1.5, 800.0), (-0.5, -1.5, 2000.0)]:
        want = mpmath.hyp1f1(a, b, x)
        assert abs(want) > np.finfo(np.float64).max
        assert float(tl.special.hyp1f1(*_f64(a, b, x))) == (np.inf if want > 0 else -np.inf)


# ---------------------------------------------------------------- last session's functions at their edges
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sine_and_hyperbolic_integral_gradients_at_infinity_are_their_limits(dtype):
    # Si' = sin(x)/x and Ci' = cos(x)/x -> 0; Shi' = sinh(x)/x -> +inf; Chi' = cosh(x)/x -> +-inf (were NaN: sin(inf)
    # is NaN, sinh(inf)/inf = inf/inf); the values there are SciPy's
    x = np.array([np.inf, -np.inf, 30.0])
    tiny = np.finfo(dtype).tiny
    for name, which, want in [
        ("sici", 0, [0.0, 0.0, np.sin(30.0) / 30.0]),
        ("sici", 1, [0.0, 0.0, np.cos(30.0) / 30.0]),
        ("shichi", 0, [np.inf, np.inf, np.sinh(30.0) / 30.0]),
        ("shichi", 1, [np.inf, -np.inf, np.cosh(30.0) / 30.0]),
    ]:
        got = _grad(lambda v: getattr(tl.special, name)(v)[which], x, dtype=dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=tiny)
        values = getattr(tl.special, name)(x.astype(dtype))[which].numpy()
        np.testing.assert_array_equal(values, getattr(sp, name)(x)[which].astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_elliptic_gradients_at_m_1_and_minus_infinity_are_their_limits(dtype):
    # K'(m) = (E - (1 - m) K) / (2m (1 - m)) -> +inf at m = 1 (was -inf + inf = NaN); E'(1) = -inf; both -> 0 as
    # m -> -inf (E ~ sqrt(-m), K ~ log(-m) / sqrt(-m); E' was inf / inf); central differences of SciPy near them
    m = np.array([1.0, -np.inf, -1e12, 1 - 1e-6])
    by_k, by_e = _grad(tl.special.ellipk, m, dtype=dtype), _grad(tl.special.ellipe, m, dtype=dtype)
    assert by_k[0] == np.inf and by_e[0] == -np.inf
    np.testing.assert_array_equal([by_k[1], by_e[1]], [0.0, 0.0])
    if dtype == np.float64:
        step = np.array([1e3, 1e-10])
        np.testing.assert_allclose(by_k[2:], _central(sp.ellipk, m[2:], step), rtol=1e-5)
        np.testing.assert_allclose(by_e[2:], _central(sp.ellipe, m[2:], step), rtol=1e-5)


# ---------------------------------------------------------------- log_expit
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_expit_is_scipys_rounded_once_with_gradient_expit_of_minus_x(dtype):
    x = np.concatenate([np.linspace(-120.0, 120.0, 2401), [np.inf, -np.inf, np.nan, 0.0, 1e-30, -1e-30, 36.7, 800.0]])
    x = x.astype(dtype)
    got = tl.special.log_expit(x).numpy()
    assert got.dtype == dtype
    ulp = np.finfo(dtype).eps
    np.testing.assert_allclose(got, sp.log_expit(x.astype(np.float64)).astype(dtype), rtol=ulp, atol=0)
    g = _grad(tl.special.log_expit, x[:-8], dtype=dtype)
    want = sp.expit(-x[:-8].astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(g, want, rtol=2 * ulp, atol=np.finfo(dtype).tiny)
    inner = np.linspace(-20.0, 20.0, 41)
    np.testing.assert_allclose(_grad(tl.special.log_expit, inner), _central(sp.log_expit, inner), rtol=1e-8)
    assert tl.special.log_expit(np.array([1, 2])).dtype == tl.float64  # NumPy's rule for integers
    second = tl.grad(tl.grad(tl.special.log_expit))(*_f64(0.5))
    assert float(second) == pytest.approx(-sp.expit(0.5) * sp.expit(-0.5), rel=1e-15)


def test_log_expit_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.linspace(-50.0, 50.0, 101)
    np.testing.assert_allclose(tl.special.log_expit(x).numpy(), jax.nn.log_sigmoid(x), rtol=1e-15)
    np.testing.assert_allclose(_grad(tl.special.log_expit, x), jax.vmap(jax.grad(jax.nn.log_sigmoid))(x), rtol=1e-14)


# ---------------------------------------------------------------- Bessel functions of real order
BESSEL = ["jv", "yv", "iv", "kv", "ive", "kve"]


@pytest.mark.parametrize("name", BESSEL)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_real_order_bessel_values_are_scipys_rounded_once_edges_included(name, dtype):
    v = np.array([-2.5, -1.0, -0.3, 0.0, 0.5, 1.0, 2.7, 10.0, 0.5, 1.5, 0.5, 0.0, 2.0, 0.5, 1.0])
    x = np.array([1.3, 2.0, 0.7, 3.0, 0.0, 0.0, 25.0, 4.0, -1.0, -2.0, np.inf, np.nan, 1e-300, 700.0, 1e4])
    v, x = v.astype(dtype).astype(np.float64), x.astype(dtype).astype(np.float64)
    want = getattr(sp, name)(v, x).astype(dtype)
    got = getattr(tl.special, name)(v.astype(dtype), x.astype(dtype)).numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=np.finfo(dtype).eps, atol=0)
    assert getattr(tl.special, name)(np.array([1, 2]), np.array([3, 4])).dtype == tl.float64


def test_half_integer_orders_match_their_closed_forms_and_derivatives():
    # J_{1/2} = sqrt(2/(pi x)) sin x, Y_{1/2} = -sqrt(2/(pi x)) cos x, I_{1/2} = sqrt(2/(pi x)) sinh x,
    # K_{1/2} = sqrt(pi/(2x)) exp(-x): values and first and second derivatives, without SciPy
    x = np.array([0.3, 1.0, 4.5, 17.0])
    s = np.sqrt(2 / (np.pi * x))
    forms = {
        "jv": (s * np.sin(x), s * (np.cos(x) - np.sin(x) / (2 * x))),
        "yv": (-s * np.cos(x), s * (np.sin(x) + np.cos(x) / (2 * x))),
        "iv": (s * np.sinh(x), s * (np.cosh(x) - np.sinh(x) / (2 * x))),
        "kv": (np.sqrt(np.pi / (2 * x)) * np.exp(-x), -np.sqrt(np.pi / (2 * x)) * np.exp(-x) * (1 + 1 / (2 * x))),
        "ive": (s * np.sinh(x) * np.exp(-x), s * np.exp(-x) * (np.cosh(x) - np.sinh(x) * (1 + 1 / (2 * x)))),
        "kve": (np.sqrt(np.pi / (2 * x)), -np.sqrt(np.pi / (2 * x)) / (2 * x)),
    }
    half = np.full_like(x, 0.5)
    for name, (value, slope) in forms.items():
        f = getattr(tl.special, name)
        np.testing.assert_allclose(f(half, x).numpy(), value, rtol=1e-14)
        np.testing.assert_allclose(_grad(f, half, x, argnums=1), slope, rtol=1e-13)
        second = tl.grad(lambda x: tl.sum(tl.grad(lambda x: tl.sum(f(half, x)))(x)))(*_f64(x)).numpy()
        first = lambda xs: _grad(f, half, xs, argnums=1)
        np.testing.assert_allclose(second, _central(first, x, 1e-5), rtol=1e-7)


@pytest.mark.parametrize("name", BESSEL)
def test_real_order_bessel_gradients_match_central_differences_and_refuse_the_order(name):
    rng = np.random.default_rng(1)
    v, x = rng.uniform(-2.5, 4.0, 30), rng.uniform(0.3, 15.0, 30)
    got = _grad(getattr(tl.special, name), v, x, argnums=1)
    np.testing.assert_allclose(got, _central(lambda t: getattr(sp, name)(v, t), x), rtol=1e-7, atol=1e-12)
    op_type = {"jv": "BesselJv", "yv": "BesselYv", "iv": "BesselIv", "kv": "BesselKv"}.get(
        name, f"Bessel{name.title()}"
    )
    with pytest.raises(LookupError, match=rf"{op_type}: the derivative in the order v is not implemented"):
        tl.grad(getattr(tl.special, name))(*_f64(0.5, 2.0))
    vv, xv = _f64(v, x)
    eager = tl.grad(lambda x: tl.sum(getattr(tl.special, name)(vv, x)))(xv).numpy()
    traced = tl.function(lambda v, x: tl.grad(lambda x: tl.sum(getattr(tl.special, name)(v, x)))(x))(vv, xv)
    np.testing.assert_array_equal(traced.numpy(), eager)
    np.testing.assert_array_equal(tl.vmap(tl.grad(getattr(tl.special, name), argnums=1))(vv, xv).numpy(), eager)


def test_real_order_bessel_gradients_match_mpmath():
    mpmath = pytest.importorskip("mpmath")
    funcs = {
        "jv": mpmath.besselj,
        "yv": mpmath.bessely,
        "iv": mpmath.besseli,
        "kv": mpmath.besselk,
        "ive": lambda v, x: mpmath.besseli(v, x) * mpmath.exp(-abs(x)),
        "kve": lambda v, x: mpmath.besselk(v, x) * mpmath.exp(x),
    }
    for name, f in funcs.items():
        for v, x in [(0.3, 0.05), (-1.7, 2.2), (5.5, 40.0)]:
            with mpmath.workdps(30):
                want = float(mpmath.diff(lambda t: f(v, t), x))
            got = float(_grad(getattr(tl.special, name), v, x, argnums=1))
            assert got == pytest.approx(want, rel=1e-12), (name, v, x)


@pytest.mark.parametrize("name", ["ive", "kve"])
def test_scaled_bessel_float32_gradients_for_large_x_are_one_rounding_of_float64(name):
    # ive' and kve' subtract values of one size, which cancel like x: float32 kve' was 7% off at x = 1e6
    v, x = np.array([0.5, 2.5, 7.5]), np.array([1e3, 1e4, 1e6])
    got = _grad(getattr(tl.special, name), v, x, argnums=1, dtype=np.float32)
    want = _grad(getattr(tl.special, name), v, x, argnums=1)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2 * np.finfo(np.float32).eps)
    np.testing.assert_allclose(want, _central(lambda t: getattr(sp, name)(v, t), x, 1e-3 * x), rtol=1e-6)


# ---------------------------------------------------------------- incomplete elliptic integrals
@pytest.mark.parametrize("name", ["ellipkinc", "ellipeinc"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_incomplete_elliptic_values_are_scipys_rounded_once_edges_included(name, dtype):
    phi = np.array([0.0, 1.0, -2.5, np.pi / 2, 7.0, 1.0, 1.0, 1.2, np.inf, np.nan, 1.0, 0.3, 30.0])
    m = np.array([0.5, 0.0, 0.7, 1.0, 0.3, -5.0, 1.0, -1e6, 0.5, 0.5, np.nan, 3.0, 0.99])
    phi, m = phi.astype(dtype).astype(np.float64), m.astype(dtype).astype(np.float64)
    got = getattr(tl.special, name)(phi.astype(dtype), m.astype(dtype)).numpy()
    assert got.dtype == dtype
    want = getattr(sp, name)(phi, m).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=np.finfo(dtype).eps, atol=0)


def test_incomplete_elliptic_gradients_match_closed_forms_and_central_differences():
    rng = np.random.default_rng(2)
    phi, m = rng.uniform(-6.0, 6.0, 40), rng.uniform(-3.0, 0.95, 40)
    for name in ("ellipkinc", "ellipeinc"):
        f, ref = getattr(tl.special, name), getattr(sp, name)
        by_phi, by_m = _grad(f, phi, m, argnums=(0, 1))
        delta = np.sqrt(1 - m * np.sin(phi) ** 2)
        np.testing.assert_allclose(by_phi, 1 / delta if name == "ellipkinc" else delta, rtol=1e-14)
        np.testing.assert_allclose(by_m, _central(lambda t: ref(phi, t), m, 1e-6), rtol=1e-7, atol=1e-9)
    # at m = 0 (where (E - F) / (2m) cancels): dF/dm = -dE/dm = (2 phi - sin(2 phi)) / 8
    phi = np.array([0.3, 1.0, -2.0, 5.0])
    for m0 in (0.0, 1e-12):
        by_f = _grad(tl.special.ellipkinc, phi, np.full(4, m0), argnums=1)
        by_e = _grad(tl.special.ellipeinc, phi, np.full(4, m0), argnums=1)
        np.testing.assert_allclose(by_f, (2 * phi - np.sin(2 * phi)) / 8, rtol=1e-11)
        np.testing.assert_allclose(by_e, -(2 * phi - np.sin(2 * phi)) / 8, rtol=1e-11)
    # at phi = pi/2 they are the complete integrals' derivatives
    m = np.array([-1.0, 0.2, 0.8])
    np.testing.assert_allclose(
        _grad(tl.special.ellipkinc, np.full(3, np.pi / 2), m, argnums=1), _grad(tl.special.ellipk, m), rtol=1e-13
    )
    np.testing.assert_allclose(
        _grad(tl.special.ellipeinc, np.full(3, np.pi / 2), m, argnums=1), _grad(tl.special.ellipe, m), rtol=1e-13
    )


def test_incomplete_elliptic_gradients_match_mpmath():
    mpmath = pytest.importorskip("mpmath")
    for phi, m in [(1.0, 0.5), (2.5, 0.3), (-4.0, 0.7), (1.2, -3.0), (1.5, 0.999)]:
        with mpmath.workdps(30):
            want = [
                float(mpmath.diff(lambda t: mpmath.ellipf(t, m), phi)),
                float(mpmath.diff(lambda t: mpmath.ellipf(phi, t), m)),
                float(mpmath.diff(lambda t: mpmath.ellipe(t, m), phi)),
                float(mpmath.diff(lambda t: mpmath.ellipe(phi, t), m)),
            ]
        got = [
            *_grad(tl.special.ellipkinc, phi, m, argnums=(0, 1)),
            *_grad(tl.special.ellipeinc, phi, m, argnums=(0, 1)),
        ]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_incomplete_elliptic_second_order_float32_and_modes():
    phi, m = np.array([0.4, 1.3, -3.0]), np.array([0.5, -1.0, 0.8])
    pv, mv = _f64(phi, m)
    for name in ("ellipkinc", "ellipeinc"):
        f = getattr(tl.special, name)
        total = lambda p, m: tl.sum(f(p, m))
        for inner in (0, 1):  # d/dphi of d/dphi and of d/dm
            got = tl.grad(lambda p: tl.sum(tl.grad(total, argnums=inner)(p, mv)))(pv).numpy()
            first = lambda ps: _grad(f, ps, m, argnums=inner)
            np.testing.assert_allclose(got, _central(first, phi, 1e-5), rtol=1e-7)
        eager = tl.grad(total, argnums=(0, 1))(pv, mv)
        traced = tl.function(lambda p, m: tl.grad(total, argnums=(0, 1))(p, m))(pv, mv)
        mapped = tl.vmap(tl.grad(f, argnums=(0, 1)))(pv, mv)
        for e, t, v in zip(eager, traced, mapped):
            np.testing.assert_array_equal(t.numpy(), e.numpy())
            np.testing.assert_array_equal(v.numpy(), e.numpy())
        got32 = _grad(f, phi, m, argnums=(0, 1), dtype=np.float32)
        want = _grad(f, phi.astype(np.float32), m.astype(np.float32), argnums=(0, 1))
        for g32, g64 in zip(got32, want):
            assert g32.dtype == np.float32
            np.testing.assert_allclose(g32, g64, rtol=4 * np.finfo(np.float32).eps)


# ---------------------------------------------------------------- Jacobi's elliptic functions
def test_ellipj_values_are_scipys_and_gradients_match_central_differences():
    rng = np.random.default_rng(3)
    u, m = rng.uniform(-8.0, 8.0, 30), rng.uniform(0.02, 0.98, 30)
    u, m = np.concatenate([u, [0.0, 1.0, 2.0, np.inf, 1.0]]), np.concatenate([m, [0.5, 0.0, 1.0, 0.5, 1.5]])
    for dtype in (np.float64, np.float32):
        got = tl.special.ellipj(u.astype(dtype), m.astype(dtype))
        want = sp.ellipj(u.astype(dtype).astype(np.float64), m.astype(dtype).astype(np.float64))
        for g, w in zip(got, want):
            assert g.dtype == dtype
            np.testing.assert_allclose(g.numpy(), w.astype(dtype), rtol=np.finfo(dtype).eps, atol=1e-15)
    u, m = u[:30], m[:30]
    for k in range(4):
        by_u, by_m = _grad(lambda u, m: tl.special.ellipj(u, m)[k], u, m, argnums=(0, 1))
        np.testing.assert_allclose(by_u, _central(lambda t: sp.ellipj(t, m)[k], u), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(by_m, _central(lambda t: sp.ellipj(u, t)[k], m), rtol=1e-6, atol=1e-8)
    # closed forms: m = 0 gives (sin u, cos u, 1, u), and d/dm ph = -dn dF/dm = -(2u - sin 2u) / 8 there
    u0 = np.array([0.3, 1.0, -2.0])
    for k, slope in enumerate([np.cos(u0), -np.sin(u0), np.zeros(3), np.ones(3)]):
        np.testing.assert_allclose(_grad(lambda u: tl.special.ellipj(u, 0.0)[k], u0), slope, atol=1e-15)
    by_m = _grad(lambda m: tl.special.ellipj(u0, m)[3], np.zeros(3))
    np.testing.assert_allclose(by_m, -(2 * u0 - np.sin(2 * u0)) / 8, rtol=1e-12)


def test_ellipj_second_order_in_u_and_modes():
    u, m = np.array([0.4, 2.0, -3.0]), np.array([0.5, 0.9, 0.2])
    uv, mv = _f64(u, m)
    sn = lambda u: tl.sum(tl.special.ellipj(u, mv)[0])
    second = tl.grad(lambda u: tl.sum(tl.grad(sn)(u)))(uv).numpy()
    s, c, d, _ = sp.ellipj(u, m)
    np.testing.assert_allclose(second, -s * d * d - m * s * c * c, rtol=1e-13)  # (cn dn)' = -sn dn**2 - m sn cn**2
    total = lambda u, m: tl.sum(tl.stack(tl.special.ellipj(u, m)))
    eager = tl.grad(total, argnums=(0, 1))(uv, mv)
    traced = tl.function(lambda u, m: tl.grad(total, argnums=(0, 1))(u, m))(uv, mv)
    mapped = tl.vmap(tl.grad(lambda u, m: tl.sum(tl.stack(tl.special.ellipj(u, m))), argnums=(0, 1)))(uv, mv)
    for e, t, v in zip(eager, traced, mapped):
        np.testing.assert_array_equal(t.numpy(), e.numpy())
        np.testing.assert_allclose(v.numpy(), e.numpy(), rtol=1e-15)

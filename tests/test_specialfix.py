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
    with pytest.raises(LookupError, match=r"Hyp1f1Grad: the second derivatives of hyp1f1 in a and b"):
        tl.grad(lambda a: tl.grad(tl.special.hyp1f1)(a, 2.0, 1.0))(*_f64(1.0))
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

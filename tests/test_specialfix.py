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

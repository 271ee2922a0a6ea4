"""The NumPy functions added to ``tl.`` (polynomials, unwrap, histograms, the array API's unique_*, the
functional forms of NumPy's in-place writers, index helpers, windows, ...), attacked at their edges.

References: NumPy 2 (values, dtypes, shapes, error conditions), float64 central differences
(``tl.testing.check_grads``) for gradients, closed forms where NumPy's own answer is an artifact, and
``jax.numpy`` where installed (importorskip).  The op catalogue (``tensorlib/testing/op_db_numpyplus.py``)
checks each function on random inputs against NumPy, to second order, traced and on the array-API backend.
"""

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)


# ---------------------------------------------------------------- polynomials
def test_roots_with_trailing_zeros_are_exact_zeros_and_keep_their_gradient():
    # NumPy (and JAX) strip trailing zeros and append constant zero roots: every root then ignores the
    # stripped coefficients.  d(root)/dp is -r**k / p'(r), nonzero for the constant term at a zero root.
    p = np.array([1.0, -3.0, 2.0, 0.0])  # x (x - 1) (x - 2)
    got = np.sort_complex(tl.roots(p).numpy())
    np.testing.assert_array_equal(got, np.sort_complex(np.roots(p).astype(complex)))
    assert got.dtype == np.complex128

    def smallest_root(q):
        r = tl.sort_complex(tl.roots(q))
        return tl.real(r[0])

    g = tl.grad(smallest_root)(tl.tensor(p)).numpy()
    # r = 0 is simple; p'(0) = 2; d r / d p_k = -r**(3-k) / p'(r): only the constant term moves it.
    np.testing.assert_allclose(g, [0.0, 0.0, 0.0, -0.5], atol=1e-12)
    check_grads(lambda q: tl.real(tl.sort_complex(tl.roots(q))), (p,), order=2, modes=("rev",))


def test_roots_edges_match_numpy():
    assert tl.roots(np.zeros(3)).shape == (0,)
    assert tl.roots(np.array([5.0])).shape == (0,)
    np.testing.assert_allclose(
        np.sort_complex(tl.roots(np.array([0.0, 0.0, 2.0, -4.0])).numpy()), [2.0 + 0j]
    )  # leading zeros are stripped in eager mode
    assert tl.roots(np.array([1, -3, 2])).dtype == np.complex128
    assert tl.roots(np.array([1, -3, 2], np.float32)).dtype == np.complex64
    # Conjugate pairs: complex roots of a real polynomial
    r = np.sort_complex(tl.roots(np.array([1.0, 0.0, 1.0])).numpy())
    np.testing.assert_allclose(r, [-1j, 1j], atol=1e-15)


def test_roots_traced_keeps_the_coefficients_as_given():
    p = np.array([2.0, -6.0, 4.0])
    traced = tl.function(tl.roots)(p)
    np.testing.assert_allclose(np.sort_complex(traced.numpy()), [1.0, 2.0], atol=1e-14)


def test_poly_inverts_roots_and_takes_a_characteristic_polynomial():
    roots = RNG.standard_normal(4)
    np.testing.assert_allclose(tl.poly(roots).numpy(), np.poly(roots), rtol=1e-13)
    m = RNG.standard_normal((3, 3))
    out = tl.poly(m)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), np.poly(m), rtol=1e-12, atol=1e-12)
    assert tl.poly(np.zeros(0)).numpy() == 1.0 and tl.poly(np.zeros(0)).shape == ()
    assert tl.poly(np.array([1, 2])).dtype == np.float64
    # d poly / d root_i = -prod_{j != i}(x - r_j) coefficients: finite differences decide
    check_grads(tl.poly, (roots,), order=2, modes=("rev", "fwd"))
    check_grads(tl.poly, (m,), order=1, modes=("rev",))


def test_polyadd_polysub_polymul_match_numpy_with_mixed_lengths_and_dtypes():
    a, b = np.array([1, 2, 3]), np.array([4.5, -1.0])
    for f, ref in ((tl.polyadd, np.polyadd), (tl.polysub, np.polysub), (tl.polymul, np.polymul)):
        for x, y in ((a, b), (b, a), (a, a), (np.array(2.0), a)):
            out, want = f(x, y), ref(x, y)
            assert out.dtype == want.dtype, (f, x, y)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-15)
    # NumPy's polymul strips leading zeros (poly1d): eager calls do too
    np.testing.assert_array_equal(
        tl.polymul([0.0, 0.0, 1.0, 2.0], [3.0]).numpy(), np.polymul([0.0, 0.0, 1.0, 2.0], [3.0])
    )
    check_grads(tl.polymul, (RNG.standard_normal(3), RNG.standard_normal(2)), order=2)


def test_polyder_polyint_are_inverse_and_match_numpy():
    p = RNG.standard_normal(5)
    for m in range(7):
        np.testing.assert_allclose(tl.polyder(p, m).numpy(), np.polyder(p, m), rtol=1e-15)
        np.testing.assert_allclose(tl.polyint(p, m).numpy(), np.polyint(p, m), rtol=1e-15)
        np.testing.assert_allclose(tl.polyder(tl.polyint(p, m), m).numpy(), p, rtol=1e-13)
    k = np.array([1.5, -2.0, 0.25])
    np.testing.assert_allclose(tl.polyint(p, 3, k).numpy(), np.polyint(p, 3, k), rtol=1e-15)
    np.testing.assert_allclose(tl.polyint(p, 2, 4.0).numpy(), np.polyint(p, 2, 4.0), rtol=1e-15)
    assert tl.polyder(np.array([1, 2, 3])).dtype == np.int64  # NumPy keeps integers
    assert tl.polyint(np.array([1, 2, 3])).dtype == np.float64
    assert tl.polyder(np.array([1, 2, 3], np.float32)).dtype == np.float32  # JAX's; NumPy widens
    check_grads(lambda p, k: tl.polyint(p, 3, k), (p, k), order=2)
    with pytest.raises(ValueError, match=r"^polyint: k must be a scalar or a 1-d array of at least m = 3 values"):
        tl.polyint(p, 3, [1.0, 2.0])


def test_polydiv_matches_numpy_and_rebuilds_the_dividend():
    u, v = RNG.standard_normal(6), RNG.standard_normal(3)
    q, r = tl.polydiv(u, v)
    qn, rn = np.polydiv(u, v)
    np.testing.assert_allclose(q.numpy(), qn, rtol=1e-12)
    np.testing.assert_allclose(r.numpy(), rn, rtol=1e-12)
    np.testing.assert_allclose(tl.polyadd(tl.polymul(q, v), r).numpy(), u, rtol=1e-12, atol=1e-14)
    # an exact division: NumPy trims the remainder to one zero
    q, r = tl.polydiv([1.0, 3.0, 2.0], [1.0, 1.0])
    assert q.numpy().tolist() == [1.0, 2.0] and r.numpy().tolist() == [0.0]
    # the remainder's leading zero is dropped as NumPy drops it (x^3 + 2x^2 + x) / (x^2 + 1)
    np.testing.assert_array_equal(tl.polydiv([1.0, 2.0, 1.0, 0.0], [1.0, 0.0, 1.0])[1].numpy(), [-2.0])
    # a divisor longer than the dividend
    q, r = tl.polydiv([1.0, 2.0], [1.0, 2.0, 3.0])
    assert q.numpy().tolist() == [0.0] and r.numpy().tolist() == [1.0, 2.0]
    # float32: NumPy keeps 1e-7 of rounding as leading remainder coefficients, tensorlib drops them
    u32 = np.array([0.3, 1.7, -0.9, 1.2], np.float32)
    _q32, r32 = tl.polydiv(u32, np.array([1.25], np.float32))
    assert r32.shape == (1,) and r32.dtype == np.float32 and abs(float(r32[0])) < 1e-6
    check_grads(tl.polydiv, (u, v), order=2)


def test_polyfit_matches_numpy_full_cov_weights_and_columns():
    x = np.linspace(-1.0, 2.0, 9)
    y = 1.0 - 2.0 * x + 0.5 * x**3 + 0.01 * RNG.standard_normal(9)
    w = RNG.uniform(0.5, 2.0, 9)
    np.testing.assert_allclose(tl.polyfit(x, y, 3).numpy(), np.polyfit(x, y, 3), rtol=1e-10)
    np.testing.assert_allclose(tl.polyfit(x, y, 2, w=w).numpy(), np.polyfit(x, y, 2, w=w), rtol=1e-10)
    c, cov = tl.polyfit(x, y, 2, cov=True)
    cn, covn = np.polyfit(x, y, 2, cov=True)
    np.testing.assert_allclose(cov.numpy(), covn, rtol=1e-9)
    Y = np.stack([y, 2 * y + 1], axis=1)
    c, cov = tl.polyfit(x, Y, 2, w=w, cov="unscaled")
    cn, covn = np.polyfit(x, Y, 2, w=w, cov="unscaled")
    np.testing.assert_allclose(c.numpy(), cn, rtol=1e-10)
    np.testing.assert_allclose(cov.numpy(), covn, rtol=1e-9)
    full = tl.polyfit(x, y, 3, full=True)
    fulln = np.polyfit(x, y, 3, full=True)
    for got, want in zip(full, fulln):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9)
    check_grads(lambda x, y, w: tl.polyfit(x, y, 2, w=w), (x, y, w), order=2, modes=("rev",))


def test_polyfit_warns_when_rank_deficient_and_refuses_bad_input():
    x = np.array([1.0, 1.0, 1.0, 2.0])
    with pytest.warns(np.exceptions.RankWarning, match=r"polyfit: .*rank 2 < 4"):
        tl.polyfit(x, x, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.polyfit(x, x, 3, full=True)  # full: the rank is returned, no warning (NumPy's)
    with pytest.raises(TypeError, match=r"^polyfit: expected a 1-d vector for x, got x shape \(2, 2\) \(float64\)"):
        tl.polyfit(np.ones((2, 2)), np.ones(2), 1)
    with pytest.raises(TypeError, match=r"^polyfit: expected w and y to have the same length"):
        tl.polyfit(np.arange(3.0), np.ones(3), 1, w=np.ones(2))


def test_polynomials_against_jax():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    jax.config.update("jax_enable_x64", True)
    u, v = RNG.standard_normal(5), RNG.standard_normal(3)
    np.testing.assert_allclose(tl.polymul(u, v).numpy(), jnp.polymul(u, v), rtol=1e-13)
    np.testing.assert_allclose(tl.polyder(u, 2).numpy(), jnp.polyder(u, 2), rtol=1e-13)
    np.testing.assert_allclose(
        tl.polyint(u, 2, k=[1.0, 2.0]).numpy(), jnp.polyint(u, 2, k=np.array([1.0, 2.0])), rtol=1e-13
    )
    q, r = tl.polydiv(u, v)
    jq, jr = jnp.polydiv(u, v, trim_leading_zeros=True)
    np.testing.assert_allclose(q.numpy(), jq, rtol=1e-12)
    np.testing.assert_allclose(r.numpy(), jr[-2:], rtol=1e-12)
    np.testing.assert_allclose(
        np.sort_complex(tl.roots(u).numpy()), np.sort_complex(np.asarray(jnp.roots(u))), rtol=1e-10
    )
    x = np.linspace(0, 1, 7)
    np.testing.assert_allclose(
        tl.polyfit(x, u[0] + x**2, 2).numpy(), jnp.polyfit(x, u[0] + x**2, 2), rtol=1e-9, atol=1e-12
    )
    # the gradient of the polyfit coefficients with respect to y: JAX's autodiff
    g = jax.grad(lambda y: jnp.sum(jnp.polyfit(x, y, 2) ** 2))(np.cos(x))
    np.testing.assert_allclose(tl.grad(lambda y: tl.sum(tl.polyfit(x, y, 2) ** 2))(np.cos(x)).numpy(), g, rtol=1e-9)

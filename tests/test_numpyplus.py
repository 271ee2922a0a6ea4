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


# ---------------------------------------------------------------- unwrap, modf, divmod
@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"discont": 1.0}, {"period": 3.0}, {"period": 360.0, "axis": -1}])
def test_unwrap_matches_numpy(kwargs):
    p = np.cumsum(RNG.uniform(-4, 4, (3, 7)), axis=1) * (50 if kwargs.get("period") == 360.0 else 1)
    got = tl.unwrap(p, **kwargs)
    np.testing.assert_allclose(got.numpy(), np.unwrap(p, **kwargs), rtol=1e-14, atol=1e-12)
    # a float32 phase stays float32 (NumPy 2: the period is a weak Python float)
    assert tl.unwrap(p.astype(np.float32), **kwargs).dtype == np.unwrap(p.astype(np.float32), **kwargs).dtype


def test_unwrap_integer_phases_and_the_half_period_boundary():
    for p in (np.array([0, 3, 6, 9]), np.array([0, 1, 5, 9]), np.array([0, 2, 4, -2])):
        for period in (4, 6, 5, 2 * np.pi):
            got, want = tl.unwrap(p, period=period), np.unwrap(p, period=period)
            assert got.dtype == want.dtype, (p, period)
            np.testing.assert_array_equal(got.numpy(), want)
    # a jump of exactly half a period: up when the step was up
    np.testing.assert_array_equal(tl.unwrap(np.array([0.0, np.pi])).numpy(), np.unwrap([0.0, np.pi]))
    assert tl.unwrap(np.zeros((2, 0))).shape == (2, 0)


def test_unwrap_gradient_is_the_identity_in_p_and_reaches_a_tensor_period():
    p = np.cumsum(RNG.uniform(0.5, 3.0, 6))
    check_grads(tl.unwrap, (p,), order=2)
    period = np.array(2.5)
    check_grads(lambda per: tl.unwrap(p, period=per), (period,), order=1)


def test_modf_signs_infinities_and_gradient():
    x = np.array([-3.0, -0.0, 0.0, np.inf, -np.inf, np.nan, 2.5, -2.5, 4.0, 1e300, -1e-300])
    fraction, whole = tl.modf(x)
    want_fraction, want_whole = np.modf(x)
    np.testing.assert_array_equal(fraction.numpy(), want_fraction)
    np.testing.assert_array_equal(np.signbit(fraction.numpy()), np.signbit(want_fraction))
    np.testing.assert_array_equal(whole.numpy(), want_whole)
    np.testing.assert_array_equal(np.signbit(whole.numpy()), np.signbit(want_whole))
    assert [t.dtype for t in tl.modf(np.array([3, -2]))] == [np.float64, np.float64]
    g = tl.grad(lambda x: tl.sum(tl.modf(x)[0] + 3 * tl.modf(x)[1]))(tl.tensor([-3.0, 2.5, -0.75]))
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0, 1.0])  # the fraction's slope, also at -3.0 (JAX's)


def test_divmod_follows_numpy_signs_and_the_remainder_gets_gradients():
    x1, x2 = np.array([7, -7, 7, -7, 0]), np.array([2, 2, -2, -2, 3])
    q, r = tl.divmod(x1, x2)
    nq, nr = np.divmod(x1, x2)
    assert q.dtype == nq.dtype and r.dtype == nr.dtype
    np.testing.assert_array_equal(q.numpy(), nq)
    np.testing.assert_array_equal(r.numpy(), nr)
    f1, f2 = np.array([7.5, -7.5, 7.5, -0.0, 1.0]), np.array([2.0, 2.0, -2.0, 3.0, np.inf])
    for got, want in zip(tl.divmod(f1, f2), np.divmod(f1, f2)):
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))
    a, b = np.array([5.3, -5.3, 2.2]), np.array([2.0, 1.5, -0.7])
    check_grads(lambda a, b: tl.divmod(a, b)[1], (a, b), order=2)


# ---------------------------------------------------------------- resize, diagflat, trim_zeros, extract, ix_
def test_resize_repeats_and_cuts_as_numpy():
    for a in (np.array([1, 2, 3]), np.arange(6.0).reshape(2, 3), np.array(5.0), np.zeros(0)):
        for shape in (7, (2, 4), (), (0,), (3, 0), (1, 1, 5)):
            got, want = tl.resize(a, shape), np.resize(a, shape)
            assert got.dtype == want.dtype and got.shape == want.shape, (a, shape)
            np.testing.assert_array_equal(got.numpy(), want)
    # repeats add up in the gradient
    g = tl.grad(lambda a: tl.sum(tl.resize(a, (2, 4))))(tl.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0, 2.0])
    with pytest.raises(ValueError, match=r"^resize: all elements of new_shape must be non-negative"):
        tl.resize(np.ones(2), -1)


def test_diagflat_matches_numpy():
    for v in (np.array([[1, 2], [3, 4]]), np.array(7.0), np.arange(3.0)):
        for k in (-2, 0, 1):
            np.testing.assert_array_equal(tl.diagflat(v, k).numpy(), np.diagflat(v, k))
    check_grads(lambda v: tl.diagflat(v, 1), (RNG.standard_normal((2, 2)),), order=2)


def test_trim_zeros_one_and_n_dimensional_and_refuses_tracing():
    a = np.array([0, 0, 1, 2, 0, 3, 0, 0])
    for trim in ("fb", "f", "b", "F", "bf"):
        np.testing.assert_array_equal(tl.trim_zeros(a, trim).numpy(), np.trim_zeros(a, trim))
    np.testing.assert_array_equal(tl.trim_zeros(np.zeros(3)).numpy(), np.trim_zeros(np.zeros(3)))
    m = np.zeros((4, 5))
    m[1, 2], m[2, 3] = 1.0, -2.0
    for axis in (None, 0, 1, -1, (0, 1)):
        np.testing.assert_array_equal(tl.trim_zeros(m, axis=axis).numpy(), np.trim_zeros(m, axis=axis))
    g = tl.grad(lambda x: tl.sum(tl.trim_zeros(x) * 2.0))(tl.tensor([0.0, 1.0, 0.0, 2.0, 0.0]))
    np.testing.assert_array_equal(g.numpy(), [0.0, 2.0, 2.0, 2.0, 0.0])
    for trim in ("x", ""):
        with pytest.raises(ValueError, match=r"^trim_zeros: unexpected character\(s\) in trim"):
            tl.trim_zeros(a, trim)
    with pytest.raises(ValueError, match=r"^trim_zeros: the result's size depends on the values"):
        tl.function(tl.trim_zeros)(a)


def test_extract_matches_numpy_traced_too_and_differentiates_arr():
    arr = np.arange(12.0).reshape(3, 4)
    for condition in (np.mod(arr, 3) == 0, np.array([[2, 0, -1, 0]] * 3), np.zeros((3, 4), bool)):
        np.testing.assert_array_equal(tl.extract(condition, arr).numpy(), np.extract(condition, arr))
        np.testing.assert_array_equal(tl.function(tl.extract)(condition, arr).numpy(), np.extract(condition, arr))
    g = tl.grad(lambda a: tl.sum(tl.extract(np.mod(arr, 3) == 0, a)))(tl.tensor(arr))
    np.testing.assert_array_equal(g.numpy(), (np.mod(arr, 3) == 0).astype(float))


def test_ix_builds_open_meshes_as_numpy():
    m = np.arange(20.0).reshape(4, 5)
    for args in (([0, 2], [1, 3, 4]), ([True, False, True, True], [4]), ([], [1]), (np.array([3, 1]),)):
        got, want = tl.ix_(*args), np.ix_(*args)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == np.int64
            np.testing.assert_array_equal(g.numpy(), w)
        if len(args) == 2:
            np.testing.assert_array_equal(tl.tensor(m)[tl.ix_(*args)].numpy(), m[np.ix_(*args)])
    assert tl.ix_() == ()
    with pytest.raises(ValueError, match=r"^ix_: cross index must be 1-d, got argument 1 of shape \(2, 2\)"):
        tl.ix_([0], np.ones((2, 2), int))


# ---------------------------------------------------------------- sets and index helpers
def test_setxor1d_matches_numpy_with_nans_and_mixed_dtypes():
    cases = [
        ([1, 2, 3, 3], [3, 4, 5]),
        ([1.0, np.nan, 2.0], [2.0, np.nan]),
        ([1.0, np.nan], [3]),
        ([], [1, 1]),
        (np.array([[5, 1], [1, 0]]), [0, 7]),
    ]
    for a, b in cases:
        got, want = tl.setxor1d(a, b), np.setxor1d(np.asarray(a), np.asarray(b))
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(tl.setxor1d([1, 2], [2, 3], assume_unique=True).numpy(), [1, 3])


def test_index_helpers_from_arrays_and_mask_indices():
    for shape, k in (((3, 4), 1), ((4, 2), -1), ((0, 3), 0)):
        a = np.zeros(shape)
        for got, want in zip(tl.tril_indices_from(a, k), np.tril_indices_from(a, k)):
            np.testing.assert_array_equal(got.numpy(), want)
        for got, want in zip(tl.triu_indices_from(a, k), np.triu_indices_from(a, k)):
            np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(tl.diag_indices_from(np.zeros((3, 3, 3))), np.diag_indices_from(np.zeros((3, 3, 3)))):
        np.testing.assert_array_equal(got.numpy(), want)
    for func, k in ((tl.triu, 1), (tl.tril, -1), (np.triu, 0)):
        for got, want in zip(
            tl.mask_indices(4, func, k),
            np.mask_indices(4, np.triu if func is tl.triu else np.tril if func is tl.tril else func, k),
        ):
            np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match=r"^diag_indices_from: input array must be at least 2-d"):
        tl.diag_indices_from(np.zeros(3))


# ---------------------------------------------------------------- windows and i0
@pytest.mark.parametrize("name", ["hamming", "hanning", "blackman", "bartlett"])
def test_numpy_windows_match_numpy(name):
    for M in (-2, 0, 1, 2, 5, 8, 51):
        got, want = getattr(tl, name)(M), getattr(np, name)(M)
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, atol=1e-15)


def test_kaiser_matches_numpy_and_differentiates_beta():
    for M, beta in ((1, 5.0), (0, 1.0), (6, 3.3), (9, 0.0), (12, 14.0)):
        np.testing.assert_allclose(tl.kaiser(M, beta).numpy(), np.kaiser(M, beta), rtol=1e-14, atol=1e-300)
    check_grads(lambda b: tl.kaiser(7, b), (np.array(3.5),), order=2)
    # torch's periodic window is the symmetric one of M + 1 points without its last
    np.testing.assert_allclose(
        tl.signal.kaiser_window(6, beta=4.0, dtype=tl.float64).numpy(), np.kaiser(7, 4.0)[:-1], rtol=1e-14
    )
    np.testing.assert_allclose(tl.signal.blackman_window(6, dtype=tl.float64).numpy(), np.blackman(7)[:-1], atol=1e-15)
    np.testing.assert_allclose(tl.signal.bartlett_window(6, dtype=tl.float64).numpy(), np.bartlett(7)[:-1], atol=1e-15)


def test_windows_against_torch():
    torch = pytest.importorskip("torch")
    for name in ("blackman", "bartlett", "hann", "hamming"):
        for periodic in (True, False):
            want = getattr(torch, f"{name}_window")(7, periodic=periodic, dtype=torch.float64).numpy()
            np.testing.assert_allclose(
                getattr(tl.signal, f"{name}_window")(7, periodic, tl.float64).numpy(), want, atol=1e-15
            )
    want = torch.kaiser_window(7, periodic=False, beta=5.0, dtype=torch.float64).numpy()
    np.testing.assert_allclose(tl.signal.kaiser_window(7, False, 5.0, tl.float64).numpy(), want, rtol=1e-12)


def test_i0_is_the_special_function_with_numpy_dtypes():
    assert tl.i0 is tl.special.i0
    x = np.array([-3.0, 0.0, 0.5, 10.0])
    np.testing.assert_allclose(tl.i0(x).numpy(), np.i0(x), rtol=1e-14)
    assert tl.i0(np.array([1, 2])).dtype == np.i0(np.array([1, 2])).dtype


def test_new_functions_against_jax():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    jax.config.update("jax_enable_x64", True)
    p = np.cumsum(RNG.uniform(-4, 4, 9))
    np.testing.assert_allclose(tl.unwrap(p).numpy(), jnp.unwrap(p), rtol=1e-13)
    np.testing.assert_allclose(tl.resize(np.arange(5.0), (3, 3)).numpy(), jnp.resize(np.arange(5.0), (3, 3)))
    x = np.array([-2.5, 3.75, 0.5])
    np.testing.assert_allclose(tl.modf(x)[0].numpy(), jnp.modf(x)[0])
    g = jax.grad(lambda x: jnp.sum(jnp.modf(x)[0] ** 2))(x)
    np.testing.assert_allclose(tl.grad(lambda x: tl.sum(tl.modf(x)[0] ** 2))(x).numpy(), g)
    np.testing.assert_allclose(tl.kaiser(8, 2.5).numpy(), jnp.kaiser(8, 2.5), rtol=1e-13)


# ---------------------------------------------------------------- the array API's unique_*
UNIQUE_INPUTS = [
    np.array([3.0, np.nan, 1.0, np.nan, 3.0, -0.0, 0.0]),
    np.array([[3, 1], [1, 2]]),
    np.array([], np.float32),
    np.array(2.5),
    np.array([True, False, True]),
]


@pytest.mark.parametrize("x", UNIQUE_INPUTS, ids=lambda x: f"{x.dtype}{x.shape}")
def test_unique_functions_match_numpy_2_with_every_nan_distinct(x):
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(tl, name)(x), getattr(np, name)(x)
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        for g, w in zip(got, want):
            assert (g.dtype, g.shape) == (w.dtype, w.shape), name
            np.testing.assert_array_equal(g.numpy(), w)
    got = tl.unique_values(x)
    np.testing.assert_array_equal(got.numpy(), np.sort(np.unique_values(x)))  # NumPy 2.3+: hash order
    values, inverse = tl.unique_inverse(x)
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], x)  # NaNs rebuild too
    # tl.unique keeps NumPy's default (NaNs as one) and takes equal_nan=False as NumPy does
    np.testing.assert_array_equal(tl.unique(x).numpy(), np.unique(x))
    np.testing.assert_array_equal(tl.unique(x, equal_nan=False).numpy(), np.unique(x, equal_nan=False))


def test_unique_all_gradient_goes_to_first_occurrences_and_traces():
    x = tl.tensor([3.0, 1.0, 3.0, 2.0])
    g = tl.grad(lambda x: tl.sum(tl.unique_all(x).values * tl.tensor([10.0, 20.0, 30.0])))(x)
    np.testing.assert_array_equal(g.numpy(), [30.0, 10.0, 0.0, 20.0])
    traced = tl.function(tl.unique_counts)(np.array([3.0, 1.0, 3.0]))
    assert type(traced).__name__ == "UniqueCountsResult"
    np.testing.assert_array_equal(traced.counts.numpy(), [1, 2])


def test_unique_functions_against_jax():
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([3.0, np.nan, 1.0, np.nan, 3.0])
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        for g, w in zip(getattr(tl, name)(x), getattr(jnp, name)(x)):
            np.testing.assert_array_equal(g.numpy(), np.asarray(w).reshape(g.shape))
    np.testing.assert_array_equal(tl.unique_values(x).numpy(), jnp.unique_values(x))


# ---------------------------------------------------------------- histograms
def _assert_histograms_equal(got, want):
    got, want = tl.tree.leaves(got), [np.asarray(w) for w in tl.tree.leaves(list(want))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-13)


@pytest.mark.parametrize("bins", [5, np.array([-2.0, -0.5, 0.0, 3.0]), "auto", "fd", "sturges", "sqrt", "doane"])
def test_histogram_bin_edges_match_numpy(bins):
    a = RNG.standard_normal(40)
    for x in (a, a.astype(np.float32), np.round(a * 3).astype(np.int64)):
        _assert_histograms_equal([tl.histogram_bin_edges(x, bins)], [np.histogram_bin_edges(x, bins)])
        if not isinstance(bins, str):
            _assert_histograms_equal(
                [tl.histogram_bin_edges(x, bins, range=(-1, 2))], [np.histogram_bin_edges(x, bins, range=(-1, 2))]
            )
    with pytest.raises(TypeError, match=r"^histogram_bin_edges: the 'auto' estimator does not take weights"):
        tl.histogram_bin_edges(a, "auto", weights=np.ones(40))


def test_histogram2d_and_histogramdd_match_numpy():
    x, y, z = (np.round(RNG.standard_normal(60) * 2) / 2 for _ in range(3))  # values on the edges too
    w = RNG.uniform(0.5, 2.0, 60)
    cases = [
        ((x, y), {}),
        ((x, y), {"bins": [3, np.array([-1.0, 0.0, 0.5, 2.0])], "range": [(-1, 1), None], "density": True}),
        ((x, y), {"bins": np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), "weights": w}),
        ((x.astype(np.float32), y.astype(np.float32)), {"bins": 4}),
        ((x[:0], y[:0]), {"bins": 2}),
    ]
    for args, kwargs in cases:
        _assert_histograms_equal(tl.histogram2d(*args, **kwargs), np.histogram2d(*args, **kwargs))
    sample = np.stack([x, y, z], axis=1)
    for kwargs in ({"bins": (2, 3, 4)}, {"bins": 3, "weights": w, "density": True}, {"range": [(0, 1), None, (-2, 0)]}):
        _assert_histograms_equal(tl.histogramdd(sample, **kwargs), np.histogramdd(sample, **kwargs))
    _assert_histograms_equal(tl.histogramdd([x, y], bins=2), np.histogramdd([x, y], bins=2))
    _assert_histograms_equal(
        tl.histogramdd(np.arange(6).reshape(3, 2), 2), np.histogramdd(np.arange(6).reshape(3, 2), 2)
    )
    _assert_histograms_equal(tl.histogramdd(x, 4), np.histogramdd(x, 4))


def test_histogram2d_gradient_in_weights_and_tracing():
    x, y, w = RNG.standard_normal(20), RNG.standard_normal(20), RNG.uniform(0.5, 2.0, 20)
    check_grads(lambda w: tl.histogram2d(x, y, bins=3, weights=w, density=True)[0], (w,), order=2)
    traced = tl.function(lambda x, y: tl.histogram2d(x, y, bins=3))(x, y)
    _assert_histograms_equal(traced, np.histogram2d(x, y, bins=3))


def test_traced_histogram_of_no_values_gives_numpys_unit_range():
    # tl.function(tl.histogram) raised "zero-size array to reduction operation minimum" for an empty a
    # (eager gave NumPy's edges over (0, 1)).
    for a in (np.zeros(0), np.zeros(0, np.float32)):
        traced = tl.function(lambda a: tl.histogram(a, 3))(a)
        _assert_histograms_equal(traced, np.histogram(a, 3))
    spec = tl.TensorSpec((None,), tl.float64)
    graph = tl.function(lambda a: tl.histogram(a, 3)).get_graph(spec)
    hist, edges = graph(np.zeros(0))
    _assert_histograms_equal([hist, edges], np.histogram(np.zeros(0), 3))
    _assert_histograms_equal(graph(np.array([1.0, 2.0, 5.0])), np.histogram(np.array([1.0, 2.0, 5.0]), 3))


def test_histograms_against_jax():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    jax.config.update("jax_enable_x64", True)
    x, y = RNG.standard_normal(30), RNG.standard_normal(30)
    for g, w in zip(tl.histogram2d(x, y, bins=[3, 4]), jnp.histogram2d(x, y, bins=[3, 4])):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)
    h, edges = tl.histogramdd(np.stack([x, y], 1), bins=3, density=True)
    jh, jedges = jnp.histogramdd(np.stack([x, y], 1), bins=3, density=True)
    np.testing.assert_allclose(h.numpy(), jh, rtol=1e-12)
    for e, je in zip(edges, jedges):
        np.testing.assert_allclose(e.numpy(), je, rtol=1e-12)
    np.testing.assert_allclose(tl.histogram_bin_edges(x, 6).numpy(), jnp.histogram_bin_edges(x, 6), rtol=1e-12)


# ---------------------------------------------------------------- NumPy's writers, functional (JAX's inplace=False)
def _numpy_written(writer, a, *args, **kwargs):
    out = np.array(a, copy=True)
    writer(out, *args, **kwargs)
    return out


def test_put_matches_numpy_modes_repeats_and_leaves_its_input_alone():
    a = np.arange(12.0).reshape(3, 4)
    cases = [
        (([0, 5, -1], [9.0, 8.0, 7.0]), {}),
        (([0, 5, 13, 30], [9.0]), {"mode": "wrap"}),
        (([0, 5, 13, -20], [9.0, 1.0]), {"mode": "clip"}),
        (([1, 1, 1], [5.0, 6.0, 7.0]), {}),  # the last write wins
        (([], [1.0]), {}),
    ]
    t = tl.tensor(a)
    for args, kwargs in cases:
        np.testing.assert_array_equal(tl.put(t, *args, **kwargs).numpy(), _numpy_written(np.put, a, *args, **kwargs))
    np.testing.assert_array_equal(t.numpy(), np.arange(12.0).reshape(3, 4))  # not written in place
    # gradients: a where not overwritten, v where it was written last
    g_a, g_v = tl.grad(lambda a, v: tl.sum(tl.put(a, [1, 1, 4], v) * np.arange(12.0).reshape(3, 4)), argnums=(0, 1))(
        tl.tensor(a), tl.tensor([1.0, 2.0, 3.0])
    )
    want = np.arange(12.0)
    want[[1, 4]] = 0.0
    np.testing.assert_array_equal(g_a.numpy().ravel(), want)
    np.testing.assert_array_equal(g_v.numpy(), [0.0, 1.0, 4.0])
    with pytest.raises(IndexError, match=r"^put: index 12 is out of bounds for size 12"):
        tl.put(a, [12], 1.0)
    with pytest.raises(ValueError, match=r"^put: tensors are immutable, so inplace=True"):
        tl.put(a, [0], 1.0, inplace=True)
    with pytest.raises(TypeError, match=r"^put: values of dtype float64 .* cannot be held exactly .* int64"):
        tl.put(np.arange(3), [0], np.array([2.5]))  # NumPy truncates to 2


def test_place_matches_numpy_and_traces():
    a = np.arange(12.0).reshape(3, 4)
    mask = np.array([[True, False, True, False]] * 3)
    for vals in ([1.0, 2.0, 3.0, 4.0, 5.0], [7.0], np.arange(10.0)):
        np.testing.assert_array_equal(tl.place(a, mask, vals).numpy(), _numpy_written(np.place, a, mask, vals))
        traced = tl.function(lambda a, m, v: tl.place(a, m, v))(a, mask, np.asarray(vals))
        np.testing.assert_array_equal(traced.numpy(), _numpy_written(np.place, a, mask, vals))
    np.testing.assert_array_equal(tl.place(a, np.zeros((3, 4), bool), []).numpy(), a)
    check_grads(lambda a, v: tl.place(a, mask, v), (a, np.array([1.0, 2.0, 3.0, 4.0, 5.0])), order=2)


def test_put_along_axis_matches_numpy():
    a = RNG.standard_normal((3, 4))
    top = np.argsort(a, axis=1)[:, -2:]
    np.testing.assert_array_equal(
        tl.put_along_axis(a, top, 0.0, 1).numpy(), _numpy_written(np.put_along_axis, a, top, 0.0, 1)
    )
    rows = np.array([[0, 2, 1, 0]])
    vals = np.array([[1.0, 2.0, 3.0, 4.0]])
    np.testing.assert_array_equal(
        tl.put_along_axis(a, rows, vals, 0).numpy(), _numpy_written(np.put_along_axis, a, rows, vals, 0)
    )
    np.testing.assert_array_equal(
        tl.put_along_axis(a, np.array([1, 5]), np.array([7.0, 8.0]), None).numpy(),
        _numpy_written(np.put_along_axis, a, np.array([1, 5]), np.array([7.0, 8.0]), None),
    )
    check_grads(lambda a, v: tl.put_along_axis(a, top, v, -1), (a, np.ones((3, 2))), order=2)


@pytest.mark.parametrize(
    "shape, wrap",
    [((3, 4), False), ((5, 2), False), ((5, 2), True), ((7, 3), True), ((3, 3, 3), False), ((0, 0), False)],
)
def test_fill_diagonal_matches_numpy(shape, wrap):
    a = RNG.standard_normal(shape)
    for val in (5.0, [1.0, 2.0]):
        want = _numpy_written(np.fill_diagonal, a, val, wrap=wrap)
        np.testing.assert_array_equal(tl.fill_diagonal(a, val, wrap=wrap).numpy(), want)


def test_writers_against_jax():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    jax.config.update("jax_enable_x64", True)
    a = RNG.standard_normal((4, 4))
    np.testing.assert_array_equal(tl.fill_diagonal(a, 3.0).numpy(), jnp.fill_diagonal(a, 3.0, inplace=False))
    mask = a > 0
    np.testing.assert_array_equal(
        tl.place(a, mask, np.array([1.0, 2.0])).numpy(), jnp.place(a, mask, np.array([1.0, 2.0]), inplace=False)
    )
    idx = np.argmax(a, axis=1, keepdims=True)
    np.testing.assert_array_equal(
        tl.put_along_axis(a, idx, -1.0, 1).numpy(), jnp.put_along_axis(a, idx, -1.0, 1, inplace=False)
    )
    np.testing.assert_array_equal(
        tl.put(a, [0, 5], [9.0, 8.0]).numpy(), jnp.put(a, np.array([0, 5]), np.array([9.0, 8.0]), inplace=False)
    )


# ---------------------------------------------------------------- functions applied to parts of a tensor
def test_apply_along_axis_matches_numpy_and_differentiates():
    a = RNG.standard_normal((3, 4, 2))
    pairs = [
        (lambda v: tl.sum(v * v), lambda v: np.sum(v * v)),
        (lambda v: tl.stack([tl.max(v), tl.min(v)]), lambda v: np.stack([v.max(), v.min()])),
        (lambda v: tl.outer(v, v[:2]), lambda v: np.outer(v, v[:2])),
    ]
    for axis in (0, 1, 2, -1):
        for f, nf in pairs:
            got, want = tl.apply_along_axis(f, axis, a), np.apply_along_axis(nf, axis, a)
            assert got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    check_grads(lambda a: tl.apply_along_axis(lambda v: tl.sum(tl.sin(v)) * v, 1, a), (a,), order=2)
    with pytest.raises(ValueError, match=r"^apply_along_axis: cannot apply along axis 0 when another dimension is 0"):
        tl.apply_along_axis(tl.sum, 0, np.ones((2, 0)))


def test_apply_over_axes_matches_numpy():
    a = RNG.standard_normal((2, 3, 4))
    for func, nfunc, axes in ((tl.sum, np.sum, [0, 2]), (tl.mean, np.mean, 1), (tl.cumsum, np.cumsum, [2, 0])):
        np.testing.assert_allclose(
            tl.apply_over_axes(lambda t, ax, func=func: func(t, axis=ax), a, axes).numpy(),
            np.apply_over_axes(nfunc, a, axes),
            rtol=1e-14,
        )
    with pytest.raises(ValueError, match=r"^apply_over_axes: func returned an array of rank 0 for axis 0"):
        tl.apply_over_axes(lambda t, ax: tl.sum(t), a, [0])


def test_piecewise_calls_each_function_on_its_elements_only():
    x = np.linspace(-2.5, 2.5, 7)
    cases = [
        ([x < 0, x > 0], [lambda v: -v, lambda v: v**2]),
        ([x < 0], [lambda v: -v, 1.5]),
        ([x < 0, x < 1], [1.0, 2.0, 3.0]),
        (x > 0, [lambda v: v + 1]),
    ]
    for conds, funcs in cases:
        np.testing.assert_allclose(tl.piecewise(x, conds, funcs).numpy(), np.piecewise(x, conds, funcs), rtol=1e-15)
    # sqrt never sees the negative values: no NaN value and no NaN gradient from the branch not taken
    # (a where(x > 0, sqrt(x), 0) gives NaN gradients at x < 0).
    g = tl.grad(lambda x: tl.sum(tl.piecewise(x, [x > 0], [tl.sqrt, 0.0])))(tl.tensor([-1.0, 0.0, 4.0]))
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 0.25])
    traced = tl.function(lambda x: tl.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * 2]))(x)
    np.testing.assert_allclose(traced.numpy(), np.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * 2]))
    with pytest.raises(ValueError, match=r"^piecewise: with 2 condition\(s\), funclist must have 2 or 3 items, got 1"):
        tl.piecewise(x, [x < 0, x > 0], [1.0])

"""tl.special and tl.stats beyond the catalogue (``tensorlib/testing/op_db_special.py``):
the optional SciPy dependency, the defined edge cases, closed-form gradients."""

import subprocess
import sys

import numpy as np
import pytest

import tensorlib as tl

scipy_stats = pytest.importorskip("scipy.stats")


def test_import_tensorlib_needs_no_scipy_and_the_error_names_the_extra():
    code = (
        "import sys; sys.modules['scipy'] = None\n"
        "import tensorlib as tl\n"
        "try:\n    tl.special.gammaln(tl.tensor(2.0))\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "tl.special needs SciPy: pip install 'tensorlib[special]'" in out


def test_xlogy_is_zero_at_zero_with_zero_gradient_for_y():
    x, y = tl.tensor([0.0, 0.0, 2.0]), tl.tensor([0.0, 3.0, 3.0])
    np.testing.assert_allclose(tl.special.xlogy(x, y).numpy(), [0.0, 0.0, 2 * np.log(3.0)])
    gy = tl.grad(lambda y: tl.sum(tl.special.xlogy(x, y)))(y)
    np.testing.assert_allclose(gy.numpy(), [0.0, 0.0, 2 / 3.0])


def test_log_ndtr_gradient_stays_finite_in_the_far_left_tail():
    g = tl.grad(tl.special.log_ndtr)(tl.tensor(-40.0, dtype="float64"))
    assert np.isfinite(float(g)) and abs(float(g) - 40.0) < 0.1  # Mills ratio: about -x


def test_integer_inputs_give_float64_as_in_numpy_and_scipy():
    assert tl.special.gammaln(np.array([1, 2, 3])).dtype == np.float64
    assert tl.special.erf(np.array([0, 1])).dtype == np.float64
    assert tl.special.gammaln(np.ones(2, np.float32)).dtype == np.float32
    assert tl.special.gammaln(np.ones(2, np.float16)).dtype == np.float16


def test_normal_log_likelihood_gradients_are_the_closed_forms():
    x = np.array([0.5, -1.0, 2.0])
    loc, scale = tl.tensor(0.3, dtype="float64"), tl.tensor(1.5, dtype="float64")
    g_loc, g_scale = tl.grad(lambda m, s: tl.sum(tl.stats.norm.logpdf(x, m, s)), argnums=(0, 1))(loc, scale)
    np.testing.assert_allclose(float(g_loc), np.sum(x - 0.3) / 1.5**2)
    np.testing.assert_allclose(float(g_scale), np.sum((x - 0.3) ** 2) / 1.5**3 - 3 / 1.5)


def test_multivariate_normal_covariance_gradient_is_symmetric_closed_form():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    cov, x, mean = a @ a.T + 3 * np.eye(3), rng.standard_normal(3), rng.standard_normal(3)
    g = tl.grad(lambda c: tl.stats.multivariate_normal.logpdf(x, mean, c))(tl.tensor(cov)).numpy()
    inv = np.linalg.inv(cov)
    d = (x - mean)[:, None]
    np.testing.assert_allclose(g, 0.5 * (inv @ d @ d.T @ inv - inv), rtol=1e-10, atol=1e-12)


def test_poisson_log_likelihood_is_maximised_at_the_mean():
    k = np.array([1, 4, 2, 5])
    g = tl.grad(lambda mu: tl.sum(tl.stats.poisson.logpmf(k, mu)))(tl.tensor(k.mean()))
    assert abs(float(g)) < 1e-12


def test_stats_values_match_scipy_for_python_scalar_parameters():
    x = np.linspace(0.1, 0.9, 4)
    np.testing.assert_allclose(tl.stats.beta.logpdf(x, 2.0, 3.0).numpy(), scipy_stats.beta.logpdf(x, 2.0, 3.0))
    np.testing.assert_allclose(
        tl.stats.gamma.logpdf(x, 2.0, scale=2.0).numpy(), scipy_stats.gamma.logpdf(x, 2.0, scale=2.0)
    )
    np.testing.assert_allclose(tl.stats.t.logpdf(x, 3.0, 0.5, 2.0).numpy(), scipy_stats.t.logpdf(x, 3.0, 0.5, 2.0))
    assert tl.stats.norm.logpdf(x.astype(np.float32)).dtype == np.float32


def test_stats_traced_with_python_float_parameters_compute_as_eagerly():
    # Traced, a Python-float parameter stayed a weak scalar: float32 data gave float64 results, float64 data
    # went through float32 (norm.logpdf(x, 0.0, 0.1) off by 1e-8).
    logpdfs = [
        lambda x, s: tl.stats.norm.logpdf(x, 0.0, s),
        lambda x, s: tl.stats.t.logpdf(x, s),
        lambda x, s: tl.stats.gamma.logpdf(x, 2.0, scale=s),
        lambda x, s: tl.stats.beta.logpdf(x, s, 2.0),
    ]
    for f in logpdfs:
        for x in (np.array([0.2, 0.7]), np.array([0.2, 0.7], np.float32), np.array([1, 2])):
            eager, traced = f(tl.tensor(x), 0.1), tl.function(f)(x, 0.1)
            assert traced.dtype == eager.dtype
            np.testing.assert_array_equal(traced.numpy(), eager.numpy())


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-9), ("float32", 1e-6)])
def test_student_t_logpdf_keeps_its_digits_for_a_large_df(dtype, rtol):
    # gammaln((df + 1) / 2) - gammaln(df / 2) cancelled: float32 lost every digit from df ~ 1e6, float64 from 1e13.
    x = np.array([-2.0, 0.0, 1.0], dtype=dtype)
    for df in (1e5, 1e8, 1e15):
        want = scipy_stats.t.logpdf(x.astype(np.float64), df)
        for f in (tl.stats.t.logpdf, tl.function(tl.stats.t.logpdf)):
            got = f(x, df)
            assert got.dtype == dtype
            np.testing.assert_allclose(got.numpy(), want, rtol=rtol)


def test_dirichlet_off_the_simplex_is_minus_inf_and_a_nonpositive_concentration_nan():
    alpha = np.array([1.0, 2.0, 3.0])
    x = np.array([[0.2, -0.1, 0.2, 0.0], [0.3, 0.6, 0.2, 0.5], [0.5, 0.5, 0.2, 0.5]])  # columns: points
    inside = scipy_stats.dirichlet.logpdf(x[:, [0, 3]], alpha)  # SciPy raises for the two off the simplex
    for f in (tl.stats.dirichlet.logpdf, tl.function(tl.stats.dirichlet.logpdf)):
        np.testing.assert_allclose(f(x, alpha).numpy(), [inside[0], -np.inf, -np.inf, inside[1]], rtol=1e-12)
        assert np.isnan(f(x[:, 0], np.array([0.0, 1.0, 1.0])).numpy())
    g = tl.grad(lambda x: tl.sum(tl.stats.dirichlet.logpdf(x, alpha)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(g[:, [1, 2]], 0.0)  # no nan leaks from the log of the negative entry
    np.testing.assert_allclose(g[:, 0], (alpha - 1) / x[:, 0])
    normalized = np.array([1.0, 2.0, 7.0], np.float32) / np.float32(10.0)  # sums to 1 within float32 rounding
    for x in (normalized, normalized.astype(np.float64)):
        assert np.isfinite(tl.stats.dirichlet.logpdf(x, alpha.astype(x.dtype)).numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_log_ndtr_gradient_is_the_mills_ratio_without_cancellation(dtype):
    # phi/Phi was exp(-x**2/2 - log sqrt(2 pi) - log_ndtr(x)), a difference of two numbers of size x**2/2:
    # float64 gave 1.78e8 for 1e8 at x = -1e8 (1e-4 off at -1e6), float32 5e-5 off at x = -50.
    special = pytest.importorskip("scipy.special")
    x = np.array([-1e8, -1e6, -1e4, -50.0, -3.0, 0.0, 2.0, 30.0], dtype=dtype)
    want = np.sqrt(2 / np.pi) / special.erfcx(-x.astype(np.float64) / np.sqrt(2))  # phi/Phi, no cancellation
    for grad in (
        tl.grad(lambda t: tl.sum(tl.special.log_ndtr(t))),
        tl.function(tl.grad(lambda t: tl.sum(tl.special.log_ndtr(t)))),
    ):
        got = grad(tl.tensor(x))
        assert got.dtype == dtype
        np.testing.assert_allclose(got.numpy(), want.astype(dtype), rtol=1e-12 if dtype == "float64" else 1e-6)


def test_erfcx_gradient_keeps_its_digits_for_large_x():
    # 2 x erfcx(x) - 2/sqrt(pi) cancels: at x = 1e8 it is -1/(sqrt(pi) x**2) (1 - 3/(2 x**2) + ...).
    x = np.array([-3.0, 0.5, 5.0, 19.9, 20.1, 100.0, 1e4, 1e8])
    special = pytest.importorskip("scipy.special")
    exact = 2 * x * special.erfcx(x) - 2 / np.sqrt(np.pi)  # 2e-13 off at x = 20, 2e-9 at 1e3
    asymptotic = -1 / (np.sqrt(np.pi) * x**2) * (1 - 1.5 / x**2 + 15 / (4 * x**4) - 105 / (8 * x**6))
    want = np.where(x < 50, exact, asymptotic)
    for grad in (
        tl.grad(lambda t: tl.sum(tl.special.erfcx(t))),
        tl.function(tl.grad(lambda t: tl.sum(tl.special.erfcx(t)))),
    ):
        np.testing.assert_allclose(grad(tl.tensor(x)).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-12), ("float32", 1e-6)])
def test_scaled_bessel_gradients_keep_their_digits_for_large_x(dtype, rtol):
    # i0e' = i1e - sign(x) i0e (and i1e' alike) cancel to -i0e/(2|x|): float32 gave 0 (i0e) and twice the
    # value (i1e) at x = 1e8, 2% off at 1e6; float64 was 3e-4 off at 1e12.
    special = pytest.importorskip("scipy.special")
    large = np.array([1e4, 1e6, 1e8, -1e8] + ([1e12] if dtype == "float64" else []))
    u = np.abs(large)
    c = 1 / np.sqrt(2 * np.pi)  # d/du of Hankel's expansion of exp(-u) I_nu(u), three terms
    want_large = {
        "i0e": np.sign(large) * -c * (0.5 * u**-1.5 + 1.5 / 8 * u**-2.5 + 2.5 * 9 / 128 * u**-3.5),
        "i1e": -c * (0.5 * u**-1.5 - 1.5 * 3 / 8 * u**-2.5 - 2.5 * 15 / 128 * u**-3.5),
    }
    small = np.array([-10.0, -0.5, 0.5, 3.0] + ([25.0] if dtype == "float64" else []))  # float32: 3e-6 at 25
    want_small = {
        "i0e": special.i1e(small) - np.sign(small) * special.i0e(small),
        "i1e": special.i0e(small) - np.sign(small) * special.i1e(small) - special.i1e(small) / small,
    }
    x = np.concatenate([large, small]).astype(dtype)
    for name in ("i0e", "i1e"):
        want = np.concatenate([want_large[name], want_small[name]])
        grad = tl.grad(lambda t: tl.sum(getattr(tl.special, name)(t)))
        for g in (grad, tl.function(grad)):
            got = g(tl.tensor(x))
            assert got.dtype == dtype
            np.testing.assert_allclose(got.numpy(), want, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 2e-6)])
def test_betaln_gradients_do_not_subtract_digammas(dtype, rtol):
    # digamma(a) - digamma(a + b) cancelled: d/da betaln(1e15, 10) was -1.42e-14 for -1.0e-14, d/db
    # betaln(1e-12, 2) 1.6e-4 off; in float32 d/da betaln(1e8, 0.5) and d/db betaln(1e-8, 0.5) were 0.
    special = pytest.importorskip("scipy.special")
    big, tiny = 1e15 if dtype == "float64" else 1e8, 1e-12 if dtype == "float64" else 1e-8
    a = np.array([big, tiny, 0.3, 2.0, 40.0])
    b = np.array([10.0, 2.0, 0.7, 3.0, 30.0])

    def psi_difference(x, y):  # digamma(x) - digamma(x + y), each case by a formula that does not cancel
        return np.select(
            [x >= 1e6, y <= 1e-6],
            [
                -np.log1p(y / x) - y / (2 * x * (x + y)),
                -y * special.polygamma(1, x) - y**2 / 2 * special.polygamma(2, x),
            ],
            special.digamma(x) - special.digamma(x + y),
        )

    want_a, want_b = psi_difference(a, b), psi_difference(b, a)
    beta = special.beta(a, b)
    args = (tl.tensor(a.astype(dtype)), tl.tensor(b.astype(dtype)))
    for f, want in ((tl.special.betaln, (want_a, want_b)), (tl.special.beta, (beta * want_a, beta * want_b))):
        grad = tl.grad(lambda a, b: tl.sum(f(a, b)), argnums=(0, 1))
        for g in (grad, tl.function(grad)):
            for got, w in zip(g(*args), want):
                assert got.dtype == dtype
                np.testing.assert_allclose(got.numpy(), w.astype(dtype), rtol=rtol, atol=0, err_msg=f.__name__)


def test_logit_off_numpy_keeps_its_digits_around_one_half():
    # The Array API kernel was log(p / (1 - p)): 2e-9 relative off at p = 0.5 + 1e-10 (SciPy switches to
    # log1p(2p - 1) - log1p(1 - 2p) on [0.3, 0.65]).
    pytest.importorskip("array_api_strict")
    special = pytest.importorskip("scipy.special")
    p = np.array([0.0, 1e-300, 0.2, 0.3, 0.5 - 1e-12, 0.5, 0.5 + 1e-10, 0.6, 0.65, 0.9, 1.0, 1.5, np.nan])
    with tl.backend("array_api_strict"), np.errstate(divide="ignore", invalid="ignore"):  # 0, 1, 1.5 as SciPy
        got = np.asarray(tl.special.logit(tl.tensor(p)).numpy())
    np.testing.assert_allclose(got, special.logit(p), rtol=1e-15, atol=0)


def test_erf_off_numpy_is_odd_down_to_the_sign_of_zero():
    # The Array API kernel chose the sign by x < 0, so erf(-0.0) came out +0.0 (SciPy's: -0.0).
    pytest.importorskip("array_api_strict")
    x = np.array([-0.0, 0.0, -1e-300, 1e-300, -2.5, 3.5, -np.inf, np.nan])
    for dtype in ("float64", "float32"):
        with tl.backend("array_api_strict"):
            got = np.asarray(tl.special.erf(tl.tensor(x.astype(dtype))).numpy())
        want = np.array(
            [
                -0.0,
                0.0,
                -1.1283791670955126e-300,
                1.1283791670955126e-300,
                -0.999593047982555,
                0.9999992569016276,
                -1.0,
                np.nan,
            ]
        ).astype(dtype)
        np.testing.assert_allclose(got, want, rtol=2e-15 if dtype == "float64" else 1e-7)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_float32_gradients_that_cancel_are_formed_in_float64_and_rounded_once():
    # In float32 these derivatives lost digits in proportion to x**2: erfcx' was 5e-5 off at x = 13.7,
    # log_ndtr' 5e-6 at 11.6, i0e' and i1e' 5e-6 at 29.  Each reference is float64 SciPy, accurate there.
    special = pytest.importorskip("scipy.special")
    x = np.array([13.748321, 11.632543, 29.0, -29.0, 5.0, 0.5], np.float32).astype(np.float64)
    wants = {
        "erfcx": 2 * x * special.erfcx(x) - 2 / np.sqrt(np.pi),
        "log_ndtr": np.sqrt(2 / np.pi) / special.erfcx(-x / np.sqrt(2)),
        "i0e": special.i1e(x) - np.sign(x) * special.i0e(x),
        "i1e": special.i0e(x) - np.sign(x) * special.i1e(x) - special.i1e(x) / x,
    }
    # exp(-x**2) and exp(erfinv(y)**2) in float32: erfc' 8e-7 off at 5.42, ndtr' 7e-7 at 10.56, erfcinv' 1e-6.
    z = np.array([5.4228005, -3.5, 10.5621605, 0.25], np.float32).astype(np.float64)
    p = np.array([-0.99976176, 0.5, 0.9999, 1e-3], np.float32).astype(np.float64)
    q = (1 + p).astype(np.float32).astype(np.float64)
    wants.update(
        erfc=-2 / np.sqrt(np.pi) * np.exp(-(z**2)),
        ndtr=np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi),
        erfinv=np.sqrt(np.pi) / 2 * np.exp(special.erfinv(p) ** 2),
        erfcinv=-np.sqrt(np.pi) / 2 * np.exp(special.erfcinv(q) ** 2),
    )
    points = {"erfc": z, "ndtr": z, "erfinv": p, "erfcinv": q}
    for name, want in wants.items():
        grad = tl.grad(lambda t: tl.sum(getattr(tl.special, name)(t)))
        for g in (grad, tl.function(grad)):
            got = g(tl.tensor(points.get(name, x).astype(np.float32)))
            assert got.dtype == np.float32
            np.testing.assert_allclose(got.numpy(), want.astype(np.float32), rtol=1.2e-7, atol=0, err_msg=name)


def test_i1_gradient_overflows_to_inf_not_nan():
    # i0(x) - i1(x) / x was inf - inf = NaN once i0 overflows (float32 from |x| = 93, float64 from 714).
    for dtype, x in (("float32", [110.0, -150.0]), ("float64", [800.0, -800.0])):
        with np.errstate(invalid="ignore"):  # the sum of i1's values is inf + -inf; its gradient is fine
            g = tl.grad(lambda t: tl.sum(tl.special.i1(t)))(tl.tensor(np.array(x, dtype)))
        np.testing.assert_array_equal(g.numpy(), [np.inf, np.inf])

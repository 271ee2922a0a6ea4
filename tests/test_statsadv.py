"""tl.stats and tl.special attacked as an adversary: large counts and shapes (cancellation in the textbook
log-densities), float32 against the rounded float64 value, broadcasting and batches, parameters at the edges.

References: SciPy's float64 values where they are accurate (scipy.stats, scipy.special), closed forms and exact
identities (normalization, ratios of consecutive probabilities, d/dmu log p = k / mu - 1), float64 central
differences, and mpmath (importorskip) at the extremes where SciPy's own formula loses its digits.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl

scipy_stats = pytest.importorskip("scipy.stats")


def _ulps(got, want, dtype):
    """Distance in ``dtype`` ulps between ``got`` and the rounded ``want`` (arrays)."""
    want = np.asarray(want, np.float64).astype(dtype)
    return np.abs(np.asarray(got, np.float64) - want) / np.spacing(np.abs(want)).astype(np.float64)


# ---------------------------------------------------------------- poisson and gamma: Loader's saddle-point form
@pytest.mark.parametrize("n", [1e3, 1e4, 1e5, 1e6])
def test_poisson_logpmf_float32_keeps_its_digits_for_large_counts(n):
    # The textbook k log(mu) - mu - log(k!) cancelled terms of size k log k: 1425 ulps at 1e4, 0.17 off at 1e6.
    k = np.float32([n, n, n + 7, n - 30, 2 * n])
    mu = np.float32([n, n + 3, n, n, n])
    got = tl.stats.poisson.logpmf(k, mu).numpy()
    assert got.dtype == np.float32
    want = scipy_stats.poisson.logpmf(k.astype(np.float64), mu.astype(np.float64))
    assert _ulps(got, want, np.float32).max() <= 6  # the deviance's direct form at k = 2 mu cancels 3.6x


def test_poisson_logpmf_float64_sums_to_one_for_a_huge_mean():
    # At mu = 1e9 the textbook form is 4e-6 off per term (SciPy too); the probabilities must sum to 1.
    mu = 1e9
    k = np.arange(mu - 8 * np.sqrt(mu), mu + 8 * np.sqrt(mu) + 1).round()
    total = np.exp(tl.stats.poisson.logpmf(k, np.float64(mu)).numpy()).sum()
    np.testing.assert_allclose(total, 1.0, rtol=1e-11)


def test_poisson_logpmf_consecutive_ratio_is_exact_at_1e15():
    # p(k + 1) / p(k) = mu / (k + 1): both terms came out -16 or -20 (multiples of the ulp of 3e16), not -18.19.
    k = np.float64([1e15 - 1, 1e15, 1e15 + 1])
    logp = tl.stats.poisson.logpmf(k, np.float64(1e15)).numpy()
    np.testing.assert_allclose(np.diff(logp), np.log(1e15 / (k[1:])), atol=1e-13)
    np.testing.assert_allclose(logp[1], -0.5 * np.log(2 * np.pi * 1e15) - 1 / 12e15, rtol=1e-15)  # Stirling


def test_poisson_and_gamma_at_1e15_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    for k, mu in [(1e15, 1e15), (1e12, 1e12 + 1e6), (1e8, 1.1e8)]:
        want = float(mp.mpf(k) * mp.log(mu) - mu - mp.loggamma(mp.mpf(k) + 1))
        got = float(tl.stats.poisson.logpmf(np.float64(k), np.float64(mu)))
        assert got == pytest.approx(want, rel=1e-14), (k, mu)
        a, x = k + 1, mu  # Gamma(a) density at x: x**(a - 1) e**-x / Gamma(a)
        got = float(tl.stats.gamma.logpdf(np.float64(x), np.float64(a)))
        assert got == pytest.approx(want, rel=1e-14), (a, x)


def test_poisson_logpmf_gradients_are_exact_for_large_counts():
    k, mu = np.float64([1e6, 1e12, 40, 3]), np.float64([1e6 + 3, 1e12 - 1e5, 41, 2.5])
    g_mu = tl.grad(lambda m: tl.sum(tl.stats.poisson.logpmf(k, m)))(tl.tensor(mu)).numpy()
    np.testing.assert_allclose(g_mu, (k - mu) / mu, rtol=1e-9)
    k32, mu32 = np.float32([1e6, 5e4]), np.float32([1e6 + 64, 5e4 - 8])
    g32 = tl.grad(lambda m: tl.sum(tl.stats.poisson.logpmf(k32, m)))(tl.tensor(mu32)).numpy()
    want = (k32.astype(np.float64) - mu32) / mu32
    np.testing.assert_allclose(g32, want, rtol=2e-5)


@pytest.mark.parametrize("a", [1e3, 1e5, 2.0**24 + 2, 2.0**26])
def test_gamma_logpdf_float32_keeps_its_digits_for_a_large_shape(a):
    # 1425 ulps at a = 1e4, -8.0 for -7.83 at a = 1e6; from 2**24 a - 1 rounds in float32.
    a = np.float32(a)
    x = (a * np.float32([1.0, 0.999, 1.003, 0.9])).astype(np.float32)
    got = tl.stats.gamma.logpdf(x, a).numpy()
    assert got.dtype == np.float32
    want = scipy_stats.gamma.logpdf(x.astype(np.float64), np.float64(a))
    assert _ulps(got, want, np.float32).max() <= 6


def test_gamma_logpdf_gradients_in_x_and_a_match_closed_forms_for_a_large_shape():
    special = pytest.importorskip("scipy.special")
    x, a = np.float64([1e4, 2.5e7, 0.5, 3.0]), np.float64([1e4 + 10, 2.5e7, 1.0, 2.0])
    gx, ga = tl.grad(lambda x, a: tl.sum(tl.stats.gamma.logpdf(x, a)), argnums=(0, 1))(tl.tensor(x), tl.tensor(a))
    np.testing.assert_allclose(gx.numpy(), (a - 1 - x) / x, rtol=1e-10)
    np.testing.assert_allclose(ga.numpy(), np.log(x) - special.digamma(a), rtol=1e-7)


def test_gamma_and_poisson_keep_the_support_edges():
    gamma, poisson = tl.stats.gamma.logpdf, tl.stats.poisson.logpmf
    x = np.float64([0.0, 0.0, 0.0, np.inf, 2.0])
    a = np.float64([1.0, 0.5, 3.0, 2.0, np.inf])
    # at x = inf the density's limit, -inf (SciPy's formula reads inf - inf: NaN)
    np.testing.assert_array_equal(gamma(x, a).numpy(), [0.0, np.inf, -np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(
        poisson(np.float64([0, 0, 3, 2.5]), np.float64([0, 2, 0, 2])).numpy(), [0, -2, -np.inf, -np.inf]
    )
    g = tl.grad(lambda m: tl.stats.poisson.logpmf(np.float64(0.0), m))(tl.tensor(0.0, "float64"))
    assert float(g) == -1.0


# ---------------------------------------------------------------- betaln, beta and the t density at large arguments
def test_betaln_obeys_the_recurrence_and_the_closed_form_for_a_large_argument():
    # SciPy's betaln differences log-gammas of size b log b: betaln(2.5, 1e6) was 2e-9 off (3e5 ulps).
    # B(a + 1, b) = B(a, b) a / (a + b), and B(3, b) = 2 / (b (b + 1) (b + 2)).
    a = np.float64([0.5, 1.5, 2.5, 9.5, 30.0, 1e-3])
    b = np.float64([1e6, 1e6, 1e4, 1e6, 1e8, 1e6])
    value = tl.special.betaln(a, b).numpy()
    step = tl.special.betaln(a + 1, b).numpy() - value
    assert np.all(np.abs(step - np.log(a / (a + b))) <= 4e-16 * (1 + np.abs(value)))
    b = np.float64([10.0, 1e3, 1e6, 1e9])
    want = np.log(2.0) - np.log(b) - np.log(b + 1) - np.log(b + 2)
    np.testing.assert_allclose(tl.special.betaln(np.float64(3.0), b).numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(tl.special.beta(b, np.float64(3.0)).numpy(), np.exp(want), rtol=1e-13)


def test_betaln_and_beta_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    for a, b in [(2.5, 1e6), (0.5, 1e6), (10.0, 1e4), (20.0, 200.0), (1e-3, 1e6), (1e6, 1e6), (3.0, 4.0), (0.2, 12.0)]:
        want = mp.beta(a, b)
        assert float(tl.special.betaln(np.float64(a), np.float64(b))) == pytest.approx(float(mp.log(want)), rel=4e-16)
        assert float(tl.special.beta(np.float64(b), np.float64(a))) == pytest.approx(float(want), rel=1e-13)


def test_betaln_keeps_scipys_values_elsewhere_and_broadcasts():
    special = pytest.importorskip("scipy.special")
    a = np.float64([[-0.5, 2.0, np.nan, np.inf, 1.0, 0.0, 3.0, -2.0]])
    b = np.float64([[1.5], [20.0], [np.inf], [1e300]])
    np.testing.assert_array_equal(tl.special.betaln(a, b).numpy().shape, (4, 8))
    np.testing.assert_allclose(tl.special.betaln(a, b).numpy()[:2], special.betaln(a, b)[:2], rtol=1e-14)
    np.testing.assert_array_equal(tl.special.betaln(a, b).numpy()[2], special.betaln(a, b)[2])
    assert tl.special.betaln(np.float32(2.0), np.float32(1e6)).dtype == np.float32


def test_t_logpdf_at_a_large_df_is_accurate():
    # -betaln(df / 2, 1 / 2) inherited SciPy's error: t.logpdf(1, 2e6) was 7e-10 relative off (4e6 ulps).
    x, df = np.float64([0.0, 1.0, 3.0, 1.0]), np.float64([1e6, 2e6, 1e4, 1e12])
    # log Gamma((df + 1) / 2) - log Gamma(df / 2) = log(df / 2) / 2 + log of a ratio that is 1 - 1 / (4 df) + ...
    h = df / 2
    log_gamma_ratio = 0.5 * np.log(h) + np.log1p(-1 / (8 * h) + 1 / (128 * h**2) + 5 / (1024 * h**3))
    want = log_gamma_ratio - 0.5 * np.log(df * np.pi) - (df + 1) / 2 * np.log1p(x * x / df)
    np.testing.assert_allclose(tl.stats.t.logpdf(x, df).numpy(), want, rtol=2e-15)


# ---------------------------------------------------------------- beta: Loader's binomial form
@pytest.mark.parametrize("a, b", [(1e4, 1e4), (1e6, 1e6), (30.0, 1e5), (1e5, 7.0), (5.0, 10.0)])
def test_beta_logpdf_float32_keeps_its_digits_for_large_shapes(a, b):
    # (a - 1) log x + (b - 1) log(1 - x) - betaln(a, b) cancelled: 2211 ulps at a = b = 1e4, 6e4 at 1e6.
    mode, sd = (a - 1) / (a + b - 2), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    x = np.float32(np.clip(mode + sd * np.array([0.0, 1.0, -2.0, 4.0]), 1e-6, 1 - 1e-6))
    got = tl.stats.beta.logpdf(x, np.float32(a), np.float32(b)).numpy()
    assert got.dtype == np.float32
    want = scipy_stats.beta.logpdf(x.astype(np.float64), a, b)  # accurate enough for float32 (1e-9 relative)
    assert _ulps(got, want, np.float32).max() <= 3


def test_beta_logpdf_float64_ratio_in_a_is_exact_for_large_shapes():
    # f(x; a + 1, b) / f(x; a, b) = x (a + b) / a; the textbook form was 1e-9 off at a = b = 1e6.
    x = np.float64([0.5, 0.5005, 0.499, 0.502])
    a, b = np.float64(1e6), np.float64(1e6)
    step = tl.stats.beta.logpdf(x, a + 1, b).numpy() - tl.stats.beta.logpdf(x, a, b).numpy()
    np.testing.assert_allclose(step, np.log(x) + np.log((a + b) / a), rtol=0, atol=2e-12)


def test_beta_logpdf_float64_against_mpmath_and_gradients_against_closed_forms():
    mp = pytest.importorskip("mpmath")
    special = pytest.importorskip("scipy.special")
    mp.mp.dps = 40
    x, a, b = np.float64([0.5, 0.0105, 0.9, 0.3]), np.float64([1e6, 1e4, 100.0, 2.5]), np.float64([1e6, 1e6, 10.0, 3.5])
    want = [float((p - 1) * mp.log(z) + (q - 1) * mp.log1p(-z) - mp.log(mp.beta(p, q))) for z, p, q in zip(x, a, b)]
    np.testing.assert_allclose(tl.stats.beta.logpdf(x, a, b).numpy(), want, rtol=1e-13)
    grads = tl.grad(lambda x, a, b: tl.sum(tl.stats.beta.logpdf(x, a, b)), argnums=(0, 1, 2))(
        tl.tensor(x), tl.tensor(a), tl.tensor(b)
    )
    digamma_sum = special.digamma(a + b)
    np.testing.assert_allclose(grads[0].numpy(), (a - 1) / x - (b - 1) / (1 - x), rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), np.log(x) - special.digamma(a) + digamma_sum, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grads[2].numpy(), np.log1p(-x) - special.digamma(b) + digamma_sum, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- multivariate_normal: batches and SciPy's shorthands
def _mvn_reference(x, mean, cov):
    """log N(x; mean, cov) for single points, float64, through NumPy's solve and slogdet."""
    d = x - mean
    return -0.5 * (d @ np.linalg.solve(cov, d) + len(d) * np.log(2 * np.pi) + np.linalg.slogdet(cov)[1])


def _covariances(rng, batch, k):
    a = rng.normal(size=batch + (k, k))
    return a @ np.swapaxes(a, -1, -2) + k * np.eye(k)


def test_mvn_logpdf_broadcasts_x_against_a_batch_of_means():
    # x (4, 1, k) against mean (2, k) crashed in a Reshape to x's batch shape (4, 1), as x (k,) against mean (3, k).
    rng = np.random.default_rng(0)
    x, mean, cov = rng.normal(size=(4, 1, 3)), rng.normal(size=(2, 3)), _covariances(rng, (), 3)
    got = tl.stats.multivariate_normal.logpdf(x, mean, cov).numpy()
    want = [[_mvn_reference(x[i, 0], mean[j], cov) for j in range(2)] for i in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = tl.stats.multivariate_normal.logpdf(x[0, 0], mean, cov).numpy()
    np.testing.assert_allclose(got, [_mvn_reference(x[0, 0], m, cov) for m in mean], rtol=1e-12)


def test_mvn_logpdf_takes_a_batch_of_covariances_with_gradients():
    # cov (..., k, k) was refused (JAX's multivariate_normal takes it); the log-determinant summed over the batch.
    rng = np.random.default_rng(1)
    x, mean, covs = rng.normal(size=(5, 1, 3)), rng.normal(size=3), _covariances(rng, (4,), 3)
    got = tl.stats.multivariate_normal.logpdf(x, mean, covs).numpy()
    want = [[_mvn_reference(x[i, 0], mean, covs[j]) for j in range(4)] for i in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = tl.grad(lambda c: tl.sum(tl.stats.multivariate_normal.logpdf(x[:4, 0], mean, c)))(tl.tensor(covs)).numpy()
    inverse = np.linalg.inv(covs)
    d = x[:4, 0] - mean
    want = 0.5 * inverse @ np.einsum("bi,bj->bij", d, d) @ inverse - 0.5 * inverse
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-14)
    traced = tl.function(tl.stats.multivariate_normal.logpdf)
    np.testing.assert_allclose(traced(x, mean, covs).numpy(), got, rtol=1e-12)
    mapped = tl.vmap(lambda c: tl.stats.multivariate_normal.logpdf(x[:, 0], mean, c))(tl.tensor(covs)).numpy()
    np.testing.assert_allclose(mapped, got.T, rtol=1e-12)


def test_mvn_logpdf_takes_scipys_scalar_and_diagonal_covariances():
    # A scalar or 1-D cov raised IndexError (tuple index out of range); SciPy reads them as s I and diag(v).
    rng = np.random.default_rng(2)
    x, mean, variances = rng.normal(size=(6, 3)), rng.normal(size=3), rng.uniform(0.5, 2.0, 3)
    mvn = tl.stats.multivariate_normal.logpdf
    np.testing.assert_allclose(
        mvn(x, mean, variances).numpy(), [_mvn_reference(p, mean, np.diag(variances)) for p in x]
    )
    np.testing.assert_allclose(mvn(x, mean, 1.7).numpy(), [_mvn_reference(p, mean, 1.7 * np.eye(3)) for p in x])
    np.testing.assert_allclose(
        mvn(x, mean, variances).numpy(), scipy_stats.multivariate_normal.logpdf(x, mean, variances)
    )
    # scalar mean and variance: the univariate density of each element (SciPy and JAX)
    np.testing.assert_allclose(mvn(x[:, 0], 0.5, 2.0).numpy(), -0.5 * ((x[:, 0] - 0.5) ** 2 / 2 + np.log(4 * np.pi)))
    g = tl.grad(lambda v: tl.sum(mvn(x, mean, v)))(tl.tensor(variances)).numpy()
    np.testing.assert_allclose(g, (0.5 * (x - mean) ** 2 / variances**2 - 0.5 / variances).sum(0), rtol=1e-12)
    assert np.isnan(mvn(x, mean, np.float64([1.0, -1.0, 1.0])).numpy()).all()  # a variance <= 0: nan, as JAX


def test_mvn_logpdf_names_the_shapes_that_do_not_agree():
    mvn = tl.stats.multivariate_normal.logpdf
    with pytest.raises(ValueError, match=r"multivariate_normal.logpdf: .* batch shapes broadcast \(x shape \(5, 3\) "):
        mvn(np.zeros((5, 3)), np.zeros(3), np.stack([np.eye(3)] * 4))
    with pytest.raises(ValueError, match=r"a 1-D cov \(the diagonal, k\) .* cov shape \(2,\) float64"):
        mvn(np.zeros((5, 3)), np.zeros(3), np.ones(2))


# ---------------------------------------------------------------- dtypes of the parameters
def test_numpy_float64_scalar_parameters_are_strong_as_in_every_op():
    # np.float64(0.5) is a float subclass: stats read it as a weak Python number and computed in float32, where
    # x + np.float64(0.5) (and NumPy, and SciPy) give float64.
    x = np.float32([0.25, 1.5])
    assert (tl.tensor(x) + np.float64(0.5)).dtype == np.float64
    got = tl.stats.norm.logpdf(x, np.float64(0.1), np.float64(0.7))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), scipy_stats.norm.logpdf(x.astype(np.float64), 0.1, 0.7), rtol=1e-15)
    assert tl.stats.gamma.logpdf(x, np.float64(2.0)).dtype == np.float64
    assert tl.stats.norm.logpdf(x, 0.1, 0.7).dtype == np.float32  # Python floats stay weak


def test_t_logpdf_is_finite_where_x_squared_overflows():
    # log1p(z * z / df) overflowed: t.logpdf(1e200, 1) was -inf for -922.18 (Cauchy: -log(pi) - log(1 + x**2)),
    # float32 t.logpdf(1e20, 2) -inf for -138.155 (t_2: -1.5 log(2 + x**2)).
    x = np.float64([1e200, -1e300, 1e155, 3.0])
    np.testing.assert_allclose(
        tl.stats.t.logpdf(x, 1.0).numpy(),
        -np.log(np.pi) - 2 * np.log(np.abs(x)) - [0, 0, 0, np.log1p(1 / 9)],
        rtol=1e-15,
    )
    x32 = np.float32([1e20, -3e19, 1e30, 2.5])
    got = tl.stats.t.logpdf(x32, np.float32(2.0)).numpy()
    x64 = x32.astype(np.float64)
    want = -1.5 * (2 * np.log(np.abs(x64)) + np.log1p(2 / x64**2))
    assert got.dtype == np.float32 and _ulps(got, want, np.float32).max() <= 2
    g = tl.grad(lambda x: tl.sum(tl.stats.t.logpdf(x, 3.0)))(tl.tensor(np.float64([1e300, -2.0]))).numpy()
    np.testing.assert_allclose(g, [-4e-300, 8 / 7], rtol=1e-15)  # -(df + 1) x / (df + x**2)


# ---------------------------------------------------------------- dirichlet: the multinomial form
@pytest.mark.parametrize("alpha", [[1e4, 1e4, 1e4], [1e6, 2e6, 1e6], [3.0, 1e5, 50.0, 7.0], [100.0, 200.0, 300.0]])
def test_dirichlet_logpdf_float32_keeps_its_digits_for_large_concentrations(alpha):
    # sum((alpha - 1) log x) - sum(gammaln(alpha)) + gammaln(sum(alpha)) cancelled: 12.5 for 15.10 at (1e6, 2e6, 1e6).
    alpha = np.float32(alpha)
    x = np.stack([alpha / alpha.sum(), np.roll(alpha, 1) / alpha.sum()], axis=1).astype(np.float32)
    x[-1] = 1 - x[:-1].sum(axis=0)  # on the simplex in float32
    got = tl.stats.dirichlet.logpdf(x, alpha).numpy()
    assert got.dtype == np.float32
    special = pytest.importorskip("scipy.special")
    x64, a64 = x.astype(np.float64), alpha.astype(np.float64)[:, None]  # the textbook form in float64: 1e-9 relative
    want = ((a64 - 1) * np.log(x64)).sum(axis=0) - special.gammaln(a64).sum() + special.gammaln(a64.sum())
    assert _ulps(got, want, np.float32).max() <= 3


def test_dirichlet_logpdf_float64_ratio_in_alpha_is_exact_and_gradients_match():
    special = pytest.importorskip("scipy.special")
    # f(x; alpha + e_1) / f(x; alpha) = x_1 sum(alpha) / alpha_1; the textbook form was 1e-8 off at 1e6.
    alpha, x = np.float64([1e6, 2e6, 1e6]), np.float64([0.2501, 0.4999, 0.25])
    step = tl.stats.dirichlet.logpdf(x, alpha + [1, 0, 0]).numpy() - tl.stats.dirichlet.logpdf(x, alpha).numpy()
    np.testing.assert_allclose(step, np.log(x[0]) + np.log(alpha.sum() / alpha[0]), rtol=0, atol=1e-11)
    ga, gx = tl.grad(lambda a, x: tl.stats.dirichlet.logpdf(x, a), argnums=(0, 1))(tl.tensor(alpha), tl.tensor(x))
    np.testing.assert_allclose(ga.numpy(), np.log(x) - special.digamma(alpha) + special.digamma(alpha.sum()), rtol=1e-6)
    np.testing.assert_allclose(gx.numpy(), (alpha - 1) / x, rtol=1e-12)


def test_dirichlet_logpdf_keeps_the_boundary_and_small_concentrations():
    x = np.float64([[0.0, 0.2], [0.4, 0.3], [0.6, 0.5]])
    np.testing.assert_allclose(
        tl.stats.dirichlet.logpdf(x[:, 1], np.float64([3.0, 4.0, 5.0])).numpy(),
        scipy_stats.dirichlet.logpdf(x[:, 1], [3.0, 4.0, 5.0]),
        rtol=1e-14,
    )
    got = tl.stats.dirichlet.logpdf(x, np.float64([3.0, 4.0, 5.0])).numpy()
    assert got[0] == -np.inf
    got = tl.stats.dirichlet.logpdf(x, np.float64([1.0, 4.0, 5.0])).numpy()
    np.testing.assert_allclose(
        got[0],
        np.log(362880 / (6 * 24)) + 3 * np.log(0.4) + 4 * np.log(0.6),  # Gamma(10) / (3! 4!)
    )


# ---------------------------------------------------------------- new: special.ndtri, norm.sf / logsf / ppf / isf
def test_ndtri_inverts_ndtr_in_both_tails_with_its_gradient():
    special = pytest.importorskip("scipy.special")
    p = np.float64([0.0, 1e-300, 1e-20, 0.025, 0.5, 0.5 + 1e-12, 0.975, 1 - 1e-15, 1.0, -0.1, 1.5, np.nan])
    np.testing.assert_allclose(tl.special.ndtri(p).numpy(), special.ndtri(p), rtol=1e-15)
    q = np.float64([1e-200, 0.1, 0.6, 1 - 1e-12])
    y = special.ndtri(q)
    g = tl.grad(lambda q: tl.sum(tl.special.ndtri(q)))(tl.tensor(q)).numpy()
    np.testing.assert_allclose(g, np.sqrt(2 * np.pi) * np.exp(y * y / 2), rtol=1e-12)  # 1 / phi(ndtri(q))
    assert tl.special.ndtri(np.float32([0.3])).dtype == np.float32
    assert tl.special.ndtri(np.array([0, 1])).dtype == np.float64


def test_norm_sf_logsf_ppf_isf_match_scipy_in_the_tails_and_off_the_support():
    x = np.float64([-40.0, -5.0, 0.0, 3.0, 10.0, 40.0, np.inf, -np.inf, np.nan])
    q = np.float64([0.0, 1e-300, 1e-10, 0.3, 0.5, 0.9, 1 - 1e-16, 1.0, -0.1, 1.1, np.nan])
    norm = tl.stats.norm
    for loc, scale in [(0.0, 1.0), (1.0, 2.0), (0.0, 0.0), (0.0, -1.0), (np.nan, 1.0)]:
        with np.errstate(all="ignore"):
            for method, arg in [("sf", x), ("logsf", x), ("ppf", q), ("isf", q)]:
                want = getattr(scipy_stats.norm, method)(arg, loc, scale)
                np.testing.assert_allclose(
                    getattr(norm, method)(arg, loc, scale).numpy(), want, rtol=1e-14, err_msg=method
                )
    assert float(norm.sf(np.float64(10.0))) == pytest.approx(7.61985302416047e-24, rel=1e-14)  # 1 - cdf gives 0


def test_norm_ppf_gradients_and_round_trip_under_tl_function():
    q, loc, scale = np.float64([0.01, 0.5, 0.97]), np.float64(1.0), np.float64(2.0)
    gq, gl, gs = tl.grad(lambda q, l, s: tl.sum(tl.stats.norm.ppf(q, l, s)), argnums=(0, 1, 2))(
        tl.tensor(q), tl.tensor(loc), tl.tensor(scale)
    )
    z = scipy_stats.norm.ppf(q)
    np.testing.assert_allclose(gq.numpy(), scale / scipy_stats.norm.pdf(z), rtol=1e-12)
    assert float(gl) == 3.0 and float(gs) == pytest.approx(z.sum(), abs=1e-15)
    traced = tl.function(lambda q: tl.stats.norm.cdf(tl.stats.norm.ppf(q, 1.0, 2.0), 1.0, 2.0))
    np.testing.assert_allclose(traced(q).numpy(), q, rtol=1e-14)


# ---------------------------------------------------------------- new: special.gammainc / gammaincc, gamma and poisson cdf / sf
def test_gammainc_values_and_gradients_in_a_and_x():
    special = pytest.importorskip("scipy.special")
    a = np.float64([0.5, 2.0, 10.0, 100.0, 1e4, 3.0])
    x = np.float64([0.3, 5.0, 3.0, 110.0, 1e4 + 50, 50.0])
    np.testing.assert_allclose(tl.special.gammainc(a, x).numpy(), special.gammainc(a, x), rtol=1e-15)
    np.testing.assert_allclose(tl.special.gammaincc(a, x).numpy(), special.gammaincc(a, x), rtol=1e-15)
    ga, gx = tl.grad(lambda a, x: tl.sum(tl.special.gammainc(a, x)), argnums=(0, 1))(tl.tensor(a), tl.tensor(x))
    np.testing.assert_allclose(gx.numpy(), np.exp(special.xlogy(a - 1, x) - x - special.gammaln(a)), rtol=1e-12)
    h = 1e-5 * a  # central differences of SciPy's gammaincc in a (accurate in P's upper tail too)
    np.testing.assert_allclose(
        ga.numpy(), (special.gammaincc(a - h, x) - special.gammaincc(a + h, x)) / (2 * h), rtol=1e-6
    )
    gca = tl.grad(lambda a: tl.sum(tl.special.gammaincc(a, x)))(tl.tensor(a)).numpy()
    np.testing.assert_allclose(gca, -ga.numpy(), rtol=1e-15)
    # d2P / da dx = density (log x - digamma(a)); d2P / dx2 = density ((a - 1) / x - 1)
    mixed = tl.grad(lambda x: tl.sum(tl.grad(lambda a: tl.sum(tl.special.gammainc(a, x)))(tl.tensor(a))))(tl.tensor(x))
    density = np.exp(special.xlogy(a - 1, x) - x - special.gammaln(a))
    np.testing.assert_allclose(mixed.numpy(), density * (np.log(x) - special.digamma(a)), rtol=1e-9)
    second = tl.grad(lambda x: tl.sum(tl.grad(lambda x: tl.sum(tl.special.gammainc(tl.tensor(a), x)))(x)))(tl.tensor(x))
    np.testing.assert_allclose(second.numpy(), density * ((a - 1 - x) / x), rtol=1e-9, atol=1e-300)


def test_gammainc_second_derivative_in_a_raises_a_clear_error():
    with pytest.raises(LookupError, match=r"IgammaGradA: the second derivative of gammainc / gammaincc in a"):
        tl.hessian(lambda a: tl.special.gammainc(a, tl.tensor(2.0, "float64")))(tl.tensor(3.0, "float64"))


def test_gamma_and_poisson_cdf_sf_match_scipy_off_the_support_and_in_the_tails():
    k = np.float64([-1, -0.5, 0, 0.5, 1, 2.7, 10, 50, 1e4, np.inf, np.nan, -np.inf])
    x = np.float64([-1, 0, 1e-300, 0.5, 2, 10, 50, 1e4, np.inf, np.nan, -np.inf])
    with np.errstate(all="ignore"):
        for mu in [0.0, 1e-300, 3.0, 1e4, -1.0, np.inf, np.nan]:
            for method in ("cdf", "sf"):
                want = getattr(scipy_stats.poisson, method)(k, mu)
                np.testing.assert_allclose(
                    getattr(tl.stats.poisson, method)(k, np.float64(mu)).numpy(), want, rtol=1e-13
                )
        for a in [0.5, 3.0, 1e4, 0.0, -1.0, np.nan]:
            for loc, scale in [(0.0, 1.0), (1.0, 2.0), (0.0, 0.0), (np.nan, 1.0)]:
                for method in ("cdf", "sf"):
                    want = getattr(scipy_stats.gamma, method)(x, a, loc, scale)
                    got = getattr(tl.stats.gamma, method)(x, np.float64(a), loc, scale).numpy()
                    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert float(tl.stats.poisson.sf(np.float64(40.0), np.float64(1.0))) == pytest.approx(
        scipy_stats.poisson.sf(40, 1.0), rel=1e-13
    )  # 1 - cdf is 0 there


def test_poisson_cdf_gradient_in_mu_is_minus_the_pmf():
    k, mu = np.float64([0.0, 3.0, 1e4]), np.float64([2.0, 2.5, 1e4 + 30])
    g = tl.grad(lambda m: tl.sum(tl.stats.poisson.cdf(k, m)))(tl.tensor(mu)).numpy()
    np.testing.assert_allclose(g, -scipy_stats.poisson.pmf(k, mu), rtol=1e-9)  # d/dmu P(K <= k) = -p(k; mu)


# ---------------------------------------------------------------- wrong input: one error naming the function
def test_a_complex_argument_is_an_error_naming_the_distribution():
    # norm.logpdf of a complex x returned a complex128 value silently; poisson.logpmf's error named Floor.
    with pytest.raises(
        TypeError, match=r"^norm.logpdf: not defined for complex128 \(x shape \(1,\) complex128, loc 0.0"
    ):
        tl.stats.norm.logpdf(np.array([1 + 1j]))
    with pytest.raises(TypeError, match=r"^poisson.logpmf: not defined for complex128 \(k shape \(1,\) complex128"):
        tl.stats.poisson.logpmf(np.array([1 + 1j]), 1.0)
    with pytest.raises(TypeError, match=r"^multivariate_normal.logpdf: not defined for complex128"):
        tl.stats.multivariate_normal.logpdf(np.zeros(2, complex), np.zeros(2), np.eye(2))


def test_shapes_that_do_not_broadcast_are_an_error_naming_the_distribution_and_arguments():
    # The errors named internal ops ('BitwiseAnd: shapes (2,) and (3,) are not broadcastable', 'Sub: ...').
    with pytest.raises(
        ValueError,
        match=r"^gamma.logpdf: the shapes do not broadcast \(x shape \(3,\) float64, a shape \(2,\) float64, "
        r"loc 0.0, scale 1.0\)",
    ):
        tl.stats.gamma.logpdf(np.zeros(3), np.ones(2))
    with pytest.raises(ValueError, match=r"^norm.sf: the shapes do not broadcast \(x shape \(3,\) float64, loc 0.0, "):
        tl.stats.norm.sf(np.zeros(3), 0.0, np.ones(2))


# ---------------------------------------------------------------- float32: computed in float64, rounded once
def test_float32_log_densities_are_rounded_once_where_their_terms_cancel():
    # Summed in float32, a log-density near 0 kept the absolute error of its largest term: beta.logpdf(0.999999;
    # 1500.3466, 2.117797) = 0.0053137 was 2e-5 off (330 ulps), gamma.logpdf(0.087151214; 0.12028712) 4468 ulps.
    special = pytest.importorskip("scipy.special")
    x, a, b = np.float32(0.999999), np.float32(1500.3466), np.float32(2.117797)
    got = tl.stats.beta.logpdf(x, a, b).numpy()
    x64, a64, b64 = np.float64(x), np.float64(a), np.float64(b)
    want = special.xlogy(a64 - 1, x64) + special.xlog1py(b64 - 1, -x64) - special.betaln(a64, b64)
    assert got.dtype == np.float32 and _ulps(got, want, np.float32) <= 1
    x, a = np.float32(0.087151214), np.float32(0.12028712)
    got = tl.stats.gamma.logpdf(x, a).numpy()
    want = special.xlogy(np.float64(a) - 1, np.float64(x)) - np.float64(x) - special.gammaln(np.float64(a))
    assert got.dtype == np.float32 and _ulps(got, want, np.float32) <= 1
    g = tl.grad(lambda a: tl.stats.gamma.logpdf(x, a))(tl.tensor(a))
    assert g.dtype == np.float32  # the gradient keeps the argument's dtype


@settings(deadline=None)
@given(
    st.floats(-30, 30),
    st.floats(-3, 3),
    st.floats(0.05, 20),
    st.floats(0.01, 0.99),
    st.floats(0.3, 3e4),
    st.floats(0.3, 3e4),
)
def test_float32_stats_within_one_ulp_of_scipys_float64(x, loc, scale, u, a, b):
    f32 = np.float32
    x, loc, scale, u, a, b = (f32(v) for v in (x, loc, scale, u, a, b))
    d = {v: np.float64(v) for v in (x, loc, scale, u, a, b)}
    checks = [
        (tl.stats.norm.logpdf(x, loc, scale), scipy_stats.norm.logpdf(d[x], d[loc], d[scale])),
        (tl.stats.norm.logcdf(x, loc, scale), scipy_stats.norm.logcdf(d[x], d[loc], d[scale])),
        (tl.stats.t.logpdf(x, a, loc, scale), scipy_stats.t.logpdf(d[x], d[a], d[loc], d[scale])),
        (tl.stats.gamma.logpdf(a, b), scipy_stats.gamma.logpdf(d[a], d[b])),
        (tl.stats.beta.logpdf(u, a, b), scipy_stats.beta.logpdf(d[u], d[a], d[b])),
        (tl.stats.poisson.logpmf(np.floor(a), b), scipy_stats.poisson.logpmf(np.floor(d[a]), d[b])),
    ]
    for got, want in checks:
        got = got.numpy()
        assert got.dtype == np.float32
        assert _ulps(got, want, np.float32) <= 2 or abs(float(got) - want) <= 1e-12, (got, want)

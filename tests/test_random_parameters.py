"""tl.random with tensor parameters: one parameter per sample, and samples differentiable in them.

Before, ``float()`` read a 0-d tensor parameter's value, so ``tl.grad`` of ``tl.random.normal(shape, mean)`` in
``mean`` was silently 0, and any other tensor raised.  The references: NumPy's generator for the numbers,
the location-scale formulas and float64 differences for those gradients, SciPy's inverse incomplete gamma
function, JAX and TensorFlow (when installed) and the distributions' means for the gamma and beta gradients.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.ops.random import standard_gamma_sample_grad


def _standard(kind, shape, seed):
    rng = np.random.default_rng(seed)
    return {
        "normal": lambda: rng.normal(size=shape),
        "uniform": lambda: rng.uniform(size=shape),
        "laplace": lambda: rng.laplace(size=shape),
        "gumbel": lambda: rng.gumbel(size=shape),
        "exponential": lambda: rng.exponential(size=shape),
    }[kind]()


@pytest.mark.parametrize("traced", [False, True])
def test_normal_is_differentiable_in_a_tensor_mean_and_stddev(traced):
    def f(mu, sigma):
        return tl.sum(tl.random.normal((4, 3), mu, sigma, dtype="float64", seed=7) * tl.tensor([1.0, 2.0, 3.0]))

    g = tl.grad(tl.function(f) if traced else f, argnums=(0, 1))
    z = np.random.default_rng(7).normal(size=(4, 3))
    weights = np.array([1.0, 2.0, 3.0])
    mu, sigma = np.array([0.5, -1.0, 2.0]), np.array(1.5)
    g_mu, g_sigma = g(tl.tensor(mu), tl.tensor(sigma))
    np.testing.assert_allclose(g_mu.numpy(), 4 * weights)  # was 0: float() dropped the tensor
    np.testing.assert_allclose(g_sigma.numpy(), (z * weights).sum())
    assert g_mu.shape == (3,) and g_sigma.shape == ()
    x = tl.random.normal((4, 3), tl.tensor(mu), tl.tensor(sigma), dtype="float64", seed=7).numpy()
    np.testing.assert_allclose(x, mu + sigma * z)


@pytest.mark.parametrize(
    ("kind", "draw"),
    [
        ("normal", lambda loc, scale: tl.random.normal((5, 2), loc, scale, dtype="float64", seed=3)),
        ("uniform", lambda loc, scale: tl.random.uniform((5, 2), loc, loc + scale, dtype="float64", seed=3)),
        ("laplace", lambda loc, scale: tl.random.laplace((5, 2), loc, scale, dtype="float64", seed=3)),
        ("gumbel", lambda loc, scale: tl.random.gumbel((5, 2), loc, scale, dtype="float64", seed=3)),
        ("exponential", lambda loc, scale: loc + tl.random.exponential((5, 2), scale, dtype="float64", seed=3)),
    ],
)
def test_location_scale_draws_match_numpy_and_their_gradients_match_differences(kind, draw):
    loc, scale = np.array([[0.3], [-1.0], [2.0], [0.0], [1.0]]), np.array([0.5, 2.0])
    x = draw(tl.tensor(loc), tl.tensor(scale)).numpy()
    np.testing.assert_allclose(x, loc + scale * _standard(kind, (5, 2), 3), rtol=1e-12)
    tl.testing.check_grads(lambda a, b: draw(a, b) ** 2, (tl.tensor(loc), tl.tensor(scale)), order=2)


def test_truncated_normal_with_tensor_parameters_stays_within_two_deviations():
    mu, sigma = tl.tensor([[0.0], [10.0]]), tl.tensor([1.0, 3.0, 0.1])
    x = tl.random.truncated_normal((2, 3), mu, sigma, dtype="float64", seed=1)
    z = (x.numpy() - mu.numpy()) / sigma.numpy()
    assert (np.abs(z) <= 2).all()
    g = tl.grad(lambda s: tl.random.truncated_normal((2, 3), mu, s, dtype="float64", seed=1).sum())(sigma)
    np.testing.assert_allclose(g.numpy(), z.sum(axis=0))


@pytest.mark.parametrize("alpha", [1e-3, 0.05, 0.4, 1.0, 2.5, 9.0, 60.0, 1e3, 1e5])
def test_gamma_gradient_is_the_change_of_the_quantile_at_constant_cdf(alpha):
    scipy_special = pytest.importorskip("scipy.special")
    u = np.linspace(0.02, 0.98, 25)
    x = scipy_special.gammaincinv(alpha, u)
    h = 1e-5 * alpha
    expected = (scipy_special.gammaincinv(alpha + h, u) - scipy_special.gammaincinv(alpha - h, u)) / (2 * h)
    got = standard_gamma_sample_grad(alpha, x)
    keep = x > 1e-200  # where SciPy's inverse still resolves the quantile
    np.testing.assert_allclose(got[keep], expected[keep], rtol=2e-5 if alpha < 0.1 else 1e-7)


def test_gamma_gradient_edges():
    out = standard_gamma_sample_grad(np.array([2.0, 2.0, np.nan, 1.0]), np.array([0.0, np.nan, 1.0, -1.0]))
    assert out[0] == 0 and np.isnan(out[1:]).all()  # an underflowed sample; NaN in, NaN out; no negative sample
    assert np.isfinite(standard_gamma_sample_grad(1e-8, 1e-30))


def test_gamma_gradient_matches_jax_and_tensorflow():
    alpha = np.array([0.01, 0.3, 1.0, 3.0, 50.0, 500.0, 2.0])
    x = np.array([1e-30, 0.2, 1.5, 2.0, 60.0, 480.0, 9.0])
    ours = standard_gamma_sample_grad(alpha, x)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    theirs = np.asarray(jax.lax.random_gamma_grad(jax.numpy.asarray(alpha), jax.numpy.asarray(x)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(ours, tf.raw_ops.RandomGammaGrad(alpha=alpha, sample=x).numpy(), rtol=1e-6)


def test_gamma_draws_are_differentiable_in_alpha_and_beta_and_follow_the_means():
    n = 100_000
    alpha, rate = tl.tensor([0.5, 3.0]), tl.tensor(2.0)

    def mean(a, b):
        return tl.mean(tl.random.gamma((n, 2), a, b, dtype="float64", seed=11), axis=0)

    x = tl.random.gamma((n, 2), alpha, rate, dtype="float64", seed=11).numpy()
    np.testing.assert_allclose(x, np.random.default_rng(11).gamma(np.array([0.5, 3.0]), size=(n, 2)) / 2.0)
    jac_a, jac_b = tl.jacobian(mean, argnums=(0, 1))(alpha, rate)
    # d mean / d alpha = 1 / beta (diagonal), d mean / d beta = -alpha / beta^2: up to the sampling error
    np.testing.assert_allclose(np.diag(jac_a.numpy()), [0.5, 0.5], rtol=0.02)
    assert jac_a.numpy()[0, 1] == 0 and jac_a.numpy()[1, 0] == 0
    np.testing.assert_allclose(jac_b.numpy(), [-0.125, -0.75], rtol=0.02)
    # float32 samples take a float32 gradient; a number alpha with a tensor rate works too
    g = tl.grad(lambda b: tl.random.gamma((3,), 2.0, b, seed=0).sum())(tl.tensor(1.5))
    assert g.dtype == np.float32 and float(g) < 0


def test_beta_draws_with_tensor_parameters_are_differentiable():
    n = 100_000
    a, b = tl.tensor(2.0), tl.tensor([3.0, 0.5])
    x = tl.random.beta((n, 2), a, b, dtype="float64", seed=5)
    np.testing.assert_allclose(x.numpy().mean(axis=0), [0.4, 0.8], atol=0.005)
    g_a, g_b = tl.grad(lambda a, b: tl.random.beta((n, 2), a, b, dtype="float64", seed=5).mean(axis=0).sum(),
                       argnums=(0, 1))(a, b)  # fmt: skip
    # d/da a / (a + b) = b / (a + b)^2, d/db = -a / (a + b)^2
    np.testing.assert_allclose(float(g_a), 3 / 25 + 0.5 / 6.25, rtol=0.03)
    np.testing.assert_allclose(g_b.numpy(), [-2 / 25, -2 / 6.25], rtol=0.03)
    assert tl.random.beta((4,), [0.5, 1, 2, 3], 2.0, seed=1).dtype == np.float32


def test_traced_draws_with_tensor_parameters_redraw_and_keep_their_gradients():
    f = tl.function(lambda a: tl.random.gamma((6,), a))
    alpha = tl.tensor(np.full(6, 2.0))
    assert not np.array_equal(f(alpha).numpy(), f(alpha).numpy())

    def seeded(a):
        return tl.sum(tl.random.gamma((6,), a, 3.0, dtype="float64", seed=2) ** 2)

    np.testing.assert_allclose(tl.grad(tl.function(seeded))(alpha).numpy(), tl.grad(seeded)(alpha).numpy())


def test_per_sample_counts_and_coins_follow_numpy():
    lam = np.array([[0.5], [4.0], [30.0]])
    counts = tl.random.poisson((3, 4), lam, seed=9).numpy()
    np.testing.assert_array_equal(counts, np.random.default_rng(9).poisson(np.broadcast_to(lam, (3, 4))))
    p = tl.tensor([0.0, 0.25, 1.0])
    coins = tl.random.bernoulli((2, 3), p, seed=4).numpy()
    np.testing.assert_array_equal(coins, np.random.default_rng(4).random((2, 3)) < p.numpy())
    assert not coins[:, 0].any() and coins[:, 2].all()


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: tl.random.normal((3,), tl.tensor([1.0, 2.0])), ValueError, r"mean of shape \(2,\) does not broad"),
        (lambda: tl.random.normal((3,), 0.0, [1.0, -1.0, 1.0]), ValueError, "stddev must be non-negative"),
        (lambda: tl.random.gamma((2,), tl.tensor([1.0, np.nan])), ValueError, "alpha must be positive finite"),
        (lambda: tl.random.gamma((2,), 1.0, tl.tensor([1.0, 0.0])), ValueError, "beta must be positive finite"),
        (lambda: tl.random.laplace((2,), 0.0, tl.tensor([1.0, 0.0])), ValueError, "scale must be positive"),
        (lambda: tl.random.uniform((2,), tl.tensor([0, 1]), 5, dtype="int32"), TypeError, "need a float dtype"),
        (lambda: tl.random.poisson((2,), [1.0, -1.0]), ValueError, "lam must be non-negative"),
        (lambda: tl.random.normal((2,), tl.tensor([1j, 2j])), TypeError, "mean must be real numbers"),
        (lambda: tl.random.Generator(0).normal((2,), tl.tensor(1.0)), TypeError, "tl.random.normal takes tensors"),
    ],
)
def test_bad_tensor_parameters_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------ distributions built from the draws
@pytest.mark.parametrize(
    ("ours", "numpys"),
    [
        (lambda: tl.random.lognormal((7,), 0.5, 2.0, dtype="float64", seed=3), lambda g: g.lognormal(0.5, 2.0, 7)),
        (lambda: tl.random.logistic((7,), -1.0, 3.0, dtype="float64", seed=3), lambda g: g.logistic(-1.0, 3.0, 7)),
        (lambda: tl.random.chisquare((7,), 3.0, dtype="float64", seed=3), lambda g: g.chisquare(3.0, 7)),
        (
            lambda: tl.random.dirichlet((4,), [0.5, 1.0, 7.0], dtype="float64", seed=3),
            lambda g: g.dirichlet([0.5, 1, 7], 4),
        ),
    ],
)
def test_built_distributions_draw_numpys_numbers(ours, numpys):
    np.testing.assert_allclose(ours().numpy(), numpys(np.random.default_rng(3)), rtol=1e-13)


def test_lognormal_and_logistic_are_differentiable_in_tensor_parameters():
    for draw in (
        lambda a, b: tl.random.lognormal((3, 2), a, b, dtype="float64", seed=1),
        lambda a, b: tl.random.logistic((3, 2), a, b, dtype="float64", seed=1),
    ):
        tl.testing.check_grads(draw, (tl.tensor([0.5, -0.2]), tl.tensor(0.7)), order=2)


def test_chisquare_t_and_dirichlet_follow_their_laws_and_gradients():
    n = 100_000
    df = tl.tensor([3.0, 8.0])
    g = tl.jacobian(lambda d: tl.mean(tl.random.chisquare((n, 2), d, dtype="float64", seed=2), axis=0))(df)
    np.testing.assert_allclose(g.numpy(), np.eye(2), atol=0.03)  # mean df
    x = tl.random.t((n, 2), df, dtype="float64", seed=4).numpy()
    np.testing.assert_allclose(x.var(axis=0), [3.0, 8 / 6], rtol=0.1)  # df / (df - 2)
    assert np.isfinite(tl.grad(lambda d: tl.sum(tl.random.t((5, 2), d, seed=4) ** 2))(df).numpy()).all()
    alpha = tl.tensor([1.0, 2.0, 5.0])
    x = tl.random.dirichlet((n,), alpha, dtype="float64", seed=6)
    np.testing.assert_allclose(x.numpy().sum(axis=1), 1.0)
    jac = tl.jacobian(lambda a: tl.mean(tl.random.dirichlet((n,), a, dtype="float64", seed=6), axis=0))(alpha).numpy()
    a0 = 8.0  # d (a_i / a0) / d a_j = (delta_ij a0 - a_i) / a0^2
    np.testing.assert_allclose(jac, (np.eye(3) * a0 - alpha.numpy()[:, None]) / a0**2, atol=0.004)


def test_multivariate_normal_moments_and_gradients():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    x = tl.random.multivariate_normal((100_000,), [1.0, 0.0, -2.0], cov, dtype="float64", seed=0).numpy()
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.02)
    np.testing.assert_allclose(x.mean(axis=0), [1.0, 0.0, -2.0], atol=0.01)

    def draw(mean, a):  # cov = a a^T + I: positive definite whatever a is
        c = a @ tl.matrix_transpose(a) + tl.tensor(np.eye(3))
        return tl.random.multivariate_normal((4,), mean, c, dtype="float64", seed=5)

    a = tl.tensor(np.array([[0.5, 0.1, 0.0], [0.2, -0.3, 0.4], [0.0, 0.1, 0.2]]))
    tl.testing.check_grads(draw, (tl.tensor([0.1, 0.2, 0.3]), a), order=1)
    with pytest.raises(ValueError, match="multivariate_normal: mean .* and cov .* of one known k"):
        tl.random.multivariate_normal((2,), [0.0, 0.0], np.eye(3))
    with pytest.raises(ValueError, match="dirichlet: alpha must be positive"):
        tl.random.dirichlet((2,), [1.0, 0.0])
    with pytest.raises(ValueError, match="t: df must be a positive"):
        tl.random.t((2,), -1.0)


_SCALAR = tl.TensorSpec((), "float64")


@pytest.mark.parametrize(
    "who, draw, bad, message",
    [
        ("normal", lambda v: tl.random.normal((3,), 0.0, v, dtype="float64"), -1.0, "stddev must be non-negative"),
        ("laplace", lambda v: tl.random.laplace((3,), 0.0, v, dtype="float64"), 0.0, "scale must be positive"),
        ("gumbel", lambda v: tl.random.gumbel((3,), v, 1.0, dtype="float64"), np.inf, "loc must be finite"),
        ("bernoulli", lambda v: tl.random.bernoulli((3,), v), 1.5, r"p must be probabilities in \[0, 1\]"),
        ("gamma", lambda v: tl.random.gamma((3,), 2.0, v, dtype="float64"), -2.0, "beta must be positive"),
        ("chisquare", lambda v: tl.random.chisquare((3,), v, dtype="float64"), np.nan, "df must be positive"),
    ],
)
def test_tensor_parameters_of_traced_draws_are_checked_when_the_graph_runs(who, draw, bad, message):
    # Traced with a parameter whose value the trace does not know, the bad value drew samples silently
    # (normal with stddev -1: samples of stddev 1, mirrored); eagerly it raised.
    with pytest.raises(ValueError, match=f"tl.random.{who}: {message}"):
        draw(tl.tensor(bad, dtype="float64"))
    traced = tl.function(draw, input_signature=[_SCALAR])
    with pytest.raises(ValueError, match=f"tl.random.{who}: {message}"):
        traced(np.float64(bad))
    assert traced(np.float64(0.5)).shape == (3,)


def test_complex_normal_is_circular_with_unit_power():
    # tl.random.normal(dtype=complex64) was a TypeError; torch.randn and jax.random.normal give circular
    # complex normals: independent parts of variance 1/2 each, E|z|^2 = 1.
    n = 200_000
    z = tl.random.normal((n,), dtype="complex64", seed=1).numpy()
    assert z.dtype == np.complex64 and z.shape == (n,)
    bound = 5 / np.sqrt(n)  # five standard errors
    assert abs(z.real.mean()) < bound and abs(z.imag.mean()) < bound
    assert abs(z.real.var() - 0.5) < 5 * np.sqrt(2 / n) * 0.5 and abs(z.imag.var() - 0.5) < 5 * np.sqrt(2 / n) * 0.5
    assert abs(np.mean(z.real * z.imag)) < bound
    # the parts are normal: their fourth moment is 3 sigma^4 = 0.75
    assert abs(np.mean(z.real.astype(float) ** 4) - 0.75) < 0.03
    same = tl.random.normal((4, 3), dtype="complex128", seed=7).numpy()
    np.testing.assert_array_equal(same, tl.random.normal((4, 3), dtype="complex128", seed=7).numpy())
    traced = tl.function(lambda: tl.random.normal((4, 3), dtype="complex128", seed=7))()
    np.testing.assert_array_equal(traced.numpy(), same)


def test_complex_normal_location_scale_and_gradients():
    w = tl.random.normal((100_000,), mean=1 + 2j, stddev=3.0, dtype="complex128", seed=2).numpy()
    assert abs(w.mean() - (1 + 2j)) < 0.05 and abs(np.mean(np.abs(w - (1 + 2j)) ** 2) - 9.0) < 0.15
    m = tl.tensor(np.array([1 + 1j, 2j]))
    s = tl.tensor(np.array([2.0, 0.5]))
    base = tl.random.normal((5, 2), dtype="complex128", seed=0).numpy()
    got = tl.random.normal((5, 2), m, s, dtype="complex128", seed=0).numpy()
    np.testing.assert_allclose(got, m.numpy() + s.numpy() * base, rtol=1e-15)
    # JAX's convention: for L = sum(real(z)), dL/dmean = 5 (one per row), dL/dstddev = sum over rows of real(base)
    gm, gs = tl.grad(lambda m, s: tl.sum(tl.real(tl.random.normal((5, 2), m, s, dtype="complex128", seed=0))), (0, 1))(
        m, s
    )
    np.testing.assert_allclose(gm.numpy(), [5, 5])
    np.testing.assert_allclose(gs.numpy(), base.real.sum(0), rtol=1e-14)
    with pytest.raises(TypeError, match="tl.random.normal: stddev must be real"):
        tl.random.normal((2,), stddev=1j, dtype="complex64")
    with pytest.raises(ValueError, match="tl.random.normal: stddev must be a non-negative finite number"):
        tl.random.normal((2,), stddev=-1.0, dtype="complex64")

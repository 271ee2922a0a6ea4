"""Adversarial checks of ``tl.random``: each test failed before its fix.

References: the gradients' closed forms (a gamma draw's change in its rate), NumPy's generator for the
numbers, the documented support of each draw, SciPy's distributions for the laws.
"""

import numpy as np
import pytest

import tensorlib as tl


def test_second_order_gradients_of_gamma_draws_in_alpha_raise():
    # d2 x / d alpha2 read 0 (RandomGammaGrad was declared not differentiable): a silent wrong second
    # derivative, and the beta draws', built on two gamma draws, lost its terms (-0.502 at a=2, b=2).
    def f(a):
        return tl.random.gamma((5,), a, dtype="float64", seed=0).sum()

    a = tl.tensor(np.float64(2.0))
    with pytest.raises(LookupError, match="RandomGammaGrad: second-order gradients of gamma draws in alpha"):
        tl.grad(tl.grad(f))(a)
    with pytest.raises(LookupError, match="second-order"):
        tl.function(tl.grad(tl.grad(f)))(a)
    with pytest.raises(LookupError, match="second-order"):
        tl.hessian(lambda a: tl.random.beta((5,), a, 2.0, dtype="float64", seed=0).sum())(a)
    # What stays defined: first order, forward mode, and the rate's mixed derivative -(dg/da) / b**2.
    b = tl.tensor(np.float64(3.0))
    first = tl.grad(f)(a)
    assert float(tl.jvp(f, (a,), (tl.tensor(np.float64(1.0)),))[1]) == pytest.approx(float(first))
    mixed = tl.grad(lambda a: tl.grad(lambda b: tl.random.gamma((5,), a, b, dtype="float64", seed=0).sum())(b))(a)
    assert float(mixed) == pytest.approx(-float(first) / 9.0, rel=1e-12)


@pytest.mark.parametrize(
    "dtype, minval, maxval", [("float16", 0.0, 1.0), ("float16", -1.0, 1.0), ("float64", 1.0, 1.0 + 1e-13)]
)
def test_uniform_draws_stay_below_maxval(dtype, minval, maxval):
    # Rounded to their dtype, NumPy's draws reached maxval: 5 float16 1.0s in 20000 draws in [0, 1), and in
    # a float64 range 1e-13 wide 21 of 20000.  Now NumPy's numbers where they are below maxval, the dtype's
    # largest number below it elsewhere.
    numpys = np.random.default_rng(0).uniform(minval, maxval, 20_000).astype(dtype)
    top = np.nextafter(np.dtype(dtype).type(maxval), np.dtype(dtype).type(minval))
    assert (numpys >= np.dtype(dtype).type(maxval)).any()  # the case is exercised
    got = tl.random.uniform((20_000,), minval, maxval, dtype=dtype, seed=0).numpy()
    np.testing.assert_array_equal(got, np.minimum(numpys, top))
    low = tl.tensor(np.full(1, minval, dtype))  # tensor bounds: minval + (maxval - minval) u in the dtype
    assert tl.random.uniform((20_000,), low, maxval, dtype=dtype, seed=0).numpy().max() < np.dtype(dtype).type(maxval)


def test_uniform_with_tensor_bounds_stays_in_range_and_keeps_its_gradient():
    low, high = tl.tensor(np.float32([1e6, 1.0])), tl.tensor(np.float32([1e6 + 1, 2.0]))
    x = tl.random.uniform((20_000, 2), low, high, seed=0).numpy()
    assert (x < high.numpy()).all() and (x >= low.numpy()).all()  # 1e6 + u rounded to 1e6 + 1 in 638 draws
    u = tl.random.uniform((20_000, 2), dtype="float64", seed=0).numpy()
    g = tl.grad(lambda h: tl.random.uniform((20_000, 2), low.astype("float64"), h, dtype="float64", seed=0).sum())
    np.testing.assert_allclose(g(high.astype("float64")).numpy(), u.sum(axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="tl.random.uniform: minval must not exceed maxval"):
        tl.random.uniform((3,), tl.tensor([2.0]), 1.0)  # drew in (1, 2], where numbers raise as NumPy does


@pytest.mark.parametrize("dtype, lam", [("int32", 1e12), ("float16", 1e6), ("int64", 1e300)])
def test_poisson_rates_beyond_what_the_dtype_holds_raise(dtype, lam):
    # int32 counts of rate 1e12 wrapped to -728318042, float16 ones of 1e6 were inf, and 1e300 raised
    # NumPy's bare 'lam value too large'.
    with pytest.raises(ValueError, match=f"RandomPoisson: lam must be at most .* for {dtype} counts"):
        tl.random.poisson((3,), lam, dtype=dtype, seed=0)
    with pytest.raises(ValueError, match=f"RandomPoissonV2: the rates must be at most .* for {dtype} counts"):
        tl.random.poisson((2,), tl.tensor(np.array([1.0, lam])), dtype=dtype, seed=0)
    with pytest.raises(ValueError, match="RandomPoissonV2: the rates must be at most"):
        tl.function(lambda r: tl.random.poisson((2,), r, dtype=dtype))(tl.tensor(np.array([1.0, lam])))


def test_poisson_rates_the_dtype_holds_draw_numpys_counts():
    got = tl.random.poisson((1000,), 2e9, dtype="int32", seed=0).numpy()
    np.testing.assert_array_equal(got, np.random.default_rng(0).poisson(2e9, 1000))
    got = tl.random.poisson((1000,), 6e4, dtype="float16", seed=0).numpy()
    np.testing.assert_array_equal(got, np.random.default_rng(0).poisson(6e4, 1000).astype(np.float16))
    assert np.isfinite(got).all()


R = tl.random
NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "call, exc, match",
    [
        # a negative stddev of truncated normals drew silently (the tensor parameters' check refused it)
        (lambda: R.truncated_normal((3,), 0.0, -1.0), ValueError, "TruncatedNormal: stddev must be a non-negative"),
        (lambda: R.normal((3,), 0.0, -1.0), ValueError, "RandomStandardNormal: stddev must be a non-negative"),
        (lambda: R.normal((3,), NAN, 1.0), ValueError, "RandomStandardNormal: mean must be a finite"),
        (lambda: R.lognormal((3,), 0.0, INF), ValueError, "RandomStandardNormal: stddev must be a non-negative"),
        (lambda: R.Generator(0).normal((3,), 0.0, -1.0), ValueError, "Generator.normal: stddev must be"),
        # NumPy's bare 'high - low range exceeds valid bounds' and 'high - low < 0'
        (lambda: R.uniform((3,), NAN, 1.0), ValueError, "RandomUniform: minval and maxval must be finite"),
        (lambda: R.uniform((3,), 2.0, 1.0), ValueError, "RandomUniform: minval and maxval must be finite"),
        # float() raised its own message, naming no function
        (lambda: R.normal((3,), "a"), TypeError, "tl.random.normal: mean must be a real number or a tensor"),
        (lambda: R.gamma((3,), 1 + 1j), TypeError, "tl.random.gamma: alpha must be a real number or a tensor"),
        (lambda: R.uniform((3,), None), TypeError, "tl.random.uniform: minval must be a real number or a tensor"),
        # argmax's 'attempt to get argmax of an empty sequence'; choice's negative size named categorical
        (lambda: R.categorical(tl.zeros((2, 0)), 3), ValueError, "categorical: logits need at least one class"),
        (lambda: R.choice(0, (3,)), ValueError, r"choice: cannot take shape \(3,\) from a of shape \(0,\)"),
        (lambda: R.choice(3, (-1,)), ValueError, r"choice: cannot take shape \(-1,\)"),
        # uniform's error, naming uniform and a float dtype; the generic function's name
        (lambda: R.randint((3,), tl.tensor(0), 5), TypeError, "tl.random.randint: minval and maxval must be integers"),
        (lambda: R.Generator(0).gamma((2,), 1.0, 0.0), ValueError, "tl.random.Generator.gamma: the rate beta"),
        # a NaN covariance drew NaN samples (a NaN mean raised)
        (lambda: R.multivariate_normal((3,), [0.0, 0.0], [[NAN, 0.0], [0.0, 1.0]]), ValueError, "cov must be finite"),
    ],
)
def test_bad_number_parameters_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_valid_edges_still_draw_numpys_numbers():
    np.testing.assert_array_equal(R.choice(0, (0,)).numpy(), np.zeros(0, np.int64))  # NumPy's empty choice
    assert R.choice(3, (2, 0), replace=False).shape == (2, 0)
    np.testing.assert_array_equal(R.normal((5,), 1.0, 0.0, dtype="float64").numpy(), np.ones(5))
    np.testing.assert_array_equal(R.uniform((4,), 2.0, 2.0, dtype="float64").numpy(), np.full(4, 2.0))


def test_beta_and_dirichlet_with_tiny_parameters_follow_their_laws_without_nan():
    # Tensor-parameter beta draws of a = b = 1e-3 were NaN in 23% of 1e5 samples, dirichlet rows of three
    # 1e-3 in 11% (both gamma draws underflowed: 0 / 0).  Now the gamma draws below 0.1 are drawn as logarithms.
    scipy_stats = pytest.importorskip("scipy.stats")
    n = 20_000
    x = tl.random.beta((n,), tl.tensor(np.full(n, 1e-3)), 1e-3, dtype="float64", seed=6).numpy()
    y = tl.random.dirichlet((n,), [1e-3, 1e-3, 1e-3], dtype="float64", seed=1).numpy()
    assert not np.isnan(x).any() and not np.isnan(y).any()
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-12)
    for samples, law in ((x, scipy_stats.beta(1e-3, 1e-3)), (y[:, 0], scipy_stats.beta(1e-3, 2e-3))):
        for q in (1e-100, 1e-10, 0.5, 1 - 1e-10):  # the law's CDF at points the samples resolve
            p = law.cdf(q)
            assert abs(np.mean(samples <= q) - p) < 5 * np.sqrt(p * (1 - p) / n), (q, np.mean(samples <= q), p)


def test_beta_and_dirichlet_gradients_with_small_parameters_follow_the_means():
    # d E[x] / d a = b / (a + b)**2 for beta; d E[x_0] / d alpha for dirichlet; up to the sampling error.
    n = 100_000
    a, b = tl.tensor(0.03), 0.2
    ga = tl.grad(lambda a: tl.random.beta((n,), a, b, dtype="float64", seed=3).mean())(a)
    assert float(ga) == pytest.approx(b / (0.03 + b) ** 2, rel=0.03)
    alpha = np.array([0.05, 0.05, 0.1])
    g = tl.grad(lambda a: tl.random.dirichlet((n,), a, dtype="float64", seed=1)[:, 0].mean())(tl.tensor(alpha))
    expected = -alpha[0] / alpha.sum() ** 2 + np.array([1 / alpha.sum(), 0, 0])
    np.testing.assert_allclose(g.numpy(), expected, rtol=0.03)
    traced = tl.function(tl.grad(lambda a: tl.random.dirichlet((50,), a, dtype="float64", seed=1)[:, 0].sum()))
    eager = tl.grad(lambda a: tl.random.dirichlet((50,), a, dtype="float64", seed=1)[:, 0].sum())
    np.testing.assert_array_equal(traced(tl.tensor(alpha)).numpy(), eager(tl.tensor(alpha)).numpy())


def test_categorical_of_float16_logits_follows_softmax():
    # float16 logits [1000, 1000.5] plus float16 Gumbel noise rounded to steps of 0.5, ties went to class 0:
    # class 1 was drawn 56% of the time, softmax gives 62.2%.
    n = 50_000
    draws = tl.random.categorical(tl.tensor(np.float16([[1000.0, 1000.5]])), n, seed=0).numpy()
    p = 1 / (1 + np.exp(-0.5))
    assert abs((draws == 1).mean() - p) < 5 * np.sqrt(p * (1 - p) / n)
    logits = np.array([[0.0, 0.25, -1.0]], np.float16)
    np.testing.assert_array_equal(  # the same draws as the float64 logits' (the same noise, no rounding)
        tl.random.categorical(tl.tensor(logits), 100, seed=1).numpy(),
        tl.random.categorical(tl.tensor(logits.astype(np.float64)), 100, seed=1).numpy(),
    )


def test_gamma_gradient_for_a_huge_alpha_is_finite_and_right():
    # From alpha ~ 1e12 the loops stopped after a million steps (minutes) and gave NaN; 1e9 took seconds.
    from tensorlib.ops.random import _fraction_grad, _series_grad, standard_gamma_sample_grad

    scipy_special = pytest.importorskip("scipy.special")
    a = 1e6  # the loops' own values, where they are still quick
    x = a + np.sqrt(a) * np.array([-20.0, -3.0, -0.1, 0.0, 0.2, 3.0, 20.0])
    loops = np.where(x < a + 1, _series_grad(np.full(7, a), x), _fraction_grad(np.full(7, a), x))
    np.testing.assert_allclose(standard_gamma_sample_grad(a, x), loops, rtol=3e-9)
    for a in (1e12, 1e15):  # the change of the quantile at a constant CDF, by SciPy's inverse
        u = np.array([0.05, 0.3, 0.5, 0.7, 0.95])
        h = 1e-4 * a
        expected = (scipy_special.gammaincinv(a + h, u) - scipy_special.gammaincinv(a - h, u)) / (2 * h)
        np.testing.assert_allclose(standard_gamma_sample_grad(a, scipy_special.gammaincinv(a, u)), expected, rtol=1e-7)
    g = tl.grad(lambda a: tl.random.gamma((4,), a, dtype="float64", seed=0).sum())(tl.tensor(1e13))
    assert float(g) == pytest.approx(4.0, rel=1e-5)


def test_choice_takes_a_traced_p():
    # Traced, p's values were read: 'a symbolic tensor ... has no value while tl.function traces'.
    p = tl.tensor([0.2, 0.3, 0.5])
    traced = tl.function(lambda p: tl.random.choice(3, (20_000,), p=p, seed=0))(p).numpy()
    np.testing.assert_array_equal(traced, tl.random.choice(3, (20_000,), p=p, seed=0).numpy())
    counts = np.bincount(tl.function(lambda p: tl.random.choice(3, (20_000,), p=p))(p).numpy(), minlength=3)
    np.testing.assert_allclose(counts / 20_000, [0.2, 0.3, 0.5], atol=0.02)
    with pytest.raises(ValueError, match=r"tl.random.choice: p must be 3 probabilities, got float32\[2\]"):
        tl.function(lambda p: tl.random.choice(3, (3,), p=p))(tl.tensor([0.5, 0.5]))

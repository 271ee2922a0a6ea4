"""tl.stats.multivariate_normal.cdf/logcdf with a full covariance of k > 2 dimensions (Genz's integration).

References, each independent of tensorlib: the orthant probabilities' closed forms (k = 3: 1/8 + the arcsines'
sum / 4 pi; k equicorrelated at 1/2: 1 / (k + 1)); products of ndtr (independent and block-diagonal covariances,
with the bivariate orthant 1/4 + asin(rho) / 2 pi); the gradients' closed forms (d/dx_i: the density of x_i
times the conditional orthant; d/dcov_ij, Plackett's identity: the arcsine's derivative); SciPy's Genz
integration at a tight tolerance; and the eager result for tl.function, tl.vmap and float32.
"""

import math

import numpy as np
import pytest

import tensorlib as tl

cdf = tl.stats.multivariate_normal.cdf
ACCURACY = 2e-5  # SciPy's default abseps is 1e-5; these checks measure 1e-6 .. 1e-5


def _orthant3(c):
    return 1 / 8 + (math.asin(c[0, 1]) + math.asin(c[0, 2]) + math.asin(c[1, 2])) / (4 * math.pi)


def _ndtr(x):
    return 0.5 * np.vectorize(math.erfc)(-np.asarray(x) / math.sqrt(2.0))


C3 = np.array([[1.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 1.0]])


def test_orthant_probabilities_against_their_closed_forms():
    got = cdf(np.zeros(3), np.zeros(3), C3).numpy()
    assert abs(got - _orthant3(C3)) < ACCURACY
    for k in range(3, 9):
        equi = 0.5 * np.eye(k) + 0.5
        assert abs(cdf(np.zeros(k), 0.0, equi).numpy() - 1 / (k + 1)) < ACCURACY, k
    # scaled and shifted: the same orthant
    scale = np.array([2.0, 0.5, 3.0])
    shifted = cdf(np.array([1.0, -1.0, 2.0]), np.array([1.0, -1.0, 2.0]), C3 * np.outer(scale, scale))
    assert abs(shifted.numpy() - _orthant3(C3)) < ACCURACY
    log = tl.stats.multivariate_normal.logcdf(np.zeros(3), 0.0, C3).numpy()
    assert abs(log - math.log(_orthant3(C3))) < ACCURACY / 0.2


def test_independent_and_block_diagonal_covariances_are_products():
    rng = np.random.default_rng(3)
    for k in (3, 5, 9):
        var = rng.uniform(0.3, 4.0, k)
        x, mean = rng.normal(size=k), rng.normal(size=k)
        want = np.prod(_ndtr((x - mean) / np.sqrt(var)))
        np.testing.assert_allclose(cdf(x, mean, np.diag(var)).numpy(), want, rtol=1e-9, atol=1e-12)
    # two bivariate blocks at their orthants and a third independent component
    block = np.zeros((5, 5))
    block[:2, :2] = [[1.0, 0.7], [0.7, 1.0]]
    block[2:4, 2:4] = [[1.0, -0.4], [-0.4, 1.0]]
    block[4, 4] = 2.0
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.8])
    want = (0.25 + math.asin(0.7) / (2 * math.pi)) * (0.25 + math.asin(-0.4) / (2 * math.pi)) * _ndtr(0.8 / 2**0.5)
    assert abs(cdf(x, 0.0, block).numpy() - want) < ACCURACY


def test_boxes_by_inclusion_exclusion_and_the_signed_integral():
    lower = np.array([-0.5, -1.0, 0.2])
    upper = np.array([1.0, 0.3, 1.5])
    corners = 0.0
    for bits in range(8):  # the box from the corners' cdfs
        corner = np.where([(bits >> i) & 1 for i in range(3)], lower, upper)
        corners += (-1) ** bin(bits).count("1") * cdf(corner, 0.0, C3).numpy()
    box = cdf(upper, 0.0, C3, lower_limit=lower).numpy()
    assert abs(box - corners) < 4 * ACCURACY and box > 0.05
    # SciPy's signed integral: swapping one component's limits negates the box
    swapped_upper, swapped_lower = upper.copy(), lower.copy()
    swapped_upper[1], swapped_lower[1] = lower[1], upper[1]
    np.testing.assert_allclose(cdf(swapped_upper, 0.0, C3, lower_limit=swapped_lower).numpy(), -box, rtol=1e-12)
    # the upper tail, an interval above 0 in every component: its mirror image keeps the relative precision
    far = cdf(np.full(3, np.inf), 0.0, np.eye(3) * 0.5 + 0.5, lower_limit=np.full(3, 4.0)).numpy()
    flipped = cdf(np.full(3, -4.0), 0.0, np.eye(3) * 0.5 + 0.5).numpy()
    np.testing.assert_allclose(far, flipped, rtol=1e-10)
    assert 0 < far < _ndtr(-4.0)


def test_gradients_against_their_closed_forms():
    x = tl.tensor(np.zeros(3))
    mean = tl.tensor(np.zeros(3))
    cov = tl.tensor(C3)
    gx, gm, gc = tl.grad(lambda x, m, c: cdf(x, m, c), argnums=(0, 1, 2))(x, mean, cov)
    for i in range(3):  # the density of x_i at 0 times the conditional orthant of the other two
        rest = [j for j in range(3) if j != i]
        cond = C3[np.ix_(rest, rest)] - np.outer(C3[rest, i], C3[i, rest])
        rho = cond[0, 1] / math.sqrt(cond[0, 0] * cond[1, 1])
        want = (0.25 + math.asin(rho) / (2 * math.pi)) / math.sqrt(2 * math.pi)
        assert abs(gx.numpy()[i] - want) < 5e-4, (i, gx.numpy()[i], want)
    np.testing.assert_allclose(gm.numpy(), -gx.numpy(), rtol=1e-12)
    # Plackett: d/drho_ij of the orthant = 1 / (4 pi sqrt(1 - rho_ij^2)), split evenly between cov[i, j] and cov[j, i]
    for i, j in ((0, 1), (0, 2), (1, 2)):
        want = 1 / (8 * math.pi * math.sqrt(1 - C3[i, j] ** 2))
        assert abs(gc.numpy()[i, j] - want) < 5e-4 and abs(gc.numpy()[j, i] - want) < 5e-4
    assert np.all(np.isfinite(gc.numpy()))


def test_gradient_agrees_with_float64_central_differences_of_the_estimate():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 4))
    cov = a @ a.T / 4 + 0.5 * np.eye(4)
    x = rng.normal(size=4)
    f = lambda x, c: cdf(x, 0.0, c, lower_limit=np.array([-np.inf, -1.0, -np.inf, -2.0]))  # noqa: E731
    gx, gc = tl.grad(f, argnums=(0, 1))(tl.tensor(x), tl.tensor(cov))
    h = 1e-5
    for i in range(4):
        e = np.eye(4)[i] * h
        fd = (f(x + e, cov).numpy() - f(x - e, cov).numpy()) / (2 * h)
        np.testing.assert_allclose(gx.numpy()[i], fd, rtol=1e-5, atol=1e-9)
    e = np.zeros((4, 4))
    e[1, 2] = h
    fd = (f(x, cov + e).numpy() - f(x, cov - e).numpy()) / (2 * h)
    np.testing.assert_allclose(gc.numpy()[1, 2], fd, rtol=1e-4, atol=1e-9)


def test_batches_traced_vmapped_and_float32_agree_with_eager():
    rng = np.random.default_rng(11)
    a = rng.normal(size=(3, 4, 4))
    covs = a @ np.swapaxes(a, -1, -2) / 4 + 0.3 * np.eye(4)
    xs = rng.normal(size=(3, 4))
    one_by_one = np.array([cdf(xs[i], 0.0, covs[i]).numpy() for i in range(3)])
    np.testing.assert_allclose(cdf(xs, 0.0, covs).numpy(), one_by_one, rtol=1e-12)
    shared = np.array([cdf(xs[i], 0.0, covs[0]).numpy() for i in range(3)])
    np.testing.assert_allclose(cdf(xs, 0.0, covs[0]).numpy(), shared, rtol=1e-12)
    traced = tl.function(lambda x, c: cdf(x, 0.0, c))
    np.testing.assert_allclose(traced(xs, covs).numpy(), one_by_one, rtol=1e-12)
    np.testing.assert_allclose(tl.vmap(lambda x, c: cdf(x, 0.0, c))(xs, covs).numpy(), one_by_one, rtol=1e-12)
    low = cdf(xs.astype(np.float32), np.float32(0.0), covs.astype(np.float32))
    assert low.dtype == np.float32
    np.testing.assert_allclose(low.numpy(), one_by_one, rtol=1e-5, atol=1e-7)


def test_against_scipy_genz_at_a_tight_tolerance():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for k in (3, 4, 6, 10):
        a = rng.normal(size=(k, k))
        cov = a @ a.T / k + 0.3 * np.eye(k)
        mean, x = rng.normal(size=k), rng.normal(size=k) + 0.5
        ref = stats.multivariate_normal(mean, cov, abseps=1e-8, releps=1e-8, maxpts=2_000_000 * k, seed=1).cdf(x)
        assert abs(cdf(x, mean, cov).numpy() - ref) < ACCURACY, k


def test_a_covariance_that_is_not_positive_definite_is_refused():
    with pytest.raises(np.linalg.LinAlgError, match="Cholesky"):
        cdf(np.zeros(3), 0.0, np.ones((3, 3)))

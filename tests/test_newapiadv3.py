"""Last session's new APIs attacked a third time, as an adversary and as a SciPy / PyTorch / JAX / NumPy user would
use them: the bivariate normal cdf (and ``multivariate_normal.cdf``) at opposite infinite bounds,
``gaussian_nll_loss``'s variance shapes, ``Tensor.at[...]``'s out-of-bounds ``mode=`` and ``einsum``'s ``casting=``.

References: closed forms (a probability of the whole plane is 1, of an empty set 0; Gaussian log-likelihoods written
out in NumPy), float64 central differences, NumPy's own results and errors (``numpy.einsum``), JAX's documented
``.at[]`` index semantics written out as NumPy loops; ``torch.nn.functional`` and ``jax.numpy`` where installed
(``importorskip``).
"""

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl

MVN = tl.stats.multivariate_normal


# ---------------------------------------------------------------- BivariateNormalCdf at opposite infinite bounds
@pytest.mark.parametrize("rho", [-1.0, -0.6, 0.0, 0.3, 1.0])
def test_bivariate_normal_cdf_at_opposite_infinities_is_zero(rho):
    # P(X <= -inf, Y <= inf) = P(X <= inf, Y <= -inf) = 0 for any correlation; the kernel read h + k = -inf + inf
    # as a NaN input and returned NaN.  Reference: the empty set's probability, and the marginal's ndtr at +inf.
    from scipy.special import ndtr

    from tensorlib.ops.special_more import bivariate_normal_cdf

    h = np.array([-np.inf, np.inf, np.inf, -np.inf, np.inf, 0.7, -np.inf])
    k = np.array([np.inf, -np.inf, np.inf, -np.inf, -0.4, np.inf, -0.2])
    got = bivariate_normal_cdf(tl.tensor(h), tl.tensor(k), tl.tensor(np.full(h.shape, rho))).numpy()
    want = np.where(np.isneginf(h) | np.isneginf(k), 0.0, ndtr(np.minimum(h, k)))
    np.testing.assert_array_equal(got, want)


def test_mvn_cdf_of_the_whole_plane_and_of_a_half_infinite_strip():
    # cdf(x=(inf, inf), lower_limit=(-inf, -inf)) is the whole plane's probability, 1 (SciPy's value); it was NaN from
    # the box's corner (-inf, inf).  cdf(x=(-inf, inf)) is 0.  Reference: 1 and 0, and the finite box's corners
    # against scipy.stats where installed.
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    mean = np.array([0.3, -0.2])
    inf = np.inf
    got = MVN.cdf(np.array([inf, inf]), mean, cov, lower_limit=np.array([-inf, -inf])).numpy()
    assert got == 1.0
    assert MVN.cdf(np.array([-inf, inf]), mean, cov).numpy() == 0.0
    assert MVN.logcdf(np.array([inf, inf]), mean, cov, lower_limit=np.array([-inf, -inf])).numpy() == 0.0
    # the strip -1 < X1 <= 1 over the whole of X2 is the first marginal's mass
    from scipy.special import ndtr

    strip = MVN.cdf(np.array([1.0, inf]), mean, cov, lower_limit=np.array([-1.0, -inf])).numpy()
    s = np.sqrt(2.0)
    np.testing.assert_allclose(strip, ndtr((1.0 - 0.3) / s) - ndtr((-1.0 - 0.3) / s), rtol=1e-14)
    g = tl.grad(lambda m: MVN.cdf(np.array([1.0, inf]), m, cov, lower_limit=np.array([-1.0, -inf])))(tl.tensor(mean))
    fd = central_differences(lambda m: ndtr((1.0 - m[0]) / s) - ndtr((-1.0 - m[0]) / s) + 0.0 * m[1], mean)
    np.testing.assert_allclose(g.numpy(), fd, atol=1e-9)


# ---------------------------------------------------------------- gaussian_nll_loss's variance shapes
def _gaussian_nll(x, t, v, full, eps):
    v = np.maximum(np.broadcast_to(v, np.broadcast_shapes(np.shape(v), x.shape)), eps)
    return 0.5 * (np.log(v) + (x - t) ** 2 / v) + (0.5 * np.log(2 * np.pi) if full else 0.0)


@pytest.mark.parametrize(
    "var_shape", [(4, 1, 5, 5), (1, 3, 5, 5), (4, 3, 1, 5), (4, 3, 5, 1), (4, 3, 5), (4, 3, 5, 5), "number"]
)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gaussian_nll_loss_takes_a_variance_shared_along_any_one_axis(var_shape, reduction):
    # PyTorch's gaussian_nll_loss takes var shaped as input with any one axis of 1 (its docs' (4, 1, 32, 32) for a
    # (4, 3, 32, 32) input: one variance per pixel over the channels) and a Python float var; only the last axis
    # was taken, the rest raised.  Reference: the Gaussian negative log-likelihood in NumPy, torch's where installed;
    # the gradient in var against central differences.
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((4, 3, 5, 5)), rng.standard_normal((4, 3, 5, 5))
    v = 0.7 if var_shape == "number" else rng.uniform(0.2, 2.0, var_shape)
    v_np = np.expand_dims(v, -1) if var_shape == (4, 3, 5) else v
    reduce = {"none": lambda a: a, "mean": np.mean, "sum": np.sum}[reduction]
    got = tl.nn.gaussian_nll_loss(x, t, v, full=True, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), reduce(_gaussian_nll(x, t, v_np, True, 1e-6)), rtol=1e-13)
    traced = tl.function(lambda a, b: tl.nn.gaussian_nll_loss(a, b, v, full=True, reduction=reduction))(x, t)
    np.testing.assert_allclose(traced.numpy(), got.numpy(), rtol=1e-14)
    if var_shape != "number":
        g = tl.grad(lambda w: tl.sum(tl.nn.gaussian_nll_loss(x, t, w, reduction=reduction)))(tl.tensor(v))
        fd = central_differences(
            lambda w: np.sum(reduce(_gaussian_nll(x, t, np.reshape(w, v_np.shape), False, 1e-6))), v
        )
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-7)
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    tv = v if var_shape == "number" else torch.tensor(v)
    want = F.gaussian_nll_loss(torch.tensor(x), torch.tensor(t), tv, full=True, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("var_shape", [(4, 1, 1, 5), (1, 1, 5, 5), (4, 3, 5, 2), (3, 5, 5), ()])
def test_gaussian_nll_loss_refuses_other_variance_shapes(var_shape):
    # Two axes of 1, a wrong size, a missing leading axis, a 0-d tensor: PyTorch's "var is of incorrect size".
    x = np.zeros((4, 3, 5, 5))
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var shape .* must be input shape \(4, 3, 5, 5\)"):
        tl.nn.gaussian_nll_loss(x, x, np.ones(var_shape))
    with pytest.raises(ValueError, match="gaussian_nll_loss: var holds negative values"):
        tl.nn.gaussian_nll_loss(x, x, -1.0)

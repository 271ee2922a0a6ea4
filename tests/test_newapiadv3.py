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

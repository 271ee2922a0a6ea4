"""Adversarial checks of the stats, optimizer and transforms APIs: tl.stats.multivariate_normal's cdf at its
edges, tl.optimizers' parameter-group checks, tl.linear_transpose of non-linear functions, tl.all_gather's options.
References: SciPy, closed forms, float64 central differences; torch and JAX where installed (skipped if absent)."""

import numpy as np
import pytest
from scipy import stats

import tensorlib as tl

mvn = tl.stats.multivariate_normal


# ------------------------------------------------------------------ multivariate_normal.cdf / logcdf / logpdf
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # sqrt of the negative variances, before the factor
@pytest.mark.parametrize("method", ["cdf", "logcdf", "logpdf"])
def test_mvn_cov_not_positive_definite_names_the_method_shapes_and_dtype(method):
    cov = -np.eye(3, dtype=np.float32)
    with pytest.raises(np.linalg.LinAlgError, match=f"multivariate_normal.{method}: cov is not positive definite") as e:
        getattr(mvn, method)(np.zeros((2, 3), np.float32), 0.0, cov)
    message = str(e.value)
    assert "x shape (2, 3) float32" in message and "cov shape (3, 3) float32" in message, message
    with pytest.raises(np.linalg.LinAlgError, match="cov is not positive definite.*lower_limit shape"):
        mvn.cdf(np.zeros(3), 0.0, np.ones((3, 3)), lower_limit=np.full(3, -1.0))
    # SciPy refuses it too
    with pytest.raises(ValueError):
        stats.multivariate_normal.cdf(np.zeros(3), np.zeros(3), -np.eye(3))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_mvn_cdf_of_a_nan_is_nan(k):
    cov = 0.5 * np.eye(k) + 0.5
    for i in range(k):
        x = np.zeros(k)
        x[i] = np.nan
        assert np.isnan(mvn.cdf(x, 0.0, cov).numpy()) and np.isnan(mvn.logcdf(x, 0.0, cov).numpy())
        if k != 2:  # SciPy 1.17's bivariate branch returns 0 for a NaN; elsewhere it gives NaN as here
            assert np.isnan(stats.multivariate_normal.cdf(x, np.zeros(k), cov))
    assert np.isnan(mvn.cdf(np.zeros(k), np.full(k, np.nan), cov).numpy())
    # the finite rows of a batch keep their values
    x = np.zeros((2, k))
    x[0, 0] = np.nan
    got = mvn.cdf(x, 0.0, cov).numpy()
    assert np.isnan(got[0]) and abs(got[1] - 1.0 / (k + 1)) < 1e-5  # the equicorrelated orthant: 1 / (k + 1)

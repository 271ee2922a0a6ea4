"""tl.stats gaps, attacked: gradients at the lower end ``x == loc`` of a support whose density is a power ``z**k`` there
(gamma with a < 1, weibull_min with c < 1: NaN in the scale and loc).  References: scipy.stats, float64 central
differences of SciPy's values just inside the support, and the closed forms of the limits."""

import math

import numpy as np
import pytest
import scipy.stats as ss

import tensorlib as tl


def _t(v):
    return tl.tensor(v, "float64")


def _grads(dist, method, shape, x, loc, scale):
    f = getattr(getattr(tl.stats, dist), method)
    return [float(g) for g in tl.grad(lambda x, l, s: f(x, shape, loc=l, scale=s), argnums=(0, 1, 2))(x, loc, scale)]


def _scipy_scale_slope(dist, method, shape, loc, scale, offset=1e-9, h=1e-6):
    """d method / d scale at ``x = loc + offset``, inside the support, by a float64 central difference of SciPy."""
    f = getattr(getattr(ss, dist), method)
    x = loc + offset
    return (f(x, shape, loc=loc, scale=scale + h) - f(x, shape, loc=loc, scale=scale - h)) / (2 * h)


# the density is ~ z**k at x = loc, k = a - 1 (gamma, chi2: df / 2 - 1) or c - 1 (weibull_min); the log-density's
# scale slope there is -(k + 1) / scale, the log distribution function's too (log P ~ (k + 1) log z), the others' 0
@pytest.mark.parametrize(
    "dist, shape, power",
    [
        ("gamma", 0.5, 0.5),
        ("gamma", 2.5, 2.5),
        ("weibull_min", 0.5, 0.5),
        ("weibull_min", 3.0, 3.0),
        ("chi2", 1.0, 0.5),
    ],
)
def test_gradients_at_x_equal_loc_are_the_limits_not_nan(dist, shape, power):
    x, loc, scale = _t(1.0), _t(1.0), _t(2.0)
    for method in ("logpdf", "logcdf"):
        gx, gloc, gscale = _grads(dist, method, shape, x, loc, scale)
        assert gscale == pytest.approx(-power / 2.0, rel=1e-12)
        # SciPy's own slope a hair inside the support tends to the same limit
        assert gscale == pytest.approx(_scipy_scale_slope(dist, method, shape, 1.0, 2.0), abs=1e-4)
        rising = method == "logcdf" or power > 1.0  # +-inf: the sign of (power - [logpdf]) / z
        assert gx == (math.inf if rising else -math.inf) and gloc == -gx
    for method in ("cdf", "sf", "logsf"):
        gx, gloc, gscale = _grads(dist, method, shape, x, loc, scale)
        assert gscale == 0.0
        assert not math.isnan(gx) and gloc == -gx
        want = getattr(ss, dist).pdf(1.0, shape, loc=1.0, scale=2.0)  # inf for a power below 1
        assert abs(gx) == pytest.approx(want, rel=1e-9) or abs(gx) == want
    gx, gloc, gscale = _grads(dist, "pdf", shape, x, loc, scale)
    assert not any(math.isnan(g) for g in (gx, gloc, gscale))


@pytest.mark.parametrize("dist", ["expon", "halfnorm"])
def test_logcdf_scale_gradient_at_x_equal_loc_is_minus_one_over_scale(dist):
    f = getattr(tl.stats, dist).logcdf
    g = tl.grad(lambda s: f(_t(1.0), loc=_t(1.0), scale=s))(_t(2.0))
    assert float(g) == pytest.approx(-0.5, rel=1e-12)
    h = 1e-6
    ref = (getattr(ss, dist).logcdf(1.0 + 1e-9, 1.0, 2.0 + h) - getattr(ss, dist).logcdf(1.0 + 1e-9, 1.0, 2.0 - h)) / (
        2 * h
    )
    assert float(g) == pytest.approx(ref, abs=1e-4)


def test_log_gamma_tail_upper_at_zero_has_the_limit_slope():
    from tensorlib.ops.special import log_gamma_tail

    g = tl.grad(lambda x: log_gamma_tail(_t(0.5), x, True))(_t(0.0))
    assert float(g) == -math.inf  # -pdf / sf there, pdf = inf for a < 1
    g = tl.grad(lambda x: log_gamma_tail(_t(1.0), x, True))(_t(0.0))
    assert float(g) == pytest.approx(-1.0, rel=1e-12)  # log Q(1, x) = -x


def test_values_at_and_near_x_equal_loc_are_unchanged():
    x = np.array([1.0, 1.0 + 1e-12, 1.5, 4.0])
    for dist, shape in [("gamma", 0.5), ("gamma", 1.0), ("weibull_min", 0.5), ("chi2", 1.0)]:
        for method in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
            got = getattr(getattr(tl.stats, dist), method)(_t(x), shape, loc=1.0, scale=2.0).numpy()
            want = getattr(getattr(ss, dist), method)(x, shape, loc=1.0, scale=2.0)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    for dist in ("expon", "halfnorm"):
        for method in ("logpdf", "pdf", "logcdf"):
            got = getattr(getattr(tl.stats, dist), method)(_t(x), loc=1.0, scale=2.0).numpy()
            np.testing.assert_allclose(got, getattr(getattr(ss, dist), method)(x, loc=1.0, scale=2.0), rtol=1e-12)

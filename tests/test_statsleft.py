"""tl.stats and tl.special leftovers, attacked at the edges: infinite and overflowing arguments (float32 1e150 is
inf), the densities' limits at +-inf, the exponentially scaled Bessel functions' slopes at a huge x, the discrete
families' methods.  References: scipy.stats / scipy.special, float64 central differences, mpmath where installed,
and closed forms."""

import math

import numpy as np
import pytest

import tensorlib as tl

CONTINUOUS = [
    ("norm", ()),
    ("t", (3.0,)),
    ("beta", (2.0, 3.0)),
    ("gamma", (2.0,)),
    ("chi2", (3.0,)),
    ("uniform", ()),
    ("expon", ()),
    ("laplace", ()),
    ("logistic", ()),
    ("cauchy", ()),
    ("pareto", (2.0,)),
    ("gennorm", (1.5,)),
    ("gumbel_r", ()),
    ("gumbel_l", ()),
    ("lognorm", (1.0,)),
    ("weibull_min", (2.0,)),
    ("halfnorm", ()),
    ("rayleigh", ()),
    ("invgamma", (2.0,)),
    ("f", (3.0, 4.0)),
    ("loggamma", (2.0,)),
    ("truncnorm", (-1.0, 2.0)),
]
METHODS = ("cdf", "sf", "logcdf", "logsf", "pdf", "logpdf")


def _grads(f, *args):
    args = [tl.tensor(a) for a in args]
    return [g.numpy() for g in tl.grad(f, argnums=tuple(range(len(args))))(*args)]


@pytest.mark.parametrize(("name", "shapes"), CONTINUOUS)
def test_gradients_at_an_infinite_x_are_finite_in_every_argument(name, shapes):
    # z = (x - loc) / scale has the derivative -z / scale = inf in the scale at x = inf: every family's scale
    # gradient was 0 * inf = NaN there (float32 x = 1e150 is inf), t's in df, gamma's logsf in a too.  Every method
    # is constant there (an end value, or the density's limit), so the gradient is 0 in every argument (logpdf's, of
    # -inf, only finite: its -log(scale) term keeps -1 / scale).
    dist = getattr(tl.stats, name)
    for x in (np.inf, -np.inf):
        for method in METHODS:
            f = getattr(dist, method)
            for dtype in ("float32", "float64"):
                args = [np.array(v, dtype) for v in (x, *shapes, 0.5, 2.0)]
                grads = _grads(lambda *a, f=f: f(*a), *args)
                for i, g in enumerate(grads):
                    assert np.isfinite(g) if method == "logpdf" else g == 0.0, (name, method, x, dtype, i, g)


@pytest.mark.parametrize("name", ["weibull_min", "rayleigh"])
@pytest.mark.parametrize("method", ["cdf", "sf", "logcdf"])
def test_float32_overflowing_x_scale_gradient_is_float64s_central_difference(name, method):
    # float32 1e150 is inf: the scale gradient of weibull_min.cdf and rayleigh.cdf was NaN; in float64 at x = 1e150
    # the function is flat in the scale (central differences: 0), and so is the float32 gradient now
    shapes = (2.0,) if name == "weibull_min" else ()
    f = getattr(getattr(tl.stats, name), method)

    def value(scale):
        return float(f(tl.tensor(np.float64(1e150)), *shapes, scale=scale).numpy())

    reference = (value(2.0 + 1e-6) - value(2.0 - 1e-6)) / 2e-6
    (g,) = _grads(lambda s: f(tl.tensor(np.float32(1e150)), *shapes, scale=s), np.float32(2.0))
    assert g.dtype == np.float32 and g == reference == 0.0


@pytest.mark.parametrize(
    ("name", "shapes"),
    [("chi2", (3.0,)), ("weibull_min", (2.0,)), ("gamma", (2.0,)), ("f", (3.0, 4.0)), ("loggamma", (2.0,))],
)
def test_densities_at_infinity_are_their_limit_zero(name, shapes):
    # SciPy's formulas read inf - inf at x = inf (NaN) for these, where its norm, rayleigh, invgamma (and chi2
    # with df <= 2) give the limit 0: tl.stats gives the limit for every family, eagerly and traced
    dist = getattr(tl.stats, name)
    x = np.array([np.inf, -np.inf, np.nan, 1.5])
    for dtype in ("float32", "float64"):
        xs = x.astype(dtype)
        pdf, logpdf = dist.pdf(xs, *shapes).numpy(), dist.logpdf(xs, *shapes).numpy()
        traced = tl.function(lambda v: dist.pdf(v, *shapes))(xs).numpy()
        np.testing.assert_array_equal(pdf[:2], 0.0)
        np.testing.assert_array_equal(logpdf[:2], -np.inf)
        assert np.isnan(pdf[2]) and np.isnan(logpdf[2]) and pdf[3] > 0
        np.testing.assert_array_equal(traced, pdf)
    # the density falls to 0: its value far out is below any positive number, and shrinking
    far = dist.pdf(np.array([1e3, 1e6, 1e12]), *shapes).numpy()
    assert far[0] < 1e-6 and (np.diff(far) <= 0).all()


def test_vonmises_density_at_infinity_stays_nan():
    # periodic: no limit at +-inf (SciPy: NaN), unlike the other families
    got = tl.stats.vonmises.pdf(np.array([np.inf, -np.inf]), 1.0).numpy()
    assert np.isnan(got).all()

"""tl.stats gradients at the support's ends, attacked: the shape parameters' slopes of ``pdf`` at ``x == loc`` (NaN
where the density is ``z**k``, k <= 0, there), beta's distribution functions and log-density at its ends.  References:
the closed forms of the limits from inside, scipy.stats' values and float64 central differences of them just inside
the support (and at the end itself, where SciPy's step in the shape gives the infinite slope)."""

import math

import numpy as np
import pytest
import scipy.stats as ss

import tensorlib as tl


def _t(v):
    return tl.tensor(v, "float64")


def _shape_slopes(dist, method, shapes, x, loc=1.0, scale=2.0):
    f = getattr(getattr(tl.stats, dist), method)
    n = len(shapes)
    g = tl.grad(lambda *s: f(_t(x), *s, loc=_t(loc), scale=_t(scale)), argnums=tuple(range(n)))(*map(_t, shapes))
    return [float(v) for v in g]


def _scipy_shape_slope(dist, method, shapes, i, x, loc=1.0, scale=2.0, h=1e-7):
    f = getattr(getattr(ss, dist), method)
    up, down = list(shapes), list(shapes)
    up[i] += h
    down[i] -= h
    return (f(x, *up, loc=loc, scale=scale) - f(x, *down, loc=loc, scale=scale)) / (2 * h)


# (dist, shapes, k = the density's power at x = loc, index of the shape in k)
_POWER_CASES = [
    ("gamma", (0.5,), -0.5),
    ("gamma", (1.0,), 0.0),
    ("gamma", (2.5,), 1.5),
    ("weibull_min", (0.5,), -0.5),
    ("weibull_min", (1.0,), 0.0),
    ("weibull_min", (3.0,), 2.0),
    ("chi2", (1.0,), -0.5),
    ("chi2", (2.0,), 0.0),
    ("chi2", (5.0,), 1.5),
    ("f", (1.0, 4.0), -0.5),
    ("f", (2.0, 4.0), 0.0),
    ("f", (3.0, 4.0), 0.5),
]


@pytest.mark.parametrize("dist, shapes, k", _POWER_CASES)
def test_pdf_shape_slope_at_x_equal_loc_is_the_limit_from_inside(dist, shapes, k):
    slopes = _shape_slopes(dist, "pdf", shapes, 1.0)
    assert not any(math.isnan(s) for s in slopes)
    if k > 0:  # the density is 0 at loc for every nearby shape, and z**k log z -> 0 from inside
        assert slopes == [0.0] * len(shapes)
        for i in range(len(shapes)):
            assert _scipy_shape_slope(dist, "pdf", shapes, i, 1.0) == 0.0
        return
    # the power's shape (the first): pdf * (log z dk + ...) -> -inf; SciPy's slope inside falls without bound as x -> loc
    assert slopes[0] == -math.inf
    near = [_scipy_shape_slope(dist, "pdf", shapes, 0, 1.0 + d) for d in (1e-6, 1e-9, 1e-12)]
    assert near[0] > near[1] > near[2] and near[2] < 0.0
    if k == 0:  # SciPy's value at loc steps from the finite pdf (k = 0) to inf (k < 0): its slope there is -inf
        assert _scipy_shape_slope(dist, "pdf", shapes, 0, 1.0) == -math.inf
    if len(shapes) == 2:  # f's dfd is only in the density's factor: pdf * d logpdf / d dfd, its limit
        inside = _scipy_shape_slope(dist, "logpdf", shapes, 1, 1.0 + 1e-9)
        if k == 0:  # f.pdf(loc, 2, dfd) = 1 / scale for every dfd
            assert slopes[1] == pytest.approx(0.0, abs=1e-12)
        else:
            assert slopes[1] == math.copysign(math.inf, inside)


@pytest.mark.parametrize("dist, shapes, k", _POWER_CASES)
def test_pdf_other_slopes_and_values_at_x_equal_loc_unchanged(dist, shapes, k):
    f = getattr(tl.stats, dist).pdf
    x = np.array([1.0, 1.0 + 1e-9, 1.7, 5.0])
    got = f(_t(x), *shapes, loc=1.0, scale=2.0).numpy()
    np.testing.assert_allclose(got, getattr(ss, dist).pdf(x, *shapes, loc=1.0, scale=2.0), rtol=1e-12)
    g = tl.grad(lambda x, l, s: f(x, *shapes, loc=l, scale=s), argnums=(0, 1, 2))(_t(1.0), _t(1.0), _t(2.0))
    gx, gloc, gscale = (float(v) for v in g)
    want_x = {-0.5: -math.inf, 0.0: None, 0.5: math.inf}.get(k)
    if want_x is not None:
        assert gx == want_x and gloc == -want_x
    assert not any(math.isnan(v) for v in (gx, gloc, gscale))


def test_pdf_shape_slope_in_a_batch_and_traced():
    a = _t([0.5, 1.0, 2.0])
    x = _t([1.0, 1.0, 1.0, 1.5])

    def total(a):
        return tl.stats.gamma.pdf(x, a[:, None], loc=1.0).sum()

    # a < 1 and a = 1: -inf from the three points at loc; a = 2: 0 there, plus SciPy's slope at 1.5
    want = np.array([-math.inf, -math.inf, _scipy_shape_slope("gamma", "pdf", (2.0,), 0, 1.5, scale=1.0)])
    for got in (tl.grad(total)(a), tl.function(tl.grad(total))(a)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (0.5, 2.0), (1.0, 1.0), (1.0, 3.0), (2.0, 0.5), (2.0, 3.0)])
def test_beta_pdf_shape_slopes_at_both_ends(a, b):
    for x, k, own in ((1.0, a - 1.0, 0), (3.0, b - 1.0, 1)):
        slopes = _shape_slopes("beta", "pdf", (a, b), x)
        other = 1 - own
        if k > 0:
            assert slopes == [0.0, 0.0]
            continue
        assert slopes[own] == -math.inf
        # the other shape only scales the density: pdf * d(-betaln) there, closed form with digamma
        from scipy.special import digamma

        pdf = ss.beta.pdf(x, a, b, loc=1.0, scale=2.0)
        d_log = -(digamma((a, b)[other]) - digamma(a + b))
        want = pdf * d_log
        if math.isinf(want):
            assert slopes[other] == want
        else:
            assert slopes[other] == pytest.approx(want, rel=1e-12)
            assert slopes[other] == pytest.approx(_scipy_shape_slope("beta", "pdf", (a, b), other, x), rel=1e-6)


_BETA_SHAPES = [(0.5, 0.5), (0.5, 2.0), (1.0, 1.0), (2.0, 3.0), (2.0, 0.5)]


def _beta_grads(method, a, b, x, loc=1.0, scale=2.0):
    f = getattr(tl.stats.beta, method)
    g = tl.grad(lambda x, l, s, a, b: f(x, a, b, loc=l, scale=s), argnums=(0, 1, 2, 3, 4))
    return [float(v) for v in g(_t(x), _t(loc), _t(scale), _t(a), _t(b))]


@pytest.mark.parametrize("a, b", _BETA_SHAPES)
def test_beta_distribution_functions_slope_at_the_ends_is_the_density(a, b):
    low, high = ss.beta.pdf(1.0, a, b, loc=1.0, scale=2.0), ss.beta.pdf(3.0, a, b, loc=1.0, scale=2.0)
    for method, sign in (("cdf", 1.0), ("sf", -1.0)):
        gx, gloc, gscale, ga, gb = _beta_grads(method, a, b, 1.0)
        # d/dx = pdf(loc) (inf for a < 1; it was 0), d/dscale = -z pdf = 0 there, the shapes' 0 (the value is 0 or 1)
        assert gx == sign * low and gloc == -gx and gscale == 0.0 and ga == 0.0 and gb == 0.0
        gx, gloc, gscale, ga, gb = _beta_grads(method, a, b, 3.0)
        assert gx == sign * high and gloc == -gx and gscale == -sign * high and ga == 0.0 and gb == 0.0
    # log P ~ a log z - log(a B(a, b)) at loc: scale slope -a / scale, b's -d betaln / db; SciPy a hair inside agrees
    from scipy.special import digamma

    gx, gloc, gscale, ga, gb = _beta_grads("logcdf", a, b, 1.0)
    assert gx == math.inf and gloc == -math.inf and ga == -math.inf
    assert gscale == pytest.approx(-a / 2.0, rel=1e-12)
    assert gb == pytest.approx(digamma(a + b) - digamma(b), rel=1e-12)
    h = 1e-6
    inside = (ss.beta.logcdf(1.0 + 1e-10, a, b, 1.0, 2.0 + h) - ss.beta.logcdf(1.0 + 1e-10, a, b, 1.0, 2.0 - h)) / (
        2 * h
    )
    assert gscale == pytest.approx(inside, abs=1e-4)
    # log(1 - P) ~ b log(1 - z) - log(b B(a, b)) at loc + scale: its slopes are the mirror's
    gx, gloc, gscale, ga, gb = _beta_grads("logsf", a, b, 3.0)
    assert gx == -math.inf and gloc == math.inf and gscale == math.inf and gb == -math.inf
    assert ga == pytest.approx(digamma(a + b) - digamma(a), rel=1e-12)
    for method in ("cdf", "sf", "logcdf", "logsf"):
        for x in (1.0, 3.0):
            assert not any(math.isnan(v) for v in _beta_grads(method, a, b, x))


@pytest.mark.parametrize("a, b", _BETA_SHAPES)
def test_beta_logpdf_scale_slope_at_x_equal_loc(a, b):
    gx, gloc, gscale, ga, gb = _beta_grads("logpdf", a, b, 1.0)
    assert gscale == pytest.approx(-a / 2.0, rel=1e-12)  # -(a - 1) / scale - 1 / scale (it was NaN)
    h = 1e-6
    inside = (ss.beta.logpdf(1.0 + 1e-10, a, b, 1.0, 2.0 + h) - ss.beta.logpdf(1.0 + 1e-10, a, b, 1.0, 2.0 - h)) / (
        2 * h
    )
    assert gscale == pytest.approx(inside, abs=1e-4)
    assert not any(math.isnan(v) for v in (gx, gloc, ga, gb))


def test_beta_values_at_and_near_the_ends_unchanged():
    x = np.array([0.5, 1.0, 1.0 + 1e-12, 2.2, 3.0 - 1e-12, 3.0, 3.5])
    for a, b in _BETA_SHAPES:
        for method in ("pdf", "logpdf", "cdf", "sf", "logcdf", "logsf"):
            got = getattr(tl.stats.beta, method)(_t(x), a, b, loc=1.0, scale=2.0).numpy()
            want = getattr(ss.beta, method)(x, a, b, loc=1.0, scale=2.0)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=0, err_msg=f"{method} {a} {b}")


def test_pdf_jacobian_in_the_shape_at_the_ends_is_diagonal():
    # each output depends on its own shape only: the other rows' zero cotangents give 0, not 0 * inf = NaN
    x = _t([1.0, 1.5, 3.0])
    jac = tl.jacobian(lambda a: tl.stats.beta.pdf(x, a, _t([0.5, 0.5, 0.5]), loc=1.0, scale=2.0))(_t([0.5, 0.5, 0.5]))
    want = np.diag([-math.inf, 0.0, math.inf])  # 0 at 1.5: log z - digamma(a) + digamma(a + b) = 0 for a = b = 1/2
    np.testing.assert_array_equal(jac.numpy(), want)
    jac = tl.jacobian(lambda a: tl.stats.gamma.pdf(_t([1.0, 1.0]), a, loc=1.0))(_t([0.5, 2.0]))
    np.testing.assert_array_equal(jac.numpy(), np.diag([-math.inf, 0.0]))


# ------------------------------------------------------------------ no RuntimeWarning from the backward pass or a trace
_QUIET_CASES = [
    ("gamma", "logpdf", (0.5,), [1.0, 2.0, 3.0]),
    ("gamma", "logcdf", (0.5,), [1.0, 2.0]),
    ("rayleigh", "logpdf", (), [1.0, 2.0]),
    ("halfnorm", "logcdf", (), [1.0, 2.0]),
    ("beta", "logpdf", (0.5, 2.0), [1.0, 1.5, 1.75]),
    ("invgamma", "ppf", (2.0,), [0.0, 0.5, 1.0]),
    ("t", "ppf", (3.0,), [0.0, 0.5]),
]


@pytest.mark.parametrize("dist, method, shapes, xs", _QUIET_CASES)
def test_no_runtime_warning_from_grad_or_traced_calls(dist, method, shapes, xs):
    f = getattr(getattr(tl.stats, dist), method)
    x = _t(xs)
    loc = 1.0 if method not in ("ppf", "isf") else 0.0

    def value(x):
        return f(x, *shapes, loc=loc)

    def total(x):
        return value(x).sum()

    want = getattr(getattr(ss, dist), method)(np.array(xs), *shapes, loc=loc)
    with np.errstate(all="ignore"):
        eager_grad = tl.grad(total)(x).numpy()
    with _no_runtime_warnings():
        np.testing.assert_allclose(tl.function(value)(x).numpy(), want, rtol=1e-12)
        got = tl.grad(total)(x).numpy()
        traced = tl.function(tl.grad(total))(x).numpy()
    np.testing.assert_array_equal(got, eager_grad)
    np.testing.assert_array_equal(traced, eager_grad)
    # and the gradient is SciPy's slope where the method is smooth (a central difference inside)
    for i, v in enumerate(xs):
        if 0.0 < v - loc and method in ("logpdf", "logcdf") and (dist != "beta" or v < 3.0):
            h = 1e-6
            fd = (
                getattr(getattr(ss, dist), method)(v + h, *shapes, loc=loc)
                - getattr(getattr(ss, dist), method)(v - h, *shapes, loc=loc)
            ) / (2 * h)
            assert got[i] == pytest.approx(fd, rel=1e-6, abs=1e-6)


class _no_runtime_warnings:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", RuntimeWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def test_warnings_stay_on_for_graphs_and_tapes_without_stats():
    x = _t([0.0, 1.0])
    with _no_runtime_warnings(), pytest.raises(RuntimeWarning):
        tl.function(lambda x: tl.log(x))(x)
    with _no_runtime_warnings(), pytest.raises(RuntimeWarning):
        tl.grad(lambda x: tl.sqrt(x).sum())(x)

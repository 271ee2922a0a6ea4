"""Adversarial checks of this session's new tl.stats methods and special-function inverses: gradients where a
formula has a ``where`` (the branch not taken, the support's ends, the centre x = loc and q = 1/2) against closed
forms (the density, 1 / the density) and float64 central finite differences, values against SciPy."""

import math

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss

import tensorlib as tl


def _grad(f, v):
    return float(tl.grad(f)(tl.tensor(v, "float64")))


@pytest.mark.parametrize(
    ("call", "reference"),
    [
        (lambda m: m.norm.logpdf(0.5), lambda: ss.norm.logpdf(0.5)),
        (lambda m: m.t.cdf(1.0, 3.0), lambda: ss.t.cdf(1.0, 3.0)),
        (lambda m: m.expon.ppf(0.5, 0.25, 2.0), lambda: ss.expon.ppf(0.5, 0.25, 2.0)),
        (lambda m: m.poisson.logpmf(2, 3.0), lambda: ss.poisson.logpmf(2, 3.0)),
        (lambda m: m.binom.sf(2, 5, 0.3), lambda: ss.binom.sf(2, 5, 0.3)),
    ],
)
def test_every_argument_a_python_number(call, reference):
    # SciPy (and jax.scipy.stats) take plain numbers; every tl.stats method raised "the shapes do not broadcast"
    got = call(tl.stats)
    assert got.shape == () and got.dtype == tl.float64
    assert float(got) == pytest.approx(reference(), rel=1e-13)


@pytest.mark.parametrize(
    ("k", "p", "want"), [(0.0, 0.0, -1.0), (1.0, 1.0, 1.0), (0.0, 0.25, -1 / 0.75), (1.0, 0.25, 4.0)]
)
def test_bernoulli_logpmf_gradient_at_the_ends_of_p(k, p, want):
    # d/dp log(p) = 1/p for k = 1, d/dp log(1 - p) = -1/(1 - p) for k = 0: finite at p = 0 (k = 0) and p = 1 (k = 1)
    assert _grad(lambda p: tl.stats.bernoulli.logpmf(k, p), p) == pytest.approx(want, rel=1e-14)
    assert float(tl.stats.bernoulli.logpmf(k, p)) == pytest.approx(ss.bernoulli.logpmf(k, p), rel=1e-14)


def _check_centre(dist, shape, loc, scale, density):
    """The derivatives of a symmetric distribution's functions at its centre x = loc (q = 1/2): the density, minus
    it, twice it and minus twice it (cdf, sf, logcdf, logsf), 1 / density and minus it (ppf, isf)."""
    for method, factor in (("cdf", 1), ("sf", -1), ("logcdf", 2), ("logsf", -2)):
        f = getattr(dist, method)
        assert _grad(lambda x, f=f: f(x, shape, loc, scale), loc) == pytest.approx(factor * density, rel=1e-14)
    for method, sign in (("ppf", 1), ("isf", -1)):
        f = getattr(dist, method)
        assert _grad(lambda q, f=f: f(q, shape, loc, scale), 0.5) == pytest.approx(sign / density, rel=1e-14)


@pytest.mark.parametrize("df", [0.4, 1.0, 3.0, 1e6, math.inf])
def test_t_distribution_functions_at_the_centre(df):
    # at x = loc the tail formulas went through |z| and a power of it: a NaN gradient (0 * inf) in x, loc, scale
    # and df.  Right: the density (d cdf / dx), minus it (sf), 1 / density (ppf at 1/2), 0 in df (cdf(loc) = 1/2)
    loc, scale = 0.25, 2.0
    density = ss.t.pdf(loc, df, loc, scale)
    t = tl.stats.t
    _check_centre(t, df, loc, scale, density)
    assert _grad(lambda m: t.cdf(loc, df, m, scale), loc) == pytest.approx(-density, rel=1e-14)
    assert _grad(lambda s: t.cdf(loc, df, loc, s), scale) == 0.0
    if df < math.inf:
        assert _grad(lambda d: t.cdf(loc, d, loc, scale), df) == 0.0
        assert _grad(lambda d: t.ppf(0.5, d, loc, scale), df) == 0.0
    # the second derivative at the centre: the density's slope there, 0
    second = tl.grad(tl.grad(lambda x: t.cdf(x, df, loc, scale)))(tl.tensor(loc, "float64"))
    assert float(second) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("df", [0.3, 2.0, 30.0, 1e5, math.inf])
def test_t_values_next_to_the_centre_match_scipy(df):
    # the series used there (1/2 + f0 z (1 - (1 + 1/df) z**2 / 6)) against SciPy's stdtr on both sides of its switch
    z = np.concatenate([s * np.geomspace(1e-300, 1e-2, 60) for s in (-1.0, 1.0)] + [[0.0]])
    t = tl.stats.t
    for method in ("cdf", "sf", "logcdf", "logsf"):
        np.testing.assert_allclose(getattr(t, method)(z, df).numpy(), getattr(ss.t, method)(z, df), rtol=4e-16)
    q = ss.t.cdf(z, df)
    np.testing.assert_allclose(ss.t.cdf(t.ppf(q, df).numpy(), df), q, rtol=4e-16)
    np.testing.assert_allclose(ss.t.sf(t.isf(q, df).numpy(), df), q, rtol=4e-16)
    # finite differences of the cdf across the centre (float64, step 1e-6) against the gradient there
    h = 1e-6
    fd = (ss.t.cdf(h, df) - ss.t.cdf(-h, df)) / (2 * h)
    assert _grad(lambda x: t.cdf(x, df), 0.0) == pytest.approx(fd, rel=1e-9)


@pytest.mark.parametrize("beta", [0.3, 1.0, 1.5, 2.0, 8.0])
def test_gennorm_distribution_functions_at_the_centre(beta):
    # the tail Q(1/beta, |z|**beta)/2 at z = 0: the gradient of |z|**beta (0 there) met Q's infinite one, NaN
    loc, scale = -0.5, 1.5
    density = ss.gennorm.pdf(loc, beta, loc, scale)
    g = tl.stats.gennorm
    _check_centre(g, beta, loc, scale, density)
    assert _grad(lambda b: g.cdf(loc, b, loc, scale), beta) == 0.0
    assert _grad(lambda b: g.ppf(0.5, b, loc, scale), beta) == 0.0
    # values on both sides of the switch to the series
    z = np.concatenate([s * np.geomspace(1e-300, 0.5, 80) for s in (-1.0, 1.0)] + [[0.0]])
    for method in ("cdf", "sf", "logcdf", "logsf"):
        np.testing.assert_allclose(
            getattr(g, method)(z, beta).numpy(), getattr(ss.gennorm, method)(z, beta), rtol=1e-15
        )
    q = ss.gennorm.cdf(z, beta)
    np.testing.assert_allclose(ss.gennorm.cdf(g.ppf(q, beta).numpy(), beta), q, rtol=5e-16)


def test_gennorm_centre_closed_forms():
    # beta = 2 is the normal of scale 1/sqrt(2), beta = 1 the Laplace: their cdf next to 0 and its gradient there
    z = np.concatenate([s * np.geomspace(1e-300, 1e-3, 40) for s in (-1.0, 1.0)] + [[0.0]])
    np.testing.assert_allclose(tl.stats.gennorm.cdf(z, 2.0).numpy(), sc.ndtr(z * math.sqrt(2)), rtol=4e-16)
    np.testing.assert_allclose(tl.stats.gennorm.sf(z, 1.0).numpy(), ss.laplace.sf(z), rtol=4e-16)
    assert _grad(lambda x: tl.stats.gennorm.cdf(x, 2.0), 0.0) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-15)


def test_gennorm_near_the_centre_for_a_large_beta_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    beta, z = 100.0, -1.6e-4  # SciPy's gennorm.cdf gives 0.5 here (its 1 - Q/2 rounds); the series is exact
    density = beta / (2 * mpmath.gamma(1 / beta))
    want = mpmath.mpf(0.5) + mpmath.quad(lambda t: density * mpmath.exp(-(abs(t) ** beta)), [0, z])
    assert float(tl.stats.gennorm.cdf(z, beta)) == pytest.approx(float(want), rel=1e-15)


def test_squareplus_does_not_overflow_where_x_squared_does():
    # x**2 overflows from 1.3e154 (1.8e19 in float32): squareplus(1e200) was inf (right: 1e200) and squareplus(-1e200)
    # 0 (right: b / (4 |x|) = 1e-200, the closed form b / (2 (sqrt(x**2 + b) - x)) for x << 0)
    x = np.array([-1e300, -1e200, -1e10, -2.0, 2.0, 1e10, 1e200, 1e300])
    for b in (4.0, 0.5):
        exact = np.where(x > 0, x + b / (4 * x), b / (4 * np.abs(x)))  # the next terms are below 1e-20 relative
        exact[np.abs(x) < 10] = [
            (v + math.sqrt(v * v + b)) / 2 if v >= 0 else b / (2 * (math.sqrt(v * v + b) - v))
            for v in x[np.abs(x) < 10]
        ]
        np.testing.assert_allclose(tl.nn.squareplus(tl.tensor(x), b).numpy(), exact, rtol=1e-15)
        x32 = np.array([-1e30, -3e19, 3e19, 1e30], np.float32)
        want32 = np.where(x32 > 0, x32.astype(np.float64), b / (4 * np.abs(x32.astype(np.float64))))
        np.testing.assert_allclose(tl.nn.squareplus(tl.tensor(x32), b).numpy(), want32, rtol=1e-6)
    # its derivative (1 + x / sqrt(x**2 + b)) / 2: 1 and b / (4 x**2) there
    got = tl.grad(lambda t: tl.sum(tl.nn.squareplus(t)))(tl.tensor(np.array([-1e10, 1e200]))).numpy()
    np.testing.assert_allclose(got, [1e-20, 1.0], rtol=1e-12)
    # and in b, 1 / (4 sqrt(x**2 + b)) (x >= 0), at b = 0 too
    gb = tl.grad(lambda b: tl.sum(tl.nn.squareplus(tl.tensor(np.array([-1e200, 3.0, 0.5])), b)))(
        tl.tensor(0.0, "float64")
    )
    assert float(gb) == pytest.approx(1 / 4e200 + 1 / 12 + 1 / 2, rel=1e-14)


@pytest.mark.parametrize(
    ("name", "params", "q"),
    [
        ("gammaincinv", (0.5,), 0.0),
        ("gammaincinv", (2.0,), 0.0),
        ("gammaincinv", (2.0,), 1.0),
        ("gammainccinv", (2.0,), 1.0),
        ("gammainccinv", (0.3,), 0.0),
        ("betaincinv", (2.0, 3.0), 1.0),
        ("betaincinv", (0.5, 0.5), 0.0),
        ("betainccinv", (2.0, 3.0), 0.0),
        ("betainccinv", (0.4, 3.0), 1.0),
    ],
)
def test_inverse_gradients_in_the_parameters_at_the_ends(name, params, q):
    # x is the end of the support for every parameter there (SciPy's value is constant: finite differences 0);
    # the implicit-function quotient -(dF/da) / density(x) read 0 / 0 or inf / inf, a NaN gradient
    ours, theirs = getattr(tl.special, name), getattr(sc, name)
    args = [tl.tensor(v, "float64") for v in (*params, q)]
    grads = tl.grad(lambda *a: ours(*a), argnums=tuple(range(len(params))))(*args)
    for i, g in enumerate(grads):
        step = 1e-6 * params[i]
        shifted = [list(params), list(params)]
        shifted[0][i] += step
        shifted[1][i] -= step
        assert theirs(*shifted[0], q) == theirs(*shifted[1], q) == theirs(*params, q)  # 0, 1 or inf for all
        assert float(g) == 0.0
    # beside the ends the rule is unchanged: against finite differences of SciPy
    inner = 1e-3 if q == 0.0 else 1 - 1e-3
    g = tl.grad(lambda a: ours(a, *[tl.tensor(v, "float64") for v in params[1:]], inner))(
        tl.tensor(params[0], "float64")
    )
    step = 1e-6 * params[0]
    fd = (theirs(params[0] + step, *params[1:], inner) - theirs(params[0] - step, *params[1:], inner)) / (2 * step)
    assert float(g) == pytest.approx(fd, rel=1e-6)


def test_quantile_gradients_in_the_shapes_at_q_zero_and_one():
    # beta.ppf(1, a, b) = 1 and gamma.ppf(0, a) = 0 for every shape: their gradients in the shapes are 0, not NaN
    assert _grad(lambda a: tl.stats.beta.ppf(1.0, a, 3.0), 2.0) == 0.0
    assert _grad(lambda b: tl.stats.beta.isf(0.0, 2.0, b), 3.0) == 0.0
    assert _grad(lambda a: tl.stats.gamma.ppf(0.0, a, 1.0, 2.0), 2.5) == 0.0
    assert _grad(lambda df: tl.stats.chi2.isf(1.0, df), 3.0) == 0.0


@pytest.mark.parametrize("kind", ["floating", ("real floating", "ints"), None])
def test_isdtype_names_itself_for_an_unknown_kind(kind):
    # NumPy's message named neither isdtype nor the kinds; None was read as a dtype and answered False
    with pytest.raises(ValueError, match=r"isdtype: kind .* 'real floating'"):
        tl.isdtype(tl.float32, kind)
    assert tl.isdtype(tl.float32, ("real floating", "bool")) and not tl.isdtype(tl.int64, "real floating")


@pytest.mark.parametrize(
    ("name", "shapes", "method", "q"),
    [
        ("uniform", (), "ppf", 0.0),
        ("uniform", (), "ppf", 1.0),
        ("uniform", (), "isf", 0.0),
        ("expon", (), "ppf", 0.0),
        ("expon", (), "isf", 1.0),
        ("pareto", (2.5,), "ppf", 0.0),
        ("pareto", (0.5,), "isf", 1.0),
        ("chi2", (2.0,), "ppf", 0.0),
    ],
)
def test_quantile_gradient_at_a_finite_end(name, shapes, method, q):
    # dx/dq = 1 / pdf(x) at the support's finite end (uniform 1, expon 1, pareto 1 / b, chi2(2) 2, times the scale):
    # the end was a constant there, gradient 0.  Against one-sided finite differences of SciPy
    loc, scale, h = 0.5, 2.0, 1e-7
    theirs = getattr(getattr(ss, name), method)
    fd = (theirs(q + h, *shapes, loc, scale) - theirs(q, *shapes, loc, scale)) / h
    if q == 1.0:
        fd = (theirs(q, *shapes, loc, scale) - theirs(q - h, *shapes, loc, scale)) / h
    ours = getattr(getattr(tl.stats, name), method)
    assert _grad(lambda v: ours(v, *shapes, loc, scale), q) == pytest.approx(fd, rel=1e-5)
    assert float(ours(q, *shapes, loc, scale)) == theirs(q, *shapes, loc, scale)


def test_logsumexp_gradient_where_a_row_keeps_nothing():
    # where=False for a whole row (or b = 0 there): the value is -inf whatever x, so x's gradient there is 0 (JAX's);
    # it was NaN for the whole row (log's 1 / 0 times the zero weights).  Kept rows: softmax of the kept terms
    x = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0], [0.0, 1.0, 2.0]])
    keep = np.array([[True, False, True], [False, False, False], [True, True, True]])
    soft = np.where(keep, np.exp(x), 0.0)
    soft = np.divide(soft, soft.sum(axis=1, keepdims=True), out=np.zeros_like(soft), where=keep.any(axis=1)[:, None])
    for f in (
        lambda v: tl.nn.logsumexp(v, axis=1, where=tl.tensor(keep)),
        lambda v: tl.logsumexp(v, axis=1, b=tl.tensor(keep.astype(np.float64))),
        lambda v: tl.nn.logmeanexp(v, axis=1, where=tl.tensor(keep)),
    ):
        got = tl.grad(lambda v, f=f: tl.sum(f(v)))(tl.tensor(x))  # the sum is -inf; its gradient is not NaN
        np.testing.assert_allclose(got.numpy(), soft, rtol=1e-14, atol=0)
    value = tl.nn.logsumexp(tl.tensor(x), axis=1, where=tl.tensor(keep)).numpy()
    np.testing.assert_allclose(value, sc.logsumexp(x, axis=1, b=keep.astype(float)), rtol=1e-15)
    # the weights' gradient is unchanged: exp(x) / sum, inf where the sum is 0 (d/db log(b e**x) at b = 0)
    gb = tl.grad(lambda b: tl.sum(tl.logsumexp(tl.tensor(x), axis=1, b=b)))(tl.tensor(keep.astype(np.float64)))
    assert np.isinf(gb.numpy()[1]).all() and np.allclose(gb.numpy()[0], np.exp(x[0]) / np.exp(x[0])[keep[0]].sum())


@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_t_quantile_gradient_in_df_at_df_one(method):
    # df = 1 takes the Cauchy quantile's value (exact into the far tails), which has no df: the gradient in df was 0
    # there (t.ppf(0.2, df) at df = 1: 0.755 by finite differences of SciPy)
    q = np.array([1e-10, 0.01, 0.2, 0.49, 0.75, 0.99])
    theirs = getattr(ss.t, method)
    h = 1e-6
    fd = (theirs(q, 1 + h) - theirs(q, 1 - h)) / (2 * h)
    ours = getattr(tl.stats.t, method)
    for qi, want in zip(q, fd):
        assert _grad(lambda d, qi=qi: ours(qi, d), 1.0) == pytest.approx(want, rel=1e-6)
    # the values stay the Cauchy's: tan(pi (q - 1/2)) = -1 / tan(pi q) = 1 / tan(pi (1 - q)), no rounding of q - 1/2
    want = np.where(q < 0.5, -1 / np.tan(np.pi * q), 1 / np.tan(np.pi * (1 - q)))
    np.testing.assert_allclose(tl.stats.t.ppf(q, 1.0).numpy(), want, rtol=1e-13)


@pytest.mark.parametrize("df", [0.3, 2.5, 30.0])
def test_t_log_tails_gradients_where_the_tail_underflows(df):
    # past |z| = 1e150 the log tail is the leading term's log, (df/2) log df - df log|z| - log df - betaln(df/2, 1/2):
    # its derivatives -df / z in x and, in df, that expression's; they were NaN (a log of the underflowed tail)
    z = 1e160
    want_x = -df / z
    h = 1e-6 * df

    def leading(d):
        return 0.5 * d * math.log(d) - d * math.log(z) - math.log(d) - sc.betaln(0.5 * d, 0.5)

    want_df = (leading(df + h) - leading(df - h)) / (2 * h)
    t = tl.stats.t
    assert float(t.logsf(z, df)) == pytest.approx(leading(df), rel=1e-13)
    assert _grad(lambda x: t.logsf(x, df), z) == pytest.approx(want_x, rel=1e-12)
    assert _grad(lambda x: t.logcdf(x, df), -z) == pytest.approx(-want_x, rel=1e-12)
    assert _grad(lambda d: t.logsf(z, d), df) == pytest.approx(want_df, rel=1e-6)
    assert _grad(lambda d: t.logcdf(-z, d), df) == pytest.approx(want_df, rel=1e-6)

"""tl.stats, the statsfix round: what the statsplus note left open (the log-tail ops batched under vmap, the lower
gamma log tail for a huge shape, vonmises' distribution function, multinomial with probabilities that do not sum to
1) and an attack on the ten newest families (truncnorm, gumbel_r, gumbel_l, lognorm, weibull_min, halfnorm, rayleigh,
invgamma, f, loggamma) and every family's log tails.

References: scipy.stats in float64 where SciPy is accurate; closed forms, SciPy's special functions and mpmath
(importorskip) where SciPy underflows or loses digits; float64 central differences for gradients; a Python loop for
vmap.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import tensorlib as tl
from tests._helpers import central_differences


# ------------------------------------------------------------------ the log-tail ops under vmap
def _calls(f, *args):
    """``{op type: kernel calls}`` while ``f(*args)`` runs."""
    with tl.profile() as prof:
        f(*args)
    counts = {}
    for event in prof.events:
        counts[event.op_type] = counts.get(event.op_type, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("op_type", "f", "x"),
    [
        ("LogIgammaFactor", lambda x: tl.stats.gamma.logsf(x, 2.5), [800.0, 900.0, 1500.0, 2.0, 3000.0]),
        ("LogIgammaFactor", lambda x: tl.stats.poisson.logcdf(x, 900.0), [1.0, 5.0, 20.0, 899.0, 40.0]),
        ("LogBetaincFraction", lambda x: tl.stats.beta.logcdf(x, 3.0, 2.0), [1e-200, 1e-150, 1e-300, 0.3, 1e-250]),
    ],
)
def test_log_tail_ops_run_once_under_vmap_and_agree_with_a_loop(op_type, f, x):
    x = tl.tensor(np.array(x))
    batched = tl.vmap(f)(x).numpy()
    loop = np.array([float(f(x[i])) for i in range(x.shape[0])])
    np.testing.assert_allclose(batched, loop, rtol=1e-14)
    assert _calls(tl.vmap(f), x)[op_type] == 1
    grads = tl.vmap(tl.grad(f))(x).numpy()
    np.testing.assert_allclose(grads, [float(tl.grad(f)(x[i])) for i in range(x.shape[0])], rtol=1e-12)


def test_log_betainc_fraction_gradient_op_runs_once_under_vmap():
    f = tl.grad(lambda a: tl.stats.beta.logcdf(1e-200, a, 2.0))
    a = tl.tensor(np.array([3.0, 4.0, 5.5]))
    batched = tl.vmap(f)(a).numpy()
    np.testing.assert_allclose(batched, [float(f(a[i])) for i in range(3)], rtol=1e-13)
    assert _calls(tl.vmap(f), a)["LogBetaincFractionGrad"] == 1


# ------------------------------------------------------------------ the gamma log tails for a huge shape
def _log_gamma_tail_by_quadrature(a, x, upper):
    """``log P(a, x)`` (``x`` below the mode) or ``log Q(a, x)`` (above), by mpmath's quadrature of ``t**(a - 1)
    e**-t`` from ``x`` outward, on points spaced by the integrand's decay length (mpmath's own gammainc does not
    converge from a ~ 1e8)."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40):
        a, x = mp.mpf(a), mp.mpf(x)

        def g(t):
            return (a - 1) * mp.log(t) - t

        length = 1 / abs((a - 1) / x - 1)
        steps = [length * 10**k for k in range(-1, 12)]
        if upper:
            points = [x] + [x + s for s in steps if s < 1e6 * x] + [mp.inf]
        else:
            points = [0] + [x - s for s in steps if s < x][::-1] + [x]
        integral = mp.quad(lambda t: mp.exp(g(t) - g(x)), points)
        return float(g(x) + mp.log(integral) - mp.loggamma(a))


def _huge_shape_points(sds):
    return [(a, a - k * math.sqrt(a)) for a in (1e8, 1e10, 1e12, 1e14, 1e16) for k in sds]


@pytest.mark.parametrize(("a", "x"), _huge_shape_points((39.0, 60.0, 1000.0)) + [(1e12, 5e11), (1e14, 3.0)])
def test_lower_gamma_log_tail_for_a_huge_shape_matches_quadrature(a, x):
    # the series' term cap: gamma.logcdf(1e12 - 39e6, 1e12) was NaN for -765.102930117182 (mpmath)
    want = _log_gamma_tail_by_quadrature(a, x, upper=False)
    got = tl.stats.gamma.logcdf(tl.tensor(np.float64(x)), np.float64(a)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-12 * max(1.0, abs(want) / 1e3))


def test_lower_gamma_log_tail_for_a_huge_shape_matches_its_series_summed_in_numpy():
    # log P = log S + a log x - x - gammaln(a + 1), S = sum_n prod_k x / (a + k) (1.2e6 terms here, summed as logs),
    # the prefactor as -a (d - log1p(d)) - stirling(a) - log(2 pi a) / 2 with d = x / a - 1 (its series: d is 4e-5)
    a = 1e12
    x = a - 40.0 * math.sqrt(a)
    k = np.arange(1.0, 2_000_001.0)
    log_terms = np.concatenate([[0.0], np.cumsum(np.log1p((x - a - k) / (a + k)))])
    log_s = log_terms.max() + np.log(np.exp(log_terms - log_terms.max()).sum())
    d = (x - a) / a
    half_eta_square = d * d / 2 - d**3 / 3 + d**4 / 4
    want = log_s - a * half_eta_square - 1 / (12 * a) - 0.5 * math.log(2 * math.pi * a)
    got = tl.stats.gamma.logcdf(tl.tensor(np.float64(x)), np.float64(a)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-8)


@pytest.mark.parametrize(("a", "x"), [(a, 2 * a - x) for a, x in _huge_shape_points((39.0, 60.0))])
def test_upper_gamma_log_tail_for_a_huge_shape_matches_quadrature(a, x):
    # x + 1 - a in the continued fraction rounded x + 1 (gamma.logsf(1e16 + 39e8, 1e16) was 2.6e-10 off)
    want = _log_gamma_tail_by_quadrature(a, x, upper=True)
    got = tl.stats.gamma.logsf(tl.tensor(np.float64(x)), np.float64(a)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_lower_gamma_log_tail_for_a_huge_shape_every_family_and_gradients():
    a = np.array([1e12, 1e14, 1e16])
    x = a - 40.0 * np.sqrt(a)
    gamma = tl.stats.gamma.logcdf(tl.tensor(x), tl.tensor(a)).numpy()
    assert np.isfinite(gamma).all() and (gamma < -800).all() and (gamma > -810).all()
    # the same tail through the families that share it (poisson.logsf(k, mu) = log P(k + 1, mu))
    np.testing.assert_allclose(tl.stats.chi2.logcdf(tl.tensor(2 * x), tl.tensor(2 * a)).numpy(), gamma, rtol=1e-14)
    np.testing.assert_allclose(tl.stats.poisson.logsf(tl.tensor(a - 1), tl.tensor(x)).numpy(), gamma, rtol=1e-14)
    for family, y, back in [("invgamma", 1 / x, 1 / (1 / x)), ("loggamma", np.log(x), np.exp(np.log(x)))]:
        got = getattr(tl.stats, family).logsf if family == "invgamma" else tl.stats.loggamma.logcdf
        want = tl.stats.gamma.logcdf(tl.tensor(back), tl.tensor(a)).numpy()  # at the rounded point: steep in x
        np.testing.assert_allclose(got(tl.tensor(y), tl.tensor(a)).numpy(), want, rtol=1e-13, err_msg=family)
    # gradients in x and a: float64 central differences (steps of 1e-3 standard deviations; the values are exact to
    # 1e-13 absolute) and d log P / dx = density / P
    f = lambda x, a: tl.stats.gamma.logcdf(x, a)  # noqa: E731
    gx, ga = tl.grad(lambda x, a: f(x, a).sum(), argnums=(0, 1))(tl.tensor(x), tl.tensor(a))
    h = 1e-3 * np.sqrt(a)
    np.testing.assert_allclose(gx.numpy(), (f(x + h, a).numpy() - f(x - h, a).numpy()) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(ga.numpy(), (f(x, a + h).numpy() - f(x, a - h).numpy()) / (2 * h), rtol=1e-6)
    log_density = tl.stats.gamma.logpdf(tl.tensor(x), tl.tensor(a)).numpy()
    # (the prefactor's and the series' derivatives, each near 1, sum to 4e-7 at a = 1e16: 1e-10 relative is kept)
    np.testing.assert_allclose(gx.numpy(), np.exp(log_density - gamma), rtol=1e-8)

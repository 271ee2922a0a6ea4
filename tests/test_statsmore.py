"""tl.stats, the statsmore round: betabinom's distribution function and quantiles (a sum over the counts as long as
the data say), and what the statsfix round left open.

References: scipy.stats in float64, mpmath sums (importorskip), closed forms, float64 central differences of SciPy.
"""

import numpy as np
import pytest
import scipy.stats as ss

import tensorlib as tl

F64 = "float64"


# ------------------------------------------------------------------ betabinom: cdf, sf, their logs, quantiles
def _betabinom_tails(k, n, a, b):
    """P(K <= k) and P(K > k), each the sum of SciPy's masses over its own counts (SciPy's sf is 1 - cdf: no digits
    left in a small upper tail)."""
    pmf = ss.betabinom.pmf(np.arange(n + 1), n, a, b)
    cdf = np.array([np.nan if v != v else pmf[: int(np.clip(np.floor(v) + 1, 0, n + 1))].sum() for v in k])
    sf = np.array([np.nan if v != v else pmf[int(np.clip(np.floor(v) + 1, 0, n + 1)) :].sum() for v in k])
    return cdf, sf


@pytest.mark.parametrize(
    "n, a, b, rtol",
    [(10.0, 2.0, 3.0, 1e-12), (10.0, 0.5, 0.5, 1e-12), (100.0, 0.3, 7.0, 1e-12), (10000.0, 1e-3, 1e-3, 1e-10)]
    + [(10000.0, 1e6, 1e6, 1e-8)],  # SciPy's masses there lose 2e-9 (log-betas of -1.4e6 subtracted): mpmath below
)
def test_betabinom_tails_match_scipy(n, a, b, rtol):
    k = np.array([-1.0, 0.0, 2.5, 3.0, n // 2, n // 2 - 1, n - 1, n, n + 1, np.nan, np.inf, -np.inf])
    cdf, sf = _betabinom_tails(k, n, a, b)
    np.testing.assert_allclose(cdf[:-3], ss.betabinom.cdf(k, n, a, b)[:-3], rtol=1e-7, atol=1e-15)  # the reference
    with np.errstate(divide="ignore", invalid="ignore"):
        logcdf = np.where(cdf > 0.5, np.log1p(-sf), np.log(cdf))  # the log of a value near 1 from its complement
        logsf = np.where(sf > 0.5, np.log1p(-cdf), np.log(sf))
    wanted = {"cdf": np.minimum(cdf, 1.0), "sf": np.minimum(sf, 1.0), "logcdf": logcdf, "logsf": logsf}
    for method, want in wanted.items():
        got = getattr(tl.stats.betabinom, method)(k, n, a, b).numpy()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, err_msg=method)
    for q in (0.0, 0.1, 0.5, 0.9, 1.0):
        assert float(tl.stats.betabinom.ppf(q, n, a, b)) == ss.betabinom.ppf(q, n, a, b)
        assert float(tl.stats.betabinom.isf(q, n, a, b)) == ss.betabinom.isf(q, n, a, b)


def test_betabinom_far_tail_keeps_its_digits():
    # P(K > 0) of a mass piled at 0 with a tiny complement: SciPy's sf is 1 - cdf; here the sum of the masses from 1 on
    got = float(tl.stats.betabinom.sf(0.0, 5.0, 1e-9, 1.0))
    want = sum(ss.betabinom.pmf(j, 5, 1e-9, 1.0) for j in range(1, 6))
    assert got == pytest.approx(want, rel=1e-12)


def test_betabinom_invalid_parameters_are_nan():
    got = tl.stats.betabinom.cdf(
        3.0, np.array([-1.0, 2.5, np.inf, 10.0, 10.0, 10.0]), 2.0, np.array([3.0] * 3 + [0, -1, np.nan])
    )
    assert np.isnan(got.numpy()).all()


@pytest.mark.parametrize("shared", [False, True])  # one count, or several of one distribution (read off one sum)
@pytest.mark.parametrize("method", ["cdf", "sf"])
@pytest.mark.parametrize("k, n, a, b", [(3.0, 10.0, 2.0, 3.0), (0.0, 10.0, 0.5, 0.5), (30.0, 100.0, 0.3, 7.0)])
def test_betabinom_tail_gradients_and_hessians_match_central_differences(shared, method, k, n, a, b):
    method_ = getattr(tl.stats.betabinom, method)
    f = (lambda k, n, a, b: tl.sum(method_(np.array([k, k]), n, a, b)) / 2.0) if shared else method_
    ref = getattr(ss.betabinom, method)
    x = tl.tensor(np.array([a, b]), F64)
    g = tl.grad(lambda ab: f(k, n, ab[0], ab[1]))(x).numpy()
    h = 1e-6
    want = [
        (ref(k, n, a + h, b) - ref(k, n, a - h, b)) / (2 * h),
        (ref(k, n, a, b + h) - ref(k, n, a, b - h)) / (2 * h),
    ]
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-9)
    hess = tl.hessian(lambda ab: f(k, n, ab[0], ab[1]))(x).numpy()
    grad = lambda ab: tl.grad(lambda t: f(k, n, t[0], t[1]))(tl.tensor(ab, F64)).numpy()
    h = 1e-4
    fd = np.stack([(grad(np.array([a, b]) + h * e) - grad(np.array([a, b]) - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(hess, fd, rtol=1e-6, atol=1e-8)
    assert hess[0, 1] == pytest.approx(hess[1, 0], rel=1e-12)


def _mp_betabinom_cdf(mp, n, k, a, b):
    lb = mp.log(mp.beta(a, b))
    c = mp.loggamma(n + 1)
    terms = (
        c - mp.loggamma(j + 1) - mp.loggamma(n - j + 1) + mp.log(mp.beta(j + a, n - j + b)) - lb for j in range(k + 1)
    )
    return mp.fsum(mp.exp(t) for t in terms)


def test_betabinom_cdf_with_huge_shapes_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    for n, k, a, b in [(600, 300, 1e6, 1e6), (600, 290, 1e6, 2e6), (300, 100, 1e-3, 1e-3)]:
        want = float(_mp_betabinom_cdf(mp, n, k, mp.mpf(a), mp.mpf(b)))
        assert float(tl.stats.betabinom.cdf(float(k), float(n), a, b)) == pytest.approx(want, rel=1e-11)


def test_betabinom_cdf_gradient_for_a_long_sum_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    n, k, b = 600, 300, mp.mpf("0.01")

    def cdf(a):
        return _mp_betabinom_cdf(mp, n, k, a, b)

    got = tl.grad(lambda a: tl.stats.betabinom.cdf(float(k), float(n), a, 0.01))(tl.tensor(0.02, F64))
    assert float(got) == pytest.approx(float(mp.diff(cdf, mp.mpf("0.02"))), rel=1e-10)


def test_betabinom_tails_traced_float32_ints_and_vmap():
    k = np.array([1.0, 3.0, 7.0])
    eager = tl.stats.betabinom.cdf(k, 10.0, 2.0, 3.0)
    traced = tl.function(lambda k, a: tl.stats.betabinom.cdf(k, 10.0, a, 3.0))(k, np.array(2.0))
    np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-15)
    np.testing.assert_allclose(eager.numpy(), ss.betabinom.cdf(k, 10, 2, 3), rtol=1e-13)
    single = tl.stats.betabinom.sf(k.astype(np.float32), 10, np.float32(2.0), np.float32(3.0))
    assert single.dtype == tl.float32
    np.testing.assert_allclose(single.numpy(), ss.betabinom.sf(k, 10, 2, 3), rtol=1e-6)
    ints = tl.stats.betabinom.cdf(np.array([1, 3]), np.array([10, 10]), np.array([2, 2]), np.array([3, 3]))
    assert ints.dtype == tl.float64
    batched = tl.vmap(lambda a: tl.stats.betabinom.cdf(3.0, 10.0, a, 3.0))(tl.tensor([1.0, 2.0], F64))
    np.testing.assert_allclose(batched.numpy(), ss.betabinom.cdf(3, 10, [1.0, 2.0], 3), rtol=1e-13)
    traced_grad = tl.function(lambda a: tl.grad(lambda a: tl.stats.betabinom.sf(3.0, 10.0, a, 3.0))(a))
    eager_grad = tl.grad(lambda a: tl.stats.betabinom.sf(3.0, 10.0, a, 3.0))
    assert float(traced_grad(tl.tensor(2.0, F64))) == pytest.approx(float(eager_grad(tl.tensor(2.0, F64))), rel=1e-14)


def test_betabinom_tails_refuse_n_gradient_and_third_order():
    with pytest.raises(TypeError, match="BetabinomTail: .* not differentiable in the number of trials n"):
        tl.grad(lambda n: tl.stats.betabinom.cdf(3.0, n, 2.0, 3.0))(tl.tensor(10.0, F64))
    third = tl.grad(tl.grad(tl.grad(lambda a: tl.stats.betabinom.cdf(3.0, 10.0, a, 3.0))))
    with pytest.raises(LookupError, match="BetabinomTail: the derivatives .* of order three"):
        third(tl.tensor(2.0, F64))


def test_betabinom_quantiles_invert_its_own_tails():
    # near q = 1 and 0 SciPy's generic search is off (ppf(1 - 1e-16, 10000, 2, 3) is 9999, where cdf(9999) = 1 - 2.4e-11)
    q = np.array([1e-300, 1e-17, 1e-3, 0.25, 0.5, 0.75, 1 - 1e-12, 1 - 1e-16])
    for n, a, b in [(10000.0, 2.0, 3.0), (1000.0, 1e6, 1e6), (1000.0, 0.01, 0.02)]:
        ppf = tl.stats.betabinom.ppf(q, n, a, b).numpy()
        assert np.all(tl.stats.betabinom.cdf(ppf, n, a, b).numpy() >= q)
        assert np.all(tl.stats.betabinom.cdf(ppf - 1, n, a, b).numpy() < q)
        isf = tl.stats.betabinom.isf(q, n, a, b).numpy()
        assert np.all(tl.stats.betabinom.sf(isf, n, a, b).numpy() <= q)
        assert np.all(tl.stats.betabinom.sf(isf - 1, n, a, b).numpy() > q)
    assert float(tl.stats.betabinom.ppf(1 - 1e-16, 10000.0, 2.0, 3.0)) == 10000.0


def test_betabinom_median_and_interval_match_scipy():
    assert float(tl.stats.betabinom.median(10.0, 2.0, 3.0)) == ss.betabinom.median(10, 2, 3)
    low, high = tl.stats.betabinom.interval(0.9, 50.0, 0.7, 2.0)
    assert (float(low), float(high)) == ss.betabinom.interval(0.9, 50, 0.7, 2.0)


# ------------------------------------------------------------------ a saved graph keeps Graph.quiet
def test_a_loaded_graph_of_stats_stays_quiet_and_old_files_load(tmp_path):
    import json
    import warnings

    f = tl.function(lambda x: tl.stats.uniform.logcdf(x))
    x = np.array([0.0, 0.5, -1.0])
    f.save(tmp_path / "g.json", x)
    loaded = tl.graph.load(tmp_path / "g.json")
    assert loaded.quiet
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log(0) = -inf is logcdf's value at the lower end: no RuntimeWarning
        np.testing.assert_array_equal(loaded(x).numpy(), [-np.inf, np.log(0.5), -np.inf])
    doc = json.loads((tmp_path / "g.json").read_text())
    del doc["quiet"]  # a file from before the key: loads, not quiet
    (tmp_path / "g.json").write_text(json.dumps(doc))
    assert not tl.graph.load(tmp_path / "g.json").quiet
    doc["quiet"] = "yes"
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(tl.graph.GraphFormatError, match="'quiet'"):
        tl.graph.load(tmp_path / "g.json")
    plain = tl.function(lambda x: x * 2.0)
    plain.save(tmp_path / "p.json", x)
    assert "quiet" not in json.loads((tmp_path / "p.json").read_text())
    assert not tl.graph.load(tmp_path / "p.json").quiet


# ------------------------------------------------------------------ vonmises and wrapcauchy: mean, var, std, stats, entropy
def _mp_moments(mp, density, low, high):
    """E z**2 and the excess kurtosis E z**4 / (E z**2)**2 - 3 of a density symmetric about 0 on [low, high]."""
    points = [low, (low + high) / 2, high]
    total = mp.quad(density, points)
    m2 = mp.quad(lambda x: x * x * density(x), points) / total
    m4 = mp.quad(lambda x: x**4 * density(x), points) / total
    return float(m2), float(m4 / m2**2 - 3)


def test_vonmises_summaries_match_scipy_and_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    vm = tl.stats.vonmises
    for kappa in (0.0, 0.5, 2.0):  # where SciPy's integrals are accurate
        got = [float(v) for v in vm.stats(kappa, loc=0.3, scale=2.0, moments="mvsk")]
        np.testing.assert_allclose(got, ss.vonmises.stats(kappa, loc=0.3, scale=2.0, moments="mvsk"), atol=1e-13)
        assert float(vm.entropy(kappa, scale=2.0)) == pytest.approx(ss.vonmises.entropy(kappa, scale=2.0), rel=1e-14)
        assert float(vm.std(kappa)) == pytest.approx(ss.vonmises.std(kappa), rel=1e-13)
    # SciPy's quadrature is 4e-5 off by kappa = 50 (its variance 0.0202037 for 0.0202045): mpmath's
    for kappa in (50.0, 299.0, 301.0, 1000.0, 5000.0):
        k = mp.mpf(kappa)
        m2, kurt = _mp_moments(mp, lambda x: mp.exp(k * (mp.cos(x) - 1)), -mp.pi, mp.pi)
        assert float(vm.var(kappa)) == pytest.approx(m2, rel=1e-11)
        assert float(vm.stats(kappa, moments="k")) == pytest.approx(kurt, rel=1e-6)
        assert float(vm.mean(kappa, loc=0.25)) == 0.25
        assert float(vm.entropy(kappa)) == pytest.approx(ss.vonmises.entropy(kappa), rel=1e-12)


def test_wrapcauchy_summaries_match_scipy_and_closed_forms():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    wc = tl.stats.wrapcauchy
    for c in (0.01, 0.5, 0.9, 0.999):
        got = [float(v) for v in wc.stats(c, loc=0.5, scale=1.5, moments="mvsk")]
        np.testing.assert_allclose(
            got, ss.wrapcauchy.stats(c, loc=0.5, scale=1.5, moments="mvsk"), rtol=1e-12, atol=1e-14
        )
        assert float(wc.entropy(c, scale=1.5)) == pytest.approx(ss.wrapcauchy.entropy(c, scale=1.5), rel=1e-14)
        cm = mp.mpf(c)
        m2, kurt = _mp_moments(mp, lambda y: 1 / (1 + cm * cm + 2 * cm * mp.cos(y)), -mp.pi, mp.pi)
        assert float(wc.var(c)) == pytest.approx(m2, rel=1e-14)
        assert float(wc.stats(c, moments="k")) == pytest.approx(kurt, rel=1e-11)
    assert np.isnan(wc.var(np.array([0.0, 1.0, -0.5])).numpy()).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_circular_summaries_gradients_traced_and_dtypes(dtype):
    h = 1e-6
    for method, family, value in [
        ("var", "vonmises", 0.7),
        ("entropy", "vonmises", 4.0),
        ("var", "wrapcauchy", 0.3),
        ("entropy", "wrapcauchy", 0.6),
    ]:
        f = getattr(getattr(tl.stats, family), method)
        ref = getattr(getattr(ss, family), method)
        x = tl.tensor(value, dtype)
        got = tl.grad(f)(x)
        assert got.dtype == np.dtype(dtype)
        want = (ref(value + h) - ref(value - h)) / (2 * h)
        assert float(got) == pytest.approx(want, rel=1e-6 if dtype == "float64" else 1e-4)
        traced = tl.function(lambda x: f(x))(x)
        assert float(traced) == pytest.approx(float(f(x)), rel=1e-15) and traced.dtype == np.dtype(dtype)
    assert tl.stats.vonmises.var(2).dtype == tl.float64 and tl.stats.vonmises.var(np.array([2])).dtype == tl.float64
    kurt = tl.grad(lambda k: tl.stats.vonmises.stats(k, moments="k"))(tl.tensor(1000.0, "float64"))
    assert float(kurt) == pytest.approx(-1 / 1000.0**2 - 4 / 1000.0**3, rel=1e-4)  # d/dk of 1/k + 2/k**2 + ...


def test_vonmises_quantile_computes_kappas_share_once():
    # each of the search's ~20 evaluations took the 80-step Bessel recurrence and 30 incomplete gammas again: 25729
    # op calls for one scalar ppf (1 s); kappa's share now once (1786).  A count, not a timing.
    with tl.profile() as prof:
        z = tl.stats.vonmises.ppf(0.3, 2.0)
    assert len(prof.events) < 4000
    assert float(tl.stats.vonmises.cdf(z, 2.0)) == pytest.approx(0.3, rel=1e-14)
    assert float(z) == pytest.approx(ss.vonmises.ppf(0.3, 2.0), rel=1e-10)
    q = np.array([1e-10, 0.1, 0.5, 0.9, 1 - 1e-10])
    for kappa in (0.5, 5.0, 49.0, 60.0):
        z = tl.stats.vonmises.ppf(q, kappa)
        np.testing.assert_allclose(tl.stats.vonmises.cdf(z, kappa).numpy(), q, rtol=1e-9, atol=1e-16)
        dz = tl.jacobian(lambda k: tl.stats.vonmises.ppf(q, k))(tl.tensor(kappa, F64)).numpy()
        h = 1e-6 * kappa
        ppf = tl.stats.vonmises.ppf  # SciPy's is a normal approximation from kappa = 50 (3e-6 off)
        fd = (ppf(q[1:-1], kappa + h).numpy() - ppf(q[1:-1], kappa - h).numpy()) / (2 * h)
        np.testing.assert_allclose(dz[1:-1], fd, rtol=1e-5, atol=1e-9)


# ------------------------------------------------------------------ limits at the ends: Hessians and slopes
def test_gamma_pdf_hessian_in_the_shape_at_the_support_end_is_the_limit():
    # at x = loc, a < 1: pdf = z**(a - 1) e**-z / Gamma(a) -> inf, d/da -> -inf, d2/da2 = pdf ((log z - psi)**2 - psi1)
    # -> +inf; the Hessian was inf * inf + inf * (-polygamma(1, a)) = NaN
    x = tl.tensor(1.0, F64)
    for a in (0.5, 0.9):
        f = lambda a: tl.stats.gamma.pdf(x, a, loc=1.0)
        assert float(tl.grad(f)(tl.tensor(a, F64))) == -np.inf
        assert float(tl.hessian(f)(tl.tensor(a, F64))) == np.inf
        assert float(tl.function(tl.hessian(f))(tl.tensor(a, F64))) == np.inf
    # the limit from inside: the Hessian grows without bound as x -> loc (float64 central differences of SciPy)
    h = 1e-4
    for z in (1e-3, 0.5):
        got = float(tl.hessian(lambda a: tl.stats.gamma.pdf(tl.tensor(1.0 + z, F64), a, loc=1.0))(tl.tensor(0.5, F64)))
        pdf = lambda a: ss.gamma.pdf(1.0 + z, a, loc=1.0)
        assert got == pytest.approx((pdf(0.5 + h) - 2 * pdf(0.5) + pdf(0.5 - h)) / h**2, rel=1e-5)


def test_poisson_entropy_slope_at_zero_is_the_limit():
    # H(mu) = mu - mu log mu + O(mu**2): the slope -log mu -> +inf at 0; it was 0
    mu = tl.tensor([0.0, 1e-10, 0.5, 3.0], F64)
    got = tl.grad(lambda m: tl.sum(tl.stats.poisson.entropy(m)))(mu).numpy()
    assert got[0] == np.inf
    h = 1e-7
    fd = (
        ss.poisson.entropy(mu.numpy()[1:] + h * mu.numpy()[1:])
        - ss.poisson.entropy(mu.numpy()[1:] - h * mu.numpy()[1:])
    ) / (2 * h * mu.numpy()[1:])
    np.testing.assert_allclose(got[2:], fd[1:], rtol=1e-5)
    # SciPy's entropy drops the mu of mu - mu log mu for a tiny mu (its slope 22.03): the closed form's -log mu
    assert got[1] == pytest.approx(-np.log(1e-10), rel=1e-9)
    np.testing.assert_array_equal(tl.stats.poisson.entropy(mu).numpy()[:1], [0.0])
    traced = tl.function(lambda m: tl.grad(lambda m: tl.sum(tl.stats.poisson.entropy(m)))(m))(mu)
    assert traced.numpy()[0] == np.inf
    assert float(tl.grad(tl.stats.poisson.entropy)(tl.tensor(0.0, "float32"))) == np.inf

"""Helpers shared by the adversarial test files: run a function eagerly or traced, compare a result with
NumPy's exactly (value, shape and dtype), and central differences in float64 as the gradient reference."""

import contextlib

import numpy as np
import pytest

import tensorlib as tl

MODES = ["eager", "traced"]


def run_in_mode(mode, f, *args):
    """``f`` of ``args`` (made tensors), eagerly or through ``tl.function``."""
    args = [tl.tensor(a) for a in args]
    return f(*args) if mode == "eager" else tl.function(f)(*args)


def assert_same(got, want):
    """The tensor ``got`` holds exactly the array ``want``: shape, dtype and every value."""
    got, want = got.numpy(), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def unless_underflowed(method, got, want):
    """SciPy's values ``want``, but ``got`` where SciPy's ``logcdf``/``logsf`` is the log of an underflowed tail, -inf
    (``got`` must be below -690 there; those values are checked against mpmath and closed forms in
    tests/test_statsplus.py)."""
    if method not in ("logcdf", "logsf"):
        return want
    underflowed = (np.asarray(want) == -np.inf) & np.isfinite(got)
    assert (got[underflowed] < -690).all(), (method, got[underflowed])
    return np.where(underflowed, got, want)


def at_infinity_the_limit(name, method, x, want):
    """SciPy's values ``want``, but the density's limit 0 (-inf for ``logpdf``) at an infinite ``x`` where SciPy's
    formula reads inf - inf (NaN: chi2, weibull_min, gamma, f, loggamma at +inf); tl.stats gives the limit there, as
    SciPy's own norm and rayleigh do (vonmises, periodic, has none: NaN)."""
    if method not in ("pdf", "logpdf") or name == "vonmises":
        return want
    limit = 0.0 if method == "pdf" else -np.inf
    return np.where(np.isinf(x) & np.isnan(want), limit, want)


def assert_methods_match_scipy(name, shapes, loc, scale, x, q, rtol):
    """Every method of ``tl.stats.<name>`` (``q`` for the quantiles, ``x`` for the rest) equals SciPy's, within
    ``rtol``, but where SciPy's log tail underflowed (``unless_underflowed``) and its density at an infinite ``x``
    is NaN (``at_infinity_the_limit``)."""
    import scipy.stats

    ours, theirs = getattr(tl.stats, name), getattr(scipy.stats, name)
    for method in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"):
        arg = q if method in ("ppf", "isf") else x
        got = getattr(ours, method)(tl.tensor(arg), *shapes, loc, scale).numpy()
        want = unless_underflowed(method, got, getattr(theirs, method)(arg, *shapes, loc, scale))
        want = at_infinity_the_limit(name, method, np.broadcast_to(arg, np.shape(want)), want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, err_msg=method)


def central_differences(f, x, eps=1e-6):
    """Gradient of the float64 NumPy function ``f`` (array -> scalar) at ``x`` by central differences."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def assert_integer_input_not_differentiable(fn, x):
    """Differentiating ``sum(fn(x))`` w.r.t. the int64 array ``x`` raises DESIGN §6's TypeError, through
    ``tl.grad`` and through a tape that watches it."""
    with pytest.raises(TypeError, match=r"^tl.grad: cannot differentiate with respect to argument 0 of dtype int64"):
        tl.grad(lambda t: tl.sum(fn(t)))(x)
    with tl.GradientTape() as tape:
        t = tl.tensor(x)
        tape.watch(t)
        y = tl.sum(fn(t))
    with pytest.raises(TypeError, match=r"cannot differentiate with respect to source 0 of dtype int64"):
        tape.gradient(y, t)


@contextlib.contextmanager
def local_cluster(n_workers, memory_limit, timeout=60):
    """A dask ``Client`` of a LocalCluster of ``n_workers`` one-thread worker processes on loopback, closed
    on exit (callers skip where ``distributed`` is not installed)."""
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit=memory_limit,
        silence_logs=50,
    )
    with distributed.Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(n_workers, timeout=timeout)
        yield client
    cluster.close(timeout=timeout)

"""jax.nn's functions at ``tl.nn`` (identity, log1mexp, sparse_plus, sparse_sigmoid, squareplus, logmeanexp,
logsumexp, standardize, one_hot, hard_silu, soft_sign): values against NumPy formulas evaluated in float64 (and
exact closed forms in the tails), gradients against float64 finite differences (``check_grads``), traced ==
eager, and jax.nn itself (importorskip)."""

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(1)


def _log1mexp_reference(x):
    """log(1 - e^-x) through math.fsum-free float64 pieces, each exact where it is used."""
    return np.array([math.log(-math.expm1(-v)) if v < 1 else math.log1p(-math.exp(-v)) for v in x])


def test_log1mexp_values_in_both_tails_and_gradient():
    x = np.array([1e-300, 1e-12, 1e-5, 0.3, math.log(2.0), 0.7, 5.0, 40.0, 800.0])
    got = tl.nn.log1mexp(tl.tensor(x)).numpy()
    np.testing.assert_allclose(got, _log1mexp_reference(x), rtol=1e-15)
    # float32 keeps its digits too (the naive log(1 - exp(-x)) is -inf at 1e-8 and 0 at 20)
    x32 = np.array([1e-8, 1e-3, 20.0], dtype=np.float32)
    np.testing.assert_allclose(
        tl.nn.log1mexp(tl.tensor(x32)).numpy(), _log1mexp_reference(x32.astype(float)), rtol=3e-7
    )
    # d/dx = 1 / expm1(x), finite everywhere x > 0 (no NaN from the branch not taken)
    g = tl.grad(lambda t: tl.sum(tl.nn.log1mexp(t)))(tl.tensor(x))
    np.testing.assert_allclose(g.numpy(), 1.0 / np.expm1(x), rtol=1e-14)
    check_grads(tl.nn.log1mexp, (tl.tensor(RNG.uniform(0.1, 3, 6)),), order=2)
    assert tl.nn.log1mexp(tl.tensor([0.0])).numpy()[0] == -np.inf
    assert np.isnan(tl.nn.log1mexp(tl.tensor([-1.0])).numpy()[0])


def test_sparse_plus_and_sparse_sigmoid():
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.99, 1.0, 2.5])
    want = np.where(x <= -1, 0.0, np.where(x >= 1, x, (x + 1) ** 2 / 4))
    np.testing.assert_array_equal(tl.nn.sparse_plus(tl.tensor(x)).numpy(), want)
    np.testing.assert_array_equal(tl.nn.sparse_sigmoid(tl.tensor(x)).numpy(), np.clip((x + 1) / 2, 0, 1))
    # sparse_sigmoid is the derivative of sparse_plus (away from the kinks)
    inner = tl.tensor(np.array([-2.0, -0.3, 0.4, 1.7]))
    np.testing.assert_allclose(
        tl.grad(lambda t: tl.sum(tl.nn.sparse_plus(t)))(inner).numpy(), tl.nn.sparse_sigmoid(inner).numpy(), rtol=1e-15
    )
    check_grads(tl.nn.sparse_plus, (tl.tensor(np.array([-0.5, 0.2, 0.7])),), order=2)


def test_squareplus_is_accurate_for_negative_inputs():
    x = np.array([-1e4, -30.0, -1.0, 0.0, 1.0, 50.0])
    for b in (4.0, 0.5):
        exact = np.array(
            [(v + math.sqrt(v * v + b)) / 2 if v >= 0 else b / (2 * (math.sqrt(v * v + b) - v)) for v in x]
        )
        np.testing.assert_allclose(tl.nn.squareplus(tl.tensor(x), b).numpy(), exact, rtol=1e-15)
        got32 = tl.nn.squareplus(tl.tensor(x.astype(np.float32)), b).numpy()
        np.testing.assert_allclose(got32, exact, rtol=1e-6)  # the sum form gives 0 at -1e4 in float32
    check_grads(lambda t: tl.nn.squareplus(t, 2.0), (tl.tensor(RNG.normal(size=5) * 3),), order=2)
    check_grads(lambda b: tl.nn.squareplus(tl.tensor(np.array([-2.0, 0.5])), b), (tl.tensor(1.5),), order=1)


def test_logmeanexp_and_logsumexp_with_where():
    x = RNG.normal(size=(3, 4)) * 50
    keep = RNG.uniform(size=(3, 4)) > 0.3
    keep[:, 0] = True
    shifted = np.where(keep, x, -np.inf)
    m = shifted.max(axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(shifted - m), axis=1)) + m[:, 0]
    np.testing.assert_allclose(tl.nn.logsumexp(tl.tensor(x), axis=1, where=tl.tensor(keep)).numpy(), lse, rtol=1e-14)
    np.testing.assert_allclose(
        tl.nn.logmeanexp(tl.tensor(x), axis=1, where=tl.tensor(keep)).numpy(), lse - np.log(keep.sum(1)), rtol=1e-14
    )
    full = np.log(np.mean(np.exp(x[:, :2] / 50), axis=0))
    np.testing.assert_allclose(tl.nn.logmeanexp(tl.tensor(x[:, :2] / 50), axis=0).numpy(), full, rtol=1e-14)
    # SciPy's positional order: b third
    b = RNG.uniform(0.5, 2, size=4)
    np.testing.assert_allclose(
        tl.nn.logsumexp(tl.tensor(x[0]), 0, tl.tensor(b)).numpy(),
        np.log(np.sum(b * np.exp(x[0] - x[0].max()))) + x[0].max(),
    )
    check_grads(lambda t: tl.nn.logmeanexp(t, axis=1, where=tl.tensor(keep)), (tl.tensor(x / 50),), order=2)


def test_standardize_is_two_pass_and_matches_the_formula():
    x = RNG.normal(size=(4, 5)) + 1e4  # far from 0: E[x^2] - E[x]^2 cancels
    for dtype, rtol in (("float64", 1e-9), ("float32", 2e-3)):
        xd = x.astype(dtype)
        mean = xd.astype(float).mean(-1, keepdims=True)
        var = ((xd.astype(float) - mean) ** 2).mean(-1, keepdims=True)
        want = (xd.astype(float) - mean) / np.sqrt(var + 1e-5)
        np.testing.assert_allclose(tl.nn.standardize(tl.tensor(xd)).numpy(), want, rtol=rtol, atol=rtol)
    got = tl.nn.standardize(tl.tensor(x), axis=0, mean=tl.tensor(1e4), variance=tl.tensor(4.0), epsilon=0.0)
    np.testing.assert_allclose(got.numpy(), (x - 1e4) / 2, rtol=1e-12)
    keep = np.array([True, True, False, True, False])
    got = tl.nn.standardize(tl.tensor(x), where=tl.tensor(keep), epsilon=0.0).numpy()
    m = x[:, keep].mean(-1, keepdims=True)
    np.testing.assert_allclose(got, (x - m) / x[:, keep].std(-1, keepdims=True), rtol=1e-9)
    check_grads(tl.nn.standardize, (tl.tensor(RNG.normal(size=(2, 4))),), order=2)


def test_one_hot_identity_aliases():
    got = tl.nn.one_hot(tl.tensor([[1, -1], [3, 0]]), 3)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(
        got.numpy(), (np.array([[1, -1], [3, 0]])[..., None] == np.arange(3)).astype(np.float32)
    )
    np.testing.assert_array_equal(tl.nn.one_hot(tl.tensor([2]), 3, axis=0, dtype="int32").numpy(), [[0], [0], [1]])
    x = tl.tensor([1.0, -2.0])
    assert tl.nn.identity(x) is x
    assert tl.nn.hard_silu is tl.nn.hard_swish and tl.nn.soft_sign is tl.nn.softsign


def test_traced_equals_eager():
    x = tl.tensor(RNG.uniform(0.1, 4, size=6))
    for fn in (tl.nn.log1mexp, tl.nn.sparse_plus, tl.nn.squareplus, tl.nn.standardize, tl.nn.logmeanexp):
        np.testing.assert_array_equal(tl.function(fn)(x).numpy(), fn(x).numpy())


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnn = jax.nn
    x = RNG.uniform(-3, 3, size=7)
    pos = np.abs(x) + 0.01
    pairs = [
        (tl.nn.log1mexp, jnn.log1mexp, pos),
        (tl.nn.sparse_plus, jnn.sparse_plus, x),
        (tl.nn.sparse_sigmoid, jnn.sparse_sigmoid, x),
        (tl.nn.squareplus, jnn.squareplus, x),
        (tl.nn.hard_silu, jnn.hard_silu, x),
        (tl.nn.soft_sign, jnn.soft_sign, x),
        (tl.nn.logmeanexp, jnn.logmeanexp, x),
        (tl.nn.standardize, lambda v: jnn.standardize(v, algorithm="stable"), x),
    ]
    for ours, theirs, v in pairs:
        np.testing.assert_allclose(ours(tl.tensor(v)).numpy(), np.asarray(theirs(v)), rtol=1e-12, atol=1e-15)
        gj = np.asarray(jax.grad(lambda t, f=theirs: f(t).sum())(v))
        np.testing.assert_allclose(
            tl.grad(lambda t, f=ours: tl.sum(f(t)))(tl.tensor(v)).numpy(), gj, rtol=1e-10, atol=1e-14
        )

"""tl.random's distributions beyond normal and uniform: NumPy's generator's numbers for a seed, their laws
(moments against the textbook formulas over many draws), redraws on every run of a traced function, and one
clear error for a parameter out of range."""

import numpy as np
import pytest

import tensorlib as tl

N = 200_000


@pytest.mark.parametrize(
    ("draw", "mean", "var"),
    [
        (lambda s: tl.random.exponential((N,), 2.0, dtype="float64", seed=s), 2.0, 4.0),
        (lambda s: tl.random.gamma((N,), 3.0, 2.0, dtype="float64", seed=s), 1.5, 0.75),  # rate 2: scale 1/2
        (lambda s: tl.random.beta((N,), 2.0, 3.0, dtype="float64", seed=s), 0.4, 0.04),
        (lambda s: tl.random.poisson((N,), 4.0, seed=s), 4.0, 4.0),
        (lambda s: tl.random.laplace((N,), 1.0, 0.5, dtype="float64", seed=s), 1.0, 0.5),
        (lambda s: tl.random.gumbel((N,), 0.0, 2.0, dtype="float64", seed=s), 2.0 * np.euler_gamma, np.pi**2 * 4 / 6),
    ],
)
def test_draws_follow_their_law_and_repeat_for_a_seed(draw, mean, var):
    x = draw(3).numpy()
    np.testing.assert_array_equal(x, draw(3).numpy())
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / N)
    assert abs(x.var() / var - 1) < 0.03


def test_categorical_follows_softmax_and_never_draws_a_minus_inf_logit():
    logits = np.log(np.array([[0.2, 0.0, 0.5, 0.3], [0.7, 0.1, 0.1, 0.1]]))
    draws = tl.random.categorical(logits, 50_000, seed=1).numpy()
    assert draws.shape == (2, 50_000) and draws.dtype == np.int64
    freq = np.stack([np.bincount(row, minlength=4) / row.size for row in draws])
    np.testing.assert_allclose(freq, np.exp(logits), atol=0.01)
    assert not (draws[0] == 1).any()
    assert tl.random.categorical(logits, 3, dtype="int32", seed=0).dtype == np.int32


def test_choice_shuffle_and_randint():
    a = tl.tensor(np.arange(10.0))
    picked = tl.random.choice(a, (4, 2), replace=False, seed=0).numpy()
    assert picked.shape == (4, 2) and len(set(picked.ravel().tolist())) == 8
    p = np.array([0.1, 0.0, 0.6, 0.3])
    draws = tl.random.choice(4, (40_000,), p=p, seed=2).numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / draws.size, p, atol=0.01)
    # Without replacement, the first pick follows p too (the Gumbel-top-k trick).
    firsts = [int(tl.random.choice(4, (2,), replace=False, p=p, seed=s).numpy()[0]) for s in range(2000)]
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / 2000, p, atol=0.04)
    shuffled = tl.random.shuffle(tl.tensor(np.arange(12.0).reshape(6, 2)), seed=4).numpy()
    assert sorted(shuffled[:, 0].tolist()) == [0, 2, 4, 6, 8, 10] and (shuffled[:, 1] == shuffled[:, 0] + 1).all()
    grad = tl.grad(lambda x: tl.sum(tl.random.shuffle(x, seed=4)[:2] * 3.0))(tl.tensor(np.arange(6.0))).numpy()
    assert sorted(grad.tolist()) == [0, 0, 0, 0, 3, 3]
    ints = tl.random.randint((1000,), -2, 3, seed=5).numpy()
    assert ints.dtype == np.int64 and set(ints.tolist()) == {-2, -1, 0, 1, 2}


def test_traced_draws_are_new_on_every_run():
    f = tl.function(lambda: (tl.random.gamma((8,), 2.0), tl.random.categorical(tl.zeros((1, 50)), 8)))
    (a1, c1), (a2, c2) = f(), f()
    assert not np.array_equal(a1.numpy(), a2.numpy()) and not np.array_equal(c1.numpy(), c2.numpy())


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: tl.random.exponential((2,), -1.0), ValueError, r"RandomExponential: scale must be a non-negative"),
        (lambda: tl.random.gamma((2,), 0.0), ValueError, r"RandomGamma: alpha must be a positive finite number"),
        (lambda: tl.random.gamma((2,), 1.0, beta=0.0), ValueError, r"tl.random.gamma: the rate beta must be"),
        (lambda: tl.random.beta((2,), 1.0, np.nan), ValueError, r"RandomBeta: b must be a positive finite number"),
        (lambda: tl.random.laplace((2,), dtype="int64"), TypeError, r"laplace samples need a float dtype, got int64"),
        (lambda: tl.random.randint((2,), 0, 3, dtype="float32"), TypeError, r"randint: dtype must be an integer"),
        (lambda: tl.random.categorical(tl.zeros(3), 2), ValueError, r"categorical: logits must be a 2-D float"),
        (lambda: tl.random.choice(3, (4,), replace=False), ValueError, r"cannot take 4 of 3 without replacement"),
        (lambda: tl.random.choice(3, p=[0.5, 0.6, 0.0]), ValueError, r"p must be 3 non-negative probabilities"),
    ],
)
def test_bad_parameters_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

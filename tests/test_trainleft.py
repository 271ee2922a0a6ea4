"""Layers, optimizers and the toolkit attacked where the last session left them open, and in training loops as a
Keras / PyTorch user writes them.

References: Keras' definitions (truncated normals of ``scipy.stats.truncnorm``), NumPy formulas of the optimizers'
updates, uninterrupted runs against resumed ones, float64 central differences, and torch / TensorFlow with the same
weights where they are installed.
"""

import numpy as np
import pytest
import scipy.stats

import tensorlib as tl

_TRUNCATED = scipy.stats.truncnorm(-2.0, 2.0)


@pytest.mark.parametrize(
    "name, variance",
    [
        ("glorot_normal", lambda fi, fo: 2.0 / (fi + fo)),
        ("he_normal", lambda fi, fo: 2.0 / fi),
        ("lecun_normal", lambda fi, fo: 1.0 / fi),
    ],
)
def test_keras_normal_initializers_are_truncated_at_two_deviations_with_the_variance_asked(name, variance):
    # Keras' GlorotNormal and HeNormal are VarianceScaling(distribution="truncated_normal"): a normal truncated
    # at two of its deviations, scaled by 1 / truncnorm(-2, 2).std() = 1 / 0.8796.  Ours were untruncated normals
    # (kurtosis 3.0, largest |w| 4.7 deviations, where Keras' are 2.36 and at most 2.27).
    shape = (3, 3, 40, 60)
    fan_in, fan_out = 9 * 40, 9 * 60
    w = tl.initializers.get(name)(shape, seed=1, dtype=tl.float64).numpy().ravel()
    std = np.sqrt(variance(fan_in, fan_out))
    np.testing.assert_allclose(w.std(), std, rtol=0.02)
    bound = 2.0 * std / _TRUNCATED.std()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    kurtosis = np.mean((w / w.std()) ** 4)
    np.testing.assert_allclose(kurtosis, _TRUNCATED.stats(moments="k") + 3.0, rtol=0.02)


@pytest.mark.parametrize("magnitude", [3e20, 1e25, 1e-30, 1e-40])
@pytest.mark.parametrize("traced", [False, True])
def test_global_norm_clipping_in_float32_is_right_where_the_squares_overflow_or_underflow(magnitude, traced):
    # 3e20 ** 2 overflows float32: the norm was inf and every clipped gradient NaN; 1e-30 ** 2 underflows: the
    # norm was 0.  The reference is the same computation in float64, where the squares fit.
    rng = np.random.default_rng(0)
    grads = [(rng.uniform(0.5, 1.0, size=s) * magnitude).astype(np.float32) for s in [(3, 2), (4,)]]
    wide = [g.astype(np.float64) for g in grads]
    norm = np.sqrt(sum((g**2).sum() for g in wide))

    def clip(a, b):
        return tl.optimizers.clip_by_global_norm([a, b], 1.0)

    clipped, got = (tl.function(clip) if traced else clip)(*grads)
    np.testing.assert_allclose(float(got), norm, rtol=1e-6)
    for c, g in zip(clipped, wide):
        assert c.dtype == tl.float32
        np.testing.assert_allclose(c.numpy(), g * min(1.0, 1.0 / norm), rtol=1e-6, atol=0)
    one = tl.optimizers.clip_by_norm(grads[0], 1.0, axes=1).numpy()
    rows = np.sqrt((wide[0] ** 2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(one, wide[0] / np.maximum(rows, 1.0), rtol=1e-6, atol=0)


def test_global_norm_gradient_is_the_normalized_tensors_and_zero_at_zero():
    x = np.array([3.0, -4.0, 1.0])
    g = tl.grad(lambda t: tl.optimizers.global_norm([t, 2.0 * t]))(x).numpy()
    eps = 1e-6
    numeric = [
        (np.sqrt(5 * ((x + eps * e) ** 2).sum()) - np.sqrt(5 * ((x - eps * e) ** 2).sum())) / (2 * eps)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(g, numeric, rtol=1e-7)
    assert np.array_equal(tl.grad(lambda t: tl.optimizers.global_norm([t]))(np.zeros(2)).numpy(), np.zeros(2))
    assert np.isposinf(float(tl.optimizers.global_norm([np.array([np.inf, 1.0])])))
    assert np.isnan(float(tl.optimizers.global_norm([np.array([np.nan, np.inf])])))


class _Block(tl.Module):
    """A user's Module whose forward takes no ``training``: the mode reaches its layers through the call."""

    def __init__(self):
        super().__init__()
        self.dense = tl.nn.Dense(6, 6, seed=0, dtype=tl.float64)
        self.norm = tl.nn.BatchNorm(6, momentum=0.5, dtype=tl.float64)
        self.drop = tl.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.norm(self.dense(x)))


def _containers():
    return [
        ("Sequential", lambda: tl.nn.Sequential(_Block())),
        ("nested Sequential", lambda: tl.nn.Sequential(tl.nn.Sequential([_Block()]))),
        ("user Module", _Block),
        ("TimeDistributed", lambda: tl.nn.TimeDistributed(_Block())),
    ]


@pytest.mark.parametrize("name, make", _containers())
@pytest.mark.parametrize("traced", [False, True])
def test_a_containers_training_argument_reaches_every_layer_inside(name, make, traced):
    # Sequential(...)(x, training=False) raised TypeError (forward(x) takes no training), and a user's Module
    # or TimeDistributed called with training=False let its Dropout drop and its BatchNorm use (and move) batch
    # statistics.  Keras passes the call's training to every layer called inside it.  Reference: NumPy.
    model = make()
    block = next(m for m in model.modules() if isinstance(m, _Block))
    x = np.random.default_rng(1).normal(size=(2, 5, 6) if name == "TimeDistributed" else (5, 6))
    call = tl.function(lambda x, training: model(x, training=training)) if traced else model
    kernel, bias = block.dense.kernel.numpy(), block.dense.bias.numpy()
    h = x @ kernel + bias
    y = call(x, training=False).numpy()  # running statistics 0 and 1, no dropout
    np.testing.assert_allclose(y, h / np.sqrt(1.0 + 1e-5), rtol=1e-12)
    assert np.array_equal(block.norm.running_mean.numpy(), np.zeros(6))
    model.eval()
    y = call(x, training=True).numpy()  # batch statistics, dropout, even in eval() mode
    flat = h.reshape(-1, 6)
    normed = (h - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-5)
    kept = y != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(y[kept], 2.0 * normed[kept], rtol=1e-10)
    np.testing.assert_allclose(block.norm.running_mean.numpy(), 0.5 * flat.mean(0), rtol=1e-12)
    assert block.drop.training is False  # the call's mode is not the layer's


def test_an_explicit_training_argument_inside_wins_and_non_bool_is_refused():
    class Inner(tl.Module):
        def __init__(self):
            super().__init__()
            self.drop = tl.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x, training=True)

    x = np.ones((100,))
    assert (tl.nn.Sequential(Inner())(x, training=False).numpy() == 0).any()
    with pytest.raises(TypeError, match="Sequential: training must be True, False or None, got 'no'"):
        tl.nn.Sequential(Inner())(x, training="no")
    with pytest.raises(TypeError, match="unexpected keyword argument 'trainig'"):
        tl.nn.Sequential(Inner())(x, trainig=False)

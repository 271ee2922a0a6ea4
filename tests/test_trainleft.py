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

"""Adversarial tests of the tl.nn layers: configs with array arguments and ``trainable``, seeded noise layers, and
the layers added last (odd shapes, dtypes, traced == eager, bad arguments).

References: NumPy formulas and float64 central differences written here (run in CI); Keras 3
(``keras.layers``, importorskip) and PyTorch (``torch.nn``, importorskip) with the weights copied.
"""

import json

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(20261203)


# ------------------------------------------------------------------ configs: arrays and trainable
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_normalization_config_holds_array_statistics_as_lists_and_reads_them_back_exactly(dtype):
    mean = RNG.normal(size=(2, 3)).astype(dtype)
    variance = RNG.uniform(0.5, 2.0, size=(2, 3))  # float64 for a layer of another dtype
    layer = tl.nn.Normalization(axis=(1, 2), mean=mean, variance=tl.tensor(variance), dtype=dtype)
    config = json.loads(json.dumps(layer.get_config()))  # Keras writes them as (nested) lists
    assert config["mean"] == mean.astype(np.float64).tolist() and config["variance"] == variance.tolist()
    copy = tl.nn.Normalization.from_config(config)
    for name in ("mean", "variance"):
        got, want = getattr(copy, name).numpy(), getattr(layer, name).numpy()
        assert got.dtype == want.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)
    x = RNG.normal(size=(4, 2, 3)).astype(dtype)
    np.testing.assert_array_equal(copy(x).numpy(), layer(x).numpy())
    expected = (x.astype(np.float64) - mean.astype(dtype)) / np.sqrt(variance.astype(dtype).astype(np.float64))
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-2 if dtype == "float16" else 1e-5)


def test_rescaling_config_holds_array_scale_and_offset():
    layer = tl.nn.Rescaling(np.array([0.5, 2.0, 0.25]), offset=tl.tensor(np.float32(-1.0)))
    config = json.loads(json.dumps(layer.get_config()))
    assert config["scale"] == [0.5, 2.0, 0.25] and config["offset"] == -1.0
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_array_equal(tl.nn.Rescaling.from_config(config)(x).numpy(), layer(x).numpy())
    np.testing.assert_allclose(layer(x).numpy(), x * np.float32([0.5, 2.0, 0.25]) - 1.0, rtol=1e-6)


def test_a_caller_changing_its_array_after_construction_does_not_change_the_config():
    mean = np.array([1.0, 2.0])
    layer = tl.nn.Normalization(mean=mean, variance=np.ones(2))
    mean[0] = 99.0
    assert layer.get_config()["mean"] == [1.0, 2.0]


def test_trainable_is_in_every_config_and_restored_without_unfreezing_sub_layers():
    model = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.BatchNorm(3), tl.nn.Dense(3, 1, seed=1))
    model[0].trainable = False
    config = json.loads(json.dumps(model.get_config()))
    assert config["trainable"] is True
    assert [c["config"]["trainable"] for c in config["layers"]] == [False, True, True]
    copy = tl.nn.Sequential.from_config(config)
    assert [m.trainable for m in (copy, *copy)] == [True, False, True, True]
    assert sorted(copy.trainable_variables) == sorted(model.trainable_variables) == ["1", "2"]
    model.trainable = False
    frozen = tl.nn.Sequential.from_config(model.get_config())
    assert not frozen.trainable and all(not m.trainable for m in frozen) and not frozen.trainable_variables
    with pytest.raises(TypeError, match=r"Dense.from_config: trainable must be a bool, got 'no'"):
        tl.nn.Dense.from_config({"in_features": 2, "out_features": 3, "trainable": "no"})


def test_configs_match_keras_for_array_arguments_and_trainable():
    keras = pytest.importorskip("keras")
    mean, variance = np.array([1.5, 2.0]), np.array([4.0, 9.1])
    theirs = keras.layers.Normalization(mean=mean, variance=variance).get_config()
    ours = tl.nn.Normalization(mean=mean, variance=variance).get_config()
    assert (ours["mean"], ours["variance"]) == (theirs["mean"], theirs["variance"])
    dense = keras.layers.Dense(3)
    dense.trainable = False
    mine = tl.nn.Dense(2, 3)
    mine.trainable = False
    assert mine.get_config()["trainable"] is dense.get_config()["trainable"] is False

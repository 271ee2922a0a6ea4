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


# ------------------------------------------------------------------ noise layers' seed=
_NOISE = {
    "Dropout": (lambda seed: tl.nn.Dropout(0.5, seed=seed), (3, 8)),
    "Dropout(noise_shape)": (lambda seed: tl.nn.Dropout(0.5, noise_shape=(None, 1), seed=seed), (6, 8)),
    "SpatialDropout1D": (lambda seed: tl.nn.SpatialDropout1D(0.5, seed=seed), (4, 3, 6)),
    "SpatialDropout2D": (lambda seed: tl.nn.SpatialDropout2D(0.5, "NCHW", seed=seed), (4, 6, 2, 2)),
    "SpatialDropout3D": (lambda seed: tl.nn.SpatialDropout3D(0.5, seed=seed), (4, 2, 2, 2, 6)),
    "GaussianNoise": (lambda seed: tl.nn.GaussianNoise(0.5, seed=seed), (3, 8)),
    "GaussianDropout": (lambda seed: tl.nn.GaussianDropout(0.3, seed=seed), (3, 8)),
    "AlphaDropout": (lambda seed: tl.nn.AlphaDropout(0.3, seed=seed), (3, 8)),
}


@pytest.mark.parametrize("name", sorted(_NOISE))
def test_a_seed_gives_a_reproducible_stream_of_new_draws_per_call_eager_and_traced(name):
    make, shape = _NOISE[name]
    x = RNG.uniform(1.0, 2.0, size=shape).astype(np.float32)
    first = make(5)(x).numpy()
    layer = make(5)
    eager = [layer(x).numpy() for _ in range(3)]
    np.testing.assert_array_equal(eager[0], first)  # a new layer of one seed starts its stream again
    assert not np.array_equal(eager[0], eager[1]) and not np.array_equal(eager[1], eager[2])  # new draws per call
    traced_layer = make(5)
    step = tl.function(lambda t: traced_layer(t))
    for want in eager:  # each run of the graph draws the next ones (a fixed seed does not repeat one mask)
        np.testing.assert_array_equal(step(x).numpy(), want)
    assert not np.array_equal(make(6)(x).numpy(), first)  # another seed, another stream
    tl.random.seed(0)
    unseeded = make(None)(x).numpy()
    tl.random.seed(0)
    np.testing.assert_array_equal(make(None)(x).numpy(), unseeded)  # without one: tl.random.seed's stream


@pytest.mark.parametrize("name", sorted(_NOISE))
def test_seeded_noise_has_its_definition_and_gradient(name):
    make, shape = _NOISE[name]
    x = RNG.uniform(1.0, 2.0, size=shape).astype(np.float64)
    layer = make(11)
    w = tl.Variable(x)
    with tl.GradientTape() as tape:
        y = layer(w)
    y, g = y.numpy(), tape.gradient(y, w).numpy()
    if name == "GaussianNoise":
        np.testing.assert_array_equal(g, np.ones_like(x))
        assert abs(np.std(y - x) - 0.5) < 0.25
        return
    if name == "AlphaDropout":
        limit, rate = -1.6732632423543772 * 1.0507009873554805, 0.3
        a = ((1 - rate) * (1 + rate * limit**2)) ** -0.5
        kept = g != 0
        np.testing.assert_allclose(g[kept], a)
        np.testing.assert_allclose(y, np.where(kept, x, limit) * a - a * limit * rate, rtol=1e-12)
        return
    np.testing.assert_allclose(y, x * g, rtol=1e-12)  # multiplicative noise: the gradient is the noise
    if name != "GaussianDropout":
        assert set(np.unique(g)) <= {0.0, 2.0}
        shared = {"Dropout(noise_shape)": (1,), "SpatialDropout1D": (1,), "SpatialDropout2D": (2, 3)}
        shared["SpatialDropout3D"] = (1, 2, 3)
        axes = shared.get(name)
        if axes:  # one draw shared along these axes
            np.testing.assert_array_equal(g, np.broadcast_to(g.max(axis=axes, keepdims=True), g.shape))


def test_seeded_noise_state_stays_out_of_variables_and_checkpoints_and_configs_hold_the_seed():
    layer = tl.nn.Dropout(0.2, noise_shape=(None, 1), seed=4)
    assert layer.variables == {} and layer.state_dict() == {}
    config = json.loads(json.dumps(layer.get_config()))
    assert config == {"rate": 0.2, "noise_shape": [None, 1], "seed": 4, "trainable": True}
    copy = tl.nn.Dropout.from_config(config)
    x = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(copy(x).numpy(), layer(x).numpy())
    assert tl.nn.GaussianNoise(0.1, seed=2).get_config()["seed"] == 2


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: tl.nn.Dropout(0.5, seed=-1), r"Dropout: seed must be None or an integer >= 0, got -1"),
        (lambda: tl.nn.GaussianNoise(0.5, seed="a"), r"GaussianNoise: seed must be None or an integer >= 0"),
        (lambda: tl.nn.AlphaDropout(0.5, noise_shape=(2, -1)), r"AlphaDropout: noise_shape must be a tuple of sizes"),
        (lambda: tl.nn.Dropout(0.5, noise_shape=3), r"Dropout: noise_shape must be a tuple of sizes >= 0 or None"),
    ],
)
def test_bad_seed_or_noise_shape_raises_naming_the_layer(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_dropout_noise_shape_that_does_not_fit_the_input_names_the_layer():
    with pytest.raises(ValueError, match=r"Dropout: .*noise_shape \(3, 1\).*input shape \(2, 4\)"):
        tl.nn.Dropout(0.5, noise_shape=(3, 1), seed=0)(np.ones((2, 4), np.float32))

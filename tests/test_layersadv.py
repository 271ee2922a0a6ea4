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


def test_seeded_noise_state_is_a_non_trainable_variable_and_configs_hold_the_seed():
    # The stream's position is saved (a resumed run draws on; tests/test_optckpt.py), never trained.
    layer = tl.nn.Dropout(0.2, noise_shape=(None, 1), seed=4)
    assert list(layer.variables) == ["seed_state"] and layer.trainable_variables == {}
    assert layer.state_dict() == {"seed_state": np.int64(0)}
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


# ------------------------------------------------------------------ TimeDistributed traced with unknown sizes
@pytest.mark.parametrize("spec", [(None, None, 4), (None, 3, 4), (2, None, 4)])
def test_time_distributed_traced_with_unknown_batch_or_time_is_the_dense_formula(spec):
    dense = tl.nn.Dense(4, 2, seed=0, dtype="float64")
    layer = tl.nn.TimeDistributed(dense)

    def loss_and_grad(x):
        with tl.GradientTape() as tape:
            y = layer(x)
            loss = tl.sum(y * y)
        return y, tape.gradient(loss, dense.kernel)

    step = tl.function(loss_and_grad, input_signature=[tl.TensorSpec(spec, "float64")])
    kernel, bias = dense.kernel.numpy(), dense.bias.numpy()
    for shape in [(2, 3, 4), (1, 3, 4), (2, 5, 4), (0, 3, 4), (2, 0, 4)]:
        if any(s is not None and s != d for s, d in zip(spec, shape)):
            continue
        x = RNG.normal(size=shape)
        y, g = step(x)
        want = x @ kernel + bias
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g.numpy(), 2 * np.einsum("bti,bto->io", x, want), rtol=1e-12, atol=1e-12)


def test_time_distributed_conv_traced_with_unknown_batch_and_time_equals_eager():
    conv = tl.nn.Conv2D(2, 3, 3, seed=0, dtype="float64")
    layer = tl.nn.TimeDistributed(conv)
    traced = tl.function(lambda x: layer(x), input_signature=[tl.TensorSpec((None, None, 4, 4, 2), "float64")])
    x = RNG.normal(size=(2, 3, 4, 4, 2))
    want = np.stack([conv(x[:, t]).numpy() for t in range(3)], axis=1)
    np.testing.assert_allclose(traced(x).numpy(), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"TimeDistributed: traced with unknown sizes other than the batch and time"):
        tl.function(lambda x: layer(x)).get_graph(tl.TensorSpec((None, None, None, 4, 2), "float64"))


# ------------------------------------------------------------------ tl.nn.torch: PyTorch's RNN, LSTM and GRU
def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _numpy_cell(kind, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of torch.nn's equations (its documentation's), batch-major states."""
    gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    n = h.shape[-1]
    if kind == "LSTM":
        i, f, g, o = (_sigmoid((gi + gh)[..., k * n : (k + 1) * n]) for k in range(4))
        g = np.tanh((gi + gh)[..., 2 * n : 3 * n])
        c = f * c + i * g
        return o * np.tanh(c), c
    if kind == "GRU":
        r, z = (_sigmoid(gi[..., k * n : (k + 1) * n] + gh[..., k * n : (k + 1) * n]) for k in range(2))
        new = np.tanh(gi[..., 2 * n :] + r * gh[..., 2 * n :])
        return (1 - z) * new + z * h, None
    z = gi + gh
    return (np.tanh(z) if kind == "RNN" else np.maximum(z, 0)), None


def _numpy_torch_rnn(kind, params, x, h0, c0, num_layers, directions):
    """torch.nn.RNN/LSTM/GRU by their definition: x (time, batch, features); params by torch's names."""
    finals_h, finals_c = [], []
    for layer in range(num_layers):
        outputs = []
        for d, suffix in enumerate(["", "_reverse"][:directions]):
            names = [f"{w}_l{layer}{suffix}" for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            w_ih, w_hh = params[names[0]], params[names[1]]
            b_ih, b_hh = (params.get(names[2], 0.0), params.get(names[3], 0.0))
            h, c = h0[layer * directions + d], c0[layer * directions + d]
            ys = [None] * len(x)
            for t in reversed(range(len(x))) if d else range(len(x)):
                h, c = _numpy_cell(kind, x[t], h, c, w_ih, w_hh, b_ih, b_hh)
                ys[t] = h
            outputs.append(np.stack(ys))
            finals_h.append(h), finals_c.append(c)
        x = np.concatenate(outputs, axis=-1)
    return x, np.stack(finals_h), (np.stack(finals_c) if kind == "LSTM" else None)


_TORCH_CONFIGS = [
    {"num_layers": 1},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 3, "batch_first": True, "bias": False},
    {"num_layers": 2, "bidirectional": True, "batch_first": True},
]
_TORCH_KINDS = [("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})]


@pytest.mark.parametrize("kind, extra", _TORCH_KINDS)
@pytest.mark.parametrize("config", _TORCH_CONFIGS)
def test_torch_style_recurrent_layers_follow_torchs_equations(kind, extra, config):
    layer = getattr(tl.nn.torch, kind)(3, 4, seed=1, dtype="float64", **config, **extra)
    params = layer.state_dict()
    reference = "RELU" if extra else kind
    directions = 2 if config.get("bidirectional") else 1
    states = config["num_layers"] * directions
    for time, batch in [(5, 2), (1, 1), (4, None)]:  # None: unbatched (time, features)
        x = RNG.normal(size=(time, 3) if batch is None else (time, batch, 3))
        h0, c0 = RNG.normal(size=(2, states, *([] if batch is None else [batch]), 4))
        given = (h0, c0) if kind == "LSTM" else h0
        for hx, (h_init, c_init) in [(None, (0 * h0, 0 * c0)), (given, (h0, c0))]:
            inputs = x if batch is None or not config.get("batch_first") else x.transpose(1, 0, 2)
            output, state = layer(inputs, hx)
            xs, hs, cs = (x[:, None], h_init[:, None], c_init[:, None]) if batch is None else (x, h_init, c_init)
            want, want_h, want_c = _numpy_torch_rnn(reference, params, xs, hs, cs, config["num_layers"], directions)
            if batch is None:
                want, want_h, want_c = want[:, 0], want_h[:, 0], None if want_c is None else want_c[:, 0]
            elif config.get("batch_first"):
                want = want.transpose(1, 0, 2)
            h_n = state[0] if kind == "LSTM" else state
            np.testing.assert_allclose(output.numpy(), want, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(h_n.numpy(), want_h, rtol=1e-12, atol=1e-12)
            if kind == "LSTM":
                np.testing.assert_allclose(state[1].numpy(), want_c, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_torch_style_layers_gradients_match_central_differences_and_trace(kind):
    layer = getattr(tl.nn.torch, kind)(2, 3, num_layers=2, bidirectional=True, seed=0, dtype="float64")
    x = RNG.normal(size=(3, 2, 2))
    h0 = RNG.normal(size=(4, 2, 3))
    weights = RNG.normal(size=(3, 2, 6))

    def loss(x, h0):
        hx = (h0, h0 * 0.5) if kind == "LSTM" else h0
        output, state = layer(x, hx)
        h_n = state[0] if kind == "LSTM" else state
        return tl.sum(output * weights) + tl.sum(h_n**2)

    tl.testing.check_grads(loss, [x, h0], order=1)
    traced = tl.function(
        loss, input_signature=[tl.TensorSpec((3, None, 2), "float64"), tl.TensorSpec((4, None, 3), "float64")]
    )
    np.testing.assert_allclose(traced(x, h0).numpy(), loss(x, h0).numpy(), rtol=1e-12)
    zero_states = tl.function(lambda x: layer(x)[0], input_signature=[tl.TensorSpec((3, None, 2), "float64")])
    np.testing.assert_allclose(zero_states(x).numpy(), layer(x)[0].numpy(), rtol=1e-12)  # zeros of unknown batch
    eager = tl.grad(loss)(x, h0).numpy()
    np.testing.assert_allclose(tl.function(tl.grad(loss))(x, h0).numpy(), eager, rtol=1e-10, atol=1e-12)


def test_torch_style_dropout_acts_between_layers_in_training_only():
    lstm = tl.nn.torch.LSTM(3, 4, num_layers=2, dropout=0.5, seed=0, dtype="float64")
    first, second = (tl.nn.torch.LSTM(n, 4, seed=0, dtype="float64") for n in (3, 4))
    state = lstm.state_dict()
    first.load_state_dict({k: v for k, v in state.items() if k.endswith("l0")})
    second.load_state_dict({k.replace("l1", "l0"): v for k, v in state.items() if k.endswith("l1")})
    x = RNG.normal(size=(5, 2, 3))
    tl.random.seed(3)
    output, (h_n, _) = lstm(x)
    tl.random.seed(3)
    middle, (h_first, _) = first(x)
    # torch: on each layer's output but the last; the masks from the layer's seed, as a Dropout(seed=0)'s first
    want, (h_second, _) = second(tl.nn.Dropout(0.5, seed=0)(middle))
    np.testing.assert_allclose(output.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.concatenate([h_first.numpy(), h_second.numpy()]), rtol=1e-12)
    lstm.eval()
    np.testing.assert_allclose(lstm(x)[0].numpy(), second(first(x)[0])[0].numpy(), rtol=1e-12)
    single = tl.nn.torch.GRU(3, 4, dropout=0.5, seed=0)  # one layer: nothing to drop (as torch)
    np.testing.assert_array_equal(single(x)[0].numpy(), single.eval()(x)[0].numpy())


def test_torch_style_layers_config_repr_and_errors():
    model = tl.nn.Sequential(tl.nn.torch.GRU(3, 4, num_layers=2, batch_first=True), tl.nn.LSTM(3, 4))
    config = json.loads(json.dumps(model.get_config()))
    assert [c["class_name"] for c in config["layers"]] == ["torch.GRU", "LSTM"]  # not Keras' GRU
    copy = tl.nn.Sequential.from_config(config)
    assert type(copy[0]) is tl.nn.torch.GRU and type(copy[1]) is tl.nn.LSTM
    assert repr(copy[0]) == "GRU(3, 4, num_layers=2, batch_first=True)"
    lstm = tl.nn.torch.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"LSTM: input must be floating, \(time, batch, 3\) .*got shape \(5, 2, 4\)"):
        lstm(np.ones((5, 2, 4), np.float32))
    with pytest.raises(
        ValueError, match=r"LSTM: hx must be a pair \(h_0, c_0\) of floating states of shape \(2, 2, 4\)"
    ):
        lstm(np.ones((5, 2, 3), np.float32), np.zeros((2, 2, 4), np.float32))
    with pytest.raises(ValueError, match=r"GRU: hx must be a floating state of shape \(1, 2, 4\), got \[\(\(2, 2, 4\)"):
        tl.nn.torch.GRU(3, 4)(np.ones((5, 2, 3), np.float32), np.zeros((2, 2, 4), np.float32))
    with pytest.raises(ValueError, match=r"RNN: nonlinearity must be 'tanh' or 'relu', got 'gelu'"):
        tl.nn.torch.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match=r"GRU: dropout must be a number in \[0, 1\), got 1.0"):
        tl.nn.torch.GRU(3, 4, dropout=1.0)
    with pytest.raises(ValueError, match=r"LSTM: num_layers must be a positive integer, got 0"):
        tl.nn.torch.LSTM(3, 4, num_layers=0)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_torch_style_layers_equal_torch_nn_with_its_state_dict(kind):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(3, 5, num_layers=2, bidirectional=True, batch_first=True)
    ours = getattr(tl.nn.torch, kind)(3, 5, num_layers=2, bidirectional=True, batch_first=True)
    missing, unexpected = ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert missing == unexpected == []
    x = RNG.normal(size=(2, 6, 3)).astype(np.float32)
    want, want_state = theirs(torch.tensor(x))
    got, got_state = ours(x)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), atol=1e-6)
    for g, w in zip(tl.tree.leaves(got_state), (want_state if kind == "LSTM" else [want_state])):
        np.testing.assert_allclose(g.numpy(), w.detach().numpy(), atol=1e-6)
    (want.sum() + sum(s.sum() for s in (want_state if kind == "LSTM" else [want_state]))).backward()
    with tl.GradientTape() as tape:
        output, state = ours(x)
        total = tl.sum(output) + sum(tl.sum(s) for s in tl.tree.leaves(state))
    grads = tape.gradient(total, ours.trainable_variables)
    for name, parameter in theirs.named_parameters():
        np.testing.assert_allclose(grads[name].numpy(), parameter.grad.numpy(), atol=1e-5)


def test_seeded_noise_in_a_scan_body_draws_per_step_eager_and_traced():
    def masks(traced: bool):
        drop = tl.nn.Dropout(0.5, seed=3)
        run = lambda xs: tl.scan(lambda c, x: (c, drop(x)), tl.tensor(0.0), xs)[1]
        run = tl.function(run) if traced else run
        return [run(tl.ones((4, 8))).numpy() for _ in range(2)]

    eager, traced = masks(False), masks(True)
    for e, t in zip(eager, traced, strict=True):
        np.testing.assert_array_equal(t, e)
        assert len({tuple(row) for row in e}) > 1  # a new mask per step
    assert not np.array_equal(eager[0], eager[1])  # and per run


# ------------------------------------------------------------------ Keras' training call argument
@pytest.mark.parametrize("name", sorted(_NOISE))
def test_noise_layers_take_keras_training_call_argument(name):
    make, shape = _NOISE[name]
    x = RNG.uniform(1.0, 2.0, size=shape)
    layer = make(0)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)  # training mode, but not for this call
    layer.eval()
    assert not np.array_equal(layer(x, training=True).numpy(), x)  # inference mode, but training for this call
    np.testing.assert_array_equal(layer(x).numpy(), x)
    with pytest.raises(TypeError, match=r"training must be True, False or None, got 'yes'"):
        layer(x, training="yes")


def test_batch_norm_takes_keras_training_call_argument():
    bn = tl.nn.BatchNorm(3, momentum=0.25, dtype="float64")
    bn.running_mean.assign(np.array([1.0, -1.0, 0.5]))
    bn.running_var.assign(np.array([4.0, 1.0, 0.25]))
    x = RNG.normal(size=(6, 3)) * 2 + 1
    frozen = (x - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(bn(x, training=False).numpy(), frozen, rtol=1e-12)
    np.testing.assert_allclose(bn.running_mean.numpy(), [1.0, -1.0, 0.5])  # not moved by an inference call
    bn.eval()
    batch = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(bn(x, training=True).numpy(), batch, rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.75 * np.array([1.0, -1.0, 0.5]) + 0.25 * x.mean(0))
    np.testing.assert_allclose(
        bn.running_var.numpy(), 0.75 * np.array([4.0, 1.0, 0.25]) + 0.25 * x.var(0, ddof=1), rtol=1e-12
    )
    traced = tl.function(lambda t: bn(t, training=False))
    np.testing.assert_allclose(traced(x).numpy(), bn(x).numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 3, 5, 4), (2, 3, 5, 4)])
def test_time_distributed_of_a_layer_with_several_outputs_gives_each_per_step(shape):
    # batch 1, time 3 and LSTM's three outputs: they were stacked into one (3, 3, units) tensor and reshaped to
    # (1, 3, 3, units) without an error, the outputs and states read as time steps.
    lstm = tl.nn.LSTM(4, 2, return_state=True, seed=0, dtype="float64")
    x = RNG.normal(size=shape)
    outputs = tl.nn.TimeDistributed(lstm)(x)
    assert isinstance(outputs, tuple) and len(outputs) == 3
    for t in range(shape[1]):  # the layer on each step alone
        for got, want in zip(outputs, lstm(x[:, t]), strict=True):
            np.testing.assert_allclose(got.numpy()[:, t], want.numpy(), rtol=1e-12, atol=1e-12)
    named = tl.nn.TimeDistributed(tl.nn.Lambda(lambda t: {"twice": t * 2, "sum": tl.sum(t, axis=-1)}))(x[..., 0, :])
    np.testing.assert_allclose(named["twice"].numpy(), x[..., 0, :] * 2)
    np.testing.assert_allclose(named["sum"].numpy(), x[..., 0, :].sum(-1))
    with pytest.raises(ValueError, match=r"TimeDistributed: the layer's outputs must keep the batch axis \(batch \* t"):
        tl.nn.TimeDistributed(tl.nn.Lambda(lambda t: t[:1]))(x)


# ------------------------------------------------------------------ several outputs passed on as one input
def test_a_layer_given_several_outputs_as_its_input_raises_naming_it():
    # Sequential(LSTM(return_state=True), Dense) stacked (output, h, c) into one (3, batch, units) tensor and gave
    # a (3, batch, 2) result without an error (Keras and PyTorch raise).
    model = tl.nn.Sequential(tl.nn.LSTM(4, 3, return_state=True, seed=0), tl.nn.Dense(3, 2, seed=0))
    x = RNG.normal(size=(2, 5, 4)).astype(np.float32)
    with pytest.raises(
        TypeError, match=r"Dense: input must be one tensor, got a tuple of 3 values \(\(2, 3\) \(float32\)"
    ):
        model(x)
    outputs = model[0](x)
    for layer in (tl.nn.ReLU(), tl.nn.Dropout(0.5), tl.nn.LayerNorm(3), tl.nn.Identity(), tl.nn.torch.GRU(3, 2)):
        with pytest.raises(TypeError, match=rf"{type(layer).__name__}: input must be one tensor, got a tuple of 3"):
            layer(outputs)
    with pytest.raises(TypeError, match=r"Add: input must be one tensor, got a list of 2 values"):
        tl.nn.Add()([[x, x], x])
    pick = tl.nn.Sequential(model[0], tl.nn.Lambda(lambda out: out[0]), model[1])  # passing on one of them works
    np.testing.assert_allclose(pick(x).numpy(), model[1](outputs[0]).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tl.nn.Dense(2, 1, kernel_initializer="ones")([[1.0, 2.0]]).numpy(), [[3.0]])  # data


def test_configs_hold_tl_functions_with_parameters_bound_by_partial():
    import functools

    init = functools.partial(tl.initializers.variance_scaling, scale=2.0, mode="fan_out")
    act = functools.partial(tl.nn.leaky_relu, alpha=0.3)
    dense = tl.nn.Dense(3, 2, activation=act, kernel_initializer=init, seed=4, dtype="float64")
    config = json.loads(json.dumps(dense.get_config()))  # it raised: 'a partial, which has no JSON form'
    assert config["kernel_initializer"] == {
        "module": "tl.initializers",
        "function": "variance_scaling",
        "keywords": {"scale": 2.0, "mode": "fan_out"},
    }
    assert config["activation"] == {"module": "tl.nn", "function": "leaky_relu", "keywords": {"alpha": 0.3}}
    copy = tl.nn.Dense.from_config(config)
    np.testing.assert_array_equal(copy.kernel.numpy(), dense.kernel.numpy())  # the same initializer and seed
    x = RNG.normal(size=(4, 3))
    z = x @ dense.kernel.numpy() + dense.bias.numpy()
    np.testing.assert_allclose(copy(x).numpy(), np.where(z > 0, z, 0.3 * z), rtol=1e-12)
    assert copy.get_config() == config
    with pytest.raises(ValueError, match=r"from_config: unknown function tl.nn.nothing"):
        tl.nn.Dense.from_config({**config, "activation": {"module": "tl.nn", "function": "nothing", "keywords": {}}})
    with pytest.raises(TypeError, match=r"Dense.get_config: argument activation is functools.partial"):
        tl.nn.Dense(3, 2, activation=functools.partial(lambda x, a: x * a, a=2.0)).get_config()

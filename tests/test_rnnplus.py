"""Recurrent layers as Keras and PyTorch users expect them (tl.nn.SimpleRNN, LSTM, GRU, Bidirectional) and layer
configs: Bidirectional's nesting of outputs and states, dropout and recurrent dropout, stateful layers and
``get_config``/``from_config``.  References: a NumPy loop of each cell's equations written here (runs in CI),
float64 central differences, and Keras 3 / PyTorch with the same weights where they are installed."""

import json

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given

import tensorlib as tl

RNG = np.random.default_rng(7)
LAYERS = {"SimpleRNN": tl.nn.SimpleRNN, "LSTM": tl.nn.LSTM, "GRU": tl.nn.GRU}


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _randomized(layer):
    for v in (layer.kernel, layer.recurrent_kernel, layer.bias):
        v.assign(RNG.normal(size=v.shape) * 0.5)
    return layer


def _weights(layer):
    return [v.numpy() for v in (layer.kernel, layer.recurrent_kernel, layer.bias)]


def _reference(name, x, weights, states, input_masks=None, recurrent_masks=None, reset_after=True):
    """The cell's equations in NumPy over ``x`` (batch, time, features) from ``states``; ``input_masks`` and
    ``recurrent_masks`` are per gate, (gates, batch, features) and (gates, batch, units), as Keras 3 applies them
    (one mask for all the gates is the same mask repeated).  Returns (sequence of h, final states)."""
    kernel, recurrent, bias = weights
    gates = {"SimpleRNN": 1, "LSTM": 4, "GRU": 3}[name]
    u = recurrent.shape[0]
    states = [np.asarray(s, np.float64) for s in states]
    ones_x, ones_h = np.ones((gates, *x[:, 0].shape)), np.ones((gates, x.shape[0], u))
    mx = ones_x if input_masks is None else np.asarray(input_masks)
    mh = ones_h if recurrent_masks is None else np.asarray(recurrent_masks)
    hs = []
    for t in range(x.shape[1]):
        h = states[0]
        zx = [(x[:, t] * mx[k]) @ kernel[:, k * u : (k + 1) * u] for k in range(gates)]
        zh = [(h * mh[k]) @ recurrent[:, k * u : (k + 1) * u] for k in range(gates)]
        if name == "SimpleRNN":
            states = [np.tanh(zx[0] + bias + zh[0])]
        elif name == "LSTM":
            b = [bias[k * u : (k + 1) * u] for k in range(4)]
            i, f = _sigmoid(zx[0] + b[0] + zh[0]), _sigmoid(zx[1] + b[1] + zh[1])
            g, o = np.tanh(zx[2] + b[2] + zh[2]), _sigmoid(zx[3] + b[3] + zh[3])
            c = f * states[1] + i * g
            states = [o * np.tanh(c), c]
        else:
            bx = bias[0] if reset_after else bias
            bh = bias[1] if reset_after else np.zeros(3 * u)
            z = _sigmoid(zx[0] + bx[:u] + zh[0] + bh[:u])
            r = _sigmoid(zx[1] + bx[u : 2 * u] + zh[1] + bh[u : 2 * u])
            if reset_after:
                candidate = np.tanh(zx[2] + bx[2 * u :] + r * (zh[2] + bh[2 * u :]))
            else:
                candidate = np.tanh(zx[2] + bx[2 * u :] + (r * h * mh[2]) @ recurrent[:, 2 * u :])
            states = [z * h + (1 - z) * candidate]
        hs.append(states[0])
    return np.stack(hs, 1) if hs else np.zeros((x.shape[0], 0, u)), states


# ------------------------------------------------------------------ Bidirectional's nesting
@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_merge_mode_none_returns_keras_flat_outputs_and_states(name, return_sequences):
    layer = _randomized(LAYERS[name](3, 4, return_sequences=return_sequences, return_state=True, dtype="float64"))
    bi = tl.nn.Bidirectional(layer, merge_mode=None)
    _randomized(bi.backward_layer)
    x = RNG.normal(size=(2, 5, 3))
    n = 2 if name == "LSTM" else 1
    zeros = [np.zeros((2, 4))] * n
    got = bi(x)
    assert isinstance(got, tuple) and len(got) == 2 + 2 * n  # [out_fw, out_bw, *states_fw, *states_bw]
    seq_f, states_f = _reference(name, x, _weights(bi.forward_layer), zeros)
    seq_b, states_b = _reference(name, x[:, ::-1], _weights(bi.backward_layer), zeros)
    out_f, out_b = (seq_f, seq_b[:, ::-1]) if return_sequences else (states_f[0], states_b[0])
    for g, w in zip(got, [out_f, out_b, *states_f, *states_b]):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)
    assert isinstance(bi.eval()(x)[0], tl.Tensor)
    concat = tl.nn.Bidirectional(layer, backward_layer=bi.backward_layer)
    got = concat(x)
    assert len(got) == 1 + 2 * n
    np.testing.assert_allclose(got[0].numpy(), np.concatenate([out_f, out_b], -1), rtol=1e-12, atol=1e-14)
    one = tl.nn.Bidirectional(LAYERS[name](3, 4, return_sequences=return_sequences), merge_mode=None)
    assert len(one(x)) == 2  # without return_state: the pair (out_fw, out_bw)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_nests_as_keras_does(merge_mode, return_sequences):
    keras = pytest.importorskip("keras")
    x = RNG.normal(size=(3, 5, 3)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0], [1, 0, 1, 1, 1]], bool)
    for name, make in LAYERS.items():
        ours = tl.nn.Bidirectional(
            _randomized(make(3, 4, return_sequences=return_sequences, return_state=True)), merge_mode
        )
        _randomized(ours.backward_layer)
        kind = getattr(keras.layers, name)
        theirs = keras.layers.Bidirectional(
            kind(4, return_sequences=return_sequences, return_state=True), merge_mode=merge_mode
        )
        theirs.build(x.shape)
        theirs.set_weights(_weights(ours.forward_layer) + _weights(ours.backward_layer))
        for m in (None, mask):
            got, want = ours(x, mask=m), theirs(x, mask=m)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ get_config / from_config
def _f(*shape):
    return RNG.normal(size=shape).astype(np.float32)


# Every layer of tl.nn with arguments other than its defaults, and inputs for its call.
_CONFIGURED = {
    "Conv1DTranspose": (lambda: tl.nn.Conv1DTranspose(2, 3, 3, strides=2, activation="relu", seed=1), [_f(2, 5, 2)]),
    "Bidirectional": (lambda: tl.nn.Bidirectional(tl.nn.GRU(3, 4, return_sequences=True), "ave"), [_f(2, 5, 3)]),
    "SimpleRNN": (lambda: tl.nn.SimpleRNN(3, 4, "relu", go_backwards=True, return_state=True), [_f(2, 5, 3)]),
    "AdaptiveAvgPool1D": (lambda: tl.nn.AdaptiveAvgPool1D(3, data_format="NCW"), [_f(2, 4, 7)]),
    "AdaptiveAvgPool2D": (lambda: tl.nn.AdaptiveAvgPool2D((2, 3)), [_f(2, 5, 6, 3)]),
    "AdaptiveAvgPool3D": (lambda: tl.nn.AdaptiveAvgPool3D(2), [_f(1, 4, 4, 4, 2)]),
    "AdaptiveMaxPool1D": (lambda: tl.nn.AdaptiveMaxPool1D(3, return_indices=True), [_f(2, 7, 4)]),
    "AdaptiveMaxPool2D": (lambda: tl.nn.AdaptiveMaxPool2D(2), [_f(2, 5, 5, 3)]),
    "AdaptiveMaxPool3D": (lambda: tl.nn.AdaptiveMaxPool3D((1, 2, 2), "NCDHW"), [_f(1, 2, 3, 4, 4)]),
    "Dense": (
        lambda: tl.nn.Dense(3, 2, tl.nn.tanh, False, tl.initializers.he_normal, seed=3, dtype=np.float64),
        [_f(4, 3)],
    ),
    "Conv1D": (lambda: tl.nn.Conv1D(2, 3, 3, strides=2, padding="VALID", data_format="NCW"), [_f(2, 2, 9)]),
    "Conv2D": (lambda: tl.nn.Conv2D(3, 4, (3, 2), dilations=2, kernel_initializer="he_uniform"), [_f(2, 6, 6, 3)]),
    "Conv3D": (lambda: tl.nn.Conv3D(2, 3, 2), [_f(1, 4, 4, 4, 2)]),
    "Conv2DTranspose": (lambda: tl.nn.Conv2DTranspose(3, 2, 3, strides=2, output_padding=1), [_f(1, 4, 4, 3)]),
    "Conv3DTranspose": (
        lambda: tl.nn.Conv3DTranspose(4, 2, (2, 3, 2), (1, 2, 2), "VALID", (0, 1, 1), groups=2, data_format="NCDHW"),
        [_f(1, 4, 3, 3, 2)],
    ),
    "DepthwiseConv2D": (lambda: tl.nn.DepthwiseConv2D(3, 3, depth_multiplier=2), [_f(1, 5, 5, 3)]),
    "MaxPool1D": (lambda: tl.nn.MaxPool1D(3, 2, "SAME"), [_f(2, 7, 3)]),
    "AvgPool1D": (lambda: tl.nn.AvgPool1D(2), [_f(2, 6, 3)]),
    "MaxPool2D": (lambda: tl.nn.MaxPool2D((2, 2), (1, 1)), [_f(1, 5, 5, 2)]),
    "AvgPool2D": (lambda: tl.nn.AvgPool2D(2, None, "SAME", "NCHW"), [_f(1, 2, 5, 5)]),
    "MaxPool3D": (lambda: tl.nn.MaxPool3D(2), [_f(1, 4, 4, 4, 2)]),
    "AvgPool3D": (lambda: tl.nn.AvgPool3D(2), [_f(1, 4, 4, 4, 2)]),
    "LPPool1D": (lambda: tl.nn.LPPool1D(2.0, 3, 2, ceil_mode=True, data_format="NCW"), [_f(2, 3, 7)]),
    "LPPool2D": (lambda: tl.nn.LPPool2D(2, (2, 3)), [_f(1, 4, 6, 2)]),
    "LPPool3D": (lambda: tl.nn.LPPool3D(1.5, 2, data_format="NCDHW"), [np.abs(_f(1, 2, 4, 4, 4))]),
    "MaxUnpool1D": (lambda: tl.nn.MaxUnpool1D(3, 2, 1), [_f(2, 3, 2), np.arange(12).reshape(2, 3, 2) % 5]),
    "MaxUnpool2D": (
        lambda: tl.nn.MaxUnpool2D(2, data_format="NCHW"),
        [_f(1, 3, 2, 2), np.arange(12).reshape(1, 3, 2, 2)],
    ),
    "MaxUnpool3D": (lambda: tl.nn.MaxUnpool3D(2), [_f(1, 1, 1, 1, 2), np.array([[[[[3, 7]]]]])]),
    "FractionalMaxPool2D": (lambda: tl.nn.FractionalMaxPool2D(2, (4, 4), return_indices=True), [_f(1, 5, 5, 2)]),
    "GlobalAveragePooling1D": (lambda: tl.nn.GlobalAveragePooling1D(keepdims=True), [_f(2, 5, 3)]),
    "GlobalMaxPooling1D": (lambda: tl.nn.GlobalMaxPooling1D(), [_f(2, 5, 3)]),
    "GlobalAveragePooling2D": (lambda: tl.nn.GlobalAveragePooling2D("NCHW"), [_f(2, 3, 4, 4)]),
    "GlobalMaxPooling2D": (lambda: tl.nn.GlobalMaxPooling2D(), [_f(2, 4, 4, 3)]),
    "GlobalAveragePooling3D": (lambda: tl.nn.GlobalAveragePooling3D(), [_f(1, 3, 3, 3, 2)]),
    "GlobalMaxPooling3D": (lambda: tl.nn.GlobalMaxPooling3D(keepdims=True), [_f(1, 3, 3, 3, 2)]),
    "BatchNorm": (lambda: tl.nn.BatchNorm(3, momentum=0.2, epsilon=1e-3), [_f(4, 2, 2, 3)]),
    "LayerNorm": (lambda: tl.nn.LayerNorm((3,), 1e-3), [_f(2, 4, 3)]),
    "RMSNorm": (lambda: tl.nn.RMSNorm(3, scale=False), [_f(2, 4, 3)]),
    "GroupNorm": (lambda: tl.nn.GroupNorm(2, 4), [_f(2, 3, 3, 4)]),
    "InstanceNorm": (lambda: tl.nn.InstanceNorm(3, center=False), [_f(2, 4, 4, 3)]),
    "Embedding": (lambda: tl.nn.Embedding(10, 4, padding_idx=0), [np.array([[1, 2, 0]])]),
    "Dropout": (lambda: tl.nn.Dropout(0.3), [_f(2, 3)]),
    "Flatten": (lambda: tl.nn.Flatten(), [_f(2, 3, 4)]),
    "LSTM": (lambda: tl.nn.LSTM(3, 4, return_sequences=True, unit_forget_bias=False), [_f(2, 5, 3)]),
    "GRU": (lambda: tl.nn.GRU(3, 4, reset_after=False, return_state=True, dtype="float64"), [_f(2, 5, 3)]),
    "MultiHeadAttention": (
        lambda: tl.nn.MultiHeadAttention(4, 2, kdim=3, vdim=5),
        [_f(2, 3, 4), _f(2, 6, 3), _f(2, 6, 5)],
    ),
    "TransformerEncoderLayer": (
        lambda: tl.nn.TransformerEncoderLayer(4, 2, 8, activation="gelu", norm_first=True),
        [_f(2, 3, 4)],
    ),
    "TransformerDecoderLayer": (lambda: tl.nn.TransformerDecoderLayer(4, 2, 8, bias=False), [_f(2, 3, 4), _f(2, 5, 4)]),
    "SeparableConv2D": (lambda: tl.nn.SeparableConv2D(3, 4, 3, depth_multiplier=2), [_f(1, 5, 5, 3)]),
    "ZeroPadding1D": (lambda: tl.nn.ZeroPadding1D((1, 2)), [_f(2, 4, 3)]),
    "ZeroPadding2D": (lambda: tl.nn.ZeroPadding2D(((1, 0), (2, 1))), [_f(1, 3, 3, 2)]),
    "ZeroPadding3D": (lambda: tl.nn.ZeroPadding3D(1), [_f(1, 2, 2, 2, 1)]),
    "UpSampling2D": (lambda: tl.nn.UpSampling2D((2, 3), "bilinear"), [_f(1, 3, 3, 2)]),
    "PReLU": (lambda: tl.nn.PReLU(3, 0.1), [_f(2, 4, 4, 3)]),
    "SpatialDropout1D": (lambda: tl.nn.SpatialDropout1D(0.5), [_f(2, 4, 3)]),
    "SpatialDropout2D": (lambda: tl.nn.SpatialDropout2D(0.5, "NCHW"), [_f(2, 3, 4, 4)]),
    "SpatialDropout3D": (lambda: tl.nn.SpatialDropout3D(0.5), [_f(1, 2, 2, 2, 3)]),
    "Activation": (lambda: tl.nn.Activation(tl.nn.softplus), [_f(2, 3)]),
    "ReLU": (lambda: tl.nn.ReLU(), [_f(2, 3)]),
    "LeakyReLU": (lambda: tl.nn.LeakyReLU(0.3), [_f(2, 3)]),
    "GELU": (lambda: tl.nn.GELU(True), [_f(2, 3)]),
    "Sigmoid": (lambda: tl.nn.Sigmoid(), [_f(2, 3)]),
    "Tanh": (lambda: tl.nn.Tanh(), [_f(2, 3)]),
    "Softmax": (lambda: tl.nn.Softmax(axis=0), [_f(2, 3)]),
    "Softmin": (lambda: tl.nn.Softmin(axis=0), [_f(2, 3)]),
    "Hardshrink": (lambda: tl.nn.Hardshrink(0.3), [_f(2, 3)]),
    "Softshrink": (lambda: tl.nn.Softshrink(0.3), [_f(2, 3)]),
    "Tanhshrink": (lambda: tl.nn.Tanhshrink(), [_f(2, 3)]),
    "Threshold": (lambda: tl.nn.Threshold(0.1, -2.0), [_f(2, 3)]),
    "Softplus": (lambda: tl.nn.Softplus(2.0, 5.0), [_f(2, 3)]),
    "RReLU": (lambda: tl.nn.RReLU(0.1, 0.3).eval(), [_f(2, 3)]),
    "LocalResponseNorm": (lambda: tl.nn.LocalResponseNorm(3, 0.1, 0.5, 2.0), [_f(2, 4, 3)]),
    "Unfold": (lambda: tl.nn.Unfold(2, 1, 1, 2), [_f(1, 2, 4, 5)]),
    "Fold": (lambda: tl.nn.Fold((4, 5), 2, 1, 1, 2), [_f(1, 8, 9)]),
    "Cropping1D": (lambda: tl.nn.Cropping1D((1, 2)), [_f(2, 6, 3)]),
    "Cropping2D": (lambda: tl.nn.Cropping2D(((1, 0), (0, 1))), [_f(1, 4, 4, 2)]),
    "Cropping3D": (lambda: tl.nn.Cropping3D(1), [_f(1, 4, 4, 4, 1)]),
    "UpSampling1D": (lambda: tl.nn.UpSampling1D(3), [_f(2, 3, 2)]),
    "UpSampling3D": (lambda: tl.nn.UpSampling3D((1, 2, 2)), [_f(1, 2, 2, 2, 1)]),
    "Sequential": (lambda: tl.nn.Sequential(tl.nn.Dense(3, 4), tl.nn.ReLU(), tl.nn.Dense(4, 2)), [_f(2, 3)]),
    "Reshape": (lambda: tl.nn.Reshape((2, -1)), [_f(2, 3, 4)]),
    "Unflatten": (lambda: tl.nn.Unflatten(1, (2, 3)), [_f(2, 6)]),
    "Permute": (lambda: tl.nn.Permute((2, 1)), [_f(2, 3, 4)]),
    "RepeatVector": (lambda: tl.nn.RepeatVector(3), [_f(2, 4)]),
    "Identity": (lambda: tl.nn.Identity(), [_f(2, 3)]),
    "Lambda": (lambda: tl.nn.Lambda(tl.nn.softplus), [_f(2, 3)]),
    "Add": (lambda: tl.nn.Add(), [[_f(2, 3), _f(2, 3)]]),
    "Subtract": (lambda: tl.nn.Subtract(), [[_f(2, 3), _f(1, 3)]]),
    "Multiply": (lambda: tl.nn.Multiply(), [[_f(2, 3), _f(2, 3), _f(2, 1)]]),
    "Average": (lambda: tl.nn.Average(), [[_f(2, 3), _f(2, 3)]]),
    "Maximum": (lambda: tl.nn.Maximum(), [[_f(2, 3), _f(2, 3)]]),
    "Minimum": (lambda: tl.nn.Minimum(), [[_f(2, 3), _f(2, 3)]]),
    "Concatenate": (lambda: tl.nn.Concatenate(axis=1), [[_f(2, 3), _f(2, 2)]]),
    "Dot": (lambda: tl.nn.Dot((2, 2), normalize=True), [[_f(2, 3, 4), _f(2, 5, 4)]]),
    "TimeDistributed": (lambda: tl.nn.TimeDistributed(tl.nn.Dense(3, 2, activation="relu")), [_f(2, 4, 3)]),
    "Rescaling": (lambda: tl.nn.Rescaling([0.5, 2.0], offset=1.0), [_f(2, 2)]),
    "CenterCrop": (lambda: tl.nn.CenterCrop(2, 3, data_format="NCHW"), [_f(1, 2, 5, 5)]),
    "UnitNormalization": (lambda: tl.nn.UnitNormalization((1, 2)), [_f(2, 3, 4)]),
    "Normalization": (lambda: tl.nn.Normalization(-1, mean=[1.0, 2.0], variance=[4.0, 9.0]), [_f(3, 2)]),
    "ELU": (lambda: tl.nn.ELU(0.5), [_f(2, 3)]),
    "GaussianNoise": (lambda: tl.nn.GaussianNoise(0.2), [_f(2, 3)]),
    "GaussianDropout": (lambda: tl.nn.GaussianDropout(0.2), [_f(2, 3)]),
    "AlphaDropout": (lambda: tl.nn.AlphaDropout(0.2, noise_shape=(None, 1)), [_f(2, 3)]),
    "PixelShuffle": (lambda: tl.nn.PixelShuffle(2, "NCHW"), [_f(1, 8, 2, 3)]),
    "PixelUnshuffle": (lambda: tl.nn.PixelUnshuffle(2), [_f(1, 4, 6, 2)]),
    "Bilinear": (lambda: tl.nn.Bilinear(3, 4, 2, use_bias=False, seed=1), [_f(2, 3), _f(2, 4)]),
    "EmbeddingBag": (lambda: tl.nn.EmbeddingBag(6, 3, "max", padding_idx=1), [np.array([0, 1, 5]), np.array([0, 2])]),
    "Masking": (lambda: tl.nn.Masking(-1.0), [_f(2, 3, 4)]),
}


def test_every_layer_is_in_the_config_catalogue():
    assert set(_CONFIGURED) == {*tl.layers.__all__, "Sequential"}


@pytest.mark.parametrize("name", sorted(_CONFIGURED))
def test_from_config_of_get_config_builds_an_equal_layer(name):
    make, inputs = _CONFIGURED[name]
    layer = make()
    config = layer.get_config()
    text = json.dumps(config)  # JSON-serialisable, as Keras' configs
    copy = type(layer).from_config(json.loads(text))
    assert type(copy) is type(layer) and json.dumps(copy.get_config()) == text
    for v in tl.tree.leaves(layer.variables):  # new weights, so that equal outputs mean the weights were copied
        v.assign(RNG.normal(size=v.shape).astype(v.dtype))
    missing, unexpected = copy.load_state_dict(layer.state_dict())
    assert missing == unexpected == []
    layer.eval(), copy.eval()  # dropout off in both
    want, got = layer(*inputs), copy(*inputs)
    assert repr(copy) == repr(layer)
    for w, g in zip(tl.tree.leaves(want), tl.tree.leaves(got), strict=True):
        assert w.dtype == g.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_configs_name_activations_initializers_and_dtypes_and_nest_sub_layers():
    dense = _CONFIGURED["Dense"][0]()
    assert dense.get_config() == {
        "in_features": 3,
        "out_features": 2,
        "activation": "tanh",
        "use_bias": False,
        "kernel_initializer": "he_normal",
        "bias_initializer": "zeros",
        "seed": 3,
        "dtype": "float64",
        "trainable": True,
    }
    bi = tl.nn.Bidirectional(tl.nn.SimpleRNN(3, 4, activation=None), merge_mode=None)
    config = bi.get_config()
    assert config["merge_mode"] is None and config["backward_layer"] is None
    assert config["layer"]["class_name"] == "SimpleRNN" and config["layer"]["config"]["activation"] is None
    model = tl.nn.Sequential([tl.nn.Dense(3, 4), tl.nn.ReLU()])  # Keras' list form
    assert [c["class_name"] for c in model.get_config()["layers"][0]] == ["Dense", "ReLU"]
    assert len(tl.nn.Sequential.from_config(model.get_config())) == 2


def test_a_config_without_a_json_form_or_a_foreign_class_raises_naming_it():
    with pytest.raises(TypeError, match=r"Dense.get_config: argument activation is <function .*no JSON form"):
        tl.nn.Dense(3, 2, activation=lambda x: x).get_config()
    with pytest.raises(ValueError, match=r"unknown layer class 'Mine': not a tl.nn layer; pass custom_objects"):
        tl.nn.Sequential.from_config({"layers": [{"class_name": "Mine", "config": {}}]})
    with pytest.raises(TypeError, match=r"LSTM.from_config: the config does not fit LSTM\(.*unexpected keyword"):
        tl.nn.LSTM.from_config({"input_size": 3, "units": 4, "cells": 2})

    class Scale(tl.Module):
        def __init__(self, factor: float = 2.0):
            super().__init__()
            self.factor = factor

        def forward(self, x):
            return x * self.factor

    model = tl.nn.Sequential(Scale(3.0), tl.nn.ReLU())
    copy = tl.nn.Sequential.from_config(model.get_config(), custom_objects={"Scale": Scale})
    assert copy[0].factor == 3.0 and copy.get_config() == model.get_config()


# ------------------------------------------------------------------ dropout and recurrent dropout
_VARIANTS = [("SimpleRNN", {}), ("LSTM", {}), ("GRU", {}), ("GRU", {"reset_after": False})]
_RATES = [(0.3, 0.0), (0.3, 0.4), (0.0, 0.4)]


def _drawn_masks(layer, x, seed):
    """The masks the layer draws after ``tl.random.seed(seed)`` (its first draws in a call), as the reference's
    per-gate arrays."""
    tl.random.seed(seed)
    inputs, recurrent = layer._dropout_masks(tl.tensor(x), tl.zeros((x.shape[0], layer.units), dtype=x.dtype))
    gates = layer.gates
    as_gates = lambda ms: None if ms is None else np.stack([m.numpy() for m in ms] * (gates // len(ms)))
    return as_gates(inputs), as_gates(recurrent)


@pytest.mark.parametrize(("name", "options"), _VARIANTS)
@pytest.mark.parametrize(("dropout", "recurrent_dropout"), _RATES)
def test_dropout_masks_act_as_keras_3s_on_the_equations(name, options, dropout, recurrent_dropout):
    rates = {"dropout": dropout, "recurrent_dropout": recurrent_dropout}
    layer = _randomized(
        LAYERS[name](3, 4, return_sequences=True, return_state=True, dtype="float64", **rates, **options)
    )
    x = RNG.normal(size=(3, 5, 3))
    input_masks, recurrent_masks = _drawn_masks(layer, x, seed=11)
    # Keras 3: per-gate masks for the input and h with recurrent_dropout, one shared input mask without it.
    assert (input_masks is None) == (dropout == 0) and (recurrent_masks is None) == (recurrent_dropout == 0)
    if recurrent_dropout:
        assert len({m.tobytes() for m in recurrent_masks}) == layer.gates  # independent draws
    for masks, rate in ((input_masks, dropout), (recurrent_masks, recurrent_dropout)):
        if masks is not None:
            assert set(np.unique(masks)) <= {0.0, 1 / (1 - rate)}
    tl.random.seed(11)
    got = layer(x)
    n = 2 if name == "LSTM" else 1
    seq, states = _reference(name, x, _weights(layer), [np.zeros((3, 4))] * n, input_masks, recurrent_masks,
                             options.get("reset_after", True))  # fmt: skip
    for g, w in zip(got, [seq, *states], strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)
    eval_seq, _ = _reference(
        name, x, _weights(layer), [np.zeros((3, 4))] * n, None, None, options.get("reset_after", True)
    )
    np.testing.assert_allclose(layer.eval()(x)[0].numpy(), eval_seq, rtol=1e-12, atol=1e-14)  # off in eval()


@pytest.mark.parametrize(("name", "options"), _VARIANTS)
@pytest.mark.parametrize(("dropout", "recurrent_dropout"), _RATES)
def test_dropout_matches_keras_given_the_same_masks(name, options, dropout, recurrent_dropout):
    keras = pytest.importorskip("keras")
    layer = LAYERS[name](3, 4, return_sequences=True, dropout=dropout, recurrent_dropout=recurrent_dropout, **options)
    _randomized(layer)
    x = RNG.normal(size=(3, 5, 3)).astype(np.float32)
    theirs = getattr(keras.layers, name)(
        4, return_sequences=True, dropout=dropout, recurrent_dropout=recurrent_dropout, **options
    )
    theirs.build(x.shape)
    theirs.set_weights(_weights(layer))
    tl.random.seed(5)
    inputs, recurrent = layer._dropout_masks(tl.tensor(x), tl.zeros((3, 4)))

    def keras_masks(masks):  # Keras' cell takes a list per gate (implementation 1) or one tensor
        if masks is None:
            return None
        masks = [keras.ops.convert_to_tensor(m.numpy()) for m in masks]
        return masks if len(masks) > 1 else masks[0]

    theirs.cell.get_dropout_mask = lambda _: keras_masks(inputs)
    theirs.cell.get_recurrent_dropout_mask = lambda _: keras_masks(recurrent)
    tl.random.seed(5)
    np.testing.assert_allclose(layer(x).numpy(), np.asarray(theirs(x, training=True)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_dropout_keeps_one_mask_per_sequence_fresh_at_every_call_also_traced(name):
    x = np.ones((4, 6, 3), np.float32)
    # No seed: the masks come from the global stream (a seed gives the layer its own, see test_trainleft).
    layer = LAYERS[name](3, 5, return_sequences=True, dropout=0.5, recurrent_dropout=0.5)
    f = tl.function(lambda t: layer(t))
    tl.random.seed(3)
    first, second = f(x).numpy(), f(x).numpy()
    assert not np.allclose(first, second)  # the masks are drawn at every call, not constants of the graph
    tl.random.seed(3)
    np.testing.assert_allclose(layer(x).numpy(), first, rtol=1e-6)  # the same draws eagerly and traced
    spec = tl.function(lambda t: layer(t), input_signature=[tl.TensorSpec((None, 6, 3), tl.float32)])
    tl.random.seed(3)
    np.testing.assert_allclose(spec(x).numpy(), first, rtol=1e-6)  # an unknown batch size
    for n in (0, 1):
        assert layer(x[:, :n]).shape == (4, n, 5)


def test_one_mask_per_sequence_for_the_input_and_for_the_state():
    """A linear SimpleRNN with kernel I and no recurrence outputs x_t * mask: the same at every step; with
    kernel 0, bias 1 and recurrent kernel I, h_t = 1 + r h_{t-1}: 1, 1, 1, ... or 1, 3, 7, 15, ... for r = 2."""
    rnn = tl.nn.SimpleRNN(4, 4, activation=None, return_sequences=True, dropout=0.5, dtype="float64")
    rnn.kernel.assign(np.eye(4)), rnn.recurrent_kernel.assign(np.zeros((4, 4)))
    y = rnn(np.ones((64, 5, 4))).numpy()
    assert set(np.unique(y)) == {0.0, 2.0} and (y == y[:, :1]).all()
    assert 0.35 < (y == 0).mean() < 0.65
    rnn = tl.nn.SimpleRNN(4, 4, activation=None, return_sequences=True, recurrent_dropout=0.5, dtype="float64")
    rnn.kernel.assign(np.zeros((4, 4))), rnn.recurrent_kernel.assign(np.eye(4)), rnn.bias.assign(np.ones(4))
    y = rnn(np.ones((64, 4, 4))).numpy()
    kept = y[:, 1] == 3.0
    assert 0.35 < kept.mean() < 0.65
    np.testing.assert_array_equal(y.transpose(0, 2, 1)[kept], np.tile([1.0, 3.0, 7.0, 15.0], (kept.sum(), 1)))
    assert (y.transpose(0, 2, 1)[~kept] == 1.0).all()


@pytest.mark.parametrize(("name", "options"), _VARIANTS)
def test_gradients_through_dropout_match_differences_to_second_order(name, options):
    layer = _randomized(LAYERS[name](2, 2, dropout=0.3, recurrent_dropout=0.4, dtype="float64", **options))
    x = RNG.normal(size=(2, 3, 2))

    def f(x):
        tl.random.seed(2)  # the same masks at every evaluation
        return layer(x)

    tl.testing.check_grads(f, (x,), order=2)


def test_the_training_argument_turns_dropout_on_or_off_for_one_call():
    x = RNG.normal(size=(3, 5, 2))
    for name, make in LAYERS.items():
        layer = make(2, 4, return_sequences=True, dropout=0.5, recurrent_dropout=0.5, dtype="float64", seed=1)
        plain = make(2, 4, return_sequences=True, dtype="float64", seed=1)
        want = plain(x).numpy()
        np.testing.assert_allclose(layer(x, training=False).numpy(), want, rtol=1e-12, err_msg=name)  # Keras' call
        layer.eval()
        assert not np.allclose(layer(x, training=True).numpy(), want)
        np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12)
        bi = tl.nn.Bidirectional(
            layer, backward_layer=make(2, 4, return_sequences=True, go_backwards=True, dropout=0.5)
        )
        bi.train()
        assert not np.allclose(bi(x).numpy(), bi(x, training=False).numpy())
        np.testing.assert_allclose(bi(x, training=False).numpy(), bi.eval()(x).numpy(), rtol=1e-12)


@pytest.mark.parametrize("rate", [1.0, -0.1, "0.5", None])
def test_a_bad_dropout_rate_is_named_by_its_layer(rate):
    for name, make in LAYERS.items():
        for what in ("dropout", "recurrent_dropout"):
            with pytest.raises(ValueError, match=rf"{name}: {what} must be in \[0, 1\), got {rate!r}"):
                make(3, 4, **{what: rate})


# ------------------------------------------------------------------ stateful layers
@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("traced", [False, True])
def test_a_stateful_layer_carries_its_final_states_to_the_next_call(name, traced):
    layer = _randomized(LAYERS[name](3, 4, return_sequences=True, return_state=True, stateful=True, dtype="float64"))
    call = tl.function(lambda x, **kw: layer(x, **kw)) if traced else layer  # a traced first call too
    x = RNG.normal(size=(2, 7, 3))
    n = 2 if name == "LSTM" else 1
    zeros = [np.zeros((2, 4))] * n
    seq, states = _reference(name, x, _weights(layer), zeros)
    assert layer.states is None
    first, second, third = call(x[:, :3]), call(x[:, 3:6]), call(x[:, 6:])
    got = np.concatenate([first[0].numpy(), second[0].numpy(), third[0].numpy()], 1)
    np.testing.assert_allclose(got, seq, rtol=1e-12, atol=1e-14)  # three chunks = the whole sequence
    for g, v, w in zip(third[1:], layer.states, states, strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(v.numpy(), w, rtol=1e-12, atol=1e-14)
    layer.reset_states()
    np.testing.assert_allclose(call(x[:, :3])[0].numpy(), seq[:, :3], rtol=1e-12, atol=1e-14)
    given = [RNG.normal(size=(2, 4)) for _ in range(n)]  # given states win, and the call's final states are kept
    _, want = _reference(name, x[:, :3], _weights(layer), given)
    call(x[:, :3], initial_state=given)
    for v, w in zip(layer.states, want, strict=True):
        np.testing.assert_allclose(v.numpy(), w, rtol=1e-12, atol=1e-14)
    mask = np.array([[1, 1, 0, 1, 0, 0, 1], [1, 1, 1, 1, 1, 1, 0]], bool)  # masked steps keep the states
    layer.reset_states()
    call(x[:, :4], mask=mask[:, :4])
    _, *got = call(x[:, 4:], mask=mask[:, 4:])
    whole = LAYERS[name](3, 4, return_state=True, dtype="float64")
    whole.load_state_dict(layer.state_dict())
    _, *want = whole(x, mask=mask)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)


def test_stateful_states_stay_out_of_variables_and_gradients_stop_at_the_call():
    layer = tl.nn.LSTM(3, 4, stateful=True, dtype="float64", seed=0)
    before = sorted(layer.state_dict())
    x = RNG.normal(size=(2, 6, 3))
    with tl.GradientTape() as tape:  # the states are assigned while the tape records: no error
        layer(x[:, :3])
        h, c = (tl.tensor(v.numpy()) for v in layer.states)
        loss = tl.sum(layer(x[:, 3:]))
    grads = tape.gradient(loss, layer.trainable_variables)
    assert sorted(layer.state_dict()) == before == sorted(grads)  # as Keras: no part of the weights
    plain = tl.nn.LSTM(3, 4, dtype="float64", seed=0)
    with tl.GradientTape() as tape:  # truncated backpropagation: the carried states are constants
        want = tape.gradient(tl.sum(plain(x[:, 3:], initial_state=[h, c])), plain.trainable_variables)
    for key in want:
        np.testing.assert_allclose(grads[key].numpy(), want[key].numpy(), rtol=1e-12)
    bi = tl.nn.Bidirectional(tl.nn.GRU(3, 4, stateful=True, return_sequences=True, dtype="float64"))
    assert bi.states is None
    first = bi(x).numpy()
    assert [v.shape for v in bi.states] == [(2, 4), (2, 4)]
    assert bi.states == (*bi.forward_layer.states, *bi.backward_layer.states)
    assert not np.allclose(bi(x).numpy(), first)  # the carried states start the second call
    bi.reset_states()  # both halves, as Keras' Bidirectional.reset_states
    np.testing.assert_allclose(bi(x).numpy(), first, rtol=1e-12)


def test_a_stateful_layer_names_a_batch_it_cannot_carry():
    layer = tl.nn.GRU(3, 4, stateful=True)
    layer(np.ones((2, 5, 3), np.float32))
    with pytest.raises(ValueError, match=r"GRU: a stateful layer's batch size is fixed: its states are \(2, 4\), got "
                       r"input shape \(3, 5, 3\) \(float32\)"):  # fmt: skip
        layer(np.ones((3, 5, 3), np.float32))
    rnn = tl.nn.SimpleRNN(3, 4, stateful=True)
    f = tl.function(lambda x: rnn(x), input_signature=[tl.TensorSpec((None, 5, 3), tl.float32)])
    with pytest.raises(ValueError, match=r"SimpleRNN: a stateful layer needs a known batch size, got input shape "
                       r"\(None, 5, 3\)"):  # fmt: skip
        f(np.ones((2, 5, 3), np.float32))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_stateful_layers_match_keras(name):
    keras = pytest.importorskip("keras")
    layer = _randomized(LAYERS[name](3, 4, return_sequences=True, stateful=True))
    theirs = getattr(keras.layers, name)(4, return_sequences=True, stateful=True)
    x = RNG.normal(size=(2, 6, 3)).astype(np.float32)
    theirs.build((2, 3, 3))
    theirs.set_weights(_weights(layer))
    for part in (x[:, :3], x[:, 3:]):
        np.testing.assert_allclose(layer(part).numpy(), np.asarray(theirs(part)), rtol=1e-5, atol=1e-5)
    layer.reset_states(), theirs.reset_states()
    np.testing.assert_allclose(layer(x).numpy(), np.asarray(theirs(x)), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ unroll, and Bidirectional's halves
@pytest.mark.parametrize(("name", "options"), _VARIANTS)
def test_unroll_runs_the_steps_without_a_scan_with_the_same_values_and_gradients(name, options):
    layer = _randomized(LAYERS[name](3, 4, return_sequences=True, return_state=True, unroll=True, dtype="float64",
                                     **options))  # fmt: skip
    x = RNG.normal(size=(2, 5, 3))
    mask = np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0]], bool)
    n = 2 if name == "LSTM" else 1
    seq, states = _reference(name, x, _weights(layer), [np.zeros((2, 4))] * n, None, None,
                             options.get("reset_after", True))  # fmt: skip
    f = tl.function(lambda t, m=None: layer(t, mask=m))
    for got in (layer(x), f(x)):
        for g, w in zip(got, [seq, *states], strict=True):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)
    assert "Scan" not in {node.op.name for node in f.get_graph(x).nodes}
    scanned = LAYERS[name].from_config({**layer.get_config(), "unroll": False})
    scanned.load_state_dict(layer.state_dict())
    for g, w in zip(f(x, mask), scanned(x, mask=mask), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-14)
    assert layer(x[:, :0])[0].shape == (2, 0, 4)
    tl.testing.check_grads(lambda t: layer(t, mask=mask[:, :3])[0], (x[:, :3, :],), order=2)


def test_bidirectional_names_halves_that_cannot_merge():
    gru = tl.nn.GRU(3, 4, return_sequences=True)
    with pytest.raises(ValueError, match=r"Bidirectional: layer and backward_layer must have the same input_size and "
                       r"units for merge_mode='sum', got GRU\(3, 4\) and GRU\(3, 5\)"):  # fmt: skip
        tl.nn.Bidirectional(gru, "sum", backward_layer=tl.nn.GRU(3, 5, return_sequences=True, go_backwards=True))
    with pytest.raises(ValueError, match=r"must have the same input_size for merge_mode='concat', got GRU\(3, 4\) and"):
        tl.nn.Bidirectional(gru, backward_layer=tl.nn.GRU(2, 4, return_sequences=True, go_backwards=True))
    wide = tl.nn.Bidirectional(gru, backward_layer=tl.nn.GRU(3, 5, return_sequences=True, go_backwards=True))
    assert wide(np.ones((2, 6, 3), np.float32)).shape == (2, 6, 9)  # concat takes different units, as Keras


class Centred(tl.Module):
    """Reads a data set in ``__init__`` and keeps only its mean."""

    def __init__(self, data):
        super().__init__()
        self.mean = tl.Variable(np.float64(data.mean()))


def test_recorded_arguments_keep_no_data_alive_and_pickle_as_before():
    import gc
    import pickle
    import weakref

    data = np.ones((100, 100))
    alive = weakref.ref(data)
    model = Centred(data)
    del data
    gc.collect()
    assert alive() is None  # the constructor's array is not kept by the recorded arguments
    assert len(pickle.dumps(model)) < 2000
    with pytest.raises(
        TypeError, match=r"Centred.get_config: argument data is a ndarray of shape \(3, 3\) \(float64\), which"
    ):
        Centred(np.ones((3, 3))).get_config()
    init = lambda shape, seed=None, dtype=None: tl.ones(shape, dtype=dtype)
    dense = tl.nn.Dense(2, 3, kernel_initializer=init)  # a lambda initializer, which Dense does not keep
    copy = pickle.loads(pickle.dumps(dense))
    np.testing.assert_array_equal(copy.kernel.numpy(), np.ones((2, 3)))
    bi = tl.nn.Bidirectional(tl.nn.LSTM(3, 4, activation=lambda x: x * 0.5, kernel_initializer=init))
    np.testing.assert_array_equal(bi.backward_layer.kernel.numpy(), np.ones((3, 16)))  # mirrored with them
    assert bi.backward_layer.activation(tl.tensor(2.0)).numpy() == 1.0


# ------------------------------------------------------------------ any sizes, masks, directions and states
@given(
    name=st.sampled_from(sorted(LAYERS)),
    sizes=st.tuples(st.integers(1, 3), st.integers(0, 4), st.integers(1, 3), st.integers(1, 3)),
    go_backwards=st.booleans(),
    return_sequences=st.booleans(),
    masked=st.booleans(),
    given_state=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_recurrent_call_follows_the_masked_equations(
    name, sizes, go_backwards, return_sequences, masked, given_state, seed
):
    """The layer against the NumPy cell stepped one time step at a time, masked steps keeping the states and
    repeating the previous output (zeros before the first), from the last step with go_backwards."""
    batch, time, features, units = sizes
    rng = np.random.default_rng(seed)
    layer = LAYERS[name](features, units, return_sequences=return_sequences, return_state=True,
                         go_backwards=go_backwards, dtype="float64")  # fmt: skip
    for v in (layer.kernel, layer.recurrent_kernel, layer.bias):
        v.assign(rng.normal(size=v.shape))
    x = rng.normal(size=(batch, time, features))
    mask = rng.random((batch, time)) < 0.6 if masked else np.ones((batch, time), bool)
    n = 2 if name == "LSTM" else 1
    states = [rng.normal(size=(batch, units)) if given_state else np.zeros((batch, units)) for _ in range(n)]
    got = layer(x, initial_state=states if given_state else None, mask=mask if masked else None)
    order = range(time - 1, -1, -1) if go_backwards else range(time)
    output, outputs = np.zeros((batch, units)), []
    for t in order:
        _, new = _reference(name, x[:, t : t + 1], _weights(layer), states)
        keep = mask[:, t : t + 1]
        states = [np.where(keep, a, b) for a, b in zip(new, states)]
        output = np.where(keep, new[0], output)
        outputs.append(output)
    first = np.stack(outputs, 1) if return_sequences and time else states[0]
    if return_sequences and not time:
        first = np.zeros((batch, 0, units))
    for g, w in zip(got, [first, *states], strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-10, atol=1e-12)

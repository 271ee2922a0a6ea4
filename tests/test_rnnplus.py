"""Recurrent layers as Keras and PyTorch users expect them (tl.nn.SimpleRNN, LSTM, GRU, Bidirectional) and layer
configs: Bidirectional's nesting of outputs and states, dropout and recurrent dropout, stateful layers and
``get_config``/``from_config``.  References: a NumPy loop of each cell's equations written here (runs in CI),
float64 central differences, and Keras 3 / PyTorch with the same weights where they are installed."""

import json

import numpy as np
import pytest

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
    for name in LAYERS:
        ours = tl.nn.Bidirectional(
            _randomized(LAYERS[name](3, 4, return_sequences=return_sequences, return_state=True)), merge_mode
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

"""tl.nn.SimpleRNN, LSTM and GRU (Keras' layers, on tl.scan, also with go_backwards) and Bidirectional: a NumPy
loop of the equations, float64 differences, traced == eager (also for an unknown batch size), and PyTorch's and
Keras' layers with the same weights when they are installed."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _lstm_reference(x, kernel, recurrent, bias, h, c):
    u, hs = h.shape[1], []
    for t in range(x.shape[1]):
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = (
            _sigmoid(z[:, :u]),
            _sigmoid(z[:, u : 2 * u]),
            np.tanh(z[:, 2 * u : 3 * u]),
            _sigmoid(z[:, 3 * u :]),
        )
        c = f * c + i * g
        h = o * np.tanh(c)
        hs.append(h)
    return np.stack(hs, 1), h, c


def _gru_reference(x, kernel, recurrent, bias, h, reset_after):
    u, hs = h.shape[1], []
    for t in range(x.shape[1]):
        if reset_after:
            zx, zh = x[:, t] @ kernel + bias[0], h @ recurrent + bias[1]
            update, reset = _sigmoid(zx[:, :u] + zh[:, :u]), _sigmoid(zx[:, u : 2 * u] + zh[:, u : 2 * u])
            candidate = np.tanh(zx[:, 2 * u :] + reset * zh[:, 2 * u :])
        else:
            zx, zh = x[:, t] @ kernel + bias, h @ recurrent[:, : 2 * u]
            update, reset = _sigmoid(zx[:, :u] + zh[:, :u]), _sigmoid(zx[:, u : 2 * u] + zh[:, u:])
            candidate = np.tanh(zx[:, 2 * u :] + (reset * h) @ recurrent[:, 2 * u :])
        h = update * h + (1 - update) * candidate
        hs.append(h)
    return np.stack(hs, 1), h


def _randomized(layer):
    for v in (layer.kernel, layer.recurrent_kernel, layer.bias):
        v.assign(RNG.normal(size=v.shape) * 0.5)
    return layer


def test_lstm_follows_the_gate_equations_and_starts_its_forget_bias_at_one():
    layer = tl.nn.LSTM(3, 4, return_sequences=True, return_state=True, seed=0, dtype="float64")
    np.testing.assert_array_equal(layer.bias.numpy(), np.repeat([0.0, 1.0, 0.0, 0.0], 4))
    _randomized(layer)
    x, h0, c0 = RNG.normal(size=(2, 6, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4))
    weights = [v.numpy() for v in (layer.kernel, layer.recurrent_kernel, layer.bias)]
    expected = _lstm_reference(x, *weights, h0, c0)
    for got, want in zip(layer(x, initial_state=(h0, c0)), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    zeros = np.zeros((2, 4))
    last = tl.nn.LSTM(3, 4, seed=0, dtype="float64")
    for v, w in zip((last.kernel, last.recurrent_kernel, last.bias), weights):
        v.assign(w)
    np.testing.assert_allclose(last(x).numpy(), _lstm_reference(x, *weights, zeros, zeros)[1], rtol=1e-12)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_follows_the_gate_equations(reset_after):
    layer = _randomized(tl.nn.GRU(3, 5, return_sequences=True, reset_after=reset_after, seed=1, dtype="float64"))
    assert layer.bias.shape == ((2, 15) if reset_after else (15,))
    x, h0 = RNG.normal(size=(3, 4, 3)), RNG.normal(size=(3, 5))
    weights = [v.numpy() for v in (layer.kernel, layer.recurrent_kernel, layer.bias)]
    np.testing.assert_allclose(
        layer(x, initial_state=h0).numpy(), _gru_reference(x, *weights, h0, reset_after)[0], rtol=1e-12
    )


@pytest.mark.parametrize(
    "make", [lambda: tl.nn.LSTM(2, 3, seed=2, dtype="float64"), lambda: tl.nn.GRU(2, 3, seed=2, dtype="float64")]
)
def test_recurrent_gradients_match_differences_and_trace(make):
    layer = _randomized(make())
    x = tl.tensor(RNG.normal(size=(2, 4, 2)))
    tl.testing.check_grads(lambda x: layer(x), (x,), order=1)

    def loss(x):
        with tl.GradientTape() as tape:
            y = tl.sum(layer(x) ** 2)
        return y, tape.gradient(y, layer.trainable_variables)

    eager, traced = loss(x), tl.function(loss)(x)
    np.testing.assert_allclose(traced[0].numpy(), eager[0].numpy(), rtol=1e-12)
    for name in eager[1]:
        np.testing.assert_allclose(traced[1][name].numpy(), eager[1][name].numpy(), rtol=1e-10)
    f = tl.function(lambda x: layer(x), input_signature=[tl.TensorSpec((None, 4, 2), "float64")])
    np.testing.assert_allclose(f(x).numpy(), layer(x).numpy(), rtol=1e-12)  # an unknown batch size


def test_recurrent_layers_match_pytorch_values_and_weight_gradients():
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(3, 5, 2))
    lstm = _randomized(tl.nn.LSTM(2, 4, return_sequences=True, seed=0, dtype="float64"))
    theirs = torch.nn.LSTM(2, 4, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # PyTorch's gate order is Keras': input, forget, cell, output
        theirs.weight_ih_l0.copy_(torch.tensor(lstm.kernel.numpy().T))
        theirs.weight_hh_l0.copy_(torch.tensor(lstm.recurrent_kernel.numpy().T))
        theirs.bias_ih_l0.copy_(torch.tensor(lstm.bias.numpy()))
        theirs.bias_hh_l0.zero_()
    out, _ = theirs(torch.tensor(x))
    (out**2).sum().backward()
    with tl.GradientTape() as tape:
        y = lstm(x)
        loss = tl.sum(y**2)
    grads = tape.gradient(loss, lstm.trainable_variables)
    np.testing.assert_allclose(y.numpy(), out.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(grads["kernel"].numpy(), theirs.weight_ih_l0.grad.numpy().T, rtol=1e-9)
    np.testing.assert_allclose(grads["recurrent_kernel"].numpy(), theirs.weight_hh_l0.grad.numpy().T, rtol=1e-9)
    np.testing.assert_allclose(grads["bias"].numpy(), theirs.bias_ih_l0.grad.numpy(), rtol=1e-9)

    gru = _randomized(tl.nn.GRU(2, 4, return_sequences=True, seed=0, dtype="float64"))
    theirs = torch.nn.GRU(2, 4, batch_first=True, dtype=torch.float64)
    order = np.r_[4:8, 0:4, 8:12]  # PyTorch's gates: reset, update, new; Keras': update, reset, candidate
    with torch.no_grad():
        theirs.weight_ih_l0.copy_(torch.tensor(gru.kernel.numpy()[:, order].T))
        theirs.weight_hh_l0.copy_(torch.tensor(gru.recurrent_kernel.numpy()[:, order].T))
        theirs.bias_ih_l0.copy_(torch.tensor(gru.bias.numpy()[0, order]))
        theirs.bias_hh_l0.copy_(torch.tensor(gru.bias.numpy()[1, order]))
    np.testing.assert_allclose(gru(x).numpy(), theirs(torch.tensor(x))[0].detach().numpy(), rtol=1e-10)


def test_recurrent_layers_match_keras():
    tf = pytest.importorskip("tensorflow")
    x = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    for ours, theirs in [
        (tl.nn.LSTM(3, 4, return_sequences=True, seed=0), tf.keras.layers.LSTM(4, return_sequences=True)),
        (tl.nn.GRU(3, 4, return_sequences=True, seed=0), tf.keras.layers.GRU(4, return_sequences=True)),
        (tl.nn.GRU(3, 4, reset_after=False, seed=0), tf.keras.layers.GRU(4, reset_after=False)),
    ]:
        _randomized(ours)
        theirs.build(x.shape)
        theirs.set_weights([ours.kernel.numpy(), ours.recurrent_kernel.numpy(), ours.bias.numpy()])
        np.testing.assert_allclose(ours(x).numpy(), theirs(x).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tl.nn.LSTM(3, 4)(np.ones((2, 5, 2))), r"LSTM: input must be \(batch, time, input_size=3\), got shape"),
        (lambda: tl.nn.GRU(3, 4)(np.ones((5, 3))), r"GRU: input must be \(batch, time, input_size=3\)"),
        (lambda: tl.nn.LSTM(3, 4)(np.ones((2, 5, 3)), initial_state=np.zeros((2, 4))), "initial_state must be 2"),
        (lambda: tl.nn.GRU(3, 4)(np.ones((2, 5, 3)), initial_state=[np.zeros((2, 3))]), r"shape \(batch, units=4\)"),
        (lambda: tl.nn.LSTM(3, 0), "units must be a positive integer"),
    ],
)
def test_bad_recurrent_inputs_raise_one_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_recurrent_layers_traced_with_unknown_steps_run_any_number_unless_unrolled():
    # Keras' default Input((None, features)): one graph for every sequence length (tl.scan over a run-time size).
    lstm = tl.nn.LSTM(3, 4, seed=0, return_sequences=True)
    f = tl.function(lambda x: lstm(x), input_signature=[tl.TensorSpec((None, None, 3), "float32")])
    for steps in (5, 2):
        x = RNG.normal(size=(2, steps, 3)).astype(np.float32)
        np.testing.assert_allclose(f(x).numpy(), lstm(x).numpy(), rtol=1e-6, atol=1e-6)
    unrolled = tl.nn.LSTM(3, 4, seed=0, unroll=True)
    with pytest.raises(ValueError, match="LSTM: unroll=True needs the number of time steps"):
        tl.function(lambda x: unrolled(x), input_signature=[tl.TensorSpec((None, None, 3), "float32")])(x)


# ---------------------------------------------------------------- SimpleRNN, go_backwards, Bidirectional
def _rnn_reference(x, kernel, recurrent, bias, h):
    hs = []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ kernel + h @ recurrent + bias)
        hs.append(h)
    return np.stack(hs, 1), h


def test_simple_rnn_follows_its_equation_eagerly_traced_and_in_gradients():
    layer = _randomized(tl.nn.SimpleRNN(3, 4, return_sequences=True, return_state=True, seed=0, dtype="float64"))
    x, h0 = RNG.normal(size=(2, 6, 3)), RNG.normal(size=(2, 4))
    weights = [v.numpy() for v in (layer.kernel, layer.recurrent_kernel, layer.bias)]
    want_seq, want_h = _rnn_reference(x, *weights, h0)
    for run in (layer, tl.function(layer)):
        seq, h = run(x, initial_state=[h0])
        np.testing.assert_allclose(seq.numpy(), want_seq, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-12, atol=1e-13)
    w = RNG.normal(size=want_seq.shape)
    tl.testing.check_grads(lambda t: tl.sum(layer(t)[0] * w), [x], order=1)


@pytest.mark.parametrize("make", [tl.nn.SimpleRNN, tl.nn.LSTM, tl.nn.GRU])
def test_go_backwards_runs_the_reversed_sequence_and_returns_its_outputs_in_that_order(make):
    # Keras' go_backwards: the same layer on x[:, ::-1], outputs in processing order.
    forward = _randomized(make(3, 4, return_sequences=True, seed=0, dtype="float64"))
    backward = make(3, 4, return_sequences=True, go_backwards=True, seed=0, dtype="float64")
    for a, b in zip(forward.trainable_variables.values(), backward.trainable_variables.values()):
        b.assign(a)
    x = RNG.normal(size=(2, 5, 3))
    np.testing.assert_allclose(backward(x).numpy(), forward(x[:, ::-1]).numpy(), rtol=1e-13, atol=1e-13)
    assert "go_backwards=True" in repr(backward)


def _bidirectional_reference(x, fwd, bwd, merge):
    f_seq, _ = _rnn_reference(x, *fwd, np.zeros((x.shape[0], fwd[1].shape[0])))
    b_seq, _ = _rnn_reference(x[:, ::-1], *bwd, np.zeros((x.shape[0], bwd[1].shape[0])))
    return merge(f_seq, b_seq[:, ::-1]), merge(f_seq[:, -1], b_seq[:, -1])


@pytest.mark.parametrize(
    "mode, merge",
    [
        ("concat", lambda a, b: np.concatenate([a, b], -1)),
        ("sum", np.add),
        ("mul", np.multiply),
        ("ave", lambda a, b: (a + b) / 2),
    ],
)
def test_bidirectional_merges_a_forward_and_a_backward_pass(mode, merge):
    x = RNG.normal(size=(2, 5, 3))
    for sequences in (True, False):
        layer = _randomized(tl.nn.SimpleRNN(3, 4, return_sequences=sequences, seed=0, dtype="float64"))
        bi = tl.nn.Bidirectional(layer, merge_mode=mode)
        _randomized(bi.backward_layer)
        assert bi.backward_layer.go_backwards and bi.backward_layer.kernel is not layer.kernel
        weights = [[v.numpy() for v in (m.kernel, m.recurrent_kernel, m.bias)] for m in (layer, bi.backward_layer)]
        want = _bidirectional_reference(x, *weights, merge)[0 if sequences else 1]
        # (an atol too: "ave" and "sum" cancel to ~1e-5 in places)
        np.testing.assert_allclose(bi(x).numpy(), want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(tl.function(bi)(x).numpy(), want, rtol=1e-12, atol=1e-14)
    assert sorted(bi.trainable_variables) == ["backward_layer", "forward_layer"]


def test_bidirectional_states_and_initial_states():
    lstm = _randomized(tl.nn.LSTM(3, 4, return_sequences=True, return_state=True, seed=0, dtype="float64"))
    bi = tl.nn.Bidirectional(lstm, merge_mode=None)
    _randomized(bi.backward_layer)
    x = RNG.normal(size=(2, 5, 3))
    states = [RNG.normal(size=(2, 4)) for _ in range(4)]
    y, z, h_f, c_f, h_b, c_b = bi(x, initial_state=states)  # Keras' flat nesting
    want_f = _lstm_reference(x, *(v.numpy() for v in (lstm.kernel, lstm.recurrent_kernel, lstm.bias)), *states[:2])
    back = bi.backward_layer
    want_b = _lstm_reference(
        x[:, ::-1], *(v.numpy() for v in (back.kernel, back.recurrent_kernel, back.bias)), *states[2:]
    )
    np.testing.assert_allclose(y.numpy(), want_f[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(z.numpy(), want_b[0][:, ::-1], rtol=1e-12, atol=1e-14)
    for got, want in zip((h_f, c_f, h_b, c_b), (*want_f[1:], *want_b[1:])):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match=r"Bidirectional: initial_state must hold .* an even number, got 3"):
        bi(x, initial_state=states[:3])
    with pytest.raises(ValueError, match=r"Bidirectional: merge_mode must be one of"):
        tl.nn.Bidirectional(lstm, merge_mode="max")
    with pytest.raises(TypeError, match=r"Bidirectional: layer must be a SimpleRNN, LSTM or GRU, got Dense"):
        tl.nn.Bidirectional(tl.nn.Dense(3, 4))
    with pytest.raises(ValueError, match=r"backward_layer must be a recurrent layer with go_backwards opposite"):
        tl.nn.Bidirectional(lstm, backward_layer=tl.nn.LSTM(3, 4, return_sequences=True, return_state=True))


def test_bidirectional_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(2, 6, 3))
    for make, cls in [(tl.nn.SimpleRNN, torch.nn.RNN), (tl.nn.LSTM, torch.nn.LSTM), (tl.nn.GRU, torch.nn.GRU)]:
        bi = tl.nn.Bidirectional(_randomized(make(3, 4, return_sequences=True, seed=0, dtype="float64")))
        _randomized(bi.backward_layer)
        theirs = cls(3, 4, batch_first=True, bidirectional=True, dtype=torch.float64)
        order = np.r_[4:8, 0:4, 8:12] if make is tl.nn.GRU else slice(None)  # PyTorch's GRU gates: reset first
        with torch.no_grad():
            for suffix, layer in (("l0", bi.forward_layer), ("l0_reverse", bi.backward_layer)):
                bias = layer.bias.numpy()
                getattr(theirs, f"weight_ih_{suffix}").copy_(torch.tensor(layer.kernel.numpy()[:, order].T))
                getattr(theirs, f"weight_hh_{suffix}").copy_(torch.tensor(layer.recurrent_kernel.numpy()[:, order].T))
                ih, hh = (bias[0], bias[1]) if make is tl.nn.GRU else (bias, np.zeros_like(bias))
                getattr(theirs, f"bias_ih_{suffix}").copy_(torch.tensor(ih[order]))
                getattr(theirs, f"bias_hh_{suffix}").copy_(torch.tensor(hh[order]))
        np.testing.assert_allclose(bi(x).numpy(), theirs(torch.tensor(x))[0].detach().numpy(), rtol=1e-10)


def test_bidirectional_matches_keras():
    tf = pytest.importorskip("tensorflow")
    x = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    bi = tl.nn.Bidirectional(_randomized(tl.nn.LSTM(3, 4, return_sequences=True, seed=0)))
    _randomized(bi.backward_layer)
    theirs = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4, return_sequences=True))
    theirs.build(x.shape)
    weights = [
        m.numpy()
        for layer in (bi.forward_layer, bi.backward_layer)
        for m in (layer.kernel, layer.recurrent_kernel, layer.bias)
    ]
    theirs.set_weights(weights)
    np.testing.assert_allclose(bi(x).numpy(), theirs(x).numpy(), rtol=1e-4, atol=1e-5)

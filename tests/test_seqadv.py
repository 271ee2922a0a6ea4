"""Adversarial cases for the recurrent, attention and transformer layers: mixed dtypes, empty sequences,
``activation=None``, and mask/input shapes that were silently broadcast or failed in an unnamed inner op."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(6)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _lstm_numpy(x, kernel, recurrent, bias, h, c, act=np.tanh, gate=_sigmoid):
    u = h.shape[1]
    hs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = gate(z[:, :u]), gate(z[:, u : 2 * u]), act(z[:, 2 * u : 3 * u]), gate(z[:, 3 * u :])
        c = f * c + i * g
        h = o * act(c)
        hs.append(h)
    return np.stack(hs, 1) if hs else np.zeros((x.shape[0], 0, u)), h, c


def _lstm(**kwargs):
    layer = tl.nn.LSTM(3, 4, return_sequences=True, return_state=True, seed=0, dtype="float64", **kwargs)
    for v in layer.trainable_variables.values():
        v.assign(RNG.normal(size=v.shape) * 0.5)
    return layer, [v.numpy() for v in (layer.kernel, layer.recurrent_kernel, layer.bias)]


@pytest.mark.parametrize("state_dtype", [None, "float32"])
def test_a_float64_recurrent_layer_takes_float32_inputs_and_states(state_dtype):
    # The zero states took the input's float32 while the float64 steps returned float64: tl.scan's TypeError.
    layer, weights = _lstm()
    x = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    h0 = c0 = np.zeros((2, 4), state_dtype or np.float64)
    got = layer(x, initial_state=None if state_dtype is None else (h0, c0))
    want = _lstm_numpy(x.astype(np.float64), *weights, h0.astype(np.float64), c0.astype(np.float64))
    for g, w in zip(got, want):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)
    gru = tl.nn.GRU(3, 4, seed=0, dtype="float64")
    assert gru(x).dtype == np.float64 and gru(x.astype(np.int64)).dtype == np.float64


def test_a_sequence_of_no_steps_gives_the_initial_state_and_an_empty_sequence():
    # x[:, 0] for the zero state raised a StridedSlice IndexError naming neither the layer nor its input.
    layer, _ = _lstm()
    h0, c0 = RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4))
    out, h, c = layer(np.ones((2, 0, 3)), initial_state=(h0, c0))
    assert out.shape == (2, 0, 4)
    np.testing.assert_array_equal(h.numpy(), h0)
    np.testing.assert_array_equal(c.numpy(), c0)
    assert tl.nn.GRU(3, 4, seed=0)(np.ones((2, 0, 3), np.float32)).numpy().tolist() == [[0.0] * 4] * 2
    f = tl.function(lambda x: layer(x)[1], input_signature=[tl.TensorSpec((None, 0, 3), "float64")])
    np.testing.assert_array_equal(f(np.ones((3, 0, 3))).numpy(), np.zeros((3, 4)))


def test_recurrent_activation_none_is_the_identity_as_in_keras():
    # The step called None: "'NoneType' object is not callable".
    layer, weights = _lstm(activation=None)
    x, h0, c0 = RNG.normal(size=(2, 3, 3)), np.zeros((2, 4)), np.zeros((2, 4))
    np.testing.assert_allclose(layer(x)[0].numpy(), _lstm_numpy(x, *weights, h0, c0, act=lambda z: z)[0], rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: tl.nn.LSTM(3, 4)(np.ones((2, 5, 3)), initial_state=[np.zeros((2, 4), int)] * 2),
            TypeError,
            r"LSTM: initial_state must be floating-point, got \['int64', 'int64'\]",
        ),
        (
            lambda: tl.nn.GRU(3, 4)(np.ones((2, 5, 3)), initial_state=[]),
            ValueError,
            r"GRU: initial_state must be 1 tensor\(s\) of shape \(batch, units=4\), got \[\] \(input shape",
        ),
        (
            lambda: tl.nn.TransformerEncoderLayer(8, 2, 16, activation=None),
            ValueError,
            "TransformerEncoderLayer: activation must be a callable or the name",
        ),
    ],
)
def test_bad_recurrent_and_transformer_arguments_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


E, H, N, L, S = 4, 2, 3, 2, 5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        # (num_heads, L, S) was reshaped to (1, heads, L, S) and applied to every batch entry.
        ({"attn_mask": np.zeros((H, L, S), bool)}, r"attn_mask must be \(L, S\) = \(2, 5\) or .* = \(6, 2, 5\), got"),
        ({"attn_mask": np.zeros((1, S), bool)}, r"attn_mask must be .* got \(1, 5\) \(bool\)"),
        ({"attn_mask": np.zeros((L, S - 1))}, r"attn_mask must be .* got \(2, 4\) \(float64\)"),
        # (1, S) was broadcast over the batch; (2, S) failed in a Select naming neither the layer nor the mask.
        (
            {"key_padding_mask": np.zeros((1, S), bool)},
            r"key_padding_mask must be \(batch, S\) = \(3, 5\), got \(1, 5\)",
        ),
        (
            {"key_padding_mask": np.zeros((2, S), bool)},
            r"key_padding_mask must be \(batch, S\) = \(3, 5\), got \(2, 5\)",
        ),
        # a key of batch 1 was broadcast; unequal key and value lengths failed in BatchMatMulV2.
        ({"key": np.ones((1, S, E))}, r"must share the batch size.*key \(1, 5, 4\) \(float64\)"),
        ({"value": np.ones((N, S - 2, E))}, r"key and value the length; .* value \(3, 3, 4\) \(float64\)"),
    ],
)
def test_attention_checks_the_shapes_of_its_masks_and_inputs(kwargs, match):
    torch = pytest.importorskip("torch")
    mha = tl.nn.MultiHeadAttention(E, H, seed=0, dtype="float64")
    q, k = np.ones((N, L, E)), np.ones((N, S, E))
    kwargs = {"key": k, **kwargs}
    with pytest.raises(ValueError, match="MultiHeadAttention: .*" + match):
        mha(q, **kwargs)
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    args = {a: torch.tensor(b) for a, b in kwargs.items()}
    key = args.pop("key")
    with pytest.raises((RuntimeError, AssertionError)):  # PyTorch refuses each of them too
        theirs(torch.tensor(q), key, args.pop("value", key), **args)


@pytest.mark.parametrize("bias", [True, False])
def test_transformer_layers_hold_pytorchs_parameters(bias):
    # bias=False kept the LayerNorms' offsets (trainable): PyTorch drops them ("Linear and LayerNorm layers will
    # not learn an additive bias"); after a training step the two layers differed.
    torch = pytest.importorskip("torch")
    for ours, theirs in [
        (tl.nn.TransformerEncoderLayer, torch.nn.TransformerEncoderLayer),
        (tl.nn.TransformerDecoderLayer, torch.nn.TransformerDecoderLayer),
    ]:
        layer = ours(8, 2, 16, bias=bias, seed=0)
        reference = theirs(8, 2, 16, bias=bias, batch_first=True)
        assert layer.num_parameters() == sum(p.numel() for p in reference.parameters())
        assert ("offset" in layer.trainable_variables["norm1"]) == bias


def test_a_per_head_mask_traces_with_unknown_lengths():
    # The (batch * heads, L, S) mask was split by a reshape with three unknown sizes: a reshape TypeError.
    mha = tl.nn.MultiHeadAttention(E, H, seed=0, dtype="float64")
    q, k = RNG.normal(size=(N, L, E)), RNG.normal(size=(N, S, E))
    mask = RNG.random((N * H, L, S)) < 0.4
    mask[..., 0] = False
    unknown = tl.TensorSpec((None, None, E), "float64")
    f = tl.function(
        lambda q, k, m: mha(q, k, attn_mask=m, average_attn_weights=False),
        input_signature=[unknown, unknown, tl.TensorSpec((None, None, None), "bool")],
    )
    out, weights = f(q, k, mask)
    np.testing.assert_allclose(out.numpy(), mha(q, k, attn_mask=mask)[0].numpy(), rtol=1e-12)
    np.testing.assert_array_equal(weights.numpy() == 0, mask.reshape(N, H, L, S))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda layer: layer(np.ones((3, 8))), r"TransformerEncoderLayer: src must be \(batch, length, d_model=8\)"),
        (lambda layer: layer(np.ones((2, 3, 4))), r"src must be .*, got shape \(2, 3, 4\) \(float64\)"),
    ],
)
def test_transformer_layers_name_themselves_for_bad_inputs(call, match):
    # The errors named MultiHeadAttention's query, an argument the caller never passed.
    with pytest.raises(ValueError, match=match):
        call(tl.nn.TransformerEncoderLayer(8, 2, 16, seed=0))
    decoder = tl.nn.TransformerDecoderLayer(8, 2, 16, seed=0)
    with pytest.raises(ValueError, match=r"TransformerDecoderLayer: memory must be \(batch, length, d_model=8\)"):
        decoder(np.ones((2, 3, 8)), np.ones((2, 5, 4)))


@pytest.mark.parametrize("scale", [None, -0.1])
def test_float16_attention_scales_before_the_product(scale):
    # q @ k^T of a 64-wide head of values ~100 overflowed float16 before it was scaled: inf scores, NaN outputs
    # (PyTorch scales q and k by sqrt(scale) first and stays finite).
    q, k = (
        (RNG.normal(size=(1, 3, 64)) * 120).astype(np.float16),
        (RNG.normal(size=(1, 4, 64)) * 120).astype(np.float16),
    )
    v = RNG.normal(size=(1, 4, 2)).astype(np.float16)
    got = tl.nn.scaled_dot_product_attention(q, k, v, scale=scale).numpy()
    scores = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) * (1 / 8 if scale is None else scale)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    want = weights / weights.sum(-1, keepdims=True) @ v.astype(np.float64)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, want, atol=2e-3)


def test_a_mask_of_the_wrong_dtype_is_named_with_its_shape():
    mha = tl.nn.MultiHeadAttention(E, H, seed=0)
    with pytest.raises(
        TypeError, match=r"MultiHeadAttention: key_padding_mask must be bool or floating, got shape \(3, 5\) \(int64\)"
    ):
        mha(np.ones((N, L, E)), np.ones((N, S, E)), key_padding_mask=np.zeros((N, S), np.int64))


@pytest.mark.parametrize("seed", ["abc", 1.5, -1, True])
@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda seed: tl.nn.LSTM(3, 4, seed=seed), "LSTM"),
        (lambda seed: tl.nn.MultiHeadAttention(4, 2, seed=seed), "MultiHeadAttention"),
        (lambda seed: tl.nn.TransformerEncoderLayer(4, 2, 8, seed=seed), "TransformerEncoderLayer"),
        (lambda seed: tl.nn.Dense(3, 4, seed=seed), "Dense"),
    ],
)
def test_a_bad_seed_is_named_by_its_layer(make, name, seed):
    # NumPy's SeedSequence error named no layer; MultiHeadAttention took 1.5 as 1 silently.
    with pytest.raises(ValueError, match=f"{name}: seed must be None or an integer >= 0, got"):
        make(seed)


@pytest.mark.parametrize("mode", ["False", 0, None])
def test_train_takes_a_bool(mode):
    # train("False") set training mode (a non-empty string is true): dropout stayed on; PyTorch raises.
    layer = tl.nn.TransformerEncoderLayer(4, 2, 8, seed=0).eval()
    with pytest.raises(TypeError, match=r"TransformerEncoderLayer.train: mode must be a bool, got"):
        layer.train(mode)
    assert not layer.training and not layer.self_attn.training
    assert layer.train(np.bool_(True)).dropout.training


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        # Select / Add / BatchMatMulV2 had raised these, naming neither the function nor its arguments.
        ({"attn_mask": np.ones((3, 4), bool)}, ValueError, r"attn_mask of shape \(3, 4\) \(bool\) does not broadcast"),
        ({"attn_mask": np.ones((3, 4))}, ValueError, r"attn_mask of shape \(3, 4\) \(float64\) does not broadcast"),
        ({"key": np.ones((3, 5, 4))}, ValueError, "the leading .batch. dimensions of query, key and value must"),
        # Dropout named itself, float('a') raised a bare ValueError.
        ({"dropout_p": 1.5}, ValueError, r"dropout_p must be a number in \[0, 1\), got 1.5"),
        ({"scale": "a"}, TypeError, "scale must be None or a number, got 'a'"),
    ],
)
def test_scaled_dot_product_attention_names_itself_for_bad_arguments(kwargs, exc, match):
    args = {"query": np.ones((2, 3, 4)), "key": np.ones((2, 5, 4)), "value": np.ones((2, 5, 6)), **kwargs}
    if "key" in kwargs:
        args["value"] = np.ones((3, 5, 6))
    with pytest.raises(exc, match="scaled_dot_product_attention: " + match):
        tl.nn.scaled_dot_product_attention(**args)
    mask = np.ones((1, 5), bool)  # masks and batches that broadcast still do
    got = tl.nn.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((1, 5, 4)), np.ones((1, 5, 6)), mask)
    assert got.shape == (2, 3, 6)


@pytest.mark.parametrize("make", [lambda: tl.nn.LSTM(3, 4, seed=0), lambda: tl.nn.GRU(3, 5, seed=0)])
def test_the_recurrent_kernel_starts_orthogonal_as_a_whole_as_in_keras(make):
    # Keras' "orthogonal" recurrent_initializer fills the whole (units, gates * units) kernel: orthonormal
    # rows (keras.layers.LSTM(4).build((2, 5, 3)): R @ R.T == I). Initialized gate by gate, R @ R.T was
    # gates * I: twice Keras' scale for an LSTM.
    r = make().recurrent_kernel.numpy().astype(np.float64)
    np.testing.assert_allclose(r @ r.T, np.eye(r.shape[0]), atol=1e-6)

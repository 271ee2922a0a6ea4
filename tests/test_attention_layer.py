"""tl.nn.MultiHeadAttention: a NumPy multi-head attention, float64 differences, traced == eager, PyTorch's
nn.MultiheadAttention with the same weights (when installed), its mask conventions and clear errors."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
E, H, N, L, S = 8, 2, 3, 4, 5


def _layer(**kwargs):
    mha = tl.nn.MultiHeadAttention(E, H, seed=0, dtype="float64", **kwargs)
    for v in mha.trainable_variables.values():
        v.assign(RNG.normal(size=v.shape) * 0.4)
    return mha


def _reference(mha, q, k, v, masked=None):
    """NumPy: project, split heads, softmax(q k^T / sqrt(d)) with True of ``masked`` excluded, merge, project."""
    d = E // H

    def heads(x, part):
        y = x @ getattr(mha, f"{part}_kernel").numpy() + getattr(mha, f"{part}_bias").numpy()
        return y.reshape(y.shape[0], y.shape[1], H, d).transpose(0, 2, 1, 3)

    scores = heads(q, "query") @ heads(k, "key").transpose(0, 1, 3, 2) / np.sqrt(d)
    if masked is not None:
        scores = np.where(masked, -np.inf, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = (weights @ heads(v, "value")).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], E)
    return out @ mha.output_kernel.numpy() + mha.output_bias.numpy(), weights


def test_attention_matches_a_numpy_reference_with_each_mask():
    mha = _layer()
    q, k = RNG.normal(size=(N, L, E)), RNG.normal(size=(N, S, E))
    out, weights = mha(q, k)
    want_out, want_w = _reference(mha, q, k, k)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-12)
    np.testing.assert_allclose(weights.numpy(), want_w.mean(1), rtol=1e-12)
    padding = np.zeros((N, S), bool)
    padding[0, -2:] = True
    attn = np.zeros((L, S), bool)
    attn[1, 0] = True
    masked = padding[:, None, None, :] | attn
    out, weights = mha(q, k, key_padding_mask=padding, attn_mask=attn, average_attn_weights=False)
    want_out, want_w = _reference(mha, q, k, k, masked)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-12)
    np.testing.assert_allclose(weights.numpy(), want_w, rtol=1e-12)
    per_head = np.broadcast_to(masked, (N, H, L, S)).reshape(N * H, L, S)  # PyTorch's 3-D attn_mask
    np.testing.assert_allclose(mha(q, k, attn_mask=per_head)[0].numpy(), want_out, rtol=1e-12)
    floats = np.where(np.broadcast_to(masked, (N, H, L, S)), -np.inf, 0.0).reshape(N * H, L, S)
    np.testing.assert_allclose(mha(q, k, attn_mask=floats)[0].numpy(), want_out, rtol=1e-12)
    causal = np.triu(np.ones((L, L), bool), 1)
    np.testing.assert_allclose(mha(q, is_causal=True)[0].numpy(), _reference(mha, q, q, q, causal)[0], rtol=1e-12)
    assert mha(q, need_weights=False)[1] is None


def test_attention_gradients_and_tracing():
    mha = _layer()
    q, k = tl.tensor(RNG.normal(size=(2, 3, E))), tl.tensor(RNG.normal(size=(2, 4, E)))
    padding = np.array([[False, False, True, False], [False, False, False, False]])
    tl.testing.check_grads(lambda q, k: mha(q, k, key_padding_mask=padding)[0], (q, k), order=1)

    def loss(q, k):
        with tl.GradientTape() as tape:
            y = tl.sum(mha(q, k, key_padding_mask=padding)[0] ** 2)
        return y, tape.gradient(y, mha.trainable_variables)

    eager, traced = loss(q, k), tl.function(loss)(q, k)
    np.testing.assert_allclose(traced[0].numpy(), eager[0].numpy(), rtol=1e-12)
    for name in eager[1]:
        np.testing.assert_allclose(traced[1][name].numpy(), eager[1][name].numpy(), rtol=1e-10, err_msg=name)


def test_dropout_acts_in_training_mode_only():
    mha = _layer(dropout=0.5)
    q = RNG.normal(size=(N, L, E))
    _, dropped = mha(q, average_attn_weights=False)
    mha.eval()
    _, weights = mha(q, average_attn_weights=False)
    np.testing.assert_allclose(weights.numpy().sum(-1), 1.0)
    kept = dropped.numpy() != 0  # each weight dropped or kept and scaled by 1 / (1 - 0.5)
    assert 0 < kept.mean() < 1
    mha.train()
    assert not np.array_equal(mha(q, average_attn_weights=False)[1].numpy(), dropped.numpy())  # a new mask per call
    np.testing.assert_allclose(dropped.numpy()[kept], 2 * weights.numpy()[kept], rtol=1e-12)


def test_attention_matches_pytorch():
    torch = pytest.importorskip("torch")
    mha = tl.nn.MultiHeadAttention(E, H, kdim=6, vdim=7, seed=0, dtype="float64")
    for v in mha.trainable_variables.values():
        v.assign(RNG.normal(size=v.shape) * 0.4)
    theirs = torch.nn.MultiheadAttention(E, H, kdim=6, vdim=7, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for part in ("q", "k", "v"):
            name = {"q": "query", "k": "key", "v": "value"}[part]
            getattr(theirs, f"{part}_proj_weight").copy_(torch.tensor(getattr(mha, f"{name}_kernel").numpy().T))
        theirs.in_proj_bias.copy_(torch.tensor(np.concatenate([mha.query_bias.numpy(), mha.key_bias.numpy(), mha.value_bias.numpy()])))  # fmt: skip
        theirs.out_proj.weight.copy_(torch.tensor(mha.output_kernel.numpy().T))
        theirs.out_proj.bias.copy_(torch.tensor(mha.output_bias.numpy()))
    q, k, v = RNG.normal(size=(N, L, E)), RNG.normal(size=(N, S, 6)), RNG.normal(size=(N, S, 7))
    padding = np.zeros((N, S), bool)
    padding[1, :3] = True
    for kwargs in [{}, {"key_padding_mask": padding}, {"attn_mask": RNG.normal(size=(L, S))}]:
        tq = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        t_out, t_w = theirs(*tq, **{key: torch.tensor(val) for key, val in kwargs.items()})
        (t_out**2).sum().backward()
        ours = tl.value_and_grad(lambda *a: tl.sum(mha(*a, **kwargs)[0] ** 2), argnums=(0, 1, 2))
        value, grads = ours(*map(tl.tensor, (q, k, v)))
        np.testing.assert_allclose(mha(q, k, v, **kwargs)[1].numpy(), t_w.detach().numpy(), rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(value.numpy(), (t_out**2).sum().item(), rtol=1e-12)
        for g, t in zip(grads, tq):
            np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: tl.nn.MultiHeadAttention(10, 3), ValueError, "embed_dim=10 must be a multiple of num_heads=3"),
        (lambda: tl.nn.MultiHeadAttention(8, 2, dropout=1.0), ValueError, r"dropout must be in \[0, 1\)"),
        (
            lambda: _layer()(np.ones((2, 3, 5))),
            ValueError,
            r"query must be \(batch, length, 8\), got shape \(2, 3, 5\)",
        ),
        (
            lambda: _layer()(np.ones((2, 3, 8)), key_padding_mask=np.ones((2, 4), bool)),
            ValueError,
            r"\(batch, S\) = \(2, 3\)",
        ),
        (lambda: _layer()(np.ones((2, 3, 8)), attn_mask=np.ones(3, bool)), ValueError, "attn_mask must be"),
        (lambda: _layer()(np.ones((2, 3, 8)), attn_mask=np.ones((3, 3), int)), TypeError, "bool or floating"),
    ],
)
def test_bad_attention_inputs_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def _numpy_layer_norm(x, scale, offset, eps):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + offset


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_composes_its_blocks(norm_first):
    layer = tl.nn.TransformerEncoderLayer(E, H, dim_feedforward=12, norm_first=norm_first, seed=0, dtype="float64")
    for v in tl.tree.leaves(layer.trainable_variables):
        v.assign(RNG.normal(size=v.shape) * 0.3 + (1.0 if v.name == "scale" else 0.0))
    layer.eval()
    x = RNG.normal(size=(N, L, E))
    padding = np.zeros((N, L), bool)
    padding[2, -1] = True
    attn = _reference(layer.self_attn, x, x, x, padding[:, None, None, :])[0]

    def norm(k, y):
        n = getattr(layer, f"norm{k}")
        return _numpy_layer_norm(y, n.scale.numpy(), n.offset.numpy(), 1e-5)

    def feed_forward(y):
        h = np.maximum(y @ layer.linear1.kernel.numpy() + layer.linear1.bias.numpy(), 0)
        return h @ layer.linear2.kernel.numpy() + layer.linear2.bias.numpy()

    if norm_first:
        y = x + _reference(layer.self_attn, *(norm(1, x),) * 3, padding[:, None, None, :])[0]
        want = y + feed_forward(norm(2, y))
    else:
        y = norm(1, x + attn)
        want = norm(2, y + feed_forward(y))
    np.testing.assert_allclose(layer(x, src_key_padding_mask=padding).numpy(), want, rtol=1e-10, atol=1e-12)
    traced = tl.function(lambda x: layer(x, src_key_padding_mask=padding))
    np.testing.assert_allclose(traced(tl.tensor(x)).numpy(), want, rtol=1e-10, atol=1e-12)


def test_transformer_encoder_layer_matches_pytorch():
    torch = pytest.importorskip("torch")
    for norm_first, activation in [(False, "relu"), (True, "gelu")]:
        ours = tl.nn.TransformerEncoderLayer(E, H, 12, activation=activation, norm_first=norm_first, dtype="float64")
        theirs = torch.nn.TransformerEncoderLayer(
            E, H, 12, activation=activation, norm_first=norm_first, batch_first=True, dtype=torch.float64
        ).eval()
        ours.eval()
        sa = ours.self_attn
        with torch.no_grad():
            theirs.self_attn.in_proj_weight.copy_(
                torch.tensor(
                    np.concatenate([sa.query_kernel.numpy(), sa.key_kernel.numpy(), sa.value_kernel.numpy()], 1).T
                )
            )
            theirs.self_attn.in_proj_bias.copy_(torch.tensor(RNG.normal(size=3 * E)))
            sa.query_bias.assign(theirs.self_attn.in_proj_bias[:E].numpy())
            sa.key_bias.assign(theirs.self_attn.in_proj_bias[E : 2 * E].numpy())
            sa.value_bias.assign(theirs.self_attn.in_proj_bias[2 * E :].numpy())
            theirs.self_attn.out_proj.weight.copy_(torch.tensor(sa.output_kernel.numpy().T))
            theirs.self_attn.out_proj.bias.copy_(torch.tensor(sa.output_bias.numpy()))
            for k in (1, 2):
                dense, linear = getattr(ours, f"linear{k}"), getattr(theirs, f"linear{k}")
                linear.weight.copy_(torch.tensor(dense.kernel.numpy().T))
                linear.bias.copy_(torch.tensor(dense.bias.numpy()))
                norm, their_norm = getattr(ours, f"norm{k}"), getattr(theirs, f"norm{k}")
                norm.scale.assign(RNG.uniform(0.5, 1.5, E))
                their_norm.weight.copy_(torch.tensor(norm.scale.numpy()))
        x = RNG.normal(size=(N, L, E))
        mask = np.triu(np.ones((L, L), bool), 1)
        want = theirs(torch.tensor(x), src_mask=torch.tensor(mask)).detach().numpy()
        np.testing.assert_allclose(ours(x, src_mask=mask).numpy(), want, rtol=1e-10, atol=1e-12)


def _copy_attention(ours, theirs, torch):
    """PyTorch's attention weights from ours (random biases, as ours start at zero)."""
    with torch.no_grad():
        kernels = [ours.query_kernel.numpy(), ours.key_kernel.numpy(), ours.value_kernel.numpy()]
        theirs.in_proj_weight.copy_(torch.tensor(np.concatenate(kernels, 1).T))
        theirs.in_proj_bias.copy_(torch.tensor(RNG.normal(size=3 * E)))
        for part, block in zip(("query", "key", "value"), theirs.in_proj_bias.numpy().reshape(3, E)):
            getattr(ours, f"{part}_bias").assign(block)
        theirs.out_proj.weight.copy_(torch.tensor(ours.output_kernel.numpy().T))
        theirs.out_proj.bias.copy_(torch.tensor(ours.output_bias.numpy()))


def test_transformer_decoder_layer_matches_pytorch():
    torch = pytest.importorskip("torch")
    for norm_first in (False, True):
        ours = tl.nn.TransformerDecoderLayer(E, H, 12, activation="gelu", norm_first=norm_first, dtype="float64")
        theirs = torch.nn.TransformerDecoderLayer(
            E, H, 12, activation="gelu", norm_first=norm_first, batch_first=True, dtype=torch.float64
        ).eval()
        ours.eval()
        _copy_attention(ours.self_attn, theirs.self_attn, torch)
        _copy_attention(ours.multihead_attn, theirs.multihead_attn, torch)
        with torch.no_grad():
            for k in (1, 2):
                dense, linear = getattr(ours, f"linear{k}"), getattr(theirs, f"linear{k}")
                linear.weight.copy_(torch.tensor(dense.kernel.numpy().T))
                linear.bias.copy_(torch.tensor(dense.bias.numpy()))
            for k in (1, 2, 3):
                getattr(ours, f"norm{k}").scale.assign(RNG.uniform(0.5, 1.5, E))
                getattr(theirs, f"norm{k}").weight.copy_(torch.tensor(getattr(ours, f"norm{k}").scale.numpy()))
        tgt, memory = RNG.normal(size=(N, L, E)), RNG.normal(size=(N, S, E))
        padding = np.zeros((N, S), bool)
        padding[0, -2:] = True
        causal = np.triu(np.ones((L, L), bool), 1)
        want = theirs(
            torch.tensor(tgt), torch.tensor(memory), tgt_mask=torch.tensor(causal),
            memory_key_padding_mask=torch.tensor(padding),
        ).detach().numpy()  # fmt: skip
        got = ours(tgt, memory, tgt_mask=causal, memory_key_padding_mask=padding)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
        traced = tl.function(lambda t, m: ours(t, m, tgt_is_causal=True, memory_key_padding_mask=padding))
        np.testing.assert_allclose(traced(tl.tensor(tgt), tl.tensor(memory)).numpy(), want, rtol=1e-10, atol=1e-12)


def test_transformer_decoder_layer_composes_its_blocks():
    layer = tl.nn.TransformerDecoderLayer(E, H, dim_feedforward=12, seed=0, dtype="float64")
    for v in tl.tree.leaves(layer.trainable_variables):
        v.assign(RNG.normal(size=v.shape) * 0.3 + (1.0 if v.name == "scale" else 0.0))
    layer.eval()
    tgt, memory = RNG.normal(size=(N, L, E)), RNG.normal(size=(N, S, E))
    causal = np.triu(np.ones((L, L), bool), 1)

    def norm(k, y):
        n = getattr(layer, f"norm{k}")
        return _numpy_layer_norm(y, n.scale.numpy(), n.offset.numpy(), 1e-5)

    x = norm(1, tgt + _reference(layer.self_attn, tgt, tgt, tgt, causal)[0])
    x = norm(2, x + _reference(layer.multihead_attn, x, memory, memory)[0])
    h = np.maximum(x @ layer.linear1.kernel.numpy() + layer.linear1.bias.numpy(), 0)
    want = norm(3, x + h @ layer.linear2.kernel.numpy() + layer.linear2.bias.numpy())
    np.testing.assert_allclose(layer(tgt, memory, tgt_is_causal=True).numpy(), want, rtol=1e-10, atol=1e-12)


def test_attention_layers_trace_with_unknown_batch_and_lengths():
    # Before: splitting the heads reshaped to (-1, -1, heads, d), a Reshape error with two unknown sizes.
    x = RNG.normal(size=(3, 5, E)).astype(np.float32)
    padding = np.zeros((3, 5), bool)
    padding[0, -1] = True
    spec = tl.TensorSpec((None, None, E), "float32")
    mha = tl.nn.MultiHeadAttention(E, H, seed=0)
    f = tl.function(
        lambda x, m: mha(x, key_padding_mask=m)[0], input_signature=[spec, tl.TensorSpec((None, None), "bool")]
    )
    np.testing.assert_allclose(f(x, padding).numpy(), mha(x, key_padding_mask=padding)[0].numpy(), rtol=1e-6)
    decoder = tl.nn.TransformerDecoderLayer(E, H, 16, seed=0)
    decoder.eval()
    g = tl.function(lambda t, m: decoder(t, m), input_signature=[spec, spec])
    np.testing.assert_allclose(g(x, x[:, :4]).numpy(), decoder(x, x[:, :4]).numpy(), rtol=1e-5, atol=1e-6)

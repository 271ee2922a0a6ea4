"""Attention, transformer layers and normalizations tried as an adversary: traced batch norm with unknown sizes,
float16 batch-norm inference, the dtypes of attention masks.

References: NumPy formulas written here (Bessel-corrected variance, the batch-norm formula in float64 rounded
once), the eager path as the traced path's twin, and PyTorch's layers with copied weights where installed."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(20261202)


# ------------------------------------------------------------------ BatchNorm traced with unknown sizes
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_traced_batch_norm_with_unknown_batch_keeps_the_running_variance_exact(dtype):
    # The Bessel factor count / (count - 1) was computed in float32 and rounded to x's dtype when the batch size
    # was known only at run time: a float64 running variance 3.4e-8 off, a float16 model's 2.8e-4 (eager: exact).
    channels = 3
    params = "float32" if dtype == "float16" else dtype
    layer = tl.nn.BatchNorm(channels, momentum=1.0, dtype=params)
    traced = tl.function(layer, input_signature=[tl.TensorSpec((None, channels), dtype)])
    x = RNG.normal(size=(7, channels)).astype(dtype)
    traced(x)
    expected = x.astype(np.float64).var(axis=0, ddof=1)
    tolerance = {"float16": 1e-6, "float32": 3e-7, "float64": 1e-14}[dtype]  # the statistics' dtype rounds once
    np.testing.assert_allclose(layer.running_var.numpy().astype(np.float64), expected, rtol=tolerance)
    traced_var = layer.running_var.numpy()
    layer(x)
    np.testing.assert_allclose(traced_var, layer.running_var.numpy(), rtol=tolerance)


# ------------------------------------------------------------------ fused_batch_norm in inference
def _inference_reference(x, scale, offset, mean, variance, epsilon):
    """The batch-norm formula in float64."""
    x, scale, offset, mean, variance = (np.asarray(a, np.float64) for a in (x, scale, offset, mean, variance))
    return (x - mean) / np.sqrt(variance + epsilon) * scale + offset


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fused_batch_norm_inference_in_float16_rounds_once(data_format):
    # The float16 kernel computed x * factor + (offset - mean * factor) in float16: for x ~ 10 +- 0.5 the two
    # terms cancelled and y was 5 float16 ulps off (0.0092 at |y| < 2.4); TensorFlow computes in float32.
    channels = 3
    x = (RNG.normal(size=(2, 3, 4, channels)) * 0.5 + 10).astype(np.float16)
    scale, offset = RNG.normal(size=channels).astype(np.float32), RNG.normal(size=channels).astype(np.float32)
    mean = (RNG.normal(size=channels) * 0.1 + 10).astype(np.float32)
    variance = (RNG.random(channels) * 0.5 + 0.1).astype(np.float32)
    given = x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)
    y = tl.nn.fused_batch_norm(given, scale, offset, mean, variance, is_training=False, data_format=data_format)[0]
    y = y.numpy() if data_format == "NHWC" else y.numpy().transpose(0, 2, 3, 1)
    expected = _inference_reference(x, scale, offset, mean, variance, 1e-3)
    assert y.dtype == np.float16
    ulp = np.spacing(np.abs(expected).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(y.astype(np.float64) - expected) <= ulp), np.max(np.abs(y - expected) / ulp)


def test_fused_batch_norm_inference_centres_before_scaling():
    # x * factor + (offset - mean * factor) in float32 lost the digits below 1e4's ulp for x ~ 1e4 + N(0, 1):
    # y 1e-3 off; (x - mean) * factor + offset (TensorFlow's CPU kernel) is exact to float32's rounding.
    channels = 2
    x = (RNG.normal(size=(4, 3, 3, channels)) + 1e4).astype(np.float32)
    scale, offset = np.float32([1.5, 0.5]), np.float32([0.25, -1.0])
    mean, variance = np.float32([1e4, 1e4 + 0.5]), np.float32([1.0, 0.8])
    y = tl.nn.fused_batch_norm(x, scale, offset, mean, variance, epsilon=1e-3, is_training=False)[0]
    np.testing.assert_allclose(y.numpy(), _inference_reference(x, scale, offset, mean, variance, 1e-3), atol=2e-6)


# ------------------------------------------------------------------ attention masks
def _softmax_attention(q, k, v, additive):
    """NumPy: softmax(q k^T / sqrt(E) + additive) v, in float64."""
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + additive
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ v


def test_a_float64_additive_mask_keeps_float32_attention_in_float32():
    # np.where(keep, 0.0, -np.inf) is float64: added to float32 scores it made the output (and every GEMM of the
    # backward after it) float64.  PyTorch rejects such a mask; JAX and Keras compute in the query's dtype, as
    # tl.nn.MultiHeadAttention already did.  The mask is cast to the scores' dtype.
    q, k, v = (RNG.normal(size=(2, 3, n, 4)).astype(np.float32) for n in (5, 6, 6))
    keep = RNG.random((5, 6)) > 0.4
    keep[:, 0] = True
    additive = np.where(keep, 0.0, -np.inf)
    out = tl.nn.scaled_dot_product_attention(q, k, v, attn_mask=additive)
    assert out.dtype == tl.float32
    expected = _softmax_attention(*(a.astype(np.float64) for a in (q, k, v)), additive)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    grads = tl.grad(lambda q, m: tl.sum(tl.nn.scaled_dot_product_attention(q, k, v, attn_mask=m)), (0, 1))(
        q, RNG.normal(size=(5, 6))
    )
    assert (grads[0].dtype, grads[1].dtype) == (tl.float32, tl.float64)


# ------------------------------------------------------------------ causal attention traced with unknown lengths
def _causal_additive(length, source):
    """0 where key j <= query i (the top-left aligned lower triangle), -inf above."""
    return np.where(np.tril(np.ones((length, source), bool)), 0.0, -np.inf)


@pytest.mark.parametrize("lengths", [(4, 4), (3, 5), (5, 3)])
def test_causal_attention_traces_with_unknown_lengths(lengths):
    # is_causal raised "needs known query and key lengths" under tl.function with TensorSpec((..., None, E)):
    # the causal mask was a NumPy constant.  It is now built with ops when a length is known only at run time.
    spec = tl.TensorSpec((2, None, 4), "float64")
    f = tl.function(
        lambda q, k, v: tl.nn.scaled_dot_product_attention(q, k, v, is_causal=True), input_signature=[spec] * 3
    )
    length, source = lengths
    q, k, v = (RNG.normal(size=(2, n, 4)) for n in (length, source, source))
    expected = _softmax_attention(q, k, v, _causal_additive(length, source))
    np.testing.assert_allclose(f(q, k, v).numpy(), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        tl.nn.scaled_dot_product_attention(q, k, v, is_causal=True).numpy(), expected, rtol=1e-12, atol=1e-14
    )


def test_causal_layers_trace_with_unknown_lengths():
    embed, heads = 4, 2
    mha = tl.nn.MultiHeadAttention(embed, heads, seed=1, dtype="float64")
    for variable in mha.trainable_variables.values():
        variable.assign(RNG.normal(size=variable.shape) * 0.5)
    spec = tl.TensorSpec((None, None, embed), "float64")
    padding_spec = tl.TensorSpec((None, None), "bool")
    f = tl.function(lambda x, p: mha(x, key_padding_mask=p, is_causal=True), input_signature=[spec, padding_spec])
    for batch, length in ((2, 3), (3, 5)):
        x = RNG.normal(size=(batch, length, embed))
        padding = np.zeros((batch, length), bool)
        padding[0, -1] = True
        # NumPy: per head, additive causal and padding masks
        d = embed // heads

        def project(part, x=x):
            y = x @ getattr(mha, f"{part}_kernel").numpy() + getattr(mha, f"{part}_bias").numpy()
            return y.reshape(batch, length, heads, d).transpose(0, 2, 1, 3)

        additive = _causal_additive(length, length) + np.where(padding, -np.inf, 0.0)[:, None, None, :]
        heads_out = _softmax_attention(project("query"), project("key"), project("value"), additive)
        merged = heads_out.transpose(0, 2, 1, 3).reshape(batch, length, embed)
        expected = merged @ mha.output_kernel.numpy() + mha.output_bias.numpy()
        out, weights = f(x, padding)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(weights.numpy(), mha(x, key_padding_mask=padding, is_causal=True)[1].numpy())
    decoder = tl.nn.TransformerDecoderLayer(embed, heads, 8, seed=2, dtype="float64")
    decoder.eval()
    g = tl.function(lambda t, m: decoder(t, m, tgt_is_causal=True), input_signature=[spec, spec])
    tgt, memory = RNG.normal(size=(2, 3, embed)), RNG.normal(size=(2, 5, embed))
    np.testing.assert_allclose(g(tgt, memory).numpy(), decoder(tgt, memory, tgt_is_causal=True).numpy(), rtol=1e-12)


# ------------------------------------------------------------------ grouped-query attention
def test_grouped_query_attention_shares_each_key_head_among_its_query_group():
    # PyTorch's enable_gqa=True (and JAX's dot_product_attention with fewer key heads): query head h attends
    # with key/value head h // (query heads / key heads).  Without it, 4 query heads and 2 key heads are an error.
    q = RNG.normal(size=(2, 4, 3, 5))
    k, v = RNG.normal(size=(2, 2, 6, 5)), RNG.normal(size=(2, 2, 6, 3))
    mask = RNG.random((3, 6)) > 0.3
    mask[:, 0] = True
    out = tl.nn.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    additive = np.where(mask, 0.0, -np.inf)
    expected = _softmax_attention(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1), additive)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-14)
    tl.testing.check_grads(
        lambda q, k, v: tl.nn.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), (q, k, v)
    )
    with pytest.raises(ValueError, match="scaled_dot_product_attention.*leading"):
        tl.nn.scaled_dot_product_attention(q, k, v)
    with pytest.raises(ValueError, match=r"enable_gqa.*4 query heads.*3 key"):
        tl.nn.scaled_dot_product_attention(q, k[:, :1].repeat(3, 1), v[:, :1].repeat(3, 1), enable_gqa=True)


def test_grouped_query_attention_matches_pytorch():
    torch = pytest.importorskip("torch")
    q = RNG.normal(size=(2, 6, 4, 8))
    k, v = RNG.normal(size=(2, 3, 5, 8)), RNG.normal(size=(2, 3, 5, 7))
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), is_causal=True, enable_gqa=True
    )
    got = tl.nn.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ bad arguments of the normalizations
_X4 = np.ones((2, 2, 2, 3))
_C = np.ones(3)


@pytest.mark.parametrize(
    "name, call",
    [
        ("layer_norm", lambda eps: tl.nn.layer_norm(_X4, epsilon=eps)),
        ("group_norm", lambda eps: tl.nn.group_norm(_X4, 3, epsilon=eps)),
        ("instance_norm", lambda eps: tl.nn.instance_norm(_X4, epsilon=eps)),
        ("rms_norm", lambda eps: tl.nn.rms_norm(_X4, epsilon=eps)),
        ("FusedBatchNormV3", lambda eps: tl.nn.fused_batch_norm(_X4, _C, _C, epsilon=eps)),
        ("FusedBatchNormV3", lambda eps: tl.nn.fused_batch_norm(_X4, _C, _C, _C, _C, eps, is_training=False)),
        ("batch_normalization", lambda eps: tl.nn.batch_normalization(_X4, _C, _C, None, None, eps)),
    ],
)
@pytest.mark.parametrize("epsilon", [-1.0, float("nan")])
def test_a_negative_or_nan_epsilon_is_an_error_naming_the_function(name, call, epsilon):
    # A negative epsilon made sqrt(var + epsilon) NaN for a small variance (here the constant input's 0), silently:
    # the layers and rms_norm refused it, the functions returned NaN.
    with pytest.raises(ValueError, match=rf"^{name}: epsilon must be >= 0, got {epsilon}"):
        call(epsilon)


def test_batch_normalization_names_itself_when_the_statistics_do_not_broadcast():
    # The error named Mul (the first op the shapes met), not batch_normalization or its arguments.
    with pytest.raises(ValueError, match=r"^batch_normalization: mean shape \(4,\) does not broadcast to x.*\(2, 3\)"):
        tl.nn.batch_normalization(np.ones((2, 3)), np.ones(4), np.ones(3), None, None, 1e-3)
    y = tl.nn.batch_normalization(np.ones((2, 3)), np.ones((1, 3)), 4.0, np.ones(3), np.full(3, 2.0), 0.0)
    np.testing.assert_allclose(y.numpy(), np.ones((2, 3)))


# ------------------------------------------------------------------ group norm with unknown spatial sizes
def _group_norm_reference(x, groups, epsilon):
    """NumPy, channels last: each example's groups of channels standardized over the group and the spatial axes."""
    x = np.asarray(x, np.float64)
    grouped = x.reshape(x.shape[0], -1, groups, x.shape[-1] // groups)
    mean, variance = grouped.mean((1, 3), keepdims=True), grouped.var((1, 3), keepdims=True)
    return ((grouped - mean) / np.sqrt(variance + epsilon)).reshape(x.shape)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_group_norm_traces_with_unknown_spatial_sizes(data_format):
    # A fully convolutional net traced with TensorSpec((None, None, None, C)) raised "group_norm: every dimension
    # but the batch must be known": the channels were split into groups by a reshape that needed every size.
    channels, groups = 6, 3
    layer = tl.nn.GroupNorm(groups, channels, epsilon=1e-3, dtype="float64", data_format=data_format)
    layer.scale.assign(RNG.normal(size=channels))
    layer.offset.assign(RNG.normal(size=channels))
    spec = (None, None, None, channels) if data_format == "NHWC" else (None, channels, None, None)
    traced = tl.function(layer, input_signature=[tl.TensorSpec(spec, "float64")])
    for shape in ((2, 3, 4, channels), (1, 5, 2, channels)):
        x = RNG.normal(size=shape) * 3 + 2
        expected = _group_norm_reference(x, groups, 1e-3) * layer.scale.numpy() + layer.offset.numpy()
        given = x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)
        got = traced(given).numpy()
        got = got if data_format == "NHWC" else got.transpose(0, 2, 3, 1)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    x = RNG.normal(size=(2, 3, channels))
    tl.testing.check_grads(lambda x: tl.nn.group_norm(x, groups), (x,), order=2)


# ------------------------------------------------------------------ weighted_moments (TensorFlow's)
def test_weighted_moments_are_the_frequency_weighted_mean_and_variance():
    x = RNG.normal(size=(5, 4)) * 2 + 1
    weights = RNG.random((5, 1)) * 3  # broadcast over the columns, as TensorFlow allows
    mean, variance = tl.nn.weighted_moments(x, [0], weights)
    want_mean = np.average(x, axis=0, weights=np.broadcast_to(weights, x.shape))
    want_variance = np.average((x - want_mean) ** 2, axis=0, weights=np.broadcast_to(weights, x.shape))
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-12)
    np.testing.assert_allclose(variance.numpy(), want_variance, rtol=1e-12)
    mean, variance = tl.nn.weighted_moments(x, [0, 1], weights, keepdims=True)
    assert mean.shape == variance.shape == (1, 1)
    np.testing.assert_allclose(mean.numpy().item(), np.average(x, weights=np.broadcast_to(weights, x.shape)))
    # Zero total weight: 0 and 0 (TensorFlow's reciprocal_no_nan), and finite gradients.
    mean, variance = tl.nn.weighted_moments(x, [0], np.zeros((5, 1)))
    assert mean.numpy().tolist() == variance.numpy().tolist() == [0.0] * 4
    tl.testing.check_grads(lambda x, w: tl.nn.weighted_moments(x, [1], w)[1], (x, weights + 0.5), order=2)
    half = tl.nn.weighted_moments(x.astype(np.float16), [0], weights.astype(np.float16))[1]
    assert half.dtype == tl.float16
    np.testing.assert_allclose(half.numpy(), want_variance, rtol=3e-3)


def test_weighted_moments_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    x, weights = RNG.normal(size=(3, 4, 5)), RNG.random((3, 1, 5))
    for axes, keepdims in (([0], False), ([0, 2], True), ([1], False)):
        want = tf.nn.weighted_moments(tf.constant(x), axes, tf.constant(weights), keepdims=keepdims)
        got = tl.nn.weighted_moments(x, axes, weights, keepdims=keepdims)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ BatchNorm: cumulative averages, no running statistics
def test_batch_norm_with_momentum_none_keeps_cumulative_averages():
    # PyTorch's momentum=None: the running statistics are the plain averages of every batch's mean and unbiased
    # variance so far (factor 1 / num_batches_tracked).  It was a ValueError.
    channels = 3
    layer = tl.nn.BatchNorm(channels, momentum=None, dtype="float64")
    traced = tl.function(layer)
    batches = [RNG.normal(size=(n, channels)) * (k + 1) + k for k, n in enumerate((4, 6, 5))]
    for k, x in enumerate(batches):
        (traced if k % 2 else layer)(x)  # eager and traced calls update the same statistics
    np.testing.assert_allclose(layer.running_mean.numpy(), np.mean([x.mean(0) for x in batches], 0), rtol=1e-13)
    np.testing.assert_allclose(layer.running_var.numpy(), np.mean([x.var(0, ddof=1) for x in batches], 0), rtol=1e-13)
    assert layer.num_batches_tracked.numpy() == 3


def test_batch_norm_without_running_statistics_normalizes_with_the_batch_in_eval_mode_too():
    # PyTorch's track_running_stats=False: no running statistics; training and eval() both use the batch's.
    channels = 2
    layer = tl.nn.BatchNorm(channels, epsilon=1e-3, dtype="float64", track_running_stats=False)
    assert layer.running_mean is None and layer.running_var is None
    assert "running_mean" not in layer.variables
    x = RNG.normal(size=(5, channels)) * 2 + 1
    expected = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tl.function(layer)(x).numpy(), expected, rtol=1e-12)


def test_batch_norm_options_match_pytorch():
    torch = pytest.importorskip("torch")
    x = [RNG.normal(size=(4, 3, 5)) * 2 + k for k in range(3)]
    ours = tl.nn.BatchNorm(3, momentum=None, dtype="float64", data_format="NCHW")
    theirs = torch.nn.BatchNorm1d(3, momentum=None).double()
    for batch in x:
        np.testing.assert_allclose(ours(batch).numpy(), theirs(torch.tensor(batch)).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-12)
    assert ours.num_batches_tracked.numpy() == theirs.num_batches_tracked.item()
    ours = tl.nn.BatchNorm(3, dtype="float64", data_format="NCHW", track_running_stats=False).eval()
    theirs = torch.nn.BatchNorm1d(3, track_running_stats=False).double().eval()
    np.testing.assert_allclose(ours(x[0]).numpy(), theirs(torch.tensor(x[0])).detach().numpy(), rtol=1e-12)


# ------------------------------------------------------------------ float16 normalizations round once
def _normalized_reference(x, axes, groups=None):
    x = np.asarray(x, np.float64)
    if groups is not None:
        return _group_norm_reference(x, groups, 1e-5)
    mean, variance = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-5)


@pytest.mark.parametrize(
    "name, call, axes, groups",
    [
        ("layer_norm", lambda x, s, o: tl.nn.layer_norm(x, s, o), (-1,), None),
        ("group_norm", lambda x, s, o: tl.nn.group_norm(x, 4, s, o), None, 4),
        ("instance_norm", lambda x, s, o: tl.nn.instance_norm(x, s, o), (1, 2), None),
    ],
)
def test_float16_normalizations_apply_scale_and_offset_before_rounding(name, call, axes, groups):
    # The standardized values were rounded to float16, then times scale and plus offset rounded again: where
    # y * scale and offset nearly cancel, 1267 float16 ulps off the exact result (PyTorch, computing in float32
    # and rounding once: 0.8).  A float16 result is now rounded once, after the affine.
    x = (RNG.normal(size=(4, 6, 5, 16)) * 3 + 1).astype(np.float16)
    scale = (RNG.normal(size=16) * 2).astype(np.float16)
    offset = (RNG.normal(size=16) * 5).astype(np.float16)
    y = call(x, scale, offset)
    assert y.dtype == tl.float16
    terms = _normalized_reference(x, axes, groups) * scale.astype(np.float64), offset.astype(np.float64)
    exact = terms[0] + terms[1]
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    # One float16 rounding, plus the float32 computation's own error, relative to the terms that cancel (a
    # bound of 1 ulp alone failed on data where they cancel to 3e-5, 5 float16 ulps of float32's 3e-7).
    bound = ulp + 1e-6 * (np.abs(terms[0]) + np.abs(terms[1]))
    assert np.all(np.abs(y.numpy().astype(np.float64) - exact) <= bound)
    wide_scale = call(x, scale.astype(np.float32), offset)  # a float32 scale gives float32, as before
    assert wide_scale.dtype == tl.float32


def test_float16_batch_norm_layer_in_eval_mode_rounds_once():
    # eval() normalized a float16 x with float16 running statistics in float16 (x * inv + (offset - mean * inv)):
    # for x ~ 10 +- 1, 226 ulps (0.043) off the float64 formula; PyTorch computes in float32 (0.5 ulps), as our
    # training mode already did.
    channels = 8
    layer = tl.nn.BatchNorm(channels, dtype="float16")
    mean = (RNG.normal(size=channels) * 0.5 + 10).astype(np.float16)
    variance = (RNG.random(channels) + 0.2).astype(np.float16)
    scale, offset = (
        (RNG.normal(size=channels) * 2).astype(np.float16),
        (RNG.normal(size=channels) * 3).astype(np.float16),
    )
    for variable, value in zip(
        (layer.running_mean, layer.running_var, layer.scale, layer.offset), (mean, variance, scale, offset)
    ):
        variable.assign(value)
    x = (RNG.normal(size=(64, channels)) + 10).astype(np.float16)
    y = layer.eval()(x)
    assert y.dtype == tl.float16
    exact = _inference_reference(x, scale, offset, mean, variance, 1e-5)
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    assert np.max(np.abs(y.numpy().astype(np.float64) - exact) / ulp) <= 1.0

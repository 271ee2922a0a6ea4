"""Adversarial regressions for the conv / pool / normalization family (round 5): each test failed before its fix."""

import numpy as np
import pytest

import tensorlib as tl

X = np.arange(50.0).reshape(1, 5, 5, 2)
W = np.ones((2, 2, 2, 1))


# ------------------------------------------------------------------ integer attributes are never truncated
@pytest.mark.parametrize(
    "call",
    [
        lambda: tl.nn.conv2d(X, W, (1.5, 1), "VALID"),
        lambda: tl.nn.conv2d(X, W, [1, 2.5, 1, 1], "VALID"),
        lambda: tl.nn.conv2d(X, W, 1, "VALID", dilations=(2.7, 1)),
        lambda: tl.nn.conv2d(X, W, (True, 1), "VALID"),
        lambda: tl.nn.conv2d(X, W, ("2", 1), "VALID"),
        lambda: tl.nn.conv2d(X, W, 1, ((1.5, 0), (0, 0))),
        lambda: tl.nn.conv2d(X.transpose(0, 3, 1, 2), W, 1, [[0, 0], [0, 0], [0.5, 0], [0, 0]], data_format="NCHW"),
        lambda: tl.nn.conv2d_transpose(np.ones((1, 2, 2, 1)), np.ones((3, 3, 1, 1)), (1, 4.7, 4, 1), 2, "SAME"),
        lambda: tl.nn.conv2d_backprop_filter(X, (2, 2, 2.0, 1), np.ones((1, 4, 4, 1)), 1, "VALID"),
        lambda: tl.nn.conv1d(X[:, 0], W[0], [1.5], "VALID"),
        lambda: tl.nn.conv1d(X[:, 0], W[0], 1, (0.5, 0)),
        lambda: tl.nn.max_pool(X, (2, 2.5), 1, "VALID"),
        lambda: tl.nn.avg_pool(X, 2, (1, 1.9), "SAME"),
        lambda: tl.nn.depthwise_conv2d(X, np.ones((2, 2, 2, 1)), (1, 1.5), "VALID"),
        lambda: tl.nn.resize(X, (7.9, 3)),
        lambda: tl.nn.space_to_depth(np.ones((1, 4, 4, 1)), 2.0),
        lambda: tl.nn.normalize(X, axis=1.7),
    ],
)
def test_non_integer_window_attributes_are_errors(call):
    # They were int()-ed: strides (1.5, 1) ran with stride 1, dilations 2.7 with 2, a padding of 1.5 with 1,
    # an output shape of 4.7 gave 4, resize to 7.9 rows gave 7, normalize(axis=1.7) used axis 1, all silently.
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert any(
        name in str(info.value) for name in ("Conv2D", "conv1d", "Pool", "depthwise", "resize", "space_to", "normalize")
    )


def test_integer_attributes_of_every_kind_still_work():
    ref = tl.nn.conv2d(X, W, (2, 1), ((1, 0), (0, 1)), dilations=(1, 2)).numpy()
    np.testing.assert_array_equal(
        tl.nn.conv2d(X, W, np.array([1, 2, 1, 1]), [[0, 0], [1, 0], [0, 1], [0, 0]], (np.int64(1), np.int32(2))),
        ref,
    )
    np.testing.assert_array_equal(tl.nn.conv2d(X, W, tl.tensor([2, 1]), ((1, 0), (0, 1)), (1, 2)), ref)
    assert tl.nn.space_to_depth(np.ones((1, 4, 4, 1)), np.int64(2)).shape == (1, 2, 2, 4)
    assert tl.nn.resize(X, (np.int64(3), 4)).shape == (1, 3, 4, 2)
    assert tl.nn.group_norm(X, np.int64(2)).shape == X.shape  # was refused
    np.testing.assert_allclose(
        tl.nn.normalize(X, axis=np.int64(3)).numpy(), X / np.linalg.norm(X, axis=3, keepdims=True)
    )
    mean, _ = tl.nn.moments(X, np.array([0, 1, 2]))
    np.testing.assert_allclose(mean.numpy(), X.mean((0, 1, 2)))
    with pytest.raises(TypeError, match="moments"):
        tl.nn.moments(X, [0.7])  # was axis 0


# ------------------------------------------------------------------ fused_batch_norm inference hands back Tensors
def test_fused_batch_norm_inference_returns_tensors_of_its_own():
    x = np.linspace(-1, 1, 24).reshape(2, 3, 2, 2)
    mean, variance = np.array([0.1, -0.2]), np.array([0.5, 2.0])
    y, m, v = tl.nn.fused_batch_norm(x, np.ones(2), np.zeros(2), mean, variance, epsilon=1e-3, is_training=False)
    # They were the caller's own arrays (or lists), not Tensors: a write to either reached the other.
    assert isinstance(m, tl.Tensor) and isinstance(v, tl.Tensor)
    assert not np.shares_memory(m.numpy(), mean) and not np.shares_memory(v.numpy(), variance)
    np.testing.assert_array_equal(m.numpy(), mean)
    np.testing.assert_array_equal(v.numpy(), variance)
    np.testing.assert_allclose(y.numpy(), (x - mean) / np.sqrt(variance + 1e-3), rtol=1e-12)
    _, m, v = tl.nn.fused_batch_norm(
        x.astype(np.float32), [1.0, 1.0], [0.0, 0.0], [0.0, 1.0], [1.0, 1.0], is_training=False
    )
    assert isinstance(m, tl.Tensor) and m.dtype == tl.float32 and v.numpy().tolist() == [1.0, 1.0]


# ------------------------------------------------------------------ depthwise_conv2d reads TensorFlow's NCHW forms
def _depthwise_reference(x_nhwc, w, strides, pads):
    """Direct sums over the padded input: out[n, i, j, c*M + m] = sum_pq x[n, i*s + p, j*s + q, c] w[p, q, c, m]."""
    xp = np.pad(x_nhwc, ((0, 0), pads[0], pads[1], (0, 0)))
    kh, kw, c, m = w.shape
    oh = (xp.shape[1] - kh) // strides[0] + 1
    ow = (xp.shape[2] - kw) // strides[1] + 1
    out = np.zeros((x_nhwc.shape[0], oh, ow, c, m))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, i * strides[0] : i * strides[0] + kh, j * strides[1] : j * strides[1] + kw, :]
            out[:, i, j] = np.einsum("npqc,pqcm->ncm", window, w)
    return out.reshape(out.shape[0], oh, ow, c * m)


@pytest.mark.parametrize("pads", [((1, 1), (0, 0)), ((1, 2), (3, 0)), ((0, 0), (2, 1))])
def test_depthwise_conv2d_nchw_explicit_padding_and_strides(pads):
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6))
    w = np.random.default_rng(1).standard_normal((2, 3, 3, 2))
    ref = _depthwise_reference(x.transpose(0, 2, 3, 1), w, (2, 1), pads).transpose(0, 3, 1, 2)
    # TensorFlow's NCHW forms: [[0, 0], [0, 0], [top, bottom], [left, right]] was read as NHWC pairs, so the
    # width got (top, bottom) ([[0,0],[0,0],[1,1],[0,0]] padded the width, not the height, silently), and
    # strides [1, 1, 2, 1] were refused.
    y = tl.nn.depthwise_conv2d(x, w, [1, 1, 2, 1], [[0, 0], [0, 0], *pads], data_format="NCHW")
    assert y.shape == ref.shape
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tl.nn.depthwise_conv2d(x, w, (2, 1), pads, data_format="NCHW").numpy(), ref, rtol=1e-12)


# ------------------------------------------------------------------ no channels: empty results, as TensorFlow
@pytest.mark.parametrize("traced", [False, True])
def test_avg_pool_and_fused_batch_norm_of_no_channels(traced):
    # Both raised "cannot reshape array of size 0 into shape (0)" from a reshape(-1, channels) in the kernel.
    x = np.zeros((2, 4, 5, 0))

    def run(x):
        pooled = tl.nn.avg_pool(x, 3, 2, "SAME")
        grad = tl.grad(lambda x: tl.sum(tl.nn.avg_pool(x, 3, 2, "SAME")))(x)
        y, mean, var = tl.nn.fused_batch_norm(x, np.ones(0), np.zeros(0))
        bn_grads = tl.grad(lambda x, s: tl.sum(tl.nn.fused_batch_norm(x, s, np.zeros(0))[0]), argnums=(0, 1))(
            x, np.ones(0)
        )
        return pooled, grad, y, mean, var, *bn_grads

    out = (tl.function(run) if traced else run)(x)
    assert [tuple(t.shape) for t in out] == [(2, 2, 3, 0), (2, 4, 5, 0), (2, 4, 5, 0), (0,), (0,), (2, 4, 5, 0), (0,)]


# ------------------------------------------------------------------ max_pool: a NaN window's gradient goes to its NaN
def _first_max_index(x, k, s, pads):
    """For each window of the padded NHWC x: the (row, col) of its first maximum, the first NaN if it has one
    (numpy.argmax's rule; PyTorch's max_pool2d takes the last NaN); padding never."""
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=-np.inf)
    oh, ow = (padded.shape[1] - k) // s + 1, (padded.shape[2] - k) // s + 1
    rows, cols = np.zeros((n, oh, ow, c), int), np.zeros((n, oh, ow, c), int)
    for i in range(oh):
        for j in range(ow):
            window = padded[:, i * s : i * s + k, j * s : j * s + k].reshape(n, k * k, c)
            r, q = np.divmod(np.argmax(window, axis=1), k)
            rows[:, i, j], cols[:, i, j] = i * s + r - pads[0][0], j * s + q - pads[1][0]
    return rows, cols


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize(
    ("k", "s", "padding", "pads"),
    [(1, 1, "VALID", ((0, 0), (0, 0))), (2, 1, "VALID", ((0, 0), (0, 0))), (3, 2, "SAME", ((1, 1), (1, 1)))],
)
def test_max_pool_gradient_of_a_nan_window_goes_to_its_first_nan(traced, k, s, padding, pads):
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, (2, 5, 5, 2)).astype(float)
    x[0, 1, 1, 0] = x[0, 1, 3, 0] = x[1, 4, 4, 1] = np.nan
    x[1, 0, 0, 0] = np.inf
    c = rng.standard_normal(tl.nn.max_pool(x, k, s, padding).shape)
    v = rng.standard_normal(x.shape)

    def grads(x, c, v):
        g = tl.grad(lambda x: tl.sum(tl.nn.max_pool(x, k, s, padding) * c))(x)
        return g, tl.grad(lambda c: tl.sum(tl.grad(lambda x: tl.sum(tl.nn.max_pool(x, k, s, padding) * c))(x) * v))(c)

    g, gg = (tl.function(grads) if traced else grads)(x, c, v)
    rows, cols = _first_max_index(x, k, s, pads)
    n_idx, _, _, c_idx = np.indices(rows.shape)
    expected = np.zeros(x.shape)
    np.add.at(expected, (n_idx, rows, cols, c_idx), c)
    # The NaN windows' gradients were routed nowhere (NaN equals nothing): max_pool(x, 1, 1), the identity, had
    # gradient 0 at a NaN, and MaxPoolGradGrad gathered 0 there.
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(gg.numpy(), v[n_idx, rows, cols, c_idx])


# ------------------------------------------------------------------ fused_batch_norm with a float16 scale
@pytest.mark.parametrize("x_dtype", [np.float16, np.float32])
def test_fused_batch_norm_gradients_with_float16_scale_use_accurate_statistics(x_dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 5, 5, 3)) * 0.3 + 100).astype(x_dtype)
    dy = rng.standard_normal(x.shape)
    scale, offset = np.array([1.0, 2.0, 0.5], np.float16), np.zeros(3, np.float16)

    def loss(x, s, o):
        return tl.sum(tl.cast(tl.nn.fused_batch_norm(x, s, o, epsilon=1e-3)[0], tl.float64) * dy)

    gx, gs, go = tl.grad(loss, argnums=(0, 1, 2))(x, scale, offset)
    # float64 reference from the same (rounded) inputs: dscale = sum(dy * xhat), dx by the batch norm formula.
    xf, sf = x.astype(np.float64), scale.astype(np.float64)
    mean, var = xf.mean((0, 1, 2)), xf.var((0, 1, 2))
    inv_std = 1 / np.sqrt(var + 1e-3)
    xhat = (xf - mean) * inv_std
    ref_scale = (dy * xhat).sum((0, 1, 2))
    ref_x = sf * inv_std * (dy - dy.mean((0, 1, 2)) - xhat * (dy * xhat).mean((0, 1, 2)))
    # The backward read the float16-rounded batch mean (off by up to a tenth of the spread here): the scale
    # gradient was 27% off, the input gradient 0.8%.
    assert gs.dtype == tl.float16 and gx.dtype == x_dtype
    np.testing.assert_allclose(gs.numpy().astype(np.float64), ref_scale, rtol=3e-3, atol=3e-3 * np.abs(ref_scale).max())
    np.testing.assert_allclose(gx.numpy().astype(np.float64), ref_x, rtol=0, atol=2e-3 * np.abs(ref_x).max())
    np.testing.assert_allclose(go.numpy().astype(np.float64), dy.sum((0, 1, 2)), rtol=2e-3)


@pytest.mark.parametrize("layer_dtype", ["float16", "float32"])
def test_batch_norm_layer_normalizes_float16_input_with_float32_statistics(layer_dtype):
    x = (np.random.default_rng(1).standard_normal((8, 4, 4, 3)) * 0.3 + 100).astype(np.float16)
    bn = tl.nn.BatchNorm(3, momentum=0.5, dtype=layer_dtype)
    y = bn(x)
    xf = x.astype(np.float64)
    mean, var = xf.mean((0, 1, 2)), xf.var((0, 1, 2))
    # moments() rounds a float16 x's statistics to float16 (TensorFlow's rule): the mean ~ 100 was off by up to
    # 0.03, a tenth of the spread, and y by up to 0.3 (PyTorch's BatchNorm2d keeps float32 statistics).
    assert y.dtype == np.result_type(np.float16, layer_dtype)
    np.testing.assert_allclose(y.numpy().astype(np.float64), (xf - mean) / np.sqrt(var + 1e-5), atol=2e-3)
    n = xf.size // 3
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * mean, rtol=1e-3)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.5 + 0.5 * var * n / (n - 1), rtol=1e-3)
    assert bn.running_mean.dtype == layer_dtype


def test_fused_batch_norm_second_order_gradients_of_float16_input():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((4, 3, 3, 2)) * 0.3 + 100).astype(np.float16)
    scale, offset = np.array([1.0, 2.0], np.float32), np.zeros(2, np.float32)
    c, v = rng.standard_normal(x.shape), rng.standard_normal(x.shape)

    def input_gradient_along_v(s):
        def loss(x, s):
            return tl.sum(tl.square(tl.cast(tl.nn.fused_batch_norm(x, s, offset)[0], tl.float64)) * c)

        return tl.sum(tl.cast(tl.grad(loss)(x, s), tl.float64) * v)

    got = tl.grad(input_gradient_along_v)(scale).numpy()
    # float64 central differences of the same function in float64 (from the same float16 values).
    xf = x.astype(np.float64)

    def exact(s):
        mean, var = xf.mean((0, 1, 2)), xf.var((0, 1, 2))
        inv_std = 1 / np.sqrt(var + 1e-3)
        xhat = (xf - mean) * inv_std
        dy = 2 * (xhat * s) * c  # d loss / d y, y = xhat * s
        dx = s * inv_std * (dy - dy.mean((0, 1, 2)) - xhat * (dy * xhat).mean((0, 1, 2)))
        return (dx * v).sum()

    eps = 1e-6
    ref = np.array([(exact(scale + eps * e) - exact(scale - eps * e)) / (2 * eps) for e in np.eye(2)])
    # The second-order rules ran in float16: the recomputed mean off by a tenth of the spread, 5% errors.
    np.testing.assert_allclose(got, ref, rtol=1e-2)


def test_depthwise_conv2d_float16_sums_in_float32():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 9, 9, 4)) * 3).astype(np.float16)
    w = rng.standard_normal((5, 5, 4, 2)).astype(np.float16)
    y = tl.nn.depthwise_conv2d(x, w, 1, ((2, 2), (2, 2)))
    ref = _depthwise_reference(x.astype(np.float64), w.astype(np.float64), (1, 1), ((2, 2), (2, 2)))
    assert y.dtype == tl.float16
    # Correctly rounded but for the float32 sums: the float16 sums were 5.6 ulps off on average (rounded ref: 0).
    np.testing.assert_array_equal(np.abs(y.numpy() - ref.astype(np.float16)) <= np.spacing(np.abs(y.numpy())), True)


# ------------------------------------------------------------------ an image with no rows or columns under SAME
@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("shape", [(1, 0, 4, 3), (2, 5, 0, 3), (0, 0, 0, 3)])
def test_conv_and_pools_of_an_empty_same_image_are_empty(backend, traced, shape):
    # The shape rules gave an empty result (TensorFlow's too: conv2d of (1, 0, 4, 3), SAME -> (1, 0, 4, 2)); the
    # NumPy kernels raised "input size 0 ... is smaller than the dilated kernel size 3", the generic ones an
    # IndexError from an out-of-bounds slice with stride 2.
    if backend != "numpy" and not tl.testing.backends.available(extra=True):
        pytest.skip("array_api_strict is not installed")
    x = tl.tensor(np.ones(shape), backend=backend)
    w = tl.tensor(np.ones((3, 3, 3, 2)), backend=backend)

    def run(x, w):
        out = [tl.nn.conv2d(x, w, 2, "SAME")]
        out += tl.grad(lambda x, w: tl.sum(tl.nn.conv2d(x, w, 2, "SAME")), argnums=(0, 1))(x, w)
        for pool in (tl.nn.max_pool, tl.nn.avg_pool):
            out += [pool(x, 3, 2, "SAME"), tl.grad(lambda x: tl.sum(pool(x, 3, 2, "SAME")))(x)]
        return out

    out = (tl.function(run) if traced else run)(x, w)
    n, h, wd, _ = shape
    pooled = (n, -(-h // 2), -(-wd // 2), 3)
    assert [tuple(t.shape) for t in out] == [(n, *pooled[1:3], 2), shape, (3, 3, 3, 2), pooled, shape, pooled, shape]
    assert not np.any(out[2].numpy())  # no outputs: a zero filter gradient


@pytest.mark.parametrize("flag", ["False", 0, None])
def test_fused_batch_norm_is_training_must_be_a_bool(flag):
    # "False" (a true string) normalized with the batch's statistics, ignoring the given mean and variance.
    x = np.arange(8.0).reshape(2, 2, 2, 1)
    with pytest.raises(TypeError, match="FusedBatchNormV3: is_training must be a bool"):
        tl.nn.fused_batch_norm(x, np.ones(1), np.zeros(1), np.zeros(1), np.ones(1), is_training=flag)
    y = tl.nn.fused_batch_norm(x, np.ones(1), np.zeros(1), np.zeros(1), np.ones(1), 0.0, np.bool_(False))[0]
    np.testing.assert_array_equal(y.numpy(), x)

"""fused_batch_norm (one op forward, one op backward), batch_normalization and moments."""

import weakref

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

FBN = tl.ops.get("FusedBatchNormV3")
FBN_GRAD = tl.ops.get("FusedBatchNormGradV3")


def ref_batch_norm(x, mean, var, offset, scale, eps):
    return (x - mean) / np.sqrt(var + eps) * scale + offset


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5, 2)) * 3 + 1
    return x, rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2), rng.random(2) + 0.5


def test_training_forward_and_statistics(data):
    x, scale, offset, _, _ = data
    y, mean, var = tl.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)
    axes = (0, 1, 2)
    np.testing.assert_allclose(
        y.numpy(), ref_batch_norm(x, x.mean(axes), x.var(axes), offset, scale, 1e-3), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(mean.numpy(), x.mean(axes), rtol=1e-12)
    # The returned variance is Bessel-corrected, as TensorFlow's, for running averages; y uses the biased one.
    np.testing.assert_allclose(var.numpy(), x.var(axes, ddof=1), rtol=1e-12)


def test_inference_forward_returns_the_given_statistics(data):
    x, scale, offset, mean, var = data
    mean_t, var_t = tl.tensor(mean), tl.tensor(var)
    y, m, v = tl.nn.fused_batch_norm(x, scale, offset, mean_t, var_t, epsilon=1e-2, is_training=False)
    np.testing.assert_allclose(y.numpy(), ref_batch_norm(x, mean, var, offset, scale, 1e-2), rtol=1e-12)
    assert m is mean_t and v is var_t


def test_training_gradients_to_second_order(data):
    x, scale, offset, _, _ = data
    check_grads(lambda x, s, o: tl.nn.fused_batch_norm(x, s, o, epsilon=1e-3)[0], [x, scale, offset], order=2)


def test_inference_gradients_to_second_order(data):
    x, scale, offset, mean, var = data
    check_grads(
        lambda x, s, o, m, v: tl.nn.fused_batch_norm(x, s, o, m, v, is_training=False)[0],
        [x, scale, offset, mean, var],
        order=2,
    )


def test_gradient_op_differentiates_correctly(data):
    x, scale, offset, _, _ = data
    dy = np.random.default_rng(1).standard_normal(x.shape)

    def grads(dy, x, scale):
        _, mean, _, inv_std = FBN(x, scale, offset, np.empty(0), np.empty(0), epsilon=1e-3, is_training=True)
        return FBN_GRAD(dy, x, scale, mean, inv_std, epsilon=1e-3)

    check_grads(grads, [dy, x, scale], order=2, modes=("rev",))


def test_backward_is_one_fused_op(data):
    x, scale, offset, _, _ = data
    xs, ss, os_ = tl.tensor(x), tl.tensor(scale), tl.tensor(offset)
    with tl.profile() as forward:
        with tl.GradientTape() as tape:
            tape.watch([xs, ss, os_])
            y, _, _ = tl.nn.fused_batch_norm(xs, ss, os_)
    with tl.profile() as backward:
        dx, dscale, doffset = tape.gradient(y, [xs, ss, os_])
    assert [e.op_type for e in forward.events if e.op_type != "StopGradient"] == ["FusedBatchNormV3"]
    assert [e.op_type for e in backward.events if e.op_type != "FullLike"] == ["FusedBatchNormGradV3"]
    np.testing.assert_allclose(doffset.numpy(), np.full(2, x.size / 2))
    np.testing.assert_allclose(dx.numpy(), 0.0, atol=1e-12)  # d sum(y) / dx vanishes: y is centred


def test_batch_statistics_carry_no_gradient(data):
    x, scale, offset, _, _ = data
    xs = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xs)
        _, mean, var = tl.nn.fused_batch_norm(xs, scale, offset)
        loss = tl.sum(mean) + tl.sum(var)
    assert tape.gradient(loss, xs) is None


def test_float16_input_with_float32_parameters():
    rng = np.random.default_rng(2)
    x = tl.tensor(rng.standard_normal((2, 3, 3, 4)).astype(np.float16))
    scale, offset = tl.tensor(np.ones(4, np.float32)), tl.tensor(np.zeros(4, np.float32))
    with tl.GradientTape() as tape:
        tape.watch([x, scale])
        y, mean, var = tl.nn.fused_batch_norm(x, scale, offset)
        loss = tl.sum(y * y)
    dx, dscale = tape.gradient(loss, [x, scale])
    assert (y.dtype, dx.dtype) == (np.float16, np.float16)
    assert (mean.dtype, var.dtype, dscale.dtype) == (np.float32, np.float32, np.float32)
    xf = x.numpy().astype(np.float64)
    ref = ref_batch_norm(xf, xf.mean((0, 1, 2)), xf.var((0, 1, 2)), 0.0, 1.0, 1e-3)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-2, atol=1e-2)


def test_against_tensorflow(data):
    tf = pytest.importorskip("tensorflow")
    x, scale, offset, mean, var = data
    x32, s32, o32 = (a.astype(np.float32) for a in (x, scale, offset))
    ours = tl.nn.fused_batch_norm(x32, s32, o32, epsilon=1e-3)
    theirs = tf.compat.v1.nn.fused_batch_norm(x32, s32, o32, epsilon=1e-3, is_training=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)
    m32, v32 = mean.astype(np.float32), var.astype(np.float32)
    ours = tl.nn.fused_batch_norm(x32, s32, o32, m32, v32, epsilon=1e-3, is_training=False)
    theirs = tf.compat.v1.nn.fused_batch_norm(x32, s32, o32, m32, v32, epsilon=1e-3, is_training=False)
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: tl.nn.fused_batch_norm(np.ones((2, 3)), np.ones(3), np.zeros(3)),
            r"^FusedBatchNormV3: x must be 4-D NHWC .* got shape \(2, 3\)",
        ),
        (
            lambda: tl.nn.fused_batch_norm(np.ones((1, 2, 2, 3)), np.ones(4), np.zeros(3)),
            r"^FusedBatchNormV3: scale must have shape \(3,\) \(one value per channel\), got \(4,\)",
        ),
        (
            lambda: tl.nn.fused_batch_norm(np.ones((1, 2, 2, 3)), np.ones(3), np.zeros(3), is_training=False),
            r"^FusedBatchNormV3: inference \(is_training=False\) needs the mean and variance",
        ),
        (
            lambda: tl.nn.fused_batch_norm(
                np.ones((1, 2, 2, 3)), np.ones(3), np.zeros(3), np.zeros(2), np.ones(3), is_training=False
            ),
            r"^FusedBatchNormV3: mean must have shape \(3,\)",
        ),
    ],
)
def test_error_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ the low-level, any-rank forms
@pytest.mark.parametrize("shape, axes", [((6, 3), [0]), ((2, 3, 4), [0, 1]), ((2, 3, 4, 5), [0, 1, 2])])
def test_moments_and_batch_normalization_any_rank(shape, axes):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    mean, variance = tl.nn.moments(x, axes)
    np.testing.assert_allclose(mean.numpy(), x.mean(tuple(axes)), rtol=1e-12)
    np.testing.assert_allclose(variance.numpy(), x.var(tuple(axes)), rtol=1e-12)
    kept = tl.nn.moments(x, axes, keepdims=True)[0]
    assert kept.shape == tuple(1 if i in axes else d for i, d in enumerate(shape))
    offset, scale = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
    y = tl.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    np.testing.assert_allclose(
        y.numpy(),
        ref_batch_norm(x, x.mean(tuple(axes)), x.var(tuple(axes)), offset, scale, 1e-3),
        rtol=1e-10,
        atol=1e-12,
    )

    def normalize(x, offset, scale):
        m, v = tl.nn.moments(x, axes)
        return tl.nn.batch_normalization(x, m, v, offset, scale, 1e-3)

    check_grads(normalize, [x, offset, scale], order=2)


def test_batch_normalization_without_offset_and_scale():
    y = tl.nn.batch_normalization(tl.tensor([1.0, 3.0]), 2.0, 4.0, None, None, 0.0)
    assert y.numpy().tolist() == [-0.5, 0.5]


def test_moments_of_float16_are_computed_in_float32():
    x = np.full((1000,), 300.0, np.float16) + np.arange(1000).astype(np.float16) % 2
    mean, variance = tl.nn.moments(x, [0])
    assert mean.dtype == variance.dtype == np.float16
    assert float(mean) == pytest.approx(300.5, rel=1e-3) and float(variance) == pytest.approx(0.25, rel=1e-2)


def test_fused_and_composite_agree(data):
    x, scale, offset, _, _ = data
    fused = tl.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3)[0]
    mean, variance = tl.nn.moments(x, [0, 1, 2])
    composite = tl.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    np.testing.assert_allclose(fused.numpy(), composite.numpy(), rtol=1e-12, atol=1e-12)


def test_traced_second_order_with_unknown_batch(data):
    x, scale, offset, _, _ = data

    def squared_gradient_norm(x):
        dx = tl.grad(lambda x: tl.sum(tl.nn.fused_batch_norm(x, scale, offset)[0] ** 3))(x)
        return tl.sum(dx * dx)

    traced = tl.function(tl.grad(squared_gradient_norm))
    graph = traced.get_graph(tl.TensorSpec((None, 4, 5, 2), "float64"))
    assert "FusedBatchNormGradV3" in {n.op_type for n in graph.nodes}
    for batch in (2, 3):
        xb = x[:batch]
        np.testing.assert_allclose(traced(xb).numpy(), tl.grad(squared_gradient_norm)(xb).numpy(), rtol=1e-9, atol=1e-9)


def test_the_backward_op_runs_once_and_is_not_kept(data):
    x, scale, offset, _, _ = data
    xs, ss, os_ = tl.tensor(x), tl.tensor(scale), tl.tensor(offset)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch([xs, ss, os_])
        y = tl.nn.fused_batch_norm(xs, ss, os_)[0]
    for _ in range(2):  # a persistent tape: each pass computes its own backward, once for the three inputs
        with tl.profile() as prof:
            dx, dscale, doffset = tape.gradient(y, [xs, ss, os_])
        assert [e.op_type for e in prof.events].count("FusedBatchNormGradV3") == 1
    freed = weakref.ref(dx)
    del dx, dscale, doffset
    assert freed() is None, "the shared backward result outlived the backward pass"

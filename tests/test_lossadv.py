"""Adversarial cases for the losses, activations and attention (tl.nn): dtypes that follow the inputs, float16
computed in float32 and rounded once, against NumPy/float64 formulas."""

import numpy as np
import pytest

import tensorlib as tl


def _log_softmax(x, axis):
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


# ------------------------------------------------------------------ losses: float16 in float32, dtypes
def test_float16_regression_losses_do_not_overflow_in_their_squares():
    x, y = np.array([300.0, 0.0], np.float16), np.zeros(2, np.float16)
    # (300 - 0) ** 2 = 90000 overflows float16, the mean 45000 does not (it was inf)
    got = tl.nn.mse_loss(x, y)
    assert got.dtype == np.float16 and float(got) == np.float16(45000.0)
    grad = tl.grad(lambda a: tl.nn.mse_loss(a, y))(tl.tensor(x))
    assert grad.dtype == np.float16 and grad.numpy().tolist() == [300.0, 0.0]


def test_float16_cosine_similarity_of_long_vectors():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 400)) * 30, rng.normal(size=(3, 400)) * 30
    b[0] = 2 * a[0]
    ref = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    # the float16 sums of squares (about 360000) were inf: the similarity was 0 and its gradient NaN
    got = tl.nn.cosine_similarity(a16, b16)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.numpy(), ref, atol=2e-3)
    grad = tl.grad(lambda u: tl.sum(tl.nn.cosine_similarity(u, b16)))(tl.tensor(a16)).numpy()
    ref_grad = b / np.linalg.norm(a, axis=1, keepdims=True) / np.linalg.norm(b, axis=1, keepdims=True) - (
        ref[:, None] * a / (a * a).sum(1, keepdims=True)
    )
    assert grad.dtype == np.float16
    np.testing.assert_allclose(grad, ref_grad, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_losses_keep_float16(reduction):
    x = np.array([[2.0, 0.0, -1.0], [0.5, 0.25, 3.0]])
    target = np.array([0, 2])
    logp = _log_softmax(x, 1)
    ref = -logp[np.arange(2), target]
    ref = {"mean": ref.mean(), "sum": ref.sum(), "none": ref}[reduction]
    for got in (
        tl.nn.cross_entropy(x.astype(np.float16), target, reduction=reduction),  # "mean" gave float32
        tl.nn.nll_loss(logp.astype(np.float16), target, reduction=reduction),
    ):
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.numpy(), ref, rtol=2e-3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_keeps_the_dtype_of_log_probs(dtype, reduction):
    # uniform over 2 classes for 3 frames: 6 of the 8 paths give "1", -log(6 / 8) (the result was float64)
    log_probs = np.full((3, 2, 2), np.log(0.5), dtype)
    loss = tl.nn.ctc_loss(log_probs, [[1], [1]], [3, 3], [1, 1], reduction=reduction)
    assert loss.dtype == dtype
    one = -np.log(6.0) - 3 * float(log_probs[0, 0, 0])  # log(0.5) as rounded to the dtype
    expected = {"mean": one, "sum": 2 * one, "none": [one, one]}[reduction]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-3 if dtype == np.float16 else 1e-6)
    grad = tl.grad(lambda a: tl.sum(tl.nn.ctc_loss(a, [[1], [1]], [3, 3], [1, 1], reduction=reduction)))(
        tl.tensor(log_probs)
    )
    assert grad.dtype == dtype


# ------------------------------------------------------------------ activations: float16 in float32
def _float16_ulps(got, ref):
    spacing = np.spacing(np.maximum(np.abs(ref), 2.0**-14).astype(np.float16)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / spacing


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _activation_references():
    from math import erf, pi, sqrt

    phi = np.vectorize(lambda v: 0.5 * (1 + erf(v / sqrt(2))))
    softplus = lambda x: np.logaddexp(x, 0)
    u = lambda x: sqrt(2 / pi) * (x + 0.044715 * x**3)
    du = lambda x: sqrt(2 / pi) * (1 + 3 * 0.044715 * x**2)
    return {
        "silu": (tl.nn.silu, lambda x: x * _sigmoid(x), lambda x: _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))),
        "mish": (
            tl.nn.mish,
            lambda x: x * np.tanh(softplus(x)),
            lambda x: np.tanh(softplus(x)) + x * (1 - np.tanh(softplus(x)) ** 2) * _sigmoid(x),
        ),
        "gelu": (
            tl.nn.gelu,
            lambda x: x * phi(x),
            lambda x: phi(x) + x * np.exp(-0.5 * x * x) / sqrt(2 * pi),
        ),
        "gelu_tanh": (
            lambda x: tl.nn.gelu(x, approximate=True),
            lambda x: 0.5 * x * (1 + np.tanh(u(x))),
            lambda x: 0.5 * (1 + np.tanh(u(x))) + 0.5 * x * (1 - np.tanh(u(x)) ** 2) * du(x),
        ),
        "hard_swish": (
            tl.nn.hard_swish,
            lambda x: x * np.clip(x + 3, 0, 6) / 6,
            lambda x: np.where(x <= -3, 0.0, np.where(x < 3, x / 3 + 0.5, 1.0)),
        ),
        "softplus": (tl.nn.softplus, softplus, _sigmoid),
    }


@pytest.mark.parametrize("name", ["silu", "mish", "gelu", "gelu_tanh", "hard_swish", "softplus"])
def test_float16_activations_and_gradients_round_once(name):
    fn, value, derivative = _activation_references()[name]
    # the grid includes each derivative's zero (silu -1.28, mish -1.19, gelu -0.75, hard_swish -1.5), where the
    # float16 formulas cancelled: silu' was 527 float16 ulps off, mish' 900, gelu' 300, its tanh form 670
    x16 = np.linspace(-8, 8, 1601).astype(np.float16)
    x = x16.astype(np.float64)
    y = fn(x16)
    grad = tl.grad(lambda a: tl.sum(fn(a)))(tl.tensor(x16))
    assert y.dtype == grad.dtype == np.float16
    assert _float16_ulps(y.numpy(), value(x)).max() <= 1.0
    assert _float16_ulps(grad.numpy(), derivative(x)).max() <= 1.5
    traced = tl.function(lambda a: tl.grad(lambda b: tl.sum(fn(b)))(a))(x16)
    np.testing.assert_array_equal(traced.numpy(), grad.numpy())


# ------------------------------------------------------------------ invalid inputs: NaN or one clear error
def test_kl_div_of_a_negative_target_is_nan():
    x, target = np.array([-1.0, -2.0, -3.0]), np.array([-0.5, 0.0, 0.3])
    # PyTorch's target * (log(target) - input): NaN for a negative target (it was 0), 0 for a zero target
    got = tl.nn.kl_div(x, target, reduction="none").numpy()
    assert np.isnan(got[0]) and got[1] == 0.0
    np.testing.assert_allclose(got[2], 0.3 * (np.log(0.3) + 3.0))
    assert np.isnan(float(tl.nn.kl_div(x, target, reduction="sum")))


def test_traced_binary_cross_entropy_of_non_probabilities_is_nan():
    p, t = np.array([1.5, 0.5, -0.1, 0.0, 1.0], np.float32), np.full(5, 0.3, np.float32)
    with pytest.raises(ValueError, match=r"binary_cross_entropy: input must hold probabilities in \[0, 1\]"):
        tl.nn.binary_cross_entropy(p, t)
    # the clamped logs gave 100 for 1.5 and -0.1 when traced
    got = tl.function(lambda a, b: tl.nn.binary_cross_entropy(a, b, reduction="none"))(p, t).numpy()
    assert np.isnan(got[[0, 2]]).all()
    ref = -(0.3 * np.maximum(np.log(p[1:2]), -100) + 0.7 * np.log(1 - p[1:2]))
    np.testing.assert_allclose(got[1:2], ref, rtol=1e-6)
    np.testing.assert_allclose(got[3:], [30.0, 70.0], rtol=1e-6)


def test_loss_arguments_of_the_wrong_shape_name_the_loss():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"cosine_similarity: axis 2 is out of range .*x1 shape \(2, 3\) float32"):
        tl.nn.cosine_similarity(x, x, axis=2)  # was Sum's message
    with pytest.raises(ValueError, match=r"binary_cross_entropy: weight shape \(4,\) .*input shape \(2, 3\)"):
        tl.nn.binary_cross_entropy(x * 0.5, x, weight=np.ones(4, np.float32))  # was Mul's
    with pytest.raises(ValueError, match=r"cross_entropy: weight must have shape \(3,\), one per class, got \(4,\)"):
        tl.nn.cross_entropy(x, x / 3, weight=np.ones(4, np.float32))  # probability targets: was Mul's


def test_float16_softmax_rounds_once():
    rng = np.random.default_rng(0)
    x16 = (rng.normal(size=(4, 1000)) * 2).astype(np.float16)
    x = x16.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    got = tl.nn.softmax(x16)
    assert got.dtype == np.float16
    assert _float16_ulps(got.numpy(), ref).max() <= 1.0  # was 5.4 ulps (summed in float16)
    np.testing.assert_allclose(tl.nn.log_softmax(x16).numpy(), np.log(ref), atol=np.spacing(np.float16(16)))
    small, cotangent = x16[:, :10], rng.normal(size=(4, 10)).astype(np.float16)
    e = np.exp(x[:, :10] - x[:, :10].max(1, keepdims=True))
    s = e / e.sum(1, keepdims=True)
    c = cotangent.astype(np.float64)
    ref_grad = s * (c - (c * s).sum(1, keepdims=True))
    grad = tl.grad(lambda a: tl.sum(tl.nn.softmax(a) * cotangent))(tl.tensor(small))
    assert grad.dtype == np.float16
    assert _float16_ulps(grad.numpy(), ref_grad).max() <= 8.0  # was 27 ulps (PyTorch's float16: 7)


def test_label_smoothing_traced_with_an_unknown_number_of_classes():
    rng = np.random.default_rng(1)
    x, target = rng.normal(size=(3, 5)).astype(np.float32), np.array([0, 4, 2], np.int32)
    logp = _log_softmax(x.astype(np.float64), 1)
    ref = (0.8 * -logp[np.arange(3), target] + 0.2 * -logp.mean(1)).mean()
    spec = tl.TensorSpec((None, None), np.float32)
    # eps / classes with classes None raised a bare TypeError while tracing
    graph = tl.function(lambda a, t: tl.nn.cross_entropy(a, t, label_smoothing=0.2)).get_graph(
        spec, tl.TensorSpec((None,), np.int32)
    )
    np.testing.assert_allclose(graph(x, target).numpy(), ref, rtol=1e-6)
    probs = np.eye(5, dtype=np.float32)[target]
    graph = tl.function(lambda a, t: tl.nn.cross_entropy(a, t, label_smoothing=0.2)).get_graph(spec, spec)
    np.testing.assert_allclose(graph(x, probs).numpy(), ref, rtol=1e-6)


# ------------------------------------------------------------------ attention
def test_float16_attention_rounds_once():
    rng = np.random.default_rng(2)
    q, k, v = (rng.normal(size=(2, 16, 64)).astype(np.float16) for _ in range(3))
    scores = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) / 8.0
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    ref = weights @ v.astype(np.float64)
    got = tl.nn.scaled_dot_product_attention(q, k, v)
    assert got.dtype == np.float16
    assert _float16_ulps(got.numpy(), ref).max() <= 1.0  # was 2500 ulps (products and weights in float16)
    grads = tl.grad(lambda *a: tl.sum(tl.nn.scaled_dot_product_attention(*a)), argnums=(0, 1, 2))(q, k, v)
    assert all(g.dtype == np.float16 for g in grads)
    ref_dv = np.broadcast_to(weights.sum(-2)[..., None], v.shape)  # d sum(weights @ v) / dv
    assert _float16_ulps(grads[2].numpy(), ref_dv).max() <= 1.0

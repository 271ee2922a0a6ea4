"""Activations, softmax, the cross-entropy losses and dropout, against NumPy formulas."""

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.ops.nn import activations as ops_nn
from tensorlib.testing import check_grads


def ref_gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def ref_log_softmax(x, axis=-1):
    x = x.astype(np.float64)
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


ACTIVATIONS = {
    "relu": (tl.nn.relu, lambda x: np.maximum(x, 0)),
    "leaky_relu": (tl.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    "leaky_relu_0.01": (lambda x: tl.nn.leaky_relu(x, alpha=0.01), lambda x: np.where(x > 0, x, 0.01 * x)),
    "elu": (tl.nn.elu, lambda x: np.where(x > 0, x, np.exp(np.minimum(x, 0)) - 1)),
    "gelu": (tl.nn.gelu, ref_gelu),
    "gelu_tanh": (lambda x: tl.nn.gelu(x, approximate=True), lambda x: ref_gelu(x, True)),
    "softplus": (tl.nn.softplus, lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)),
    "erf": (tl.nn.erf, np.vectorize(math.erf)),
    "sigmoid": (tl.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (tl.nn.tanh, np.tanh),
    "softmax": (tl.nn.softmax, lambda x: np.exp(ref_log_softmax(x))),
    "softmax_axis0": (lambda x: tl.nn.softmax(x, axis=0), lambda x: np.exp(ref_log_softmax(x, 0))),
    "log_softmax": (tl.nn.log_softmax, ref_log_softmax),
    "log_softmax_axis1": (lambda x: tl.nn.log_softmax(x, 1), lambda x: ref_log_softmax(x, 1)),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_values_and_second_order_gradients(name):
    fn, ref = ACTIVATIONS[name]
    x = np.random.default_rng(0).standard_normal((3, 4, 5)) * 2
    np.testing.assert_allclose(fn(x).numpy(), ref(x), rtol=1e-12, atol=1e-12)
    check_grads(fn, [x], order=2)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_dtype_is_kept_forward_and_backward(name, dtype):
    fn, ref = ACTIVATIONS[name]
    x = tl.tensor((np.random.default_rng(1).standard_normal((4, 6)) * 2).astype(dtype))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x)
    assert y.dtype == g.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(y.numpy(), ref(x.numpy().astype(np.float64)), rtol=tol, atol=tol)


def test_extreme_inputs_stay_finite():
    big = np.array([[1e4, 0.0, -1e4]], np.float32)
    np.testing.assert_array_equal(tl.nn.softmax(big).numpy(), [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(tl.nn.log_softmax(big).numpy(), [[0.0, -1e4, -2e4]])
    np.testing.assert_array_equal(tl.nn.softplus(big).numpy(), [[1e4, np.float32(math.log(2)), 0.0]])
    np.testing.assert_array_equal(tl.nn.elu(big).numpy(), [[1e4, 0.0, -1.0]])
    g = tl.grad(lambda x: tl.sum(tl.nn.softplus(x) + tl.nn.log_softmax(x)))(tl.tensor(big))
    assert np.isfinite(g.numpy()).all()


def test_erf_without_scipy_matches_scipy():
    x = np.linspace(-4, 4, 101)
    np.testing.assert_allclose(ops_nn._erf_by_math(math.erf, x), ops_nn._erf_function()(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(ops_nn._erf_by_math(math.erfc, x), ops_nn._erf_function("erfc")(x), rtol=1e-14)
    assert ops_nn._erf_by_math(math.erf, x.astype(np.float32)).dtype == np.float32


def test_relu_gradient_can_be_overridden():
    x = tl.tensor([-1.0, 2.0])
    with tl.grad.override({"Relu": lambda node, g: g * 3.0}):
        assert tl.grad(lambda x: tl.sum(tl.nn.relu(x)))(x).numpy().tolist() == [3.0, 3.0]
    assert tl.grad(lambda x: tl.sum(tl.nn.relu(x)))(x).numpy().tolist() == [0.0, 1.0]


def test_relu_grad_is_one_op_that_keeps_the_dtype():
    x = tl.tensor(np.array([-1.0, 0.0, 2.0], np.float32))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.relu(x)
    with tl.profile() as prof:
        g = tape.gradient(y, x)
    assert [e.op_type for e in prof.events if e.op_type != "FullLike"] == ["ReluGrad"]
    assert g.dtype == np.float32 and g.numpy().tolist() == [0.0, 0.0, 1.0]


# ------------------------------------------------------------------ cross entropy
def test_softmax_cross_entropy_values_and_gradient():
    rng = np.random.default_rng(2)
    logits, labels = rng.standard_normal((4, 5)), rng.dirichlet(np.ones(5), size=4)
    loss = tl.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(loss.numpy(), -(labels * ref_log_softmax(logits)).sum(-1), rtol=1e-12)
    g = tl.grad(lambda z: tl.sum(tl.nn.softmax_cross_entropy_with_logits(labels=labels, logits=z)))(logits)
    np.testing.assert_allclose(g.numpy(), np.exp(ref_log_softmax(logits)) - labels, rtol=1e-10, atol=1e-12)
    check_grads(lambda y, z: tl.nn.softmax_cross_entropy_with_logits(labels=y, logits=z), [labels, logits], order=2)
    check_grads(
        lambda y, z: tl.nn.softmax_cross_entropy_with_logits(labels=y, logits=z, axis=0), [labels, logits], order=2
    )


def test_sparse_softmax_cross_entropy_values_and_gradient():
    rng = np.random.default_rng(3)
    logits, labels = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, size=(2, 3))
    loss = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    expected = -np.take_along_axis(ref_log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)
    g = tl.grad(lambda z: tl.sum(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z)))(logits)
    np.testing.assert_allclose(g.numpy(), np.exp(ref_log_softmax(logits)) - np.eye(5)[labels], atol=1e-12)
    check_grads(lambda z: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z), [logits], order=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_is_stable_for_logits_of_1e4(dtype):
    logits = np.array([[1e4, 0.0, -1e4], [-1e4, 1e4, 0.0]], dtype)
    labels = np.array([1, 1])
    loss = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.dtype == dtype and loss.numpy().tolist() == [1e4, 0.0]
    dense = tl.nn.softmax_cross_entropy_with_logits(labels=np.eye(3, dtype=dtype)[labels], logits=logits)
    assert dense.numpy().tolist() == [1e4, 0.0]
    g = tl.grad(lambda z: tl.sum(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z)))(logits)
    assert g.dtype == dtype
    np.testing.assert_array_equal(g.numpy(), [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([0, 5]), logits=np.zeros((2, 5))),
            ValueError,
            r"^SparseSoftmaxCrossEntropyWithLogits: label 5 is out of range \[0, 5\)",
        ),
        (
            lambda: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([0.0]), logits=np.zeros((1, 5))),
            TypeError,
            r"^SparseSoftmaxCrossEntropyWithLogits: labels must be integer class indices, got float64",
        ),
        (
            lambda: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([0, 1]), logits=np.zeros((3, 5))),
            ValueError,
            r"^SparseSoftmaxCrossEntropyWithLogits: labels shape \(2,\) does not match the expected \(3,\)",
        ),
        (
            lambda: tl.nn.softmax_cross_entropy_with_logits(labels=np.zeros((2, 4)), logits=np.zeros((2, 5))),
            ValueError,
            r"^SoftmaxCrossEntropyWithLogits: labels shape \(2, 4\) does not match the expected \(2, 5\)",
        ),
        (
            lambda: tl.nn.softmax(np.zeros((2, 3)), axis=2),
            ValueError,
            r"^Softmax: axis 2 is out of range for a tensor of rank 2",
        ),
        # integers give float64 (DESIGN §6, tests/test_nnint.py); complex is refused, naming the op
        (lambda: tl.nn.gelu(np.zeros(3, np.complex128)), TypeError, r"^Gelu: features must be a floating-point tensor"),
    ],
)
def test_error_messages(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------ dropout
def test_dropout_same_seed_same_mask_and_scaling():
    x = tl.ones((50, 40))
    a, b = tl.nn.dropout(x, 0.25, seed=7), tl.nn.dropout(x, 0.25, seed=7)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), tl.nn.dropout(x, 0.25, seed=8).numpy())
    values = set(np.unique(a.numpy()).tolist())
    assert values == {0.0, np.float32(1 / 0.75)}
    assert abs((a.numpy() == 0).mean() - 0.25) < 0.05
    assert a.dtype == np.float32


def test_dropout_unseeded_follows_tl_random_seed():
    x = tl.ones((10, 10))
    tl.random.seed(3)
    a = tl.nn.dropout(x, 0.5)
    tl.random.seed(3)
    np.testing.assert_array_equal(a.numpy(), tl.nn.dropout(x, 0.5).numpy())


def test_dropout_rate_zero_is_identity_and_gradient_is_the_mask():
    x = tl.tensor(np.arange(6.0).reshape(2, 3))
    assert tl.nn.dropout(x, 0.0) is x
    y = tl.nn.dropout(x, 0.5, seed=1)
    g = tl.grad(lambda x: tl.sum(tl.nn.dropout(x, 0.5, seed=1)))(x)
    np.testing.assert_array_equal(g.numpy(), (y.numpy() != 0) * 2.0 + (x.numpy() == 0) * (g.numpy() != 0) * 2.0)
    check_grads(lambda x: tl.nn.dropout(x, 0.3, seed=4), [x.numpy()], order=2)


def test_dropout_noise_shape_shares_the_draw():
    y = tl.nn.dropout(tl.ones((4, 3, 5)), 0.5, seed=2, noise_shape=(4, 1, None)).numpy()
    assert (y == y[:, :1, :]).all()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tl.nn.dropout(tl.ones(3), 1.0), r"^Dropout: rate must be in \[0, 1\), got 1.0"),
        (lambda: tl.nn.dropout(tl.ones(3), -0.1), r"^Dropout: rate must be in \[0, 1\), got -0.1"),
        (
            lambda: tl.nn.dropout(tl.ones((2, 3)), 0.5, noise_shape=(3, 3)),
            r"^Dropout: noise_shape \(3, 3\) does not broadcast to x's shape \(2, 3\)",
        ),
    ],
)
def test_dropout_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ a float32 network keeps float32 throughout
def test_cnn_backward_runs_every_op_in_float32():
    rng = np.random.default_rng(4)
    x = tl.tensor(rng.standard_normal((4, 8, 8, 1)).astype(np.float32))
    w1 = tl.Variable(rng.standard_normal((3, 3, 1, 4)).astype(np.float32))
    w2 = tl.Variable(rng.standard_normal((64, 3)).astype(np.float32))
    labels = np.array([0, 2, 1, 1])
    with tl.GradientTape() as tape:
        h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w1, 1, "SAME")), 2, 2, "VALID")
        h = tl.nn.avg_pool(tl.nn.gelu(h), 1, 1, "VALID")
        logits = tl.reshape(h, (4, 64)) @ w2
        loss = tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    with tl.profile() as prof:
        grads = tape.gradient(loss, [w1, w2])
    assert all(g.dtype == np.float32 for g in grads)
    wide = [(e.op_type, e.dtypes) for e in prof.events if "float64" in e.dtypes]
    assert wide == [], f"float64 intermediates in a float32 backward: {wide}"

"""Adversarial inputs to ``tl.nn`` and the layers: extreme values, float16, empty axes, odd argument types.

Each test checks values (and gradients where they matter) against float64 NumPy formulas; the
PyTorch cross-checks run only where torch is installed.
"""

import math

import numpy as np
import pytest

import tensorlib as tl


def gelu_tanh_derivative(x):
    """d/dx of 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), in float64."""
    x = np.asarray(x, np.float64)
    c = math.sqrt(2.0 / math.pi)
    with np.errstate(over="ignore"):
        t = np.tanh(c * (x + 0.044715 * x**3))
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x)


# ------------------------------------------------------------------ gelu
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_gelu_tanh_gradient_is_finite_and_exact_for_large_inputs(dtype, mode):
    # float16 x * x overflows from |x| = 256 while 1 - tanh^2 is exactly 0: the gradient was 0 * inf = NaN.
    x = np.array([-6e4, -1e4, -300.0, -20.0, -3.0, -0.5, 0.0, 0.7, 2.0, 20.0, 300.0, 1e4, 6e4], dtype)
    grad = tl.grad(lambda z: tl.sum(tl.nn.gelu(z, approximate=True)))
    if mode == "traced":
        grad = tl.function(grad)
    g = grad(x)
    assert g.dtype == dtype
    expected = gelu_tanh_derivative(x.astype(np.float64))
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(g.numpy().astype(np.float64), expected, rtol=tol, atol=tol)


def test_gelu_tanh_second_derivative_matches_finite_differences():
    x = np.array([-12.0, -4.0, -1.0, 0.3, 2.5, 11.0])
    tl.testing.check_grads(lambda z: tl.sum(tl.nn.gelu(z, approximate=True)), [x], order=2)


@pytest.mark.parametrize("approximate, tanh_form", [("tanh", True), ("none", False), (True, True), (False, False)])
def test_gelu_accepts_pytorch_spellings_of_approximate(approximate, tanh_form):
    # "none" is a truthy string: it silently selected the tanh approximation.
    x = np.array([-2.0, -0.5, 0.5, 2.0])
    exact = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    tanh = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(tl.nn.gelu(x, approximate=approximate).numpy(), tanh if tanh_form else exact, 1e-12)


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="Gelu: approximate must be a bool, 'none' or 'tanh', got 'erf'"):
        tl.nn.gelu(np.ones(2), approximate="erf")


def test_gelu_tanh_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=64) * np.array([1.0, 30.0, 1e3, 1e4] * 16)
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(t, approximate="tanh").sum().backward()
    for dtype in (np.float16, np.float32):
        g = tl.grad(lambda z: tl.sum(tl.nn.gelu(z, approximate=True)))(x.astype(dtype))
        t16 = torch.tensor(x.astype(dtype).astype(np.float64), requires_grad=True)
        torch.nn.functional.gelu(t16, approximate="tanh").sum().backward()
        np.testing.assert_allclose(g.numpy().astype(np.float64), t16.grad.numpy(), rtol=5e-3, atol=5e-3)


# ------------------------------------------------------------------ dropout
def test_dropout_rate_zero_returns_a_tensor_that_does_not_alias_the_callers_array():
    x = np.array([1.0, 2.0, 3.0])
    y = tl.nn.dropout(x, 0.0)
    assert isinstance(y, tl.Tensor) and y.dtype == np.float64
    x[0] = 100.0  # the caller's later write must not reach the result
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0, 3.0])


def test_dropout_rate_zero_on_a_list_is_a_float32_tensor():
    y = tl.nn.dropout([1.0, 2.0], 0.0)
    assert isinstance(y, tl.Tensor) and y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])


def test_dropout_rate_zero_rejects_integers_like_any_other_rate():
    for rate in (0.0, 0.5):
        with pytest.raises(TypeError, match="Dropout: x must be a floating-point tensor, got int64"):
            tl.nn.dropout(np.array([1, 2]), rate)


def test_dropout_rate_zero_is_the_identity_under_a_tape_and_tracing():
    x = tl.tensor(np.array([1.0, -2.0]))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.nn.dropout(x, 0.0)
        loss = tl.sum(y * np.array([3.0, 4.0]))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(tl.function(lambda z: tl.nn.dropout(z, 0.0))(np.array([5.0])).numpy(), [5.0])


# ------------------------------------------------------------------ softmax family over an empty axis
@pytest.mark.parametrize("fn", [tl.nn.softmax, tl.nn.log_softmax])
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_softmax_over_zero_classes_is_empty(fn, mode):
    # NumPy's max of an empty axis raised "zero-size array to reduction operation maximum".
    f = tl.function(fn) if mode == "traced" else fn
    y = f(np.zeros((3, 0)))
    assert y.shape == (3, 0) and y.dtype == np.float64
    g = tl.grad(lambda z: tl.sum(fn(z)))(np.zeros((3, 0)))
    assert g.shape == (3, 0)


def test_cross_entropy_over_zero_classes_is_zero():
    loss = tl.nn.softmax_cross_entropy_with_logits(labels=np.zeros((2, 0)), logits=np.zeros((2, 0)))
    np.testing.assert_array_equal(loss.numpy(), [0.0, 0.0])


# ------------------------------------------------------------------ layers
def test_conv2d_layer_takes_a_numpy_integer_kernel_size():
    # isinstance(np.int64(3), int) is False: tuple(np.int64(3)) raised "'numpy.int64' object is not iterable".
    layer = tl.nn.Conv2D(2, 4, np.int64(3), seed=0)
    assert layer.kernel.shape == (3, 3, 2, 4)
    x = np.random.default_rng(1).normal(size=(1, 5, 5, 2)).astype(np.float32)
    expected = tl.nn.conv2d(x, layer.kernel, 1, "SAME").numpy() + layer.bias.numpy()
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-6)


# ------------------------------------------------------------------ train() / eval() seen by tl.function
def test_traced_dropout_layer_follows_eval_after_tracing_in_training():
    # The training flag was read once while tracing: after eval() the cached graph still dropped.
    layer = tl.nn.Dropout(0.5)
    step = tl.function(lambda x: layer(x))
    x = np.ones(64, np.float32)
    dropped = step(x).numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0}
    layer.eval()
    np.testing.assert_array_equal(step(x).numpy(), x)
    layer.train()
    assert set(np.unique(step(x).numpy())) == {0.0, 2.0}
    assert step.trace_count == 2  # one graph per mode, both kept: toggling does not retrace
    assert step.retrace_reasons[1] == "Dropout.training: True -> False"


@pytest.mark.parametrize("first", ["train", "eval"])
def test_traced_batch_norm_layer_uses_running_statistics_in_eval(first):
    rng = np.random.default_rng(0)
    bn = tl.nn.BatchNorm(3, momentum=0.5)
    step = tl.function(lambda x: bn(x))
    x = (rng.normal(size=(8, 3)) * 2.0 + 1.0).astype(np.float32)
    x64 = x.astype(np.float64)
    running_mean, running_var = np.zeros(3), np.ones(3)
    for mode in (first, "eval" if first == "train" else "train", first):
        getattr(bn, mode)()
        y = step(x).numpy()
        if mode == "train":
            mean, var = x64.mean(0), x64.var(0)
            expected = (x64 - mean) / np.sqrt(var + 1e-5)
            running_mean = 0.5 * running_mean + 0.5 * mean
            running_var = 0.5 * running_var + 0.5 * var * 8 / 7
        else:
            expected = (x64 - running_mean) / np.sqrt(running_var + 1e-5)
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(bn.running_mean.numpy(), running_mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bn.running_var.numpy(), running_var, rtol=1e-5, atol=1e-6)


def test_traced_model_passed_as_an_argument_follows_its_mode():
    model = tl.nn.Sequential(tl.nn.Dense(4, 4, kernel_initializer="ones", seed=0), tl.nn.Dropout(0.9))
    step = tl.function(lambda m, x: m(x))
    x = np.ones((2, 4), np.float32)
    step(model, x)
    model.eval()
    np.testing.assert_array_equal(step(model, x).numpy(), np.full((2, 4), 4.0, np.float32))


def test_module_training_flag_defaults_and_assignment():
    class Bare(tl.Module):  # __init__ skips Module.__init__
        def __init__(self):
            pass

    assert Bare().training is True
    m = Bare()
    m.training = 0
    assert m.training is False

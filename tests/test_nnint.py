"""DESIGN §6 for integer and bool inputs to the tl.nn activations: a float-valued activation of int64, int32, uint8
or bool features gives float64, the NumPy/SciPy float64 formula of the same values (``jax.nn`` gives its default
float there); the integer-valued ``relu`` and ``hard_tanh`` keep the integer dtype, as ``jax.nn`` does;
differentiating with respect to an integer input is a TypeError naming the argument.  Eager and under
``tl.function``."""

import numpy as np
import pytest
import scipy.special as sp
from _helpers import MODES, assert_integer_input_not_differentiable, run_in_mode

import tensorlib as tl

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _log_softmax(x, axis=-1):
    s = x - x.max(axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis, keepdims=True))


def _glu(x):
    a, b = np.split(x, 2, axis=-1)
    return a * sp.expit(b)


# name -> (tensorlib function, float64 reference formula written here with NumPy/SciPy)
FLOAT_VALUED = {
    "relu6": (tl.nn.relu6, lambda x: np.minimum(np.maximum(x, 0.0), 6.0)),
    "elu": (tl.nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))),
    "selu": (tl.nn.selu, lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0.0)))),
    "celu": (
        lambda x: tl.nn.celu(x, alpha=2.0),
        lambda x: np.where(x > 0, x, 2.0 * np.expm1(np.minimum(x, 0.0) / 2.0)),
    ),
    "gelu": (tl.nn.gelu, lambda x: x * 0.5 * sp.erfc(-x / np.sqrt(2.0))),  # erfc: 1 + erf(x) cancels for x < 0
    "gelu_tanh": (
        lambda x: tl.nn.gelu(x, approximate=True),
        # (1 + tanh(u)) / 2 = expit(2u): the sum with 1 cancels for x < -5
        lambda x: x * sp.expit(2.0 * np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)),
    ),
    "leaky_relu": (tl.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    "softplus": (tl.nn.softplus, lambda x: np.log1p(np.exp(x))),
    "softplus_beta": (
        lambda x: tl.nn.softplus(x, beta=2.0, threshold=5.0),
        lambda x: np.where(2.0 * x > 5.0, x, np.log1p(np.exp(2.0 * x)) / 2.0),
    ),
    "softmax": (tl.nn.softmax, _softmax),
    "log_softmax": (tl.nn.log_softmax, _log_softmax),
    "erf": (tl.nn.erf, sp.erf),
    "silu": (tl.nn.silu, lambda x: x * sp.expit(x)),
    "swish": (tl.nn.swish, lambda x: x / (1.0 + np.exp(-x))),
    "hard_sigmoid": (tl.nn.hard_sigmoid, lambda x: np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    "hard_swish": (tl.nn.hard_swish, lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    "hard_silu": (tl.nn.hard_silu, lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    "log_sigmoid": (tl.nn.log_sigmoid, lambda x: -np.logaddexp(0.0, -x)),
    "softsign": (tl.nn.softsign, lambda x: x / (1.0 + np.abs(x))),
    "soft_sign": (tl.nn.soft_sign, lambda x: x / (1.0 + np.abs(x))),
    "mish": (tl.nn.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "glu": (tl.nn.glu, _glu),
    "prelu": (lambda x: tl.nn.prelu(x, 0.25), lambda x: np.where(x > 0, x, 0.25 * x)),
    "sigmoid": (tl.nn.sigmoid, sp.expit),
    "tanh": (tl.nn.tanh, np.tanh),
    "tanhshrink": (tl.nn.tanhshrink, lambda x: x - np.tanh(x)),
    "softmin": (tl.nn.softmin, lambda x: _softmax(-x)),
    "hardshrink": (tl.nn.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0.0)),
    "softshrink": (tl.nn.softshrink, lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0))),
}

_VALUES = {
    "int64": np.array([[-7, -2, -1, 0], [1, 2, 3, 9]], np.int64),
    "int32": np.array([[-7, -2, -1, 0], [1, 2, 3, 9]], np.int32),
    "uint8": np.array([[0, 1, 2, 3], [5, 6, 7, 30]], np.uint8),
    "bool": np.array([[True, False, True, True], [False, False, True, False]]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", list(_VALUES))
@pytest.mark.parametrize("name", list(FLOAT_VALUED))
def test_float_valued_activation_of_integers_is_float64(name, dtype, mode):
    fn, ref = FLOAT_VALUED[name]
    x = _VALUES[dtype]
    got = run_in_mode(mode, fn, x)
    assert got.dtype == np.float64, (name, dtype, got.dtype)
    np.testing.assert_allclose(got.numpy(), ref(x.astype(np.float64)), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "leaky_relu", "gelu", "silu", "hard_swish", "prelu", "glu"])
def test_large_integers_are_not_rounded_through_float32(name):
    fn, ref = FLOAT_VALUED[name]
    # float32 holds neither 2**24 + 1 nor 2**53 + 1 (both round down); float64 holds 2**24 + 1 and rounds 2**53 + 1
    # as the float64 reference does.
    x = np.array([[2**24 + 1, 2**40 + 3, 2**53 + 1, 2**53 + 1]], np.int64)
    got = fn(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), ref(x.astype(np.float64)))
    if name not in ("selu", "glu"):  # the identity for large positive x
        assert got.numpy()[0, 0] == 16777217.0  # through float32: 16777216.0
    np.testing.assert_array_equal(tl.nn.softplus(x).numpy(), x.astype(np.float64))
    np.testing.assert_array_equal(tl.nn.softsign(-x).numpy(), -x / (1.0 + x.astype(np.float64)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
def test_relu_and_hard_tanh_keep_the_integer_dtype(dtype, mode):
    x = np.array([-100, -2, -1, 0, 1, 2, 100] if dtype != "uint8" else [0, 1, 2, 100, 255], dtype)
    want = tl.tensor(x).dtype  # tensorlib's integer dtypes are int32 and int64: uint8 and int8 arrive as int32
    got = run_in_mode(mode, tl.nn.relu, x)
    assert got.dtype == want
    np.testing.assert_array_equal(got.numpy(), np.maximum(x, 0))
    got = run_in_mode(mode, tl.nn.hard_tanh, x)  # jax.nn.hard_tanh keeps the integer dtype
    assert got.dtype == want
    np.testing.assert_array_equal(got.numpy(), np.clip(x.astype(np.int64), -1, 1))
    got = run_in_mode(mode, lambda t: tl.nn.hard_tanh(t, -3.0, 50.0), x)
    assert got.dtype == want
    np.testing.assert_array_equal(got.numpy(), np.clip(x.astype(np.int64), -3, 50))


@pytest.mark.parametrize("mode", MODES)
def test_hard_tanh_of_integers_with_bounds_they_cannot_hold_is_float64_not_truncated(mode):
    x = np.array([-3, -1, 0, 1, 3], np.int32)
    got = run_in_mode(mode, lambda t: tl.nn.hard_tanh(t, -0.5, 0.5), x)  # PyTorch's hardtanh truncates to 0
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), [-0.5, -0.5, 0.0, 0.5, 0.5])
    x = np.array([-3, 0, 7], np.int32)
    got = run_in_mode(mode, lambda t: tl.nn.hard_tanh(t, -(2.0**40), -(2.0**35)), x)  # every result < int32's min
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), [-(2.0**35)] * 3)
    got = run_in_mode(mode, lambda t: tl.nn.hard_tanh(t, 2.0**35, 2.0**40), x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), [2.0**35] * 3)
    got = run_in_mode(mode, lambda t: tl.nn.hard_tanh(t, -(2.0**40), 5.0), x)  # bounds beyond int32: still int32
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.numpy(), [-3, 0, 5])


def test_float_inputs_keep_their_dtype_and_values():
    x64 = np.linspace(-4.0, 4.0, 8)
    for name, (fn, ref) in FLOAT_VALUED.items():
        for dtype in (np.float16, np.float32, np.float64):
            got = fn(x64.astype(dtype))
            assert got.dtype == dtype, (name, dtype)
            tol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-13}[dtype]
            np.testing.assert_allclose(got.numpy().astype(np.float64), ref(x64.astype(dtype)), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["relu6", "elu", "gelu", "softmax", "mish", "glu", "prelu", "hard_tanh"])
def test_differentiating_with_respect_to_an_integer_input_raises(name):
    fn = tl.nn.hard_tanh if name == "hard_tanh" else FLOAT_VALUED[name][0]
    x = np.array([[1, -2, 3, 4]], np.int64)
    assert_integer_input_not_differentiable(fn, x)


def test_complex_and_bool_refusals_still_name_the_op():
    with pytest.raises(TypeError, match=r"^Elu: .*complex128"):
        tl.nn.elu(np.array([1 + 2j]))
    with pytest.raises(TypeError, match=r"^HardTanh: .*bool"):
        tl.nn.hard_tanh(np.array([True, False]))


def test_layers_and_vmap_with_integer_inputs():
    x = np.array([[-2, 0, 3]], np.int64)
    got = tl.vmap(tl.nn.gelu)(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), FLOAT_VALUED["gelu"][1](x.astype(np.float64)), rtol=1e-13)
    dense = tl.nn.Dense(3, 2, activation="softplus")
    y = dense(np.ones((1, 3), np.float32))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0.0, np.ones((1, 3)) @ dense.kernel.numpy()), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_cross_entropy_losses_of_integer_logits_are_float64(dtype, mode):
    logits = _VALUES[dtype].astype(dtype)
    x = logits.astype(np.float64)
    onehot = np.array([[0, 1, 0, 0], [0, 0, 0, 1]], np.int64)
    got = run_in_mode(mode, lambda a, b: tl.nn.softmax_cross_entropy_with_logits(labels=b, logits=a), logits, onehot)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), -(onehot * _log_softmax(x)).sum(-1), rtol=1e-13)
    sparse = np.array([1, 3], np.int64)
    got = run_in_mode(
        mode, lambda a, b: tl.nn.sparse_softmax_cross_entropy_with_logits(labels=b, logits=a), logits, sparse
    )
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), -_log_softmax(x)[[0, 1], sparse], rtol=1e-13)
    got = run_in_mode(mode, lambda a, b: tl.nn.sigmoid_cross_entropy_with_logits(labels=b, logits=a), logits, onehot)
    assert got.dtype == np.float64
    np.testing.assert_allclose(
        got.numpy(), onehot * np.logaddexp(0.0, -x) + (1 - onehot) * np.logaddexp(0.0, x), rtol=1e-13, atol=1e-300
    )
    got = run_in_mode(mode, lambda b, a: tl.nn.weighted_cross_entropy_with_logits(b, a, 2.0), onehot, logits)
    assert got.dtype == np.float64
    np.testing.assert_allclose(
        got.numpy(), (1 - onehot) * x + (1 + onehot) * np.logaddexp(0.0, -x), rtol=1e-13, atol=1e-300
    )

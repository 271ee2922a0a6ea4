"""DESIGN §6 for integer and bool inputs to the tl.nn normalizations and normalization layers: int64, int32, uint8
or bool ``x`` gives float64, the float64 NumPy formula (written here) of the same values, eagerly and under
``tl.function``; float parameters (a layer's float32 scale and offset) then promote as NumPy does (float64);
differentiating with respect to the integer input is a TypeError naming the argument; large integers are not
rounded through float32.  PyTorch's float64 results where it is installed."""

import numpy as np
import pytest
from _helpers import MODES, assert_integer_input_not_differentiable, run_in_mode

import tensorlib as tl

EPS = 1e-5


def _standardize(x, axes, eps=EPS):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)


def _layer_norm(x, scale=None, offset=None):
    y = _standardize(x, -1)
    return y * (1.0 if scale is None else scale) + (0.0 if offset is None else offset)


def _rms_norm(x, scale=None, eps=1e-6):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * (1.0 if scale is None else scale)


def _group_norm(x, groups, eps=EPS):
    """Channels last: the channels split into ``groups`` consecutive groups, each standardized with the spatial axes."""
    split = x.reshape(x.shape[:-1] + (groups, x.shape[-1] // groups))
    axes = tuple(range(1, x.ndim - 1)) + (x.ndim,)
    return _standardize(split, axes, eps).reshape(x.shape)


def _instance_norm(x, eps=EPS):
    return _standardize(x, tuple(range(1, x.ndim - 1)), eps)


def _l2_normalize(x, axis=None, eps=1e-12):
    return x / np.sqrt(np.maximum((x**2).sum(axis=axis, keepdims=True), eps))


def _normalize(x, p, axis=1, eps=1e-12):
    return x / np.maximum(np.linalg.norm(x, ord=p, axis=axis, keepdims=True), eps)


def _local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    """PyTorch's formula along axis 1: the squares of ``size`` channels around each, zero-padded, divided by size."""
    sq = np.pad(x**2, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 2))
    window = sum(sq[:, i : i + x.shape[1]] for i in range(size))
    return x / (k + alpha / size * window) ** beta


def _weighted_moments(x, axes, w):
    w = np.broadcast_to(w, x.shape)
    mean = (w * x).sum(axis=axes, keepdims=True) / w.sum(axis=axes, keepdims=True)
    var = (w * (x - mean) ** 2).sum(axis=axes, keepdims=True) / w.sum(axis=axes, keepdims=True)
    return mean.squeeze(axes), var.squeeze(axes)


_WEIGHTS = np.array([1, 2, 3, 1])

# name -> (tensorlib function of x, float64 NumPy reference of the float64 x); x is (2, 3, 4), channels last
FUNCTIONS = {
    "layer_norm": (tl.nn.layer_norm, _layer_norm),
    "layer_norm_affine": (
        lambda x: tl.nn.layer_norm(x, np.float32([1.5, -2, 0.25, 3]), np.float32([0.5, 1, -1, 2])),
        lambda x: _layer_norm(x, np.float32([1.5, -2, 0.25, 3]), np.float32([0.5, 1, -1, 2])),
    ),
    "layer_norm_axes": (lambda x: tl.nn.layer_norm(x, axis=(1, 2)), lambda x: _standardize(x, (1, 2))),
    "rms_norm": (tl.nn.rms_norm, _rms_norm),
    "rms_norm_scale": (
        lambda x: tl.nn.rms_norm(x, np.float32([2, 1, 0.5, -1])),
        lambda x: _rms_norm(x, np.float32([2, 1, 0.5, -1])),
    ),
    "group_norm": (lambda x: tl.nn.group_norm(x, 2), lambda x: _group_norm(x, 2)),
    "instance_norm": (tl.nn.instance_norm, _instance_norm),
    "l2_normalize": (tl.nn.l2_normalize, _l2_normalize),
    "l2_normalize_axis": (lambda x: tl.nn.l2_normalize(x, axis=-1), lambda x: _l2_normalize(x, -1)),
    "normalize_p2": (tl.nn.normalize, lambda x: _normalize(x, 2)),
    "normalize_p1": (lambda x: tl.nn.normalize(x, p=1.0, axis=-1), lambda x: _normalize(x, 1, axis=-1)),
    "normalize_pinf": (lambda x: tl.nn.normalize(x, p=np.inf), lambda x: _normalize(x, np.inf)),
    "normalize_p3": (lambda x: tl.nn.normalize(x, p=3.0), lambda x: _normalize(x, 3)),
    "local_response_norm": (
        lambda x: tl.nn.local_response_norm(x, 2, alpha=0.5, beta=0.75),
        lambda x: _local_response_norm(x, 2, alpha=0.5),
    ),
    "moments_mean": (lambda x: tl.nn.moments(x, [0, 1])[0], lambda x: x.mean(axis=(0, 1))),
    "moments_variance": (lambda x: tl.nn.moments(x, [0, 1])[1], lambda x: x.var(axis=(0, 1))),
    "weighted_moments_mean": (
        lambda x: tl.nn.weighted_moments(x, [0, 2], _WEIGHTS)[0],
        lambda x: _weighted_moments(x, (0, 2), _WEIGHTS)[0],
    ),
    "weighted_moments_variance": (
        lambda x: tl.nn.weighted_moments(x, [0, 2], _WEIGHTS)[1],
        lambda x: _weighted_moments(x, (0, 2), _WEIGHTS)[1],
    ),
    "batch_normalization": (
        lambda x: tl.nn.batch_normalization(x, np.array([1, 2, 0, 3]), np.array([4, 1, 2, 9]), 1, 2, 0.5),
        lambda x: (x - [1, 2, 0, 3]) / np.sqrt(np.array([4, 1, 2, 9]) + 0.5) * 2 + 1,
    ),
    "fused_batch_norm": (
        lambda x: tl.nn.fused_batch_norm(x[:, :, None], np.float32([1, 2, 3, 4]), np.float32([0, 1, 0, -1]))[0],
        lambda x: _standardize(x, (0, 1), 1e-3) * np.float32([1, 2, 3, 4]) + np.float32([0, 1, 0, -1]),
    ),
}

_BASE = np.array([[[3, -1, 4, 1], [-5, 9, 2, -6], [5, 3, -5, 8]], [[9, 7, -9, 3], [2, 3, 8, 4], [-6, 2, 6, 4]]])
_VALUES = {
    "int64": _BASE.astype(np.int64),
    "int32": _BASE.astype(np.int32),
    "uint8": (_BASE + 9).astype(np.uint8),
    "bool": _BASE % 3 == 0,
}


def _squeezed(name, got):
    return got.numpy().squeeze(2) if name == "fused_batch_norm" else got.numpy()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", list(_VALUES))
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_normalization_of_integers_is_float64(name, dtype, mode):
    fn, ref = FUNCTIONS[name]
    x = _VALUES[dtype]
    got = run_in_mode(mode, fn, x)
    assert got.dtype == np.float64, (name, dtype, got.dtype)
    np.testing.assert_allclose(_squeezed(name, got), ref(x.astype(np.float64)), rtol=1e-12, atol=1e-14)


def test_float_inputs_keep_their_dtype_and_values():
    for name, (fn, ref) in FUNCTIONS.items():
        for dtype, tol in ((np.float16, 5e-3), (np.float32, 2e-5), (np.float64, 1e-12)):
            x = _BASE.astype(dtype)
            got = fn(x)
            want = ref(x.astype(np.float64))
            expected = np.float32 if dtype == np.float16 and name in ("layer_norm_affine", "rms_norm_scale") else dtype
            if name == "batch_normalization":  # int64 statistics next to float x: float64, as NumPy's x - mean
                expected = np.float64
            assert got.dtype == expected, (name, dtype, got.dtype)
            np.testing.assert_allclose(_squeezed(name, got).astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["layer_norm", "rms_norm", "group_norm", "instance_norm", "l2_normalize_axis"])
def test_large_integers_are_not_rounded_through_float32(name):
    fn, ref = FUNCTIONS[name]
    # float32 holds neither 2**24 + 1 nor 2**53 + 1; float64 holds the first and rounds the second as the float64
    # reference does.  Through float32 the first row's two halves are equal: layer_norm gives 0 where it is +-1.
    x = np.array([[[2**24, 2**24 + 1, 2**24, 2**24 + 1]], [[2**53 + 1, 2**53, 2**53 + 8, 2**53 - 8]]], np.int64)
    got = fn(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), ref(x.astype(np.float64)), rtol=1e-12, atol=1e-14)
    if name in ("layer_norm", "group_norm"):
        assert np.abs(got.numpy()[0]).min() > 0.99  # through float32: 0


LAYERS = {
    "LayerNorm": (lambda: tl.nn.LayerNorm(4), lambda layer, x: _layer_norm(x)),
    "RMSNorm": (lambda: tl.nn.RMSNorm(4), lambda layer, x: _rms_norm(x)),
    "GroupNorm": (lambda: tl.nn.GroupNorm(2, 4), lambda layer, x: _group_norm(x, 2)),
    "InstanceNorm": (lambda: tl.nn.InstanceNorm(4), lambda layer, x: _instance_norm(x)),
    "BatchNorm": (lambda: tl.nn.BatchNorm(4), lambda layer, x: _standardize(x, (0, 1))),
    "BatchNorm_eval": (
        lambda: tl.nn.BatchNorm(4).eval(),
        # running mean 0, variance 1: float32 Variables, so 1 / sqrt(var + eps) is float32 as in NumPy (a weak
        # Python float), then promoted by the float64 x
        lambda layer, x: (x - layer.running_mean.numpy()) * (1.0 / np.sqrt(layer.running_var.numpy() + EPS)),
    ),
    "UnitNormalization": (lambda: tl.nn.UnitNormalization(), lambda layer, x: _l2_normalize(x, -1)),
    "LocalResponseNorm": (
        lambda: tl.nn.LocalResponseNorm(3, alpha=0.5),
        lambda layer, x: _local_response_norm(x, 3, 0.5),
    ),
    "Normalization": (
        lambda: tl.nn.Normalization(mean=[1.0, 0.5, -2.0, 3.0], variance=[4.0, 0.25, 1.0, 9.0]),
        lambda layer, x: (x - np.float32([1.0, 0.5, -2.0, 3.0])) / np.float32([2.0, 0.5, 1.0, 3.0]),
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", list(_VALUES))
@pytest.mark.parametrize("name", list(LAYERS))
def test_normalization_layers_of_integers_are_float64(name, dtype, mode):
    make, ref = LAYERS[name]
    layer, x = make(), _VALUES[dtype]
    got = run_in_mode(mode, layer, x)
    # The layer's float32 parameters meet the float64 that the integers become: float64, NumPy's promotion.
    assert got.dtype == np.float64, (name, dtype, got.dtype)
    np.testing.assert_allclose(got.numpy(), ref(layer, x.astype(np.float64)), rtol=1e-12, atol=1e-14)


def test_batch_norm_layer_running_statistics_from_integers():
    layer = tl.nn.BatchNorm(4, momentum=0.5)
    x = _VALUES["int64"].reshape(-1, 4)
    layer(x)
    xf = x.astype(np.float64)
    np.testing.assert_allclose(layer.running_mean.numpy(), 0.5 * xf.mean(0), rtol=1e-6)
    np.testing.assert_allclose(layer.running_var.numpy(), 0.5 + 0.5 * xf.var(0, ddof=1), rtol=1e-6)
    assert layer.running_mean.dtype == np.float32  # the layer's own dtype


@pytest.mark.parametrize(
    "name", ["layer_norm", "rms_norm", "group_norm", "l2_normalize", "normalize_p2", "fused_batch_norm"]
)
def test_differentiating_with_respect_to_an_integer_input_raises(name):
    fn = FUNCTIONS[name][0]
    x = _VALUES["int64"]
    assert_integer_input_not_differentiable(fn, x)


def test_gradient_with_respect_to_the_float_parameters_of_an_integer_input():
    x = _VALUES["int32"]
    scale = tl.tensor(np.float32([1.5, -2, 0.25, 3]))
    g = tl.grad(lambda s: tl.sum(tl.nn.layer_norm(x, s) ** 2))(scale)
    # d/ds sum((y * s)**2) = 2 * s * sum(y**2) over the rows
    want = 2 * np.float64(scale.numpy()) * (_layer_norm(x.astype(np.float64)) ** 2).sum(axis=(0, 1))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)


def test_complex_input_is_still_refused_naming_the_function():
    z = np.ones((2, 4), np.complex128)
    for fn, name in ((tl.nn.layer_norm, "layer_norm"), (tl.nn.rms_norm, "rms_norm"), (tl.nn.normalize, "normalize")):
        with pytest.raises(TypeError, match=rf"^{name}: x must be a real tensor, got complex128 \(x shape \(2, 4\)\)"):
            fn(z)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_against_torch_float64(dtype):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = _VALUES[dtype]
    t = torch.from_numpy(x.astype(np.float64))
    nchw = t.permute(0, 2, 1)  # (batch, channels, length)

    def close(got, want):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)

    close(tl.nn.layer_norm(x), F.layer_norm(t, (4,), eps=EPS))
    close(tl.nn.rms_norm(x), F.rms_norm(t, (4,), eps=1e-6))
    close(tl.nn.group_norm(x, 2), F.group_norm(nchw, 2, eps=EPS).permute(0, 2, 1))
    close(tl.nn.instance_norm(x), F.instance_norm(nchw, eps=EPS).permute(0, 2, 1))
    close(tl.nn.normalize(x, p=3.0), F.normalize(t, p=3.0, dim=1))
    close(tl.nn.local_response_norm(x, 3, alpha=0.5), F.local_response_norm(t, 3, alpha=0.5))

"""The layers a Keras / torch.nn user reaches for beyond Dense and Conv2D: Conv1D, Conv3D, Conv2DTranspose,
DepthwiseConv2D, the 1-D and 3-D pools, the global pools, GroupNorm and InstanceNorm, and adversarial cases of
the existing layers (BatchNorm's statistics, Conv2D's SAME split, initial distributions).

References: direct NumPy formulas written here (a convolution as a sum over the kernel taps with TensorFlow's
SAME split, a transposed one as a scatter, pools over padded windows, the group statistics), float64 central
differences (``check_grads``), and, where installed, PyTorch's functional ops with the weights copied
(forward and gradients) and Keras' ``Conv2DTranspose`` for the output sizes.
"""

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)


# ------------------------------------------------------------------ NumPy references
def _tuple(value, rank):
    return (int(value),) * rank if np.isscalar(value) else tuple(int(v) for v in value)


def same_pads(n, k, s, d):
    """TensorFlow's SAME split: the odd cell of padding at the end."""
    effective = (k - 1) * d + 1
    total = max((-(-n // s) - 1) * s + effective - n, 0)
    return total // 2, total - total // 2


def conv_pads(layer, spatial):
    rank = len(spatial)
    strides, dilations = _tuple(layer.strides, rank), _tuple(layer.dilations, rank)
    if isinstance(layer.padding, str) and layer.padding.upper() == "CAUSAL":
        return [((layer.kernel_size[0] - 1) * _tuple(layer.dilations, 1)[0], 0)]
    if isinstance(layer.padding, str) and layer.padding.upper() == "SAME":
        return [same_pads(n, k, s, d) for n, k, s, d in zip(spatial, layer.kernel_size, strides, dilations)]
    if isinstance(layer.padding, str):
        return [(0, 0)] * rank
    pads = layer.padding
    return [tuple(pads)] if rank == 1 and np.isscalar(pads[0]) else [tuple(p) for p in pads]


def np_conv(x, w, strides, dilations, pads):
    """Channels-last convolution: ``x (N, *S, C)``, ``w (*K, C, O)``, a sum of one GEMM per kernel tap."""
    rank = w.ndim - 2
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    sizes = [(x.shape[1 + i] - (w.shape[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(rank)]
    y = np.zeros((x.shape[0], *sizes, w.shape[-1]))
    for tap in np.ndindex(*w.shape[:rank]):
        window = tuple(
            slice(tap[i] * dilations[i], tap[i] * dilations[i] + (sizes[i] - 1) * strides[i] + 1, strides[i])
            for i in range(rank)
        )
        y += x[(slice(None), *window)] @ w[tap]
    return y


def np_depthwise_kernel(w):
    """(kh, kw, C, M) -> the equivalent full (kh, kw, C, C * M) kernel (block diagonal)."""
    kh, kw, c, m = w.shape
    full = np.zeros((kh, kw, c, c * m))
    for ch in range(c):
        full[:, :, ch, ch * m : (ch + 1) * m] = w[:, :, ch, :]
    return full


def np_conv_transpose(x, w, strides, dilations, crops, out_size):
    """Scatter each input pixel times the (kh, kw, O, I) kernel, then crop ``crops[i][0]`` cells in front and
    keep ``out_size`` (zeros past the full result)."""
    n, h, wd, _ = x.shape
    kh, kw, o, _ = w.shape
    full_h, full_w = (
        (h - 1) * strides[0] + (kh - 1) * dilations[0] + 1,
        (wd - 1) * strides[1] + (kw - 1) * dilations[1] + 1,
    )
    full = np.zeros((n, max(full_h, crops[0][0] + out_size[0]), max(full_w, crops[1][0] + out_size[1]), o))
    for i, j in np.ndindex(kh, kw):
        rows = slice(i * dilations[0], i * dilations[0] + (h - 1) * strides[0] + 1, strides[0])
        cols = slice(j * dilations[1], j * dilations[1] + (wd - 1) * strides[1] + 1, strides[1])
        full[:, rows, cols] += x @ w[i, j].T
    return full[:, crops[0][0] : crops[0][0] + out_size[0], crops[1][0] : crops[1][0] + out_size[1]]


def np_pool(x, ksize, strides, padding, kind):
    """Channels-last pooling; SAME pads with cells that never win (max) or count (mean), as TensorFlow."""
    rank = x.ndim - 2
    k, s = _tuple(ksize, rank), _tuple(strides, rank)
    pads = [same_pads(x.shape[1 + i], k[i], s[i], 1) if padding == "SAME" else (0, 0) for i in range(rank)]
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)
    inside = np.pad(np.ones(x.shape), [(0, 0), *pads, (0, 0)])
    sizes = [(xp.shape[1 + i] - k[i]) // s[i] + 1 for i in range(rank)]
    total = np.full((x.shape[0], *sizes, x.shape[-1]), fill)
    count = np.zeros_like(total)
    for tap in np.ndindex(*k):
        window = (slice(None), *(slice(tap[i], tap[i] + (sizes[i] - 1) * s[i] + 1, s[i]) for i in range(rank)))
        total = np.maximum(total, xp[window]) if kind == "max" else total + xp[window]
        count += inside[window]
    return total if kind == "max" else total / count


def np_group_norm(x, groups, scale, offset, eps):
    n, c = x.shape[0], x.shape[-1]
    g = x.reshape(n, -1, groups, c // groups)
    mean, var = g.mean(axis=(1, 3), keepdims=True), g.var(axis=(1, 3), keepdims=True)
    return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape) * scale + offset


def np_transpose_geometry(layer, spatial):
    """Keras' output size (SAME / VALID) or PyTorch's (explicit padding), and the front crop TensorFlow's
    conv2d_transpose makes for it, from the formulas written out here."""
    out, crops = [], []
    for axis, n in enumerate(spatial):
        s, d = layer.strides[axis], layer.dilations[axis]
        k = (layer.kernel_size[axis] - 1) * d + 1
        p = None if layer.output_padding is None else layer.output_padding[axis]
        if layer.padding == "SAME":
            size = n * s if p is None else (n - 1) * s + k - 2 * (k // 2) + p
            front = same_pads(size, layer.kernel_size[axis], s, d)[0]
        elif layer.padding == "VALID":
            size, front = (n * s + max(k - s, 0) if p is None else (n - 1) * s + k + p), 0
        else:
            front, back = layer.padding[axis]
            size = (n - 1) * s + k - front - back + (p or 0)
        out.append(size)
        crops.append((front, None))
    return out, crops


def np_resize_bilinear(x, axis, factor):
    """TensorFlow 2's half-pixel bilinear resize of one axis by an integer ``factor``."""
    n = x.shape[axis]
    source = np.clip((np.arange(n * factor) + 0.5) / factor - 0.5, 0, n - 1)
    low = np.floor(source).astype(int)
    high, weight = np.minimum(low + 1, n - 1), source - low
    shape = [1] * x.ndim
    shape[axis] = -1
    return np.take(x, low, axis) * (1 - weight.reshape(shape)) + np.take(x, high, axis) * weight.reshape(shape)


def np_layer(layer, x):
    """The NumPy reference of a channels-last layer ``layer`` on ``x``."""
    rank = x.ndim - 2
    if isinstance(layer, (tl.nn.Conv1D, tl.nn.Conv2D, tl.nn.Conv3D, tl.nn.DepthwiseConv2D)):
        w = layer.kernel.numpy()
        if isinstance(layer, tl.nn.DepthwiseConv2D):
            w = np_depthwise_kernel(w)
        y = np_conv(x, w, _tuple(layer.strides, rank), _tuple(layer.dilations, rank), conv_pads(layer, x.shape[1:-1]))
        return y + layer.bias.numpy()
    if isinstance(layer, tl.nn.SeparableConv2D):
        depthwise = np_depthwise_kernel(layer.depthwise_kernel.numpy())
        y = np_conv(x, depthwise, _tuple(layer.strides, 2), _tuple(layer.dilations, 2), conv_pads(layer, x.shape[1:3]))
        return y @ layer.pointwise_kernel.numpy()[0, 0] + layer.bias.numpy()
    if isinstance(layer, (tl.nn.ZeroPadding1D, tl.nn.ZeroPadding2D, tl.nn.ZeroPadding3D)):
        return np.pad(x, [(0, 0), *layer.padding, (0, 0)])
    if isinstance(layer, (tl.nn.Cropping1D, tl.nn.Cropping2D, tl.nn.Cropping3D)):
        return x[(slice(None), *(slice(a, x.shape[1 + i] - b) for i, (a, b) in enumerate(layer.cropping)))]
    if isinstance(layer, (tl.nn.UpSampling1D, tl.nn.UpSampling3D)):
        for axis, times in enumerate(layer.size, 1):
            x = x.repeat(times, axis=axis)
        return x
    if isinstance(layer, tl.nn.UpSampling2D):
        if layer.interpolation == "nearest":
            return x.repeat(layer.size[0], axis=1).repeat(layer.size[1], axis=2)
        return np_resize_bilinear(np_resize_bilinear(x, 1, layer.size[0]), 2, layer.size[1])
    if isinstance(layer, tl.nn.PReLU):
        return np.where(x > 0, x, layer.alpha.numpy() * x)
    if isinstance(layer, tl.nn.Conv2DTranspose):
        size, crops = np_transpose_geometry(layer, x.shape[1:3])
        y = np_conv_transpose(x, layer.kernel.numpy(), layer.strides, layer.dilations, crops, size)
        return y + layer.bias.numpy()
    if isinstance(layer, (tl.nn.MaxPool1D, tl.nn.MaxPool3D)):
        return np_pool(x, layer.ksize, layer.strides, layer.padding, "max")
    if isinstance(layer, (tl.nn.AvgPool1D, tl.nn.AvgPool3D)):
        return np_pool(x, layer.ksize, layer.strides, layer.padding, "mean")
    if isinstance(layer, tl.nn.GroupNorm):
        return np_group_norm(x, layer.groups, layer.scale.numpy(), layer.offset.numpy(), layer.epsilon)
    if isinstance(layer, tl.nn.InstanceNorm):
        return np_group_norm(x, x.shape[-1], layer.scale.numpy(), layer.offset.numpy(), layer.epsilon)
    axes = tuple(range(1, rank + 1))
    reduce = np.mean if "Average" in type(layer).__name__ else np.max
    return reduce(x, axis=axes, keepdims=layer.keepdims)


def _randomized(layer):
    """Non-trivial weights: a random bias / scale / offset (they start as zeros and ones)."""
    for name in ("bias", "scale", "offset", "alpha"):
        v = getattr(layer, name, None)
        if v is not None:
            v.assign(RNG.normal(size=v.shape).astype(v.dtype))
    return layer


# name: (factory(dtype, data_format=None), channels-last input shape)
CASES = {
    "conv1d_same_strided": (lambda dt, **f: tl.nn.Conv1D(3, 4, 3, strides=2, seed=0, dtype=dt, **f), (2, 9, 3)),
    "conv1d_dilated_explicit": (
        lambda dt, **f: tl.nn.Conv1D(2, 3, 2, padding=(2, 1), dilations=2, seed=1, dtype=dt, **f),
        (2, 7, 2),
    ),
    "conv1d_causal_dilated": (
        lambda dt, **f: tl.nn.Conv1D(2, 3, 3, padding="causal", dilations=2, seed=13, dtype=dt, **f),
        (2, 6, 2),
    ),
    "conv2d_even_kernel_same_strided": (
        lambda dt, **f: tl.nn.Conv2D(2, 3, 4, strides=2, seed=2, dtype=dt, **f),
        (2, 7, 6, 2),
    ),
    "conv3d_same": (
        lambda dt, **f: tl.nn.Conv3D(2, 3, (2, 3, 2), strides=(1, 2, 1), seed=3, dtype=dt, **f),
        (2, 3, 5, 4, 2),
    ),
    "conv3d_dilated_valid": (
        lambda dt, **f: tl.nn.Conv3D(2, 2, 2, padding="VALID", dilations=2, seed=4, dtype=dt, **f),
        (1, 4, 5, 5, 2),
    ),
    "depthwise_same_strided": (
        lambda dt, **f: tl.nn.DepthwiseConv2D(3, (3, 2), strides=2, depth_multiplier=2, seed=5, dtype=dt, **f),
        (2, 6, 5, 3),
    ),
    "depthwise_dilated_valid": (
        lambda dt, **f: tl.nn.DepthwiseConv2D(2, 3, padding="VALID", dilations=2, seed=6, dtype=dt, **f),
        (1, 7, 6, 2),
    ),
    "transpose_same": (
        lambda dt, **f: tl.nn.Conv2DTranspose(3, 2, 3, strides=2, seed=7, dtype=dt, **f),
        (2, 3, 4, 3),
    ),
    "transpose_even_same": (
        lambda dt, **f: tl.nn.Conv2DTranspose(2, 2, 4, strides=(2, 3), seed=8, dtype=dt, **f),
        (1, 3, 3, 2),
    ),
    "transpose_valid_output_padding": (
        lambda dt, **f: tl.nn.Conv2DTranspose(
            2, 3, (2, 3), strides=3, padding="VALID", output_padding=1, seed=9, dtype=dt, **f
        ),
        (2, 3, 2, 2),
    ),  # fmt: skip
    "transpose_explicit_dilated": (
        lambda dt, **f: tl.nn.Conv2DTranspose(
            2,
            2,
            3,
            strides=2,
            padding=((1, 1), (2, 0)),
            output_padding=(1, 0),
            dilations=(1, 2),
            seed=10,
            dtype=dt,
            **f,
        ),
        (1, 4, 3, 2),
    ),  # fmt: skip
    "separable_same_strided": (
        lambda dt, **f: tl.nn.SeparableConv2D(3, 4, 3, strides=2, depth_multiplier=2, seed=11, dtype=dt, **f),
        (2, 6, 5, 3),
    ),
    "separable_dilated_valid": (
        lambda dt, **f: tl.nn.SeparableConv2D(2, 3, 2, padding="VALID", dilations=2, seed=12, dtype=dt, **f),
        (1, 5, 6, 2),
    ),
    "zeropad1d": (lambda dt, **f: tl.nn.ZeroPadding1D((1, 2), **f), (2, 4, 3)),
    "zeropad2d": (lambda dt, **f: tl.nn.ZeroPadding2D(((1, 0), (2, 1)), **f), (2, 3, 3, 2)),
    "crop1d": (lambda dt, **f: tl.nn.Cropping1D((1, 2), **f), (2, 6, 3)),
    "crop2d": (lambda dt, **f: tl.nn.Cropping2D(((1, 0), (0, 2)), **f), (2, 4, 5, 2)),
    "crop3d": (lambda dt, **f: tl.nn.Cropping3D((1, 0, 2), **f), (1, 3, 2, 5, 2)),
    "zeropad3d": (lambda dt, **f: tl.nn.ZeroPadding3D((1, 0, 2), **f), (1, 2, 2, 2, 2)),
    "upsampling1d": (lambda dt, **f: tl.nn.UpSampling1D(3, **f), (2, 4, 3)),
    "upsampling3d": (lambda dt, **f: tl.nn.UpSampling3D((2, 1, 3), **f), (1, 2, 3, 2, 2)),
    "upsample_nearest": (lambda dt, **f: tl.nn.UpSampling2D((2, 3), **f), (2, 3, 2, 2)),
    "upsample_bilinear": (lambda dt, **f: tl.nn.UpSampling2D(2, "bilinear", **f), (2, 3, 4, 2)),
    "prelu_channels": (lambda dt, **f: _randomized(tl.nn.PReLU(3, dtype=dt, **f)), (2, 4, 3)),
    "prelu_shared": (lambda dt, **f: _randomized(tl.nn.PReLU(dtype=dt, **f)), (2, 5)),
    "maxpool1d_same": (lambda dt, **f: tl.nn.MaxPool1D(3, 2, "SAME", **f), (2, 8, 3)),
    "avgpool1d_same": (lambda dt, **f: tl.nn.AvgPool1D(3, 2, "SAME", **f), (2, 8, 3)),
    "maxpool3d_valid": (lambda dt, **f: tl.nn.MaxPool3D((2, 3, 2), (1, 2, 2), **f), (2, 3, 7, 4, 2)),
    "avgpool3d_same": (lambda dt, **f: tl.nn.AvgPool3D(2, (2, 1, 2), "SAME", **f), (1, 3, 4, 5, 2)),
    "groupnorm_4d": (lambda dt, **f: _randomized(tl.nn.GroupNorm(2, 6, dtype=dt, **f)), (2, 3, 4, 6)),
    "groupnorm_2d": (lambda dt, **f: _randomized(tl.nn.GroupNorm(3, 3, epsilon=1e-3, dtype=dt, **f)), (4, 3)),
    "instancenorm_3d": (lambda dt, **f: _randomized(tl.nn.InstanceNorm(4, dtype=dt, **f)), (3, 5, 4)),
    "instancenorm_5d": (lambda dt, **f: _randomized(tl.nn.InstanceNorm(2, dtype=dt, **f)), (2, 2, 3, 3, 2)),
    "global_avg_1d": (lambda dt, **f: tl.nn.GlobalAveragePooling1D(**f), (2, 5, 3)),
    "global_max_2d": (lambda dt, **f: tl.nn.GlobalMaxPooling2D(**f), (2, 4, 5, 3)),
    "global_avg_2d_keepdims": (lambda dt, **f: tl.nn.GlobalAveragePooling2D(keepdims=True, **f), (2, 4, 5, 3)),
    "global_max_3d": (lambda dt, **f: tl.nn.GlobalMaxPooling3D(**f), (1, 2, 3, 4, 3)),
}
NAMES = sorted(CASES)
CHANNELS_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def make(name, dtype="float64", **kwargs):
    factory, shape = CASES[name]
    return factory(dtype, **kwargs), RNG.normal(size=shape) * 2 + 0.5


def weights(layer) -> dict:
    return {k: v for k, v in layer.trainable_variables.items() if v is not None}


def with_weights(layer, names):
    """``f(x, *weights)``: the layer run with the given values in place of its Variables."""

    def f(x, *values):
        return tl.functional_call(layer, dict(zip(names, values, strict=True)), x)

    return f


# ------------------------------------------------------------------ every new layer: references, modes, errors
@pytest.mark.parametrize("name", NAMES)
def test_forward_matches_the_numpy_reference(name):
    layer, x = make(name)
    y = layer(x)
    assert y.dtype == tl.float64
    np.testing.assert_allclose(y.numpy(), np_layer(layer, x), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_central_differences(name):
    layer, x = make(name)
    names = sorted(weights(layer))
    # Max pools: distinct values a step apart, so no window's maximum is within eps of another value.
    if "max" in name:
        x = RNG.permutation(np.arange(x.size, dtype=np.float64)).reshape(x.shape) * 0.1
    check_grads(with_weights(layer, names), [x, *(getattr(layer, n).numpy() for n in names)], modes=("rev",))


@pytest.mark.parametrize("name", NAMES)
def test_traced_equals_eager_for_value_and_gradients(name):
    layer, x = make(name, "float32")
    x = x.astype(np.float32)

    def loss(x):
        return (layer(x) ** 2).sum()

    def step(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            value = loss(x)
        return value, tape.gradient(value, [x, *weights(layer).values()])

    eager = step(tl.tensor(x))
    traced = tl.function(step)(x)
    for a, b in zip(tl.tree.leaves(eager), tl.tree.leaves(traced), strict=True):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-5)
    # One graph for every batch size: the batch unknown when traced.
    spec = tl.function(lambda x: layer(x))
    graph_out = spec.get_graph(tl.TensorSpec((None, *x.shape[1:]), "float32"))(x[:1])
    np.testing.assert_allclose(np.asarray(graph_out), layer(x[:1]).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_channels_first_is_the_transposed_channels_last(name):
    layer, x = make(name)
    rank = x.ndim - 2
    fmt = "NCHW" if ("norm" in name or "prelu" in name or "upsample" in name) else CHANNELS_FIRST[rank]
    first, _ = make(name, data_format=fmt)
    for (k, v), (k2, v2) in zip(weights(layer).items(), weights(first).items(), strict=True):
        v2.assign(v)
    to_first = (0, x.ndim - 1, *range(1, x.ndim - 1))
    y = layer(x).numpy()
    got = first(x.transpose(to_first)).numpy()
    if "global" in name and not getattr(layer, "keepdims", False):
        np.testing.assert_allclose(got, y, rtol=1e-12)
    else:
        np.testing.assert_allclose(got, y.transpose(to_first), rtol=1e-10, atol=1e-12)
    assert repr(first).count(fmt) == (0 if "norm" in name else 1)


@pytest.mark.parametrize("name", NAMES)
def test_wrong_rank_or_channels_is_one_error_naming_the_layer_and_shape(name):
    layer, x = make(name, "float32")
    layer_name = type(layer).__name__
    # Too few dimensions: the batch left out (a norm layer takes any rank from 2, InstanceNorm from 3, so less;
    # PReLU any rank).
    few = {"GroupNorm": x.shape[-1:], "InstanceNorm": x.shape[-2:]}.get(layer_name, x.shape[1:])
    if layer_name != "PReLU":
        with pytest.raises(ValueError, match=rf"^{layer_name}: input must .*got shape {re.escape(str(few))} \(float"):
            layer(np.ones(few, np.float32))
    if any(kind in name for kind in ("pool", "global", "zeropad", "crop", "upsampl", "prelu_shared")):
        return  # no channel count to check
    wrong = (*x.shape[:-1], x.shape[-1] + 1)
    channels = rf"({x.shape[-1]} channels|num_parameters={x.shape[-1]})"
    with pytest.raises(ValueError, match=rf"^{layer_name}: input.* must .*{channels}.*{re.escape(str(wrong))}"):
        layer(np.ones(wrong, np.float32))


def test_a_channels_first_input_to_a_channels_last_conv_says_which_format_fits():
    with pytest.raises(ValueError, match=r"Conv1D: input must be 3-D NWC .* with 3 channels, got shape \(2, 3, 8\) "
                       r"\(float32\); its channels match data_format='NCW'"):  # fmt: skip
        tl.nn.Conv1D(3, 4, 3)(np.ones((2, 3, 8), np.float32))


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: tl.nn.Conv3D(2, 3, (3, 3)), r"Conv3D: kernel_size must be an int or a triple \(kd, kh, kw\), got \(3, 3\)"),
        (lambda: tl.nn.Conv1D(2, 3, 3, data_format="NHWC"), r"Conv1D: data_format must be 'NWC' or 'NCW', got 'NHWC'"),
        (lambda: tl.nn.DepthwiseConv2D(2, 3, depth_multiplier=0), r"DepthwiseConv2D: depth_multiplier must be a positive"),
        (lambda: tl.nn.Conv2DTranspose(2, 3, 3, strides=2, output_padding=2), r"Conv2DTranspose: output_padding must be"),
        (lambda: tl.nn.Conv2DTranspose(2, 3, 3, padding="FULL"), r"Conv2DTranspose: padding must be 'SAME', 'VALID' or"),
        (lambda: tl.nn.GroupNorm(4, 6), r"GroupNorm: channels=6 must be a multiple of groups=4"),
        (lambda: tl.nn.InstanceNorm(3, epsilon=-1.0), r"InstanceNorm: epsilon must be a number >= 0"),
        (lambda: tl.nn.MaxPool3D(2, data_format="NCHW"), r"MaxPool3D: data_format must be 'NDHWC' or 'NCDHW'"),
        (lambda: tl.nn.GlobalAveragePooling2D("NCW"), r"GlobalAveragePooling2D: data_format must be 'NHWC' or"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_layer(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_transpose_same_with_an_even_kernel_and_no_output_padding_is_a_clear_error():
    layer = tl.nn.Conv2DTranspose(2, 3, 2, strides=3, output_padding=0)
    with pytest.raises(ValueError, match=r"Conv2DTranspose: output_padding=\(0, 0\) with SAME padding gives an output "
                       r"of \(6, 9\) .* an even kernel needs output_padding >= 1"):  # fmt: skip
        layer(np.ones((1, 3, 4, 2), np.float32))
    assert tl.nn.Conv2DTranspose(2, 3, 2, strides=3, output_padding=1)(np.ones((1, 3, 4, 2), np.float32)).shape == (
        1, 7, 10, 3,
    )  # fmt: skip


def test_causal_conv1d_output_depends_on_the_past_only():
    layer = tl.nn.Conv1D(1, 1, 4, padding="CAUSAL", dilations=2, kernel_initializer="ones", seed=0)
    x = np.zeros((1, 12, 1), np.float32)
    x[0, 5] = 1.0  # an impulse at t = 5 reaches t = 5, 7, 9, 11
    np.testing.assert_array_equal(layer(x).numpy()[0, :, 0], [0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1])


@pytest.mark.parametrize("strides, dilations", [(1, 1), (1, 3), (2, 1)])
def test_causal_conv1d_matches_keras(strides, dilations):
    tf = pytest.importorskip("tensorflow")
    layer = tl.nn.Conv1D(2, 3, 3, strides, "causal", dilations, seed=0, dtype="float64", bias_initializer="ones")
    x = RNG.normal(size=(2, 9, 2))
    keras = tf.keras.layers.Conv1D(3, 3, strides, "causal", dilation_rate=dilations, dtype="float64")
    keras.build(x.shape)
    keras.set_weights([layer.kernel.numpy(), layer.bias.numpy()])
    np.testing.assert_allclose(layer(x).numpy(), keras(x).numpy(), rtol=1e-10, atol=1e-10)


def test_transpose_cropping_everything_is_a_clear_error():
    layer = tl.nn.Conv2DTranspose(1, 1, 1, padding=((1, 1), (0, 0)))
    with pytest.raises(ValueError, match=r"Conv2DTranspose: the output would be \(-1, 1\)"):
        layer(np.ones((1, 1, 1, 1), np.float32))


def test_layers_are_exported_and_documented():
    new = [
        "Conv1D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "DepthwiseConv2D", "MaxPool1D", "AvgPool1D", "MaxPool3D", "AvgPool3D",
        "GlobalAveragePooling1D", "GlobalMaxPooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling2D",
        "GlobalAveragePooling3D", "GlobalMaxPooling3D", "GroupNorm", "InstanceNorm", "SeparableConv2D",
        "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D", "UpSampling2D", "PReLU", "SpatialDropout1D",
        "SpatialDropout2D", "SpatialDropout3D", "Cropping1D", "Cropping2D", "Cropping3D", "UpSampling1D", "UpSampling3D", "Activation", "ReLU", "LeakyReLU", "GELU", "Sigmoid", "Tanh", "Softmax",
    ]  # fmt: skip
    for name in new:
        assert getattr(tl.nn, name) is getattr(tl.layers, name)
        assert name in tl.nn.__all__ and name in tl.layers.__all__
        assert ">>> " in getattr(tl.nn, name).__doc__


def test_weights_start_as_keras_initializers():
    """Glorot uniform kernels within sqrt(6 / (fan_in + fan_out)) with the variance of that uniform, zero biases
    (Keras' formulas with its fans: receptive field times channels)."""
    for layer, fan_in, fan_out in [
        (tl.nn.Conv1D(16, 32, 5, seed=0), 5 * 16, 5 * 32),
        (tl.nn.Conv3D(8, 16, 3, seed=0), 27 * 8, 27 * 16),
        (tl.nn.DepthwiseConv2D(64, 3, depth_multiplier=2, seed=0), 9 * 64, 9 * 2),
        (tl.nn.Conv2DTranspose(32, 16, 4, seed=0), 16 * 16, 16 * 32),
    ]:
        w = layer.kernel.numpy()
        limit = math.sqrt(6 / (fan_in + fan_out))
        assert np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
        assert abs(w.var() / (limit**2 / 3) - 1) < 0.1
        assert not layer.bias.numpy().any()
    assert tl.nn.Conv2DTranspose(3, 2, 3, seed=1).kernel.shape == (3, 3, 2, 3)  # (kh, kw, out, in) as Keras


# ------------------------------------------------------------------ PyTorch / Keras with the weights copied
def torch_layer(layer, x, w):
    """The layer written with torch.nn.functional on channels-last torch tensors ``x`` and weights ``w``."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rank = x.dim() - 2
    first = (0, rank + 1, *range(1, rank + 1))
    last = (0, *range(2, rank + 2), 1)
    xc = x.permute(first)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}.get(rank)
    if isinstance(layer, tl.nn.Conv2DTranspose):
        full = F.conv_transpose2d(xc, w["kernel"].permute(3, 2, 0, 1), stride=layer.strides, dilation=layer.dilations)
        size, crops = np_transpose_geometry(layer, x.shape[1:3])
        extra = [max(crops[i][0] + size[i] - full.shape[2 + i], 0) for i in range(2)]  # zeros past the full result
        full = F.pad(full, (0, extra[1], 0, extra[0]))
        y = full[:, :, crops[0][0] : crops[0][0] + size[0], crops[1][0] : crops[1][0] + size[1]]
        return (y + w["bias"].reshape(-1, 1, 1)).permute(last)
    if isinstance(layer, tl.nn.SeparableConv2D):
        padded = F.pad(xc, [p for pair in reversed(conv_pads(layer, tuple(x.shape[1:3]))) for p in pair])
        kh, kw, c, m = w["depthwise_kernel"].shape
        depthwise = w["depthwise_kernel"].reshape(kh, kw, c * m).permute(2, 0, 1)[:, None]
        y = F.conv2d(padded, depthwise, stride=_tuple(layer.strides, 2), dilation=_tuple(layer.dilations, 2), groups=c)
        return F.conv2d(y, w["pointwise_kernel"].permute(3, 2, 0, 1), w["bias"]).permute(last)
    if isinstance(layer, (tl.nn.ZeroPadding1D, tl.nn.ZeroPadding2D, tl.nn.ZeroPadding3D)):
        return F.pad(xc, [p for pair in reversed(layer.padding) for p in pair]).permute(last)
    if isinstance(layer, (tl.nn.Cropping1D, tl.nn.Cropping2D, tl.nn.Cropping3D)):
        return xc[
            (slice(None), slice(None), *(slice(a, xc.shape[2 + i] - b) for i, (a, b) in enumerate(layer.cropping)))
        ].permute(last)
    if isinstance(layer, (tl.nn.UpSampling1D, tl.nn.UpSampling3D)):
        return F.interpolate(xc, scale_factor=layer.size, mode="nearest").permute(last)
    if isinstance(layer, tl.nn.UpSampling2D):
        bilinear = {"align_corners": False} if layer.interpolation == "bilinear" else {}
        return F.interpolate(xc, scale_factor=layer.size, mode=layer.interpolation, **bilinear).permute(last)
    if isinstance(layer, tl.nn.PReLU):
        return F.prelu(xc, w["alpha"]).permute(last)
    if isinstance(layer, (tl.nn.Conv1D, tl.nn.Conv2D, tl.nn.Conv3D, tl.nn.DepthwiseConv2D)):
        pads = conv_pads(layer, tuple(x.shape[1:-1]))
        padded = F.pad(xc, [p for pair in reversed(pads) for p in pair])
        kernel, groups = w["kernel"], 1
        if isinstance(layer, tl.nn.DepthwiseConv2D):
            kh, kw, c, m = kernel.shape
            kernel, groups = kernel.reshape(kh, kw, c * m).permute(2, 0, 1)[:, None], c
        else:
            kernel = kernel.permute(rank + 1, rank, *range(rank))
        y = conv(padded, kernel, w["bias"], stride=_tuple(layer.strides, rank), dilation=_tuple(layer.dilations, rank),
                 groups=groups)  # fmt: skip
        return y.permute(last)
    if isinstance(layer, (tl.nn.GroupNorm, tl.nn.InstanceNorm)):
        groups = layer.groups if isinstance(layer, tl.nn.GroupNorm) else x.shape[-1]
        return F.group_norm(xc, groups, w["scale"], w["offset"], layer.epsilon).permute(last)
    if isinstance(layer, (tl.nn.MaxPool1D, tl.nn.MaxPool3D, tl.nn.AvgPool1D, tl.nn.AvgPool3D)):
        assert layer.padding == "VALID"  # PyTorch pads symmetrically: SAME is checked against NumPy and TensorFlow
        kind = "max" if "Max" in type(layer).__name__ else "avg"
        pool = getattr(F, f"{kind}_pool{rank}d")
        return pool(xc, _tuple(layer.ksize, rank), _tuple(layer.strides, rank)).permute(last)
    axes = tuple(range(1, rank + 1))
    if "Average" in type(layer).__name__:
        return x.mean(dim=axes, keepdim=layer.keepdims)
    return x.amax(dim=axes, keepdim=layer.keepdims)


TORCH_CASES = [n for n in NAMES if not (("pool1d" in n or "pool3d" in n) and "same" in n)] + ["maxpool1d_valid"]
CASES["maxpool1d_valid"] = (lambda dt, **f: tl.nn.MaxPool1D(3, 2, **f), (2, 9, 3))


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_forward_and_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    layer, x = make(name)
    names = sorted(weights(layer))
    upstream = RNG.normal(size=layer(x).shape)
    xt = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt)
        loss = (y * upstream).sum()
    grads = tape.gradient(loss, [xt, *(getattr(layer, n) for n in names)])
    tx = torch.tensor(x, requires_grad=True)
    tw = {n: torch.tensor(getattr(layer, n).numpy(), requires_grad=True) for n in names}
    ty = torch_layer(layer, tx, tw)
    (ty * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    for got, want in zip(grads, [tx, *(tw[n] for n in names)], strict=True):
        np.testing.assert_allclose(got.numpy(), want.grad.numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(
    "kernel, strides, padding, output_padding",
    [(3, 2, "same", None), (4, 2, "same", None), (3, 2, "valid", None), (1, 3, "valid", None), (2, 3, "valid", None),
     (3, 2, "same", 1), (3, 2, "valid", 1), (5, 3, "same", 2)],
)  # fmt: skip
def test_conv2d_transpose_matches_keras(kernel, strides, padding, output_padding):
    tf = pytest.importorskip("tensorflow")
    layer = tl.nn.Conv2DTranspose(3, 2, kernel, strides, padding, output_padding, seed=0, dtype="float64",
                                  bias_initializer="glorot_uniform")  # fmt: skip
    x = RNG.normal(size=(2, 4, 5, 3))
    keras = tf.keras.layers.Conv2DTranspose(2, kernel, strides, padding, output_padding=output_padding, dtype="float64")
    keras.build(x.shape)
    keras.set_weights([layer.kernel.numpy(), layer.bias.numpy()])
    np.testing.assert_allclose(layer(x).numpy(), keras(x).numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("rank", [1, 3])
def test_same_pools_match_tensorflow(kind, rank):
    tf = pytest.importorskip("tensorflow")
    layer = getattr(tl.nn, f"{kind.capitalize()}Pool{rank}D")(3, 2, "SAME")
    x = RNG.normal(size=(2, *(7, 6, 5)[:rank], 3)).astype(np.float32)
    want = getattr(tf.nn, f"{kind}_pool{rank}d")(x, 3, 2, "SAME").numpy()
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("channels_first", [False, True])
def test_spatial_dropout_keeps_or_drops_whole_channels(rank, channels_first):
    fmt = CHANNELS_FIRST[rank] if channels_first else None
    layer = getattr(tl.nn, f"SpatialDropout{rank}D")(0.25, data_format=fmt)
    shape = (64, *(3, 4, 2)[:rank], 50)
    x = RNG.normal(size=shape) + 5.0  # never 0, so a zero is a dropped cell
    x = x.transpose(0, rank + 1, *range(1, rank + 1)) if channels_first else x
    xt = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt)
    grad = tape.gradient(y, xt).numpy()
    y = y.numpy()
    spatial = tuple(range(2, rank + 2)) if channels_first else tuple(range(1, rank + 1))
    kept = y != 0
    assert (kept.all(axis=spatial) | ~kept.any(axis=spatial)).all()  # per example and channel: all or none
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-12)
    np.testing.assert_allclose(grad, kept / 0.75, rtol=1e-12)  # the gradient is the scaled mask
    dropped = 1 - kept.all(axis=spatial).mean()
    assert abs(dropped - 0.25) < 4 * math.sqrt(0.25 * 0.75 / (64 * 50))
    np.testing.assert_array_equal(layer.eval()(x).numpy(), x)


def test_spatial_dropout_draws_a_new_mask_on_each_traced_call():
    layer = tl.nn.SpatialDropout2D(0.5)
    f = tl.function(lambda x: layer(x))
    x = np.ones((2, 3, 3, 16), np.float32)
    first, second = f(x).numpy(), f(x).numpy()
    assert not np.array_equal(first, second)
    assert set(np.unique(first)) <= {0.0, 2.0}
    with pytest.raises(ValueError, match=r"SpatialDropout2D: input must be 4-D NHWC .* got shape \(3, 3, 16\)"):
        layer(x[0])
    with pytest.raises(ValueError, match=r"SpatialDropout2D: rate must be in \[0, 1\), got 1.0"):
        tl.nn.SpatialDropout2D(1.0)


@pytest.mark.parametrize("strides, padding, multiplier", [(1, "same", 1), (2, "same", 2), (2, "valid", 3)])
def test_separable_conv2d_matches_keras(strides, padding, multiplier):
    tf = pytest.importorskip("tensorflow")
    layer = tl.nn.SeparableConv2D(3, 4, 3, strides, padding.upper(), multiplier, seed=0, dtype="float64",
                                  bias_initializer="glorot_uniform")  # fmt: skip
    x = RNG.normal(size=(2, 7, 6, 3))
    keras = tf.keras.layers.SeparableConv2D(4, 3, strides, padding, depth_multiplier=multiplier, dtype="float64")
    keras.build(x.shape)
    keras.set_weights([layer.depthwise_kernel.numpy(), layer.pointwise_kernel.numpy(), layer.bias.numpy()])
    np.testing.assert_allclose(layer(x).numpy(), keras(x).numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: tl.nn.ZeroPadding2D((1, 2, 3)), r"ZeroPadding2D: padding must be an int >= 0 or \(rows, cols\)"),
        (lambda: tl.nn.ZeroPadding1D(-1), r"ZeroPadding1D: padding must be an int >= 0 or \(left, right\), got -1"),
        (lambda: tl.nn.UpSampling2D(2, "bicubic"), r"UpSampling2D: interpolation must be 'nearest' or 'bilinear'"),
        (lambda: tl.nn.UpSampling2D(0), r"UpSampling2D: size must be a positive integer, got 0"),
        (lambda: tl.nn.PReLU(init=None), r"PReLU: init must be a finite number, got None"),
        (lambda: tl.nn.SeparableConv2D(2, 3, 3, depth_multiplier=1.5), r"SeparableConv2D: depth_multiplier must be"),
    ],
)  # fmt: skip
def test_bad_arguments_of_the_other_layers_name_the_layer(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_sequential_takes_keras_list_and_nests():
    layers = [tl.nn.Conv1D(2, 4, 3, seed=0), tl.nn.GlobalMaxPooling1D(), tl.nn.Dense(4, 2, seed=1)]
    keras_form, torch_form = tl.nn.Sequential(layers), tl.nn.Sequential(*layers)
    x = RNG.normal(size=(3, 6, 2)).astype(np.float32)
    np.testing.assert_array_equal(keras_form(x).numpy(), torch_form(x).numpy())
    assert sorted(keras_form.trainable_variables) == ["0", "2"]
    nested = tl.nn.Sequential(tl.nn.Sequential(layers[:2]), layers[2])
    np.testing.assert_array_equal(nested(x).numpy(), torch_form(x).numpy())
    assert nested.num_parameters() == 2 * 3 * 4 + 4 + 4 * 2 + 2
    with pytest.raises(TypeError, match="Sequential: layer 1 is a int, not a Module or callable"):
        tl.nn.Sequential([layers[0], 3])


# ------------------------------------------------------------------ errors of the functional ops under the layers
@pytest.mark.parametrize(
    "call, message",
    [
        # conv1d and the 1-D pools run a height-1 Conv2D / MaxPool: their geometry errors named that op and its
        # internal 4-D shapes (input (2, 1, 2, 3), filter (1, 3, 3, 4)), never what the caller passed.
        (lambda: tl.nn.conv1d(np.ones((2, 2, 3)), np.ones((3, 3, 4)), 1, "VALID"),
         r"^conv1d: .*input size 2 .* \(input shape \(2, 2, 3\) float64, filter shape \(3, 3, 4\) float64\)$"),
        (lambda: tl.nn.Conv1D(3, 4, 5, padding="VALID", dilations=2)(np.ones((1, 8, 3), np.float32)),
         r"^conv1d: .*input size 8 .*dilated kernel size 9 .* \(input shape \(1, 8, 3\) float32"),
        (lambda: tl.nn.max_pool1d(np.ones((2, 2, 3)), 3, 1, "VALID"),
         r"^max_pool1d: .*input size 2 .* \(x shape \(2, 2, 3\), float64\)$"),
        (lambda: tl.nn.AvgPool1D(4, data_format="NCW")(np.ones((2, 3, 2))),
         r"^avg_pool1d: .*input size 2 .* \(x shape \(2, 3, 2\), float64\)$"),
        # An NCW input was reported transposed: (2, 3, 5) for the (2, 5, 3) passed.
        (lambda: tl.nn.conv1d(np.ones((2, 5, 3)), np.ones((3, 3, 4)), 1, "VALID", data_format="NCW"),
         r"^conv1d: input channels 5 do not match filter in_channels 3 \(input shape \(2, 5, 3\) float64"),
        # Explicit (left, right) padding is accepted, so the error lists it.
        (lambda: tl.nn.conv1d(np.ones((2, 5, 3)), np.ones((3, 3, 4)), 1, "FULL"),
         r"^conv1d: padding must be 'VALID', 'SAME' or \(left, right\), got 'FULL'"),
    ],
)  # fmt: skip
def test_one_dimensional_op_errors_name_the_op_and_the_shapes_passed(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "Conv2D" not in str(info.value) and "MaxPool:" not in str(info.value)


@pytest.mark.parametrize(
    "call, passed",
    [
        (lambda: tl.nn.conv2d(np.ones((1, 5, 6, 7)), np.ones((3, 3, 3, 4)), 1, "SAME", data_format="NCHW"),
         r"input shape \(1, 5, 6, 7\)"),
        (lambda: tl.nn.conv2d(np.ones((1, 3, 2, 7)), np.ones((3, 3, 3, 4)), 1, "VALID", data_format="NCHW"),
         r"input shape \(1, 3, 2, 7\)"),
        (lambda: tl.nn.max_pool(np.ones((1, 3, 2, 7)), 3, 1, "VALID", data_format="NCHW"), r"input shape \(1, 3, 2, 7\)"),
        (lambda: tl.nn.avg_pool(np.ones((1, 3, 2, 7)), 3, 1, "VALID", data_format="NCHW"), r"input shape \(1, 3, 2, 7\)"),
        (lambda: tl.nn.depthwise_conv2d(np.ones((1, 5, 6, 7)), np.ones((3, 3, 3, 1)), 1, "SAME", data_format="NCHW"),
         r"input shape \(1, 5, 6, 7\)"),
        (lambda: tl.nn.conv2d_transpose(np.ones((1, 5, 6, 7)), np.ones((3, 3, 4, 3)), (1, 4, 12, 14), 2, "SAME",
                                        data_format="NCHW"),
         r"out_backprop shape \(1, 5, 6, 7\)"),
        (lambda: tl.nn.conv2d_backprop_filter(np.ones((1, 3, 6, 7)), (3, 3, 3, 4), np.ones((1, 4, 5, 7)), 1, "SAME",
                                              data_format="NCHW"),
         r"out_backprop shape \(1, 4, 5, 7\)"),
        (lambda: tl.nn.fused_batch_norm(np.ones((2, 3, 4, 5)), np.ones(4), np.ones(4), data_format="NCHW"),
         r"x shape \(2, 3, 4, 5\)"),
    ],
)  # fmt: skip
def test_channels_first_op_errors_quote_the_shapes_passed(call, passed):
    # The NCHW path runs the NHWC op on transposes, whose error quoted only their shapes: "input shape
    # (1, 6, 7, 5)" for the (1, 5, 6, 7) passed.
    with pytest.raises(ValueError, match=passed):
        call()


# ------------------------------------------------------------------ BatchNorm's statistics, adversarially
@pytest.mark.parametrize("shape, spec", [((1, 3), (None, 3)), ((1, 1, 1, 3), (None, None, None, 3))])
def test_batch_norm_traced_for_any_batch_refuses_one_value_per_channel_as_eager_does(shape, spec):
    # Traced with the batch unknown, a batch of one dense example normalized every value to 0 (zero output, zero
    # gradient) and pulled running_var towards 0, silently; eager and PyTorch raise.
    bn = tl.nn.BatchNorm(3)
    step = tl.function(lambda x: bn(x), input_signature=[tl.TensorSpec(spec, "float32")])
    x = RNG.normal(size=shape).astype(np.float32)
    with pytest.raises(ValueError, match="BatchNorm: expected more than 1 value per channel when training"):
        bn(x)
    with pytest.raises(ValueError, match="BatchNorm: expected more than 1 value per channel when training"):
        step(x)
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3))  # the caller's statistics untouched
    np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(3))
    two = RNG.normal(size=(2, *shape[1:])).astype(np.float32)
    y = step(two).numpy()
    axes = tuple(range(len(shape) - 1))
    np.testing.assert_allclose(y, (two - two.mean(axes)) / np.sqrt(two.var(axes) + 1e-5), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * two.var(axes, ddof=1), rtol=1e-6)
    bn.eval()
    np.testing.assert_allclose(step(x).numpy(), bn(x).numpy(), rtol=1e-6)  # eval() takes one example


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("shape, data_format", [((0, 3), "NHWC"), ((0, 4, 4, 3), "NHWC"), ((0, 3, 4, 4), "NCHW")])
def test_batch_norm_on_an_empty_batch_leaves_the_running_statistics_alone(shape, data_format, traced):
    # Training on 0 examples set running_mean and running_var to NaN for good (the mean of nothing); PyTorch
    # returns the empty output and leaves them unchanged.
    bn = tl.nn.BatchNorm(3, data_format=data_format)
    bn.running_mean.assign(np.array([1.0, 2.0, 3.0], np.float32))
    call = (
        tl.function(lambda x: bn(x), input_signature=[tl.TensorSpec((None, *shape[1:]), "float32")]) if traced else bn
    )
    x = tl.tensor(np.zeros(shape, np.float32))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = call(x)
        loss = y.sum()
    grads = tape.gradient(loss, [x, bn.scale, bn.offset])
    assert y.shape == shape
    np.testing.assert_array_equal(bn.running_mean.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(bn.running_var.numpy(), [1.0, 1.0, 1.0])
    for g in grads:
        assert not np.isnan(g.numpy()).any()
    ok = RNG.normal(size=(5, *shape[1:])).astype(np.float32)  # the next batch updates them as usual
    call(ok)
    axes = tuple(a for a in range(len(shape)) if a != (1 if data_format == "NCHW" else len(shape) - 1))
    np.testing.assert_allclose(
        bn.running_mean.numpy(), 0.9 * np.array([1.0, 2.0, 3.0]) + 0.1 * ok.mean(axes), rtol=1e-5
    )


def test_keras_linear_activation_is_the_identity():
    # activation="linear" (Keras' name for no activation, its default) raised "activation must be None, a callable
    # or the name of a tl.nn function".
    x = RNG.normal(size=(3, 5, 2)).astype(np.float32)
    for make_layer in (
        lambda a: tl.nn.Dense(2, 4, activation=a, seed=0),
        lambda a: tl.nn.Conv1D(2, 4, 3, activation=a, seed=0),
    ):
        np.testing.assert_array_equal(make_layer("linear")(x).numpy(), make_layer(None)(x).numpy())
    assert "activation" not in repr(tl.nn.Dense(2, 4, activation="linear"))


# ------------------------------------------------------------------ activation layers
def _np_gelu(x, tanh):
    from scipy.special import erf

    if tanh:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


ACTIVATIONS = {
    "ReLU()": (lambda: tl.nn.ReLU(), lambda x: np.maximum(x, 0), "ReLU()"),
    "LeakyReLU()": (lambda: tl.nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.01 * x), "LeakyReLU()"),
    "LeakyReLU(0.3)": (lambda: tl.nn.LeakyReLU(0.3), lambda x: np.where(x > 0, x, 0.3 * x), "LeakyReLU(0.3)"),
    "GELU()": (lambda: tl.nn.GELU(), lambda x: _np_gelu(x, False), "GELU()"),
    "GELU('tanh')": (lambda: tl.nn.GELU("tanh"), lambda x: _np_gelu(x, True), "GELU(approximate='tanh')"),
    "Sigmoid()": (lambda: tl.nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x)), "Sigmoid()"),
    "Tanh()": (lambda: tl.nn.Tanh(), np.tanh, "Tanh()"),
    "Softmax(1)": (
        lambda: tl.nn.Softmax(1),
        lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True),
        "Softmax(dim=1)",
    ),
    "Activation('softplus')": (lambda: tl.nn.Activation("softplus"), lambda x: np.log1p(np.exp(x)), "Softplus()"),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_layers_match_numpy_pytorch_and_trace(name):
    build, reference, torch_form = ACTIVATIONS[name]
    layer = build()
    x = RNG.normal(size=(3, 4, 2)) * 2
    np.testing.assert_allclose(layer(x).numpy(), reference(x), rtol=1e-10, atol=1e-12)
    check_grads(lambda x: layer(x), [x], order=2, modes=("rev",))
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(tl.function(lambda x: layer(x))(x32).numpy(), layer(x32).numpy(), rtol=1e-6)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, requires_grad=True)
    ty = eval(f"torch.nn.{torch_form}")(tx)  # the PyTorch module the layer stands for
    np.testing.assert_allclose(layer(x).numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_activation_layers_bad_arguments_name_the_layer():
    with pytest.raises(ValueError, match=r"Activation: activation must be a callable or the name of a tl.nn function"):
        tl.nn.Activation("no_such_function")
    with pytest.raises(ValueError, match=r"LeakyReLU: negative_slope must be a finite number, got 'a'"):
        tl.nn.LeakyReLU("a")
    with pytest.raises(ValueError, match=r"GELU: approximate must be False, True, 'none' or 'tanh', got 'erf'"):
        tl.nn.GELU("erf")
    with pytest.raises(ValueError, match=r"Softmax: axis must be an int, got None"):
        tl.nn.Softmax(None)
    assert repr(tl.nn.Activation("linear")) == "Activation(linear)"
    np.testing.assert_array_equal(tl.nn.Activation("linear")(np.ones(2)).numpy(), np.ones(2))


# ------------------------------------------------------------------ random geometries (hypothesis)
@st.composite
def conv_layers(draw):
    kind = draw(st.sampled_from(["Conv1D", "Conv2D", "Conv3D", "DepthwiseConv2D", "SeparableConv2D", "Transpose"]))
    rank = {"Conv1D": 1, "Conv3D": 3}.get(kind, 2)
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    dilated = draw(st.booleans())
    strides = tuple(1 if dilated else draw(st.integers(1, 3)) for _ in range(rank))
    dilations = tuple(draw(st.integers(1, 2)) if dilated else 1 for _ in range(rank))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    # VALID needs an input at least as large as the dilated kernel
    sizes = tuple(draw(st.integers((k - 1) * d + 1, (k - 1) * d + 5)) for k, d in zip(kernel, dilations))
    channels, seed = draw(st.integers(1, 3)), draw(st.integers(0, 1000))
    common = dict(strides=strides, padding=padding, dilations=dilations, seed=seed, dtype="float64",
                  bias_initializer="glorot_uniform")  # fmt: skip
    if kind == "DepthwiseConv2D":
        layer = tl.nn.DepthwiseConv2D(channels, kernel, depth_multiplier=draw(st.integers(1, 2)), **common)
    elif kind == "SeparableConv2D":
        layer = tl.nn.SeparableConv2D(channels, 2, kernel, depth_multiplier=draw(st.integers(1, 2)), **common)
    elif kind == "Transpose":
        output_padding = None if dilated or max(strides) == 1 else tuple(draw(st.integers(0, s - 1)) for s in strides)
        if output_padding is not None and padding == "SAME" and any(k % 2 == 0 for k in kernel):
            output_padding = None  # Keras' size there maps back to n - 1 (a clear error, tested above)
        layer = tl.nn.Conv2DTranspose(channels, 2, kernel, output_padding=output_padding, **common)
    else:
        layer = getattr(tl.nn, kind)(channels, 2, kernel, **common)
    return layer, np.random.default_rng(seed).normal(size=(2, *sizes, channels))


@given(conv_layers())
def test_random_conv_geometries_match_the_numpy_reference(case):
    layer, x = case
    np.testing.assert_allclose(layer(x).numpy(), np_layer(layer, x), rtol=1e-10, atol=1e-10)


@st.composite
def pool_layers(draw):
    rank, kind = draw(st.sampled_from([1, 2, 3])), draw(st.sampled_from(["Max", "Avg"]))
    ksize = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    sizes = tuple(draw(st.integers(k, k + 4)) for k in ksize)
    layer = getattr(tl.nn, f"{kind}Pool{rank}D")(ksize, strides, padding)
    return layer, np.random.default_rng(draw(st.integers(0, 1000))).normal(size=(2, *sizes, 2))


@given(pool_layers())
def test_random_pool_geometries_match_the_numpy_reference(case):
    layer, x = case
    kind = "max" if "Max" in type(layer).__name__ else "mean"
    want = np_pool(x, layer.ksize, layer.strides, layer.padding, kind)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ results never alias a Variable
@pytest.mark.parametrize(
    "name, call",
    [
        ("Dropout eval", lambda v: tl.nn.Dropout(0.5).eval()(v)),
        ("Dropout(0)", lambda v: tl.nn.Dropout(0.0)(v)),
        ("SpatialDropout1D eval", lambda v: tl.nn.SpatialDropout1D(0.5).eval()(v)),
        ("Activation('linear')", lambda v: tl.nn.Activation("linear")(v)),
        ("tl.nn.dropout(rate=0)", lambda v: tl.nn.dropout(v, 0.0)),
        ("Sequential(Dropout) eval", lambda v: tl.nn.Sequential(tl.nn.Dropout(0.2)).eval()(v)),
    ],
)
def test_a_pass_through_layer_returns_a_value_a_later_assign_cannot_change(name, call):
    # These returned the Variable itself: v.assign(...) afterwards changed the "result" (DESIGN: values are
    # immutable; JAX and TensorFlow return values).
    v = tl.Variable(np.ones((1, 2, 2), np.float32))
    y = call(v)
    v.assign(np.full((1, 2, 2), 5.0, np.float32))
    assert y is not v
    np.testing.assert_array_equal(y.numpy(), np.ones((1, 2, 2)))
    with tl.GradientTape() as tape:  # still differentiable: the gradient reaches the Variable
        loss = (call(v) * 3.0).sum()
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), np.full((1, 2, 2), 3.0))


# ------------------------------------------------------------------ Embedding(padding_idx)
@pytest.mark.parametrize("padding_idx", [0, 3, -1])
def test_embedding_padding_idx_starts_at_zero_and_gets_no_gradient(padding_idx):
    emb = tl.nn.Embedding(5, 3, padding_idx=padding_idx, seed=0, dtype="float64")
    row = padding_idx % 5
    table = emb.embeddings.numpy()
    np.testing.assert_array_equal(table[row], 0.0)  # PyTorch's nn.Embedding zeroes that row
    assert np.abs(np.delete(table, row, axis=0)).min() > 0
    emb.embeddings.assign(table + 1.0)  # a non-zero padding row is still looked up as it is
    ids = np.array([[0, 3, 4, 3], [1, 4, 0, 2]])
    upstream = RNG.normal(size=(2, 4, 3))
    with tl.GradientTape() as tape:
        y = emb(ids)
        loss = (y * upstream).sum()
    grad = tape.gradient(loss, emb.embeddings).numpy()
    np.testing.assert_array_equal(y.numpy(), (table + 1.0)[ids])
    want = np.zeros((5, 3))
    np.add.at(want, ids.ravel(), upstream.reshape(-1, 3))
    want[row] = 0.0
    np.testing.assert_allclose(grad, want, rtol=1e-12)
    traced = tl.function(lambda i: emb(i))(ids)
    np.testing.assert_array_equal(traced.numpy(), y.numpy())
    torch = pytest.importorskip("torch")
    ref = torch.nn.Embedding(5, 3, padding_idx=padding_idx, dtype=torch.float64)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(table + 1.0))
    (ref(torch.tensor(ids)) * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(grad, ref.weight.grad.numpy(), rtol=1e-12)


def test_embedding_padding_idx_out_of_range_is_a_clear_error():
    with pytest.raises(ValueError, match=r"Embedding: padding_idx must be None or an int in \[-5, 5\), got 5"):
        tl.nn.Embedding(5, 3, padding_idx=5)


def test_flatten_traced_with_unknown_feature_dimensions():
    # A None among the dimensions after the batch crashed: "unsupported operand type(s) for *=: 'int' and
    # 'NoneType'".  With the batch known it is (batch, -1); with both unknown, one clear error.
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    known_batch = tl.function(lambda x: tl.nn.Flatten()(x), input_signature=[tl.TensorSpec((2, None, 4), "float32")])
    np.testing.assert_array_equal(known_batch(x).numpy(), x.reshape(2, 12))
    unknown = tl.function(lambda x: tl.nn.Flatten()(x), input_signature=[tl.TensorSpec((None, None, 4), "float32")])
    with pytest.raises(ValueError, match=r"Flatten: .*batch size and the other dimensions .* \(None, None, 4\)"):
        unknown(x)


@pytest.mark.parametrize("center, scale", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_without_scale_or_offset(center, scale, training):
    # Keras' BatchNormalization(center=, scale=), PyTorch's affine=False: the dropped weight is no Variable.
    bn = tl.nn.BatchNorm(3, center=center, scale=scale, dtype="float64", data_format="NCHW")
    assert sorted(bn.trainable_variables) == sorted(n for n, keep in (("offset", center), ("scale", scale)) if keep)
    for name in ("scale", "offset"):
        if getattr(bn, name) is not None:
            getattr(bn, name).assign(RNG.normal(size=3))
    bn.running_var.assign(RNG.random(3) + 0.5)
    bn.train(training)
    x = RNG.normal(size=(4, 3, 2, 2)) * 2 + 1
    y = bn(x).numpy()
    axes = (0, 2, 3)
    mean, var = (x.mean(axes), x.var(axes)) if training else (bn.running_mean.numpy(), bn.running_var.numpy())
    want = (x - mean.reshape(3, 1, 1)) / np.sqrt(var.reshape(3, 1, 1) + 1e-5)
    if scale:
        want = want * bn.scale.numpy().reshape(3, 1, 1)
    if center:
        want = want + bn.offset.numpy().reshape(3, 1, 1)
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-12)
    check_grads(lambda x: bn(x), [x], modes=("rev",))


def test_cropping_everything_is_a_clear_error():
    with pytest.raises(
        ValueError, match=r"Cropping2D: cropping \(\(2, 1\), \(0, 0\)\) leaves nothing of input shape \(1, 3, 4, 2\)"
    ):
        tl.nn.Cropping2D(((2, 1), (0, 0)))(np.ones((1, 3, 4, 2), np.float32))
    with pytest.raises(ValueError, match=r"Cropping1D: cropping must be an int >= 0 or \(left, right\), got -1"):
        tl.nn.Cropping1D(-1)


# ---------------------------------------------------------------- RMSNorm
def _rms_reference(x, scale, axes, epsilon):
    xf = x.astype(np.float64)
    return xf / np.sqrt((xf * xf).mean(axes, keepdims=True) + epsilon) * scale


@pytest.mark.parametrize("shape, normalized", [((4, 6), 6), ((2, 3, 5), (3, 5)), ((7,), 7)])
def test_rms_norm_layer_against_numpy_and_finite_differences(shape, normalized):
    rng = np.random.default_rng(11)
    layer = tl.nn.RMSNorm(normalized, epsilon=1e-5, dtype=tl.float64)
    layer.scale.assign(rng.standard_normal(layer.scale.shape))
    x = rng.standard_normal(shape)
    axes = tuple(range(-len(layer.normalized_shape), 0))
    np.testing.assert_allclose(layer(x).numpy(), _rms_reference(x, layer.scale.numpy(), axes, 1e-5), rtol=1e-13)
    np.testing.assert_allclose(
        tl.function(layer)(x).numpy(), _rms_reference(x, layer.scale.numpy(), axes, 1e-5), rtol=1e-13
    )
    weights = rng.standard_normal(shape)
    tl.testing.check_grads(
        lambda t, s: tl.sum(tl.nn.rms_norm(t, s, axes, 1e-5) * weights), [x, layer.scale.numpy()], order=2
    )
    assert list(layer.trainable_variables) == ["scale"]
    assert not tl.nn.RMSNorm(normalized, scale=False).trainable_variables


def test_rms_norm_float16_is_computed_in_float32():
    # Squares of 300 overflow float16 (65504): computed in float16 the result was 0 (x / inf).
    x = (np.random.default_rng(12).standard_normal((3, 8)) * 300).astype(np.float16)
    y = tl.nn.RMSNorm(8)(x)
    assert y.dtype == np.float32  # the layer's float32 scale promotes; the function keeps float16:
    got = tl.nn.rms_norm(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.numpy(), _rms_reference(x, 1.0, -1, 1e-6), rtol=2e-3)


def test_rms_norm_layer_refuses_a_mismatched_input():
    with pytest.raises(
        ValueError,
        match=r"RMSNorm: input's trailing dimensions must be normalized_shape=\(3, 4\), got input shape \(2, 4, 3\)",
    ):
        tl.nn.RMSNorm((3, 4))(np.ones((2, 4, 3), np.float32))
    with pytest.raises(ValueError, match=r"RMSNorm: normalized_shape must name at least one dimension"):
        tl.nn.RMSNorm(())


def test_rms_norm_matches_torch_and_keras():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4))
    theirs = torch.nn.functional.rms_norm(torch.tensor(x), (3, 4), torch.tensor(w), eps=1e-5).numpy()
    np.testing.assert_allclose(tl.nn.rms_norm(x, w, (-2, -1), 1e-5).numpy(), theirs, rtol=1e-13)
    keras = pytest.importorskip("keras")
    layer = keras.layers.RMSNormalization(axis=-1, epsilon=1e-6)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(tl.nn.RMSNorm(4)(x32).numpy(), np.asarray(layer(x32)), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- adaptive pooling
@pytest.mark.parametrize(
    "layer, shape, out, want",
    [
        (tl.nn.AdaptiveAvgPool1D, (2, 7, 3), 3, (2, 3, 3)),
        (tl.nn.AdaptiveMaxPool1D, (2, 5, 3), 8, (2, 8, 3)),  # more cells than inputs: the bins overlap
        (tl.nn.AdaptiveAvgPool2D, (2, 10, 7, 3), (4, 3), (2, 4, 3, 3)),
        (tl.nn.AdaptiveMaxPool2D, (1, 6, 9, 2), (None, 4), (1, 6, 4, 2)),
        (tl.nn.AdaptiveAvgPool3D, (1, 5, 4, 7, 2), (2, 3, 4), (1, 2, 3, 4, 2)),
        (tl.nn.AdaptiveMaxPool3D, (1, 4, 4, 4, 1), 1, (1, 1, 1, 1, 1)),
    ],
)
def test_adaptive_pool_layers_match_a_loop_over_bins_eagerly_and_traced(layer, shape, out, want):
    rng = np.random.default_rng(21)
    x = rng.standard_normal(shape)
    kind = "avg" if "Avg" in layer.__name__ else "max"
    rank = len(shape) - 2
    sizes = out if isinstance(out, tuple) else (out,) * rank
    y = x
    for axis, m in zip(range(1, 1 + rank), sizes):  # the bins of each axis, written out one cell at a time
        if m is not None:
            n = y.shape[axis]
            parts = [np.take(y, range(i * n // m, -(-(i + 1) * n // m)), axis) for i in range(m)]
            y = np.stack([p.mean(axis) if kind == "avg" else p.max(axis) for p in parts], axis)
    got = layer(out)(x)
    assert got.shape == want
    np.testing.assert_allclose(got.numpy(), y, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(tl.function(layer(out))(x).numpy(), y, rtol=1e-13, atol=1e-13)
    w = rng.standard_normal(want)
    check_grads(lambda t: tl.sum(layer(out)(t) * w), [x], order=1)


def test_adaptive_pool_channels_first_and_errors():
    x = np.arange(2 * 3 * 7.0).reshape(2, 3, 7)
    last = tl.nn.AdaptiveAvgPool1D(3)(np.transpose(x, (0, 2, 1))).numpy()
    np.testing.assert_allclose(tl.nn.AdaptiveAvgPool1D(3, data_format="NCW")(x).numpy(), np.transpose(last, (0, 2, 1)))
    with pytest.raises(ValueError, match=r"adaptive_avg_pool: output_size must be a positive int or 2 of them"):
        tl.nn.adaptive_avg_pool(np.ones((1, 4, 4, 1)), (2, 0))
    with pytest.raises(TypeError, match=r"adaptive_avg_pool: input must be floating, got int64"):
        tl.nn.adaptive_avg_pool(np.ones((1, 4, 1), np.int64), 2)
    np.testing.assert_array_equal(tl.nn.adaptive_max_pool(np.arange(5).reshape(1, 5, 1), 2).numpy().ravel(), [2, 4])
    f = tl.function(
        lambda t: tl.nn.adaptive_avg_pool(t, 2), input_signature=[tl.TensorSpec((None, None, 3), tl.float64)]
    )
    with pytest.raises(ValueError, match=r"adaptive_avg_pool: the spatial sizes must be known \(axis 1 is not\)"):
        f(np.ones((1, 4, 3)))


def test_adaptive_pool_matches_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(22)
    for shape, out in [((2, 3, 7), 3), ((2, 3, 5), 8), ((2, 3, 10, 7), (4, 3)), ((2, 2, 5, 4, 7), (2, 3, 4))]:
        rank = len(shape) - 2
        x = rng.standard_normal(shape)
        layout = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[rank]
        for kind in ("avg", "max"):
            tx = torch.tensor(x, requires_grad=True)
            theirs = getattr(F, f"adaptive_{kind}_pool{rank}d")(tx, out)
            w = rng.standard_normal(tuple(theirs.shape))
            (g,) = torch.autograd.grad((theirs * torch.tensor(w)).sum(), tx)
            fn = getattr(tl.nn, f"adaptive_{kind}_pool")
            np.testing.assert_allclose(fn(x, out, layout).numpy(), theirs.detach().numpy(), rtol=1e-13)
            ours = tl.grad(lambda t: tl.sum(fn(t, out, layout) * w))(tl.tensor(x))
            np.testing.assert_allclose(ours.numpy(), g.numpy(), rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- Conv1DTranspose
def _conv1d_transpose_reference(x, kernel, bias, stride, dilation, left, right, extra):
    # Scatter each input position through each tap: out[t * s + j * d] += x[t] W[j]; then crop and pad.
    batch, width, _ = x.shape
    k, out_channels, _ = kernel.shape
    full = np.zeros((batch, (width - 1) * stride + (k - 1) * dilation + 1 + extra, out_channels))
    for t in range(width):
        for j in range(k):
            full[:, t * stride + j * dilation] += x[:, t] @ kernel[j].T
    return full[:, left : full.shape[1] - right] + bias


@pytest.mark.parametrize(
    "k, s, d, padding, output_padding, crop",
    [
        (3, 2, 1, "VALID", None, (0, 0, 0)),
        (3, 2, 1, (1, 1), 1, (1, 1, 1)),
        (4, 3, 1, (0, 2), 2, (0, 2, 2)),
        (2, 2, 2, "VALID", 1, (0, 0, 1)),
        (5, 1, 1, "SAME", None, (2, 2, 0)),
    ],
)
def test_conv1d_transpose_against_a_scatter_loop(k, s, d, padding, output_padding, crop):
    rng = np.random.default_rng(31)
    layer = tl.nn.Conv1DTranspose(
        3, 5, k, strides=s, padding=padding, output_padding=output_padding, dilations=d, dtype=tl.float64, seed=0
    )
    layer.bias.assign(rng.standard_normal(5))
    x = rng.standard_normal((2, 7, 3))
    want = _conv1d_transpose_reference(x, layer.kernel.numpy(), layer.bias.numpy(), s, d, *crop)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tl.function(layer)(x).numpy(), want, rtol=1e-12, atol=1e-13)
    channels_first = tl.nn.Conv1DTranspose(
        3, 5, k, strides=s, padding=padding, output_padding=output_padding, dilations=d, dtype=tl.float64,
        data_format="NCW",
    )  # fmt: skip
    channels_first.kernel.assign(layer.kernel)
    channels_first.bias.assign(layer.bias)
    np.testing.assert_allclose(
        channels_first(x.transpose(0, 2, 1)).numpy(), want.transpose(0, 2, 1), rtol=1e-12, atol=1e-13
    )
    w = rng.standard_normal(want.shape)
    check_grads(lambda t, kern: tl.sum(tl.nn.conv2d_transpose(
        tl.expand_dims(t, 1), tl.expand_dims(kern, 0), (2, 1, want.shape[1], 5), (1, s),
        padding if isinstance(padding, str) else ((0, 0), padding), (1, d)) * w[:, None]),
        [x, layer.kernel.numpy()], order=1)  # fmt: skip


def test_conv1d_transpose_errors():
    with pytest.raises(ValueError, match=r"Conv1DTranspose: padding must be 'SAME', 'VALID' or \(left, right\)"):
        tl.nn.Conv1DTranspose(2, 2, 3, padding=((1, 1), (1, 1)))
    with pytest.raises(
        ValueError, match=r"Conv1DTranspose: output_padding must be None or an int >= 0 smaller than the stride"
    ):
        tl.nn.Conv1DTranspose(2, 2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match=r"Conv1DTranspose: input must be 3-D NWC"):
        tl.nn.Conv1DTranspose(2, 2, 3)(np.ones((1, 4, 4, 2), np.float32))
    with pytest.raises(
        ValueError, match=r"Conv1DTranspose: the output would be \(-1,\) \(width\): the padding \(\(1, 1\),\) crops"
    ):
        tl.nn.Conv1DTranspose(2, 2, 1, padding=(1, 1))(np.ones((1, 1, 2), np.float32))


def test_conv1d_transpose_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(32)
    for k, s, d, q, p in [(3, 2, 1, 0, 0), (3, 2, 1, 1, 1), (4, 3, 2, 2, 1), (1, 1, 1, 0, 0)]:
        layer = tl.nn.Conv1DTranspose(
            3, 5, k, strides=s, padding=(q, q), output_padding=p or None, dilations=d, dtype=tl.float64,
            data_format="NCW", seed=0,
        )  # fmt: skip
        layer.bias.assign(rng.standard_normal(5))
        x = rng.standard_normal((2, 3, 6))
        theirs = torch.nn.functional.conv_transpose1d(
            torch.tensor(x), torch.tensor(layer.kernel.numpy().transpose(2, 1, 0)), torch.tensor(layer.bias.numpy()),
            stride=s, padding=q, output_padding=p, dilation=d,
        )  # fmt: skip
        np.testing.assert_allclose(layer(x).numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)

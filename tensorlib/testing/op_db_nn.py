"""The nn catalogue: one OpInfo per ``tl.nn`` function and per nn gradient op.

The conv and pool references are :mod:`tensorlib.testing.references` (NumPy,
one shifted, strided view per filter or window tap, in float64 and cast back),
independent of the kernels in ``tensorlib.backends.numpy_nn``.  Samples are small: the registry-driven tests
run every entry in several dtypes and modes.

>>> from tensorlib.testing.op_db_nn import OPINFOS
>>> [t for t in ("Conv2D", "Conv2DBackpropInput", "FusedBatchNormGradV3")
...  if any(t in info.op_types for info in OPINFOS)]
['Conv2D', 'Conv2DBackpropInput', 'FusedBatchNormGradV3']
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from . import references
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import scalars, shapes, tensors

FLOATS = (_dt.float32, _dt.float64)
WITH_HALF = (_dt.float16, _dt.float32, _dt.float64)


# ---------------------------------------------------------------- conv references (float64, cast back)
def _conv2d_ref(x, w, strides, padding, dilations=1):
    return references.conv2d(x, w, strides, padding, dilations).astype(np.result_type(x, w))


def _backprop_input_ref(input_shape, w, dy, strides, padding, dilations=1):
    return references.conv2d_backprop_input(input_shape, w, dy, strides, padding, dilations).astype(
        np.result_type(w, dy)
    )


def _backprop_filter_ref(x, filter_shape, dy, strides, padding, dilations=1):
    return references.conv2d_backprop_filter(x, filter_shape, dy, strides, padding, dilations).astype(
        np.result_type(x, dy)
    )


def _conv2d_transpose_ref(x, w, output_shape, strides, padding):
    return _backprop_input_ref(output_shape, w, x, strides, padding)


@st.composite
def _conv_geometry(draw, max_size=6):
    """(input shape, filter shape, strides, padding, dilations): any padding form, odd and even sizes."""
    n, cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    strides = draw(st.sampled_from([1, 2, (1, 2), (3, 1), [1, 2, 2, 1]]))
    dilations = draw(st.sampled_from([1, 2, (1, 2)]))
    padding = draw(st.sampled_from(["VALID", "SAME", "explicit"]))
    if padding == "explicit":
        padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(2))
    d = references.pair(dilations)
    hw = []
    for axis in range(2):
        pad_total = sum(padding[axis]) if not isinstance(padding, str) else 0
        smallest = max(1, (k[axis] - 1) * d[axis] + 1 - (0 if padding == "SAME" else pad_total))
        hw.append(draw(st.integers(smallest, max(smallest, max_size))))
    return (n, hw[0], hw[1], cin), (*k, cin, cout), strides, padding, dilations


@st.composite
def _conv2d_draw(draw, dtype):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry())
    x, w = draw(tensors(dtype, x_shape)), draw(tensors(dtype, w_shape))
    return SampleInput((x, w, strides, padding, dilations), grad_argnums=(0, 1))


@st.composite
def _backprop_input_draw(draw, dtype):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry())
    out_hw = references.geometry(x_shape[1:3], w_shape[:2], strides, padding, dilations)[3]
    w, dy = draw(tensors(dtype, w_shape)), draw(tensors(dtype, (x_shape[0], *out_hw, w_shape[3])))
    input_shape = draw(st.sampled_from([x_shape, (None, *x_shape[1:])]))
    return SampleInput((input_shape, w, dy, strides, padding, dilations), grad_argnums=(1, 2))


@st.composite
def _backprop_filter_draw(draw, dtype):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry())
    out_hw = references.geometry(x_shape[1:3], w_shape[:2], strides, padding, dilations)[3]
    x, dy = draw(tensors(dtype, x_shape)), draw(tensors(dtype, (x_shape[0], *out_hw, w_shape[3])))
    return SampleInput((x, w_shape, dy, strides, padding, dilations), grad_argnums=(0, 2))


@st.composite
def _conv2d_transpose_draw(draw, dtype):
    x_shape, w_shape, strides, padding, _ = draw(_conv_geometry())
    out_hw = references.geometry(x_shape[1:3], w_shape[:2], strides, padding)[3]
    y, w = draw(tensors(dtype, (x_shape[0], *out_hw, w_shape[3]))), draw(tensors(dtype, w_shape))
    return SampleInput((y, w, x_shape, strides, padding), grad_argnums=(0, 1))


def _conv_errors():
    depth = (
        r"input depth 3 does not match filter in_channels 1 \(input shape \(8, 32, 32, 3\), filter shape "
        r"\(3, 3, 1, 6\)\)"
    )
    return (
        ErrorInput(
            (np.ones((8, 32, 32, 3)), np.ones((3, 3, 1, 6)), 1, "SAME"), exc=ValueError, match=rf"^Conv2D: {depth}"
        ),
        ErrorInput(
            (np.ones((1, 4, 4, 1)), np.ones((2, 2, 1, 1)), 1, "FULL"),
            exc=ValueError,
            match=r"^Conv2D: padding must be 'VALID', 'SAME' or \(\(top, bottom\), \(left, right\)\)",
        ),
        ErrorInput(
            (np.ones((1, 4, 4, 1)), np.ones((2, 2, 1, 1)), (1, 2, 3), "SAME"),
            exc=ValueError,
            match=r"^Conv2D: strides must be an int, a \(rows, cols\) pair or \[1, rows, cols, 1\]",
        ),
    )


@st.composite
def _conv1d_draw(draw, dtype):
    n, width, cin, cout, k = (draw(st.integers(1, 3)) for _ in range(5))
    stride, dilation = draw(st.sampled_from([1, 2, [1, 2, 1]])), draw(st.sampled_from([1, 2]))
    padding = draw(st.sampled_from(["VALID", "SAME", (1, 0)]))
    smallest = (k - 1) * dilation + 1 - (sum(padding) if isinstance(padding, tuple) else 0)
    width = max(width, smallest) if padding != "SAME" else width
    x, w = draw(tensors(dtype, (n, width, cin))), draw(tensors(dtype, (k, cin, cout)))
    return SampleInput((x, w, stride, padding, dilation), grad_argnums=(0, 1))


def _conv1d_ref(x, w, stride, padding, dilation=1):
    stride = stride[1] if isinstance(stride, list) else stride
    padding = padding if isinstance(padding, str) else ((0, 0), padding)
    return _conv2d_ref(x[:, None], w[None], (1, stride), padding, (1, dilation))[:, 0]


@st.composite
def _depthwise_draw(draw, dtype):
    x_shape, w_shape, strides, padding, dilations = draw(_conv_geometry(max_size=5))
    w_shape = (*w_shape[:2], x_shape[3], draw(st.integers(1, 2)))
    x, w = draw(tensors(dtype, x_shape)), draw(tensors(dtype, w_shape))
    return SampleInput((x, w, strides, padding, dilations), grad_argnums=(0, 1))


def _depthwise_ref(x, w, strides, padding, dilations=1):
    """One conv2d per input channel (independent of the shifted-slice sum the op is built from)."""
    per_channel = [
        _conv2d_ref(x[..., c : c + 1], w[:, :, c : c + 1, :], strides, padding, dilations) for c in range(x.shape[3])
    ]
    return np.concatenate(per_channel, axis=3)


def _triple(v):
    """An int, a triple or TensorFlow's ``[1, d, h, w, 1]`` -> ``(d, h, w)`` (the samples' NDHWC forms)."""
    v = (v,) * 3 if isinstance(v, int) else tuple(v)
    return v[1:4] if len(v) == 5 else v


def _volume_axes(x, window, strides, dilations, padding):
    """Per axis: (output size, cells before), TensorFlow's VALID/SAME rule or explicit (before, after) pairs."""
    axes = []
    for i, (n, k, s, d) in enumerate(zip(x.shape[1:4], window, strides, dilations)):
        ek = (k - 1) * d + 1
        if padding == "SAME":
            out = -(-n // s)
            axes.append((out, max((out - 1) * s + ek - n, 0) // 2))
        else:
            before, after = (0, 0) if padding == "VALID" else padding[i]
            axes.append(((n + before + after - ek) // s + 1, before))
    return axes


def _conv3d_ref(x, w, strides, padding, dilations=1):
    """A float64 loop over output cells and filter taps (independent of the stacked-tap Conv2D)."""
    s, d = _triple(strides), _triple(dilations)
    axes = _volume_axes(x, w.shape[:3], s, d, padding)
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    y = np.zeros((x.shape[0], *(a[0] for a in axes), w.shape[4]))
    for o in np.ndindex(*y.shape[1:4]):
        for t in np.ndindex(*w.shape[:3]):
            at = [o[i] * s[i] + t[i] * d[i] - axes[i][1] for i in range(3)]
            if all(0 <= at[i] < x.shape[1 + i] for i in range(3)):
                y[:, o[0], o[1], o[2]] += xd[:, at[0], at[1], at[2]] @ wd[t]
    return y.astype(np.result_type(x, w))


def _pool3d_ref(x, ksize, strides, padding, kind):
    """A float64 loop over the windows' real cells: padding never wins the max nor counts in the mean."""
    k, s = _triple(ksize), _triple(strides)
    axes = _volume_axes(x, k, s, (1, 1, 1), padding)
    y = np.zeros((x.shape[0], *(a[0] for a in axes), x.shape[4]))
    for o in np.ndindex(*y.shape[1:4]):
        lo = [o[i] * s[i] - axes[i][1] for i in range(3)]
        cells = tuple(slice(max(lo[i], 0), min(lo[i] + k[i], x.shape[1 + i])) for i in range(3))
        window = x[:, cells[0], cells[1], cells[2]].astype(np.float64)
        y[:, o[0], o[1], o[2]] = window.max((1, 2, 3)) if kind == "max" else window.mean((1, 2, 3))
    return y.astype(x.dtype)


@st.composite
def _conv3d_draw(draw, dtype):
    k = tuple(draw(st.integers(1, 2)) for _ in range(3))
    strides = draw(st.sampled_from([1, 2, (1, 2, 1), [1, 2, 1, 3, 1]]))
    dilations = draw(st.sampled_from([1, (2, 1, 1)]))
    padding = draw(st.sampled_from(["VALID", "SAME", ((1, 0), (0, 1), (0, 0))]))
    d = _triple(dilations)
    dhw = tuple(draw(st.integers((kk - 1) * dd + 1, 4)) for kk, dd in zip(k, d))
    cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    x, w = draw(tensors(dtype, (draw(st.integers(1, 2)), *dhw, cin))), draw(tensors(dtype, (*k, cin, cout)))
    return SampleInput((x, w, strides, padding), {"dilations": dilations}, grad_argnums=(0, 1))


def _pool3d_draw(kind):
    @st.composite
    def draw_sample(draw, dtype):
        k = tuple(draw(st.integers(1, 2)) for _ in range(3))
        strides = draw(st.sampled_from([1, 2, (2, 1, 3), [1, 1, 2, 1, 1]]))
        padding = draw(st.sampled_from(["VALID", "SAME"]))
        shape = (draw(st.integers(1, 2)), *(draw(st.integers(kk, 4)) for kk in k), draw(st.integers(1, 2)))
        x = draw(_distinct(dtype, shape) if kind == "max" else tensors(dtype, shape))
        return SampleInput((x, k, strides, padding))

    return draw_sample


# ---------------------------------------------------------------- pooling references (float64, cast back)
def _pool_ref(x, ksize, strides, padding, kind):
    return (references.avg_pool if kind == "avg" else references.max_pool)(x, ksize, strides, padding).astype(x.dtype)


def _avg_pool_grad_ref(grad, input_shape, ksize, strides, padding):
    return references.avg_pool_grad(input_shape, grad, ksize, strides, padding).astype(grad.dtype)


def _max_pool_grad_ref(orig_input, orig_output, grad, ksize, strides, padding):
    return references.max_pool_grad(orig_input, grad, ksize, strides, padding).astype(grad.dtype)


def _max_pool_grad_grad_ref(orig_input, orig_output, grad, ksize, strides, padding):
    return references.max_pool_grad_grad(orig_input, grad, ksize, strides, padding).astype(grad.dtype)


@st.composite
def _pool_geometry(draw, explicit: bool = False):
    ksize = draw(st.sampled_from([1, 2, 3, (2, 3), [1, 2, 2, 1]]))
    strides = draw(st.sampled_from([1, 2, (2, 1), 3]))
    k = references.pair(ksize)
    padding = draw(st.sampled_from(["VALID", "SAME", "explicit"] if explicit else ["VALID", "SAME"]))
    if padding == "explicit":  # max pooling's: each pad smaller than the window
        padding = tuple((draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))) for n in k)
    shape = (draw(st.integers(1, 2)), draw(st.integers(k[0], 6)), draw(st.integers(k[1], 6)), draw(st.integers(1, 3)))
    return shape, ksize, strides, padding


def _distinct(dtype, shape):
    """Values without ties (so a window's maximum is unique) and far apart in float16 too."""
    return tensors(dtype, shape, st.integers(-200, 200).map(lambda v: v / 32.0), unique=True)


def _pool_draw(kind):
    @st.composite
    def draw_sample(draw, dtype):
        shape, ksize, strides, padding = draw(_pool_geometry(explicit=kind == "max"))
        x = draw(_distinct(dtype, shape) if kind == "max" else tensors(dtype, shape))
        return SampleInput((x, ksize, strides, padding))

    return draw_sample


def _pool_grad_attrs(ksize, strides, padding):
    return {"ksize": references.pair(ksize), "strides": references.pair(strides), "padding": padding}


@st.composite
def _avg_pool_grad_draw(draw, dtype):
    shape, ksize, strides, padding = draw(_pool_geometry())
    out_hw = references.geometry(shape[1:3], references.pair(ksize), strides, padding)[3]
    grad = draw(tensors(dtype, (shape[0], *out_hw, shape[3])))
    return SampleInput((grad,), {"input_shape": shape, **_pool_grad_attrs(ksize, strides, padding)})


def _max_pool_grad_draw(second_order):
    @st.composite
    def draw_sample(draw, dtype):
        shape, ksize, strides, padding = draw(_pool_geometry())
        x = draw(_distinct(dtype, shape))
        y = _pool_ref(x, ksize, strides, padding, "max")
        grad = draw(tensors(dtype, shape if second_order else y.shape))
        return SampleInput((x, y, grad), _pool_grad_attrs(ksize, strides, padding), grad_argnums=(2,))

    return draw_sample


def _avg_pool_grad(grad, **attrs):
    return tl.ops.get("AvgPoolGrad")(grad, **attrs)


def _max_pool_grad(x, y, grad, **attrs):
    return tl.ops.get("MaxPoolGrad")(x, y, grad, **attrs)


def _max_pool_grad_grad(x, y, grad, **attrs):
    return tl.ops.get("MaxPoolGradGrad")(x, y, grad, **attrs)


def _pool_errors(op_type):
    return (
        ErrorInput(
            (np.ones((4, 4, 1)), 2, 2, "VALID"),
            exc=ValueError,
            match=rf"^{op_type}: input must be 4-D NHWC .* got shape \(4, 4, 1\)",
        ),
        ErrorInput(  # MaxPool takes explicit pads smaller than the window, AvgPool none
            (np.ones((1, 4, 4, 1)), 2, 2, ((2, 2), (1, 1)) if op_type == "MaxPool" else ((1, 1), (1, 1))),
            exc=ValueError,
            match=(
                rf"^{op_type}: each explicit padding must be smaller than the window"
                if op_type == "MaxPool"
                else rf"^{op_type}: padding must be 'VALID' or 'SAME'"
            ),
        ),
    )


# ---------------------------------------------------------------- activations and losses
def _unary_draw(lo=-3.0, hi=3.0, away_from=None):
    def samples(dtype):
        elements = scalars(dtype, lo, hi)
        if away_from is not None:  # keep clear of the kinks, where the finite differences would straddle one
            kinks = away_from if isinstance(away_from, tuple) else (away_from,)
            elements = elements.filter(lambda v: min(abs(v - k) for k in kinks) > 0.05)
        return tensors(dtype, shapes(1, 3), elements).map(lambda x: SampleInput((x,)))

    return samples


def _f64(fn):
    """A float64 NumPy formula, its result cast back to the input's dtype."""

    def ref(x, *args, **kwargs):
        return np.asarray(fn(x.astype(np.float64), *args, **kwargs)).astype(x.dtype)

    return ref


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu_ref(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


_SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def _sigmoid_ref(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _glu_ref(x, axis=-1):
    a, b = np.split(x.astype(np.float64), 2, axis)
    return (a * _sigmoid_ref(b)).astype(x.dtype)


@st.composite
def _glu_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    x = np.concatenate([x, x[::-1] * 0.5], axis)  # an even size along axis
    return SampleInput((x, axis))


def _activation_entries():
    """The activations of tensorlib.ops.nn.extra_activations: float64 formulas, kinks kept clear of."""
    ref = _f64
    entries = [
        OpInfo("nn.silu", tl.nn.silu, ref(lambda x: x * _sigmoid_ref(x)), _unary_draw(-20.0, 20.0), ("Silu",)),
        OpInfo(
            "nn.relu6", tl.nn.relu6, ref(lambda x: np.clip(x, 0, 6)), _unary_draw(-2.0, 8.0, (0.0, 6.0)), ("Relu6",)
        ),
        OpInfo(
            "nn.selu",
            tl.nn.selu,
            ref(lambda x: _SELU[1] * np.where(x > 0, x, _SELU[0] * np.expm1(np.minimum(x, 0)))),
            _unary_draw(away_from=0.0),
            ("Selu",),
        ),
        OpInfo(
            "nn.celu",
            lambda x, alpha=1.0: tl.nn.celu(x, alpha),
            ref(lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha))),
            lambda dtype: _unary_draw(away_from=0.0)(dtype).map(lambda s: SampleInput((*s.args, 0.5))),
            ("Celu",),
            error_inputs=(ErrorInput((np.ones(2), 0.0), exc=ValueError, match=r"^Celu: alpha must not be 0"),),
        ),
        OpInfo(
            "nn.hard_sigmoid",
            tl.nn.hard_sigmoid,
            ref(lambda x: np.clip(x + 3, 0, 6) / 6),
            _unary_draw(-5.0, 5.0, (-3.0, 3.0)),
            ("HardSigmoid",),
        ),
        OpInfo(
            "nn.hard_swish",
            tl.nn.hard_swish,
            ref(lambda x: x * np.clip(x + 3, 0, 6) / 6),
            _unary_draw(-5.0, 5.0, (-3.0, 3.0)),
            ("HardSwish",),
        ),
        OpInfo(
            "nn.hard_tanh",
            lambda x, lo=-1.0, hi=1.0: tl.nn.hard_tanh(x, lo, hi),
            ref(lambda x, lo=-1.0, hi=1.0: np.clip(x, lo, hi)),
            lambda dtype: _unary_draw(away_from=(-2.0, 0.5))(dtype).map(lambda s: SampleInput((*s.args, -2.0, 0.5))),
            ("HardTanh",),
            error_inputs=(
                ErrorInput((np.ones(2), 1.0, -1.0), exc=ValueError, match=r"^HardTanh: min_val must not exceed"),
            ),
        ),
        OpInfo(
            "nn.log_sigmoid",
            tl.nn.log_sigmoid,
            ref(lambda x: -np.logaddexp(0.0, -x)),
            _unary_draw(-30.0, 30.0),
            ("LogSigmoid",),
            error_inputs=(
                ErrorInput(  # integers give float64 (DESIGN §6); complex is refused
                    (np.array([1 + 2j, 2]),),
                    exc=TypeError,
                    match=r"^LogSigmoid: features must be a floating-point tensor, got complex128",
                ),
            ),
        ),
        OpInfo(
            "nn.softsign", tl.nn.softsign, ref(lambda x: x / (1 + np.abs(x))), _unary_draw(away_from=0.0), ("Softsign",)
        ),
        OpInfo(
            "nn.mish", tl.nn.mish, ref(lambda x: x * np.tanh(np.logaddexp(x, 0.0))), _unary_draw(-20.0, 20.0), ("Mish",)
        ),
        OpInfo(
            "nn.glu",
            tl.nn.glu,
            _glu_ref,
            _glu_draw,
            ("SplitV", "Sigmoid", "Mul"),
            error_inputs=(
                ErrorInput((np.ones((2, 3)),), exc=ValueError, match=r"^glu: the size of axis -1 must be even"),
            ),
        ),
    ]
    for entry in entries:
        entry.dtypes = WITH_HALF
    return entries


def _log_softmax_ref(x, axis=-1):
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


@st.composite
def _axis_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    return SampleInput((x, draw(st.integers(-x.ndim, x.ndim - 1))))


@st.composite
def _cross_entropy_draw(draw, dtype):
    logits = draw(tensors(dtype, shapes(1, 3), min_value=-5.0, max_value=5.0))
    labels = draw(tensors(dtype, logits.shape, min_value=0.0, max_value=1.0))
    return SampleInput((labels, logits, draw(st.integers(-logits.ndim, logits.ndim - 1))), grad_argnums=(0, 1))


def _cross_entropy_ref(labels, logits, axis=-1):
    return (
        -(labels.astype(np.float64) * _log_softmax_ref(logits.astype(np.float64), axis)).sum(axis).astype(logits.dtype)
    )


@st.composite
def _sparse_cross_entropy_draw(draw, dtype):
    logits = draw(tensors(dtype, shapes(1, 3), min_value=-5.0, max_value=5.0))
    labels = draw(tensors(np.int64, logits.shape[:-1], st.integers(0, logits.shape[-1] - 1)))
    return SampleInput((labels, logits), grad_argnums=(1,))


def _sparse_cross_entropy_ref(labels, logits):
    log_probs = _log_softmax_ref(logits.astype(np.float64))
    return (-np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]).astype(logits.dtype)


@st.composite
def _sigmoid_cross_entropy_draw(draw, dtype):
    logits = draw(tensors(dtype, shapes(1, 3), min_value=-20.0, max_value=20.0))
    labels = draw(tensors(dtype, logits.shape, min_value=0.0, max_value=1.0))
    return SampleInput((labels, logits), grad_argnums=(0, 1))


def _sigmoid_cross_entropy_ref(labels, logits):
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    return (np.logaddexp(0.0, x) - x * z).astype(logits.dtype)


@st.composite
def _layer_norm_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(2, 3, min_side=2)))
    k = draw(st.integers(1, x.ndim - 1))
    axis = tuple(range(x.ndim - k, x.ndim)) if draw(st.booleans()) else (draw(st.integers(0, x.ndim - 1)),)
    normalized = tuple(x.shape[a] for a in axis)
    scale, offset = draw(tensors(dtype, normalized)), draw(tensors(dtype, normalized))
    return SampleInput((x, scale, offset, axis, 0.1), grad_argnums=(0, 1, 2))


def _layer_norm_ref(x, scale, offset, axis, epsilon):
    xf = x.astype(np.float64)
    shape = [x.shape[a] if a in axis else 1 for a in range(x.ndim)]
    y = (xf - xf.mean(axis, keepdims=True)) / np.sqrt(xf.var(axis, keepdims=True) + epsilon)
    return (y * scale.reshape(shape) + offset.reshape(shape)).astype(x.dtype)


@st.composite
def _rms_norm_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3, min_side=1)))
    k = draw(st.integers(1, x.ndim))
    axis = tuple(range(x.ndim - k, x.ndim)) if draw(st.booleans()) else (draw(st.integers(0, x.ndim - 1)),)
    scale = draw(st.none() | tensors(dtype, tuple(x.shape[a] for a in axis)))
    return SampleInput((x, scale, axis, 0.1), grad_argnums=(0,) if scale is None else (0, 1))


def _rms_norm_ref(x, scale, axis, epsilon):
    xf = x.astype(np.float64)
    y = xf / np.sqrt((xf * xf).mean(axis, keepdims=True) + epsilon)
    if scale is not None:
        y = y * scale.reshape([x.shape[a] if a in axis else 1 for a in range(x.ndim)])
    return y.astype(x.dtype)


@st.composite
def _group_norm_draw(draw, dtype):
    groups, per_group = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    x = draw(tensors(dtype, (draw(st.integers(1, 2)), draw(st.integers(1, 3)), groups * per_group)))
    channels = x.shape[-1:]
    return SampleInput(
        (x, groups, draw(tensors(dtype, channels)), draw(tensors(dtype, channels)), 0.1), grad_argnums=(0, 2, 3)
    )


def _group_norm_ref(x, groups, scale, offset, epsilon):
    xf = x.astype(np.float64).reshape(x.shape[0], -1, groups, x.shape[-1] // groups)
    y = (xf - xf.mean((1, 3), keepdims=True)) / np.sqrt(xf.var((1, 3), keepdims=True) + epsilon)
    return (y.reshape(x.shape) * scale + offset).astype(x.dtype)


@st.composite
def _normalize_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3), min_value=0.5, max_value=3.0))  # a norm away from 0 and from epsilon
    x = x * draw(tensors(dtype, x.shape, st.sampled_from([-1.0, 1.0])))
    return SampleInput((x, draw(st.sampled_from([1.0, 2.0, 3.0])), draw(st.integers(-x.ndim, x.ndim - 1))))


def _normalize_ref(x, p, axis, epsilon=1e-12):
    xf = x.astype(np.float64)
    norm = (np.abs(xf) ** p).sum(axis, keepdims=True) ** (1.0 / p)
    return (xf / np.maximum(norm, epsilon)).astype(x.dtype)


@st.composite
def _l2_normalize_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    return SampleInput((x, axis, 1e-3))


def _l2_normalize_ref(x, axis, epsilon):
    xf = x.astype(np.float64)
    return (xf / np.sqrt(np.maximum((xf * xf).sum(axis, keepdims=True), epsilon))).astype(x.dtype)


@st.composite
def _adaptive_draw(draw, dtype):
    rank = draw(st.integers(1, 3))
    spatial = tuple(draw(st.integers(1, 7 if rank < 3 else 4)) for _ in range(rank))
    first = draw(st.booleans())  # channels first (PyTorch's layout) or last
    channels = draw(st.integers(1, 2))
    shape = (draw(st.integers(1, 2)),) + ((channels,) + spatial if first else spatial + (channels,))
    x = draw(tensors(dtype, shape))
    out = tuple(draw(st.none() | st.integers(1, 5)) for _ in range(rank))
    layout = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[rank][int(first)]
    return SampleInput((x, out[0] if rank == 1 and out[0] is not None else out, layout))


def _adaptive_ref(kind):
    def ref(x, output_size, data_format):
        # A loop over the output cells of each axis in turn, with PyTorch's bins floor(i n / m):ceil((i + 1) n / m).
        y = x.astype(np.float64)
        rank = x.ndim - 2
        sizes = output_size if isinstance(output_size, tuple) else (output_size,) * rank
        first = 2 if data_format[1] == "C" else 1
        for axis, m in zip(range(first, first + rank), sizes):
            if m is None:
                continue
            n = y.shape[axis]
            cells = [np.take(y, range(i * n // m, -(-(i + 1) * n // m)), axis) for i in range(m)]
            y = np.stack([c.mean(axis) if kind == "avg" else c.max(axis) for c in cells], axis)
        return y.astype(x.dtype)

    return ref


def _adaptive_entries():
    errors = (
        ErrorInput((np.ones((2, 3)), 2), exc=ValueError, match=r"input must have 1, 2 or 3 spatial dimensions"),
        ErrorInput((np.ones((1, 4, 2)), 0), exc=ValueError, match=r"output_size must be a positive int or 1 of them"),
        ErrorInput((np.ones((1, 4, 4, 2)), (2, 2, 2)), exc=ValueError, match=r"or 2 of them \(None keeps an axis\)"),
        ErrorInput((np.ones((1, 4, 2)), 2, "NHWC"), exc=ValueError, match=r"data_format must be 'NWC' or 'NCW'"),
        ErrorInput((np.ones((1, 0, 2)), 2), exc=ValueError, match=r"axis 1 is empty"),
    )
    return [
        OpInfo(
            f"nn.adaptive_{kind}_pool",
            getattr(tl.nn, f"adaptive_{kind}_pool"),
            _adaptive_ref(kind),
            _adaptive_draw,
            op_types=("Reshape", "PadV2", "GatherV2") + (("Sum", "Div") if kind == "avg" else ("Max",)),
            kinks=kind == "max",
            error_inputs=tuple(
                ErrorInput(e.args, exc=e.exc, match=rf"^adaptive_{kind}_pool: .*" + e.match) for e in errors
            ),
        )
        for kind in ("avg", "max")
    ]


def _normalization_entries():
    return [
        OpInfo(
            "nn.sigmoid_cross_entropy_with_logits",
            tl.nn.sigmoid_cross_entropy_with_logits,
            _sigmoid_cross_entropy_ref,
            _sigmoid_cross_entropy_draw,
            op_types=("SigmoidCrossEntropyWithLogits",),
            dtypes=WITH_HALF,
            error_inputs=(
                ErrorInput(
                    (np.zeros((2, 3)), np.zeros((2, 4))),
                    exc=ValueError,
                    match=r"^SigmoidCrossEntropyWithLogits: labels shape \(2, 3\) does not match the expected \(2, 4\)",
                ),
            ),
        ),
        OpInfo(
            "nn.layer_norm",
            tl.nn.layer_norm,
            _layer_norm_ref,
            _layer_norm_draw,
            op_types=("Sum", "Sub", "Square", "Sqrt", "Div", "Mul", "Add"),
            dtypes=WITH_HALF,
            grad_atol=1e-4,
            grad_rtol=1e-3,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones(4)),
                    exc=ValueError,
                    match=r"^layer_norm: scale shape \(4,\) does not match the normalized dimensions \(3,\)",
                ),
                ErrorInput(
                    (np.ones((2, 3), np.complex128),), exc=TypeError, match=r"^layer_norm: x must be a real tensor"
                ),
            ),
        ),
        OpInfo(
            "nn.rms_norm",
            tl.nn.rms_norm,
            _rms_norm_ref,
            _rms_norm_draw,
            op_types=("Square", "Sum", "Sqrt", "Div", "Mul", "Add"),
            dtypes=WITH_HALF,
            grad_atol=1e-4,
            grad_rtol=1e-3,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones(4)),
                    exc=ValueError,
                    match=r"^rms_norm: scale shape \(4,\) does not match the normalized dimensions \(3,\)",
                ),
                ErrorInput(
                    (np.ones((2, 3), np.complex128),), exc=TypeError, match=r"^rms_norm: x must be a real tensor"
                ),
                ErrorInput(
                    (np.ones((2, 3)), None, 2),
                    exc=ValueError,
                    match=r"^rms_norm: axis 2 is out of range for a tensor of rank 2",
                ),
                ErrorInput((np.ones(3), None, -1, -1.0), exc=ValueError, match=r"^rms_norm: epsilon must be >= 0"),
            ),
        ),
        OpInfo(
            "nn.group_norm",
            tl.nn.group_norm,
            _group_norm_ref,
            _group_norm_draw,
            op_types=("BatchMatMulV2", "Sum", "Sub", "Square", "Sqrt", "Div", "Mul", "Add"),
            grad_atol=1e-4,
            grad_rtol=1e-3,
            error_inputs=(
                ErrorInput((np.ones((2, 3)), 2), exc=ValueError, match=r"^group_norm: the channels \(3\) must be"),
            ),
        ),
        OpInfo(
            "nn.normalize",
            tl.nn.normalize,
            _normalize_ref,
            _normalize_draw,
            op_types=("Abs", "Pow", "Sum", "Sqrt", "Greater", "Select", "Maximum", "Div"),
            dtypes=WITH_HALF,
            error_inputs=(ErrorInput((np.ones((2, 3)), 0.0), exc=ValueError, match=r"^normalize: p must be positive"),),
        ),
        OpInfo(
            "nn.l2_normalize",
            tl.nn.l2_normalize,
            _l2_normalize_ref,
            _l2_normalize_draw,
            op_types=("Square", "Sum", "Maximum", "Sqrt", "Div"),
            dtypes=WITH_HALF,
            error_inputs=(
                ErrorInput((np.ones((2, 3)), 2), exc=ValueError, match=r"^l2_normalize: axis 2 is out of range"),
            ),
        ),
    ]


@st.composite
def _dropout_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    noise_shape = draw(st.sampled_from([None, tuple(1 if i == 0 else d for i, d in enumerate(x.shape))]))
    return SampleInput((x, draw(st.sampled_from([0.0, 0.3, 0.5])), draw(st.integers(0, 100)), noise_shape))


def _dropout_ref(x, rate, seed, noise_shape=None):
    """tl.nn.dropout's documented draw: NumPy's default_rng(seed), float32 uniforms, keep where u >= rate."""
    if rate == 0.0:
        return x
    shape = x.shape if noise_shape is None else noise_shape
    keep = np.random.default_rng(seed).random(shape, dtype=np.float32) >= rate
    return (x.astype(np.float64) * keep / (1.0 - rate)).astype(x.dtype)


@st.composite
def _relu_grad_draw(draw, dtype):
    features = draw(tensors(dtype, shapes(1, 3)))
    return SampleInput((draw(tensors(dtype, features.shape)), features), grad_argnums=(0,))


def _relu_grad(gradients, features):
    return tl.ops.get("ReluGrad")(gradients, features)


def _relu_grad_ref(gradients, features):
    return np.where(features > 0, gradients, 0).astype(gradients.dtype)


# ---------------------------------------------------------------- batch norm
def _bn_shapes():
    return st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).filter(
        lambda s: s[0] * s[1] * s[2] > 1
    )


@st.composite
def _fused_batch_norm_draw(draw, dtype, is_training):
    shape = draw(_bn_shapes())
    channels = (shape[3],)
    x = draw(tensors(dtype, shape))
    scale, offset = draw(tensors(dtype, channels)), draw(tensors(dtype, channels))
    if is_training:
        return SampleInput((x, scale, offset), {"epsilon": 1e-2}, grad_argnums=(0, 1, 2))
    mean, variance = draw(tensors(dtype, channels)), draw(tensors(dtype, channels, min_value=0.5, max_value=2.0))
    return SampleInput(
        (x, scale, offset, mean, variance), {"epsilon": 1e-2, "is_training": False}, grad_argnums=(0, 1, 2, 3, 4)
    )


def _fused_batch_norm_ref(x, scale, offset, mean=None, variance=None, epsilon=1e-3, is_training=True):
    xf = x.astype(np.float64)
    if is_training:
        mean, variance = xf.mean((0, 1, 2)), xf.var((0, 1, 2))
        count = x.size // x.shape[3]
        stats = (mean, variance * count / max(count - 1, 1))
    else:
        stats = (mean, variance)
    y = (xf - mean) / np.sqrt(variance + epsilon) * scale + offset
    return (y.astype(x.dtype),) + tuple(np.asarray(s).astype(scale.dtype) for s in stats)


@st.composite
def _fused_batch_norm_grad_draw(draw, dtype):
    shape = draw(_bn_shapes())
    x, dy = draw(tensors(dtype, shape)), draw(tensors(dtype, shape))
    scale, offset = draw(tensors(dtype, shape[3:])), draw(tensors(dtype, shape[3:]))
    return SampleInput((dy, x, scale, offset), grad_argnums=(0, 1, 2))


def _fused_batch_norm_grad(dy, x, scale, offset):
    """The gradient op at x's own statistics (as the forward op hands them over)."""
    _, mean, _, inv_std = tl.ops.get("FusedBatchNormV3")(
        x, scale, offset, np.empty(0, scale.dtype), np.empty(0, scale.dtype), epsilon=1e-2
    )
    return tl.ops.get("FusedBatchNormGradV3")(dy, x, scale, mean, inv_std, epsilon=1e-2)


def _fused_batch_norm_grad_ref(dy, x, scale, offset):
    axes = (0, 1, 2)
    xf, dyf = x.astype(np.float64), dy.astype(np.float64)
    x_hat = (xf - xf.mean(axes)) / np.sqrt(xf.var(axes) + 1e-2)
    dscale, doffset = (dyf * x_hat).sum(axes), dyf.sum(axes)
    dx = scale / np.sqrt(xf.var(axes) + 1e-2) * (dyf - dyf.mean(axes) - x_hat * (dyf * x_hat).mean(axes))
    return dx.astype(x.dtype), dscale.astype(scale.dtype), doffset.astype(scale.dtype)


@st.composite
def _batch_normalization_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    channel = x.shape[-1:]
    mean, offset, scale = (draw(tensors(dtype, channel)) for _ in range(3))
    variance = draw(tensors(dtype, channel, min_value=0.5, max_value=2.0))
    return SampleInput((x, mean, variance, offset, scale, 1e-3), grad_argnums=(0, 1, 2, 3, 4))


def _batch_normalization_ref(x, mean, variance, offset, scale, variance_epsilon):
    return ((x - mean) / np.sqrt(variance + variance_epsilon) * scale + offset).astype(x.dtype)


@st.composite
def _moments_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3, min_side=2)))
    axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    return SampleInput((x, sorted(axes), draw(st.booleans())))


def _moments_ref(x, axes, keepdims=False):
    xf = x.astype(np.float64)
    return (
        xf.mean(tuple(axes), keepdims=keepdims).astype(x.dtype),
        xf.var(tuple(axes), keepdims=keepdims).astype(x.dtype),
    )


@st.composite
def _weighted_moments_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3, min_side=2)))
    ones = draw(st.lists(st.booleans(), min_size=x.ndim, max_size=x.ndim))  # axes the weights broadcast along
    weights = draw(
        tensors(dtype, tuple(1 if one else d for one, d in zip(ones, x.shape)), min_value=0.5, max_value=2.0)
    )
    axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    return SampleInput((x, sorted(axes), weights, draw(st.booleans())), grad_argnums=(0, 2))


def _weighted_moments_ref(x, axes, frequency_weights, keepdims=False):
    xf, wf = x.astype(np.float64), np.broadcast_to(frequency_weights, x.shape).astype(np.float64)
    mean = np.average(xf, tuple(axes), wf, keepdims=True)
    variance = np.average((xf - mean) ** 2, tuple(axes), wf, keepdims=keepdims)
    return (mean if keepdims else np.squeeze(mean, tuple(axes))).astype(x.dtype), variance.astype(x.dtype)


def _fbn_errors():
    return (
        ErrorInput(
            (np.ones((2, 3)), np.ones(3), np.zeros(3)), exc=ValueError, match=r"^FusedBatchNormV3: x must be 4-D NHWC"
        ),
        ErrorInput(
            (np.ones((1, 2, 2, 3)), np.ones(4), np.zeros(3)),
            exc=ValueError,
            match=r"^FusedBatchNormV3: scale must have shape \(3,\)",
        ),
    )


# ---------------------------------------------------------------- the catalogue
OPINFOS = [
    OpInfo(
        "nn.conv2d",
        tl.nn.conv2d,
        _conv2d_ref,
        _conv2d_draw,
        op_types=("Conv2D",),
        dtypes=WITH_HALF,
        error_inputs=_conv_errors(),
    ),
    OpInfo(
        "nn.conv2d_backprop_input",
        tl.nn.conv2d_backprop_input,
        _backprop_input_ref,
        _backprop_input_draw,
        op_types=("Conv2DBackpropInput",),
        dtypes=WITH_HALF,
    ),
    OpInfo(
        "nn.conv2d_backprop_filter",
        tl.nn.conv2d_backprop_filter,
        _backprop_filter_ref,
        _backprop_filter_draw,
        op_types=("Conv2DBackpropFilter",),
        dtypes=WITH_HALF,
    ),
    OpInfo(
        "nn.conv2d_transpose",
        tl.nn.conv2d_transpose,
        _conv2d_transpose_ref,
        _conv2d_transpose_draw,
        op_types=("Conv2DBackpropInput",),
    ),
    OpInfo(
        "nn.conv1d",
        tl.nn.conv1d,
        _conv1d_ref,
        _conv1d_draw,
        op_types=("Conv2D", "ExpandDims", "Squeeze"),
        dtypes=WITH_HALF,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 5, 3)), np.ones((2, 2, 4)), 1, "VALID"),
                exc=ValueError,
                match=r"^conv1d: input channels 3 do not match filter in_channels 2",
            ),
            ErrorInput(
                (np.ones((5, 3)), np.ones((2, 3, 4)), 1, "VALID"),
                exc=ValueError,
                match=r"^conv1d: input must be 3-D NWC",
            ),
        ),
    ),
    OpInfo(
        "nn.depthwise_conv2d",
        tl.nn.depthwise_conv2d,
        _depthwise_ref,
        _depthwise_draw,
        op_types=("StridedSlice", "Mul", "Add", "Reshape", "PadV2", "ExpandDims"),
        dtypes=WITH_HALF,
        error_inputs=(
            ErrorInput(
                (np.ones((1, 4, 4, 3)), np.ones((2, 2, 2, 1)), 1, "SAME"),
                exc=ValueError,
                match=r"^depthwise_conv2d: input depth 3 does not match filter in_channels 2",
            ),
        ),
    ),
    OpInfo(
        "nn.avg_pool",
        tl.nn.avg_pool,
        lambda x, k, s, p: _pool_ref(x, k, s, p, "avg"),
        _pool_draw("avg"),
        op_types=("AvgPool",),
        dtypes=WITH_HALF,
        error_inputs=_pool_errors("AvgPool"),
    ),
    OpInfo(
        "nn.max_pool",
        tl.nn.max_pool,
        lambda x, k, s, p: _pool_ref(x, k, s, p, "max"),
        _pool_draw("max"),
        op_types=("MaxPool",),
        dtypes=WITH_HALF,
        kinks=True,
        error_inputs=_pool_errors("MaxPool"),
    ),
    OpInfo(
        "nn.conv3d",
        tl.nn.conv3d,
        _conv3d_ref,
        _conv3d_draw,
        op_types=("StridedSlice", "Reshape", "Conv2D"),
        error_inputs=(
            ErrorInput(
                (np.ones((1, 3, 3, 3, 2)), np.ones((2, 2, 2, 3, 1)), 1, "VALID"),
                exc=ValueError,
                match=r"^conv3d: input channels 2 do not match filter in_channels 3",
            ),
            ErrorInput(
                (np.ones((3, 3, 3, 2)), np.ones((2, 2, 2, 2, 1)), 1, "VALID"),
                exc=ValueError,
                match=r"^conv3d: input must be 5-D NDHWC",
            ),
        ),
    ),
    OpInfo(
        "nn.max_pool3d",
        tl.nn.max_pool3d,
        lambda x, k, s, p: _pool3d_ref(x, k, s, p, "max"),
        _pool3d_draw("max"),
        op_types=("Reshape", "MaxPool"),
        kinks=True,
        error_inputs=(
            ErrorInput((np.ones((3, 3, 3, 1)), 2, 1, "VALID"), exc=ValueError, match=r"^max_pool3d: input must be 5-D"),
        ),
    ),
    OpInfo(
        "nn.avg_pool3d",
        tl.nn.avg_pool3d,
        lambda x, k, s, p: _pool3d_ref(x, k, s, p, "avg"),
        _pool3d_draw("avg"),
        op_types=("Reshape", "AvgPool"),
        error_inputs=(
            ErrorInput(
                (np.ones((1, 3, 3, 3, 1)), 2, 1, ((0, 0),) * 3),
                exc=ValueError,
                match=r"^avg_pool3d: padding must be 'VALID' or 'SAME'",
            ),
        ),
    ),
    OpInfo("AvgPoolGrad", _avg_pool_grad, _avg_pool_grad_ref, _avg_pool_grad_draw, op_types=("AvgPoolGrad",)),
    OpInfo("MaxPoolGrad", _max_pool_grad, _max_pool_grad_ref, _max_pool_grad_draw(False), op_types=("MaxPoolGrad",)),
    OpInfo(
        "MaxPoolGradGrad",
        _max_pool_grad_grad,
        _max_pool_grad_grad_ref,
        _max_pool_grad_draw(True),
        op_types=("MaxPoolGradGrad",),
    ),
    OpInfo(
        "nn.relu",
        tl.nn.relu,
        _f64(lambda x: np.maximum(x, 0)),
        _unary_draw(away_from=0.0),
        op_types=("Relu",),
        dtypes=WITH_HALF,
        kinks=True,
    ),
    OpInfo("ReluGrad", _relu_grad, _relu_grad_ref, _relu_grad_draw, op_types=("ReluGrad",), dtypes=WITH_HALF),
    OpInfo(
        "nn.leaky_relu",
        tl.nn.leaky_relu,
        _f64(lambda x, alpha=0.2: np.where(x > 0, x, alpha * x)),
        _unary_draw(away_from=0.0),
        op_types=("LeakyRelu",),
        dtypes=WITH_HALF,
        kinks=True,
    ),
    OpInfo(
        "nn.elu",
        tl.nn.elu,
        _f64(lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
        _unary_draw(away_from=0.0),
        op_types=("Elu",),
        dtypes=WITH_HALF,
        kinks=True,
    ),
    OpInfo("nn.gelu", tl.nn.gelu, _f64(_gelu_ref), _unary_draw(), op_types=("Gelu", "Erf"), dtypes=WITH_HALF),
    OpInfo(
        "nn.gelu_tanh",
        lambda x: tl.nn.gelu(x, approximate=True),
        _f64(lambda x: _gelu_ref(x, True)),
        _unary_draw(),
        op_types=("Gelu",),
        dtypes=WITH_HALF,
    ),
    OpInfo("nn.erf", tl.nn.erf, _f64(_erf), _unary_draw(), op_types=("Erf",), dtypes=WITH_HALF),
    OpInfo(
        "nn.softplus",
        tl.nn.softplus,
        _f64(lambda x: np.logaddexp(x, 0.0)),
        _unary_draw(-30.0, 30.0),
        op_types=("Softplus",),
        dtypes=WITH_HALF,
    ),
    *_activation_entries(),
    *_normalization_entries(),
    *_adaptive_entries(),
    OpInfo(
        "nn.softmax",
        tl.nn.softmax,
        _f64(lambda x, axis=-1: np.exp(_log_softmax_ref(x, axis))),
        _axis_draw,
        op_types=("Softmax",),
        dtypes=WITH_HALF,
        error_inputs=(
            ErrorInput(
                (np.zeros((2, 3)), 2), exc=ValueError, match=r"^Softmax: axis 2 is out of range for a tensor of rank 2"
            ),
        ),
    ),
    OpInfo(
        "nn.log_softmax",
        tl.nn.log_softmax,
        _f64(_log_softmax_ref),
        _axis_draw,
        op_types=("LogSoftmax",),
        dtypes=WITH_HALF,
    ),
    OpInfo(
        "nn.softmax_cross_entropy_with_logits",
        tl.nn.softmax_cross_entropy_with_logits,
        _cross_entropy_ref,
        _cross_entropy_draw,
        op_types=("SoftmaxCrossEntropyWithLogits", "Softmax", "LogSoftmax"),
        error_inputs=(
            ErrorInput(
                (np.zeros((2, 4)), np.zeros((2, 5))),
                exc=ValueError,
                match=r"^SoftmaxCrossEntropyWithLogits: labels shape \(2, 4\) does not match",
            ),
        ),
    ),
    OpInfo(
        "nn.sparse_softmax_cross_entropy_with_logits",
        tl.nn.sparse_softmax_cross_entropy_with_logits,
        _sparse_cross_entropy_ref,
        _sparse_cross_entropy_draw,
        op_types=("SparseSoftmaxCrossEntropyWithLogits",),
        error_inputs=(
            ErrorInput(
                (np.array([0, 5]), np.zeros((2, 5))),
                exc=ValueError,
                match=r"^SparseSoftmaxCrossEntropyWithLogits: label 5 is out of range \[0, 5\)",
            ),
            ErrorInput(
                (np.array([0.0]), np.zeros((1, 5))),
                exc=TypeError,
                match=r"^SparseSoftmaxCrossEntropyWithLogits: labels must be integer",
            ),
        ),
    ),
    OpInfo(
        "nn.dropout",
        tl.nn.dropout,
        _dropout_ref,
        _dropout_draw,
        op_types=("Dropout",),
        dtypes=WITH_HALF,
        error_inputs=(
            ErrorInput((np.ones(3), 1.0), exc=ValueError, match=r"^Dropout: rate must be in \[0, 1\), got 1.0"),
        ),
    ),
    # Training returns batch statistics without gradient (for running averages): checked forward only here,
    # and y alone with its gradients below.
    OpInfo(
        "nn.fused_batch_norm",
        tl.nn.fused_batch_norm,
        _fused_batch_norm_ref,
        lambda dtype: _fused_batch_norm_draw(dtype, True),
        op_types=("FusedBatchNormV3",),
        differentiable=False,
        error_inputs=_fbn_errors(),
    ),
    OpInfo(
        "nn.fused_batch_norm_y",
        lambda *a, **k: tl.nn.fused_batch_norm(*a, **k)[0],
        lambda *a, **k: _fused_batch_norm_ref(*a, **k)[0],
        lambda dtype: _fused_batch_norm_draw(dtype, True),
        op_types=("FusedBatchNormV3", "FusedBatchNormGradV3"),
        grad_atol=1e-4,
        grad_rtol=1e-3,
    ),
    OpInfo(
        "nn.fused_batch_norm_inference",
        tl.nn.fused_batch_norm,
        _fused_batch_norm_ref,
        lambda dtype: _fused_batch_norm_draw(dtype, False),
        op_types=("FusedBatchNormV3",),
    ),
    OpInfo(
        "FusedBatchNormGradV3",
        _fused_batch_norm_grad,
        _fused_batch_norm_grad_ref,
        _fused_batch_norm_grad_draw,
        op_types=("FusedBatchNormV3", "FusedBatchNormGradV3"),  # the statistics come from the forward op
        atol=1e-4,
        grad_atol=1e-4,
        grad_rtol=1e-3,
    ),
    OpInfo(
        "nn.batch_normalization",
        tl.nn.batch_normalization,
        _batch_normalization_ref,
        _batch_normalization_draw,
        op_types=("Add", "Sqrt", "Div", "Mul", "Sub"),
    ),
    OpInfo(
        "nn.moments",
        tl.nn.moments,
        _moments_ref,
        _moments_draw,
        op_types=("Sum", "Div", "Sub", "Mul"),
        dtypes=WITH_HALF,
    ),
    OpInfo(
        "nn.weighted_moments",
        tl.nn.weighted_moments,
        _weighted_moments_ref,
        _weighted_moments_draw,
        op_types=("Sum", "Mul", "Sub", "Square", "Select"),
        dtypes=WITH_HALF,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), [0], np.ones(2)), exc=ValueError, match=r"^weighted_moments: frequency_weights shape"
            ),
        ),
    ),
]

"""Neural-network ops: conv2d and its two gradient ops, pooling, activations, losses,
batch norm and dropout.

Every op is an OpDef with TensorFlow's op type name and its gradient rules
right below it, written with tensorlib ops, so second-order gradients and
traced backward passes come free.  Convolution, pooling and fused batch norm
run the NumPy kernels of :mod:`tensorlib.backends.numpy_nn` (NHWC images, HWIO
filters); the elementwise ops are generic kernels that run on any backend.

Gradient ops that need the shape of a tensor the gradient does not keep
(``Conv2DBackpropInput``'s ``input_shape``, ``AvgPoolGrad``'s) take it as an
attribute whose batch size may be ``None``: the kernel reads the batch from the
incoming gradient, so a function traced with ``TensorSpec((None, 28, 28, 1))``
differentiates for every batch size.  Height, width and channels must be known.
"""
from __future__ import annotations

import functools
import math as _math
import weakref

import numpy as np

from .. import dtypes as _dt
from ..backends import numpy_nn as _kernels
from ..dispatch import apply
from ..grad.custom import stop_gradient
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import math as m
from . import random as _random
from . import reduce as r
from . import shape as s
from ._shapes import normalize_axis
from .registry import defop, spec

_NHW = (0, 1, 2)  # the axes batch norm reduces over in NHWC


# ------------------------------------------------------------------ attribute and shape helpers
def _window_pair(value, what: str, op_name: str) -> tuple:
    """An int, a (rows, cols) pair or TensorFlow's ``[1, rows, cols, 1]`` -> ``(rows, cols)``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        pair = (int(value), int(value))
    else:
        try:
            items = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            items = ()
        if len(items) == 2:
            pair = items
        elif len(items) == 4 and items[0] == 1 and items[3] == 1:
            pair = items[1:3]
        else:
            raise ValueError(f"{op_name}: {what} must be an int, a (rows, cols) pair or [1, rows, cols, 1], "
                             f"got {value!r}")
    if min(pair) < 1:
        raise ValueError(f"{op_name}: {what} must be >= 1, got {value!r}")
    return pair


def _padding_attr(padding, op_name: str, explicit: bool = True):
    """``"VALID"``, ``"SAME"`` or explicit ``((top, bottom), (left, right))`` (TF's 4-pair form too)."""
    if isinstance(padding, str):
        if padding.upper() in ("VALID", "SAME"):
            return padding.upper()
    elif explicit:
        try:
            pairs = tuple(tuple(int(v) for v in pair) for pair in padding)
        except (TypeError, ValueError):
            pairs = ()
        if len(pairs) == 4 and pairs[0] == (0, 0) and pairs[3] == (0, 0):
            pairs = pairs[1:3]
        if len(pairs) == 2 and all(len(p) == 2 and min(p) >= 0 for p in pairs):
            return pairs
    form = "'VALID', 'SAME' or ((top, bottom), (left, right))" if explicit else "'VALID' or 'SAME'"
    raise ValueError(f"{op_name}: padding must be {form}, got {padding!r}")


@functools.lru_cache(maxsize=4096)
def _geometry(in_hw, window_hw, strides, dilations, padding):
    """((out_h, out_w), ((top, bottom), (left, right))): cached, the kernels ask on every call."""
    return _kernels.resolve_conv_padding(in_hw, window_hw, strides, dilations, padding)


def _output_hw(in_hw, window_hw, strides, dilations, padding) -> tuple:
    """Output height and width; ``None`` where the input size is unknown (tracing)."""
    if None not in in_hw and None not in window_hw:
        return _geometry(tuple(in_hw), tuple(window_hw), strides, dilations, padding)[0]
    return tuple(None if in_hw[d] is None or window_hw[d] is None else
                 _kernels.conv_output_size_and_padding(in_hw[d], window_hw[d], strides[d], dilations[d],
                                                       padding if isinstance(padding, str) else padding[d])[0]
                 for d in range(2))


def _check_float(what: str, t) -> None:
    if t.dtype.kind != "f":
        raise TypeError(f"{what} must be a floating-point tensor, got {t.dtype}")


def _check_rank4(what: str, shape, layout: str) -> None:
    if len(shape) != 4:
        raise ValueError(f"{what} must be 4-D {layout}, got shape {tuple(shape)}")


def _check_conv_operands(input_shape, filter_shape) -> None:
    _check_rank4("input", input_shape, "NHWC (batch, height, width, channels)")
    _check_rank4("filter", filter_shape, "HWIO (height, width, in_channels, out_channels)")
    if None not in (input_shape[3], filter_shape[2]) and input_shape[3] != filter_shape[2]:
        raise ValueError(f"input depth {input_shape[3]} does not match filter in_channels {filter_shape[2]} "
                         f"(input shape {tuple(input_shape)}, filter shape {tuple(filter_shape)})")


def _check_known_shape(what: str, shape, first: int) -> tuple:
    shape = tuple(shape)
    if len(shape) != 4 or None in shape[first:]:
        known = "height, width and channels" if first else "all four dimensions"
        raise ValueError(f"{what} must be 4-D with known {known}, got {shape}")
    return shape


def _check_matches(what: str, shape, expected) -> None:
    if len(shape) != len(expected) or any(a is not None and b is not None and a != b
                                          for a, b in zip(shape, expected)):
        raise ValueError(f"{what} shape {tuple(shape)} does not match the expected {tuple(expected)}")


def _batch(shape_attr, like) -> tuple:
    """``shape_attr`` with an unknown batch size taken from ``like``'s first dimension."""
    return shape_attr if shape_attr[0] is not None else (like[0], *shape_attr[1:])


def _delegates_to(adapter, kernel):
    """Mark ``adapter`` (resolves padding, then calls ``kernel``) so that ``kernel_source`` names ``kernel``."""
    adapter.__wrapped__ = kernel
    return adapter


def _conv_attrs(op) -> dict:
    a = op.attrs
    return {"strides": a["strides"], "padding": a["padding"], "dilations": a["dilations"]}


def _pool_attrs(op) -> dict:
    a = op.attrs
    return {"ksize": a["ksize"], "strides": a["strides"], "padding": a["padding"]}


# ------------------------------------------------------------------ Conv2D
_CONV_ATTRS = {"strides": (1, 1), "padding": "VALID", "dilations": (1, 1)}


def _conv2d_infer(input, filters, *, strides, padding, dilations):
    _check_float("input", input)
    _check_conv_operands(input.shape, filters.shape)
    out_hw = _output_hw(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    return spec((input.shape[0], *out_hw, filters.shape[3]), input.dtype)


_conv2d = defop("Conv2D", inputs=("input", "filters"), attrs=_CONV_ATTRS, infer=_conv2d_infer, promote=(0, 1),
                doc="2-D convolution (cross-correlation) of an NHWC input with an HWIO filter.")


@_conv2d.kernel("numpy")
def _conv2d_numpy(input, filters, *, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d(input, filters, strides, dilations, pads)


def _conv2d_strategy(input, filters, *, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_strategy(input.shape, filters.shape, strides, dilations, pads)


_delegates_to(_conv2d_numpy, _kernels.conv2d)
_conv2d.strategy = _conv2d_strategy


def _conv2d_grad_input(op, g):
    return _backprop_input(op.inputs[1], g, input_shape=op.inputs[0].shape, **_conv_attrs(op))


def _conv2d_grad_filters(op, g):
    return _backprop_filter(op.inputs[0], g, filter_shape=op.inputs[1].shape, **_conv_attrs(op))


register_gradient("Conv2D", input=_conv2d_grad_input, filters=_conv2d_grad_filters)


# ------------------------------------------------------------------ Conv2DBackpropInput
def _backprop_input_infer(filters, out_backprop, *, input_shape, strides, padding, dilations):
    _check_float("filters", filters)
    input_shape = _check_known_shape("input_shape", input_shape, first=1)
    _check_conv_operands(input_shape, filters.shape)
    out_hw = _output_hw(input_shape[1:3], filters.shape[:2], strides, dilations, padding)
    _check_matches("out_backprop", out_backprop.shape, (input_shape[0], *out_hw, filters.shape[3]))
    return spec(_batch(input_shape, out_backprop.shape), filters.dtype)


_backprop_input = defop("Conv2DBackpropInput", inputs=("filters", "out_backprop"),
                        attrs={"input_shape": (None, 1, 1, 1), **_CONV_ATTRS}, infer=_backprop_input_infer,
                        promote=(0, 1), doc="Gradient of Conv2D with respect to its input: a transposed conv.")


@_backprop_input.kernel("numpy")
def _backprop_input_numpy(filters, out_backprop, *, input_shape, strides, padding, dilations):
    pads = _geometry(input_shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_backprop_input(_batch(input_shape, out_backprop.shape), filters, out_backprop,
                                          strides, dilations, pads)


def _backprop_input_strategy(filters, out_backprop, *, input_shape, strides, padding, dilations):
    pads = _geometry(input_shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_strategy(input_shape, filters.shape, strides, dilations, pads)


_delegates_to(_backprop_input_numpy, _kernels.conv2d_backprop_input)
_backprop_input.strategy = _backprop_input_strategy


def _backprop_input_grad_filters(op, g):
    return _backprop_filter(g, op.inputs[1], filter_shape=op.inputs[0].shape, **_conv_attrs(op))


def _backprop_input_grad_out_backprop(op, g):
    return _conv2d(g, op.inputs[0], **_conv_attrs(op))


register_gradient("Conv2DBackpropInput", filters=_backprop_input_grad_filters,
                  out_backprop=_backprop_input_grad_out_backprop)


# ------------------------------------------------------------------ Conv2DBackpropFilter
def _backprop_filter_infer(input, out_backprop, *, filter_shape, strides, padding, dilations):
    _check_float("input", input)
    filter_shape = _check_known_shape("filter_shape", filter_shape, first=0)
    _check_conv_operands(input.shape, filter_shape)
    out_hw = _output_hw(input.shape[1:3], filter_shape[:2], strides, dilations, padding)
    _check_matches("out_backprop", out_backprop.shape, (input.shape[0], *out_hw, filter_shape[3]))
    return spec(filter_shape, input.dtype)


_backprop_filter = defop("Conv2DBackpropFilter", inputs=("input", "out_backprop"),
                         attrs={"filter_shape": (1, 1, 1, 1), **_CONV_ATTRS}, infer=_backprop_filter_infer,
                         promote=(0, 1), doc="Gradient of Conv2D with respect to its filter: a contraction.")


@_backprop_filter.kernel("numpy")
def _backprop_filter_numpy(input, out_backprop, *, filter_shape, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], filter_shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_backprop_filter(input, filter_shape, out_backprop, strides, dilations, pads)


def _backprop_filter_strategy(input, out_backprop, *, filter_shape, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], filter_shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_strategy(input.shape, filter_shape, strides, dilations, pads)


_delegates_to(_backprop_filter_numpy, _kernels.conv2d_backprop_filter)
_backprop_filter.strategy = _backprop_filter_strategy


def _backprop_filter_grad_input(op, g):
    return _backprop_input(g, op.inputs[1], input_shape=op.inputs[0].shape, **_conv_attrs(op))


def _backprop_filter_grad_out_backprop(op, g):
    return _conv2d(op.inputs[0], g, **_conv_attrs(op))


register_gradient("Conv2DBackpropFilter", input=_backprop_filter_grad_input,
                  out_backprop=_backprop_filter_grad_out_backprop)


# ------------------------------------------------------------------ AvgPool and AvgPoolGrad
_POOL_ATTRS = {"ksize": (1, 1), "strides": (1, 1), "padding": "VALID"}


def _pool_infer(input, *, ksize, strides, padding):
    _check_float("input", input)
    _check_rank4("input", input.shape, "NHWC (batch, height, width, channels)")
    out_hw = _output_hw(input.shape[1:3], ksize, strides, (1, 1), padding)
    return spec((input.shape[0], *out_hw, input.shape[3]), input.dtype)


def _pool_pads(in_hw, ksize, strides, padding):
    return _geometry(in_hw, ksize, strides, (1, 1), padding)[1]


_avg_pool = defop("AvgPool", inputs=("input",), attrs=_POOL_ATTRS, infer=_pool_infer,
                  doc="Average pooling over (height, width); SAME windows average only their real cells.")


@_avg_pool.kernel("numpy")
def _avg_pool_numpy(input, *, ksize, strides, padding):
    return _kernels.avg_pool(input, ksize, strides, _pool_pads(input.shape[1:3], ksize, strides, padding))


_delegates_to(_avg_pool_numpy, _kernels.avg_pool)
register_gradient("AvgPool", lambda op, g: _avg_pool_grad(g, input_shape=op.inputs[0].shape, **_pool_attrs(op)))


def _avg_pool_grad_infer(grad, *, input_shape, ksize, strides, padding):
    _check_float("grad", grad)
    input_shape = _check_known_shape("input_shape", input_shape, first=1)
    out_hw = _output_hw(input_shape[1:3], ksize, strides, (1, 1), padding)
    _check_matches("grad", grad.shape, (input_shape[0], *out_hw, input_shape[3]))
    return spec(_batch(input_shape, grad.shape), grad.dtype)


_avg_pool_grad = defop("AvgPoolGrad", inputs=("grad",), attrs={"input_shape": (None, 1, 1, 1), **_POOL_ATTRS},
                       infer=_avg_pool_grad_infer, doc="Gradient of AvgPool: each window's share spread back.")


@_avg_pool_grad.kernel("numpy")
def _avg_pool_grad_numpy(grad, *, input_shape, ksize, strides, padding):
    pads = _pool_pads(input_shape[1:3], ksize, strides, padding)
    return _kernels.avg_pool_grad(_batch(input_shape, grad.shape), grad, ksize, strides, pads)


_delegates_to(_avg_pool_grad_numpy, _kernels.avg_pool_grad)
register_gradient("AvgPoolGrad", lambda op, g: _avg_pool(g, **_pool_attrs(op)))  # linear: its transpose


# ------------------------------------------------------------------ MaxPool, MaxPoolGrad, MaxPoolGradGrad
_max_pool = defop("MaxPool", inputs=("input",), attrs=_POOL_ATTRS, infer=_pool_infer,
                  doc="Max pooling over (height, width); the gradient goes to each window's first maximum.")


@_max_pool.kernel("numpy")
def _max_pool_numpy(input, *, ksize, strides, padding):
    return _kernels.max_pool(input, ksize, strides, _pool_pads(input.shape[1:3], ksize, strides, padding))


_delegates_to(_max_pool_numpy, _kernels.max_pool)
register_gradient("MaxPool", lambda op, g: _max_pool_grad(op.inputs[0], op.outputs[0], g, **_pool_attrs(op)))


def _max_pool_grad_infer(orig_input, orig_output, grad, *, ksize, strides, padding):
    pooled = _pool_infer(orig_input, ksize=ksize, strides=strides, padding=padding)
    _check_matches("orig_output", orig_output.shape, pooled.shape)
    _check_matches("grad", grad.shape, pooled.shape)
    return spec(orig_input.shape, grad.dtype)


def _max_pool_grad_grad_infer(orig_input, orig_output, grad, *, ksize, strides, padding):
    pooled = _pool_infer(orig_input, ksize=ksize, strides=strides, padding=padding)
    _check_matches("orig_output", orig_output.shape, pooled.shape)
    _check_matches("grad", grad.shape, orig_input.shape)
    return spec(pooled.shape, grad.dtype)


_max_pool_grad = defop("MaxPoolGrad", inputs=("orig_input", "orig_output", "grad"), attrs=_POOL_ATTRS,
                       infer=_max_pool_grad_infer, promote="all",
                       doc="Gradient of MaxPool: each window's gradient routed to its first maximum.")
_max_pool_grad_grad = defop("MaxPoolGradGrad", inputs=("orig_input", "orig_output", "grad"), attrs=_POOL_ATTRS,
                            infer=_max_pool_grad_grad_infer, promote="all",
                            doc="Gradient of MaxPoolGrad: the input change gathered at each window's maximum.")


@_max_pool_grad.kernel("numpy")
def _max_pool_grad_numpy(orig_input, orig_output, grad, *, ksize, strides, padding):
    pads = _pool_pads(orig_input.shape[1:3], ksize, strides, padding)
    return _kernels.max_pool_grad(orig_input, orig_output, grad, ksize, strides, pads)


@_max_pool_grad_grad.kernel("numpy")
def _max_pool_grad_grad_numpy(orig_input, orig_output, grad, *, ksize, strides, padding):
    pads = _pool_pads(orig_input.shape[1:3], ksize, strides, padding)
    return _kernels.max_pool_grad_grad(orig_input, orig_output, grad, ksize, strides, pads)


_delegates_to(_max_pool_grad_numpy, _kernels.max_pool_grad)
_delegates_to(_max_pool_grad_grad_numpy, _kernels.max_pool_grad_grad)
# Both are linear in ``grad`` and each other's transpose; the routing, a function of the
# original input and output, is piecewise constant: no gradient flows to those two.
register_gradient("MaxPoolGrad", None, None,
                  lambda op, g: _max_pool_grad_grad(op.inputs[0], op.inputs[1], g, **_pool_attrs(op)))
register_gradient("MaxPoolGradGrad", None, None,
                  lambda op, g: _max_pool_grad(op.inputs[0], op.inputs[1], g, **_pool_attrs(op)))


# ------------------------------------------------------------------ Relu and ReluGrad
def _float_features(features, **attrs):
    _check_float("features", features)
    return features


_relu = defop("Relu", inputs=("features",), infer=lambda features: features, doc="max(features, 0).")


@_relu.generic
def _relu_kernel(xp, features):
    return xp.maximum(features, 0)


def _relu_gradient(op, g):
    return _relu_grad(g, op.outputs[0])


register_gradient("Relu", _relu_gradient)

_relu_grad = defop("ReluGrad", inputs=("gradients", "features"), infer=lambda gradients, features: gradients,
                   promote=(0, 1), doc="gradients where features > 0, else 0 (in the gradients' dtype).")


@_relu_grad.generic
def _relu_grad_kernel(xp, gradients, features):
    return gradients * (features > 0)  # a bool mask: multiplying keeps the gradients' dtype


_relu.kernel("numpy")(_kernels.relu)
_relu_grad.kernel("numpy")(_kernels.relu_grad)


# The mask's derivative is zero wherever it is defined: no gradient flows to ``features``.
register_gradient("ReluGrad", lambda op, g: _relu_grad(g, op.inputs[1]), None)


# ------------------------------------------------------------------ LeakyRelu, Elu, Softplus
_leaky_relu = defop("LeakyRelu", inputs=("features",), attrs={"alpha": 0.2}, infer=_float_features,
                    doc="x where x > 0, else alpha * x.")
_leaky_relu.generic(lambda xp, x, *, alpha: xp.where(x > 0, x, x * alpha))
register_gradient("LeakyRelu", lambda op, g: m.where(op.inputs[0] > 0, g, g * op.attrs["alpha"]))

_elu = defop("Elu", inputs=("features",), infer=_float_features, doc="x where x > 0, else exp(x) - 1.")
_elu.generic(lambda xp, x: xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0))))
register_gradient("Elu", lambda op, g: m.where(op.inputs[0] > 0, g, g * (op.outputs[0] + 1.0)))

_softplus = defop("Softplus", inputs=("features",), infer=_float_features,
                  doc="log(1 + exp(x)), without overflow for large |x|.")
_softplus.generic(lambda xp, x: xp.logaddexp(x, 0))
register_gradient("Softplus", lambda op, g: g * m.sigmoid(op.inputs[0]))


# ------------------------------------------------------------------ Erf and Gelu
@functools.cache
def _erf_function():
    """SciPy's erf where SciPy is installed, else the standard library's, elementwise."""
    try:
        from scipy.special import erf
    except ImportError:
        return _erf_by_math
    return erf


def _erf_by_math(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(_math.erf, 1, 1)(x).astype(x.dtype)


def _erf_infer(x):
    _check_float("x", x)
    return x


_erf = defop("Erf", inputs=("x",), infer=_erf_infer, doc="The error function.")


@_erf.kernel("numpy")
def _erf_numpy(x):
    return _erf_function()(x).astype(x.dtype, copy=False)


register_gradient("Erf", lambda op, g: g * (2.0 / _math.sqrt(_math.pi)) * m.exp(-m.square(op.inputs[0])))

_SQRT_2_OVER_PI = _math.sqrt(2.0 / _math.pi)
_GELU_CUBIC = 0.044715


def _gelu_numpy(x, *, approximate):
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x ** 3)))
    return 0.5 * x * (1.0 + _erf_function()(x * (1.0 / _math.sqrt(2.0))))


_gelu = defop("Gelu", inputs=("features",), attrs={"approximate": False}, infer=_float_features,
              doc="x * Phi(x) with Phi the normal CDF (erf form), or its tanh approximation.")
_gelu.kernel("numpy")(_gelu_numpy)


def _gelu_grad(op, g):
    x = op.inputs[0]
    if op.attrs["approximate"]:
        t = m.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        slope = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * x * x)
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * slope)
    cdf = 0.5 * (1.0 + _erf(x * (1.0 / _math.sqrt(2.0))))
    pdf = m.exp(-0.5 * x * x) * (1.0 / _math.sqrt(2.0 * _math.pi))
    return g * (cdf + x * pdf)


register_gradient("Gelu", _gelu_grad)


# ------------------------------------------------------------------ Softmax and LogSoftmax
def _axis_unary(x, *, axis):
    _check_float("logits", x)
    normalize_axis(axis, len(x.shape))
    return x


def _softmax_kernel(xp, x, *, axis):
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    e /= xp.sum(e, axis=axis, keepdims=True)
    return e


def _log_softmax_kernel(xp, x, *, axis):
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    shifted -= xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
    return shifted


_softmax = defop("Softmax", inputs=("logits",), attrs={"axis": -1}, infer=_axis_unary,
                 doc="exp(x) / sum(exp(x)) along axis, with the max subtracted first.")
_softmax.generic(_softmax_kernel)
register_gradient("Softmax", lambda op, g: op.outputs[0] * (
    g - r.sum(g * op.outputs[0], op.attrs["axis"], keepdims=True)))

_log_softmax = defop("LogSoftmax", inputs=("logits",), attrs={"axis": -1}, infer=_axis_unary,
                     doc="x - logsumexp(x) along axis, stable for large logits.")
_log_softmax.generic(_log_softmax_kernel)
register_gradient("LogSoftmax", lambda op, g: g - m.exp(op.outputs[0]) * r.sum(g, op.attrs["axis"], keepdims=True))


# ------------------------------------------------------------------ softmax cross entropy (dense and sparse)
def _cross_entropy_infer(logits, labels, *, axis):
    _check_float("logits", logits)
    if tuple(logits.shape) != tuple(labels.shape):
        _check_matches("labels", labels.shape, logits.shape)
    ax = normalize_axis(axis, len(logits.shape))
    return spec(tuple(d for i, d in enumerate(logits.shape) if i != ax), logits.dtype)


_cross_entropy = defop("SoftmaxCrossEntropyWithLogits", inputs=("logits", "labels"), attrs={"axis": -1},
                       infer=_cross_entropy_infer, promote=(0, 1),
                       doc="-sum(labels * log_softmax(logits)) along axis.")


@_cross_entropy.generic
def _cross_entropy_kernel(xp, logits, labels, *, axis):
    return -xp.sum(labels * _log_softmax_kernel(xp, logits, axis=axis), axis=axis)


def _cross_entropy_grad_logits(op, g):
    logits, labels = op.inputs
    axis = op.attrs["axis"]
    # softmax * sum(labels) - labels: exactly softmax - labels for labels that sum to one.
    return s.expand_dims(g, axis) * (softmax(logits, axis) * r.sum(labels, axis, keepdims=True) - labels)


register_gradient("SoftmaxCrossEntropyWithLogits", _cross_entropy_grad_logits,
                  lambda op, g: -s.expand_dims(g, op.attrs["axis"]) * log_softmax(op.inputs[0], op.attrs["axis"]))


def _sparse_cross_entropy_infer(logits, labels):
    _check_float("logits", logits)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integer class indices, got {labels.dtype}")
    if len(logits.shape) != len(labels.shape) + 1:
        raise ValueError(f"logits must have one more dimension than labels (the classes), got logits shape "
                         f"{tuple(logits.shape)} and labels shape {tuple(labels.shape)}")
    _check_matches("labels", labels.shape, logits.shape[:-1])
    return spec(labels.shape, logits.dtype)


_sparse_cross_entropy = defop("SparseSoftmaxCrossEntropyWithLogits", inputs=("logits", "labels"),
                              infer=_sparse_cross_entropy_infer,
                              doc="-log_softmax(logits)[label] along the last axis, for integer labels.")


@_sparse_cross_entropy.generic
def _sparse_cross_entropy_kernel(xp, logits, labels):
    classes = logits.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        bad = labels[(labels < 0) | (labels >= classes)][0]
        raise ValueError(f"SparseSoftmaxCrossEntropyWithLogits: label {int(bad)} is out of range [0, {classes}) "
                         f"(logits shape {logits.shape})")
    log_probs = _log_softmax_kernel(xp, logits, axis=-1)
    return -xp.take_along_axis(log_probs, labels[..., None].astype(xp.int64), axis=-1)[..., 0]


def _sparse_cross_entropy_grad(op, g):
    logits, labels = op.inputs
    hot = s.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return s.expand_dims(g, -1) * (softmax(logits) - hot)


register_gradient("SparseSoftmaxCrossEntropyWithLogits", _sparse_cross_entropy_grad, None)


# ------------------------------------------------------------------ Dropout
def _dropout_infer(x, *, rate, seed, noise_shape):
    _check_float("x", x)
    if noise_shape is None:
        return x, spec(x.shape, x.dtype)
    if len(noise_shape) != len(x.shape) or any(n not in (1, d) and None not in (n, d)
                                               for n, d in zip(noise_shape, x.shape)):
        raise ValueError(f"noise_shape {noise_shape} does not broadcast to x's shape {tuple(x.shape)}")
    return x, spec(noise_shape, x.dtype)


_dropout = defop("Dropout", inputs=("x",), attrs={"rate": 0.5, "seed": None, "noise_shape": None},
                 infer=_dropout_infer, stateful=True,
                 doc="x * keep / (1 - rate) with keep ~ Bernoulli(1 - rate); outputs (y, scaled mask).")


@_dropout.kernel("numpy")
def _dropout_numpy(x, *, rate, seed, noise_shape):
    rng = _random._gen(seed)._rng  # unseeded draws follow tl.random.seed()
    shape = x.shape if noise_shape is None else tuple(x.shape[i] if d is None else d
                                                       for i, d in enumerate(noise_shape))
    mask = (rng.random(shape, dtype=np.float32) >= rate).astype(x.dtype)
    mask *= x.dtype.type(1.0 / (1.0 - rate))
    return x * mask, mask


register_gradient("Dropout", lambda op, g_y, g_mask: g_y * op.outputs[1])


# ------------------------------------------------------------------ FusedBatchNormV3 and its gradient op
def _shared_by_inputs(compute, consumers):
    """``compute(op, *grads)`` run once for the gradient rules of several inputs of one node.

    Each rule passes its input's name; the result is dropped as soon as every
    input in ``consumers`` took it (or with the node), so it lives no longer
    than the backward pass that needs it.
    """
    cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    def shared(op, consumer, *grads):
        entry = cache.get(op)
        if entry is None or any(a is not b for a, b in zip(entry["grads"], grads)):
            entry = {"grads": grads, "result": compute(op, *grads), "waiting": set(consumers)}
            cache[op] = entry
        entry["waiting"].discard(consumer)
        if not entry["waiting"]:
            del cache[op]
        return entry["result"]
    return shared


def _check_channel_vector(what, t, channels):
    if len(t.shape) != 1 or (None not in (t.shape[0], channels) and t.shape[0] != channels):
        raise ValueError(f"{what} must have shape ({channels},) (one value per channel), got {tuple(t.shape)}")


def _fused_batch_norm_infer(x, scale, offset, mean, variance, *, epsilon, is_training):
    _check_float("x", x)
    _check_float("scale", scale)
    _check_rank4("x", x.shape, "NHWC (batch, height, width, channels)")
    channels = x.shape[3]
    named = (("scale", scale), ("offset", offset)) + (() if is_training else (("mean", mean), ("variance", variance)))
    for what, t in named:
        _check_channel_vector(what, t, channels)
    stat = spec((channels,), scale.dtype)
    return spec(x.shape, x.dtype), stat, stat, stat


_fused_batch_norm = defop(
    "FusedBatchNormV3", inputs=("x", "scale", "offset", "mean", "variance"),
    attrs={"epsilon": 1e-3, "is_training": True}, infer=_fused_batch_norm_infer, promote=(1, 2, 3, 4),
    doc="Batch norm of an NHWC x in one pass: outputs (y, batch_mean, batch_variance, inv_std). In training the "
        "batch variance is Bessel-corrected (for running averages, as in TensorFlow); y uses the biased one.")


@_fused_batch_norm.kernel("numpy")
def _fused_batch_norm_numpy(x, scale, offset, mean, variance, *, epsilon, is_training):
    if is_training:
        y, batch_mean, batch_var, inv_std = _kernels.fused_batch_norm_forward(x, scale, offset, epsilon)
        count = x.size // x.shape[3]
        return y, batch_mean, batch_var * (count / max(count - 1, 1)), inv_std
    inv_std = 1.0 / np.sqrt(variance + scale.dtype.type(epsilon))
    factor = scale * inv_std
    y = x * factor.astype(x.dtype) + (offset - mean * factor).astype(x.dtype)
    return y, mean, variance, inv_std


def _fused_batch_norm_backward(op, g_y, *ignored_stat_grads):
    x, scale = op.inputs[:2]
    return _fused_batch_norm_grad(g_y, x, scale, op.outputs[1], op.outputs[3], epsilon=op.attrs["epsilon"])


_training_grads = _shared_by_inputs(_fused_batch_norm_backward, ("x", "scale", "offset"))


def _inference_inv_std(op):
    return 1.0 / m.sqrt(op.inputs[4] + op.attrs["epsilon"])


def _bn_grad_x(op, g, *_):
    if op.attrs["is_training"]:
        return _training_grads(op, "x", g, *_)[0]
    return g * (op.inputs[1] * _inference_inv_std(op))


def _bn_grad_scale(op, g, *_):
    if op.attrs["is_training"]:
        return _training_grads(op, "scale", g, *_)[1]
    return r.sum(g * (op.inputs[0] - op.inputs[3]), _NHW) * _inference_inv_std(op)


def _bn_grad_offset(op, g, *_):
    return _training_grads(op, "offset", g, *_)[2] if op.attrs["is_training"] else r.sum(g, _NHW)


def _bn_grad_mean(op, g, *_):  # inference only: training ignores the mean and variance inputs
    return None if op.attrs["is_training"] else -r.sum(g, _NHW) * op.inputs[1] * _inference_inv_std(op)


def _bn_grad_variance(op, g, *_):
    if op.attrs["is_training"]:
        return None
    inv_std = _inference_inv_std(op)
    return r.sum(g * (op.inputs[0] - op.inputs[3]), _NHW) * op.inputs[1] * -0.5 * inv_std * inv_std * inv_std


register_gradient("FusedBatchNormV3", _bn_grad_x, _bn_grad_scale, _bn_grad_offset, _bn_grad_mean, _bn_grad_variance)


def _fused_batch_norm_grad_infer(y_backprop, x, scale, batch_mean, inv_std, *, epsilon):
    _check_matches("y_backprop", y_backprop.shape, x.shape)
    stat = spec(scale.shape, scale.dtype)
    return spec(x.shape, x.dtype), stat, stat


_fused_batch_norm_grad = defop(
    "FusedBatchNormGradV3", inputs=("y_backprop", "x", "scale", "batch_mean", "inv_std"), attrs={"epsilon": 1e-3},
    infer=_fused_batch_norm_grad_infer,
    doc="Training-mode batch norm backward in one pass: (x_backprop, scale_backprop, offset_backprop).")


@_fused_batch_norm_grad.kernel("numpy")
def _fused_batch_norm_grad_numpy(y_backprop, x, scale, batch_mean, inv_std, *, epsilon):
    return _kernels.fused_batch_norm_backward(y_backprop, x, scale, batch_mean, inv_std)


_delegates_to(_fused_batch_norm_grad_numpy, _kernels.fused_batch_norm_backward)


def _bn_second_order_terms(op, g_dx, g_dscale, g_doffset):
    """Shared pieces of the gradient of (dx, dscale, doffset) = FusedBatchNormGradV3(dy, x, scale).

    Statistics are recomputed from x with ops (the batch_mean / inv_std inputs are x's statistics),
    so these rules carry x's full dependence and differentiate again correctly.
    """
    dy, x, scale = op.inputs[:3]
    mu = r.mean(x, _NHW)
    inv_std = 1.0 / m.sqrt(r.mean(m.square(x - mu), _NHW) + op.attrs["epsilon"])
    x_hat = (x - mu) * inv_std
    dy_centered = dy - r.mean(dy, _NHW)
    mean_dy_xhat = r.mean(dy * x_hat, _NHW)
    g_centered = g_dx - r.mean(g_dx, _NHW)
    mean_g_xhat = r.mean(g_dx * x_hat, _NHW)
    return dict(scale=scale, inv_std=inv_std, x_hat=x_hat, dy_centered=dy_centered, mean_dy_xhat=mean_dy_xhat,
                g_centered=g_centered, mean_g_xhat=mean_g_xhat, mean_g_dy=r.mean(g_dx * dy_centered, _NHW),
                g_dscale=g_dscale, g_doffset=g_doffset)


_second_order_terms = _shared_by_inputs(_bn_second_order_terms, ("y_backprop", "x", "scale"))


def _bn_grad_grad_y_backprop(op, *grads):
    t = _second_order_terms(op, "y_backprop", *grads)
    projected = t["g_centered"] - t["x_hat"] * t["mean_g_xhat"]
    return t["scale"] * t["inv_std"] * projected + t["x_hat"] * t["g_dscale"] + t["g_doffset"]


def _bn_grad_grad_x(op, *grads):
    t = _second_order_terms(op, "x", *grads)
    a, b = t["mean_g_xhat"], t["mean_dy_xhat"]
    from_dx = t["x_hat"] * (3.0 * a * b - t["mean_g_dy"]) - b * t["g_centered"] - a * t["dy_centered"]
    from_dscale = t["dy_centered"] - t["x_hat"] * b
    return t["scale"] * t["inv_std"] * t["inv_std"] * from_dx + t["g_dscale"] * t["inv_std"] * from_dscale


def _bn_grad_grad_scale(op, *grads):
    t = _second_order_terms(op, "scale", *grads)
    g_dx = grads[0]
    return r.sum(g_dx * (t["dy_centered"] - t["x_hat"] * t["mean_dy_xhat"]), _NHW) * t["inv_std"]


# batch_mean and inv_std are x's statistics; the x rule accounts for them, so nothing flows to them.
register_gradient("FusedBatchNormGradV3", _bn_grad_grad_y_backprop, _bn_grad_grad_x, _bn_grad_grad_scale,
                  None, None)


# ------------------------------------------------------------------ public functions
def _op_type(name, tensors=None):
    """Name the op type a public function dispatches (for ``tl.ops.explain``) and its tensor parameters."""
    def mark(fn):
        fn.op_type = name
        fn.tensor_params = tensors if tensors is not None else _ops_input_names(name)
        return fn
    return mark


def _ops_input_names(name):
    from .registry import get
    return get(name).input_names


@_op_type("Conv2D")
def conv2d(input, filters, strides, padding, dilations=1) -> Tensor:
    """2-D convolution of an NHWC ``input`` with an HWIO ``filters`` tensor (TensorFlow's ``tf.nn.conv2d``).

    ``strides`` and ``dilations`` are an int, a (rows, cols) pair or ``[1, rows, cols, 1]``;
    ``padding`` is ``"VALID"``, ``"SAME"`` (TensorFlow's rule) or ``((top, bottom), (left, right))``.

    >>> import numpy as np, tensorlib as tl
    >>> x = tl.tensor(np.arange(16.0).reshape(1, 4, 4, 1))
    >>> tl.nn.conv2d(x, np.ones((2, 2, 1, 1)), strides=2, padding="VALID").numpy()[0, :, :, 0]
    array([[10., 18.],
           [42., 50.]])
    """
    return apply(_conv2d, (input, filters), {"strides": _window_pair(strides, "strides", "Conv2D"),
                                              "padding": _padding_attr(padding, "Conv2D"),
                                              "dilations": _window_pair(dilations, "dilations", "Conv2D")})


def _shape_tuple(shape, what, op_name) -> tuple:
    if isinstance(shape, Tensor) and shape.dtype.kind in "iu" and shape._value is not None:
        shape = shape.numpy().tolist()
    try:
        return tuple(None if d is None else int(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{op_name}: {what} must be a sequence of 4 ints, got {shape!r}") from None


@_op_type("Conv2DBackpropInput")
def conv2d_backprop_input(input_shape, filters, out_backprop, strides, padding, dilations=1) -> Tensor:
    """The gradient of :func:`conv2d` with respect to its input, for an input of ``input_shape``.

    ``input_shape`` may have ``None`` as its batch size (then ``out_backprop``'s is used).

    >>> import numpy as np, tensorlib as tl
    >>> dy = np.ones((1, 2, 2, 1))
    >>> tl.nn.conv2d_backprop_input((1, 3, 3, 1), np.ones((2, 2, 1, 1)), dy, 1, "VALID").numpy()[0, :, :, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    name = "Conv2DBackpropInput"
    return apply(_backprop_input, (filters, out_backprop), {
        "input_shape": _shape_tuple(input_shape, "input_shape", name),
        "strides": _window_pair(strides, "strides", name), "padding": _padding_attr(padding, name),
        "dilations": _window_pair(dilations, "dilations", name)})


@_op_type("Conv2DBackpropFilter")
def conv2d_backprop_filter(input, filter_shape, out_backprop, strides, padding, dilations=1) -> Tensor:
    """The gradient of :func:`conv2d` with respect to a filter of ``filter_shape``.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.arange(9.0).reshape(1, 3, 3, 1)
    >>> tl.nn.conv2d_backprop_filter(x, (2, 2, 1, 1), np.ones((1, 2, 2, 1)), 1, "VALID").numpy()[:, :, 0, 0]
    array([[ 8., 12.],
           [20., 24.]])
    """
    name = "Conv2DBackpropFilter"
    return apply(_backprop_filter, (input, out_backprop), {
        "filter_shape": _shape_tuple(filter_shape, "filter_shape", name),
        "strides": _window_pair(strides, "strides", name), "padding": _padding_attr(padding, name),
        "dilations": _window_pair(dilations, "dilations", name)})


@_op_type("Conv2DBackpropInput", tensors=("input", "filters"))
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", dilations=1) -> Tensor:
    """Transposed ("de-") convolution: the gradient of a conv2d that maps ``output_shape`` to ``input``'s shape.

    ``filters`` is ``(height, width, output_channels, input_channels)``, as in TensorFlow.

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.nn.conv2d_transpose(np.ones((1, 2, 2, 1)), np.ones((3, 3, 1, 1)), (1, 4, 4, 1), 2, "SAME")
    >>> y.shape
    (1, 4, 4, 1)
    """
    return conv2d_backprop_input(output_shape, filters, input, strides, padding, dilations)


def _pool(op, input, ksize, strides, padding):
    name = op.name
    return apply(op, (input,), {"ksize": _window_pair(ksize, "ksize", name),
                                "strides": _window_pair(strides, "strides", name),
                                "padding": _padding_attr(padding, name, explicit=False)})


@_op_type("AvgPool")
def avg_pool(input, ksize, strides, padding) -> Tensor:
    """Average pooling of an NHWC tensor; with ``"SAME"`` each window averages only its real cells.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.avg_pool(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "VALID").numpy()[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    return _pool(_avg_pool, input, ksize, strides, padding)


@_op_type("MaxPool")
def max_pool(input, ksize, strides, padding) -> Tensor:
    """Max pooling of an NHWC tensor (padding cells never win).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.max_pool(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "VALID").numpy()[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    return _pool(_max_pool, input, ksize, strides, padding)


@_op_type("Relu")
def relu(features) -> Tensor:
    """max(features, 0); its gradient is the incoming gradient where features > 0.

    >>> import tensorlib as tl
    >>> tl.nn.relu(tl.tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """
    return apply(_relu, (features,))


@_op_type("LeakyRelu")
def leaky_relu(features, alpha: float = 0.2) -> Tensor:
    """features where positive, else ``alpha * features``.

    >>> import tensorlib as tl
    >>> tl.nn.leaky_relu(tl.tensor([-1.0, 2.0])).numpy().tolist()
    [-0.2, 2.0]
    """
    return apply(_leaky_relu, (features,), {"alpha": float(alpha)})


@_op_type("Elu")
def elu(features) -> Tensor:
    """features where positive, else ``exp(features) - 1``.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.elu(tl.tensor(-1.0))), 4)
    -0.6321
    """
    return apply(_elu, (features,))


@_op_type("Gelu")
def gelu(features, approximate: bool = False) -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate=True`` uses the tanh form.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.gelu(tl.tensor(1.0))), 4), round(float(tl.nn.gelu(tl.tensor(1.0), approximate=True)), 4)
    (0.8413, 0.8412)
    """
    return apply(_gelu, (features,), {"approximate": bool(approximate)})


@_op_type("Softplus")
def softplus(features) -> Tensor:
    """log(1 + exp(features)), exact for large positive and negative inputs.

    >>> import tensorlib as tl
    >>> tl.nn.softplus(tl.tensor([-1000.0, 1000.0])).numpy().tolist()
    [0.0, 1000.0]
    """
    return apply(_softplus, (features,))


@_op_type("Erf")
def erf(x) -> Tensor:
    """The error function ``2 / sqrt(pi) * integral from 0 to x of exp(-t**2)``.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.erf(tl.tensor(1.0))), 4)
    0.8427
    """
    return apply(_erf, (x,))


@_op_type("Softmax")
def softmax(logits, axis: int = -1) -> Tensor:
    """exp(logits) normalised to sum to one along ``axis``.

    >>> import tensorlib as tl
    >>> tl.nn.softmax(tl.tensor([0.0, 0.0])).numpy().tolist()
    [0.5, 0.5]
    """
    return apply(_softmax, (logits,), {"axis": int(axis)})


@_op_type("LogSoftmax")
def log_softmax(logits, axis: int = -1) -> Tensor:
    """logits - logsumexp(logits) along ``axis``, finite for logits of any size.

    >>> import tensorlib as tl
    >>> tl.nn.log_softmax(tl.tensor([1e4, 0.0])).numpy().tolist()
    [0.0, -10000.0]
    """
    return apply(_log_softmax, (logits,), {"axis": int(axis)})


@_op_type("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(labels, logits, axis: int = -1) -> Tensor:
    """Cross entropy between ``labels`` (a distribution per row) and ``softmax(logits)``.

    The gradient with respect to ``logits`` is ``softmax(logits) - labels``.

    >>> import tensorlib as tl
    >>> loss = tl.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=[[1e4, 0.0]])
    >>> loss.numpy().tolist()
    [10000.0]
    """
    return apply(_cross_entropy, (logits, labels), {"axis": int(axis)})


@_op_type("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(labels, logits) -> Tensor:
    """Cross entropy for integer class ``labels`` against ``logits`` of shape ``labels.shape + (classes,)``.

    >>> import numpy as np, tensorlib as tl
    >>> loss = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([1]), logits=[[0.0, 0.0]])
    >>> round(float(loss[0]), 4)
    0.6931
    """
    return apply(_sparse_cross_entropy, (logits, labels))


@_op_type("Dropout")
def dropout(x, rate: float, seed: int | None = None, noise_shape=None) -> Tensor:
    """Zero each element with probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    The same ``seed`` gives the same mask; ``noise_shape`` (broadcastable to
    ``x``'s shape, ``None`` entries meaning x's size) shares one draw along its
    size-1 axes.  ``rate=0`` returns ``x`` itself.

    >>> import tensorlib as tl
    >>> y = tl.nn.dropout(tl.ones((2, 4)), rate=0.5, seed=1)
    >>> sorted(set(y.numpy().ravel().tolist())) == [0.0, 2.0]
    True
    """
    rate = float(rate)
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
    if rate == 0.0:
        return x
    if noise_shape is not None:
        noise_shape = _shape_tuple(noise_shape, "noise_shape", "Dropout")
        shape = getattr(x, "shape", None)
        if shape is not None and len(shape) == len(noise_shape):
            noise_shape = tuple(shape[i] if d is None else d for i, d in enumerate(noise_shape))
    return apply(_dropout, (x,), {"rate": rate, "seed": None if seed is None else int(seed),
                                  "noise_shape": noise_shape})[0]


@_op_type(None, tensors=("x",))
def moments(x, axes, keepdims: bool = False) -> tuple:
    """Mean and (biased) variance of ``x`` over ``axes``; float16 is computed in float32.

    >>> import tensorlib as tl
    >>> mean, variance = tl.nn.moments(tl.tensor([[1.0, 3.0], [5.0, 7.0]]), axes=[0])
    >>> mean.numpy().tolist(), variance.numpy().tolist()
    ([3.0, 5.0], [4.0, 4.0])
    """
    from .creation import tensor
    x = x if isinstance(x, Tensor) else tensor(x)
    axes = (int(axes),) if isinstance(axes, (int, np.integer)) else tuple(int(a) for a in axes)
    wide = m.cast(x, _dt.float32) if x.dtype == _dt.float16 else x
    mean = r.mean(wide, axes, keepdims=True)
    variance = r.mean(m.square(wide - mean), axes, keepdims=keepdims)
    if not keepdims:
        mean = s.squeeze(mean, axes)
    if wide is not x:
        mean, variance = m.cast(mean, x.dtype), m.cast(variance, x.dtype)
    return mean, variance


@_op_type(None, tensors=("x", "mean", "variance", "offset", "scale"))
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon: float) -> Tensor:
    """``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset`` for any rank (broadcasting).

    The caller supplies the statistics (e.g. from :func:`moments`, or running
    averages); ``offset`` and ``scale`` may be None.  Built from ops, so every
    argument gets a gradient.

    >>> import tensorlib as tl
    >>> y = tl.nn.batch_normalization(tl.tensor([1.0, 3.0]), 2.0, 1.0, None, None, 0.0)
    >>> y.numpy().tolist()
    [-1.0, 1.0]
    """
    inv = 1.0 / m.sqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift


@_op_type("FusedBatchNormV3")
def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon: float = 1e-3,
                     is_training: bool = True) -> tuple:
    """Batch norm of a 4-D NHWC ``x`` as one op: returns ``(y, batch_mean, batch_variance)``.

    Training (``is_training=True``) normalises with the batch's statistics over
    (N, H, W) and returns them for running averages: the variance
    Bessel-corrected, as TensorFlow does, and both without gradient (as in
    TensorFlow; use :func:`moments` for statistics you differentiate).
    Inference normalises with the given ``mean`` and ``variance`` and returns them.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    >>> y, mean, var = tl.nn.fused_batch_norm(x, np.ones(1), np.zeros(1), epsilon=0.0)
    >>> y.numpy().ravel().tolist(), mean.numpy().tolist(), var.numpy().tolist()
    ([-1.0, 1.0], [2.0], [2.0])
    """
    if is_training:
        dtype = scale.dtype if hasattr(scale, "dtype") else _dt.float32
        empty = np.empty((0,), dtype)
        y, batch_mean, batch_var, _ = apply(_fused_batch_norm, (
            x, scale, offset, empty if mean is None else mean, empty if variance is None else variance),
            {"epsilon": float(epsilon), "is_training": True})
        return y, stop_gradient(batch_mean), stop_gradient(batch_var)
    if mean is None or variance is None:
        raise ValueError("FusedBatchNormV3: inference (is_training=False) needs the mean and variance to use")
    y = apply(_fused_batch_norm, (x, scale, offset, mean, variance),
              {"epsilon": float(epsilon), "is_training": False})[0]
    return y, mean, variance

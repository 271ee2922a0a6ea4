"""The optimizer's fusions of a conv layer's gradients, as ops of their own (oneDNN's and TensorFlow's
"backprop filter with bias").

``Conv2DBackpropFilterWithBias(input, out_backprop)``: ``(Conv2DBackpropFilter(input, out_backprop),
Sum(out_backprop, axis=(0, 1, 2)))``, the filter and bias gradients of ``conv2d(input, w) + bias``.

``Conv2DBackprop(input, filters, out_backprop)``: ``(Conv2DBackpropInput(filters, out_backprop),
Conv2DBackpropFilter(input, out_backprop), Sum(out_backprop, axis=(0, 1, 2)))``, all three gradients; with
``relu_grad=True`` the first is passed back through a ReLU whose output is ``input``:
``ReluGrad(Conv2DBackpropInput(...), input)``, as the previous layer's gradient reads it.

Their NumPy kernels (:mod:`tensorlib.backends.numpy_nn.fused_grad`) read the output gradient fewer
times than the unfused ops, and agree with them to rounding; elsewhere the kernel is the unfused
kernels in a row.  Both ops are linear in each input, so their gradient rules are the unfused ops'
rules added up, written with tensorlib ops: higher orders and traced backward passes come free.
"""

from __future__ import annotations

from ...backends.numpy_nn import fused_grad as _kernels
from ...dispatch import apply
from ...grad.registry import register_gradient
from ..registry import defop, get, spec
from ._common import (
    _check_conv_operands,
    _check_float,
    _check_matches,
    _delegates_to,
    _geometry,
    _op_type,
    _output_hw,
    _padding_attr,
    _shape_tuple,
    _window_pair,
)
from .activations import _relu_grad
from .conv import _CONV_ATTRS, _backprop_filter, _backprop_filter_infer, _backprop_input, _conv2d, _conv_attrs

_NHW = (0, 1, 2)  # the bias gradient sums NHWC over these


def _attrs(name, strides, padding, dilations) -> dict:
    return {
        "strides": _window_pair(strides, "strides", name),
        "padding": _padding_attr(padding, name),
        "dilations": _window_pair(dilations, "dilations", name),
    }


def _bias_grad_generic(backend, out_backprop):
    # The Sum kernel accumulates float16 in float32: the bias gradient keeps out_backprop's dtype.
    total = get("Sum").resolve_kernel(backend)(out_backprop, axis=_NHW, keepdims=False)
    return backend.xp.astype(total, out_backprop.dtype)


# ------------------------------------------------------------------ Conv2DBackpropFilterWithBias
def _filter_with_bias_infer(input, out_backprop, *, filter_shape, strides, padding, dilations):
    dw = _backprop_filter_infer(
        input, out_backprop, filter_shape=filter_shape, strides=strides, padding=padding, dilations=dilations
    )
    return dw, spec((dw.shape[3],), out_backprop.dtype)


_filter_with_bias = defop(
    "Conv2DBackpropFilterWithBias",
    inputs=("input", "out_backprop"),
    attrs={"filter_shape": (1, 1, 1, 1), **_CONV_ATTRS},
    infer=_filter_with_bias_infer,
    promote=(0, 1),
    doc="(Conv2DBackpropFilter(input, out_backprop), the sum of out_backprop over N, H, W): a conv layer's filter "
    "and bias gradients with out_backprop read once (the optimizer's fusion).",
)


@_filter_with_bias.kernel("numpy")
def _filter_with_bias_numpy(input, out_backprop, *, filter_shape, strides, padding, dilations, out=None):
    pads = _geometry(input.shape[1:3], filter_shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_backprop_filter_bias(input, filter_shape, out_backprop, strides, dilations, pads, out=out)


_filter_with_bias.out_kernel("numpy")(_filter_with_bias_numpy)
_delegates_to(_filter_with_bias_numpy, _kernels.conv2d_backprop_filter_bias)


@_filter_with_bias.per_backend
def _filter_with_bias_generic(backend, input, out_backprop, **attrs):
    dw = get("Conv2DBackpropFilter").resolve_kernel(backend)(input, out_backprop, **attrs)
    return dw, _bias_grad_generic(backend, out_backprop)


# Linear in each input: input gets Conv2DBackpropFilter's rule for it; out_backprop that rule's plus the bias
# sum's (the bias gradient's gradient broadcast back over N, H, W).
def _filter_with_bias_grad_input(node, g_dw, g_db):
    return _backprop_input(g_dw, node.inputs[1], input_shape=node.inputs[0].shape, **_conv_attrs(node))


def _filter_with_bias_grad_out_backprop(node, g_dw, g_db):
    return _conv2d(node.inputs[0], g_dw, **_conv_attrs(node)) + g_db


register_gradient(
    "Conv2DBackpropFilterWithBias", input=_filter_with_bias_grad_input, out_backprop=_filter_with_bias_grad_out_backprop
)


@_op_type("Conv2DBackpropFilterWithBias")
def conv2d_backprop_filter_with_bias(input, filter_shape, out_backprop, strides, padding, dilations=1) -> tuple:
    """``(tl.nn.conv2d_backprop_filter(input, filter_shape, out_backprop, ...), the sum of out_backprop over
    N, H, W)``: the filter and bias gradients of ``conv2d(input, w) + bias``, NHWC, in one op.

    >>> import numpy as np
    >>> from tensorlib.ops.nn.fused_grad import conv2d_backprop_filter_with_bias
    >>> dw, db = conv2d_backprop_filter_with_bias(np.arange(9.0).reshape(1, 3, 3, 1), (2, 2, 1, 1),
    ...                                           np.ones((1, 2, 2, 1)), 1, "VALID")
    >>> dw.numpy()[:, :, 0, 0].tolist(), db.numpy().tolist()
    ([[8.0, 12.0], [20.0, 24.0]], [4.0])
    """
    name = "Conv2DBackpropFilterWithBias"
    attrs = {
        "filter_shape": _shape_tuple(filter_shape, "filter_shape", name),
        **_attrs(name, strides, padding, dilations),
    }
    return apply(_filter_with_bias, (input, out_backprop), attrs)


# ------------------------------------------------------------------ Conv2DBackprop
def _backprop_infer(input, filters, out_backprop, *, strides, padding, dilations, relu_grad):
    _check_float("input", input)
    _check_conv_operands(input.shape, filters.shape)
    out_hw = _output_hw(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    _check_matches("out_backprop", out_backprop.shape, (input.shape[0], *out_hw, filters.shape[3]))
    return spec(input.shape, input.dtype), spec(filters.shape, input.dtype), spec((filters.shape[3],), input.dtype)


_backprop = defop(
    "Conv2DBackprop",
    inputs=("input", "filters", "out_backprop"),
    attrs={**_CONV_ATTRS, "relu_grad": False},
    infer=_backprop_infer,
    promote=(0, 1, 2),
    doc="(Conv2DBackpropInput, Conv2DBackpropFilter, the sum over N, H, W) of out_backprop: a conv layer's input, "
    "filter and bias gradients, with the Fourier strategy from one spectrum of out_backprop (the optimizer's fusion); "
    "relu_grad=True: the input gradient is ReluGrad(input gradient, input).",
)


@_backprop.kernel("numpy")
def _backprop_numpy(input, filters, out_backprop, *, strides, padding, dilations, relu_grad, out=None):
    pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_backprop(
        input, filters, out_backprop, strides, dilations, pads, relu_grad=relu_grad, out=out
    )


_backprop.out_kernel("numpy")(_backprop_numpy)
_delegates_to(_backprop_numpy, _kernels.conv2d_backprop)


@_backprop.per_backend
def _backprop_generic(backend, input, filters, out_backprop, *, relu_grad, **attrs):
    dx = get("Conv2DBackpropInput").resolve_kernel(backend)(filters, out_backprop, input_shape=input.shape, **attrs)
    if relu_grad:
        dx = get("ReluGrad").resolve_kernel(backend)(dx, input)
    dw = get("Conv2DBackpropFilter").resolve_kernel(backend)(input, out_backprop, filter_shape=filters.shape, **attrs)
    return dx, dw, _bias_grad_generic(backend, out_backprop)


# Linear in each input: each gets the unfused ops' rules for it, added up.
def _backprop_grad_input(node, g_dx, g_dw, g_db):
    return _backprop_input(g_dw, node.inputs[2], input_shape=node.inputs[0].shape, **_conv_attrs(node))


def _backprop_grad_filters(node, g_dx, g_dw, g_db):
    g_dx = _through_relu_grad(node, g_dx)
    return _backprop_filter(g_dx, node.inputs[2], filter_shape=node.inputs[1].shape, **_conv_attrs(node))


def _through_relu_grad(node, g_dx):
    """The input gradient's output gradient before the op's ReluGrad (whose mask has a zero derivative)."""
    return _relu_grad(g_dx, node.inputs[0]) if node.attrs["relu_grad"] else g_dx


def _backprop_grad_out_backprop(node, g_dx, g_dw, g_db):
    x, w = node.inputs[:2]
    attrs = _conv_attrs(node)
    return _conv2d(_through_relu_grad(node, g_dx), w, **attrs) + _conv2d(x, g_dw, **attrs) + g_db


register_gradient(
    "Conv2DBackprop",
    input=_backprop_grad_input,
    filters=_backprop_grad_filters,
    out_backprop=_backprop_grad_out_backprop,
)


@_op_type("Conv2DBackprop")
def conv2d_backprop(input, filters, out_backprop, strides, padding, dilations=1, relu_grad: bool = False) -> tuple:
    """``(input gradient, filter gradient, bias gradient)`` of ``conv2d(input, filters) + bias`` (NHWC, HWIO) for
    the output gradient ``out_backprop``, in one op: ``tl.nn.conv2d_backprop_input``,
    ``tl.nn.conv2d_backprop_filter`` and the sum of ``out_backprop`` over N, H, W.  With ``relu_grad=True`` the
    input gradient is zero where ``input <= 0``: passed back through the ReLU that made ``input``.

    >>> import numpy as np
    >>> from tensorlib.ops.nn.fused_grad import conv2d_backprop
    >>> dx, dw, db = conv2d_backprop(np.arange(9.0).reshape(1, 3, 3, 1), np.ones((2, 2, 1, 1)),
    ...                              np.ones((1, 2, 2, 1)), 1, "VALID")
    >>> dx.numpy()[0, :, :, 0].tolist(), dw.numpy()[:, :, 0, 0].tolist(), db.numpy().tolist()
    ([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]], [[8.0, 12.0], [20.0, 24.0]], [4.0])
    """
    attrs = {**_attrs("Conv2DBackprop", strides, padding, dilations), "relu_grad": bool(relu_grad)}
    return apply(_backprop, (input, filters, out_backprop), attrs)

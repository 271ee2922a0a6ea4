"""Conv2D and its two gradient ops, Conv2DBackpropInput and Conv2DBackpropFilter, which differentiate
into each other; and conv2d, conv2d_backprop_input, conv2d_backprop_filter, conv2d_transpose."""

from __future__ import annotations

import numpy as np

from ...backends import generic_nn as _generic
from ...backends import numpy_nn as _kernels
from ...dispatch import apply
from ...grad.registry import register_gradient
from ...tensor import Tensor
from ..registry import defop, spec
from ._common import (
    _batch,
    _check_conv_operands,
    _check_float,
    _check_known_shape,
    _check_matches,
    _delegates_to,
    _geometry,
    _is_nchw,
    _nchw_error,
    _nchw_padding,
    _nchw_window,
    _nhwc_shape,
    _op_type,
    _output_hw,
    _padding_attr,
    _shape_tuple,
    _to_nchw,
    _to_nhwc,
    _window_pair,
)


def _nhwc_geometry(strides, padding, dilations) -> tuple:
    """NCHW strides, padding and dilations (TensorFlow's 4-element forms too) as the NHWC ops take them."""
    return _nchw_window(strides, True), _nchw_padding(padding, True), _nchw_window(dilations, True)


def _conv_attrs(node) -> dict:
    a = node.attrs
    return {"strides": a["strides"], "padding": a["padding"], "dilations": a["dilations"]}


# ------------------------------------------------------------------ Conv2D
_CONV_ATTRS = {"strides": (1, 1), "padding": "VALID", "dilations": (1, 1)}


def _conv2d_infer(input, filters, *, strides, padding, dilations):
    _check_float("input", input)
    _check_conv_operands(input.shape, filters.shape)
    out_hw = _output_hw(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    return spec((input.shape[0], *out_hw, filters.shape[3]), input.dtype)


_conv2d = defop(
    "Conv2D",
    inputs=("input", "filters"),
    attrs=_CONV_ATTRS,
    infer=_conv2d_infer,
    promote=(0, 1),
    doc="2-D convolution (cross-correlation) of an NHWC input with an HWIO filter.",
)


@_conv2d.kernel("numpy")
def _conv2d_numpy(input, filters, *, strides, padding, dilations):
    (out_h, out_w), pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    if input.size == 0:  # no images or an empty SAME image: an empty result (the kernels refuse a 0-pixel image)
        return np.zeros((input.shape[0], out_h, out_w, filters.shape[3]), np.result_type(input, filters))
    return _kernels.conv2d(input, filters, strides, dilations, pads)


def _conv2d_strategy(input, filters, *, strides, padding, dilations):
    if 0 in input.shape:  # the kernel's empty result: no algorithm runs
        return ""
    pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_strategy(input.shape, filters.shape, strides, dilations, pads)


_delegates_to(_conv2d_numpy, _kernels.conv2d)


@_conv2d.generic
def _conv2d_generic(xp, input, filters, *, strides, padding, dilations):
    (out_h, out_w), pads = _geometry(input.shape[1:3], filters.shape[:2], strides, dilations, padding)
    if input.size == 0:  # as in the NumPy kernel: strided slices of an empty SAME image are out of bounds
        shape = (input.shape[0], out_h, out_w, filters.shape[3])
        return xp.zeros(shape, dtype=xp.result_type(input.dtype, filters.dtype))
    return _generic.conv2d(xp, input, filters, strides, dilations, pads)


_conv2d_numpy.strategy = _conv2d_strategy  # the algorithm this kernel picks, for tl.profile


def _conv2d_grad_input(node, g):
    return _backprop_input(node.inputs[1], g, input_shape=node.inputs[0].shape, **_conv_attrs(node))


def _conv2d_grad_filters(node, g):
    return _backprop_filter(node.inputs[0], g, filter_shape=node.inputs[1].shape, **_conv_attrs(node))


register_gradient("Conv2D", input=_conv2d_grad_input, filters=_conv2d_grad_filters)


@_op_type("Conv2D")
def conv2d(input, filters, strides, padding, dilations=1, data_format="NHWC") -> Tensor:
    """2-D convolution of an NHWC ``input`` with an HWIO ``filters`` tensor (TensorFlow's ``tf.nn.conv2d``).

    ``strides`` and ``dilations`` are an int, a (rows, cols) pair or ``[1, rows, cols, 1]``;
    ``padding`` is ``"VALID"``, ``"SAME"`` (TensorFlow's rule) or ``((top, bottom), (left, right))``.
    ``data_format="NCHW"`` takes and returns channels-first tensors (PyTorch's layout; the filters
    stay HWIO, and 4-element strides are ``[1, 1, rows, cols]``).

    >>> import numpy as np, tensorlib as tl
    >>> x = tl.tensor(np.arange(16.0).reshape(1, 4, 4, 1))
    >>> tl.nn.conv2d(x, np.ones((2, 2, 1, 1)), strides=2, padding="VALID").numpy()[0, :, :, 0]
    array([[10., 18.],
           [42., 50.]])
    >>> tl.nn.conv2d(np.ones((1, 3, 5, 5)), np.ones((3, 3, 3, 8)), 1, "SAME", data_format="NCHW").shape
    (1, 8, 5, 5)
    """
    if _is_nchw(data_format, "Conv2D"):
        try:
            y = conv2d(
                _to_nhwc(input, "Conv2D"),
                filters,
                *_nhwc_geometry(strides, padding, dilations),
            )
        except (ValueError, TypeError) as e:
            raise _nchw_error(e, input=input) from None
        return _to_nchw(y)
    return apply(
        _conv2d,
        (input, filters),
        {
            "strides": _window_pair(strides, "strides", "Conv2D"),
            "padding": _padding_attr(padding, "Conv2D"),
            "dilations": _window_pair(dilations, "dilations", "Conv2D"),
        },
    )


# ------------------------------------------------------------------ Conv2DBackpropInput
def _backprop_input_infer(filters, out_backprop, *, input_shape, strides, padding, dilations):
    _check_float("filters", filters)
    input_shape = _check_known_shape("input_shape", input_shape, first=1)
    _check_conv_operands(input_shape, filters.shape)
    out_hw = _output_hw(input_shape[1:3], filters.shape[:2], strides, dilations, padding)
    _check_matches("out_backprop", out_backprop.shape, (input_shape[0], *out_hw, filters.shape[3]))
    return spec(_batch(input_shape, out_backprop.shape), filters.dtype)


_backprop_input = defop(
    "Conv2DBackpropInput",
    inputs=("filters", "out_backprop"),
    attrs={"input_shape": (None, 1, 1, 1), **_CONV_ATTRS},
    infer=_backprop_input_infer,
    promote=(0, 1),
    doc="Gradient of Conv2D with respect to its input: a transposed conv.",
)


@_backprop_input.kernel("numpy")
def _backprop_input_numpy(filters, out_backprop, *, input_shape, strides, padding, dilations):
    pads = _geometry(input_shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    if out_backprop.size == 0:  # as in Conv2D: no outputs, a zero gradient
        return np.zeros(_batch(input_shape, out_backprop.shape), np.result_type(filters, out_backprop))
    return _kernels.conv2d_backprop_input(
        _batch(input_shape, out_backprop.shape), filters, out_backprop, strides, dilations, pads
    )


def _backprop_input_strategy(filters, out_backprop, *, input_shape, strides, padding, dilations):
    if 0 in out_backprop.shape:
        return ""
    pads = _geometry(input_shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    shape = _batch(input_shape, out_backprop.shape)
    return _kernels.conv2d_strategy(shape, filters.shape, strides, dilations, pads)


_delegates_to(_backprop_input_numpy, _kernels.conv2d_backprop_input)


@_backprop_input.generic
def _backprop_input_generic(xp, filters, out_backprop, *, input_shape, strides, padding, dilations):
    pads = _geometry(input_shape[1:3], filters.shape[:2], strides, dilations, padding)[1]
    shape = _batch(input_shape, out_backprop.shape)
    if out_backprop.size == 0:
        return xp.zeros(shape, dtype=xp.result_type(filters.dtype, out_backprop.dtype))
    return _generic.conv2d_backprop_input(xp, shape, filters, out_backprop, strides, dilations, pads)


_backprop_input_numpy.strategy = _backprop_input_strategy  # the algorithm this kernel picks, for tl.profile


def _backprop_input_grad_filters(node, g):
    return _backprop_filter(g, node.inputs[1], filter_shape=node.inputs[0].shape, **_conv_attrs(node))


def _backprop_input_grad_out_backprop(node, g):
    return _conv2d(g, node.inputs[0], **_conv_attrs(node))


register_gradient(
    "Conv2DBackpropInput", filters=_backprop_input_grad_filters, out_backprop=_backprop_input_grad_out_backprop
)


@_op_type("Conv2DBackpropInput")
def conv2d_backprop_input(
    input_shape, filters, out_backprop, strides, padding, dilations=1, data_format="NHWC"
) -> Tensor:
    """The gradient of :func:`conv2d` with respect to its input, for an input of ``input_shape``.

    ``input_shape`` may have ``None`` as its batch size (then ``out_backprop``'s is used).
    With ``data_format="NCHW"``, ``input_shape``, ``out_backprop`` and the result are channels-first.

    >>> import numpy as np, tensorlib as tl
    >>> dy = np.ones((1, 2, 2, 1))
    >>> tl.nn.conv2d_backprop_input((1, 3, 3, 1), np.ones((2, 2, 1, 1)), dy, 1, "VALID").numpy()[0, :, :, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    name = "Conv2DBackpropInput"
    if _is_nchw(data_format, name):
        try:
            dx = conv2d_backprop_input(
                _nhwc_shape(input_shape, "input_shape", name),
                filters,
                _to_nhwc(out_backprop, name, "out_backprop"),
                *_nhwc_geometry(strides, padding, dilations),
            )
        except (ValueError, TypeError) as e:
            raise _nchw_error(e, out_backprop=out_backprop) from None
        return _to_nchw(dx)
    return apply(
        _backprop_input,
        (filters, out_backprop),
        {
            "input_shape": _shape_tuple(input_shape, "input_shape", name),
            "strides": _window_pair(strides, "strides", name),
            "padding": _padding_attr(padding, name),
            "dilations": _window_pair(dilations, "dilations", name),
        },
    )


# ------------------------------------------------------------------ Conv2DBackpropFilter
def _backprop_filter_infer(input, out_backprop, *, filter_shape, strides, padding, dilations):
    _check_float("input", input)
    filter_shape = _check_known_shape("filter_shape", filter_shape, first=0)
    _check_conv_operands(input.shape, filter_shape)
    out_hw = _output_hw(input.shape[1:3], filter_shape[:2], strides, dilations, padding)
    _check_matches("out_backprop", out_backprop.shape, (input.shape[0], *out_hw, filter_shape[3]))
    return spec(filter_shape, input.dtype)


_backprop_filter = defop(
    "Conv2DBackpropFilter",
    inputs=("input", "out_backprop"),
    attrs={"filter_shape": (1, 1, 1, 1), **_CONV_ATTRS},
    infer=_backprop_filter_infer,
    promote=(0, 1),
    doc="Gradient of Conv2D with respect to its filter: a contraction.",
)


@_backprop_filter.kernel("numpy")
def _backprop_filter_numpy(input, out_backprop, *, filter_shape, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], filter_shape[:2], strides, dilations, padding)[1]
    if input.size == 0 or out_backprop.size == 0:  # as in Conv2D: an empty sum
        return np.zeros(filter_shape, np.result_type(input, out_backprop))
    return _kernels.conv2d_backprop_filter(input, filter_shape, out_backprop, strides, dilations, pads)


def _backprop_filter_strategy(input, out_backprop, *, filter_shape, strides, padding, dilations):
    if 0 in input.shape or 0 in out_backprop.shape:
        return ""
    pads = _geometry(input.shape[1:3], filter_shape[:2], strides, dilations, padding)[1]
    return _kernels.conv2d_strategy(input.shape, filter_shape, strides, dilations, pads)


_delegates_to(_backprop_filter_numpy, _kernels.conv2d_backprop_filter)


@_backprop_filter.generic
def _backprop_filter_generic(xp, input, out_backprop, *, filter_shape, strides, padding, dilations):
    pads = _geometry(input.shape[1:3], filter_shape[:2], strides, dilations, padding)[1]
    if input.size == 0 or out_backprop.size == 0:
        return xp.zeros(filter_shape, dtype=xp.result_type(input.dtype, out_backprop.dtype))
    return _generic.conv2d_backprop_filter(xp, input, filter_shape, out_backprop, strides, dilations, pads)


_backprop_filter_numpy.strategy = _backprop_filter_strategy  # the algorithm this kernel picks, for tl.profile


def _backprop_filter_grad_input(node, g):
    return _backprop_input(g, node.inputs[1], input_shape=node.inputs[0].shape, **_conv_attrs(node))


def _backprop_filter_grad_out_backprop(node, g):
    return _conv2d(node.inputs[0], g, **_conv_attrs(node))


register_gradient(
    "Conv2DBackpropFilter", input=_backprop_filter_grad_input, out_backprop=_backprop_filter_grad_out_backprop
)


@_op_type("Conv2DBackpropFilter")
def conv2d_backprop_filter(
    input, filter_shape, out_backprop, strides, padding, dilations=1, data_format="NHWC"
) -> Tensor:
    """The gradient of :func:`conv2d` with respect to a filter of ``filter_shape`` (HWIO in both data formats).

    >>> import numpy as np, tensorlib as tl
    >>> x = np.arange(9.0).reshape(1, 3, 3, 1)
    >>> tl.nn.conv2d_backprop_filter(x, (2, 2, 1, 1), np.ones((1, 2, 2, 1)), 1, "VALID").numpy()[:, :, 0, 0]
    array([[ 8., 12.],
           [20., 24.]])
    """
    name = "Conv2DBackpropFilter"
    if _is_nchw(data_format, name):
        try:
            return conv2d_backprop_filter(
                _to_nhwc(input, name),
                filter_shape,
                _to_nhwc(out_backprop, name, "out_backprop"),
                *_nhwc_geometry(strides, padding, dilations),
            )
        except (ValueError, TypeError) as e:
            raise _nchw_error(e, input=input, out_backprop=out_backprop) from None
    return apply(
        _backprop_filter,
        (input, out_backprop),
        {
            "filter_shape": _shape_tuple(filter_shape, "filter_shape", name),
            "strides": _window_pair(strides, "strides", name),
            "padding": _padding_attr(padding, name),
            "dilations": _window_pair(dilations, "dilations", name),
        },
    )


@_op_type("Conv2DBackpropInput", tensors=("input", "filters"))
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", dilations=1, data_format="NHWC") -> Tensor:
    """Transposed ("de-") convolution: the gradient of a conv2d that maps ``output_shape`` to ``input``'s shape.

    ``filters`` is ``(height, width, output_channels, input_channels)``, as in TensorFlow.

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.nn.conv2d_transpose(np.ones((1, 2, 2, 1)), np.ones((3, 3, 1, 1)), (1, 4, 4, 1), 2, "SAME")
    >>> y.shape
    (1, 4, 4, 1)
    """
    try:
        return conv2d_backprop_input(output_shape, filters, input, strides, padding, dilations, data_format)
    except (ValueError, TypeError) as e:
        raise _transpose_error(e, "conv2d_transpose", output_shape) from None


def _transpose_error(e: Exception, name: str, output_shape) -> Exception:
    """``e`` from the Conv2DBackpropInput a transposed conv runs, its terms (``input_shape``, ``out_backprop``,
    ``in_channels``) translated to the transposed conv's arguments; an error that is not the caller's passes."""
    if type(e) not in (ValueError, TypeError):
        return e
    return type(e)(
        f"{e}; {name}(input, filters, output_shape) runs it with input_shape=output_shape ({output_shape!r}), "
        "out_backprop=input and the filters' (..., output_channels, in_channels) as its (..., in_channels, "
        "out_channels)"
    )

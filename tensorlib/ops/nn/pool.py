"""AvgPool, MaxPool and their gradient ops; avg_pool and max_pool."""

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
    _check_float,
    _check_known_shape,
    _check_matches,
    _check_rank4,
    _delegates_to,
    _geometry,
    _is_nchw,
    _nchw_error,
    _nchw_padding,
    _nchw_window,
    _op_type,
    _output_hw,
    _padding_attr,
    _to_nchw,
    _to_nhwc,
    _window_pair,
)


def _pool_attrs(node) -> dict:
    a = node.attrs
    return {"ksize": a["ksize"], "strides": a["strides"], "padding": a["padding"]}


# ------------------------------------------------------------------ AvgPool and AvgPoolGrad
_POOL_ATTRS = {"ksize": (1, 1), "strides": (1, 1), "padding": "VALID"}


def _pool_infer(input, *, ksize, strides, padding):
    _check_float("input", input)
    _check_rank4("input", input.shape, "NHWC (batch, height, width, channels)")
    out_hw = _output_hw(input.shape[1:3], ksize, strides, (1, 1), padding)
    return spec((input.shape[0], *out_hw, input.shape[3]), input.dtype)


def _pool_pads(in_hw, ksize, strides, padding):
    return _geometry(in_hw, ksize, strides, (1, 1), padding)[1]


_avg_pool = defop(
    "AvgPool",
    inputs=("input",),
    attrs=_POOL_ATTRS,
    infer=_pool_infer,
    doc="Average pooling over (height, width); SAME windows average only their real cells.",
)


@_avg_pool.kernel("numpy")
def _avg_pool_numpy(input, *, ksize, strides, padding):
    (out_h, out_w), pads = _geometry(input.shape[1:3], ksize, strides, (1, 1), padding)
    if input.size == 0:  # the kernel refuses a 0-pixel SAME image and cannot reshape an empty channel axis
        return np.zeros((input.shape[0], out_h, out_w, input.shape[3]), input.dtype)
    return _kernels.avg_pool(input, ksize, strides, pads)


_delegates_to(_avg_pool_numpy, _kernels.avg_pool)


@_avg_pool.generic
def _avg_pool_generic(xp, input, *, ksize, strides, padding):
    (out_h, out_w), pads = _geometry(input.shape[1:3], ksize, strides, (1, 1), padding)
    if input.size == 0:  # as in the NumPy kernel: strided slices of an empty SAME image are out of bounds
        return xp.zeros((input.shape[0], out_h, out_w, input.shape[3]), dtype=input.dtype)
    return _generic.avg_pool(xp, input, ksize, strides, pads)


register_gradient("AvgPool", lambda node, g: _avg_pool_grad(g, input_shape=node.inputs[0].shape, **_pool_attrs(node)))


def _avg_pool_grad_infer(grad, *, input_shape, ksize, strides, padding):
    _check_float("grad", grad)
    input_shape = _check_known_shape("input_shape", input_shape, first=1)
    out_hw = _output_hw(input_shape[1:3], ksize, strides, (1, 1), padding)
    _check_matches("grad", grad.shape, (input_shape[0], *out_hw, input_shape[3]))
    return spec(_batch(input_shape, grad.shape), grad.dtype)


_avg_pool_grad = defop(
    "AvgPoolGrad",
    inputs=("grad",),
    attrs={"input_shape": (None, 1, 1, 1), **_POOL_ATTRS},
    infer=_avg_pool_grad_infer,
    doc="Gradient of AvgPool: each window's share spread back.",
)


@_avg_pool_grad.kernel("numpy")
def _avg_pool_grad_numpy(grad, *, input_shape, ksize, strides, padding):
    pads = _pool_pads(input_shape[1:3], ksize, strides, padding)
    if grad.size == 0 or 0 in input_shape[1:]:  # as in AvgPool
        return np.zeros(_batch(input_shape, grad.shape), grad.dtype)
    return _kernels.avg_pool_grad(_batch(input_shape, grad.shape), grad, ksize, strides, pads)


_delegates_to(_avg_pool_grad_numpy, _kernels.avg_pool_grad)


@_avg_pool_grad.generic
def _avg_pool_grad_generic(xp, grad, *, input_shape, ksize, strides, padding):
    pads = _pool_pads(input_shape[1:3], ksize, strides, padding)
    if grad.size == 0 or 0 in input_shape[1:]:
        return xp.zeros(_batch(input_shape, grad.shape), dtype=grad.dtype)
    return _generic.avg_pool_grad(xp, _batch(input_shape, grad.shape), grad, ksize, strides, pads)


register_gradient("AvgPoolGrad", lambda node, g: _avg_pool(g, **_pool_attrs(node)))  # linear: its transpose


def check_pool_padding(padding, ksize: tuple, name: str) -> None:
    """Explicit pads each smaller than the window: a window wholly in the padding has no cell to pool (its
    maximum would be -inf); PyTorch refuses it too."""
    if not isinstance(padding, str) and any(p >= k for pair, k in zip(padding, ksize) for p in pair):
        raise ValueError(f"{name}: each explicit padding must be smaller than the window {ksize}, got {padding}")


def _pool(op, input, ksize, strides, padding, data_format="NHWC"):
    name = op.name
    if _is_nchw(data_format, name):
        try:
            y = _pool(
                op,
                _to_nhwc(input, name),
                _nchw_window(ksize, True),
                _nchw_window(strides, True),
                _nchw_padding(padding, True),
            )
        except (ValueError, TypeError) as e:
            raise _nchw_error(e, input=input) from None
        return _to_nchw(y)
    ksize = _window_pair(ksize, "ksize", name)
    # Explicit padding for max pooling only, as TensorFlow's max_pool2d: an average's padded cells would count
    # (PyTorch's count_include_pad) or not (TensorFlow's SAME), two conventions a pair of numbers cannot tell.
    padding = _padding_attr(padding, name, explicit=op is _max_pool)
    check_pool_padding(padding, ksize, name)
    return apply(op, (input,), {"ksize": ksize, "strides": _window_pair(strides, "strides", name), "padding": padding})


@_op_type("AvgPool")
def avg_pool(input, ksize, strides, padding, data_format="NHWC") -> Tensor:
    """Average pooling of an NHWC tensor; with ``"SAME"`` each window averages only its real cells.

    ``data_format="NCHW"`` pools channels-first tensors (4-element ksize/strides ``[1, 1, rows, cols]``).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.avg_pool(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "VALID").numpy()[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    return _pool(_avg_pool, input, ksize, strides, padding, data_format)


# ------------------------------------------------------------------ MaxPool, MaxPoolGrad, MaxPoolGradGrad
_max_pool = defop(
    "MaxPool",
    inputs=("input",),
    attrs=_POOL_ATTRS,
    infer=_pool_infer,
    doc="Max pooling over (height, width); the gradient goes to each window's first maximum (a NaN if it has one).",
)


@_max_pool.kernel("numpy")
def _max_pool_numpy(input, *, ksize, strides, padding):
    (out_h, out_w), pads = _geometry(input.shape[1:3], ksize, strides, (1, 1), padding)
    if input.size == 0:  # as in AvgPool
        return np.zeros((input.shape[0], out_h, out_w, input.shape[3]), input.dtype)
    return _kernels.max_pool(input, ksize, strides, pads)


_delegates_to(_max_pool_numpy, _kernels.max_pool)


@_max_pool.generic
def _max_pool_generic(xp, input, *, ksize, strides, padding):
    (out_h, out_w), pads = _geometry(input.shape[1:3], ksize, strides, (1, 1), padding)
    if input.size == 0:  # as in the NumPy kernel: strided slices of an empty SAME image are out of bounds
        return xp.zeros((input.shape[0], out_h, out_w, input.shape[3]), dtype=input.dtype)
    return _generic.max_pool(xp, input, ksize, strides, pads)


register_gradient("MaxPool", lambda node, g: _max_pool_grad(node.inputs[0], node.outputs[0], g, **_pool_attrs(node)))


@_op_type("MaxPool")
def max_pool(input, ksize, strides, padding, data_format="NHWC") -> Tensor:
    """Max pooling of an NHWC tensor (padding cells never win); ``data_format="NCHW"`` for channels-first.

    ``padding`` is ``"VALID"``, ``"SAME"`` or explicit ``((top, bottom), (left, right))`` (TensorFlow's 4-pair
    form too), each smaller than the window: PyTorch's ``max_pool2d(x, 3, 2, padding=1)`` is
    ``max_pool(x, 3, 2, ((1, 1), (1, 1)))``, where ``"SAME"`` would pad ``(0, 1)`` on an even size.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.max_pool(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "VALID").numpy()[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    >>> tl.nn.max_pool(-np.arange(16.0).reshape(1, 4, 4, 1), 3, 2, ((1, 1), (1, 1))).numpy()[0, :, :, 0]
    array([[-0., -1.],
           [-4., -5.]])
    """
    return _pool(_max_pool, input, ksize, strides, padding, data_format)


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


_max_pool_grad = defop(
    "MaxPoolGrad",
    inputs=("orig_input", "orig_output", "grad"),
    attrs=_POOL_ATTRS,
    infer=_max_pool_grad_infer,
    promote="all",
    doc="Gradient of MaxPool: each window's gradient routed to its first maximum.",
)
_max_pool_grad_grad = defop(
    "MaxPoolGradGrad",
    inputs=("orig_input", "orig_output", "grad"),
    attrs=_POOL_ATTRS,
    infer=_max_pool_grad_grad_infer,
    promote="all",
    doc="Gradient of MaxPoolGrad: the input change gathered at each window's maximum.",
)


def _routed(xp, route, orig_input, orig_output, grad, gathers: bool):
    """``route(orig_input, orig_output, grad)``, a kernel that routes by ``input == output`` (MaxPoolGrad, or
    MaxPoolGradGrad when ``gathers``), with the windows whose maximum is NaN routed to their first NaN: the value
    MaxPool kept (as PyTorch).  NaN equals nothing, so the kernels routed those windows' gradients nowhere
    (``max_pool(x, 1, 1)``, the identity, had gradient 0 at a NaN).  Those windows are routed by a second call on
    the NaN marks (1 where NaN, else 0; padding never equals a mark), only when the output has a NaN (its max is
    NaN: one fast pass over the pooled output, under 1% of the kernel's time)."""
    if orig_input.size == 0 or orig_output.size == 0:  # as in MaxPool: no windows, nothing routed
        return xp.zeros(orig_output.shape if gathers else orig_input.shape, dtype=grad.dtype)
    result = route(orig_input, orig_output, grad)
    if not bool(xp.isnan(xp.max(orig_output))):
        return result
    nan_out = xp.isnan(orig_output)
    marks_in, marks_out = xp.astype(xp.isnan(orig_input), orig_input.dtype), xp.astype(nan_out, orig_output.dtype)
    zero = xp.zeros((), dtype=grad.dtype)
    if gathers:  # the result has the output's shape: its NaN windows' entries come from the marks
        return xp.where(nan_out, route(marks_in, marks_out, grad), result)
    return result + route(marks_in, marks_out, xp.where(nan_out, grad, zero))


@_max_pool_grad.kernel("numpy")
def _max_pool_grad_numpy(orig_input, orig_output, grad, *, ksize, strides, padding):
    pads = _pool_pads(orig_input.shape[1:3], ksize, strides, padding)

    def route(x, y, g):
        return _kernels.max_pool_grad(x, y, g, ksize, strides, pads)

    return _routed(np, route, orig_input, orig_output, grad, gathers=False)


@_max_pool_grad_grad.kernel("numpy")
def _max_pool_grad_grad_numpy(orig_input, orig_output, grad, *, ksize, strides, padding):
    pads = _pool_pads(orig_input.shape[1:3], ksize, strides, padding)

    def route(x, y, g):
        return _kernels.max_pool_grad_grad(x, y, g, ksize, strides, pads)

    return _routed(np, route, orig_input, orig_output, grad, gathers=True)


_delegates_to(_max_pool_grad_numpy, _kernels.max_pool_grad)


@_max_pool_grad.generic
def _max_pool_grad_generic(xp, orig_input, orig_output, grad, *, ksize, strides, padding):
    pads = _pool_pads(orig_input.shape[1:3], ksize, strides, padding)

    def route(x, y, g):
        return _generic.max_pool_grad(xp, x, y, g, ksize, strides, pads)

    return _routed(xp, route, orig_input, orig_output, grad, gathers=False)


@_max_pool_grad_grad.generic
def _max_pool_grad_grad_generic(xp, orig_input, orig_output, grad, *, ksize, strides, padding):
    pads = _pool_pads(orig_input.shape[1:3], ksize, strides, padding)

    def route(x, y, g):
        return _generic.max_pool_grad_grad(xp, x, y, g, ksize, strides, pads)

    return _routed(xp, route, orig_input, orig_output, grad, gathers=True)


_delegates_to(_max_pool_grad_grad_numpy, _kernels.max_pool_grad_grad)
# Both are linear in ``grad`` and each other's transpose; the routing, a function of the
# original input and output, is piecewise constant: no gradient flows to those two.
register_gradient(
    "MaxPoolGrad",
    None,
    None,
    lambda node, g: _max_pool_grad_grad(node.inputs[0], node.inputs[1], g, **_pool_attrs(node)),
)
register_gradient(
    "MaxPoolGradGrad",
    None,
    None,
    lambda node, g: _max_pool_grad(node.inputs[0], node.inputs[1], g, **_pool_attrs(node)),
)

"""AvgPool, MaxPool and their gradient ops; avg_pool and max_pool."""

from __future__ import annotations

import numpy as np

from ...backends import generic_nn as _generic
from ...backends import numpy_nn as _kernels
from ...dispatch import apply, as_tensor
from ...grad.registry import register_gradient
from ...tensor import Tensor
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from ..registry import defop, spec
from ..shape import _positions_like
from ._common import (
    _batch,
    _check_float,
    _check_known_shape,
    _check_matches,
    _check_rank4,
    _delegates_to,
    _geometry,
    _index,
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
from .window_pool import (
    LAYOUTS,
    avg_divisor,
    explicit_pads,
    gathered_max,
    gathered_sum,
    geometry,
    padded,
    scaled,
    spatial_axes,
    tf_padding,
    torch_ints,
    where_of,
    window,
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
def avg_pool(
    input,
    ksize,
    strides,
    padding,
    data_format="NHWC",
    *,
    count_include_pad: bool | None = None,
    ceil_mode: bool = False,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling of an NHWC tensor; with ``"SAME"`` each window averages only its real cells.

    ``data_format="NCHW"`` pools channels-first tensors (4-element ksize/strides ``[1, 1, rows, cols]``).

    PyTorch's ``F.avg_pool2d`` options: explicit ``padding`` (an int, a pair, or ``((top, bottom), (left,
    right))``) with ``count_include_pad`` (``True``, PyTorch's default, divides by the window's cells padding
    included; ``False`` by its cells inside the input; explicit padding needs one of them said), ``ceil_mode``
    (a last partial window where it starts inside the input or its left padding; the cells it adds never count)
    and ``divisor_override`` (every window's sum divided by it).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.avg_pool(np.arange(16.0).reshape(1, 4, 4, 1), 2, 2, "VALID").numpy()[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    >>> x = np.ones((1, 1, 3, 3))
    >>> tl.nn.avg_pool(x, 2, 2, 1, "NCHW", count_include_pad=True, ceil_mode=True).numpy()[0, 0].tolist()
    [[0.25, 0.5], [0.5, 1.0]]
    """
    if count_include_pad is None and not ceil_mode and divisor_override is None and tf_padding(padding):
        return _pool(_avg_pool, input, ksize, strides, padding, data_format)
    options = {"count_include_pad": count_include_pad, "ceil_mode": ceil_mode, "divisor_override": divisor_override}
    return torch_pool("avg", "AvgPool", input, ksize, strides, padding, data_format, **options)


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
def max_pool(
    input,
    ksize,
    strides,
    padding,
    data_format="NHWC",
    *,
    dilations=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Max pooling of an NHWC tensor (padding cells never win); ``data_format="NCHW"`` for channels-first.

    PyTorch's ``F.max_pool2d`` options: ``dilations`` (window taps that many cells apart), ``ceil_mode`` (a last
    partial window where it starts inside the input or its left padding) and ``return_indices`` (then
    ``(values, indices)``: each window's first maximum, or last NaN, as an int64 flat index into the spatial
    dimensions per example and channel, what :func:`max_unpool` takes).  The gradient goes to that cell.

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
    if dilations == 1 and not ceil_mode and not return_indices and tf_padding(padding):
        return _pool(_max_pool, input, ksize, strides, padding, data_format)
    options = {"dilations": dilations, "ceil_mode": ceil_mode, "return_indices": return_indices}
    return torch_pool("max", "MaxPool", input, ksize, strides, padding, data_format, **options)


def torch_pool(
    kind: str,
    name: str,
    input,
    ksize,
    strides,
    padding,
    data_format,
    *,
    dilations=1,
    ceil_mode: bool = False,
    count_include_pad: bool | None = None,
    divisor_override=None,
    return_indices: bool = False,
):
    """The pools with PyTorch's options (see :func:`avg_pool`, :func:`max_pool`) over 1, 2 or 3 spatial axes:
    the AvgPool and MaxPool kernels on the input padded for them (2-D, and 1-D as a height-1 image), else the
    gathered windows of :mod:`.window_pool` (dilated or 3-D max pools, indices, 3-D averages)."""
    x = as_tensor(input)
    where = where_of(x)
    if x.dtype.kind != "f":
        raise TypeError(f"{name}: input must be a floating-point tensor {where}")
    if kind == "avg" and x.dtype == np.float16:  # sums and divisors in float32, rounded once (as PyTorch's)
        options = {"ceil_mode": ceil_mode, "count_include_pad": count_include_pad, "divisor_override": divisor_override}
        y = torch_pool(kind, name, math_ops.cast(x, np.float32), ksize, strides, padding, data_format, **options)
        return math_ops.cast(y, np.float16)
    rank, axes, first = spatial_axes(x, data_format, name)
    k, s = window(ksize, rank, "ksize", name, first), window(strides, rank, "strides", name, first)
    d = window(dilations, rank, "dilations", name, first)
    pads = explicit_pads(padding, rank, name)
    if ceil_mode and pads == "SAME":
        raise ValueError(f"{name}: ceil_mode needs 'VALID' or explicit padding, got 'SAME' {where}")
    geoms = [
        geometry(x.shape[a], k[i], s[i], d[i], pads if isinstance(pads, str) else pads[i], ceil_mode, name, where)
        for i, a in enumerate(axes)
    ]
    if torch_ints(padding, rank):  # PyTorch's padding=p: at most half the window, as PyTorch refuses more
        for p, ki, di in zip(pads, k, d):
            effective = ki if kind == "avg" else di * (ki - 1) + 1
            if 2 * p[0] > effective:
                raise ValueError(
                    f"{name}: padding {padding!r} must be at most half of the effective window {effective} (ksize "
                    f"{k}, dilations {d}), as PyTorch's; give ((before, after), ...) pairs to pad more {where}"
                )
    if kind == "max":
        if return_indices or rank == 3 or max(d) > 1:
            return gathered_max(x, axes, geoms, k, s, d, bool(return_indices), name)
        return _valid_pool(_max_pool, padded(x, axes, geoms, -np.inf), k, s, first)
    if max(d) > 1:
        raise ValueError(f"{name}: average pooling takes no dilations, got {dilations!r} {where}")
    if count_include_pad is None and not isinstance(pads, str) and any(map(sum, pads)):
        raise ValueError(
            f"{name}: explicit padding {padding!r} needs count_include_pad=True (PyTorch's default: the padding "
            f"counts in each window's divisor) or False (it does not) {where}"
        )
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, (int, np.integer)):
            raise ValueError(f"{name}: divisor_override must be a nonzero int, got {divisor_override!r}")
        if divisor_override == 0:
            raise ValueError(f"{name}: divisor_override must be a nonzero int, got 0")
        divisor = np.array(int(divisor_override))
    else:
        divisor = avg_divisor(x, axes, geoms, k, s, bool(count_include_pad))
    if rank == 3:
        return scaled(gathered_sum(x, axes, geoms, k, s), 1.0 / divisor)
    return scaled(_valid_pool(_avg_pool, padded(x, axes, geoms, 0), k, s, first), np.prod(k) / divisor)


def _valid_pool(op, x, ksize: tuple, strides: tuple, first: bool):
    """``op`` with ``"VALID"`` padding over an already padded input of 1 or 2 spatial axes (1: a height-1 image)."""
    if len(ksize) == 2:
        return _pool(op, x, ksize, strides, "VALID", "NCHW" if first else "NHWC")
    axis = 2 if first else 1
    y = _pool(op, shape_ops.expand_dims(x, axis), (1, *ksize), (1, *strides), "VALID", "NCHW" if first else "NHWC")
    return shape_ops.squeeze(y, axis)


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


# ------------------------------------------------------------------ PyTorch's max_unpool and lp_pool
@_op_type(None, tensors=("input", "indices"))
def max_unpool(input, indices, ksize, strides=None, padding=0, data_format=None, output_size=None) -> Tensor:
    """The partial inverse of :func:`max_pool` with ``return_indices=True`` (PyTorch's ``F.max_unpool1d/2d/3d``):
    zeros of the unpooled size with each value of ``input`` written at its flat spatial index in ``indices``
    (per example and channel).  A position written twice (overlapping windows) keeps the last value, and only
    that one gets its gradient (PyTorch's forward is nondeterministic there, its backward gathers for each).  The spatial sizes are
    ``(in - 1) * stride - pad_before - pad_after + ksize``, or ``output_size`` (the spatial sizes, or the whole
    shape).  Channels last by default; ``data_format="NCW"/"NCHW"/"NCDHW"`` for PyTorch's layout.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.array([[[1.0, 5.0, 2.0, 0.0]]])
    >>> y, i = tl.nn.max_pool1d(x, 2, 2, "VALID", "NCW", return_indices=True)
    >>> tl.nn.max_unpool(y, i, 2, data_format="NCW").numpy().tolist()
    [[[0.0, 5.0, 2.0, 0.0]]]
    """
    name = "max_unpool"
    x, idx = as_tensor(input), as_tensor(indices)
    where = f"(input shape {tuple(x.shape)}, {x.dtype}; indices shape {tuple(idx.shape)}, {idx.dtype})"
    rank, axes, first = spatial_axes(x, data_format, name)
    if idx.dtype.kind not in "iu" or tuple(idx.shape) != tuple(x.shape):
        raise ValueError(f"{name}: indices must be integers of input's shape {where}")
    k = window(ksize, rank, "ksize", name, first)
    s = k if strides is None else window(strides, rank, "strides", name, first)
    pads = explicit_pads(padding, rank, name)
    if isinstance(pads, str):
        raise ValueError(f"{name}: padding must be explicit (an int, ints or pairs), got {padding!r} {where}")
    sizes = [(x.shape[a] - 1) * s[i] - sum(pads[i]) + k[i] for i, a in enumerate(axes)]
    if output_size is not None:
        wanted = tuple(_index(v) for v in output_size)
        least = sizes
        sizes = list(wanted[2:] if first else wanted[1:-1]) if len(wanted) == rank + 2 else list(wanted)
        if len(sizes) != rank or any(not low <= n < low + step for n, low, step in zip(sizes, least, s)):
            raise ValueError(
                f"{name}: output_size must give the {rank} spatial sizes, each from the default {tuple(least)} up to "
                f"the stride {s} more (exclusive, as PyTorch), got {output_size!r} {where}"
            )
    cells = int(np.prod(sizes))
    if not idx.is_symbolic:
        values = idx.numpy()
        if values.size and (values.min() < 0 or values.max() >= cells):
            raise ValueError(f"{name}: indices must lie in [0, {cells}), the unpooled spatial cells {where}")
    batch = -1 if x.shape[0] is None else x.shape[0]
    channels = x.shape[1] if first else x.shape[-1]
    pooled = int(np.prod([x.shape[a] for a in axes]))
    flat = (batch, channels, pooled) if first else (batch, pooled, channels)
    values, positions = shape_ops.reshape(x, flat), shape_ops.reshape(idx, flat)
    if not first:
        values, positions = shape_ops.transpose(values, (0, 2, 1)), shape_ops.transpose(positions, (0, 2, 1))
    # one scatter into the flattened (batch, channels, cells) zeros, whose batch may be known only when a graph
    # runs: each (example, channel) row's offset comes from its position in a (batch, channels, 1) zeros
    row = math_ops.zeros_like(reduce_ops.sum(values, axis=2, keepdims=True))
    linear = _positions_like(row) * cells + positions
    if idx.is_symbolic:  # known only when a graph runs: an index outside its row is out of bounds, not its neighbour's
        inside = math_ops.logical_and(positions >= 0, positions < cells)
        linear = math_ops.where(inside, linear, np.iinfo(np.int64).max)
    zeros = shape_ops.reshape(row + np.zeros(cells, x.dtype), (-1,))
    out = shape_ops.tensor_scatter_nd_update(
        zeros, shape_ops.reshape(linear, (-1, 1)), shape_ops.reshape(values, (-1,))
    )
    out = shape_ops.reshape(out, (batch, channels, *sizes))
    return out if first else shape_ops.transpose(out, (0, *range(2, 2 + rank), 1))


@_op_type(None, tensors=("input",))
def lp_pool(input, norm_type: float, ksize, strides=None, ceil_mode: bool = False, data_format=None) -> Tensor:
    """Power-average pooling (PyTorch's ``F.lp_pool1d/2d/3d``): ``(sum over the window of x ** p) ** (1 / p)``,
    computed as PyTorch does, ``(avg_pool(x ** p) * window cells) ** (1 / p)`` (so a ceil-mode partial window's
    sum is scaled by the full window over its cells; a negative sum gives NaN for a fractional ``1 / p``);
    float16 computes in float32 and rounds once, where PyTorch's ``x ** p`` overflows.
    ``strides`` defaults to ``ksize``; channels last by default, ``data_format="NCW"/"NCHW"/"NCDHW"``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.lp_pool(np.array([[[3.0], [4.0]]]), 2, 2).numpy().ravel().tolist()
    [5.0]
    """
    name = "lp_pool"
    x = as_tensor(input)
    if x.dtype == np.float16:  # x ** p overflows float16 (2000 ** 2); float32 throughout, rounded once
        return math_ops.cast(
            lp_pool(math_ops.cast(x, np.float32), norm_type, ksize, strides, ceil_mode, data_format), x.dtype
        )
    p = float(norm_type) if not isinstance(norm_type, bool) else 0.0
    if not np.isfinite(p) or p == 0:
        raise ValueError(f"{name}: norm_type must be a finite nonzero number, got {norm_type!r} {where_of(x)}")
    rank, _, first = spatial_axes(x, data_format, name)
    k = window(ksize, rank, "ksize", name, first)
    data_format = LAYOUTS[rank][int(first)]
    powered = x**p if p != 1.0 else x
    pooled = torch_pool("avg", name, powered, k, k if strides is None else strides, 0, data_format, ceil_mode=ceil_mode)
    return (pooled * float(np.prod(k))) ** (1.0 / p)

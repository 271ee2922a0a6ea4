"""3-D (volume, video) convolution and pooling built from the 2-D ops: ``conv3d``, ``conv3d_transpose``,
``max_pool3d`` and ``avg_pool3d`` (TensorFlow's ``tf.nn.conv3d``, ``tf.nn.conv3d_transpose``, ``tf.nn.max_pool3d``,
``tf.nn.avg_pool3d``; NDHWC or NCDHW).

``conv3d`` stacks the input's strided depth slices, one per filter depth tap, along the channels and runs
one :func:`conv2d` over the (batch * output depth) images with the filter's taps stacked the same way;
``conv3d_transpose`` is that composition's adjoint: one :func:`conv2d_backprop_input` over the same images, then
each tap's slice added back at the depths it was read from.  The
pools are separable: a 2-D pool over (height, width) of every depth slice, then a 2-D pool with a
``(depth, 1)`` window over (depth, height * width).  The maximum of maxima is the window's maximum (padded
cells never win), and the average of the (height, width) averages is the window's sum over the product of the
per-axis counts of real cells, TensorFlow's ``"SAME"`` rule.  All three are exact compositions, so gradients
(to any order), tracing and every backend come from the ops they use."""

from __future__ import annotations

import numpy as np

from ...backends import numpy_nn as _kernels
from ...dispatch import as_tensor, as_tensors
from ...tensor import Tensor
from .. import shape as shape_ops
from ._common import _index, _op_type
from .conv import conv2d, conv2d_backprop_input
from .pool import avg_pool, check_pool_padding, max_pool, torch_pool
from .window_pool import tf_padding

_FORMATS = ("NDHWC", "NCDHW")


def _where(x, filters=None) -> str:
    text = f"input shape {tuple(x.shape)} {x.dtype}"
    if filters is not None:
        text += f", filter shape {tuple(filters.shape)} {filters.dtype}"
    return f"({text})"


def _triple(value, what: str, name: str, ncdhw: bool, where: str) -> tuple:
    """An int, ``(depth, rows, cols)`` or TensorFlow's 5-element form (``[1, d, h, w, 1]``; NCDHW:
    ``[1, 1, d, h, w]``) -> ``(d, h, w)``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        items = (int(value),) * 3
    else:
        try:
            items = tuple(_index(v) for v in value)
        except (TypeError, ValueError):
            items = ()
        if len(items) == 5:
            outer = (items[0], items[1]) if ncdhw else (items[0], items[4])
            items = (items[2:] if ncdhw else items[1:4]) if outer == (1, 1) else ()
    if len(items) != 3 or min(items) < 1:
        five = "[1, 1, d, h, w]" if ncdhw else "[1, d, h, w, 1]"
        raise ValueError(f"{name}: {what} must be a positive int, (depth, rows, cols) or {five}, got {value!r} {where}")
    return items


def _padding_3d(padding, name: str, ncdhw: bool, explicit: bool, where: str):
    """``"VALID"``, ``"SAME"`` or (explicit) ``((front, back), (top, bottom), (left, right))``; TensorFlow's
    5-pair form (zero pairs for the batch and the channels) too."""
    if isinstance(padding, str) or not explicit:
        if isinstance(padding, str) and padding.upper() in ("VALID", "SAME"):
            return padding.upper()
        raise ValueError(f"{name}: padding must be 'VALID' or 'SAME', got {padding!r} {where}")
    try:
        pairs = tuple(tuple(_index(v) for v in pair) for pair in padding)
    except (TypeError, ValueError):
        pairs = ()
    if len(pairs) == 5:
        outer, inner = ((pairs[0], pairs[1]), pairs[2:]) if ncdhw else ((pairs[0], pairs[4]), pairs[1:4])
        pairs = inner if outer == ((0, 0), (0, 0)) else ()
    if len(pairs) != 3 or any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise ValueError(
            f"{name}: padding must be 'VALID', 'SAME' or ((front, back), (top, bottom), (left, right)), got {padding!r} {where}"
        )
    return pairs


_DHWIO = "DHWIO (depth, height, width, in_channels, out_channels)"


def _volume(name: str, data_format, x, filters=None, filter_layout: str = _DHWIO):
    """Checks the layout, rank, dtype and sizes; returns ``x`` as NDHWC.  With ``filters``, an integer or bool
    operand next to a floating-point one is fine (the 2-D op promotes them, NumPy's rule, as :func:`conv2d`)."""
    if data_format not in _FORMATS:
        raise ValueError(f"{name}: data_format must be 'NDHWC' or 'NCDHW', got {data_format!r} {_where(x, filters)}")
    layout = {"NDHWC": "NDHWC (batch, depth, height, width, channels)"}.get(
        data_format, "NCDHW (batch, channels, depth, height, width)"
    )
    if x.ndim != 5 or (filters is not None and filters.ndim != 5):
        what = f"input must be 5-D {layout}"
        if filters is not None:
            what += f" and filters 5-D {filter_layout}"
        raise ValueError(f"{name}: {what} {_where(x, filters)}")
    if x.dtype.kind != "f" and (filters is None or filters.dtype.kind != "f"):
        what = "input must be a floating-point tensor" if filters is None else "input or filters must be floating-point"
        raise TypeError(f"{name}: {what} {_where(x, filters)}")
    if None in x.shape[1:] or (filters is not None and None in filters.shape):
        raise ValueError(f"{name}: every dimension but the batch must be known {_where(x, filters)}")
    if x.shape[0] is None and 0 in x.shape[1:]:  # the reshapes to and from 2-D images could not infer the batch
        raise ValueError(f"{name}: an empty volume needs a known batch size {_where(x, filters)}")
    return shape_ops.transpose(x, (0, 2, 3, 4, 1)) if data_format == "NCDHW" else x


def _sizes(name: str, in_dhw, window, strides, dilations, padding, where: str):
    """Output sizes and (before, after) pads per axis, TensorFlow's rules; one error naming ``name``."""
    out, pads = [], []
    for axis in range(3):
        pad = padding if isinstance(padding, str) else padding[axis]
        try:
            size, pair = _kernels.conv_output_size_and_padding(
                in_dhw[axis], window[axis], strides[axis], dilations[axis], pad
            )
        except ValueError as e:
            raise ValueError(f"{name}: {['depth', 'height', 'width'][axis]}: {e} {where}") from None
        out.append(size)
        pads.append(pair)
    return tuple(out), tuple(pads)


def _batch_size(x) -> int:
    return -1 if x.shape[0] is None else x.shape[0]


@_op_type(None, tensors=("input", "filters"))  # composite: one Conv2D over the stacked depth taps
def conv3d(input, filters, strides, padding, data_format: str = "NDHWC", dilations=1) -> Tensor:
    """3-D convolution of an NDHWC ``input`` (batch, depth, height, width, channels) with a DHWIO ``filters``
    tensor (depth, height, width, in_channels, out_channels): TensorFlow's ``tf.nn.conv3d``.

    ``strides`` and ``dilations`` are an int, ``(depth, rows, cols)`` or TensorFlow's ``[1, d, h, w, 1]``;
    ``padding`` is ``"VALID"``, ``"SAME"`` (TensorFlow's rule) or explicit
    ``((front, back), (top, bottom), (left, right))``.  ``data_format="NCDHW"`` takes and returns
    channels-first tensors (PyTorch's ``conv3d`` layout; the filters stay DHWIO, 5-element strides are
    ``[1, 1, d, h, w]``).  Built from one :func:`conv2d` over the input's depth slices stacked per tap.

    >>> import numpy as np, tensorlib as tl
    >>> x = tl.tensor(np.arange(8.0).reshape(1, 2, 2, 2, 1))
    >>> tl.nn.conv3d(x, np.ones((2, 2, 2, 1, 1)), strides=1, padding="VALID").numpy().ravel().tolist()
    [28.0]
    >>> tl.nn.conv3d(np.ones((1, 3, 4, 5, 6)), np.ones((3, 3, 3, 3, 8)), 1, "SAME", data_format="NCDHW").shape
    (1, 8, 4, 5, 6)
    """
    name = "conv3d"
    x, w = as_tensors(input, filters)
    where = _where(x, w)
    x = _volume(name, data_format, x, w)
    if x.shape[4] != w.shape[3]:
        raise ValueError(f"{name}: input channels {x.shape[4]} do not match filter in_channels {w.shape[3]} {where}")
    if 0 in w.shape:
        raise ValueError(f"{name}: filter must not have zero elements {where}")
    ncdhw = data_format == "NCDHW"
    s = _triple(strides, "strides", name, ncdhw, where)
    d = _triple(dilations, "dilations", name, ncdhw, where)
    pad = _padding_3d(padding, name, ncdhw, True, where)
    kd, kh, kw, channels, out_channels = w.shape
    (od, oh, ow), pads = _sizes(name, x.shape[1:4], (kd, kh, kw), s, d, pad, where)
    if any(pads[0]):
        x = shape_ops.pad(x, ((0, 0), pads[0], (0, 0), (0, 0), (0, 0)))
    # tap i reads depths i * d + o * s of the padded input: stacked on the channels, one Conv2D sums them all
    taps = [x[:, i * d[0] : i * d[0] + (od - 1) * s[0] + 1 : s[0]] if od else x[:, :0] for i in range(kd)]
    stacked = taps[0] if kd == 1 else shape_ops.concat(taps, axis=4)
    images = shape_ops.reshape(stacked, (-1 if x.shape[0] is None else x.shape[0] * od, *x.shape[2:4], kd * channels))
    taps_hw = (
        w[0]
        if kd == 1
        else shape_ops.reshape(shape_ops.transpose(w, (1, 2, 0, 3, 4)), (kh, kw, kd * channels, out_channels))
    )
    hw_pad = pad if isinstance(pad, str) else pad[1:]
    y = conv2d(images, taps_hw, s[1:], hw_pad, d[1:])
    y = shape_ops.reshape(y, (_batch_size(x), od, oh, ow, out_channels))
    return shape_ops.transpose(y, (0, 4, 1, 2, 3)) if ncdhw else y


def _output_shape_5d(output_shape, name: str, ncdhw: bool, where: str) -> tuple:
    """TensorFlow's 5-element ``output_shape`` (in the data format's layout; the batch may be None) -> NDHWC."""
    try:
        dims = tuple(None if v is None else _index(v) for v in output_shape)
    except (TypeError, ValueError):
        dims = ()
    if len(dims) != 5 or any(v is not None and v < 0 for v in dims) or None in dims[1:] or 0 in dims[1:]:
        layout = "(batch, channels, depth, height, width)" if ncdhw else "(batch, depth, height, width, channels)"
        raise ValueError(
            f"{name}: output_shape must be 5 ints {layout}, each but the batch (int or None) positive, "
            f"got {output_shape!r} {where}"
        )
    return (dims[0], *dims[2:], dims[1]) if ncdhw else dims


@_op_type(None, tensors=("input", "filters"))  # composite: one Conv2DBackpropInput over the stacked depth taps
def conv3d_transpose(
    input, filters, output_shape, strides, padding="SAME", data_format: str = "NDHWC", dilations=None
) -> Tensor:
    """Transposed 3-D convolution (TensorFlow's ``tf.nn.conv3d_transpose``): the gradient, with respect to its
    input, of the :func:`conv3d` that maps a volume of ``output_shape`` to ``input``'s shape.

    ``filters`` is ``(depth, height, width, output_channels, in_channels)``, as in TensorFlow (PyTorch's
    ``conv_transpose3d`` weight ``(in, out, kd, kh, kw)`` is it transposed ``(4, 3, 0, 1, 2)``).  ``output_shape``
    is the result's 5-D shape in ``data_format``'s layout (its batch may be None); ``input`` must be exactly what
    the conv3d of ``output_shape`` gives.  ``strides``, ``padding``, ``dilations`` and ``data_format="NCDHW"`` as
    for :func:`conv3d`.  The adjoint of conv3d's composition: one :func:`conv2d_backprop_input` over the (batch *
    input depth) images, then each depth tap's channels added back at the depths it reads, so its gradients (a
    conv3d for ``input``, ``Conv2DBackpropFilter`` for ``filters``, to any order) come from the ops it uses.

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.nn.conv3d_transpose(np.ones((1, 2, 2, 2, 1)), np.ones((2, 2, 2, 1, 1)), (1, 3, 3, 3, 1), 1, "VALID")
    >>> y.numpy()[0, :, :, :, 0].ravel().tolist()[:9]
    [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]
    >>> tl.nn.conv3d_transpose(np.ones((2, 4, 3, 3, 3)), np.ones((3, 3, 3, 5, 4)), (2, 5, 6, 6, 6), 2,
    ...                        data_format="NCDHW").shape
    (2, 5, 6, 6, 6)
    """
    name = "conv3d_transpose"
    g, w = as_tensors(input, filters)
    where = _where(g, w)
    g = _volume(name, data_format, g, w, "(depth, height, width, output_channels, in_channels)")
    ncdhw = data_format == "NCDHW"
    where = f"{where[:-1]}, output_shape {output_shape!r})"
    out = _output_shape_5d(output_shape, name, ncdhw, where)
    kd, kh, kw, channels, in_channels = w.shape
    if 0 in w.shape:
        raise ValueError(f"{name}: filter must not have zero elements {where}")
    if out[4] != channels:
        raise ValueError(f"{name}: output_shape has {out[4]} channels, filters output_channels {channels} {where}")
    s = _triple(strides, "strides", name, ncdhw, where)
    d = _triple(1 if dilations is None else dilations, "dilations", name, ncdhw, where)
    pad = _padding_3d(padding, name, ncdhw, True, where)
    depth, height, width = out[1:4]
    (od, oh, ow), pads = _sizes(name, (depth, height, width), (kd, kh, kw), s, d, pad, where)
    expected = (g.shape[0] if out[0] is None else out[0], od, oh, ow, in_channels)
    if tuple(g.shape[1:]) != expected[1:] or None not in (out[0], g.shape[0]) and out[0] != g.shape[0]:
        shown = (expected[0], in_channels, od, oh, ow) if ncdhw else expected
        raise ValueError(
            f"{name}: input must have the shape {shown} that conv3d gives for output_shape {tuple(output_shape)} "
            f"(strides {s}, padding {pad!r}, dilations {d}, filter in_channels {in_channels}) {where}"
        )
    rows = -1 if g.shape[0] is None else g.shape[0] * od
    taps_hw = (
        w[0]
        if kd == 1
        else shape_ops.reshape(shape_ops.transpose(w, (1, 2, 0, 3, 4)), (kh, kw, kd * channels, in_channels))
    )
    hw_pad = pad if isinstance(pad, str) else pad[1:]
    images = conv2d_backprop_input(
        (None if rows == -1 else rows, height, width, kd * channels),
        taps_hw,
        shape_ops.reshape(g, (rows, oh, ow, in_channels)),
        s[1:],
        hw_pad,
        d[1:],
    )
    # (batch, od, height, width, tap, channels): row o of tap i goes back to padded depth i * d + o * s
    taps = shape_ops.reshape(images, (_batch_size(g), od, height, width, kd, channels))
    reach = (od - 1) * s[0] + 1
    if s[0] > 1 and od > 1:  # the rows s apart: s - 1 zero rows after each, the trailing ones dropped
        spread = shape_ops.pad(shape_ops.expand_dims(taps, 2), ((0, 0), (0, 0), (0, s[0] - 1)) + ((0, 0),) * 4)
        taps = shape_ops.reshape(spread, (_batch_size(g), od * s[0], height, width, kd, channels))[:, :reach]
    padded = depth + sum(pads[0])
    total = None
    for i in range(kd):
        tap = shape_ops.pad(
            taps[:, :, :, :, i], ((0, 0), (i * d[0], padded - i * d[0] - reach), (0, 0), (0, 0), (0, 0))
        )
        total = tap if total is None else total + tap
    y = total[:, pads[0][0] : pads[0][0] + depth] if any(pads[0]) else total
    return shape_ops.transpose(y, (0, 4, 1, 2, 3)) if ncdhw else y


def _pool3d(kind, name: str, input, ksize, strides, padding, data_format):
    x = as_tensor(input)
    where = _where(x)
    x = _volume(name, data_format, x)
    ncdhw = data_format == "NCDHW"
    k = _triple(ksize, "ksize", name, ncdhw, where)
    s = _triple(strides, "strides", name, ncdhw, where)
    pad = _padding_3d(padding, name, ncdhw, kind is max_pool, where)  # explicit pads: max_pool's rule
    check_pool_padding(pad, k, name)
    depth, height, width, channels = x.shape[1:]
    (od, oh, ow), _ = _sizes(name, (depth, height, width), k, s, (1, 1, 1), pad, where)
    batch = _batch_size(x)
    # (height, width) of every depth slice, then (depth, 1) windows over (depth, height * width)
    explicit = not isinstance(pad, str)
    planes = kind(
        shape_ops.reshape(x, (-1 if batch == -1 else batch * depth, height, width, channels)),
        k[1:],
        s[1:],
        pad[1:] if explicit else pad,
    )
    columns = kind(
        shape_ops.reshape(planes, (batch, depth, oh * ow, channels)),
        (k[0], 1),
        (s[0], 1),
        (pad[0], (0, 0)) if explicit else pad,
    )
    y = shape_ops.reshape(columns, (batch, od, oh, ow, channels))
    return shape_ops.transpose(y, (0, 4, 1, 2, 3)) if ncdhw else y


@_op_type(None, tensors=("input",))
def max_pool3d(input, ksize, strides, padding, data_format: str = "NDHWC", **torch_options) -> Tensor:
    """3-D max pooling of an NDHWC tensor (``data_format="NCDHW"``: channels first), TensorFlow's
    ``tf.nn.max_pool3d``: padded cells never win, the gradient goes to each window's first maximum.
    ``ksize`` and ``strides`` as an int, ``(depth, rows, cols)`` or ``[1, d, h, w, 1]``; ``padding``
    ``"VALID"``, ``"SAME"`` or explicit ``((front, back), (top, bottom), (left, right))``, each smaller than the
    window.  A :func:`max_pool` over (height, width), then one over depth.  PyTorch's ``dilations``,
    ``ceil_mode`` and ``return_indices`` as :func:`max_pool`'s (over gathered windows).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2, 1), 2, 2, "VALID").numpy().ravel().tolist()
    [7.0]
    """
    if torch_options or not tf_padding(padding):
        return torch_pool("max", "max_pool3d", input, ksize, strides, padding, data_format, **torch_options)
    return _pool3d(max_pool, "max_pool3d", input, ksize, strides, padding, data_format)


@_op_type(None, tensors=("input",))
def avg_pool3d(input, ksize, strides, padding, data_format: str = "NDHWC", **torch_options) -> Tensor:
    """3-D average pooling of an NDHWC tensor (``data_format="NCDHW"``: channels first), TensorFlow's
    ``tf.nn.avg_pool3d``: with ``"SAME"`` each window averages only its cells inside the input.  Arguments
    as for :func:`max_pool3d`; an :func:`avg_pool` over (height, width), then one over depth.  PyTorch's explicit
    ``padding`` with ``count_include_pad``, ``ceil_mode`` and ``divisor_override`` as :func:`avg_pool`'s.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.avg_pool3d(np.arange(8.0).reshape(1, 2, 2, 2, 1), 2, 2, "SAME").numpy().ravel().tolist()
    [3.5]
    """
    if torch_options or not tf_padding(padding):
        return torch_pool("avg", "avg_pool3d", input, ksize, strides, padding, data_format, **torch_options)
    return _pool3d(avg_pool, "avg_pool3d", input, ksize, strides, padding, data_format)

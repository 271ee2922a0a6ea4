"""Convolutions built from other ops: ``conv1d`` (a Conv2D of height 1) and ``depthwise_conv2d`` (a sum of
shifted, strided slices times the filter taps: one slice and one multiply per tap, no loop over channels).

Both are exact compositions, so their gradients for the input and the filter (to any order), tracing and
every backend come from the ops they use."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...dispatch import as_tensor, as_tensors
from ...tensor import Tensor
from .. import math as math_ops
from .. import shape as shape_ops
from ._common import _geometry, _index, _nchw_padding, _nchw_window, _op_type, _padding_attr, _window_pair
from .conv import conv2d, conv2d_transpose


def _shape_text(x, filters) -> str:
    return f"(input shape {tuple(x.shape)} {x.dtype}, filter shape {tuple(filters.shape)} {filters.dtype})"


# ------------------------------------------------------------------ conv1d
def _one(value, what: str, name: str) -> int:
    """An int, ``[s]`` or TensorFlow's ``[1, s, 1]`` -> ``s``."""
    if value is None:
        return 1
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        items = (int(value),)
    else:
        try:
            items = tuple(_index(v) for v in value)
        except (TypeError, ValueError):
            items = ()
        if len(items) == 3 and items[0] == items[2] == 1:
            items = items[1:2]
    if len(items) != 1 or items[0] < 1:
        raise ValueError(f"{name}: {what} must be a positive int, [s] or [1, s, 1], got {value!r}")
    return items[0]


def _padding_1d(padding, name: str):
    if isinstance(padding, str) and padding.upper() in ("VALID", "SAME"):
        return _padding_attr(padding, name, explicit=False)
    try:
        pairs = [tuple(_index(v) for v in pair) for pair in padding]
    except (TypeError, ValueError):
        pairs = []
    if len(pairs) == 3 and pairs[0] == pairs[2] == (0, 0):
        pairs = pairs[1:2]
    try:
        flat = tuple(_index(v) for v in padding) if not pairs else ()
    except (TypeError, ValueError):
        flat = ()
    if len(flat) == 2:
        pairs = [flat]
    if len(pairs) != 1 or len(pairs[0]) != 2 or min(pairs[0]) < 0:
        raise ValueError(f"{name}: padding must be 'VALID', 'SAME' or (left, right), got {padding!r}")
    return ((0, 0), pairs[0])


def _check_width(width, window, stride: int, dilation: int, padding, name: str, where: str) -> None:
    """The 1-D geometry, checked before the height-1 op runs: its error named that op (``Conv2D``, ``MaxPool``)
    and its internal 4-D shapes, never the 1-D op and the shapes its caller passed."""
    if width is None or window is None:
        return
    try:
        _geometry((1, width), (1, window), (1, stride), (1, dilation), padding)
    except ValueError as e:
        raise ValueError(f"{name}: {e} {where}") from None


@_op_type(None, tensors=("input", "filters"))  # composite: "Conv2D" names tl.nn.conv2d in explain
def conv1d(input, filters, stride, padding, dilations=1, data_format: str = "NWC") -> Tensor:
    """1-D convolution of an NWC ``input`` (batch, width, channels) with a WIO ``filters`` tensor (width,
    in_channels, out_channels), TensorFlow's ``tf.nn.conv1d``: a ``Conv2D`` of height 1.

    ``stride`` and ``dilations`` are an int, ``[s]`` or ``[1, s, 1]``; ``padding`` is ``"VALID"``,
    ``"SAME"`` (TensorFlow's rule) or explicit ``(left, right)``.  ``data_format="NCW"`` takes and returns
    channels-first tensors (PyTorch's ``conv1d`` layout; the filters stay WIO).

    >>> import numpy as np, tensorlib as tl
    >>> x = tl.tensor(np.arange(5.0).reshape(1, 5, 1))
    >>> tl.nn.conv1d(x, np.ones((2, 1, 1)), stride=1, padding="VALID").numpy()[0, :, 0].tolist()
    [1.0, 3.0, 5.0, 7.0]
    """
    name = "conv1d"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"{name}: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    x, filters = as_tensors(input, filters)
    where = _shape_text(x, filters)  # the shapes passed (an NCW input was reported transposed)
    if x.ndim != 3 or filters.ndim != 3:
        layout = "NCW (batch, channels, width)" if data_format == "NCW" else "NWC (batch, width, channels)"
        raise ValueError(
            f"{name}: input must be 3-D {layout} and filters 3-D WIO (width, in_channels, out_channels) {where}"
        )
    if data_format == "NCW":
        x = shape_ops.transpose(x, (0, 2, 1))
    if None not in (x.shape[2], filters.shape[1]) and x.shape[2] != filters.shape[1]:
        raise ValueError(
            f"{name}: input channels {x.shape[2]} do not match filter in_channels {filters.shape[1]} {where}"
        )
    s, d = _one(stride, "stride", name), _one(dilations, "dilations", name)
    padding = _padding_1d(padding, name)
    _check_width(x.shape[1], filters.shape[0], s, d, padding, name, where)
    y = conv2d(shape_ops.expand_dims(x, 1), shape_ops.expand_dims(filters, 0), (1, s), padding, (1, d))
    y = shape_ops.squeeze(y, 1)
    return shape_ops.transpose(y, (0, 2, 1)) if data_format == "NCW" else y


@_op_type(None, tensors=("input", "filters"))  # composite: one Conv2DBackpropInput of height 1
def conv1d_transpose(
    input, filters, output_shape, strides, padding="SAME", data_format: str = "NWC", dilations=None
) -> Tensor:
    """Transposed 1-D convolution (TensorFlow's ``tf.nn.conv1d_transpose``): the gradient, with respect to its
    input, of the :func:`conv1d` that maps ``output_shape`` ``(batch, width, channels)`` (NCW: ``(batch, channels,
    width)``; the batch may be None) to ``input``'s shape; a :func:`conv2d_transpose` of height 1.

    ``filters`` is ``(width, output_channels, in_channels)``; ``strides`` and ``dilations`` an int, ``[s]`` or
    ``[1, s, 1]``; ``padding`` ``"SAME"``, ``"VALID"`` or explicit ``(left, right)``.  PyTorch's
    ``conv_transpose1d`` weight ``(in, out, kw)`` is these filters transposed ``(2, 1, 0)``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.conv1d_transpose(np.ones((1, 2, 1)), np.ones((3, 1, 1)), (1, 5, 1), 2, "VALID").numpy().ravel().tolist()
    [1.0, 1.0, 2.0, 1.0, 1.0]
    """
    name = "conv1d_transpose"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"{name}: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    x, w = as_tensors(input, filters)
    where = f"{_shape_text(x, w)[:-1]}, output_shape {output_shape!r})"
    if x.ndim != 3 or w.ndim != 3:
        layout = "NCW (batch, channels, width)" if data_format == "NCW" else "NWC (batch, width, channels)"
        raise ValueError(
            f"{name}: input must be 3-D {layout} and filters 3-D (width, output_channels, in_channels) {where}"
        )
    try:
        shape = tuple(None if v is None else _index(v) for v in output_shape)
    except (TypeError, ValueError):
        shape = ()
    if len(shape) != 3:
        raise ValueError(f"{name}: output_shape must be 3 ints (batch, width, channels in data_format's order) {where}")
    s, d = _one(strides, "strides", name), _one(dilations, "dilations", name)
    padding = _padding_1d(padding, name)
    first = data_format == "NCW"
    channels, width = (shape[1], shape[2]) if first else (shape[2], shape[1])
    x_channels, x_width = (x.shape[1], x.shape[2]) if first else (x.shape[2], x.shape[1])
    if channels != w.shape[1]:
        raise ValueError(f"{name}: output_shape has {channels} channels, filters output_channels {w.shape[1]} {where}")
    if None not in (width, w.shape[0]):
        try:
            (_, out_width), _ = _geometry((1, width), (1, w.shape[0]), (1, s), (1, d), padding)
        except ValueError as e:
            raise ValueError(f"{name}: {e} {where}") from None
        if (x_width, x_channels) != (out_width, w.shape[2]):
            raise ValueError(
                f"{name}: input must have width {out_width} and {w.shape[2]} (filter in_channels) channels, what "
                f"conv1d gives for output_shape {tuple(output_shape)} (stride {s}, padding {padding if isinstance(padding, str) else padding[1]!r}, dilation "
                f"{d}) {where}"
            )
    image_shape = (shape[0], shape[1], 1, shape[2]) if first else (shape[0], 1, *shape[1:])
    try:
        y = conv2d_transpose(
            shape_ops.expand_dims(x, 2 if first else 1),
            shape_ops.expand_dims(w, 0),
            image_shape,
            (1, s),
            padding,
            (1, d),
            data_format="NCHW" if first else "NHWC",
        )
    except (ValueError, TypeError) as e:
        raise type(e)(f"{name}: {e} (as a height-1 image) {where}") from None
    return shape_ops.squeeze(y, 2 if first else 1)


# ------------------------------------------------------------------ depthwise_conv2d
@_op_type(None, tensors=("input", "filter"))
def depthwise_conv2d(input, filter, strides, padding, dilations=1, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """Depthwise 2-D convolution (TensorFlow's ``tf.nn.depthwise_conv2d``): each input channel ``c`` is
    convolved with its own ``filter[:, :, c, :]`` (``channel_multiplier`` outputs per channel), giving
    ``in_channels * channel_multiplier`` channels, output channel ``c * channel_multiplier + m``.

    ``filter`` is ``(height, width, in_channels, channel_multiplier)``; ``strides``, ``padding`` and
    ``dilations`` as for :func:`conv2d`.  PyTorch's ``conv2d(..., groups=in_channels)`` with the
    filter transposed to ``(in_channels * multiplier, 1, height, width)``.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.ones((1, 3, 3, 2))
    >>> w = np.stack([np.ones((2, 2)), 2 * np.ones((2, 2))], -1)[..., None]   # (2, 2, 2, 1)
    >>> tl.nn.depthwise_conv2d(x, w, strides=1, padding="VALID").numpy()[0, 0, 0].tolist()
    [4.0, 8.0]
    """
    name = "depthwise_conv2d"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{name}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    x, w = as_tensors(input, filter)
    where = _shape_text(x, w)  # the shapes passed (an NCHW input was quoted transposed)
    if data_format == "NCHW" and x.ndim == 4:
        x = shape_ops.transpose(x, (0, 2, 3, 1))
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError(
            f"{name}: input must be 4-D NHWC and filter 4-D (height, width, in_channels, channel_multiplier) {where}"
        )
    if x.dtype.kind != "f" or w.dtype.kind != "f":
        raise TypeError(f"{name}: input and filter must be floating-point tensors {where}")
    if None in x.shape[1:] or None in w.shape:
        raise ValueError(f"{name}: every dimension but the batch must be known {where}")
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"{name}: input depth {x.shape[3]} does not match filter in_channels {w.shape[2]} {where}")
    if 0 in w.shape:
        raise ValueError(f"{name}: filter must not have zero elements {where}")
    nchw = data_format == "NCHW"  # TensorFlow's NCHW forms: strides [1, 1, s, s], pads [[0, 0], [0, 0], [t, b], [l, r]]
    sh, sw = _window_pair(_nchw_window(strides, nchw), "strides", name)
    dh, dw = _window_pair(dilations, "dilations", name)
    pad_attr = _padding_attr(_nchw_padding(padding, nchw), name)
    kh, kw, channels, multiplier = w.shape
    try:
        (oh, ow), pads = _geometry(tuple(x.shape[1:3]), (kh, kw), (sh, sw), (dh, dw), pad_attr)
    except ValueError as e:
        raise ValueError(f"{name}: {e} {where}") from None
    # float16 sums of the taps' products ran in float16 (3-8 ulps off on average, 5x conv2d's error): in float32.
    narrow = x.dtype == w.dtype == _dt.float16
    if narrow:
        x, w = math_ops.cast(x, _dt.float32), math_ops.cast(w, _dt.float32)
    if any(p for pair in pads for p in pair):
        x = shape_ops.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    total = None
    for i in range(kh):
        rows = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh) if oh else slice(0, 0)
        for j in range(kw):
            cols = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw) if ow else slice(0, 0)
            patch = x[:, rows, cols, :]
            term = patch * w[i, j, :, 0] if multiplier == 1 else shape_ops.expand_dims(patch, -1) * w[i, j]
            total = term if total is None else total + term
    batch = -1 if x.shape[0] is None else x.shape[0]
    y = shape_ops.reshape(total, (batch, oh, ow, channels * multiplier))
    if narrow:
        y = math_ops.cast(y, _dt.float16)
    return shape_ops.transpose(y, (0, 3, 1, 2)) if data_format == "NCHW" else y

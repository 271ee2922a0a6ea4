"""PyTorch's pooling geometry, and pools over gathered windows for what the AvgPool and MaxPool kernels do not
cover: ``ceil_mode`` (the last window must start inside the input or its left padding), ``count_include_pad``,
``divisor_override``, dilated max pooling, ``return_indices`` (flat indices into the spatial dimensions, per
example and channel), for 1, 2 or 3 spatial dimensions, channels last or first.

A pooled axis of ``n`` cells, padded with ``(left, right)`` plus the cells ceil mode adds on the right, becomes two
axes ``(out, k)``: the window cells, one gather.  A max takes each window's first maximum (its last NaN, as
PyTorch's), read back with ``take_along_axis`` so that its gradient goes to that cell alone; an average is a sum
over the window cells divided by PyTorch's divisor.  Every step is an op, so gradients (to any order), tracing
and every backend come from them."""

from __future__ import annotations

import numpy as np

from ...dispatch import as_tensor
from ...tensor import Tensor
from .. import array as array_ops
from .. import math as math_ops
from .. import random as random_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from ._common import _index, _op_type
from .adaptive import _max_indices

LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def where_of(x) -> str:
    return f"(input shape {tuple(x.shape)}, {x.dtype})"


def spatial_axes(x, data_format, name: str) -> tuple:
    """``(rank, the spatial axes, channels_first)`` of ``x`` laid out as ``data_format`` (None: channels last)."""
    rank = x.ndim - 2
    if rank not in LAYOUTS:
        raise ValueError(
            f"{name}: input must have 1, 2 or 3 spatial dimensions besides batch and channels {where_of(x)}"
        )
    layouts = LAYOUTS[rank]
    data_format = layouts[0] if data_format is None else data_format
    if data_format not in layouts:
        raise ValueError(f"{name}: data_format must be {layouts[0]!r} or {layouts[1]!r} for this input {where_of(x)}")
    first = data_format[1] == "C"
    axes = tuple(range(2, 2 + rank)) if first else tuple(range(1, 1 + rank))
    if any(x.shape[a] is None for a in axes):
        raise ValueError(f"{name}: the spatial sizes must be known {where_of(x)}")
    return rank, axes, first


def window(value, rank: int, what: str, name: str, first: bool) -> tuple:
    """An int, ``rank`` ints, or TensorFlow's ``rank + 2`` form (1 for batch and channels) -> ``rank`` ints >= 1."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        items = (int(value),) * rank
    else:
        try:
            items = tuple(_index(v) for v in value)
        except (TypeError, ValueError):
            items = ()
        if len(items) == rank + 2 and items[0] == 1 and items[1 if first else -1] == 1:
            items = items[2:] if first else items[1:-1]
    if len(items) != rank or min(items) < 1:
        raise ValueError(f"{name}: {what} must be an int >= 1 or {rank} of them, got {value!r}")
    return items


def tf_padding(padding) -> bool:
    """TensorFlow's padding: a string or (before, after) pairs; PyTorch's ints take :func:`explicit_pads`."""
    return isinstance(padding, str) or (
        isinstance(padding, (tuple, list)) and all(isinstance(p, (tuple, list)) for p in padding)
    )


def torch_ints(padding, rank: int) -> bool:
    """PyTorch's padding: an int or ``rank`` ints, one pad for both sides of each axis (for one axis, two ints are
    ``max_pool1d``'s ``(left, right)``)."""
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        return True
    return (
        isinstance(padding, (tuple, list))
        and len(padding) == rank
        and all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in padding)
    )


def explicit_pads(padding, rank: int, name: str):
    """``"VALID"``, ``"SAME"``, or PyTorch's ``p`` / ``(p, ...)`` / ``((left, right), ...)`` -> ``rank`` pairs (one
    axis: ``(left, right)`` too, as ``max_pool1d`` takes it)."""
    if isinstance(padding, str) and padding.upper() in ("VALID", "SAME"):
        return padding.upper()
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool) and padding >= 0:
        return ((int(padding), int(padding)),) * rank
    try:
        items = tuple(padding)
        pairs = tuple((_index(p), _index(p)) if np.ndim(p) == 0 else tuple(_index(v) for v in p) for p in items)
    except (TypeError, ValueError):
        pairs = ()
    if rank == 1 and len(pairs) == 2 and all(np.ndim(p) == 0 for p in items):  # max_pool1d's (left, right)
        pairs = (tuple(_index(p) for p in items),)
    if len(pairs) == rank + 2 and pairs[0] == (0, 0):  # TensorFlow's form, batch and channels unpadded
        pairs = pairs[1:-1] if pairs[-1] == (0, 0) else pairs[2:]
    if len(pairs) != rank or any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise ValueError(
            f"{name}: padding must be 'VALID', 'SAME', an int, {rank} ints or {rank} (before, after) pairs, got "
            f"{padding!r}"
        )
    return pairs


def geometry(n: int, k: int, s: int, d: int, pads, ceil_mode: bool, name: str, where: str) -> tuple:
    """``(out, left, right, extra)`` of one axis: PyTorch's output size (ceil mode keeps a last window only where
    it starts inside the input or its left padding) and the cells ceil mode pads on the right beyond ``right``."""
    effective = d * (k - 1) + 1
    if pads == "SAME":
        out = -(-n // s)
        total = max((out - 1) * s + effective - n, 0)
        pads = (total // 2, total - total // 2)
    elif pads == "VALID":
        pads = (0, 0)
    left, right = pads
    if max(left, right) >= effective:
        raise ValueError(f"{name}: each padding must be smaller than the window {effective}, got {pads} {where}")
    span = n + left + right - effective
    if span < 0:
        raise ValueError(f"{name}: the window {effective} is larger than the padded input {n + left + right} {where}")
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + left:
        out -= 1
    return out, left, right, max(0, (out - 1) * s + effective - (n + left + right))


def divisors(n: int, k: int, s: int, out: int, left: int, right: int, count_include_pad: bool) -> np.ndarray:
    """PyTorch's ``avg_pool`` divisor of each window of one axis: the window clipped to the padded input (ceil
    mode's cells never count), or to the input alone."""
    start = np.arange(out) * s - left
    end = np.minimum(start + k, n + right)
    if count_include_pad:
        return end - start
    return np.minimum(end, n) - np.maximum(start, 0)


def padded(x, axes: tuple, geoms: list, fill):
    pairs = [(0, 0)] * x.ndim
    for axis, (_, left, right, extra) in zip(axes, geoms):
        pairs[axis] = (left, right + extra)
    if not any(sum(p) for p in pairs):
        return x
    return shape_ops.pad(x, pairs, fill)


def gathered(x, axes: tuple, geoms: list, ksize: tuple, strides: tuple, dilations: tuple):
    """``x`` (padded) with each pooled axis replaced by its windows' cells, those moved first and flattened:
    ``(K, ..., out_1, ..., out_r, ...)`` with ``K = prod(ksize)``.  First, not last: a max, min or sum over a
    short last axis ran 20-50x slower in NumPy than the same reduction over a leading one (elementwise across
    ``K`` contiguous slabs), and the transpose that gathers the cells copies either way."""
    for axis, (out, *_), k, s, d in reversed(list(zip(axes, geoms, ksize, strides, dilations))):
        table = (np.arange(out) * s)[:, None] + (np.arange(k) * d)[None, :]
        shape = tuple(-1 if size is None else size for size in x.shape)
        x = shape_ops.take(x, table.ravel(), axis=axis)
        x = shape_ops.reshape(x, shape[:axis] + (out, k) + shape[axis + 1 :])
    window_axes = [axis + i + 1 for i, axis in enumerate(axes)]
    rest = [a for a in range(x.ndim) if a not in window_axes]
    x = shape_ops.transpose(x, window_axes + rest)
    shape = tuple(-1 if size is None else size for size in x.shape[len(window_axes) :])
    return shape_ops.reshape(x, (int(np.prod(ksize)),) + shape)


def _to_layout(table: np.ndarray, x_ndim: int, axes: tuple) -> np.ndarray:
    """A ``(out_1, ..., out_r, ...)`` table shaped to broadcast against pooled outputs laid out as ``x``."""
    shape = [1] * x_ndim
    for axis, size in zip(axes, table.shape):
        shape[axis] = size
    return table.reshape(tuple(shape) + table.shape[len(axes) :])


def _cells_first(table: np.ndarray, x_ndim: int, axes: tuple) -> np.ndarray:
    """A ``(out_1, ..., out_r, K)`` table shaped as :func:`gathered`'s windows: ``K`` first, then ``x``'s layout."""
    return np.moveaxis(_to_layout(table, x_ndim, axes), -1, 0)


def cell_tables(in_sizes, geoms, ksize, strides, dilations) -> tuple:
    """``(flat, tap)``, both ``(out_1, ..., out_r, K)``: each window cell's flat index into the unpadded spatial
    dimensions (PyTorch's ``return_indices``), and its tap number, -1 for a padding cell."""
    flat, valid = np.zeros((1,) * (2 * len(ksize)), np.int64), np.ones((1,) * (2 * len(ksize)), bool)
    stride = 1
    for i in reversed(range(len(ksize))):
        out, left = geoms[i][0], geoms[i][1]
        cells = (np.arange(out) * strides[i])[:, None] + (np.arange(ksize[i]) * dilations[i])[None, :] - left
        shape = [1] * (2 * len(ksize))
        shape[i], shape[len(ksize) + i] = out, ksize[i]
        cells = cells.reshape(shape)
        flat, valid = flat + cells * stride, valid & (cells >= 0) & (cells < in_sizes[i])
        stride *= in_sizes[i]
    outs = tuple(g[0] for g in geoms)
    taps = np.broadcast_to(np.arange(int(np.prod(ksize))).reshape(ksize), valid.shape)
    flat = np.broadcast_to(flat, valid.shape).reshape(outs + (-1,))
    return flat, np.where(valid, taps, -1).reshape(outs + (-1,))


def gathered_max(x, axes: tuple, geoms: list, ksize, strides, dilations, return_indices: bool, name: str):
    """The max of each window (its first maximum, or its last NaN) and, with ``return_indices``, its flat index."""
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    windows = gathered(padded(x, axes, geoms, fill), axes, geoms, ksize, strides, dilations)
    flat, taps = cell_tables([x.shape[a] for a in axes], geoms, ksize, strides, dilations)
    if (taps < 0).all(-1).any():  # dilated taps stepping over a small input: a window of padding alone
        raise ValueError(f"{name}: a window covers no input cell (only padding) {where_of(x)}")
    taps = _cells_first(taps, x.ndim, axes).astype(np.int32)  # int32: the selects over every cell, half of int64's
    local = shape_ops.expand_dims(_max_indices(windows, (0,), taps), 0)
    values = shape_ops.squeeze(array_ops.take_along_axis(windows, local, axis=0), 0)
    if not return_indices:
        return values
    positions = as_tensor(_cells_first(flat, x.ndim, axes))
    return values, shape_ops.squeeze(array_ops.take_along_axis(positions, local, axis=0), 0)


def gathered_sum(x, axes: tuple, geoms: list, ksize, strides) -> Tensor:
    ones = (1,) * len(ksize)
    return reduce_ops.sum(gathered(padded(x, axes, geoms, 0), axes, geoms, ksize, strides, ones), axis=0)


def avg_divisor(x, axes: tuple, geoms: list, ksize, strides, count_include_pad: bool) -> np.ndarray:
    """PyTorch's divisor of every window, shaped to broadcast against the pooled output."""
    table = np.ones((), np.int64)
    for (out, left, right, _), n, k, s in zip(geoms, [x.shape[a] for a in axes], ksize, strides):
        table = np.multiply.outer(table, divisors(n, k, s, out, left, right, count_include_pad))
    return _to_layout(table, x.ndim, axes)


def scaled(y: Tensor, factor: np.ndarray) -> Tensor:
    """``y * factor`` (a NumPy table), skipped where every factor is 1, in ``y``'s dtype."""
    if np.all(factor == 1):
        return y
    return math_ops.multiply(y, as_tensor(factor.astype(y.dtype)))


# ------------------------------------------------------------------ PyTorch's unfold (im2col) and fold (col2im)
def _im2col_geometry(x, kernel_size, dilation, padding, stride, name: str, sizes=None) -> tuple:
    """``(ksize, dilations, strides, pads, geoms)`` of PyTorch's ``unfold``/``fold`` over 2 spatial axes of
    ``sizes`` (the input's height and width)."""
    where = where_of(x)
    k = window(kernel_size, 2, "kernel_size", name, True)
    d = window(dilation, 2, "dilation", name, True)
    s = window(stride, 2, "stride", name, True)
    pads = explicit_pads(padding, 2, name)
    if isinstance(pads, str):
        raise ValueError(f"{name}: padding must be an int or 2 ints, got {padding!r} {where}")
    geoms = []
    for n, ki, si, di, (left, right) in zip(sizes, k, s, d, pads):
        span = n + left + right - di * (ki - 1) - 1
        if span < 0:
            raise ValueError(f"{name}: the kernel {k} (dilation {d}) is larger than the padded input {where}")
        geoms.append((span // si + 1, left, right, 0))
    return k, d, s, geoms


@_op_type(None, tensors=("input",))
def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """PyTorch's ``F.unfold`` (im2col) of an NCHW ``input``: ``(N, C * kh * kw, L)`` (an unbatched ``(C, H, W)``
    input gives ``(C * kh * kw, L)``), row ``c * kh * kw + i * kw + j`` holding tap ``(i, j)`` of channel ``c`` for each of the ``L`` windows in row-major order (zeros where a window
    covers padding).  One gather per spatial axis, so gradients, tracing and ``tl.vmap`` come from ops.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.unfold(np.arange(9.0).reshape(1, 1, 3, 3), 2).numpy()[0].tolist()
    [[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]
    """
    name = "unfold"
    x = as_tensor(input)
    if x.ndim == 3 and None not in x.shape:  # PyTorch's unbatched (C, H, W) -> (C * kh * kw, L)
        return shape_ops.squeeze(unfold(shape_ops.expand_dims(x, 0), kernel_size, dilation, padding, stride), 0)
    if x.ndim != 4 or None in x.shape[1:]:
        raise ValueError(
            f"{name}: input must be 4-D (N, C, H, W) with known C, H, W, or 3-D (C, H, W) of known sizes {where_of(x)}"
        )
    k, d, s, geoms = _im2col_geometry(x, kernel_size, dilation, padding, stride, name, x.shape[2:])
    columns = gathered(padded(x, (2, 3), geoms, 0), (2, 3), geoms, k, s, d)  # (K, N, C, oh, ow)
    columns = shape_ops.transpose(columns, (1, 2, 0, 3, 4))
    batch = -1 if x.shape[0] is None else x.shape[0]
    return shape_ops.reshape(columns, (batch, x.shape[1] * k[0] * k[1], geoms[0][0] * geoms[1][0]))


@_op_type(None, tensors=("input",))
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """PyTorch's ``F.fold`` (col2im), the transpose of :func:`unfold`: ``(N, C * kh * kw, L)`` columns summed back
    into an NCHW image of spatial size ``output_size`` (overlapping taps add up; taps on the padding are
    dropped); unbatched ``(C * kh * kw, L)`` columns give ``(C, H, W)``, as PyTorch's.  A scatter-add, so gradients (an unfold), tracing and ``tl.vmap`` come from ops.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> tl.nn.fold(tl.nn.unfold(x, 2), (3, 3), 2).numpy()[0, 0].tolist()  # each cell times its window count
    [[0.0, 2.0, 2.0], [6.0, 16.0, 10.0], [6.0, 14.0, 8.0]]
    """
    name = "fold"
    x = as_tensor(input)
    sizes = window(output_size, 2, "output_size", name, True)
    if x.ndim == 2 and None not in x.shape:  # PyTorch's unbatched (C * kh * kw, L) -> (C, H, W)
        return shape_ops.squeeze(fold(shape_ops.expand_dims(x, 0), sizes, kernel_size, dilation, padding, stride), 0)
    if x.ndim != 3 or None in x.shape[1:]:
        raise ValueError(
            f"{name}: input must be 3-D (N, C * kh * kw, L) with known C * kh * kw and L, or 2-D (C * kh * kw, L) of "
            f"known sizes {where_of(x)}"
        )
    k, d, s, geoms = _im2col_geometry(x, kernel_size, dilation, padding, stride, name, sizes)
    taps, blocks = k[0] * k[1], geoms[0][0] * geoms[1][0]
    if x.shape[1] % taps or x.shape[2] != blocks:
        raise ValueError(
            f"{name}: input must be (N, C * {taps}, {blocks}) for kernel {k} and output_size {sizes} {where_of(x)}"
        )
    channels = x.shape[1] // taps
    padded_hw = [n + left + right for n, (_, left, right, _) in zip(sizes, geoms)]
    # each (tap, window)'s flat cell in the padded image, the order of unfold's rows and columns
    rows = (np.arange(geoms[0][0]) * s[0])[None, :, None] + (np.arange(k[0]) * d[0])[:, None, None]
    cols = (np.arange(geoms[1][0]) * s[1])[None, :, None] + (np.arange(k[1]) * d[1])[:, None, None]
    cells = rows[:, None, :, None, 0] * padded_hw[1] + cols[None, :, None, :, 0]  # (kh, kw, oh, ow)
    batch = -1 if x.shape[0] is None else x.shape[0]
    updates = shape_ops.transpose(shape_ops.reshape(x, (batch, channels, taps * blocks)), (2, 0, 1))
    one_row = math_ops.zeros_like(updates[:1])  # (1, N, C): the batch may be known only when a graph runs
    image = shape_ops.pad(one_row, [(0, padded_hw[0] * padded_hw[1] - 1), (0, 0), (0, 0)])
    image = shape_ops.tensor_scatter_nd_add(image, cells.reshape(-1, 1), updates)
    image = shape_ops.transpose(shape_ops.reshape(image, (*padded_hw, batch, channels)), (2, 3, 0, 1))
    (top, _), (left, _) = geoms[0][1:3], geoms[1][1:3]
    return image[:, :, top : top + sizes[0], left : left + sizes[1]]


# ------------------------------------------------------------------ PyTorch's fractional_max_pool2d
def _fractional_starts(n: int, k: int, out: int, samples) -> Tensor:
    """PyTorch's pseudo-random window starts along one axis for each sample ``u`` in [0, 1) (a tensor ``(N, C)``):
    ``int((i + u) alpha) - int(u alpha)`` with ``alpha = (n - k) / (out - 1)`` in the samples' dtype, the last
    window at ``n - k``; ``(N, C, out)`` int64."""
    last = math_ops.cast(math_ops.zeros_like(samples[..., None]), np.int64) + (n - k)
    if out == 1:
        return last
    dtype = np.dtype(samples.dtype).type
    alpha = dtype(n - k) / dtype(out - 1)
    steps = np.arange(out - 1, dtype=dtype)
    starts = math_ops.cast((samples[..., None] + steps) * alpha, np.int64)
    starts = starts - math_ops.cast(samples * alpha, np.int64)[..., None]
    return shape_ops.concat([starts, last], axis=-1)


@_op_type(None, tensors=("input",))
def fractional_max_pool2d(
    input,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    random_samples=None,
    data_format: str = "NHWC",
):
    """PyTorch's ``F.fractional_max_pool2d``: the max over ``kernel_size`` windows whose starts step
    pseudo-randomly so that the output has ``output_size`` (or ``output_ratio`` times the input's) cells; the
    steps come from ``random_samples`` ``(N, C, 2)`` in [0, 1) (column then row, as PyTorch's
    ``_random_samples``; drawn from the stream ``tl.random.seed`` resets when not given).  ``return_indices``
    returns the flat spatial index of each window's first maximum (or last NaN) too.  NHWC by default,
    ``data_format="NCHW"`` for PyTorch's layout.

    >>> import numpy as np, tensorlib as tl
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> samples = np.full((1, 1, 2), 0.5)
    >>> tl.nn.fractional_max_pool2d(x, 2, 2, random_samples=samples, data_format="NCHW").numpy()[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    name = "fractional_max_pool2d"
    x = as_tensor(input)
    if data_format not in ("NHWC", "NCHW") or x.ndim != 4 or None in x.shape[1:] or x.dtype.kind != "f":
        raise ValueError(
            f"{name}: input must be a 4-D float {data_format} tensor of known channels, height and width (the batch "
            f"may be unknown when traced) {where_of(x)}"
        )
    nchw = x if data_format == "NCHW" else shape_ops.transpose(x, (0, 3, 1, 2))
    n, c, h, w = nchw.shape
    kh, kw = window(kernel_size, 2, "kernel_size", name, True)
    if (output_size is None) == (output_ratio is None):
        raise ValueError(f"{name}: give exactly one of output_size and output_ratio {where_of(x)}")
    if output_size is not None:
        oh, ow = window(output_size, 2, "output_size", name, True)
    else:
        ratio = (output_ratio,) * 2 if np.ndim(output_ratio) == 0 else tuple(output_ratio)
        if len(ratio) != 2 or not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{name}: output_ratio must be in (0, 1), one or two of them, got {output_ratio!r}")
        oh, ow = int(h * ratio[0]), int(w * ratio[1])
    if oh + kh - 1 > h or ow + kw - 1 > w:
        raise ValueError(
            f"{name}: output_size ({oh}, {ow}) + kernel_size ({kh}, {kw}) - 1 exceeds the input {where_of(x)}"
        )
    if random_samples is None:  # uniform((n, c, 2))'s numbers, also for a batch known only when the graph runs
        random_samples = random_ops.uniform_like(math_ops.zeros_like(nchw[:, :, 0, :1]) + np.zeros(2, x.dtype))
    samples = as_tensor(random_samples)
    if (
        len(samples.shape) != 3
        or tuple(samples.shape[1:]) != (c, 2)
        or (None not in (n, samples.shape[0]) and samples.shape[0] != n)
        or samples.dtype.kind != "f"
    ):
        raise ValueError(f"{name}: random_samples must be floats of shape ({n}, {c}, 2) {where_of(x)}")
    u = samples if samples.dtype == x.dtype else math_ops.cast(samples, x.dtype)
    rows, cols = _fractional_starts(h, kh, oh, u[..., 1]), _fractional_starts(w, kw, ow, u[..., 0])
    cells = (rows[..., :, None, None, None] + np.arange(kh)[:, None]) * w + cols[..., None, :, None, None]
    batch = -1 if n is None else n  # traced with an unknown batch: the one size a reshape leaves open
    cells = shape_ops.reshape(cells + np.arange(kw), (batch, c, oh, ow, kh * kw))  # each window cell's flat index
    flat = shape_ops.reshape(nchw, (batch, c, h * w))
    windows = array_ops.take_along_axis(flat, shape_ops.reshape(cells, (batch, c, oh * ow * kh * kw)), axis=2)
    windows = shape_ops.reshape(windows, (batch, c, oh, ow, kh * kw))
    local = shape_ops.expand_dims(_max_indices(windows, (-1,), np.arange(kh * kw)), -1)
    values = shape_ops.squeeze(array_ops.take_along_axis(windows, local, axis=-1), -1)
    indices = shape_ops.squeeze(array_ops.take_along_axis(cells, local, axis=-1), -1)
    if data_format == "NHWC":
        values, indices = shape_ops.transpose(values, (0, 2, 3, 1)), shape_ops.transpose(indices, (0, 2, 3, 1))
    return (values, indices) if return_indices else values

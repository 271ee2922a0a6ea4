"""PyTorch's adaptive pooling: ``adaptive_avg_pool`` and ``adaptive_max_pool`` to a given output size, for 1, 2
or 3 spatial dimensions, channels last (Keras' layout) or first (PyTorch's).

Output cell ``i`` of an axis of size ``n`` pooled to ``m`` covers input cells ``floor(i n / m)`` up to
``ceil((i + 1) n / m)`` (exclusive), PyTorch's bins.  Each pooled axis becomes two, ``(m, k)``: the bins, each
padded to the longest one's ``k`` cells with a cell that cannot change the result (0 for the sum, the lowest
value for the max); a reshape where ``m`` divides ``n``, else a gather.  One reduction over the bins' axes then
gives every box at once: its sum over the box's size (a NaN or inf only reaches the boxes that hold it), or
``tl.max`` of the whole box, whose gradient goes where ``tl.max``'s does (tied maxima share it equally).
Every step is an op, so gradients (to any order), tracing and every backend come from them."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...dispatch import as_tensor
from ...tensor import Tensor
from .. import floating as floating_ops
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from ._common import _op_type

_LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _bins(n: int, m: int) -> list:
    """PyTorch's bins: ``(start, stop)`` of each of the ``m`` output cells over ``n`` input cells."""
    return [((i * n) // m, -((-(i + 1) * n) // m)) for i in range(m)]


def _spatial_range(x, data_format) -> range:
    """The spatial axes of ``x`` laid out as ``data_format`` (None: channels last)."""
    first = 2 if data_format is not None and data_format[1] == "C" else 1
    return range(first, x.ndim - 2 + first)


def _spatial_axes(x, output_size, data_format, name: str) -> tuple:
    where = f"(input shape {tuple(x.shape)}, {x.dtype})"
    rank = x.ndim - 2
    if rank not in _LAYOUTS:
        raise ValueError(f"{name}: input must have 1, 2 or 3 spatial dimensions besides batch and channels {where}")
    layouts = _LAYOUTS[rank]
    data_format = layouts[0] if data_format is None else data_format
    if data_format not in layouts:
        raise ValueError(f"{name}: data_format must be {layouts[0]!r} or {layouts[1]!r} for this input {where}")
    sizes = (output_size,) * rank if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    if len(sizes) != rank or not all(
        s is None or isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) and s >= 1 for s in sizes
    ):
        raise ValueError(
            f"{name}: output_size must be a positive int or {rank} of them (None keeps an axis), got "
            f"{output_size!r} {where}"
        )
    axes = _spatial_range(x, data_format)
    for axis, size in zip(axes, sizes):
        if x.shape[axis] is None:
            raise ValueError(f"{name}: the spatial sizes must be known (axis {axis} is not) {where}")
        if x.shape[axis] == 0 and size is not None:
            raise ValueError(f"{name}: axis {axis} is empty, so it has nothing to pool {where}")
    return tuple((a, int(s)) for a, s in zip(axes, sizes) if s is not None)


def _windows(x, axis: int, m: int, fill):
    """``x`` with ``axis`` (``n`` cells) replaced by ``(m, k)``: output cell ``i``'s bin, padded with ``fill`` to
    the longest bin's ``k`` cells; and the ``(m, k)`` table of the input cells each window cell holds (-1: fill)."""
    n = x.shape[axis]
    bins = _bins(n, m)
    table = np.full((m, max(stop - start for start, stop in bins)), -1)
    for i, (start, stop) in enumerate(bins):
        table[i, : stop - start] = np.arange(start, stop)
    if n % m == 0 and sum(d is None for d in x.shape) <= 1:  # equal bins: a reshape, no copy
        shape = tuple(-1 if d is None else d for d in x.shape)
        return shape_ops.reshape(x, shape[:axis] + (m, n // m) + shape[axis + 1 :]), table
    padded = shape_ops.pad(x, [(0, 0)] * axis + [(0, int(table.min() < 0))] + [(0, 0)] * (x.ndim - axis - 1), fill)
    return shape_ops.take(padded, np.where(table < 0, n, table), axis=axis), table


def _positions(spatial: dict, tables: dict, ndim: int) -> np.ndarray:
    """Each window cell's flat index into the spatial dimensions (PyTorch's ``return_indices``), -1 for a fill
    cell, shaped to broadcast against the windows (``ndim`` axes): ``spatial`` maps each spatial axis of the
    input to its size, ``tables`` each pooled one to its window table."""
    flat, valid, stride, shift = np.zeros((1,) * ndim, np.int64), np.ones((1,) * ndim, bool), 1, len(tables)
    for axis in sorted(spatial, reverse=True):
        shift -= axis in tables
        at = axis + shift  # the axis's place among the windows' axes
        cells = tables.get(axis, np.arange(spatial[axis]))
        cells = cells.reshape((1,) * at + cells.shape + (1,) * (ndim - at - cells.ndim))
        flat, valid, stride = flat + np.maximum(cells, 0) * stride, valid & (cells >= 0), stride * spatial[axis]
    return np.where(valid, flat, -1)


def _max_indices(windows, window_axes: tuple, positions: np.ndarray):
    """PyTorch's ``return_indices``: the first maximum of each box in scan order, or its last NaN."""
    found = math_ops.equal(windows, reduce_ops.max(windows, window_axes, keepdims=True))
    fill = np.iinfo(positions.dtype).max  # a narrow table (int32) keeps the full-size selects narrow
    first = reduce_ops.min(math_ops.where(found & (positions >= 0), positions, fill), window_axes)
    if windows.dtype.kind != "f":
        return first
    last_nan = reduce_ops.max(math_ops.where(floating_ops.isnan(windows), positions, -1), window_axes)
    return math_ops.where(last_nan >= 0, last_nan, first)


def _adaptive(kind: str, input, output_size, data_format, return_indices: bool = False):
    name = f"adaptive_{kind}_pool"
    x = as_tensor(input)
    if x.dtype.kind not in "fiu" or (kind == "avg" and x.dtype.kind != "f"):
        raise TypeError(
            f"{name}: input must be {'floating' if kind == 'avg' else 'real'}, got {x.dtype} (input shape {tuple(x.shape)})"
        )
    pooled = _spatial_axes(x, output_size, data_format, name)
    spatial = {a: x.shape[a] for a in _spatial_range(x, data_format)}
    fill = 0 if kind == "avg" else -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    counts, tables = np.ones((1,) * x.ndim), {}  # each box's number of cells, broadcast against the output
    for axis, m in reversed(pooled):  # the last first: the axes before keep their places
        x, tables[axis] = _windows(x, axis, m, fill)
        sizes = (tables[axis] >= 0).sum(1)
        counts = counts * sizes.reshape((1,) * axis + (m,) + (1,) * (counts.ndim - axis - 1))
    window_axes = tuple(axis + 1 + i for i, (axis, _) in enumerate(pooled))
    if kind == "avg":  # float16 sums in float32 (a box of 1000 cells of 100 overflows float16), then rounds once
        wide = _dt.float32 if x.dtype == _dt.float16 else x.dtype
        mean = reduce_ops.sum(x, window_axes, dtype=wide) / as_tensor(counts.astype(wide))
        return mean if wide == x.dtype else math_ops.cast(mean, x.dtype)
    values = reduce_ops.max(x, window_axes)
    if not return_indices:
        return values
    return values, _max_indices(x, window_axes, _positions(spatial, tables, x.ndim))


@_op_type(None, tensors=("input",))
def adaptive_avg_pool(input, output_size, data_format: str | None = None) -> Tensor:
    """The mean over PyTorch's adaptive bins, pooling each spatial axis to ``output_size`` (an int for all, or
    one per axis, ``None`` to keep one): ``F.adaptive_avg_pool1d/2d/3d`` with ``data_format="NCW"/"NCHW"/
    "NCDHW"``; channels last by default.  ``output_size=1`` is global average pooling.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.adaptive_avg_pool(np.arange(5.0).reshape(1, 5, 1), 3).numpy().ravel().tolist()  # bins 0:2, 1:4, 3:5
    [0.5, 2.0, 3.5]
    """
    return _adaptive("avg", input, output_size, data_format)


@_op_type(None, tensors=("input",))
def adaptive_max_pool(input, output_size, data_format: str | None = None, return_indices: bool = False):
    """The max over PyTorch's adaptive bins (see :func:`adaptive_avg_pool`): ``F.adaptive_max_pool1d/2d/3d``.
    Maxima tied in a box share its gradient equally, as ``tl.max`` of the box (and TensorFlow's and JAX's max
    reductions); PyTorch gives it all to the first.

    ``return_indices=True`` returns ``(values, indices)`` as PyTorch: each box's maximum as an int64 flat index
    into the spatial dimensions (per example and channel), the first in scan order, or the box's last NaN.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.adaptive_max_pool(np.array([[[1.0], [5.0], [2.0], [0.0], [3.0]]]), 3).numpy().ravel().tolist()
    [5.0, 5.0, 3.0]
    >>> tl.nn.adaptive_max_pool(np.array([[[1.0, 5.0, 5.0, 0.0, 3.0]]]), 2, "NCW", return_indices=True)[1].numpy()
    array([[[1, 2]]])
    """
    return _adaptive("max", input, output_size, data_format, bool(return_indices))

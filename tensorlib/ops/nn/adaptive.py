"""PyTorch's adaptive pooling: ``adaptive_avg_pool`` and ``adaptive_max_pool`` to a given output size, for 1, 2
or 3 spatial dimensions, channels last (Keras' layout) or first (PyTorch's).

Output cell ``i`` of an axis of size ``n`` pooled to ``m`` covers input cells ``floor(i n / m)`` up to
``ceil((i + 1) n / m)`` (exclusive), PyTorch's bins.  A box's mean (or max) is the mean (max) along each of
its axes in turn, so each axis is pooled on its own: by a reshape and a reduction where ``m`` divides ``n``,
else by a constant averaging matrix (mean) or one slice per output cell (max).  Every step is an op, so
gradients (to any order), tracing and every backend come from them; the max's gradient goes where
``tl.max``'s does."""

from __future__ import annotations

import numpy as np

from ...dispatch import as_tensor
from ...tensor import Tensor
from .. import array as array_ops
from .. import linalg as linalg_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from ._common import _op_type

_LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _bins(n: int, m: int) -> list:
    """PyTorch's bins: ``(start, stop)`` of each of the ``m`` output cells over ``n`` input cells."""
    return [((i * n) // m, -((-(i + 1) * n) // m)) for i in range(m)]


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
    first = 2 if data_format[1] == "C" else 1
    axes = tuple(range(first, first + rank))
    for axis, size in zip(axes, sizes):
        if x.shape[axis] is None:
            raise ValueError(f"{name}: the spatial sizes must be known (axis {axis} is not) {where}")
        if x.shape[axis] == 0 and size is not None:
            raise ValueError(f"{name}: axis {axis} is empty, so it has nothing to pool {where}")
    return tuple((a, int(s)) for a, s in zip(axes, sizes) if s is not None)


def _pool_axis(x, axis: int, m: int, kind: str):
    n = x.shape[axis]
    if n % m == 0:  # equal bins of n // m cells: a reshape and a reduction
        split = shape_ops.reshape(
            x, tuple(-1 if d is None else d for d in x.shape[:axis]) + (m, n // m) + x.shape[axis + 1 :]
        )
        return (reduce_ops.mean if kind == "avg" else reduce_ops.max)(split, axis + 1)
    if kind == "avg":  # each output cell a weighted sum of its bin: a constant (m, n) matrix
        weights = np.zeros((m, n))
        for i, (start, stop) in enumerate(_bins(n, m)):
            weights[i, start:stop] = 1.0 / (stop - start)
        pooled = linalg_ops.tensordot(x, as_tensor(weights.astype(x.dtype)), ([axis], [1]))
        return array_ops.moveaxis(pooled, -1, axis)
    index = (slice(None),) * axis
    return shape_ops.stack(
        [reduce_ops.max(shape_ops.getitem(x, index + (slice(a, b),)), axis) for a, b in _bins(n, m)], axis
    )


def _adaptive(kind: str, input, output_size, data_format):
    name = f"adaptive_{kind}_pool"
    x = as_tensor(input)
    if x.dtype.kind not in "fiu" or (kind == "avg" and x.dtype.kind != "f"):
        raise TypeError(
            f"{name}: input must be {'floating' if kind == 'avg' else 'real'}, got {x.dtype} (input shape {tuple(x.shape)})"
        )
    for axis, m in _spatial_axes(x, output_size, data_format, name):
        x = _pool_axis(x, axis, m, kind)
    return x


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
def adaptive_max_pool(input, output_size, data_format: str | None = None) -> Tensor:
    """The max over PyTorch's adaptive bins (see :func:`adaptive_avg_pool`): ``F.adaptive_max_pool1d/2d/3d``
    without ``return_indices``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nn.adaptive_max_pool(np.array([[[1.0], [5.0], [2.0], [0.0], [3.0]]]), 3).numpy().ravel().tolist()
    [5.0, 5.0, 3.0]
    """
    return _adaptive("max", input, output_size, data_format)

"""Segment reductions, JAX's ``jax.ops.segment_*`` and TensorFlow's ``tf.math.unsorted_segment_*``: row ``i`` of
``data`` goes to output row ``segment_ids[i]``, and each output row reduces the rows sent to it (message passing
in graph networks, per-group statistics).

``segment_ids`` covers the leading axes of ``data`` (its shape is a prefix of ``data.shape``); the ids need not
be sorted.  A negative id drops its row, as both peers do; an id of ``num_segments`` or more is an IndexError (as
TensorFlow's CPU kernels; JAX drops those too), checked when the op runs.  ``num_segments`` defaults to the
largest id plus one, which needs the ids' values (pass it under ``tl.function``).  An empty segment is 0 for
the sum and the mean, and for the max the lowest value of the dtype (``-inf`` for floats, the identity of max,
as ``jax.ops.segment_max`` and ``torch.segment_reduce``; TensorFlow's holds the lowest finite float, ``-1.8e308``
in float64), the highest for the min.  A NaN in a segment makes its max and min NaN (NumPy's ``maximum``, JAX);
TensorFlow's skips it.

The sum scatters with ``GatherV2Grad`` (its gradient a gather), the mean divides it by the rows counted the same
way, and the max and min are ``SegmentMax`` / ``SegmentMin`` ops whose gradient goes to the rows equal to their
segment's result, shared equally between ties (TensorFlow's rule)."""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dispatch import as_tensor
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import math as math_ops
from . import shape as shape_ops
from ._shapes import as_count
from .registry import defop, spec


def _operands(name: str, data, segment_ids, num_segments):
    """``(data, ids, num_segments)`` with the ids' axes flattened into one: data ``(rows,) + rest``, ids ``(rows,)``."""
    data, ids = as_tensor(data), as_tensor(segment_ids)
    where = f"(data shape {tuple(data.shape)} {data.dtype}, segment_ids shape {tuple(ids.shape)} {ids.dtype})"
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name}: segment_ids must be integers {where}")
    k = ids.ndim
    if (
        k == 0
        or k > data.ndim
        or any(a is not None and b is not None and a != b for a, b in zip(ids.shape, data.shape[:k]))
    ):
        raise ValueError(f"{name}: segment_ids' shape must be a non-empty prefix of data's shape {where}")
    rest = tuple(data.shape[k:])
    if None in rest:
        raise ValueError(f"{name}: data's sizes past the segment axes must be known {where}")
    if None in ids.shape + data.shape[:k]:  # traced: the shared sizes checked when the graph runs
        names = tuple(f"segment axis {i}" for i in range(k))
        data, ids = shape_ops.ensure_dims(
            data, ids, dims=(names + (None,) * len(rest), names), message=f"{name}: data and segment_ids"
        )
    if num_segments is None:
        if ids.is_symbolic:
            raise ValueError(
                f"{name}: num_segments must be given under tl.function and tl.vmap, where the ids' values are unknown "
                f"(it sizes the output) {where}"
            )
        values = np.asarray(ids.numpy())
        num_segments = int(values.max()) + 1 if values.size else 0
    num_segments = as_count(num_segments, f"{name}: num_segments", 0, f" {where}")
    if not ids.is_symbolic:
        values = np.asarray(ids.numpy())
        if values.size and values.max() >= num_segments:
            raise IndexError(
                f"{name}: segment id {int(values.max())} is out of range for num_segments={num_segments} {where}"
            )
    if k != 1:  # the segment axes as one
        data = shape_ops.reshape(data, (-1,) + rest)
        ids = shape_ops.reshape(ids, (-1,))
    return data, ids, num_segments, rest, where


def _kept(name: str, ids, num_segments: int, where: str):
    """``(ids with dropped rows sent to 0, mask of the rows kept)``; traced, ids >= num_segments raise when run."""
    kept = ids >= 0
    safe = math_ops.where(kept, ids, np.zeros((), np.dtype(ids.dtype)))
    if ids.is_symbolic and num_segments:
        safe = shape_ops.check_ids(safe, shape_ops.broadcast_to(np.zeros((), np.int8), (num_segments,)), 0, name)
    return safe, kept


def _rows_mask(kept, data):
    """``kept`` (one bool per row) broadcast against data's rows."""
    return shape_ops.reshape(kept, (-1,) + (1,) * (data.ndim - 1)) if data.ndim > 1 else kept


def _scatter_rows(values, safe, num_segments: int, rest: tuple, dtype):
    if not num_segments:  # no segment (every row dropped): an empty result that still depends on values
        return shape_ops.getitem(values, slice(0, 0))
    like = shape_ops.broadcast_to(np.zeros((), np.dtype(dtype)), (num_segments,) + rest)
    return shape_ops._take_grad(values, safe, like, axis=0)


def segment_sum(data, segment_ids, num_segments: int | None = None) -> Tensor:
    """The sum of the rows of ``data`` in each segment (``jax.ops.segment_sum``, ``tf.math.unsorted_segment_sum``);
    see :mod:`tensorlib.ops.segment` for the ids' rules.  Shape ``(num_segments,) + data.shape[ids.ndim:]``; bool
    data counts its True rows (int64, as ``numpy.sum``).

    >>> import tensorlib as tl
    >>> tl.segment_sum(tl.tensor([1.0, 2.0, 3.0, 4.0]), [0, 2, 0, -1], num_segments=3).numpy().tolist()
    [4.0, 0.0, 2.0]
    """
    data, ids, n, rest, where = _operands("segment_sum", data, segment_ids, num_segments)
    if data.dtype == _dt.bool_:  # a count of the True rows, int64, as np.sum and tl.sum (a scatter-add is an or)
        data = math_ops.cast(data, _dt.int64)
    safe, kept = _kept("segment_sum", ids, n, where)
    values = math_ops.where(_rows_mask(kept, data), data, np.zeros((), np.dtype(data.dtype)))
    return _scatter_rows(values, safe, n, rest, data.dtype)


def segment_mean(data, segment_ids, num_segments: int | None = None) -> Tensor:
    """The mean of the rows of ``data`` in each segment, 0 for an empty one (``tf.math.unsorted_segment_mean``);
    integer and bool data give float64, as NumPy's ``mean`` and TensorFlow's.

    >>> import tensorlib as tl
    >>> tl.segment_mean(tl.tensor([1.0, 2.0, 3.0]), [1, 1, 0], num_segments=3).numpy().tolist()
    [3.0, 1.5, 0.0]
    """
    data, ids, n, rest, where = _operands("segment_mean", data, segment_ids, num_segments)
    if data.dtype.kind not in "fc":
        data = math_ops.cast(data, _dt.float64)
    safe, kept = _kept("segment_mean", ids, n, where)
    mask = _rows_mask(kept, data)
    total = _scatter_rows(math_ops.where(mask, data, np.zeros((), np.dtype(data.dtype))), safe, n, rest, data.dtype)
    real = _dt.real_dtype(data.dtype) if data.dtype.kind == "c" else data.dtype
    counts = _scatter_rows(math_ops.cast(kept, real), safe, n, (), real)
    counts = shape_ops.reshape(math_ops.maximum(counts, np.ones((), np.dtype(real))), (n,) + (1,) * len(rest))
    return total / counts


def _segment_extreme_infer(data, segment_ids, *, num_segments, largest):
    shape_ops.check_integer_indices(segment_ids)
    return spec((num_segments,) + tuple(data.shape[1:]), data.dtype)


def _lowest(xp, dtype, largest: bool):
    """The value an empty segment holds: the identity of max (lowest) or min (highest) in ``dtype``."""
    if xp.isdtype(dtype, "real floating"):
        return -float("inf") if largest else float("inf")
    if xp.isdtype(dtype, "complex floating"):  # ordered real part first: below (above) every other number
        infinity = -float("inf") if largest else float("inf")
        return complex(infinity, infinity)
    if xp.isdtype(dtype, "bool"):
        return not largest
    info = xp.iinfo(dtype)
    return info.min if largest else info.max


_segment_extreme = defop(
    "SegmentExtreme",
    inputs=("data", "segment_ids"),
    attrs={"num_segments": 0, "largest": True},
    infer=_segment_extreme_infer,
    doc="Max (largest) or min of the rows of data sent to each segment; negative ids dropped, empty segments "
    "the dtype's lowest (highest) value.",
)


def _check_range(ids, num_segments: int, name: str):
    if ids.size and int(ids.max()) >= num_segments:
        raise IndexError(f"{name}: segment id {int(ids.max())} is out of range for num_segments={num_segments}")


@_segment_extreme.kernel("numpy")
def _segment_extreme_numpy(data, segment_ids, *, num_segments, largest):
    name = "segment_max" if largest else "segment_min"
    _check_range(segment_ids, num_segments, name)
    out = np.full((num_segments,) + data.shape[1:], _lowest(np, data.dtype, largest), dtype=data.dtype)
    keep = segment_ids >= 0
    # Every value given whole: NumPy 2.4's ufunc.at adds wrong results where it broadcasts values itself.
    (np.maximum if largest else np.minimum).at(out, segment_ids[keep], data[keep])
    return out


@_segment_extreme.generic
def _segment_extreme_generic(xp, data, segment_ids, *, num_segments, largest):
    name = "segment_max" if largest else "segment_min"
    if segment_ids.shape[0] and int(xp.max(segment_ids)) >= num_segments:
        raise IndexError(
            f"{name}: segment id {int(xp.max(segment_ids))} is out of range for num_segments={num_segments}"
        )
    fill = xp.full((), _lowest(xp, data.dtype, largest), dtype=data.dtype)
    shape = (-1,) + (1,) * (data.ndim - 1)
    reduce = xp.max if largest else xp.min
    rows = [
        reduce(xp.where(xp.reshape(segment_ids == s, shape), data, fill), axis=0)
        if data.shape[0]
        else xp.full(data.shape[1:], fill, dtype=data.dtype)
        for s in range(num_segments)
    ]
    return xp.stack(rows) if rows else xp.zeros((0,) + data.shape[1:], dtype=data.dtype)


def _segment_extreme_grad(node, g):
    """To each row equal to its segment's result, that segment's gradient divided by the number of such rows."""
    data, ids = node.inputs
    (out,) = node.outputs
    n = node.attrs["num_segments"]
    if not n:  # no segment: every row was dropped
        return math_ops.zeros_like(data, dtype=g.dtype)
    kept = ids >= 0
    safe = math_ops.where(kept, ids, np.zeros((), np.dtype(ids.dtype)))
    hit = math_ops.logical_and(_rows_mask(kept, data), math_ops.equal(data, shape_ops.take(out, safe, 0)))
    ties = _scatter_rows(math_ops.cast(hit, g.dtype), safe, n, tuple(data.shape[1:]), g.dtype)
    share = shape_ops.take(g / math_ops.maximum(ties, np.ones((), np.dtype(g.dtype))), safe, 0)
    return math_ops.where(hit, share, np.zeros((), np.dtype(g.dtype)))


register_gradient("SegmentExtreme", _segment_extreme_grad, None)


def _extreme(name: str, largest: bool, data, segment_ids, num_segments):
    data, ids, n, _, _ = _operands(name, data, segment_ids, num_segments)
    return _segment_extreme(data, ids, num_segments=n, largest=largest)


def segment_max(data, segment_ids, num_segments: int | None = None) -> Tensor:
    """The max of the rows of ``data`` in each segment, the dtype's lowest value (``-inf``) for an empty one
    (``jax.ops.segment_max``, ``tf.math.unsorted_segment_max``); the gradient goes to the rows equal to the max,
    shared between ties.  Complex numbers are ordered real part first, as NumPy's ``maximum``; an empty segment
    holds ``-inf-infj``, below every other (``jax.ops.segment_max`` gives ``-inf+0j``).

    >>> import tensorlib as tl
    >>> tl.segment_max(tl.tensor([1.0, 5.0, 3.0]), [0, 0, 2], num_segments=3).numpy().tolist()
    [5.0, -inf, 3.0]
    """
    return _extreme("segment_max", True, data, segment_ids, num_segments)


def segment_min(data, segment_ids, num_segments: int | None = None) -> Tensor:
    """The min of the rows of ``data`` in each segment, the dtype's highest value (``inf``) for an empty one
    (``jax.ops.segment_min``, ``tf.math.unsorted_segment_min``).

    >>> import tensorlib as tl
    >>> tl.segment_min(tl.tensor([[1.0, 5.0], [3.0, 2.0]]), [1, 1]).numpy().tolist()
    [[inf, inf], [1.0, 2.0]]
    """
    return _extreme("segment_min", False, data, segment_ids, num_segments)

"""Searching and counting: argwhere, flatnonzero, searchsorted, digitize, top_k, unique, bincount.

Indices and counts are int64 and carry no gradient; ``top_k``'s values and ``bincount``'s weighted
counts are differentiable (gathers and scatters).  The ops whose result length depends on the data
(``argwhere``, ``flatnonzero``, ``unique``, ``bincount``) also run inside ``tl.function``, where that
length is unknown (``None``) in the graph.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor, as_tensors, check_int_range
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import math as math_ops
from . import shape as shape_ops
from ._shapes import as_int
from .registry import defop, spec


def _describe(name, t):
    return f"{name} shape {t.shape} {t.dtype}"


# ------------------------------------------------------------------ argwhere, flatnonzero
def argwhere(x) -> Tensor:
    """Indices of the nonzero elements, one row per element (``numpy.argwhere``): shape (count, ndim), int64.

    >>> import tensorlib as tl
    >>> tl.argwhere(tl.tensor([[0, 3], [2, 0]])).numpy().tolist()
    [[0, 1], [1, 0]]
    """
    from .elementwise import nonzero

    x = as_tensor(x)
    if x.ndim == 0:  # NumPy: one row (or none) of no columns
        return shape_ops.reshape(nonzero(shape_ops.reshape(x, (1,)))[0], (-1, 1))[:, :0]
    return shape_ops.stack(list(nonzero(x)), axis=-1)


def flatnonzero(x) -> Tensor:
    """Indices of the nonzero elements of the flattened ``x`` (``numpy.flatnonzero``), int64.

    >>> import tensorlib as tl
    >>> tl.flatnonzero(tl.tensor([[0, 3], [2, 0]])).numpy().tolist()
    [1, 2]
    """
    from .elementwise import nonzero

    return nonzero(shape_ops.reshape(as_tensor(x), (-1,)))[0]


# ------------------------------------------------------------------ searchsorted, digitize
def _searchsorted_infer(a, v, *, side):
    if len(a.shape) == 1:
        return spec(v.shape, _dt.int64)
    if (
        len(a.shape) == 0
        or len(v.shape) != len(a.shape)
        or any(p != q and None not in (p, q) for p, q in zip(a.shape[:-1], v.shape[:-1]))
    ):
        raise ValueError(
            "the sorted sequence must be 1-D, or have the values' leading dimensions (batched, as torch.searchsorted)"
        )
    return spec(v.shape, _dt.int64)


_searchsorted = defop(
    "SearchSorted",
    inputs=("sorted_sequence", "values"),
    attrs={"side": "left"},
    infer=_searchsorted_infer,
    promote=(0, 1),
    differentiable=False,
    doc="Insertion indices of values into a sorted sequence (along its last axis); not differentiable.",
)


@_searchsorted.generic
def _searchsorted_kernel(xp, a, v, *, side):
    if a.ndim == 1:
        return xp.astype(xp.searchsorted(a, v, side=side), xp.int64)
    # Batched: one search per row of the leading dimensions (the standard's searchsorted is 1-D).
    batch = math.prod(a.shape[:-1])
    rows_a = xp.reshape(a, (batch, a.shape[-1]))
    rows_v = xp.reshape(v, (batch, v.shape[-1]))
    rows = [xp.astype(xp.searchsorted(rows_a[i, :], rows_v[i, :], side=side), xp.int64) for i in range(batch)]
    return xp.reshape(xp.stack(rows), v.shape) if rows else xp.zeros(v.shape, dtype=xp.int64)


def searchsorted(a, v, side: str = "left", sorter=None) -> Tensor:
    """Indices where ``v``'s elements would be inserted into the sorted ``a`` to keep it sorted
    (``numpy.searchsorted``): ``side='left'`` gives the first such place, ``'right'`` the last; ``sorter``
    holds the indices that sort an unsorted 1-D ``a``.  An N-D ``a`` is searched row by row along its
    last axis, with ``v`` of the same leading dimensions (``torch.searchsorted``).  int64, not
    differentiable.

    >>> import tensorlib as tl
    >>> tl.searchsorted(tl.tensor([1.0, 2.0, 2.0, 5.0]), tl.tensor([2.0, 6.0]), side="right").numpy().tolist()
    [3, 4]
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a, v = as_tensors(a, v)
    if sorter is not None:
        if a.ndim != 1:
            raise ValueError(f"searchsorted: sorter needs a 1-D sequence ({_describe('sequence', a)})")
        a = shape_ops.take(a, _checked_sorter(sorter, a))
    return apply(_searchsorted, (a, v), {"side": side})


def _checked_sorter(sorter, a) -> Tensor:
    """``sorter`` as NumPy takes it: integers, one per element of ``a``, each in ``[0, len(a))`` (a shorter one
    searched part of ``a`` and a negative index counted from the end, silently)."""
    sorter = as_tensor(shape_ops.integer_indices(sorter))
    if sorter.dtype.kind not in "iu" or sorter.ndim != 1:
        raise TypeError(
            f"searchsorted: sorter must be a 1-D array of integers ({_describe('sorter', sorter)}, "
            f"{_describe('sequence', a)})"
        )
    n, m = a.shape[0], sorter.shape[0]
    if n is not None and m is not None and n != m:
        raise ValueError(
            f"searchsorted: sorter must have one index per element of the sequence ({_describe('sorter', sorter)}, "
            f"{_describe('sequence', a)})"
        )
    if not sorter.is_symbolic and n is not None:
        values = sorter.numpy()
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError(
                f"searchsorted: sorter index {int(values[(values < 0) | (values >= n)][0])} is out of range "
                f"[0, {n}) ({_describe('sequence', a)})"
            )
    return sorter


_digitize = defop(
    "Digitize",
    inputs=("x", "bins"),
    attrs={"right": False},
    infer=lambda x, bins, *, right: spec(x.shape, _dt.int64),
    promote=(0, 1),
    differentiable=False,
    doc="Index of the bin each element falls in (numpy.digitize); not differentiable.",
)


@_digitize.generic
def _digitize_kernel(xp, x, bins, *, right):
    side = "left" if right else "right"
    # Neighbours compared, not subtracted: bools have no subtraction, and inf - inf is NaN, so bins ending in
    # inf, inf looked unordered.  A NaN bin still orders neither way (refused, not NumPy's arbitrary answer).
    if bins.shape[0] < 2 or bool(xp.all(bins[1:] >= bins[:-1])):  # (array API: no bins[1:] of an empty axis)
        return xp.astype(xp.searchsorted(bins, x, side=side), xp.int64)
    if bool(xp.all(bins[1:] <= bins[:-1])):  # decreasing: search the reversed bins, count from the other end
        found = xp.searchsorted(xp.flip(bins), x, side=side)
        return xp.astype(bins.shape[0] - found, xp.int64)
    raise ValueError(
        f"Digitize: bins must be monotonically increasing or decreasing (x shape {tuple(x.shape)} {x.dtype}, "
        f"bins shape {tuple(bins.shape)} {bins.dtype})"
    )


def digitize(x, bins, right: bool = False) -> Tensor:
    """Index of the bin of each element of ``x`` (``numpy.digitize``): ``i`` with
    ``bins[i-1] <= x < bins[i]`` for increasing ``bins`` (``bins[i-1] < x <= bins[i]`` with ``right=True``),
    mirrored for decreasing ones.  int64, not differentiable.

    >>> import tensorlib as tl
    >>> tl.digitize(tl.tensor([0.5, 1.0, 3.5]), tl.tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [0, 1, 3]
    """
    x, bins = as_tensors(x, bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D ({_describe('x', x)}, {_describe('bins', bins)})")
    if x.dtype.kind == "c" or bins.dtype.kind == "c":
        raise TypeError(f"digitize: complex numbers have no order ({_describe('x', x)}, {_describe('bins', bins)})")
    return apply(_digitize, (x, bins), {"right": bool(right)})


# ------------------------------------------------------------------ top_k
TopK = collections.namedtuple("TopK", ["values", "indices"])


def _top_k_infer(x, *, k):
    if not x.shape:
        raise ValueError("top_k needs at least one axis")
    n = x.shape[-1]
    if n is not None and k > n:
        raise ValueError(f"k = {k} is larger than the last axis ({n})")
    return spec(x.shape[:-1] + (k,), _dt.int64)


_top_k = defop(
    "TopK",
    inputs=("x",),
    attrs={"k": 1},
    infer=_top_k_infer,
    differentiable=False,
    doc="Indices of the k largest elements along the last axis, largest first, ties by lower index.",
)


@_top_k.generic
def _top_k_kernel(xp, x, *, k):
    # A stable ascending sort of the reversed row puts equal elements last-index first; read backwards
    # it is descending with ties in index order (and NaNs, sorted last, first: the largest, as torch).
    n = x.shape[-1]
    keys = xp.astype(x, xp.int8) if xp.isdtype(x.dtype, "bool") else x  # the standard sorts numbers only
    order = xp.argsort(xp.flip(keys, axis=-1), axis=-1, stable=True)
    return xp.astype(n - 1 - xp.flip(order, axis=-1)[..., :k], xp.int64)


def top_k(x, k: int = 1, sorted: bool = True) -> TopK:  # noqa: A002
    """The ``k`` largest elements along the last axis and their indices (``tf.math.top_k``,
    ``jax.lax.top_k``, ``torch.topk``): ``TopK(values, indices)``, largest first, equal elements by
    lower index first, NaN counted largest.  Complex numbers are ordered as ``sort`` orders them (real part
    first, as NumPy): the values are ``sort``'s last ``k`` reversed, up to the order of ties.  The values'
    gradient goes to the chosen positions.

    >>> import tensorlib as tl
    >>> values, indices = tl.top_k(tl.tensor([1.0, 3.0, 2.0, 3.0]), k=3)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([3.0, 3.0, 2.0], [1, 3, 2])
    """
    from .array import take_along_axis

    x = as_tensor(x)
    k = as_int(k, "top_k: k")
    if k < 0:
        raise ValueError(f"top_k: k must be >= 0, got {k} ({_describe('input', x)})")
    indices = apply(_top_k, (x,), {"k": k})
    return TopK(take_along_axis(x, indices, axis=-1), indices)


# ------------------------------------------------------------------ unique
def _unique_infer(x, *, return_index, return_inverse, return_counts, axis, equal_nan):
    if axis is None:
        values = spec((None,), x.dtype)
        inverse_shape = x.shape
    else:
        values = spec(x.shape[:axis] + (None,) + x.shape[axis + 1 :], x.dtype)
        inverse_shape = (x.shape[axis],)
    out = [values]
    if return_index:
        out.append(spec((None,), _dt.int64))
    if return_inverse:
        out.append(spec(inverse_shape, _dt.int64))
    if return_counts:
        out.append(spec((None,), _dt.int64))
    return tuple(out)


_unique = defop(
    "Unique",
    inputs=("x",),
    attrs={"return_index": False, "return_inverse": False, "return_counts": False, "axis": None, "equal_nan": True},
    infer=_unique_infer,
    differentiable=False,
    doc="The sorted distinct elements (numpy.unique), with first indices, inverse and counts; not differentiable.",
)


@_unique.kernel("numpy")
def _unique_numpy(x, *, return_index, return_inverse, return_counts, axis, equal_nan):
    out = np.unique(
        x,
        return_index=return_index,
        return_inverse=return_inverse,
        return_counts=return_counts,
        axis=axis,
        equal_nan=equal_nan,
    )
    if not isinstance(out, tuple):
        return (out,)
    return (out[0],) + tuple(np.asarray(o, dtype=np.int64).reshape(o.shape) for o in out[1:])


@_unique.generic
def _unique_kernel(xp, x, *, return_index, return_inverse, return_counts, axis, equal_nan):
    # The standard's unique_all on the flattened x; its values come unsorted on some libraries: sort
    # them, and carry the rest along.  (The standard's NaNs are distinct: equal_nan=False.)
    if axis is not None:
        return _unique_subarrays(xp, x, axis, return_index, return_inverse, return_counts)
    found = xp.unique_all(xp.reshape(x, (-1,)))
    values = found.values
    order = xp.argsort(xp.astype(values, xp.int8) if xp.isdtype(values.dtype, "bool") else values)
    out = [xp.take(found.values, order)]
    if return_index:
        out.append(xp.astype(xp.take(found.indices, order), xp.int64))
    if return_inverse:
        rank = xp.argsort(order)
        out.append(xp.reshape(xp.astype(xp.take(rank, xp.reshape(found.inverse_indices, (-1,))), xp.int64), x.shape))
    if return_counts:
        out.append(xp.astype(xp.take(found.counts, order), xp.int64))
    return tuple(out)


def _unique_subarrays(xp, x, axis, return_index, return_inverse, return_counts):
    """NumPy's unique along ``axis``: the distinct subarrays in lexicographic order (each one a row of
    ``x`` moved to axis 0 and flattened), equal where all elements are equal (so -0.0 is 0.0 and NaN
    differs from itself, as in NumPy), found by a stable sort of the rows, last column first."""
    moved = xp.moveaxis(x, axis, 0)
    n = moved.shape[0]
    width = 1
    for d in moved.shape[1:]:
        width *= d
    rows = xp.reshape(moved, (n, width))  # (a -1 cannot size the rows of an empty x)
    keys = xp.astype(rows, xp.int8) if xp.isdtype(rows.dtype, "bool") else rows  # the standard sorts numbers
    order = xp.arange(n, dtype=xp.int64)
    for column in range(rows.shape[1] - 1, -1, -1):
        order = xp.take(order, xp.argsort(xp.take(keys[:, column], order), stable=True))
    ordered = xp.take(rows, order, axis=0)
    first = xp.ones((n,), dtype=xp.bool)  # a row that differs from the one before starts a group
    if n > 1:
        first = xp.concat([first[:1], xp.any(ordered[1:, :] != ordered[:-1, :], axis=1)])
    starts = xp.astype(xp.nonzero(first)[0], xp.int64)
    values = xp.reshape(xp.take(ordered, starts, axis=0), (starts.shape[0],) + tuple(moved.shape[1:]))
    out = [xp.moveaxis(values, 0, axis)]
    if return_index:
        out.append(xp.take(order, starts))
    if return_inverse:
        group = xp.searchsorted(starts, xp.arange(n, dtype=xp.int64), side="right") - 1
        out.append(xp.astype(xp.take(group, xp.argsort(order)), xp.int64))
    if return_counts:
        bounds = xp.concat([starts, xp.asarray([n], dtype=xp.int64)])
        out.append(bounds[1:] - bounds[:-1])
    return tuple(out)


def _unique_sized_infer(x, *, size, fill_value, equal_nan):
    rows, n = tuple(x.shape[:-1]), x.shape[-1]
    return (
        spec(rows + (size,), x.dtype),
        spec(rows + (size,), _dt.int64),
        spec(rows + (n,), _dt.int64),
        spec(rows + (size,), _dt.int64),
    )


_unique_sized = defop(
    "UniqueSized",
    inputs=("x",),
    attrs={"size": 0, "fill_value": None, "equal_nan": True},
    infer=_unique_sized_infer,
    differentiable=False,
    doc="Per row of x (its last axis), the first size sorted distinct values, padded (jnp.unique's size=): "
    "values, first indices, inverse, counts; not differentiable.",
)


@_unique_sized.generic
def _unique_sized_kernel(xp, x, *, size, fill_value, equal_nan):
    # Each row sorted (stably: the first of equal elements is the first occurrence); an element that differs
    # from the one before starts a group; slot g holds group g's first element (found by an argmax over a
    # rows x n x size mask: memory n * size per row), its count, and pads past the last group.
    lead, n = tuple(x.shape[:-1]), x.shape[-1]
    rows = xp.reshape(x, (math.prod(lead), n))  # (a -1 cannot size the rows of an empty x)
    keys = xp.astype(rows, xp.int8) if xp.isdtype(rows.dtype, "bool") else rows
    order = xp.argsort(keys, axis=1, stable=True)
    ordered = xp.take_along_axis(rows, order, axis=1)
    first = xp.ones((rows.shape[0], min(n, 1)), dtype=xp.bool)
    if n > 1:
        differs = ordered[:, 1:] != ordered[:, :-1]
        if equal_nan and xp.isdtype(rows.dtype, ("real floating", "complex floating")):
            differs = differs & ~(xp.isnan(ordered[:, 1:]) & xp.isnan(ordered[:, :-1]))
        first = xp.concat([first, differs], axis=1)
    group = xp.cumulative_sum(xp.astype(first, xp.int64), axis=1) - 1
    inverse = xp.reshape(xp.take_along_axis(group, xp.argsort(order, axis=1), axis=1), lead + (n,))
    if not size:
        none = xp.zeros(lead + (0,), dtype=xp.int64)
        return xp.zeros(lead + (0,), dtype=rows.dtype), none, inverse, none
    slot = group[:, :, None] == xp.arange(size, dtype=xp.int64)
    counts = xp.sum(xp.astype(slot, xp.int64), axis=1)
    at = (
        xp.argmax(xp.astype(slot & first[:, :, None], xp.int8), axis=1)
        if n
        else xp.zeros((rows.shape[0], size), dtype=xp.int64)
    )
    values = xp.take_along_axis(ordered, at, axis=1) if n else xp.zeros((rows.shape[0], size), dtype=rows.dtype)
    index = xp.astype(xp.take_along_axis(order, at, axis=1), xp.int64) if n else xp.zeros_like(at)
    empty = counts == 0  # past the last group: jnp.unique's pads
    pad = values[:, :1] if fill_value is None else xp.asarray(fill_value, dtype=rows.dtype)
    values = xp.where(empty, pad, values)
    index = xp.where(empty, index[:, :1], index)
    return (
        xp.reshape(values, lead + (size,)),
        xp.reshape(index, lead + (size,)),
        inverse,
        xp.reshape(counts, lead + (size,)),
    )


def _unique_of_size(x, flags, size, fill_value):
    """``unique(x, ..., size=, fill_value=)`` (flattened x): one UniqueSized row, the values gathered from x."""
    where = _describe("input", x)
    size = as_int(size, "unique: size")
    if size < 0:
        raise ValueError(f"unique: size must be non-negative, got {size} ({where})")
    axis = flags["axis"]
    if fill_value is None and size and (0 in x.shape if axis is None else x.shape[axis] == 0):
        raise ValueError(f"unique: size={size} of an empty input needs a fill_value ({where})")
    if fill_value is not None and not isinstance(fill_value, (bool, int, float, complex)):
        raise TypeError(
            f"unique: fill_value must be a Python number or None, got {type(fill_value).__name__} ({where})"
        )
    check_int_range(fill_value, x.dtype, f"unique ({where}): fill_value")
    if axis is not None:
        return _unique_of_size_along(x, flags, size, fill_value)
    flat = shape_ops.reshape(x, (1, -1))
    values, index, inverse, counts = apply(
        _unique_sized, (flat,), {"size": size, "fill_value": fill_value, "equal_nan": flags["equal_nan"]}
    )
    values, index, counts = (shape_ops.getitem(t, 0) for t in (values, index, counts))
    if x.dtype.kind in "fc" and 0 not in x.shape:  # the values gathered from x carry its gradient (the pads too)
        gathered = shape_ops.take(shape_ops.reshape(x, (-1,)), index)
        values = gathered if fill_value is None else math_ops.where(counts > 0, gathered, values)
    out = [values]
    if flags["return_index"]:
        out.append(index)
    if flags["return_inverse"]:
        out.append(shape_ops.reshape_like(inverse, x))
    if flags["return_counts"]:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_of_size_along(x, flags, size, fill_value):
    """``unique(x, axis=, size=)``: the subarrays' group numbers (``unique``'s inverse along ``axis``, sorted as
    the subarrays are) made distinct with ``size`` slots by UniqueSized, the subarrays gathered from ``x``
    (so they carry its gradient), pads filled as ``jnp.unique``'s: ``fill_value``, or the first subarray."""
    from .creation import full

    axis = flags["axis"]
    _, groups = apply(_unique, (x,), {**flags, "return_index": False, "return_inverse": True, "return_counts": False})
    sized = {"size": size, "fill_value": None, "equal_nan": False}
    _, index, _, counts = apply(_unique_sized, (shape_ops.reshape(groups, (1, -1)),), sized)
    index, counts = (shape_ops.getitem(t, 0) for t in (index, counts))
    if x.shape[axis] == 0:
        values = full(x.shape[:axis] + (size,) + x.shape[axis + 1 :], fill_value, x.dtype, x.backend)
    else:
        values = shape_ops.take(x, index, axis=axis)
        if fill_value is not None:
            found = shape_ops.reshape(counts > 0, (size,) + (1,) * (x.ndim - axis - 1))
            values = math_ops.where(found, values, math_ops.cast(fill_value, x.dtype))
    out = [values]
    if flags["return_index"]:
        out.append(index)
    if flags["return_inverse"]:
        out.append(groups)
    if flags["return_counts"]:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def unique(
    x,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis=None,
    *,
    equal_nan: bool = True,
    sorted: bool = True,  # noqa: A002  (NumPy's name)
    size: int | None = None,
    fill_value=None,
):
    """The sorted distinct elements of ``x`` (``numpy.unique``, NaNs counted as one unless ``equal_nan=False``), optionally with the
    index of each one's first occurrence, the inverse (indices rebuilding ``x``, of ``x``'s shape) and
    the counts, in NumPy's order (also for ``sorted=False``, which lets NumPy 2.3 choose any order).  With ``axis`` the distinct subarrays along it.  The values' gradient
    goes to each one's first occurrence in ``x`` (JAX's); their number is unknown inside ``tl.function``.

    ``size`` (``jnp.unique``'s, for a shape known before the values: ``tl.function``, ``tl.vmap``): the first
    ``size`` distinct values, padded with ``fill_value`` (default: the smallest value); the indices are padded
    with the first one's, the counts with 0 (the inverse may point past ``size``); with ``axis`` the distinct
    subarrays, padded with ``fill_value`` or the first subarray.

    >>> import tensorlib as tl
    >>> values, counts = tl.unique(tl.tensor([3, 1, 3, 2, 3]), return_counts=True)
    >>> values.numpy().tolist(), counts.numpy().tolist()
    ([1, 2, 3], [1, 1, 3])
    >>> tl.vmap(lambda v: tl.unique(v, size=3, fill_value=-1))(tl.tensor([[1, 1, 2], [5, 4, 5]])).numpy().tolist()
    [[1, 2, -1], [4, 5, -1]]
    """
    from ._shapes import normalize_axis

    x = as_tensor(x)
    if axis is not None:
        try:
            axis = normalize_axis(axis, x.ndim)
        except (TypeError, ValueError) as e:
            raise type(e)(f"unique: {e} ({_describe('input', x)})") from None
        if x.ndim == 0:
            raise ValueError(f"unique: axis {axis} of a 0-d tensor ({_describe('input', x)})")
    flags = {
        "return_index": bool(return_index),
        "return_inverse": bool(return_inverse),
        "return_counts": bool(return_counts),
        "axis": axis,
        "equal_nan": bool(equal_nan),
    }
    if size is not None:
        return _unique_of_size(x, flags, size, fill_value)
    if fill_value is not None:
        raise ValueError(f"unique: fill_value is for size=; give size too ({_describe('input', x)})")
    if x.dtype.kind not in "fc":
        out = apply(_unique, (x,), flags)
        return out[0] if len(out) == 1 else tuple(out)
    # The values are x's elements at their first occurrences: gathered there, they carry x's gradient (the
    # op's own values are not differentiable; a zero gradient for them was silently wrong).
    values, index, *rest = apply(_unique, (x,), {**flags, "return_index": True})
    values = shape_ops.take(x, index, axis=axis)
    out = (values, index, *rest) if return_index else (values, *rest)
    return out[0] if len(out) == 1 else out


UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x) -> UniqueAllResult:
    """The array API's (and NumPy 2's) ``unique_all``: the sorted distinct values of ``x`` (flattened; every
    NaN distinct), the index of each one's first occurrence, the inverse indices (of ``x``'s shape) and the
    counts, int64.  The values' gradient goes to the first occurrences, as :func:`unique`'s.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.unique_all(tl.tensor([3, 1, 3]))]
    [[1, 3], [1, 0], [1, 0, 1], [1, 2]]
    """
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


def unique_counts(x) -> UniqueCountsResult:
    """The array API's ``unique_counts``: ``(values, counts)`` as :func:`unique_all`'s.

    >>> import tensorlib as tl
    >>> tl.unique_counts(tl.tensor([3, 1, 3])).counts.numpy().tolist()
    [1, 2]
    """
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x) -> UniqueInverseResult:
    """The array API's ``unique_inverse``: ``(values, inverse_indices)`` as :func:`unique_all`'s;
    ``values[inverse_indices]`` rebuilds ``x`` (NaNs included).

    >>> import tensorlib as tl
    >>> tl.unique_inverse(tl.tensor([[3, 1], [1, 2]])).inverse_indices.numpy().tolist()
    [[2, 0], [0, 1]]
    """
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


def unique_values(x) -> Tensor:
    """The array API's ``unique_values``: the distinct values of ``x`` (flattened; every NaN distinct), sorted
    (the standard leaves the order open: NumPy 2.3+ returns hash order, JAX sorted).

    >>> import tensorlib as tl
    >>> tl.unique_values(tl.tensor([2.0, float("nan"), 1.0, 2.0, float("nan")])).numpy().tolist()
    [1.0, 2.0, nan, nan]
    """
    return unique(x, equal_nan=False)


# ------------------------------------------------------------------ bincount
def _bincount_infer(x, weights, *, minlength, length):
    if len(x.shape) != 1 or x.dtype.kind not in "biu":
        raise TypeError("x must be a 1-D tensor of non-negative integers")
    if weights.shape != x.shape and None not in weights.shape + x.shape:
        raise ValueError("weights must have the shape of x")
    return spec((length,), _dt.int64 if weights.dtype == _dt.bool_ else _dt.float64)


_bincount = defop(
    "Bincount",
    inputs=("x", "weights"),
    attrs={"minlength": 0, "length": None},
    infer=_bincount_infer,
    doc="Number (or total weight) of each value of a non-negative integer vector (numpy.bincount); with length, "
    "exactly length bins, larger values dropped (jnp.bincount's length).",
)


def _kept_below(x, weights, length):
    """``(x, weights)`` without the values of ``length`` or more (``length`` None: all kept)."""
    if length is None:
        return x, weights
    keep = x < length
    return x[keep], weights[keep]


def _negative(x):
    return ValueError(f"Bincount: x must be non-negative, got {int(x.min())} (x shape {tuple(x.shape)} {x.dtype})")


def _check_weights(x, weights) -> None:
    # Sizes unknown when traced are compared here (NumPy's bare "The weights and list don't have the same length").
    if weights.dtype != bool and tuple(weights.shape) != tuple(x.shape):
        raise ValueError(
            f"Bincount: weights must have the shape of x (x shape {tuple(x.shape)} {x.dtype}, weights shape "
            f"{tuple(weights.shape)} {weights.dtype})"
        )


@_bincount.generic
def _bincount_kernel(xp, x, weights, *, minlength, length):
    _check_weights(x, weights)
    if x.shape[0] and int(xp.min(x)) < 0:
        raise _negative(x)
    x, weights = _kept_below(x, weights, length)
    if length is None:
        length = max(int(xp.max(x)) + 1 if x.shape[0] else 0, minlength)
    bins = xp.arange(length, dtype=xp.int64)
    hits = xp.reshape(xp.astype(x, xp.int64), (-1, 1)) == bins  # memory: len(x) * length
    if xp.isdtype(weights.dtype, "bool"):  # no weights: each element counts once
        return xp.sum(xp.astype(hits, xp.int64), axis=0)
    w = xp.astype(weights, xp.float64)
    return xp.sum(xp.where(hits, xp.reshape(w, (-1, 1)), xp.zeros((), dtype=xp.float64)), axis=0)


@_bincount.kernel("numpy")
def _bincount_numpy(x, weights, *, minlength, length):
    _check_weights(x, weights)
    if x.size and x.min() < 0:
        raise _negative(x)
    x, weights = _kept_below(x, weights, length)
    minlength = minlength if length is None else length
    if weights.dtype == np.bool_:
        return np.bincount(x, minlength=minlength).astype(np.int64, copy=False)
    # (NumPy gives int64 zeros for an empty x even with weights; the dtype here follows the weights alone.)
    return np.bincount(x, weights=weights.astype(np.float64, copy=False), minlength=minlength).astype(np.float64)


def _bincount_weights_grad(node, g):
    # out[j] = sum of weights[i] over x[i] == j, so d out / d weights[i] picks g[x[i]] (0 for a value dropped
    # past ``length``).
    x, weights = node.inputs
    length = node.attrs["length"]
    if length is None:
        return math_ops.cast(shape_ops.take(g, x), weights.dtype)
    kept = x < length
    picked = shape_ops.take(g, math_ops.where(kept, x, np.zeros((), np.dtype(x.dtype))))
    return math_ops.cast(math_ops.where(kept, picked, np.zeros((), np.dtype(g.dtype))), weights.dtype)


register_gradient("Bincount", None, _bincount_weights_grad)


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None) -> Tensor:
    """Number of occurrences of each value of the non-negative integer vector ``x`` (``numpy.bincount``),
    of length ``max(x) + 1`` or ``minlength``: int64, or float64 sums of ``weights`` (as NumPy), whose
    gradient is differentiable.  ``length`` (``jnp.bincount``'s) gives exactly that many bins, values of
    ``length`` or more dropped (``minlength`` then unused): a shape known before the values, as
    ``tl.function`` and ``tl.vmap`` over values of different maxima need.

    >>> import tensorlib as tl
    >>> tl.bincount(tl.tensor([0, 2, 2])).numpy().tolist()
    [1, 0, 2]
    >>> tl.bincount(tl.tensor([0, 2, 2]), weights=tl.tensor([0.5, 1.0, 2.0])).numpy().tolist()
    [0.5, 0.0, 3.0]
    >>> tl.vmap(lambda v: tl.bincount(v, length=3))(tl.tensor([[0, 2, 2], [1, 1, 5]])).numpy().tolist()
    [[1, 0, 2], [0, 2, 0]]
    """
    x = as_tensor(x)
    minlength = as_int(minlength, "bincount: minlength")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength} ({_describe('x', x)})")
    if length is not None:
        length = as_int(length, "bincount: length")
        if length < 0:
            raise ValueError(f"bincount: length must be non-negative, got {length} ({_describe('x', x)})")
    if x.ndim != 1 or x.dtype.kind not in "biu":
        raise TypeError(f"bincount: x must be a 1-D tensor of non-negative integers ({_describe('x', x)})")
    if weights is None:
        weights = math_ops.zeros_like(x, _dt.bool_)  # a bool placeholder: count, int64
    else:
        (weights,) = as_tensors(weights, floor=_dt.float64)  # a list is summed in float64: read it there
        if weights.dtype.kind == "c":
            raise TypeError(f"bincount: weights must be real ({_describe('weights', weights)})")
        if weights.dtype == _dt.bool_:  # (a bool placeholder means no weights)
            weights = math_ops.cast(weights, _dt.float64)
        if weights.shape != x.shape:
            raise ValueError(
                f"bincount: weights must have the shape of x ({_describe('x', x)}, {_describe('weights', weights)})"
            )
    return apply(_bincount, (x, weights), {"minlength": minlength, "length": length})

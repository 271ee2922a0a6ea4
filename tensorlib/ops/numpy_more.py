"""Still more of NumPy's functions, as compositions of tensorlib ops (gradients, tracing and backends come
with them where NumPy's result is differentiable): phases (``unwrap``), NumPy's two-result ufuncs (``modf``,
``divmod``), reshaping by repetition (``resize``, ``diagflat``), selections whose size depends on the values
(``trim_zeros``, ``extract``, ``ix_``, ``setxor1d``, ``mask_indices``) and index helpers taken from an array
(``tril_indices_from``, ``triu_indices_from``, ``diag_indices_from``).

>>> import tensorlib as tl
>>> tl.unwrap(tl.tensor([0.0, 3.0, 6.5])).numpy().round(4).tolist()
[0.0, 3.0, 0.2168]
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import as_tensor, as_tensors
from ..tensor import Tensor
from . import creation
from . import elementwise as ew
from . import math as math_ops
from . import shape as shape_ops
from ._shapes import as_int, as_ints, normalize_axis


def _describe(name: str, t: Tensor) -> str:
    return f"{name} shape {t.shape} ({t.dtype})"


def _eager_values(t: Tensor, who: str) -> np.ndarray:
    """``t``'s values, for a function whose result's size depends on them (so it cannot be traced)."""
    if t.is_symbolic:
        raise ValueError(f"{who}: the result's size depends on the values, so it cannot be traced under tl.function")
    return np.asarray(t.numpy())


def _along(x: Tensor, axis: int, start, stop) -> Tensor:
    """``x[start:stop]`` along ``axis``."""
    return x[(slice(None),) * axis + (slice(start, stop),)]


# ------------------------------------------------------------------ phases
def unwrap(p, discont=None, axis: int = -1, *, period=2 * math.pi) -> Tensor:
    """``numpy.unwrap``: ``p`` with every jump between neighbours along ``axis`` larger than ``discont``
    (default ``period / 2``) replaced by its remainder modulo ``period``, so that the phase is continuous.
    Integer input with an integer ``period`` stays integer, as NumPy; otherwise float64 (a float input keeps
    its dtype).  The gradient is the identity in ``p`` (the corrections are piecewise constant) and reaches a
    tensor ``period`` through the corrections.

    >>> import tensorlib as tl
    >>> tl.unwrap(tl.tensor([0.0, 1.0, 5.0, 9.0]), period=4.0).numpy().tolist()
    [0.0, 1.0, 1.0, 1.0]
    """
    from .array import cumsum

    p = as_tensor(p)
    if p.ndim == 0:
        raise ValueError(f"unwrap: p must have at least one axis, got {_describe('p', p)}")
    try:
        axis = normalize_axis(axis, p.ndim)
    except (TypeError, ValueError) as e:
        raise type(e)(f"unwrap: {e} ({_describe('p', p)})") from None
    if p.dtype.kind in "cb":
        raise TypeError(f"unwrap: p must be real numbers, got {_describe('p', p)}")
    dtype = np.result_type(np.dtype(p.dtype), period.dtype if isinstance(period, Tensor) else period)
    if dtype.kind in "iu" and (isinstance(period, Tensor) or not isinstance(period, (int, np.integer))):
        raise TypeError(f"unwrap: an integer period must be a Python or NumPy int, got {period!r}")
    p = math_ops.cast(p, dtype) if p.dtype != dtype else p
    if p.shape[axis] == 0:
        return p
    period = math_ops.cast(period, dtype) if isinstance(period, Tensor) else period
    first = _along(p, axis, 0, 1)
    dd = _along(p, axis, 1, None) - _along(p, axis, 0, -1)
    if dtype.kind in "iu":
        # Python ints (this module's divmod is tl.divmod: tensors, which `if ambiguous` cannot read when traced)
        high, ambiguous = int(period) // 2, int(period) % 2 == 0
    else:
        high, ambiguous = period / 2, True
    discont = period / 2 if discont is None else discont
    ddmod = ew.remainder(dd + high, period) - high
    if ambiguous:  # a jump of exactly half a period goes up when the step did
        ddmod = math_ops.where(math_ops.logical_and(ddmod == -high, dd > 0), high + math_ops.zeros_like(ddmod), ddmod)
    correction = math_ops.where(math_ops.abs(dd) < discont, math_ops.zeros_like(dd), ddmod - dd)
    return shape_ops.concat([first, _along(p, axis, 1, None) + cumsum(correction, axis=axis)], axis)


# ------------------------------------------------------------------ two-result ufuncs
def modf(x) -> tuple:
    """``numpy.modf``: ``(fractional, integral)`` parts of ``x``, both with ``x``'s sign (``-0.0`` for the
    fractional part of a negative integer, ``0.0`` with the infinities' sign for ``+-inf``); integers give
    float64.  The fractional part's gradient is 1 (the integral part's 0), as JAX's.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.modf(tl.tensor([2.5, -3.25]))]
    [[0.5, -0.25], [2.0, -3.0]]
    """
    from .floating import copysign, isinf, trunc

    x = as_tensor(x)
    if x.dtype.kind == "c":
        raise TypeError(f"modf: complex numbers have no integral part ({_describe('x', x)})")
    if x.dtype.kind in "biu":
        x = math_ops.cast(x, _dt.float64)
    zero = copysign(math_ops.zeros_like(x), x)
    infinite = isinf(x)
    finite = math_ops.where(infinite, zero, x)  # inf - inf would warn
    fraction = finite - trunc(finite)
    # x's sign where the fraction is zero: zero - (stop_gradient(x) - x) is -0.0 for negative x, gradient 1
    signed_zero = zero - (math_ops.stop_gradient(finite) - finite)
    fraction = math_ops.where(fraction == 0, signed_zero, fraction)
    return math_ops.where(infinite, zero, fraction), trunc(x)


def divmod(x1, x2) -> tuple:
    """``numpy.divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``, the quotient rounded toward minus
    infinity and the remainder with ``x2``'s sign, ``x1 == q * x2 + r``.  The remainder's gradients are 1 and
    ``-floor(x1 / x2)``; the quotient's are zero.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.divmod(tl.tensor([7, -7]), 2)]
    [[3, -4], [1, 1]]
    """
    x1, x2 = as_tensors(x1, x2)
    if x1.dtype.kind == "c" or x2.dtype.kind == "c":
        raise TypeError(
            f"divmod: complex numbers have no floor division ({_describe('x1', x1)}, {_describe('x2', x2)})"
        )
    return ew.floor_divide(x1, x2), ew.remainder(x1, x2)


# ------------------------------------------------------------------ repetition
def resize(a, new_shape) -> Tensor:
    """``numpy.resize``: ``a`` flattened, repeated as often as needed and cut to ``new_shape`` (zeros when
    ``a`` or the new shape is empty, as NumPy 2); differentiable (repeats add up).

    >>> import tensorlib as tl
    >>> tl.resize(tl.tensor([1, 2, 3]), (2, 4)).numpy().tolist()
    [[1, 2, 3, 1], [2, 3, 1, 2]]
    """
    from .array import ravel

    a = as_tensor(a)
    shape = (
        (as_int(new_shape, "resize: new_shape"),)
        if np.ndim(new_shape) == 0
        else as_ints(new_shape, "resize: new_shape")
    )
    shape = tuple(shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {shape} ({_describe('a', a)})")
    if None in a.shape:
        raise ValueError(f"resize: the size of a must be known, got {_describe('a', a)} (unknown size)")
    flat = ravel(a)
    size, new_size = flat.shape[0], math.prod(shape)
    if size == 0 or new_size == 0:
        return creation.zeros(shape, dtype=a.dtype)
    repeats = -(-new_size // size)
    return shape_ops.reshape(shape_ops.tile(flat, (repeats,))[:new_size], shape)


def diagflat(v, k: int = 0) -> Tensor:
    """``numpy.diagflat``: a 2-d tensor with ``v`` flattened on its ``k``-th diagonal; differentiable.

    >>> import tensorlib as tl
    >>> tl.diagflat(tl.tensor([[1, 2]]), 1).numpy().tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    from .array import diag, ravel

    return diag(ravel(as_tensor(v)), as_int(k, "diagflat: k"))


# ------------------------------------------------------------------ selections of a value-dependent size
def trim_zeros(filt, trim: str = "fb", axis=None) -> Tensor:
    """``numpy.trim_zeros``: ``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros along
    ``axis`` (every axis by default, NumPy 2.2's N-d form: the bounding box of the nonzero values).  Eager
    (the size depends on the values); differentiable in the values kept.

    >>> import tensorlib as tl
    >>> tl.trim_zeros(tl.tensor([0, 0, 1, 2, 0, 3, 0])).numpy().tolist()
    [1, 2, 0, 3]
    """
    filt = as_tensor(filt)
    if not isinstance(trim, str) or not trim or set(trim.lower()) - {"f", "b"}:
        raise ValueError(f"trim_zeros: unexpected character(s) in trim: {trim!r} (use 'f', 'b' or 'fb')")
    trim = trim.lower()
    if filt.ndim == 0:
        raise ValueError(f"trim_zeros: filt must have at least one axis, got {_describe('filt', filt)}")
    where = f"trim_zeros ({_describe('filt', filt)}): axis"
    axes = range(filt.ndim) if axis is None else [normalize_axis(a, filt.ndim, where) for a in np.atleast_1d(axis)]
    nonzero = _eager_values(filt, "trim_zeros") != 0
    out = filt
    for ax in axes:
        along = np.any(nonzero, axis=tuple(d for d in range(filt.ndim) if d != ax)) if filt.ndim > 1 else nonzero
        found = np.flatnonzero(along)
        start = (int(found[0]) if found.size else along.size) if "f" in trim else 0
        stop = (int(found[-1]) + 1 if found.size else 0) if "b" in trim else along.size
        out = _along(out, ax, start, max(start, stop))
    return out


def extract(condition, arr) -> Tensor:
    """``numpy.extract``: the elements of ``arr`` (flattened) where ``condition`` (flattened) is nonzero;
    differentiable in ``arr``.  Its length follows the condition, as ``compress``.

    >>> import tensorlib as tl
    >>> tl.extract(tl.tensor([[1, 0], [0, 2]]), tl.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [1.0, 4.0]
    """
    from .array import ravel
    from .numpy_extra import compress

    condition = ravel(as_tensor(condition))
    condition = condition if condition.dtype == _dt.bool_ else condition != 0
    return compress(condition, ravel(as_tensor(arr)))


def ix_(*args) -> tuple:
    """``numpy.ix_``: 1-d index sequences reshaped to broadcast against each other (the k-th along axis k),
    so that ``x[ix_(rows, cols)]`` picks the cross product; a boolean sequence gives its True positions
    (eager).  Integer sequences stay integer (int64); the empty sequence is int64, as NumPy.

    >>> import tensorlib as tl
    >>> m = tl.reshape(tl.arange(9), (3, 3))
    >>> m[tl.ix_([0, 2], [1, 2])].numpy().tolist()
    [[1, 2], [7, 8]]
    """
    out = []
    n = len(args)
    for k, seq in enumerate(args):
        t = (
            as_tensor(seq)
            if not (isinstance(seq, (list, tuple)) and len(seq) == 0)
            else creation.zeros((0,), _dt.int64)
        )
        if t.ndim != 1:
            raise ValueError(f"ix_: cross index must be 1-d, got argument {k} of shape {t.shape} ({t.dtype})")
        if t.dtype == _dt.bool_:
            t = as_tensor(np.flatnonzero(_eager_values(t, "ix_")).astype(np.int64))
        out.append(shape_ops.reshape(t, (1,) * k + (-1,) + (1,) * (n - k - 1)))
    return tuple(out)


def setxor1d(ar1, ar2, assume_unique: bool = False) -> Tensor:
    """``numpy.setxor1d``: the sorted unique values in exactly one of the arrays; eager, not differentiable.
    As NumPy, a NaN of each array stays (NaN differs from NaN).

    >>> import tensorlib as tl
    >>> tl.setxor1d(tl.tensor([1, 2, 3, 3]), [3, 4]).numpy().tolist()
    [1, 2, 4]
    """
    from .array import ravel, sort
    from .search import unique

    a, b = (ravel(t) for t in as_tensors(ar1, ar2))
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = (math_ops.cast(t, dtype) if t.dtype != dtype else t for t in (a, b))
    if not assume_unique:
        a, b = unique(a), unique(b)
    values = sort(math_ops.stop_gradient(shape_ops.concat([a, b], axis=0)))
    sorted_values = _eager_values(values, "setxor1d")
    if not sorted_values.size:
        return values
    edge = np.concatenate([[True], sorted_values[1:] != sorted_values[:-1], [True]])
    return shape_ops.take(values, np.flatnonzero(edge[1:] & edge[:-1]).astype(np.int64))


# ------------------------------------------------------------------ histograms
def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Tensor:
    """``numpy.histogram_bin_edges``: the edges :func:`histogram` uses (``bins`` a number of equal bins, the
    edges, or one of NumPy's estimators, eager only); ``weights`` are checked as NumPy checks them, unused.

    >>> import tensorlib as tl
    >>> tl.histogram_bin_edges(tl.tensor([1.0, 2.0, 4.0]), bins=3).numpy().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    from .numpy_extra import histogram_edges

    a = shape_ops.reshape(as_tensor(a), (-1,))
    where = f"(a {a.dtype}[{a.shape[0]}])"
    if a.dtype.kind == "c":
        raise TypeError(f"histogram_bin_edges: complex values have no order {where}")
    if weights is not None and None not in a.shape:
        weights = as_tensors(a, weights)[1]
        if math.prod(weights.shape) != a.shape[0] or None in weights.shape:
            raise ValueError(
                f"histogram_bin_edges: weights must have the shape of a {where}, got {_describe('weights', weights)}"
            )
        if isinstance(bins, str):
            raise TypeError(f"histogram_bin_edges: the {bins!r} estimator does not take weights {where}")
    return histogram_edges(a, bins, range, "histogram_bin_edges", where)


def histogramdd(sample, bins=10, range=None, density: bool = False, weights=None) -> tuple:
    """``numpy.histogramdd``: ``(hist, edges)`` of ``N`` points in ``D`` dimensions (an ``(N, D)`` array or a
    sequence of ``D`` arrays of ``N`` values); per dimension ``bins`` is a number of equal bins or the edges
    (one for all, or one per dimension) and ``range`` a ``(min, max)`` or None.  Bins are closed on the left,
    the last also on the right; points outside are left out.  ``hist`` is float64 (NumPy's), differentiable in
    ``weights``; ``density=True`` divides by the total and the bins' volumes.

    >>> import tensorlib as tl
    >>> hist, edges = tl.histogramdd(tl.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> hist.numpy().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    from . import reduce as reduce_ops
    from .numpy_extra import bin_index, histogram_edges
    from .segment import segment_sum

    if isinstance(sample, (list, tuple)):
        sample = shape_ops.stack([shape_ops.reshape(s, (-1,)) for s in as_tensors(*sample)], axis=1)
    sample = as_tensor(sample)
    if sample.ndim == 1:
        sample = shape_ops.reshape(sample, (-1, 1))
    if sample.ndim != 2:
        raise ValueError(
            f"histogramdd: sample must be (N, D) or a sequence of D 1-d arrays, got {_describe('sample', sample)}"
        )
    if sample.dtype.kind == "c":
        raise TypeError(f"histogramdd: complex values have no order ({_describe('sample', sample)})")
    n, dims = sample.shape
    if dims is None:
        raise ValueError(
            f"histogramdd: the number of dimensions D must be known, got {_describe('sample', sample)} (unknown size)"
        )
    if isinstance(bins, (int, np.integer, str)):
        bins = [bins] * dims
    if isinstance(bins, Tensor) and bins.ndim == 1 and bins.shape[0] is None:
        raise ValueError(f"histogramdd: the number of bins must be known, got {_describe('bins', bins)} (unknown size)")
    if len(bins) != dims:  # a sequence has one number or set of edges per dimension (NumPy's)
        raise ValueError(
            f"histogramdd: the dimension of bins ({len(bins)}) must equal the dimension of the sample ({dims})"
        )
    ranges = [None] * dims if range is None else list(range)
    if len(ranges) != dims:
        raise ValueError(f"histogramdd: range needs one (min, max) or None per dimension ({dims}), got {range!r}")
    where = f"(sample {sample.dtype}{sample.shape})"
    edges, index, sizes = [], None, []
    for d in builtins.range(dims):
        if isinstance(bins[d], str):
            raise TypeError(
                f"histogramdd: bins of dimension {d} must be a number or the edges, got {bins[d]!r} {where}"
            )
        column = sample[:, d]
        e = histogram_edges(column, bins[d], ranges[d], "histogramdd", where, range_dtype=_dt.float64)
        edges.append(e)
        count = e.shape[0] - 1
        sizes.append(count)
        k = bin_index(column, e)
        index = (
            k
            if index is None
            else math_ops.where(math_ops.logical_or(index < 0, k < 0), np.int64(-1), index * count + k)
        )
    total = math.prod(sizes)
    if weights is None:
        values = math_ops.ones_like(sample[:, 0], _dt.float64)
    else:
        values = shape_ops.reshape(as_tensors(weights, floor=_dt.float64)[0], (-1,))
        if None not in (values.shape[0], n) and values.shape[0] != n:
            raise ValueError(
                f"histogramdd: weights must have one value per point {where}, got {_describe('weights', values)}"
            )
        values = (
            values if values.dtype.kind in "fc" and values.dtype.itemsize >= 8 else math_ops.cast(values, _dt.float64)
        )
    hist = shape_ops.reshape(segment_sum(values, index, total), tuple(sizes))
    if density:
        hist = hist / reduce_ops.sum(hist)
        for d, e in enumerate(edges):
            shape = [1] * dims
            shape[d] = sizes[d]
            hist = hist / shape_ops.reshape(math_ops.cast(e[1:] - e[:-1], _dt.float64), tuple(shape))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density: bool = False, weights=None) -> tuple:
    """``numpy.histogram2d``: ``(hist, xedges, yedges)`` of the points ``(x[i], y[i])``, :func:`histogramdd`
    of two dimensions (``bins``: a number or edges for both, or one per axis).

    >>> import tensorlib as tl
    >>> hist, xedges, yedges = tl.histogram2d(tl.tensor([0.0, 1.0, 1.0]), tl.tensor([0.0, 1.0, 0.0]), bins=2)
    >>> hist.numpy().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    x, y = as_tensors(x, y)
    if x.ndim != 1 or y.ndim != 1 or (None not in (x.shape[0], y.shape[0]) and x.shape[0] != y.shape[0]):
        raise ValueError(
            f"histogram2d: x and y must be 1-d of one length, got {_describe('x', x)}, {_describe('y', y)}"
        )
    if isinstance(bins, Tensor) and bins.ndim == 1 and bins.shape[0] is None:
        raise ValueError(
            f"histogram2d: the number of bin edges must be known, got {_describe('bins', bins)} (unknown size)"
        )
    if not isinstance(bins, (int, np.integer, str)) and len(bins) != 2:
        bins = [bins, bins]  # one set of edges for both axes (NumPy's rule: any length but 1 and 2)
    hist, (xedges, yedges) = histogramdd([x, y], bins, range, density, weights)
    return hist, xedges, yedges


# ------------------------------------------------------------------ NumPy's in-place writers, functional (JAX's)
def _functional(inplace, who: str) -> None:
    if inplace:
        raise ValueError(
            f"{who}: tensors are immutable, so inplace=True cannot write into the input; the result is returned "
            f"(JAX's functional form: pass inplace=False)"
        )


def _cyclic(values: Tensor, count: int, who: str) -> Tensor:
    """``values`` flattened and repeated cyclically to ``count`` elements (NumPy's put and place)."""
    from .array import ravel

    values = ravel(values)
    if values.shape[0] == 0 and count:
        raise ValueError(f"{who}: cannot insert from an empty array of values ({count} positions to fill)")
    return resize(values, (count,)) if values.shape[0] != count else values


def _cast_exactly(values, a: Tensor, who: str) -> Tensor:
    """``values`` in ``a``'s dtype, refused (TypeError) where that changes them (2.7 into an int tensor), as
    ``Tensor.at[...].set``: NumPy truncates silently."""
    values = as_tensors(a, values)[1]
    try:
        shape_ops._check_lossless(values, a)
    except TypeError as e:
        raise TypeError(str(e).replace("Tensor.at[...]", who, 1)) from None
    return values if values.dtype == a.dtype else math_ops.cast(values, a.dtype)


def put(a, ind, v, mode: str = "raise", *, inplace: bool = False) -> Tensor:
    """``numpy.put`` in JAX's functional form: ``a`` with the elements at the flat indices ``ind`` replaced
    by ``v`` (repeated cyclically when shorter); ``mode`` ``"raise"`` (negative indices count from the end),
    ``"wrap"`` or ``"clip"``.  A position written twice keeps the last value, as NumPy; the gradient reaches
    ``a`` where it was not overwritten and the values that were written.

    >>> import tensorlib as tl
    >>> tl.put(tl.tensor([1.0, 2.0, 3.0, 4.0]), [0, 2], [9.0, 8.0]).numpy().tolist()
    [9.0, 2.0, 8.0, 4.0]
    """
    _functional(inplace, "put")
    return _put(a, ind, v, mode, "put")


def _put(a, ind, v, mode: str, who: str) -> Tensor:
    from .array import ravel

    a = as_tensor(a)
    if None in a.shape:
        raise ValueError(f"{who}: the size of a must be known, got {_describe('a', a)} (unknown size)")
    flat = ravel(a)
    size = flat.shape[0]
    ind = ravel(as_tensor(shape_ops.integer_indices(ind)))
    if ind.shape[0] is None:
        raise ValueError(f"{who}: the number of indices must be known, got {_describe('ind', ind)} (unknown size)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if ind.shape[0] == 0:
        return a
    if size == 0:
        raise IndexError(f"{who}: cannot put into an empty tensor ({_describe('a', a)})")
    if mode == "wrap":
        ind = ew.remainder(ind, np.int64(size))
    elif mode == "clip":
        ind = math_ops.clip(ind, np.int64(0), np.int64(size - 1))
    elif not ind.is_symbolic:
        bad = np.asarray(ind.numpy())
        bad = bad[(bad < -size) | (bad >= size)]
        if bad.size:
            raise IndexError(f"{who}: index {int(bad[0])} is out of bounds for size {size} ({_describe('a', a)})")
    values = _cyclic(_cast_exactly(v, a, who), ind.shape[0], who)
    return shape_ops.reshape(flat.at[ind].set(values), a.shape)


def place(arr, mask, vals, *, inplace: bool = False) -> Tensor:
    """``numpy.place`` in JAX's functional form: ``arr`` with its elements where ``mask`` is True replaced, in
    order, by ``vals`` (repeated cyclically); traceable (the k-th True position takes ``vals[k % len(vals)]``);
    differentiable in ``arr`` and ``vals``.

    >>> import tensorlib as tl
    >>> tl.place(tl.tensor([1.0, 2.0, 3.0, 4.0]), [True, False, True, True], [9.0, 8.0]).numpy().tolist()
    [9.0, 2.0, 8.0, 9.0]
    """
    from .array import cumsum, ravel

    _functional(inplace, "place")
    arr = as_tensor(arr)
    mask = as_tensor(mask)
    if mask.shape != arr.shape and None not in mask.shape + arr.shape and math.prod(mask.shape) != math.prod(arr.shape):
        raise ValueError(
            f"place: mask and arr must be the same size, got {_describe('mask', mask)}, {_describe('arr', arr)}"
        )
    vals = ravel(_cast_exactly(vals, arr, "place"))
    mask = shape_ops.reshape_like(mask if mask.dtype == _dt.bool_ else mask != 0, arr)
    if vals.shape[0] == 0:
        if not mask.is_symbolic and np.any(np.asarray(mask.numpy())):
            raise ValueError(f"place: cannot insert from an empty array of values ({_describe('arr', arr)})")
        return arr
    if vals.shape[0] is None:
        raise ValueError(f"place: the number of values must be known, got {_describe('vals', vals)} (unknown size)")
    position = ew.remainder(cumsum(math_ops.cast(ravel(mask), _dt.int64)) - 1, np.int64(vals.shape[0]))
    chosen = shape_ops.reshape_like(shape_ops.take(vals, position), arr)
    return math_ops.where(mask, chosen, arr)


def put_along_axis(arr, indices, values, axis, *, inplace: bool = False, mode=None) -> Tensor:
    """``numpy.put_along_axis`` in JAX's functional form: ``arr`` with ``values`` (broadcast to ``indices``)
    written at ``indices`` along ``axis`` (None: the flattened ``arr``), matched position by position outside
    the axis, as :func:`take_along_axis` reads them; a position written twice keeps the last value.

    >>> import tensorlib as tl
    >>> x = tl.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> tl.put_along_axis(x, tl.argmax(x, axis=1, keepdims=True), 0.0, axis=1).numpy().tolist()
    [[10.0, 0.0, 20.0], [0.0, 40.0, 50.0]]
    """
    from .array import ravel

    _functional(inplace, "put_along_axis")
    if mode not in (None, "raise"):
        raise ValueError(f"put_along_axis: only mode='raise' (NumPy's) is supported, got {mode!r}")
    arr = as_tensor(arr)
    indices = as_tensor(shape_ops.integer_indices(indices))
    target = arr
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(
                f"put_along_axis: with axis=None, indices must be 1-d, got {_describe('indices', indices)}"
            )
        target, axis = ravel(arr), 0
    if indices.ndim != target.ndim:
        raise ValueError(
            f"put_along_axis: indices and arr must have the same number of dimensions, got "
            f"{_describe('indices', indices)}, {_describe('arr', arr)}"
        )
    axis = normalize_axis(axis, target.ndim)
    if None in target.shape:
        raise ValueError(f"put_along_axis: the sizes of arr must be known, got {_describe('arr', arr)} (unknown size)")
    index = []
    for d, size in enumerate(target.shape):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * target.ndim
            shape[d] = size
            index.append(shape_ops.reshape(creation.arange(size, dtype=_dt.int64), tuple(shape)))
    try:
        written = target.at[tuple(index)].set(_cast_exactly(values, arr, "put_along_axis"))
    except (IndexError, ValueError) as e:
        raise type(e)(f"put_along_axis: {e} ({_describe('indices', indices)}, {_describe('arr', arr)})") from None
    return shape_ops.reshape(written, arr.shape)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = False) -> Tensor:
    """``numpy.fill_diagonal`` in JAX's functional form: ``a`` (2-d, or N-d with all sizes equal) with its main
    diagonal set to ``val`` (repeated cyclically); ``wrap=True`` restarts the diagonal below a tall matrix's
    square top, as NumPy.  Differentiable in ``a`` (off the diagonal) and ``val``.

    >>> import tensorlib as tl
    >>> tl.fill_diagonal(tl.zeros((2, 3)), 5.0).numpy().tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    _functional(inplace, "fill_diagonal")
    a = as_tensor(a)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got {_describe('a', a)}")
    if None in a.shape:
        raise ValueError(f"fill_diagonal: the sizes of a must be known, got {_describe('a', a)} (unknown size)")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions of input must be of equal length, got {_describe('a', a)}")
    size = math.prod(a.shape)
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = size if wrap else min(size, a.shape[1] * a.shape[1])
    else:
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = size
    positions = np.arange(0, end, step, dtype=np.int64)
    return _put(a, positions, val, "raise", "fill_diagonal")


# ------------------------------------------------------------------ functions applied to parts of a tensor
def apply_along_axis(func1d, axis: int, arr, *args, **kwargs) -> Tensor:
    """``numpy.apply_along_axis``: ``func1d`` (a function of tensors) called on every 1-d slice of ``arr``
    along ``axis``, its results (scalars or arrays of one shape) stacked where the axis was.  A Python loop
    over the slices (its size must be known), so gradients, tapes and tracing see each call.

    >>> import tensorlib as tl
    >>> tl.apply_along_axis(lambda v: tl.sum(v * v), 1, tl.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [5.0, 25.0]
    """
    from .array import moveaxis

    arr = as_tensor(arr)
    try:
        axis = normalize_axis(axis, arr.ndim)
    except (TypeError, ValueError) as e:
        raise type(e)(f"apply_along_axis: {e} ({_describe('arr', arr)})") from None
    outer = arr.shape[:axis] + arr.shape[axis + 1 :]
    if None in outer:
        raise ValueError(
            f"apply_along_axis: the sizes outside axis {axis} must be known, got {_describe('arr', arr)} (unknown size)"
        )
    if 0 in outer:
        raise ValueError(
            f"apply_along_axis: cannot apply along axis {axis} when another dimension is 0 ({_describe('arr', arr)})"
        )
    rows = shape_ops.reshape(
        moveaxis(arr, axis, -1), (math.prod(outer), arr.shape[axis] if arr.shape[axis] is not None else -1)
    )
    # a Python number or list that func1d returns is read next to arr, as NumPy reads it (float64 beside float64)
    results = [as_tensors(arr, func1d(rows[i], *args, **kwargs))[1] for i in builtins.range(rows.shape[0])]
    if len({(r.shape, r.dtype) for r in results}) > 1:
        raise ValueError(
            f"apply_along_axis: func1d returned results of different shapes or dtypes for {_describe('arr', arr)}"
        )
    result = results[0]
    stacked = _stack_nested(results, outer)
    # the result's own axes take the place of axis, as NumPy's
    return moveaxis(
        stacked, tuple(builtins.range(len(outer), stacked.ndim)), tuple(builtins.range(axis, axis + result.ndim))
    )


def _stack_nested(items: list, dims: tuple) -> Tensor:
    """``items`` (``prod(dims)`` tensors of one shape, in C order) stacked into leading axes ``dims``: nested
    stacks, not a reshape, so the items' own sizes may be unknown (traced)."""
    if not dims:
        return items[0]
    step = len(items) // dims[0]
    return shape_ops.stack([_stack_nested(items[i * step : (i + 1) * step], dims[1:]) for i in builtins.range(dims[0])])


def apply_over_axes(func, a, axes) -> Tensor:
    """``numpy.apply_over_axes``: ``func(a, axis)`` for each axis in turn, each result kept at ``a``'s rank (an
    axis the function removed comes back with size 1), e.g. ``apply_over_axes(tl.sum, x, [0, 2])``.

    >>> import tensorlib as tl
    >>> tl.apply_over_axes(tl.sum, tl.ones((2, 3, 4)), [0, 2]).numpy().tolist()
    [[[8.0], [8.0], [8.0]]]
    """
    a = as_tensor(a)
    for axis in np.atleast_1d(axes).tolist():
        axis = normalize_axis(axis, a.ndim) if axis < 0 else axis
        result = as_tensors(a, func(a, axis))[1]
        if result.ndim == a.ndim - 1:
            result = shape_ops.expand_dims(result, axis)
        if result.ndim != a.ndim:
            raise ValueError(
                f"apply_over_axes: func returned an array of rank {result.ndim} for axis {axis} of {_describe('a', a)}; "
                f"it must keep the rank or drop that axis"
            )
        a = result
    return a


def piecewise(x, condlist, funclist, *args, **kw) -> Tensor:
    """``numpy.piecewise``: ``x``'s dtype and shape, where ``condlist[k]`` holds the value of ``funclist[k]``
    (a function called on the elements selected, so a branch never sees, nor sends a gradient from, the others;
    or a constant); one extra function is the otherwise case; later conditions win; elements no condition
    selects are 0.  Differentiable in ``x`` through the functions; eager or traced.

    >>> import tensorlib as tl
    >>> x = tl.tensor([-2.0, 0.0, 3.0])
    >>> tl.piecewise(x, [x < 0, x > 0], [lambda v: -v, lambda v: tl.sqrt(v)]).numpy().round(4).tolist()
    [2.0, 0.0, 1.7321]
    """
    from .array import ravel
    from .search import flatnonzero

    x = as_tensor(x)
    # NumPy's rule: one condition, not a list of them, when its first item is no array or list (a list of
    # bools for a 1-d x is one mask), or when it is an array of x's rank
    single = isinstance(condlist, (Tensor, np.ndarray)) and np.ndim(condlist) == x.ndim
    if (
        single
        or isinstance(condlist, (bool, np.bool_))
        or (
            isinstance(condlist, (list, tuple))
            and condlist
            and not isinstance(condlist[0], (list, tuple, np.ndarray, Tensor))
            and x.ndim != 0
        )
    ):
        condlist = [condlist]
    conds = [as_tensor(c) for c in condlist]
    for k, c in enumerate(conds):
        if c.dtype != _dt.bool_:
            raise TypeError(f"piecewise: condition {k} must be boolean, got {_describe('condition', c)}")
    conds = [shape_ops.broadcast_to(c, x.shape) if c.shape != x.shape else c for c in conds]
    funclist = list(funclist)
    if len(funclist) == len(conds) + 1:
        from .reduce import any as reduce_any

        otherwise = (
            math_ops.logical_not(reduce_any(shape_ops.stack(conds), axis=0))
            if conds
            else math_ops.ones_like(x, _dt.bool_)
        )
        conds.append(otherwise)
    elif len(funclist) != len(conds):
        raise ValueError(
            f"piecewise: with {len(conds)} condition(s), funclist must have {len(conds)} or {len(conds) + 1} items, got {len(funclist)}"
        )
    flat = ravel(x)
    y = math_ops.zeros_like(flat)
    for cond, func in zip(conds, funclist):
        where = flatnonzero(cond)
        values = _cast_exactly(
            func(shape_ops.take(flat, where), *args, **kw) if callable(func) else func, flat, "piecewise"
        )
        y = y.at[where].set(values if values.shape == where.shape else shape_ops.broadcast_like(values, where))
    return shape_ops.reshape_like(y, x)


# ------------------------------------------------------------------ index helpers from an array
def _matrix_sizes(arr, who: str) -> tuple:
    arr = as_tensor(arr)
    if arr.ndim != 2:
        raise ValueError(f"{who}: input array must be 2-d, got {_describe('arr', arr)}")
    if None in arr.shape:
        raise ValueError(f"{who}: the sizes of arr must be known, got {_describe('arr', arr)} (unknown size)")
    return arr.shape


def tril_indices_from(arr, k: int = 0) -> tuple:
    """``numpy.tril_indices_from``: ``tril_indices`` for the shape of the 2-d ``arr``.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.tril_indices_from(tl.zeros((2, 3)))]
    [[0, 1, 1], [0, 0, 1]]
    """
    from .numpy_extra import tril_indices

    n, m = _matrix_sizes(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k: int = 0) -> tuple:
    """``numpy.triu_indices_from``: ``triu_indices`` for the shape of the 2-d ``arr``.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.triu_indices_from(tl.zeros((2, 3)), 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    from .numpy_extra import triu_indices

    n, m = _matrix_sizes(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices_from(arr) -> tuple:
    """``numpy.diag_indices_from``: ``diag_indices`` of ``arr``, which has at least 2 axes, all of one length.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.diag_indices_from(tl.zeros((2, 2)))]
    [[0, 1], [0, 1]]
    """
    from .numpy_extra import diag_indices

    arr = as_tensor(arr)
    if arr.ndim < 2:
        raise ValueError(f"diag_indices_from: input array must be at least 2-d, got {_describe('arr', arr)}")
    if None in arr.shape:
        raise ValueError(
            f"diag_indices_from: the sizes of arr must be known, got {_describe('arr', arr)} (unknown size)"
        )
    if len(set(arr.shape)) != 1:
        raise ValueError(
            f"diag_indices_from: all dimensions of input must be of equal length, got {_describe('arr', arr)}"
        )
    return diag_indices(arr.shape[0], arr.ndim)


def mask_indices(n: int, mask_func, k=0) -> tuple:
    """``numpy.mask_indices``: the (rows, columns) where ``mask_func(ones((n, n)), k)`` is nonzero, e.g.
    ``mask_indices(n, tl.triu)`` (a NumPy function works too: it dispatches to tensorlib's).

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.mask_indices(3, tl.triu, 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    n = as_int(n, "mask_indices: n")
    if n < 0:
        raise ValueError(f"mask_indices: n must be non-negative, got {n}")
    mask = np.asarray(mask_func(creation.ones((n, n), dtype=_dt.int64), k))
    if mask.shape != (n, n):
        raise ValueError(f"mask_indices: mask_func must return an ({n}, {n}) array, got shape {mask.shape}")
    return tuple(as_tensor(i.astype(np.int64)) for i in np.nonzero(mask))


def sliding_window_view(x, window_shape, axis=None) -> Tensor:
    """Every window of ``window_shape`` sliding one step along ``axis`` (all axes when None), the window axes
    appended last: ``numpy.lib.stride_tricks.sliding_window_view`` (an axis may repeat, its windows then
    nest).  A gather of ``x``, not a view (tensors are immutable), so gradients reach every element it reads
    (summed over the windows holding it); the axes' sizes must be known under ``tl.function``.

    >>> import tensorlib as tl
    >>> tl.sliding_window_view(tl.tensor([1.0, 2.0, 3.0, 4.0]), 3).numpy().tolist()
    [[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    """
    from .array import moveaxis
    from .shape import take

    x = as_tensor(x)
    where = f"(x shape {x.shape}, {x.dtype}; window_shape {window_shape!r}, axis {axis!r})"
    windows = as_ints(window_shape if np.ndim(window_shape) else (window_shape,), "sliding_window_view: window_shape")
    if axis is None:
        axes = list(range(x.ndim))
        if len(windows) != x.ndim:
            raise ValueError(
                f"sliding_window_view: window_shape needs one entry per axis of x when axis is None {where}"
            )
    else:
        axes = [normalize_axis(a, x.ndim, f"sliding_window_view {where}: axis") for a in np.atleast_1d(axis).tolist()]
        if len(axes) != len(windows):
            raise ValueError(f"sliding_window_view: window_shape needs one entry per axis {where}")
    if builtins.any(w < 0 for w in windows):
        raise ValueError(f"sliding_window_view: window_shape cannot be negative {where}")
    for a, w in zip(axes, windows):
        n = x.shape[a]
        if n is None:
            raise ValueError(
                f"sliding_window_view: the size of axis {a} must be known (traced with unknown sizes) {where}"
            )
        if w > n:
            raise ValueError(f"sliding_window_view: window {w} is larger than axis {a} of size {n} {where}")
        starts = np.arange(n - w + 1, dtype=np.int64)[:, None] + np.arange(w, dtype=np.int64)[None, :]
        x = moveaxis(take(x, starts, axis=a), a + 1, -1)  # (..., starts, ...) with the window axis last
    return x


_PAD_STATISTICS = ("maximum", "minimum", "mean", "median")


def pad_by_statistic(x, widths, mode: str, stat_length=None) -> Tensor:
    """``numpy.pad``'s ``mode`` 'maximum', 'minimum', 'mean' or 'median': each axis in turn (the later ones see
    the earlier ones' padding, as NumPy's corners do) gets ``widths[axis]`` copies before and after of that
    statistic of its first and last ``stat_length`` values (all by default; integers rounded half to even,
    as NumPy).  Differentiable as the statistic is.

    >>> import numpy as np, tensorlib as tl
    >>> pad_by_statistic(tl.tensor([1.0, 2.0, 6.0]), np.array([[1, 2]]), "mean", 2).numpy().tolist()
    [1.5, 1.0, 2.0, 6.0, 4.0, 4.0]
    """
    from .array import median, repeat
    from .reduce import max as reduce_max
    from .reduce import mean, min as reduce_min

    statistic = {"maximum": reduce_max, "minimum": reduce_min, "mean": mean, "median": median}[mode]
    where = f"(x shape {x.shape}, {x.dtype}; mode {mode!r}, stat_length {stat_length!r})"
    lengths = np.full((x.ndim, 2), -1) if stat_length is None else np.broadcast_to(np.asarray(stat_length), (x.ndim, 2))
    for axis, ((before, after), (first, last)) in enumerate(zip(widths.tolist(), lengths.tolist())):
        if not before and not after:
            continue
        n = x.shape[axis]
        if n is None:
            raise ValueError(f"numpy.pad: the size of axis {axis} must be known (traced with unknown sizes) {where}")
        if n == 0 or first == 0 or last == 0:
            raise ValueError(f"numpy.pad: no values to take the {mode} of along axis {axis} {where}")
        parts = []
        for width, start, stop in (
            (before, 0, n if first < 0 else min(first, n)),
            (after, n - (n if last < 0 else min(last, n)), n),
        ):
            if not width:
                parts.append(None)
                continue
            value = statistic(
                shape_ops.getitem(x, (slice(None),) * axis + (slice(start, stop),)), axis=axis, keepdims=True
            )
            if x.dtype == _dt.bool_ and mode in ("mean", "median"):  # NumPy stores the float: nonzero is True
                value = value != 0
            elif x.dtype.kind in "iu" and mode in ("mean", "median"):  # NumPy rounds half to even, then casts
                value = math_ops.cast(math_ops.round(value), x.dtype)
            parts.append(repeat(value, width, axis=axis))
        x = shape_ops.concat([p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)
    return x


def pad_linear_ramp(x, widths, end_values=0) -> Tensor:
    """``numpy.pad(mode='linear_ramp')``: each axis in turn gets ramps from ``end_values`` (a number, a pair or
    a pair per axis) towards its edge values, NumPy's ``linspace(end, edge, width, endpoint=False)``
    (floored for integers); linear in the edges and the end values, so both get gradients.

    >>> import numpy as np, tensorlib as tl
    >>> pad_linear_ramp(tl.tensor([4.0, 8.0]), np.array([[2, 1]]), 0.0).numpy().tolist()
    [0.0, 2.0, 4.0, 8.0, 0.0]
    """
    ends = np.broadcast_to(np.asarray(end_values, dtype=object), (x.ndim, 2))
    for axis, ((before, after), (start_value, stop_value)) in enumerate(zip(widths.tolist(), ends.tolist())):
        if not before and not after:
            continue
        n = x.shape[axis]
        if n is None or n == 0:
            raise ValueError(
                f"numpy.pad: mode='linear_ramp' needs the edges of axis {axis} (x shape {x.shape}, {x.dtype})"
            )
        parts = []
        for width, end, edge_index, reverse in ((before, start_value, 0, False), (after, stop_value, n - 1, True)):
            if not width:
                parts.append(None)
                continue
            edge = shape_ops.getitem(x, (slice(None),) * axis + (slice(edge_index, edge_index + 1),))
            wide = math_ops.cast(edge, _dt.float64) if x.dtype.kind in "biu" else edge
            steps = np.arange(width - 1, -1, -1) if reverse else np.arange(width)  # the after ramp runs outwards
            steps = steps.reshape((-1,) + (1,) * (x.ndim - axis - 1)).astype(_dt.real_dtype(wide.dtype))
            ramp = steps * ((wide - end) / width) + end  # NumPy's linspace: i * step + start
            if x.dtype == _dt.bool_:  # NumPy's linspace(dtype=bool): nonzero is True, no floor
                ramp = ramp != 0
            elif x.dtype.kind in "iu":
                ramp = math_ops.cast(math_ops.floor(ramp), x.dtype)
            parts.append(ramp)
        x = shape_ops.concat([p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)
    return x


# np.pad's modes that only repeat x's own cells: each axis is x taken at np.pad(np.arange(n), width, mode).
_PAD_BY_INDEX = ("edge", "wrap", "reflect", "symmetric")


def pad_with_mode(x, pad_width, mode: str, what: str, **kwargs) -> Tensor:
    """``numpy.pad``'s modes other than ``"constant"`` (``what`` names the caller in errors): the statistics,
    ``linear_ramp``, and the modes that repeat x's cells (``edge``, ``wrap``, ``reflect``, ``symmetric``), each
    a gather or reduction of x (so differentiable)."""
    array = as_tensor(x)
    if (
        mode in _PAD_STATISTICS
        and set(kwargs) <= {"stat_length"}
        or mode == "linear_ramp"
        and set(kwargs) <= {"end_values"}
    ):
        widths = np.broadcast_to(
            np.asarray(pad_width.numpy() if isinstance(pad_width, Tensor) else pad_width), (array.ndim, 2)
        )
        if mode == "linear_ramp":
            return pad_linear_ramp(array, widths, kwargs.get("end_values", 0))
        return pad_by_statistic(array, widths, mode, kwargs.get("stat_length"))
    odd = mode in ("reflect", "symmetric") and kwargs.get("reflect_type", "even") == "odd"
    if mode not in _PAD_BY_INDEX or set(kwargs) - {"reflect_type"} or kwargs.get("reflect_type", "even") not in _ODD:
        given = "".join(f" with {k}={v!r}" for k, v in kwargs.items())
        raise TypeError(
            f"{what}: mode={mode!r}{given} is not supported on tensorlib Tensors (constant, linear_ramp, "
            f"{', '.join(_PAD_STATISTICS)}, {', '.join(_PAD_BY_INDEX)}, and reflect and symmetric with "
            f"reflect_type='odd', are); shape {tuple(array.shape)} {array.dtype}"
        )
    widths = np.broadcast_to(
        np.asarray(pad_width.numpy() if isinstance(pad_width, Tensor) else pad_width), (array.ndim, 2)
    )
    for axis, width in enumerate(widths):
        if width.any():
            if array.shape[axis] is None:
                raise ValueError(
                    f"{what}: mode={mode!r} needs the size of axis {axis}, unknown while tl.function traces "
                    f"(shape {tuple(array.shape)}); give it in the TensorSpec"
                )
            index = np.pad(np.arange(array.shape[axis]), width, mode=mode)  # (NumPy's errors: an empty axis)
            if odd and array.shape[axis] > 1:
                array = _pad_reflect_odd(array, axis, *width.tolist(), mode == "symmetric")
            else:
                array = shape_ops.take(array, index, axis=axis)
    return array


_ODD = ("even", "odd")


def _pad_reflect_odd(x, axis: int, before: int, after: int, include_edge: bool) -> Tensor:
    """numpy.pad's ``reflect_type='odd'`` along ``axis``: chunks ``2 * edge - reflected`` added at both ends in
    NumPy's order (``_set_reflect_both``: each round reflects at most the part a period allows, about the current
    edge), so widths past the axis repeat it as NumPy does; slices and concatenations, so differentiable.  A bool
    ``x`` stays bool, as NumPy stores the chunks (nonzero is True)."""
    period = x.shape[axis]

    def part(t, index):
        return shape_ops.take(t, np.asarray(index, np.int64), axis=axis)

    def stored(chunk):  # NumPy computes 2 * edge - reflected in int64 for bools and stores it: nonzero is True
        return chunk != 0 if x.dtype == _dt.bool_ else chunk

    while before > 0 or after > 0:
        length = x.shape[axis]
        if include_edge:
            usable, offset = length // period * period, 1
        else:
            usable, offset = (length - 1) // (period - 1) * (period - 1), 0
        chunks = [None, None]
        if before > 0:
            size = min(usable, before)
            chunks[0] = stored(2 * part(x, [0]) - part(x, np.arange(size - offset, -offset, -1)))
            before -= size
        if after > 0:
            size = min(usable, after)
            chunks[1] = stored(
                2 * part(x, [length - 1]) - part(x, np.arange(length - 2 + offset, length - 2 + offset - size, -1))
            )
            after -= size
        x = shape_ops.concat([c for c in (chunks[0], x, chunks[1]) if c is not None], axis=axis)
    return x


# ------------------------------------------------------------------ NumPy's names for what tensorlib has
around = math_ops.round  # NumPy's (and jax.numpy's) other name for round


def concatenate(arrays, axis: int | None = 0, *, dtype=None, casting: str = "same_kind") -> Tensor:
    """``numpy.concatenate`` (``jax.numpy``'s): ``concat`` of ``arrays`` along ``axis``, or of the flattened
    arrays with ``axis=None``; ``dtype`` casts them first under NumPy's ``casting`` rule.  Differentiable.

    >>> import tensorlib as tl
    >>> tl.concatenate([tl.tensor([[1, 2]]), tl.tensor([[3], [4]])], axis=None).numpy().tolist()
    [1, 2, 3, 4]
    """
    from .standard import unstack

    if isinstance(arrays, Tensor):  # NumPy iterates over an array's first axis
        arrays = unstack(arrays) if arrays.ndim else [arrays]
    arrays = list(arrays)
    if dtype is not None:
        arrays = math_ops.cast_for_loop("concatenate", arrays, dtype, casting)
    if axis is None:
        return shape_ops.concat([shape_ops.reshape(a, (-1,)) for a in as_tensors(*arrays)], axis=0)
    return shape_ops.concat(arrays, axis=as_int(axis, "concatenate: axis"))


def ndim(a) -> int:
    """The number of axes of ``a`` (``numpy.ndim``, ``jax.numpy.ndim``).

    >>> import tensorlib as tl
    >>> tl.ndim(tl.ones((2, 3))), tl.shape(tl.ones((2, 3))), tl.size(tl.ones((2, 3)), axis=1)
    (2, (2, 3), 3)
    """
    return as_tensor(a).ndim


def shape(a) -> tuple:
    """The shape of ``a`` as a tuple (``numpy.shape``); under ``tl.function`` an unknown size is None."""
    return tuple(as_tensor(a).shape)


def size(a, axis=None) -> int | None:
    """The number of elements of ``a``, or along ``axis`` (an int or, as NumPy 2.4, a tuple); None where a
    size is unknown under ``tl.function``."""
    a = as_tensor(a)
    if axis is None:
        return a.size
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    sizes = [a.shape[normalize_axis(i, a.ndim, f"size (shape {a.shape}): axis", scalar_axis=False)] for i in axes]
    return None if None in sizes else math.prod(sizes)


def copy(a) -> Tensor:
    """``numpy.copy`` (``jax.numpy.copy``): a new tensor with ``a``'s values; tensor values are immutable, so
    this is ``identity``, and the gradient passes through.

    >>> import tensorlib as tl
    >>> tl.copy(tl.tensor([1.0, 2.0])).numpy().tolist()
    [1.0, 2.0]
    """
    return math_ops.identity(a)


class _Grid:
    """``numpy.mgrid`` / ``numpy.ogrid`` (``jax.numpy``'s): NumPy's dense grid of the slices, or its open one
    (arrays that broadcast to it), as constant tensors of NumPy's dtypes (int64 for integer slices, float64 for
    float steps or a complex one, a number of points).

    >>> import tensorlib as tl
    >>> tl.mgrid[0:2, 0:3].shape, tl.mgrid[0:1:3j].numpy().tolist(), [g.shape for g in tl.ogrid[0:2, 0:3]]
    ((2, 2, 3), [0.0, 0.5, 1.0], [(2, 1), (1, 3)])
    """

    def __init__(self, name: str, grid):
        self._name, self._grid = name, grid

    def __getitem__(self, key):
        try:
            grid = self._grid[key]
        except (TypeError, ValueError, AttributeError) as e:  # (NumPy's AttributeError: a slice of strings)
            kind = ValueError if isinstance(e, ValueError) else TypeError
            raise kind(f"{self._name}: expected slices of numbers, got {key!r} ({e})") from None
        return tuple(map(creation.tensor, grid)) if isinstance(grid, tuple) else creation.tensor(grid)

    def __repr__(self) -> str:
        return f"tl.{self._name}"


mgrid = _Grid("mgrid", np.mgrid)
ogrid = _Grid("ogrid", np.ogrid)

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
from ..dispatch import as_tensor
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
        high, rem = divmod(int(period), 2)
        ambiguous = rem == 0
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
    axes = range(filt.ndim) if axis is None else [normalize_axis(a, filt.ndim) for a in np.atleast_1d(axis)]
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

    a, b = ravel(as_tensor(ar1)), ravel(as_tensor(ar2))
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = (math_ops.cast(t, dtype) if t.dtype != dtype else t for t in (a, b))
    if not assume_unique:
        a, b = unique(a), unique(b)
    values = sort(math_ops.stop_gradient(shape_ops.concat([a, b], axis=0)))
    sorted_values = _eager_values(values, "setxor1d")
    edge = np.concatenate([[True], sorted_values[1:] != sorted_values[:-1], [True]])
    return shape_ops.take(values, np.flatnonzero(edge[1:] & edge[:-1]).astype(np.int64))


# ------------------------------------------------------------------ histograms
def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Tensor:  # noqa: A002
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
        weights = as_tensor(weights)
        if math.prod(weights.shape) != a.shape[0] or None in weights.shape:
            raise ValueError(
                f"histogram_bin_edges: weights must have the shape of a {where}, got {_describe('weights', weights)}"
            )
        if isinstance(bins, str):
            raise TypeError(f"histogram_bin_edges: the {bins!r} estimator does not take weights {where}")
    return histogram_edges(a, bins, range, "histogram_bin_edges", where)


def histogramdd(sample, bins=10, range=None, density: bool = False, weights=None) -> tuple:  # noqa: A002
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
        sample = shape_ops.stack([shape_ops.reshape(as_tensor(s), (-1,)) for s in sample], axis=1)
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
        values = shape_ops.reshape(as_tensor(weights), (-1,))
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


def histogram2d(x, y, bins=10, range=None, density: bool = False, weights=None) -> tuple:  # noqa: A002
    """``numpy.histogram2d``: ``(hist, xedges, yedges)`` of the points ``(x[i], y[i])``, :func:`histogramdd`
    of two dimensions (``bins``: a number or edges for both, or one per axis).

    >>> import tensorlib as tl
    >>> hist, xedges, yedges = tl.histogram2d(tl.tensor([0.0, 1.0, 1.0]), tl.tensor([0.0, 1.0, 0.0]), bins=2)
    >>> hist.numpy().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    x, y = as_tensor(x), as_tensor(y)
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

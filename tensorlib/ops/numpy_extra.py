"""More of NumPy's array functions, as exact compositions of tensorlib ops (so gradients of any order,
tracing under ``tl.function`` and every backend come with them): grids and broadcasting (``meshgrid``,
``broadcast_arrays``, ``broadcast_shapes``), ranges (``logspace``, ``geomspace``), index helpers (``tri``,
``triu_indices``, ``tril_indices``, ``diag_indices``, ``indices``, ``unravel_index``, ``ravel_multi_index``),
splitting and assembling (``hsplit``, ``vsplit``, ``dsplit``, ``rollaxis``, ``block``, ``insert``,
``delete``), calculus and statistics (``ediff1d``, ``trapezoid``, ``cov``, ``corrcoef``, ``interp``,
``convolve``, ``correlate``, ``polyval``, ``select``, ``vander``, ``gradient``, ``histogram``), and sets and orderings (``isin``, ``intersect1d``,
``union1d``, ``setdiff1d``, ``lexsort``, ``partition``, ``argpartition``).

>>> import tensorlib as tl
>>> xx, yy = tl.meshgrid(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([10.0, 20.0]))
>>> (xx + yy).numpy().tolist()
[[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dispatch import as_tensor, as_tensors
from ..tensor import Tensor
from . import creation
from . import elementwise as ew
from . import math as math_ops
from . import shape as shape_ops
from ._shapes import as_int, as_ints, normalize_axis
from ._shapes import broadcast_shapes as _broadcast_shapes


def _shape_of(x) -> tuple:
    return tuple(x.shape)


def _full_broadcast(x, shape, others):
    """``x`` broadcast to ``shape``; with unknown (traced) sizes, to the broadcast of ``others``."""
    if None not in shape:
        return shape_ops.broadcast_to(x, shape)
    for other in others:
        x = shape_ops.broadcast_like(x, other) if _shape_of(other) != _shape_of(x) else x
    return x


# ------------------------------------------------------------------ grids and broadcasting
def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """``numpy.meshgrid``: coordinate grids from 1-D coordinate vectors (N-D inputs are flattened, as NumPy).
    ``indexing="xy"`` (the default) swaps the first two axes of the result, ``"ij"`` keeps the input order;
    ``sparse=True`` returns the broadcastable vectors without expanding them.  The gradient sums over the grid.

    >>> import tensorlib as tl
    >>> [g.shape for g in tl.meshgrid(tl.zeros(3), tl.zeros(2))], tl.meshgrid(tl.zeros(3), tl.zeros(2), indexing="ij")[0].shape
    ([(2, 3), (2, 3)], (3, 2))
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ndim = len(xi)
    xs = [shape_ops.reshape(as_tensor(x), (-1,)) for x in xi]
    out = []
    for i, x in enumerate(xs):
        s = [1] * ndim
        s[1 - i if indexing == "xy" and ndim > 1 and i < 2 else i] = -1
        out.append(shape_ops.reshape(x, tuple(s)))
    if not sparse and ndim > 1:
        shape = _broadcast_shapes(*(_shape_of(o) for o in out))
        out = [_full_broadcast(o, shape, out) for o in out]
    return tuple(out)


def broadcast_shapes(*args) -> tuple:
    """``numpy.broadcast_shapes``: the shape that shapes (ints or tuples) broadcast to.

    >>> import tensorlib as tl
    >>> tl.broadcast_shapes((2, 1), (3,), ())
    (2, 3)
    """
    shapes = [
        (as_int(s, "broadcast_shapes: size"),) if not np.ndim(s) else as_ints(s, "broadcast_shapes: size") for s in args
    ]
    for s in shapes:
        if any(d < 0 for d in s):
            raise ValueError(f"broadcast_shapes: sizes must be non-negative, got shape {tuple(s)}")
    if not shapes:
        return ()
    try:
        return _broadcast_shapes(*(tuple(s) for s in shapes))
    except ValueError as e:
        raise ValueError(f"broadcast_shapes: {e}") from None


def broadcast_arrays(*args) -> tuple:
    """``numpy.broadcast_arrays``: the arguments broadcast against each other (the gradient of each sums
    back to its shape).  NumPy returns read-only views; tensors are immutable anyway.

    >>> import tensorlib as tl
    >>> [t.shape for t in tl.broadcast_arrays(tl.zeros((2, 1)), tl.zeros(3))]
    [(2, 3), (2, 3)]
    """
    ts = [as_tensor(a) for a in args]
    try:
        shape = _broadcast_shapes(*(_shape_of(t) for t in ts)) if ts else ()
    except ValueError:
        raise ValueError(
            "broadcast_arrays: shapes "
            + ", ".join(f"{_shape_of(t)} ({t.dtype})" for t in ts)
            + " cannot be broadcast together"
        ) from None
    return tuple(math_ops.unaliased(t) if _shape_of(t) == shape else _full_broadcast(t, shape, ts) for t in ts)


# ------------------------------------------------------------------ ranges
def _ends(start, stop, num, endpoint, name):
    num = as_int(num, f"{name}: num")
    if num < 0:
        raise ValueError(f"{name}: number of samples {num} must be non-negative")
    for v in (start, stop):
        if isinstance(v, Tensor) and v.ndim != 0:
            raise ValueError(f"{name}: start and stop must be scalars, got a tensor of shape {v.shape} ({v.dtype})")
    return num


def _steps(start, stop, num, endpoint, dtype):
    """``linspace`` in float64 with NumPy's ``endpoint``; tensor bounds stay inputs (gradients reach them)."""
    if endpoint:
        return creation.linspace(start, stop, num, dtype=dtype)
    return creation.linspace(start, stop, num + 1, dtype=dtype)[:num]


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0) -> Tensor:
    """``numpy.logspace``: ``base ** linspace(start, stop, num)``.  The default dtype follows the bounds as
    ``linspace``'s does (float32 for Python numbers; NumPy's is float64); 0-d float tensor bounds are inputs
    (gradients reach them).  Only scalar bounds and ``base`` (so ``axis`` must be 0 or -1).

    >>> import tensorlib as tl
    >>> tl.logspace(0, 3, 4).numpy().tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    num = _ends(start, stop, num, endpoint, "logspace")
    if as_int(axis, "logspace: axis") not in (0, -1):
        raise ValueError(f"logspace: axis {axis} is out of bounds for the 1-d result (scalar start and stop)")
    dtype = creation.bounds_dtype((start, stop, base), dtype, float_valued=True)
    wide = _dt.complex128 if dtype.kind == "c" else _dt.float64
    for v in (start, stop, base):  # NumPy drops their imaginary parts with a ComplexWarning
        _dt.check_keeps_imaginary(v.dtype if isinstance(v, Tensor) else np.asarray(v).dtype, dtype, "logspace")
    exps = _steps(start, stop, num, endpoint, wide)
    if isinstance(base, Tensor):
        base = math_ops.cast(base, wide)
    return math_ops.cast(math_ops.power(base, exps), dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0) -> Tensor:
    """``numpy.geomspace``: a geometric progression from ``start`` to ``stop`` (both ends exact; negative
    ends allowed when both have the same sign).  Defaults as ``logspace``; 0-d float tensor bounds are inputs.

    >>> import tensorlib as tl
    >>> tl.geomspace(1, 1000, 4).numpy().tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    num = _ends(start, stop, num, endpoint, "geomspace")
    if as_int(axis, "geomspace: axis") not in (0, -1):
        raise ValueError(f"geomspace: axis {axis} is out of bounds for the 1-d result (scalar start and stop)")
    dtype = creation.bounds_dtype((start, stop), dtype, float_valued=True)
    # The bounds' values are checked where known (a traced bound is checked by nothing: NaNs then).
    s0, s1 = (v if not isinstance(v, Tensor) else None if v._value is None else v.item() for v in (start, stop))
    known = [v for v in (s0, s1) if v is not None]
    if any(isinstance(v, complex) or np.iscomplexobj(v) for v in known):
        raise TypeError(f"geomspace: complex bounds are not supported, got {start!r} and {stop!r}")
    if any(v == 0 for v in known):
        raise ValueError(f"geomspace: start and stop must not be zero, got {start!r} and {stop!r}")
    if len(known) == 2 and (s0 < 0) != (s1 < 0):
        raise ValueError(f"geomspace: start {s0!r} and stop {s1!r} must have the same sign")
    if s0 is not None or s1 is not None:
        sign = -1.0 if (s0 if s0 is not None else s1) < 0 else 1.0
    else:
        sign = math_ops.sign(math_ops.cast(start, _dt.float64))
    lo, hi = (math_ops.cast(v, _dt.float64) * sign if isinstance(v, Tensor) else float(v) * sign for v in (start, stop))
    # NumPy: sign * logspace(log10 |start|, log10 |stop|), its ends set to start and stop exactly.
    exps = _steps(
        ew.log10(lo) if isinstance(lo, Tensor) else np.log10(lo),
        ew.log10(hi) if isinstance(hi, Tensor) else np.log10(hi),
        num,
        endpoint,
        _dt.float64,
    )
    values = math_ops.power(10.0, exps)
    index = creation.arange(num)
    values = math_ops.where(index == 0, lo, values)
    if endpoint and num > 1:
        values = math_ops.where(index == num - 1, hi, values)
    return math_ops.cast(values * sign, dtype)


# ------------------------------------------------------------------ index helpers
def tri(N: int, M: int | None = None, k: int = 0, dtype=_dt.float32) -> Tensor:
    """``numpy.tri``: ones at and below the ``k``-th diagonal of an ``N x M`` matrix (default dtype float32,
    tensorlib's default float, as ``eye``; NumPy's is float64).

    >>> import tensorlib as tl
    >>> tl.tri(2, 3, k=1).numpy().tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    N = as_int(N, "tri: N")
    M = N if M is None else as_int(M, "tri: M")
    k = as_int(k, "tri: k")
    if N < 0 or M < 0:
        raise ValueError(f"tri: sizes must be non-negative, got N={N}, M={M}")
    return as_tensor(np.tri(N, M, k, dtype=_dt.as_dtype(dtype)))


def _index_tuple(arrays) -> tuple:
    return tuple(as_tensor(a.astype(np.int64)) for a in arrays)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """``numpy.triu_indices``: the (rows, columns) of the upper triangle from the ``k``-th diagonal, int64.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.triu_indices(3, 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    n, k = as_int(n, "triu_indices: n"), as_int(k, "triu_indices: k")
    m = n if m is None else as_int(m, "triu_indices: m")
    if n < 0 or m < 0:
        raise ValueError(f"triu_indices: sizes must be non-negative, got n={n}, m={m}")
    return _index_tuple(np.triu_indices(n, k, m))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """``numpy.tril_indices``: the (rows, columns) of the lower triangle to the ``k``-th diagonal, int64.

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.tril_indices(3, -1)]
    [[1, 2, 2], [0, 0, 1]]
    """
    n, k = as_int(n, "tril_indices: n"), as_int(k, "tril_indices: k")
    m = n if m is None else as_int(m, "tril_indices: m")
    if n < 0 or m < 0:
        raise ValueError(f"tril_indices: sizes must be non-negative, got n={n}, m={m}")
    return _index_tuple(np.tril_indices(n, k, m))


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """``numpy.diag_indices``: ``ndim`` copies of ``arange(n)`` (int64), indexing the main diagonal.

    >>> import tensorlib as tl
    >>> m = tl.reshape(tl.arange(9), (3, 3))
    >>> m[tl.diag_indices(3)].numpy().tolist()
    [0, 4, 8]
    """
    n, ndim = as_int(n, "diag_indices: n"), as_int(ndim, "diag_indices: ndim")
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative, got n={n}, ndim={ndim}")
    return _index_tuple(np.diag_indices(n, ndim))


def indices(dimensions, dtype=_dt.int64, sparse: bool = False):
    """``numpy.indices``: a grid's index arrays, stacked into shape ``(len(dimensions), *dimensions)``
    (a tuple of broadcastable arrays when ``sparse``).

    >>> import tensorlib as tl
    >>> tl.indices((2, 3))[1].numpy().tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    dims = as_ints(dimensions, "indices: dimensions")
    if any(d < 0 for d in dims):
        raise ValueError(f"indices: dimensions must be non-negative, got {tuple(dims)}")
    result = np.indices(tuple(dims), dtype=_dt.as_dtype(dtype), sparse=sparse)
    return tuple(as_tensor(r) for r in result) if sparse else as_tensor(result)


def _check_integer(t, name, what):
    if t.dtype.kind not in "iu":
        raise TypeError(f"{name}: {what} must be integers, got {t.dtype} (shape {t.shape})")


def _strides(dims, order, name):
    if order not in ("C", "F"):
        raise ValueError(f"{name}: order must be 'C' or 'F', got {order!r}")
    strides, step = [0] * len(dims), 1
    for i in range(len(dims)) if order == "F" else reversed(range(len(dims))):
        strides[i] = step
        step *= dims[i]
    return strides, step


def unravel_index(indices, shape, order: str = "C") -> tuple:
    """``numpy.unravel_index``: flat indices into a tuple of coordinate arrays (int64, not differentiable).
    An index outside ``[0, prod(shape))`` is a ValueError (checked when the values are known, as NumPy).

    >>> import tensorlib as tl
    >>> [t.numpy().tolist() for t in tl.unravel_index(tl.tensor([5, 7]), (2, 4))]
    [[1, 1], [1, 3]]
    """
    t = as_tensor(indices)
    _check_integer(t, "unravel_index", "indices")
    dims = as_ints(shape, "unravel_index: shape") if np.ndim(shape) else [as_int(shape, "unravel_index: shape")]
    if any(d < 0 for d in dims):
        raise ValueError(f"unravel_index: dimensions must be non-negative, got {tuple(dims)}")
    strides, size = _strides(dims, order, "unravel_index")
    if t._value is not None and t.size and (bool((t.numpy() < 0).any()) or bool((t.numpy() >= size).any())):
        raise ValueError(
            f"unravel_index: an index in {t.numpy().ravel()[:8].tolist()} is out of bounds for shape {tuple(dims)} (size {size})"
        )
    t = math_ops.cast(t, _dt.int64)
    return tuple(ew.remainder(ew.floor_divide(t, s), d) if d else t * 0 for s, d in zip(strides, dims))


def ravel_multi_index(multi_index, dims, mode="raise", order: str = "C") -> Tensor:
    """``numpy.ravel_multi_index``: coordinate arrays to flat indices (int64, not differentiable), with
    ``mode`` ``"raise"`` (out of bounds is a ValueError, checked when the values are known), ``"wrap"`` or
    ``"clip"`` (one mode, or one per dimension).

    >>> import tensorlib as tl
    >>> tl.ravel_multi_index((tl.tensor([1, 1]), tl.tensor([1, 3])), (2, 4)).numpy().tolist()
    [5, 7]
    """
    dims = as_ints(dims, "ravel_multi_index: dims") if np.ndim(dims) else [as_int(dims, "ravel_multi_index: dims")]
    coords = [as_tensor(c) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(
            f"ravel_multi_index: got {len(coords)} coordinate arrays for {len(dims)} dimensions {tuple(dims)}"
        )
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    if len(modes) != len(dims) or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise ValueError(
            f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip' (or one per dimension), got {mode!r}"
        )
    strides, _ = _strides(dims, order, "ravel_multi_index")
    if any(d == 0 for d in dims) and coords and any(c.size for c in coords if None not in c.shape):
        raise ValueError(f"ravel_multi_index: cannot index into dimensions {tuple(dims)} with a zero size")
    total = None
    for i, (c, d, s, m) in enumerate(zip(coords, dims, strides, modes)):
        _check_integer(c, "ravel_multi_index", "coordinates")
        c = math_ops.cast(c, _dt.int64)
        if (
            m == "raise"
            and c._value is not None
            and c.size
            and (bool((c.numpy() < 0).any()) or bool((c.numpy() >= d).any()))
        ):
            raise ValueError(
                f"ravel_multi_index: a coordinate along dimension {i} is out of bounds for size {d} (dims {tuple(dims)})"
            )
        if m == "wrap" and d:
            c = ew.remainder(c, d)
        elif m == "clip" and d:
            c = math_ops.clip(c, 0, d - 1)
        term = c * s
        total = term if total is None else total + term
    if total is None:
        raise ValueError("ravel_multi_index: needs at least one coordinate array")
    return total


# ------------------------------------------------------------------ splitting and assembling
def _split_along(name, ary, sections, axis, min_ndim):
    from .array import array_split

    x = as_tensor(ary)
    if x.ndim < min_ndim:
        raise ValueError(
            f"{name}: works only on arrays of {min_ndim} or more dimensions, got shape {x.shape} ({x.dtype})"
        )
    if np.ndim(sections):
        return array_split(x, sections, axis)
    n = as_int(sections, f"{name}: sections")
    size = x.shape[axis]
    if n <= 0 or (size is not None and size % n):
        raise ValueError(
            f"{name}: axis {axis} of size {size} (shape {x.shape}) cannot be split into {n} equal sections"
        )
    return shape_ops.split(x, n, axis)


def hsplit(ary, indices_or_sections) -> tuple:
    """``numpy.hsplit``: split along axis 1 (axis 0 of a 1-d array) into equal sections or at points.

    >>> import tensorlib as tl
    >>> [t.shape for t in tl.hsplit(tl.zeros((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    x = as_tensor(ary)
    return _split_along("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0, 1)


def vsplit(ary, indices_or_sections) -> tuple:
    """``numpy.vsplit``: split along axis 0 of an array of 2 or more dimensions.

    >>> import tensorlib as tl
    >>> [t.shape for t in tl.vsplit(tl.zeros((4, 2)), [1])]
    [(1, 2), (3, 2)]
    """
    return _split_along("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary, indices_or_sections) -> tuple:
    """``numpy.dsplit``: split along axis 2 of an array of 3 or more dimensions.

    >>> import tensorlib as tl
    >>> [t.shape for t in tl.dsplit(tl.zeros((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
    """
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """``numpy.rollaxis``: move ``axis`` to sit before position ``start`` (``moveaxis`` is clearer).

    >>> import tensorlib as tl
    >>> tl.rollaxis(tl.zeros((3, 4, 5, 6)), 3, 1).shape
    (3, 6, 4, 5)
    """
    from .array import moveaxis

    a = as_tensor(a)
    n = a.ndim
    axis = normalize_axis(axis, n, f"rollaxis (shape {a.shape}): axis", scalar_axis=False)
    start = as_int(start, "rollaxis: start")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise ValueError(
            f"rollaxis: start {start - n if start < 0 else start} must be in [{-n}, {n}] for shape {a.shape}"
        )
    if axis < start:
        start -= 1
    if axis == start:
        return math_ops.unaliased(a)
    return moveaxis(a, axis, start)


def _block_depth(arrays, where):
    if isinstance(arrays, tuple):
        raise TypeError(
            f"block: {where} is a tuple; only lists may be used to arrange blocks, and np.block does not allow implicit conversion from tuple to ndarray"
        )
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError(f"block: list {where} is empty (lists cannot be empty)")
        depths = [_block_depth(a, f"{where}[{i}]") for i, a in enumerate(arrays)]
        if len(set(depths)) != 1:
            raise ValueError(f"block: list depths are mismatched: {where} holds lists of different depths {depths}")
        return depths[0] + 1
    return 0


def block(arrays) -> Tensor:
    """``numpy.block``: assemble a tensor from nested lists of blocks, the innermost lists joined along the
    last axis, the next along the second last, and so on (blocks get leading size-1 axes as needed).

    >>> import tensorlib as tl
    >>> tl.block([[tl.ones((2, 2)), tl.zeros((2, 1))], [tl.zeros((1, 3))]]).numpy().tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    depth = _block_depth(arrays, "arrays")

    def leaves(a):
        return [x for b in a for x in leaves(b)] if isinstance(a, list) else [a]

    ndim = max([depth] + [np.ndim(x) if not isinstance(x, Tensor) else x.ndim for x in leaves(arrays)])

    def assemble(a, level):
        if not isinstance(a, list):
            t = math_ops.unaliased(as_tensor(a))
            return (
                shape_ops.reshape(t, (1,) * (ndim - t.ndim) + _shape_of(t))
                if t.ndim < ndim and None not in t.shape
                else _expand(t, ndim)
            )
        parts = [assemble(b, level + 1) for b in a]
        if len(parts) == 1:
            return parts[0]
        try:
            return shape_ops.concat(parts, axis=-(depth - level))
        except ValueError as e:
            raise ValueError(f"block: the blocks at nesting depth {level} do not fit together: {e}") from None

    return assemble(arrays, 0)


def _expand(t, ndim):
    while t.ndim < ndim:
        t = shape_ops.expand_dims(t, 0)
    return t


def _positions(obj, size, name):
    """``obj`` (an int, a slice, a sequence of ints or a boolean mask) as NumPy reads it for ``delete``."""
    if isinstance(obj, slice):
        return np.arange(size)[obj]
    if isinstance(obj, Tensor):
        obj = obj.numpy()
    idx = np.asarray(obj)
    if idx.dtype == bool:
        if idx.shape != (size,):
            raise ValueError(
                f"{name}: boolean array argument obj must be one dimensional and match the axis length of {size}, got shape {idx.shape}"
            )
        return np.flatnonzero(idx)
    if idx.size == 0:
        return idx.astype(np.int64).ravel()
    if idx.dtype.kind not in "iu":
        raise IndexError(f"{name}: arrays used as indices must be of integer (or boolean) type, got {idx.dtype}")
    if ((idx < -size) | (idx >= size)).any():
        raise IndexError(f"{name}: index {idx.ravel().tolist()[:8]} is out of bounds for axis with size {size}")
    return idx.ravel() % size if size else idx.ravel()


def _axis_of(arr, axis, name):
    a = as_tensor(arr)
    if axis is None:
        from .array import ravel

        return ravel(a), 0
    ax = normalize_axis(axis, a.ndim, f"{name} (shape {a.shape}): axis")
    if a.shape[ax] is None:
        raise ValueError(f"{name}: axis {axis} has an unknown size under tl.function (shape {a.shape}, {a.dtype})")
    return a, ax


def delete(arr, obj, axis=None) -> Tensor:
    """``numpy.delete``: ``arr`` without the entries ``obj`` (an int, a slice, integers or a boolean mask)
    along ``axis`` (the flattened array when None); a gather, so the kept entries get the gradient.

    >>> import tensorlib as tl
    >>> tl.delete(tl.tensor([1, 2, 3, 4]), [0, 2]).numpy().tolist()
    [2, 4]
    """
    a, ax = _axis_of(arr, axis, "delete")
    size = a.shape[ax]
    keep = np.ones(size, bool)
    keep[_positions(obj, size, "delete")] = False
    return shape_ops.take(a, np.flatnonzero(keep).astype(np.int64), axis=ax)


def insert(arr, obj, values, axis=None) -> Tensor:
    """``numpy.insert``: ``values`` inserted before the index (or indices) ``obj`` along ``axis`` (the flattened
    array when None), cast to ``arr``'s dtype as NumPy does (complex values of a real ``arr`` are a TypeError,
    as ``tl.tensor``'s); gradients reach ``arr`` and ``values``.

    >>> import tensorlib as tl
    >>> tl.insert(tl.tensor([1, 2, 3]), 1, [7, 8]).numpy().tolist()
    [1, 7, 8, 2, 3]
    """
    a, ax = _axis_of(arr, axis, "insert")
    size = a.shape[ax]
    if isinstance(obj, slice):
        obj = np.arange(size)[obj]
    elif isinstance(obj, Tensor):
        obj = obj.numpy()
    idx = np.asarray(obj)
    if idx.dtype == bool:
        # NumPy 2: a boolean obj is a mask, inserting before its True positions (np.flatnonzero; its length is not
        # checked); a 0-d one is a ValueError.
        if idx.ndim != 1:
            raise ValueError(f"insert: boolean array argument obj must be one dimensional, got shape {idx.shape}")
        idx = np.flatnonzero(idx)
    if (idx.size and idx.dtype.kind not in "iu") or idx.ndim > 1:
        raise IndexError(f"insert: index obj must be an integer or a 1-d sequence of integers, got {obj!r:.60}")
    idx = idx.astype(np.int64)
    if ((idx < -size) | (idx > size)).any():
        raise IndexError(f"insert: index {idx.ravel().tolist()[:8]} is out of bounds for axis {ax} with size {size}")
    idx = np.where(idx < 0, idx + size, idx)
    v = as_tensors(a, values)[1]
    # NumPy casts them with only a ComplexWarning: tl.insert([1.0, 2.0], 1, 5j) inserted 0.0.
    _dt.check_keeps_imaginary(v.dtype, a.dtype, f"insert: values for arr of shape {a.shape}")
    v = math_ops.cast(v, a.dtype) if v.dtype != a.dtype else v
    if idx.size == 1:
        # NumPy: values get at least arr's rank (leading axes); for a scalar obj their first axis then moves to
        # ``axis`` (a block inserted at one place), for a one-element list it does not.
        v = _expand(v, a.ndim)
        if idx.ndim == 0:
            from .array import moveaxis

            v = moveaxis(v, 0, ax)
        count, where = v.shape[ax], int(idx.ravel()[0])
    else:
        count, where = idx.size, idx
    target = tuple(count if i == ax else d for i, d in enumerate(a.shape))
    if _shape_of(v) != target:
        try:
            v = shape_ops.broadcast_to(v, target)
        except ValueError:
            raise ValueError(
                f"insert: values of shape {_shape_of(as_tensor(values))} cannot be broadcast to {target} "
                f"(arr shape {a.shape}, axis {ax})"
            ) from None
    order = np.insert(np.arange(size, dtype=np.int64), where, size + np.arange(count, dtype=np.int64))
    return shape_ops.take(shape_ops.concat([a, v], axis=ax), order, axis=ax)


# ------------------------------------------------------------------ calculus and statistics
def ediff1d(ary, to_end=None, to_begin=None) -> Tensor:
    """``numpy.ediff1d``: differences of the flattened array, with ``to_begin`` and ``to_end`` (flattened)
    around them, cast to its dtype.

    >>> import tensorlib as tl
    >>> tl.ediff1d(tl.tensor([1, 2, 4, 7]), to_begin=-99).numpy().tolist()
    [-99, 1, 2, 3]
    """
    from .array import ravel

    a = ravel(as_tensor(ary))
    parts = [a[1:] - a[:-1]]
    for extra, front in ((to_begin, True), (to_end, False)):
        if extra is None:
            continue
        e = ravel(as_tensors(a, extra)[1])
        if not np.can_cast(e.dtype, parts[0].dtype, "same_kind"):
            raise TypeError(
                f"ediff1d: dtype of {'to_begin' if front else 'to_end'} ({e.dtype}) must be compatible with input {a.dtype} under the same_kind rule"
            )
        e = math_ops.cast(e, parts[0].dtype) if e.dtype != parts[0].dtype else e
        parts.insert(0, e) if front else parts.append(e)
    return parts[0] if len(parts) == 1 else shape_ops.concat(parts, axis=0)


def trapezoid(y, x=None, dx=1.0, axis: int = -1) -> Tensor:
    """``numpy.trapezoid``: the integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points
    ``x`` (1-d along the axis, or ``y``'s shape) or spacing ``dx``; differentiable in ``y`` and ``x``.
    ``trapz`` is the same function (NumPy's older name).

    >>> import tensorlib as tl
    >>> float(tl.trapezoid(tl.tensor([1.0, 2.0, 3.0]), x=tl.tensor([0.0, 1.0, 3.0])))
    6.5
    """
    from .array import diff

    y, x = as_tensors(y, x)
    ax = normalize_axis(axis, y.ndim, f"trapezoid (shape {y.shape}): axis")
    if x is None:
        d = dx
    else:
        if x.ndim == 1:
            if None not in (x.shape[0], y.shape[ax]) and x.shape[0] != y.shape[ax]:
                raise ValueError(f"trapezoid: x of shape {x.shape} does not match axis {ax} of y of shape {y.shape}")
            d = diff(x)
            d = shape_ops.reshape(d, tuple(-1 if i == ax else 1 for i in range(y.ndim)))
        else:
            d = diff(x, axis=ax)
    head = (slice(None),) * ax
    return _sum(d * (y[head + (slice(1, None),)] + y[head + (slice(None, -1),)]) / 2.0, ax)


def _sum(x, axis):
    from . import reduce as reduce_ops

    return reduce_ops.sum(x, axis=axis)


trapz = trapezoid


def cov(
    m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None, aweights=None, *, dtype=None
) -> Tensor:
    """``numpy.cov``: the covariance matrix of the variables in the rows of ``m`` (columns when not
    ``rowvar``), with ``y``'s variables appended, ``ddof``/``bias``, and frequency and analytic weights.
    As NumPy, the result is at least float64 (``dtype`` picks another) and squeezed (one variable gives a
    0-d tensor); differentiable in ``m``, ``y`` and the weights.

    >>> import tensorlib as tl
    >>> tl.cov(tl.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    from . import reduce as reduce_ops
    from .linalg import matmul

    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"cov: ddof must be an integer, got {ddof!r}")
    m, y = as_tensors(m, y)
    if m.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions (shape {m.shape}, {m.dtype})")
    if y is not None:
        if y.ndim > 2:
            raise ValueError(f"cov: y has more than 2 dimensions (shape {y.shape}, {y.dtype})")
    if dtype is None:
        dtype = np.result_type(*(t.dtype for t in (m, y) if t is not None), np.float64)
    dtype = _dt.as_dtype(dtype)

    def rows(t):
        t = math_ops.cast(t, dtype) if t.dtype != dtype else t
        t = shape_ops.reshape(t, (1, -1)) if t.ndim < 2 else t
        return t

    X = rows(m)
    if not rowvar and m.ndim == 2:
        X = shape_ops.transpose(X)
    if X.shape[0] == 0:
        return as_tensor(np.zeros((0, 0), dtype))
    if y is not None:
        Y = rows(y)
        if not rowvar and Y.shape[0] != 1:
            Y = shape_ops.transpose(Y)
        if None not in (X.shape[1], Y.shape[1]) and X.shape[1] != Y.shape[1]:
            raise ValueError(
                f"cov: m and y must have the same number of observations, got shapes {m.shape} and {y.shape}"
            )
        X = shape_ops.concat([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    w = aw = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        (wt,) = as_tensors(weights, floor=_dt.float64)
        if wt.ndim != 1:
            raise RuntimeError(f"cov: cannot handle multidimensional {name} (shape {wt.shape})")
        if None not in (wt.shape[0], n) and wt.shape[0] != n:
            raise RuntimeError(f"cov: incompatible numbers of samples ({n}) and {name} (shape {wt.shape})")
        if wt._value is not None:
            values = wt.numpy()
            if name == "fweights" and not np.all(values == np.around(values)):
                raise TypeError("cov: fweights must be integer")
            if (values < 0).any():
                raise ValueError(f"cov: {name} cannot be negative")
        wt = math_ops.cast(wt, _dt.float64) if wt.dtype != _dt.float64 else wt
        if name == "aweights":
            aw = wt
        w = wt if w is None else w * wt
    if w is None:
        avg = reduce_ops.mean(X, axis=1, keepdims=True)
        # the number of observations is read when the graph runs where the shapes leave it unknown
        fact = (n if n is not None else math_ops.cast(shape_ops.shape_size(X, (1,)), _dt.float64)) - ddof
    else:
        w = math_ops.cast(w, dtype) if dtype.kind == "f" and w.dtype != dtype else w
        w_sum = reduce_ops.sum(w)
        avg = reduce_ops.sum(X * w, axis=1, keepdims=True) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * reduce_ops.sum(w * aw) / w_sum
    if isinstance(fact, Tensor):
        scale = math_ops.where(fact > 0, 1.0 / math_ops.where(fact > 0, fact, 1.0), np.inf)
    else:
        scale = 1.0 / fact if fact > 0 else np.inf
    X = X - avg
    X_T = shape_ops.transpose(X if w is None else X * w)
    c = matmul(X, ew.conj(X_T) if X.dtype.kind == "c" else X_T)
    c = c * math_ops.cast(scale, c.dtype) if isinstance(scale, Tensor) else c * scale
    return shape_ops.squeeze(c) if 1 in c.shape else c


def corrcoef(x, y=None, rowvar: bool = True, *, dtype=None) -> Tensor:
    """``numpy.corrcoef``: Pearson correlation coefficients, ``cov`` normalised by the standard deviations
    and clipped to [-1, 1] as NumPy does (real results; complex ones are not clipped).

    >>> import tensorlib as tl
    >>> tl.corrcoef(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([3.0, 1.0, -1.0])).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    from .array import diagonal

    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = diagonal(c)
    std = math_ops.sqrt(ew.real(d) if d.dtype.kind == "c" else d)
    c = c / shape_ops.expand_dims(std, 1) / shape_ops.expand_dims(std, 0)
    return math_ops.clip(c, -1.0, 1.0) if c.dtype.kind != "c" else c


def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """``numpy.interp``: the piecewise-linear interpolant through ``(xp, fp)`` at ``x`` (``xp`` increasing:
    a decreasing step is a ValueError in eager mode, where NumPy and JAX return values that mean nothing;
    ``left``/``right`` outside it, default ``fp``'s ends; ``period`` for periodic ``x``), float64 for real
    inputs as NumPy (complex ``fp`` stays complex).  Differentiable in ``x`` (the slope of the segment
    holding it, the right one at a knot), in ``fp`` and in ``xp`` (as ``jax.numpy.interp``); ``left`` and
    ``right`` taken as Python numbers get none.

    >>> import tensorlib as tl
    >>> tl.interp(tl.tensor([0.5, 2.5, 9.0]), tl.tensor([0.0, 1.0, 3.0]), tl.tensor([0.0, 10.0, 30.0])).numpy().tolist()
    [5.0, 25.0, 30.0]
    """
    from . import search
    from .array import argsort

    x, xp, fp = as_tensors(x, xp, fp, floor=_dt.float64)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError(
            f"interp: xp and fp must be 1-d, got shapes {xp.shape} ({xp.dtype}) and {fp.shape} ({fp.dtype})"
        )
    if None not in (xp.shape[0], fp.shape[0]) and xp.shape[0] != fp.shape[0]:
        raise ValueError(f"interp: fp and xp are not of the same length, got shapes {fp.shape} and {xp.shape}")
    if xp.shape[0] == 0:
        raise ValueError("interp: array of sample points (xp) is empty")
    for name, t in (("x", x), ("xp", xp)):
        if t.dtype.kind == "c":
            raise TypeError(f"interp: {name} must be real, got {t.dtype}")
    if period is None and not xp.is_symbolic:
        steps = np.diff(np.asarray(xp.numpy()))
        if np.any(steps < 0):
            raise ValueError(
                f"interp: xp must be increasing, but xp[{int(np.argmax(steps < 0)) + 1}] is below the value before "
                f"it (xp shape {xp.shape} {xp.dtype}); sort xp and fp together (period= sorts them itself)"
            )
    out = np.complex128 if fp.dtype.kind == "c" else np.float64
    x, xp, fp = (
        math_ops.cast(t, d) if t.dtype != d else t for t, d in ((x, _dt.float64), (xp, _dt.float64), (fp, out))
    )
    if period is not None:
        if period == 0:
            raise ValueError("interp: period must be a non-zero value")
        period = abs(float(period))
        left = right = None
        x = ew.remainder(x, period)
        xp = ew.remainder(xp, period)
        order = argsort(xp, stable=True)
        xp, fp = shape_ops.take(xp, order), shape_ops.take(fp, order)
        xp = shape_ops.concat([xp[-1:] - period, xp, xp[0:1] + period], axis=0)
        fp = shape_ops.concat([fp[-1:], fp, fp[0:1]], axis=0)
    n = xp.shape[0]
    if n == 1:
        value = shape_ops.broadcast_to(fp[0], x.shape) if None not in x.shape else fp[0] + x * 0
    else:
        # the last segment starts at knot n - 2 (n read when the graph runs where the shapes leave it unknown)
        last = n - 2 if n is not None else shape_ops.shape_size(xp, (0,)) - 2
        j = math_ops.clip(search.searchsorted(xp, x, side="right") - 1, 0, last)
        x0, x1 = shape_ops.take(xp, j), shape_ops.take(xp, j + 1)
        f0, f1 = shape_ops.take(fp, j), shape_ops.take(fp, j + 1)
        width = x1 - x0
        safe = math_ops.where(width == 0, 1.0, width)
        slope = (f1 - f0) / (safe if fp.dtype.kind != "c" else math_ops.cast(safe, fp.dtype))
        dx0 = x - x0 if fp.dtype.kind != "c" else math_ops.cast(x - x0, fp.dtype)
        value = slope * dx0 + f0
        # NumPy's fallbacks: a repeated knot gives the left value; an inf slope tries the other end.
        value = math_ops.where(width == 0, f0, value)
        if fp.dtype.kind != "c":
            from .floating import isnan

            dx1 = x - x1
            value = math_ops.where(isnan(value), slope * dx1 + f1, value)
            value = math_ops.where(isnan(value) & (f0 == f1), f0, value)
        value = math_ops.where(x == xp[-1], fp[-1], value)
    lo = fp[0] if left is None else left
    hi = fp[-1] if right is None else right
    value = math_ops.where(x < xp[0], lo, value)
    value = math_ops.where(x > xp[-1], hi, value)
    from .floating import isnan

    if n is None or n > 1:  # a NaN x gives NaN (not a repeated knot's value); with one knot, NumPy gives fp[0]
        value = math_ops.where(isnan(x), np.nan, value)
    return math_ops.cast(value, out) if value.dtype != out else value


def _correlate_full(a, v):
    """``sum_n a[n + k] * v[n]`` for every shift k with an overlap (length len(a) + len(v) - 1): a gather of
    the zero-padded ``a`` into windows, times ``v``."""
    from .linalg import matmul

    n, m = a.shape[0], v.shape[0]
    padded = shape_ops.pad(a, [(m - 1, m - 1)])
    windows = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    return matmul(shape_ops.take(padded, windows.astype(np.int64)), shape_ops.expand_dims(v, 1))[:, 0]


def _correlate(a, v, mode, name, flip):
    from .array import flip as flip_

    a, v = (shape_ops.reshape(t, (1,)) if t.ndim == 0 else t for t in as_tensors(a, v))  # NumPy's ndmin=1
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}: a and v must be 1-d, got shapes {a.shape} ({a.dtype}) and {v.shape} ({v.dtype})")
    n, m = a.shape[0], v.shape[0]
    if None in (n, m):
        raise ValueError(f"{name}: the lengths must be known (shapes {a.shape} and {v.shape} under tl.function)")
    if n == 0 or m == 0:
        raise ValueError(f"{name}: {'a' if n == 0 else 'v'} cannot be empty (shapes {a.shape} and {v.shape})")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    dtype = np.result_type(a.dtype, v.dtype)
    a, v = (math_ops.cast(t, dtype) if t.dtype != dtype else t for t in (a, v))
    if flip:
        v = flip_(v, 0)
    elif v.dtype.kind == "c":
        v = ew.conj(v)
    if m <= n:
        full = _correlate_full(a, v)
    else:  # the shorter one slides (less memory): sum_n a[n + k] v[n] = sum_p v[p - k] a[p]
        full = flip_(_correlate_full(v, a), 0)
    if mode == "full":
        return full
    short, long_ = min(n, m), max(n, m)
    # NumPy centres "same" with the extra value on the left for convolve, on the right for correlate(short, long)
    start = short - 1 if mode == "valid" else (short - 1) // 2 if flip or n >= m else short // 2
    length = long_ - short + 1 if mode == "valid" else long_
    return full[start : start + length]


def convolve(a, v, mode: str = "full") -> Tensor:
    """``numpy.convolve``: the discrete linear convolution of two 1-d sequences, ``mode`` ``"full"``,
    ``"same"`` (``max(len)`` values, centred) or ``"valid"`` (full overlap only); differentiable in both.
    Built as a gather of windows times a matrix product: memory grows as ``len(a) * len(v)``.

    >>> import tensorlib as tl
    >>> tl.convolve(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([0.0, 1.0, 0.5])).numpy().tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    return _correlate(a, v, mode, "convolve", True)


def correlate(a, v, mode: str = "valid") -> Tensor:
    """``numpy.correlate``: ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-d sequences, modes as
    ``convolve`` (default ``"valid"``); differentiable in both.

    >>> import tensorlib as tl
    >>> tl.correlate(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([0.0, 1.0, 0.5]), "full").numpy().tolist()
    [0.5, 2.0, 3.5, 3.0, 0.0]
    """
    return _correlate(a, v, mode, "correlate", False)


def polyval(p, x) -> Tensor:
    """``numpy.polyval``: the polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's
    rule; differentiable in both.

    >>> import tensorlib as tl
    >>> tl.polyval(tl.tensor([3.0, 0.0, 1.0]), tl.tensor([5.0])).numpy().tolist()
    [76.0]
    """
    p, x = as_tensors(p, x)
    if p.ndim > 1:
        raise ValueError(f"polyval: p must be 1-d (or 0-d), got shape {p.shape} ({p.dtype})")
    y = math_ops.zeros_like(x)
    if p.ndim == 0:
        return y * x + p
    if p.shape[0] is None:
        raise ValueError(f"polyval: the number of coefficients must be known (shape {p.shape} under tl.function)")
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def select(condlist, choicelist, default=0) -> Tensor:
    """``numpy.select``: from the first true condition's choice at each position, else ``default`` (all
    broadcast together, the choices' dtypes promoted); differentiable in the choices and ``default``.

    >>> import tensorlib as tl
    >>> x = tl.tensor([-2.0, 0.0, 3.0])
    >>> tl.select([x < 0, x > 0], [-x, x * 10], default=-1.0).numpy().tolist()
    [2.0, -1.0, 30.0]
    """
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: list of cases must be same length as list of conditions, got {len(choicelist)} and {len(condlist)}"
        )
    if not condlist:
        raise ValueError("select: select with an empty condition list is not possible")
    conds = [as_tensor(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != _dt.bool_:
            raise TypeError(
                f"select: invalid entry {i} in condlist: should be boolean ndarray, got {c.dtype} (shape {c.shape})"
            )
    # read together: a list choice next to a float64 one is float64, as NumPy reads it
    *choices, result = as_tensors(*choicelist, default)
    for c, choice in zip(reversed(conds), reversed(choices)):
        result = math_ops.where(c, choice, result)
    return result


def choose(a, choices, mode: str = "raise") -> Tensor:
    """``numpy.choose``: at each position, the element of ``choices[a]`` (``a`` and the choices broadcast
    together; ``choices`` a sequence, or a tensor indexed along its first axis); ``mode`` ``"raise"``
    (an index outside ``[0, n)`` is an error), ``"wrap"`` or ``"clip"``.  Differentiable in the choices.

    >>> import tensorlib as tl
    >>> tl.choose(tl.tensor([0, 2, 1]), [tl.tensor([1.0, 2.0, 3.0]), tl.tensor(10.0), tl.tensor([7.0, 8.0, 9.0])]).numpy().tolist()
    [1.0, 8.0, 10.0]
    """
    from .array import take_along_axis

    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    index = as_tensor(a)
    if index.dtype.kind not in "iub":
        raise TypeError(f"choose: a must hold integer indices, got {index.dtype} (shape {index.shape})")
    choices = as_tensors(*choices)
    n = len(choices)
    if n == 0:
        raise ValueError("choose: choices must not be empty")
    shape = _broadcast_shapes(index.shape, *(c.shape for c in choices))
    index = index.astype(_dt.int64)
    if mode == "wrap":
        index = index % n
    elif mode == "clip":
        index = math_ops.clip(index, 0, n - 1)
    elif not index.is_symbolic:
        values = index.numpy()
        if values.size and (values.min() < 0 or values.max() >= n):
            bad = values[(values < 0) | (values >= n)].ravel()[0]
            raise ValueError(f"choose: invalid entry {bad} in a: there are {n} choices (mode='raise')")
    else:  # traced: an index outside [0, n) becomes n, which the gather below refuses when it runs
        index = math_ops.where((index < 0) | (index >= n), n, index)
    stacked = shape_ops.stack([shape_ops.broadcast_to(c, shape) for c in choices])
    picked = take_along_axis(stacked, shape_ops.expand_dims(shape_ops.broadcast_to(index, shape), 0), axis=0)
    return shape_ops.squeeze(picked, 0)


def compress(condition, a, axis: int | None = None) -> Tensor:
    """``numpy.compress``: the slices of ``a`` along ``axis`` (of ``a`` flattened when None) where the 1-D
    ``condition`` is true; a condition shorter than the axis leaves the rest out, and a true entry past its
    end is an IndexError.  Differentiable in ``a``; the result's length depends on the condition's values.

    >>> import tensorlib as tl
    >>> tl.compress([True, False, True], tl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), axis=1).numpy().tolist()
    [[1.0, 3.0], [4.0, 6.0]]
    """
    condition, a = as_tensor(condition), as_tensor(a)
    if condition.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array, got shape {condition.shape} ({condition.dtype})")
    if axis is None:
        a, axis = shape_ops.reshape(a, (-1,)), 0
    axis = normalize_axis(axis, a.ndim)
    positions = ew.nonzero(condition)[0]
    size = a.shape[axis]
    if not positions.is_symbolic and size is not None and positions.shape[0] and int(positions.numpy()[-1]) >= size:
        raise IndexError(
            f"compress: condition is true at index {int(positions.numpy()[-1])}, past the end of axis {axis} "
            f"of a (shape {a.shape}, {a.dtype})"
        )
    return shape_ops.take(a, positions, axis=axis)


# ------------------------------------------------------------------ sets and orderings
def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *, kind=None) -> Tensor:
    """``numpy.isin``: whether each element of ``element`` is in ``test_elements`` (a bool tensor of
    ``element``'s shape; not differentiable; traceable: a sort and a binary search, or for complex numbers,
    which have no order, a comparison of every pair).

    >>> import tensorlib as tl
    >>> tl.isin(tl.tensor([[1, 2], [3, 4]]), [2, 4, 6]).numpy().tolist()
    [[False, True], [False, True]]
    """
    from . import reduce as reduce_ops
    from . import search
    from .array import ravel, sort

    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: kind must be None, 'sort' or 'table', got {kind!r}")
    e, t = as_tensors(element, test_elements)
    t = ravel(t)
    dtype = np.result_type(e.dtype, t.dtype)
    e, t = (math_ops.cast(v, dtype) if v.dtype != dtype else v for v in (e, t))
    if t.shape[0] == 0:
        found = math_ops.zeros_like(e, dtype=_dt.bool_)
    elif dtype.kind == "c":  # no order to search by (searchsorted refused them): compare every pair
        found = reduce_ops.any(math_ops.equal(shape_ops.expand_dims(e, -1), t), axis=-1)
    else:
        s = sort(t)
        s = shape_ops.concat([s, s[-1:]], axis=0)  # a position past the end reads the last value again
        found = shape_ops.take(s, search.searchsorted(s[:-1], e)) == e
    return math_ops.logical_not(found) if invert else found


def in1d(ar1, ar2, assume_unique: bool = False, invert: bool = False, *, kind=None) -> Tensor:
    """NumPy's older ``in1d``: ``isin`` of the flattened ``ar1`` (removed from NumPy 2.4; kept here for code
    written against older NumPy).

    >>> import tensorlib as tl
    >>> tl.in1d(tl.tensor([[1, 2]]), [2]).numpy().tolist()
    [False, True]
    """
    from .array import ravel

    return isin(ravel(as_tensor(ar1)), ar2, assume_unique, invert, kind=kind)


def _unique1d(a, assume_unique=False):
    from .array import ravel, sort
    from .search import unique

    a = ravel(as_tensor(a))
    return sort(a) if assume_unique else unique(a)


def union1d(ar1, ar2) -> Tensor:
    """``numpy.union1d``: the sorted unique values in either array (eager: the size depends on the values;
    not differentiable).

    >>> import tensorlib as tl
    >>> tl.union1d(tl.tensor([3, 1, 3]), [2, 1]).numpy().tolist()
    [1, 2, 3]
    """
    from .array import ravel
    from .search import unique

    a, b = (ravel(t) for t in as_tensors(ar1, ar2))
    dtype = np.result_type(a.dtype, b.dtype)
    return unique(shape_ops.concat([math_ops.cast(a, dtype), math_ops.cast(b, dtype)], axis=0))


def _masked(values, mask):
    return shape_ops.take(values, np.flatnonzero(np.asarray(mask.numpy())).astype(np.int64))


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False):
    """``numpy.intersect1d``: the sorted unique values in both arrays; with ``return_indices`` also the
    indices of their first occurrences in the flattened inputs (eager; not differentiable).

    >>> import tensorlib as tl
    >>> tl.intersect1d(tl.tensor([1, 3, 4, 3]), [3, 1, 2, 1]).numpy().tolist()
    [1, 3]
    """
    from .array import ravel

    a, b = (ravel(t) for t in as_tensors(ar1, ar2))
    if a._value is None or b._value is None:
        raise ValueError(
            "intersect1d: the result's size depends on the values, so it cannot be traced under tl.function"
        )
    if return_indices:
        common, ia, ib = np.intersect1d(a.numpy(), b.numpy(), assume_unique=assume_unique, return_indices=True)
        return as_tensor(common), as_tensor(ia.astype(np.int64)), as_tensor(ib.astype(np.int64))
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = (math_ops.cast(t, dtype) if t.dtype != dtype else t for t in (a, b))
    ua = _unique1d(a, assume_unique)
    ub = _unique1d(b, assume_unique)
    return _masked(ua, isin(ua, ub))


def setdiff1d(ar1, ar2, assume_unique: bool = False) -> Tensor:
    """``numpy.setdiff1d``: the unique values of ``ar1`` not in ``ar2``, sorted (with ``assume_unique``, in
    ``ar1``'s order, as NumPy); eager, not differentiable.

    >>> import tensorlib as tl
    >>> tl.setdiff1d(tl.tensor([5, 1, 3, 1]), [3]).numpy().tolist()
    [1, 5]
    """
    from .array import ravel
    from .search import unique

    a = ravel(as_tensor(ar1))
    if a._value is None:
        raise ValueError("setdiff1d: the result's size depends on the values, so it cannot be traced under tl.function")
    a = a if assume_unique else unique(a)
    return _masked(a, isin(a, ar2, invert=True))


def lexsort(keys, axis: int = -1) -> Tensor:
    """``numpy.lexsort``: the indices that sort by several keys, the LAST key primary (a sequence of
    tensors, or the rows of a tensor), along ``axis``; int64, not differentiable (stable argsorts).

    >>> import tensorlib as tl
    >>> tl.lexsort([tl.tensor([1, 2, 0]), tl.tensor([0, 0, 1])]).numpy().tolist()
    [0, 1, 2]
    """
    from .array import argsort, take_along_axis

    if isinstance(keys, (list, tuple)):
        ks = [as_tensor(k) for k in keys]
    else:
        t = as_tensor(keys)
        if t.ndim == 0:
            raise TypeError(f"lexsort: need a sequence of keys with len > 0, got a 0-d tensor ({t.dtype})")
        ks = [t[i] for i in range(t.shape[0])] if t.shape[0] is not None else None
        if ks is None:
            raise ValueError(f"lexsort: the number of keys must be known (shape {t.shape} under tl.function)")
    if not ks:
        raise TypeError("lexsort: need a sequence of keys with len > 0")
    shape = _shape_of(ks[0])
    if any(_shape_of(k) != shape for k in ks):
        raise ValueError(f"lexsort: all keys need to be the same shape, got {[_shape_of(k) for k in ks]}")
    if not shape:
        return as_tensor(np.int64(0))
    ax = normalize_axis(axis, len(shape), f"lexsort (shape {shape}): axis")
    order = argsort(ks[0], axis=ax, stable=True)
    for k in ks[1:]:
        step = argsort(take_along_axis(k, order, axis=ax), axis=ax, stable=True)
        order = take_along_axis(order, step, axis=ax)
    return math_ops.cast(order, _dt.int64) if order.dtype != _dt.int64 else order


def _check_kth(a, kth, axis, name):
    from .array import ravel

    a = as_tensor(a)
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:
        raise ValueError(f"{name}: cannot partition a 0-d tensor ({a.dtype})")
    ax = normalize_axis(axis, a.ndim, f"{name} (shape {a.shape}): axis")
    size = a.shape[ax]
    ks = np.asarray(kth.numpy() if isinstance(kth, Tensor) else kth)
    if ks.dtype.kind not in "iu" or ks.ndim > 1:
        raise TypeError(f"{name}: kth must be an integer or a 1-d sequence of integers, got {kth!r:.40}")
    if size is not None and ((ks < -size) | (ks >= size)).any():
        raise ValueError(f"{name}: kth {ks.tolist()} out of bounds for axis {ax} of size {size} (shape {a.shape})")
    return a, ax


def partition(a, kth, axis: int = -1, kind: str = "introselect", order=None) -> Tensor:
    """``numpy.partition``, as a full sort along ``axis``: a sorted array satisfies NumPy's contract (the
    ``kth`` element in its sorted place, smaller ones before it, larger after) for every ``kth``; the
    gradient follows the (stable) sort.

    >>> import tensorlib as tl
    >>> tl.partition(tl.tensor([3, 4, 2, 1]), 2).numpy().tolist()
    [1, 2, 3, 4]
    """
    from .array import sort

    if order is not None:
        raise TypeError("partition: order= (structured arrays) is not supported on tensors")
    a, ax = _check_kth(a, kth, axis, "partition")
    return sort(a, axis=ax, stable=True)


def sort_complex(a) -> Tensor:
    """``numpy.sort_complex``: ``a`` sorted along its last axis, real part first then imaginary, as a complex
    array: complex128 for real dtypes, as NumPy (whose complex64 for int8 and int16 does not arise: tensorlib
    holds them as int32); the gradient follows the sort.

    >>> import tensorlib as tl
    >>> tl.sort_complex(tl.tensor([1 + 2j, 2 - 1j, 1 - 3j])).numpy().tolist()
    [(1-3j), (1+2j), (2-1j)]
    """
    from .array import sort

    a = as_tensor(a)
    if a.ndim == 0:
        raise ValueError(f"sort_complex: needs a tensor of rank >= 1, got a 0-d tensor ({a.dtype})")
    out = sort(a, axis=-1)
    if out.dtype.kind == "c":
        return out
    return math_ops.cast(out, _dt.complex128)


def argpartition(a, kth, axis: int = -1, kind: str = "introselect", order=None) -> Tensor:
    """``numpy.argpartition``, as a full stable argsort along ``axis`` (which satisfies NumPy's contract).

    >>> import tensorlib as tl
    >>> tl.argpartition(tl.tensor([3, 4, 2, 1]), 2).numpy().tolist()
    [3, 2, 0, 1]
    """
    from .array import argsort

    if order is not None:
        raise TypeError("argpartition: order= (structured arrays) is not supported on tensors")
    a, ax = _check_kth(a, kth, axis, "argpartition")
    return argsort(a, axis=ax, stable=True)


# ------------------------------------------------------------------ vander, gradient, histogram
def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x`` (``numpy.vander``): column ``j`` is ``x ** (N - 1 - j)``, or
    ``x ** j`` with ``increasing``; ``N`` columns (``len(x)`` by default).  Powers by repeated products, so
    integer inputs stay exact and the gradient is the polynomial's.  The dtype is ``x``'s (JAX's and PyTorch's;
    NumPy turns float32 into float64), int64 for bools.

    >>> import tensorlib as tl
    >>> tl.vander(tl.tensor([1, 2, 3]), 3).numpy().tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-D, got shape {tuple(x.shape)} ({x.dtype})")
    if N is None:
        if x.shape[0] is None:
            raise ValueError(f"vander: give N under tl.function, where len(x) is unknown (x {x.dtype}[None])")
        N = x.shape[0]
    N = as_int(N, "vander: N")
    if N < 0:
        raise ValueError(f"vander: N must be >= 0, got {N} (x shape {tuple(x.shape)}, {x.dtype})")
    if x.dtype.kind == "b":
        x = math_ops.cast(x, _dt.int64)
    columns, power = [], math_ops.ones_like(x)
    for _ in range(N):
        columns.append(power)
        power = power * x
    if not increasing:
        columns.reverse()
    if not columns:  # N = 0: (len(x), 0)
        return shape_ops.stack([math_ops.ones_like(x)], axis=1)[:, :0]
    return shape_ops.stack(columns, axis=1)


def _edge_coefficients(h1, h2, side: str):
    """Second-order one-sided weights of f0, f1, f2 at the start (``side="start"``: steps h1 then h2 away)
    or of f-3, f-2, f-1 at the end, as NumPy's ``gradient`` (edge_order=2) for uneven steps."""
    if side == "start":
        return -(2.0 * h1 + h2) / (h1 * (h1 + h2)), (h1 + h2) / (h1 * h2), -h1 / (h2 * (h1 + h2))
    return h2 / (h1 * (h1 + h2)), -(h2 + h1) / (h1 * h2), (2.0 * h2 + h1) / (h2 * (h1 + h2))


def _gradient_axis(f, axis: int, spacing, edge_order: int):
    n = f.shape[axis]

    def part(start, stop):
        return shape_ops.getitem(f, (slice(None),) * axis + (slice(start, stop),))

    def along(values):  # 1-D coefficients (one per interior or edge point) broadcast along ``axis``
        return shape_ops.reshape(values, (-1,) + (1,) * (f.ndim - axis - 1)) if f.ndim - axis - 1 else values

    if spacing.ndim == 0:  # a uniform step
        h = spacing
        interior = (part(2, None) - part(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first, last = (part(1, 2) - part(0, 1)) / h, (part(-1, None) - part(-2, -1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2.0 * part(1, 2) - 0.5 * part(2, 3)) / h
            last = (0.5 * part(-3, -2) - 2.0 * part(-2, -1) + 1.5 * part(-1, None)) / h
    else:  # coordinates: uneven steps, and weights, in the coordinates' precision (NumPy's), then f's dtype
        # (float32 differences of Unix times 1.7e9 + 0.5 k are 0: the weights would be inf and the result NaN)
        def weights(*values):
            return [v if v.dtype == f.dtype else math_ops.cast(v, f.dtype) for v in values]

        dx = spacing[1:] - spacing[:-1]
        h1, h2 = dx[:-1], dx[1:]
        a, b, c = weights(-h2 / (h1 * (h1 + h2)), (h2 - h1) / (h1 * h2), h1 / (h2 * (h1 + h2)))
        interior = along(a) * part(None, -2) + along(b) * part(1, -1) + along(c) * part(2, None)
        if edge_order == 1:
            first_step, last_step = weights(dx[0], dx[-1])
            first, last = (part(1, 2) - part(0, 1)) / first_step, (part(-1, None) - part(-2, -1)) / last_step
        else:
            a, b, c = weights(*_edge_coefficients(dx[0], dx[1], "start"))
            first = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
            a, b, c = weights(*_edge_coefficients(dx[-2], dx[-1], "end"))
            last = a * part(-3, -2) + b * part(-2, -1) + c * part(-1, None)
    return shape_ops.concat([first, interior, last], axis=axis) if n > 2 else shape_ops.concat([first, last], axis)


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """The gradient of the sampled ``f`` by central differences inside and one-sided ones of ``edge_order``
    (1 or 2) at the ends (``numpy.gradient``; automatic differentiation is :func:`tl.grad`): ``varargs`` are the spacing, none (1), one scalar for all axes,
    or one scalar or coordinate vector per axis; ``axis`` (an int or a tuple) picks axes.  One tensor for one
    axis, else a tuple.  Integer ``f`` gives float64.  Linear in ``f``, so it differentiates.

    >>> import tensorlib as tl
    >>> tl.gradient(tl.tensor([1.0, 2.0, 4.0, 7.0, 11.0])).numpy().tolist()
    [1.0, 1.5, 2.5, 3.5, 4.0]
    """
    f = as_tensor(f)
    where = f"(f shape {tuple(f.shape)}, {f.dtype})"
    if f.dtype.kind in "biu":
        f = math_ops.cast(f, _dt.float64)
    axes = tuple(range(f.ndim)) if axis is None else (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(normalize_axis(a, f.ndim, f"gradient {where}: axis", scalar_axis=False) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: repeated axis in {axis!r} {where}")
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r} {where}")
    if len(varargs) not in (0, 1, len(axes)) or (len(varargs) == 1 < len(axes) and np.ndim(varargs[0]) != 0):
        raise TypeError(
            f"gradient: give no spacing, one scalar, or one per axis ({len(axes)}), got {len(varargs)} of shapes "
            f"{[tuple(np.shape(v)) for v in varargs]} {where}"
        )
    spacings = [1.0] * len(axes) if not varargs else list(varargs) * len(axes) if len(varargs) == 1 else list(varargs)
    out = []
    for a, h in zip(axes, spacings):
        n = f.shape[a]
        if n is None:
            raise ValueError(f"gradient: the size of axis {a} must be known (traced with unknown sizes) {where}")
        if n < edge_order + 1:
            raise ValueError(
                f"gradient: axis {a} has {n} elements; at least edge_order + 1 = {edge_order + 1} are needed {where}"
            )
        h = as_tensors(f, h)[1]  # read next to f: a float list or 0.1 next to float64 f is float64
        if h.ndim not in (0, 1) or (h.ndim == 1 and h.shape[0] != n):
            raise ValueError(
                f"gradient: the spacing of axis {a} must be a scalar or {n} coordinates, got shape {tuple(h.shape)} {where}"
            )
        if h.dtype.kind in "biu" or (h.ndim == 0 and h.dtype != f.dtype):  # a step in f's dtype, coordinates kept
            h = math_ops.cast(h, f.dtype if h.ndim == 0 else _dt.float64)
        out.append(_gradient_axis(f, a, h, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


def _traced_edges(a, bins: int):
    """Equal bins over the data's min and max when they are known only at run time: ``numpy.linspace``'s
    arithmetic (``arange * step + start``, the last edge the stop) in the edges' dtype, as NumPy computes them."""
    from . import reduce as reduce_ops
    from .random import _check_parameter

    dtype = a.dtype if a.dtype.kind == "f" else _dt.float64
    values = math_ops.cast(a, dtype)
    # min and max of no values (a size known only at run time) would raise: NumPy's (0, 1) then
    first = reduce_ops.min(shape_ops.concat([values, creation.full((1,), np.inf, dtype=dtype)], axis=0))
    last = reduce_ops.max(shape_ops.concat([values, creation.full((1,), -np.inf, dtype=dtype)], axis=0))
    empty = first > last
    first, last = math_ops.where(empty, 0.0, first), math_ops.where(empty, 1.0, last)
    # NaN or inf data: eagerly a ValueError; traced the edges were NaN and every count a silent 0.
    limits = _check_parameter(
        shape_ops.stack([first, last]), rule=None, message="histogram: the data's min and max (the default range)"
    )
    first, last = limits[0], limits[1]
    same = first == last
    first, last = math_ops.where(same, first - 0.5, first), math_ops.where(same, last + 0.5, last)
    steps = creation.arange(bins + 1, dtype=dtype) * ((last - first) / bins) + first
    return shape_ops.concat([steps[:-1], shape_ops.reshape(last, (1,))], axis=0)


def _with_edge_gradients(a, edges, bins: int):
    """NumPy's ``edges`` over the data's min and max, differentiable in ``a`` as the traced edges are (and JAX's):
    their value, exactly (``edges - spaced`` is a few ulps, so exact, and adding it back gives ``edges``), with the
    gradient of ``first + k * (last - first) / bins``.  Eagerly they were NumPy constants: a zero gradient."""
    spaced = _traced_edges(a, bins)
    return spaced + math_ops.stop_gradient(edges - spaced)


def bin_index(a, edges):
    """The bin of each value of the 1-d ``a`` between increasing ``edges``, int64: bin i holds
    ``edges[i] <= v < edges[i + 1]``, the last one also ``v == edges[-1]``; -1 for a value outside (or NaN)."""
    from .search import searchsorted

    count = edges.shape[0] - 1
    index = searchsorted(edges, a, side="right") - 1
    inside = math_ops.logical_and(a >= edges[0], a <= edges[-1])
    index = math_ops.where(a == edges[-1], np.int64(count - 1), index)
    return math_ops.where(inside, index, np.int64(-1))


def histogram_edges(a, bins, range, who: str, where: str, range_dtype=None):  # noqa: A002
    """The bin edges of ``numpy.histogram`` for the 1-d ``a``: ``bins`` equal bins over ``range`` (the data's
    min and max by default, read when the graph runs under ``tl.function``), the edges given, or one of
    NumPy's estimators (eager only).  Edges from a ``range`` get ``range_dtype`` when given (NumPy's
    ``histogramdd`` makes them float64), else a's float dtype, and must differ (NumPy's histogram raises where
    the range is too narrow for them; its ``histogramdd``, which passes ``range_dtype``, does not check)."""
    if isinstance(bins, str):  # NumPy's estimators ("auto", "fd", "sturges", ...) read the values
        if a.is_symbolic:
            raise ValueError(
                f"{who}: bins={bins!r} estimates the bins from the values, unknown under tl.function; "
                f"give a number of bins or the edges {where}"
            )
        try:
            bins = np.histogram_bin_edges(np.asarray(a.numpy()), bins, range)
        except ValueError as error:
            raise ValueError(f"{who}: {error} {where}") from None
    if isinstance(bins, (np.ndarray, Tensor)) and bins.ndim == 0 and bins.dtype.kind in "iu":
        if isinstance(bins, Tensor) and bins.is_symbolic:  # the count sizes the result
            raise ValueError(f"{who}: bins must be a known count (traced: pass a Python int) {where}")
        bins = int(bins)  # a count as a 0-d array or tensor, as NumPy reads np.array(5)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        if bins < 1:
            raise ValueError(f"{who}: bins must be a positive int or increasing edges, got {bins} {where}")
        if range is None and a.shape[0] == 0:
            first, last = 0.0, 1.0
        elif a.is_symbolic and range is None:
            edges = _traced_edges(a, int(bins))
        elif range is None:  # NumPy scalars of a's dtype: float32 data gets float32 edges computed in float32
            values = np.asarray(a.numpy())
            first, last = values.min(), values.max()
        else:
            first, last = (float(r) for r in range)
        if not (a.is_symbolic and range is None and a.shape[0] != 0):
            if not (np.isfinite(first) and np.isfinite(last)) or first > last:
                raise ValueError(f"{who}: range must be finite with min <= max, got ({first}, {last}) {where}")
            if first == last:
                first, last = first - 0.5, last + 0.5
            # NumPy's result_type of the range and a: Python numbers are weak, NumPy scalars and arrays are not
            # (float32 data over range=(np.float64(0), np.float64(0.1)) has float64 edges, so 0.1f lies past them)
            typed = [
                np.dtype(r.dtype)
                for r in (() if range is None else range)
                if isinstance(r, (np.generic, np.ndarray, Tensor))
            ]
            edge_type = np.result_type(first, last, *typed, np.dtype(a.dtype) if a.dtype.kind == "f" else np.float64)
            if range_dtype is not None and (range is not None or a.shape[0] == 0):  # NumPy's Python-number ends
                edge_type = np.dtype(range_dtype)
            spaced = np.linspace(first, last, int(bins) + 1, dtype=edge_type)
            if range_dtype is None and np.any(spaced[:-1] >= spaced[1:]):  # the range is too narrow for the dtype
                raise ValueError(
                    f"{who}: too many bins for the data range: cannot make {int(bins)} bins of nonzero width between "
                    f"{first} and {last} in {np.dtype(edge_type)} {where}"
                )
            edges = as_tensor(spaced)
            if range is None and a.dtype.kind == "f":
                edges = _with_edge_gradients(a, edges, int(bins))
    else:
        edges = as_tensor(bins)
        if isinstance(bins, (list, tuple)) and edges.dtype.kind == "f":  # NumPy reads listed edges as float64
            edges = as_tensors(bins, floor=_dt.float64)[0]
        if edges.ndim == 1 and edges.shape[0] is None:
            raise ValueError(f"{who}: the number of bin edges must be known (traced with unknown sizes) {where}")
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(f"{who}: bins must be a positive int or at least two edges, got {bins!r} {where}")
        if not edges.is_symbolic and np.any(np.diff(np.asarray(edges.numpy())) < 0):
            raise ValueError(f"{who}: the bin edges must increase monotonically, got {bins!r} {where}")
    return edges


def histogram(a, bins=10, range=None, density: bool | None = None, weights=None) -> tuple:  # noqa: A002
    """``(hist, bin_edges)`` of the values of ``a`` (``numpy.histogram``): ``bins`` equal bins over ``range``
    (the data's min and max by default, widened by 0.5 each way when they are equal; read when the graph runs
    under ``tl.function``), the edges given (increasing), or the name of one of NumPy's estimators of the bins
    (``"auto"``, ``"fd"``, ``"sturges"``, ...; eager only, ``numpy.histogram_bin_edges``); bins are closed on the left, the last also on the right; values outside are left out.
    Counts are int64, sums of ``weights`` their dtype (exact for integers; differentiable in ``weights``);
    ``density=True`` divides by the total and the bin widths, in float64 (complex128 for complex weights).
    The arguments come in NumPy's order (``density`` before ``weights``; ``jax.numpy.histogram`` swaps them):
    an array given as ``density`` is a TypeError.

    >>> import tensorlib as tl
    >>> hist, edges = tl.histogram(tl.tensor([1.0, 2.0, 1.0, 4.0]), bins=3)
    >>> hist.numpy().tolist(), edges.numpy().tolist()
    ([2, 1, 1], [1.0, 2.0, 3.0, 4.0])
    """
    from . import reduce as reduce_ops
    from .segment import segment_sum

    a = shape_ops.reshape(as_tensor(a), (-1,))
    where = f"(a {a.dtype}[{a.shape[0]}])"
    if a.dtype.kind == "c":
        raise TypeError(f"histogram: complex values have no order {where}")
    if density is not None and not isinstance(density, (bool, np.bool_, int)):
        raise TypeError(
            f"histogram: density must be True or False, got {type(density).__name__}; the arguments come in NumPy's "
            f"order (a, bins, range, density, weights): pass weights= by name {where}"
        )
    if weights is not None:
        weights = shape_ops.reshape(as_tensors(a, weights)[1], (-1,))
        if None not in (weights.shape[0], a.shape[0]) and weights.shape[0] != a.shape[0]:
            raise ValueError(f"histogram: weights must have the shape of a {where}, got {weights.shape[0]} values")
        if None in (weights.shape[0], a.shape[0]):  # traced: one length for both, checked when the graph runs
            a, weights = shape_ops.ensure_dims(a, weights, dims=(("n",), ("n",)), message="histogram: a and weights")
    edges = histogram_edges(a, bins, range, "histogram", where)
    count = edges.shape[0] - 1
    # A value outside the edges (or NaN) goes to segment -1, which drops it; sums stay in the weights' dtype
    # (exact for integers, complex for complex weights, as NumPy's).
    hist = segment_sum(math_ops.ones_like(a, _dt.int64) if weights is None else weights, bin_index(a, edges), count)
    if density:
        widths = math_ops.cast(edges[1:] - edges[:-1], _dt.float64)
        hist = hist if hist.dtype.kind in "fc" and hist.dtype.itemsize >= 8 else math_ops.cast(hist, _dt.float64)
        hist = hist / reduce_ops.sum(hist) / widths
    return hist, edges

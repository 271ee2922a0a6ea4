"""Reductions that skip NaNs, as NumPy's ``nan*`` functions: nansum, nanprod, nanmax, nanmin, nanmean,
nanvar, nanstd, nanargmax, nanargmin, nanquantile, nanpercentile, nanmedian.

Each is the plain reduction of ``x`` with its NaNs replaced (by 0 for sums, 1 for products, -inf
for maxima, ...), so the gradient at a NaN position is exactly 0 (``torch.nansum``, ``jnp.nansum``)
and the other positions get the plain reduction's gradient.  Integer and bool inputs hold no NaN:
their results are the plain reductions'.  A slice of NaNs only gives NumPy's values (0 for nansum,
1 for nanprod, NaN for nanmax/nanmin/nanmean/nanvar/nanstd and the quantiles) without NumPy's
RuntimeWarning (as JAX), in eager and traced calls alike; nanargmax and nanargmin raise for it, as
NumPy does.

>>> import numpy as np, tensorlib as tl
>>> x = tl.tensor([[1.0, np.nan], [np.nan, np.nan]])
>>> tl.nanmean(x, axis=1).numpy().tolist(), tl.nansum(x, axis=1).numpy().tolist()
([1.0, nan], [1.0, 0.0])
>>> tl.grad(lambda x: tl.nansum(x * 2.0))(x).numpy().tolist()
[[2.0, 0.0], [0.0, 0.0]]
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor
from ..tensor import Tensor
from . import math as math_ops
from . import reduce
from ._shapes import normalize_axes
from .registry import defop


def _has_nans(x) -> bool:
    return x.dtype.kind in "fc"


def _nans(x):
    return math_ops.not_equal(x, x)


def _filled(x, value):
    """``x`` with its NaNs replaced by ``value``; the gradient at a NaN is 0."""
    return math_ops.where(_nans(x), math_ops.full_like(x, value), x)


def _checked(x, axis, name, *, scalar_axis: bool = True):
    x = as_tensor(x)
    reduce._check_axis(x, axis, name, scalar_axis=scalar_axis)
    return x


def _left_out_as_nans(x, where, name):
    """``x`` with the elements NumPy's ``where=`` leaves out made NaN, which the reductions below skip as NumPy's
    do (``nanmean(a, where=w)`` sums and counts the kept non-NaN elements only); the gradient there is 0."""
    mask = reduce._where_mask(x, where, name)
    return x if mask is None else math_ops.where(mask, x, math.nan)


def nansum(x, axis=None, keepdims: bool = False, *, dtype=None, initial=None, where=True) -> Tensor:
    """Sum treating NaNs as 0 (``numpy.nansum``, ``dtype`` the accumulator's, ``initial`` and ``where`` as
    ``sum``'s); the gradient at a NaN is 0.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nansum(tl.tensor([1.0, np.nan, 2.0])).numpy().item()
    3.0
    """
    x = _checked(x, axis, "nansum")
    x = _filled(x, 0) if _has_nans(x) else x
    return reduce.sum(x, axis, keepdims, dtype=dtype, initial=initial, where=where)


def nanprod(x, axis=None, keepdims: bool = False, *, dtype=None, initial=None, where=True) -> Tensor:
    """Product treating NaNs as 1 (``numpy.nanprod``, ``dtype`` the accumulator's, ``initial`` and ``where``
    as ``prod``'s); the gradient at a NaN is 0.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanprod(tl.tensor([3.0, np.nan, 2.0])).numpy().item()
    6.0
    """
    x = _checked(x, axis, "nanprod")
    x = _filled(x, 1) if _has_nans(x) else x
    return reduce.prod(x, axis, keepdims, dtype=dtype, initial=initial, where=where)


def _nan_extremum(x, axis, keepdims, name, plain, fill, initial, where):
    x = _checked(x, axis, name)
    if not _has_nans(x):
        return plain(x, axis, keepdims, initial=initial, where=where)
    complex_ = x.dtype.kind == "c"
    out = plain(_filled(x, _fill(fill, complex_)), axis, keepdims, initial=initial, where=where)
    if initial is not None:  # NumPy's fmax.reduce: initial joins, so a slice of NaNs (or none kept) gives it
        return out
    # A slice of NaNs only is NaN (NumPy), not the fill: for complex numbers its first NaN (numpy.fmax.reduce).
    only_nans = reduce.all(_nans(x), axis, keepdims)
    nan = math_ops.stop_gradient(plain(x, axis, keepdims)) if complex_ else math_ops.full_like(out, math.nan)
    return math_ops.where(only_nans, nan, out)


def _fill(infinity, complex_):
    """The value a NaN is replaced by in a maximum (``-inf``) or minimum (``inf``): for complex numbers,
    ordered real part first, ``infinity`` in both parts, below (above) every other complex number."""
    return complex(infinity, infinity) if complex_ else infinity


def nanmax(x, axis=None, keepdims: bool = False, *, initial=None, where=True) -> Tensor:
    """Maximum ignoring NaNs (``numpy.nanmax``); a slice of NaNs only gives NaN (without NumPy's
    RuntimeWarning), or ``initial``, which joins every slice (``where``, as ``max``'s, needs it).  Ties share
    the gradient, as in ``max``; a NaN gets 0.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanmax(tl.tensor([[1.0, np.nan], [np.nan, np.nan]]), axis=1).numpy().tolist()
    [1.0, nan]
    """
    return _nan_extremum(x, axis, keepdims, "nanmax", reduce.max, -math.inf, initial, where)


def nanmin(x, axis=None, keepdims: bool = False, *, initial=None, where=True) -> Tensor:
    """Minimum ignoring NaNs (``numpy.nanmin``); see ``nanmax``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanmin(tl.tensor([3.0, np.nan, 2.0])).numpy().item()
    2.0
    """
    return _nan_extremum(x, axis, keepdims, "nanmin", reduce.min, math.inf, initial, where)


def _counts(x, axis, keepdims, dtype):
    """Number of non-NaN elements along ``axis``, as ``dtype``."""
    return math_ops.cast(reduce.sum(math_ops.logical_not(_nans(x)), axis, keepdims), dtype)


def nanmean(x, axis=None, keepdims: bool = False, *, dtype=None, where=True) -> Tensor:
    """Mean of the non-NaN elements (``numpy.nanmean``): their sum over their count, so the gradient
    is 1/count at the others and 0 at a NaN.  A slice of NaNs only gives NaN (no warning).  ``where`` (a bool
    mask broadcasting to ``x``) leaves elements out too.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanmean(tl.tensor([1.0, np.nan, 2.0])).numpy().item()
    1.5
    >>> tl.nanmean(tl.tensor([1.0, np.nan, 2.0]), where=tl.tensor([True, True, False])).numpy().item()
    1.0
    """
    if dtype is not None:
        return reduce.accumulated_in(nanmean, as_tensor(x), dtype, axis, keepdims, where=where)
    x = _checked(x, axis, "nanmean")
    if not _has_nans(x):
        return reduce.mean(x, axis, keepdims, where=where)
    x = _left_out_as_nans(x, where, "nanmean")
    if x.dtype == _dt.float16:
        return reduce.in_float32(nanmean, x, axis, keepdims)
    return _divided(reduce.sum(_filled(x, 0), axis, keepdims), _counts(x, axis, keepdims, x.dtype))


def _divided(total, count):
    """``total / count``, NaN where ``count <= 0`` (NumPy's value), with no 0/0 in the forward or backward pass."""
    empty = math_ops.less_equal(count, 0)
    out = total / math_ops.where(empty, math_ops.ones_like(count), count)
    return math_ops.where(empty, math_ops.full_like(out, math.nan), out)


def nanvar(
    x, axis=None, keepdims: bool = False, ddof: int = 0, *, dtype=None, where=True, mean=None, correction=None
) -> Tensor:
    """Variance of the non-NaN elements (``numpy.nanvar``), divided by their count minus ``ddof``;
    NaN where that is not positive, as in NumPy.  ``where`` leaves elements out too; ``mean`` and
    ``correction`` as ``var``'s (NumPy 2's).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanvar(tl.tensor([1.0, np.nan, 3.0])).numpy().item()
    1.0
    """
    x = x if dtype is None else reduce.cast_to_dtype_argument(x, dtype, "nanvar")  # NumPy's dtype= computes in it
    x = _checked(x, axis, "nanvar")
    ddof = reduce._check_ddof(x, ddof, "nanvar", correction)
    if mean is not None and x.dtype.kind in "fc" and as_tensor(mean).dtype.kind in "biuf":
        mean = math_ops.cast(mean, x.dtype)  # NumPy subtracts it in x's (NaN-filled copy's) dtype
    if not _has_nans(x):
        return reduce.var(x, axis, keepdims, ddof, where=where, mean=mean)
    x = _left_out_as_nans(x, where, "nanvar")
    if mean is None:
        if x.dtype == _dt.float16:
            return reduce.in_float32(nanvar, x, axis, keepdims, ddof)
        mean = nanmean(x, axis, keepdims=True)
    else:
        mean, float16 = reduce.given_mean(x, mean, "nanvar")
        if float16:
            return reduce.in_float32(nanvar, x, axis, keepdims, ddof, mean=math_ops.cast(mean, _dt.float32))
    # Only x's own NaNs are left out: an inf - inf of the centring is NumPy's NaN variance, not 0.
    centered = math_ops.where(_nans(x), math_ops.zeros_like(x), x - mean)
    if x.dtype.kind == "c":
        centered = math_ops.abs(centered)
    # NumPy: NaN wherever the degrees of freedom, count - ddof, are not positive (np.var gives inf there).
    return _divided(reduce.sum(centered * centered, axis, keepdims), _counts(x, axis, keepdims, centered.dtype) - ddof)


def nanstd(
    x, axis=None, keepdims: bool = False, ddof: int = 0, *, dtype=None, where=True, mean=None, correction=None
) -> Tensor:
    """Standard deviation of the non-NaN elements (``numpy.nanstd``; ``where``, ``mean`` and ``correction`` as
    ``nanvar``'s); gradient 0 at zero spread, as ``std``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanstd(tl.tensor([1.0, np.nan, 3.0])).numpy().item()
    1.0
    """
    x = x if dtype is None else reduce.cast_to_dtype_argument(x, dtype, "nanstd")  # NumPy's dtype= computes in it
    x = _checked(x, axis, "nanstd")
    ddof = reduce._check_ddof(x, ddof, "nanstd", correction)
    if x.dtype == _dt.float16 and (mean is None or reduce.given_mean(x, mean, "nanstd")[1]):
        # the root of a float32 variance: a float16 one overflows first
        mean = None if mean is None else math_ops.cast(mean, _dt.float32)
        return reduce.in_float32(nanstd, x, axis, keepdims, ddof, where=where, mean=mean)
    return reduce.safe_sqrt(nanvar(x, axis, keepdims, ddof, where=where, mean=mean))


# ------------------------------------------------------------------ nanargmax, nanargmin
def _nan_arg_kernel(name, arg, fill):
    def kernel(xp, x, *, axis):
        if not xp.isdtype(x.dtype, ("real floating", "complex floating")):
            return xp.astype(arg(xp)(x, axis=axis), xp.int64)
        nans = xp.isnan(x)
        if x.size and bool(xp.any(xp.all(nans, axis=axis))):  # (an empty x: argmax says what is wrong)
            raise ValueError(f"{name}: All-NaN slice encountered (input shape {tuple(x.shape)} {x.dtype}, axis {axis})")
        # (NumPy fills complex NaNs with -inf+0j, so [-inf-1j, nan] gave the NaN's index; this is nanmax's.)
        filled = xp.asarray(_fill(fill, xp.isdtype(x.dtype, "complex floating")), dtype=x.dtype)
        return xp.astype(arg(xp)(xp.where(nans, filled, x), axis=axis), xp.int64)

    return kernel


_nanargmax = defop(
    "NanArgMax",
    inputs=("x",),
    attrs={"axis": None},
    infer=reduce._arg_infer,
    differentiable=False,
    doc="Index of the maximum ignoring NaNs; a slice of NaNs only raises (not differentiable).",
)
_nanargmax.generic(_nan_arg_kernel("NanArgMax", lambda xp: xp.argmax, -math.inf))
_nanargmin = defop(
    "NanArgMin",
    inputs=("x",),
    attrs={"axis": None},
    infer=reduce._arg_infer,
    differentiable=False,
    doc="Index of the minimum ignoring NaNs; a slice of NaNs only raises (not differentiable).",
)
_nanargmin.generic(_nan_arg_kernel("NanArgMin", lambda xp: xp.argmin, math.inf))


def _nan_arg(op, x, axis, keepdims, name):
    x = as_tensor(x)
    if axis is not None:
        reduce._check_axis(x, axis, name)
        axis = reduce._axis_attr(axis)
    return reduce._arg_kept(apply(op, (x,), {"axis": axis}), x, axis, keepdims)


def nanargmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the first maximum ignoring NaNs (``numpy.nanargmax``); a slice of NaNs only raises
    ValueError, as in NumPy.  Not differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanargmax(tl.tensor([1.0, np.nan, 3.0, 3.0])).numpy().item()
    2
    """
    return _nan_arg(_nanargmax, x, axis, keepdims, "nanargmax")


def nanargmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the first minimum ignoring NaNs (``numpy.nanargmin``); see ``nanargmax``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanargmin(tl.tensor([[np.nan, 2.0], [1.0, 0.5]]), axis=1).numpy().tolist()
    [1, 1]
    """
    return _nan_arg(_nanargmin, x, axis, keepdims, "nanargmin")


# ------------------------------------------------------------------ nanquantile, nanpercentile, nanmedian
def nanquantile(a, q, axis=None, keepdims: bool = False, method: str = "linear", *, weights=None) -> Tensor:
    """``numpy.nanquantile``: the quantile of each slice's non-NaN elements (any of NumPy 2's ``method`` values,
    and ``weights`` with ``'inverted_cdf'``, as ``quantile``); a slice of NaNs only gives NaN (no warning).
    The gradient goes to the one or two selected elements, through the sort, as in ``quantile``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanquantile(tl.tensor([[4.0, np.nan, 1.0, 2.0]]), 0.5, axis=1).numpy().tolist()
    [2.0]
    """
    return _nanquantile(a, q, axis, keepdims, method, "nanquantile", weights)


def _nanquantile(a, q, axis, keepdims, method, name, weights=None):
    """``nanquantile``, whose type errors name the public function ``name``; only nanmedian takes complex numbers."""
    from . import shape as shape_ops
    from .array import (
        _DISCONTINUOUS,
        QUANTILE_METHODS,
        _checked_quantile_weights,
        _lerp,
        _quantile_indexes,
        _quantile_result,
        _slices_last,
        _weighted_inverted_cdf,
        nan_after_unknown_slices,
        quantile,
        refuse_complex,
        sort,
        take_along_axis,
    )

    if method not in QUANTILE_METHODS:
        raise ValueError(f"{name}: method must be one of NumPy's {', '.join(QUANTILE_METHODS)}; got {method!r}")
    a = as_tensor(a)
    refuse_complex(a, name)
    if a.dtype.kind not in "fc":  # integers and bools hold no NaN
        if 0 not in a.shape:
            return quantile(a, q, axis, keepdims, method, weights=weights)
        a = math_ops.cast(a, _dt.float64)  # NumPy: an empty array's nan-quantiles are float64 NaNs, as floats'
    if isinstance(q, Tensor):
        q = q.numpy()
    dtype = a.dtype
    if not isinstance(q, (int, float)) and np.asarray(q).dtype.kind == "f" and method not in _DISCONTINUOUS:
        dtype = _dt.promote_types(dtype, np.asarray(q).dtype)  # a picked element keeps a's dtype, as NumPy
    if dtype == _dt.float16:  # interpolated in float32, rounded once: the nanmedian of [6e4, 6e4] was inf
        return reduce.in_float32(_nanquantile, a, q, axis, keepdims, method, name, weights)
    q = np.asarray(q, dtype=np.float64)
    if q.size and (q.min() < 0 or q.max() > 1) or np.isnan(q).any():
        raise ValueError(f"nanquantile: q must be in [0, 1] (percentiles in [0, 100]), got {q.tolist()}")
    a = math_ops.cast(a, dtype) if a.dtype != dtype else a
    try:
        axes = normalize_axes(axis, a.ndim, scalar_axis=False)  # as NumPy's quantiles
    except (TypeError, ValueError) as e:
        raise type(e)(f"nanquantile: {e} (shape {a.shape})") from None
    if 0 in (a.shape[i] for i in axes):  # NumPy: NaN, as for a slice of NaNs only
        from .array import _empty_slice_nans

        out = _empty_slice_nans(a, axis, keepdims, "nanquantile")
        return shape_ops.broadcast_to(out, q.shape + out.shape) if q.ndim else out
    flat = _slices_last(a, axes, "nanquantile")
    if weights is not None:  # the non-NaN elements with their weights (a NaN's is 0), as NumPy's
        nans = _nans(flat)
        weights = math_ops.where(
            nans, 0, _slices_last(_checked_quantile_weights(a, weights, axes, method, name), axes, name)
        )
        empty = reduce.all(nans, -1, keepdims=True)  # a slice of NaNs only: NaN (any weights serve)
        out, ordered = _weighted_inverted_cdf(flat, math_ops.where(empty, 1, weights), q, name)
        empty = shape_ops.squeeze(empty, -1)
        empty = shape_ops.expand_dims(empty, tuple(range(-q.ndim, 0))) if q.ndim else empty
        out = math_ops.where(empty, math_ops.full_like(out, math.nan), out)
        return _quantile_result(out, ordered, q, axes, a.ndim, keepdims)
    # NaNs last: the first `count` elements are the slice's numbers (an empty slice of unknown length reads a NaN)
    ordered = sort(nan_after_unknown_slices(flat), axis=-1)
    real = _dt.real_dtype(dtype)  # positions of complex numbers are real
    count = _counts(flat, -1, True, real)  # lead + (1,)
    qs = shape_ops.reshape(math_ops.cast(q, real), (1,) * (flat.ndim - 1) + (q.size,))
    last = math_ops.maximum(count - 1.0, 0.0)
    if method in ("linear", "midpoint"):
        position = qs * last  # lead + (q.size,)
        below = math_ops.floor(position)
        t = position - below
        above = math_ops.minimum(below + 1.0, last)
    else:  # quantile's index rules, each slice with its own count (the calls dispatch to tensorlib ops)
        below, above, t = _quantile_indexes(count, qs, method)
        # (a slice of NaNs only, count 0, gave -1: any index serves, its result is NaN below)
        below, above = (math_ops.maximum(math_ops.cast(i, real), 0.0) for i in (below, above))
    lo = take_along_axis(ordered, math_ops.cast(below, _dt.int64), axis=-1)
    hi = take_along_axis(ordered, math_ops.cast(above, _dt.int64), axis=-1)
    if t is None:  # a discontinuous method picks one element
        out = lo
    elif method == "midpoint":
        out = math_ops.where(math_ops.equal(position, below), lo, (lo + hi) * 0.5)
    else:
        out = _lerp(lo, hi, math_ops.cast(math_ops.stop_gradient(t), dtype))
    out = math_ops.where(math_ops.equal(count, 0.0), math_ops.full_like(out, math.nan), out)
    if q.ndim != 1:  # the last axis holds the q.size quantiles: give it q's shape
        lead = tuple(-1 if d is None else d for d in out.shape[:-1])  # (_slices_last left at most one unknown)
        out = shape_ops.squeeze(out, -1) if q.ndim == 0 else shape_ops.reshape(out, lead + q.shape)
    if q.ndim:  # NumPy puts q's axes first
        k = out.ndim - q.ndim
        out = shape_ops.transpose(out, tuple(range(k, out.ndim)) + tuple(range(k)))
    if keepdims and a.ndim:
        out = shape_ops.expand_dims(out, tuple(q.ndim + i for i in axes))
    return out


def nanpercentile(a, q, axis=None, keepdims: bool = False, method: str = "linear", *, weights=None) -> Tensor:
    """``numpy.nanpercentile``: ``nanquantile`` with q in percent (``weights`` as ``nanquantile``'s).

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanpercentile(tl.tensor([1.0, np.nan, 3.0]), 50).numpy().item()
    2.0
    """
    if isinstance(q, Tensor):
        q = q.numpy()
    q = q / 100.0 if isinstance(q, (int, float)) else np.true_divide(q, 100)
    try:
        return _nanquantile(a, q, axis, keepdims, method, "nanpercentile", weights)
    except ValueError as e:  # (an AxisError stays one)
        raise type(e)(str(e).replace("nanquantile", "nanpercentile", 1)) from None


def nanmedian(a, axis=None, keepdims: bool = False) -> Tensor:
    """``numpy.nanmedian``: the median of each slice's non-NaN elements (NaN for a slice of NaNs only);
    complex numbers are ordered real part first, as ``sort`` and NumPy order them.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nanmedian(tl.tensor([[3.0, np.nan, 1.0], [np.nan, np.nan, np.nan]]), axis=1).numpy().tolist()
    [2.0, nan]
    """
    return _nanquantile(_checked(a, axis, "nanmedian", scalar_axis=False), 0.5, axis, keepdims, "midpoint", "nanmedian")

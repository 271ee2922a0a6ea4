"""Catalogue entries for the truth, NaN-skipping and search reductions: any, all, count_nonzero, ptp,
average, the ``nan*`` family, argwhere, flatnonzero, searchsorted, digitize, top_k, unique, bincount.

NaN-skipping entries draw arrays with some NaNs (their gradient there is 0, which central differences
see too: a NaN entry moved by eps is still NaN, and skipped); extrema draw distinct values, away from
their ties.

>>> "nanmean" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from .op_db import FLOATS, NUMERIC, _elements, _half_steps, _reduction, shapes
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import tensors, valid_axes


def _with_holes(draw, x, axis, keep=1):
    """``x`` with some NaNs, every slice along ``axis`` keeping at least ``keep`` numbers (a slice with
    fewer has a NaN or inf value, where central differences see nothing)."""
    if np.dtype(x.dtype).kind != "f" or not x.size:
        return x
    holes = np.array(draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))).reshape(x.shape)
    holed = np.where(holes, np.asarray(np.nan, x.dtype), x)
    numbers = np.sum(~holes, axis=axis, keepdims=True) if x.ndim else np.sum(~holes)
    return np.where(numbers < keep, x, holed)


@st.composite
def _nan_draw(draw, dtype, with_ddof=False, unique=False):
    values = _half_steps(dtype) if unique else _elements(dtype)
    x = draw(tensors(dtype, shapes(0, 3, 1, 3), values, unique=unique))
    axis = draw(valid_axes(x.ndim))
    kwargs = {"axis": axis, "keepdims": draw(st.booleans())}
    length = int(np.prod([x.shape[a] for a in (range(x.ndim) if axis is None else np.atleast_1d(axis))]))
    if with_ddof:
        kwargs["ddof"] = draw(st.sampled_from([0, 1] if length > 1 else [0]))
    return SampleInput((_with_holes(draw, x, axis, 1 + kwargs.get("ddof", 0)),), kwargs)


def _nan_samples(**options):
    return lambda dtype: _nan_draw(dtype, **options)


def _quiet(ref):
    """``ref`` without NumPy's RuntimeWarning for a slice of NaNs only."""

    def run(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(ref(*args, **kwargs))

    return run


@st.composite
def _nan_arg_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3, 1, 3), _half_steps(dtype)))
    axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    return SampleInput((_with_holes(draw, x, axis),), {"axis": axis}, grad_argnums=())


@st.composite
def _nanquantile_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 2, 1, 4), _half_steps(dtype), unique=True))
    axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    q = draw(st.sampled_from([0.5, 0.25, 0.9, [0.1, 0.6]]))
    return SampleInput((_with_holes(draw, x, axis), q), {"axis": axis, "keepdims": draw(st.booleans())})


@st.composite
def _average_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3, 1, 3)))
    axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    along = draw(st.booleans()) and axis is not None
    w_shape = (x.shape[axis],) if along else x.shape
    w = draw(tensors(dtype, w_shape, _elements(dtype, 0.5, 2.0)))
    return SampleInput((x, axis, w), {"keepdims": draw(st.booleans())}, grad_argnums=(0, 2))


@st.composite
def _searchsorted_draw(draw, dtype):
    a = np.sort(draw(tensors(dtype, (draw(st.integers(0, 5)),), _half_steps(dtype))))
    v = draw(tensors(dtype, shapes(0, 2), _half_steps(dtype)))
    return SampleInput((a, v), {"side": draw(st.sampled_from(["left", "right"]))}, grad_argnums=())


@st.composite
def _digitize_draw(draw, dtype):
    bins = np.unique(draw(tensors(dtype, (draw(st.integers(0, 5)),), _half_steps(dtype))))
    if draw(st.booleans()):
        bins = bins[::-1].copy()
    x = draw(tensors(dtype, shapes(0, 2), _half_steps(dtype)))
    return SampleInput((x, bins), {"right": draw(st.booleans())}, grad_argnums=())


def _top_k_ref(x, k):
    keys = np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x
    indices = np.argsort(-keys.astype(np.float64), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, indices, axis=-1), indices


@st.composite
def _top_k_draw(draw, dtype, distinct=True):
    x = draw(tensors(dtype, shapes(1, 3, 1, 4), _half_steps(dtype), unique=distinct))
    return SampleInput((x, draw(st.integers(0, x.shape[-1]))))


@st.composite
def _unique_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 2), st.sampled_from([0, 1, 2]).map(np.dtype(dtype).type)))
    flags = {k: draw(st.booleans()) for k in ("return_index", "return_inverse", "return_counts")}
    if x.ndim and draw(st.booleans()):  # the distinct subarrays along an axis
        flags["axis"] = draw(st.integers(-x.ndim, x.ndim - 1))
    return SampleInput((x,), flags, grad_argnums=())


@st.composite
def _unique_size_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 2), st.sampled_from([0, 1, 2]).map(np.dtype(dtype).type)))
    flags = {k: draw(st.booleans()) for k in ("return_index", "return_inverse", "return_counts")}
    fill = draw(st.sampled_from([None, 7]))
    return SampleInput((x,), {**flags, "size": draw(st.integers(0, 4)), "fill_value": fill}, grad_argnums=())


def _unique_size_ref(x, return_index=False, return_inverse=False, return_counts=False, size=0, fill_value=None):
    """jnp.unique(..., size=, fill_value=) from numpy.unique: the first ``size`` values, padded."""
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    k = min(size, values.size)
    pad = values[0] if fill_value is None else fill_value
    out = [np.concatenate([values[:k], np.full(size - k, pad, x.dtype)])]
    if return_index:
        out.append(np.concatenate([index[:k], np.full(size - k, index[0])]))
    if return_inverse:
        out.append(inverse.reshape(x.shape))
    if return_counts:
        out.append(np.concatenate([counts[:k], np.zeros(size - k, np.int64)]))
    return out[0] if len(out) == 1 else tuple(out)


@st.composite
def _bincount_draw(draw, dtype):
    n = draw(st.integers(0, 6))
    x = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.int64)
    w = draw(tensors(dtype, (n,)))
    return SampleInput((x, w), {"minlength": draw(st.integers(0, 6))}, grad_argnums=(1,))


def _bincount_ref(x, weights, minlength=0):
    return np.bincount(x, weights, minlength).astype(np.float64)


def _average_ref(x, axis, weights, keepdims=False):
    return np.asarray(np.average(x, axis, weights, keepdims=keepdims), dtype=x.dtype)


@st.composite
def _nonzero_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3), st.sampled_from([0, 0, 1, 2]).map(np.dtype(dtype).type)))
    return SampleInput((x,), grad_argnums=())


def _truth_samples(dtype):
    return _reduction(elements=lambda d: st.sampled_from([0, 0, 1, 2]).map(np.dtype(d).type))(dtype).map(
        lambda s: SampleInput(s.args, s.kwargs, grad_argnums=())
    )


OPINFOS = [
    OpInfo(
        "any", tl.any, np.any, _truth_samples, op_types=("Any",), dtypes=NUMERIC + (_dt.bool_,), differentiable=False
    ),
    OpInfo(
        "all", tl.all, np.all, _truth_samples, op_types=("All",), dtypes=NUMERIC + (_dt.bool_,), differentiable=False
    ),
    OpInfo(
        "count_nonzero",
        tl.count_nonzero,
        lambda x, axis=None, keepdims=False: np.asarray(np.count_nonzero(x, axis, keepdims=keepdims), np.int64),
        _truth_samples,
        op_types=("NotEqual", "Sum"),
        dtypes=NUMERIC + (_dt.bool_,),
        differentiable=False,
    ),
    OpInfo(
        "ptp",
        tl.ptp,
        np.ptp,
        _reduction(elements=_half_steps, unique=True),
        op_types=("Max", "Min", "Sub"),
        dtypes=NUMERIC,
        error_inputs=(ErrorInput((np.ones(2, bool),), {}, TypeError, r"ptp: bool tensors .*shape \(2,\), bool"),),
    ),
    OpInfo(
        "average",
        tl.average,
        _average_ref,
        _average_draw,
        op_types=("Sum", "Mul", "Div"),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (np.ones(2), None, np.array([1.0, -1.0])), {}, ZeroDivisionError, "average: weights sum to zero"
            ),
            ErrorInput((np.ones((2, 3)), 1, np.ones(2)), {}, ValueError, r"average: weights of shape \(2,\)"),
        ),
    ),
    OpInfo("nansum", tl.nansum, _quiet(np.nansum), _nan_samples(), op_types=("Sum", "Select"), dtypes=NUMERIC),
    OpInfo(
        "nanprod",
        tl.nanprod,
        _quiet(np.nanprod),
        _nan_samples(),
        op_types=("Prod", "Select"),
        dtypes=FLOATS,
    ),
    OpInfo(
        "nanmax",
        tl.nanmax,
        _quiet(np.nanmax),
        _nan_samples(unique=True),
        op_types=("Max", "All"),
        dtypes=NUMERIC,
        kinks=True,
    ),
    OpInfo(
        "nanmin",
        tl.nanmin,
        _quiet(np.nanmin),
        _nan_samples(unique=True),
        op_types=("Min", "All"),
        dtypes=NUMERIC,
        kinks=True,
    ),
    OpInfo("nanmean", tl.nanmean, _quiet(np.nanmean), _nan_samples(), op_types=("Sum", "Div"), dtypes=FLOATS),
    OpInfo(
        "nanvar",
        tl.nanvar,
        _quiet(np.nanvar),
        _nan_samples(with_ddof=True),
        op_types=("Sum", "Div"),
        dtypes=FLOATS,
        error_inputs=(ErrorInput((np.ones(2),), {"ddof": "1"}, TypeError, "nanvar: ddof must be a real number"),),
    ),
    OpInfo(
        "nanstd",
        tl.nanstd,
        _quiet(np.nanstd),
        _nan_samples(unique=True, with_ddof=True),
        op_types=("Sum", "Sqrt"),
        dtypes=FLOATS,
        kinks=True,
    ),
    OpInfo(
        "nanargmax",
        tl.nanargmax,
        np.nanargmax,
        _nan_arg_draw,
        op_types=("NanArgMax",),
        dtypes=NUMERIC,
        differentiable=False,
        error_inputs=(ErrorInput((np.array([np.nan]),), {}, ValueError, "NanArgMax: All-NaN slice encountered"),),
    ),
    OpInfo(
        "nanargmin",
        tl.nanargmin,
        np.nanargmin,
        _nan_arg_draw,
        op_types=("NanArgMin",),
        dtypes=NUMERIC,
        differentiable=False,
    ),
    OpInfo(
        "nanquantile",
        tl.nanquantile,
        _quiet(np.nanquantile),
        _nanquantile_draw,
        op_types=("Sort", "TakeAlongAxis"),
        dtypes=FLOATS,
        kinks=True,
        error_inputs=(ErrorInput((np.ones(3), 1.5), {}, ValueError, r"nanquantile: q must be in \[0, 1\]"),),
    ),
    OpInfo(
        "nanmedian",
        tl.nanmedian,
        _quiet(np.nanmedian),
        _nan_samples(unique=True),
        op_types=("Sort", "TakeAlongAxis"),
        dtypes=FLOATS,
        kinks=True,
    ),
    OpInfo(
        "argwhere",
        tl.argwhere,
        np.argwhere,
        _nonzero_draw,
        op_types=("Where", "Pack"),
        dtypes=NUMERIC + (_dt.bool_,),
        differentiable=False,
    ),
    OpInfo(
        "flatnonzero",
        tl.flatnonzero,
        np.flatnonzero,
        _nonzero_draw,
        op_types=("Where",),
        dtypes=NUMERIC,
        differentiable=False,
    ),
    OpInfo(
        "searchsorted",
        tl.searchsorted,
        np.searchsorted,
        _searchsorted_draw,
        op_types=("SearchSorted",),
        dtypes=NUMERIC,
        differentiable=False,
        error_inputs=(ErrorInput((np.ones(3), np.ones(2)), {"side": "up"}, ValueError, "searchsorted: side must be"),),
    ),
    OpInfo(
        "digitize",
        tl.digitize,
        np.digitize,
        _digitize_draw,
        op_types=("Digitize",),
        dtypes=NUMERIC,
        differentiable=False,
        error_inputs=(
            ErrorInput((np.ones(3), np.array([1.0, 3.0, 2.0])), {}, ValueError, "Digitize: bins must be monotonically"),
        ),
    ),
    OpInfo(
        "top_k",
        tl.top_k,
        _top_k_ref,
        _top_k_draw,
        op_types=("TopK", "TakeAlongAxis"),
        dtypes=NUMERIC,
        error_inputs=(ErrorInput((np.ones(3), 4), {}, ValueError, r"TopK: k = 4 is larger than the last axis \(3\)"),),
    ),
    OpInfo(
        "unique",
        tl.unique,
        np.unique,
        _unique_draw,
        op_types=("Unique", "GatherV2"),
        dtypes=NUMERIC + (_dt.bool_,),
        # The values gather x at first occurrences (differentiable); the drawn x repeat values, where a
        # perturbation changes how many there are, so central differences have nothing to compare.
    ),
    OpInfo(
        "unique_size",
        tl.unique,
        _unique_size_ref,
        _unique_size_draw,
        op_types=("UniqueSized", "GatherV2"),
        dtypes=NUMERIC + (_dt.bool_,),
        error_inputs=(
            ErrorInput((np.ones(0),), {"size": 2}, ValueError, r"unique: size=2 of an empty input needs a fill_value"),
        ),
    ),
    OpInfo(
        "bincount",
        tl.bincount,
        _bincount_ref,
        _bincount_draw,
        op_types=("Bincount",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput((np.array([1, -1]),), {}, ValueError, "Bincount: x must be non-negative"),
            ErrorInput((np.array([1.0]),), {}, TypeError, r"bincount: x must be a 1-D tensor .*shape \(1,\) float64"),
        ),
    ),
]

"""The catalogue of ``tensorlib/ops/array.py`` (and of the NumPy forms added to einsum, tile and
logsumexp): each function against its NumPy namesake, with NumPy's arguments.

Sorting functions draw distinct values (ties are kinks of sort, percentile and median); cumprod
draws zeros on purpose (its gradient must stay exact there, to second order).

>>> from tensorlib.testing.op_db_array import OPINFOS
>>> "percentile" in {info.name for info in OPINFOS}
True
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from ..ops.array import QUANTILE_METHODS
from .op_db import FLOATS, NUMERIC, _elements, _half_steps, _logsumexp_ref, shapes
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import mutually_broadcastable_shapes, scalars, tensors


def _axis_or_none(draw, ndim):
    return draw(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None


@st.composite
def _cumulative_draw(draw, dtype, elements=None):
    values = elements(dtype) if elements else _elements(dtype)
    x = draw(tensors(dtype, shapes(0, 3), values))
    return SampleInput((x,), {"axis": _axis_or_none(draw, x.ndim)})


def _zeros_and_values(dtype):
    return st.sampled_from([0.0, 1.5, -2.0, 0.5, 0.0, 3.0]).map(np.dtype(dtype).type)


def _running_ref(ufunc):
    def ref(x, axis=None):
        return ufunc.accumulate(np.ravel(x) if axis is None else x, axis=0 if axis is None else axis)

    return ref


@st.composite
def _cumulative_array_api_draw(draw, dtype, elements=None):
    """numpy.cumulative_sum/prod's arguments: an axis for more than one dimension, include_initial."""
    values = elements(dtype) if elements else _elements(dtype)
    x = draw(tensors(dtype, shapes(1, 3), values))
    kwargs = {"include_initial": draw(st.booleans())}
    if x.ndim > 1 or draw(st.booleans()):
        kwargs["axis"] = draw(st.integers(-x.ndim, x.ndim - 1))
    return SampleInput((x,), kwargs)


def _logcumsumexp_ref(x, axis=None, reverse=False):
    x = np.ravel(x) if axis is None else x
    axis = 0 if axis is None else axis
    x = x.astype(np.float64) if x.dtype.kind in "biu" else x
    if reverse:
        return np.flip(np.logaddexp.accumulate(np.flip(x, axis), axis=axis), axis)
    return np.logaddexp.accumulate(x, axis=axis)


@st.composite
def _logcumsumexp_draw(draw, dtype):
    sample = draw(_cumulative_draw(dtype))
    return SampleInput(sample.args, {**sample.kwargs, "reverse": draw(st.booleans())})


def _with_nans(dtype):
    values = st.sampled_from([1.5, -2.0, 0.5, 3.0, 0.0])
    if np.dtype(dtype).kind == "f":
        values = values | st.just(np.nan)
    return values.map(np.dtype(dtype).type)


@st.composite
def _triangle_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    return SampleInput((x,), {"k": draw(st.integers(-2, 2))})


@st.composite
def _diagonal_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(2, 3)))
    axis1, axis2 = draw(st.permutations(range(-x.ndim, 0)))[:2]
    return SampleInput((x,), {"offset": draw(st.integers(-2, 2)), "axis1": axis1, "axis2": axis2})


@st.composite
def _diag_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 2)))
    return SampleInput((x,), {"k": draw(st.integers(-2, 2))})


@st.composite
def _roll_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    if not x.ndim or draw(st.booleans()):
        return SampleInput((x, draw(st.integers(-5, 5) | st.lists(st.integers(-3, 3), min_size=1, max_size=2))))
    axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    shift = draw(st.integers(-3, 3) | st.lists(st.integers(-3, 3), min_size=len(axes), max_size=len(axes)))
    return SampleInput((x, shift), {"axis": axes[0] if len(axes) == 1 and draw(st.booleans()) else tuple(axes)})


@st.composite
def _flip_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(
        st.none() | st.integers(-x.ndim, x.ndim - 1) | st.lists(st.integers(0, x.ndim - 1), unique=True).map(tuple)
    )
    return SampleInput((x,), {"axis": axis})


@st.composite
def _rot90_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(2, 3)))
    axes = tuple(draw(st.permutations(range(x.ndim)))[:2])
    return SampleInput((x,), {"k": draw(st.integers(-1, 4)), "axes": axes})


@st.composite
def _swapaxes_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    return SampleInput((x, draw(st.integers(-x.ndim, x.ndim - 1)), draw(st.integers(-x.ndim, x.ndim - 1))))


@st.composite
def _moveaxis_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    count = draw(st.integers(1, x.ndim))
    source = draw(st.permutations(range(x.ndim)))[:count]
    destination = draw(st.permutations(range(-x.ndim, 0)))[:count]
    if count == 1 and draw(st.booleans()):
        return SampleInput((x, source[0], destination[0]))
    return SampleInput((x, list(source), list(destination)))


def _ravel(x):
    return x.ravel() if isinstance(x, (tl.Tensor, np.ndarray)) else np.ravel(x)


def _flatten(x):
    return x.flatten()


@st.composite
def _joined_draw(draw, dtype, join):
    """1-3 arrays of one shape, sizes differing along the axis ``join(ndim)`` joins (None: equal shapes)."""
    base = list(draw(shapes(0, 3)))
    axis = join(len(base))
    arrays = []
    for _ in range(draw(st.integers(1, 3))):
        shape = list(base)
        if axis is not None:
            shape[axis] = draw(st.integers(1, 3))
        arrays.append(draw(tensors(dtype, tuple(shape))))
    return SampleInput(tuple(arrays), grad_argnums=tuple(range(len(arrays))))


def _sequence_fn(fn):
    def call(*arrays):
        return fn(list(arrays))

    call.__name__ = fn.__name__
    return call


@st.composite
def _append_draw(draw, dtype):
    a = draw(tensors(dtype, shapes(1, 3)))
    if draw(st.booleans()):
        return SampleInput((a, draw(tensors(dtype, shapes(0, 2)))), grad_argnums=(0, 1))
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    shape = list(a.shape)
    shape[axis] = draw(st.integers(1, 3))
    return SampleInput((a, draw(tensors(dtype, tuple(shape)))), {"axis": axis}, grad_argnums=(0, 1))


@st.composite
def _array_split_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    sections = draw(st.integers(1, 4) | st.lists(st.integers(0, x.shape[axis]), max_size=2).map(sorted))
    return SampleInput((x, sections), {"axis": axis})


@st.composite
def _atleast_draw(draw, dtype):
    arrays = [draw(tensors(dtype, shapes(0, 3, 1, 3))) for _ in range(draw(st.integers(1, 2)))]
    return SampleInput(tuple(arrays), grad_argnums=tuple(range(len(arrays))))


@st.composite
def _two_arrays(draw, dtype, shape_pair):
    shape_a, shape_b = draw(shape_pair)
    return SampleInput((draw(tensors(dtype, shape_a)), draw(tensors(dtype, shape_b))), grad_argnums=(0, 1))


def _kron_shapes():
    return st.tuples(shapes(0, 2, 1, 3), shapes(0, 2, 1, 3))


def _outer_shapes():
    return st.tuples(shapes(0, 2, 1, 3), shapes(0, 2, 1, 3))


@st.composite
def _inner_shapes(draw):
    k = draw(st.integers(1, 3))
    if draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from([((), (2, k)), ((k,), ())]))
    return draw(shapes(0, 2, 1, 3)) + (k,), draw(shapes(0, 2, 1, 3)) + (k,)


@st.composite
def _dot_shapes(draw):
    k = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["matrix", "vector", "batched", "scalar"]))
    a = draw(shapes(0, 2, 1, 3)) + (k,)
    if kind == "scalar":
        return (), a
    if kind == "vector":
        return a, (k,)
    if kind == "matrix":
        return a, (k, draw(st.integers(1, 3)))
    return a, draw(shapes(0, 1, 1, 3)) + (k, draw(st.integers(1, 3)))


@st.composite
def _vdot_shapes(draw):
    shape = draw(shapes(1, 3))
    return shape, tuple(reversed(shape))


def _vdot_ref(a, b):
    return np.asarray(np.vdot(a, b.reshape(a.shape)))


@st.composite
def _cross_draw(draw, dtype):
    batch_a, batch_b = draw(mutually_broadcastable_shapes(2, max_dims=2, max_side=3))
    a = draw(tensors(dtype, batch_a + (draw(st.sampled_from([3, 2])),)))
    b = draw(tensors(dtype, batch_b + (draw(st.sampled_from([3, 2])),)))
    kwargs = {}
    if a.ndim > 1 and draw(st.booleans()):
        a = np.moveaxis(a, -1, 0).copy()
        kwargs["axisa"] = 0
    if draw(st.booleans()):
        kwargs["axisc"] = 0
    return SampleInput((a, b), kwargs, grad_argnums=(0, 1))


def _cross_ref(a, b, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates 2-vectors, still computes them
        return np.cross(a, b, **kwargs)


@st.composite
def _sort_draw(draw, dtype, ties=False):
    values = _elements(dtype) if ties else _half_steps(dtype)
    x = draw(tensors(dtype, shapes(1, 3, 1, 4), values, unique=not ties))
    return SampleInput((x,), {"axis": _axis_or_none(draw, x.ndim)})


@st.composite
def _argsort_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3), st.integers(-3, 3).map(np.dtype(dtype).type)))
    kwargs = {"axis": _axis_or_none(draw, x.ndim)}
    if draw(st.booleans()):
        kwargs["kind"] = "stable"
    return SampleInput((x,), kwargs, grad_argnums=())


@st.composite
def _take_along_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    shape = list(x.shape)
    shape[axis] = draw(st.integers(1, 4))
    indices = draw(tensors(_dt.int64, tuple(shape), st.integers(-x.shape[axis], x.shape[axis] - 1)))
    return SampleInput((x, indices, axis))


@st.composite
def _quantile_draw(draw, dtype, scale=1.0, with_q=True):
    x = draw(tensors(dtype, shapes(1, 3, 1, 4), _half_steps(dtype), unique=True))
    axis = draw(
        st.none()
        | st.integers(-x.ndim, x.ndim - 1)
        | st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True).map(tuple)
    )
    kwargs = {"axis": axis, "keepdims": draw(st.booleans())}
    if not with_q:
        return SampleInput((x,), kwargs)
    q = draw(
        st.sampled_from([0.5, 0.0, 1.0, 0.3]) | st.lists(st.sampled_from([0.1, 0.25, 0.8, 1.0]), min_size=1, max_size=3)
    )
    q = q * scale if isinstance(q, float) else [v * scale for v in q]
    method = draw(st.sampled_from(("linear",) + tuple(m for m in QUANTILE_METHODS if m != "linear")))
    if method != "linear":
        kwargs["method"] = method
    return SampleInput((x, q), kwargs)


@st.composite
def _diff_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    kwargs = {"n": draw(st.integers(0, 2)), "axis": axis}
    if draw(st.booleans()):
        kwargs["prepend"] = draw(st.sampled_from([0.5, -1.0]) if np.dtype(dtype).kind == "f" else st.just(1))
    if draw(st.booleans()):
        shape = list(x.shape)
        shape[axis] = 2
        kwargs["append"] = draw(tensors(dtype, tuple(shape)))
    return SampleInput((x,), kwargs)


def _diff_ref(x, **kwargs):
    # A Python scalar to prepend is weak in tensorlib: it takes x's dtype (NumPy makes it float64).
    if isinstance(kwargs.get("prepend"), (int, float)):
        kwargs["prepend"] = np.asarray(kwargs["prepend"], x.dtype)
    return np.diff(x, **kwargs)


@st.composite
def _repeat_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    axis = _axis_or_none(draw, x.ndim)
    size = x.size if axis is None else x.shape[axis]
    repeats = draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=size, max_size=size))
    return SampleInput((x, repeats), {"axis": axis})


@st.composite
def _check_ids_draw(draw, dtype):
    params = draw(tensors(dtype, shapes(1, 3, 1, 4)))
    axis = draw(st.integers(-params.ndim, params.ndim - 1))
    ids = draw(st.lists(st.integers(0, params.shape[axis] - 1), max_size=5))
    return SampleInput(
        (np.array(ids, np.int64).reshape(-1, 1) if len(ids) % 2 else np.array(ids, np.int64), params, axis)
    )


def _segment_draw(every_segment: bool):
    """Data, ids in [-1, segments) and the segment count; with ``every_segment`` no segment is empty (an empty
    max is -inf, where finite differences are NaN)."""

    @st.composite
    def draw_sample(draw, dtype):
        segments = draw(st.integers(0, 4))
        ids = draw(tensors(_dt.int64, shapes(1, 2, 0, 4), st.integers(-1, max(segments - 1, -1))))
        if every_segment:
            segments = min(segments, ids.size)
            ids.reshape(-1)[:segments] = np.arange(segments)
        data = draw(tensors(dtype, ids.shape + draw(shapes(0, 2, 1, 3))))
        return SampleInput((data, ids, segments), grad_argnums=(0,))

    return draw_sample


def _segment_ref(how):
    def ref(data, ids, segments):
        # A loop over the rows: each row with a non-negative id joins its segment.
        rest = data.shape[ids.ndim :]
        rows, flat = data.reshape((-1,) + rest), ids.reshape(-1)
        out = []
        for s in range(segments):
            members = rows[flat == s]
            if how == "sum":
                out.append(members.sum(0))
            elif how == "mean":
                out.append(members.mean(0) if len(members) else np.zeros(rest))
            elif len(members):
                out.append(members.max(0) if how == "max" else members.min(0))
            else:
                out.append(np.full(rest, -np.inf if how == "max" else np.inf))
        return np.array(out, dtype=data.dtype).reshape((segments,) + rest)

    return ref


def _segment_entries():
    errors = (
        ErrorInput(
            (np.ones(3), np.array([0, 1, 3]), 3),
            exc=IndexError,
            match=r"segment id 3 is out of range for num_segments=3",
        ),
        ErrorInput(
            (np.ones((3, 2)), np.array([0, 1]), 2),
            exc=ValueError,
            match=r"segment_ids' shape must be a non-empty prefix",
        ),
        ErrorInput((np.ones(3), np.array([0.0, 1.0, 1.0]), 2), exc=TypeError, match=r"segment_ids must be integers"),
        ErrorInput((np.ones(3), np.array([0, 1, 1]), -1), exc=ValueError, match=r"num_segments must be an int >= 0"),
    )
    return [
        OpInfo(
            f"segment_{how}",
            getattr(tl, f"segment_{how}"),
            _segment_ref(how),
            _segment_draw(how in ("max", "min")),
            op_types=("GatherV2Grad", "Select") if how in ("sum", "mean") else ("SegmentExtreme",),
            dtypes=FLOATS,
            kinks=how in ("max", "min"),
            error_inputs=tuple(ErrorInput(e.args, exc=e.exc, match=f"^segment_{how}: " + e.match) for e in errors),
        )
        for how in ("sum", "mean", "max", "min")
    ]


@st.composite
def _vander_draw(draw, dtype):
    x = draw(tensors(dtype, (draw(st.integers(0, 4)),), scalars(dtype, -2.0, 2.0)))
    return SampleInput((x, draw(st.none() | st.integers(0, 4)), draw(st.booleans())))


def _vander_ref(x, N, increasing):
    # NumPy promotes float32 to float64 here (promote_types(x.dtype, int)); JAX and PyTorch keep x's dtype.
    return np.vander(x, N, increasing).astype(x.dtype if x.dtype.kind == "f" else np.int64)


@st.composite
def _np_gradient_draw(draw, dtype):
    f = draw(tensors(dtype, shapes(1, 3, 3, 5)))
    edge_order = draw(st.sampled_from([1, 2]))
    axis = draw(st.none() | st.integers(-f.ndim, f.ndim - 1))
    axes = range(f.ndim) if axis is None else [axis % f.ndim]
    kind = draw(st.sampled_from(["none", "scalar", "each"]))
    if kind == "none":
        spacing = ()
    elif kind == "scalar":
        spacing = (draw(st.floats(0.25, 3.0)),)
    else:  # a coordinate vector (uneven steps) or a scalar per axis
        spacing = tuple(
            np.cumsum(draw(tensors(np.dtype(np.float64), (f.shape[a],), st.floats(0.3, 2.0))))
            if draw(st.booleans())
            else draw(st.floats(0.25, 3.0))
            for a in axes
        )
    return SampleInput((f, *spacing), {"axis": axis, "edge_order": edge_order})


def _np_gradient_ref(f, *spacing, axis, edge_order):
    out = np.gradient(f.astype(np.float64), *spacing, axis=axis, edge_order=edge_order)
    return tuple(o.astype(f.dtype) for o in out) if isinstance(out, (tuple, list)) else out.astype(f.dtype)


@st.composite
def _histogram_draw(draw, dtype):
    a = draw(tensors(dtype, shapes(1, 2, 0, 6), scalars(dtype, -3.0, 3.0)))
    bins = draw(st.integers(1, 5) | st.just(np.array([-2.0, -0.5, 0.0, 1.0, 2.5])))
    weights = draw(st.none() | tensors(dtype, a.shape, scalars(dtype, 0.1, 2.0)))
    kwargs = {"range": draw(st.none() | st.just((-1.0, 2.0))), "weights": weights, "density": draw(st.booleans())}
    return SampleInput((a, bins), kwargs, grad_argnums=())


def _histogram_ref(a, bins, range, weights, density):  # noqa: A002
    with np.errstate(invalid="ignore", divide="ignore"):
        hist, edges = np.histogram(a, bins, range, weights=weights, density=density)
    return hist, edges


@st.composite
def _block_diag_draw(draw, dtype):
    blocks = [
        draw(tensors(dtype, draw(st.sampled_from([(), (2,), (1, 3), (2, 2), (0, 2), (3, 1)]))))
        for _ in range(draw(st.integers(1, 3)))
    ]
    return SampleInput(tuple(blocks), grad_argnums=tuple(i for i, b in enumerate(blocks) if b.size))


def _block_diag_ref(*blocks):
    from scipy.linalg import block_diag

    return block_diag(*blocks)


EINSUM_FORMS = ("ii->i", "ii", "ii->", "iij->ij", "ij,jj->i", "iji->j", "...ii->...i", "bii,bi->b")


@st.composite
def _einsum_diagonal_draw(draw, dtype):
    equation = draw(st.sampled_from(EINSUM_FORMS))
    sizes = {c: draw(st.integers(1, 3)) for c in "ijb"}
    batch = draw(shapes(0, 2, 1, 3))
    arrays = []
    for sub in equation.split("->")[0].split(","):
        shape = (batch if "..." in sub else ()) + tuple(sizes[c] for c in sub.replace("...", ""))
        arrays.append(draw(tensors(dtype, shape)))
    return SampleInput((equation, *arrays), grad_argnums=tuple(range(1, len(arrays) + 1)))


@st.composite
def _einsum_sublist_draw(draw, dtype):
    n, k, j = (draw(st.integers(1, 3)) for _ in range(3))
    a = draw(tensors(dtype, (n, k)))
    b = draw(tensors(dtype, (k, j)))
    form = draw(st.sampled_from(["matmul", "implicit", "diagonal", "ellipsis"]))
    if form == "matmul":
        args = (a, [0, 1], b, [1, 2], [0, 2])
    elif form == "implicit":
        args = (a, [0, 1], b, [1, 2])
    elif form == "diagonal":
        args = (draw(tensors(dtype, (k, k))), [0, 0], b, [0, 1], [1])
    else:
        args = (a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2])
    return SampleInput(args, grad_argnums=tuple(i for i, v in enumerate(args) if isinstance(v, np.ndarray)))


@st.composite
def _logsumexp_b_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3), _elements(dtype, -10.0, 10.0)))
    b_shape = tuple(d if draw(st.booleans()) else 1 for d in x.shape)[draw(st.integers(0, x.ndim)) :]
    b = draw(tensors(dtype, b_shape, _elements(dtype, 0.5, 2.0)))
    axis = _axis_or_none(draw, x.ndim)
    return SampleInput((x,), {"axis": axis, "keepdims": draw(st.booleans()), "b": b})


def _logsumexp_b_ref(x, axis=None, keepdims=False, b=None):
    return _logsumexp_ref(x + np.log(np.broadcast_to(b, x.shape)), axis, keepdims)


def _logsumexp_b(x, axis=None, keepdims=False, b=None):
    return tl.logsumexp(x, axis=axis, keepdims=keepdims, b=b)


@st.composite
def _tile_reps_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(0, 3)))
    reps = draw(st.lists(st.integers(1, 3), min_size=0, max_size=4))
    return SampleInput((x, tuple(reps) if draw(st.booleans()) else (reps[0] if reps else 2)))


OPINFOS: list = [
    OpInfo(
        "cumsum",
        tl.cumsum,
        np.cumsum,
        _cumulative_draw,
        op_types=("Cumsum",),
        dtypes=NUMERIC + (_dt.bool_,),
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)),),
                {"axis": 2},
                ValueError,
                r"Cumsum: axis 2 is out of range for a tensor of rank 2 \(inputs x: shape "
                r"\(2, 3\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "cumprod",
        tl.cumprod,
        np.cumprod,
        lambda dtype: _cumulative_draw(dtype, _zeros_and_values),
        op_types=("Cumprod",),
        dtypes=NUMERIC + (_dt.bool_,),
        error_inputs=(
            ErrorInput((np.ones((2, 3)),), {"axis": -3}, ValueError, r"axis -3 is out of range for a tensor of rank 2"),
        ),
    ),
    OpInfo(
        "cummax",
        tl.cummax,
        _running_ref(np.maximum),
        lambda dtype: _sort_draw(dtype),  # distinct values: ties are kinks
        op_types=("Cummax", "CummaxIndex"),
        dtypes=NUMERIC,
        kinks=True,
    ),
    OpInfo(
        "cummin",
        tl.cummin,
        _running_ref(np.minimum),
        lambda dtype: _sort_draw(dtype),
        op_types=("Cummin", "CumminIndex"),
        dtypes=NUMERIC,
        kinks=True,
    ),
    OpInfo(
        "cumulative_sum",
        tl.cumulative_sum,
        np.cumulative_sum,
        _cumulative_array_api_draw,
        op_types=("Cumsum",),
        dtypes=NUMERIC + (_dt.bool_,),
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)),),
                exc=ValueError,
                match=r"cumulative_sum: an input of more than one dimension needs an axis",
            ),
        ),
    ),
    OpInfo(
        "cumulative_prod",
        tl.cumulative_prod,
        np.cumulative_prod,
        lambda dtype: _cumulative_array_api_draw(dtype, _zeros_and_values),
        op_types=("Cumprod",),
        dtypes=NUMERIC + (_dt.bool_,),
    ),
    OpInfo(
        "logcumsumexp",
        tl.logcumsumexp,
        _logcumsumexp_ref,
        _logcumsumexp_draw,
        op_types=("LogCumsumExp", "ExpWeightedCumsum"),
        dtypes=FLOATS + (_dt.float16, _dt.int64),
        error_inputs=(
            ErrorInput(
                (np.ones(2, np.complex128),), exc=TypeError, match=r"LogCumsumExp: needs real floating-point numbers"
            ),
        ),
    ),
    OpInfo(
        "nancumsum",
        tl.nancumsum,
        np.nancumsum,
        lambda dtype: _cumulative_draw(dtype, _with_nans),
        op_types=("Cumsum", "Select"),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "nancumprod",
        tl.nancumprod,
        np.nancumprod,
        lambda dtype: _cumulative_draw(dtype, _with_nans),
        op_types=("Cumprod", "Select"),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "tril",
        tl.tril,
        np.tril,
        _triangle_draw,
        op_types=("MatrixBandPartLower",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(()),),
                exc=ValueError,
                match=r"MatrixBandPartLower: needs a tensor of rank >= 2 .* got shape \(\)",
            ),
        ),
    ),
    OpInfo("triu", tl.triu, np.triu, _triangle_draw, op_types=("MatrixBandPartUpper",), dtypes=NUMERIC),
    OpInfo(
        "diagonal",
        tl.diagonal,
        np.diagonal,
        _diagonal_draw,
        op_types=("MatrixDiagPart", "MatrixSetDiag"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)),),
                {"axis1": 1, "axis2": -1},
                ValueError,
                r"MatrixDiagPart: axis1 and axis2 cannot be the same \(both 1\) \(inputs x: "
                r"shape \(2, 3\) float64\)",
            ),
            ErrorInput((np.ones(3),), exc=ValueError, match=r"MatrixDiagPart: diagonal needs a tensor of rank >= 2"),
        ),
    ),
    OpInfo(
        "diag",
        tl.diag,
        np.diag,
        _diag_draw,
        op_types=("MatrixDiagPart", "MatrixSetDiag"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 2, 2)),),
                exc=ValueError,
                match=r"diag: input must be 1-d or 2-d, got shape \(2, 2, 2\) \(float64\)",
            ),
        ),
    ),
    OpInfo("trace", tl.trace, np.trace, _diagonal_draw, op_types=("MatrixDiagPart", "Sum"), dtypes=FLOATS),
    OpInfo(
        "roll",
        tl.roll,
        np.roll,
        _roll_draw,
        op_types=("Roll",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), (1, 2)),
                {"axis": (0, 1, 0)},
                ValueError,
                r"roll: shift \(1, 2\) and axis \(0, 1, 0\) do not broadcast \(input shape \(2, 3\), float64\)",
            ),
        ),
    ),
    OpInfo(
        "flip",
        tl.flip,
        np.flip,
        _flip_draw,
        op_types=("ReverseV2",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)),), {"axis": 2}, ValueError, r"ReverseV2: axis 2 is out of range for a tensor of rank 2"
            ),
        ),
    ),
    OpInfo(
        "fliplr",
        tl.fliplr,
        np.fliplr,
        lambda dtype: _triangle_draw(dtype).filter(lambda s: s.args[0].ndim >= 2).map(lambda s: SampleInput(s.args)),
        op_types=("ReverseV2",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "flipud",
        tl.flipud,
        np.flipud,
        lambda dtype: _flip_draw(dtype).map(lambda s: SampleInput(s.args)),
        op_types=("ReverseV2",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "rot90",
        tl.rot90,
        np.rot90,
        _rot90_draw,
        op_types=("ReverseV2",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)),),
                {"axes": (1, 1)},
                ValueError,
                r"rot90: axes must be two different axes, got \(1, 1\) \(shape \(2, 3\)\)",
            ),
        ),
    ),
    OpInfo("swapaxes", tl.swapaxes, np.swapaxes, _swapaxes_draw, op_types=("Transpose",), dtypes=NUMERIC),
    OpInfo(
        "moveaxis",
        tl.moveaxis,
        np.moveaxis,
        _moveaxis_draw,
        op_types=("Transpose",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), [0, 1], [0]),
                exc=ValueError,
                match=r"moveaxis: source \[0, 1\] and destination \[0\] must be distinct axes",
            ),
        ),
    ),
    OpInfo(
        "ravel",
        _ravel,
        np.ravel,
        lambda dtype: _flip_draw(dtype).map(lambda s: SampleInput(s.args)),
        op_types=("Reshape",),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "flatten",
        _flatten,
        _flatten,
        lambda dtype: _flip_draw(dtype).map(lambda s: SampleInput(s.args)),
        op_types=("Reshape",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "vstack",
        _sequence_fn(tl.vstack),
        _sequence_fn(np.vstack),
        lambda dtype: _joined_draw(dtype, lambda ndim: 0 if ndim >= 2 else None),
        op_types=("ConcatV2",),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "hstack",
        _sequence_fn(tl.hstack),
        _sequence_fn(np.hstack),
        lambda dtype: _joined_draw(dtype, lambda ndim: 1 if ndim >= 2 else 0 if ndim else None),
        op_types=("ConcatV2",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.ones((3, 3))),
                exc=ValueError,
                match=r"ConcatV2: shapes \[\(2, 3\), \(3, 3\)\] differ outside axis 1",
            ),
        ),
    ),
    OpInfo(
        "dstack",
        _sequence_fn(tl.dstack),
        _sequence_fn(np.dstack),
        lambda dtype: _joined_draw(dtype, lambda ndim: 2 if ndim >= 3 else None),
        op_types=("ConcatV2",),
        dtypes=FLOATS,
    ),
    OpInfo(
        "column_stack",
        _sequence_fn(tl.column_stack),
        _sequence_fn(np.column_stack),
        lambda dtype: _joined_draw(dtype, lambda ndim: 1 if ndim >= 2 else None),
        op_types=("ConcatV2",),
        dtypes=FLOATS,
    ),
    OpInfo("append", tl.append, np.append, _append_draw, op_types=("ConcatV2",), dtypes=NUMERIC),
    OpInfo(
        "array_split",
        tl.array_split,
        np.array_split,
        _array_split_draw,
        op_types=("SplitV",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(3), 0), exc=ValueError, match=r"array_split: number of sections must be larger than 0, got 0"
            ),
        ),
    ),
    OpInfo("atleast_1d", tl.atleast_1d, np.atleast_1d, _atleast_draw, op_types=(), dtypes=FLOATS),
    OpInfo("atleast_2d", tl.atleast_2d, np.atleast_2d, _atleast_draw, op_types=(), dtypes=FLOATS),
    OpInfo("atleast_3d", tl.atleast_3d, np.atleast_3d, _atleast_draw, op_types=(), dtypes=FLOATS),
    OpInfo(
        "kron",
        tl.kron,
        np.kron,
        lambda dtype: _two_arrays(dtype, _kron_shapes()),
        op_types=("Mul", "Reshape"),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "outer",
        tl.outer,
        np.outer,
        lambda dtype: _two_arrays(dtype, _outer_shapes()),
        op_types=("Mul",),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "inner", tl.inner, np.inner, lambda dtype: _two_arrays(dtype, _inner_shapes()), op_types=("Mul",), dtypes=FLOATS
    ),
    OpInfo("dot", tl.dot, np.dot, lambda dtype: _two_arrays(dtype, _dot_shapes()), op_types=("Einsum",), dtypes=FLOATS),
    OpInfo(
        "vdot",
        tl.vdot,
        _vdot_ref,
        lambda dtype: _two_arrays(dtype, _vdot_shapes()),
        op_types=("Einsum",),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "cross",
        tl.cross,
        _cross_ref,
        _cross_draw,
        op_types=("Mul", "Sub"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(4), np.ones(3)),
                exc=ValueError,
                match=r"cross: both vector axes must have 2 or 3 elements \(a size known under tl.function\), got shapes \(4,\) and "
                r"\(3,\) \(float64, float64\)",
            ),
        ),
    ),
    OpInfo(
        "sort",
        tl.sort,
        np.sort,
        _sort_draw,
        op_types=("Sort", "ArgSort", "TakeAlongAxis", "TakeAlongAxisGrad"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(()),),
                {"axis": 0},
                ValueError,
                r"Sort: cannot sort a 0-d tensor along an axis \(inputs x: shape \(\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "sort_ties",
        tl.sort,
        np.sort,
        lambda dtype: _sort_draw(dtype, ties=True),
        op_types=("Sort",),
        dtypes=FLOATS,
        kinks=True,
    ),
    OpInfo(
        "argsort", tl.argsort, np.argsort, _argsort_draw, op_types=("ArgSort",), dtypes=NUMERIC, differentiable=False
    ),
    OpInfo(
        "take_along_axis",
        tl.take_along_axis,
        np.take_along_axis,
        _take_along_draw,
        op_types=("TakeAlongAxis", "TakeAlongAxisGrad"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.array([[0], [3]]), 1),
                exc=IndexError,
                match=r"TakeAlongAxis: index 3 is out of bounds for axis 1 with size 3 \(x shape \(2, 3\) float64, indices shape",
            ),
            ErrorInput(
                (np.ones((2, 3)), np.array([0.5]), 1),
                exc=TypeError,
                match=r"TakeAlongAxis: indices must be integers, got float64",
            ),
        ),
    ),
    OpInfo(
        "quantile",
        tl.quantile,
        np.quantile,
        _quantile_draw,
        op_types=("Sort", "GatherV2"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(3), 1.5),
                exc=ValueError,
                match=r"quantile: q must be in \[0, 1\] \(percentiles in \[0, 100\]\), got 1.5",
            ),
            ErrorInput(
                (np.ones(3), 0.5), {"method": "closest"}, ValueError, r"quantile: method must be one of NumPy's"
            ),
        ),
    ),
    OpInfo(
        "percentile",
        tl.percentile,
        np.percentile,
        lambda dtype: _quantile_draw(dtype, scale=100.0),
        op_types=("Sort", "GatherV2"),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "median",
        tl.median,
        np.median,
        lambda dtype: _quantile_draw(dtype, with_q=False),
        op_types=("Sort", "GatherV2"),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "diff",
        tl.diff,
        _diff_ref,
        _diff_draw,
        op_types=(),
        dtypes=NUMERIC,
        error_inputs=(ErrorInput((np.ones(()),), exc=ValueError, match=r"diff: needs a tensor of rank >= 1"),),
    ),
    OpInfo(
        "repeat",
        tl.repeat,
        np.repeat,
        _repeat_draw,
        op_types=("GatherV2",),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput(
                (np.ones(3), [1, 2]),
                exc=ValueError,
                match=r"repeat: repeats must be non-negative integers, one or one per element "
                r"\(3\) along axis 0, got \[1, 2\]",
            ),
        ),
    ),
    OpInfo(
        "check_int_range",
        lambda x: tl.ops.creation.check_int_range(x, "int32", "tensor: data"),
        lambda x: x.copy(),
        lambda dtype: tensors(dtype, shapes(0, 3, 0, 4), _elements(dtype, -(2.0**31), 2.0**31 - 1)).map(
            lambda x: SampleInput((x,))
        ),
        op_types=("CheckIntRange",),
        dtypes=(_dt.int64, _dt.float64),
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.array([1, 2**40], np.int64),),
                exc=OverflowError,
                match=r"tensor: data holds 1099511627776, which does not fit in int32 \(range -2147483648\.\.2147483647\)",
            ),
            ErrorInput(
                (np.array([-3e9]),),
                exc=OverflowError,
                match=r"tensor: data holds -3000000000.0, which does not fit in int32",
            ),
        ),
    ),
    OpInfo(
        "check_ids",
        lambda ids, params, axis: tl.ops.shape.check_ids(ids, params, axis, "lookup"),
        lambda ids, params, axis: ids.copy(),
        _check_ids_draw,
        op_types=("CheckIds",),
        dtypes=FLOATS,
        differentiable=False,
        error_inputs=(
            ErrorInput(
                (np.array([0, -1]), np.ones((3, 2)), 0),
                exc=IndexError,
                match=r"lookup: id -1 is out of range \[0, 3\) \(params shape \(3, 2\) float64, ids shape \(2,\) int64\)",
            ),
            ErrorInput(
                (np.array([2]), np.ones((3, 2)), 1), exc=IndexError, match=r"lookup: id 2 is out of range \[0, 2\)"
            ),
            ErrorInput((np.array([0.0]), np.ones(3), 0), exc=TypeError, match=r"indices must be integers, got float64"),
        ),
    ),
    OpInfo(
        "einsum_diagonal",
        tl.einsum,
        np.einsum,
        _einsum_diagonal_draw,
        op_types=("MatrixDiagPart", "Einsum"),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                ("ii->i", np.ones((2, 3))), exc=ValueError, match=r"Einsum: index 'i' has sizes 2 and 3 in 'ii->i'"
            ),
        ),
    ),
    OpInfo("einsum_sublist", tl.einsum, np.einsum, _einsum_sublist_draw, op_types=("Einsum",), dtypes=FLOATS),
    OpInfo(
        "logsumexp_b", _logsumexp_b, _logsumexp_b_ref, _logsumexp_b_draw, op_types=("Exp", "Log", "Mul"), dtypes=FLOATS
    ),
    OpInfo("tile_reps", tl.tile, np.tile, _tile_reps_draw, op_types=("Tile",), dtypes=NUMERIC),
    *_segment_entries(),
    OpInfo(
        "vander",
        tl.vander,
        _vander_ref,
        _vander_draw,
        op_types=("Mul", "Pack"),
        dtypes=NUMERIC,
    ),
    OpInfo(
        "np_gradient",
        tl.gradient,
        _np_gradient_ref,
        _np_gradient_draw,
        op_types=("StridedSlice", "Sub", "Div", "ConcatV2"),
        error_inputs=(
            ErrorInput(
                (np.ones(2),), {"edge_order": 2}, exc=ValueError, match=r"^gradient: axis 0 has 2 elements; at least"
            ),
            ErrorInput(
                (np.ones((2, 3)), 1.0, 2.0, 3.0),
                exc=TypeError,
                match=r"^gradient: give no spacing, one scalar, or one per axis",
            ),
            ErrorInput(
                (np.ones(3), np.ones(2)),
                exc=ValueError,
                match=r"^gradient: the spacing of axis 0 must be a scalar or 3 coordinates",
            ),
        ),
    ),
    OpInfo(
        "histogram",
        tl.histogram,
        _histogram_ref,
        _histogram_draw,
        op_types=("SearchSorted", "GatherV2Grad"),
        differentiable=False,
        error_inputs=(
            ErrorInput((np.ones(3), 0), exc=ValueError, match=r"^histogram: bins must be a positive int"),
            ErrorInput(
                (np.ones(3), np.array([1.0, 0.0])), exc=ValueError, match=r"^histogram: the bin edges must increase"
            ),
            ErrorInput(
                (np.ones(3), 2),
                {"range": (2.0, 1.0)},
                exc=ValueError,
                match=r"^histogram: range must be finite with min <= max",
            ),
        ),
    ),
    OpInfo(
        "linalg.block_diag",
        tl.linalg.block_diag,
        _block_diag_ref,
        _block_diag_draw,
        op_types=("PadV2", "ConcatV2"),
        dtypes=NUMERIC,
        error_inputs=(
            ErrorInput((np.ones((1, 2, 2)),), exc=ValueError, match=r"^block_diag: block 0 has 3 dimensions"),
        ),
    ),
]

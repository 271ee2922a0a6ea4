"""Reductions with ``axis`` and ``keepdims``: sum, mean, max, min, prod, var, std, logsumexp, argmax, argmin,
any, all, count_nonzero, ptp, average."""

from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from .. import dtypes as _dt
from ..backends.numpy_nn.sums import column_sums
from ..dispatch import apply, as_tensor, as_tensors
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import math as math_ops
from ._shapes import normalize_axes
from .registry import defop, spec


def _reduced_shape(shape, axis, keepdims):
    if keepdims:
        return tuple(1 if i in axis else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axis)


def _reduce_infer(x, *, axis, keepdims):
    axis = normalize_axes(axis, len(x.shape))
    return spec(_reduced_shape(x.shape, axis, keepdims), x.dtype)


def _restore(node, g):
    """Give a reduction's output (or its gradient) back the reduced axes, broadcast to the input."""
    from .shape import broadcast_like, expand_dims

    x = node.inputs[0]
    axis = normalize_axes(node.attrs["axis"], len(x.shape))
    if not node.attrs["keepdims"] and axis:
        g = expand_dims(g, axis)
    return broadcast_like(g, x)


def _counting_infer(x, *, axis, keepdims):
    # Sums and products of bools count, and those of int32 accumulate in int64, as in NumPy (an int32
    # sum wrapped around silently: [2**30, 2**30] gave -2**31): both give int64.
    out = _reduce_infer(x, axis=axis, keepdims=keepdims)
    return spec(out.shape, _dt.int64) if x.dtype in (_dt.bool_, _dt.int32) else out


def _reduction(name, doc, infer=_reduce_infer):
    return defop(name, inputs=("x",), attrs={"axis": None, "keepdims": False}, infer=infer, doc=doc)


def _counted(xp, x):
    # The Array API's sum and prod take numbers only: bools are counted (and int32 summed) as int64.
    return xp.astype(x, xp.int64) if xp.isdtype(x.dtype, "bool") or x.dtype == xp.int32 else x


def _accumulator(x):
    # Bools and int32 count in int64; float16 accumulates in float32 (the result is rounded to float16 once).
    if not isinstance(x.dtype, np.dtype):  # a namespace with dtypes of its own has no float16
        return x.dtype
    return _dt.int64 if x.dtype in (_dt.bool_, _dt.int32) else _dt.float32 if x.dtype == _dt.float16 else x.dtype


_sum = _reduction("Sum", "Sum over axes.", _counting_infer)
# Below this many values NumPy's own sum is as fast as folding rows, and the checks would cost more.
_FOLDED_SUM_MIN_SIZE = 1 << 14
_sum.generic(
    lambda xp, x, *, axis, keepdims: xp.sum(
        _counted(xp, x), axis=axis, keepdims=keepdims, dtype=_accumulator(_counted(xp, x))
    )
)


@_sum.kernel("numpy")
def _numpy_sum(x, *, axis, keepdims):
    # A big sum over leading axes (a bias gradient over N, H, W) is a column sum of a tall matrix, which
    # NumPy runs one short row at a time: numpy_nn.column_sums folds the rows into long ones.
    if x.size >= _FOLDED_SUM_MIN_SIZE and x.dtype.kind in "fc" and x.flags.c_contiguous:
        axes = normalize_axes(axis, x.ndim)
        if 0 < len(axes) < x.ndim and axes[-1] == len(axes) - 1:
            kept = x.shape[len(axes) :]
            sums = column_sums(x.reshape(-1, math.prod(kept)), _accumulator(x)).reshape(kept)
            return sums.reshape((1,) * len(axes) + kept) if keepdims else sums
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=_accumulator(x))


register_gradient("Sum", _restore)

_prod = _reduction("Prod", "Product over axes.", _counting_infer)
_prod.generic(
    lambda xp, x, *, axis, keepdims: xp.prod(
        _counted(xp, x), axis=axis, keepdims=keepdims, dtype=_accumulator(_counted(xp, x))
    )
)
_prod.kernel("numpy")(lambda x, *, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims, dtype=_accumulator(x)))


def _prod_grad(node, g):
    # d prod / d x_j is the product of the other entries: along one axis, the product of those before it
    # times that of those after it, two exclusive running products (Cumprod: exact at zeros, to second
    # order), with no division.  P / x_j gave NaN where P overflows but the others' product does not:
    # prod([2, inf]) got [inf, nan] (JAX: [inf, 2]), prod([1e200, 1e200, 1e-200]) [nan, nan, inf] (JAX:
    # [1, 1, inf]).  Needs no known shape, so traced functions with unknown dimensions take it too.
    x = node.inputs[0]
    return _restore(node, g) * _products_of_the_others(x, normalize_axes(node.attrs["axis"], x.ndim))


def _products_of_the_others(x, axes):
    """For each entry, the product of the other entries of its slice over ``axes``: those of its own
    line along the last axis, times the products of the other lines (the same rule one axis less)."""
    from .array import _cumprod_op
    from .shape import concat

    if not axes or x.ndim == 0:
        return math_ops.ones_like(x)
    axis, rest = axes[-1], axes[:-1]
    one = math_ops.ones_like(_index(x, axis, slice(0, 1)))
    before = concat([one, _cumprod_op(_index(x, axis, slice(0, -1)), axis)], axis)
    after = concat([_cumprod_op(_index(x, axis, slice(1, None)), axis, reverse=True), one], axis)
    others = before * after
    if rest:
        others = others * _products_of_the_others(prod(x, axis, keepdims=True), rest)
    return others


def _index(x, axis, part):
    return x[(slice(None),) * axis + (part,)]


register_gradient("Prod", _prod_grad)


def _extremum_grad(node, g):
    # Ties share the gradient equally (as TensorFlow does for reduce_max).
    x = node.inputs[0]
    is_max = math_ops.cast(math_ops.equal(x, _restore(node, node.outputs[0])), x.dtype)
    count = _restore(node, sum(is_max, node.attrs["axis"], keepdims=node.attrs["keepdims"]))
    return _restore(node, g) * is_max / count


def _extremum_kernel(numbers, bools, name):
    # The max of bools is any and their min is all, which have an identity: an empty slice has none
    # (NumPy raises for bools as for numbers; any and all gave False and True).
    def kernel(xp, x, *, axis, keepdims):
        if not xp.isdtype(x.dtype, "bool"):
            return numbers(xp)(x, axis=axis, keepdims=keepdims)
        if x.size == 0 and 0 in (x.shape[a] for a in normalize_axes(axis, x.ndim)):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        return bools(xp)(x, axis=axis, keepdims=keepdims)

    return kernel


_max = _reduction("Max", "Maximum over axes; ties share the gradient.")
_max.generic(_extremum_kernel(lambda xp: xp.max, lambda xp: xp.any, "maximum"))
register_gradient("Max", _extremum_grad)

_min = _reduction("Min", "Minimum over axes; ties share the gradient.")
_min.generic(_extremum_kernel(lambda xp: xp.min, lambda xp: xp.all, "minimum"))
register_gradient("Min", _extremum_grad)


def _truth_infer(x, *, axis, keepdims):
    return spec(_reduce_infer(x, axis=axis, keepdims=keepdims).shape, _dt.bool_)


def _truth_reduction(name, doc):
    return defop(
        name,
        inputs=("x",),
        attrs={"axis": None, "keepdims": False},
        infer=_truth_infer,
        differentiable=False,
        doc=doc,
    )


_any = _truth_reduction(
    "Any", "Whether any element along the axes is nonzero (NaN counts as true; not differentiable)."
)
_any.generic(lambda xp, x, *, axis, keepdims: xp.any(x, axis=axis, keepdims=keepdims))
_all = _truth_reduction("All", "Whether every element along the axes is nonzero (not differentiable).")
_all.generic(lambda xp, x, *, axis, keepdims: xp.all(x, axis=axis, keepdims=keepdims))


def _arg_infer(x, *, axis):
    if axis is None:
        return spec((), _dt.int64)
    axes = normalize_axes(axis, len(x.shape))
    return spec(_reduced_shape(x.shape, axes, False), _dt.int64)


_argmax = defop(
    "ArgMax",
    inputs=("x",),
    attrs={"axis": None},
    infer=_arg_infer,
    differentiable=False,
    doc="Index of the maximum (not differentiable).",
)
_argmax.generic(lambda xp, x, *, axis: xp.astype(xp.argmax(x, axis=axis), xp.int64))
_argmin = defop(
    "ArgMin",
    inputs=("x",),
    attrs={"axis": None},
    infer=_arg_infer,
    differentiable=False,
    doc="Index of the minimum (not differentiable).",
)
_argmin.generic(lambda xp, x, *, axis: xp.astype(xp.argmin(x, axis=axis), xp.int64))


def _axis_attr(axis):
    """A hashable axis attribute; NumPy integers become ints, anything invalid is left to the shape rule."""
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) if hasattr(a, "__index__") and not isinstance(a, bool) else a for a in axis)
    if hasattr(axis, "__index__") and not isinstance(axis, bool):
        return int(axis)
    return axis


def _check_axis(x, axis, name, *, scalar_axis: bool = True):
    """Check ``axis`` of ``x`` for the reduction ``name`` (``scalar_axis``: see ``_shapes.normalize_axis``)."""
    if isinstance(x, Tensor):
        try:
            normalize_axes(axis, x.ndim, scalar_axis=scalar_axis)
        except (ValueError, TypeError) as e:
            raise type(e)(f"{name}: {e} (input shape {x.shape}, {x.dtype})") from None


def cast_to_dtype_argument(x, dtype, name: str) -> Tensor:
    """``x`` cast to the ``dtype=`` a reduction ``name`` computes in, as NumPy does; a real ``dtype`` for
    complex ``x`` is a TypeError (NumPy drops the imaginary parts with only a ComplexWarning: tl.sum([1+2j,
    3-1j], dtype='float64') gave 4.0), as making real data of complex data is (docs/complex.md).

    >>> import tensorlib as tl
    >>> cast_to_dtype_argument(tl.tensor([1, 2]), "float64", "sum").dtype
    dtype('float64')
    """
    x = as_tensor(x)
    _dt.check_keeps_imaginary(x.dtype, dtype, f"{name}: dtype")
    return math_ops.cast(x, dtype)


def accumulated_in(function, x, dtype, *args, **kwargs) -> Tensor:
    """``function(x, *args, **kwargs)`` with NumPy's ``dtype=`` for the accumulator: ``x`` cast to ``dtype``
    and the result held in it (an int32 sum wraps around as NumPy's, a bool one is an or); just the
    function when ``dtype`` is None.

    >>> import tensorlib as tl
    >>> accumulated_in(tl.sum, tl.tensor([1.5, 2.5]), "int64").numpy().item()   # each element truncated, as NumPy
    3
    """
    if dtype is None:
        return function(x, *args, **kwargs)
    x = cast_to_dtype_argument(x, dtype, function.__name__.strip("_").removesuffix("_op"))
    out = function(x, *args, **kwargs)
    return math_ops.cast(out, x.dtype) if out.dtype != x.dtype else out


def sum(x, axis=None, keepdims: bool = False, *, dtype=None, where=True, initial=None) -> Tensor:  # noqa: A001
    """Sum over ``axis`` (all axes by default); ``dtype`` is the accumulator's and the result's, as NumPy's
    (by default bools and int32 give int64, float16 accumulates in float32).  NumPy's ``where`` (a bool
    mask broadcasting to ``x``) leaves elements out and ``initial`` starts every slice's sum.

    >>> import tensorlib as tl
    >>> tl.sum(tl.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()
    [4.0, 6.0]
    >>> tl.sum(tl.tensor([0.1] * 10), dtype="float64").dtype
    dtype('float64')
    >>> tl.sum(tl.tensor([1.0, 2.0, 3.0]), where=tl.tensor([True, False, True]), initial=10.0).numpy().item()
    14.0
    """
    if dtype is not None:
        return accumulated_in(sum, as_tensor(x), dtype, axis, keepdims, where=where, initial=initial)
    if where is not True or initial is not None:
        return _masked_from_initial(sum, "sum", x, axis, keepdims, where, initial, 0, math_ops.add)
    return apply(_sum, (x,), {"axis": _axis_attr(axis), "keepdims": bool(keepdims)})


def prod(x, axis=None, keepdims: bool = False, *, dtype=None, where=True, initial=None) -> Tensor:
    """Product over ``axis`` (all axes by default); ``dtype``, ``where`` and ``initial`` as in ``sum``.

    >>> import tensorlib as tl
    >>> tl.prod(tl.tensor([[1, 2], [3, 4]]), axis=1, dtype="float32").numpy().tolist()
    [2.0, 12.0]
    """
    if dtype is not None:
        return accumulated_in(prod, as_tensor(x), dtype, axis, keepdims, where=where, initial=initial)
    if where is not True or initial is not None:
        return _masked_from_initial(prod, "prod", x, axis, keepdims, where, initial, 1, math_ops.multiply)
    return apply(_prod, (x,), {"axis": _axis_attr(axis), "keepdims": bool(keepdims)})


def max(x, axis=None, keepdims: bool = False, *, initial=None, where=True) -> Tensor:  # noqa: A001
    """Maximum over ``axis`` (all axes by default).  NumPy's ``initial`` joins every slice (so an empty
    slice has a maximum) and ``where`` leaves elements out, which needs ``initial``.

    >>> import tensorlib as tl
    >>> tl.max(tl.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=1, initial=4.0).numpy().tolist()
    [5.0, 4.0]
    """
    if where is not True or initial is not None:
        return _masked_from_initial(max, "max", x, axis, keepdims, where, initial, None, math_ops.maximum)
    return apply(_max, (x,), {"axis": _axis_attr(axis), "keepdims": bool(keepdims)})


def min(x, axis=None, keepdims: bool = False, *, initial=None, where=True) -> Tensor:  # noqa: A001
    """Minimum over ``axis`` (all axes by default); ``initial`` and ``where`` as in ``max``.

    >>> import tensorlib as tl
    >>> tl.min(tl.tensor([3.0, 1.0, 2.0]), where=tl.tensor([True, False, True]), initial=9.0).numpy().item()
    2.0
    """
    if where is not True or initial is not None:
        return _masked_from_initial(min, "min", x, axis, keepdims, where, initial, None, math_ops.minimum)
    return apply(_min, (x,), {"axis": _axis_attr(axis), "keepdims": bool(keepdims)})


def _masked_from_initial(reduction, name, x, axis, keepdims, where, initial, identity, combine) -> Tensor:
    """NumPy's ``where=`` and ``initial=`` of a reduction: the elements ``where`` leaves out count as the
    ``identity`` (``initial`` for max and min, which have none), and ``initial`` joins every slice.  As in
    NumPy, ``initial`` takes the result's dtype (``sum(int, initial=0.5)`` adds 0)."""
    x = as_tensor(x)
    _check_axis(x, axis, name)
    mask = _where_mask(x, where, name)
    if mask is not None:
        if identity is None and initial is None:
            raise ValueError(
                f"{name}: a where mask needs initial (the {name} of no elements is undefined), as in NumPy "
                f"(x shape {x.shape}, {x.dtype})"
            )
        # max and min: an element left out is the dtype's lowest (highest) value, not ``initial``, which
        # joins after: as initial it tied with an equal maximum and took a share of its gradient, lost.
        fill = identity if identity is not None else _extreme(x.dtype, lowest=reduction is max)
        x = math_ops.where(mask, x, _in_dtype(fill, x.dtype))
    axes = normalize_axes(axis, x.ndim)
    sizes = [x.shape[a] for a in axes]
    if identity is None and initial is not None and 0 in sizes:
        # Empty slices: initial alone (max and min of no elements have no identity), in the reduced shape.
        return math_ops.cast(sum(math_ops.zeros_like(x), axis, keepdims), x.dtype) + _in_dtype(initial, x.dtype)
    if identity is None and initial is not None and None in sizes:
        # Traced with a reduced size unknown, the slices may be empty when the graph runs (the max raised
        # there): one more element, the dtype's lowest (highest), along each such axis, which initial
        # outweighs, gives every slice a max (min) and leaves a non-empty slice's as it was.
        from .shape import pad

        fill = _extreme(x.dtype, lowest=reduction is max)
        x = pad(
            x, [(0, 1) if a in axes and x.shape[a] is None else (0, 0) for a in range(x.ndim)], constant_values=fill
        )
    out = reduction(x, axis, keepdims)
    return out if initial is None else combine(out, _in_dtype(initial, out.dtype))


def _extreme(dtype, lowest: bool):
    """The lowest (or highest) value of ``dtype``: -inf (inf) for floats, the integer range's end, False (True)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return not lowest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if lowest else info.max
    return -np.inf if lowest else np.inf


def _in_dtype(value, dtype) -> Tensor:
    """``value`` (a number, array or Tensor) cast to ``dtype``, NumPy's reading of ``initial``."""
    return math_ops.cast(value if isinstance(value, Tensor) else np.asarray(value), dtype)


amax = max
amin = min


def any(x, axis=None, keepdims: bool = False, *, where=True) -> Tensor:  # noqa: A001
    """Whether any element along ``axis`` is nonzero (``numpy.any``; an empty slice gives False, NaN is
    true); a bool tensor, not differentiable.  NumPy's ``where`` leaves elements out.

    >>> import tensorlib as tl
    >>> tl.any(tl.tensor([[0.0, 1.0], [0.0, 0.0]]), axis=1).numpy().tolist()
    [True, False]
    """
    if where is not True:
        return _masked_from_initial(any, "any", x, axis, keepdims, where, None, False, None)
    return apply(_any, (x,), {"axis": _axis_attr(axis), "keepdims": bool(keepdims)})


def all(x, axis=None, keepdims: bool = False, *, where=True) -> Tensor:  # noqa: A001
    """Whether every element along ``axis`` is nonzero (``numpy.all``; an empty slice gives True); a bool
    tensor, not differentiable.  NumPy's ``where`` leaves elements out.

    >>> import tensorlib as tl
    >>> tl.all(tl.tensor([[1, 2], [0, 3]]), axis=0, keepdims=True).numpy().tolist()
    [[False, True]]
    >>> tl.all(tl.tensor([1, 0]), where=tl.tensor([True, False])).numpy().item()
    True
    """
    if where is not True:
        return _masked_from_initial(all, "all", x, axis, keepdims, where, None, True, None)
    return apply(_all, (x,), {"axis": _axis_attr(axis), "keepdims": bool(keepdims)})


def count_nonzero(x, axis=None, keepdims: bool = False) -> Tensor:
    """Number of nonzero elements along ``axis`` (``numpy.count_nonzero``), int64; not differentiable.

    >>> import tensorlib as tl
    >>> tl.count_nonzero(tl.tensor([[0.0, 1.5], [2.0, -1.0]]), axis=1).numpy().tolist()
    [1, 2]
    """
    x = as_tensor(x)
    _check_axis(x, axis, "count_nonzero")
    return sum(math_ops.not_equal(x, math_ops.zeros_like(x)), axis, keepdims)


def ptp(x, axis=None, keepdims: bool = False) -> Tensor:
    """Peak to peak, ``max - min`` along ``axis`` (``numpy.ptp``); the gradient is max's minus min's, ties
    sharing it as in ``max``, so a constant slice has gradient 0.  Bools are refused, as by NumPy.

    >>> import tensorlib as tl
    >>> tl.ptp(tl.tensor([[4.0, 9.0, 1.0], [2.0, 2.0, 2.0]]), axis=1).numpy().tolist()
    [8.0, 0.0]
    """
    x = as_tensor(x)
    _check_axis(x, axis, "ptp")
    if x.dtype == _dt.bool_:
        raise TypeError(f"ptp: bool tensors have no difference (input shape {x.shape}, {x.dtype}); cast them first")
    return max(x, axis, keepdims) - min(x, axis, keepdims)


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """Weighted mean along ``axis`` (``numpy.average``): ``sum(a * weights) / sum(weights)``, differentiable
    in ``a`` and ``weights``.  ``weights`` has ``a``'s shape, or, with ``axis`` given, the shape of the
    reduced axes (a 1-D array along one axis).  With ``returned=True`` gives ``(average, sum of weights)``.
    Weights summing to zero raise ZeroDivisionError eagerly, as in NumPy (inside ``tl.function`` they
    give inf or nan).  Integers and bools average in float64.

    >>> import tensorlib as tl
    >>> tl.average(tl.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1, weights=tl.tensor([3.0, 1.0])).numpy().tolist()
    [1.25, 3.25]
    """
    from .shape import broadcast_like, expand_dims, transpose

    a, w = as_tensors(a, weights)
    _check_axis(a, axis, "average", scalar_axis=False)
    if weights is None:
        avg = mean(a, axis, keepdims)
        if not returned:
            return avg
        count = _count(a, axis)
        return avg, math_ops.full_like(avg, count) if isinstance(count, int) else broadcast_like(count, avg)
    dtype = _dt.promote_types(a.dtype, w.dtype)
    if dtype.kind in "biu":
        dtype = _dt.float64
    if dtype == _dt.float16:  # accumulated in float32, rounded once (sum(a * w) overflowed float16)
        return in_float32(average, a, axis, math_ops.cast(w, _dt.float32), returned, keepdims)
    a, w = math_ops.cast(a, dtype), math_ops.cast(w, dtype)
    if not _same_sizes(w.shape, a.shape):
        given = (
            [a_ % a.ndim for a_ in (axis if isinstance(axis, (tuple, list)) else (axis,))] if axis is not None else None
        )
        if given is None or not _same_sizes(w.shape, tuple(a.shape[i] for i in given)):
            raise ValueError(
                f"average: weights of shape {w.shape} ({w.dtype}) fit neither a (shape {a.shape}, {a.dtype}) "
                f"nor its reduced axes {axis!r}"
            )
        # Weight axis k lies along axis[k]: order them as a's axes, then give the other axes size 1.
        axes = sorted(given)
        order = sorted(range(len(given)), key=lambda k: given[k])
        w = transpose(w, order) if order != list(range(len(given))) else w
        others = tuple(i for i in range(a.ndim) if i not in axes)
        w = expand_dims(w, others) if others else w
        w = broadcast_like(w, a)
    total = sum(w, axis, keepdims)
    if not total.is_symbolic and bool(np.any(total.numpy() == 0)):
        raise ZeroDivisionError(f"average: weights sum to zero, cannot be normalized (weights shape {w.shape})")
    avg = sum(a * w, axis, keepdims) / total
    return (avg, broadcast_like(total, avg)) if returned else avg


def _same_sizes(shape, other) -> bool:
    """Equal shapes, a size unknown under tl.function (None) matching any."""
    return len(shape) == len(other) and builtins.all(p == q or None in (p, q) for p, q in zip(shape, other))


def _arg_kept(out, x, axis, keepdims):
    # NumPy's keepdims for argmax/argmin: the reduced axis (every axis for None) kept with size 1.
    if not keepdims or x.ndim == 0:  # (a 0-d x has no axis to keep: NumPy gives 0-d)
        return out
    from .shape import expand_dims, reshape

    return reshape(out, (1,) * x.ndim) if axis is None else expand_dims(out, axis)


def argmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the first maximum along ``axis`` (of the flattened ``x`` for None), as ``numpy.argmax``:
    a NaN counts as the maximum; ``keepdims`` keeps the reduced axis with size 1.

    >>> import tensorlib as tl
    >>> tl.argmax(tl.tensor([[1.0, 3.0, 3.0]]), axis=1, keepdims=True).numpy().tolist()
    [[1]]
    """
    out = apply(_argmax, (x,), {"axis": axis})
    return _arg_kept(out, as_tensor(x), axis, keepdims)


def argmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the first minimum along ``axis``, as ``numpy.argmin`` (a NaN counts as the minimum).

    >>> import tensorlib as tl
    >>> tl.argmin(tl.tensor([2.0, 1.0, 1.0])).numpy().tolist()
    1
    """
    out = apply(_argmin, (x,), {"axis": axis})
    return _arg_kept(out, as_tensor(x), axis, keepdims)


def _count(x, axis):
    """Number of elements reduced: a Python int when the shape is known, else a traced op."""
    axes = normalize_axes(axis, x.ndim)
    dims = [x.shape[a] for a in axes if a < x.ndim]  # axis 0 of a 0-d tensor counts its one element
    if None not in dims:
        n = 1
        for d in dims:
            n *= d
        return n
    from .shape import shape_size

    return math_ops.cast(shape_size(x, axes), x.dtype)


def _where_mask(x, where, name):
    """NumPy's ``where=`` of a reduction: None for ``True`` (every element), else a bool tensor that
    broadcasts to ``x``'s shape (``x`` is never broadcast to it)."""
    if where is True:
        return None
    mask = as_tensor(where)
    if mask.dtype != _dt.bool_:
        raise TypeError(
            f"{name}: where must be bool, got {mask.dtype} (where shape {mask.shape}; x shape {x.shape}, {x.dtype})"
        )
    fits = mask.ndim <= x.ndim and builtins.all(
        m in (1, d) or None in (m, d) for m, d in zip(reversed(mask.shape), reversed(x.shape))
    )
    if not fits:
        raise ValueError(f"{name}: where of shape {mask.shape} does not broadcast to x's shape {x.shape} ({x.dtype})")
    return mask


def in_float32(function, x, *args, **kwargs) -> Tensor:
    """``function(x, ...)`` of a float16 ``x`` computed in float32 and rounded to float16 once, as every
    float16 reduction accumulates (DESIGN §6): in float16 a sum past 65504 is inf, so the std, median or
    norm of representable values came out inf.

    >>> import numpy as np, tensorlib as tl
    >>> in_float32(tl.std, tl.tensor(np.array([300.0, -300.0], np.float16))).numpy().item()
    300.0
    """
    out = function(math_ops.cast(x, _dt.float32), *args, **kwargs)
    if isinstance(out, tuple):  # several results (average's returned=True, logsumexp's return_sign=True)
        return tuple(math_ops.cast(o, _dt.float16) for o in out)
    return math_ops.cast(out, _dt.float16)


def _masked_count(x, mask, axis, keepdims):
    """The number of elements of ``x`` that ``mask`` selects per reduced slice, in ``x``'s dtype."""
    selected = math_ops.logical_and(mask, math_ops.ones_like(x, _dt.bool_))  # mask broadcast to x
    return math_ops.cast(sum(selected, axis, keepdims), x.dtype)


def mean(x, axis=None, keepdims: bool = False, *, where=True, dtype=None) -> Tensor:
    """Arithmetic mean over ``axis``; integers and bools give float64, float16 accumulates in float32
    (``dtype``, as NumPy's, computes and returns another).
    ``where`` (a bool tensor broadcasting to ``x``) keeps only the elements where it is True, as in
    NumPy: a slice with none gives NaN, and the others get no gradient.

    >>> import tensorlib as tl
    >>> tl.mean(tl.tensor([1, 2])).numpy().item()
    1.5
    >>> tl.mean(tl.tensor([1.0, 2.0, 6.0]), where=tl.tensor([True, False, True])).numpy().item()
    3.5
    """

    x = as_tensor(x)
    if dtype is not None:
        return accumulated_in(mean, x, dtype, axis, keepdims, where=where)
    _check_axis(x, axis, "Mean", scalar_axis=False)
    mask = _where_mask(x, where, "mean")
    if x.dtype.kind in "biu":  # NumPy sums integers in float64 here: an integer sum could wrap around
        x = math_ops.cast(x, _dt.float64)
    if x.dtype == _dt.float16:
        return in_float32(mean, x, axis, keepdims, where=where)
    if mask is not None:
        return sum(math_ops.where(mask, x, 0), axis, keepdims) / _masked_count(x, mask, axis, keepdims)
    total = sum(x, axis, keepdims)
    return total / _count(x, axis)


_mean = mean  # var's and std's NumPy argument mean= hides the function in them


def _check_ddof(x, ddof, name, correction=None):
    """``ddof`` (or NumPy 2's ``correction``, its array-API name) as a Python number (a NumPy scalar one
    promoted float32 to float64, as no weak scalar)."""
    if correction is not None:
        if not (isinstance(ddof, numbers.Real) and ddof == 0):
            raise ValueError(
                f"{name}: ddof and correction can't both be given, got ddof={ddof!r}, correction={correction!r}"
            )
        ddof = correction
    # NumPy takes any real ddof (1.5, a NumPy integer); anything else failed deep inside with a raw TypeError.
    if isinstance(ddof, Tensor):
        return ddof
    if not isinstance(ddof, numbers.Real):
        raise TypeError(f"{name}: ddof must be a real number, got {ddof!r} (input shape {x.shape}, {x.dtype})")
    return int(ddof) if isinstance(ddof, numbers.Integral) else float(ddof)


def given_mean(x, mean, name: str):
    """NumPy 2's ``mean=`` of a variance: the precomputed mean, of the shape ``keepdims=True`` gives (a
    shape that broadcasts ``x`` to a bigger one would silently give another reduction's variance).  Returns
    ``(mean, in_float32)``: whether a float16 ``x`` still accumulates in float32 (a wider mean promotes)."""
    mean = as_tensor(mean)
    fits = mean.ndim <= x.ndim and builtins.all(
        m in (1, n, None) or n is None for m, n in zip(mean.shape[::-1], x.shape[::-1])
    )
    if not fits:
        raise ValueError(
            f"{name}: mean= must broadcast to the input's shape (the shape keepdims=True gives), "
            f"got mean shape {mean.shape} {mean.dtype} for input shape {x.shape} {x.dtype}"
        )
    return mean, x.dtype == _dt.float16 and mean.dtype == _dt.float16


def var(
    x, axis=None, keepdims: bool = False, ddof: int = 0, *, where=True, dtype=None, mean=None, correction=None
) -> Tensor:
    """Variance with NumPy's ``ddof`` (0 by default; ``correction`` is NumPy 2's other name for it); float16
    accumulates in float32, ``dtype`` (NumPy's) computes in another.  ``where`` keeps only the elements where
    it is True (the mean too), as in NumPy; ``mean`` (NumPy 2's) is the mean already computed, of the shape
    ``keepdims=True`` gives, and gets its gradient.

    >>> import tensorlib as tl
    >>> tl.var(tl.tensor([1.0, 3.0])).numpy().item()
    1.0
    >>> tl.var(tl.tensor([1.0, 3.0, 100.0]), where=tl.tensor([True, True, False])).numpy().item()
    1.0
    >>> tl.var(tl.tensor([1.0, 3.0]), mean=tl.tensor([2.0]), correction=1).numpy().item()
    2.0
    """

    x = as_tensor(x) if dtype is None else cast_to_dtype_argument(x, dtype, "var")  # NumPy's dtype= computes in it
    _check_axis(x, axis, "Var", scalar_axis=False)
    ddof = _check_ddof(x, ddof, "Var", correction)
    mask = _where_mask(x, where, "var")
    if mean is None:
        if x.dtype == _dt.float16:
            return in_float32(var, x, axis, keepdims, ddof, where=where)
        centered = x - _mean(x, axis, keepdims=True, where=where)
    else:
        mean, float16 = given_mean(x, mean, "var")
        if float16:
            return in_float32(var, x, axis, keepdims, ddof, where=where, mean=math_ops.cast(mean, _dt.float32))
        centered = x - mean
        if centered.dtype.kind in "biu":  # NumPy sums the squares of integers in float64
            centered = math_ops.cast(centered, _dt.float64)
    if centered.dtype.kind == "c":  # NumPy: the mean squared modulus, real
        centered = math_ops.abs(centered)
    if mask is not None:
        centered = math_ops.where(mask, centered, 0)  # the left-out elements add nothing (nor a NaN)
        n = _masked_count(centered, mask, axis, keepdims)
    else:
        n = _count(centered, axis)  # in centered's dtype: real for complex x (a traced var was complex)
    # NumPy clamps the divisor at 0, so ddof >= n gives inf or nan rather than a negative variance.
    divisor = builtins.max(n - ddof, 0) if isinstance(n, int) else math_ops.maximum(n - ddof, 0)
    return sum(centered * centered, axis, keepdims) / divisor


def std(
    x, axis=None, keepdims: bool = False, ddof: int = 0, *, where=True, dtype=None, mean=None, correction=None
) -> Tensor:
    """Standard deviation; its gradient at zero spread is 0 (as PyTorch and autograd give), not nan.
    ``where``, ``mean`` and ``correction`` as ``var``'s (NumPy's).

    >>> import tensorlib as tl
    >>> tl.grad(lambda x: tl.std(x))(tl.tensor([2.0, 2.0])).numpy().tolist()
    [0.0, 0.0]
    """
    x = as_tensor(x) if dtype is None else cast_to_dtype_argument(x, dtype, "std")
    _check_axis(x, axis, "Std", scalar_axis=False)
    ddof = _check_ddof(x, ddof, "Std", correction)
    _where_mask(x, where, "std")
    if x.dtype == _dt.float16 and (mean is None or given_mean(x, mean, "std")[1]):
        # the root of a float32 variance: a float16 one overflows first
        mean = None if mean is None else math_ops.cast(mean, _dt.float32)
        return in_float32(std, x, axis, keepdims, ddof, where=where, mean=mean)
    return safe_sqrt(var(x, axis, keepdims, ddof, where=where, mean=mean))


def safe_sqrt(v) -> Tensor:
    """``sqrt(v)`` whose gradient at ``v == 0`` is 0 instead of inf (0 * inf is nan downstream).

    The square root sees 1 where ``v`` is 0, so neither order of derivative meets an infinity; a NaN
    (a NaN input, an empty slice) stays NaN, as ``numpy.sqrt`` gives.
    """
    zero = math_ops.equal(v, 0)
    return math_ops.where(zero, math_ops.zeros_like(v), math_ops.sqrt(math_ops.where(zero, math_ops.ones_like(v), v)))


def logsumexp(x, axis=None, keepdims: bool = False, b=None, return_sign: bool = False):
    """log(sum(b * exp(x))), stable for large inputs (the max is subtracted first).

    ``b`` (SciPy's weights, broadcast against x) is differentiable too. A term whose weight is 0 is
    dropped, as in SciPy, whatever its x (even above the others, inf or NaN); its weight's gradient is
    exp(x - logsumexp) wherever exp(x - max) is finite, else 0.

    With ``return_sign=True`` (SciPy's), gives ``(log|sum|, sign of the sum)``, so negative weights
    (a difference of exponentials) have a logarithm; for complex x the sign is ``exp(i arg(sum))``.

    >>> import tensorlib as tl
    >>> round(float(tl.logsumexp(tl.tensor([0.0, 0.0]), b=tl.tensor([1.0, 3.0]))), 4)
    1.3863
    >>> [round(float(v), 4) for v in tl.logsumexp(tl.tensor([1.0, 2.0]), b=tl.tensor([1.0, -1.0]), return_sign=True)]
    [1.5413, -1.0]
    """

    x = as_tensor(x)
    _check_axis(x, axis, "LogSumExp")
    if x.dtype == _dt.bool_:  # a float-valued function of bools (SciPy gives float64 too)
        x = math_ops.cast(x, _dt.float64)
    if x.dtype == _dt.float16 and (b is None or as_tensor(b).dtype == _dt.float16):
        return in_float32(logsumexp, x, axis, keepdims, b, return_sign)
    if return_sign:
        return _logsumexp_and_sign(x, axis, keepdims, b)
    dropped = None
    if b is not None:
        # SciPy drops the terms whose weight is 0, so they neither set the shift (a dropped x above the
        # others would underflow every kept term to 0: log 0 = -inf) nor give 0 * inf or 0 * nan.
        dropped = math_ops.equal(b, 0)
    sizes = [x.shape[a] for a in normalize_axes(axis, x.ndim) if a < x.ndim]
    if 0 in sizes:
        # An empty slice sums to 0 and logs to -inf (SciPy); its max, which has no identity, is not needed.
        shift = math_ops.stop_gradient(sum(x, axis, keepdims=True))
    else:
        kept = x if dropped is None else math_ops.where(dropped, -math.inf, x)
        # A size unknown while tracing may be 0 when the graph runs: -inf, the max of no terms, is shifted by 0.
        shift = math_ops.stop_gradient(max(kept, axis, keepdims=True, initial=-math.inf if None in sizes else None))
    shift = math_ops.where(
        math_ops.logical_and(shift > -float("inf"), shift < float("inf")), shift, math_ops.zeros_like(shift)
    )
    if dropped is not None:
        # A dropped term is 0 * exp(x - shift) = 0 with its weight's gradient exp(x - logsumexp), as long
        # as the exp is finite; a dropped x whose exp overflows (inf, NaN) is read as -inf (gradient 0).
        if x.dtype.kind != "c":  # complex x has no order; its dropped terms stay 0 * exp(x - shift)
            largest = math.log(np.finfo(x.dtype if x.dtype.kind == "f" else np.float64).max)
            overflows = math_ops.logical_not(math_ops.stop_gradient(x) - shift <= largest)
            x = math_ops.where(math_ops.logical_and(dropped, overflows), -math.inf, x)
    terms = math_ops.exp(x - shift)
    if b is not None:
        # a dropped term's x gets no gradient: where every term is dropped the sum is 0 whatever x (JAX's gradient
        # 0), and log's 1 / 0 times the zero weight gave NaN (tl.nn.logsumexp with a where keeping nothing in a row)
        terms = math_ops.where(dropped, math_ops.stop_gradient(terms) * b, terms * b)
    out = math_ops.log(sum(terms, axis, keepdims=True)) + shift
    if not keepdims:
        from .shape import squeeze

        out = squeeze(out, normalize_axes(axis, x.ndim)) if x.ndim else out
    return out


def _logsumexp_and_sign(x, axis, keepdims, b):
    """SciPy's ``logsumexp(..., return_sign=True)``: ``(log|s|, sign(s))`` for ``s = sum(b * exp(x))``
    (complex: the complex logarithm's real part and ``exp(i * its imaginary part)``)."""
    from .elementwise import imag, real
    from .shape import squeeze

    if x.dtype.kind == "c" or b is not None and as_tensor(b).dtype.kind == "c":
        log_sum = logsumexp(x, axis, keepdims, b)
        return real(log_sum), math_ops.exp(imag(log_sum) * 1j)
    weights = math_ops.ones_like(x) if b is None else as_tensor(b)
    # Shifted by log(sum |b| exp(x)), at least log|s|: no term overflows and the sum keeps its sign.
    shift = math_ops.stop_gradient(logsumexp(x, axis, True, b=math_ops.abs(weights)))
    shift = math_ops.where(
        math_ops.logical_and(shift > -float("inf"), shift < float("inf")), shift, math_ops.zeros_like(shift)
    )
    terms = math_ops.where(math_ops.equal(weights, 0), 0, weights * math_ops.exp(x - shift))  # b = 0: dropped
    total = sum(terms, axis, keepdims=True)
    out, sign = math_ops.log(math_ops.abs(total)) + shift, math_ops.sign(total)
    if not keepdims and x.ndim:
        axes = normalize_axes(axis, x.ndim)
        out, sign = squeeze(out, axes), squeeze(sign, axes)
    return out, sign

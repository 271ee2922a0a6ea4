"""NumPy's array functions: cumulative sums, products, maxima, minima and logcumsumexp, triangles
and diagonals, roll, flip, sort/argsort, take_along_axis, and the compositions built on them and on the shape ops
(diff, trace, repeat, swapaxes, moveaxis, rot90, the *stack family, append, array_split,
atleast_nd, kron, outer, inner, dot, vdot, cross, percentile/quantile/median, ravel).

An op that has a kernel of its own carries its gradient rules right below it; a composition is
used where it is exact and costs no more (``hstack`` is ``concat``, ``repeat`` is a ``take``).

>>> import tensorlib as tl
>>> x = tl.tensor([3.0, 1.0, 2.0], dtype="float64")
>>> tl.grad(lambda x: tl.sum(tl.sort(x) * tl.tensor([1.0, 2.0, 3.0], dtype="float64")))(x).numpy().tolist()
[3.0, 1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor, as_tensors, current_state
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import math as math_ops
from . import reduce as reduce_ops
from . import shape as shape_ops
from ._shapes import as_int, as_ints, broadcast_shapes, normalize_axes, normalize_axis
from .registry import defop, spec


def _accumulated_dtype(dtype):
    # NumPy's cumsum/cumprod of bools and integers narrower than int64 accumulate in int64.
    return _dt.int64 if dtype.kind in "biu" else dtype


def _accumulator(dtype):
    # float16 accumulates in float32 and is rounded once at the end (DESIGN §6; PyTorch does too):
    # summed in float16, 5000 values of 0.1 stop growing at 256.
    return _dt.float32 if dtype == _dt.float16 else _accumulated_dtype(dtype)


def _axis_checked(x, axis):
    return normalize_axis(axis, len(x.shape))


# ------------------------------------------------------------------ cumsum / cumprod
def _cumulative_infer(x, *, axis, reverse=False):
    _axis_checked(x, axis)
    return spec(x.shape, _accumulated_dtype(x.dtype))


def _cumulative_op(name, numpy_fn, standard_name, doc):
    """A running sum or product along ``axis`` (from the end with reverse=True), NumPy's kernel and the
    standard's: bools and narrow integers accumulate in int64, float16 in float32 (rounded once)."""
    op = defop(name, inputs=("x",), attrs={"axis": 0, "reverse": False}, infer=_cumulative_infer, doc=doc)

    @op.kernel("numpy")
    def numpy_kernel(x, *, axis, reverse):
        # np.cumsum/np.cumprod: np.cumsum measured about 20% faster than the generic kernel's cumulative_sum.
        dtype = _accumulator(x.dtype)
        if reverse:
            out = np.flip(numpy_fn(np.flip(x, axis), axis=axis, dtype=dtype), axis)
        else:
            out = numpy_fn(x, axis=axis, dtype=dtype)
        return out.astype(_dt.float16) if x.dtype == _dt.float16 else out

    @op.generic
    def generic_kernel(xp, x, *, axis, reverse):
        half = getattr(xp, "float16", None)
        dtype = xp.int64 if xp.isdtype(x.dtype, ("bool", "integral")) else xp.float32 if x.dtype == half else x.dtype
        if xp.isdtype(x.dtype, "bool"):  # the standard accumulates numbers only
            x = xp.astype(x, dtype)
        scan = getattr(xp, standard_name)
        if reverse:
            out = xp.flip(scan(xp.flip(x, axis=axis), axis=axis, dtype=dtype), axis=axis)
        else:
            out = scan(x, axis=axis, dtype=dtype)
        return xp.astype(out, half) if x.dtype == half else out

    return op


_cumsum = _cumulative_op(
    "Cumsum", np.cumsum, "cumulative_sum", "Running sum along an axis (from the end with reverse=True)."
)
register_gradient("Cumsum", lambda node, g: _cumsum_op(g, node.attrs["axis"], not node.attrs["reverse"]))


def _cumsum_op(x, axis, reverse=False):
    return apply(_cumsum, (x,), {"axis": axis, "reverse": reverse})


_cumprod = _cumulative_op(
    "Cumprod", np.cumprod, "cumulative_prod", "Running product along an axis (from the end with reverse=True)."
)


def _cumprod_op(x, axis, reverse=False):
    return apply(_cumprod, (x,), {"axis": axis, "reverse": reverse})


def _cumprod_grad(node, g):
    # d y_j / d x_k (j at or after k) is the running product to j with x_k left out.  Where x_k is not 0
    # that is y_j / x_k, so the gradient is a reversed running sum of g * y over x_k (PyTorch's rule).  At
    # the m-th zero along the axis it is the running product of x with that zero replaced by 1, an exact
    # function of every other entry; it holds m - 1 other zeros, so it and its derivatives below order m - 1
    # are 0 there.  The zeros up to ``exact`` are computed so (one running product each); later ones get a
    # constant 0, right to derivatives of order ``exact`` of cumprod.  A first-order pass needs the first
    # zero only; a pass that may be differentiated again (recorded or traced) the first _EXACT_ZEROS (it had
    # the first two only: third derivatives at three zeros were wrong).
    x, y = node.inputs[0], node.outputs[0]
    axis, reverse = node.attrs["axis"], node.attrs["reverse"]
    if x.shape[axis] == 1:  # y is x (g * y / x is NaN at an infinite x)
        return g
    zero = math_ops.equal(x, 0)
    ones = math_ops.ones_like(x)
    grad = _cumsum_op(g * y, axis, not reverse) / math_ops.where(zero, ones, x)
    if not x.is_symbolic and (x.size == 0 or not bool(reduce_ops.max(zero))):
        return grad
    zeros_so_far = _cumsum_op(zero, axis, reverse)  # int64: how many zeros up to and including each entry
    if x.is_symbolic:
        exact = _EXACT_ZEROS if x.shape[axis] is None else min(x.shape[axis], _EXACT_ZEROS)
    elif current_state().tapes:
        exact = min(int(reduce_ops.max(zeros_so_far)), _EXACT_ZEROS)
    else:
        exact = 1
    for k in range(1, exact + 1):
        at = math_ops.logical_and(zero, math_ops.equal(zeros_so_far, k))
        others = _cumprod_op(math_ops.where(at, ones, x), axis, reverse)
        terms = math_ops.where(math_ops.greater_equal(zeros_so_far, k), g * others, math_ops.zeros_like(g))
        grad = math_ops.where(at, reduce_ops.sum(terms, axis, keepdims=True), grad)
    return math_ops.where(
        math_ops.logical_and(zero, math_ops.greater(zeros_so_far, exact)), math_ops.zeros_like(grad), grad
    )


# Zeros along the axis that a Cumprod gradient to be differentiated again handles exactly: derivatives are right
# to order 4 at any zeros.  Each costs a running product over x, kept by the tape: every zero would be
# quadratic in the axis length (10^4 zeros, 10^4 saved copies of x).
_EXACT_ZEROS = 4


register_gradient("Cumprod", _cumprod_grad)


def _cumulative(scan, initial, name, x, axis, dtype, include_initial):
    """NumPy 2's ``cumulative_sum``/``cumulative_prod``: the axis may be left out of a 1-d input only,
    ``dtype`` is the accumulator, ``include_initial`` starts with the identity."""
    x = as_tensor(x)
    if axis is None and x.ndim > 1:
        raise ValueError(f"{name}: an input of more than one dimension needs an axis, got shape {x.shape} ({x.dtype})")
    # A 0-d x with axis 0 or -1 is the flattened one, as NumPy's (the kernel gave (1,) where the rule said ()).
    x, axis = _cumulative_flat_or(x, axis, name)
    ax = normalize_axis(as_int(axis, f"{name}: axis"), x.ndim, f"{name} (shape {x.shape}): axis")
    out = reduce_ops.accumulated_in(scan, x, dtype, ax)
    if include_initial:
        out = shape_ops.pad(out, tuple((1, 0) if i == ax else (0, 0) for i in range(x.ndim)), constant_values=initial)
    return out


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> Tensor:
    """``numpy.cumulative_sum`` (the Array API's): ``cumsum`` with ``include_initial`` to start with 0.

    >>> import tensorlib as tl
    >>> tl.cumulative_sum(tl.tensor([1, 2, 3]), include_initial=True).numpy().tolist()
    [0, 1, 3, 6]
    """
    return _cumulative(_cumsum_op, 0, "cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> Tensor:
    """``numpy.cumulative_prod`` (the Array API's): ``cumprod`` with ``include_initial`` to start with 1.

    >>> import tensorlib as tl
    >>> tl.cumulative_prod(tl.tensor([[1.0, 2.0, 3.0]]), axis=1, include_initial=True).numpy().tolist()
    [[1.0, 1.0, 2.0, 6.0]]
    """
    return _cumulative(_cumprod_op, 1, "cumulative_prod", x, axis, dtype, include_initial)


def _nan_as(x, value):
    x = as_tensor(x)
    if x.dtype.kind not in "fc":  # only floats hold NaN
        return x
    return math_ops.where(math_ops.not_equal(x, x), math_ops.full_like(x, value), x)


def nancumsum(x, axis: int | None = None, dtype=None) -> Tensor:
    """``numpy.nancumsum``: ``cumsum`` with NaNs counted as 0 (their gradient is 0).

    >>> import tensorlib as tl
    >>> tl.nancumsum(tl.tensor([1.0, float("nan"), 2.0])).numpy().tolist()
    [1.0, 1.0, 3.0]
    """
    return cumsum(_nan_as(x, 0), axis, dtype)


def nancumprod(x, axis: int | None = None, dtype=None) -> Tensor:
    """``numpy.nancumprod``: ``cumprod`` with NaNs counted as 1 (their gradient is 0).

    >>> import tensorlib as tl
    >>> tl.nancumprod(tl.tensor([2.0, float("nan"), 3.0])).numpy().tolist()
    [2.0, 2.0, 6.0]
    """
    return cumprod(_nan_as(x, 1), axis, dtype)


# ------------------------------------------------------------------ cummax / cummin
def _extremum_scan_infer(x, *, axis):
    _axis_checked(x, axis)
    return x


def _running(xp, pick, x, axis):
    """The running ``pick`` (maximum or minimum) along ``axis``: ceil(log2(n)) shifted comparisons, exact
    since each step picks an element (the standard has no accumulate)."""
    n, step = x.shape[axis], 1
    head = (slice(None),) * axis
    while step < n:
        x = xp.concat(
            [
                x[head + (slice(0, step), ...)],
                pick(x[head + (slice(step, None), ...)], x[head + (slice(0, n - step), ...)]),
            ],
            axis=axis,
        )
        step *= 2
    return x


def _held_index(xp, x, running, running_max, axis):
    # A position holds the running value when it equals it (a tie takes the later position, as PyTorch)
    # or is NaN (NaN propagates from there); the index at j is the last such position up to j.
    held = running == x
    if xp.isdtype(x.dtype, ("real floating", "complex floating")):
        held = held | xp.isnan(x)
    positions = xp.reshape(xp.arange(x.shape[axis], dtype=xp.int64), (-1,) + (1,) * (x.ndim - axis - 1))
    return running_max(xp.where(held, positions, xp.zeros((), dtype=xp.int64)))


def _extremum_scan(name, pick, ufunc, doc):
    op = defop(name, inputs=("x",), attrs={"axis": 0}, infer=_extremum_scan_infer, doc=doc)
    op.kernel("numpy")(lambda x, *, axis: ufunc.accumulate(x, axis=axis))
    op.generic(lambda xp, x, *, axis: _running(xp, pick(xp, x), x, axis % x.ndim))
    index = defop(
        f"{name}Index",
        inputs=("x",),
        attrs={"axis": 0},
        infer=lambda x, *, axis: spec(_extremum_scan_infer(x, axis=axis).shape, _dt.int64),
        differentiable=False,
        doc=f"The position each running value of {name} comes from (the last of ties; not differentiable).",
    )

    @index.kernel("numpy")
    def index_numpy(x, *, axis):
        axis %= x.ndim
        return _held_index(np, x, ufunc.accumulate(x, axis=axis), lambda a: np.maximum.accumulate(a, axis=axis), axis)

    @index.generic
    def index_generic(xp, x, *, axis):
        axis %= x.ndim
        running = _running(xp, pick(xp, x), x, axis)
        return _held_index(xp, x, running, lambda a: _running(xp, xp.maximum, a, axis), axis)

    def gradient(node, g):
        taken = apply(index, (node.inputs[0],), node.attrs)
        return apply(_take_along_grad, (g, taken, node.inputs[0]), node.attrs)

    register_gradient(name, gradient)
    return op


_cummax = _extremum_scan(
    "Cummax",
    lambda xp, x: xp.logical_or if xp.isdtype(x.dtype, "bool") else xp.maximum,  # the standard orders numbers only
    np.maximum,
    "Running maximum along an axis (NaN propagates).",
)
_cummin = _extremum_scan(
    "Cummin",
    lambda xp, x: xp.logical_and if xp.isdtype(x.dtype, "bool") else xp.minimum,
    np.minimum,
    "Running minimum along an axis (NaN propagates).",
)


def cummax(x, axis: int | None = None) -> Tensor:
    """Running maximum along ``axis`` (of the flattened array by default): ``numpy.maximum.accumulate``,
    ``torch.cummax(...).values``, ``jax.lax.cummax``.  A NaN propagates.  The gradient of each output goes
    to the position its value came from, the last of tied positions (PyTorch's index).

    >>> import tensorlib as tl
    >>> tl.cummax(tl.tensor([1.0, 3.0, 2.0, 5.0])).numpy().tolist()
    [1.0, 3.0, 3.0, 5.0]
    >>> tl.grad(lambda x: tl.sum(tl.cummax(x)))(tl.tensor([1.0, 3.0, 2.0, 3.0])).numpy().tolist()
    [1.0, 2.0, 0.0, 1.0]
    """
    x, axis = _cumulative_flat_or(x, axis, "cummax")
    return apply(_cummax, (x,), {"axis": axis})


def cummin(x, axis: int | None = None) -> Tensor:
    """Running minimum along ``axis`` (of the flattened array by default): ``numpy.minimum.accumulate``,
    ``torch.cummin(...).values``; NaN propagates, the gradient goes to the last of tied positions.

    >>> import tensorlib as tl
    >>> tl.cummin(tl.tensor([[3, 1, 2]]), axis=1).numpy().tolist()
    [[3, 1, 1]]
    """
    x, axis = _cumulative_flat_or(x, axis, "cummin")
    return apply(_cummin, (x,), {"axis": axis})


def _flat_or(x, axis, name):
    """(x, axis) with NumPy's axis=None meaning: the flattened array along 0."""
    x = as_tensor(x)
    if axis is None:
        return shape_ops.reshape(x, (-1,)), 0
    return x, as_int(axis, f"{name}: axis")


def _cumulative_flat_or(x, axis, name):
    """``_flat_or`` for cumsum/cumprod/repeat: NumPy also takes axis 0 or -1 of a 0-d input, as the flattened one."""
    x = as_tensor(x)
    if x.ndim == 0 and axis is not None:
        normalize_axis(axis, 0, f"{name} (shape ()): axis")
        axis = None
    return _flat_or(x, axis, name)


def cumsum(x, axis: int | None = None, dtype=None) -> Tensor:
    """Running sum along ``axis`` (of the flattened array by default), as ``numpy.cumsum``; ``dtype``
    is the accumulator's.

    >>> import tensorlib as tl
    >>> tl.cumsum(tl.tensor([[1, 2], [3, 4]]), axis=1).numpy().tolist()
    [[1, 3], [3, 7]]
    """
    x, axis = _cumulative_flat_or(x, axis, "cumsum")
    return reduce_ops.accumulated_in(_cumsum_op, x, dtype, axis)


def cumprod(x, axis: int | None = None, dtype=None) -> Tensor:
    """Running product along ``axis`` (of the flattened array by default), as ``numpy.cumprod``;
    ``dtype`` is the accumulator's.

    Multiplied in order, as NumPy does (float16 in float32, rounded once): so the running product
    overflows only where NumPy's does.  The gradient is exact at zeros, to second order.

    >>> import tensorlib as tl
    >>> tl.cumprod(tl.tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [1.0, 2.0, 6.0]
    >>> tl.grad(lambda x: tl.sum(tl.cumprod(x)))(tl.tensor([2.0, 0.0, 3.0])).numpy().tolist()
    [1.0, 8.0, 0.0]
    """
    x, axis = _cumulative_flat_or(x, axis, "cumprod")
    return reduce_ops.accumulated_in(_cumprod_op, x, dtype, axis)


# ------------------------------------------------------------------ logcumsumexp
def _scanned(xp, x, axis, reverse, scan):
    return xp.flip(scan(xp.flip(x, axis=axis)), axis=axis) if reverse else scan(x)


def _log_running(xp, x, axis):
    """log(cumsum(exp(x))) along ``axis``: ceil(log2(n)) shifted logaddexps (the standard has no accumulate)."""
    if xp is np:
        return np.logaddexp.accumulate(x, axis=axis)
    return _running(xp, xp.logaddexp, x, axis)


def _log_cumsum_exp_infer(x, *, axis, reverse):
    if x.dtype.kind != "f":
        raise TypeError(f"needs real floating-point numbers, got {x.dtype} (shape {x.shape})")
    _axis_checked(x, axis)
    return x


_logcumsumexp = defop(
    "LogCumsumExp",
    inputs=("x",),
    attrs={"axis": 0, "reverse": False},
    infer=_log_cumsum_exp_infer,
    doc="log(cumsum(exp(x))) along an axis, never overflowing (from the end with reverse=True).",
)


@_logcumsumexp.generic
def _logcumsumexp_kernel(xp, x, *, axis, reverse):
    axis %= x.ndim
    half = getattr(xp, "float16", None)
    wide = xp.astype(x, xp.float32) if x.dtype == half else x  # float16 accumulates in float32
    out = _scanned(xp, wide, axis, reverse, lambda v: _log_running(xp, v, axis))
    return xp.astype(out, half) if x.dtype == half else out


def _exp_weighted_infer(h, p, q, *, axis, reverse):
    return _log_cumsum_exp_infer(h, axis=axis, reverse=reverse)


# out_k = sum of h_m * exp(p_m + q_k) over m up to k (from k on with reverse=True), computed in logs so
# that neither exp(p) nor exp(q) overflows on its own: logcumsumexp's gradient (h the output gradient,
# p = -y, q = x), and, being linear in h with exponential weights, its own gradients are of the same form.
_exp_weighted_cumsum = defop(
    "ExpWeightedCumsum",
    inputs=("h", "p", "q"),
    attrs={"axis": 0, "reverse": False},
    infer=_exp_weighted_infer,
    promote=(0, 1, 2),
    doc="sum over m up to k of h_m * exp(p_m + q_k) along an axis, in logs (logcumsumexp's gradient).",
)


@_exp_weighted_cumsum.generic
def _exp_weighted_cumsum_kernel(xp, h, p, q, *, axis, reverse):
    # The positive and negative parts of h are scanned apart, in logs (TensorFlow's and PyTorch's rule);
    # a NaN goes with the positive part, so that it propagates.
    axis %= h.ndim
    half = getattr(xp, "float16", None)
    dtype = h.dtype
    if dtype == half:
        h, p, q = (xp.astype(a, xp.float32) for a in (h, p, q))
    low = xp.asarray(-xp.inf, dtype=h.dtype)
    magnitude = xp.log(xp.where(h == 0, xp.ones_like(h), xp.abs(h))) + p
    parts = []
    for side in (xp.logical_not(h <= 0), h < 0):
        logs = _scanned(xp, xp.where(side, magnitude, low), axis, reverse, lambda v: _log_running(xp, v, axis))
        parts.append(xp.exp(logs + q))
    out = parts[0] - parts[1]
    return xp.astype(out, half) if dtype == half else out


def _exp_weighted(h, p, q, axis, reverse):
    return apply(_exp_weighted_cumsum, (h, p, q), {"axis": axis, "reverse": reverse})


def _exp_weighted_transposed(node, u):
    """sum over k whose sum holds m of u_k * exp(q_k + p_m): the op with p and q swapped, scanned the other way."""
    h, p, q = node.inputs
    return _exp_weighted(u, q, p, node.attrs["axis"], not node.attrs["reverse"])


register_gradient(
    "ExpWeightedCumsum",
    h=_exp_weighted_transposed,
    p=lambda node, u: node.inputs[0] * _exp_weighted_transposed(node, u),
    q=lambda node, u: u * node.outputs[0],
)
# d y_j / d x_i = exp(x_i - y_j) for each y_j whose sum holds x_i.
register_gradient(
    "LogCumsumExp",
    lambda node, g: _exp_weighted(g, -node.outputs[0], node.inputs[0], node.attrs["axis"], not node.attrs["reverse"]),
)


def logcumsumexp(x, axis: int | None = None, reverse: bool = False) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``axis`` (of the flattened array by default), computed without
    overflow: ``torch.logcumsumexp``, ``jax.lax.cumlogsumexp``, ``numpy.logaddexp.accumulate``.
    ``reverse=True`` sums from the end.  Integers and bools give float64; float16 accumulates in float32.

    >>> import tensorlib as tl
    >>> tl.logcumsumexp(tl.tensor([1000.0, 1000.0, -float("inf")], dtype="float64")).numpy().round(4).tolist()
    [1000.0, 1000.6931, 1000.6931]
    >>> tl.grad(lambda x: tl.sum(tl.logcumsumexp(x)))(tl.tensor([0.0, 0.0])).numpy().tolist()
    [1.5, 0.5]
    """
    x, axis = _cumulative_flat_or(x, axis, "logcumsumexp")
    if x.dtype.kind in "biu":  # a float-valued function of integers (NumPy: float64)
        x = math_ops.cast(x, _dt.float64)
    return apply(_logcumsumexp, (x,), {"axis": axis, "reverse": bool(reverse)})


# ------------------------------------------------------------------ tril / triu
def _triangle_infer(x, *, k):
    if len(x.shape) < 2:
        raise ValueError(f"needs a tensor of rank >= 2 (the last two axes are the matrix), got shape {x.shape}")
    return x


_tril = defop(
    "MatrixBandPartLower",
    inputs=("x",),
    attrs={"k": 0},
    infer=_triangle_infer,
    doc="Lower triangle of the last two axes: zeros above the k-th diagonal.",
)
_tril.generic(lambda xp, x, *, k: xp.tril(x, k=k))
register_gradient("MatrixBandPartLower", lambda node, g: apply(_tril, (g,), node.attrs))
_triu = defop(
    "MatrixBandPartUpper",
    inputs=("x",),
    attrs={"k": 0},
    infer=_triangle_infer,
    doc="Upper triangle of the last two axes: zeros below the k-th diagonal.",
)
_triu.generic(lambda xp, x, *, k: xp.triu(x, k=k))
register_gradient("MatrixBandPartUpper", lambda node, g: apply(_triu, (g,), node.attrs))


def _matrix(x):
    # NumPy's tril/triu of a vector repeat it as the rows of a square matrix.
    x = as_tensor(x)
    if x.ndim == 1 and x.shape[0] is None:  # traced with an unknown size: the rows x (1, n) against a column (n, 1)
        return math_ops.where(shape_ops.expand_dims(math_ops.ones_like(x, _dt.bool_), 1), x, x)
    return shape_ops.broadcast_to(x, (x.shape[0], x.shape[0])) if x.ndim == 1 else x


def tril(x, k: int = 0) -> Tensor:
    """Zeros above the k-th diagonal of the last two axes (``numpy.tril``).

    >>> import tensorlib as tl
    >>> tl.tril(tl.ones((2, 2))).numpy().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return apply(_tril, (_matrix(x),), {"k": as_int(k, "tril: k")})


def triu(x, k: int = 0) -> Tensor:
    """Zeros below the k-th diagonal of the last two axes (``numpy.triu``).

    >>> import tensorlib as tl
    >>> tl.triu(tl.ones((2, 2))).numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return apply(_triu, (_matrix(x),), {"k": as_int(k, "triu: k")})


# ------------------------------------------------------------------ diagonal
def _diagonal_axes(shape, offset, axis1, axis2):
    a1, a2 = normalize_axis(axis1, len(shape), "axis1"), normalize_axis(axis2, len(shape), "axis2")
    if a1 == a2:
        raise ValueError(f"axis1 and axis2 cannot be the same (both {a1})")
    return a1, a2


def _diagonal_length(n1, n2, offset):
    if n1 is None or n2 is None:
        return None
    return max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))


def _diagonal_infer(x, *, offset, axis1, axis2):
    if len(x.shape) < 2:
        raise ValueError(f"diagonal needs a tensor of rank >= 2, got shape {x.shape}")
    a1, a2 = _diagonal_axes(x.shape, offset, axis1, axis2)
    rest = tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2))
    return spec(rest + (_diagonal_length(x.shape[a1], x.shape[a2], offset),), x.dtype)


_diagonal = defop(
    "MatrixDiagPart",
    inputs=("x",),
    attrs={"offset": 0, "axis1": 0, "axis2": 1},
    infer=_diagonal_infer,
    doc="A diagonal of two axes, as the last axis (numpy.diagonal).",
)
_diagonal.kernel("numpy")(lambda x, *, offset, axis1, axis2: np.diagonal(x, offset, axis1, axis2).copy())


@_diagonal.generic
def _diagonal_kernel(xp, x, *, offset, axis1, axis2):
    # A gather from the flattened (n1 * n2) matrices: no linalg extension needed (CuPy has none).
    moved = xp.moveaxis(x, (axis1, axis2), (-2, -1))
    n1, n2 = moved.shape[-2:]
    length = _diagonal_length(n1, n2, offset)
    rows = xp.arange(length) + max(-offset, 0)
    flat = xp.reshape(moved, (*moved.shape[:-2], n1 * n2))
    return xp.take(flat, rows * n2 + rows + offset, axis=-1)


register_gradient("MatrixDiagPart", lambda node, g: apply(_diagonal_scatter, (g, node.inputs[0]), node.attrs))


def _diagonal_scatter_infer(dy, like, *, offset, axis1, axis2):
    expected = _diagonal_infer(like, offset=offset, axis1=axis1, axis2=axis2).shape
    if len(dy.shape) != len(expected):
        raise ValueError(f"diagonal of shape {dy.shape} does not fit a tensor of shape {like.shape}")
    return spec(like.shape, dy.dtype)


_diagonal_scatter = defop(
    "MatrixSetDiag",
    inputs=("diagonal", "like"),
    attrs={"offset": 0, "axis1": 0, "axis2": 1},
    infer=_diagonal_scatter_infer,
    doc="Zeros shaped like `like` with `diagonal` written on a diagonal (MatrixDiagPart's gradient).",
)


@_diagonal_scatter.kernel("numpy")
def _diagonal_scatter_numpy(dy, like, *, offset, axis1, axis2):
    out = np.zeros(like.shape, dtype=dy.dtype)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a writable view of out
    i = np.arange(dy.shape[-1])
    view[..., i + max(-offset, 0), i + max(offset, 0)] = dy
    return out


@_diagonal_scatter.generic
def _diagonal_scatter_kernel(xp, dy, like, *, offset, axis1, axis2):
    # The standard writes through slices only: each row of the (n1, n2) matrices picks its diagonal
    # element (if any) from dy and a mask keeps it on the diagonal alone.
    n1, n2 = like.shape[axis1], like.shape[axis2]
    rows, cols = xp.arange(n1)[:, None], xp.arange(n2)[None, :]
    on_diagonal = (cols - rows) == offset
    zeros = xp.zeros((*dy.shape[:-1], n1, n2), dtype=dy.dtype)
    if dy.shape[-1]:
        position = xp.clip(xp.arange(n1) - max(-offset, 0), 0, dy.shape[-1] - 1)
        values = xp.take(dy, position, axis=-1)[..., :, None]
        zeros = xp.where(on_diagonal, values, zeros)
    return xp.moveaxis(zeros, (-2, -1), (axis1, axis2))


register_gradient("MatrixSetDiag", lambda node, g: apply(_diagonal, (g,), node.attrs), None)


def diagonal(x, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The ``offset`` diagonal of axes ``axis1`` and ``axis2``, as the last axis (``numpy.diagonal``).

    >>> import tensorlib as tl
    >>> tl.diagonal(tl.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [1.0, 4.0]
    """
    offset, axis1, axis2 = as_ints((offset, axis1, axis2), "diagonal: offset, axis1 and axis2")
    return apply(_diagonal, (x,), {"offset": offset, "axis1": axis1, "axis2": axis2})


def diag(v, k: int = 0) -> Tensor:
    """``numpy.diag``: the k-th diagonal of a matrix, or a square matrix with vector ``v`` on it.

    >>> import tensorlib as tl
    >>> tl.diag(tl.tensor([1.0, 2.0])).numpy().tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    v = as_tensor(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {v.shape} ({v.dtype})")
    k = as_int(k, "diag: k")
    from .creation import zeros

    if v.shape[0] is None:  # traced with an unknown size: a square of v's size, padded by |k|
        zero = math_ops.zeros_like(v)
        like = shape_ops.pad(math_ops.where(shape_ops.expand_dims(zero, 1) == 0, zero, zero), [(0, abs(k))] * 2)
        return apply(_diagonal_scatter, (v, like), {"offset": k, "axis1": 0, "axis2": 1})
    n = v.shape[0] + abs(k)
    like = shape_ops.broadcast_to(zeros((), dtype=v.dtype), (n, n))  # only its shape is read: no n * n constant
    return apply(_diagonal_scatter, (v, like), {"offset": k, "axis1": 0, "axis2": 1})


def trace(x, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tensor:
    """Sum of a diagonal (``numpy.trace``; ``dtype`` the accumulator's and the result's, as ``sum``'s).

    >>> import tensorlib as tl
    >>> float(tl.trace(tl.tensor([[1.0, 2.0], [3.0, 4.0]])))
    5.0
    >>> tl.trace(tl.tensor([[1.5, 2.0], [3.0, 4.25]]), dtype="int64").numpy().item()
    5
    """
    from .reduce import sum as reduce_sum

    return reduce_sum(diagonal(x, offset, axis1, axis2), axis=-1, dtype=dtype)


# ------------------------------------------------------------------ roll / flip
def _roll_infer(x, *, shift, axis):
    if axis is not None:
        normalize_axes(axis, len(x.shape))
        if len(shift) != len(axis):
            raise ValueError(f"shift {shift} and axis {axis} must have the same length")
    elif len(shift) != 1:
        raise ValueError(f"without axis, shift must be one int, got {shift}")
    return x


_roll = defop(
    "Roll",
    inputs=("x",),
    attrs={"shift": (0,), "axis": None},
    infer=_roll_infer,
    doc="Shift elements cyclically along axes (the flattened array without axis).",
)
_roll.generic(lambda xp, x, *, shift, axis: xp.roll(x, shift=shift if axis is not None else shift[0], axis=axis))
register_gradient(
    "Roll",
    lambda node, g: apply(_roll, (g,), {"shift": tuple(-k for k in node.attrs["shift"]), "axis": node.attrs["axis"]}),
)


def roll(x, shift, axis=None) -> Tensor:
    """Roll elements along ``axis`` (``numpy.roll``): ``shift`` and ``axis`` broadcast against each
    other (an int shift with several axes applies to each, several shifts along one axis add up, as
    does an axis named twice).

    >>> import tensorlib as tl
    >>> tl.roll(tl.tensor([1, 2, 3]), 1).numpy().tolist()
    [3, 1, 2]
    >>> tl.roll(tl.tensor([[1, 2, 3]]), (1, 1), axis=(1, -1)).numpy().tolist()
    [[2, 3, 1]]
    """
    shifts = as_ints(shift, "roll: shift")
    if axis is None:
        return apply(_roll, (x,), {"shift": (sum(shifts),), "axis": None})  # the flattened array, each shift in turn
    x = as_tensor(x)
    axes = as_ints(axis, "roll: axis")
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(f"roll: shift {shifts} and axis {axes} do not broadcast (input shape {x.shape}, {x.dtype})")
    n = max(len(shifts), len(axes))
    total = {}  # NumPy's rule: the shifts along each (normalized) axis add up
    for k, a in zip(shifts * n if len(shifts) == 1 else shifts, axes * n if len(axes) == 1 else axes):
        a = normalize_axis(a, x.ndim, f"roll (shape {x.shape}): axis")
        total[a] = total.get(a, 0) + k
    return apply(_roll, (x,), {"shift": tuple(total.values()), "axis": tuple(total)})


def _flip_infer(x, *, axis):
    normalize_axes(axis, len(x.shape))
    return x


_flip = defop("ReverseV2", inputs=("x",), attrs={"axis": ()}, infer=_flip_infer, doc="Reverse the order along axes.")
_flip.kernel("numpy")(lambda x, *, axis: np.flip(x, axis).copy())  # a copy: np.flip gives a view
_flip.generic(lambda xp, x, *, axis: xp.flip(x, axis=axis))
register_gradient("ReverseV2", lambda node, g: apply(_flip, (g,), node.attrs))


def flip(x, axis=None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes by default), as ``numpy.flip``.

    >>> import tensorlib as tl
    >>> tl.flip(tl.tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[4, 3], [2, 1]]
    """
    x = as_tensor(x)
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return apply(_flip, (x,), {"axis": axes})


def fliplr(x) -> Tensor:
    """Reverse the second axis (``numpy.fliplr``).

    >>> import tensorlib as tl
    >>> tl.fliplr(tl.tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[2, 1], [4, 3]]
    """
    return flip(x, 1)


def flipud(x) -> Tensor:
    """Reverse the first axis (``numpy.flipud``).

    >>> import tensorlib as tl
    >>> tl.flipud(tl.tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[3, 4], [1, 2]]
    """
    return flip(x, 0)


def rot90(x, k: int = 1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (``numpy.rot90``).

    >>> import tensorlib as tl
    >>> tl.rot90(tl.tensor([[1, 2], [3, 4]])).numpy().tolist()
    [[2, 4], [1, 3]]
    """
    x = as_tensor(x)
    if len(axes) == 2:
        a0, a1 = (normalize_axis(a, x.ndim, f"rot90 (shape {x.shape}): axis") for a in axes)
    if len(axes) != 2 or a0 == a1:
        raise ValueError(f"rot90: axes must be two different axes, got {axes} (shape {x.shape})")
    k = as_int(k, "rot90: k") % 4
    if k == 0:
        return math_ops.identity(x)
    if k == 2:
        return flip(x, (a0, a1))
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return shape_ops.transpose(flip(x, a1), perm)
    return flip(shape_ops.transpose(x, perm), a1)


# ------------------------------------------------------------------ axes
def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    """Exchange two axes (``numpy.swapaxes``).

    >>> import tensorlib as tl
    >>> tl.swapaxes(tl.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    x = as_tensor(x)
    perm = list(range(x.ndim))
    a1, a2 = (
        normalize_axis(a, x.ndim, f"swapaxes (shape {x.shape}): {n}") for a, n in ((axis1, "axis1"), (axis2, "axis2"))
    )
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return shape_ops.transpose(x, perm)


def moveaxis(x, source, destination) -> Tensor:
    """Move axes to new positions, the others keep their order (``numpy.moveaxis``).

    >>> import tensorlib as tl
    >>> tl.moveaxis(tl.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = as_tensor(x)
    src = [
        normalize_axis(a, x.ndim, f"moveaxis (shape {x.shape}): source")
        for a in ((source,) if np.ndim(source) == 0 else source)
    ]
    dst = [
        normalize_axis(a, x.ndim, f"moveaxis (shape {x.shape}): destination")
        for a in ((destination,) if np.ndim(destination) == 0 else destination)
    ]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(
            f"moveaxis: source {source} and destination {destination} must be distinct axes, "
            f"as many of each (shape {x.shape})"
        )
    order = [a for a in range(x.ndim) if a not in src]
    for d, a in sorted(zip(dst, src)):
        order.insert(d, a)
    return shape_ops.transpose(x, order)


def ravel(x, order: str = "C") -> Tensor:
    """The elements as a 1-d tensor (``numpy.ravel``; values are immutable, so never a view); ``order="F"``
    lists them with the first index fastest.  ``"A"`` and ``"K"`` are C's order for a Tensor, which has no memory
    layout; for a NumPy array NumPy's: F's where it is Fortran-contiguous (``"A"``), its memory order (``"K"``).

    >>> import tensorlib as tl
    >>> tl.tensor([[1, 2], [3, 4]]).ravel().numpy().tolist()
    [1, 2, 3, 4]
    >>> tl.ravel(tl.tensor([[1, 2], [3, 4]]), order="F").numpy().tolist()
    [1, 3, 2, 4]
    """
    if order == "K" and isinstance(x, np.ndarray):  # memory order: the axes by decreasing stride
        return shape_ops.reshape(shape_ops.transpose(x, np.argsort([-abs(s) for s in x.strides], kind="stable")), (-1,))
    if shape_ops.fortran_order(order, "ravel", ("C", "F", "A", "K"), x):
        x = shape_ops.transpose(x)
    return shape_ops.reshape(x, (-1,))


# ------------------------------------------------------------------ joining and splitting
def _several(arys):
    out = tuple(math_ops.unaliased(as_tensor(a)) for a in arys)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input with at least one axis; one tensor for one input, else a tuple (as NumPy).

    >>> import tensorlib as tl
    >>> tl.atleast_1d(tl.tensor(1.0)).shape
    (1,)
    """
    return _several(a if a.ndim >= 1 else shape_ops.reshape(a, (1,)) for a in map(as_tensor, arys))


def atleast_2d(*arys):
    """Each input with at least two axes: a vector becomes a row (as NumPy).

    >>> import tensorlib as tl
    >>> tl.atleast_2d(tl.tensor([1.0, 2.0])).shape
    (1, 2)
    """

    def lift(a):
        return a if a.ndim >= 2 else shape_ops.reshape(a, (1, -1) if a.ndim else (1, 1))

    return _several(lift(a) for a in map(as_tensor, arys))


def atleast_3d(*arys):
    """Each input with at least three axes: (n,) -> (1, n, 1), (m, n) -> (m, n, 1) (as NumPy).

    >>> import tensorlib as tl
    >>> [t.shape for t in tl.atleast_3d(tl.tensor([1.0, 2.0]), tl.ones((2, 3)))]
    [(1, 2, 1), (2, 3, 1)]
    """

    def lift(a):
        if a.ndim == 0:
            return shape_ops.reshape(a, (1, 1, 1))
        if a.ndim == 1:
            return shape_ops.reshape(a, (1, -1, 1))
        return shape_ops.expand_dims(a, -1) if a.ndim == 2 else a

    return _several(lift(a) for a in map(as_tensor, arys))


def _as_list(fn, tup):
    out = fn(*tup)
    return list(out) if isinstance(out, tuple) else [out]


def vstack(tup) -> Tensor:
    """Stack along the first axis after ``atleast_2d`` (``numpy.vstack``).

    >>> import tensorlib as tl
    >>> tl.vstack([tl.tensor([1, 2]), tl.tensor([3, 4])]).numpy().tolist()
    [[1, 2], [3, 4]]
    """
    return shape_ops.concat(_as_list(atleast_2d, as_tensors(*tup)), axis=0)


def hstack(tup) -> Tensor:
    """Concatenate along the second axis (the first for vectors), as ``numpy.hstack``.

    >>> import tensorlib as tl
    >>> tl.hstack([tl.tensor([1, 2]), tl.tensor([3])]).numpy().tolist()
    [1, 2, 3]
    """
    arrays = _as_list(atleast_1d, as_tensors(*tup))
    return shape_ops.concat(arrays, axis=0 if arrays[0].ndim == 1 else 1)


def dstack(tup) -> Tensor:
    """Stack along the third axis after ``atleast_3d`` (``numpy.dstack``).

    >>> import tensorlib as tl
    >>> tl.dstack([tl.ones((2, 3)), tl.zeros((2, 3))]).shape
    (2, 3, 2)
    """
    return shape_ops.concat(_as_list(atleast_3d, as_tensors(*tup)), axis=2)


def column_stack(tup) -> Tensor:
    """Vectors become columns, then concatenate along the second axis (``numpy.column_stack``).

    >>> import tensorlib as tl
    >>> tl.column_stack([tl.tensor([1, 2]), tl.tensor([3, 4])]).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    arrays = as_tensors(*tup)  # read together, as concat reads them: a list next to float64 is float64
    return shape_ops.concat([shape_ops.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays], axis=1)


def append(arr, values, axis: int | None = None) -> Tensor:
    """``values`` after ``arr`` along ``axis``; both flattened when axis is None (``numpy.append``).

    >>> import tensorlib as tl
    >>> tl.append(tl.tensor([[1, 2]]), tl.tensor([3])).numpy().tolist()
    [1, 2, 3]
    """
    arr, values = as_tensors(arr, values)
    if axis is None:
        return shape_ops.concat([ravel(arr), ravel(values)], axis=0)
    return shape_ops.concat([arr, values], axis=axis)


def array_split(x, indices_or_sections, axis: int = 0) -> tuple:
    """``numpy.array_split``: like ``split``, but n sections need not divide the axis evenly.

    >>> import tensorlib as tl
    >>> [t.shape for t in tl.array_split(tl.zeros(5), 3)]
    [(2,), (2,), (1,)]
    """
    x = as_tensor(x)
    if np.ndim(indices_or_sections):
        return shape_ops.split(x, indices_or_sections, axis)
    n = as_int(indices_or_sections, "array_split: sections")
    size = x.shape[normalize_axis(axis, x.ndim, f"array_split (shape {x.shape}): axis")]
    if n <= 0:
        raise ValueError(f"array_split: number of sections must be larger than 0, got {n} (shape {x.shape})")
    if size is None:
        raise ValueError(
            f"array_split: the sizes of {n} sections depend on the size of axis {axis}, unknown here "
            f"(shape {x.shape}, {x.dtype}); give it in the TensorSpec, or split at given points"
        )
    base, extra = divmod(size, n)
    points = np.cumsum([base + 1] * extra + [base] * (n - extra))[:-1]
    return shape_ops.split(x, points.tolist(), axis)


# ------------------------------------------------------------------ products
def outer(a, b) -> Tensor:
    """Outer product of the flattened inputs (``numpy.outer``).

    >>> import tensorlib as tl
    >>> tl.outer(tl.tensor([1, 2]), tl.tensor([1, 10])).numpy().tolist()
    [[1, 10], [2, 20]]
    """
    a, b = as_tensors(a, b)
    return shape_ops.expand_dims(ravel(a), 1) * shape_ops.expand_dims(ravel(b), 0)


def inner(a, b) -> Tensor:
    """Sum product over the last axes (``numpy.inner``); a scalar operand multiplies.

    >>> import tensorlib as tl
    >>> float(tl.inner(tl.tensor([1.0, 2.0]), tl.tensor([3.0, 4.0])))
    11.0
    """
    from .linalg import _tensordot

    a, b = as_tensors(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return _tensordot(a, b, ([-1], [-1]), "inner")


def dot(a, b) -> Tensor:
    """``numpy.dot``: the last axis of a against the second-to-last of b (the only one of a vector).

    >>> import tensorlib as tl
    >>> float(tl.dot(tl.tensor([1.0, 2.0]), tl.tensor([3.0, 4.0])))
    11.0
    """
    from .linalg import _tensordot

    a, b = as_tensors(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return _tensordot(a, b, ([-1], [0 if b.ndim == 1 else -2]), "dot")


def vdot(a, b) -> Tensor:
    """Dot product of the flattened inputs, the first conjugated (``numpy.vdot``).

    >>> import tensorlib as tl
    >>> float(tl.vdot(tl.tensor([[1.0, 2.0]]), tl.tensor([3.0, 4.0])))
    11.0
    """
    from .elementwise import conj
    from .linalg import einsum

    a, b = as_tensors(a, b)
    if None not in (a.size, b.size) and a.size != b.size:
        # Checked here: the product would broadcast a one-element input against the other.
        raise ValueError(
            f"vdot: inputs have {a.size} and {b.size} elements (a: shape {a.shape} {a.dtype}, b: shape {b.shape} {b.dtype})"
        )
    a = conj(a) if a.dtype.kind == "c" else a
    # An einsum, as numpy.vdot is a dot: bool inputs give bool (a sum of products would count them as int64).
    return einsum("i,i->", ravel(a), ravel(b))


def kron(a, b) -> Tensor:
    """Kronecker product (``numpy.kron``): blocks of b scaled by the elements of a.

    >>> import tensorlib as tl
    >>> tl.kron(tl.tensor([1, 2]), tl.tensor([1, 10])).numpy().tolist()
    [1, 10, 2, 20]
    """
    a, b = as_tensors(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # Each axis of a spread over pairs (d, 1), of b over (1, d): new axes, so unknown traced sizes work.
    spread_a = shape_ops.expand_dims(shape_ops.expand_dims(a, tuple(range(nd - a.ndim))), tuple(range(1, 2 * nd, 2)))
    spread_b = shape_ops.expand_dims(shape_ops.expand_dims(b, tuple(range(nd - b.ndim))), tuple(range(0, 2 * nd, 2)))
    sizes = [None if None in (x, y) else x * y for x, y in zip(sa, sb)]
    if sizes.count(None) > 1:
        raise ValueError(
            f"kron: more than one axis of the product has an unknown size under tl.function "
            f"(a: shape {a.shape} {a.dtype}, b: shape {b.shape} {b.dtype}); give the sizes in the TensorSpecs"
        )
    return shape_ops.reshape(spread_a * spread_b, tuple(-1 if d is None else d for d in sizes))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Tensor:
    """Cross product of 3-vectors (or 2-vectors, with a zero third component) along the given axes,
    broadcasting the others (``numpy.cross``); two 2-vectors give the scalar third component.

    >>> import tensorlib as tl
    >>> tl.cross(tl.tensor([1.0, 0.0, 0.0]), tl.tensor([0.0, 1.0, 0.0])).numpy().tolist()
    [0.0, 0.0, 1.0]
    >>> float(tl.cross(tl.tensor([1.0, 2.0]), tl.tensor([3.0, 4.0])))
    -2.0
    """
    a, b = as_tensors(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1) if a.ndim else a
    b = moveaxis(b, axisb, -1) if b.ndim else b
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(
            f"cross: both vector axes must have 2 or 3 elements (a size known under tl.function), got shapes "
            f"{a.shape} and {b.shape} ({a.dtype}, {b.dtype})"
        )
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    if a.shape[-1] == 2:  # the missing third components are zero
        b2 = b[..., 2]
        c = [a1 * b2, -(a0 * b2), z]
    elif b.shape[-1] == 2:
        a2 = a[..., 2]
        c = [-(a2 * b1), a2 * b0, z]
    else:
        a2, b2 = a[..., 2], b[..., 2]
        c = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z]
    return moveaxis(shape_ops.stack(c, axis=-1), -1, axisc)


# ------------------------------------------------------------------ sort, argsort, take_along_axis
def _sort_infer(x, *, axis, stable=True):
    if not x.shape:
        raise ValueError("cannot sort a 0-d tensor along an axis")
    normalize_axis(axis, len(x.shape))
    return x


_sort = defop(
    "Sort",
    inputs=("x",),
    attrs={"axis": -1},
    infer=_sort_infer,
    doc="Sorted along an axis; the gradient goes back through the (stable) permutation.",
)
_sort.generic(lambda xp, x, *, axis: xp.sort(x, axis=axis, stable=True))


def _sort_grad(node, g):
    # y = x[perm], so dx = g[inverse(perm)]: a gather, whose own gradient is a scatter.
    axis = node.attrs["axis"]
    perm = apply(_argsort, (node.inputs[0],), {"axis": axis, "stable": True})
    inverse = apply(_argsort, (perm,), {"axis": axis, "stable": True})
    return apply(_take_along, (g, inverse), {"axis": axis})


register_gradient("Sort", _sort_grad)

_argsort = defop(
    "ArgSort",
    inputs=("x",),
    attrs={"axis": -1, "stable": False},
    infer=lambda x, *, axis, stable: spec(_sort_infer(x, axis=axis).shape, _dt.int64),
    differentiable=False,
    doc="The permutation that sorts along an axis (not differentiable).",
)
_argsort.generic(
    lambda xp, x, *, axis, stable: xp.astype(xp.argsort(x, axis=axis, stable=stable), xp.int64, copy=False)
)


def _take_along_infer(x, indices, *, axis):
    shape_ops.check_integer_indices(indices)
    if len(x.shape) != len(indices.shape):
        raise ValueError(f"indices of shape {indices.shape} must have the rank of x {x.shape}")
    ax = normalize_axis(axis, len(x.shape), scalar_axis=False)  # (the kernel indexed axis 0 of a 0-d x)
    for i, (a, b) in enumerate(zip(x.shape, indices.shape)):
        if i != ax and a != b and None not in (a, b):
            raise ValueError(f"x {x.shape} and indices {indices.shape} differ outside axis {axis}")
    return spec(indices.shape, x.dtype)


_take_along = defop(
    "TakeAlongAxis",
    inputs=("x", "indices"),
    attrs={"axis": -1},
    infer=_take_along_infer,
    doc="Pick elements along an axis by per-position indices (numpy.take_along_axis).",
)


@_take_along.generic
def _take_along_kernel(xp, x, indices, *, axis):
    size = x.shape[axis]
    if indices.size == 0:  # no index to check (an empty axis may have none)
        return xp.take_along_axis(x, indices, axis=axis)
    lowest, highest = int(xp.min(indices)), int(xp.max(indices))
    if lowest < -size or highest >= size:
        raise IndexError(
            f"TakeAlongAxis: index {lowest if lowest < -size else highest} is out of bounds for axis {axis} with "
            f"size {size} (x shape {tuple(x.shape)} {x.dtype}, indices shape {tuple(indices.shape)} {indices.dtype})"
        )
    if lowest < 0:  # the standard leaves negative indices to the library
        indices = xp.where(indices < 0, indices + size, indices)
    return xp.take_along_axis(x, indices, axis=axis)


register_gradient(
    "TakeAlongAxis", lambda node, g: apply(_take_along_grad, (g, node.inputs[1], node.inputs[0]), node.attrs), None
)

_take_along_grad = defop(
    "TakeAlongAxisGrad",
    inputs=("dy", "indices", "like"),
    attrs={"axis": -1},
    infer=lambda dy, indices, like, *, axis: shape_ops.check_integer_indices(indices) or spec(like.shape, dy.dtype),
    doc="Scatter-add dy at the taken positions (repeated indices add up).",
)


@_take_along_grad.kernel("numpy")
def _take_along_grad_numpy(dy, indices, like, *, axis):
    out = np.zeros(like.shape, dtype=shape_ops.scatter_sum_dtype(np, dy.dtype))
    axis %= like.ndim
    wrapped = indices % like.shape[axis] if like.shape[axis] else indices
    lines = [(n, m) for d, (n, m) in enumerate(zip(indices.shape, like.shape)) if d != axis]
    if indices.ndim and indices.shape[axis] == 1 and indices.shape == dy.shape and all(n == m for n, m in lines):
        # one index per line (a pick, as a max pool's window argmax): no two land on one cell, so a put is exact,
        # 3x faster than np.add.at (measured: (9, 16, 32, 28, 28) float32, 18 vs 54 ms)
        np.put_along_axis(out, wrapped, dy, axis)
        return out.astype(dy.dtype, copy=False)
    grid = list(np.ogrid[tuple(slice(0, n) for n in indices.shape)]) if indices.ndim else []
    grid[axis] = wrapped
    np.add.at(out, tuple(grid), dy)
    return out.astype(dy.dtype, copy=False)


@_take_along_grad.generic
def _take_along_grad_kernel(xp, dy, indices, like, *, axis):
    # The standard has no scatter-add: out[.., j, ..] sums dy over the positions whose index is j,
    # a comparison against every j along the axis (memory: indices.size * like.shape[axis]).
    axis %= like.ndim
    n = like.shape[axis]
    indices = xp.where(indices < 0, indices + n, indices)
    targets = xp.reshape(xp.arange(n, dtype=indices.dtype), (n,) + (1,) * (indices.ndim - axis))
    hits = xp.expand_dims(indices, axis=axis) == targets  # [.., j, k, ..]: index k lands on j
    summing = shape_ops.scatter_sum_dtype(xp, dy.dtype)
    picked = xp.where(hits, xp.expand_dims(xp.astype(dy, summing), axis=axis), xp.zeros((), dtype=summing))
    return xp.astype(xp.sum(picked, axis=axis + 1), dy.dtype)


register_gradient("TakeAlongAxisGrad", lambda node, g: apply(_take_along, (g, node.inputs[1]), node.attrs), None, None)


def _check_kind(kind, name):
    # NumPy reads the kind by its first letter: quicksort, heapsort, mergesort or stable.
    if kind is not None and (not isinstance(kind, str) or kind[:1] not in ("q", "h", "m", "s")):
        raise ValueError(f"{name}: kind must be 'quicksort', 'heapsort', 'mergesort' or 'stable', got {kind!r}")


def sort(x, axis: int | None = -1, kind: str | None = None, stable: bool | None = None) -> Tensor:
    """Sorted along ``axis`` (the flattened array for None), as ``numpy.sort`` (NaNs last); the gradient
    follows the permutation, stable for ties whatever ``kind`` and ``stable`` ask (NumPy's arguments,
    accepted: a stable sort is a valid sort of every kind).

    >>> import tensorlib as tl
    >>> tl.sort(tl.tensor([[3.0, 1.0], [0.0, 2.0]]), axis=None).numpy().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    _check_kind(kind, "sort")
    x, axis = _flat_or(x, axis, "sort")
    return apply(_sort, (x,), {"axis": axis})


def argsort(x, axis: int | None = -1, kind: str | None = None, stable: bool | None = None) -> Tensor:
    """Indices that sort ``x`` along ``axis`` (``numpy.argsort``; ``stable=True`` or kind="stable"
    keeps ties in order); not differentiable.

    >>> import tensorlib as tl
    >>> tl.argsort(tl.tensor([3.0, 1.0, 2.0])).numpy().tolist()
    [1, 2, 0]
    """
    _check_kind(kind, "argsort")
    # NumPy sorts a 0-d input along axis 0 or -1 as its flattened one: np.argsort(np.array(3.0)) is array([0]).
    x, axis = _cumulative_flat_or(x, axis, "argsort")
    return apply(_argsort, (x,), {"axis": axis, "stable": bool(stable) or (kind or "")[:1] in ("s", "m")})


def take_along_axis(x, indices, axis: int | None) -> Tensor:
    """``numpy.take_along_axis``: ``indices`` picks elements of ``x`` position by position along ``axis``;
    outside ``axis`` the two broadcast against each other, as in NumPy.

    >>> import tensorlib as tl
    >>> x = tl.tensor([[3.0, 1.0], [0.0, 2.0]])
    >>> tl.take_along_axis(x, tl.argsort(x, axis=1), axis=1).numpy().tolist()
    [[1.0, 3.0], [0.0, 2.0]]
    >>> tl.take_along_axis(x, tl.tensor([[1]]), axis=1).numpy().tolist()
    [[1.0], [2.0]]
    """
    x, axis = _flat_or(x, axis, "take_along_axis")
    indices = as_tensor(shape_ops.integer_indices(indices))
    if x.ndim == indices.ndim and -x.ndim <= axis < x.ndim:  # else the op's shape rule says what is wrong
        ax = axis % x.ndim
        xs, js = list(x.shape), list(indices.shape)
        if xs[:ax] + xs[ax + 1 :] != js[:ax] + js[ax + 1 :] and None not in xs + js:
            try:
                common = broadcast_shapes(tuple(xs[:ax] + xs[ax + 1 :]), tuple(js[:ax] + js[ax + 1 :]))
            except ValueError:
                raise ValueError(
                    f"take_along_axis: x (shape {x.shape}, {x.dtype}) and indices (shape {indices.shape}, "
                    f"{indices.dtype}) do not broadcast outside axis {axis}"
                ) from None
            common = list(common)
            # The gradient of the broadcast sums back onto x's size-1 axes.
            x = shape_ops.broadcast_to(x, tuple(common[:ax] + [xs[ax]] + common[ax:]))
            indices = shape_ops.broadcast_to(indices, tuple(common[:ax] + [js[ax]] + common[ax:]))
        elif xs[:ax] + xs[ax + 1 :] != js[:ax] + js[ax + 1 :]:
            # Sizes unknown under tl.function: broadcast by adding zeros shaped as the other with one position
            # along the axis (the op itself takes equal shapes outside the axis; x's gradient sums back).  A sum
            # of zeros, not the first slice: that one is empty where the other's axis is.
            def one_along(t, dtype):
                zeros = reduce_ops.sum(math_ops.zeros_like(t, dtype=_dt.int64), axis=ax, keepdims=True)
                return math_ops.cast(zeros, dtype)

            x = x + one_along(indices, x.dtype)
            indices = indices + one_along(x, indices.dtype)
    return apply(_take_along, (x, indices), {"axis": axis})


# ------------------------------------------------------------------ quantiles
def _lerp(lo, hi, t):
    # NumPy's form (exact at both ends, monotonic): from the nearer end.
    diff = hi - lo
    return math_ops.where(t >= 0.5, hi - diff * (1.0 - t), lo + diff * t)


# NumPy 2's quantile methods.  The discontinuous ones pick one element (of a's dtype, as NumPy);
# the others interpolate between two with a weight (H&F's alpha and beta: NumPy's
# _compute_virtual_index), and their index rules are NumPy's, bounds included.
_DISCONTINUOUS = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_PLOTTING_POSITIONS = {
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}
QUANTILE_METHODS = _DISCONTINUOUS + ("averaged_inverted_cdf", "linear", "midpoint") + tuple(_PLOTTING_POSITIONS)


def _to_boundaries(index, previous_chosen):
    previous = np.floor(index)
    chosen = np.where(previous_chosen(index - previous, index), previous, previous + 1).astype(np.int64)
    return np.maximum(chosen, 0)


def _quantile_indexes(n, q, method):
    """NumPy's (previous, next, weight) positions in a sorted slice of ``n`` for the quantiles ``q``;
    weight None for the discontinuous methods (previous == next: one element is picked)."""
    if method == "inverted_cdf":
        index = _to_boundaries(n * q - 1, lambda gamma, _: gamma == 0)
    elif method == "closest_observation":
        index = _to_boundaries(n * q - 1.5, lambda gamma, i: (gamma == 0) & (np.floor(i) % 2 == 1))
    elif method in ("lower", "higher", "nearest"):
        index = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method]((n - 1) * q).astype(np.int64)
    if method in _DISCONTINUOUS:
        index = np.minimum(index, n - 1)
        return index, index, None
    if method == "averaged_inverted_cdf":
        virtual = n * q - 1
    else:
        alpha, beta = _PLOTTING_POSITIONS[method]
        virtual = n * q + (alpha + q * (1 - alpha - beta)) - 1
    previous = np.floor(virtual)
    previous = np.where(virtual >= n - 1, -1.0, np.where(virtual < 0, 0.0, previous))
    following = np.where(virtual >= n - 1, -1.0, np.where(virtual < 0, 0.0, previous + 1))
    gamma = virtual - previous
    if method == "averaged_inverted_cdf":
        gamma = np.where(gamma == 0, 0.5, 1.0)
    last = n - 1
    return (
        np.where(previous < 0, last, previous).astype(np.int64),
        np.where(following < 0, last, following).astype(np.int64),
        gamma,
    )


def quantile(a, q, axis=None, keepdims: bool = False, method: str = "linear", *, weights=None) -> Tensor:
    """``numpy.quantile`` with any of NumPy 2's ``method`` values (default ``'linear'``); the gradient
    flows to the (one or two) selected elements of each slice, through the sort, with the method's
    interpolation weights.  The discontinuous methods (``'lower'``, ``'higher'``, ``'nearest'``,
    ``'inverted_cdf'``, ``'closest_observation'``) pick an element and keep ``a``'s dtype, as NumPy.
    ``q`` is a constant.  ``weights`` (NumPy 2's; non-negative, of ``a``'s shape or 1-d along one ``axis``)
    weigh the elements of the empirical distribution, with ``method='inverted_cdf'`` only, as NumPy.

    >>> import tensorlib as tl
    >>> float(tl.quantile(tl.tensor([4.0, 1.0, 3.0, 2.0]), 0.5))
    2.5
    >>> tl.quantile(tl.tensor([4, 1, 3, 2]), [0.3, 0.6], method="inverted_cdf").numpy().tolist()
    [2, 3]
    >>> float(tl.quantile(tl.tensor([1.0, 2.0, 3.0]), 0.5, method="inverted_cdf", weights=tl.tensor([3, 1, 1])))
    1.0
    """
    return _quantile(a, q, axis, keepdims, method, "quantile", weights)


def _checked_quantile_weights(a, weights, axes, method, name):
    """NumPy's ``weights`` of a quantile: ``a``'s shape, or 1-d along the one reduced axis (then broadcast),
    non-negative (checked where the values are known), for ``method='inverted_cdf'`` only."""
    if method != "inverted_cdf":
        raise ValueError(f"{name}: only method 'inverted_cdf' supports weights, got method={method!r}")
    weights = as_tensor(weights)
    where = f"(a shape {a.shape} {a.dtype}, weights shape {weights.shape} {weights.dtype})"
    if weights.dtype.kind not in "biuf":
        raise TypeError(f"{name}: weights must be real numbers {where}")
    if weights.shape != a.shape:
        if len(axes) != 1 or a.ndim == 0:
            raise TypeError(f"{name}: weights of another shape than a need one axis {where}")
        if weights.ndim != 1 or weights.shape[0] != a.shape[axes[0]]:
            raise ValueError(f"{name}: weights must be of a's shape or 1-d of the length of axis {axes[0]} {where}")
        shape = [1] * a.ndim
        shape[axes[0]] = -1
        weights = shape_ops.broadcast_to(shape_ops.reshape(weights, tuple(shape)), a.shape)
    if not weights.is_symbolic and bool(np.any(weights.numpy() < 0)):
        raise ValueError(f"{name}: weights must be non-negative {where}")
    return weights


def _weighted_inverted_cdf(flat, weights, q, name):
    """NumPy's weighted ``inverted_cdf``: in each slice (the last axis, sorted) the first element whose
    cumulated weight reaches ``q`` of the slice's total; leading zero weights are skipped, as NumPy."""
    order = argsort(flat, axis=-1, stable=True)
    ordered = take_along_axis(flat, order, -1)
    cdf = cumsum(math_ops.cast(take_along_axis(weights, order, -1), _dt.float64), axis=-1)
    cdf = cdf / cdf[..., -1:]
    if not cdf.is_symbolic and bool(np.isnan(cdf.numpy()[..., -1]).any()):
        raise ValueError(f"{name}: weights included NaN, inf or were all zero (weights shape {weights.shape})")
    cdf = math_ops.cast(cdf, q.dtype) if q.dtype.kind == "f" else cdf  # NumPy compares in q's dtype
    reached = math_ops.logical_and(math_ops.not_equal(cdf, 0), cdf >= q.reshape(q.shape + (1,) * cdf.ndim))
    index = math_ops.cast(reduce_ops.sum(math_ops.logical_not(reached), axis=-1, keepdims=True), _dt.int64)
    n = flat.shape[-1] if flat.shape[-1] is not None else shape_ops.shape_size(flat, (flat.ndim - 1,))
    index = math_ops.minimum(index, n - 1)  # shape q + kept + (1,)
    index = moveaxis(index[..., 0], tuple(range(q.ndim)), tuple(range(-q.ndim, 0)))
    picked = take_along_axis(ordered, shape_ops.reshape(index, index.shape[: flat.ndim - 1] + (-1,)), -1)
    return shape_ops.reshape(picked, index.shape), ordered


def _quantile(a, q, axis, keepdims, method, name, weights=None):
    """``quantile``, whose errors name the public function ``name`` (quantile, percentile or median)."""
    if method not in QUANTILE_METHODS:
        raise ValueError(f"{name}: method must be one of NumPy's {', '.join(QUANTILE_METHODS)}; got {method!r}")
    midpoint = method == "midpoint"
    a = as_tensor(a)
    refuse_complex(a, name)
    if isinstance(q, Tensor):
        q = q.numpy()
    dtype = a.dtype if a.dtype.kind in "fc" else _dt.float64
    if not isinstance(q, (int, float)) and np.asarray(q).dtype.kind == "f":
        dtype = _dt.promote_types(dtype, np.asarray(q).dtype)  # NumPy: an array of q is not weak
    if method in _DISCONTINUOUS:  # an element of a, in a's dtype
        dtype = a.dtype
    elif dtype == _dt.float16:  # interpolated in float32, rounded once: the median of [6e4, 6e4] was inf
        return reduce_ops.in_float32(_quantile, a, q, axis, keepdims, method, name)
    q = np.asarray(q, dtype=np.float64)
    if q.size and (q.min() < 0 or q.max() > 1) or np.isnan(q).any():
        given = (q * 100).tolist() if name == "percentile" else q.tolist()
        raise ValueError(f"{name}: q must be in [0, 1] (percentiles in [0, 100]), got {given}")
    a = math_ops.cast(a, dtype) if a.dtype != dtype else a
    ndim = a.ndim
    try:
        axes = normalize_axes(axis, ndim, scalar_axis=False)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e} (shape {a.shape})") from None
    if 0 in (a.shape[i] for i in axes):  # checked before the reshape, whose -1 cannot size an empty slice
        raise ValueError(f"{name}: cannot take a quantile of an empty slice (shape {a.shape}, axis {axis})")
    flat = _slices_last(a, axes, name)
    if weights is not None:
        weights = _slices_last(_checked_quantile_weights(a, weights, axes, method, name), axes, name)
        out, ordered = _weighted_inverted_cdf(flat, weights, q, name)
        return _quantile_result(out, ordered, q, axes, a.ndim, keepdims, _nan_position(dtype, np.full(q.shape, -1)))
    n = flat.shape[-1]
    if n is None:
        # Under tl.function with an unknown slice length, the positions are computed in the graph from
        # the length: the same NumPy calls below then dispatch to tensorlib ops (tensorlib.numpy_protocol).
        n = shape_ops.shape_size(flat, (flat.ndim - 1,))
    ordered = sort(nan_after_unknown_slices(flat) if name == "median" else flat, axis=-1)
    if method in ("linear", "midpoint"):
        position = q * (n - 1)
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, n - 1)
        t = (position - below).astype(dtype)
    else:
        below, above, t = _quantile_indexes(n, q, method)
    lo = shape_ops.take(ordered, below, axis=-1)  # shape: kept dims + q.shape
    if t is None:
        out = lo
    else:
        hi = shape_ops.take(ordered, above, axis=-1)
        if midpoint:  # the middle of the two neighbours; exactly the element at a whole position
            out = math_ops.where(position == below, lo, (lo + hi) * 0.5)
        else:
            out = _lerp(lo, hi, t if isinstance(t, Tensor) else np.asarray(t, dtype=dtype))
    last = np.full(q.shape, n - 1) if isinstance(n, int) else below * 0 + (n - 1)
    return _quantile_result(out, ordered, q, axes, a.ndim, keepdims, _nan_position(dtype, last))


def _nan_position(dtype, last):
    """Where the sort put a slice's NaN (``last``), for a dtype that holds NaNs; else None."""
    return last if dtype.kind in "fc" else None


def _quantile_result(out, ordered, q, axes, ndim, keepdims, last=None):
    """The quantiles ``out`` (kept axes + q's) of the sorted slices ``ordered``: NaN for a slice holding a
    NaN (the sort put it at position ``last``; None: no NaN check), q's axes first and ``keepdims`` as NumPy's."""
    if last is not None:  # a slice holding a NaN has a NaN quantile (NumPy); the sort put it last
        last = shape_ops.take(ordered, last, axis=-1)
        out = math_ops.where(math_ops.not_equal(last, last), last, out)
    if q.ndim:  # NumPy puts q's axes first
        k = out.ndim - q.ndim
        out = shape_ops.transpose(out, tuple(range(k, out.ndim)) + tuple(range(k)))
    if keepdims:
        out = shape_ops.expand_dims(out, tuple(q.ndim + i for i in axes)) if ndim else out
    return out


def refuse_complex(a, name):
    """NumPy's quantiles and percentiles refuse complex numbers (``TypeError: a must be an array of real
    numbers``); only its medians order them, real part first, as ``sort``."""
    if a.dtype.kind == "c" and name not in ("median", "nanmedian"):
        raise TypeError(f"{name}: a must be real, got {a.dtype} (shape {a.shape}); only median orders complex numbers")


def _slices_last(a, axes, name):
    """``a`` with its kept axes first and the reduced ``axes`` flattened into one last axis (the slices)."""
    if a.ndim == 0:
        return shape_ops.reshape(a, (1,))
    kept = [i for i in range(a.ndim) if i not in axes]
    perm = kept + list(axes)
    moved = shape_ops.transpose(a, perm) if perm != list(range(a.ndim)) else a
    if len(axes) == 1:
        return moved
    reduced = [a.shape[i] for i in axes]
    # The sizes spelled out where known (a -1 cannot size a slice when a kept axis is empty).
    sizes = [a.shape[i] for i in kept] + [None if None in reduced else int(np.prod(reduced, dtype=np.int64))]
    if sizes.count(None) > 1:
        raise ValueError(
            f"{name}: reducing several axes needs all but one size known under tl.function "
            f"(shape {a.shape}, {a.dtype}, axes {axes})"
        )
    return shape_ops.reshape(moved, tuple(-1 if d is None else d for d in sizes))


def percentile(a, q, axis=None, keepdims: bool = False, method: str = "linear", *, weights=None) -> Tensor:
    """``numpy.percentile``: ``quantile`` with q in percent (``weights`` as ``quantile``'s).

    >>> import tensorlib as tl
    >>> tl.percentile(tl.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), [25, 50]).numpy().tolist()
    [2.0, 3.0]
    """
    if isinstance(q, Tensor):
        q = q.numpy()
    q = q / 100.0 if isinstance(q, (int, float)) else np.true_divide(q, 100)
    return _quantile(a, q, axis, keepdims, method, "percentile", weights)


def median(a, axis=None, keepdims: bool = False) -> Tensor:
    """``numpy.median``: the middle element, or the mean of the two middle ones; NaN for an empty slice
    (NumPy's value, without its RuntimeWarning).  Complex numbers are ordered as ``sort`` orders them
    (real part first), as NumPy does.

    >>> import tensorlib as tl
    >>> float(tl.median(tl.tensor([3.0, 1.0, 2.0, 10.0])))
    2.5
    """
    # The mean of the two middle elements, as numpy.median (so [1, inf] gives inf, where the linear
    # quantile's interpolation gives inf - inf = nan).
    empty = _empty_slice_nans(a, axis, keepdims, "median")
    return empty if empty is not None else _quantile(a, 0.5, axis, keepdims, "midpoint", "median")


def nan_after_unknown_slices(flat):
    """``flat`` with a NaN after each slice along its last axis when that axis's length is unknown (traced): a
    slice that is empty when the graph runs reads that NaN, NumPy's median of no elements (indexing the empty
    slice raised); sorted, the NaN goes last, so the elements of a non-empty slice keep their positions."""
    if flat.shape[-1] is not None:
        return flat
    nan = complex(np.nan, np.nan) if flat.dtype.kind == "c" else np.nan
    return shape_ops.pad(flat, [(0, 0)] * (flat.ndim - 1) + [(0, 1)], constant_values=nan)


def _empty_slice_nans(a, axis, keepdims, name):
    """NumPy's median of empty slices: NaN (float64 for integers), of the reduced shape; else None."""
    a = as_tensor(a)
    reduce_ops._check_axis(a, axis, name, scalar_axis=False)  # NumPy's median has no axis 0 of a 0-d array
    if 0 not in (a.shape[i] for i in normalize_axes(axis, a.ndim) if i < a.ndim):
        return None
    if a.dtype.kind not in "fc":
        a = math_ops.cast(a, _dt.float64)
    nan = complex(np.nan, np.nan) if a.dtype.kind == "c" else np.nan
    return math_ops.full_like(reduce_ops.sum(a, axis, keepdims), nan)


# ------------------------------------------------------------------ diff, repeat
def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None) -> Tensor:
    """n-th forward difference along ``axis`` (``numpy.diff``), with optional prepend/append values.

    >>> import tensorlib as tl
    >>> tl.diff(tl.tensor([1.0, 4.0, 9.0])).numpy().tolist()
    [3.0, 5.0]
    """
    a, prepend, append = as_tensors(a, prepend, append)
    if a.ndim == 0:
        raise ValueError("diff: needs a tensor of rank >= 1, got a 0-d tensor")
    n = as_int(n, "diff: order n")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    ax = normalize_axis(axis, a.ndim, f"diff (shape {a.shape}): axis")
    if n == 0:  # NumPy ignores prepend and append then
        return math_ops.unaliased(a)
    edge_shape = tuple(1 if i == ax else d for i, d in enumerate(a.shape))
    parts = []
    for name, extra in (("prepend", prepend), ("a", a), ("append", append)):
        if extra is None:
            continue
        if extra.ndim == 0 and None in edge_shape:  # traced with unknown sizes: a's first slice gives the shape
            extra = shape_ops.broadcast_like(extra, a[(slice(None),) * ax + (slice(0, 1),)])
        elif extra.ndim == 0:
            extra = shape_ops.broadcast_to(extra, edge_shape)
        elif extra.ndim != a.ndim or any(
            i != ax and None not in (d, e) and d != e for i, (d, e) in enumerate(zip(extra.shape, a.shape))
        ):  # NumPy's message named only concatenate's array indices
            raise ValueError(
                f"diff: {name} must be a scalar or match a outside axis {ax}, got shape {extra.shape} "
                f"({extra.dtype}) for a of shape {a.shape} ({a.dtype})"
            )
        parts.append(extra)
    if len(parts) > 1:
        a = shape_ops.concat(parts, axis=ax)
    head = (slice(None),) * ax
    # NumPy's rule: bools differ or not (they have no subtraction).
    step = math_ops.not_equal if a.dtype == _dt.bool_ else math_ops.subtract
    for _ in range(n):
        a = step(a[head + (slice(1, None),)], a[head + (slice(None, -1),)])
    return a


def repeat(a, repeats, axis: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (``numpy.repeat``): a gather, whose
    gradient sums the copies.

    >>> import tensorlib as tl
    >>> tl.repeat(tl.tensor([1, 2]), [1, 2]).numpy().tolist()
    [1, 2, 2]
    """
    a, ax = _cumulative_flat_or(a, axis, "repeat")
    ax = normalize_axis(ax, a.ndim, f"repeat (shape {a.shape}): axis")
    size = a.shape[ax]
    counts = np.asarray(shape_ops.integer_indices(repeats))  # [] too: no repeats for an empty axis
    if size is None and counts.dtype.kind in "iu" and counts.size == 1 and counts.ndim <= 1 and counts.min() >= 0:
        return _repeat_each(a, ax, int(counts.reshape(())))
    if size is None and counts.ndim == 1 and counts.size != 1:
        # One count per element is checked against the axis' length, which a graph of unknown sizes has not.
        raise ValueError(
            f"repeat: {counts.size} counts, one per element, need the length of axis {ax} to be known "
            f"(shape {a.shape}; give the TensorSpec that size, or one count for every element)"
        )
    if (
        counts.dtype.kind not in "iu"
        or (counts < 0).any()
        or counts.ndim > 1
        or (counts.ndim == 1 and counts.size not in (1, size))
    ):
        raise ValueError(
            f"repeat: repeats must be non-negative integers, one or one per element "
            f"({size}) along axis {ax}, got {counts.tolist()} (shape {a.shape})"
        )
    return shape_ops.take(a, np.repeat(np.arange(size), counts), axis=ax)


def _repeat_each(a, ax, count):
    """``repeat`` of every element ``count`` times along ``ax`` of unknown size (traced): a new axis after
    ``ax`` tiled ``count`` times, merged into it."""
    tiled = shape_ops.tile(shape_ops.expand_dims(a, ax + 1), (1,) * (ax + 1) + (count,) + (1,) * (a.ndim - ax - 1))
    others = a.shape[:ax] + a.shape[ax + 1 :]
    if None in others:
        raise ValueError(
            f"repeat: axis {ax} and another axis have unknown sizes under tl.function (shape {a.shape}, "
            f"{a.dtype}); give the other sizes in the TensorSpec"
        )
    return shape_ops.reshape(tiled, others[:ax] + (-1,) + others[ax:])


def _matrix_transpose(x) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"mT: the matrix transpose needs at least 2 dimensions, got shape {x.shape} ({x.dtype})")
    return swapaxes(x, -1, -2)


def _install_methods():
    Tensor.mT = property(_matrix_transpose, doc="The last two axes swapped (``ndarray.mT``).")


_install_methods()

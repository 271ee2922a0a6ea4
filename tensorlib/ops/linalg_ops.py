"""Matrix functions and decompositions (``tl.linalg``), batched over leading axes.

Kernels call ``numpy.linalg`` (batched natively).  Gradient rules are written
with tensorlib ops (matmul, the triangular solve below, masks), so they are
recorded, traced and differentiated again.  Rules use the plain transpose
``_mT`` rather than the conjugate transpose: with JAX's convention for complex
gradients (see ``docs/complex.md``) the rule of a holomorphic function
(inv, solve, det) is the same formula as for real inputs.

Decompositions of symmetric matrices (``cholesky``, ``eigh``) read the
symmetric part ``(a + a^T) / 2`` of their input, as JAX does, so their
gradient is defined for any perturbation and is itself symmetric.
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import NamedTuple

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor, as_tensors
from ..grad.registry import register_gradient
from ..tensor import Tensor
from ._shapes import broadcast_shapes
from .registry import defop, spec


# ------------------------------------------------------------------ NumPy 2's named results (also JAX's, PyTorch's)
class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


# ------------------------------------------------------------------ shape rules shared by the ops
def _linalg_dtype(dtype):
    """NumPy's rule: integer and bool matrices give float64; LAPACK has no float16."""
    if dtype.kind in "biu":
        return _dt.float64
    if dtype == _dt.float16:
        raise TypeError("float16 is not supported by LAPACK; cast to float32")
    return dtype


def _check_matrix(x, square=True):
    if len(x.shape) < 2:
        raise ValueError(f"expected a matrix (rank >= 2), got rank {len(x.shape)}")
    n, m = x.shape[-2:]
    if square and n is not None and m is not None and n != m:
        raise ValueError(f"expected square matrices in the last two axes, got {n}x{m}")
    return _linalg_dtype(x.dtype)


def _square_infer(x):
    return spec(x.shape, _check_matrix(x))


def _lapack(op_name):
    """Name the op and the input in NumPy's LinAlgError (a singular or non-definite matrix)."""

    def wrap(kernel):
        @functools.wraps(kernel)
        def run(*arrays, **attrs):
            try:
                return kernel(*arrays, **attrs)
            except np.linalg.LinAlgError as e:
                shapes = ", ".join(f"shape {a.shape} {a.dtype}" for a in arrays)
                raise np.linalg.LinAlgError(f"{op_name}: {e} (inputs {shapes})") from None

        return run

    return wrap


def _nan_if_not_finite(*cores):
    """Wrap a generic kernel ``fn(xp, x, *rest)``: a matrix of x holding a NaN or an inf gives NaN in every
    output (``cores``: each output's number of trailing non-batch axes, else its rank less x's batch rank).
    LAPACK answers such a matrix with finite garbage (numpy.linalg.det([[nan, 1], [1, 1]]) is 0.0, eigvalsh
    gives [-1.41, 1.41]) or an SVD that does not converge; NaN is what det([[nan]]) and JAX give."""

    def wrap(kernel):
        @functools.wraps(kernel)
        def run(xp, x, *rest, **attrs):
            finite = xp.isfinite(x)
            # The method where the array has it: 1 us on a 3 x 3; xp.all costs 3, a per-matrix reduction 6.
            if bool(finite.all() if hasattr(finite, "all") else xp.all(finite)):
                return kernel(xp, x, *rest, **attrs)
            bad = ~xp.all(xp.isfinite(x), axis=(-2, -1))
            fill = xp.eye(x.shape[-2], x.shape[-1], dtype=x.dtype)  # a matrix every kernel takes
            out = kernel(xp, xp.where(bad[..., None, None], fill, x), *rest, **attrs)
            outs = out if isinstance(out, tuple) else (out,)
            marked = []
            for k, o in enumerate(outs):
                core = cores[k] if cores else o.ndim - bad.ndim
                mask = xp.reshape(bad, bad.shape + (1,) * core)
                floating = xp.isdtype(o.dtype, ("real floating", "complex floating"))
                marked.append(xp.where(mask, xp.asarray(float("nan"), dtype=o.dtype), o) if floating else o)
            return tuple(marked) if isinstance(out, tuple) else marked[0]

        return run

    return wrap


# ------------------------------------------------------------------ helpers written in tensorlib ops
def _mT(x):
    from .shape import transpose

    n = len(x.shape)
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _constant(array, like):
    from .creation import tensor

    return tensor(np.asarray(array, dtype=like.dtype), backend=like.backend)


def _eye_like(x):
    """The identity of x's matrix shape; under tl.function with an unknown size, the band of ones_like(x)."""
    if x.shape[-1] is None or x.shape[-2] is None:
        from .math import ones_like

        return _keep_diagonal(ones_like(x))
    return _constant(np.eye(x.shape[-1]), x)


def _keep_diagonal(x):
    """x's diagonal, zeros elsewhere (tril then triu): no mask constant, so sizes may be unknown."""
    from .array import _tril, _triu

    return apply(_triu, (apply(_tril, (x,), {"k": 0}),), {"k": 0})


def _diag_embed(v):
    """(..., n) -> (..., n, n) with ``v`` on the diagonal."""
    from .shape import expand_dims

    if v.shape[-1] is None:
        from .math import ones_like

        return _keep_diagonal(expand_dims(v, -1) * ones_like(expand_dims(v, -2)))
    return expand_dims(v, -1) * _constant(np.eye(v.shape[-1]), v)


def _diag_part(x):
    from .reduce import sum as reduce_sum

    return reduce_sum(x * _eye_like(x), axis=-1)


def _triangle(x, lower, k=0):
    """The lower (upper) triangle of ``x`` from diagonal ``k`` (-k), the rest zero."""
    n, m = x.shape[-2:]
    if n is None or m is None:
        from .array import _tril, _triu

        return apply(_tril, (x,), {"k": k}) if lower else apply(_triu, (x,), {"k": -k})
    mask = np.tril(np.ones((n, m)), k) if lower else np.triu(np.ones((n, m)), -k)
    return x * _constant(mask, x)


def _symmetrize(x):
    return (x + _mT(x)) * 0.5


def _hermitian_part(x, name):
    """(x + x^H) / 2: what ``hermitian=True`` reads (JAX's choice; NumPy reads one triangle of a Hermitian x)."""
    from .elementwise import conj

    x = _as_float(as_tensor(x))
    if x.ndim < 2 or None not in x.shape[-2:] and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: hermitian=True needs square matrices, got shape {tuple(x.shape)} {x.dtype}")
    return (x + conj(_mT(x))) * 0.5 if x.dtype.kind == "c" else _symmetrize(x)


def _as_float(x):
    """Integers and bools as float64 (NumPy's rule for linalg; a sum of bools would be their logical or)."""
    from .math import cast

    return cast(x, dtype=_dt.float64) if x.dtype.kind in "biu" else x


def _hermitian_from_triangle(x, uplo, name):
    """NumPy's and PyTorch's ``UPLO``: the Hermitian matrix of x's lower ('L') or upper ('U') triangle; None: x."""
    from .elementwise import conj

    if uplo is None:
        return x
    if not isinstance(uplo, str) or uplo.upper() not in ("L", "U"):
        raise ValueError(
            f"{name}: UPLO must be 'L' or 'U' (or None for the symmetric part), got {uplo!r} "
            f"(input shape {tuple(x.shape)} {x.dtype})"
        )
    lower, x = uplo.upper() == "L", _as_float(x)
    strict = _triangle(x, lower=lower, k=-1)
    strict = conj(strict) if x.dtype.kind == "c" else strict
    # The kernels read the symmetric part, so the diagonal's imaginary part drops out (LAPACK ignores it too).
    return _triangle(x, lower=lower) + _mT(strict)


def _matmul(a, b):
    from .linalg import matmul

    return matmul(a, b)


def _gap_divide(num, gap, used):
    """``num / gap`` off the diagonal and 0 on it: the eigen- and singular-vector gradients' ``F o num``.

    ``gap`` is zero on the diagonal and wherever a value repeats.  At a repeated
    value the vectors are not unique and the gradient of a loss that reads them
    is not defined (0 / 0 even for a loss invariant to the choice of basis, whose
    limit depends on the loss, e.g. ``f'(w)`` for a matrix function ``v f(w) v.T``):
    that entry is NaN where the cotangent reaches the pair (``used`` nonzero there),
    as PyTorch and JAX give, instead of a finite wrong number; a loss of the values
    alone (``used`` zero there) keeps its exact gradient.
    """
    from .math import logical_and, logical_not, where

    zero = gap == _constant(0.0, gap)
    quotient = num / where(zero, _constant(1.0, gap), gap)
    off_diagonal = logical_not(_eye_like(gap) != _constant(0.0, gap))
    undefined = logical_and(logical_and(zero, off_diagonal), used != _constant(0.0, used))
    return where(zero, where(undefined, _constant(np.nan, gap), _constant(0.0, gap)), quotient)


# ------------------------------------------------------------------ inv
_inv = defop(
    "MatrixInverse",
    inputs=("x",),
    attrs={"singular": "raise"},
    infer=lambda x, *, singular: _square_infer(x),
    doc="Inverse of square matrices; a singular one raises, or with singular='inf' gives adj(x) / 0 "
    "(inf where a cofactor is nonzero, NaN where it is 0).",
)


@_inv.generic
def _inv_kernel(xp, x, *, singular):
    if singular == "raise":
        return xp.linalg.inv(x)
    try:
        return xp.linalg.inv(x)
    except np.linalg.LinAlgError:  # some matrix of the batch is singular (LU has a zero pivot)
        pass
    zero = (xp.linalg.slogdet(x)[0] == 0)[..., None, None]
    eye = xp.eye(x.shape[-1], dtype=x.dtype)
    inverse = xp.linalg.inv(xp.where(zero, eye, x))  # NaN for a matrix holding a NaN or an inf
    # The SVD leaves rounding errors where a cofactor is 0: entries at rounding level of the largest are 0, and
    # so is every cofactor at rank n - 2 or less.  (It would not converge on a non-finite matrix of the batch.)
    x = xp.where(zero, x, eye)
    adjugate = _adjugate_kernel(xp, x, xp.zeros(x.shape[:-2], dtype=x.dtype))
    n, eps = x.shape[-1], np.finfo(x.dtype).eps
    size = xp.max(xp.abs(adjugate), axis=(-2, -1), keepdims=True)
    rounding = xp.abs(adjugate) <= size * n * eps
    if n > 1:
        s = xp.linalg.svd(x, compute_uv=False)
        rounding = rounding | (s[..., -2] <= s[..., 0] * n * eps)[..., None, None]
    adjugate = xp.where(rounding, xp.zeros_like(adjugate), adjugate)
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = adjugate / xp.zeros((), dtype=x.dtype)
    return xp.where(zero, limit, inverse)


_inv.kernel("numpy")(_lapack("MatrixInverse")(functools.partial(_inv_kernel, np)))
register_gradient("MatrixInverse", lambda node, g: -_matmul(_mT(node.outputs[0]), _matmul(g, _mT(node.outputs[0]))))


def inv(x) -> Tensor:
    """Inverse of a square matrix (or a batch of them).

    >>> import tensorlib as tl
    >>> tl.linalg.inv(tl.tensor([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return apply(_inv, (x,))


# ------------------------------------------------------------------ solve
def _solve_infer(a, b):
    dtype = _check_matrix(a)
    if len(b.shape) < 2:
        raise ValueError(f"b must have rank >= 2, got rank {len(b.shape)}")
    if a.shape[-1] is not None and b.shape[-2] is not None and a.shape[-1] != b.shape[-2]:
        raise ValueError(f"a is {a.shape[-2]}x{a.shape[-1]} but b has {b.shape[-2]} rows")
    return spec(broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype)


_solve = defop(
    "MatrixSolve", inputs=("a", "b"), infer=_solve_infer, promote=(0, 1), doc="x with a @ x == b, for square a."
)
_solve.generic(_nan_if_not_finite(2)(lambda xp, a, b: xp.linalg.solve(*_batched(xp, a, b))))
_solve.kernel("numpy")(
    _lapack("MatrixSolve")(functools.partial(_nan_if_not_finite(2)(lambda xp, a, b: np.linalg.solve(a, b)), np))
)


def _batched(xp, a, b):
    """a and b with their batch axes broadcast to one shape (CuPy's solve does not broadcast them)."""
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:])


def _solve_grad_b(node, g):
    return solve(_mT(node.inputs[0]), g)


register_gradient("MatrixSolve", lambda node, g: -_matmul(_solve_grad_b(node, g), _mT(node.outputs[0])), _solve_grad_b)


def _as_columns(a, b):
    """``(a, b, vector)``: the matrix and right-hand side read together (a list ``b`` next to a float64 ``a`` is
    float64, as NumPy reads it); NumPy's rule: ``b`` is a vector only when it is 1-D, then one column."""
    from .shape import expand_dims

    a, b = as_tensors(a, b)
    return (a, expand_dims(b, -1), True) if b.ndim == 1 else (a, b, False)


def solve(a, b) -> Tensor:
    """Solve ``a @ x = b``; ``b`` is a vector when 1-D, else (..., n, k); batch axes broadcast.

    >>> import tensorlib as tl
    >>> tl.linalg.solve(tl.tensor([[2.0, 0.0], [0.0, 4.0]]), tl.tensor([2.0, 2.0])).numpy().tolist()
    [1.0, 0.5]
    """
    from .shape import squeeze

    a, b, vector = _as_columns(a, b)
    x = apply(_solve, (a, b))
    return squeeze(x, -1) if vector else x


# ------------------------------------------------------------------ det, slogdet
def _det_infer(x):
    return spec(x.shape[:-2], _check_matrix(x))


_det = defop("MatrixDeterminant", inputs=("x",), infer=_det_infer, doc="Determinant of square matrices.")
_det.generic(_nan_if_not_finite()(lambda xp, x: xp.linalg.det(x)))


def _det_grad(node, g):
    # d det(x) / dx is the cofactor matrix adj(x)^T: det(x) inv(x)^T where x is invertible, and still
    # defined (and what PyTorch gives) where it is not: rank n - 1 has a nonzero adjugate, lower rank 0.
    from .shape import expand_dims

    return expand_dims(g, (-2, -1)) * _mT(_adjugate(node.inputs[0], node.outputs[0]))


register_gradient("MatrixDeterminant", _det_grad)

_adj = defop(
    "MatrixAdjugate",
    inputs=("x", "det"),
    infer=lambda x, det: _square_infer(x),
    doc="Adjugate (transposed cofactor matrix) of square matrices x, given det = det(x): det inv(x) where x is "
    "invertible.",
)


@_adj.generic
@_nan_if_not_finite(2)
def _adjugate_kernel(xp, x, det):
    if x.shape[-1] == 0 or x.size == 0:
        return xp.zeros_like(x)
    with np.errstate(all="ignore"):
        if bool(xp.all(det != 0)):
            try:
                return det[..., None, None] * xp.linalg.inv(x)
            except np.linalg.LinAlgError:  # a pivot LAPACK rounds to zero although det did not
                pass
    # x = u diag(s) vh, det(x) = det(u) det(vh) prod(s), inv(x) = vh^H diag(1 / s) u^H: the adjugate is
    # det(u) det(vh) vh^H diag(prod of the other s) u^H, with no division (the exclusive products
    # multiply the values before and after each one).
    u, s, vh = xp.linalg.svd(x)
    ones = xp.ones_like(s[..., :1])
    before = xp.cumulative_prod(xp.concat([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumulative_prod(xp.concat([ones, xp.flip(s, axis=-1)[..., :-1]], axis=-1), axis=-1), axis=-1)
    phase = xp.linalg.det(u) * xp.linalg.det(vh)
    others = xp.astype(before * after, x.dtype)
    return phase[..., None, None] * xp.matmul(
        xp.conj(xp.matrix_transpose(vh)) * others[..., None, :], xp.conj(xp.matrix_transpose(u))
    )


_adj_grad = defop(
    "MatrixAdjugateGrad",
    inputs=("x", "g"),
    infer=lambda x, g: _square_infer(x),
    promote=(0, 1),
    doc="The gradient of <g, adj(x)> in x (det's second derivative along g^T), at any x, singular ones included.",
)


@_adj_grad.generic
@_nan_if_not_finite(2)
def _adjugate_grad_kernel(xp, x, g):
    # x = u diag(s) vh: adj(x) = c v adj(diag(s)) u^H with c = det(u) det(vh), and adj at diag(s) moves along
    # e = u^H dx v as diag(q diag(e)) - q o e, q_ij the product of the s_k other than s_i and s_j (q_ii = 0).
    # Its transpose: the gradient is c conj(u) (diag(q diag(g')) - q o g') v^T, g' = v^T g conj(u).  No
    # division, so it holds at singular x (JAX's convention: plain transposes, adj is holomorphic).
    n = x.shape[-1]
    if x.size == 0:
        return xp.zeros(x.shape, dtype=x.dtype)
    u, s, vh = xp.linalg.svd(x)
    conj_u, v_t = xp.conj(u), xp.conj(vh)  # v^T = conj(vh)
    g_prime = xp.matmul(xp.matmul(v_t, g), conj_u)
    q = xp.astype(_products_of_the_others(xp, s), x.dtype)
    inner = xp.matmul(q, xp.linalg.diagonal(g_prime)[..., None])[..., 0]
    core = inner[..., :, None] * xp.eye(n, dtype=x.dtype) - q * g_prime
    phase = xp.linalg.det(u) * xp.linalg.det(vh)
    return phase[..., None, None] * xp.matmul(xp.matmul(conj_u, core), v_t)


def _products_of_the_others(xp, s):
    """q[..., i, j] = the product of s[..., k] over k other than i and j, 0 on the diagonal (no division)."""
    n = s.shape[-1]
    eye = xp.eye(n, dtype=s.dtype)
    # Row i: s with s_i replaced by 1; then the exclusive products of each row (before j times after j).
    rows = s[..., None, :] * (1 - eye) + eye
    ones = xp.ones(rows.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumulative_prod(xp.concat([ones, rows[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumulative_prod(xp.concat([ones, xp.flip(rows, axis=-1)[..., :-1]], axis=-1), axis=-1), axis=-1)
    return before * after * (1 - eye)


def _adjugate_grad_grad_x(node, h):
    # <h, F(x, g)> = D^2 det(x)[g^T, h]: its gradient in x is det's third derivative, at any x.
    from .shape import broadcast_to, stack

    x, g = node.inputs
    return apply(_det_derivative, (x, stack([broadcast_to(_mT(g), h.shape), h], axis=-3)))


def _det_derivative_infer(x, directions):
    dtype = _dt.promote_types(_check_matrix(x), _check_matrix(directions))
    if len(directions.shape) < 3:
        raise ValueError(f"directions must be (..., m, n, n), got shape {tuple(directions.shape)}")
    batch = broadcast_shapes(x.shape[:-2], directions.shape[:-3])
    n = x.shape[-1] if x.shape[-1] is not None else directions.shape[-1]
    return spec(batch + (n, n), dtype)


_det_derivative = defop(
    "MatrixDeterminantDerivative",
    inputs=("x", "directions"),
    infer=_det_derivative_infer,
    promote=(0, 1),
    doc="The gradient in x of D^m det(x)[d_1, ..., d_m], directions (..., m, n, n) = stack(d_1, ..., d_m, axis=-3): "
    "det's (m + 1)-th "
    "derivative, at any x, singular ones included (from the SVD, without division).",
)

# The table of products of all singular values but k of them has n^k entries per matrix, n^(k+1) in the
# permutation terms: the batch is worked through in chunks of at most this many entries.
_DET_DERIVATIVE_TABLE_LIMIT = 2**25


@_det_derivative.generic
@_nan_if_not_finite(2)
def _det_derivative_kernel(xp, x, directions):
    m, n = directions.shape[-3], x.shape[-1]
    k = m + 1
    batch = tuple(np.broadcast_shapes(x.shape[:-2], directions.shape[:-3]))
    dtype = xp.result_type(x.dtype, directions.dtype)
    if not xp.isdtype(dtype, ("real floating", "complex floating")):
        dtype = xp.float64
    if k > n or 0 in batch or n == 0:  # det is a polynomial of degree n
        return xp.zeros(batch + (n, n), dtype=dtype)
    if n ** (k + 1) > _DET_DERIVATIVE_TABLE_LIMIT:
        raise NotImplementedError(
            f"derivative {k} of det of {n} x {n} matrices needs a table of {n ** (k + 1)} products per "
            f"matrix, more than this kernel builds ({_DET_DERIVATIVE_TABLE_LIMIT})"
        )
    x = xp.reshape(xp.broadcast_to(xp.astype(x, dtype), batch + (n, n)), (-1, n, n))
    directions = xp.reshape(xp.broadcast_to(xp.astype(directions, dtype), batch + (m, n, n)), (-1, m, n, n))
    chunk = max(1, _DET_DERIVATIVE_TABLE_LIMIT // n ** (k + 1))
    total = x.shape[0]
    # Each slice names every axis and stops inside the batch: the array API (array_api_strict) allows no less.
    parts = [
        _det_derivative_of(xp, x[i : min(i + chunk, total), ...], directions[i : min(i + chunk, total), ...], dtype)
        for i in range(0, total, chunk)
    ]
    return xp.reshape(parts[0] if len(parts) == 1 else xp.concat(parts, axis=0), batch + (n, n))


def _det_derivative_of(xp, x, directions, dtype):
    """The kernel on a flat batch x (b, n, n), directions (b, m, n, n) of ``dtype``."""
    # x = u diag(s) vh, so det(x + e) = c det(diag(s) + u^H e v), c = det(u) det(vh).  At diag(s), the mixed
    # derivative along e_1 .. e_k is the sum over distinct rows r_1 .. r_k and permutations p of them of
    # sgn(p) prod_i e_i[r_i, r_p(i)] times the product of the s_j over the other rows j: a polynomial in s,
    # no division.  Its gradient in e_k is mapped back by conj(u) (.) v^T (JAX's convention: plain transposes).
    import itertools

    m, n = directions.shape[-3], x.shape[-1]
    k = m + 1
    batch = (x.shape[0],)
    u, s, vh = xp.linalg.svd(x)
    u_h, v = xp.conj(xp.matrix_transpose(u)), xp.conj(xp.matrix_transpose(vh))
    e = xp.matmul(xp.matmul(u_h[..., None, :, :], directions), v[..., None, :, :])
    # table[..., r_1, .., r_k]: the product of the s_j over j not among the r_t, 0 where two r_t coincide.
    rows = np.indices((n,) * k)
    excluded = (rows[..., None] == np.arange(n)).any(axis=0)
    distinct = np.all([rows[a] != rows[b] for a, b in itertools.combinations(range(k), 2)], axis=0)
    s_table = xp.reshape(s, batch + (1,) * k + (n,))
    table = xp.prod(xp.where(xp.asarray(excluded), xp.ones_like(s_table), s_table), axis=-1)
    table = xp.astype(table * xp.asarray(distinct.astype(np.float64), dtype=table.dtype), dtype)
    out = xp.zeros(batch + (n, n), dtype=dtype)
    axes = tuple(range(len(batch), len(batch) + k))
    for perm in itertools.permutations(range(k)):
        term = table
        for i in range(m):
            term = term * _on_index_axes(xp, e[..., i, :, :], i, perm[i], k, batch)
        last, target = k - 1, perm[k - 1]
        sign = (-1) ** sum(perm[a] > perm[b] for a, b in itertools.combinations(range(k), 2))
        if target == last:
            out = out + sign * (xp.sum(term, axis=axes[:-1])[..., :, None] * xp.eye(n, dtype=dtype))
        else:
            term = xp.sum(term, axis=tuple(a for t, a in enumerate(axes) if t not in (last, target)))
            out = out + sign * (term if target > last else xp.matrix_transpose(term))
    phase = xp.linalg.det(u) * xp.linalg.det(vh)
    return phase[..., None, None] * xp.matmul(xp.matmul(xp.conj(u), out), xp.conj(vh))


def _on_index_axes(xp, matrix, row, column, k, batch):
    """matrix[..., r_row, r_column] laid on the axes row and column of a k-axis table (its diagonal if equal)."""
    n = matrix.shape[-1]
    if row == column:
        shape = [1] * k
        shape[row] = n
        return xp.reshape(xp.linalg.diagonal(matrix), batch + tuple(shape))
    if row > column:
        matrix, row, column = xp.matrix_transpose(matrix), column, row
    shape = [1] * k
    shape[row] = shape[column] = n
    return xp.reshape(matrix, batch + tuple(shape))


_det_derivative.kernel("numpy")(_lapack("MatrixDeterminantDerivative")(functools.partial(_det_derivative_kernel, np)))


def _det_derivative_grad_x(node, h):
    # <h, G(x; d)> = D^(m+1) det(x)[d_1, ..., d_m, h]: its gradient in x is G with h added to the directions.
    from .shape import broadcast_to, concat, expand_dims

    x, directions = node.inputs
    directions = broadcast_to(directions, tuple(h.shape[:-2]) + tuple(directions.shape[-3:]))
    return apply(_det_derivative, (x, concat([directions, expand_dims(h, -3)], axis=-3)))


def _det_derivative_grad_directions(node, h):
    # D^(m+1) det is symmetric: its gradient in d_i is G with d_i replaced by h.
    from .shape import broadcast_to, concat, expand_dims, getitem, stack

    x, directions = node.inputs
    directions = broadcast_to(directions, tuple(h.shape[:-2]) + tuple(directions.shape[-3:]))
    m, h = directions.shape[-3], expand_dims(h, -3)

    def replaced(i):
        before = getitem(directions, (Ellipsis, slice(0, i), slice(None), slice(None)))
        after = getitem(directions, (Ellipsis, slice(i + 1, m), slice(None), slice(None)))
        return concat([before, h, after], axis=-3)

    return stack([apply(_det_derivative, (x, replaced(i))) for i in range(m)], axis=-3)


register_gradient("MatrixDeterminantDerivative", _det_derivative_grad_x, _det_derivative_grad_directions)


_adj_grad.kernel("numpy")(_lapack("MatrixAdjugateGrad")(functools.partial(_adjugate_grad_kernel, np)))
# F(x, g) is linear in g, and D^2 det is symmetric: the gradient in g along h is F(x, h^T)^T.
register_gradient(
    "MatrixAdjugateGrad",
    _adjugate_grad_grad_x,
    lambda node, h: _mT(apply(_adj_grad, (node.inputs[0], _mT(h)))),
)


_adj.kernel("numpy")(_lapack("MatrixAdjugate")(functools.partial(_adjugate_kernel, np)))
# det is det(x), passed so that the kernel need not factor x twice: x's rule is the whole derivative.
register_gradient("MatrixAdjugate", lambda node, g: apply(_adj_grad, (node.inputs[0], g)), lambda node, g: None)


def _adjugate(x, determinant=None) -> Tensor:
    """adj(x), the gradient of det(x) transposed; ``determinant`` is det(x) if the caller has it."""
    x = as_tensor(x)
    return apply(_adj, (x, det(x) if determinant is None else determinant))


def det(x) -> Tensor:
    """Determinant; its gradient is the cofactor matrix (``det(x) inv(x)^T`` for invertible ``x``),
    and its higher derivatives are defined, also at singular ``x`` (from the SVD there, without division; PyTorch
    gives the first two there); the k-th derivative of an n x n ``x`` builds a table of ``n^k`` products, and
    raises ``NotImplementedError`` past 2^25 entries.

    >>> import tensorlib as tl
    >>> float(tl.linalg.det(tl.tensor([[2.0, 1.0], [1.0, 3.0]])))
    5.0
    """
    return apply(_det, (x,))


def _slogdet_infer(x):
    dtype = _check_matrix(x)
    real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    return spec(x.shape[:-2], dtype), spec(x.shape[:-2], real)


_slogdet = defop(
    "LogMatrixDeterminant",
    inputs=("x",),
    infer=_slogdet_infer,
    doc="(sign, log|det|) of square matrices, without overflow.",
)
_slogdet.generic(_nan_if_not_finite()(lambda xp, x: tuple(xp.linalg.slogdet(x))))


def _slogdet_grad(node, g_sign, g_logabsdet):
    # With h = log det (holomorphic), logabsdet = Re h and sign = exp(i Im h): the cotangent of h is
    # g_logabsdet - i Re(i sign g_sign).  For real matrices the sign is piecewise constant (no term).
    from .math import cast
    from .shape import expand_dims

    x = node.inputs[0]
    g_h = g_logabsdet
    if x.dtype.kind == "c":
        sign = node.outputs[0]
        g_h = cast(g_logabsdet, dtype=x.dtype) - 1j * cast(
            cast(1j * sign * g_sign, dtype=g_logabsdet.dtype), dtype=x.dtype
        )
    # At a singular x (sign 0, logabsdet -inf) the derivative is infinite: inv(x) becomes adj(x) / 0, so the
    # gradient is inf where a cofactor is nonzero and NaN where it is 0 (JAX's values; PyTorch's are non-finite
    # too), instead of raising.
    return expand_dims(g_h, (-2, -1)) * _mT(apply(_inv, (x,), {"singular": "inf"}))


register_gradient("LogMatrixDeterminant", _slogdet_grad)


def slogdet(x) -> SlogdetResult:
    """``(sign, logabsdet)`` (a named tuple, as NumPy's) with ``det = sign * exp(logabsdet)``; only
    ``logabsdet`` has a gradient (and ``sign`` of a complex matrix).

    At a singular matrix (``sign`` 0, ``logabsdet`` -inf) the gradient is not
    finite: ``inv(x)`` there is ``adj(x) / 0``, inf where a cofactor is nonzero
    and NaN where it is 0, as JAX gives (PyTorch's is non-finite too); it does
    not raise.

    >>> import tensorlib as tl
    >>> sign, logabsdet = tl.linalg.slogdet(tl.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    >>> float(sign), round(float(logabsdet), 4)
    (-1.0, 1.7918)
    >>> float(tl.linalg.slogdet(tl.eye(2)).logabsdet)
    0.0
    """
    return SlogdetResult(*apply(_slogdet, (x,)))


# ------------------------------------------------------------------ solve_triangular
def _trans_code(trans, name="MatrixTriangularSolve") -> int:
    """SciPy's ``trans``: 0 or 'N' (``t``), 1 or 'T' (``t^T``), 2 or 'C' (``t^H``) as 0, 1 or 2."""
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if isinstance(trans, bool) or not isinstance(trans, (int, np.integer, str)) or trans not in codes:
        raise ValueError(f"{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return codes[trans]


def _triangular_matrix(xp, a, lower, unit_diagonal):
    n = a.shape[-1]
    t = xp.tril(a) if lower else xp.triu(a)
    if unit_diagonal:
        t = t * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    return t


_trsolve = defop(
    "MatrixTriangularSolve",
    inputs=("a", "b"),
    attrs={"trans": 0, "lower": False, "unit_diagonal": False},
    infer=lambda a, b, **attrs: _solve_infer(a, b),
    promote=(0, 1),
    doc="x with op(t) @ x == b for the triangle t of a; op is the transpose when trans=1.",
)


@_trsolve.generic
def _trsolve_kernel(xp, a, b, *, trans, lower, unit_diagonal):
    # numpy has no batched triangular solve: a general solve on the masked triangle is exact and batched.
    t = _triangular_matrix(xp, a, lower, unit_diagonal)
    return xp.linalg.solve(*_batched(xp, xp.matrix_transpose(t) if trans else t, b))


_trsolve.kernel("numpy")(_lapack("MatrixTriangularSolve")(functools.partial(_trsolve_kernel, np)))


def _trsolve_grad_b(node, g):
    attrs = node.attrs
    return solve_triangular(
        node.inputs[0], g, trans=1 - attrs["trans"], lower=attrs["lower"], unit_diagonal=attrs["unit_diagonal"]
    )


def _trsolve_grad_a(node, g):
    attrs = node.attrs
    gb, x = _trsolve_grad_b(node, g), node.outputs[0]
    ga = -_matmul(x, _mT(gb)) if attrs["trans"] else -_matmul(gb, _mT(x))
    return _triangle(ga, attrs["lower"], -1 if attrs["unit_diagonal"] else 0)


register_gradient("MatrixTriangularSolve", _trsolve_grad_a, _trsolve_grad_b)


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False) -> Tensor:
    """SciPy's ``solve_triangular``: solve ``t @ x = b`` (``t.T @ x = b`` for ``trans=1`` or ``'T'``,
    ``t.conj().T @ x = b`` for ``trans=2`` or ``'C'``).

    ``t`` is the lower (``lower=True``) or upper triangle of ``a``, with ones on
    its diagonal if ``unit_diagonal``; the other entries of ``a`` are never read
    and get a zero gradient.

    >>> import tensorlib as tl
    >>> a = tl.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> tl.linalg.solve_triangular(a, tl.tensor([2.0, 3.0]), lower=True).numpy().tolist()
    [1.0, 2.0]
    """
    from .elementwise import conj
    from .shape import squeeze

    trans = _trans_code(trans)
    a, b, vector = _as_columns(a, b)
    if trans == 2:  # t^H x = b is conj(t)^T x = b: the op solves with plain transposes (holomorphic in t)
        trans = 1
        a = conj(a) if a.dtype.kind == "c" else a
    x = apply(_trsolve, (a, b), {"trans": trans, "lower": bool(lower), "unit_diagonal": bool(unit_diagonal)})
    return squeeze(x, -1) if vector else x


# ------------------------------------------------------------------ cholesky
_cholesky = defop(
    "Cholesky",
    inputs=("x",),
    infer=_square_infer,
    doc="Lower Cholesky factor of the symmetric part of x (positive definite).",
)


@_cholesky.generic
def _cholesky_kernel(xp, x):
    return xp.linalg.cholesky((x + xp.conj(xp.matrix_transpose(x))) / 2)


_cholesky.kernel("numpy")(_lapack("Cholesky")(functools.partial(_cholesky_kernel, np)))


def _cholesky_grad(node, g):
    # Murray (2016): with P = Phi(L^T tril(g)), Phi = lower triangle with halved diagonal,
    # the gradient is the symmetric part of L^-T P L^-1 (two triangular solves).  For complex x (JAX's
    # convention: d loss = Re sum(g * dL), and dL = L Phi(L^-1 dx L^-H) for the Hermitian part dx) it is the
    # Hermitian part of L^-T P conj(L)^-1, as jax.grad gives.
    from .elementwise import conj

    factor = node.outputs[0]
    p = _matmul(_mT(factor), _triangle(g, lower=True))
    p = _triangle(p, lower=True, k=-1) + _diag_embed(_diag_part(p)) * 0.5
    left = solve_triangular(factor, p, trans=1, lower=True)  # L^-T P
    if factor.dtype.kind != "c":
        return _symmetrize(_mT(solve_triangular(factor, _mT(left), trans=1, lower=True)))
    q = _mT(solve_triangular(conj(factor), _mT(left), trans=1, lower=True))
    return (q + conj(_mT(q))) * 0.5


register_gradient("Cholesky", _cholesky_grad)


def cholesky(x, /, *, upper: bool = False, symmetrize_input: bool = True) -> Tensor:
    """Lower-triangular ``L`` with ``L @ L.T == x`` for symmetric positive-definite ``x`` (``L @ L^H`` for
    complex), or with ``upper=True`` the upper-triangular ``U = L^H`` (``x == U^H @ U``), as NumPy and PyTorch.

    Reads the symmetric part ``(x + x.T) / 2`` (JAX's rule), so the gradient is symmetric; with
    ``symmetrize_input=False`` the lower triangle only, or with ``upper=True`` the upper one, as NumPy and
    PyTorch.

    >>> import tensorlib as tl
    >>> tl.linalg.cholesky(tl.tensor([[4.0, 2.0], [2.0, 2.0]])).numpy().tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    >>> tl.linalg.cholesky(tl.tensor([[4.0, 2.0], [2.0, 2.0]]), upper=True).numpy().tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    from .elementwise import conj

    x = as_tensor(x)
    read = x if symmetrize_input else _hermitian_from_triangle(x, "U" if upper else "L", "cholesky")
    factor = apply(_cholesky, (read,))
    if not upper:
        return factor
    return conj(_mT(factor)) if factor.dtype.kind == "c" else _mT(factor)


# ------------------------------------------------------------------ eigh
def _eigh_infer(x):
    dtype = _check_matrix(x)
    real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    return spec(x.shape[:-1], real), spec(x.shape, dtype)


_eigh = defop(
    "SelfAdjointEigV2",
    inputs=("x",),
    infer=_eigh_infer,
    doc="Eigenvalues (ascending) and eigenvectors of the symmetric part of x.",
)


@_eigh.generic
@_nan_if_not_finite()
def _eigh_kernel(xp, x):
    return tuple(xp.linalg.eigh((x + xp.conj(xp.matrix_transpose(x))) / 2))


_eigh.kernel("numpy")(_lapack("SelfAdjointEigV2")(functools.partial(_eigh_kernel, np)))


def _eigh_grad(node, g_w, g_v):
    # dv_j = sum_i v_i (v_i^T dA v_j) / (w_j - w_i): the gradient is V (diag(gw) + F o V^T gV) V^T.  For complex
    # (Hermitian) x, JAX's convention and JAX's eigenvector gauge (dv = V (F o V^H dA V), no diagonal term): the
    # Hermitian part of conj(V) (diag(gw) + F o V^T gV) V^T, as jax.grad gives.
    from .elementwise import conj

    w, v = node.outputs
    vt_gv = _matmul(_mT(v), g_v)
    inner = _diag_embed(g_w) + _gap_divide(vt_gv, _row(w) - _column(w), abs(vt_gv) + abs(_mT(vt_gv)))
    if v.dtype.kind != "c":
        return _symmetrize(_matmul(v, _matmul(inner, _mT(v))))
    q = _matmul(conj(v), _matmul(inner, _mT(v)))
    return (q + conj(_mT(q))) * 0.5


def _row(v):
    from .shape import expand_dims

    return expand_dims(v, -2)


def _column(v):
    from .shape import expand_dims

    return expand_dims(v, -1)


register_gradient("SelfAdjointEigV2", _eigh_grad)


def eigh(x, UPLO=None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues ``w`` (ascending) and eigenvectors ``v`` (columns) of a symmetric (Hermitian) matrix,
    as the named tuple ``(eigenvalues, eigenvectors)`` (NumPy's).

    Reads the symmetric part ``(x + x.T) / 2`` (JAX's default), or with
    ``UPLO='L'`` (``'U'``) the lower (upper) triangle only, as NumPy and PyTorch
    (the gradient is then that of the triangle: zero on the other one);
    ``symmetrize_input=False`` (JAX's) reads the lower one unless ``UPLO`` says.  Caveat: the gradient through
    ``v`` divides by eigenvalue gaps, so it blows up as eigenvalues approach
    each other; at exactly repeated eigenvalues the eigenvectors are not unique
    and the gradient of a loss that reads the eigenvectors of a repeated
    eigenvalue is NaN (as in PyTorch and JAX; even for a loss invariant to the
    basis, such as a matrix function ``v @ diag(f(w)) @ v.T``, the limit is not
    known to the rule: use ``funm``, whose gradient is exact there), while a loss of ``w`` alone, or of
    eigenvectors of unrepeated eigenvalues, keeps its exact gradient.

    >>> import tensorlib as tl
    >>> w, v = tl.linalg.eigh(tl.tensor([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.numpy().tolist()
    [1.0, 2.0]
    >>> tl.linalg.eigh(tl.tensor([[2.0, 9.0], [0.0, 1.0]]), UPLO="L")[0].numpy().tolist()
    [1.0, 2.0]
    """
    x = as_tensor(x)
    uplo = UPLO if symmetrize_input or UPLO is not None else "L"
    return EighResult(*apply(_eigh, (_hermitian_from_triangle(x, uplo, "eigh"),)))


# ------------------------------------------------------------------ svd
def _min_dim(m, n):
    """min(m, n) of two matrix sizes, None (unknown under tl.function) when either is."""
    return None if m is None or n is None else min(m, n)


def _svd_infer(x, *, full_matrices, compute_uv):
    dtype = _check_matrix(x, square=False)
    real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    *batch, m, n = x.shape
    k = _min_dim(m, n)
    s = spec(tuple(batch) + (k,), real)
    if not compute_uv:
        return s
    rows, cols = (m, n) if full_matrices else (k, k)
    return spec(tuple(batch) + (m, rows), dtype), s, spec(tuple(batch) + (cols, n), dtype)


_svd = defop(
    "Svd",
    inputs=("x",),
    attrs={"full_matrices": True, "compute_uv": True},
    infer=_svd_infer,
    doc="Singular value decomposition x = u @ diag(s) @ vh.",
)


@_svd.generic
@_nan_if_not_finite()
def _svd_kernel(xp, x, *, full_matrices, compute_uv):
    # The Array API's svd always returns the vectors; svdvals gives the values alone.
    if compute_uv:
        return tuple(xp.linalg.svd(x, full_matrices=full_matrices))
    svdvals = getattr(xp.linalg, "svdvals", None)  # CuPy 14 has no svdvals
    return svdvals(x) if svdvals is not None else xp.linalg.svd(x, compute_uv=False)


_svd.kernel("numpy")(_lapack("Svd")(functools.partial(_svd_kernel, np)))


def _known_matrix_sizes(x, name):
    """The gradients of Svd and Qr take different forms for tall and wide matrices: which one must be known."""
    if None in x.shape[-2:]:
        raise ValueError(
            f"{name}: the gradient needs the matrix sizes (tall or wide) known under tl.function, got input shape "
            f"{tuple(x.shape)} {x.dtype}; give them in the TensorSpec"
        )


def _svd_grad(node, *grads):
    from .shape import getitem

    from .elementwise import conj

    x = node.inputs[0]
    _known_matrix_sizes(x, "Svd")
    if not node.attrs["compute_uv"]:
        u, _, vh = svd(x, full_matrices=False)
        if x.dtype.kind == "c":  # JAX's convention: conj(u) diag(g) conj(vh)
            u, vh = conj(u), conj(vh)
        return _matmul(u * _row(grads[0]), vh)
    u, s, vh = node.outputs
    g_u, g_s, g_vh = grads
    k = s.shape[-1]
    if node.attrs["full_matrices"]:
        # The columns of u (rows of vh) past min(m, n) span a fixed subspace in an arbitrary basis:
        # their gradient is ignored, as in PyTorch.
        u, g_u = getitem(u, (Ellipsis, slice(0, k))), getitem(g_u, (Ellipsis, slice(0, k)))
        vh, g_vh = (
            getitem(vh, (Ellipsis, slice(0, k), slice(None))),
            getitem(g_vh, (Ellipsis, slice(0, k), slice(None))),
        )
    if x.dtype.kind == "c":
        return _svd_reduced_grad_complex(u, s, vh, g_u, g_s, g_vh)
    return _svd_reduced_grad(u, s, vh, g_u, g_s, g_vh)


def _svd_reduced_grad_complex(u, s, vh, g_u, g_s, g_vh):
    # The transpose of JAX's svd_jvp_rule (which also fixes the phase gauge: the imaginary part of diag(u^H dx v)
    # goes to u), in JAX's convention d loss = Re sum(g * d out): the gradient is conj(u) C conj(vh) with
    # C = J diag(s) + diag(gs) + diag(s) K + i diag(Im diag(A) / s), A = u^T gu, B = conj(vh) gvh^H,
    # J = F o (A - A^H), K = F o (B - B^H), F_ij = 1 / (s_j^2 - s_i^2); plus the parts outside span(u), span(v).
    from .elementwise import conj, imag
    from .math import cast, where

    def hermitian(a):
        return conj(_mT(a))

    s2 = s * s
    gap = _row(s2) - _column(s2)
    a = _matmul(_mT(u), g_u)
    b = _matmul(conj(vh), hermitian(g_vh))
    used = abs(a) + abs(_mT(a)) + abs(b) + abs(_mT(b))
    zero = s == _constant(0.0, s)
    s_inverse = where(zero, _constant(0.0, s), 1.0 / where(zero, _constant(1.0, s), s))  # 0 at s = 0, as JAX
    c = (
        _gap_divide(a - hermitian(a), gap, used) * _row(s)
        + _diag_embed(g_s)
        + _column(s) * _gap_divide(b - hermitian(b), gap, used)
        + 1j * _diag_embed(cast(imag(_diag_part(a)) * s_inverse, dtype=u.dtype))
    )
    grad = _matmul(conj(u), _matmul(c, conj(vh)))
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if m > k:  # the part of gu outside span(u)
        grad = grad + _matmul((g_u - _matmul(conj(u), a)) / _row(s), conj(vh))
    if n > k:  # the part of gvh outside span(v)
        grad = grad + _matmul(conj(u) / _row(s), g_vh - _matmul(_matmul(g_vh, _mT(vh)), conj(vh)))
    return grad


def _svd_reduced_grad(u, s, vh, g_u, g_s, g_vh):
    # Townsend (2016), "Differentiating the singular value decomposition", with F_ij = 1 / (s_j^2 - s_i^2).
    v, g_v = _mT(vh), _mT(g_vh)
    s2 = s * s
    gap = _row(s2) - _column(s2)
    ut_gu, vt_gv = _matmul(_mT(u), g_u), _matmul(_mT(v), g_v)
    used = abs(ut_gu) + abs(_mT(ut_gu)) + abs(vt_gv) + abs(_mT(vt_gv))
    j = _gap_divide(ut_gu - _mT(ut_gu), gap, used)
    kk = _gap_divide(vt_gv - _mT(vt_gv), gap, used)
    core = j * _row(s) + _diag_embed(g_s) + _column(s) * kk
    grad = _matmul(u, _matmul(core, vh))
    m, n = u.shape[-2], v.shape[-2]
    if m > s.shape[-1]:  # the part of g_u outside span(u)
        outside = g_u - _matmul(u, ut_gu)
        grad = grad + _matmul(outside / _row(s), vh)
    if n > s.shape[-1]:
        outside = g_v - _matmul(v, vt_gv)
        grad = grad + _matmul(u / _row(s), _mT(outside))
    return grad


register_gradient("Svd", _svd_grad)


def svd(x, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """NumPy's ``svd``: ``(u, s, vh)`` (the named tuple ``(U, S, Vh)``) with ``x = u @ diag(s) @ vh``, or ``s`` alone.

    ``hermitian=True`` reads the Hermitian part ``(x + x^H) / 2`` (JAX's rule;
    NumPy reads one triangle of an ``x`` it assumes Hermitian): the same values
    for Hermitian ``x``, the vectors up to signs (phases).

    Gradient caveats (degenerate spectrum): the gradient through ``u``/``vh``
    divides by gaps between squared singular values (and by the values
    themselves when ``x`` is not square), so it blows up as singular values
    approach each other; at exactly repeated values the singular vectors are
    not unique and the gradient of a loss that reads them is NaN (as in
    PyTorch and JAX), while a loss of ``s`` alone keeps its exact gradient
    (use ``compute_uv=False`` for it).  With
    ``full_matrices=True`` the gradient of the columns of ``u`` (rows of ``vh``)
    past ``min(m, n)`` is ignored (they are an arbitrary basis), as in PyTorch.

    >>> import tensorlib as tl
    >>> tl.linalg.svd(tl.tensor([[3.0, 0.0], [0.0, -2.0]]), compute_uv=False).numpy().tolist()
    [3.0, 2.0]
    """
    x = _hermitian_part(x, "svd") if hermitian else x
    out = apply(_svd, (x,), {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)})
    return SVDResult(*out) if compute_uv else out


# ------------------------------------------------------------------ qr
def _qr_infer(x, *, mode):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    dtype = _check_matrix(x, square=False)
    *batch, m, n = x.shape
    k = _min_dim(m, n)
    cols = m if mode == "complete" else k
    r = spec(tuple(batch) + (cols, n), dtype)
    return r if mode == "r" else (spec(tuple(batch) + (m, cols), dtype), r)


_qr = defop(
    "Qr",
    inputs=("x",),
    attrs={"mode": "reduced"},
    infer=_qr_infer,
    doc="QR decomposition x = q @ r, q with orthonormal columns, r upper triangular.",
)


@_qr.generic
def _qr_kernel(xp, x, *, mode):
    if mode == "r":  # the Array API's qr has modes "reduced" and "complete" only
        return xp.linalg.qr(x, mode="reduced")[1]
    return tuple(xp.linalg.qr(x, mode=mode))


def _qr_grad(node, *grads):
    from .elementwise import conj
    from .shape import concat, getitem

    x, mode = node.inputs[0], node.attrs["mode"]
    _known_matrix_sizes(x, "Qr")
    m, n = x.shape[-2:]
    if mode == "complete" and m > n:
        raise ValueError(
            f"Qr: the gradient of mode='complete' with more rows than columns (input shape "
            f"{tuple(x.shape)}) is not defined: the last {m - n} columns of q are an arbitrary "
            "basis; use mode='reduced'"
        )
    if mode == "r":
        q, r = qr(x)
        g_q, g_r = None, grads[0]
    else:
        (q, r), (g_q, g_r) = node.outputs, grads
    if m >= n:
        return _qr_tall_grad(q, r, g_q, g_r)
    # Wide x = [y z] with y = q r_y square: r_z = q^H z adds z g_rz^T to q's gradient and gives z q g_rz
    # (conjugated for complex x: JAX's convention).
    r_y = getitem(r, (Ellipsis, slice(0, m)))
    g_ry, g_rz = getitem(g_r, (Ellipsis, slice(0, m))), getitem(g_r, (Ellipsis, slice(m, None)))
    z = getitem(x, (Ellipsis, slice(m, None)))
    if x.dtype.kind == "c":
        g_q_total, g_z = conj(_matmul(z, _mT(g_rz))), _matmul(conj(q), g_rz)
    else:
        g_q_total, g_z = _matmul(z, _mT(g_rz)), _matmul(q, g_rz)
    if g_q is not None:
        g_q_total = g_q_total + g_q
    return concat([_qr_tall_grad(q, r_y, g_q_total, g_ry), g_z], axis=-1)


def _qr_tall_grad(q, r, g_q, g_r):
    # m >= n (Walter & Lehmann; Seeger et al.): M = R gR^T - gQ^T Q,
    # gA = (gQ + Q copyltu(M)) R^-T, copyltu(M) the symmetric matrix with M's lower triangle.  For complex x
    # (the transpose of JAX's qr_jvp_rule, its gauge: R's diagonal real): gA = (gQ + conj(Q) K) R^-T with
    # K = tril(M, -1)^T + conj(tril(M, -1)) + diag(Re diag M).
    from .elementwise import conj, real
    from .math import cast

    g_r = _triangle(g_r, lower=False)
    mm = _matmul(r, _mT(g_r))
    if g_q is not None:
        mm = mm - _matmul(_mT(g_q), q)
    lower = _triangle(mm, lower=True, k=-1)
    if q.dtype.kind == "c":
        q = conj(q)
        copyltu = _mT(lower) + conj(lower) + _diag_embed(cast(real(_diag_part(mm)), dtype=mm.dtype))
    else:
        copyltu = lower + _mT(lower) + _diag_embed(_diag_part(mm))
    b = _matmul(q, copyltu) if g_q is None else g_q + _matmul(q, copyltu)
    # b R^-T: solve R x^T = b^T.
    return _mT(solve_triangular(r, _mT(b), lower=False))


_qr.kernel("numpy")(_lapack("Qr")(functools.partial(_qr_kernel, np)))
register_gradient("Qr", _qr_grad)


def qr(x, mode: str = "reduced"):
    """NumPy's ``qr``: ``(q, r)`` (the named tuple ``(Q, R)``) for ``mode='reduced'`` or ``'complete'``, ``r``
    alone for ``'r'``.

    Gradients need ``r`` with a nonzero diagonal (full column rank); with
    ``mode='complete'`` and more rows than columns the extra columns of ``q``
    are not unique and asking for the gradient raises.

    >>> import tensorlib as tl
    >>> q, r = tl.linalg.qr(tl.tensor([[3.0, 0.0], [4.0, 5.0]]))
    >>> abs(r.numpy()).round(4).tolist()
    [[5.0, 4.0], [0.0, 3.0]]
    """
    out = apply(_qr, (x,), {"mode": mode})
    return out if mode == "r" else QRResult(*out)


# ------------------------------------------------------------------ pinv
def _pinv_infer(x, *, rcond):
    dtype = _check_matrix(x, square=False)
    return spec(x.shape[:-2] + (x.shape[-1], x.shape[-2]), dtype)


_pinv = defop(
    "MatrixPseudoInverse",
    inputs=("x",),
    attrs={"rcond": None},
    infer=_pinv_infer,
    doc="Moore-Penrose pseudo-inverse (singular values below rcond * largest are cut).",
)


# The Array API's default cut-off (rtol=None): max(m, n) * eps of x's precision.
_STANDARD_RTOL = "max(m, n) * eps"


@_pinv.generic
@_nan_if_not_finite()
def _pinv_kernel(xp, x, *, rcond):
    if xp.isdtype(
        x.dtype, ("bool", "integral")
    ):  # NumPy keeps an empty integer matrix's dtype; the shape rule says float64
        x = xp.astype(x, xp.float64)
    if rcond is None:
        return xp.linalg.pinv(x)
    if isinstance(rcond, str):  # _STANDARD_RTOL
        rcond = max(x.shape[-2:]) * float(np.finfo(x.dtype).eps)
    elif isinstance(rcond, (tuple, list)):  # one cut-off per matrix, nested as the batch (lists once loaded)
        rcond = xp.asarray(np.asarray(rcond, dtype=np.float64))
    return xp.linalg.pinv(x, **{_cutoff_keyword(xp.linalg.pinv): rcond})


@functools.cache
def _cutoff_keyword(pinv_function) -> str:
    """The name of the relative cut-off: ``rtol`` in the Array API (array_api_strict), ``rcond`` in NumPy and CuPy."""
    try:
        parameters = inspect.signature(pinv_function).parameters
    except (TypeError, ValueError):
        return "rcond"
    return "rcond" if "rcond" in parameters or "rtol" not in parameters else "rtol"


_pinv.kernel("numpy")(_lapack("MatrixPseudoInverse")(functools.partial(_pinv_kernel, np)))


def _pinv_grad(node, g):
    # Golub & Pereyra (1973), for x of constant rank:
    # d x+ = -x+ dx x+ + x+ x+^T dx^T (I - x x+) + (I - x+ x) dx^T x+^T x+.
    # For complex x (JAX's convention, d loss = Re sum(g * dp); the dx^H terms are not holomorphic):
    # -p^T g p^T + conj(left) g^H conj(p p^H) + conj(p^H p) g^H conj(right), the same formula for real x.
    from .elementwise import conj

    x, p = node.inputs[0], node.outputs[0]
    pt, gt = _mT(p), _mT(g)
    x_p, p_x = _matmul(x, p), _matmul(p, x)
    left, right = _eye_like(x_p) - x_p, _eye_like(p_x) - p_x  # (_eye_like: sizes may be unknown when traced)
    if x.dtype.kind == "c":
        gh, ph = conj(gt), conj(pt)
        return (
            -_matmul(pt, _matmul(g, pt))
            + _matmul(conj(left), _matmul(gh, conj(_matmul(p, ph))))
            + _matmul(conj(_matmul(ph, p)), _matmul(gh, conj(right)))
        )
    return (
        -_matmul(pt, _matmul(g, pt))
        + _matmul(left, _matmul(gt, _matmul(p, pt)))
        + _matmul(pt, _matmul(p, _matmul(gt, right)))
    )


register_gradient("MatrixPseudoInverse", _pinv_grad)


_NO_VALUE = object()


def pinv(x, rcond=None, hermitian: bool = False, *, rtol=_NO_VALUE) -> Tensor:
    """Moore-Penrose pseudo-inverse (NumPy's ``pinv``), batched.

    Singular values at or below ``rcond * max(s)`` count as zero: ``rcond``
    defaults to NumPy's 1e-15, and may be an array of one cut-off per matrix
    (broadcast over the batch, as NumPy); ``rtol`` is the Array API's name for
    it (set one of them), and ``rtol=None`` means ``max(m, n) * eps``.  ``hermitian=True``
    reads the Hermitian part ``(x + x^H) / 2`` (as ``svd``).

    The gradient (Golub & Pereyra) holds where the rank is constant near ``x``:
    at a matrix whose small singular values sit at the ``rcond`` cut-off the
    pseudo-inverse jumps.  Where the cut-off drops nonzero singular values the
    gradient is the same formula with the cut pseudo-inverse, as JAX and
    PyTorch give (not the derivative of the cut function).

    >>> import tensorlib as tl
    >>> tl.linalg.pinv(tl.tensor([[2.0, 0.0], [0.0, 0.0]])).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    >>> tl.linalg.pinv(tl.tensor([[2.0, 0.0], [0.0, 0.1]]), rtol=0.1).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    x = as_tensor(x)
    if rtol is not _NO_VALUE:
        if rcond is not None:
            raise ValueError(f"pinv: rtol and rcond can't both be set (input shape {tuple(x.shape)} {x.dtype})")
        rcond = _STANDARD_RTOL if rtol is None else rtol
    x = _hermitian_part(x, "pinv") if hermitian else x
    if rcond is not None and not isinstance(rcond, str):
        cutoffs = np.asarray(rcond.numpy() if isinstance(rcond, Tensor) else rcond, dtype=np.float64)
        if cutoffs.ndim and None not in x.shape[:-2]:  # one per matrix: NumPy broadcasts it over the batch
            try:
                np.broadcast_shapes(tuple(x.shape[:-2]), cutoffs.shape)
            except ValueError:
                raise ValueError(
                    f"pinv: rcond (rtol) of shape {cutoffs.shape} does not broadcast with the batch of input shape "
                    f"{tuple(x.shape)} {x.dtype}"
                ) from None
        # An attribute: a number, or the cut-offs nested as tuples (hashable, saved with a graph).
        rcond = float(cutoffs) if cutoffs.ndim == 0 else _nested_tuple(cutoffs)
    return apply(_pinv, (x,), {"rcond": rcond})


def _nested_tuple(array) -> tuple:
    return tuple(_nested_tuple(row) for row in array) if array.ndim > 1 else tuple(float(v) for v in array)


# ------------------------------------------------------------------ compositions: matrix_power, norm
def matrix_power(x, n: int) -> Tensor:
    """``x`` to the integer power ``n`` by repeated squaring (``inv(x)`` first for ``n < 0``).

    >>> import tensorlib as tl
    >>> tl.linalg.matrix_power(tl.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).numpy().tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    from .math import identity, zeros_like
    from .shape import broadcast_like

    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"matrix_power: the exponent must be an integer, got {type(n).__name__} {n!r}")
    x = as_tensor(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"matrix_power: expected square matrices in the last two axes (input shape {tuple(x.shape)} {x.dtype})"
        )
    if n == 0:
        return broadcast_like(_eye_like(x), x) + zeros_like(x)
    if n == 1:  # a new value, never the caller's Tensor or Variable itself
        return identity(x)
    base = inv(x) if n < 0 else x
    n = abs(int(n))
    result = None
    while n:
        if n & 1:
            result = base if result is None else _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result


def _max_magnitude(a, axis, keepdims: bool) -> Tensor:
    """The largest of the non-negative ``a`` along ``axis`` (an int or a tuple), 0 along an empty one: NumPy 2's norms take the
    max with ``initial=0`` (the inf-norm of an empty vector, the 2-norm of a 0 x 3 matrix are 0)."""
    from . import reduce as reduce_ops

    # Over an empty axis the sum is that 0, and keeps the gradient's path to ``a`` (zeros of its shape).
    axes = (axis,) if isinstance(axis, int) else axis
    pick = reduce_ops.sum if any(a.shape[ax] == 0 for ax in axes) else reduce_ops.max
    return pick(a, axis=axis, keepdims=keepdims)


def _vector_norm(x, ord, axis, keepdims):
    from . import math as math_ops, reduce as reduce_ops
    from .math import abs as absolute, cast, not_equal, power
    from .shape import squeeze

    if x.dtype == _dt.float16:  # summed in float32 (DESIGN §6): the 2-norm of 4096 tens was inf, not 640
        return reduce_ops.in_float32(_vector_norm, x, ord, axis, keepdims)
    if ord is None or ord == 2:
        return reduce_ops.safe_sqrt(
            reduce_ops.sum(x * x if x.dtype.kind != "c" else absolute(x) ** 2, axis=axis, keepdims=keepdims)
        )
    a = absolute(x)
    if ord == np.inf:
        return _max_magnitude(a, axis, keepdims)
    if ord == -np.inf:
        return reduce_ops.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return reduce_ops.sum(cast(not_equal(a, 0), dtype=a.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return reduce_ops.sum(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors (input shape {tuple(x.shape)} {x.dtype})")
    # Zero entries are replaced by ones inside power, whose derivative at 0 is inf for ord < 1 (NaN in the
    # gradient): they add nothing to the sum for ord > 0, and make the norm 0 for ord < 0 (the sum is inf).
    # Their gradient is 0, and so is every entry's of a zero vector (ord > 0) or of a vector holding a zero
    # (ord < 0): PyTorch's choice, as for the 2-norm.  An empty vector has norm 0 (ord > 0) or inf (ord < 0).
    zero_entry = math_ops.equal(a, 0)
    powered = power(math_ops.where(zero_entry, math_ops.ones_like(a), a), float(ord))
    if ord > 0:
        powered = math_ops.where(zero_entry, math_ops.zeros_like(powered), powered)
        total = reduce_ops.sum(powered, axis=axis, keepdims=True)
        zero = math_ops.equal(total, 0)
    else:
        total = reduce_ops.sum(powered, axis=axis, keepdims=True)
        zero = math_ops.greater(reduce_ops.sum(cast(zero_entry, dtype=a.dtype), axis=axis, keepdims=True), 0)
    out = power(math_ops.where(zero, math_ops.ones_like(total), total), 1.0 / float(ord))
    out = math_ops.where(zero, math_ops.zeros_like(out), out)
    return out if keepdims else squeeze(out, axis)


def _matrix_norm(x, ord, axis, keepdims):
    from . import reduce as reduce_ops
    from .math import abs as absolute
    from .shape import expand_dims, transpose

    if x.dtype == _dt.float16:  # in float32 (DESIGN §6): a Frobenius norm past 65504 was inf; LAPACK has no float16
        return reduce_ops.in_float32(_matrix_norm, x, ord, axis, keepdims)
    row, col = axis
    if ord in (2, -2, "nuc"):
        # Move the two axes last for svd, then put them back as size-1 axes if keepdims.
        rest = [d for d in range(x.ndim) if d not in (row, col)]
        s = svd(transpose(x, rest + [row, col]), compute_uv=False)
        out = (
            _max_magnitude(s, -1, False)
            if ord == 2
            else reduce_ops.min(s, axis=-1)
            if ord == -2
            else reduce_ops.sum(s, axis=-1)
        )
        return expand_dims(out, tuple(sorted((row, col)))) if keepdims else out
    if ord in (None, "fro"):
        squared = x * x if x.dtype.kind != "c" else absolute(x) ** 2
        return reduce_ops.safe_sqrt(reduce_ops.sum(squared, axis=(row, col), keepdims=keepdims))
    a = absolute(x)
    if ord in (1, -1):
        sums = reduce_ops.sum(a, axis=row, keepdims=True)
        out = _max_magnitude(sums, col, True) if ord == 1 else reduce_ops.min(sums, axis=col, keepdims=True)
    elif ord in (np.inf, -np.inf):
        sums = reduce_ops.sum(a, axis=col, keepdims=True)
        out = _max_magnitude(sums, row, True) if ord == np.inf else reduce_ops.min(sums, axis=row, keepdims=True)
    else:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices (input shape {tuple(x.shape)} {x.dtype})")
    from .shape import squeeze

    return out if keepdims else squeeze(out, tuple(sorted((row, col))))


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Tensor:
    """NumPy's ``linalg.norm``: vector norms (``ord`` None/2, 1, inf, -inf, 0, any p) over one axis,
    matrix norms (``'fro'``, ``'nuc'``, 1, -1, 2, -2, inf, -inf) over two.

    Written with tensorlib ops, so gradients come from theirs; at 0 the
    gradient of the Frobenius norm and of every vector p-norm with p > 0 is 0,
    as in PyTorch (the 2-norm's as in autograd too); so is the gradient at a
    zero entry of a p-norm (where p < 1 has none), and for p < 0 the whole
    gradient of a vector holding a zero (its norm is 0), as in PyTorch.

    >>> import tensorlib as tl
    >>> float(tl.linalg.norm(tl.tensor([3.0, 4.0])))
    5.0
    >>> float(tl.linalg.norm(tl.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1))
    6.0
    """
    from .math import cast
    from .shape import reshape

    x = as_tensor(x)
    if x.dtype.kind in "biu":
        x = cast(x, dtype=_dt.float64)
    if axis is None:
        if ord is None:
            out = _vector_norm(reshape(x, (-1,)), None, 0, False)
            return reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim not in (1, 2):
            raise ValueError(
                f"norm: ord={ord!r} needs a 1-D or 2-D input or an explicit axis "
                f"(input shape {tuple(x.shape)} {x.dtype})"
            )
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    try:
        axes = tuple(int(a) % x.ndim if -x.ndim <= int(a) < x.ndim else _bad_axis(a) for a in axes)
    except IndexError as e:
        raise ValueError(f"norm: {e} (input shape {tuple(x.shape)} {x.dtype})") from None
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(
        f"norm: axis must name one or two different axes, got {axis!r} (input shape {tuple(x.shape)} {x.dtype})"
    )


def _bad_axis(a):
    raise IndexError(f"axis {a} is out of bounds")

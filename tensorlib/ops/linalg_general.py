"""Functions and decompositions of general (non-symmetric) matrices: ``matrix_exp``, ``eig``, ``lu``.

Batched over leading axes like the rest of ``tl.linalg``; gradient rules are
tensorlib ops (see ``linalg_ops.py``), with JAX's convention for complex
gradients (``docs/complex.md``): the rule of a holomorphic function uses plain
transposes, and a real input gets the real part of its complex cotangent.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor
from ..grad.registry import register_gradient
from ..tensor import Tensor
from .linalg_ops import (
    EigResult,
    _check_matrix,
    _column,
    _diag_embed,
    _diag_part,
    _eye_like,
    _gap_divide,
    _lapack,
    _matmul,
    _mT,
    _nan_if_not_finite,
    _row,
    _square_infer,
    solve,
)
from .registry import defop, spec

# ------------------------------------------------------------------ matrix_exp
# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the [13/13] Pade
# approximant is accurate to double precision for 1-norms up to theta_13; larger matrices are scaled by 2^-s
# and the result squared s times.
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


_expm = defop(
    "MatrixExponential",
    inputs=("x",),
    infer=_square_infer,
    doc="Matrix exponential of square matrices (scaling and squaring with a [13/13] Pade approximant).",
)


@_expm.generic
@_nan_if_not_finite()
def _expm_kernel(xp, x):
    if x.size == 0:  # float64 for integers and bools, as the shape rule says
        return xp.zeros(
            x.shape, dtype=x.dtype if xp.isdtype(x.dtype, ("real floating", "complex floating")) else xp.float64
        )
    n = x.shape[-1]
    b = _PADE13
    # One scaling per matrix of the batch; the squarings past a matrix's own count leave it unchanged.
    norm = xp.max(xp.sum(xp.abs(x), axis=-2), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        squarings = xp.ceil(xp.log2(norm / _THETA13))
    squarings = xp.where(xp.isfinite(squarings) & (squarings > 0), squarings, xp.zeros_like(squarings))
    a = x / xp.astype(2.0 ** squarings[..., None, None], x.dtype)
    eye = xp.eye(n, dtype=x.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    result = xp.linalg.solve(v - u, v + u)
    for step in range(int(xp.max(squarings)) if squarings.size else 0):
        result = xp.where((squarings > step)[..., None, None], result @ result, result)
    return result


_expm.kernel("numpy")(_lapack("MatrixExponential")(functools.partial(_expm_kernel, np)))


def _frechet_block(function, x, e):
    """The Frechet derivative of the primary matrix function ``function`` at ``x`` along ``e``: the upper right
    block of ``function([[x, e], [0, x]])`` (Mathias 1996).  It is linear in ``e``, so ``e`` is scaled to ``x``'s
    size first (a large ``e`` would cost squarings and accuracy) and the block scaled back."""
    from .math import abs as absolute
    from .math import maximum, ones_like, stop_gradient, where, zeros_like
    from .reduce import max as reduce_max
    from .shape import concat, getitem

    if tuple(x.shape[:-2]) != tuple(e.shape[:-2]):  # one block matrix: one batch shape (sizes may be unknown)
        x = x + zeros_like(e)
        e = e + zeros_like(x)
    n = x.shape[-1]
    if n == 0:
        return zeros_like(e)
    # A size unknown while tracing may be 0 when the graph runs: an initial gives those matrices a max.
    initial = 0.0 if n is None else None
    size = stop_gradient(reduce_max(absolute(e), axis=(-2, -1), keepdims=True, initial=initial))
    scale = stop_gradient(maximum(reduce_max(absolute(x), axis=(-2, -1), keepdims=True, initial=initial), 1.0))
    nonzero = size > 0
    ratio = where(nonzero, scale / where(nonzero, size, ones_like(size)), ones_like(size))
    block = function(concat([concat([x, e * ratio], axis=-1), concat([zeros_like(x), x], axis=-1)], axis=-2))
    if n is None:  # under tl.function with an unknown size: [I 0] block [0; I] picks the upper right block
        eye = _eye_like(x)
        top = concat([eye, zeros_like(eye)], axis=-1)
        return _matmul(_matmul(top, block), _mT(concat([zeros_like(eye), eye], axis=-1))) / ratio
    return getitem(block, (Ellipsis, slice(0, n), slice(n, None))) / ratio


def _expm_grad(node, g):
    # The gradient of <g, exp(x)> is L(x^T, g) (exp is holomorphic: plain transposes).
    return _frechet_block(matrix_exp, _mT(node.inputs[0]), g)


register_gradient("MatrixExponential", _expm_grad)


def matrix_exp(x) -> Tensor:
    """The matrix exponential ``exp(x) = I + x + x @ x / 2 + ...`` (``torch.linalg.matrix_exp``,
    ``scipy.linalg.expm``), batched.

    Scaling and squaring with a [13/13] Pade approximant (Higham 2005, as SciPy
    and JAX); the gradient is the Frechet derivative from the block matrix
    ``exp([[x.T, g], [0, x.T]])``, itself differentiable.  Integer input gives
    float64; complex input is supported (gradients with JAX's convention).  A matrix holding a NaN or an
    infinity gives NaN everywhere, as ``jax.scipy.linalg.expm`` and ``torch.linalg.matrix_exp`` give (SciPy
    special-cases triangular ones: ``expm([[-inf]])`` is 0 there); the other matrices of a batch are exact.

    >>> import tensorlib as tl
    >>> tl.linalg.matrix_exp(tl.tensor([[0.0, 1.0], [0.0, 0.0]])).numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return apply(_expm, (x,))


expm = matrix_exp


# ------------------------------------------------------------------ eig, eigvals
def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _eig_infer(x, *, compute_v):
    dtype = _complex_dtype(_check_matrix(x))
    w = spec(x.shape[:-1], dtype)
    return (w, spec(x.shape, dtype)) if compute_v else w


_eig = defop(
    "Eig",
    inputs=("x",),
    attrs={"compute_v": True},
    infer=_eig_infer,
    doc="Eigenvalues and (unit-norm, right) eigenvectors of general square matrices, always complex.",
)


@_eig.kernel("numpy")
@_lapack("Eig")
def _eig_kernel(x, *, compute_v):
    return _eig_finite(np, x, compute_v=compute_v)


@_nan_if_not_finite()
def _eig_finite(xp, x, *, compute_v):
    dtype = _complex_dtype(x.dtype)
    if x.shape[-1] == 0:
        w = np.zeros(x.shape[:-1], dtype=dtype)
        return (w, np.zeros(x.shape, dtype=dtype)) if compute_v else w
    if not compute_v:
        return np.linalg.eigvals(x).astype(dtype)
    w, v = np.linalg.eig(x)
    return w.astype(dtype), v.astype(dtype)


_eig.kernels_reason = "LAPACK's geev (numpy.linalg.eig); the Array API standard has no general eigensolver"


def _eig_grad(node, g_w, g_v=None):
    # x = v diag(w) v^-1.  dw = diag(v^-1 dx v) and dv = v (F o v^-1 dx v) with F_ij = 1 / (w_j - w_i), corrected
    # to keep the columns at unit norm (as LAPACK returns them).  PyTorch's rule (linalg_eig_backward), conjugated
    # for JAX's convention: x's gradient is v^-T (diag(g_w) + F o (v^T g_v - v^T conj(v) Re diag(v^T g_v))) v^T.
    from .elementwise import conj, real
    from .math import cast, zeros_like

    x = node.inputs[0]
    if node.attrs["compute_v"]:
        w, v = node.outputs
    else:
        w, v = eig(x)
    inner = _diag_embed(g_w) if g_w is not None else zeros_like(v)
    if g_v is not None:
        vt_gv = _matmul(_mT(v), g_v)
        gauge = _matmul(_mT(v), conj(v)) * _row(cast(real(_diag_part(vt_gv)), dtype=v.dtype))
        off = vt_gv - gauge
        inner = inner + _gap_divide(off, _row(w) - _column(w), abs(off) + abs(_mT(off)))
    grad = solve(_mT(v), _matmul(inner, _mT(v)))
    return grad if x.dtype.kind == "c" else real(grad)


register_gradient("Eig", _eig_grad)


def eig(x) -> EigResult:
    """Eigenvalues ``w`` and right eigenvectors ``v`` (columns, unit norm) of general square matrices, with
    ``x @ v == v * w`` (``numpy.linalg.eig``; the named tuple ``(eigenvalues, eigenvectors)``), batched.

    Always complex (complex64 for float32 input, complex128 for float64 and
    integers), as in PyTorch and JAX: NumPy returns a real array when every
    eigenvalue of a real input happens to be real, a dtype no shape rule can
    know before running.  The values, their order and the vectors' phases are
    NumPy's (LAPACK ``geev``).

    Gradients: a loss must not depend on the phase of each eigenvector (which
    is arbitrary), e.g. ``abs(v)``, ``v * conj(v)`` or the eigenvalues; then
    the gradient is PyTorch's (``torch.linalg.eig``) conjugated, JAX's
    convention (``docs/complex.md``).  It divides by eigenvalue gaps: at an
    exactly repeated eigenvalue, a loss that reads its eigenvectors gets NaN
    (as ``eigh``), while a loss of ``w`` alone keeps its gradient (it needs
    ``v`` invertible: a defective matrix has none).

    >>> import tensorlib as tl
    >>> w, v = tl.linalg.eig(tl.tensor([[2.0, 1.0], [0.0, 3.0]]))
    >>> w.numpy().tolist()
    [(2+0j), (3+0j)]
    """
    return EigResult(*apply(_eig, (x,), {"compute_v": True}))


def eigvals(x) -> Tensor:
    """Eigenvalues of general square matrices, complex (``numpy.linalg.eigvals``; see ``eig``).

    The gradient is ``v^-T diag(g) v^T``, PyTorch's conjugated (JAX's
    ``jnp.linalg.eigvals`` gives the same).

    >>> import tensorlib as tl
    >>> tl.linalg.eigvals(tl.tensor([[0.0, -1.0], [1.0, 0.0]])).numpy().tolist()
    [1j, -1j]
    """
    return apply(_eig, (x,), {"compute_v": False})


# ------------------------------------------------------------------ lu_factor, lu_solve, lu
def _lu_infer(x):
    dtype = _check_matrix(x, square=False)
    *batch, m, n = x.shape
    k = None if m is None or n is None else min(m, n)
    return spec(x.shape, dtype), spec(tuple(batch) + (k,), _dt.int32), spec(tuple(batch) + (m,), _dt.int32)


_lu = defop(
    "Lu",
    inputs=("x",),
    infer=_lu_infer,
    doc="LU factorization with partial pivoting (LAPACK getrf): l and u packed in one matrix, the row "
    "interchanges (SciPy's lu_factor) and the permutation perm they make (x[perm] == l @ u).",
)


@_lu.generic
def _lu_kernel(xp, x):
    # getrf's right-looking elimination, batched: the pivot of column j is its first entry of largest magnitude
    # (|re| + |im| for complex, as LAPACK's i?amax) on or below the diagonal; a zero column is left unscaled.
    *batch, m, n = x.shape
    k = min(m, n)
    dtype = x.dtype if xp.isdtype(x.dtype, ("real floating", "complex floating")) else xp.float64
    if x.size == 0:
        perm = xp.broadcast_to(xp.arange(m, dtype=xp.int32), tuple(batch) + (m,))
        return (
            xp.zeros(x.shape, dtype=dtype),
            xp.zeros(tuple(batch) + (k,), dtype=xp.int32),
            xp.asarray(perm, copy=True),
        )
    a = xp.reshape(xp.astype(x, dtype, copy=True), (-1, m, n))
    pivots = xp.zeros((a.shape[0], k), dtype=xp.int32)
    rows = xp.arange(m)[None, :]
    perm = xp.astype(xp.broadcast_to(rows, (a.shape[0], m)), xp.int32, copy=True)
    for j in range(k):
        column = a[:, j:, j]
        size = (
            xp.abs(xp.real(column)) + xp.abs(xp.imag(column))
            if xp.isdtype(dtype, "complex floating")
            else xp.abs(column)
        )
        p = xp.argmax(size, axis=1) + j
        pivots[:, j] = xp.astype(p, xp.int32)
        swap = xp.where(rows == j, p[:, None], xp.where(rows == p[:, None], j, rows))
        a = xp.take_along_axis(a, xp.broadcast_to(swap[:, :, None], a.shape), axis=1)
        perm = xp.take_along_axis(perm, swap, axis=1)
        pivot = a[:, j, j]
        multipliers = a[:, j + 1 :, j] / xp.where(pivot == 0, xp.ones_like(pivot), pivot)[:, None]
        a[:, j + 1 :, j] = multipliers
        a[:, j + 1 :, j + 1 :] = a[:, j + 1 :, j + 1 :] - multipliers[:, :, None] * a[:, j : j + 1, j + 1 :]
    return xp.reshape(a, x.shape), xp.reshape(pivots, tuple(batch) + (k,)), xp.reshape(perm, tuple(batch) + (m,))


# LAPACK's getrf through SciPy, one matrix at a time, where the matrices are big enough that a loop over the
# batch costs less than the batched elimination's loop over columns (each step copies the whole batch).
# Measured (median of 3, this 2-core machine): 1000 x 1000 9.3 s batched against 0.27 s, 256 of 64 x 64
# 0.69 s against 33 ms, 10000 of 8 x 8 112 ms against 53 ms, but 20000 of 4 x 4 41 ms against 66 ms.  Small
# matrices, and every matrix without SciPy, take the batched kernel.
_GETRF_MIN_SIDE = 8


@functools.cache
def _scipy_getrf(dtype):
    """SciPy's ``getrf`` for ``dtype`` (float32/64, complex64/128), None without SciPy."""
    try:
        from scipy.linalg import lapack
    except ImportError:
        return None
    return lapack.get_lapack_funcs("getrf", dtype=dtype)


@_lu.kernel("numpy")
def _lu_numpy(x):
    *batch, m, n = x.shape
    k = min(m, n)
    dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    getrf = _scipy_getrf(dtype) if k >= _GETRF_MIN_SIDE else None
    if getrf is None:
        return _lu_kernel(np, x)
    a = x.astype(dtype).reshape(-1, m, n)  # a copy: the caller's array is never written
    lu, pivots = np.empty_like(a), np.empty((a.shape[0], k), np.int32)
    for i in range(a.shape[0]):
        lu[i], pivots[i], _ = getrf(a[i], overwrite_a=True)  # info > 0: singular, factored all the same
    perm = _row_permutation(np, pivots, m)
    return lu.reshape(x.shape), pivots.reshape(tuple(batch) + (k,)), perm.reshape(tuple(batch) + (m,))


def _lu_grad(node, g_lu, *_):
    # x = P L U with unit lower L (m x k) and upper U (k x n), k = min(m, n), pivots fixed; PyTorch's
    # linalg_lu_backward with plain transposes (JAX's convention for complex x).  gL and gU are the parts of
    # the packed cotangent below and on/above the diagonal.  Square: P L^-T (tril(L^T gL, -1) + triu(gU U^T))
    # U^-T.  Wide (U = [U1 U2]): P L^-T [tril(L^T gL - gU U^T, -1) U1^-T + gU1, gU2].  Tall (L = [L1; L2]):
    # P [L1^-T triu(gU U^T - L^T gL) + gL1; gL2] U^-T.
    from .array import argsort, take_along_axis
    from .linalg_ops import _triangle, solve_triangular
    from .shape import concat, ensure_dims, expand_dims, getitem

    def columns(t, start, stop=None):
        return getitem(t, (Ellipsis, slice(None), slice(start, stop)))

    def rows(t, start, stop=None):
        return getitem(t, (Ellipsis, slice(start, stop), slice(None)))

    def times_u_inverse_t(t, packed_square):  # t U^-T, U the upper triangle of packed_square
        return _mT(solve_triangular(packed_square, _mT(t), lower=False))

    def l_inverse_t_times(packed_square, t):  # L^-T t, L the unit lower triangle of packed_square
        return solve_triangular(packed_square, t, trans=1, lower=True, unit_diagonal=True)

    x = node.inputs[0]
    m, n = x.shape[-2:]
    lu, _, perm = node.outputs
    g_lower, g_upper = _triangle(g_lu, lower=True, k=-1), _triangle(g_lu, lower=False)
    if m is None or n is None or m == n:
        if m is None or n is None:  # traced with unknown sizes: the square rule, checked at every run
            lu = ensure_dims(
                lu,
                dims=((None,) * (lu.ndim - 2) + ("n", "n"),),
                message="the gradient of an LU factorization whose sizes were unknown when traced holds for "
                "square matrices only (trace with the sizes known for a rectangular one)",
            )[0]
        lower = _triangle(lu, lower=True, k=-1) + _eye_like(lu)
        inner = _triangle(_matmul(_mT(lower), g_lower), lower=True, k=-1) + _triangle(
            _matmul(g_upper, _mT(_triangle(lu, lower=False))), lower=False
        )
        grad = times_u_inverse_t(l_inverse_t_times(lu, inner), lu)
    elif m < n:
        square = columns(lu, 0, m)
        lower = _triangle(square, lower=True, k=-1) + _eye_like(square)
        inner = _matmul(_mT(lower), columns(g_lower, 0, m)) - _matmul(g_upper, _mT(_triangle(lu, lower=False)))
        left = times_u_inverse_t(_triangle(inner, lower=True, k=-1), square) + columns(g_upper, 0, m)
        grad = l_inverse_t_times(square, concat([left, columns(g_upper, m)], axis=-1))
    else:
        square = rows(lu, 0, n)
        lower = _triangle(lu, lower=True, k=-1) + _constant_eye(m, n, lu)
        inner = _matmul(rows(g_upper, 0, n), _mT(_triangle(square, lower=False))) - _matmul(_mT(lower), g_lower)
        top = l_inverse_t_times(square, _triangle(inner, lower=False)) + rows(g_lower, 0, n)
        grad = times_u_inverse_t(concat([top, rows(g_lower, n)], axis=-2), square)
    # x = P (L U): row perm[i] of x is row i of L U, so row r of x's gradient is row inverse[r] of grad.
    return take_along_axis(grad, expand_dims(argsort(perm, axis=-1), -1), axis=-2)


def _constant_eye(m, n, like):
    from .linalg_ops import _constant

    return _constant(np.eye(m, n), like)


register_gradient("Lu", _lu_grad)


def _permutation_infer(pivots):
    if len(pivots.shape) < 1:
        raise ValueError(f"pivots must have rank >= 1, got rank {len(pivots.shape)}")
    if pivots.dtype.kind not in "iu":
        raise TypeError(f"pivots must be integers, got {pivots.dtype}")
    return spec(pivots.shape, _dt.int32)


_permutation = defop(
    "LuPivotsToPermutation",
    inputs=("pivots",),
    infer=_permutation_infer,
    differentiable=False,
    doc="The row permutation perm of the LU factorization of a square matrix (x[perm] == l @ u) from LAPACK's "
    "row interchanges.",
)


@_permutation.generic
def _permutation_kernel(xp, pivots):
    rows = k = pivots.shape[-1]
    if pivots.size == 0 or rows == 0:
        return xp.astype(xp.broadcast_to(xp.arange(rows), tuple(pivots.shape[:-1]) + (rows,)), xp.int32)
    flat = xp.reshape(xp.astype(pivots, xp.int64), (-1, k))
    if bool(xp.any((flat < 0) | (flat >= rows))):
        raise ValueError(f"pivots must lie in [0, {rows}) (a {rows}-row matrix's row interchanges)")
    return xp.reshape(_row_permutation(xp, flat, rows), tuple(pivots.shape[:-1]) + (rows,))


def _row_permutation(xp, pivots, rows):
    """perm (batch, rows) int32 from LAPACK's row interchanges pivots (batch, k): row j and row pivots[j]
    trade places, in order, starting from 0, 1, ..., rows - 1."""
    pivots = xp.astype(pivots, xp.int64)
    perm = xp.astype(xp.broadcast_to(xp.arange(rows)[None, :], (pivots.shape[0], rows)), xp.int64, copy=True)
    positions = xp.arange(rows)[None, :]
    for j in range(pivots.shape[1]):
        p = pivots[:, j : j + 1]
        swap = xp.where(positions == j, p, xp.where(positions == p, j, positions))
        perm = xp.take_along_axis(perm, swap, axis=1)
    return xp.astype(perm, xp.int32)


def lu_factor(a) -> tuple:
    """SciPy's ``lu_factor``: ``(lu, piv)`` with ``a = P @ L @ U``, batched.

    ``lu`` holds ``U`` and, below the diagonal, the unit lower ``L``; ``piv``
    (int32) holds LAPACK's row interchanges, 0-based (row ``i`` was swapped
    with row ``piv[i]``; PyTorch's ``lu_factor`` counts from 1).  Partial
    pivoting as LAPACK's ``getrf`` (largest magnitude first; a singular
    matrix factors without error, with a zero on ``U``'s diagonal).
    Differentiable, also for rectangular ``a`` (PyTorch's rule, JAX's convention for
    complex input); ``piv`` is not differentiable.

    >>> import tensorlib as tl
    >>> lu, piv = tl.linalg.lu_factor(tl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu.numpy().round(4).tolist(), piv.numpy().tolist()
    ([[3.0, 4.0], [0.3333, 0.6667]], [1, 1])
    """
    lu, pivots, _ = apply(_lu, (a,))
    return lu, pivots


def lu_solve(lu_and_piv, b, trans: int = 0) -> Tensor:
    """SciPy's ``lu_solve``: solve ``a @ x = b`` from ``lu_factor(a)`` (``a.T @ x = b`` for ``trans=1``,
    ``a.conj().T @ x = b`` for ``trans=2``); ``b`` is ``(n,)`` or ``(..., n, k)``, batch axes broadcast.

    Two triangular solves and a row permutation, so gradients reach ``b``,
    ``lu`` and, through ``lu_factor``, the matrix.

    >>> import tensorlib as tl
    >>> factors = tl.linalg.lu_factor(tl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> tl.linalg.lu_solve(factors, tl.tensor([5.0, 11.0])).numpy().round(6).tolist()
    [1.0, 2.0]
    """
    from .array import argsort, take_along_axis
    from .linalg_ops import _as_columns, _trans_code, solve_triangular
    from .shape import expand_dims, squeeze

    lu, piv = lu_and_piv
    lu, b, vector = _as_columns(lu, b)
    piv = as_tensor(piv)
    trans = _trans_code(trans, "lu_solve")
    n = lu.shape[-1] if lu.ndim >= 2 else None
    sizes = (lu.shape[-2] if lu.ndim >= 2 else -1, b.shape[-2], piv.shape[-1] if piv.ndim else -1)
    if lu.ndim < 2 or any(None not in (n, size) and size != n for size in sizes):
        raise ValueError(
            f"lu_solve: expected square lu (..., n, n), piv (..., n) and b (n,) or (..., n, k), got lu shape "
            f"{tuple(lu.shape)} {lu.dtype}, piv shape {tuple(piv.shape)} {piv.dtype}, b shape "
            f"{tuple(squeeze(b, -1).shape) if vector else tuple(b.shape)} {b.dtype}"
        )
    perm = apply(_permutation, (piv,))  # a[perm] == l @ u
    if trans == 0:  # x = U^-1 L^-1 P^T b, and P^T b = b[perm]
        index, b = _same_rank(expand_dims(perm, -1), b)
        y = solve_triangular(lu, take_along_axis(b, index, axis=-2), lower=True, unit_diagonal=True)
        x = solve_triangular(lu, y, lower=False)
    else:  # a^T = U^T L^T P^T: x = P L^-T U^-T b (conjugated for a^H), and row r of P z is row inverse[r] of z
        z = solve_triangular(
            lu, solve_triangular(lu, b, trans=trans, lower=False), trans=trans, lower=True, unit_diagonal=True
        )
        index, z = _same_rank(expand_dims(argsort(perm, axis=-1), -1), z)
        x = take_along_axis(z, index, axis=-2)
    return squeeze(x, -1) if vector else x


def _same_rank(*tensors):
    """The tensors with leading axes of size 1 added up to the highest rank (take_along_axis broadcasts the rest)."""
    from .shape import expand_dims

    rank = max(t.ndim for t in tensors)
    # New axes, not a reshape: the sizes may be unknown when traced.
    return tuple(t if t.ndim == rank else expand_dims(t, tuple(range(rank - t.ndim))) for t in tensors)


def lu(a, permute_l: bool = False, p_indices: bool = False):
    """SciPy's ``lu``: ``(p, l, u)`` with ``a = p @ l @ u``, batched; ``a`` may be rectangular (m, n):
    ``l`` is (m, k) unit lower, ``u`` (k, n) upper, ``k = min(m, n)`` (PyTorch's ``linalg.lu`` too).

    ``permute_l=True`` returns ``(p @ l, u)``; ``p_indices=True`` gives ``p``
    as row indices (int32) with ``a == l[p] @ u`` instead of a matrix.  Gradients reach ``a`` through ``l`` and
    ``u``, for rectangular ``a`` too (PyTorch's rule).

    >>> import tensorlib as tl
    >>> p, l, u = tl.linalg.lu(tl.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> p.numpy().tolist(), u.numpy().round(4).tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[3.0, 4.0], [0.0, 0.6667]])
    """
    from .array import argsort
    from .linalg_ops import _constant, _triangle
    from .math import cast
    from .shape import getitem, one_hot

    packed, _, perm = apply(_lu, (a,))  # a[perm] == l @ u
    m, n = packed.shape[-2:]
    if m is None or n is None:
        raise ValueError(
            f"lu: the matrix sizes must be known under tl.function to shape l and u (input shape "
            f"{tuple(packed.shape)} {packed.dtype}); lu_factor and lu_solve take unknown sizes"
        )
    k = min(m, n)
    lower = _triangle(getitem(packed, (Ellipsis, slice(None), slice(0, k))), lower=True, k=-1)
    lower = lower + _constant(np.eye(m, k), lower)
    upper = _triangle(getitem(packed, (Ellipsis, slice(0, k), slice(None))), lower=False)
    if p_indices and not permute_l:
        return cast(argsort(perm, axis=-1), dtype=_dt.int32), lower, upper  # SciPy's: a == l[p] @ u
    # p[perm[i], i] = 1: column i of p is the unit vector of row perm[i].
    p = _mT(cast(one_hot(perm, m), dtype=_dt.real_dtype(packed.dtype)))  # real for complex a, as SciPy's
    if permute_l:
        return _matmul(p, lower), upper
    return p, lower, upper

"""NumPy 2's (and the Array API's) other ``linalg`` functions, composed from tensorlib ops.

Each is an exact composition of the decompositions in ``linalg_ops.py`` and of
elementwise ops and reductions, so gradients (of any order), tracing and the
CuPy backend come from theirs.  Names and arguments are ``numpy.linalg``'s,
so ``np.linalg.svdvals(t)`` runs ``tl.linalg.svdvals`` (see ``docs/numpy.md``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import as_tensor, as_tensors
from ..tensor import Tensor
from .linalg_ops import _mT, _vector_norm, eigh, inv, norm, pinv, solve, svd


def _describe(*tensors) -> str:
    return ", ".join(f"shape {tuple(t.shape)} {t.dtype}" for t in tensors)


def _float_matrix(x, name: str, square: bool = False) -> Tensor:
    """``x`` as a Tensor of rank >= 2 (square if asked); integers and bools become float64 (NumPy's rule)."""
    from .math import cast

    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected a matrix (rank >= 2), got rank {x.ndim} (input {_describe(x)})")
    n, m = x.shape[-2:]
    if square and None not in (n, m) and n != m:
        raise ValueError(f"{name}: expected square matrices in the last two axes, got {n}x{m} (input {_describe(x)})")
    return cast(x, dtype=_dt.float64) if x.dtype.kind in "biu" else x


def matrix_transpose(x) -> Tensor:
    """Swap the last two axes (``numpy.linalg.matrix_transpose``, ``x.mT``).

    >>> import tensorlib as tl
    >>> tl.linalg.matrix_transpose(tl.ones((2, 3, 4))).shape
    (2, 4, 3)
    """
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: expected a matrix (rank >= 2), got rank {x.ndim} (input {_describe(x)})")
    return _mT(x)


def vecdot(x1, x2, *, axis: int = -1) -> Tensor:
    """Dot product along ``axis``, the first input conjugated; the other axes broadcast (``numpy.linalg.vecdot``).

    >>> import tensorlib as tl
    >>> tl.linalg.vecdot(tl.tensor([[1.0, 2.0], [3.0, 4.0]]), tl.tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    from .array import moveaxis
    from .elementwise import conj
    from .linalg import einsum

    x1, x2 = as_tensors(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0 or not (-min(x1.ndim, x2.ndim) <= int(axis) < min(x1.ndim, x2.ndim)):
        raise ValueError(f"vecdot: axis {axis} is out of bounds for inputs {_describe(x1, x2)}")
    n1, n2 = x1.shape[axis], x2.shape[axis]
    if None not in (n1, n2) and n1 != n2:
        raise ValueError(f"vecdot: the vectors along axis {axis} have {n1} and {n2} elements ({_describe(x1, x2)})")
    x1 = conj(x1) if x1.dtype.kind == "c" else x1
    # An einsum (not a sum of products): bool inputs give bool, as numpy.linalg.vecdot.
    return einsum("...i,...i->...", moveaxis(x1, axis, -1), moveaxis(x2, axis, -1))


def matvec(x1, x2) -> Tensor:
    """NumPy 2.2's ``matvec`` (``jax.numpy.matvec``): ``x1``'s matrices (last two axes) times ``x2``'s vectors
    (last axis), the other axes broadcast; nothing conjugated.

    >>> import tensorlib as tl
    >>> tl.matvec(tl.tensor([[1.0, 2.0], [3.0, 4.0]]), tl.tensor([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    x1, x2 = _matrix_and_vectors("matvec", x1, x2, matrix_first=True)
    return _einsum("...ij,...j->...i", x1, x2)


def vecmat(x1, x2) -> Tensor:
    """NumPy 2.2's ``vecmat`` (``jax.numpy.vecmat``): ``x1``'s vectors, conjugated, times ``x2``'s matrices;
    the other axes broadcast.

    >>> import tensorlib as tl
    >>> tl.vecmat(tl.tensor([1.0, 1.0]), tl.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [4.0, 6.0]
    """
    from .elementwise import conj

    x2, x1 = _matrix_and_vectors("vecmat", x2, x1, matrix_first=False)
    return _einsum("...i,...ij->...j", conj(x1) if x1.dtype.kind == "c" else x1, x2)


def _matrix_and_vectors(name, matrices, vectors, *, matrix_first):
    """Check the operands of matvec/vecmat as NumPy's gufunc signatures do: ``(m,n),(n)->(m)`` and
    ``(n),(n,m)->(m)`` (a 1-d "matrix" gave a wrong-shaped result), with broadcastable batch axes."""
    from ._shapes import broadcast_shapes

    matrices, vectors = as_tensors(matrices, vectors)
    inputs = _describe(*((matrices, vectors) if matrix_first else (vectors, matrices)))
    if matrices.ndim < 2 or vectors.ndim < 1:
        raise ValueError(f"{name}: expected a matrix (rank >= 2) and a vector (rank >= 1), got inputs {inputs}")
    n, k = matrices.shape[-1 if matrix_first else -2], vectors.shape[-1]
    if None not in (n, k) and n != k:
        raise ValueError(f"{name}: the matrices' {n} and the vectors' {k} elements differ (inputs {inputs})")
    try:
        broadcast_shapes(matrices.shape[:-2], vectors.shape[:-1])
    except ValueError:
        raise ValueError(f"{name}: the batch axes do not broadcast (inputs {inputs})") from None
    return matrices, vectors


def _einsum(subscripts, *operands):
    from .linalg import einsum

    return einsum(subscripts, *operands)


def outer(x1, x2) -> Tensor:
    """Outer product of two vectors (``numpy.linalg.outer``; ``tl.outer`` flattens instead).

    >>> import tensorlib as tl
    >>> tl.linalg.outer(tl.tensor([1, 2]), tl.tensor([1, 10])).numpy().tolist()
    [[1, 10], [2, 20]]
    """
    from .array import outer as flat_outer

    x1, x2 = as_tensors(x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: both inputs must be vectors (rank 1), got {_describe(x1, x2)}")
    return flat_outer(x1, x2)


def cross(x1, x2, *, axis: int = -1) -> Tensor:
    """Cross product of 3-vectors along ``axis``, the other axes broadcast (``numpy.linalg.cross``).

    >>> import tensorlib as tl
    >>> tl.linalg.cross(tl.tensor([1.0, 0.0, 0.0]), tl.tensor([0.0, 1.0, 0.0])).numpy().tolist()
    [0.0, 0.0, 1.0]
    """
    from .array import cross as array_cross

    x1, x2 = as_tensors(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0 or not (-min(x1.ndim, x2.ndim) <= int(axis) < min(x1.ndim, x2.ndim)):
        raise ValueError(f"cross: axis {axis} is out of bounds for inputs {_describe(x1, x2)}")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            f"cross: both inputs must have 3 elements along axis {axis} (a size known under tl.function), "
            f"got {_describe(x1, x2)}"
        )
    return array_cross(x1, x2, axis=axis)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """Sum of the ``offset`` diagonal of the last two axes (``numpy.linalg.trace``).

    >>> import tensorlib as tl
    >>> tl.linalg.trace(tl.tensor([[[1.0, 2.0], [3.0, 4.0]]])).numpy().tolist()
    [5.0]
    """
    from .array import trace as array_trace
    from .math import cast

    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"trace: expected a matrix (rank >= 2), got rank {x.ndim} (input {_describe(x)})")
    if dtype is None:
        return array_trace(x, offset, -2, -1)
    # Summed in the dtype asked for, as NumPy: int32 stays int32 (a sum of int32 is int64 otherwise).
    return cast(array_trace(cast(x, dtype=dtype), offset, -2, -1), dtype=dtype)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """The ``offset`` diagonal of the last two axes (``numpy.linalg.diagonal``).

    >>> import tensorlib as tl
    >>> tl.linalg.diagonal(tl.tensor([[1.0, 2.0], [3.0, 4.0]]), offset=1).numpy().tolist()
    [2.0]
    """
    from .array import diagonal as array_diagonal

    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: expected a matrix (rank >= 2), got rank {x.ndim} (input {_describe(x)})")
    return array_diagonal(x, offset, -2, -1)


def svdvals(x, /) -> Tensor:
    """Singular values, descending (``numpy.linalg.svdvals``); the gradient is exact at repeated values.

    >>> import tensorlib as tl
    >>> tl.linalg.svdvals(tl.tensor([[3.0, 0.0], [0.0, -4.0]])).numpy().tolist()
    [4.0, 3.0]
    """
    return svd(x, compute_uv=False)


def eigvalsh(a, UPLO=None, *, symmetrize_input: bool = True) -> Tensor:
    """Eigenvalues (ascending) of the symmetric part ``(a + a.T) / 2``, or of the
    triangle ``UPLO`` names (``'L'`` or ``'U'``, as NumPy), as ``tl.linalg.eigh``
    (also its ``symmetrize_input``).

    Without ``UPLO`` it differs from ``numpy.linalg.eigvalsh`` (which reads the
    lower triangle) only for non-symmetric input.  The gradient is exact at repeated eigenvalues too
    (for a loss that is symmetric in them: the sum of a repeated pair has a
    gradient, each of its two members is not differentiable there).

    >>> import tensorlib as tl
    >>> tl.linalg.eigvalsh(tl.tensor([[2.0, 1.0], [1.0, 2.0]])).numpy().round(6).tolist()
    [1.0, 3.0]
    """
    return eigh(a, UPLO, symmetrize_input)[0]


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """Array API vector norm over ``axis`` (all axes when None, or a tuple of axes) (``numpy.linalg.vector_norm``).

    ``ord`` is any number, ``inf`` or ``-inf`` (0 counts nonzero entries).  At
    a zero vector the gradient of every norm with ``ord > 0`` is 0, as in
    PyTorch, and so is the gradient at a zero entry (and, for ``ord < 0``,
    the whole gradient of a vector holding a zero, whose norm is 0).

    >>> import tensorlib as tl
    >>> float(tl.linalg.vector_norm(tl.tensor([[3.0], [4.0]])))
    5.0
    >>> tl.linalg.vector_norm(tl.tensor([[3.0, -4.0], [1.0, 0.0]]), axis=1, ord=1).numpy().tolist()
    [7.0, 1.0]
    """
    from .math import cast

    x = as_tensor(x)
    if x.dtype.kind in "biu":
        x = cast(x, dtype=_dt.float64)
    if isinstance(ord, str) or ord is None or isinstance(ord, bool):
        raise ValueError(f"vector_norm: ord must be a number, inf or -inf, got {ord!r} (input {_describe(x)})")
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        if any(not -x.ndim <= int(a) < x.ndim for a in axes) or len({int(a) % max(x.ndim, 1) for a in axes}) != len(
            axes
        ):
            raise ValueError(f"vector_norm: invalid axis {axis!r} for input {_describe(x)}")
        axes = tuple(sorted(int(a) % x.ndim for a in axes))
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """Array API matrix norm of the last two axes (``numpy.linalg.matrix_norm``): ``'fro'``, ``'nuc'``,
    1, -1, 2, -2, inf, -inf, as ``tl.linalg.norm``.

    >>> import tensorlib as tl
    >>> tl.linalg.matrix_norm(tl.tensor([[[1.0, -2.0], [3.0, 4.0]]]), ord=1).numpy().tolist()
    [6.0]
    """
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: expected a matrix (rank >= 2), got rank {x.ndim} (input {_describe(x)})")
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None) -> Tensor:
    """Condition number (``numpy.linalg.cond``): ``p`` None, 2 or -2 from the singular values (any
    shape), or ``'fro'``, ``'nuc'``, 1, -1, inf, -inf as ``norm(x, p) * norm(inv(x), p)`` (square).

    A singular matrix has condition number inf (NaN if it holds a NaN), as in
    NumPy, PyTorch and JAX, also within a batch.

    >>> import tensorlib as tl
    >>> float(tl.linalg.cond(tl.tensor([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    >>> float(tl.linalg.cond(tl.tensor([[1.0, 1.0], [0.0, 1.0]]), p=1))
    4.0
    """
    from ..dispatch import apply
    from .floating import isfinite
    from .linalg_ops import _inv
    from .math import logical_and, logical_not, not_equal, where, zeros_like
    from .reduce import all as reduce_all
    from .reduce import max as reduce_max

    x = _float_matrix(x, "cond", square=p not in (None, 2, -2))
    if 0 in x.shape[-2:]:
        raise np.linalg.LinAlgError(f"cond: not defined on empty matrices (input {_describe(x)})")
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = s[..., 0], s[..., -1]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = small / big if p == -2 else big / small
    else:
        # A singular matrix of the batch has a non-finite inverse (adj(x) / 0), not an error: it and its inverse
        # are left out of the norms (the nuclear norm's SVD would not converge on them) and its condition number
        # made NaN, then inf below.
        inverse = apply(_inv, (x,), {"singular": "inf"})
        regular = reduce_all(isfinite(inverse), axis=(-2, -1))
        kept = _matrix_mask(regular)
        x_kept, inverse = where(kept, x, zeros_like(x)), where(kept, inverse, zeros_like(inverse))
        r = where(regular, norm(x_kept, ord=p, axis=(-2, -1)) * norm(inverse, ord=p, axis=(-2, -1)), np.nan)
    # NumPy's rule: a NaN (0 / 0 for a zero matrix, a singular inverse) is inf, unless x itself holds a NaN.
    x_has_nan = reduce_max(not_equal(x, x), axis=(-2, -1))
    return where(logical_and(not_equal(r, r), logical_not(x_has_nan)), np.inf, r)


def _matrix_mask(mask):
    """A (...,) mask with two size-1 axes added, to select whole matrices of a (..., m, n) batch."""
    from .shape import expand_dims

    return expand_dims(mask, (-2, -1))


def matrix_rank(A, tol=None, hermitian: bool = False, *, rtol=None) -> Tensor:
    """Number of singular values above ``tol`` (``numpy.linalg.matrix_rank``), int64; not differentiable.

    ``tol`` defaults to ``rtol * max(s)`` with ``rtol = max(m, n) * eps``;
    ``hermitian=True`` takes the singular values from ``eigvalsh`` (the
    symmetric part).  A vector or scalar has rank 1 unless it is all zero.

    >>> import tensorlib as tl
    >>> int(tl.linalg.matrix_rank(tl.tensor([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    from .math import abs as absolute
    from .math import cast, greater, not_equal, stop_gradient
    from .reduce import max as reduce_max
    from .reduce import sum as reduce_sum
    from .shape import expand_dims, shape_size, stack

    A = stop_gradient(as_tensor(A))
    if A.dtype.kind in "biu":
        A = cast(A, dtype=_dt.float64)
    if A.ndim < 2:
        # Any nonzero element, counted (a size test read an unknown traced size as empty: rank 0).
        return cast(greater(reduce_sum(cast(not_equal(A, 0), dtype=_dt.int64)), 0), dtype=_dt.int64)
    s = absolute(eigvalsh(A)) if hermitian else svdvals(A)
    if tol is None:
        eps = np.finfo(s.dtype).eps
        if rtol is None and None in A.shape[-2:]:  # traced with an unknown matrix size: max(m, n) in the graph
            rtol = cast(reduce_max(stack([shape_size(A, (A.ndim - 2,)), shape_size(A, (A.ndim - 1,))])), s.dtype) * eps
        elif rtol is None:
            rtol = max(A.shape[-2:]) * eps
        else:
            rtol = expand_dims(cast(as_tensors(s, rtol)[1], dtype=s.dtype), -1)  # 0.1 read as float64 next to s
        tol = _largest(s) * rtol
    else:
        tol = expand_dims(cast(as_tensors(s, tol)[1], dtype=s.dtype), -1)
    return reduce_sum(cast(greater(s, tol), dtype=_dt.int64), axis=-1)


def _largest(s):
    """max(s) over the last axis, kept, and 0 for no values (NumPy's ``initial=0``)."""
    from .reduce import max as reduce_max
    from .reduce import sum as reduce_sum

    if s.shape[-1] is None:  # traced with an unknown size: a 0 appended is the max of none (s is >= 0)
        from .shape import pad

        return reduce_max(pad(s, [(0, 0)] * (s.ndim - 1) + [(0, 1)]), axis=-1, keepdims=True)
    return (reduce_sum if s.shape[-1] == 0 else reduce_max)(s, axis=-1, keepdims=True)


def multi_dot(arrays) -> Tensor:
    """Product of a chain of matrices in the cheapest order (``numpy.linalg.multi_dot``).

    The first argument may be a vector (a row), the last a vector (a column);
    the others must be matrices.  The order minimizes scalar multiplications
    (dynamic programming, as NumPy); the gradient is that of the matmuls.

    >>> import tensorlib as tl
    >>> tl.linalg.multi_dot([tl.ones((2, 3)), tl.ones((3, 4)), tl.ones(4)]).numpy().tolist()
    [12.0, 12.0]
    """
    from .linalg import matmul
    from .shape import expand_dims, squeeze

    arrays = list(as_tensors(*arrays))
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}")
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = expand_dims(arrays[0], 0)
    if last_vector:
        arrays[-1] = expand_dims(arrays[-1], -1)
    shapes = ", ".join(_describe(a) for a in arrays)
    for i, a in enumerate(arrays):
        if a.ndim != 2:
            raise ValueError(
                f"multi_dot: array {i} must be a matrix (rank 2; the first and last may be vectors), got {shapes}"
            )
        if i and a.shape[0] != arrays[i - 1].shape[1]:
            raise ValueError(f"multi_dot: arrays {i - 1} and {i} do not chain ({shapes})")
    split = _chain_order([a.shape[0] for a in arrays] + [arrays[-1].shape[1]])

    def product(i, j):
        return arrays[i] if i == j else matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    out = product(0, len(arrays) - 1)
    if first_vector:
        out = squeeze(out, 0)
    if last_vector:
        out = squeeze(out, -1)
    return out


def _chain_order(dims):
    """split[i][j]: where the cheapest product of matrices i..j splits (matrix k is dims[k] x dims[k + 1]).

    With a dimension unknown (None, under ``tl.function``) the products run left to right.
    """
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    if None in dims:
        return [[j - 1 for j in range(n)] for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def lstsq(a, b, rcond=None) -> tuple:
    """Least-squares solution of ``a @ x = b`` (``numpy.linalg.lstsq``): ``(x, residuals, rank, s)``.

    ``b`` is a vector when 1-D, else (..., m, k); leading axes broadcast.
    Singular values at or below ``rcond * max(s)`` count as zero; ``rcond``
    defaults to ``eps * max(m, n)`` (NumPy 2; a negative ``rcond`` means
    ``eps``).  ``x`` is ``pinv(a) @ b``, so its gradient (both ``a`` and ``b``)
    holds where the rank of ``a`` is constant, full rank included.
    ``residuals`` are the squared 2-norms of the columns of ``b - a @ x`` when
    ``m > n``, else empty; a rank-deficient tall ``a`` gets them too (NumPy
    returns them empty then, JAX does not: the shape cannot depend on the
    values under ``tl.function``).  ``rank`` (int32) and ``s`` are as NumPy's.

    >>> import tensorlib as tl
    >>> a = tl.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> x, residuals, rank, s = tl.linalg.lstsq(a, tl.tensor([1.0, 2.0, 2.0]))
    >>> x.numpy().round(4).tolist(), residuals.numpy().round(4).tolist(), int(rank)
    ([1.1667, 0.5], [0.1667], 2)
    """
    from .elementwise import real
    from .linalg import matmul
    from .math import abs as absolute
    from .math import cast, greater, stop_gradient
    from .reduce import sum as reduce_sum
    from .shape import expand_dims, squeeze

    a, b = as_tensors(a, b)
    dtype = np.result_type(_linalg_float(a.dtype), _linalg_float(b.dtype))
    a, b = cast(a, dtype=dtype), cast(b, dtype=dtype)
    if a.ndim < 2 or b.ndim < 1:
        raise ValueError(
            f"lstsq: a must be a matrix and b a vector or matrix, got a: {_describe(a)}, b: {_describe(b)}"
        )
    vector = b.ndim == 1
    columns = expand_dims(b, -1) if vector else b
    m, n = a.shape[-2:]
    if None in (m, n):
        raise ValueError(
            f"lstsq: the number of rows and columns of a must be known (the residuals' shape depends on them), "
            f"got a: {_describe(a)}"
        )
    if columns.shape[-2] is not None and columns.shape[-2] != m:
        raise ValueError(f"lstsq: a has {m} rows but b has {columns.shape[-2]} (a: {_describe(a)}, b: {_describe(b)})")
    eps = float(np.finfo(dtype).eps)
    rcond = eps * max(m, n) if rcond is None else (eps if float(rcond) < 0 else float(rcond))
    x = matmul(pinv(a, rcond=rcond), columns)
    s = svdvals(a)
    kept = greater(stop_gradient(s), _largest(stop_gradient(s)) * rcond)
    rank = cast(reduce_sum(cast(kept, dtype=_dt.int64), axis=-1), dtype=_dt.int32)  # LAPACK's int, as NumPy
    if m > n:
        r = columns - matmul(a, x)
        residuals = reduce_sum(r * r if dtype.kind != "c" else absolute(r) ** 2, axis=-2)
    else:  # none: x's batch shape with an empty last axis
        residuals = reduce_sum(x, axis=-2)[..., :0]
        residuals = real(residuals) if dtype.kind == "c" else residuals
    return (squeeze(x, -1) if vector else x), residuals, rank, s


def _linalg_float(dtype):
    if dtype.kind in "biu":
        return np.dtype(_dt.float64)
    if dtype == _dt.float16:
        raise TypeError("lstsq: float16 is not supported by LAPACK; cast to float32")
    return np.dtype(dtype)


def _known_sizes(a, name):
    """The matrix that ``name`` inverts is shaped from ``a``'s sizes: they must be known under tl.function."""
    if None in a.shape:
        raise ValueError(
            f"{name}: the sizes of a must be known under tl.function to form its matrix (a: {_describe(a)}); "
            f"give them in the TensorSpec"
        )


def tensorinv(a, ind: int = 2) -> Tensor:
    """Inverse of ``a`` for ``tensordot`` over ``ind`` axes (``numpy.linalg.tensorinv``).

    >>> import tensorlib as tl
    >>> tl.linalg.tensorinv(tl.reshape(tl.eye(4) * 2.0, (4, 2, 2)), ind=1).shape
    (2, 2, 4)
    """
    from .shape import reshape

    a = as_tensor(a)
    ind = int(ind)
    if not 0 < ind <= a.ndim:
        raise ValueError(f"tensorinv: ind must be a positive int up to the rank, got {ind} (input {_describe(a)})")
    _known_sizes(a, "tensorinv")
    rows, cols = math.prod(a.shape[:ind]), math.prod(a.shape[ind:])
    if rows != cols:
        raise ValueError(
            f"tensorinv: the first {ind} axes hold {rows} elements, the others {cols}: not square (input {_describe(a)})"
        )
    return reshape(inv(reshape(a, (rows, cols))), tuple(a.shape[ind:]) + tuple(a.shape[:ind]))


def tensorsolve(a, b, axes=None) -> Tensor:
    """``x`` with ``tensordot(a, x, x.ndim) == b`` (``numpy.linalg.tensorsolve``).

    >>> import tensorlib as tl
    >>> tl.linalg.tensorsolve(tl.reshape(tl.eye(4) * 2.0, (2, 2, 4)), tl.ones((2, 2))).numpy().tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    from .shape import reshape, transpose

    a, b = as_tensors(a, b)
    if axes is not None:
        order = [d for d in range(a.ndim) if d not in [int(k) % a.ndim for k in axes]]
        a = transpose(a, order + [int(k) % a.ndim for k in axes])
    _known_sizes(a, "tensorsolve")
    x_shape = tuple(a.shape[b.ndim :])
    size = math.prod(x_shape)
    if b.ndim > a.ndim or math.prod(a.shape) != size * size or b.size != size:
        raise np.linalg.LinAlgError(
            f"tensorsolve: a does not hold a square matrix over b's axes (a: {_describe(a)}, b: {_describe(b)})"
        )
    return reshape(solve(reshape(a, (size, size)), reshape(b, (size,))), x_shape)


def cholesky_solve(b, L, upper: bool = False) -> Tensor:
    """Solve ``a @ x = b`` given the Cholesky factor ``L`` of ``a`` (PyTorch's ``cholesky_solve``).

    ``L`` is lower triangular (``a = L @ L^H``, ``L^H`` its conjugate transpose), or upper with ``upper=True``
    (``a = L^H @ L``); its other triangle is not read and gets a zero gradient
    (PyTorch's fills it as if ``L`` were a full matrix).  ``b`` is (..., n, k),
    batch axes broadcast.  Two triangular solves, so both inputs have gradients.

    >>> import tensorlib as tl
    >>> factor = tl.linalg.cholesky(tl.tensor([[4.0, 2.0], [2.0, 2.0]]))
    >>> tl.linalg.cholesky_solve(tl.tensor([[2.0], [0.0]]), factor).numpy().tolist()
    [[1.0], [-1.0]]
    """
    from .linalg_ops import solve_triangular

    b, L = as_tensors(b, L)
    if b.ndim < 2:
        raise ValueError(f"cholesky_solve: b must be a matrix (..., n, k), got {_describe(b)}")
    lower = not upper
    # a = t t^H with t lower (L, or L^H when upper): t y = b, then t^H x = y.
    y = solve_triangular(L, b, trans=0 if lower else "C", lower=lower)
    return solve_triangular(L, y, trans="C" if lower else 0, lower=lower)


def block_diag(*arrs) -> Tensor:
    """The block-diagonal matrix of the given blocks, zeros elsewhere (``scipy.linalg.block_diag``,
    ``jax.scipy.linalg.block_diag``, ``torch.block_diag``): a 0-d block is ``1 x 1``, a 1-D one a row; the
    dtype is the blocks' promoted one.  Gradients reach each block.

    >>> import tensorlib as tl
    >>> tl.linalg.block_diag(tl.tensor([[1, 2]]), 3).numpy().tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    from .shape import concat, pad, reshape

    blocks = []
    for i, a in enumerate(as_tensors(*arrs)):
        if a.ndim > 2:
            raise ValueError(f"block_diag: block {i} has {a.ndim} dimensions (shape {tuple(a.shape)}); at most 2")
        if None in a.shape:
            raise ValueError(f"block_diag: block {i}'s sizes must be known (shape {tuple(a.shape)}, {a.dtype})")
        blocks.append(reshape(a, (1, -1) if a.ndim < 2 else tuple(a.shape)))
    if not blocks:
        return as_tensor(np.zeros((1, 0)))  # SciPy's answer for no blocks
    dtype = _dt.promote_types(*(b.dtype for b in blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b if b.dtype == dtype else b.astype(dtype)
        rows.append(pad(b, ((0, 0), (left, width - left - b.shape[1]))))
        left += b.shape[1]
    return concat(rows, axis=0)

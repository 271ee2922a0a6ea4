"""``scipy.linalg``'s (and ``jax.scipy.linalg``'s) functions that ``numpy.linalg`` lacks, batched, with gradients.

Structured matrices (``toeplitz``, ``circulant``) are gathers; ``cho_factor``,
``cho_solve`` and ``expm_frechet`` are compositions of the ops in
``linalg_ops.py`` and ``linalg_general.py``.  Three ops of their own run SciPy's
kernels: ``solve_sylvester`` (Bartels-Stewart), ``sqrtm`` (Schur method) and
``logm`` (inverse scaling and squaring).  Their gradient rules are tensorlib
ops: a Sylvester equation for ``solve_sylvester`` and ``sqrtm``, the block
matrix ``logm([[x^T, g], [0, x^T]])`` for ``logm`` (Mathias 1996), so they
differentiate again.  Matrix functions are holomorphic: the rules use plain
transposes, JAX's convention for complex gradients (``docs/complex.md``).
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor, as_tensors
from ..grad.registry import register_gradient
from ..tensor import Tensor
from ._optional import scipy_module
from ._shapes import broadcast_shapes
from .linalg_general import _frechet_block
from .linalg_ops import _check_matrix, _lapack, _matmul, _mT, _nan_if_not_finite, _square_infer
from .registry import defop, spec


def _scipy_linalg():
    """The ``scipy.linalg`` module; a clear ImportError if SciPy is missing."""
    return scipy_module("linalg", "tl.linalg's sqrtm, logm and solve_sylvester need SciPy: pip install scipy")


def _float_dtype(*arrays):
    """The result dtype of a linalg kernel: the inputs' promoted one, float64 for integers and bools."""
    dtype = np.result_type(*arrays)
    return np.dtype(np.float64) if dtype.kind in "biu" else dtype


def _each_matrix(fn, *arrays):
    """``fn`` on every matrix of the broadcast batch of ``arrays`` in double precision (float64 or complex128),
    the results (shaped as the last array's matrices) stacked: SciPy's functions take one matrix at a time.
    Where a matrix holds a NaN or an inf the result is NaN, as NumPy's linalg gives (SciPy raises)."""
    work = np.result_type(*arrays, np.float64)
    batch = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    arrays = [np.broadcast_to(a.astype(work), batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:]) for a in arrays]
    outs = [
        np.asarray(fn(*matrices)) if all(np.isfinite(m).all() for m in matrices) else np.full_like(matrices[-1], np.nan)
        for matrices in zip(*arrays)
    ]
    return np.stack(outs).reshape(batch + outs[0].shape)


# ------------------------------------------------------------------ solve_sylvester
def _sylvester_infer(a, b, q):
    dtype = _dt.promote_types(_check_matrix(a), _check_matrix(b), _check_matrix(q, square=False))
    n, m = a.shape[-1], b.shape[-1]
    if None not in (n, q.shape[-2]) and n != q.shape[-2] or None not in (m, q.shape[-1]) and m != q.shape[-1]:
        raise ValueError(f"a is {n}x{n} and b is {m}x{m}, so q must be {n}x{m}, got {q.shape[-2]}x{q.shape[-1]}")
    return spec(broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2]) + tuple(q.shape[-2:]), dtype)


_sylvester = defop(
    "SylvesterSolve",
    inputs=("a", "b", "q"),
    infer=_sylvester_infer,
    promote=(0, 1, 2),
    doc="x with a @ x + x @ b == q (Bartels-Stewart, scipy.linalg.solve_sylvester), batched.",
)


@_sylvester.kernel("numpy")
@_lapack("SylvesterSolve")
def _sylvester_kernel(a, b, q):
    dtype = _float_dtype(a, b, q)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    if 0 in q.shape[-2:] or 0 in batch:
        return np.zeros(batch + q.shape[-2:], dtype)
    return _each_matrix(_sylvester_one, a, b, q).astype(dtype)


def _sylvester_one(a, b, q):
    """Bartels-Stewart for one matrix (``scipy.linalg.solve_sylvester``'s steps), raising where the equation is
    singular (LAPACK's trsyl then perturbs it and SciPy returns a huge wrong answer without a word)."""
    linalg = _scipy_linalg()
    r, u = linalg.schur(a, output="real")
    s, v = linalg.schur(b.conj().T, output="real")
    (trsyl,) = linalg.get_lapack_funcs(("trsyl",), (r, s, q))
    y, scale, info = trsyl(r, s, u.conj().T @ q @ v, tranb="C")
    if info != 0:
        raise np.linalg.LinAlgError("no unique solution: a and -b have an eigenvalue in common (to working precision)")
    return u @ (y / scale) @ v.conj().T  # trsyl solves for scale * q (scale <= 1 keeps y from overflowing)


@_sylvester.generic
def _sylvester_generic(xp, a, b, q):
    """Other backends: the Kronecker form (a (x) I + I (x) b^T) vec(x) = vec(q), one dense solve of size n m
    (O((n m)^3): for the small matrices of polar's gradient; NumPy runs Bartels-Stewart)."""
    from .linalg_ops import _batched

    n, m = q.shape[-2], q.shape[-1]
    dtype = xp.result_type(a.dtype, b.dtype, q.dtype)
    if not xp.isdtype(dtype, ("real floating", "complex floating")):
        dtype = xp.float64
    a, b, q = (xp.astype(t, dtype) for t in (a, b, q))
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2]))
    if 0 in (n, m) or 0 in batch:
        return xp.zeros(batch + (n, m), dtype=dtype)
    eye_n, eye_m = xp.eye(n, dtype=dtype), xp.eye(m, dtype=dtype)
    b_t = xp.matrix_transpose(b)
    # K[i, j, k, l] = a[i, k] [j == l] + [i == k] b[l, j], acting on x[k, l].
    kron = a[..., :, None, :, None] * eye_m[:, None, :] + eye_n[:, None, :, None] * b_t[..., None, :, None, :]
    kron = xp.reshape(kron, kron.shape[:-4] + (n * m, n * m))
    kron, rhs = _batched(xp, kron, xp.reshape(q, q.shape[:-2] + (n * m, 1)))
    return xp.reshape(xp.linalg.solve(kron, rhs), batch + (n, m))


def _sylvester_grad_q(node, g):
    # a dx + dx b = dq - da x - x db: the cotangent y of q solves a^T y + y b^T = g.
    a, b, _ = node.inputs
    return solve_sylvester(_mT(a), _mT(b), g)


register_gradient(
    "SylvesterSolve",
    lambda node, g: -_matmul(_sylvester_grad_q(node, g), _mT(node.outputs[0])),
    lambda node, g: -_matmul(_mT(node.outputs[0]), _sylvester_grad_q(node, g)),
    _sylvester_grad_q,
)


def solve_sylvester(a, b, q) -> Tensor:
    """``x`` with ``a @ x + x @ b == q`` (``scipy.linalg.solve_sylvester``, ``jax.scipy.linalg.solve_sylvester``):
    ``a`` is (..., n, n), ``b`` (..., m, m), ``q`` (..., n, m), batch axes broadcast.

    Unique when no eigenvalue of ``a`` is minus one of ``b``'s; where one is (to working precision) it raises
    ``LinAlgError`` (SciPy returns a huge wrong answer).  Differentiable in all three (the gradient
    solves the transposed equation ``a^T y + y b^T = g``).  Needs SciPy.

    >>> import tensorlib as tl
    >>> a, b = tl.tensor([[2.0, 0.0], [0.0, 3.0]]), tl.tensor([[1.0]])
    >>> tl.linalg.solve_sylvester(a, b, tl.tensor([[3.0], [8.0]])).numpy().tolist()
    [[1.0], [2.0]]
    """
    return apply(_sylvester, (a, b, q))


# ------------------------------------------------------------------ sqrtm
def _real_or_nan(root, dtype):
    """SciPy's result for a real matrix: complex where the principal root (log) is not real; NaN then, as
    ``sqrt(-1.0)`` (the shape rule keeps the real dtype: pass a complex matrix for the complex one)."""
    if np.dtype(dtype).kind == "c" or root.dtype.kind != "c":
        return root.astype(dtype)
    real = np.isclose(root.imag, 0, atol=0, rtol=0) | (
        np.abs(root.imag) <= 1e3 * np.finfo(root.real.dtype).eps * np.abs(root).max(axis=(-2, -1), keepdims=True)
    )
    real = np.all(real, axis=(-2, -1), keepdims=True)
    return np.where(real, root.real, np.nan).astype(dtype)


def _matrix_function_kernel(name, undefined=()):
    """A kernel for scipy.linalg's ``name`` (sqrtm, logm) of square matrices, matrix by matrix; NaN for a
    matrix where SciPy warns one of the ``undefined`` warnings (by class name)."""

    def kernel(x):
        dtype = _float_dtype(x)
        if x.size == 0:
            return np.zeros(x.shape, dtype)
        function = getattr(_scipy_linalg(), name)
        with np.errstate(all="ignore"):
            return _real_or_nan(_each_matrix(lambda m: _quiet(function, m, undefined), x), dtype)

    return kernel


def _quiet(function, matrix, undefined=()):
    """SciPy's matrix function of one matrix without its warnings (a singular matrix: inf or NaN entries), or
    NaN where it warns one of the ``undefined`` warnings (class names: SciPy's modules for them are private)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = np.asarray(function(matrix))
    if any(w.category.__name__ in undefined for w in caught):
        return np.full_like(out, np.nan)
    return out


_sqrtm = defop(
    "MatrixSquareRoot",
    inputs=("x",),
    infer=_square_infer,
    doc="Principal square root of square matrices (scipy.linalg.sqrtm, Schur method); NaN for a real matrix "
    "whose principal root is not real.",
)
_sqrtm.kernel("numpy")(_lapack("MatrixSquareRoot")(_matrix_function_kernel("sqrtm")))
_sqrtm.kernels_reason = "scipy.linalg.sqrtm (Schur method); NumPy has no Schur decomposition"


def _sqrtm_grad(node, g):
    # s ds + ds s = dx (s = sqrtm(x)): the gradient y solves s^T y + y s^T = g.
    root_t = _mT(node.outputs[0])
    return solve_sylvester(root_t, root_t, g)


register_gradient("MatrixSquareRoot", _sqrtm_grad)


def sqrtm(x) -> Tensor:
    """The principal square root ``s`` of square matrices, ``s @ s == x`` (``scipy.linalg.sqrtm``,
    ``jax.scipy.linalg.sqrtm``), batched; its eigenvalues have non-negative real parts.

    A real matrix gives a real root, or NaN where the principal root is not real (an eigenvalue on
    the negative real axis: pass a complex matrix for the complex root, as ``tl.sqrt(-1.0)`` is NaN
    and ``tl.sqrt(-1 + 0j)`` is ``1j``); JAX always returns complex.  The gradient solves the
    Sylvester equation ``s^T y + y s^T = g``: finite at repeated eigenvalues; at a singular
    ``x`` (where the root is not differentiable) that equation is singular and the gradient raises.  Needs SciPy.

    >>> import tensorlib as tl
    >>> tl.linalg.sqrtm(tl.tensor([[4.0, 0.0], [0.0, 9.0]])).numpy().round(6).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    return apply(_sqrtm, (x,))


# ------------------------------------------------------------------ logm
_logm = defop(
    "MatrixLogarithm",
    inputs=("x",),
    infer=_square_infer,
    doc="Principal logarithm of square matrices (scipy.linalg.logm, inverse scaling and squaring); NaN for a "
    "real matrix whose principal logarithm is not real.",
)
# An exactly singular matrix has no logarithm: SciPy warns and returns the logarithm with its zero eigenvalues
# replaced by an arbitrary 1e-20 (logm([[1, 2], [2, 4]]) is [[-36.5, 19.1], [19.1, -7.9]]); NaN instead.
_logm.kernel("numpy")(
    _lapack("MatrixLogarithm")(_matrix_function_kernel("logm", undefined=("LogmExactlySingularWarning",)))
)
_logm.kernels_reason = "scipy.linalg.logm (inverse scaling and squaring); NumPy has no Schur decomposition"


# The Frechet derivative at x^T, from the block matrix (as matrix_exp's gradient).
register_gradient("MatrixLogarithm", lambda node, g: _frechet_block(logm, _mT(node.inputs[0]), g))


def logm(x) -> Tensor:
    """The principal logarithm ``l`` of square matrices, ``expm(l) == x`` (``scipy.linalg.logm``), batched; the
    imaginary parts of its eigenvalues lie in (-pi, pi].

    A real matrix gives a real logarithm, or NaN where the principal logarithm is not real (an eigenvalue on the
    negative real axis: pass a complex matrix for the complex one).  An exactly singular matrix has no logarithm:
    NaN (SciPy warns and returns a finite matrix, its zero eigenvalues replaced by an arbitrary 1e-20).  The gradient is the Frechet derivative at
    ``x^T``, the upper right block of ``logm([[x^T, g], [0, x^T]])``, itself differentiable; a singular ``x`` has
    none.  Needs SciPy.

    >>> import tensorlib as tl
    >>> tl.linalg.logm(tl.tensor([[1.0, 1.0], [0.0, 1.0]])).numpy().round(6).tolist()
    [[0.0, 1.0], [0.0, 0.0]]
    """
    return apply(_logm, (x,))


# ------------------------------------------------------------------ expm_frechet
def expm_frechet(A, E, method=None, compute_expm: bool = True, check_finite: bool = True):
    """``(expm(A), L)`` with ``L`` the Frechet derivative of the matrix exponential at ``A`` along ``E``
    (``scipy.linalg.expm_frechet``, ``jax.scipy.linalg.expm_frechet``), or ``L`` alone with
    ``compute_expm=False``; batched, differentiable in both (``method`` and ``check_finite`` are accepted).

    ``L`` is the upper right block of ``expm([[A, E], [0, A]])``.

    >>> import tensorlib as tl
    >>> e, frechet = tl.linalg.expm_frechet(tl.zeros((2, 2)), tl.tensor([[0.0, 1.0], [2.0, 0.0]]))
    >>> frechet.numpy().tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """
    from .linalg_general import matrix_exp

    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got {method!r}")
    A, E = as_tensors(A, E)
    for name, t in (("A", A), ("E", E)):
        if t.ndim < 2 or None not in t.shape[-2:] and t.shape[-1] != t.shape[-2]:
            raise ValueError(
                f"expm_frechet: {name} must be square matrices, got A shape {A.shape} {A.dtype}, "
                f"E shape {E.shape} {E.dtype}"
            )
    if None not in (A.shape[-1], E.shape[-1]) and A.shape[-1] != E.shape[-1]:
        raise ValueError(
            f"expm_frechet: A and E must have the same size, got A shape {A.shape} {A.dtype}, "
            f"E shape {E.shape} {E.dtype}"
        )
    frechet = _frechet_block(matrix_exp, A, E)
    return (matrix_exp(A), frechet) if compute_expm else frechet


# ------------------------------------------------------------------ polar
def _polar_infer(x):
    return spec(x.shape, _check_matrix(x, square=False))


_polar = defop(
    "PolarUnitary",
    inputs=("x",),
    infer=_polar_infer,
    doc="The unitary factor u of the polar decomposition of (..., m, n) matrices: w @ vh from their SVD.",
)


@_polar.generic
@_nan_if_not_finite()
def _polar_kernel(xp, x):
    if not xp.isdtype(x.dtype, ("real floating", "complex floating")):
        x = xp.astype(x, xp.float64)
    if x.size == 0:
        return xp.zeros(x.shape, dtype=x.dtype)
    w, _, vh = xp.linalg.svd(x, full_matrices=False)
    return xp.matmul(w, vh)


_polar.kernel("numpy")(_lapack("PolarUnitary")(functools.partial(_polar_kernel, np)))


def _polar_grad(node, g):
    # Tall or square x = u p, p = (x^H x)^(1/2): du = u W + (I - u u^H) dx p^-1, the skew-Hermitian W solving
    # p W + W p = u^H dx - dx^H u.  With h = conj(g) (JAX's convention), z solving p z + z p = u^H h, the
    # gradient is conj(u (z - z^H) + (h - u u^H h) p^-1); a wide x is the transpose of a tall one.
    from .elementwise import conj
    from .linalg_ops import _symmetrize, solve

    x, u = node.inputs[0], node.outputs[0]
    m, n = x.shape[-2:]
    if None in (m, n):
        raise ValueError(
            f"PolarUnitary: the gradient needs the matrix sizes (tall or wide) known under tl.function, got input "
            f"shape {tuple(x.shape)} {x.dtype}; give them in the TensorSpec"
        )
    wide = m < n
    if wide:
        x, u, g = _mT(x), _mT(u), _mT(g)
    complex_valued = x.dtype.kind == "c"
    h, u_h = (conj(g), conj(_mT(u))) if complex_valued else (g, _mT(u))
    p = _matmul(u_h, x)
    p = (p + conj(_mT(p))) * 0.5 if complex_valued else _symmetrize(p)
    z = solve_sylvester(p, p, _matmul(u_h, h))
    z_h = conj(_mT(z)) if complex_valued else _mT(z)
    outside = h - _matmul(u, _matmul(u_h, h))
    grad = _matmul(u, z - z_h) + _mT(solve(_mT(p), _mT(outside)))  # outside p^-1
    grad = conj(grad) if complex_valued else grad
    return _mT(grad) if wide else grad


register_gradient("PolarUnitary", _polar_grad)


def polar(a, side: str = "right", method=None) -> tuple:
    """The polar decomposition ``(u, p)`` (``scipy.linalg.polar``, ``jax.scipy.linalg.polar``), batched:
    ``a = u @ p`` (``side='right'``) or ``a = p @ u`` (``'left'``), ``u`` with orthonormal columns (rows, for
    a wide ``a``) and ``p`` Hermitian positive semi-definite.

    The values come from the SVD ``a = w diag(s) vh``: ``u = w @ vh``.  The
    gradient solves a Sylvester equation with ``p``, so it is finite at
    repeated singular values (an orthogonal ``a`` included), unlike a gradient
    through the SVD's vectors; it needs ``a`` of full rank (``min(m, n)``).
    ``method`` (JAX's ``'svd'`` or ``'qdwh'``) is accepted; the values do not
    depend on it.

    >>> import tensorlib as tl
    >>> u, p = tl.linalg.polar(tl.tensor([[0.0, 2.0], [3.0, 0.0]]))
    >>> u.numpy().round(6).tolist(), p.numpy().round(6).tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[3.0, 0.0], [0.0, 2.0]])
    """
    from .elementwise import conj

    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in (None, "svd", "qdwh"):
        raise ValueError(f"polar: method must be None, 'svd' or 'qdwh', got {method!r}")
    a = as_tensor(a)
    if a.ndim < 2:
        raise ValueError(f"polar: expected a matrix (rank >= 2), got shape {tuple(a.shape)} {a.dtype}")
    u = apply(_polar, (a,))
    a = a.astype(u.dtype) if a.dtype != u.dtype else a  # integers: float64, as the factor
    u_h = conj(_mT(u)) if u.dtype.kind == "c" else _mT(u)
    p = _matmul(u_h, a) if side == "right" else _matmul(a, u_h)
    return u, (p + (conj(_mT(p)) if p.dtype.kind == "c" else _mT(p))) * 0.5


# ------------------------------------------------------------------ cho_factor, cho_solve
def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """``(c, lower)``: the Cholesky factor of ``a`` for ``cho_solve`` (``scipy.linalg.cho_factor``), batched.

    ``c`` is upper triangular with ``a = c^H @ c`` (lower, ``a = c @ c^H``, with ``lower=True``); as SciPy
    it reads only that triangle of ``a``; the other triangle of ``c`` is zero (SciPy leaves whatever was
    there; JAX zeros it too).  ``overwrite_a`` and ``check_finite`` are accepted (nothing is overwritten).

    >>> import tensorlib as tl
    >>> c, lower = tl.linalg.cho_factor(tl.tensor([[4.0, 2.0], [2.0, 2.0]]))
    >>> c.numpy().tolist(), lower
    ([[2.0, 1.0], [0.0, 1.0]], False)
    """
    from .linalg_ops import cholesky

    return cholesky(a, upper=not lower, symmetrize_input=False), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True) -> Tensor:
    """Solve ``a @ x = b`` from ``cho_factor(a)`` (``scipy.linalg.cho_solve``); ``b`` is (n,) or (..., n, k),
    batch axes broadcast; differentiable in ``c`` (its triangle) and ``b``.

    >>> import tensorlib as tl
    >>> factor = tl.linalg.cho_factor(tl.tensor([[4.0, 2.0], [2.0, 2.0]]))
    >>> tl.linalg.cho_solve(factor, tl.tensor([2.0, 0.0])).numpy().tolist()
    [1.0, -1.0]
    """
    from .linalg_functions import cholesky_solve
    from .linalg_ops import _as_columns
    from .shape import squeeze

    c, lower = c_and_lower
    c, b, vector = _as_columns(c, b)
    if c.ndim < 2 or None not in (c.shape[-1], b.shape[-2]) and c.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"cho_solve: c must be (..., n, n) and b (n,) or (..., n, k), got c shape {tuple(c.shape)} {c.dtype}, "
            f"b shape {tuple(squeeze(b, -1).shape) if vector else tuple(b.shape)} {b.dtype}"
        )
    x = cholesky_solve(b, c, upper=not lower)
    return squeeze(x, -1) if vector else x


# ------------------------------------------------------------------ toeplitz, circulant
def _take_last(values, index):
    """values[..., index] for an (m, n) array of indices: (..., m, n)."""
    from .shape import gather

    return gather(values, _constant_index(index), axis=values.ndim - 1)


def _constant_index(index):
    from .creation import tensor

    return tensor(np.asarray(index, dtype=np.int64))


def toeplitz(c, r=None) -> Tensor:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``scipy.linalg.toeplitz``,
    ``jax.scipy.linalg.toeplitz``): ``t[i, j] = c[i - j]`` for ``i >= j``, else ``r[j - i]``; ``r[0]`` is
    ignored, and ``r`` defaults to ``conj(c)`` (a Hermitian matrix).  Leading axes of ``c`` and ``r``
    broadcast as batch axes (JAX's rule; SciPy 1.17 does the same).

    >>> import tensorlib as tl
    >>> tl.linalg.toeplitz(tl.tensor([1, 2, 3]), tl.tensor([1, 4])).numpy().tolist()
    [[1, 4], [2, 1], [3, 2]]
    """
    from .array import flip
    from .elementwise import conj
    from .shape import broadcast_to, concat, getitem

    c, r = as_tensors(c, r)
    r = (conj(c) if c.dtype.kind == "c" else c) if r is None else r
    c, r = (t if t.ndim else t.reshape((1,)) for t in (c, r))
    m, n = c.shape[-1], r.shape[-1]
    if None in (m, n):
        raise ValueError(f"toeplitz: the lengths of c and r must be known, got c shape {c.shape}, r shape {r.shape}")
    dtype = _dt.promote_types(c.dtype, r.dtype)
    batch = broadcast_shapes(tuple(c.shape[:-1]), tuple(r.shape[:-1]))
    c, r = broadcast_to(c.astype(dtype), batch + (m,)), broadcast_to(r.astype(dtype), batch + (n,))
    values = concat([flip(c, -1), getitem(r, (Ellipsis, slice(1, None)))], axis=-1)
    return _take_last(values, m - 1 - np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c) -> Tensor:
    """The circulant matrix with first column ``c`` (``scipy.linalg.circulant``): ``t[i, j] = c[(i - j) % n]``;
    leading axes of ``c`` are batch axes.

    >>> import tensorlib as tl
    >>> tl.linalg.circulant(tl.tensor([1, 2, 3])).numpy().tolist()
    [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    """
    c = as_tensor(c)
    c = c if c.ndim else c.reshape((1,))
    n = c.shape[-1]
    if n is None:
        raise ValueError(f"circulant: the length of c must be known, got shape {c.shape} {c.dtype}")
    return _take_last(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1))


# ------------------------------------------------------------------ schur, hessenberg (values only)
def _each_factorization(fn, x, dtype, outputs):
    """``fn`` (returning ``outputs`` square matrices) on every matrix of x's batch, in double precision, each
    result stacked and cast to ``dtype``."""
    if x.size == 0:
        return tuple(np.zeros(x.shape, dtype) for _ in range(outputs))
    flat = x.astype(np.result_type(x, np.float64)).reshape((-1,) + x.shape[-2:])
    nan = [np.full_like(flat[0], np.nan)] * outputs  # a matrix holding a NaN or an inf (SciPy raises), as _each_matrix
    results = [fn(m) if np.isfinite(m).all() else nan for m in flat]
    return tuple(np.stack([r[k] for r in results]).reshape(x.shape).astype(dtype) for k in range(outputs))


def _not_differentiable_factorization(name, instead):
    def rule(node, *grads):
        x = node.inputs[0]
        raise LookupError(
            f"{name}: no gradient (input shape {tuple(x.shape)} {x.dtype}): its factors are not unique (any "
            f"unitary change of basis within repeated eigenvalues, and signs), as in JAX, which does not "
            f"differentiate it either; differentiate {instead} instead"
        )

    return rule


def _schur_infer(x, *, output):
    if output not in ("real", "complex"):
        raise ValueError(f"output must be 'real' or 'complex', got {output!r}")
    dtype = _check_matrix(x)
    dtype = np.result_type(dtype, np.complex64) if output == "complex" else dtype
    return spec(x.shape, dtype), spec(x.shape, dtype)


_schur = defop(
    "Schur",
    inputs=("x",),
    attrs={"output": "real"},
    infer=_schur_infer,
    doc="Schur decomposition x = z t z^H (scipy.linalg.schur): t (quasi-)upper triangular, z unitary.",
)


@_schur.kernel("numpy")
@_lapack("Schur")
def _schur_kernel(x, *, output):
    dtype = _float_dtype(x)
    dtype = np.result_type(dtype, np.complex64) if output == "complex" else dtype
    return _each_factorization(lambda m: _scipy_linalg().schur(m, output=output), x, dtype, 2)


_schur.kernels_reason = "scipy.linalg.schur (LAPACK gees); the Array API standard has no Schur decomposition"
register_gradient("Schur", _not_differentiable_factorization("Schur", "eig, eigvals or the matrix function"))


def schur(a, output: str = "real") -> tuple:
    """The Schur decomposition ``(t, z)`` with ``a = z @ t @ z^H`` (``scipy.linalg.schur``,
    ``jax.scipy.linalg.schur``), batched: ``z`` unitary, ``t`` upper triangular (``output='complex'``; complex
    for real ``a`` too) or, for real ``a`` with ``output='real'``, quasi-upper triangular with 2 x 2 blocks for
    complex eigenvalue pairs.

    Values only: asking for a gradient raises ``LookupError`` (the factors are not unique; JAX has no
    rule either).  Needs SciPy.

    >>> import tensorlib as tl
    >>> t, z = tl.linalg.schur(tl.tensor([[1.0, 2.0], [0.0, 3.0]]))
    >>> t.numpy().tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    """
    t, z = apply(_schur, (a,), {"output": output})
    return t, z


def _hessenberg_infer(x, *, calc_q):
    dtype = _check_matrix(x)
    return (spec(x.shape, dtype), spec(x.shape, dtype)) if calc_q else spec(x.shape, dtype)


_hessenberg = defop(
    "Hessenberg",
    inputs=("x",),
    attrs={"calc_q": False},
    infer=_hessenberg_infer,
    doc="Hessenberg form x = q h q^H (scipy.linalg.hessenberg): h zero below its first subdiagonal, q unitary.",
)


@_hessenberg.kernel("numpy")
@_lapack("Hessenberg")
def _hessenberg_kernel(x, *, calc_q):
    def one(m):
        out = _scipy_linalg().hessenberg(m, calc_q=calc_q)
        return out if calc_q else (out,)

    out = _each_factorization(one, x, _float_dtype(x), 2 if calc_q else 1)
    return out if calc_q else out[0]


_hessenberg.kernels_reason = "scipy.linalg.hessenberg (LAPACK gehrd); the Array API standard has no Hessenberg form"
register_gradient("Hessenberg", _not_differentiable_factorization("Hessenberg", "the quantity you need"))


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The upper Hessenberg form ``h`` of ``a``, or ``(h, q)`` with ``a = q @ h @ q^H`` for ``calc_q=True``
    (``scipy.linalg.hessenberg``, ``jax.scipy.linalg.hessenberg``), batched.

    Values only: asking for a gradient raises ``LookupError``.  Needs SciPy.

    >>> import tensorlib as tl
    >>> h = tl.linalg.hessenberg(tl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]))
    >>> float(abs(h[2, 0]))
    0.0
    """
    return apply(_hessenberg, (a,), {"calc_q": bool(calc_q)})


# ------------------------------------------------------------------ trigonometric and hyperbolic matrix functions
def _square_float(a, name):
    """``a`` as a Tensor of square matrices, integers and bools as float64; a clear error naming ``name``."""
    from .linalg_ops import _as_float

    a = _as_float(as_tensor(a))
    if a.ndim < 2 or None not in a.shape[-2:] and a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected square matrices in the last two axes, got shape {tuple(a.shape)} {a.dtype}")
    return a


def _exp_of_i_times(a):
    """expm(1j a), complex (complex64 for float32 a)."""
    from .linalg_general import _complex_dtype, matrix_exp
    from .math import cast

    return matrix_exp(cast(a, dtype=_complex_dtype(a.dtype)) * 1j)


def cosm(A) -> Tensor:
    """The matrix cosine ``(expm(1j A) + expm(-1j A)) / 2`` (``scipy.linalg.cosm``), batched; real for real ``A``.

    Computed from ``expm``, so its gradient (the Frechet derivative of ``expm``) is exact at repeated
    eigenvalues too.

    >>> import tensorlib as tl
    >>> tl.linalg.cosm(tl.zeros((2, 2))).numpy().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    from .elementwise import real

    A = _square_float(A, "cosm")
    if A.dtype.kind != "c":
        return real(_exp_of_i_times(A))
    return (_exp_of_i_times(A) + _exp_of_i_times(-A)) * 0.5


def sinm(A) -> Tensor:
    """The matrix sine ``(expm(1j A) - expm(-1j A)) / 2j`` (``scipy.linalg.sinm``), batched; real for real ``A``.

    >>> import tensorlib as tl
    >>> tl.linalg.sinm(tl.tensor([[0.0, 1.0], [0.0, 0.0]])).numpy().tolist()
    [[0.0, 1.0], [0.0, 0.0]]
    """
    from .elementwise import imag

    A = _square_float(A, "sinm")
    if A.dtype.kind != "c":
        return imag(_exp_of_i_times(A))
    return (_exp_of_i_times(A) - _exp_of_i_times(-A)) * -0.5j


def tanm(A) -> Tensor:
    """The matrix tangent ``cosm(A)^-1 sinm(A)`` (``scipy.linalg.tanm``), batched; a singular ``cosm(A)`` raises.

    >>> import tensorlib as tl
    >>> round(float(tl.linalg.tanm(tl.tensor([[0.5]]))[0, 0]), 6)
    0.546302
    """
    from .linalg_ops import solve

    A = _square_float(A, "tanm")
    return solve(cosm(A), sinm(A))


def coshm(A) -> Tensor:
    """The matrix hyperbolic cosine ``(expm(A) + expm(-A)) / 2`` (``scipy.linalg.coshm``), batched.

    >>> import tensorlib as tl
    >>> tl.linalg.coshm(tl.zeros((1, 1))).numpy().tolist()
    [[1.0]]
    """
    from .linalg_general import matrix_exp

    A = _square_float(A, "coshm")
    return (matrix_exp(A) + matrix_exp(-A)) * 0.5


def sinhm(A) -> Tensor:
    """The matrix hyperbolic sine ``(expm(A) - expm(-A)) / 2`` (``scipy.linalg.sinhm``), batched.

    >>> import tensorlib as tl
    >>> tl.linalg.sinhm(tl.tensor([[0.0, 1.0], [0.0, 0.0]])).numpy().tolist()
    [[0.0, 1.0], [0.0, 0.0]]
    """
    from .linalg_general import matrix_exp

    A = _square_float(A, "sinhm")
    return (matrix_exp(A) - matrix_exp(-A)) * 0.5


def tanhm(A) -> Tensor:
    """The matrix hyperbolic tangent ``coshm(A)^-1 sinhm(A)`` (``scipy.linalg.tanhm``), batched.

    >>> import tensorlib as tl
    >>> round(float(tl.linalg.tanhm(tl.tensor([[0.5]]))[0, 0]), 6)
    0.462117
    """
    from .linalg_ops import solve

    A = _square_float(A, "tanhm")
    return solve(coshm(A), sinhm(A))


# ------------------------------------------------------------------ fractional_matrix_power
def fractional_matrix_power(A, t) -> Tensor:
    """``A`` to the real power ``t`` (``scipy.linalg.fractional_matrix_power``), batched: ``matrix_power`` for an
    integer ``t``, else ``expm(t logm(A))``, the principal power.

    As ``sqrtm`` and ``logm``: a real matrix whose principal power is not real (an eigenvalue on the negative
    real axis) gives NaN (pass a complex matrix; SciPy returns complex), a singular one NaN for a
    non-integer ``t``.  Differentiable in ``A`` (through ``logm`` and ``expm``, exact at repeated eigenvalues).
    Needs SciPy.

    >>> import tensorlib as tl
    >>> tl.linalg.fractional_matrix_power(tl.tensor([[4.0, 0.0], [0.0, 9.0]]), 0.5).numpy().round(6).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    from .linalg_general import matrix_exp
    from .linalg_ops import matrix_power

    A = _square_float(A, "fractional_matrix_power")
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)):
        raise TypeError(f"fractional_matrix_power: t must be a real number, got {type(t).__name__} {t!r}")
    if float(t) == int(t):
        return matrix_power(A, int(t))
    return matrix_exp(logm(A) * float(t))


# ------------------------------------------------------------------ kron, khatri_rao
def kron(a, b) -> Tensor:
    """The Kronecker product of matrices (``scipy.linalg.kron``, ``numpy.kron`` of 2-D arrays):
    ``out[i p + k, j q + l] = a[i, j] b[k, l]`` for ``b`` of shape (p, q); leading axes broadcast as a batch.

    >>> import tensorlib as tl
    >>> tl.linalg.kron(tl.tensor([[1, 2]]), tl.tensor([[1], [10]])).numpy().tolist()
    [[1, 2], [10, 20]]
    """
    from .shape import expand_dims, reshape

    a, b = as_tensors(a, b)
    if a.ndim < 2 or b.ndim < 2 or None in a.shape[-2:] + b.shape[-2:]:
        raise ValueError(
            f"kron: expected matrices of known sizes (rank >= 2), got a shape {tuple(a.shape)} {a.dtype}, "
            f"b shape {tuple(b.shape)} {b.dtype}"
        )
    (m, n), (p, q) = a.shape[-2:], b.shape[-2:]
    product = expand_dims(a, (-3, -1)) * expand_dims(b, (-4, -2))  # (..., m, p, n, q)
    return reshape(product, tuple(product.shape[:-4]) + (m * p, n * q))


def khatri_rao(a, b) -> Tensor:
    """The column-wise Kronecker product (``scipy.linalg.khatri_rao``): ``a`` (m, k) and ``b`` (p, k) give
    (m p, k) with column j ``kron(a[:, j], b[:, j])``; leading axes broadcast as a batch.

    >>> import tensorlib as tl
    >>> tl.linalg.khatri_rao(tl.tensor([[1, 2]]), tl.tensor([[1, 2], [10, 20]])).numpy().tolist()
    [[1, 4], [10, 40]]
    """
    from .shape import expand_dims, reshape

    a, b = as_tensors(a, b)
    if None in a.shape[-2:] + b.shape[-2:]:
        raise ValueError(
            f"khatri_rao: the matrix sizes must be known (give them in the TensorSpec), got a shape "
            f"{tuple(a.shape)} {a.dtype}, b shape {tuple(b.shape)} {b.dtype}"
        )
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"khatri_rao: expected matrices with the same number of columns, got a shape {tuple(a.shape)} "
            f"{a.dtype}, b shape {tuple(b.shape)} {b.dtype}"
        )
    product = expand_dims(a, -2) * expand_dims(b, -3)  # (..., m, p, k)
    return reshape(product, tuple(product.shape[:-3]) + (a.shape[-2] * b.shape[-2], a.shape[-1]))


# ------------------------------------------------------------------ Lyapunov equations
def _hermitian_transpose(a):
    from .elementwise import conj

    return conj(_mT(a)) if a.dtype.kind == "c" else _mT(a)


def solve_continuous_lyapunov(a, q) -> Tensor:
    """``x`` with ``a @ x + x @ a^H == q`` (``scipy.linalg.solve_continuous_lyapunov``), batched; a Sylvester
    equation, so it raises ``LinAlgError`` where ``a`` and ``-a^H`` share an eigenvalue.  Differentiable in both.

    >>> import tensorlib as tl
    >>> tl.linalg.solve_continuous_lyapunov(tl.tensor([[-1.0, 0.0], [0.0, -2.0]]), tl.eye(2)).numpy().tolist()
    [[-0.5, 0.0], [0.0, -0.25]]
    """
    a, q = _lyapunov_operands(a, q, "solve_continuous_lyapunov")
    return solve_sylvester(a, _hermitian_transpose(a), q)


def _lyapunov_operands(a, q, name):
    """``a`` and ``q`` as Tensors of square matrices of one size (where known); one error naming ``name``."""
    a, q = _square_float(a, name), _square_float(q, name)
    if None not in (a.shape[-1], q.shape[-1]) and a.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"{name}: a and q must have the same size, got a shape {tuple(a.shape)} {a.dtype}, "
            f"q shape {tuple(q.shape)} {q.dtype}"
        )
    return a, q


def solve_discrete_lyapunov(a, q, method=None) -> Tensor:
    """``x`` with ``a @ x @ a^H - x + q == 0`` (``scipy.linalg.solve_discrete_lyapunov``), batched.

    ``method='direct'`` solves the n^2 x n^2 Kronecker system ``(I - kron(a, conj(a))) vec(x) = vec(q)``;
    ``'bilinear'`` maps it to a continuous Lyapunov equation; None picks ``'direct'`` below n = 10, as SciPy.
    Differentiable in both.

    >>> import tensorlib as tl
    >>> tl.linalg.solve_discrete_lyapunov(tl.tensor([[0.5, 0.0], [0.0, 0.0]]), tl.eye(2)).numpy().round(6).tolist()
    [[1.333333, 0.0], [0.0, 1.0]]
    """
    from .elementwise import conj
    from .linalg_ops import _eye_like, inv, solve
    from .shape import reshape

    if method not in (None, "direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: method must be None, 'direct' or 'bilinear', got {method!r}")
    a, q = _lyapunov_operands(a, q, "solve_discrete_lyapunov")
    n = a.shape[-1]
    if None in (n, q.shape[-1]):
        raise ValueError(
            f"solve_discrete_lyapunov: the matrix sizes must be known (give them in the TensorSpec), got a shape "
            f"{tuple(a.shape)} {a.dtype}, q shape {tuple(q.shape)} {q.dtype}"
        )
    if method == "direct" or method is None and n < 10:
        lhs = kron(a, conj(a) if a.dtype.kind == "c" else a)
        lhs = _eye_like(lhs) - lhs
        x = solve(lhs, reshape(q, tuple(q.shape[:-2]) + (n * n, 1)))
        return reshape(x, tuple(x.shape[:-2]) + (n, n))
    # SciPy's bilinear transformation: b = (a^H - I)(a^H + I)^-1, c = 2 (a + I)^-1 q (a^H + I)^-1.
    eye = _eye_like(a)
    a_h = _hermitian_transpose(a)
    inverse = inv(a_h + eye)
    b = _matmul(a_h - eye, inverse)
    c = 2.0 * _matmul(solve(a + eye, q), inverse)
    return solve_continuous_lyapunov(_hermitian_transpose(b), -c)


# ------------------------------------------------------------------ solve_banded
def solve_banded(l_and_u, ab, b, overwrite_ab: bool = False, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a @ x = b`` for the banded ``a`` stored as ``ab[u + i - j, j] == a[i, j]``
    (``scipy.linalg.solve_banded``; ``(l, u)`` the numbers of sub- and superdiagonals), batched over
    leading axes of ``ab`` (and ``b``); ``b`` is (n,) or (..., n, k).  The band is unpacked into a dense matrix,
    so this costs a dense solve; differentiable in ``ab`` (its band entries) and ``b``.

    >>> import tensorlib as tl
    >>> ab = tl.tensor([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]])  # tridiagonal [1, 2, 1]
    >>> tl.linalg.solve_banded((1, 1), ab, tl.tensor([3.0, 4.0, 3.0])).numpy().round(6).tolist()
    [1.0, 1.0, 1.0]
    """
    from .linalg_ops import solve
    from .math import where, zeros_like
    from .shape import reshape

    ab, b = as_tensors(ab, b)
    try:
        lower, upper = (operator.index(v) for v in l_and_u)  # int(1.5) read (1.5, 1) as (1, 1)
    except (TypeError, ValueError):
        lower = upper = -1
    if min(lower, upper) < 0:
        raise ValueError(f"solve_banded: (l, u) must be two non-negative integers, got {l_and_u!r}")
    if ab.ndim >= 2 and None in ab.shape[-2:]:
        raise ValueError(
            f"solve_banded: the sizes of ab must be known (give them in the TensorSpec), got ab shape "
            f"{tuple(ab.shape)} {ab.dtype}"
        )
    if ab.ndim < 2 or ab.shape[-2] != lower + upper + 1:
        raise ValueError(
            f"solve_banded: ab must have l + u + 1 = {lower + upper + 1} rows for (l, u) = ({lower}, {upper}), "
            f"got ab shape {tuple(ab.shape)} {ab.dtype}"
        )
    n = ab.shape[-1]
    rows = b.shape[-1] if b.ndim == 1 else b.shape[-2] if b.ndim else None
    if rows != n and rows is not None:
        raise ValueError(
            f"solve_banded: b must have n = {n} rows (ab's columns), (n,) or (..., n, k), got ab shape "
            f"{tuple(ab.shape)} {ab.dtype}, b shape {tuple(b.shape)} {b.dtype}"
        )
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    row = upper + i - j
    inside = (row >= 0) & (row <= lower + upper)
    flat = reshape(ab, tuple(ab.shape[:-2]) + (ab.shape[-2] * n,))
    dense = _take_last(flat, np.where(inside, row, 0) * n + j)
    dense = where(_constant_index(inside).astype(bool), dense, zeros_like(dense))
    return solve(dense, b)


# ------------------------------------------------------------------ orth, null_space, subspace_angles
def _numerical_rank(s, shape, rcond, name):
    """SciPy's rank for orth and null_space: the singular values above max(s) * rcond (eps * max(m, n) by
    default).  It sets the result's shape, so it is read eagerly (a traced value has none)."""
    try:
        values = s.numpy()
    except Exception as e:  # a symbolic Tensor under tl.function
        raise ValueError(
            f"{name}: the number of columns is the numerical rank of the input, known only when it runs; "
            f"call it outside tl.function (input shape {shape})"
        ) from e
    if rcond is None:
        rcond = np.finfo(values.dtype).eps * max(shape)
    return int(np.sum(values > (values.max(initial=0.0) * rcond)))


def _matrix_2d(a, name):
    from .linalg_ops import _as_float

    a = _as_float(as_tensor(a))
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a matrix (2-D), got shape {tuple(a.shape)} {a.dtype}")
    return a


def orth(A, rcond=None) -> Tensor:
    """An orthonormal basis of the range of ``A`` (``scipy.linalg.orth``): the left singular vectors of the
    singular values above ``max(s) * rcond``.  2-D, eager only (the rank sets the shape).  The basis is SVD's
    (any rotation of it spans the same space): differentiate a quantity that does not depend on it (the
    projector ``q @ q^H``), with distinct singular values (as ``svd``).

    >>> import tensorlib as tl
    >>> tl.linalg.orth(tl.tensor([[2.0, 0.0], [0.0, 0.0]])).numpy().round(6).tolist()
    [[1.0], [0.0]]
    """
    from .linalg_ops import svd
    from .shape import getitem

    A = _matrix_2d(A, "orth")
    u, s, _ = svd(A, full_matrices=False)
    return getitem(u, (slice(None), slice(0, _numerical_rank(s, tuple(A.shape), rcond, "orth"))))


def null_space(A, rcond=None, *, overwrite_a: bool = False, check_finite: bool = True, lapack_driver=None):
    """An orthonormal basis of the null space of ``A`` (``scipy.linalg.null_space``): the conjugated right
    singular vectors past the numerical rank (singular values above ``max(s) * rcond``).  2-D, eager only.

    Differentiable where the rank is constant: the basis moves as ``dz = -pinv(A) dA z`` (the least change that
    keeps ``A z = 0`` and ``z`` orthonormal), so quantities that do not depend on the basis chosen (the
    projector ``z @ z^H``) get their exact gradients, to every order.

    >>> import tensorlib as tl
    >>> a = tl.tensor([[1.0, 1.0], [1.0, 1.0]])
    >>> z = tl.linalg.null_space(a)
    >>> z.shape, float(abs(a @ z).max()) < 1e-6
    ((2, 1), True)
    """
    from .linalg_ops import svd
    from .math import stop_gradient
    from .shape import getitem

    A = _matrix_2d(A, "null_space")
    _, s, vh = svd(A, full_matrices=True)
    rank = _numerical_rank(s, tuple(A.shape), rcond, "null_space")
    basis = _hermitian_transpose(getitem(vh, (slice(rank, None), slice(None))))
    if rank == 0 or basis.shape[-1] == 0:  # the whole space (its dimension jumps with A) or none
        return basis
    return _following(A, stop_gradient(basis), rcond)


def _following(A, basis, rcond):
    """``basis`` (of the null space of ``A``, its gradient stopped) as a value whose derivatives are those of the
    orthonormal basis ``y (y^H y)^(-1/2)`` with ``y = (I - pinv(A) A) basis``, the projection of ``basis`` onto the
    null space of a nearby ``A``: an exact basis of it, equal to ``basis`` at ``A`` (its rows past ``min(m, n)``
    came from ``svd(full_matrices=True)``, whose gradient ignores them: the gradient was 0)."""
    from .linalg_ops import cholesky, pinv, solve_triangular
    from .math import stop_gradient

    cutoff = np.finfo(np.dtype(A.dtype)).eps * max(A.shape) if rcond is None else rcond
    y = basis - _matmul(pinv(A, rcond=cutoff), _matmul(A, basis))
    lower = cholesky(_matmul(_hermitian_transpose(y), y))
    moving = _hermitian_transpose(solve_triangular(lower, _hermitian_transpose(y), lower=True))
    return basis + (moving - stop_gradient(moving))  # the value is exactly basis (SciPy's)


def subspace_angles(A, B) -> Tensor:
    """The principal angles between the column spaces of ``A`` and ``B``, descending
    (``scipy.linalg.subspace_angles``, Knyazev and Argentati's algorithm: arcsin of the sines for the small
    angles, arccos of the cosines for the others; SciPy swaps the two when small and large angles mix, and
    loses the small ones).  2-D, eager only; differentiable where the singular values
    involved are distinct.

    >>> import tensorlib as tl
    >>> x, y = tl.tensor([[1.0], [0.0]]), tl.tensor([[1.0], [1.0]])
    >>> round(float(tl.linalg.subspace_angles(x, y)[0]), 6)
    0.785398
    """
    from .array import flip
    from .elementwise import arccos, arcsin
    from .linalg_functions import svdvals
    from .math import clip, where

    A, B = _matrix_2d(A, "subspace_angles"), _matrix_2d(B, "subspace_angles")
    if A.shape[0] != B.shape[0]:
        raise ValueError(
            f"subspace_angles: A and B must have the same number of rows, got A shape {tuple(A.shape)} "
            f"{A.dtype}, B shape {tuple(B.shape)} {B.dtype}"
        )
    qa, qb = orth(A), orth(B)
    qa_h_qb = _matmul(_hermitian_transpose(qa), qb)
    sigma = svdvals(qa_h_qb)
    if qa.shape[1] >= qb.shape[1]:
        rest = qb - _matmul(qa, qa_h_qb)
    else:
        rest = qa - _matmul(qb, _hermitian_transpose(qa_h_qb))
    # Descending angles: the sines of `rest` descend, the cosines ascend reversed.  arcsin where the angle is
    # below pi / 4 (SciPy's mask reads sigma unreversed, so with one small and one large angle it takes
    # arccos(cos(1e-10)) = 0 for the small one).
    cosines = flip(sigma, -1)
    sines = arcsin(clip(svdvals(rest), -1.0, 1.0))
    return where(cosines * cosines >= 0.5, sines, arccos(clip(cosines, -1.0, 1.0)))


# ------------------------------------------------------------------ ldl
def _ldl_infer(x, *, lower, hermitian):
    dtype = _check_matrix(x)
    return spec(x.shape, dtype), spec(x.shape, dtype), spec(x.shape[:-1], _dt.int64)


_ldl = defop(
    "LDL",
    inputs=("x",),
    attrs={"lower": True, "hermitian": False},
    infer=_ldl_infer,
    doc="Bunch-Kaufman LDL^T of symmetric x (scipy.linalg.ldl): lu, block-diagonal d, perm with lu[perm] "
    "triangular and x = lu d lu^T.",
)


@_ldl.kernel("numpy")
@_lapack("LDL")
def _ldl_kernel(x, *, lower, hermitian):
    n, dtype = x.shape[-1], _float_dtype(x)
    if x.size == 0:
        return np.zeros(x.shape, dtype), np.zeros(x.shape, dtype), np.zeros(x.shape[:-1], np.int64)
    flat = x.astype(np.result_type(x, np.float64)).reshape((-1, n, n))
    if hermitian:  # a Hermitian diagonal is real (SciPy ignores its imaginary part, with a ComplexWarning)
        flat[:, np.arange(n), np.arange(n)] = flat[:, np.arange(n), np.arange(n)].real
    nan = (np.full((n, n), np.nan), np.full((n, n), np.nan), np.arange(n))  # a NaN or inf: NaN, as _each_matrix
    out = [_scipy_linalg().ldl(m, lower=lower, hermitian=hermitian) if np.isfinite(m).all() else nan for m in flat]
    lu, d, perm = ([o[k] for o in out] for k in range(3))
    batch = x.shape[:-2]
    return (
        np.stack(lu).reshape(x.shape).astype(dtype),
        np.stack(d).reshape(x.shape).astype(dtype),
        np.stack(perm).reshape(batch + (n,)).astype(np.int64),
    )


_ldl.kernels_reason = "scipy.linalg.ldl (LAPACK sytrf, Bunch-Kaufman pivoting); the Array API standard has no LDL"


def _ldl_grad(node, g_lu, g_d, _g_perm):
    """For the pivots found: with ``L = lu[perm]`` and ``A' = A[perm][:, perm] = L D L^T``, ``X = L^-1 dA' L^-T``
    splits into ``dD`` (its block diagonal) and ``L^-1 dL D`` (its strictly block lower, or upper, part), so
    the gradient of ``A'`` is the symmetric part of ``L^-T (S o (L^T gL D^-1) + B o gD) L^-1``, put back in
    ``A``'s order.  A complex symmetric A is holomorphic: the same formula (JAX's convention).  A Hermitian one
    (``A' = L D L^H``) is not: the same with ``^H`` for ``^T`` and the Hermitian part, on the conjugated
    cotangents (the real inner product's adjoint), conjugated back.  D singular (A singular) has no gradient: inf
    or NaN, as ``inv``'s."""
    from .array import argsort, take_along_axis
    from .elementwise import conj
    from .linalg_ops import _constant, _triangle, solve, solve_triangular
    from .math import cast
    from .shape import expand_dims

    lower, hermitian = node.attrs["lower"], node.attrs.get("hermitian", False)
    adjoint = _hermitian_transpose if hermitian else _mT
    flip = conj if hermitian else (lambda t: t)
    lu, d, perm = node.outputs
    n = lu.shape[-1]
    rows = expand_dims(perm, -1)
    factor = take_along_axis(lu, rows, -2)
    g_factor = 0.0 * lu if g_lu is None else flip(take_along_axis(g_lu, rows, -2))
    block = cast((d != 0.0) | (_constant(np.eye(n), d) != 0.0), d.dtype)
    strict = _triangle(1.0 - block, lower=lower, k=-1)
    left = adjoint(solve(d, adjoint(_matmul(adjoint(factor), g_factor)))) * strict
    y = left if g_d is None else left + flip(g_d) * block
    w = solve_triangular(adjoint(factor), y, lower=not lower, unit_diagonal=True)
    w = adjoint(solve_triangular(adjoint(factor), adjoint(w), lower=not lower, unit_diagonal=True))
    g = flip((w + adjoint(w)) * 0.5)
    back = argsort(perm, axis=-1)
    return take_along_axis(take_along_axis(g, expand_dims(back, -1), -2), expand_dims(back, -2), -1)


register_gradient("LDL", _ldl_grad)


def ldl(A, lower: bool = True, hermitian: bool = True, overwrite_a: bool = False, check_finite: bool = True):
    """The LDL^T factorization ``(lu, d, perm)`` of a symmetric matrix with Bunch-Kaufman pivoting
    (``scipy.linalg.ldl``), batched: ``A = lu @ d @ lu.T``, ``d`` block diagonal (1 x 1 and 2 x 2 blocks),
    ``lu[perm]`` unit lower (``lower=False``: upper) triangular.  Reads the lower (upper) triangle of ``A``
    as SciPy does; a complex ``A`` is Hermitian (``A = lu @ d @ lu^H``) or, with ``hermitian=False``, complex
    symmetric.  Differentiable for the pivots found (the gradient goes to the triangle read; a complex one is
    JAX's); undefined where ``d`` is singular.  Needs SciPy.

    >>> import tensorlib as tl
    >>> lu, d, perm = tl.linalg.ldl(tl.tensor([[4.0, 2.0], [2.0, 3.0]], dtype="float64"))
    >>> lu.numpy().tolist(), d.numpy().tolist(), perm.numpy().tolist()
    ([[1.0, 0.0], [0.5, 1.0]], [[4.0, 0.0], [0.0, 2.0]], [0, 1])
    """
    from .linalg_ops import _hermitian_from_triangle, _triangle

    A = as_tensor(A)
    if len(A.shape) >= 2 and None in A.shape[-2:]:
        raise ValueError(
            f"ldl: the matrix size must be known (give it in the TensorSpec), got a shape {A.shape} {A.dtype}"
        )
    attrs = {"lower": bool(lower), "hermitian": bool(hermitian) and A.dtype.kind == "c"}
    if len(A.shape) < 2 or A.shape[-1] != A.shape[-2] or A.dtype.kind in "fc" and A.dtype.itemsize < 4:
        return apply(_ldl, (A,), attrs)  # its shape rule names the op and the shapes
    if attrs["hermitian"] or A.dtype.kind != "c":
        read = _hermitian_from_triangle(A, "L" if lower else "U", "ldl")
    else:  # complex symmetric: the triangle mirrored without conjugation
        read = _triangle(A, lower=lower) + _mT(_triangle(A, lower=lower, k=-1))
    return apply(_ldl, (read,), attrs)

"""``tl.linalg.funm``: the primary matrix function of a differentiable tensorlib function, with a gradient that
holds at repeated eigenvalues.

It sits above the op families (it gives its result a gradient rule of its own with ``custom_gradient`` and
takes ``f'`` from ``vjp``): for ``x = v diag(w) v^-1`` the value is ``v diag(f(w)) v^-1``, and the gradient is
the Daleckii-Krein formula ``v^-T (D o (v^T g v^-T)) v^T`` with ``D`` the divided differences of ``f`` at the
eigenvalues (``f'`` where two coincide), so no eigenvalue gap is divided by.
"""

from __future__ import annotations

import numpy as np

from .dispatch import as_tensor
from .grad.api import vjp
from .grad.custom import custom_gradient
from .ops import elementwise, linalg_functions, linalg_general, linalg_ops, math, reduce, shape
from .tensor import Tensor


def funm(A, func, disp: bool = True):
    """``f(A)`` for a square ``A`` and a function ``func`` of a Tensor written with tensorlib ops and applied
    elementwise (``tl.exp``, ``lambda z: z ** 3 + 1``), as ``scipy.linalg.funm``; batched.

    Computed from the eigendecomposition ``A = v diag(w) v^-1`` (``func`` gets the complex eigenvalues): exact
    for diagonalizable ``A`` with a well-conditioned eigenvector basis (symmetric and normal matrices, and
    repeated eigenvalues among them).  A defective or nearly defective ``A`` (``cond(v) > 1 / sqrt(eps)``; SciPy
    returns an inaccurate result there) gives NaN (its gradient too), and so does a real ``A`` whose ``f(A)`` is
    not real (pass a complex matrix), as ``sqrtm``.  ``disp=False`` returns ``(f(A), errest)`` with ``errest`` the relative
    residual ``||A f(A) - f(A) A||_1 / (||A||_1 ||f(A)||_1)`` (ours: SciPy's estimate is of its Schur-Parlett
    recurrence); an empty matrix gives an empty one (SciPy raises).

    The gradient is the Frechet derivative's adjoint from divided differences of ``func`` (``func'`` from
    ``tl.vjp`` where eigenvalues coincide), exact at repeated eigenvalues: at ``A = I`` the gradient of
    ``<g, funm(A, f)>`` is ``f'(1) g``.  Its second derivative goes through ``eig``'s gradient, so it needs
    distinct eigenvalues.

    >>> import tensorlib as tl
    >>> tl.linalg.funm(tl.tensor([[1.0, 2.0], [0.0, 3.0]]), lambda z: z * z).numpy().round(6).tolist()
    [[1.0, 8.0], [0.0, 9.0]]
    >>> g = tl.grad(lambda a: tl.sum(tl.linalg.funm(a, tl.exp) * tl.eye(2)))(tl.eye(2))
    >>> g.numpy().round(6).tolist()
    [[2.718282, 0.0], [0.0, 2.718282]]
    """
    A = linalg_ops._as_float(as_tensor(A))
    if A.ndim < 2 or None in A.shape[-2:] or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"funm: expected square matrices of known size, got shape {tuple(A.shape)} {A.dtype}")
    if not callable(func):
        raise TypeError(f"funm: func must be a function of a Tensor, got {type(func).__name__}")
    value = _funm(A, func) if A.shape[-1] else A + 0  # an empty matrix's function is empty (SciPy raises)
    if disp:
        return value
    residual = linalg_ops._matmul(A, value) - linalg_ops._matmul(value, A)
    size = linalg_functions.matrix_norm(A, ord=1) * linalg_functions.matrix_norm(value, ord=1)
    return value, linalg_functions.matrix_norm(residual, ord=1) / math.where(size > 0, size, math.ones_like(size))


def _funm(A, func):
    real_input = A.dtype.kind != "c"
    eps = float(np.finfo(A.dtype).eps)

    @custom_gradient
    def matrix_function(a):
        w, v = linalg_general.eig(a)
        fw = func(w)
        if not isinstance(fw, Tensor) or tuple(fw.shape) != tuple(w.shape):
            raise ValueError(
                f"funm: func must map the eigenvalues elementwise (shape {tuple(w.shape)} {w.dtype}), got "
                f"{type(fw).__name__} {getattr(fw, 'shape', '')}"
            )
        fw = math.cast(fw, dtype=v.dtype)
        # v diag(f(w)) v^-1 = (v^-T (v diag(f(w)))^T)^T
        out = linalg_ops._mT(linalg_ops.solve(linalg_ops._mT(v), linalg_ops._mT(v * linalg_ops._row(fw))))
        out, defined = _undefined_as_nan(out, v, real_input, eps)

        def grad_fn(g):
            v_t = linalg_ops._mT(v)
            v_inv_t = linalg_ops.inv(v_t)
            inner = linalg_ops._matmul(v_t, linalg_ops._matmul(math.cast(g, dtype=v.dtype), v_inv_t))
            grad = linalg_ops._matmul(v_inv_t, linalg_ops._matmul(_divided_differences(func, w, fw, eps) * inner, v_t))
            grad = elementwise.real(grad) if real_input else grad
            return math.where(defined, grad, math.full_like(grad, np.nan))  # NaN as the value, not a wrong number

        return out, grad_fn

    return matrix_function(A)


def _divided_differences(func, w, fw, eps):
    """D[i, j] = (f(w_i) - f(w_j)) / (w_i - w_j), or f' at the midpoint where the two are within eps^(1/3)
    (relative): the quotient loses eps / gap, the midpoint's f' is off by gap^2 f'''(w) / 24: both ~eps^(2/3)."""
    w_i, w_j = linalg_ops._column(w), linalg_ops._row(w)
    gap = w_i - w_j
    scale = math.maximum(math.maximum(math.abs(w_i), math.abs(w_j)), math.ones_like(math.abs(gap)))
    close = math.abs(gap) <= scale * eps ** (1 / 3)
    midpoint = (w_i + w_j) * 0.5
    _, derivative_at = vjp(func, midpoint)
    (derivative,) = derivative_at(math.ones_like(midpoint))
    quotient = (linalg_ops._column(fw) - linalg_ops._row(fw)) / math.where(close, math.ones_like(gap), gap)
    return math.where(close, math.cast(derivative, dtype=fw.dtype), quotient)


def _undefined_as_nan(out, v, real_input, eps):
    """NaN for a matrix whose eigenvector basis v is too ill-conditioned (a defective matrix) or, for a real
    matrix, whose f is not real; the real part otherwise.  Also the mask (..., 1, 1) of the defined ones."""
    singular_values = linalg_functions.svdvals(v)
    largest, smallest = reduce.max(singular_values, axis=-1), reduce.min(singular_values, axis=-1)
    defined = smallest * (1.0 / np.sqrt(eps)) >= largest
    if real_input:
        size = reduce.max(math.abs(out), axis=(-2, -1))
        imaginary = reduce.max(math.abs(elementwise.imag(out)), axis=(-2, -1))
        defined = math.logical_and(defined, imaginary <= size * np.sqrt(eps))
        out = elementwise.real(out)
    defined = shape.expand_dims(defined, (-2, -1))
    return math.where(defined, out, math.full_like(out, np.nan)), defined

"""Functions and decompositions of general (non-symmetric) square matrices: ``matrix_exp``, ``eig``.

Batched over leading axes like the rest of ``tl.linalg``; gradient rules are
tensorlib ops (see ``linalg_ops.py``), with JAX's convention for complex
gradients (``docs/complex.md``): the rule of a holomorphic function uses plain
transposes, and a real input gets the real part of its complex cotangent.
"""

from __future__ import annotations

import functools

import numpy as np

from ..dispatch import apply
from ..grad.registry import register_gradient
from ..tensor import Tensor
from .linalg_ops import (
    _check_matrix,
    _column,
    _diag_embed,
    _diag_part,
    _gap_divide,
    _lapack,
    _matmul,
    _mT,
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
def _expm_kernel(xp, x):
    if x.size == 0:
        return xp.zeros_like(x)
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


def _expm_grad(node, g):
    # The Frechet derivative L(a, e) is the upper right block of exp([[a, e], [0, a]]) (Mathias 1996), and the
    # gradient of <g, exp(x)> is L(x^T, g) (exp is holomorphic: plain transposes).  The block is linear in g, so g
    # is scaled to x's size first (a large g would cost squarings and accuracy) and the block scaled back.
    from .math import abs as absolute
    from .math import maximum, ones_like, stop_gradient, where, zeros_like
    from .reduce import max as reduce_max
    from .shape import concat, getitem

    x = node.inputs[0]
    n = x.shape[-1]
    if n == 0:
        return zeros_like(x)
    xt = _mT(x)
    size = stop_gradient(reduce_max(absolute(g), axis=(-2, -1), keepdims=True))
    scale = stop_gradient(maximum(reduce_max(absolute(x), axis=(-2, -1), keepdims=True), 1.0))
    nonzero = size > 0
    ratio = where(nonzero, scale / where(nonzero, size, ones_like(size)), ones_like(size))
    block = concat([concat([xt, g * ratio], axis=-1), concat([zeros_like(xt), xt], axis=-1)], axis=-2)
    return getitem(matrix_exp(block), (Ellipsis, slice(0, n), slice(n, None))) / ratio


register_gradient("MatrixExponential", _expm_grad)


def matrix_exp(x) -> Tensor:
    """The matrix exponential ``exp(x) = I + x + x @ x / 2 + ...`` (``torch.linalg.matrix_exp``,
    ``scipy.linalg.expm``), batched.

    Scaling and squaring with a [13/13] Pade approximant (Higham 2005, as SciPy
    and JAX); the gradient is the Frechet derivative from the block matrix
    ``exp([[x.T, g], [0, x.T]])``, itself differentiable.  Integer input gives
    float64; complex input is supported (gradients with JAX's convention).

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


def eig(x) -> tuple:
    """Eigenvalues ``w`` and right eigenvectors ``v`` (columns, unit norm) of general square matrices, with
    ``x @ v == v * w`` (``numpy.linalg.eig``), batched.

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
    return apply(_eig, (x,), {"compute_v": True})


def eigvals(x) -> Tensor:
    """Eigenvalues of general square matrices, complex (``numpy.linalg.eigvals``; see ``eig``).

    The gradient is ``v^-T diag(g) v^T``, PyTorch's conjugated (JAX's
    ``jnp.linalg.eigvals`` gives the same).

    >>> import tensorlib as tl
    >>> tl.linalg.eigvals(tl.tensor([[0.0, -1.0], [1.0, 0.0]])).numpy().tolist()
    [1j, -1j]
    """
    return apply(_eig, (x,), {"compute_v": False})

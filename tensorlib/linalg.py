"""``tl.linalg``: NumPy's ``linalg`` and SciPy's matrix functions (``scipy.linalg``'s ``sqrtm``, ``logm``, ``polar``,
``solve_sylvester``, ``expm_frechet``, ``cho_factor``/``cho_solve``, ``lu``, ``toeplitz``, ...) with gradients, batched.

Every function takes matrices in the last two axes and broadcasts over the
leading ones.  Gradient rules are tensorlib ops, so second derivatives and
traced gradients work.  Where a gradient is undefined (repeated eigenvalues
or singular values, singular matrices) the caveat is in the function's docstring.

>>> import tensorlib as tl
>>> a = tl.tensor([[2.0, 1.0], [1.0, 3.0]])
>>> [round(float(v), 4) for v in tl.grad(lambda a: tl.linalg.det(a))(a).numpy().ravel()]
[3.0, -1.0, -1.0, 2.0]
"""

from .ops.linalg import einsum, matmul, tensordot
from .ops.linalg_functions import (
    block_diag,
    cholesky_solve,
    cond,
    cross,
    diagonal,
    eigvalsh,
    lstsq,
    matrix_norm,
    matrix_rank,
    matrix_transpose,
    multi_dot,
    outer,
    svdvals,
    tensorinv,
    tensorsolve,
    trace,
    vecdot,
    vector_norm,
)
from .ops.linalg_general import eig, eigvals, expm, lu, lu_factor, lu_solve, matrix_exp
from .ops.linalg_ops import (
    cholesky,
    det,
    eigh,
    inv,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
)
from .ops.linalg_scipy import (
    cho_factor,
    cho_solve,
    circulant,
    expm_frechet,
    hessenberg,
    logm,
    polar,
    schur,
    solve_sylvester,
    sqrtm,
    toeplitz,
)

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "cholesky_solve",
    "circulant",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "einsum",
    "expm",
    "expm_frechet",
    "hessenberg",
    "inv",
    "logm",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "polar",
    "qr",
    "schur",
    "slogdet",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "toeplitz",
    "trace",
    "vecdot",
    "vector_norm",
]

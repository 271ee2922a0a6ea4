"""The linalg catalogue: one OpInfo per ``tl.linalg`` function, against ``numpy.linalg`` (and SciPy).

Samples are drawn well-conditioned, because the gradients divide by what
they must: diagonally dominant matrices for inv/solve/det, symmetric
positive-definite ones for cholesky, symmetric matrices with eigenvalues at
least 1 apart for eigh, and matrices with singular values at least 0.7 apart
(and >= 1) for svd, qr and pinv.  Hypothesis draws the shape and a seed; NumPy
builds the matrix from them.

>>> from tensorlib.testing.op_db_linalg import OPINFOS
>>> sorted({t for info in OPINFOS for t in info.op_types})[:3]
['Cholesky', 'Eig', 'Hessenberg']
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from ..ops.linalg_ops import _adjugate
from .opinfo import ErrorInput, OpInfo, SampleInput

FLOATS = (_dt.float32, _dt.float64)
BATCHES = st.sampled_from([(), (2,), (2, 1)])
SIDES = st.sampled_from([3, 2, 1])
SEEDS = st.integers(0, 2**16)


def _rng(seed):
    return np.random.default_rng(seed)


def _dominant(seed, shape, dtype):
    """Diagonally dominant: well conditioned, with both signs of determinant."""
    rng = _rng(seed)
    n = shape[-1]
    a = rng.uniform(-1, 1, shape) + np.eye(n) * rng.choice([-1, 1], shape[:-1])[..., None] * (n + 1)
    return a.astype(dtype)


def _spd(seed, shape, dtype):
    rng = _rng(seed)
    a = rng.uniform(-1, 1, shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _orthonormal(rng, batch, m, k):
    q, r = np.linalg.qr(rng.standard_normal(batch + (m, k)))
    return q


def _separated_symmetric(seed, shape, dtype):
    rng = _rng(seed)
    n = shape[-1]
    q = _orthonormal(rng, shape[:-2], n, n)
    w = np.arange(n) * 1.5 - n / 2 + rng.uniform(0, 0.5, shape[:-2] + (n,))
    return (q * w[..., None, :] @ np.swapaxes(q, -1, -2)).astype(dtype)


def _separated_singular(seed, shape, dtype):
    rng = _rng(seed)
    *batch, m, n = shape
    k = min(m, n)
    u, v = _orthonormal(rng, tuple(batch), m, k), _orthonormal(rng, tuple(batch), n, k)
    s = 1.0 + np.arange(k)[::-1] * 0.7 + rng.uniform(0, 0.2, tuple(batch) + (k,))
    return (u * s[..., None, :] @ np.swapaxes(v, -1, -2)).astype(dtype)


def _square(builder, **kwargs):
    def samples(dtype):
        return st.builds(
            lambda seed, batch, n: SampleInput((builder(seed, batch + (n, n), dtype),), dict(kwargs)),
            SEEDS,
            BATCHES,
            SIDES,
        )

    return samples


def _rectangular(builder, **kwargs):
    def samples(dtype):
        return st.builds(
            lambda seed, batch, m, n: SampleInput((builder(seed, batch + (m, n), dtype),), dict(kwargs)),
            SEEDS,
            BATCHES,
            st.sampled_from([3, 2, 4, 1]),
            st.sampled_from([2, 3, 4, 1]),
        )

    return samples


def _sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


# ---------------------------------------------------------------- solve and solve_triangular
@st.composite
def _solve_draw(draw, dtype, triangular=False):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    a = _dominant(seed, batch + (n, n), dtype)
    b_batch = draw(st.sampled_from([batch, batch[1:], ()]))
    b_shape = (n,) if draw(st.booleans()) and not batch else b_batch + (n, draw(st.sampled_from([2, 1])))
    b = _rng(seed + 1).uniform(-2, 2, b_shape).astype(dtype)
    kwargs = {}
    if triangular:
        kwargs = {
            "trans": draw(st.sampled_from([0, 1, "T", 2, "C"])),
            "lower": draw(st.booleans()),
            "unit_diagonal": draw(st.booleans()),
        }
    return SampleInput((a, b), kwargs, grad_argnums=(0, 1))


def _solve_triangular_ref(a, b, trans=0, lower=False, unit_diagonal=False):
    from scipy.linalg import solve_triangular

    vector = b.ndim == 1
    b = b[:, None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    out = np.empty(batch + b.shape[-2:], np.result_type(a, b))
    for index in np.ndindex(*batch):
        out[index] = solve_triangular(a[index], b[index], trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    return out[..., 0] if vector else out


# ---------------------------------------------------------------- svd, qr, matrix_power, norm
@st.composite
def _svd_draw(draw, dtype):
    seed, batch = draw(SEEDS), draw(BATCHES)
    full = draw(st.booleans())
    m, n = draw(st.sampled_from([3, 2, 4])), draw(st.sampled_from([3, 2, 4]))
    # With full_matrices=True and m != n the extra columns of u are an arbitrary basis: forward only.
    grads = (0,) if not full or m == n else ()
    return SampleInput((_separated_singular(seed, batch + (m, n), dtype),), {"full_matrices": full}, grads)


@st.composite
def _qr_draw(draw, dtype):
    seed, batch = draw(SEEDS), draw(BATCHES)
    m, n = draw(st.sampled_from([3, 2, 4])), draw(st.sampled_from([3, 2, 4]))
    mode = draw(st.sampled_from(["reduced", "r", "complete"]))
    grads = () if mode == "complete" and m > n else (0,)
    return SampleInput((_separated_singular(seed, batch + (m, n), dtype),), {"mode": mode}, grads)


def _qr_ref(a, mode="reduced"):
    out = np.linalg.qr(a, mode=mode)
    return out if mode == "r" else tuple(out)


@st.composite
def _matrix_power_draw(draw, dtype):
    seed, batch, side = draw(SEEDS), draw(BATCHES), draw(SIDES)
    power = draw(st.sampled_from([2, 3, -1, -2, 1, 0]))
    a = _dominant(seed, batch + (side, side), dtype) / (side + 1)
    return SampleInput((a, power), grad_argnums=(0,) if power else ())


_VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5]
_MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]


@st.composite
def _norm_draw(draw, dtype):
    rng = _rng(draw(SEEDS))
    keepdims = draw(st.booleans())
    kind = draw(st.sampled_from(["vector", "matrix", "flat"]))
    if kind == "flat":
        return SampleInput(
            (rng.uniform(0.5, 2, (2, 3)).astype(dtype) * rng.choice([-1, 1], (2, 3)),), {"keepdims": keepdims}
        )
    if kind == "vector":
        x = (rng.uniform(0.5, 2, (3, 4)) * rng.choice([-1, 1], (3, 4))).astype(dtype)
        return SampleInput(
            (x,),
            {"ord": draw(st.sampled_from(_VECTOR_ORDS)), "axis": draw(st.sampled_from([-1, 0])), "keepdims": keepdims},
        )
    x = _separated_singular(draw(SEEDS), (3, 3), np.float64)[:, None, :] * np.array([1.0, -0.5])[:, None]
    return SampleInput(
        (x.astype(dtype),),
        {
            "ord": draw(st.sampled_from(_MATRIX_ORDS)),
            "axis": draw(st.sampled_from([(0, 2), (2, 0)])),
            "keepdims": keepdims,
        },
    )


# ---------------------------------------------------------------- NumPy 2's other linalg functions
@st.composite
def _pair_draw(draw, dtype, n=None):
    """Two arrays for vecdot/cross: vectors of length ``n`` along ``axis``, the other axes broadcasting."""
    rng = _rng(draw(SEEDS))
    n = n or draw(st.sampled_from([3, 1, 4]))
    if draw(st.booleans()):
        axis, shape, other = -1, draw(st.sampled_from([(n,), (2, n)])), draw(st.sampled_from([(n,), (2, n)]))
    else:
        axis, shape, other = 0, (n, 2), draw(st.sampled_from([(n, 2), (n, 1)]))
    return SampleInput(
        (rng.uniform(-2, 2, shape).astype(dtype), rng.uniform(-2, 2, other).astype(dtype)),
        {"axis": axis},
        grad_argnums=(0, 1),
    )


@st.composite
def _matvec_draw(draw, dtype, matrix_first):
    """A stack of matrices and one of vectors for matvec/vecmat, their batch axes broadcasting."""
    rng = _rng(draw(SEEDS))
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    batch_a, batch_v = draw(st.sampled_from([((), ()), ((2,), ()), ((), (2,)), ((2, 1), (3,)), ((0,), ())]))
    a = rng.uniform(-2, 2, batch_a + (m, n)).astype(dtype)
    v = rng.uniform(-2, 2, batch_v + ((n,) if matrix_first else (m,))).astype(dtype)
    return SampleInput((a, v) if matrix_first else (v, a), grad_argnums=(0, 1))


@st.composite
def _vector_norm_draw(draw, dtype):
    rng = _rng(draw(SEEDS))
    shape = draw(st.sampled_from([(3, 4), (2, 3, 2), (5,)]))
    x = (rng.uniform(0.5, 2, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    axis = draw(st.sampled_from([None, -1, 0, (0, -1)] if len(shape) > 1 else [None, -1, (0,)]))
    return SampleInput(
        (x,),
        {
            "ord": draw(st.sampled_from([2, 1, np.inf, -np.inf, 3, 0.5, -1])),
            "axis": axis,
            "keepdims": draw(st.booleans()),
        },
    )


@st.composite
def _matrix_norm_draw(draw, dtype):
    seed, batch = draw(SEEDS), draw(BATCHES)
    m, n = draw(st.sampled_from([3, 2])), draw(st.sampled_from([3, 2, 1]))
    x = _separated_singular(seed, batch + (m, n), np.float64) * _rng(seed).choice([-1, 1], (m, n))
    ord_ = draw(st.sampled_from(_MATRIX_ORDS[1:]))
    return SampleInput((x.astype(dtype),), {"ord": ord_, "keepdims": draw(st.booleans())})


@st.composite
def _cond_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(st.sampled_from([3, 2]))
    p = draw(st.sampled_from([None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf]))
    return SampleInput((_separated_singular(seed, batch + (n, n), dtype), p))


@st.composite
def _rank_draw(draw, dtype):
    rng = _rng(draw(SEEDS))
    batch, m, n, rank = (
        draw(BATCHES),
        draw(st.sampled_from([3, 4])),
        draw(st.sampled_from([3, 2])),
        draw(st.sampled_from([0, 1, 2])),
    )
    x = rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n))
    return SampleInput((x.astype(dtype),), {"hermitian": False}, grad_argnums=())


@st.composite
def _lstsq_draw(draw, dtype):
    seed, batch = draw(SEEDS), draw(st.sampled_from([(), (2,)]))
    m, n = draw(st.sampled_from([(4, 2), (3, 3), (2, 3), (3, 1)]))
    a = _separated_singular(seed, batch + (m, n), dtype)
    b_shape = (m,) if draw(st.booleans()) and not batch else batch + (m, draw(st.sampled_from([1, 2])))
    return SampleInput((a, _rng(seed + 1).uniform(-2, 2, b_shape).astype(dtype)), grad_argnums=(0, 1))


def _lstsq_ref(a, b, rcond=None):
    """numpy.linalg.lstsq over a batch (NumPy's takes one matrix)."""
    if a.ndim == 2:
        x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
        return x, residuals, np.int32(rank), s
    outs = [_lstsq_ref(a[i], b[i], rcond) for i in range(a.shape[0])]
    return tuple(np.stack([o[k] for o in outs]) for k in range(4))


@st.composite
def _multi_dot_draw(draw, dtype):
    rng = _rng(draw(SEEDS))
    count = draw(st.sampled_from([2, 3, 4]))
    dims = [draw(st.sampled_from([1, 2, 5])) for _ in range(count + 1)]
    arrays = [rng.uniform(-1, 1, (dims[i], dims[i + 1])).astype(dtype) for i in range(count)]
    if draw(st.booleans()):
        arrays[0] = arrays[0][0]
    if draw(st.booleans()):
        arrays[-1] = arrays[-1][:, 0]
    return SampleInput(tuple(arrays), grad_argnums=tuple(range(count)))


@st.composite
def _tensorinv_draw(draw, dtype):
    seed = draw(SEEDS)
    shape, ind = draw(st.sampled_from([((4, 2, 2), 1), ((2, 3, 6), 2), ((3, 3), 1)]))
    a = _dominant(seed, (int(np.prod(shape[:ind])),) * 2, dtype).reshape(shape)
    return SampleInput((a, ind))


@st.composite
def _tensorsolve_draw(draw, dtype):
    seed = draw(SEEDS)
    a_shape, b_shape, axes = draw(
        st.sampled_from([((2, 3, 6), (2, 3), None), ((6, 2, 3), (6,), None), ((6, 2, 3), (2, 3), (0,))])
    )
    a = _dominant(seed, (6, 6), dtype).reshape(a_shape)
    b = _rng(seed + 1).uniform(-2, 2, b_shape).astype(dtype)
    return SampleInput((a, b, axes), grad_argnums=(0, 1))


def _vector_pair(dtype):
    return st.builds(
        lambda seed, m, n: SampleInput(
            (_rng(seed).uniform(-2, 2, m).astype(dtype), _rng(seed + 1).uniform(-2, 2, n).astype(dtype)),
            grad_argnums=(0, 1),
        ),
        SEEDS,
        SIDES,
        SIDES,
    )


def _batched_matrix(dtype, rng_shape=((2, 3), (3, 3), (2, 2, 3))):
    return st.builds(
        lambda seed, shape: SampleInput((_rng(seed).uniform(-2, 2, shape).astype(dtype),)),
        SEEDS,
        st.sampled_from(rng_shape),
    )


def _cofactors_ref(a):
    """adj(a) from its minors: adj[j, i] = (-1)^(i + j) det(a without row i and column j)."""
    n = a.shape[-1]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, -2), j, -1)
            out[..., j, i] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


@st.composite
def _adjugate_draw(draw, dtype):
    """Invertible matrices (gradients checked) and ones of every lower rank (forward only)."""
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    rank = draw(st.integers(0, n))
    if rank == n:
        return SampleInput((_dominant(seed, batch + (n, n), dtype),))
    rng = _rng(seed)
    a = rng.uniform(-1, 1, batch + (n, rank)) @ rng.uniform(-1, 1, batch + (rank, n))
    return SampleInput((a.astype(dtype),), grad_argnums=())


@st.composite
def _adjugate_grad_draw(draw, dtype):
    """(x, g): x invertible or of lower rank, gradients in both checked (det's third derivative, at any x)."""
    x = draw(_adjugate_draw(dtype)).args[0]
    g = _rng(draw(SEEDS)).uniform(-1, 1, x.shape).astype(dtype)
    return SampleInput((x, g), grad_argnums=(0, 1))


@st.composite
def _det_derivative_draw(draw, dtype):
    """(x, directions): x of any rank, one or two directions (det's third and fourth derivatives)."""
    x = draw(_adjugate_draw(dtype)).args[0]
    m = draw(st.integers(1, 2))
    directions = _rng(draw(SEEDS)).uniform(-1, 1, x.shape[:-2] + (m,) + x.shape[-2:]).astype(dtype)
    return SampleInput((x, directions), grad_argnums=(0, 1))


def _det_derivative(x, directions):
    from ..dispatch import apply
    from ..ops.linalg_ops import _det_derivative as op

    return apply(op, (x, directions))


def _det_derivative_ref(x, directions, h=0.5):
    """The gradient of D^m det(x)[d_1..d_m] by mixed central differences of det, a polynomial of degree n: exact
    but for rounding where m + 1 >= n - 1 (n <= 3 here)."""
    import itertools

    x64, d64, out = x.astype(np.float64), directions.astype(np.float64), np.zeros(x.shape)
    for index in np.ndindex(x.shape[-2:]):
        unit = np.zeros(x.shape[-2:])
        unit[index] = 1.0
        steps = [d64[..., i, :, :] for i in range(d64.shape[-3])] + [np.broadcast_to(unit, x.shape)]
        for signs in itertools.product((1, -1), repeat=len(steps)):
            point = x64 + h * sum(sign * d for sign, d in zip(signs, steps))
            out[(Ellipsis,) + index] += np.prod(signs) * np.linalg.det(point)
    return (out / (2 * h) ** len(steps)).astype(x.dtype)


def _adjugate_grad(x, g):
    from ..dispatch import apply
    from ..ops.linalg_ops import _adj_grad

    return apply(_adj_grad, (x, g))


def _adjugate_grad_ref(x, g, eps=1e-5):
    """The gradient of <g, adj(x)> by central differences of the cofactors (a polynomial: exact to ~1e-10)."""
    x64, out = x.astype(np.float64), np.empty(x.shape)
    for index in np.ndindex(x.shape[-2:]):
        step = np.zeros(x.shape[-2:])
        step[index] = eps
        up, down = _cofactors_ref(x64 + step), _cofactors_ref(x64 - step)
        out[(Ellipsis,) + index] = np.sum(g * (up - down), axis=(-2, -1)) / (2 * eps)
    return out.astype(x.dtype)


@st.composite
def _cholesky_solve_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    upper = draw(st.booleans())
    factor = np.linalg.cholesky(_spd(seed, batch + (n, n), np.float64))
    factor = np.swapaxes(factor, -1, -2) if upper else factor
    b = _rng(seed + 1).uniform(-2, 2, draw(st.sampled_from([batch, ()])) + (n, draw(st.sampled_from([1, 2]))))
    return SampleInput((b.astype(dtype), factor.astype(dtype)), {"upper": upper}, grad_argnums=(0, 1))


def _cholesky_solve_ref(b, factor, upper=False):
    t = np.triu(factor) if upper else np.tril(factor)
    t_h = np.conj(np.swapaxes(t, -1, -2))
    a = t_h @ t if upper else t @ t_h
    return np.linalg.solve(a, b)


# ---------------------------------------------------------------- general matrices: matrix_exp, eig
def _expm_ref(a):
    from scipy.linalg import expm

    return expm(a)  # batched over leading axes since SciPy 1.9


def _separated_eigenvalues(seed, shape, dtype):
    """s diag(w) s^-1 (real) with eigenvalues at least 0.8 apart; a 2x2 rotation block, when the seed says so,
    gives a pair a +- bi with b >= 0.4."""
    rng = _rng(seed)
    *batch, n, _ = shape
    w = np.arange(n) * 1.3 - n / 2 + rng.uniform(0, 0.5, tuple(batch) + (n,))
    d = w[..., :, None] * np.eye(n)
    if n >= 2 and seed % 2:
        b = rng.uniform(0.4, 1.0, tuple(batch))
        d[..., 0, 1], d[..., 1, 0], d[..., 1, 1] = b, -b, d[..., 0, 0]
    s = rng.uniform(-0.5, 0.5, shape) + np.eye(n)
    return (s @ d @ np.linalg.inv(s)).astype(dtype)


def _eig_gauge_free(a):
    """eig's values and |v|**2: a loss of eig must not depend on each eigenvector's arbitrary phase."""
    w, v = tl.linalg.eig(a)
    return w, tl.real(v * tl.conj(v))


def _eig_gauge_free_ref(a):
    w, v = np.linalg.eig(a)
    return w.astype(np.result_type(a, np.complex64)), np.abs(v).astype(a.real.dtype) ** 2


def _eigvals_ref(a):
    return np.linalg.eigvals(a).astype(np.result_type(a, np.complex64))


def _permuted_dominant(seed, shape, dtype):
    """A diagonally dominant matrix with its rows shuffled: LU pivots away from ties (no kinks)."""
    a = _dominant(seed, shape, np.float64)
    order = _rng(seed + 1).permutation(shape[-2])
    return a[..., order, :].astype(dtype)


def _each_matrix(fn, a, *rest):
    """fn applied to every matrix of the batch (SciPy's LU functions), results stacked back."""
    flat = a.reshape((-1,) + a.shape[-2:])
    rest = [np.broadcast_to(r, a.shape[:-2] + r.shape[-2:]).reshape((-1,) + r.shape[-2:]) for r in rest]
    outs = [fn(m, *(r[i] for r in rest)) for i, m in enumerate(flat)]
    if not isinstance(outs[0], tuple):
        return np.stack(outs).reshape(a.shape[:-2] + outs[0].shape) if outs else np.zeros(a.shape)
    return tuple(np.stack(o).reshape(a.shape[:-2] + o[0].shape) for o in zip(*outs))


def _lu_factor_ref(a):
    from scipy.linalg import lu_factor

    return _each_matrix(lu_factor, a)


@st.composite
def _lu_draw(draw, dtype):
    seed, batch = draw(SEEDS), draw(BATCHES)
    m, n = draw(SIDES), draw(SIDES)
    kwargs = draw(st.sampled_from([{}, {"permute_l": True}, {"p_indices": True}]))
    a = _permuted_dominant(seed, batch + (max(m, n), max(m, n)), dtype)[..., :m, :n]
    return SampleInput((a,), kwargs, grad_argnums=(0,))


def _pivots_to_permutation(pivots):
    from ..dispatch import apply
    from ..ops.linalg_general import _permutation

    return apply(_permutation, (pivots,))


def _pivots_to_permutation_ref(pivots):
    """LAPACK's row interchanges applied in order: row j trades places with row pivots[j]."""
    batch, n = int(np.prod(pivots.shape[:-1])), pivots.shape[-1]
    perm = np.broadcast_to(np.arange(n), pivots.shape).copy()
    flat, rows = perm.reshape(batch, n), pivots.reshape(batch, n)
    for b in range(flat.shape[0]):
        for j, p in enumerate(rows[b]):
            flat[b, [j, p]] = flat[b, [p, j]]
    return flat.reshape(pivots.shape).astype(np.int32)


@st.composite
def _pivots_draw(draw, dtype):
    """Valid pivots of a square matrix: pivots[j] in [j, n), in a batch of up to 2."""
    n, batch = draw(st.integers(0, 4)), draw(st.sampled_from([(), (2,)]))
    pivots = [[draw(st.integers(j, n - 1)) for j in range(n)] for _ in range(int(np.prod(batch)))]
    return SampleInput((np.array(pivots, dtype=dtype).reshape(batch + (n,)),), grad_argnums=())


def _lu_ref(a, **kwargs):
    from scipy.linalg import lu

    def one(m):
        # SciPy gives 1 x 1 matrices int64 row indices and larger ones int32 (JAX's and tensorlib's dtype).
        out = lu(m, **kwargs)
        return (out[0].astype(np.int32), *out[1:]) if kwargs.get("p_indices") else out

    return _each_matrix(one, a)


@st.composite
def _lu_solve_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    a = _permuted_dominant(seed, batch + (n, n), dtype)
    b_shape = (n,) if draw(st.booleans()) and not batch else draw(st.sampled_from([batch, ()])) + (n, 2)
    b = _rng(seed + 2).uniform(-2, 2, b_shape).astype(dtype)
    return SampleInput((a, b), {"trans": draw(st.sampled_from([0, 1, 2]))}, grad_argnums=(0, 1))


def _lu_solve(a, b, trans=0):
    """lu_solve(lu_factor(a), b): the gradient reaches a through lu_factor."""
    return tl.linalg.lu_solve(tl.linalg.lu_factor(a), b, trans=trans)


def _lu_solve_ref(a, b, trans=0):
    return np.linalg.solve(np.swapaxes(a, -1, -2) if trans else a, b[..., None] if b.ndim == 1 else b)[
        ..., slice(None), 0 if b.ndim == 1 else slice(None)
    ]


# ---------------------------------------------------------------- SciPy's matrix functions (linalg_scipy.py)
def _each_matrix_ref(name):
    """scipy.linalg.<name> of every matrix of the batch, in float64 (SciPy's float32 logm is off by 1e-6)."""

    def ref(a):
        import scipy.linalg

        return _each_matrix(getattr(scipy.linalg, name), a.astype(np.float64)).astype(a.dtype)

    return ref


@st.composite
def _sylvester_draw(draw, dtype):
    """a and b with eigenvalues in [1, 2.5] (so a + b never nearly singular), batch axes broadcasting."""
    seed, batch = draw(SEEDS), draw(BATCHES)
    n, m = draw(SIDES), draw(SIDES)
    rng = _rng(seed)
    a = _spd(seed, batch + (n, n), np.float64) / (n + 1) + np.eye(n) + rng.uniform(-0.2, 0.2, batch + (n, n))
    b = _spd(seed + 1, (m, m), np.float64) / (m + 1) + np.eye(m)
    q = rng.uniform(-2, 2, draw(st.sampled_from([batch, ()])) + (n, m))
    return SampleInput(tuple(t.astype(dtype) for t in (a, b, q)), grad_argnums=(0, 1, 2))


def _sylvester_ref(a, b, q):
    import scipy.linalg

    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    a, b, q = (np.broadcast_to(t, batch + t.shape[-2:]) for t in (a, b, q))
    return _each_matrix(scipy.linalg.solve_sylvester, a, b, q) if batch else scipy.linalg.solve_sylvester(a, b, q)


def _near_identity(seed, shape, dtype):
    """Eigenvalues in the right half-plane near 1 (a real principal root and logarithm, well conditioned),
    not symmetric."""
    n = shape[-1]
    return (np.eye(n) + _rng(seed).uniform(-0.6, 0.6, shape) / n).astype(dtype)


@st.composite
def _polar_draw(draw, dtype):
    seed, batch = draw(SEEDS), draw(BATCHES)
    m, n = draw(st.sampled_from([3, 2, 4, 1])), draw(st.sampled_from([2, 3, 4, 1]))
    side = draw(st.sampled_from(["right", "left"]))
    return SampleInput((_separated_singular(seed, batch + (m, n), dtype),), {"side": side})


def _polar_ref(a, side="right"):
    import scipy.linalg

    return _each_matrix(lambda m: scipy.linalg.polar(m, side), a)


@st.composite
def _frechet_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    rng = _rng(seed)
    a, e = rng.uniform(-1, 1, batch + (n, n)), rng.uniform(-1, 1, draw(st.sampled_from([batch, ()])) + (n, n))
    return SampleInput((a.astype(dtype), e.astype(dtype)), grad_argnums=(0, 1))


def _frechet_ref(a, e):
    import scipy.linalg

    e = np.broadcast_to(e, a.shape)
    return tuple(t.astype(a.dtype) for t in _each_matrix(scipy.linalg.expm_frechet, a, e))  # SciPy's are float64


@st.composite
def _cho_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    lower = draw(st.booleans())
    b_shape = (n,) if not batch and draw(st.booleans()) else draw(st.sampled_from([batch, ()])) + (n, 2)
    b = _rng(seed + 1).uniform(-2, 2, b_shape)
    return SampleInput((_spd(seed, batch + (n, n), dtype), b.astype(dtype)), {"lower": lower}, grad_argnums=(0, 1))


def _cho(a, b, lower=False):
    """cho_solve(cho_factor(a), b): the gradient reaches a through the factor (one triangle of a)."""
    return tl.linalg.cho_solve(tl.linalg.cho_factor(a, lower=lower), b)


def _cho_ref(a, b, lower=False):
    import scipy.linalg

    if a.ndim == 2:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(a, lower=lower), b)
    b = np.broadcast_to(b, a.shape[:-2] + b.shape[-2:])
    return _each_matrix(lambda m, r: scipy.linalg.cho_solve(scipy.linalg.cho_factor(m, lower=lower), r), a, b)


@st.composite
def _toeplitz_draw(draw, dtype):
    rng = _rng(draw(SEEDS))
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    c = rng.uniform(-2, 2, (m,)).astype(dtype)
    if draw(st.booleans()):
        return SampleInput((c,))
    return SampleInput((c, rng.uniform(-2, 2, (n,)).astype(dtype)), grad_argnums=(0, 1))


def _toeplitz_ref(c, r=None):
    import scipy.linalg

    return scipy.linalg.toeplitz(c, r)


@st.composite
def _circulant_draw(draw, dtype):
    rng = _rng(draw(SEEDS))
    return SampleInput((rng.uniform(-2, 2, draw(BATCHES) + (draw(st.integers(1, 4)),)).astype(dtype),))


def _circulant_ref(c):
    return np.stack([np.roll(c, k, axis=-1) for k in range(c.shape[-1])], axis=-1)


def _fractional_power(a):
    return tl.linalg.fractional_matrix_power(a, 0.7)


def _fractional_power_ref(a):
    import scipy.linalg

    return _each_matrix(lambda m: scipy.linalg.fractional_matrix_power(m, 0.7).real, a.astype(np.float64)).astype(
        a.dtype
    )


@st.composite
def _kron_draw(draw, dtype):
    rng, batch = _rng(draw(SEEDS)), draw(BATCHES)
    a = rng.uniform(-2, 2, batch + (draw(SIDES), draw(SIDES))).astype(dtype)
    b = rng.uniform(-2, 2, draw(st.sampled_from([batch, ()])) + (draw(SIDES), draw(SIDES))).astype(dtype)
    return SampleInput((a, b), grad_argnums=(0, 1))


def _kron_ref(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    return np.stack(
        [np.kron(x, y) for x, y in zip(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:]))]
    ).reshape(batch + (a.shape[-2] * b.shape[-2], a.shape[-1] * b.shape[-1]))


@st.composite
def _khatri_rao_draw(draw, dtype):
    rng, k = _rng(draw(SEEDS)), draw(SIDES)
    a, b = rng.uniform(-2, 2, (draw(SIDES), k)), rng.uniform(-2, 2, (draw(SIDES), k))
    return SampleInput((a.astype(dtype), b.astype(dtype)), grad_argnums=(0, 1))


def _khatri_rao_ref(a, b):
    import scipy.linalg

    return scipy.linalg.khatri_rao(a, b)


@st.composite
def _lyapunov_draw(draw, dtype, discrete=False):
    """a with eigenvalues in [1, 2.5] (continuous: a and -a^H share none), or of norm below 1/2 (discrete: no
    eigenvalue product is 1); q any."""
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    rng = _rng(seed)
    if discrete:
        a = rng.uniform(-0.5, 0.5, batch + (n, n)) / n
    else:
        a = _spd(seed, batch + (n, n), np.float64) / (n + 1) + np.eye(n) + rng.uniform(-0.2, 0.2, batch + (n, n))
    q = rng.uniform(-2, 2, draw(st.sampled_from([batch, ()])) + (n, n))
    return SampleInput((a.astype(dtype), q.astype(dtype)), grad_argnums=(0, 1))


def _lyapunov_ref(name):
    def ref(a, q):
        import scipy.linalg

        q = np.broadcast_to(q, a.shape[:-2] + q.shape[-2:])
        return _each_matrix(getattr(scipy.linalg, name), a.astype(np.float64), q).astype(a.dtype)

    return ref


@st.composite
def _solve_banded_draw(draw, dtype):
    rng, n = _rng(draw(SEEDS)), draw(st.integers(1, 4))
    lower, upper = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    ab = rng.uniform(-1, 1, (lower + upper + 1, n))
    ab[upper] += 4.0  # a diagonally dominant band
    b = rng.uniform(-2, 2, (n,) if draw(st.booleans()) else (n, draw(SIDES)))
    return SampleInput(((lower, upper), ab.astype(dtype), b.astype(dtype)), grad_argnums=(1, 2))


def _solve_banded_ref(l_and_u, ab, b):
    import scipy.linalg

    return scipy.linalg.solve_banded(l_and_u, ab, b)


@st.composite
def _schur_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(SIDES)
    a = _rng(seed).uniform(-1, 1, batch + (n, n)).astype(dtype)
    return SampleInput((a,), {"output": draw(st.sampled_from(["real", "complex"]))}, grad_argnums=())


def _schur_ref(a, output="real"):
    import scipy.linalg

    dtype = np.result_type(a, np.complex64) if output == "complex" else a.dtype
    out = _each_matrix(lambda m: scipy.linalg.schur(m.astype(np.float64), output=output), a)
    return tuple(t.astype(dtype) for t in out)


@st.composite
def _hessenberg_draw(draw, dtype):
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(st.sampled_from([4, 3, 1]))
    a = _rng(seed).uniform(-1, 1, batch + (n, n)).astype(dtype)
    return SampleInput((a,), {"calc_q": draw(st.booleans())}, grad_argnums=())


def _hessenberg_ref(a, calc_q=False):
    import scipy.linalg

    out = _each_matrix(lambda m: scipy.linalg.hessenberg(m.astype(np.float64), calc_q=calc_q), a)
    return tuple(t.astype(a.dtype) for t in out) if calc_q else out.astype(a.dtype)


@st.composite
def _ldl_draw(draw, dtype):
    """Symmetric indefinite matrices (2 x 2 pivots happen), their off-diagonal pivots kept clear of ties."""
    seed, batch, n = draw(SEEDS), draw(BATCHES), draw(st.sampled_from([4, 3, 1]))
    rng = _rng(seed)
    a = rng.uniform(-1, 1, batch + (n, n))
    a = a + np.swapaxes(a, -1, -2) + np.eye(n) * rng.choice([-3.0, 3.0], batch + (n,))[..., None]
    return SampleInput((a.astype(dtype),), {"lower": draw(st.booleans())})


def _ldl_ref(a, lower=True):
    import scipy.linalg

    out = _each_matrix(lambda m: scipy.linalg.ldl(m.astype(np.float64), lower=lower), a)
    return out[0].astype(a.dtype), out[1].astype(a.dtype), out[2]


# ---------------------------------------------------------------- error inputs
def _not_square(op_type, fn_args=()):
    return ErrorInput(
        (np.ones((2, 3)),) + fn_args,
        exc=ValueError,
        match=rf"{op_type}: expected square matrices in the last two axes, got 2x3 \(inputs x: "
        r"shape \(2, 3\) float64\)",
    )


def _vector_input(op_type):
    return ErrorInput(
        (np.ones(3),),
        exc=ValueError,
        match=rf"{op_type}: expected a matrix \(rank >= 2\), got rank 1 \(inputs x: shape \(3,\) float64\)",
    )


def _half(op_type):
    return ErrorInput(
        (np.eye(2, dtype=np.float16),),
        exc=TypeError,
        match=rf"{op_type}: float16 is not supported by LAPACK; cast to float32 \(inputs x: shape "
        r"\(2, 2\) float16\)",
    )


def _singular(op_type):
    return ErrorInput(
        (np.ones((2, 2)),),
        exc=np.linalg.LinAlgError,
        match=rf"{op_type}: Singular matrix \(inputs shape \(2, 2\) float64\)",
    )


OPINFOS = [
    OpInfo(
        "linalg.inv",
        tl.linalg.inv,
        np.linalg.inv,
        _square(_dominant),
        op_types=("MatrixInverse",),
        dtypes=FLOATS,
        error_inputs=(
            _not_square("MatrixInverse"),
            _vector_input("MatrixInverse"),
            _half("MatrixInverse"),
            _singular("MatrixInverse"),
        ),
    ),
    OpInfo(
        "linalg.solve",
        tl.linalg.solve,
        np.linalg.solve,
        _solve_draw,
        op_types=("MatrixSolve",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (np.eye(3), np.ones((2, 1))),
                exc=ValueError,
                match=r"MatrixSolve: a is 3x3 but b has 2 rows \(inputs a: shape \(3, 3\) "
                r"float64, b: shape \(2, 1\) float64\)",
            ),
            ErrorInput(
                (np.zeros((2, 2)), np.ones(2)), exc=np.linalg.LinAlgError, match=r"MatrixSolve: Singular matrix"
            ),
        ),
    ),
    OpInfo(
        "linalg.solve_triangular",
        tl.linalg.solve_triangular,
        _solve_triangular_ref,
        lambda dtype: _solve_draw(dtype, triangular=True),
        op_types=("MatrixTriangularSolve",),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (np.eye(2), np.ones(2)),
                {"trans": 3},
                ValueError,
                r"MatrixTriangularSolve: trans must be 0, 1, 2, 'N', 'T' or 'C', got 3",
            ),
            ErrorInput(
                (np.ones((2, 3)), np.ones((3, 1))),
                exc=ValueError,
                match=r"MatrixTriangularSolve: expected square matrices .* \(inputs a: shape "
                r"\(2, 3\) float64, b: shape \(3, 1\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.det",
        tl.linalg.det,
        np.linalg.det,
        _square(_dominant),
        op_types=("MatrixDeterminant",),
        dtypes=FLOATS,
        rtol=1e-5,
        error_inputs=(_not_square("MatrixDeterminant"), _half("MatrixDeterminant")),
    ),
    OpInfo(
        "linalg.slogdet",
        tl.linalg.slogdet,
        lambda a: tuple(np.linalg.slogdet(a)),
        _square(_dominant),
        op_types=("LogMatrixDeterminant",),
        dtypes=FLOATS,
        error_inputs=(_not_square("LogMatrixDeterminant"),),
    ),
    OpInfo(
        "linalg.cholesky",
        tl.linalg.cholesky,
        lambda a: np.linalg.cholesky(_sym(a)),
        _square(_spd),
        op_types=("Cholesky",),
        dtypes=FLOATS,
        error_inputs=(
            _not_square("Cholesky"),
            ErrorInput(
                (-np.eye(2),),
                exc=np.linalg.LinAlgError,
                match=r"Cholesky: Matrix is not positive definite \(inputs shape \(2, 2\) "
                r"float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.eigh",
        tl.linalg.eigh,
        lambda a: tuple(np.linalg.eigh(_sym(a))),
        _square(_separated_symmetric),
        op_types=("SelfAdjointEigV2",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(_not_square("SelfAdjointEigV2"), _vector_input("SelfAdjointEigV2")),
    ),
    OpInfo(
        "linalg.svd",
        tl.linalg.svd,
        lambda a, full_matrices: tuple(np.linalg.svd(a, full_matrices)),
        _svd_draw,
        op_types=("Svd",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(_vector_input("Svd"), _half("Svd")),
    ),
    OpInfo(
        "linalg.svdvals",
        lambda a: tl.linalg.svd(a, compute_uv=False),
        lambda a: np.linalg.svd(a, compute_uv=False),
        _rectangular(_separated_singular),
        op_types=("Svd",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.qr",
        tl.linalg.qr,
        _qr_ref,
        _qr_draw,
        op_types=("Qr",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.eye(2),),
                {"mode": "full"},
                ValueError,
                r"Qr: mode must be 'reduced', 'complete' or 'r', got 'full' \(inputs x: shape "
                r"\(2, 2\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.pinv",
        tl.linalg.pinv,
        np.linalg.pinv,
        _rectangular(_separated_singular),
        op_types=("MatrixPseudoInverse",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(_vector_input("MatrixPseudoInverse"),),
    ),
    OpInfo(
        "linalg.matrix_power",
        tl.linalg.matrix_power,
        np.linalg.matrix_power,
        _matrix_power_draw,
        op_types=(),
        dtypes=FLOATS,
        error_inputs=(
            ErrorInput(
                (np.eye(2), 1.5), exc=TypeError, match=r"matrix_power: the exponent must be an integer, got float 1.5"
            ),
            ErrorInput(
                (np.ones((2, 3)), 2),
                exc=ValueError,
                match=r"matrix_power: expected square matrices in the last two axes \(input "
                r"shape \(2, 3\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.norm",
        tl.linalg.norm,
        np.linalg.norm,
        _norm_draw,
        op_types=(),
        dtypes=FLOATS,
        kinks=True,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 2, 2)),),
                {"ord": 1},
                ValueError,
                r"norm: ord=1 needs a 1-D or 2-D input or an explicit axis \(input shape "
                r"\(2, 2, 2\) float64\)",
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"ord": "fro", "axis": 0},
                ValueError,
                r"norm: invalid norm order 'fro' for vectors \(input shape \(2, 2\) float64\)",
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"ord": 3, "axis": (0, 1)},
                ValueError,
                r"norm: invalid norm order 3 for matrices \(input shape \(2, 2\) float64\)",
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"axis": (0, 0)},
                ValueError,
                r"norm: axis must name one or two different axes, got \(0, 0\)",
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"axis": 2},
                ValueError,
                r"norm: axis 2 is out of bounds \(input shape \(2, 2\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.svdvals (function)",
        tl.linalg.svdvals,
        np.linalg.svdvals,
        _rectangular(_separated_singular),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.eigvalsh",
        tl.linalg.eigvalsh,
        lambda a: np.linalg.eigvalsh(_sym(a)),
        _square(_separated_symmetric),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo("linalg.matrix_transpose", tl.linalg.matrix_transpose, np.linalg.matrix_transpose, _batched_matrix),
    OpInfo(
        "linalg.vecdot",
        tl.linalg.vecdot,
        np.linalg.vecdot,
        _pair_draw,
        error_inputs=(
            ErrorInput(
                (np.ones(3), np.ones(2)),
                exc=ValueError,
                match=r"vecdot: the vectors along axis -1 have 3 and 2 elements \(shape \(3,\) float64, shape \(2,\) float64\)",
            ),
        ),
    ),
    OpInfo("matvec", tl.matvec, np.matvec, lambda dtype: _matvec_draw(dtype, matrix_first=True)),
    OpInfo(
        "vecmat",
        tl.vecmat,
        np.vecmat,
        lambda dtype: _matvec_draw(dtype, matrix_first=False),
        error_inputs=(
            ErrorInput(
                (np.ones((2, 2)), np.ones(2)),
                exc=ValueError,
                match=r"^vecmat: expected a matrix \(rank >= 2\) and a vector \(rank >= 1\), got inputs shape \(2, 2\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.cross",
        tl.linalg.cross,
        np.linalg.cross,
        lambda dtype: _pair_draw(dtype, n=3),
        error_inputs=(
            ErrorInput(
                (np.ones(2), np.ones(2)),
                exc=ValueError,
                match=r"cross: both inputs must have 3 elements along axis -1",
            ),
        ),
    ),
    OpInfo(
        "linalg.outer",
        tl.linalg.outer,
        np.linalg.outer,
        _vector_pair,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 2)), np.ones(2)), exc=ValueError, match=r"outer: both inputs must be vectors \(rank 1\)"
            ),
        ),
    ),
    OpInfo(
        "linalg.trace",
        lambda x, offset: tl.linalg.trace(x, offset=offset),
        lambda x, offset: np.linalg.trace(x, offset=offset),
        lambda dtype: st.builds(
            lambda s, k: SampleInput((s.args[0], k)), _batched_matrix(dtype), st.sampled_from([0, 1, -1])
        ),
    ),
    OpInfo(
        "linalg.diagonal",
        lambda x, offset: tl.linalg.diagonal(x, offset=offset),
        lambda x, offset: np.linalg.diagonal(x, offset=offset),
        lambda dtype: st.builds(
            lambda s, k: SampleInput((s.args[0], k)), _batched_matrix(dtype), st.sampled_from([0, 1, -2])
        ),
    ),
    OpInfo(
        "linalg.vector_norm",
        tl.linalg.vector_norm,
        np.linalg.vector_norm,
        _vector_norm_draw,
        dtypes=FLOATS,
        kinks=True,
        error_inputs=(
            ErrorInput(
                (np.ones(2),), {"ord": "fro"}, ValueError, r"vector_norm: ord must be a number, inf or -inf, got 'fro'"
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"axis": (0, 0)},
                ValueError,
                r"vector_norm: invalid axis \(0, 0\) for input shape \(2, 2\) float64",
            ),
        ),
    ),
    OpInfo(
        "linalg.matrix_norm",
        tl.linalg.matrix_norm,
        np.linalg.matrix_norm,
        _matrix_norm_draw,
        dtypes=FLOATS,
        kinks=True,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones(2),),
                exc=ValueError,
                match=r"matrix_norm: expected a matrix \(rank >= 2\), got rank 1 \(input shape \(2,\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.cond",
        tl.linalg.cond,
        np.linalg.cond,
        _cond_draw,
        dtypes=FLOATS,
        kinks=True,
        rtol=1e-4,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), 1),
                exc=ValueError,
                match=r"cond: expected square matrices in the last two axes, got 2x3",
            ),
            ErrorInput((np.ones((0, 0)),), exc=np.linalg.LinAlgError, match=r"cond: not defined on empty matrices"),
        ),
    ),
    OpInfo(
        "linalg.matrix_rank",
        tl.linalg.matrix_rank,
        np.linalg.matrix_rank,
        _rank_draw,
        dtypes=FLOATS,
        differentiable=False,
    ),
    OpInfo(
        "linalg.lstsq",
        tl.linalg.lstsq,
        _lstsq_ref,
        _lstsq_draw,
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones((3, 2)), np.ones(2)),
                exc=ValueError,
                match=r"lstsq: a has 3 rows but b has 2 \(a: shape \(3, 2\) float64, b: shape \(2,\) float64\)",
            ),
        ),
    ),
    OpInfo(
        "linalg.multi_dot",
        lambda *arrays: tl.linalg.multi_dot(arrays),
        lambda *arrays: np.linalg.multi_dot(arrays),
        _multi_dot_draw,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.ones((2, 3))), exc=ValueError, match=r"multi_dot: arrays 0 and 1 do not chain"
            ),
        ),
    ),
    OpInfo(
        "linalg.tensorinv",
        tl.linalg.tensorinv,
        np.linalg.tensorinv,
        _tensorinv_draw,
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), 1), exc=ValueError, match=r"tensorinv: the first 1 axes hold 2 elements, the others 3"
            ),
        ),
    ),
    OpInfo(
        "linalg.tensorsolve",
        tl.linalg.tensorsolve,
        np.linalg.tensorsolve,
        _tensorsolve_draw,
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.ones(2)),
                exc=np.linalg.LinAlgError,
                match=r"tensorsolve: a does not hold a square matrix",
            ),
        ),
    ),
    OpInfo(
        "linalg.adjugate (det's gradient)",
        _adjugate,
        _cofactors_ref,
        _adjugate_draw,
        op_types=("MatrixAdjugate",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.adjugate gradient (det's second derivative)",
        _adjugate_grad,
        _adjugate_grad_ref,
        _adjugate_grad_draw,
        op_types=("MatrixAdjugateGrad",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.det's higher derivatives",
        _det_derivative,
        _det_derivative_ref,
        _det_derivative_draw,
        op_types=("MatrixDeterminantDerivative",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.matrix_exp",
        tl.linalg.matrix_exp,
        _expm_ref,
        _square(lambda seed, shape, dtype: (_rng(seed).uniform(-1, 1, shape) * 2).astype(dtype)),
        op_types=("MatrixExponential",),
        dtypes=FLOATS,
        error_inputs=(_not_square("MatrixExponential"), _half("MatrixExponential")),
    ),
    OpInfo(
        "linalg.eig",
        _eig_gauge_free,
        _eig_gauge_free_ref,
        _square(_separated_eigenvalues),
        op_types=("Eig",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(_not_square("Eig"), _vector_input("Eig"), _half("Eig")),
    ),
    OpInfo(
        "linalg.eigvals",
        tl.linalg.eigvals,
        _eigvals_ref,
        _square(_separated_eigenvalues),
        op_types=("Eig",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.lu_factor",
        tl.linalg.lu_factor,
        _lu_factor_ref,
        _square(_permuted_dominant),
        op_types=("Lu",),
        dtypes=FLOATS,
        error_inputs=(_vector_input("Lu"), _half("Lu")),
    ),
    OpInfo("linalg.lu", tl.linalg.lu, _lu_ref, _lu_draw, op_types=("Lu",), dtypes=FLOATS),
    # lu() takes the permutation from Lu itself (21fec32): the op that rebuilds it from pivots is checked alone.
    OpInfo(
        "LuPivotsToPermutation",
        _pivots_to_permutation,
        _pivots_to_permutation_ref,
        _pivots_draw,
        op_types=("LuPivotsToPermutation",),
        dtypes=(_dt.int32,),
        differentiable=False,
    ),
    OpInfo(
        "linalg.lu_solve",
        _lu_solve,
        _lu_solve_ref,
        _lu_solve_draw,
        op_types=("Lu", "LuPivotsToPermutation"),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.eye(2), np.ones(2)),
                {"trans": 3},
                ValueError,
                r"lu_solve: trans must be 0, 1, 2, 'N', 'T' or 'C', got 3",
            ),
        ),
    ),
    OpInfo(
        "linalg.cholesky_solve",
        tl.linalg.cholesky_solve,
        _cholesky_solve_ref,
        _cholesky_solve_draw,
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones(2), np.eye(2)),
                exc=ValueError,
                match=r"cholesky_solve: b must be a matrix \(\.\.\., n, k\), got shape \(2,\) float64",
            ),
        ),
    ),
    OpInfo(
        "linalg.solve_sylvester",
        tl.linalg.solve_sylvester,
        _sylvester_ref,
        _sylvester_draw,
        op_types=("SylvesterSolve",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.eye(2), np.eye(3), np.ones((3, 2))),
                exc=ValueError,
                match=r"SylvesterSolve: a is 2x2 and b is 3x3, so q must be 2x3, got 3x2",
            ),
            ErrorInput(
                (np.eye(2), -np.eye(2), np.ones((2, 2))),
                exc=np.linalg.LinAlgError,
                match=r"SylvesterSolve: no unique solution: a and -b have an eigenvalue in common",
            ),
        ),
    ),
    OpInfo(
        "linalg.sqrtm",
        tl.linalg.sqrtm,
        _each_matrix_ref("sqrtm"),
        _square(_near_identity),
        op_types=("MatrixSquareRoot",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(_not_square("MatrixSquareRoot"), _vector_input("MatrixSquareRoot"), _half("MatrixSquareRoot")),
    ),
    OpInfo(
        "linalg.logm",
        tl.linalg.logm,
        _each_matrix_ref("logm"),
        _square(_near_identity),
        op_types=("MatrixLogarithm",),
        dtypes=FLOATS,
        atol=1e-5,
        # Each order doubles the block matrix that SciPy's logm factors (minutes here): the second order is
        # checked once, on one matrix, in tests/test_linalgadv3.py.
        second_order=False,
        error_inputs=(_not_square("MatrixLogarithm"), _vector_input("MatrixLogarithm"), _half("MatrixLogarithm")),
    ),
    OpInfo(
        "linalg.polar",
        tl.linalg.polar,
        _polar_ref,
        _polar_draw,
        op_types=("PolarUnitary",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput((np.eye(2),), {"side": "up"}, ValueError, r"polar: side must be 'right' or 'left', got 'up'"),
        ),
    ),
    OpInfo(
        "linalg.expm_frechet",
        tl.linalg.expm_frechet,
        _frechet_ref,
        _frechet_draw,
        op_types=("MatrixExponential",),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput((np.eye(2), np.eye(3)), exc=ValueError, match=r"expm_frechet: A and E must have the same size"),
        ),
    ),
    OpInfo(
        "linalg.cho_factor and cho_solve",
        _cho,
        _cho_ref,
        _cho_draw,
        op_types=("Cholesky", "MatrixTriangularSolve"),
        dtypes=FLOATS,
        atol=1e-5,
        error_inputs=(
            ErrorInput((np.eye(2), np.ones(3)), exc=ValueError, match=r"cho_solve: c must be \(\.\.\., n, n\) and b"),
        ),
    ),
    OpInfo("linalg.toeplitz", tl.linalg.toeplitz, _toeplitz_ref, _toeplitz_draw),
    OpInfo("linalg.circulant", tl.linalg.circulant, _circulant_ref, _circulant_draw),
    *(
        OpInfo(
            f"linalg.{name}",
            getattr(tl.linalg, name),
            _each_matrix_ref(name),
            _square(_near_identity),
            op_types=("MatrixExponential",),
            dtypes=FLOATS,
            atol=1e-5,
        )
        for name in ("cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm")  # compositions of expm
    ),
    OpInfo(
        "linalg.fractional_matrix_power",
        _fractional_power,
        _fractional_power_ref,
        _square(_near_identity),
        op_types=("MatrixLogarithm", "MatrixExponential"),
        dtypes=FLOATS,
        atol=1e-5,
        second_order=False,  # as logm's: checked on one matrix in tests/test_linalgadv3.py
    ),
    OpInfo(
        "linalg.funm",
        lambda a: tl.linalg.funm(a, tl.exp),
        _expm_ref,
        _square(_near_identity),
        op_types=("Eig",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo("linalg.kron", tl.linalg.kron, _kron_ref, _kron_draw),
    OpInfo("linalg.khatri_rao", tl.linalg.khatri_rao, _khatri_rao_ref, _khatri_rao_draw),
    OpInfo(
        "linalg.solve_continuous_lyapunov",
        tl.linalg.solve_continuous_lyapunov,
        _lyapunov_ref("solve_continuous_lyapunov"),
        _lyapunov_draw,
        op_types=("SylvesterSolve",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.solve_discrete_lyapunov",
        tl.linalg.solve_discrete_lyapunov,
        _lyapunov_ref("solve_discrete_lyapunov"),
        lambda dtype: _lyapunov_draw(dtype, discrete=True),
        op_types=("MatrixSolve",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.solve_banded",
        tl.linalg.solve_banded,
        _solve_banded_ref,
        _solve_banded_draw,
        op_types=("MatrixSolve",),
        dtypes=FLOATS,
        atol=1e-5,
    ),
    OpInfo(
        "linalg.schur",
        tl.linalg.schur,
        _schur_ref,
        _schur_draw,
        op_types=("Schur",),
        dtypes=FLOATS,
        differentiable=False,
        atol=1e-5,
        error_inputs=(_not_square("Schur"), _half("Schur")),
    ),
    OpInfo(
        "linalg.hessenberg",
        tl.linalg.hessenberg,
        _hessenberg_ref,
        _hessenberg_draw,
        op_types=("Hessenberg",),
        dtypes=FLOATS,
        differentiable=False,
        atol=1e-5,
        error_inputs=(_not_square("Hessenberg"), _half("Hessenberg")),
    ),
    OpInfo(
        "linalg.ldl",
        tl.linalg.ldl,
        _ldl_ref,
        _ldl_draw,
        op_types=("LDL",),
        dtypes=FLOATS,
        atol=1e-5,
        grad_atol=1e-4,
        grad_rtol=1e-3,
        error_inputs=(_not_square("LDL"), _half("LDL")),
    ),
]

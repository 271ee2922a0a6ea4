"""NumPy's polynomial functions on coefficient vectors, highest power first (``numpy.poly*``), as exact
compositions of tensorlib ops: gradients of any order, tracing under ``tl.function`` and every backend come
with them.  ``poly``, ``roots``, ``polyder``, ``polyint``, ``polyadd``, ``polysub``, ``polymul``,
``polydiv`` and ``polyfit`` (``polyval`` is in ``numpy_extra``).

Dtypes: integer and bool coefficients become float64; float32 stays float32, as in JAX (NumPy widens some of
these to float64 through an int64 ``arange``).  Where NumPy's result length depends on the values (leading
zeros that ``roots`` strips, the remainder of ``polydiv``), eager calls do as NumPy and traced ones keep the
length the shapes give (JAX's ``strip_zeros=False`` / ``trim_leading_zeros=False``), as documented per function.

>>> import tensorlib as tl
>>> tl.polymul(tl.tensor([1.0, 1.0]), tl.tensor([1.0, -1.0])).numpy().tolist()
[1.0, 0.0, -1.0]
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as _dt
from ..dispatch import as_tensor, as_tensors
from ..tensor import Tensor
from . import creation
from . import math as math_ops
from . import shape as shape_ops
from ._shapes import as_int


def _describe(name: str, t: Tensor) -> str:
    return f"{name} shape {t.shape} ({t.dtype})"


def _coefficients(p, who: str, name: str = "p", float_result: bool = True) -> Tensor:
    """``p`` as a 1-d tensor (0-d becomes length 1, as ``np.atleast_1d``) of a float or complex dtype (a
    Variable's current value, never the Variable: ``polyder(v, 0)`` gives ``p`` back)."""
    p = math_ops.unaliased(as_tensor(p))
    if p.ndim > 1:
        raise ValueError(f"{who}: {name} must be a 1-d coefficient vector, got {_describe(name, p)}")
    if p.ndim == 0:
        p = shape_ops.reshape(p, (1,))
    if p.shape[0] is None:
        raise ValueError(f"{who}: the number of coefficients must be known, got {_describe(name, p)} (unknown size)")
    if float_result and p.dtype.kind in "biu":
        p = math_ops.cast(p, _dt.float64)
    return p


def _promote(*ps) -> tuple:
    dtype = np.result_type(*(np.dtype(p.dtype) for p in ps))
    return tuple(p if p.dtype == dtype else math_ops.cast(p, dtype) for p in ps)


def _pad_front(p: Tensor, length: int) -> Tensor:
    return p if p.shape[0] == length else shape_ops.pad(p, [(length - p.shape[0], 0)])


def polyadd(a1, a2) -> Tensor:
    """``numpy.polyadd``: the sum of two polynomials (the shorter one padded with leading zeros);
    differentiable in both.

    >>> import tensorlib as tl
    >>> tl.polyadd(tl.tensor([1.0, 2.0]), tl.tensor([1.0, 0.0, 3.0])).numpy().tolist()
    [1.0, 1.0, 5.0]
    """
    a1, a2 = as_tensors(a1, a2)
    a1, a2 = _promote(_coefficients(a1, "polyadd", "a1", False), _coefficients(a2, "polyadd", "a2", False))
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


def polysub(a1, a2) -> Tensor:
    """``numpy.polysub``: ``a1 - a2`` as polynomials (the shorter one padded with leading zeros); bool
    coefficients are refused, as NumPy's subtraction refuses them.

    >>> import tensorlib as tl
    >>> tl.polysub(tl.tensor([1.0, 2.0]), tl.tensor([1.0, 0.0, 3.0])).numpy().tolist()
    [-1.0, 1.0, -1.0]
    """
    a1, a2 = as_tensors(a1, a2)
    a1, a2 = _promote(_coefficients(a1, "polysub", "a1", False), _coefficients(a2, "polysub", "a2", False))
    if a1.dtype == _dt.bool_:
        raise TypeError(f"polysub: bool coefficients cannot be subtracted ({_describe('a1', a1)})")
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n) - _pad_front(a2, n)


def _strip_leading_zeros(p: Tensor) -> Tensor:
    """``p`` without its leading zeros (one zero left of an all-zero ``p``), as ``numpy.poly1d``; under
    ``tl.function`` the values are unknown and ``p`` stays as it is."""
    if p.is_symbolic:
        return p
    nonzero = np.flatnonzero(np.asarray(p.numpy()))
    start = int(nonzero[0]) if nonzero.size else p.shape[0] - 1
    return p[start:] if start else p


def polymul(a1, a2) -> Tensor:
    """``numpy.polymul``: the product of two polynomials (the convolution of their coefficients);
    differentiable in both.  In eager mode leading zeros are stripped first, as NumPy strips them; under
    ``tl.function`` they are kept (JAX's ``trim_leading_zeros=False``).

    >>> import tensorlib as tl
    >>> tl.polymul(tl.tensor([1.0, 2.0]), tl.tensor([1.0, 3.0])).numpy().tolist()
    [1.0, 5.0, 6.0]
    """
    from .numpy_extra import convolve

    a1, a2 = as_tensors(a1, a2)
    a1, a2 = _coefficients(a1, "polymul", "a1", False), _coefficients(a2, "polymul", "a2", False)
    for name, a in (("a1", a1), ("a2", a2)):
        if a.shape[0] == 0:
            raise ValueError(f"polymul: {name} has no coefficients ({_describe(name, a)})")
    return convolve(_strip_leading_zeros(a1), _strip_leading_zeros(a2))


def polyder(p, m: int = 1) -> Tensor:
    """``numpy.polyder``: the ``m``-th derivative of a polynomial (empty once ``m`` reaches its length; 0-d
    ``p`` is a constant polynomial, where NumPy fails;
    integer coefficients stay integers, as NumPy's, and bool ones become int64); differentiable in ``p``.

    >>> import tensorlib as tl
    >>> tl.polyder(tl.tensor([1.0, 1.0, 1.0, 1.0])).numpy().tolist()
    [3.0, 2.0, 1.0]
    """
    m = as_int(m, "polyder: m")
    if m < 0:
        raise ValueError(f"polyder: the order of the derivative m must be >= 0, got {m} (see polyint)")
    p = _coefficients(p, "polyder", float_result=False)
    if p.dtype == _dt.bool_:  # NumPy's bool * int64 powers: the powers must not become bools
        p = math_ops.cast(p, _dt.int64)
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return p[:0]
        p = p[:-1] * creation.arange(n, 0, -1, dtype=_dt.real_dtype(p.dtype))
    return p


def polyint(p, m: int = 1, k=None) -> Tensor:
    """``numpy.polyint``: the ``m``-th antiderivative of a polynomial (0-d ``p`` is a constant polynomial,
    where NumPy fails for ``m > 0``), the integration constants ``k``
    (``None``: zeros; a scalar, or one value, for every step; or ``m`` values, the first for the first
    integration);
    differentiable in ``p`` and ``k``.

    >>> import tensorlib as tl
    >>> tl.polyint(tl.tensor([3.0, 2.0, 1.0]), k=5.0).numpy().tolist()
    [1.0, 1.0, 1.0, 5.0]
    """
    m = as_int(m, "polyint: m")
    if m < 0:
        raise ValueError(f"polyint: the order of the antiderivative m must be >= 0, got {m} (see polyder)")
    p = _coefficients(p, "polyint")
    if k is None:
        k = creation.zeros((m,), dtype=p.dtype)
    k = as_tensors(p, k)[1]
    if k.ndim == 0 or k.shape == (1,):  # NumPy: one constant serves every step
        k = shape_ops.broadcast_to(shape_ops.reshape(k, ()), (m,))
    if k.ndim == 1 and k.shape[0] is None:
        raise ValueError(f"polyint: the number of constants k must be known, got shape {k.shape} (unknown size)")
    if k.ndim != 1 or k.shape[0] < m:
        raise ValueError(f"polyint: k must be a scalar or a 1-d array of at least m = {m} values, got shape {k.shape}")
    p, k = _promote(p, math_ops.cast(k, _dt.float64) if k.dtype.kind in "biu" else k)
    for step in range(m):
        n = p.shape[0]
        p = shape_ops.concat([p / creation.arange(n, 0, -1, dtype=_dt.real_dtype(p.dtype)), k[step : step + 1]])
    return p


def polydiv(u, v) -> tuple:
    """``numpy.polydiv``: the quotient and remainder of ``u / v``, ``u = q * v + r``.  The remainder has
    ``len(v) - 1`` coefficients (at least one); in eager mode its leading (near-)zeros are dropped as NumPy
    drops them (``allclose(r[0], 0)``), under ``tl.function`` they are kept (JAX's ``trim_leading_zeros=False``
    shape).  In eager mode leading zeros of ``v`` are stripped first (NumPy and JAX divide by them and return
    inf and NaN) and the zero polynomial is a ZeroDivisionError; under ``tl.function`` ``v[0]`` must not be
    zero.  Differentiable in both.

    >>> import tensorlib as tl
    >>> q, r = tl.polydiv(tl.tensor([1.0, 3.0, 3.0]), tl.tensor([1.0, 1.0]))
    >>> q.numpy().tolist(), r.numpy().tolist()
    ([1.0, 2.0], [1.0])
    """
    u, v = as_tensors(u, v)
    u, v = _promote(_coefficients(u, "polydiv", "u"), _coefficients(v, "polydiv", "v"))
    for name, a in (("u", u), ("v", v)):
        if a.shape[0] == 0:
            raise ValueError(f"polydiv: {name} has no coefficients ({_describe(name, a)})")
    v = _strip_leading_zeros(v)
    if not v.is_symbolic and not np.any(np.asarray(v.numpy())):
        raise ZeroDivisionError(f"polydiv: division by the zero polynomial ({_describe('v', v)})")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    if m < n:
        q, r = creation.zeros((1,), dtype=u.dtype), u
    else:
        scale = 1.0 / v[0]
        r, quotient = u, []
        for k in range(m - n + 1):
            d = scale * r[k]
            quotient.append(d)
            r = r.at[k : k + n + 1].add(-d * v)
        # The first m - n + 1 remainder coefficients are zero by construction (only rounding is left there).
        q, r = shape_ops.stack(quotient), r[m - n + 1 :] if n > 0 else creation.zeros((1,), dtype=u.dtype) * u[0]
    if not r.is_symbolic:
        values = np.asarray(r.numpy())
        start = 0
        while start < len(values) - 1 and np.allclose(values[start], 0, rtol=1e-14):
            start += 1
        r = r[start:] if start else r
    return q, r


def poly(seq_of_zeros) -> Tensor:
    """``numpy.poly``: the monic polynomial with the given roots, or the characteristic polynomial of a
    square matrix (from its eigenvalues; real for a real matrix).  Complex roots give complex coefficients
    even when they come in conjugate pairs (NumPy then returns the real part: a dtype that depends on the
    values); no roots give 1.  Differentiable in the roots (and the matrix, where its eigenvalues are simple).

    >>> import tensorlib as tl
    >>> tl.poly(tl.tensor([1.0, 2.0])).numpy().tolist()
    [1.0, -3.0, 2.0]
    """
    from .elementwise import real
    from .linalg_general import eigvals

    z = as_tensor(seq_of_zeros)
    if z.ndim == 2 and None in z.shape:
        raise ValueError(f"poly: the size of a matrix input must be known, got {_describe('input', z)} (unknown size)")
    matrix = z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] is not None and z.shape[0] > 0
    if z.ndim > 1 and not matrix:
        raise ValueError(f"poly: input must be 1-d or a non-empty square 2-d array, got {_describe('input', z)}")
    zeros = eigvals(z) if matrix else _coefficients(z, "poly", "seq_of_zeros")
    if zeros.dtype.kind in "biu":
        zeros = math_ops.cast(zeros, _dt.float64)
    if zeros.shape[0] == 0:
        return creation.ones((), dtype=zeros.dtype)
    a = shape_ops.concat([creation.ones((1,), dtype=zeros.dtype), -zeros[:1]])
    for i in range(1, zeros.shape[0]):
        shifted = shape_ops.pad(a, [(0, 1)])
        a = shifted - shape_ops.pad(a, [(1, 0)]) * zeros[i]
    return real(a) if matrix and z.dtype.kind != "c" else a


def roots(p) -> Tensor:
    """``numpy.roots``: the roots of a polynomial, the eigenvalues of its companion matrix, always complex
    (as ``jax.numpy.roots``; NumPy returns real roots as floats, a dtype that depends on the values).  In
    eager mode leading zeros are stripped, as NumPy; under ``tl.function`` the coefficients are taken
    as they are (JAX's ``strip_zeros=False``), so the first must not be zero.  Trailing zeros give exact
    zero roots, and differentiable ones: stripping them, as NumPy and JAX do, would cut every root's
    dependence on those coefficients.  In eager mode the roots come in ``np.roots``' order (with trailing zeros:
    the other roots in the order of the stripped polynomial's, then the zeros); under ``tl.function`` and
    ``tl.vmap`` in LAPACK's order for the companion matrix of the coefficients as given, which differs where the
    coefficients end in zeros (sort with ``sort_complex`` to compare).  Differentiable where the roots are simple.

    >>> import tensorlib as tl
    >>> sorted(tl.roots(tl.tensor([1.0, -3.0, 2.0])).numpy().real.round(6).tolist())
    [1.0, 2.0]
    """
    from .linalg_general import eigvals

    p = _coefficients(p, "roots")
    dtype = _dt.complex_dtype(p.dtype)
    if not p.is_symbolic:
        nonzero = np.flatnonzero(np.asarray(p.numpy()))
        if nonzero.size == 0:
            return creation.zeros((0,), dtype=dtype)
        p = p[int(nonzero[0]) :]
    n = p.shape[0]
    if n < 2:
        return creation.zeros((0,), dtype=dtype)
    # Trailing zeros stay in the companion matrix: LAPACK's balancing isolates their zero columns, so their
    # roots come out exactly 0 (as NumPy's appended zeros), and every root keeps its dependence on them.
    first = shape_ops.reshape(-p[1:] / p[0], (1, n - 1))
    companion = shape_ops.concat([first, creation.eye(n - 2, n - 1, dtype=p.dtype)], axis=0)
    out = math_ops.cast(eigvals(companion), dtype)
    if not p.is_symbolic:
        values = np.asarray(p.numpy())
        trailing = n - 1 - int(np.flatnonzero(values)[-1])
        if trailing:
            # LAPACK orders the larger companion matrix's eigenvalues differently from the stripped one's: put
            # them in np.roots' order (the stripped polynomial's roots, then the zeros), each matched to its
            # nearest, so values and gradients are this matrix's.
            order, free = [], np.abs(out.numpy()) >= 0
            for r in np.roots(values):
                j = int(np.argmin(np.where(free, np.abs(out.numpy() - r), np.inf)))
                order.append(j)
                free[j] = False
            out = shape_ops.take(out, np.asarray(order, np.int64), axis=0)
    return out


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """``numpy.polyfit``: the least-squares polynomial of degree ``deg`` through the points ``(x, y)``
    (``y`` 1-d, or 2-d with one fit per column), each point's residual weighted by ``w``; the columns of
    the Vandermonde matrix are scaled to unit norm, as NumPy, and solved by ``linalg.lstsq``.  ``full=True``
    returns ``(p, residuals, rank, singular_values, rcond)`` (``rcond`` a 0-d tensor; ``residuals`` empty for a
    rank-deficient fit, as NumPy's, except under ``tl.function``, where the shape cannot depend on the rank and
    they are the sum of squares, as ``linalg.lstsq``'s); ``cov=True`` (or ``"unscaled"``) returns
    ``(p, covariance)``.  A rank-deficient fit warns (``numpy.exceptions.RankWarning``) in eager mode.
    Differentiable in ``x``, ``y`` and ``w`` where the rank is full.

    >>> import tensorlib as tl
    >>> tl.polyfit(tl.tensor([0.0, 1.0, 2.0, 3.0]), tl.tensor([1.0, 3.0, 5.0, 7.0]), 1).numpy().round(6).tolist()
    [2.0, 1.0]
    """
    from .linalg import matmul
    from .linalg_functions import lstsq
    from .linalg_ops import inv
    from .numpy_extra import vander
    from .reduce import sum as reduce_sum

    deg = as_int(deg, "polyfit: deg")
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    x, y, w = as_tensors(x, y, w)
    if x.ndim != 1:
        raise TypeError(f"polyfit: expected a 1-d vector for x, got {_describe('x', x)}")
    if y.ndim not in (1, 2):
        raise TypeError(f"polyfit: expected a 1-d or 2-d array for y, got {_describe('y', y)}")
    if None in (x.shape[0], y.shape[0]):
        raise ValueError(f"polyfit: the number of points must be known, got {_describe('x', x)} (unknown size)")
    if x.shape[0] == 0:
        raise TypeError(f"polyfit: expected a non-empty vector for x, got {_describe('x', x)}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(
            f"polyfit: expected x and y to have the same length, got {_describe('x', x)}, {_describe('y', y)}"
        )
    tensors = [x, y] + ([w] if w is not None else [])
    dtype = np.result_type(*(np.float64 if t.dtype.kind in "biu" else np.dtype(t.dtype) for t in tensors))
    x, y = (math_ops.cast(t, dtype) for t in (x, y))
    order = deg + 1
    rcond = x.shape[0] * float(np.finfo(_dt.real_dtype(dtype)).eps) if rcond is None else float(rcond)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = math_ops.cast(tensors[2], dtype)
        if w.ndim != 1:
            raise TypeError(f"polyfit: expected a 1-d array for weights, got {_describe('w', w)}")
        if w.shape[0] != y.shape[0]:
            raise TypeError(
                f"polyfit: expected w and y to have the same length, got {_describe('w', w)}, {_describe('y', y)}"
            )
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = math_ops.sqrt(reduce_sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, residuals, rank, s = lstsq(lhs, rhs, rcond)
    c = c / (scale[:, None] if c.ndim == 2 else scale)
    if not rank.is_symbolic and int(rank) != order and not full:
        warnings.warn(
            f"polyfit: the fit may be poorly conditioned (rank {int(rank)} < {order})",
            np.exceptions.RankWarning,
            stacklevel=2,
        )
    if full:
        if not rank.is_symbolic and int(rank) < order:  # NumPy's: no residuals for a rank-deficient fit
            residuals = residuals[..., :0]
        return c, residuals, rank, s, creation.full((), rcond, dtype=_dt.real_dtype(dtype))
    if not cov:
        return c
    base = inv(matmul(shape_ops.transpose(lhs), lhs)) / (scale[:, None] * scale[None, :])
    if cov == "unscaled":
        return c, (base if y.ndim == 1 else base[:, :, None])
    if x.shape[0] <= order:
        raise ValueError(
            f"polyfit: the number of data points ({x.shape[0]}) must exceed order ({order}) to scale the covariance matrix"
        )
    factor = residuals / (x.shape[0] - order)
    return c, (base * factor if y.ndim == 1 else base[:, :, None] * factor)

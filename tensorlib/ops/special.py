"""Special functions (``tl.special``): SciPy's kernels, gradients in tensorlib ops.

SciPy is imported by this module only, lazily, the first time a kernel runs:
``import tensorlib`` needs only NumPy.  Each gradient is written with the
special functions themselves (``gammaln' = digamma``, ``digamma' =
polygamma(1, .)``, ``i0' = i1``, ...), so every order of derivative exists.

Integer and bool inputs give float64 (NumPy's rule for float-valued
functions); float16 is computed in float32 and rounded back.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor, as_tensors
from ..grad.registry import not_differentiable, register_gradient
from ..tensor import Tensor
from . import math as math_ops
from ._optional import scipy_module
from ._shapes import broadcast_shapes
from .nn.extra_activations import log_sigmoid
from .registry import defop, spec

_SQRT_PI = _math.sqrt(_math.pi)


def scipy_special():
    """The ``scipy.special`` module; a clear ImportError naming the extra if SciPy is missing."""
    return scipy_module("special", "tl.special needs SciPy: pip install 'tensorlib[special]' (or scipy)")


def _result_dtype(*dtypes):
    for d in dtypes:
        if d.kind not in "biuf":
            raise TypeError(f"not defined for {d}")
    floats = [d for d in dtypes if d.kind == "f"]
    return _dt.promote_types(*floats) if floats else _dt.float64


def _elementwise_infer(*xs, **attrs):
    shape = xs[0].shape if len(xs) == 1 else broadcast_shapes(*(x.shape for x in xs))
    return spec(shape, _result_dtype(*(x.dtype for x in xs)))


def _scipy_kernel(function_name, in_float64=False):
    """Kernel calling ``scipy.special.<function_name>`` in float32 or float64 (``in_float64``: always float64, for
    functions whose float32 loop is less accurate than one rounding), cast to the rule's dtype."""

    def kernel(*arrays, **attrs):
        dtype = _result_dtype(*(a.dtype for a in arrays))
        work = _dt.float64 if in_float64 else _dt.float32 if dtype == _dt.float16 else dtype
        fn = getattr(scipy_special(), function_name)
        args = [a.astype(work, copy=False) for a in arrays]
        out = fn(*attrs.values(), *args)  # polygamma's order n comes first
        return np.asarray(out).astype(dtype, copy=False)

    kernel.__name__ = kernel.__qualname__ = f"scipy_{function_name}"
    return kernel


def _define(op_type, function_name, inputs=("x",), attrs=None, doc="", generic=None, kernel=None):
    """An op whose NumPy kernel is ``scipy.special.<function_name>`` (or ``kernel``, built on it); ``generic``
    (written against the Array API standard) runs it elsewhere.  Without one the op is NumPy-only and says why."""
    op = defop(
        op_type,
        inputs=inputs,
        attrs=attrs,
        infer=_elementwise_infer,
        elementwise=True,
        promote=tuple(range(len(inputs))) if len(inputs) > 1 else None,
        doc=doc,
    )
    op.kernel("numpy")(kernel or _scipy_kernel(function_name))
    if generic is not None:
        op.generic(generic)
    else:
        op.kernels_reason = f"scipy.special.{function_name}; the Array API standard has no special functions"
    return op


def _of_orders_infer(n, x):
    if n.dtype.kind not in "iu":
        raise TypeError(f"the order n must be integers, got {n.dtype}")
    return spec(broadcast_shapes(n.shape, x.shape), _result_dtype(x.dtype))


def _define_of_orders(op_type, function_name, doc):
    """``function_name(n, x)`` with the order ``n`` an integer tensor input: for an order whose values are unknown
    (traced, or one per element under ``tl.vmap``, which batches it as an elementwise op)."""
    op = defop(op_type, inputs=("n", "x"), infer=_of_orders_infer, elementwise=True, doc=doc)

    @op.kernel("numpy")
    def kernel(n, x):
        if n.size and n.min() < 0:
            raise ValueError(f"{op_type}: the order n must be a non-negative integer, got {int(n.min())}")
        dtype = _result_dtype(x.dtype)
        work = _dt.float32 if dtype == _dt.float16 else dtype
        return np.asarray(getattr(scipy_special(), function_name)(n, x.astype(work, copy=False))).astype(dtype)

    kernel.__name__ = kernel.__qualname__ = f"scipy_{function_name}_of_orders"
    op.kernels_reason = f"scipy.special.{function_name}; the Array API standard has no special functions"
    return op


def _refuse(message):
    """A gradient rule that raises ``LookupError(message)``: a derivative the op does not have."""

    def rule(node, g):
        raise LookupError(message)

    return rule


def _define_partials(op_type, inputs, partials, doc, reason, picks=False):
    """The op of the partial derivatives that have no closed form (``BetaincGrad``, ...): its attribute ``wrt`` picks
    one of ``partials(*arrays)`` (NumPy, float64; with ``picks``, ``partials(*arrays, wrt=wrt)`` computes only that
    one), rounded once to the rule's dtype."""

    def kernel(*arrays, wrt):
        dtype = _result_dtype(*(a.dtype for a in arrays))
        out = partials(*arrays, wrt=wrt) if picks else partials(*arrays)[wrt]
        return np.asarray(out).astype(dtype, copy=False)

    kernel.__name__ = kernel.__qualname__ = partials.__name__.lstrip("_") + "_kernel"
    op = defop(
        op_type,
        inputs=inputs,
        attrs={"wrt": 0},
        infer=_elementwise_infer,
        elementwise=True,
        promote=tuple(range(len(inputs))),
        doc=doc,
    )
    op.kernel("numpy")(kernel)
    op.kernels_reason = reason
    return op


def _floats(xp, *arrays):
    """The rule's dtype: integers and bools become float64 (float arguments are already promoted)."""
    return [a if xp.isdtype(a.dtype, "real floating") else xp.astype(a, xp.float64) for a in arrays]


def _logit_kernel(xp, p):
    """SciPy's formula: log(p / (1 - p)) (-inf at 0, inf at 1, NaN outside [0, 1]), but around 1/2, where
    that quotient is near 1 and its log loses digits (2e-9 relative at p = 0.5 + 1e-10), the difference
    log1p(s) - log1p(-s) with s = 2p - 1 (exact there)."""
    (p,) = _floats(xp, p)
    middle = xp.logical_and(p >= 0.3, p <= 0.65)
    s = xp.where(middle, 2.0 * p - 1.0, xp.zeros_like(p))
    return xp.where(middle, xp.log1p(s) - xp.log1p(-s), xp.log(p / (1.0 - p)))


def _x_times(log_name):
    """x * log(y) (or log1p) with 0 where x == 0 and y is not NaN, as SciPy's xlogy/xlog1py."""

    def kernel(xp, x, y):
        x, y = _floats(xp, x, y)
        out = x * getattr(xp, log_name)(y)
        return xp.where(xp.logical_and(x == 0, xp.logical_not(xp.isnan(y))), xp.zeros_like(out), out)

    kernel.__name__ = kernel.__qualname__ = f"x_times_{log_name}"
    return kernel


def _float(x):
    """``x`` as a Tensor, integer and bool values converted to float64."""

    x = as_tensor(x)
    return math_ops.cast(x, dtype=_dt.float64) if x.dtype.kind in "biu" else x


def _floats_together(*values) -> tuple:
    """Several arguments as :func:`_float` makes each, lists and Python numbers read next to the arrays (after
    their integers became float64): ``boxcox(float64 x, [0.1])`` takes the float64 0.1, not a float32 one widened."""
    arrays_first = [_float(v) if hasattr(v, "dtype") else v for v in values]
    return tuple(None if t is None else _float(t) for t in as_tensors(*arrays_first))


def _widened(function, *tensors):
    """``function(*tensors)`` computed in float64 and rounded once to their float16 or float32 dtype (a composite
    whose float32 steps would each round: boxcox lost 13 float32 ulps, 0.5 so); float64 as it is."""
    narrow = _dt.promote_types(*(t.dtype for t in tensors))
    if narrow not in (_dt.float16, _dt.float32):
        return function(*tensors)
    return math_ops.cast(function(*(math_ops.cast(t, _dt.float64) for t in tensors)), narrow)


def _in_float64(derivative, op, x, value):
    """``derivative(x, value)`` for ``value = op(x)``; float16 and float32 compute it in float64 (``op`` again)
    and round once: the formulas below cancel or exponentiate, which costs float32 digits in proportion
    to x**2 (float32 erfcx' was 5e-5 off at x = 13.7, log_ndtr' 5e-6 at 11.6, i0e' 5e-6 at 29, erfc' and
    ndtr' 1e-6 at 5.4 and 10.6, erfcinv' 1e-6 at 1.9999999).  ``op`` None: the derivative needs no value."""
    if x.dtype not in (_dt.float16, _dt.float32):
        return derivative(x, value)
    wide = math_ops.cast(x, _dt.float64)
    return math_ops.cast(derivative(wide, None if op is None else op(wide)), x.dtype)


# ------------------------------------------------------------------ the gamma family
_gammaln = _define("Lgamma", "gammaln", doc="log|Gamma(x)|.")


def _digamma_kernel(x):
    """SciPy's psi, but below 0 by the reflection ``psi(1 - x) - pi cot(pi r)`` with ``r = x - round(x)`` exact: SciPy's
    reflection takes tan(pi x) of the rounded ``pi x``, which loses digits next to a pole (psi(-1 + 1e-14) was 0.8%
    off, psi(-4 + 1e-12) 6e-5) and in proportion to |x| (psi(-1e6 - 0.3) 1e-10)."""
    dtype = _result_dtype(x.dtype)
    x = x.astype(np.float64)
    sp = scipy_special()
    with np.errstate(all="ignore"):
        r = x - np.round(x)
        # cot(pi r) from the nearer of its pole and its zero: 1 / tan(pi r), or tan(pi (1/2 - |r|)) with 1/2 - |r| exact
        cot = np.where(np.abs(r) < 0.25, 1.0 / np.tan(np.pi * r), np.sign(r) * np.tan(np.pi * (0.5 - np.abs(r))))
        reflected = sp.psi(1.0 - x) - np.pi * cot
        out = np.where((x < 0) & (r != 0) & np.isfinite(x), reflected, sp.psi(x))
    return out.astype(dtype, copy=False)


_digamma = _define("Digamma", "psi", doc="d/dx log Gamma(x).", kernel=_digamma_kernel)
_polygamma = _define("Polygamma", "polygamma", attrs={"n": 1}, doc="The n-th derivative of digamma.")
_gamma = _define("Gamma", "gamma", doc="Gamma(x).")
register_gradient("Lgamma", lambda node, g: g * digamma(node.inputs[0]))
register_gradient("Digamma", lambda node, g: g * polygamma(1, node.inputs[0]))
register_gradient("Polygamma", lambda node, g: g * polygamma(node.attrs["n"] + 1, node.inputs[0]))
_polygamma_of_orders = _define_of_orders("PolygammaOfOrders", "polygamma", "Polygamma with the order n an input.")
register_gradient("PolygammaOfOrders", None, lambda node, g: g * polygamma(node.inputs[0] + 1, node.inputs[1]))
register_gradient("Gamma", lambda node, g: g * node.outputs[0] * digamma(node.inputs[0]))


def gammaln(x) -> Tensor:
    """``log|Gamma(x)|`` (SciPy's ``gammaln``); gradient ``digamma(x)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.gammaln(tl.tensor(5.0))), 6)   # log(4!)
    3.178054
    """
    return apply(_gammaln, (x,))


def digamma(x) -> Tensor:
    """``d/dx log Gamma(x)``; gradient ``polygamma(1, x)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.digamma(tl.tensor(1.0))), 6)   # minus Euler's constant
    -0.577216
    """
    return apply(_digamma, (x,))


def polygamma(n, x) -> Tensor:
    """The ``n``-th derivative of ``digamma``; gradient ``polygamma(n + 1, x)``.  ``n`` is a non-negative
    integer: a Python int, or, as in SciPy and JAX, an integer array or Tensor broadcasting against ``x``
    (a traced or vmapped one is an input of the op, ``PolygammaOfOrders``).  An integer-valued float (``1.0``, or a
    float array of them) is that integer, as in SciPy and JAX; a non-integer or negative order is a ValueError (SciPy
    and JAX give NaN, PyTorch refuses a float), and so is a traced float order, whose values are not known.

    >>> import tensorlib as tl
    >>> round(float(tl.special.polygamma(1, tl.tensor(1.0))), 6)   # pi ** 2 / 6
    1.644934
    >>> tl.special.polygamma(tl.tensor([0, 1]), tl.tensor([1.0, 1.0])).numpy().round(6).tolist()
    [-0.577216, 1.644934]
    >>> round(float(tl.special.polygamma(1.0, tl.tensor(1.0))), 6)
    1.644934
    """
    return _by_order(_polygamma, n, x)


def _by_order(op, n, x) -> Tensor:
    """``op(x, n=n)`` for an integer order ``n`` (its attribute): a Python int, or an integer array or Tensor
    broadcasting against ``x``, one op per distinct order, selected elementwise; a Tensor whose values are unknown
    (traced, or mapped by ``tl.vmap``) is an input of the op's ``*OfOrders`` form."""
    if isinstance(n, Tensor) and n.is_symbolic:
        n = math_ops.cast(n, _dt.int64) if n.dtype.kind == "b" else n  # SciPy's: True is order 1, False order 0
        if n.dtype.kind not in "iu":
            raise ValueError(f"{op.name}: the order n must be a non-negative integer (or integer array), got {n!r:.60}")
        return apply(_OF_ORDERS[op.name], (n, x))
    orders = _orders(op.name, n)
    if orders.ndim == 0:
        return apply(op, (x,), {"n": int(orders)})
    out = None
    for k in np.unique(orders) if orders.size else (0,):
        value = apply(op, (x,), {"n": int(k)})
        out = math_ops.where(orders == k, value, value if out is None else out)
    return out


def _orders(op_type, n) -> np.ndarray:
    """The order ``n`` of ``op_type`` as a NumPy integer array (0-d for one order), checked."""
    if isinstance(n, Tensor):
        n = n.numpy()
    orders = np.asarray(n)
    integral = orders.dtype.kind == "f" and np.all(np.isfinite(orders)) and np.all(orders == np.floor(orders))
    too_big = orders.dtype == object and all(isinstance(v, int) for v in orders.ravel().tolist())
    if too_big or (orders.dtype.kind in "fu" and orders.size and (integral or orders.dtype.kind == "u")):
        # Python ints past int64 (an object array), uint64 and integral floats past int64 (which astype wrapped
        # to a negative order): an OverflowError naming the argument, DESIGN §6.
        if too_big or np.max(orders) >= 2.0**63:
            raise OverflowError(f"{op_type}: the order n {n!r:.60} does not fit in int64")
    if integral or orders.dtype.kind == "b":
        # An integer-valued float, as SciPy and JAX take it (1.0 is order 1); a bool, as SciPy (True is order 1).
        orders = orders.astype(np.int64)
    if orders.dtype.kind not in "iu" or (orders.size and orders.min() < 0):
        raise ValueError(f"{op_type}: the order n must be a non-negative integer (or integer array), got {n!r:.60}")
    return orders


def gamma(x) -> Tensor:
    """``Gamma(x)``; gradient ``Gamma(x) digamma(x)``.

    >>> import tensorlib as tl
    >>> float(tl.special.gamma(tl.tensor(5.0)))
    24.0
    """
    return apply(_gamma, (x,))


# B_2k / (2k (2k - 1)), k = 1..8: log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) ~ sum_k c_k x**(1 - 2k),
# within 2e-18 from x = 10 on (the next term is 43867/244188 x**-15).
_STIRLING_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
_STIRLING_FROM = 10.0
_LOG_SQRT_2PI = 0.5 * _math.log(2 * _math.pi)


def _log_gamma_correction(x: np.ndarray) -> np.ndarray:
    """``log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2)`` for ``x >= 10``, from Stirling's series."""
    inverse = 1.0 / x
    inverse_square, series = inverse * inverse, _STIRLING_SERIES[-1]
    for c in _STIRLING_SERIES[-2::-1]:
        series = series * inverse_square + c
    return series * inverse


def _log_beta(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log|B(a, b)|, where)``, float64: SciPy's, except where the larger argument is 10 or more (and both are
    positive), the form of Didonato and Morris (R's lbeta) that takes the log-gammas' differences analytically:
    SciPy subtracts log-gammas of size q log q there (betaln(2.5, 1e6) was 2e-9 off, 3e5 ulps; beta(0.5, 1e6)
    1e-9 relative; t.logpdf at df = 2e6 7e-10 relative).  ``where`` marks those elements."""
    sp = scipy_special()
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    out = np.array(sp.betaln(a, b), np.float64, ndmin=a.ndim)
    p, q = np.minimum(a, b), np.maximum(a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        where = (p > 0) & (q >= _STIRLING_FROM) & np.isfinite(p + q)
    if where.any():
        p, q = p[where], q[where]
        total = p + q
        ratio = p / total
        correction = _log_gamma_correction(q) - _log_gamma_correction(total)
        both = p >= _STIRLING_FROM
        large_p = np.where(both, p, _STIRLING_FROM)
        out[where] = np.where(
            both,
            _LOG_SQRT_2PI
            - 0.5 * np.log(q)
            + _log_gamma_correction(large_p)
            + correction
            + (p - 0.5) * np.log(ratio)
            + q * np.log1p(-ratio),
            sp.gammaln(p) + correction + p - p * np.log(total) + (q - 0.5) * np.log1p(-ratio),
        )
    return out, where


def _betaln_kernel(a, b):
    return _log_beta(a, b)[0].astype(_result_dtype(a.dtype, b.dtype), copy=False)


# SciPy's beta is Gamma(a) Gamma(b) / Gamma(a + b) (exact to 1 ulp) until a + b exceeds this, log-gammas from there.
_SCIPY_BETA_BY_GAMMAS = 171.0


def _beta_kernel(a, b):
    """SciPy's beta, but exp(log B) where SciPy differences log-gammas (beta(2.5, 1e6) was 2e-9 off)."""
    log_beta, where = _log_beta(a, b)
    where = where & (np.add(a, b, dtype=np.float64) > _SCIPY_BETA_BY_GAMMAS)
    out = np.array(scipy_special().beta(a.astype(np.float64), b.astype(np.float64)), np.float64, ndmin=where.ndim)
    out[where] = np.exp(log_beta[where])
    return out.astype(_result_dtype(a.dtype, b.dtype), copy=False)


# ------------------------------------------------------------------ Loader's saddle-point forms (for tl.stats)
# Loader's saddle-point form of the Poisson density (C. Loader, "Fast and accurate computation of binomial
# probabilities", 2000; R's dpois_raw), for k >= 1 and k / mu in (1/199, 199):
#   log(mu**k e**-mu / k!) = -stirling_error(k) - log(2 pi k) / 2 - deviance(k, mu),
# three terms of one sign.  The textbook k log(mu) - mu - log(k!) subtracts terms of size k log(k) from each
# other: poisson.logpmf(1e15, 1e15) came out -16 for -18.19 (SciPy too), float32 kept 2 digits at 1e4
# and none at 1e8.  Elsewhere (k < 1, a far mu, 0, inf, nan) the textbook form is accurate and defined.
_DEVIANCE_SERIES_BELOW = 0.25  # |v| at which the deviance's direct form loses at most 2 bits


def stirling_error(k) -> Tensor:
    """``log Gamma(k + 1) - (k log k - k + log(2 pi k) / 2)`` for ``k >= 1``: Stirling's series from 10 on,
    below it that difference in float64 (it loses 1e-14 absolute there, nothing relative to the result)."""
    w = math_ops.where
    large = k >= _STIRLING_FROM
    inverse = 1.0 / w(large, k, _STIRLING_FROM)
    inverse_square, series = inverse * inverse, _STIRLING_SERIES[-1]
    for c in _STIRLING_SERIES[-2::-1]:
        series = series * inverse_square + c

    def difference(x, _):
        return gammaln(x + 1.0) - x * math_ops.log(x) + x - 0.5 * math_ops.log(x) - _LOG_SQRT_2PI

    return w(large, series * inverse, _in_float64(difference, None, w(large, 1.0, k), None))


def relative_difference(k, mu) -> Tensor:
    """``(k - mu) / (k + mu)``, halved first so that ``k + mu`` does not overflow near the float's maximum."""
    return (0.5 * k - 0.5 * mu) / (0.5 * k + 0.5 * mu)


def deviance(k, mu) -> Tensor:
    """Loader's ``bd0``: ``k log(k / mu) + mu - k >= 0`` for positive ``k`` and ``mu``, without the cancellation
    of that sum near ``k == mu``: with ``v = (k - mu) / (k + mu)``, ``k log(k / mu) = 2 k atanh(v)``, so it is
    ``(k - mu) v + 2 k (v**3 / 3 + v**5 / 5 + ...)``, summed where ``|v| < 1/4`` (to the dtype's precision)."""
    w = math_ops.where
    v = relative_difference(k, mu)
    small = math_ops.abs(v) < _DEVIANCE_SERIES_BELOW
    vs = w(small, v, 0.0)
    v2 = vs * vs
    eps = float(np.finfo(v.dtype).eps)
    terms = next(j for j in range(1, 40) if _DEVIANCE_SERIES_BELOW ** (2 * j) < eps)
    series = 1.0 / (2 * terms + 1)
    for j in range(terms - 1, 0, -1):
        series = series * v2 + 1.0 / (2 * j + 1)
    near = (k - mu) * vs + k * (2.0 * vs * v2 * series)
    ratio = w(small, 1.0, k / mu)
    return w(small, near, k * math_ops.log(ratio) + mu - k)


def poisson_log_density(k, mu) -> Tensor:
    """``log(mu**k e**-mu / Gamma(k + 1))`` for a real ``k >= 0`` (the Poisson log-pmf, and with ``k = a - 1``,
    ``mu = x`` the gamma log-density), accurate where ``k`` and ``mu`` are large and close (Loader's form)."""
    w = math_ops.where
    v = relative_difference(k, mu)
    loader = math_ops.logical_and(k >= 1.0, math_ops.abs(v) < 0.99)  # k / mu in (1/199, 199); false for nan, inf and 0
    kl, mul = w(loader, k, 1.0), w(loader, mu, 1.0)
    saddle = -stirling_error(kl) - 0.5 * math_ops.log(kl) - _LOG_SQRT_2PI - deviance(kl, mul)
    return w(loader, saddle, xlogy(k, mu) - mu - gammaln(k + 1.0))


def gamma_log_density(a, x) -> Tensor:
    """``log(x**(a - 1) e**-x / Gamma(a))`` for ``x >= 0``: a Poisson(x) probability of a - 1, which Loader's form
    gives accurately where a and x are large (R's dgamma).  From the a at which a - 1 rounds (2**24 in float32), it
    is (a / x) times the Poisson probability of a, there a small factor (|log(a / x)| < 6 where the saddle-point
    form applies).  At x = 0 and inf, the definition.  Below a = 2 (where Loader's form is not used) the definition
    ``(a - 1) log x - x - gammaln(a)``: the Poisson form's ``gammaln((a - 1) + 1)`` lost a's digits for a tiny a (a -
    1 rounds: gammainc's slope in x at a = 1e-10 was 8e-8 relative off)."""
    w = math_ops.where
    huge = (a >= 2.0 ** (np.finfo(a.dtype).nmant + 1)) & (a < _math.inf) & (x > 0) & (x < _math.inf)
    ah, xh = w(huge, a, 1.0), w(huge, x, 1.0)
    poisson = poisson_log_density(w(huge, a, a - 1.0), x) + w(huge, math_ops.log(ah) - math_ops.log(xh), 0.0)
    small = a < 2.0
    a_small = w(small, a, 1.0)
    return w(small, xlogy(a_small - 1.0, x) - x - gammaln(a_small), poisson)


_betaln = _define("Betaln", "betaln", inputs=("a", "b"), doc="log|B(a, b)|.", kernel=_betaln_kernel)
_beta = _define(
    "Beta", "beta", inputs=("a", "b"), doc="B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b).", kernel=_beta_kernel
)


# B_2k / (2k) for k = 1..7: psi(z) ~ log z - 1/(2z) - sum_k B_2k / (2k z**2k), within 1e-16 from z = 10.
_DIGAMMA_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
_DIGAMMA_SHIFT = 10


def _digamma_difference(x, y, ns=math_ops):
    """``digamma(x) - digamma(x + y)`` without cancellation where x, y > 0 (elsewhere that difference), on Tensors
    (``ns`` = tensorlib's math ops) or on float64 NumPy arrays (``ns`` = NumPy, in a kernel).

    Subtracting digamma values loses all digits when y << x or x >> 1 (d/da betaln(1e15, 10) came out
    -1.42e-14 for -1.0e-14, d/db betaln(1e-12, 2) 1.6e-4 off; float32 gave 0 at betaln(1e8, 0.5)).
    Here the recurrence moves x past _DIGAMMA_SHIFT, psi(x) - psi(x + y) = psi(z) - psi(z + y)
    - sum_j y / ((x + j)(x + y + j)), z = x + _DIGAMMA_SHIFT, and the asymptotic series takes the
    difference term by term: -log1p(y/z) - y / (2 z (z + y)) + sum_k c_k z**-2k expm1(-2k log1p(y/z)).
    Every term has the sign of the whole, so none cancels."""
    psi = digamma if ns is math_ops else scipy_special().psi
    positive = ns.logical_and(x > 0.0, y > 0.0)
    ones = ns.ones_like(x + y)
    xs, ys = ns.where(positive, x, ones), ns.where(positive, y, ones)

    def y_over(p):
        """y / (p (p + y)), so that neither a tiny nor a huge p or y overflows on the way, nor in its derivatives:
        1 / (p + p (p / y)) differentiated in a tiny y squared it (d/dm of poch's z-gradient at m = 1e-214 was
        off by half); below p it is (y / p) / (p + y).  Each form sees a stand-in where the other is taken."""
        below = ys < p
        small, large = ns.where(below, ys, 0.5 * p), ns.where(below, p, ys)
        return ns.where(below, (small / p) / (p + small), 1.0 / (p + p * (p / large)))

    shifts = y_over(xs)
    for j in range(1, _DIGAMMA_SHIFT):
        shifts = shifts + y_over(xs + j)
    z = xs + _DIGAMMA_SHIFT
    log_ratio = ns.log1p(ys / z)
    inverse_square = 1.0 / (z * z)
    power, series = inverse_square, 0.0
    for k, c in enumerate(_DIGAMMA_ASYMPTOTIC, start=1):
        series = series + c * power * ns.expm1(-2.0 * k * log_ratio)
        power = power * inverse_square
    accurate = series - log_ratio - 0.5 * y_over(z) - shifts
    return ns.where(positive, accurate, psi(x) - psi(x + y))


def _beta_partial(node, which):
    return _digamma_difference(node.inputs[which], node.inputs[1 - which])


register_gradient("Betaln", lambda node, g: g * _beta_partial(node, 0), lambda node, g: g * _beta_partial(node, 1))


def _beta_value_partial(node, which):
    """d/da (``which`` 0) or d/db (1) of B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = node.inputs
    mine, other = node.inputs[which], node.inputs[1 - which]
    return _gamma_ratio_derivative(
        node.outputs[0],
        [(a, 1.0 - which), (b, float(which))],
        [(a + b, 1.0)],
        lambda stand_in: _digamma_difference(stand_in(mine), stand_in(other)),
    )


register_gradient(
    "Beta", lambda node, g: g * _beta_value_partial(node, 0), lambda node, g: g * _beta_value_partial(node, 1)
)


def betaln(a, b) -> Tensor:
    """``log|B(a, b)|``, without the overflow of ``log(beta(a, b))``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.betaln(tl.tensor(2.0), tl.tensor(3.0))), 6)   # log(1/12)
    -2.484907
    """
    return apply(_betaln, (a, b))


def beta(a, b) -> Tensor:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.beta(tl.tensor(2.0), tl.tensor(3.0))), 6)
    0.083333
    """
    return apply(_beta, (a, b))


# ------------------------------------------------------------------ the regularized incomplete gamma functions
# SciPy's gammainc (Cephes' igam) sums the series of P to at most 2000 terms where about 40 a / (a - x) are needed: from
# a ~ 1e5, below the 4.5 standard deviations of its asymptotic branch, P came out short, and so did gammaincinv's
# quantile (gammainc(1e8, 1e8 - 1e5) was 6.413e-24 for 7.370e-24, gammainc(1e12, 1e12 - 1e7) 1.4% of the value; PyTorch
# shares the error, mpmath and JAX do not).  There P is taken from its series (or Temme's expansion) here.
_SCIPY_IGAMMA_SHORT_FROM = 1e5


def _short_scipy_series(a, x):
    """Where SciPy's ``gammainc(a, x)`` is cut short (float64 arrays): ``a >= 1e5`` and ``0 < x < a - 4.5 sqrt(a)``."""
    return (a >= _SCIPY_IGAMMA_SHORT_FROM) & (x > 0) & (x < a - 4.5 * np.sqrt(a))


def _log_lower_gamma(a, x):
    """``(log P(a, x), log S(a, x))`` for ``a >= 1e5`` and ``0 < x < a`` (float64 arrays): ``P = x**a e**-x / Gamma(a +
    1) S``, the prefactor as ``e**(-a (d - log1p(d))) e**-stirling(a) / sqrt(2 pi a)`` with ``d = x / a - 1`` (nothing
    near a huge number cancels)."""
    log_s = _log_gamma_series(a, x)
    return _log_gamma_prefactor(a, x) + log_s, log_s


def _log_gamma_prefactor(a, x):
    """``log(x**a e**-x / Gamma(a + 1))`` for ``a >= 1e5`` and ``x > 0`` (float64 arrays), as ``-a (d - log1p(d)) -
    stirling(a) - log(2 pi a) / 2`` with ``d = x / a - 1``: the textbook ``a log x - x - gammaln(a + 1)`` loses
    ``a log x`` times float64's precision (2e-5 relative at a = 1e10)."""
    return -a * _half_eta_square((x - a) / a) - _stirling_error_of_large(a) - 0.5 * np.log(2.0 * np.pi * a)


def _igamma_kernel(upper):
    """``gammainc`` (``gammaincc`` if ``upper``): SciPy's, but P from ``_log_lower_gamma`` where SciPy's series is cut
    short (Q = 1 - P there, P below 4e-6)."""
    scipy_kernel = _scipy_kernel("gammaincc" if upper else "gammainc")

    def kernel(a, x):
        out = scipy_kernel(a, x)
        a64, x64 = np.broadcast_arrays(a.astype(np.float64, copy=False), x.astype(np.float64, copy=False))
        short = _short_scipy_series(a64, x64)
        if not short.any():
            return out
        with np.errstate(all="ignore"):
            log_p, _ = _log_lower_gamma(np.where(short, a64, 2e5), np.where(short, x64, 1e5))
        return np.where(short, -np.expm1(log_p) if upper else np.exp(log_p), out).astype(out.dtype, copy=False)

    kernel.__name__ = kernel.__qualname__ = "gammaincc_kernel" if upper else "gammainc_kernel"
    return kernel


_gammainc, _gammaincc = (
    _define(op_type, name, inputs=("a", "x"), doc=doc, kernel=_igamma_kernel(upper))
    for op_type, name, doc, upper in (
        ("Igamma", "gammainc", "P(a, x), the regularized lower incomplete gamma.", False),
        ("Igammac", "gammaincc", "Q(a, x) = 1 - P(a, x), without cancellation.", True),
    )
)


def _igamma_grad_a_kernel(a, x):
    """dP(a, x) / da in float64: minus the implicit reparameterization gradient of a gamma draw (``dx / da`` at
    constant P, the random module's series and continued fraction) times the density ``dP / dx``; 1e-13 relative
    (1e-9 from a = 1e6 on, its asymptotic form).  0 at x = 0 and x = inf, where P is constant in a."""
    from .random import standard_gamma_sample_grad

    sp = scipy_special()
    a64, x64 = np.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
    with np.errstate(all="ignore"):
        large = a64 >= _SCIPY_IGAMMA_SHORT_FROM  # the density x**(a - 1) e**-x / Gamma(a) without cancellation there
        a_large, x_large = np.where(large, a64, 2e5), np.where(large & (x64 > 0), x64, 2e5)
        textbook = sp.xlogy(a64 - 1.0, x64) - x64 - sp.gammaln(a64)
        log_density = np.where(large, _log_gamma_prefactor(a_large, x_large) + np.log(a_large / x_large), textbook)
        density = np.where(large & (x64 <= 0), np.exp(textbook), np.exp(log_density))
        out = -standard_gamma_sample_grad(a64, x64) * density
    out = np.where(((x64 == np.inf) | (x64 == 0)) & (a64 > 0), 0.0, out)  # at 0 for a < 1: 0 * inf was NaN
    return out.astype(_result_dtype(a.dtype, x.dtype), copy=False)


_igamma_grad_a = defop(
    "IgammaGradA",
    inputs=("a", "x"),
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1),
    doc="d/da of the regularized lower incomplete gamma P(a, x).",
)
_igamma_grad_a.kernel("numpy")(_igamma_grad_a_kernel)
_igamma_grad_a.kernels_reason = (
    "scipy.special.gammaln and a NumPy series; the Array API standard has no special functions"
)


def _gamma_density(a, x):
    """dP(a, x) / dx = x**(a - 1) e**-x / Gamma(a), its log in Loader's form (accurate for large a); 0 at x = inf.
    In float64 for float16 and float32: a float32 log of size 20 keeps 1e-6 absolute, 60 ulps of the density."""

    def density(a, x):
        finite = math_ops.less(x, _math.inf)
        return math_ops.where(finite, math_ops.exp(gamma_log_density(a, math_ops.where(finite, x, 1.0))), 0.0)

    return _widened(density, a, x)


def _no_second_order_in_a(node, g):
    raise LookupError(
        "IgammaGradA: the second derivative of gammainc / gammaincc in a is not implemented (as in TensorFlow); "
        "the first derivatives in a and x and the derivatives of every order in x are"
    )


register_gradient(
    "IgammaGradA",
    _no_second_order_in_a,
    lambda node, g: g * _gamma_density(*node.inputs) * (math_ops.log(node.inputs[1]) - digamma(node.inputs[0])),
)
register_gradient(
    "Igamma",
    lambda node, g: g * apply(_igamma_grad_a, node.inputs),
    lambda node, g: g * _gamma_density(*node.inputs),
)
register_gradient(
    "Igammac",
    lambda node, g: -g * apply(_igamma_grad_a, node.inputs),
    lambda node, g: -g * _gamma_density(*node.inputs),
)


def gammainc(a, x) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)`` (SciPy's ``gammainc``, the Gamma(a) CDF at x).

    Differentiable in ``x`` to every order and in ``a`` once (``IgammaGradA``; TensorFlow has no second order
    either).

    >>> import tensorlib as tl
    >>> round(float(tl.special.gammainc(tl.tensor(1.0), tl.tensor(2.0))), 6)   # 1 - exp(-2)
    0.864665
    """
    return apply(_gammainc, (a, x))


def gammaincc(a, x) -> Tensor:
    """``Q(a, x) = 1 - P(a, x)``, accurate where P is near 1 (SciPy's ``gammaincc``).

    >>> import tensorlib as tl
    >>> round(float(tl.special.gammaincc(tl.tensor(1.0, "float64"), tl.tensor(50.0, "float64"))) * 1e22, 12)   # e**-50
    1.928749847964
    """
    return apply(_gammaincc, (a, x))


# ------------------------------------------------------------------ the logs of the incomplete gamma functions' tails
# Where P or Q underflows (gamma.logsf(800, 2.5) is -783.66, its log was -inf), log P = log(x**a e**-x / Gamma(a + 1))
# + log S, S = sum_n x**n / ((a + 1) ... (a + n)) (x < a + 1), and log Q = log(x**a e**-x / Gamma(a)) + log H, H
# Legendre's continued fraction (x > a + 1, modified Lentz): the prefactors in Loader's form (tensorlib ops), the
# op only ``log S`` or ``log H``, whose derivatives are written in it, in ``x`` and ``RandomGammaGrad`` (dx/da at
# constant P), so they underflow nowhere.
_LOG_IGAMMA_MAX_TERMS = 100000  # the series takes about 36 sqrt(a) terms where P underflows: a up to ~1e9


def _log_igamma_factor_kernel(a, x, *, upper):
    """``log H(a, x)`` (``upper``) or ``log S(a, x)`` in float64, NaN where not converged."""
    dtype = _result_dtype(a.dtype, x.dtype)
    a, x = np.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
    with np.errstate(all="ignore"):
        if upper:
            tiny = 1e-300
            b = (x - a) + 1.0  # x - a is exact near a; x + 1 rounds from 2**53 (a 1e-9 error at a = 1e16)
            c, d = np.full_like(x, 1.0 / tiny), 1.0 / b
            out, done = d.copy(), ~np.isfinite(d)
            for i in range(1, _LOG_IGAMMA_MAX_TERMS):
                step = -i * (i - a)
                b = b + 2.0
                d = step * d + b
                d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
                c = b + step / c
                c = np.where(np.abs(c) < tiny, tiny, c)
                out = out * (d * c)
                done |= np.abs(d * c - 1.0) <= 1e-15
                if done.all():
                    break
            out = np.where(done, np.log(out), np.nan)
        else:
            out = _log_gamma_series(a, x)
    return out.astype(dtype, copy=False)


# From this a on, where x < a, log S comes from Temme's uniform expansion: its first omitted term is C_2(eta) / a**2
# relative (C_2(0) = 25/6048: 4e-17 here), and the series needs about 40 a / (a - x) terms (NaN past the cap from a
# ~ 1e12 where P underflows: gamma.logcdf(1e12 - 39e6, 1e12) was NaN for -765.103).
_LOG_IGAMMA_TEMME_FROM = 1e7


def _log_gamma_series(a, x):
    """``log S(a, x)``, ``S = sum_n x**n / ((a + 1) ... (a + n))`` (``P(a, x) = x**a e**-x / Gamma(a + 1) S``), for
    ``x < a + 1`` (float64 arrays): summed, or from Temme's expansion where ``a >= 1e7`` and ``x < a``; NaN where the
    sum does not converge."""
    large = (a >= _LOG_IGAMMA_TEMME_FROM) & (x > 0) & (x < a)
    term, out, done = np.ones_like(x), np.ones_like(x), ~np.isfinite(x + a) | large
    for n in range(1, _LOG_IGAMMA_MAX_TERMS):
        term = term * x / (a + n)
        out = out + term
        done |= term <= 1e-17 * out
        if done.all():
            break
    temme = _temme_log_series(np.where(large, a, 2.0 * _LOG_IGAMMA_TEMME_FROM), np.where(large, x, 1.0))
    return np.where(large, temme, np.where(done, np.log(out), np.nan))


def _half_eta_square(d):
    """``d - log1p(d)`` (``lam - 1 - log lam`` with ``d = lam - 1``; ``eta**2 / 2`` of Temme's expansion), summed as
    ``d**2 / 2 - d**3 / 3 + ...`` for ``|d| < 0.3``, where the difference cancels."""
    small = np.abs(d) < 0.3
    ds = np.where(small, d, 0.0)
    power, series = ds * ds, np.zeros_like(ds)
    for k in range(2, 40):  # 0.3**40 / 40 is below float64's rounding of the d**2 / 2 term
        series = series + power / k * (1.0 if k % 2 == 0 else -1.0)
        power = power * ds
    return np.where(small, series, d - np.log1p(np.where(small, 0.0, d)))


def _temme_log_series(a, x):
    """``log S(a, x)`` for ``a >= 1e7`` and ``0 < x < a`` (float64 arrays), from Temme's uniform expansion (DLMF
    8.12.18-8.12.20): ``P = erfc(-eta sqrt(a / 2)) / 2 - R``, ``R ~ e**(-a eta**2 / 2) / sqrt(2 pi a) (C_0 + C_1 / a)``
    with ``lam = x / a``, ``eta = -sqrt(2 (lam - 1 - log lam))``, ``C_0 = 1 / (lam - 1) - 1 / eta``, ``C_1 = 1 / eta**3
    - 1 / (lam - 1)**3 - 1 / (lam - 1)**2 - 1 / (12 (lam - 1))``.  The prefactor of ``S`` is ``e**(-a eta**2 / 2) /
    sqrt(2 pi a) e**-stirling(a)``, so ``S = e**stirling(a) (sqrt(pi a / 2) erfcx(-eta sqrt(a / 2)) - C_0 - C_1 / a)``:
    nothing underflows."""
    d = (x - a) / a
    eta = -np.sqrt(2.0 * _half_eta_square(d))
    c0 = 1.0 / d - 1.0 / eta
    c1 = 1.0 / eta**3 - 1.0 / d**3 - 1.0 / d**2 - 1.0 / (12.0 * d)
    total = np.sqrt(np.pi * a / 2.0) * scipy_special().erfcx(-eta * np.sqrt(a / 2.0)) - c0 - c1 / a
    return np.log(total) + _stirling_error_of_large(a)


def _stirling_error_of_large(a):
    """``log Gamma(a + 1) - (a + 1/2) log a + a - log(2 pi) / 2`` for ``a >= 1e5`` (float64): its series' first two
    terms (the third, 1 / (1260 a**5), is below 1e-28)."""
    return 1.0 / (12.0 * a) - 1.0 / (360.0 * a**3)


_log_igamma_factor = defop(
    "LogIgammaFactor",
    inputs=("a", "x"),
    attrs={"upper": False},
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1),
    doc="log S(a, x) (the series of P, x < a + 1) or log H(a, x) (Q's continued fraction, x > a + 1, upper).",
)
_log_igamma_factor.kernel("numpy")(_log_igamma_factor_kernel)
_log_igamma_factor.kernels_reason = (
    "a NumPy series and continued fraction; the Array API standard has no special functions"
)


def _log_igamma_factor_rules():
    """With ``f`` the output: Q = e**L H, L = a log x - x - gammaln(a), dlog Q/dx = -e**-f / x, so df/dx = 1 - (a +
    e**-f) / x; P = e**L' S, L' = L - log a, dlog P/dx = a e**-f / x, df/dx = 1 + a (e**-f - 1) / x.  In a:
    dlog Q/da = g e**-f / x, dlog P/da = -g a e**-f / x with g = dx/da at constant P (``RandomGammaGrad``), less
    dL/da = log x - digamma(a) (Q) or dL'/da = log x - digamma(a + 1) (P)."""
    from .random import _gamma_grad

    def by_a(node, g):
        (a, x), f = node.inputs, node.outputs[0]
        ones = math_ops.ones_like(f)
        reparameterized = apply(_gamma_grad, (a * ones, x * ones)) * math_ops.exp(-f) / x
        if node.attrs["upper"]:
            return g * (reparameterized - math_ops.log(x) + digamma(a))
        return g * (-a * reparameterized - math_ops.log(x) + digamma(a + 1.0))

    def by_x(node, g):
        (a, x), f = node.inputs, node.outputs[0]
        if node.attrs["upper"]:
            return g * (1.0 - (a + math_ops.exp(-f)) / x)
        return g * (1.0 + a * math_ops.expm1(-f) / x)

    return by_a, by_x


register_gradient("LogIgammaFactor", *_log_igamma_factor_rules())


def log_gamma_tail(a, x, upper) -> Tensor:
    """``log Q(a, x)`` (``upper``) or ``log P(a, x)``, finite where the tail underflows: there (below 1e-280, and
    beyond ``a + 1`` on the tail's side) the prefactor in Loader's form plus the log of the series or continued
    fraction; above 1/2 ``log1p`` of minus the other tail; elsewhere the log of ``gammaincc`` or ``gammainc``.  ``a > 0``, ``x >= 0`` (float64)."""
    w = math_ops.where
    if upper:  # Q(a, 0) = 1 from a stand-in: its slope there (-inf for a < 1) met the unused log's 0, NaN
        origin = math_ops.equal(x, 0.0)
        value = w(origin, 1.0, gammaincc(a, w(origin, 1.0, x)))
    else:
        value = gammainc(a, x)
    beyond = x > a + 1.0 if upper else x < a + 1.0
    far = all_of(value < 1e-280, beyond, x > 0, x < _math.inf)
    a_far, x_far = w(far, a, 1.0), w(far, x, 3.0 if upper else 0.5)
    prefactor = gamma_log_density(a_far, x_far) + math_ops.log(x_far)  # log(x**a e**-x / Gamma(a))
    if not upper:
        prefactor = prefactor - math_ops.log(a_far)
    factor = apply(_log_igamma_factor, (a_far, x_far), {"upper": upper})
    near_one = value > 0.5  # the log of a value near 1: log1p of minus its complement, which keeps the digits
    complement = gammainc(a, x) if upper else gammaincc(a, x)
    near = w(near_one, math_ops.log1p(-w(near_one, complement, 0.0)), math_ops.log(w(far, 1.0, value)))
    return w(far, prefactor + factor, near)


# ------------------------------------------------------------------ the inverses of the incomplete gamma and beta functions
# Gradients by the implicit function theorem from the function's own: dx/dq = 1 / (dF/dx), dx/dparameter =
# -(dF/dparameter) / (dF/dx), at the output x; written in ops, so they differentiate again where F's do.
def _igamma_inverse_kernel(upper):
    """``gammaincinv`` (``gammainccinv`` if ``upper``): SciPy's, refined by Newton's method on ``log P`` where SciPy's
    gammainc is cut short (``_short_scipy_series``), which its inverse also inverts: gammaincinv(1e9, 1e-7) had P
    e**0.95 times too large there.  ``d log P / dx = a / (x S)``; from SciPy's start (within a standard deviation)
    a few steps reach float64's precision."""
    function_name = "gammainccinv" if upper else "gammaincinv"

    def kernel(a, q):
        dtype = _result_dtype(a.dtype, q.dtype)
        a64, q64 = np.broadcast_arrays(a.astype(np.float64, copy=False), q.astype(np.float64, copy=False))
        x = np.asarray(getattr(scipy_special(), function_name)(a64, q64))
        short = _short_scipy_series(a64, x) & (q64 > 0) & (q64 < 1)
        if short.any():
            with np.errstate(all="ignore"):
                a_short, x = np.where(short, a64, 2e5), np.where(short, x, x.dtype.type(1e5))
                target = np.log1p(-q64) if upper else np.log(q64)
                for _ in range(_NEWTON_STEPS):
                    log_p, log_s = _log_lower_gamma(a_short, x)
                    step = np.where(short, (log_p - target) * x * np.exp(log_s) / a_short, 0.0)
                    x = np.where(step < x, x - step, 0.5 * x)  # stays positive
                    if (np.abs(step) <= 4e-16 * x).all():
                        break
                x = np.where(short, x, np.asarray(getattr(scipy_special(), function_name)(a64, q64)))
        return x.astype(dtype, copy=False)

    kernel.__name__ = kernel.__qualname__ = f"{function_name}_kernel"
    return kernel


_NEWTON_STEPS = 30
_gammaincinv = _define(
    "Igammainv", "gammaincinv", inputs=("a", "q"), doc="x with P(a, x) = q.", kernel=_igamma_inverse_kernel(False)
)
_gammainccinv = _define(
    "Igammacinv", "gammainccinv", inputs=("a", "q"), doc="x with Q(a, x) = q.", kernel=_igamma_inverse_kernel(True)
)


def _off_the_ends(x, low, high, stand_in, rule):
    """``rule(x)`` (an inverse's derivative in a shape parameter) where ``x`` is inside ``(low, high)``, 0 at the
    ends: there ``x`` is the end for every parameter (gammaincinv(a, 0) = 0, betaincinv(a, b, 1) = 1), where the
    implicit-function quotient reads 0 / 0 or inf / inf: a NaN gradient.  ``rule`` sees ``stand_in`` there."""
    ends = math_ops.logical_or(math_ops.equal(x, low), math_ops.equal(x, high))
    return math_ops.where(ends, 0.0, rule(math_ops.where(ends, stand_in, x)))


def _at_the_inverse(node, inverse, rule):
    """``rule(*inputs, x)`` at an inverse's output ``x``; float16 and float32 evaluate it in float64 at ``x``
    recomputed there (``inverse``) and round once: the rounded ``x`` carried its rounding into derivatives steep in
    it (float32 d/da betainccinv(30, 0.5, 0.01) was 0.66% off, 1 - x keeping two digits; d/da betaincinv(30, 0.5,
    0.9) 5e-5)."""
    x = node.outputs[0]
    if x.dtype not in (_dt.float16, _dt.float32):
        return rule(*node.inputs, x)
    wide = [math_ops.cast(t, _dt.float64) for t in node.inputs]
    return math_ops.cast(rule(*wide, inverse(*wide)), x.dtype)


def _inverse_gamma_rule(sign, inverse):
    """The two rules of an inverse of P (``sign`` 1) or of Q (``sign`` -1): dx/da = -(dP/da) / p(x) for both
    (Q's derivatives are P's negated), 0 at x = 0 and inf; dx/dq = sign / p(x)."""

    def by_a(a, q, x):
        return _off_the_ends(x, 0.0, _math.inf, 1.0, lambda x: -apply(_igamma_grad_a, (a, x)) / _gamma_density(a, x))

    def by_q(a, q, x):
        return sign / _gamma_density(a, x)

    return tuple(lambda node, g, rule=rule: g * _at_the_inverse(node, inverse, rule) for rule in (by_a, by_q))


register_gradient("Igammainv", *_inverse_gamma_rule(1.0, lambda a, q: gammaincinv(a, q)))
register_gradient("Igammacinv", *_inverse_gamma_rule(-1.0, lambda a, q: gammainccinv(a, q)))


def gammaincinv(a, q) -> Tensor:
    """The inverse of :func:`gammainc` in ``x``: ``P(a, x) = q`` (SciPy's ``gammaincinv``; the Gamma(a) quantile).
    Differentiable in ``q`` to every order and in ``a`` once.

    >>> import tensorlib as tl
    >>> round(float(tl.special.gammaincinv(tl.tensor(1.0, "float64"), 0.5)), 6)   # log 2
    0.693147
    """
    return apply(_gammaincinv, (a, q))


def gammainccinv(a, q) -> Tensor:
    """The inverse of :func:`gammaincc` in ``x``: ``Q(a, x) = q``, accurate for a tiny ``q`` (the upper tail).

    >>> import tensorlib as tl
    >>> round(float(tl.special.gammainccinv(tl.tensor(1.0, "float64"), 1e-30)), 6)   # 30 log 10
    69.077553
    """
    return apply(_gammainccinv, (a, q))


# ------------------------------------------------------------------ more of the gamma family
_zeta = _define("Zeta", "zeta", inputs=("x", "q"), doc="The Hurwitz zeta function sum_k (k + q)**-x.")
_riemann_zeta = _define("RiemannZeta", "zeta", doc="The Riemann zeta function.")


# Euler-Maclaurin for sum_k f(k + q), f(u) = log(u)**m u**-x: B_2j / (2j)!, j = 1..10
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)
_EULER_MACLAURIN = [b / _math.factorial(2 * j + 2) for j, b in enumerate(_BERNOULLI)]
_ZETA_SHIFT = 20.0  # the sum runs directly up to u = max(20, x), where the correction terms reach float64 precision
_ZETA_MAX_TERMS = 4000
# Below 0 the direct terms grow and cancel (1e-13 lost at x = -0.5, 1e-9 at -3): the Riemann function's
# derivatives come from its functional equation below _ZETA_LOWEST, and from this sum above.
_ZETA_LOWEST = -0.5


def _zeta_derivative_kernel(xp, x, q, *, m):
    """d^m/dx^m zeta(x, q) = (-1)**m sum_{k >= 0} log(k + q)**m (k + q)**-x for q > 0 and x >= -1/2 (x != 1; below 1
    the analytic continuation), in float64, by Euler-Maclaurin: the terms up to u = k + q = max(20, x), then the
    tail's integral (in closed form: m! e**-sL sum_{i <= m} (sL)**i / i! / s**(m + 1), s = x - 1, L = log u), half
    its first term and ten Bernoulli corrections, whose derivatives are polynomials in log u times powers of u.
    1e-15 relative against mpmath.zeta(x, q, m) from x = 0.5 to 60, q = 1e-3 to 1e4; NaN for x < _ZETA_LOWEST or
    q <= 0."""
    x, q = _floats(xp, x, q)
    dtype = x.dtype
    x, q = xp.broadcast_arrays(xp.astype(x, xp.float64), xp.astype(q, xp.float64))
    zero, one = xp.zeros_like(x), xp.ones_like(x)
    with np.errstate(all="ignore"):
        inside = xp.logical_and(xp.logical_and(x >= _ZETA_LOWEST, q > 0), xp.isfinite(x + q))
        x, q = xp.where(inside, x, 2.0 * one), xp.where(inside, q, one)
        terms = xp.minimum(xp.maximum(xp.ceil(xp.maximum(x, _ZETA_SHIFT * one) - q), zero), _ZETA_MAX_TERMS * one)
        total = zero
        for k in range(int(xp.max(terms)) if _math.prod(terms.shape) else 0):
            log_u = xp.log(k + q)
            total = total + xp.where(k < terms, log_u**m * xp.exp(-x * log_u), zero)
        log_a, s = xp.log(terms + q), x - 1.0
        tail = _math.factorial(m) * xp.exp(-s * log_a) / s ** (m + 1)
        tail = tail * sum((s * log_a) ** i / _math.factorial(i) for i in range(m + 1))
        coefficients = [zero] * m + [one]  # f^(n)(u) = sum_p c_p log(u)**p u**-(x + n)

        def derivative_at_a(n):
            return sum(c * log_a**p for p, c in enumerate(coefficients)) * xp.exp(-(x + n) * log_a)

        total = total + tail + 0.5 * derivative_at_a(0)
        n = 0
        for j, c in enumerate(_EULER_MACLAURIN):
            while n < 2 * j + 1:
                coefficients = [
                    (p + 1) * coefficients[p + 1] - (x + n) * coefficients[p] if p < m else -(x + n) * coefficients[p]
                    for p in range(m + 1)
                ]
                n += 1
            total = total - c * derivative_at_a(n)
        out = xp.where(inside, (-1) ** m * total, xp.full_like(x, _math.nan))
    return xp.astype(out, dtype)


_zeta_derivative = defop(
    "ZetaDerivative",
    inputs=("x", "q"),
    attrs={"m": 1},
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1),
    doc="The m-th derivative in x of the Hurwitz zeta function, m >= 1.",
)
_zeta_derivative.generic(_zeta_derivative_kernel)


def _zeta_derivative_of_order(m, x, q):
    """Z_m(x, q) = d^m/dx^m zeta(x, q): the Hurwitz zeta itself for m = 0."""
    return zeta(x, q) if m == 0 else apply(_zeta_derivative, (x, q), {"m": m})


def _zeta_derivative_by_q(node, g):
    """d/dq Z_m(x, q) = -m Z_{m-1}(x + 1, q) - x Z_m(x + 1, q) (differentiate (-1)**m log(u)**m u**-x in u)."""
    x, q = node.inputs
    m = node.attrs["m"]
    return -g * (m * _zeta_derivative_of_order(m - 1, x + 1.0, q) + x * _zeta_derivative_of_order(m, x + 1.0, q))


register_gradient(
    "ZetaDerivative",
    lambda node, g: g * _zeta_derivative_of_order(node.attrs["m"] + 1, *node.inputs),
    _zeta_derivative_by_q,
)


def _riemann_zeta_derivative(x, _=None):
    """zeta'(x): Z_1(x, 1) from _ZETA_LOWEST on; below, the derivative of the functional equation zeta(x) = chi(x)
    zeta(1 - x), chi(x) = 2**x pi**(x - 1) sin(pi x / 2) Gamma(1 - x), whose zeta(1 - x) is away from its pole
    (near 0 it is not: chi' zeta(1 - x) - chi zeta'(1 - x) cancelled, 5e-5 off at x = -1e-6).  The size of chi,
    (2 pi)**x Gamma(1 - x) / pi, is formed in logs: Gamma(1 - x) alone overflowed (a NaN zeta' from x = -171 on,
    in float32 from -34, where zeta' is finite)."""
    w = math_ops.where
    negative = math_ops.less(x, _ZETA_LOWEST)
    right = w(negative, 2.0, x)
    left = w(negative, x, -1.0)
    half = (0.5 * _math.pi) * left
    scale = math_ops.exp(left * _math.log(2.0 * _math.pi) - _math.log(_math.pi) + gammaln(1.0 - left))
    sine, cosine = math_ops.sin(half), math_ops.cos(half)
    chi = scale * sine
    chi_derivative = scale * (sine * (_math.log(2.0 * _math.pi) - digamma(1.0 - left)) + (0.5 * _math.pi) * cosine)
    reflected = chi_derivative * zeta(1.0 - left) - chi * _zeta_derivative_of_order(1, 1.0 - left, 1.0)
    return w(negative, reflected, _zeta_derivative_of_order(1, right, 1.0))


register_gradient(
    "Zeta",
    lambda node, g: g * _zeta_derivative_of_order(1, *node.inputs),
    lambda node, g: -g * node.inputs[0] * zeta(node.inputs[0] + 1.0, node.inputs[1]),
)
register_gradient("RiemannZeta", lambda node, g: g * _in_float64(_riemann_zeta_derivative, None, node.inputs[0], None))


def zeta(x, q=None) -> Tensor:
    """The Hurwitz zeta function ``sum_{k >= 0} (k + q)**-x`` (SciPy's ``zeta(x, q)``), or without ``q`` the Riemann
    zeta function (defined for every real ``x`` but 1, by its functional equation below 1).

    Differentiable to every order: in ``q``, ``-x zeta(x + 1, q)``; in ``x``, the op ``ZetaDerivative`` (an
    Euler-Maclaurin sum of ``-log(k + q) (k + q)**-x``, for ``q > 0``; the Riemann function's below 0 through its
    functional equation).

    >>> import tensorlib as tl
    >>> round(float(tl.special.zeta(tl.tensor(2.0, "float64"))), 6)   # pi**2 / 6
    1.644934
    >>> round(float(tl.grad(tl.special.zeta, argnums=1)(2.0, tl.tensor(1.0, "float64"))), 6)   # -2 zeta(3)
    -2.404114
    >>> round(float(tl.grad(tl.special.zeta)(tl.tensor(0.0, "float64"))), 6)   # -log(2 pi) / 2
    -0.918939
    """
    if q is None:
        return apply(_riemann_zeta, (x,))
    return apply(_zeta, (x, q))


def multigammaln(a, d: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``d`` (SciPy's ``multigammaln``):
    ``d (d - 1) / 4 log(pi) + sum_{j=1}^d gammaln(a + (1 - j) / 2)``, differentiable to every order.  SciPy
    refuses an ``a <= (d - 1) / 2``; here it is NaN (a traced ``a`` has no values to check).

    >>> import tensorlib as tl
    >>> round(float(tl.special.multigammaln(tl.tensor(3.0, "float64"), 2)), 6)
    1.550195
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"multigammaln: the dimension d must be a positive integer, got {d!r:.60}")
    a = _float(a)
    total = sum(gammaln(a - 0.5 * j) for j in range(d))
    inside = math_ops.greater(a, 0.5 * (d - 1))
    return math_ops.where(inside, total + d * (d - 1) / 4 * _math.log(_math.pi), _math.nan)


def loggamma(x) -> Tensor:
    """``log Gamma(x)`` for real ``x`` (SciPy's ``loggamma`` of a real): ``gammaln(x)`` for ``x >= 0``, NaN below
    (where Gamma changes sign, its real log is not defined); gradient ``digamma(x)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.loggamma(tl.tensor(5.0))), 5)   # log(4!)
    3.17805
    """
    x = _float(x)
    return math_ops.where(math_ops.less(x, 0.0), _math.nan, gammaln(x))


def factorial(n, exact: bool = False) -> Tensor:
    """``n!`` as ``Gamma(n + 1)`` for ``n >= 0`` and 0 below (SciPy's ``factorial(n, exact=False)``, also for
    non-integer ``n``); gradient ``Gamma(n + 1) digamma(n + 1)``.  ``exact=True`` (Python integers) is SciPy's.

    >>> import tensorlib as tl
    >>> tl.special.factorial(tl.tensor([0.0, 3.0, -1.0], "float64")).numpy().tolist()
    [1.0, 6.0, 0.0]
    """
    if exact:
        raise ValueError("factorial: exact=True gives Python integers (scipy.special.factorial); tensors are floats")
    n = _float(n)
    return math_ops.where(math_ops.less(n, 0.0), 0.0, gamma(n + 1.0))


_binom = _define("Binom", "binom", inputs=("n", "k"), doc="The binomial coefficient Gamma(n + 1) / ...")


def _is_gamma_pole(x) -> Tensor:
    """Where ``x`` is a pole of Gamma: 0, -1, -2, ..."""
    return math_ops.logical_and(math_ops.less_equal(x, 0.0), math_ops.equal(math_ops.floor(x), x))


def _gamma_ratio_derivative(value, numerators, denominators, log_derivative=None) -> Tensor:
    """d/dv of ``F = prod Gamma(p) / prod Gamma(q)`` (``value`` = F), the arguments given as ``(p, dp/dv)`` and
    ``(q, dq/dv)`` pairs with numeric slopes: ``F (sum dp digamma(p) - sum dq digamma(q))`` (or ``F
    log_derivative(stand_in)``, its terms formed from ``stand_in(argument)``), except where a ``q`` is a pole of
    Gamma.  There F is 0 but smooth (1 / Gamma is entire) and that form is 0 * inf, NaN (binom(3, 5), poch(-2, 3),
    beta(-0.5, -0.5)).  With ``A = F Gamma(q)`` (the other factors) and the reflection formula ``1 / Gamma(q) =
    Gamma(1 - q) sin(pi q) / pi``, ``dF/dv = A Gamma(1 - q) (L sin(pi q) / pi + dq (cos(pi q) - digamma(1 - q)
    sin(pi q) / pi))``, L = dA/dv / A: exact in a neighbourhood of the pole, so it differentiates again, its gammas
    in logs so that none overflows; 0 where two are poles.  Each branch sees stand-ins where the other is taken."""
    w = math_ops.where
    poles = [_is_gamma_pole(q) for q, _ in denominators]
    any_pole = poles[0]
    for pole in poles[1:]:
        any_pole = math_ops.logical_or(any_pole, pole)

    def stand_in(t):
        return w(any_pole, 1.0, t)

    def log_slope(above, below):
        return sum(c * digamma(p) for p, c in above if c) - sum(c * digamma(q) for q, c in below if c)

    if log_derivative is None:
        regular = log_slope([(stand_in(p), c) for p, c in numerators], [(stand_in(q), c) for q, c in denominators])
    else:
        regular = log_derivative(stand_in)
    at_poles = 0.0
    for j, (q, slope) in enumerate(denominators):
        only = all_of(poles[j], *(math_ops.logical_not(pole) for i, pole in enumerate(poles) if i != j))
        above = [(w(only, p, 1.0), c) for p, c in numerators]
        below = [(w(only, r, 1.0), c) for i, (r, c) in enumerate(denominators) if i != j]
        qs = w(only, q, -0.5)
        sign = 1.0
        for t, _ in above + below:
            sign = sign * gammasgn(t)
        log_size = sum(gammaln(t) for t, _ in above) - sum(gammaln(t) for t, _ in below) + gammaln(1.0 - qs)
        # sin(pi q) and cos(pi q) from q - r, r = q at the pole (not differentiated): exactly 0 and (-1)**r there
        whole = math_ops.floor(qs)
        offset = _math.pi * (qs - whole)
        parity = 1.0 - 2.0 * (whole - 2.0 * math_ops.floor(0.5 * whole))
        sine = parity * math_ops.sin(offset) / _math.pi
        cosine = parity * math_ops.cos(offset)
        bracket = log_slope(above, below) * sine + slope * (cosine - digamma(1.0 - qs) * sine)
        at_poles = w(only, sign * math_ops.exp(log_size) * bracket, at_poles)
    return w(any_pole, at_poles, value * regular)


def _digamma_step(x, y):
    """``digamma(x + y) - digamma(x)`` for either sign of ``y``, without cancellation (_digamma_difference)."""
    return math_ops.where(y >= 0.0, -_digamma_difference(x, y), _digamma_difference(x + y, -y))


def _binom_partial(node, wrt):
    """d/dn (``wrt`` 0) or d/dk (1) of binom = Gamma(n + 1) / (Gamma(k + 1) Gamma(n - k + 1)): binom times
    digamma(n + 1) - digamma(n - k + 1), or digamma(n - k + 1) - digamma(k + 1), each a step of digamma (the plain
    differences cancelled: d/dn binom(1e8, 2) was 1e-7 off)."""
    n, k = node.inputs
    denominators = [(k + 1.0, float(wrt)), (n - k + 1.0, 1.0 - 2.0 * wrt)]

    def log_derivative(stand_in):
        n_, k_ = stand_in(n), stand_in(k)
        return _digamma_step(n_ - k_ + 1.0, k_) if wrt == 0 else _digamma_step(k_ + 1.0, n_ - 2.0 * k_)

    return _gamma_ratio_derivative(node.outputs[0], [(n + 1.0, 1.0 - wrt)], denominators, log_derivative)


register_gradient("Binom", lambda node, g: g * _binom_partial(node, 0), lambda node, g: g * _binom_partial(node, 1))


def binom(n, k) -> Tensor:
    """The binomial coefficient ``Gamma(n + 1) / (Gamma(k + 1) Gamma(n - k + 1))`` for real ``n`` and ``k`` (SciPy's
    ``binom``); gradients ``binom (digamma(n + 1) - digamma(n - k + 1))`` in ``n`` and ``binom (digamma(n - k + 1) -
    digamma(k + 1))`` in ``k``.

    >>> import tensorlib as tl
    >>> float(tl.special.binom(tl.tensor(5.0), tl.tensor(2.0)))
    10.0
    """
    return apply(_binom, (n, k))


def comb(N, k, exact: bool = False, repetition: bool = False) -> Tensor:
    """The number of combinations of ``N`` things taken ``k`` at a time, SciPy's ``comb(N, k, exact=False)``:
    ``binom(N, k)`` where ``0 <= k <= N``, 0 elsewhere; with ``repetition``, ``binom(N + k - 1, k)`` (1 at
    ``k = 0 <= N``).

    >>> import tensorlib as tl
    >>> tl.special.comb(tl.tensor([5.0, 5.0, 10.0]), tl.tensor([2.0, 6.0, 3.0])).numpy().tolist()
    [10.0, 0.0, 120.0]
    """
    if exact:
        raise ValueError("comb: exact=True gives Python integers (scipy.special.comb); tensors are floats")
    N, k = _floats_together(N, k)
    if repetition:  # SciPy's: binom(N + k - 1, k), unmasked, and 1 where k = 0 <= N
        return math_ops.where(math_ops.logical_and(k == 0.0, N >= 0.0), 1.0, binom(N + k - 1.0, k))
    inside = math_ops.logical_and(math_ops.logical_and(k <= N, N >= 0.0), k >= 0.0)
    return math_ops.where(inside, binom(N, k), 0.0)


_poch = _define("Poch", "poch", inputs=("z", "m"), doc="The rising factorial Gamma(z + m) / Gamma(z).")


def _poch_partial(node, wrt):
    """d/dz (``wrt`` 0) or d/dm (1) of poch = Gamma(z + m) / Gamma(z): poch times digamma(z + m) - digamma(z), a
    step of digamma (the plain difference cancelled: d/dz poch(1e4, 1e-6) was 3.4e-6 off), or digamma(z + m)."""
    z, m = node.inputs

    def log_derivative(stand_in):
        z_, m_ = stand_in(z), stand_in(m)
        return _digamma_step(z_, m_) if wrt == 0 else digamma(z_ + m_)

    return _gamma_ratio_derivative(node.outputs[0], [(z + m, 1.0)], [(z, 1.0 - wrt)], log_derivative)


register_gradient("Poch", lambda node, g: g * _poch_partial(node, 0), lambda node, g: g * _poch_partial(node, 1))


def poch(z, m) -> Tensor:
    """The rising factorial (Pochhammer symbol) ``Gamma(z + m) / Gamma(z)`` (SciPy's ``poch``); gradients
    ``poch (digamma(z + m) - digamma(z))`` in ``z`` and ``poch digamma(z + m)`` in ``m``.

    >>> import tensorlib as tl
    >>> float(tl.special.poch(tl.tensor(2.0), tl.tensor(3.0)))   # 2 * 3 * 4
    24.0
    """
    return apply(_poch, (z, m))


_gammasgn = _define("Gammasgn", "gammasgn", doc="The sign of Gamma(x).")
not_differentiable("Gammasgn")


def gammasgn(x) -> Tensor:
    """The sign of ``Gamma(x)`` (SciPy's ``gammasgn``: NaN at the poles 0, -1, -2, ... as SciPy has them);
    piecewise constant, so not differentiable (its gradient is None, or zero).

    >>> import tensorlib as tl
    >>> tl.special.gammasgn(tl.tensor([2.5, -0.5, -1.5])).numpy().tolist()
    [1.0, -1.0, 1.0]
    """
    return apply(_gammasgn, (x,))


# ------------------------------------------------------------------ the regularized incomplete beta function
# SciPy's float32 betainc is 100 ulps off (6e-6 at a = 22.07, b = 40.83, x = 0.3607) and underflows below 1e-26
_betainc = _define(
    "Betainc",
    "betainc",
    inputs=("a", "b", "x"),
    doc="I_x(a, b), the regularized incomplete beta.",
    kernel=_scipy_kernel("betainc", in_float64=True),
)
_BETAINC_MAX_TERMS = 10000  # the continued fraction takes about sqrt(max(a, b)) terms: 809 at a = b = 1e6


def _betainc_fraction(p, q, y):
    """``(K, dK/dp, dK/dq)`` for ``I_y(p, q) = y**p (1 - y)**q / (p B(p, q)) K``, the continued fraction ``K = 1 /
    (1 + d_1 / (1 + d_2 / (1 + ...)))`` of Numerical Recipes' ``betacf`` (fast for y < (p + 1) / (p + q + 2)): its
    convergents A_n / B_n differentiated along their three-term recurrence (Boik and Robison-Cox, "Derivatives of
    the incomplete beta function", 1998), rescaled by 1 / B_n each step.  NaN where it has not converged after
    _BETAINC_MAX_TERMS terms."""
    zero, one = np.zeros_like(p), np.ones_like(p)
    # rows: the value and its partials in p and q, of A_{n-2}, A_{n-1}, B_{n-2}, B_{n-1}
    a_before, a_last = np.stack([one, zero, zero]), np.stack([zero, zero, zero])
    b_before, b_last = np.stack([zero, zero, zero]), np.stack([one, zero, zero])
    fraction, converged = np.stack([zero, zero, zero]), ~np.isfinite(p + q + y)
    for n in range(1, _BETAINC_MAX_TERMS + 1):
        m, odd = divmod(n - 1, 2)
        if n == 1:
            d = np.stack([one, zero, zero])
        elif odd:  # d_{2m+1} = -(p + m)(p + q + m) y / ((p + 2m)(p + 2m + 1))
            unit = -y / ((p + 2 * m) * (p + 2 * m + 1))
            value = (p + m) * (p + q + m) * unit
            by_p = value * (1 / (p + m) + 1 / (p + q + m) - 1 / (p + 2 * m) - 1 / (p + 2 * m + 1))
            d = np.stack([value, by_p, (p + m) * unit])
        else:  # d_{2m} = m (q - m) y / ((p + 2m - 1)(p + 2m))
            unit = m * y / ((p + 2 * m - 1) * (p + 2 * m))
            value = (q - m) * unit
            d = np.stack([value, -value * (1 / (p + 2 * m - 1) + 1 / (p + 2 * m)), unit])
        a_next, b_next = a_last + d[0] * a_before, b_last + d[0] * b_before
        a_next[1:] += d[1:] * a_before[0]
        b_next[1:] += d[1:] * b_before[0]
        scale = 1.0 / b_next[0]
        a_before, a_last, b_before, b_last = a_last * scale, a_next * scale, b_last * scale, b_next * scale
        update = np.concatenate([a_last[:1], a_last[1:] - a_last[0] * b_last[1:]])
        if n > 2:
            converged |= np.all(np.abs(update - fraction) <= 1e-15 * np.abs(update), axis=0)
        fraction = update
        if converged.all():
            break
    return np.where(converged, fraction, np.nan)


def _betainc_partials(a, b, x):
    """``(dI/da, dI/db)`` of ``I_x(a, b)`` in float64 (1e-15 relative against mpmath for moderate a and b, 1e-9 at
    a = b = 1e6); above (a + 1) / (a + b + 2) from ``I_x(a, b) = 1 - I_{1 - x}(b, a)``.  0 at x = 0 and x = 1,
    where I is 0 or 1 for every a, b > 0; NaN outside a, b > 0, 0 <= x <= 1."""
    with np.errstate(all="ignore"):  # NaN inputs and the stand-ins' branches
        return _betainc_partials_float64(*np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x))))


def _betainc_partials_float64(a, b, x):
    sp = scipy_special()
    positive = (a > 0) & (b > 0)
    inside = positive & (x > 0) & (x < 1)
    edge = positive & ((x == 0) | (x == 1))
    a, b, x = np.where(inside, a, 1.0), np.where(inside, b, 1.0), np.where(inside, x, 0.5)
    swap = x > (a + 1.0) / (a + b + 2.0)
    p, q, y = np.where(swap, b, a), np.where(swap, a, b), np.where(swap, 1.0 - x, x)
    fraction, by_p, by_q = _betainc_fraction(p, q, y)
    front = np.exp(sp.xlogy(p, y) + sp.xlog1py(q, -y) - np.log(p) - _log_beta(p, q)[0])
    # psi(p + q) - psi(p + 1) (psi(p) + 1 / p, for small p) and psi(p + q) - psi(q) without cancellation: the latter
    # subtracted two values of size log q to form p / q (d/db betainc(1e-6, 1e4, 1e-20) was 3.4e-6 off)
    by_p = front * (fraction * (np.log(y) - _digamma_difference(p + 1.0, q - 1.0, np)) + by_p)
    by_q = front * (fraction * (np.log1p(-y) - _digamma_difference(q, p, np)) + by_q)
    # where the prefactor underflows the partials do (it decays faster than the rest grows); the fraction's recurrence
    # overflows there for a huge p (b = 1e155: inf / inf), and 0 * NaN made nbinom.cdf(1e300, n, p)'s gradient in n NaN
    underflow = front == 0
    by_p, by_q = np.where(underflow, 0.0, by_p), np.where(underflow, 0.0, by_q)
    partials = (np.where(swap, -by_q, by_p), np.where(swap, -by_p, by_q))
    return tuple(np.where(inside, d, np.where(edge, 0.0, np.nan)) for d in partials)


_betainc_grad = _define_partials(
    "BetaincGrad",
    ("a", "b", "x"),
    _betainc_partials,
    "d/da (wrt=0) or d/db (wrt=1) of the regularized incomplete beta function I_x(a, b).",
    "scipy.special.psi and a NumPy continued fraction; the Array API standard has no special functions",
)


def beta_log_density(x, a, b) -> Tensor:
    """``log(x**(a - 1) (1 - x)**(b - 1) / B(a, b))`` for ``x`` in [0, 1] (0 * log 0 = 0), float64: Loader's form
    where a, b > 2 and x is not far in a tail (R's dbeta), the textbook sum elsewhere, whose terms of size a log x
    cancel (1e-8 relative at a = 1e8, b = 2e8)."""
    textbook = xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b)
    saddle = _beta_saddle_region(x, a, b)
    return math_ops.where(saddle, _beta_saddle_point(x, a, b, saddle), textbook)


def all_of(*conditions) -> Tensor:
    """The elementwise conjunction of boolean tensors."""
    out = conditions[0]
    for c in conditions[1:]:
        out = math_ops.logical_and(out, c)
    return out


def _beta_saddle_region(z, a, b) -> Tensor:
    """Where ``_beta_saddle_point`` applies: a, b > 2 and each binomial term's k / mu in (1/199, 199)."""
    n = a + b - 2.0
    return all_of(
        a > 2.0,
        b > 2.0,
        math_ops.abs(relative_difference(a - 1.0, n * z)) < 0.99,
        math_ops.abs(relative_difference(b - 1.0, n * (1.0 - z))) < 0.99,
    )


def _beta_saddle_point(z, a, b, region) -> Tensor:
    """The Beta(a, b) log-density in Loader's form (R's dbeta), where ``region`` holds; stand-ins elsewhere (float64:
    a - 1 and (a + b - 2) z would round in float32)."""
    from .shape import stack

    w = math_ops.where
    zs = w(region, z, 0.5)
    k = stack([w(region, a, 3.0) - 1.0, w(region, b, 3.0) - 1.0])
    return dirichlet_saddle_point(k, stack([zs, 1.0 - zs]), 0.0)


def dirichlet_saddle_point(k, p, excess) -> Tensor:
    """The Dirichlet(k + 1) log-density at ``p`` (components on axis 0; ``k >= 1``, ``p > 0``, float64), in Loader's
    form: ``Gamma(n + K) / Gamma(n + 1)`` times the multinomial probability of ``k`` in ``n = sum(k)`` trials,
    ``log`` of which is ``stirling_error(n) - sum(stirling_error(k) + deviance(k, n p)) + n excess -
    ((K - 1) log(2 pi) + sum(log k) - log n) / 2`` (``excess = sum(p) - 1``; R's dbeta for K = 2).  The textbook
    ``sum((alpha - 1) log p) - sum(gammaln(alpha)) + gammaln(sum(alpha))`` cancels terms of size n log n: float32
    was 2211 ulps off for Beta(1e4, 1e4) at the mode, 12.5 for 15.10 for Dirichlet(1e6, 2e6, 1e6); float64 1e6
    ulps at 1e6."""
    from . import reduce as reduce_ops
    from .creation import arange
    from .shape import reshape

    count = k.shape[0]
    n = reduce_ops.sum(k, axis=0)
    steps = reshape(arange(1, count, dtype=_dt.float64), (-1,) + (1,) * (k.ndim - 1))
    rising = reduce_ops.sum(math_ops.log(n + steps), axis=0)  # log Gamma(n + K) - log Gamma(n + 1)
    per_component = stirling_error(k) + deviance(k, n * p) + 0.5 * math_ops.log(k)
    multinomial = (
        stirling_error(n)
        - reduce_ops.sum(per_component, axis=0)
        + n * excess
        - 0.5 * ((count - 1) * 2.0 * _LOG_SQRT_2PI - math_ops.log(n))
    )
    return rising + multinomial


def _beta_density(a, b, x):
    """dI_x(a, b) / dx, the Beta(a, b) density, in float64 for float16 and float32 (its log's terms cancel)."""
    return _widened(lambda a, b, x: math_ops.exp(beta_log_density(x, a, b)), a, b, x)


_no_second_order_in_parameters = _refuse(
    "BetaincGrad: the second derivatives of betainc in a and b are not implemented (TensorFlow has no first); "
    "the first derivatives in a, b and x and the derivatives of every order in x are"
)


def _betainc_grad_in_x(node, g):
    """d/dx of dI/da = density (log x - digamma(a) + digamma(a + b)); of dI/db, log1p(-x) - digamma(b) + ..."""
    a, b, x = node.inputs
    log_term = math_ops.log(x) if node.attrs["wrt"] == 0 else math_ops.log1p(-x)
    return g * _beta_density(a, b, x) * (log_term - digamma(b if node.attrs["wrt"] else a) + digamma(a + b))


register_gradient("BetaincGrad", _no_second_order_in_parameters, _no_second_order_in_parameters, _betainc_grad_in_x)
register_gradient(
    "Betainc",
    lambda node, g: g * apply(_betainc_grad, node.inputs, {"wrt": 0}),
    lambda node, g: g * apply(_betainc_grad, node.inputs, {"wrt": 1}),
    lambda node, g: g * _beta_density(*node.inputs),
)


def betainc(a, b, x) -> Tensor:
    """The regularized incomplete beta function ``I_x(a, b)`` (SciPy's ``betainc``, ``tf.math.betainc``: the
    Beta(a, b) CDF at ``x``).

    Differentiable in ``x`` to every order (the Beta(a, b) density) and in ``a`` and ``b`` once (``BetaincGrad``,
    the continued fraction's derivatives; TensorFlow has none in ``a`` and ``b``).

    >>> import tensorlib as tl
    >>> round(float(tl.special.betainc(tl.tensor(2.0), tl.tensor(3.0), tl.tensor(0.5))), 6)   # 11/16
    0.6875
    >>> round(float(tl.grad(tl.special.betainc, argnums=2)(2.0, 3.0, 0.5)), 6)   # 12 x (1 - x)**2
    1.5
    """
    return apply(_betainc, (a, b, x))


def _betaincc_kernel(a, b, x):
    """SciPy's ``betaincc`` where the complement is below 1/2, and ``1 - betainc`` (exact to an ulp there) where it is
    above: SciPy 1.17's ``betaincc(1/2, 1/2, 1e-20)`` is 1.0, where the value is 1 - 6.4e-11."""
    sp = scipy_special()
    dtype = _result_dtype(a.dtype, b.dtype, x.dtype)
    a, b, x = (v.astype(np.float64, copy=False) for v in (a, b, x))
    lower = sp.betainc(a, b, x)
    out = np.where(lower < 0.5, 1.0 - lower, sp.betaincc(a, b, x))
    return np.asarray(out).astype(dtype, copy=False)


_betaincc = _define(
    "Betaincc",
    "betaincc",
    inputs=("a", "b", "x"),
    doc="1 - I_x(a, b), the complement of the regularized incomplete beta, without cancellation.",
    kernel=_betaincc_kernel,
)
register_gradient(
    "Betaincc",
    lambda node, g: -g * apply(_betainc_grad, node.inputs, {"wrt": 0}),
    lambda node, g: -g * apply(_betainc_grad, node.inputs, {"wrt": 1}),
    lambda node, g: -g * _beta_density(*node.inputs),
)


def betaincc(a, b, x) -> Tensor:
    """``1 - I_x(a, b)`` (SciPy's ``betaincc``), accurate where ``I_x(a, b)`` is near 1 and the difference would
    cancel (the upper tail of a Beta, Student's t or binomial distribution).  Differentiable as :func:`betainc`.

    >>> import tensorlib as tl
    >>> round(float(tl.special.betaincc(tl.tensor(2.0), tl.tensor(3.0), tl.tensor(0.5))), 6)   # 5/16
    0.3125
    >>> round(float(tl.special.betaincc(tl.tensor(0.5, "float64"), 500.0, 0.0385)) * 1e10, 6)   # 1 - betainc: 3.745617
    3.745618
    """
    return apply(_betaincc, (a, b, x))


# The log of I_x(a, b) where it underflows (t.logsf(1e100, 5) is -1147.3, beta.logcdf(1e-200, 3, 2) -1380.2; both
# were -inf): log(x**a (1 - x)**b / (a B(a, b))) in Loader's form (tensorlib ops) plus the log of the continued
# fraction K (``_betainc_fraction``), whose derivatives in a and b come with it.


def _log_betainc_fraction_kernel(a, b, x, *, wrt=None):
    """``log K`` (``wrt`` None) or ``(dK/da) / K`` (``wrt`` 0) or ``(dK/db) / K`` (1), float64, for x < (a + 1) /
    (a + b + 2)."""
    dtype = _result_dtype(a.dtype, b.dtype, x.dtype)
    with np.errstate(all="ignore"):
        arrays = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
        fraction = _betainc_fraction(*arrays)
        out = np.log(fraction[0]) if wrt is None else fraction[1 + wrt] / fraction[0]
    return np.asarray(out).astype(dtype, copy=False)


_log_betainc_fraction = defop(
    "LogBetaincFraction",
    inputs=("a", "b", "x"),
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1, 2),
    doc="log K(a, b, x), I_x(a, b) = x**a (1 - x)**b K / (a B(a, b)), for x < (a + 1) / (a + b + 2).",
)
_log_betainc_fraction.kernel("numpy")(_log_betainc_fraction_kernel)
_log_betainc_fraction_grad = defop(
    "LogBetaincFractionGrad",
    inputs=("a", "b", "x"),
    attrs={"wrt": 0},
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1, 2),
    doc="d log K(a, b, x) / da (wrt=0) or / db (wrt=1).",
)
_log_betainc_fraction_grad.kernel("numpy")(_log_betainc_fraction_kernel)
for _op in (_log_betainc_fraction, _log_betainc_fraction_grad):
    _op.kernels_reason = "a NumPy continued fraction; the Array API standard has no special functions"


def _log_fraction_by_x(node, g):
    """d log K / dx = dlog I/dx - d/dx log(x**a (1 - x)**b) = a e**-f / (x (1 - x)) - a / x + b / (1 - x)."""
    (a, b, x), f = node.inputs, node.outputs[0]
    return g * (a * math_ops.exp(-f) / (x * (1.0 - x)) - a / x + b / (1.0 - x))


register_gradient(
    "LogBetaincFraction",
    lambda node, g: g * apply(_log_betainc_fraction_grad, node.inputs, {"wrt": 0}),
    lambda node, g: g * apply(_log_betainc_fraction_grad, node.inputs, {"wrt": 1}),
    _log_fraction_by_x,
)


def _no_second_order_of_log_fraction(node, g):
    raise LookupError(
        "LogBetaincFractionGrad: the second derivatives of log betainc's far tail involving a or b are not "
        "implemented; the first derivatives in a, b and x and those of every order in x are"
    )


register_gradient("LogBetaincFractionGrad", *(_no_second_order_of_log_fraction,) * 3)


def log_betainc(a, b, x, complement=None) -> Tensor:
    """``log I_x(a, b)``, finite where ``I_x(a, b)`` underflows: there (below 1e-280, x below the mean's side (a + 1)
    / (a + b + 2)) the prefactor in Loader's form plus the log of the continued fraction; above 1/2 ``log1p`` of
    minus ``betaincc``; elsewhere the log of ``betainc``.  ``complement``: ``1 - x`` where the caller has it exactly
    (``x`` a rounded quotient next to 1; ``log(1 - I_x(a, b))`` is ``log_betainc(b, a, 1 - x, x)``).  ``a, b > 0``,
    float64."""
    w = math_ops.where
    value = math_ops.stop_gradient(betainc(a, b, x))  # it chooses the branch; each branch sees stand-ins elsewhere
    far = all_of(value < 1e-280, x > 0, x < (a + 1.0) / (a + b + 2.0))
    a_far, b_far, x_far = w(far, a, 2.0), w(far, b, 2.0), w(far, x, 0.25)
    prefactor = (
        beta_log_density(x_far, a_far, b_far) + math_ops.log(x_far) + math_ops.log1p(-x_far) - math_ops.log(a_far)
    )
    factor = apply(_log_betainc_fraction, (a_far, b_far, x_far))
    near_one = value > 0.5  # the log of a value near 1: log1p of minus its complement, which keeps the digits
    # A function of x next to 0 or 1 (1 - x rounded to 1, or x a quotient rounded to 1) has an infinite derivative for a
    # or b < 1, and 0 * inf in the branch not taken made f.logcdf(1e-17, 0.7, 1.3)'s gradient NaN, and logsf's
    upper = betaincc(a, b, w(near_one, x, 0.5)) if complement is None else betainc(b, a, w(near_one, complement, 0.5))
    middle = math_ops.logical_not(math_ops.logical_or(far, near_one))
    # the log of 1 where not taken: betainc at the stand-in 0.5 underflows for a large a (t.logcdf's df = 1e4), and
    # log(0)'s infinite derivative times 0 made the gradient in a NaN everywhere
    lower = math_ops.log(w(middle, betainc(a, b, w(middle, x, 0.5)), 1.0))
    near = w(near_one, math_ops.log1p(-w(near_one, upper, 0.0)), lower)
    return w(far, prefactor + factor, near)


_betaincinv = _define(
    "Betaincinv",
    "betaincinv",
    inputs=("a", "b", "q"),
    doc="x with I_x(a, b) = q.",
    kernel=_scipy_kernel("betaincinv", in_float64=True),
)
_betainccinv = _define(
    "Betainccinv",
    "betainccinv",
    inputs=("a", "b", "q"),
    doc="x with 1 - I_x(a, b) = q.",
    kernel=_scipy_kernel("betainccinv", in_float64=True),
)


def _inverse_beta_rule(sign, inverse):
    """The rules of an inverse of I (``sign`` 1) or of its complement (-1): dx/da = -(dI/da) / density(x), likewise
    for b (the complement's derivatives are I's negated), 0 at x = 0 and 1; dx/dq = sign / density(x)."""

    def by(wrt):
        def rule(a, b, q, x):
            return _off_the_ends(
                x, 0.0, 1.0, 0.5, lambda x: -apply(_betainc_grad, (a, b, x), {"wrt": wrt}) / _beta_density(a, b, x)
            )

        return rule

    def by_q(a, b, q, x):
        return sign / _beta_density(a, b, x)

    return tuple(lambda node, g, rule=rule: g * _at_the_inverse(node, inverse, rule) for rule in (by(0), by(1), by_q))


register_gradient("Betaincinv", *_inverse_beta_rule(1.0, lambda a, b, q: betaincinv(a, b, q)))
register_gradient("Betainccinv", *_inverse_beta_rule(-1.0, lambda a, b, q: betainccinv(a, b, q)))


def betaincinv(a, b, q) -> Tensor:
    """The inverse of :func:`betainc` in ``x``: ``I_x(a, b) = q`` (SciPy's ``betaincinv``; the Beta(a, b) quantile).
    Differentiable in ``q`` to every order and in ``a``, ``b`` once.

    >>> import tensorlib as tl
    >>> round(float(tl.special.betaincinv(tl.tensor(1.0, "float64"), 2.0, 0.75)), 6)   # 1 - sqrt(1 - q)
    0.5
    """
    return apply(_betaincinv, (a, b, q))


def betainccinv(a, b, q) -> Tensor:
    """The inverse of :func:`betaincc` in ``x``: ``1 - I_x(a, b) = q``, accurate for a tiny ``q``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.betainccinv(tl.tensor(2.0, "float64"), 1.0, 0.19)), 6)   # sqrt(1 - q)
    0.9
    """
    return apply(_betainccinv, (a, b, q))


# ------------------------------------------------------------------ the error-function family
_erfc = _define("Erfc", "erfc", doc="1 - erf(x), accurate for large x.")
_erfinv = _define("Erfinv", "erfinv", doc="The inverse of erf on (-1, 1).")
_erfcinv = _define("Erfcinv", "erfcinv", doc="The inverse of erfc on (0, 2).")
_ndtr = _define("Ndtr", "ndtr", doc="The standard normal CDF.")
_log_ndtr = _define("LogNdtr", "log_ndtr", doc="log of the standard normal CDF, accurate in both tails.")


def _erfc_derivative(x, _):
    return (-2.0 / _SQRT_PI) * math_ops.exp(-math_ops.square(x))


def _inverse_erf_derivative(sign):
    return lambda _, value: (sign * _SQRT_PI / 2.0) * math_ops.exp(math_ops.square(value))


register_gradient("Erfc", lambda node, g: g * _in_float64(_erfc_derivative, None, node.inputs[0], None))
register_gradient(
    "Erfinv", lambda node, g: g * _in_float64(_inverse_erf_derivative(1.0), erfinv, node.inputs[0], node.outputs[0])
)
register_gradient(
    "Erfcinv", lambda node, g: g * _in_float64(_inverse_erf_derivative(-1.0), erfcinv, node.inputs[0], node.outputs[0])
)
_erfcx = _define("Erfcx", "erfcx", doc="exp(x**2) erfc(x), finite where erfc underflows.")


def _ndtr_derivative(x, _):
    return math_ops.exp(-0.5 * math_ops.square(x) - _LOG_SQRT_2PI)


register_gradient("Ndtr", lambda node, g: g * _in_float64(_ndtr_derivative, None, node.inputs[0], None))

# erfcx'(x) = 2 x erfcx(x) - 2 / sqrt(pi) cancels for large x (erfcx(x) ~ 1 / (x sqrt(pi))): at x = 1e4 it
# kept 8 digits, from x = 1e8 none.  From _ERFCX_ASYMPTOTIC on, the asymptotic series
# 2 / sqrt(pi) * sum_k (-1)**k (2k - 1)!! / (2 x**2)**k, whose 10 terms reach float64 precision there.
_ERFCX_ASYMPTOTIC = 20.0
_ERFCX_SERIES = [(-1) ** k * _math.prod(range(1, 2 * k, 2)) * 2.0 / _SQRT_PI for k in range(10, 0, -1)]


def _erfcx_derivative(x, value):
    large = math_ops.greater(x, _ERFCX_ASYMPTOTIC)
    t = 0.5 / math_ops.square(math_ops.where(large, x, math_ops.full_like(x, _ERFCX_ASYMPTOTIC)))
    series = _ERFCX_SERIES[0]
    for c in _ERFCX_SERIES[1:]:
        series = series * t + c
    return math_ops.where(large, series * t, 2.0 * x * value - 2.0 / _SQRT_PI)


register_gradient("Erfcx", lambda node, g: g * _in_float64(_erfcx_derivative, erfcx, node.inputs[0], node.outputs[0]))


def _log_ndtr_derivative(x, value):
    """phi(x) / Phi(x).  For x < 0 it is sqrt(2/pi) / erfcx(-x/sqrt(2)), with no cancellation: the
    quotient formed in logs, exp(-x**2/2 - log(sqrt(2 pi)) - log_ndtr(x)), subtracted two numbers of
    size x**2/2 (at x = -1e8 it gave 1.78e8 for 1e8).  For x >= 0 that quotient is exact, and it goes
    on into the subnormals where erfcx(-x/sqrt(2)) overflows."""
    negative = math_ops.less(x, 0.0)
    zeros = math_ops.zeros_like(x)
    left = math_ops.where(negative, x, zeros)
    right = math_ops.where(negative, zeros, x)
    mills = _math.sqrt(2.0 / _math.pi) / erfcx(left * -_math.sqrt(0.5))
    tail = math_ops.exp(-0.5 * math_ops.square(right) - _LOG_SQRT_2PI - math_ops.where(negative, zeros, value))
    return math_ops.where(negative, mills, tail)


register_gradient(
    "LogNdtr", lambda node, g: g * _in_float64(_log_ndtr_derivative, log_ndtr, node.inputs[0], node.outputs[0])
)


def erf(x) -> Tensor:
    """The error function (the op of ``tl.nn.erf``; integer inputs give float64).

    >>> import tensorlib as tl
    >>> round(float(tl.special.erf(tl.tensor(1.0))), 6)
    0.842701
    """
    from .nn import erf as nn_erf

    return nn_erf(_float(x))


def erfc(x) -> Tensor:
    """``1 - erf(x)``, without cancellation for large ``x``.

    >>> import tensorlib as tl
    >>> float(tl.special.erfc(tl.tensor(10.0))) > 0
    True
    """
    return apply(_erfc, (x,))


def erfinv(x) -> Tensor:
    """Inverse of ``erf``: ``erf(erfinv(y)) == y`` on (-1, 1); gradient ``sqrt(pi)/2 exp(erfinv(y)**2)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.erfinv(tl.tensor(0.5))), 6)
    0.476936
    """
    return apply(_erfinv, (x,))


def erfcinv(x) -> Tensor:
    """Inverse of ``erfc`` on (0, 2).

    >>> import tensorlib as tl
    >>> round(float(tl.special.erfcinv(tl.tensor(0.5))), 6)
    0.476936
    """
    return apply(_erfcinv, (x,))


def erfcx(x) -> Tensor:
    """The scaled complementary error function ``exp(x**2) erfc(x)``; gradient ``2 x erfcx(x) - 2/sqrt(pi)``.

    Finite where ``erfc`` underflows: ``erfcx(x) ~ 1 / (x sqrt(pi))`` for large ``x``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.erfcx(tl.tensor(100.0, dtype="float64"))), 8)   # erfc(100) is 0 in float64
    0.00564161
    """
    return apply(_erfcx, (x,))


def ndtr(x) -> Tensor:
    """The standard normal CDF.

    >>> import tensorlib as tl
    >>> float(tl.special.ndtr(tl.tensor(0.0)))
    0.5
    """
    return apply(_ndtr, (x,))


def ndtri(p) -> Tensor:
    """The inverse of ``ndtr`` (the standard normal quantile): ``-sqrt(2) erfcinv(2 p)`` below 1/2 and
    ``sqrt(2) erfcinv(2 (1 - p))`` above, so that neither tail rounds ``p`` (within 4 ulps of SciPy's ndtri,
    ``-inf`` at 0, ``inf`` at 1, nan outside [0, 1]); gradient ``sqrt(2 pi) exp(ndtri(p)**2 / 2)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.ndtri(tl.tensor(0.975, "float64"))), 6)
    1.959964
    >>> round(float(tl.special.ndtri(tl.tensor(1e-300, "float64"))), 4)
    -37.0471
    """
    p = _float(p)
    lower = math_ops.less_equal(p, 0.5)
    # each branch sees a stand-in where the other is taken, so no gradient meets erfcinv's pole at 0 or 2
    below = -_math.sqrt(2.0) * erfcinv(2.0 * math_ops.where(lower, p, 0.25))
    above = _math.sqrt(2.0) * erfcinv(2.0 * (1.0 - math_ops.where(lower, 0.75, p)))
    return math_ops.where(lower, below, above)


def log_ndtr(x) -> Tensor:
    """``log(ndtr(x))``, finite and accurate far into the left tail (and its gradient too).

    >>> import tensorlib as tl
    >>> round(float(tl.special.log_ndtr(tl.tensor(-40.0))), 3)
    -804.608
    """
    return apply(_log_ndtr, (x,))


# ------------------------------------------------------------------ expit, logit, xlogy, xlog1py
def expit(x) -> Tensor:
    """The logistic sigmoid ``1 / (1 + exp(-x))`` (the op of ``tl.sigmoid``).

    >>> import tensorlib as tl
    >>> float(tl.special.expit(tl.tensor(0.0)))
    0.5
    """
    return math_ops.sigmoid(_float(x))


def log_expit(x) -> Tensor:
    """``log(expit(x))`` (SciPy's ``log_expit``, ``jax.nn.log_sigmoid``, ``tl.nn.log_sigmoid`` of a float), exact
    where ``expit`` underflows or rounds to 1; integers give float64, float16 and float32 one rounding of the
    float64 value (tiny results of ``-exp(-x)`` kept their digits); gradient ``expit(-x)``.

    >>> import tensorlib as tl
    >>> tl.special.log_expit(tl.tensor([-800.0, 0.0, 40.0], "float64")).numpy().tolist()
    [-800.0, -0.6931471805599453, -4.248354255291589e-18]
    """
    return _widened(log_sigmoid, _float(x))


_logit = _define("Logit", "logit", doc="log(p / (1 - p)), the inverse of expit.", generic=_logit_kernel)
register_gradient("Logit", lambda node, g: g / (node.inputs[0] * (1.0 - node.inputs[0])))


def logit(p) -> Tensor:
    """``log(p / (1 - p))``, the inverse of ``expit``; gradient ``1 / (p (1 - p))``.

    >>> import tensorlib as tl
    >>> float(tl.special.logit(tl.tensor(0.5)))
    0.0
    """
    return apply(_logit, (p,))


_xlogy = _define("Xlogy", "xlogy", inputs=("x", "y"), doc="x * log(y), 0 where x == 0.", generic=_x_times("log"))
_xlog1py = _define(
    "Xlog1py", "xlog1py", inputs=("x", "y"), doc="x * log1p(y), 0 where x == 0.", generic=_x_times("log1p")
)


def _y_safe(node, pole, fill):
    """y with ``fill`` where x == 0 and y sits at the pole: there x / (y - pole) must be 0, not NaN.

    Replacing y only at that point (not wherever x == 0) keeps d/dx (x / y) = 1 / y for second order.
    """
    x, y = node.inputs
    at_pole = math_ops.logical_and(math_ops.equal(x, 0.0), math_ops.equal(y, pole))
    return math_ops.where(at_pole, math_ops.full_like(y, fill), y)


register_gradient(
    "Xlogy",
    lambda node, g: g * math_ops.log(node.inputs[1]),
    lambda node, g: g * (node.inputs[0] / _y_safe(node, 0.0, 1.0)),
)
register_gradient(
    "Xlog1py",
    lambda node, g: g * math_ops.log1p(node.inputs[1]),
    lambda node, g: g * (node.inputs[0] / (_y_safe(node, -1.0, 0.0) + 1.0)),
)


def xlogy(x, y) -> Tensor:
    """``x * log(y)``, defined as 0 where ``x == 0`` (even at ``y == 0``), with broadcasting.

    Gradients: ``log(y)`` for ``x``; ``x / y`` for ``y`` (0 where ``x == 0``, even at ``y == 0``).

    >>> import tensorlib as tl
    >>> tl.special.xlogy(tl.tensor([0.0, 2.0]), tl.tensor([0.0, 1.0])).numpy().tolist()
    [0.0, 0.0]
    """
    return apply(_xlogy, (x, y))


def xlog1py(x, y) -> Tensor:
    """``x * log1p(y)``, defined as 0 where ``x == 0``.

    >>> import tensorlib as tl
    >>> tl.special.xlog1py(tl.tensor([0.0, 2.0]), tl.tensor([-1.0, 0.0])).numpy().tolist()
    [0.0, 0.0]
    """
    return apply(_xlog1py, (x, y))


# ------------------------------------------------------------------ entropies (SciPy's elementwise forms)
def _entr_kernel(xp, x):
    """SciPy's entr: -x log x for x > 0, 0 at 0, -inf below, NaN for NaN."""
    (x,) = _floats(xp, x)
    positive = x > 0
    value = -x * xp.log(xp.where(positive, x, xp.ones_like(x)))
    out = xp.where(positive, value, xp.where(x == 0, xp.zeros_like(x), xp.full_like(x, -_math.inf)))
    return xp.where(xp.isnan(x), x, out)


def _log_ratio(ns, x, y):
    """``log(x / y)`` for positive x, y on arrays (``ns`` = an array namespace) or Tensors (``ns`` = tensorlib's math
    ops): ``log1p((x - y) / y)`` where x / y is within (1/2, 2), exact there (x - y is); the log of the quotient where
    that is a normal float; ``log(x) - log(y)`` where it overflows or underflows (x = 1, y = 5e-324: 744.44)."""
    one = ns.ones_like(x)
    ratio = x / y
    near = ns.logical_and(ratio > 0.5, ratio < 2.0)
    normal = ns.logical_and(ratio > _TINY, ratio < _math.inf)
    safe = ns.where(normal, ratio, one)
    apart = ns.where(normal, ns.log(safe), ns.log(x) - ns.log(y))
    return ns.where(near, ns.log1p(ns.where(near, (x - y) / y, 0.0 * one)), apart)


_TINY = float(np.finfo(np.float64).tiny)


def _relative_entropy(with_linear_terms):
    """SciPy's rel_entr (x log(x / y)) or kl_div (x log(x / y) - x + y) for x, y > 0; 0 (or y) at x = 0 <= y; inf
    elsewhere; NaN where either is NaN."""

    def kernel(xp, x, y):
        x, y = xp.broadcast_arrays(*_floats(xp, x, y))
        one = xp.ones_like(x)
        both = xp.logical_and(x > 0, y > 0)
        value = x * _log_ratio(xp, xp.where(both, x, one), xp.where(both, y, one))
        at_zero = y if with_linear_terms else xp.zeros_like(x)
        if with_linear_terms:
            value = value - x + y
        out = xp.where(both, value, xp.where(xp.logical_and(x == 0, y >= 0), at_zero, xp.full_like(x, _math.inf)))
        return xp.where(xp.logical_or(xp.isnan(x), xp.isnan(y)), xp.full_like(x, _math.nan), out)

    kernel.__name__ = kernel.__qualname__ = "kl_div" if with_linear_terms else "rel_entr"
    return kernel


_entr = _define("Entr", "entr", doc="-x log x for x > 0, 0 at 0, -inf below.", generic=_entr_kernel)
_rel_entr = _define(
    "RelEntr",
    "rel_entr",
    inputs=("x", "y"),
    doc="x log(x / y) for x, y > 0, 0 at x = 0 <= y.",
    generic=_relative_entropy(False),
)


def _kl_div_numpy(x, y):
    """The generic kernel in float64, rounded once: SciPy's kl_div overflows in x log(x / y) (kl_div(5e-324, 2) and
    kl_div(1e-300, 1e300) are -inf there, for about 2 and 1e300)."""
    dtype = _result_dtype(x.dtype, y.dtype)
    with np.errstate(all="ignore"):  # inf and NaN arguments, and the branches not taken
        out = _relative_entropy(True)(np, x.astype(np.float64), y.astype(np.float64))
    return np.asarray(out).astype(dtype, copy=False)


_kl_div = _define(
    "KlDiv",
    "kl_div",
    inputs=("x", "y"),
    doc="x log(x / y) - x + y for x, y > 0, y at x = 0 <= y.",
    generic=_relative_entropy(True),
    kernel=_kl_div_numpy,
)


def _x_over_y(node):
    """x / y, 0 where x == 0 (y = 0 too: there x log(x / y) is 0 for every y >= 0)."""
    x, y = node.inputs
    return x / math_ops.where(math_ops.equal(x, 0.0), 1.0, y)


register_gradient("Entr", lambda node, g: -g * (math_ops.log(node.inputs[0]) + 1.0))
register_gradient(
    "RelEntr",
    lambda node, g: g * (_log_ratio(math_ops, *node.inputs) + 1.0),
    lambda node, g: -g * _x_over_y(node),
)
# log(x / y) lost what the quotient's rounding is worth relative to it: 1e-6 relative at x = 1 + 1e-10, y = 1
register_gradient(
    "KlDiv", lambda node, g: g * _log_ratio(math_ops, *node.inputs), lambda node, g: g * (1.0 - _x_over_y(node))
)


def entr(x) -> Tensor:
    """SciPy's elementwise entropy ``-x log x`` for ``x > 0``, ``0`` at ``x = 0``, ``-inf`` for ``x < 0``;
    gradient ``-(log x + 1)`` (``+inf`` at 0, its limit from the right).

    >>> import tensorlib as tl
    >>> tl.special.entr(tl.tensor([0.0, 1.0, -1.0])).numpy().tolist()
    [0.0, -0.0, -inf]
    """
    return apply(_entr, (x,))


def rel_entr(x, y) -> Tensor:
    """SciPy's elementwise relative entropy: ``x log(x / y)`` for ``x, y > 0``, ``0`` for ``x = 0 <= y``, ``inf``
    elsewhere; gradients ``log(x / y) + 1`` in ``x`` and ``-x / y`` in ``y`` (0 where ``x = 0``).
    ``sum(rel_entr(p, q))`` is the Kullback-Leibler divergence of distributions ``p`` and ``q``.

    >>> import tensorlib as tl
    >>> tl.special.rel_entr(tl.tensor([0.0, 1.0, 1.0]), tl.tensor([0.0, 1.0, 0.0])).numpy().tolist()
    [0.0, 0.0, inf]
    """
    return apply(_rel_entr, (x, y))


def kl_div(x, y) -> Tensor:
    """SciPy's elementwise ``x log(x / y) - x + y`` for ``x, y > 0``, ``y`` for ``x = 0 <= y``, ``inf`` elsewhere
    (``rel_entr`` plus ``y - x``: the same sum over normalized distributions); gradients ``log(x / y)`` in ``x``
    and ``1 - x / y`` in ``y``.  Where ``x / y`` overflows or underflows it is ``x (log x - log y) - x + y``:
    SciPy's ``kl_div(5e-324, 2)`` is ``-inf``, this one 2.

    >>> import tensorlib as tl
    >>> tl.special.kl_div(tl.tensor([0.0, 1.0]), tl.tensor([2.0, 1.0])).numpy().tolist()
    [2.0, 0.0]
    """
    return apply(_kl_div, (x, y))


# ------------------------------------------------------------------ logsumexp, softmax, log_softmax (SciPy's axes)
def softmax(x, axis=None) -> Tensor:
    """SciPy's ``softmax(x, axis=None)``: ``exp(x - logsumexp(x, axis, keepdims=True))``, over every element when
    ``axis`` is None, over several with a tuple; one int axis is the op of ``tl.nn.softmax``.

    >>> import tensorlib as tl
    >>> tl.special.softmax(tl.tensor([[0.0, 0.0], [0.0, 0.0]])).numpy().tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    from .nn import softmax as nn_softmax

    x = _float(x)
    if isinstance(axis, (int, np.integer)):
        return nn_softmax(x, axis)
    return math_ops.exp(_minus_logsumexp(x, axis))


def _minus_logsumexp(x, axis):
    """``x - logsumexp(x, axis, keepdims=True)``, NaN over a slice holding +inf (as SciPy and ``tl.nn.softmax``
    give: inf - inf is NaN there, and the other elements' 0 would hide it)."""
    from .reduce import logsumexp

    total = logsumexp(x, axis, keepdims=True)
    return math_ops.where(math_ops.equal(total, _math.inf), _math.nan, x - total)


def log_softmax(x, axis=None) -> Tensor:
    """SciPy's ``log_softmax(x, axis=None)``: ``x - logsumexp(x, axis, keepdims=True)``, over every element when
    ``axis`` is None; one int axis is the op of ``tl.nn.log_softmax``.

    >>> import tensorlib as tl
    >>> tl.special.log_softmax(tl.tensor([1e4, 0.0])).numpy().tolist()
    [0.0, -10000.0]
    """
    from .nn import log_softmax as nn_log_softmax

    x = _float(x)
    if isinstance(axis, (int, np.integer)):
        return nn_log_softmax(x, axis)
    return _minus_logsumexp(x, axis)


# ------------------------------------------------------------------ modified Bessel functions
_i0 = _define("BesselI0", "i0", doc="Modified Bessel function of the first kind, order 0.")
_i1 = _define("BesselI1", "i1", doc="Modified Bessel function of the first kind, order 1.")
_i0e = _define("BesselI0e", "i0e", doc="exp(-|x|) i0(x).")
_i1e = _define("BesselI1e", "i1e", doc="exp(-|x|) i1(x).")


def _over_x(value, x, scale=None, sign=1.0):
    """``value / x`` for ``value`` = i1(x) or i1e(x) = exp(-|x|) i1(x) (``scale`` = exp(-|x|)), or j1(x) (``sign``
    -1).

    Near 0 the quotient is the series of i1(x)/x, ``1/2 + x**2/16 + x**4/384``
    (times ``scale``; j1(x)/x: ``1/2 - x**2/16 + x**4/384``): differentiating ``i1(x) / x`` there would cancel
    catastrophically (``i1'(x)/x - i1(x)/x**2``).
    """
    small = math_ops.less(math_ops.abs(x), 1e-3)
    x2 = math_ops.square(x)
    series = 0.5 + x2 * (sign / 16.0) + math_ops.square(x2) * (1.0 / 384.0)
    if scale is not None:
        series = series * scale
    return math_ops.where(small, series, value / math_ops.where(small, math_ops.ones_like(x), x))


# i0e' = i1e - sign(x) i0e and i1e' = i0e - sign(x) i1e - i1e / x cancel for large |x|, where both are
# about -i0e(x) / (2|x|): 2|x| eps relative (float32 kept no digit at |x| = 1e8, float64 3 at 1e12).  From
# |x| = _BESSEL_ASYMPTOTIC on they are the derivative of Hankel's expansion exp(-u) I_nu(u) ~
# (2 pi u)**-1/2 sum_k (-1)**k a_k(nu) / u**k, u = |x|, whose 16 terms reach float64 precision there.
_BESSEL_ASYMPTOTIC = 30.0


def _hankel_derivative_coefficients(nu, alternating, terms=16):
    """(+-1)**k (k + 1/2) a_k(nu), a_k(nu) = prod_{j <= k} (4 nu**2 - (2j - 1)**2) / (k! 8**k), highest k first:
    alternating for exp(-u) I_nu(u), of one sign for exp(u) K_nu(u) ~ sqrt(pi / (2u)) sum_k a_k(nu) / u**k."""
    a, out = 1.0, []
    for k in range(terms):
        out.append((-1 if alternating else 1) ** k * (k + 0.5) * a)
        a *= (4 * nu * nu - (2 * k + 1) ** 2) / ((k + 1) * 8)
    return out[::-1]


_HANKEL_DERIVATIVE = {
    (kind, nu): (_hankel_derivative_coefficients(nu, kind == "i"), scale)
    for kind, scale in (("i", -1.0 / _math.sqrt(2 * _math.pi)), ("k", -_math.sqrt(0.5 * _math.pi)))
    for nu in (0, 1)
}


def _scaled_bessel_derivative(x, nu, exact, kind="i"):
    """d/du of exp(-u) I_nu(u) (``kind`` "i") or exp(u) K_nu(u) ("k") at u = |x|: ``exact`` below
    _BESSEL_ASYMPTOTIC, the series above."""
    u = math_ops.abs(x)
    large = math_ops.greater(u, _BESSEL_ASYMPTOTIC)
    w = 1.0 / math_ops.where(large, u, math_ops.full_like(u, _BESSEL_ASYMPTOTIC))
    coefficients, scale = _HANKEL_DERIVATIVE[kind, nu]
    series = coefficients[0]
    for c in coefficients[1:]:
        series = series * w + c
    return math_ops.where(large, scale * w * math_ops.sqrt(w) * series, exact)


def _i0e_derivative(x, value):
    sign = math_ops.sign(x)
    return sign * _scaled_bessel_derivative(x, 0, sign * i1e(x) - value)


def _i1e_derivative(x, value):
    exact = i0e(x) - math_ops.sign(x) * value - _over_x(value, x, math_ops.exp(-math_ops.abs(x)))
    return _scaled_bessel_derivative(x, 1, exact)


register_gradient("BesselI0", lambda node, g: g * i1(node.inputs[0]))


def _i1_derivative(x, value):
    """i0(x) - i1(x) / x; inf where i0 overflows (inf - inf gave NaN: float32 from |x| = 93, float64 714)."""
    i0x = i0(x)
    return math_ops.where(math_ops.equal(i0x, _math.inf), i0x, i0x - _over_x(value, x))


register_gradient("BesselI1", lambda node, g: g * _i1_derivative(node.inputs[0], node.outputs[0]))
register_gradient("BesselI0e", lambda node, g: g * _in_float64(_i0e_derivative, i0e, node.inputs[0], node.outputs[0]))
register_gradient("BesselI1e", lambda node, g: g * _in_float64(_i1e_derivative, i1e, node.inputs[0], node.outputs[0]))


def i0(x) -> Tensor:
    """Modified Bessel function of the first kind, order 0; gradient ``i1(x)``.

    >>> import tensorlib as tl
    >>> float(tl.special.i0(tl.tensor(0.0)))
    1.0
    """
    return apply(_i0, (x,))


def i1(x) -> Tensor:
    """Modified Bessel function of the first kind, order 1; gradient ``i0(x) - i1(x) / x``.

    >>> import tensorlib as tl
    >>> float(tl.special.i1(tl.tensor(0.0)))
    0.0
    """
    return apply(_i1, (x,))


def i0e(x) -> Tensor:
    """Exponentially scaled ``i0``: ``exp(-|x|) i0(x)``, finite for large ``|x|``.

    >>> import tensorlib as tl
    >>> 0 < float(tl.special.i0e(tl.tensor(1000.0))) < 1
    True
    """
    return apply(_i0e, (x,))


def i1e(x) -> Tensor:
    """Exponentially scaled ``i1``: ``exp(-|x|) i1(x)``.

    >>> import tensorlib as tl
    >>> float(tl.special.i1e(tl.tensor(0.0)))
    0.0
    """
    return apply(_i1e, (x,))


_k0 = _define("BesselK0", "k0", doc="Modified Bessel function of the second kind, order 0.")
_k1 = _define("BesselK1", "k1", doc="Modified Bessel function of the second kind, order 1.")
_k0e = _define("BesselK0e", "k0e", doc="exp(x) k0(x).")
_k1e = _define("BesselK1e", "k1e", doc="exp(x) k1(x).")
_j0 = _define("BesselJ0", "j0", doc="Bessel function of the first kind, order 0.")
_j1 = _define("BesselJ1", "j1", doc="Bessel function of the first kind, order 1.")
_y0 = _define("BesselY0", "y0", doc="Bessel function of the second kind, order 0.")
_y1 = _define("BesselY1", "y1", doc="Bessel function of the second kind, order 1.")


# k0e' = k0e - k1e and k1e' = k1e - k0e - k1e / x cancel for large x as i0e' and i1e' do (both are about
# -k0e(x) / (2x)): past _BESSEL_ASYMPTOTIC the derivative of Hankel's expansion of exp(x) K_nu(x).
def _k0e_derivative(x, value):
    return _scaled_bessel_derivative(x, 0, value - k1e(x), "k")


def _k1e_derivative(x, value):
    return _scaled_bessel_derivative(x, 1, value - k0e(x) - value / x, "k")


register_gradient("BesselK0", lambda node, g: -g * k1(node.inputs[0]))
register_gradient("BesselK1", lambda node, g: -g * (k0(node.inputs[0]) + node.outputs[0] / node.inputs[0]))
register_gradient("BesselK0e", lambda node, g: g * _in_float64(_k0e_derivative, k0e, node.inputs[0], node.outputs[0]))
register_gradient("BesselK1e", lambda node, g: g * _in_float64(_k1e_derivative, k1e, node.inputs[0], node.outputs[0]))
register_gradient("BesselJ0", lambda node, g: -g * j1(node.inputs[0]))
register_gradient(
    "BesselJ1", lambda node, g: g * (j0(node.inputs[0]) - _over_x(node.outputs[0], node.inputs[0], sign=-1.0))
)
register_gradient("BesselY0", lambda node, g: -g * y1(node.inputs[0]))
register_gradient("BesselY1", lambda node, g: g * (y0(node.inputs[0]) - node.outputs[0] / node.inputs[0]))


def k0(x) -> Tensor:
    """Modified Bessel function of the second kind, order 0 (SciPy's ``k0``; NaN for x < 0); gradient ``-k1(x)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.k0(tl.tensor(1.0, "float64"))), 6)
    0.421024
    """
    return apply(_k0, (x,))


def k1(x) -> Tensor:
    """Modified Bessel function of the second kind, order 1; gradient ``-k0(x) - k1(x) / x``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.k1(tl.tensor(1.0, "float64"))), 6)
    0.601907
    """
    return apply(_k1, (x,))


def k0e(x) -> Tensor:
    """Exponentially scaled ``k0``: ``exp(x) k0(x)``, finite where ``k0`` underflows; gradient ``k0e - k1e``
    (Hankel's expansion's past x = 30, where that difference cancels).

    >>> import tensorlib as tl
    >>> 0 < float(tl.special.k0e(tl.tensor(1000.0))) < 1
    True
    """
    return apply(_k0e, (x,))


def k1e(x) -> Tensor:
    """Exponentially scaled ``k1``: ``exp(x) k1(x)``; gradient ``k1e - k0e - k1e / x``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.k1e(tl.tensor(1.0, "float64"))), 6)
    1.636153
    """
    return apply(_k1e, (x,))


def j0(x) -> Tensor:
    """Bessel function of the first kind, order 0 (SciPy's ``j0``); gradient ``-j1(x)``.

    >>> import tensorlib as tl
    >>> float(tl.special.j0(tl.tensor(0.0)))
    1.0
    """
    return apply(_j0, (x,))


def j1(x) -> Tensor:
    """Bessel function of the first kind, order 1; gradient ``j0(x) - j1(x) / x`` (its series near 0: 1/2 there).

    >>> import tensorlib as tl
    >>> float(tl.special.j1(tl.tensor(0.0)))
    0.0
    """
    return apply(_j1, (x,))


def y0(x) -> Tensor:
    """Bessel function of the second kind, order 0 (SciPy's ``y0``; -inf at 0, NaN below); gradient ``-y1(x)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.y0(tl.tensor(1.0, "float64"))), 6)
    0.088257
    """
    return apply(_y0, (x,))


def y1(x) -> Tensor:
    """Bessel function of the second kind, order 1; gradient ``y0(x) - y1(x) / x``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.y1(tl.tensor(1.0, "float64"))), 6)
    -0.781213
    """
    return apply(_y1, (x,))


# ------------------------------------------------------------------ exponential integrals, Dawson, Spence, Owen's T
_expi = _define("Expi", "expi", doc="The exponential integral Ei(x).")
_exp1 = _define("Exp1", "exp1", doc="The exponential integral E1(x).")
_expn = _define("Expn", "expn", inputs=("x",), attrs={"n": 1}, doc="The generalized exponential integral E_n(x).")
register_gradient("Expi", lambda node, g: g * math_ops.exp(node.inputs[0]) / node.inputs[0])
register_gradient("Exp1", lambda node, g: -g * math_ops.exp(-node.inputs[0]) / node.inputs[0])


def _expn_derivative(node, g):
    """E_n' = -E_{n-1} for n >= 1; E_0(x) = exp(-x) / x, so E_0' = -exp(-x) (x + 1) / x**2."""
    n, x = node.attrs["n"], node.inputs[0]
    if n == 0:
        return -g * math_ops.exp(-x) * (x + 1.0) / math_ops.square(x)
    return -g * expn(n - 1, x)


register_gradient("Expn", _expn_derivative)
_expn_of_orders = _define_of_orders("ExpnOfOrders", "expn", "Expn with the order n an input.")


def _expn_of_orders_derivative(node, g):
    n, x = node.inputs
    zero = np.zeros((), np.dtype(n.dtype))
    lower = -expn(math_ops.maximum(n - 1, zero), x)
    return g * math_ops.where(n == 0, -math_ops.exp(-x) * (x + 1.0) / math_ops.square(x), lower)


register_gradient("ExpnOfOrders", None, _expn_of_orders_derivative)
_OF_ORDERS = {"Polygamma": _polygamma_of_orders, "Expn": _expn_of_orders}


def expi(x) -> Tensor:
    """The exponential integral ``Ei(x)`` (SciPy's ``expi``); gradient ``exp(x) / x``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.expi(tl.tensor(1.0, "float64"))), 6)
    1.895118
    """
    return apply(_expi, (x,))


def exp1(x) -> Tensor:
    """The exponential integral ``E1(x) = int_x^inf exp(-t) / t dt`` (SciPy's ``exp1``); gradient ``-exp(-x) / x``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.exp1(tl.tensor(1.0, "float64"))), 6)
    0.219384
    """
    return apply(_exp1, (x,))


def expn(n, x) -> Tensor:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t**n dt`` (SciPy's ``expn``) of a
    non-negative integer order ``n`` (a Python int, or an integer array broadcasting against ``x``; an integer-valued
    float is that integer and a bool 0 or 1, as for ``polygamma``); gradient in
    ``x``: ``-E_{n-1}(x)`` (for ``n = 0``, ``-exp(-x) (x + 1) / x**2``).

    >>> import tensorlib as tl
    >>> round(float(tl.special.expn(1, tl.tensor(1.0, "float64"))), 6)   # E1(1)
    0.219384
    """
    return _by_order(_expn, n, x)


_dawsn = _define("Dawsn", "dawsn", doc="Dawson's integral exp(-x**2) int_0^x exp(t**2) dt.")
# D'(x) = 1 - 2 x D(x) cancels for large |x|, where D(x) ~ 1 / (2x): at x = 1e4 it kept 8 digits.  From
# _DAWSN_ASYMPTOTIC on, the derivative of the asymptotic series D(x) ~ sum_k (2k - 1)!! / (2**(k + 1) x**(2k + 1)),
# -sum_k (2k + 1)!! / 2**(k + 1) u**(k + 1) with u = 1 / x**2, whose 10 terms reach float64 precision there.
_DAWSN_ASYMPTOTIC = 20.0
_DAWSN_SERIES = [_math.prod(range(1, 2 * k + 2, 2)) / 2.0 ** (k + 1) for k in range(9, -1, -1)]


def _dawsn_derivative(x, value):
    large = math_ops.greater(math_ops.abs(x), _DAWSN_ASYMPTOTIC)
    u = 1.0 / math_ops.square(math_ops.where(large, x, _DAWSN_ASYMPTOTIC))
    series = _DAWSN_SERIES[0]
    for c in _DAWSN_SERIES[1:]:
        series = series * u + c
    return math_ops.where(large, -series * u, 1.0 - 2.0 * x * value)


register_gradient("Dawsn", lambda node, g: g * _in_float64(_dawsn_derivative, dawsn, node.inputs[0], node.outputs[0]))


def dawsn(x) -> Tensor:
    """Dawson's integral ``exp(-x**2) int_0^x exp(t**2) dt`` (SciPy's ``dawsn``); gradient ``1 - 2 x dawsn(x)``
    (its asymptotic series past |x| = 20, where that difference cancels).

    >>> import tensorlib as tl
    >>> round(float(tl.special.dawsn(tl.tensor(1.0, "float64"))), 6)
    0.53808
    """
    return apply(_dawsn, (x,))


_spence = _define("Spence", "spence", doc="Spence's function (the dilogarithm) int_1^z log(t) / (1 - t) dt.")


# log1p(u) / u = sum_k (-u)**k / (k + 1), to u**8: within 1e-19 of it for |u| < _SPENCE_SERIES_BELOW
_SPENCE_SERIES_BELOW = 0.01
_SPENCE_SERIES = [(-1.0) ** k / (k + 1) for k in range(8, -1, -1)]


def _spence_derivative(node, g):
    """log(z) / (1 - z); near z = 1 the series of -log1p(u) / u, u = z - 1 (-1 there, and the derivatives of every
    order).  log(z) itself elsewhere: log1p(z - 1) took the log of a rounded z - 1 (2.6e-5 off at z = 3e-14, -inf
    for a finite log at 1e-300)."""
    z = node.inputs[0]
    u = z - 1.0
    near = math_ops.less(math_ops.abs(u), _SPENCE_SERIES_BELOW)
    us = math_ops.where(near, u, 0.0)
    series = _SPENCE_SERIES[0]
    for c in _SPENCE_SERIES[1:]:
        series = series * us + c
    return -g * math_ops.where(near, series, math_ops.log(z) / math_ops.where(near, 1.0, u))


register_gradient("Spence", _spence_derivative)


def spence(z) -> Tensor:
    """Spence's function ``int_1^z log(t) / (1 - t) dt`` for ``z >= 0`` (SciPy's ``spence``; NaN below);
    gradient ``log(z) / (1 - z)``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.spence(tl.tensor(0.0, "float64"))), 6)   # pi**2 / 6
    1.644934
    """
    return apply(_spence, (z,))


_owens_t = _define("OwensT", "owens_t", inputs=("h", "a"), doc="Owen's T function.")


def _owens_t_by_h(node, g):
    """-phi(h) erf(a h / sqrt(2)) / 2."""
    h, a = node.inputs
    return -g * math_ops.exp(-0.5 * math_ops.square(h) - _LOG_SQRT_2PI) * 0.5 * erf(a * h * _math.sqrt(0.5))


def _owens_t_by_a(node, g):
    """exp(-h**2 (1 + a**2) / 2) / (2 pi (1 + a**2))."""
    h, a = node.inputs
    spread = 1.0 + math_ops.square(a)
    return g * math_ops.exp(-0.5 * math_ops.square(h) * spread) / (2.0 * _math.pi * spread)


register_gradient("OwensT", _owens_t_by_h, _owens_t_by_a)


def owens_t(h, a) -> Tensor:
    """Owen's T function ``T(h, a) = 1 / (2 pi) int_0^a exp(-h**2 (1 + t**2) / 2) / (1 + t**2) dt`` (SciPy's
    ``owens_t``); gradients ``-phi(h) erf(a h / sqrt(2)) / 2`` in ``h`` and the integrand at ``a`` in ``a``.

    >>> import tensorlib as tl
    >>> round(float(tl.special.owens_t(tl.tensor(0.0, "float64"), tl.tensor(1.0, "float64"))), 6)   # 1/8
    0.125
    """
    return apply(_owens_t, (h, a))


# ------------------------------------------------------------------ Box-Cox transforms
# expm1(t) / t = sum_k t**k / (k + 1)!, to t**10: within 1e-23 of it for |t| < _BOXCOX_SERIES_BELOW, where the
# quotient (and more so its derivatives, which autodiff would take of expm1(t) / lambda) cancel.
_BOXCOX_SERIES_BELOW = 0.05
_BOXCOX_SERIES = [1.0 / _math.factorial(k + 1) for k in range(10, -1, -1)]


def _boxcox_of_log(log_x, lmbda) -> Tensor:
    """``(exp(lmbda log_x) - 1) / lmbda`` (``log_x`` at lmbda = 0), its series where lmbda log_x is small, so that
    the value and its derivatives in both arguments are exact there (the derivative in lmbda at 0 is log_x**2 / 2)."""
    t = lmbda * log_x
    near = math_ops.less(math_ops.abs(t), _BOXCOX_SERIES_BELOW)
    ts = math_ops.where(near, t, 0.0)
    series = _BOXCOX_SERIES[0]
    for c in _BOXCOX_SERIES[1:]:
        series = series * ts + c
    small = math_ops.logical_or(near, math_ops.equal(lmbda, 0.0))  # lmbda = 0 at log_x = +-inf: t is NaN
    return math_ops.where(small, log_x * series, math_ops.expm1(t) / math_ops.where(small, 1.0, lmbda))


def _boxcox(x, lmbda, log, pole) -> Tensor:
    """``_boxcox_of_log(log(x), lmbda)``, where ``x = pole`` (the base, ``x`` or ``1 + x``, is 0) by the limits x ->
    pole+: ``(0**lmbda - 1) / lmbda = -1 / lmbda`` for ``lmbda > 0``, with ``power``'s partials at base 0 (``d/dx =
    x**(lmbda - 1)``: inf, 1 or 0; every derivative in lmbda that of -1 / lmbda); for ``lmbda <= 0``, -inf and both
    partials +inf, which ``(1 - lmbda) log(base)`` has.  Through the log both partials were 0 * inf = NaN."""
    at_pole = math_ops.equal(x, pole)
    regular = _boxcox_of_log(log(math_ops.where(at_pole, pole + 1.0, x)), lmbda)
    base = math_ops.where(at_pole, x - pole, 1.0)
    above = math_ops.logical_and(at_pole, math_ops.greater(lmbda, 0.0))
    positive = math_ops.where(above, lmbda, 1.0)
    from_power = (math_ops.power(base, positive) - 1.0) / positive
    from_log = (1.0 - lmbda) * math_ops.log(math_ops.where(above, 1.0, base))
    return math_ops.where(at_pole, math_ops.where(above, from_power, from_log), regular)


def boxcox(x, lmbda) -> Tensor:
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda = 0`` (SciPy's ``boxcox``; NaN for
    ``x < 0``), differentiable in ``x`` and ``lmbda`` to every order, also at and near ``lmbda = 0``, and at ``x = 0``
    by the limits from ``x > 0`` (``d/dlmbda = 1 / lmbda**2`` for ``lmbda > 0``).

    >>> import tensorlib as tl
    >>> tl.special.boxcox(tl.tensor([1.0, 4.0]), tl.tensor([0.0, 0.5])).numpy().tolist()
    [0.0, 2.0]
    >>> float(tl.grad(tl.special.boxcox, argnums=1)(tl.tensor(0.0), tl.tensor(0.5)))   # 1 / lmbda**2
    4.0
    """
    return _widened(lambda x, lmbda: _boxcox(x, lmbda, math_ops.log, 0.0), *_floats_together(x, lmbda))


def boxcox1p(x, lmbda) -> Tensor:
    """``boxcox(1 + x, lmbda)`` accurate for small ``x`` (SciPy's ``boxcox1p``: ``log1p(x)`` inside); at ``x = -1``
    the limits of ``boxcox`` at 0.

    >>> import tensorlib as tl
    >>> round(float(tl.special.boxcox1p(tl.tensor(1e-10, "float64"), tl.tensor(0.5, "float64"))), 20)
    1e-10
    """
    return _widened(lambda x, lmbda: _boxcox(x, lmbda, math_ops.log1p, -1.0), *_floats_together(x, lmbda))


# ------------------------------------------------------------------ betabinom's tails: a sum as long as the data say
_BETABINOM_BLOCK = 1 << 20  # terms computed at once (8 MiB a float64 array): elements batched, or one cut in chunks


def _log_rising_rest(x, m):
    """``log Gamma(x + m) - log Gamma(x) - m log(x + m) + m`` (float64, ``x >= 10``, ``m >= 0``) from Stirling's
    series: ``(x - 1/2) log1p(m / x)`` plus the corrections' difference, with no term of size ``x log x``."""
    return (x - 0.5) * np.log1p(m / x) + _log_gamma_correction(x + m) - _log_gamma_correction(x)


def _betabinom_terms(j, n, a, b, da, db):
    """``d^da/da d^db/db`` of BetaBinomial(n, a, b)'s mass at the counts ``j``, as ``pmf * factor`` (float64 arrays):
    the scores ``d log pmf / da = psi(j + a) - psi(a) - psi(n + a + b) + psi(a + b)`` (and in b) as differences of
    digamma without cancellation, the second derivatives ``pmf (score**2 + d score)``."""
    sp = scipy_special()
    # log(B(j + a, n - j + b) / B(a, b)) as log-Pochhammers; where a, b >= 10 their m log(x + m) terms together, as
    # logs of ratios (the log-betas' difference lost 2e-9 relative at a = b = 1e6: each is -1.4e6)
    large = (a >= _STIRLING_FROM) & (b >= _STIRLING_FROM)
    al, bl = np.where(large, a, _STIRLING_FROM), np.where(large, b, _STIRLING_FROM)
    together = (
        _log_rising_rest(al, j)
        + _log_rising_rest(bl, n - j)
        - _log_rising_rest(al + bl, n)
        + sp.xlogy(j, (al + j) / (al + bl + n))
        + sp.xlogy(n - j, (bl + n - j) / (al + bl + n))
    )
    apart = _log_beta(j + a, n - j + b)[0] - _log_beta(a, b)[0]
    log_p = -np.log1p(n) - _log_beta(n - j + 1.0, j + 1.0)[0] + np.where(large, together, apart)
    p = np.exp(log_p)
    if da + db == 0:
        return p
    both = _digamma_difference(a + b, n, np)
    s_a = both - _digamma_difference(a, j, np)
    s_b = both - _digamma_difference(b, n - j, np)
    if da + db == 1:
        return p * (s_a if da else s_b)
    t_ab = sp.polygamma(1, a + b) - sp.polygamma(1, n + a + b)
    if da == 1:
        return p * (s_a * s_b + t_ab)
    if da == 2:
        return p * (s_a * s_a + t_ab + sp.polygamma(1, j + a) - sp.polygamma(1, a))
    return p * (s_b * s_b + t_ab + sp.polygamma(1, n - j + b) - sp.polygamma(1, b))


def _betabinom_sums(start, count, n, a, b, da, db):
    """``sum_{j = start}^{start + count - 1}`` of ``_betabinom_terms`` for each element (1-d float64 arrays, ``count`` a
    whole number >= 0): the elements sorted by their count and batched into blocks of ``_BETABINOM_BLOCK`` terms, an
    element longer than a block summed chunk by chunk."""
    out = np.zeros(start.shape)
    order = np.argsort(count, kind="stable")
    size, i = len(order), 0
    while i < size:
        first = order[i]
        if count[first] > _BETABINOM_BLOCK:  # the rest are as long: one at a time, in chunks
            for e in order[i:]:
                total, done = 0.0, 0.0
                while done < count[e]:
                    j = start[e] + done + np.arange(min(_BETABINOM_BLOCK, count[e] - done))
                    total += np.sum(_betabinom_terms(j, n[e], a[e], b[e], da, db))
                    done += _BETABINOM_BLOCK
                out[e] = total
            break
        end = i + 1
        while end < size and (end + 1 - i) * count[order[end]] <= _BETABINOM_BLOCK:
            end += 1
        rows = order[i:end]
        width = int(count[rows[-1]])
        if width:
            steps = np.arange(width, dtype=np.float64)
            used = steps < count[rows, None]
            j = np.where(used, start[rows, None] + steps, start[rows, None])
            terms = _betabinom_terms(j, *(v[rows, None] for v in (n, a, b)), da, db)
            out[rows] = np.sum(np.where(used, terms, 0.0), axis=1)
        i = end
    return out


def _betabinom_tail_kernel(k, n, a, b, *, upper, da, db):
    """P(K <= k) (``upper``: P(K > k)) of BetaBinomial(n, a, b), or its derivative ``d^da/da d^db/db``, float64 inside:
    each tail summed itself where it holds at most half the mass, else from the other (1 minus it; minus it for a
    derivative).  Elements that share their parameters (one distribution at many counts) read the sums of all
    ``n + 1`` masses from each end, computed once; the others sum the shorter tail, and the requested one itself
    where that holds more than half.  NaN for invalid parameters (a or b not positive or infinite, n not a whole
    number, a NaN)."""
    dtype = _result_dtype(k.dtype, n.dtype, a.dtype, b.dtype)
    shape = broadcast_shapes(k.shape, n.shape, a.shape, b.shape)
    k, n, a, b = (np.broadcast_to(np.asarray(v, np.float64), shape).ravel() for v in (k, n, a, b))
    out = np.full(k.shape, np.nan)
    derivative = da + db > 0
    with np.errstate(all="ignore"):
        ok = (a > 0) & (b > 0) & (n >= 0) & (n == np.floor(n)) & (n < np.inf) & (k == k) & (a < np.inf)
        ok &= b < np.inf
        n, a, b = np.where(ok, n, 0.0), np.where(ok, a, 1.0), np.where(ok, b, 1.0)
        below = np.clip(np.floor(np.where(ok, k, 0.0)) + 1.0, 0.0, n + 1.0)  # the counts 0 .. below - 1
        above = n + 1.0 - below
        keys, group, sizes = np.unique(np.stack([n, a, b], axis=1), axis=0, return_inverse=True, return_counts=True)
        group = group.ravel()
        shared = ok & (sizes[group] > 1) & (n < _BETABINOM_BLOCK)
        for g in np.unique(group[shared]):
            rows = np.flatnonzero(shared & (group == g))
            m, x, y = keys[g]
            counts = np.arange(m + 1.0)
            mass = _betabinom_terms(counts, m, x, y, 0, 0)
            terms = _betabinom_terms(counts, m, x, y, da, db) if derivative else mass
            c = below[rows].astype(np.int64)
            from_low = np.concatenate([[0.0], np.cumsum(terms)])[c]  # the first c terms, then the rest
            from_high = np.concatenate([np.cumsum(terms[::-1])[::-1], [0.0]])[c]
            mass_low = np.concatenate([[0.0], np.cumsum(mass)])[c]
            mass_high = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])[c]
            wanted, other, held = (from_high, from_low, mass_high) if upper else (from_low, from_high, mass_low)
            out[rows] = np.where(held <= 0.5, wanted, -other if derivative else 1.0 - other)
        alone = np.flatnonzero(ok & ~shared)
        if alone.size:
            below, above, n, a, b = below[alone], above[alone], n[alone], a[alone], b[alone]
            lower_short = below <= above
            first, count = np.where(lower_short, 0.0, below), np.minimum(below, above)
            short = _betabinom_sums(first, count, n, a, b, da, db)
            mass = _betabinom_sums(first, count, n, a, b, 0, 0) if derivative else short
            same = lower_short != bool(upper)
            value = np.where(same, short, -short if derivative else 1.0 - short)
            direct = ~same & (mass > 0.5)
            if direct.any():
                long_start = np.where(lower_short, below, 0.0)[direct]
                long_count = np.maximum(below, above)[direct]
                value[direct] = _betabinom_sums(long_start, long_count, n[direct], a[direct], b[direct], da, db)
            out[alone] = value
    return out.reshape(shape).astype(dtype, copy=False)


_betabinom_tail = defop(
    "BetabinomTail",
    inputs=("k", "n", "a", "b"),
    attrs={"upper": False, "da": 0, "db": 0},
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1, 2, 3),
    doc="P(K <= k) (upper: P(K > k)) of BetaBinomial(n, a, b), or its derivatives of order da in a and db in b.",
)
_betabinom_tail.kernel("numpy")(_betabinom_tail_kernel)
_betabinom_tail.kernels_reason = "a NumPy sum over the counts; the Array API standard has no special functions"


def _betabinom_tail_rule(wrt):
    def rule(node, g):
        da, db = node.attrs["da"] + (wrt == "a"), node.attrs["db"] + (wrt == "b")
        if da + db > 2:
            raise LookupError(
                "BetabinomTail: the derivatives of betabinom's cdf / sf of order three and more in a and b are not "
                "implemented; the first and second are"
            )
        return g * apply(_betabinom_tail, node.inputs, {**node.attrs, "da": da, "db": db})

    return rule


def _betabinom_tail_by_n(node, g):
    raise TypeError(
        "BetabinomTail: betabinom's cdf / sf are not differentiable in the number of trials n (a whole number); "
        "they are in a and b"
    )


register_gradient(
    "BetabinomTail", lambda node, g: None, _betabinom_tail_by_n, _betabinom_tail_rule("a"), _betabinom_tail_rule("b")
)


def betabinom_tail(k, n, a, b, upper=False) -> Tensor:
    """BetaBinomial(n, a, b)'s ``P(K <= k)`` (``upper``: ``P(K > k)``), float64 tensors; differentiable in ``a`` and
    ``b`` (first and second order), none in ``k`` (a step function), a TypeError in ``n``."""
    return apply(_betabinom_tail, (k, n, a, b), {"upper": bool(upper), "da": 0, "db": 0})


def _betabinom_count_kernel(q, n, a, b, *, upper):
    """BetaBinomial(n, a, b)'s quantile (``upper``: the inverse survival function) to within one count, for
    ``tl.stats.betabinom.ppf`` / ``isf`` to correct against its own cdf / sf: every mass, their sums from each end, each
    tail from the smaller of the two (as ``BetabinomTail`` takes it), the first count past ``q``; for ``n`` past
    ``_BETABINOM_BLOCK`` the masses summed from 0 a block at a time.  ``q`` in (0, 1) and valid parameters (0
    elsewhere)."""
    dtype = _result_dtype(q.dtype, n.dtype, a.dtype, b.dtype)
    shape = broadcast_shapes(q.shape, n.shape, a.shape, b.shape)
    q, n, a, b = (np.broadcast_to(np.asarray(v, np.float64), shape).ravel() for v in (q, n, a, b))
    out = np.zeros(q.shape)
    with np.errstate(all="ignore"):
        ok = (q > 0) & (q < 1) & (a > 0) & (b > 0) & (n >= 0) & (n == np.floor(n)) & (n < np.inf)
        ok &= (a < np.inf) & (b < np.inf)
        tails = {}  # the tails of each distinct (n, a, b) once: one set of parameters for many q is the common case
        for e in np.flatnonzero(ok):
            if n[e] < _BETABINOM_BLOCK:
                key = (n[e], a[e], b[e])
                if key not in tails:
                    mass = _betabinom_terms(np.arange(n[e] + 1.0), n[e], a[e], b[e], 0, 0)
                    tails[key] = np.cumsum(mass), np.append(np.cumsum(mass[:0:-1])[::-1], 0.0)  # P(K <= k), P(K > k)
                below, above = tails[key]
                if upper:
                    out[e] = np.argmax(np.where(above <= 0.5, above, 1.0 - below) <= q[e])
                else:
                    cdf = np.where(below <= 0.5, below, 1.0 - above)
                    out[e] = np.argmax(cdf >= q[e]) if cdf[-1] >= q[e] else n[e]
                continue
            target, done, total = (1.0 - q[e] if upper else q[e]), 0.0, 0.0
            out[e] = n[e]
            while done <= n[e]:
                j = done + np.arange(min(_BETABINOM_BLOCK, n[e] + 1.0 - done))
                sums = total + np.cumsum(_betabinom_terms(j, n[e], a[e], b[e], 0, 0))
                at = int(np.searchsorted(sums, target))  # the first with sums >= target
                if at < len(j):
                    out[e] = j[at]
                    break
                total, done = sums[-1], done + len(j)
    return out.reshape(shape).astype(dtype, copy=False)


_betabinom_count = defop(
    "BetabinomCount",
    inputs=("q", "n", "a", "b"),
    attrs={"upper": False},
    infer=_elementwise_infer,
    elementwise=True,
    promote=(0, 1, 2, 3),
    doc="BetaBinomial(n, a, b)'s ppf (upper: isf) at q to within one count, the start of tl.stats' exact search.",
)
_betabinom_count.kernel("numpy")(_betabinom_count_kernel)
_betabinom_count.kernels_reason = _betabinom_tail.kernels_reason
not_differentiable("BetabinomCount")


def betabinom_count(q, n, a, b, upper=False) -> Tensor:
    """BetaBinomial(n, a, b)'s ``ppf(q)`` (``upper``: ``isf(q)``) to within one count; float64 tensors, no gradient."""
    return apply(_betabinom_count, (q, n, a, b), {"upper": bool(upper)})

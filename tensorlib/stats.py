"""``tl.stats``: distributions with SciPy's names and arguments (``logpdf``/``logpmf``, ``pdf``/``pmf``, ``cdf``,
``sf``, their logs and, where closed forms exist, ``ppf``/``isf``, ``mean``, ``var``, ``std``, ``stats`` and
``entropy``; the counts also ``ppf``, ``isf``, ``median``, ``interval``, ``mean``, ``var``, ``std``, ``stats`` and some
``entropy``), differentiable in their continuous arguments:
``norm``, ``t``, ``beta``, ``gamma``, ``chi2``, ``uniform``, ``expon``, ``laplace``, ``logistic``, ``cauchy``,
``pareto``, ``gennorm``, ``gumbel_r``, ``gumbel_l``, ``lognorm``, ``weibull_min``, ``halfnorm``, ``rayleigh``,
``invgamma``, ``f``, ``loggamma``, ``truncnorm``, ``vonmises``, ``wrapcauchy``, ``dirichlet``, ``multivariate_normal``, and the counts
``poisson``, ``binom``, ``bernoulli``, ``geom``, ``nbinom``, ``betabinom``, ``multinomial``.

Each is a composition of tensorlib ops (``tl.special``, ``tl.linalg``), so
gradients of every order come from theirs: ``tl.grad`` of a log-likelihood
with respect to locations, scales, shapes, concentrations, means or
covariances works as for any other function.  Values match
``scipy.stats.<dist>.<method>``, off the support too: a log-density of -inf
outside it, nan for an invalid parameter (a scale, shape or rate that is not
positive).  At an infinite ``x`` a density is its limit, 0 (SciPy's chi2,
weibull_min, gamma, f and loggamma read inf - inf there: NaN; periodic vonmises
has no limit: NaN), and every method's gradient is finite.

>>> import tensorlib as tl
>>> round(float(tl.stats.norm.logpdf(tl.tensor(0.0))), 6)
-0.918939
>>> float(tl.grad(lambda mu: tl.stats.norm.logpdf(tl.tensor(1.0), loc=mu))(tl.tensor(0.0)))
1.0
"""

from __future__ import annotations

import functools as _functools
import math as _math
from types import SimpleNamespace

import numpy as np

from . import special as _sp
from .dtypes import float64 as _float64
from .grad.api import vjp as _vjp
from .grad.custom import custom_gradient as _custom_gradient
from .ops import elementwise as _elementwise
from .ops import math as _math_ops
from .ops import nn as _nn
from .ops import reduce as _reduce_ops
from .ops.special import (
    all_of as _all,
    beta_log_density,
    dirichlet_saddle_point,
    _floats_together,
    deviance,
    gamma_log_density,
    log_betainc as _log_betainc,
    betabinom_count as _betabinom_count,
    betabinom_tail as _betabinom_tail,
    log_gamma_tail as _log_gamma_tail,
    poisson_log_density,
    relative_difference,
    stirling_error,
)
from .tensor import Tensor

_LOG_2PI = _math.log(2 * _math.pi)

# Euler's constant and Apery's zeta(3), for the Gumbel moments and the entropies
_EULER = 0.5772156649015329
_ZETA3 = 1.2020569031595942


def _args(where: str, broadcast: bool = True, **values):
    """``(dtype, tensors)``: the result dtype of ``where`` (e.g. ``"norm.logpdf"``), its arrays' (integers count as
    float64, Python numbers adopt it), and its arguments as float64 tensors, in which it computes: ``_narrowed``
    rounds its result once.  A float32 log-density summed in float32 lost what its terms cancel (beta.logpdf at
    0.999999 with a = 1500, b = 2.1 was 2e-5 off, 330 ulps; gamma.logpdf(0.087, 0.12) 4468 ulps), as SciPy does
    not.  A complex argument, or (``broadcast``) shapes that do not broadcast, is one error naming ``where`` and
    every argument's shape and dtype.

    A Python float given to a ``tl.function`` is a weak scalar there: a Python number too, so traced
    calls compute in eager's dtype (it is neither promoted with the arrays nor left weak)."""
    from .dispatch import WeakScalar
    from .dtypes import float64, promote_types
    from .ops._shapes import broadcast_shapes
    from .ops.creation import tensor

    def number(v):  # a Python number, weak as in every op; a NumPy scalar (np.float64(0.5)) is strong there
        return (isinstance(v, (int, float)) and not isinstance(v, np.generic)) or v.__class__ is WeakScalar

    # read together: a list next to a float64 array is float64 (norm.pdf(x64, loc=[0.1]) was off 1e-8 relative)
    converted = iter(_floats_together(*(v for v in values.values() if not number(v))))
    aligned = [None if number(v) else next(converted) for v in values.values()]
    arrays = [a for a in aligned if a is not None]

    def described():
        return ", ".join(
            f"{name} {v!r}" if t is None else f"{name} shape {tuple(t.shape)} {t.dtype}"
            for (name, v), t in zip(values.items(), aligned)
        )

    complex_ = [a.dtype for a in arrays if a.dtype.kind != "f"]
    if complex_:
        raise TypeError(f"{where}: not defined for {complex_[0]} ({described()})")
    dtype = promote_types(*(a.dtype for a in arrays)) if arrays else float64
    if broadcast:
        try:
            broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            raise ValueError(f"{where}: the shapes do not broadcast ({described()})") from None
    # a Python number is weak: it takes the arguments' dtype (0.1 as float32 for float32 data), then widens
    out = [tensor(v, dtype=dtype) if t is None else t for v, t in zip(values.values(), aligned)]
    out = [t if t.dtype == float64 else _math_ops.cast(t, float64) for t in out]
    return dtype, out


def _narrowed(result: Tensor, dtype) -> Tensor:
    """``result`` (computed in float64) rounded once to the arguments' ``dtype``."""
    return result if dtype == _float64 else _math_ops.cast(result, dtype)


def _restrict(logp, inside, valid, x=None) -> Tensor:
    """SciPy's values off the support: -inf (density 0) where ``x`` is outside, nan where a parameter
    is invalid (a scale, shape or rate that is not positive) or ``x`` is nan (given the standardized
    ``(x - loc) / scale``, a nan ``loc`` and inf / inf are nan too).  Callers compute ``logp`` from a
    safe stand-in for ``x`` outside, so no gradient meets the nan of a log of a negative number."""
    w = _math_ops.where
    out = w(valid, w(inside, logp, -_math.inf), _math.nan)
    return out if x is None else w(_math_ops.not_equal(x, x), _math.nan, out)


def _standard(x, loc, scale) -> Tensor:
    """``(x - loc) / scale``; where that is infinite (an infinite ``x``, or one past float64's range) or NaN, the value
    with no gradient: every method is constant there (an end value, or the density's limit 0), and the quotient's
    derivative in the scale, ``-z / scale``, is infinite (0 * inf made every family's scale gradient NaN at x = inf,
    and float32 x = 1e150 is inf)."""
    w = _math_ops.where
    z = (x - loc) / scale
    finite = _math_ops.abs(z) < _math.inf
    return w(finite, (w(finite, x, loc) - loc) / scale, _math_ops.stop_gradient(z))


def _intervals(ppf) -> dict:
    """``median`` (``ppf(0.5)``) and ``interval(confidence)``, ``(ppf((1 - c) / 2), ppf((1 + c) / 2))``, SciPy's; NaN for
    a confidence outside [0, 1] (SciPy raises there; a tensor's values are not read, so that traced calls agree)."""
    name = ppf.__name__.rsplit("_", 1)[0]

    def median(*args, **kwargs):
        return ppf(0.5, *args, **kwargs)

    def interval(confidence, *args, **kwargs):
        if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
            inside = 0 <= confidence <= 1
            low, high = ((1 - confidence) / 2, (1 + confidence) / 2) if inside else (_math.nan, _math.nan)
        else:
            from .ops.creation import tensor

            c = confidence if isinstance(confidence, Tensor) else tensor(confidence)
            inside = _all(c >= 0, c <= 1)
            low = _math_ops.where(inside, (1.0 - c) * 0.5, _math.nan)
            high = _math_ops.where(inside, (1.0 + c) * 0.5, _math.nan)
        return ppf(low, *args, **kwargs), ppf(high, *args, **kwargs)

    median.__name__ = median.__qualname__ = f"{name}_median"
    interval.__name__ = interval.__qualname__ = f"{name}_interval"
    return {"median": median, "interval": interval}


def _summaries(name, shapes, valid, moments, entropy=None, scaled=False) -> dict:
    """``mean``, ``var``, ``std``, ``stats(moments=)`` (SciPy's order m, v, s, k; the kurtosis is the excess) and
    ``entropy`` (where ``entropy`` is given) of a family, from ``moments(*params) -> (mean, var, skew, kurt)`` and
    ``entropy(*params)`` of its standard form, shifted by ``loc`` (and, if ``scaled``, stretched by ``scale``: the
    variance times ``scale**2``, the entropy plus ``log(scale)``), NaN for invalid parameters; differentiable in the
    continuous parameters (they are formulas in tensorlib ops)."""
    w = _math_ops.where
    defaults = {"loc": 0.0, "scale": 1.0} if scaled else {"loc": 0.0}

    def parameters(m, args, kwargs):
        dtype, (*params, loc) = _bound(f"{name}.{m}", None, None, shapes, defaults, args, kwargs)
        scale = 1.0
        if scaled:
            loc, scale = params.pop(), loc
        ok = scale > 0 if valid is None else _all(valid(*params), scale > 0) if scaled else valid(*params)
        return dtype, params, loc, scale, ok

    def summary(m, index):
        def run(*args, **kwargs):
            dtype, params, loc, scale, ok = parameters(m, args, kwargs)
            values = moments(*params)
            if index == 0:
                value = loc + scale * values[0]
            elif index == "std":
                value = scale * _math_ops.sqrt(_math_ops.zeros_like(loc) + values[1])
            else:
                # a constant (a shapeless family's skewness) as a float64 tensor of the parameters' shape
                value = scale * scale * values[1] if index == 1 else _math_ops.zeros_like(loc) + values[index]
            return _narrowed(w(ok, value, _math.nan), dtype)

        run.__name__ = run.__qualname__ = f"{name}_{m}"
        run.__doc__ = f"SciPy's ``{name}.{m}`` of the parameters (``loc`` too), differentiable in the continuous ones."
        return run

    def stats(*args, moments="mv", **kwargs):
        """SciPy's ``stats``: the mean, variance, skewness and excess kurtosis named by ``moments`` (letters of ``mvsk``),
        in that order; one Tensor for one letter.

        >>> import tensorlib as tl
        >>> [float(v) for v in tl.stats.poisson.stats(4.0, moments="mvsk")]
        [4.0, 4.0, 0.5, 0.25]
        """
        if not isinstance(moments, str) or not moments or set(moments) - set("mvsk"):
            raise ValueError(f"{name}.stats: moments must be letters of 'mvsk', got {moments!r}")
        out = tuple(
            summary(m, i)(*args, **kwargs) for i, m in enumerate(("mean", "var", "skew", "kurt")) if m[0] in moments
        )
        return out[0] if len(out) == 1 else out

    stats.__name__ = stats.__qualname__ = f"{name}_stats"
    methods = {"mean": summary("mean", 0), "var": summary("var", 1), "std": summary("std", "std"), "stats": stats}
    if entropy is not None:

        def entropy_(*args, **kwargs):
            dtype, params, _, scale, ok = parameters("entropy", args, kwargs)
            value = entropy(*params) + (_math_ops.log(scale) if scaled else 0.0)
            return _narrowed(w(ok, value, _math.nan), dtype)

        entropy_.__name__ = entropy_.__qualname__ = f"{name}_entropy"
        methods["entropy"] = entropy_
    return methods


# ------------------------------------------------------------------ norm
def _norm_logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log N(x; loc, scale**2).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.norm.logpdf(tl.tensor(1.0), loc=1.0, scale=2.0)), 6)
    -1.612086
    """
    dtype, (x, loc, scale) = _args("norm.logpdf", x=x, loc=loc, scale=scale)
    z = _standard(x, loc, scale)
    return _narrowed(_restrict(-0.5 * z * z - _math_ops.log(scale) - 0.5 * _LOG_2PI, True, scale > 0), dtype)


def _standardized(name, function, x, loc, scale, upper=False) -> Tensor:
    """``function`` of the standardized ``(x - loc) / scale`` (of its negative for the upper tail), nan where
    ``scale <= 0``: the normal's cdf, sf and their logs."""
    dtype, (x, loc, scale) = _args(name, x=x, loc=loc, scale=scale)
    z = _standard(x, loc, scale)
    return _narrowed(_restrict(function(-z if upper else z), True, scale > 0), dtype)


def _norm_logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x), accurate far into the left tail (``tl.special.log_ndtr``).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.norm.logcdf(tl.tensor(0.0))), 6)
    -0.693147
    """
    return _standardized("norm.logcdf", _sp.log_ndtr, x, loc, scale)


def _norm_pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The normal density.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.norm.pdf(tl.tensor(0.0))), 6)
    0.398942
    """
    return _math_ops.exp(_norm_logpdf(x, loc, scale))


def _norm_cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The normal CDF.

    >>> import tensorlib as tl
    >>> float(tl.stats.norm.cdf(tl.tensor(0.0)))
    0.5
    """
    return _standardized("norm.cdf", _sp.ndtr, x, loc, scale)


def _norm_sf(x, loc=0.0, scale=1.0) -> Tensor:
    """The normal survival function ``P(X > x)``, accurate in the right tail (not ``1 - cdf``).

    >>> import tensorlib as tl
    >>> float(tl.stats.norm.sf(tl.tensor(10.0, "float64")))   # 1 - cdf is 0 there
    7.61985302416047e-24
    """
    return _standardized("norm.sf", _sp.ndtr, x, loc, scale, upper=True)


def _norm_logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """``log P(X > x)``, accurate far into the right tail.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.norm.logsf(tl.tensor(40.0))), 3)
    -804.608
    """
    return _standardized("norm.logsf", _sp.log_ndtr, x, loc, scale, upper=True)


def _norm_ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function, the inverse of ``cdf`` (nan for ``q`` outside [0, 1]).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.norm.ppf(tl.tensor(0.975), loc=1.0, scale=2.0)), 5)
    4.91993
    """
    dtype, (q, loc, scale) = _args("norm.ppf", q=q, loc=loc, scale=scale)
    return _narrowed(_restrict(loc + scale * _sp.ndtri(q), True, scale > 0), dtype)


def _norm_isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``: ``ppf(1 - q)`` without rounding ``1 - q`` (accurate for a tiny ``q``).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.norm.isf(tl.tensor(1e-30, "float64"))), 6)
    11.464024
    """
    dtype, (q, loc, scale) = _args("norm.isf", q=q, loc=loc, scale=scale)
    return _narrowed(_restrict(loc - scale * _sp.ndtri(q), True, scale > 0), dtype)


norm = SimpleNamespace(
    logpdf=_norm_logpdf,
    logcdf=_norm_logcdf,
    pdf=_norm_pdf,
    cdf=_norm_cdf,
    sf=_norm_sf,
    logsf=_norm_logsf,
    ppf=_norm_ppf,
    isf=_norm_isf,
    **_intervals(_norm_ppf),
    **_summaries("norm", (), None, lambda: (0.0, 1.0, 0.0, 0.0), lambda: 0.5 * (_LOG_2PI + 1.0), scaled=True),
)


# ------------------------------------------------------------------ t
def _log1p_square(u) -> Tensor:
    """``log(1 + u**2)``, as ``2 log|u| + log1p(u**-2)`` for ``|u| > 1``, where ``u**2`` overflows from 1e154 (1e19 in
    float32): t.logpdf(1e20, 2) was -inf in float32 for -138.155."""
    size = _math_ops.abs(u)
    large = size > 1.0
    big, small = _math_ops.where(large, size, 2.0), _math_ops.where(large, 0.0, u)
    return _math_ops.where(
        large, 2.0 * _math_ops.log(big) + _math_ops.log1p(1.0 / (big * big)), _math_ops.log1p(small * small)
    )


def _t_logpdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """Student's t log-density with ``df`` degrees of freedom (differentiable in all four arguments).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.t.logpdf(tl.tensor(0.0), 1.0)), 6)   # Cauchy: -log(pi)
    -1.14473
    """
    dtype, (x, df, loc, scale) = _args("t.logpdf", x=x, df=df, loc=loc, scale=scale)
    z = _standard(x, loc, scale)
    far = _math_ops.equal(
        _math_ops.abs(z), _math.inf
    )  # the density's limit there, 0 (its formula's df gradient was NaN)
    z = _math_ops.where(far, 0.0, z)
    infinite = df == _math.inf  # the normal limit, as SciPy gives (the formula reads inf - inf there)
    finite_df = _math_ops.where(infinite, 1.0, df)
    half = (finite_df + 1.0) * 0.5
    # gammaln(half) - gammaln(df / 2) - log(pi) / 2 == -betaln(df / 2, 1 / 2), accurate for a large df,
    # where the difference of two huge log-gammas lost its digits (from df ~ 1e5 in float32, 1e12 in float64).
    logp = (
        -_sp.betaln(finite_df * 0.5, 0.5)
        - 0.5 * _math_ops.log(finite_df)
        - _math_ops.log(scale)
        - half * _log1p_square(z / _math_ops.sqrt(finite_df))
    )
    normal = -0.5 * z * z - _math_ops.log(scale) - 0.5 * _LOG_2PI
    inside = _math_ops.logical_not(far)
    return _narrowed(_restrict(_math_ops.where(infinite, normal, logp), inside, _all(df > 0, scale > 0)), dtype)


def _half_plus(centre, s, density, bend=0.0) -> Tensor:
    """``P(Z <= s)`` of a symmetric ``Z`` where ``centre`` (``s`` next to 0): its series ``1/2 + density s (1 - bend
    s**2)`` (``density`` the density at 0, ``bend`` its curvature over 6).  The tail formulas go through ``|s|``
    and a power of it, whose gradient at 0 is 0 * inf: t.cdf and gennorm.cdf had a NaN gradient at x = loc."""
    s = _math_ops.where(centre, s, 0.0)
    return 0.5 + density * s * (1.0 - bend * s * s)


def _from_half(centre, d, density, bend=0.0) -> Tensor:
    """The inverse of ``_half_plus``: ``s`` with ``P(Z <= s) = 1/2 + d`` where ``centre`` (``d`` next to 0)."""
    s = _math_ops.where(centre, d, 0.0) / density
    return s * (1.0 + bend * s * s)


def _t_centre(nu, infinite):
    """The t density at 0 and its ``bend`` for ``_half_plus`` (the normal's where ``infinite``)."""
    density = _math_ops.where(
        infinite, 1.0 / _math.sqrt(2 * _math.pi), _math_ops.exp(-0.5 * _math_ops.log(nu) - _sp.betaln(0.5 * nu, 0.5))
    )
    return density, (1.0 + _math_ops.where(infinite, 0.0, 1.0 / nu)) / 6.0


def _t_tail(name, x, df, loc, scale, upper, log=False) -> Tensor:
    """P(T <= x) (``upper`` false) or P(T > x), from the tail ``P(T > |z|)``: ``I_{df / (df + z**2)}(df / 2, 1 / 2) / 2``
    where ``df <= 2 z**2``, else ``betaincc(1 / 2, df / 2, z**2 / (df + z**2)) / 2`` (Boost's split, as SciPy's
    ``stdtr``), so that neither argument is a difference from 1 and no probability is 1 minus one near 1.  The
    log forms take ``log1p(-tail)`` on the far side.  ``df = inf`` is the normal's.  Next to ``z = 0`` (``|z| <
    1e-5 sqrt(min(df, 1))``) the series ``_half_plus``, exact there to the last digit."""
    dtype, (x, df, loc, scale) = _args(name, x=x, df=df, loc=loc, scale=scale)
    w = _math_ops.where
    standard = _standard(x, loc, scale)
    ends = _math_ops.equal(_math_ops.abs(standard), _math.inf)  # 0 and 1 there: the formulas at a stand-in
    exact = w(ends, 1.0, standard)  # (at z = inf, df's gradient met 0 * inf)
    nan = _math_ops.not_equal(exact, exact)
    infinite = df == _math.inf
    nu = w(infinite, 1.0, df)
    centre = _math_ops.abs(w(nan, 1.0, exact)) < 1e-5 * _math_ops.sqrt(_math_ops.minimum(nu, 1.0))
    z = w(centre, 1.0, exact)  # the tail formulas away from the centre
    size = _math_ops.abs(w(nan, 0.0, z))
    huge = size > 1e150  # z**2 overflows: there the tail is its leading term (df / z**2)**(df / 2) / (df B(df/2, 1/2))
    distant = w(huge, size, 1e150)
    log_leading = (
        0.5 * nu * _math_ops.log(nu) - nu * _math_ops.log(distant) - _math_ops.log(nu) - _sp.betaln(0.5 * nu, 0.5)
    )
    leading = _math_ops.exp(log_leading)
    square = _math_ops.square(w(huge, 1.0, size))
    near = nu > 2.0 * square
    tail = 0.5 * w(
        near,
        _sp.betaincc(0.5, nu * 0.5, w(near, square / (nu + square), 0.5)),
        _sp.betainc(nu * 0.5, 0.5, w(near, 0.5, nu / (nu + square))),
    )
    tail = w(infinite, _sp.ndtr(-size), w(huge, leading, tail))  # P(T > |z|)
    far = z > 0 if not upper else z < 0  # the side where the probability is 1 - tail
    half = _half_plus(centre, -exact if upper else exact, *_t_centre(nu, infinite))
    if log:
        # the leading term's log where it underflows (no log of 0: its gradient was NaN in x and df from df ~ 2);
        # before, the log of betainc's tail, finite where it underflows (t.logsf(1e100, 5) is -1147.3, was -inf)
        leading_only = _all(huge, _math_ops.logical_not(infinite))
        far_tail = _all(
            _math_ops.logical_not(near), _math_ops.logical_not(leading_only), _math_ops.logical_not(infinite)
        )
        log_far = _math.log(0.5) + _log_betainc(nu * 0.5, 0.5, w(far_tail, nu / (nu + square), 0.5))
        log_tail = w(
            leading_only,
            log_leading,
            w(far_tail, log_far, _math_ops.log(w(_math_ops.logical_or(leading_only, far_tail), 1.0, tail))),
        )
        value = w(centre, _math_ops.log(half), w(far, _math_ops.log1p(-tail), log_tail))
    else:
        value = w(centre, half, w(far, 1.0 - tail, tail))
    value = w(nan, _math.nan, value)
    return _narrowed(
        _probability(value, standard, _math_ops.equal(standard, -_math.inf), _all(df > 0, scale > 0), upper, log), dtype
    )


def _t_cdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """Student's t CDF, through the regularized incomplete beta function (``tl.special.betainc``); differentiable
    in ``x``, ``loc`` and ``scale`` to every order and in ``df`` once.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.t.cdf(tl.tensor(1.0), 1.0)), 6)   # Cauchy: 1/2 + atan(1)/pi
    0.75
    """
    return _t_tail("t.cdf", x, df, loc, scale, upper=False)


def _t_sf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """P(T > x), accurate in the right tail (where 1 - cdf is 0).

    >>> import tensorlib as tl
    >>> float(tl.stats.t.sf(tl.tensor(1e10, "float64"), 3.0)) > 0
    True
    """
    return _t_tail("t.sf", x, df, loc, scale, upper=True)


def _t_quantile(name, q, df, loc, scale, upper) -> Tensor:
    """``ppf`` (``upper`` false) or ``isf``, from ``y = z**2 / (df + z**2)``: ``betaincinv(1/2, df/2, 2 d)`` with the
    exact ``d = |q - 1/2|`` where the tail ``p = min(q, 1 - q)`` is at least 1/4, else ``betainccinv(1/2, df/2, 2 p)``
    (neither target is a difference from 1), and ``z**2 = df y / (1 - y)``; where that ``y`` is above 1/2 (heavy
    tails: ``1 - y`` would cancel) ``x = betaincinv(df/2, 1/2, 2 p) = df / (df + z**2)`` and ``z**2 = df (1 - x) / x``.
    Where ``x`` is below 1e-100, the tail's leading term inverted.  The sign from the side of 1/2; ``df = 1`` is the
    Cauchy quantile (exact into the far tails, where ``x``
    underflows), ``df = inf`` ``ndtri``.  Next to ``q = 1/2`` (``|z| < 1e-5 sqrt(min(df, 1))``) the series ``_from_half``."""
    dtype, (q, df, loc, scale) = _args(name, q=q, df=df, loc=loc, scale=scale)
    w = _math_ops.where
    inside = _all(q >= 0, q <= 1)
    infinite = df == _math.inf
    nu = w(infinite, 1.0, df)
    density, bend = _t_centre(nu, infinite)
    d = w(inside, q, 0.5) - 0.5
    centre = _math_ops.abs(d) < 1e-5 * _math_ops.sqrt(_math_ops.minimum(nu, 1.0)) * density
    qs = w(_all(inside, _math_ops.logical_not(centre)), q, 0.25)  # the tail formulas away from the centre
    low = qs < 0.5
    p = w(low, qs, 1.0 - qs)
    central = p >= 0.25
    # The branch is chosen from p, before inverting, so that each inversion sees a stand-in where its result is not
    # used: an unused inversion far in its tail has an infinite derivative (1 / its density, 0 there), and 0 * inf
    # is NaN (the gradient of t.ppf(1e-100, 3) in q was NaN for 7.4e132).  near: z**2 <= df, i.e. p at least the
    # tail at sqrt(df), 0.5 I_{1/2}(df / 2, 1 / 2); extreme: x = df / (df + z**2) below 1e-100, from the tail's
    # leading term, that term inverted (its relative error is O(x); inf past float64's range): the chain through x
    # overflowed there (x**-1.5 times 1 / density) where the derivative itself is finite (1e249 at q = 1e-125, df 1).
    log_size = (0.5 * nu * _math_ops.log(nu) - _math_ops.log(nu) - _sp.betaln(0.5 * nu, 0.5) - _math_ops.log(p)) / nu
    near = p >= 0.5 * _math_ops.stop_gradient(_sp.betainc(nu * 0.5, 0.5, 0.5))
    extreme = _all(_math_ops.logical_not(near), _math_ops.log(nu) - 2.0 * log_size < _math.log(1e-100))
    y = w(
        central,
        _sp.betaincinv(0.5, nu * 0.5, 2.0 * w(central, _math_ops.abs(qs - 0.5), 0.25)),
        _sp.betainccinv(0.5, nu * 0.5, 2.0 * w(_all(near, _math_ops.logical_not(central)), p, 0.25)),
    )
    ys = w(near, y, 0.25)
    xs = _sp.betaincinv(nu * 0.5, 0.5, 2.0 * w(_math_ops.logical_or(near, extreme), 0.25, p))
    size = w(near, _math_ops.sqrt(nu * ys / (1.0 - ys)), _math_ops.sqrt(nu * (1.0 - xs) / xs))
    size = w(extreme, _math_ops.exp(w(extreme, log_size, 0.0)), size)
    # df = 1: the Cauchy quantile's value, with the general form's derivatives (the Cauchy form has none in df: the
    # gradient in df at df = 1 was 0, 0.755 at q = 0.2)
    stop = _math_ops.stop_gradient
    cauchy = stop(_math_ops.abs(_cauchy_quantile(qs, 1.0))) + (size - stop(size))
    size = w(infinite, -_sp.ndtri(p), w(_math_ops.equal(df, 1.0), cauchy, size))
    z = w(centre, _from_half(centre, -d if upper else d, density, bend), w(low != upper, -size, size))
    return _narrowed(w(_all(inside, df > 0, scale > 0), loc + scale * z, _math.nan), dtype)


t = SimpleNamespace(
    ppf=lambda q, df, loc=0.0, scale=1.0: _t_quantile("t.ppf", q, df, loc, scale, upper=False),
    isf=lambda q, df, loc=0.0, scale=1.0: _t_quantile("t.isf", q, df, loc, scale, upper=True),
    logpdf=_t_logpdf,
    pdf=lambda x, df, loc=0.0, scale=1.0: _math_ops.exp(_t_logpdf(x, df, loc, scale)),
    cdf=_t_cdf,
    sf=_t_sf,
    logcdf=lambda x, df, loc=0.0, scale=1.0: _t_tail("t.logcdf", x, df, loc, scale, upper=False, log=True),
    logsf=lambda x, df, loc=0.0, scale=1.0: _t_tail("t.logsf", x, df, loc, scale, upper=True, log=True),
)


# ------------------------------------------------------------------ poisson
def _poisson_logpmf(k, mu) -> Tensor:
    """log P(K = k) for a Poisson(mu) count ``k``; differentiable in ``mu`` (``k`` may be float too).
    Accurate for large counts too (Loader's saddle-point form; SciPy's textbook formula loses digits there).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.poisson.logpmf(tl.tensor(2), tl.tensor(3.0))), 6)
    -1.495922
    >>> round(float(tl.stats.poisson.logpmf(tl.tensor(1e15, "float64"), tl.tensor(1e15, "float64"))), 6)
    -18.188327
    """
    dtype, (k, mu) = _args("poisson.logpmf", k=k, mu=mu)
    inside = _all(k >= 0, _math_ops.equal(k, _math_ops.floor(k)))  # counts: SciPy gives -inf elsewhere
    safe_k = _math_ops.where(inside, k, 0.0)
    return _narrowed(_restrict(poisson_log_density(safe_k, mu), inside, mu >= 0, k), dtype)


def _probability(value, x, below, valid, upper, log=False) -> Tensor:
    """A distribution function's ``value`` (the CDF, or the survival function if ``upper``; their logs if ``log``),
    with SciPy's values off the support: that of its lower end where ``below``, of its upper end where ``x`` is inf,
    nan where a parameter is not ``valid``."""
    w = _math_ops.where
    low, high = (0.0, -_math.inf) if log else (1.0, 0.0)
    ends = w(below, low if upper else high, w(_math_ops.equal(x, _math.inf), high if upper else low, value))
    return w(valid, ends, _math.nan)


def _poisson_tail(name, k, mu, upper, log=False) -> Tensor:
    """P(K <= k) (``upper`` false) or P(K > k) as the regularized incomplete gamma of floor(k) + 1 at mu (its log,
    finite where it underflows, if ``log``)."""
    dtype, (k, mu) = _args(name, k=k, mu=mu)
    below = k < 0
    count = _math_ops.floor(_math_ops.where(below, 0.0, k)) + 1.0
    if log:
        value = _log_gamma_tail(count, mu, upper=not upper)
    else:
        value = _sp.gammainc(count, mu) if upper else _sp.gammaincc(count, mu)
    value = _math_ops.where(_math_ops.not_equal(k, k), _math.nan, value)
    return _narrowed(_probability(value, k, below, mu >= 0, upper, log), dtype)


def _poisson_cdf(k, mu) -> Tensor:
    """P(K <= k) for a Poisson(mu) count, ``gammaincc(floor(k) + 1, mu)``; differentiable in ``mu``.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.poisson.cdf(tl.tensor(2.0), tl.tensor(3.0))), 6)   # e**-3 (1 + 3 + 9/2)
    0.42319
    """
    return _poisson_tail("poisson.cdf", k, mu, upper=False)


def _poisson_sf(k, mu) -> Tensor:
    """P(K > k), ``gammainc(floor(k) + 1, mu)``: accurate in the right tail, where 1 - cdf is 0.

    >>> import tensorlib as tl
    >>> float(tl.stats.poisson.sf(tl.tensor(30.0, "float64"), tl.tensor(1.0, "float64"))) > 0
    True
    """
    return _poisson_tail("poisson.sf", k, mu, upper=True)


def _log_of(probability, complement):
    """``log(probability(...))``, as ``log1p(-complement(...))`` (same arguments) where the probability is above 1/2:
    its log is near 0 there, and the complement keeps the digits that its rounding to 1 loses."""

    def log_probability(*args, **kwargs):
        w = _math_ops.where
        p = probability(*args, **kwargs)
        big = p > 0.5  # each branch at a stand-in elsewhere: log1p(-1) or log(0) there made a NaN gradient (0 * inf)
        return w(big, _math_ops.log1p(-w(big, complement(*args, **kwargs), 0.0)), _math_ops.log(w(big, 1.0, p)))

    return log_probability


# ------------------------------------------------------------------ beta, gamma
def _beta_logpdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """Beta(a, b) log-density on (loc, loc + scale).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.beta.logpdf(tl.tensor(0.5), 2.0, 2.0)), 6)   # log 1.5
    0.405465
    """
    dtype, (x, a, b, loc, scale) = _args("beta.logpdf", x=x, a=a, b=b, loc=loc, scale=scale)
    standard = _standard(x, loc, scale)  # nan for a nan x or loc, and for inf / inf, as in SciPy
    inside = _all(standard >= 0, standard <= 1)
    zero, standard = _at_zero_end(x, loc, scale, standard)
    z = _math_ops.where(_all(inside, _math_ops.logical_not(zero)), standard, 0.5)
    # at x = loc the power form (a - 1) log z + ..., whose scale slope is the limit -(a - 1) / scale (-z / scale times
    # the infinite slope in z was 0 * inf = NaN)
    edge = _math_ops.where(zero, standard, 0.5)
    at_zero = _log_power_at_zero(edge, a - 1.0, scale) + _sp.xlog1py(b - 1.0, -edge) - _sp.betaln(a, b)
    logp = _math_ops.where(zero, at_zero, beta_log_density(z, a, b))
    return _narrowed(_restrict(logp - _math_ops.log(scale), inside, _all(a > 0, b > 0, scale > 0), standard), dtype)


def _beta_pdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """Beta density, ``exp(logpdf)``; at the ends ``z**(a - 1) / B(a, b)`` and ``(1 - z)**(b - 1) / B(a, b)``, whose
    gradients are the limits from inside (the exp's was 0 * inf = NaN for a > 1 or b > 1).

    >>> import tensorlib as tl
    >>> float(tl.grad(lambda x: tl.stats.beta.pdf(x, 2.0, 2.0))(tl.tensor(1.0, "float64")))   # (6 z (1 - z))' at 1
    -6.0
    """
    dtype, (x, a, b, loc, scale) = _args("beta.pdf", x=x, a=a, b=b, loc=loc, scale=scale)
    low, high = _math_ops.equal(x, loc), _math_ops.equal(x, loc + scale)
    at_low = _density_at_end(low, x - loc, scale, lambda z, a, b: (a - 1.0, -_sp.betaln(a, b)), a, b)
    at_high = _density_at_end(high, loc + scale - x, scale, lambda y, a, b: (b - 1.0, -_sp.betaln(a, b)), a, b)
    inner = _math_ops.where(_math_ops.logical_or(low, high), loc + 0.5 * _finite_or_one(scale), x)
    density = _math_ops.exp(_beta_logpdf(inner, a, b, loc, scale))
    return _narrowed(_density_with_ends(density, [(low, at_low), (high, at_high)]), dtype)


def _beta_tail(name, x, a, b, loc, scale, upper, log=False) -> Tensor:
    """P(X <= x) as ``I_z(a, b)``, or P(X > x) as ``betaincc(a, b, z)`` (accurate near the upper end, where
    ``1 - I_z(a, b)`` is 0, and near the lower, where ``1 - z`` would round to 1), with ``z = (x - loc) / scale``;
    SciPy's 0 and 1 off the support."""
    dtype, (x, a, b, loc, scale) = _args(name, x=x, a=a, b=b, loc=loc, scale=scale)
    w = _math_ops.where
    z = _standard(x, loc, scale)
    zero, z = _at_zero_end(x, loc, scale, z)
    # the ends 0 and 1 by the formulas, whose slope in x there is the density (inf for a < 1 at 0, b < 1 at 1): the
    # constants 0 and 1 there had slope 0
    below, over = z < 0, z > 1
    inside = w(_math_ops.logical_or(below, over), 0.5, z)
    if log:  # finite where the tail underflows; log(1 - I_z(a, b)) = log I_{1 - z}(b, a), 1 - z exact near 1
        # at the end where the tail is 0 its power form, log I_z(a, b) ~ a log z - log(a B(a, b)) (the log's shape
        # slopes there were NaN, 0 * inf; the scale's 0 * inf at z = 0): the limits from inside
        edge = zero if not upper else _math_ops.equal(z, 1.0)
        inner = w(edge, 0.5, inside)
        value = _log_betainc(b, a, 1.0 - inner, inner) if upper else _log_betainc(a, b, inner)
        power = b if upper else a
        if upper:  # 1 - z, whose scale slope z / scale is 1 / scale there
            at_end = _sp.xlogy(power, w(edge, 1.0 - z, 1.0))
        else:
            at_end = _log_power_at_zero(w(edge, z, 1.0), power, scale)
        value = w(edge, at_end - _math_ops.log(power) - _sp.betaln(a, b), value)
        ends = (0.0, -_math.inf) if upper else (-_math.inf, 0.0)
    else:
        value = _sp.betaincc(a, b, inside) if upper else _sp.betainc(a, b, inside)
        ends = (float(upper), float(not upper))
    value = w(below, ends[0], w(over, ends[1], value))
    value = w(_math_ops.not_equal(z, z), _math.nan, value)
    return _narrowed(w(_all(a > 0, b > 0, scale > 0), value, _math.nan), dtype)


def _beta_cdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """The Beta(a, b) CDF, ``betainc(a, b, (x - loc) / scale)``; differentiable in ``x``, ``loc``, ``scale`` to every
    order and in ``a``, ``b`` once.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.beta.cdf(tl.tensor(0.5), 2.0, 3.0)), 6)   # 11/16
    0.6875
    """
    return _beta_tail("beta.cdf", x, a, b, loc, scale, upper=False)


def _beta_sf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x), ``betaincc(a, b, z)``: accurate near the upper end.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.beta.sf(tl.tensor(0.5), 2.0, 3.0)), 6)
    0.3125
    """
    return _beta_tail("beta.sf", x, a, b, loc, scale, upper=True)


def _beta_ppf(q, a, b, loc=0.0, scale=1.0) -> Tensor:
    """The Beta(a, b) quantile, ``loc + scale * betaincinv(a, b, q)``.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.beta.ppf(tl.tensor(0.75, "float64"), 1.0, 2.0)), 6)
    0.5
    """
    return _quantile("beta.ppf", _sp.betaincinv, q, {"a": a, "b": b}, loc, scale, lambda a, b: _all(a > 0, b > 0))


def _beta_isf(q, a, b, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``, ``betainccinv(a, b, q)``.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.beta.isf(tl.tensor(0.25, "float64"), 1.0, 2.0)), 6)
    0.5
    """
    return _quantile("beta.isf", _sp.betainccinv, q, {"a": a, "b": b}, loc, scale, lambda a, b: _all(a > 0, b > 0))


beta = SimpleNamespace(
    ppf=_beta_ppf,
    isf=_beta_isf,
    logpdf=_beta_logpdf,
    pdf=_beta_pdf,
    cdf=_beta_cdf,
    sf=_beta_sf,
    logcdf=lambda x, a, b, loc=0.0, scale=1.0: _beta_tail("beta.logcdf", x, a, b, loc, scale, upper=False, log=True),
    logsf=lambda x, a, b, loc=0.0, scale=1.0: _beta_tail("beta.logsf", x, a, b, loc, scale, upper=True, log=True),
)


def _gamma_logpdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """Gamma log-density with shape ``a`` and ``scale`` (SciPy's parametrization).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.gamma.logpdf(tl.tensor(1.0), 1.0)), 6)   # Exponential(1) at 1
    -1.0
    """
    dtype, (x, a, loc, scale) = _args("gamma.logpdf", x=x, a=a, loc=loc, scale=scale)
    standard = _standard(x, loc, scale)  # nan for a nan x or loc, and for inf / inf, as in SciPy
    inside = _all(standard >= 0, standard < _math.inf)  # the density's limit at inf, 0 (SciPy's NaN: inf - inf)
    zero, standard = _at_zero_end(x, loc, scale, standard)
    z = _math_ops.where(_all(inside, _math_ops.logical_not(zero)), standard, 1.0)
    # at x = loc (a log of 0 for a != 1) the power form, whose gradients are the limits (they were NaN for a < 1)
    edge = _math_ops.where(zero, standard, 1.0)
    at_zero = _log_power_at_zero(edge, a - 1.0, scale) - edge - _sp.gammaln(a)
    logp = _math_ops.where(zero, at_zero, gamma_log_density(a, z)) - _math_ops.log(scale)
    return _narrowed(_restrict(logp, inside, _all(a > 0, scale > 0), standard), dtype)


def _gamma_pdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """Gamma density, ``exp(logpdf)``; at ``x = loc`` ``z**(a - 1) e**-z / Gamma(a)``, whose gradients are the limits
    from inside (the exp's was 0 * inf = NaN for a > 1).

    >>> import tensorlib as tl
    >>> float(tl.grad(lambda x: tl.stats.gamma.pdf(x, 2.0))(tl.tensor(0.0, "float64")))   # (z e**-z)' at 0
    1.0
    """
    dtype, (x, a, loc, scale) = _args("gamma.pdf", x=x, a=a, loc=loc, scale=scale)
    edge = _math_ops.equal(x, loc)
    at_loc = _density_at_end(edge, x - loc, scale, lambda z, a: (a - 1.0, -z - _sp.gammaln(a)), a)
    density = _math_ops.exp(_gamma_logpdf(_math_ops.where(edge, loc + _finite_or_one(scale), x), a, loc, scale))
    return _narrowed(_density_with_ends(density, [(edge, at_loc)]), dtype)


def _gamma_tail(name, x, a, loc, scale, upper, log=False) -> Tensor:
    dtype, (x, a, loc, scale) = _args(name, x=x, a=a, loc=loc, scale=scale)
    standard = _standard(x, loc, scale)
    below = standard < 0
    zero, standard = _at_zero_end(x, loc, scale, standard)
    # nan stays nan; off the support and at inf a stand-in, whose gradients in a are finite (log P(a, 0) was -inf)
    z = _math_ops.where(_math_ops.logical_or(below, _math_ops.equal(standard, _math.inf)), 1.0, standard)
    if log and not upper:  # log P(a, z) ~ a log z - gammaln(a + 1) at x = loc, with that form's gradients
        at_zero = _log_power_at_zero(_math_ops.where(zero, z, 1.0), a, scale)
        value = _log_gamma_tail(_math_ops.where(a > 0, a, 1.0), _math_ops.where(zero, 1.0, z), upper)
        value = _math_ops.where(zero, at_zero, value)
    elif log:  # finite where the tail underflows: gamma.logsf(800, 2.5) is -783.66
        value = _log_gamma_tail(_math_ops.where(a > 0, a, 1.0), z, upper)
    else:
        value = _sp.gammaincc(a, z) if upper else _sp.gammainc(a, z)
    return _narrowed(_probability(value, standard, below, _all(a > 0, scale > 0), upper, log), dtype)


def _gamma_cdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """The Gamma(a) CDF, ``gammainc(a, (x - loc) / scale)``; differentiable in ``x``, ``loc``, ``scale`` and ``a``.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.gamma.cdf(tl.tensor(2.0), 1.0)), 6)   # 1 - exp(-2)
    0.864665
    """
    return _gamma_tail("gamma.cdf", x, a, loc, scale, upper=False)


def _gamma_sf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x), ``gammaincc(a, (x - loc) / scale)``: accurate in the right tail.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.gamma.sf(tl.tensor(50.0, "float64"), 1.0)) * 1e22, 12)   # e**-50
    1.928749847964
    """
    return _gamma_tail("gamma.sf", x, a, loc, scale, upper=True)


def _quantile(name, inverse, q, shapes, loc, scale, valid) -> Tensor:
    """``loc + scale * inverse(*shapes, q)`` (a special function's inverse: gammaincinv, betainccinv, ...), NaN where
    ``q`` is outside [0, 1] or a parameter is invalid (``valid`` of the shapes, and ``scale > 0``)."""
    dtype, (q, *shapes, loc, scale) = _args(name, q=q, **shapes, loc=loc, scale=scale)
    w = _math_ops.where
    inside = _all(q >= 0, q <= 1)
    value = loc + scale * inverse(*shapes, w(inside, q, 0.5))
    return _narrowed(w(_all(inside, valid(*shapes), scale > 0), value, _math.nan), dtype)


def _gamma_ppf(q, a, loc=0.0, scale=1.0) -> Tensor:
    """The Gamma(a) quantile, ``loc + scale * gammaincinv(a, q)``; differentiable in ``q``, ``loc``, ``scale`` and
    ``a`` (once).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.gamma.ppf(tl.tensor(0.5, "float64"), 1.0)), 6)   # Exponential(1): log 2
    0.693147
    """
    return _quantile("gamma.ppf", _sp.gammaincinv, q, {"a": a}, loc, scale, lambda a: a > 0)


def _gamma_isf(q, a, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``, ``gammainccinv(a, q)``: accurate for a tiny ``q``.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.gamma.isf(tl.tensor(1e-30, "float64"), 1.0)), 6)
    69.077553
    """
    return _quantile("gamma.isf", _sp.gammainccinv, q, {"a": a}, loc, scale, lambda a: a > 0)


gamma = SimpleNamespace(
    ppf=_gamma_ppf,
    isf=_gamma_isf,
    logpdf=_gamma_logpdf,
    pdf=_gamma_pdf,
    cdf=_gamma_cdf,
    sf=_gamma_sf,
    logcdf=lambda x, a, loc=0.0, scale=1.0: _gamma_tail("gamma.logcdf", x, a, loc, scale, upper=False, log=True),
    logsf=lambda x, a, loc=0.0, scale=1.0: _gamma_tail("gamma.logsf", x, a, loc, scale, upper=True, log=True),
)


# ------------------------------------------------------------------ dirichlet
def _sums_to_one(total, dtype) -> Tensor:
    """``|total - 1|`` within ``sqrt(eps)`` of float32 (of float16 for float16 data): a point of the simplex or a
    probability vector normalized in float32 and then cast passes (a float32 softmax cast to float64 sums to 1 within
    5e-8; SciPy's 10 eps of float64 refuses it)."""
    return _math_ops.abs(total - 1.0) <= float(max(np.finfo(dtype).eps, np.finfo(np.float32).eps)) ** 0.5


def _dirichlet_logpdf(x, alpha) -> Tensor:
    """Dirichlet(alpha) log-density.  As in SciPy, ``x`` has the K components on its FIRST axis
    (shape (K,) or (K, N)), ``alpha`` has shape (K,).

    Off the simplex (a negative component, or components whose sum is not 1
    within ``sqrt(eps)`` of float32, of float16 for float16 data, so that an ``x``
    normalized in float32 and then cast passes) the log-density is -inf, where
    SciPy raises; a concentration that is not positive gives nan.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.dirichlet.logpdf(tl.tensor([0.2, 0.3, 0.5]), tl.tensor([1.0, 1.0, 1.0]))), 6)   # log 2!
    0.693147
    >>> float(tl.stats.dirichlet.logpdf(tl.tensor([-0.1, 0.6, 0.5]), tl.tensor([1.0, 2.0, 3.0])))
    -inf
    """
    from .ops.shape import reshape

    dtype, (x, alpha) = _args("dirichlet.logpdf", broadcast=False, x=x, alpha=alpha)
    if alpha.ndim != 1 or x.ndim == 0 or x.shape[0] != alpha.shape[0]:
        raise ValueError(
            f"dirichlet.logpdf: x must have the {alpha.shape[-1] if alpha.ndim else '?'} components "
            f"of alpha on its first axis (x shape {tuple(x.shape)} {dtype}, alpha shape "
            f"{tuple(alpha.shape)} {dtype})"
        )
    total = _reduce_ops.sum(x, axis=0)
    inside = _all(_reduce_ops.min(x, axis=0) >= 0, _sums_to_one(total, dtype))
    # A point of the simplex where x is off it (its value is replaced below); any positive value when the
    # number of components is unknown under tl.function.
    x = _math_ops.where(inside, x, 1.0 / alpha.shape[0] if alpha.shape[0] else 0.5)
    a = reshape(alpha, (-1,) + (1,) * (x.ndim - 1))
    log_norm = _reduce_ops.sum(_sp.gammaln(alpha)) - _sp.gammaln(_reduce_ops.sum(alpha))
    logp = _reduce_ops.sum(_sp.xlogy(a - 1.0, x), axis=0) - log_norm
    if alpha.shape[0] is not None:  # Loader's form where every alpha > 2 and each k / mu is in (1/199, 199)
        n = _reduce_ops.sum(alpha) - alpha.shape[0]
        near = _math_ops.abs(relative_difference(a - 1.0, n * x)) < 0.99
        region = _all(_reduce_ops.min(alpha) > 2.0, _reduce_ops.min(_math_ops.cast(near, x.dtype), axis=0) > 0)
        xs = _math_ops.where(region, x, 1.0 / alpha.shape[0])
        k = _math_ops.where(region, a, 3.0) - 1.0
        saddle = dirichlet_saddle_point(k, xs, _reduce_ops.sum(xs, axis=0) - 1.0)
        logp = _math_ops.where(region, saddle, logp)
    return _narrowed(_restrict(logp, inside, _reduce_ops.min(alpha) > 0, total), dtype)


dirichlet = SimpleNamespace(logpdf=_dirichlet_logpdf, pdf=lambda x, alpha: _math_ops.exp(_dirichlet_logpdf(x, alpha)))


# ------------------------------------------------------------------ multivariate normal
def _mvn_logpdf(x, mean, cov) -> Tensor:
    """log N(x; mean, cov) for ``x`` of shape (..., k), through the Cholesky factor of ``cov``.

    ``mean`` (..., k) and ``cov`` (..., k, k) may hold batches: the batch shapes of ``x``, ``mean`` and ``cov``
    broadcast (as in ``jax.scipy.stats``).  As in SciPy, a scalar ``cov`` is that variance for every component
    (with a scalar ``mean`` too, the univariate density, elementwise) and a 1-D ``cov`` is the diagonal; a
    variance that is not positive gives nan there (a non positive-definite matrix raises, from ``cholesky``).
    Differentiable in ``x``, ``mean`` and ``cov`` (the gradient for ``cov`` is
    symmetric: the Cholesky factor reads its symmetric part).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.multivariate_normal.logpdf(tl.zeros(2, "float64"), tl.zeros(2, "float64"),
    ...                                                  tl.eye(2, dtype="float64"))), 6)
    -1.837877
    >>> tl.stats.multivariate_normal.logpdf(tl.zeros((4, 1, 2)), tl.zeros((3, 2)), tl.eye(2)).shape   # batches
    (4, 3)
    """
    from .linalg import cholesky, solve_triangular
    from .ops._shapes import broadcast_shapes
    from .ops.linalg_ops import _diag_part, _mT
    from .ops.shape import expand_dims, reshape, shape_size

    dtype, (x, mean, cov) = _args("multivariate_normal.logpdf", broadcast=False, x=x, mean=mean, cov=cov)
    if cov.ndim < 2:
        return _narrowed(_mvn_diagonal_logpdf(x, mean, cov, dtype), dtype)
    k = cov.shape[-1]
    if x.ndim == 0 and k == 1:
        x = reshape(x, (1,))
    try:
        if x.ndim == 0 or cov.shape[-2] != k or x.shape[-1] != k or mean.shape[-1:] not in ((k,), ()):
            raise ValueError
        broadcast_shapes(x.shape[:-1], mean.shape[:-1], cov.shape[:-2])
    except ValueError:
        raise ValueError(
            f"multivariate_normal.logpdf: x (..., k), mean (..., k) and cov (..., k, k) must agree and their "
            f"batch shapes broadcast (x shape {tuple(x.shape)} {dtype}, mean shape {tuple(mean.shape)} "
            f"{dtype}, cov shape {tuple(cov.shape)} {dtype})"
        ) from None
    try:
        factor = cholesky(cov)
    except np.linalg.LinAlgError as e:
        raise _not_positive_definite("multivariate_normal.logpdf", e, dtype, x=x, mean=mean, cov=cov) from None
    centered = x - mean
    if cov.ndim == 2 and None not in centered.shape + cov.shape:  # one triangular solve for all the points
        z = solve_triangular(factor, _mT(reshape(centered, (-1, k))), lower=True)
        mahalanobis = reshape(_reduce_ops.sum(z * z, axis=0), centered.shape[:-1])
    else:  # a batched solve per point (batched covariances, or sizes unknown under tl.function)
        z = solve_triangular(factor, expand_dims(centered, -1), lower=True)
        mahalanobis = _reduce_ops.sum(z * z, axis=(-2, -1))
    if k is None:
        k = _math_ops.cast(shape_size(cov, (cov.ndim - 1,)), mahalanobis.dtype)
    log_det = _reduce_ops.sum(_math_ops.log(_diag_part(factor)), axis=-1)
    return _narrowed(-0.5 * (mahalanobis + k * _LOG_2PI) - log_det, dtype)


def _mvn_diagonal_logpdf(x, mean, variance, dtype) -> Tensor:
    """SciPy's shorthands for a diagonal covariance: ``variance`` a scalar (isotropic) or of shape (k,); with a
    scalar ``mean`` and a scalar variance, the univariate density of each element of ``x``."""
    centered = x - mean
    if mean.ndim == 0 and variance.ndim == 0:
        log_density = -0.5 * (centered * centered / variance + _math_ops.log(variance) + _LOG_2PI)
        return _restrict(log_density, True, variance > 0)
    sizes = {t.shape[-1] for t in (x, mean, variance) if t.ndim} - {None}
    if x.ndim == 0 or len(sizes) > 1:
        raise ValueError(
            f"multivariate_normal.logpdf: x (..., k), mean (..., k) and a 1-D cov (the diagonal, k) or a scalar cov "
            f"must agree (x shape {tuple(x.shape)} {dtype}, mean shape {tuple(mean.shape)} {dtype}, "
            f"cov shape {tuple(variance.shape)} {dtype})"
        )
    variances = variance + _math_ops.zeros_like(centered)
    log_density = -0.5 * (centered * centered / variances + _math_ops.log(variances) + _LOG_2PI)
    return _restrict(_reduce_ops.sum(log_density, axis=-1), True, _reduce_ops.min(variances, axis=-1) > 0)


def _multinomial_logpmf(x, n, p) -> Tensor:
    """log P(X = x) for ``n`` draws over the categories of ``p`` (on the last axis, as SciPy's ``multinomial``):
    ``log n! - sum log x_i! + sum x_i log p_i``; -inf where ``x`` is not a vector of counts summing to ``n``, NaN
    where ``n`` is not a count or ``p`` is not a probability vector: entries in [0, 1] summing to 1 within ``sqrt(eps)``
    of float32 (as ``dirichlet``'s ``x``), so that a ``p`` normalized in float32 and then cast passes.  A ``p`` that
    does not sum to 1 is NaN, SciPy's value from 1.18 (1.17 replaces its last entry by 1 minus the others, with a
    FutureWarning that says so); ``pmf`` and traced calls alike.  Differentiable in ``p``.

    >>> import tensorlib as tl
    >>> round(float(tl.stats.multinomial.logpmf(tl.tensor([1.0, 2.0]), 3, tl.tensor([0.5, 0.5]))), 6)   # log 3/8
    -0.980829
    """
    dtype, (x, n, p) = _args("multinomial.logpmf", broadcast=False, x=x, n=n, p=p)
    if (
        x.ndim == 0
        or p.ndim == 0
        or (x.shape[-1] is not None and p.shape[-1] is not None and x.shape[-1] != p.shape[-1])
    ):
        raise ValueError(
            f"multinomial.logpmf: x and p must have the categories on their last axis (x shape {tuple(x.shape)} "
            f"{dtype}, p shape {tuple(p.shape)} {dtype})"
        )
    w = _math_ops.where
    counts = _all(x >= 0, _math_ops.equal(x, _math_ops.floor(x)))
    whole = _reduce_ops.min(_math_ops.cast(counts, x.dtype), axis=-1) > 0
    inside = _all(whole, _math_ops.equal(_reduce_ops.sum(w(counts, x, 0.0), axis=-1), n))
    xs = w(counts, x, 0.0)
    logp = (
        _sp.gammaln(n + 1.0)
        - _reduce_ops.sum(_sp.gammaln(xs + 1.0), axis=-1)
        + _reduce_ops.sum(_sp.xlogy(xs, p), axis=-1)
    )
    probabilities = _all(_reduce_ops.min(p, axis=-1) >= 0, _sums_to_one(_reduce_ops.sum(p, axis=-1), dtype))
    valid = _all(_is_count(n), probabilities)
    return _narrowed(_restrict(logp, inside, valid, _reduce_ops.sum(x, axis=-1)), dtype)


multinomial = SimpleNamespace(
    logpmf=_multinomial_logpmf, pmf=lambda x, n, p: _math_ops.exp(_multinomial_logpmf(x, n, p))
)


def _mvn_cdf(x, mean, cov, *, lower_limit=None) -> Tensor:
    """P(X <= x) (componentwise) for ``X ~ N(mean, cov)``, ``x`` of shape (..., k), SciPy's ``cdf`` with the shapes
    and shorthands of ``logpdf`` (a scalar or 1-D ``cov``: independent components, a product of ``ndtr``).  A full
    ``cov`` (..., k, k) for k = 1 and 2 exact (to rounding in absolute terms; SciPy's Genz integration defaults
    to 1e-5): ``ndtr`` and the bivariate normal by Owen's T (the op ``BivariateNormalCdf``), differentiable to every
    order in ``x``, ``mean`` and ``cov`` (the density's closed forms; ``cov``'s gradient is symmetric).  For k > 2,
    Genz's integration (:func:`_genz_box`) on 32762 fixed lattice points, as SciPy's: absolute error about 1e-6 to
    1e-5, deterministic, and differentiable through the estimate (its gradients agree with the closed forms to
    about 1e-4).  ``lower_limit`` (SciPy's, broadcasting to ``x``) gives ``P(lower_limit < X <= x)``,
    the box's corners by inclusion and exclusion: negative where an odd number of components has ``lower_limit >
    x``, as SciPy's signed integral.  A NaN in ``x``, ``mean``, ``cov`` or ``lower_limit`` gives NaN, as SciPy 1.17
    gives for k = 1 and k > 2 (its k = 2 returns 0 there, which is not copied).  For k > 2 a ``cov`` that is not
    positive definite is a LinAlgError naming the method and the arguments' shapes and dtype (SciPy: a ValueError);
    for k <= 2, which need no factor, it gives NaN there.

    >>> import tensorlib as tl
    >>> cov = tl.tensor([[1.0, 0.5], [0.5, 1.0]], "float64")
    >>> round(float(tl.stats.multivariate_normal.cdf(tl.zeros(2, "float64"), tl.zeros(2, "float64"), cov)), 6)
    0.333333
    >>> round(float(tl.stats.multivariate_normal.cdf(tl.ones(2, "float64"), 0.0, cov, lower_limit=-1.0)), 6)
    0.497972
    >>> equicorrelated = 0.5 * tl.eye(4, dtype="float64") + 0.5  # the orthant's probability is 1 / (k + 1)
    >>> round(float(tl.stats.multivariate_normal.cdf(tl.zeros(4, "float64"), 0.0, equicorrelated)), 4)
    0.2
    """
    return _mvn_box("cdf", x, mean, cov, lower_limit)


def _mvn_logcdf(x, mean, cov, *, lower_limit=None) -> Tensor:
    """``log`` of :func:`_mvn_cdf` (SciPy's ``logcdf``, which is also the log of its ``cdf``).

    >>> import tensorlib as tl
    >>> round(float(tl.stats.multivariate_normal.logcdf(tl.zeros(2, "float64"), 0.0, tl.eye(2, dtype="float64"))), 6)
    -1.386294
    """
    return _math_ops.log(_mvn_box("logcdf", x, mean, cov, lower_limit))


def _mvn_box(method, x, mean, cov, lower_limit) -> Tensor:
    """``P(lower_limit < X <= x)`` (``lower_limit`` None: -inf) for ``multivariate_normal.<method>``."""
    from .ops.special_more import bivariate_normal_cdf

    where = f"multivariate_normal.{method}"
    if lower_limit is None:
        dtype, (x, mean, cov) = _args(where, broadcast=False, x=x, mean=mean, cov=cov)
        lower = None
    else:
        dtype, (x, mean, cov, lower) = _args(where, broadcast=False, x=x, mean=mean, cov=cov, lower_limit=lower_limit)
    if cov.ndim < 2:
        if not (mean.ndim == 0 and cov.ndim == 0):
            _mvn_diagonal_logpdf(x, mean, cov, dtype)  # the shapes' checks
        scale = _math_ops.sqrt(cov)
        mass = _sp.ndtr(_standardized_bound(x, mean, scale))
        if lower is not None:
            mass = mass - _sp.ndtr(_standardized_bound(lower, mean, scale))
        return _narrowed(mass if mean.ndim == 0 and cov.ndim == 0 else _reduce_ops.prod(mass, axis=-1), dtype)
    k = cov.shape[-1]
    if k is None:
        raise ValueError(
            f"{where}: the number of dimensions must be known under tl.function (cov shape "
            f"{tuple(cov.shape)} {dtype}): give the TensorSpec a known last size"
        )
    bounds = (x,) if lower is None else (x, lower)
    if (
        x.ndim == 0
        or cov.shape[-2] != k
        or x.shape[-1] != k
        or any(t.shape[-1:] not in ((k,), ()) for t in (mean, *bounds[1:]))
    ):
        given = "" if lower is None else f", lower_limit shape {tuple(lower.shape)} {dtype}"
        raise ValueError(
            f"{where}: x (..., k), mean (..., k) and cov (..., k, k) must agree (x shape "
            f"{tuple(x.shape)} {dtype}, mean shape {tuple(mean.shape)} {dtype}, cov shape {tuple(cov.shape)} {dtype}"
            f"{given})"
        )
    given = {"x": x, "mean": mean, "cov": cov, **({} if lower is None else {"lower_limit": lower})}
    # one value for every component: broadcast, so that each component can be taken apart
    mean, *bounds = (t + _math_ops.zeros_like(x) if t.ndim == 0 else t for t in (mean, *bounds))
    if k > 2:
        try:
            return _narrowed(_genz_box(bounds[0] - mean, None if lower is None else bounds[1] - mean, cov), dtype)
        except np.linalg.LinAlgError as e:  # from the Cholesky factor, the only matrix decomposition there
            raise _not_positive_definite(where, e, dtype, **given) from None
    if k == 1:
        scale = _math_ops.sqrt(cov[..., 0, 0])
        masses = [_sp.ndtr(_standardized_bound(b[..., 0], mean[..., 0], scale)) for b in bounds]
        return _narrowed(masses[0] if lower is None else masses[0] - masses[1], dtype)
    first, second = _math_ops.sqrt(cov[..., 0, 0]), _math_ops.sqrt(cov[..., 1, 1])
    # The symmetric part, as logpdf's Cholesky; a component of variance 0 is a constant, independent of the other
    # (rho read 0 / 0: NaN, where the diagonal cov's product steps).
    scales = first * second
    degenerate = _math_ops.equal(scales, 0.0)
    rho = _math_ops.where(
        degenerate, 0.0, 0.5 * (cov[..., 0, 1] + cov[..., 1, 0]) / _math_ops.where(degenerate, 1.0, scales)
    )
    h = [_standardized_bound(b[..., 0], mean[..., 0], first) for b in bounds]
    k_ = [_standardized_bound(b[..., 1], mean[..., 1], second) for b in bounds]
    probability = bivariate_normal_cdf(h[0], k_[0], rho)
    if lower is not None:  # the box's corners
        probability = (
            probability
            - bivariate_normal_cdf(h[1], k_[0], rho)
            - bivariate_normal_cdf(h[0], k_[1], rho)
            + bivariate_normal_cdf(h[1], k_[1], rho)
        )
    return _narrowed(probability, dtype)


def _not_positive_definite(where: str, error, dtype, **arguments) -> np.linalg.LinAlgError:
    """The error for a ``cov`` that is not positive definite in ``multivariate_normal.<method>``, naming it and the
    arguments' shapes and dtypes (``Cholesky``'s own message named neither).  Under ``tl.function`` the factor is
    taken when the graph runs, and the error is ``Cholesky``'s."""
    shapes = ", ".join(f"{name} shape {tuple(t.shape)} {dtype}" for name, t in arguments.items())
    return np.linalg.LinAlgError(f"{where}: cov is not positive definite ({shapes}); {error}")


_GENZ_LATTICE = (16381, 1)  # lattice points (a prime) and random shifts: 2 * 16381 points with the antithetic ones


@_functools.lru_cache(maxsize=None)
def _genz_points(dims: int) -> np.ndarray:
    """The integration points of :func:`_genz_box` in ``[0, 1]^dims``, (points, dims): a Richtmyer rank-1 lattice (the
    square roots of the first primes) under a few fixed random shifts, folded by the tent ``|2w - 1|`` and each point
    with its antithetic ``1 - w`` (Genz's MVNDST and SciPy's ``qmvn`` rule).  Fixed, so that the cdf is a deterministic, differentiable function."""
    count, shifts = _GENZ_LATTICE
    primes = [p for p in range(2, 8 * dims + 20) if all(p % q for q in range(2, int(p**0.5) + 1))][:dims]
    lattice = np.outer(np.arange(1, count + 1), np.sqrt(primes)) % 1.0
    offsets = np.random.default_rng(20261203).random((shifts, 1, dims))
    points = np.abs(2.0 * ((lattice[None] + offsets) % 1.0) - 1.0).reshape(-1, dims)  # the tent: periodic integrands
    points = np.concatenate([points, 1.0 - points])
    points.flags.writeable = False  # shared by every call
    return points


def _genz_box(upper, lower, cov) -> Tensor:
    """``P(lower < Z <= upper)`` for ``Z ~ N(0, cov)`` of k > 2 components (``lower`` None: -inf), by Genz's
    separation of variables (Genz 1992; SciPy's ``qmvn``): the components ordered by their marginal mass (the most
    constrained first), ``cov``'s Cholesky factor ``L``, and the mean over the points of :func:`_genz_points` of
    ``prod_i (Phi(b_i) - Phi(a_i))``, where ``a_i``/``b_i`` are the bounds less ``sum_{j<i} L_ij y_j`` over ``L_ii``
    and ``y_j`` is drawn by ``ndtri`` inside the previous interval.  An interval above 0 is drawn from its mirror
    image below, where ``ndtr`` keeps its relative precision.  The estimate is a smooth function of the bounds and of
    ``cov``; its derivatives are taken through it.  Where ``lower > upper`` in an odd number of components the
    probability is negative (SciPy's signed integral)."""
    from .linalg import cholesky
    from .ops import array as _array
    from .ops.linalg_ops import _diag_part, _mT

    w = _math_ops.where
    k = cov.shape[-1]
    cov = 0.5 * (cov + _mT(cov))
    if lower is None:
        lower, sign = _math_ops.full_like(upper, -_math.inf), 1.0
    else:
        swapped = _math_ops.greater(lower, upper)
        lower, upper = w(swapped, upper, lower), w(swapped, lower, upper)
        sign = _reduce_ops.prod(w(swapped, -1.0, 1.0), axis=-1)
    # every argument to the batch shape (..., k), cov to (..., k, k)
    zeros = _math_ops.zeros_like(upper[..., :1]) + _math_ops.zeros_like(_diag_part(cov)[..., :1])
    upper, lower = upper + zeros, lower + zeros
    cov = cov + zeros[..., None]
    scale = _math_ops.sqrt(_diag_part(cov))
    mass = _math_ops.stop_gradient(
        _sp.ndtr(_standardized_bound(upper, 0.0, scale)) - _sp.ndtr(_standardized_bound(lower, 0.0, scale))
    )
    order = _array.argsort(mass, axis=-1, stable=True)
    upper, lower = _array.take_along_axis(upper, order, -1), _array.take_along_axis(lower, order, -1)
    cov = _array.take_along_axis(_array.take_along_axis(cov, order[..., :, None], -2), order[..., None, :], -1)
    factor = cholesky(cov)
    points = _genz_points(k - 1)
    product, draws = 1.0, []
    for i in range(k):
        shift = sum(factor[..., i, j, None] * draws[j] for j in range(i)) if i else 0.0
        pivot = factor[..., i, i, None]
        ends = []
        for bound in (lower[..., i, None], upper[..., i, None]):
            infinite = _math_ops.equal(_math_ops.abs(bound), _math.inf)  # its own value, with no derivative
            ends.append(w(infinite, bound, (w(infinite, 0.0, bound) - shift) / pivot))
        mirrored = _math_ops.greater(ends[0], 0.0)
        low, high = w(mirrored, -ends[1], ends[0]), w(mirrored, -ends[0], ends[1])
        below = _sp.ndtr(low)
        width = _sp.ndtr(high) - below
        product = product * width
        if i < k - 1:
            inside = _math_ops.greater(width, 0.0)  # an empty interval: the product is 0 from here, draw anything
            # the mirror image of a draw at w is the draw at 1 - w: the same point as unmirrored, so the integrand
            # stays smooth in the points where an interval crosses 0
            u = w(inside, below + w(mirrored, 1.0 - points[:, i], points[:, i]) * width, 0.5)
            draw = _sp.ndtri(u)
            draws.append(w(mirrored, -draw, draw))
    return sign * _reduce_ops.mean(product, axis=-1)


def _standardized_bound(x, mean, scale) -> Tensor:
    """``(x - mean) / scale`` for a cdf's bound, ``x`` itself (with no derivative in ``mean`` and ``scale``) where
    ``x`` is infinite: the cdf is constant there, but ``inf / scale``'s derivative ``-inf / scale**2`` times the
    density 0 read NaN (the gradient of the finite components' probability was lost)."""
    infinite = _math_ops.equal(_math_ops.abs(x), _math.inf)
    return _math_ops.where(infinite, x, (_math_ops.where(infinite, 0.0, x) - mean) / scale)


multivariate_normal = SimpleNamespace(
    logpdf=_mvn_logpdf,
    pdf=lambda x, mean, cov: _math_ops.exp(_mvn_logpdf(x, mean, cov)),
    cdf=_mvn_cdf,
    logcdf=_mvn_logcdf,
)


# ------------------------------------------------------------------ location-scale families with closed forms
def _bound(where, first, x, shapes, defaults, args, kwargs) -> tuple:
    """SciPy's call of a distribution's method: ``x`` (or ``q``, ``k``: ``first``; none if None), then the shape parameters and
    ``defaults``' names (``loc``, ``scale``) by position or by name; ``_args``' ``(dtype, tensors)`` in that order.
    Too many, unknown, repeated or missing arguments are one TypeError naming ``where``."""
    names = (*shapes, *defaults)
    if len(args) > len(names):
        takes = f"{first} and at most {len(names)} more" if first else f"at most {len(names)}"
        raise TypeError(f"{where}: takes {takes} ({', '.join(names)}), got {len(args)}")
    values = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in values:
            why = (
                "twice" if key in values else f"unexpected (it takes {', '.join(((first,) if first else ()) + names)})"
            )
            raise TypeError(f"{where}: argument {key!r} {why}")
        values[key] = value
    missing = [n for n in shapes if n not in values]
    if missing:
        raise TypeError(f"{where}: missing the shape parameter(s) {missing}")
    leading = {first: x} if first else {}  # none for the summaries (mean, var, entropy): only the parameters
    return _args(where, **leading, **{n: values.get(n, defaults.get(n)) for n in names})


def _from_the_end(edge, offset, scale) -> Tensor:
    """``offset / scale`` where ``edge`` (the standardized distance from the support's end, 0 there), 1 elsewhere,
    with no derivative in the scale: it is 0 for every scale there, and the densities' powers of it have infinite
    derivatives (0 * inf was NaN)."""
    return _math_ops.where(edge, offset / _math_ops.stop_gradient(scale), 1.0)


def _density_at_end(edge, offset, scale, near, *shapes) -> Tensor:
    """The density at an end of the support where ``edge`` (``offset`` the distance from it, 0 there), in its power form
    ``t**k exp(log_rest) / scale`` with ``near(t, *shapes) -> (k, log_rest)`` of the standardized ``t``
    (``_from_the_end``): its gradients are the limits from inside (0, a constant or inf as ``k`` > 1, = 1, < 1), where
    ``exp(logpdf)``'s were ``exp(-inf)`` times an infinite derivative, NaN.  One form for ``_family``'s lower ends,
    gamma's and beta's.  In the shapes, where ``k > 0`` (the density 0 for every nearby shape) the slope is 0; where
    ``k <= 0`` it is the limit from inside of ``density * (log t dk + d log_rest)``: ``-inf`` for a shape in ``k``
    (``log t`` is ``-inf``), ``density * d log_rest`` for one only in the rest (``_positive_at_end``)."""
    t = _from_the_end(edge, offset, scale)
    power, log_rest = near(t, *shapes)
    if not isinstance(power, Tensor):  # a constant power: no shape derivative through it
        return t**power * _math_ops.exp(log_rest) / scale
    w = _math_ops.where
    rises = power > 0
    t_up, t_flat = w(rises, t, 1.0), w(rises, 1.0, t)  # each branch at a stand-in elsewhere (0 * inf in the other)
    power, log_rest = near(t_up, *shapes)
    density = w(rises, t_up**power * _math_ops.exp(log_rest), _positive_at_end(near, t_flat, *shapes))
    return density / scale


def _positive_at_end(near, t, *shapes) -> Tensor:
    """``exp(k log t + log_rest)`` of ``near(t, *shapes)`` where ``k <= 0`` at ``t = 0`` (positive: inf for k < 0), with
    the gradients ``density * d(k log t + log_rest)``, the log's derivatives summed before the product: the chain rule
    through ``exp`` multiplied each path by the infinite density first, and ``-inf`` (``log t dk``) plus ``+inf``
    (``d log_rest``, gamma's ``-digamma(a)`` for a < 1.46) was NaN, where the limit from inside is ``-inf``."""

    def log_density(t, *shapes):
        power, log_rest = near(t, *shapes)
        return _sp.xlogy(power, t) + log_rest

    def slope(i):
        """``density * d log_density / d(input i)`` with the gradient ``density * (slope_i slope_j + d slope_i / d(input
        j))``, the two summed before the product: the Hessian at t = 0 was inf * inf + inf * (-polygamma(1, a)), NaN,
        where the limit is +inf (gamma.pdf's in a at x = loc, a < 1)."""

        def pieces(t, *shapes):
            value, vjp_fn = _vjp(log_density, t, *shapes)
            return value, vjp_fn(_math_ops.ones_like(value))[i]

        @_custom_gradient
        def run(t, *shapes):
            value, s_i = pieces(t, *shapes)
            density = _math_ops.exp(value)

            def grad_fn(dy):
                # each slope_j summed over its paths first (log t - digamma(a), -inf), then times slope_i: the product
                # taken path by path was inf + (-inf)
                _, vjp_log = _vjp(log_density, t, *shapes)
                _, vjp_slope = _vjp(lambda *xs: pieces(*xs)[1], t, *shapes)
                ones = _math_ops.ones_like(value)
                zero = _math_ops.equal(dy, 0.0)
                out = []
                for s_j, ds in zip(vjp_log(ones), vjp_slope(ones)):
                    both = None if s_j is None else s_j * _math_ops.stop_gradient(s_i) + (0.0 if ds is None else ds)
                    out.append(None if both is None else _math_ops.where(zero, 0.0, dy * density * both))
                return out

            return density * s_i, grad_fn

        return run

    @_custom_gradient
    def positive(t, *shapes):
        value, vjp_fn = _vjp(log_density, t, *shapes)
        density = _math_ops.exp(value)

        def grad_fn(dy):
            slopes = vjp_fn(_math_ops.ones_like(value))
            zero = _math_ops.equal(dy, 0.0)  # a zero cotangent (a jacobian's other rows) gives 0, not 0 * inf
            return [
                None if s is None else _math_ops.where(zero, 0.0, dy * slope(i)(t, *shapes))
                for i, s in enumerate(slopes)
            ]

        return density, grad_fn

    full = _math_ops.stop_gradient(_math_ops.zeros_like(near(t, *shapes)[1] + t))  # each slope per element
    return positive(t + full, *(s + full for s in shapes))


def _finite_or_one(scale) -> Tensor:
    """``scale``, or 1 where it is infinite: a stand-in point ``loc + scale`` inside the support must be finite, so
    that its density is the standardized one at 0 (SciPy's pdf for an infinite scale is 0), not inf / inf = NaN."""
    return _math_ops.where(_math_ops.equal(_math_ops.abs(scale), _math.inf), 1.0, scale)


def _density_with_ends(density, ends) -> Tensor:
    """``density`` (``exp(logpdf)``), replaced by ``value`` at each ``(edge, value)`` of ``ends`` where it is not NaN."""
    for edge, value in ends:
        density = _math_ops.where(_all(edge, _math_ops.equal(density, density)), value, density)
    return density


def _at_zero_end(x, loc, scale, z) -> tuple:
    """``(edge, z)``: where ``z`` is 0 (``x == loc``, the lower end of a support ``[0, ...)``), ``z`` recomputed as ``(x -
    loc) / scale`` with no derivative in the scale.  That derivative, ``-z / scale``, is 0 there, and times a method's
    infinite slope in ``z`` (a density like ``z**k`` with ``k < 0``: gamma with a < 1, weibull_min with c < 1) it was
    0 * inf = NaN, where the limit from inside is 0 (the distribution functions) or comes from ``_log_power_at_zero``."""
    w = _math_ops.where
    edge = _math_ops.equal(z, 0.0)
    return edge, w(edge, (w(edge, x, loc) - loc) / _math_ops.stop_gradient(scale), z)


def _log_power_at_zero(z, power, scale) -> Tensor:
    """``power log z`` at ``z = 0`` (``_at_zero_end``'s), the leading term of a log-density (``power = k``) or a log
    distribution function (``k + 1``) whose density is ``~ z**k`` there: +-inf (0 for a power 0) with the limits from
    inside as gradients, in ``x`` and ``loc`` ``+-power / (z scale)``, in the scale ``-power / scale`` (the derivative of
    ``power log((x - loc) / scale)``; ``-z / scale`` times ``power / z`` was 0 * inf = NaN), in the shapes ``log z``
    times the power's derivative."""
    log_scale = _math_ops.log(_finite_or_one(scale))
    return _sp.xlogy(power, z) + power * (_math_ops.stop_gradient(log_scale) - log_scale)


def _family(
    name,
    low,
    high,
    stand_in,
    logpdf,
    cdf=None,
    sf=None,
    ppf=None,
    isf=None,
    logcdf=None,
    logsf=None,
    shapes=(),
    valid=None,
    near_low=None,
    periodic=False,
    moments=None,
    entropy=None,
):
    """A SimpleNamespace of SciPy's methods for the distribution ``name`` of ``loc + scale * Z``, ``Z``'s support
    ``[low, high]``: each formula takes the standardized ``z = (x - loc) / scale`` (``stand_in`` where ``z`` is off
    the support, so no gradient meets a NaN) and the shape parameters ``shapes`` (``valid`` checks them), and returns
    the standard distribution's value; off the support every method takes SciPy's end values, NaN for invalid
    parameters or a NaN ``x``.  ``logcdf``/``logsf`` default to the log of ``cdf``/``sf``; ``ppf``/``isf`` take ``q``
    in (0, 1) and give the ends at 0 and 1, NaN outside.  ``near_low(z, *shapes) -> (k, log_rest)``, the density as
    ``z**k exp(log_rest)``, gives ``pdf`` at the lower end ``z = low`` of a support that has one (where ``exp(logpdf)``
    is ``exp(-inf)`` and its gradient ``0 * inf``): its gradients there are the limits from inside (0, a constant or
    inf as ``k`` > 1, = 1, < 1; rayleigh.pdf's at 0 is 1).  The density at an infinite ``x`` is its limit, 0, where SciPy's
    formula reads inf - inf (chi2, weibull_min, f, loggamma: NaN), as SciPy's own norm.pdf and rayleigh.pdf give;
    NaN for a ``periodic`` one (vonmises), which has no limit there."""
    w = _math_ops.where
    log = _math_ops.log

    def prepare(method, first, x, args, kwargs):
        where = f"{name}.{method}"
        dtype, (x, *params, loc, scale) = _bound(where, first, x, shapes, {"loc": 0.0, "scale": 1.0}, args, kwargs)
        ok = scale > 0
        if valid is not None:
            ok = _all(ok, valid(*params))
        return dtype, x, loc, scale, params, ok

    def at_x(method, formula, below, above, minus_log_scale=False, exp=False):
        def run(x, *args, **kwargs):
            dtype, x, loc, scale, params, ok = prepare(method, "x", x, args, kwargs)
            z = _standard(x, loc, scale)
            zero = None
            if low == 0.0:
                zero, z = _at_zero_end(x, loc, scale, z)
            # the ends at +-inf, each formula's limit (they read inf - inf there): the distribution functions' 0 and 1,
            # and the density's 0 (chi2.pdf, weibull_min.pdf (c > 1), gamma.pdf, f.pdf and loggamma.pdf at inf were
            # NaN as in SciPy, whose rayleigh.pdf, norm.pdf and invgamma.pdf there give that limit)
            under = _math_ops.logical_or(z < low, _math_ops.equal(z, -_math.inf))
            over = _math_ops.logical_or(z > high, _math_ops.equal(z, _math.inf))
            inside = _math_ops.logical_not(_math_ops.logical_or(under, over))
            edge = None
            if exp and near_low is not None:
                edge = _all(inside, _math_ops.equal(z, low))
                inside = _math_ops.logical_and(inside, _math_ops.logical_not(edge))
            log_end = zero is not None and near_low is not None and method in ("logpdf", "logcdf")
            if log_end:  # the power form there, the formula at a stand-in (its slope at 0 met 0 * inf)
                inside = _math_ops.logical_and(inside, _math_ops.logical_not(zero))
            value = formula(w(inside, z, stand_in), *params)
            if log_end:
                zs = w(zero, z, 1.0)  # a stand-in elsewhere: log 0 made the shapes' gradients 0 * inf
                k, log_rest = near_low(zs, *params)
                at_end = _log_power_at_zero(zs, k, scale) + log_rest if method == "logpdf" else None
                if at_end is None:  # log P(Z <= z) ~ (k + 1) log z
                    at_end = _log_power_at_zero(zs, k + 1.0, scale)
                value = w(zero, at_end, value)
            if minus_log_scale:
                value = value - log(scale)
            value = w(under, below, w(over, above, value))
            if exp:
                value = _math_ops.exp(value)
            if edge is not None:
                value = w(edge, _density_at_end(edge, x - loc, scale, near_low, *params), value)
            return _narrowed(w(ok, w(_math_ops.not_equal(z, z), _math.nan, value), _math.nan), dtype)

        run.__name__ = run.__qualname__ = f"{name}_{method}"
        return run

    def at_q(method, formula, at_zero, at_one):
        # at an end of finite value the formula itself, for its gradient there (expon.ppf at 0: 1 / pdf(0) = 1, where
        # the constant end gave 0); at an infinite end a stand-in (its value is the end, its gradient inf * 0)
        def run(q, *args, **kwargs):
            dtype, q, loc, scale, params, ok = prepare(method, "q", q, args, kwargs)
            inside = _all(q >= 0 if _math.isfinite(at_zero) else q > 0, q <= 1 if _math.isfinite(at_one) else q < 1)
            z = w(inside, formula(w(inside, q, 0.5), *params), w(_math_ops.equal(q, 0), at_zero, at_one))
            z = w(_all(q >= 0, q <= 1), z, _math.nan)
            return _narrowed(w(ok, loc + scale * z, _math.nan), dtype)

        run.__name__ = run.__qualname__ = f"{name}_{method}"
        return run

    end = _math.nan if periodic else -_math.inf
    methods = dict(
        logpdf=at_x("logpdf", logpdf, end, end, minus_log_scale=True),
        pdf=at_x("pdf", logpdf, end, end, minus_log_scale=True, exp=True),
    )
    if cdf is not None:  # a density without a closed-form distribution function (vonmises) has none
        methods.update(
            cdf=at_x("cdf", cdf, 0.0, 1.0),
            sf=at_x("sf", sf, 1.0, 0.0),
            logcdf=at_x("logcdf", logcdf or _log_of(cdf, sf), -_math.inf, 0.0),
            logsf=at_x("logsf", logsf or _log_of(sf, cdf), 0.0, -_math.inf),
        )
    if ppf is not None:
        methods.update(ppf=at_q("ppf", ppf, low, high), isf=at_q("isf", isf, high, low))
        methods.update(_intervals(methods["ppf"]))
    if moments is not None:
        methods.update(_summaries(name, shapes, valid, moments, entropy, scaled=True))
    return SimpleNamespace(**methods)


def _cauchy_quantile(q, sign):
    """``sign * tan(pi (q - 1/2))``, from the nearer of three places so that no argument rounds next to a pole or
    a zero: ``tan(pi d)`` with the exact ``d = q - 1/2`` in the middle half, ``-1 / tan(pi q)`` below 1/4 and
    ``1 / tan(pi (1 - q))`` above 3/4 (``1 - q`` exact there)."""
    w = _math_ops.where
    low, high = q < 0.25, q > 0.75
    middle = _math_ops.logical_not(_math_ops.logical_or(low, high))
    below = -1.0 / _elementwise.tan(_math.pi * w(low, q, 0.125))
    above = 1.0 / _elementwise.tan(_math.pi * w(high, 1.0 - q, 0.125))
    centre = _elementwise.tan(_math.pi * w(middle, q - 0.5, 0.0))
    return sign * w(low, below, w(high, above, centre))


def _laplace_tail(z):
    return _math_ops.exp(-_math_ops.abs(z))


def _atan2_over_pi(y, x):
    return _elementwise.arctan2(y, x) / _math.pi


uniform = _family(
    "uniform",
    0.0,
    1.0,
    0.5,
    logpdf=lambda z: _math_ops.zeros_like(z),
    cdf=lambda z: z,
    sf=lambda z: 1.0 - z,
    ppf=lambda q: q,
    isf=lambda q: 1.0 - q,
    logsf=lambda z: _math_ops.log1p(-z),
    moments=lambda *_: (0.5, 1.0 / 12.0, 0.0, -1.2),
    entropy=lambda *_: 0.0,
)
expon = _family(
    "expon",
    0.0,
    _math.inf,
    1.0,
    logpdf=lambda z: -z,
    near_low=lambda z: (0.0, -z),
    cdf=lambda z: -_math_ops.expm1(-z),
    sf=lambda z: _math_ops.exp(-z),
    logsf=lambda z: -z,
    logcdf=lambda z: _nn.log1mexp(z),
    ppf=lambda q: -_math_ops.log1p(-q),
    isf=lambda q: -_math_ops.log(q),
    moments=lambda *_: (1.0, 1.0, 2.0, 6.0),
    entropy=lambda *_: 1.0,
)
laplace = _family(
    "laplace",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=lambda z: -_math_ops.abs(z) - _math.log(2.0),
    # exp(-|z|) on both sides: exp(-z) of the side not taken overflowed, and its gradient was 0 * inf = NaN
    cdf=lambda z: _math_ops.where(z < 0, 0.5 * _laplace_tail(z), 1.0 - 0.5 * _laplace_tail(z)),
    sf=lambda z: _math_ops.where(z > 0, 0.5 * _laplace_tail(z), 1.0 - 0.5 * _laplace_tail(z)),
    logcdf=lambda z: _math_ops.where(z < 0, z - _math.log(2.0), _math_ops.log1p(-0.5 * _laplace_tail(z))),
    logsf=lambda z: _math_ops.where(z > 0, -z - _math.log(2.0), _math_ops.log1p(-0.5 * _laplace_tail(z))),
    ppf=lambda q: _math_ops.where(q < 0.5, _math_ops.log(2.0 * q), -_math_ops.log(2.0 - 2.0 * q)),
    isf=lambda q: _math_ops.where(q < 0.5, -_math_ops.log(2.0 * q), _math_ops.log(2.0 - 2.0 * q)),
    moments=lambda *_: (0.0, 2.0, 0.0, 3.0),
    entropy=lambda *_: _math.log(2.0) + 1.0,
)
logistic = _family(
    "logistic",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=lambda z: -_math_ops.abs(z) - 2.0 * _math_ops.log1p(_math_ops.exp(-_math_ops.abs(z))),
    cdf=lambda z: _sp.expit(z),
    sf=lambda z: _sp.expit(-z),
    logcdf=lambda z: -_nn.softplus(-z),
    logsf=lambda z: -_nn.softplus(z),
    ppf=lambda q: _sp.logit(q),
    isf=lambda q: -_sp.logit(q),
    moments=lambda *_: (0.0, _math.pi**2 / 3.0, 0.0, 1.2),
    entropy=lambda *_: 2.0,
)
cauchy = _family(
    "cauchy",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=lambda z: -_math.log(_math.pi) - _log1p_square(z),
    cdf=lambda z: _atan2_over_pi(1.0, -z),  # 1/2 + atan(z)/pi, without cancelling in the left tail
    sf=lambda z: _atan2_over_pi(1.0, z),
    ppf=lambda q: _cauchy_quantile(q, 1.0),
    isf=lambda q: _cauchy_quantile(q, -1.0),
    moments=lambda *_: (_math.nan, _math.nan, _math.nan, _math.nan),
    entropy=lambda *_: _math.log(4.0 * _math.pi),
)
pareto = _family(
    "pareto",
    1.0,
    _math.inf,
    2.0,
    logpdf=lambda z, b: _math_ops.log(b) - (b + 1.0) * _math_ops.log(z),
    cdf=lambda z, b: -_math_ops.expm1(-b * _math_ops.log(z)),
    sf=lambda z, b: _math_ops.exp(-b * _math_ops.log(z)),
    logsf=lambda z, b: -b * _math_ops.log(z),
    ppf=lambda q, b: _math_ops.exp(-_math_ops.log1p(-q) / b),
    isf=lambda q, b: _math_ops.exp(-_math_ops.log(q) / b),
    shapes=("b",),
    valid=lambda b: b > 0,
)
# The von Mises distribution function: below this kappa the Fourier series, from it the expansion of its tail.
_VONMISES_SERIES_BELOW = 50.0
_VONMISES_SERIES_TERMS = 80  # its Bessel ratios I_n / I_0 ~ exp(-n**2 / (2 kappa)) are below 1e-17 from n ~ 62
_VONMISES_TAIL_TERMS = 30


def _vonmises_parts(kappa):
    """What ``_vonmises_reduced_cdf`` needs of ``kappa`` alone, computed once for any number of ``z`` (a quantile search
    takes ~20 of them: each took the 80-step Bessel recurrence and 30 incomplete gammas again, vonmises.ppf 1 s): the
    series' coefficients ``I_n / I_0 / n`` (n = 1 .. 79, the backward recurrence's ratios multiplied up) and the tail's
    ``C(2j, j) / 4**j Gamma(j + 1/2) / (2 (2 kappa)**(j + 1/2))`` (j = 1 .. 29), each along a new last axis."""
    from .ops.array import cumprod
    from .ops.creation import tensor
    from .ops.shape import expand_dims, stack

    w = _math_ops.where
    large = kappa >= _VONMISES_SERIES_BELOW
    k = w(large, 1.0, kappa)
    ratio, ratios = 0.0, []
    for n in range(_VONMISES_SERIES_TERMS - 1, 0, -1):
        ratio = k / (2.0 * n + k * ratio)  # I_n / I_(n-1); no 1 / kappa: its gradient at kappa = 0 is finite
        ratios.append(_math_ops.zeros_like(k) + ratio)
    n = tensor(np.arange(1.0, _VONMISES_SERIES_TERMS))
    coefficients = cumprod(stack(ratios[::-1], axis=-1), axis=-1) / n
    k = w(large, kappa, _VONMISES_SERIES_BELOW)
    j = np.arange(1.0, _VONMISES_TAIL_TERMS)
    weights = tensor(
        0.5
        * np.exp(
            [_math.lgamma(2 * i + 1) - 2 * _math.lgamma(i + 1) - i * _math.log(4.0) + _math.lgamma(i + 0.5) for i in j]
        )
    )
    tail = weights * _math_ops.exp(-tensor(j + 0.5) * expand_dims(_math_ops.log(2.0 * k), -1))
    return large, coefficients, k, tail


def _vonmises_reduced_cdf(z, kappa, parts=None):
    """``P(Z <= z)`` for ``z`` in [-pi, pi].  Below kappa = 50 SciPy's (Hill's) series ``1/2 + z / (2 pi) + sum_n
    I_n(kappa) / I_0(kappa) sin(n z) / (n pi)``, its Bessel ratios by the backward recurrence, 80 terms (SciPy's 28 +
    kappa / 2 - 100 / (kappa + 5) left 1e-13 at kappa = 49).  From 50, where SciPy takes the normal approximation
    ``ndtr(sqrt(2 / pi) / i0e(kappa) sin(z / 2))`` (3e-6 relative off at kappa = 50, 1e-6 at 1000), the tail
    ``P(Z <= -|z|) = int_w^1 e**(-2 kappa v**2) / sqrt(1 - v**2) dv / (pi i0e(kappa))``, ``w = sin(|z| / 2)``, with
    ``1 / sqrt(1 - v**2) = sum_j C(2j, j) v**(2j) / 4**j`` integrated term by term to infinity (Watson's lemma): ``sum_j
    C(2j, j) / 4**j Gamma(j + 1/2) Q(j + 1/2, 2 kappa w**2) / (2 (2 kappa)**(j + 1/2))``; its j = 0 term is ``erfc``
    of the signed ``sqrt(2 kappa) sin(z / 2)``, smooth through z = 0.  Both are within 1e-15 absolute (mpmath).  ``parts``: ``_vonmises_parts(kappa)``, if
    computed already."""
    from .ops.creation import tensor
    from .ops.shape import expand_dims

    w = _math_ops.where
    large, coefficients, k, tail_weights = _vonmises_parts(kappa) if parts is None else parts
    n = tensor(np.arange(1.0, _VONMISES_SERIES_TERMS))
    total = _reduce_ops.sum(coefficients * _math_ops.sin(expand_dims(z, -1) * n), axis=-1)
    series = 0.5 + z / (2 * _math.pi) + total / _math.pi
    # in [0, 1] as SciPy's (the sum strays by an ulp at the ends), with the gradient of the sum itself there (the
    # clip's is 0: the gradient in z at z = pi was 0, for the density)
    series = series + _math_ops.stop_gradient(_math_ops.clip(series, 0.0, 1.0) - series)
    signed = _math_ops.sqrt(2.0 * k) * _math_ops.sin(0.5 * z)
    lower = z <= 0
    norm = _math.pi * _sp.i0e(k)
    tail = 0.5 * _math.sqrt(_math.pi) / _math_ops.sqrt(2.0 * k) * _sp.erfc(w(lower, -signed, signed))
    orders = tensor(np.arange(1.0, _VONMISES_TAIL_TERMS) + 0.5)
    tail = tail + _reduce_ops.sum(tail_weights * _sp.gammaincc(orders, expand_dims(signed * signed, -1)), axis=-1)
    tail = tail / norm
    return w(large, w(lower, tail, 1.0 - tail), series)


def _vonmises_probability(z, kappa, upper):
    """SciPy's ``vonmises.cdf`` (``sf`` if ``upper``) at any ``z``: the turns ``n = round(z / (2 pi))`` count whole, so
    ``cdf(z + 2 pi) = cdf(z) + 1`` and ``sf = 1 - cdf`` (below 0 past pi), each from the reduced ``z - 2 pi n`` (the sf
    as the cdf at ``-(z - 2 pi n)``, not 1 minus it)."""
    turns = _math_ops.round(z / (2 * _math.pi))
    reduced = z - 2 * _math.pi * turns
    return _vonmises_reduced_cdf(-reduced, kappa) - turns if upper else _vonmises_reduced_cdf(reduced, kappa) + turns


_VONMISES_BISECTIONS = 16  # [-pi, pi] to 1e-4, then Newton's steps (quadratic) to float64's precision
_VONMISES_NEWTON_STEPS = 4


def _vonmises_quantile(q, kappa, upper):
    """The ``z`` in [-pi, pi] with ``cdf(z) = q`` (``sf(z) = q`` if ``upper``: from the sf itself, a tiny ``q`` keeps its
    digits): bisection of the distribution function on [-pi, pi], then Newton's steps kept inside the bracket (SciPy
    has no closed form: its ppf is a generic root search).  No loop on values, so traced calls agree.  The gradients by
    the implicit function theorem, ``dz/dq = 1 / pdf(z)`` and ``dz/dkappa = -dF/dkappa / pdf(z)``: one last Newton step
    from the stopped root with the density stopped, ``z - (F(z, kappa) - q) / pdf(z)``, whose value is the root."""
    w, stop = _math_ops.where, _math_ops.stop_gradient

    def probability(z, k, parts=None):
        return _vonmises_reduced_cdf(-z, k, parts) if upper else _vonmises_reduced_cdf(z, k, parts)

    def density(z, k):
        return _math_ops.exp(k * (_math_ops.cos(z) - 1.0) - _math.log(2 * _math.pi) - _math_ops.log(_sp.i0e(k)))

    k0, q0 = stop(kappa), stop(q)
    parts = _vonmises_parts(k0)  # kappa's share of the distribution function, once for the ~20 evaluations
    low = _math_ops.zeros_like(q0 + k0) - _math.pi
    high = low + 2 * _math.pi
    for _ in range(_VONMISES_BISECTIONS):
        middle = 0.5 * (low + high)
        value = probability(middle, k0, parts)
        short = value > q0 if upper else value < q0  # the root is above middle
        low, high = w(short, middle, low), w(short, high, middle)
    z = 0.5 * (low + high)
    sign = -1.0 if upper else 1.0
    for _ in range(_VONMISES_NEWTON_STEPS):
        z = _math_ops.clip(z - sign * (probability(z, k0, parts) - q0) / density(z, k0), low, high)
    z = stop(z)
    return z - sign * (probability(z, kappa) - q) / stop(density(z, kappa))


_VONMISES_MOMENTS_BELOW = 300.0  # kappa: the Fourier series below, the asymptotic series from here
_VONMISES_TERMS = 200  # n = 1 .. 200: I_n(kappa) / I_0(kappa) < exp(-n**2 / (2 kappa)) is below 1e-29 past it


def _vonmises_moments(kappa):
    """SciPy's ``vonmises`` mean, variance, skewness and excess kurtosis (its generic integrals over [-pi, pi]): 0, ``E
    z**2``, 0, ``E z**4 / (E z**2)**2 - 3``.  Below kappa = 300 from the Fourier series of ``z**2`` and ``z**4`` on
    [-pi, pi], ``E cos(n z) = I_n(kappa) / I_0(kappa)``: ``E z**2 = pi**2 / 3 + 4 sum (-1)**n r_n / n**2`` and ``E z**4
    = pi**4 / 5 + sum (-1)**n (8 pi**2 / n**2 - 48 / n**4) r_n``; from there (where the sums cancel to 1 / kappa) the
    Laplace expansions in ``u = 1 / kappa``, ``E z**2 = u (1 + u / 2 + 13 u**2 / 24 + 7 u**3 / 8 + 1.855 u**4)`` and
    the kurtosis ``u + 2 u**2 + 127 u**3 / 24 + 16.75 u**4`` (the last terms fitted to mpmath's quadrature at kappa =
    1e3 .. 4e3; 1e-12 and 1e-7 relative at kappa = 300, mpmath).  Differentiable in ``kappa``."""
    from .ops.creation import tensor
    from .ops.shape import expand_dims

    w = _math_ops.where
    series = kappa < _VONMISES_MOMENTS_BELOW
    k = w(series, kappa, 1.0)
    n = tensor(np.arange(1.0, _VONMISES_TERMS + 1.0))
    signed = tensor((-1.0) ** np.arange(1.0, _VONMISES_TERMS + 1.0))
    ratios = _sp.ive(n, expand_dims(k, -1)) / expand_dims(_sp.i0e(k), -1) * signed
    second = _math.pi**2 / 3.0 + 4.0 * _reduce_ops.sum(ratios / (n * n), axis=-1)
    fourth = _math.pi**4 / 5.0 + _reduce_ops.sum((8.0 * _math.pi**2 / (n * n) - 48.0 / n**4) * ratios, axis=-1)
    u = 1.0 / w(series, _VONMISES_MOMENTS_BELOW, kappa)
    variance = w(series, second, u * (1.0 + u * (0.5 + u * (13.0 / 24.0 + u * (7.0 / 8.0 + 1.855 * u)))))
    kurtosis = w(series, fourth / (second * second) - 3.0, u * (1.0 + u * (2.0 + u * (127.0 / 24.0 + 16.75 * u))))
    return 0.0, variance, 0.0, kurtosis


def _vonmises_entropy(kappa):
    """``log(2 pi I0(kappa)) - kappa I1(kappa) / I0(kappa)``, with the Bessel functions' exponentials scaled out."""
    return _math.log(2 * _math.pi) + _math_ops.log(_sp.i0e(kappa)) + kappa * (1.0 - _sp.i1e(kappa) / _sp.i0e(kappa))


_WRAPCAUCHY_TERMS = 4000  # Li4(c) = sum c**n / n**4 to n = 4000: the rest is below 1 / (3 4000**3) = 5e-12


def _wrapcauchy_moments(c):
    """SciPy's ``wrapcauchy`` mean, variance, skewness and excess kurtosis (its generic integrals over [0, 2 pi]): the
    density is symmetric about pi, and ``y = z - pi`` has ``E cos(n y) = (-c)**n``, so the Fourier series of ``y**2``
    and ``y**4`` give ``E y**2 = pi**2 / 3 + 4 Li2(c)`` and ``E y**4 = pi**4 / 5 + 8 pi**2 Li2(c) - 48 Li4(c)``
    (``Li2(c)`` is SciPy's ``spence(1 - c)``; ``Li4`` its sum).  Differentiable in ``c``."""
    from .ops.creation import tensor
    from .ops.shape import expand_dims

    li2 = _sp.spence(1.0 - c)
    n = tensor(np.arange(1.0, _WRAPCAUCHY_TERMS + 1.0))
    li4 = _reduce_ops.sum(expand_dims(c, -1) ** n / n**4, axis=-1)
    variance = _math.pi**2 / 3.0 + 4.0 * li2
    fourth = _math.pi**4 / 5.0 + 8.0 * _math.pi**2 * li2 - 48.0 * li4
    return _math.pi, variance, 0.0, fourth / (variance * variance) - 3.0


vonmises = _family(
    "vonmises",
    -_math.inf,
    _math.inf,
    0.0,
    # kappa cos z - log(2 pi I0(kappa)), with I0's exponential scaled out: no overflow for a large kappa
    logpdf=lambda z, kappa: kappa * (_math_ops.cos(z) - 1.0) - _math.log(2 * _math.pi) - _math_ops.log(_sp.i0e(kappa)),
    cdf=lambda z, kappa: _vonmises_probability(z, kappa, upper=False),
    sf=lambda z, kappa: _vonmises_probability(z, kappa, upper=True),
    ppf=lambda q, kappa: _vonmises_quantile(q, kappa, upper=False),
    isf=lambda q, kappa: _vonmises_quantile(q, kappa, upper=True),
    shapes=("kappa",),
    valid=lambda kappa: kappa >= 0,  # SciPy's: kappa = 0 is the uniform distribution on the circle
    periodic=True,
    moments=_vonmises_moments,
    entropy=_vonmises_entropy,
)


def _wrapcauchy_half_angle(h, c):
    """wrapcauchy's ``P(Z <= 2 h)`` for ``h`` in [0, pi], ``atan2((1 + c) sin h, (1 - c) cos h) / pi``."""
    return _elementwise.arctan2((1.0 + c) * _math_ops.sin(h), (1.0 - c) * _math_ops.cos(h)) / _math.pi


_PI_LOW = 1.2246467991473532e-16  # pi - float64(pi)


def _wrapcauchy_quantile(q, c, sign):
    """``2 atan2((1 - c) sin(pi q), sign (1 + c) cos(pi q))``: tan(z / 2) = tan(pi q) / cr, the ppf (``sign`` 1) or the isf
    (-1: ``cos(pi (1 - q)) = -cos(pi q)``, no ``1 - q`` rounded), with ``sin`` and ``cos`` of ``pi min(q, 1 - q)`` (``1 -
    q`` exact there), so that ``q = 1`` gives the end exactly (``sin(pi)`` is 1.2e-16)."""
    w = _math_ops.where
    upper = q > 0.5
    r = _math.pi * w(upper, 1.0 - q, q)
    cos = w(upper, -1.0, 1.0) * _math_ops.cos(r)
    return 2.0 * _elementwise.arctan2((1.0 - c) * _math_ops.sin(r), sign * (1.0 + c) * cos)


wrapcauchy = _family(
    "wrapcauchy",
    0.0,
    2 * _math.pi,
    1.0,
    logpdf=lambda z, c: (
        _math_ops.log1p(-c * c) - _math.log(2 * _math.pi) - _math_ops.log1p(c * c - 2.0 * c * _math_ops.cos(z))
    ),
    # (1 / pi) atan(cr tan(z / 2)), cr = (1 + c) / (1 - c), as one atan2 over [0, 2 pi] (SciPy's two branches meet
    # tan's pole at z = pi); the sf from the other end, 2 pi - z (with pi's rounding error), so that it keeps its digits
    cdf=lambda z, c: _wrapcauchy_half_angle(0.5 * z, c),
    sf=lambda z, c: _wrapcauchy_half_angle((_math.pi - 0.5 * z) + _PI_LOW, c),
    ppf=lambda q, c: _wrapcauchy_quantile(q, c, 1.0),
    isf=lambda q, c: _wrapcauchy_quantile(q, c, -1.0),
    shapes=("c",),
    valid=lambda c: _all(c > 0, c < 1),
    moments=_wrapcauchy_moments,
    entropy=lambda c: _math.log(2 * _math.pi) + _math_ops.log1p(-c * c),
)


def _gennorm_density_at_0(beta):
    return _math_ops.exp(_math_ops.log(0.5 * beta) - _sp.gammaln(1.0 / beta))


def _gennorm_probability(z, beta, upper):
    """P(Z <= z) (P(Z > z) if ``upper``) from the tail P(Z > |z|) = Q(1/beta, |z|**beta) / 2; next to 0 (``|z|**beta``
    below 1e-20, the series' next term) ``_half_plus``: the gradient of ``|z|**beta`` at 0 met Q's infinite one."""
    w = _math_ops.where
    s = -z if upper else z
    centre = _math_ops.abs(s) ** beta < 1e-20
    zs = w(centre, 1.0, s)
    big, power = _huge_power(_math_ops.abs(zs), beta)
    tail = w(big, 0.0, 0.5 * _sp.gammaincc(1.0 / beta, power))
    return w(centre, _half_plus(centre, s, _gennorm_density_at_0(beta)), w(zs > 0, 1.0 - tail, tail))


def _gennorm_log_probability(z, beta, upper):
    """``log P(Z <= z)`` (``log P(Z > z)`` if ``upper``): in the far tail ``log(1/2) + log Q(1/beta, |z|**beta)``,
    finite where Q underflows; on the other side ``log1p(-tail)``."""
    w = _math_ops.where
    s = -z if upper else z
    centre = _math_ops.abs(s) ** beta < 1e-20
    zs = w(centre, 1.0, s)
    big, power = _huge_power(_math_ops.abs(zs), beta)
    log_tail = w(big, -_math.inf, _math.log(0.5) + _log_gamma_tail(1.0 / beta, power, upper=True))
    near = w(big, 0.0, _math_ops.log1p(-0.5 * _sp.gammaincc(1.0 / beta, power)))
    return w(centre, _math_ops.log(_half_plus(centre, s, _gennorm_density_at_0(beta))), w(zs > 0, near, log_tail))


def _gennorm_log_density(z, beta):
    """``log(beta / 2) - gammaln(1 / beta) - |z|**beta``; at the cusp ``z = 0`` of a ``beta < 1`` the power is 0 with no
    gradient (its derivative in ``z`` is infinite there, and times the scale's ``dz = 0`` made the scale's gradient NaN
    for -1 / scale; in ``x`` and ``loc`` it is 0 there, as ``abs``'s at 0)."""
    w = _math_ops.where
    size = _math_ops.abs(z)
    cusp = _all(_math_ops.equal(size, 0.0), beta < 1)
    big, power = _huge_power(w(cusp, 1.0, size), beta)
    return w(big, -_math.inf, _math_ops.log(0.5 * beta) - _sp.gammaln(1.0 / beta) - w(cusp, 0.0, power))


def _gennorm_quantile(q, beta, sign):
    """``sign`` times the quantile: ``|z| = gammainccinv(1/beta, 2 p)**(1/beta)`` with the tail ``p = min(q, 1 - q)``;
    next to 1/2 ``_from_half``."""
    w = _math_ops.where
    density = _gennorm_density_at_0(beta)
    centre = _math_ops.abs((q - 0.5) / density) ** beta < 1e-20
    qs = w(centre, 0.25, q)
    low = qs < 0.5
    size = _sp.gammainccinv(1.0 / beta, 2.0 * w(low, qs, 1.0 - qs)) ** (1.0 / beta)
    return sign * w(centre, _from_half(centre, q - 0.5, density), w(low, -size, size))


gennorm = _family(
    "gennorm",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=lambda z, beta: _gennorm_log_density(z, beta),
    cdf=lambda z, beta: _gennorm_probability(z, beta, upper=False),
    sf=lambda z, beta: _gennorm_probability(z, beta, upper=True),
    logcdf=lambda z, beta: _gennorm_log_probability(z, beta, upper=False),
    logsf=lambda z, beta: _gennorm_log_probability(z, beta, upper=True),
    ppf=lambda q, beta: _gennorm_quantile(q, beta, 1.0),
    isf=lambda q, beta: _gennorm_quantile(q, beta, -1.0),
    shapes=("beta",),
    valid=lambda beta: beta > 0,
)
chi2 = _family(
    "chi2",
    0.0,
    _math.inf,
    1.0,
    logpdf=lambda z, df: gamma_log_density(0.5 * df, 0.5 * z) - _math.log(2.0),
    near_low=lambda z, df: (0.5 * df - 1.0, -0.5 * z - 0.5 * df * _math.log(2.0) - _sp.gammaln(0.5 * df)),
    cdf=lambda z, df: _sp.gammainc(0.5 * df, 0.5 * z),
    sf=lambda z, df: _sp.gammaincc(0.5 * df, 0.5 * z),
    logcdf=lambda z, df: _log_gamma_tail(0.5 * df, 0.5 * z, upper=False),
    logsf=lambda z, df: _log_gamma_tail(0.5 * df, 0.5 * z, upper=True),
    ppf=lambda q, df: 2.0 * _sp.gammaincinv(0.5 * df, q),
    isf=lambda q, df: 2.0 * _sp.gammainccinv(0.5 * df, q),
    shapes=("df",),
    valid=lambda df: df > 0,
)


def _positive(z):
    """``(z > 0, z there and 1 elsewhere)``: the argument of a formula with a log or a reciprocal of ``z`` that is
    taken only inside, so the side not taken meets no log of 0 (a NaN gradient)."""
    positive = z > 0
    return positive, _math_ops.where(positive, z, 1.0)


def _overflows(u) -> Tensor:
    """Where ``exp(u)`` overflows (``u`` above log of float64's largest, 709.78), with no gradient: a formula there is
    taken at a stand-in, its value the limit, because the derivative of the overflowed exponential (inf) met a zero
    one (0 * inf: NaN gradients where the value had saturated to 0 or 1)."""
    return _math_ops.equal(_math_ops.exp(_math_ops.stop_gradient(u)), _math.inf)


def _huge_power(size, c):
    """``(big, power)``: where ``size**c`` overflows (``big``), and the power elsewhere (1 at a stand-in there, so that its
    gradient stays finite): gennorm's ``|z|**beta`` and weibull_min's ``z**c`` at ``x = 1e300`` were inf, and their
    distribution functions' and densities' gradients 0 * inf = NaN where the values are 0 and 1."""
    big = _math_ops.equal(_math_ops.stop_gradient(size) ** _math_ops.stop_gradient(c), _math.inf)
    return big, _math_ops.where(big, 1.0, size) ** c


def _log1mexp_exp(u):
    """``log(1 - exp(-exp(u)))``: ``u - exp(u) / 2`` (its series, exact to a rounding there) where ``u < -20``,
    where ``exp(u)`` underflows or ``log1mexp`` of it loses digits (gumbel_r.logsf(800) was -inf for -800); ``u``
    clamped at 700, where the value is 0 (exp(u) overflowed, and the gradient was inf * 0 = NaN)."""
    w = _math_ops.where
    small = u < -20.0
    us = w(small, u, 0.0)
    return w(
        small, us - 0.5 * _math_ops.exp(us), _nn.log1mexp(_math_ops.exp(w(small, 0.0, _math_ops.minimum(u, 700.0))))
    )


def _log_power(z, c):
    """``c log z`` (``log(z**c)``) for ``z > 0``, -inf at 0."""
    positive, zs = _positive(z)
    return _math_ops.where(positive, c * _math_ops.log(zs), -_math.inf)


def _gumbel_log_density(z):
    """``-z - exp(-z)``; -inf where ``exp(-z)`` overflows (not inf - inf), from a stand-in there (a clamp of ``z`` gave
    the pdf's gradient 0 * exp(800) = NaN at x = -1e6)."""
    far = _overflows(-z)
    zs = _math_ops.where(far, 0.0, z)
    return _math_ops.where(far, -_math.inf, -zs - _math_ops.exp(-zs))


gumbel_r = _family(
    "gumbel_r",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=_gumbel_log_density,
    # z clamped where exp(-z) overflows (the values are 0 and 1 there; the gradient was 0 * inf = NaN)
    cdf=lambda z: _math_ops.exp(-_math_ops.exp(-_math_ops.maximum(z, -700.0))),
    sf=lambda z: -_math_ops.expm1(-_math_ops.exp(-_math_ops.maximum(z, -700.0))),
    logcdf=lambda z: -_math_ops.exp(-z),
    logsf=lambda z: _log1mexp_exp(-z),
    ppf=lambda q: -_math_ops.log(-_math_ops.log(q)),
    isf=lambda q: -_math_ops.log(-_math_ops.log1p(-q)),
    moments=lambda *_: (_EULER, _math.pi**2 / 6.0, 12.0 * _math.sqrt(6.0) * _ZETA3 / _math.pi**3, 2.4),
    entropy=lambda *_: _EULER + 1.0,
)
gumbel_l = _family(
    "gumbel_l",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=lambda z: _gumbel_log_density(-z),
    cdf=lambda z: -_math_ops.expm1(-_math_ops.exp(_math_ops.minimum(z, 700.0))),
    sf=lambda z: _math_ops.exp(-_math_ops.exp(_math_ops.minimum(z, 700.0))),
    logcdf=_log1mexp_exp,
    logsf=lambda z: -_math_ops.exp(z),
    ppf=lambda q: _math_ops.log(-_math_ops.log1p(-q)),
    isf=lambda q: _math_ops.log(-_math_ops.log(q)),
    moments=lambda *_: (-_EULER, _math.pi**2 / 6.0, -12.0 * _math.sqrt(6.0) * _ZETA3 / _math.pi**3, 2.4),
    entropy=lambda *_: _EULER + 1.0,
)


def _weibull_power(z, c):
    """``z**c``: inf with no gradient where it overflows (``_huge_power``)."""
    big, power = _huge_power(z, c)
    return _math_ops.where(big, _math.inf, power)


def _lognorm_at(z, s, formula, at_zero):
    """``formula(log(z) / s)`` for ``z > 0``, ``at_zero`` at 0 (the log's stand-in keeps its gradient finite)."""
    positive, zs = _positive(z)
    return _math_ops.where(positive, formula(_math_ops.log(zs) / s), at_zero)


lognorm = _family(
    "lognorm",
    0.0,
    _math.inf,
    1.0,
    logpdf=lambda z, s: _lognorm_at(
        z, s, lambda u: -0.5 * u * u - s * u - _math_ops.log(s) - 0.5 * _LOG_2PI, -_math.inf
    ),
    cdf=lambda z, s: _lognorm_at(z, s, _sp.ndtr, 0.0),
    sf=lambda z, s: _lognorm_at(z, s, lambda u: _sp.ndtr(-u), 1.0),
    logcdf=lambda z, s: _lognorm_at(z, s, _sp.log_ndtr, -_math.inf),
    logsf=lambda z, s: _lognorm_at(z, s, lambda u: _sp.log_ndtr(-u), 0.0),
    ppf=lambda q, s: _math_ops.exp(s * _sp.ndtri(q)),
    isf=lambda q, s: _math_ops.exp(-s * _sp.ndtri(q)),
    shapes=("s",),
    valid=lambda s: s > 0,
)
weibull_min = _family(
    "weibull_min",
    0.0,
    _math.inf,
    1.0,
    logpdf=lambda z, c: _math_ops.log(c) + _sp.xlogy(c - 1.0, z) - _weibull_power(z, c),
    near_low=lambda z, c: (c - 1.0, _math_ops.log(c) - z**c),
    cdf=lambda z, c: -_math_ops.expm1(-_weibull_power(z, c)),
    sf=lambda z, c: _math_ops.exp(-_weibull_power(z, c)),
    logcdf=lambda z, c: _log1mexp_exp(_log_power(z, c)),
    logsf=lambda z, c: -_weibull_power(z, c),
    ppf=lambda q, c: (-_math_ops.log1p(-q)) ** (1.0 / c),
    isf=lambda q, c: (-_math_ops.log(q)) ** (1.0 / c),
    shapes=("c",),
    valid=lambda c: c > 0,
)


def _halfnorm_logsf(z):
    """``log erfc(z / sqrt 2)``: ``log1p(-erf(z / sqrt 2))`` below 1, where ``log_ndtr(-z) + log 2`` rounded to 0
    (halfnorm.logsf(1e-20) was 0 for -7.98e-21), ``log_ndtr(-z) + log 2`` above (finite where erfc underflows)."""
    near = z < 1.0
    return _math_ops.where(
        near,
        _math_ops.log1p(-_sp.erf(_math_ops.where(near, z, 0.0) / _math.sqrt(2.0))),
        _sp.log_ndtr(-_math_ops.where(near, 1.0, z)) + _math.log(2.0),
    )


halfnorm = _family(
    "halfnorm",
    0.0,
    _math.inf,
    1.0,
    logpdf=lambda z: 0.5 * _math.log(2.0 / _math.pi) - 0.5 * z * z,
    near_low=lambda z: (0.0, 0.5 * _math.log(2.0 / _math.pi) - 0.5 * z * z),
    cdf=lambda z: _sp.erf(z / _math.sqrt(2.0)),
    sf=lambda z: _sp.erfc(z / _math.sqrt(2.0)),
    logsf=lambda z: _halfnorm_logsf(z),
    ppf=lambda q: _math.sqrt(2.0) * _sp.erfinv(q),
    isf=lambda q: _math.sqrt(2.0) * _sp.erfcinv(q),
    moments=lambda *_: (
        _math.sqrt(2.0 / _math.pi),
        1.0 - 2.0 / _math.pi,
        _math.sqrt(2.0) * (4.0 - _math.pi) / (_math.pi - 2.0) ** 1.5,
        8.0 * (_math.pi - 3.0) / (_math.pi - 2.0) ** 2,
    ),
    entropy=lambda *_: 0.5 * _math.log(_math.pi / 2.0) + 0.5,
)
rayleigh = _family(
    "rayleigh",
    0.0,
    _math.inf,
    1.0,
    # -inf at z = inf, as SciPy (log z - z**2 / 2 reads inf - inf there)
    logpdf=lambda z: _math_ops.where(z < _math.inf, _math_ops.log(z) - 0.5 * z * z, -_math.inf),
    near_low=lambda z: (1.0, -0.5 * z * z),
    cdf=lambda z: -_math_ops.expm1(-0.5 * z * z),
    sf=lambda z: _math_ops.exp(-0.5 * z * z),
    logcdf=lambda z: _log1mexp_exp(_log_power(z, 2.0) - _math.log(2.0)),
    logsf=lambda z: -0.5 * z * z,
    ppf=lambda q: _math_ops.sqrt(-2.0 * _math_ops.log1p(-q)),
    isf=lambda q: _math_ops.sqrt(-2.0 * _math_ops.log(q)),
    moments=lambda *_: (
        _math.sqrt(_math.pi / 2.0),
        (4.0 - _math.pi) / 2.0,
        2.0 * (_math.pi - 3.0) * _math.sqrt(_math.pi) / (4.0 - _math.pi) ** 1.5,
        -(6.0 * _math.pi**2 - 24.0 * _math.pi + 16.0) / (4.0 - _math.pi) ** 2,
    ),
    entropy=lambda *_: _EULER / 2.0 + 1.0 - 0.5 * _math.log(2.0),
)


def _invgamma_at(z, formula, at_zero):
    """``formula(1 / z)`` for ``z > 0``, ``at_zero`` at 0."""
    positive, zs = _positive(z)
    return _math_ops.where(positive, formula(1.0 / zs), at_zero)


invgamma = _family(
    "invgamma",
    0.0,
    _math.inf,
    1.0,
    # the Gamma(a) density of 1 / z (Loader's form, accurate for a large a) times |d(1/z)/dz| = 1 / z**2
    # at z = inf (y = 0) -inf, as SciPy: (a - 1) log y + 2 log y read inf - inf there for a < 1
    logpdf=lambda z, a: _invgamma_at(
        z,
        lambda y: _math_ops.where(y > 0, gamma_log_density(a, y) + 2.0 * _math_ops.log(y), -_math.inf),
        -_math.inf,
    ),
    cdf=lambda z, a: _invgamma_at(z, lambda y: _sp.gammaincc(a, y), 0.0),
    sf=lambda z, a: _invgamma_at(z, lambda y: _sp.gammainc(a, y), 1.0),
    logcdf=lambda z, a: _invgamma_at(z, lambda y: _log_gamma_tail(a, y, upper=True), -_math.inf),
    logsf=lambda z, a: _invgamma_at(z, lambda y: _log_gamma_tail(a, y, upper=False), 0.0),
    ppf=lambda q, a: 1.0 / _sp.gammainccinv(a, q),
    isf=lambda q, a: 1.0 / _sp.gammaincinv(a, q),
    shapes=("a",),
    valid=lambda a: a > 0,
)


def _beta_below(a, b, x, y):
    """``P(B <= x)`` for ``B ~ Beta(a, b)`` given ``x`` and its complement ``y = 1 - x``, each exact: ``betainc(a, b,
    x)`` where ``x <= y``, else ``betaincc(b, a, y)``, so the argument next to 1 is never the one used (f.sf(1e-20,
    0.5, 0.5) was 1 for 0.9999946: dfd / (dfn z + dfd) rounded to 1)."""
    w = _math_ops.where
    near = x <= y
    return w(near, _sp.betainc(a, b, w(near, x, 0.25)), _sp.betaincc(b, a, w(near, 0.25, y)))


def _f_beta(z, dfn, dfd, formula):
    """``formula(dfn z / (dfn z + dfd), dfd / (dfn z + dfd))``: the Beta(dfn / 2, dfd / 2) variable of an F one and
    its complement, each as its own quotient (neither is 1 minus the other).  At z = 0 (x = loc) ``z dfn / dfd`` with the
    ratio's gradient stopped (every method is constant in the dfs there), and its complement 1 minus it: the quotient's
    derivative in its denominator, ``-num / den**2``, is 0 there and met the betainc's infinite slope (dfn < 2), 0 * inf
    = NaN in every argument's gradient."""
    w = _math_ops.where
    edge = _math_ops.equal(z, 0.0)
    zs = w(edge, 1.0, z)
    total = dfn * zs + dfd
    near = z * _math_ops.stop_gradient(dfn / dfd)
    return formula(w(edge, near, dfn * zs / total), w(edge, 1.0 - near, dfd / total))


f = _family(
    "f",
    0.0,
    _math.inf,
    1.0,
    # log(dfn z + dfd) as log(dfd) + log1p(dfn z / dfd): the (dfn + dfd) / 2 log dfd terms cancel exactly
    logpdf=lambda z, dfn, dfd: (
        0.5 * dfn * _math_ops.log(dfn / dfd)
        + _sp.xlogy(0.5 * dfn - 1.0, z)
        - 0.5 * (dfn + dfd) * _math_ops.log1p(dfn * z / dfd)
        - _sp.betaln(0.5 * dfn, 0.5 * dfd)
    ),
    # at x = 0 the density's power form (its gradients were NaN there: exp(-inf) times xlogy's infinite derivative)
    near_low=lambda z, dfn, dfd: (
        0.5 * dfn - 1.0,
        0.5 * dfn * _math_ops.log(dfn / dfd)
        - 0.5 * (dfn + dfd) * _math_ops.log1p(dfn * z / dfd)
        - _sp.betaln(0.5 * dfn, 0.5 * dfd),
    ),
    cdf=lambda z, dfn, dfd: _f_beta(z, dfn, dfd, lambda y, c: _beta_below(0.5 * dfn, 0.5 * dfd, y, c)),
    sf=lambda z, dfn, dfd: _f_beta(z, dfn, dfd, lambda c, y: _beta_below(0.5 * dfd, 0.5 * dfn, y, c)),
    logcdf=lambda z, dfn, dfd: _f_beta(z, dfn, dfd, lambda y, c: _log_betainc(0.5 * dfn, 0.5 * dfd, y, c)),
    logsf=lambda z, dfn, dfd: _f_beta(z, dfn, dfd, lambda c, y: _log_betainc(0.5 * dfd, 0.5 * dfn, y, c)),
    # z = (dfd / dfn) y / (1 - y), y the Beta quantile and 1 - y its complement's, each inverted on its own
    ppf=lambda q, dfn, dfd: (
        dfd / dfn * _sp.betaincinv(0.5 * dfn, 0.5 * dfd, q) / _sp.betainccinv(0.5 * dfd, 0.5 * dfn, q)
    ),
    isf=lambda q, dfn, dfd: (
        dfd / dfn * _sp.betainccinv(0.5 * dfn, 0.5 * dfd, q) / _sp.betaincinv(0.5 * dfd, 0.5 * dfn, q)
    ),
    shapes=("dfn", "dfd"),
    # finite too, as SciPy: with an infinite df the formulas read inf / inf, and cdf (dfn = inf) and sf (dfd = inf)
    # were 1, logsf and logcdf -inf, where the other methods were NaN
    valid=lambda dfn, dfd: _all(dfn > 0, dfd > 0, dfn < _math.inf, dfd < _math.inf),
)


def _loggamma_log_density(z, c):
    """``c z - exp(z) - gammaln(c)``: the Gamma(c) density of ``y = exp(z)`` in Loader's form, plus ``log y = z``
    (the textbook terms cancel for a large ``c``); the textbook form where ``exp(z)`` underflows."""
    w = _math_ops.where
    moderate = _math_ops.abs(z) < 700.0
    huge = _overflows(z)  # -inf there, from a stand-in (exp(z)'s infinite derivative made the gradient NaN)
    y = _math_ops.exp(w(moderate, z, 0.0))
    textbook = c * z - _math_ops.exp(w(_math_ops.logical_or(moderate, huge), 0.0, z)) - _sp.gammaln(c)
    return w(huge, -_math.inf, w(moderate, gamma_log_density(c, y) + z, textbook))


def _loggamma_probability(z, c, method):
    """``cdf`` (``P(c, e**z)``), ``sf``, ``logcdf`` or ``logsf`` of loggamma; where ``e**z`` underflows (z < -700) from
    ``log P = c z - gammaln(c + 1)`` (P(c, y) = y**c / Gamma(c + 1) (1 - O(y))): P(c, 0) was 0 there, and
    loggamma.cdf(-800, 0.001) 0 for 0.4496, logsf(-800, 0.6) 0 for -3.9e-209."""
    w = _math_ops.where
    tiny = z < -700.0
    huge = _overflows(z)  # P = 1 there, its ends from a stand-in (exp(z) = inf made the loc and scale gradients NaN)
    log_p = w(tiny, c * w(tiny, z, 0.0) - _sp.gammaln(c + 1.0), -1.0)
    y = _math_ops.exp(w(_math_ops.logical_or(tiny, huge), 0.0, z))
    if method == "cdf":
        value, end = w(tiny, _math_ops.exp(log_p), _sp.gammainc(c, y)), 1.0
    elif method == "sf":
        value, end = w(tiny, -_math_ops.expm1(log_p), _sp.gammaincc(c, y)), 0.0
    elif method == "logcdf":
        value, end = w(tiny, log_p, _log_gamma_tail(c, y, upper=False)), 0.0
    else:
        value, end = w(tiny, _nn.log1mexp(-log_p), _log_gamma_tail(c, y, upper=True)), -_math.inf
    return w(huge, end, value)


def _loggamma_quantile(q, c, inverse, lower):
    """``log(inverse(c, q))``, with ``inverse`` gammaincinv (``lower``) or gammainccinv; where that quantile
    underflows (q below about Gamma(c + 1) 1e-300**c) its leading term ``(log P + gammaln(c + 1)) / c`` (P(c, y) =
    y**c / Gamma(c + 1) (1 - O(y))), P being ``q`` or ``1 - q``: the log of the underflowed quantile was -inf."""
    w = _math_ops.where
    y = inverse(c, q)
    tiny = y < 1e-280
    log_p = _math_ops.log(q) if lower else _math_ops.log1p(-q)
    leading = (log_p + _sp.gammaln(c + 1.0)) / c
    return w(tiny, leading, _math_ops.log(w(tiny, 1.0, y)))


loggamma = _family(
    "loggamma",
    -_math.inf,
    _math.inf,
    0.0,
    logpdf=_loggamma_log_density,
    cdf=lambda z, c: _loggamma_probability(z, c, "cdf"),
    sf=lambda z, c: _loggamma_probability(z, c, "sf"),
    logcdf=lambda z, c: _loggamma_probability(z, c, "logcdf"),
    logsf=lambda z, c: _loggamma_probability(z, c, "logsf"),
    ppf=lambda q, c: _loggamma_quantile(q, c, _sp.gammaincinv, lower=True),
    isf=lambda q, c: _loggamma_quantile(q, c, _sp.gammainccinv, lower=False),
    shapes=("c",),
    valid=lambda c: c > 0,
)


# ------------------------------------------------------------------ the shape families' mean, var, std, stats, entropy
def _defined(condition, formula, params, stand_ins, otherwise) -> Tensor:
    """``formula(*params)`` where ``condition``, ``otherwise`` (SciPy's inf or NaN for a moment that does not exist)
    elsewhere, the formula taken at ``stand_ins`` there: its value and slope at the excluded parameters (t.var's ``df /
    (df - 2)`` at df = 2) are infinite, and 0 * inf would make the gradients NaN."""
    w = _math_ops.where
    safe = [w(condition, p, stand_in) for p, stand_in in zip(params, stand_ins)]
    return w(condition, formula(*safe), otherwise)


def _gamma_entropy(a):
    """SciPy's gamma entropy: ``a + gammaln(a) + (1 - a) digamma(a)`` below a = 250, above its asymptotic series
    (the terms cancel there)."""
    large = a >= 250.0
    regular = _defined(
        _math_ops.logical_not(large), lambda a: a + _sp.gammaln(a) + (1.0 - a) * _sp.digamma(a), [a], [1.0], 0.0
    )
    u = 1.0 / _math_ops.where(large, a, 250.0)
    series = 0.5 * (1.0 + _LOG_2PI) - 0.5 * _math_ops.log(u) - u / 3.0 - u**2 / 12.0 - u**3 / 90.0 + u**4 / 120.0
    return _math_ops.where(large, series, regular)


def _beta_entropy(a, b):
    """SciPy's beta entropy: ``betaln(a, b) - (a - 1) psi(a) - (b - 1) psi(b) + (a + b - 2) psi(a + b)``, and SciPy's
    asymptotic series where ``a``, ``b`` or both are in the millions (the terms cancel there), in SciPy's selection;
    where none of SciPy's cases applies (SciPy gives 0: beta.entropy(2, 3e7)) the series of the large one(s)."""
    w = _math_ops.where

    def threshold(v):
        j = _math_ops.floor(_math_ops.log(v) / _math.log(10.0))
        d = _math_ops.floor(v / 10.0**j) + 2.0
        return w(_math_ops.equal(v, 1.0), 1000.0, d * 10.0 ** (7.0 + j))

    a0, b0 = _math_ops.stop_gradient(a), _math_ops.stop_gradient(b)
    no, either = _math_ops.logical_not, _math_ops.logical_or
    both = _all(a0 >= 4.96e6, b0 >= 4.96e6)
    b_large = _all(no(both), a0 <= 4.9e6, b0 - a0 >= 1e6, b0 >= threshold(a0))
    a_large = _all(no(both), no(b_large), b0 <= 4.9e6, a0 - b0 >= 1e6, a0 >= threshold(b0))
    regular = _all(no(either(both, either(b_large, a_large))), a0 < 4.9e6, b0 < 4.9e6)
    # where none of SciPy's cases applies (it gives 0 there: beta.entropy(2, 3e7)) the series of the large ones
    rest = no(either(either(both, regular), either(b_large, a_large)))
    both = either(both, _all(rest, a0 >= 4.9e6, b0 >= 4.9e6))
    rest = _all(rest, no(both))
    b_large, a_large = either(b_large, _all(rest, b0 >= a0)), either(a_large, _all(rest, b0 < a0))

    def regular_form(a, b):
        return (
            _sp.betaln(a, b)
            - (a - 1.0) * _sp.digamma(a)
            - (b - 1.0) * _sp.digamma(b)
            + (a + b - 2.0) * _sp.digamma(a + b)
        )

    def both_large(a, b):
        total = a + b
        log_term = 0.5 * (_LOG_2PI + _math_ops.log(a) + _math_ops.log(b) - 3.0 * _math_ops.log(total) + 1.0)
        t1 = 110.0 / total + 20.0 * total**-2.0 + total**-3.0 - 2.0 * total**-4.0
        t2 = -50.0 / a - 10.0 * a**-2.0 - a**-3.0 + a**-4.0
        t3 = -50.0 / b - 10.0 * b**-2.0 - b**-3.0 + b**-4.0
        return log_term + (t1 + t2 + t3) / 120.0

    def one_large(a, b):  # b large
        total = a + b
        t1 = _sp.gammaln(a) - (a - 1.0) * _sp.digamma(a)
        t2 = (
            -1.0 / (2.0 * b)
            + 1.0 / (12.0 * b)
            - b**-2.0 / 12.0
            - b**-3.0 / 120.0
            + b**-4.0 / 120.0
            + b**-5.0 / 252.0
            - b**-6.0 / 252.0
            + 1.0 / total
            - 1.0 / (12.0 * total)
            + total**-2.0 / 6.0
            + total**-3.0 / 120.0
            - total**-4.0 / 60.0
            - total**-5.0 / 252.0
            + total**-6.0 / 126.0
        )
        return t1 + t2 + total * _math_ops.log1p(a / b) + _math_ops.log(b) - 2.0 * _math_ops.log(total)

    value = _defined(regular, regular_form, [a, b], [1.0, 1.0], 0.0)
    value = w(both, _defined(both, both_large, [a, b], [1e7, 1e7], 0.0), value)
    value = w(b_large, _defined(b_large, one_large, [a, b], [1.0, 1e8], 0.0), value)
    return w(a_large, _defined(a_large, lambda a, b: one_large(b, a), [a, b], [1e8, 1.0], 0.0), value)


def _beta_moments(a, b):
    """SciPy's beta mean, variance, skewness and excess kurtosis."""
    total = a + b
    variance = a * b / (total * total * (total + 1.0))
    skew = 2.0 * (b - a) * _math_ops.sqrt(total + 1.0) / ((total + 2.0) * _math_ops.sqrt(a * b))
    kurt = 6.0 * ((a - b) ** 2 * (total + 1.0) - a * b * (total + 2.0)) / (a * b * (total + 2.0) * (total + 3.0))
    return a / total, variance, skew, kurt


def _t_moments(df):
    """SciPy's t moments: mean 0 for df > 1 (inf below), variance df / (df - 2) for df > 2, inf in (1, 2], NaN below;
    skewness 0 for df > 3 (NaN below); excess kurtosis 6 / (df - 4) for df > 4, inf in (2, 4], NaN below; the
    normal's at df = inf."""
    w = _math_ops.where
    finite = df < _math.inf
    mean = w(df > 1.0, 0.0, _math.inf)
    variance = _defined(_all(df > 2.0, finite), lambda d: d / (d - 2.0), [df], [3.0], 0.0)
    variance = w(_all(df > 1.0, df <= 2.0), _math.inf, w(df > 2.0, w(finite, variance, 1.0), _math.nan))
    skew = w(df > 3.0, 0.0, _math.nan)
    kurt = _defined(_all(df > 4.0, finite), lambda d: 6.0 / (d - 4.0), [df], [5.0], 0.0)
    kurt = w(_all(df > 2.0, df <= 4.0), _math.inf, w(df > 4.0, w(finite, kurt, 0.0), _math.nan))
    return mean, variance, skew, kurt


def _t_entropy(df):
    """SciPy's t entropy: ``(df + 1) / 2 (psi((df + 1) / 2) - psi(df / 2)) + log(sqrt(df) B(df / 2, 1 / 2))`` below
    df = 100, its asymptotic series from there, the normal's at df = inf."""
    w = _math_ops.where
    normal = 0.5 * (_LOG_2PI + 1.0)
    small = df < 100.0

    def regular(d):
        half1 = 0.5 * (d + 1.0)
        return half1 * (_sp.digamma(half1) - _sp.digamma(0.5 * d)) + 0.5 * _math_ops.log(d) + _sp.betaln(0.5 * d, 0.5)

    u = 1.0 / w(small, 100.0, df)  # 0 at df = inf: the normal's
    series = normal + u + u**2 / 4.0 - u**3 / 6.0 - u**4 / 8.0 + 0.3 * u**5 + u**6 / 4.0
    return w(small, _defined(small, regular, [df], [1.0], 0.0), series)


def _chi2_entropy(df):
    """SciPy's chi2 entropy, its asymptotic series from df / 2 = 125."""
    half = 0.5 * df
    small = half < 125.0
    regular = _defined(
        small, lambda h: h + _math.log(2.0) + _sp.gammaln(h) + (1.0 - h) * _sp.digamma(h), [half], [1.0], 0.0
    )
    h = 0.5 / _math_ops.where(small, 125.0, half)
    series = h * (-2.0 / 3.0 + h * (-1.0 / 3.0 + h * (-4.0 / 45.0 + h / 7.5))) + 0.5 * _math_ops.log(
        _math_ops.where(small, 125.0, half)
    )
    return _math_ops.where(small, regular, series + _math.log(2.0) + 0.5 * (1.0 + _LOG_2PI))


def _f_moments(dfn, dfd):
    """SciPy's F moments: the mean for dfd > 2, the variance for dfd > 4 (inf below), the skewness for dfd > 6 and the
    excess kurtosis for dfd > 8 (NaN below)."""
    mean = _defined(dfd > 2.0, lambda v2: v2 / (v2 - 2.0), [dfd], [3.0], _math.inf)
    variance = _defined(
        dfd > 4.0,
        lambda v1, v2: 2.0 * v2 * v2 * (v1 + v2 - 2.0) / (v1 * (v2 - 2.0) ** 2 * (v2 - 4.0)),
        [dfn, dfd],
        [1.0, 5.0],
        _math.inf,
    )

    def skewness(v1, v2):
        return (
            _math.sqrt(8.0) * (2.0 * v1 + v2 - 2.0) / (v2 - 6.0) * _math_ops.sqrt((v2 - 4.0) / (v1 * (v1 + v2 - 2.0)))
        )

    skew = _defined(dfd > 6.0, skewness, [dfn, dfd], [1.0, 7.0], _math.nan)
    kurt = _defined(
        dfd > 8.0,
        lambda v1, v2: 1.5 * (8.0 + skewness(v1, v2) ** 2 * (v2 - 6.0)) / (v2 - 8.0),
        [dfn, dfd],
        [1.0, 9.0],
        _math.nan,
    )
    return mean, variance, skew, kurt


def _f_entropy(dfn, dfd):
    half_n, half_d = 0.5 * dfn, 0.5 * dfd
    half_sum = half_n + half_d
    return (
        _math_ops.log(dfd)
        - _math_ops.log(dfn)
        + _sp.betaln(half_n, half_d)
        + (1.0 - half_n) * _sp.digamma(half_n)
        - (1.0 + half_d) * _sp.digamma(half_d)
        + half_sum * _sp.digamma(half_sum)
    )


def _lognorm_moments(s):
    """SciPy's lognorm moments, with ``p - 1 = expm1(s**2)`` (exact for a small ``s``)."""
    s2 = s * s
    p, p1 = _math_ops.exp(s2), _math_ops.expm1(s2)
    return _math_ops.exp(0.5 * s2), p * p1, _math_ops.sqrt(p1) * (2.0 + p), (((p + 2.0) * p + 3.0) * p) * p - 6.0


def _central_moments(raw):
    """Mean, variance, skewness and excess kurtosis from the raw moments ``E X**n``, n = 1..4."""
    m1, m2, m3, m4 = raw
    variance = m2 - m1 * m1
    third = m3 - 3.0 * m1 * m2 + 2.0 * m1**3
    fourth = m4 - 4.0 * m1 * m3 + 6.0 * m1 * m1 * m2 - 3.0 * m1**4
    return m1, variance, third / variance**1.5, fourth / (variance * variance) - 3.0


def _weibull_moments(c):
    """weibull_min's moments from its raw ones ``Gamma(1 + n / c)`` (SciPy's, by its generic conversion)."""
    return _central_moments([_math_ops.exp(_sp.gammaln(1.0 + n / c)) for n in (1.0, 2.0, 3.0, 4.0)])


def _gennorm_moments(beta):
    c1, c3, c5 = (_sp.gammaln(n / beta) for n in (1.0, 3.0, 5.0))
    return 0.0, _math_ops.exp(c3 - c1), 0.0, _math_ops.exp(c5 + c1 - 2.0 * c3) - 3.0


def _loggamma_moments(c):
    variance = _sp.polygamma(1, c)
    return _sp.digamma(c), variance, _sp.polygamma(2, c) / variance**1.5, _sp.polygamma(3, c) / (variance * variance)


def _loggamma_entropy(c):
    """SciPy's loggamma entropy, ``gammaln(c) - c psi(c) + c``, its asymptotic series from c = 45."""
    large = c >= 45.0
    regular = _defined(_math_ops.logical_not(large), lambda c: _sp.gammaln(c) - c * _sp.digamma(c) + c, [c], [1.0], 0.0)
    u = 1.0 / _math_ops.where(large, c, 45.0)
    series = 0.5 * (_LOG_2PI + 1.0) + 0.5 * _math_ops.log(u) + u / 6.0 - u**3 / 90.0 + u**5 / 210.0
    return _math_ops.where(large, series, regular)


def _pareto_moments(b):
    """SciPy's pareto moments: mean for b > 1 and variance for b > 2 (inf below), skewness for b > 3 and excess
    kurtosis for b > 4 (NaN below)."""
    return (
        _defined(b > 1.0, lambda b: b / (b - 1.0), [b], [2.0], _math.inf),
        _defined(b > 2.0, lambda b: b / (b - 2.0) / (b - 1.0) ** 2, [b], [3.0], _math.inf),
        _defined(
            b > 3.0,
            lambda b: 2.0 * (b + 1.0) * _math_ops.sqrt(b - 2.0) / ((b - 3.0) * _math_ops.sqrt(b)),
            [b],
            [4.0],
            _math.nan,
        ),
        _defined(
            b > 4.0,
            lambda b: 6.0 * (((b + 1.0) * b - 6.0) * b - 2.0) / (((b - 7.0) * b + 12.0) * b),
            [b],
            [5.0],
            _math.nan,
        ),
    )


def _invgamma_moments(a):
    """SciPy's invgamma moments: mean for a > 1 and variance for a > 2 (inf below), skewness for a > 3 and excess
    kurtosis for a > 4 (NaN below)."""
    return (
        _defined(a > 1.0, lambda a: 1.0 / (a - 1.0), [a], [2.0], _math.inf),
        _defined(a > 2.0, lambda a: 1.0 / (a - 1.0) ** 2 / (a - 2.0), [a], [3.0], _math.inf),
        _defined(a > 3.0, lambda a: 4.0 * _math_ops.sqrt(a - 2.0) / (a - 3.0), [a], [4.0], _math.nan),
        _defined(a > 4.0, lambda a: 6.0 * (5.0 * a - 11.0) / (a - 3.0) / (a - 4.0), [a], [5.0], _math.nan),
    )


def _invgamma_entropy(a):
    """SciPy's invgamma entropy, ``a - (a + 1) psi(a) + gammaln(a)``, its asymptotic series from a = 200."""
    large = a >= 200.0
    regular = _defined(
        _math_ops.logical_not(large),
        lambda a: a - (a + 1.0) * _sp.digamma(a) + _sp.gammaln(a),
        [a],
        [1.0],
        0.0,
    )
    u = 1.0 / _math_ops.where(large, a, 200.0)
    series = (1.0 + 3.0 * _math_ops.log(u) + _LOG_2PI) / 2.0 + 2.0 / 3.0 * u + u**2 / 12.0 - u**3 / 90.0 - u**4 / 120.0
    return _math_ops.where(large, series, regular)


def _positive_shapes(*shapes):
    return _all(*(v > 0 for v in shapes)) if len(shapes) > 1 else shapes[0] > 0


for _namespace, _name, _shapes, _valid, _moments, _entropy in (
    (gamma, "gamma", ("a",), _positive_shapes, lambda a: (a, a, 2.0 / _math_ops.sqrt(a), 6.0 / a), _gamma_entropy),
    (beta, "beta", ("a", "b"), _positive_shapes, _beta_moments, _beta_entropy),
    (t, "t", ("df",), _positive_shapes, _t_moments, _t_entropy),
    (
        chi2,
        "chi2",
        ("df",),
        _positive_shapes,
        lambda df: (df, 2.0 * df, 2.0 * _math_ops.sqrt(2.0 / df), 12.0 / df),
        _chi2_entropy,
    ),
    (
        f,
        "f",
        ("dfn", "dfd"),
        lambda dfn, dfd: _all(dfn > 0, dfd > 0, dfn < _math.inf, dfd < _math.inf),
        _f_moments,
        _f_entropy,
    ),
    (
        lognorm,
        "lognorm",
        ("s",),
        _positive_shapes,
        _lognorm_moments,
        lambda s: 0.5 * (1.0 + _LOG_2PI) + _math_ops.log(s),
    ),
    (
        weibull_min,
        "weibull_min",
        ("c",),
        _positive_shapes,
        _weibull_moments,
        lambda c: -_EULER / c - _math_ops.log(c) + _EULER + 1.0,
    ),
    (
        gennorm,
        "gennorm",
        ("beta",),
        _positive_shapes,
        _gennorm_moments,
        lambda beta: 1.0 / beta - _math_ops.log(0.5 * beta) + _sp.gammaln(1.0 / beta),
    ),
    (loggamma, "loggamma", ("c",), _positive_shapes, _loggamma_moments, _loggamma_entropy),
    (pareto, "pareto", ("b",), _positive_shapes, _pareto_moments, lambda b: 1.0 + 1.0 / b - _math_ops.log(b)),
    (invgamma, "invgamma", ("a",), _positive_shapes, _invgamma_moments, _invgamma_entropy),
):
    vars(_namespace).update(_summaries(_name, _shapes, _valid, _moments, _entropy, scaled=True))
del _namespace, _name, _shapes, _valid, _moments, _entropy


# ------------------------------------------------------------------ truncnorm
def _normal_mass(lo, hi, log=True):
    """``log(Phi(hi) - Phi(lo))`` for ``lo <= hi`` (with ``log`` false: ``(log_scale, factor)``, the mass ``e**log_scale
    factor``, ``factor`` in [0, 1], whose gradient is finite where the mass is 0, at ``lo == hi``: truncnorm.cdf's at
    the support's ends was NaN), accurate in both tails (SciPy 1.9's tail-symmetric form): from the upper tails ``log
    Phi(-lo) + log(1 - Phi(-hi) / Phi(-lo))`` where ``lo >= 0``, from the lower ones where ``hi <= 0``,
    ``log1p(-Phi(lo) - Phi(-hi))`` across 0 (``log((erf(hi / sqrt 2) - erf(lo / sqrt 2)) / 2)``, a sum of two positive
    terms, where the mass is below 1/2); -inf where ``lo == hi``.  For a narrow interval (``hi - lo < 1e-3``) ``log
    Phi(near) - log Phi(far)`` is the integral of the Mills ratio ``phi / Phi`` over it (3-point Gauss-Legendre, exact
    to ``(hi - lo)**6``): the difference of the logs kept ``1e-16 |log Phi| / (hi - lo)`` relative (truncnorm(0,
    1e-8).sf at b - 3e-17 was 0 for 3e-9, truncnorm(39, 40).cdf(39 + 1 ulp) 2.27e-13 for 2.77e-13)."""
    w = _math_ops.where
    upper, lower = lo >= 0, hi <= 0
    across = _math_ops.logical_not(_math_ops.logical_or(upper, lower))
    # the nearer end's tail and the farther's, as lower tails (stand-ins across 0: -inf there met gradients)
    near, far = w(across, 0.0, w(upper, -lo, hi)), w(across, -1.0, w(upper, -hi, lo))
    log_near, log_far = _sp.log_ndtr(near), _sp.log_ndtr(far)
    narrow = near - far < 1e-3
    centre, half = w(narrow, 0.5 * (near + far), 0.0), 0.5 * w(narrow, near - far, 0.0)

    def mills(t):
        return _math_ops.exp(-0.5 * t * t - 0.5 * _LOG_2PI - _sp.log_ndtr(t))

    node = half * _math.sqrt(0.6)
    integral = half * ((5.0 / 9.0) * (mills(centre - node) + mills(centre + node)) + (8.0 / 9.0) * mills(centre))
    gap = w(across, 1.0, w(narrow, integral, log_near - log_far))
    lo_across, hi_across = w(across, lo, 0.0), w(across, hi, 0.0)
    outside = _sp.ndtr(lo_across) + _sp.ndtr(-hi_across)
    small = outside > 0.5  # the mass below 1/2: the sum of the two erfs, no cancellation
    erfs = _sp.erf(hi_across / _math.sqrt(2.0)) - _sp.erf(lo_across / _math.sqrt(2.0))
    middle = w(small, _math_ops.log(0.5 * w(small, erfs, 1.0)), _math_ops.log1p(-w(small, 0.5, outside)))
    if log:
        return w(across, middle, log_near + _nn.log1mexp(gap))
    return w(across, 0.0, log_near), w(across, _math_ops.exp(middle), -_math_ops.expm1(-gap))


def _ndtri_exp(y) -> Tensor:
    """``x`` with ``log Phi(x) = y`` (SciPy's ``ndtri_exp``): ``ndtri(exp(y))``, ``-ndtri(-expm1(y))`` above log(1/2);
    below -700, where exp(y) underflows, Newton's method on ``log_ndtr`` from the asymptotic start, whose last step
    carries the gradient ``1 / (d log_ndtr / dx)`` (first order exact there)."""
    w = _math_ops.where
    stop = _math_ops.stop_gradient
    high, tiny = y > -_math.log(2.0), y < -700.0
    direct = w(
        high, -_sp.ndtri(-_math_ops.expm1(w(high, y, -1.0))), _sp.ndtri(_math_ops.exp(w(_all(~high, ~tiny), y, -1.0)))
    )
    ys = w(tiny, y, -800.0)
    x = -_math_ops.sqrt(-2.0 * stop(ys))
    for _ in range(8):  # quadratic convergence from x0 = -sqrt(-2 y) (relative error below 1e-2 there)
        x = x - (_sp.log_ndtr(x) - stop(ys)) * _math_ops.exp(_sp.log_ndtr(x) - _norm_logpdf(x))
    x = stop(x)
    x = x - (_sp.log_ndtr(x) - ys) * _math_ops.exp(_sp.log_ndtr(x) - _norm_logpdf(x))
    return w(tiny, x, direct)


def _truncnorm_method(method):
    """``truncnorm.<method>``: the normal on ``[a, b]`` (in standard units, SciPy's shapes), shifted and scaled."""

    def run(x, *args, **kwargs):
        where = f"truncnorm.{method}"
        first = "q" if method in ("ppf", "isf") else "x"
        dtype, (x, a, b, loc, scale) = _bound(where, first, x, ("a", "b"), {"loc": 0.0, "scale": 1.0}, args, kwargs)
        w = _math_ops.where
        ok = _all(a < b, scale > 0)
        a, b = w(ok, a, 0.0), w(ok, b, 1.0)
        log_mass = _normal_mass(a, b)
        if method in ("ppf", "isf"):
            inside = _all(x >= 0, x <= 1)
            q = w(_all(x > 0, x < 1), x, 0.5)
            lower_q = q if method == "ppf" else 1.0 - q  # the probability below, for choosing the side
            # from the nearer tail: Phi(z) = Phi(a) + p_below Z, or Phi(-z) = Phi(-b) + p_above Z
            log_below = _math_ops.log(q) if method == "ppf" else _math_ops.log1p(-q)
            log_above = _math_ops.log1p(-q) if method == "ppf" else _math_ops.log(q)
            at_zero = _math_ops.exp(_normal_mass(a, w(_all(a < 0, b > 0), 0.0, b)) - log_mass)
            upper = w(a >= 0, True, w(b <= 0, False, lower_q > at_zero))
            from_below = _ndtri_exp(_elementwise.logaddexp(_sp.log_ndtr(a), log_below + log_mass))
            from_above = -_ndtri_exp(_elementwise.logaddexp(_sp.log_ndtr(-b), log_above + log_mass))
            # next to z = 0 (Phi(z) - 1/2 = d below 0.3) sqrt(2) erfinv(2 d): ndtri(1/2 + d) lost d's digits (ppf(1e-10,
            # 0, 1) was 2e-6 relative off), with d = Phi(a) - 1/2 + p_below Z = erf(a / sqrt 2) / 2 + p_below Z
            d = 0.5 * _sp.erf(a / _math.sqrt(2.0)) + (q if method == "ppf" else 1.0 - q) * _math_ops.exp(log_mass)
            middle = _math_ops.abs(d) < 0.3
            centre = _math.sqrt(2.0) * _sp.erfinv(2.0 * w(middle, d, 0.0))
            z = _math_ops.minimum(_math_ops.maximum(w(middle, centre, w(upper, from_above, from_below)), a), b)
            ends = (a, b) if method == "ppf" else (b, a)
            z = w(_math_ops.equal(x, 0.0), ends[0], w(_math_ops.equal(x, 1.0), ends[1], z))
            value = w(inside, loc + scale * z, _math.nan)
            return _narrowed(w(ok, value, _math.nan), dtype)
        z = _standard(x, loc, scale)
        under, over = z < a, z > b
        zs = w(_math_ops.logical_or(under, over), 0.5 * (a + b), z)
        if method in ("logpdf", "pdf"):
            value = w(_math_ops.logical_or(under, over), -_math.inf, _norm_logpdf(zs) - log_mass - _math_ops.log(scale))
        else:  # each probability from its own mass, as e**log_scale factor (a finite gradient where a mass is 0, at
            # the ends); above 1/2 as 1 minus the other, its log as log1p of minus the other
            (scale_below, below), (scale_above, above) = _normal_mass(a, zs, log=False), _normal_mass(zs, b, log=False)
            below, above = _math_ops.exp(scale_below - log_mass) * below, _math_ops.exp(scale_above - log_mass) * above
            mine, other = (below, above) if method in ("cdf", "logcdf") else (above, below)
            big = mine > 0.5
            if method.startswith("log"):
                log_mine = _normal_mass(a, zs) if method == "logcdf" else _normal_mass(zs, b)
                value = w(big, _math_ops.log1p(-w(big, other, 0.0)), w(big, 0.0, log_mine) - log_mass)
                low, high = (-_math.inf, 0.0) if method == "logcdf" else (0.0, -_math.inf)
            else:
                value = w(big, 1.0 - other, mine)
                low, high = (0.0, 1.0) if method == "cdf" else (1.0, 0.0)
            value = w(under, low, w(over, high, value))
        if method == "pdf":
            value = _math_ops.exp(value)
        value = w(_math_ops.not_equal(z, z), _math.nan, value)
        return _narrowed(w(ok, value, _math.nan), dtype)

    run.__name__ = run.__qualname__ = f"truncnorm_{method}"
    return run


truncnorm = SimpleNamespace(
    **{m: _truncnorm_method(m) for m in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf")}
)


# ------------------------------------------------------------------ counts: bernoulli, binom, geom, nbinom
def _binomial_log_density(k, n, p) -> Tensor:
    """``log(C(n, k) p**k (1 - p)**(n - k))`` for ``0 <= k <= n`` (real ``n`` and ``k`` too, as nbinom needs), in
    Loader's saddle-point form (R's ``dbinom_raw``: Stirling errors and deviances, no difference of huge log-gammas)
    inside, ``n log1p(-p)`` at ``k = 0`` and ``n log p`` at ``k = n``; -inf where ``p`` is 0 or 1 and ``k`` between."""
    w = _math_ops.where
    q = 1.0 - p
    interior = _all(k > 0, k < n, p > 0, p < 1)
    ki, ni, pi, qi = w(interior, k, 1.0), w(interior, n, 2.0), w(interior, p, 0.5), w(interior, q, 0.5)
    saddle = (
        stirling_error(ni)
        - stirling_error(ki)
        - stirling_error(ni - ki)
        - deviance(ki, ni * pi)
        - deviance(ni - ki, ni * qi)
        - 0.5 * (_LOG_2PI + _math_ops.log(ki) + _math_ops.log1p(-ki / ni))
    )
    zero, full = _math_ops.equal(k, 0.0), _math_ops.equal(k, n)
    ends = w(zero, _sp.xlog1py(n, -w(zero, p, 0.0)), _sp.xlogy(n, w(full, p, 1.0)))
    return w(_math_ops.logical_or(zero, full), ends, w(interior, saddle, -_math.inf))


def _shielded(mask, params) -> list:
    """``params`` where ``mask``, and elsewhere the same values without a gradient: a formula taken at a stand-in (a
    ``k`` off the support, a branch not used) may have an infinite derivative there (log(1 - p) at p = 1), which the
    where that drops it turned into 0 * inf = NaN."""
    return [_math_ops.where(mask, p, _math_ops.stop_gradient(p)) for p in params]


def _first_count(reached, low, high, start) -> Tensor:
    """The smallest integer ``k`` in ``[low, high]`` with ``reached(k)``, a test that is false below it and true from it
    on (``reached(high)`` true, ``reached(low - 1)`` false), for the shape of ``start``: the offset ``k - low + 1`` is
    bracketed by powers of two (the exponent bisected over 0 .. 1024, 11 steps), then bisected (54 steps: exact below
    2**53, down to adjacent floats above), so every float64 count is reached in 65 tests, traceable (no loop on
    values).  No gradient: the result is a step function of the parameters."""
    w, floor = _math_ops.where, _math_ops.floor

    def at(offset):
        return _math_ops.minimum(low - 1.0 + offset, high)

    below, above = start - 1.0, start + 1024.0
    for _ in range(11):
        middle = floor(0.5 * (below + above))
        ok = reached(at(2.0**middle))
        below, above = w(ok, below, middle), w(ok, middle, above)
    below, above = floor(2.0**below), 2.0**above
    for _ in range(54):
        middle = floor(0.5 * (below + above))
        ok = reached(at(middle))
        below, above = w(ok, below, middle), w(ok, middle, above)
    return at(above)


def _counts(
    name,
    shapes,
    valid,
    high,
    logpmf,
    cdf=None,
    sf=None,
    low=0.0,
    logcdf=None,
    logsf=None,
    ends=None,
    power_form=None,
    moments=None,
    entropy=None,
    guess=None,
):
    """SciPy's methods of a distribution on the integers ``low .. high(*shapes)`` shifted by ``loc``: each formula
    takes an integer ``k`` on the support (a stand-in elsewhere, so no gradient meets a NaN) and the shapes;
    off the support SciPy's values, NaN for invalid parameters or a NaN ``k``.  ``logcdf``/``logsf``, finite where
    the tails underflow, default to the logs of ``cdf``/``sf``.  Where ``ends(*shapes)`` (a probability of 0 or 1)
    ``pmf`` is ``power_form(k, *shapes)``, the mass as a product of powers of the parameters, whose gradients are the
    one-sided limits: exp(logpmf)'s were exp(-inf) times an infinite derivative, NaN, or 0 where the mass rises
    linearly (binom.pmf(1, 10, p)'s slope at p = 0 is 10)."""
    w = _math_ops.where

    def method(m, body):
        def run(k, *args, **kwargs):
            dtype, (k, *params, loc) = _bound(f"{name}.{m}", "k", k, shapes, {"loc": 0.0}, args, kwargs)
            k = k - loc
            value = w(_math_ops.not_equal(k, k), _math.nan, body(k, *params))
            return _narrowed(w(valid(*params), value, _math.nan), dtype)

        run.__name__ = run.__qualname__ = f"{name}_{m}"
        return run

    def support(k, *params):
        return _all(k >= low, k <= high(*params), _math_ops.equal(k, _math_ops.floor(k)))

    def mass(k, *params):
        inside = support(k, *params)
        return w(inside, logpmf(w(inside, k, low), *_shielded(inside, params)), -_math.inf)

    def probability(k, *params):
        if ends is None:
            return _math_ops.exp(mass(k, *params))
        edge = _all(support(k, *params), ends(*params))
        value = _math_ops.exp(mass(k, *_shielded(_math_ops.logical_not(edge), params)))
        return w(edge, power_form(w(edge, k, low), *_shielded(edge, params)), value)

    def tail(formula, under_value, over_value):
        def body(k, *params):
            whole = _math_ops.floor(k)
            under, over = whole < low, whole >= high(*params)
            off = _math_ops.logical_or(under, over)
            value = formula(w(off, low, whole), *_shielded(_math_ops.logical_not(off), params))
            return w(under, under_value, w(over, over_value, value))

        return body

    methods = dict(logpmf=method("logpmf", mass), pmf=method("pmf", probability))
    if moments is not None:
        methods.update(_summaries(name, shapes, valid, moments, entropy))
    if cdf is not None:
        methods.update(
            ppf=_count_quantile(name, "ppf", shapes, valid, low, high, tail(cdf, 0.0, 1.0), guess),
            isf=_count_quantile(name, "isf", shapes, valid, low, high, tail(sf, 1.0, 0.0), guess),
        )
        methods.update(_intervals(methods["ppf"]))
        methods.update(
            cdf=method("cdf", tail(cdf, 0.0, 1.0)),
            sf=method("sf", tail(sf, 1.0, 0.0)),
            logcdf=method(
                "logcdf", tail(logcdf, -_math.inf, 0.0) if logcdf else _log_of(tail(cdf, 0.0, 1.0), tail(sf, 1.0, 0.0))
            ),
            logsf=method(
                "logsf", tail(logsf, 0.0, -_math.inf) if logsf else _log_of(tail(sf, 1.0, 0.0), tail(cdf, 0.0, 1.0))
            ),
        )
    return SimpleNamespace(**methods)


def _count_quantile(name, m, shapes, valid, low, high, probability, guess=None):
    """``<name>.ppf`` (the smallest ``k`` with ``cdf(k) >= q``) or ``.isf`` (the smallest with ``sf(k) <= q``), SciPy's
    conventions: the ends ``low - 1`` and ``high`` at ``q`` 0 and 1 (swapped for ``isf``), NaN for ``q`` outside [0, 1]
    or invalid parameters.  From the family's own ``probability`` (cdf or sf, as ``k -> value`` of counts), so ``cdf
    (ppf(q)) >= q`` holds for tensorlib's values; ``guess(q, *params, upper)``, within one of the answer, is corrected
    by two tests, else ``_first_count`` searches.  A step function of ``q`` and the parameters: its gradient is zero
    (JAX's rule for integer-valued results; SciPy's value is not differentiable)."""
    upper = m == "isf"
    w, stop = _math_ops.where, _math_ops.stop_gradient

    def run(q, *args, **kwargs):
        dtype, (q, *params, loc) = _bound(f"{name}.{m}", "q", q, shapes, {"loc": 0.0}, args, kwargs)
        q, loc, params = stop(q), stop(loc), [stop(p) for p in params]
        ok = valid(*params)
        qs = w(_all(q > 0, q < 1), q, 0.5)
        first, last = low - 1.0, w(ok, high(*params), 0.0)

        def reached(k):
            value = probability(k, *params)
            return value <= qs if upper else value >= qs

        if guess is None:
            start = _math_ops.zeros_like(qs + w(ok, 0.0, 0.0))
            k = _first_count(reached, low, last, start)
        else:
            g = _math_ops.minimum(_math_ops.maximum(guess(qs, *params, upper), low), last)
            k = w(_all(g > low, reached(g - 1.0)), g - 1.0, w(reached(g), g, g + 1.0))
        at_zero, at_one = (last, first) if upper else (first, last)
        k = w(_math_ops.equal(q, 0.0), at_zero, w(_math_ops.equal(q, 1.0), at_one, k))
        k = w(_all(q >= 0, q <= 1), k, _math.nan)
        return _narrowed(w(ok, k + loc, _math.nan), dtype)

    run.__name__ = run.__qualname__ = f"{name}_{m}"
    run.__doc__ = f"""SciPy's ``{name}.{m}``: the smallest count ``k`` with ``{"sf(k) <= q" if upper else "cdf(k) >= q"}``; zero
    gradient.

    >>> import tensorlib as tl
    >>> float(tl.stats.poisson.{m}(0.5, 3.0))
    3.0
    """
    return run


def _p_at_an_end(p) -> Tensor:
    return _math_ops.logical_or(p == 0.0, p == 1.0)


def _binomial_power_form(k, n, p) -> Tensor:
    """``C(n, k) p**k (1 - p)**(n - k)``, with ``C(n, k) = 1 / ((n + 1) B(n - k + 1, k + 1))``."""
    return _math_ops.exp(-_math_ops.log(n + 1.0) - _sp.betaln(n - k + 1.0, k + 1.0)) * p**k * (1.0 - p) ** (n - k)


def _geom_tail(k, p, method) -> Tensor:
    """geom's ``cdf``, ``sf`` or ``logcdf`` from ``(1 - p)**k``: as ``exp(k log1p(-p))`` up to p = 1/2 (where ``1 - p``
    would round), as the power itself above (``1 - p`` exact there), whose gradient at p = 1 is the limit (cdf'(1)
    is 1 for k = 1, 0 beyond), where log1p(-p)'s infinite derivative made it NaN."""
    w = _math_ops.where
    big = p > 0.5
    log_q = _math_ops.log1p(-w(big, 0.25, p))
    power = (1.0 - w(big, p, 0.75)) ** k
    if method == "sf":
        return w(big, power, _math_ops.exp(k * log_q))
    if method == "cdf":
        return w(big, 1.0 - power, -_math_ops.expm1(k * log_q))
    return w(big, _math_ops.log1p(-power), _nn.log1mexp(-k * log_q))


def _binomial_moments(n, p):
    """Mean, variance, skewness and excess kurtosis of Binomial(n, p), SciPy's formulas (the skewness as ``1 / sd - 2 p /
    sd``: NaN, not -inf, where the variance is 0)."""
    variance = n * p * (1.0 - p)
    sd = _math_ops.sqrt(variance)
    return n * p, variance, 1.0 / sd - 2.0 * p / sd, 1.0 / variance - 6.0 / n


def _betabinom_moments(n, a, b):
    """Mean, variance, skewness and excess kurtosis of BetaBinomial(n, a, b), SciPy's formulas."""
    total = a + b
    e_p = a / total
    e_q = 1.0 - e_p
    variance = n * (total + n) * e_p * e_q / (total + 1.0)
    skew = (total + 2.0 * n) * (b - a) / ((total + 2.0) * total) / _math_ops.sqrt(variance)
    kurt = (
        total * (total - 1.0 + 6.0 * n)
        + 3.0 * a * b * (n - 2.0)
        + 6.0 * n * n
        - 3.0 * e_p * b * n * (6.0 - n)
        - 18.0 * e_p * e_q * n * n
    ) * (total * total * (1.0 + total)) / (n * a * b * (total + 2.0) * (total + 3.0) * (total + n)) - 3.0
    return n * e_p, variance, skew, kurt


def _geom_guess(q, p, upper):
    """geom's quantile (``upper``: the inverse sf) within one: ``(1 - p)**k`` is the sf, so ``k = log(sf) /
    log1p(-p)`` rounded up (SciPy's ppf), from ``log q`` for the isf (exact for a tiny ``q``, where ``1 - q`` rounds)."""
    log_sf = _math_ops.log(q) if upper else _math_ops.log1p(-q)
    return _elementwise.ceil(log_sf / _math_ops.log1p(-p))


def _is_count(n) -> Tensor:
    return _all(n >= 0, _math_ops.equal(n, _math_ops.floor(n)), n < _math.inf)


def _probability_in(p, low_open=False) -> Tensor:
    return _all(p > 0 if low_open else p >= 0, p <= 1)


binom = _counts(
    "binom",
    ("n", "p"),
    lambda n, p: _all(_is_count(n), _probability_in(p)),
    lambda n, p: n,
    logpmf=lambda k, n, p: _binomial_log_density(k, n, p),
    cdf=lambda k, n, p: _sp.betaincc(k + 1.0, _math_ops.maximum(n - k, 1.0), p),  # I_{1-p}(n - k, k + 1)
    sf=lambda k, n, p: _sp.betainc(k + 1.0, _math_ops.maximum(n - k, 1.0), p),
    logcdf=lambda k, n, p: _log_betainc(_math_ops.maximum(n - k, 1.0), k + 1.0, 1.0 - p, p),
    logsf=lambda k, n, p: _log_betainc(k + 1.0, _math_ops.maximum(n - k, 1.0), p),
    ends=lambda n, p: _p_at_an_end(p),
    power_form=lambda k, n, p: _binomial_power_form(k, n, p),
    moments=lambda n, p: _binomial_moments(n, p),
)
betabinom = _counts(
    "betabinom",
    ("n", "a", "b"),
    lambda n, a, b: _all(_is_count(n), a > 0, b > 0),
    lambda n, a, b: n,
    # C(n, k) B(k + a, n - k + b) / B(a, b), with C(n, k) = 1 / ((n + 1) B(n - k + 1, k + 1))
    logpmf=lambda k, n, a, b: (
        -_math_ops.log(n + 1.0) - _sp.betaln(n - k + 1.0, k + 1.0) + _sp.betaln(k + a, n - k + b) - _sp.betaln(a, b)
    ),
    # the sum of the masses over the shorter tail (SciPy's generic cdf sums them too): no closed form in SciPy
    cdf=lambda k, n, a, b: _betabinom_tail(k, n, a, b),
    sf=lambda k, n, a, b: _betabinom_tail(k, n, a, b, upper=True),
    moments=lambda n, a, b: _betabinom_moments(n, a, b),
    guess=lambda q, n, a, b, upper: _betabinom_count(q, n, a, b, upper),
)
bernoulli = _counts(
    "bernoulli",
    ("p",),
    lambda p: _probability_in(p),
    lambda p: 1.0,
    # the binomial's ends: log(p) at k = 1 met p = 0 in the branch not taken (k = 0), a NaN gradient there
    logpmf=lambda k, p: _binomial_log_density(k, 1.0, p),
    cdf=lambda k, p: 1.0 - p,
    sf=lambda k, p: p + 0.0 * k,
    ends=_p_at_an_end,
    power_form=lambda k, p: p**k * (1.0 - p) ** (1.0 - k),
    moments=lambda p: _binomial_moments(1.0, p),
    entropy=lambda p: _sp.entr(p) + _sp.entr(1.0 - p),
    guess=lambda q, p, upper: _math_ops.cast(q < p if upper else q > 1.0 - p, _float64),
)
geom = _counts(
    "geom",
    ("p",),
    lambda p: _probability_in(p, low_open=True),
    lambda p: _math.inf,
    logpmf=lambda k, p: _sp.xlog1py(k - 1.0, -p) + _math_ops.log(p),
    cdf=lambda k, p: _geom_tail(k, p, "cdf"),
    sf=lambda k, p: _geom_tail(k, p, "sf"),
    logcdf=lambda k, p: _geom_tail(k, p, "logcdf"),
    logsf=lambda k, p: k * _math_ops.log1p(-p),
    low=1.0,
    ends=lambda p: p == 1.0,
    power_form=lambda k, p: (1.0 - p) ** (k - 1.0) * p,
    moments=lambda p: (
        1.0 / p,
        (1.0 - p) / (p * p),
        (2.0 - p) / _math_ops.sqrt(1.0 - p),
        (p * p - 6.0 * p + 6.0) / (1.0 - p),
    ),
    # -log p - (1 - p) log(1 - p) / p; 0 at p = 1 (SciPy's formula reads 0 * -inf there: NaN)
    entropy=lambda p: 0.0 - _math_ops.log(p) - _sp.xlog1py(1.0 - p, -p) / p,
    guess=_geom_guess,
)
nbinom = _counts(
    "nbinom",
    ("n", "p"),
    lambda n, p: _all(n > 0, n < _math.inf, _probability_in(p, low_open=True)),
    lambda n, p: _math.inf,
    # R's dnbinom: n / (n + k) times the binomial probability of n successes in n + k trials
    logpmf=lambda k, n, p: _math_ops.log(n / (n + k)) + _binomial_log_density(n, n + k, p),
    cdf=lambda k, n, p: _sp.betainc(n, k + 1.0, p),
    sf=lambda k, n, p: _sp.betaincc(n, k + 1.0, p),
    logcdf=lambda k, n, p: _log_betainc(n, k + 1.0, p),
    logsf=lambda k, n, p: _log_betainc(k + 1.0, n, 1.0 - p, p),
    ends=lambda n, p: p == 1.0,
    # C(n + k - 1, k) p**n (1 - p)**k
    power_form=lambda k, n, p: (
        _math_ops.exp(_sp.gammaln(n + k) - _sp.gammaln(k + 1.0) - _sp.gammaln(n)) * p**n * (1.0 - p) ** k
    ),
    moments=lambda n, p: (
        n * (1.0 - p) / p,
        n * (1.0 - p) / (p * p),
        (2.0 - p) / _math_ops.sqrt(n * (1.0 - p)),
        6.0 / n + p * p / (n * (1.0 - p)),
    ),
)


# ------------------------------------------------------------------ poisson (its methods above, the summaries)
def _poisson_probability(k, mu, upper):
    """P(K <= k) (P(K > k) if ``upper``) at float64 tensors, for the quantile search: ``k`` below 0 too."""
    below = k < 0
    count = _math_ops.floor(_math_ops.where(below, 0.0, k)) + 1.0
    value = _sp.gammainc(count, mu) if upper else _sp.gammaincc(count, mu)
    return _math_ops.where(below, 1.0 if upper else 0.0, value)


def _poisson_valid(mu) -> Tensor:
    return mu >= 0


_POISSON_ENTROPY_BELOW = 300.0  # the sum below, the asymptotic series (3e-12 relative there, mpmath) from it
_POISSON_ENTROPY_TERMS = 1400  # k = 0 .. 1399: beyond mu + 60 sqrt(mu) at mu = 300, where the masses underflow


def _poisson_entropy(mu):
    """SciPy's ``poisson.entropy``, ``-sum_k p_k log p_k``: the sum itself over k = 0 .. 1399 below mu = 300 (one
    broadcast over a new last axis, no loop on values: traceable), from there ``log(2 pi e mu) / 2 - 1 / (12 mu) - 1 /
    (24 mu**2) - 19 / (360 mu**3)``; 0 at mu = 0 (its slope there +inf, the limit).  Differentiable in ``mu`` (the
    masses' ``-p log p`` as ``-exp(l) l`` of the log-masses, finite where they underflow)."""
    from .ops.creation import tensor
    from .ops.shape import expand_dims

    w = _math_ops.where
    small = mu < _POISSON_ENTROPY_BELOW
    m = w(_all(small, mu > 0), mu, 1.0)
    k = tensor(np.arange(_POISSON_ENTROPY_TERMS, dtype=np.float64))
    log_p = poisson_log_density(k, expand_dims(m, -1))
    total = -_reduce_ops.sum(_math_ops.exp(log_p) * log_p, axis=-1)
    u = 1.0 / w(small, _POISSON_ENTROPY_BELOW, mu)
    series = 0.5 * (_LOG_2PI + 1.0) - 0.5 * _math_ops.log(u) - u / 12.0 - u * u / 24.0 - 19.0 * u**3 / 360.0
    # 0 at mu = 0, with the limit of the slope there, +inf (H = mu - mu log mu + O(mu**2)): mu + entr(mu), at a
    # stand-in elsewhere (the constant 0 gave 0)
    zero = _math_ops.equal(mu, 0.0)
    at_zero = w(zero, mu, 1.0)
    return w(zero, at_zero + _sp.entr(at_zero), w(small, total, series))


_poisson_quantiles = {
    m: _count_quantile(
        "poisson",
        m,
        ("mu",),
        _poisson_valid,
        0.0,
        lambda mu: _math.inf,
        lambda k, mu, upper=(m == "isf"): _poisson_probability(k, mu, upper),
    )
    for m in ("ppf", "isf")
}
poisson = SimpleNamespace(
    logpmf=_poisson_logpmf,
    pmf=lambda k, mu: _math_ops.exp(_poisson_logpmf(k, mu)),
    cdf=_poisson_cdf,
    sf=_poisson_sf,
    logcdf=lambda k, mu: _poisson_tail("poisson.logcdf", k, mu, upper=False, log=True),
    logsf=lambda k, mu: _poisson_tail("poisson.logsf", k, mu, upper=True, log=True),
    **_poisson_quantiles,
    **_intervals(_poisson_quantiles["ppf"]),
    **_summaries(
        "poisson", ("mu",), _poisson_valid, lambda mu: (mu, mu, 1.0 / _math_ops.sqrt(mu), 1.0 / mu), _poisson_entropy
    ),
)


def _quiet(method):
    """``method`` with NumPy's floating-point warnings off while it runs: the methods take each formula at the
    support's ends and off it on purpose (log 0 = -inf is logcdf's value at the lower end, a branch not taken meets
    0 / 0), and they leaked "divide by zero" / "invalid value" RuntimeWarnings from ordinary calls (uniform.logcdf(0),
    gamma.logpdf at x = loc, t.ppf(0)); the values are unchanged.  A traced call's kernels, and the backward pass, run
    later, outside it: ``_quiet_later`` marks their tape and graph."""

    @_functools.wraps(method)
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            out = method(*args, **kwargs)
        _quiet_later()
        return out

    return run


def _quiet_later():
    """Mark the recording tapes and the graphs being traced so that their backward pass and traced kernels run with
    NumPy's warnings off too (``GradientTape._quiet``, ``Graph.quiet``: one check per ``gradient`` call or graph run,
    none per op): they take the methods' formulas and gradients at the same ends, where the warnings leaked."""
    from .dispatch import current_state

    state = current_state()
    for tape in state.tapes:
        tape._quiet = True
    for mode in state.modes:
        graph = getattr(mode, "graph", None)
        if graph is not None:
            graph.quiet = True


__all__ = [
    "bernoulli",
    "beta",
    "betabinom",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "f",
    "gamma",
    "gennorm",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "halfnorm",
    "invgamma",
    "laplace",
    "loggamma",
    "logistic",
    "lognorm",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "norm",
    "pareto",
    "poisson",
    "rayleigh",
    "t",
    "truncnorm",
    "uniform",
    "vonmises",
    "weibull_min",
    "wrapcauchy",
]

for _namespace in (globals()[_name] for _name in __all__):
    for _key, _method in list(vars(_namespace).items()):
        if callable(_method):
            setattr(_namespace, _key, _quiet(_method))
del _namespace, _key, _method

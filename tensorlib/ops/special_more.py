"""More of ``tl.special``: the functions of ``jax.scipy.special`` beyond the first set (Fresnel, sine and cosine
integrals, complete elliptic integrals, Lambert's W, Kummer's 1F1, Bernoulli numbers), SciPy's kernels with
gradients in tensorlib ops, built on the helpers of :mod:`tensorlib.ops.special`.
"""

from __future__ import annotations

import math as _math
from fractions import Fraction

import numpy as np

from ..dispatch import apply
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import elementwise, floating
from . import math as math_ops
from ._shapes import broadcast_shapes
from .registry import defop, spec
from .special import (
    _define,
    _define_partials,
    _elementwise_infer,
    _in_float64,
    _refuse,
    _result_dtype,
    _scipy_kernel,
    ndtr,
    scipy_special,
)


def _series(coefficients, t):
    """``sum_k coefficients[k] t**k`` by Horner's rule (``t`` a Tensor)."""
    out = coefficients[-1]
    for c in coefficients[-2::-1]:
        out = out * t + c
    return out


# ------------------------------------------------------------------ Fresnel, sine and cosine integrals (two outputs)
def _pair_infer(x):
    out = spec(x.shape, _result_dtype(x.dtype))
    return out, out


def _scipy_pair_kernel(function_name):
    """``scipy.special.<function_name>`` (two outputs) in float64, each rounded once to the rule's dtype."""

    def kernel(x):
        dtype = _result_dtype(x.dtype)
        first, second = getattr(scipy_special(), function_name)(x.astype(np.float64))
        return np.asarray(first).astype(dtype, copy=False), np.asarray(second).astype(dtype, copy=False)

    kernel.__name__ = kernel.__qualname__ = f"scipy_{function_name}"
    return kernel


def _define_pair(op_type, function_name, doc):
    op = defop(op_type, inputs=("x",), infer=_pair_infer, doc=doc)
    op.kernel("numpy")(_scipy_pair_kernel(function_name))
    op.kernels_reason = f"scipy.special.{function_name}; the Array API standard has no special functions"
    return op


_fresnel = _define_pair("Fresnel", "fresnel", "The Fresnel integrals (S(x), C(x)).")
_sici = _define_pair("Sici", "sici", "The sine and cosine integrals (Si(x), Ci(x)).")
_shichi = _define_pair("Shichi", "shichi", "The hyperbolic sine and cosine integrals (Shi(x), Chi(x)).")


_SPLITTER = 2.0**27 + 1.0  # Veltkamp: c x - (c x - x) keeps x's upper 26 bits
_EVEN_SQUARES_FROM = 2.0**60  # past it every float64 is an even integer: x**2 = 0 mod 4


def _quarter_turns(x):
    """``x**2 mod 4``, to float64 precision: sin(pi x**2 / 2) and cos(pi x**2 / 2) have period 4 in x**2, and the
    rounded square had lost the angle's digits (1e-9 relative in the Fresnel derivative at x = 3000.7).  ``x = hi
    + lo`` (Veltkamp's split) makes ``hi**2``, ``2 hi lo`` and ``lo**2`` exact, each reduced exactly; the floors
    are not differentiated, and the derivative of the sum is ``2 x``."""
    huge = math_ops.greater(math_ops.abs(x), _EVEN_SQUARES_FROM)
    xs = math_ops.where(huge, 0.0, x)
    scaled = _SPLITTER * xs
    hi = scaled - (scaled - xs)
    lo = xs - hi
    parts = [math_ops.square(hi), 2.0 * hi * lo, math_ops.square(lo)]
    total = sum(part - 4.0 * math_ops.floor(0.25 * part) for part in parts)
    return math_ops.where(huge, 0.0, total - 4.0 * math_ops.floor(0.25 * total))


def _fresnel_slope(trig):
    return lambda x, _: trig((0.5 * _math.pi) * _quarter_turns(x))


register_gradient(
    "Fresnel",
    lambda node, g_s, g_c: (
        g_s * _in_float64(_fresnel_slope(math_ops.sin), None, node.inputs[0], None)
        + g_c * _in_float64(_fresnel_slope(math_ops.cos), None, node.inputs[0], None)
    ),
)

# sin(x) / x = sum_k (-1)**k x**2k / (2k + 1)! and sinh(x) / x (the same, all signs +), to x**6: within 3e-20 of it
# for |x| < _OVER_X_SERIES_BELOW, where their derivatives, by autodiff of the quotient, would cancel.
_OVER_X_SERIES_BELOW = 1e-2
_SIN_OVER_X = [(-1.0) ** k / _math.factorial(2 * k + 1) for k in range(4)]
_SINH_OVER_X = [1.0 / _math.factorial(2 * k + 1) for k in range(4)]


def _odd_over_x(odd, x, series):
    """``odd(x) / x`` for an odd entire function, its Maclaurin ``series`` in x**2 near 0 (1 at 0)."""
    small = math_ops.less(math_ops.abs(x), _OVER_X_SERIES_BELOW)
    xs = math_ops.where(small, 1.0, x)
    return math_ops.where(small, _series(series, math_ops.square(math_ops.where(small, x, 0.0))), odd(xs) / xs)


def _used_slope(g, slope, x):
    """``g * slope(x)``, but 0 where the slope is infinite and ``g`` is 0: an unused output's zero cotangent met Ci's
    and Chi's infinite slope at 0 (or Shi's and Chi's past overflow), and 0 * inf made the other output's gradient
    NaN, to every order.  There ``slope`` sees x = 1.  Elsewhere linear in ``g`` (forward mode differentiates it
    in ``g`` at 0)."""
    lost = math_ops.logical_and(math_ops.equal(g, 0.0), math_ops.logical_not(floating.isfinite(slope(x))))
    xs = math_ops.where(lost, 1.0, x)
    return math_ops.where(lost, 0.0, g * slope(xs))


def _integrals_rule(odd, even, series):
    """The rule of the (odd, even) integral pairs (Si, Ci) and (Shi, Chi): slopes ``odd(x) / x`` and ``even(x) / x``."""

    def rule(node, g_odd, g_even):
        # at +-inf the slopes' limits (sin(x) / x -> 0, cosh(x) / x -> +-inf) are their values at the largest
        # finite x; at inf itself sin(x) is NaN (Si' and Ci' were NaN there, Shi' and Chi' inf / inf)
        x = elementwise.nan_to_num(node.inputs[0], nan=_math.nan)
        return _used_slope(g_odd, lambda x: _odd_over_x(odd, x, series), x) + _used_slope(
            g_even, lambda x: even(x) / x, x
        )

    return rule


register_gradient("Sici", _integrals_rule(math_ops.sin, math_ops.cos, _SIN_OVER_X))
register_gradient("Shichi", _integrals_rule(elementwise.sinh, elementwise.cosh, _SINH_OVER_X))


def fresnel(x) -> tuple[Tensor, Tensor]:
    """The Fresnel integrals ``(S(x), C(x)) = (int_0^x sin(pi t**2 / 2) dt, int_0^x cos(pi t**2 / 2) dt)``
    (SciPy's and JAX's ``fresnel``, in that order); gradients ``sin(pi x**2 / 2)`` and ``cos(pi x**2 / 2)``.

    >>> import tensorlib as tl
    >>> s, c = tl.special.fresnel(tl.tensor([0.0, 1.0], "float64"))
    >>> s.numpy().round(6).tolist(), c.numpy().round(6).tolist()
    ([0.0, 0.438259], [0.0, 0.779893])
    """
    return apply(_fresnel, (x,))


def sici(x) -> tuple[Tensor, Tensor]:
    """The sine and cosine integrals ``(Si(x), Ci(x))``, ``Si(x) = int_0^x sin(t) / t dt``, ``Ci(x) = gamma + log|x| +
    int_0^x (cos(t) - 1) / t dt`` (SciPy's ``sici`` of a real: ``Ci`` is even, ``-inf`` at 0); gradients
    ``sin(x) / x`` (1 at 0) and ``cos(x) / x``.

    >>> import tensorlib as tl
    >>> si, ci = tl.special.sici(tl.tensor([1.0, -2.0], "float64"))
    >>> si.numpy().round(6).tolist(), ci.numpy().round(6).tolist()
    ([0.946083, -1.605413], [0.337404, 0.422981])
    """
    return apply(_sici, (x,))


def shichi(x) -> tuple[Tensor, Tensor]:
    """The hyperbolic sine and cosine integrals ``(Shi(x), Chi(x))``, ``Shi(x) = int_0^x sinh(t) / t dt``, ``Chi(x) =
    gamma + log|x| + int_0^x (cosh(t) - 1) / t dt`` (SciPy's ``shichi`` of a real: ``Chi`` is even); gradients
    ``sinh(x) / x`` (1 at 0) and ``cosh(x) / x``.

    >>> import tensorlib as tl
    >>> shi, chi = tl.special.shichi(tl.tensor([1.0], "float64"))
    >>> shi.numpy().round(6).tolist(), chi.numpy().round(6).tolist()
    ([1.057251], [0.837867])
    """
    return apply(_shichi, (x,))


# ------------------------------------------------------------------ complete elliptic integrals (parameter m)
_ellipk = _define("EllipticK", "ellipk", inputs=("m",), doc="K(m), the complete elliptic integral of the first kind.")
_ellipe = _define("EllipticE", "ellipe", inputs=("m",), doc="E(m), the complete elliptic integral of the second kind.")

# (E(m) - K(m)) / (2m) = pi/2 sum_{n >= 1} c_n n / (1 - 2n) m**(n - 1), c_n = (binom(2n, n) / 4**n)**2: the
# quotient cancels near m = 0 (1e-8 relative at m = 1e-8), the series (to m**17, within 1e-18 of it) does not.
_ELLIPTIC_SERIES_BELOW = 0.1
_ELLIPTIC_SERIES = [0.5 * _math.pi * (_math.comb(2 * n, n) / 4.0**n) ** 2 * n / (1 - 2 * n) for n in range(1, 19)]


def _e_minus_k_over_2m(m, k_value, e_value):
    """``(E(m) - K(m)) / (2m)``, d/dm E(m); its series near 0 (-pi/8 there); 0 at m = -inf, where E ~ sqrt(-m)
    (the quotient was inf / inf)."""
    small = math_ops.less(math_ops.abs(m), _ELLIPTIC_SERIES_BELOW)
    far = math_ops.equal(m, -_math.inf)
    quotient = (e_value - k_value) / (2.0 * math_ops.where(math_ops.logical_or(small, far), 1.0, m))
    return math_ops.where(
        small, _series(_ELLIPTIC_SERIES, math_ops.where(small, m, 0.0)), math_ops.where(far, 0.0, quotient)
    )


def _ellipk_derivative(m, value):
    """d/dm K(m) = (E - (1 - m) K) / (2m (1 - m)) = ((E - K) / (2m) + K / 2) / (1 - m); +inf at m = 1, where K is (the
    sum was -inf + inf)."""
    slope = (_e_minus_k_over_2m(m, value, ellipe(m)) + 0.5 * value) / (1.0 - m)
    return math_ops.where(math_ops.equal(m, 1.0), _math.inf, slope)


def _ellipe_derivative(m, value):
    return _e_minus_k_over_2m(m, ellipk(m), value)


register_gradient(
    "EllipticK", lambda node, g: g * _in_float64(_ellipk_derivative, ellipk, node.inputs[0], node.outputs[0])
)
register_gradient(
    "EllipticE", lambda node, g: g * _in_float64(_ellipe_derivative, ellipe, node.inputs[0], node.outputs[0])
)


def ellipk(m) -> Tensor:
    """The complete elliptic integral of the first kind ``K(m) = int_0^(pi/2) (1 - m sin(t)**2)**-1/2 dt`` in SciPy's
    parameter convention (``m = k**2``; ``inf`` at 1, NaN above); gradient ``(E - (1 - m) K) / (2m (1 - m))``
    (``pi / 8`` at 0, from its series there).

    >>> import tensorlib as tl
    >>> round(float(tl.special.ellipk(tl.tensor(0.5, "float64"))), 6)
    1.854075
    >>> round(float(tl.grad(tl.special.ellipk)(tl.tensor(0.0, "float64"))), 6)   # pi / 8
    0.392699
    """
    return apply(_ellipk, (m,))


def ellipe(m) -> Tensor:
    """The complete elliptic integral of the second kind ``E(m) = int_0^(pi/2) (1 - m sin(t)**2)**1/2 dt`` (SciPy's
    parameter convention, ``m = k**2``; NaN above 1); gradient ``(E - K) / (2m)`` (``-pi / 8`` at 0).

    >>> import tensorlib as tl
    >>> round(float(tl.special.ellipe(tl.tensor(0.5, "float64"))), 6)
    1.350644
    """
    return apply(_ellipe, (m,))


# ------------------------------------------------------------------ incomplete elliptic integrals (amplitude phi, parameter m)
_ellipkinc, _ellipeinc = (
    _define(
        op_type,
        name,
        inputs=("phi", "m"),
        doc=f"{symbol}(phi | m), the incomplete elliptic integral of the {kind} kind.",
        kernel=_scipy_kernel(name, in_float64=True),
    )
    for op_type, name, symbol, kind in (
        ("EllipticF", "ellipkinc", "F", "first"),
        ("EllipticEInc", "ellipeinc", "E", "second"),
    )
)


# Gauss-Legendre on [0, p] for the second derivatives in m where |m sin(p)**2| <= 1/2: the integrand's poles, sin(t)**2
# = 1 / m, lie at least 2.8 half-lengths from the interval there, so 32 nodes leave an error below 1e-40
_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(32)


def _sine_fourth_integral(p, m, power):
    """``int_0^p sin(t)**4 (1 - m sin(t)**2)**(-power / 2) dt`` by Gauss-Legendre (terms of one sign: no cancellation
    for a small p)."""
    t = p[..., None] * (0.5 * (_GAUSS_NODES + 1.0))
    square = np.sin(t) ** 2
    integrand = square * square * (1.0 - m[..., None] * square) ** (-0.5 * power)
    return 0.5 * p * np.sum(_GAUSS_WEIGHTS * integrand, axis=-1)


def _elliptic_inc_partials_in_m(phi, m, wrt=None):
    """``(dF/dm, dE/dm, d2F/dm2, d2E/dm2)`` of F(phi | m) and E(phi | m) in float64 (only the one ``wrt`` if given).
    dE/dm = (E - F) / (2m) = -1/2 int_0^phi sin(t)**2 / sqrt(1 - m sin(t)**2) dt, Carlson's -sin(p)**3 / 6
    R_D(cos(p)**2, 1 - m sin(p)**2, 1) for p = phi - k pi in [-pi/2, pi/2], plus k times the complete integral's (the
    quotient cancels near m = 0); dF/dm = (dE/dm + F / 2 - sin(phi) cos(phi) / (2 sqrt(1 - m sin(phi)**2))) / (1 - m).
    The second: d2E/dm2 = -1/4 int sin**4 / delta**3 and d2F/dm2 = 3/4 int sin**4 / delta**5 (delta**2 = 1 - m sin**2),
    by _sine_fourth_integral where |m sin(p)**2| <= 1/2 (and |m| < 1/2 if k != 0), elsewhere from the first: d2E/dm2 =
    -(dE/dm + dF/dm) / (2m), d2F/dm2 = (3/2 dF/dm + d2E/dm2 - sin(phi)**3 cos(phi) / (4 delta**3)) / (1 - m), which
    cancel only where m or p is small."""
    sp = scipy_special()
    phi64, m64 = np.broadcast_arrays(phi.astype(np.float64), m.astype(np.float64))
    with np.errstate(all="ignore"):
        turns = np.round(phi64 / np.pi)
        p = phi64 - turns * np.pi
        s, c = np.sin(p), np.cos(p)
        whole = np.where(turns == 0, 0.0, turns / 3.0 * sp.elliprd(0.0, 1.0 - m64, 1.0))  # NaN for m > 1
        by_e = -(s**3 / 6.0) * sp.elliprd(c * c, 1.0 - m64 * s * s, 1.0) - whole
        delta = np.sqrt(1.0 - m64 * s * s)
        by_f = (by_e + 0.5 * sp.ellipkinc(phi64, m64) - s * c / (2.0 * delta)) / (1.0 - m64)
        if wrt is not None and wrt < 2:
            return (by_f, by_e)[wrt]
        quadrature = (np.abs(m64) * s * s <= 0.5) & ((turns == 0) | (np.abs(m64) < 0.5))
        mq, pq = np.where(quadrature, m64, 0.0), np.where(quadrature, p, 0.0)
        half = np.full_like(pq, 0.5 * np.pi)

        def integral(power):
            return _sine_fourth_integral(pq, mq, power) + 2.0 * turns * _sine_fourth_integral(half, mq, power)

        by_ee = np.where(quadrature, -0.25 * integral(3), -(by_e + by_f) / (2.0 * m64))
        by_ff = np.where(
            quadrature,
            0.75 * integral(5),
            (1.5 * by_f + by_ee - s**3 * c / (4.0 * delta**3)) / (1.0 - m64),
        )
    partials = (by_f, by_e, by_ff, by_ee)
    return partials if wrt is None else partials[wrt]


_elliptic_inc_by_m = _define_partials(
    "EllipticIncGradM",
    ("phi", "m"),
    _elliptic_inc_partials_in_m,
    "d/dm of the incomplete elliptic integral F(phi | m) (wrt=0) or E(phi | m) (wrt=1); d2/dm2 of F (2) or E (3).",
    "scipy.special.elliprd; the Array API standard has no special functions",
    picks=True,
)


def _delta_squared(phi, m):
    return 1.0 - m * math_ops.square(math_ops.sin(phi))


def _by_m_then_phi(node, g):
    """d/dphi of the partials in m: d/dm (1 / delta) = sin(phi)**2 / (2 delta**3) for dF/dm, d/dm delta = -sin(phi)**2 /
    (2 delta) for dE/dm, and their derivatives in m, 3 sin(phi)**4 / (4 delta**5) and -sin(phi)**4 / (4 delta**3)."""
    phi, m = node.inputs
    square, sine_square = _delta_squared(phi, m), math_ops.square(math_ops.sin(phi))
    wrt = node.attrs["wrt"]
    power = (3.0, 1.0, 5.0, 3.0)[wrt]
    factor = (
        0.5 * sine_square,
        -0.5 * sine_square,
        0.75 * math_ops.square(sine_square),
        -0.25 * math_ops.square(sine_square),
    )[wrt]
    return g * factor / square ** (0.5 * power)


def _by_m_then_m(node, g):
    """The second derivative in m (from the first); the third raises."""
    wrt = node.attrs["wrt"]
    if wrt >= 2:
        raise LookupError(
            "EllipticIncGradM: the third derivatives of ellipkinc and ellipeinc in m are not implemented; the first "
            "and second in m and those of every order in phi are"
        )
    return g * apply(_elliptic_inc_by_m, node.inputs, {"wrt": wrt + 2})


register_gradient("EllipticIncGradM", _by_m_then_phi, _by_m_then_m)
register_gradient(
    "EllipticF",
    lambda node, g: g / math_ops.sqrt(_delta_squared(*node.inputs)),
    lambda node, g: g * apply(_elliptic_inc_by_m, node.inputs, {"wrt": 0}),
)
register_gradient(
    "EllipticEInc",
    lambda node, g: g * math_ops.sqrt(_delta_squared(*node.inputs)),
    lambda node, g: g * apply(_elliptic_inc_by_m, node.inputs, {"wrt": 1}),
)


def ellipkinc(phi, m) -> Tensor:
    """The incomplete elliptic integral of the first kind ``F(phi | m) = int_0^phi (1 - m sin(t)**2)**-1/2 dt`` (SciPy's
    ``ellipkinc``, parameter ``m = k**2``).  Differentiable in ``phi`` to every order (``(1 - m sin(phi)**2)**-1/2``)
    and in ``m`` twice (``EllipticIncGradM``: Carlson's R_D, and Gauss-Legendre for the second; no cancellation at
    m = 0).

    >>> import tensorlib as tl
    >>> round(float(tl.special.ellipkinc(tl.tensor(1.0, "float64"), 0.5)), 6)
    1.083217
    """
    return apply(_ellipkinc, (phi, m))


def ellipeinc(phi, m) -> Tensor:
    """The incomplete elliptic integral of the second kind ``E(phi | m) = int_0^phi (1 - m sin(t)**2)**1/2 dt`` (SciPy's
    ``ellipeinc``).  Differentiable in ``phi`` to every order (``(1 - m sin(phi)**2)**1/2``) and in ``m`` twice
    (``(E - F) / (2m)``, from Carlson's R_D).

    >>> import tensorlib as tl
    >>> round(float(tl.special.ellipeinc(tl.tensor(1.0, "float64"), 0.5)), 6)
    0.92733
    """
    return apply(_ellipeinc, (phi, m))


# ------------------------------------------------------------------ Jacobi's elliptic functions
def _ellipj_infer(u, m):
    out = spec(broadcast_shapes(u.shape, m.shape), _result_dtype(u.dtype, m.dtype))
    return out, out, out, out


def _ellipj_kernel(u, m):
    """SciPy's ``ellipj`` in float64, each output rounded once to the rule's dtype."""
    dtype = _result_dtype(u.dtype, m.dtype)
    return tuple(
        np.asarray(out).astype(dtype, copy=False)
        for out in scipy_special().ellipj(u.astype(np.float64), m.astype(np.float64))
    )


_ellipj = defop(
    "EllipticJ",
    inputs=("u", "m"),
    infer=_ellipj_infer,
    promote=(0, 1),
    doc="Jacobi's elliptic functions (sn, cn, dn, ph) of u for the parameter m.",
)
_ellipj.kernel("numpy")(_ellipj_kernel)
_ellipj.kernels_reason = "scipy.special.ellipj; the Array API standard has no special functions"


def _ellipj_by_u(node, g_sn, g_cn, g_dn, g_ph):
    """sn' = cn dn, cn' = -sn dn, dn' = -m sn cn, ph' = dn."""
    m = node.inputs[1]
    sn, cn, dn, _ = node.outputs
    return g_sn * cn * dn - g_cn * sn * dn - g_dn * m * sn * cn + g_ph * dn


def _ellipj_by_m(node, g_sn, g_cn, g_dn, g_ph):
    """ph = am(u | m) solves F(ph | m) = u: d ph / dm = -dn dF/dm (at ph; ``EllipticIncGradM``, once), then sn_m = cn
    ph_m, cn_m = -sn ph_m and, from dn**2 = 1 - m sn**2, dn_m = -(sn**2 + 2 m sn sn_m) / (2 dn)."""
    m = node.inputs[1]
    sn, cn, dn, ph = node.outputs
    by_m = -dn * apply(_elliptic_inc_by_m, (ph, m), {"wrt": 0})
    return (g_sn * cn - g_cn * sn - g_dn * m * sn * cn / dn + g_ph) * by_m - g_dn * math_ops.square(sn) / (2.0 * dn)


register_gradient("EllipticJ", _ellipj_by_u, _ellipj_by_m)


def ellipj(u, m) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Jacobi's elliptic functions ``(sn, cn, dn, ph)`` of ``u`` for the parameter ``m`` in [0, 1] (SciPy's ``ellipj``:
    ``ph = am(u | m)``, the amplitude, ``sn = sin(ph)``, ``cn = cos(ph)``, ``dn = sqrt(1 - m sn**2)``; NaN outside).
    Differentiable in ``u`` to every order (``sn' = cn dn``, ...) and in ``m`` twice (through ``dF/dm`` of the
    amplitude).

    >>> import tensorlib as tl
    >>> [round(float(v), 6) for v in tl.special.ellipj(tl.tensor(0.5, "float64"), 0.3)]
    [0.474216, 0.880409, 0.965679, 0.494073]
    """
    return apply(_ellipj, (u, m))


# ------------------------------------------------------------------ Lambert's W
def _lambertw_kernel(x, *, k, tol):
    """SciPy's complex ``lambertw`` on the real line: its real value where that is real, NaN elsewhere (x < -1/e,
    and x >= 0 on the branch k = -1, where W is complex)."""
    dtype = _result_dtype(x.dtype)
    out = np.asarray(scipy_special().lambertw(x.astype(np.float64), k, tol))
    real = np.where(out.imag == 0, out.real, np.nan)
    return real.astype(dtype, copy=False)


_lambertw = defop(
    "LambertW",
    inputs=("x",),
    attrs={"k": 0, "tol": 1e-8},
    infer=_elementwise_infer,
    doc="Lambert's W, the branch k (0 or -1) of the inverse of w exp(w), on the real line.",
)
_lambertw.kernel("numpy")(_lambertw_kernel)
_lambertw.kernels_reason = "scipy.special.lambertw; the Array API standard has no special functions"


def _lambertw_grad(node, g):
    """W' = W / (x (1 + W)) = exp(-W) / (1 + W) (x = W exp(W)): that form on the principal branch (1 at x = 0,
    where the first is 0 / 0); the first on k = -1, where W reaches -inf and exp(-W) overflows."""
    branch, tol = node.attrs["k"], node.attrs["tol"]

    def derivative(x, w):
        if branch == 0:
            return math_ops.exp(-w) / (1.0 + w)
        return math_ops.where(math_ops.equal(x, 0.0), -_math.inf, w / (x * (1.0 + w)))  # -inf at 0 (W = -inf)

    return g * _in_float64(derivative, lambda x: lambertw(x, branch, tol), node.inputs[0], node.outputs[0])


register_gradient("LambertW", _lambertw_grad)


def lambertw(x, k: int = 0, tol: float = 1e-8) -> Tensor:
    """Lambert's W function, ``w`` with ``w exp(w) = x``, on the real line: the principal branch ``k = 0`` for ``x >=
    -1/e`` and the branch ``k = -1`` for ``-1/e <= x < 0`` (``-inf`` at 0).  SciPy's ``lambertw`` returns complex
    numbers; this is their real part where they are real, NaN elsewhere.  Gradient ``W / (x (1 + W))`` (1 at x = 0
    on the principal branch), computed in float64 for float32 (near -1/e, ``1 + W`` cancels).

    >>> import tensorlib as tl
    >>> round(float(tl.special.lambertw(tl.tensor(1.0, "float64"))), 6)   # the omega constant
    0.567143
    >>> round(float(tl.special.lambertw(tl.tensor(-0.2, "float64"), k=-1)), 6)
    -2.542641
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k not in (0, -1):
        raise ValueError(f"lambertw: the branch k must be 0 or -1 (the real branches), got {k!r:.60}")
    return apply(_lambertw, (x,), {"k": int(k), "tol": float(tol)})


# ------------------------------------------------------------------ Kummer's confluent hypergeometric function
_HYP1F1_SCIPY_LOOPS_FROM = 1e8  # SciPy's time grows like x: 0.1 s at x = 1e11, and it never returns at inf
_LOG_MAX = _math.log(np.finfo(np.float64).max)


def _hyp1f1_kernel(a, b, x):
    """SciPy's ``hyp1f1`` in float64, except where it overflows for x > 0: there, and without calling SciPy from x =
    _HYP1F1_SCIPY_LOOPS_FROM on where the leading term ``Gamma(b) / Gamma(a) exp(x) x**(a - b)`` overflows, the
    sign of that term times inf (SciPy gave +inf for 1F1(-1/2; 3/2; 1000) = -4.9e427 and did not return at x = inf
    or 1e15); that term leads where x >> |a| + |b|.  Past k = max(-a, -b) the series' terms have the sign of Gamma(b) / Gamma(a); a polynomial (a a
    non-positive integer) is left to SciPy."""
    sp = scipy_special()
    dtype = _result_dtype(a.dtype, b.dtype, x.dtype)
    a, b, x = np.broadcast_arrays(*(v.astype(np.float64) for v in (a, b, x)))
    series = ~((a <= 0) & (a == np.floor(a))) & (x > 0)
    with np.errstate(all="ignore"):
        leading = x + (a - b) * np.log(x) + sp.gammaln(b) - sp.gammaln(a)
        asymptotic = (x >= _HYP1F1_SCIPY_LOOPS_FROM) & (x >= 100.0 * (np.abs(a) + np.abs(b)))
        far = series & asymptotic & ~(leading <= _LOG_MAX)  # NaN (at x = inf) is far
        out = np.asarray(sp.hyp1f1(a, b, np.where(far, 0.0, x)), np.float64)
        sign = sp.gammasgn(a) * sp.gammasgn(b)
    out = np.where(far | (series & np.isinf(out)), sign * np.inf, out)
    return out.astype(dtype, copy=False)


_hyp1f1 = _define(
    "Hyp1f1",
    "hyp1f1",
    inputs=("a", "b", "x"),
    doc="Kummer's confluent hypergeometric function 1F1(a; b; x).",
    kernel=_hyp1f1_kernel,
)


_HYP1F1_MAX_TERMS = 100000  # the series in |x| peaks near k = |x| and has converged by |x| + 40 sqrt(|x|) + 100
_HYP1F1_RESCALE = 1e250  # terms past it are rescaled (their count kept): exp(|x|) of |x| = 5000 has 2172 digits


def _kummer_series(a, b, y, second):
    """``(log scale, F, F_a, F_b)`` (and ``F_aa, F_ab, F_bb`` if ``second``) of ``F = 1F1(a; b; y) = scale sum_k t_k``
    in float64 for y >= 0, ``t_{k+1} = t_k (a + k) s_k``, ``s_k = y / ((b + k)(k + 1))``, differentiated along the
    recurrence (no division by a + k): ``d/da`` of ``(a + k) s_k`` is ``s_k``, ``d/db`` of ``s_k`` is ``-s_k / (b +
    k)``, of that ``2 s_k / (b + k)**2``.  Raises where the series has not converged after _HYP1F1_MAX_TERMS terms.
    Its terms change sign only while a + k or b + k is negative, so the cancellation is that of the first max(-a, -b)
    terms."""
    # the terms and their d/da, d/db (then d2/da2, d2/dadb, d2/db2)
    terms = [np.ones_like(y)] + [np.zeros_like(y) for _ in range(5 if second else 2)]
    sums = [term.copy() for term in terms]
    log_scale = np.zeros_like(y)
    undefined = ~np.isfinite(a + b + y) | ((b <= 0) & (b == np.round(b)))
    done = undefined.copy()
    for k in range(_HYP1F1_MAX_TERMS):
        step, over, rising = y / ((b + k) * (k + 1.0)), 1.0 / (b + k), a + k
        t, u, v = terms[:3]
        new = [t * rising * step, (u * rising + t) * step, (v - t * over) * rising * step]
        if second:
            p, q, r = terms[3:]
            new += [
                (p * rising + 2.0 * u) * step,
                (q * rising + v - (u * rising + t) * over) * step,
                (r - 2.0 * v * over + 2.0 * t * over * over) * rising * step,
            ]
        terms = new
        sums = [total + term for total, term in zip(sums, terms)]
        small = np.logical_and.reduce([np.abs(term) <= 1e-17 * np.abs(total) for term, total in zip(terms, sums)])
        done |= (k > y) & (k + a > 0) & (k + b > 0) & small
        if done.all():
            break
        big = np.abs(sums[0]) > _HYP1F1_RESCALE
        if big.any():
            shrink = np.where(big, 1.0 / _HYP1F1_RESCALE, 1.0)
            terms, sums = [w * shrink for w in terms], [w * shrink for w in sums]
            log_scale = log_scale + np.where(big, _math.log(_HYP1F1_RESCALE), 0.0)
    if not done.all():
        where = np.flatnonzero(~done)[0]
        raise ValueError(
            f"the series of the derivatives of hyp1f1 in a and b did not converge in {_HYP1F1_MAX_TERMS} terms at "
            f"a = {float(a.flat[where])!r}, b = {float(b.flat[where])!r}, |x| = {float(y.flat[where])!r} (it takes "
            "about |x| terms); differentiate in x only there"
        )
    return (log_scale, sums[0], *(np.where(undefined, np.nan, d) for d in sums[1:]))


# Hyp1f1Grad's ``wrt``: the derivative's orders (in a, in b)
_HYP1F1_ORDERS = ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2))


def _hyp1f1_partials(a, b, x, wrt=None):
    """``(F_a, F_b, F_aa, F_ab, F_bb)``, the partials of ``F = 1F1(a; b; x)`` in its parameters (orders _HYP1F1_ORDERS;
    only the one ``wrt`` if given, the series of the second only when it is one of them), in float64: the series of the
    derivatives where x >= 0; Kummer's transformation ``F(a; b; x) = exp(x) G(b - a; b; -x)`` where x < 0 (its terms
    have one sign from k = a - b on; those of F(a; b; x) alternate and cancel like exp(|x|)), so ``F_a = -e**x G_1``,
    ``F_b = e**x (G_1 + G_2)``, ``F_aa = e**x G_11``, ``F_ab = -e**x (G_11 + G_12)``, ``F_bb = e**x (G_11 + 2 G_12 +
    G_22)``, with G's partials in its two parameters."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    negative = x < 0
    second = wrt is None or wrt >= 2
    log_scale, _, g1, g2, *g = _kummer_series(np.where(negative, b - a, a), b, np.abs(x), second)
    transformed, same = [-g1, g1 + g2], [g1, g2]
    if second:
        g11, g12, g22 = g
        transformed, same = transformed + [g11, -(g11 + g12), g11 + 2.0 * g12 + g22], same + g
    partials = [np.where(negative, d, kept) for d, kept in zip(transformed, same)]
    log_scale = log_scale + np.where(negative, x, 0.0)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        partials = tuple(np.sign(d) * np.exp(np.log(np.abs(d)) + log_scale) for d in partials)
    return partials if wrt is None else partials[wrt]


_hyp1f1_grad = _define_partials(
    "Hyp1f1Grad",
    ("a", "b", "x"),
    _hyp1f1_partials,
    "A partial derivative of Kummer's function 1F1(a; b; x) in a and b, of the orders _HYP1F1_ORDERS[wrt] (d/da, d/db, "
    "d2/da2, d2/dadb, d2/db2), from the series of the derivatives.",
    "a NumPy series; the Array API standard has no special functions",
    picks=True,
)


def _hyp1f1_partial(a, b, x, orders):
    """``d^i/da^i d^j/db^j 1F1(a; b; x)`` for ``orders = (i, j)`` (``(0, 0)``: the function)."""
    if orders == (0, 0):
        return hyp1f1(a, b, x)
    return apply(_hyp1f1_grad, (a, b, x), {"wrt": _HYP1F1_ORDERS.index(orders)})


def _a_over_b_partial(a, b, i, j):
    """``d^i/da^i d^j/db^j (a / b)``: ``(a, 1, 0)[i] (-1)**j j! / b**(j + 1)``."""
    if i > 1:
        return None
    return (a if i == 0 else 1.0) * ((-1.0) ** j * _math.factorial(j)) / b ** (j + 1)


def _hyp1f1_grad_by_parameter(by):
    """The rule in ``a`` (``by`` 0) or ``b`` (1) of Hyp1f1Grad: one order more, up to two in all; the third raises."""

    def rule(node, g):
        orders = list(_HYP1F1_ORDERS[node.attrs["wrt"]])
        orders[by] += 1
        if sum(orders) > 2:
            raise LookupError(
                "Hyp1f1Grad: the third derivatives of hyp1f1 in a and b are not implemented (JAX has no first); the "
                "first and second derivatives in a and b, and those of every order in x, are"
            )
        return g * _hyp1f1_partial(*node.inputs, tuple(orders))

    return rule


def _hyp1f1_grad_by_x(node, g):
    """d/dx of ``d^i/da^i d^j/db^j F`` = the same partial of ``(a / b) F(a + 1; b + 1; x)``, by Leibniz's rule."""
    a, b, x = node.inputs
    i, j = _HYP1F1_ORDERS[node.attrs["wrt"]]
    total = None
    for i1 in range(i + 1):
        for j1 in range(j + 1):
            factor = _a_over_b_partial(a, b, i1, j1)
            if factor is None:
                continue
            term = (
                _math.comb(i, i1) * _math.comb(j, j1) * factor * _hyp1f1_partial(a + 1.0, b + 1.0, x, (i - i1, j - j1))
            )
            total = term if total is None else total + term
    return g * total


def _hyp1f1_by_x(node, g):
    a, b, x = node.inputs
    return g * (a / b) * hyp1f1(a + 1.0, b + 1.0, x)


register_gradient("Hyp1f1Grad", _hyp1f1_grad_by_parameter(0), _hyp1f1_grad_by_parameter(1), _hyp1f1_grad_by_x)
register_gradient(
    "Hyp1f1",
    lambda node, g: g * _hyp1f1_partial(*node.inputs, (1, 0)),
    lambda node, g: g * _hyp1f1_partial(*node.inputs, (0, 1)),
    _hyp1f1_by_x,
)


def hyp1f1(a, b, x) -> Tensor:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / ((b)_k k!) x**k`` (SciPy's
    ``hyp1f1``); differentiable in ``x`` to every order, ``(a / b) 1F1(a + 1; b + 1; x)``, as
    ``jax.scipy.special.hyp1f1``, and in ``a`` and ``b`` to the second order (``Hyp1f1Grad``, the series of the
    derivatives, ``sum_k (a)_k / ((b)_k k!) x**k (psi(a + k) - psi(a))`` in ``a``, on Kummer's transformation for
    ``x < 0``; JAX has none; the third order raises LookupError), raising ValueError where that series does not converge (``|x|`` near 1e5).

    >>> import tensorlib as tl
    >>> round(float(tl.special.hyp1f1(tl.tensor(1.0, "float64"), 2.0, 1.0)), 6)   # (e - 1) / 1
    1.718282
    >>> [round(float(g), 6) for g in tl.grad(tl.special.hyp1f1, argnums=(0, 1))(1.0, 2.0, 1.0)]
    [0.84748, -0.4471]
    """
    return apply(_hyp1f1, (a, b, x))


# ------------------------------------------------------------------ Bernoulli numbers
def bernoulli(n: int) -> Tensor:
    """The Bernoulli numbers ``B_0 ... B_n`` (``B_1 = -1/2``) as a float64 tensor of ``n + 1`` elements, SciPy's and
    JAX's ``bernoulli``: exact rationals (the Akiyama-Tanigawa recurrence), each rounded once.  Not differentiable
    (a constant of ``n``).

    >>> import tensorlib as tl
    >>> tl.special.bernoulli(4).numpy().round(6).tolist()
    [1.0, -0.5, 0.166667, 0.0, -0.033333]
    """
    from .creation import tensor

    if isinstance(n, Tensor):
        if n.is_symbolic or n.ndim:
            raise TypeError(f"bernoulli: n must be a known integer, got a tensor of shape {n.shape} ({n.dtype})")
        n = n.numpy().item()
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"bernoulli: n must be a non-negative integer, got {n!r:.60}")
    return tensor(np.array([float(b) for b in _bernoulli_numbers(int(n))], np.float64))


def _bernoulli_numbers(n: int) -> list:
    """B_0 ... B_n as Fractions (B_1 = -1/2) by Akiyama and Tanigawa's algorithm, which gives B_1 = +1/2."""
    row, out = [Fraction(0)] * (n + 1), []
    for m in range(n + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    if n >= 1:
        out[1] = -out[1]
    return out


# ------------------------------------------------------------------ Bessel functions of real order
# SciPy's jv, yv, iv, kv, ive, kve (order v, argument x): differentiable in x to every order by the recurrences,
# written with the functions themselves; in the order, a clear LookupError (torch.special and jax.scipy.special
# have none either).
_BESSEL_REAL_ORDER = {
    "jv": ("BesselJv", "J_v(x), the Bessel function of the first kind of real order v."),
    "yv": ("BesselYv", "Y_v(x), the Bessel function of the second kind of real order v."),
    "iv": ("BesselIv", "I_v(x), the modified Bessel function of the first kind of real order v."),
    "kv": ("BesselKv", "K_v(x), the modified Bessel function of the second kind of real order v."),
    "ive": ("BesselIve", "exp(-|x|) I_v(x), the exponentially scaled modified Bessel function of the first kind."),
    "kve": ("BesselKve", "exp(x) K_v(x), the exponentially scaled modified Bessel function of the second kind."),
}
_HANKEL_TERMS = 10


def _hankel_sums(v, x, sign):
    """``(S, S')`` for the scaled ``f`` = ive (``sign`` -1) or kve (+1) at ``x >= 4 v**2 + (2 K + 1)**2`` (K =
    ``_HANKEL_TERMS``), Hankel's expansion ``f = c x**-1/2 S``, ``S = sum_k sign**k a_k(v) / x**k``, ``a_k = prod_{j <=
    k} (4 v**2 - (2 j - 1)**2) / (8 j)``, and ``S' = d/dx (x**-1/2 S) / x**-1/2``: each ratio of terms is below 1 / (8 k)
    there, so the first omitted one is below 1e-17.  Arithmetic only: NumPy arrays (the kernels) or Tensors (the
    gradients)."""
    term, total, slope = 1.0, 1.0, -0.5 / x
    for k in range(1, _HANKEL_TERMS + 1):
        term = term * (sign * (4.0 * v * v - (2 * k - 1) ** 2) / (8 * k)) / x
        total, slope = total + term, slope - (k + 0.5) * term / x
    return total, slope


def _hankel_reach(v):
    return 4.0 * v * v + (2 * _HANKEL_TERMS + 1) ** 2


# The uniform (Debye) expansion of ive / kve: from order 50 its first omitted term (U_11 / v**11) is below 1e-18.
_DEBYE_FROM = 50.0
_DEBYE_TERMS = 10


def _debye_polynomials(count):
    """Debye's polynomials ``U_0 .. U_count`` in ``p`` (ascending coefficients), by DLMF 10.41.9: ``U_{k+1} = p**2 (1 -
    p**2) U_k' / 2 + int_0^p (1 - 5 t**2) U_k(t) dt / 8``, in exact fractions."""
    polynomials = [[Fraction(1)]]
    for _ in range(count):
        u = polynomials[-1]
        nxt = [Fraction(0)] * (len(u) + 3)
        for i, c in enumerate(u):
            if i:
                nxt[i + 1] += i * c / 2
                nxt[i + 3] -= i * c / 2
            nxt[i + 1] += c / (8 * (i + 1))
            nxt[i + 3] -= 5 * c / (8 * (i + 3))
        polynomials.append(nxt)
    return [tuple(float(c) for c in u) for u in polynomials]


_DEBYE_U = _debye_polynomials(_DEBYE_TERMS)


def _debye_sums(v, p, sign):
    """``(S, dS/dp)``, ``S = sum_k sign**k U_k(p) / v**k`` (``sign`` 1 for ive, -1 for kve).  Arithmetic only: NumPy
    arrays (the kernels) or Tensors (the gradients)."""
    total = slope = 0.0
    scale = 1.0
    for coefficients in _DEBYE_U:
        value = derivative = 0.0
        for c in reversed(coefficients):
            derivative = derivative * p + value
            value = value * p + c
        total, slope = total + scale * value, slope + scale * derivative
        scale = scale * sign / v
    return total, slope


def _debye_value(v, x, ive):
    """ive(v, x) or kve for ``x > 0``, ``v >= _DEBYE_FROM``, by the uniform expansion (DLMF 10.41.3-4): with ``z = x /
    v``, ``s = sqrt(1 + z**2)``, ``p = 1 / s``, ``I_v(v z) e**-x = e**(v (eta - z)) sqrt(p / (2 pi v)) S``, ``eta - z =
    t - log1p((1 + t) / z)``, ``t = s - z = 1 / (s + z)`` (no difference of large terms), ``K`` with ``e**(-v (eta -
    z))``, ``sqrt(pi p / (2 v))`` and the alternating ``S``."""
    z = x / v
    s = np.hypot(1.0, z)
    t, p = 1.0 / (s + z), 1.0 / s
    exponent = v * (t - np.log1p((1.0 + t) / z))
    total, _ = _debye_sums(v, p, 1.0 if ive else -1.0)
    if ive:
        return np.exp(exponent) * np.sqrt(p / (2.0 * np.pi * v)) * total
    return np.exp(-exponent) * np.sqrt(np.pi * p / (2.0 * v)) * total


def _debye_log_slope(v, x, ive):
    """``f' / f`` of ive (``ive``) or kve at ``x > 0`` by the uniform expansion, in tensorlib ops: ``+-t / z - z p**2 / (2
    v) - z p**3 / v S' / S`` (``_debye_value``'s terms differentiated; each is small where f' is, next to x = v**2, so
    the slope keeps its digits where the recurrence's ``(f_{v-1} + f_{v+1}) / 2 - f`` cancelled: 1e-6 relative of
    f / x at v = 1e5)."""
    z = x / v
    s = math_ops.sqrt(1.0 + z * z)
    t, p = 1.0 / (s + z), 1.0 / s
    total, slope = _debye_sums(v, p, 1.0 if ive else -1.0)
    return (t if ive else -t) / z - z * p * p / (2.0 * v) - z * p * p * p / v * slope / total


def _scaled_bessel_kernel(name):
    """SciPy's ive / kve, and past AMOS's range (|x| above about 1.07e9, where SciPy gives NaN: ive(0, 1e12) for
    3.99e-7) Hankel's expansion ``_hankel_sums``, with ive's parity for an integer order at x < 0."""
    scipy_kernel = _scipy_kernel(name, in_float64=True)
    ive = name == "ive"

    def kernel(v, x):
        out = scipy_kernel(v, x)
        v, x = np.broadcast_arrays(v.astype(np.float64), x.astype(np.float64))
        size = np.abs(x) if ive else x
        with np.errstate(invalid="ignore"):
            # AMOS's NaN from |x| ~ 1.07e9 (ive(1e5, 5e9) is 1.17e-6): Hankel's expansion beyond its reach, Debye's
            # uniform one below it for an order from 50
            missing = np.isnan(out) & np.isfinite(x) & (size > 0)
            hankel = missing & (size >= _hankel_reach(v))
            debye = missing & ~hankel & (v >= _DEBYE_FROM)
            beyond = hankel | debye
            odd = (v % 2) == 1
            if ive:
                beyond &= (x > 0) | (v == np.floor(v))
        if not beyond.any():
            return out
        v, size, flip, uniform = v[beyond], size[beyond], (x[beyond] < 0) & odd[beyond], debye[beyond]
        with np.errstate(all="ignore"):  # each formula at the other's points
            total, _ = _hankel_sums(v, size, -1.0 if ive else 1.0)
            value = total / np.sqrt(2.0 * np.pi * size) if ive else total * np.sqrt(np.pi / (2.0 * size))
            value = np.where(uniform, _debye_value(v, size, ive), value)
        out = np.array(out)
        out[beyond] = np.where(flip, -value, value)
        return out

    kernel.__name__ = kernel.__qualname__ = f"scipy_{name}_or_hankel"
    return kernel


_bessel_ops = {
    name: _define(
        op_type,
        name,
        inputs=("v", "x"),
        doc=doc,
        kernel=_scaled_bessel_kernel(name) if name in ("ive", "kve") else _scipy_kernel(name, in_float64=True),
    )
    for name, (op_type, doc) in _BESSEL_REAL_ORDER.items()
}


def _no_gradient_in_the_order(op_type):
    return _refuse(
        f"{op_type}: the derivative in the order v is not implemented (torch.special and jax.scipy.special have "
        "none either); the derivatives of every order in x are"
    )


def _neighbours(name, v, x):
    """``(f(v - 1, x), f(v + 1, x))`` for the Bessel function ``name``."""
    op = _bessel_ops[name]
    return apply(op, (v - 1.0, x)), apply(op, (v + 1.0, x))


def _scaled_log_slope(v, x, sign):
    """``f' / f`` of the scaled ive (``sign`` -1) or kve (+1) at ``x`` within Hankel's reach (``_hankel_sums``)."""
    total, slope = _hankel_sums(v, x, sign)
    return slope / total


def _bessel_slope(name, v, x, value):
    """d/dx by the recurrences: J' = (J_{v-1} - J_{v+1}) / 2 (Y the same), I' = (I_{v-1} + I_{v+1}) / 2, K' = -(K_{v-1}
    + K_{v+1}) / 2; the scaled ive' = (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive and kve' = -(kve_{v-1} + kve_{v+1}) / 2
    + kve, except at a large ``|x|``: there the scaled slopes are O(1 / x) differences of O(1) terms (ive'(0, 1e7)
    was 1e-9 relative off, its second derivative 3%, at 1e9 1.6e-7 and 180 times off), and ``value`` times the
    log-slope of Hankel's expansion (``_scaled_log_slope``; ive of an integer order is even or odd: ``sign(x)`` times
    that of ``|x|``) is exact to the rounding."""
    below, above = _neighbours(name, v, x)
    if name in ("jv", "yv"):
        return 0.5 * (below - above)
    if name == "iv":
        return 0.5 * (below + above)
    if name == "kv":
        return -0.5 * (below + above)
    w = math_ops.where
    reach = _hankel_reach(v)
    size = math_ops.abs(x) if name == "ive" else x
    far = size >= reach
    at = w(far, size, reach)  # a stand-in inside the expansion's reach where the recurrence is used
    # below Hankel's reach, for an order from 50, the uniform expansion's log-slope (the recurrence cancels like x / v)
    uniform = math_ops.logical_and(math_ops.logical_and(math_ops.logical_not(far), v >= _DEBYE_FROM), size > 0)
    order, inside = w(uniform, v, _DEBYE_FROM), w(uniform, size, 1.0)
    if name == "ive":
        asymptotic = math_ops.sign(x) * value * _scaled_log_slope(v, at, -1.0)
        debye = math_ops.sign(x) * value * _debye_log_slope(order, inside, ive=True)
        return w(far, asymptotic, w(uniform, debye, 0.5 * (below + above) - math_ops.sign(x) * value))
    debye = value * _debye_log_slope(order, inside, ive=False)
    return w(far, value * _scaled_log_slope(v, at, 1.0), w(uniform, debye, value - 0.5 * (below + above)))


def _bessel_rule(name):
    """The rule in x, float32's computed in float64 and rounded once: the scaled functions' slopes cancel like x (float32
    kve' was 6e-4 off at x = 1e4, 7% at 1e6; float64 keeps 1e-10 there)."""

    def rule(node, g):
        v, x = node.inputs
        slope = _in_float64(
            lambda x, value: _bessel_slope(name, v, x, value),
            lambda x: apply(_bessel_ops[name], (v, x)),
            x,
            node.outputs[0],
        )
        return g * slope

    return rule


for _name, (_op_type, _) in _BESSEL_REAL_ORDER.items():
    register_gradient(_op_type, _no_gradient_in_the_order(_op_type), _bessel_rule(_name))


def jv(v, x) -> Tensor:
    """The Bessel function of the first kind of real order ``v``, ``J_v(x)`` (SciPy's ``jv``; NaN for x < 0 and
    non-integer v); gradient in ``x`` ``(J_{v-1}(x) - J_{v+1}(x)) / 2``, in ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.jv(0.5, tl.tensor(1.0, "float64"))), 6)   # sqrt(2 / pi) sin(1)
    0.671397
    """
    return apply(_bessel_ops["jv"], (v, x))


def yv(v, x) -> Tensor:
    """The Bessel function of the second kind of real order ``v``, ``Y_v(x)`` (SciPy's ``yv``; -inf at 0, NaN below);
    gradient in ``x`` ``(Y_{v-1}(x) - Y_{v+1}(x)) / 2``, in ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.yv(0.5, tl.tensor(1.0, "float64"))), 6)   # -sqrt(2 / pi) cos(1)
    -0.431099
    """
    return apply(_bessel_ops["yv"], (v, x))


def iv(v, x) -> Tensor:
    """The modified Bessel function of the first kind of real order ``v``, ``I_v(x)`` (SciPy's ``iv``); gradient in
    ``x`` ``(I_{v-1}(x) + I_{v+1}(x)) / 2``, in ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.iv(0.5, tl.tensor(1.0, "float64"))), 6)   # sqrt(2 / pi) sinh(1)
    0.937675
    """
    return apply(_bessel_ops["iv"], (v, x))


def kv(v, x) -> Tensor:
    """The modified Bessel function of the second kind of real order ``v``, ``K_v(x)`` (SciPy's ``kv``; inf at 0, NaN
    below); gradient in ``x`` ``-(K_{v-1}(x) + K_{v+1}(x)) / 2``, in ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.kv(0.5, tl.tensor(1.0, "float64"))), 6)   # sqrt(pi / 2) exp(-1)
    0.461069
    """
    return apply(_bessel_ops["kv"], (v, x))


def ive(v, x) -> Tensor:
    """``exp(-|x|) I_v(x)`` (SciPy's ``ive``), finite where ``iv`` overflows; gradient in ``x`` ``(ive_{v-1}(x) +
    ive_{v+1}(x)) / 2 - sign(x) ive_v(x)``, in ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.ive(0.5, tl.tensor(1000.0, "float64"))), 6)   # about 1 / sqrt(2 pi x)
    0.012616
    """
    return apply(_bessel_ops["ive"], (v, x))


def kve(v, x) -> Tensor:
    """``exp(x) K_v(x)`` (SciPy's ``kve``), finite where ``kv`` underflows; gradient in ``x`` ``kve_v(x) -
    (kve_{v-1}(x) + kve_{v+1}(x)) / 2``, in ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.kve(0.5, tl.tensor(1.0, "float64"))), 6)   # sqrt(pi / 2)
    1.253314
    """
    return apply(_bessel_ops["kve"], (v, x))


# ------------------------------------------------------------------ associated Legendre functions
_lpmv = _define(
    "Lpmv",
    "lpmv",
    inputs=("m", "v", "x"),
    doc="P_v^m(x), the associated Legendre function of integer order m and real degree v (SciPy's lpmv).",
    kernel=_scipy_kernel("lpmv", in_float64=True),
)


def _parity(n):
    """``(-1)**n`` for an integer-valued ``n``; exact for every such float, where ``cos(pi n)`` rounds."""
    return 1.0 - 2.0 * (n - 2.0 * math_ops.floor(0.5 * n))


def _lpmv_slope_at_one(m, v):
    """``d/dx P_v^m`` at x = 1 (from below), from ``P_v^m ~ (-1)**m (1 - x**2)**(m/2) P_v^(m)(1)`` (m >= 0; ``P_v'(1) =
    v (v + 1) / 2``, ``P_v''(1) = (v + 2)(v + 1) v (v - 1) / 8``) and ``P_v^-k ~ ((1 - x) / 2)**(k/2) / k!``: m = 0
    ``v (v + 1) / 2``, m = 1 ``inf`` (its sign), m = 2 ``-2 P_v''(1)``, m = -1 ``-inf``, m = -2 ``-1/4``, else 0."""
    w = math_ops.where
    vv = v * (v + 1.0)
    first = w(vv == 0.0, 0.0, math_ops.sign(vv) * _math.inf)
    second = -0.25 * (v + 2.0) * (v + 1.0) * v * (v - 1.0)
    return w(
        m == 0.0,
        0.5 * vv,
        w(m == 1.0, first, w(m == 2.0, second, w(m == -1.0, -_math.inf, w(m == -2.0, -0.25, 0.0 * vv)))),
    )


def _lpmv_slope(m, v, x, value):
    """d/dx P_v^m(x): ``-(m x P_v^m / (1 - x**2) + P_v^(m+1) / sqrt(1 - x**2))`` for |x| < 1 (from the definition
    ``(-1)**m (1 - x**2)**(m/2) d^m P_v / dx^m``; one term for m = 0, and no cancellation next to +-1, where ``(v x P_v^m
    - (v + m) P_(v-1)^m) / (x**2 - 1)`` loses digits as 1 / (1 - |x|)); that form for |x| > 1 (SciPy's m = 0 there);
    ``_lpmv_slope_at_one`` at x = 1, and at x = -1 the parity ``(-1)**(v + m + 1)`` of it for an integer v (NaN
    for another, whose P_v^m diverges there)."""
    w = math_ops.where
    size = math_ops.abs(x)
    inside, outside = size < 1.0, size > 1.0
    xi = w(inside, x, 0.0)
    pi = w(inside, value, 0.0)
    room = 1.0 - xi * xi
    interior = -(m * xi * pi / room + apply(_lpmv, (m + 1.0, v, xi)) / math_ops.sqrt(room))
    xo = w(outside, x, 2.0)
    po = w(outside, value, 0.0)
    exterior = (v * xo * po - (v + m) * apply(_lpmv, (m, v - 1.0, xo))) / (xo * xo - 1.0)
    at_one = _lpmv_slope_at_one(m, v)
    whole = math_ops.equal(v, math_ops.floor(v))
    at_minus_one = w(whole, _parity(w(whole, v, 0.0) + m + 1.0) * at_one, _math.nan)
    ends = w(math_ops.not_equal(value, value), _math.nan, w(x > 0.0, at_one, at_minus_one))  # NaN stays (m = 1.5)
    return w(inside, interior, w(outside, exterior, ends))


def _lpmv_rule(node, g):
    m, v, x = node.inputs
    slope = _in_float64(
        lambda x, value: _lpmv_slope(m, v, x, value), lambda x: apply(_lpmv, (m, v, x)), x, node.outputs[0]
    )
    return g * slope


register_gradient(
    "Lpmv",
    _refuse("Lpmv: the order m is an integer (SciPy's lpmv is NaN for any other): there is no derivative in m"),
    _refuse(
        "Lpmv: the derivative in the degree v is not implemented (torch.special and jax.scipy.special have none "
        "either); the derivatives of every order in x are"
    ),
    _lpmv_rule,
)


def lpmv(m, v, x) -> Tensor:
    """The associated Legendre function ``P_v^m(x)`` of integer order ``m`` and real degree ``v`` (SciPy's
    ``lpmv``: the Condon-Shortley phase ``(-1)**m``, ``P_v^m = (-1)**m (1 - x**2)**(m/2) d^m P_v / dx^m`` for |x| <= 1;
    NaN for a non-integer ``m`` and where SciPy gives NaN, as for m != 0 outside [-1, 1]).  Gradient in ``x``
    ``-(m x P_v^m / (1 - x**2) + P_v^(m+1) / sqrt(1 - x**2))`` (its limits at +-1); in ``m`` and ``v`` a LookupError.

    >>> import tensorlib as tl
    >>> round(float(tl.special.lpmv(1, 2, tl.tensor(0.5, "float64"))), 6)   # -3 x sqrt(1 - x**2)
    -1.299038
    >>> round(float(tl.grad(lambda x: tl.special.lpmv(0, 2, x))(tl.tensor(0.5, "float64"))), 6)   # (3 x**2 - 1)' / 2
    1.5
    """
    return apply(_lpmv, (m, v, x))


# ------------------------------------------------------------------ the bivariate normal distribution function
def _bivariate_normal_kernel(h, k, rho):
    """``P(X <= h, Y <= k)`` for standard normals of correlation ``rho`` in float64, by Owen's T (Owen 1956):
    ``(Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - beta``, ``a_h = (k - rho h) / (h sqrt(1 - rho**2))`` (T(0, +-inf)
    = +-1/4), ``beta = 1/2`` where ``h k < 0`` or ``h k = 0 > h + k``; ``1/4 + asin(rho) / (2 pi)`` at h = k = 0;
    Phi(min(h, k)) and max(Phi(h) - Phi(-k), 0) at rho = 1 and -1, Phi of the other at an infinite +inf."""
    sp = scipy_special()
    dtype = _result_dtype(h.dtype, k.dtype, rho.dtype)
    h, k, rho = np.broadcast_arrays(*(v.astype(np.float64) for v in (h, k, rho)))
    with np.errstate(all="ignore"):
        s = np.sqrt((1.0 - rho) * (1.0 + rho))
        finite = np.isfinite(h) & np.isfinite(k)
        hs, ks = np.where(finite, h, 1.0) + 0.0, np.where(finite, k, 1.0) + 0.0  # -0 + 0 = +0: a's sign is k's
        opposite = ((hs < 0) & (ks > 0)) | ((hs > 0) & (ks < 0))  # h k < 0, by signs (the product underflows)
        beta = np.where(opposite | (((hs == 0) | (ks == 0)) & (hs + ks < 0)), 0.5, 0.0)
        owen = (
            0.5 * (sp.ndtr(hs) + sp.ndtr(ks))
            - sp.owens_t(hs, (ks - rho * hs) / (hs * s))
            - sp.owens_t(ks, (hs - rho * ks) / (ks * s))
            - beta
        )
        out = np.where((hs == 0) & (ks == 0), 0.25 + np.arcsin(rho) / (2 * np.pi), owen)
        out = np.where(rho == 1, sp.ndtr(np.minimum(h, k)), np.where(rho == -1, sp.ndtr(h) - sp.ndtr(-k), out))
        out = np.where(h == np.inf, sp.ndtr(k), np.where(k == np.inf, sp.ndtr(h), out))
        out = np.where((h == -np.inf) | (k == -np.inf), 0.0, out)
        # NaN inputs only: h + k read -inf + inf (an empty set, probability 0) as one
        invalid = np.isnan(h) | np.isnan(k) | np.isnan(rho) | (np.abs(rho) > 1)
        out = np.where(invalid, np.nan, np.clip(out, 0.0, 1.0))
    return out.astype(dtype, copy=False)


_bivariate_normal = _define(
    "BivariateNormalCdf",
    "owens_t",
    inputs=("h", "k", "rho"),
    doc="P(X <= h, Y <= k) for standard normal X, Y of correlation rho.",
    kernel=_bivariate_normal_kernel,
)


def _bivariate_normal_by_h(h, k, rho):
    """d/dh = phi(h) Phi((k - rho h) / sqrt(1 - rho**2))."""
    density = math_ops.exp(-0.5 * math_ops.square(h)) / _math.sqrt(2.0 * _math.pi)
    return density * ndtr((k - rho * h) / math_ops.sqrt((1.0 - rho) * (1.0 + rho)))


def _bivariate_normal_by_rho(h, k, rho):
    """d/drho = the density, exp(-(h**2 - 2 rho h k + k**2) / (2 (1 - rho**2))) / (2 pi sqrt(1 - rho**2)); 0 where
    h or k is infinite (the quadratic form read inf - inf: NaN, where the probability is constant in rho)."""
    infinite = math_ops.logical_or(floating.isinf(h), floating.isinf(k))
    h, k = math_ops.where(infinite, 0.0, h), math_ops.where(infinite, 0.0, k)
    squared = (1.0 - rho) * (1.0 + rho)
    quadratic = math_ops.square(h) - 2.0 * rho * h * k + math_ops.square(k)
    density = math_ops.exp(-0.5 * quadratic / squared) / (2.0 * _math.pi * math_ops.sqrt(squared))
    return math_ops.where(infinite, 0.0, density)


register_gradient(
    "BivariateNormalCdf",
    lambda node, g: g * _bivariate_normal_by_h(*node.inputs),
    lambda node, g: g * _bivariate_normal_by_h(node.inputs[1], node.inputs[0], node.inputs[2]),
    lambda node, g: g * _bivariate_normal_by_rho(*node.inputs),
)


def bivariate_normal_cdf(h, k, rho) -> Tensor:
    """``P(X <= h, Y <= k)`` for standard normal ``X``, ``Y`` of correlation ``rho`` (elementwise; the op
    ``BivariateNormalCdf``, ``tl.stats.multivariate_normal.cdf``'s in two dimensions), by Owen's T: accurate to
    rounding in absolute terms, not relative in the far lower tail.  Gradients ``phi(h) Phi((k - rho h) / sqrt(1 -
    rho**2))`` in ``h`` (``k`` alike) and the density in ``rho``, to every order.

    >>> import tensorlib as tl
    >>> round(float(bivariate_normal_cdf(tl.tensor(0.0, "float64"), 0.0, 0.5)), 6)   # 1/4 + asin(1/2) / (2 pi)
    0.333333
    """
    return apply(_bivariate_normal, (h, k, rho))

"""NumPy's floating-point predicates and routines: isnan, isinf, isfinite, isposinf, isneginf, signbit,
isclose, allclose and array_equal; cbrt, trunc/fix/rint, copysign, heaviside, float_power, nextafter,
spacing, ldexp and frexp.

Dtypes follow NumPy 2, except that bools compute in float64 where NumPy's ufuncs take float16
(DESIGN §6): float-valued functions of integers give float64, the predicates accept every dtype
(``isnan`` of integers is all False), ``float_power`` computes in float64 (complex128).  The
predicates, trunc/rint, nextafter and spacing are not differentiable (zero gradients, as
PyTorch's round/trunc); the rest have gradient rules below them.

>>> import numpy as np, tensorlib as tl
>>> tl.isnan(tl.tensor([1.0, np.nan])).numpy().tolist(), tl.isnan(tl.tensor([1, 2])).numpy().tolist()
([False, True], [False, False])
>>> tl.grad(lambda x: tl.sum(tl.copysign(x, -1.0)))(tl.tensor([2.0, -3.0])).numpy().tolist()
[-1.0, 1.0]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import tree
from ..dispatch import apply, as_tensor
from ..grad.registry import not_differentiable, register_gradient
from ..tensor import Tensor
from . import math as math_ops
from ._shapes import broadcast_shapes
from .registry import defop, spec

_INEXACT = ("real floating", "complex floating")


def _real_number(name, x):
    if x.dtype.kind == "c":
        raise TypeError(f"{name} is not defined for complex numbers (NumPy refuses them too), got {x.dtype}")


def _float_valued(name):
    """A shape rule: x's shape, float64 for integers and bools (cast first: ``float_valued``), complex refused."""

    def infer(x, *more):
        for s in (x,) + more:
            _real_number(name, s)
        shape = x.shape if not more else broadcast_shapes(x.shape, *(s.shape for s in more))
        return spec(shape, x.dtype if x.dtype.kind == "f" else _dt.float64)

    return infer


def _floats(xp, *arrays):
    return tuple(a if xp.isdtype(a.dtype, _INEXACT) else xp.astype(a, xp.float64) for a in arrays)


def _ufunc_op(name, ufunc, infer, generic, doc, inputs=("x",), **options):
    # NumPy runs the ufunc itself (it takes out= and handles overlap with its inputs); other backends
    # the generic kernel, written against the Array API standard.
    op = defop(name, inputs=inputs, infer=infer, doc=doc, **options)
    op.generic(generic)
    op.kernel("numpy")(ufunc)
    if isinstance(ufunc, np.ufunc):
        op.out_kernel("numpy", inplace=True)(ufunc)
    return op


# ------------------------------------------------------------------ predicates (bool results)
def _predicate(name, numpy_kernel, on_floats, on_others, doc, complex_ok=True):
    def infer(x):
        if not complex_ok:
            _real_number(name, x)
        return spec(x.shape, _dt.bool_)

    def generic(xp, x):
        return on_floats(xp, x) if xp.isdtype(x.dtype, _INEXACT) else on_others(xp, x)

    generic.__name__ = generic.__qualname__ = f"standard_{name.lower()}"
    op = defop(name, inputs=("x",), infer=infer, differentiable=False, doc=doc)
    op.generic(generic)
    op.kernel("numpy")(numpy_kernel)
    return op


def _none(xp, x):
    return xp.zeros_like(x, dtype=xp.bool)


def _all(xp, x):
    return xp.ones_like(x, dtype=xp.bool)


_INF = float("inf")
_isnan = _predicate("IsNan", np.isnan, lambda xp, x: xp.isnan(x), _none, "x is NaN (False for integers).")
_isinf = _predicate("IsInf", np.isinf, lambda xp, x: xp.isinf(x), _none, "x is +-inf (False for integers).")
_isfinite = _predicate(
    "IsFinite", np.isfinite, lambda xp, x: xp.isfinite(x), _all, "x is neither inf nor NaN (True for integers)."
)
_isposinf = _predicate(
    "IsPosInf", np.isposinf, lambda xp, x: x == _INF, _none, "x is +inf (not for complex x).", complex_ok=False
)
_isneginf = _predicate(
    "IsNegInf", np.isneginf, lambda xp, x: x == -_INF, _none, "x is -inf (not for complex x).", complex_ok=False
)
_signbit = _predicate(
    "SignBit",
    np.signbit,
    lambda xp, x: xp.signbit(x),
    lambda xp, x: x < 0 if xp.isdtype(x.dtype, "integral") else _none(xp, x),
    "The sign bit of x is set (-0.0 and -nan too; not for complex x).",
    complex_ok=False,
)


def _isclose_infer(x, y, **tolerances):
    if x.dtype == _dt.bool_:
        raise TypeError("needs numbers, got bool (NumPy refuses bools too: it subtracts them)")
    return spec(broadcast_shapes(x.shape, y.shape), _dt.bool_)


_isclose = defop(
    "IsClose",
    inputs=("x", "y"),
    attrs={"rtol": 1e-05, "atol": 1e-08, "equal_nan": False},
    infer=_isclose_infer,
    promote=(0, 1),
    differentiable=False,
    doc="|x - y| <= atol + rtol * |y| (numpy.isclose: not symmetric; equal infinities are close).",
)
_isclose.kernel("numpy")(np.isclose)


@_isclose.generic
def _isclose_kernel(xp, x, y, *, rtol, atol, equal_nan):
    x, y = _floats(xp, x, y)  # NumPy compares integers as float64
    close = xp.logical_or(xp.logical_and(xp.abs(x - y) <= atol + rtol * xp.abs(y), xp.isfinite(y)), x == y)
    return xp.logical_or(close, xp.logical_and(xp.isnan(x), xp.isnan(y))) if equal_nan else close


# ------------------------------------------------------------------ rounding toward zero
def _trunc_kernel(xp, x):
    return xp.trunc(x) if xp.isdtype(x.dtype, "real floating") else x  # integers are whole already


def _trunc_infer(x):
    _real_number("Trunc", x)
    return x


# Integers and bools keep their dtype (NumPy 2); piecewise constant: no gradient, as Floor and Round.
_trunc = _ufunc_op("Trunc", np.trunc, _trunc_infer, _trunc_kernel, "x rounded toward zero (not differentiable).")
not_differentiable("Trunc")


# ------------------------------------------------------------------ cbrt, copysign, heaviside
def _cbrt_kernel(xp, x):
    if hasattr(xp, "cbrt"):  # CuPy has NumPy's; the standard has none
        return xp.cbrt(_floats(xp, x)[0])
    (wide,) = _floats(xp, xp.astype(x, xp.float64) if x.dtype == xp.float32 else x)  # float32 rounded once
    return xp.astype(
        xp.copysign(xp.abs(wide) ** (1.0 / 3.0), wide), x.dtype if xp.isdtype(x.dtype, "real floating") else xp.float64
    )


_cbrt = _ufunc_op("Cbrt", np.cbrt, _float_valued("Cbrt"), _cbrt_kernel, "The real cube root.", float_valued=True)
# d cbrt(x) = 1 / (3 cbrt(x)**2): inf at 0, as JAX (and cbrt's own slope there).
register_gradient("Cbrt", lambda node, g: g / (3.0 * node.outputs[0] * node.outputs[0]))


def _copysign_kernel(xp, x, y):
    return xp.copysign(*_floats(xp, x, y))


_copysign = _ufunc_op(
    "CopySign",
    np.copysign,
    _float_valued("CopySign"),
    _copysign_kernel,
    "|x| with the sign of y.",
    inputs=("x", "y"),
    promote=(0, 1),
    float_valued=True,
)


def _copysign_grad_x(node, g):
    # +-1 as the output's sign agrees with x's or not, 0 at x = 0 (PyTorch; also JAX's |x| convention).
    x, y = node.inputs
    return g * math_ops.sign(x) * apply(_copysign, (math_ops.ones_like(g), y))


# y gives only a sign: piecewise constant, zero gradient (PyTorch).
register_gradient("CopySign", _copysign_grad_x, lambda node, g: math_ops.zeros_like(node.inputs[1]))


def _heaviside_kernel(xp, x, y):
    x, y = _floats(xp, x, y)
    zero, one = xp.zeros_like(x), xp.ones_like(x)
    return xp.where(x < 0, zero, xp.where(x > 0, one, xp.where(x == 0, y, x)))


_heaviside = _ufunc_op(
    "Heaviside",
    np.heaviside,
    _float_valued("Heaviside"),
    _heaviside_kernel,
    "0 for x < 0, y at x == 0, 1 for x > 0 (NaN for NaN x).",
    inputs=("x", "y"),
    promote=(0, 1),
    float_valued=True,
)
# A step in x (zero gradient, JAX); y is the value taken at x == 0, so it gets the gradient there.
register_gradient(
    "Heaviside",
    lambda node, g: math_ops.zeros_like(node.inputs[0]),
    lambda node, g: math_ops.where(math_ops.equal(node.inputs[0], 0), g, math_ops.zeros_like(g)),
)


# ------------------------------------------------------------------ float_power
def _float_power_infer(x, y):
    return spec(broadcast_shapes(x.shape, y.shape), x.dtype)  # float64 or complex128: the wrapper casts


# Its own op for NumPy's kernel: np.float_power and np.power differ in the last bit of float64 results.
_float_power = _ufunc_op(
    "FloatPower",
    np.float_power,
    _float_power_infer,
    lambda xp, x, y: xp.pow(x, y),
    "x ** y in float64 or complex128 (inputs cast first); gradients as Pow's.",
    inputs=("x", "y"),
    promote=(0, 1),
)
register_gradient("FloatPower", math_ops.pow_grad_x, math_ops.pow_grad_y)


# ------------------------------------------------------------------ nextafter, spacing
def _nextafter_kernel(xp, x, y):
    return xp.nextafter(*_floats(xp, x, y))


_nextafter = _ufunc_op(
    "NextAfter",
    np.nextafter,
    _float_valued("NextAfter"),
    _nextafter_kernel,
    "The next representable number after x toward y (not differentiable).",
    inputs=("x", "y"),
    promote=(0, 1),
    float_valued=True,
)
not_differentiable("NextAfter")


def _spacing_kernel(xp, x):
    # NumPy's: the step toward -inf for x < 0, else toward +inf (so -0.0 gives the smallest positive
    # number, and the largest finite number inf).
    (x,) = _floats(xp, x)
    return xp.nextafter(x, xp.where(x < 0, xp.full_like(x, -_INF), xp.full_like(x, _INF))) - x


_spacing = _ufunc_op(
    "Spacing",
    np.spacing,
    _float_valued("Spacing"),
    _spacing_kernel,
    "The distance from x to the next number away from zero (not differentiable).",
    float_valued=True,
)
not_differentiable("Spacing")


# ------------------------------------------------------------------ ldexp
def _ldexp_infer(x, n):
    _real_number("Ldexp", x)
    if n.dtype.kind not in "iu":
        raise TypeError(f"the exponent must be an integer tensor (NumPy refuses floats too), got {n.dtype}")
    return spec(broadcast_shapes(x.shape, n.shape), x.dtype if x.dtype.kind == "f" else _dt.float64)


_ldexp = defop(
    "Ldexp", inputs=("x", "n"), infer=_ldexp_infer, float_valued=True, doc="x * 2**n, exactly (n an integer)."
)
_ldexp.kernel("numpy")(np.ldexp)
_ldexp.out_kernel("numpy", inplace=(0,))(np.ldexp)


@_ldexp.generic
def _ldexp_kernel(xp, x, n):
    # x * 2**n in three exact steps, each a power of two that the dtype holds (2**n alone overflows or
    # underflows for |n| beyond the exponent range while x * 2**n may not); beyond 3 steps all is 0 or inf.
    bound = 1023 if x.dtype == xp.float64 else 127 if x.dtype == xp.float32 else 15
    n = xp.clip(xp.astype(n, xp.int64), -3 * bound, 3 * bound)
    for k in (3, 2, 1):
        step = n // k
        x = x * xp.pow(xp.full_like(x, 2.0), xp.astype(step, x.dtype))
        n = n - step
    return x


# d/dx x * 2**n = 2**n, so the gradient is ldexp(g, n), exact; n is an integer: no gradient.
register_gradient("Ldexp", lambda node, g: apply(_ldexp, (g, node.inputs[1])), None)


# ------------------------------------------------------------------ frexp
def _frexp_infer(x):
    _real_number("Frexp", x)
    return spec(x.shape, x.dtype), spec(x.shape, _dt.int32)


_frexp = defop(
    "Frexp",
    inputs=("x",),
    infer=_frexp_infer,
    float_valued=True,
    doc="(m, e) with x = m * 2**e, 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf and NaN).",
)
_frexp.kernel("numpy")(np.frexp)


@_frexp.generic
def _frexp_kernel(xp, x):
    # e = floor(log2|x|) + 1, then one step either way where log2 rounded across a power of two.
    regular = xp.logical_and(xp.isfinite(x), x != 0)
    a = xp.where(regular, xp.abs(x), xp.ones_like(x))
    e = xp.astype(xp.floor(xp.log2(xp.astype(a, xp.float64))), xp.int64) + 1
    m = _ldexp_kernel(xp, a, -e)
    e = e + xp.astype(m >= 1, xp.int64) - xp.astype(m < 0.5, xp.int64)
    e = xp.where(regular, e, xp.zeros_like(e))
    return xp.where(regular, _ldexp_kernel(xp, x, -e), x), xp.astype(e, xp.int32)


# d m / dx = 2**-e (e is piecewise constant, an integer: no gradient).
register_gradient("Frexp", lambda node, g_m, g_e: apply(_ldexp, (g_m, -node.outputs[1])))


# ------------------------------------------------------------------ public functions
def isnan(x) -> Tensor:
    """True where x is NaN (either part, for complex x); all False for integers and bools (NumPy).

    >>> import numpy as np, tensorlib as tl
    >>> tl.isnan(tl.tensor([0.0, np.nan, np.inf])).numpy().tolist()
    [False, True, False]
    """
    return apply(_isnan, (x,))


def isinf(x) -> Tensor:
    """True where x is +inf or -inf; all False for integers and bools.

    >>> import numpy as np, tensorlib as tl
    >>> tl.isinf(tl.tensor([-np.inf, np.nan, 1.0])).numpy().tolist()
    [True, False, False]
    """
    return apply(_isinf, (x,))


def isfinite(x) -> Tensor:
    """True where x is neither inf nor NaN; all True for integers and bools.

    >>> import numpy as np, tensorlib as tl
    >>> tl.isfinite(tl.tensor([-np.inf, np.nan, 1.0])).numpy().tolist()
    [False, False, True]
    """
    return apply(_isfinite, (x,))


def isposinf(x) -> Tensor:
    """True where x is +inf (a TypeError for complex x, as NumPy).

    >>> import numpy as np, tensorlib as tl
    >>> tl.isposinf(tl.tensor([-np.inf, np.inf])).numpy().tolist()
    [False, True]
    """
    return apply(_isposinf, (x,))


def isneginf(x) -> Tensor:
    """True where x is -inf (a TypeError for complex x, as NumPy).

    >>> import numpy as np, tensorlib as tl
    >>> tl.isneginf(tl.tensor([-np.inf, np.inf])).numpy().tolist()
    [True, False]
    """
    return apply(_isneginf, (x,))


def signbit(x) -> Tensor:
    """True where the sign bit is set: negative numbers, -0.0 and NaNs with the sign bit.

    >>> import tensorlib as tl
    >>> tl.signbit(tl.tensor([-0.0, 0.0, -2.0])).numpy().tolist()
    [True, False, True]
    """
    return apply(_signbit, (x,))


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """``|a - b| <= atol + rtol * |b|`` elementwise, with broadcasting (``numpy.isclose``, so not symmetric
    in a and b); equal infinities are close, NaNs only with ``equal_nan=True``.  Not differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> tl.isclose(tl.tensor([1.0, np.nan, np.inf]), [1.0 + 1e-7, np.nan, np.inf]).numpy().tolist()
    [True, False, True]
    """
    attrs = {"rtol": float(rtol), "atol": float(atol), "equal_nan": bool(equal_nan)}
    return apply(_isclose, (a, b), attrs)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether every element of ``isclose(a, b, ...)`` holds: a Python bool.

    Inside ``tl.function`` the values are not known while tracing, so the answer is a 0-d bool
    tensor instead (use it with ``tl.where`` or ``tl.cond``; ``if`` on it raises).

    >>> import tensorlib as tl
    >>> tl.allclose(tl.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-9]), tl.allclose(tl.tensor([1.0]), 1.1)
    (True, False)
    """
    return _every(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
    """Whether ``a1`` and ``a2`` have the same shape and elements (``numpy.array_equal``): a Python bool,
    or a 0-d bool tensor inside ``tl.function`` (as ``allclose``).  NaNs are equal only with
    ``equal_nan=True``.

    >>> import tensorlib as tl
    >>> tl.array_equal(tl.tensor([1, 2]), [1, 2]), tl.array_equal(tl.tensor([1, 2]), [[1, 2]])
    (True, False)
    """
    a1, a2 = _as_numpy_reads(a1, weak_numbers=True), _as_numpy_reads(a2, weak_numbers=True)
    if a1.shape != a2.shape:
        return False
    same = math_ops.equal(a1, a2)
    if equal_nan:
        same = math_ops.logical_or(same, math_ops.logical_and(isnan(a1), isnan(a2)))
    return _every(same)


def _as_numpy_reads(a, weak_numbers=False) -> Tensor:
    """``a`` as a Tensor with the dtype NumPy reads it in: ``[0.1]`` and ``0.1`` as float64, not rounded
    through tensorlib's float32 for Python floats (``weak_numbers``: Python numbers stay weak, taking the
    other operand's dtype).  Tensors, and lists holding Tensors, are kept as they are (and their gradient)."""
    if isinstance(a, Tensor) or (weak_numbers and isinstance(a, (bool, int, float, complex))):
        return as_tensor(a)
    if isinstance(a, (list, tuple)) and any(isinstance(v, Tensor) for v in tree.leaves(list(a))):
        return as_tensor(a)
    return as_tensor(np.asarray(a))


def _every(condition):
    from .reduce import sum as _sum

    every = math_ops.equal(_sum(math_ops.logical_not(condition)), 0)
    return every if every.is_symbolic else bool(every.numpy())


def trunc(x) -> Tensor:
    """x rounded toward zero; integers and bools keep their dtype (NumPy 2).  Not differentiable (its
    gradient is zero, as PyTorch's).

    >>> import tensorlib as tl
    >>> tl.trunc(tl.tensor([-1.7, 1.7])).numpy().tolist()
    [-1.0, 1.0]
    """
    return apply(_trunc, (x,))


def fix(x) -> Tensor:
    """x rounded toward zero: ``numpy.fix``, the same as ``trunc``.

    >>> import tensorlib as tl
    >>> tl.fix(tl.tensor([-2.5, 2.5])).numpy().tolist()
    [-2.0, 2.0]
    """
    return apply(_trunc, (x,))


def rint(x) -> Tensor:
    """x rounded to the nearest integer, halves to even (``numpy.rint``): a float, float64 for integers and
    bools.  Not differentiable.

    >>> import tensorlib as tl
    >>> tl.rint(tl.tensor([0.5, 1.5, -2.5])).numpy().tolist(), tl.rint(tl.tensor([3])).dtype
    ([0.0, 2.0, -2.0], dtype('float64'))
    """
    x = as_tensor(x)
    return math_ops.round(x if x.dtype.kind in "fc" else math_ops.cast(x, _dt.float64))


def cbrt(x) -> Tensor:
    """The real cube root (negative for negative x); float64 for integers.  The gradient
    ``1 / (3 cbrt(x)**2)`` is inf at 0, as JAX's.

    >>> import tensorlib as tl
    >>> tl.cbrt(tl.tensor([-8.0, 27.0])).numpy().tolist()
    [-2.0, 3.0]
    """
    return apply(_cbrt, (x,))


def copysign(x1, x2) -> Tensor:
    """``|x1|`` with the sign of ``x2`` (its sign bit: -0.0 counts as negative).  The gradient with respect to
    ``x1`` is +-1 (0 at x1 = 0, as PyTorch); ``x2`` gets none (zero).

    >>> import tensorlib as tl
    >>> tl.copysign(tl.tensor([1.5, -2.0]), tl.tensor([-0.0, 3.0])).numpy().tolist()
    [-1.5, 2.0]
    """
    return apply(_copysign, (x1, x2))


def heaviside(x1, x2) -> Tensor:
    """The step function: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``.  Only ``x2``
    has a gradient (where ``x1 == 0``), as in JAX.

    >>> import tensorlib as tl
    >>> tl.heaviside(tl.tensor([-1.5, 0.0, 2.0]), 0.5).numpy().tolist()
    [0.0, 0.5, 1.0]
    """
    return apply(_heaviside, (x1, x2))


def float_power(x1, x2) -> Tensor:
    """``x1 ** x2`` computed in float64 (complex128 if either is complex), whatever the inputs' dtypes, as
    ``numpy.float_power``; gradients are ``power``'s, cast back to each input's dtype.

    >>> import tensorlib as tl
    >>> out = tl.float_power(tl.tensor([2, 3]), -1)
    >>> out.dtype, out.numpy().tolist()
    (dtype('float64'), [0.5, 0.3333333333333333])
    """
    x1, x2 = _as_numpy_reads(x1), _as_numpy_reads(x2)
    wide = _dt.complex128 if x1.dtype.kind == "c" or x2.dtype.kind == "c" else _dt.float64
    return apply(_float_power, (_cast_to(x1, wide), _cast_to(x2, wide)))


def _cast_to(x, dtype) -> Tensor:
    return x if x.dtype == dtype else math_ops.cast(x, dtype)


def nextafter(x1, x2) -> Tensor:
    """The next representable number after ``x1`` toward ``x2`` (``x1``'s dtype; float64 for integers).  Not
    differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> float(tl.nextafter(tl.tensor(1.0, dtype="float64"), 2.0)) - 1.0 == 2.0**-52
    True
    """
    return apply(_nextafter, (x1, x2))


def spacing(x) -> Tensor:
    """The distance from x to the next representable number away from zero (``numpy.spacing``: negative
    for negative x, NaN for inf and NaN).  Not differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> float(tl.spacing(tl.tensor(1.0, dtype="float64"))) == 2.0**-52, float(tl.spacing(tl.tensor(-0.0))) > 0
    (True, True)
    """
    return apply(_spacing, (x,))


def ldexp(x1, x2) -> Tensor:
    """``x1 * 2**x2``, exactly, for an integer exponent ``x2`` (a float exponent is a TypeError, as in NumPy);
    float64 for integer ``x1``.  The gradient with respect to ``x1`` is ``2**x2``.

    >>> import tensorlib as tl
    >>> tl.ldexp(tl.tensor([1.5, -3.0]), tl.tensor([3, -1])).numpy().tolist()
    [12.0, -1.5]
    """
    x2 = as_tensor(x2)
    if x2.dtype == _dt.bool_:
        x2 = math_ops.cast(x2, _dt.int32)
    return apply(_ldexp, (x1, x2))


def frexp(x) -> tuple:
    """``(mantissa, exponent)`` with ``x = mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``
    (``numpy.frexp``; 0, inf and NaN give ``(x, 0)``); the exponent is int32.  The mantissa's gradient is
    ``2**-exponent``; the exponent has none.

    >>> import tensorlib as tl
    >>> m, e = tl.frexp(tl.tensor([8.0, -0.75, 0.0]))
    >>> m.numpy().tolist(), e.numpy().tolist()
    ([0.5, -0.75, 0.0], [4, 0, 0])
    """
    return apply(_frexp, (x,))


def positive(x) -> Tensor:
    """``+x``, a number (NumPy 2 refuses bools).

    >>> import tensorlib as tl
    >>> tl.positive(tl.tensor([-1.5, 2.0])).numpy().tolist()
    [-1.5, 2.0]
    """
    x = as_tensor(x)
    if x.dtype == _dt.bool_:
        raise TypeError(f"positive: needs a number, got a bool tensor (shape {x.shape}); NumPy refuses bools too")
    return math_ops.identity(x)

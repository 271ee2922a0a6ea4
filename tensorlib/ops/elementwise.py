"""More elementwise functions under NumPy's names: trigonometric and hyperbolic functions with their
inverses, log2/log10/exp2, logaddexp, hypot, arctan2, fmax/fmin, remainder, fmod, gcd/lcm, the bitwise
functions, sinc, nan_to_num, the complex parts (real/imag/conj/angle), ceil, and ``where(condition)``
with one argument.

Each op's per-input gradient rules sit right below it, written with tensorlib ops (so higher
orders and tracing come free); broadcast gradients are summed back by the engine.

>>> import tensorlib as tl
>>> x = tl.tensor([0.5, 1.0], dtype="float64")
>>> [round(v, 4) for v in tl.grad(lambda x: tl.sum(tl.arctan(x)))(x).numpy().tolist()]
[0.8, 0.5]
"""

from __future__ import annotations

import math as _pymath
import warnings

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor
from ..grad.registry import not_differentiable, register_gradient
from ..tensor import Tensor
from . import math as math_ops
from .floating import trunc
from ._shapes import broadcast_shapes
from .registry import defop, spec


def _float_valued(x):
    # NumPy's rule: a float-valued function of integers or bools gives float64.
    return x if x.dtype.kind in "fc" else spec(x.shape, _dt.float64)


def _same(x):
    return x


def _binary_float_valued(x, y):
    return _float_valued(spec(broadcast_shapes(x.shape, y.shape), x.dtype))


def _binary_same(x, y):
    return spec(broadcast_shapes(x.shape, y.shape), x.dtype)


def _division_dtype(x, y):
    return math_ops.int_for_bool(_binary_same(x, y))


def _floats(xp, *arrays):
    """The arrays as floats: integers and bools in float64 (NumPy's rule for float-valued functions)."""
    return tuple(
        a if xp.isdtype(a.dtype, ("real floating", "complex floating")) else xp.astype(a, xp.float64) for a in arrays
    )


def _standard(function_name):
    """A generic kernel calling the Array API standard's ``function_name`` on float arguments."""

    def kernel(xp, *arrays):
        return getattr(xp, function_name)(*_floats(xp, *arrays))

    kernel.__name__ = kernel.__qualname__ = f"standard_{function_name}"
    return kernel


def _unary(name, ufunc, doc, grad=None, infer=_float_valued, generic=None):
    # NumPy runs the ufunc itself (no Python frame between dispatch and C); every other backend runs
    # ``generic``, written against the Array API standard (NumPy's name when the standard shares it).
    # A float-valued op casts integers and bools to float64 first: NumPy's ufuncs compute bools in float16.
    op = defop(name, inputs=("x",), infer=infer, float_valued=infer is _float_valued, doc=doc)
    op.generic(generic or _standard(ufunc.__name__))
    op.kernel("numpy")(ufunc)
    _out_kernel_if_ufunc(op, ufunc)
    if grad is None:
        not_differentiable(name)
    else:
        register_gradient(name, grad)
    return op


def _binary(name, ufunc, doc, grad_x, grad_y, infer=_binary_float_valued, generic=None):
    float_valued = infer is _binary_float_valued
    op = defop(name, inputs=("x", "y"), infer=infer, promote=(0, 1), float_valued=float_valued, doc=doc)
    op.generic(generic or _standard(ufunc.__name__))
    op.kernel("numpy")(ufunc)
    _out_kernel_if_ufunc(op, ufunc)
    register_gradient(name, grad_x, grad_y)
    return op


def _out_kernel_if_ufunc(op, fn):
    # Ufuncs take out= and handle overlap with their inputs.  np.real, np.imag, np.angle and np.sinc are
    # functions without out=: registered too, a traced result of 64 KiB or more (the executor's pooled
    # buffers) raised "real() got an unexpected keyword argument 'out'".
    if isinstance(fn, np.ufunc):
        op.out_kernel("numpy", inplace=True)(fn)


def _x(node):
    return node.inputs[0]


def _y(node):
    return node.outputs[0]


_LN2 = _pymath.log(2.0)
_LN10 = _pymath.log(10.0)


# ------------------------------------------------------------------ trigonometric and hyperbolic
def _one_minus_square(x):
    # (1 - x)(1 + x), not 1 - x * x: near |x| = 1 the rounding of x * x is most of the difference
    # (grad arccosh(1.000001) was 2e-11 off, arcsin's and arctanh's alike; now within 2 ulp).
    return (1.0 - x) * (1.0 + x)


def _arcsinh_grad(node, g):
    x = _x(node)
    if x.dtype.kind == "c":
        # 1 / sqrt(1 + z * z) as 1 / (sqrt(1 + iz) sqrt(1 - iz)), equal off asinh's cuts: hypot has no complex
        # form (the rule raised TypeError), and z * z overflows first.
        iz = x * 1j
        return g / (math_ops.sqrt(1.0 + iz) * math_ops.sqrt(1.0 - iz))
    return g / hypot(x, 1.0)  # sqrt(x*x + 1) overflowed beyond 1e154: gradient 0


_tan = _unary("Tan", np.tan, "Tangent.", lambda node, g: g * (1.0 + _y(node) * _y(node)))
_sinh = _unary("Sinh", np.sinh, "Hyperbolic sine.", lambda node, g: g * cosh(_x(node)))
_cosh = _unary("Cosh", np.cosh, "Hyperbolic cosine.", lambda node, g: g * sinh(_x(node)))
_arcsin = _unary(
    "Asin",
    np.arcsin,
    "Inverse sine.",
    lambda node, g: g / math_ops.sqrt(_one_minus_square(_x(node))),
    generic=_standard("asin"),
)
_arccos = _unary(
    "Acos",
    np.arccos,
    "Inverse cosine.",
    lambda node, g: -g / math_ops.sqrt(_one_minus_square(_x(node))),
    generic=_standard("acos"),
)
_arctan = _unary(
    "Atan", np.arctan, "Inverse tangent.", lambda node, g: g / (1.0 + _x(node) * _x(node)), generic=_standard("atan")
)
_arcsinh = _unary(
    "Asinh",
    np.arcsinh,
    "Inverse hyperbolic sine.",
    _arcsinh_grad,
    generic=_standard("asinh"),
)
_arccosh = _unary(
    "Acosh",
    np.arccosh,
    "Inverse hyperbolic cosine (x >= 1).",
    lambda node, g: g / (math_ops.sqrt(_x(node) - 1.0) * math_ops.sqrt(_x(node) + 1.0)),  # no overflow
    generic=_standard("acosh"),
)
_arctanh = _unary(
    "Atanh",
    np.arctanh,
    "Inverse hyperbolic tangent (|x| < 1).",
    lambda node, g: g / _one_minus_square(_x(node)),
    generic=_standard("atanh"),
)
_deg2rad = _unary(
    "Deg2Rad",
    np.deg2rad,
    "Degrees to radians.",
    lambda node, g: g * (_pymath.pi / 180.0),
    generic=lambda xp, x: _floats(xp, x)[0] * (_pymath.pi / 180.0),
)
_rad2deg = _unary(
    "Rad2Deg",
    np.rad2deg,
    "Radians to degrees.",
    lambda node, g: g * (180.0 / _pymath.pi),
    generic=lambda xp, x: _floats(xp, x)[0] * (180.0 / _pymath.pi),
)

# ------------------------------------------------------------------ exponentials and logarithms
_log2 = _unary("Log2", np.log2, "Base-2 logarithm.", lambda node, g: g / (_x(node) * _LN2))
_log10 = _unary("Log10", np.log10, "Base-10 logarithm.", lambda node, g: g / (_x(node) * _LN10))
_exp2 = _unary(
    "Exp2", np.exp2, "2 ** x.", lambda node, g: g * _y(node) * _LN2, generic=lambda xp, x: 2.0 ** _floats(xp, x)[0]
)


def _reciprocal_kernel(xp, x):
    if xp.isdtype(x.dtype, ("real floating", "complex floating")):
        return 1.0 / x
    # NumPy's integer 1 // x truncates towards zero: +-1 keep their value, every other x gives 0, and
    # 0 gives what NumPy's loop gives for 1 // 0, the dtype's minimum.
    zero = xp.zeros_like(x)
    return xp.where(xp.abs(x) == 1, x, xp.where(x == 0, xp.full_like(x, xp.iinfo(x.dtype).min), zero))


# NumPy keeps integer dtypes here (1 // x); only float reciprocals are differentiated.
_reciprocal = _unary(
    "Reciprocal",
    np.reciprocal,
    "1 / x (integer division for integers, as in NumPy).",
    lambda node, g: -g * _y(node) * _y(node),
    infer=_same,
    generic=_reciprocal_kernel,
)
_fabs = _unary(
    "Fabs",
    np.fabs,
    "|x| as a float; gradient sign(x).",
    lambda node, g: g * math_ops.sign(_x(node)),
    generic=_standard("abs"),
)
_ceil = _unary("Ceil", np.ceil, "Ceiling (not differentiable).", infer=_same, generic=lambda xp, x: xp.ceil(x))


def _sinc_grad(node, g):
    # d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x, which cancels catastrophically near 0: there
    # its Taylor series is used (itself differentiable, so second order stays exact).  The double
    # `where` keeps the unused branch finite, so no NaN reaches the gradient of the gradient.
    x = _x(node)
    small = math_ops.less(math_ops.abs(x), 1e-2)
    safe = math_ops.where(small, math_ops.ones_like(x), x)
    px2 = (_pymath.pi * _pymath.pi) * x * x
    series = -(_pymath.pi * _pymath.pi) * x * (1.0 / 3.0 - px2 * (1.0 / 30.0 - px2 / 840.0))
    exact = (math_ops.cos(_pymath.pi * safe) - sinc(safe)) / safe
    return g * math_ops.where(small, series, exact)


def _sinc_kernel(xp, x):
    (x,) = _floats(xp, x)
    zero = x == 0
    one = xp.ones_like(x)
    pix = _pymath.pi * xp.where(zero, one, x)  # finite everywhere, so no warning at 0
    return xp.where(zero, one, xp.sin(pix) / pix)


_sinc = _unary("Sinc", np.sinc, "sin(pi x) / (pi x), 1 at 0.", _sinc_grad, generic=_sinc_kernel)

# ------------------------------------------------------------------ binary functions


def _arctan2_grad(node, g, which):
    # d atan2(x1, x2) = (x2 dx1 - x1 dx2) / r**2, as (x_i / r) / r with r = hypot(x1, x2): r**2 itself
    # overflows or underflows beyond 1e154 (1e19 in float32), giving 0 or inf where the gradient is finite.
    x1, x2 = node.inputs
    r = hypot(x1, x2)
    return g * (x2 / r) / r if which == 0 else -g * (x1 / r) / r


_arctan2 = _binary(
    "Atan2",
    np.arctan2,
    "Angle of the point (x=x2, y=x1): arctan2(x1, x2), NumPy's order.",
    lambda node, g: _arctan2_grad(node, g, 0),
    lambda node, g: _arctan2_grad(node, g, 1),
    generic=_standard("atan2"),
)


def _hypot_grad(node, g, which):
    # x_i / h, except where that is 0/0 or inf/inf: at the origin 0 (the subgradient |x| gets), and
    # where h is infinite the infinite input's sign, 0 for a finite one (the limits along the axis).
    x, h = node.inputs[which], _y(node)
    infinite = math_ops.equal(math_ops.abs(x), float("inf"))
    degenerate = math_ops.logical_or(math_ops.equal(h, 0), math_ops.equal(h, float("inf")))
    ratio = x / math_ops.where(degenerate, math_ops.ones_like(h), h)
    return g * math_ops.where(infinite, math_ops.sign(x), math_ops.where(degenerate, math_ops.zeros_like(x), ratio))


def _share_of_sum(node, g, which, scale=1.0):
    # d/dx_i log(e^x_i + e^x_j) = sigmoid(x_i - x_j), finite at infinities (exp(x - out) is exp(inf - inf)
    # there); two equal infinities share it as equal operands do (sigmoid(0) = 1/2).
    x, y = node.inputs if which == 0 else node.inputs[::-1]
    tied_infinities = math_ops.logical_and(math_ops.equal(x, y), math_ops.equal(math_ops.abs(x), float("inf")))
    d = math_ops.where(tied_infinities, math_ops.zeros_like(g), x - y)
    return g * math_ops.sigmoid(d * scale if scale != 1.0 else d)


_hypot = _binary(
    "Hypot",
    np.hypot,
    "sqrt(x1**2 + x2**2) without overflow.",
    lambda node, g: _hypot_grad(node, g, 0),
    lambda node, g: _hypot_grad(node, g, 1),
)
_logaddexp = _binary(
    "LogAddExp",
    np.logaddexp,
    "log(exp(x1) + exp(x2)) without overflow.",
    lambda node, g: _share_of_sum(node, g, 0),
    lambda node, g: _share_of_sum(node, g, 1),
)


def _logaddexp2_kernel(xp, x, y):
    x, y = _floats(xp, x, y)
    # max + log2(1 + 2 ** -|x - y|); equal operands (two equal infinities too) give x + 1 directly.
    out = xp.maximum(x, y) + xp.log1p(2.0 ** -xp.abs(x - y)) / _LN2
    return xp.where(x == y, x + 1.0, out)


_logaddexp2 = _binary(
    "LogAddExp2",
    np.logaddexp2,
    "log2(2**x1 + 2**x2) without overflow.",
    lambda node, g: _share_of_sum(node, g, 0, _LN2),
    lambda node, g: _share_of_sum(node, g, 1, _LN2),
    generic=_logaddexp2_kernel,
)


def _nonzero_divisor(xp, y, ufunc_name):
    """NumPy's integer division by zero: ``y`` with 1 where it is 0, and the mask of those places, where the
    result is 0 (``np.floor_divide``, ``np.remainder``, ``np.fmod``) with NumPy's RuntimeWarning; the mask
    is None when no divisor is 0.  (Python, TensorFlow and PyTorch raise; NumPy's names give NumPy's values.)"""
    zero = y == 0
    if not bool(xp.any(zero)):
        return y, None
    warnings.warn(f"divide by zero encountered in {ufunc_name}", RuntimeWarning, stacklevel=2)
    return xp.where(zero, xp.ones_like(y), y), zero


def _on_ints(function_name):
    """A generic kernel calling the Array API's ``function_name``: bools as int32 (NumPy's int8), an
    integer divided by zero NumPy's 0 (as the NumPy kernel)."""

    def kernel(xp, x, y):
        if x.dtype == xp.bool:
            x, y = xp.astype(x, xp.int32), xp.astype(y, xp.int32)
        zero = None
        if xp.isdtype(y.dtype, "integral"):
            y, zero = _nonzero_divisor(xp, y, function_name)
        out = getattr(xp, function_name)(x, y)
        return out if zero is None else xp.where(zero, xp.zeros_like(out), out)

    kernel.__name__ = kernel.__qualname__ = f"integer_{function_name}"
    return kernel


def _integer_division(name, ufunc, doc, grad_x, grad_y):
    # Integer dtypes kept (two bools give NumPy's int8, held as int32).
    op = defop(name, inputs=("x", "y"), infer=_division_dtype, promote=(0, 1), doc=doc)
    op.generic(_on_ints(ufunc.__name__))
    op.kernel("numpy")(ufunc)  # NumPy's own: an integer divided by zero gives 0 with NumPy's RuntimeWarning
    op.out_kernel("numpy", inplace=True)(ufunc)
    register_gradient(name, grad_x, grad_y)
    return op


# floor(x / y), rounded toward minus infinity (Python's //); piecewise constant: zero gradients (JAX).
_floor_divide = _integer_division(
    "FloorDiv",
    np.floor_divide,
    "floor(x / y), rounded toward minus infinity (Python's //, np.floor_divide).",
    lambda node, g: math_ops.zeros_like(node.inputs[0]),
    lambda node, g: math_ops.zeros_like(node.inputs[1]),
)

# x - floor(x / y) * y with the sign of the divisor (Python's %).
_remainder = _integer_division(
    "FloorMod",
    np.remainder,
    "Remainder with the divisor's sign (Python's %, np.remainder).",
    lambda node, g: g,
    lambda node, g: -g * apply(_floor_divide, tuple(node.inputs)),
)


def _fmod_kernel(xp, x, y):
    # C's fmod, the sign of the dividend: the standard's remainder of the magnitudes (exact: no
    # adjustment happens between positive operands) given x's sign.
    if x.dtype == xp.bool:
        x, y = xp.astype(x, xp.int32), xp.astype(y, xp.int32)
    if xp.isdtype(y.dtype, "integral"):
        y, zero = _nonzero_divisor(xp, y, "fmod")
        r = xp.remainder(xp.abs(x), xp.abs(y))
        r = xp.where(x < 0, -r, r)
        return r if zero is None else xp.where(zero, xp.zeros_like(r), r)
    return xp.copysign(xp.remainder(xp.abs(x), xp.abs(y)), x)


# x - trunc(x / y) * y with the sign of the dividend (C's fmod, np.fmod, torch.fmod).
_fmod = _integer_division(
    "Fmod",
    np.fmod,
    "Remainder with the dividend's sign (C's fmod, np.fmod).",
    lambda node, g: g,
    lambda node, g: -g * trunc(node.inputs[0] / node.inputs[1]),
)
_fmod.generic(_fmod_kernel)


# ------------------------------------------------------------------ gcd and lcm (integers)
def _integers_only(x, y):
    for s in (x, y):
        if s.dtype.kind not in "iu":
            raise TypeError(f"needs integer inputs (NumPy's gcd and lcm refuse floats and bools), got {s.dtype}")
    return _binary_same(x, y)


def _gcd_kernel(xp, x, y):
    # Euclid's algorithm on every element at once, until every remainder is 0.
    a, b = xp.broadcast_arrays(xp.abs(x), xp.abs(y))
    while bool(xp.any(b != 0)):
        going = b != 0
        a, b = xp.where(going, b, a), xp.where(going, xp.remainder(a, xp.where(going, b, xp.ones_like(b))), b)
    return a


def _lcm_kernel(xp, x, y):
    d = _gcd_kernel(xp, x, y)
    zero = d == 0
    return xp.where(zero, d, xp.abs(xp.floor_divide(x, xp.where(zero, xp.ones_like(d), d)) * y))


def _integer_function(name, ufunc, generic, doc):
    op = defop(name, inputs=("x", "y"), infer=_integers_only, promote=(0, 1), differentiable=False, doc=doc)
    op.generic(generic)
    op.kernel("numpy")(ufunc)
    op.out_kernel("numpy", inplace=True)(ufunc)
    return op


_gcd = _integer_function("Gcd", np.gcd, _gcd_kernel, "Greatest common divisor of |x| and |y| (integers).")
_lcm = _integer_function("Lcm", np.lcm, _lcm_kernel, "Least common multiple of |x| and |y| (integers).")


# ------------------------------------------------------------------ bitwise (integers and bools)
def _integers(x, y=None):
    for s in (x,) if y is None else (x, y):
        if s.dtype.kind not in "biu":
            raise TypeError(f"needs integer or bool inputs (NumPy's bitwise ufuncs refuse floats), got {s.dtype}")
    return x if y is None or x.shape == y.shape else _binary_same(x, y)


def _bitwise(name, ufunc, function_name, doc):
    # On bools these are the logical and/or/xor/not, as NumPy's ufuncs (and Python's operators) are.
    op = defop(name, inputs=("x",) if ufunc.nin == 1 else ("x", "y"), infer=_integers, promote=(0, 1), doc=doc)
    op.generic(lambda xp, *arrays: getattr(xp, function_name)(*arrays))
    op.kernel("numpy")(ufunc)
    op.out_kernel("numpy", inplace=True)(ufunc)
    not_differentiable(name)
    return op


_bitwise_and = _bitwise("BitwiseAnd", np.bitwise_and, "bitwise_and", "x & y: bitwise on integers, logical on bools.")
_bitwise_or = _bitwise("BitwiseOr", np.bitwise_or, "bitwise_or", "x | y: bitwise on integers, logical on bools.")
_bitwise_xor = _bitwise("BitwiseXor", np.bitwise_xor, "bitwise_xor", "x ^ y: bitwise on integers, logical on bools.")
_invert = _bitwise("Invert", np.invert, "bitwise_invert", "~x: bitwise not on integers, logical not on bools.")


def _bitwise_count_infer(x):
    _integers(x)
    return spec(x.shape, _dt.int32)  # NumPy's uint8, held in int32 as tensorlib holds every uint8


_bitwise_count = defop(
    "BitwiseCount",
    inputs=("x",),
    infer=_bitwise_count_infer,
    doc="The number of 1-bits in |x| (integers; a bool counts 1 or 0), as int32.",
)
_bitwise_count.kernel("numpy")(lambda x: np.bitwise_count(x).astype(np.int32))
not_differentiable("BitwiseCount")


@_bitwise_count.generic
def _bitwise_count_generic(xp, x):
    # The standard has no popcount: the SWAR one of |x| as uint64 (|int64 min| wraps to 2**63, NumPy's 1 bit).
    if xp.isdtype(x.dtype, "bool"):
        return xp.astype(x, xp.int32)
    bits = xp.astype(xp.abs(xp.astype(x, xp.int64)), xp.uint64)
    bits = bits - xp.bitwise_and(xp.bitwise_right_shift(bits, 1), 0x5555555555555555)
    bits = xp.bitwise_and(bits, 0x3333333333333333) + xp.bitwise_and(
        xp.bitwise_right_shift(bits, 2), 0x3333333333333333
    )
    bits = xp.bitwise_and(bits + xp.bitwise_right_shift(bits, 4), 0x0F0F0F0F0F0F0F0F)
    return xp.astype(xp.bitwise_right_shift(bits * 0x0101010101010101, 56), xp.int32)


def bitwise_count(x) -> Tensor:
    """The number of 1-bits in the absolute value of each integer (NumPy 2's ``bitwise_count``,
    ``jax.numpy.bitwise_count``; a bool counts 1 or 0), as int32 (NumPy's uint8).  Not differentiable.

    >>> import tensorlib as tl
    >>> tl.bitwise_count(tl.tensor([0, 7, -8, 1023])).numpy().tolist()
    [0, 3, 1, 10]
    """
    return apply(_bitwise_count, (x,))


def bitwise_and(x, y) -> Tensor:
    """``x & y`` with broadcasting: bitwise on integers, logical on bools (``numpy.bitwise_and``); floats are
    an error, as in NumPy.  Not differentiable.

    >>> import tensorlib as tl
    >>> tl.bitwise_and(tl.tensor([12, -7]), 10).numpy().tolist(), (tl.tensor([True, True]) & False).numpy().tolist()
    ([8, 8], [False, False])
    """
    return apply(_bitwise_and, (x, y))


def bitwise_or(x, y) -> Tensor:
    """``x | y`` with broadcasting: bitwise on integers, logical on bools (``numpy.bitwise_or``).

    >>> import tensorlib as tl
    >>> tl.bitwise_or(tl.tensor([12, -7]), 1).numpy().tolist()
    [13, -7]
    """
    return apply(_bitwise_or, (x, y))


def bitwise_xor(x, y) -> Tensor:
    """``x ^ y`` with broadcasting: bitwise on integers, logical on bools (``numpy.bitwise_xor``).

    >>> import tensorlib as tl
    >>> tl.bitwise_xor(tl.tensor([12, -7]), 10).numpy().tolist()
    [6, -13]
    """
    return apply(_bitwise_xor, (x, y))


def invert(x) -> Tensor:
    """``~x``: bitwise not on integers (``-x - 1``), logical not on bools (``numpy.invert``).

    >>> import tensorlib as tl
    >>> (~tl.tensor([0, 5, -1])).numpy().tolist(), (~tl.tensor([True, False])).numpy().tolist()
    ([-1, -6, 0], [False, True])
    """
    return apply(_invert, (x,))


bitwise_not = invert


# ------------------------------------------------------------------ shifts (integers and bools)
def _shift_infer(x, y):
    return math_ops.int_for_bool(_integers(x, y))  # two bools give NumPy's int8, held as int32


def _shift_kernel(function_name):
    """A generic kernel with NumPy's answer where C and the Array API leave a shift undefined: by a negative
    count or by the width or more, ``x << n`` is 0 and ``x >> n`` is 0 (-1 for a negative x)."""

    def kernel(xp, x, n):
        if x.dtype == xp.bool:
            x, n = xp.astype(x, xp.int32), xp.astype(n, xp.int32)
        past = xp.logical_or(n < 0, n >= xp.iinfo(x.dtype).bits)
        shifted = getattr(xp, function_name)(x, xp.where(past, xp.zeros_like(n), n))
        fill = xp.zeros_like(shifted) if function_name == "bitwise_left_shift" else -xp.astype(x < 0, x.dtype)
        return xp.where(past, fill, shifted)

    kernel.__name__ = kernel.__qualname__ = function_name
    return kernel


def _shift(name, ufunc, function_name, doc):
    op = defop(name, inputs=("x", "y"), infer=_shift_infer, promote=(0, 1), doc=doc)
    op.generic(_shift_kernel(function_name))
    op.kernel("numpy")(ufunc)
    not_differentiable(name)
    return op


_left_shift = _shift("LeftShift", np.left_shift, "bitwise_left_shift", "x << y: x times 2**y (integers).")
_right_shift = _shift("RightShift", np.right_shift, "bitwise_right_shift", "x >> y: floor(x / 2**y) (integers).")


def left_shift(x, y) -> Tensor:
    """``x << y`` with broadcasting (``numpy.left_shift``): integers and bools, floats are an error.  A shift by
    a negative count or by the dtype's width or more gives 0, as in NumPy.  Not differentiable.

    >>> import tensorlib as tl
    >>> tl.left_shift(tl.tensor([1, -3]), 2).numpy().tolist(), (1 << tl.tensor([0, 3, 64])).numpy().tolist()
    ([4, -12], [1, 8, 0])
    """
    return apply(_left_shift, (x, y))


def right_shift(x, y) -> Tensor:
    """``x >> y`` with broadcasting (``numpy.right_shift``): the sign is kept (floor division by ``2**y``); a
    shift by a negative count or by the dtype's width or more gives 0, or -1 for a negative x, as in NumPy.

    >>> import tensorlib as tl
    >>> tl.right_shift(tl.tensor([13, -13]), 2).numpy().tolist(), (tl.tensor([-8, 8]) >> 64).numpy().tolist()
    ([3, -4], [-1, 0])
    """
    return apply(_right_shift, (x, y))


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def _nan_aware_share(node, g, first):
    # fmax/fmin pick the non-NaN operand; equal operands share the gradient (DESIGN §6: ties split).
    x, y = node.inputs if first else node.inputs[::-1]
    wins = math_ops.logical_or(math_ops.equal(node.outputs[0], x), math_ops.not_equal(y, y))
    tie = math_ops.logical_and(math_ops.equal(x, y), math_ops.equal(x, x))
    share = math_ops.where(
        tie, math_ops.full_like(g, 0.5), math_ops.where(wins, math_ops.ones_like(g), math_ops.zeros_like(g))
    )
    return g * share


def _nan_ignoring(pick):
    def kernel(xp, x, y):
        if xp.isdtype(x.dtype, ("bool", "integral")):
            return pick(xp)(x, y)
        return xp.where(xp.isnan(x), y, xp.where(xp.isnan(y), x, pick(xp)(x, y)))

    return kernel


_fmax = _binary(
    "Fmax",
    np.fmax,
    "Elementwise max ignoring NaNs; ties share the gradient.",
    lambda node, g: _nan_aware_share(node, g, True),
    lambda node, g: _nan_aware_share(node, g, False),
    infer=_binary_same,
    generic=_nan_ignoring(lambda xp: xp.maximum),
)
_fmin = _binary(
    "Fmin",
    np.fmin,
    "Elementwise min ignoring NaNs; ties share the gradient.",
    lambda node, g: _nan_aware_share(node, g, True),
    lambda node, g: _nan_aware_share(node, g, False),
    infer=_binary_same,
    generic=_nan_ignoring(lambda xp: xp.minimum),
)


# ------------------------------------------------------------------ nan_to_num
_nan_to_num = defop(
    "NanToNum",
    inputs=("x",),
    attrs={"nan": 0.0, "posinf": None, "neginf": None},
    infer=lambda x, **attrs: x,
    doc="NaN and infinities replaced by finite numbers; the gradient flows where x is finite.",
)


@_nan_to_num.kernel("numpy")
def _nan_to_num_numpy(x, *, nan, posinf, neginf):
    return np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)


@_nan_to_num.generic
def _nan_to_num_kernel(xp, x, *, nan, posinf, neginf):
    if xp.isdtype(x.dtype, "complex floating"):  # NumPy replaces in the real and imaginary parts apart
        parts = [_nan_to_num_kernel(xp, p, nan=nan, posinf=posinf, neginf=neginf) for p in (xp.real(x), xp.imag(x))]
        return xp.astype(parts[0], x.dtype) + xp.astype(parts[1], x.dtype) * 1j
    if not xp.isdtype(x.dtype, "real floating"):
        return x
    largest = float(xp.finfo(x.dtype).max)
    x = xp.where(xp.isnan(x), xp.full_like(x, nan), x)
    x = xp.where(x == float("inf"), xp.full_like(x, largest if posinf is None else posinf), x)
    return xp.where(x == -float("inf"), xp.full_like(x, -largest if neginf is None else neginf), x)


register_gradient(
    "NanToNum",
    lambda node, g: math_ops.where(math_ops.less(math_ops.abs(_x(node)), float("inf")), g, math_ops.zeros_like(g)),
)


# ------------------------------------------------------------------ complex parts
def _real_part(x):
    return spec(x.shape, _dt.float32 if x.dtype == np.complex64 else _dt.float64) if x.dtype.kind == "c" else x


def _imag_grad(node, g):
    # JAX's convention (docs/complex.md): d Im(z) = -i; a real input has no imaginary part to move.
    return g * -1j if _x(node).dtype.kind == "c" else math_ops.zeros_like(_x(node))


def _angle_grad(node, g):
    # angle(z) = atan2(y, x): dL/dx - i dL/dy = (-y - i x) / |z|**2 = -i / z (taken as 0 at z = 0).
    x = _x(node)
    if x.dtype.kind != "c":
        return math_ops.zeros_like(x)
    zero = math_ops.equal(x, 0)
    return g * math_ops.where(zero, math_ops.zeros_like(x), -1j / math_ops.where(zero, math_ops.ones_like(x), x))


def _complex_part(part, of_real):
    """A generic kernel applying ``xp.<part>`` to complex x and ``of_real(xp, x)`` to real x (the
    standard defines ``imag`` for complex dtypes only)."""

    def kernel(xp, x):
        return getattr(xp, part)(x) if xp.isdtype(x.dtype, "complex floating") else of_real(xp, x)

    kernel.__name__ = kernel.__qualname__ = f"standard_{part}"
    return kernel


def _angle_kernel(xp, x):
    if xp.isdtype(x.dtype, "complex floating"):
        return xp.atan2(xp.imag(x), xp.real(x))
    (x,) = _floats(xp, x)
    return xp.atan2(xp.zeros_like(x), x)  # NumPy's angle of a real: pi for x < 0 and for -0.0


# Real's rule returns g itself: for a complex input the engine casts it to g + 0j, JAX's d Re(z) = 1.
_real = _unary(
    "Real",
    np.real,
    "Real part (x itself for real x).",
    lambda node, g: g,
    infer=_real_part,
    generic=_complex_part("real", lambda xp, x: x),
)
_imag = _unary(
    "Imag",
    np.imag,
    "Imaginary part (zeros for real x).",
    _imag_grad,
    infer=_real_part,
    generic=_complex_part("imag", lambda xp, x: xp.zeros_like(x)),
)
_conj = _unary(
    "Conj",
    np.conjugate,
    "Complex conjugate (x itself for real x).",
    lambda node, g: conj(g),
    infer=_same,
    generic=_complex_part("conj", lambda xp, x: x),
)
_angle = _unary(
    "Angle",
    np.angle,
    "Argument of a complex number: 0 or pi for real x.",
    _angle_grad,
    infer=lambda x: _real_part(x) if x.dtype.kind == "c" else _float_valued(x),
    generic=_angle_kernel,
)
_imag.kernel("numpy")(lambda x: np.imag(x).copy())  # np.imag of a real array is a read-only view


def _complex_infer(x, y):
    # tf.complex / torch.complex / jax.lax.complex take real parts; integers and bools make complex128 as
    # NumPy's x + 1j * y does, float32 (and float16) complex64, float64 complex128.
    if x.dtype.kind == "c":
        raise TypeError(f"the real and imaginary parts must be real numbers, got {x.dtype}")
    complex_dtype = np.dtype(np.complex64 if x.dtype in (np.float16, np.float32) else np.complex128)
    return spec(broadcast_shapes(x.shape, y.shape), complex_dtype)


_complex = defop(
    "Complex",
    inputs=("x", "y"),
    infer=_complex_infer,
    promote=(0, 1),
    doc="x + i y from real x and y, exactly: an infinite or NaN y is the imaginary part as it is.",
)


@_complex.kernel("numpy")
def _complex_numpy(x, y):
    dtype = np.complex64 if np.result_type(x) in (np.float16, np.float32) else np.complex128
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), dtype)
    out.real, out.imag = x, y  # x + 1j * y would give a NaN real part where y is infinite (0 * inf)
    return out


@_complex.generic
def _complex_kernel(xp, x, y):
    single = x.dtype == xp.float32 or x.dtype == getattr(xp, "float16", None)
    dtype = xp.complex64 if single else xp.complex128
    finite_y = xp.isfinite(y)
    real, imag = xp.astype(x, dtype), xp.astype(xp.where(finite_y, y, xp.zeros_like(y)), dtype)
    # The standard has no constructor from parts: y * 1j is exact for finite y; an infinite or NaN y is
    # added as a Python complex constant, which carries its parts exactly.  (A -0.0 part comes out +0.0:
    # the standard's arithmetic cannot make one; NumPy's kernel above keeps it.)
    finite = real + imag * 1j
    special = xp.where(
        xp.isnan(y),
        xp.asarray(complex(0.0, _pymath.nan), dtype=dtype),
        xp.where(
            y > 0,
            xp.asarray(complex(0.0, _pymath.inf), dtype=dtype),
            xp.asarray(complex(0.0, -_pymath.inf), dtype=dtype),
        ),
    )
    return xp.where(finite_y, finite, real + special)


# JAX's convention (docs/complex.md): the adjoint of x + i y sends a cotangent g to (Re g, -Im g).
register_gradient(
    "Complex",
    lambda node, g: math_ops.cast(real(g), _x(node).dtype),
    lambda node, g: math_ops.cast(-imag(g), node.inputs[1].dtype),
)


# ------------------------------------------------------------------ where(condition): indices of nonzeros
def _nonzero_infer(x):
    if not x.shape:
        raise ValueError("nonzero of a 0-d tensor is not defined (as in NumPy); use atleast_1d first")
    return tuple(spec((None,), _dt.int64) for _ in x.shape)


_nonzero = defop(
    "Where",
    inputs=("condition",),
    infer=_nonzero_infer,
    differentiable=False,
    doc="Indices of the nonzero elements, one int64 vector per axis (data-dependent length).",
)
_nonzero.generic(lambda xp, x: tuple(xp.astype(i, xp.int64) for i in xp.nonzero(x)))


# ------------------------------------------------------------------ public functions
def tan(x) -> Tensor:
    """Tangent, elementwise.

    >>> import tensorlib as tl
    >>> round(float(tl.tan(tl.tensor(0.5))), 4)
    0.5463
    """
    return apply(_tan, (x,))


def sinh(x) -> Tensor:
    """Hyperbolic sine, elementwise.

    >>> import tensorlib as tl
    >>> tl.sinh(tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [0.0, 1.1751999855041504]
    """
    return apply(_sinh, (x,))


def cosh(x) -> Tensor:
    """Hyperbolic cosine, elementwise.

    >>> import tensorlib as tl
    >>> tl.cosh(tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [1.0, 1.5430999994277954]
    """
    return apply(_cosh, (x,))


def arcsin(x) -> Tensor:
    """Inverse sine (in [-pi/2, pi/2]); the gradient is 1 / sqrt(1 - x**2).

    >>> import tensorlib as tl
    >>> tl.arcsin(tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [0.0, 1.5707999467849731]
    """
    return apply(_arcsin, (x,))


def arccos(x) -> Tensor:
    """Inverse cosine (in [0, pi]); the gradient is -1 / sqrt(1 - x**2).

    >>> import tensorlib as tl
    >>> tl.arccos(tl.tensor([1.0, 0.0])).numpy().round(4).tolist()
    [0.0, 1.5707999467849731]
    """
    return apply(_arccos, (x,))


def arctan(x) -> Tensor:
    """Inverse tangent; the gradient is 1 / (1 + x**2).

    >>> import tensorlib as tl
    >>> tl.arctan(tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [0.0, 0.7853999733924866]
    """
    return apply(_arctan, (x,))


def arcsinh(x) -> Tensor:
    """Inverse hyperbolic sine.

    >>> import tensorlib as tl
    >>> tl.arcsinh(tl.tensor([0.0, 1.0])).numpy().round(4).tolist()
    [0.0, 0.8813999891281128]
    """
    return apply(_arcsinh, (x,))


def arccosh(x) -> Tensor:
    """Inverse hyperbolic cosine (x >= 1).

    >>> import tensorlib as tl
    >>> tl.arccosh(tl.tensor([1.0, 2.0])).numpy().round(4).tolist()
    [0.0, 1.3170000314712524]
    """
    return apply(_arccosh, (x,))


def arctanh(x) -> Tensor:
    """Inverse hyperbolic tangent (|x| < 1).

    >>> import tensorlib as tl
    >>> tl.arctanh(tl.tensor([0.0, 0.5])).numpy().round(4).tolist()
    [0.0, 0.5493000149726868]
    """
    return apply(_arctanh, (x,))


def deg2rad(x) -> Tensor:
    """Degrees to radians.

    >>> import tensorlib as tl
    >>> tl.deg2rad(tl.tensor([180.0])).numpy().round(4).tolist()
    [3.1415998935699463]
    """
    return apply(_deg2rad, (x,))


def rad2deg(x) -> Tensor:
    """Radians to degrees.

    >>> import tensorlib as tl
    >>> tl.rad2deg(tl.tensor([1.0])).numpy().round(2).tolist()
    [57.29999923706055]
    """
    return apply(_rad2deg, (x,))


def log2(x) -> Tensor:
    """Base-2 logarithm; integers give float64, as in NumPy.

    >>> import tensorlib as tl
    >>> tl.log2(tl.tensor([1, 8])).numpy().tolist()
    [0.0, 3.0]
    """
    return apply(_log2, (x,))


def log10(x) -> Tensor:
    """Base-10 logarithm.

    >>> import tensorlib as tl
    >>> tl.log10(tl.tensor([10.0, 1000.0])).numpy().round(6).tolist()  # (float32: the last bit depends on the CPU)
    [1.0, 3.0]
    """
    return apply(_log10, (x,))


def exp2(x) -> Tensor:
    """2 ** x, elementwise.

    >>> import tensorlib as tl
    >>> tl.exp2(tl.tensor([3.0, -1.0])).numpy().tolist()
    [8.0, 0.5]
    """
    return apply(_exp2, (x,))


def reciprocal(x) -> Tensor:
    """1 / x; integer inputs keep NumPy's integer reciprocal.

    >>> import tensorlib as tl
    >>> tl.reciprocal(tl.tensor([2.0, -4.0])).numpy().tolist()
    [0.5, -0.25]
    """
    x = as_tensor(x)
    if x.dtype == _dt.bool_:  # NumPy's int8 1 // False is -128: no meaningful answer
        raise TypeError(f"reciprocal: needs a number, got a bool tensor (shape {x.shape})")
    return apply(_reciprocal, (x,))


def fabs(x) -> Tensor:
    """Absolute value as a float (``numpy.fabs``); the gradient is sign(x).

    >>> import tensorlib as tl
    >>> tl.fabs(tl.tensor([-2, 3])).numpy().tolist()
    [2.0, 3.0]
    """
    return apply(_fabs, (x,))


def ceil(x) -> Tensor:
    """Smallest integer not below x (not differentiable).

    >>> import tensorlib as tl
    >>> tl.ceil(tl.tensor([-1.5, 1.2])).numpy().tolist()
    [-1.0, 2.0]
    """
    return apply(_ceil, (x,))


def sinc(x) -> Tensor:
    """The normalized sinc, sin(pi x) / (pi x), as ``numpy.sinc``.

    >>> import tensorlib as tl
    >>> tl.sinc(tl.tensor([0.0, 1.0])).numpy().round(6).tolist()
    [1.0, 0.0]
    """
    return apply(_sinc, (x,))


def arctan2(x1, x2) -> Tensor:
    """The angle of the point (x2, x1) in radians, in [-pi, pi].

    >>> import tensorlib as tl
    >>> round(float(tl.arctan2(1.0, -1.0)), 4)
    2.3562
    """
    return apply(_arctan2, (x1, x2))


def hypot(x1, x2) -> Tensor:
    """sqrt(x1**2 + x2**2), without overflow.

    >>> import tensorlib as tl
    >>> tl.hypot(tl.tensor([3.0]), 4.0).numpy().tolist()
    [5.0]
    """
    return apply(_hypot, (x1, x2))


def logaddexp(x1, x2) -> Tensor:
    """log(exp(x1) + exp(x2)), stable for large inputs.

    >>> import tensorlib as tl
    >>> round(float(tl.logaddexp(tl.tensor(1000.0), 1000.0)), 2)
    1000.69
    """
    return apply(_logaddexp, (x1, x2))


def logaddexp2(x1, x2) -> Tensor:
    """log2(2**x1 + 2**x2), without overflow.

    >>> import tensorlib as tl
    >>> tl.logaddexp2(tl.tensor([1.0]), 1.0).numpy().tolist()
    [2.0]
    """
    return apply(_logaddexp2, (x1, x2))


def floor_divide(x1, x2) -> Tensor:
    """floor(x1 / x2), rounded toward minus infinity as Python's ``//`` and ``np.floor_divide``
    (TensorFlow's ``FloorDiv``): integer dtypes are kept, two bools give int32.

    Floats divided by zero give NumPy's inf, -inf or nan; an integer divided by zero gives NumPy's 0 with
    NumPy's RuntimeWarning (Python, TensorFlow and PyTorch raise, JAX gives an unspecified value).  The
    result is piecewise constant: its gradient is zero for both arguments (JAX's rule).

    >>> import tensorlib as tl
    >>> tl.floor_divide(tl.tensor([7, -7]), 2).numpy().tolist()
    [3, -4]
    >>> divmod(tl.tensor([-7.5]), 2.0)
    (tl.Tensor([-4.], dtype=float32), tl.Tensor([0.5], dtype=float32))
    """
    return apply(_floor_divide, (x1, x2))


def remainder(x1, x2) -> Tensor:
    """x1 - floor(x1 / x2) * x2: the sign of the divisor, as Python's ``%``.

    >>> import tensorlib as tl
    >>> tl.remainder(tl.tensor([-3.0, 3.0]), 2.0).numpy().tolist()
    [1.0, 1.0]
    """
    return apply(_remainder, (x1, x2))


mod = remainder


def fmod(x1, x2) -> Tensor:
    """The remainder of ``x1 / x2`` with the sign of ``x1`` (C's ``fmod``, ``np.fmod``), unlike ``remainder``
    (Python's ``%``).  Integer dtypes are kept; an integer divided by zero gives NumPy's 0 (and warning), as
    ``remainder``.  The gradient is 1 for ``x1`` and ``-trunc(x1 / x2)`` for ``x2`` (PyTorch's).

    >>> import tensorlib as tl
    >>> tl.fmod(tl.tensor([-7, 7]), 3).numpy().tolist(), tl.remainder(tl.tensor([-7, 7]), 3).numpy().tolist()
    ([-1, 1], [2, 1])
    """
    return apply(_fmod, (x1, x2))


def gcd(x1, x2) -> Tensor:
    """The greatest common divisor of ``|x1|`` and ``|x2|``, elementwise for integers (``gcd(0, 0) = 0``).
    Not differentiable.

    >>> import tensorlib as tl
    >>> tl.gcd(tl.tensor([12, -18, 0]), 8).numpy().tolist()
    [4, 2, 8]
    """
    return apply(_gcd, (x1, x2))


def lcm(x1, x2) -> Tensor:
    """The least common multiple of ``|x1|`` and ``|x2|``, elementwise for integers (0 if either is 0).
    Not differentiable.

    >>> import tensorlib as tl
    >>> tl.lcm(tl.tensor([4, -6, 0]), 6).numpy().tolist()
    [12, 6, 0]
    """
    return apply(_lcm, (x1, x2))


def fmax(x1, x2) -> Tensor:
    """Elementwise maximum that ignores a NaN operand; equal operands share the gradient.

    >>> import numpy as np, tensorlib as tl
    >>> tl.fmax(tl.tensor([np.nan, 1.0]), tl.tensor([2.0, 0.0])).numpy().tolist()
    [2.0, 1.0]
    """
    return apply(_fmax, (x1, x2))


def fmin(x1, x2) -> Tensor:
    """Elementwise minimum that ignores a NaN operand; equal operands share the gradient.

    >>> import numpy as np, tensorlib as tl
    >>> tl.fmin(tl.tensor([np.nan, 1.0]), tl.tensor([2.0, 0.0])).numpy().tolist()
    [2.0, 0.0]
    """
    return apply(_fmin, (x1, x2))


def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """NaN -> ``nan``, +inf -> ``posinf`` (largest finite by default), -inf -> ``neginf``.

    >>> import numpy as np, tensorlib as tl
    >>> tl.nan_to_num(tl.tensor([np.nan, 1.0]), nan=-1.0).numpy().tolist()
    [-1.0, 1.0]
    """
    values = {"nan": nan, "posinf": posinf, "neginf": neginf}
    for name, value in values.items():
        if isinstance(value, (complex, np.complexfloating)) or isinstance(value, Tensor) and value.dtype.kind == "c":
            # NumPy applies them to the real and imaginary parts alike: they are real numbers (float() said
            # "float() argument must be a string or a real number, not 'complex'", naming no function).
            raise TypeError(f"nan_to_num: {name} must be a real number, got {value!r}")
    return apply(_nan_to_num, (x,), {k: None if v is None and k != "nan" else float(v) for k, v in values.items()})


def real(x) -> Tensor:
    """The real part (a copy of x for real x).

    >>> import tensorlib as tl
    >>> tl.real(tl.tensor([1.5, -2.0])).numpy().tolist()
    [1.5, -2.0]
    """
    return apply(_real, (x,))


def imag(x) -> Tensor:
    """The imaginary part (zeros for real x).

    >>> import tensorlib as tl
    >>> tl.imag(tl.tensor([1.5, -2.0])).numpy().tolist()
    [0.0, 0.0]
    """
    return apply(_imag, (x,))


def conj(x) -> Tensor:
    """The complex conjugate (a copy of x for real x).

    >>> import tensorlib as tl
    >>> tl.conj(tl.tensor([1.5, -2.0])).numpy().tolist()
    [1.5, -2.0]
    """
    x = as_tensor(x)
    if x.dtype == _dt.bool_:  # NumPy's conjugate turns bools into int8; a bool is its own conjugate (JAX)
        return math_ops.identity(x)
    return apply(_conj, (x,))


def complex_(x, y) -> Tensor:
    """The complex tensor ``x + i y`` from its real and imaginary parts (``tf.complex``, ``torch.complex``,
    ``jax.lax.complex``), exactly: unlike ``x + 1j * y``, an infinite ``y`` leaves the real part alone.
    float32 parts make complex64, float64 parts complex128 (integers and bools as float64); the parts
    broadcast.  Differentiable in both (JAX's convention: a cotangent ``g`` gives ``(Re g, -Im g)``).

    >>> import tensorlib as tl
    >>> tl.complex(tl.tensor([1.0, 2.0]), tl.tensor([float("inf"), -0.5])).numpy().tolist()
    [(1+infj), (2-0.5j)]
    """
    return apply(_complex, (x, y))


conjugate = conj
degrees = rad2deg
radians = deg2rad


def angle(x, deg: bool = False) -> Tensor:
    """The argument of complex x (0 or pi for real x), in degrees with ``deg=True``.

    >>> import tensorlib as tl
    >>> tl.angle(tl.tensor([-2.0, 3.0])).numpy().round(4).tolist()
    [3.1415998935699463, 0.0]
    """
    out = apply(_angle, (x,))
    return rad2deg(out) if deg else out


def iscomplex(x) -> Tensor:
    """``numpy.iscomplex``: whether each element has a nonzero imaginary part (all False for real x); a
    bool tensor, not differentiable.

    >>> import tensorlib as tl
    >>> tl.iscomplex(tl.tensor([1 + 0j, 2j])).numpy().tolist()
    [False, True]
    """
    return math_ops.not_equal(imag(x), 0)


def isreal(x) -> Tensor:
    """``numpy.isreal``: whether each element's imaginary part is 0 (all True for real x); bool.

    >>> import tensorlib as tl
    >>> tl.isreal(tl.tensor([1 + 0j, 2j])).numpy().tolist()
    [True, False]
    """
    return math_ops.equal(imag(x), 0)


def iscomplexobj(x) -> bool:
    """``numpy.iscomplexobj``: whether x's dtype is complex, whatever its values (a Python bool, also for a
    traced tensor).

    >>> import tensorlib as tl
    >>> tl.iscomplexobj(tl.tensor([1.0])), tl.iscomplexobj(tl.tensor([1.0]) * 1j)
    (False, True)
    """
    return as_tensor(x).dtype.kind == "c"


def isrealobj(x) -> bool:
    """``numpy.isrealobj``: ``not iscomplexobj(x)``.

    >>> import tensorlib as tl
    >>> tl.isrealobj(tl.tensor([1.0]))
    True
    """
    return not iscomplexobj(x)


def nonzero(x) -> tuple:
    """Indices of the nonzero elements, one int64 tensor per axis (``numpy.nonzero``).

    >>> import tensorlib as tl
    >>> [i.numpy().tolist() for i in tl.nonzero(tl.tensor([[0, 1], [2, 0]]))]
    [[0, 1], [1, 0]]
    """
    return apply(_nonzero, (x,))


_NO_ARGUMENT = object()


def where(condition, x=_NO_ARGUMENT, y=_NO_ARGUMENT):
    """``numpy.where``: with x and y, elements of x where condition holds, else of y (broadcasting);
    with the condition alone, the indices of its nonzero elements (``nonzero``).

    >>> import tensorlib as tl
    >>> tl.where(tl.tensor([True, False]), 1.0, -1.0).numpy().tolist()
    [1.0, -1.0]
    >>> tl.where(tl.tensor([0.0, 3.0, 4.0]))[0].numpy().tolist()
    [1, 2]

    A condition that is not boolean holds where it is nonzero (NaN included), as in NumPy:

    >>> tl.where(tl.tensor([0, 2]), 1.0, -1.0).numpy().tolist()
    [-1.0, 1.0]
    """
    if x is _NO_ARGUMENT and y is _NO_ARGUMENT:
        return nonzero(condition)
    if x is _NO_ARGUMENT or y is _NO_ARGUMENT:
        raise TypeError("where: give both x and y, or neither (then the indices of the nonzero elements)")
    if not isinstance(condition, Tensor) or condition.dtype != _dt.bool_:
        condition = as_tensor(condition)
        if condition.dtype != _dt.bool_:  # the Select op takes bools, as TensorFlow's
            condition = math_ops.not_equal(condition, 0)
    return math_ops.where(condition, x, y)

"""Elementwise math: arithmetic with NumPy broadcasting, unary functions, comparisons.

Each op's gradient rules sit right below it, written with tensorlib ops.
Broadcast gradients are summed back to the input's shape by the engine.
"""

from __future__ import annotations

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..backends import base as _backends
from ..dispatch import apply
from ..grad.registry import not_differentiable, register_gradient
from ..tensor import Tensor, Variable
from ._shapes import broadcast_shapes
from .registry import defop, spec


def _same(x):
    return x


def _broadcast(x, y):
    if x.shape == y.shape or not y.shape:
        return x
    if not x.shape:
        return spec(y.shape, x.dtype)
    return spec(broadcast_shapes(x.shape, y.shape), x.dtype)


def _compare(x, y):
    if x.shape == y.shape or not y.shape:  # the common cases (a mask of x, x against a scalar) skip broadcasting
        return spec(x.shape, _dt.bool_)
    return spec(y.shape if not x.shape else broadcast_shapes(x.shape, y.shape), _dt.bool_)


def _numeric(x):
    if x.dtype == _dt.bool_:
        raise TypeError("x must be a number, got bool")
    return x


def int_for_bool(out):
    """``out`` with an integer dtype where it says bool: power, floor division and remainder of two bools
    give NumPy's int8, which tensorlib holds as int32 (JAX's int32 too)."""
    return spec(out.shape, _dt.int32) if out.dtype == _dt.bool_ else out


def _binary(name, fn, doc):
    op = defop(name, inputs=("x", "y"), infer=_broadcast, promote=(0, 1), doc=doc)
    op.generic(fn)
    return op


# ------------------------------------------------------------------ arithmetic
_add = _binary("Add", lambda xp, x, y: x + y, "x + y with broadcasting.")
register_gradient("Add", lambda node, g: g, lambda node, g: g)

_sub = _binary("Sub", lambda xp, x, y: x - y, "x - y with broadcasting.")
register_gradient("Sub", lambda node, g: g, lambda node, g: -g)

_mul = _binary("Mul", lambda xp, x, y: x * y, "x * y with broadcasting.")
register_gradient("Mul", lambda node, g: g * node.inputs[1], lambda node, g: g * node.inputs[0])


def _div_infer(x, y):
    # True division, as in NumPy: integers and bools give float64.
    out = _broadcast(x, y)
    return out if x.dtype.kind in "fc" else spec(out.shape, _dt.float64)


_div = defop("Div", inputs=("x", "y"), infer=_div_infer, promote=(0, 1), doc="x / y (true division) with broadcasting.")


@_div.generic
def _div_kernel(xp, x, y):
    # True division of integers gives float64 (NumPy's rule); the Array API divides floats only.
    if xp.isdtype(x.dtype, ("bool", "integral")):
        x, y = xp.astype(x, xp.float64), xp.astype(y, xp.float64)
    return x / y


register_gradient("Div", lambda node, g: g / node.inputs[1], lambda node, g: -g * node.outputs[0] / node.inputs[1])


def _pow_infer(x, y):
    return int_for_bool(_broadcast(x, y))


_pow = defop("Pow", inputs=("x", "y"), infer=_pow_infer, promote=(0, 1), doc="x ** y.")


@_pow.generic
def _pow_kernel(xp, x, y):
    if x.dtype == xp.bool:  # the Array API raises bools to no power; NumPy gives int8
        x, y = xp.astype(x, xp.int32), xp.astype(y, xp.int32)
    return xp.pow(x, y)


def pow_grad_x(node, g):
    # y * x ** (y - 1) is 0 * inf at x = 0 when y = 0; the derivative of x ** 0 is 0 there.  The
    # unused branch sees x = 1 at those points, so its own derivative (second order) stays finite.
    x, y = node.inputs
    at_zero = logical_and(equal(x, 0), equal(y, 0))
    safe_x = where(at_zero, ones_like(x), x)
    return g * where(at_zero, zeros_like(node.outputs[0]), y * safe_x ** (y - 1))


def pow_grad_y(node, g):
    # x ** y = exp(y log x): the rule is x ** y * log(x), 0 where x = 0 (JAX's).  A real x < 0 has no real
    # log (0, as x ** y is real only at integer y); a complex x has its principal log on the whole plane
    # (x > 0 compared complex numbers lexicographically: (-2 + 0j) ** z had gradient 0 for z's).
    x = node.inputs[0]
    has_log = not_equal(x, 0) if x.dtype.kind == "c" else x > 0
    safe = where(has_log, x, ones_like(x))
    return g * node.outputs[0] * where(has_log, log(safe), zeros_like(x))


register_gradient("Pow", pow_grad_x, pow_grad_y)


def _share(g, wins, ties):
    """``g`` where this input wins, half of it where the two tie (PyTorch, JAX and autograd split ties)."""
    return g * (cast(wins, dtype=g.dtype) + 0.5 * cast(ties, dtype=g.dtype))


_max = _binary("Maximum", lambda xp, x, y: xp.maximum(x, y), "Elementwise max; ties share the gradient.")
register_gradient(
    "Maximum",
    lambda node, g: _share(g, node.inputs[0] > node.inputs[1], equal(*node.inputs)),
    lambda node, g: _share(g, node.inputs[0] < node.inputs[1], equal(*node.inputs)),
)

_min = _binary("Minimum", lambda xp, x, y: xp.minimum(x, y), "Elementwise min; ties share the gradient.")
register_gradient(
    "Minimum",
    lambda node, g: _share(g, node.inputs[0] < node.inputs[1], equal(*node.inputs)),
    lambda node, g: _share(g, node.inputs[0] > node.inputs[1], equal(*node.inputs)),
)


# ------------------------------------------------------------------ unary
def _to_float(x):
    return x if x.dtype.kind in "fc" else spec(x.shape, _dt.float64)


def _unary(name, fn, doc, grad=None, float_valued=False):
    op = defop(name, inputs=("x",), infer=_to_float if float_valued else _same, float_valued=float_valued, doc=doc)
    op.generic(fn)
    if grad is not None:
        register_gradient(name, grad)
    return op


_neg = _unary("Neg", lambda xp, x: -x, "-x.", lambda node, g: -g)
_identity = _unary("Identity", lambda xp, x: x, "x, as a new tensor.", lambda node, g: g)
_exp = _unary("Exp", lambda xp, x: xp.exp(x), "e ** x.", lambda node, g: g * node.outputs[0], float_valued=True)
_log = _unary(
    "Log", lambda xp, x: xp.log(x), "Natural logarithm.", lambda node, g: g / node.inputs[0], float_valued=True
)
_sqrt = _unary(
    "Sqrt", lambda xp, x: xp.sqrt(x), "Square root.", lambda node, g: g * 0.5 / node.outputs[0], float_valued=True
)
_square = _unary("Square", lambda xp, x: x * x, "x * x.", lambda node, g: g * 2.0 * node.inputs[0])
_abs = defop(
    "Abs",
    inputs=("x",),
    infer=lambda x: spec(x.shape, _dt.real_dtype(x.dtype)),
    doc="|x| (the modulus, real, for complex x); gradient sign(x), or conj(x) / |x| for complex x.",
)
_abs.generic(lambda xp, x: xp.abs(x))


def _abs_grad(node, g):
    x = node.inputs[0]
    if x.dtype.kind != "c":
        return g * sign(x)
    # JAX's convention: d|z| = conj(z) / |z| = |z| / z, taken as 0 at z = 0 (as sign(0) is for reals).
    zero = equal(x, 0)
    return g * where(zero, zeros_like(x), cast(node.outputs[0], dtype=x.dtype) / where(zero, ones_like(x), x))


register_gradient("Abs", _abs_grad)
_sign = defop("Sign", inputs=("x",), infer=_numeric, doc="Sign of x (a number: NumPy and JAX refuse bools).")
_sign.generic(lambda xp, x: xp.sign(x))


def _sign_grad(node, g):
    x = node.inputs[0]
    if x.dtype.kind != "c":
        return zeros_like(x)
    # sign(z) = z / |z| is not constant off the real line: d sign = (dz - s Re(conj(s) dz)) / |z|, whose
    # rule in JAX's convention is g / |z| - Re(g s) / z (PyTorch's sgn, conjugated); 0 at z = 0 as PyTorch.
    # (It was 0, as JAX's and TensorFlow's are, which finite differences contradict.)
    zero = equal(x, 0)
    modulus = abs(x)
    real_part = cast(g * node.outputs[0], dtype=modulus.dtype)
    safe_modulus = where(zero, ones_like(modulus), modulus)
    return where(zero, zeros_like(x), g / safe_modulus - real_part / where(zero, ones_like(x), x))


register_gradient("Sign", _sign_grad)
_sin = _unary("Sin", lambda xp, x: xp.sin(x), "Sine.", lambda node, g: g * cos(node.inputs[0]), float_valued=True)
_cos = _unary("Cos", lambda xp, x: xp.cos(x), "Cosine.", lambda node, g: -g * sin(node.inputs[0]), float_valued=True)
_tanh = _unary(
    "Tanh",
    lambda xp, x: xp.tanh(x),
    "Hyperbolic tangent.",
    lambda node, g: g * (1.0 - node.outputs[0] * node.outputs[0]),
    float_valued=True,
)
_log1p = _unary(
    "Log1p",
    lambda xp, x: xp.log1p(x),
    "log(1 + x), accurate near 0.",
    lambda node, g: g / (node.inputs[0] + 1.0),
    float_valued=True,
)
_expm1 = _unary(
    "Expm1",
    lambda xp, x: xp.expm1(x),
    "exp(x) - 1, accurate near 0.",
    lambda node, g: g * exp(node.inputs[0]),  # not output + 1: that rounds to 0 below x = -17 in float32
    float_valued=True,
)


def _sigmoid_kernel(xp, x):
    # Split by sign so that exp never overflows; for complex z by the sign of its real part (|z| gave
    # sigmoid(|z|), real, for every complex z).
    # (A NumPy or CuPy dtype answers .kind in 0.15 us; xp.isdtype takes 2.7 us on NumPy.)
    if x.dtype.kind == "c" if isinstance(x.dtype, np.dtype) else xp.isdtype(x.dtype, "complex floating"):
        positive = xp.real(x) >= 0
        e = xp.exp(xp.where(positive, -x, x))
    else:
        positive = x >= 0
        e = xp.exp(-xp.abs(x))
    return xp.astype(xp.where(positive, 1 / (1 + e), e / (1 + e)), x.dtype, copy=False)


_sigmoid = _unary(
    "Sigmoid",
    _sigmoid_kernel,
    "1 / (1 + exp(-x)), overflow-free.",
    lambda node, g: g * node.outputs[0] * (1.0 - node.outputs[0]),
    float_valued=True,
)

_round = _unary("Round", lambda xp, x: xp.round(x), "Round half to even (not differentiable).")
not_differentiable("Round")
_floor = _unary("Floor", lambda xp, x: xp.floor(x), "Floor (not differentiable).")
not_differentiable("Floor")


# On NumPy the elementwise kernels are the ufuncs themselves: no Python frame between dispatch and C.
# They take out= (and handle overlap with their inputs), so the graph executor may reuse buffers.
for _op, _ufunc in (
    (_add, np.add),
    (_sub, np.subtract),
    (_mul, np.multiply),
    (_div, np.true_divide),
    (_max, np.maximum),
    (_min, np.minimum),
    (_neg, np.negative),
    (_exp, np.exp),
    (_log, np.log),
    (_sqrt, np.sqrt),
    (_square, np.square),
    (_abs, np.absolute),
    (_sign, np.sign),
    (_sin, np.sin),
    (_cos, np.cos),
    (_tanh, np.tanh),
    (_log1p, np.log1p),
    (_expm1, np.expm1),
    (_floor, np.floor),
):
    _op.kernel("numpy")(_ufunc)
    _op.out_kernel("numpy", inplace=True)(_ufunc)


# ------------------------------------------------------------------ cast, comparisons, where, clip
def _cast_infer(x, *, dtype):
    return spec(x.shape, _dt.as_dtype(dtype))


_cast = defop(
    "Cast",
    inputs=("x",),
    attrs={"dtype": _dt.float32},
    infer=_cast_infer,
    doc="Convert to another dtype; the gradient is cast back.",
)


@_cast.generic
def _cast_kernel(xp, x, *, dtype):
    # Complex to real keeps the real part, as NumPy does, without its ComplexWarning; to bool it is x != 0
    # (NumPy, JAX, PyTorch: 1j is true, as bool(1j) is; the real part made it False).
    if xp.isdtype(x.dtype, "complex floating") and np.dtype(dtype).kind != "c":
        if np.dtype(dtype).kind == "b":
            return x != 0
        x = xp.real(x)
    return xp.astype(x, dtype)


# To a real input, the gradient from a complex result is its real part: Cast back does exactly that.
register_gradient(
    "Cast", lambda node, g: cast(g, dtype=node.inputs[0].dtype) if node.inputs[0].dtype.kind in "fc" else None
)
dispatch._cast_op = lambda x, dtype: _cast(x, dtype=dtype)

_comparisons = {}
for _name, _fn in {
    "Equal": "equal",
    "NotEqual": "not_equal",
    "Less": "less",
    "LessEqual": "less_equal",
    "Greater": "greater",
    "GreaterEqual": "greater_equal",
    "LogicalAnd": "logical_and",
    "LogicalOr": "logical_or",
    "LogicalXor": "logical_xor",
}.items():
    _comparisons[_name] = defop(
        _name,
        inputs=("x", "y"),
        infer=_compare,
        promote=(0, 1),
        differentiable=False,
        doc=f"Elementwise {_fn} (not differentiable).",
    )
    _comparisons[_name].generic(lambda xp, x, y, _fn=_fn: getattr(xp, _fn)(*_ordered(xp, _fn, x, y)))
    _comparisons[_name].kernel("numpy")(getattr(np, _fn))  # the ufunc itself (NumPy orders bools)


def _ordered(xp, fn, x, y):
    # NumPy orders bools (False < True); the Array API compares bools for equality only.
    if fn in ("less", "less_equal", "greater", "greater_equal") and xp.isdtype(x.dtype, "bool"):
        return xp.astype(x, xp.int8), xp.astype(y, xp.int8)
    return x, y


_logical_not = defop(
    "LogicalNot", inputs=("x",), infer=lambda x: spec(x.shape, _dt.bool_), differentiable=False, doc="Elementwise not."
)
_logical_not.generic(lambda xp, x: xp.logical_not(x))


def _where_infer(condition, x, y):
    if condition.dtype != _dt.bool_:
        raise TypeError(f"condition must be bool, got {condition.dtype}")
    return spec(broadcast_shapes(condition.shape, x.shape, y.shape), x.dtype)


_where = defop(
    "Select",
    inputs=("condition", "x", "y"),
    infer=_where_infer,
    promote=(1, 2),
    doc="x where condition else y, with broadcasting.",
)


@_where.generic
def _where_kernel(xp, condition, x, y):
    return xp.where(condition, x, y)


register_gradient(
    "Select",
    None,
    lambda node, g: where(node.inputs[0], g, zeros_like(g)),
    lambda node, g: where(node.inputs[0], zeros_like(g), g),
)


def _clip_infer(x, lo, hi):
    return spec(broadcast_shapes(x.shape, lo.shape, hi.shape), x.dtype)


_clip = defop(
    "ClipByValue",
    inputs=("x", "clip_value_min", "clip_value_max"),
    infer=_clip_infer,
    promote=(0, 1, 2),
    doc="min(max(x, lo), hi); the gradient flows where x is inside.",
)


@_clip.generic
def _clip_kernel(xp, x, lo, hi):
    return xp.minimum(xp.maximum(x, lo), hi)


def _clip_mask(node, g, which):
    # The output is min(max(x, lo), hi): where lo > hi it is hi whatever x is (NumPy's clip), so lo
    # wins only below an interval that is not empty.  At a bound x keeps the gradient (TF, PyTorch).
    x, lo, hi = node.inputs
    if which == "x":
        inside = logical_and(x >= lo, x <= hi)
    elif which == "lo":
        inside = logical_and(x < lo, lo <= hi)
    else:
        inside = logical_or(x > hi, lo > hi)
    return where(inside, g, zeros_like(g))


register_gradient(
    "ClipByValue",
    lambda node, g: _clip_mask(node, g, "x"),
    lambda node, g: _clip_mask(node, g, "lo"),
    lambda node, g: _clip_mask(node, g, "hi"),
)


# ------------------------------------------------------------------ *_like (work on symbolic tensors too)
def _like_infer(x, *, value=0, dtype=None):
    dtype = x.dtype if dtype is None else _dt.as_dtype(dtype)
    _dt.check_keeps_imaginary(np.asarray(value).dtype, dtype, "value")
    return spec(x.shape, dtype)


_full_like = defop(
    "FullLike",
    inputs=("x",),
    attrs={"value": 0, "dtype": None},
    infer=_like_infer,
    differentiable=False,
    shape_only=True,
    doc="A tensor of x's shape filled with value.",
)


@_full_like.generic
def _full_like_kernel(xp, x, *, value, dtype):
    return xp.full(x.shape, value, dtype=x.dtype if dtype is None else dtype)


# ------------------------------------------------------------------ public functions
def add(x, y) -> Tensor:
    """x + y with NumPy broadcasting.

    >>> import tensorlib as tl
    >>> tl.add(tl.tensor([1.0, 2.0]), 1.0).numpy().tolist()
    [2.0, 3.0]
    """
    return apply(_add, (x, y))


def subtract(x, y) -> Tensor:
    return apply(_sub, (x, y))


def multiply(x, y) -> Tensor:
    return apply(_mul, (x, y))


def divide(x, y) -> Tensor:
    return apply(_div, (x, y))


true_divide = divide


def power(x, y) -> Tensor:
    return apply(_pow, (x, y))


def maximum(x, y) -> Tensor:
    return apply(_max, (x, y))


def minimum(x, y) -> Tensor:
    return apply(_min, (x, y))


def negative(x) -> Tensor:
    return apply(_neg, (x,))


def identity(x) -> Tensor:
    return apply(_identity, (x,))


def unaliased(x):
    """``x`` returned by a function that has nothing to do to it: a Tensor as it is (values are immutable), a
    Variable's current value as a new Tensor (what ``read_value`` gives), so that the result neither follows a
    later ``assign`` nor is the Variable an ``assign`` on it would change.  Anything else as it is."""
    return apply(_identity, (x,)) if isinstance(x, Variable) else x


_stop = defop(
    "StopGradient",
    inputs=("x",),
    infer=lambda x: x,
    differentiable=False,
    doc="Identity in the forward pass; no gradient flows through it.",
)


@_stop.generic
def _stop_gradient_kernel(xp, x):
    return x


def stop_gradient(x):
    """``x`` unchanged, with no gradient flowing back through it; a nested structure of tensors (dict, list,
    tuple, namedtuple) has each leaf stopped, as ``jax.lax.stop_gradient`` does (a list of plain numbers is one
    tensor, as for every op).

    >>> import tensorlib as tl
    >>> float(tl.grad(lambda x: x * tl.stop_gradient(x))(3.0))
    3.0
    >>> float(tl.grad(lambda x: tl.stop_gradient({"a": x})["a"] + x)(3.0))
    1.0
    """
    if isinstance(x, (Tensor, np.ndarray, np.generic, int, float, complex)):
        return _stop(x)
    from .. import tree

    if isinstance(x, (list, tuple)) and not any(isinstance(leaf, Tensor) for leaf in tree.leaves(x)):
        return _stop(x)  # nested lists of numbers: one tensor, as every op makes of them
    return tree.map(_stop, x)


def exp(x) -> Tensor:
    return apply(_exp, (x,))


def log(x) -> Tensor:
    return apply(_log, (x,))


def log1p(x) -> Tensor:
    return apply(_log1p, (x,))


def expm1(x) -> Tensor:
    return apply(_expm1, (x,))


def sqrt(x) -> Tensor:
    return apply(_sqrt, (x,))


def square(x) -> Tensor:
    x = dispatch.as_tensor(x)
    if x.dtype == _dt.bool_:  # NumPy squares bools as int8, JAX as int32: the values 0 and 1, as integers
        x = cast(x, _dt.int32)
    return apply(_square, (x,))


def abs(x) -> Tensor:  # noqa: A001 - NumPy's name
    return apply(_abs, (x,))


absolute = abs


def sign(x) -> Tensor:
    return apply(_sign, (x,))


def sin(x) -> Tensor:
    return apply(_sin, (x,))


def cos(x) -> Tensor:
    return apply(_cos, (x,))


def tanh(x) -> Tensor:
    return apply(_tanh, (x,))


def sigmoid(x) -> Tensor:
    return apply(_sigmoid, (x,))


def round(x, decimals: int = 0) -> Tensor:  # noqa: A001 - NumPy's name
    """Round half to even to ``decimals`` decimal places (``numpy.round``: scale by ``10 ** decimals``,
    round, scale back; negative ``decimals`` round to tens, hundreds, ...).  Not differentiable.

    >>> import tensorlib as tl
    >>> tl.round(tl.tensor([0.5, 1.5, 2.675], dtype="float64"), 2).numpy().tolist()
    [0.5, 1.5, 2.68]
    >>> round(tl.tensor([1234, -1250]), -2).numpy().tolist()
    [1200, -1200]
    """
    x = dispatch.as_tensor(x)
    if x.dtype == _dt.bool_:  # as JAX: NumPy's float16 answer has no tensorlib dtype rule behind it
        raise TypeError(f"round: needs a number, got a bool tensor (shape {x.shape})")
    if isinstance(decimals, (bool, np.bool_)) or not isinstance(decimals, (int, np.integer)):
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__} {decimals!r:.20}")
    if decimals == 0:
        return apply(_round, (x,))
    if x.dtype.kind == "c":  # NumPy rounds the real and imaginary parts apart
        from .elementwise import complex_, imag, real

        return complex_(round(real(x), decimals), round(imag(x), decimals))
    if _dt.is_integer(x.dtype):
        if decimals > 0:
            return identity(x)
        return _round_integers(x, 10 ** int(-decimals))
    scale = 10.0 ** int(decimals if decimals > 0 else -decimals)  # NumPy's steps, for the same roundings
    if decimals > 0:
        return apply(_round, (x * scale,)) / scale
    return apply(_round, (x / scale,)) * scale


def _round_integers(x, scale):
    """Integers rounded half to even to a multiple of ``scale``, exactly (as integer arithmetic, a result
    beyond the dtype wraps around).  Dividing in float64 lost the digits of int64 values beyond 2**53:
    2**60 + 12345 to -2 places gave 1152921504606859264, no multiple of 100 (NumPy 2.4 too)."""
    from .elementwise import floor_divide, remainder

    top = int(np.iinfo(x.dtype).max)
    if scale > top:  # the quotient is 0 or -1: only int64 and 10**19 can reach +-10**19 (wrapped)
        half = scale // 2
        if half >= top:
            return zeros_like(x)
        wrapped = scale - 2 * (top + 1)
        return where(x > half, full_like(x, wrapped), where(x < -half, full_like(x, -wrapped), zeros_like(x)))
    quotient, rest = floor_divide(x, scale), remainder(x, scale)  # 0 <= rest < scale
    tie = equal(rest, scale - rest)
    up = logical_or(greater(rest, scale - rest), logical_and(tie, equal(remainder(quotient, 2), 1)))
    return (quotient + cast(up, x.dtype)) * scale


def floor(x) -> Tensor:
    return apply(_floor, (x,))


def cast_for_loop(name: str, inputs, dtype, casting: str = "same_kind") -> list:
    """NumPy's ``dtype=`` of a ufunc, join or ``einsum``: the inputs cast to ``dtype`` when NumPy's ``casting``
    rule allows it, so the computation runs in it (``np.add(i32, 1, dtype=np.float64)``); a Python number is
    checked as its kind's widest dtype (NumPy 2's rule: ``1.5`` as float64) and cast too.

    >>> import numpy as np
    >>> [x.dtype for x in cast_for_loop("add", [np.ones(2, np.int32), 1], "float64")]
    [dtype('float64'), dtype('float64')]
    """
    dtype = np.dtype(dtype)
    cast_inputs = []
    for x in inputs:
        if not hasattr(x, "dtype"):  # a Python number or list, as NumPy reads it
            x = np.asarray(x, dtype=np.dtype(type(x)) if isinstance(x, (float, complex)) else None)
        have = np.dtype(x.dtype)
        if not np.can_cast(have, dtype, casting):
            raise TypeError(
                f"{name}: cannot cast an input of dtype {have} (shape {tuple(x.shape)}) to dtype={dtype} "
                f"with casting rule {casting!r}"
            )
        cast_inputs.append(x.astype(dtype) if isinstance(x, np.ndarray) else cast(x, dtype))
    return cast_inputs


def cast(x, dtype) -> Tensor:
    """Convert ``x`` to ``dtype``; a dtype tensorlib does not hold (``int8``) is an error, never another width.

    Complex to real takes the real part on purpose, as ``tf.cast`` does (``tl.tensor`` refuses it).

    >>> import tensorlib as tl
    >>> tl.cast(tl.tensor([1.7, -1.7]), int).numpy().tolist()
    [1, -1]
    >>> tl.cast(tl.tensor([1.5 + 2j]), "float32").numpy().tolist()
    [1.5]
    """
    try:
        dtype = _dt.as_dtype(dtype)
    except TypeError as e:
        where = f" (input shape {tuple(x.shape)} {x.dtype})" if hasattr(x, "dtype") else ""
        raise TypeError(f"Cast: {e}{where}") from None
    if x.__class__ is float or x.__class__ is complex:  # exactly, not through the default float32 first
        x = dispatch.to_tensor(x, _backends.current(), _dt.float64 if x.__class__ is float else _dt.complex128)
    return apply(_cast, (x,), {"dtype": dtype})


def where(condition, x, y) -> Tensor:
    """Elements of x where condition holds, else of y (broadcasting).

    The gradient is ``g`` for the selected branch and exactly 0 for the other, but that 0 is then
    multiplied by the unselected branch's own derivative: where that is inf or NaN (``sqrt``, ``log`` at
    0 or below) the product is NaN, as in TensorFlow, JAX and PyTorch.  Make the unselected branch's
    input safe with a second ``where``:

    >>> import tensorlib as tl
    >>> x = tl.tensor([-1.0, 4.0])
    >>> tl.grad(lambda x: tl.sum(tl.where(x > 0, tl.sqrt(x), 0.0)))(x).numpy().tolist()
    [nan, 0.25]
    >>> safe = lambda x: tl.where(x > 0, x, 1.0)
    >>> tl.grad(lambda x: tl.sum(tl.where(x > 0, tl.sqrt(safe(x)), 0.0)))(x).numpy().tolist()
    [0.0, 0.25]
    """
    return apply(_where, (condition, x, y))


def clip(x, clip_value_min, clip_value_max) -> Tensor:
    """``min(max(x, clip_value_min), clip_value_max)`` with broadcasting (``clip_value_max`` where the bounds cross,
    as ``numpy.clip``).  The gradient goes to whichever of the three the output is; ``x`` keeps it at a bound.

    A bound given as None is no bound (``numpy.clip``, ``torch.clamp``); with both None the result is ``x``.

    >>> import tensorlib as tl
    >>> tl.grad(lambda lo: tl.sum(tl.clip(tl.tensor([0.0, 1.5]), lo, 1.0)))(tl.tensor(2.0)).numpy().item()
    0.0
    >>> tl.clip(tl.tensor([-1.0, 2.0]), None, 1.0).numpy().tolist()
    [-1.0, 1.0]
    """
    if clip_value_min is None or clip_value_max is None:
        x = dispatch.as_tensor(x)
        if clip_value_min is None and clip_value_max is None:
            return identity(x)
        # No bound: one that clips nothing in the dtype x and the given bound promote to (int32 x clipped
        # below by 1e10 is float64; an int32 ceiling would make every element 2**31 - 1).
        lowest, highest = _unbounded(_clip_dtype(x, clip_value_max if clip_value_min is None else clip_value_min))
        clip_value_min = lowest if clip_value_min is None else clip_value_min
        clip_value_max = highest if clip_value_max is None else clip_value_max
    return apply(_clip, (x, clip_value_min, clip_value_max))


def _clip_dtype(x: Tensor, bound) -> np.dtype:
    """The dtype ``clip`` gives for ``x`` and one bound: a Python number is weak, anything else promotes."""
    if isinstance(bound, (bool, int, float, complex)) and not isinstance(bound, np.generic):
        return _dt.weak_scalar_dtype(bound, x.dtype)
    return _dt.promote_types(x.dtype, dispatch.as_tensors(x, bound)[1].dtype)


def _unbounded(dtype):
    """The bounds that clip nothing in ``dtype`` (Python scalars: weak, they take x's dtype)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    return (False, True) if dtype.kind == "b" else (-float("inf"), float("inf"))


_MIRRORED = {"Less": "Greater", "LessEqual": "GreaterEqual", "Greater": "Less", "GreaterEqual": "LessEqual"}
# ``x OP v`` for an int v above (below) every value of x's integer dtype has, at every x, the answer of
# ``x OP' max`` (``x OP' min``): ``x < 2**63`` is ``x <= max``, always True; ``x == 2**63`` is ``x > max``.
_PAST_MAX = {
    "Less": "LessEqual",
    "LessEqual": "LessEqual",
    "NotEqual": "LessEqual",
    "Greater": "Greater",
    "GreaterEqual": "Greater",
    "Equal": "Greater",
}
_PAST_MIN = {
    "Less": "Less",
    "LessEqual": "Less",
    "Equal": "Less",
    "Greater": "GreaterEqual",
    "GreaterEqual": "GreaterEqual",
    "NotEqual": "GreaterEqual",
}


def compare(name: str, x, y) -> Tensor:
    """The comparison op ``name`` (``"Less"``, ``"Equal"``, ...) of x and y.  A Python int that the other
    side's integer dtype cannot hold compares exactly, as in NumPy 2 (converting it to that dtype is an
    OverflowError for arithmetic): ``int64 < 2**63`` is True everywhere, ``int32 == 2**40`` False.

    >>> import tensorlib as tl
    >>> compare("Less", tl.tensor([1, 2]), 2**64).numpy().tolist(), compare("Equal", -(2**70), tl.tensor([0])).numpy().tolist()
    ([True, True], [False])
    """
    # Every integer dtype tensorlib holds (int32, int64; int64 next to bools) holds an int32.
    if y.__class__ is int and not -(2**31) <= y < 2**31 or x.__class__ is int and not -(2**31) <= x < 2**31:
        if x.__class__ is int and y.__class__ is not int:
            x, y, name = y, x, _MIRRORED.get(name, name)
        dtype = getattr(x, "dtype", None)
        # (uint64, which tensorlib does not hold, is left to apply's error naming the op and input)
        if y.__class__ is int and isinstance(dtype, np.dtype) and dtype.kind in "biu" and dtype != np.uint64:
            info = np.iinfo(_dt.weak_scalar_dtype(y, _dt.of_array(dtype)))
            if y > info.max:
                name, y = _PAST_MAX[name], int(info.max)
            elif y < info.min:
                name, y = _PAST_MIN[name], int(info.min)
    return apply(_comparisons[name], (x, y))


def comparison_method(name: str):
    """``Tensor.__lt__`` & co. for the comparison op ``name``: :func:`compare` for a Python int past int32,
    else the op itself (no extra call on the common path)."""
    op = _comparisons[name]
    return lambda self, other: (
        apply(op, (self, other))
        if other.__class__ is not int or -(2**31) <= other < 2**31
        else compare(name, self, other)
    )


def equal(x, y):
    return compare("Equal", x, y)


def not_equal(x, y):
    return compare("NotEqual", x, y)


def less(x, y):
    return compare("Less", x, y)


def less_equal(x, y):
    return compare("LessEqual", x, y)


def greater(x, y):
    return compare("Greater", x, y)


def greater_equal(x, y):
    return compare("GreaterEqual", x, y)


def logical_and(x, y):
    return apply(_comparisons["LogicalAnd"], (x, y))


def logical_or(x, y):
    return apply(_comparisons["LogicalOr"], (x, y))


def logical_xor(x, y):
    """True where exactly one of x and y is true (nonzero), with broadcasting.  Not differentiable.

    >>> import tensorlib as tl
    >>> tl.logical_xor(tl.tensor([True, True, False]), tl.tensor([True, False, False])).numpy().tolist()
    [False, True, False]
    """
    return apply(_comparisons["LogicalXor"], (x, y))


def logical_not(x):
    return apply(_logical_not, (x,))


def full_like(x, value, dtype=None) -> Tensor:
    """A tensor of ``x``'s shape (and dtype, unless ``dtype`` is given) filled with ``value``; a tensor ``value``
    is broadcast and keeps its gradient, as in ``tl.full``.

    >>> import tensorlib as tl
    >>> tl.grad(lambda v: tl.sum(tl.full_like(tl.zeros((2, 3)), v)))(tl.tensor(1.5)).numpy().item()
    6.0
    """
    if isinstance(value, Tensor):
        from .shape import broadcast_to

        x = dispatch.as_tensor(x)
        filled = cast(value, x.dtype if dtype is None else dtype)
        if None in x.shape:  # a traced size left open: broadcast against x itself
            return filled + zeros_like(x, filled.dtype)
        return broadcast_to(filled, x.shape)
    x = dispatch.as_tensor(x)
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    dispatch.check_int_range(value, x.dtype if dtype is None else dtype, f"full_like (x shape {x.shape}): value")
    return apply(_full_like, (x,), {"value": value, "dtype": dtype})


def zeros_like(x, dtype=None) -> Tensor:
    return apply(_full_like, (x,), {"value": 0, "dtype": None if dtype is None else _dt.as_dtype(dtype)})


def ones_like(x, dtype=None) -> Tensor:
    return apply(_full_like, (x,), {"value": 1, "dtype": None if dtype is None else _dt.as_dtype(dtype)})

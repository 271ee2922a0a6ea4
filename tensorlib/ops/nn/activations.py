"""Elementwise activations (Relu, LeakyRelu, Elu, Softplus, Erf, Gelu) and Softmax, LogSoftmax."""

from __future__ import annotations

import functools
import math as _math

import numpy as np

from ... import dtypes as _dt
from ...backends import generic_nn as _generic
from ...backends import numpy_nn as _kernels
from ...dispatch import apply, as_tensor
from ...grad.registry import register_gradient
from ...tensor import Node, Tensor
from .. import math as math_ops
from .. import reduce as reduce_ops
from .._shapes import normalize_axis
from ..registry import defop
from ._common import _check_float, _op_type


# ------------------------------------------------------------------ float16 computed in float32
# Activations compute float16 in float32 and round once, as PyTorch's kernels do: their formulas cancel near the
# derivative's zeros, where float16 kept no digit (silu' was 527 float16 ulps off at x = -1.28, mish' 900 at
# -1.19, gelu' 300 at -0.76, its tanh form's 670, hard_swish' 43 at -1.52; silu and mish themselves 6 ulps).
def _float16_in_float32_kernel(kernel):
    """A generic kernel ``kernel(xp, x, **attrs)`` that computes float16 ``x`` in float32, rounded once."""

    @functools.wraps(kernel)
    def run(xp, x, **attrs):
        half = getattr(xp, "float16", None)
        if half is None or x.dtype != half:
            return kernel(xp, x, **attrs)
        return kernel(xp, x.astype(xp.float32), **attrs).astype(half)

    return run


def _float16_in_float32_rule(rule):
    """A gradient rule ``rule(node, g)`` of a one-input op that computes float16 in float32, rounded once."""

    @functools.wraps(rule)
    def gradient(node, g):
        if node.inputs[0].dtype != _dt.float16:
            return rule(node, g)
        wide = Node(
            node.op,
            tuple(math_ops.cast(x, _dt.float32) for x in node.inputs),
            tuple(math_ops.cast(y, _dt.float32) for y in node.outputs),
            node.attrs,
            node.site,
            node.phase,
        )
        return math_ops.cast(rule(wide, math_ops.cast(g, _dt.float32)), _dt.float16)

    return gradient


# ------------------------------------------------------------------ Relu and ReluGrad
def _float_features(features, **attrs):
    """The shape rule of a float-valued activation op (defined with ``float_valued=True``, so integer and bool
    features arrive cast to float64, DESIGN §6); complex features are refused."""
    _check_float("features", features)
    return features


def _numeric_features(features):
    if features.dtype.kind == "b":  # TF and PyTorch refuse bools; NumPy's maximum(bool, 0) is an int
        raise TypeError("features must be a number, got bool")
    if features.dtype.kind == "c":  # TF and PyTorch refuse it too: NumPy's lexicographic maximum gave relu(-1+2j) 0
        raise TypeError(f"features must be real, got {features.dtype}")
    return features


_relu = defop("Relu", inputs=("features",), infer=_numeric_features, doc="max(features, 0).")


@_relu.generic
def _relu_kernel(xp, features):
    return xp.maximum(features, 0)


def _relu_gradient(node, g):
    return _relu_grad(g, node.outputs[0])


register_gradient("Relu", _relu_gradient)

_relu_grad = defop(
    "ReluGrad",
    inputs=("gradients", "features"),
    infer=lambda gradients, features: gradients,
    promote=(0, 1),
    doc="gradients where features > 0, else 0 (in the gradients' dtype).",
)


@_relu_grad.generic
def _relu_grad_kernel(xp, gradients, features):
    return xp.where(features > 0, gradients, xp.zeros_like(gradients))


_relu.kernel("numpy")(_kernels.relu)
_relu_grad.kernel("numpy")(_kernels.relu_grad)
_relu.out_kernel("numpy", inplace=True)(_kernels.relu)
_relu_grad.out_kernel("numpy", inplace=(1,))(_kernels.relu_grad)  # out may be the features, never dy


# The mask's derivative is zero wherever it is defined: no gradient flows to ``features``.
register_gradient("ReluGrad", lambda node, g: _relu_grad(g, node.inputs[1]), None)


@_op_type("Relu")
def relu(features) -> Tensor:
    """max(features, 0); its gradient is the incoming gradient where features > 0.

    >>> import tensorlib as tl
    >>> tl.nn.relu(tl.tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """
    return apply(_relu, (features,))


# ------------------------------------------------------------------ LeakyRelu, Elu, Softplus
_leaky_relu = defop(
    "LeakyRelu",
    inputs=("features",),
    attrs={"alpha": 0.2},
    infer=_float_features,
    float_valued=True,
    doc="x where x > 0, else alpha * x.",
)
_leaky_relu.generic(lambda xp, x, *, alpha: xp.where(x > 0, x, x * alpha))
register_gradient("LeakyRelu", lambda node, g: math_ops.where(node.inputs[0] > 0, g, g * node.attrs["alpha"]))


@_op_type("LeakyRelu")
def leaky_relu(features, alpha: float = 0.2) -> Tensor:
    """features where positive, else ``alpha * features``.

    >>> import tensorlib as tl
    >>> tl.nn.leaky_relu(tl.tensor([-1.0, 2.0])).numpy().tolist()
    [-0.2, 2.0]
    """
    return apply(_leaky_relu, (features,), {"alpha": float(alpha)})


_elu = defop(
    "Elu", inputs=("features",), infer=_float_features, float_valued=True, doc="x where x > 0, else exp(x) - 1."
)
_elu.generic(lambda xp, x: xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0))))
# exp(x), not the output + 1: expm1(x) + 1 rounds to 0 below x = -17 in float32 (-37 in float64), where exp(x)
# is still a normal number (PyTorch's and JAX's gradients are exp(x) there).
register_gradient(
    "Elu",
    lambda node, g: math_ops.where(node.inputs[0] > 0, g, g * math_ops.exp(math_ops.minimum(node.inputs[0], 0.0))),
)


@_op_type("Elu")
def elu(features) -> Tensor:
    """features where positive, else ``exp(features) - 1``.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.elu(tl.tensor(-1.0))), 4)
    -0.6321
    """
    return apply(_elu, (features,))


_softplus = defop(
    "Softplus",
    inputs=("features",),
    infer=_float_features,
    float_valued=True,
    doc="log(1 + exp(x)), without overflow for large |x|.",
)
_softplus.generic(lambda xp, x: xp.logaddexp(x, 0))
register_gradient("Softplus", _float16_in_float32_rule(lambda node, g: g * math_ops.sigmoid(node.inputs[0])))


@_op_type("Softplus")
def softplus(features, beta: float = 1.0, threshold: float | None = None) -> Tensor:
    """log(1 + exp(features)), exact for large positive and negative inputs.

    PyTorch's ``F.softplus(x, beta, threshold)``: ``log(1 + exp(beta * x)) / beta``, and ``x`` itself (derivative
    1) where ``beta * x > threshold``.  ``threshold=None`` (the default) never switches: the exact function,
    where PyTorch's default ``threshold=20`` differs from it by up to ``exp(-20)``.

    >>> import tensorlib as tl
    >>> tl.nn.softplus(tl.tensor([-1000.0, 1000.0])).numpy().tolist()
    [0.0, 1000.0]
    >>> tl.nn.softplus(tl.tensor([0.0, 3.0]), beta=2.0, threshold=5.0).numpy().round(4).tolist()
    [0.3466, 3.0]
    """
    if beta == 1.0 and threshold is None:
        return apply(_softplus, (features,))
    x = as_tensor(features)
    if x.dtype.kind in "biu":  # DESIGN §6: float64, as the beta == 1 path gives (Softplus is float_valued)
        x = math_ops.cast(x, _dt.float64)
    where = f"(features shape {tuple(x.shape)}, {x.dtype})"
    beta = finite_number(beta, "beta", "Softplus", where)
    if beta == 0.0:
        raise ValueError(f"Softplus: beta must not be 0 (it divides) {where}")
    scaled = x * beta if beta != 1.0 else x
    y = apply(_softplus, (scaled,))
    y = y / beta if beta != 1.0 else y
    if threshold is None:
        return y
    return math_ops.where(scaled > finite_number(threshold, "threshold", "Softplus", where), x, y)


def finite_number(value, what: str, name: str, where: str = "") -> float:
    """``value`` as a finite float, or a ValueError naming the function ``name``, the argument and ``where``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = _math.nan
    if isinstance(value, bool) or not _math.isfinite(number):
        raise ValueError(f"{name}: {what} must be a finite number, got {value!r} {where}".rstrip())
    return number


# ------------------------------------------------------------------ Erf and Gelu
@functools.cache
def _erf_function(name: str = "erf"):
    """SciPy's ``erf`` (or ``erfc``) where SciPy is installed, else the standard library's, elementwise."""
    try:
        import scipy.special
    except ImportError:
        return functools.partial(_erf_by_math, getattr(_math, name))
    return getattr(scipy.special, name)


def _erf_by_math(fn, x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(fn, 1, 1)(x).astype(x.dtype)


def _erf_infer(x):
    _check_float("x", x)
    return x


_erf = defop("Erf", inputs=("x",), infer=_erf_infer, float_valued=True, doc="The error function.")


@_erf.kernel("numpy")
def _erf_numpy(x):
    return _erf_function()(x).astype(x.dtype, copy=False)


_erf.generic(_generic.erf)
register_gradient(
    "Erf", lambda node, g: g * (2.0 / _math.sqrt(_math.pi)) * math_ops.exp(-math_ops.square(node.inputs[0]))
)


@_op_type("Erf")
def erf(x) -> Tensor:
    """The error function ``2 / sqrt(pi) * integral from 0 to x of exp(-t**2)``.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.erf(tl.tensor(1.0))), 4)
    0.8427
    """
    return apply(_erf, (x,))


_SQRT_2_OVER_PI = _math.sqrt(2.0 / _math.pi)
_GELU_CUBIC = 0.044715


# Both forms are written so that nothing cancels for negative x: Phi(x) = erfc(-x / sqrt(2)) / 2, not
# (1 + erf(x / sqrt(2))) / 2, and (1 + tanh(u)) / 2 = sigmoid(2u).  The sums in 1 had float32 GELU 4% off at
# x = -4.8 (-3.86e-6 for -3.81e-6) and 0 or 1e-7 garbage beyond -5.3, the tanh form 12x off at x = -5.4
# (-1.6e-7 for -1.3e-8); PyTorch's and JAX's float32 kernels cancel the same way.
# float16 computes in float32 and rounds once, as PyTorch does (0.75% off at x = -3.7 computed in float16).
def _gelu_numpy(x, *, approximate):
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    if approximate:  # x / (1 + exp(-2u)); x * x * x, not x**3 (25x slower in float32)
        u = np.multiply(work, work, out=np.empty_like(work))  # an array for 0-d x too (x * x is a scalar)
        u *= -2.0 * _SQRT_2_OVER_PI * _GELU_CUBIC
        u -= 2.0 * _SQRT_2_OVER_PI
        u *= work
        with np.errstate(over="ignore"):  # exp(-2u) = inf for very negative x: x / inf = -0, exact
            np.exp(u, out=u)
        u += 1.0
        out = np.divide(work, u, out=u)
    else:
        out = 0.5 * work * _erf_function("erfc")(work * (-1.0 / _math.sqrt(2.0)))
    return out.astype(x.dtype, copy=False)


_gelu = defop(
    "Gelu",
    inputs=("features",),
    attrs={"approximate": False},
    infer=_float_features,
    float_valued=True,
    doc="x * Phi(x) with Phi the normal CDF (erf form), or its tanh approximation.",
)
_gelu.kernel("numpy")(_gelu_numpy)


@_gelu.generic
def _gelu_generic(xp, x, *, approximate):
    return _generic.gelu(xp, x, approximate)


# Beyond |x| = 30 the tanh form's sigmoid(2u) is exactly 0 or 1 in every float dtype (2u < -1900), so its
# derivative is exactly 0 or 1; clipping x there keeps x * x (inf in float16 from |x| = 256) from meeting
# s * (1 - s) = 0 as 0 * inf = NaN.
_GELU_TANH_SATURATED = 30.0


def _gelu_grad(node, g):
    x = node.inputs[0]
    if node.attrs["approximate"]:
        # d/dx x * s(2u) = s + 2 x s (1 - s) u', with 1 - s = s(-2u): no difference of nearly equal numbers.
        x = math_ops.clip(x, -_GELU_TANH_SATURATED, _GELU_TANH_SATURATED)
        u2 = (2.0 * _SQRT_2_OVER_PI) * (x + _GELU_CUBIC * x * x * x)
        s = math_ops.sigmoid(u2)
        slope = (2.0 * _SQRT_2_OVER_PI) * (1.0 + 3.0 * _GELU_CUBIC * x * x)
        return g * (s + x * s * math_ops.sigmoid(-u2) * slope)
    # Phi(x) = gelu(x) / x below x = -1, where (1 + erf) cancels (float32 gelu' was 3% off at x = -5.5).
    left = x < -1.0
    cdf = math_ops.where(
        left, node.outputs[0] / math_ops.where(left, x, -1.0), 0.5 * (1.0 + _erf(x * (1.0 / _math.sqrt(2.0))))
    )
    pdf = math_ops.exp(-0.5 * x * x) * (1.0 / _math.sqrt(2.0 * _math.pi))
    return g * (cdf + x * pdf)


register_gradient("Gelu", _float16_in_float32_rule(_gelu_grad))


@_op_type("Gelu")
def gelu(features, approximate: bool = False) -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate=True`` (or ``"tanh"``) uses the tanh form.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.gelu(tl.tensor(1.0))), 4), round(float(tl.nn.gelu(tl.tensor(1.0), approximate=True)), 4)
    (0.8413, 0.8412)
    """
    return apply(_gelu, (features,), {"approximate": _gelu_approximate(approximate)})


def _gelu_approximate(approximate) -> bool:
    """TensorFlow's bool, or PyTorch's spelling ``"none"`` / ``"tanh"`` (any other string would be truthy)."""
    if isinstance(approximate, str):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"Gelu: approximate must be a bool, 'none' or 'tanh', got {approximate!r}")
        return approximate == "tanh"
    return bool(approximate)


# ------------------------------------------------------------------ Softmax and LogSoftmax
def _axis_unary(x, *, axis):
    _check_float("logits", x)
    normalize_axis(axis, len(x.shape))
    return x


def _softmax_kernel(xp, x, *, axis):
    if not x.shape[axis]:  # no classes: an empty result, as TensorFlow and PyTorch give (max has no identity)
        return xp.zeros_like(x)
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    e /= xp.sum(e, axis=axis, keepdims=True)
    return e


def _log_softmax_kernel(xp, x, *, axis):
    if not x.shape[axis]:
        return xp.zeros_like(x)
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    shifted -= xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
    return shifted


_softmax = defop(
    "Softmax",
    inputs=("logits",),
    attrs={"axis": -1},
    infer=_axis_unary,
    float_valued=True,
    doc="exp(x) / sum(exp(x)) along axis, with the max subtracted first.",
)
# float16 in float32: softmax was 5 float16 ulps off over 1000 classes, its gradient 27 over 10 (PyTorch: 0.5, 7).
_softmax.generic(_float16_in_float32_kernel(_softmax_kernel))
register_gradient(
    "Softmax",
    _float16_in_float32_rule(
        lambda node, g: node.outputs[0] * (g - reduce_ops.sum(g * node.outputs[0], node.attrs["axis"], keepdims=True))
    ),
)


@_op_type("Softmax")
def softmax(logits, axis: int = -1) -> Tensor:
    """exp(logits) normalised to sum to one along ``axis``.

    >>> import tensorlib as tl
    >>> tl.nn.softmax(tl.tensor([0.0, 0.0])).numpy().tolist()
    [0.5, 0.5]
    """
    return apply(_softmax, (logits,), {"axis": int(axis)})


_log_softmax = defop(
    "LogSoftmax",
    inputs=("logits",),
    attrs={"axis": -1},
    infer=_axis_unary,
    float_valued=True,
    doc="x - logsumexp(x) along axis, stable for large logits.",
)
_log_softmax.generic(_float16_in_float32_kernel(_log_softmax_kernel))
register_gradient(
    "LogSoftmax",
    _float16_in_float32_rule(
        lambda node, g: g - math_ops.exp(node.outputs[0]) * reduce_ops.sum(g, node.attrs["axis"], keepdims=True)
    ),
)


@_op_type("LogSoftmax")
def log_softmax(logits, axis: int = -1) -> Tensor:
    """logits - logsumexp(logits) along ``axis``, finite for logits of any size.

    >>> import tensorlib as tl
    >>> tl.nn.log_softmax(tl.tensor([1e4, 0.0])).numpy().tolist()
    [0.0, -10000.0]
    """
    return apply(_log_softmax, (logits,), {"axis": int(axis)})

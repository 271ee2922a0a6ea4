"""The activations TensorFlow, JAX and PyTorch users reach for beyond relu/elu/gelu: Silu (swish), Relu6,
Selu, Celu, HardSigmoid, HardSwish, HardTanh, LogSigmoid, Softsign, Mish, and ``glu`` built from ops.

Each elementwise one is an op of its own (one kernel, values as PyTorch's and JAX's formulas), its gradient
rule written with tensorlib ops so that second order comes free.  The piecewise ones take PyTorch's
one-sided derivatives at their kinks (``relu6'(0) = relu6'(6) = 0``, ``hard_swish'(-3) = 0``,
``hard_swish'(3) = 1``).  ``jax.nn``'s further functions (``identity``, ``log1mexp``, ``sparse_plus``,
``sparse_sigmoid``, ``squareplus``, ``logmeanexp``, ``standardize``, ``one_hot``) are built from ops."""

from __future__ import annotations

import math as _math

import numpy as _np

from ... import dtypes as _dt
from ...dispatch import apply, as_tensor
from ...grad.registry import register_gradient
from ...tensor import Tensor
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from .._shapes import normalize_axis
from ..registry import defop
from ._common import _float_or_float64, _op_type
from .activations import _float16_in_float32_kernel, _float16_in_float32_rule, _float_features, softplus

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _activation(name, kernel, gradient, doc, attrs=None, infer=_float_features):
    """An elementwise op of float ``features`` with a generic kernel and one gradient rule, both computing
    float16 in float32.  With the default shape rule the op is float-valued: integer and bool features are
    cast to float64 first (DESIGN §6, NumPy's rule; ``jax.nn`` gives its default float)."""
    op = defop(name, inputs=("features",), attrs=attrs, infer=infer, float_valued=infer is _float_features, doc=doc)
    op.generic(_float16_in_float32_kernel(kernel))
    register_gradient(name, _float16_in_float32_rule(gradient))
    return op


def _sigmoid(xp, x):
    e = xp.exp(-xp.abs(x))  # split by sign: exp never overflows
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _inside(x, lo, hi, g):
    """g where lo < x < hi, else 0: the one-sided derivative of a clip at its bounds (PyTorch, TensorFlow)."""
    return math_ops.where(math_ops.logical_and(x > lo, x < hi), g, 0.0)


# ------------------------------------------------------------------ Silu (swish)
_silu = _activation(
    "Silu",
    lambda xp, x: x * _sigmoid(xp, x),
    # d/dx x s(x) = s(x) (1 + x s(-x)): s(-x), not 1 - s(x), which is 0 for x > 17 in float32.
    lambda node, g: g * math_ops.sigmoid(node.inputs[0]) * (1.0 + node.inputs[0] * math_ops.sigmoid(-node.inputs[0])),
    "x * sigmoid(x).",
)


@_op_type("Silu")
def silu(features) -> Tensor:
    """``features * sigmoid(features)`` (also named ``swish``), exact in both tails.

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.nn.silu(tl.tensor([-1.0, 0.0, 2.0])).numpy().tolist()]
    [-0.2689, 0.0, 1.7616]
    """
    return apply(_silu, (features,))


swish = silu

# ------------------------------------------------------------------ Relu6, HardTanh, HardSigmoid, HardSwish
_relu6 = _activation(
    "Relu6",
    lambda xp, x: xp.clip(x, 0, 6),
    lambda node, g: _inside(node.inputs[0], 0.0, 6.0, g),
    "min(max(x, 0), 6).",
)


@_op_type("Relu6")
def relu6(features) -> Tensor:
    """``min(max(features, 0), 6)``; its gradient is 0 at 0 and 6, as in TensorFlow and PyTorch.

    >>> import tensorlib as tl
    >>> tl.nn.relu6(tl.tensor([-1.0, 3.0, 7.0])).numpy().tolist()
    [0.0, 3.0, 6.0]
    """
    return apply(_relu6, (features,))


def _int_bounds_fit(dtype, min_val: float, max_val: float) -> bool:
    """Whether clipping integers of ``dtype`` to ``[min_val, max_val]`` gives integers of ``dtype``: integral
    bounds, and every result (clipped to the bounds) representable."""
    info = _np.iinfo(dtype)
    return min_val.is_integer() and max_val.is_integer() and min_val <= info.max and max_val >= info.min


def _hard_tanh_infer(features, *, min_val, max_val):
    """Integer-valued (``jax.nn.hard_tanh`` keeps an integer dtype): floats and integers keep their dtype where the
    bounds fit it (the public function casts other integers to float64, never truncating the bounds)."""
    kind = features.dtype.kind
    if kind == "b":  # as Relu: TF and PyTorch refuse bools
        raise TypeError("features must be a number, got bool")
    if kind in "iu" and not _int_bounds_fit(features.dtype, min_val, max_val):
        raise TypeError(f"integer features ({features.dtype}) need integral bounds within its range")
    if kind not in "fiu":
        raise TypeError(f"features must be real, got {features.dtype}")
    return features


def _hard_tanh_kernel(xp, x, *, min_val, max_val):
    if xp.isdtype(x.dtype, "integral"):  # Python int bounds keep the dtype (float ones would promote to float64)
        info = xp.iinfo(x.dtype)
        return xp.clip(x, max(int(min_val), info.min), min(int(max_val), info.max))
    return xp.clip(x, min_val, max_val)


_hard_tanh = _activation(
    "HardTanh",
    _hard_tanh_kernel,
    lambda node, g: _inside(node.inputs[0], node.attrs["min_val"], node.attrs["max_val"], g),
    "min(max(x, min_val), max_val).",
    attrs={"min_val": -1.0, "max_val": 1.0},
    infer=_hard_tanh_infer,
)


@_op_type("HardTanh")
def hard_tanh(features, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``features`` clipped to ``[min_val, max_val]`` (PyTorch's ``hardtanh``); gradient 0 at the bounds.

    Integer features keep their dtype (as ``jax.nn.hard_tanh``) where both bounds are integers that fit it, and
    give float64 otherwise (``hard_tanh(int_x, -0.5, 0.5)`` is never truncated to 0); bools are refused, as by
    :func:`relu`.

    >>> import tensorlib as tl
    >>> tl.nn.hard_tanh(tl.tensor([-2.0, 0.5, 2.0])).numpy().tolist()
    [-1.0, 0.5, 1.0]
    """
    min_val, max_val = float(min_val), float(max_val)
    if not min_val <= max_val:
        raise ValueError(f"HardTanh: min_val must not exceed max_val, got min_val={min_val}, max_val={max_val}")
    x = as_tensor(features)
    if x.dtype.kind in "iu" and not _int_bounds_fit(x.dtype, min_val, max_val):
        x = math_ops.cast(x, _dt.float64)
    return apply(_hard_tanh, (x,), {"min_val": min_val, "max_val": max_val})


_hard_sigmoid = _activation(
    "HardSigmoid",
    lambda xp, x: xp.clip(x + 3.0, 0, 6) / 6.0,
    lambda node, g: _inside(node.inputs[0], -3.0, 3.0, g) / 6.0,
    "relu6(x + 3) / 6.",
)


@_op_type("HardSigmoid")
def hard_sigmoid(features) -> Tensor:
    """``relu6(features + 3) / 6``, as ``jax.nn.hard_sigmoid``, PyTorch's ``hardsigmoid`` and Keras 3
    (Keras 2's ``0.2 * x + 0.5`` is another function).

    >>> import tensorlib as tl
    >>> tl.nn.hard_sigmoid(tl.tensor([-4.0, 0.0, 1.5, 4.0])).numpy().tolist()
    [0.0, 0.5, 0.75, 1.0]
    """
    return apply(_hard_sigmoid, (features,))


def _hard_swish_grad(node, g):
    x = node.inputs[0]
    return math_ops.where(x <= -3.0, 0.0, math_ops.where(x < 3.0, g * (x / 3.0 + 0.5), g))


_hard_swish = _activation(
    "HardSwish", lambda xp, x: x * (xp.clip(x + 3.0, 0, 6) / 6.0), _hard_swish_grad, "x * relu6(x + 3) / 6."
)


@_op_type("HardSwish")
def hard_swish(features) -> Tensor:
    """``features * relu6(features + 3) / 6`` (MobileNetV3); gradient ``x / 3 + 0.5`` inside ``(-3, 3)``.

    >>> import tensorlib as tl
    >>> tl.nn.hard_swish(tl.tensor([-4.0, 1.5, 4.0])).numpy().tolist()
    [-0.0, 1.125, 4.0]
    """
    return apply(_hard_swish, (features,))


# ------------------------------------------------------------------ Selu, Celu
def _selu_kernel(xp, x):
    return _SELU_SCALE * xp.where(x > 0, x, _SELU_ALPHA * xp.expm1(xp.minimum(x, 0)))


def _selu_grad(node, g):
    x = node.inputs[0]
    return math_ops.where(
        x > 0, g * _SELU_SCALE, g * (_SELU_SCALE * _SELU_ALPHA) * math_ops.exp(math_ops.minimum(x, 0.0))
    )


_selu = _activation("Selu", _selu_kernel, _selu_grad, "scale * (x where x > 0, else alpha * (exp(x) - 1)).")


@_op_type("Selu")
def selu(features) -> Tensor:
    """Scaled ELU: ``scale * features`` where positive, else ``scale * alpha * (exp(features) - 1)``,
    with the self-normalizing constants ``alpha = 1.6732632...`` and ``scale = 1.0507009...``.

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.nn.selu(tl.tensor([-1.0, 1.0])).numpy().tolist()]
    [-1.1113, 1.0507]
    """
    return apply(_selu, (features,))


def _celu_kernel(xp, x, *, alpha):
    return xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0) / alpha))


def _celu_grad(node, g):
    x, alpha = node.inputs[0], node.attrs["alpha"]
    return math_ops.where(x > 0, g, g * math_ops.exp(math_ops.minimum(x, 0.0) / alpha))


_celu = _activation(
    "Celu", _celu_kernel, _celu_grad, "x where x > 0, else alpha * (exp(x / alpha) - 1).", attrs={"alpha": 1.0}
)


@_op_type("Celu")
def celu(features, alpha: float = 1.0) -> Tensor:
    """Continuously differentiable ELU: ``features`` where positive, else ``alpha * (exp(features / alpha) - 1)``.

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.nn.celu(tl.tensor([-1.0, 2.0]), alpha=2.0).numpy().tolist()]
    [-0.7869, 2.0]
    """
    alpha = float(alpha)
    if alpha == 0.0:
        raise ValueError("Celu: alpha must not be 0 (it divides the input)")
    return apply(_celu, (features,), {"alpha": alpha})


# ------------------------------------------------------------------ LogSigmoid, Softsign, Mish
_log_sigmoid = _activation(
    "LogSigmoid",
    lambda xp, x: xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))),
    lambda node, g: g * math_ops.sigmoid(-node.inputs[0]),
    "log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), finite for every finite x.",
)


@_op_type("LogSigmoid")
def log_sigmoid(features) -> Tensor:
    """``log(sigmoid(features))``, computed as ``min(x, 0) - log1p(exp(-|x|))``: exact where
    ``sigmoid`` underflows (``log_sigmoid(-200.0)`` is ``-200``, not ``-inf``).

    >>> import tensorlib as tl
    >>> tl.nn.log_sigmoid(tl.tensor([-200.0, 0.0])).numpy().round(4).tolist()
    [-200.0, -0.6931]
    """
    return apply(_log_sigmoid, (features,))


def _softsign_grad(node, g):
    denominator = 1.0 + math_ops.abs(node.inputs[0])
    return g / (denominator * denominator)


_softsign = _activation("Softsign", lambda xp, x: x / (1.0 + xp.abs(x)), _softsign_grad, "x / (1 + |x|).")


@_op_type("Softsign")
def softsign(features) -> Tensor:
    """``features / (1 + |features|)``.

    >>> import tensorlib as tl
    >>> tl.nn.softsign(tl.tensor([-3.0, 1.0])).numpy().tolist()
    [-0.75, 0.5]
    """
    return apply(_softsign, (features,))


def _mish_grad(node, g):
    x = node.inputs[0]
    t = math_ops.tanh(softplus(x))
    return g * (t + x * (1.0 - t * t) * math_ops.sigmoid(x))


_mish = _activation("Mish", lambda xp, x: x * xp.tanh(xp.logaddexp(x, 0)), _mish_grad, "x * tanh(softplus(x)).")


@_op_type("Mish")
def mish(features) -> Tensor:
    """``features * tanh(softplus(features))``.

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.nn.mish(tl.tensor([-1.0, 1.0])).numpy().tolist()]
    [-0.3034, 0.8651]
    """
    return apply(_mish, (features,))


# ------------------------------------------------------------------ glu, built from ops
@_op_type(None, tensors=("x",))
def glu(x, axis: int = -1) -> Tensor:
    """Gated linear unit: ``x`` split in two halves ``a, b`` along ``axis``, ``a * sigmoid(b)``
    (``jax.nn.glu``, PyTorch's ``glu``).  Built from ops (split, sigmoid, multiply).

    >>> import tensorlib as tl
    >>> tl.nn.glu(tl.tensor([[2.0, 4.0, 0.0, 100.0]])).numpy().tolist()
    [[1.0, 4.0]]
    """
    x = _float_or_float64(x, "glu")
    where = f"(x shape {tuple(x.shape)}, {x.dtype})"
    if not x.ndim:
        raise ValueError(f"glu: x must have at least one dimension {where}")
    try:
        ax = normalize_axis(axis, x.ndim)
    except (TypeError, ValueError) as e:
        raise type(e)(f"glu: {e} {where}") from None
    if x.shape[ax] is not None and x.shape[ax] % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even (two halves a, b) {where}")
    a, b = shape_ops.split(x, 2, ax)
    return a * math_ops.sigmoid(b)


# ------------------------------------------------------------------ JAX's jax.nn functions, built from ops
hard_silu = hard_swish  # jax.nn's name for the same function
soft_sign = softsign  # jax.nn's spelling


@_op_type(None, tensors=("x",))
def identity(x) -> Tensor:
    """The identity activation (``jax.nn.identity``, Keras' ``"linear"``): ``x`` itself.

    >>> import tensorlib as tl
    >>> tl.nn.identity(tl.tensor([-1.0, 2.0])).numpy().tolist()
    [-1.0, 2.0]
    """
    return math_ops.unaliased(as_tensor(x))


@_op_type(None, tensors=("x",))
def log1mexp(x) -> Tensor:
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate at both ends (``jax.nn.log1mexp``, TFP's ``log1mexp``):
    ``log(-expm1(-x))`` below ``log 2`` and ``log1p(-exp(-x))`` above (Maechler's split).  Gradient
    ``1 / expm1(x)``.  NaN for ``x < 0``, ``-inf`` at 0.

    >>> import tensorlib as tl
    >>> [round(v, 6) for v in tl.nn.log1mexp(tl.tensor([1e-10, 1.0, 40.0], "float64")).numpy().tolist()]
    [-23.02585, -0.458675, -0.0]
    """
    x = _float_or_float64(x, "log1mexp")
    small = math_ops.less(x, _math.log(2.0))
    # Each branch sees only the arguments it is taken for, so the other's infinities never reach a gradient.
    below = math_ops.where(small, x, 1.0)
    above = math_ops.where(small, 1.0, x)
    return math_ops.where(small, math_ops.log(-math_ops.expm1(-below)), math_ops.log1p(-math_ops.exp(-above)))


@_op_type(None, tensors=("x",))
def sparse_plus(x) -> Tensor:
    """0 for ``x <= -1``, ``(x + 1)**2 / 4`` inside, ``x`` for ``x >= 1`` (``jax.nn.sparse_plus``).

    >>> import tensorlib as tl
    >>> tl.nn.sparse_plus(tl.tensor([-2.0, 0.0, 3.0])).numpy().tolist()
    [0.0, 0.25, 3.0]
    """
    x = _float_or_float64(x, "sparse_plus")
    return math_ops.where(x <= -1.0, 0.0, math_ops.where(x >= 1.0, x, math_ops.square(x + 1.0) / 4.0))


@_op_type(None, tensors=("x",))
def sparse_sigmoid(x) -> Tensor:
    """``clip((x + 1) / 2, 0, 1)``, the derivative of :func:`sparse_plus` (``jax.nn.sparse_sigmoid``).

    >>> import tensorlib as tl
    >>> tl.nn.sparse_sigmoid(tl.tensor([-2.0, 0.0, 3.0])).numpy().tolist()
    [0.0, 0.5, 1.0]
    """
    x = _float_or_float64(x, "sparse_sigmoid")
    return 0.5 * math_ops.clip(x + 1.0, 0.0, 2.0)


@_op_type(None, tensors=("x", "b"))
def squareplus(x, b=4.0) -> Tensor:
    """``(x + sqrt(x**2 + b)) / 2`` (``jax.nn.squareplus``, arXiv:2112.11687); for negative ``x`` the equal
    ``b / (2 (sqrt(x**2 + b) - x))``, which does not cancel (the sum form gives 0 at x = -1e4 in float32
    where the value is 2e-4).  ``sqrt(x**2 + b)`` is ``|x| sqrt(1 + b / x / x)`` for ``|x| > 1``: ``x**2`` overflows
    from 1.3e154 (1.8e19 in float32), where squareplus gave inf for x and 0 for b / (4 |x|).

    >>> import tensorlib as tl
    >>> [round(v, 4) for v in tl.nn.squareplus(tl.tensor([0.0, 1.5, -1e4])).numpy().tolist()]
    [1.0, 2.0, 0.0002]
    """
    x = _float_or_float64(x, "squareplus")
    size = math_ops.abs(x)
    large = math_ops.greater(size, 1.0)
    big, small = math_ops.where(large, size, 1.0), math_ops.where(large, 1.0, x)  # no inf or 0 * inf in a gradient
    root = math_ops.where(large, big * math_ops.sqrt(1.0 + b / big / big), math_ops.sqrt(math_ops.square(small) + b))
    negative = math_ops.less(x, 0.0)
    spread = math_ops.where(negative, root - x, 1.0)  # >= sqrt(b) where it is used; 1 elsewhere (no 0/0)
    return math_ops.where(negative, b / (2.0 * spread), (x + root) / 2.0)


@_op_type(None, tensors=("x", "where"))
def logmeanexp(x, axis=None, where=None, keepdims: bool = False) -> Tensor:
    """``log(mean(exp(x)))`` over ``axis``, stable (``jax.nn.logmeanexp``): ``logsumexp(x) - log(n)``, where
    ``where`` (a bool tensor broadcasting to ``x``) keeps only some elements, ``n`` counting them.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.logmeanexp(tl.tensor([0.0, 1000.0], "float64"))), 4)   # 1000 - log 2
    999.3069
    """
    x = _float_or_float64(x, "logmeanexp")
    if x.dtype.itemsize < 4:
        # float16: logsumexp's sum accumulates in float32, but rounding it to float16 before subtracting log(n)
        # cancelled (13 ulps off for 200 elements); the whole difference is taken in float32 and rounded once.
        out = logmeanexp(math_ops.cast(x, _dt.float32), axis=axis, where=where, keepdims=keepdims)
        return math_ops.cast(out, x.dtype)
    if where is None:
        total = reduce_ops.logsumexp(x, axis=axis, keepdims=keepdims)
        count = reduce_ops.sum(math_ops.ones_like(x), axis=axis, keepdims=keepdims)
    else:
        keep = math_ops.cast(shape_ops.broadcast_to(where, x.shape), x.dtype)
        total = reduce_ops.logsumexp(x, axis=axis, keepdims=keepdims, b=keep)
        count = reduce_ops.sum(keep, axis=axis, keepdims=keepdims)
    return total - math_ops.log(count)


@_op_type(None, tensors=("x", "mean", "variance"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None) -> Tensor:
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (``jax.nn.standardize``), the mean and the
    variance over ``axis`` (of the elements ``where`` keeps) when not given.  The variance is the two-pass
    ``mean((x - mean)**2)`` (JAX's ``algorithm="stable"``; its default ``"fast"`` ``E[x**2] - E[x]**2`` loses
    every digit for data far from 0 in float32).

    >>> import tensorlib as tl
    >>> tl.nn.standardize(tl.tensor([1.0, 3.0]), epsilon=0.0).numpy().tolist()
    [-1.0, 1.0]
    """
    x = _float_or_float64(x, "standardize")
    keep = True if where is None else where
    if mean is None:
        mean = reduce_ops.mean(x, axis=axis, keepdims=True, where=keep)
    if variance is None:
        variance = reduce_ops.mean(math_ops.square(x - mean), axis=axis, keepdims=True, where=keep)
    return (x - mean) / math_ops.sqrt(variance + epsilon)


@_op_type("OneHot", tensors=("x",))
def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1) -> Tensor:
    """``jax.nn.one_hot``: 1 where an index of ``x`` equals the position along a new ``axis`` of length
    ``num_classes``, 0 elsewhere (an index outside ``[0, num_classes)`` gives a row of zeros), in ``dtype``
    (the default float).  :func:`tl.one_hot <tensorlib.one_hot>` is TensorFlow's, with ``on_value``/``off_value``.

    >>> import tensorlib as tl
    >>> tl.nn.one_hot(tl.tensor([0, 2, 5]), 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    return shape_ops.one_hot(x, num_classes, axis=axis, dtype=_dt.default_float if dtype is None else dtype)


@_op_type(None, tensors=("a", "b", "where"))
def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
    """``jax.nn.logsumexp`` / SciPy's argument order (``b`` before ``keepdims``) for
    :func:`tl.logsumexp <tensorlib.logsumexp>`, with ``where`` (a bool tensor broadcasting to ``a``) keeping only
    some terms: ``log(sum(b * exp(a)))``, stable.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.logsumexp(tl.tensor([0.0, 5.0, 0.0]), where=tl.tensor([True, False, True]))), 4)
    0.6931
    """
    a = as_tensor(a)
    if where is not None:
        keep = math_ops.cast(shape_ops.broadcast_to(where, a.shape), a.dtype if a.dtype.kind in "fc" else _dt.float64)
        b = keep if b is None else b * keep
    return reduce_ops.logsumexp(a, axis=axis, keepdims=keepdims, b=b, return_sign=return_sign)

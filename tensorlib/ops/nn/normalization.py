"""Normalizations built from ops: ``layer_norm``, ``rms_norm``, ``group_norm``, ``l2_normalize`` (TensorFlow's)
and ``normalize`` (PyTorch's ``F.normalize``).

Each is a few reductions and elementwise ops, so gradients (to any order), tracing and every backend come
from those ops.  float16 inputs are computed in float32 and rounded once: their squares overflow float16
from 256 on."""

from __future__ import annotations

import math as _math

import numpy as np

from ... import dtypes as _dt
from ...dispatch import as_tensors
from ...tensor import Tensor
from .. import linalg as linalg_ops
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from .._shapes import normalize_axes
from ._common import _float_or_float64, _op_type


def _axes(axis, x, name: str) -> tuple:
    try:
        return normalize_axes(axis, x.ndim)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e} (x shape {tuple(x.shape)}, {x.dtype})") from None


def _epsilon(epsilon, name: str, x) -> float:
    """``epsilon`` as a float >= 0: a negative (or NaN) one made ``sqrt(var + epsilon)`` NaN for a small
    variance, silently (PyTorch's and TensorFlow's functions do not check)."""
    value = float(epsilon)
    if not value >= 0:
        raise ValueError(
            f"{name}: epsilon must be >= 0, got {value} (x shape {tuple(np.shape(x))}, {getattr(x, 'dtype', None)})"
        )
    return value


def _widened(x):
    """x in float32 if it is float16 (the computation's dtype), else x."""
    return math_ops.cast(x, _dt.float32) if x.dtype == _dt.float16 else x


def _narrowed(y, x):
    return math_ops.cast(y, x.dtype) if y.dtype != x.dtype else y


# ------------------------------------------------------------------ layer_norm and group_norm
def _affine(y, x, scale, offset, axes, name: str):
    """``y * scale + offset`` with scale and offset shaped as x's ``axes`` (in order), broadcast along the rest.

    ``y`` is the standardized ``x`` in the computation's dtype (float32 for float16): a float16 result is rounded
    once, after the affine.  Rounding y to float16 and then its product and sum put the result 1267 float16 ulps
    off where ``y * scale`` and ``offset`` nearly cancelled (PyTorch: 0.8)."""
    normalized = tuple(x.shape[a] for a in axes)
    trailing = axes == tuple(range(x.ndim - len(axes), x.ndim))
    half = x.dtype == _dt.float16  # a float16 result unless a wider scale or offset promotes it, as before
    for what, value in (("scale", scale), ("offset", offset)):
        if value is None:
            continue
        value = as_tensors(x, value)[1]  # a list next to float64 x is float64
        half = half and value.dtype == _dt.float16
        value = _widened(value)
        if len(value.shape) != len(normalized) or any(
            a is not None and b is not None and a != b for a, b in zip(value.shape, normalized)
        ):
            raise ValueError(
                f"{name}: {what} shape {tuple(value.shape)} does not match the normalized dimensions {normalized} "
                f"(x shape {tuple(x.shape)} {x.dtype}, axes {axes})"
            )
        if not trailing:  # size-1 axes between (new axes: a reshape needed the sizes, unknown when traced)
            value = shape_ops.expand_dims(value, tuple(a for a in range(x.ndim) if a not in axes))
        y = y * value if what == "scale" else y + value
    return math_ops.cast(y, _dt.float16) if half else y


def _standardized(x, axes, epsilon):
    """(x - mean) / sqrt(var + epsilon) over ``axes``, the (biased) variance by two passes, in the computation's
    dtype (float32 for float16: :func:`_affine` rounds)."""
    wide = _widened(x)
    mean = reduce_ops.mean(wide, axes, keepdims=True)
    centered = wide - mean
    variance = reduce_ops.mean(math_ops.square(centered), axes, keepdims=True)
    return centered / math_ops.sqrt(variance + epsilon)


@_op_type(None, tensors=("x", "scale", "offset"))
def layer_norm(x, scale=None, offset=None, axis=-1, epsilon: float = 1e-5) -> Tensor:
    """Normalize each example over ``axis`` (an int or a sequence; the last by default) to zero mean and unit
    (biased) variance, then ``* scale + offset`` (shaped as the normalized dimensions; each may be None).

    PyTorch's ``F.layer_norm(x, x.shape[-k:], scale, offset, eps)`` for the last ``k`` axes, and Keras'
    ``LayerNormalization(axis, epsilon)``.

    >>> import tensorlib as tl
    >>> tl.nn.layer_norm(tl.tensor([[1.0, 3.0], [2.0, 2.0]])).numpy().round(4).tolist()
    [[-1.0, 1.0], [0.0, 0.0]]
    """
    x = _float_or_float64(x, "layer_norm")
    axes = _axes(axis, x, "layer_norm")
    y = _standardized(x, axes, _epsilon(epsilon, "layer_norm", x))
    return _affine(y, x, scale, offset, axes, "layer_norm")


@_op_type(None, tensors=("x", "scale"))
def rms_norm(x, scale=None, axis=-1, epsilon: float = 1e-6) -> Tensor:
    """Root-mean-square normalization (Zhang & Sennrich 2019): ``x / sqrt(mean(x^2) + epsilon)`` over ``axis``
    (an int or a sequence; the last by default), then ``* scale`` (shaped as the normalized dimensions, or
    None).  No centering and no offset, as in PyTorch's ``F.rms_norm(x, x.shape[-k:], scale, eps)`` and
    Keras' ``RMSNormalization(axis, epsilon)`` (whose default epsilon, 1e-6, this takes; PyTorch's is the
    dtype's machine epsilon).

    >>> import tensorlib as tl
    >>> tl.nn.rms_norm(tl.tensor([[3.0, 4.0], [1.0, -1.0]]), epsilon=0.0).numpy().round(4).tolist()
    [[0.8485, 1.1314], [1.0, -1.0]]
    """
    x = _float_or_float64(x, "rms_norm")
    axes = _axes(axis, x, "rms_norm")
    epsilon = _epsilon(epsilon, "rms_norm", x)
    wide = _widened(x)
    mean_square = reduce_ops.mean(math_ops.square(wide), axes, keepdims=True)
    return _affine(wide / math_ops.sqrt(mean_square + epsilon), x, scale, None, axes, "rms_norm")


@_op_type(None, tensors=("x", "scale", "offset"))
def group_norm(x, groups: int, scale=None, offset=None, epsilon: float = 1e-5) -> Tensor:
    """Group normalization of channels-last ``x`` (``(batch, ..., channels)``): the channels are split into
    ``groups`` groups, each normalized over its channels and every axis but the batch; then
    ``* scale + offset`` per channel.  PyTorch's ``F.group_norm`` on the NCHW transpose, Keras'
    ``GroupNormalization(groups, axis=-1)``.

    >>> import numpy as np, tensorlib as tl
    >>> y = tl.nn.group_norm(np.arange(8.0).reshape(1, 2, 4), groups=2, epsilon=0.0)
    >>> y.shape, round(float(y[0, :, :2].numpy().mean()), 6), round(float(y[0, :, :2].numpy().std()), 6)
    ((1, 2, 4), 0.0, 1.0)
    """
    x = _float_or_float64(x, "group_norm")
    where = f"(x shape {tuple(x.shape)}, {x.dtype})"
    if x.ndim < 2:
        raise ValueError(f"group_norm: x must be (batch, ..., channels) with at least 2 dimensions {where}")
    if isinstance(groups, (bool, np.bool_)) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"group_norm: groups must be a positive int, got {groups!r} {where}")
    groups = int(groups)
    channels = x.shape[-1]
    if channels is None or channels % groups:
        raise ValueError(f"group_norm: the channels ({channels}) must be a known multiple of groups={groups} {where}")
    epsilon = _epsilon(epsilon, "group_norm", x)
    wide = _widened(x)
    # Each channel's mean over the spatial axes, averaged over its group and handed back to the group's channels
    # by two small matmuls: no reshape splits the channels, so the spatial sizes may be unknown when traced (the
    # reshape to (batch, ..., groups, channels / groups) needed them), and (8, 32, 32, 64) in 8 groups runs 2.7x
    # faster than the strided reduction over the split axes.  Two passes, as _standardized.
    size = channels // groups
    member = np.repeat(np.eye(groups, dtype=wide.dtype), size, axis=0)  # (channels, groups): 1 where it belongs
    to_groups, to_channels = member / max(size, 1), member.T
    spatial = tuple(range(1, x.ndim - 1))

    def group_mean(t):
        channel_means = reduce_ops.mean(t, spatial, keepdims=True)
        return linalg_ops.matmul(linalg_ops.matmul(channel_means, to_groups), to_channels)

    centered = wide - group_mean(wide)
    y = centered / math_ops.sqrt(group_mean(math_ops.square(centered)) + epsilon)
    return _affine(y, x, scale, offset, (x.ndim - 1,), "group_norm")


# ------------------------------------------------------------------ l2_normalize and normalize
@_op_type(None, tensors=("x",))
def l2_normalize(x, axis=None, epsilon: float = 1e-12) -> Tensor:
    """``x / sqrt(max(sum(x**2, axis), epsilon))``: TensorFlow's ``tf.math.l2_normalize`` (``axis`` None: all).

    A zero vector stays zero, with gradient ``1 / sqrt(epsilon)``.

    >>> import tensorlib as tl
    >>> tl.nn.l2_normalize(tl.tensor([[3.0, 4.0], [0.0, 0.0]]), axis=1).numpy().tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    x = _float_or_float64(x, "l2_normalize")
    axes = _axes(axis, x, "l2_normalize")
    wide = _widened(x)
    square_sum = reduce_ops.sum(math_ops.square(wide), axes, keepdims=True)
    return _narrowed(wide / math_ops.sqrt(math_ops.maximum(square_sum, float(epsilon))), x)


@_op_type(None, tensors=("x",))
def normalize(x, p: float = 2.0, axis: int = 1, epsilon: float = 1e-12) -> Tensor:
    """``x / max(norm_p(x, axis), epsilon)``: PyTorch's ``F.normalize(x, p, dim=axis, eps=epsilon)``
    (``p`` > 0, ``inf`` for the largest magnitude).

    A zero vector stays zero, with gradient ``1 / epsilon`` (the norm's own gradient there is taken as 0, and
    so is a zero element's share of it for ``p < 1``, where ``|x|**p`` has an infinite slope: PyTorch's rule).

    >>> import tensorlib as tl
    >>> tl.nn.normalize(tl.tensor([[3.0, -4.0]]), p=1.0).numpy().round(4).tolist()
    [[0.4286, -0.5714]]
    """
    x = _float_or_float64(x, "normalize")
    if isinstance(axis, (list, tuple)):  # one axis: int() took 1.7 as 1, and normalize_axes takes sequences
        raise TypeError(f"normalize: axis must be an int, got {axis!r} (x shape {tuple(x.shape)}, {x.dtype})")
    (ax,) = _axes(axis, x, "normalize")
    p = float(p)
    if not p > 0:
        raise ValueError(f"normalize: p must be positive (or inf), got {p} (x shape {tuple(x.shape)}, {x.dtype})")
    wide = _widened(x)
    if _math.isinf(p):
        norm = reduce_ops.max(math_ops.abs(wide), ax, keepdims=True)
    else:
        if p == 2.0:
            powered = math_ops.square(wide)
        else:  # |x|**p of a zero element is 0 with gradient 0 (p < 1 had p * 0**(p - 1) = inf: 0 * inf = NaN)
            magnitude = math_ops.abs(wide)
            nonzero = magnitude > 0
            powered = math_ops.where(nonzero, math_ops.where(nonzero, magnitude, 1.0) ** p, 0.0)
        total = reduce_ops.sum(powered, ax, keepdims=True)
        # The root's derivative is infinite at 0: root only positive totals, so a zero vector has no NaN gradient.
        positive = total > 0
        safe = math_ops.where(positive, total, 1.0)
        root = math_ops.sqrt(safe) if p == 2.0 else safe ** (1.0 / p)
        norm = math_ops.where(positive, root, 0.0)
    return _narrowed(wide / math_ops.maximum(norm, float(epsilon)), x)

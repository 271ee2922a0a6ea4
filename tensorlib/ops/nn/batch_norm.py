"""FusedBatchNormV3 and its gradient op FusedBatchNormGradV3; moments and batch_normalization,
built from other ops."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...backends import generic_nn as _generic
from ...backends import numpy_nn as _kernels
from ...dispatch import apply, as_tensor, as_tensors
from ...grad.registry import once_per_pass, register_gradient
from ...tensor import Tensor
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from ..math import stop_gradient
from .._shapes import broadcast_shapes
from ..registry import defop, spec
from ._common import (
    _check_float,
    _check_matches,
    _check_rank4,
    _delegates_to,
    _float_or_float64,
    _index,
    _is_nchw,
    _nchw_error,
    _op_type,
    _to_nchw,
    _to_nhwc,
)
from .normalization import _epsilon, _narrowed, _widened

_NHW = (0, 1, 2)  # the axes batch norm reduces over in NHWC


# ------------------------------------------------------------------ FusedBatchNormV3 and its gradient op
def _shared_by_inputs(compute, consumers):
    """``compute(node, *grads)`` run once per backward pass for the gradient rules of several inputs of one
    node (the engine's ``once_per_pass``); each rule passes its input's name (one of ``consumers``)."""

    def shared(node, consumer, *grads):
        return once_per_pass((node, compute), grads, lambda: compute(node, *grads))

    return shared


def _check_channel_vector(what, t, channels):
    if len(t.shape) != 1 or (None not in (t.shape[0], channels) and t.shape[0] != channels):
        raise ValueError(f"{what} must have shape ({channels},) (one value per channel), got {tuple(t.shape)}")


def _fused_batch_norm_infer(x, scale, offset, mean, variance, *, epsilon, is_training):
    _check_float("x", x)
    _check_float("scale", scale)
    _check_rank4("x", x.shape, "NHWC (batch, height, width, channels)")
    channels = x.shape[3]
    named = (("scale", scale), ("offset", offset)) + (() if is_training else (("mean", mean), ("variance", variance)))
    for what, t in named:
        _check_channel_vector(what, t, channels)
    if is_training and x.shape[:3] == (1, 1, 1):
        # Each value would be its own mean: y all zeros, the Bessel-corrected variance 0 / 0 (PyTorch raises).
        raise ValueError(f"expected more than 1 value per channel when training, got x of shape {tuple(x.shape)}")
    stat = spec((channels,), scale.dtype)
    return spec(x.shape, x.dtype), stat, stat, stat


_fused_batch_norm = defop(
    "FusedBatchNormV3",
    inputs=("x", "scale", "offset", "mean", "variance"),
    attrs={"epsilon": 1e-3, "is_training": True},
    infer=_fused_batch_norm_infer,
    promote=(1, 2, 3, 4),
    doc="Batch norm of an NHWC x in one pass: outputs (y, batch_mean, batch_variance, inv_std). In training the "
    "batch variance is Bessel-corrected (for running averages, as in TensorFlow); y uses the biased one.",
)


@_fused_batch_norm.kernel("numpy")
def _fused_batch_norm_numpy(x, scale, offset, mean, variance, *, epsilon, is_training):
    if is_training:
        y, batch_mean, batch_var, inv_std = _kernels.fused_batch_norm_forward(x, scale, offset, epsilon)
        count = x.shape[0] * x.shape[1] * x.shape[2]
        return y, batch_mean, batch_var * (count / max(count - 1, 1)), inv_std
    y, inv_std = _generic.batch_norm_inference(np, x, scale, offset, mean, variance, scale.dtype.type(epsilon))
    return y, mean, variance, inv_std


@_fused_batch_norm.generic
def _fused_batch_norm_generic(xp, x, scale, offset, mean, variance, *, epsilon, is_training):
    return _generic.fused_batch_norm(xp, x, scale, offset, mean, variance, epsilon, is_training)


def _fused_batch_norm_backward(node, g_y, *ignored_stat_grads):
    x, scale = node.inputs[:2]
    mean, inv_std = node.outputs[1], node.outputs[3]
    if mean.dtype == _dt.float16:
        # A float16 scale rounds the statistics to float16: the mean of x ~ 100 +- 0.3 by up to 0.03, a tenth of
        # its spread, which the backward's (x - mean) * inv_std would carry (scale gradient 27% off).  They are
        # recomputed from x in at least float32, the forward's precision (TensorFlow keeps float32 statistics:
        # its scale must be float32 for a float16 x).
        wide = math_ops.cast(x, _dt.float32) if x.dtype == _dt.float16 else x
        mean = reduce_ops.mean(wide, _NHW)
        inv_std = 1.0 / math_ops.sqrt(reduce_ops.mean(math_ops.square(wide - mean), _NHW) + node.attrs["epsilon"])
    return _fused_batch_norm_grad(g_y, x, scale, mean, inv_std, epsilon=node.attrs["epsilon"])


_training_grads = _shared_by_inputs(_fused_batch_norm_backward, ("x", "scale", "offset"))


def _inference_inv_std(node):
    return 1.0 / math_ops.sqrt(node.inputs[4] + node.attrs["epsilon"])


def _bn_grad_x(node, g, *_):
    if node.attrs["is_training"]:
        return _training_grads(node, "x", g, *_)[0]
    return g * (node.inputs[1] * _inference_inv_std(node))


def _bn_grad_scale(node, g, *_):
    if node.attrs["is_training"]:
        return _training_grads(node, "scale", g, *_)[1]
    return reduce_ops.sum(g * (node.inputs[0] - node.inputs[3]), _NHW) * _inference_inv_std(node)


def _bn_grad_offset(node, g, *_):
    return _training_grads(node, "offset", g, *_)[2] if node.attrs["is_training"] else reduce_ops.sum(g, _NHW)


def _bn_grad_mean(node, g, *_):  # inference only: training ignores the mean and variance inputs
    return None if node.attrs["is_training"] else -reduce_ops.sum(g, _NHW) * node.inputs[1] * _inference_inv_std(node)


def _bn_grad_variance(node, g, *_):
    if node.attrs["is_training"]:
        return None
    inv_std = _inference_inv_std(node)
    return (
        reduce_ops.sum(g * (node.inputs[0] - node.inputs[3]), _NHW)
        * node.inputs[1]
        * -0.5
        * inv_std
        * inv_std
        * inv_std
    )


register_gradient("FusedBatchNormV3", _bn_grad_x, _bn_grad_scale, _bn_grad_offset, _bn_grad_mean, _bn_grad_variance)


def _fused_batch_norm_grad_infer(y_backprop, x, scale, batch_mean, inv_std, *, epsilon):
    _check_matches("y_backprop", y_backprop.shape, x.shape)
    stat = spec(scale.shape, scale.dtype)
    return spec(x.shape, x.dtype), stat, stat


_fused_batch_norm_grad = defop(
    "FusedBatchNormGradV3",
    inputs=("y_backprop", "x", "scale", "batch_mean", "inv_std"),
    attrs={"epsilon": 1e-3},
    infer=_fused_batch_norm_grad_infer,
    doc="Training-mode batch norm backward in one pass: (x_backprop, scale_backprop, offset_backprop).",
)


@_fused_batch_norm_grad.kernel("numpy")
def _fused_batch_norm_grad_numpy(y_backprop, x, scale, batch_mean, inv_std, *, epsilon):
    return _kernels.fused_batch_norm_backward(y_backprop, x, scale, batch_mean, inv_std)


_delegates_to(_fused_batch_norm_grad_numpy, _kernels.fused_batch_norm_backward)


@_fused_batch_norm_grad.generic
def _fused_batch_norm_grad_generic(xp, y_backprop, x, scale, batch_mean, inv_std, *, epsilon):
    return _generic.batch_norm_backward(xp, y_backprop, x, scale, batch_mean, inv_std)


def _bn_second_order_terms(node, g_dx, g_dscale, g_doffset):
    """Shared pieces of the gradient of (dx, dscale, doffset) = FusedBatchNormGradV3(dy, x, scale).

    Statistics are recomputed from x with ops (the batch_mean / inv_std inputs are x's statistics),
    so these rules carry x's full dependence and differentiate again correctly.  float16 operands are
    widened to float32 (the first-order kernel's precision; in float16 the mean of x ~ 100 +- 0.3 was off
    by a tenth of its spread, the second-order gradients by 5%); the engine casts each result back.
    """
    dy, x, scale = (_widened(t) for t in node.inputs[:3])
    g_dx = _widened(g_dx)
    mu = reduce_ops.mean(x, _NHW)
    inv_std = 1.0 / math_ops.sqrt(reduce_ops.mean(math_ops.square(x - mu), _NHW) + node.attrs["epsilon"])
    x_hat = (x - mu) * inv_std
    dy_centered = dy - reduce_ops.mean(dy, _NHW)
    mean_dy_xhat = reduce_ops.mean(dy * x_hat, _NHW)
    g_centered = g_dx - reduce_ops.mean(g_dx, _NHW)
    mean_g_xhat = reduce_ops.mean(g_dx * x_hat, _NHW)
    return dict(
        scale=scale,
        inv_std=inv_std,
        x_hat=x_hat,
        dy_centered=dy_centered,
        mean_dy_xhat=mean_dy_xhat,
        g_centered=g_centered,
        mean_g_xhat=mean_g_xhat,
        mean_g_dy=reduce_ops.mean(g_dx * dy_centered, _NHW),
        g_dx=g_dx,
        g_dscale=g_dscale,
        g_doffset=g_doffset,
    )


_second_order_terms = _shared_by_inputs(_bn_second_order_terms, ("y_backprop", "x", "scale"))


def _bn_grad_grad_y_backprop(node, *grads):
    t = _second_order_terms(node, "y_backprop", *grads)
    projected = t["g_centered"] - t["x_hat"] * t["mean_g_xhat"]
    return t["scale"] * t["inv_std"] * projected + t["x_hat"] * t["g_dscale"] + t["g_doffset"]


def _bn_grad_grad_x(node, *grads):
    t = _second_order_terms(node, "x", *grads)
    a, b = t["mean_g_xhat"], t["mean_dy_xhat"]
    from_dx = t["x_hat"] * (3.0 * a * b - t["mean_g_dy"]) - b * t["g_centered"] - a * t["dy_centered"]
    from_dscale = t["dy_centered"] - t["x_hat"] * b
    return t["scale"] * t["inv_std"] * t["inv_std"] * from_dx + t["g_dscale"] * t["inv_std"] * from_dscale


def _bn_grad_grad_scale(node, *grads):
    t = _second_order_terms(node, "scale", *grads)
    return reduce_ops.sum(t["g_dx"] * (t["dy_centered"] - t["x_hat"] * t["mean_dy_xhat"]), _NHW) * t["inv_std"]


# batch_mean and inv_std are x's statistics; the x rule accounts for them, so nothing flows to them.
register_gradient("FusedBatchNormGradV3", _bn_grad_grad_y_backprop, _bn_grad_grad_x, _bn_grad_grad_scale, None, None)


@_op_type("FusedBatchNormV3")
def fused_batch_norm(
    x, scale, offset, mean=None, variance=None, epsilon: float = 1e-3, is_training: bool = True, data_format="NHWC"
) -> tuple:
    """Batch norm of a 4-D NHWC ``x`` as one op: returns ``(y, batch_mean, batch_variance)``.

    Training (``is_training=True``) normalises with the batch's statistics over
    (N, H, W) and returns them for running averages: the variance
    Bessel-corrected, as TensorFlow does, and both without gradient (as in
    TensorFlow; use :func:`moments` for statistics you differentiate).
    Inference normalises with the given ``mean`` and ``variance`` and returns them as Tensors (the caller's
    arrays or lists converted, never handed back).
    ``data_format="NCHW"`` takes and returns a channels-first ``x`` (statistics per channel, axis 1).

    >>> import numpy as np, tensorlib as tl
    >>> x = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    >>> y, mean, var = tl.nn.fused_batch_norm(x, np.ones(1), np.zeros(1), epsilon=0.0)
    >>> y.numpy().ravel().tolist(), mean.numpy().tolist(), var.numpy().tolist()
    ([-1.0, 1.0], [2.0], [2.0])
    """
    if not isinstance(is_training, (bool, np.bool_)):  # "False" or a Tensor would be true: training, silently
        raise TypeError(f"FusedBatchNormV3: is_training must be a bool, got {is_training!r}")
    epsilon = _epsilon(epsilon, "FusedBatchNormV3", x)
    x = _float_or_float64(x, "FusedBatchNormV3")  # integers and bools: float64 (DESIGN §6)
    if _is_nchw(data_format, "FusedBatchNormV3"):
        try:
            y, batch_mean, batch_var = fused_batch_norm(
                _to_nhwc(x, "FusedBatchNormV3", "x"), scale, offset, mean, variance, epsilon, is_training
            )
        except (ValueError, TypeError) as e:
            raise _nchw_error(e, x=x) from None
        return _to_nchw(y), batch_mean, batch_var
    if is_training:
        dtype = scale.dtype if hasattr(scale, "dtype") else _dt.float32
        empty = np.empty((0,), dtype)
        y, batch_mean, batch_var, _ = apply(
            _fused_batch_norm,
            (x, scale, offset, empty if mean is None else mean, empty if variance is None else variance),
            {"epsilon": float(epsilon), "is_training": True},
        )
        return y, stop_gradient(batch_mean), stop_gradient(batch_var)
    if mean is None or variance is None:
        raise ValueError("FusedBatchNormV3: inference (is_training=False) needs the mean and variance to use")
    # read together, as the op promotes these four, and in float64 for a float64 x (a listed mean was float32)
    x = as_tensor(x)
    floor = _dt.float64 if x.dtype == _dt.float64 else None  # (float16 and float32 x keep float32 statistics)
    scale, offset, mean, variance = as_tensors(scale, offset, mean, variance, floor=floor)
    y = apply(_fused_batch_norm, (x, scale, offset, mean, variance), {"epsilon": float(epsilon), "is_training": False})[
        0
    ]
    return y, mean, variance


@_op_type(None, tensors=("x",))
def moments(x, axes, keepdims: bool = False) -> tuple:
    """Mean and (biased) variance of ``x`` over ``axes``; float16 is computed in float32, and the variance
    of complex ``x`` is its real mean squared modulus, as ``tl.var``'s.

    >>> import tensorlib as tl
    >>> mean, variance = tl.nn.moments(tl.tensor([[1.0, 3.0], [5.0, 7.0]]), axes=[0])
    >>> mean.numpy().tolist(), variance.numpy().tolist()
    ([3.0, 5.0], [4.0, 4.0])
    """
    x = as_tensor(x)
    axes = _moment_axes(axes, "moments")
    wide = math_ops.cast(x, _dt.float32) if x.dtype == _dt.float16 else x
    mean = reduce_ops.mean(wide, axes, keepdims=True)
    centered = wide - mean
    if x.dtype.kind == "c":  # the mean squared modulus, real (tl.var, NumPy, PyTorch): square(z) was complex
        centered = math_ops.abs(centered)
    variance = reduce_ops.mean(math_ops.square(centered), axes, keepdims=keepdims)
    if not keepdims:
        mean = shape_ops.squeeze(mean, axes)
    if wide is not x:
        mean, variance = math_ops.cast(mean, x.dtype), math_ops.cast(variance, x.dtype)
    return mean, variance


def _moment_axes(axes, name: str) -> tuple:
    try:
        return (_index(axes),) if isinstance(axes, (int, np.integer)) else tuple(_index(a) for a in axes)
    except TypeError:
        raise TypeError(f"{name}: axes must be an int or a sequence of ints, got {axes!r}") from None


@_op_type(None, tensors=("x", "frequency_weights"))
def weighted_moments(x, axes, frequency_weights, keepdims: bool = False) -> tuple:
    """Mean and (biased) variance of ``x`` over ``axes``, each value counted ``frequency_weights`` times (a
    tensor that broadcasts to ``x``): TensorFlow's ``tf.nn.weighted_moments``.  A total weight of 0 gives mean
    and variance 0 (TensorFlow's ``reciprocal_no_nan``); float16 is computed in float32.

    >>> import tensorlib as tl
    >>> mean, variance = tl.nn.weighted_moments(tl.tensor([1.0, 3.0]), [0], tl.tensor([3.0, 1.0]))
    >>> mean.numpy().tolist(), variance.numpy().tolist()
    (1.5, 0.75)
    """
    x, weights = as_tensors(x, frequency_weights)
    x = _float_or_float64(x, "weighted_moments")  # integers gave integer means, truncated: [1, 2] -> 1
    axes = _moment_axes(axes, "weighted_moments")
    try:
        broadcast_shapes(weights.shape, x.shape)
    except ValueError:
        raise ValueError(
            f"weighted_moments: frequency_weights shape {tuple(weights.shape)} does not broadcast to x shape "
            f"{tuple(x.shape)} ({x.dtype})"
        ) from None
    wide, weights = _widened(x), _widened(weights)
    total = reduce_ops.sum(weights + math_ops.zeros_like(wide), axes, keepdims=True)  # the weight of every value
    empty = total == 0
    divisor = math_ops.where(empty, 0.0, 1.0 / math_ops.where(empty, 1.0, total))
    mean = reduce_ops.sum(weights * wide, axes, keepdims=True) * divisor
    variance = reduce_ops.sum(weights * math_ops.square(wide - mean), axes, keepdims=True) * divisor
    if not keepdims:
        mean, variance = shape_ops.squeeze(mean, axes), shape_ops.squeeze(variance, axes)
    return _narrowed(mean, x), _narrowed(variance, x)


@_op_type(None, tensors=("x", "mean", "variance", "offset", "scale"))
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon: float) -> Tensor:
    """``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset`` for any rank (broadcasting).

    The caller supplies the statistics (e.g. from :func:`moments`, or running
    averages); ``offset`` and ``scale`` may be None.  Built from ops, so every
    argument gets a gradient.

    >>> import tensorlib as tl
    >>> y = tl.nn.batch_normalization(tl.tensor([1.0, 3.0]), 2.0, 1.0, None, None, 0.0)
    >>> y.numpy().tolist()
    [-1.0, 1.0]
    """
    # read together: lists next to a float64 x are float64 (they were float32, or crashed in variance + epsilon)
    x, mean, variance, offset, scale = as_tensors(x, mean, variance, offset, scale)
    if isinstance(variance_epsilon, (int, float, np.integer, np.floating)):  # a Tensor is the caller's to check
        variance_epsilon = _epsilon(variance_epsilon, "batch_normalization", x)
    for what, value in (("mean", mean), ("variance", variance), ("offset", offset), ("scale", scale)):
        # Unchecked, statistics of the wrong size failed in Mul or Add, naming neither this function nor them.
        shape = tuple(value.shape) if value is not None else ()
        try:
            broadcast_shapes(shape, x.shape)
        except ValueError:
            raise ValueError(
                f"batch_normalization: {what} shape {shape} does not broadcast to x shape {tuple(x.shape)} ({x.dtype})"
            ) from None
    inv = 1.0 / math_ops.sqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift

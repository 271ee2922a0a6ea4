"""Training-mode fused batch norm of NHWC images over (N, H, W), forward and backward."""

from __future__ import annotations

import math

import numpy as np

from .blocks import _compute_dtype
from .sums import column_sums


def fused_batch_norm_forward(
    x: np.ndarray, scale: np.ndarray, offset: np.ndarray, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training-mode batch norm of an NHWC ``x`` over (N, H, W).

    Returns ``(y, batch_mean, batch_var, inv_std)``: ``y`` in ``x``'s dtype;
    the biased (``ddof=0``) variance, the mean and
    ``inv_std = 1 / sqrt(var + epsilon)`` in ``scale``'s dtype (TensorFlow's
    rule: float32 for a float16 ``x``). Statistics are computed in at least
    float32.

    >>> x = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    >>> y, mean, var, inv_std = fused_batch_norm_forward(x, np.ones(1), np.zeros(1), 0.0)
    >>> y.ravel(), mean, var
    (array([-1.,  1.]), array([2.]), array([1.]))
    """
    channels = x.shape[-1]
    compute = _compute_dtype(x.dtype)
    flat = x.reshape(math.prod(x.shape[:-1]), channels)  # not -1: no channels (an empty axis) sizes nothing
    count = flat.shape[0]
    centered = flat.astype(compute)  # a fresh buffer that becomes y
    mean = column_sums(centered) / count
    centered -= mean
    var = column_sums(np.square(centered)) / count
    inv_std = 1.0 / np.sqrt(var + compute.type(epsilon))
    centered *= scale.astype(compute) * inv_std
    centered += offset.astype(compute)
    y = centered.astype(x.dtype, copy=False).reshape(x.shape)
    stat_dtype = scale.dtype
    return y, mean.astype(stat_dtype), var.astype(stat_dtype), inv_std.astype(stat_dtype)


def fused_batch_norm_backward(
    dy: np.ndarray,
    x: np.ndarray,
    scale: np.ndarray,
    mean: np.ndarray,
    inv_std: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(dx, dscale, doffset)`` of training-mode batch norm.

    One fused formula with ``M = N*H*W`` and ``xhat = (x - mean) * inv_std``:
    ``dx = scale*inv_std/M * (M*dy - sum(dy) - xhat*sum(dy*xhat))``,
    ``dscale = sum(dy*xhat)``, ``doffset = sum(dy)``. ``dx`` has ``x``'s
    dtype, ``dscale`` and ``doffset`` ``scale``'s.

    >>> x = np.array([1.0, 3.0]).reshape(1, 1, 2, 1)
    >>> _, mean, _, inv_std = fused_batch_norm_forward(x, np.ones(1), np.zeros(1), 0.0)
    >>> dy = np.array([1.0, 1.0]).reshape(1, 1, 2, 1)
    >>> dx, dscale, doffset = fused_batch_norm_backward(dy, x, np.ones(1), mean, inv_std)
    >>> dx.ravel(), dscale, doffset
    (array([0., 0.]), array([0.]), array([2.]))
    """
    channels = x.shape[-1]
    compute = _compute_dtype(np.result_type(x, dy))
    flat_dy = dy.reshape(math.prod(dy.shape[:-1]), channels)
    count = flat_dy.shape[0]
    inv_std = inv_std.astype(compute)
    centered = np.subtract(x.reshape(flat_dy.shape), mean.astype(compute), dtype=compute)
    product = np.multiply(flat_dy, centered, dtype=compute)
    sum_dy = column_sums(flat_dy.astype(compute, copy=False))
    sum_dy_centered = column_sums(product)
    # dx = dy * a + centered * b + c, the formula above with xhat expanded.
    a = scale.astype(compute) * inv_std
    b = -a * inv_std * inv_std * sum_dy_centered / count
    c = -a * sum_dy / count
    centered *= b
    centered += c
    dx = np.multiply(flat_dy, a, out=product, dtype=compute)
    dx += centered
    dscale = (sum_dy_centered * inv_std).astype(scale.dtype)
    doffset = sum_dy.astype(scale.dtype)
    return dx.astype(x.dtype, copy=False).reshape(x.shape), dscale, doffset

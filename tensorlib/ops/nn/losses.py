"""Softmax cross entropy with logits, dense and sparse labels, and sigmoid cross entropy with logits."""

from __future__ import annotations

from ...dispatch import apply
from ...grad.registry import register_gradient
from ...tensor import Tensor
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from .._shapes import normalize_axis
from ..registry import defop, spec
from ._common import _check_float, _check_matches, _op_type
from .activations import _log_softmax_kernel, log_softmax, softmax


# ------------------------------------------------------------------ softmax cross entropy (dense and sparse)
def _cross_entropy_infer(logits, labels, *, axis):
    _check_float("logits", logits)
    if tuple(logits.shape) != tuple(labels.shape):
        _check_matches("labels", labels.shape, logits.shape)
    ax = normalize_axis(axis, len(logits.shape))
    return spec(tuple(d for i, d in enumerate(logits.shape) if i != ax), logits.dtype)


_cross_entropy = defop(
    "SoftmaxCrossEntropyWithLogits",
    inputs=("logits", "labels"),
    attrs={"axis": -1},
    infer=_cross_entropy_infer,
    promote=(0, 1),
    float_valued=True,  # integer and bool logits (and labels) give float64: DESIGN §6
    doc="-sum(labels * log_softmax(logits)) along axis.",
)


@_cross_entropy.generic
def _cross_entropy_kernel(xp, logits, labels, *, axis):
    return -xp.sum(labels * _log_softmax_kernel(xp, logits, axis=axis), axis=axis)


def _cross_entropy_grad_logits(node, g):
    logits, labels = node.inputs
    axis = node.attrs["axis"]
    # softmax * sum(labels) - labels: exactly softmax - labels for labels that sum to one.
    return shape_ops.expand_dims(g, axis) * (
        softmax(logits, axis) * reduce_ops.sum(labels, axis, keepdims=True) - labels
    )


register_gradient(
    "SoftmaxCrossEntropyWithLogits",
    _cross_entropy_grad_logits,
    lambda node, g: -shape_ops.expand_dims(g, node.attrs["axis"]) * log_softmax(node.inputs[0], node.attrs["axis"]),
)


@_op_type("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(labels, logits, axis: int = -1) -> Tensor:
    """Cross entropy between ``labels`` (a distribution per row) and ``softmax(logits)``.

    The gradient with respect to ``logits`` is ``softmax(logits) - labels`` for rows of ``labels`` that sum to
    one; for other rows it is the loss's true derivative ``softmax(logits) * sum(labels) - labels``
    (TensorFlow's kernel returns ``softmax(logits) - labels`` whatever the sum, which is not the derivative of
    the loss it returns).

    >>> import tensorlib as tl
    >>> loss = tl.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=[[1e4, 0.0]])
    >>> loss.numpy().tolist()
    [10000.0]
    """
    return apply(_cross_entropy, (logits, labels), {"axis": int(axis)})


def _sparse_cross_entropy_infer(logits, labels):
    _check_float("logits", logits)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integer class indices, got {labels.dtype}")
    if len(logits.shape) != len(labels.shape) + 1:
        raise ValueError(
            f"logits must have one more dimension than labels (the classes), got logits shape "
            f"{tuple(logits.shape)} and labels shape {tuple(labels.shape)}"
        )
    _check_matches("labels", labels.shape, logits.shape[:-1])
    return spec(labels.shape, logits.dtype)


_sparse_cross_entropy = defop(
    "SparseSoftmaxCrossEntropyWithLogits",
    inputs=("logits", "labels"),
    infer=_sparse_cross_entropy_infer,
    float_valued=True,  # integer and bool logits (and labels) give float64: DESIGN §6
    doc="-log_softmax(logits)[label] along the last axis, for integer labels.",
)


@_sparse_cross_entropy.generic
def _sparse_cross_entropy_kernel(xp, logits, labels):
    classes = logits.shape[-1]
    flat = xp.reshape(labels, (-1,))
    if flat.shape[0] and (int(xp.min(flat)) < 0 or int(xp.max(flat)) >= classes):
        bad = flat[int(xp.argmax(xp.astype((flat < 0) | (flat >= classes), xp.int8)))]
        raise ValueError(
            f"SparseSoftmaxCrossEntropyWithLogits: label {int(bad)} is out of range [0, {classes}) "
            f"(logits shape {logits.shape})"
        )
    return _picked_log_probs(xp, logits, labels)


def _picked_log_probs(xp, logits, labels):
    """-log_softmax(logits)[..., label]: the loss without the label check (CuPy skips it: a host sync)."""
    log_probs = _log_softmax_kernel(xp, logits, axis=-1)
    return -xp.take_along_axis(log_probs, xp.astype(labels, xp.int64)[..., None], axis=-1)[..., 0]


def _sparse_cross_entropy_grad(node, g):
    logits, labels = node.inputs
    if logits.shape[-1] is None:  # traced with an unknown number of classes: labels == 0, 1, ..., n - 1
        classes = shape_ops.positions_along(logits, logits.ndim - 1)
        hot = math_ops.cast(math_ops.equal(shape_ops.expand_dims(labels, -1), classes), logits.dtype)
    else:
        hot = shape_ops.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return shape_ops.expand_dims(g, -1) * (softmax(logits) - hot)


register_gradient("SparseSoftmaxCrossEntropyWithLogits", _sparse_cross_entropy_grad, None)


@_op_type("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(labels, logits) -> Tensor:
    """Cross entropy for integer class ``labels`` against ``logits`` of shape ``labels.shape + (classes,)``.

    >>> import numpy as np, tensorlib as tl
    >>> loss = tl.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([1]), logits=[[0.0, 0.0]])
    >>> round(float(loss[0]), 4)
    0.6931
    """
    return apply(_sparse_cross_entropy, (logits, labels))


# ------------------------------------------------------------------ sigmoid cross entropy (independent binary labels)
def _sigmoid_cross_entropy_infer(logits, labels):
    _check_float("logits", logits)
    _check_matches("labels", labels.shape, logits.shape)
    return spec(tuple(d if d is not None else e for d, e in zip(logits.shape, labels.shape)), logits.dtype)


_sigmoid_cross_entropy = defop(
    "SigmoidCrossEntropyWithLogits",
    inputs=("logits", "labels"),
    infer=_sigmoid_cross_entropy_infer,
    promote=(0, 1),
    float_valued=True,  # integer and bool logits (and labels) give float64: DESIGN §6
    doc="max(x, 0) - x * z + log1p(exp(-|x|)): -z log sigmoid(x) - (1 - z) log(1 - sigmoid(x)), elementwise.",
)
_sigmoid_cross_entropy.generic(lambda xp, x, z: xp.maximum(x, 0) - x * z + xp.log1p(xp.exp(-xp.abs(x))))
# The derivative is sigmoid(x) - z everywhere, 0.5 - z at x = 0 too (the formula's max and |x| have kinks there).
register_gradient(
    "SigmoidCrossEntropyWithLogits",
    lambda node, g: g * (math_ops.sigmoid(node.inputs[0]) - node.inputs[1]),
    lambda node, g: -g * node.inputs[0],
)


@_op_type("SigmoidCrossEntropyWithLogits")
def sigmoid_cross_entropy_with_logits(labels, logits) -> Tensor:
    """Elementwise binary cross entropy between ``labels`` (probabilities, same shape as ``logits``) and
    ``sigmoid(logits)``, computed as ``max(x, 0) - x * z + log1p(exp(-|x|))``: finite for logits of any size.

    The gradient with respect to ``logits`` is ``sigmoid(logits) - labels``, with respect to ``labels`` ``-logits``.

    >>> import tensorlib as tl
    >>> loss = tl.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0, 1.0], logits=[0.0, 100.0, -100.0])
    >>> loss.numpy().round(4).tolist()
    [0.6931, 100.0, 100.0]
    """
    return apply(_sigmoid_cross_entropy, (logits, labels))

"""PyTorch's loss functions (``torch.nn.functional``): ``mse_loss``, ``l1_loss``, ``huber_loss``,
``smooth_l1_loss``, ``binary_cross_entropy``, ``kl_div``, ``nll_loss``, ``cross_entropy``,
``cosine_similarity`` and ``ctc_loss``, with their signatures, reductions and conventions (the class axis of
``nll_loss`` and ``cross_entropy`` is axis 1, as PyTorch's).

Each is an exact composition of other ops, so gradients (to any order), tracing and every backend come from
the ops used; values and gradients are checked against PyTorch's (tests/test_loss_functions.py)."""

from __future__ import annotations

import math as _math

import numpy as np

from ... import dtypes as _dt
from ...dispatch import as_tensor, as_tensors
from ...tensor import Tensor
from .. import array as array_ops
from .. import elementwise as elementwise_ops
from .. import math as math_ops
from .. import reduce as reduce_ops
from .. import shape as shape_ops
from .._shapes import broadcast_shapes, normalize_axis
from ._common import _float_or_float64, _op_type
from .activations import log_softmax, softplus
from .composed import weighted_cross_entropy_with_logits
from .losses import sigmoid_cross_entropy_with_logits
from .normalization import _widened

_REDUCTIONS = ("mean", "sum", "none")


def _reduced(loss: Tensor, reduction: str, name: str) -> Tensor:
    if reduction == "mean":
        return reduce_ops.mean(loss)
    if reduction == "sum":
        return reduce_ops.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _rounded(loss: Tensor, dtype) -> Tensor:
    """``loss`` (computed in float32 for float16 inputs) in the inputs' ``dtype``, rounded once."""
    return loss if loss.dtype == dtype else math_ops.cast(loss, dtype)


def _pair(input, target, name: str, names: tuple = ("input", "target")):
    """``input`` and ``target`` as float tensors (integers as float64) of one dtype, their shapes broadcasting;
    errors call them ``names``.

    The losses compute float16 in float32 and round once (as PyTorch's kernels do): a float16 square or sum of
    squares overflows from 256 (``mse_loss`` of a difference of 300 was inf, its mean 45000 fits float16)."""
    input, target = as_tensors(input, target)  # a list target next to a float64 input is float64
    x, y = _float_or_float64(input, name, names[0]), _float_or_float64(target, name, names[1])
    try:
        broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise ValueError(
            f"{name}: {names[0]} shape {tuple(x.shape)} ({x.dtype}) and {names[1]} shape {tuple(y.shape)} "
            f"({y.dtype}) do not broadcast"
        ) from None
    dtype = _dt.promote_types(x.dtype, y.dtype)
    return (x if x.dtype == dtype else x.astype(dtype)), (y if y.dtype == dtype else y.astype(dtype))


@_op_type(None, tensors=("input", "target"))
def mse_loss(input, target, reduction: str = "mean") -> Tensor:
    """``(input - target) ** 2``, reduced (PyTorch's ``F.mse_loss``).

    >>> import tensorlib as tl
    >>> float(tl.nn.mse_loss(tl.tensor([1.0, 2.0]), tl.tensor([0.0, 4.0])))
    2.5
    """
    x, y = _pair(input, target, "mse_loss")
    return _rounded(_reduced(math_ops.square(_widened(x) - _widened(y)), reduction, "mse_loss"), x.dtype)


@_op_type(None, tensors=("input", "target"))
def l1_loss(input, target, reduction: str = "mean") -> Tensor:
    """``|input - target|``, reduced (PyTorch's ``F.l1_loss``; the derivative at 0 is 0, as its sign).

    >>> import tensorlib as tl
    >>> float(tl.nn.l1_loss(tl.tensor([1.0, 2.0]), tl.tensor([0.0, 4.0])))
    1.5
    """
    x, y = _pair(input, target, "l1_loss")
    return _rounded(_reduced(math_ops.abs(_widened(x) - _widened(y)), reduction, "l1_loss"), x.dtype)


def _check_positive(value, what: str, name: str) -> float:
    value = float(value)
    if not value > 0:
        raise ValueError(f"{name}: {what} must be positive, got {value}")
    return value


@_op_type(None, tensors=("input", "target"))
def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """``0.5 d ** 2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, for ``d = input - target``,
    reduced (PyTorch's ``F.huber_loss``; Keras' ``Huber`` with ``reduction="mean"``).

    >>> import tensorlib as tl
    >>> tl.nn.huber_loss(tl.tensor([0.5, 3.0]), tl.tensor([0.0, 0.0]), reduction="none").numpy().tolist()
    [0.125, 2.5]
    """
    delta = _check_positive(delta, "delta", "huber_loss")
    x, y = _pair(input, target, "huber_loss")
    d = math_ops.abs(_widened(x) - _widened(y))
    small = math_ops.less(d, delta)
    clipped = elementwise_ops.where(small, d, 0.0)  # no gradient through the branch that is not taken
    loss = elementwise_ops.where(small, 0.5 * math_ops.square(clipped), delta * (d - 0.5 * delta))
    return _rounded(_reduced(loss, reduction, "huber_loss"), x.dtype)


@_op_type(None, tensors=("input", "target"))
def smooth_l1_loss(input, target, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 d ** 2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, reduced (PyTorch's
    ``F.smooth_l1_loss``: :func:`huber_loss` divided by ``beta``; ``beta=0`` is :func:`l1_loss`).

    >>> import tensorlib as tl
    >>> tl.nn.smooth_l1_loss(tl.tensor([0.5, 3.0]), tl.tensor([0.0, 0.0]), reduction="none").numpy().tolist()
    [0.125, 2.5]
    """
    beta = float(beta)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    if beta == 0:
        return l1_loss(input, target, reduction)
    return huber_loss(input, target, reduction, beta) / beta


@_op_type(None, tensors=("input", "target", "weight"))
def binary_cross_entropy(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """``-weight (target log(input) + (1 - target) log(1 - input))`` of probabilities ``input`` in [0, 1],
    reduced, each log clamped at -100 as PyTorch's ``F.binary_cross_entropy`` (so the loss stays finite at 0
    and 1).  Logits are better served by ``sigmoid_cross_entropy_with_logits``.  Eagerly, probabilities outside
    [0, 1] raise; traced, their losses are NaN.

    >>> import tensorlib as tl
    >>> round(float(tl.nn.binary_cross_entropy(tl.tensor([0.8, 0.0]), tl.tensor([1.0, 0.0]))), 5)
    0.11157
    """
    x, y = _pair(input, target, "binary_cross_entropy")
    if not x.is_symbolic:
        values = x.numpy()
        if not ((values >= 0) & (values <= 1)).all():
            raise ValueError(
                f"binary_cross_entropy: input must hold probabilities in [0, 1], got values in "
                f"[{values.min()}, {values.max()}] (shape {tuple(x.shape)}, {x.dtype})"
            )
    p, t = _widened(x), _widened(y)
    loss = -(t * _clamped_log(p) + (1.0 - t) * _clamped_log(1.0 - p))
    if x.is_symbolic:  # NaN where the input is not a probability (the clamped logs gave 100 for 1.5 and -0.1)
        loss = elementwise_ops.where(math_ops.logical_and(p >= 0.0, p <= 1.0), loss, float("nan"))
    loss, dtype = _elementwise_weight(loss, weight, x, "weight", "binary_cross_entropy")
    return _rounded(_reduced(loss, reduction, "binary_cross_entropy"), dtype)


def _elementwise_weight(loss: Tensor, weight, x: Tensor, what: str, name: str) -> tuple:
    """``(loss * weight, the result's dtype)``: ``weight`` (None: no weighting) read next to ``x`` and broadcast
    to its shape, the product in ``loss``'s (widened) dtype."""
    if weight is None:
        return loss, x.dtype
    weight = as_tensors(x, weight)[1]
    _broadcasts_to(weight, x, name, what)
    return loss * _widened(weight), _dt.promote_types(x.dtype, weight.dtype)


def _broadcasts_to(weight: Tensor, x: Tensor, name: str, what: str = "weight") -> None:
    try:
        if broadcast_shapes(weight.shape, x.shape) != tuple(x.shape):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{name}: {what} shape {tuple(weight.shape)} ({weight.dtype}) does not broadcast to input shape "
            f"{tuple(x.shape)} ({x.dtype})"
        ) from None


@_op_type(None, tensors=("input", "target", "weight", "pos_weight"))
def binary_cross_entropy_with_logits(input, target, weight=None, reduction: str = "mean", pos_weight=None) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)`` (logits) against ``target`` (probabilities, shaped as
    ``input``): ``-weight (pos_weight t log(sigmoid(x)) + (1 - t) log(1 - sigmoid(x)))``, reduced (PyTorch's
    ``F.binary_cross_entropy_with_logits``; ``weight`` and ``pos_weight`` broadcast to ``input``, so a
    ``(classes,)`` ``pos_weight`` weighs the positives of each class of the last axis).  Computed as
    :func:`sigmoid_cross_entropy_with_logits` (:func:`weighted_cross_entropy_with_logits` with ``pos_weight``):
    finite with a finite gradient ``sigmoid(x) - t`` for logits of any finite size.

    >>> import tensorlib as tl
    >>> loss = tl.nn.binary_cross_entropy_with_logits(tl.tensor([0.0, 1e4, -1e4]), tl.tensor([1.0, 0.0, 1.0]),
    ...                                               reduction="none")
    >>> loss.numpy().round(4).tolist()
    [0.6931, 10000.0, 10000.0]
    """
    name = "binary_cross_entropy_with_logits"
    x, y = _pair(input, target, name)
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(
            f"{name}: target shape {tuple(y.shape)} ({y.dtype}) must be input shape {tuple(x.shape)} ({x.dtype})"
        )
    logits, labels = _widened(x), _widened(y)
    if pos_weight is None:
        loss, dtype = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits), x.dtype
    else:
        positive = as_tensors(x, pos_weight)[1]
        _broadcasts_to(positive, x, name, "pos_weight")
        loss = weighted_cross_entropy_with_logits(labels, logits, _widened(positive))
        dtype = _dt.promote_types(x.dtype, positive.dtype)
    loss, weighted = _elementwise_weight(loss, weight, x, "weight", name)
    return _rounded(_reduced(loss, reduction, name), _dt.promote_types(dtype, weighted))


def _clamped_at_zero(z: Tensor) -> Tensor:
    """``max(z, 0)`` with the derivative of PyTorch's ``clamp_min``: 1 where ``z >= 0``, at the kink too."""
    return elementwise_ops.where(z >= 0.0, z, 0.0)


@_op_type(None, tensors=("input", "target"))
def soft_margin_loss(input, target, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` for targets ``1`` or ``-1``, reduced (PyTorch's ``F.soft_margin_loss``),
    computed as ``softplus``: finite, with a finite gradient, where PyTorch's overflows (input ``-1e4``, target 1:
    loss 1e4, PyTorch's inf and a NaN gradient).

    >>> import tensorlib as tl
    >>> tl.nn.soft_margin_loss(tl.tensor([0.0, 2.0]), tl.tensor([1.0, -1.0]), reduction="none").numpy().round(4).tolist()
    [0.6931, 2.1269]
    """
    x, y = _pair(input, target, "soft_margin_loss")
    loss = softplus(-(_widened(y) * _widened(x)))
    return _rounded(_reduced(loss, reduction, "soft_margin_loss"), x.dtype)


@_op_type(None, tensors=("input1", "input2", "target"))
def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)`` for targets ``1`` (``input1`` should rank higher) or
    ``-1``, reduced (PyTorch's ``F.margin_ranking_loss``, its derivative 1 at the kink too).

    >>> import tensorlib as tl
    >>> a, b = tl.tensor([1.0, 3.0]), tl.tensor([2.0, 1.0])
    >>> tl.nn.margin_ranking_loss(a, b, tl.tensor([1.0, 1.0]), margin=0.5, reduction="none").numpy().tolist()
    [1.5, 0.0]
    """
    name = "margin_ranking_loss"
    x1, x2 = _pair(input1, input2, name, ("input1", "input2"))
    t = _pair(x1 - x2, target, name)[1]
    loss = _clamped_at_zero(float(margin) - _widened(t) * (_widened(x1) - _widened(x2)))
    return _rounded(_reduced(loss, reduction, name), _dt.promote_types(x1.dtype, t.dtype))


@_op_type(None, tensors=("input", "target"))
def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1, reduced (PyTorch's
    ``F.hinge_embedding_loss``, whose ``input`` is usually a distance; another target value adds both terms, as
    PyTorch's).

    >>> import tensorlib as tl
    >>> x, t = tl.tensor([0.3, 0.3, 2.0]), tl.tensor([1.0, -1.0, -1.0])
    >>> tl.nn.hinge_embedding_loss(x, t, reduction="none").numpy().round(4).tolist()
    [0.3, 0.7, 0.0]
    """
    name = "hinge_embedding_loss"
    x, y = _pair(input, target, name)
    d, t = _widened(x), _widened(y)
    loss = elementwise_ops.where(t != 1.0, _clamped_at_zero(float(margin) - d), 0.0)
    loss = loss + elementwise_ops.where(t != -1.0, d, 0.0)
    return _rounded(_reduced(loss, reduction, name), x.dtype)


@_op_type(None, tensors=("input", "target", "var"))
def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood ``0.5 (log(var) + (input - target) ** 2 / var)`` of ``target`` under normal
    distributions of mean ``input`` and variance ``var`` (plus ``0.5 log(2 pi)`` with ``full``), reduced
    (PyTorch's ``F.gaussian_nll_loss``).  ``var`` is shaped as ``input``, as ``input`` without its last axis, as
    ``input`` with one axis of 1 (a variance shared along it: ``(N, 1, H, W)`` over the channels of ``(N, C, H, W)``),
    or a Python number (one variance for all); it is clamped at ``eps`` for the value only,
    so the gradient passes the clamp (as PyTorch's).  A negative variance raises (traced: NaN).

    >>> import tensorlib as tl
    >>> loss = tl.nn.gaussian_nll_loss(tl.tensor([0.0, 1.0]), tl.tensor([1.0, 1.0]), tl.tensor([1.0, 4.0]), reduction="none")
    >>> loss.numpy().round(4).tolist()
    [0.5, 0.6931]
    """
    name = "gaussian_nll_loss"
    x, y = _pair(input, target, name)
    number = isinstance(var, (int, float)) and not isinstance(var, bool)  # PyTorch's float var: one for all
    v = _float_or_float64(as_tensors(x, var)[1], name, "var")
    shape, vshape = tuple(x.shape), tuple(v.shape)
    if number:
        pass
    elif vshape == shape[:-1] and vshape != shape:
        v = shape_ops.expand_dims(v, -1)
    elif vshape != shape and not _one_axis_of_one(vshape, shape):
        raise ValueError(
            f"{name}: var shape {vshape} ({v.dtype}) must be input shape {shape} ({x.dtype}), that shape without "
            "its last axis, or that shape with one axis of 1 (or var a Python number)"
        )
    if not v.is_symbolic and (v.numpy() < 0).any():
        raise ValueError(f"{name}: var holds negative values (shape {vshape}, {v.dtype})")
    dtype = _dt.promote_types(x.dtype, v.dtype)
    v = _widened(v)
    clamped = v + math_ops.stop_gradient(math_ops.maximum(v, float(eps)) - v)
    loss = 0.5 * (math_ops.log(clamped) + math_ops.square(_widened(x) - _widened(y)) / clamped)
    if v.is_symbolic:
        loss = elementwise_ops.where(v >= 0.0, loss, float("nan"))
    if full:
        loss = loss + 0.5 * _math.log(2 * _math.pi)
    return _rounded(_reduced(loss, reduction, name), dtype)


def _one_axis_of_one(vshape: tuple, shape: tuple) -> bool:
    """Whether ``vshape`` is ``shape`` with exactly one axis of size 1 (PyTorch's shared variance: ``(4, 1, 32, 32)``
    for ``(4, 3, 32, 32)``, one per pixel over the channels)."""
    differ = [v for v, n in zip(vshape, shape) if v != n]
    return len(vshape) == len(shape) and differ == [1]


@_op_type(None, tensors=("input", "target"))
def poisson_nll_loss(
    input, target, log_input: bool = True, full: bool = False, eps: float = 1e-8, reduction: str = "mean"
) -> Tensor:
    """The negative log-likelihood of counts ``target`` under Poisson distributions of rate ``exp(input)``
    (``log_input=True``: ``exp(input) - target * input``) or ``input`` (``input - target * log(input + eps)``),
    without the constant ``log(target!)`` unless ``full``, which adds Stirling's approximation of it where
    ``target > 1``, reduced (PyTorch's ``F.poisson_nll_loss``; :func:`log_poisson_loss` is TensorFlow's).

    >>> import tensorlib as tl
    >>> tl.nn.poisson_nll_loss(tl.tensor([0.0, 1.0]), tl.tensor([1.0, 2.0]), reduction="none").numpy().round(4).tolist()
    [1.0, 0.7183]
    """
    name = "poisson_nll_loss"
    x, y = _pair(input, target, name)
    rate, t = _widened(x), _widened(y)
    loss = math_ops.exp(rate) - t * rate if log_input else rate - t * math_ops.log(rate + float(eps))
    if full:
        big = t > 1.0
        safe = elementwise_ops.where(big, t, 2.0)  # no log of 0 or of a negative count where the term is not taken
        stirling = safe * math_ops.log(safe) - safe + 0.5 * math_ops.log(2 * _math.pi * safe)
        loss = loss + elementwise_ops.where(big, stirling, 0.0)
    return _rounded(_reduced(loss, reduction, name), x.dtype)


def _clamped_log(p: Tensor) -> Tensor:
    """``max(log(p), -100)``, whose derivative is 0 where the clamp holds (no ``inf * 0`` at ``p = 0``)."""
    tiny = math_ops.greater(p, 3.720075976020836e-44)  # exp(-100)
    return elementwise_ops.where(tiny, math_ops.log(elementwise_ops.where(tiny, p, 1.0)), -100.0)


@_op_type(None, tensors=("input", "target"))
def kl_div(input, target, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise Kullback-Leibler divergence ``target (log(target) - input)`` of log-probabilities ``input``
    (0 where ``target`` is 0, NaN where it is negative), reduced; ``reduction="batchmean"`` divides the sum by ``input.shape[0]``, the
    true KL divergence per sample.  With ``log_target`` the target is given as log-probabilities too (PyTorch's
    ``F.kl_div``).

    >>> import tensorlib as tl, numpy as np
    >>> p, q = np.array([[0.5, 0.5]]), np.array([[0.9, 0.1]])
    >>> round(float(tl.nn.kl_div(tl.tensor(np.log(q)), tl.tensor(p), reduction="batchmean")), 6)
    0.510826
    """
    x, y = _pair(input, target, "kl_div")
    dtype, x, y = x.dtype, _widened(x), _widened(y)
    if log_target:
        loss = math_ops.exp(y) * (y - x)
    else:
        # 0 where the target is 0 (0 * x: a NaN input stays NaN); NaN where it is negative, as PyTorch's (it was 0)
        zero = math_ops.equal(y, 0.0)
        log_y = math_ops.log(elementwise_ops.where(zero, 1.0, y))
        loss = elementwise_ops.where(zero, 0.0 * x, y * (log_y - x))
    if reduction == "batchmean":
        if x.ndim == 0:
            raise ValueError("kl_div: reduction='batchmean' needs an input with a batch axis, got a 0-d input")
        return _rounded(reduce_ops.sum(loss) / shape_ops.shape_size(x, (0,)).astype(loss.dtype), dtype)
    return _rounded(_reduced(loss, reduction, "kl_div"), dtype)


def _class_axis(x: Tensor, name: str) -> None:
    if x.ndim < 1:
        raise ValueError(f"{name}: input needs a class axis, got a 0-d input ({x.dtype})")


def _picked(log_probs: Tensor, target, weight, ignore_index: int, name: str):
    """``(-log_probs[t], w[t], kept)`` at the class ``t`` of each sample (class axis 1, or 0 for an unbatched
    ``(C,)`` input): ``w[t]`` is 0 where the sample is ignored (``kept`` False)."""
    target = as_tensor(target)
    if target.dtype.kind not in "iu":
        raise TypeError(f"{name}: target must hold class indices (integers), got {target.dtype}")
    batched = log_probs.ndim > 1
    expected = (log_probs.shape[0], *log_probs.shape[2:]) if batched else ()
    if tuple(target.shape) != tuple(expected) and None not in expected:
        raise ValueError(
            f"{name}: target shape {tuple(target.shape)} must be input shape {tuple(log_probs.shape)} without "
            f"the class axis, {expected}"
        )
    classes = log_probs.shape[1 if batched else 0]
    kept = math_ops.not_equal(target, ignore_index)
    safe = elementwise_ops.where(kept, target, 0)
    if not target.is_symbolic and classes is not None:
        values = target.numpy()
        bad = (values != ignore_index) & ((values < 0) | (values >= classes))
        if bad.any():
            raise ValueError(f"{name}: target holds class indices outside [0, {classes}): {values[bad][:5]}")
    axis = 1 if batched else 0
    chosen = array_ops.take_along_axis(log_probs, shape_ops.expand_dims(safe, axis), axis=axis)
    chosen = shape_ops.squeeze(chosen, axis)
    w = math_ops.cast(kept, log_probs.dtype)
    if weight is not None:
        w = w * shape_ops.take(_class_weights(weight, classes, log_probs.dtype, name), safe)
    return -chosen, w, kept


def _class_weights(weight, classes, dtype, name: str) -> Tensor:
    """``weight`` as a ``(classes,)`` tensor of ``dtype``; a clear error for another shape."""
    weight = as_tensor(weight)
    if weight.ndim != 1 or (None not in (weight.shape[0], classes) and weight.shape[0] != classes):
        raise ValueError(f"{name}: weight must have shape ({classes},), one per class, got {tuple(weight.shape)}")
    return weight.astype(dtype)


def _kept_sum(terms: Tensor, kept: Tensor, scale=None) -> Tensor:
    """The sum of ``terms`` (times ``scale``) over the kept samples; an ignored sample's term passes no
    gradient (a ``where``, not a product by 0, which an inf or NaN term would turn into NaN)."""
    return reduce_ops.sum(elementwise_ops.where(kept, terms if scale is None else terms * scale, 0.0))


def _weighted_mean(terms: Tensor, kept: Tensor, total: Tensor) -> Tensor:
    """PyTorch's ``"mean"``: the kept samples' sum divided by ``total`` (their weights' sum).  With nothing
    kept it is NaN (0 / 0) and its gradient 0, as PyTorch's."""
    empty = math_ops.equal(total, 0.0)
    safe = elementwise_ops.where(empty, 1.0, total)  # no 1 / 0: its inf would meet the zero gradients as NaN
    return _kept_sum(terms, kept, 1.0 / safe) + elementwise_ops.where(empty, float("nan"), 0.0)


@_op_type(None, tensors=("input", "target", "weight"))
def nll_loss(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood ``-weight[t] input[n, t]`` of log-probabilities ``input`` ``(N, C, ...)`` (or
    ``(C,)``) at the class indices ``target`` ``(N, ...)``; samples whose target is ``ignore_index`` count 0.
    ``"mean"`` divides the sum by the sum of the kept samples' weights (PyTorch's ``F.nll_loss``).

    >>> import tensorlib as tl, numpy as np
    >>> logp = tl.tensor(np.log([[0.7, 0.3], [0.2, 0.8]]))
    >>> round(float(tl.nn.nll_loss(logp, tl.tensor([0, 1]))), 6)
    0.289909
    """
    x = _float_or_float64(input, "nll_loss", "input")
    _class_axis(x, "nll_loss")
    loss, w, kept = _picked(_widened(x), target, weight, ignore_index, "nll_loss")
    if reduction == "mean":
        return _rounded(_weighted_mean(loss * w, kept, reduce_ops.sum(w)), x.dtype)
    return _rounded(_reduced(elementwise_ops.where(kept, loss * w, 0.0), reduction, "nll_loss"), x.dtype)


@_op_type(None, tensors=("input", "target", "weight"))
def cross_entropy(
    input, target, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0
) -> Tensor:
    """Cross entropy of the logits ``input`` ``(N, C, ...)`` (or ``(C,)``; class axis 1) with ``target``: class
    indices ``(N, ...)`` (as :func:`nll_loss` of ``log_softmax(input, axis=1)``) or class probabilities shaped
    as ``input``; ``label_smoothing`` mixes the target with the uniform distribution (PyTorch's
    ``F.cross_entropy``, its weighting and ``"mean"`` rules included).

    >>> import tensorlib as tl
    >>> round(float(tl.nn.cross_entropy(tl.tensor([[2.0, 0.0], [0.0, 2.0]]), tl.tensor([0, 1]))), 6)
    0.126928
    """
    name = "cross_entropy"
    x = _float_or_float64(input, name, "input")
    _class_axis(x, name)
    eps = float(label_smoothing)
    if not 0.0 <= eps <= 1.0:
        raise ValueError(f"{name}: label_smoothing must be in [0, 1], got {label_smoothing}")
    axis = 1 if x.ndim > 1 else 0
    dtype, x = x.dtype, _widened(x)
    log_probs = log_softmax(x, axis=axis)
    classes = x.shape[axis]
    listed, target = target, as_tensor(target)
    if target.dtype.kind == "f" and not hasattr(listed, "dtype"):  # listed probabilities: read next to x (float64)
        target = as_tensors(x, listed)[1]
    w_shape = [1] * x.ndim
    w_shape[axis] = -1
    if target.dtype.kind == "f":  # class probabilities
        t = target if target.dtype == x.dtype else target.astype(x.dtype)
        if tuple(t.shape) != tuple(x.shape):
            raise ValueError(f"{name}: probability targets must have input's shape {tuple(x.shape)}, got {t.shape}")
        if eps:
            t = t * (1.0 - eps) + eps / _count(x, axis)
        terms = t * log_probs
        if weight is not None:
            terms = terms * shape_ops.reshape(_class_weights(weight, classes, x.dtype, name), tuple(w_shape))
        loss = -reduce_ops.sum(terms, axis=axis)
        return _rounded(_reduced(loss, reduction, name), dtype)
    loss, w, kept = _picked(log_probs, target, weight, ignore_index, name)
    loss = loss * w
    total = reduce_ops.sum(w)
    if eps:
        terms = log_probs
        if weight is not None:
            terms = terms * shape_ops.reshape(_class_weights(weight, classes, x.dtype, name), tuple(w_shape))
        smooth = -reduce_ops.sum(terms, axis=axis)  # its mean divides by the target weights' sum too (PyTorch)
        loss = loss * (1.0 - eps) + smooth * (eps / _count(x, axis))
    if reduction == "mean":
        return _rounded(_weighted_mean(loss, kept, total), dtype)
    return _rounded(_reduced(elementwise_ops.where(kept, loss, 0.0), reduction, name), dtype)


def _count(x: Tensor, axis: int):
    """The size of ``x``'s ``axis``: an int, or a tensor of ``x``'s dtype where it is unknown (traced with None)."""
    size = x.shape[axis]
    return size if size is not None else shape_ops.shape_size(x, (axis,)).astype(x.dtype)


@_op_type(None, tensors=("x1", "x2"))
def cosine_similarity(x1, x2, axis: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / (max(|x1|, eps) max(|x2|, eps))`` along ``axis``, the inputs broadcast (PyTorch's
    ``F.cosine_similarity``, whose ``dim`` is ``axis`` here).

    >>> import tensorlib as tl
    >>> tl.nn.cosine_similarity(tl.tensor([[1.0, 0.0], [1.0, 1.0]]), tl.tensor([[1.0, 1.0], [2.0, 2.0]])).numpy()
    array([0.70710677, 1.        ], dtype=float32)
    """
    a, b = _pair(x1, x2, "cosine_similarity", ("x1", "x2"))
    try:
        normalize_axis(axis, len(broadcast_shapes(a.shape, b.shape)))
    except (TypeError, ValueError) as e:
        raise type(e)(
            f"cosine_similarity: {e} (x1 shape {tuple(a.shape)} {a.dtype}, x2 shape {tuple(b.shape)} {b.dtype})"
        ) from None
    dtype, a, b, eps = a.dtype, _widened(a), _widened(b), float(eps)

    def norm(v):  # max(|v|, eps) as sqrt(max(|v|^2, eps^2)): no infinite derivative of sqrt at a zero vector
        return math_ops.sqrt(math_ops.maximum(reduce_ops.sum(math_ops.square(v), axis=axis), eps * eps))

    return _rounded(reduce_ops.sum(a * b, axis=axis) / (norm(a) * norm(b)), dtype)


# ------------------------------------------------------------------ connectionist temporal classification
def _log_sum_exp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """``log(e^a + e^b + e^c)``, -inf (with gradient 0) where all three are -inf, never NaN."""
    top = math_ops.maximum(math_ops.maximum(a, b), c)
    dead = math_ops.equal(top, -float("inf"))
    shift = math_ops.stop_gradient(elementwise_ops.where(dead, 0.0, top))
    total = math_ops.exp(a - shift) + math_ops.exp(b - shift) + math_ops.exp(c - shift)
    return elementwise_ops.where(dead, -float("inf"), math_ops.log(elementwise_ops.where(dead, 1.0, total)) + shift)


def _ctc_targets(targets, target_lengths: np.ndarray, name: str) -> np.ndarray:
    """The targets as an ``(N, S)`` int array: padded rows, or PyTorch's 1-D concatenation cut by the lengths."""
    values = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets)
    if values.dtype.kind not in "iu":
        raise TypeError(f"{name}: targets must be class indices (integers), got {values.dtype}")
    if values.ndim == 1:  # concatenated
        if values.size != target_lengths.sum():
            raise ValueError(
                f"{name}: 1-D targets hold {values.size} labels, target_lengths sum to {int(target_lengths.sum())}"
            )
        rows = np.zeros((len(target_lengths), max(int(target_lengths.max(initial=0)), 1)), np.int64)
        for n, (start, length) in enumerate(zip(np.cumsum(target_lengths) - target_lengths, target_lengths)):
            rows[n, :length] = values[start : start + length]
        return rows
    if values.ndim != 2 or values.shape[0] != len(target_lengths) or (target_lengths > values.shape[1]).any():
        raise ValueError(
            f"{name}: targets must be (N, S) with S >= every target length, or 1-D; got shape {values.shape} for "
            f"target_lengths {target_lengths.tolist()}"
        )
    return values.astype(np.int64)


@_op_type(None, tensors=("log_probs",))
def ctc_loss(
    log_probs,
    targets,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss (PyTorch's ``F.ctc_loss``): ``-log`` of the probability that
    the per-frame ``log_probs`` ``(T, N, C)`` (log-softmax outputs) emit ``targets`` (``(N, S)`` padded, or 1-D
    concatenated) after merging repeats and removing ``blank``, each sample over its first ``input_lengths[n]``
    frames.  ``"mean"`` divides each loss by its target length (at least 1), then averages over the batch.  A
    target that cannot fit its frames has an infinite loss; ``zero_infinity`` makes that loss and its gradient 0.

    The forward variable runs over the frames in log space, one step of ops per frame (unrolled when traced); the
    gradient is theirs.  The lengths and targets must be known (not traced values).

    >>> import numpy as np, tensorlib as tl
    >>> log_probs = tl.nn.log_softmax(tl.tensor(np.zeros((3, 1, 2))), axis=-1)
    >>> round(float(tl.nn.ctc_loss(log_probs, [[1]], [3], [1], reduction="sum")), 6)   # -log(6 / 8): 6 of 8 paths give "1"
    0.287682
    """
    name = "ctc_loss"
    lp = _float_or_float64(log_probs, name, "log_probs")
    if lp.ndim != 3 or None in lp.shape:
        raise ValueError(f"{name}: log_probs must be (T, N, C) of known sizes, got {tuple(lp.shape)} ({lp.dtype})")
    dtype, lp = lp.dtype, _widened(lp)
    frames, batch, classes = lp.shape
    lengths_in = np.asarray(input_lengths.numpy() if isinstance(input_lengths, Tensor) else input_lengths)
    lengths_out = np.asarray(target_lengths.numpy() if isinstance(target_lengths, Tensor) else target_lengths)
    if lengths_in.shape != (batch,) or lengths_out.shape != (batch,) or lengths_in.dtype.kind not in "iu":
        raise ValueError(
            f"{name}: input_lengths and target_lengths must be {batch} integers, one per sample, got "
            f"{lengths_in.tolist()} and {lengths_out.tolist()}"
        )
    if (lengths_in < 0).any() or (lengths_in > frames).any() or (lengths_out < 0).any():
        raise ValueError(f"{name}: input_lengths must be in [0, T={frames}] and target_lengths >= 0")
    if not 0 <= blank < classes:
        raise ValueError(f"{name}: blank={blank} is not a class index of C={classes}")
    labels = _ctc_targets(targets, lengths_out.astype(np.int64), name)
    if ((labels < 0) | (labels >= classes))[np.arange(labels.shape[1]) < lengths_out[:, None]].any():
        raise ValueError(f"{name}: targets hold class indices outside [0, {classes})")
    # The extended labels: blank, l1, blank, l2, ..., blank (U = 2 S + 1), padded with blanks.
    width = 2 * labels.shape[1] + 1
    extended = np.full((batch, width), blank, np.int64)
    extended[:, 1::2] = labels
    used = 2 * lengths_out + 1
    position = np.arange(width)
    # A step from s - 2 is allowed onto a label (odd s) unlike the label two back.
    skip = np.zeros((batch, width), bool)
    skip[:, 3::2] = extended[:, 3::2] != extended[:, 1:-2:2]
    # (T, N, U): each frame's log-probability of each extended label
    emit = array_ops.take_along_axis(lp, _as_int64(np.broadcast_to(extended, (frames, batch, width))), axis=2)
    minus_inf = -float("inf")
    start = np.where(position < np.minimum(2, used)[:, None], 0.0, minus_inf).astype(lp.dtype)
    alpha = elementwise_ops.where(_as_bool(position[None, :] < used[:, None]), emit[0] + start, minus_inf)
    alive = np.arange(frames)[:, None] < lengths_in[None, :]  # (T, N)

    def step(alpha, inputs):
        e, live = inputs
        one_back = shape_ops.pad(alpha[:, :-1], ((0, 0), (1, 0)), constant_values=minus_inf)
        two_back = shape_ops.pad(alpha[:, :-2], ((0, 0), (2, 0)), constant_values=minus_inf)
        two_back = elementwise_ops.where(_as_bool(skip), two_back, minus_inf)
        new = _log_sum_exp3(alpha, one_back, two_back) + e
        return elementwise_ops.where(shape_ops.expand_dims(live, 1), new, alpha), None

    for t in range(1, frames):  # unrolled: control flow ops sit above the op families (see test_layers)
        alpha, _ = step(alpha, (emit[t], _as_bool(alive[t])))
    last = array_ops.take_along_axis(alpha, _as_int64(np.maximum(used - 1, 0)[:, None]), axis=1)[:, 0]
    before = array_ops.take_along_axis(alpha, _as_int64(np.maximum(used - 2, 0)[:, None]), axis=1)[:, 0]
    before = elementwise_ops.where(_as_bool(used > 1), before, minus_inf)
    log_likelihood = _log_sum_exp3(last, before, math_ops.zeros_like(last) + minus_inf)
    log_likelihood = elementwise_ops.where(
        _as_bool(lengths_in > 0), log_likelihood, np.where(lengths_out == 0, 0.0, minus_inf).astype(lp.dtype)
    )
    loss = -log_likelihood
    if zero_infinity:
        infinite = math_ops.equal(loss, float("inf"))
        loss = elementwise_ops.where(infinite, 0.0, loss)
    if reduction == "mean":
        return _rounded(reduce_ops.mean(loss / np.maximum(lengths_out, 1).astype(lp.dtype)), dtype)
    return _rounded(_reduced(loss, reduction, name), dtype)


def _as_int64(values: np.ndarray) -> Tensor:
    return as_tensor(np.asarray(values, np.int64))


def _as_bool(values: np.ndarray) -> Tensor:
    return as_tensor(np.asarray(values, bool))

"""PyTorch's margin and embedding losses (``torch.nn.functional``): ``pairwise_distance``,
``triplet_margin_loss``, ``triplet_margin_with_distance_loss``, ``cosine_embedding_loss``,
``multi_margin_loss``, ``multilabel_margin_loss`` and ``multilabel_soft_margin_loss``, with PyTorch's
signatures, reductions and formulas (``pairwise_distance`` adds ``eps`` to the difference, the hinges have
derivative 1 at their kinks as PyTorch's ``clamp_min``).

Each is an exact composition of other ops (the class indices of the multi-class losses are read with
``take_along_axis`` and compared as tensors), so gradients (to any order), tracing, ``tl.vmap`` and every backend
come from the ops used."""

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
from .._shapes import broadcast_shapes
from ._common import _float_or_float64, _op_type
from .activations import finite_number
from .extra_activations import log_sigmoid
from .loss_functions import _clamped_at_zero, _class_weights, _count, _pair, _reduced, _rounded
from .normalization import _widened


def _shapes(**tensors) -> str:
    return ", ".join(f"{k} shape {tuple(t.shape)} ({t.dtype})" for k, t in tensors.items())


def _norm(v: Tensor, p: float, axis: int) -> Tensor:
    """The ``p``-norm of ``v`` along ``axis`` (``p > 0``, ``inf`` for the largest magnitude)."""
    if p == 2.0:
        return math_ops.sqrt(reduce_ops.sum(v * v, axis=axis))
    if p == 1.0:
        return reduce_ops.sum(math_ops.abs(v), axis=axis)
    if _math.isinf(p):
        return reduce_ops.max(math_ops.abs(v), axis=axis)
    return reduce_ops.sum(math_ops.abs(v) ** p, axis=axis) ** (1.0 / p)


def _norm_order(p, name: str) -> float:
    p = float(p) if not isinstance(p, bool) else _math.nan
    if not p > 0:
        raise ValueError(f"{name}: p must be a number > 0 (inf for the largest magnitude), got {p!r}")
    return p


@_op_type(None, tensors=("x1", "x2"))
def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last axis, the inputs broadcast (PyTorch's ``F.pairwise_distance``:
    ``eps`` is added to the difference, so the distance of equal inputs is ``eps * D ** (1 / p)`` and its
    gradient finite).

    >>> import tensorlib as tl
    >>> tl.nn.pairwise_distance(tl.tensor([[0.0, 0.0]]), tl.tensor([[3.0, 4.0]]), eps=0.0).numpy().tolist()
    [5.0]
    """
    name = "pairwise_distance"
    a, b = _pair(x1, x2, name, ("x1", "x2"))
    p, eps = _norm_order(p, name), finite_number(eps, "eps", name)
    shape = broadcast_shapes(a.shape, b.shape)
    if not shape:
        raise ValueError(f"{name}: the inputs need at least one axis ({_shapes(x1=a, x2=b)})")
    d = _norm(_widened(a) - _widened(b) + eps, p, axis=-1)
    d = shape_ops.expand_dims(d, -1) if keepdim else d
    return _rounded(d, a.dtype)


def _triplet(anchor, positive, negative, name: str) -> tuple:
    a, pos = _pair(anchor, positive, name, ("anchor", "positive"))
    a, neg = _pair(a, negative, name, ("anchor", "negative"))
    pos = pos if pos.dtype == a.dtype else pos.astype(a.dtype)
    if not a.ndim == pos.ndim == neg.ndim:
        raise ValueError(
            f"{name}: anchor, positive and negative must have the same number of dimensions "
            f"({_shapes(anchor=a, positive=pos, negative=neg)})"
        )
    return a, pos, neg


def _triplet_loss(d_ap, d_an, d_pn, margin: float, reduction: str, name: str, dtype) -> Tensor:
    if d_pn is not None:  # swap: the harder of the two negatives' distances
        d_an = math_ops.minimum(d_an, d_pn)
    loss = _clamped_at_zero(margin + d_ap - d_an)
    return _rounded(_reduced(loss, reduction, name), dtype)


@_op_type(None, tensors=("anchor", "positive", "negative"))
def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the :func:`pairwise_distance` (``p``, ``eps``) along the
    last axis, reduced; ``swap=True`` uses ``min(d(a, n), d(p, n))`` (PyTorch's ``F.triplet_margin_loss``).

    >>> import tensorlib as tl
    >>> a, p, n = tl.tensor([[0.0, 0.0]]), tl.tensor([[3.0, 4.0]]), tl.tensor([[1.0, 0.0]])
    >>> float(tl.nn.triplet_margin_loss(a, p, n, eps=0.0))
    5.0
    """
    name = "triplet_margin_loss"
    a, pos, neg = _triplet(anchor, positive, negative, name)
    margin = finite_number(margin, "margin", name)

    def distance(u, v):
        return pairwise_distance(_widened(u), _widened(v), p, eps)

    d_pn = distance(pos, neg) if swap else None
    return _triplet_loss(distance(a, pos), distance(a, neg), d_pn, margin, reduction, name, a.dtype)


@_op_type(None, tensors=("anchor", "positive", "negative"))
def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin: float = 1.0, swap: bool = False, reduction="mean"
) -> Tensor:
    """:func:`triplet_margin_loss` with the distance ``distance_function(u, v)`` (default
    :func:`pairwise_distance`), PyTorch's ``F.triplet_margin_with_distance_loss``.

    >>> import tensorlib as tl
    >>> l1 = lambda u, v: tl.sum(tl.abs(u - v), axis=-1)
    >>> a, p, n = tl.tensor([[0.0, 0.0]]), tl.tensor([[3.0, 4.0]]), tl.tensor([[1.0, 0.0]])
    >>> float(tl.nn.triplet_margin_with_distance_loss(a, p, n, distance_function=l1))
    7.0
    """
    name = "triplet_margin_with_distance_loss"
    a, pos, neg = _triplet(anchor, positive, negative, name)
    margin = finite_number(margin, "margin", name)
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"{name}: distance_function must be callable, got {distance_function!r}")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pn = as_tensor(distance(pos, neg)) if swap else None
    d_ap, d_an = as_tensor(distance(a, pos)), as_tensor(distance(a, neg))
    return _triplet_loss(d_ap, d_an, d_pn, margin, reduction, name, d_ap.dtype)


@_op_type(None, tensors=("input1", "input2", "target"))
def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1 (0 for another
    value), reduced; ``cos`` along the last axis of ``(N, D)`` or ``(D,)`` inputs, as PyTorch's
    ``F.cosine_embedding_loss`` computes it: ``x1 . x2 / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12))``.

    >>> import tensorlib as tl
    >>> x1, x2 = tl.tensor([[1.0, 0.0], [1.0, 0.0]]), tl.tensor([[1.0, 1.0], [1.0, 1.0]])
    >>> tl.nn.cosine_embedding_loss(x1, x2, tl.tensor([1.0, -1.0]), reduction="none").numpy().round(4).tolist()
    [0.2929, 0.7071]
    """
    name = "cosine_embedding_loss"
    a, b, target = as_tensors(input1, input2, target)
    if not 1 <= a.ndim <= 2 or tuple(a.shape) != tuple(b.shape) or target.ndim != a.ndim - 1:
        raise ValueError(
            f"{name}: the inputs must be (N, D) or (D,) of one shape and target (N,) or () "
            f"({_shapes(input1=a, input2=b, target=target)})"
        )
    margin = finite_number(margin, "margin", name)
    a, b = _pair(a, b, name, ("input1", "input2"))
    x1, x2 = _widened(a), _widened(b)
    tiny = 1e-12  # PyTorch's EPSILON: no 0 / 0 for a zero vector
    squares = (reduce_ops.sum(x1 * x1, axis=-1) + tiny) * (reduce_ops.sum(x2 * x2, axis=-1) + tiny)
    cos = reduce_ops.sum(x1 * x2, axis=-1) / math_ops.sqrt(squares)
    loss = elementwise_ops.where(target == 1, 1.0 - cos, 0.0)
    loss = loss + elementwise_ops.where(target == -1, _clamped_at_zero(cos - margin), 0.0)
    return _rounded(_reduced(loss, reduction, name), a.dtype)


def _scores(input, target, name: str) -> tuple:
    """``(x, target, classes)``: the float scores ``(N, C)`` or ``(C,)`` and their integer targets."""
    x = _float_or_float64(input, name, "input")
    target = as_tensor(target)
    if not 1 <= x.ndim <= 2 or x.shape[-1] is None:
        raise ValueError(f"{name}: input must be (N, C) or (C,), C known ({_shapes(input=x, target=target)})")
    if target.dtype.kind not in "iu":
        raise TypeError(f"{name}: target must hold class indices (integers) ({_shapes(input=x, target=target)})")
    return x, target, x.shape[-1]


def _check_classes(target: Tensor, classes, name: str, allowed_low: int) -> None:
    """Eager targets must lie in ``[allowed_low, classes)``: a wrong index would silently read another class."""
    if target.is_symbolic or classes is None:
        return
    values = target.numpy()
    bad = (values < allowed_low) | (values >= classes)
    if bad.any():
        raise ValueError(f"{name}: target holds class indices outside [0, {classes}): {values[bad][:5].tolist()}")


@_op_type(None, tensors=("input", "target", "weight"))
def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss ``sum_{i != y} w[y] max(0, margin - x[y] + x[i]) ** p / C`` of scores ``input``
    ``(N, C)`` (or ``(C,)``) with class indices ``target`` ``(N,)`` (or ``()``), reduced (PyTorch's
    ``F.multi_margin_loss``, ``p`` 1 or 2).

    >>> import tensorlib as tl
    >>> x = tl.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(float(tl.nn.multi_margin_loss(x, tl.tensor([3]))), 4)
    0.325
    """
    name = "multi_margin_loss"
    x, target, classes = _scores(input, target, name)
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError(f"{name}: p must be 1 or 2, got {p!r}")
    if tuple(target.shape) != tuple(x.shape[:-1]):
        raise ValueError(
            f"{name}: target must be input's shape without the class axis ({_shapes(input=x, target=target)})"
        )
    _check_classes(target, classes, name, 0)
    margin = finite_number(margin, "margin", name)
    scores = _widened(x)
    picked = shape_ops.expand_dims(target, -1)
    own = array_ops.take_along_axis(scores, picked, axis=-1)
    hinge = _clamped_at_zero(margin - own + scores)
    hinge = hinge * hinge if p == 2 else hinge
    if weight is not None:
        w = _class_weights(weight, classes, scores.dtype, name)
        hinge = hinge * shape_ops.take(w, picked)
    others = math_ops.not_equal(np.arange(classes), picked)
    loss = reduce_ops.sum(elementwise_ops.where(others, hinge, 0.0), axis=-1) / _count(scores, -1)
    return _rounded(_reduced(loss, reduction, name), x.dtype)


@_op_type(None, tensors=("input", "target"))
def multilabel_margin_loss(input, target, reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss ``sum_{j, i} max(0, 1 - (x[y_j] - x[i])) / C`` over the target classes ``y_j``
    (each row of the integer ``target``, shaped as ``input`` ``(N, C)`` or ``(C,)``, lists them up to its first
    -1) and the classes ``i`` not among them, reduced (PyTorch's ``F.multilabel_margin_loss``).

    >>> import tensorlib as tl
    >>> x = tl.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(float(tl.nn.multilabel_margin_loss(x, tl.tensor([[3, 0, -1, 1]]))), 4)
    0.85
    """
    name = "multilabel_margin_loss"
    x, target, classes = _scores(input, target, name)
    if tuple(target.shape) != tuple(x.shape):
        raise ValueError(f"{name}: target must have input's shape ({_shapes(input=x, target=target)})")
    scores = _widened(x)
    # a target entry counts up to the row's first -1
    listed = math_ops.equal(array_ops.cumsum(math_ops.cast(target == -1, _dt.int64), axis=-1), 0)
    if not target.is_symbolic:
        values, kept = target.numpy(), listed.numpy()
        _check_classes(as_tensor(values[kept]), classes, name, 0)
    safe = elementwise_ops.where(listed, target, 0)
    # is_target[..., i]: class i is listed in the row
    hits = math_ops.logical_and(
        shape_ops.expand_dims(listed, -1),
        math_ops.equal(shape_ops.expand_dims(safe, -1), np.arange(classes)),
    )
    is_target = reduce_ops.any(hits, axis=-2)
    own = array_ops.take_along_axis(scores, safe, axis=-1)  # x[y_j] for each listed j
    hinge = _clamped_at_zero(1.0 - shape_ops.expand_dims(own, -1) + shape_ops.expand_dims(scores, -2))
    counted = math_ops.logical_and(
        shape_ops.expand_dims(listed, -1), math_ops.logical_not(shape_ops.expand_dims(is_target, -2))
    )
    loss = reduce_ops.sum(elementwise_ops.where(counted, hinge, 0.0), axis=(-2, -1)) / _count(scores, -1)
    return _rounded(_reduced(loss, reduction, name), x.dtype)


@_op_type(None, tensors=("input", "target", "weight"))
def multilabel_soft_margin_loss(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """``-mean_c w[c] (y log sigmoid(x) + (1 - y) log sigmoid(-x))`` over the classes (the last axis) of logits
    ``input`` and 0/1 ``target`` of its shape, reduced (PyTorch's ``F.multilabel_soft_margin_loss``), finite for
    logits of any size.

    >>> import tensorlib as tl
    >>> x, y = tl.tensor([[0.0, 2.0]]), tl.tensor([[1.0, 0.0]])
    >>> round(float(tl.nn.multilabel_soft_margin_loss(x, y)), 4)
    1.41
    """
    name = "multilabel_soft_margin_loss"
    x, y = _pair(input, target, name)
    if x.ndim < 1 or tuple(x.shape) != tuple(y.shape):
        raise ValueError(f"{name}: target must have input's shape, with a class axis ({_shapes(input=x, target=y)})")
    logits, labels = _widened(x), _widened(y)
    loss = -(labels * log_sigmoid(logits) + (1.0 - labels) * log_sigmoid(-logits))
    dtype = x.dtype
    if weight is not None:
        w = as_tensors(x, weight)[1]
        try:
            broadcast_shapes(w.shape, x.shape)
        except ValueError:
            raise ValueError(f"{name}: weight does not broadcast to input ({_shapes(input=x, weight=w)})") from None
        loss, dtype = loss * _widened(w), _dt.promote_types(dtype, w.dtype)
    loss = reduce_ops.sum(loss, axis=-1) / _count(logits, -1)
    return _rounded(_reduced(loss, reduction, name), dtype)

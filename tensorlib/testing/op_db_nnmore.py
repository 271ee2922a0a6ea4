"""The catalogue of PyTorch's further ``tl.nn`` functions: the shrink activations, softmin, threshold, rrelu,
softplus' beta and threshold, and the margin and embedding losses.

The references are NumPy formulas in float64 written from PyTorch's documentation (loops over the classes
and samples where PyTorch's definition is a sum over them), cast back to the input's dtype.

>>> from tensorlib.testing.op_db_nnmore import OPINFOS
>>> "nn.triplet_margin_loss" in [info.name for info in OPINFOS]
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from .opinfo import ErrorInput, OpInfo, SampleInput
from .strategies import scalars, shapes, tensors

WITH_HALF = (_dt.float16, _dt.float32, _dt.float64)


def _f64(fn):
    def ref(x, *args, **kwargs):
        return np.asarray(fn(x.astype(np.float64), *args, **kwargs)).astype(x.dtype)

    return ref


def _away(kinks):
    """Elements kept 0.05 from each kink, where the finite differences would straddle it."""
    return lambda v: min(abs(v - k) for k in kinks) > 0.05


def _unary(kinks=(), extra=()):
    def samples(dtype):
        elements = scalars(dtype, -3.0, 3.0).filter(_away(kinks)) if kinks else scalars(dtype, -3.0, 3.0)
        return tensors(dtype, shapes(1, 3), elements).map(lambda x: SampleInput((x, *extra)))

    return samples


def _softplus_ref(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.logaddexp(0.0, beta * x) / beta)


def _softmin_ref(x, axis):
    e = np.exp(-(x - x.min(axis, keepdims=True)))
    return e / e.sum(axis, keepdims=True)


@st.composite
def _softmin_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3)))
    return SampleInput((x, draw(st.integers(-x.ndim, x.ndim - 1))))


def _activation_entries():
    entries = [
        OpInfo(
            "nn.hardshrink",
            tl.nn.hardshrink,
            _f64(lambda x, lambd: np.where(np.abs(x) > lambd, x, 0.0)),
            _unary((-0.7, 0.7), (0.7,)),
            ("Select", "Abs"),
            kinks=True,
        ),
        OpInfo(
            "nn.softshrink",
            tl.nn.softshrink,
            _f64(lambda x, lambd: np.sign(x) * np.maximum(np.abs(x) - lambd, 0.0)),
            _unary((-0.7, 0.7), (0.7,)),
            ("Select", "Abs"),
            kinks=True,
            error_inputs=(ErrorInput((np.ones(2), -1.0), exc=ValueError, match=r"^softshrink: lambd must be >= 0"),),
        ),
        OpInfo("nn.tanhshrink", tl.nn.tanhshrink, _f64(lambda x: x - np.tanh(x)), _unary(), ("Tanh", "Sub")),
        OpInfo("nn.softmin", tl.nn.softmin, _f64(_softmin_ref), _softmin_draw, ("Softmax", "Neg")),
        OpInfo(
            "nn.threshold",
            tl.nn.threshold,
            _f64(lambda x, t, v: np.where(x > t, x, v)),
            _unary((0.25,), (0.25, -4.0)),
            ("Select",),
            kinks=True,
        ),
        OpInfo(
            "nn.rrelu",
            tl.nn.rrelu,
            _f64(lambda x, lower, upper: np.where(x > 0, x, x * (lower + upper) / 2)),
            _unary((0.0,), (0.1, 0.3)),
            ("LeakyRelu",),
            kinks=True,
            error_inputs=(
                ErrorInput((np.ones(2), 0.5, 0.1), exc=ValueError, match=r"^rrelu: need 0 <= lower <= upper"),
            ),
        ),
        OpInfo(
            "nn.softplus(beta, threshold)",
            tl.nn.softplus,
            _f64(_softplus_ref),
            _unary((1.0,), (2.0, 2.0)),
            ("Softplus", "Select"),
            kinks=True,
            error_inputs=(ErrorInput((np.ones(2), 0.0, 1.0), exc=ValueError, match=r"^Softplus: beta must not be 0"),),
        ),
    ]
    for entry in entries:
        entry.dtypes = WITH_HALF
    return entries


# ---------------------------------------------------------------- margin and embedding losses
def _distance_ref(u, v, p, eps):
    d = u - v + eps
    if np.isinf(p):
        return np.abs(d).max(-1)
    return (np.abs(d) ** p).sum(-1) ** (1.0 / p)


@st.composite
def _triplet_draw(draw, dtype):
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    shape = draw(st.sampled_from([(n, d), (d,)]))
    # positive and negative kept 0.25 or more from the anchor in each coordinate, and from each other: a norm has
    # a kink at a zero difference, where finite differences straddle it
    a = draw(tensors(dtype, shape, min_value=-2.0, max_value=2.0))
    pos, neg = (a + draw(tensors(dtype, shape, min_value=0.25, max_value=1.0)) * sign for sign in (1, -1))
    p = draw(st.sampled_from([1.0, 2.0, 3.0]))
    return SampleInput((a, pos, neg, draw(st.sampled_from([0.5, 1.0])), p, 1e-6, draw(st.booleans()), "none"))


def _triplet_ref(a, pos, neg, margin, p, eps, swap, reduction):
    u, v, w = (t.astype(np.float64) for t in (a, pos, neg))
    d_an = _distance_ref(u, w, p, eps)
    if swap:
        d_an = np.minimum(d_an, _distance_ref(v, w, p, eps))
    return np.maximum(margin + _distance_ref(u, v, p, eps) - d_an, 0.0).astype(a.dtype)


@st.composite
def _pairwise_draw(draw, dtype):
    x1 = draw(tensors(dtype, shapes(1, 3, max_side=4), min_value=-2.0, max_value=2.0))
    x2 = x1 - draw(tensors(dtype, x1.shape, min_value=0.25, max_value=1.0))  # no zero difference: a kink
    return SampleInput((x1, x2, draw(st.sampled_from([1.0, 2.0, 3.0])), 1e-6))


@st.composite
def _cosine_embedding_draw(draw, dtype):
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    x1, x2 = (draw(tensors(dtype, (n, d), min_value=0.5, max_value=2.0)) for _ in range(2))
    target = np.array(draw(st.lists(st.sampled_from([1, -1]), min_size=n, max_size=n)), np.int64)
    return SampleInput((x1, x2, target, -1.0, "none"), grad_argnums=(0, 1))


def _cosine_embedding_ref(x1, x2, target, margin, reduction):
    a, b = x1.astype(np.float64), x2.astype(np.float64)
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))
    return np.where(target == 1, 1 - cos, np.maximum(cos - margin, 0.0)).astype(x1.dtype)


@st.composite
def _multi_margin_draw(draw, dtype):
    n, c = draw(st.integers(1, 3)), draw(st.integers(2, 4))
    x = draw(tensors(dtype, (n, c), min_value=-2.0, max_value=2.0))
    target = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), np.int64)
    weight = draw(st.none() | tensors(dtype, (c,), min_value=0.5, max_value=2.0))
    return SampleInput((x, target, draw(st.sampled_from([1, 2])), 1.0, weight, "none"), grad_argnums=(0,))


def _multi_margin_ref(x, target, p, margin, weight, reduction):
    s = x.astype(np.float64)
    loss = np.zeros(len(s))
    for k, (row, y) in enumerate(zip(s, target)):
        w = 1.0 if weight is None else float(weight[y])
        loss[k] = sum(w * max(0.0, margin - row[y] + row[i]) ** p for i in range(len(row)) if i != y) / len(row)
    return loss.astype(x.dtype)


@st.composite
def _multilabel_draw(draw, dtype):
    n, c = draw(st.integers(1, 3)), draw(st.integers(2, 4))
    x = draw(tensors(dtype, (n, c), min_value=-2.0, max_value=2.0))
    target = np.array(draw(st.lists(st.lists(st.integers(-1, c - 1), min_size=c, max_size=c), min_size=n, max_size=n)))
    return SampleInput((x, target.astype(np.int64), "none"), grad_argnums=(0,))


def _multilabel_ref(x, target, reduction):
    s = x.astype(np.float64)
    loss = np.zeros(len(s))
    for k, (row, t) in enumerate(zip(s, target)):
        listed = list(t[: list(t).index(-1)] if -1 in t else t)
        others = [i for i in range(len(row)) if i not in listed]
        loss[k] = sum(max(0.0, 1 - (row[j] - row[i])) for j in listed for i in others) / len(row)
    return loss.astype(x.dtype)


@st.composite
def _multilabel_soft_draw(draw, dtype):
    x = draw(tensors(dtype, shapes(1, 3), min_value=-20.0, max_value=20.0))
    y = draw(tensors(dtype, x.shape, st.sampled_from([0.0, 1.0])))
    weight = draw(st.none() | tensors(dtype, x.shape[-1:], min_value=0.5, max_value=2.0))
    return SampleInput((x, y, weight, "none"), grad_argnums=(0,))


def _multilabel_soft_ref(x, y, weight, reduction):
    s, t = x.astype(np.float64), y.astype(np.float64)
    loss = t * np.logaddexp(0.0, -s) + (1 - t) * np.logaddexp(0.0, s)
    loss = loss if weight is None else loss * weight
    return (loss.sum(-1) / x.shape[-1]).astype(x.dtype)


def _loss_entries():
    return [
        OpInfo(
            "nn.pairwise_distance",
            tl.nn.pairwise_distance,
            lambda x1, x2, p, eps: _distance_ref(x1.astype(np.float64), x2.astype(np.float64), p, eps).astype(x1.dtype),
            _pairwise_draw,
            ("Sub", "Abs", "Sum", "Pow"),
            error_inputs=(
                ErrorInput((np.ones(2), np.ones(2), -1.0), exc=ValueError, match=r"^pairwise_distance: p must be"),
            ),
        ),
        OpInfo(
            "nn.triplet_margin_loss",
            tl.nn.triplet_margin_loss,
            _triplet_ref,
            _triplet_draw,
            ("Sub", "Sqrt", "Sum", "Select", "Minimum"),
            kinks=True,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones(3), np.ones((2, 3))),
                    exc=ValueError,
                    match=r"^triplet_margin_loss: anchor, positive and negative must have the same number",
                ),
            ),
        ),
        OpInfo(
            "nn.triplet_margin_with_distance_loss",
            lambda a, pos, neg, margin, p, eps, swap, reduction: tl.nn.triplet_margin_with_distance_loss(
                a,
                pos,
                neg,
                distance_function=lambda u, v: tl.nn.pairwise_distance(u, v, p, eps),
                margin=margin,
                swap=swap,
                reduction=reduction,
            ),
            _triplet_ref,
            _triplet_draw,
            ("Sub", "Sum", "Select"),
            kinks=True,
        ),
        OpInfo(
            "nn.cosine_embedding_loss",
            tl.nn.cosine_embedding_loss,
            _cosine_embedding_ref,
            _cosine_embedding_draw,
            ("Mul", "Sum", "Sqrt", "Select"),
            kinks=True,
            error_inputs=(
                ErrorInput(
                    (np.ones((2, 3)), np.ones((2, 4)), np.ones(2)),
                    exc=ValueError,
                    match=r"^cosine_embedding_loss: the inputs must be \(N, D\) or \(D,\) of one shape",
                ),
            ),
        ),
        OpInfo(
            "nn.multi_margin_loss",
            tl.nn.multi_margin_loss,
            _multi_margin_ref,
            _multi_margin_draw,
            ("GatherV2", "Select", "Sum"),
            kinks=True,
            error_inputs=(
                ErrorInput((np.ones((2, 3)), np.array([0, 3])), exc=ValueError, match=r"^multi_margin_loss: target"),
                ErrorInput((np.ones((2, 3)), np.array([0, 1]), 3), exc=ValueError, match=r"^multi_margin_loss: p must"),
            ),
        ),
        OpInfo(
            "nn.multilabel_margin_loss",
            tl.nn.multilabel_margin_loss,
            _multilabel_ref,
            _multilabel_draw,
            ("Cumsum", "Any", "Select", "Sum"),
            kinks=True,
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 3)), np.array([[0, 3, -1]])), exc=ValueError, match=r"^multilabel_margin_loss: target"
                ),
            ),
        ),
        OpInfo(
            "nn.multilabel_soft_margin_loss",
            tl.nn.multilabel_soft_margin_loss,
            _multilabel_soft_ref,
            _multilabel_soft_draw,
            ("LogSigmoid", "Sum"),
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 3)), np.ones((1, 1))),
                    exc=ValueError,
                    match=r"^multilabel_soft_margin_loss: target must have input's shape",
                ),
            ),
        ),
    ]


OPINFOS = _activation_entries() + _loss_entries()

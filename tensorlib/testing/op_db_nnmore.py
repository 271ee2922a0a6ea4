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


# ---------------------------------------------------------------- PyTorch's pool options, max_unpool, lp_pool
def _out_size(n, k, s, p, d, ceil):
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    return out - 1 if ceil and (out - 1) * s >= n + p else out


def torch_pool_ref(x, kind, k, s, p, d=1, ceil=False, include=True, divisor=None, first=True):
    """PyTorch's pools by their definition, one output cell at a time (channels first, or last): windows start
    at ``o * s - p``, taps ``d`` apart; a max over the cells inside the input (the first maximum, or the last
    NaN, with its flat index); an average's sum over them divided by the window clipped to the padded input
    (``include``) or to the input, or by ``divisor``."""
    y = x.astype(np.float64) if first else np.moveaxis(x.astype(np.float64), -1, 1)
    sizes = y.shape[2:]
    outs = [_out_size(n, k, s, p, d, ceil) for n in sizes]
    values, indices = np.zeros(y.shape[:2] + tuple(outs)), np.zeros(y.shape[:2] + tuple(outs), np.int64)
    for cell in np.ndindex(*outs):
        starts = [o * s - p for o in cell]
        taps = [[st + j * d for j in range(k) if 0 <= st + j * d < n] for st, n in zip(starts, sizes)]
        block = y[(slice(None), slice(None), *np.ix_(*taps))].reshape(y.shape[:2] + (-1,))
        flat = np.ravel_multi_index(np.ix_(*taps), sizes).ravel()
        if kind == "max":
            nan = np.isnan(block)
            pick = np.where(nan.any(-1), block.shape[-1] - 1 - np.argmax(nan[..., ::-1], -1), np.argmax(block, -1))
            values[(slice(None), slice(None), *cell)] = np.take_along_axis(block, pick[..., None], -1)[..., 0]
            indices[(slice(None), slice(None), *cell)] = flat[pick]
            continue
        if divisor is None:
            ends = [min(st + k, n + p) for st, n in zip(starts, sizes)]
            count = np.prod([e - st for st, e in zip(starts, ends)]) if include else np.prod([len(t) for t in taps])
        else:
            count = divisor
        values[(slice(None), slice(None), *cell)] = block.sum(-1) / count
    if not first:
        values, indices = np.moveaxis(values, 1, -1), np.moveaxis(indices, 1, -1)
    return values.astype(x.dtype), indices


_POOLS = {1: ("avg_pool1d", "max_pool1d"), 2: ("avg_pool", "max_pool"), 3: ("avg_pool3d", "max_pool3d")}
_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


@st.composite
def _pool_geometry(draw, dtype, dilated):
    rank = draw(st.integers(1, 3))
    k = draw(st.integers(1, 3))
    d = draw(st.integers(1, 2)) if dilated else 1
    p = draw(st.integers(0, (d * (k - 1) + 1) // 2))
    s = draw(st.integers(1, 3))
    n_min = d * (k - 1) + 1  # every window then holds an input cell
    sizes = tuple(draw(st.integers(n_min, n_min + 3)) for _ in range(rank))
    first = draw(st.booleans())
    shape = (draw(st.integers(1, 2)),) + ((2,) + sizes if first else sizes + (2,))
    x = draw(tensors(dtype, shape, st.integers(-50, 50).map(float)))  # distinct-ish values: few ties
    x = x + np.arange(x.size).reshape(x.shape).astype(dtype) * dtype.type(0.01)
    return rank, x, k, s, p, d, draw(st.booleans()), first


@st.composite
def _avg_options_draw(draw, dtype):
    rank, x, k, s, p, _, ceil, first = draw(_pool_geometry(dtype, False))
    divisor = draw(st.none() | st.integers(1, 5))
    return SampleInput((x, rank, k, s, p, ceil, draw(st.booleans()), divisor, first))


def _avg_options(x, rank, k, s, p, ceil, include, divisor, first):
    fn = getattr(tl.nn, _POOLS[rank][0])
    options = {"ceil_mode": ceil, "count_include_pad": include, "divisor_override": divisor}
    return fn(x, k, s, p, _FORMATS[rank][first], **options)


def _avg_options_ref(x, rank, k, s, p, ceil, include, divisor, first):
    return torch_pool_ref(x, "avg", k, s, p, 1, ceil, include, divisor, first)[0]


@st.composite
def _max_options_draw(draw, dtype):
    rank, x, k, s, p, d, ceil, first = draw(_pool_geometry(dtype, True))
    return SampleInput((x, rank, k, s, p, d, ceil, first))


def _max_options(x, rank, k, s, p, d, ceil, first):
    fn = getattr(tl.nn, _POOLS[rank][1])
    return fn(x, k, s, p, _FORMATS[rank][first], dilations=d, ceil_mode=ceil, return_indices=True)


def _max_options_ref(x, rank, k, s, p, d, ceil, first):
    return torch_pool_ref(x, "max", k, s, p, d, ceil, first=first)


@st.composite
def _unpool_draw(draw, dtype):
    rank, x, k, _, _, _, _, first = draw(_pool_geometry(dtype, False))
    spatial = range(2, 2 + rank) if first else range(1, 1 + rank)
    x = x[tuple(slice(0, x.shape[a] // k * k) if a in spatial else slice(None) for a in range(x.ndim))]
    values, indices = torch_pool_ref(x, "max", k, k, 0, first=first)  # non-overlapping windows tiling x
    return SampleInput((values, indices, k, None, 0, _FORMATS[rank][first]), grad_argnums=(0,))


def _unpool_ref(values, indices, k, strides, padding, data_format):
    first = data_format[1] == "C"
    v, i = (values, indices) if first else (np.moveaxis(values, -1, 1), np.moveaxis(indices, -1, 1))
    sizes = tuple(n * k for n in v.shape[2:])
    out = np.zeros(v.shape[:2] + (int(np.prod(sizes)),), values.dtype)
    np.put_along_axis(out, i.reshape(v.shape[:2] + (-1,)), v.reshape(v.shape[:2] + (-1,)), axis=2)
    out = out.reshape(v.shape[:2] + sizes)
    return out if first else np.moveaxis(out, 1, -1)


@st.composite
def _lp_draw(draw, dtype):
    rank, x, k, s, _, _, ceil, first = draw(_pool_geometry(dtype, False))
    x = np.abs(x) + dtype.type(0.5)
    return SampleInput((x, draw(st.sampled_from([1.0, 2.0, 3.0])), k, s, ceil, _FORMATS[rank][first]))


def _lp_ref(x, norm, k, s, ceil, data_format):
    first = data_format[1] == "C"
    powered = x.astype(np.float64) ** norm
    average = torch_pool_ref(powered, "avg", k, s, 0, 1, ceil, True, None, first)[0]
    return ((average * k ** (x.ndim - 2)) ** (1 / norm)).astype(x.dtype)


def _pool_entries():
    return [
        OpInfo(
            "nn.avg_pool(ceil_mode, count_include_pad, divisor_override)",
            _avg_options,
            _avg_options_ref,
            _avg_options_draw,
            ("PadV2", "AvgPool", "GatherV2", "Sum", "Mul"),
            atol=1e-5,
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 1, 4, 4)), 2, 3, 1, 1, False, None, None, True),
                    exc=ValueError,
                    match=r"^AvgPool: explicit padding 1 needs count_include_pad=True",
                ),
            ),
        ),
        OpInfo(
            "nn.max_pool(dilations, ceil_mode, return_indices)",
            _max_options,
            _max_options_ref,
            _max_options_draw,
            ("PadV2", "GatherV2", "TakeAlongAxis", "Transpose"),
            kinks=True,
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 1, 4, 4)), 2, 2, 1, 2, 1, False, True),
                    exc=ValueError,
                    match=r"^MaxPool: each padding must be smaller than the window 2",
                ),
            ),
        ),
        OpInfo(
            "nn.max_unpool",
            tl.nn.max_unpool,
            _unpool_ref,
            _unpool_draw,
            ("Reshape", "ScatterNdUpdate", "GatherNd"),
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 1, 2)), np.array([[[0, 9]]]), 2, None, 0, "NCW"),
                    exc=ValueError,
                    match=r"^max_unpool: indices must lie in \[0, 4\)",
                ),
            ),
        ),
        OpInfo(
            "nn.lp_pool",
            tl.nn.lp_pool,
            _lp_ref,
            _lp_draw,
            ("Pow", "AvgPool", "Mul"),
            atol=1e-5,
            error_inputs=(
                ErrorInput((np.ones((1, 4, 1)), 0.0, 2), exc=ValueError, match=r"^lp_pool: norm_type must be"),
            ),
        ),
    ]


@st.composite
def _pixel_draw(draw, dtype):
    r = draw(st.integers(1, 3))
    c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    fmt = draw(st.sampled_from(["NHWC", "NCHW"]))
    shape = (draw(st.integers(1, 2)), c * r * r, h, w) if fmt == "NCHW" else (1, h, w, c * r * r)
    return SampleInput((draw(tensors(dtype, shape)), r, fmt))


def _pixel_ref(x, r, fmt):
    y = x if fmt == "NCHW" else np.moveaxis(x, -1, 1)
    n, c, h, w = y.shape
    y = y.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // (r * r), h * r, w * r)
    return y if fmt == "NCHW" else np.moveaxis(y, 1, -1)


def _unpixel_ref(x, r, fmt):
    y = x if fmt == "NCHW" else np.moveaxis(x, -1, 1)
    n, c, h, w = y.shape
    y = y.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4).reshape(n, c * r * r, h // r, w // r)
    return y if fmt == "NCHW" else np.moveaxis(y, 1, -1)


@st.composite
def _unpixel_draw(draw, dtype):
    x, r, fmt = draw(_pixel_draw(dtype)).args
    return SampleInput((_pixel_ref(x, r, fmt), r, fmt))


@st.composite
def _lrn_draw(draw, dtype):
    x = draw(tensors(dtype, (draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(1, 3)))))
    return SampleInput((x, draw(st.integers(1, 4)), 0.5, 0.75, 1.0))


def _lrn_ref(x, size, alpha, beta, k):
    y = x.astype(np.float64)
    channels = y.shape[1]
    out = np.empty_like(y)
    for c in range(channels):
        near = range(max(0, c - size // 2), min(channels, c + (size - 1) // 2 + 1))
        out[:, c] = y[:, c] / (k + alpha / size * sum(y[:, j] ** 2 for j in near)) ** beta
    return out.astype(x.dtype)


@st.composite
def _unfold_draw(draw, dtype):
    k, d, p, s = (draw(st.integers(1, 2)) for _ in range(4))
    p = min(p, k - 1)
    h, w = (draw(st.integers(d * (k - 1) + 1, d * (k - 1) + 3)) for _ in range(2))
    x = draw(tensors(dtype, (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w)))
    return SampleInput((x, k, d, p, s))


def _unfold_ref(x, k, d, p, s):
    padded = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)])
    oh, ow = ((n + 2 * p - d * (k - 1) - 1) // s + 1 for n in x.shape[2:])
    rows = [
        padded[:, :, i * d : i * d + s * (oh - 1) + 1 : s, j * d : j * d + s * (ow - 1) + 1 : s]
        for i in range(k)
        for j in range(k)
    ]
    return np.stack(rows, 2).reshape(x.shape[0], -1, oh * ow)


@st.composite
def _fold_draw(draw, dtype):
    x, k, d, p, s = draw(_unfold_draw(dtype)).args
    return SampleInput((_unfold_ref(x, k, d, p, s), x.shape[2:], k, d, p, s))


def _fold_ref(columns, output_size, k, d, p, s):
    h, w = output_size
    oh, ow = ((n + 2 * p - d * (k - 1) - 1) // s + 1 for n in output_size)
    image = np.zeros((columns.shape[0], columns.shape[1] // (k * k), h + 2 * p, w + 2 * p), columns.dtype)
    blocks = columns.reshape(columns.shape[0], -1, k, k, oh, ow)
    for i in range(k):
        for j in range(k):
            image[:, :, i * d : i * d + s * (oh - 1) + 1 : s, j * d : j * d + s * (ow - 1) + 1 : s] += blocks[
                :, :, i, j
            ]
    return image[:, :, p : p + h, p : p + w]


@st.composite
def _fractional_draw(draw, dtype):
    h, w, kh, kw = (draw(st.integers(1, 3)) for _ in range(4))
    h, w = h + kh, w + kw
    oh, ow = draw(st.integers(1, h - kh + 1)), draw(st.integers(1, w - kw + 1))
    x = draw(tensors(dtype, (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w), st.integers(-50, 50).map(float)))
    x = x + np.arange(x.size).reshape(x.shape).astype(dtype) * dtype.type(0.01)  # no ties
    samples = draw(tensors(dtype, x.shape[:2] + (2,), min_value=0.0, max_value=0.99))
    return SampleInput((x, (kh, kw), (oh, ow), None, False, samples, "NCHW"))


def _fractional_ref(x, kernel_size, output_size, output_ratio, return_indices, samples, data_format):
    (kh, kw), (oh, ow) = kernel_size, output_size
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow), x.dtype)

    def starts(size, k, count, u):
        if count == 1:
            return [size - k]
        alpha = x.dtype.type(size - k) / x.dtype.type(count - 1)
        return [int((x.dtype.type(i) + u) * alpha) - int(u * alpha) for i in range(count - 1)] + [size - k]

    for a in range(n):
        for b in range(c):
            rows, cols = starts(h, kh, oh, samples[a, b, 1]), starts(w, kw, ow, samples[a, b, 0])
            for i, r in enumerate(rows):
                for j, q in enumerate(cols):
                    out[a, b, i, j] = x[a, b, r : r + kh, q : q + kw].max()
    return out


def _reshape_entries():
    return [
        OpInfo("nn.pixel_shuffle", tl.nn.pixel_shuffle, _pixel_ref, _pixel_draw, ("Reshape", "Transpose")),
        OpInfo(
            "nn.fractional_max_pool2d",
            tl.nn.fractional_max_pool2d,
            _fractional_ref,
            _fractional_draw,
            ("TakeAlongAxis", "Reshape"),
            kinks=True,
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 1, 3, 3)), 2, 3, None, False, np.zeros((1, 1, 2)), "NCHW"),
                    exc=ValueError,
                    match=r"^fractional_max_pool2d: output_size \(3, 3\) \+ kernel_size \(2, 2\) - 1 exceeds",
                ),
            ),
        ),
        OpInfo("nn.unfold", tl.nn.unfold, _unfold_ref, _unfold_draw, ("PadV2", "GatherV2", "Transpose", "Reshape")),
        OpInfo(
            "nn.fold",
            tl.nn.fold,
            _fold_ref,
            _fold_draw,
            ("GatherNdGrad", "Transpose", "StridedSlice"),
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 5, 4)), (3, 3), 2), exc=ValueError, match=r"^fold: input must be \(N, C \* 4, 4\)"
                ),
            ),
        ),
        OpInfo("nn.pixel_unshuffle", tl.nn.pixel_unshuffle, _unpixel_ref, _unpixel_draw, ("Reshape", "Transpose")),
        OpInfo(
            "nn.local_response_norm",
            tl.nn.local_response_norm,
            _lrn_ref,
            _lrn_draw,
            ("PadV2", "GatherV2", "Sum", "Pow", "Div"),
            error_inputs=(
                ErrorInput(
                    (np.ones((1, 3)), 0), exc=ValueError, match=r"^local_response_norm: size must be a positive"
                ),
            ),
        ),
    ]


OPINFOS = _activation_entries() + _loss_entries() + _pool_entries() + _reshape_entries()

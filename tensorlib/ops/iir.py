"""The recursive (IIR) part of a linear filter: one op, ``AllPoleFilter``, under ``tl.signal.lfilter``.

``AllPoleFilter(a, v)`` solves ``a[0] y[n] + a[1] y[n-1] + ... + a[p] y[n-p] = v[n]`` along the last axis of
``v`` (zero before the start): ``y = v / A(z)``.  The numerator, the initial state and the final state of
``lfilter`` are convolutions, written with other ops in ``tl.signal``.

Gradients, with ``A`` the lower-triangular Toeplitz matrix of ``a`` (``y = A^-1 v``):

- ``v``: ``A^-T g``, the same filter run backwards (``A^T`` is upper triangular with the same diagonals):
  ``flip(AllPoleFilter(a, flip(g)))``;
- ``a[k]``: ``dy = -A^-1 (dA) y``, so ``-sum_n w[n] y[n - k]`` with ``w = A^-T g``: a correlation.

Both are tensorlib ops, so higher orders, tracing and vmap come with them.
"""

from __future__ import annotations

import math

from ..dispatch import apply
from ..grad.registry import register_gradient
from .registry import defop, spec


def _all_pole_infer(a, v):
    if a.dtype.kind != "f" or v.dtype != a.dtype:
        raise TypeError(f"expected a and v of one floating dtype, got {a.dtype} and {v.dtype}")
    if len(a.shape) != 1 or a.shape[0] in (None, 0):
        raise ValueError(f"a must be one-dimensional, of known nonzero length, got shape {tuple(a.shape)}")
    if len(v.shape) == 0:
        raise ValueError("v must have at least one axis, got a scalar")
    return spec(v.shape, v.dtype)


_all_pole = defop(
    "AllPoleFilter",
    inputs=("a", "v"),
    infer=_all_pole_infer,
    doc="y along v's last axis with a[0] y[n] + ... + a[p] y[n-p] = v[n] (zero initial state): v / A(z).",
)


def _block_length(n: int) -> int:
    """Samples per block: the kernel's Python steps are ``L`` (the block's responses) plus ``n / L`` (the
    blocks), fewest near ``sqrt(n)``; at most 128, where a block's ``L x L`` product starts to cost more
    than the steps it saves (measured on a 4th-order filter: 100000 samples take 8 ms, 1.6 s one sample
    at a time)."""
    return max(1, min(n, 128, math.isqrt(n) + 1))


@_all_pole.generic
def _all_pole_kernel(xp, a, v):
    """Blocks of ``L`` samples at a time, exactly: a block's outputs are the block's inputs filtered from rest
    (the lower-triangular Toeplitz matrix of the impulse response ``h``) plus the response to the ``p`` outputs
    before it (``L x p``), both computed once by running the recursion over one block."""
    if bool(a[0] == 0):
        raise ValueError(f"AllPoleFilter: a[0] == 0 leaves the recursion undefined (a shape {a.shape}, {a.dtype})")
    tail = xp.flip(a[1:] / a[0], axis=0)  # tail[-k] multiplies y[n - k]
    order, length = tail.shape[0], v.shape[-1]
    if order == 0 or length == 0:
        return v / a[0]
    rows = xp.moveaxis(v / a[0], -1, 0)
    flat = xp.reshape(rows, (length, -1))
    block = _block_length(length)
    # Row order + i: the response at step i to an impulse (column 0) and to y[-1 - j] = 1 (column 1 + j).
    response = xp.zeros((order + block, 1 + order), dtype=flat.dtype)
    for j in range(order):
        response[order - 1 - j, 1 + j] = 1
    response[order, 0] = 1
    for i in range(block):
        response[order + i, ...] = response[order + i, ...] - tail @ response[i : order + i, ...]
    impulse, from_past = response[order:, 0], response[order:, 1:]
    toeplitz = xp.zeros((block, block), dtype=flat.dtype)
    for j in range(block):
        toeplitz[j:, j] = impulse[: block - j]
    y = xp.zeros(flat.shape, dtype=flat.dtype)
    past = xp.zeros((order, flat.shape[1]), dtype=flat.dtype)  # the outputs before the block, newest first
    for start in range(0, length, block):
        m = min(block, length - start)
        out = toeplitz[:m, :m] @ flat[start : start + m, ...] + from_past[:m, ...] @ past
        y[start : start + m, ...] = out
        newest = xp.flip(out[max(0, m - order) :, ...], axis=0)
        past = newest if m >= order else xp.concat([newest, past[: order - m, ...]], axis=0)
    return xp.moveaxis(xp.reshape(y, rows.shape), 0, -1)


def all_pole_filter(a, v):
    """``v / A(z)`` along the last axis of ``v`` (``a`` and ``v`` of one float dtype): the op, for
    ``tl.signal.lfilter``."""
    return apply(_all_pole, (a, v), {})


def _v_grad(node, g):
    from .array import flip

    return flip(all_pole_filter(node.inputs[0], flip(g, -1)), -1)


def _a_grad(node, g):
    from .reduce import sum as reduce_sum
    from .shape import stack

    w, y = _v_grad(node, g), node.outputs[0]
    terms = [reduce_sum(w[..., k:] * (y[..., :-k] if k else y)) for k in range(node.inputs[0].shape[0])]
    return -stack(terms)


register_gradient("AllPoleFilter", a=_a_grad, v=_v_grad)

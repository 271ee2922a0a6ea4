"""A linear filter's two parts, one op each, under ``tl.signal.lfilter``: ``FirFilter`` (the numerator) and
``AllPoleFilter`` (the recursion).

``FirFilter(b, x)`` is ``sum_k b[k] x[n - k]`` along the last axis of ``x`` (zero before the start), cut to
``x``'s length: ``B(z) x``.  ``AllPoleFilter(a, v)`` solves ``a[0] y[n] + a[1] y[n-1] + ... + a[p] y[n-p] = v[n]``
along the last axis of ``v`` (zero before the start): ``y = v / A(z)``.  The initial state and the final state
of ``lfilter`` are written with these and other ops in ``tl.signal``.  On NumPy both kernels are
``scipy.signal.lfilter`` when SciPy is importable (its C loop: the blocked kernel below, the one without SciPy
and on other backends, costs 10 to 80 times more); ``tl.vmap`` batches both (over ``x`` / ``v``; mapped
coefficients run once per element).

Gradients, with ``A`` the lower-triangular Toeplitz matrix of ``a`` (``y = A^-1 v``):

- ``v``: ``A^-T g``, the same filter run backwards (``A^T`` is upper triangular with the same diagonals):
  ``flip(AllPoleFilter(a, flip(g)))``;
- ``a[k]``: ``dy = -A^-1 (dA) y``, so ``-sum_n w[n] y[n - k]`` with ``w = A^-T g``: a correlation.

and for ``FirFilter(b, x)``, whose matrix ``B`` is lower-triangular Toeplitz too:

- ``x``: ``B^T g``, ``flip(FirFilter(b, flip(g)))``;
- ``b[k]``: ``sum_n g[n] x[n - k]``.

All are tensorlib ops, so higher orders, tracing and vmap come with them.
"""

from __future__ import annotations

import math

import numpy as np

from ..dispatch import apply
from ..grad.registry import register_gradient
from .registry import defop, spec


def _filter_infer(coefficients: str, signal: str):
    def infer(c, v):
        if c.dtype.kind != "f" or v.dtype != c.dtype:
            raise TypeError(f"expected {coefficients} and {signal} of one floating dtype, got {c.dtype} and {v.dtype}")
        if len(c.shape) != 1 or c.shape[0] in (None, 0):
            raise ValueError(
                f"{coefficients} must be one-dimensional, of known nonzero length, got shape {tuple(c.shape)}"
            )
        if len(v.shape) == 0:
            raise ValueError(f"{signal} must have at least one axis, got a scalar")
        return spec(v.shape, v.dtype)

    return infer


_all_pole = defop(
    "AllPoleFilter",
    inputs=("a", "v"),
    infer=_filter_infer("a", "v"),
    doc="y along v's last axis with a[0] y[n] + ... + a[p] y[n-p] = v[n] (zero initial state): v / A(z).",
)
_fir = defop(
    "FirFilter",
    inputs=("b", "x"),
    infer=_filter_infer("b", "x"),
    doc="sum_k b[k] x[n - k] along x's last axis (zero before the start), cut to x's length: B(z) x.",
)


def _scipy_lfilter():
    """``scipy.signal.lfilter``, or None without SciPy (the kernels then run their own loops)."""
    try:
        from scipy.signal import lfilter
    except ImportError:
        return None
    return lfilter


def _scipy_runs(v) -> bool:
    """Whether ``scipy.signal.lfilter`` computes in ``v``'s dtype (float16 it refuses)."""
    return v.dtype in (np.float32, np.float64) and v.size > 0


def _block_length(n: int) -> int:
    """Samples per block: the kernel's Python steps are ``L`` (the block's responses) plus ``n / L`` (the
    blocks), fewest near ``sqrt(n)``; at most 128, where a block's ``L x L`` product starts to cost more
    than the steps it saves (measured on a 4th-order filter: 100000 samples take 8 ms, 1.6 s one sample
    at a time)."""
    return max(1, min(n, 128, math.isqrt(n) + 1))


def _refuse_leading_zero(a, op: str = "AllPoleFilter"):
    if bool(a[0] == 0):
        raise ValueError(f"{op}: a[0] == 0 leaves the recursion undefined (a shape {a.shape}, {a.dtype})")


@_all_pole.kernel("numpy")
def _all_pole_numpy(a, v):
    lfilter = _scipy_lfilter()
    if lfilter is None or not _scipy_runs(v):
        return _all_pole_kernel(np, a, v)
    _refuse_leading_zero(a)
    return lfilter(np.ones(1, v.dtype), a, v, axis=-1)


@_all_pole.generic
def _all_pole_kernel(xp, a, v):
    """Blocks of ``L`` samples at a time, exactly: a block's outputs are the block's inputs filtered from rest
    (the lower-triangular Toeplitz matrix of the impulse response ``h``) plus the response to the ``p`` outputs
    before it (``L x p``), both computed once by running the recursion over one block."""
    _refuse_leading_zero(a)
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


@_fir.kernel("numpy")
def _fir_numpy(b, x):
    lfilter = _scipy_lfilter()
    if lfilter is None or not _scipy_runs(x):
        return _fir_kernel(np, b, x)
    n = x.shape[-1]
    if x.size == n:  # one signal: np.convolve, 2 to 8 times faster than SciPy's loop (3 to 9 taps, 1e5 samples)
        return np.convolve(x.reshape(n), b)[:n].astype(x.dtype, copy=False).reshape(x.shape)
    if n >= 1000 and b.shape[0] <= 16:  # long signals, few taps: np.convolve per signal still wins (5 taps, 64 x 1e5:
        rows = x.reshape(-1, n)  # 98 against 294 ms); short ones pay a Python step per signal
        y = np.empty(rows.shape, x.dtype)
        for i in range(rows.shape[0]):
            y[i] = np.convolve(rows[i], b)[:n]
        return y.reshape(x.shape)
    # a = [1, 0]: SciPy's C loop (it pads b and a to one length anyway); a = [1] takes its slower
    # np.convolve path, one Python call per signal
    return lfilter(b, np.array([1, 0], x.dtype), x, axis=-1)


@_fir.generic
def _fir_kernel(xp, b, x):
    """One product and one sum per tap, into one buffer."""
    y = x * b[0]
    for k in range(1, min(b.shape[0], x.shape[-1])):
        y[..., k:] += x[..., :-k] * b[k]
    return y


def fir_filter(b, x):
    """``B(z) x`` along the last axis of ``x`` (``b`` and ``x`` of one float dtype), cut to ``x``'s length: the
    op, for ``tl.signal.lfilter``."""
    return apply(_fir, (b, x), {})


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


def _fir_x_grad(node, g):
    from .array import flip

    return flip(fir_filter(node.inputs[0], flip(g, -1)), -1)


def _fir_b_grad(node, g):
    from .reduce import sum as reduce_sum
    from .shape import stack

    x = node.inputs[1]
    return stack([reduce_sum(g[..., k:] * (x[..., :-k] if k else x)) for k in range(node.inputs[0].shape[0])])


register_gradient("FirFilter", b=_fir_b_grad, x=_fir_x_grad)


# ---------------------------------------------------------------- second-order sections, one op per pass
def _sections_infer(with_state: bool):
    def infer(sos, x, zi=None):
        given = (sos, x) if zi is None else (sos, x, zi)
        if sos.dtype.kind != "f" or any(t.dtype != sos.dtype for t in given):
            raise TypeError(
                "expected sos, x" + ("" if zi is None else " and zi")
                + f" of one floating dtype, got {', '.join(str(t.dtype) for t in given)}"
            )  # fmt: skip
        if len(sos.shape) != 2 or sos.shape[1] != 6 or sos.shape[0] in (None, 0):
            raise ValueError(f"sos must have shape (n_sections, 6), n_sections known, got {tuple(sos.shape)}")
        if len(x.shape) == 0:
            raise ValueError("x must have at least one axis, got a scalar")
        if zi is not None:
            want = (sos.shape[0], *x.shape[:-1], 2)
            if len(zi.shape) != len(want) or any(
                g is not None and w is not None and g != w for g, w in zip(zi.shape, want)
            ):
                raise ValueError(f"zi must have shape {want} (sos shape {tuple(sos.shape)}, x shape {tuple(x.shape)}), "
                                 f"got {tuple(zi.shape)}")  # fmt: skip
        return spec(x.shape, x.dtype)

    return infer


_sos = defop(
    "SosFilter",
    inputs=("sos", "x"),
    infer=_sections_infer(False),
    doc="x along its last axis through the cascade of second-order sections sos (rows b0 b1 b2 a0 a1 a2), from rest.",
)
_sos_from = defop(
    "SosFilterFrom",
    inputs=("sos", "x", "zi"),
    infer=_sections_infer(True),
    doc="x along its last axis through the second-order sections sos from the initial states zi "
    "((n_sections, ..., 2), SciPy's sosfilt): the output only.",
)


def _scipy_sosfilt():
    try:
        from scipy.signal import sosfilt
    except ImportError:
        return None
    return sosfilt


def _sos_numpy(sos, x, zi=None):
    sosfilt = _scipy_sosfilt()
    if sosfilt is None or not _scipy_runs(x) or not np.all(sos[:, 3] == 1):
        return _sos_kernel(np, sos, x, zi)
    sos = np.ascontiguousarray(sos)  # SciPy hands sos to its C loop as given when the dtype matches (a vmap slice)
    if zi is None:
        return sosfilt(sos, x, axis=-1)
    return sosfilt(sos, x, axis=-1, zi=zi)[0]


def _sos_kernel(xp, sos, x, zi=None):
    """Section by section, each as ``lfilter``'s two kernels, a section's state added to the first two samples of
    its numerator's output (scaled by ``a0``, as ``tl.signal.lfilter`` writes it)."""
    for s in range(sos.shape[0]):
        v = _fir_kernel(xp, sos[s, :3], x)
        if zi is not None:
            m = min(2, x.shape[-1])
            v[..., :m] += sos[s, 3] * zi[s, ..., :m]
        x = _all_pole_kernel(xp, sos[s, 3:], v)
    return x


_sos.kernel("numpy")(lambda sos, x: _sos_numpy(sos, x))
_sos.generic(lambda xp, sos, x: _sos_kernel(xp, sos, x))
_sos_from.kernel("numpy")(_sos_numpy)
_sos_from.generic(_sos_kernel)


def sos_filter(sos, x, zi=None):
    """``x`` (last axis) through the sections ``sos`` (``(n_sections, 6)``, one float dtype with ``x``) from
    rest, or from the states ``zi`` (``(n_sections, *x.shape[:-1], 2)``, SciPy's): one op, for
    ``tl.signal.sosfilt`` and ``sosfiltfilt``."""
    return apply(_sos, (sos, x), {}) if zi is None else apply(_sos_from, (sos, x, zi), {})


def _sos_x_grad(node, g):
    from .array import flip

    # the cascade from rest is linear and time-invariant: its transpose is the same cascade run backwards
    return flip(sos_filter(node.inputs[0], flip(g, -1)), -1)


def _sos_sweep(node, g):
    """The gradients in ``sos`` and ``zi`` (None without a state): each section's signals recomputed by the
    per-section ops, then the adjoint run back through the sections, ``w = A^-T r`` at each (as in
    ``AllPoleFilter``'s rules; with a state, over two more samples, as a state enters at the first two)."""
    from .array import flip
    from .math import zeros_like
    from .reduce import sum as reduce_sum
    from .shape import concat, stack

    sos, x = node.inputs[0], node.inputs[1]
    zi = node.inputs[2] if len(node.inputs) > 2 else None
    count = sos.shape[0]
    signals = [x]
    for s in range(count - 1):
        v = fir_filter(sos[s, :3], signals[-1])
        if zi is not None:  # the state's two samples first, zeros after (cut to v's length)
            v = v + sos[s, 3] * concat([zi[s], zeros_like(v)], -1)[..., :-2]
        signals.append(all_pole_filter(sos[s, 3:], v))
    signals.append(node.outputs[0])
    r, rows, states = g, [None] * count, [None] * count
    for s in reversed(range(count)):
        b, a, before, after = sos[s, :3], sos[s, 3:], signals[s], signals[s + 1]
        if zi is None:
            w = flip(all_pole_filter(a, flip(r, -1)), -1)
        else:
            w_ext = flip(all_pole_filter(a, flip(concat([r, zeros_like(zi[s])], -1), -1)), -1)
            w = w_ext[..., :-2]
        grad_b = [reduce_sum(w[..., k:] * (before[..., :-k] if k else before)) for k in range(3)]
        grad_a = [-reduce_sum(w[..., k:] * (after[..., :-k] if k else after)) for k in range(3)]
        if zi is not None:
            grad_a[0] = grad_a[0] + reduce_sum(w_ext[..., :2] * zi[s])
            states[s] = sos[s, 3] * w_ext[..., :2]
        rows[s] = stack(grad_b + grad_a)
        r = flip(fir_filter(b, flip(w, -1)), -1)
    return stack(rows), None if zi is None else stack(states)


register_gradient("SosFilter", sos=lambda node, g: _sos_sweep(node, g)[0], x=_sos_x_grad)
register_gradient(
    "SosFilterFrom",
    sos=lambda node, g: _sos_sweep(node, g)[0],
    x=_sos_x_grad,
    zi=lambda node, g: _sos_sweep(node, g)[1],
)


# ---------------------------------------------------------------- a whole rational filter, one op
def _linear_infer(b, a, x):
    if b.dtype.kind != "f" or a.dtype != b.dtype or x.dtype != b.dtype:
        raise TypeError(f"expected b, a and x of one floating dtype, got {b.dtype}, {a.dtype} and {x.dtype}")
    for name, c in (("b", b), ("a", a)):
        if len(c.shape) != 1 or c.shape[0] in (None, 0):
            raise ValueError(f"{name} must be one-dimensional, of known nonzero length, got shape {tuple(c.shape)}")
    if len(x.shape) == 0:
        raise ValueError("x must have at least one axis, got a scalar")
    return spec(x.shape, x.dtype)


_linear = defop(
    "LinearFilter",
    inputs=("b", "a", "x"),
    infer=_linear_infer,
    doc="B(z) / A(z) x along x's last axis from rest (scipy.signal.lfilter without zi): FirFilter then "
    "AllPoleFilter in one pass.",
)


@_linear.kernel("numpy")
def _linear_numpy(b, a, x):
    lfilter = _scipy_lfilter()
    if lfilter is None or not _scipy_runs(x):
        return _linear_kernel(np, b, a, x)
    _refuse_leading_zero(a, "LinearFilter")
    if a.shape[0] == 1:  # FIR: see FirFilter's kernel (whose result is a fresh array, divided in place)
        y = _fir_numpy(b, x)
        if a[0] != 1:
            y /= a[0]
        return y
    return lfilter(b, a, x, axis=-1)


@_linear.generic
def _linear_kernel(xp, b, a, x):
    _refuse_leading_zero(a, "LinearFilter")
    return _all_pole_kernel(xp, a, _fir_kernel(xp, b, x))


def linear_filter(b, a, x):
    """``B(z) / A(z) x`` along the last axis of ``x`` from rest (``b``, ``a`` and ``x`` of one float dtype): one
    op, for ``tl.signal.lfilter``."""
    return apply(_linear, (b, a, x), {})


def _linear_w(node, g):
    """``A^-T g``: the recursion run backwards over the cotangent."""
    from .array import flip

    return flip(all_pole_filter(node.inputs[1], flip(g, -1)), -1)


def _linear_x_grad(node, g):
    from .array import flip

    return flip(linear_filter(node.inputs[0], node.inputs[1], flip(g, -1)), -1)


def _linear_b_grad(node, g):
    from .reduce import sum as reduce_sum
    from .shape import stack

    w, x = _linear_w(node, g), node.inputs[2]
    return stack([reduce_sum(w[..., k:] * (x[..., :-k] if k else x)) for k in range(node.inputs[0].shape[0])])


def _linear_a_grad(node, g):
    from .reduce import sum as reduce_sum
    from .shape import stack

    w, y = _linear_w(node, g), node.outputs[0]
    return -stack([reduce_sum(w[..., k:] * (y[..., :-k] if k else y)) for k in range(node.inputs[1].shape[0])])


register_gradient("LinearFilter", b=_linear_b_grad, a=_linear_a_grad, x=_linear_x_grad)

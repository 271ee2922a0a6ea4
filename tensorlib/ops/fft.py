"""Discrete Fourier transforms (``tl.fft``): three ops, NumPy's functions on top of them.

``FFTN`` (complex to complex, forward or inverse), ``RFFTN`` (real to half
spectrum) and ``IRFFTN`` (half spectrum to real) run ``numpy.fft`` over the
given axes with NumPy's ``norm`` modes.  Cropping and zero-padding to ``n`` /
``s`` are slicing and ``pad`` ops in the public functions, so their gradients
come free.

Gradients, with JAX's convention for complex values (``docs/complex.md``):
the DFT matrix is symmetric, so the transpose of each ``FFTN`` is the same
transform with the same ``norm``; the transpose of ``RFFTN`` zero-pads the
half spectrum and applies the full forward transform (keeping the real part
for the real input); the transpose of ``IRFFTN`` is the inverse transform of
the real cotangent, cut to the half spectrum and doubled on the bins that
stand for two (every bin but 0 and, for even sizes, the last).
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes as _dt
from ..dispatch import apply, as_tensor
from ..grad.registry import register_gradient
from ..tensor import Tensor
from .registry import defop, spec

_NORMS = ("backward", "ortho", "forward")


def _check_axes(x, axes, norm=None):
    """The axes normalized; ``norm`` checked too in the ops' shape rules, so that a traced graph fails
    when it is built, not when it runs."""
    if norm is not None and norm not in _NORMS:
        raise ValueError(f"norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    if not axes:
        raise ValueError("no axes to transform")
    rank = len(x.shape)
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"axis {a} is out of bounds for rank {rank}")
    if len({a % rank for a in axes}) != len(axes):
        raise ValueError(f"axes {axes} repeat an axis")
    return tuple(a % rank for a in axes)


# ------------------------------------------------------------------ FFTN
def _fftn_infer(x, *, axes, norm, inverse):
    if x.dtype.kind != "c":
        raise TypeError(f"expected a complex input, got {x.dtype}")
    _check_axes(x, axes, norm)
    return spec(x.shape, x.dtype)


_fftn = defop(
    "FFTN",
    inputs=("x",),
    attrs={"axes": (-1,), "norm": "backward", "inverse": False},
    infer=_fftn_infer,
    doc="Complex DFT over axes (inverse=True: the inverse DFT), numpy.fft norms.",
)


@_fftn.generic
def _fftn_kernel(xp, x, *, axes, norm, inverse):
    return (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)


# The DFT matrix is symmetric: each transform is its own transpose.
register_gradient("FFTN", lambda node, g: apply(_fftn, (g,), node.attrs))


# ------------------------------------------------------------------ RFFTN
def _rfftn_infer(x, *, axes, norm):
    if x.dtype.kind != "f":
        raise TypeError(f"expected a real input, got {x.dtype} (use fft for complex inputs)")
    axes = _check_axes(x, axes, norm)
    shape = list(x.shape)
    if shape[axes[-1]] is not None:  # None: a size known only at run time
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return spec(tuple(shape), _dt.complex_dtype(x.dtype))


_rfftn = defop(
    "RFFTN",
    inputs=("x",),
    attrs={"axes": (-1,), "norm": "backward"},
    infer=_rfftn_infer,
    doc="DFT of a real input over axes, the last one cut to its n // 2 + 1 nonnegative frequencies.",
)


@_rfftn.generic
def _rfftn_kernel(xp, x, *, axes, norm):
    return xp.fft.rfftn(x, axes=axes, norm=norm)


def _rfftn_grad(node, g):
    from .math import cast
    from .shape import pad

    x, axes = node.inputs[0], node.attrs["axes"]
    last = axes[-1] % x.ndim
    if x.shape[last] is None:
        raise ValueError(
            f"RFFTN: the gradient zero-pads to the size of axis {last}, unknown when traced "
            f"(input shape {tuple(x.shape)} {x.dtype}); give that axis a size in the TensorSpec"
        )
    widths = [(0, 0)] * x.ndim
    widths[last] = (0, x.shape[last] - g.shape[last])
    full = apply(_fftn, (pad(g, widths),), {"axes": axes, "norm": node.attrs["norm"], "inverse": False})
    return cast(full, dtype=x.dtype)  # the real part


register_gradient("RFFTN", _rfftn_grad)


# ------------------------------------------------------------------ IRFFTN
def _irfftn_infer(x, *, axes, norm, n):
    if x.dtype.kind != "c":
        raise TypeError(f"expected a complex input, got {x.dtype}")
    axes = _check_axes(x, axes, norm)
    shape = list(x.shape)
    if n is None:  # NumPy's default, 2 * (m - 1) outputs from m frequencies: m is unknown until run time
        if shape[axes[-1]] is not None:
            raise ValueError(f"n may be None only for an axis of unknown size, got {shape[axes[-1]]} frequencies")
        return spec(tuple(shape), _dt.real_dtype(x.dtype))
    if n < 1:
        raise ValueError(f"invalid number of data points {n}")
    if shape[axes[-1]] not in (None, n // 2 + 1):
        raise ValueError(f"axis {axes[-1]} has {shape[axes[-1]]} frequencies, {n} outputs need {n // 2 + 1}")
    shape[axes[-1]] = n
    return spec(tuple(shape), _dt.real_dtype(x.dtype))


_irfftn = defop(
    "IRFFTN",
    inputs=("x",),
    attrs={"axes": (-1,), "norm": "backward", "n": 2},
    infer=_irfftn_infer,
    doc="Inverse of RFFTN: n real outputs along the last axis from its n // 2 + 1 frequencies "
    "(n=None: NumPy's default 2 * (m - 1) from m, for a size unknown when traced).",
)


@_irfftn.generic
def _irfftn_kernel(xp, x, *, axes, norm, n):
    if n is None:
        n = 2 * (x.shape[axes[-1]] - 1)
        if n < 1:
            raise ValueError(f"IRFFTN: invalid number of data points {n} (input shape {tuple(x.shape)} {x.dtype})")
    sizes = [x.shape[a] for a in axes[:-1]] + [n]
    return xp.fft.irfftn(x, s=sizes, axes=axes, norm=norm)


def _irfftn_grad(node, g):
    from .creation import tensor
    from .math import cast
    from .shape import getitem

    x, axes, n = node.inputs[0], node.attrs["axes"], node.attrs["n"]
    last = axes[-1] % x.ndim
    if n is None:
        return _irfftn_default_grad(g, axes, node.attrs["norm"], last, x.dtype)
    spectrum = apply(_fftn, (cast(g, dtype=x.dtype),), {"axes": axes, "norm": node.attrs["norm"], "inverse": True})
    m = n // 2 + 1
    index = [slice(None)] * x.ndim
    index[last] = slice(0, m)
    # Bins 1 .. (n - 1) // 2 stand for themselves and their mirror image, so they count twice.
    weight = np.ones(m)
    weight[1 : (n - 1) // 2 + 1] = 2.0
    weight = weight.reshape((m,) + (1,) * (x.ndim - 1 - last))
    return getitem(spectrum, tuple(index)) * tensor(weight.astype(x.dtype), backend=x.backend)


def _irfftn_default_grad(g, axes, norm, last, dtype):
    """IRFFTN's gradient for NumPy's default n = 2 * (m - 1), with m unknown when traced: the inverse
    transform of the real g cut to m bins is the conjugate of its rfftn with the opposite norm; every bin
    but the first and the last (n is even) counts twice."""
    from .elementwise import conj
    from .math import cast
    from .shape import concat, getitem

    half = conj(apply(_rfftn, (g,), {"axes": axes, "norm": _OPPOSITE_NORM[norm]}))
    half = cast(half, dtype) if half.dtype != dtype else half

    def part(start, stop):
        index = [slice(None)] * g.ndim
        index[last] = slice(start, stop)
        return getitem(half, tuple(index))

    return concat([part(0, 1), part(1, -1) * 2.0, part(-1, None)], axis=last)


register_gradient("IRFFTN", _irfftn_grad)


# ------------------------------------------------------------------ NumPy's functions
def _tensor(a, what):

    a = as_tensor(a)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{what}: input of dtype {a.dtype} is not numeric")
    return a


def _norm(norm, what):
    norm = "backward" if norm is None else norm
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(f"{what}: norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _as_complex(a):
    from .math import cast

    return a if a.dtype.kind == "c" else cast(a, dtype=_dt.complex_dtype(a.dtype))


def _as_real(a, what):
    from .math import cast

    if a.dtype.kind == "c":
        raise TypeError(
            f"{what}: expected a real input, got {a.dtype} (shape {tuple(a.shape)}); use fft for complex inputs"
        )
    return a if a.dtype.kind == "f" else cast(a, dtype=_dt.float64)


def _where(a):
    return f"(input shape {tuple(a.shape)} {a.dtype})"


def _resize(a, axis, n, what):
    """Crop or zero-pad ``a`` along ``axis`` to ``n`` (NumPy's ``n`` and ``s`` arguments)."""
    from .shape import getitem, pad

    size = a.shape[axis]
    index = [slice(None)] * a.ndim
    index[axis] = slice(0, n)
    if size is None:  # unknown when traced: padded by n, then its first n taken (a gather: a known size n)
        from .shape import take

        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, n)
        return take(pad(a, widths), np.arange(n), axis=axis)
    if n == size:
        return a
    if n < size:
        return getitem(a, tuple(index))
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, n - size)
    return pad(a, widths)


def _integers(values, name, what, a, sizes=False, one=False):
    """``values`` as a tuple of Python ints, read as NumPy reads them: a float, a string or a bool is a TypeError
    (``int()`` read ``n=4.5`` as 4 and ``axis=0.7`` as axis 0).  ``one``: a single int (``n``, ``axis``);
    ``sizes``: a sequence (``s``) whose ``None`` entries stay; otherwise an int or a sequence (``axes``)."""
    if type(values) is int and (one or not sizes):  # the common axis=-1 (a bool's type is bool)
        return (values,)
    scalar = not isinstance(values, (tuple, list)) and np.ndim(values) == 0
    items = (values,) if scalar else tuple(values)
    if (
        (one or sizes)
        and scalar != one
        or not all(
            (v is None and sizes) or (hasattr(v, "__index__") and not isinstance(v, (bool, np.bool_))) for v in items
        )
    ):
        kind = "an int" if one else "a sequence of ints" if sizes else "an int or a sequence of ints"
        raise TypeError(f"{what}: {name} must be {kind}, got {values!r} {_where(a)}")
    return tuple(None if v is None else operator.index(v) for v in items)


def _plan(a, s, axes, what, one=False):
    """NumPy's (s, axes) rules, or with ``one`` the (n, axis) of a one-dimensional transform: normalized
    axes and the size per axis (``None``: the one-dimensional transform's default)."""
    s_name, axes_name = ("n", "axis") if one else ("s", "axes")
    sizes = None if s is None else list(_integers(s, s_name, what, a, sizes=True, one=one))
    if axes is None and not one:
        axes = tuple(range(a.ndim)) if sizes is None else tuple(range(-len(sizes), 0))
    axes = _integers(axes, axes_name, what, a, one=one)
    if not axes:
        raise ValueError(f"{what}: no axes to transform {_where(a)}")
    if sizes is None:
        sizes = [None] * len(axes)
    elif len(sizes) != len(axes):
        raise ValueError(f"{what}: s {tuple(sizes)} and axes {axes} have different lengths")
    try:
        axes = _check_axes(a, axes)
    except ValueError as e:
        raise ValueError(f"{what}: {e} {_where(a)}") from None
    for i, (ax, n) in enumerate(zip(axes, sizes)):
        if n == -1 and not one:  # NumPy 2: the whole input (None: the 1-D transform's default)
            sizes[i] = n = a.shape[ax]
        if n is None and a.shape[ax] == 0 or n is not None and n < 1:
            raise ValueError(f"{what}: invalid number of data points {a.shape[ax] if n is None else n} {_where(a)}")
    return axes, sizes


def _complex_transform(a, s, axes, norm, inverse, what, one=False):
    a = _tensor(a, what)
    axes, sizes = _plan(a, s, axes, what, one)
    for ax, n in zip(axes, sizes):
        a = a if n is None else _resize(a, ax, n, what)
    return apply(_fftn, (_as_complex(a),), {"axes": axes, "norm": _norm(norm, what), "inverse": inverse})


def _real_transform(a, s, axes, norm, what, one=False):
    a = _as_real(_tensor(a, what), what)
    axes, sizes = _plan(a, s, axes, what, one)
    for ax, n in zip(axes, sizes):
        a = a if n is None else _resize(a, ax, n, what)
    return apply(_rfftn, (a,), {"axes": axes, "norm": _norm(norm, what)})


def _inverse_real_transform(a, s, axes, norm, what, one=False):
    a = _tensor(a, what)
    axes, sizes = _plan(a, s, axes, what, one)
    last = sizes[-1]
    if last is None:
        m = a.shape[axes[-1]]
        if m is None:  # traced: the op takes NumPy's default from the size it is given at run time
            for ax, n in zip(axes[:-1], sizes[:-1]):
                a = a if n is None else _resize(a, ax, n, what)
            return apply(_irfftn, (_as_complex(a),), {"axes": axes, "norm": _norm(norm, what), "n": None})
        last = 2 * (m - 1)
        if last < 1:
            raise ValueError(f"{what}: invalid number of data points {last} {_where(a)}")
    for ax, n in zip(axes[:-1], sizes[:-1]):
        a = a if n is None else _resize(a, ax, n, what)
    a = _resize(a, axes[-1], last // 2 + 1, what)
    return apply(_irfftn, (_as_complex(a),), {"axes": axes, "norm": _norm(norm, what), "n": last})


def fftn(a, s=None, axes=None, norm=None) -> Tensor:
    """N-dimensional DFT (``numpy.fft.fftn``); ``s`` crops or zero-pads each axis first.

    >>> import tensorlib as tl
    >>> tl.fft.fftn(tl.tensor([[1.0, 0.0], [0.0, 0.0]])).numpy().real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _complex_transform(a, s, axes, norm, False, "fftn")


def ifftn(a, s=None, axes=None, norm=None) -> Tensor:
    """N-dimensional inverse DFT (``numpy.fft.ifftn``).

    >>> import tensorlib as tl
    >>> tl.fft.ifftn(tl.tensor([[4.0, 0.0], [0.0, 0.0]])).numpy().real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _complex_transform(a, s, axes, norm, True, "ifftn")


def fft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """One-dimensional DFT along ``axis`` (``numpy.fft.fft``); ``n`` crops or zero-pads first.

    >>> import tensorlib as tl
    >>> tl.fft.fft(tl.tensor([1.0, 1.0, 1.0, 1.0])).numpy().real.tolist()
    [4.0, 0.0, 0.0, 0.0]
    """
    return _complex_transform(a, n, axis, norm, False, "fft", one=True)


def ifft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """One-dimensional inverse DFT (``numpy.fft.ifft``).

    >>> import tensorlib as tl
    >>> tl.fft.ifft(tl.tensor([4.0, 0.0, 0.0, 0.0])).numpy().real.tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _complex_transform(a, n, axis, norm, True, "ifft", one=True)


def fft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """Two-dimensional DFT over ``axes`` (``numpy.fft.fft2``).

    >>> import tensorlib as tl
    >>> tl.fft.fft2(tl.ones((2, 2))).numpy().real.tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    return _complex_transform(a, s, axes, norm, False, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """Two-dimensional inverse DFT (``numpy.fft.ifft2``).

    >>> import tensorlib as tl
    >>> tl.fft.ifft2(tl.tensor([[4.0, 0.0], [0.0, 0.0]])).numpy().real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _complex_transform(a, s, axes, norm, True, "ifft2")


def rfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """DFT of a real input (``numpy.fft.rfftn``): the last axis keeps its ``n // 2 + 1`` nonnegative frequencies.

    >>> import tensorlib as tl
    >>> tl.fft.rfftn(tl.ones((2, 4))).numpy().real.tolist()
    [[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _real_transform(a, s, axes, norm, "rfftn")


def rfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """Two-dimensional DFT of a real input over ``axes`` (``numpy.fft.rfft2``): the last axis keeps its
    ``n // 2 + 1`` nonnegative frequencies.

    >>> import tensorlib as tl
    >>> tl.fft.rfft2(tl.ones((2, 4))).numpy().real.tolist()
    [[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _real_transform(a, s, axes, norm, "rfft2")


def rfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """One-dimensional DFT of a real input (``numpy.fft.rfft``).

    >>> import tensorlib as tl
    >>> tl.fft.rfft(tl.tensor([1.0, 2.0, 3.0, 4.0])).numpy().tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """
    return _real_transform(a, n, axis, norm, "rfft", one=True)


def irfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """Inverse of ``rfftn`` (``numpy.fft.irfftn``): real output, the last axis of size ``s[-1]``
    (default ``2 * (m - 1)`` for ``m`` input frequencies).

    >>> import tensorlib as tl
    >>> tl.fft.irfftn(tl.fft.rfftn(tl.tensor([[1.0, 2.0], [3.0, 4.0]]))).numpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _inverse_real_transform(a, s, axes, norm, "irfftn")


def irfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """Inverse of ``rfft2`` (``numpy.fft.irfft2``): real output over ``axes``, the last of size ``s[-1]``
    (default ``2 * (m - 1)`` for ``m`` input frequencies).

    >>> import tensorlib as tl
    >>> tl.fft.irfft2(tl.fft.rfft2(tl.tensor([[1.0, 2.0], [3.0, 4.0]]))).numpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    return _inverse_real_transform(a, s, axes, norm, "irfft2")


def irfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """Inverse of ``rfft`` (``numpy.fft.irfft``): ``n`` real outputs (default ``2 * (m - 1)``).

    >>> import tensorlib as tl
    >>> tl.fft.irfft(tl.fft.rfft(tl.tensor([1.0, 2.0, 3.0]), ), n=3).numpy().round(6).tolist()
    [1.0, 2.0, 3.0]
    """
    return _inverse_real_transform(a, n, axis, norm, "irfft", one=True)


# The Hermitian transforms are the real ones on the conjugate, in the opposite direction.
_OPPOSITE_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """DFT of a signal with Hermitian symmetry given by its half (``numpy.fft.hfft``): ``n`` real outputs
    (default ``2 * (m - 1)``), ``irfft`` of the conjugate with the opposite ``norm``.

    >>> import tensorlib as tl
    >>> tl.fft.hfft(tl.tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [8.0, -2.0, 0.0, -2.0]
    """
    from .elementwise import conj

    a = _tensor(a, "hfft")
    return _inverse_real_transform(conj(a), n, axis, _OPPOSITE_NORM[_norm(norm, "hfft")], "hfft", one=True)


def ihfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """Inverse of ``hfft`` (``numpy.fft.ihfft``): the half spectrum of a real input, the conjugate of
    ``rfft`` with the opposite ``norm``.

    >>> import tensorlib as tl
    >>> tl.fft.ihfft(tl.tensor([8.0, -2.0, 0.0, -2.0])).numpy().real.tolist()
    [1.0, 2.0, 3.0]
    """
    from .elementwise import conj

    return conj(_real_transform(a, n, axis, _OPPOSITE_NORM[_norm(norm, "ihfft")], "ihfft", one=True))


def _frequencies(n, d, half, what):
    from ._shapes import as_int
    from .creation import tensor

    n = as_int(n, f"{what}: n")
    if n < 1:
        raise ValueError(f"{what}: n must be a positive int, got {n}")
    k = np.arange(n // 2 + 1) if half else np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return tensor(k.astype(np.float64)) / (n * d)


def fftfreq(n, d=1.0) -> Tensor:
    """The frequencies of ``fft``'s ``n`` outputs for sample spacing ``d`` (``numpy.fft.fftfreq``), float64.

    >>> import tensorlib as tl
    >>> tl.fft.fftfreq(4, d=0.5).numpy().tolist()
    [0.0, 0.5, -1.0, -0.5]
    """
    return _frequencies(n, d, False, "fftfreq")


def rfftfreq(n, d=1.0) -> Tensor:
    """The frequencies of ``rfft``'s ``n // 2 + 1`` outputs (``numpy.fft.rfftfreq``), float64.

    >>> import tensorlib as tl
    >>> tl.fft.rfftfreq(5).numpy().tolist()
    [0.0, 0.2, 0.4]
    """
    return _frequencies(n, d, True, "rfftfreq")


def _shift(x, axes, inverse, what):
    """One ``Roll`` (a new tensor even when nothing moves: never the caller's tensor or Variable itself)."""
    from .array import roll
    from .math import identity

    x = _tensor(x, what)
    axes = tuple(range(x.ndim)) if axes is None else _integers(axes, "axes", what, x)
    if not axes:
        return identity(x)
    try:
        axes = _check_axes(x, axes)
    except ValueError as e:
        raise ValueError(f"{what}: {e} {_where(x)}") from None
    if any(x.shape[ax] is None for ax in axes):
        raise ValueError(f"{what}: the shift needs the size of each axis in {axes}, unknown here {_where(x)}")
    shifts = tuple(-(x.shape[ax] // 2) if inverse else x.shape[ax] // 2 for ax in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes=None) -> Tensor:
    """Move the zero frequency to the centre (``numpy.fft.fftshift``): a roll by ``n // 2``.

    >>> import tensorlib as tl
    >>> tl.fft.fftshift(tl.arange(5)).numpy().tolist()
    [3, 4, 0, 1, 2]
    """
    return _shift(x, axes, False, "fftshift")


def ifftshift(x, axes=None) -> Tensor:
    """Inverse of ``fftshift`` (``numpy.fft.ifftshift``).

    >>> import tensorlib as tl
    >>> tl.fft.ifftshift(tl.fft.fftshift(tl.arange(5))).numpy().tolist()
    [0, 1, 2, 3, 4]
    """
    return _shift(x, axes, True, "ifftshift")

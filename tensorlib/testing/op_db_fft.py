"""The FFT catalogue: every ``tl.fft`` function against ``numpy.fft``, real and complex inputs, every ``norm``;
``tl.signal``'s FFT-based ``fftconvolve``, ``oaconvolve``, ``hilbert``, ``welch`` and ``periodogram``; and its linear
filters (``lfilter``, ``filtfilt``, ``sosfilt`` and their steady states) on stable filters; against the NumPy
references of ``scipy.signal``'s in ``tensorlib.testing.references``.

Complex entries check their gradients in complex128 (real and imaginary parts
perturbed, JAX's convention); real entries in float64, where ``fft`` of a
real signal differentiates back to a real gradient.

>>> from tensorlib.testing.op_db_fft import OPINFOS
>>> sorted({t for info in OPINFOS for t in info.op_types})  # doctest: +NORMALIZE_WHITESPACE
['AllPoleFilter', 'FFTN', 'FirFilter', 'IRFFTN', 'LinearFilter', 'MatrixSolve', 'RFFTN', 'Roll', 'SosFilter',
 'SosFilterFrom']
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from . import references
from .opinfo import ErrorInput, OpInfo, SampleInput

REAL = (_dt.float32, _dt.float64)
COMPLEX = (_dt.complex64, _dt.complex128)
SHAPES = st.sampled_from([(4,), (3, 5), (2, 3, 4), (1,)])
NORMS = st.sampled_from([None, "ortho", "forward", "backward"])


def _array(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-2, 2, shape)
    return x.astype(dtype)


def _one_axis(shapes=SHAPES):
    """(x, n, axis, norm) as in numpy.fft.fft."""

    def samples(dtype):
        @st.composite
        def draw(draw):
            shape = draw(shapes)
            x = _array(draw(st.integers(0, 2**16)), shape, dtype)
            axis = draw(st.integers(-len(shape), len(shape) - 1))
            n = draw(st.none() | st.integers(1, 6))
            return SampleInput((x,), {"n": n, "axis": axis, "norm": draw(NORMS)})

        return draw()

    return samples


def _many_axes(two_d=False):
    """(x, s, axes, norm) as in numpy.fft.fftn (s only with explicit axes, as NumPy 2 asks)."""

    def samples(dtype):
        @st.composite
        def draw(draw):
            shape = draw(st.sampled_from([(3, 5), (2, 3, 4), (4, 2)]))
            x = _array(draw(st.integers(0, 2**16)), shape, dtype)
            if two_d:
                axes = draw(st.sampled_from([(-2, -1), (0, 1), (1, 0)]))
            else:
                axes = draw(
                    st.none()
                    | st.permutations(range(len(shape))).flatmap(
                        lambda p: st.integers(1, len(p)).map(lambda k: tuple(p[:k]))
                    )
                )
            s = None if axes is None or draw(st.booleans()) else tuple(draw(st.integers(2, 5)) for _ in axes)
            return SampleInput((x,), {"s": s, "axes": axes, "norm": draw(NORMS)})

        return draw()

    return samples


def _shift_samples(dtype):
    @st.composite
    def draw(draw):
        shape = draw(SHAPES)
        axes = draw(st.none() | st.integers(-len(shape), len(shape) - 1) | st.just(tuple(range(len(shape)))))
        return SampleInput((_array(draw(st.integers(0, 2**16)), shape, dtype),), {"axes": axes})

    return draw()


def _entry(name, samples, dtypes, op_types, **kwargs):
    return OpInfo(
        f"fft.{name}",
        getattr(tl.fft, name),
        getattr(np.fft, name),
        samples,
        op_types=op_types,
        dtypes=dtypes,
        atol=1e-5,
        **kwargs,
    )


_NORM_ERROR = ErrorInput(
    (np.ones(4),),
    {"norm": "unitary"},
    ValueError,
    r"fft[n2]*: norm must be None, 'backward', 'ortho' or 'forward', got 'unitary'",
)

OPINFOS = [
    _entry(
        "fft",
        _one_axis(),
        REAL,
        ("FFTN",),
        error_inputs=(
            _NORM_ERROR,
            ErrorInput(
                (np.ones(4),),
                {"n": 0},
                ValueError,
                r"fft: invalid number of data points 0 \(input shape \(4,\) float64\)",
            ),
            ErrorInput(
                (np.ones(4),),
                {"axis": 1},
                ValueError,
                r"fft: axis 1 is out of bounds for rank 1 \(input shape \(4,\) float64\)",
            ),
            ErrorInput(  # int() read n=4.5 as 4 and axis=0.7 as 0
                (np.ones(6),),
                {"n": 4.5},
                TypeError,
                r"fft: n must be an int, got 4.5 \(input shape \(6,\) float64\)",
            ),
            ErrorInput((np.ones(6),), {"axis": 0.7}, TypeError, r"fft: axis must be an int, got 0.7"),
            ErrorInput((np.ones((0, 3)),), {"axis": 0}, ValueError, r"fft: invalid number of data points 0"),
        ),
    ),
    OpInfo("fft.fft_complex", tl.fft.fft, np.fft.fft, _one_axis(), op_types=("FFTN",), dtypes=COMPLEX, atol=1e-5),
    _entry("ifft", _one_axis(), COMPLEX, ("FFTN",)),
    _entry("fft2", _many_axes(two_d=True), COMPLEX, ("FFTN",)),
    _entry("ifft2", _many_axes(two_d=True), COMPLEX, ("FFTN",)),
    _entry(
        "fftn",
        _many_axes(),
        COMPLEX,
        ("FFTN",),
        error_inputs=(
            ErrorInput(
                (np.ones((2, 2)),),
                {"axes": (0, 0)},
                ValueError,
                r"fftn: axes \(0, 0\) repeat an axis \(input shape \(2, 2\) float64\)",
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"s": (2,), "axes": (0, 1)},
                ValueError,
                r"fftn: s \(2,\) and axes \(0, 1\) have different lengths",
            ),
            ErrorInput(
                (np.ones((2, 2)),),
                {"s": 2},
                TypeError,
                r"fftn: s must be a sequence of ints, got 2 \(input shape \(2, 2\) float64\)",
            ),
            ErrorInput((np.ones((2, 2)),), {"axes": "01"}, TypeError, r"fftn: axes must be an int or a sequence"),
            ErrorInput(  # was "axes (-1, 0, 1) repeat an axis"
                (np.ones((2, 3)),),
                {"s": (2, 2, 2)},
                ValueError,
                r"fftn: axis -3 is out of bounds for rank 2 \(input shape \(2, 3\) float64\)",
            ),
        ),
    ),
    _entry("ifftn", _many_axes(), COMPLEX, ("FFTN",)),
    _entry(
        "rfft",
        _one_axis(),
        REAL,
        ("RFFTN",),
        error_inputs=(
            ErrorInput(
                (np.ones(4, np.complex128),),
                exc=TypeError,
                match=r"rfft: expected a real input, got complex128 \(shape \(4,\)\); use fft",
            ),
        ),
    ),
    _entry(
        "irfft",
        _one_axis(st.sampled_from([(4,), (3, 5), (2, 3, 4)])),
        COMPLEX,
        ("IRFFTN",),
        error_inputs=(
            ErrorInput(
                (np.ones(1, np.complex128),),
                exc=ValueError,
                match=r"irfft: invalid number of data points 0 \(input shape \(1,\) complex128\)",
            ),
        ),
    ),
    _entry("hfft", _one_axis(st.sampled_from([(4,), (3, 5), (2, 3, 4)])), COMPLEX, ("IRFFTN",)),
    _entry("ihfft", _one_axis(), REAL, ("RFFTN",)),
    _entry("rfftn", _many_axes(), REAL, ("RFFTN",)),
    _entry("irfftn", _many_axes(), COMPLEX, ("IRFFTN",)),
    _entry(
        "fftshift",
        _shift_samples,
        COMPLEX + REAL,
        ("Roll",),
        error_inputs=(
            ErrorInput(
                (np.ones(3),),
                {"axes": 2},
                ValueError,
                r"fftshift: axis 2 is out of bounds for rank 1 \(input shape \(3,\) float64\)",
            ),
        ),
    ),
    _entry("ifftshift", _shift_samples, COMPLEX + REAL, ("Roll",)),
]


# ---------------------------------------------------------------- tl.signal's FFT-based functions
def _convolve_samples(dtype):
    """(in1, in2, mode, axes) as in scipy.signal.fftconvolve: one or two axes, sizes 1 to 5 (a size of 1
    broadcasts), an axis left out whose sizes broadcast, and for "valid" one input the larger in each axis."""

    @st.composite
    def draw(draw):
        ndim = draw(st.sampled_from([1, 2]))
        s1 = [draw(st.integers(1, 5)) for _ in range(ndim)]
        s2 = [draw(st.integers(1, 4)) for _ in range(ndim)]
        axes = None if ndim == 1 or draw(st.booleans()) else draw(st.sampled_from([0, -1, (1, 0)]))
        if isinstance(axes, int):  # the other axis broadcasts
            s2[1 - axes % 2] = draw(st.sampled_from([1, s1[1 - axes % 2]]))
        mode = draw(st.sampled_from(["full", "same", "valid"]))
        if mode == "valid":
            s2 = [min(n, m) for n, m in zip(s1, s2)]
        seed = draw(st.integers(0, 2**16))
        x1, x2 = _array(seed, tuple(s1), dtype), _array(seed + 1, tuple(s2), dtype)
        if mode == "valid" and draw(st.booleans()):
            x1, x2 = x2, x1  # the larger second: SciPy swaps them
        return SampleInput((x1, x2), {"mode": mode, "axes": axes}, grad_argnums=(0, 1))

    return draw()


def _hilbert_samples(dtype):
    @st.composite
    def draw(draw):
        shape = draw(st.sampled_from([(4,), (5,), (3, 5), (2, 3, 4)]))
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        n = draw(st.none() | st.integers(1, 7))
        return SampleInput((_array(draw(st.integers(0, 2**16)), shape, dtype),), {"N": n, "axis": axis})

    return draw()


def _spectral_samples(dtype, one_frame=False):
    """(x, fs, window, ...) as in scipy.signal.welch (one_frame: periodogram's arguments), the frames whole."""

    @st.composite
    def draw(draw):
        n = draw(st.integers(6, 16))
        shape, axis = draw(st.sampled_from([((n,), -1), ((2, n), 1), ((n, 2), 0)]))
        x = _array(draw(st.integers(0, 2**16)), shape, dtype)
        kwargs = {
            "fs": draw(st.sampled_from([1.0, 2.5])),
            "window": draw(st.sampled_from(["hann", "boxcar", "hamming"])),  # kaiser: NumPy-only BesselI0
            "detrend": draw(st.sampled_from(["constant", "linear", False])),
            "return_onesided": draw(st.booleans()),
            "scaling": draw(st.sampled_from(["density", "spectrum"])),
            "axis": axis,
        }
        if one_frame:
            kwargs["nfft"] = draw(st.none() | st.integers(3, 20))
            return SampleInput((x,), kwargs)
        nperseg = draw(st.integers(3, n))
        kwargs["nperseg"] = nperseg
        kwargs["noverlap"] = draw(st.none() | st.integers(0, nperseg - 1))
        kwargs["nfft"] = draw(st.none() | st.integers(nperseg, nperseg + 4))
        kwargs["average"] = draw(st.sampled_from(["mean", "median"]))
        return SampleInput((x,), kwargs)

    return draw()


def _convolution_entry(name, dtypes, op_types, suffix=""):
    return OpInfo(
        f"signal.{name}{suffix}",
        getattr(tl.signal, name),
        references.fftconvolve,
        _convolve_samples,
        op_types=op_types,
        dtypes=dtypes,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones((2, 3)), np.ones(3)),
                exc=ValueError,
                match=rf"^{name}: in1 and in2 should have the same dimensionality, got shapes \(2, 3\) float64 and "
                r"\(3,\) float64",
            ),
            ErrorInput(
                (np.ones((2, 3)), np.ones((3, 2))),
                {"mode": "valid"},
                ValueError,
                rf"^{name}: for 'valid' mode, one input must be at least as large as the other in every convolved axis",
            ),
            ErrorInput(
                (np.ones((2, 3)), np.ones((3, 2))),
                {"axes": 1},
                ValueError,
                rf"^{name}: incompatible shapes along axis 0, which is not convolved \(shapes \(2, 3\) float64 and "
                r"\(3, 2\) float64\)",
            ),
            ErrorInput((np.ones(3), np.ones(2)), {"mode": "circular"}, ValueError, rf"^{name}: mode must be 'full'"),
            ErrorInput(
                (np.ones(3), np.ones(2)), {"axes": ()}, ValueError, rf"^{name}: axes cannot be empty when given"
            ),
            ErrorInput(
                (np.ones(3), np.ones(2)), {"axes": 1}, ValueError, rf"^{name}: axis 1 is out of bounds for rank 1"
            ),
        ),
    )


OPINFOS += [
    *[_convolution_entry(name, REAL, ("RFFTN", "IRFFTN")) for name in ("fftconvolve", "oaconvolve")],
    _convolution_entry("fftconvolve", COMPLEX, ("FFTN",), "_complex"),
    OpInfo(
        "signal.welch",
        tl.signal.welch,
        references.welch,
        _spectral_samples,
        op_types=("RFFTN", "FFTN"),
        dtypes=REAL,
        atol=1e-5,
        kinks=True,  # the median of the frames' powers
        error_inputs=(
            ErrorInput((np.ones(8),), {"nperseg": 4, "noverlap": 4}, ValueError, r"^welch: noverlap=4 must be less"),
            ErrorInput((np.ones(8),), {"nperseg": 4, "nfft": 3}, ValueError, r"^welch: nfft=3 must be at least"),
            ErrorInput((np.ones(8),), {"window": "triang"}, ValueError, r"^welch: window must be one of \['bartlett'"),
            ErrorInput((np.ones(8),), {"window": np.ones(9)}, ValueError, r"^welch: the window's 9 samples are more"),
            ErrorInput((np.ones(8),), {"scaling": "power"}, ValueError, r"^welch: scaling must be 'density' or"),
            ErrorInput((np.ones(8),), {"average": "max"}, ValueError, r"^welch: average must be 'mean' or 'median'"),
            ErrorInput((np.ones(8),), {"detrend": "quadratic"}, ValueError, r"^welch: detrend must be 'constant'"),
            ErrorInput((np.ones(8),), {"axis": 1}, ValueError, r"^welch: axis 1 is out of range .* \(x shape \(8,\)"),
        ),
    ),
    OpInfo(
        "signal.periodogram",
        tl.signal.periodogram,
        references.periodogram,
        lambda dtype: _spectral_samples(dtype, one_frame=True),
        op_types=("RFFTN", "FFTN"),
        dtypes=REAL,
        atol=1e-5,
        error_inputs=(
            ErrorInput((np.ones(8),), {"nfft": 0}, ValueError, r"^periodogram: nfft must be an int >= 1, got 0"),
            ErrorInput((np.ones(8),), {"window": np.ones(6)}, ValueError, r"^periodogram: nperseg=8 does not equal"),
        ),
    ),
    OpInfo(
        "signal.hilbert",
        tl.signal.hilbert,
        references.hilbert,
        _hilbert_samples,
        op_types=("FFTN",),
        dtypes=REAL,
        atol=1e-5,
        error_inputs=(
            ErrorInput(
                (np.ones(4, np.complex128),),
                exc=TypeError,
                match=r"^hilbert: signals must be real, got complex128 \(shape \(4,\)\)",
            ),
            ErrorInput((np.ones(4),), {"N": 0}, ValueError, r"^hilbert: N must be an int >= 1, got 0"),
            ErrorInput(
                (np.ones(4),), {"axis": 1}, ValueError, r"^hilbert: axis 1 is out of range for a tensor of rank 1"
            ),
        ),
    ),
]


# ---------------------------------------------------------------- tl.signal's linear filters
def _stable_denominator(rng, order: int) -> np.ndarray:
    """``a`` of a stable filter (poles of radius < 0.8, real or in conjugate pairs), ``a[0]`` not 1."""
    poles = []
    while len(poles) < order:
        r, angle = rng.uniform(0.0, 0.8), rng.uniform(0.0, np.pi)
        poles += [r * np.exp(1j * angle), r * np.exp(-1j * angle)] if order - len(poles) > 1 else [r]
    return np.atleast_1d(np.real(np.poly(poles))) * rng.choice([1.0, 2.5, -0.8])


def _in_dtype(reference):
    """``reference`` (float64 results) cast to the dtype of the arrays it was given (all float32: float32)."""

    def ref(*args, **kwargs):
        arrays = [a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)]
        dtype = np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64
        out = reference(*args, **kwargs)
        return tuple(o.astype(dtype) for o in out) if isinstance(out, tuple) else out.astype(dtype)

    return ref


def _signal_entry(name, samples, op_types, function=None, dtypes=REAL, cast=True, **kwargs):
    """The catalogue entry ``signal.<name>`` of ``tl.signal.<function>`` (default ``name``) against the reference
    of the same name (``cast``: its float64 results cast to the arrays' dtype)."""
    function = function or name
    reference = getattr(references, function)
    reference = _in_dtype(reference) if cast else reference
    return OpInfo(f"signal.{name}", getattr(tl.signal, function), reference, samples, op_types=op_types, dtypes=dtypes,
                  atol=1e-5, **kwargs)  # fmt: skip


def _signal_and_axis(draw, dtype, rng, least: int = 1):
    n = draw(st.integers(least, least + 8))
    shape, axis = draw(st.sampled_from([((n,), -1), ((2, n), 1), ((n, 3), 0), ((2, n, 2), 1)]))
    return rng.uniform(-2, 2, shape).astype(dtype), axis


def _drawn_filter(draw, dtype, most_taps: int, orders: tuple) -> tuple:
    """``(rng, b, a)``: 1 to ``most_taps`` numerator coefficients and a stable denominator of an order in
    ``orders`` (inclusive), and the generator that drew them."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    b = rng.uniform(-1, 1, draw(st.integers(1, most_taps))).astype(dtype)
    return rng, b, _stable_denominator(rng, draw(st.integers(*orders))).astype(dtype)


def _lfilter_samples(dtype, with_state: bool = False):
    @st.composite
    def draw(draw):
        rng, b, a = _drawn_filter(draw, dtype, 4, (0, 3))
        x, axis = _signal_and_axis(draw, dtype, rng)
        if not with_state:
            return SampleInput((b, a, x, axis), grad_argnums=(0, 1, 2))
        shape = list(x.shape)
        shape[axis] = max(len(a), len(b)) - 1
        zi = rng.uniform(-1, 1, shape).astype(dtype)
        return SampleInput((b, a, x, axis, zi), grad_argnums=(0, 1, 2, 4))

    return draw()


def _lfilter_zi_samples(dtype):
    @st.composite
    def draw(draw):
        _, b, a = _drawn_filter(draw, dtype, 4, (1, 3))
        return SampleInput((b, a), grad_argnums=(0, 1))

    return draw()


def _filtfilt_samples(dtype):
    @st.composite
    def draw(draw):
        rng, b, a = _drawn_filter(draw, dtype, 3, (0, 2))
        padtype = draw(st.sampled_from(["odd", "even", "constant", None]))
        padlen = draw(st.none() | st.integers(0, 3))
        x, axis = _signal_and_axis(draw, dtype, rng, least=(3 * max(len(a), len(b)) if padlen is None else 3) + 1)
        return SampleInput((b, a, x, axis, padtype, padlen), grad_argnums=(0, 1, 2))

    return draw()


def _sections_of(rng, count: int, dtype) -> np.ndarray:
    """``count`` stable second-order sections, ``a0 == 1``."""
    rows = [np.concatenate([rng.uniform(-1, 1, 3), _stable_denominator(rng, 2) / 1.0]) for _ in range(count)]
    sos = np.array(rows)
    sos[:, 3:] /= sos[:, 3:4]
    return sos.astype(dtype)


def _sos_samples(dtype, kind: str):
    """(sos, x, ...) for sosfilt (kind "filt", "state": with zi), sosfilt_zi ("zi") or sosfiltfilt ("filtfilt");
    the gradients are checked in x and zi (sos's a0 column must stay 1, SciPy's rule)."""

    @st.composite
    def draw(draw):
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        sos = _sections_of(rng, draw(st.integers(1, 3)), dtype)
        if kind == "zi":
            return SampleInput((sos,), grad_argnums=())
        if kind == "filtfilt":
            padtype = draw(st.sampled_from(["odd", "even", "constant", None]))
            x, axis = _signal_and_axis(draw, dtype, rng, least=4)
            return SampleInput((sos, x, axis, padtype, 3), grad_argnums=(1,))
        x, axis = _signal_and_axis(draw, dtype, rng)
        if kind == "filt":
            return SampleInput((sos, x, axis), grad_argnums=(1,))
        shape = [len(sos), *x.shape]
        shape[axis % x.ndim + 1] = 2
        return SampleInput((sos, x, axis, rng.uniform(-1, 1, shape).astype(dtype)), grad_argnums=(1, 3))

    return draw()


_FILTER_ERRORS = (
    ErrorInput(([1.0], [0.0, 1.0], np.ones(3)), exc=ValueError, match=r"^lfilter: a\[0\] == 0 leaves the recursion"),
    ErrorInput(
        (np.ones((2, 2)), [1.0], np.ones(3)),
        exc=ValueError,
        match=r"^lfilter: b must be a nonempty one-dimensional sequence of known length, got shape \(2, 2\)",
    ),
    ErrorInput(
        ([1.0, 2.0], [1.0], np.ones((2, 3)), -1, np.ones((2, 2))),
        exc=ValueError,
        match=r"^lfilter: zi must have shape \(2, 1\) \(x shape \(2, 3\) with the filter's order 1 along axis 1\), "
        r"got \(2, 2\) \(float64\)",
    ),
    ErrorInput(([1.0j], [1.0], np.ones(3)), exc=TypeError, match=r"^lfilter: complex coefficients"),
    ErrorInput(([1.0], [1.0], np.ones(3), 1), exc=ValueError, match=r"^lfilter: axis 1 is out of range"),
)

OPINFOS += [
    _signal_entry(
        "lfilter",
        _lfilter_samples,
        ("LinearFilter",),
        error_inputs=_FILTER_ERRORS,
    ),
    _signal_entry(
        "lfilter_state",
        lambda dtype: _lfilter_samples(dtype, with_state=True),
        ("AllPoleFilter", "FirFilter"),
        function="lfilter",
    ),
    _signal_entry(
        "lfilter_zi",
        _lfilter_zi_samples,
        ("MatrixSolve",),
        error_inputs=(
            ErrorInput(([1.0], [0.0, 0.0]), exc=ValueError, match=r"^lfilter_zi: there must be at least one nonzero"),
        ),
    ),
    _signal_entry(
        "filtfilt",
        _filtfilt_samples,
        ("AllPoleFilter", "FirFilter", "MatrixSolve"),
        error_inputs=(
            ErrorInput(
                ([1.0, 1.0], [1.0], np.ones(6)),
                exc=ValueError,
                match=r"^filtfilt: the length of x along axis 0 \(6\) must be greater than padlen, which is 6",
            ),
            ErrorInput(([1.0], [1.0], np.ones(9)), {"padtype": "zero"}, ValueError, r"^filtfilt: padtype must be"),
            ErrorInput(([1.0], [1.0], np.ones(9)), {"method": "fir"}, ValueError, r"^filtfilt: method must be"),
        ),
    ),
    _signal_entry(
        "sosfilt",
        lambda dtype: _sos_samples(dtype, "filt"),
        ("SosFilter",),
        error_inputs=(
            ErrorInput((np.ones((2, 5)), np.ones(3)), exc=ValueError, match=r"^sosfilt: sos must have shape"),
            ErrorInput((np.full((1, 6), 2.0), np.ones(3)), exc=ValueError, match=r"^sosfilt: sos\[:, 3\] must be all"),
            ErrorInput(
                (np.ones((2, 6)), np.ones(3), -1, np.ones((1, 2))),
                exc=ValueError,
                match=r"^sosfilt: zi must have shape \(2, \.\.\.\) with x's shape and 2 along axis 0",
            ),
        ),
    ),
    _signal_entry(
        "sosfilt_state",
        lambda dtype: _sos_samples(dtype, "state"),
        ("AllPoleFilter",),
        function="sosfilt",
    ),
    _signal_entry(
        "sosfilt_zi",
        lambda dtype: _sos_samples(dtype, "zi"),
        ("MatrixSolve",),
    ),
    _signal_entry(
        "sosfiltfilt",
        lambda dtype: _sos_samples(dtype, "filtfilt"),
        ("SosFilterFrom",),
    ),
]


# ---------------------------------------------------------------- resampling, spectrograms, PyTorch's stft
def _resample_samples(dtype):
    @st.composite
    def draw(draw):
        n, num = draw(st.integers(1, 9)), draw(st.integers(1, 11))
        shape, axis = draw(st.sampled_from([((n,), 0), ((2, n), 1), ((n, 2), 0)]))
        x = _array(draw(st.integers(0, 2**16)), shape, dtype)
        window = draw(st.sampled_from([None, "hann", "values"]))
        if window == "values":
            window = np.linspace(0.5, 1.5, n).astype(dtype)
        return SampleInput((x, num), {"axis": axis, "window": window})

    return draw()


def _spectrogram_samples(dtype):
    @st.composite
    def draw(draw):
        n = draw(st.integers(6, 16))
        shape, axis = draw(st.sampled_from([((n,), -1), ((2, n), 1), ((n, 2), 0)]))
        nperseg = draw(st.integers(3, n))
        kwargs = {
            "fs": draw(st.sampled_from([1.0, 2.5])),
            "window": draw(st.sampled_from([("tukey", 0.25), "hann", "tukey"])),
            "nperseg": nperseg,
            "noverlap": draw(st.none() | st.integers(0, nperseg - 1)),
            "return_onesided": draw(st.booleans()),
            "scaling": draw(st.sampled_from(["density", "spectrum"])),
            "mode": draw(st.sampled_from(["psd", "complex", "magnitude"])),  # angle, phase: kinks at 0 and pi
            "axis": axis,
        }
        return SampleInput((_array(draw(st.integers(0, 2**16)), shape, dtype),), kwargs)

    return draw()


def _torch_stft_samples(dtype):
    @st.composite
    def draw(draw):
        n_fft = draw(st.integers(4, 8))
        win_length = draw(st.integers(1, n_fft))
        center = draw(st.booleans())
        x = _array(draw(st.integers(0, 2**16)), draw(st.sampled_from([(12,), (2, 10)])), dtype)
        window = np.hanning(win_length + 2)[1:-1].astype(dtype)
        kwargs = {
            "hop_length": draw(st.none() | st.integers(1, 4)),
            "win_length": win_length,
            "center": center,
            "pad_mode": draw(st.sampled_from(["reflect", "constant", "replicate", "circular"])),
            "normalized": draw(st.booleans()),
            "onesided": draw(st.booleans()),
            "return_complex": draw(st.booleans()),
        }
        return SampleInput((x, n_fft), {"window": window, **kwargs})

    return draw()


OPINFOS += [
    _signal_entry(
        "resample",
        _resample_samples,
        ("RFFTN", "IRFFTN"),
        cast=False,
        error_inputs=(
            ErrorInput((np.ones(4), 0), exc=ValueError, match=r"^resample: num must be an int >= 1, got 0"),
            ErrorInput((np.ones(4), 3), {"window": np.ones(3)}, ValueError, r"^resample: the window must have one"),
        ),
    ),
    _signal_entry(
        "resample_complex",
        _resample_samples,
        ("FFTN",),
        cast=False,
        function="resample",
        dtypes=COMPLEX,
    ),
    _signal_entry(
        "spectrogram",
        _spectrogram_samples,
        ("RFFTN", "FFTN"),
        cast=False,
        kinks=True,  # magnitude: |z| at z == 0
        error_inputs=(
            ErrorInput((np.ones(8),), {"mode": "power"}, ValueError, r"^spectrogram: mode must be 'psd'"),
            ErrorInput((np.ones(8),), {"window": "cosine"}, ValueError, r"^spectrogram: window must be one of"),
        ),
    ),
    _signal_entry(
        "torch_stft",
        _torch_stft_samples,
        ("RFFTN", "FFTN"),
        cast=False,
        error_inputs=(
            ErrorInput((np.ones(8), 4), exc=ValueError, match=r"^torch_stft: stft requires the return_complex"),
            ErrorInput((np.ones((2, 2, 8)), 4), {"return_complex": True}, ValueError, r"^torch_stft: expected a 1D"),
        ),
    ),
]

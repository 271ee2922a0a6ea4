"""tl.signal's filters on complex signals, the fused second-order-section op, and hostile inputs, against
``scipy.signal`` (skipped without it) and the NumPy transcriptions in ``tensorlib.testing.references``."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads, references

SOS = np.array(
    [
        [0.0675, 0.1349, 0.0675, 1.0, -1.1430, 0.4128],
        [1.0, 2.0, 1.0, 1.0, -1.4, 0.6],
    ]
)  # two stable sections (poles inside 0.8)
B, A = np.array([0.2, 0.3, 0.1]), np.array([1.0, -0.6, 0.2])


def _complex(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _parts(reference, x, *args, **kwargs):
    """A real reference on a complex signal: its real and imaginary parts apart (the filters are real-linear)."""
    return reference(x.real, *args, **kwargs) + 1j * reference(x.imag, *args, **kwargs)


CASES = [
    ("filtfilt", lambda x: tl.signal.filtfilt(B, A, x, axis=-1), lambda x: references.filtfilt(B, A, x)),
    ("filtfilt_gust", lambda x: tl.signal.filtfilt(B, A, x, method="gust"), None),
    ("sosfilt", lambda x: tl.signal.sosfilt(SOS, x), lambda x: references.sosfilt(SOS, x)),
    ("sosfiltfilt", lambda x: tl.signal.sosfiltfilt(SOS, x), lambda x: references.sosfiltfilt(SOS, x)),
]


@pytest.mark.parametrize("name, ours, reference", CASES, ids=[c[0] for c in CASES])
def test_complex_signals_are_filtered_as_numpy_transcriptions_of_their_parts(name, ours, reference):
    x = _complex((2, 31), 1)
    got = ours(x)
    assert got.dtype == np.complex128 and got.shape == x.shape
    if reference is not None:
        np.testing.assert_allclose(got.numpy(), reference(x.real) + 1j * reference(x.imag), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["filtfilt", "filtfilt_gust", "sosfilt", "sosfilt_zi", "sosfiltfilt", "decimate"])
def test_complex_signals_match_scipy(name):
    scipy_signal = pytest.importorskip("scipy.signal")
    x = _complex((3, 40), 2)
    zi = _complex((2, 3, 2), 3)
    if name == "filtfilt":
        got, want = tl.signal.filtfilt(B, A, x.T, axis=0), scipy_signal.filtfilt(B, A, x.T, axis=0)
    elif name == "filtfilt_gust":
        got, want = tl.signal.filtfilt(B, A, x, method="gust"), scipy_signal.filtfilt(B, A, x, method="gust")
    elif name == "sosfilt":
        got, want = tl.signal.sosfilt(SOS, x), scipy_signal.sosfilt(SOS, x)
    elif name == "sosfilt_zi":
        (got, zf), (want, want_zf) = tl.signal.sosfilt(SOS, x, zi=zi), scipy_signal.sosfilt(SOS, x, zi=zi)
        np.testing.assert_allclose(zf.numpy(), want_zf, rtol=1e-10, atol=1e-12)
        (got_r, _), (want_r, _) = tl.signal.sosfilt(SOS, x.real, zi=zi), scipy_signal.sosfilt(SOS, x.real, zi=zi)
        np.testing.assert_allclose(got_r.numpy(), want_r, rtol=1e-10, atol=1e-12)  # real x, complex state
    elif name == "sosfiltfilt":
        got, want = tl.signal.sosfiltfilt(SOS, x), scipy_signal.sosfiltfilt(SOS, x)
    else:
        got, want = tl.signal.decimate(x, 3), scipy_signal.decimate(x, 3)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def _central_gradient(f, x, h=1e-6):
    """The gradient of the real ``f`` at a complex ``x`` by float64 central differences on the real and imaginary
    parts, in ``tl.grad``'s convention (docs/complex.md, JAX's): ``df/dRe - i df/dIm``."""
    grad = np.zeros(x.shape, complex)
    for index in np.ndindex(x.shape):
        for unit, part in ((1.0, 1.0), (1j, -1j)):
            step = np.zeros(x.shape, complex)
            step[index] = unit * h
            grad[index] += part * (f(x + step) - f(x - step)) / (2 * h)
    return grad


@pytest.mark.parametrize("name", ["filtfilt", "sosfilt", "sosfiltfilt"])
def test_complex_gradients_against_central_differences(name):
    x = _complex((12,), 4)
    u = _complex((12,), 5)
    run = {
        "filtfilt": lambda x: tl.signal.filtfilt(B, A, x, padlen=4),
        "sosfilt": lambda x: tl.signal.sosfilt(SOS, x),
        "sosfiltfilt": lambda x: tl.signal.sosfiltfilt(SOS, x, padlen=4),
    }[name]
    loss = lambda x: tl.real(tl.sum(u * run(x)))
    got = tl.grad(loss)(x).numpy()
    want = _central_gradient(lambda x: float(loss(x).numpy()), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    check_grads(run, (x,), order=1, modes=("rev",))


def test_complex_signals_traced_and_mapped():
    x = _complex((3, 25), 6)
    want = tl.signal.sosfiltfilt(SOS, x).numpy()
    traced = tl.function(lambda x: tl.signal.sosfiltfilt(SOS, x))
    np.testing.assert_allclose(traced(x).numpy(), want, rtol=1e-12)
    mapped = tl.vmap(lambda x: tl.signal.sosfiltfilt(SOS, x))
    np.testing.assert_allclose(mapped(x).numpy(), want, rtol=1e-12)
    mapped = tl.vmap(lambda x: tl.signal.filtfilt(B, A, x))
    np.testing.assert_allclose(mapped(x).numpy(), tl.signal.filtfilt(B, A, x).numpy(), rtol=1e-12)


def test_complex_coefficients_are_refused_clearly():
    x = _complex((9,), 7)
    with pytest.raises(TypeError, match=r"^sosfilt: complex coefficients are not supported"):
        tl.signal.sosfilt(SOS * 1j, x)
    with pytest.raises(TypeError, match=r"^filtfilt: complex coefficients are not supported"):
        tl.signal.filtfilt(B * 1j, A, x)


def test_sosfiltfilt_traced_with_numpy_sections_takes_the_default_padlen():
    # a NumPy sos inside tl.function is a constant of the graph: its values are known, so is the default padlen
    x = np.random.default_rng(8).standard_normal((2, 30))
    traced = tl.function(lambda x: tl.signal.sosfiltfilt(SOS, x))
    np.testing.assert_allclose(traced(x).numpy(), references.sosfiltfilt(SOS, x), rtol=1e-10, atol=1e-12)
    traced = tl.function(lambda x: tl.signal.sosfiltfilt(SOS.tolist(), x))
    np.testing.assert_allclose(traced(x).numpy(), references.sosfiltfilt(SOS, x), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"^sosfiltfilt: the default padlen depends on sos's values"):
        tl.function(lambda s, x: tl.signal.sosfiltfilt(s, x))(SOS, x)


# ---------------------------------------------------------------- SosFilter / SosFilterFrom: one op per pass
def _sections(count, seed, a0=1.0):
    """``count`` stable sections (complex pole pairs inside 0.85) with random numerators."""
    rng = np.random.default_rng(seed)
    radius, angle = rng.uniform(0.3, 0.85, count), rng.uniform(0.2, 2.8, count)
    a = np.stack([np.ones(count), -2 * radius * np.cos(angle), radius**2], 1)
    return np.concatenate([rng.uniform(-1, 1, (count, 3)), a * a0], 1)


def _per_section(sos, x, zi=None):
    """SciPy's transposed direct form II, section by section, in NumPy: a0 y[n] = sum b x - sum_{k>0} a y
    (the state zi entering as a0 zi at the first two samples, tl.signal.lfilter's convention)."""
    for s, (b0, b1, b2, a0, a1, a2) in enumerate(sos):
        y = np.zeros_like(x)
        n = x.shape[-1]
        for i in range(n):
            acc = b0 * x[..., i] + (b1 * x[..., i - 1] if i >= 1 else 0) + (b2 * x[..., i - 2] if i >= 2 else 0)
            acc = acc - (a1 * y[..., i - 1] if i >= 1 else 0) - (a2 * y[..., i - 2] if i >= 2 else 0)
            if zi is not None and i < 2:
                acc = acc + a0 * zi[s][..., i]
            y[..., i] = acc / a0
        x = y
    return x


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
@pytest.mark.parametrize("with_scipy", [True, False])
def test_sos_filter_op_against_a_direct_form_transcription(n, with_scipy, monkeypatch):
    from tensorlib.ops import iir

    if not with_scipy:
        monkeypatch.setattr(iir, "_scipy_sosfilt", lambda: None)
        monkeypatch.setattr(iir, "_scipy_lfilter", lambda: None)
    rng = np.random.default_rng(n)
    sos, x, zi = _sections(3, n), rng.standard_normal((2, n)), rng.standard_normal((3, 2, 2))
    np.testing.assert_allclose(iir.sos_filter(tl.tensor(sos), tl.tensor(x)).numpy(), _per_section(sos, x), atol=1e-12)
    got = iir.sos_filter(tl.tensor(sos), tl.tensor(x), tl.tensor(zi)).numpy()
    np.testing.assert_allclose(got, _per_section(sos, x, zi), atol=1e-12)
    scaled = _sections(2, n, a0=2.0)  # a0 != 1 (only reachable traced): the generic kernel's own loop
    got = iir.sos_filter(tl.tensor(scaled), tl.tensor(x), tl.tensor(zi[:2])).numpy()
    np.testing.assert_allclose(got, _per_section(scaled, x, zi[:2]), atol=1e-12)
    assert iir.sos_filter(tl.tensor(sos.astype(np.float32)), tl.tensor(x.astype(np.float32))).dtype == np.float32


@pytest.mark.parametrize("a0", [1.0, 1.5])
def test_sos_filter_op_gradients_by_central_differences(a0):
    from tensorlib.ops import iir

    rng = np.random.default_rng(9)
    sos, x, zi = _sections(2, 10, a0), rng.standard_normal((2, 7)), rng.standard_normal((2, 2, 2))
    check_grads(lambda s, x: iir.sos_filter(s, x), (sos, x), order=2, modes=("rev",))
    check_grads(lambda s, x, z: iir.sos_filter(s, x, z), (sos, x, zi), order=2, modes=("rev",))
    check_grads(lambda s, x, z: iir.sos_filter(s, x, z), (sos, x[:, :1], zi), order=1, modes=("rev",))


def test_sosfiltfilt_gradient_in_sos_and_x_by_central_differences():
    rng = np.random.default_rng(11)
    sos, x = _sections(2, 12), rng.standard_normal((2, 20))
    keep = np.ones(6)
    keep[3] = 0.0  # a0 stays 1 (SciPy refuses others): its derivative is zero here

    def run(s, x):
        return tl.signal.sosfiltfilt(s * keep + (1 - keep), x, padlen=5)

    check_grads(run, (sos, x), order=1, modes=("rev",))
    zi = rng.standard_normal((2, 2, 2))
    check_grads(lambda s, x, z: tl.signal.sosfilt(s * keep + (1 - keep), x, zi=z)[0], (sos, x, zi), modes=("rev",))


def test_sosfiltfilt_runs_one_op_per_pass(monkeypatch):
    from tensorlib.ops import iir

    calls = []
    kernel = iir._sos_from.kernels["numpy"]
    monkeypatch.setitem(iir._sos_from.kernels, "numpy", lambda *a: calls.append(1) or kernel(*a))
    sos, x = _sections(4, 13), np.random.default_rng(13).standard_normal((3, 60))
    np.testing.assert_allclose(tl.signal.sosfiltfilt(sos, x).numpy(), references.sosfiltfilt(sos, x), atol=1e-10)
    assert len(calls) == 2  # forward and backward, all sections in each


def test_sos_ops_traced_and_mapped():
    sos, x = _sections(3, 14), np.random.default_rng(14).standard_normal((4, 30))
    want = references.sosfiltfilt(sos, x)
    np.testing.assert_allclose(tl.function(lambda x: tl.signal.sosfiltfilt(sos, x))(x).numpy(), want, atol=1e-10)
    traced = tl.function(lambda s, x: tl.signal.sosfiltfilt(s, x, padlen=9))
    np.testing.assert_allclose(traced(sos, x).numpy(), references.sosfiltfilt(sos, x, padlen=9), atol=1e-10)
    np.testing.assert_allclose(tl.vmap(lambda x: tl.signal.sosfiltfilt(sos, x))(x).numpy(), want, atol=1e-10)
    np.testing.assert_allclose(tl.vmap(lambda x: tl.signal.sosfilt(sos, x))(x).numpy(), references.sosfilt(sos, x))
    many = np.stack([sos, _sections(3, 15)])  # one filter per element: mapped sections
    got = tl.vmap(lambda s, x: tl.signal.sosfiltfilt(s, x, padlen=9))(many, x[:2]).numpy()
    want_each = [references.sosfiltfilt(s, xi, padlen=9) for s, xi in zip(many, x[:2])]
    np.testing.assert_allclose(got, want_each, atol=1e-10)
    from tensorlib.ops import iir

    zi = np.random.default_rng(16).standard_normal((3, 4, 2))
    want = _per_section(sos, x, zi)
    for axes, args in (((0, 1), (x, zi)), ((0, None), (x, zi[:, 0]))):
        got = tl.vmap(lambda x, z: iir.sos_filter(tl.tensor(sos), x, z), in_axes=axes)(*args).numpy()
        np.testing.assert_allclose(got, want if axes[1] is not None else _per_section(sos, x, np.repeat(zi[:, :1], 4, 1)),
                                   atol=1e-12)  # fmt: skip
    grad = tl.grad(lambda x: tl.sum(tl.signal.sosfiltfilt(sos, x) ** 2))
    np.testing.assert_allclose(tl.vmap(grad)(x).numpy(), np.stack([grad(xi).numpy() for xi in x]), atol=1e-10)


# ---------------------------------------------------------------- lfilter from rest: one op, LinearFilter
def _direct_form(b, a, x):
    """a[0] y[n] = sum_k b[k] x[n-k] - sum_{k>0} a[k] y[n-k] along the last axis, a plain loop in float64."""
    x = np.asarray(x, np.float64)
    y = np.zeros_like(x)
    for i in range(x.shape[-1]):
        acc = sum(b[k] * x[..., i - k] for k in range(len(b)) if i >= k)
        acc = acc - sum(a[k] * y[..., i - k] for k in range(1, len(a)) if i >= k)
        y[..., i] = acc / a[0]
    return y


@pytest.mark.parametrize("n", [0, 1, 4, 40])
@pytest.mark.parametrize("shape", ["1d", "batch", "axis0"])
@pytest.mark.parametrize("a", [[1.0], [2.0], [1.0, -0.5, 0.2], [2.0, -0.5]])
def test_lfilter_one_op_against_a_direct_form_loop(n, shape, a, monkeypatch):
    from tensorlib.ops import iir

    calls = []
    kernel = iir._linear.kernels["numpy"]
    monkeypatch.setitem(iir._linear.kernels, "numpy", lambda *arrays: calls.append(1) or kernel(*arrays))
    b = np.array([0.3, -0.2, 0.5, 0.1])
    rng = np.random.default_rng(n)
    x = rng.standard_normal({"1d": (n,), "batch": (3, n), "axis0": (n, 2)}[shape])
    axis = 0 if shape == "axis0" else -1
    got = tl.signal.lfilter(b, np.array(a), x, axis=axis)
    want = np.moveaxis(_direct_form(b, a, np.moveaxis(x, axis, -1)), -1, axis)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    assert len(calls) == 1  # one op for the whole filter
    got32 = tl.signal.lfilter(b.astype(np.float32), np.float32(a), x.astype(np.float32), axis=axis)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32.numpy(), want, rtol=1e-4, atol=1e-5)


def test_lfilter_one_op_gradients_and_mapped_coefficients():
    rng = np.random.default_rng(17)
    b, x = rng.uniform(-1, 1, 4), rng.standard_normal((2, 9))
    for a in ([2.0], [1.5, -0.4, 0.2]):
        check_grads(lambda b, a, x: tl.signal.lfilter(b, a, x), (b, np.array(a), x), order=2, modes=("rev", "fwd"))
    bs = rng.uniform(-1, 1, (3, 4))
    got = tl.vmap(lambda b, x: tl.signal.lfilter(b, [1.0, -0.3], x))(bs, x[:1].repeat(3, 0)).numpy()
    np.testing.assert_allclose(got, [_direct_form(bi, [1.0, -0.3], x[0]) for bi in bs], rtol=1e-12, atol=1e-12)
    traced = tl.function(lambda b, a, x: tl.signal.lfilter(b, a, x))
    np.testing.assert_allclose(traced(b, np.array([1.5, -0.4]), x).numpy(), _direct_form(b, [1.5, -0.4], x), rtol=1e-12)
    with pytest.raises(ValueError, match=r"LinearFilter: a\[0\] == 0 leaves the recursion undefined"):
        traced(b, np.array([0.0, 1.0]), x)


# ---------------------------------------------------------------- detrend (scipy.signal.detrend)
DETREND_CASES = [
    ((5, 7), {}, np.float64),
    ((5, 7), {"axis": 0}, np.float64),
    ((5, 7), {"type": "c", "axis": 0}, np.float64),
    ((40,), {"bp": [5, 17, 17, 30]}, np.float64),
    ((40,), {"bp": 39}, np.float64),  # a last piece of one sample
    ((3, 40), {"bp": [0, 40, 12]}, np.float32),
    ((9,), {}, np.int64),
    ((9,), {"type": "constant"}, np.bool_),
    ((9,), {}, np.float16),
    ((1,), {}, np.float64),
    ((0,), {"type": "constant"}, np.float64),
    ((12,), {"bp": [4]}, np.complex128),
]


def _detrend_reference(x, axis=-1, type="linear", bp=0):  # noqa: A002
    """A least-squares line (np.polyfit-free: lstsq on [t, 1]) per piece, in float64 (complex128), then SciPy's dtype."""
    out_dtype = x.dtype if x.dtype.char in "dfDF" else np.float64
    y = np.moveaxis(np.asarray(x, np.complex128 if x.dtype.kind == "c" else np.float64), axis, -1).copy()
    if type in ("constant", "c"):
        y = y - y.mean(-1, keepdims=True)
    else:
        n = y.shape[-1]
        points = np.unique(np.r_[0, np.ravel(bp), n])
        for lo, hi in zip(points[:-1], points[1:]):
            design = np.stack([np.arange(hi - lo, dtype=float), np.ones(hi - lo)], 1)
            piece = y[..., lo:hi].reshape(-1, hi - lo).T
            coef = np.linalg.lstsq(design, piece, rcond=None)[0]
            y[..., lo:hi] = (piece - design @ coef).T.reshape(y[..., lo:hi].shape)
    return np.moveaxis(y, -1, axis).astype(out_dtype)


@pytest.mark.parametrize("shape, kwargs, dtype", DETREND_CASES)
def test_detrend_against_a_least_squares_fit_and_scipy(shape, kwargs, dtype):
    rng = np.random.default_rng(len(shape) + shape[0])
    x = (rng.standard_normal(shape) * 5).astype(dtype) if dtype != np.bool_ else rng.random(shape) > 0.5
    if dtype == np.complex128:
        x = x + 1j * rng.standard_normal(shape)
    got = tl.signal.detrend(x, **kwargs)
    want = _detrend_reference(x, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-5 if got.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    scipy_signal = pytest.importorskip("scipy.signal")
    if x.size:
        np.testing.assert_allclose(got.numpy(), scipy_signal.detrend(x, **kwargs), rtol=tol, atol=tol)


def test_detrend_errors_gradient_and_the_input_untouched():
    x = np.random.default_rng(18).standard_normal((3, 20))
    before = x.copy()
    check_grads(lambda x: tl.signal.detrend(x, bp=[7]), (x,), order=2, modes=("rev", "fwd"))
    np.testing.assert_array_equal(x, before)
    with pytest.raises(ValueError, match=r"^detrend: breakpoints must be within \[0, 20\]"):
        tl.signal.detrend(x, bp=25)
    with pytest.raises(ValueError, match=r"^detrend: type must be 'linear' or 'constant'"):
        tl.signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match=r"^detrend: type='linear' needs at least one sample"):
        tl.signal.detrend(np.zeros((2, 0)))
    traced = tl.function(lambda x: tl.signal.detrend(x, axis=0, bp=[1]))
    np.testing.assert_allclose(traced(x).numpy(), _detrend_reference(x, axis=0, bp=[1]), atol=1e-12)
    mapped = tl.vmap(lambda x: tl.signal.detrend(x, bp=[5]))(x)
    np.testing.assert_allclose(mapped.numpy(), _detrend_reference(x, bp=[5]), atol=1e-12)


# ---------------------------------------------------------------- filtfilt with constant coefficients
@pytest.mark.parametrize("padtype", ["odd", "even", "constant", None])
@pytest.mark.parametrize("b, a", [([0.5, 0.5], [1.0]), ([1.0], [2.0, -0.5]), ([0.2, 0.3], [1.5, -0.4, 0.1])])
def test_filtfilt_constant_coefficients_two_filter_ops(padtype, b, a, monkeypatch):
    from tensorlib.ops import iir

    calls = []
    for op in (iir._linear, iir._all_pole, iir._fir):
        kernel = op.kernels["numpy"]
        monkeypatch.setitem(op.kernels, "numpy", lambda *arrays, k=kernel, n=op.name: calls.append(n) or k(*arrays))
    x = np.random.default_rng(19).standard_normal((2, 30))
    got = tl.signal.filtfilt(np.array(b), np.array(a), x, padtype=padtype)
    calls_now = list(calls)
    np.testing.assert_allclose(got.numpy(), references.filtfilt(b, a, x, padtype=padtype), rtol=1e-10, atol=1e-12)
    assert calls_now == ["LinearFilter", "LinearFilter"]  # the steady state's response is NumPy's, once
    check_grads(lambda x: tl.signal.filtfilt(np.array(b), np.array(a), x, padtype=padtype), (x,), modes=("rev",))
    traced = tl.function(lambda x: tl.signal.filtfilt(b, a, x, padtype=padtype))
    np.testing.assert_allclose(traced(x).numpy(), got.numpy(), rtol=1e-12, atol=1e-14)


def test_coefficients_in_a_list_holding_a_tensor_still_differentiate():
    # a list of coefficients holding a tensor is not a constant: its steady state must stay differentiable
    x = np.random.default_rng(20).standard_normal(30)

    def filtfilt_of(c):
        return float(np.sum(references.filtfilt([c, 0.5], [1.0, -0.3], x) ** 2))

    got = tl.grad(lambda c: tl.sum(tl.signal.filtfilt([c, 0.5], [1.0, -0.3], x) ** 2))(tl.tensor(0.7)).numpy()
    h = 1e-6
    np.testing.assert_allclose(got, (filtfilt_of(0.7 + h) - filtfilt_of(0.7 - h)) / (2 * h), rtol=1e-6)

    def sos_of(c):
        return np.array([[0.2, c, 0.1, 1.0, -0.4, 0.1]])

    def sosfiltfilt_of(c):
        return float(np.sum(references.sosfiltfilt(sos_of(c), x) ** 2))

    loss = lambda c: tl.sum(tl.signal.sosfiltfilt([[0.2, c, 0.1, 1.0, -0.4, 0.1]], x) ** 2)  # noqa: E731
    got = tl.grad(loss)(tl.tensor(0.3)).numpy()
    np.testing.assert_allclose(got, (sosfiltfilt_of(0.3 + h) - sosfiltfilt_of(0.3 - h)) / (2 * h), rtol=1e-6)

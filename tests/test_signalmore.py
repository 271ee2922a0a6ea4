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
    loss = lambda x: tl.real(tl.sum(u * run(x)))  # noqa: E731
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

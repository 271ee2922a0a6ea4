"""tl.fft beyond the catalogue (``tensorlib/testing/op_db_fft.py``): round trips, gradients of known closed forms."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("n", [5, 6])
def test_irfft_of_rfft_is_the_identity_and_so_is_its_gradient(n):
    x = tl.tensor(RNG.standard_normal((2, n)))
    np.testing.assert_allclose(tl.fft.irfft(tl.fft.rfft(x), n=n).numpy(), x.numpy(), atol=1e-12)
    w = RNG.standard_normal((2, n))
    g = tl.grad(lambda x: tl.sum(tl.fft.irfft(tl.fft.rfft(x), n=n) * w))(x)
    np.testing.assert_allclose(g.numpy(), w, atol=1e-12)


def test_ortho_transform_preserves_the_norm_and_its_gradient_is_twice_the_signal():
    x = tl.tensor(RNG.standard_normal(8))
    energy = lambda x: tl.sum(tl.abs(tl.fft.fft(x, norm="ortho")) ** 2)  # noqa: E731
    np.testing.assert_allclose(float(energy(x)), float(tl.sum(x * x)), rtol=1e-12)
    np.testing.assert_allclose(tl.grad(energy)(x).numpy(), 2 * x.numpy(), atol=1e-12)


def test_float32_signals_stay_single_precision():
    x = np.ones(4, np.float32)
    assert tl.fft.fft(x).dtype == np.complex64 and tl.fft.rfft(x).dtype == np.complex64
    assert tl.fft.irfft(tl.fft.rfft(x)).dtype == np.float32
    assert (
        tl.grad(lambda x: tl.sum(tl.abs(tl.fft.rfft(x))))(tl.tensor(x + np.arange(4, dtype=np.float32))).dtype
        == np.float32
    )


def test_integer_signals_give_complex128_as_in_numpy():
    assert tl.fft.fft(np.arange(4)).dtype == np.fft.fft(np.arange(4)).dtype
    np.testing.assert_array_equal(
        tl.fft.fftshift(np.arange(6).reshape(2, 3)).numpy(), np.fft.fftshift(np.arange(6).reshape(2, 3))
    )

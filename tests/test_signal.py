"""tl.signal (TensorFlow's tf.signal for short-time Fourier analysis): frame, overlap_and_add, stft, inverse_stft
and the windows, against NumPy transcriptions (sliding frames, np.fft.rfft, a loop of additions), the adjoint
identity of frame and overlap_and_add, reconstruction, float64 central differences, traced == eager; against
TensorFlow, PyTorch and SciPy where installed."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)


def _frames(x, length, step, pad_end=False, pad_value=0.0):
    n = x.shape[-1]
    if pad_end:
        count = -(-n // step)
        total = max((count - 1) * step + length, n)
        x = np.concatenate([x, np.full(x.shape[:-1] + (total - n,), pad_value, x.dtype)], -1)
    else:
        count = max(0, 1 + (n - length) // step)
    return (
        np.stack([x[..., i * step : i * step + length] for i in range(count)], -2)
        if count
        else np.zeros(x.shape[:-1] + (0, length), x.dtype)
    )


def _hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n) if n > 1 else np.ones(n)


CONFIGS = [
    (64, 16, 8, None, False),
    (50, 12, 5, 16, True),
    (37, 10, 3, 32, False),
    (20, 7, 7, 8, True),
    (5, 8, 4, None, False),
]


@pytest.mark.parametrize("n, length, step, fft_length, pad_end", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stft_is_windowed_frames_through_rfft(n, length, step, fft_length, pad_end, dtype):
    x = RNG.standard_normal((2, n)).astype(dtype)
    fft_n = fft_length or 2 ** int(np.ceil(np.log2(length)))
    frames = _frames(x.astype(np.float64), length, step, pad_end)
    want = np.fft.rfft(frames * _hann(length), n=fft_n)
    got = tl.signal.stft(x, length, step, fft_length, pad_end=pad_end)
    assert got.dtype == (np.complex64 if dtype == np.float32 else np.complex128) and got.shape == want.shape
    np.testing.assert_allclose(
        got.numpy(), want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4 if dtype == np.float32 else 1e-12
    )
    np.testing.assert_allclose(
        tl.function(lambda s: tl.signal.stft(s, length, step, fft_length, pad_end=pad_end))(x).numpy(),
        got.numpy(),
        rtol=1e-6,
        atol=1e-6,
    )


def test_frame_along_any_axis_with_padding_and_its_adjoint():
    x = RNG.standard_normal((3, 11, 2))
    got = tl.signal.frame(x, 4, 3, pad_end=True, pad_value=-1.0, axis=1)
    want = np.moveaxis(_frames(np.moveaxis(x, 1, -1), 4, 3, True, -1.0), (-2, -1), (1, 2))
    np.testing.assert_array_equal(got.numpy(), want)
    # <frame(x), y> = <x, overlap_and_add(y)>: overlap_and_add is frame's adjoint (without padding).
    signal, frames = RNG.standard_normal((2, 20)), RNG.standard_normal((2, 6, 5))
    lhs = np.sum(tl.signal.frame(signal, 5, 3).numpy() * frames)
    rhs = np.sum(signal * tl.signal.overlap_and_add(frames, 3).numpy())
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


def test_overlap_and_add_against_a_loop_also_traced_with_an_unknown_batch():
    frames = RNG.standard_normal((4, 6, 5))
    want = np.zeros((4, 5 * 3 + 5))
    for i in range(6):
        want[:, i * 3 : i * 3 + 5] += frames[:, i]
    np.testing.assert_allclose(tl.signal.overlap_and_add(frames, 3).numpy(), want, rtol=1e-13)
    traced = tl.function(
        lambda f: tl.signal.overlap_and_add(f, 3), input_signature=[tl.TensorSpec((None, 6, 5), tl.float64)]
    )
    np.testing.assert_allclose(traced(frames).numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(traced(frames[:1]).numpy(), want[:1], rtol=1e-13)


@pytest.mark.parametrize("length, step", [(16, 4), (12, 3), (10, 5), (9, 3)])
def test_inverse_stft_with_the_inverse_window_reconstructs_the_signal(length, step):
    x = RNG.standard_normal(90)
    spec = tl.signal.stft(x, length, step, pad_end=False)
    back = tl.signal.inverse_stft(spec, length, step, window_fn=tl.signal.inverse_stft_window_fn(step)).numpy()
    inner = slice(length, back.shape[0] - length)  # where every sample is covered by all its frames
    np.testing.assert_allclose(back[inner], x[: back.shape[0]][inner], rtol=1e-10, atol=1e-12)


def test_gradients_of_a_spectral_loss_and_of_the_inverse():
    x = RNG.standard_normal(30)
    tl.testing.check_grads(lambda s: tl.sum(tl.abs(tl.signal.stft(s, 8, 3, 8)) ** 2), [x], order=2)
    w = RNG.standard_normal(29)  # 8 frames: 7 * 3 + 8 samples
    tl.testing.check_grads(
        lambda s: tl.sum(tl.signal.inverse_stft(tl.signal.stft(s, 8, 3, 8), 8, 3, 8) * w), [x], order=1
    )


def test_windows_and_errors():
    np.testing.assert_allclose(tl.signal.hann_window(7, dtype=tl.float64).numpy(), _hann(7), rtol=1e-15)
    np.testing.assert_allclose(
        tl.signal.hamming_window(6, periodic=False, dtype=tl.float64).numpy(), np.hamming(6), rtol=1e-13
    )
    with pytest.raises(ValueError, match=r"stft: frame_length must be an int >= 1, got 0"):
        tl.signal.stft(np.ones(8), 0, 2)
    with pytest.raises(TypeError, match=r"stft: signals must be real, got complex128"):
        tl.signal.stft(np.ones(8) * 1j, 4, 2)
    with pytest.raises(ValueError, match=r"stft: window_fn\(4\) gave shape \(5,\), not \(4,\)"):
        tl.signal.stft(np.ones(8), 4, 2, window_fn=lambda n, dtype: tl.ones((n + 1,), dtype=dtype))
    with pytest.raises(ValueError, match=r"overlap_and_add: signal must be \(\.\.\., frames, frame_length\)"):
        tl.signal.overlap_and_add(np.ones(4), 2)


def test_matches_tensorflow_and_torch():
    tf = pytest.importorskip("tensorflow")
    for n, length, step, fft_length, pad_end in CONFIGS:
        x = RNG.standard_normal((2, n)).astype(np.float32)
        ours = tl.signal.stft(x, length, step, fft_length, pad_end=pad_end, window_fn=tl.signal.hann_window)
        if length % 2:  # TensorFlow's periodic window of odd length is the symmetric one: compare with no window
            ours = tl.signal.stft(x, length, step, fft_length, pad_end=pad_end, window_fn=None)
            theirs = tf.signal.stft(x, length, step, fft_length, pad_end=pad_end, window_fn=None).numpy()
        else:
            theirs = tf.signal.stft(x, length, step, fft_length, pad_end=pad_end).numpy()
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(
            tl.signal.inverse_stft(ours, length, step, fft_length, window_fn=None).numpy(),
            tf.signal.inverse_stft(theirs, length, step, fft_length, window_fn=None).numpy(),
            rtol=1e-4, atol=1e-4,
        )  # fmt: skip
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(100)
    theirs = torch.stft(
        torch.tensor(x), 16, 4, window=torch.hann_window(16, dtype=torch.float64), center=False, return_complex=True
    )
    np.testing.assert_allclose(tl.signal.stft(x, 16, 4, 16).numpy().T, theirs.numpy(), rtol=1e-12, atol=1e-12)

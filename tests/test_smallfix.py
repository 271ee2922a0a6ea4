"""Regression tests for five small defects: float0 gradients under tl.function, the sign of zero in two-sided
spectrograms, PixelShuffle layers on (*, C, H, W), torch_stft of integers, polygamma of a bool order."""

import numpy as np
import pytest

import tensorlib as tl


# ---------------------------------------------------------------- 1. tl.function of tl.grad(allow_int=True)
def _loss(x, n):
    return tl.sum(x * x) * 2.0


def _assert_same_grads(traced, eager):
    assert len(traced) == len(eager)
    for t, e in zip(traced, eager):
        if isinstance(e, np.ndarray):
            assert isinstance(t, np.ndarray) and t.dtype == e.dtype and t.shape == e.shape
        else:
            np.testing.assert_allclose(np.asarray(t), np.asarray(e), rtol=1e-6)
            assert t.dtype == e.dtype and t.shape == e.shape


@pytest.mark.parametrize("n", [np.array([3, 4]), np.array(5), np.array([[True, False]]), np.zeros((0, 2), np.int32)])
def test_traced_grad_allow_int_returns_the_eager_float0(n):
    x = tl.tensor([1.0, 2.0])
    g = tl.grad(_loss, argnums=(0, 1), allow_int=True)
    eager = g(x, tl.tensor(n))
    traced = tl.function(g)(x, tl.tensor(n))
    _assert_same_grads(traced, eager)
    # d/dx sum(2 x^2) = 4 x, by hand
    np.testing.assert_allclose(np.asarray(traced[0]), [4.0, 8.0])
    assert traced[1].dtype.names == ("float0",) and traced[1].shape == n.shape


def test_traced_float0_is_a_new_array_at_each_call():
    f = tl.function(tl.grad(_loss, argnums=1, allow_int=True))
    x, n = tl.tensor([1.0, 2.0]), tl.tensor([3, 4])
    a = f(x, n)
    a.shape = (1, 2)  # the caller's to change: the next call must not see it
    b = f(x, n)
    assert b.shape == (2,) and b is not a


def test_traced_value_and_grad_allow_int_nested():
    def loss(p):
        return tl.sum(p["w"] * tl.cast(p["k"], "float32"))

    p = {"w": tl.tensor([1.0, 2.0, 3.0]), "k": tl.tensor([2, 3, 4])}
    v_e, g_e = tl.value_and_grad(loss, allow_int=True)(p)
    v_t, g_t = tl.function(tl.value_and_grad(loss, allow_int=True))(p)
    assert float(v_t) == float(v_e) == 20.0
    np.testing.assert_allclose(np.asarray(g_t["w"]), [2.0, 3.0, 4.0])
    assert g_t["k"].dtype == g_e["k"].dtype and g_t["k"].shape == (3,)


def test_traced_float0_with_an_unknown_dim_is_a_clear_error():
    f = tl.function(
        tl.grad(_loss, argnums=(0, 1), allow_int=True),
        input_signature=[tl.TensorSpec((None,), "float32"), tl.TensorSpec((None,), "int64")],
    )
    with pytest.raises(TypeError, match=r"allow_int=True.*unknown dim.*input_signature"):
        f(tl.tensor([1.0, 2.0]), tl.tensor([3, 4]))


def test_saving_a_graph_with_a_float0_output_is_a_clear_error(tmp_path):
    f = tl.function(tl.grad(_loss, argnums=(0, 1), allow_int=True))
    with pytest.raises(ValueError, match=r"graph.save: an output is a float0\(2,\) array.*allow_int=True"):
        f.save(tmp_path / "g.tlg", tl.tensor([1.0, 2.0]), tl.tensor([3, 4]))


def test_traced_float0_matches_jax_jit():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def jloss(x, n):
        return jnp.sum(x * x) * 2.0

    x, n = np.array([1.0, 2.0], np.float32), np.array([3, 4], np.int32)
    jx, jn = jax.jit(jax.grad(jloss, argnums=(0, 1), allow_int=True))(x, n)
    tx, tn = tl.function(tl.grad(_loss, argnums=(0, 1), allow_int=True))(tl.tensor(x), tl.tensor(n))
    np.testing.assert_allclose(np.asarray(tx), np.asarray(jx), rtol=1e-6)
    assert tn.dtype == jn.dtype and tn.shape == jn.shape


# ---------------------------------------------------------------- 2. two-sided spectra: the sign of a zero
def _signal(dtype=np.float64):
    return (np.random.default_rng(0).standard_normal((2, 300)) * 10).astype(dtype)


def _dc_nyquist_angles(x, nfft):
    """SciPy's rule, by hand (boxcar window): scipy.fft.fft of the real float64 segments gives bins 0 and nfft/2
    (real numbers) an imaginary part of -0.0, so a negative one has angle -pi."""
    segments = np.lib.stride_tricks.sliding_window_view(x, 64, axis=-1)[..., ::56, :]
    segments = segments - segments.mean(-1, keepdims=True)
    real_bins = np.fft.fft(segments, n=nfft)[..., [0, nfft // 2]].real
    return np.moveaxis(np.where(real_bins < 0, -np.pi, 0.0), -2, -1)


@pytest.mark.parametrize("mode", ["angle", "phase"])
@pytest.mark.parametrize("nfft", [64, 70])
def test_two_sided_spectrogram_angle_of_negative_real_bins_is_minus_pi(mode, nfft):
    x = _signal()
    _, _, got = tl.signal.spectrogram(x, window="boxcar", mode=mode, nperseg=64, nfft=nfft, return_onesided=False)
    got = got.numpy()[:, [0, nfft // 2], :]
    if mode == "angle":
        np.testing.assert_allclose(got, _dc_nyquist_angles(x, nfft), atol=1e-12)
    else:  # the first bin is where unwrapping starts: its angle is kept
        np.testing.assert_allclose(got[:, 0], _dc_nyquist_angles(x, nfft)[:, 0], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("mode", ["angle", "phase", "complex", "magnitude", "psd"])
def test_two_sided_spectrogram_matches_scipy_to_the_sign_of_zero(dtype, mode):
    scipy_signal = pytest.importorskip("scipy.signal")
    x = _signal(dtype)
    _, _, want = scipy_signal.spectrogram(x, mode=mode, nperseg=64, return_onesided=False)
    _, _, got = tl.signal.spectrogram(x, mode=mode, nperseg=64, return_onesided=False)
    got = got.numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5 * np.abs(want).max())
    np.testing.assert_array_equal(np.signbit(np.imag(got)), np.signbit(np.imag(want)))


@pytest.mark.parametrize("nfft", [None, 65, 70])
def test_two_sided_csd_and_welch_match_scipy(nfft):
    scipy_signal = pytest.importorskip("scipy.signal")
    x, y = _signal(), np.random.default_rng(1).standard_normal((2, 300))
    _, want = scipy_signal.csd(x, y, nperseg=64, nfft=nfft, return_onesided=False)
    _, got = tl.signal.csd(x, y, nperseg=64, nfft=nfft, return_onesided=False)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.signbit(got.numpy().imag), np.signbit(want.imag))
    _, want = scipy_signal.welch(x, nperseg=64, nfft=nfft, return_onesided=False)
    _, got = tl.signal.welch(x, nperseg=64, nfft=nfft, return_onesided=False)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_two_sided_spectrogram_gradient_matches_central_differences():
    x0 = np.random.default_rng(3).standard_normal(80)
    w = np.random.default_rng(4).standard_normal((32, 2))

    def f(x):
        _, _, s = tl.signal.spectrogram(x, mode="complex", nperseg=32, return_onesided=False)
        return tl.sum(tl.real(s) * w) + tl.sum(tl.imag(s) * w[::-1])

    g = tl.grad(f)(tl.tensor(x0)).numpy()
    d = np.random.default_rng(5).standard_normal(80)
    eps = 1e-6
    numeric = (float(f(tl.tensor(x0 + eps * d))) - float(f(tl.tensor(x0 - eps * d)))) / (2 * eps)
    np.testing.assert_allclose(g @ d, numeric, rtol=1e-6)


# ---------------------------------------------------------------- 3. PixelShuffle layers on (*, C, H, W)
def _shuffle_by_definition(x, r):
    """PyTorch's definition: out[..., c, h * r + i, w * r + j] = x[..., c * r * r + i * r + j, h, w]."""
    *lead, crr, h, w = x.shape
    c = crr // (r * r)
    out = np.empty((*lead, c, h * r, w * r), x.dtype)
    for ch in range(c):
        for i in range(r):
            for j in range(r):
                out[..., ch, i::r, j::r] = x[..., ch * r * r + i * r + j, :, :]
    return out


@pytest.mark.parametrize("shape", [(8, 2, 3), (2, 3, 8, 2, 3), (1, 1, 1, 4, 1, 1)])
def test_pixel_shuffle_layers_take_unbatched_and_several_leading_axes(shape):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    want = _shuffle_by_definition(x, 2)
    np.testing.assert_array_equal(tl.nn.PixelShuffle(2, data_format="NCHW")(x).numpy(), want)
    np.testing.assert_array_equal(tl.nn.PixelUnshuffle(2, data_format="NCHW")(want).numpy(), x)
    last = np.moveaxis(x, -3, -1)
    np.testing.assert_array_equal(tl.nn.PixelShuffle(2)(last).numpy(), np.moveaxis(want, -3, -1))
    np.testing.assert_array_equal(tl.nn.PixelUnshuffle(2)(np.moveaxis(want, -3, -1)).numpy(), last)
    np.testing.assert_array_equal(tl.nn.PixelShuffle(2)(last).numpy(), tl.nn.pixel_shuffle(last, 2).numpy())


def test_pixel_shuffle_layers_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 2, 3))
    for xs in [x, x[1, 2]]:
        want = torch.nn.PixelShuffle(2)(torch.tensor(xs)).numpy()
        np.testing.assert_array_equal(tl.nn.PixelShuffle(2, data_format="NCHW")(xs).numpy(), want)
        back = torch.nn.PixelUnshuffle(2)(torch.tensor(want)).numpy()
        np.testing.assert_array_equal(tl.nn.PixelUnshuffle(2, data_format="NCHW")(want).numpy(), back)


def test_pixel_shuffle_layer_of_2d_input_is_a_clear_error():
    with pytest.raises(
        ValueError, match=r"^PixelShuffle: input must be NCHW, with no or more leading .*\(x shape \(4, 4\)"
    ):
        tl.nn.PixelShuffle(2, data_format="NCHW")(np.ones((4, 4)))


# ---------------------------------------------------------------- 4. torch_stft of integers
def _stft_by_hand(x, n_fft, hop):
    """torch.stft's definition with a box window, center=True, reflect padding, onesided, in float64 NumPy."""
    padded = np.pad(np.asarray(x, np.float64), n_fft // 2, mode="reflect")
    starts = range(0, len(padded) - n_fft + 1, hop)
    return np.stack([np.fft.rfft(padded[s : s + n_fft]) for s in starts], axis=-1)


@pytest.mark.parametrize("x", [np.arange(16), np.arange(16, dtype=np.int8) % 3, np.arange(16) % 3 > 0])
def test_torch_stft_of_integers_and_bools_is_complex128(x):
    got = tl.signal.torch_stft(x, 8, return_complex=True)
    assert got.dtype == np.complex128 and got.shape == (5, 9)
    np.testing.assert_allclose(got.numpy(), _stft_by_hand(x, 8, 2), atol=1e-12)
    parts = tl.signal.torch_stft(x, 8, return_complex=False)
    assert parts.dtype == np.float64 and parts.shape == (5, 9, 2)


def test_torch_stft_of_integers_keeps_torchs_return_complex_rule():
    with pytest.raises(ValueError, match=r"^torch_stft: stft requires the return_complex parameter"):
        tl.signal.torch_stft(np.arange(16), 8)


def test_torch_stft_integer_window_and_torch_reference():
    x = np.arange(16)
    got = tl.signal.torch_stft(x, 8, window=np.ones(8, np.int64), return_complex=True)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got.numpy(), _stft_by_hand(x, 8, 2), atol=1e-12)
    torch = pytest.importorskip("torch")
    want = torch.stft(
        torch.tensor(x, dtype=torch.float64), 8, window=torch.ones(8, dtype=torch.float64), return_complex=True
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


# ---------------------------------------------------------------- 5. polygamma / expn of a bool order
_EULER = 0.5772156649015329


@pytest.mark.parametrize(
    "n", [True, False, np.True_, np.array(True), np.array([True, False]), tl.tensor([True, False])], ids=repr
)
def test_polygamma_of_a_bool_order_is_order_1_or_0(n):
    pytest.importorskip("scipy")
    got = tl.special.polygamma(n, tl.tensor(0.5, "float64")).numpy()
    # closed forms: psi(1/2) = -gamma - 2 log 2, psi'(1/2) = pi**2 / 2
    want = np.where(np.asarray(n.numpy() if isinstance(n, tl.Tensor) else n), np.pi**2 / 2, -_EULER - 2 * np.log(2))
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_bool_order_traced_vmapped_and_differentiated():
    pytest.importorskip("scipy")
    x = tl.tensor([0.5, 0.5], "float64")
    want = [np.pi**2 / 2, -_EULER - 2 * np.log(2)]
    f = tl.function(lambda n, x: tl.special.polygamma(n, x))
    np.testing.assert_allclose(f(tl.tensor([True, False]), x).numpy(), want, rtol=1e-13)
    vmapped = tl.vmap(lambda n: tl.special.polygamma(n, tl.tensor(0.5, "float64")))(tl.tensor([True, False]))
    np.testing.assert_allclose(vmapped.numpy(), want, rtol=1e-13)
    # d/dx psi'(x) = psi''(x); psi''(1/2) = -14 zeta(3)
    zeta3 = 1.2020569031595942
    np.testing.assert_allclose(float(tl.grad(lambda x: tl.special.polygamma(True, x))(x[0])), -14 * zeta3, rtol=1e-12)


def test_bool_order_matches_scipy_and_keeps_the_other_order_checks():
    special = pytest.importorskip("scipy.special")
    n = np.array([[True], [False]])
    x = np.array([0.3, 1.7, 4.0])
    np.testing.assert_allclose(tl.special.polygamma(n, x).numpy(), special.polygamma(n, x), rtol=1e-13)
    np.testing.assert_allclose(tl.special.expn(n, x).numpy(), special.expn(n, x), rtol=1e-13)
    for bad in (-1, 1.5, "a", None, np.array([1, -1])):
        with pytest.raises(ValueError, match=r"^Polygamma: the order n must be a non-negative integer"):
            tl.special.polygamma(bad, x)


# ---------------------------------------------------------------- 6. tl.vmap of tl.grad(allow_int=True)
@pytest.mark.parametrize("traced", [False, True])
def test_vmap_of_grad_allow_int_batches_the_float0(traced):
    g = tl.vmap(tl.grad(_loss, argnums=(0, 1), allow_int=True))
    g = tl.function(g) if traced else g
    gx, gn = g(tl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), tl.tensor([[1, 2], [3, 4], [5, 6]]))
    np.testing.assert_allclose(np.asarray(gx), 4 * np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert gn.dtype.names == ("float0",) and gn.shape == (3, 2)


def test_vmap_float0_out_axes_and_unmapped_int_argument():
    g = tl.grad(_loss, argnums=(0, 1), allow_int=True)
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert tl.vmap(g, out_axes=(0, 1))(x, tl.tensor([[1, 2], [3, 4], [5, 6]]))[1].shape == (2, 3)
    assert tl.vmap(g, in_axes=(0, None))(x, tl.tensor([1, 2, 3, 4]))[1].shape == (3, 4)
    with pytest.raises(ValueError, match=r"out_axes 3 is out of range for out\[1\]"):
        tl.vmap(g, out_axes=(0, 3))(x, tl.tensor([[1, 2], [3, 4], [5, 6]]))
    unknown = tl.function(
        tl.vmap(g), input_signature=[tl.TensorSpec((None, 2), "float32"), tl.TensorSpec((None, 2), "int64")]
    )
    with pytest.raises(TypeError, match=r"tl.vmap: out\[1\] is a float0 gradient .* give the mapped axis a known size"):
        unknown(x, tl.tensor([[1, 2], [3, 4], [5, 6]]))


def test_vmap_float0_matches_jax():
    jax = pytest.importorskip("jax")
    x, n = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32), np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    jx, jn = jax.vmap(jax.grad(lambda x, n: (x * x).sum() * 2.0, argnums=(0, 1), allow_int=True), out_axes=(0, 1))(x, n)
    tx, tn = tl.vmap(tl.grad(_loss, argnums=(0, 1), allow_int=True), out_axes=(0, 1))(tl.tensor(x), tl.tensor(n))
    np.testing.assert_allclose(np.asarray(tx), np.asarray(jx), rtol=1e-6)
    assert tn.dtype == jn.dtype and tn.shape == jn.shape

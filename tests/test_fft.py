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


@pytest.mark.parametrize(
    "call",
    [
        lambda x: tl.fft.fft(x, n=4.5),
        lambda x: tl.fft.rfft(x, n=4.0),
        lambda x: tl.fft.irfft(x, n=True),
        lambda x: tl.fft.ifft(x, axis=0.7),
        lambda x: tl.fft.fftn(x, s=(2.5, 3), axes=(0, 1)),
        lambda x: tl.fft.rfftn(x, axes="01"),
        lambda x: tl.fft.fftshift(x, axes=1.0),
    ],
)
def test_sizes_and_axes_that_are_not_ints_raise_instead_of_being_truncated(call):
    # int() read n=4.5 as 4 and axis=0.7 as axis 0: a transform of another length or axis, silently.
    with pytest.raises(TypeError, match=r"fft\w*: (n|s|axis|axes) must be .* \(input shape \(3, 6\) float64\)"):
        call(np.ones((3, 6)))


def test_s_entries_of_minus_one_and_none_follow_numpy_2():
    x = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    # -1: the whole input along that axis; None: the one-dimensional transform's default.
    np.testing.assert_allclose(tl.fft.fftn(x, s=(-1, 6), axes=(0, 1)).numpy(), np.fft.fftn(x, s=(3, 6), axes=(0, 1)))
    np.testing.assert_allclose(
        tl.fft.irfftn(x, s=(2, -1), axes=(0, 1)).numpy(), np.fft.irfftn(x, s=(2, 4), axes=(0, 1))
    )
    np.testing.assert_allclose(
        tl.fft.irfftn(x, s=(2, None), axes=(0, 1)).numpy(), np.fft.irfftn(x, s=(2, 6), axes=(0, 1))
    )
    with pytest.raises(ValueError, match=r"fft: invalid number of data points -1 \(input shape \(3, 4\) complex128\)"):
        tl.fft.fft(x, n=-1)  # n has no -1, as in NumPy


@pytest.mark.parametrize("shift", [tl.fft.fftshift, tl.fft.ifftshift])
@pytest.mark.parametrize("shape, axes", [((1, 1), None), ((3,), ()), ((), None)])
def test_a_shift_that_moves_nothing_is_still_a_new_tensor(shift, shape, axes):
    # The caller's Variable came back as the result, so assigning to it changed the "result".
    v = tl.Variable(np.ones(shape))
    out = shift(v, axes=axes)
    v.assign(np.zeros(shape))
    assert type(out) is tl.Tensor
    np.testing.assert_array_equal(out.numpy(), np.ones(shape))


def test_traced_sizes_unknown_until_run_time():
    x = RNG.standard_normal((2, 5))
    rfft = tl.function(lambda a: tl.fft.rfft(a))
    graph = rfft.get_graph(tl.TensorSpec((2, None), "float64"))
    assert graph.outputs[0].shape == (2, None)
    np.testing.assert_allclose(graph(x).numpy(), np.fft.rfft(x))
    # irfft's default size and fft's n=3 trace too (tests/test_graph_unknown_dims.py).
    for f, match in [
        (tl.fft.fftshift, r"fftshift: the shift needs the size of each axis in \(0, 1\), unknown here"),
        (lambda a: tl.grad(lambda a: tl.sum(tl.abs(tl.fft.rfft(a))))(a), r"RFFTN: the gradient zero-pads"),
    ]:
        with pytest.raises(ValueError, match=match + r".*\(input shape \(2, None\) float64\)"):
            tl.function(f).get_graph(tl.TensorSpec((2, None), "float64"))


def test_a_norm_that_is_not_a_string_names_the_function():
    with pytest.raises(ValueError, match=r"ifft: norm must be None, 'backward', 'ortho' or 'forward', got array"):
        tl.fft.ifft(np.ones(4), norm=np.array(["ortho", "forward"]))


def test_the_ops_check_their_attributes_when_a_graph_is_built():
    # A bad norm reached numpy at run time; n=0 was "0 outputs need 1"; empty axes ran RFFTN's rule into an IndexError.
    from tensorlib.ops.registry import get

    spec = tl.TensorSpec((4,), "complex128")
    for name, attrs, match in [
        ("FFTN", {"norm": "unitary"}, r"FFTN: norm must be 'backward', 'ortho' or 'forward', got 'unitary'"),
        ("IRFFTN", {"n": 0}, r"IRFFTN: invalid number of data points 0"),
        ("RFFTN", {"axes": ()}, r"RFFTN: no axes to transform"),
    ]:
        x = spec if name != "RFFTN" else tl.TensorSpec((4,), "float64")
        with pytest.raises(ValueError, match=match):
            tl.function(lambda a: get(name)(a, **attrs)).get_graph(x)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_fftfreq_and_rfftfreq_match_numpy_and_differentiate_in_d(n):
    for d in (1.0, 0.25):
        np.testing.assert_allclose(tl.fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d), rtol=1e-15)
        np.testing.assert_allclose(tl.fft.rfftfreq(n, d).numpy(), np.fft.rfftfreq(n, d), rtol=1e-15)
    assert tl.fft.fftfreq(n).dtype == np.fft.fftfreq(n).dtype
    # sum(k / (n d)) differentiates to -sum(k) / (n d^2)
    grad = tl.grad(lambda d: tl.sum(tl.fft.rfftfreq(n, d)))(tl.tensor(0.5, dtype="float64"))
    np.testing.assert_allclose(float(grad), -np.fft.rfftfreq(n).sum() / 0.25)
    with pytest.raises(TypeError, match=r"fftfreq: n must be an integer, got 2.5"):
        tl.fft.fftfreq(2.5)

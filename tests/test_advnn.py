"""The newer tl.nn surface (PyTorch's pool options, max_unpool, lp_pool, fractional_max_pool2d and their layers)
attacked as a careless or hostile user would call it.

References: NumPy loops written from PyTorch's documentation (float64), and, where installed, PyTorch's
``torch.nn.functional`` in float64; every torch check has a NumPy twin that runs without it."""

import json

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing.op_db_nnmore import torch_pool_ref

RNG = np.random.default_rng(20261203)


def _torch():
    return pytest.importorskip("torch")


def _unpool_ref(values, indices, sizes):
    """PyTorch's max_unpool on NCHW-style (N, C, ...) arrays: zeros with each value at its flat index per (n, c),
    written in order (the last write of a position wins)."""
    n, c = values.shape[:2]
    out = np.zeros((n, c, int(np.prod(sizes))), values.dtype)
    for b in range(n):
        for ch in range(c):
            for v, i in zip(values[b, ch].ravel(), indices[b, ch].ravel()):
                out[b, ch, i] = v
    return out.reshape((n, c, *sizes))


# ------------------------------------------------------------------ PyTorch's padding: at most half the window
@pytest.mark.parametrize(
    "call",
    [
        lambda x: tl.nn.max_pool(x, 3, 1, 2, "NCHW"),
        lambda x: tl.nn.max_pool(x, 3, 1, (1, 2), "NCHW"),
        lambda x: tl.nn.max_pool(x, 4, 1, 3, "NCHW", return_indices=True),
        lambda x: tl.nn.max_pool(x, 3, 1, 3, "NCHW", dilations=2),
        lambda x: tl.nn.avg_pool(x, 3, 1, 2, "NCHW", count_include_pad=False),
        lambda x: tl.nn.max_pool1d(x[:, :, 0], 3, 1, 2, "NCW"),
        lambda x: tl.nn.max_pool3d(np.stack([x] * 3, 2), 3, 1, (0, 2, 2), "NCDHW"),
        lambda x: tl.nn.MaxPool2D(3, 1, 2, data_format="NCHW")(x),
    ],
)
def test_torch_style_padding_over_half_the_window_is_refused_naming_the_op(call):
    x = RNG.standard_normal((1, 2, 7, 7))
    with pytest.raises(ValueError, match=r"padding .* must be at most half of the effective window \d.*input shape"):
        call(x)


def test_half_the_window_and_explicit_pairs_still_pool_as_torch_does():
    x = RNG.standard_normal((1, 2, 7, 7))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    ref = np.max([padded[:, :, i : i + 7, j : j + 7] for i in range(3) for j in range(3)], axis=0)
    np.testing.assert_array_equal(tl.nn.max_pool(x, 3, 1, 1, "NCHW").numpy(), ref)
    assert tl.nn.max_pool(x, 3, 1, 2, "NCHW", dilations=2).shape == (1, 2, 7, 7)  # 2 <= (2 * 2 + 1) / 2
    assert tl.nn.max_pool(x, 3, 1, ((2, 2), (2, 2)), "NCHW").shape == (1, 2, 9, 9)  # TensorFlow's pairs
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="pad should be"):
        torch.nn.functional.max_pool2d(torch.tensor(x), 3, 1, 2)


# ------------------------------------------------------------------ max_unpool traced with an unknown batch
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_max_unpool_traces_with_an_unknown_batch(data_format):
    x = RNG.standard_normal((3, 2, 4, 6))
    values, indices = tl.nn.max_pool(x, 2, 2, "VALID", "NCHW", return_indices=True)
    v, i = values.numpy(), indices.numpy().copy()
    i[0, 0, 0, 0] = i[0, 0, 0, 1]  # a duplicate index: the last write wins
    want = _unpool_ref(v, i, (5, 6))
    if data_format == "NHWC":
        v, i, want = v.transpose(0, 2, 3, 1), i.transpose(0, 2, 3, 1), want.transpose(0, 2, 3, 1)
    f = tl.function(lambda a, b: tl.nn.max_unpool(a, b, 2, data_format=data_format, output_size=(5, 6)))
    graph = f.get_graph(tl.TensorSpec((None, *v.shape[1:]), tl.float64), tl.TensorSpec((None, *i.shape[1:]), tl.int64))
    for n in (3, 1, 0):
        np.testing.assert_array_equal(graph(v[:n], i[:n]).numpy(), want[:n])
    np.testing.assert_array_equal(tl.nn.max_unpool(v, i, 2, data_format=data_format, output_size=(5, 6)).numpy(), want)
    w = RNG.standard_normal(want.shape)
    grad = tl.function(tl.grad(lambda a: tl.sum(f(a, i) * w)))(v).numpy()
    flat = (
        (lambda a: a.reshape(3, 2, -1))
        if data_format == "NCHW"
        else (lambda a: a.transpose(0, 3, 1, 2).reshape(3, 2, -1))
    )
    kept = np.take_along_axis(flat(want), flat(i), 2) == flat(v)  # the overwritten value gets no gradient
    ref = np.where(kept, np.take_along_axis(flat(w), flat(i), 2), 0.0)
    np.testing.assert_array_equal(flat(grad), ref)


def test_max_unpool_traced_refuses_an_index_outside_its_row():
    v, i = np.ones((2, 1, 2)), np.array([[[0, 4]], [[1, 2]]])  # 4 is row 0's cell past its 4 cells: row 1's first
    f = tl.function(lambda a, b: tl.nn.max_unpool(a, b, 2, data_format="NCW"))
    with pytest.raises(IndexError, match="out of bounds"):
        f.get_graph(tl.TensorSpec((None, 1, 2), tl.float64), tl.TensorSpec((None, 1, 2), tl.int64))(v, i)
    with pytest.raises(ValueError, match=r"^max_unpool: indices must lie in \[0, 4\)"):
        tl.nn.max_unpool(v, i, 2, data_format="NCW")


# ------------------------------------------------------------------ the LPPool, MaxUnpool and FractionalMaxPool layers
def _lp_ref(x, p, k, s):
    """PyTorch's LPPool2d of an NCHW array (no ceil mode): each window's (sum of x ** p) ** (1 / p)."""
    oh, ow = (x.shape[2] - k) // s + 1, (x.shape[3] - k) // s + 1
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = (x[:, :, i * s : i * s + k, j * s : j * s + k] ** p).sum((2, 3)) ** (1 / p)
    return out


def test_lp_pool_layers_give_the_windows_p_norm_and_round_trip_their_config():
    x = np.abs(RNG.standard_normal((2, 3, 7, 7))) + 0.1
    layer = tl.nn.LPPool2D(3, 3, 2, data_format="NCHW")
    np.testing.assert_allclose(layer(x).numpy(), _lp_ref(x, 3, 3, 2), rtol=1e-13)
    nhwc = tl.nn.LPPool2D(3, 3, 2)(x.transpose(0, 2, 3, 1)).numpy()
    np.testing.assert_allclose(nhwc, _lp_ref(x, 3, 3, 2).transpose(0, 2, 3, 1), rtol=1e-13)
    row = x[:, :, 0]
    want = np.sqrt(row[..., 0:6:2] ** 2 + row[..., 1:7:2] ** 2)
    np.testing.assert_allclose(tl.nn.LPPool1D(2, 2, data_format="NCW")(row).numpy(), want, rtol=1e-13)
    copy = tl.nn.LPPool2D.from_config(json.loads(json.dumps(layer.get_config())))
    np.testing.assert_array_equal(copy(x).numpy(), layer(x).numpy())
    assert repr(copy) == repr(layer) == "LPPool2D(norm_type=3.0, ksize=3, strides=2, data_format='NCHW')"
    with pytest.raises(ValueError, match=r"^LPPool3D: norm_type must be a finite nonzero number, got 0"):
        tl.nn.LPPool3D(0, 2)
    with pytest.raises(ValueError, match=r"^LPPool1D: input must be 3-D NWC"):
        tl.nn.LPPool1D(2, 2)(x)
    torch = pytest.importorskip("torch")
    want = torch.nn.LPPool2d(3, 3, 2)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_max_unpool_layers_invert_the_pool_layers(data_format):
    x = RNG.standard_normal((2, 3, 6, 4))
    pool = tl.nn.MaxPool2D(2, data_format="NCHW", return_indices=True)
    values, indices = (a.numpy() for a in pool(x))
    want = _unpool_ref(values, indices, (7, 5))
    if data_format == "NHWC":
        values, indices, want = (a.transpose(0, 2, 3, 1) for a in (values, indices, want))
    layer = tl.nn.MaxUnpool2D(2, data_format=data_format)
    np.testing.assert_array_equal(layer(values, indices, output_size=(7, 5)).numpy(), want)
    copy = tl.nn.MaxUnpool2D.from_config(json.loads(json.dumps(layer.get_config())))
    np.testing.assert_array_equal(copy(values, indices, (7, 5)).numpy(), want)
    torch = pytest.importorskip("torch")
    if data_format == "NCHW":
        t = torch.nn.MaxUnpool2d(2)(torch.tensor(values), torch.tensor(indices), output_size=(7, 5))
        np.testing.assert_array_equal(layer(values, indices, output_size=(7, 5)).numpy(), t.numpy())


def test_max_unpool_1d_and_3d_layers_with_stride_and_padding():
    x = RNG.standard_normal((2, 3, 9))
    values, indices = tl.nn.max_pool1d(x, 3, 2, 1, "NCW", return_indices=True)
    got = tl.nn.MaxUnpool1D(3, 2, 1, data_format="NCW")(values, indices).numpy()
    np.testing.assert_array_equal(got, _unpool_ref(values.numpy(), indices.numpy(), (9,)))
    v3 = RNG.standard_normal((1, 2, 2, 2, 2))
    i3 = RNG.integers(0, 64, size=v3.shape)
    np.testing.assert_array_equal(
        tl.nn.MaxUnpool3D(2, data_format="NCDHW")(v3, i3).numpy(), _unpool_ref(v3, i3, (4, 4, 4))
    )


def test_fractional_max_pool_layer_takes_given_samples_and_draws_its_own():
    from tensorlib.testing.op_db_nnmore import _fractional_ref

    x = RNG.standard_normal((2, 3, 9, 8))
    samples = RNG.uniform(size=(2, 3, 2))
    layer = tl.nn.FractionalMaxPool2D((3, 2), (4, 5), data_format="NCHW")
    want = _fractional_ref(x, (3, 2), (4, 5), None, False, samples, "NCHW")
    np.testing.assert_array_equal(layer(x, samples).numpy(), want)
    nhwc = tl.nn.FractionalMaxPool2D((3, 2), (4, 5), return_indices=True)(x.transpose(0, 2, 3, 1), samples)
    np.testing.assert_array_equal(nhwc[0].numpy(), want.transpose(0, 2, 3, 1))
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, nhwc[1].numpy().transpose(0, 3, 1, 2).reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(picked.reshape(want.shape), want)
    drawn = tl.nn.FractionalMaxPool2D(2, output_ratio=0.5)(x.transpose(0, 2, 3, 1)).numpy()
    assert drawn.shape == (2, 4, 4, 3)
    copy = tl.nn.FractionalMaxPool2D.from_config(json.loads(json.dumps(layer.get_config())))
    np.testing.assert_array_equal(copy(x, samples).numpy(), want)
    with pytest.raises(ValueError, match=r"^FractionalMaxPool2D: give exactly one of output_size and output_ratio"):
        tl.nn.FractionalMaxPool2D(2)
    torch = pytest.importorskip("torch")
    t = torch.nn.FractionalMaxPool2d((3, 2), (4, 5), _random_samples=torch.tensor(samples))(torch.tensor(x))
    np.testing.assert_array_equal(layer(x, samples).numpy(), t.numpy())


# ------------------------------------------------------------------ unfold and fold of unbatched inputs (PyTorch's)
def _windows(shape, k, d, p, s):
    """Each (row of the columns, column, cell of the padded image) of PyTorch's unfold of an NCHW ``shape``."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = k, d, p, s
    height, width = shape[2] + 2 * ph, shape[3] + 2 * pw
    oh, ow = (height - dh * (kh - 1) - 1) // sh + 1, (width - dw * (kw - 1) - 1) // sw + 1
    for c in range(shape[1]):
        for i in range(kh):
            for j in range(kw):
                for r in range(oh):
                    for q in range(ow):
                        yield (c * kh + i) * kw + j, r * ow + q, (c, r * sh + i * dh, q * sw + j * dw)


def _im2col_ref(x, k, d, p, s):
    padded = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    cells = list(_windows(x.shape, k, d, p, s))
    out = np.zeros((x.shape[0], max(c[0] for c in cells) + 1, max(c[1] for c in cells) + 1))
    for row, column, (c, h, w) in cells:
        out[:, row, column] = padded[:, c, h, w]
    return out


def _col2im_ref(cols, shape, k, d, p, s):
    padded = np.zeros((shape[0], shape[1], shape[2] + 2 * p[0], shape[3] + 2 * p[1]))
    for row, column, (c, h, w) in _windows(shape, k, d, p, s):
        padded[:, c, h, w] += cols[:, row, column]
    return padded[:, :, p[0] : p[0] + shape[2], p[1] : p[1] + shape[3]]


def test_unfold_and_fold_take_unbatched_inputs_as_torch_does():
    x = RNG.standard_normal((3, 6, 7))
    geometry = ((2, 3), (2, 1), (1, 1), (1, 2))
    cols = tl.nn.unfold(x, (2, 3), (2, 1), 1, (1, 2))
    want = _im2col_ref(x[None], *geometry)[0]
    np.testing.assert_array_equal(cols.numpy(), want)
    w = RNG.standard_normal(want.shape)
    grad = tl.grad(lambda a: tl.sum(tl.nn.unfold(a, (2, 3), (2, 1), 1, (1, 2)) * w))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(grad, _col2im_ref(w[None], (1, 3, 6, 7), *geometry)[0], rtol=1e-14)
    image = tl.nn.fold(w, (6, 7), (2, 3), (2, 1), 1, (1, 2)).numpy()
    np.testing.assert_allclose(image, _col2im_ref(w[None], (1, 3, 6, 7), *geometry)[0], rtol=1e-14)
    with pytest.raises(ValueError, match=r"^unfold: input must be 4-D \(N, C, H, W\) with known C, H, W, or 3-D"):
        tl.nn.unfold(np.ones((4, 4)), 2)
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    np.testing.assert_array_equal(cols.numpy(), F.unfold(torch.tensor(x), (2, 3), (2, 1), 1, (1, 2)).numpy())
    np.testing.assert_allclose(image, F.fold(torch.tensor(w), (6, 7), (2, 3), (2, 1), 1, (1, 2)).numpy(), rtol=1e-14)


# ------------------------------------------------------------------ float16 pools: float32 inside, rounded once
@pytest.mark.parametrize(
    "call, options",
    [
        (lambda x: tl.nn.avg_pool(x, 3, 2, 1, "NCHW", count_include_pad=False, ceil_mode=True), (1, True, False, None)),
        (lambda x: tl.nn.avg_pool(x, 3, 2, 1, "NCHW", count_include_pad=True, divisor_override=7), (1, False, True, 7)),
        (lambda x: tl.nn.avg_pool1d(x[:, :, 0], 3, 2, 1, "NCW", count_include_pad=False), (1, False, False, None)),
    ],
)
def test_float16_average_pools_round_once(call, options):
    x = (RNG.standard_normal((1, 2, 9, 9)) * 100 + 2000).astype(np.float16)
    p, ceil, include, divisor = options
    rows = x if call(x).ndim == 4 else x[:, :, 0]
    want = torch_pool_ref(rows.astype(np.float64), "avg", 3, 2, p, 1, ceil, include, divisor)[0]
    got = call(x)
    assert got.dtype == np.float16
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    assert np.max(np.abs(got.numpy() - want) / ulp) <= 0.5  # the float64 average rounded once (it was 1 ulp off)


def test_float16_lp_pool_does_not_overflow_in_x_to_the_p():
    x = (RNG.uniform(1000, 3000, size=(1, 2, 6, 6))).astype(np.float16)
    got = tl.nn.lp_pool(x, 2, 3, data_format="NCHW")
    want = np.sqrt((x.astype(np.float64) ** 2).reshape(1, 2, 2, 3, 2, 3).sum((3, 5)))  # about 6000: a float16
    assert got.dtype == np.float16 and np.isfinite(got.numpy()).all()
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=2**-10)
    grad = tl.grad(lambda a: tl.sum(tl.nn.lp_pool(a, 2, 3, data_format="NCHW")))(tl.tensor(x)).numpy()
    assert grad.dtype == np.float16 and np.isfinite(grad).all()


# ------------------------------------------------------------------ pixel (un)shuffle of (*, C, H, W) as PyTorch's
def _shuffle_ref(x, r):
    """PyTorch's pixel_shuffle of (..., C * r * r, H, W) by its definition: out[..., c, h * r + i, w * r + j] =
    x[..., c * r * r + i * r + j, h, w]."""
    *lead, crr, h, w = x.shape
    out = np.zeros((*lead, crr // (r * r), h * r, w * r))
    for c in range(crr // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., c, i::r, j::r] = x[..., c * r * r + i * r + j, :, :]
    return out


@pytest.mark.parametrize("shape", [(8, 2, 3), (2, 3, 8, 2, 3), (1, 2, 2, 4, 1, 2)])
def test_pixel_shuffle_takes_unbatched_and_several_leading_axes(shape):
    x = RNG.standard_normal(shape)
    want = _shuffle_ref(x, 2)
    np.testing.assert_array_equal(tl.nn.pixel_shuffle(x, 2, "NCHW").numpy(), want)
    np.testing.assert_array_equal(tl.nn.pixel_unshuffle(want, 2, "NCHW").numpy(), x)
    last = np.moveaxis(x, -3, -1)  # channels last: (*, H, W, C * r * r)
    np.testing.assert_array_equal(tl.nn.pixel_shuffle(last, 2).numpy(), np.moveaxis(want, -3, -1))
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(torch.nn.functional.pixel_shuffle(torch.tensor(x), 2).numpy(), want)

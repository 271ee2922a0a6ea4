"""The newer tl.nn surface (PyTorch's pool options, max_unpool, lp_pool, fractional_max_pool2d and their layers)
attacked as a careless or hostile user would call it.

References: NumPy loops written from PyTorch's documentation (float64), and, where installed, PyTorch's
``torch.nn.functional`` in float64; every torch check has a NumPy twin that runs without it."""

import json

import numpy as np
import pytest

import tensorlib as tl

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

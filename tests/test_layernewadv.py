"""The newest layers and nn functions, tried as an adversary: the adaptive pools (``tl.nn.adaptive_avg_pool`` /
``adaptive_max_pool`` and their layers), ``rms_norm``/``RMSNorm``, the recurrent layers with ``go_backwards``
and ``Bidirectional``, and ``Conv1DTranspose``/``Conv2DTranspose``.

References: NumPy loops written here (each adaptive box pooled as a whole, a transposed convolution as a
scatter of every input position through every tap, a recurrent step loop), float64 central differences
(``check_grads``), and, where installed, PyTorch (``F.adaptive_*_pool``, ``nn.ConvTranspose1d``) and Keras.
"""

import itertools

import numpy as np
import pytest
from test_recurrent_layers import _gru_reference, _lstm_reference

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)
_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


# ------------------------------------------------------------------ adaptive pools
def _boxes(spatial, sizes):
    """PyTorch's adaptive boxes: each output cell's index and one ``range`` of input cells per spatial axis
    (an axis of size ``None`` is kept: one cell per box)."""
    per_axis = [
        [range(i, i + 1) for i in range(n)]
        if m is None
        else [range(i * n // m, -(-(i + 1) * n // m)) for i in range(m)]
        for n, m in zip(spatial, sizes)
    ]
    for cell in itertools.product(*(range(len(bins)) for bins in per_axis)):
        yield cell, [bins[c] for c, bins in zip(cell, per_axis)]


def _adaptive_reference(x, sizes, kind):
    """Channels-first ``x`` pooled box by box (the whole box at once, as PyTorch's kernels): mean or max, and the
    gradient of ``sum(pooled * w)`` that gives each box's weight to its cells (to its maxima, shared equally)."""
    spatial = x.shape[2:]
    out_shape = x.shape[:2] + tuple(n if m is None else m for n, m in zip(spatial, sizes))
    out = np.zeros(out_shape, x.dtype)
    w = RNG.standard_normal(out_shape)
    grad = np.zeros(x.shape)
    for cell, box in _boxes(spatial, sizes):
        index = (slice(None), slice(None), *np.ix_(*box))
        part = x[index]
        axes = tuple(range(2, x.ndim))
        pooled = part.mean(axes) if kind == "avg" else part.max(axes)
        out[(slice(None), slice(None), *cell)] = pooled
        weight = w[(slice(None), slice(None), *cell)]
        if kind == "avg":
            share = np.broadcast_to(np.expand_dims(weight / part[0, 0].size, axes), part.shape)
        else:
            hits = part == np.expand_dims(pooled, axes)
            share = hits * np.expand_dims(weight / hits.sum(axes), axes)
        grad[index] += share
    return out, w, grad


@pytest.mark.parametrize(
    "spatial, sizes",
    [((10,), (3,)), ((7,), (4,)), ((3,), (5,)), ((6, 5), (4, 3)), ((5, 7), (None, 3)), ((4, 5, 3), (3, None, 2))],
)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_adaptive_avg_pool_a_nan_or_inf_reaches_only_the_boxes_that_hold_it(spatial, sizes, bad):
    # Bins that do not divide the axis were a product with a constant (m, n) averaging matrix, whose zeros times a
    # NaN or inf are NaN: one NaN in cell 1 of 10 pooled to 3 made [nan, nan, nan] where PyTorch gives
    # [nan, 4.5, 7.5].
    x = RNG.standard_normal((2, 3, *spatial))
    x[(1, 2, *(0,) * (len(spatial) - 1), 1)] = bad
    x[(0, 0, *(n - 1 for n in spatial))] = bad
    want, _, _ = _adaptive_reference(x, sizes, "avg")
    assert np.isfinite(want).any()
    for kind in ("avg", "max"):
        want, _, _ = _adaptive_reference(x, sizes, kind)
        got = getattr(tl.nn, f"adaptive_{kind}_pool")(x, sizes, _LAYOUT[len(spatial)]).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_adaptive_pools_with_bad_values_match_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(2 * 10.0).reshape(1, 2, 10)
    x[0, 0, 1], x[0, 1, 8] = np.nan, np.inf
    for m in (3, 4, 7, 13):
        for kind in ("avg", "max"):
            theirs = getattr(torch.nn.functional, f"adaptive_{kind}_pool1d")(torch.tensor(x), m).numpy()
            ours = getattr(tl.nn, f"adaptive_{kind}_pool")(x, m, "NCW").numpy()
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(
    "spatial, sizes", [((2, 2), (1, 1)), ((4, 6), (2, 3)), ((5, 4), (3, 3)), ((3, 3, 4), (2, 2, 3)), ((6,), (4,))]
)
def test_adaptive_max_pool_tied_maxima_share_the_gradient_of_their_whole_box(spatial, sizes):
    # Each axis was pooled in turn, so a box's tie was split per axis: [[1, 1], [1, 0]] pooled to 1x1 gave the
    # three maxima 0.25, 0.5 and 0.25 (neither tl.max's equal thirds, the docstring's promise, nor PyTorch's
    # everything to the first).
    x = RNG.integers(0, 2, size=(2, 2, *spatial)).astype(np.float64)
    want, w, grad = _adaptive_reference(x, sizes, "max")
    layout = _LAYOUT[len(spatial)]
    got = tl.nn.adaptive_max_pool(x, sizes, layout)
    np.testing.assert_array_equal(got.numpy(), want)
    ours = tl.grad(lambda t: tl.sum(tl.nn.adaptive_max_pool(t, sizes, layout) * w))(tl.tensor(x))
    np.testing.assert_allclose(ours.numpy(), grad, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        tl.grad(lambda t: tl.sum(tl.nn.adaptive_max_pool(t, 1, layout)))(tl.tensor(x)).numpy(),
        tl.grad(lambda t: tl.sum(tl.max(t, tuple(range(2, x.ndim)))))(tl.tensor(x)).numpy(),
        rtol=1e-14,
    )


def test_adaptive_max_pool_a_partial_tie_in_a_square_box():
    x = np.array([[[[1.0, 1.0], [1.0, 0.0]]]])
    g = tl.grad(lambda t: tl.sum(tl.nn.adaptive_max_pool(t, 1, "NCHW")))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(g.ravel(), [1 / 3, 1 / 3, 1 / 3, 0.0], rtol=1e-15)


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("spatial, sizes", [((7, 5), (3, 2)), ((4, 6), (2, 3)), ((3, 2), (5, 4))])
def test_adaptive_pools_traced_with_unknown_batch_and_channels(kind, spatial, sizes):
    # Unknown channels: the equal-bins reshape was given (-1, 2, 2, None) and raised reshape's TypeError.
    fn = getattr(tl.nn, f"adaptive_{kind}_pool")
    x = RNG.standard_normal((2, *spatial, 3))
    f = tl.function(lambda t: fn(t, sizes), input_signature=[tl.TensorSpec((None, *spatial, None), tl.float64)])
    want, _, _ = _adaptive_reference(np.moveaxis(x, -1, 1), sizes, kind)
    np.testing.assert_allclose(f(x).numpy(), np.moveaxis(want, 1, -1), rtol=1e-13)
    np.testing.assert_allclose(f(x[:0]).numpy(), np.zeros((0, *sizes, 3)))


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool_gradients_to_second_order(kind):
    x = RNG.standard_normal((1, 2, 5, 7))
    w = RNG.standard_normal((1, 2, 3, 4))
    fn = getattr(tl.nn, f"adaptive_{kind}_pool")
    check_grads(lambda t: tl.sum(fn(t, (3, 4), "NCHW") ** 2 * w), [x], order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_gather_gradient_of_repeated_indices_with_large_slices(dtype):
    # The adaptive pools' windows gather a few large slices; their gradient adds each slice back in place (a loop
    # where np.add.at was 50x slower). Repeated indices must still add up, float16 summed in float32.
    x = RNG.standard_normal((3, 5, 70)).astype(dtype)
    index = np.array([[4, 0, 4], [4, 2, 2]])
    w = RNG.standard_normal((3, 2, 3, 70)).astype(dtype)
    want = np.zeros((3, 5, 70))
    np.add.at(
        np.moveaxis(want, 1, 0), index.ravel(), np.moveaxis(w.astype(np.float64), (1, 2), (0, 1)).reshape(6, 3, 70)
    )
    got = tl.grad(lambda t: tl.sum(tl.take(t, index, axis=1) * w))(tl.tensor(x))
    assert got.dtype == dtype
    np.testing.assert_allclose(got.numpy(), want.astype(dtype), rtol=1e-3 if dtype == np.float16 else 1e-14)


# ------------------------------------------------------------------ Conv1DTranspose / Conv2DTranspose
def _transpose_reference(x, kernel, bias, strides, dilations, pads, output_padding):
    """Channels-last transposed convolution as a scatter: ``out[t s + j d] += x[t] W[j]`` over every input position
    ``t`` and tap ``j`` of each spatial axis, then PyTorch's crop: ``top`` cells off the start, ``bottom`` off the
    end, and ``output_padding`` cells given back at the end (zeros past the last tap's reach)."""
    spatial, taps = x.shape[1:-1], kernel.shape[: len(strides)]
    full = [(n - 1) * s + (k - 1) * d + 1 for n, s, k, d in zip(spatial, strides, taps, dilations)]
    out = np.zeros((x.shape[0], *(f + p for f, p in zip(full, output_padding)), kernel.shape[-2]))
    for t in itertools.product(*map(range, spatial)):
        for j in itertools.product(*map(range, taps)):
            at = tuple(a * s + b * d for a, b, s, d in zip(t, j, strides, dilations))
            out[(slice(None), *at)] += x[(slice(None), *t)] @ kernel[j].T
    crop = tuple(slice(top, out.shape[1 + i] - bottom) for i, (top, bottom) in enumerate(pads))
    return out[(slice(None), *crop)] + bias


_GEOMETRIES_1D = [  # (kernel, stride, dilation, (left, right) or VALID, output_padding): p >= stride under a dilation
    (2, 1, 2, (0, 0), 1),
    (3, 1, 3, (1, 1), 2),
    (3, 2, 3, (0, 0), 2),
    (4, 2, 3, (1, 2), 2),
    (3, 1, 3, "VALID", 2),
    (2, 2, 3, (3, 0), 2),
    (3, 2, 1, (1, 1), 1),
    (1, 3, 1, (0, 0), 2),
]


@pytest.mark.parametrize("k, s, d, padding, p", _GEOMETRIES_1D)
@pytest.mark.parametrize("data_format", ["NWC", "NCW"])
def test_conv1d_transpose_output_padding_up_to_the_dilation(k, s, d, padding, p, data_format):
    # output_padding >= stride (allowed under the dilation, as PyTorch) raised Conv2DBackpropInput's internal
    # "out_backprop shape (2, 1, 5, 2) does not match the expected (2, 1, 7, 2)": the output's last cells are past
    # the kernel's reach, which the op's shape check cannot express.
    layer = tl.nn.Conv1DTranspose(
        3, 2, k, strides=s, padding=padding, output_padding=p, dilations=d, dtype=tl.float64, data_format=data_format
    )
    layer.bias.assign(RNG.standard_normal(2))
    x = RNG.standard_normal((2, 4, 3))
    pads = [(0, 0)] if padding == "VALID" else [padding]
    want = _transpose_reference(x, layer.kernel.numpy(), layer.bias.numpy(), (s,), (d,), pads, (p,))
    first = data_format == "NCW"
    given = x.transpose(0, 2, 1) if first else x
    got = layer(given).numpy()
    np.testing.assert_allclose(got.transpose(0, 2, 1) if first else got, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tl.function(layer)(given).numpy(), got, rtol=1e-14, atol=1e-14)
    w = RNG.standard_normal(got.shape)
    check_grads(lambda t, kern: tl.sum(_with_kernel(layer, kern)(t) * w), [given, layer.kernel.numpy()], order=1)


def _with_kernel(layer, kernel):
    def call(x):
        return tl.functional_call(layer, {"kernel": kernel}, x)

    return call


def test_conv2d_transpose_output_padding_up_to_the_dilation():
    layer = tl.nn.Conv2DTranspose(
        2, 3, (3, 2), strides=(2, 1), padding=((1, 0), (0, 1)), output_padding=(2, 1), dilations=(3, 2),
        dtype=tl.float64,
    )  # fmt: skip
    layer.bias.assign(RNG.standard_normal(3))
    x = RNG.standard_normal((2, 3, 4, 2))
    want = _transpose_reference(x, layer.kernel.numpy(), layer.bias.numpy(), (2, 1), (3, 2), [(1, 0), (0, 1)], (2, 1))
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12, atol=1e-13)


def test_conv1d_transpose_every_geometry_matches_torch():
    torch = pytest.importorskip("torch")
    for k, s, d, q, p in itertools.product((1, 2, 4), (1, 2, 3), (1, 3), (0, 1, 3), (0, 1, 2)):
        if p >= max(s, d) or 4 * s + d * (k - 1) + 1 + p - 2 * q - s < 1:
            continue
        layer = tl.nn.Conv1DTranspose(
            2, 3, k, strides=s, padding=(q, q), output_padding=p, dilations=d, dtype=tl.float64, data_format="NCW"
        )
        x = RNG.standard_normal((2, 2, 4))
        theirs = torch.nn.functional.conv_transpose1d(
            torch.tensor(x), torch.tensor(layer.kernel.numpy().transpose(2, 1, 0)), torch.tensor(layer.bias.numpy()),
            stride=s, padding=q, output_padding=p, dilation=d,
        )  # fmt: skip
        np.testing.assert_allclose(layer(x).numpy(), theirs.numpy(), rtol=1e-12, atol=1e-13, err_msg=f"{k, s, d, q, p}")


def test_conv1d_transpose_same_padding_with_output_padding_past_the_stride_is_one_clear_error():
    # The hint said only "an even kernel needs output_padding >= 1", for an odd kernel given too much.
    layer = tl.nn.Conv1DTranspose(2, 2, 3, strides=1, dilations=3, padding="SAME", output_padding=2)
    with pytest.raises(ValueError, match=r"Conv1DTranspose: output_padding=\(2,\) with SAME padding gives an output of "
                       r"\(6,\) .* an odd one below the stride \(input shape \(1, 4, 2\)\)"):  # fmt: skip
        layer(np.ones((1, 4, 2), np.float32))


def _first_max_or_last_nan(x, sizes):
    """PyTorch's ``return_indices`` of channels-first ``x``, box by box: the flat spatial index of the first maximum
    in scan order, or of the box's last NaN."""
    spatial = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(n if m is None else m for n, m in zip(spatial, sizes)), np.int64)
    for cell, box in _boxes(spatial, sizes):
        flat = np.ravel_multi_index(np.meshgrid(*box, indexing="ij"), spatial).ravel()
        for b, c in np.ndindex(x.shape[:2]):
            values = x[b, c].ravel()[flat]
            nan = np.flatnonzero(np.isnan(values))
            out[(b, c, *cell)] = flat[nan[-1]] if nan.size else flat[np.argmax(values)]
    return out


@pytest.mark.parametrize(
    "spatial, sizes", [((8,), (3,)), ((3,), (5,)), ((5, 4), (3, None)), ((6, 7), (4, 3)), ((3, 4, 5), (2, 3, 2))]
)
@pytest.mark.parametrize("special", ["ties", "nan", "-inf"])
def test_adaptive_max_pool_return_indices(spatial, sizes, special):
    # PyTorch's F.adaptive_max_pool*d(..., return_indices=True) had no counterpart.
    x = RNG.integers(0, 3, size=(2, 2, *spatial)).astype(np.float64)
    if special == "nan":
        x[x == 2] = np.nan
    elif special == "-inf":
        x[0] = -np.inf
    layout = _LAYOUT[len(spatial)]
    values, indices = tl.nn.adaptive_max_pool(x, sizes, layout, return_indices=True)
    want = _first_max_or_last_nan(x, sizes)
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices.numpy(), want)
    np.testing.assert_array_equal(
        values.numpy(), np.take_along_axis(x.reshape(2, 2, -1), want.reshape(2, 2, -1), 2).reshape(want.shape)
    )
    layer = getattr(tl.nn, f"AdaptiveMaxPool{len(spatial)}D")(sizes, return_indices=True)
    assert "return_indices=True" in repr(layer)
    last = np.moveaxis(x, 1, -1)
    for got in (layer(last), tl.function(layer)(last)):
        np.testing.assert_array_equal(np.moveaxis(got[1].numpy(), -1, 1), want)
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn.functional, f"adaptive_max_pool{len(spatial)}d")(
        torch.tensor(x), sizes if len(sizes) > 1 else sizes[0], return_indices=True
    )
    np.testing.assert_array_equal(indices.numpy(), theirs[1].numpy())


@pytest.mark.parametrize("size", [1, 3, 7])
def test_adaptive_avg_pool_float16_sums_in_float32(size):
    # The windows' sum was rounded to float16 before the division: 1000 cells of 100 pooled to 1 gave inf.
    x = np.full((1, 1000, 2), 100.0, np.float16)
    x[0, ::7, 1] = -60.0
    got = tl.nn.adaptive_avg_pool(x, size)
    want, _, _ = _adaptive_reference(np.moveaxis(x.astype(np.float64), -1, 1), (size,), "avg")
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.numpy(), np.moveaxis(want, 1, -1).astype(np.float16), rtol=1e-3)


# ------------------------------------------------------------------ recurrent layers: masks
def _cell(name, kernel, recurrent, bias):
    """One step of the Keras cell ``name`` in NumPy (test_recurrent_layers' loops over one step):
    ``(states, x_t) -> (states, h_t)``."""

    def step(states, x_t):
        if name == "LSTM":
            _, h, c = _lstm_reference(x_t[:, None], kernel, recurrent, bias, *states)
            return [h, c], h
        if name == "GRU":
            _, h = _gru_reference(x_t[:, None], kernel, recurrent, bias, states[0], reset_after=True)
            return [h], h
        h = np.tanh(x_t @ kernel + states[0] @ recurrent + bias)
        return [h], h

    return step


def _masked_reference(step, x, states, mask, backwards=False, zero_output=False):
    """Keras' masked loop: a masked step keeps the states and outputs the previous output (zeros at first)."""
    order = range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    previous, outputs = np.zeros_like(states[0]), []
    for t in order:
        new, h = step(states, x[:, t])
        keep = mask[:, t : t + 1]
        states = [np.where(keep, a, b) for a, b in zip(new, states)]
        previous = np.where(keep, h, 0.0 if zero_output else previous)
        outputs.append(previous)
    return np.stack(outputs, 1), states


def _recurrent(name, **kwargs):
    layer = getattr(tl.nn, name)(3, 4, return_sequences=True, return_state=True, dtype="float64", seed=0, **kwargs)
    for v in layer.trainable_variables.values():
        v.assign(RNG.normal(size=v.shape) * 0.5)
    return layer, _cell(name, *(v.numpy() for v in (layer.kernel, layer.recurrent_kernel, layer.bias)))


@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("backwards", [False, True])
def test_recurrent_mask_keeps_the_states_of_masked_steps(name, backwards):
    # The layers took no mask: padded sequences ran their padding through the cell (Keras' and PyTorch's packed
    # sequences' final states are each sequence's last real step's).
    layer, step = _recurrent(name, go_backwards=backwards)
    x = RNG.normal(size=(3, 6, 3))
    mask = np.array([[1, 1, 1, 1, 0, 0], [0, 1, 1, 0, 1, 1], [1, 1, 1, 1, 1, 1]], bool)
    states = [RNG.normal(size=(3, 4)) for _ in range(2 if name == "LSTM" else 1)]
    want, want_states = _masked_reference(step, x, states, mask, backwards)
    out, *got_states = layer(x, initial_state=states, mask=mask)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-14)
    for got, w in zip(got_states, want_states):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12, atol=1e-14)
    f = tl.function(
        lambda t, m: layer(t, initial_state=states, mask=m),
        input_signature=[tl.TensorSpec((None, 6, 3), tl.float64), tl.TensorSpec((None, 6), tl.int64)],
    )
    np.testing.assert_allclose(f(x, mask.astype(np.int64))[0].numpy(), want, rtol=1e-12, atol=1e-14)
    w = RNG.normal(size=want.shape)
    check_grads(lambda t: tl.sum(layer(t, initial_state=states, mask=mask)[0] * w), [x], order=1)


def test_bidirectional_mask_zeroes_the_masked_steps_of_the_merged_sequence():
    lstm, step = _recurrent("LSTM")
    bi = tl.nn.Bidirectional(lstm, merge_mode=None)
    for v in bi.backward_layer.trainable_variables.values():
        v.assign(RNG.normal(size=v.shape) * 0.5)
    back = _cell("LSTM", *(v.numpy() for v in (bi.backward_layer.kernel, bi.backward_layer.recurrent_kernel,
                                               bi.backward_layer.bias)))  # fmt: skip
    x = RNG.normal(size=(2, 5, 3))
    mask = np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]], bool)
    zeros = [np.zeros((2, 4))] * 2
    y, z, h_f, c_f, h_b, c_b = bi(x, mask=mask)  # Keras' flat nesting
    want_y, (want_h, want_c) = _masked_reference(step, x, zeros, mask, zero_output=True)
    want_z, (back_h, back_c) = _masked_reference(back, x, zeros, mask, backwards=True, zero_output=True)
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(z.numpy(), want_z[:, ::-1], rtol=1e-12, atol=1e-14)
    for got, w in zip((h_f, c_f, h_b, c_b), (want_h, want_c, back_h, back_c)):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12, atol=1e-14)


def test_recurrent_mask_errors_name_the_layer():
    layer = tl.nn.GRU(3, 4)
    with pytest.raises(ValueError, match=r"GRU: mask must be \(batch, time\) as the input, got mask shape \(2, 4\) "):
        layer(np.ones((2, 5, 3), np.float32), mask=np.ones((2, 4), bool))
    with pytest.raises(TypeError, match=r"GRU: mask must be bools or real numbers, got complex128"):
        layer(np.ones((2, 5, 3), np.float32), mask=np.ones((2, 5), complex))


def test_recurrent_masks_match_keras():
    keras = pytest.importorskip("keras")
    x = RNG.normal(size=(3, 6, 3)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0, 0], [0, 1, 1, 0, 1, 1], [1] * 6], bool)
    for name in ("SimpleRNN", "LSTM", "GRU"):
        for backwards in (False, True):
            ours = getattr(tl.nn, name)(3, 4, return_sequences=True, return_state=True, go_backwards=backwards, seed=0)
            theirs = getattr(keras.layers, name)(4, return_sequences=True, return_state=True, go_backwards=backwards)
            theirs.build(x.shape)
            theirs.set_weights([v.numpy() for v in (ours.kernel, ours.recurrent_kernel, ours.bias)])
            for a, b in zip(theirs(x, mask=mask), ours(x, mask=mask)):
                np.testing.assert_allclose(b.numpy(), np.asarray(a), rtol=1e-5, atol=1e-6)
    bi = tl.nn.Bidirectional(tl.nn.GRU(3, 4, return_sequences=True, seed=0), merge_mode="sum")
    kb = keras.layers.Bidirectional(keras.layers.GRU(4, return_sequences=True), merge_mode="sum")
    kb.build(x.shape)
    for ours, theirs in ((bi.forward_layer, kb.forward_layer), (bi.backward_layer, kb.backward_layer)):
        theirs.set_weights([v.numpy() for v in (ours.kernel, ours.recurrent_kernel, ours.bias)])
    np.testing.assert_allclose(bi(x, mask=mask).numpy(), np.asarray(kb(x, mask=mask)), rtol=1e-5, atol=1e-6)


def test_recurrent_right_padding_mask_matches_torch_packed_sequences():
    torch = pytest.importorskip("torch")
    layer, _ = _recurrent("LSTM")
    lengths = [5, 2, 4]
    x = RNG.normal(size=(3, 5, 3))
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    _, h, c = layer(x, mask=mask)
    theirs = torch.nn.LSTM(3, 4, batch_first=True).double()
    with torch.no_grad():
        theirs.weight_ih_l0.copy_(torch.tensor(layer.kernel.numpy().T))
        theirs.weight_hh_l0.copy_(torch.tensor(layer.recurrent_kernel.numpy().T))
        theirs.bias_ih_l0.copy_(torch.tensor(layer.bias.numpy()))
        theirs.bias_hh_l0.zero_()
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first=True, enforce_sorted=False)
    _, (h_n, c_n) = theirs(packed)
    np.testing.assert_allclose(h.numpy(), h_n[0].detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c.numpy(), c_n[0].detach().numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ normalize (PyTorch's F.normalize)
def _normalize_gradient(x, w, p):
    """The gradient of sum(w * x / ||x||_p) along the last axis, each zero element's share of the norm's
    gradient taken as 0 (PyTorch's rule; |x|**p has an infinite slope there for p < 1)."""
    norm = (np.abs(x) ** p).sum(-1, keepdims=True) ** (1 / p)
    with np.errstate(divide="ignore"):
        slope = np.where(x != 0, np.sign(x) * np.abs(x) ** (p - 1), 0.0) * norm ** (1 - p)
    return w / norm - (w * x).sum(-1, keepdims=True) / norm**2 * slope


@pytest.mark.parametrize("p", [0.5, 0.25, 1.5, 3.0])
def test_normalize_gradient_at_zero_elements_for_p_below_one(p):
    # p < 1: |x|**p's derivative p * 0**(p - 1) is inf at a zero element, and the chain rule made 0 * inf = NaN:
    # normalize([[0, 1, 2]], p=0.5) had gradient [nan, -0.0416, 0.0208] where PyTorch gives [0.1716, ...].
    x = np.array([[0.0, 1.0, -2.0, 0.5], [0.3, 0.0, 0.0, -1.2]])
    w = RNG.normal(size=x.shape)
    got = tl.grad(lambda t: tl.sum(tl.nn.normalize(t, p=p, axis=-1) * w))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(got, _normalize_gradient(x, w, p), rtol=1e-12)
    smooth = x + 0.1  # no zero element: the reference formula against central differences
    check_grads(lambda t: tl.sum(tl.nn.normalize(t, p=p, axis=-1) * w), [smooth], order=1)
    np.testing.assert_allclose(
        got, tl.function(tl.grad(lambda t: tl.sum(tl.nn.normalize(t, p=p, axis=-1) * w)))(x).numpy()
    )
    zero = tl.grad(lambda t: tl.sum(tl.nn.normalize(t, p=p, axis=-1)))(tl.tensor(np.zeros((1, 3)))).numpy()
    np.testing.assert_allclose(zero, np.full((1, 3), 1e12))  # a zero vector: 1 / epsilon, as for p = 2
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, requires_grad=True)
    (theirs,) = torch.autograd.grad((torch.nn.functional.normalize(tx, p=p, dim=-1) * torch.tensor(w)).sum(), tx)
    np.testing.assert_allclose(got, theirs.numpy(), rtol=1e-12)


def test_recurrent_repr_names_every_argument_given():
    # LSTM(3, 4, return_state=True, activation="relu") printed as "LSTM(3, 4)".
    assert repr(tl.nn.LSTM(3, 4, return_state=True, activation="relu", seed=3, dtype="float64")) == (
        "LSTM(3, 4, activation='relu', return_state=True, dtype='float64')"
    )
    assert repr(tl.nn.GRU(3, 4, reset_after=False, dtype="float32")) == "GRU(3, 4, reset_after=False)"
    bi = repr(tl.nn.Bidirectional(tl.nn.SimpleRNN(3, 4, activation=None, return_sequences=True)))
    assert "(backward_layer): SimpleRNN(3, 4, activation=None, return_sequences=True, go_backwards=True)" in bi


@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
def test_recurrent_gradients_through_twenty_masked_steps(name):
    layer, _ = _recurrent(name, go_backwards=name == "GRU")
    x = RNG.normal(size=(2, 20, 3))
    mask = RNG.random((2, 20)) > 0.3
    w = RNG.normal(size=(2, 20, 4))
    check_grads(lambda t: tl.sum(layer(t, mask=mask)[0] * w), [x], order=1)
    kernel = layer.kernel
    check_grads(lambda k: tl.sum(_with_kernel(layer, k)(x)[1] ** 2), [kernel.numpy()], order=1)

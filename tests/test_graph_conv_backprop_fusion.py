"""The optimizer's fusion of a conv layer's gradients: ``Sum(dy, (0, 1, 2))`` + ``Conv2DBackpropFilter(x, dy)``
-> ``Conv2DBackpropFilterWithBias``, and with ``Conv2DBackpropInput(w, dy)`` -> ``Conv2DBackprop``.

The fused kernels sum in an order of their own: results are checked against float64 references and eager to
float32 rounding, the fusion must not fire where the nodes do not compute a layer's gradients of one ``dy``,
and the fused Fourier kernel's sums are the same bits on every call.
"""

import functools

import numpy as np
import pytest
from _lenet import lenet_data, lenet_step

import tensorlib as tl
from tensorlib.backends import numpy_nn
from tensorlib.backends.numpy_nn import blocks, conv, fourier
from tensorlib.backends.numpy_nn import fused_grad as kernels
from tensorlib.ops.nn.fused_grad import conv2d_backprop, conv2d_backprop_filter_with_bias
from tensorlib.testing import references

RNG = np.random.default_rng(0)
STRATEGIES = [numpy_nn.SHIFTED_GEMM, numpy_nn.IM2COL_GEMM, numpy_nn.FOURIER_GEMM]
# Errors of the fused kernels against float64, relative to the result's largest magnitude: float32 and
# float16 rounding (float16 is computed in float32 and rounded once).
RELATIVE = {"float16": 2e-3, "float32": 4e-6, "float64": 1e-13}


def _types(graph):
    return [n.op_type for n in graph.nodes]


def _assert_rounded(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want, np.float64)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    scale = max(np.abs(want).max(initial=0.0), 1e-30)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=RELATIVE[str(dtype)] * scale)


# ------------------------------------------------------------------ the kernels
GEOMETRIES = [  # strides, dilations, pads
    ((1, 1), (1, 1), ((2, 2), (2, 2))),
    ((2, 1), (1, 2), ((1, 1), (0, 1))),
    ((1, 3), (2, 1), ((0, 0), (0, 0))),
]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=["same", "strided_dilated_padded", "valid"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_fused_kernels_equal_the_float64_references_to_rounding(strategy, dtype, geometry, monkeypatch):
    monkeypatch.setattr(conv, "_PATCH_BLOCK_BYTES", 4096)  # several image and row blocks
    monkeypatch.setattr(fourier, "_FOURIER_CHUNK_BYTES", 32 * 1024)
    monkeypatch.setattr(fourier, "_FOURIER_GRAM_CHUNK_BYTES", 48 * 1024)
    strides, dilations, pads = geometry
    x = RNG.standard_normal((7, 11, 10, 3)).astype(dtype)
    w = RNG.standard_normal((3, 2, 3, 5)).astype(dtype)
    out_hw = references.output_hw(x.shape[1:3], w.shape[:2], strides, dilations, pads)
    dy = RNG.standard_normal((7, *out_hw, 5)).astype(dtype)
    want_dx = references.conv2d_backprop_input(x.shape, w, dy, strides, pads, dilations)
    want_dw = references.conv2d_backprop_filter(x, w.shape, dy, strides, pads, dilations)
    want_db = dy.astype(np.float64).sum(axis=(0, 1, 2))

    dw, db = kernels.conv2d_backprop_filter_bias(x, w.shape, dy, strides, dilations, pads, strategy=strategy)
    _assert_rounded(dw, want_dw, dtype)
    _assert_rounded(db, want_db, dtype)
    dx, dw3, db3 = kernels.conv2d_backprop(x, w, dy, strides, dilations, pads, strategy=strategy)
    _assert_rounded(dx, want_dx, dtype)
    _assert_rounded(dw3, want_dw, dtype)
    _assert_rounded(db3, want_db, dtype)
    # and the unfused kernels, to the same rounding
    unfused = numpy_nn.conv2d_backprop_filter(x, w.shape, dy, strides, dilations, pads, strategy=strategy)
    _assert_rounded(dw, unfused.astype(np.float64), dtype)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_fused_kernels_take_an_empty_batch_and_write_into_given_outputs(strategy):
    x, w = np.ones((0, 6, 6, 2), np.float32), np.ones((3, 3, 2, 4), np.float32)
    pads = ((1, 1), (1, 1))
    dy = np.ones((0, 6, 6, 4), np.float32)
    dx, dw, db = kernels.conv2d_backprop(x, w, dy, (1, 1), (1, 1), pads, strategy=strategy)
    assert dx.shape == x.shape and not dw.any() and dw.shape == w.shape and db.tolist() == [0.0] * 4
    dw, db = kernels.conv2d_backprop_filter_bias(x, w.shape, dy, (1, 1), (1, 1), pads, strategy=strategy)
    assert not dw.any() and db.dtype == np.float32 and not db.any()

    x, dy = RNG.standard_normal((3, 6, 6, 2)).astype(np.float32), RNG.standard_normal((3, 6, 6, 4)).astype(np.float32)
    outs = (np.full_like(x, np.nan), None, np.full(4, np.nan, np.float32))
    got = kernels.conv2d_backprop(x, w, dy, (1, 1), (1, 1), pads, strategy=strategy, out=outs)
    assert got[0] is outs[0] and got[2] is outs[2]
    want = kernels.conv2d_backprop(x, w, dy, (1, 1), (1, 1), pads, strategy=strategy)
    for g, r in zip(got, want):
        np.testing.assert_array_equal(g, r)
    with pytest.raises(ValueError, match=r"conv2d_backprop: out must be a C-contiguous float32\[3, 6, 6, 2\] array"):
        kernels.conv2d_backprop(x, w, dy, (1, 1), (1, 1), pads, out=(np.empty((3, 6, 6, 1), np.float32), None, None))


@pytest.mark.parametrize("op", ["filter_with_bias", "backprop"])
def test_the_fused_fourier_kernel_gives_the_same_bits_on_every_call(op, monkeypatch):
    monkeypatch.setattr(blocks, "_thread_count", lambda: 3)  # even where the process is held to one thread
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_BYTES", 0)  # share out whatever the size
    monkeypatch.setattr(blocks, "_PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setattr(fourier, "_FOURIER_CHUNK_BYTES", 64 * 1024)  # many lanes of a few images
    monkeypatch.setattr(fourier, "_FOURIER_GRAM_CHUNK_BYTES", 64 * 1024)
    x = RNG.standard_normal((48, 10, 10, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 6, 8)).astype(np.float32)
    dy = RNG.standard_normal((48, 10, 10, 8)).astype(np.float32)
    pads, one = ((1, 1), (1, 1)), (1, 1)
    fourier_gemm = {"strategy": "fourier_gemm"}
    if op == "backprop":
        call = functools.partial(kernels.conv2d_backprop, x, w, dy, one, one, pads, **fourier_gemm)
    else:
        call = functools.partial(kernels.conv2d_backprop_filter_bias, x, w.shape, dy, one, one, pads, **fourier_gemm)
    results = [call() for _ in range(8)]
    assert len({b"".join(r.tobytes() for r in result) for result in results}) == 1
    _assert_rounded(results[0][-1], dy.astype(np.float64).sum(axis=(0, 1, 2)), "float32")
    _assert_rounded(results[0][-2], references.conv2d_backprop_filter(x, w.shape, dy, one, "SAME"), "float32")


# ------------------------------------------------------------------ the pass
@pytest.mark.parametrize("strategy", [None, *STRATEGIES])
def test_a_traced_lenet_step_fuses_each_conv_layers_gradients_and_matches_eager(strategy, monkeypatch):
    if strategy is not None:  # every conv of the step, eager and traced, runs this strategy
        monkeypatch.setattr(conv, "conv2d_strategy", lambda *shapes: strategy)
    x, labels, params = lenet_data(RNG)
    step = tl.function(lenet_step)
    graph = step.get_graph(x, labels, params).optimize().verify()
    types = _types(graph)
    # conv1's input gradient is not needed (x is data): filter + bias (in phase order with its pool, see
    # tests/test_phase_pool.py); conv2's: all three, and conv1's ReluGrad
    assert types.count("Conv2DBackpropFilterWithBiasPhases") == 1 and types.count("Conv2DBackprop") == 1
    assert [n.attrs["relu_grad"] for n in graph.nodes if n.op_type == "Conv2DBackprop"] == [True]
    assert types.count("ReluGrad") == 1  # conv2's, moved before its MaxPoolGrad
    assert "Conv2DBackpropFilter" not in types and "Conv2DBackpropInput" not in types
    assert not [n for n in graph.nodes if n.op_type == "Sum" and len(n.inputs[0].shape) == 4]
    eager = lenet_step(tl.tensor(x), tl.tensor(labels), [tl.tensor(p) for p in params])
    for _ in range(3):
        for got, want in zip(step(x, labels, params), eager):
            _assert_rounded(got.numpy(), want.numpy(), "float32")


def test_the_conv2d_add_activation_gradient_fuses_the_same_way():
    x, w, b = RNG.standard_normal((2, 7, 7, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal(4)
    from tensorlib.ops.nn.fused import conv2d_add_activation

    def grads(x, w, b):
        return tl.grad(lambda x, w, b: tl.sum(conv2d_add_activation(x, w, b, 2, "SAME") ** 2), argnums=(0, 1, 2))(
            x, w, b
        )

    f = tl.function(grads)
    assert "Conv2DBackprop" in _types(f.get_graph(x, w, b).optimize())
    for got, want in zip(f(x, w, b), grads(tl.tensor(x), tl.tensor(w), tl.tensor(b))):
        _assert_rounded(got.numpy(), want.numpy(), "float64")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_input_gradients_relu_grad_is_bit_for_bit_the_ops(strategy):
    x = RNG.standard_normal((5, 7, 7, 3)).astype(np.float32)
    x[0, 0, 0] = 0.0  # ReluGrad's mask is x > 0
    w, dy = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32), RNG.standard_normal((5, 7, 7, 4)).astype(np.float32)
    dy[1, 3, 3, 0] = np.nan  # reaches dx where x <= 0 too: 0 * nan stays nan, as in ReluGrad
    pads = ((1, 1), (1, 1))
    plain = kernels.conv2d_backprop(x, w, dy, (1, 1), (1, 1), pads, strategy=strategy)
    masked = kernels.conv2d_backprop(x, w, dy, (1, 1), (1, 1), pads, strategy=strategy, relu_grad=True)
    np.testing.assert_array_equal(masked[0], numpy_nn.relu_grad(plain[0], x))
    assert np.isnan(masked[0]).any() and (masked[0][x <= 0] == 0).any()
    for got, want in zip(masked[1:], plain[1:]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["other_features", "input_gradient_read_twice", "input_gradient_returned"])
def test_the_relu_grad_is_fused_only_when_it_is_the_input_gradients_one_use_masked_by_the_input(case):
    x, w, dy = RNG.standard_normal((2, 6, 6, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal((2, 6, 6, 4))
    other = RNG.standard_normal(x.shape)

    def fn(x, w, dy, other):
        dx = tl.nn.conv2d_backprop_input(x.shape, w, dy, 1, "SAME")
        dw, db = tl.nn.conv2d_backprop_filter(x, w.shape, dy, 1, "SAME"), tl.sum(dy, axis=(0, 1, 2))
        masked = tl.ops.get("ReluGrad")(dx, other if case == "other_features" else x)
        extra = {"input_gradient_read_twice": (dx * 2.0,), "input_gradient_returned": (dx,)}.get(case, ())
        return (masked, dw, db, *extra)

    f = tl.function(fn)
    graph = f.get_graph(x, w, dy, other).optimize().verify()
    assert [n.attrs["relu_grad"] for n in graph.nodes if n.op_type == "Conv2DBackprop"] == [False]
    assert "ReluGrad" in _types(graph)
    eager = fn(*map(tl.tensor, (x, w, dy, other)))
    for got, want in zip(f(x, w, dy, other), eager):
        _assert_rounded(got.numpy(), want.numpy(), "float64")


def _gradients(case):
    """A function of (x, w, dy) reading dy as a conv layer's gradients would, but for what ``case`` changes."""

    def fn(x, w, dy):
        dw = tl.nn.conv2d_backprop_filter(x, w.shape, dy, 1, "SAME")
        sum_axes, keepdims, bias_dy = (0, 1, 2), False, dy
        if case == "sum_over_other_axes":
            sum_axes = (0, 1)
        elif case == "keepdims":
            keepdims = True
        elif case == "dy_of_another_conv":
            bias_dy = dy * 2.0
        db = tl.sum(bias_dy, axis=sum_axes, keepdims=keepdims)
        # SAME keeps the size whatever the dilation: the same dy, x's shape, other attributes
        dilations = 2 if case == "input_gradient_of_other_dilations" else 1
        dx = tl.nn.conv2d_backprop_input(x.shape, w, dy, 1, "SAME", dilations=dilations)
        return dx, dw, db

    return fn


@pytest.mark.parametrize(
    "case, fused",
    [
        ("all_three", "Conv2DBackprop"),
        ("input_gradient_of_other_dilations", "Conv2DBackpropFilterWithBias"),
        ("sum_over_other_axes", None),
        ("keepdims", None),
        ("dy_of_another_conv", None),
    ],
)
def test_the_fusion_fires_only_on_one_layers_gradients_of_one_dy(case, fused):
    x, w, dy = RNG.standard_normal((2, 8, 8, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal((2, 8, 8, 4))
    fn = _gradients(case)
    f = tl.function(fn)
    types = _types(f.get_graph(x, w, dy).optimize().verify())
    fused_types = {"Conv2DBackprop", "Conv2DBackpropFilterWithBias"} & set(types)
    assert fused_types == ({fused} if fused else set()), types
    if fused != "Conv2DBackprop":
        assert "Conv2DBackpropInput" in types
    if fused is None:
        assert "Conv2DBackpropFilter" in types and "Sum" in types
    for got, want in zip(f(x, w, dy), fn(tl.tensor(x), tl.tensor(w), tl.tensor(dy))):
        _assert_rounded(got.numpy(), want.numpy(), "float64")


def test_the_fused_node_is_not_placed_before_an_input_it_reads():
    w = RNG.standard_normal((3, 3, 3, 4))

    def fn(x, dy):
        db = tl.sum(dy, axis=(0, 1, 2))  # first of the nodes to fuse, before x2 is computed
        x2 = x * 2.0
        return tl.nn.conv2d_backprop_filter(x2, w.shape, dy, 1, "SAME"), db

    x, dy = RNG.standard_normal((2, 5, 5, 3)), RNG.standard_normal((2, 5, 5, 4))
    f = tl.function(fn)
    assert "Conv2DBackpropFilterWithBias" not in _types(f.get_graph(x, dy).optimize().verify())
    for got, want in zip(f(x, dy), fn(tl.tensor(x), tl.tensor(dy))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_bias_gradient_without_a_row_of_ones_is_the_column_sums(monkeypatch):
    # Patch blocks too big to keep get a buffer per call, with no room for the row of ones: the bias gradient
    # is then summed from each dy block's columns.
    monkeypatch.setattr(blocks, "_SCRATCH_MAX_BYTES", 0)
    x = RNG.standard_normal((4, 9, 9, 2)).astype(np.float32)
    dy = RNG.standard_normal((4, 9, 9, 6)).astype(np.float32)
    pads = ((1, 1), (1, 1))
    dw, db = kernels.conv2d_backprop_filter_bias(x, (3, 3, 2, 6), dy, (1, 1), (1, 1), pads, strategy="shifted_gemm")
    _assert_rounded(db, dy.astype(np.float64).sum(axis=(0, 1, 2)), "float32")
    _assert_rounded(dw, references.conv2d_backprop_filter(x, (3, 3, 2, 6), dy, 1, "SAME"), "float32")


def test_a_dy_of_unknown_batch_or_of_another_dtype_is_not_fused():
    w = RNG.standard_normal((3, 3, 3, 4))

    def fn(x, dy):
        return tl.nn.conv2d_backprop_filter(x, w.shape, dy, 1, "SAME"), tl.sum(dy, axis=(0, 1, 2))

    unknown = tl.function(fn).get_graph(tl.TensorSpec((None, 5, 5, 3), "float64"), tl.TensorSpec((None, 5, 5, 4)))
    assert "Conv2DBackpropFilterWithBias" not in _types(unknown.optimize())
    mixed = tl.function(fn).get_graph(tl.TensorSpec((2, 5, 5, 3), "float64"), tl.TensorSpec((2, 5, 5, 4), "float32"))
    assert "Conv2DBackpropFilterWithBias" not in _types(mixed.optimize())


def test_second_order_through_a_traced_graph_with_the_fused_ops():
    x, w, b = RNG.standard_normal((2, 6, 6, 2)), RNG.standard_normal((3, 3, 2, 3)), RNG.standard_normal(3)

    def first(x, w, b):  # the conv layer's gradients, traced: the optimized graph holds Conv2DBackprop
        return tl.grad(lambda x, w, b: tl.sum(tl.tanh(tl.nn.conv2d(x, w, 1, "SAME") + b) ** 2), argnums=(0, 1, 2))(
            x, w, b
        )

    f = tl.function(first)
    assert "Conv2DBackprop" in _types(f.get_graph(x, w, b).optimize(keep_gradients=True))

    def second(fn, x, w, b):
        with tl.GradientTape() as tape:
            tape.watch([x, w, b])
            total = sum(tl.sum(g * g) for g in fn(x, w, b))
        return tape.gradient(total, [x, w, b])

    xt, wt, bt = tl.tensor(x), tl.tensor(w), tl.tensor(b)
    for got, want in zip(second(f, xt, wt, bt), second(first, xt, wt, bt)):
        _assert_rounded(got.numpy(), want.numpy(), "float64")


def test_a_graph_holding_the_fused_ops_saves_and_loads(tmp_path):
    x, w = RNG.standard_normal((2, 6, 6, 2)).astype(np.float32), RNG.standard_normal((3, 3, 2, 3)).astype(np.float32)
    dy = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)

    def fn(x, w, dy):
        dx, dw, db = conv2d_backprop(x, w, dy, 2, "SAME")
        dw2, db2 = conv2d_backprop_filter_with_bias(x, w.shape, dy, 2, "SAME")
        return dx, dw + dw2, db * db2

    graph = tl.function(fn).get_graph(x, w, dy)
    graph.save(tmp_path / "g.json")
    loaded = tl.graph.load(tmp_path / "g.json")
    assert {"Conv2DBackprop", "Conv2DBackpropFilterWithBias"} <= set(_types(loaded))
    for got, want in zip(loaded(x, w, dy), fn(tl.tensor(x), tl.tensor(w), tl.tensor(dy))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())

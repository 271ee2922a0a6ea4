"""The optimizer's conv + bias + activation fusion: ``AddActivation(Conv2D(x, w), b)`` -> ``Conv2DAddActivation``.

Exactness is checked bit for bit against eager (which never fuses) and at the kernel level for every conv
strategy; the fusion must not fire where it would change a result or drop a value something else reads.
"""

import numpy as np
import pytest
from _lenet import lenet_data, lenet_step

import tensorlib as tl
from tensorlib.backends import numpy_nn
from tensorlib.backends.numpy_nn import fused as fused_kernels

RNG = np.random.default_rng(0)
ACTIVATIONS = {"relu": tl.nn.relu, "tanh": tl.tanh, "sigmoid": tl.sigmoid}


def _types(graph):
    return [n.op_type for n in graph.nodes]


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("bias_first", [False, True])
def test_conv_bias_activation_fuses_into_one_op_bit_for_bit(activation, dtype, bias_first):
    x = RNG.standard_normal((4, 12, 12, 3)).astype(dtype)  # conv result 4*12*12*8 values: pooled buffers
    w = RNG.standard_normal((3, 3, 3, 8)).astype(dtype)
    b = RNG.standard_normal(8).astype(dtype)
    act = ACTIVATIONS[activation]

    def fn(x, w, b):
        conv = tl.nn.conv2d(x, w, strides=1, padding="SAME")
        return act(b + conv if bias_first else conv + b) * 2.0

    f = tl.function(fn)
    graph = f.get_graph(x, w, b).optimize().verify()
    assert _types(graph) == ["Conv2DAddActivation", "Mul"]
    node = graph.nodes[0]
    assert node.attrs["activation"] == activation and node.attrs["padding"] == "SAME"
    assert [t.shape for t in node.inputs] == [x.shape, w.shape, b.shape]
    eager = fn(tl.tensor(x), tl.tensor(w), tl.tensor(b)).numpy()
    for _ in range(3):  # the first (checked) run, then runs into pooled buffers
        np.testing.assert_array_equal(f(x, w, b).numpy(), eager)


def test_a_traced_lenet_step_fuses_both_convs_and_matches_eager():
    x, labels, params = lenet_data(RNG)
    step = tl.function(lenet_step)
    types = _types(step.get_graph(x, labels, params).optimize().verify())
    # conv1 in phase order with its pool (tests/test_phase_pool.py), conv2 as one Conv2DAddActivation
    assert types.count("Conv2DAddActivation") == 1 and types.count("Conv2DAddActivationPhasePool") == 1
    assert "Conv2D" not in types and "AddActivation" not in types
    eager = lenet_step(tl.tensor(x), tl.tensor(labels), [tl.tensor(p) for p in params])
    for _ in range(3):
        for got, want in zip(step(x, labels, params), eager):
            # The conv layers' gradients are fused too (tests/test_graph_conv_backprop_fusion.py): they sum in an
            # order of their own, equal to float32 rounding.
            want = want.numpy()
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


@pytest.mark.parametrize("case", ["conv_used_again", "full_shape_bias", "bias_per_row", "not_a_conv"])
def test_the_fusion_is_skipped_where_it_would_not_be_exact_or_would_drop_a_value(case):
    x = RNG.standard_normal((2, 6, 6, 3))
    w = RNG.standard_normal((3, 3, 3, 4))
    b = {"full_shape_bias": RNG.standard_normal((2, 4, 4, 4)), "bias_per_row": RNG.standard_normal((4, 1))}
    b = b.get(case, RNG.standard_normal(4))

    def fn(x, w, b):
        conv = tl.nn.conv2d(x, w, strides=1, padding="VALID")
        if case == "not_a_conv":
            conv = conv * 1.5
        out = tl.nn.relu(conv + b)
        return (out, conv) if case == "conv_used_again" else out

    f = tl.function(fn)
    types = _types(f.get_graph(x, w, b).optimize().verify())
    assert "Conv2DAddActivation" not in types and "Conv2D" in types
    for got, want in zip(tl.tree.leaves(f(x, w, b)), tl.tree.leaves(fn(tl.tensor(x), tl.tensor(w), tl.tensor(b)))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_bias_of_unknown_length_is_not_fused_as_it_may_broadcast_one_value():
    x, w = RNG.standard_normal((2, 6, 6, 3)), RNG.standard_normal((3, 3, 3, 4))

    def fn(x, w, b):
        return tl.nn.relu(tl.nn.conv2d(x, w, strides=1, padding="VALID") + b)

    graph = tl.function(fn).get_graph(x, tl.TensorSpec((3, 3, 3, None), "float64"), tl.TensorSpec((None,), "float64"))
    assert "Conv2DAddActivation" not in _types(graph.optimize().verify())
    for b in (np.array([0.25]), RNG.standard_normal(4)):
        np.testing.assert_array_equal(graph(x, w, b).numpy(), fn(tl.tensor(x), tl.tensor(w), tl.tensor(b)).numpy())


def test_the_fused_op_differentiates_like_the_unfused_ops_under_a_tape():
    x, w, b = RNG.standard_normal((2, 7, 7, 2)), RNG.standard_normal((3, 3, 2, 3)), RNG.standard_normal(3)
    f = tl.function(lambda x, w, b: tl.tanh(tl.nn.conv2d(x, w, strides=2, padding="SAME") + b))
    xt, wt, bt = tl.tensor(x), tl.tensor(w), tl.tensor(b)
    with tl.GradientTape() as tape:  # the optimized graph is replayed op by op: the fused op's own rules run
        tape.watch([xt, wt, bt])
        y = tl.sum(f(xt, wt, bt) ** 2)
    got = tape.gradient(y, [xt, wt, bt])
    assert "Conv2DAddActivation" in _types(f.get_graph(x, w, b).optimize(keep_gradients=True))
    unfused = lambda x, w, b: tl.sum(tl.tanh(tl.nn.conv2d(x, w, strides=2, padding="SAME") + b) ** 2)  # noqa: E731
    for g, want in zip(got, tl.grad(unfused, argnums=(0, 1, 2))(xt, wt, bt)):
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("strategy", [numpy_nn.SHIFTED_GEMM, numpy_nn.IM2COL_GEMM, numpy_nn.FOURIER_GEMM])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_kernel_applies_bias_and_activation_to_every_block_as_the_unfused_ops_do(strategy, dtype, monkeypatch):
    from tensorlib.backends.numpy_nn import conv, fourier

    monkeypatch.setattr(conv, "_PATCH_BLOCK_BYTES", 4096)  # several image and row blocks
    monkeypatch.setattr(fourier, "_FOURIER_CHUNK_BYTES", 32 * 1024)
    x = RNG.standard_normal((5, 9, 8, 6)).astype(dtype)
    w = RNG.standard_normal((3, 2, 6, 7)).astype(dtype)
    b = RNG.standard_normal(7).astype(dtype)
    pads = ((1, 1), (0, 1))
    plain = numpy_nn.conv2d(x, w, (2, 1), (1, 2), pads, strategy=strategy)
    want = np.maximum(plain + b, 0)
    got = numpy_nn.conv2d(
        x,
        w,
        (2, 1),
        (1, 2),
        pads,
        strategy=strategy,
        epilogue=lambda block: fused_kernels._relu(np.add(block, b, out=block)),
    )
    np.testing.assert_array_equal(got, want)
    out = np.full_like(want, np.nan)
    result = fused_kernels.conv2d_add_activation(x, w, b, (2, 1), (1, 2), pads, activation="tanh", out=out)
    assert result is out
    np.testing.assert_array_equal(out, np.tanh(numpy_nn.conv2d(x, w, (2, 1), (1, 2), pads) + b))


def test_conv2d_into_a_wrong_out_names_the_shapes():
    x, w = np.ones((1, 4, 4, 2), np.float32), np.ones((3, 3, 2, 5), np.float32)
    with pytest.raises(ValueError, match=r"conv2d: out must be a C-contiguous float32\[1, 2, 2, 5\] array, got"):
        numpy_nn.conv2d(x, w, (1, 1), (1, 1), ((0, 0), (0, 0)), out=np.empty((1, 2, 2, 4), np.float32))

"""The optimizer's conv + bias + activation + max pool fusion: ``MaxPool(Conv2DAddActivation(x, w, b))`` ->
``Conv2DAddActivationMaxPool``, whose two outputs stand for the conv's result and the pool's.

``optimize()`` runs the pass only when ``passes.FUSE_CONV_MAX_POOL`` is set (off by default: measured slower on
the machines at hand), so the graph tests set it.  Exactness is checked bit for bit against eager (which never
fuses) and at the kernel level for every conv strategy and dtype, with image blocks small enough that the pool
runs on many of them; the fusion must not fire where there is nothing to fuse, and must fuse one pool only where
several read the same conv.
"""

import numpy as np
import pytest
from _lenet import lenet_data, lenet_step

import tensorlib as tl
from tensorlib.backends import numpy_nn
from tensorlib.backends.numpy_nn import fused as fused_kernels
from tensorlib.backends.numpy_nn import pool as pool_kernels
from tensorlib.graph import passes
from tensorlib.ops.nn.fused import conv2d_add_activation_max_pool

RNG = np.random.default_rng(0)
ACTIVATIONS = {"relu": tl.nn.relu, "tanh": tl.tanh, "sigmoid": tl.sigmoid}
# (ksize, strides, padding): windows apart and tiling, overlapping, non-square, SAME beyond the edge
POOLS = [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((3, 2), (1, 2), "SAME"), ((2, 3), (3, 1), "VALID")]


def _types(graph):
    return [n.op_type for n in graph.nodes]


@pytest.fixture
def pool_fusion(monkeypatch):
    monkeypatch.setattr(passes, "FUSE_CONV_MAX_POOL", True)


def test_optimize_leaves_the_pool_alone_unless_asked():
    x, w, b = RNG.standard_normal((2, 8, 8, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal(4)
    fn = tl.function(lambda x, w, b: tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w, 1, "SAME") + b), 2, 2, "VALID"))
    graph = fn.get_graph(x, w, b)
    assert _types(graph.optimize()) == ["Conv2DAddActivation", "MaxPool"]
    assert _types(passes.fuse_conv_add_activation_max_pool(graph.optimize())) == ["Conv2DAddActivationMaxPool"]


@pytest.mark.parametrize("strategy", [numpy_nn.SHIFTED_GEMM, numpy_nn.IM2COL_GEMM, numpy_nn.FOURIER_GEMM])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("pool", POOLS, ids=str)
def test_the_kernel_pools_every_block_of_images_as_the_unfused_ops_do(strategy, dtype, pool, monkeypatch):
    from tensorlib.backends.numpy_nn import conv, fourier

    monkeypatch.setattr(conv, "_PATCH_BLOCK_BYTES", 4096)  # several image blocks (and row bands)
    monkeypatch.setattr(fourier, "_FOURIER_CHUNK_BYTES", 32 * 1024)
    monkeypatch.setattr(pool_kernels, "_POOL_BLOCK_BYTES", 2048)  # the pool splits each block of images again
    ksize, strides, padding = pool
    x = RNG.standard_normal((7, 11, 10, 3)).astype(dtype)
    w = RNG.standard_normal((3, 2, 3, 6)).astype(dtype)
    b = RNG.standard_normal(6).astype(dtype)
    conv_args = (x, w, b, (1, 1), (1, 2), ((1, 1), (0, 1)))
    want_h = numpy_nn.conv2d(*conv_args[:2], *conv_args[3:], strategy=strategy)
    want_h = np.maximum(want_h + b, 0)
    pool_pads = numpy_nn.resolve_conv_padding(want_h.shape[1:3], ksize, strides, (1, 1), padding)[1]
    want_pooled = numpy_nn.max_pool(want_h, ksize, strides, pool_pads)
    h, pooled = fused_kernels.conv2d_add_activation_max_pool(
        *conv_args, ksize, strides, pool_pads, activation="relu", strategy=strategy
    )
    assert h.dtype == pooled.dtype == np.dtype(dtype)
    assert h.tobytes() == want_h.tobytes() and pooled.tobytes() == want_pooled.tobytes()


def test_the_kernel_writes_into_the_buffers_it_is_given_and_allocates_the_others():
    x, w, b = RNG.standard_normal((3, 8, 8, 2)), RNG.standard_normal((3, 3, 2, 4)), RNG.standard_normal(4)
    args = (x, w, b, (1, 1), (1, 1), ((1, 1), (1, 1)), (2, 2), (2, 2), ((0, 0), (0, 0)))
    want_h, want_pooled = fused_kernels.conv2d_add_activation_max_pool(*args, activation="tanh")
    np.testing.assert_array_equal(want_pooled, numpy_nn.max_pool(want_h, (2, 2), (2, 2), ((0, 0), (0, 0))))
    h_out, pooled_out = np.full_like(want_h, np.nan), np.full_like(want_pooled, np.nan)
    for out in [(h_out, pooled_out), (None, pooled_out), (h_out, None)]:
        h, pooled = fused_kernels.conv2d_add_activation_max_pool(*args, activation="tanh", out=out)
        assert (out[0] is None or h is out[0]) and (out[1] is None or pooled is out[1])
        np.testing.assert_array_equal(h, want_h)
        np.testing.assert_array_equal(pooled, want_pooled)
    with pytest.raises(ValueError, match=r"the pooled out must be a C-contiguous float64\[3, 4, 4, 4\] array, got"):
        fused_kernels.conv2d_add_activation_max_pool(*args, activation="tanh", out=(None, np.empty((3, 4, 4, 3))))
    with pytest.raises(ValueError, match=r"conv2d: out must be a C-contiguous float64\[3, 8, 8, 4\] array"):
        fused_kernels.conv2d_add_activation_max_pool(*args, activation="tanh", out=(np.empty((3, 8, 8, 4), "f4"), None))


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("pool", POOLS, ids=str)
def test_conv_bias_activation_and_max_pool_fuse_into_one_op_bit_for_bit(activation, dtype, pool, pool_fusion):
    x = RNG.standard_normal((4, 12, 11, 3)).astype(dtype)
    w = RNG.standard_normal((3, 3, 3, 8)).astype(dtype)
    b = RNG.standard_normal(8).astype(dtype)
    ksize, strides, padding = pool

    def fn(x, w, b):
        h = ACTIVATIONS[activation](tl.nn.conv2d(x, w, strides=1, padding="SAME") + b)
        return tl.nn.max_pool(h, ksize, strides, padding) * 2.0

    f = tl.function(fn)
    graph = f.get_graph(x, w, b).optimize().verify()
    assert _types(graph) == ["Conv2DAddActivationMaxPool", "Mul"]
    attrs = graph.nodes[0].attrs
    assert (attrs["activation"], attrs["padding"]) == (activation, "SAME")
    assert (attrs["pool_ksize"], attrs["pool_strides"], attrs["pool_padding"]) == pool
    eager = fn(tl.tensor(x), tl.tensor(w), tl.tensor(b)).numpy()
    for _ in range(3):  # the first (checked) run, then runs into pooled buffers
        np.testing.assert_array_equal(f(x, w, b).numpy(), eager)


def test_a_traced_lenet_step_pools_in_both_convs_and_its_gradients_are_those_of_the_unfused_step(
    monkeypatch, pool_fusion
):
    x, labels, params = lenet_data(RNG)
    step = tl.function(lenet_step)
    graph = step.get_graph(x, labels, params).optimize().verify()
    types = _types(graph)
    assert types.count("Conv2DAddActivationMaxPool") == 2
    assert not {"MaxPool", "Conv2DAddActivation", "Conv2D", "AddActivation"} & set(types)
    fused = [n for n in graph.nodes if n.op_type == "Conv2DAddActivationMaxPool"]
    pool_grads = [n for n in graph.nodes if n.op_type == "MaxPoolGrad"]
    # The pools' gradients read the fused ops' two outputs, and the ReluGrads still run before them, at pooled size:
    # conv2's alone, conv1's inside conv2's fused gradients (Conv2DBackprop with relu_grad=True).
    assert [[t._id for t in n.inputs[:2]] for n in pool_grads] == [[o._id for o in n.outputs] for n in fused[::-1]]
    assert [n.inputs[2]._node.op_type for n in pool_grads] == ["ReluGrad", "Conv2DBackprop"]
    assert pool_grads[1].inputs[2]._node.attrs["relu_grad"]
    with monkeypatch.context() as patch:
        patch.setattr(passes, "FUSE_CONV_MAX_POOL", False)
        patch.setattr(passes, "fuse_phase_pool", lambda graph: graph)  # conv1's sums in NHWC's order too
        unfused_step = tl.function(lenet_step)
        unfused = [g.numpy() for g in unfused_step(x, labels, params)]
        assert "MaxPool" in _types(unfused_step.get_graph(x, labels, params).optimize())
    eager = lenet_step(tl.tensor(x), tl.tensor(labels), [tl.tensor(p) for p in params])
    for _ in range(3):
        for got, same, want in zip(step(x, labels, params), unfused, eager):
            np.testing.assert_array_equal(got.numpy(), same)
            # The conv layers' gradients are fused as well (tests/test_graph_conv_backprop_fusion.py): they sum in
            # an order of their own, equal to float32 rounding.
            want = want.numpy()
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


@pytest.mark.parametrize("case", ["no_bias", "avg_pool", "pool_of_relu", "pool_of_the_sum"])
def test_the_fusion_is_skipped_where_no_pool_reads_a_fused_conv(case, pool_fusion):
    x, w, b = RNG.standard_normal((2, 8, 8, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal(4)

    def fn(x, w, b):
        conv = tl.nn.conv2d(x, w, strides=1, padding="VALID")
        h = {"no_bias": tl.nn.relu(conv), "pool_of_the_sum": conv + b}.get(case, tl.nn.relu(conv + b))
        if case == "pool_of_relu":
            h = tl.nn.relu(h * 2.0)
        pool = tl.nn.avg_pool if case == "avg_pool" else tl.nn.max_pool
        return pool(h, 2, 2, "VALID")

    f = tl.function(fn)
    types = _types(f.get_graph(x, w, b).optimize().verify())
    assert "Conv2DAddActivationMaxPool" not in types
    np.testing.assert_array_equal(f(x, w, b).numpy(), fn(tl.tensor(x), tl.tensor(w), tl.tensor(b)).numpy())


def test_where_two_pools_read_the_conv_one_is_fused_and_the_other_reads_its_first_output(pool_fusion):
    x, w, b = RNG.standard_normal((2, 9, 9, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal(4)

    def fn(x, w, b):
        h = tl.nn.relu(tl.nn.conv2d(x, w, strides=1, padding="SAME") + b)
        return tl.nn.max_pool(h, 2, 2, "VALID"), tl.nn.max_pool(h, 3, 2, "SAME"), h

    f = tl.function(fn)
    graph = f.get_graph(x, w, b).optimize().verify()
    assert _types(graph) == ["Conv2DAddActivationMaxPool", "MaxPool"]
    fused, pool = graph.nodes
    assert fused.attrs["pool_ksize"] == (2, 2) and pool.inputs[0] is fused.outputs[0]
    assert [t._id for t in graph.outputs] == [fused.outputs[1]._id, pool.outputs[0]._id, fused.outputs[0]._id]
    for got, want in zip(f(x, w, b), fn(tl.tensor(x), tl.tensor(w), tl.tensor(b))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def _unfused(x, w, b):
    h = tl.tanh(tl.nn.conv2d(x, w, strides=2, padding="SAME") + b)
    return tl.sum(tl.nn.max_pool(h, (3, 2), (2, 1), "SAME") ** 2) + 0.5 * tl.sum(h * h)


def test_the_fused_op_differentiates_like_the_unfused_ops_under_a_tape_to_second_order(pool_fusion):
    x, w, b = RNG.standard_normal((2, 9, 9, 2)), RNG.standard_normal((3, 3, 2, 3)), RNG.standard_normal(3)
    f = tl.function(_unfused)
    assert "Conv2DAddActivationMaxPool" in _types(f.get_graph(x, w, b).optimize(keep_gradients=True))
    xt, wt, bt = tl.tensor(x), tl.tensor(w), tl.tensor(b)
    # The optimized graph is replayed op by op under the tapes: the fused op's own rules run, twice.
    with tl.GradientTape() as outer:
        outer.watch([xt, wt, bt])
        with tl.GradientTape() as inner:
            inner.watch([xt, wt, bt])
            y = f(xt, wt, bt)
        grads = inner.gradient(y, [xt, wt, bt])
        directional = sum(tl.sum(g * g) for g in grads)
    second = outer.gradient(directional, [xt, wt, bt])
    with tl.GradientTape() as outer:
        outer.watch([xt, wt, bt])
        with tl.GradientTape() as inner:
            inner.watch([xt, wt, bt])
            y = _unfused(xt, wt, bt)
        want_grads = inner.gradient(y, [xt, wt, bt])
        want_directional = sum(tl.sum(g * g) for g in want_grads)
    want_second = outer.gradient(want_directional, [xt, wt, bt])
    for got, want in zip([*grads, *second], [*want_grads, *want_second]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)


def test_the_fused_ops_gradients_check_against_finite_differences_to_second_order():
    x, w, b = RNG.standard_normal((2, 7, 6, 2)), RNG.standard_normal((3, 2, 2, 3)), RNG.standard_normal(3)

    def fn(x, w, b):
        h, pooled = conv2d_add_activation_max_pool(x, w, b, 1, "SAME", 1, "sigmoid", (3, 2), (2, 1), "SAME")
        return tl.sum(pooled**3) + 0.3 * tl.sum(h * h)

    tl.testing.check_grads(fn, (x, w, b), order=2)


def test_a_graph_holding_the_fused_op_saves_and_loads(tmp_path, pool_fusion):
    x, w, b = RNG.standard_normal((2, 8, 8, 3)), RNG.standard_normal((3, 3, 3, 4)), RNG.standard_normal(4)

    def fn(x, w, b):
        return tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w, strides=1, padding="SAME") + b), 3, 2, "SAME")

    graph = tl.function(fn).get_graph(x, w, b).optimize()
    assert _types(graph) == ["Conv2DAddActivationMaxPool"]
    graph.save(tmp_path / "fused.tlg")
    loaded = tl.graph.load(tmp_path / "fused.tlg")
    assert _types(loaded) == ["Conv2DAddActivationMaxPool"] and loaded.nodes[0].attrs == graph.nodes[0].attrs
    np.testing.assert_array_equal(loaded(x, w, b).numpy(), fn(tl.tensor(x), tl.tensor(w), tl.tensor(b)).numpy())

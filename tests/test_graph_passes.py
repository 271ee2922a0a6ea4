"""Graph passes: dead nodes, CSE, constant folding, algebraic no-ops, conv+avgpool fusion, memory plan."""

import tracemalloc

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph.passes import FOLD_BYTES, canonical

RNG = np.random.default_rng(0)


def _types(graph):
    return [n.op_type for n in graph.nodes]


def _optimized(fn, *args):
    f = tl.function(fn)
    eager = fn(*[tl.tensor(a) for a in args])
    np.testing.assert_allclose(f(*args).numpy(), eager.numpy(), rtol=1e-12, atol=1e-12)
    assert f(*args).dtype == eager.dtype and f(*args).shape == eager.shape
    return f.get_graph(*args).optimize().verify()


def test_dead_nodes_are_removed_but_assignments_stay():
    v = tl.Variable(np.zeros(1))

    def fn(x):
        unused = tl.exp(x) * 3.0  # noqa: F841 - dead on purpose
        v.assign(x[:1])
        return tl.sin(x)

    graph = tl.function(fn).get_graph(np.ones(2))
    assert _types(graph) == ["Exp", "Mul", "StridedSlice", "AssignVariable", "Sin"]
    assert _types(graph.optimize()) == ["StridedSlice", "AssignVariable", "Sin"]


def test_common_subexpressions_are_merged_by_op_inputs_and_canonical_attrs():
    x = RNG.random((4, 3))
    graph = _optimized(lambda x: x[1:3] * tl.exp(x[1:3]) + x[0:2], x)
    assert _types(graph) == ["StridedSlice", "Exp", "Mul", "StridedSlice", "Add"]
    graph = _optimized(lambda x: tl.cast(x, "float32")[:2] * tl.cast(x, "float32")[:2] + tl.cast(x, "int64")[:2], x)
    assert _types(graph) == ["Cast", "StridedSlice", "Mul", "Cast", "StridedSlice", "Cast", "Cast", "Add"]
    assert len({canonical(v) for v in (1, 1.0, True, "1", None, (1,), [1], slice(1), np.dtype("int64"))}) == 9
    assert canonical({"index": (slice(1, 3), Ellipsis, None), "dtype": np.dtype("float32")}) == canonical(
        {"dtype": np.dtype("float32"), "index": (slice(1, 3), Ellipsis, None)}
    )


def test_small_constants_are_folded_and_big_results_are_not():
    def fn(x):
        c = tl.exp(tl.tensor([0.0, 1.0]) * 2.0)  # all-constant: folded
        big = tl.broadcast_to(tl.tensor(1.5), (5, 1000))  # 20 kB result: not folded
        return x * c + tl.sum(big)

    graph = _optimized(fn, RNG.random((3, 2)))
    assert _types(graph) == ["BroadcastTo", "Mul", "Sum", "Cast", "Add"]
    assert all(raw.nbytes <= FOLD_BYTES for _, raw in graph.constants.values())


def test_algebraic_no_ops_are_removed():
    x = RNG.random((2, 3))
    graph = _optimized(lambda x: tl.transpose(tl.transpose(x * 1.0 + -0.0)) / 1.0 - 0.0, x)
    assert _types(graph) == []
    graph = _optimized(lambda x: tl.reshape(tl.reshape(tl.cast(x, "float64"), (3, 2)), (6,)) * (1.0 * x[0, 0] + 1.0), x)
    assert _types(graph).count("Reshape") == 1 and "Cast" not in _types(graph)
    graph = _optimized(lambda x: tl.transpose(tl.transpose(x[None], (2, 0, 1)), (0, 2, 1)), x)
    assert _types(graph) == ["StridedSlice", "Transpose"] and graph.nodes[1].attrs["perm"] == (2, 1, 0)


def test_no_ops_that_would_change_shape_or_dtype_are_kept():
    x = RNG.random(3)
    assert "Mul" in _types(_optimized(lambda x: x * np.ones((2, 3)), x))  # broadcasts
    assert "Add" in _types(_optimized(lambda x: x + np.zeros((2, 1, 3)), x))  # adds an axis
    assert "Add" in _types(_optimized(lambda x: x + np.array([0.0, 1e-300, 0.0]), x))


@pytest.mark.parametrize(
    "fn, kept",
    [
        (lambda x: x + 0.0, ["Add"]),  # -0.0 + 0.0 is +0.0
        (lambda x: 0.0 + x, ["Add"]),
        (lambda x: x + np.zeros(4), ["Add"]),
        (lambda x: x - -0.0, ["Sub"]),
        (lambda x: x + -0.0, []),  # +0.0 + -0.0 is +0.0: exact for every x
        (lambda x: -0.0 + x, []),
        (lambda x: x - 0.0, []),
    ],
)
def test_adding_a_zero_is_removed_only_where_it_keeps_every_sign_of_zero(fn, kept):
    x = np.array([-0.0, 0.0, -np.inf, 1.5])
    f = tl.function(lambda x: 1.0 / fn(x))  # 1 / -0.0 is -inf: the sign shows
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(f(x).numpy(), 1.0 / fn(tl.tensor(x)).numpy())
        np.testing.assert_array_equal(f(x).numpy(), 1.0 / fn(x))  # NumPy's own sum
    assert _types(f.get_graph(x).optimize()) == kept + ["Div"]


@pytest.mark.parametrize("fn", [lambda x: x * 1.0, lambda x: 1.0 * x, lambda x: x / 1.0, lambda x: x**1.0])
def test_complex_units_are_kept_as_numpy_turns_an_infinite_part_into_nan(fn):
    x = np.array([complex(np.inf, 0.0), complex(1.0, -0.0), complex(-0.0, -0.0), complex(2.0, np.inf)])
    with np.errstate(invalid="ignore"):
        expected = fn(x)
        got = tl.function(fn)(x).numpy()
    np.testing.assert_array_equal(got.view(np.float64), expected.view(np.float64))
    np.testing.assert_array_equal(np.signbit(got.view(np.float64)), np.signbit(expected.view(np.float64)))


def _conv_reference(x, w, stride=1):
    """Direct loops: VALID cross-correlation (NHWC, HWIO)."""
    n, h, wd, _ = x.shape
    kh, kw, _, cout = w.shape
    out = np.zeros((n, (h - kh) // stride + 1, (wd - kw) // stride + 1, cout))
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            out[:, i, j, :] = np.einsum("nabc,abcd->nd", patch, w)
    return out


def _pool_reference(y, k, stride):
    n, h, w, c = y.shape
    out = np.zeros((n, (h - k) // stride + 1, (w - k) // stride + 1, c))
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            out[:, i, j, :] = y[:, i * stride : i * stride + k, j * stride : j * stride + k, :].mean(axis=(1, 2))
    return out


@pytest.mark.parametrize("ksize, stride", [(2, 2), (3, 2), (2, 1)])
def test_avgpool_after_conv_fuses_into_one_strided_conv(ksize, stride):
    x, w = RNG.random((2, 11, 11, 2)), RNG.standard_normal((3, 3, 2, 4))

    def fn(x, w):
        y = tl.nn.conv2d(x, w, strides=1, padding="VALID")
        return tl.nn.relu(tl.nn.avg_pool(y, ksize=ksize, strides=stride, padding="VALID"))

    graph = _optimized(fn, x, w)
    convs = [n for n in graph.nodes if n.op_type == "Conv2D"]
    assert "AvgPool" not in _types(graph) and len(convs) == 1
    assert convs[0].attrs["strides"] == (stride, stride) and convs[0].inputs[1].shape == (2 + ksize, 2 + ksize, 2, 4)
    expected = np.maximum(_pool_reference(_conv_reference(x, w), ksize, stride), 0)
    np.testing.assert_allclose(tl.function(fn)(x, w).numpy(), expected, rtol=1e-12, atol=1e-12)
    loss = tl.function(lambda x, w: tl.sum(fn(x, w) ** 2))
    eager = tl.grad(lambda w: tl.sum(fn(tl.tensor(x), w) ** 2))(tl.tensor(w))
    np.testing.assert_allclose(tl.grad(lambda w: loss(x, w))(tl.tensor(w)).numpy(), eager.numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "conv_kwargs, pool_padding, reuse",
    [
        ({"padding": "SAME"}, "VALID", False),
        ({"strides": 2}, "VALID", False),
        ({"dilations": 2}, "VALID", False),
        ({}, "SAME", False),
        ({}, "VALID", True),
    ],
)
def test_fusion_is_skipped_where_it_would_not_be_exact(conv_kwargs, pool_padding, reuse):
    x, w = RNG.random((1, 12, 12, 1)), RNG.standard_normal((3, 3, 1, 2))

    def fn(x, w):
        y = tl.nn.conv2d(x, w, **{"strides": 1, "padding": "VALID", **conv_kwargs})
        p = tl.nn.avg_pool(y, ksize=2, strides=2, padding=pool_padding)
        return (p, y) if reuse else p

    f = tl.function(fn)
    graph = f.get_graph(x, w).optimize()
    assert _types(graph) == ["Conv2D", "AvgPool"]
    for got, want in zip(tl.tree.leaves(f(x, w)), tl.tree.leaves(fn(tl.tensor(x), tl.tensor(w)))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_memory_plan_frees_each_intermediate_after_its_last_use():
    n = 500_000  # 4 MB per float64 intermediate
    x = RNG.random(n)

    def chain(x):
        for _ in range(4):
            x = tl.sin(x) + 1.0
            x = tl.exp(x * 0.5)
        return tl.sum(x)

    f = tl.function(chain)
    expected = float(chain(tl.tensor(x)))
    f(x)
    f(x)  # compiled, first-run checks done
    tracemalloc.start()
    try:
        result = f(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(float(result), expected, rtol=1e-12)
    assert peak < 2.5 * x.nbytes, f"peak {peak / 1e6:.1f} MB for 16 ops on {x.nbytes / 1e6:.0f} MB intermediates"
    plan = f.get_graph(x).optimize().executable().plan_text()
    assert plan.count("free ") >= 15


def test_verify_rejects_malformed_graphs():
    f = tl.function(lambda x: tl.exp(x) + 1.0)
    graph = f.get_graph(np.ones(3)).optimize()
    assert graph.verify() is graph
    graph.nodes.reverse()
    with pytest.raises(ValueError, match=r"node 0 \(Add\): input %\d+ is used before it is defined"):
        graph.verify()
    graph.nodes.reverse()
    graph.nodes[0].outputs[0].shape = (4,)
    with pytest.raises(
        ValueError,
        match=r"node 0 \(Exp\): output %\d+ recorded as float64\[4\], the shape rule "
        r"gives float64\[3\]",
    ):
        graph.verify()


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias_shape", [(32,), (1, 1, 32), ()])
def test_bias_add_and_activation_fuse_into_one_exact_op(activation, dtype, bias_shape, monkeypatch):
    from tensorlib.backends.numpy_nn import fused

    monkeypatch.setattr(fused, "BLOCK_BYTES", 16 * 1024)  # the kernel works in several row blocks
    act = {"relu": tl.nn.relu, "tanh": tl.tanh, "sigmoid": tl.sigmoid}[activation]
    x = RNG.standard_normal((24, 40, 32)).astype(dtype)  # 120 KiB+: pooled by the executor
    b = RNG.standard_normal(bias_shape).astype(dtype)

    def fn(x, b):
        return act(x + b) * 2.0

    graph = tl.function(fn).get_graph(x, b).optimize()
    assert _types(graph) == ["AddActivation", "Mul"] and graph.nodes[0].attrs == {"activation": activation}
    eager = fn(tl.tensor(x), tl.tensor(b)).numpy()
    for _ in range(3):  # the first (checked) run, then pooled runs
        np.testing.assert_array_equal(tl.function(fn)(x, b).numpy(), eager)  # bit for bit the unfused result

    def loss(x, b):
        return tl.sum(fn(x, b) ** 2)

    step = tl.function(lambda x, b: tl.grad(loss, argnums=(0, 1))(x, b))
    for got, want in zip(step(x, b), tl.grad(loss, argnums=(0, 1))(tl.tensor(x), tl.tensor(b))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5 if dtype == "float32" else 1e-12)
    assert "AddActivation" in _types(step.get_graph(x, b).optimize())


def test_the_fused_op_differentiates_like_the_unfused_pair_under_a_tape():
    x, b = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    f = tl.function(lambda x, b: tl.nn.relu(x + b) + tl.tanh(x - b + b))
    xt, bt = tl.tensor(x), tl.tensor(b)
    with tl.GradientTape() as tape:  # the optimized graph is replayed op by op: the fused op's own rules run
        tape.watch([xt, bt])
        y = tl.sum(f(xt, bt) ** 2)
    got = tape.gradient(y, [xt, bt])
    want = tl.grad(lambda x, b: tl.sum((tl.nn.relu(x + b) + tl.tanh(x - b + b)) ** 2), argnums=(0, 1))(xt, bt)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    assert "AddActivation" in _types(f.get_graph(x, b).optimize(keep_gradients=True))
    tl.testing.check_grads(lambda x, b: tl.ops.nn.fused.add_activation(x, b, "tanh"), (xt, bt), order=2, modes=("rev",))


@pytest.mark.parametrize("shared", ["sum", "int"])
def test_bias_activation_fusion_is_skipped_when_not_exact_or_the_sum_is_used_again(shared):
    x = RNG.standard_normal((4, 3))
    if shared == "sum":
        fn = lambda x: (tl.nn.relu(x + 1.0), x + 1.0)  # noqa: E731
    else:
        fn = lambda x: tl.nn.relu(tl.cast(x, "int64") + 1)  # noqa: E731
    f = tl.function(fn)
    assert "AddActivation" not in _types(f.get_graph(x).optimize())
    for got, want in zip(tl.tree.leaves(f(x)), tl.tree.leaves(fn(tl.tensor(x)))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def _lenet_like_step(x, w1, w2, w3):
    """conv + relu + 2x2/2 max pool twice, then dense: the gradients of all three filters."""

    def loss(w1, w2, w3):
        h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w1, strides=1, padding="SAME") + 0.1), 2, 2, "VALID")
        h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(h, w2, strides=1, padding="SAME") - 0.1), 2, 2, "VALID")
        return tl.sum(tl.reshape(h, (x.shape[0], -1)) @ w3)

    return tl.grad(loss, argnums=(0, 1, 2))(w1, w2, w3)


def test_relu_grad_moves_before_max_pool_grad_at_pooled_size_and_bit_for_bit():
    # Integer-valued inputs and filters: many relu zeros, so windows of all-equal zeros (ties).
    x = RNG.integers(-1, 2, (8, 16, 16, 2)).astype(np.float64)  # the activations: 128 KiB+, pooled buffers
    w1, w2 = RNG.integers(-1, 2, (3, 3, 2, 8)).astype(np.float64), RNG.integers(-1, 2, (3, 3, 8, 4)).astype(float)
    w3 = RNG.standard_normal((4 * 4 * 4, 3))
    step = tl.function(_lenet_like_step)
    graph = step.get_graph(x, w1, w2, w3)
    before = [n.op_type for n in graph.nodes]
    optimized = graph.optimize().verify()
    after = _types(optimized)
    assert after.count("ReluGrad") == before.count("ReluGrad") == 2
    assert after.count("MaxPoolGrad") == before.count("MaxPoolGrad") == 2
    for node in (n for n in optimized.nodes if n.op_type == "MaxPoolGrad"):
        relu_grad = node.inputs[2]._node
        assert relu_grad.op_type == "ReluGrad" and relu_grad.inputs[1] is node.inputs[1]  # masked by the pooled p
        assert relu_grad.outputs[0].shape == node.inputs[1].shape  # at pooled size
    assert not any(n.op_type == "ReluGrad" and n.inputs[0]._node.op_type == "MaxPoolGrad" for n in optimized.nodes)
    eager = _lenet_like_step(*(tl.tensor(a) for a in (x, w1, w2, w3)))
    unoptimized = graph.executable().run([x, w1, w2, w3], [])
    for _ in range(2):  # the first (checked) run, then runs in pooled buffers
        for got, raw, want in zip(step(x, w1, w2, w3), unoptimized, eager):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            np.testing.assert_array_equal(np.asarray(raw), want.numpy())


def _relu_grad_of_max_pool_grad(ksize, strides, features="h", reuse=False, grad_dtype=None):
    from tensorlib.ops.nn.activations import _relu_grad
    from tensorlib.ops.nn.pool import _max_pool_grad

    def fn(h, g, other):
        p = tl.nn.max_pool(h, ksize, strides, "VALID")
        g = g if grad_dtype is None else tl.cast(g, grad_dtype)
        dh = _max_pool_grad(h, p, g, ksize=ksize, strides=strides, padding="VALID")
        dz = _relu_grad(dh, h if features == "h" else other)
        return (dz, tl.sum(dh)) if reuse else dz

    return fn


@pytest.mark.parametrize("grad_dtype", [None, "float32"])
@pytest.mark.parametrize(
    "ksize, strides, features, reuse, moved",
    [
        ((2, 2), (2, 2), "h", False, True),
        ((2, 3), (3, 3), "h", False, True),  # windows apart: some cells in none
        ((3, 3), (2, 2), "h", False, False),  # overlapping windows
        ((2, 2), (1, 2), "h", False, False),  # overlapping rows
        ((2, 2), (2, 2), "other", False, False),  # the mask is another tensor's
        ((2, 2), (2, 2), "h", True, False),  # the full-size gradient is used again
    ],
)
def test_relu_grad_moves_only_where_exact(ksize, strides, features, reuse, moved, grad_dtype):
    h = np.maximum(RNG.integers(-2, 3, (2, 12, 12, 3)), 0).astype(np.float64)  # ties and all-zero windows
    other = RNG.standard_normal(h.shape)
    fn = _relu_grad_of_max_pool_grad(ksize, strides, features, reuse, grad_dtype)
    f = tl.function(fn)
    p_shape = tl.nn.max_pool(h, ksize, strides, "VALID").shape
    g = RNG.standard_normal(p_shape)
    g.flat[::7], g.flat[1::11], g.flat[2::13] = np.inf, -np.inf, np.nan  # exact for these too
    optimized = f.get_graph(h, g, other).optimize()
    relu_grads = [n for n in optimized.nodes if n.op_type == "ReluGrad"]
    assert len(relu_grads) == 1 and (relu_grads[0].outputs[0].shape == p_shape) == moved
    with np.errstate(invalid="ignore"):
        want = tl.tree.leaves(fn(tl.tensor(h), tl.tensor(g), tl.tensor(other)))
        got = tl.tree.leaves(f(h, g, other))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.numpy().view(np.int64), b.numpy().view(np.int64))  # bits: NaN, signed 0


def test_the_moved_relu_grad_differentiates_like_the_original_under_a_tape():
    x, w = RNG.standard_normal((2, 6, 6, 2)), RNG.standard_normal((3, 3, 2, 3))

    def filter_gradient(x, w):
        def loss(w):
            return tl.sum(
                tl.sin(tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w, strides=1, padding="SAME")), 2, 2, "VALID"))
            )

        return tl.grad(loss)(w)

    f = tl.function(filter_gradient)
    optimized = f.get_graph(x, w).optimize(keep_gradients=True)
    assert any(n.op_type == "MaxPoolGrad" and n.inputs[2]._node.op_type == "ReluGrad" for n in optimized.nodes)
    v = RNG.standard_normal(w.shape)
    second = []
    for fn in (f, filter_gradient):  # the optimized graph is replayed op by op: its ops' own rules run
        wt = tl.tensor(w)
        with tl.GradientTape() as tape:
            tape.watch(wt)
            s = tl.sum(fn(tl.tensor(x), wt) * v)
        second.append(tape.gradient(s, wt).numpy())
    np.testing.assert_allclose(second[0], second[1], rtol=1e-12, atol=1e-12)

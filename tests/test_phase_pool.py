"""The optimizer's phase-order fusion of a first conv layer, its max pool and their gradients
(``tl.graph.passes.fuse_phase_pool``): where it applies, and that a traced training step gives eager's
values with it."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import passes

PHASE_OPS = {"Conv2DAddActivationPhasePool", "MaxPoolPhasesGrad", "Conv2DBackpropFilterWithBiasPhases"}


def _params(dtype, in_c=1, k=3, out_c=4, cells=3, rng=None):
    rng = rng or np.random.default_rng(0)
    size = 4 * cells  # conv SAME, pool 2, pool 2 again
    return {
        "w1": rng.standard_normal((k, k, in_c, out_c)).astype(dtype) * 0.5,
        "b1": rng.standard_normal(out_c).astype(dtype) * 0.1,
        "w2": rng.standard_normal((size // 2 * size // 2 * out_c, 3)).astype(dtype) * 0.1,
    }, size


def _loss(params, x, labels, strides=1, pool=2, also_h=False):
    h = tl.nn.relu(tl.nn.conv2d(x, params["w1"], strides, "SAME") + params["b1"])
    p = tl.nn.max_pool(h, pool, pool, "VALID")
    logits = tl.reshape(p, (x.shape[0], -1)) @ params["w2"]
    loss = tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return loss + (tl.sum(h) * 0.0 if also_h else 0.0)


def _step(**options):
    def step(params, x, labels):
        return tl.value_and_grad(lambda p: _loss(p, x, labels, **options))(params)

    return step


def _op_types(fn, *args):
    graph = passes.optimized(tl.function(fn).get_graph(*args))
    return {node.op.name for node in graph.nodes}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_traced_step_runs_in_phase_order_and_matches_eager(dtype):
    params, size = _params(dtype)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, size, size, 1)).astype(dtype)
    x[0, :4, :4] = 0.0  # relu zeros: windows whose cells tie
    labels = rng.integers(0, 3, 5)
    step = _step()
    assert PHASE_OPS <= _op_types(step, params, x, labels)
    loss, grads = tl.function(step)(params, x, labels)
    eager_loss, eager_grads = step(params, x, labels)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=tol)
    for name in params:
        np.testing.assert_allclose(grads[name].numpy(), eager_grads[name].numpy(), rtol=tol, atol=tol)


def test_inf_and_nan_inputs_give_eager_values():
    """A zero tap of the phase filters times an inf would be NaN: such blocks take the NHWC conv."""
    params, size = _params(np.float64)
    x = np.random.default_rng(2).standard_normal((3, size, size, 1))
    x[1, 5, 6, 0] = np.inf
    x[2, 0, 0, 0] = np.nan
    labels = np.array([0, 1, 2])
    loss, grads = tl.function(_step())(params, x, labels)
    eager_loss, eager_grads = _step()(params, x, labels)
    np.testing.assert_array_equal(np.isnan(loss.numpy()), np.isnan(eager_loss.numpy()))
    for name in params:
        got, expected = grads[name].numpy(), eager_grads[name].numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_allclose(got[np.isfinite(expected)], expected[np.isfinite(expected)], rtol=1e-12)


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid"])
def test_the_forward_and_the_pool_gradient_alone_equal_the_nhwc_kernels(activation):
    x = np.random.default_rng(3).standard_normal((2, 6, 6, 2)).astype(np.float32)
    w, b = np.ones((3, 3, 2, 4), np.float32), np.linspace(-1, 1, 4).astype(np.float32)
    op = tl.ops.get("Conv2DAddActivationPhasePool")
    h, pooled = op(x, w, b, padding="SAME", activation=activation, pool=(2, 3))
    nhwc = {"relu": tl.nn.relu, "tanh": tl.tanh, "sigmoid": tl.sigmoid}[activation](tl.nn.conv2d(x, w, 1, "SAME") + b)
    to_phases = lambda a: a.reshape(2, 3, 2, 2, 3, 4).transpose(2, 4, 0, 1, 3, 5).reshape(6, 2, 3, 2, 4)
    assert h.shape == (6, 2, 3, 2, 4)
    np.testing.assert_allclose(h.numpy(), to_phases(nhwc.numpy()), rtol=1e-6, atol=1e-6)
    # The pool and its gradient are bit for bit MaxPool's and MaxPoolGrad's of the same conv result.
    same = np.empty((2, 6, 6, 4), np.float32)
    for a in range(2):
        for c in range(3):
            same[:, a::2, c::3] = h.numpy()[a * 3 + c]
    np.testing.assert_array_equal(pooled.numpy(), tl.nn.max_pool(same, (2, 3), (2, 3), "VALID").numpy())
    g = np.random.default_rng(4).standard_normal(pooled.shape).astype(np.float32)
    g[0, 0, 0, 0] = np.inf
    dx = tl.ops.get("MaxPoolPhasesGrad")(h, pooled, g, pool=(2, 3)).numpy()
    unfused = tl.ops.get("MaxPoolGrad")(same, pooled, g, ksize=(2, 3), strides=(2, 3), padding="VALID").numpy()
    np.testing.assert_array_equal(dx, to_phases(unfused))


@pytest.mark.parametrize(
    ("options", "params_options"),
    [
        ({"strides": 2}, {}),  # a strided conv
        ({"also_h": True}, {}),  # h read by more than the pool and its gradient
        ({}, {"in_c": 5}),  # too many input channels for the planes to pay
    ],
)
def test_not_applied_where_it_does_not_fit(options, params_options):
    params, size = _params(np.float32, **params_options)
    if options.get("strides") == 2:
        params["w2"] = params["w2"][: params["w2"].shape[0] // 4]
    x = np.ones((2, size, size, params["w1"].shape[2]), np.float32)
    assert not PHASE_OPS & _op_types(_step(**options), params, x, np.array([0, 1]))


def test_not_applied_without_gradients_nor_for_replay_under_a_tape():
    params, size = _params(np.float32)
    x = np.ones((2, size, size, 1), np.float32)
    assert not PHASE_OPS & _op_types(lambda p, x, y: _loss(p, x, y), params, x, np.array([0, 1]))
    graph = tl.function(_step()).get_graph(params, x, np.array([0, 1]))
    assert PHASE_OPS <= {n.op.name for n in passes.optimized(graph).nodes}
    assert not PHASE_OPS & {n.op.name for n in passes.optimized(graph, keep_gradients=True).nodes}


def test_not_applied_off_the_numpy_backend():
    """Elsewhere the phase-order ops would be the NHWC kernels with a reordering on top."""
    pytest.importorskip("array_api_strict")
    params, size = _params(np.float32)
    on = lambda a: tl.tensor(a, backend="array_api_strict")
    strict = {k: on(v) for k, v in params.items()}
    x, labels = on(np.ones((2, size, size, 1), np.float32)), on(np.array([0, 1]))
    assert not PHASE_OPS & _op_types(_step(), strict, x, labels)
    loss, _ = tl.function(_step())(strict, x, labels)
    np.testing.assert_allclose(
        loss.numpy(), _step()(params, np.ones((2, size, size, 1), np.float32), np.array([0, 1]))[0].numpy(), rtol=1e-5
    )


@pytest.mark.parametrize(
    ("pool", "kernel", "in_c", "pads"),
    [
        ((2, 2), (5, 5), 1, ((2, 2), (2, 2))),  # the LeNet layer: each phase reads 31 of the 38 rows
        ((1, 2), (3, 3), 2, ((1, 1), (1, 1))),  # one pool row: first and last at once
        ((3, 3), (2, 3), 3, ((1, 0), (0, 2))),  # a middle pool row (all the rows), uneven pads
        ((3, 2), (1, 1), 1, ((0, 0), (0, 0))),  # a 1x1 filter
    ],
)
def test_phase_filter_gradient_of_the_rows_each_phase_reads(pool, kernel, in_c, pads, monkeypatch):
    """The filter and bias gradients from phase-ordered output gradients, each phase's GEMM over the planes' rows
    that its taps meet and its own row of ones (with thin-GEMM pieces shorter than a block), against the float64
    loop reference on the NHWC gradient."""
    from tensorlib.backends.numpy_nn import blocks, phases
    from tensorlib.testing import references

    monkeypatch.setattr(blocks, "_BLAS_SINGLE_THREAD_FLOPS", 4096)
    rng = np.random.default_rng(5)
    (ph, pw), (kh, kw) = pool, kernel
    out_c, cells = 4, (3, 2)
    out_h, out_w = ph * cells[0], pw * cells[1]
    x = rng.standard_normal((3, out_h + kh - 1 - sum(pads[0]), out_w + kw - 1 - sum(pads[1]), in_c))
    dh = rng.standard_normal((3, out_h, out_w, out_c))
    in_phases = np.stack([dh[:, a::ph, b::pw] for a in range(ph) for b in range(pw)])
    dw, db = phases.conv2d_backprop_filter_bias_phases(x, (kh, kw, in_c, out_c), in_phases, pads, pool)
    expected = references.conv2d_backprop_filter(x, (kh, kw, in_c, out_c), dh, 1, pads)
    np.testing.assert_allclose(dw, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(db, dh.sum(axis=(0, 1, 2)), rtol=1e-12, atol=1e-12)

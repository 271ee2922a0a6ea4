"""tl.nn.avg_pool and tl.nn.max_pool, their gradient ops and the gradients of those.

References are ``tensorlib.testing.references``: SAME windows average only
their real cells (TensorFlow's divisor) and never pick a padding cell.
"""

import itertools

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads, references


def ref_pool(x, ksize, strides, padding, kind):
    return (references.avg_pool if kind == "avg" else references.max_pool)(x, ksize, strides, padding)


def ref_pool_grad(x, dy, ksize, strides, padding, kind):
    if kind == "avg":
        return references.avg_pool_grad(x.shape, dy, ksize, strides, padding)
    return references.max_pool_grad(x, dy, ksize, strides, padding)


CASES = [((k, k), (s, s), p) for k, s, p in itertools.product([1, 2, 3], [1, 2, 3], ["VALID", "SAME"])] + [
    ((2, 3), (1, 2), "SAME"),
    ((3, 2), (3, 1), "VALID"),
    ((4, 4), (2, 2), "SAME"),
]


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("ksize, strides, padding", CASES)
@pytest.mark.parametrize("shape", [(2, 7, 6, 3), (1, 8, 9, 1)])
def test_pool_and_gradient_match_loop_reference(kind, ksize, strides, padding, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    pool = tl.nn.avg_pool if kind == "avg" else tl.nn.max_pool
    xt = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = pool(xt, ksize, strides, padding)
    np.testing.assert_allclose(y.numpy(), ref_pool(x, ksize, strides, padding, kind), rtol=1e-12, atol=1e-12)
    dy = rng.standard_normal(y.shape)
    dx = tape.gradient(y, xt, output_gradients=tl.tensor(dy))
    np.testing.assert_allclose(dx.numpy(), ref_pool_grad(x, dy, ksize, strides, padding, kind), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize(
    "ksize, strides, padding", [((2, 2), (2, 2), "VALID"), ((3, 2), (1, 2), "SAME"), (1, 1, "VALID")]
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool_keeps_an_inf_or_nan_in_its_own_windows_and_channel(bad, ksize, strides, padding, dtype):
    # Pooling columns by a GEMM against stacked identities multiplies each value by the other channels' zeros:
    # inf * 0 made NaN of every channel of the window, and a dy's inf did so in the gradient.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 6, 3)).astype(dtype)
    x[1, 2, 3, 1] = bad
    y = tl.nn.avg_pool(x, ksize, strides, padding).numpy()
    np.testing.assert_allclose(y, ref_pool(x.astype(np.float64), ksize, strides, padding, "avg"), rtol=1e-5, atol=1e-6)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dy[0, 1, 1, 2] = bad
    with np.errstate(invalid="ignore"):  # the sum's gradient: dy's inf times ones
        dx = tl.grad(lambda x: tl.sum(tl.nn.avg_pool(x, ksize, strides, padding) * dy))(np.zeros_like(x)).numpy()
    expected = references.avg_pool_grad(x.shape, dy.astype(np.float64), ksize, strides, padding)
    np.testing.assert_allclose(dx, expected, rtol=1e-5, atol=1e-6)


def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    x = tl.tensor(np.array([[1.0, 3.0], [3.0, 3.0]]).reshape(1, 2, 2, 1))
    dx = tl.grad(lambda x: tl.sum(tl.nn.max_pool(x, 2, 2, "VALID")))(x)
    assert dx.numpy().ravel().tolist() == [0.0, 1.0, 0.0, 0.0]


def test_avg_pool_same_leaves_padding_out_of_the_divisor():
    y = tl.nn.avg_pool(np.ones((1, 3, 3, 1)), 2, 2, "SAME")
    assert y.numpy().ravel().tolist() == [1.0, 1.0, 1.0, 1.0]


def test_ksize_and_strides_forms():
    x = np.random.default_rng(1).standard_normal((1, 6, 6, 2))
    a = tl.nn.max_pool(x, [1, 2, 3, 1], [1, 2, 3, 1], "VALID")
    b = tl.nn.max_pool(x, (2, 3), (2, 3), "VALID")
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(tl.nn.max_pool2d(x, 2, 2, "VALID").numpy(), tl.nn.max_pool(x, 2, 2, "VALID").numpy())


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("ksize, strides, padding", [(2, 2, "VALID"), (3, 2, "SAME"), (2, 1, "SAME")])
def test_gradients_second_order(kind, ksize, strides, padding):
    x = np.random.default_rng(2).standard_normal((2, 5, 4, 2))
    pool = tl.nn.avg_pool if kind == "avg" else tl.nn.max_pool
    check_grads(lambda x: pool(x, ksize, strides, padding), [x], order=2)


def test_grad_ops_differentiate_into_each_other():
    x = tl.tensor(np.random.default_rng(3).standard_normal((1, 4, 4, 2)))
    for pool, first, second in [
        (tl.nn.avg_pool, ["AvgPoolGrad"], ["AvgPool"]),
        (tl.nn.max_pool, ["MaxPoolGrad"], ["MaxPoolGradGrad"]),
    ]:
        with tl.GradientTape() as outer:
            outer.watch(x)
            with tl.GradientTape() as inner:
                inner.watch(x)
                y = pool(x, 2, 2, "VALID")
                loss = tl.sum(y * y)
            with tl.profile() as prof1:
                g = inner.gradient(loss, x)
        with tl.profile() as prof2:
            outer.gradient(g, x)
        assert [e.op_type for e in prof1.events if "Pool" in e.op_type] == first
        # The second backward runs the gradient op's own gradient first (then the pool's gradient again).
        assert [e.op_type for e in prof2.events if "Pool" in e.op_type][:1] == second


def test_max_pool_grad_grad_gathers_at_the_maxima():
    x = tl.tensor(np.array([[1.0, 3.0], [2.0, 0.0]]).reshape(1, 2, 2, 1))
    y = tl.nn.max_pool(x, 2, 2, "VALID")
    ddx = np.arange(4.0).reshape(1, 2, 2, 1)
    out = tl.ops.get("MaxPoolGradGrad")(x, y, ddx, ksize=(2, 2), strides=(2, 2), padding="VALID")
    assert out.numpy().ravel().tolist() == [1.0]
    check_grads(
        lambda g: tl.ops.get("MaxPoolGradGrad")(x, y, g, ksize=(2, 2), strides=(2, 2), padding="VALID"), [ddx], order=2
    )
    check_grads(
        lambda g: tl.ops.get("AvgPoolGrad")(g, input_shape=(1, 2, 2, 1), ksize=(2, 2), strides=(2, 2), padding="VALID"),
        [np.ones((1, 1, 1, 1))],
        order=2,
    )


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_dtype_is_kept_forward_and_backward(dtype, kind):
    x = tl.tensor(np.random.default_rng(4).standard_normal((2, 6, 6, 3)).astype(dtype))
    pool = tl.nn.avg_pool if kind == "avg" else tl.nn.max_pool
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = pool(x, 3, 2, "SAME")
    dx = tape.gradient(y, x)
    assert y.dtype == dx.dtype == np.dtype(dtype)
    np.testing.assert_allclose(
        y.numpy(), ref_pool(x.numpy().astype(np.float64), (3, 3), (2, 2), "SAME", kind), rtol=2e-3, atol=2e-3
    )


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: tl.nn.max_pool(np.ones((4, 4, 1)), 2, 2, "VALID"),
            ValueError,
            r"^MaxPool: input must be 4-D NHWC .* got shape \(4, 4, 1\)",
        ),
        (
            lambda: tl.nn.avg_pool(np.ones((1, 4, 4, 1)), 2, 2, ((1, 1), (1, 1))),
            ValueError,
            r"^AvgPool: padding must be 'VALID' or 'SAME', got \(\(1, 1\), \(1, 1\)\)",
        ),
        (lambda: tl.nn.avg_pool(np.ones((1, 4, 4, 1)), 0, 2, "VALID"), ValueError, r"^AvgPool: ksize must be >= 1"),
        (
            lambda: tl.nn.max_pool(np.ones((1, 4, 4, 1)), [2, 2, 2, 2], 2, "VALID"),
            ValueError,
            r"^MaxPool: ksize must be an int, a \(rows, cols\) pair or \[1, rows, cols, 1\], got \[2, 2, 2, 2\]",
        ),
        (
            lambda: tl.nn.max_pool(np.ones((1, 2, 2, 1)), 3, 1, "VALID"),
            ValueError,
            r"^MaxPool: .*input size 2 .* smaller than the dilated kernel size 3",
        ),
        (
            lambda: tl.nn.avg_pool(np.ones((1, 4, 4, 1), np.int32), 2, 2, "VALID"),
            TypeError,
            r"^AvgPool: input must be a floating-point tensor, got int32",
        ),
        (
            lambda: tl.ops.get("AvgPoolGrad")(
                np.ones((1, 3, 3, 1)), input_shape=(1, 4, 4, 1), ksize=(2, 2), strides=(2, 2), padding="VALID"
            ),
            ValueError,
            r"^AvgPoolGrad: grad shape \(1, 3, 3, 1\) does not match the expected \(1, 2, 2, 1\)",
        ),
    ],
)
def test_error_messages(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    x = np.random.default_rng(5).standard_normal((2, 7, 8, 3))
    for ksize, strides, padding in [(3, 2, "SAME"), (2, 2, "VALID"), ((2, 3), (1, 2), "SAME")]:
        xt = tf.constant(x)
        for ours, theirs in ((tl.nn.avg_pool, tf.nn.avg_pool2d), (tl.nn.max_pool, tf.nn.max_pool2d)):
            with tf.GradientTape() as tape:
                tape.watch(xt)
                y_tf = theirs(xt, ksize, strides, padding)
                loss_tf = tf.reduce_sum(y_tf * y_tf)
            xs = tl.tensor(x)
            with tl.GradientTape() as t:
                t.watch(xs)
                y = ours(xs, ksize, strides, padding)
                loss = tl.sum(y * y)
            np.testing.assert_allclose(y.numpy(), y_tf.numpy(), rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(
                t.gradient(loss, xs).numpy(), tape.gradient(loss_tf, xt).numpy(), rtol=1e-12, atol=1e-12
            )


@pytest.mark.parametrize("pool", [tl.nn.avg_pool, tl.nn.max_pool])
def test_traced_gradient_with_unknown_batch(pool):
    grad = tl.function(tl.grad(lambda x: tl.sum(pool(x, 3, 2, "SAME") ** 2)))
    graph = grad.get_graph(tl.TensorSpec((None, 7, 6, 2), "float64"))
    assert {"AvgPoolGrad", "MaxPoolGrad"} & {n.op_type for n in graph.nodes}
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 7, 6, 2))
        eager = tl.grad(lambda x: tl.sum(pool(x, 3, 2, "SAME") ** 2))(x)
        np.testing.assert_allclose(grad(x).numpy(), eager.numpy(), rtol=1e-12)

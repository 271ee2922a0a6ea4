"""``tl.random.uniform_like``: uniform draws of a tensor's shape, also where the shape is known only when a graph runs
(the op ``RandomUniformLike``, stateful as the other draws), and ``tl.nn.fractional_max_pool2d`` traced with an
unknown batch, which draws its ``(N, C, 2)`` samples with it.  References: NumPy's generator for a seed, and
``_fractional_ref`` (PyTorch's window starts written with NumPy loops)."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing.op_db_nnmore import _fractional_ref


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_values_in_unit_interval_and_dtype_of_x(dtype):
    u = tl.random.uniform_like(np.zeros((400, 50), dtype)).numpy()
    assert u.dtype == dtype and u.shape == (400, 50)
    assert (u >= 0).all() and (u < 1).all()
    assert abs(u.astype(np.float64).mean() - 0.5) < 5 * np.sqrt(1 / 12 / u.size)  # within 5 standard errors


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seeded_draws_are_numpys_numbers(dtype):
    want = np.random.default_rng(7).uniform(0.0, 1.0, (3, 4)).astype(dtype)
    np.testing.assert_array_equal(tl.random.uniform_like(np.ones((3, 4), dtype), salt=7).numpy(), want)
    tl.random.seed(7)
    np.testing.assert_array_equal(tl.random.uniform_like(np.ones((3, 4), dtype)).numpy(), want)
    traced = tl.function(lambda x: tl.random.uniform_like(x, -2.0, 3.0, salt=7))
    np.testing.assert_array_equal(
        traced(np.ones((3, 4), dtype)).numpy(), np.random.default_rng(7).uniform(-2.0, 3.0, (3, 4)).astype(dtype)
    )


def test_shape_follows_the_runtime_batch_and_draws_differ():
    traced = tl.function(lambda x: (tl.random.uniform_like(x), tl.random.uniform_like(x)))
    graph = traced.get_graph(tl.TensorSpec((None, 3), "float32"))
    assert [o.shape for o in graph.outputs] == [(None, 3), (None, 3)]
    for batch in (1, 5, 2):
        a, b = traced(np.zeros((batch, 3), np.float32))
        assert a.shape == b.shape == (batch, 3)
        assert not np.array_equal(a.numpy(), b.numpy())  # two draws in one graph: not merged (CSE)
        assert ((a.numpy() >= 0) & (a.numpy() < 1)).all()
    first, again = traced(np.zeros((4, 3), np.float32))[0].numpy(), traced(np.zeros((4, 3), np.float32))[0].numpy()
    assert not np.array_equal(first, again)  # each run draws anew


def test_a_constant_input_is_not_folded_into_one_draw():
    traced = tl.function(lambda: tl.random.uniform_like(np.zeros(6)))
    assert not np.array_equal(traced().numpy(), traced().numpy())
    assert tl.ops.get("RandomUniformLike").stateful


def test_a_key_gives_a_function_of_the_key_and_salt():
    x, key = tl.zeros((5,), dtype="float64"), tl.tensor(7, dtype="int64")
    first = tl.random.uniform_like(x, key=key).numpy()
    np.testing.assert_array_equal(tl.random.uniform_like(x, key=key).numpy(), first)
    np.testing.assert_array_equal(tl.random.uniform_like(x, key=key, salt=0).numpy(), first)
    assert not np.array_equal(tl.random.uniform_like(x, key=key, salt=1).numpy(), first)
    assert not np.array_equal(tl.random.uniform_like(x, key=tl.tensor(8, dtype="int64")).numpy(), first)
    traced = tl.function(lambda x, k: tl.random.uniform_like(x, key=k))
    np.testing.assert_array_equal(traced(np.zeros(5), np.int64(7)).numpy(), first)


def test_in_a_cond_branch_the_gradient_replays_the_same_draw():
    # An unseeded draw in a branch takes a key (ops.random.KEYED): the gradient's replay sees the forward's numbers.
    def f(x):
        return tl.cond(tl.sum(x) > 0, lambda v: v * tl.random.uniform_like(v), lambda v: v, x)

    x = np.ones(4)
    value, grad = tl.function(tl.value_and_grad(lambda v: tl.sum(f(v))))(x)
    assert 0 <= float(value.numpy()) < 4
    np.testing.assert_allclose(float(np.sum(grad.numpy())), float(value.numpy()), rtol=1e-12)  # d(sum u x)/dx = u


@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((np.zeros(3, np.int32),), TypeError, r"tl.random.uniform_like: x must be a float tensor .* \(3,\) int32"),
        ((np.zeros(3), 2.0, 1.0), ValueError, r"tl.random.uniform_like: minval must not exceed maxval"),
        ((np.zeros(3), 0.0, np.inf), ValueError, r"tl.random.uniform_like: maxval must be a finite number"),
        ((np.zeros(3), np.nan), ValueError, r"tl.random.uniform_like: minval must be a finite number"),
    ],
)
def test_errors_name_the_function(args, exc, match):
    with pytest.raises(exc, match=match):
        tl.random.uniform_like(*args)


def test_not_differentiable():
    g = tl.grad(lambda x: tl.sum(x + tl.random.uniform_like(x)))(np.zeros(3))
    np.testing.assert_array_equal(g.numpy(), np.ones(3))


# ------------------------------------------------------------------ fractional_max_pool2d with an unknown batch
X = np.random.default_rng(3).normal(size=(3, 9, 7, 2)).astype(np.float32)  # NHWC


def test_fractional_max_pool_traced_with_unknown_batch_matches_eager_with_the_same_samples():
    samples = np.random.default_rng(4).random((3, 2, 2)).astype(np.float32)
    traced = tl.function(lambda x, s: tl.nn.fractional_max_pool2d(x, (2, 3), (4, 3), None, True, s))
    graph = traced.get_graph(tl.TensorSpec((None, 9, 7, 2), "float32"), tl.TensorSpec((None, 2, 2), "float32"))
    assert graph.outputs[0].shape == (None, 4, 3, 2)
    for n in (3, 1):
        values, indices = traced(X[:n], samples[:n])
        eager = tl.nn.fractional_max_pool2d(X[:n], (2, 3), (4, 3), None, True, samples[:n])
        np.testing.assert_array_equal(values.numpy(), eager[0].numpy())
        np.testing.assert_array_equal(indices.numpy(), eager[1].numpy())
        want = _fractional_ref(np.moveaxis(X[:n], -1, 1), (2, 3), (4, 3), None, False, samples[:n], "NCHW")
        np.testing.assert_array_equal(np.moveaxis(values.numpy(), -1, 1), want)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_fractional_max_pool_draws_its_samples_at_run_time_for_an_unknown_batch(data_format):
    x = X if data_format == "NHWC" else np.moveaxis(X, -1, 1)
    spec = tl.TensorSpec((None,) + x.shape[1:], "float32")
    traced = tl.function(lambda v: tl.nn.fractional_max_pool2d(v, 2, output_ratio=0.5, data_format=data_format))
    assert traced.get_graph(spec).outputs[0].shape[0] is None
    for n in (3, 2):
        # The samples come from the stream tl.random.seed resets: NumPy's uniform (n, C, 2) for the seed.
        samples = np.random.default_rng(21).uniform(0.0, 1.0, (n, 2, 2)).astype(np.float32)
        tl.random.seed(21)
        got = traced(x[:n]).numpy()
        tl.random.seed(21)
        eager = tl.nn.fractional_max_pool2d(x[:n], 2, output_ratio=0.5, data_format=data_format).numpy()
        np.testing.assert_array_equal(got, eager)
        nchw = x[:n] if data_format == "NCHW" else np.moveaxis(x[:n], -1, 1)
        want = _fractional_ref(nchw, (2, 2), (4, 3), None, False, samples, "NCHW")
        np.testing.assert_array_equal(got if data_format == "NCHW" else np.moveaxis(got, -1, 1), want)
    layer = tl.nn.FractionalMaxPool2D(2, output_ratio=0.5, data_format=data_format)
    assert tl.function(layer)(x[:2]).shape[0] == 2


def test_fractional_max_pool_still_checks_the_samples_shape():
    traced = tl.function(lambda x, s: tl.nn.fractional_max_pool2d(x, 2, (4, 3), random_samples=s))
    with pytest.raises(ValueError, match=r"random_samples must be floats of shape \(None, 2, 2\)"):
        traced.get_graph(tl.TensorSpec((None, 9, 7, 2), "float32"), tl.TensorSpec((None, 3, 2), "float32"))
    with pytest.raises(ValueError, match=r"random_samples must be floats of shape \(3, 2, 2\)"):
        tl.nn.fractional_max_pool2d(X, 2, (4, 3), random_samples=np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"known channels, height and width"):
        tl.function(lambda x: tl.nn.fractional_max_pool2d(x, 2, (4, 3))).get_graph(
            tl.TensorSpec((None, None, 7, 2), "float32")
        )


def test_vmap_randomness_same_and_different():
    same = tl.vmap(tl.random.uniform_like, randomness="same")(np.zeros((3, 4))).numpy()
    np.testing.assert_array_equal(same, np.broadcast_to(same[0], same.shape))
    different = tl.vmap(tl.random.uniform_like, randomness="different")(np.zeros((3, 4))).numpy()
    assert different.shape == (3, 4) and not np.array_equal(different[0], different[1])
    assert ((different >= 0) & (different < 1)).all()

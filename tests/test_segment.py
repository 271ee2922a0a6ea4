"""tl.segment_sum / segment_mean / segment_max / segment_min (JAX's jax.ops.segment_*, TensorFlow's
tf.math.unsorted_segment_*): a NumPy loop over rows, float64 central differences, traced == eager with the ids'
range checked when the graph runs, and JAX and TensorFlow where installed.  The catalogue entries
(tensorlib/testing/op_db_array.py) add hypothesis samples on every backend."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)


def _loop(how, data, ids, n):
    rest = data.shape[ids.ndim :]
    rows, flat = data.reshape((-1,) + rest), ids.reshape(-1)
    out = np.zeros((n,) + rest, data.dtype)
    for s in range(n):
        members = rows[flat == s]
        if how == "sum":
            out[s] = members.sum(0)
        elif how == "mean":
            out[s] = members.mean(0) if len(members) else 0
        else:
            empty = -np.inf if how == "max" else np.inf
            out[s] = (members.max(0) if how == "max" else members.min(0)) if len(members) else empty
    return out


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
def test_segments_of_a_message_passing_graph(how):
    # 40 edges of a 7-node graph with 2-D ids (a batch of 2 edge lists), a dropped edge (-1), an empty node.
    ids = RNG.integers(0, 6, (2, 20))
    ids[0, 3] = -1
    data = RNG.standard_normal((2, 20, 3))
    fn = getattr(tl, f"segment_{how}")
    want = _loop(how, data, ids, 7)
    np.testing.assert_allclose(fn(data, ids, 7).numpy(), want, rtol=1e-13, atol=1e-13)
    traced = tl.function(lambda d, i: fn(d, i, 7))
    np.testing.assert_allclose(traced(data, ids).numpy(), want, rtol=1e-13, atol=1e-13)
    w = RNG.standard_normal(want.shape) * np.isfinite(want)
    tl.testing.check_grads(lambda d: tl.sum(tl.where(np.isfinite(want), fn(d, ids, 7), 0.0) * w), [data], order=2)
    with pytest.raises(IndexError, match=rf"segment_{how}: .*id 9 is out of range"):
        traced(data, np.where(ids == 5, 9, ids))
    assert fn(data[0], ids[0]).shape == (int(ids[0].max()) + 1, 3)  # num_segments from the ids, eagerly


def test_segment_max_shares_the_gradient_between_ties_and_drops_negative_ids():
    data = tl.tensor([1.0, 3.0, 3.0, 2.0, 7.0])
    g = tl.grad(lambda d: tl.sum(tl.segment_max(d, [0, 0, 0, 1, -1], 2) * tl.tensor([10.0, 1.0])))(data)
    np.testing.assert_array_equal(g.numpy(), [0.0, 5.0, 5.0, 1.0, 0.0])
    g = tl.grad(lambda d: tl.sum(tl.segment_sum(d, [0, -1, 1, 1, -1], 2) * tl.tensor([10.0, 1.0])))(data)
    np.testing.assert_array_equal(g.numpy(), [10.0, 0.0, 1.0, 1.0, 0.0])


def test_segment_mean_of_complex_data_and_integer_max():
    z = np.array([1 + 2j, 3 - 1j, 2j])
    np.testing.assert_allclose(tl.segment_mean(z, [1, 1, 0], 3).numpy(), [2j, 2 + 0.5j, 0])
    got = tl.segment_max(np.array([[1, 5], [3, 2]], np.int64), [1, 1], 3).numpy()
    np.testing.assert_array_equal(got, [[np.iinfo(np.int64).min] * 2, [3, 5], [np.iinfo(np.int64).min] * 2])
    with pytest.raises(ValueError, match=r"segment_sum: num_segments must be given under tl.function"):
        tl.function(lambda d, i: tl.segment_sum(d, i))(np.ones(3), np.zeros(3, np.int64))


def test_per_example_segment_sums_under_vmap():
    data, ids = RNG.standard_normal((4, 10, 2)), RNG.integers(-1, 3, (4, 10))
    got = tl.vmap(lambda d, i: tl.segment_sum(d, i, 3))(data, ids)
    np.testing.assert_allclose(
        got.numpy(), np.stack([_loop("sum", d, i, 3) for d, i in zip(data, ids)]), rtol=1e-13, atol=1e-13
    )


def test_segments_match_jax_and_tensorflow():
    data, ids = RNG.standard_normal((30, 4)), RNG.integers(0, 5, 30)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for how in ("sum", "max", "min"):
        theirs = getattr(jax.ops, f"segment_{how}")(data, ids, 6)
        np.testing.assert_allclose(
            getattr(tl, f"segment_{how}")(data, ids, 6).numpy(), np.asarray(theirs), rtol=1e-13, atol=1e-13
        )
    tf = pytest.importorskip("tensorflow")
    for how in ("sum", "mean", "max", "min"):
        theirs = getattr(tf.math, f"unsorted_segment_{how}")(data, ids, 6).numpy()
        ours = getattr(tl, f"segment_{how}")(data, ids, 6).numpy()
        if how in ("max", "min"):  # TensorFlow's empty segment holds the dtype's lowest finite value
            ours = np.where(np.isinf(ours), theirs, ours)
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-13)
    x = tf.constant(data)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.math.unsorted_segment_max(x, ids, 6) ** 2)
    g = tl.grad(lambda d: tl.sum(tl.where(tl.isinf(tl.segment_max(d, ids, 6)), 0.0, tl.segment_max(d, ids, 6)) ** 2))(
        data
    )
    np.testing.assert_allclose(g.numpy(), tape.gradient(y, x).numpy(), rtol=1e-12, atol=1e-13)

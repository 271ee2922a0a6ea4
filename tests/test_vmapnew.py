"""Function transformations (``tl.vmap``, ``tl.jvp``, ``tl.grad`` and friends) over the functions added in the
last sessions, tried as an adversary: traced ``vmap`` with a batch size unknown until run time, and the ops
that ran once per element under ``vmap``.

References: a Python loop over the batch stacked with NumPy (what ``vmap`` must equal), eager ``vmap`` (what
a traced one must equal), SciPy's functions, and ``jax.vmap`` where JAX is installed (importorskip).
"""

import numpy as np
import pytest

import tensorlib as tl


def _spec(*shape):
    return tl.TensorSpec(shape, tl.float64)


def _loop(f, *columns):
    return np.stack([np.asarray(f(*(tl.tensor(c) for c in row)).numpy()) for row in zip(*columns)])


# ------------------------------------------------------------------ vmap traced with an unknown batch size
_W = np.random.default_rng(0).normal(size=(3, 2))


def _per_example(x, ids):
    """Elementwise ops, a reduction, a matmul with a shared weight, a gather with mapped params and indices,
    a per-example gradient and an output that no mapped input reaches."""
    h = tl.tanh(x @ tl.tensor(_W)) * tl.sum(x**2)
    picked = tl.take(x, ids)
    g = tl.grad(lambda w: tl.sum(tl.nn.softmax(x @ w) ** 2))(tl.tensor(_W))
    return h, picked, g, tl.tensor(np.arange(2.0))


@pytest.mark.parametrize("size", [4, 1, 0])
def test_vmap_traced_with_an_unknown_batch_size_equals_a_loop(size):
    # Before: ValueError "tl.vmap: the mapped axis 0 of args[0] (shape (None, 3)) has an unknown size".
    rng = np.random.default_rng(size)
    x, ids = rng.normal(size=(size, 3)), rng.integers(-3, 3, size=(size, 2))
    traced = tl.function(tl.vmap(_per_example), input_signature=[_spec(None, 3), tl.TensorSpec((None, 2), tl.int64)])
    got = traced(x, ids)
    for k, out in enumerate(got):
        expected = _loop(lambda a, i: _per_example(a, i)[k], x, ids) if size else None
        shape = (size, *_per_example(tl.tensor(np.ones(3)), tl.tensor(np.zeros(2, np.int64)))[k].shape)
        assert out.shape == shape
        if size:
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_vmap_traced_with_unknown_batch_size_maps_axis_1_and_nests():
    x = np.random.default_rng(1).normal(size=(3, 5, 2))
    f = tl.function(
        tl.vmap(tl.vmap(lambda r: r * tl.sum(r)), in_axes=1, out_axes=-1), input_signature=[_spec(3, None, 2)]
    )
    expected = np.stack([x[:, j] * x[:, j].sum(-1, keepdims=True) for j in range(5)], axis=-1)
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(f(x[:, :2]).numpy(), expected[..., :2], rtol=1e-12)


def test_mapped_axes_of_unknown_sizes_that_differ_raise_when_run():
    # Before the check they would broadcast: a batch of 1 against a batch of 4 gave 4 results, silently.
    f = tl.function(tl.vmap(lambda a, b: a * b), input_signature=[_spec(None, 3), _spec(None, 3)])
    x = np.ones((4, 3))
    np.testing.assert_allclose(f(x, 2 * x).numpy(), 2 * x)
    with pytest.raises(ValueError, match="mapped axes of <lambda>'s arguments differ in size"):
        f(x, x[:1])
    g = tl.function(tl.vmap(lambda a, b: a * b), input_signature=[_spec(None, 3), _spec(4, 3)])
    with pytest.raises(ValueError, match="differ in size"):
        g(x[:1], x)


_HALVE = tl.ops.defop("VmapnewHalve", inputs=("x",), infer=lambda x: x)  # a user's op: no batching rule
_HALVE.kernel("numpy")(lambda x: x * 0.5)
tl.grad.register_gradient("VmapnewHalve", lambda node, g: g * 0.5)


def test_an_op_that_needs_the_batch_size_names_itself_the_function_and_the_axis():
    def halve_all(q):
        return _HALVE(q) + 1.0

    q = np.random.default_rng(2).normal(size=(4, 3))
    unknown = tl.function(tl.vmap(halve_all), input_signature=[_spec(None, 3)])
    with pytest.raises(
        ValueError, match=r"VmapnewHalve .*needs the batch size.*args\[0\] of halve_all \(shape \(None, 3\)\)"
    ):
        unknown(q)
    # With the size given it runs once per element, as eagerly, and checks the size when run.
    known = tl.function(tl.vmap(halve_all, axis_size=4), input_signature=[_spec(None, 3)])
    np.testing.assert_allclose(known(q).numpy(), q * 0.5 + 1.0, rtol=1e-15)
    with pytest.raises(ValueError, match="differ in size"):
        known(q[:2])

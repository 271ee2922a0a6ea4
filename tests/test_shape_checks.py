"""Run-time shape checks: ``tl.ensure_shape`` and ``tl.debugging.assert_shapes`` (TensorFlow's), eagerly and in
traced graphs whose sizes were unknown when traced (the optimizer keeps them, files keep them), and the
MultiHeadAttention masks they check there: a mask of batch 1, a key of batch 1 and one batch entry's per-head
mask had been broadcast silently by a graph traced with an unknown batch.  And ``tl.eval_shape`` (JAX's): the
output specs of a call that runs no kernel."""

import numpy as np
import pytest

import tensorlib as tl

UNKNOWN_ROWS = tl.TensorSpec((None, 3), "float64")


def test_ensure_shape_checks_eagerly_and_refines_a_traced_shape():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(tl.ensure_shape(x, (2, None)).numpy(), x)
    with pytest.raises(ValueError, match=r"dimension 0 of input 0 \(shape \(2, 3\), float64\) is 2, expected 4"):
        tl.ensure_shape(x, (4, 3))
    with pytest.raises(ValueError, match="has rank 2, expected 3 dimensions"):
        tl.ensure_shape(x, (2, 3, 1))
    shapes = []

    @tl.function(input_signature=[tl.TensorSpec((None, None), "float64")])
    def refined(t):
        y = tl.ensure_shape(t, (None, 3))
        shapes.append(y.shape)
        return y * 2.0

    np.testing.assert_array_equal(refined(x).numpy(), 2 * x)
    assert shapes == [(None, 3)]
    with pytest.raises(ValueError, match=r"EnsureShapes: dimension 1 of input 0 \(shape \(2, 2\), float64\) is 2"):
        refined(np.zeros((2, 2)))


def test_named_sizes_are_checked_at_every_call_of_a_graph():
    @tl.function(input_signature=[UNKNOWN_ROWS, UNKNOWN_ROWS])
    def paired(a, b):
        a, b = tl.debugging.assert_shapes([(a, ("N", 3)), (b, ("N", None))], "paired")
        return a * b

    np.testing.assert_array_equal(paired(np.ones((4, 3)), np.full((4, 3), 2.0)).numpy(), np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match=r"EnsureShapes: paired: dimension 0 \('N'\) of input 1 .* is 1, but 'N' is 4"):
        paired(np.ones((4, 3)), np.ones((1, 3)))  # NumPy would broadcast (1, 3) against (4, 3)
    # The graph that runs (optimized) keeps the check.
    graph = tl.graph.passes.optimized(paired.get_graph())
    assert [n.op.name for n in graph.nodes].count("EnsureShapes") == 1


def test_the_check_survives_the_optimizer_and_a_saved_file(tmp_path):
    f = tl.function(
        lambda a, b: tl.sum(tl.debugging.assert_shapes([(a, ("N", 3)), (b, ("N", 3))])[0] + b),
        input_signature=[UNKNOWN_ROWS, UNKNOWN_ROWS],
    )
    path = tmp_path / "checked.tlgraph"
    f.save(str(path))
    loaded = tl.graph.load(str(path))
    assert float(loaded(np.ones((2, 3)), np.ones((2, 3))).numpy()) == 12.0
    with pytest.raises(ValueError, match=r"'N' is 2 in input 0"):
        loaded(np.ones((2, 3)), np.ones((5, 3)))


def test_gradients_pass_through_the_checks():
    x = tl.tensor(np.array([[1.0, 2.0, 3.0]]))
    grad = tl.grad(lambda t: tl.sum(tl.ensure_shape(t, (1, 3)) ** 2))(x)
    np.testing.assert_array_equal(grad.numpy(), 2 * x.numpy())
    a, b = tl.tensor(np.ones((2, 2))), tl.tensor(np.full((2, 2), 3.0))

    def product(u, v):
        return tl.sum(tl.multiply(*tl.debugging.assert_shapes([(u, ("N", 2)), (v, ("N", 2))])))

    ga, gb = tl.grad(product, argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(ga.numpy(), b.numpy())
    np.testing.assert_array_equal(gb.numpy(), a.numpy())


def test_bad_specifications_are_refused():
    with pytest.raises(TypeError, match="a dimension must be a non-negative int, a name"):
        tl.ensure_shape(np.zeros(2), (-1,))
    with pytest.raises(TypeError, match="sizes are ints or None"):
        tl.ensure_shape(np.zeros(2), ("N",))
    with pytest.raises(TypeError, match="expected a list of \\(tensor, shape\\) pairs"):
        tl.debugging.assert_shapes([np.zeros(2)])
    assert tl.debugging.assert_shapes([]) == []


E, HEADS = 8, 2
SEQ = tl.TensorSpec((None, 5, E), "float32")


def _mha():
    return tl.nn.MultiHeadAttention(E, HEADS, seed=0)


@pytest.mark.parametrize(
    "call, signature, bad",
    [
        (
            lambda m, x, mask: m(x, key_padding_mask=mask)[0],
            [SEQ, tl.TensorSpec((None, 5), "bool")],
            np.zeros((1, 5), bool),
        ),
        (lambda m, x, key: m(x, key, key)[0], [SEQ, SEQ], np.ones((1, 5, E), np.float32)),
        (
            lambda m, x, mask: m(x, attn_mask=mask)[0],
            [SEQ, tl.TensorSpec((None, 5, 5), "bool")],
            np.zeros((HEADS, 5, 5), bool),
        ),
    ],
    ids=["key_padding_mask_of_batch_1", "key_of_batch_1", "one_entry_s_per_head_mask"],
)
def test_attention_traced_with_an_unknown_batch_checks_the_batch_at_run_time(call, signature, bad):
    mha = _mha()
    x = np.random.default_rng(0).normal(size=(3, 5, E)).astype(np.float32)
    with pytest.raises(ValueError, match="MultiHeadAttention"):
        call(mha, x, bad)  # eagerly: the sizes are known
    traced = tl.function(lambda x, other: call(mha, x, other), input_signature=signature)
    with pytest.raises(ValueError, match=r"EnsureShapes: MultiHeadAttention: .*'N' is 3"):
        traced(x, bad)


def test_attention_traced_with_unknown_sizes_still_matches_eager():
    mha = _mha()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5, E)).astype(np.float32)
    padding = rng.random((3, 5)) < 0.3
    padding[:, 0] = False
    heads_mask = rng.random((3 * HEADS, 5, 5)) < 0.2
    heads_mask[:, :, 0] = False
    eager = mha(x, key_padding_mask=padding, attn_mask=heads_mask)[0].numpy()
    unknown = tl.TensorSpec((None, None, E), "float32")
    traced = tl.function(
        lambda x, p, a: mha(x, key_padding_mask=p, attn_mask=a)[0],
        input_signature=[unknown, tl.TensorSpec((None, None), "bool"), tl.TensorSpec((None, None, None), "bool")],
    )
    np.testing.assert_allclose(traced(x, padding, heads_mask).numpy(), eager, rtol=1e-5, atol=1e-6)


def test_checks_inside_vmap_see_one_element():
    def f(x, y):
        x, y = tl.debugging.assert_shapes([(x, ("N",)), (y, ("N",))])
        return x * y

    xs, y = np.ones((4, 3)), np.full(3, 2.0)
    np.testing.assert_array_equal(tl.vmap(f, in_axes=(0, None))(xs, y).numpy(), np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match=r"'N' is 3 in input 0"):
        tl.vmap(f, in_axes=(0, None))(xs, np.ones(4))


# ------------------------------------------------------------------ eval_shape
def test_eval_shape_gives_the_specs_of_a_run_without_running_a_kernel(monkeypatch):
    import tensorlib.backends.numpy_nn as kernels

    monkeypatch.setattr(kernels, "conv2d", lambda *a, **k: pytest.fail("a kernel ran"))
    x, w = tl.TensorSpec((60000, 32, 32, 1), "float32"), np.zeros((3, 3, 1, 6), np.float32)
    out = tl.eval_shape(lambda x, w, stride: {"y": tl.nn.conv2d(x, w, stride, "SAME"), "n": 3}, x, w, 2)
    assert out == {"y": tl.TensorSpec((60000, 16, 16, 6), "float32"), "n": 3}
    layer = tl.nn.Dense(784, 10)
    assert tl.eval_shape(layer, tl.TensorSpec((None, 784), "float32")) == tl.TensorSpec((None, 10), "float32")
    # Gradients: the spec of what tl.grad returns (the promoted dtype of a float32/float64 product).
    spec = tl.eval_shape(tl.grad(lambda a, b: tl.sum(a * b)), tl.TensorSpec((5,), "float32"), np.ones(5))
    assert spec == tl.TensorSpec((5,), "float32")
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(10))  # nothing was assigned or drawn


def test_eval_shape_matches_a_real_run_and_refuses_control_flow_on_values():
    f = tl.nn.MultiHeadAttention(8, 2, seed=0)
    x = np.zeros((3, 5, 8), np.float32)
    real = f(x)
    specs = tl.eval_shape(f, x)
    assert [(s.shape, s.dtype) for s in specs] == [(r.shape, r.dtype) for r in real]
    with pytest.raises(TypeError, match="a dry run knows shapes and dtypes only"):
        tl.eval_shape(lambda t: t if float(tl.sum(t)) > 0 else -t, np.zeros(3))

"""Contractions (einsum, matmul, tensordot, ...) beyond the catalogue: NumPy's broadcasting corners,
gradients against float64 central differences, errors."""

import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.ops import shape as shape_ops

RNG = np.random.default_rng(11)


def _central_difference(f, xs, k, eps=1e-6):
    """d sum(f(xs)) / d xs[k] for real float64 arrays, by central differences."""
    grad = np.zeros_like(xs[k])
    for idx in np.ndindex(xs[k].shape):
        up, down = [x.copy() for x in xs], [x.copy() for x in xs]
        up[k][idx] += eps
        down[k][idx] -= eps
        grad[idx] = (f(*up) - f(*down)) / (2 * eps)
    return grad


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("i,i", [(1,), (3,)]),
        ("ij,ij", [(1, 3), (2, 3)]),
        ("ij,jk->ik", [(2, 1), (3, 4)]),
        ("ij,ij->", [(1, 1), (2, 3)]),
        ("ij,j->", [(2, 1), (3,)]),
        ("i,j,ij->", [(1,), (3,), (2, 1)]),
        ("ii,j->ij", [(2, 2), (1,)]),
    ],
)
def test_einsum_gradient_through_a_size_one_axis_broadcast_against_a_longer_one(equation, shapes):
    # NumPy's einsum lets a size-1 axis meet a longer one under the same letter; the gradient of the
    # longer operand came back with the size-1 length (a GradientRuleError), now it is spread over it.
    xs = [RNG.standard_normal(s) for s in shapes]
    weights = RNG.standard_normal(np.einsum(equation, *xs).shape)

    def loss_np(*a):
        return np.sum(weights * np.einsum(equation, *a))

    def loss(*a):
        return tl.sum(tl.tensor(weights) * tl.einsum(equation, *a))

    for k in range(len(xs)):
        expected = _central_difference(loss_np, xs, k)
        eager = tl.grad(loss, argnums=k)(*[tl.tensor(x) for x in xs]).numpy()
        traced = tl.function(tl.grad(loss, argnums=k))(*[tl.tensor(x) for x in xs]).numpy()
        np.testing.assert_allclose(eager, expected, atol=1e-6)
        np.testing.assert_allclose(traced, expected, atol=1e-6)


@pytest.mark.parametrize(
    "fn, reference, name, a_shape, b_shape",
    [
        (lambda a, b: tl.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1), "tensordot", (2, 1), (4, 5)),
        (
            lambda a, b: tl.tensordot(a, b, ([0], [1])),
            lambda a, b: np.tensordot(a, b, ([0], [1])),
            "tensordot",
            (1, 3),
            (2, 4),
        ),
        (tl.dot, np.dot, "dot", (2, 1), (4, 5)),
        (tl.dot, np.dot, "dot", (1,), (3,)),
        (tl.inner, np.inner, "inner", (2, 1), (4, 3)),
        (tl.vdot, np.vdot, "vdot", (1,), (3,)),
        (tl.vdot, np.vdot, "vdot", (2, 3), (5,)),
    ],
)
def test_products_refuse_unequal_contracted_lengths_as_numpy_does(fn, reference, name, a_shape, b_shape):
    # A size-1 axis was broadcast against the other (tl.dot of (2, 1) and (4, 5) gave a (2, 5) result,
    # tl.vdot of 1 and 3 elements gave 3.0) where NumPy, PyTorch and JAX refuse the shapes.
    a, b = np.ones(a_shape), np.ones(b_shape)
    with pytest.raises(ValueError):
        reference(a, b)
    expected = rf"^{name}: .*shape {re.escape(str(a_shape))} float64, b: shape {re.escape(str(b_shape))} float64"
    for f in (fn, tl.function(fn)):
        with pytest.raises(ValueError, match=expected):
            f(a, b)
    np.testing.assert_array_equal(a, np.ones(a_shape))


@pytest.mark.parametrize(
    "subscripts, shapes, message",
    [
        ("ij->i->j", [(2, 3)], "subscripts 'ij->i->j' have more than one '->'"),
        ("ij...k...", [(2, 3)], "subscript 'ij...k...' of 'ij...k...' has a second ellipsis"),
        ("i.j", [(3,)], "subscript 'i.j' of 'i.j' has '.', which is not a letter (a-z, A-Z)"),
        ("i#", [(2, 3)], "subscript 'i#' of 'i#' has '#', which is not a letter (a-z, A-Z)"),
        ("i,j->i1", [(2,), (3,)], "subscript 'i1' of 'i,j->i1' has '1', which is not a letter (a-z, A-Z)"),
        ("...i,...i", [(2, 3), (4, 3)], "the axes under '...' have sizes 2 and 4 in '...i,...i'"),
    ],
)
def test_einsum_bad_subscripts_get_one_clear_error_as_in_numpy(subscripts, shapes, message):
    # '#' and non-ASCII letters were accepted (and ordered by code point in the implicit output), two
    # ellipses in a subscript or two '->' raised a garbled message, and a broadcast mismatch under '...'
    # named a letter the caller never wrote.
    operands = [np.ones(s, np.float32) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *operands)
    described = ", ".join(f"{s} float32" for s in shapes)
    with pytest.raises(ValueError, match=f"^{re.escape(f'Einsum: {message} (operands: {described})')}$"):
        tl.einsum(subscripts, *operands)


@pytest.mark.parametrize(
    "fn, signature, shapes",
    [
        (lambda a, b: tl.einsum("i,i", a, b), [(None,), (None,)], [(1,), (3,)]),
        (lambda a, b: tl.einsum("ij,ij->", a, b), [(None, 3), (2, 3)], [(1, 3), (2, 3)]),
        (lambda a, b: tl.einsum("...ij,...jk", a, b), [(None, 2, 3), (None, 3, 2)], [(4, 2, 3), (1, 3, 2)]),
        (lambda a, b: tl.matmul(a, b), [(None, 2, 3), (None, 3, 2)], [(1, 2, 3), (4, 3, 2)]),
        (lambda a, b: a * b, [(None,), (None,)], [(1,), (3,)]),
        (lambda a, b: shape_ops.broadcast_like(a, b), [(None, 2), (3, 2)], [(1, 2), (3, 2)]),
    ],
)
def test_traced_gradient_of_an_axis_broadcast_only_at_run_time_has_the_input_shape(fn, signature, shapes):
    # With a size unknown when tracing, the gradient of an input whose size-1 axis was broadcast at run
    # time came back unsummed (shape (3,) for a (1,) input, and 72 spread as 12, 24, 36), or, for einsum,
    # with the other operand's size 1; the graph optimizer also dropped a BroadcastLike of unknown shape.
    xs = [np.arange(1.0, 1.0 + np.prod(s)).reshape(s) for s in shapes]
    weights = RNG.standard_normal(np.shape(fn(*[tl.tensor(x) for x in xs])))

    def loss(*a):
        return tl.sum(tl.tensor(weights) * fn(*a))

    grads = tl.grad(loss, argnums=(0, 1))
    traced = tl.function(grads, input_signature=[tl.TensorSpec(s, "float64") for s in signature])
    loss_np = lambda *a: float(loss(*[tl.tensor(x) for x in a]))
    for k, (eager, graph) in enumerate(zip(grads(*[tl.tensor(x) for x in xs]), traced(*xs))):
        np.testing.assert_allclose(eager.numpy(), _central_difference(loss_np, xs, k), atol=1e-5)
        assert graph.shape == xs[k].shape
        np.testing.assert_allclose(graph.numpy(), eager.numpy(), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex64])
def test_vdot_keeps_numpys_result_dtype(dtype):
    # Bool inputs gave int64 (a sum of products) where numpy.vdot gives bool, as tl.dot and tl.inner do.
    a = np.array([True, False, True]).astype(dtype)
    b = np.array([False, False, True]).astype(dtype)
    expected = np.vdot(a, b)
    for f in (tl.vdot, tl.function(tl.vdot)):
        got = f(a, b).numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)

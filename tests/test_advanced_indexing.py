"""NumPy's advanced indexing on tensors (several integer arrays, boolean masks, boolean scalars), gather_nd,
scatter_nd, tensor_scatter_nd_add and boolean_mask: values against NumPy's own indexing, gradients against
``np.add.at`` of the cotangent, traced against eager."""

import itertools

import numpy as np
import pytest

import tensorlib as tl

A = np.random.default_rng(0).standard_normal((4, 5, 6))
ITEMS = [
    0,
    -1,
    slice(1, 3),
    slice(None, None, -1),
    None,
    Ellipsis,
    np.array([0, 2, -1]),
    np.array([[0, 1], [2, 3]]),
    np.array([True, False, True, False]),
    np.array(1),
    True,
    False,
]


def _indices():
    """Every index of one or two items and a sample of three that NumPy accepts on A."""
    combos = [(i,) for i in ITEMS] + list(itertools.product(ITEMS, ITEMS))
    combos += list(itertools.product(ITEMS[:9], ITEMS[:9], ITEMS[:7]))[::7]
    for index in combos:
        try:
            A[index]
        except IndexError:
            continue
        yield index


def _as_tensors(index):
    return tuple(tl.tensor(i) if isinstance(i, np.ndarray) else i for i in index)


def _cotangent_sum(index, w):
    """The gradient of ``sum(A[index] * w)``: ``w`` added at each position ``index`` reads (repeats add)."""
    expected = np.zeros(A.size)
    np.add.at(expected, np.arange(A.size).reshape(A.shape)[index].ravel(), w.ravel())
    return expected.reshape(A.shape)


@pytest.mark.parametrize("index", list(_indices()), ids=repr)
def test_values_and_gradients_match_numpy(index):
    expected = A[index]
    for given in (index, _as_tensors(index)):
        got = tl.tensor(A)[given].numpy()
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    w = np.random.default_rng(1).standard_normal(expected.shape)
    grad = tl.grad(lambda t: tl.sum(t[_as_tensors(index)] * w))(tl.tensor(A)).numpy()
    np.testing.assert_allclose(grad, _cotangent_sum(index, w), rtol=1e-12, atol=1e-12)


def test_traced_integer_arrays_are_placeholders_with_gradients():
    i, j = np.array([0, 3, 1]), np.array([[5], [0]])

    @tl.function
    def f(t, i, j):
        return t[i, :, j], tl.grad(lambda u: tl.sum(u[i, 1:, j] ** 2))(t)

    value, grad = f(tl.tensor(A), i, j)
    np.testing.assert_array_equal(value.numpy(), A[i, :, j])
    expected = np.zeros_like(A)
    np.add.at(expected, (i[None, :], slice(1, None), j), 2 * A[i[None, :], 1:, j])
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-12)
    # Other index values, same graph: the positions are fed, not baked in.
    value, _ = f(tl.tensor(A), np.array([2, 2, 0]), np.array([[1], [4]]))
    np.testing.assert_array_equal(value.numpy(), A[np.array([2, 2, 0]), :, np.array([[1], [4]])])
    with pytest.raises(IndexError, match=r"GatherNd: index 7 is out of bounds for axis 1 with size 6"):
        f(tl.tensor(A), i, np.array([[7], [0]]))


def test_traced_boolean_mask_is_a_clear_error():
    @tl.function
    def f(t, mask):
        return t[mask]

    with pytest.raises(IndexError, match=r"StridedSlice: a boolean mask \(shape \(4,\)\) computed inside a traced"):
        f(tl.tensor(A), np.array([True, False, True, False]))


@pytest.mark.parametrize(
    ("index", "match"),
    [
        ((np.array([0, 1]), np.array([0, 7])), r"StridedSlice: index 7 is out of bounds for axis 1 with size 5"),
        ((slice(None), np.array([0]), np.array([-7])), r"index -7 is out of bounds for axis 2 with size 6"),
        ((np.array([0, 1]), np.array([0, 1, 2])), r"shape mismatch: the index arrays of shapes \[\(2,\), \(3,\)\]"),
        ((np.array([True, False]),), r"a boolean index of shape \(2,\) does not match the axes \(0,\) of shape \(4,\)"),
        ((np.array([0.5]), np.array([0])), r"arrays used as indices must be of integer or boolean type, got float64"),
    ],
)
def test_bad_indices_raise_one_clear_error(index, match):
    with pytest.raises(IndexError, match=match):
        tl.tensor(A)[index]


def test_gather_nd_matches_tensorflow_semantics():
    params = np.arange(24.0).reshape(2, 3, 4)
    indices = np.array([[[1], [0]], [[2], [2]]])
    expected = np.stack([params[b][indices[b, :, 0]] for b in range(2)])
    np.testing.assert_array_equal(tl.gather_nd(params, indices, batch_dims=1).numpy(), expected)
    np.testing.assert_array_equal(tl.gather_nd(params, [[1, -1]]).numpy(), params[1, -1][None])
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(
        tl.gather_nd(params, indices, batch_dims=1).numpy(), tf.gather_nd(params, indices, batch_dims=1).numpy()
    )
    np.testing.assert_array_equal(
        tl.gather_nd(params, [[0, 2], [1, 1]]).numpy(), tf.gather_nd(params, [[0, 2], [1, 1]]).numpy()
    )


def test_gather_nd_gradients_sum_repeats_to_second_order():
    indices = np.array([[0, 1], [0, 1], [2, 0]])
    tl.testing.check_grads(
        lambda p: tl.gather_nd(p, indices) ** 3, (np.random.default_rng(2).standard_normal((3, 2, 2)),), order=2
    )


def test_scatter_nd_and_tensor_scatter_nd_add():
    indices = np.array([[1, 0], [3, 1], [1, 0]])
    updates = np.random.default_rng(3).standard_normal((3, 4))
    expected = np.zeros((5, 2, 4))
    np.add.at(expected, (indices[:, 0], indices[:, 1]), updates)
    np.testing.assert_allclose(tl.scatter_nd(indices, updates, (5, 2, 4)).numpy(), expected, rtol=1e-12)
    base = np.ones((5, 2, 4))
    np.testing.assert_allclose(tl.tensor_scatter_nd_add(base, indices, updates).numpy(), base + expected, rtol=1e-12)
    tl.testing.check_grads(lambda u: tl.scatter_nd(indices, u, (5, 2, 4)) ** 2, (updates,), order=2)
    tl.testing.check_grads(lambda b, u: tl.tensor_scatter_nd_add(b, indices, u) ** 2, (base, updates))
    with pytest.raises(IndexError, match=r"scatter_nd: index 5 is out of bounds for axis 0 with size 5"):
        tl.scatter_nd([[5, 0]], updates[:1], (5, 2, 4))
    with pytest.raises(ValueError, match=r"scatter_nd: updates of shape \(3, 4\) float64 must have shape"):
        tl.scatter_nd(indices, updates, (5, 2, 3))


def test_boolean_mask_matches_numpy_and_is_differentiable():
    mask = np.array([[True, False, True, False, False], [False] * 5, [True] * 5, [False, True, False, False, True]])
    np.testing.assert_array_equal(tl.boolean_mask(A, mask).numpy(), A[mask])
    np.testing.assert_array_equal(tl.boolean_mask(A, mask[0], axis=1).numpy(), A[:, mask[0]])
    grad = tl.grad(lambda t: tl.sum(tl.boolean_mask(t, mask)))(tl.tensor(A)).numpy()
    np.testing.assert_array_equal(grad, np.broadcast_to(mask[..., None], A.shape).astype(float))
    with pytest.raises(TypeError, match=r"boolean_mask: mask must be a boolean array"):
        tl.boolean_mask(A, [1, 0])


def test_gradients_match_torch_advanced_indexing():
    torch = pytest.importorskip("torch")
    i, j = np.array([[0, 3], [1, 1]]), np.array([2, -1])
    w = np.random.default_rng(4).standard_normal((2, 2, 5))
    t = torch.tensor(A, requires_grad=True)
    (t[torch.tensor(i), :, torch.tensor(j)] * torch.tensor(w)).sum().backward()
    grad = tl.grad(lambda x: tl.sum(x[i, :, j] * w))(tl.tensor(A)).numpy()
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- functional updates: .at[], tensor_scatter_nd_update
AT_INDICES = [
    (1,),
    (slice(1, 3),),
    (Ellipsis, -1),
    (np.array([0, 2, 0]), slice(None)),
    (slice(None), np.array([[1, 1], [4, 0]])),
    (np.array([3, 3, 1]), np.array([0, 4, 0])),  # (3, 0) twice
    (np.array([True, False, True, True]),),
    (A[:, :, 0] > 0.5,),
]


@pytest.mark.parametrize("index", AT_INDICES, ids=repr)
@pytest.mark.parametrize("how", ["set", "add"])
def test_at_set_and_add_match_numpy_with_gradients(index, how):
    read = A[index].shape
    values = np.random.default_rng(5).standard_normal(read[1:] if len(read) > 1 else read)
    expected = A.copy()
    if how == "add":
        np.add.at(expected, index, values)
    else:
        expected[index] = values  # NumPy's assignment: the last write to a repeated position stays
    # (add sums a repeated position's values first, then adds them to x: np.add.at's order differs by rounding)
    got = getattr(tl.tensor(A).at[_as_tensors(index)], how)(values).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-15 if how == "set" else 1e-13, atol=0)
    traced = tl.function(lambda x, v: getattr(x.at[index], how)(v))(A, values).numpy()
    np.testing.assert_array_equal(traced, got)
    tl.testing.check_grads(lambda x, v: getattr(x.at[index], how)(v) ** 2, (A, values), order=2)


def test_at_set_gives_a_repeated_position_the_last_value_and_its_gradient():
    x, i = tl.zeros(4, dtype="float64"), np.array([1, 3, 1])
    v = tl.tensor([1.0, 2.0, 3.0], dtype="float64")
    np.testing.assert_array_equal(x.at[i].set(v).numpy(), [0.0, 3.0, 0.0, 2.0])
    gx, gv = tl.grad(lambda x, v: tl.sum(x.at[i].set(v) * tl.tensor([1.0, 2.0, 3.0, 4.0])), argnums=(0, 1))(x, v)
    np.testing.assert_array_equal(gx.numpy(), [1.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(gv.numpy(), [0.0, 4.0, 2.0])  # the first write to 1 is overwritten
    np.testing.assert_array_equal(tl.tensor_scatter_nd_update(x, i[:, None], v).numpy(), [0.0, 3.0, 0.0, 2.0])
    assert x.at[i].get().shape == (3,) and not np.any(x.numpy())  # x itself is unchanged
    with pytest.raises(ValueError, match=r"Tensor.at\[...\]: values of shape \(2,\) do not broadcast to the indexed"):
        x.at[i].set(tl.ones(2))


def test_at_add_and_scatter_update_match_torch():
    torch = pytest.importorskip("torch")
    i, j = np.array([0, 3, 0]), np.array([1, 1, 1])
    v = np.random.default_rng(6).standard_normal((3, 6))
    for accumulate, how in ((True, "add"), (False, "set")):
        t = torch.tensor(A, requires_grad=True)
        tv = torch.tensor(v, requires_grad=True)
        out = t.index_put((torch.tensor(i), torch.tensor(j)), tv, accumulate=accumulate)
        (out * torch.tensor(A)).sum().backward()
        got = getattr(tl.tensor(A).at[i, j], how)(v).numpy()
        np.testing.assert_allclose(got, out.detach().numpy(), rtol=1e-12)
        gx, gv = tl.grad(lambda x, w: tl.sum(getattr(x.at[i, j], how)(w) * A), argnums=(0, 1))(tl.tensor(A), v)
        np.testing.assert_allclose(gx.numpy(), t.grad.numpy(), rtol=1e-12)
        if accumulate:  # torch leaves which of the repeated writes wins unspecified: compare the added ones only
            np.testing.assert_allclose(gv.numpy(), tv.grad.numpy(), rtol=1e-12)


def test_at_refuses_values_the_tensor_cannot_hold():
    """NumPy's assignment truncates 2.7 into an int array and drops an imaginary part; JAX warns: one clear error."""
    for x, value in ((tl.tensor([1, 2, 3]), 2.7), (tl.tensor([1.0, 2.0]), 1 + 2j), (tl.tensor([True, False]), 2)):
        for how in ("set", "add"):
            with pytest.raises(TypeError, match=r"Tensor.at\[...\]: values of dtype \w+ \(shape \(\)\) cannot be held"):
                getattr(x.at[0], how)(value)
    assert tl.tensor([1, 2, 3]).at[0].set(7.0).numpy().tolist() == [7, 2, 3]  # exact values are cast
    assert tl.tensor([1.0, 2.0]).at[1].add(tl.tensor(3 + 0j)).numpy().tolist() == [1.0, 5.0]

"""Indexing, gather and scatter at their edges (the adversarial round), against independent references:
float16 scatter-adds against float64 sums, float and bool indices refused by the scatters, one_hot's values,
boolean scalars among ints and traced index arrays against NumPy's indexing and np.add.at, where with
non-boolean conditions against np.where, TensorFlow's gather with batch_dims against per-batch np.take,
take's modes against np.take, index updates traced with unknown sizes against eager ones, uint64 indices."""

import itertools

import numpy as np
import pytest

import tensorlib as tl

REPEATS = np.zeros(5000, np.int64)  # one position read 5000 times: float16 steps are 2 beyond 2048


@pytest.mark.parametrize(
    "read",
    [
        lambda t: tl.take(t, REPEATS),
        lambda t: t[REPEATS],
        lambda t: t[None][REPEATS, REPEATS],
        lambda t: tl.gather_nd(t, REPEATS[:, None]),
        lambda t: tl.take_along_axis(t, REPEATS, 0),
        lambda t: tl.nn.embedding_lookup(t[:, None], REPEATS),
    ],
    ids=["take", "getitem", "two_arrays", "gather_nd", "take_along_axis", "embedding_lookup"],
)
def test_float16_gather_gradients_sum_repeats_in_float32(read):
    # Added one by one in float16 the gradient stopped at 2048 (PyTorch and JAX too); tl.sum gives 5000.
    grad = tl.grad(lambda t: tl.sum(read(t)))(tl.tensor(np.ones(3, np.float16)))
    assert grad.dtype == np.float16
    np.testing.assert_array_equal(grad.numpy(), np.bincount(REPEATS, minlength=3).astype(np.float16))


@pytest.mark.parametrize(
    "scatter",
    [
        lambda u: tl.scatter_nd(REPEATS[:, None], u, (3,)),
        lambda u: tl.tensor_scatter_nd_add(tl.zeros(3, dtype="float16"), REPEATS[:, None], u),
        lambda u: tl.zeros(3, dtype="float16").at[REPEATS].add(u),
    ],
    ids=["scatter_nd", "tensor_scatter_nd_add", "at_add"],
)
def test_float16_scatter_adds_sum_in_float32(scatter):
    updates = np.full(5000, 0.1, np.float16)
    expected = np.bincount(REPEATS, updates.astype(np.float64), minlength=3).astype(np.float16)  # 500, not 256
    np.testing.assert_array_equal(scatter(tl.tensor(updates)).numpy(), expected)


@pytest.mark.parametrize("op_type", ["GatherV2Grad", "TakeAlongAxisGrad"])
def test_float16_generic_scatter_kernels_sum_in_float32(op_type):
    dy = np.full(5000, 0.1, np.float16)
    out = tl.ops.get(op_type).generic_kernel(np, dy, REPEATS, np.zeros(3, np.float16), axis=0)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.bincount(REPEATS, dy.astype(np.float64), minlength=3).astype(np.float16))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda i: tl.scatter_nd(i, tl.tensor([1.0]), [3]), "scatter_nd"),
        (lambda i: tl.tensor_scatter_nd_add(tl.zeros(3), i, tl.tensor([1.0])), "tensor_scatter_nd_add"),
        (lambda i: tl.tensor_scatter_nd_update(tl.zeros(3), i, tl.tensor([1.0])), "tensor_scatter_nd_update"),
        (lambda i: tl.ops.get("GatherNdGrad")(tl.tensor([1.0]), i, tl.zeros(3)), "GatherNdGrad"),
        (lambda i: tl.ops.get("GatherV2Grad")(tl.tensor([1.0]), i[0], tl.zeros(3)), "GatherV2Grad"),
        (lambda i: tl.ops.get("TakeAlongAxisGrad")(tl.tensor([1.0]), i[0], tl.zeros(3)), "TakeAlongAxisGrad"),
    ],
)
@pytest.mark.parametrize("indices", [[[1.7]], np.array([[True]])], ids=["float", "bool"])
def test_scatters_refuse_float_and_bool_indices(call, name, indices):
    # scatter_nd([[1.7]], [1.0], [3]) gave [0, 1, 0] (truncated; NumPy and TensorFlow refuse a float index).
    with pytest.raises(TypeError, match=rf"^{name}: indices must be integers, got (float|bool)"):
        call(tl.tensor(np.asarray(indices)))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"on_value": 2.5, "dtype": "int32"},
        {"off_value": -1.5, "dtype": "int64"},
        {"on_value": float("nan"), "dtype": "int32"},
        {"on_value": 2, "dtype": "bool"},
        {"on_value": 1e300, "dtype": "float32"},
        {"on_value": 1 + 2j, "dtype": "float64"},
        {"on_value": [1.0, 2.0, 3.0]},
        {"on_value": None},
    ],
    ids=repr,
)
def test_one_hot_refuses_values_its_dtype_cannot_hold(kwargs):
    # The cast filled int32 with 2 for 2.5 (TensorFlow: TypeError), float32 with inf for 1e300, None with NaN,
    # and a list gave each class its own value.
    with pytest.raises(TypeError, match=r"^one_hot: (on|off)_value .* is not a number that dtype \w+ holds exactly"):
        tl.one_hot([1, 0], 3, **kwargs)


def test_one_hot_fills_on_and_off_values_of_its_dtype():
    indices = np.array([[0, 2], [-1, 3]])
    for kwargs in [{}, {"on_value": 5, "off_value": -1, "dtype": "int32"}, {"on_value": tl.tensor(3.0), "axis": 0}]:
        hot = tl.one_hot(indices, 3, **kwargs)
        dtype = np.dtype(kwargs.get("dtype", "float32"))
        on, off = float(np.asarray(kwargs.get("on_value", 1))), kwargs.get("off_value", 0)
        expected = np.where(indices[..., None] == np.arange(3), on, off).astype(dtype)
        np.testing.assert_array_equal(hot.numpy(), np.moveaxis(expected, -1, kwargs.get("axis", -1)))
        assert hot.dtype == dtype


def test_boolean_scalars_beside_separated_ints_put_their_axes_first():
    # NumPy reads a boolean scalar as an advanced index, and the ints with it: x[1, :, True] has shape (1, 3, 2)
    # for x of shape (2, 3, 2); it gave (3, 1, 2), the elements in another order (also x[1, ..., True]).
    x = np.arange(12.0).reshape(2, 3, 2)
    items = [1, -1, slice(None), slice(None, None, -1), None, Ellipsis, True, False]
    checked = 0
    for index in itertools.product(items, repeat=3):
        if not any(_is_bool(i) for i in index):
            continue
        try:
            expected = x[index]
        except IndexError:
            continue
        got = tl.tensor(x)[index]
        assert got.shape == expected.shape, index
        np.testing.assert_array_equal(got.numpy(), expected)
        w = np.arange(1.0, expected.size + 1).reshape(expected.shape)
        scattered = np.zeros(x.size)
        np.add.at(scattered, np.arange(x.size).reshape(x.shape)[index].ravel(), w.ravel())
        grad = tl.grad(lambda t, index=index, w=w: tl.sum(t[index] * w))(tl.tensor(x))
        np.testing.assert_array_equal(grad.numpy(), scattered.reshape(x.shape))
        checked += 1
    assert checked > 200


def _is_bool(i):
    return isinstance(i, bool)


@pytest.mark.parametrize(
    "condition",
    [np.array([0, 2, -1]), np.array([0.0, np.nan, 0.5]), np.array([0j, 1j, 0]), [0, 1, 0], np.array(3)],
    ids=["int", "float_nan", "complex", "list", "0d"],
)
def test_where_reads_a_non_boolean_condition_as_numpy(condition):
    # tl.where (numpy.where) raised 'Select: condition must be bool' for these; NumPy and JAX take nonzero as true.
    x, y = np.arange(6.0).reshape(2, 3), np.array([10.0, 20.0, 30.0])
    expected = np.where(condition, x, y)
    np.testing.assert_array_equal(tl.where(condition, x, y).numpy(), expected)
    traced = tl.function(lambda c, x: tl.where(c, x, y))(np.asarray(condition), x)
    np.testing.assert_array_equal(traced.numpy(), expected)
    grad = tl.grad(lambda t: tl.sum(tl.where(condition, t, y)))(tl.tensor(x))
    np.testing.assert_array_equal(grad.numpy(), np.broadcast_to(np.asarray(condition) != 0, x.shape).astype(float))


def test_traced_int_index_beyond_an_unknown_size_names_strided_slice():
    # The shape rule cannot check t[7] when the size is unknown; the kernel raised NumPy's bare
    # 'index 7 is out of bounds for axis 0 with size 4'.
    f = tl.function(lambda t: t[7, -1], input_signature=[tl.TensorSpec((None, None), "float64")])
    with pytest.raises(
        IndexError,
        match=r"^StridedSlice: index 7 is out of bounds for axis 0 with size 4 \(x shape \(4, 2\) float64\)",
    ):
        f(np.ones((4, 2)))
    np.testing.assert_array_equal(f(np.arange(24.0).reshape(8, 3)).numpy(), 23.0)


def _batched_take(params, indices, axis, batch_dims):
    """TensorFlow's gather with batch_dims, one NumPy take per batch position."""
    batch = indices.shape[:batch_dims]
    parts = [np.take(params[b], indices[b], axis=axis - batch_dims) for b in np.ndindex(batch)]
    return np.stack(parts).reshape(batch + parts[0].shape)


GATHERS = [((2, 3, 4), (2, 5), 1, 1), ((2, 3, 4), (2, 3, 2), 2, 2), ((2, 3, 4, 2), (2, 2), 2, 1), ((3, 4), (3,), 1, 1)]


@pytest.mark.parametrize("params_shape, indices_shape, axis, batch_dims", GATHERS)
def test_gather_takes_tensorflows_batch_dims(params_shape, indices_shape, axis, batch_dims):
    rng = np.random.default_rng(0)
    params = rng.standard_normal(params_shape)
    indices = rng.integers(-params_shape[axis], params_shape[axis], size=indices_shape)
    expected = _batched_take(params, indices, axis, batch_dims)
    got = tl.gather(params, indices, axis=axis, batch_dims=batch_dims)
    np.testing.assert_array_equal(got.numpy(), expected)
    if axis == batch_dims:  # TensorFlow's default axis
        np.testing.assert_array_equal(tl.gather(params, indices, batch_dims=batch_dims).numpy(), expected)
    traced = tl.function(lambda p, i: tl.gather(p, i, axis=axis, batch_dims=batch_dims))(params, indices)
    np.testing.assert_array_equal(traced.numpy(), expected)
    tl.testing.check_grads(lambda p: tl.gather(p, indices, axis=axis, batch_dims=batch_dims), [params], order=2)


def test_gather_default_axis_does_not_flatten():
    # tl.gather was tl.take: gather(params, [1], axis=None) took from the flattened params ([1.0]); TensorFlow's
    # axis=None is batch_dims, 0 here: the row [3.0, 4.0, 5.0].
    params = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(tl.gather(params, [1], axis=None).numpy(), params[[1]])
    with pytest.raises(ValueError, match=r"^gather: axis 0 must not be less than batch_dims 1 \(params shape \(2, 3\)"):
        tl.gather(params, np.zeros((2, 2), np.int64), axis=0, batch_dims=1)


@pytest.mark.parametrize(
    "update, exc",
    [
        (lambda x: x.at[7].set(1.0), IndexError),
        (lambda x: x.at[[0, 7]].add(1.0), IndexError),
        (lambda x: x.at[np.array([1.5])].set(1.0), TypeError),
    ],
)
def test_at_index_errors_name_the_update_and_the_tensor(update, exc):
    # They named an int64 tensor of positions (the one .at reads the index with), not the float32 tensor.
    with pytest.raises(exc, match=r"^Tensor\.at\[\.\.\.\]: .* \(tensor shape \(5,\) float32\)$"):
        update(tl.zeros(5))


@pytest.mark.parametrize(
    "update",
    [
        lambda t, i: t.at[i].add(t[0] * 3.0),
        lambda t, i: t.at[:, i].set(t[:, :1] * 3.0),
        lambda t, i: t.at[i, 1:].set(-1.0),
        lambda t, i: tl.tensor_scatter_nd_add(t, i[:, None], t[:3] * 2.0),
        lambda t, i: tl.tensor_scatter_nd_update(t, i[:, None], t[:3] * 2.0),
    ],
    ids=["at_add", "at_set_columns", "at_set_scalar", "tensor_scatter_nd_add", "tensor_scatter_nd_update"],
)
def test_index_updates_trace_with_unknown_sizes(update):
    # t.at[...] and tensor_scatter_nd_add raised 'the tensor needs a known shape' under a TensorSpec with None.
    x, i = np.arange(12.0).reshape(4, 3), np.array([0, 0, 2])
    signature = [tl.TensorSpec((None, None), "float64"), tl.TensorSpec((None,), "int64")]
    both = lambda t, i: (update(t, i), tl.grad(lambda u: tl.sum(update(u, i) ** 2))(t))  # noqa: E731
    value, grad = tl.function(both, input_signature=signature)(x, i)
    expected_value, expected_grad = both(tl.tensor(x), i)
    np.testing.assert_array_equal(value.numpy(), expected_value.numpy())
    np.testing.assert_array_equal(grad.numpy(), expected_grad.numpy())


def test_traced_update_of_the_wrong_size_names_the_op():
    f = tl.function(lambda t: t.at[0].set(tl.ones(5, dtype="float64")), input_signature=[tl.TensorSpec((None, None))])
    with pytest.raises(ValueError, match=r"^ScatterNdUpdate: updates of shape \(5,\) must have shape .* = \(3,\)"):
        f(np.ones((4, 3), np.float32))


def test_uint64_index_arrays_gather_as_numpy():
    # NumPy indexes with uint64 arrays; they raised "GatherV2: input 'indices' has unsupported dtype uint64".
    x = np.arange(24.0).reshape(4, 6)
    i = np.array([3, 0, 3], np.uint64)
    np.testing.assert_array_equal(tl.tensor(x)[i].numpy(), x[i])
    np.testing.assert_array_equal(tl.tensor(x)[:, i].numpy(), x[:, i])
    np.testing.assert_array_equal(tl.take(x, i, axis=1).numpy(), np.take(x, i, axis=1))
    np.testing.assert_array_equal(tl.gather_nd(x, i[:, None]).numpy(), x[i])
    np.testing.assert_array_equal(tl.take_along_axis(x, i[None, :], 1).numpy(), np.take_along_axis(x, i[None, :], 1))
    np.testing.assert_array_equal(tl.scatter_nd(i[:, None], tl.ones(3), [4]).numpy(), np.bincount(i, minlength=4))
    grad = tl.grad(lambda t: tl.sum(t[i]))(tl.tensor(x))
    np.testing.assert_array_equal(grad.numpy(), np.bincount(i, minlength=4)[:, None] * np.ones((1, 6)))


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_take_modes_match_numpy(mode, axis):
    # np.take(t, i, mode='clip') raised 'out= and mode= are not supported'; tl.take had no mode.
    x = np.arange(12.0).reshape(3, 4)
    i = np.array([[-13, -1], [4, 11]])
    expected = np.take(x, i, axis=axis, mode=mode)
    np.testing.assert_array_equal(tl.take(x, i, axis=axis, mode=mode).numpy(), expected)
    np.testing.assert_array_equal(np.take(tl.tensor(x), i, axis=axis, mode=mode).numpy(), expected)
    if axis is not None:
        spec = [tl.TensorSpec((None, None), "float64"), tl.TensorSpec((None, None), "int64")]
        traced = tl.function(lambda t, i: tl.take(t, i, axis=axis, mode=mode), input_signature=spec)(x, i)
        np.testing.assert_array_equal(traced.numpy(), expected)
    positions = np.take(np.arange(x.size).reshape(x.shape), i, axis=axis, mode=mode)
    grad = tl.grad(lambda t: tl.sum(tl.take(t, i, axis=axis, mode=mode)))(tl.tensor(x))
    np.testing.assert_array_equal(grad.numpy(), np.bincount(positions.ravel(), minlength=x.size).reshape(x.shape))


@pytest.mark.parametrize("flag", [False, True])
def test_traced_boolean_scalar_beside_an_index_array_of_unknown_size(flag):
    # Traced with the array's sizes unknown, x[False, i] forgot the False (length 0): it returned x[i][None]
    # with shape (2, 1, 2) where NumPy gives (2, 0, 2), silently.
    x, i = np.arange(6.0).reshape(3, 2), np.array([[1], [-3]])
    signature = [tl.TensorSpec((None, None), "float64"), tl.TensorSpec((None, None), "int64")]
    w = np.ones(x[flag, i].shape)
    both = lambda t, i: (t[flag, i], tl.grad(lambda u: tl.sum(u[flag, i] * w))(t))  # noqa: E731
    value, grad = tl.function(both, input_signature=signature)(x, i)
    assert value.shape == x[flag, i].shape
    np.testing.assert_array_equal(value.numpy(), x[flag, i])
    expected = np.zeros(x.size)
    np.add.at(expected, np.arange(x.size).reshape(x.shape)[flag, i].ravel(), 1.0)
    np.testing.assert_array_equal(grad.numpy(), expected.reshape(x.shape))


@pytest.mark.parametrize(
    "index", [range(2), (range(2), range(1, 3)), (slice(None), range(3, 0, -1)), range(0)], ids=repr
)
def test_range_indices_as_numpy(index):
    # NumPy reads a range as a sequence of ints; t[range(2)] raised 'StridedSlice: unsupported index range(0, 2)'.
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(tl.tensor(x)[index].numpy(), x[index])
    assert tl.tensor(x)[index].shape == x[index].shape


def test_traced_bincount_weights_of_another_length_name_the_op():
    # With sizes unknown the shape rule cannot compare them; the kernel raised NumPy's bare
    # "The weights and list don't have the same length."
    signature = [tl.TensorSpec((None,), "int64"), tl.TensorSpec((None,), "float64")]
    f = tl.function(lambda x, w: tl.bincount(x, w), input_signature=signature)
    with pytest.raises(
        ValueError, match=r"^Bincount: weights must have the shape of x \(x shape \(4,\) int64, weights"
    ):
        f(np.array([0, 3, 3, 1]), np.ones(3))
    np.testing.assert_array_equal(f(np.array([0, 3, 3]), np.ones(3)).numpy(), [1.0, 0.0, 0.0, 2.0])


@pytest.mark.parametrize("params_shape, indices_shape, axis, batch_dims", GATHERS + [((2, 3, 4), (2, 0), 2, 1)])
def test_gather_with_batch_dims_traces_with_unknown_sizes(params_shape, indices_shape, axis, batch_dims):
    # It raised 'gather_nd: the batch axes ... must have equal, known sizes' under a TensorSpec with None.
    rng = np.random.default_rng(2)
    params = rng.standard_normal(params_shape)
    indices = rng.integers(-params_shape[axis], params_shape[axis], size=indices_shape)
    if len(indices_shape) - batch_dims > 1:
        pytest.skip("several lookup axes need known sizes")
    signature = [
        tl.TensorSpec((None,) * len(params_shape), "float64"),
        tl.TensorSpec((None,) * len(indices_shape), "int64"),
    ]
    w = rng.standard_normal(_batched_take(params, indices, axis, batch_dims).shape)
    gathered = lambda p, i: tl.gather(p, i, axis=axis, batch_dims=batch_dims)  # noqa: E731
    both = lambda p, i: (gathered(p, i), tl.grad(lambda u: tl.sum(gathered(u, i) * w))(p))  # noqa: E731
    value, grad = tl.function(both, input_signature=signature)(params, indices)
    expected_value, expected_grad = both(tl.tensor(params), indices)
    np.testing.assert_array_equal(value.numpy(), _batched_take(params, indices, axis, batch_dims))
    np.testing.assert_array_equal(grad.numpy(), expected_grad.numpy())


def test_traced_take_along_axis_with_an_empty_index_axis():
    # Broadcast by adding the other's first slice along the axis: empty when the indices' axis is, so x became
    # empty too and the traced call raised 'TakeAlongAxis: index ... out of bounds' or a broadcast error.
    signature = [tl.TensorSpec((None, None), "float64"), tl.TensorSpec((None, None), "int64")]
    f = tl.function(lambda x, i: tl.take_along_axis(x, i, 1), input_signature=signature)
    x = np.arange(6.0).reshape(2, 3)
    for i in (np.zeros((1, 0), np.int64), np.array([[2], [0]])):
        np.testing.assert_array_equal(f(x, i).numpy(), np.take_along_axis(x, np.broadcast_to(i, (2, i.shape[1])), 1))


@pytest.mark.parametrize(
    "values, exc",
    [
        (2**40, OverflowError),
        (np.array(2**40), TypeError),
        (np.array([2**40, 1]), TypeError),
    ],
    ids=["python_int", "int64_0d", "int64_array"],
)
def test_at_refuses_integers_the_tensor_cannot_hold(values, exc):
    # An int32 tensor's t.at[0].set(2**40) gave 0 (wrapped; NumPy's assignment raises OverflowError).
    t = tl.tensor(np.array([1, 2], np.int32))
    index = slice(None) if np.ndim(values) else 0
    for update in (t.at[index].set, t.at[index].add):
        with pytest.raises(exc, match=r"^Tensor\.at\[\.\.\.\]: values .*int32"):
            update(values)
    np.testing.assert_array_equal(t.at[0].set(np.array(7)).numpy(), [7, 2])  # int64 values that fit


def test_at_refuses_floats_that_overflow_the_tensor():
    t = tl.tensor(np.array([1.0, 2.0], np.float32))
    with pytest.raises(TypeError, match=r"^Tensor\.at\[\.\.\.\]: values of dtype float64 .* overflow"):
        t.at[0].set(np.float64(1e300))
    np.testing.assert_array_equal(t.at[0].set(np.float64(np.inf)).numpy(), [np.inf, 2.0])


@pytest.mark.parametrize(
    "sorter, exc, match",
    [
        (np.array([1, 2]), ValueError, r"sorter must have one index per element of the sequence"),
        (np.array([-2, -1, 0]), ValueError, r"sorter index -2 is out of range \[0, 3\)"),
        (np.array([1, 2, 5]), ValueError, r"sorter index 5 is out of range \[0, 3\)"),
        (np.array([1.0, 2.0, 0.0]), TypeError, r"sorter must be a 1-D array of integers"),
    ],
)
def test_searchsorted_checks_its_sorter_as_numpy(sorter, exc, match):
    # A sorter of 2 indices for 3 elements searched a[[1, 2]] only, and [-2, -1, 0] counted from the end:
    # both gave an answer where NumPy raises.
    a = np.array([3.0, 1.0, 2.0])
    with pytest.raises(exc, match="^searchsorted: " + match):
        tl.searchsorted(a, [2.5], sorter=sorter)
    np.testing.assert_array_equal(tl.searchsorted(a, [2.5], sorter=[1, 2, 0]).numpy(), [2])


def test_composed_index_errors_name_the_function_called():
    # tensor_scatter_nd_add's shape error named scatter_nd, gather's batch mismatch named gather_nd.
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"^tensor_scatter_nd_add: updates of shape \(2,\) float64 must have shape"):
        tl.tensor_scatter_nd_add(x, [[0]], np.ones(2))
    with pytest.raises(ValueError, match=r"^gather: the 1 batch axes of params and indices must have equal sizes"):
        tl.gather(x, [[0]], batch_dims=1)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique_values_carry_the_gradient_to_first_occurrences(axis):
    # Unique was declared not differentiable, so grad(sum(unique(x) ** 2)) was 0 where it is 2 x at each first
    # occurrence (JAX's jnp.unique; for distinct elements unique is a sort).
    x = np.array([[3.0, 1.0, 3.0], [2.0, 1.0, 2.0], [3.0, 1.0, 3.0]])
    values, index = np.unique(x, axis=axis, return_index=True)
    expected = np.zeros(x.size) if axis is None else np.zeros_like(x)
    if axis is None:
        expected[index] = 2 * values
    else:
        np.moveaxis(expected, axis, 0)[index] = 2 * np.moveaxis(values, axis, 0)
    expected = expected.reshape(x.shape)
    f = lambda t: tl.sum(tl.unique(t, axis=axis) ** 2)  # noqa: E731
    np.testing.assert_array_equal(tl.grad(f)(tl.tensor(x)).numpy(), expected)
    np.testing.assert_array_equal(tl.function(tl.grad(f))(x).numpy(), expected)
    got = tl.unique(tl.tensor(x), axis=axis, return_index=True, return_counts=True)
    for g, e in zip(got, np.unique(x, axis=axis, return_index=True, return_counts=True)):
        np.testing.assert_array_equal(g.numpy(), e)


def test_one_hot_value_per_element_under_vmap_is_vmaps_error():
    # It said 'must be a number known when tl.function traces', naming tl.function under tl.vmap.
    with pytest.raises(Exception, match=r"^tl\.vmap: a batched tensor"):
        tl.vmap(lambda v: tl.one_hot([1, 0], 3, on_value=v))(tl.tensor([2.0, 3.0]))


@pytest.mark.parametrize("axes", [(-1, 0), (0, 2), (1, 0)])
def test_scatter_update_of_a_transposed_tensor_writes_its_updates(axes):
    # The kernel copied a non-contiguous input in its own memory order, so reshaping the copy to rows made
    # another copy and the updates went there: tensor_scatter_nd_update of moveaxis(x, -1, 0) silently
    # returned the input unchanged (found by tl.vmap over the last axis, which hands such views to kernels).
    x = np.arange(24.0).reshape(2, 3, 4)
    moved = tl.moveaxis(tl.tensor(x), *axes)
    want = np.moveaxis(x, *axes).copy()
    want[0, 1] = -1.0
    rest = want.shape[2:]
    got = tl.tensor_scatter_nd_update(moved, np.array([[0, 1]]), -np.ones((1, *rest)))
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(moved.numpy(), np.moveaxis(x, *axes))  # the input is untouched

"""Indexing, gather and scatter at their edges (the adversarial round): float16 scatter-adds against float64
sums, ..."""

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

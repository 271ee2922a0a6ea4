"""Attacks on what was left open in the NumPy-style functions and linalg: the dtypes of the creation
functions' results from NumPy-scalar bounds, ``np.vectorize`` on tensors, ``unique`` with ``size=`` and
``axis=``, and the linalg gaps.  References: NumPy and SciPy results, JAX's documented forms where NumPy has
none, and float64 central finite differences (``tl.testing.check_grads``) for every gradient."""

import warnings

import numpy as np
import pytest

import tensorlib as tl


@pytest.mark.parametrize(
    ("make", "reference"),
    [
        (lambda a, b: tl.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5)),
        (lambda a, b: tl.logspace(a, b, 4), lambda a, b: np.logspace(a, b, 4)),
        (lambda a, b: tl.geomspace(a + 1, b + 1, 4), lambda a, b: np.geomspace(a + 1, b + 1, 4)),
        (lambda a, b: tl.arange(a, b + 1, 0.25), lambda a, b: np.arange(a, b + 1, 0.25)),
    ],
)
def test_creation_from_numpy_scalar_bounds_keeps_their_dtype(make, reference):
    # NumPy scalars are strong as NumPy arrays are (DESIGN §6); only Python numbers are weak.  float64 bounds
    # gave float32, rounding 0.1-spaced values to 7 digits.
    for a, b, expected in [
        (np.float64(0.1), np.float64(1.3), np.float64),
        (np.float32(0.1), np.float32(1.3), np.float32),
        (0.1, 1.3, np.float32),
        (np.float64(0.1), 1.3, np.float64),
    ]:
        got = make(a, b)
        assert got.dtype == expected, (a, b, got.dtype)
        np.testing.assert_allclose(
            got.numpy(), reference(a, b).astype(expected), rtol=1e-6 if expected == np.float32 else 1e-14
        )


def test_float_valued_creation_of_integer_bounds_is_numpys_float64_unless_they_are_python_ints():
    assert tl.linspace(np.int32(0), np.int32(3), 4).dtype == np.linspace(np.int32(0), np.int32(3), 4).dtype
    assert tl.linspace(0, 3, 4).dtype == np.float32 and tl.arange(3).dtype == np.int64
    assert tl.linspace(tl.tensor(np.float64(0.0)), 1, 3).dtype == np.float64
    assert tl.linspace(0, 2j, 3).dtype == np.complex64
    assert tl.linspace(np.float64(0), 1, 3, dtype="float32").dtype == np.float32


def test_np_vectorize_of_a_tensor_maps_with_vmap_and_keeps_the_gradient():
    # NumPy's loop read the tensor with __array__: a NumPy array and a silently lost gradient (tl.grad raised
    # "f must return a scalar Tensor").  jax.numpy.vectorize's rule: f is mapped over the elements.
    x = np.array([[0.5, 1.0, 2.0], [1.5, -1.0, 3.0]])
    f = np.vectorize(lambda v: v * v + tl.sin(v))
    y = f(tl.tensor(x))
    assert isinstance(y, tl.Tensor)
    np.testing.assert_allclose(y.numpy(), x * x + np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(tl.grad(lambda t: tl.sum(f(t)))(tl.tensor(x)).numpy(), 2 * x + np.cos(x), rtol=1e-14)
    tl.testing.check_grads(lambda t: f(t), (tl.tensor(x),), order=2)
    np.testing.assert_allclose(tl.function(f)(tl.tensor(x)).numpy(), x * x + np.sin(x), rtol=1e-14)
    np.testing.assert_array_equal(np.vectorize(lambda v: v * v)(x), x * x)  # arrays still take NumPy's loop


def test_np_vectorize_of_tensors_takes_signature_excluded_and_keywords_as_numpy():
    x = np.arange(6.0).reshape(2, 3) - 2.5
    w = np.array([1.0, -2.0, 0.5])
    dot = np.vectorize(lambda a, b: tl.sum(a * b), signature="(n),(n)->()")
    np.testing.assert_allclose(dot(tl.tensor(x), w).numpy(), np.vectorize(np.dot, signature="(n),(n)->()")(x, w))
    tl.testing.check_grads(lambda t: dot(t, w), (tl.tensor(x),), order=1)
    power = np.vectorize(lambda a, p: a**p, excluded={1})
    np.testing.assert_allclose(power(tl.tensor(x), 3).numpy(), x**3)
    scaled = np.vectorize(lambda a, k=1.0, s=0.0: a * k + s, excluded={"k"})
    np.testing.assert_allclose(scaled(tl.tensor(x), k=3.0, s=w).numpy(), x * 3.0 + w)
    both = np.vectorize(lambda a, b: (a + b, a * b))(tl.tensor(x), w)
    np.testing.assert_allclose([both[0].numpy(), both[1].numpy()], [x + w, x * w])


def test_np_vectorize_of_a_tensor_with_python_control_flow_raises_naming_vectorize():
    with pytest.raises(TypeError, match=r"np.vectorize\(<lambda>\).*tl.vmap.*tl.where"):
        np.vectorize(lambda v: v if v > 0 else -v)(tl.tensor([1.0, -2.0]))


def _unique_padded_reference(x, axis, size, fill_value):
    """jnp.unique(x, True, True, True, axis=, size=, fill_value=) from NumPy's unique: the first ``size``
    subarrays, padded with fill_value (or the first subarray), the indices with the first one's, counts 0."""
    values, index, inverse, counts = np.unique(x, True, True, True, axis=axis)
    values, index, counts = np.moveaxis(values, axis, 0)[:size], index[:size], counts[:size]
    pads = size - len(index)
    pad = values[:1] if fill_value is None else np.full((1,) + values.shape[1:], fill_value, x.dtype)
    values = np.concatenate([values] + [pad] * pads)
    index = np.concatenate([index, np.full(pads, index[0])])
    counts = np.concatenate([counts, np.zeros(pads, counts.dtype)])
    return np.moveaxis(values, 0, axis), index, inverse.reshape(-1), counts


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize(("size", "fill_value"), [(2, None), (4, None), (6, -7.0), (1, 3.0)])
def test_unique_with_size_and_axis_is_jax_unique(axis, size, fill_value):
    # It raised NotImplementedError; jnp.unique(size=, axis=, fill_value=) is the reference.
    x = np.random.default_rng(3).integers(0, 2, (3, 5, 2)).astype(np.float64)
    x[:, 1] = x[:, 3]  # repeated subarrays along every axis
    got = tl.unique(tl.tensor(x), True, True, True, axis=axis, size=size, fill_value=fill_value)
    for g, r in zip(got, _unique_padded_reference(x, axis % 3, size, fill_value)):
        np.testing.assert_array_equal(g.numpy(), r)
    traced = tl.function(lambda t: tl.unique(t, axis=axis, size=size, fill_value=fill_value))(tl.tensor(x))
    np.testing.assert_array_equal(traced.numpy(), got[0].numpy())
    # The subarrays are gathered from x: their gradient reaches each one's first occurrence.
    tl.testing.check_grads(lambda t: tl.unique(t, axis=axis, size=size, fill_value=fill_value), (tl.tensor(x),))


def test_unique_with_size_and_axis_of_an_empty_axis_is_all_fill():
    got = tl.unique(tl.tensor(np.zeros((0, 2))), axis=0, size=2, fill_value=3)
    np.testing.assert_array_equal(got.numpy(), np.full((2, 2), 3.0))
    with pytest.raises(ValueError, match="unique: size=2 of an empty input needs a fill_value"):
        tl.unique(tl.tensor(np.zeros((0, 2))), axis=0, size=2)


_REDUCEAT_UFUNCS = [np.add, np.multiply, np.maximum, np.minimum, np.logaddexp, np.fmax, np.fmin]


@pytest.mark.parametrize("ufunc", _REDUCEAT_UFUNCS, ids=lambda u: u.__name__)
def test_reduceat_with_batched_indices_under_vmap_is_numpys_per_row(ufunc):
    # Batched (or traced) indices have no value to read: it raised BatchedValueError.  Overlapping and
    # non-increasing indices follow NumPy's rule (x[i] alone where the next index is not larger).
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(3, 4, 7))
    idx = np.array([[0, 2, 5, 5], [1, 4, 3, 6], [6, 0, 0, 2]])
    mapped = tl.vmap(lambda x, i: ufunc.reduceat(x, i, axis=-1))
    expected = np.stack([ufunc.reduceat(x, i, axis=-1) for x, i in zip(xs, idx)])
    np.testing.assert_allclose(mapped(tl.tensor(xs), tl.tensor(idx)).numpy(), expected, rtol=1e-12)
    traced = tl.function(lambda x, i: ufunc.reduceat(x, i, axis=1))(tl.tensor(xs[0]), tl.tensor(idx[0]))
    np.testing.assert_allclose(traced.numpy(), ufunc.reduceat(xs[0], idx[0], axis=1), rtol=1e-12)
    tl.testing.check_grads(lambda x: mapped(x, tl.tensor(idx)), (tl.tensor(xs),), order=1)


def test_reduceat_with_batched_integer_indices_keeps_numpys_dtype():
    xi = np.random.default_rng(2).integers(-5, 5, (3, 7))
    idx = np.array([[0, 2, 5], [1, 4, 3], [6, 0, 2]])
    for ufunc in (np.add, np.maximum, np.minimum, np.logical_and, np.logical_or):
        got = tl.vmap(lambda x, i: ufunc.reduceat(x, i))(tl.tensor(xi), tl.tensor(idx))
        expected = np.stack([ufunc.reduceat(x, i) for x, i in zip(xi, idx)])
        np.testing.assert_array_equal(got.numpy(), expected)
        assert got.dtype == expected.dtype


def test_unique_with_size_and_return_inverse_traces_with_unknown_sizes():
    # The inverse was reshaped to x.shape, (None, None) when traced: a TypeError instead of a graph.
    x = np.array([[1.0, 2.0], [2.0, 5.0]])
    fn = tl.function(lambda t: tl.unique(t, return_inverse=True, size=3, fill_value=0))
    values, inverse = fn.get_graph(tl.TensorSpec((None, None), "float64"))(x)
    expected_values, expected_inverse = np.unique(x, return_inverse=True)
    np.testing.assert_array_equal(values.numpy(), expected_values)
    np.testing.assert_array_equal(inverse.numpy(), expected_inverse.reshape(x.shape))


def _symmetric_indefinite(rng, shape):
    a = rng.normal(size=shape)
    a = a + np.swapaxes(a, -1, -2)
    a[..., 0, 0], a[..., 1, 1] = 0.0, 0.01  # small pivots: Bunch-Kaufman takes 2 x 2 blocks
    return a


@pytest.mark.parametrize("lower", [True, False])
def test_ldl_is_scipys_and_its_gradient_is_scipys_by_finite_differences(lower):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(4)
    a = _symmetric_indefinite(rng, (5, 5))
    a[np.triu_indices(5, 1) if lower else np.tril_indices(5, -1)] = 9.0  # the triangle not read
    lu, d, perm = tl.linalg.ldl(tl.tensor(a), lower=lower)
    ref = scipy_linalg.ldl(a, lower=lower)
    assert np.count_nonzero(np.diag(ref[1], 1)) > 0  # a 2 x 2 block is exercised
    for got, expected in zip((lu, d, perm), ref):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    # Reverse mode against central differences of scipy.linalg.ldl itself (same pivots nearby).
    for k in (0, 1):
        weights = rng.normal(size=(5, 5))
        grad = tl.grad(lambda x: tl.sum(tl.linalg.ldl(x, lower=lower)[k] * tl.tensor(weights)))(tl.tensor(a)).numpy()
        numeric = np.zeros_like(a)
        for i, j in np.ndindex(5, 5):
            e = np.zeros_like(a)
            e[i, j] = 1e-6
            plus, minus = scipy_linalg.ldl(a + e, lower=lower)[k], scipy_linalg.ldl(a - e, lower=lower)[k]
            numeric[i, j] = np.sum((plus - minus) * weights) / 2e-6
        np.testing.assert_allclose(grad, numeric, atol=1e-7)


def test_ldl_batched_rebuilds_the_matrix_and_has_second_order_gradients():
    a = _symmetric_indefinite(np.random.default_rng(5), (2, 3, 4, 4))
    lu, d, perm = tl.linalg.ldl(tl.tensor(a))
    rebuilt = lu.numpy() @ d.numpy() @ np.swapaxes(lu.numpy(), -1, -2)
    np.testing.assert_allclose(rebuilt, a, atol=1e-12)
    triangular = np.take_along_axis(lu.numpy(), perm.numpy()[..., None], axis=-2)
    np.testing.assert_array_equal(triangular, np.tril(triangular))
    tl.testing.check_grads(lambda x: tl.linalg.ldl(x)[:2], (tl.tensor(a),), order=2)


def test_ldl_of_empty_matrices_and_batches_is_empty():
    # A 0 x 0 matrix raised ValueError (LDL: cannot reshape array of size 0 into shape (0,0)); SciPy gives
    # empty factors.
    for shape in [(0, 0), (2, 0, 0), (0, 3, 3)]:
        lu, d, perm = tl.linalg.ldl(np.zeros(shape))
        assert (lu.shape, d.shape, perm.shape) == (shape, shape, shape[:-1])


def test_ldl_refuses_non_square_naming_the_op():  # complex matrices are factored (tests/test_newapiadv2.py)
    with pytest.raises(ValueError, match=r"LDL: expected square matrices in the last two axes, got 2x3"):
        tl.linalg.ldl(np.ones((2, 3)))


def test_expm_of_a_matrix_holding_inf_is_nan_without_touching_the_rest_of_the_batch():
    # JAX's and PyTorch's matrix_exp give NaN for every matrix below (SciPy special-cases triangular ones and
    # disagrees with both); tensorlib follows JAX and PyTorch, now without overflow RuntimeWarnings, and
    # the finite matrices of the same batch are SciPy's.
    scipy_linalg = pytest.importorskip("scipy.linalg")
    finite = np.array([[0.5, 1.0], [-0.3, 0.2]])
    batch = np.stack([[[1.0, np.inf], [0.0, 1.0]], [[-np.inf, 0.0], [0.0, 1.0]], finite, [[np.nan, 0.0], [0, 0]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tl.linalg.expm(tl.tensor(batch)).numpy()
    assert np.isnan(got[[0, 1, 3]]).all()
    np.testing.assert_allclose(got[2], scipy_linalg.expm(finite), rtol=1e-14)


def _mixed_third_difference(x, d1, d2, d3, step=0.1):
    """D^3 det(x)[d1, d2, d3] by central differences: exact for det of a 4 x 4 (degree 4), up to rounding."""
    total = 0.0
    for signs in np.ndindex(2, 2, 2):
        s = [1 if b == 0 else -1 for b in signs]
        total += s[0] * s[1] * s[2] * np.linalg.det(x + step * (s[0] * d1 + s[1] * d2 + s[2] * d3))
    return total / (8 * step**3)


def test_det_third_derivative_of_a_large_batch_is_worked_in_chunks(monkeypatch):
    # A batch whose table passed _DET_DERIVATIVE_TABLE_LIMIT raised NotImplementedError although each
    # matrix's table fits; the batch is now worked through in chunks (the limit lowered here to make a 5-batch
    # of 4 x 4 third derivatives take 3 chunks).
    from tensorlib.ops import linalg_ops

    rng = np.random.default_rng(6)
    x = rng.normal(size=(5, 4, 4))
    x[0, 3] = x[0, 2]  # singular matrices included
    directions = rng.normal(size=(5, 2, 4, 4))
    op = tl.ops.get("MatrixDeterminantDerivative")
    monkeypatch.setattr(linalg_ops, "_DET_DERIVATIVE_TABLE_LIMIT", 4**4 * 2)
    got = op(tl.tensor(x), tl.tensor(directions)).numpy()
    h = rng.normal(size=(4, 4))
    for b in range(5):
        expected = _mixed_third_difference(x[b], directions[b, 0], directions[b, 1], h)
        np.testing.assert_allclose(np.sum(got[b] * h), expected, rtol=1e-8, atol=1e-8)
    with pytest.raises(NotImplementedError, match=r"MatrixDeterminantDerivative: derivative 3 of det of 5 x 5"):
        op(tl.tensor(np.eye(5)), tl.tensor(np.ones((2, 5, 5))))


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "edge", "wrap", "mean", "maximum", "linear_ramp"])
def test_tl_pad_takes_numpys_modes(mode):
    # tl.pad(x, p, mode="reflect") was a TypeError (unexpected keyword 'mode') though np.pad(t, mode=) worked:
    # both NumPy's np.pad and TensorFlow's tf.pad take mode.
    x = np.arange(12.0).reshape(3, 4) ** 1.5
    widths = ((1, 2), (2, 1))
    np.testing.assert_allclose(tl.pad(tl.tensor(x), widths, mode=mode).numpy(), np.pad(x, widths, mode=mode))
    tl.testing.check_grads(lambda t: tl.pad(t, widths, mode=mode), (tl.tensor(x + 0.1),), order=1)


def test_tl_pad_takes_tensorflows_upper_case_modes_and_refuses_a_constant_for_another_mode():
    x = np.arange(6.0).reshape(2, 3)
    for mode in ("REFLECT", "SYMMETRIC"):
        np.testing.assert_array_equal(
            tl.pad(x, [[1, 1], [2, 2]], mode=mode).numpy(), np.pad(x, [[1, 1], [2, 2]], mode=mode.lower())
        )
    np.testing.assert_array_equal(
        tl.pad(x, 1, mode="CONSTANT", constant_values=5.0).numpy(), np.pad(x, 1, constant_values=5.0)
    )
    with pytest.raises(TypeError, match=r"pad: constant_values is for mode='constant', got mode='reflect'"):
        tl.pad(x, 1, 3.0, mode="reflect")
    with pytest.raises(TypeError, match=r"pad: mode='empty' is not supported"):
        tl.pad(x, 1, mode="empty")


@pytest.mark.parametrize(
    ("start", "stop", "kwargs"),
    [
        (np.array([0.0, 1.0]), np.array([1.0, 3.0]), {"num": 4, "axis": 1}),
        (np.array([0.0, 1.0]), 2.0, {"num": 3, "endpoint": False, "retstep": True, "axis": -1}),
        (np.array([[0.0], [1.0]]), np.array([1.0, 3.0, 5.0]), {"num": 4, "axis": 1}),
        (np.array([0.0, 1.0]), 2.0, {"num": 1, "retstep": True}),
        (0.0, 1.0, {"num": 0, "retstep": True}),
        (-3.0, 2.0, {"num": 4, "dtype": np.int64}),
    ],
)
def test_linspace_of_array_bounds_with_endpoint_retstep_and_axis_is_numpys(start, stop, kwargs):
    # Array bounds raised TypeError ("tensorlib Tensors take 0-d bounds"); tl.linspace had no endpoint,
    # retstep or axis.  NumPy's results, through np.linspace on tensors and tl.linspace alike.
    expected = np.linspace(start, stop, **kwargs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    options = {k: v for k, v in kwargs.items() if k not in ("num", "dtype")}
    for got in (
        np.linspace(tl.tensor(np.asarray(start)), tl.tensor(np.asarray(stop)), **kwargs),
        tl.linspace(tl.tensor(np.asarray(start)), stop, kwargs["num"], kwargs.get("dtype", "float64"), **options),
    ):
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.numpy() if isinstance(g, tl.Tensor) else g, e, rtol=1e-14)


def test_linspace_gradient_reaches_array_bounds():
    start, stop = tl.tensor(np.array([0.0, 1.0])), tl.tensor(np.array([1.0, 3.0]))
    tl.testing.check_grads(lambda s, e: tl.linspace(s, e, 4, axis=1, endpoint=False), (start, stop), order=2)
    traced = tl.function(lambda s, e: tl.linspace(s, e, 3, axis=-1))(start, stop)
    np.testing.assert_allclose(traced.numpy(), np.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=-1))

"""Attacks on the NumPy surface's leftovers and a linalg re-attack: infinities in the NaN-skipping
reductions, 0-d tensors given an axis, NumPy 2's names (``around``, ``concatenate``, ``matvec``/``vecmat``)
and their arguments, dtype promotion swept over dtypes x ops.  References: NumPy 2 / SciPy in float64,
jax.numpy where NumPy has no gradient, and float64 central finite differences (``tl.testing.check_grads``)
for every gradient."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

INF = np.inf


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@pytest.mark.parametrize(
    "values",
    [[1.0, -INF, 2.0], [INF, -INF], [INF, INF], [1.0, np.nan, INF], [[1.0, INF], [np.nan, 2.0]], [np.nan, 3.0, 1.0]],
)
def test_nanvar_and_nanstd_of_infinities_are_numpys_nan(name, values):
    # The centred values inf - inf are NaN; nanvar filled every NaN of x - mean with 0, not only x's own NaNs,
    # so [inf, -inf] had variance 0.0 and [1, -inf, 2] had inf, where NumPy (and jnp.nanvar) give NaN.
    x = np.array(values)
    for axis in (None, -1):
        with np.errstate(invalid="ignore"):
            expected = getattr(np, name)(x, axis=axis)
        np.testing.assert_array_equal(getattr(tl, name)(tl.tensor(x), axis=axis).numpy(), expected)


def test_nanvar_gradient_is_zero_at_nans_and_matches_differences_elsewhere():
    x = np.array([[1.0, np.nan, 3.0, -2.0], [0.5, 2.0, np.nan, np.nan]])
    g = tl.grad(lambda t: tl.sum(tl.nanvar(t, axis=1)))(tl.tensor(x)).numpy()
    kept = ~np.isnan(x)
    expected = np.where(kept, 2 * (x - np.nanmean(x, axis=1, keepdims=True)) / kept.sum(1, keepdims=True), 0.0)
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    check_grads(lambda t: tl.nanstd(t, axis=0), [np.array([[1.0, 2.0], [4.0, -1.0], [0.5, 3.0]])], order=2)


_ZERO_D_AXIS = {
    # NumPy's own split: its ufunc reductions and cumsum take an int axis 0 or -1 of a 0-d array, its
    # mean/var/std/average, quantiles, gradient and take_along_axis raise AxisError; a tuple axis always raises.
    "sum": lambda m, x, axis: m.sum(x, axis=axis),
    "max": lambda m, x, axis: m.max(x, axis=axis),
    "ptp": lambda m, x, axis: m.ptp(x, axis=axis),
    "count_nonzero": lambda m, x, axis: m.count_nonzero(x, axis=axis),
    "nansum": lambda m, x, axis: m.nansum(x, axis=axis),
    "nanmean": lambda m, x, axis: m.nanmean(x, axis=axis),
    "cumsum": lambda m, x, axis: m.cumsum(x, axis=axis),
    "cumulative_sum": lambda m, x, axis: m.cumulative_sum(x, axis=axis),
    "cumulative_prod": lambda m, x, axis: m.cumulative_prod(x, axis=axis, include_initial=True),
    "squeeze": lambda m, x, axis: m.squeeze(x, axis=axis),
    "mean": lambda m, x, axis: m.mean(x, axis=axis),
    "var": lambda m, x, axis: m.var(x, axis=axis),
    "std": lambda m, x, axis: m.std(x, axis=axis, ddof=0),
    "average": lambda m, x, axis: m.average(x, axis=axis),
    "median": lambda m, x, axis: m.median(x, axis=axis),
    "nanmedian": lambda m, x, axis: m.nanmedian(x, axis=axis),
    "quantile": lambda m, x, axis: m.quantile(x, 0.25, axis=axis),
    "percentile": lambda m, x, axis: m.percentile(x, 25.0, axis=axis),
    "nanquantile": lambda m, x, axis: m.nanquantile(x, 0.25, axis=axis),
    "nanpercentile": lambda m, x, axis: m.nanpercentile(x, 25.0, axis=axis),
    "gradient": lambda m, x, axis: m.gradient(x, axis=axis),
    "take_along_axis": lambda m, x, axis: m.take_along_axis(x, m.asarray(np.array(0)), axis=axis),
    "rollaxis": lambda m, x, axis: m.rollaxis(x, axis),
}


@pytest.mark.parametrize("name", sorted(_ZERO_D_AXIS))
@pytest.mark.parametrize("axis", [0, -1, 1, (0,)])
def test_an_axis_of_a_0d_tensor_is_refused_or_taken_as_numpy_does(name, axis):
    # median/quantile/gradient/take_along_axis failed with a bare "IndexError: tuple index out of range",
    # cumulative_sum/prod with a KernelResultError, and mean/var/std/average/squeeze took axes NumPy refuses.
    if isinstance(axis, tuple) and name in (
        "cumsum",
        "cumulative_sum",
        "cumulative_prod",
        "rollaxis",
        "take_along_axis",
    ):
        pytest.skip("NumPy reads a tuple here as an int (TypeError) or accepts it by accident")
    call = _ZERO_D_AXIS[name]
    x = np.array(2.5)
    try:
        expected = call(np, x, axis)
    except np.exceptions.AxisError:
        named = name.replace("_", "_?")  # the function, or its op (TakeAlongAxis)
        with pytest.raises(
            np.exceptions.AxisError, match=rf"(?i){named}\b.*axis -?\d+ is out of range for a tensor of rank 0"
        ):
            call(tl, tl.tensor(x), axis)
        return
    got = call(tl, tl.tensor(x), axis)
    np.testing.assert_array_equal(got.numpy(), expected)
    assert got.shape == np.shape(expected)


def test_axis_errors_are_numpys_axis_error_and_still_value_errors():
    # np.exceptions.AxisError subclasses ValueError and IndexError: code catching either (or AxisError) works.
    for call in (lambda: tl.sum(tl.ones((2, 3)), axis=2), lambda: tl.flip(tl.ones(3), axis=-2)):
        with pytest.raises(np.exceptions.AxisError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)


def test_numpy_2_names_around_concatenate_ndim_shape_size_exist_and_agree_with_numpy():
    x = np.array([[0.5, 1.5, 2.675], [-2.5, 3.14159, 7.0]])
    np.testing.assert_array_equal(tl.around(tl.tensor(x), 2).numpy(), np.around(x, 2))
    parts = [x, np.arange(3.0), np.array(4.0)]
    np.testing.assert_array_equal(
        tl.concatenate([tl.tensor(p) for p in parts], axis=None).numpy(), np.concatenate(parts, axis=None)
    )
    np.testing.assert_array_equal(tl.concatenate(tl.tensor(x), axis=0).numpy(), np.concatenate(x, axis=0))
    ints = [np.array([1, 2], np.int32), np.array([3], np.int64)]
    got = tl.concatenate([tl.tensor(i) for i in ints], dtype="float32")
    assert got.dtype == np.concatenate(ints, dtype="float32").dtype
    with pytest.raises(TypeError, match=r"^concatenate: cannot cast an input of dtype float64 .* to dtype=int32"):
        tl.concatenate([tl.tensor(x)], dtype="int32")
    assert (tl.ndim(tl.tensor(x)), tl.shape(tl.tensor(x)), tl.size(tl.tensor(x), axis=(0, 1))) == (2, (2, 3), 6)
    with pytest.raises(np.exceptions.AxisError, match=r"^size \(shape \(2, 3\)\): axis 2 is out of range"):
        tl.size(tl.tensor(x), axis=2)
    # through NumPy's own functions too (NEP 18), axis=None included
    assert type(np.concatenate([tl.tensor(x), tl.tensor(x)], axis=None)).__name__ == "Tensor"
    g = tl.grad(lambda t: tl.sum(tl.concatenate([t, t * 3.0], axis=None) ** 2))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(g, 2 * x + 18 * x)


@pytest.mark.parametrize(
    ("a_shape", "v_shape"), [((3, 2), (2,)), ((4, 3, 2), (2,)), ((2, 1, 3, 2), (5, 2)), ((0, 3, 2), (2,))]
)
def test_matvec_and_vecmat_match_numpy_broadcast_and_differentiate(a_shape, v_shape):
    rng = np.random.default_rng(3)
    a, v = rng.normal(size=a_shape), rng.normal(size=v_shape)
    np.testing.assert_allclose(tl.matvec(tl.tensor(a), tl.tensor(v)).numpy(), np.matvec(a, v), rtol=1e-12)
    at = np.swapaxes(a, -1, -2).copy()
    np.testing.assert_allclose(tl.vecmat(tl.tensor(v), tl.tensor(at)).numpy(), np.vecmat(v, at), rtol=1e-12)
    if a.size:
        check_grads(tl.matvec, [a, v], order=2)
        check_grads(tl.vecmat, [v, at], order=2)


def test_vecmat_conjugates_the_vector_and_bad_shapes_are_refused_as_numpy_refuses_them():
    v, a = np.array([1j, 2.0 - 1j]), np.array([[1.0, 2j], [3.0, 4.0]])
    np.testing.assert_allclose(tl.vecmat(tl.tensor(v), tl.tensor(a)).numpy(), np.vecmat(v, a))
    np.testing.assert_allclose(tl.matvec(tl.tensor(a), tl.tensor(v)).numpy(), np.matvec(a, v))
    # np.vecmat(t, vector) on Tensors gave a result of shape (1,) where NumPy raises: a 1-d operand is no matrix
    for call in (np.vecmat, tl.vecmat):
        with pytest.raises(ValueError, match=r"^vecmat: expected a matrix \(rank >= 2\) and a vector"):
            call(tl.tensor(np.ones((2, 2))), tl.tensor(np.ones(2)))
    with pytest.raises(ValueError, match=r"^matvec: the matrices' 3 and the vectors' 2 elements differ"):
        np.matvec(tl.tensor(np.ones((2, 3))), tl.tensor(np.ones(2)))
    with pytest.raises(ValueError, match=r"^matvec: the batch axes do not broadcast"):
        tl.matvec(tl.ones((4, 2, 3)), tl.ones((5, 3)))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "irfft2", "rfftn", "irfftn"])
def test_fft_of_float16_computes_in_float32_and_stays_there(name):
    # The documented rule (as jax.numpy): float16 in, complex64 or float32 out, the values NumPy computes from
    # the float32 input.  NumPy 2 itself rounds a 1-d irfft/hfft of float16 to float16, but not irfft2/irfftn.
    x = np.array([[1.0, 0.5, -2.0, 3.0], [0.25, 1.0, 2.0, -1.0]], np.float16)
    got = getattr(tl.fft, name)(tl.tensor(x))
    expected = getattr(np.fft, name)(x.astype(np.float32))
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-6)


_DTYPES = ("bool", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128")


def _sample(dtype, reverse=False):
    values = np.array([0.3, 0.7, 1.0, 0.0])[:: -1 if reverse else 1]
    if dtype == "bool":
        return values > 0.5
    if dtype.startswith("int"):
        return (values * 3).astype(dtype) + 1
    return (values + 0.2j * values).astype(dtype) if dtype.startswith("complex") else values.astype(dtype)


def _numpy_in_tensorlibs_rule(name, arrays):
    """NumPy's result, under tensorlib's documented deviations: bools going into a float-valued function are
    read as float64, not NumPy's float16 (docs/architecture.md); int8/int16/uint8 results are held in int32; the
    conjugate of a bool is that bool (NumPy makes it int8)."""
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(*arrays)
        first = expected[0] if isinstance(expected, tuple) else expected
        if first.dtype == np.float16 and not any(a.dtype == np.float16 for a in arrays):
            as_float64 = [a.astype(np.float64) if a.dtype == bool else a for a in arrays]
            if name == "ldexp":  # (its exponent stays an integer)
                as_float64[1] = arrays[1]
            return _numpy_in_tensorlibs_rule(name, as_float64)
    if name in ("conj", "conjugate") and arrays[0].dtype == bool:
        return arrays[0]
    if first.dtype in (np.int8, np.int16, np.uint8):  # (bitwise_count's uint8)
        return tuple(e.astype(np.int32) for e in expected) if isinstance(expected, tuple) else expected.astype(np.int32)
    return expected


def _ufuncs(nin):
    return sorted(
        n
        for n in dir(tl)
        if isinstance(getattr(np, n, None), np.ufunc)
        and getattr(np, n).nin == nin
        and getattr(np, n).signature is None  # (not matmul, vecdot, matvec, vecmat)
        and callable(getattr(tl, n))
    )


def _agree_on_dtype_or_both_refuse(name, arrays):
    try:
        expected = _numpy_in_tensorlibs_rule(name, arrays)
    except TypeError:
        expected = None
    try:
        got = getattr(tl, name)(*[tl.tensor(a) for a in arrays])
    except TypeError:  # tensorlib refuses round/reciprocal of bools, as JAX
        assert expected is None or arrays[0].dtype == bool, f"{name}{[a.dtype for a in arrays]}: tl refused"
        return
    assert expected is not None, f"{name}{[a.dtype for a in arrays]}: NumPy refuses, tl gave {got}"
    expected, got = (expected[0], got[0]) if isinstance(expected, tuple) else (expected, got)
    assert got.dtype == expected.dtype, (name, [a.dtype for a in arrays], got.dtype, expected.dtype)
    np.testing.assert_allclose(got.numpy().astype(complex), expected.astype(complex), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_every_unary_ufunc_promotes_as_numpy_for_every_dtype(dtype):
    for name in _ufuncs(1):
        _agree_on_dtype_or_both_refuse(name, [_sample(dtype)])


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(_ufuncs(2)), d1=st.sampled_from(_DTYPES), d2=st.sampled_from(_DTYPES))
def test_binary_ufuncs_promote_as_numpy_for_every_pair_of_dtypes(name, d1, d2):
    _agree_on_dtype_or_both_refuse(name, [_sample(d1), _sample(d2, reverse=True)])


def test_copy_mgrid_and_ogrid_are_numpys():
    x = np.array([[1.5, -2.0], [0.25, 4.0]])
    got = tl.copy(tl.tensor(x))
    np.testing.assert_array_equal(got.numpy(), np.copy(x))
    np.testing.assert_array_equal(tl.grad(lambda t: tl.sum(tl.copy(t) ** 2))(tl.tensor(x)).numpy(), 2 * x)
    assert type(np.copy(tl.tensor(x))).__name__ == "Tensor"  # NEP 18 reaches tl.copy, keeping the gradient
    for key in [(slice(0, 3), slice(-1, 1)), (slice(0, 1, 5j),), (slice(2, -2, -1), slice(0.0, 1.0, 0.25))]:
        dense = tl.mgrid[key]
        assert dense.dtype == np.mgrid[key].dtype
        np.testing.assert_array_equal(dense.numpy(), np.mgrid[key])
        opened, expected = tl.ogrid[key], np.ogrid[key]
        for o, e in zip(
            opened if isinstance(opened, tuple) else [opened], expected if isinstance(expected, tuple) else [expected]
        ):
            np.testing.assert_array_equal(o.numpy(), e)
    with pytest.raises(TypeError, match=r"^mgrid: expected slices of numbers"):
        tl.mgrid["a":"b"]


def test_bitwise_count_is_numpys_popcount_of_the_absolute_value_on_every_backend_kernel():
    from tensorlib.ops.elementwise import _bitwise_count_generic

    x = np.array([0, 1, -1, 7, -8, 1023, np.iinfo(np.int64).min, np.iinfo(np.int64).max, 12345678901234], np.int64)
    for values in (x, x[:6].astype(np.int32), np.array([True, False])):
        expected = np.bitwise_count(values).astype(np.int32)
        np.testing.assert_array_equal(tl.bitwise_count(tl.tensor(values)).numpy(), expected)
        np.testing.assert_array_equal(_bitwise_count_generic(np, values), expected)  # the Array API kernel
    assert type(np.bitwise_count(tl.tensor(x))).__name__ == "Tensor"
    with pytest.raises(TypeError, match=r"^BitwiseCount: needs integer or bool inputs .* got float32"):
        tl.bitwise_count(tl.ones(2))

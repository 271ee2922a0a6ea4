"""Reductions probed as an adversary: each test pins a defect that was fixed, against an independent
reference (float64 NumPy formulas or central differences), eagerly and traced."""

import numpy as np
import pytest
from _helpers import central_differences as _central_differences

import tensorlib as tl

MODES = pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])


def _run(f, traced):
    return tl.function(f) if traced else f


# ------------------------------------------------------------------ logsumexp with zero weights
@MODES
@pytest.mark.parametrize(
    "x, b",
    [
        ([0.0, 0.0, 800.0], [1.0, 2.0, 0.0]),  # the dropped x set the shift: every kept term underflowed
        ([[0.0, 900.0, 1.0], [5.0, 2.0, -1.0]], [[1.0, 0.0, 3.0], [0.0, 1.0, 1.0]]),
        ([1.0, np.nan, 2.0], [1.0, 0.0, 1.0]),  # a dropped NaN is dropped (SciPy)
        ([1.0, np.inf, 2.0], [1.0, 0.0, 1.0]),
    ],
)
def test_logsumexp_zero_weights_are_dropped(x, b, traced):
    x, b = np.array(x), np.array(b)
    kept = b != 0
    expected = np.log(np.sum(np.where(kept, b * np.exp(np.where(kept, x, 0.0)), 0.0), axis=-1))
    out = _run(lambda x, b: tl.logsumexp(x, axis=-1, b=b), traced)(x, b).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@MODES
def test_logsumexp_gradients_at_zero_weights(traced):
    # d/db_i = exp(x_i - logsumexp) also for a zero weight (its x above or below the kept ones); d/dx_i = 0 there.
    x, b = np.array([0.0, 1.0, 5.0, -3.0]), np.array([1.0, 2.0, 0.0, 0.0])
    grads = _run(tl.grad(lambda x, b: tl.logsumexp(x, b=b), argnums=(0, 1)), traced)(x, b)
    reference = [
        _central_differences(lambda v: np.log(np.sum(b * np.exp(v))), x),
        _central_differences(lambda w: np.log(np.sum(w * np.exp(x))), b),
    ]
    for got, want in zip(grads, reference):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------ integer sums and products
@MODES
@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_int32_sums_and_products_accumulate_in_int64_as_numpy(name, axis, traced):
    # An int32 sum wrapped around silently: sum([2**30, 2**30]) gave -2**31 (NumPy: 2**31, int64).
    x = np.array([[2**30, 2**30, 3], [-(2**30), 7, 2**20]], dtype=np.int32)
    expected = getattr(np, name)(x, axis=axis)
    out = _run(lambda t: getattr(tl, name)(t, axis=axis), traced)(x).numpy()
    assert out.dtype == expected.dtype == np.int64
    np.testing.assert_array_equal(out, expected)


# ------------------------------------------------------------------ max and min of empty bools
@MODES
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((3, 0), 1), ((0, 0), 1), ((0, 3), 1), ((2, 0), 0)])
def test_bool_max_and_min_of_an_empty_slice_raise_as_numpy(name, shape, axis, traced):
    # The max of bools is any, their min all: an empty slice gave False / True where NumPy raises.
    x = np.zeros(shape, bool)
    f = _run(lambda t: getattr(tl, name)(t, axis=axis), traced)
    try:
        expected = getattr(np, name)(x, axis=axis)
    except ValueError:
        with pytest.raises(ValueError, match=f"(?is){name}.*no identity.*bool"):
            f(x)
    else:
        out = f(x).numpy()
        assert out.shape == expected.shape and out.dtype == np.bool_


@MODES
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.float16])
def test_vdot_keeps_numpys_dtype(dtype, traced):
    # vdot is a sum of products; NumPy keeps int32 (and bool) there, where its sum widens to int64.
    a = np.array([1, 0, 3, 2]).astype(dtype)
    expected = np.vdot(a, a)
    out = _run(tl.vdot, traced)(a, a).numpy()
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


# ------------------------------------------------------------------ var / std ddof
@MODES
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("ddof", [np.int32(1), np.int64(2), np.float64(0.5), 1.5, True])
def test_var_and_std_take_numpy_scalar_ddof_without_promoting(name, ddof, traced):
    # A NumPy integer ddof made the divisor a NumPy scalar, which promoted a float32 result to float64.
    x = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5]], np.float32)
    expected = getattr(np, name)(x.astype(np.float64), axis=1, ddof=ddof)
    out = _run(lambda t: getattr(tl, name)(t, axis=1, ddof=ddof), traced)(x).numpy()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("ddof", ["1", None, [1]])
def test_var_and_std_refuse_a_ddof_that_is_not_a_number(name, ddof):
    with pytest.raises(TypeError, match=rf"(?i){name}: ddof must be a real number.*shape \(3,\), float32"):
        getattr(tl, name)(tl.tensor([1.0, 2.0, 4.0]), ddof=ddof)


@pytest.mark.parametrize("axis, error", [((0, 0), ValueError), (2, ValueError), (1.0, TypeError)])
def test_std_axis_errors_name_std(axis, error):
    with pytest.raises(error, match=r"^Std: .*shape \(2, 3\)"):
        tl.std(tl.tensor(np.ones((2, 3))), axis=axis)


# ------------------------------------------------------------------ prod gradient without division
@MODES
@pytest.mark.parametrize(
    "x, expected",
    [
        ([2.0, np.inf], [np.inf, 2.0]),  # P / x_j was inf / inf = nan for the inf entry (JAX: 2)
        ([1e200, 1e200, 1e-200], [1.0, 1.0, np.inf]),  # P overflowed though the others' products do not
        ([0.0, 1.0, np.inf], [np.inf, np.nan, 0.0]),
        ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
        ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0]),
    ],
)
def test_prod_gradient_is_the_product_of_the_others(x, expected, traced):
    with np.errstate(all="ignore"):
        got = _run(tl.grad(tl.prod), traced)(np.array(x)).numpy()
    np.testing.assert_array_equal(got, expected)


@MODES
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (2, 0), -1, ()])
def test_prod_gradient_over_axes_matches_central_differences(axis, traced):
    x = np.random.default_rng(0).uniform(0.5, 1.5, (2, 3, 2))
    x[0, 1, 1] = 0.0
    got = _run(tl.grad(lambda t: tl.sum(tl.sin(tl.prod(t, axis=axis)))), traced)(x).numpy()
    want = _central_differences(lambda v: np.sum(np.sin(np.prod(v, axis=axis))), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)

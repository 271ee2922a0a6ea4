"""Edge inputs of the NumPy-style functions against NumPy: NaN, infinities, empty slices, ddof >= n."""

import warnings

import numpy as np
import pytest

import tensorlib as tl


def _np(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kwargs)


_SPREAD_CASES = [
    (np.array([1.0, np.nan, 3.0]), {}),
    (np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]]), {"axis": 0}),
    (np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]]), {"axis": 1, "keepdims": True}),
    (np.zeros((0, 4)), {"axis": 0}),
    (np.zeros((3, 0)), {}),
    (np.zeros((0, 4)), {"axis": 0, "ddof": 1}),
    (np.array([5.0]), {"ddof": 2}),
    (np.array([5.0, 6.0]), {"ddof": 2}),
    (np.array([2.0, 2.0]), {}),
]


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("x, kwargs", _SPREAD_CASES)
def test_var_std_nan_empty_and_large_ddof_match_numpy(name, x, kwargs):
    got = getattr(tl, name)(x, **kwargs).numpy()
    want = _np(getattr(np, name), x, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_norm_of_a_vector_with_nan_is_nan():
    x = np.array([[1.0, np.nan], [2.0, 3.0]])
    np.testing.assert_array_equal(tl.linalg.norm(x).numpy(), np.linalg.norm(x))
    np.testing.assert_array_equal(tl.linalg.norm(x, axis=1).numpy(), np.linalg.norm(x, axis=1))


def test_std_gradient_at_zero_spread_stays_zero():
    g = tl.grad(lambda x: tl.std(x))(tl.tensor(np.array([2.0, 2.0])))
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


_MEDIAN_INPUT = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_median_and_quantile_with_nan_and_inf_match_numpy(axis):
    np.testing.assert_array_equal(tl.median(_MEDIAN_INPUT, axis=axis).numpy(), _np(np.median, _MEDIAN_INPUT, axis=axis))
    q = [0.2, 0.5, 1.0]
    np.testing.assert_array_equal(
        tl.quantile(_MEDIAN_INPUT, q, axis=axis).numpy(), _np(np.quantile, _MEDIAN_INPUT, q, axis=axis)
    )


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_median_is_numpy_median_with_an_infinity(n, axis):
    x = np.random.default_rng(n).standard_normal((3, n))
    x[0, 0] = np.inf
    np.testing.assert_array_equal(tl.median(x, axis=axis).numpy(), _np(np.median, x, axis=axis))


@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, [0.1, 0.99, 1.0]])
def test_quantile_midpoint_matches_numpy(q):
    x = np.random.default_rng(0).standard_normal((3, 6))
    np.testing.assert_allclose(
        tl.quantile(x, q, axis=1, method="midpoint").numpy(), np.quantile(x, q, axis=1, method="midpoint")
    )


def test_median_gradient_against_finite_differences():
    x = np.random.default_rng(3).standard_normal((3, 4))
    tl.testing.check_grads(lambda a: tl.median(a, axis=1), (x,), order=2)


def test_quantile_of_complex_is_a_clear_type_error():
    with pytest.raises(TypeError, match=r"quantile: a must be real, got complex128 \(shape \(2,\)\)"):
        tl.median(np.array([1 + 1j, 2.0]))

"""Edge inputs of the NumPy-style functions against NumPy: NaN, infinities, empty slices, ddof >= n."""

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tests._helpers import at_infinity_the_limit


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
    # NumPy's percentile refuses complex numbers (its median orders them: tests/test_complexorder.py).
    with pytest.raises(TypeError, match=r"percentile: a must be real, got complex128 \(shape \(2,\)\)"):
        tl.percentile(np.array([1 + 1j, 2.0]), 50)  # before: the error named quantile


_A = np.arange(6.0).reshape(2, 3)
_B = np.arange(6.0).reshape(3, 2)


@pytest.mark.parametrize(
    "axes, message",
    [
        (
            ([3], [0]),
            r"tensordot \(shapes \(2, 3\) and \(3, 2\)\): axis of a 3 is out of range for a tensor of rank 2",
        ),
        (([-3], [0]), r"tensordot .*: axis of a -3 is out of range"),
        (([1], [2]), r"tensordot \(shapes \(2, 3\) and \(3, 2\)\): axis of b 2 is out of range"),
        (3, r"tensordot: axes=3 must be in \[0, 2\] \(shapes \(2, 3\) and \(3, 2\)\)"),
        (-1, r"tensordot: axes=-1 must be in \[0, 2\]"),
        (([0, 0], [1, 1]), r"tensordot: repeated axis in axes \(\[0, 0\], \[1, 1\]\)"),
    ],
)
def test_tensordot_refuses_out_of_range_and_repeated_axes(axes, message):
    # They used to wrap modulo the rank and contract the wrong axes silently.
    with pytest.raises(ValueError, match=message):
        tl.tensordot(_A, _B, axes=axes)


@pytest.mark.parametrize("axes", [1, 0, ([1], [0]), (1, 0), ((-1,), (-2,)), (np.int64(1), np.int64(0))])
def test_tensordot_in_range_axes_match_numpy(axes):
    np.testing.assert_allclose(tl.tensordot(_A, _B, axes=axes).numpy(), np.tensordot(_A, _B, axes=axes))
    np.testing.assert_allclose(tl.linalg.tensordot(_A, _B, axes=axes).numpy(), np.tensordot(_A, _B, axes=axes))


_X = np.ones((2, 3))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tl.cumprod(_X, axis=7), r"Cumprod: axis 7 is out of range .*\(inputs x: shape \(2, 3\) float64\)"),
        (lambda: tl.diff(_X, axis=7), r"diff \(shape \(2, 3\)\): axis 7 is out of range"),
        (lambda: tl.repeat(_X, 2, axis=7), r"repeat \(shape \(2, 3\)\): axis 7 is out of range"),
        (lambda: tl.split(_X, 2, axis=-3), r"split \(shape \(2, 3\)\): axis -3 is out of range"),
        (lambda: tl.array_split(_X, 2, axis=7), r"array_split \(shape \(2, 3\)\): axis 7 is out of range"),
        (lambda: tl.moveaxis(_X, 7, 0), r"moveaxis \(shape \(2, 3\)\): source 7 is out of range"),
        (lambda: tl.moveaxis(_X, 0, 7), r"moveaxis \(shape \(2, 3\)\): destination 7 is out of range"),
        (lambda: tl.swapaxes(_X, 0, 7), r"swapaxes \(shape \(2, 3\)\): axis2 7 is out of range"),
        (lambda: tl.rot90(_X, axes=(0, 7)), r"rot90 \(shape \(2, 3\)\): axis 7 is out of range"),
        (
            lambda: tl.median(_X, axis=7),
            r"median: axis 7 is out of range for a tensor of rank 2 \(input shape \(2, 3\)",
        ),
        (lambda: tl.percentile(_X, 50, axis=(0, 0)), r"percentile: duplicate axis"),
    ],
)
def test_bad_axis_errors_name_the_function_and_shape(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_cumulative_of_a_0d_input_is_numpys_flattened_one(name, axis):
    for x in (np.array(2.5), np.array(3)):
        got, want = getattr(tl, name)(x, axis=axis).numpy(), getattr(np, name)(x, axis=axis)
        assert got.shape == want.shape == (1,) and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=rf"{name} \(shape \(\)\): axis 1 is out of range"):
        getattr(tl, name)(np.array(2.5), axis=1)


def test_cumprod_gradient_of_a_0d_input():
    tl.testing.check_grads(lambda x: tl.cumprod(x, axis=-1), (np.array(2.5),), order=2)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "argmax", "logsumexp"])
def test_reductions_take_axis_minus_one_of_a_0d_input_as_numpy(name):
    reference = scipy_logsumexp if name == "logsumexp" else getattr(np, name)
    got = getattr(tl, name)(np.array(2.5), axis=-1).numpy()
    want = reference(np.array(2.5), axis=-1)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want)


def scipy_logsumexp(x, axis):
    return np.log(np.sum(np.exp(x), axis=axis))


@pytest.mark.parametrize("q", [0.5, [0.2, 0.7]])
@pytest.mark.parametrize("axis", [1, -1])
def test_quantile_with_an_empty_kept_axis_is_empty_as_numpy(q, axis):
    x = np.zeros((0, 4))
    assert tl.quantile(x, q, axis=axis).shape == np.quantile(x, q, axis=axis).shape
    assert tl.median(x, axis=axis, keepdims=True).shape == np.median(x, axis=axis, keepdims=True).shape == (0, 1)


def test_quantile_of_an_empty_slice_is_a_clear_error_and_median_nan_as_numpy():
    for axis in (None, 0, (0, 1)):
        with pytest.raises(ValueError, match=r"quantile: cannot take a quantile of an empty slice \(shape \(0, 4\)"):
            tl.quantile(np.zeros((0, 4)), 0.5, axis=axis)
        expected = _np(np.median, np.zeros((0, 4)), axis=axis)  # NumPy: NaN (and a RuntimeWarning)
        np.testing.assert_array_equal(tl.median(np.zeros((0, 4)), axis=axis).numpy(), expected)


_BOOLS = np.array([True, False])


def test_square_and_conj_of_bools():
    # They used to crash: NumPy's kernels turn bools into int8, which the ops' rules did not expect.
    squared = tl.square(_BOOLS)
    assert squared.dtype == tl.int32
    np.testing.assert_array_equal(squared.numpy(), np.square(_BOOLS))
    conjugated = tl.conj(_BOOLS)
    assert conjugated.dtype == tl.bool_
    np.testing.assert_array_equal(conjugated.numpy(), _BOOLS)


@pytest.mark.parametrize("name", ["round", "reciprocal"])
def test_round_and_reciprocal_of_bools_are_clear_type_errors(name):
    with pytest.raises(TypeError, match=rf"{name}: needs a number, got a bool tensor \(shape \(2,\)\)"):
        getattr(tl, name)(_BOOLS)


@pytest.mark.parametrize(
    "kwargs", [{}, {"axis": 0}, {"n": 2}, {"prepend": True}, {"append": np.array([[False], [True]])}]
)
def test_diff_of_bools_is_not_equal_as_numpy(kwargs):
    b = np.array([[True, False, False], [True, True, False]])
    got, want = tl.diff(b, **kwargs), np.diff(b, **kwargs)
    assert got.dtype == tl.bool_
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("shape, axis", [((0,), None), ((3, 0), -1), ((3, 0), 0), ((0, 3), (0, 1))])
def test_logsumexp_of_an_empty_slice_is_minus_inf(shape, axis):
    x = np.zeros(shape)
    want = np.log(np.sum(np.exp(x), axis=axis))  # log(0) = -inf, as scipy.special.logsumexp gives
    got = tl.logsumexp(x, axis=axis).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_logsumexp_of_bools_is_float64():
    b = np.array([[True, False, False], [True, True, False]])
    got = tl.logsumexp(b, axis=1)
    assert got.dtype == tl.float64
    np.testing.assert_allclose(got.numpy(), np.log(np.sum(np.exp(b.astype(np.float64)), axis=1)))


@pytest.mark.parametrize("paddings", [1, (1,), (1, 2), ((1, 2),), ((1, 2), (0, 1)), np.array([[1, 1], [0, 0]])])
def test_pad_takes_numpys_pad_width_forms(paddings):
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        tl.pad(x, paddings, constant_values=-1.0).numpy(), np.pad(x, paddings, constant_values=-1.0)
    )


def test_pad_refuses_fractional_and_mismatched_paddings():
    x = np.ones((2, 3))
    # int() used to truncate 1.5 to 1 silently.
    with pytest.raises(
        TypeError, match=r"pad: paddings must be integers, got \(\(1\.5, 0\), \(0, 0\)\) \(x shape \(2, 3\)\)"
    ):
        tl.pad(x, ((1.5, 0), (0, 0)))
    with pytest.raises(
        ValueError, match=r"pad: paddings \(\(1, 1\), \(1, 1\), \(1, 1\)\) must be one \(before, after\) pair"
    ):
        tl.pad(x, ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(ValueError, match=r"PadV2: paddings \(\(-1, 0\), \(0, 0\)\) must be one non-negative"):
        tl.pad(x, ((-1, 0), (0, 0)))


def test_pad_gradient_with_numpy_style_width():
    tl.testing.check_grads(lambda a: tl.pad(a, (1, 2)), (np.random.default_rng(0).standard_normal((2, 3)),), order=2)


_OFF_SUPPORT = np.array([-1.0, 0.0, 0.3, 1.0, 2.5, np.inf, -np.inf, np.nan])


def _stats_cases():
    # (name, tensorlib function, scipy.stats method name, extra arguments)
    return [
        ("beta", "logpdf", (2.0, 3.0), {}),
        ("beta", "pdf", (1.0, 2.0), {}),
        ("beta", "logpdf", (0.5, 0.5), {"loc": -0.5, "scale": 2.0}),
        ("beta", "logpdf", (-1.0, 2.0), {}),
        ("gamma", "logpdf", (2.5,), {}),
        ("gamma", "pdf", (1.0,), {"loc": 0.5, "scale": 2.0}),
        ("gamma", "logpdf", (0.5,), {}),
        ("gamma", "logpdf", (2.0,), {"scale": -1.0}),
        # A nan loc, and an infinite x over an infinite scale, standardize to nan: nan, not -inf.
        ("beta", "logpdf", (2.0, 3.0), {"loc": np.nan}),
        ("beta", "logpdf", (2.0, 3.0), {"scale": np.inf}),
        ("gamma", "logpdf", (2.5,), {"loc": np.nan}),
        ("gamma", "pdf", (2.5,), {"scale": np.inf}),
        ("t", "logpdf", (np.inf,), {}),
        ("t", "pdf", (np.inf,), {"loc": 1.0, "scale": 2.0}),
        ("t", "logpdf", (0.0,), {}),
        ("norm", "logpdf", (), {"scale": -1.0}),
        ("norm", "cdf", (), {"scale": 0.0}),
        ("norm", "logcdf", (), {"loc": 1.0, "scale": -2.0}),
    ]


@pytest.mark.parametrize("name, method, args, kwargs", _stats_cases())
def test_stats_off_the_support_and_invalid_parameters_match_scipy(name, method, args, kwargs):
    stats = pytest.importorskip("scipy.stats")
    # Outside the support the formulas used to give finite values (gamma.pdf(-1, 1) was e).
    got = getattr(getattr(tl.stats, name), method)(_OFF_SUPPORT, *args, **kwargs).numpy()
    want = _np(getattr(getattr(stats, name), method), _OFF_SUPPORT, *args, **kwargs)
    # but at an infinite x the density's limit where SciPy's formula reads inf - inf (gamma.logpdf(inf, 2.5): NaN)
    valid = 0 < kwargs.get("scale", 1.0) < np.inf and not np.isnan(kwargs.get("loc", 0.0)) and min(args, default=1) > 0
    if valid:
        want = at_infinity_the_limit(name, method, np.broadcast_to(_OFF_SUPPORT, np.shape(want)), want)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("mu", [0.0, 2.5, -1.0])
def test_poisson_off_the_support_matches_scipy(mu):
    stats = pytest.importorskip("scipy.stats")
    k = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 10.0, np.inf, np.nan])
    np.testing.assert_allclose(tl.stats.poisson.logpmf(k, mu).numpy(), _np(stats.poisson.logpmf, k, mu), rtol=1e-12)
    np.testing.assert_allclose(tl.stats.poisson.pmf(k, mu).numpy(), _np(stats.poisson.pmf, k, mu), rtol=1e-12)


def test_stats_gradients_inside_the_support_and_zero_outside():
    x = np.array([0.2, 0.7])
    tl.testing.check_grads(lambda v, a: tl.stats.gamma.logpdf(v, a, scale=1.5), (x, np.array(2.5)), order=2)
    tl.testing.check_grads(lambda v, a: tl.stats.beta.logpdf(v, a, 3.0), (x, np.array(2.0)), order=2)
    tl.testing.check_grads(lambda v, d: tl.stats.t.logpdf(v, d), (x, np.array(3.0)), order=2)
    tl.testing.check_grads(lambda m: tl.stats.poisson.logpmf(np.array([0.0, 3.0]), m), (np.array(2.5),), order=2)
    for f, outside in (
        (lambda v: tl.stats.gamma.logpdf(v, 2.5), [-1.0, -2.0]),
        (lambda v: tl.stats.beta.logpdf(v, 2.0, 3.0), [-1.0, 2.0]),
    ):
        g = tl.grad(lambda v: tl.sum(tl.exp(f(v))))(tl.tensor(np.array(outside)))
        np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_argsort_kind_is_checked_and_stable_kinds_keep_ties_in_order():
    x = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    for kind in ("stable", "mergesort", "merge"):
        np.testing.assert_array_equal(tl.argsort(x, kind=kind).numpy(), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(np.sort(tl.argsort(x, kind="quicksort").numpy()[:2]), [1, 3])
    # An unknown kind used to be ignored silently.
    with pytest.raises(
        ValueError, match=r"argsort: kind must be 'quicksort', 'heapsort', 'mergesort' or 'stable', got 'bogus'"
    ):
        tl.argsort(x, kind="bogus")

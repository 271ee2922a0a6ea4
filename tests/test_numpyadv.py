"""Adversarial checks of last session's NumPy functions (polynomials, sets, histograms, the functional
in-place writers, interp, cov, ...) and the Array API names, against NumPy 2 (and jax.numpy / array_api_strict
where installed): every documented parameter, dtypes, values, gradients against float64 finite differences.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

_A = np.array([0.1, 0.2, 0.3])
_Z = np.zeros(3)


def _numpy_put(a, ind, v):
    out = a.copy()
    np.put(out, ind, v)
    return out


def _numpy_place(a, mask, v):
    out = a.copy()
    np.place(out, mask, v)
    return out


def _numpy_fill_diagonal(a, v):
    out = a.copy()
    np.fill_diagonal(out, v)
    return out


# (name, tensorlib call, NumPy call): a float64 array next to a list or a Python number that float32 cannot
# hold (0.1), where the result must be NumPy's to the last bit.
_MIXED = [
    ("isin", lambda: tl.isin(_A, [0.1, 0.7]), lambda: np.isin(_A, [0.1, 0.7])),
    ("isin scalar", lambda: tl.isin(_A, 0.1), lambda: np.isin(_A, 0.1)),
    ("setxor1d", lambda: tl.setxor1d(_A, [0.1, 0.7]), lambda: np.setxor1d(_A, [0.1, 0.7])),
    ("union1d", lambda: tl.union1d(_A, [0.1, 0.7]), lambda: np.union1d(_A, [0.1, 0.7])),
    ("intersect1d", lambda: tl.intersect1d(_A, [0.1, 0.7]), lambda: np.intersect1d(_A, [0.1, 0.7])),
    ("setdiff1d", lambda: tl.setdiff1d(_A, [0.1, 0.7]), lambda: np.setdiff1d(_A, [0.1, 0.7])),
    ("polyval", lambda: tl.polyval(_A, 0.1), lambda: np.polyval(_A, 0.1)),
    ("polyadd", lambda: tl.polyadd(_A, [0.1, 0.7]), lambda: np.polyadd(_A, [0.1, 0.7])),
    ("polymul", lambda: tl.polymul(_A, [0.1, 0.7]), lambda: np.polymul(_A, [0.1, 0.7])),
    ("polyint k", lambda: tl.polyint(_A, k=0.1), lambda: np.polyint(_A, k=0.1)),
    (
        "interp",
        lambda: tl.interp(_A, [0.1, 0.2, 0.3], [1.0, 2.0, 3.0]),
        lambda: np.interp(_A, [0.1, 0.2, 0.3], [1, 2, 3]),
    ),
    ("interp lists", lambda: tl.interp(0.2, [0.1, 0.2, 0.3], [1.0, 2.0, 3.0]), lambda: np.interp(0.2, _A, [1, 2, 3])),
    (
        "interp complex",
        lambda: tl.interp(_A, _A, [0.1 + 1j, 0.2, 0.3]),
        lambda: np.interp(_A, _A, [0.1 + 1j, 0.2, 0.3]),
    ),
    (
        "searchsorted",
        lambda: tl.searchsorted([0, 0.2, 1.0], np.array([0.2, 0.1]), side="right"),
        lambda: np.searchsorted([0, 0.2, 1.0], [0.2, 0.1], side="right"),
    ),
    (
        "digitize",
        lambda: tl.digitize(np.array([0.2, 0.1]), [0, 0.2, 1.0]),
        lambda: np.digitize([0.2, 0.1], [0, 0.2, 1]),
    ),
    (
        "histogram",
        lambda: tl.histogram(np.array([0.2, 0.1]), bins=[0, 0.2, 1.0])[0],
        lambda: np.histogram([0.2, 0.1], bins=[0, 0.2, 1.0])[0],
    ),
    (
        "histogram2d",
        lambda: tl.histogram2d(np.array([0.2, 0.1]), np.array([0.2, 0.1]), bins=[[0, 0.2, 1.0], [0, 0.2, 1.0]])[0],
        lambda: np.histogram2d([0.2, 0.1], [0.2, 0.1], bins=[[0, 0.2, 1.0], [0, 0.2, 1.0]])[0],
    ),
    (
        "histogramdd weights",
        lambda: tl.histogramdd(np.array([[0.2, 0.1]]), bins=2, weights=[0.1])[0],
        lambda: np.histogramdd(np.array([[0.2, 0.1]]), bins=2, weights=[0.1])[0],
    ),
    ("put", lambda: tl.put(_Z, [0], [0.1]), lambda: _numpy_put(_Z, [0], [0.1])),
    ("put scalar", lambda: tl.put(_Z, [0], 0.1), lambda: _numpy_put(_Z, [0], 0.1)),
    ("place", lambda: tl.place(_Z, _Z == 0, [0.1]), lambda: _numpy_place(_Z, _Z == 0, [0.1])),
    (
        "fill_diagonal",
        lambda: tl.fill_diagonal(np.zeros((2, 2)), 0.1),
        lambda: _numpy_fill_diagonal(np.zeros((2, 2)), 0.1),
    ),
    ("piecewise", lambda: tl.piecewise(_Z, [_Z == 0], [0.1]), lambda: np.piecewise(_Z, [_Z == 0], [0.1])),
    ("piecewise f", lambda: tl.piecewise(_Z, [_Z == 0], [lambda v: 0.1]), lambda: np.piecewise(_Z, [_Z == 0], [0.1])),
    ("ediff1d", lambda: tl.ediff1d(_Z, to_begin=[0.1]), lambda: np.ediff1d(_Z, to_begin=[0.1])),
    ("insert", lambda: tl.insert(_Z, 1, 0.1), lambda: np.insert(_Z, 1, 0.1)),
    ("trapezoid", lambda: tl.trapezoid(_Z + 1, [0, 0.1, 0.3]), lambda: np.trapezoid(_Z + 1, [0, 0.1, 0.3])),
    ("cov", lambda: tl.cov(_A, [0.1, 0.7, 0.3]), lambda: np.cov(_A, [0.1, 0.7, 0.3])),
    ("cov aweights", lambda: tl.cov(_A, aweights=[0.1, 0.7, 0.3]), lambda: np.cov(_A, aweights=[0.1, 0.7, 0.3])),
    ("choose", lambda: tl.choose([0, 1, 0], [_Z, [0.1] * 3]), lambda: np.choose([0, 1, 0], [_Z, [0.1] * 3])),
    ("convolve", lambda: tl.convolve(_A, [0.1, 0.7]), lambda: np.convolve(_A, [0.1, 0.7])),
    ("correlate complex", lambda: tl.correlate(_A, [0.1j, 0.7]), lambda: np.correlate(_A, [0.1j, 0.7])),
    ("add complex list", lambda: tl.add(_A, [0.1j, 0.7, 0.1]), lambda: np.add(_A, [0.1j, 0.7, 0.1])),
]


@pytest.mark.parametrize("name, ours, numpy", _MIXED, ids=[c[0] for c in _MIXED])
def test_lists_and_numbers_are_read_at_the_arrays_dtype(name, ours, numpy):
    # A list or Python number next to a float64 array was read as float32 first: isin(a, [0.1]) found no 0.1,
    # histogram put 0.2 in the wrong bin, put wrote 0.10000000149.
    expected = np.asarray(numpy())
    got = np.asarray(ours().numpy())
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected, err_msg=name)


def test_histogram_reads_listed_edges_as_float64():
    # NumPy reads listed bin edges as float64 and returns them: float32(0.7) = 0.699999988 is below the edge
    # 0.7, so in bin 0; edges read as float32 put it in bin 1 (and were returned as float32).
    x = np.array([0.7, 0.2], np.float32)
    hist, edges = tl.histogram(x, bins=[0, 0.7, 1])
    expected_hist, expected_edges = np.histogram(x, bins=[0, 0.7, 1])
    np.testing.assert_array_equal(hist.numpy(), expected_hist)
    assert edges.dtype == expected_edges.dtype == np.float64
    hist, (edges,) = tl.histogramdd(x[:, None], bins=[[0, 0.7, 1]])
    np.testing.assert_array_equal(hist.numpy(), np.histogramdd(x[:, None], bins=[[0, 0.7, 1]])[0])
    hist, xedges, yedges = tl.histogram2d(x, x, bins=[0, 0.7, 1])
    np.testing.assert_array_equal(hist.numpy(), np.histogram2d(x, x, bins=[0, 0.7, 1])[0])
    assert xedges.dtype == yedges.dtype == np.float64
    assert tl.histogram_bin_edges(x, bins=[0, 0.7, 1]).dtype == np.float64


@pytest.mark.parametrize(
    "x, condlist, funclist",
    [
        (np.array([-1.0, 2.0]), [True, False], [1.0, 2.0]),  # one mask for a 1-d x, then the otherwise value
        (np.array([-1.0, 2.0, 3.0]), [False, True, True], [lambda v: v * 10]),
        (np.array([-1.0, 2.0]), [np.bool_(False), np.bool_(True)], [5.0, -5.0]),
        (np.array([-1.0, 2.0]), list(np.array([-1.0, 2.0]) > 0), [lambda v: -v, 7.0]),
        (np.array(3.0), [True], [2.0]),  # a 0-d x: a list of conditions
        (np.array([-1.0, 2.0]), [np.array([True, False]), np.array([False, True])], [1.0, 2.0]),
    ],
)
def test_piecewise_reads_a_list_of_bools_as_one_condition(x, condlist, funclist):
    # piecewise(x, [True, False], [1.0, 2.0]) took two scalar conditions (the first true everywhere) and gave
    # [1, 1]; NumPy reads a list of bools as one mask, with the otherwise value: [1, 2].
    expected = np.piecewise(x, condlist, funclist)
    np.testing.assert_array_equal(tl.piecewise(x, condlist, funclist).numpy(), expected)
    np.testing.assert_array_equal(np.piecewise(tl.tensor(x), condlist, funclist).numpy(), expected)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_takes_a_number_as_one_value(mode):
    # numpy.convolve reads a 0-d input as length 1 (ndmin=1); tensorlib raised "a and v must be 1-d".
    v = np.array([1.0, -2.0, 0.5j])
    for a, b in [(np.array(2.0), v), (v, np.array(3.0)), (np.array(2.0), np.array(3.0))]:
        np.testing.assert_allclose(tl.convolve(a, b, mode).numpy(), np.convolve(a, b, mode), rtol=1e-15)


def test_asarray_copy_false_refuses_a_needed_copy():
    # The standard (and NumPy 2): copy=False must raise ValueError where a copy is needed; tensorlib copied.
    t = tl.tensor([1.0, 2.0])
    assert tl.asarray(t, copy=False) is t
    assert tl.asarray(t, dtype="float32", copy=False) is t
    for obj, kwargs in [([1, 2], {}), (np.ones(2), {}), (t, {"dtype": "float64"})]:
        with pytest.raises(ValueError, match="asarray: copy=False"):
            tl.asarray(obj, copy=False, **kwargs)
        with pytest.raises(ValueError):
            np.asarray([1, 2], copy=False)  # the reference refuses too
        np.testing.assert_array_equal(tl.asarray(obj, **kwargs).numpy(), np.asarray(obj))
    assert tl.astype(t, "float32", copy=False) is t
    assert tl.astype(t, "float64", copy=False).dtype == np.float64


def test_asarray_copy_false_matches_array_api_strict():
    xp = pytest.importorskip("array_api_strict")
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    with pytest.raises(ValueError):
        tl.asarray([1, 2], copy=False)
    a = xp.asarray([1.0, 2.0])
    assert xp.astype(a, xp.float64, copy=False) is a
    t = tl.tensor([1.0, 2.0], dtype="float64")
    assert tl.astype(t, "float64", copy=False) is t


@pytest.mark.parametrize(
    "u, v",
    [
        ([1.0, 3.0, 3.0], [0.0, 1.0, 1.0]),
        ([1.0, 2.0, 3.0], [0.0, 0.0, 2.0]),
        ([2.0, -1.0, 0.5, 4.0], [0.0, 1.0, -2.0]),
        ([1.0, 2.0], [0.0, 0.0, 1.0, 1.0, 1.0]),
    ],
)
def test_polydiv_strips_the_divisors_leading_zeros(u, v):
    # polydiv(u, [0, 1, 1]) divided by v[0] = 0: q inf, r [-inf, -inf] (NumPy and JAX too); [0, 1, 1] is
    # the polynomial x + 1, so the quotient and remainder are NumPy's for the stripped divisor.
    q, r = tl.polydiv(np.array(u), np.array(v))
    expected_q, expected_r = np.polydiv(np.array(u), np.trim_zeros(np.array(v), "f"))
    np.testing.assert_allclose(q.numpy(), expected_q, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(r.numpy(), expected_r, rtol=1e-14, atol=1e-14)
    product = np.polyadd(np.polymul(q.numpy(), v), r.numpy())
    np.testing.assert_allclose(np.trim_zeros(product, "f"), np.trim_zeros(np.array(u), "f"), rtol=1e-13)


def test_polydiv_by_the_zero_polynomial_raises():
    for v in ([0.0], [0.0, 0.0, 0.0]):
        with pytest.raises(ZeroDivisionError, match=r"polydiv: division by the zero polynomial \(v shape"):
            tl.polydiv(np.array([1.0, 2.0]), np.array(v))


@pytest.mark.parametrize("m", [1, 2, 3])
def test_polyder_of_bool_coefficients_counts_the_powers(m):
    # The powers were made in the coefficients' dtype: bool, so polyder([True, True, False]) gave [True, True]
    # (NumPy 2: int64 [2, 1]).
    p = np.array([True, True, False, True])
    got = tl.polyder(p, m)
    expected = np.polyder(p, m)
    assert got.dtype == expected.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("m", [1, 2, 3])
@pytest.mark.parametrize("k", [[2.5], np.array([-1.0]), 0.5])
def test_polyint_takes_one_constant_for_every_step(m, k):
    # numpy.polyint: k of length 1 serves every one of the m integrations; tensorlib refused it for m > 1.
    p = np.array([3.0, -1.0, 2.0])
    np.testing.assert_allclose(tl.polyint(p, m, k).numpy(), np.polyint(p, m, k), rtol=1e-15)
    check_grads(lambda p, k: tl.polyint(p, m, k), (p, np.atleast_1d(np.asarray(k, dtype=float))), order=1)


def test_interp_refuses_a_decreasing_xp():
    # numpy.interp does not check xp and returns values that mean nothing for a decreasing one
    # (interp(1.5, [3, 2, 1, 0], [0, 1, 4, 9]) gives 9, not 2.5); tensorlib gave the same silently.
    xp, fp = np.array([3.0, 2.0, 1.0, 0.0]), np.array([0.0, 1.0, 4.0, 9.0])
    with pytest.raises(ValueError, match=r"interp: xp must be increasing, but xp\[1\] is below"):
        tl.interp(np.array([1.5]), xp, fp)
    sorted_result = tl.interp(np.array([1.5]), xp[::-1], fp[::-1]).numpy()
    np.testing.assert_allclose(sorted_result, np.interp([1.5], xp[::-1], fp[::-1]))
    # repeated knots are increasing (NumPy takes the right value at them); period= sorts xp itself
    np.testing.assert_array_equal(
        tl.interp(np.array([1.0, 1.5]), [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 5.0, 6.0]).numpy(),
        np.interp([1.0, 1.5], [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 5.0, 6.0]),
    )
    np.testing.assert_allclose(
        tl.interp(np.array([0.5, 2.5]), xp, fp, period=4.0).numpy(), np.interp([0.5, 2.5], xp, fp, period=4.0)
    )


def test_numpy_parameters_of_unique_and_can_cast():
    # NumPy 2.3's unique(sorted=) and can_cast(casting=) were refused as unexpected keywords.
    x = np.array([3.0, np.nan, 1.0, 3.0])
    for flag in (True, False):
        got = tl.unique(x, return_counts=True, sorted=flag)
        expected = np.unique(x, return_counts=True)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.numpy(), e)
    names = ["bool", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        for a in names:
            for b in names:
                assert tl.can_cast(a, b, casting=casting) == np.can_cast(a, b, casting=casting), (a, b, casting)
    assert tl.can_cast(tl.tensor([1.0], "float64"), "float32", casting="same_kind")
    with pytest.raises(ValueError, match="can_cast: casting must be one of"):
        tl.can_cast("float64", "float32", casting="safest")


def test_errors_name_the_function():
    # divmod of complex numbers raised NumPy's "ufunc 'floor_divide' not supported for the input types";
    # trim_zeros with a bad axis named neither the function nor the input.
    with pytest.raises(
        TypeError, match=r"divmod: complex numbers have no floor division \(x1 shape \(2,\) \(complex128\)"
    ):
        tl.divmod(np.ones(2) + 1j, np.ones(2))
    with pytest.raises(ValueError, match=r"trim_zeros \(filt shape \(3,\) \(float64\)\): axis"):
        tl.trim_zeros(np.ones(3), axis=3)
    q, r = tl.divmod(np.array([7.5, -7.5]), [2.0, 2.0])
    np.testing.assert_array_equal(q.numpy(), [3.0, -4.0])
    np.testing.assert_array_equal(r.numpy(), [1.5, 0.5])


def test_kaiser_refuses_a_complex_beta():
    # A complex beta was cast to float64, its imaginary part dropped: kaiser(3, 1 + 1j) gave kaiser(3, 1.0)
    # (numpy.kaiser raises, its i0 has no complex loop).
    for beta in (1 + 1j, np.array(1 + 1j), tl.tensor(1 + 1j), np.complex128(2.0)):
        with pytest.raises(TypeError, match="beta must be real"):
            tl.kaiser(3, beta)
    np.testing.assert_allclose(tl.kaiser(5, tl.tensor(2.5)).numpy(), np.kaiser(5, 2.5), rtol=1e-14)


def test_result_type_refuses_a_python_int_its_dtype_cannot_hold():
    # result_type(int32, 2**40) said int32 where int32 + 2**40 raises OverflowError (array_api_strict raises too).
    small = tl.tensor([1], "int32")
    with pytest.raises(OverflowError, match="result_type: the Python int 1099511627776 does not fit in int32"):
        tl.result_type(small, 2**40)
    with pytest.raises(OverflowError):
        small + 2**40
    with pytest.raises(OverflowError, match="does not fit in int64"):
        tl.result_type(2**70)
    assert tl.result_type(small, 2**31 - 1) == np.int32
    assert tl.result_type(small, 2.0**40) == np.float64
    assert tl.result_type(tl.tensor([1.0]), 2**70) == np.float32


def test_result_type_matches_array_api_strict():
    xp = pytest.importorskip("array_api_strict")
    names = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
    for a in names:
        for b in names:
            try:
                expected = str(xp.result_type(getattr(xp, a), getattr(xp, b))).replace("array_api_strict.", "")
            except TypeError:
                continue  # no promotion between the kinds in the standard; tensorlib follows NumPy there
            assert str(tl.result_type(a, b)) == expected, (a, b)
        for scalar in (True, 1, 1.5, 1j):
            try:
                expected = str(xp.result_type(getattr(xp, a), scalar)).replace("array_api_strict.", "")
            except TypeError:
                continue
            assert str(tl.result_type(tl.zeros((1,), dtype=a), scalar)) == expected, (a, scalar)
    with pytest.raises(OverflowError):
        xp.result_type(xp.asarray([1], dtype=xp.int32), 2**40)


def test_apply_along_axis_reads_python_results_next_to_arr():
    # func1d returning a Python float (or a list of them) gave a float32 result for a float64 arr: 0.1 came back
    # as 0.10000000149 (NumPy: float64, exact).
    x = np.array([[0.1, 0.2], [0.3, 0.4]])
    for func in (lambda v: float(np.asarray(v)[0]), lambda v: [float(np.asarray(v)[1]), 0.1]):
        got = tl.apply_along_axis(func, 1, x)
        expected = np.apply_along_axis(func, 1, x)
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(got.numpy(), expected)
    ints = tl.apply_along_axis(lambda v: 3, 0, np.array([[True, False]]))
    assert ints.dtype == np.int64 and ints.numpy().tolist() == [3, 3]


@pytest.mark.parametrize("assume_unique", [False, True])
def test_setxor1d_of_empty_arrays(assume_unique):
    # setxor1d([], []) raised "GatherV2: index 0 is out of bounds for axis 0 with size 0" (NumPy: []).
    for a, b in [(np.zeros(0), np.zeros(0)), (np.zeros(0), np.array([2.0, 1.0])), (np.array([1, 1]), np.zeros(0, int))]:
        expected = np.setxor1d(a, b, assume_unique=assume_unique)
        got = tl.setxor1d(a, b, assume_unique=assume_unique)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected)


def test_interp_cov_corrcoef_trace_with_unknown_lengths():
    # Under tl.function with TensorSpec([None]) inputs, interp (xp of unknown length), cov and corrcoef (an
    # unknown number of observations) crashed with "unsupported operand type(s) for -: 'NoneType' and 'int'".
    spec = tl.TensorSpec([None], "float64")
    interp = tl.function(lambda x, xp, fp: tl.interp(x, xp, fp)).get_graph(spec, spec, spec)
    x = np.array([-1.0, 0.25, 1.0, 1.5, 2.0, 3.0])
    for xp, fp in [(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0])), (np.array([0.5]), np.array([4.0]))]:
        np.testing.assert_allclose(interp(x, xp, fp).numpy(), np.interp(x, xp, fp), rtol=1e-15)
    cov = tl.function(lambda a, b: tl.cov(a, b)).get_graph(spec, spec)
    cov_biased = tl.function(lambda a, b: tl.cov(a, b, ddof=5)).get_graph(spec, spec)
    corrcoef = tl.function(lambda a, b: tl.corrcoef(a, b)).get_graph(spec, spec)
    rng = np.random.default_rng(7)
    for n in (3, 5, 8):
        a, b = rng.normal(size=n), rng.normal(size=n)
        np.testing.assert_allclose(cov(a, b).numpy(), np.cov(a, b), rtol=1e-13)
        np.testing.assert_allclose(corrcoef(a, b).numpy(), np.corrcoef(a, b), rtol=1e-13)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.cov(a, b, ddof=5)  # n <= ddof: NumPy's inf (and NaN) scale
        np.testing.assert_allclose(cov_biased(a, b).numpy(), expected, rtol=1e-13)


@pytest.mark.parametrize("axis", [2, -1])
def test_apply_along_axis_traces_an_unknown_axis_length(axis):
    # A slice function whose result's size follows the unknown axis length (r[1:], outer(r, r[:2])) failed to
    # trace: "reshape: shape must be known integers, got (2, None)".
    spec = tl.TensorSpec([2, 3, None], "float64")
    a = np.arange(24.0).reshape(2, 3, 4)
    for ours, numpy in [
        (lambda r: r[1:], lambda r: r[1:]),
        (lambda r: tl.outer(r, r[:2]), lambda r: np.outer(r, r[:2])),
        (tl.sum, np.sum),
    ]:
        graph = tl.function(lambda t: tl.apply_along_axis(ours, axis, t)).get_graph(spec)
        expected = np.apply_along_axis(numpy, axis, a)
        np.testing.assert_array_equal(graph(a).numpy(), expected)
        np.testing.assert_array_equal(tl.apply_along_axis(ours, axis, a).numpy(), expected)


def test_histogram_takes_numpys_argument_order():
    # tl.histogram took (a, bins, range, weights, density) (jax.numpy's order): NumPy code passing density
    # by position, histogram(a, 3, None, True), had True read as the weights.
    a = np.array([0.0, 1.0, 1.0, 2.5, 3.0])
    for args in [(3, None, True), (3, (0, 2), False), (2, None, True, np.arange(5.0))]:
        got = tl.histogram(a, *args)
        expected = np.histogram(a, *args)
        np.testing.assert_allclose(got[0].numpy(), expected[0], rtol=1e-15)
        np.testing.assert_array_equal(got[1].numpy(), expected[1])
    with pytest.raises(TypeError, match=r"histogram: density must be True or False, got ndarray; .* weights="):
        tl.histogram(a, 3, None, np.ones(5))  # jax.numpy's order


def test_histogram_refuses_bins_narrower_than_the_edges_dtype():
    # 2**62 and 2**62 + 1 are one float64: the equal edges made bins of zero width (counts [0, 2], a density of
    # inf); NumPy raises "Too many bins for data range".
    a = np.array([2**62, 2**62 + 1])
    with pytest.raises(ValueError):
        np.histogram(a, bins=2)
    with pytest.raises(ValueError, match=r"histogram: too many bins for the data range: cannot make 2 bins"):
        tl.histogram(a, bins=2)
    with pytest.raises(ValueError, match=r"histogram_bin_edges: too many bins"):
        tl.histogram_bin_edges(np.array([1.0, 1.0 + 2**-52]), bins=4)
    narrow = np.array([[1.0], [1.0 + 2**-52]])  # numpy.histogramdd does not check: its counts, as NumPy's
    np.testing.assert_array_equal(tl.histogramdd(narrow, bins=4)[0].numpy(), np.histogramdd(narrow, bins=4)[0])
    with pytest.raises(ValueError):
        np.histogram(a.astype(float), bins=1)  # equal values widened by 0.5: still one float64
    with pytest.raises(ValueError, match="histogram: too many bins"):
        tl.histogram(a.astype(float), bins=1)

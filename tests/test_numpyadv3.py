"""The NumPy surface tried as an adversary, third round: NumPy 2 itself is the reference.

Also ``clip`` with one bound None, and ``pad`` of bool arrays (NumPy stores each pad value: nonzero is True).

A function that has nothing to do to its input (``atleast_1d`` of a vector, ``diff(a, n=0)``, ``asarray`` of a
Tensor, a one-block ``block``) used to return that input object; for a Variable that result was the Variable,
so a later ``assign`` changed a returned value (and an ``assign`` on the result changed the caller's Variable).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl

# Each: (name, call on the Variable, NumPy's answer for the value the Variable had).
_NOTHING_TO_DO = [
    ("asarray", lambda v: tl.asarray(v), lambda a: np.asarray(a)),
    ("asarray copy=True", lambda v: tl.asarray(v, copy=True), lambda a: np.asarray(a, copy=True)),
    ("atleast_1d", lambda v: tl.atleast_1d(v), np.atleast_1d),
    ("atleast_2d", lambda v: tl.atleast_2d(v), np.atleast_2d),
    ("atleast_3d", lambda v: tl.atleast_3d(v), np.atleast_3d),
    ("atleast_1d of two", lambda v: tl.atleast_1d(v, v)[1], lambda a: np.atleast_1d(a, a)[1]),
    ("block", lambda v: tl.block(v), np.block),
    ("block of one", lambda v: tl.block([v]), lambda a: np.block([a])),
    ("broadcast_arrays", lambda v: tl.broadcast_arrays(v)[0], lambda a: np.broadcast_arrays(a)[0]),
    ("broadcast_arrays of two", lambda v: tl.broadcast_arrays(v, 1.0)[0], lambda a: np.broadcast_arrays(a, 1.0)[0]),
    ("diff n=0", lambda v: tl.diff(v, n=0), lambda a: np.diff(a, n=0)),
    ("rollaxis in place", lambda v: tl.rollaxis(v, 0), lambda a: np.rollaxis(a, 0)),
    (
        "polyder m=0",
        lambda v: tl.polyder(v[0] if v.ndim > 1 else v, 0),
        lambda a: np.polyder(a[0] if a.ndim > 1 else a, 0),
    ),
    (
        "polyint m=0",
        lambda v: tl.polyint(v[0] if v.ndim > 1 else v, 0),
        lambda a: np.polyint(a[0] if a.ndim > 1 else a, 0),
    ),
    ("nn.identity", lambda v: tl.nn.identity(v), lambda a: a),
]


def _values(name):
    """Polynomials are vectors; the other functions also get a matrix and a 3-d value."""
    vector = np.arange(1.0, 5.0)
    return [vector] if name.startswith("poly") else [vector, np.arange(6.0).reshape(2, 3), np.ones((2, 1, 3))]


@pytest.mark.parametrize(
    "name, ours, numpys, value",
    [(*case, value) for case in _NOTHING_TO_DO for value in _values(case[0])],
    ids=[f"{case[0]}-{value.ndim}d" for case in _NOTHING_TO_DO for value in _values(case[0])],
)
def test_a_variable_passed_through_unchanged_gives_its_value_not_itself(name, ours, numpys, value):
    v = tl.Variable(value.copy())
    result = ours(v)
    want = numpys(value.copy())
    assert result is not v and not isinstance(result, tl.Variable), name
    v.assign(np.full(value.shape, -7.0))
    got = np.asarray(result)
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=f"{name}: the result followed the Variable's assign")


@pytest.mark.parametrize("name, ours, numpys", _NOTHING_TO_DO, ids=[c[0] for c in _NOTHING_TO_DO])
def test_the_value_of_a_variable_passed_through_keeps_its_gradient(name, ours, numpys):
    value = _values(name)[-1]
    v = tl.Variable(value.copy())
    with tl.GradientTape() as tape:
        y = tl.sum(ours(v) * 2.0)
    # each function reads every element once, unchanged: d/dv of 2 * sum(f(v)) is 2 everywhere
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, v)), np.full(value.shape, 2.0), err_msg=name)


# clip with one bound None: the missing bound was the extreme of x's dtype, not of the result's dtype, so a
# bound of a higher kind (a float next to ints, an int next to bools) was cut back to x's range.
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.float16, np.float32])
@pytest.mark.parametrize(
    "lo, hi", [(1e10, None), (None, -1e10), (2.5, None), (None, -2.5), (2, None), (None, 0), (np.float64(2.5), None)]
)
def test_clip_with_one_bound_matches_numpy(dtype, lo, hi):
    x = (np.arange(6) - 2).astype(dtype)
    want = np.clip(x, lo, hi)
    got = tl.clip(x, lo, hi)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)
    traced = tl.function(lambda t: tl.clip(t, lo, hi))(x)
    np.testing.assert_array_equal(traced.numpy(), want)


def test_clip_with_one_bound_keeps_the_gradient_of_x_inside():
    x = np.array([-2.0, 0.5, 3.0])
    for lo, hi, inside in [(0.0, None, [0.0, 1.0, 1.0]), (None, 1.0, [1.0, 1.0, 0.0])]:
        grad = tl.grad(lambda t, lo=lo, hi=hi: tl.sum(tl.clip(t, lo, hi)))(x)
        np.testing.assert_array_equal(grad.numpy(), inside)


# np.pad of a bool array stores each computed pad value into a bool array: nonzero is True.  tl.pad rounded
# (mean), floored (linear_ramp) or kept the int64 arithmetic (reflect_type='odd', whose result became int64).
@pytest.mark.parametrize(
    "mode, kwargs",
    [
        ("mean", {}),
        ("mean", {"stat_length": 2}),
        ("median", {}),
        ("linear_ramp", {}),
        ("linear_ramp", {"end_values": 5}),
        ("reflect", {"reflect_type": "odd"}),
        ("symmetric", {"reflect_type": "odd"}),
    ],
)
@pytest.mark.parametrize("x", [np.array([True, False, False]), np.array([[False, True], [False, False]])])
def test_pad_of_bools_stores_as_numpy(mode, kwargs, x):
    want = np.pad(x, 4, mode=mode, **kwargs)
    got = tl.pad(x, 4, mode=mode, **kwargs)
    assert got.dtype == want.dtype == np.bool_
    np.testing.assert_array_equal(got.numpy(), want)


_PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum", "minimum", "mean", "median"]


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple),
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int32, np.bool_, np.complex128]),
    mode=st.sampled_from(_PAD_MODES),
    odd=st.booleans(),
    data=st.data(),
)
def test_pad_matches_numpy(shape, dtype, mode, odd, data):
    seed = data.draw(st.integers(0, 2**16))
    values = np.random.default_rng(seed).standard_normal(shape) * 4
    x = (values > 0) if dtype is np.bool_ else values.astype(dtype)
    widths = data.draw(
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=len(shape), max_size=len(shape))
    )
    kwargs = {"reflect_type": "odd"} if odd and mode in ("reflect", "symmetric") else {}
    if mode in ("maximum", "minimum", "mean", "median") and odd:
        kwargs["stat_length"] = data.draw(st.integers(1, 3))
    want = np.pad(x, widths, mode=mode, **kwargs)
    got = tl.pad(x, widths, mode=mode, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-12)


# histogram's range made of NumPy scalars (range=(x.min(), x.max()) of a float64 array) gives float64 edges
# for float32 data, as NumPy's result_type does; tl.histogram read the ends as Python floats (float32 edges),
# so float32(0.1), past the float64 0.1, was counted.
@pytest.mark.parametrize(
    "ends", [(np.float64(0.0), np.float64(0.1)), (np.float32(0.0), np.float32(0.1)), (0.0, 0.1), np.array([0.0, 0.1])]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_histogram_range_of_numpy_scalars_sets_the_edges_dtype(ends, dtype):
    a = np.array([0.05, 0.1, 0.0, 0.07], dtype=dtype)
    want_hist, want_edges = np.histogram(a, bins=2, range=ends)
    hist, edges = tl.histogram(a, bins=2, range=ends)
    assert edges.dtype == want_edges.dtype, (edges.dtype, want_edges.dtype)
    np.testing.assert_array_equal(hist.numpy(), want_hist)
    np.testing.assert_array_equal(edges.numpy(), want_edges)
    np.testing.assert_array_equal(tl.histogram_bin_edges(a, bins=2, range=ends).numpy(), want_edges)


# ---------------------------------------------------------------- the differential sweep against NumPy
_REDUCTIONS = [
    "sum", "prod", "mean", "max", "min", "all", "any", "std", "var", "ptp", "nansum", "nanprod", "nanmean",
    "nanmax", "nanmin", "nanstd", "nanvar", "median", "nanmedian", "count_nonzero",
]  # fmt: skip
_SCANS = ["cumsum", "cumprod", "nancumsum", "nancumprod", "argmax", "argmin", "sort", "argsort"]
_UNARY = [
    "abs", "negative", "sign", "exp", "expm1", "log1p", "sqrt", "cbrt", "square", "sin", "cos", "tanh", "arctan",
    "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite", "signbit", "reciprocal", "exp2", "deg2rad",
    "fabs", "spacing", "sinc", "i0", "nan_to_num", "logical_not", "flatnonzero", "ravel",
]  # fmt: skip
_DTYPES = [np.bool_, np.int32, np.int64, np.float16, np.float32, np.float64, np.complex128]


def _draw_array(data, dtype):
    shape = data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    values = rng.standard_normal(shape) * 3
    if dtype is np.bool_:
        x = values > 0
    elif dtype is np.complex128:
        x = values + 1j * rng.standard_normal(shape)
    else:
        x = (np.round(values) if np.dtype(dtype).kind == "i" else values).astype(dtype)
        if x.dtype.kind == "f" and x.size and data.draw(st.booleans(), label="specials"):
            x.flat[rng.integers(x.size)] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf, -0.0]))
    layout = data.draw(st.sampled_from(["C", "F", "reversed"]), label="layout")
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == "reversed" and x.ndim:
        x = x[..., ::-1]
    return x


def _numpys_dtype_in_tensorlib(want, x):
    """DESIGN's rules where NumPy's differ: float-valued results of bool input are float64 (NumPy: float16); the
    small integers NumPy gives bools (int8, uint8) are tensorlib's smallest integer, int32."""
    if x.dtype == np.bool_ and want.dtype == np.float16:
        return np.dtype(np.float64)
    return np.dtype(np.int32) if want.dtype in (np.int8, np.uint8, np.int16, np.uint16) else want.dtype


def _agree(got, want, x, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == _numpys_dtype_in_tensorlib(want, x), (what, got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        tol = 2e-3 if np.float16 in (x.dtype, want.dtype) else 1e-5 if np.float32 in (x.dtype, want.dtype) else 1e-9
        np.testing.assert_allclose(got.astype(want.dtype), want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _numpy_or_error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except (ValueError, TypeError, IndexError, ZeroDivisionError) as e:
            return None, e


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_REDUCTIONS + _SCANS), dtype=st.sampled_from(_DTYPES), data=st.data())
def test_reductions_and_scans_match_numpy(name, dtype, data):
    x = _draw_array(data, dtype)
    axes = [None, *range(-x.ndim, x.ndim)] + ([(0, x.ndim - 1)] if x.ndim >= 2 and name in _REDUCTIONS else [])
    kwargs = {"axis": data.draw(st.sampled_from(axes), label="axis")}
    if name in _REDUCTIONS and name != "count_nonzero":
        kwargs["keepdims"] = data.draw(st.booleans(), label="keepdims")
    want, error = _numpy_or_error(lambda: getattr(np, name)(x, **kwargs))
    if error is not None:  # NumPy refuses (an empty max, a bool subtraction, its median of some empty shapes)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = getattr(tl, name)(x, **kwargs)
    _agree(got, want, x, f"{name}({x.dtype}{x.shape}, {kwargs})")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_UNARY), dtype=st.sampled_from(_DTYPES), data=st.data())
def test_elementwise_functions_match_numpy(name, dtype, data):
    x = _draw_array(data, dtype)
    want, error = _numpy_or_error(lambda: getattr(np, name)(x))
    if error is not None:  # NumPy refuses (a bool sign, a complex floor): tensorlib refuses too, or answers
        return
    if name == "reciprocal" and dtype is np.bool_:  # NumPy's int8 1 // x: tensorlib refuses it, by name
        with pytest.raises(TypeError, match="reciprocal"):
            tl.reciprocal(x)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = getattr(tl, name)(x)
    _agree(got, want, x, f"{name}({x.dtype}{x.shape})")


# digitize tested the bins' order by subtracting neighbours: bool bins failed with NumPy's message about boolean
# subtraction, and bins ending in inf, inf (inf - inf is NaN) were refused as unordered; NumPy accepts both.
@pytest.mark.parametrize(
    "x, bins",
    [
        (np.array([True, False, True]), np.array([False, True])),
        (np.array([True, False]), np.array([True, False])),
        (np.array([1.0, np.inf, -np.inf, 0.0]), np.array([-np.inf, 0.0, np.inf, np.inf])),
        (np.array([1.0, np.inf, -np.inf]), np.array([np.inf, np.inf, -np.inf, -np.inf])),
    ],
)
@pytest.mark.parametrize("right", [False, True])
def test_digitize_orders_bins_by_comparison_as_numpy(x, bins, right):
    want = np.digitize(x, bins, right=right)
    got = tl.digitize(x, bins, right=right)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), want)


def test_digitize_still_refuses_nan_bins_by_name():
    with pytest.raises(ValueError, match="Digitize: bins must be monotonically"):
        tl.digitize(np.array([1.0]), np.array([0.0, np.nan, 2.0]))

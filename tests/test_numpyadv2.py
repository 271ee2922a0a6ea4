"""Differential attack on the NumPy surface (the tl.* NumPy names) against NumPy 2 itself: hypothesis-drawn
shapes (0-size and 0-d included), dtypes and keyword arguments (order=, mean=, correction=, dtype=, weights=),
values and result dtypes compared with NumPy's, gradients against float64 central differences.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import check_grads


def _same(got, want):
    """``got`` (a Tensor) has NumPy's result ``want``: its dtype, shape and values."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True)


_shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


@given(shape=_shapes, data=st.data())
def test_reshape_and_ravel_take_numpys_order(shape, data):
    size = int(np.prod(shape))
    x = np.arange(size, dtype=np.float64).reshape(shape)
    order = data.draw(st.sampled_from("CFA"))
    new = data.draw(st.sampled_from([(size,), (1, size), (size, 1, 1), (-1,)] + ([(2, -1)] if size % 2 == 0 else [])))
    _same(tl.reshape(tl.tensor(x), new, order=order), np.reshape(x, new, order=order))
    _same(tl.ravel(tl.tensor(x), order=order), np.ravel(x, order=order))


def test_reshape_order_f_gradient_and_trace():
    x = np.arange(24.0).reshape(2, 3, 4)
    weights = np.linspace(-1.0, 1.0, 24).reshape(4, 6)
    grad = tl.grad(lambda t: tl.sum(tl.reshape(t, (4, 6), order="F") * weights))(tl.tensor(x))
    np.testing.assert_array_equal(grad.numpy(), np.reshape(weights, (2, 3, 4), order="F"))
    check_grads(lambda t: tl.reshape(t, (-1, 2), order="F") ** 2, [x], order=2)
    traced = tl.function(lambda t: tl.ravel(t, order="F"))
    _same(traced(tl.tensor(x)), np.ravel(x, order="F"))
    with pytest.raises(ValueError, match=r"reshape: order must be one of 'C', 'F', 'A', got 'X'"):
        tl.reshape(tl.tensor(x), (4, 6), order="X")


_VARIANCES = [(tl.var, np.var), (tl.std, np.std), (tl.nanvar, np.nanvar), (tl.nanstd, np.nanstd)]


@pytest.mark.parametrize("ours, numpys", _VARIANCES, ids=lambda f: getattr(f, "__name__", ""))
@given(data=st.data())
def test_variances_take_numpy2s_mean_and_correction(ours, numpys, data):
    dtype = data.draw(st.sampled_from(["float16", "float32", "float64", "int64", "complex64", "complex128"]))
    x = np.random.default_rng(data.draw(st.integers(0, 99))).normal(size=(3, 4)) * 3
    x = (x + 1j * x[::-1] if dtype.startswith("complex") else x).astype(dtype)
    if dtype.startswith(("float", "complex")) and data.draw(st.booleans()):
        x[0, 1] = np.nan
    axis = data.draw(st.sampled_from([None, 0, 1, (0, 1)]))
    where = data.draw(st.sampled_from([True, np.array([True, False, True, True])]))
    mean_dtype = data.draw(st.sampled_from([dtype, "float64"])) if dtype != "int64" else "float64"
    numpy_mean = np.nanmean if numpys.__name__.startswith("nan") else np.mean
    mean = numpy_mean(x, axis=axis, keepdims=True, where=where).astype(mean_dtype)
    kwargs = {"axis": axis, "keepdims": data.draw(st.booleans()), "where": where}
    kwargs.update(data.draw(st.sampled_from([{"correction": 1}, {"correction": 0.5}, {"ddof": 1}, {}])))
    got = ours(tl.tensor(x), mean=tl.tensor(mean), **kwargs)
    want = numpys(x, mean=mean, **kwargs)
    assert np.asarray(got).dtype == want.dtype
    tol = 2e-3 if "16" in dtype else 1e-5
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol, equal_nan=True)


def test_variance_mean_gets_its_gradient_and_bad_arguments_are_refused():
    x = np.array([[1.0, 4.0, 2.0], [0.5, -1.0, 3.0]])
    mean = np.array([[2.0], [1.0]])
    check_grads(lambda a, m: tl.var(a, axis=1, mean=m, correction=1), [x, mean], order=2)
    check_grads(lambda a, m: tl.std(a, axis=1, mean=m), [x, mean], order=1)
    # the gradient of sum((x - m)^2) / (n - 1) in m, by hand
    got = tl.grad(lambda m: tl.sum(tl.var(tl.tensor(x), axis=1, mean=m, correction=1)))(tl.tensor(mean))
    np.testing.assert_allclose(got.numpy(), -2.0 * (x - mean).sum(axis=1, keepdims=True) / 2.0)
    with pytest.raises(ValueError, match=r"Var: ddof and correction can't both be given, got ddof=1, correction=1"):
        tl.var(tl.tensor(x), ddof=1, correction=1)
    with pytest.raises(
        ValueError, match=r"var: mean= must broadcast .* mean shape \(2,\) float64 for input shape \(2, 3\)"
    ):
        tl.var(tl.tensor(x), axis=1, mean=tl.tensor(np.ones(2)))
    np.testing.assert_allclose(np.var(tl.tensor(x), axis=0, correction=1).numpy(), np.var(x, axis=0, correction=1))


_DIVISIONS = [(tl.floor_divide, np.floor_divide), (tl.remainder, np.remainder), (tl.fmod, np.fmod)]


@pytest.mark.parametrize("ours, numpys", _DIVISIONS, ids=lambda f: getattr(f, "__name__", ""))
@given(data=st.data())
def test_integer_division_matches_numpy_also_by_zero(ours, numpys, data):
    # An integer divisor of 0 raised ZeroDivisionError; NumPy 2 gives 0 and warns (signs as NumPy's).
    dtype = data.draw(st.sampled_from(["int32", "int64"]))
    values = st.integers(-9, 9) | st.sampled_from([int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)])
    x = np.array(data.draw(st.lists(values, min_size=1, max_size=6)), dtype)
    y = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=len(x), max_size=len(x))), dtype)
    with np.errstate(all="ignore"):
        want = numpys(x, y)
    for run in (ours, tl.function(ours)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = run(tl.tensor(x), tl.tensor(y))
        _same(got, want)
        by_zero = [w for w in caught if "divide by zero" in str(w.message) and w.category is RuntimeWarning]
        assert bool(by_zero) == bool((y == 0).any())


def test_integer_division_by_zero_warns_as_numpy_on_the_generic_kernel():
    from tensorlib.ops.elementwise import _fmod_kernel, _on_ints

    xp = np  # NumPy 2 is an Array API namespace: the kernel that CuPy and array_api_strict run
    x, y = np.array([7, -7, 5], np.int64), np.array([2, 0, -3], np.int64)
    for kernel, numpys in [(_on_ints("floor_divide"), np.floor_divide), (_on_ints("remainder"), np.remainder)]:
        with pytest.warns(RuntimeWarning, match=f"divide by zero encountered in {numpys.__name__}"):
            got = kernel(xp, x, y)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(got, numpys(x, y))
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in fmod"):
        np.testing.assert_array_equal(_fmod_kernel(xp, x, y), [1, 0, 2])


@given(data=st.data())
def test_weighted_inverted_cdf_quantile_matches_numpy(data):
    # NumPy 2's weights= (method='inverted_cdf') was refused: quantile() got an unexpected keyword.
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=3)))
    dtype = data.draw(st.sampled_from(["float64", "float32", "int64"]))
    a = rng.integers(-3, 4, size=shape).astype(dtype)
    if dtype != "int64" and a.size and data.draw(st.booleans()):
        a.flat[0] = np.nan
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    weights = rng.integers(0, 3, size=shape).astype(float)
    if axis is not None and data.draw(st.booleans()):
        weights = rng.integers(1, 3, size=shape[axis]).astype(float)  # 1-d along the axis
    q = data.draw(st.sampled_from([0.0, 0.3, 0.5, 1.0, [0.1, 0.9]]))
    _weighted_quantiles_match_numpy("", a, q, axis, data.draw(st.booleans()), weights, weights)


def _weighted_quantiles_match_numpy(prefix, a, q, axis, keepdims, weights, ours):
    """tl.<prefix>quantile and tl.<prefix>percentile with method='inverted_cdf' and ``ours`` as weights against
    NumPy's functions of the same names given ``weights`` (equal to ``ours``, or ``ours`` broadcast to a's shape);
    where NumPy refuses (a slice's weights all zero), tensorlib raises its error naming the function."""
    kw = {"axis": axis, "keepdims": keepdims, "method": "inverted_cdf"}
    quantile, percentile = (getattr(np, prefix + name) for name in ("quantile", "percentile"))
    try:
        want = quantile(a, q, weights=weights, **kw)
    except ValueError:
        with pytest.raises(ValueError, match=rf"{prefix}quantile: weights included NaN, inf or were all zero"):
            getattr(tl, prefix + "quantile")(tl.tensor(a), q, weights=tl.tensor(ours), **kw)
        return
    _same(getattr(tl, prefix + "quantile")(tl.tensor(a), q, weights=tl.tensor(ours), **kw), want)
    percent = np.asarray(q) * 100
    want = percentile(a, percent, weights=weights, **kw)
    _same(getattr(tl, prefix + "percentile")(tl.tensor(a), percent, weights=ours, **kw), want)


def test_weighted_quantile_gradient_tracing_and_errors():
    a = np.array([[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0]])
    w = np.array([1.0, 0.0, 2.0, 3.0])
    picked = tl.grad(lambda x: tl.sum(tl.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=w)))(tl.tensor(a))
    np.testing.assert_array_equal(picked.numpy(), [[0, 0, 0, 1], [1, 0, 0, 0]])  # 1.5 and 5.0 are chosen
    check_grads(lambda x: tl.quantile(x, [0.3, 0.8], axis=1, method="inverted_cdf", weights=w), [a], order=2)
    traced = tl.function(lambda x, ww: tl.quantile(x, [0.3, 0.8], axis=1, method="inverted_cdf", weights=ww))
    _same(traced(tl.tensor(a), tl.tensor(w)), np.quantile(a, [0.3, 0.8], axis=1, method="inverted_cdf", weights=w))
    _same(
        np.quantile(tl.tensor(a), 0.3, axis=0, method="inverted_cdf", weights=a),
        np.quantile(a, 0.3, axis=0, method="inverted_cdf", weights=a),
    )
    t = tl.tensor(a)
    with pytest.raises(ValueError, match=r"quantile: only method 'inverted_cdf' supports weights, got method='linear'"):
        tl.quantile(t, 0.5, axis=1, weights=w)
    with pytest.raises(TypeError, match=r"quantile: weights of another shape than a need one axis \(a shape \(2, 4\)"):
        tl.quantile(t, 0.5, method="inverted_cdf", weights=w)
    with pytest.raises(ValueError, match=r"quantile: weights must be non-negative"):
        tl.quantile(t, 0.5, axis=1, method="inverted_cdf", weights=-w)
    with pytest.raises(ValueError, match=r"quantile: weights must be of a's shape or 1-d of the length of axis 1"):
        tl.quantile(t, 0.5, axis=1, method="inverted_cdf", weights=np.ones(3))


_DTYPES = ["bool", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]


@given(
    first=st.sampled_from(_DTYPES),
    second=st.sampled_from(_DTYPES),
    dtype=st.sampled_from(_DTYPES[1:]),
    casting=st.sampled_from(["safe", "same_kind", "unsafe"]),
)
def test_einsum_dtype_and_casting_are_numpys(first, second, dtype, casting):
    # tl.einsum had no dtype=; np.einsum(t, ..., dtype=) on a Tensor was refused.
    a = (np.arange(6).reshape(2, 3) % 3).astype(first)
    b = (np.arange(3) + 1).astype(second)
    try:
        want = np.einsum("ij,j->i", a, b, dtype=dtype, casting=casting)
    except TypeError:
        with pytest.raises(
            TypeError, match=rf"Einsum: cannot cast an input of dtype .* to dtype={dtype} with casting rule"
        ):
            tl.einsum("ij,j->i", tl.tensor(a), tl.tensor(b), dtype=dtype, casting=casting)
        return
    _same(tl.einsum("ij,j->i", tl.tensor(a), tl.tensor(b), dtype=dtype, casting=casting), want)
    _same(np.einsum("ij,j->i", tl.tensor(a), b, dtype=dtype, casting=casting), want)


def test_einsum_dtype_keeps_the_gradient():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    grad = tl.grad(lambda x: tl.sum(tl.einsum("ij,j->i", x, np.arange(3), dtype="float64")))(tl.tensor(a))
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad.numpy(), np.tile(np.arange(3.0), (2, 1)))
    check_grads(lambda x: tl.einsum("ij,ij->", x, x, dtype="float64"), [a.astype(np.float64)], order=2)


@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple), data=st.data())
def test_take_defaults_to_numpys_flattened_axis(shape, data):
    # tl.take(m, [1, 5]) on a 2-d m took rows (TensorFlow's gather default, axis 0) where np.take takes
    # elements of the flattened m.
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5
    size = x.size
    indices = np.array(data.draw(st.lists(st.integers(-size, size - 1), max_size=4)), dtype=np.int64)
    mode = data.draw(st.sampled_from(["raise", "wrap", "clip"]))
    if mode != "raise":
        indices = indices * 3
    _same(tl.take(tl.tensor(x), tl.tensor(indices), mode=mode), np.take(x, indices, mode=mode))
    if x.ndim:
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        rows = np.array([0, -1, x.shape[axis] - 1], dtype=np.int64)
        _same(tl.take(tl.tensor(x), rows, axis=axis), np.take(x, rows, axis=axis))


def test_take_default_gradient_and_trace():
    m = np.arange(12.0).reshape(3, 4)
    grad = tl.grad(lambda t: tl.sum(tl.take(t, [1, 5, 5])))(tl.tensor(m))
    want = np.zeros(12)
    np.add.at(want, [1, 5, 5], 1.0)
    np.testing.assert_array_equal(grad.numpy(), want.reshape(3, 4))
    _same(tl.function(lambda t: tl.take(t, np.array([11, 0])))(tl.tensor(m)), np.take(m, [11, 0]))


@given(data=st.data())
def test_weighted_nanquantile_matches_numpy(data):
    # np.nanquantile's weights= was refused too.  (NumPy 2.4 raises IndexError for 1-d weights along an axis of
    # a 2-d a, so the reference gets them broadcast to a's shape, which NumPy documents as their meaning.)
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=3)))
    a = rng.integers(-3, 4, size=shape).astype(data.draw(st.sampled_from(["float64", "float32", "float16"])))
    if a.size:
        a.flat[rng.integers(a.size, size=2)] = np.nan
    axis = data.draw(st.sampled_from([None] + list(range(len(shape)))))
    weights = rng.integers(0, 3, size=shape).astype(float)
    ours = weights
    if axis is not None and data.draw(st.booleans()):
        ours = rng.integers(1, 3, size=shape[axis]).astype(float)
        weights = np.broadcast_to(np.expand_dims(ours, tuple(i for i in range(len(shape)) if i != axis)), shape)
    q = data.draw(st.sampled_from([0.0, 0.4, 1.0, [0.2, 0.7]]))
    _weighted_quantiles_match_numpy("nan", a, q, axis, data.draw(st.booleans()), weights, ours)


def test_weighted_nanquantile_gradient_skips_nans():
    a = np.array([[3.0, np.nan, 4.0, 1.5], [np.nan, np.nan, np.nan, np.nan], [5.0, 9.0, 2.0, 6.0]])
    w = np.array([1.0, 5.0, 2.0, 3.0])
    want = np.nanquantile(a, 0.5, axis=1, method="inverted_cdf", weights=np.broadcast_to(w, a.shape))
    got = tl.nanquantile(tl.tensor(a), 0.5, axis=1, method="inverted_cdf", weights=w)
    _same(got, want)  # [1.5, nan, 6.0]: the NaN's weight 5 does not count, a slice of NaNs only is NaN
    grad = tl.grad(lambda x: tl.nansum(tl.nanquantile(x, 0.5, axis=1, method="inverted_cdf", weights=w)))(tl.tensor(a))
    np.testing.assert_array_equal(grad.numpy(), [[0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 1]])


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize(
    "shape, kwargs", [((0,), {}), ((0, 3), {"axis": 0}), ((0, 3), {"axis": 1}), ((2, 0), {"keepdims": True})]
)
def test_nan_quantiles_of_an_empty_integer_array_are_numpys_float64_nans(dtype, shape, kwargs):
    # tl.nanmedian(int64[]) raised 'quantile: cannot take a quantile of an empty slice'; NumPy warns and gives NaN.
    a = np.zeros(shape, dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same(tl.nanmedian(tl.tensor(a), **kwargs), np.nanmedian(a, **kwargs))
        _same(tl.nanpercentile(tl.tensor(a), 30, **kwargs), np.nanpercentile(a, 30, **kwargs))
        _same(tl.nanquantile(tl.tensor(a), 0.3, **kwargs), np.nanquantile(a, 0.3, **kwargs))

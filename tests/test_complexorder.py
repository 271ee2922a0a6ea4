"""Complex numbers ordered as NumPy 2 orders them: real part first, then imaginary, NaNs as NumPy.

Attacks the ops that refused complex input while NumPy accepts it (nanmax/nanmin/nanargmax/nanargmin,
cummax/cummin, searchsorted, top_k, median/nanmedian) and checks the ones NumPy refuses keep one clear
TypeError (percentile, quantile, digitize).  References: NumPy 2 (values and dtypes, eager and traced),
float64 central differences on the real and imaginary parts for gradients (dL/dx - i dL/dy, as
docs/complex.md), and JAX where installed.
"""

import warnings

import numpy as np
import pytest

import tensorlib as tl

NAN = np.nan


def _complex(rng, shape, dtype=np.complex128, nans=0, ties=True):
    """Random complex numbers, with repeated real parts (so the imaginary part decides) if ``ties``, and
    ``nans`` NaNs."""
    real = rng.integers(-2, 3, shape) if ties else rng.normal(size=shape)
    z = (real + 1j * rng.normal(size=shape)).astype(dtype)
    flat = z.reshape(-1)
    for i in rng.choice(flat.size, nans, replace=False):
        flat[i] = rng.choice([complex(NAN, 1), complex(1, NAN), complex(NAN, NAN)])
    return z


def _traced(f, *args):
    return tl.function(f)(*args)


def _numeric_grad(f, z, eps=1e-6):
    """dL/dx - i dL/dy of the real scalar f at z, by central differences."""
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        for step, weight in ((eps, 1.0), (1j * eps, -1j)):
            up, down = z.copy(), z.copy()
            up[i] += step
            down[i] -= step
            g[i] += weight * (f(up) - f(down)) / (2 * eps)
    return g


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ nanmax, nanmin, nanargmax, nanargmin
@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanargmax", "nanargmin"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_nan_extrema_match_numpy(name, dtype, axis):
    rng = np.random.default_rng(0)
    z = _complex(rng, (4, 5), dtype, nans=5)
    if name.startswith("nanarg") and isinstance(axis, tuple):
        axis = None
    want = getattr(np, name)(z, axis=axis)
    _same(getattr(tl, name)(z, axis=axis).numpy(), want)
    _same(_traced(lambda t: getattr(tl, name)(t, axis=axis), z).numpy(), want)


def test_nanmax_of_nan_only_slices_is_numpys_first_nan():
    z = np.array([[complex(1, NAN), complex(NAN, 2)], [3 + 0j, complex(NAN, 0)]])
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = np.nanmax(z, axis=1)  # [1+nanj, 3]
    got = tl.nanmax(z, axis=1).numpy()
    np.testing.assert_array_equal(got.real, want.real)
    np.testing.assert_array_equal(got.imag, want.imag)
    with pytest.raises(ValueError, match="All-NaN slice"):
        tl.nanargmin(z, axis=1)


def test_nanmax_of_minus_infinite_real_parts_skips_the_nans():
    # -inf-1j is the largest non-NaN element: nanmax gives it (NumPy too) and nanargmax its index
    # (NumPy's nanargmax fills NaNs with -inf+0j and returns the NaN's index 1 here).
    z = np.array([complex(-np.inf, -1), complex(NAN, 0), complex(-np.inf, -2)])
    assert tl.nanmax(z).numpy() == np.nanmax(z) == complex(-np.inf, -1)
    assert tl.nanargmax(z).numpy() == 0
    assert tl.nanargmin(z).numpy() == np.nanargmin(z) == 2


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nan_extrema_gradient_goes_to_the_selected_element(name):
    rng = np.random.default_rng(1)
    z = _complex(rng, (3, 4), nans=3, ties=False)
    w = rng.normal(size=3) + 1j * rng.normal(size=3)

    def loss(x):
        return tl.sum(tl.real(getattr(tl, name)(x, axis=1) * w))

    want = _numeric_grad(lambda x: np.sum((getattr(np, name)(x, axis=1) * w).real), z)
    got = tl.grad(loss)(z).numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(z).numpy(), want, atol=1e-6)
    assert np.count_nonzero(got) == 3  # one element per row; none at a NaN


# ------------------------------------------------------------------ median, nanmedian (quantiles refuse)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_and_nanmedian_match_numpy(dtype, axis, keepdims):
    rng = np.random.default_rng(2)
    z = _complex(rng, (4, 6), dtype)
    with_nans = z.copy()
    with_nans[1, 2], with_nans[0, :] = complex(NAN, 1), NAN
    for name, x in (("median", z), ("nanmedian", with_nans), ("median", with_nans)):
        with warnings.catch_warnings():  # NumPy warns for the slice of NaNs only
            warnings.simplefilter("ignore", RuntimeWarning)
            want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        for got in (
            getattr(tl, name)(x, axis=axis, keepdims=keepdims),
            _traced(lambda t: getattr(tl, name)(t, axis=axis, keepdims=keepdims), x),
        ):
            got = got.numpy()
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_median_of_empty_complex_is_numpys_nan():
    for name in ("median", "nanmedian"):
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
            want = getattr(np, name)(np.zeros((0,), np.complex64))
        got = getattr(tl, name)(np.zeros((0,), np.complex64)).numpy()
        assert got.dtype == want.dtype and np.isnan(got.real) and np.isnan(got.imag) and np.isnan(want.imag)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_gradient_goes_to_the_middle_elements(name):
    rng = np.random.default_rng(3)
    z = _complex(rng, (3, 4), ties=False)
    if name == "nanmedian":
        z[0, 1] = complex(NAN, 2)
    w = rng.normal(size=3) + 1j * rng.normal(size=3)

    def loss(x):
        return tl.sum(tl.real(getattr(tl, name)(x, axis=1) * w))

    want = _numeric_grad(lambda x: np.sum((getattr(np, name)(x, axis=1) * w).real), z)
    np.testing.assert_allclose(tl.grad(loss)(z).numpy(), want, atol=1e-6)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(z).numpy(), want, atol=1e-6)


@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_quantiles_of_complex_numbers_are_refused_as_numpy_does(name):
    z = np.array([1 + 1j, 2.0, 0.5j])
    with pytest.raises(TypeError, match="real numbers"):
        getattr(np, name)(z, 0.5)
    with pytest.raises(TypeError, match=rf"^{name}: a must be real, got complex128 \(shape \(3,\)\)"):
        getattr(tl, name)(z, 0.5)


# ------------------------------------------------------------------ cummax, cummin
@pytest.mark.parametrize("name, ufunc", [("cummax", np.maximum), ("cummin", np.minimum)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cummax_cummin_match_numpys_accumulate(name, ufunc, dtype, axis):
    rng = np.random.default_rng(4)
    z = _complex(rng, (4, 5), dtype, nans=2)
    want = ufunc.accumulate(z.reshape(-1) if axis is None else z, axis=0 if axis is None else axis)
    _same(getattr(tl, name)(z, axis=axis).numpy(), want)
    _same(_traced(lambda t: getattr(tl, name)(t, axis=axis), z).numpy(), want)


@pytest.mark.parametrize("name, ufunc", [("cummax", np.maximum), ("cummin", np.minimum)])
def test_cummax_cummin_gradient_goes_to_the_running_extremum(name, ufunc):
    rng = np.random.default_rng(5)
    z = _complex(rng, (3, 5), ties=False)
    w = rng.normal(size=(3, 5)) + 1j * rng.normal(size=(3, 5))

    def loss(x):
        return tl.sum(tl.real(getattr(tl, name)(x, axis=1) * w))

    want = _numeric_grad(lambda x: np.sum((ufunc.accumulate(x, axis=1) * w).real), z)
    np.testing.assert_allclose(tl.grad(loss)(z).numpy(), want, atol=1e-6)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(z).numpy(), want, atol=1e-6)


# ------------------------------------------------------------------ searchsorted, top_k (digitize refuses)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize(
    "dtypes", [(np.complex128, np.complex128), (np.complex64, np.float32), (np.float64, np.complex64)]
)
def test_searchsorted_matches_numpy(side, dtypes):
    rng = np.random.default_rng(6)
    a = np.sort(_complex(rng, (9,), nans=2)).astype(dtypes[0]) if dtypes[0] != np.float64 else np.arange(-2.0, 3.0)
    v = _complex(rng, (3, 4), nans=2).astype(dtypes[1])
    want = np.searchsorted(a, v, side=side)
    _same(tl.searchsorted(a, v, side=side).numpy(), want)
    _same(_traced(lambda s, t: tl.searchsorted(s, t, side=side), a, v).numpy(), want)
    order = rng.permutation(a.size)
    _same(tl.searchsorted(a[order], v, side=side, sorter=np.argsort(a[order])).numpy(), want)


def test_searchsorted_matches_jax():
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(7)
    a, v = np.sort(_complex(rng, (8,), np.complex64)), _complex(rng, (5,), np.complex64)
    np.testing.assert_array_equal(tl.searchsorted(a, v).numpy(), np.asarray(jnp.searchsorted(a, v)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_top_k_is_the_descending_sort(dtype):
    # NumPy has no top_k: its values are sort's last k reversed (jax.lax.top_k refuses complex input).
    rng = np.random.default_rng(8)
    z = _complex(rng, (3, 7), dtype, nans=2)
    for values, indices in (tl.top_k(z, 4), _traced(lambda t: tuple(tl.top_k(t, 4)), z)):
        want = np.sort(z, axis=-1)[:, ::-1][:, :4]
        _same(values.numpy(), want)
        _same(np.take_along_axis(z, indices.numpy(), axis=-1), want)
        assert indices.dtype == np.int64


def test_top_k_ties_by_lower_index_and_gradient_to_chosen_positions():
    z = np.array([1 + 2j, 1 - 1j, 0.5 + 3j, 1 + 2j, -2 + 0j, 1 + 1.5j])
    values, indices = tl.top_k(z, 3)
    assert indices.numpy().tolist() == [0, 3, 5]
    w = np.array([1 + 1j, 2 - 1j, 0.5j])
    got = tl.grad(lambda x: tl.sum(tl.real(tl.top_k(x, 3).values * w)))(z).numpy()
    want = _numeric_grad(lambda x: np.sum((x[[0, 3, 5]] * w).real), z)
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_digitize_of_complex_numbers_is_refused_as_numpy_does():
    with pytest.raises(TypeError, match="may not be complex"):
        np.digitize(np.array([1j]), np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match=r"digitize: complex numbers have no order \(x shape \(1,\) complex128"):
        tl.digitize(np.array([1j]), np.array([0.0, 1.0]))


# ------------------------------------------------------------------ sort_complex
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64, np.complex128])
def test_sort_complex_matches_numpy(dtype):
    rng = np.random.default_rng(9)
    x = _complex(rng, (3, 5), nans=2 if np.dtype(dtype).kind == "c" else 0)
    x = x.astype(dtype) if np.dtype(dtype).kind == "c" else x.real.astype(dtype)
    want = np.sort_complex(x)
    _same(tl.sort_complex(x).numpy(), want)
    _same(_traced(tl.sort_complex, x).numpy(), want)
    _same(np.sort_complex(tl.tensor(x)).numpy(), want)  # NumPy's function on a Tensor dispatches here


def test_sort_complex_gradient_follows_the_sort():
    rng = np.random.default_rng(10)
    z = _complex(rng, (6,), ties=False)
    w = rng.normal(size=6) + 1j * rng.normal(size=6)
    got = tl.grad(lambda x: tl.sum(tl.real(tl.sort_complex(x) * w)))(z).numpy()
    np.testing.assert_allclose(got, _numeric_grad(lambda x: np.sum((np.sort_complex(x) * w).real), z), atol=1e-6)
    with pytest.raises(ValueError, match=r"sort_complex: needs a tensor of rank >= 1"):
        tl.sort_complex(1j)


# ------------------------------------------------------------------ segment_max, segment_min
@pytest.mark.parametrize("name, ufunc", [("segment_max", np.maximum), ("segment_min", np.minimum)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_segment_extrema_match_numpys_ufunc_at(name, ufunc, dtype):
    rng = np.random.default_rng(11)
    z = _complex(rng, (7, 2), dtype, nans=1)
    z[3, 0] = complex(-np.inf, -1)  # below -inf+0j (JAX's empty-segment value), above the fill -inf-infj
    ids = np.array([0, 0, 2, 3, 3, 3, -1])
    infinity = -np.inf if name == "segment_max" else np.inf
    want = np.full((4, 2), complex(infinity, infinity), dtype)
    ufunc.at(want, ids[ids >= 0], z[ids >= 0])
    _same(getattr(tl, name)(z, ids, 4).numpy(), want)
    _same(_traced(lambda t: getattr(tl, name)(t, ids, 4), z).numpy(), want)


def test_segment_max_gradient_goes_to_the_selected_rows():
    rng = np.random.default_rng(12)
    z = _complex(rng, (6,), ties=False)
    ids = np.array([1, 0, 1, 1, 0, 2])
    w = rng.normal(size=3) + 1j * rng.normal(size=3)

    def numpy_max(x):
        out = np.full(3, complex(-np.inf, -np.inf))
        np.maximum.at(out, ids, x)
        return np.sum((out * w).real)

    got = tl.grad(lambda x: tl.sum(tl.real(tl.segment_max(x, ids, 3) * w)))(z).numpy()
    np.testing.assert_allclose(got, _numeric_grad(numpy_max, z), atol=1e-6)

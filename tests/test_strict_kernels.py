"""The generic (Array API) kernels at their edges, on array_api_strict against the NumPy backend's own
kernels: negative and repeated indices, diagonals off the main one, NaN and infinities, -0.0, integers."""

import numpy as np
import pytest

import tensorlib as tl

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
    pytest.mark.skipif(not tl.testing.backends.available(extra=True), reason="array_api_strict is not installed"),
]


def _both(fn, *arrays, **kwargs):
    """fn's results on array_api_strict and on NumPy, as NumPy arrays."""
    results = []
    for backend in ("array_api_strict", "numpy"):
        out = fn(*[tl.tensor(a, backend=backend) for a in arrays], **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        assert all(o.backend.name == backend for o in outs)
        results.append([o.numpy() for o in outs])
    return results


def _same(fn, *arrays, **kwargs):
    strict, numpy = _both(fn, *arrays, **kwargs)
    for s, n in zip(strict, numpy):
        assert s.dtype == n.dtype
        np.testing.assert_array_equal(s, n)


def test_take_along_axis_negative_indices_and_its_scatter_with_repeats():
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[-1, 0, -1], [2, 2, -4], [3, 3, 3]])
    _same(tl.take_along_axis, x, idx, axis=1)
    grad = tl.ops.get("TakeAlongAxisGrad")
    dy = np.arange(1.0, 10.0).reshape(3, 3)
    _same(lambda d, i, like: grad(d, i, like, axis=1), dy, idx, x)
    _same(
        lambda d, i, like: grad(d, i, like, axis=0),
        dy.ravel()[:8].reshape(2, 4),
        np.array([[0, -1, 1, 0], [0, 0, 2, 2]]),
        x,
    )


@pytest.mark.parametrize("offset, axes", [(0, (0, 1)), (1, (0, 1)), (-2, (0, 1)), (1, (2, 0)), (-1, (1, 2))])
def test_diagonal_and_its_scatter_off_the_main_diagonal(offset, axes):
    x = np.arange(60.0).reshape(3, 4, 5)
    _same(tl.diagonal, x, offset=offset, axis1=axes[0], axis2=axes[1])
    d = tl.diagonal(tl.tensor(x), offset=offset, axis1=axes[0], axis2=axes[1]).numpy() + 100.0
    scatter = tl.ops.get("MatrixSetDiag")
    _same(lambda d, like: scatter(d, like, offset=offset, axis1=axes[0], axis2=axes[1]), d, x)


def test_integer_reciprocal_truncates_as_numpy():
    _same(tl.reciprocal, np.array([-3, -2, -1, 0, 1, 2, 3], np.int64))


def test_nan_to_num_with_custom_replacements_and_complex_values():
    x = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    _same(tl.nan_to_num, x)
    _same(tl.nan_to_num, x, nan=7.0, posinf=8.0, neginf=-9.0)
    _same(tl.nan_to_num, np.array([complex(np.nan, np.inf), complex(-np.inf, 2.0)]), nan=1.0)
    _same(tl.nan_to_num, np.array([3, -4], np.int64))


def test_nan_ignoring_max_min_logaddexp2_sinc_and_angle_at_their_edges():
    a = np.array([np.nan, 1.0, np.nan, -0.0, 2.0])
    b = np.array([3.0, np.nan, np.nan, 0.0, 2.0])
    _same(tl.fmax, a, b)
    _same(tl.fmin, a, b)
    _same(tl.fmax, np.array([1, 5], np.int64), np.array([4, 2], np.int64))
    inf = np.inf
    strict, numpy = _both(tl.logaddexp2, np.array([inf, -inf, -inf, 3.0, 1e3]), np.array([inf, -inf, 1.0, 3.0, -1e3]))
    np.testing.assert_allclose(strict[0], numpy[0], rtol=1e-14)
    strict, numpy = _both(tl.sinc, np.array([0.0, 1e-8, 0.5, -2.5]))
    np.testing.assert_allclose(strict[0], numpy[0], rtol=1e-14)
    _same(tl.angle, np.array([-0.0, 0.0, -2.0, 3.0]))
    _same(tl.angle, np.array([-2, 0, 3], np.int64))
    _same(tl.imag, np.array([1, 2], np.int64))
    _same(tl.conj, np.array([1.0, -2.0]))


def test_float_valued_functions_of_integers_give_float64():
    ints = np.array([0, 1, 2], np.int64)
    for fn in (tl.deg2rad, tl.rad2deg, tl.exp2, tl.fabs, tl.sinc, tl.arctan, tl.log2):
        strict, numpy = _both(fn, ints)
        assert strict[0].dtype == numpy[0].dtype == np.float64
        np.testing.assert_allclose(strict[0], numpy[0], rtol=1e-15)


def test_cumsum_of_bools_and_in_reverse():
    _same(tl.cumsum, np.array([[True, False, True], [True, True, False]]), axis=1)
    op = tl.ops.get("Cumsum")
    _same(lambda x: op(x, axis=0, reverse=True), np.arange(6.0).reshape(3, 2))


def test_special_functions_with_a_generic_kernel_match_scipy():
    x = np.array([0.0, 0.0, 2.0, 0.5, np.nan])
    y = np.array([0.0, np.nan, 3.0, -0.5, 1.0])
    _same(tl.special.xlogy, x, y)
    _same(tl.special.xlog1py, x, y)
    strict, numpy = _both(tl.special.logit, np.array([0.0, 0.25, 1.0, 2.0]))
    np.testing.assert_allclose(strict[0], numpy[0], rtol=1e-15)

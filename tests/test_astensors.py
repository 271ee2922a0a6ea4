"""Lists and Python numbers given next to float64 arrays, in every public function that takes several array-likes
(contractions, joins, solves, losses, normalizations, special functions, distributions): DESIGN's promotion rule
reads them in the arrays' float64 (``dispatch.as_tensors``), so results equal NumPy's / SciPy's / the closed
forms in float64 to a few ulps, eagerly and under ``tl.function``; a float32 reading of 0.1 is 1e-9 off, a
million ulps.  Also polyfit(full=True) of a rank-deficient fit (NumPy: empty residuals).
"""

import contextlib

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from tests._helpers import MODES

_X = np.array([0.3, 0.7, 1.1])  # the float64 argument; the lists below hold values float32 cannot (0.1, 0.2, 0.3)
_L = [0.1, 0.2, 0.3]
_LA = np.array(_L)
_M = np.array([[2.0, 0.1], [0.3, 1.7]])
_LM = [[0.1, 0.2], [0.3, 0.4]]
_C = np.array([True, False, True])


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_scatter(x, value):
    out = x.copy()
    out[0] = value
    return out


# (name, float64 argument, tensorlib function of it, the float64 reference of it): each call also takes a list or
# Python number that float32 cannot hold.
_CASES = [
    ("matmul", _M, lambda m: tl.matmul(m, _LM), lambda m: m @ np.array(_LM)),
    ("matmul list first", _M, lambda m: tl.matmul(_LM, m), lambda m: np.array(_LM) @ m),
    ("einsum", _M, lambda m: tl.einsum("ij,jk->ik", m, _LM), lambda m: np.einsum("ij,jk->ik", m, _LM)),
    ("tensordot", _M, lambda m: tl.tensordot(m, _LM, 1), lambda m: np.tensordot(m, _LM, 1)),
    ("dot", _X, lambda x: tl.dot(x, _L), lambda x: np.dot(x, _L)),
    ("inner", _X, lambda x: tl.inner(x, _L), lambda x: np.inner(x, _L)),
    ("vdot", _X, lambda x: tl.vdot(x, _L), lambda x: np.vdot(x, _L)),
    ("outer", _X, lambda x: tl.outer(x, _L), lambda x: np.outer(x, _L)),
    ("kron", _X, lambda x: tl.kron(x, _L), lambda x: np.kron(x, _L)),
    ("cross", _X, lambda x: tl.cross(x, _L), lambda x: np.cross(x, _L)),
    ("linalg.cross", _X, lambda x: tl.linalg.cross(x, _L), lambda x: np.linalg.cross(x, _L)),
    ("linalg.outer", _X, lambda x: tl.linalg.outer(x, _L), lambda x: np.linalg.outer(x, _L)),
    ("linalg.vecdot", _X, lambda x: tl.linalg.vecdot(x, _L), lambda x: np.linalg.vecdot(x, _L)),
    (
        "linalg.multi_dot",
        _M,
        lambda m: tl.linalg.multi_dot([m, _LM, m]),
        lambda m: np.linalg.multi_dot([m, np.array(_LM), m]),
    ),
    ("append", _X, lambda x: tl.append(x, _L), lambda x: np.append(x, _L)),
    ("vstack", _X, lambda x: tl.vstack([x, _L]), lambda x: np.vstack([x, _L])),
    ("hstack", _X, lambda x: tl.hstack([x, _L]), lambda x: np.hstack([x, _L])),
    ("dstack", _X, lambda x: tl.dstack([x, _L]), lambda x: np.dstack([x, _L])),
    ("column_stack", _X, lambda x: tl.column_stack([x, _L]), lambda x: np.column_stack([x, _L])),
    ("diff prepend", _X, lambda x: tl.diff(x, prepend=[0.1]), lambda x: np.diff(x, prepend=[0.1])),
    ("diff append", _X, lambda x: tl.diff(x, append=0.1), lambda x: np.diff(x, append=0.1)),
    ("select", _X, lambda x: tl.select([_C, ~_C], [x, _L]), lambda x: np.select([_C, ~_C], [x, _L])),
    ("select default", _X, lambda x: tl.select([_C], [x], 0.1), lambda x: np.select([_C], [x], 0.1)),
    ("average weights", _X, lambda x: tl.average(x, weights=_L), lambda x: np.average(x, weights=_L)),
    ("average list a", _X, lambda x: tl.average(_L, weights=x), lambda x: np.average(_L, weights=x)),
    (
        "gradient coordinates",
        _X,
        lambda x: tl.gradient(x, [0.1, 0.25, 0.7]),
        lambda x: np.gradient(x, [0.1, 0.25, 0.7]),
    ),
    ("gradient step", _X, lambda x: tl.gradient(x, 0.1), lambda x: np.gradient(x, 0.1)),
    (
        "histogram weights",
        _X,
        lambda x: tl.histogram(x, bins=2, weights=_L)[0],
        lambda x: np.histogram(x, bins=2, weights=_L)[0],
    ),
    (
        "bincount weights",
        _X,
        lambda x: tl.bincount([0, 1, 1], weights=_L) + x[:2],
        lambda x: np.bincount([0, 1, 1], weights=_L) + x[:2],
    ),
    (
        "tensor_scatter_nd_update",
        _X,
        lambda x: tl.tensor_scatter_nd_update(x, [[0]], [0.1]),
        lambda x: _np_scatter(x, 0.1),
    ),
    ("tensor_scatter_nd_add", _X, lambda x: tl.tensor_scatter_nd_add(x, [[0]], [0.1]), lambda x: x + [0.1, 0.0, 0.0]),
    ("linalg.solve", _M, lambda m: tl.linalg.solve(m, [0.1, 0.2]), lambda m: np.linalg.solve(m, [0.1, 0.2])),
    ("linalg.lstsq", _M, lambda m: tl.linalg.lstsq(m, [0.1, 0.2])[0], lambda m: np.linalg.lstsq(m, [0.1, 0.2])[0]),
    (
        "linalg.solve_triangular",
        _M,
        lambda m: tl.linalg.solve_triangular(tl.linalg.cholesky(m @ m.T), [0.1, 0.2], lower=True),
        lambda m: scipy.linalg.solve_triangular(np.linalg.cholesky(m @ m.T), [0.1, 0.2], lower=True),
    ),
    (
        "linalg.cho_solve",
        _M,
        lambda m: tl.linalg.cho_solve((tl.linalg.cholesky(m @ m.T), True), [0.1, 0.2]),
        lambda m: scipy.linalg.cho_solve((np.linalg.cholesky(m @ m.T), True), [0.1, 0.2]),
    ),
    (
        "linalg.cholesky_solve",
        _M,
        lambda m: tl.linalg.cholesky_solve([[0.1], [0.2]], tl.linalg.cholesky(m @ m.T)),
        lambda m: scipy.linalg.cho_solve((np.linalg.cholesky(m @ m.T), True), [[0.1], [0.2]]),
    ),
    (
        "linalg.lu_solve",
        _M,
        lambda m: tl.linalg.lu_solve(tl.linalg.lu_factor(m), [0.1, 0.2]),
        lambda m: scipy.linalg.lu_solve(scipy.linalg.lu_factor(m), [0.1, 0.2]),
    ),
    (
        "linalg.tensorsolve",
        _M,
        lambda m: tl.linalg.tensorsolve(m, [0.1, 0.2]),
        lambda m: np.linalg.tensorsolve(m, [0.1, 0.2]),
    ),
    ("linalg.block_diag", _M, lambda m: tl.linalg.block_diag(m, _LM), lambda m: scipy.linalg.block_diag(m, _LM)),
    ("linalg.toeplitz", _X, lambda x: tl.linalg.toeplitz(x, _L), lambda x: scipy.linalg.toeplitz(x, _L)),
    (
        "linalg.expm_frechet",
        _M,
        lambda m: tl.linalg.expm_frechet(m, _LM)[1],
        lambda m: scipy.linalg.expm_frechet(m, np.array(_LM))[1],
    ),
    (
        "linalg.matrix_rank tol",
        _X,
        lambda x: tl.linalg.matrix_rank(tl.diag(x * 0 + [1.0, 0.1000000001, 2.0]), tol=0.1) * 1.0 + x,
        lambda x: np.linalg.matrix_rank(np.diag([1.0, 0.1000000001, 2.0]), tol=0.1) * 1.0 + x,
    ),
    # tl.nn: losses, normalizations, convolutions (closed forms in NumPy)
    ("nn.mse_loss", _X, lambda x: tl.nn.mse_loss(x, _L), lambda x: np.mean((x - _LA) ** 2)),
    ("nn.l1_loss", _X, lambda x: tl.nn.l1_loss(x, _L), lambda x: np.mean(np.abs(x - _LA))),
    (
        "nn.huber_loss",
        _X,
        lambda x: tl.nn.huber_loss(x, _L),
        lambda x: np.mean(0.5 * (x - _LA) ** 2 * (x < 1 + _LA) + (np.abs(x - _LA) - 0.5) * (x >= 1 + _LA)),
    ),
    (
        "nn.binary_cross_entropy",
        _X,
        lambda x: tl.nn.binary_cross_entropy(x / 2, _L, weight=[0.1]),
        lambda x: np.mean(-0.1 * (_LA * np.log(x / 2) + (1 - _LA) * np.log(1 - x / 2))),
    ),
    ("nn.kl_div", _X, lambda x: tl.nn.kl_div(tl.log(x), _L), lambda x: np.mean(_LA * (np.log(_LA) - np.log(x)))),
    (
        "nn.cosine_similarity",
        _X,
        lambda x: tl.nn.cosine_similarity(x, _L, axis=0),
        lambda x: x @ _LA / np.linalg.norm(x) / np.linalg.norm(_LA),
    ),
    ("nn.log_poisson_loss", _X, lambda x: tl.nn.log_poisson_loss(_L, x), lambda x: np.exp(x) - _LA * x),
    (
        "nn.weighted_cross_entropy_with_logits",
        _X,
        lambda x: tl.nn.weighted_cross_entropy_with_logits(_L, x, pos_weight=[2.1]),
        lambda x: (1 - _LA) * x + (1 + (2.1 - 1) * _LA) * np.log1p(np.exp(-x)),
    ),
    ("nn.prelu", _X, lambda x: tl.nn.prelu(-x, [0.1]), lambda x: -x * 0.1),
    (
        "nn.batch_normalization",
        _X,
        lambda x: tl.nn.batch_normalization(x, [0.1], [0.2], [0.3], [0.4], 1e-3),
        lambda x: (x - 0.1) / np.sqrt(0.2 + 1e-3) * 0.4 + 0.3,
    ),
    (
        "nn.layer_norm",
        _X,
        lambda x: tl.nn.layer_norm(x, _L, _L),
        lambda x: (x - x.mean()) / np.sqrt(x.var() + 1e-5) * _LA + _LA,
    ),
    ("nn.rms_norm", _X, lambda x: tl.nn.rms_norm(x, _L), lambda x: x / np.sqrt(np.mean(x * x) + 1e-6) * _LA),
    (
        "nn.normalize_moments",
        _X,
        lambda x: tl.nn.normalize_moments(3.0, x, x * x, [0.1])[0],
        lambda x: x / 3.0 + 0.1,
    ),
    ("nn.weighted_moments", _X, lambda x: tl.nn.weighted_moments(x, 0, _L)[0], lambda x: np.average(x, weights=_L)),
    (
        "nn.scaled_dot_product_attention mask",
        _M,
        lambda m: tl.nn.scaled_dot_product_attention(m[None], m[None], m[None], attn_mask=_LM),
        lambda m: (_softmax(m @ m.T / np.sqrt(2) + np.array(_LM)) @ m)[None],
    ),
    (
        "nn.conv1d",
        _X,
        lambda x: tl.nn.conv1d(tl.reshape(x, (1, 3, 1)), [[[0.1]], [[0.2]]], 1, "VALID"),
        lambda x: (x[:-1] * 0.1 + x[1:] * 0.2).reshape(1, 2, 1),
    ),
    (
        "nn.depthwise_conv2d",
        _X,
        lambda x: tl.nn.depthwise_conv2d(tl.reshape(x, (1, 1, 3, 1)), [[[[0.1]]]], 1, "VALID"),
        lambda x: (x * 0.1).reshape(1, 1, 3, 1),
    ),
    (
        "nn.conv3d",
        _X,
        lambda x: tl.nn.conv3d(tl.reshape(x, (1, 1, 1, 3, 1)), [[[[[0.1]]]]], 1, "VALID"),
        lambda x: (x * 0.1).reshape(1, 1, 1, 3, 1),
    ),
    ("linalg.kron", _M, lambda m: tl.linalg.kron(m, _LM), lambda m: np.kron(m, _LM)),
    (
        "linalg.khatri_rao",
        _M,
        lambda m: tl.linalg.khatri_rao(m, _LM),
        lambda m: scipy.linalg.khatri_rao(m, np.array(_LM)),
    ),
    (
        "nn.cross_entropy probabilities",
        _M,
        lambda m: tl.nn.cross_entropy(m, _LM),
        lambda m: -(np.array(_LM) * (m - scipy.special.logsumexp(m, axis=1, keepdims=True))).sum(1).mean(),
    ),
    (
        "nn.fused_batch_norm inference",
        _X,
        lambda x: tl.nn.fused_batch_norm(
            tl.reshape(x, (1, 1, 3, 1)), [1.0], [0.0], mean=[0.1], variance=[0.3], epsilon=0.001, is_training=False
        )[0],
        lambda x: ((x - 0.1) / np.sqrt(0.3 + 0.001)).reshape(1, 1, 3, 1),
    ),
    # tl.special and tl.stats (SciPy)
    ("special.boxcox", _X, lambda x: tl.special.boxcox(x, _L), lambda x: scipy.special.boxcox(x, _L)),
    ("special.boxcox1p", _X, lambda x: tl.special.boxcox1p(x, _L), lambda x: scipy.special.boxcox1p(x, _L)),
    ("special.comb", _X, lambda x: tl.special.comb(x * 10, [0.1]), lambda x: scipy.special.comb(x * 10, [0.1])),
    ("stats.norm.pdf loc", _X, lambda x: tl.stats.norm.pdf(x, loc=_L), lambda x: scipy.stats.norm.pdf(x, loc=_L)),
    (
        "stats.norm.logpdf x",
        _X,
        lambda x: tl.stats.norm.logpdf(_L, loc=x),
        lambda x: scipy.stats.norm.logpdf(_L, loc=x),
    ),
    ("stats.gamma.logpdf", _X, lambda x: tl.stats.gamma.logpdf(x, _L), lambda x: scipy.stats.gamma.logpdf(x, _L)),
    ("stats.t.cdf", _X, lambda x: tl.stats.t.cdf(_L, x), lambda x: scipy.stats.t.cdf(_L, x)),
    (
        "stats.poisson.logpmf",
        _X,
        lambda x: tl.stats.poisson.logpmf(tl.round(x * 3), _L),
        lambda x: scipy.stats.poisson.logpmf(np.round(x * 3), _L),
    ),
    (
        "stats.multivariate_normal.logpdf",
        _X,
        lambda x: tl.stats.multivariate_normal.logpdf(x, mean=_L, cov=np.eye(3)),
        lambda x: scipy.stats.multivariate_normal.logpdf(x, mean=_L, cov=np.eye(3)),
    ),
    (
        "stats.dirichlet.logpdf",
        _X,
        lambda x: tl.stats.dirichlet.logpdf(x / 2.1, _L),
        lambda x: scipy.stats.dirichlet.logpdf(x / 2.1, _L),
    ),
]


def _check(got, want, where):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (where, got.dtype, got.shape, want.dtype, want.shape)
    # a few ulps of float64 (sums taken in another order); a float32 reading of 0.1 is 1e-9 relative off
    np.testing.assert_allclose(
        got, want, rtol=4e-16, atol=4e-16 * float(np.max(np.abs(want), initial=0.0)), err_msg=where
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, x, function, reference", _CASES, ids=[c[0] for c in _CASES])
def test_a_list_next_to_float64_is_float64(name, x, function, reference, mode):
    got = function(tl.tensor(x)) if mode == "eager" else tl.function(function)(tl.tensor(x))
    _check(got, reference(x), f"{name} ({mode})")


_FLOATS = st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False)


@given(st.lists(_FLOATS, min_size=3, max_size=3), st.lists(_FLOATS, min_size=3, max_size=3))
def test_any_list_next_to_float64_is_read_in_float64(values, listed):
    """Whatever floats the list holds, the contractions, joins and solves see them as NumPy does (float64)."""
    x = np.array(values)
    a = np.eye(3) * 4.0 + np.outer(x, x) * 1e-4  # well conditioned
    for name, got, want in [
        ("dot", tl.dot(x, listed), np.dot(x, listed)),
        ("outer", tl.outer(x, listed), np.outer(x, listed)),
        ("append", tl.append(x, listed), np.append(x, listed)),
        ("cross", tl.cross(x, listed), np.cross(x, listed)),
        ("solve", tl.linalg.solve(a, listed), np.linalg.solve(a, listed)),
        ("tensor_scatter_nd_add", tl.tensor_scatter_nd_add(x, [[0], [1], [2]], listed), x + np.array(listed)),
    ]:
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype == np.float64, name
        scale = float(np.max(np.abs(want), initial=1.0)) * max(1.0, float(np.max(np.abs(x), initial=0.0)))
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=8e-16 * scale, err_msg=name)


@pytest.mark.parametrize("columns", [1, 2])
def test_polyfit_full_of_a_rank_deficient_fit_has_no_residuals(columns):
    """NumPy's lstsq gives no residuals when the rank is below the order: polyfit(full=True) returns them empty."""
    x = np.array([1.0, 1.0, 1.0])
    y = np.array([1.0, 2.0, 4.0]) if columns == 1 else np.array([[1.0, 0.5], [2.0, 0.1], [4.0, 0.2]])
    got = tl.polyfit(x, y, 1, full=True)
    want = np.polyfit(x, y, 1, full=True)
    assert int(got[2]) == int(want[2]) == 1
    residuals = got[1].numpy()
    assert (residuals.shape, residuals.dtype) == (want[1].shape, want[1].dtype) == ((0,), np.float64)
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-12)
    # a full-rank fit keeps its residuals (the sum of squares, as NumPy's)
    full_rank = tl.polyfit(np.array([0.0, 1.0, 2.0]), y, 1, full=True)[1].numpy()
    np.testing.assert_allclose(full_rank, np.polyfit(np.array([0.0, 1.0, 2.0]), y, 1, full=True)[1], rtol=1e-12)


# ------------------------------------------------------------------ NumPy's functions called on Tensors


@pytest.mark.parametrize("mode", MODES)
def test_numpy_apply_along_axis_and_piecewise_pass_extra_arguments(mode):
    """NumPy passes ``*args`` and ``**kwargs`` after the array on to the function: given a Tensor they crashed
    ("got multiple values for argument 'axis'" / 'condlist'), as axis= and arr= went by name after them."""
    x = np.array([[0.3, 0.7, 1.1], [0.2, 0.5, 0.9]])

    def along(t):
        return np.apply_along_axis(lambda v, s, shift=0.0: v[::-1] * s + shift, 1, t, 2.0, shift=0.5)

    def pieces(t):
        return np.piecewise(t, [t < 0.5], [lambda v, s, k=0.0: v * s + k, lambda v, s, k=0.0: -v + k], 2.0, k=1.0)

    for f in (along, pieces):
        got = f(tl.tensor(x)) if mode == "eager" else tl.function(f)(tl.tensor(x))
        assert isinstance(got, tl.Tensor)
        np.testing.assert_array_equal(got.numpy(), f(x))
    # the gradient reaches the array: d/dx sum(2 x[::-1] + 0.5) = 2, d/dx sum(piecewise) = 2 below 0.5, else -1
    np.testing.assert_array_equal(tl.grad(lambda t: tl.sum(along(t)))(tl.tensor(x)).numpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(
        tl.grad(lambda t: tl.sum(pieces(t)))(tl.tensor(x)).numpy(), np.where(x < 0.5, 2.0, -1.0)
    )


_NAN_REDUCTIONS = [
    ("nansum", {}),
    ("nanprod", {}),
    ("nanmean", {}),
    ("nanvar", {"ddof": 1}),
    ("nanstd", {}),
    ("nanmax", {"initial": -0.5}),
    ("nanmin", {"initial": 0.5}),
    ("nansum", {"initial": 2.0}),
]


@pytest.mark.parametrize("mode", MODES)
@given(
    values=st.lists(st.sampled_from([np.nan, -1.5, -0.25, 0.0, 0.3, 0.7, 2.0]), min_size=12, max_size=12),
    kept=st.lists(st.booleans(), min_size=12, max_size=12),
    axis=st.sampled_from([None, 0, 1, (0, 1)]),
    keepdims=st.booleans(),
)
def test_nan_reductions_take_where_and_initial_as_numpy(mode, values, kept, axis, keepdims):
    """np.nanmean(t, where=mask) and the other nan reductions refused where= (and nanmax/nanmin initial=) as
    "not supported on tensorlib Tensors"; they now leave those elements out as NumPy's do, through np.* and tl.*."""
    import warnings

    x, mask = np.array(values).reshape(3, 4), np.array(kept).reshape(3, 4)
    for name, options in _NAN_REDUCTIONS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's warnings for slices with no value left
            want = getattr(np, name)(x, axis=axis, keepdims=keepdims, where=mask, **options)

        def f(t, name=name, options=options):
            return getattr(np, name)(t, axis=axis, keepdims=keepdims, where=mask, **options)

        got = f(tl.tensor(x)) if mode == "eager" else tl.function(f)(tl.tensor(x))
        assert isinstance(got, tl.Tensor), name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-15, err_msg=f"{name} {options}")
        assert got.shape == np.shape(want), name
    for name in ("all", "any"):
        want = getattr(np, name)(x > 0, axis=axis, keepdims=keepdims, where=mask)
        got = getattr(tl, name)(tl.tensor(x > 0), axis=axis, keepdims=keepdims, where=mask)
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)


def test_nanmean_and_nanstd_where_gradients_against_central_differences():
    from tests._helpers import central_differences

    x = np.array([[0.3, np.nan, 1.1, -0.4], [0.2, 0.5, -0.9, 2.0]])
    mask = np.array([[True, True, False, True], [False, True, True, True]])
    finite = np.nan_to_num(x)  # differences taken at the non-NaN values; NaN positions get 0 (nothing depends on them)
    nan_at = np.isnan(x)
    for name in ("nanmean", "nanstd"):

        def numpy_f(v, name=name):
            return getattr(np, name)(np.where(nan_at, np.nan, v), axis=1, where=mask).sum()

        got = tl.grad(lambda t, name=name: tl.sum(getattr(tl, name)(t, axis=1, where=mask)))(tl.tensor(x)).numpy()
        np.testing.assert_allclose(got, central_differences(numpy_f, finite), rtol=1e-7, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_numpy_logaddexp_reduce_is_logsumexp(mode, axis):
    """np.logaddexp.reduce(t) raised "no implementation ... for Tensors"; it is tl.logsumexp (NumPy's default
    axis 0), also keepdims and reduceat; its gradient is the softmax."""
    x = np.array([[0.3, 0.7, 1.1], [0.2, -0.5, -np.inf]])

    def f(t):
        return np.logaddexp.reduce(t, axis=axis, keepdims=True), np.logaddexp.reduceat(t, [0, 2, 1], axis=1)

    got = f(tl.tensor(x)) if mode == "eager" else tl.function(f)(tl.tensor(x))
    for g, w in zip(got, f(x)):
        assert isinstance(g, tl.Tensor) and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-15)
    gradient = tl.grad(lambda t: tl.sum(np.logaddexp.reduce(t, axis=1)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(gradient, np.exp(x - np.logaddexp.reduce(x, axis=1, keepdims=True)), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64, float, int])
def test_numpy_trace_takes_dtype(dtype):
    """np.trace(t, dtype=...) raised "argument dtype=... is not supported": tl.trace takes NumPy's accumulator dtype."""
    x = np.array([[1.5, 2.0, 0.1], [3.0, 4.25, 0.2]])
    for data, offset in ((x, 1), (x, 0), (x.astype(np.int32), 0)):
        want = np.trace(data, offset, dtype=dtype)
        got = np.trace(tl.tensor(data), offset, dtype=dtype)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    gradient = tl.grad(lambda t: np.trace(t, dtype=np.float64))(tl.tensor(x.astype(np.float32))).numpy()
    np.testing.assert_array_equal(gradient, np.eye(2, 3, dtype=np.float32))


@pytest.mark.parametrize("mode", MODES)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
)
def test_sliding_window_view_matches_numpy(mode, shape, data):
    """np.lib.stride_tricks.sliding_window_view(t, ...) raised "no implementation for Tensors"; it is now a
    gather (tl.sliding_window_view), NumPy's windows for any axes (repeated too), with gradients."""
    from numpy.lib.stride_tricks import sliding_window_view

    x = np.arange(float(np.prod(shape))).reshape(shape) * 0.37
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=3))
    left = {a % len(shape): shape[a] for a in axes}
    windows = []
    for a in axes:  # a repeated axis shrinks by each window: keep their sum within its size
        windows.append(data.draw(st.integers(0, left[a % len(shape)] + (1 if not windows else 0) - 1)))
        left[a % len(shape)] -= max(windows[-1] - 1, 0)
    want = sliding_window_view(x, windows, axis=axes)

    def f(t):
        return sliding_window_view(t, windows, axis=axes)

    got = f(tl.tensor(x)) if mode == "eager" else tl.function(f)(tl.tensor(x))
    assert isinstance(got, tl.Tensor)
    np.testing.assert_array_equal(got.numpy(), want)
    # each element's gradient counts the windows that read it: d/dx sum(windows * weights) by NumPy's own view
    weights = np.cos(np.arange(want.size)).reshape(want.shape)
    gradient = tl.grad(lambda t: tl.sum(f(t) * weights))(tl.tensor(x)).numpy()
    expected = np.zeros_like(x)
    np.add.at(
        expected,
        np.unravel_index(sliding_window_view(np.arange(x.size).reshape(shape), windows, axis=axes), shape),
        weights,
    )
    np.testing.assert_allclose(gradient, expected, rtol=1e-12, atol=1e-12)


def test_sliding_window_view_errors_name_the_function():
    x = tl.tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"sliding_window_view: window 4 is larger than axis 1 of size 3 .*\(2, 3\)"):
        tl.sliding_window_view(x, 4, axis=1)
    with pytest.raises(ValueError, match="sliding_window_view: window_shape needs one entry per axis of x"):
        tl.sliding_window_view(x, 2)
    with pytest.raises(TypeError, match="writeable=True is not supported"):
        np.lib.stride_tricks.sliding_window_view(x, 2, axis=0, writeable=True)


_QUANTILE_METHODS = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", _QUANTILE_METHODS)
def test_nanquantile_and_nanpercentile_take_every_numpy_method(mode, method):
    """np.nanpercentile(t, q, method='nearest') raised "only method='linear' or 'midpoint' is supported" (tl.quantile
    took all of NumPy 2's); each slice's own count of non-NaN values now feeds quantile's index rules."""
    from tests._helpers import central_differences

    x = np.array([[0.3, np.nan, 1.1, -0.4, 2.5, 0.9], [np.nan] * 6, [0.2, 0.5, -0.9, 2.0, np.nan, 0.05]])
    q = np.array([0.0, 0.13, 0.5, 0.77, 1.0])
    for axis in (1, None):

        def f(t, axis=axis):
            return np.nanquantile(t, q, axis=axis, method=method), np.nanpercentile(t, 37.0, axis=axis, method=method)

        got = f(tl.tensor(x)) if mode == "eager" else tl.function(f)(tl.tensor(x))
        with pytest.warns(RuntimeWarning) if axis == 1 else contextlib.nullcontext():  # NumPy's all-NaN slice
            want = f(x)
        for g, w in zip(got, want):
            assert (g.shape, g.dtype) == (w.shape, w.dtype)
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-15, atol=1e-15, equal_nan=True)
    if mode == "eager":  # the gradient flows to the picked or interpolated elements, as NumPy's value moves
        row = x[[0]]
        gradient = tl.grad(lambda t: tl.sum(tl.nanquantile(t, q, axis=1, method=method)))(tl.tensor(row)).numpy()
        finite = np.nan_to_num(row)
        reference = central_differences(
            lambda v: np.nanquantile(np.where(np.isnan(row), np.nan, v), q, axis=1, method=method).sum(), finite
        )
        np.testing.assert_allclose(gradient, reference, rtol=1e-7, atol=1e-8)


_PADS = [
    ((1, 2), "maximum", {}),
    ((1, 2), "minimum", {"stat_length": ((1, 2), (2, 1))}),
    ((1, 2), "mean", {"stat_length": 2}),
    (((2, 0), (1, 3)), "median", {"stat_length": (2, 1)}),
    ((1, 2), "median", {}),
    ((1, 2), "linear_ramp", {"end_values": ((0.1, 0.2), (0.3, 0.4))}),
    (3, "linear_ramp", {}),
    (((0, 2), (3, 0)), "linear_ramp", {"end_values": -1.5}),
]


@pytest.mark.parametrize("mode_", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("width, mode, options", _PADS, ids=[f"{m}-{i}" for i, (_, m, _o) in enumerate(_PADS)])
def test_numpy_pad_statistic_and_linear_ramp_modes(width, mode, options, dtype, mode_):
    """np.pad(t, w, mode='mean' | 'median' | 'maximum' | 'minimum' | 'linear_ramp') raised "not supported on
    tensorlib Tensors"; they now pad as NumPy's (axis by axis, stat_length, end_values, integers rounded or floored)."""
    from tests._helpers import central_differences

    x = np.array([[0.3, 0.7, 1.1], [0.2, 0.5, 0.9]]) if dtype == np.float64 else np.array([[3, 8, 1], [2, 5, 9]])

    def f(t):
        return np.pad(t, width, mode=mode, **options)

    got = f(tl.tensor(x)) if mode_ == "eager" else tl.function(f)(tl.tensor(x))
    want = f(x)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=4e-16, atol=4e-16)
    if dtype == np.float64 and mode_ == "eager":
        weights = np.cos(np.arange(want.size)).reshape(want.shape)
        gradient = tl.grad(lambda t: tl.sum(f(t) * weights))(tl.tensor(x)).numpy()
        np.testing.assert_allclose(
            gradient, central_differences(lambda v: np.sum(f(v) * weights), x), rtol=1e-7, atol=1e-8
        )


_Z = np.array([0.5 + 1j, 0.1 + 0j, -0.3 + 0.2j])  # complex128
_COMPLEX_CASES = [
    ("add", lambda z: tl.add(z, _L), lambda z: z + np.array(_L)),
    ("operator +", lambda z: z + _L, lambda z: z + np.array(_L)),
    ("where", lambda z: tl.where(_C, _L, z), lambda z: np.where(_C, _L, z)),
    ("isin", lambda z: tl.isin(z, [0.1]), lambda z: np.isin(z, [0.1])),
    ("interp fp", lambda z: tl.interp([0.25], [0.2, 0.3], z[:2]), lambda z: np.interp([0.25], [0.2, 0.3], z[:2])),
    (
        "matmul",
        lambda z: tl.matmul(z[None], [[0.1], [0.2], [0.3]]),
        lambda z: z[None] @ np.array([[0.1], [0.2], [0.3]]),
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, function, reference", _COMPLEX_CASES, ids=[c[0] for c in _COMPLEX_CASES])
def test_a_float_list_next_to_complex128_is_float64(name, function, reference, mode):
    """tl.add(complex128, [0.1]) added float32 0.1 (1.5e-9 off) and tl.isin(complex 0.1, [0.1]) was False: a float
    list next to complex128 was float32; it is now the complex dtype's real one (float64), as NumPy reads it."""
    got = function(tl.tensor(_Z)) if mode == "eager" else tl.function(function)(tl.tensor(_Z))
    _check(got, reference(_Z), f"{name} ({mode})")

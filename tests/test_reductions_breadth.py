"""The reductions and searches NumPy, JAX and PyTorch users reach for (any/all, ptp, average, the nan*
family, searchsorted, digitize, top_k, unique, bincount): the awkward points against NumPy and the
peers, eager and traced."""

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tests._helpers import MODES, central_differences, run_in_mode

NAN = np.nan


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanmedian"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_nan_reductions_match_numpy_with_all_nan_slices_and_no_warning(name, axis, mode):
    x = np.array([[1.0, NAN, 3.0], [NAN, NAN, NAN], [2.0, 2.0, NAN]])
    if name == "nanmedian" and isinstance(axis, tuple):
        axis = None
    expected = _quiet(getattr(np, name), x, axis=axis, keepdims=True)
    fn = getattr(tl, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning escapes (documented: NaN without NumPy's warning)
        got = run_in_mode(mode, lambda t: fn(t, axis=axis, keepdims=True), x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, equal_nan=True)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nanprod", "nanvar", "nanmedian"])
def test_nan_reduction_gradients_are_zero_at_nans_and_match_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([[1.5, NAN, 3.0, 3.5], [NAN, NAN, NAN, NAN], [2.0, -1.0, NAN, 0.5], [NAN, 4.0, NAN, NAN]])
    w = np.array([0.5, 2.0, -1.0, 1.5])

    def loss(fn, nansum):
        return lambda v: nansum(fn(v, axis=1) * w)

    got = tl.grad(loss(getattr(tl, name), tl.nansum))(tl.tensor(x)).numpy()
    expected = np.asarray(jax.grad(loss(getattr(jnp, name), jnp.nansum))(jnp.asarray(x)))
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.all(got[np.isnan(x)] == 0)
    # Central differences in float64 see the same (a NaN entry moved by eps stays NaN, skipped).
    reference = central_differences(lambda v: np.nansum(_quiet(getattr(np, name), v, axis=1) * w), x)
    np.testing.assert_allclose(got, np.where(np.isnan(x), 0.0, reference), atol=1e-6)


def test_nanmean_int_gives_float64_and_float16_accumulates():
    assert tl.nanmean(tl.tensor([1, 2], dtype="int64")).dtype == np.float64
    big = np.full(4096, 60.0, np.float16)
    big[0] = NAN
    assert tl.nanmean(tl.tensor(big)).numpy() == np.float16(60.0)  # a float16 sum overflows at 65504


def test_nanargmax_raises_for_all_nan_slices_as_numpy_eager_and_traced():
    x = np.array([[NAN, 1.0], [2.0, NAN], [NAN, NAN]])
    np.testing.assert_array_equal(tl.nanargmax(x, axis=0).numpy(), np.nanargmax(x, axis=0))
    for mode in MODES:
        with pytest.raises(ValueError, match=r"All-NaN slice encountered") as error:
            run_in_mode(mode, lambda t: tl.nanargmax(t, axis=1), x)
        assert "NanArgMax" in str(error.value) and (
            "(3, 2) float64" in str(error.value) or "float64[3, 2]" in str(error.value)
        )
    assert tl.nanargmin(x, axis=0, keepdims=True).numpy().tolist() == [[1, 0]]


def test_ptp_gradient_is_max_minus_min_with_shared_ties():
    x = tl.tensor([[1.0, 4.0, 4.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype="float64")
    g = tl.grad(lambda x: tl.sum(tl.ptp(x, axis=1)))(x).numpy()
    assert g.tolist() == [[0.0, 0.5, 0.5, -1.0], [0.0, 0.0, 0.0, 0.0]]
    assert tl.ptp(tl.tensor([3, -5])).numpy().item() == 8


def test_any_all_count_nonzero_match_numpy_including_empty_slices_and_numpy_dispatch():
    x = np.array([[0.0, NAN, 0.0], [0.0, 0.0, 0.0]])
    for axis in (None, 0, 1, (0, 1)):
        assert tl.any(x, axis).numpy().tolist() == np.any(x, axis).tolist()
        assert tl.all(x, axis).numpy().tolist() == np.all(x, axis).tolist()
        assert tl.count_nonzero(x, axis).numpy().tolist() == np.count_nonzero(x, axis).tolist()
    empty = np.zeros((0, 2))
    assert tl.any(empty, 0).numpy().tolist() == [False, False] and tl.all(empty, 0).numpy().tolist() == [True, True]
    t = tl.tensor(x)
    assert isinstance(np.any(t, axis=1), tl.Tensor) and np.count_nonzero(t).numpy().item() == 1
    with pytest.raises(ValueError, match=r"Any: axis 2 is out of range for a tensor of rank 2"):
        tl.any(t, axis=2)


def test_average_weights_along_axes_returned_and_zero_sum():
    a = np.arange(24.0).reshape(2, 3, 4)
    w = np.linspace(0.5, 2.0, 8).reshape(4, 2)
    got, total = tl.average(a, axis=(2, 0), weights=w, returned=True, keepdims=True)
    expected, expected_total = np.average(a, axis=(2, 0), weights=w, returned=True, keepdims=True)
    np.testing.assert_allclose(got.numpy(), expected)
    np.testing.assert_allclose(total.numpy(), expected_total)
    assert tl.average(tl.tensor([1, 2, 4])).dtype == np.float64
    with pytest.raises(ZeroDivisionError, match="average: weights sum to zero"):
        tl.average(np.ones(2), weights=np.array([1.0, -1.0]))


def test_average_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    a, w = np.array([[1.0, 2.0, 5.0], [3.0, -1.0, 0.5]]), np.array([0.5, 1.5, 2.0])
    ga, gw = tl.grad(lambda a, w: tl.sum(tl.average(a, axis=1, weights=w) ** 2), argnums=(0, 1))(a, w)
    ta, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    ((ta * tw).sum(1) / tw.sum()).pow(2).sum().backward()
    np.testing.assert_allclose(ga.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy())


def test_top_k_ties_lower_index_first_nan_largest_and_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, NAN, 1.0, 1.0, 5.0]])
    values, indices = tl.top_k(x, k=3)
    assert indices.numpy().tolist() == [[1, 2, 4], [1, 4, 0]]
    np.testing.assert_array_equal(values.numpy(), [[3.0, 3.0, 3.0], [NAN, 5.0, 2.0]])
    y = np.array([[1.0, 4.0, 2.0, 0.0], [2.0, -1.0, 1.5, 5.0]])
    g = tl.grad(lambda t: tl.sum(tl.top_k(t, 2).values * tl.tensor([1.0, 3.0], dtype="float64")))(y).numpy()
    ty = torch.tensor(y, requires_grad=True)
    (torch.topk(ty, 2).values * torch.tensor([1.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_array_equal(g, ty.grad.numpy())
    graph = tl.function(lambda t: tl.top_k(t, 2).values).get_graph(tl.TensorSpec((None, 4), "float64"))
    assert graph(y).numpy().tolist() == [[4.0, 2.0], [5.0, 2.0]]  # one graph for any batch size
    np.testing.assert_array_equal(tl.function(lambda t: tl.top_k(t, 2).indices)(y).numpy(), [[1, 2], [3, 0]])


def test_searchsorted_and_digitize_match_numpy_and_torch():
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 2.0, 2.0, 5.0, NAN])
    v = np.array([[2.0, NAN], [0.0, 6.0]])
    for side in ("left", "right"):
        for mode in MODES:
            got = run_in_mode(mode, lambda p, q: tl.searchsorted(p, q, side=side), a, v)
            np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, v, side=side))
    batch, values = np.sort(np.array([[3.0, 1.0, 2.0], [0.0, 9.0, 4.0]])), np.array([[2.0, 2.5], [4.0, 10.0]])
    expected = torch.searchsorted(torch.tensor(batch), torch.tensor(values), right=True).numpy()
    np.testing.assert_array_equal(tl.searchsorted(batch, values, side="right").numpy(), expected)
    unsorted = np.array([5.0, 1.0, 3.0])
    got = tl.searchsorted(unsorted, np.array([2.0, 4.0]), sorter=np.argsort(unsorted))
    assert got.numpy().tolist() == [1, 2]
    for bins in (np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])):
        for right in (False, True):
            x = np.array([0.5, 1.0, 2.0, 3.5])
            np.testing.assert_array_equal(tl.digitize(x, bins, right=right).numpy(), np.digitize(x, bins, right=right))


def test_unique_and_bincount_eager_and_traced():
    x = np.array([[3.0, 1.0], [3.0, NAN]])
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    for mode in MODES:
        got = run_in_mode(mode, lambda t: tl.unique(t, **flags), x)
        for g, e in zip(got, np.unique(x, **flags)):
            np.testing.assert_array_equal(g.numpy(), e)
    c, w = np.array([0, 3, 3, 1]), np.array([0.5, 1.0, 2.0, -1.0])
    assert tl.bincount(c, minlength=6).numpy().tolist() == np.bincount(c, minlength=6).tolist()
    gw = tl.grad(lambda w: tl.sum(tl.bincount(c, w) ** 2))(w).numpy()
    np.testing.assert_allclose(gw, 2 * np.bincount(c, w)[c])
    with pytest.raises(ValueError, match=r"Bincount: x must be non-negative"):
        tl.bincount(np.array([1, -2]))


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_unique_along_an_axis_on_every_backend(backend):
    # Before: NotImplementedError "unique along an axis runs on the NumPy backend only" off NumPy.
    if backend not in tl.testing.backends.available():
        pytest.skip(f"{backend} is not installed")
    flags = {"return_index": True, "return_inverse": True, "return_counts": True}
    rng = np.random.default_rng(5)
    for x in (
        np.array([[NAN, 1.0], [-0.0, 2.0], [NAN, 1.0], [0.0, 2.0]]),  # NaN rows stay apart, -0.0 is 0.0 (NumPy)
        rng.integers(0, 2, (5, 3, 2)),
        rng.integers(0, 2, (4, 3)).astype(bool),
        np.zeros((3, 0)),
        np.zeros((0, 2)),
    ):
        for axis in range(-x.ndim, x.ndim):
            got = tl.unique(tl.tensor(x, backend=backend), axis=axis, **flags)
            for k, (g, e) in enumerate(zip(got, np.unique(x, axis=axis, **flags))):
                assert g.dtype == e.dtype, (x, axis, k)
                np.testing.assert_array_equal(g.numpy(), np.reshape(e, g.shape), err_msg=f"{x} axis {axis} out {k}")
                assert g.shape == e.shape or k == 2  # NumPy's inverse: (n,), or x's shape in some 2.x versions


def test_argwhere_and_flatnonzero_match_numpy_for_0d_and_empty():
    for x in (np.array(3.0), np.array(0.0), np.zeros((0, 3)), np.array([[0, 2], [1, 0]])):
        np.testing.assert_array_equal(tl.argwhere(x).numpy(), np.argwhere(x))
        assert tl.argwhere(x).shape == np.argwhere(x).shape
        if x.ndim:
            np.testing.assert_array_equal(tl.flatnonzero(x).numpy(), np.flatnonzero(x))


@pytest.mark.parametrize("method", __import__("tensorlib.ops.array", fromlist=["x"]).QUANTILE_METHODS)
def test_quantile_every_numpy_method_matches_numpy_values_dtypes_and_finite_differences(method):
    # Before: only 'linear' and 'midpoint' were accepted (ValueError for the other 11 NumPy 2 methods).
    x = np.array([[4.0, 1.0, 3.0, 2.0, 7.5], [0.5, -2.0, 6.0, 1.5, 3.25]])
    q = [0.0, 0.1, 0.3, 0.5, 0.77, 1.0]
    for a in (x, x.astype(np.float32), np.round(x).astype(np.int64)):
        for mode in MODES:
            got = run_in_mode(mode, lambda t: tl.quantile(t, q, axis=1, method=method), a)
            expected = np.quantile(a, q, axis=1, method=method)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert (
        tl.percentile(x, 30, axis=0, method=method).numpy().tolist() == np.percentile(x, 30, 0, method=method).tolist()
    )
    w = np.linspace(-1.0, 2.0, 12).reshape(6, 2)
    grad = tl.grad(lambda t: tl.sum(tl.quantile(t, q, axis=1, method=method) * w))(x).numpy()
    reference = central_differences(lambda v: np.sum(np.quantile(v, q, axis=1, method=method) * w), x)
    np.testing.assert_allclose(grad, reference, atol=1e-6)


def test_median_of_empty_slices_is_nan_as_numpy_and_argmax_keepdims_of_0d():
    # Before: ValueError 'cannot take a quantile of an empty slice'; NumPy gives NaN (float64 for ints).
    for x, axis in ((np.zeros((2, 0)), 1), (np.zeros((0, 3), np.int64), 0), (np.zeros((3, 0, 0), np.float32), 1)):
        for keepdims in (False, True):
            expected = _quiet(np.median, x, axis=axis, keepdims=keepdims)
            got = tl.median(x, axis=axis, keepdims=keepdims)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            np.testing.assert_array_equal(got.numpy(), expected)
    assert np.isnan(tl.nanmedian(np.zeros((0, 3)), axis=0).numpy()).all()
    # Before: shape (1,); NumPy keeps a 0-d input 0-d.
    assert tl.argmax(np.float32(2.0), axis=-1, keepdims=True).shape == ()


def test_quantiles_and_average_trace_with_unknown_batch_sizes():
    # Before: median/quantile under a TensorSpec with an unknown kept size failed with a raw TypeError
    # ('reshape: shape must be integers, got (None, 4)'); an unknown slice length traces too.
    x = np.array([[1.0, NAN, 3.0, 0.5], [4.0, 5.0, NAN, 2.0], [0.0, 1.0, 2.0, 3.0]])
    batch = tl.TensorSpec((None, 4), "float64")
    w = tl.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64")
    for f in (
        lambda t: tl.median(t, 1, keepdims=True),
        lambda t: tl.quantile(t, [0.3, 0.5], axis=1, method="hazen"),
        lambda t: tl.nanquantile(t, [[0.2], [0.7]], axis=1, keepdims=True),
        lambda t: tl.average(t, 1, weights=w, returned=True)[1],
    ):
        np.testing.assert_array_equal(tl.function(f).get_graph(batch)(x).numpy(), f(tl.tensor(x)).numpy())
    # An unknown slice length: the quantiles' positions are computed in the graph.
    median = tl.function(lambda t: tl.median(t, 1)).get_graph(tl.TensorSpec((3, None), "float64"))
    np.testing.assert_array_equal(median(x).numpy(), np.median(x, 1))


@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_mean_var_std_where_as_numpy_eager_and_traced_with_gradients(name):
    # Before: TypeError, mean/var/std took no where= (np.mean(tensor, where=...) refused it too).
    f, np_f = getattr(tl, name), getattr(np, name)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4))
    x[0, 0] = NAN  # left out by where: no NaN in the value nor the gradient
    where = np.array([[False, True, True, True], [True, False, True, True], [True, True, False, True]])
    extra = {} if name == "mean" else {"ddof": 1}
    for axis, w in ((None, where), (1, where), (0, where[:, :1] | True), (0, np.array([True, False, True, True]))):
        expected = _quiet(np_f, x, axis=axis, where=w, **extra)
        np.testing.assert_allclose(f(x, axis=axis, where=w, **extra).numpy(), expected, rtol=1e-12)
        traced = tl.function(lambda a, m, axis=axis: f(a, axis=axis, where=m, **extra))
        got = traced.get_graph(tl.TensorSpec((None, None), "float64"), tl.TensorSpec((None,) * w.ndim, "bool"))(x, w)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
        assert isinstance(np_f(tl.tensor(x), axis=axis, where=w, **extra), tl.Tensor)  # the NumPy protocol
    y = np.where(where, x, 1.0)
    tl.testing.check_grads(lambda a: f(a, axis=1, where=where, **extra), (y,), order=2)
    grad = tl.grad(lambda a: tl.sum(f(a, axis=0, where=where, **extra)))(x).numpy()
    assert np.all(grad[~where] == 0) and np.isfinite(grad).all()
    assert f(x.astype(np.int64), where=where).dtype == np.float64
    half = f(x.astype(np.float16), axis=1, where=where, **extra)
    assert half.dtype == np.float16
    np.testing.assert_allclose(
        half.numpy(), np_f(x.astype(np.float16).astype(np.float32), 1, where=where, **extra), rtol=2e-3
    )
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    peer = jax.grad(lambda a: getattr(jax.numpy, name)(a, axis=1, where=where, **extra).sum())(y)
    np.testing.assert_allclose(
        tl.grad(lambda a: tl.sum(f(a, axis=1, where=where, **extra)))(y).numpy(), peer, atol=1e-12
    )


def test_where_must_be_bool_and_broadcast_to_x():
    with pytest.raises(
        TypeError, match=r"var: where must be bool, got int64 \(where shape \(3,\); x shape \(3,\), float64\)"
    ):
        tl.var(np.ones(3), where=np.array([1, 0, 1]))
    with pytest.raises(ValueError, match=r"std: where of shape \(2, 3\) does not broadcast to x's shape \(3,\)"):
        tl.std(np.ones(3), where=np.ones((2, 3), bool))

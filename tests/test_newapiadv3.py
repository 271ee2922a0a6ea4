"""Last session's new APIs attacked a third time, as an adversary and as a SciPy / PyTorch / JAX / NumPy user would
use them: the bivariate normal cdf (and ``multivariate_normal.cdf``) at opposite infinite bounds,
``gaussian_nll_loss``'s variance shapes, ``Tensor.at[...]``'s out-of-bounds ``mode=`` and ``einsum``'s ``casting=``.

References: closed forms (a probability of the whole plane is 1, of an empty set 0; Gaussian log-likelihoods written
out in NumPy), float64 central differences, NumPy's own results and errors (``numpy.einsum``), JAX's documented
``.at[]`` index semantics written out as NumPy loops; ``torch.nn.functional`` and ``jax.numpy`` where installed
(``importorskip``).
"""

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl

MVN = tl.stats.multivariate_normal


# ---------------------------------------------------------------- BivariateNormalCdf at opposite infinite bounds
@pytest.mark.parametrize("rho", [-1.0, -0.6, 0.0, 0.3, 1.0])
def test_bivariate_normal_cdf_at_opposite_infinities_is_zero(rho):
    # P(X <= -inf, Y <= inf) = P(X <= inf, Y <= -inf) = 0 for any correlation; the kernel read h + k = -inf + inf
    # as a NaN input and returned NaN.  Reference: the empty set's probability, and the marginal's ndtr at +inf.
    from scipy.special import ndtr

    from tensorlib.ops.special_more import bivariate_normal_cdf

    h = np.array([-np.inf, np.inf, np.inf, -np.inf, np.inf, 0.7, -np.inf])
    k = np.array([np.inf, -np.inf, np.inf, -np.inf, -0.4, np.inf, -0.2])
    got = bivariate_normal_cdf(tl.tensor(h), tl.tensor(k), tl.tensor(np.full(h.shape, rho))).numpy()
    want = np.where(np.isneginf(h) | np.isneginf(k), 0.0, ndtr(np.minimum(h, k)))
    np.testing.assert_array_equal(got, want)


def test_mvn_cdf_of_the_whole_plane_and_of_a_half_infinite_strip():
    # cdf(x=(inf, inf), lower_limit=(-inf, -inf)) is the whole plane's probability, 1 (SciPy's value); it was NaN from
    # the box's corner (-inf, inf).  cdf(x=(-inf, inf)) is 0.  Reference: 1 and 0, and the finite box's corners
    # against scipy.stats where installed.
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    mean = np.array([0.3, -0.2])
    inf = np.inf
    got = MVN.cdf(np.array([inf, inf]), mean, cov, lower_limit=np.array([-inf, -inf])).numpy()
    assert got == 1.0
    assert MVN.cdf(np.array([-inf, inf]), mean, cov).numpy() == 0.0
    assert MVN.logcdf(np.array([inf, inf]), mean, cov, lower_limit=np.array([-inf, -inf])).numpy() == 0.0
    # the strip -1 < X1 <= 1 over the whole of X2 is the first marginal's mass
    from scipy.special import ndtr

    strip = MVN.cdf(np.array([1.0, inf]), mean, cov, lower_limit=np.array([-1.0, -inf])).numpy()
    s = np.sqrt(2.0)
    np.testing.assert_allclose(strip, ndtr((1.0 - 0.3) / s) - ndtr((-1.0 - 0.3) / s), rtol=1e-14)
    g = tl.grad(lambda m: MVN.cdf(np.array([1.0, inf]), m, cov, lower_limit=np.array([-1.0, -inf])))(tl.tensor(mean))
    fd = central_differences(lambda m: ndtr((1.0 - m[0]) / s) - ndtr((-1.0 - m[0]) / s) + 0.0 * m[1], mean)
    np.testing.assert_allclose(g.numpy(), fd, atol=1e-9)


# ---------------------------------------------------------------- gaussian_nll_loss's variance shapes
def _gaussian_nll(x, t, v, full, eps):
    v = np.maximum(np.broadcast_to(v, np.broadcast_shapes(np.shape(v), x.shape)), eps)
    return 0.5 * (np.log(v) + (x - t) ** 2 / v) + (0.5 * np.log(2 * np.pi) if full else 0.0)


@pytest.mark.parametrize(
    "var_shape", [(4, 1, 5, 5), (1, 3, 5, 5), (4, 3, 1, 5), (4, 3, 5, 1), (4, 3, 5), (4, 3, 5, 5), "number"]
)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gaussian_nll_loss_takes_a_variance_shared_along_any_one_axis(var_shape, reduction):
    # PyTorch's gaussian_nll_loss takes var shaped as input with any one axis of 1 (its docs' (4, 1, 32, 32) for a
    # (4, 3, 32, 32) input: one variance per pixel over the channels) and a Python float var; only the last axis
    # was taken, the rest raised.  Reference: the Gaussian negative log-likelihood in NumPy, torch's where installed;
    # the gradient in var against central differences.
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((4, 3, 5, 5)), rng.standard_normal((4, 3, 5, 5))
    v = 0.7 if var_shape == "number" else rng.uniform(0.2, 2.0, var_shape)
    v_np = np.expand_dims(v, -1) if var_shape == (4, 3, 5) else v
    reduce = {"none": lambda a: a, "mean": np.mean, "sum": np.sum}[reduction]
    got = tl.nn.gaussian_nll_loss(x, t, v, full=True, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), reduce(_gaussian_nll(x, t, v_np, True, 1e-6)), rtol=1e-13)
    traced = tl.function(lambda a, b: tl.nn.gaussian_nll_loss(a, b, v, full=True, reduction=reduction))(x, t)
    np.testing.assert_allclose(traced.numpy(), got.numpy(), rtol=1e-14)
    if var_shape != "number":
        g = tl.grad(lambda w: tl.sum(tl.nn.gaussian_nll_loss(x, t, w, reduction=reduction)))(tl.tensor(v))
        fd = central_differences(
            lambda w: np.sum(reduce(_gaussian_nll(x, t, np.reshape(w, v_np.shape), False, 1e-6))), v
        )
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-7)
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    tv = v if var_shape == "number" else torch.tensor(v)
    want = F.gaussian_nll_loss(torch.tensor(x), torch.tensor(t), tv, full=True, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("var_shape", [(4, 1, 1, 5), (1, 1, 5, 5), (4, 3, 5, 2), (3, 5, 5), ()])
def test_gaussian_nll_loss_refuses_other_variance_shapes(var_shape):
    # Two axes of 1, a wrong size, a missing leading axis, a 0-d tensor: PyTorch's "var is of incorrect size".
    x = np.zeros((4, 3, 5, 5))
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var shape .* must be input shape \(4, 3, 5, 5\)"):
        tl.nn.gaussian_nll_loss(x, x, np.ones(var_shape))
    with pytest.raises(ValueError, match="gaussian_nll_loss: var holds negative values"):
        tl.nn.gaussian_nll_loss(x, x, -1.0)


# ---------------------------------------------------------------- Tensor.at[...] with JAX's mode=
_UFUNC_AT = {
    "add": lambda a, i, v: np.add.at(a, i, v),
    "subtract": lambda a, i, v: np.subtract.at(a, i, v),
    "multiply": lambda a, i, v: np.multiply.at(a, i, v),
    "min": lambda a, i, v: np.minimum.at(a, i, v),
    "max": lambda a, i, v: np.maximum.at(a, i, v),
}


def _at_reference(x, rows, values, how, mode):
    """JAX's ``x.at[rows].<how>(values, mode=mode)`` along axis 0 as NumPy: negative rows counted from the end,
    then clipped into the axis (``clip``) or dropped where out of bounds (``drop``), then NumPy's ``ufunc.at``
    (repeated rows combine; ``divide`` and ``power`` by the product, ``set``'s last write wins)."""
    n = x.shape[0]
    rows = np.where(rows < 0, rows + n, rows)
    if mode == "clip":
        rows = np.clip(rows, 0, n - 1)
    else:
        keep = (rows >= 0) & (rows < n)
        rows, values = rows[keep], values[keep]
    out = x.copy()
    if how == "set":
        out[rows] = values
    elif how in ("divide", "power"):
        scale = np.ones_like(x)
        np.multiply.at(scale, rows, values)
        out = out / scale if how == "divide" else out**scale
    else:
        _UFUNC_AT[how](out, rows, values)
    return out


ROWS = np.array([0, 7, -1, 2, -8, 0, 4, -5])


@pytest.mark.parametrize("how", ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"])
@pytest.mark.parametrize("mode", ["clip", "drop", "fill"])
def test_at_update_modes_clip_and_drop_out_of_bounds_rows(how, mode):
    # JAX's .at[i].<op>(v, mode=...) clips out-of-bounds indices into the axis or drops their updates ("fill" drops
    # too, for updates); tensorlib's at[] had no mode= (a TypeError), so a JAX scatter with padding indices could
    # not be ported.  Reference: NumPy's ufunc.at on the clipped or kept rows; the gradients against central
    # differences (a dropped update has none); eager and traced with the rows as a tensor.
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2.0, (5, 3))
    values = np.round(rng.uniform(0.5, 2.0, (ROWS.size, 3)), 1)
    want = _at_reference(x, ROWS, values, how, mode)
    got = getattr(tl.tensor(x).at[ROWS], how)(tl.tensor(values), mode=mode)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    traced = tl.function(lambda a, i, v: getattr(a.at[i], how)(v, mode=mode))(x, tl.tensor(ROWS), values)
    np.testing.assert_allclose(traced.numpy(), want, rtol=1e-14)
    if how in ("add", "multiply", "power"):
        weights = np.arange(15.0).reshape(5, 3)
        gx, gv = tl.grad(lambda a, v: tl.sum(getattr(a.at[ROWS], how)(v, mode=mode) * weights), argnums=(0, 1))(
            tl.tensor(x), tl.tensor(values)
        )
        np.testing.assert_allclose(
            gx.numpy(), central_differences(lambda a: np.sum(_at_reference(a, ROWS, values, how, mode) * weights), x),
            rtol=1e-6, atol=1e-7,
        )  # fmt: skip
        np.testing.assert_allclose(
            gv.numpy(), central_differences(lambda v: np.sum(_at_reference(x, ROWS, v, how, mode) * weights), values),
            rtol=1e-6, atol=1e-7,
        )  # fmt: skip


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_at_get_modes(mode):
    # .at[i].get(mode="fill", fill_value=...) gives fill_value (NaN, the most negative int, by default) where an
    # index is out of bounds, "clip" the nearest element, as JAX's; a second, sliced axis and a scalar index too.
    x = np.arange(15.0).reshape(5, 3)
    rows = np.where(ROWS < 0, ROWS + 5, ROWS)
    inside = (rows >= 0) & (rows < 5)
    if mode == "clip":
        want = x[np.clip(rows, 0, 4)]
    else:
        want = np.where(inside[:, None], x[np.where(inside, rows, 0)], np.nan)
    np.testing.assert_array_equal(tl.tensor(x).at[ROWS].get(mode=mode).numpy(), want)
    np.testing.assert_array_equal(tl.tensor(x).at[:, np.array([2, 5])].get(mode=mode).numpy()[:, 0], x[:, 2])
    ints = tl.tensor(np.arange(15).reshape(5, 3)).at[7, 1].get(mode=mode).numpy()
    assert ints == (13 if mode == "clip" else np.iinfo(np.int64).min)
    if mode == "fill":
        np.testing.assert_array_equal(
            tl.tensor(x).at[ROWS].get(mode=mode, fill_value=-1.5).numpy(), np.where(np.isnan(want), -1.5, want)
        )
        g = tl.grad(lambda a: tl.sum(a.at[ROWS].get(mode="fill", fill_value=0.0)))(tl.tensor(x)).numpy()
        np.testing.assert_array_equal(g, np.bincount(rows[inside], minlength=5)[:, None] * np.ones((1, 3)))


def test_at_mode_errors_and_the_default_still_raises():
    x = tl.zeros((5, 3), "float64")
    with pytest.raises(ValueError, match=r"Tensor.at\[...\].add: mode must be one of .* got 'wrap' \(tensor shape"):
        x.at[1].add(1.0, mode="wrap")
    with pytest.raises(IndexError, match=r"Tensor.at\[...\]: .*index 7 is out of bounds"):
        x.at[ROWS].add(1.0)


def test_at_modes_match_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    x = np.random.default_rng(2).standard_normal((5, 3))
    index = (np.array([0, 9, -1, -7]), np.array([2, 2, -4, 0]))
    for mode in ("clip", "drop"):
        for how in ("add", "multiply", "max"):
            want = getattr(jnp.asarray(x).at[index], how)(2.0, mode=mode)
            got = getattr(tl.tensor(x).at[index], how)(2.0, mode=mode)
            np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-14)
    for mode in ("clip", "fill"):
        want = jnp.asarray(x).at[index].get(mode=mode)
        np.testing.assert_array_equal(tl.tensor(x).at[index].get(mode=mode).numpy(), np.asarray(want))

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


# ---------------------------------------------------------------- a narrowing conversion's range check
@pytest.mark.parametrize(
    "data, dtype",
    [
        ([2.0**63], "int64"),  # NumPy's float64 bound 2**63 - 1 rounds to 2**63: the value passed and wrapped
        ([-(2.0**63) * 1.5], "int64"),
        ([np.nan, 1e20], "int32"),  # min and max of an array with a NaN are NaN: the 1e20 was not seen
        ([1e20, np.nan, 3.0], "int64"),
        ([np.inf], "int32"),
    ],
)
@pytest.mark.parametrize("traced", [False, True])
def test_tensor_of_floats_out_of_an_int_range_overflows(data, dtype, traced):
    # tl.tensor(floats, dtype=int) raises OverflowError where a value does not fit (DESIGN's integer rule); eagerly
    # 2.0**63 into int64 gave -2**63 (NumPy compares with the bound rounded to float64) and a NaN beside 1e20 hid it.
    # Reference: the exact comparison of Python's float with the int bound (math.trunc), as the traced check did.
    make = tl.function(lambda x: tl.tensor(x, dtype=dtype)) if traced else (lambda x: tl.tensor(x, dtype=dtype))
    with pytest.raises(OverflowError, match=rf"tensor: data holds .*, which does not fit in {dtype}"):
        make(np.array(data))


@pytest.mark.parametrize("traced", [False, True])
def test_tensor_of_floats_that_truncate_into_an_int_range_converts(traced):
    # NumPy's astype truncates toward zero: 2147483647.5 is int32's 2147483647 and -2147483648.5 its -2147483648;
    # both raised OverflowError though they fit once truncated.  Reference: numpy's astype of those values.
    data = np.array([2147483647.5, -2147483648.5, -0.9, 3.7])
    make = tl.function(lambda x: tl.tensor(x, dtype="int32")) if traced else (lambda x: tl.tensor(x, dtype="int32"))
    np.testing.assert_array_equal(make(data).numpy(), data.astype(np.int32))


# ---------------------------------------------------------------- einsum's casting= without dtype=
@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int64", "float64"), ("int32", "int64"), ("float64",) * 2])
def test_einsum_casting_without_dtype_follows_numpy(casting, dtypes):
    # numpy.einsum casts its operands to their common dtype under `casting`: 'no' and 'equiv' refuse operands of
    # different dtypes (TypeError); tensorlib ignored casting without dtype= and promoted.  Reference: numpy.einsum.
    a, b = np.arange(1, 4).astype(dtypes[0]), np.arange(2, 5).astype(dtypes[1])
    try:
        want = np.einsum("i,i->", a, b, casting=casting)
    except TypeError:
        with pytest.raises(TypeError, match=rf"Einsum: casting='{casting}' does not allow the operands' dtypes"):
            tl.einsum("i,i->", a, b, casting=casting)
        return
    got = tl.einsum("i,i->", a, b, casting=casting)
    assert got.dtype == want.dtype and got.numpy() == want


def test_einsum_refuses_an_unknown_casting():
    with pytest.raises(ValueError, match=r"Einsum: casting must be one of 'no', .* got 'bogus'"):
        tl.einsum("i,i->", np.ones(2), np.ones(2), casting="bogus")


# ---------------------------------------------------------------- reshape / ravel order 'A' and 'K' of NumPy arrays
_B = np.arange(24.0).reshape(2, 3, 4)
LAYOUTS = {
    "fortran": np.asfortranarray(_B),
    "transposed": _B.transpose(2, 0, 1),
    "reversed": _B[:, ::-1].transpose(1, 2, 0),
    "strided": np.asfortranarray(_B)[:, 1:],
    "c": _B,
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ravel_and_reshape_follow_a_numpy_arrays_layout(layout):
    # numpy.reshape(a, shape, order='A') reads a Fortran-contiguous array in Fortran order, and ravel(order='K') in
    # memory order; tl.reshape and tl.ravel of such a NumPy array read it in C order (a silently permuted result).
    # A Tensor has no layout: C order.  Reference: numpy.reshape and numpy.ravel of the same arrays.
    a = LAYOUTS[layout]
    for order in ("A", "K"):
        np.testing.assert_array_equal(tl.ravel(a, order=order).numpy(), np.ravel(a, order=order))
    np.testing.assert_array_equal(tl.reshape(a, (4, -1), order="A").numpy(), np.reshape(a, (4, -1), order="A"))
    np.testing.assert_array_equal(tl.ravel(tl.tensor(a), order="K").numpy(), np.ravel(np.ascontiguousarray(a)))


# ---------------------------------------------------------------- transposed convolutions with groups=
def _conv_transpose_1d_reference(x, kernel, stride, pad, dilation, groups):
    """PyTorch's conv_transpose1d(groups=) as a NumPy scatter: each input cell of channel group G spreads
    ``x * kernel[tap, :, its channel]`` over output channels ``[G O, (G + 1) O)`` at ``i s + tap d - pad``."""
    batch, width, cin = x.shape
    taps, per_group, _ = kernel.shape
    inputs = cin // groups
    out = (width - 1) * stride + (taps - 1) * dilation + 1 - 2 * pad
    y = np.zeros((batch, out, per_group * groups))
    for i in range(width):
        for t in range(taps):
            p = i * stride + t * dilation - pad
            if 0 <= p < out:
                for G in range(groups):
                    channels = slice(G * inputs, (G + 1) * inputs)
                    y[:, p, G * per_group : (G + 1) * per_group] += x[:, i, channels] @ kernel[t, :, channels].T
    return y


@pytest.mark.parametrize("groups, cin, cout", [(2, 4, 6), (4, 4, 8), (3, 6, 3)])
@pytest.mark.parametrize("stride, pad, dilation", [(1, 0, 1), (2, 1, 1), (2, 1, 2)])
def test_conv_transpose_layers_take_groups(groups, cin, cout, stride, pad, dilation):
    # PyTorch's ConvTranspose1d/2d take groups= (a grouped decoder, the transpose of a grouped Conv); tensorlib's
    # Conv1DTranspose and Conv2DTranspose did not (a TypeError), so such a model could not be ported.  Reference: a
    # NumPy scatter loop over taps and groups; the input gradient against central differences; torch's
    # conv_transpose2d where installed.
    rng = np.random.default_rng(3)
    layer = tl.nn.Conv1DTranspose(
        cin, cout, 3, strides=stride, padding=(pad, pad), dilations=dilation, groups=groups, use_bias=False,
        seed=0, dtype="float64",
    )  # fmt: skip
    assert layer.kernel.shape == (3, cout // groups, cin)
    x = rng.standard_normal((2, 5, cin))
    want = _conv_transpose_1d_reference(x, layer.kernel.numpy(), stride, pad, dilation, groups)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12, atol=1e-12)
    weights = rng.standard_normal(want.shape)
    g = tl.grad(lambda a: tl.sum(layer(a) * weights))(tl.tensor(x)).numpy()
    kernel = layer.kernel.numpy()
    fd = central_differences(
        lambda a: np.sum(_conv_transpose_1d_reference(a, kernel, stride, pad, dilation, groups) * weights), x
    )
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    square = tl.nn.Conv2DTranspose(
        cin, cout, 3, strides=stride, padding=((pad, pad),) * 2, dilations=dilation, groups=groups, seed=1,
        dtype="float64", data_format="NCHW",
    )  # fmt: skip
    image = rng.standard_normal((2, cin, 4, 5))
    got = square(image).numpy()
    rows = [  # each row of the image is a 1-D transposed conv per kernel row, summed into the output rows
        _conv_transpose_1d_reference(
            np.moveaxis(image[:, :, r], 1, -1), square.kernel.numpy()[kr], stride, pad, dilation, groups
        )  # fmt: skip
        for r in range(4)
        for kr in range(3)
    ]
    out_rows = (4 - 1) * stride + 2 * dilation + 1 - 2 * pad
    expected = np.zeros((2, out_rows, rows[0].shape[1], cout))
    for r in range(4):
        for kr in range(3):
            p = r * stride + kr * dilation - pad
            if 0 <= p < out_rows:
                expected[:, p] += rows[r * 3 + kr]
    np.testing.assert_allclose(got, np.moveaxis(expected, -1, 1) + square.bias.numpy()[:, None, None], atol=1e-12)
    torch = pytest.importorskip("torch")
    weight = torch.tensor(np.transpose(square.kernel.numpy(), (3, 2, 0, 1)))
    ref = torch.nn.functional.conv_transpose2d(
        torch.tensor(image), weight, torch.tensor(square.bias.numpy()), stride=stride, padding=pad,
        dilation=dilation, groups=groups,
    )  # fmt: skip
    np.testing.assert_allclose(got, ref.numpy(), atol=1e-12)


def test_conv_transpose_groups_must_divide_the_channels():
    with pytest.raises(ValueError, match=r"Conv2DTranspose: groups=3 must divide in_channels=4 and out_channels=6"):
        tl.nn.Conv2DTranspose(4, 6, 3, groups=3)

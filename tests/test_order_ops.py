"""Order and gather ops against NumPy where NumPy's arguments used to be refused or misread: roll's
broadcast shifts and repeated axes, take_along_axis's broadcasting, argmax/argmin's keepdims, sort's
kind/stable, and out-of-bounds indices naming the shapes; each case eagerly and under tl.function,
gradients against float64 central finite differences."""

import numpy as np
import pytest
from _helpers import MODES
from _helpers import assert_same as _same
from _helpers import run_in_mode as _run

import tensorlib as tl


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


_A = np.arange(24.0).reshape(2, 3, 4)


# Each raised "duplicate axis" or "shift and axis must have the same length"; NumPy adds the shifts
# along each axis (broadcasting shift against axis).
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "shift, axis",
    [((1, 2), (1, 1)), ((1, 2), 0), (1, (2, -1)), ((1, 1, 1), (-1, 2, -1)), ((2, -1), (0, -3)), (5, (0, 1, 2))],
)
def test_roll_broadcasts_shift_and_axis_as_numpy(mode, shift, axis):
    _same(_run(mode, lambda t: tl.roll(t, shift, axis=axis), _A), np.roll(_A, shift, axis=axis))


def test_roll_repeated_axis_gradient_and_errors():
    w = np.random.default_rng(0).normal(size=_A.shape)
    grad = tl.grad(lambda t: tl.sum(tl.roll(t, (1, 3), axis=(2, -1)) * w))(tl.tensor(_A)).numpy()
    np.testing.assert_allclose(grad, _fd_grad(lambda a: np.sum(np.roll(a, (1, 3), axis=(2, -1)) * w), _A), atol=1e-8)
    with pytest.raises(ValueError, match=r"roll: shift \(1, 2\) and axis \(0, 1, 2\) do not broadcast .*\(2, 3, 4\)"):
        tl.roll(tl.tensor(_A), (1, 2), axis=(0, 1, 2))
    with pytest.raises(ValueError, match=r"roll \(shape \(2, 3, 4\)\): axis 3 is out of range"):
        tl.roll(tl.tensor(_A), 1, axis=(0, 3))


# NumPy broadcasts x and indices outside the axis; this raised "differ outside axis".
_TAKE_ALONG = [
    ((3, 4), (1, 2), 1),
    ((3, 1), (3, 5), 1),
    ((1, 4), (3, 2), -1),
    ((2, 1, 4), (1, 3, 2), 2),
    ((2, 3, 1), (4, 3, 5), 0),
    ((3, 4), (1, 0), 1),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("xshape, ishape, axis", _TAKE_ALONG)
def test_take_along_axis_broadcasts_as_numpy(mode, xshape, ishape, axis):
    rng = np.random.default_rng(1)
    x = rng.normal(size=xshape)
    n = xshape[axis]
    indices = rng.integers(-n, n, size=ishape)  # negatives and repeats
    want = np.take_along_axis(x, indices, axis)
    _same(_run(mode, lambda t: tl.take_along_axis(t, indices, axis), x), want)
    w = rng.normal(size=want.shape)
    grad = _run(mode, tl.grad(lambda t: tl.sum(tl.take_along_axis(t, indices, axis) * w)), x).numpy()
    np.testing.assert_allclose(grad, _fd_grad(lambda a: np.sum(np.take_along_axis(a, indices, axis) * w), x), atol=1e-8)


def test_take_along_axis_not_broadcastable_names_shapes():
    with pytest.raises(
        ValueError, match=r"take_along_axis: x \(shape \(3, 4\), float64\) and indices \(shape \(2, 1\)"
    ):
        tl.take_along_axis(tl.tensor(np.ones((3, 4))), np.zeros((2, 1), dtype=np.int64), 1)


@pytest.mark.parametrize("mode", MODES)
def test_out_of_bounds_indices_name_the_shapes(mode):
    x = np.ones((3, 4))
    pattern = r"^GatherV2: index 5 is out of bounds for axis 0 with size 3 \(params shape \(3, 4\) float64, indices shape \(2,\)"
    with pytest.raises(IndexError, match=pattern):
        _run(mode, lambda t: tl.take(t, [0, 5], axis=0), x)
    pattern = r"^TakeAlongAxis: index -5 is out of bounds for axis 1 with size 4 \(x shape \(3, 4\) float64, indices shape \(3, 1\)"
    with pytest.raises(IndexError, match=pattern):
        _run(mode, lambda t: tl.take_along_axis(t, np.full((3, 1), -5), 1), x)


# argmax/argmin had no keepdims (a TypeError); NumPy's keeps the reduced axis, or every axis for None.
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_keepdims_as_numpy(mode, axis, keepdims, name):
    x = np.array([[1.0, np.nan, 3.0], [3.0, -1.0, 3.0]])
    got = _run(mode, lambda t: getattr(tl, name)(t, axis=axis, keepdims=keepdims), x)
    _same(got, getattr(np, name)(x, axis=axis, keepdims=keepdims))
    _same(getattr(tl.tensor(x), name)(axis=axis, keepdims=True), getattr(np, name)(x, axis=axis, keepdims=True))


def test_sort_takes_numpys_kind_and_stable():
    x = np.array([[3.0, np.nan, 1.0, 1.0, -np.inf]])
    for kwargs in ({"kind": "stable"}, {"kind": "quicksort"}, {"stable": True}, {"kind": "heapsort", "stable": None}):
        _same(tl.sort(tl.tensor(x), **kwargs), np.sort(x, **kwargs))
    with pytest.raises(ValueError, match="sort: kind must be"):
        tl.sort(tl.tensor(x), kind="bogus")


def test_cumprod_of_an_unknown_axis_length_runs():
    # It raised a bare TypeError, then a ValueError asking for the length (the product was a scan of
    # log2(n) steps); a Cumprod op needs no length.
    x = np.array([[2.0, 0.0, 3.0, 0.0], [1.5, -2.0, 0.5, 4.0], [0.0, 1.0, 2.0, 3.0]])
    f = tl.function(lambda t: tl.cumprod(t, axis=0), input_signature=[tl.TensorSpec((None, None), "float64")])
    np.testing.assert_array_equal(f(x).numpy(), np.cumprod(x, axis=0))
    g = tl.function(
        tl.grad(lambda t: tl.sum(tl.cumprod(t, axis=1))), input_signature=[tl.TensorSpec((None, 4), "float64")]
    )
    np.testing.assert_array_equal(g(x).numpy(), tl.grad(lambda t: tl.sum(tl.cumprod(t, axis=1)))(x).numpy())

"""Array manipulation and indexing at their edges, against NumPy: non-integral sizes and offsets,
0-d inputs, empty pieces, NumPy's axis=None; each case eagerly and under tl.function."""

import numpy as np
import pytest
from _helpers import MODES
from _helpers import assert_same as _same
from _helpers import run_in_mode as _run

import tensorlib as tl

_X = np.arange(24.0)
_M = np.ones((3, 3))

# int() truncated each of these (reshape to (2, 12), x[1:], the k=3 rotation, ...); NumPy refuses most.
_FRACTIONAL = [
    ("reshape: shape", lambda t: tl.reshape(t, (2.5, 12)), lambda a: np.reshape(a, (2.5, 12))),
    ("reshape: shape", lambda t: t.reshape(2.9, 12), lambda a: a.reshape(2.9, 12)),
    ("broadcast_to: shape", lambda t: tl.broadcast_to(t[0], (2.9,)), lambda a: np.broadcast_to(a[0], (2.9,))),
    ("tile: reps", lambda t: tl.tile(t, 1.5), lambda a: np.tile(a, 1.5)),
    ("StridedSlice: a slice bound", lambda t: t[1.5:], lambda a: a[1.5:]),
    ("StridedSlice: a slice bound", lambda t: t[:3:1.0], lambda a: a[:3:1.0]),
    ("concat: axis", lambda t: tl.concat([t, t], 0.0), lambda a: np.concatenate([a, a], 0.0)),
    ("stack: axis", lambda t: tl.stack([t, t], 0.9), lambda a: np.stack([a, a], 0.9)),
    ("take: axis", lambda t: tl.take(t, [1], axis=0.5), lambda a: np.take(a, [1], axis=0.5)),
    ("split: points", lambda t: tl.split(t, [2.5]), lambda a: np.split(a, [2.5])),
    ("transpose: perm", lambda t: tl.transpose(tl.reshape(t, (4, 6)), (1.0, 0.0)), None),
    ("expand_dims: axis", lambda t: tl.expand_dims(t, 0.0), lambda a: np.expand_dims(a, 0.0)),
    ("diff: order n", lambda t: tl.diff(t, 1.5), lambda a: np.diff(a, 1.5)),
    ("cumsum: axis", lambda t: tl.cumsum(t, 0.0), lambda a: np.cumsum(a, 0.0)),
    (
        "diagonal: offset, axis1 and axis2",
        lambda t: tl.diagonal(tl.reshape(t, (4, 6)), 1.5),
        lambda a: np.diagonal(a.reshape(4, 6), 1.5),
    ),
    ("roll: shift", lambda t: tl.roll(t, 1.5), None),  # NumPy rolls by 1.5 % 24 somehow
    ("tril: k", lambda t: tl.tril(tl.reshape(t, (4, 6)), 0.5), None),  # NumPy compares columns with 0.5
    ("rot90: k", lambda t: tl.rot90(tl.reshape(t, (4, 6)), 1.5), None),  # NumPy rotates by k=3
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what, f, ref", _FRACTIONAL)
def test_a_fractional_size_offset_or_axis_is_a_type_error_not_truncated(mode, what, f, ref):
    if ref is not None:
        with pytest.raises(TypeError):
            ref(_X)
    with pytest.raises(TypeError, match=f"^{what} must be (an integer|integers), got"):
        _run(mode, f, _X)


def test_a_fractional_shape_is_a_type_error_in_creation_too():
    with pytest.raises(TypeError):
        np.zeros((2.5,))
    with pytest.raises(TypeError, match=r"^full: shape must be integers, got \(2\.5,\)"):
        tl.zeros((2.5,))
    with pytest.raises(TypeError, match=r"^RandomStandardNormal: shape must be integers, got \(2\.5, 3\)"):
        tl.random.normal((2.5, 3), seed=0)
    with pytest.raises(TypeError, match="only integer tensors can be used as an index, got float32"):
        tl.tensor(_X)[: tl.tensor(2.7)]


def test_integer_sizes_of_every_kind_still_pass():
    t = tl.tensor(_X)
    _same(tl.reshape(t, np.array([2, 12])), _X.reshape(2, 12))
    _same(tl.reshape(t, (np.int32(4), tl.tensor(6))), _X.reshape(4, 6))
    _same(t[np.int8(1) : tl.tensor(7) : np.int64(2)], _X[1:7:2])
    _same(tl.tile(t[:2], np.int64(2)), np.tile(_X[:2], 2))


@pytest.mark.parametrize("mode", MODES)
def test_take_with_axis_none_takes_from_the_flattened_input_as_numpy(mode):
    x = np.arange(12.0).reshape(3, 4)
    # It raised int()'s TypeError on None.
    _same(_run(mode, lambda t: tl.take(t, np.array([[11, 0], [-1, 5]]), axis=None), x), np.take(x, [[11, 0], [-1, 5]]))


def test_take_with_axis_none_gradient_adds_up_repeated_indices():
    x = np.arange(6.0).reshape(2, 3)
    g = tl.grad(lambda t: tl.sum(tl.take(t, [5, 5, 0, -1], axis=None) * tl.tensor([1.0, 2.0, 3.0, 4.0], "float64")))
    np.testing.assert_array_equal(g(tl.tensor(x)).numpy(), [[3.0, 0.0, 0.0], [0.0, 0.0, 7.0]])
    tl.testing.check_grads(lambda t: tl.take(t, [5, 5, 0, -1], axis=None), (x,), order=2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "f, ref, x",
    [
        # Each raised a bare IndexError ("tuple index out of range") or iterated over a 0-d array.
        (lambda t: tl.repeat(t, 3, axis=0), lambda a: np.repeat(a, 3, axis=0), np.array(2.0)),
        (lambda t: tl.repeat(t, 2, axis=-1), lambda a: np.repeat(a, 2, axis=-1), np.array(2.0)),
        (lambda t: tl.repeat(t, [], axis=1), lambda a: np.repeat(a, [], axis=1), np.zeros((2, 0))),
        (lambda t: tl.squeeze(t, 0), lambda a: np.squeeze(a, 0), np.array(2.0)),
        (lambda t: tl.squeeze(t, -1), lambda a: np.squeeze(a, -1), np.array(2.0)),
        (lambda t: tl.split(t, np.array(3)), lambda a: np.split(a, np.array(3)), _X),
        (lambda t: tl.array_split(t, np.array(5)), lambda a: np.array_split(a, np.array(5)), _X),
        (lambda t: tl.transpose(t, (-1, 0, 1)), lambda a: np.transpose(a, (-1, 0, 1)), _X.reshape(2, 3, 4)),
        (lambda t: t.transpose(-2, -1, 0), lambda a: a.transpose(-2, -1, 0), _X.reshape(2, 3, 4)),
    ],
)
def test_zero_d_inputs_empty_repeats_array_sections_and_negative_perms_match_numpy(mode, f, ref, x):
    got, want = _run(mode, f, x), ref(x)
    for g, w in zip(got, want) if isinstance(want, list) else [(got, want)]:
        _same(g, w)


@pytest.mark.parametrize("mode", MODES)
def test_squeeze_of_a_0d_tensor_still_refuses_other_axes(mode):
    with pytest.raises(ValueError, match=r"^Squeeze: axis 1 is out of range for a tensor of rank 0"):
        _run(mode, lambda t: tl.squeeze(t, 1), np.array(2.0))


def test_transpose_refuses_an_axis_out_of_range_naming_it():
    with pytest.raises(ValueError, match=r"^Transpose: perm \(3, 0, 1\) is not a permutation"):
        tl.transpose(tl.ones((2, 3, 4)), (3, 0, 1))


def test_rot90_with_three_axes_names_rot90():
    # It failed with "too many values to unpack (expected 2)".
    with pytest.raises(ValueError, match=r"^rot90: axes must be two different axes, got \(0, 1, 2\)"):
        tl.rot90(tl.ones((2, 2, 2)), 1, (0, 1, 2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "x, value",
    [(np.arange(3), 2.7), (np.arange(3, dtype=np.int32), np.nan), (np.arange(3.0), 1 + 2j), (np.arange(3), np.inf)],
)
def test_pad_refuses_a_constant_the_dtype_cannot_hold_as_tensorflow(mode, x, value):
    # NumPy pads [0, 1, 2] with 2.7 as [2, 0, 1, 2, 2]; tensorlib did too, silently.
    with pytest.raises(TypeError, match=r"^pad: constant_values .* cannot be held exactly by x's dtype"):
        _run(mode, lambda t: tl.pad(t, 1, constant_values=value), x)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "x, value", [(np.arange(3), 2.0), (np.arange(3), -1), (np.arange(3.0), 0.1), (np.ones(2) > 0, 0)]
)
def test_pad_with_a_constant_the_dtype_holds_matches_numpy(mode, x, value):
    _same(_run(mode, lambda t: tl.pad(t, 1, constant_values=value), x), np.pad(x, 1, constant_values=value))


def test_pad_with_an_int_outside_the_dtype_is_an_overflow_error():
    with pytest.raises(OverflowError, match=r"^pad: constant_values 1099511627776 does not fit in int32"):
        tl.pad(np.arange(3, dtype=np.int32), 1, constant_values=2**40)


# ------------------------------------------------------------------ linspace with tensor bounds
@pytest.mark.parametrize("num", [0, 1, 2, 5, 11])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_of_tensor_bounds_is_numpys_and_differentiable(num, dtype):
    rng = np.random.default_rng(num)
    a, b = rng.standard_normal(2) * 7.0
    expected = np.linspace(a, b, num, dtype=dtype)
    start, stop = tl.tensor(a, dtype="float64"), tl.tensor(b, dtype="float64")
    weights = rng.standard_normal(num)
    for f in (
        lambda s, e: tl.linspace(s, e, num, dtype=dtype),
        tl.function(lambda s, e: tl.linspace(s, e, num, dtype=dtype)),
    ):
        out = f(start, stop)
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(out.numpy(), expected)  # bit for bit: NumPy's steps, in float64
    # d/dstart = 1 - i/(num-1), d/dstop = i/(num-1): the gradient was silently 0 (bounds read by .item())
    fractions = np.arange(num) / (num - 1) if num > 1 else np.zeros(num)
    loss = lambda s, e: tl.sum(tl.cast(tl.linspace(s, e, num, dtype=dtype), "float64") * weights)
    rtol = 1e-12 if dtype == "float64" else 1e-6  # the gradient passes the cast to float32
    for grad in (tl.grad(loss, argnums=(0, 1)), tl.function(tl.grad(loss, argnums=(0, 1)))):
        d_start, d_stop = grad(start, stop)
        np.testing.assert_allclose(
            d_start.numpy(), np.sum(weights * (1 - fractions)) if num > 1 else weights.sum(), rtol=rtol
        )
        np.testing.assert_allclose(d_stop.numpy(), np.sum(weights * fractions), rtol=rtol, atol=1e-15)

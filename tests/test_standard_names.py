"""The Array API standard's spellings and dtype queries at ``tl.`` (tensorlib/ops/standard.py), against NumPy 2
(whose ``np.acos``, ``np.permute_dims``, ``np.unstack``, ``np.isdtype`` ... follow the standard), float64 finite
differences through ``check_grads``, and array_api_strict's promotion table (importorskip)."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("acos", -0.9, 0.9),
        ("asin", -0.9, 0.9),
        ("atan", -3, 3),
        ("acosh", 1.1, 4),
        ("asinh", -3, 3),
        ("atanh", -0.9, 0.9),
    ],
)
def test_inverse_trig_names_match_numpy_values_and_gradients(name, low, high):
    x = RNG.uniform(low, high, size=(3, 4))
    fn = getattr(tl, name)
    np.testing.assert_allclose(fn(tl.tensor(x)).numpy(), getattr(np, name)(x), rtol=1e-14)
    check_grads(fn, (tl.tensor(x),), order=2)


def test_atan2_pow_bitwise_invert_match_numpy():
    y, x = RNG.normal(size=(2, 5))
    np.testing.assert_allclose(tl.atan2(tl.tensor(y), tl.tensor(x)).numpy(), np.atan2(y, x), rtol=1e-14)
    base = RNG.uniform(0.5, 2, size=5)
    np.testing.assert_allclose(tl.pow(tl.tensor(base), 2.5).numpy(), np.pow(base, 2.5), rtol=1e-14)
    ints = np.array([0, 5, -3], dtype=np.int32)
    out = tl.bitwise_invert(tl.tensor(ints))
    assert out.dtype == np.int32 and out.numpy().tolist() == np.bitwise_invert(ints).tolist()
    check_grads(lambda a, b: tl.pow(a, b), (tl.tensor(base), tl.tensor(base[::-1].copy())), order=1)


def test_permute_dims_and_unstack_match_numpy_with_gradients():
    a = RNG.normal(size=(2, 3, 4))
    np.testing.assert_array_equal(tl.permute_dims(tl.tensor(a), (2, 0, 1)).numpy(), np.permute_dims(a, (2, 0, 1)))
    for axis in (0, 1, -1):
        got = tl.unstack(tl.tensor(a), axis=axis)
        want = np.unstack(a, axis=axis)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    # d/da of sum_i i * unstack(a)[i]: slice i gets weight i (a NumPy formula for the reference)
    w = np.arange(3.0)[None, :, None] * np.ones((2, 1, 4))
    g = tl.grad(lambda t: sum(i * tl.sum(s) for i, s in enumerate(tl.unstack(t, axis=1))))(tl.tensor(a))
    np.testing.assert_array_equal(g.numpy(), w)
    check_grads(lambda t: tl.unstack(t, axis=2)[1] * tl.unstack(t, axis=2)[3], (tl.tensor(a),), order=2)


def test_unstack_traced_and_errors():
    a = RNG.normal(size=(3, 2))
    f = tl.function(lambda t: tl.stack(tl.unstack(t)[::-1]))
    np.testing.assert_array_equal(f(tl.tensor(a)).numpy(), a[::-1])
    with pytest.raises(ValueError, match=r"unstack: axis 2 is out of range for a tensor of shape \(3, 2\)"):
        tl.unstack(tl.tensor(a), axis=2)
    g = tl.function(lambda t: tl.unstack(t), input_signature=[tl.TensorSpec((None, 2), "float64")])
    with pytest.raises(ValueError, match="unstack: the size of axis 0 .* must be known"):
        g(tl.tensor(a))
    assert len(tl.unstack(tl.zeros((0, 3)))) == 0


def test_astype_asarray_empty():
    x = np.array([1.7, -1.7, 2.5])
    got = tl.astype(tl.tensor(x), "int32")
    assert got.dtype == np.int32 and got.numpy().tolist() == x.astype(np.int32).tolist()
    t = tl.tensor(x)
    assert tl.asarray(t) is t
    assert tl.asarray(t, dtype="float32").dtype == np.float32
    assert tl.asarray([1, 2]).dtype == np.int64 and tl.asarray([1.0]).dtype == np.float32
    e = tl.empty((2, 3), dtype="float64")
    assert e.shape == (2, 3) and e.dtype == np.float64 and not e.numpy().any()
    assert tl.empty_like(tl.tensor([[1, 2]], "int32")).dtype == np.int32
    with pytest.raises(ValueError, match="astype: device 'cuda:0'"):
        tl.astype(t, "float32", device="cuda:0")
    assert tl.nan != tl.nan and tl.inf == np.inf and tl.pi == np.pi and tl.e == np.e and tl.newaxis is None
    assert tl.tensor(x)[tl.newaxis].shape == (1, 3)


TYPED = ["bool", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("a", TYPED)
@pytest.mark.parametrize("b", TYPED)
def test_result_type_is_the_dtype_arithmetic_gives(a, b):
    x, y = tl.ones((2,), dtype=a), tl.ones((2,), dtype=b)
    want = (x * y).dtype if (a, b) != ("bool", "bool") else np.dtype(bool)  # what tensorlib's arithmetic gives
    assert tl.result_type(x, y) == want == np.result_type(a, b)
    assert tl.result_type(a, b) == want


@pytest.mark.parametrize(
    ("typed", "scalar"),
    [("float32", 2.0), ("float16", 2), ("int32", 1.5), ("int64", 3), ("bool", 1), ("bool", 1.0), ("float32", 1j)],
)
def test_result_type_with_python_scalars_is_the_weak_promotion_of_arithmetic(typed, scalar):
    x = tl.ones((2,), dtype=typed)
    assert tl.result_type(x, scalar) == (x + scalar).dtype == tl.result_type(scalar, x)


def test_result_type_scalars_only_and_peer():
    assert tl.result_type(1, 2.0) == np.float32  # JAX's weak defaults: the highest kind's default dtype
    assert tl.result_type(True) == np.bool_ and tl.result_type(1) == np.int64 and tl.result_type(1j) == np.complex64
    xp = pytest.importorskip("array_api_strict")
    standard = [d for d in TYPED if d != "float16"]  # the standard has no float16
    for a in standard:
        for b in standard:
            try:
                want = xp.result_type(getattr(xp, a), getattr(xp, b))
            except TypeError:  # the standard leaves mixed kinds (int32 with float32, bool with numbers) undefined
                continue
            assert tl.result_type(a, b) == want._np_dtype


def test_can_cast_isdtype_finfo_iinfo_match_numpy():
    for a in TYPED:
        for b in TYPED:
            assert tl.can_cast(a, b) == np.can_cast(a, b, casting="safe")
    assert tl.can_cast(tl.tensor([1.0], "float64"), "float32") is False
    for d in TYPED:
        for kind in ("bool", "signed integer", "integral", "real floating", "complex floating", "numeric"):
            assert tl.isdtype(d, kind) == np.isdtype(np.dtype(d), kind)
    assert tl.isdtype(tl.tensor([1.0]).dtype, ("integral", tl.float32))
    for d in ("float16", "float32", "float64", "complex64"):
        assert tl.finfo(d).eps == np.finfo(d).eps and tl.finfo(d).max == np.finfo(d).max
    assert tl.finfo(tl.tensor([1.0])).dtype == np.float32
    assert tl.iinfo("int32").min == np.iinfo(np.int32).min and tl.iinfo(tl.tensor([1])).max == np.iinfo(np.int64).max
    with pytest.raises(TypeError, match="finfo: int32 is not a floating dtype"):
        tl.finfo("int32")
    with pytest.raises(TypeError, match="iinfo: float32 is not an integer dtype"):
        tl.iinfo("float32")
    with pytest.raises(TypeError, match="can_cast: 'int8' is neither a tensor nor a dtype tensorlib holds"):
        tl.can_cast("int8", "int32")


def test_numpy_calls_reach_the_standard_names():
    a = RNG.normal(size=(2, 3))
    t = tl.tensor(a)
    got = np.unstack(t, axis=1)
    assert all(isinstance(g, tl.Tensor) for g in got)
    np.testing.assert_array_equal(np.stack([g.numpy() for g in got]), np.stack(np.unstack(a, axis=1)))
    out = np.astype(t, np.int32)
    assert isinstance(out, tl.Tensor) and out.numpy().tolist() == a.astype(np.int32).tolist()
    np.testing.assert_array_equal(np.permute_dims(t, (1, 0)).numpy(), a.T)

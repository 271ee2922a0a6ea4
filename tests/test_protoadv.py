"""NumPy's own functions on Tensors, attacked as an adversary: ``np.f(t)`` must equal ``np.f(t.numpy())``
in value, dtype and shape (NumPy itself is the reference, with float64 central differences for the
gradients), or raise one clear error naming the function and the argument.  Covers the NEP 13/18
protocol (``tensorlib/numpy_protocol.py``), arguments a caller leaves out (they take NumPy's defaults and
meanings), and the ndarray-style methods on Tensor."""

import inspect

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import numpy_protocol
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)
X = RNG.normal(size=(3, 4))
SKEWED = (lambda a: a @ a.T + 3.0 * np.eye(3))(RNG.normal(size=(3, 3))) + np.triu(RNG.normal(size=(3, 3)), 1)


@pytest.mark.parametrize("upper", [False, True])
def test_np_linalg_cholesky_reads_numpy_s_triangle(upper):
    # np.linalg.cholesky(t) ran tl.linalg.cholesky's default symmetrize_input=True: on a matrix whose
    # triangles differ it factored (a + a.T) / 2, 0.36 off NumPy's factor of the lower triangle.
    got = np.linalg.cholesky(tl.tensor(SKEWED), upper=upper)
    np.testing.assert_allclose(got.numpy(), np.linalg.cholesky(SKEWED, upper=upper), rtol=1e-12, atol=1e-12)
    check_grads(lambda a: np.linalg.cholesky(a, upper=upper), [SKEWED], order=1)


def test_tl_cholesky_upper_without_symmetrizing_reads_the_upper_triangle():
    # NumPy and PyTorch factor the upper triangle for upper=True; tensorlib read the lower one (0.71 off).
    got = tl.linalg.cholesky(tl.tensor(SKEWED), upper=True, symmetrize_input=False).numpy()
    np.testing.assert_allclose(got, np.linalg.cholesky(SKEWED, upper=True), rtol=1e-12, atol=1e-12)
    upper = np.triu(SKEWED) + np.triu(SKEWED, 1).T  # the symmetric matrix of the upper triangle
    np.testing.assert_allclose(got, np.linalg.cholesky(upper).T, rtol=1e-12, atol=1e-12)


# tensorlib parameters NumPy's function lacks, whose default cannot change what NumPy's call means.
_MEANING_NEUTRAL = {("pad", "constant_values")}  # np.pad passes it through **kwargs


def test_every_tensorlib_only_parameter_takes_numpy_s_meaning():
    # A parameter NumPy's function does not have keeps tensorlib's default in np.f(t); each one must either
    # be set by the protocol to NumPy's meaning or be listed here as neutral.
    numpy_protocol._build_table()
    for np_fn, (tl_fn, sig, renames, _params, defaults, _) in numpy_protocol._table.items():
        tl_sig = numpy_protocol._signature(tl_fn)
        if sig is None or tl_sig is None:
            continue
        numpy_names = {renames.get(name, name) for name in sig.parameters}
        for name, param in tl_sig.parameters.items():
            if name in numpy_names or param.default is inspect.Parameter.empty:
                continue
            assert name in defaults or (np_fn.__name__, name) in _MEANING_NEUTRAL, (np_fn, name)


I = np.arange(-5, 7).reshape(3, 4)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, x: np_.sum(x, dtype=float),
        lambda np_, x: np_.mean(x, axis=0, dtype=float),
        lambda np_, x: np_.prod(x[:, :2], dtype=complex),
        lambda np_, x: np_.cumsum(x, axis=1, dtype=float),
        lambda np_, x: np_.ones_like(x, dtype=float),
        lambda np_, x: np_.full_like(x, 2, dtype=complex),
        lambda np_, x: np_.add.reduce(x, dtype=float),
        lambda np_, x: np_.add.accumulate(x, axis=1, dtype=float),
        lambda np_, x: np_.astype(x, float),
        lambda np_, x: np_.astype(x, np_.float32),
    ],
)
@pytest.mark.parametrize("data", [I, X], ids=["int64", "float64"])
def test_python_float_and_complex_as_dtype_mean_numpy_s_float64_and_complex128(call, data):
    # np.sum(t, dtype=float) took tensorlib's reading of Python's float (the default float, float32): a
    # float64 tensor lost half its digits where NumPy keeps float64.
    want = call(np, data)
    got = call(np, tl.tensor(data))
    assert isinstance(got, tl.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.sum(0, np.float32),
        lambda x: x.sum(1, None, None, True),
        lambda x: x.sum(axis=1, keepdims=True, initial=2.0),
        lambda x: x.prod(0, np.float64),
        lambda x: x.mean(1, np.float64),
        lambda x: x.mean(),
        lambda x: x.var(0, None, None, 1),
        lambda x: x.std(None, None, None, 1, True),
        lambda x: x.std(0, ddof=1),
        lambda x: x.max(0, None, True),
        lambda x: x.min(1, None, False, 0.0),
        lambda x: x.argmax(1, None, keepdims=True),
        lambda x: x.argmin(None),
        lambda x: x.any(0, keepdims=True),
        lambda x: x.all(1),
        lambda x: x.cumsum(1, np.float64),
        lambda x: x.cumprod(0),
        lambda x: x.trace(1),
        lambda x: x.diagonal(1, 1, 0),
        lambda x: x.repeat(2, 0),
        lambda x: x.swapaxes(0, 1),
        lambda x: x.argsort(0),
        lambda x: x.ravel(),
        lambda x: x.flatten(),
    ],
)
def test_tensor_methods_take_ndarray_s_arguments(call):
    # Tensor.sum was tl.sum, whose second parameter is keepdims: t.sum(0, np.float32) kept the summed axis,
    # shape (1, 4) where ndarray.sum gives (4,), in float32; t.mean(1, np.float64) gave (3, 1).
    for data in (X.astype(np.float32), I):
        want = call(data)
        got = call(tl.tensor(data))
        assert isinstance(got, tl.Tensor), got
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_tensor_methods_keep_gradients_in_eager_and_traced_modes():
    f = lambda x: x.sum(0, np.float64, None, True) * x.std(1, None, None, 1, True) + x.cumsum(1)  # noqa: E731
    check_grads(f, [X], order=2)
    np.testing.assert_allclose(tl.function(f)(tl.tensor(X)).numpy(), f(X), rtol=1e-12)


def test_np_size_of_several_axes_is_their_product():
    # np.size(t, (0, 1)) (NumPy 2.4) raised "tuple indices must be integers or slices, not tuple".
    t = tl.tensor(np.ones((2, 3, 4)))
    for axis in (None, 1, -1, (0, 2), (2, -3), ()):
        assert np.size(t, axis) == np.size(np.ones((2, 3, 4)), axis), axis
    with pytest.raises(ValueError, match=r"out of range"):
        np.size(t, (0, 3))
    traced = tl.function(lambda x: x * np.size(x, (0, 1)))
    np.testing.assert_array_equal(traced(tl.tensor(X)).numpy(), X * 12)


@pytest.mark.parametrize("name", ["std", "var", "nanstd", "nanvar"])
def test_correction_is_numpy_s_other_name_for_ddof(name):
    # NumPy 2's np.std(t, correction=1) raised "argument correction=1 is not supported".
    f = getattr(np, name)
    data = X.copy()
    data[1, 2] = np.nan if name.startswith("nan") else data[1, 2]
    got = f(tl.tensor(data), axis=1, correction=1)
    np.testing.assert_allclose(got.numpy(), f(data, axis=1, correction=1), rtol=1e-13)
    check_grads(lambda x: f(x, axis=0, correction=1.5), [X], order=1)
    with pytest.raises(TypeError, match=rf"numpy\.{name}: arguments correction and ddof both set ddof"):
        f(tl.tensor(data), ddof=1, correction=1)  # NumPy refuses both too


V = RNG.normal(size=5)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, a, b: np_.add.outer(a, b),
        lambda np_, a, b: np_.multiply.outer(a[0], b),  # a 0-d left operand
        lambda np_, a, b: np_.subtract.outer(a, b[:2]),
        lambda np_, a, b: np_.maximum.outer(a[:3], b),
        lambda np_, a, b: np_.arctan2.outer(a, b[1:]),
        lambda np_, a, b: np_.power.outer(np_.abs(a), b),
        lambda np_, a, b: np_.add.outer(a, b, dtype=np_.float32),
    ],
)
def test_ufunc_outer_on_tensors_matches_numpy(call):
    # np.add.outer(t, t) raised "tensorlib has no implementation of numpy.add.outer".
    a, b = V, X
    want = call(np, a, b)
    got = call(np, tl.tensor(a), tl.tensor(b))
    assert isinstance(got, tl.Tensor) and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    got = call(np, a, tl.tensor(b))  # an ndarray on the left
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    if want.dtype == np.float64:
        check_grads(lambda a, b: call(np, a, b), [a, b], order=1)


def test_logical_and_or_reduce_are_all_and_any():
    # np.logical_and.reduce(t) raised "no implementation"; it is ufunc.reduce's all (axis 0 by default).
    data = X > 0
    for ufunc in (np.logical_and, np.logical_or):
        for kwargs in ({}, {"axis": 1}, {"axis": None}, {"axis": (0, 1), "keepdims": True}):
            want = ufunc.reduce(data, **kwargs)
            got = ufunc.reduce(tl.tensor(data), **kwargs)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(ufunc.reduce(tl.tensor(X)).numpy(), ufunc.reduce(X))


def test_ufunc_at_on_a_tensor_says_tensors_are_immutable_and_names_at():
    t = tl.tensor(V)
    with pytest.raises(TypeError, match=r"numpy\.add\.at: .*immutable.*t\.at\[indices\]\.add\(values\)"):
        np.add.at(t, [0, 0], 1.0)
    np.testing.assert_array_equal(t.numpy(), V)
    np.testing.assert_array_equal(t.at[[0, 0]].add(1.0).numpy(), V + [2.0, 0, 0, 0, 0])

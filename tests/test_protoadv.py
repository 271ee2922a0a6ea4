"""NumPy's own functions on Tensors, attacked as an adversary: ``np.f(t)`` must equal ``np.f(t.numpy())``
in value, dtype and shape (NumPy itself is the reference, with float64 central differences for the
gradients), or raise one clear error naming the function and the argument.  Covers the NEP 13/18
protocol (``tensorlib/numpy_protocol.py``), arguments a caller leaves out (they take NumPy's defaults and
meanings), and the ndarray-style methods on Tensor."""

import inspect

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_every_tensorlib_only_parameter_takes_numpy_s_meaning():
    # A parameter NumPy's function does not have keeps tensorlib's default in np.f(t) unless the protocol
    # sets it to NumPy's meaning.
    numpy_protocol._build_table()
    for np_fn, (tl_fn, sig, renames, _params, defaults, _) in numpy_protocol._table.items():
        tl_sig = numpy_protocol._signature(tl_fn)
        if sig is None or tl_sig is None:
            continue
        numpy_names = {renames.get(name, name) for name in sig.parameters}
        for name, param in tl_sig.parameters.items():
            if name in numpy_names or param.default is inspect.Parameter.empty:
                continue
            assert name in defaults, (np_fn, name)


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
    with pytest.raises(ValueError, match=rf"(?i){name}: ddof and correction can't both be given"):
        f(tl.tensor(data), ddof=1, correction=1)  # NumPy refuses both too (a ValueError)


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


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("width", [2, ((1, 3), (0, 2)), ((5, 0), (4, 6))])
def test_np_pad_index_modes_match_numpy_and_route_gradients(mode, width):
    # np.pad(t, 2, mode='reflect') (also edge, wrap, symmetric) raised "argument mode='reflect' is not supported".
    got = np.pad(tl.tensor(X), width, mode=mode)
    np.testing.assert_array_equal(got.numpy(), np.pad(X, width, mode=mode))
    check_grads(lambda x: np.pad(x, width, mode=mode), [X], order=1)
    traced = tl.function(lambda x: np.pad(x, width, mode=mode))
    np.testing.assert_array_equal(traced(tl.tensor(X)).numpy(), np.pad(X, width, mode=mode))


def test_np_pad_modes_it_cannot_run_raise_naming_them():
    t = tl.tensor(X)
    np.testing.assert_array_equal(np.pad(t, 1, constant_values=2.5).numpy(), np.pad(X, 1, constant_values=2.5))
    with pytest.raises(TypeError, match=r"numpy\.pad: mode='empty'"):  # (linear_ramp runs: tests/test_astensors.py)
        np.pad(t, 1, mode="empty")
    with pytest.raises(TypeError, match=r"numpy\.pad: mode='reflect' with reflect_type='other'"):
        np.pad(t, 1, mode="reflect", reflect_type="other")  # (odd runs: tests/test_newapiadv2.py)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: np.reshape(x, (4, 3), order="F"),
        lambda x: np.reshape(x, (2, -1, 3), order="F"),
        lambda x: np.reshape(x, -1, order="F"),
        lambda x: np.reshape(x, (6, 2), order="A"),
        lambda x: np.ravel(x, order="F"),
        lambda x: np.ravel(x, "K"),
        lambda x: x.reshape(2, 6, order="F"),
        lambda x: x.reshape((12,)),
        lambda x: x.flatten("F"),
        lambda x: x.ravel(order="F"),
    ],
)
def test_fortran_order_reshape_and_ravel_match_numpy(call):
    # np.reshape(t, s, order='F') and np.ravel(t, order='F') raised "argument order='F' is not supported".
    got = call(tl.tensor(X))
    np.testing.assert_array_equal(got.numpy(), call(X))
    check_grads(call, [X], order=1)


T3 = RNG.normal(size=(2, 3, 4))


@pytest.mark.parametrize(
    "call",
    [
        lambda a: np.matmul(a, a, axes=[(0, 1), (1, 0), (0, 1)]),
        lambda a: np.matmul(a, a, axes=[(-1, 0), (0, -1), (-2, -1)]),
        lambda a: np.matmul(a, a[0, :, 0], axes=[(2, 1), 0, 1]),
        lambda a: np.vecdot(a, a, axis=1),
        lambda a: np.vecdot(a, a[:, :, :1], axes=[0, 0]),
    ],
)
def test_gufunc_axes_and_axis_move_the_core_dimensions_as_numpy(call):
    # np.matmul(t, t, axes=[...]) and np.vecdot(t, t, axis=1) raised "argument(s) ['axes'] are not supported".
    want = call(T3)
    got = call(tl.tensor(T3))
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grads(call, [T3], order=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, x, i: np_.add(x, 1.5, order="F"),
        lambda np_, x, i: np_.exp(x, order="C", subok=True),
        lambda np_, x, i: np_.add(x, 1.5, casting="unsafe", dtype=np_.int64),
        lambda np_, x, i: np_.multiply(i, 2, casting="safe", dtype=np_.float64),
        lambda np_, x, i: np_.add(i, i, casting="no"),
        lambda np_, x, i: np_.concatenate([x, i], dtype=np_.float32),
        lambda np_, x, i: np_.concatenate([i, i], axis=None, dtype=float),
        lambda np_, x, i: np_.concatenate([x, i], casting="unsafe", dtype=np_.int64),
        lambda np_, x, i: np_.stack([x, i], dtype=np_.float32),
        lambda np_, x, i: np_.vstack([x, i], dtype=np_.float32),
        lambda np_, x, i: np_.hstack([x, i], dtype=float),
    ],
)
def test_numpy_s_dtype_casting_order_and_subok_keywords_act_as_in_numpy(call):
    # Each raised "argument(s) [...] are not supported" (ufuncs' order=, subok=, casting= other than 'same_kind';
    # concatenate's and stack's dtype=).
    want = call(np, X, I)
    got = call(np, tl.tensor(X), tl.tensor(I))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_casting_rules_numpy_refuses_are_refused_naming_the_rule():
    with pytest.raises(TypeError, match=r"numpy\.add: cannot cast an input of dtype float64 .* casting rule 'safe'"):
        np.add(tl.tensor(X), 1, casting="safe", dtype=np.int64)
    with pytest.raises(TypeError, match=r"numpy\.concatenate: cannot cast an input of dtype float64 .*'same_kind'"):
        np.concatenate([tl.tensor(X), tl.tensor(I)], dtype=np.int64)
    with pytest.raises(TypeError, match=r"numpy\.add: casting='no' .* float64 and int64"):
        np.add(tl.tensor(X), tl.tensor(I), casting="no")


SPECIAL = np.array([-2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 1.0, 7.25, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("data", [SPECIAL, SPECIAL.astype(np.float32), np.arange(-3, 4)], ids=str)
def test_np_modf_matches_numpy_with_signed_zeros_infinities_and_nans(data):
    # np.modf(t) raised "no implementation of numpy.modf".
    want = np.modf(data)
    got = np.modf(tl.tensor(data))
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w)
        np.testing.assert_array_equal(np.signbit(g.numpy()), np.signbit(w))  # -0.0 where NumPy has it
    smooth = np.array([-2.7, -0.4, 0.3, 1.6])
    check_grads(lambda x: np.modf(x)[0] * 2.0 + np.modf(x)[1], [smooth], order=1)


def test_np_matvec_and_vecmat_match_numpy():
    # NumPy 2.2's np.matvec / np.vecmat (gufuncs) raised "no implementation".
    if not hasattr(np, "matvec"):
        pytest.skip("NumPy < 2.2")
    a = RNG.normal(size=(2, 3, 4)) + 1j * RNG.normal(size=(2, 3, 4))
    v, w = RNG.normal(size=4) - 0.5j, RNG.normal(size=(2, 3)) + 2j
    np.testing.assert_allclose(np.matvec(tl.tensor(a), tl.tensor(v)).numpy(), np.matvec(a, v), rtol=1e-12)
    np.testing.assert_allclose(np.vecmat(tl.tensor(w), tl.tensor(a)).numpy(), np.vecmat(w, a), rtol=1e-12)
    real = a.real
    check_grads(lambda a, v: np.matvec(a, v), [real, v.real], order=1)
    check_grads(lambda w, a: np.vecmat(w, a), [w.real, real], order=1)


def test_the_default_comparison_tells_numpy_s_and_tensorlib_s_dtypes_apart():
    # The table's check of differing defaults read np.dtype(None) (float64) as a dtype, so NumPy's dtype=None
    # "matched" a tensorlib default of float64, and Python's float (float64 to NumPy, float32 to tensorlib)
    # matched itself: a tensorlib function defaulting so would have gone unrecorded.
    same = numpy_protocol._same_default
    assert not same(None, np.float64) and not same(None, "float64")
    assert not same(float, float) and same(complex, complex)
    assert same(int, np.int64) and same(None, False) and same("L", "L") and same(np.float64, "float64")

    def numpy_fn(a, dtype=float, k=None): ...

    def tl_fn(a, dtype=float, k=np.float64): ...

    assert numpy_protocol._numpy_defaults(inspect.signature(numpy_fn), {}, tl_fn) == {"dtype": float, "k": None}


@pytest.mark.parametrize(
    "call",
    [
        lambda c, t: np.where(c, 1.0, 2),
        lambda c, t: np.where(c, 1, 2),
        lambda c, t: np.where(c, 0.5, 1j),
        lambda c, t: np.where(c, [0.1, 0.2, 0.3, 0.4], 0),
        lambda c, t: np.where(c, t, [0.1, 0.2, 0.3, 0.4]),
        lambda c, t: np.where(c, t, 0.1),
        lambda c, t: np.add(t, [0.1, 0.2, 0.3, 0.4]),
        lambda c, t: np.maximum([[0.1], [0.2], [0.3]], t),
        lambda c, t: np.multiply(t, 0.1),
        lambda c, t: np.add(t, (1 + 2j, 0, 0, 1)),
    ],
)
def test_python_numbers_and_lists_in_numpy_calls_take_numpy_s_dtypes(call):
    # np.where(t > 0, 1.0, 2) gave float32 (tensorlib's default float for Python numbers) where NumPy gives
    # float64, and a list operand became float32 (np.add(f32, [0.1, ...]): NumPy's float64 array) and was
    # rounded to it. Python numbers beside a Tensor stay weak, as in NumPy 2.
    t = X.astype(np.float32)
    want = call(t > 0, t)
    got = call(tl.tensor(t) > 0, tl.tensor(t))
    assert isinstance(got, tl.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)


def test_saving_and_printing_tensors_with_numpy_works_on_their_values(tmp_path):
    # np.save(path, t) raised "no implementation of numpy.save for Tensors, so it would drop the gradient":
    # writing values needs no gradient.
    t = tl.tensor(X)
    np.save(tmp_path / "a.npy", t)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), X)
    np.savez(tmp_path / "b.npz", t, named=t * 2.0)
    with np.load(tmp_path / "b.npz") as saved:
        np.testing.assert_array_equal(saved["arr_0"], X)
        np.testing.assert_array_equal(saved["named"], X * 2.0)
    np.savez_compressed(tmp_path / "c.npz", t)
    np.savetxt(tmp_path / "d.txt", t)
    np.testing.assert_allclose(np.loadtxt(tmp_path / "d.txt"), X, rtol=1e-15)
    assert np.array2string(t, precision=3) == np.array2string(X, precision=3)
    assert np.common_type(t) is np.float64 and np.min_scalar_type(tl.tensor(3)) == np.uint8


@pytest.mark.parametrize(
    "kwargs", [{}, {"endpoint": False}, {"num": 1}, {"num": 7, "retstep": True}, {"dtype": np.float32}]
)
@pytest.mark.parametrize("bounds", [(0.5, 2.0), (-1.0, 3)], ids=["floats", "float-int"])
def test_np_linspace_with_tensor_bounds_matches_numpy_and_differentiates(bounds, kwargs):
    # np.linspace(t0, t1) raised "no implementation of numpy.linspace" (and tl.linspace's default is float32,
    # NumPy's float64).
    kwargs = {"num": 5, **kwargs}
    want = np.linspace(*bounds, **kwargs)
    got = np.linspace(tl.tensor(bounds[0], dtype="float64"), bounds[1], **kwargs)
    for g, w in zip(got, want) if kwargs.get("retstep") else [(got, want)]:
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6 if kwargs.get("dtype") else 1e-15)
    if "dtype" not in kwargs:
        check_grads(
            lambda a, b: np.linspace(a, b, **{**kwargs, "retstep": False}), list(map(np.float64, bounds)), order=1
        )


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.item(5),
        lambda x: x.item(1, 2),
        lambda x: x.conjugate(),
        lambda x: np.sort(x[0]).searchsorted([0.1, -5.0], side="right"),
        lambda x: x.compress([True, False, True], axis=0),
        lambda x: x.compress([0, 1, 1, 0, 1]),
        lambda x: (x[0] > 0).choose([x[1], x[2]]),
        # ndarray.partition works in place (returns None); a Tensor's returns np.partition's values
        lambda x: np.sort((x.partition(1, axis=1) if isinstance(x, tl.Tensor) else np.partition(x, 1, 1))[:, :2], 1),
        lambda x: np.take_along_axis(x, x.argpartition(2)[:, :1], axis=1),
    ],
)
def test_more_ndarray_methods_on_tensors(call):
    # Tensor had no .conjugate, .searchsorted, .compress, .choose, .partition or .argpartition, and
    # .item() took no index (ndarray.item(5), .item(1, 2)).
    want = call(X)
    got = call(tl.tensor(X))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)
    assert np.asarray(got).dtype == np.asarray(want).dtype


_REDUCTIONS = ["sum", "mean", "max", "min", "prod", "var", "std", "any", "all", "argmax", "argmin", "cumsum", "ptp"]


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_reductions_by_function_and_by_method_match_numpy(data):
    # A property over NumPy's arguments (axis None / int / tuple, keepdims, dtype, ddof, initial), through
    # np.f(t) and t.f(...) alike: value, dtype and shape as NumPy's on the same array.
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    elements = st.booleans() if dtype is np.bool_ else st.integers(-4, 4)
    a = data.draw(hnp.arrays(dtype, shape, elements=elements))
    name = data.draw(st.sampled_from(_REDUCTIONS))
    kwargs = {}
    if a.ndim and data.draw(st.booleans()):
        axes = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
        kwargs["axis"] = axes[0] if len(axes) == 1 else tuple(axes)
    if name != "cumsum" and data.draw(st.booleans()):
        kwargs["keepdims"] = True
    if name in ("sum", "mean", "prod", "cumsum", "var", "std") and data.draw(st.booleans()):
        kwargs["dtype"] = data.draw(st.sampled_from([np.float64, np.float32, float]))
    if name in ("var", "std") and data.draw(st.booleans()):
        kwargs["ddof"] = data.draw(st.integers(0, 1))
    if name in ("sum", "prod", "max", "min") and data.draw(st.booleans()):
        kwargs["initial"] = data.draw(st.sampled_from([0, 3]))
    by_method = name != "ptp" and data.draw(st.booleans())
    call = (lambda x: getattr(x, name)(**kwargs)) if by_method else (lambda x: getattr(np, name)(x, **kwargs))
    try:
        want = call(a)
    except (ValueError, TypeError):
        return  # NumPy refuses the combination (a repeated or bad axis, cumsum of several axes)
    got = call(tl.tensor(a))
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype, (name, kwargs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, err_msg=f"{name} {kwargs}")


def test_fmax_and_fmin_reduce_skip_nans_as_numpy():
    # np.fmax.reduce(t) raised "no implementation"; it is the maximum ignoring NaNs (NaN where all are).
    a = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [-2.0, 5.0, np.nan]])
    for ufunc in (np.fmax, np.fmin):
        for kwargs in ({}, {"axis": 1}, {"axis": None}, {"axis": 0, "keepdims": True}):
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(ufunc.reduce(tl.tensor(a), **kwargs).numpy(), ufunc.reduce(a, **kwargs))
    check_grads(lambda x: np.fmax.reduce(x, axis=1), [X], order=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: np.linalg.matmul(x, x.T),
        lambda x: np.linalg.tensordot(x, x.T, axes=1),
        lambda x: np.linalg.vecdot(x, x, axis=0),
        lambda x: np.linalg.outer(x[0], x[1]),
        lambda x: np.linalg.cross(x[:, :3], x[::-1, :3]),
    ],
)
def test_numpy_functions_with_positional_only_parameters_pass_them_by_position(call):
    # np.linalg.matmul(t, u) raised "argument x2=... is not supported ... (tensorlib.ops.linalg.matmul takes
    # x, y)": NumPy's positional-only x2 was passed by its name, which tensorlib's function does not have.
    np.testing.assert_allclose(call(tl.tensor(X)).numpy(), call(X), rtol=1e-12)
    check_grads(call, [X], order=1)


def test_np_interp_differentiates_with_respect_to_the_sample_points():
    # The gradient of np.interp(x, xp, fp) with respect to xp was zero (xp went through stop_gradient),
    # where central differences and jax.grad(jnp.interp) give d/dxp of the interpolant.
    xp, fp = np.array([0.0, 1.0, 2.5, 4.0]), np.array([1.0, -1.0, 3.0, 0.5])
    x = np.array([0.3, 1.7, 3.2, 2.5])
    check_grads(lambda q: np.interp(x, q, fp), [xp], order=1)
    check_grads(lambda z, q, f: np.interp(z, q, f, period=5.0), [x[:3], xp, fp], order=1)
    g = tl.grad(lambda q: tl.sum(np.interp(x[:3], q, fp)))(tl.tensor(xp)).numpy()
    eps = 1e-6
    fd = [
        (np.interp(x[:3], xp + eps * e, fp).sum() - np.interp(x[:3], xp - eps * e, fp).sum()) / (2 * eps)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(g, fd, rtol=1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: np.fill_diagonal(t, 5.0),
        lambda t: np.put(t, [0, 2], [1.0, 2.0]),
        lambda t: np.put_along_axis(t, np.array([[0], [1], [2]]), 9.0, axis=1),
        lambda t: np.place(t, np.asarray(t) > 0, [7.0]),
    ],
)
def test_numpy_s_in_place_writers_refuse_a_tensor_instead_of_returning_a_copy(call):
    # np.fill_diagonal(t, 5.0) (and np.put, np.put_along_axis, np.place) ran tensorlib's functional form: it
    # returned a new Tensor and left t as it was, where NumPy's caller reads the filled t afterwards.
    t = tl.tensor(X)
    with pytest.raises(ValueError, match=r"immutable.*inplace=False"):
        call(t)
    np.testing.assert_array_equal(t.numpy(), X)


@pytest.mark.parametrize("join", [np.concatenate, np.stack, np.vstack, np.hstack])
def test_lists_joined_with_tensors_take_numpy_s_dtype(join):
    # np.concatenate([f32_t, [0.1, 0.2]]) gave float32 (the list read by tensorlib's rule) where NumPy's is float64.
    t = X[0, :2].astype(np.float32)
    want = join([t, [0.1, 0.2]])
    got = join([tl.tensor(t), [0.1, 0.2]])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)

"""NumPy's own functions on Tensors (NEP 13 ``__array_ufunc__``, NEP 18 ``__array_function__``):
they run tensorlib ops, record gradients and trace; what tensorlib lacks raises, naming it."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
Y = np.array([[1.0, 2.0, -0.5], [0.3, -1.2, 0.8]])


def _grad(f, *xs):
    xs = [tl.tensor(x) for x in xs]
    with tl.GradientTape() as tape:
        tape.watch(xs)
        out = f(*xs)
    return out, tape.gradient(out, xs)


def test_ufuncs_and_functions_return_tensors_and_record_gradients():
    out, (g,) = _grad(lambda x: np.sum(np.exp(x) * np.sin(x)), X)
    assert isinstance(out, tl.Tensor)
    np.testing.assert_allclose(out.numpy(), np.sum(np.exp(X) * np.sin(X)))
    np.testing.assert_allclose(g.numpy(), np.exp(X) * (np.sin(X) + np.cos(X)))


def test_concatenate_and_stack_route_gradients_to_each_input():
    out, (gx, gy) = _grad(lambda x, y: np.sum(np.concatenate([x, 3.0 * y], axis=1) ** 2), X, Y)
    np.testing.assert_allclose(gx.numpy(), 2 * X)
    np.testing.assert_allclose(gy.numpy(), 18 * Y)
    out = np.stack([tl.tensor(X), tl.tensor(Y)], axis=-1)
    assert isinstance(out, tl.Tensor) and out.shape == (2, 3, 2)
    flat = np.concatenate([tl.tensor(X), tl.tensor(Y)], axis=None)
    np.testing.assert_array_equal(flat.numpy(), np.concatenate([X, Y], axis=None))


@pytest.mark.parametrize(
    "name, call",
    [
        ("mean axis keepdims", lambda np_, x: np_.mean(x, axis=0, keepdims=True)),
        ("var ddof", lambda np_, x: np_.var(x, axis=1, ddof=1)),
        ("max", lambda np_, x: np_.max(x, axis=1)),
        ("clip", lambda np_, x: np_.clip(x, -0.5, 1.0)),
        ("clip one side", lambda np_, x: np_.clip(x, None, 1.0)),
        ("transpose axes", lambda np_, x: np_.transpose(x, (1, 0))),
        ("reshape", lambda np_, x: np_.reshape(x, (3, 2))),
        ("take flat", lambda np_, x: np_.take(x, [4, 0])),
        ("where", lambda np_, x: np_.where(x > 0, x, 0.0)),
        ("einsum", lambda np_, x: np_.einsum("ij,ij->i", x, x)),
        ("dot", lambda np_, x: np_.dot(x, x.T)),
        ("matmul ufunc", lambda np_, x: np_.matmul(x, x.T)),
        ("cumsum", lambda np_, x: np_.cumsum(x, axis=1)),
        ("sort", lambda np_, x: np_.sort(x)),
        ("percentile", lambda np_, x: np_.percentile(x, 30, axis=1)),
        ("pad", lambda np_, x: np_.pad(x, ((1, 0), (0, 2)), constant_values=1.5)),
        ("linalg.norm", lambda np_, x: np_.linalg.norm(x)),
        ("atleast_3d varargs", lambda np_, x: np_.atleast_3d(x)),
        ("add.reduce", lambda np_, x: np_.add.reduce(x)),
        ("maximum.reduce keepdims", lambda np_, x: np_.maximum.reduce(x, axis=1, keepdims=True)),
        ("multiply.accumulate", lambda np_, x: np_.multiply.accumulate(x, axis=1)),
        ("arctan2", lambda np_, x: np_.arctan2(x, 2.0)),
        ("ndarray on the left", lambda np_, x: Y * x + Y),
    ],
)
def test_numpy_call_on_a_tensor_matches_numpy_and_its_gradient_checks(name, call):
    got = call(np, tl.tensor(X))
    assert isinstance(got, tl.Tensor), name
    np.testing.assert_allclose(got.numpy(), call(np, X), rtol=1e-12, err_msg=name)
    check_grads(lambda x: call(np, x), [X], order=1)


def test_numpy_functions_trace_inside_tl_function():
    f = tl.function(lambda x: np.sum(np.tanh(x), axis=0))
    np.testing.assert_allclose(f(tl.tensor(X)).numpy(), np.sum(np.tanh(X), axis=0))
    graph = f.get_graph(tl.tensor(X))
    assert {"Tanh", "Sum"} <= {node.op.name for node in graph.nodes}


def test_shape_queries_and_value_queries():
    t = tl.tensor(X)
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6
    assert np.allclose(t, X) is True and np.array_equal(t, X) is True  # tl.allclose, tl.array_equal
    assert isinstance(np.isnan(t), tl.Tensor) and not np.any(np.isnan(t))  # tl.isnan, tl.any
    assert isinstance(np.asarray(t), np.ndarray)  # __array__ still gives the values


def test_a_numpy_function_tensorlib_lacks_raises_naming_it():
    t = tl.tensor(X)
    with pytest.raises(
        TypeError,
        match=r"tensorlib has no implementation of numpy\.packbits for Tensors, so it "
        r"would drop the gradient",
    ):
        np.packbits(t)
    with pytest.raises(TypeError, match=r"numpy\.isnat"):
        np.isnat(tl.tensor([4, 6]))  # (np.modf and np.bitwise_count run: tests/test_protoadv.py, test_numpyleft3.py)
    with pytest.raises(TypeError, match=r"numpy\.subtract\.reduceat"):
        np.subtract.reduceat(t, [0, 1])  # (np.add.outer runs: tests/test_protoadv.py; np.add.reduceat too)


def test_unsupported_arguments_and_out_raise_instead_of_converting():
    t = tl.tensor(X)
    with pytest.raises(TypeError, match=r"numpy\.sort: argument order='x' is not supported"):
        np.sort(t, order="x")  # (np.sum's dtype=, where= and initial= are: tests/test_dtypeadv.py; np.var's mean=)
    with pytest.raises(TypeError, match=r"numpy\.add: out= cannot write a Tensor's result into an array"):
        np.add(t, 1.0, out=np.empty((2, 3)))
    buffer = X.copy()
    with pytest.raises(TypeError, match=r"numpy\.add: out="):
        buffer += t
    np.testing.assert_array_equal(buffer, X)  # the caller's array is untouched
    with pytest.raises(TypeError, match=r"numpy\.exp: argument\(s\) \['where'\] are not supported"):
        np.exp(t, where=X > 0)


def test_ufunc_accumulate_refuses_what_numpy_refuses():
    # np.add.accumulate(t2d, axis=None) gave a flattened cumsum and np.add.accumulate(0-d) a 1-d
    # result; NumPy raises for both.
    with pytest.raises(ValueError, match=r"numpy\.add\.accumulate: .* got axis=None for shape \(2, 3\)"):
        np.add.accumulate(tl.tensor(X), axis=None)
    with pytest.raises(ValueError, match=r"numpy\.multiply\.accumulate: .* got axis=0 for shape \(\)"):
        np.multiply.accumulate(tl.tensor(2.0))
    np.testing.assert_array_equal(np.add.accumulate(tl.tensor(X), axis=-1).numpy(), np.add.accumulate(X, axis=-1))


def test_full_like_with_a_tensor_fill_value_broadcasts_it_and_keeps_its_gradient():
    # tl.full_like(x, t) and np.full_like(x, t) raised "FullLike: tensorlib has no implementation of
    # numpy.copyto" (the Tensor went to NumPy's kernel as an attribute); tl.full(shape, t) already worked.
    fill = np.array([1.0, -2.0, 0.5])
    want = np.full_like(X, fill)
    for call in (lambda v: tl.full_like(X, v), lambda v: np.full_like(tl.tensor(X), v)):
        got = call(tl.tensor(fill))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
        check_grads(lambda v: call(v) * Y, [fill], order=1)
    traced = tl.function(lambda v: tl.full_like(X, v))(tl.tensor(fill))
    np.testing.assert_array_equal(traced.numpy(), want)


def test_numpy_creation_with_like_a_tensor_makes_a_tensor_with_numpy_s_values_and_dtypes():
    # NEP 35: np.ones(3, like=t) raised "no implementation ... would drop the gradient" (nothing to drop).
    t = tl.tensor([1.0, 2.0])
    cases = [
        lambda **k: np.ones((2, 3), **k),
        lambda **k: np.zeros(4, dtype=np.int32, **k),
        lambda **k: np.full((2,), 2.5, dtype=np.float32, **k),
        lambda **k: np.eye(3, k=1, **k),
        lambda **k: np.identity(2, **k),
        lambda **k: np.arange(1, 7, 2, **k),
        lambda **k: np.array([[1, 2], [3, 4]], **k),
        lambda **k: np.asarray([1.5], **k),
    ]
    for make in cases:
        got, want = make(like=t), make()
        assert isinstance(got, tl.Tensor) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    # np.array of tensors stacks them with their gradients; a Tensor fill value would lose its gradient: refused
    grad = tl.grad(lambda x: tl.sum(np.array([x, x * 3.0], like=x)))(t)
    np.testing.assert_array_equal(grad.numpy(), [4.0, 4.0])
    with pytest.raises(TypeError, match=r"numpy.full\(..., like=Tensor\) was given a Tensor"):
        np.full((2,), t[0], like=t)


def test_ufunc_dtype_runs_the_loop_in_that_dtype_as_numpy():
    # np.add(t, 1, dtype=np.float64) was refused ('argument(s) ['dtype'] are not supported').
    i32, f32 = np.array([1, 2], np.int32), np.array([1.5, 2.5], np.float32)
    for call in (
        lambda a, b: np.add(a, 1, dtype=np.float64),
        lambda a, b: np.multiply(b, b, dtype=np.float64),
        lambda a, b: np.exp(a, dtype=np.float32),
        lambda a, b: np.subtract(a, b, dtype=np.float64, casting="same_kind"),
    ):
        got, want = call(tl.tensor(i32), tl.tensor(f32)), call(i32, f32)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    with pytest.raises(TypeError, match=r"numpy.add: cannot cast an input of dtype float32 .* to dtype=int64"):
        np.add(tl.tensor(f32), 1, dtype=np.int64)
    with pytest.raises(TypeError, match=r"numpy.less: dtype=float64 names no loop of this predicate"):
        np.less(tl.tensor(f32), 2, dtype=np.float64)
    x = tl.tensor(f32)
    grad = tl.grad(lambda v: tl.sum(np.multiply(v, v, dtype=np.float64)))(x)
    np.testing.assert_allclose(grad.numpy(), 2 * f32, rtol=1e-6)


def test_arguments_left_out_mean_numpys_defaults_where_tensorlib_defaults_otherwise():
    # np.linalg.eigh reads the lower triangle (UPLO="L"); tl.linalg.eigh's default symmetrizes, and a call
    # that left UPLO out got the eigenvalues of (a + a.T) / 2 from np.linalg.eigh(tensor).
    a = np.array([[2.0, 1.0], [5.0, 3.0]])
    np.testing.assert_allclose(np.linalg.eigh(tl.tensor(a))[0].numpy(), np.linalg.eigh(a)[0], rtol=1e-13)
    np.testing.assert_allclose(np.linalg.eigvalsh(tl.tensor(a)).numpy(), np.linalg.eigvalsh(a), rtol=1e-13)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(tl.tensor(a), UPLO="U").numpy(), np.linalg.eigvalsh(a, "U"), rtol=1e-13
    )
    x, idx = np.arange(6.0).reshape(2, 3), np.array([[2, 0], [1, 1]])
    np.testing.assert_array_equal(np.take_along_axis(tl.tensor(x), idx).numpy(), np.take_along_axis(x, idx))

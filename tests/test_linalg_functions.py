"""NumPy 2's other ``linalg`` functions (``tensorlib/ops/linalg_functions.py``) at the points the catalogue
does not draw: zeros, singular and rank-deficient matrices, repeated eigenvalues, other backends.
Values against NumPy, gradients against float64 central differences and PyTorch where installed."""

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl
from tensorlib.ops.linalg_functions import _chain_order

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _grad(f, *args, argnums=0):
    return tl.grad(f, argnums=argnums)(*[tl.tensor(np.asarray(a, np.float64)) for a in args])


def test_pinv_rcond_on_an_array_api_backend():
    # The generic kernel passed rcond=, a TypeError on the Array API's pinv (its keyword is rtol).
    pytest.importorskip("array_api_strict")
    a = np.array([[1.0, 0.0], [0.0, 1e-3], [0.0, 0.0]])
    x = tl.tensor(a, backend="array_api_strict")
    np.testing.assert_allclose(tl.linalg.pinv(x, rcond=1e-2).numpy(), np.linalg.pinv(a, rcond=1e-2))
    out = tl.linalg.lstsq(x, tl.tensor(np.ones(3), backend="array_api_strict"))
    np.testing.assert_allclose(out[0].numpy(), np.linalg.lstsq(a, np.ones(3))[0])


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, np.inf])
def test_vector_norm_gradient_at_zero_is_zero(ord):
    # PyTorch's convention (ord > 0): the subgradient 0 rather than NaN.
    g = _grad(lambda x: tl.linalg.vector_norm(x, ord=ord, axis=(0, 1)), np.zeros((2, 3)))
    assert np.array_equal(g.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("ord", [-1, -2, 0.5])
def test_vector_norm_gradient_at_a_zero_entry_is_finite(ord):
    # power(|x|, ord) has an infinite derivative at 0 for ord < 1: the gradient was NaN at the zero entry
    # (ord 0.5: [nan, 2.41, -1.71], ord -1: [nan, 0, 0]); PyTorch gives 0 there, and 0 everywhere for ord < 0
    # (the norm is 0 while an entry is 0).
    x = np.array([0.0, 1.0, -2.0])
    g = _grad(lambda t: tl.linalg.vector_norm(t, ord=ord), x).numpy()
    h = 1e-6
    others = [
        (np.linalg.vector_norm(x + h * e, ord=ord) - np.linalg.vector_norm(x - h * e, ord=ord)) / (2 * h)
        for e in np.eye(3)[1:]
    ]
    np.testing.assert_allclose(g, [0.0] + others, atol=1e-6)
    assert np.array_equal(tl.grad(lambda t: tl.linalg.norm(t, ord=ord))(tl.tensor(x)).numpy(), g)


@pytest.mark.parametrize("axis", [(0, 2), (-1, 0, 1), None])
def test_vector_norm_over_several_axes_matches_numpy_and_differences(axis):
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    got = tl.linalg.vector_norm(tl.tensor(x), axis=axis, keepdims=True, ord=3)
    np.testing.assert_allclose(got.numpy(), np.linalg.vector_norm(x, axis=axis, keepdims=True, ord=3))
    g = _grad(lambda t: tl.sum(tl.linalg.vector_norm(t, axis=axis, ord=3)), x)
    numeric = central_differences(lambda v: np.sum(np.linalg.vector_norm(v, axis=axis, ord=3)), x)
    np.testing.assert_allclose(g.numpy(), numeric, atol=1e-6)


def test_cond_of_singular_matrices_is_inf_as_numpy():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 0.0], [0.0, 1.0]]])
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro"):  # inf, not LinAlgError, also for p = 1 ...
        got = tl.linalg.cond(tl.tensor(singular), p).numpy()
        np.testing.assert_allclose(got, np.linalg.cond(singular, p), rtol=1e-14)
    # NumPy's SVD of the inverse's infs does not converge; JAX gives inf.
    np.testing.assert_allclose(tl.linalg.cond(tl.tensor(singular), "nuc").numpy(), [np.inf, np.inf, 4.5])


def test_matrix_rank_matches_numpy_and_has_no_gradient():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 2)) @ rng.standard_normal((3, 2, 5))
    a[1] = 0.0
    for kwargs in [{}, {"tol": 1e-3}, {"rtol": 0.5}]:
        got = tl.linalg.matrix_rank(tl.tensor(a), **kwargs)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), np.linalg.matrix_rank(a, **kwargs))
    sym = a[0] @ a[0].T
    assert int(tl.linalg.matrix_rank(tl.tensor(sym), hermitian=True)) == np.linalg.matrix_rank(sym, hermitian=True)
    x = tl.tensor(a)
    with tl.GradientTape() as tape:
        tape.watch(x)
        r = tl.linalg.matrix_rank(x)
    assert tape.gradient(r, x) is None


def test_multi_dot_picks_the_cheapest_order():
    # (10x100)(100x5)(5x50): (AB)C costs 7500 multiplications, A(BC) 75000.
    assert _chain_order([10, 100, 5, 50])[0][2] == 1
    assert _chain_order([50, 5, 100, 10])[0][2] == 0
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in [(10,), (10, 100), (100, 5), (5, 50), (50,)]]
    got = tl.linalg.multi_dot([tl.tensor(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot(arrays))


def test_eigvalsh_gradient_at_repeated_eigenvalues_of_a_symmetric_loss():
    # Sum of the two equal top eigenvalues of diag(1, 3, 3): its gradient is the projector onto them.
    a = np.diag([1.0, 3.0, 3.0])
    g = _grad(lambda t: tl.sum(tl.linalg.eigvalsh(t)[1:]), a)
    np.testing.assert_allclose(g.numpy(), np.diag([0.0, 1.0, 1.0]), atol=1e-12)
    numeric = central_differences(lambda v: np.sum(np.linalg.eigvalsh((v + v.T) / 2)[1:]), a)
    np.testing.assert_allclose(g.numpy(), numeric, atol=1e-6)


def test_lstsq_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    w = rng.standard_normal((2, 3, 2))
    ga, gb = _grad(lambda a, b: tl.sum(tl.linalg.lstsq(a, b)[0] * w), a, b, argnums=(0, 1))
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (torch.linalg.lstsq(ta, tb, driver="gelsd").solution * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ga.numpy(), ta.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(gb.numpy(), tb.grad.numpy(), atol=1e-10)


def test_lstsq_residual_shapes_follow_the_shape_of_a():
    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, 1.0])  # rank 1: NumPy returns no residuals
    b = np.arange(4.0)
    x, residuals, rank, _ = tl.linalg.lstsq(tl.tensor(a), tl.tensor(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.lstsq(a, b)[0])
    assert int(rank) == 1 and rank.dtype == np.int32
    np.testing.assert_allclose(residuals.numpy(), [np.sum((b - a @ x.numpy()) ** 2)])
    wide = tl.linalg.lstsq(tl.tensor(a.T), tl.tensor(np.ones(2)))
    assert wide[1].shape == (0,)


def test_lstsq_and_multi_dot_trace_with_unknown_dimensions():
    # lstsq built its empty residuals with zeros(batch + (0,)) and multi_dot priced the orders with the
    # dimensions: both raised a bare TypeError on None under a tl.function signature.
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3, 2))
    signature = [tl.TensorSpec((None, 3, 3), "float64"), tl.TensorSpec((None, 3, 2), "float64")]
    traced = tl.function(tl.linalg.lstsq, input_signature=signature)
    for got, want in zip(traced(a, b), tl.linalg.lstsq(a, b)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    spec = [tl.TensorSpec((None, 3), "float64"), tl.TensorSpec((3, None), "float64")]
    traced = tl.function(lambda x, y: tl.linalg.multi_dot([x, y, y.T]), input_signature=spec)
    np.testing.assert_allclose(traced(a[0], b[0]).numpy(), a[0] @ b[0] @ b[0].T, atol=1e-12)
    with pytest.raises(ValueError, match=r"lstsq: the number of rows and columns of a must be known"):
        tl.function(tl.linalg.lstsq, input_signature=[tl.TensorSpec((None, 3), "float64")] * 2)(a[0], a[1])


def test_cholesky_solve_reads_one_triangle_and_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    m = rng.standard_normal((3, 3))
    a, b, w = m @ m.T + 3 * np.eye(3), rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    factor = np.linalg.cholesky(a)
    junk = factor + np.triu(rng.standard_normal((3, 3)), 1)
    np.testing.assert_allclose(tl.linalg.cholesky_solve(b, junk).numpy(), np.linalg.solve(a, b), atol=1e-12)
    gb, gl = _grad(lambda b, f: tl.sum(tl.linalg.cholesky_solve(b, f) * w), b, junk, argnums=(0, 1))
    tb, tf = torch.tensor(b, requires_grad=True), torch.tensor(factor, requires_grad=True)
    (torch.cholesky_solve(tb, tf) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(gb.numpy(), tb.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(gl.numpy(), np.tril(tf.grad.numpy()), atol=1e-12)  # PyTorch fills the other triangle


@pytest.mark.parametrize("dtype", [np.int32, np.float32, bool])
def test_trace_sums_in_the_dtype_asked_for(dtype):
    # tl.linalg.trace(x, dtype=int32) gave int64 (the sum of int32), NumPy int32.
    a = np.arange(9, dtype=np.int32).reshape(3, 3)
    got, want = tl.linalg.trace(tl.tensor(a), dtype=dtype), np.linalg.trace(a, dtype=dtype)
    assert got.dtype == want.dtype and got.numpy() == want

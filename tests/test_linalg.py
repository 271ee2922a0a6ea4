"""tl.linalg beyond the catalogue: batching, dtype rules, the documented gradient caveats, errors.

The catalogue (``tensorlib/testing/op_db_linalg.py``) checks every function's
forward value, gradients to second order and eager == traced.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

from _helpers import central_differences

RNG = np.random.default_rng(7)


def _dominant(*shape):
    return RNG.uniform(-1, 1, shape) + 4 * np.eye(shape[-1])


def test_solve_broadcasts_batch_axes_and_sums_the_gradient_back():
    a, b = _dominant(2, 3, 3), RNG.standard_normal((3, 2))
    x = tl.linalg.solve(a, b)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-12)
    ga, gb = tl.grad(lambda a, b: tl.sum(tl.linalg.solve(a, b) ** 2), argnums=(0, 1))(tl.tensor(a), tl.tensor(b))
    assert ga.shape == (2, 3, 3) and gb.shape == (3, 2)
    check_grads(lambda a, b: tl.linalg.solve(a, b), [a, b], order=1)


def test_integer_matrices_give_float64_as_in_numpy():
    a = np.array([[2, 1], [1, 3]])
    assert tl.linalg.inv(a).dtype == np.float64
    np.testing.assert_allclose(tl.linalg.det(a).numpy(), 5.0)
    assert tl.linalg.norm(np.array([3, 4])).dtype == np.float64


def test_float32_stays_float32_through_the_gradient():
    a = tl.tensor(_dominant(3, 3).astype(np.float32))
    g = tl.grad(lambda a: tl.linalg.slogdet(a)[1])(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), np.linalg.inv(a.numpy()).T, rtol=1e-4)


def test_svd_full_matrices_gradient_ignores_the_extra_columns():
    x = RNG.standard_normal((4, 2))

    def leading(x):
        u, s, vh = tl.linalg.svd(x, full_matrices=True)
        return u[:, :2], s, vh

    check_grads(leading, [x], order=1)
    u_full = tl.grad(lambda x: tl.sum(tl.linalg.svd(x)[0]))(tl.tensor(x))
    u_lead = tl.grad(lambda x: tl.sum(tl.linalg.svd(x)[0][:, :2]))(tl.tensor(x))
    np.testing.assert_allclose(u_full.numpy(), u_lead.numpy(), atol=1e-12)


def test_eigenvalue_loss_keeps_an_exact_gradient_at_a_repeated_eigenvalue():
    # d tr(f(A)) / dA at A = 2I is f'(2) I; the eigenvector terms (undefined there) are dropped.
    g = tl.grad(lambda a: tl.sum(tl.linalg.eigh(a)[0] ** 2))(tl.tensor(2 * np.eye(3)))
    np.testing.assert_allclose(g.numpy(), 4 * np.eye(3), atol=1e-12)
    g = tl.grad(lambda a: tl.sum(tl.linalg.svd(a)[1]))(tl.tensor(np.eye(3)))
    np.testing.assert_allclose(g.numpy(), np.eye(3), atol=1e-12)


def test_eigenvector_loss_at_a_repeated_eigenvalue_is_nan_not_a_finite_wrong_number():
    # sqrtm through eigh at diag(1, 4, 4): the true gradient (central differences of NumPy's eigh) has
    # 1/(2*2) = 0.25 times C on the repeated block; dropping the 0/0 gap terms gave 0 there, silently.
    # PyTorch and JAX give NaN; so does tensorlib now.  Vectors of the unrepeated eigenvalue and the
    # eigenvalues alone keep their exact gradients.
    a = np.diag([1.0, 4.0, 4.0])
    c = np.arange(9.0).reshape(3, 3) + np.arange(9.0).reshape(3, 3).T

    def sqrtm_loss(t):
        w, v = tl.linalg.eigh(t)
        return tl.sum((v * tl.sqrt(w)) @ tl.linalg.matrix_transpose(v) * tl.tensor(c))

    def sqrtm_numpy(x):
        w, v = np.linalg.eigh((x + x.T) / 2)
        return np.sum((v * np.sqrt(w)) @ v.T * c)

    numeric = central_differences(sqrtm_numpy, a)
    assert abs(numeric[1, 2] - 0.25 * c[1, 2]) < 1e-6  # the reference is finite and nonzero there
    for run in (lambda f: tl.grad(f), lambda f: tl.function(tl.grad(f))):
        assert np.isnan(run(sqrtm_loss)(tl.tensor(a)).numpy()).all()
        first = run(lambda t: tl.sum(tl.linalg.eigh(t)[1][:, 0] ** 3))(tl.tensor(a)).numpy()
        np.testing.assert_allclose(
            first, central_differences(lambda x: np.sum(np.linalg.eigh((x + x.T) / 2)[1][:, 0] ** 3), a), atol=1e-6
        )
    u_loss = lambda t: tl.sum(tl.linalg.svd(t, full_matrices=False)[0] * tl.tensor(c[:, :2]))  # noqa: E731
    assert np.isnan(tl.grad(u_loss)(tl.tensor(np.eye(3)[:, :2] * 2.0)).numpy()).all()
    g = tl.grad(lambda t: tl.sum(tl.linalg.svd(t)[1] ** 2))(tl.tensor(np.eye(3)[:, :2] * 2.0))
    np.testing.assert_allclose(g.numpy(), 2 * np.eye(3)[:, :2] * 2.0, atol=1e-12)


def test_eigh_and_cholesky_read_the_symmetric_part_and_give_symmetric_gradients():
    a = _dominant(3, 3)
    np.testing.assert_allclose(tl.linalg.eigh(a)[0].numpy(), np.linalg.eigvalsh((a + a.T) / 2), rtol=1e-12)
    spd = a @ a.T + np.eye(3)
    for f, x in (
        (lambda s: tl.sum(tl.linalg.cholesky(s) ** 3), spd),
        (lambda a: tl.sum(tl.linalg.eigh(a)[1][:, 0] ** 3), a),
    ):
        g = tl.grad(f)(tl.tensor(x)).numpy()
        np.testing.assert_allclose(g, g.T, atol=1e-12)


def test_second_derivative_of_log_det_is_minus_inv_kron_inv():
    a = _dominant(2, 2)
    hess = tl.hessian(lambda a: tl.linalg.slogdet(a)[1])(tl.tensor(a)).numpy()
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(hess, -np.einsum("jk,li->ijkl", inv, inv), atol=1e-10)


def test_qr_complete_with_more_rows_has_no_gradient_and_says_why():
    x = tl.tensor(RNG.standard_normal((3, 2)))
    q, r = tl.linalg.qr(x, mode="complete")
    assert q.shape == (3, 3) and r.shape == (3, 2)
    with pytest.raises(
        ValueError,
        match=r"Qr: the gradient of mode='complete' with more rows than columns "
        r"\(input shape \(3, 2\)\) is not defined",
    ):
        tl.grad(lambda x: tl.sum(tl.linalg.qr(x, mode="complete")[0]))(x)


def test_solve_triangular_never_reads_the_other_triangle():
    a, b = _dominant(3, 3), RNG.standard_normal(3)
    x = tl.linalg.solve_triangular(a, b, lower=True)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(np.tril(a), b), rtol=1e-12)
    g = tl.grad(lambda a: tl.sum(tl.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True)))(tl.tensor(a))
    assert not np.any(np.triu(g.numpy()))


def test_singular_matrix_error_names_the_op_and_leaves_the_input_alone():
    a = np.ones((2, 2))
    with pytest.raises(np.linalg.LinAlgError, match=r"MatrixInverse: Singular matrix \(inputs shape \(2, 2\) "):
        tl.linalg.inv(a)
    np.testing.assert_array_equal(a, np.ones((2, 2)))


def test_gradient_of_traced_function_with_linalg_is_a_graph():
    a = tl.tensor(_dominant(3, 3))
    f = tl.function(tl.grad(lambda a: tl.linalg.norm(tl.linalg.inv(a), "nuc")))
    np.testing.assert_allclose(
        f(a).numpy(), tl.grad(lambda a: tl.linalg.norm(tl.linalg.inv(a), "nuc"))(a).numpy(), rtol=1e-10
    )


def test_norm_gradient_at_zero_is_zero_as_in_pytorch():
    for x, kw in [
        (np.zeros(3), {}),
        (np.zeros((2, 2)), {}),
        (np.zeros((2, 2)), {"ord": "fro"}),
        (np.zeros((2, 3)), {"axis": 1}),
    ]:
        g = tl.grad(lambda t: tl.sum(tl.linalg.norm(t, **kw)))(tl.tensor(x))
        np.testing.assert_array_equal(g.numpy(), np.zeros_like(x))
    x = np.array([3.0, 0.0, -4.0])  # away from zero the gradient is still x / |x|
    g = tl.grad(lambda t: tl.linalg.norm(t))(tl.tensor(x))
    np.testing.assert_allclose(g.numpy(), x / 5.0, rtol=1e-15)


# ------------------------------------------------------------------ empty inputs, as NumPy 2
@pytest.mark.parametrize(
    "shape, axis", [((0,), None), ((0, 3), None), ((3, 0), None), ((2, 0, 3), (0, 2)), ((2, 0), 1)]
)
@pytest.mark.parametrize("ord", [None, "fro", "nuc", np.inf, 1, 2, 3, 0])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norms_of_empty_inputs_are_numpys(shape, axis, ord, keepdims):
    x = np.zeros(shape)
    vector = (len(shape) == 1) if axis is None else isinstance(axis, int)
    if vector and isinstance(ord, str) or not vector and ord in (3, 0):
        pytest.skip("not a norm of this kind")
    expected = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)  # 0: the max norms too, in NumPy 2
    for f in (tl.linalg.norm, tl.function(tl.linalg.norm, static_argnames=("ord", "axis", "keepdims"))):
        out = f(tl.tensor(x), ord=ord, axis=axis, keepdims=keepdims)
        assert out.shape == expected.shape and out.dtype == expected.dtype
        np.testing.assert_array_equal(out.numpy(), expected)
    if ord == 0:
        return  # a count of nonzeros: no gradient
    t = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(t)
        y = tl.sum(tl.linalg.norm(t, ord=ord, axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(tape.gradient(y, t).numpy(), np.zeros(shape))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 2)])
def test_pinv_of_an_empty_integer_matrix_is_float64_as_its_shape_rule(shape):
    expected = np.linalg.pinv(np.zeros(shape))
    for f in (tl.linalg.pinv, tl.function(tl.linalg.pinv)):
        out = f(tl.tensor(np.zeros(shape, np.int64)))
        assert out.dtype == tl.float64 and out.shape == expected.shape


def _cofactors(a):
    """The cofactor matrix from minors (the gradient of det), independent of inverses and SVDs."""
    n = a.shape[-1]
    return np.array(
        [[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) for j in range(n)] for i in range(n)]
    )


_SINGULAR = {
    0: np.zeros((3, 3)),
    1: np.ones((3, 3)),
    2: np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]]),
}


@pytest.mark.parametrize("rank", [0, 1, 2])
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(rank, mode):
    # It raised LinAlgError (MatrixInverse: Singular matrix); PyTorch gives the cofactors: nonzero at rank n - 1.
    a = _SINGULAR[rank]
    grad = tl.grad(lambda x: tl.linalg.det(x))
    g = (grad if mode == "eager" else tl.function(grad))(tl.tensor(a))
    np.testing.assert_allclose(g.numpy(), _cofactors(a), atol=1e-12)
    assert (rank == 2) == bool(np.any(np.abs(g.numpy()) > 1e-6))


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_slogdet_gradient_at_singular_matrices_is_non_finite_as_in_jax(mode):
    # It raised LinAlgError (MatrixInverse: Singular matrix).  inv(x) there is adj(x) / 0: inf where a cofactor is
    # nonzero (rank n - 1), NaN where it is 0 (every cofactor at rank n - 2 or less), JAX's values.
    batch = np.stack([_SINGULAR[2], _SINGULAR[1], _SINGULAR[0], _dominant(3, 3)])
    grad = tl.grad(lambda x: tl.sum(tl.linalg.slogdet(x)[1]))
    g = (grad if mode == "eager" else tl.function(grad))(tl.tensor(batch)).numpy()
    cofactors = _cofactors(_SINGULAR[2])
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(g[0], np.where(cofactors == 0, np.nan, np.sign(cofactors) * np.inf))
    assert np.isnan(g[1:3]).all()
    np.testing.assert_allclose(g[3], np.linalg.inv(batch[3]).T, rtol=1e-12)
    jax = pytest.importorskip("jax")
    rank_one = np.array([[1.0, 2.0], [2.0, 4.0]])
    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(lambda x: jax.numpy.linalg.slogdet(x)[1])(rank_one))
    np.testing.assert_array_equal(grad(tl.tensor(rank_one)).numpy(), expected)  # [[inf, -inf], [-inf, inf]]


def test_matrix_exp_values_and_gradients_match_scipy_and_torch():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 4)) * np.array([0.1, 6.0])[:, None, None]  # no squaring, and several
    expected = scipy_linalg.expm(a)
    np.testing.assert_allclose(tl.linalg.matrix_exp(a).numpy(), expected, atol=1e-12 * np.abs(expected).max())
    assert tl.linalg.matrix_exp(np.eye(2, dtype=np.float32)).dtype == np.float32
    assert tl.linalg.matrix_exp(np.eye(2, dtype=np.int64)).dtype == np.float64
    torch = pytest.importorskip("torch")
    weights = rng.standard_normal(a.shape)
    t = torch.tensor(a, requires_grad=True)
    (torch.linalg.matrix_exp(t) * torch.tensor(weights)).sum().backward()
    g = tl.grad(lambda x: tl.sum(tl.linalg.matrix_exp(x) * weights))(tl.tensor(a))
    np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def _gauge_free_eig_loss(w, v, weights):
    return w.real * weights[0] + w.imag**2 * weights[1], abs(v) ** 2 * weights[2][..., None, :]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_matches_numpy_and_its_gradient_torchs_conjugated(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 4)).astype(dtype)
    if dtype == np.complex128:
        a = a + 1j * rng.standard_normal(a.shape)
    w, v = tl.linalg.eig(a)
    assert w.dtype == v.dtype == np.complex128
    np.testing.assert_array_equal(w.numpy(), np.linalg.eig(a)[0])
    np.testing.assert_array_equal(v.numpy(), np.linalg.eig(a)[1])
    weights = [rng.standard_normal((2, 4)) for _ in range(3)]

    def loss(x):  # independent of each eigenvector's phase, as any loss of eig must be
        w, v = tl.linalg.eig(x)
        return sum(tl.sum(part) for part in _gauge_free_eig_loss(w, v, weights))

    g = tl.grad(loss)(tl.tensor(a)).numpy()
    t = torch.tensor(a, requires_grad=True)
    parts = _gauge_free_eig_loss(*torch.linalg.eig(t), [torch.tensor(w) for w in weights])
    sum(part.sum() for part in parts).backward()
    np.testing.assert_allclose(g, np.conj(t.grad.numpy()), rtol=1e-9, atol=1e-10)  # PyTorch's is conjugated
    assert isinstance(np.linalg.eig(tl.tensor(a))[0], tl.Tensor)  # NumPy's function dispatches to ours
    check_grads(loss, (tl.tensor(a),), order=2)
    traced = tl.function(tl.grad(loss))(tl.tensor(a)).numpy()
    np.testing.assert_allclose(traced, g, rtol=1e-12, atol=1e-12)


def test_eigvals_gradient_matches_jax_and_eigenvectors_of_a_repeated_eigenvalue_give_nan():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    weights = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    g = tl.grad(lambda x: tl.sum(tl.real(tl.linalg.eigvals(x) * weights)))(tl.tensor(a)).numpy()
    v = np.linalg.eig(a)[1]
    np.testing.assert_allclose(g, np.linalg.solve(v.T, weights[:, None] * v.T), rtol=1e-10)  # v^-T diag(c) v^T
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        expected = jax.grad(lambda x: jax.numpy.sum(jax.numpy.real(jax.numpy.linalg.eigvals(x) * weights)))(a)
    np.testing.assert_allclose(g, np.asarray(expected), rtol=1e-10)
    # diag(1, 2, 2) + a coupling of the repeated pair: the sum of the values still has gradient I, while a loss
    # reading the repeated value's eigenvectors is NaN (PyTorch: NaN), not a finite number.
    x = tl.tensor(np.diag([1.0, 2.0, 2.0]))
    np.testing.assert_allclose(tl.grad(lambda x: tl.sum(tl.real(tl.linalg.eigvals(x))))(x).numpy(), np.eye(3))
    vector_loss = tl.grad(lambda x: tl.sum(tl.real(tl.linalg.eig(x)[1]) * np.arange(9.0).reshape(3, 3)))(x)
    assert np.isnan(vector_loss.numpy()).any()


def test_lu_factor_pivots_as_scipy_on_ties_zero_columns_and_singular_matrices():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    batch = np.array(
        [
            [[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0], [1.0, 5.0, 0.0]],  # a tie in the first column: the first wins
            [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 7.0]],  # a zero column: left unscaled
            [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]],  # singular: no error, a zero on u's diagonal
        ]
    )
    lu, piv = tl.linalg.lu_factor(batch)
    for k, a in enumerate(batch):
        expected_lu, expected_piv = scipy_linalg.lu_factor(a)
        np.testing.assert_array_equal(piv.numpy()[k], expected_piv)
        np.testing.assert_allclose(lu.numpy()[k], expected_lu, atol=1e-15)
    assert piv.dtype == np.int32
    p, l, u = tl.linalg.lu(batch[:, :2, :])  # rectangular, as scipy.linalg.lu
    for k, a in enumerate(batch[:, :2, :]):
        for got, expected in zip((p, l, u), scipy_linalg.lu(a)):
            np.testing.assert_allclose(got.numpy()[k], expected, atol=1e-15)


def test_lu_gradients_reach_b_and_the_matrix_through_lu_factor_as_in_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b, w = rng.standard_normal((2, 3, 3)), rng.standard_normal((3, 2)), rng.standard_normal((2, 3, 2))
    ga, gb = tl.grad(lambda a, b: tl.sum(tl.linalg.lu_solve(tl.linalg.lu_factor(a), b) * w), argnums=(0, 1))(a, b)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    factors, pivots = torch.linalg.lu_factor(ta)
    (torch.linalg.lu_solve(factors, pivots, tb.expand(2, 3, 2)) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ga.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
    wl, wu = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 3))
    g = tl.grad(lambda a: tl.sum(tl.linalg.lu(a)[1] * wl + tl.linalg.lu(a)[2] * wu))(a)
    ta = torch.tensor(a, requires_grad=True)
    _, tl_, tu = torch.linalg.lu(ta)
    (tl_ * torch.tensor(wl) + tu * torch.tensor(wu)).sum().backward()
    np.testing.assert_allclose(g.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)


def _unknown_sizes(x):
    return tl.TensorSpec((None,) * np.ndim(x), np.asarray(x).dtype)


def test_new_functions_and_their_gradients_trace_with_unknown_sizes():
    # Before: eig's and lu_factor's gradients raised TypeError ('NoneType' object cannot be interpreted as an
    # integer), matrix_exp's gradient took the whole 2n x 2n block (a broadcast error), lu_solve a KernelResultError.
    x = np.random.default_rng(4).uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    cases = {
        "matrix_exp": tl.linalg.matrix_exp,
        "eig": lambda a: tl.abs(tl.linalg.eig(a)[1]) + tl.real(tl.linalg.eigvals(a))[..., None],
        "lu_factor": lambda a: tl.linalg.lu_factor(a)[0],
        "lu_solve": lambda a: tl.linalg.lu_solve(tl.linalg.lu_factor(a), a[0], trans=1),
    }
    for name, f in cases.items():
        for fn in (f, tl.grad(lambda a, f=f: tl.sum(f(a) * np.arange(9.0).reshape(3, 3)))):
            traced = tl.function(fn).get_graph(_unknown_sizes(x))(x)
            np.testing.assert_allclose(traced.numpy(), fn(x).numpy(), rtol=1e-12, err_msg=name)
    with pytest.raises(ValueError, match=r"lu: the matrix sizes must be known under tl.function"):
        tl.function(tl.linalg.lu).get_graph(_unknown_sizes(x))


def test_take_along_axis_broadcasts_with_unknown_sizes():
    # Before: KernelResultError (the shape rule gave the indices' shape (None, None, 1), the kernel broadcast).
    x, index = np.arange(24.0).reshape(2, 3, 4), np.array([[[2], [0], [1]]])
    f = tl.grad(lambda a: tl.sum(tl.take_along_axis(a, index, axis=-2) ** 2))
    traced = tl.function(f).get_graph(_unknown_sizes(x))(x)
    np.testing.assert_array_equal(traced.numpy(), f(x).numpy())
    got = tl.function(lambda a, i: tl.take_along_axis(a, i, axis=-2)).get_graph(
        _unknown_sizes(x), _unknown_sizes(index)
    )(x, index)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(x, index, axis=-2))

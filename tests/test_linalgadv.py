"""``tl.linalg`` and ``tl.fft`` attacked as an adversary: complex factors, singular and empty matrices, integer
inputs and the keyword arguments NumPy, SciPy, PyTorch and JAX users pass.

References: NumPy/SciPy values and formulas, float64 central differences (``tl.testing.check_grads``), and
PyTorch / JAX where installed (``pytest.importorskip``)."""

import re

import numpy as np
import pytest
import scipy.linalg

import tensorlib as tl

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hermitian_positive(rng, n, batch=()):
    c = _complex(rng, *batch, n, n)
    return c @ np.conj(np.swapaxes(c, -1, -2)) + n * np.eye(n)


# ---------------------------------------------------------------- cholesky_solve / solve_triangular, complex
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky_solve_of_a_complex_factor_solves_with_the_hermitian_matrix(upper, batch):
    # a = L L^H for a complex factor (PyTorch's cholesky_solve, SciPy's cho_solve); L L^T was solved instead.
    rng = np.random.default_rng(0)
    a = _hermitian_positive(rng, 3, batch)
    factor = np.linalg.cholesky(a)
    factor = np.conj(np.swapaxes(factor, -1, -2)) if upper else factor
    b = _complex(rng, *batch, 3, 2)
    got = tl.linalg.cholesky_solve(tl.tensor(b), tl.tensor(factor), upper=upper).numpy()
    np.testing.assert_allclose(got, np.linalg.solve(a, b), atol=1e-12)
    tl.testing.check_grads(lambda b, f: tl.linalg.cholesky_solve(b, f, upper=upper), [b, factor], order=2)


@pytest.mark.parametrize("trans", [2, "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_conjugate_transpose(trans, lower):
    # SciPy's trans=2 / 'C': solve t^H x = b; it raised ValueError.
    rng = np.random.default_rng(1)
    a = _complex(rng, 3, 3) + 3 * np.eye(3)
    b = _complex(rng, 3, 2)
    got = tl.linalg.solve_triangular(tl.tensor(a), tl.tensor(b), trans=trans, lower=lower).numpy()
    np.testing.assert_allclose(got, scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower), atol=1e-12)
    real = a.real.copy()
    got = tl.linalg.solve_triangular(tl.tensor(real), tl.tensor(b.real), trans=trans, lower=lower, unit_diagonal=True)
    want = scipy.linalg.solve_triangular(real, b.real, trans=trans, lower=lower, unit_diagonal=True)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    tl.testing.check_grads(lambda a, b: tl.linalg.solve_triangular(a, b, trans=trans, lower=lower), [a, b], order=2)


def test_cholesky_solve_and_conjugate_triangular_solve_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    rng = np.random.default_rng(2)
    factor = np.linalg.cholesky(_hermitian_positive(rng, 3))
    b = _complex(rng, 3, 2)
    w = _complex(rng, 3, 2)

    def loss_jax(b, factor):
        return jnp.sum(jnp.real(jsl.cho_solve((factor, True), b) * w))

    def loss_tl(b, factor):
        return tl.sum(tl.real(tl.linalg.cholesky_solve(b, factor) * w))

    want = jax.grad(loss_jax, argnums=(0, 1))(b, factor)
    got = tl.grad(loss_tl, argnums=(0, 1))(tl.tensor(b), tl.tensor(factor))
    np.testing.assert_allclose(got[0].numpy(), want[0], atol=1e-12)
    # JAX's cho_solve reads the whole factor; ours only its lower triangle (the other gets 0).
    np.testing.assert_allclose(got[1].numpy(), np.tril(want[1]), atol=1e-12)

    a = _complex(rng, 3, 3) + 3 * np.eye(3)
    want = jax.grad(lambda a, b: jnp.sum(jnp.real(jsl.solve_triangular(a, b, trans=2) * w)), argnums=(0, 1))(a, b)
    got = tl.grad(lambda a, b: tl.sum(tl.real(tl.linalg.solve_triangular(a, b, trans=2) * w)), argnums=(0, 1))(
        tl.tensor(a), tl.tensor(b)
    )
    for g, h in zip(got, want):
        np.testing.assert_allclose(g.numpy(), h, atol=1e-12)


# ---------------------------------------------------------------- cond of singular matrices
@pytest.mark.parametrize("p", [1, -1, "fro", "nuc", np.inf, -np.inf, None, 2, -2])
def test_cond_of_a_singular_matrix_in_a_batch_is_inf(p):
    # NumPy, PyTorch and JAX give inf for a singular matrix with every p; p other than None/2/-2 raised
    # LinAlgError for the whole batch.  A NaN in the input stays NaN (NumPy's rule).
    x = np.array(
        [[[2.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]]
    )
    if p not in (None, 2, -2, "nuc"):  # (NumPy's SVD of a NaN matrix raises)
        x = np.concatenate([x, [[[np.nan, 0.0], [0.0, 1.0]]]])
    got = tl.linalg.cond(tl.tensor(x), p).numpy()
    # NumPy's SVD of a singular matrix's inverse (infs) does not converge for 'nuc': JAX gives inf.
    want = np.linalg.cond(x, p) if p != "nuc" else [np.linalg.cond(x[0], p), np.inf, np.inf, np.inf]
    np.testing.assert_allclose(got, want)
    assert np.isinf(got[2:4] if p != -2 else got[2]).all() and np.isnan(got[4:]).all()
    g = tl.grad(lambda t: tl.linalg.cond(t, p))(tl.tensor(x[0])).numpy()
    h = 1e-6
    numeric = [
        (np.linalg.cond(x[0] + h * e, p) - np.linalg.cond(x[0] - h * e, p)) / (2 * h)
        for e in np.eye(4).reshape(4, 2, 2)
    ]
    np.testing.assert_allclose(g.ravel(), numeric, atol=1e-6)


# ---------------------------------------------------------------- matrix_exp of empty integer matrices
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (2, 2)])
def test_matrix_exp_of_integer_matrices_is_float64(dtype, shape):
    # An empty integer or bool matrix raised KernelResultError (the kernel returned the integer zeros).
    x = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    got = tl.linalg.matrix_exp(tl.tensor(x))
    assert got.dtype == np.float64 and got.shape == shape
    want = scipy.linalg.expm(x.astype(np.float64)) if x.size else np.zeros(shape)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


# ---------------------------------------------------------------- the keywords of numpy.linalg
def _symmetric_pair(rng, n, complex_=False, batch=()):
    """A matrix whose lower and upper triangles describe different Hermitian matrices."""
    return _complex(rng, *batch, n, n) if complex_ else rng.standard_normal(batch + (n, n))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("uplo", ["L", "U", "l", "u"])
def test_eigh_and_eigvalsh_read_the_triangle_uplo_names(uplo, complex_):
    # NumPy's and PyTorch's UPLO: the Hermitian matrix of one triangle (the imaginary part of the diagonal is
    # ignored); it was a TypeError.  Without UPLO the symmetric part is read, as JAX does.
    rng = np.random.default_rng(3)
    a = _symmetric_pair(rng, 4, complex_, batch=(2,))
    w, v = tl.linalg.eigh(tl.tensor(a), UPLO=uplo)
    w_np, v_np = np.linalg.eigh(a, UPLO=uplo.upper())
    np.testing.assert_allclose(w.numpy(), w_np, atol=1e-12)
    np.testing.assert_allclose(np.abs(v.numpy()), np.abs(v_np), atol=1e-10)
    np.testing.assert_allclose(tl.linalg.eigvalsh(tl.tensor(a), UPLO=uplo).numpy(), w_np, atol=1e-12)
    hermitian = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    np.testing.assert_allclose(tl.linalg.eigvalsh(tl.tensor(a)).numpy(), np.linalg.eigvalsh(hermitian), atol=1e-12)
    # The gradient is the triangle's: central differences of NumPy's eigvalsh, which reads only it.
    tl.testing.check_grads(lambda t: tl.linalg.eigvalsh(t, UPLO=uplo), [a[0]], order=2)
    tl.testing.check_grads(lambda t: tl.abs(tl.linalg.eigh(t, UPLO=uplo)[1]), [a[0]], order=1)
    with pytest.raises(ValueError, match=r"eigh: UPLO must be 'L' or 'U' \(or None"):
        tl.linalg.eigh(tl.tensor(a), UPLO="X")


def test_eigh_uplo_gradient_matches_finite_differences_of_numpy():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3))
    weights = rng.standard_normal(3)
    for uplo in "LU":
        g = tl.grad(lambda t: tl.sum(tl.linalg.eigvalsh(t, UPLO=uplo) * weights))(tl.tensor(a)).numpy()
        h = 1e-6
        numeric = np.array(
            [
                (np.linalg.eigvalsh(a + h * e, UPLO=uplo) - np.linalg.eigvalsh(a - h * e, UPLO=uplo))
                @ weights
                / (2 * h)
                for e in np.eye(9).reshape(9, 3, 3)
            ]
        ).reshape(3, 3)
        np.testing.assert_allclose(g, numeric, atol=1e-7)
        assert not np.any(np.triu(g, 1) if uplo == "L" else np.tril(g, -1))


@pytest.mark.parametrize("complex_", [False, True])
def test_cholesky_upper(complex_):
    # NumPy 2's and PyTorch's upper=True: U with a = U^H U (a TypeError before).
    rng = np.random.default_rng(5)
    a = _hermitian_positive(rng, 3, (2,)) if complex_ else _hermitian_positive(rng, 3, (2,)).real
    u = tl.linalg.cholesky(tl.tensor(a), upper=True).numpy()
    np.testing.assert_allclose(u, np.linalg.cholesky(a, upper=True), atol=1e-12)
    np.testing.assert_allclose(np.conj(np.swapaxes(u, -1, -2)) @ u, a, atol=1e-12)
    tl.testing.check_grads(lambda t: tl.linalg.cholesky(t, upper=True), [a], order=2)


@pytest.mark.parametrize("complex_", [False, True])
def test_pinv_hermitian_and_rtol(complex_):
    # NumPy's pinv(a, rcond, hermitian, *, rtol): hermitian and rtol were TypeErrors.
    rng = np.random.default_rng(6)
    a = _hermitian_positive(rng, 3) if complex_ else _hermitian_positive(rng, 3).real
    a = a - 3.0 * np.eye(3)  # indefinite
    np.testing.assert_allclose(
        tl.linalg.pinv(tl.tensor(a), hermitian=True).numpy(), np.linalg.pinv(a, hermitian=True), atol=1e-12
    )
    tl.testing.check_grads(lambda t: tl.linalg.pinv(t, hermitian=True), [a], order=2)
    low_rank = np.diag([2.0, 1.0, 1e-3])
    for rtol in [None, 1e-2, 0.7]:
        np.testing.assert_allclose(
            tl.linalg.pinv(tl.tensor(low_rank), rtol=rtol).numpy(), np.linalg.pinv(low_rank, rtol=rtol), atol=1e-12
        )
    f32 = np.diag([1.0, 1e-7]).astype(np.float32)  # rtol=None: max(m, n) * eps of float32 cuts 1e-7
    np.testing.assert_allclose(tl.linalg.pinv(tl.tensor(f32), rtol=None).numpy(), np.linalg.pinv(f32, rtol=None))
    with pytest.raises(ValueError, match=r"pinv: rtol and rcond can't both be set"):
        tl.linalg.pinv(tl.tensor(low_rank), 0.1, rtol=0.1)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_svd_hermitian(shape):
    # NumPy's svd(a, hermitian=True) (a TypeError): the same singular values, vectors up to sign.
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)
    u, s, vh = tl.linalg.svd(tl.tensor(a), hermitian=True)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, hermitian=True, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose((u.numpy() * s.numpy()[..., None, :]) @ vh.numpy(), a, atol=1e-12)
    np.testing.assert_allclose(
        tl.linalg.svd(tl.tensor(a), compute_uv=False, hermitian=True).numpy(), np.linalg.svd(a, compute_uv=False)
    )


def test_hermitian_keywords_refuse_non_square_matrices():
    for fn in (tl.linalg.svd, tl.linalg.pinv):
        with pytest.raises(ValueError, match=r"(svd|pinv): hermitian=True needs square matrices, got shape \(2, 3\)"):
            fn(tl.ones((2, 3)), hermitian=True)


# ---------------------------------------------------------------- aliasing
def test_matrix_power_one_is_a_new_value_not_the_variable():
    # matrix_power(v, 1) returned the Variable itself: the "result" changed with v.assign (DESIGN: values are
    # immutable); NumPy returns a copy too.
    v = tl.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    for n in (1, np.int64(1)):
        out = tl.linalg.matrix_power(v, n)
        assert out is not v and not isinstance(out, tl.Variable)
        v.assign(np.zeros((2, 2)))
        np.testing.assert_array_equal(out.numpy(), [[1.0, 2.0], [3.0, 4.0]])
        v.assign(np.array([[1.0, 2.0], [3.0, 4.0]]))
    g = tl.grad(lambda t: tl.sum(tl.linalg.matrix_power(t, 1) * np.arange(4.0).reshape(2, 2)))(tl.tensor(np.eye(2)))
    np.testing.assert_array_equal(g.numpy(), np.arange(4.0).reshape(2, 2))


# ---------------------------------------------------------------- LU of rectangular matrices
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 2), (2, 1, 3), (3, 1)])
def test_lu_gradient_of_rectangular_matrices(shape):
    # The gradient through l and u of a non-square matrix raised ValueError (PyTorch's linalg.lu has it).
    rng = np.random.default_rng(8)
    a = rng.standard_normal(shape)
    tl.testing.check_grads(lambda t: tl.linalg.lu(t)[1:], [a], order=2)
    tl.testing.check_grads(lambda t: tl.linalg.lu_factor(t)[0], [a], order=1)
    tl.testing.check_grads(lambda t: tl.linalg.lu(t, permute_l=True), [a + 0j + 1j * rng.standard_normal(shape)])


def test_lu_factor_gradient_traced_with_unknown_sizes_is_right_or_refused_clearly():
    # Traced with sizes unknown the gradient takes the square rule: square matrices get eager's gradient
    # (float64 central differences agree), a rectangular one a clear error naming the shape instead of a
    # broadcast ValueError from inside the rule; with its sizes known it is right.
    rng = np.random.default_rng(10)

    def loss(a):
        return tl.sum(tl.sin(tl.linalg.lu_factor(a)[0]))

    unknown = tl.function(tl.grad(loss), input_signature=[tl.TensorSpec((None, None), tl.float64)])
    square = rng.standard_normal((4, 4))
    np.testing.assert_allclose(unknown(square).numpy(), tl.grad(loss)(square).numpy(), rtol=1e-12)
    tl.testing.check_grads(loss, [square], order=1)
    for shape in [(5, 3), (3, 5)]:
        a = rng.standard_normal(shape)
        with pytest.raises(ValueError, match=rf"square matrices only.*shape {re.escape(str(shape))}, float64"):
            unknown(a)
        known = tl.function(tl.grad(loss), input_signature=[tl.TensorSpec(shape, tl.float64)])
        np.testing.assert_allclose(known(a).numpy(), tl.grad(loss)(a).numpy(), rtol=1e-12)


def test_lu_gradient_of_rectangular_matrices_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    for shape in [(3, 5), (5, 3), (2, 4, 6)]:
        a = rng.standard_normal(shape)
        wl, wu = (
            rng.standard_normal(shape[:-1] + (min(shape[-2:]),)),
            rng.standard_normal(shape[:-2] + (min(shape[-2:]), shape[-1])),
        )
        g = tl.grad(lambda t: tl.sum(tl.linalg.lu(t)[1] * wl) + tl.sum(tl.linalg.lu(t)[2] * wu))(tl.tensor(a))
        ta = torch.tensor(a, requires_grad=True)
        _, tl_, tu = torch.linalg.lu(ta)
        ((tl_ * torch.tensor(wl)).sum() + (tu * torch.tensor(wu)).sum()).backward()
        np.testing.assert_allclose(g.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- tl.fft
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("s", [None, (3, 5), (2, 4)])
def test_rfft2_and_irfft2(s, norm):
    # numpy.fft.rfft2 / irfft2 (also torch.fft's and jax.numpy.fft's) were missing from tl.fft.
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 3, 4))
    got = tl.fft.rfft2(tl.tensor(x), s=s, norm=norm)
    np.testing.assert_allclose(got.numpy(), np.fft.rfft2(x, s=s, norm=norm), atol=1e-12)
    spectrum = np.fft.rfft2(x)
    got = tl.fft.irfft2(tl.tensor(spectrum), s=s, norm=norm, axes=(-2, -1))
    np.testing.assert_allclose(got.numpy(), np.fft.irfft2(spectrum, s=s, norm=norm), atol=1e-12)
    np.testing.assert_allclose(
        tl.fft.rfft2(tl.tensor(x), axes=(0, 2)).numpy(), np.fft.rfft2(x, axes=(0, 2)), atol=1e-12
    )
    tl.testing.check_grads(lambda t: tl.fft.rfft2(t, s=s, norm=norm), [x], order=2)
    tl.testing.check_grads(lambda t: tl.fft.irfft2(t, s=s, norm=norm), [spectrum], order=2)


# ---------------------------------------------------------------- einsum
@pytest.mark.parametrize("optimize", [True, False, "greedy", "optimal", "auto", ["einsum_path", (0, 1), (0, 1)]])
def test_einsum_takes_numpy_and_jax_optimize(optimize):
    # numpy.einsum's and jax.numpy.einsum's optimize= was a TypeError; the contraction order is opt_einsum's
    # (cached) whatever it asks, and the values do not depend on it.
    rng = np.random.default_rng(11)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    got = tl.einsum("ij,jk,kl->il", tl.tensor(a), tl.tensor(b), tl.tensor(c), optimize=optimize)
    np.testing.assert_allclose(got.numpy(), np.einsum("ij,jk,kl->il", a, b, c), rtol=1e-12)
    got = tl.einsum(a, [0, 1], b, [1, 2], [0, 2], optimize=optimize is not False)
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-12)
    with pytest.raises(TypeError, match=r"Einsum: optimize must be a bool, a strategy name or a path, got 3"):
        tl.einsum("ij,jk", a, b, optimize=3)


def test_pinv_takes_one_cut_off_per_matrix():
    # NumPy's (and JAX's, PyTorch's) rcond / rtol broadcast over the batch: an array raised a TypeError from float().
    a = np.stack([np.diag([1.0, 0.1, 2.0]), np.diag([1.0, 0.1, 2.0]), np.diag([3.0, 0.5, 0.02])])
    for cutoffs in [np.array([0.01, 0.3, 0.05]), [[0.3], [0.01]], tl.tensor([0.01, 0.3, 0.05])]:
        batch = a if np.ndim(cutoffs) == 1 else np.stack([a[:2], a[1:]])
        want = np.linalg.pinv(batch, rcond=np.asarray(cutoffs))
        np.testing.assert_allclose(tl.linalg.pinv(tl.tensor(batch), rcond=cutoffs).numpy(), want, atol=1e-12)
        np.testing.assert_allclose(tl.linalg.pinv(tl.tensor(batch), rtol=cutoffs).numpy(), want, atol=1e-12)
    traced = tl.function(lambda t: tl.linalg.pinv(t, rcond=np.array([0.01, 0.3, 0.05])))
    np.testing.assert_allclose(traced(tl.tensor(a)).numpy(), np.linalg.pinv(a, rcond=[0.01, 0.3, 0.05]))
    # (Where a cut-off drops nonzero values the gradient is Golub-Pereyra's, as JAX's and PyTorch's.)
    tl.testing.check_grads(lambda t: tl.linalg.pinv(t, rcond=[0.01, 1e-3, 1e-4]), [a + 0.01], order=1)
    with pytest.raises(ValueError, match=r"pinv: rcond \(rtol\) of shape \(2,\) does not broadcast"):
        tl.linalg.pinv(tl.tensor(a), rcond=[0.1, 0.2])


# ---------------------------------------------------------------- matmul of bools
def test_matmul_of_bool_matrices_is_numpys_or_of_ands():
    # np.matmul and jnp.matmul of bools give bools (any k with x[i, k] and y[k, j]); it raised TypeError, while
    # einsum, tensordot and vecdot of bools already gave NumPy's bools.
    rng = np.random.default_rng(12)
    x, y = rng.integers(0, 2, (2, 3, 4)).astype(bool), rng.integers(0, 2, (4, 5)).astype(bool)
    for a, b in [(x, y), (x[0, 0], y), (x, y[:, 0]), (x[0, 0], y[:, 0])]:
        got = tl.matmul(tl.tensor(a), tl.tensor(b))
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), np.matmul(a, b))
    np.testing.assert_array_equal((tl.tensor(x) @ tl.tensor(y)).numpy(), x @ y)
    np.testing.assert_array_equal(tl.linalg.matmul(tl.tensor(x), tl.tensor(y)).numpy(), x @ y)
    np.testing.assert_array_equal(tl.linalg.multi_dot([x[0], y, y.T]).numpy(), np.linalg.multi_dot([x[0], y, y.T]))
    np.testing.assert_array_equal(
        tl.linalg.matrix_power(tl.tensor(x[0, :, :3]), 3).numpy(), np.linalg.matrix_power(x[0, :, :3], 3)
    )


# ---------------------------------------------------------------- empty matrices
@pytest.mark.parametrize("batch", [(), (2,)])
def test_lu_solve_and_lu_gradients_of_empty_matrices(batch):
    # TakeAlongAxis read "no index" as index 0 and raised IndexError (out of bounds for size 0): lu_solve of
    # 0 x 0 matrices, and the gradients of lu / lu_factor there, failed; torch.linalg.lu_solve gives empties.
    a = tl.tensor(np.zeros(batch + (0, 0)))
    x = tl.linalg.lu_solve(tl.linalg.lu_factor(a), np.zeros(batch + (0, 2)))
    assert x.shape == batch + (0, 2)
    for f in (lambda t: tl.linalg.lu(t)[2], lambda t: tl.linalg.lu_factor(t)[0]):
        assert tl.grad(lambda t: tl.sum(f(t)))(a).shape == batch + (0, 0)
    assert tl.take_along_axis(tl.zeros((0, 3)), tl.zeros((0, 3), "int64"), 0).shape == (0, 3)
    with pytest.raises(IndexError, match=r"TakeAlongAxis: index 0 is out of bounds for axis 0 with size 0"):
        tl.take_along_axis(tl.zeros((0, 3)), tl.zeros((1, 3), "int64"), 0)


# ---------------------------------------------------------------- NumPy's named results
def test_decompositions_return_numpys_named_tuples():
    # NumPy 2, JAX and PyTorch name the parts (slogdet(x).logabsdet, eigh(x).eigenvalues, svd(x).S, qr(x).R);
    # plain tuples raised AttributeError there.
    rng = np.random.default_rng(13)
    a = rng.standard_normal((3, 3))
    s = a @ a.T + np.eye(3)
    cases = [
        (tl.linalg.slogdet, np.linalg.slogdet, a, ("sign", "logabsdet")),
        (tl.linalg.eigh, np.linalg.eigh, s, ("eigenvalues", "eigenvectors")),
        (tl.linalg.eig, np.linalg.eig, s, ("eigenvalues", "eigenvectors")),
        (tl.linalg.svd, np.linalg.svd, a, ("U", "S", "Vh")),
        (tl.linalg.qr, np.linalg.qr, a, ("Q", "R")),
        (lambda x: tl.linalg.qr(x, mode="complete"), lambda x: np.linalg.qr(x, mode="complete"), a, ("Q", "R")),
    ]
    for fn, ref, x, fields in cases:
        for out in (fn(tl.tensor(x)), tl.function(fn)(tl.tensor(x))):
            want = ref(x)
            assert type(out).__name__ == type(want).__name__ and out._fields == want._fields == fields
            for got, expected in zip(out, want):
                np.testing.assert_allclose(np.abs(got.numpy()), np.abs(expected), atol=1e-10)
    g = tl.grad(lambda t: tl.sum(tl.linalg.eigh(t).eigenvalues * np.arange(3.0)))(tl.tensor(s))
    w, v = np.linalg.eigh(s)
    np.testing.assert_allclose(g.numpy(), (v * np.arange(3.0)) @ v.T, atol=1e-10)
    assert tl.linalg.slogdet(tl.tensor(a)).logabsdet.shape == ()


def test_hermitian_keywords_of_bool_and_integer_matrices():
    # (x + x^T) / 2 of a bool matrix was a logical or halved: pinv(hermitian=True) doubled, svd's values halved.
    a = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    for x in (a.astype(bool), a, a.astype(np.int32)):
        np.testing.assert_allclose(
            tl.linalg.pinv(x, hermitian=True).numpy(), np.linalg.pinv(a, hermitian=True), atol=1e-12
        )
        np.testing.assert_allclose(
            tl.linalg.svd(x, hermitian=True)[1].numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12
        )
        np.testing.assert_allclose(tl.linalg.eigvalsh(x, UPLO="U").numpy(), np.linalg.eigvalsh(a, UPLO="U"), atol=1e-12)


# ---------------------------------------------------------------- lu_factor of big matrices
@pytest.mark.parametrize("shape", [(40, 40), (2, 30, 20), (2, 0, 12, 12), (12, 33), (9, 9)])
def test_lu_factor_of_big_matrices_is_lapacks(shape):
    # Matrices of 8 or more rows and columns are factored by LAPACK's getrf (SciPy), one at a time: the batched
    # elimination's Python loop over columns took 9 s for a 1000 x 1000 matrix (getrf 0.27 s).  The factors,
    # pivots and the permutation are scipy.linalg.lu_factor's / lu's, complex and integer inputs too.
    rng = np.random.default_rng(14)
    for x in (rng.standard_normal(shape), rng.integers(-2, 3, shape), _complex(rng, *shape).astype(np.complex64)):
        lu, piv = tl.linalg.lu_factor(tl.tensor(x))
        flat = x.reshape((-1,) + shape[-2:])
        want = [scipy.linalg.lu_factor(m) if shape[-1] == shape[-2] else None for m in flat]
        for i, m in enumerate(flat):
            p, low, up = scipy.linalg.lu(m)
            got_p, got_l, got_u = (t.numpy().reshape((-1,) + t.shape[-2:])[i] for t in tl.linalg.lu(tl.tensor(x)))
            np.testing.assert_allclose(got_l, low, atol=1e-5)
            np.testing.assert_allclose(got_u, up, atol=1e-5)
            np.testing.assert_array_equal(got_p, p.real)
            if want[i] is not None:
                np.testing.assert_allclose(lu.numpy().reshape(flat.shape)[i], want[i][0], atol=1e-5)
                np.testing.assert_array_equal(piv.numpy().reshape(flat.shape[:-1])[i], want[i][1])
        assert lu.dtype == (x.dtype if x.dtype.kind in "fc" else np.float64) and piv.dtype == np.int32
    a = rng.standard_normal(shape[-2:])
    if shape[-1] == shape[-2]:
        b = rng.standard_normal(shape[-1])
        np.testing.assert_allclose(tl.linalg.lu_solve(tl.linalg.lu_factor(a), b).numpy(), np.linalg.solve(a, b))


def test_symmetrize_input_false_reads_one_triangle_as_jax():
    # jax.numpy.linalg's symmetrize_input=False (a TypeError): eigh/eigvalsh read the UPLO triangle (the lower
    # one by default), cholesky the lower one, as NumPy's cholesky does.
    rng = np.random.default_rng(16)
    a = rng.standard_normal((2, 3, 3))
    spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    skewed = spd + np.triu(rng.standard_normal((3, 3)), 1)  # a different upper triangle
    np.testing.assert_allclose(
        tl.linalg.eigh(tl.tensor(skewed), symmetrize_input=False).eigenvalues.numpy(), np.linalg.eigvalsh(skewed)
    )
    np.testing.assert_allclose(
        tl.linalg.eigvalsh(tl.tensor(skewed), UPLO="U", symmetrize_input=False).numpy(),
        np.linalg.eigvalsh(skewed, UPLO="U"),
    )
    got = tl.linalg.cholesky(tl.tensor(skewed), symmetrize_input=False).numpy()
    np.testing.assert_allclose(got, np.linalg.cholesky(spd), atol=1e-12)
    np.testing.assert_allclose(tl.linalg.cholesky(tl.tensor(spd)).numpy(), np.linalg.cholesky(spd), atol=1e-12)
    g = tl.grad(lambda t: tl.sum(tl.linalg.cholesky(t, symmetrize_input=False)))(tl.tensor(skewed[0])).numpy()
    assert not np.any(np.triu(g, 1))
    tl.testing.check_grads(lambda t: tl.linalg.cholesky(t, symmetrize_input=False), [skewed[0]], order=2)

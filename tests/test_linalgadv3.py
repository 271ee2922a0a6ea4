"""tl.linalg, round 3: SciPy's matrix functions that tl.linalg lacked (``sqrtm``, ``logm``, ``polar``,
``solve_sylvester``, ``expm_frechet``, ``cho_factor``/``cho_solve``, ``toeplitz``, ``circulant``), attacked
as a JAX / SciPy user would use them.

References: ``scipy.linalg`` for values, identities (``sqrtm(x) @ sqrtm(x) == x``, ``expm(logm(x)) == x``,
``u^H u == I``), closed forms of the Frechet derivatives at the identity, float64 central differences
(``tl.testing.check_grads``; for complex inputs, differences along the real and imaginary parts, JAX's
convention), and ``jax.scipy.linalg`` where JAX differentiates (importorskip).
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

L = tl.linalg
sl = pytest.importorskip("scipy.linalg")


def _rng(seed=0):
    return np.random.default_rng(seed)


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _spd(rng, *shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])


def _complex_gradient_by_differences(f, args, k, eps=1e-6):
    """JAX's gradient of Re sum(f(*args) * w) in argument k: d/dRe - i d/dIm, by central differences."""
    w = _complex(_rng(99), *f(*[tl.tensor(a) for a in args]).shape)

    def loss(*a):
        return tl.sum(tl.real(f(*a) * tl.tensor(w)))

    analytic = tl.grad(loss, argnums=k)(*[tl.tensor(a) for a in args]).numpy()
    numeric = np.zeros_like(args[k])
    for index in np.ndindex(args[k].shape):
        for unit, weight in ((1, 1), (1j, -1j)):
            step = np.zeros_like(args[k])
            step[index] = eps * unit
            up, down = list(args), list(args)
            up[k], down[k] = args[k] + step, args[k] - step
            difference = float(loss(*map(tl.tensor, up))) - float(loss(*map(tl.tensor, down)))
            numeric[index] += weight * difference / (2 * eps)
    return analytic, numeric


# ---------------------------------------------------------------- values against SciPy and identities
def test_sqrtm_and_logm_match_scipy_and_invert_each_other_batched():
    rng = _rng(1)
    x = _spd(rng, 2, 3, 3) + rng.uniform(-0.3, 0.3, (2, 3, 3))  # not symmetric, eigenvalues right of 0
    root, log = L.sqrtm(x).numpy(), L.logm(x).numpy()
    np.testing.assert_allclose(root, [sl.sqrtm(m) for m in x], atol=1e-12)
    np.testing.assert_allclose(log, [sl.logm(m) for m in x], atol=1e-12)
    np.testing.assert_allclose(root @ root, x, atol=1e-12)
    np.testing.assert_allclose(L.expm(log).numpy(), x, atol=1e-11)
    assert L.sqrtm(x.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(L.sqrtm(x.astype(np.float32)).numpy(), root, atol=1e-5)
    c = _complex(rng, 3, 3) + 3 * np.eye(3)
    np.testing.assert_allclose(L.sqrtm(c).numpy(), sl.sqrtm(c), atol=1e-12)
    np.testing.assert_allclose(L.logm(c).numpy(), sl.logm(c), atol=1e-12)


def test_real_matrix_without_a_real_principal_root_is_nan_and_its_complex_root_is_scipys():
    x = np.diag([-1.0, 4.0])
    assert np.isnan(L.sqrtm(x).numpy()).all() and np.isnan(L.logm(x).numpy()).all()
    np.testing.assert_allclose(L.sqrtm(x.astype(complex)).numpy(), np.diag([1j, 2.0]), atol=1e-15)
    np.testing.assert_allclose(L.logm(x.astype(complex)).numpy(), np.diag([np.pi * 1j, np.log(4.0)]), atol=1e-15)
    # A rotation has complex eigenvalues but a real root (the half rotation): real, as SciPy.
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(L.sqrtm(rotation).numpy(), sl.sqrtm(rotation), atol=1e-14)
    # A NaN gives NaN, in the value and in the gradient (SciPy raises), matrix by matrix.
    batch = np.stack([np.eye(2), np.full((2, 2), np.nan)])
    for f in (L.sqrtm, L.logm, lambda a: L.solve_sylvester(a, a, a)):
        out = f(batch).numpy()
        np.testing.assert_allclose(out[0], f(np.eye(2)).numpy())
        assert np.isnan(out[1]).all()
    assert np.isnan(tl.grad(lambda a: tl.sum(L.sqrtm(a)))(x).numpy()).all()
    # Empty and 1 x 1 matrices, integers as float64.
    assert L.sqrtm(np.zeros((2, 0, 0))).shape == (2, 0, 0)
    assert L.logm(np.array([[4]])).dtype == np.float64
    np.testing.assert_allclose(L.logm(np.array([[4]])).numpy(), [[np.log(4.0)]])


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar_matches_scipy_for_square_tall_wide_and_complex(shape, side):
    rng = _rng(2)
    for a in (rng.standard_normal(shape), _complex(rng, *shape)):
        u, p = L.polar(a, side)
        ref_u, ref_p = sl.polar(a, side)
        np.testing.assert_allclose(u.numpy(), ref_u, atol=1e-12)
        np.testing.assert_allclose(p.numpy(), ref_p, atol=1e-12)
        np.testing.assert_allclose((u @ p if side == "right" else p @ u).numpy(), a, atol=1e-12)


def test_solve_sylvester_solves_the_equation_where_scipy_does_not():
    rng = _rng(3)
    a, b, q = rng.standard_normal((2, 3, 3)), rng.standard_normal((4, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(L.solve_sylvester(a, b, q).numpy(), [sl.solve_sylvester(m, b, q) for m in a])
    # Complex a with real b: SciPy 1.17's solve_sylvester returns x with a x + x b - q of size 0.8 here.
    c, b = _complex(rng, 3, 3), rng.standard_normal((3, 3))
    x = L.solve_sylvester(c, b, c).numpy()
    np.testing.assert_allclose(c @ x + x @ b, c, atol=1e-12)


def test_solve_sylvester_with_no_unique_solution_raises_instead_of_a_huge_answer():
    # a = I, b = -I: a x + x b = 0 for every x.  SciPy returns 4.5e15 in every entry.
    with pytest.raises(np.linalg.LinAlgError, match=r"SylvesterSolve: no unique solution.*shape \(2, 2\)"):
        L.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"SylvesterSolve: a is 2x2 and b is 3x3, so q must be 2x3, got 3x2"):
        L.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 2)))


def test_the_generic_sylvester_kernel_agrees_with_bartels_stewart():
    from tensorlib.ops.linalg_scipy import _sylvester_generic

    rng = _rng(4)
    a, b, q = _complex(rng, 2, 3, 3), rng.standard_normal((2, 2)) + 2 * np.eye(2), rng.standard_normal((3, 2))
    x = _sylvester_generic(np, a, b, q)
    np.testing.assert_allclose(a @ x + x @ b, np.broadcast_to(q, (2, 3, 2)), atol=1e-12)
    np.testing.assert_allclose(x, L.solve_sylvester(a, b, q).numpy(), atol=1e-12)


def test_expm_frechet_toeplitz_circulant_cho_solve_match_scipy():
    rng = _rng(5)
    a, e = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    for got, want in zip(L.expm_frechet(a, e), sl.expm_frechet(a, e)):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    np.testing.assert_allclose(L.expm_frechet(a, e, compute_expm=False).numpy(), sl.expm_frechet(a, e)[1])
    c, r = rng.standard_normal(3), rng.standard_normal(4)
    np.testing.assert_array_equal(L.toeplitz(c, r).numpy(), sl.toeplitz(c, r))
    h = _complex(rng, 4)
    np.testing.assert_array_equal(L.toeplitz(h).numpy(), sl.toeplitz(h))
    np.testing.assert_array_equal(
        L.toeplitz(np.ones((2, 3)), np.arange(2.0)).numpy()[1], sl.toeplitz(np.ones(3), [0, 1])
    )
    np.testing.assert_array_equal(L.circulant([1, 2, 3, 4]).numpy(), sl.circulant([1, 2, 3, 4]))
    s = _spd(rng, 3, 3)
    for lower in (False, True):
        factor, flag = L.cho_factor(s, lower=lower)
        assert flag is lower
        ref = sl.cho_factor(s, lower=lower)[0]
        np.testing.assert_allclose(factor.numpy(), np.tril(ref) if lower else np.triu(ref), atol=1e-12)
        for b in (np.ones(3), np.ones((3, 2))):
            np.testing.assert_allclose(L.cho_solve((factor, lower), b).numpy(), sl.cho_solve((ref, lower), b))


# ---------------------------------------------------------------- gradients
@pytest.mark.parametrize(
    "name",
    ["sqrtm", "solve_sylvester", "polar_square", "polar_tall", "polar_wide_left", "expm_frechet", "structured", "cho"],
)
def test_gradients_to_second_order_against_central_differences(name):
    rng = _rng(6)
    x = _spd(rng, 3, 3) / 3 + rng.uniform(-0.2, 0.2, (3, 3))
    cases = {
        "sqrtm": (L.sqrtm, [x]),
        "solve_sylvester": (L.solve_sylvester, [x, _spd(rng, 2, 2), rng.standard_normal((3, 2))]),
        "polar_square": (lambda a: L.polar(a)[0] + L.polar(a)[1], [rng.standard_normal((3, 3))]),
        "polar_tall": (lambda a: L.polar(a)[0] + 0.0, [rng.standard_normal((4, 2))]),
        "polar_wide_left": (lambda a: L.polar(a, "left")[1], [rng.standard_normal((2, 4))]),
        "expm_frechet": (lambda a, e: L.expm_frechet(a, e)[1], [x, rng.standard_normal((3, 3)) * 10]),
        "structured": (
            lambda c, r: L.toeplitz(c, r) @ L.circulant(r),
            [rng.standard_normal(4), rng.standard_normal(4)],
        ),
        "cho": (lambda a, b: L.cho_solve(L.cho_factor(a, lower=True), b), [_spd(rng, 3, 3), rng.standard_normal(3)]),
    }
    f, args = cases[name]
    check_grads(f, args, order=2)


def test_logm_gradient_to_second_order_on_one_matrix():
    check_grads(L.logm, [np.array([[1.5, 0.4], [-0.2, 0.8]])], order=2, modes=("rev",))


def test_gradients_at_repeated_eigenvalues_are_the_closed_forms():
    # At x = I every eigenvalue repeats; the Frechet derivatives are still defined: sqrtm'(I) E = E / 2,
    # logm'(I) E = E, and the polar factors of an orthogonal matrix move smoothly.  (A gradient through
    # eigenvectors or singular vectors is NaN there.)
    w = _rng(7).standard_normal((3, 3))
    np.testing.assert_allclose(tl.grad(lambda x: tl.sum(L.sqrtm(x) * w))(np.eye(3)).numpy(), w / 2, atol=1e-12)
    np.testing.assert_allclose(tl.grad(lambda x: tl.sum(L.logm(x) * w))(np.eye(3)).numpy(), w, atol=1e-12)
    np.testing.assert_allclose(tl.grad(lambda x: tl.sum(L.sqrtm(x) * w))(4 * np.eye(3)).numpy(), w / 4, atol=1e-12)
    rotation = np.linalg.qr(_rng(8).standard_normal((3, 3)))[0]
    check_grads(lambda a: L.polar(a)[0], [rotation], order=2)


@pytest.mark.parametrize("name", ["sqrtm", "logm", "solve_sylvester_a", "solve_sylvester_b", "polar_tall", "cho"])
def test_complex_gradients_follow_jax_convention_by_differences(name):
    rng = _rng(9)
    h = _complex(rng, 3, 3)
    h = h @ h.conj().T + np.eye(3)
    cases = {
        "sqrtm": (L.sqrtm, [_complex(rng, 3, 3) + 3 * np.eye(3)], 0),
        "logm": (L.logm, [h], 0),
        "solve_sylvester_a": (L.solve_sylvester, [h, _complex(rng, 2, 2) + 3 * np.eye(2), _complex(rng, 3, 2)], 0),
        "solve_sylvester_b": (L.solve_sylvester, [h, _complex(rng, 2, 2) + 3 * np.eye(2), _complex(rng, 3, 2)], 1),
        "polar_tall": (lambda a: L.polar(a)[0], [_complex(rng, 4, 2)], 0),
        "cho": (lambda a, b: L.cho_solve(L.cho_factor(a), b), [h, _complex(rng, 3)], 0),
    }
    f, args, k = cases[name]
    analytic, numeric = _complex_gradient_by_differences(f, args, k)
    np.testing.assert_allclose(analytic, numeric, atol=1e-6)


def test_complex_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp, jsl = jax.numpy, jax.scipy.linalg
    rng = _rng(10)
    a, e, c = _complex(rng, 3, 3), _complex(rng, 3, 3), _complex(rng, 4)
    w = _complex(rng, 3, 3)
    pairs = [
        (lambda x: L.polar(x)[0], lambda x: jsl.polar(x, method="svd")[0], a),
        (lambda x: L.polar(x, "left")[1], lambda x: jsl.polar(x, side="left", method="svd")[1], a),
        (lambda x: L.expm_frechet(x, e)[1], lambda x: jsl.expm_frechet(x, e)[1], a),
        (lambda x: L.toeplitz(x)[:3, :3], lambda x: jsl.toeplitz(x)[:3, :3], c),
    ]
    for ours, theirs, x in pairs:
        got = tl.grad(lambda t, ours=ours: tl.sum(tl.real(ours(t) * tl.tensor(w))))(tl.tensor(x)).numpy()
        want = jax.grad(lambda t, theirs=theirs: jnp.sum(jnp.real(theirs(t) * w)))(x)
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-10)


# ---------------------------------------------------------------- modes, errors
def test_traced_and_vmapped_agree_with_eager():
    rng = _rng(11)
    x = _spd(rng, 2, 3, 3)
    for f in (L.sqrtm, L.logm, lambda a: L.polar(a)[1], lambda a: L.solve_sylvester(a, a, a), L.circulant):
        eager = f(x).numpy()
        np.testing.assert_allclose(tl.function(f)(x).numpy(), eager, atol=1e-12)
        np.testing.assert_allclose(tl.vmap(f)(x).numpy(), eager, atol=1e-12)
    loss = lambda a: tl.sum(L.sqrtm(a) ** 2) + tl.sum(L.logm(a) ** 2)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(x).numpy(), tl.grad(loss)(x).numpy(), atol=1e-10)


def test_bad_input_names_the_function_and_shapes():
    with pytest.raises(ValueError, match=r"MatrixSquareRoot: expected square matrices .* got 2x3 .*shape \(2, 3\)"):
        L.sqrtm(np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"MatrixLogarithm: float16 is not supported by LAPACK"):
        L.logm(np.eye(2, dtype=np.float16))
    with pytest.raises(ValueError, match=r"polar: side must be 'right' or 'left', got 'up'"):
        L.polar(np.eye(2), "up")
    with pytest.raises(ValueError, match=r"expm_frechet: A and E must have the same size, got A shape \(2, 2\)"):
        L.expm_frechet(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match=r"cho_solve: c must be \(\.\.\., n, n\) and b \(n,\) or \(\.\.\., n, k\)"):
        L.cho_solve((np.eye(2), False), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match=r"SylvesterSolve: no unique solution"):
        tl.grad(lambda x: tl.sum(L.sqrtm(x)))(np.diag([1.0, 0.0]))  # the root of a singular matrix has no derivative


# ---------------------------------------------------------------- det's second derivative at singular matrices
def _cofactor_matrix(a):
    """adj(a)^T from the minors (no inverse): the gradient of det, a polynomial, defined everywhere."""
    n = a.shape[-1]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


def _det_hessian_by_differences(a, eps=1e-5):
    """d^2 det / da_ij da_kl by central differences of the cofactor matrix (exact up to O(eps^2) terms)."""
    hessian = np.empty(a.shape + a.shape)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = eps
        hessian[index] = (_cofactor_matrix(a + step) - _cofactor_matrix(a - step)) / (2 * eps)
    return hessian


@pytest.mark.parametrize(
    "a",
    [
        np.array([[1.0, 2.0], [2.0, 4.0]]),  # rank 1 of 2
        np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),  # rank 2 of 3
        np.diag([1.0, 0.0, 0.0]),  # rank 1 of 3
        np.zeros((3, 3)),
        np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]),  # invertible
    ],
)
def test_second_derivative_of_det_is_finite_at_singular_matrices(a):
    # det is a polynomial: its Hessian exists everywhere; it raised "MatrixInverse: Singular matrix".
    hessian = tl.hessian(L.det)(a).numpy()
    np.testing.assert_allclose(hessian, _det_hessian_by_differences(a), atol=1e-8)
    torch = pytest.importorskip("torch")
    expected = torch.autograd.functional.hessian(torch.linalg.det, torch.tensor(a)).numpy()
    if np.linalg.matrix_rank(a) >= a.shape[-1] - 1:  # PyTorch's is NaN at rank n - 2 and below
        np.testing.assert_allclose(hessian, expected, atol=1e-10)


def test_third_derivative_of_det_and_complex_second_derivative():
    rng = _rng(12)
    check_grads(L.det, [rng.standard_normal((2, 3, 3))], order=2)
    # The second derivative's own gradient (det's third) at an invertible matrix, against differences.
    check_grads(lambda x, w: tl.sum(tl.grad(L.det)(x) * w), [rng.standard_normal((3, 3)), np.ones((3, 3))], order=2)
    # Complex, singular (second row (1 + i) times the first): JAX's convention, by differences.
    singular = _complex(rng, 3, 3)
    singular[1] = (1 + 1j) * singular[0]
    w = _complex(rng)

    def gradient_of_det(x):
        return tl.grad(lambda y: tl.real(L.det(y) * w))(x)

    analytic, numeric = _complex_gradient_by_differences(gradient_of_det, [singular], 0)
    np.testing.assert_allclose(analytic, numeric, atol=1e-6)


# ---------------------------------------------------------------- schur, hessenberg: values only
def test_schur_and_hessenberg_match_scipy_and_refuse_a_gradient_clearly():
    rng = _rng(13)
    a = rng.standard_normal((2, 4, 4))
    for output in ("real", "complex"):
        t, z = L.schur(a, output)
        for k in range(2):
            ref_t, ref_z = sl.schur(a[k], output)
            np.testing.assert_allclose(t.numpy()[k], ref_t, atol=1e-12)
            np.testing.assert_allclose(z.numpy()[k], ref_z, atol=1e-12)
        z_h = np.conj(np.swapaxes(z.numpy(), -1, -2))
        np.testing.assert_allclose(z.numpy() @ t.numpy() @ z_h, a, atol=1e-12)
    assert L.schur(a, "complex")[0].dtype == np.complex128 and L.schur(a.astype(np.float32))[0].dtype == np.float32
    h, q = L.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h.numpy()[1], sl.hessenberg(a[1]), atol=1e-12)
    np.testing.assert_allclose(q.numpy() @ h.numpy() @ np.swapaxes(q.numpy(), -1, -2), a, atol=1e-12)
    assert np.all(np.tril(h.numpy(), -2) == 0)
    with pytest.raises(LookupError, match=r"Schur: no gradient \(input shape \(2, 4, 4\) float64\)"):
        tl.grad(lambda x: tl.sum(L.schur(x)[0]))(a)
    with pytest.raises(LookupError, match=r"Hessenberg: no gradient"):
        tl.grad(lambda x: tl.sum(L.hessenberg(x)))(a)
    with pytest.raises(ValueError, match=r"Schur: output must be 'real' or 'complex', got 'r'"):
        L.schur(a, "r")


def test_integer_matrices_are_read_as_float64_by_every_new_function():
    # polar of an integer matrix returned p = I (u^H u: the factor overwrote the matrix) instead of SciPy's p.
    a, b = np.array([[5, 2], [2, 3]]), np.array([[2, 1], [0, 2]])
    pairs = [
        (lambda x: L.polar(x)[1], lambda x: sl.polar(x)[1]),
        (lambda x: L.polar(x, "left")[1], lambda x: sl.polar(x, "left")[1]),
        (L.sqrtm, sl.sqrtm),
        (L.logm, sl.logm),
        (lambda x: L.solve_sylvester(x, b, x), lambda x: sl.solve_sylvester(x, b, x)),
        (lambda x: L.expm_frechet(x, b)[1], lambda x: sl.expm_frechet(x, b)[1]),
        (lambda x: L.cho_solve(L.cho_factor(x), np.array([1, 2])), lambda x: sl.cho_solve(sl.cho_factor(x), [1, 2])),
        (lambda x: L.schur(x)[0], lambda x: sl.schur(x)[0]),
    ]
    for ours, scipys in pairs:
        out = ours(a)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.numpy(), scipys(a.astype(np.float64)), atol=1e-12)

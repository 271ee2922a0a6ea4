"""tl.linalg, round 4: degenerate spectra, higher derivatives of det, and the matrix functions of SciPy,
attacked as an adversary and as a SciPy / JAX / PyTorch user would use them.

References: ``scipy.linalg`` for values (and identities where SciPy itself is wrong: ``expm(logm(x)) == x``),
closed forms, float64 central differences (``tl.testing.check_grads`` and a direct one below), and
PyTorch / JAX where installed (importorskip).
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

L = tl.linalg
sl = pytest.importorskip("scipy.linalg")


def _rng(seed=0):
    return np.random.default_rng(seed)


def _differences(f, x, eps=1e-6):
    """The float64 central-difference gradient of the scalar f at the array x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (float(f(tl.tensor(x + step))) - float(f(tl.tensor(x - step)))) / (2 * eps)
    return grad


# ---------------------------------------------------------------- logm of a singular matrix
def test_logm_of_an_exactly_singular_matrix_is_nan_not_scipys_finite_number():
    # No logarithm exists (log 0 = -inf); SciPy warns and returns the logarithm of x with its zero eigenvalue
    # replaced by an arbitrary 1e-20 (an eigenvalue -46.05 of the result).
    x = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(np.linalg.eigvalsh(sl.logm(x)).min(), np.log(1e-20))
    assert np.isnan(L.logm(x).numpy()).all()
    assert np.isnan(L.logm(np.zeros((1, 1))).numpy()).all()
    # matrix by matrix: an invertible neighbour in the batch keeps its logarithm
    batch = np.stack([x, np.diag([2.0, 3.0])])
    out = L.logm(batch).numpy()
    assert np.isnan(out[0]).all()
    np.testing.assert_allclose(out[1], np.diag(np.log([2.0, 3.0])), atol=1e-14)
    # nearly singular is not singular: exp(log) is still x
    near = np.diag([1e-200, 1.0])
    np.testing.assert_allclose(L.logm(near).numpy(), np.diag([np.log(1e-200), 0.0]), rtol=1e-14)


# ---------------------------------------------------------------- det's higher derivatives at singular matrices
def _mixed_derivative_of_det(x, directions, h=0.5):
    """d^k/dt_1..dt_k det(x + sum t_i d_i) at 0 by central differences of NumPy's det: exact but for rounding
    where k >= n - 1 (det is a polynomial of degree n; the error term is the (k + 2)-th derivative)."""
    import itertools

    total = 0.0
    for signs in itertools.product((1, -1), repeat=len(directions)):
        point = x + h * sum(sign * d for sign, d in zip(signs, directions))
        total += np.prod(signs) * np.linalg.det(point)
    return total / (2 * h) ** len(directions)


def _directional(f, direction):
    return lambda y: tl.sum(tl.grad(f)(y) * tl.tensor(direction))


@pytest.mark.parametrize(
    "x",
    [
        np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]),  # rank 2
        np.ones((3, 3)),  # rank 1
        np.zeros((3, 3)),
        np.array([[1.0, 2.0, 0.0, 1.0], [2.0, 4.0, 0.0, 2.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 2.0, 1.0]]),  # rank 3
        np.diag([2.0, 0.0, 0.0, 1.0]),  # rank 2
    ],
)
def test_third_and_fourth_derivatives_of_det_at_singular_matrices_match_differences_of_det(x):
    rng = _rng(7)
    a, b, c, d = rng.standard_normal((4,) + x.shape)
    second = _directional(_directional(L.det, a), b)
    third = tl.grad(second)(x).numpy()  # the gradient of D^2 det[a, b]: D^3 det[a, b, .]
    reference = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        unit = np.zeros_like(x)
        unit[index] = 1.0
        reference[index] = _mixed_derivative_of_det(x, [a, b, unit])
    np.testing.assert_allclose(third, reference, atol=1e-9)
    np.testing.assert_allclose(float(_directional(second, c)(x)), _mixed_derivative_of_det(x, [a, b, c]), atol=1e-9)
    fourth = float(tl.sum(tl.grad(_directional(second, c))(x) * tl.tensor(d)))
    np.testing.assert_allclose(fourth, _mixed_derivative_of_det(x, [a, b, c, d]), atol=1e-9)


def test_det_derivatives_batched_complex_and_past_the_degree():
    rng = _rng(8)
    x = np.stack([np.ones((3, 3)), rng.standard_normal((3, 3))])  # a singular and an invertible matrix
    a = rng.standard_normal((3, 3))
    h = tl.hessian(lambda y: tl.sum(tl.grad(lambda z: tl.sum(L.det(z)))(y) * tl.tensor(a)))(x).numpy()
    for i in range(2):
        for index in np.ndindex(3, 3):
            unit = np.zeros((3, 3))
            unit[index] = 1.0
            for jndex in np.ndindex(3, 3):
                other = np.zeros((3, 3))
                other[jndex] = 1.0
                # cross-batch entries are zero; D^3 det of a 3 x 3 is x-independent
                expect = _mixed_derivative_of_det(x[i], [a, unit, other])
                np.testing.assert_allclose(h[(i,) + index + (i,) + jndex], expect, atol=1e-9)
    # past the degree: the fourth derivative of a 3 x 3 det is zero
    fourth = tl.grad(lambda y: tl.sum(tl.grad(_directional(_directional(L.det, a), a))(y) * tl.tensor(a)))(x[0])
    np.testing.assert_array_equal(fourth.numpy(), np.zeros((3, 3)))
    # complex (JAX's convention: det is holomorphic, so the gradient is the plain derivative)
    z = np.array([[1.0 + 1j, 2.0], [1.0 + 1j, 2.0]])  # singular
    e = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    first = tl.grad(lambda y: tl.real(tl.sum(tl.grad(lambda w: tl.real(L.det(w)))(y) * tl.tensor(e))))(z).numpy()
    assert np.isfinite(first).all()


# ---------------------------------------------------------------- scipy.linalg's remaining names
def _matrices(seed, *shape, complex_=False):
    rng = _rng(seed)
    a = rng.standard_normal(shape) * 0.5
    return a + 1j * rng.standard_normal(shape) * 0.5 if complex_ else a


@pytest.mark.parametrize("name", ["cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm"])
def test_trigonometric_matrix_functions_match_scipy_and_differentiate(name):
    f = getattr(L, name)
    for complex_ in (False, True):
        x = _matrices(10, 2, 3, 3, complex_=complex_)
        out = f(x).numpy()
        assert out.dtype == x.dtype
        np.testing.assert_allclose(out, [getattr(sl, name)(m) for m in x], atol=1e-12)
    assert f(np.float32(_matrices(11, 3, 3))).dtype == np.float32
    check_grads(f, (_matrices(12, 3, 3),), order=2)
    # at a repeated eigenvalue (I) the gradient is the Frechet derivative along g: f'(1) g
    g = _rng(13).standard_normal((3, 3))
    derivative = {"cosm": -np.sin(1.0), "sinm": np.cos(1.0), "tanm": 1 / np.cos(1.0) ** 2}
    derivative.update(coshm=np.sinh(1.0), sinhm=np.cosh(1.0), tanhm=1 / np.cosh(1.0) ** 2)
    got = tl.grad(lambda a: tl.sum(f(a) * tl.tensor(g)))(np.eye(3)).numpy()
    np.testing.assert_allclose(got, derivative[name] * g, atol=1e-12)


def test_fractional_matrix_power_matches_scipy_and_differentiates():
    rng = _rng(14)
    x = rng.standard_normal((2, 3, 3)) * 0.3 + 2 * np.eye(3)
    for t in (0.5, -1.3, 2.7):
        np.testing.assert_allclose(
            L.fractional_matrix_power(x, t).numpy(), [sl.fractional_matrix_power(m, t) for m in x], atol=1e-12
        )
    np.testing.assert_allclose(L.fractional_matrix_power(x[0], 3).numpy(), x[0] @ x[0] @ x[0], atol=1e-12)
    np.testing.assert_allclose(L.fractional_matrix_power(x[0], -1.0).numpy(), np.linalg.inv(x[0]), atol=1e-12)
    check_grads(lambda a: L.fractional_matrix_power(a, 0.7), (x[0],), order=1)
    # at I (a repeated eigenvalue) the derivative of a^t along g is t g
    g = rng.standard_normal((3, 3))
    got = tl.grad(lambda a: tl.sum(L.fractional_matrix_power(a, 0.3) * tl.tensor(g)))(np.eye(3)).numpy()
    np.testing.assert_allclose(got, 0.3 * g, atol=1e-10)
    assert np.isnan(L.fractional_matrix_power(np.diag([-1.0, 2.0]), 0.5).numpy()).all()
    with pytest.raises(TypeError, match=r"fractional_matrix_power: t must be a real number, got str"):
        L.fractional_matrix_power(x[0], "2")


def test_kron_and_khatri_rao_match_scipy_batched_with_gradients():
    rng = _rng(15)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 5))
    np.testing.assert_array_equal(L.kron(a, b).numpy(), np.kron(a, b))
    batch = rng.standard_normal((3, 2, 3))
    np.testing.assert_array_equal(L.kron(batch, b).numpy(), [np.kron(m, b) for m in batch])
    c = rng.standard_normal((4, 2))
    np.testing.assert_array_equal(L.khatri_rao(a.T, c).numpy(), sl.khatri_rao(a.T, c))
    np.testing.assert_array_equal(L.kron(np.array([[1, 2]]), np.array([[3]])).numpy(), [[3, 6]])
    check_grads(L.kron, (a, b[:2, :2]), order=2)
    check_grads(L.khatri_rao, (a.T, c), order=2)
    with pytest.raises(ValueError, match=r"khatri_rao: expected matrices with the same number of columns, got a "):
        L.khatri_rao(a, c)
    with pytest.raises(ValueError, match=r"kron: expected matrices .* got a shape \(3,\)"):
        L.kron(np.ones(3), b)


def test_lyapunov_solvers_match_scipy_real_and_complex_with_gradients():
    rng = _rng(16)
    for complex_ in (False, True):
        a, q = _matrices(17, 3, 3, complex_=complex_), _matrices(18, 3, 3, complex_=complex_)
        x = L.solve_continuous_lyapunov(a, q).numpy()
        np.testing.assert_allclose(x, sl.solve_continuous_lyapunov(a, q), atol=1e-12)
        np.testing.assert_allclose(a @ x + x @ a.conj().T, q, atol=1e-12)
        for method in ("direct", "bilinear"):
            x = L.solve_discrete_lyapunov(a, q, method=method).numpy()
            np.testing.assert_allclose(a @ x @ a.conj().T - x + q, 0, atol=1e-12)
            np.testing.assert_allclose(x, sl.solve_discrete_lyapunov(a, q, method=method), atol=1e-12)
    big = rng.standard_normal((2, 11, 11)) * 0.2  # None picks 'bilinear' from n = 10, batched
    np.testing.assert_allclose(
        L.solve_discrete_lyapunov(big, np.eye(11)).numpy(), [sl.solve_discrete_lyapunov(m, np.eye(11)) for m in big]
    )
    a, q = _matrices(19, 3, 3), _matrices(20, 3, 3)
    check_grads(L.solve_continuous_lyapunov, (a, q), order=2)
    for method in ("direct", "bilinear"):
        check_grads(lambda a, q: L.solve_discrete_lyapunov(a, q, method=method), (a, q), order=1)
    with pytest.raises(ValueError, match=r"solve_discrete_lyapunov: method must be None, 'direct' or 'bilinear'"):
        L.solve_discrete_lyapunov(a, q, method="schur")


def test_solve_banded_matches_scipy_with_gradients():
    rng = _rng(21)
    lower, upper, n = 1, 2, 5
    ab = rng.standard_normal((lower + upper + 1, n)) + np.array([[0], [0], [4.0], [0]])
    b = rng.standard_normal((n, 2))
    np.testing.assert_allclose(L.solve_banded((lower, upper), ab, b).numpy(), sl.solve_banded((lower, upper), ab, b))
    np.testing.assert_allclose(
        L.solve_banded((lower, upper), ab, b[:, 0]).numpy(), sl.solve_banded((lower, upper), ab, b[:, 0])
    )
    grad = tl.grad(lambda t: tl.sum(L.solve_banded((lower, upper), t, b)))(ab).numpy()
    # the entries of ab outside the band (top-left and bottom-right corners) are never read
    assert grad[0, 0] == grad[0, 1] == grad[-1, -1] == 0.0
    check_grads(lambda t, r: L.solve_banded((lower, upper), t, r), (ab, b), order=2)
    with pytest.raises(ValueError, match=r"solve_banded: ab must have l \+ u \+ 1 = 3 rows for \(l, u\) = \(1, 1\)"):
        L.solve_banded((1, 1), ab, b)


# ---------------------------------------------------------------- funm
def test_funm_matches_scipy_real_complex_batched():
    rng = _rng(30)
    a = rng.standard_normal((2, 4, 4))
    for func, ref in ((tl.exp, sl.expm), (tl.sin, sl.sinm), (lambda z: z * z + 1.0, lambda m: m @ m + np.eye(4))):
        np.testing.assert_allclose(L.funm(a, func).numpy(), [ref(m) for m in a], atol=1e-12)
    c = a[0] + 1j * rng.standard_normal((4, 4))
    np.testing.assert_allclose(L.funm(c, tl.exp).numpy(), sl.expm(c), atol=1e-12)
    spd = a[0] @ a[0].T + np.eye(4)
    np.testing.assert_allclose(L.funm(spd, tl.sqrt).numpy(), sl.sqrtm(spd), atol=1e-12)
    value, errest = L.funm(spd, tl.log, disp=False)
    np.testing.assert_allclose(value.numpy(), sl.logm(spd), atol=1e-12)
    assert 0 <= float(errest) < 1e-13
    assert L.funm(spd.astype(np.float32), tl.exp).dtype == np.float32


def test_funm_is_nan_where_undefined_and_errors_are_clear():
    assert np.isnan(L.funm(np.array([[1.0, 1.0], [0.0, 1.0]]), tl.exp).numpy()).all()  # defective
    assert np.isnan(L.funm(np.diag([-1.0, 4.0]), tl.sqrt).numpy()).all()  # not real: pass complex
    np.testing.assert_allclose(L.funm(np.diag([-1.0, 4.0]).astype(complex), tl.sqrt).numpy(), np.diag([1j, 2.0]))
    with pytest.raises(ValueError, match=r"funm: expected square matrices of known size, got shape \(2, 3\)"):
        L.funm(np.ones((2, 3)), tl.exp)
    with pytest.raises(ValueError, match=r"funm: func must map the eigenvalues elementwise"):
        L.funm(np.eye(2), tl.sum)


@pytest.mark.parametrize(
    "x",
    [
        np.eye(3),  # every eigenvalue repeated
        np.diag([1.0, 1.0, 2.0]),  # a repeated block
        np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]]),  # eigenvalues 1, 1, 3, not diagonal
        np.diag([1.0, 1.0 + 1e-9, 2.0]),  # nearly repeated
        np.diag([1.0, 1.0 + 1e-5, 2.0]),
    ],
)
def test_funm_gradient_is_exact_at_repeated_and_nearly_repeated_eigenvalues(x):
    # Reference: expm's gradient (the Frechet derivative from the block matrix, no eigendecomposition) and
    # central differences of scipy.linalg.expm.
    g = _rng(31).standard_normal((3, 3))
    got = tl.grad(lambda a: tl.sum(L.funm(a, tl.exp) * tl.tensor(g)))(x).numpy()
    np.testing.assert_allclose(got, tl.grad(lambda a: tl.sum(L.expm(a) * tl.tensor(g)))(x).numpy(), atol=1e-10)
    np.testing.assert_allclose(got, _differences(lambda a: np.sum(sl.expm(a.numpy()) * g), x), atol=1e-7)
    # eigh's gradient is NaN here (the loss reads eigenvectors of repeated eigenvalues); funm's is not
    cubic = tl.grad(lambda a: tl.sum(L.funm(a, lambda z: z**3) * tl.tensor(g)))(x).numpy()
    np.testing.assert_allclose(cubic, (x @ x).T @ g + x.T @ g @ x.T + g @ (x @ x).T, atol=1e-9)


def test_funm_second_order_traced_and_vmapped():
    a = _rng(32).standard_normal((3, 3))
    check_grads(lambda x: L.funm(x, tl.exp), (a,), order=2)
    check_grads(lambda x: L.funm(x, tl.sin), (a + 1j * _rng(33).standard_normal((3, 3)),), order=1)
    np.testing.assert_allclose(tl.function(lambda x: L.funm(x, tl.exp))(a).numpy(), sl.expm(a), atol=1e-12)
    g = _rng(34).standard_normal((3, 3))
    traced = tl.function(tl.grad(lambda x: tl.sum(L.funm(x, tl.exp) * tl.tensor(g))))(np.eye(3)).numpy()
    np.testing.assert_allclose(traced, np.e * g, atol=1e-12)
    batch = np.stack([a, 2 * a])
    np.testing.assert_allclose(
        tl.vmap(lambda x: L.funm(x, tl.exp))(batch).numpy(), [sl.expm(a), sl.expm(2 * a)], atol=1e-11
    )


def test_eigh_gradient_at_repeated_eigenvalues_exact_for_values_nan_for_vectors_of_the_repeated_ones():
    # The loss of eigenvalues alone is exact at I and at a block-degenerate matrix (reference: f'(x) for
    # sum f(w) = trace f(x), here 3 x^2, and finite differences), as are svdvals'.
    for x in (np.eye(3), np.diag([1.0, 1.0, 2.0])):
        got = tl.grad(lambda a: tl.sum(L.eigvalsh(a) ** 3))(x).numpy()
        np.testing.assert_allclose(got, 3 * x @ x, atol=1e-12)
        np.testing.assert_allclose(got, _differences(lambda a: tl.sum(L.eigvalsh(a) ** 3), x), atol=1e-7)
        np.testing.assert_allclose(tl.grad(lambda a: tl.sum(L.svdvals(a) ** 3))(x).numpy(), 3 * x @ x, atol=1e-12)
        np.testing.assert_allclose(tl.grad(lambda a: tl.sum(L.eigh(a)[0] ** 3))(x).numpy(), 3 * x @ x, atol=1e-12)
    # trace(v diag(f(w)) v^T) = trace f(x): gv is v diag(2 f(w)), no off-diagonal part: exact
    x = np.diag([1.0, 1.0, 2.0])
    got = tl.grad(lambda a: L.trace((L.eigh(a)[1] * tl.exp(L.eigh(a)[0])) @ L.eigh(a)[1].T))(x).numpy()
    np.testing.assert_allclose(got, np.diag(np.exp([1.0, 1.0, 2.0])), atol=1e-12)
    # the eigenvector of the unrepeated eigenvalue: exact (reference: differences)
    g = _rng(35).standard_normal(3)
    got = tl.grad(lambda a: tl.sum(L.eigh(a)[1][:, 2] ** 2 * tl.tensor(g)))(x).numpy()
    np.testing.assert_allclose(
        got, _differences(lambda a: tl.sum(L.eigh(a)[1][:, 2] ** 2 * tl.tensor(g)), x), atol=1e-7
    )
    # the matrix function and the projector of the 2x2 identity: the same cotangents of (w, v), gradients
    # f'(1) sym(g) and 0: NaN (as PyTorch and JAX), never one of them silently; funm gives the first exactly.
    g = np.array([[0.0, 1.0], [0.0, 0.0]])

    def matrix_function(a):
        w, v = L.eigh(a)
        return tl.sum((v * tl.exp(w - 1.0)) @ v.T * tl.tensor(g))

    assert np.isnan(tl.grad(matrix_function)(np.eye(2)).numpy()).any()
    np.testing.assert_allclose(
        tl.grad(lambda a: tl.sum(L.funm(a, lambda z: tl.exp(z - 1.0)) * tl.tensor(g)))(np.eye(2)).numpy(), g, atol=1e-12
    )


# ---------------------------------------------------------------- NaN and inf input
NAN_FUNCTIONS = {
    "det": L.det,
    "slogdet": lambda x: L.slogdet(x),
    "eigh": L.eigh,
    "eigvalsh": L.eigvalsh,
    "eig": L.eig,
    "svd": L.svd,
    "svdvals": L.svdvals,
    "pinv": L.pinv,
    "cond": L.cond,
    "polar": L.polar,
    "schur": L.schur,
    "hessenberg": L.hessenberg,
    "solve": lambda x: L.solve(x, np.ones(x.shape[-1])),
    "det gradient": lambda x: tl.grad(lambda a: tl.sum(L.det(a)))(x),
    "det hessian": lambda x: tl.hessian(lambda a: tl.sum(L.det(a)))(x),
}


@pytest.mark.parametrize("name", sorted(NAN_FUNCTIONS))
def test_a_matrix_holding_nan_or_inf_gives_nan_never_lapacks_finite_garbage_or_an_error(name):
    # numpy.linalg.det([[nan, 1], [1, 1]]) is 0.0, slogdet (0, -inf), eigvalsh [-1.41, 1.41]; svd raises.
    f = NAN_FUNCTIONS[name]
    assert np.linalg.det(np.array([[np.nan, 1.0], [1.0, 1.0]])) == 0.0
    for bad in (np.nan, np.inf):
        for index in np.ndindex(2, 2):
            x = np.array([[2.0, 1.0], [1.0, 3.0]])
            x[index] = bad
            for out in tl.tree.flatten(f(x))[0]:
                if name == "cond" and bad == np.inf:  # NumPy's rule: inf unless x holds a NaN
                    assert not np.isfinite(out.numpy()).any()
                else:
                    assert np.isnan(out.numpy()).all(), (name, bad, index, out)
    # matrix by matrix in a batch: the finite one keeps its value
    batch = np.stack([np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[np.nan, 1.0], [1.0, 1.0]])])
    for out, alone in zip(tl.tree.flatten(f(batch))[0], tl.tree.flatten(f(batch[0]))[0]):
        out = out.numpy()
        if name == "det hessian":  # (2, 2, 2, 2, 2, 2): each matrix's own block
            out = np.stack([out[0, :, :, 0], out[1, :, :, 1]])
        assert np.isnan(out[1]).all()
        np.testing.assert_allclose(out[0], alone.numpy(), atol=1e-12)


# ---------------------------------------------------------------- orth, null_space, subspace_angles
def test_orth_and_null_space_match_scipy_and_span_the_right_spaces():
    rng = _rng(40)
    a = rng.standard_normal((5, 3)) @ rng.standard_normal((3, 4))  # rank 3
    q, z = L.orth(a).numpy(), L.null_space(a).numpy()
    assert q.shape == (5, 3) and z.shape == (4, 1)
    np.testing.assert_allclose(q @ q.T, sl.orth(a) @ sl.orth(a).T, atol=1e-12)
    np.testing.assert_allclose(a @ z, 0, atol=1e-12)
    np.testing.assert_allclose(z.T @ z, np.eye(1), atol=1e-12)
    c = a + 1j * a[::-1]
    np.testing.assert_allclose(c @ L.null_space(c).numpy(), 0, atol=1e-12)
    assert L.orth(np.zeros((3, 2))).shape == (3, 0) and L.null_space(np.eye(2)).shape == (2, 0)
    # the projector onto the range is differentiable (distinct singular values): differences
    b = rng.standard_normal((4, 2))
    w = rng.standard_normal((4, 4))
    np.testing.assert_allclose(
        tl.grad(lambda x: tl.sum((L.orth(x) @ L.orth(x).T) * tl.tensor(w)))(b).numpy(),
        _differences(lambda x: tl.sum((L.orth(x) @ L.orth(x).T) * tl.tensor(w)), b),
        atol=1e-7,
    )
    with pytest.raises(ValueError, match=r"orth: the number of columns is the numerical rank .* outside tl.function"):
        tl.function(L.orth)(a)
    with pytest.raises(ValueError, match=r"null_space: expected a matrix \(2-D\), got shape \(2, 2, 2\)"):
        L.null_space(np.ones((2, 2, 2)))


def test_subspace_angles_match_scipy_and_keep_a_small_angle_next_to_a_large_one():
    rng = _rng(41)
    a, b = rng.standard_normal((6, 2)), rng.standard_normal((6, 3))
    np.testing.assert_allclose(L.subspace_angles(a, b).numpy(), sl.subspace_angles(a, b), atol=1e-12)
    # span(e1, e2) against span(e1 + 1e-10 e3, cos(t) e2 + sin(t) e4): the angles are t and atan(1e-10)
    x = np.eye(4)[:, :2]
    for t in (0.3, 1.0):
        y = np.array([[1.0, 0.0], [0.0, np.cos(t)], [1e-10, 0.0], [0.0, np.sin(t)]])
        np.testing.assert_allclose(L.subspace_angles(x, y).numpy(), [t, np.arctan(1e-10)], rtol=1e-6)
    assert sl.subspace_angles(x, y)[1] == 0.0  # SciPy's arccos(cos(1e-10)) with a large angle beside it
    g = tl.grad(lambda m: tl.sum(L.subspace_angles(tl.tensor(a), m)))(b).numpy()
    np.testing.assert_allclose(g, _differences(lambda m: tl.sum(L.subspace_angles(tl.tensor(a), m)), b), atol=1e-7)
    with pytest.raises(ValueError, match=r"subspace_angles: A and B must have the same number of rows"):
        L.subspace_angles(a, b[:5])

"""Second-order and forward-mode derivatives where libraries hide silent wrong answers: custom gradients
differentiated twice, Jacobians and Hessians of awkward shapes and structures, special points, and the
traced versions agreeing with eager.  References are float64 NumPy formulas or finite differences
(JAX/PyTorch cross-checks only behind ``pytest.importorskip``)."""

import numpy as np
import pytest

import tensorlib as tl

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@tl.custom_gradient
def exp_saving_output(x):
    y = tl.exp(x)
    return y, lambda dy: dy * y  # grad_fn closes over a value computed inside f


X = np.array([0.7, -0.2, 1.3])


def _nested_tapes_second(f, x, persistent):
    x = tl.tensor(x)
    with tl.GradientTape(persistent=persistent) as outer:
        outer.watch(x)
        with tl.GradientTape(persistent=persistent) as inner:
            inner.watch(x)
            y = tl.sum(f(x))
        g = inner.gradient(y, x)
    return outer.gradient(g, x).numpy()


def test_custom_gradient_closing_over_its_output_has_the_right_second_derivative():
    # d2/dx2 exp(x) = exp(x); the closure's y was a constant to the tapes: a silent zero.
    expected = np.exp(X)
    first = tl.grad(lambda x: tl.sum(exp_saving_output(x)))
    np.testing.assert_allclose(first(tl.tensor(X)).numpy(), expected, rtol=1e-12)
    second = tl.grad(lambda x: tl.sum(first(x) * tl.tensor([1.0, 2.0, 3.0])))(tl.tensor(X))
    np.testing.assert_allclose(second.numpy(), expected * [1.0, 2.0, 3.0], rtol=1e-12)
    hessian = tl.hessian(lambda x: tl.sum(exp_saving_output(x)))(tl.tensor(X))
    np.testing.assert_allclose(hessian.numpy(), np.diag(expected), rtol=1e-12)
    for persistent in (False, True):
        np.testing.assert_allclose(_nested_tapes_second(exp_saving_output, X, persistent), expected, rtol=1e-12)
    traced = tl.function(lambda x: tl.grad(lambda x: tl.sum(first(x)))(x))
    np.testing.assert_allclose(traced(tl.tensor(X)).numpy(), expected, rtol=1e-12)
    _, tangent = tl.jvp(first, (tl.tensor(X),), (tl.tensor(np.ones(3)),))
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-12)


def test_custom_gradient_second_derivative_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    @jax.custom_vjp
    def jexp(x):
        return jax.numpy.exp(x)

    jexp.defvjp(lambda x: (jax.numpy.exp(x), jax.numpy.exp(x)), lambda y, g: (g * y,))
    expected = np.asarray(jax.hessian(lambda x: jax.numpy.sum(jexp(x)))(X))
    got = tl.hessian(lambda x: tl.sum(exp_saving_output(x)))(tl.tensor(X)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_custom_gradient_first_order_alone_records_nothing_of_its_inside():
    # One non-persistent tape cannot differentiate its gradient: f's ops stay off it.
    x = tl.tensor(X)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = exp_saving_output(x)
    assert [node.op.name for node in tape._nodes] == ["CustomGradient"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp(X), rtol=1e-12)


# ---------------------------------------------------------------- Jacobians and Hessians: shapes


def test_jacobian_and_hessian_of_an_empty_output_are_empty_arrays_not_none():
    x = np.ones((0, 3))
    jac = tl.jacobian(lambda x: x * 2.0)(tl.tensor(x))
    assert jac.shape == (0, 3, 0, 3) and jac.dtype == np.float64
    assert tl.jacobian(lambda y: y[:0] * 2.0)(tl.tensor(np.ones(2))).shape == (0, 2)
    assert tl.hessian(lambda x: tl.sum(x * x))(tl.tensor(x)).shape == (0, 3, 0, 3)
    y = tl.tensor(np.ones(2))
    with tl.GradientTape() as tape:
        tape.watch(y)
        z = y[:0] * 2.0
    assert tape.jacobian(z, y).shape == (0, 2)


# ---------------------------------------------------------------- each argument is its own variable


A = np.array([1.0, 2.0])


def test_the_same_tensor_as_two_arguments_gets_partial_derivatives():
    # d/da sum(a * b) = b and d/db = a (JAX); watching the one tensor gave each the total a + b.
    x = tl.tensor(A)
    for g in tl.grad(lambda a, b: tl.sum(a * b), argnums=(0, 1))(x, x):
        np.testing.assert_array_equal(g.numpy(), A)
    for g in tl.vjp(lambda a, b: a * b, x, x)[1](tl.ones_like(x)):
        np.testing.assert_array_equal(g.numpy(), A)
    _, tangent = tl.jvp(lambda a, b: a * b, (x, x), (tl.tensor([1.0, 0.0]), tl.tensor([0.0, 1.0])))
    np.testing.assert_array_equal(tangent.numpy(), [1.0, 2.0])  # b * da + a * db
    for jac in tl.jacobian(lambda a, b: a * b, argnums=(0, 1))(x, x):
        np.testing.assert_array_equal(jac.numpy(), np.diag(A))
    hessian = tl.hessian(lambda a, b: tl.sum(a * b), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(
        np.block([[h.numpy() for h in row] for row in hessian]), np.kron([[0, 1], [1, 0]], np.eye(2))
    )
    g = tl.grad(lambda p: tl.sum(p["a"] * p["b"] ** 2))({"a": x, "b": x})
    np.testing.assert_array_equal(g["a"].numpy(), A**2)
    np.testing.assert_array_equal(g["b"].numpy(), 2 * A * A)


def test_a_closed_over_argument_is_a_constant_no_perturbation_confusion():
    # d/dx [x * d/dy (x * y)] at y = x is d/dx x**2 = 2x; the inner grad also differentiated the closed-over x.
    x = tl.tensor(np.float64(1.5))
    assert float(tl.grad(lambda a: a * x)(x)) == 1.5
    assert float(tl.grad(lambda x: x * tl.grad(lambda y: x * y)(x))(x)) == 3.0
    assert float(tl.jvp(lambda a: a * x, (x,), (tl.tensor(np.float64(1.0)),))[1]) == 1.5
    assert float(tl.hessian(lambda a: a * a * x)(x)) == 3.0
    traced = tl.function(tl.grad(lambda x: x * tl.grad(lambda y: x * y)(x)))
    assert float(traced(x)) == 3.0


def test_perturbation_confusion_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    expected = jax.grad(lambda x: x * jax.grad(lambda y: x * y**2)(x))(1.5)
    got = tl.grad(lambda x: x * tl.grad(lambda y: x * y**2)(x))(tl.tensor(np.float64(1.5)))
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-12)


# ---------------------------------------------------------------- complex Jacobians, has_aux


def test_jacobian_of_a_complex_output_of_a_real_argument_keeps_its_imaginary_part():
    # d/dx (x exp(ix)) = exp(ix) (1 + ix): the reverse pass alone gave only its real part.
    x = np.array([1.0, 3.0, 2.0])
    jac = tl.jacobian(lambda x: tl.exp(x * 1j) * x)(tl.tensor(x))
    assert jac.dtype == np.complex128
    np.testing.assert_allclose(jac.numpy(), np.diag(np.exp(1j * x) * (1 + 1j * x)), atol=1e-14)
    np.testing.assert_allclose(tl.jacobian(tl.fft.fft)(tl.tensor(x)).numpy(), np.fft.fft(np.eye(3), axis=0), atol=1e-14)
    assert tl.jacobian(tl.fft.fft)(tl.tensor(x.astype(np.float32))).dtype == np.complex64
    # Mixed: the complex argument keeps the holomorphic derivative, the real one its full one; both equal tl.jvp.
    z = np.array([1 + 2j, 0.5 - 1j])
    jx, jz = tl.jacobian(lambda x, z: x[:2] * z * z, argnums=(0, 1))(tl.tensor(x), tl.tensor(z))
    np.testing.assert_allclose(jx.numpy(), np.eye(2, 3) * (z * z)[:, None], atol=1e-14)
    np.testing.assert_allclose(jz.numpy(), np.diag(2 * x[:2] * z), atol=1e-14)
    v = np.array([0.3, -1.0, 2.0])
    _, tangent = tl.jvp(lambda x: x[:2] * tl.tensor(z * z), (tl.tensor(x),), (tl.tensor(v),))
    np.testing.assert_allclose(jx.numpy() @ v, tangent.numpy(), atol=1e-14)


def test_jacobian_and_hessian_take_has_aux_as_in_jax():
    x = tl.tensor(np.array([1.0, 2.0]))
    hessian, aux = tl.hessian(lambda x: (tl.sum(x**3), {"twice": x * 2.0}), has_aux=True)(x)
    np.testing.assert_array_equal(hessian.numpy(), np.diag([6.0, 12.0]))
    np.testing.assert_array_equal(aux["twice"].numpy(), [2.0, 4.0])
    (ja, jb), aux = tl.jacobian(lambda a, b: (a * b, "label"), argnums=(0, 1), has_aux=True)(x, x * 3.0)
    np.testing.assert_array_equal(ja.numpy(), np.diag([3.0, 6.0]))
    np.testing.assert_array_equal(jb.numpy(), np.diag([1.0, 2.0]))
    assert aux == "label"
    traced = tl.function(tl.hessian(lambda x: (tl.sum(x**3), x), has_aux=True))
    hessian, aux = traced(x)
    np.testing.assert_array_equal(hessian.numpy(), np.diag([6.0, 12.0]))
    with pytest.raises(TypeError, match=r"tl.jacobian: with has_aux=True, f must return a pair \(output, aux\)"):
        tl.jacobian(lambda x: x, has_aux=True)(x)


def test_a_persistent_tape_differentiates_a_jacobian_taken_inside_its_context():
    # As GradientTape.gradient does (TensorFlow's rule); the derivative of the Jacobian was a silent None.
    x = tl.tensor(np.array([1.0, 2.0]))
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        jac = tape.jacobian(x**3, x)
    np.testing.assert_array_equal(jac.numpy(), np.diag(3 * x.numpy() ** 2))
    np.testing.assert_array_equal(tape.gradient(jac, x).numpy(), 6 * x.numpy())

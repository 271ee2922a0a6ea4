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

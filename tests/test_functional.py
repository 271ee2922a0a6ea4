"""Functional autodiff (JAX's forms): grad, value_and_grad, vjp, jvp, jacobian, hessian,
against analytic results and float64 central differences."""

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(7)
X = RNG.standard_normal(4)
A = RNG.standard_normal((3, 4))


from _helpers import central_differences as numeric_grad


def loss(x):
    return tl.sum(tl.tanh(x) * x) + tl.log(tl.sum(tl.exp(x)))


def loss_np(x):
    return float(loss(tl.tensor(x)))


def test_grad_matches_finite_differences_and_the_analytic_gradient():
    g = tl.grad(loss)(tl.tensor(X)).numpy()
    np.testing.assert_allclose(g, numeric_grad(loss_np, X), rtol=1e-7, atol=1e-9)
    softmax = np.exp(X) / np.exp(X).sum()
    np.testing.assert_allclose(g, np.tanh(X) + X * (1 - np.tanh(X) ** 2) + softmax, rtol=1e-12)


def test_grad_argnums_and_python_scalars():
    def f(x, y, scale):
        return tl.sum(x * y) * scale

    x, y = tl.tensor(X), tl.tensor(2 * X)
    gx, gy = tl.grad(f, argnums=(0, 1))(x, y, 3.0)
    np.testing.assert_allclose(gx.numpy(), 6 * X)
    np.testing.assert_allclose(gy.numpy(), 3 * X)
    assert float(tl.grad(lambda x: x**3)(2.0)) == 12.0  # a Python float in, float32 out
    assert tl.grad(lambda x: x**3)(2.0).dtype == np.float32
    assert tl.grad(lambda x, k: x * k, argnums=0)(np.float64(2.0), k=5.0).dtype == np.float64


def test_grad_of_an_unused_argument_is_zero():
    g = tl.grad(lambda x, y: tl.sum(x * x), argnums=1)(tl.tensor(X), tl.tensor(X))
    assert g.shape == (4,) and not g.numpy().any()


def test_value_and_grad_and_has_aux():
    value, g = tl.value_and_grad(loss)(tl.tensor(X))
    assert float(value) == pytest.approx(loss_np(X))
    np.testing.assert_allclose(g.numpy(), numeric_grad(loss_np, X), rtol=1e-7, atol=1e-9)
    (value, aux), g = tl.value_and_grad(lambda x: (tl.sum(x * x), {"norm": tl.sqrt(tl.sum(x * x))}), has_aux=True)(
        tl.tensor(X)
    )
    assert float(aux["norm"]) == pytest.approx(np.linalg.norm(X))
    np.testing.assert_allclose(g.numpy(), 2 * X)
    g, aux = tl.grad(lambda x: (tl.sum(x), "label"), has_aux=True)(tl.tensor(X))
    assert aux == "label" and g.numpy().tolist() == [1.0] * 4


def test_grad_errors_name_the_problem():
    with pytest.raises(TypeError, match=r"tl.grad: f must return a scalar, got shape \(4,\); use tl.vjp"):
        tl.grad(lambda x: x * 2)(tl.tensor(X))
    with pytest.raises(TypeError, match="tl.grad: f must return a scalar Tensor, got float"):
        tl.grad(lambda x: 1.0)(tl.tensor(X))
    with pytest.raises(ValueError, match="tl.grad: argnums 2 out of range for 1 positional arguments"):
        tl.grad(lambda x: tl.sum(x), argnums=2)(tl.tensor(X))


def test_vjp_is_the_transposed_jacobian_times_the_cotangent():
    def f(x):
        return tl.sin(tl.matmul(tl.tensor(A), x))

    out, vjp_fn = tl.vjp(f, tl.tensor(X))
    np.testing.assert_allclose(out.numpy(), np.sin(A @ X))
    u = RNG.standard_normal(3)
    (g,) = vjp_fn(tl.tensor(u))
    jacobian = np.cos(A @ X)[:, None] * A
    np.testing.assert_allclose(g.numpy(), jacobian.T @ u, rtol=1e-12)
    (g2,) = vjp_fn(u)  # reusable, and NumPy cotangents work
    np.testing.assert_allclose(g2.numpy(), g.numpy())
    with pytest.raises(ValueError, match=r"vjp_fn: cotangent shape \(4,\) does not match output shape \(3,\)"):
        vjp_fn(np.ones(4))
    with pytest.raises(ValueError, match="vjp_fn: 2 cotangents for 1 outputs"):
        vjp_fn([np.ones(3), np.ones(3)])


def test_vjp_of_several_inputs_and_outputs():
    out, vjp_fn = tl.vjp(lambda x, y: (x * y, tl.sum(x)), tl.tensor(X), tl.tensor(2 * X))
    gx, gy = vjp_fn([np.ones(4), np.array(10.0)])
    np.testing.assert_allclose(gx.numpy(), 2 * X + 10.0)
    np.testing.assert_allclose(gy.numpy(), X)


def test_jvp_is_the_directional_derivative():
    def f(x):
        return tl.exp(x) * tl.sum(x * x)

    v = RNG.standard_normal(4)
    out, tangent = tl.jvp(f, (tl.tensor(X),), (tl.tensor(v),))
    eps = 1e-6
    numeric = (f(tl.tensor(X + eps * v)).numpy() - f(tl.tensor(X - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(out.numpy(), np.exp(X) * (X @ X))
    np.testing.assert_allclose(tangent.numpy(), numeric, rtol=1e-7, atol=1e-9)
    analytic = np.exp(X) * v * (X @ X) + np.exp(X) * 2 * (X @ v)
    np.testing.assert_allclose(tangent.numpy(), analytic, rtol=1e-12)


def test_jvp_of_two_inputs_and_tuple_outputs_and_its_errors():
    out, tangents = tl.jvp(
        lambda x, y: (x * y, x + y), (tl.tensor(X), tl.tensor(A[0])), (tl.tensor(np.ones(4)), tl.tensor(np.zeros(4)))
    )
    np.testing.assert_allclose(tangents[0].numpy(), A[0])
    np.testing.assert_allclose(tangents[1].numpy(), np.ones(4))
    with pytest.raises(ValueError, match="tl.jvp: 1 primals but 2 tangents"):
        tl.jvp(tl.sin, (tl.tensor(X),), (tl.tensor(X), tl.tensor(X)))
    with pytest.raises(ValueError, match=r"tl.jvp: tangent shape \(3,\) does not match primal shape \(4,\)"):
        tl.jvp(tl.sin, (tl.tensor(X),), (tl.tensor(np.ones(3)),))


def test_jacobian_function():
    jac = tl.jacobian(lambda x: tl.matmul(tl.tensor(A), x) ** 2)(tl.tensor(X)).numpy()
    np.testing.assert_allclose(jac, 2 * (A @ X)[:, None] * A, rtol=1e-12)
    ja, jb = tl.jacobian(lambda a, b: a * b, argnums=(0, 1))(tl.tensor(X), tl.tensor(2 * X))
    np.testing.assert_allclose(ja.numpy(), np.diag(2 * X))
    np.testing.assert_allclose(jb.numpy(), np.diag(X))


def test_hessian_of_a_quadratic_form_and_against_finite_differences():
    m = RNG.standard_normal((4, 4))
    h = tl.hessian(lambda x: tl.sum(x * tl.matmul(tl.tensor(m), x)))(tl.tensor(X)).numpy()
    np.testing.assert_allclose(h, m + m.T, rtol=1e-12)
    h = tl.hessian(loss)(tl.tensor(X)).numpy()
    numeric = np.stack([numeric_grad(lambda x: float(tl.grad(loss)(tl.tensor(x)).numpy()[i]), X) for i in range(4)])
    np.testing.assert_allclose(h, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h.T, atol=1e-12)


def test_grad_of_grad_composes():
    d3 = tl.grad(tl.grad(tl.grad(lambda x: tl.sin(x) * x)))
    x = 0.7
    assert float(d3(np.float64(x))) == pytest.approx(-3 * np.sin(x) - x * np.cos(x), rel=1e-12)


def test_check_grads_on_a_composite_function_to_second_order():
    tl.testing.check_grads(
        lambda x, w: tl.sum(tl.tanh(tl.matmul(x, w)) ** 2),
        [RNG.standard_normal((2, 3)), RNG.standard_normal((3, 2))],
        order=2,
    )


def test_jacobian_and_hessian_of_structured_outputs_and_several_arguments():
    x, y = tl.tensor(np.array([1.0, 2.0])), tl.tensor(np.array([3.0, 4.0]))
    (hxx, hxy), (hyx, hyy) = tl.hessian(lambda x, y: tl.sum(x * x * y), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(hxx.numpy(), np.diag([6.0, 8.0]))
    np.testing.assert_allclose(hxy.numpy(), np.diag([2.0, 4.0]))
    np.testing.assert_allclose(hyx.numpy(), hxy.numpy())
    assert not hyy.numpy().any()
    doubled, parts = tl.jacobian(lambda x: (x * 2.0, {"cube": x**3}))(x)
    np.testing.assert_allclose(doubled.numpy(), 2 * np.eye(2))
    np.testing.assert_allclose(parts["cube"].numpy(), np.diag([3.0, 12.0]))

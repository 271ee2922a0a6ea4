"""Gradients and graphs: tapes and tl.grad inside tl.function, and gradients of traced functions.

References are NumPy formulas derived by hand (and the eager run, for the training step).
"""

import numpy as np

import tensorlib as tl

X = np.array([0.3, -1.2, 2.0, 0.7])


def _mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return [
        tl.Variable(rng.standard_normal((4, 8)), name="w1"),
        tl.Variable(np.zeros(8), name="b1"),
        tl.Variable(rng.standard_normal((8, 3)) * 0.5, name="w2"),
    ]


def _train_step(params, x, y, lr=0.1):
    w1, b1, w2 = params
    with tl.GradientTape() as tape:
        h = tl.tanh(x @ w1 + b1)
        loss = tl.mean(tl.sum((h @ w2 - y) ** 2, axis=1))
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(lr * g)
    return loss


def _numpy_train_step(params, x, y, lr=0.1):
    w1, b1, w2 = params
    h = np.tanh(x @ w1 + b1)
    d = h @ w2 - y
    loss = (d**2).sum(axis=1).mean()
    d_logits = 2 * d / len(x)
    d_z1 = (d_logits @ w2.T) * (1 - h**2)
    grads = [x.T @ d_z1, d_z1.sum(0), h.T @ d_logits]
    return loss, [p - lr * g for p, g in zip(params, grads)]


def test_traced_training_step_matches_eager_and_numpy():
    rng = np.random.default_rng(1)
    eager, traced = _mlp_params(), _mlp_params()
    reference = [p.numpy() for p in _mlp_params()]
    step = tl.function(
        lambda x, y: _train_step(traced, x, y),
        input_signature=[tl.TensorSpec((None, 4), "float64"), tl.TensorSpec((None, 3), "float64")],
    )
    for batch in (5, 5, 9):
        x, y = rng.standard_normal((batch, 4)), rng.standard_normal((batch, 3))
        loss_eager = _train_step(eager, tl.tensor(x), tl.tensor(y))
        loss_traced = step(x, y)
        loss_numpy, reference = _numpy_train_step(reference, x, y)
        np.testing.assert_allclose(float(loss_traced), float(loss_eager), rtol=1e-12)
        np.testing.assert_allclose(float(loss_traced), loss_numpy, rtol=1e-12)
        for e, t, r in zip(eager, traced, reference):
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(t.numpy(), r, rtol=1e-10, atol=1e-12)
    assert step.trace_count == 1


def test_gradient_of_a_traced_function_in_eager_mode():
    f = tl.function(lambda x: tl.sum(tl.sin(x) * x))
    np.testing.assert_allclose(tl.grad(f)(tl.tensor(X)).numpy(), np.cos(X) * X + np.sin(X), rtol=1e-12)
    v = tl.Variable(np.array([1.5, -2.0, 0.5, 3.0]))
    g = tl.function(lambda x: tl.sum(v * v * x))
    with tl.GradientTape() as tape:
        loss = g(tl.tensor(X))
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), 2 * v.numpy() * X, rtol=1e-12)
    w = tl.tensor(np.array([2.0, 1.0, -1.0, 0.5]))
    h = tl.function(lambda x: tl.sum(tl.exp(w) * x))
    with tl.GradientTape() as tape:
        tape.watch(w)
        loss = h(tl.tensor(X))
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), np.exp(w.numpy()) * X, rtol=1e-12)
    assert f.trace_count == g.trace_count == h.trace_count == 1


def test_replayed_graph_keeps_stop_gradient_and_custom_gradients():
    @tl.custom_gradient
    def round_ste(x):
        return tl.round(x), lambda dy: dy * 3.0

    f = tl.function(lambda x: tl.sum(x * tl.stop_gradient(x)))
    g = tl.function(lambda x: tl.sum(round_ste(x) * 2.0))
    np.testing.assert_allclose(tl.grad(f)(tl.tensor(X)).numpy(), X)
    np.testing.assert_allclose(tl.grad(g)(tl.tensor(X)).numpy(), np.full(4, 6.0))
    assert float(g(tl.tensor(X))) == 2.0 * np.round(X).sum()


def test_grad_of_grad_and_hessian_under_tracing():
    second = tl.function(lambda x: tl.grad(lambda y: tl.sum(tl.grad(lambda z: tl.sum(z**3 * tl.sin(z)))(y)))(x))
    expected = 6 * X * np.sin(X) + 6 * X**2 * np.cos(X) - X**3 * np.sin(X)
    np.testing.assert_allclose(second(tl.tensor(X)).numpy(), expected, rtol=1e-12)
    hess = tl.function(tl.hessian(lambda x: tl.sum(x**3)))
    np.testing.assert_allclose(hess(tl.tensor(X)).numpy(), np.diag(6 * X), atol=1e-12)


def test_custom_gradient_stop_gradient_and_override_inside_a_trace():
    @tl.custom_gradient
    def clip_grad(x):
        return x * 1.0, lambda dy: tl.clip(dy, -0.5, 0.5)

    f = tl.function(lambda x: tl.grad(lambda y: tl.sum(clip_grad(y) * tl.stop_gradient(y) ** 2))(x))
    np.testing.assert_allclose(f(tl.tensor(X)).numpy(), np.clip(X**2, -0.5, 0.5))
    with tl.grad.override({"Sin": lambda node, g: g * 100.0}):
        overridden = tl.function(lambda x: tl.grad(lambda y: tl.sum(tl.sin(y)))(x))
        np.testing.assert_allclose(overridden(tl.tensor(X)).numpy(), np.full(4, 100.0))


def test_value_and_grad_vjp_and_jvp_inside_a_trace():
    def loss(x):
        return tl.sum(tl.exp(x) * x)

    vg = tl.function(lambda x: tl.value_and_grad(loss)(x))
    value, grad = vg(tl.tensor(X))
    np.testing.assert_allclose(float(value), (np.exp(X) * X).sum(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), np.exp(X) * (1 + X), rtol=1e-12)

    def jvp_of_tanh(x, t):
        return tl.jvp(lambda y: tl.tanh(y), (x,), (t,))[1]

    t = np.array([1.0, 0.5, -2.0, 0.0])
    np.testing.assert_allclose(tl.function(jvp_of_tanh)(X, t).numpy(), (1 - np.tanh(X) ** 2) * t, rtol=1e-12)


def test_ops_declared_not_differentiable_pass_no_gradient_under_tracing():
    f = tl.function(lambda x: tl.grad(lambda y: tl.sum(tl.floor(y) * y))(x))
    np.testing.assert_allclose(f(tl.tensor(X)).numpy(), np.floor(X))


def test_a_tape_keeps_the_value_a_variable_had_when_it_was_read():
    def step(v):
        with tl.GradientTape() as tape:
            y = tl.sum(v * v * v)
        v.assign([5.0])  # allowed: the tape has stopped recording
        return tape.gradient(y, v)

    eager, traced = tl.Variable([2.0]), tl.Variable([2.0])
    assert step(eager).numpy().tolist() == [12.0]  # 3 * 2 ** 2, not 3 * 5 ** 2
    assert tl.function(lambda: step(traced))().numpy().tolist() == [12.0]
    assert traced.numpy().tolist() == [5.0]

"""tl.custom_vjp and tl.custom_jvp (JAX's) on tl.custom_gradient: rules against JAX's semantics written out
(NumPy formulas, float64 central differences), nested arguments and outputs, nondiff_argnums, tracing,
vmap, tl.jvp, second order through rules written in tensorlib ops, and their errors; JAX itself where
installed."""

import numpy as np
import pytest

import tensorlib as tl

from _helpers import central_differences


def _safe_log1pexp():
    @tl.custom_vjp
    def f(x):
        return tl.log1p(tl.exp(x))

    def fwd(x):
        return f(x), x

    def bwd(x, g):
        return (g * tl.sigmoid(x),)

    f.defvjp(fwd, bwd)
    return f


def test_the_rule_replaces_the_gradient_and_is_differentiable_again():
    f = _safe_log1pexp()
    x = np.array([-3.0, 0.0, 2.0, 800.0])
    grad = tl.grad(lambda t: tl.sum(f(t)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(grad, 1 / (1 + np.exp(-x)), rtol=1e-12)  # finite at 800, where exp overflows
    second = tl.grad(lambda t: tl.sum(tl.grad(lambda u: tl.sum(f(u)))(t)))(tl.tensor(x[:3])).numpy()
    s = 1 / (1 + np.exp(-x[:3]))
    np.testing.assert_allclose(second, s * (1 - s), rtol=1e-10)


def test_nested_arguments_and_outputs_and_nondiff_argnums():
    @tl.custom_vjp
    def f(scale, params, x):
        return {"y": params["w"] * x * scale, "z": params["b"] + x}

    def fwd(scale, params, x):
        return f(scale, params, x), (params, x)

    def bwd(scale, residuals, g):
        params, x = residuals
        # a deliberately different rule: the y cotangent counts twice
        return {"w": 2 * tl.sum(g["y"] * x * scale), "b": tl.sum(g["z"])}, 2 * g["y"] * params["w"] * scale + g["z"]

    f = tl.custom_vjp(f.fun, nondiff_argnums=(0,))
    f.defvjp(fwd, bwd)
    params = {"w": tl.tensor(1.5), "b": tl.tensor(-0.5)}
    x = tl.tensor(np.array([1.0, 2.0]))

    def loss(params, x):
        out = f(3.0, params, x)
        return tl.sum(out["y"] ** 2) + tl.sum(out["z"])

    g_params, g_x = tl.grad(loss, argnums=(0, 1))(params, x)
    gy = 2 * (1.5 * np.array([1.0, 2.0]) * 3.0)
    np.testing.assert_allclose(float(g_params["w"]), 2 * np.sum(gy * [1.0, 2.0] * 3.0), rtol=1e-12)
    np.testing.assert_allclose(float(g_params["b"]), 2.0, rtol=1e-12)
    np.testing.assert_allclose(g_x.numpy(), 2 * gy * 1.5 * 3.0 + 1.0, rtol=1e-12)
    # An output that gets no gradient gives bwd zeros of its shape.
    only_z = tl.grad(lambda x: tl.sum(f(3.0, params, x)["z"]))(x).numpy()
    np.testing.assert_allclose(only_z, [1.0, 1.0], rtol=1e-12)


def test_a_rule_matching_the_true_gradient_agrees_with_finite_differences_traced_and_under_vmap():
    @tl.custom_vjp
    def cube(x):
        return x**3

    cube.defvjp(lambda x: (x**3, x), lambda x, g: (3 * g * x**2,))
    xs = np.random.default_rng(0).normal(size=(4, 3))

    def loss(x):
        return tl.sum(tl.sin(cube(x)))

    numeric = central_differences(lambda a: np.sum(np.sin(a**3)), xs[0])
    np.testing.assert_allclose(tl.grad(loss)(tl.tensor(xs[0])).numpy(), numeric, rtol=1e-7)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(xs[0]).numpy(), numeric, rtol=1e-7)
    per_row = tl.vmap(tl.grad(loss))(xs).numpy()
    np.testing.assert_allclose(per_row, 3 * xs**2 * np.cos(xs**3), rtol=1e-12)


def test_matches_jax_custom_vjp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def make(lib_vjp, clip, where):
        @lib_vjp
        def clip_grad(x, lo, hi):
            return x * 1.0

        clip_grad.defvjp(lambda x, lo, hi: (x * 1.0, (lo, hi)), lambda res, g: (clip(g, res[0], res[1]), None, None))
        return clip_grad

    ours = make(tl.custom_vjp, tl.clip, None)
    theirs = make(jax.custom_vjp, jax.numpy.clip, None)
    x = np.array([0.5, -2.0, 3.0])
    got = tl.grad(lambda t: tl.sum(ours(t, -1.0, 1.0) * tl.tensor([5.0, -5.0, 0.5])))(tl.tensor(x)).numpy()
    want = jax.grad(lambda t: jax.numpy.sum(theirs(t, -1.0, 1.0) * jax.numpy.array([5.0, -5.0, 0.5])))(x)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


def test_errors_name_the_function_and_what_is_wrong():
    @tl.custom_vjp
    def f(x, y):
        return x * y

    with pytest.raises(TypeError, match=r"custom_vjp: .*f has no rule; call .*f.defvjp\(fwd, bwd\) first"):
        f(tl.tensor(1.0), tl.tensor(2.0))
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: g * res[1])  # not a tuple per argument
    with pytest.raises(
        TypeError, match=r"bwd of .*f must return a tuple with one cotangent per differentiated argument \(2\)"
    ):
        tl.grad(lambda x: f(x, tl.tensor(2.0)))(tl.tensor(1.0))
    with pytest.raises(TypeError, match="defvjp takes two functions"):
        f.defvjp(None, None)
    w = tl.Variable(2.0)

    @tl.custom_vjp
    def reads(x):
        return x * w

    reads.defvjp(lambda x: (x * w, None), lambda res, g: (g,))
    with tl.GradientTape() as tape:
        tape.watch(w)
        y = reads(tl.tensor(3.0))
    with pytest.raises(TypeError, match=r"reads trainable Variables .* pass them as arguments"):
        tape.gradient(y, w)


# ------------------------------------------------------------------ custom_jvp
def _log1pexp():
    @tl.custom_jvp
    def f(x):
        return tl.log1p(tl.exp(x))

    @f.defjvp
    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * tl.sigmoid(x)

    return f


def test_custom_jvp_rule_drives_reverse_mode_forward_mode_and_second_order():
    f = _log1pexp()
    x = np.array([-3.0, 0.0, 2.0, 800.0])
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(tl.grad(lambda t: tl.sum(f(t)))(tl.tensor(x)).numpy(), sig, rtol=1e-12)
    _, tangent = tl.jvp(f, (tl.tensor(x),), (tl.tensor(np.full(4, 2.0)),))
    np.testing.assert_allclose(tangent.numpy(), 2 * sig, rtol=1e-12)
    second = tl.grad(lambda t: tl.sum(tl.grad(lambda u: tl.sum(f(u)))(t)))(tl.tensor(x[:3])).numpy()
    np.testing.assert_allclose(second, sig[:3] * (1 - sig[:3]), rtol=1e-10)


def test_custom_jvp_with_a_rule_unlike_the_true_derivative_several_arguments_and_nondiff_argnums():
    @tl.custom_jvp
    def f(power, x, y):
        return {"a": tl.sin(x) * y, "b": x**power}

    @f.defjvp
    def rule(power, primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        # deliberately 2x the true x-derivative of a; b's true one
        return f(power, x, y), {"a": 2 * tl.cos(x) * y * tx + tl.sin(x) * ty, "b": power * x ** (power - 1) * tx}

    f = tl.custom_jvp(f.fun, nondiff_argnums=(0,))
    f.defjvp(rule)
    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])

    def loss(x, y):
        out = f(3, x, y)
        return tl.sum(out["a"] * 1.5) + tl.sum(out["b"])

    gx, gy = tl.grad(loss, argnums=(0, 1))(tl.tensor(x), tl.tensor(y))
    np.testing.assert_allclose(gx.numpy(), 1.5 * 2 * np.cos(x) * y + 3 * x**2, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), 1.5 * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(x, y).numpy(), gx.numpy(), rtol=1e-12)
    per_row = tl.vmap(tl.grad(lambda x, y: tl.sum(f(3, x, y)["a"])))(np.stack([x, 2 * x]), np.stack([y, y]))
    np.testing.assert_allclose(per_row.numpy(), 2 * np.cos(np.stack([x, 2 * x])) * y, rtol=1e-12)


def test_custom_jvp_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def make(lib_jvp, np_like):
        @lib_jvp
        def f(x, y):
            return np_like.sin(x) * y

        @f.defjvp
        def rule(primals, tangents):
            (x, y), (tx, ty) = primals, tangents
            return f(x, y), 3.0 * np_like.cos(x) * y * tx + np_like.sin(x) * ty

        return f

    ours, theirs = make(tl.custom_jvp, tl), make(jax.custom_jvp, jax.numpy)
    x, y = np.array([0.3, 1.1]), np.array([2.0, -0.5])
    got = tl.grad(lambda a, b: tl.sum(ours(a, b) ** 2), argnums=(0, 1))(tl.tensor(x), tl.tensor(y))
    want = jax.grad(lambda a, b: jax.numpy.sum(theirs(a, b) ** 2), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-12)


def test_custom_jvp_errors():
    @tl.custom_jvp
    def f(x):
        return x * 2

    with pytest.raises(TypeError, match=r"custom_jvp: .*f has no rule; call .*f.defjvp\(rule\) first"):
        f(tl.tensor(1.0))
    f.defjvp(lambda primals, tangents: tangents[0])
    with pytest.raises(TypeError, match=r"the rule of .*f must return \(outputs, output_tangents\)"):
        tl.grad(f)(tl.tensor(1.0))

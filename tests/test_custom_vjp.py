"""tl.custom_vjp (JAX's jax.custom_vjp) on tl.custom_gradient: rules against JAX's semantics written out
(NumPy formulas, float64 central differences), nested arguments and outputs, nondiff_argnums, tracing,
vmap, second order through a bwd written in tensorlib ops, and its errors; JAX itself where installed."""

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

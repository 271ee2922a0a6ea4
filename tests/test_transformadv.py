"""The function transformations and custom derivatives, attacked as an adversary: argnums given twice or as
NumPy integers, custom_vjp/custom_jvp arguments at nondiff_argnums that are differentiated anyway, keyword
calls, rules returning the wrong shapes, random draws under jacfwd, Jacobians of batches.

References: float64 central finite differences and NumPy formulas everywhere; JAX, PyTorch (torch.func) and
TensorFlow only behind ``pytest.importorskip``.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl

X = np.array([0.5, -1.2, 2.0])


def _fd_grad(f, x, eps=1e-6):
    """Central differences of a scalar NumPy function ``f`` at ``x`` (float64)."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ---------------------------------------------------------------- argnums


def test_argnums_naming_an_argument_twice_is_an_error_not_a_zero_gradient():
    # grad(f, argnums=(0, 0)) gave (0, df/da): the second place replaced the argument the first had watched.
    def f(a, b):
        return tl.sum(a * b * b)

    x, y = tl.tensor(X), tl.tensor(2.0 * X)
    for argnums in ((0, 0), (1, -1), [0, 1, 0]):
        for transform in (tl.grad, tl.value_and_grad, tl.jacobian, tl.jacfwd, tl.hessian):
            with pytest.raises(ValueError, match=r"argnums .* names an argument twice"):
                transform(f, argnums=argnums)(x, y)
    got = tl.grad(f, argnums=(0, -1))(x, y)
    np.testing.assert_allclose(got[0].numpy(), (2 * X) ** 2, rtol=1e-14)
    np.testing.assert_allclose(got[1].numpy(), 2 * X * 2 * X, rtol=1e-14)


def test_argnums_may_be_numpy_integers_as_in_jax():
    def f(a, b):
        return tl.sum(tl.sin(a) * b)

    x, y = tl.tensor(X), tl.tensor(2.0 * X)
    got = tl.grad(f, argnums=np.int64(1))(x, y)  # was a TypeError: argnums must be an int
    np.testing.assert_allclose(got.numpy(), _fd_grad(lambda b: np.sum(np.sin(X) * b), 2 * X), rtol=1e-8)
    both = tl.jacobian(f, argnums=(np.int32(0), 1))(x, y)
    np.testing.assert_allclose(both[0].numpy(), np.cos(X) * 2 * X, rtol=1e-14)
    with pytest.raises(TypeError, match=r"argnums must be an int or a tuple of ints, got True"):
        tl.grad(f, argnums=True)(x, y)
    with pytest.raises(TypeError, match=r"argnums must be an int or a tuple of ints"):
        tl.grad(f, argnums=0.0)(x, y)


# ---------------------------------------------------------------- custom_vjp / custom_jvp: nondiff_argnums


def _power_vjp():
    power = tl.custom_vjp(lambda n, a: a**n, nondiff_argnums=(0,))
    power.defvjp(lambda n, a: (a**n, a), lambda n, a, ct: (ct * n * a ** (n - 1),))
    return power


def _power_jvp():
    power = tl.custom_jvp(lambda n, a: a**n, nondiff_argnums=(0,))
    power.defjvp(lambda n, primals, tangents: (power(n, primals[0]), tangents[0] * n * primals[0] ** (n - 1)))
    return power


@pytest.mark.parametrize("make", [_power_vjp, _power_jvp])
def test_a_tensor_at_nondiff_argnums_differentiated_anyway_is_an_error_not_a_zero(make):
    # d/dn sum(a**n) = sum(a**n log a) = 8 log 2 + ...; it was a silent 0 (the rule gives no cotangent for n).
    power = make()
    a, n = tl.tensor(np.array([0.5, 1.2, 2.0])), tl.tensor(3.0, dtype="float64")
    with pytest.raises(
        TypeError,
        match=r"argument 0 of _power_[vj][jv]p\.<locals>.<lambda> \(shape \(\) float64\) is at nondiff_argnums",
    ):
        tl.grad(lambda m: tl.sum(power(m, a)))(n)
    with pytest.raises(TypeError, match=r"is at nondiff_argnums \(0,\), but a gradient was asked for through it"):
        tl.function(lambda m, a: tl.grad(lambda m: tl.sum(power(m, a)))(m))(n, a)
    # Not differentiated through it: the rule's gradient, eager, traced, and from a tape watching both.
    expected = 3 * a.numpy() ** 2
    np.testing.assert_allclose(tl.grad(lambda x: tl.sum(power(n, x)))(a).numpy(), expected, rtol=1e-14)
    traced = tl.function(lambda m, x: tl.grad(lambda x: tl.sum(power(m, x)))(x))
    np.testing.assert_allclose(traced(n, a).numpy(), expected, rtol=1e-14)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch([n, a])
        y = tl.sum(power(n, a))
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), expected, rtol=1e-14)
    with pytest.raises(TypeError, match=r"nondiff_argnums"):
        tape.gradient(y, n)
    hess = tl.hessian(lambda x: tl.sum(power(n, x)))(a).numpy()
    np.testing.assert_allclose(hess, np.diag(6 * a.numpy()), rtol=1e-14)


def test_nondiff_argnums_out_of_range_is_an_error_not_another_argument():
    # nondiff_argnums=(1,) with one argument took argument 1 % 1 = 0 as the constant.
    f = tl.custom_vjp(lambda a: a * 2.0, nondiff_argnums=(1,))
    f.defvjp(lambda a: (a * 2.0, None), lambda r, g: (g * 2.0,))
    with pytest.raises(
        ValueError, match=r"custom_vjp: nondiff_argnums \(1,\) out of range for .*<lambda> called with 1"
    ):
        f(tl.tensor(X))


def _with_limit(kind, nondiff):
    """``f(x, limit=2.0)`` whose rule depends on ``limit``, at nondiff_argnums or not: custom_vjp is JAX's
    clip_gradient (gradient 10 clipped to the limit), custom_jvp a linear rule scaling by it (``x * limit``)."""
    if kind == "vjp":
        f = tl.custom_vjp(lambda x, limit=2.0: x * 1.0, nondiff_argnums=(1,) if nondiff else ())
        if nondiff:
            f.defvjp(lambda x, limit: (x * 1.0, None), lambda limit, r, g: (tl.clip(g, -limit, limit),))
        else:
            f.defvjp(lambda x, limit: (x * 1.0, limit), lambda limit, g: (tl.clip(g, -limit, limit), None))
        return f, lambda limit: min(10.0, limit)
    f = tl.custom_jvp(lambda x, limit=2.0: x * limit, nondiff_argnums=(1,) if nondiff else ())
    if nondiff:
        f.defjvp(lambda limit, p, t: (p[0] * limit, t[0] * limit))
    else:
        f.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1]))
    return f, lambda limit: 10.0 * limit


@pytest.mark.parametrize("kind", ["vjp", "jvp"])
@pytest.mark.parametrize("nondiff", [False, True])
def test_custom_rules_take_keyword_arguments_and_defaults_as_jax_does(kind, nondiff):
    # A keyword call was a TypeError (__call__ takes no keywords) and a default was never given to the rules.
    f, expected = _with_limit(kind, nondiff)
    x = tl.tensor(X)
    for call, limit in [(lambda a: f(a), 2.0), (lambda a: f(a, limit=5.0), 5.0), (lambda a: f(x=a, limit=0.5), 0.5)]:
        got = tl.grad(lambda a: tl.sum(10.0 * call(a)))(x)
        np.testing.assert_allclose(got.numpy(), np.full(3, expected(limit)), rtol=1e-15)
    np.testing.assert_allclose(f(x=x).numpy(), X * (2.0 if kind == "jvp" else 1.0), rtol=1e-15)
    with pytest.raises(
        TypeError, match=r"custom_(vjp|jvp): the arguments do not fit .*<lambda>\(x, limit=2.0\): .*'lim'"
    ):
        f(x, lim=3.0)


def test_keyword_only_arguments_of_a_custom_vjp_function_are_a_clear_error():
    def scaled(x, *, k):
        return x * k

    f = tl.custom_vjp(scaled)
    f.defvjp(lambda x, k: (x * k, k), lambda k, g: (g * k,))
    with pytest.raises(TypeError, match=r"custom_vjp: .*scaled takes keyword-only arguments \['k'\]"):
        f(tl.tensor(X), k=2.0)


# ---------------------------------------------------------------- random draws under the transformations


@pytest.mark.parametrize("traced", [False, True])
def test_jacfwd_of_a_random_function_is_the_jacobian_at_the_draws_of_its_output(traced):
    # jacfwd ran f once for the output and again for the tangents: its Jacobian was of other dropout masks
    # than the output, the aux and tl.jacobian's (seed 0: diag [0, 0, 0, 0] for the mask [1, 1, 1, 0]).
    x = tl.tensor(np.array([0.5, -1.2, 2.0, 0.3, 0.7, 1.1]))

    def f(a):
        return tl.nn.dropout(a * a, rate=0.5)

    wrap = tl.function if traced else (lambda g: g)
    for seed in range(3):
        tl.random.seed(seed)
        y, after_one = f(x).numpy(), f(x).numpy()
        expected = np.diag(np.where(y != 0, 2 * x.numpy() * 2.0, 0.0))  # d/da dropout(a^2) = 2a / keep_prob
        tl.random.seed(seed)
        np.testing.assert_allclose(wrap(tl.jacfwd(f))(x).numpy(), expected, rtol=1e-15)
        np.testing.assert_array_equal(f(x).numpy(), after_one)  # the generator moved on by one run of f
        tl.random.seed(seed)
        np.testing.assert_allclose(wrap(tl.jacobian(f))(x).numpy(), expected, rtol=1e-15)
        tl.random.seed(seed)
        jac, aux = tl.jacfwd(lambda a: (f(a), f(a) + 0.0), has_aux=True)(x)
        np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-15)
        np.testing.assert_array_equal(aux.numpy(), after_one)


# ---------------------------------------------------------------- custom rules that return the wrong things


def _double_vjp(fwd, bwd):
    f = tl.custom_vjp(lambda a: a * 2.0)
    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_fwd_that_returns_no_pair_is_an_error_naming_fwd():
    # A fwd returning only its output, a Tensor of length 2, was unpacked into (output, residuals): the
    # "output" was its first element, a scalar, silently (a longer one: "too many values to unpack").
    f = _double_vjp(lambda a: a * 2.0, lambda r, g: (g * 2.0,))
    for x in (np.array([1.0, 3.0]), X):
        with pytest.raises(
            TypeError, match=r"custom_vjp: fwd of .*<lambda> must return a pair \(outputs, residuals\), "
        ):
            tl.grad(lambda a: tl.sum(f(a)))(tl.tensor(x))


@pytest.mark.parametrize(
    "bad, problem",
    [
        (lambda g: tl.sum(g), r"got shape \(\), expected \(3,\)"),
        (lambda g: tl.ones((2, 3), dtype="float64"), r"got shape \(2, 3\), expected \(3,\)"),
        (lambda g: tl.tensor([1, 2, 3]), r"got dtype int64, expected a float dtype \(float64\)"),
    ],
)
def test_custom_vjp_bwd_of_the_wrong_shape_or_dtype_names_bwd_not_tensorlib(bad, problem):
    # The error named tensorlib/grad/custom.py (the wrapper's grad_fn) as the rule, not the user's bwd.
    def bwd(r, g):
        return (bad(g),)

    f = _double_vjp(lambda a: (a * 2.0, None), bwd)
    line = bwd.__code__.co_firstlineno
    with pytest.raises(TypeError, match=problem + rf"; rule defined at .*test_transformadv.py:{line}$"):
        tl.grad(lambda a: tl.sum(f(a)))(tl.tensor(X))


def test_custom_jvp_rule_tangent_of_the_wrong_shape_or_structure_names_the_rule():
    # It was "vjp_fn: cotangent shape (3,) does not match output shape ()", from the transposition inside.
    f = tl.custom_jvp(lambda a: tl.sin(a))
    f.defjvp(lambda p, t: (tl.sin(p[0]), tl.sum(t[0])))
    line = f.jvp.__code__.co_firstlineno
    message = rf"custom_jvp: the rule of .*<lambda> returned an output tangent of shape \(\) for output 0 of shape \(3,\); rule defined at .*test_transformadv.py:{line}"
    with pytest.raises(ValueError, match=message):
        tl.grad(lambda a: tl.sum(f(a)))(tl.tensor(X))
    with pytest.raises(ValueError, match=message):
        tl.jvp(f, (tl.tensor(X),), (tl.tensor(np.ones(3)),))
    g = tl.custom_jvp(lambda a: (tl.sin(a), tl.cos(a)))
    g.defjvp(lambda p, t: ((tl.sin(p[0]), tl.cos(p[0])), t[0] * tl.cos(p[0])))
    with pytest.raises(
        ValueError, match=r"custom_jvp: the rule of .*<lambda> returned output tangents of structure \*"
    ):
        tl.grad(lambda a: tl.sum(g(a)[0]))(tl.tensor(X))


# ---------------------------------------------------------------- closures over differentiated tensors


def _remat_closure(a):
    b = tl.sin(a)  # f = sum(a * sin(a)): d/da = sin(a) + a cos(a), half of it through the closure
    return tl.sum(tl.remat(lambda u: u * b)(a))


def _remat_closure_grad(x):
    return np.sin(x) + x * np.cos(x)


@pytest.mark.parametrize(
    "how",
    ["eager", "traced grad", "grad of traced", "vmap of grad", "tape, closure only"],
)
def test_remat_gives_the_gradient_through_the_tensors_it_closes_over(how):
    # remat(lambda u: u * b)(a) with b = sin(a) lost the path through b: the gradient was sin(a), not
    # sin(a) + a cos(a); remat(lambda: sin(a))() gave 0 (JAX's checkpoint gives both).
    x = tl.tensor(X)
    expected = _remat_closure_grad(X)
    np.testing.assert_allclose(_fd_grad(lambda v: np.sum(v * np.sin(v)), X), expected, rtol=1e-8)
    if how == "eager":
        got = tl.grad(_remat_closure)(x)
    elif how == "traced grad":
        got = tl.function(tl.grad(_remat_closure))(x)
    elif how == "grad of traced":
        got = tl.grad(tl.function(_remat_closure))(x)
    elif how == "vmap of grad":
        got = tl.vmap(tl.grad(lambda a: tl.remat(lambda u: u * tl.sin(a))(a)))(x)
    else:
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.sum(tl.remat(lambda: tl.sin(x) * 2.0)())
        got, expected = tape.gradient(y, x), 2.0 * np.cos(X)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_remat_closure_to_second_order_and_forward_mode():
    x = tl.tensor(X)
    # d2/da2 sum(a sin a) = 2 cos a - a sin a
    np.testing.assert_allclose(
        tl.hessian(_remat_closure)(x).numpy(), np.diag(2 * np.cos(X) - X * np.sin(X)), rtol=1e-12, atol=1e-15
    )
    _, tangent = tl.jvp(_remat_closure, (x,), (tl.tensor(np.ones(3)),))
    np.testing.assert_allclose(float(tangent), _remat_closure_grad(X).sum(), rtol=1e-12)


def _closing_custom_functions(b):
    """A custom_gradient, custom_vjp and custom_jvp function of ``u``, each closing over ``b``."""

    @tl.custom_gradient
    def by_custom_gradient(u):
        return u * b, lambda g: g * b

    by_vjp = tl.custom_vjp(lambda u: u * b)
    by_vjp.defvjp(lambda u: (u * b, None), lambda r, g: (g * b,))
    by_jvp = tl.custom_jvp(lambda u: u * b)
    by_jvp.defjvp(lambda p, t: (p[0] * b, t[0] * b))
    return {"custom_gradient": by_custom_gradient, "custom_vjp": by_vjp, "custom_jvp": by_jvp}


@pytest.mark.parametrize("kind", ["custom_gradient", "custom_vjp", "custom_jvp"])
def test_a_custom_rule_closing_over_a_differentiated_tensor_is_an_error_not_a_lost_gradient(kind):
    # The path through the closed-over b was dropped: grad of sum(f(a)) with f(u) = u * sin(a) gave sin(a),
    # not sin(a) + a cos(a) (JAX raises for such closures in custom_vjp/custom_jvp).
    def loss(a):
        return tl.sum(_closing_custom_functions(tl.sin(a))[kind](a))

    x = tl.tensor(X)
    message = rf"{kind}: .*(<lambda>|by_custom_gradient) closes over a tensor \(shape \(3,\) float64\)"
    for transform in (tl.grad, lambda f: tl.function(tl.grad(f)), lambda f: tl.grad(tl.function(f))):
        with pytest.raises(TypeError, match=message):
            transform(loss)(x)
    # A closure nobody differentiates is fine: the rule's gradient for the argument.
    b = tl.tensor(np.array([2.0, 3.0, 4.0]))
    got = tl.grad(lambda a: tl.sum(_closing_custom_functions(b)[kind](a)))(x)
    np.testing.assert_array_equal(got.numpy(), [2.0, 3.0, 4.0])
    with tl.GradientTape(persistent=True) as tape:  # the closure watched, but only the argument asked for
        tape.watch([x, b])
        y = tl.sum(_closing_custom_functions(b * 1.0)[kind](x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match=r"closes over a tensor"):
        tape.gradient(y, b)


# ---------------------------------------------------------------- GradientTape.batch_jacobian


def test_batch_jacobian_gives_per_example_jacobians_as_tensorflow():
    rng = np.random.default_rng(0)
    xn, wn = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    x, w = tl.tensor(xn), tl.tensor(wn)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tl.tanh(x @ w)
        z = tl.sum(x * x, axis=1, keepdims=True) * tl.ones((4, 2), dtype="float64")
    expected = np.stack([np.diag(1 - np.tanh(xn[i] @ wn) ** 2) @ wn.T for i in range(4)])
    np.testing.assert_allclose(tape.batch_jacobian(y, x).numpy(), expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(tape.batch_jacobian(z, x).numpy(), np.repeat(2 * xn[:, None, :], 2, axis=1), rtol=1e-14)
    # Rank 3: the target row (3,) against the source row (3, 2).
    x3 = tl.tensor(rng.normal(size=(2, 3, 2)))
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x3)
        y3 = tl.sum(x3**3, axis=2)
    got = tape.batch_jacobian(y3, x3).numpy()
    assert got.shape == (2, 3, 3, 2)
    for i in range(2):
        expected = np.zeros((3, 3, 2))
        for j in range(3):
            expected[j, j] = 3 * x3.numpy()[i, j] ** 2
        np.testing.assert_allclose(got[i], expected, rtol=1e-14)
    other = tl.tensor(np.ones((2, 1)))
    assert tape.batch_jacobian(y3, other) is None
    np.testing.assert_array_equal(tape.batch_jacobian(y3, other, unconnected_gradients="zero").numpy(), 0.0)
    with pytest.raises(ValueError, match=r"batch_jacobian: target shape \(2, 3\) and source shape \(3, 1\) need"):
        tape.batch_jacobian(y3, tl.tensor(np.ones((3, 1))))


def test_batch_jacobian_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    xn = np.random.default_rng(1).normal(size=(5, 3))
    x = tl.tensor(xn)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sin(x)[:, :2] * tl.sum(x, axis=1, keepdims=True)
    got = tape.batch_jacobian(y, x).numpy()
    xt = tf.constant(xn)
    with tf.GradientTape() as tt:
        tt.watch(xt)
        yt = tf.sin(xt)[:, :2] * tf.reduce_sum(xt, axis=1, keepdims=True)
    np.testing.assert_allclose(got, tt.batch_jacobian(yt, xt).numpy(), rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------- custom_jvp.defjvps


def _sin_times():
    f = tl.custom_jvp(lambda x, y: tl.sin(x) * y)
    f.defjvps(lambda t, out, x, y: tl.cos(x) * y * t, lambda t, out, x, y: tl.sin(x) * t)
    return f


def test_defjvps_rules_drive_reverse_forward_and_second_order_mode():
    # JAX's defjvps (one rule per argument, summed) was missing.
    f = _sin_times()
    x, y = np.array([0.3, -1.1, 2.0]), np.array([1.5, 0.5, -2.0])
    gx, gy = tl.grad(lambda a, b: tl.sum(f(a, b)), argnums=(0, 1))(tl.tensor(x), tl.tensor(y))
    np.testing.assert_allclose(gx.numpy(), _fd_grad(lambda v: np.sum(np.sin(v) * y), x), rtol=1e-8)
    np.testing.assert_allclose(gy.numpy(), _fd_grad(lambda v: np.sum(np.sin(x) * v), y), rtol=1e-8)
    tx, ty = np.array([1.0, -2.0, 0.5]), np.array([0.25, 1.0, -1.0])
    _, tangent = tl.jvp(f, (tl.tensor(x), tl.tensor(y)), (tl.tensor(tx), tl.tensor(ty)))
    np.testing.assert_allclose(tangent.numpy(), np.cos(x) * y * tx + np.sin(x) * ty, rtol=1e-14)
    hess = tl.hessian(lambda a: tl.sum(f(a, tl.tensor(y))))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(hess, np.diag(-np.sin(x) * y), rtol=1e-14)
    # None: that argument's part of the tangent is zero (the rule, not the function, decides).
    g = tl.custom_jvp(lambda x, y: tl.sin(x) * y)
    g.defjvps(None, lambda t, out, x, y: tl.sin(x) * t)
    np.testing.assert_array_equal(tl.grad(lambda a: tl.sum(g(a, tl.tensor(y))))(tl.tensor(x)).numpy(), 0.0)
    g.defjvps(None)
    with pytest.raises(TypeError, match=r"custom_jvp: .*<lambda> was given 1 rules by defjvps for 2 arguments"):
        tl.grad(lambda a: tl.sum(g(a, tl.tensor(y))))(tl.tensor(x))
    with pytest.raises(TypeError, match=r"has nondiff_argnums; defjvps cannot take them"):
        tl.custom_jvp(lambda n, x: x**n, nondiff_argnums=(0,)).defjvps(None, lambda t, out, n, x: t)


def test_defjvps_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jf = jax.custom_jvp(lambda x, y: jax.numpy.sin(x) * y)
    jf.defjvps(lambda t, out, x, y: jax.numpy.cos(x) * y * t, lambda t, out, x, y: jax.numpy.sin(x) * t)
    x, y = np.array([0.3, -1.1, 2.0]), np.array([1.5, 0.5, -2.0])
    expected = jax.grad(lambda a, b: jax.numpy.sum(jf(a, b) ** 2), argnums=(0, 1))(x, y)
    got = tl.grad(lambda a, b: tl.sum(_sin_times()(a, b) ** 2), argnums=(0, 1))(tl.tensor(x), tl.tensor(y))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-13)


# ---------------------------------------------------------------- linearize


def test_linearize_tangents_of_the_wrong_shape_or_structure_name_linearize():
    # The error came from inside: "vjp_fn: cotangent shape (2,) does not match output shape (3,)".
    y, f_jvp = tl.linearize(lambda p: p["a"] * tl.sin(p["b"]), {"a": tl.tensor(X), "b": tl.tensor(X)})
    with pytest.raises(ValueError, match=r"^tl.linearize: tangent shape \(2,\) does not match primal shape \(3,\)$"):
        f_jvp({"a": tl.tensor(np.ones(2)), "b": tl.tensor(np.ones(3))})
    with pytest.raises(ValueError, match=r"^tl.linearize: tangents and primals: structures differ"):
        f_jvp({"a": tl.tensor(np.ones(3)), "c": tl.tensor(np.ones(3))})
    # Dicts by key, whatever their order: d(a sin b) = sin(b) da + a cos(b) db.
    da, db = np.array([1.0, 0.0, 2.0]), np.array([0.5, -1.0, 1.0])
    got = f_jvp({"b": tl.tensor(db), "a": tl.tensor(da)})
    np.testing.assert_allclose(got.numpy(), np.sin(X) * da + X * np.cos(X) * db, rtol=1e-14)


def test_linearize_takes_has_aux_as_jax():
    # linearize had no has_aux (TypeError); JAX's gives (output, f_jvp, aux).
    y, f_jvp, aux = tl.linearize(lambda a: (tl.exp(a) * a, {"n": 3, "t": a * 2.0}), tl.tensor(X), has_aux=True)
    np.testing.assert_allclose(y.numpy(), np.exp(X) * X, rtol=1e-15)
    assert aux["n"] == 3
    np.testing.assert_array_equal(aux["t"].numpy(), 2 * X)
    for tangent in (np.ones(3), np.array([0.5, -2.0, 1.0])):
        np.testing.assert_allclose(f_jvp(tl.tensor(tangent)).numpy(), np.exp(X) * (1 + X) * tangent, rtol=1e-14)
    with pytest.raises(TypeError, match=r"tl.linearize: with has_aux=True, f must return a pair"):
        tl.linearize(lambda a: a * 2.0, tl.tensor(X), has_aux=True)


# ---------------------------------------------------------------- eval_shape


def test_eval_shape_of_control_flow_matches_the_real_call():
    # tl.cond / tl.scan / tl.while_loop under eval_shape crashed: "'_DryRun' object has no attribute 'weak_args'".
    x = tl.tensor(X)
    v = tl.Variable(np.ones(3))
    calls = [
        lambda a: tl.cond(tl.sum(a) > 0, lambda b: b * 2.0, lambda b: b - 1.0, a),
        lambda a: tl.scan(lambda c, e: (c + e, tl.stack([c, e])), tl.zeros((), dtype="float64"), a),
        lambda a: tl.while_loop(lambda c: tl.sum(c) < 10.0, lambda c: c * 2.0, a),
        lambda a: tl.cond(a[0] > 0, lambda b: b * v, lambda b: b, a),
        tl.grad(lambda a: tl.sum(tl.while_loop(lambda c: tl.sum(c) < 10.0, lambda c: c * c, a, maximum_iterations=3))),
    ]
    for f in calls:
        real = tl.tree.leaves(f(x))
        specs = tl.tree.leaves(tl.eval_shape(f, tl.TensorSpec((3,), "float64")))
        assert [(s.shape, s.dtype) for s in specs] == [(r.shape, r.dtype) for r in real]
    # A draw inside a branch draws nothing: the global generator is where it was.
    tl.random.seed(5)
    expected = tl.random.normal((4,)).numpy()
    tl.random.seed(5)
    spec = tl.eval_shape(
        lambda a: tl.cond(a[0] > 0, lambda b: b * tl.random.normal((3,), dtype="float64"), lambda b: b, a), x
    )
    assert spec == tl.TensorSpec((3,), "float64")
    np.testing.assert_array_equal(tl.random.normal((4,)).numpy(), expected)
    np.testing.assert_array_equal(v.numpy(), np.ones(3))


# ---------------------------------------------------------------- remat and state


def test_remat_changes_state_once_not_once_per_run():
    # The recomputation assigned the Variables again: a counter counted 2 per step, a BatchNorm's moving
    # averages moved twice (momentum applied twice).
    counter = tl.Variable(np.array(0.0), trainable=False)

    def counting(a):
        counter.assign(counter + 1.0)
        return tl.sin(a) * counter  # reads the value it assigned: the recomputation must read it too

    x = tl.tensor(X)
    g = tl.grad(lambda a: tl.sum(tl.remat(counting)(a)))(x)
    assert float(counter) == 1.0
    np.testing.assert_allclose(g.numpy(), np.cos(X), rtol=1e-15)
    counter.assign(5.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sum(tl.remat(counting)(x))
    counter.assign(counter * 10.0)  # changed again between the passes: kept
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 6.0 * np.cos(X), rtol=1e-15)
    assert float(counter) == 60.0

    rng = np.random.default_rng(2)
    batch = rng.normal(size=(6, 3)) * 2.0 + 1.0
    plain, rematted = (
        tl.nn.BatchNorm(3, momentum=0.5, dtype="float64"),
        tl.nn.BatchNorm(3, momentum=0.5, dtype="float64"),
    )
    grads = []
    for bn, wrap in ((plain, lambda f: f), (rematted, tl.remat)):
        with tl.GradientTape() as tape:
            y = tl.sum(wrap(bn)(tl.tensor(batch)) ** 3)
        grads.append(tape.gradient(y, [bn.scale, bn.offset]))
    np.testing.assert_allclose(rematted.running_mean.numpy(), 0.5 * batch.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(rematted.running_var.numpy(), 0.5 + 0.5 * batch.var(axis=0, ddof=1), rtol=1e-14)
    for a, b in zip(*grads):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)


def test_custom_vjp_and_jvp_outputs_that_are_not_tensors_name_the_function():
    # "custom_gradient: run must return tensors, got str": the wrapper's inner function, not the user's.
    def tagged(a):
        return a * 2.0, "tag"

    f = tl.custom_vjp(tagged)
    f.defvjp(lambda a: (tagged(a), None), lambda r, g: (g[0] * 2.0,))
    with pytest.raises(TypeError, match=r"^custom_vjp: tagged must return tensors, got str$"):
        tl.grad(lambda a: tl.sum(f(a)[0]))(tl.tensor(X))
    j = tl.custom_jvp(tagged)
    j.defjvp(lambda p, t: (tagged(p[0]), (t[0] * 2.0, "tag")))
    with pytest.raises(TypeError, match=r"^custom_jvp: tagged must return tensors, got str$"):
        tl.grad(lambda a: tl.sum(j(a)[0]))(tl.tensor(X))


# ---------------------------------------------------------------- the transformations agree, on random programs

_UNARY = [
    (tl.sin, np.sin),
    (tl.tanh, np.tanh),
    (lambda a: a * a, lambda a: a * a),
    (lambda a: tl.exp(a * 0.3), lambda a: np.exp(a * 0.3)),
    (lambda a: a[::-1] * 1.5, lambda a: a[::-1] * 1.5),
    (lambda a: a - tl.mean(a), lambda a: a - np.mean(a)),
]
_BINARY = [
    (lambda a, b: a * b, lambda a, b: a * b),
    (lambda a, b: a + tl.sin(b), lambda a, b: a + np.sin(b)),
    (lambda a, b: a / (1.5 + b * b), lambda a, b: a / (1.5 + b * b)),
]


def _program(draw_ops):
    """A random chain over two inputs: each step applies a unary op to one value or a binary op to two."""

    def run(lib, x, y):
        values = [x, y]
        for kind, k, i, j in draw_ops:
            if kind == "u":
                values.append(_UNARY[k][lib](values[i % len(values)]))
            else:
                values.append(_BINARY[k][lib](values[i % len(values)], values[j % len(values)]))
        total = values[-1] * values[-2]
        return total if lib else tl.sum(total)

    return lambda x, y: run(0, x, y), lambda x, y: np.sum(run(1, x, y))


_steps = st.lists(
    st.one_of(
        st.tuples(st.just("u"), st.integers(0, len(_UNARY) - 1), st.integers(0, 9), st.just(0)),
        st.tuples(st.just("b"), st.integers(0, len(_BINARY) - 1), st.integers(0, 9), st.integers(0, 9)),
    ),
    min_size=1,
    max_size=5,
)


@given(_steps, st.integers(0, 2**16))
def test_grad_jvp_jacobians_hessian_remat_and_traced_agree_with_finite_differences(steps, seed):
    f, f_np = _program(steps)
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    expected_x = _fd_grad(lambda v: f_np(v, y), x)
    expected_y = _fd_grad(lambda v: f_np(x, v), y)
    tx, ty = tl.tensor(x), tl.tensor(y)
    scale = 1 + np.abs(expected_x).max() + np.abs(expected_y).max()
    closing = lambda a, b: tl.remat(lambda u: f(u, b))(a)  # noqa: E731  (remat closing over b)
    for grad in [tl.grad(g, argnums=(0, 1)) for g in (f, tl.remat(f), closing)] + [
        tl.function(tl.grad(f, argnums=(0, 1)))
    ]:
        gx, gy = grad(tx, ty)
        np.testing.assert_allclose(gx.numpy(), expected_x, atol=1e-6 * scale)
        np.testing.assert_allclose(gy.numpy(), expected_y, atol=1e-6 * scale)
    u, v = rng.normal(size=3), rng.normal(size=3)
    _, tangent = tl.jvp(f, (tx, ty), (tl.tensor(u), tl.tensor(v)))
    np.testing.assert_allclose(float(tangent), expected_x @ u + expected_y @ v, atol=1e-6 * scale * 5)
    _, f_jvp = tl.linearize(f, tx, ty)
    np.testing.assert_allclose(float(f_jvp(tl.tensor(u), tl.tensor(v))), float(tangent), rtol=1e-12, atol=1e-14)
    hess = tl.hessian(f)(tx, ty).numpy()
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-12 * scale)
    column = _fd_grad(lambda a: float(tl.grad(f)(tl.tensor(a), ty) @ tl.tensor(u)), x)
    np.testing.assert_allclose(hess @ u, column, atol=1e-5 * scale)
    inner = lambda a: tl.grad(f)(a, ty)  # noqa: E731
    np.testing.assert_allclose(tl.jacfwd(inner)(tx).numpy(), hess, rtol=1e-10, atol=1e-12 * scale)
    np.testing.assert_allclose(tl.hessian(tl.remat(f))(tx, ty).numpy(), hess, rtol=1e-10, atol=1e-12 * scale)


def test_jacobian_of_a_remat_function_that_assigns_a_variable():
    # The backward pass mapped over the Jacobian's rows ran the recomputation under tl.vmap, where assigning
    # is refused: a ValueError; the rows now fall back to one pass each, the state still changed once.
    counter = tl.Variable(np.array(0.0), trainable=False)

    def counting(a):
        counter.assign(counter + 1.0)
        return tl.sin(a) * a * counter

    x = tl.tensor(X)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tl.remat(counting)(x)
    expected = np.diag(np.cos(X) * X + np.sin(X))
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(tl.jacobian(tl.remat(counting))(x).numpy(), 2.0 * expected, rtol=1e-14)
    assert float(counter) == 2.0
    with pytest.raises(ValueError, match=r"cannot be assigned inside a function mapped by tl.vmap"):
        tl.vmap(counting)(tl.tensor(np.ones((2, 3))))


def test_custom_jvp_with_integer_tensor_arguments():
    # An index argument made reverse mode fail: "tl.vjp: cannot differentiate with respect to primal 1 of dtype
    # int64" (the transposition took every tensor as a primal); JAX gives it a float0 tangent.
    x, idx = tl.tensor(X), tl.tensor(np.array([2, 0, 2]))
    g = tl.custom_jvp(lambda a, i: tl.gather(a, i) * 2.0)
    g.defjvp(lambda p, t: (tl.gather(p[0], p[1]) * 2.0, tl.gather(t[0], p[1]) * 2.0))
    np.testing.assert_array_equal(tl.grad(lambda a: tl.sum(g(a, idx)))(x).numpy(), [2.0, 0.0, 4.0])
    _, tangent = tl.jvp(lambda a: g(a, idx), (x,), (tl.tensor(np.array([1.0, 2.0, 3.0])),))
    np.testing.assert_array_equal(tangent.numpy(), [6.0, 2.0, 6.0])
    # In one argument: a float tensor, an index tensor and a Python number; the integer's tangent has its shape.
    seen = []

    def rule(primals, tangents):
        (p,) = primals
        (t,) = tangents
        seen.append((t["i"].shape, t["i"].dtype.kind, float(t["s"])))
        return h(p), tl.gather(t["a"], p["i"]) * p["s"]

    h = tl.custom_jvp(lambda p: tl.gather(p["a"], p["i"]) * p["s"])
    h.defjvp(rule)
    got = tl.grad(lambda a: tl.sum(h({"a": a, "i": idx, "s": 3.0})))(x)
    np.testing.assert_array_equal(got.numpy(), [3.0, 0.0, 6.0])
    assert seen[0] == ((3,), "i", 0.0)


# ---------------------------------------------------------------- holomorphic=True


def test_grad_holomorphic_gives_the_complex_derivative():
    # JAX's grad(f, holomorphic=True) was a TypeError (no such argument).
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])

    def f(a, b):
        return tl.sum(tl.exp(a) * b**2 + tl.sin(a * b))

    def f_np(a, b):
        return np.sum(np.exp(a) * b**2 + np.sin(a * b))

    ga, gb = tl.grad(f, argnums=(0, 1), holomorphic=True)(tl.tensor(z), tl.tensor(z[::-1].copy()))
    h = 1e-6
    for got, which in ((ga, 0), (gb, 1)):
        expected = np.zeros(2, complex)
        for i in range(2):
            e = np.zeros(2)
            e[i] = h
            args_p, args_m = [z, z[::-1].copy()], [z, z[::-1].copy()]
            args_p[which] = args_p[which] + e
            args_m[which] = args_m[which] - e
            expected[i] = (f_np(*args_p) - f_np(*args_m)) / (2 * h)  # along the real axis: f'(z)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-8)
    value, g = tl.value_and_grad(lambda a: tl.sum(a**3), holomorphic=True)(tl.tensor(z))
    np.testing.assert_allclose(value.numpy(), np.sum(z**3), rtol=1e-15)
    np.testing.assert_allclose(g.numpy(), 3 * z**2, rtol=1e-15)
    with pytest.raises(TypeError, match=r"^tl.grad: holomorphic=True differentiates with respect to complex inputs"):
        tl.grad(lambda a: tl.sum(a * 1j), holomorphic=True)(tl.tensor(X))
    with pytest.raises(TypeError, match=r"^tl.grad: with holomorphic=True, f must return a complex scalar"):
        tl.grad(lambda a: tl.sum(tl.abs(a)), holomorphic=True)(tl.tensor(z))


def test_grad_holomorphic_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    expected = jax.grad(lambda a: jax.numpy.sum(jax.numpy.tanh(a) * a), holomorphic=True)(z)
    got = tl.grad(lambda a: tl.sum(tl.tanh(a) * a), holomorphic=True)(tl.tensor(z))
    np.testing.assert_allclose(got.numpy(), np.asarray(expected), rtol=1e-13)

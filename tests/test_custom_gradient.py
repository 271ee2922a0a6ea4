"""stop_gradient and @tl.custom_gradient: straight-through estimators, kwargs, several inputs and
outputs, differentiable grad_fns (second order), graph mode, and misuse."""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads


@tl.custom_gradient
def round_ste(x):
    return tl.round(x), lambda dy: dy


@tl.custom_gradient
def sign_ste(x, limit=1.0):
    inside = tl.cast(tl.abs(x) <= limit, x.dtype)
    return tl.sign(x), lambda dy: dy * inside


@tl.custom_gradient
def cube(x):
    # A correct, differentiable gradient written with tensorlib ops: second order works.
    return x * x * x, lambda dy: dy * 3.0 * x * x


@tl.custom_gradient
def clip_gradient_norm(x, max_norm):
    """Identity forward; the gradient's norm is clipped (a classic custom gradient)."""

    def grad_fn(dy):
        norm = tl.sqrt(tl.sum(dy * dy))
        return dy * tl.minimum(tl.ones_like(norm), max_norm / norm)

    return tl.identity(x), grad_fn


def test_straight_through_estimator_passes_the_gradient_through_round():
    x = tl.tensor(np.array([0.2, 1.7, -2.5]))
    y = round_ste(x)
    assert y.numpy().tolist() == [0.0, 2.0, -2.0]
    g = tl.grad(lambda x: tl.sum(round_ste(x) * x))(x)
    np.testing.assert_allclose(g.numpy(), np.round(x.numpy()) + x.numpy())
    assert tl.grad(lambda x: tl.sum(tl.round(x) * x))(x).numpy().tolist() == y.numpy().tolist()


def test_keyword_arguments_configure_the_function_and_get_no_gradient():
    x = tl.tensor(np.array([0.5, -2.0, 0.9]))
    assert tl.grad(lambda x: tl.sum(sign_ste(x)))(x).numpy().tolist() == [1.0, 0.0, 1.0]
    assert tl.grad(lambda x: tl.sum(sign_ste(x, limit=3.0)))(x).numpy().tolist() == [1.0, 1.0, 1.0]


def test_non_tensor_positional_arguments_get_no_gradient():
    x, weights = tl.tensor(np.array([1.0, 1.0])), tl.tensor(np.array([3.0, 4.0]))
    g = tl.grad(lambda x: tl.sum(clip_gradient_norm(x, 1.0) * weights))(x)
    np.testing.assert_allclose(g.numpy(), [0.6, 0.8])  # [3, 4] clipped to norm 1
    g = tl.grad(lambda x: tl.sum(clip_gradient_norm(x, 10.0) * weights))(x)
    np.testing.assert_allclose(g.numpy(), [3.0, 4.0])


def test_a_differentiable_grad_fn_gives_second_and_third_order():
    check_grads(cube, [np.array([0.5, -1.5, 2.0])], order=2)
    x = np.float64(1.5)
    assert float(tl.grad(tl.grad(cube))(x)) == pytest.approx(6 * 1.5)
    assert float(tl.grad(tl.grad(tl.grad(cube)))(x)) == pytest.approx(6.0)


def test_a_wrong_custom_gradient_is_caught_by_check_grads():
    @tl.custom_gradient
    def wrong_cube(x):
        return x * x * x, lambda dy: dy * 2.0 * x * x

    with pytest.raises(AssertionError, match="CustomGradient"):
        check_grads(wrong_cube, [np.array([0.5, 2.0])])


def test_several_inputs_and_outputs():
    @tl.custom_gradient
    def product_and_sum(a, b):
        def grad_fn(d_product, d_sum):
            return d_product * b + d_sum, d_product * a + d_sum

        return (a * b, a + b), grad_fn

    a, b = tl.tensor(np.array([1.0, 2.0])), tl.tensor(np.array([3.0, -1.0]))
    with tl.GradientTape() as tape:
        tape.watch([a, b])
        p, s = product_and_sum(a, b)
        total = tl.sum(p * 2.0 + s)
    ga, gb = tape.gradient(total, [a, b])
    np.testing.assert_allclose(ga.numpy(), 2 * b.numpy() + 1)
    np.testing.assert_allclose(gb.numpy(), 2 * a.numpy() + 1)
    check_grads(lambda a, b: product_and_sum(a, b), [np.array([1.0, 2.0]), np.array([3.0, -1.0])], order=2)


def test_grad_fn_may_return_none_for_an_input():
    @tl.custom_gradient
    def scale(x, factor):
        return x * factor, lambda dy: (dy * factor, None)

    x, f = tl.tensor(np.array([1.0, 2.0])), tl.tensor(np.array(3.0))
    gx, gf = tl.grad(lambda x, f: tl.sum(scale(x, f)), argnums=(0, 1))(x, f)
    assert gx.numpy().tolist() == [3.0, 3.0] and float(gf) == 0.0


def test_grad_fn_with_the_wrong_number_of_gradients_raises():
    @tl.custom_gradient
    def bad(a, b):
        return a * b, lambda dy: dy

    with pytest.raises(ValueError, match="custom_gradient: grad_fn returned 1 gradients for 2 tensor inputs"):
        tl.grad(lambda a: tl.sum(bad(a, tl.tensor(np.ones(2)))))(tl.tensor(np.ones(2)))


def test_custom_gradient_inside_tl_function():
    graph_grad = tl.function(tl.grad(lambda x: tl.sum(round_ste(x) * 3.0)))
    assert graph_grad(tl.tensor(np.array([0.4, 1.6]))).numpy().tolist() == [3.0, 3.0]
    traced_second = tl.function(tl.grad(tl.grad(cube)))
    assert float(traced_second(tl.tensor(np.float64(2.0)))) == pytest.approx(12.0)


def test_without_a_tape_the_function_just_runs():
    assert cube(tl.tensor(np.array(2.0))).numpy() == 8.0


def test_stop_gradient():
    x = tl.tensor(np.array([1.5, -2.0]))
    assert tl.stop_gradient(x).numpy().tolist() == [1.5, -2.0]
    g = tl.grad(lambda x: tl.sum(x * tl.stop_gradient(x)))(x)
    assert g.numpy().tolist() == [1.5, -2.0]  # d/dx (x * c) with c = x held fixed
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.stop_gradient(x * x)
    assert tape.gradient(y, x) is None
    # The value is x, the gradient 2x + 1: check_grads must see that the gradient is not the derivative.
    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        check_grads(lambda x: x * x - tl.stop_gradient(x * x) + x, [np.array([0.3, 2.0])])


def test_stop_gradient_maps_over_nested_structures_as_jax():
    # JAX's lax.stop_gradient takes a pytree; tl.stop_gradient({"w": w}) was a TypeError.
    w, b = tl.tensor(np.array([2.0, -1.0])), tl.tensor(0.5)

    def loss(w, b):
        held = tl.stop_gradient({"w": w, "rest": [b, None], "pair": (w * 2.0,)})
        assert held["rest"][1] is None
        return tl.sum(w * held["w"] + held["pair"][0]) + b * held["rest"][0]

    gw, gb = tl.grad(loss, argnums=(0, 1))(w, b)
    np.testing.assert_array_equal(gw.numpy(), [2.0, -1.0])  # d/dw sum(w * c): c = w held fixed
    assert float(gb) == 0.5
    jax = pytest.importorskip("jax")
    gj = jax.grad(
        lambda w, b: (w * jax.lax.stop_gradient({"w": w})["w"]).sum() + b * jax.lax.stop_gradient([b])[0], (0, 1)
    )(np.array([2.0, -1.0]), 0.5)
    np.testing.assert_array_equal(gw.numpy(), np.asarray(gj[0]))
    assert float(gb) == float(gj[1])


def test_stop_gradient_of_a_list_of_numbers_is_one_tensor():
    out = tl.stop_gradient([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(out, tl.Tensor) and out.shape == (2, 2)


def test_variables_read_inside_get_their_gradient_from_grad_fn():
    w = tl.Variable(np.array([2.0, 3.0]), name="w")

    @tl.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            assert len(variables) == 1 and variables[0].shape == (2,)
            return dy * w * 10.0, [dy * x * 100.0]

        return x * w, grad_fn

    x = tl.tensor(np.array([1.0, -1.0]))
    with tl.GradientTape() as tape:
        tape.watch(x)
        loss = tl.sum(scaled(x))
    gx, gw = tape.gradient(loss, [x, w])
    np.testing.assert_allclose(gx.numpy(), [20.0, 30.0])
    np.testing.assert_allclose(gw.numpy(), [100.0, -100.0])
    traced = tl.function(lambda x: tl.grad(lambda x: tl.sum(scaled(x)))(x))
    np.testing.assert_allclose(traced(x).numpy(), [20.0, 30.0])


def test_grad_fn_without_variables_argument_is_told_what_to_accept():
    w = tl.Variable(np.array([2.0, 3.0]))

    @tl.custom_gradient
    def scaled(x):
        return x * w, lambda dy: dy

    x = tl.tensor(np.array([1.0, 1.0]))
    with tl.GradientTape() as tape:
        tape.watch(x)
        loss = tl.sum(scaled(x))
    with pytest.raises(
        TypeError,
        match=r"reads 1 trainable Variable\(s\) \(shape \(2,\) float64\), so its "
        r"grad_fn must accept variables=",
    ):
        tape.gradient(loss, x)

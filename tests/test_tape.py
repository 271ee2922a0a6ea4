"""GradientTape: recording, watching, reuse, output gradients, unconnected sources, jacobians,
stop_recording, nested tapes (higher order), and Variables under tapes."""

import numpy as np
import pytest

import tensorlib as tl


def f64(*values):
    return tl.tensor(np.array(values if len(values) > 1 else values[0], dtype=np.float64))


def test_gradient_of_a_watched_tensor():
    x = f64(1.0, 2.0, 3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sum(x * x * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 3 * np.array([1.0, 2.0, 3.0]) ** 2)


def test_a_non_persistent_tape_gives_gradients_once():
    x = f64(2.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 4.0
    with pytest.raises(
        RuntimeError,
        match="non-persistent GradientTape can compute gradients only once; "
        r"use GradientTape\(persistent=True\)",
    ):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="already used for gradients; create a new one"):
        with tape:
            pass


def test_a_persistent_tape_gives_gradients_many_times():
    x = f64(2.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    assert float(tape.gradient(y, x)) == 4.0
    assert float(tape.gradient(z, x)) == 12.0
    assert float(tape.gradient(z, y)) == 2.0  # intermediates are watched once computed from watched ones


def test_unwatched_constants_get_no_gradient():
    x, c = f64(2.0), f64(3.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * c
    assert tape.gradient(y, c) is None
    assert float(tape.gradient(y, c, unconnected_gradients="zero")) == 0.0
    with tl.GradientTape() as tape:
        y = c * c
    assert tape.gradient(y, c) is None


def test_watch_takes_structures_and_skips_integer_tensors():
    a, b, n = f64(1.0), f64(2.0), tl.tensor(3)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch({"a": a, "pair": [b, n]})
        y = a * b * tl.cast(n, "float64")
    grads = tape.gradient(y, {"a": a, "pair": [b]})
    assert float(grads["a"]) == 6.0 and float(grads["pair"][0]) == 3.0
    with pytest.raises(
        TypeError,
        match=r"GradientTape.gradient: cannot differentiate with respect to source 2 "
        r"of dtype int64",
    ):
        tape.gradient(y, {"a": a, "pair": [b, n]})
    with pytest.raises(TypeError, match="GradientTape.watch: expected tensors, got float"):
        tl.GradientTape().watch([[1.0]])


def test_trainable_variables_are_watched_automatically_and_others_are_not():
    w = tl.Variable(np.array([1.0, 2.0]), name="w")
    frozen = tl.Variable(np.array([3.0, 4.0]), name="frozen", trainable=False)
    with tl.GradientTape(persistent=True) as tape:
        y = tl.sum(w * frozen)
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), [3.0, 4.0])
    assert tape.gradient(y, frozen) is None
    assert tape.watched_variables() == (w,)
    with tl.GradientTape(watch_accessed_variables=False) as tape:
        y = tl.sum(w * w)
    assert tape.gradient(y, w) is None
    with tl.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(frozen)
        y = tl.sum(w * frozen)
    np.testing.assert_allclose(tape.gradient(y, [w, frozen])[1].numpy(), [1.0, 2.0])


def test_output_gradients_weigh_the_target():
    x = f64(1.0, 2.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x  # non-scalar target
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=[np.array([10.0, -1.0])]).numpy(), [20.0, -4.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])  # the sum of the elements
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"output_gradients shape \(3,\) does not match target shape \(2,\)"):
        tape.gradient(y, x, output_gradients=[np.ones(3)])


def test_several_targets_add_up():
    x = f64(3.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        a, b = x * x, x * 2.0
    assert float(tape.gradient([a, b], x)) == 8.0


def test_unconnected_sources_none_or_zero():
    x, unused = f64(1.0, 2.0), f64(5.0, 6.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch([x, unused])
        y = tl.sum(x)
    assert tape.gradient(y, [x, unused])[1] is None
    zero = tape.gradient(y, [x, unused], unconnected_gradients="zero")[1]
    assert zero.shape == (2,) and zero.dtype == np.float64 and not zero.numpy().any()
    with pytest.raises(ValueError, match="unconnected_gradients must be 'none' or 'zero', got 'zeros'"):
        tape.gradient(y, x, unconnected_gradients="zeros")
    with pytest.raises(TypeError, match="sources must be tensors or variables, got ndarray"):
        tape.gradient(y, np.ones(2))


def test_jacobian_matches_the_analytic_one():
    a = np.array([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]])
    x = f64(0.3, -0.2, 0.9)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tl.sin(tl.matmul(tl.tensor(a), x))
        unrelated = f64(1.0)
        tape.watch(unrelated)
    expected = np.cos(a @ x.numpy())[:, None] * a
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), expected, rtol=1e-12)
    assert tape.jacobian(y, unrelated) is None
    assert tape.jacobian(y, unrelated, unconnected_gradients="zero").shape == (2,)


def test_jacobian_against_finite_differences():
    x0 = np.array([[0.5, -1.0], [2.0, 0.3]])

    def f(x):
        return tl.exp(x) * tl.sum(x, axis=0)

    x = tl.tensor(x0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    jac = tape.jacobian(y, x).numpy()
    eps = 1e-6
    numeric = np.zeros((2, 2, 2, 2))
    for idx in np.ndindex(2, 2):
        step = np.zeros_like(x0)
        step[idx] = eps
        numeric[(...,) + idx] = (f(tl.tensor(x0 + step)).numpy() - f(tl.tensor(x0 - step)).numpy()) / (2 * eps)
    np.testing.assert_allclose(jac, numeric, rtol=1e-6, atol=1e-8)


def test_stop_recording_hides_ops_from_the_tape():
    x = f64(2.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            z = y * 10.0  # not recorded: no path from x to z
        w = y + z
    assert float(tape.gradient(w, x)) == 4.0


def test_reset_forgets_the_recording():
    x = f64(2.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = x * 3.0
    assert tape.gradient(y, x) is None
    with tl.GradientTape() as tape:
        tape.watch(x)
        z = x * 3.0
    assert float(tape.gradient(z, x)) == 3.0


def test_nested_tapes_give_second_and_third_order():
    x = f64(1.5)
    with tl.GradientTape() as t3:
        t3.watch(x)
        with tl.GradientTape() as t2:
            t2.watch(x)
            with tl.GradientTape() as t1:
                t1.watch(x)
                y = x**4
            dy = t1.gradient(y, x)
        d2y = t2.gradient(dy, x)
    d3y = t3.gradient(d2y, x)
    assert float(dy) == pytest.approx(4 * 1.5**3)
    assert float(d2y) == pytest.approx(12 * 1.5**2)
    assert float(d3y) == pytest.approx(24 * 1.5)


def test_nested_tapes_mixed_partials():
    x, y = f64(0.7), f64(-1.2)
    with tl.GradientTape() as outer:
        outer.watch([x, y])
        with tl.GradientTape() as inner:
            inner.watch([x, y])
            z = tl.sin(x * y) + x * x * y
        dz_dx = inner.gradient(z, x)
    d2z_dxdy = outer.gradient(dz_dx, y)
    expected = np.cos(0.7 * -1.2) - 0.7 * -1.2 * np.sin(0.7 * -1.2) + 2 * 0.7
    assert float(d2z_dxdy) == pytest.approx(expected, rel=1e-12)


def test_gradient_with_respect_to_an_intermediate_of_another_dtype():
    x = tl.tensor(np.array([1.0, 2.0], np.float32))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.cast(x, "float64") * 3.0
        z = tl.sum(y * y)
    g = tape.gradient(z, x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), [18.0, 36.0])


# ---------------------------------------------------------------- Variables under tapes


def test_assigning_a_variable_a_recording_tape_read_raises_clearly():
    v = tl.Variable(np.array([1.0, 2.0]), name="weights")
    with tl.GradientTape() as tape:
        y = tl.sum(v * v)
        with pytest.raises(
            RuntimeError,
            match="Variable.assign: variable 'weights' \\(shape \\(2,\\), float64\\) "
            "was read by a GradientTape that is still recording",
        ):
            v.assign(np.array([5.0, 5.0]))
        with pytest.raises(RuntimeError, match="Variable.assign_add"):
            v.assign_add(np.array([1.0, 1.0]))
        with tape.stop_recording():
            pass
    np.testing.assert_allclose(v.numpy(), [1.0, 2.0])  # unchanged by the failed assigns
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])
    v.assign_sub(np.array([1.0, 1.0]))  # fine once the tape stopped
    np.testing.assert_allclose(v.numpy(), [0.0, 1.0])


def test_the_gradient_uses_the_value_the_variable_had_when_read():
    v = tl.Variable(np.array(3.0))
    with tl.GradientTape() as tape:
        y = v * v
    v.assign(np.array(100.0))
    assert float(tape.gradient(y, v)) == 6.0


def test_variable_assign_checks_shape_and_casts_compatible_dtypes():
    v = tl.Variable(np.zeros(2), name="v")
    with pytest.raises(
        ValueError,
        match=r"Variable.assign: value of shape \(3,\) float64 does not match variable "
        r"'v' of shape \(2,\) float64",
    ):
        v.assign(np.ones(3))
    v.assign(np.array([1, 2]))  # ints into a float variable
    assert v.dtype == np.float64 and v.numpy().tolist() == [1.0, 2.0]


def test_no_op_or_variable_mutates_the_callers_numpy_array():
    a = np.array([1.0, -2.0, 3.0])
    b = np.array([[0.5, 1.0, -1.0]])
    original_a, original_b = a.copy(), b.copy()
    v = tl.Variable(a)
    v.assign_add(np.ones(3))
    v.assign(b[0])
    v.assign_sub(np.ones(3))
    with tl.GradientTape() as tape:
        tape.watch(v)
        y = tl.sum(tl.exp(a) * v + tl.matmul(b, a)) + tl.sum(tl.take(a, np.array([0, 0])))
    tape.gradient(y, v)
    tl.split(a, 3)
    tl.reshape(a, (3, 1))
    a_view = tl.tensor(a)[1:]
    tl.grad(lambda t: tl.sum(t[0:2] * t[0:2]))(a)
    np.testing.assert_array_equal(a, original_a)
    np.testing.assert_array_equal(b, original_b)
    b[0, 0] = 42.0  # and the Variable does not alias it
    assert v.numpy()[0] == -0.5
    c = np.array([7.0, 8.0, 9.0])
    v.assign(c)
    c[0] = 0.0
    assert v.numpy().tolist() == [7.0, 8.0, 9.0]
    assert a_view.numpy().tolist() == [-2.0, 3.0]

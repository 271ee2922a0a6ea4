"""Regression tests for defects an adversarial review found in the eager core (dispatch, tapes, custom_gradient)."""

import numpy as np
import pytest

import tensorlib as tl


@pytest.mark.parametrize(
    "data",
    [[1, 2**63], [-1, 2**63], [[1], [2**63]], [(0, -(2**63) - 1)], [2**63, 1.0]],
)
def test_a_list_with_an_int_beyond_int64_is_an_overflow_error_not_a_float(data):
    # NumPy turns these lists into float64; tensorlib made a silent float32 of them.
    with pytest.raises(OverflowError, match=r"^tensor: data holds an integer outside int64"):
        tl.tensor(data)


def test_an_op_input_list_with_an_int_beyond_int64_names_the_op():
    with pytest.raises(OverflowError, match=r"^Add: input 'y' holds an integer outside int64"):
        tl.tensor([1, 2]) + [1, 2**63]


def test_lists_of_big_floats_and_in_range_ints_still_convert():
    assert tl.tensor([2.0**63, 1]).dtype == np.float32
    assert tl.tensor([2**63 - 1, -(2**63)]).numpy().tolist() == [2**63 - 1, -(2**63)]


def _two_targets():
    v = tl.tensor([1.0, 2.0])
    tape = tl.GradientTape(persistent=True)
    with tape:
        tape.watch(v)
        y = v * v
        z = v * 3.0
    return tape, v, y, z


def test_output_gradients_fewer_than_targets_is_an_error():
    tape, v, y, z = _two_targets()
    with pytest.raises(ValueError, match=r"^GradientTape.gradient: 1 output_gradients for 2 targets"):
        tape.gradient([y, z], v, output_gradients=[tl.tensor([1.0, 1.0])])


def test_a_none_output_gradient_means_ones_and_keeps_its_place():
    tape, v, y, z = _two_targets()
    # d/dv [sum(v*v) + sum(w * 3v)] = 2v + 3w; the None weight once shifted w onto the first target.
    got = tape.gradient([y, z], v, output_gradients=[None, tl.tensor([1.0, 2.0])])
    np.testing.assert_allclose(got.numpy(), 2 * np.array([1.0, 2.0]) + 3 * np.array([1.0, 2.0]))
    got = tape.gradient([y, z], v, output_gradients=[tl.tensor([1.0, 0.0]), None])
    np.testing.assert_allclose(got.numpy(), 2 * np.array([1.0, 2.0]) * [1.0, 0.0] + 3.0)


@tl.custom_gradient
def _scaled_product(p):
    # Value p["a"] * p["b"]; gradient 10x the true one, so a gradient that bypassed grad_fn shows.
    return p["a"] * p["b"], lambda dy: {"a": dy * p["b"] * 10.0, "b": dy * p["a"] * 10.0}


def test_custom_gradient_of_a_dict_argument_reaches_its_tensors():
    # The dict's tensors once got a silent zero gradient: only Tensor positional arguments were inputs.
    g = tl.grad(_scaled_product)({"a": 2.0, "b": 3.0})
    assert float(g["a"]) == 30.0 and float(g["b"]) == 20.0


@tl.custom_gradient
def _mixed(x, pair, scale, rest):
    out = x * pair[0] * pair[1] * scale
    return out, lambda dy: (dy * 1.0, [dy * 2.0, None], {"c": dy * 3.0, "d": None})


def test_custom_gradient_mixes_tensor_nested_and_constant_arguments():
    def f(x, a, b, c):
        return _mixed(x, [a, b], 4.0, {"c": c, "d": 1.0})

    gx, ga, gb, gc = tl.grad(f, argnums=(0, 1, 2, 3))(2.0, 3.0, 5.0, 7.0)
    assert [float(gx), float(ga), float(gb), float(gc)] == [1.0, 2.0, 0.0, 3.0]


@tl.custom_gradient
def _cube_list(xs):
    return xs[0] ** 3 + xs[1], lambda dy: [dy * 3.0 * xs[0] ** 2, dy]


def test_custom_gradient_of_a_list_argument_is_differentiable_twice():
    second = tl.grad(lambda x: tl.grad(lambda y: _cube_list([y, x]))(x))(2.0)
    assert float(second) == 12.0  # d/dx 3x^2


@tl.custom_gradient
def _wrong_structure(p):
    return p["a"] * 2.0, lambda dy: {"a": dy}


def test_custom_gradient_of_the_wrong_structure_is_a_clear_error():
    with pytest.raises(ValueError, match=r"^custom_gradient: grad_fn returned a gradient with 1 leaves .* with 2"):
        tl.grad(lambda a: _wrong_structure({"a": a, "b": a}))(1.0)


def test_a_target_that_is_not_a_tensor_is_a_clear_error():
    x = tl.tensor([1.0, 2.0])
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
    # It once crashed with AttributeError: 'numpy.ndarray' object has no attribute '_id'.
    with pytest.raises(TypeError, match=r"^GradientTape.gradient: targets must be tensors .* got ndarray"):
        tape.gradient(np.ones(2), x)
    with pytest.raises(TypeError, match=r"^GradientTape.jacobian: target must be a tensor .* got list"):
        tape.jacobian([1.0], x)


@pytest.mark.parametrize("how", ["assign_add", "assign_sub"])
def test_assign_add_inside_a_tape_before_any_read(how):
    # The update's own read made the tape a reader, so the update was refused as a mixed old/new read.
    w = tl.Variable([1.0, 2.0])
    with tl.GradientTape() as tape:
        getattr(w, how)([1.0, 1.0])
        y = w * w
    step = 1.0 if how == "assign_add" else -1.0
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), 2 * (np.array([1.0, 2.0]) + step))


def test_assign_add_after_a_recorded_read_is_still_refused():
    w = tl.Variable([1.0, 2.0])
    with tl.GradientTape():
        _ = w * w
        with pytest.raises(RuntimeError, match=r"^Variable.assign_add: variable .* was read by a GradientTape"):
            w.assign_add([1.0, 1.0])


def test_has_aux_needs_a_pair_not_a_tensor_of_length_two():
    # A stacked Tensor of two elements was unpacked as (value, aux): a silent gradient of the wrong thing.
    with pytest.raises(TypeError, match=r"^tl.grad: with has_aux=True, f must return a pair .* got Tensor"):
        tl.grad(lambda a: tl.stack([a * a, a]), has_aux=True)(3.0)
    with pytest.raises(TypeError, match=r"^tl.value_and_grad: with has_aux=True, .* got a tuple of length 3"):
        tl.value_and_grad(lambda a: (a * a, a, a), has_aux=True)(3.0)
    g, aux = tl.grad(lambda a: [a * a, a + 1.0], has_aux=True)(3.0)
    assert float(g) == 6.0 and float(aux) == 4.0


@pytest.mark.parametrize(
    "f, dtype",
    [
        (lambda a: tl.cast(a, "int64"), "int64"),
        (lambda a: a > 1.0, "bool"),
        (lambda a: a * (1 + 1j), "complex64"),
    ],
)
def test_grad_of_a_non_real_float_output_is_an_error_not_zero(f, dtype):
    # JAX's rule; tensorlib returned a silent 0 (int, bool) or the real part's gradient (complex).
    with pytest.raises(TypeError, match=rf"^tl.grad: f must return a real float scalar, got dtype {dtype}"):
        tl.grad(f)(3.0)


@pytest.mark.parametrize("argnums", ["0", 0.0, None, (0, "1"), True])
def test_bad_argnums_name_the_transform(argnums):
    with pytest.raises(TypeError, match=r"^tl.grad: argnums must be an int or a tuple of ints"):
        tl.grad(lambda a, b: a * b, argnums=argnums)(1.0, 2.0)


def test_vjp_matches_dict_cotangents_by_key():
    _, vjp_fn = tl.vjp(lambda a: {"x": a * 2.0, "y": a * 3.0}, 3.0)
    # Given in another order, the cotangents were zipped by position: 2.0 instead of 0 * 2 + 1 * 3.
    (g,) = vjp_fn({"y": 1.0, "x": 0.0})
    assert float(g) == 3.0
    with pytest.raises(ValueError, match=r"^vjp_fn: .*\(output structure \{'x': \*, 'y': \*\}, cotangent structure"):
        vjp_fn({"y": 1.0, "z": 0.0})


def test_jvp_of_an_integer_output_is_a_zero_tangent():
    # It crashed naming an internal "source 1"; an integer output is a constant to differentiation.
    (y, n), (ty, tn) = tl.jvp(lambda a: (a * a, tl.cast(a, "int64")), (3.0,), (1.0,))
    assert float(ty) == 6.0 and int(n) == 3 and float(tn) == 0.0 and tn.dtype.kind == "f"


@pytest.mark.parametrize("data", [[2**40], [-(2**31) - 1, 0], [[1], [2**33]]])
def test_a_list_of_ints_outside_the_asked_int_dtype_is_an_overflow_error(data):
    # tl.tensor(2**40, dtype="int32") raised, but the same value in a list wrapped silently to 0.
    with pytest.raises(OverflowError, match=r"^tensor: data holds -?\d+ does not fit in int32"):
        tl.tensor(data, dtype="int32")
    assert tl.tensor([2**31 - 1, -(2**31)], dtype="int32").numpy().tolist() == [2**31 - 1, -(2**31)]


def test_a_persistent_tape_records_a_gradient_taken_inside_its_context():
    x = tl.tensor(2.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        g = tape.gradient(y, x)  # TensorFlow records this, so g can be differentiated again
    assert float(g) == 12.0
    assert float(tape.gradient(g, x)) == 12.0  # d/dx 3x^2 at 2; it was a silent None


@tl.custom_gradient
def _scale_by_keyword(x, *, s):
    return x * s, lambda dy: dy * s


def test_custom_gradient_refuses_a_differentiated_keyword_tensor():
    # Its gradient was a silent zero: only positional tensors are inputs of the op.
    with pytest.raises(TypeError, match=r"^custom_gradient: .*_scale_by_keyword got the differentiated tensor s="):
        tl.grad(lambda s: _scale_by_keyword(tl.tensor(1.0), s=s))(2.0)
    # An undifferentiated keyword tensor (a constant) is fine.
    assert float(tl.grad(lambda x: _scale_by_keyword(x, s=tl.tensor(3.0)))(2.0)) == 3.0

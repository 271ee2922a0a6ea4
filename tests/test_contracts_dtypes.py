"""Contract: NumPy's dtype rules for integers and bools, exact casts, float16 accumulation (issue 7, point 3-4)."""

import math

import numpy as np
import pytest

import tensorlib as tl

FLOAT_VALUED = [
    ("exp", np.exp),
    ("log", np.log),
    ("sqrt", np.sqrt),
    ("sin", np.sin),
    ("cos", np.cos),
    ("tanh", np.tanh),
    ("log1p", np.log1p),
    ("expm1", np.expm1),
    ("sigmoid", lambda a: 1.0 / (1.0 + np.exp(-a.astype(np.float64)))),
]


@pytest.mark.parametrize("name,ref", FLOAT_VALUED, ids=[n for n, _ in FLOAT_VALUED])
@pytest.mark.parametrize(
    "data",
    [np.array([1, 2, 3], np.int64), np.array([1, 2, 3], np.int32), np.array([True, False])],
    ids=["int64", "int32", "bool"],
)
def test_float_valued_functions_of_integers_and_bools_give_float64(name, ref, data):
    out = getattr(tl, name)(tl.tensor(data))
    assert out.dtype == np.float64
    # float64 precision, not float16 (NumPy's result for bool) widened afterwards
    np.testing.assert_allclose(out.numpy(), ref(data.astype(np.float64)), rtol=1e-15, atol=0)


def test_log_of_ints_is_the_float64_logarithm():
    np.testing.assert_allclose(tl.log(tl.tensor([1, 2, 3])).numpy(), [0.0, math.log(2), math.log(3)], rtol=1e-15)


def test_float_valued_functions_of_integers_agree_when_traced():
    f = tl.function(lambda x: tl.exp(x) + tl.sqrt(x))
    out = f(np.array([1, 4], np.int64))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), np.exp([1.0, 4.0]) + np.sqrt([1.0, 4.0]), rtol=1e-15)


def test_a_kernel_result_is_never_truncated_to_another_kind():
    op = tl.ops.defop("ContractTruncates", inputs=("x",), infer=lambda x: x)
    op.kernel("numpy")(lambda x: np.sqrt(x.astype(np.float64)))
    with pytest.raises(
        RuntimeError,
        match=r"^ContractTruncates: kernel .* returned shape \(2,\) float64, but "
        r"the op's shape rule gives shape \(2,\) int64$",
    ):
        op(tl.tensor([2, 3]))


def test_a_kernel_may_widen_within_a_kind():
    op = tl.ops.defop("ContractWidens", inputs=("x",), infer=lambda x: x)
    op.kernel("numpy")(lambda x: x.astype(np.float64) * 2)
    out = op(tl.tensor(np.array([1.5], np.float32)))
    assert out.dtype == np.float32 and out.numpy().tolist() == [3.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.tensor(2**63),
        lambda: tl.tensor([1]) + 2**63,
        lambda: tl.tensor([1]) * (-(2**63) - 1),
        lambda: tl.tensor([2**64]),
        lambda: tl.full((2,), 2**63, dtype="int64"),
    ],
)
def test_python_ints_beyond_int64_are_an_overflow_error(make):
    with pytest.raises(OverflowError, match=r"does not fit in int64|outside int64"):
        make()


def test_overflow_names_the_input():
    with pytest.raises(OverflowError, match=r"^Add: input 'y' 9223372036854775808 does not fit in int64"):
        tl.add(tl.tensor([1]), 2**63)
    with pytest.raises(OverflowError, match=r"^Mul: input 'x' -9223372036854775809 does not fit in int64"):
        (-(2**63) - 1) * tl.tensor([1])
    with pytest.raises(OverflowError, match=r"^Add: input 'y' 2147483648 does not fit in int32"):
        tl.tensor(np.array([1], np.int32)) + 2**31


def test_a_big_int_next_to_a_float_tensor_is_a_float():
    assert (tl.tensor([1.0], dtype="float64") + 2**63).numpy().tolist() == [2.0**63 + 1.0]


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "uint16", "uint32", "uint64", np.int8, np.uint8])
def test_cast_to_an_unheld_integer_width_is_a_clear_error(dtype):
    with pytest.raises(
        TypeError,
        match=r"^Cast: tensorlib: dtype u?int\d+ is not supported .* "
        r"\(input shape \(1,\) int64\)$",
    ):
        tl.cast(tl.tensor([1]), dtype)


@pytest.mark.parametrize("dtype", ["int32", "int64", np.int32, "float16", "bool"])
def test_cast_to_held_widths_is_exact(dtype):
    data = np.array([0, 1, 100, -7])
    out = tl.cast(tl.tensor(data), dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.numpy(), data.astype(dtype))


def test_caller_arrays_of_small_widths_are_held_exactly():
    data = np.array([-128, 127], np.int8)
    t = tl.tensor(data)
    assert t.dtype == np.int32 and t.numpy().tolist() == [-128, 127]
    assert tl.tensor(np.array([255], np.uint8)).numpy().tolist() == [255]
    assert tl.tensor(np.array([2**32 - 1], np.uint32)).numpy().tolist() == [2**32 - 1]


@pytest.mark.parametrize("fn,expected", [(tl.mean, 10.0), (lambda x: tl.var(x), 0.0), (lambda x: tl.std(x), 0.0)])
def test_float16_reductions_accumulate_in_float32(fn, expected):
    x = tl.tensor(np.full(10000, 10, np.float16))
    out = fn(x)
    assert out.dtype == np.float16
    assert out.numpy().item() == expected


def test_float16_sum_accumulates_in_float32():
    # 4096 + 1 + 1 + ... in float16 sticks at 4096 (its spacing there is 4); float32 does not.
    data = np.concatenate([[4096.0], np.ones(1000)]).astype(np.float16)
    out = tl.sum(tl.tensor(data))
    assert out.dtype == np.float16
    assert out.numpy().item() == np.float16(5096.0)
    assert tl.mean(tl.tensor(data)).numpy().item() == np.float16(5096.0 / 1001)


def test_negative_zero_scalar_does_not_stand_for_zero():
    x = tl.tensor([1.0, 2.0])
    assert np.signbit((x * -0.0).numpy()).all()
    assert not np.signbit((x * 0.0).numpy()).any()
    assert np.signbit((x * -0.0).numpy()).all()
    assert not np.signbit((0.0 * x).numpy()).any()


@pytest.mark.parametrize("given,expected", [(float, "float32"), (int, "int64"), (bool, "bool")])
def test_dtype_arguments_may_be_python_types(given, expected):
    assert tl.zeros((2,), dtype=given).dtype == np.dtype(expected)
    assert tl.ones((2,), dtype=given).dtype == np.dtype(expected)
    assert tl.cast(tl.tensor([1.5, 0.0]), given).dtype == np.dtype(expected)
    assert tl.tensor([1, 0], dtype=given).dtype == np.dtype(expected)
    assert tl.full((1,), 1, dtype=given).dtype == np.dtype(expected)
    assert tl.Variable([1, 0], dtype=given).dtype == np.dtype(expected)
    assert tl.TensorSpec((2,), given).dtype == np.dtype(expected)
    assert tl.cast(tl.tensor([1.5, 0.0]), given).numpy().tolist() == np.array([1.5, 0.0]).astype(expected).tolist()


# ---------------------------------------------------------------- point 4: no gradients w.r.t. integers


@pytest.mark.parametrize("value", [2, True, np.array([1, 2]), tl.tensor([1, 2])])
def test_grad_with_respect_to_an_integer_raises_naming_the_argument(value):
    with pytest.raises(
        TypeError,
        match=r"^tl.grad: cannot differentiate with respect to argument 0 of dtype "
        r"(int64|bool)",
    ):
        tl.grad(lambda x: tl.sum(x**3))(value)


def test_value_and_grad_names_the_integer_argument():
    with pytest.raises(TypeError, match=r"^tl.value_and_grad: cannot differentiate with respect to argument 1 "):
        tl.value_and_grad(lambda a, b: a * b, argnums=(0, 1))(2.0, 3)


@pytest.mark.parametrize(
    "call",
    [
        lambda: tl.vjp(lambda x: x * 2, tl.tensor([1, 2])),
        lambda: tl.jvp(lambda x: x * 2, (tl.tensor([1, 2]),), (tl.tensor([1, 2]),)),
        lambda: tl.jacobian(lambda x: x * 2)(tl.tensor([1, 2])),
    ],
)
def test_functional_transforms_refuse_integer_inputs(call):
    with pytest.raises(TypeError, match=r"cannot differentiate with respect to (primal|argument) 0 of dtype int64"):
        call()


def test_tape_gradient_with_respect_to_an_integer_raises():
    n = tl.tensor(3)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(n)
        y = tl.cast(n, "float32") * 2.0
    with pytest.raises(
        TypeError,
        match=r"^GradientTape.gradient: cannot differentiate with respect to source 0 "
        r"of dtype int64",
    ):
        tape.gradient(y, n)
    with pytest.raises(TypeError, match=r"^GradientTape.jacobian: cannot differentiate with respect to source 0"):
        tape.jacobian(y, [n])

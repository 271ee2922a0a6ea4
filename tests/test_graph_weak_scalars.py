"""Python floats fed to a tl.function as weak scalars: traced results have eager's dtypes and values (JAX's
weak types: arithmetic on weak values stays weak; a tensorlib function of a Python float computes in the
default float dtype, as eagerly)."""

import random

import numpy as np
import pytest

import tensorlib as tl


def _same(eager, traced):
    assert traced.dtype == eager.dtype, (eager, traced)
    np.testing.assert_array_equal(traced.numpy(), eager.numpy())


X32 = np.array([1.0, 2.0], np.float32)
X16 = np.array([1.0, 2.0], np.float16)
I32 = np.array([1, 2], np.int32)


@pytest.mark.parametrize(
    "expression, x, values",
    [
        (lambda x, s: x * (s * s), X32, (1e-30, 3.0)),  # float64 would keep 1e-60
        (lambda x, s: x + s * 1e-8 + 1.0, X32, (1.0, 2.0)),
        (lambda x, s: x * (-s) ** 2 / 3.0, X16, (0.1, 30.0)),
        (lambda x, s: x - abs(s - 1.0), X16, (0.25, 1e-4)),
        (lambda x, s: x * (s * 2), I32, (0.25, 0.75)),
        (lambda x, s: x + (s > 0.5), X16, (0.7, 0.2)),
        (lambda x, a, b: x * (a * b), X32, (1e-20, 1e-21)),
    ],
)
def test_arithmetic_on_weak_floats_stays_weak(expression, x, values):
    f = tl.function(expression)
    for v in values:
        args = (v,) * (expression.__code__.co_argcount - 1)
        _same(expression(tl.tensor(x), *args), f(x, *args))
    assert f.trace_count == 1


@pytest.mark.parametrize(
    "expression",
    [
        lambda s: tl.sqrt(s),
        lambda s: tl.exp(s) * tl.tensor(X16),
        lambda s: tl.stack([s, s * 2.0]),
        lambda s: tl.tensor(s),
        lambda s: tl.tensor(s * 2.0, dtype="float64"),
        lambda s: tl.full((2, 3), s) + tl.tensor(X16)[:1, None],
        lambda s: tl.cast(s, "float64"),
        lambda s: tl.where(tl.tensor([True, False]), s, 0.0),  # the condition is no promoted input
        lambda s: s / (s / s - tl.minimum(s, 0.5)),  # the literal 0.5 beside s; then an op on a strong value
        lambda s: tl.tanh(tl.where(tl.tensor(True), 2.0, s) + tl.tensor(X16)),
        lambda s: tl.where(tl.tensor(True), s, -2) + s,
        lambda s: tl.tanh(tl.maximum(3, s)),
        # An explicit dtype makes a strong tensor, exact; literals beside one adopt its dtype (they were float32).
        lambda s: tl.log(tl.tensor(s, dtype="float64")),
        lambda s: tl.where(tl.tensor(True), 1.0, tl.cast(s, "float64")),
        lambda s: tl.maximum(0.5, tl.sqrt(tl.cast(s, "float64"))),
    ],
)
def test_tensorlib_functions_of_weak_floats_compute_as_eagerly(expression):
    f = tl.function(expression)
    for v in (0.1, 2.5):
        _same(expression(v), f(v))
    assert f.trace_count == 1


def test_weak_floats_stay_weak_inside_control_flow_branches():
    def f(x, s):
        return tl.cond(tl.sum(x) > 0, lambda a, b: a * (b * b), lambda a, b: a - b * s, x, s)

    traced = tl.function(f)
    for x in (X32, -X32):
        _same(f(tl.tensor(x), 1e-30), traced(x, 1e-30))


def test_python_control_flow_on_a_weak_float_makes_it_static():
    @tl.function
    def f(x, s):
        if s * 2.0 > 1.0:
            return x * s
        return x - s

    assert f(X32, 2.0).numpy().tolist() == [2.0, 4.0]
    assert f(X32, 0.25).numpy().tolist() == [0.75, 1.75]
    assert f(X32, 2.0).numpy().tolist() == [2.0, 4.0]
    # The first trace found the comparison needs the value: s became static, so two values, two graphs.
    assert f.trace_count == 2 and f.retrace_reasons == ["first call", "s: 2.0 -> 0.25"]


def test_full_takes_a_tensor_fill_value():
    np.testing.assert_array_equal(tl.full((2, 2), tl.tensor([1, 2])).numpy(), [[1, 2], [1, 2]])
    assert tl.full((3,), tl.tensor(np.float64(0.5))).dtype == np.float64


def test_linspace_takes_a_weak_float_bound():
    # numpy.linspace refused the traced float ("no implementation of numpy.linspace for Tensors").
    f = tl.function(lambda s: tl.linspace(0.0, s, 3))
    assert f(1.0).numpy().tolist() == [0.0, 0.5, 1.0]
    assert f(2.0).numpy().tolist() == [0.0, 1.0, 2.0]  # the bound is an input: no retrace
    assert f.trace_count == 1 and f(2.0).dtype == np.float32
    for s in np.random.default_rng(1).standard_normal(20) * 3:  # held in float64, as NumPy computes
        np.testing.assert_array_equal(f(float(s)).numpy(), np.linspace(0.0, float(s), 3, dtype=np.float32))


def test_python_numbers_alone_promote_to_the_highest_kind():
    # An int beside a float made float64 (float32 with int64, NumPy's rule for strong dtypes); JAX gives
    # the default float, as tensorlib does for one Python float.
    assert tl.maximum(3, 0.5).dtype == tl.where(True, 1e-20, -2).dtype == np.float32
    assert tl.maximum(3, 2).dtype == np.int64 and tl.maximum(True, 2.0).dtype == np.float32
    assert tl.maximum(tl.tensor(3), 0.5).dtype == np.float64  # a strong int64 tensor beside a float: NumPy 2


def _random_expression(rng, depth):
    """Source of a random expression in tensors x, y, weak floats s, t and Python literals."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(["s", "t", "x", "y", "0.5", "2.0", "3", "1e-08", "1e+30", "-1.5"])
    a, b = _random_expression(rng, depth - 1), _random_expression(rng, depth - 1)
    return rng.choice(
        [f"({a} {rng.choice('+-*/')} {b})", f"(-{a})", f"abs({a})", f"({a} ** 2)", f"tl.sqrt(abs({a}) + 1.0)"]
        + [f"tl.exp(-abs({a}))", f"tl.maximum({a}, {b})", f"tl.where(tl.tensor(True), {a}, {b})", f"tl.sum({a})"]
        + [f"tl.tanh({a})", f"tl.minimum({a}, 0.5)", f"tl.cast({a}, 'float32')", f"tl.square({a})"]
    )


@pytest.mark.parametrize("seed", range(4))
def test_random_expressions_of_weak_floats_trace_as_they_run(seed):
    rng = random.Random(seed)
    dtypes = ["float16", "float32", "float64", "int32", "int64", "bool"]
    for _ in range(40):
        fn = eval(f"lambda x, y, s, t: {_random_expression(rng, 3)}")
        x = np.array([1, 2, 0]).astype(rng.choice(dtypes))
        y = np.array([3, 1, 2]).astype(rng.choice(dtypes))
        s, t = float(rng.choice([0.5, 1e-20, 3.0, 1e5])), float(rng.choice([0.25, 7.0, 1e-30]))
        try:
            eager = fn(tl.tensor(x), tl.tensor(y), s, t)
        except (TypeError, ValueError, OverflowError):
            continue  # bool arithmetic NumPy refuses, and the like: eager raises too
        if not isinstance(eager, tl.Tensor):
            continue  # Python arithmetic alone
        traced = tl.function(fn)(x, y, s, t)
        assert traced.dtype == eager.dtype
        np.testing.assert_allclose(traced.numpy().astype(complex), eager.numpy().astype(complex), rtol=2e-3, atol=1e-6)


def test_a_float_needed_as_a_value_makes_only_the_floats_of_its_argument_static():
    # Its whole argument became static: with the rule that static arrays are errors, the array beside it
    # would have been refused; it stays an input.
    f = tl.function(lambda x, config: x * float(config["scale"]) + config["offset"])
    assert f(np.ones(2), {"scale": 2.0, "offset": np.ones(2)}).numpy().tolist() == [3.0, 3.0]
    assert f(np.ones(2), {"scale": 2.0, "offset": np.full(2, 5.0)}).numpy().tolist() == [7.0, 7.0]
    assert f(np.ones(2), {"scale": 3.0, "offset": np.ones(2)}).numpy().tolist() == [4.0, 4.0]
    assert f.trace_count == 2 and f.retrace_reasons[1] == "config['scale']: 2.0 -> 3.0"

"""Graph mode as an adversary, second round.

What it attacks, and against which references:
- hostile graph files: an attribute of the wrong kind is one GraphFormatError at load, never a kernel error
  when the graph runs (the serialize contract; eager, whose wrappers normalize flags);
- a bounded tl.while_loop whose predicate differs per element of tl.vmap, traced: values and gradients
  against a NumPy loop per element (JAX maps it under jit);
- signed complex zeros and complex NaN next to tensors and as tl.function arguments: NumPy's results and
  the trace count;
- Python-float arguments: rounded once beside float16 and by tl.cast (NumPy's np.float16(s)), and results
  computed from them alone promote weakly (eager Python arithmetic; JAX's weakly typed jit results).
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.graph import GraphFormatError


def _saved(tmp_path, fn, *args):
    path = tmp_path / "g.json"
    tl.function(fn).get_graph(*args).save(path)
    return path


def _damaged(path, op_type, attribute, value):
    """The graph file at ``path`` with ``attribute`` of its one ``op_type`` node set to the JSON ``value``."""
    doc = json.loads(path.read_text())
    (node,) = [n for n in doc["nodes"] if n["op"] == op_type]
    node["attrs"][attribute] = value
    path.write_text(json.dumps(doc))
    return path


def _summed(x):
    return tl.sum(x, axis=0, keepdims=True)


@pytest.mark.parametrize("value", [{"$tuple": []}, "yes", None, {"$float": "1.0"}, {"$list": [True]}, 2**40])
def test_a_bool_attribute_of_another_type_is_a_format_error(tmp_path, value):
    path = _damaged(_saved(tmp_path, _summed, np.ones((2, 3), np.float32)), "Sum", "keepdims", value)
    with pytest.raises(GraphFormatError, match=r"node 0 \(Sum\).*keepdims"):
        tl.graph.load(path)


def test_a_saved_bool_attribute_loads_and_runs_as_eager(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = tl.graph.load(_saved(tmp_path, _summed, x))
    np.testing.assert_array_equal(g(x).numpy(), x.sum(axis=0, keepdims=True))


def test_a_flag_given_as_an_int_round_trips(tmp_path):
    # tl.scan(..., reverse=1) records the int; its file must load and run as the traced graph does.
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    path = _saved(tmp_path, lambda xs: tl.scan(lambda c, r: (c * 2.0 + r, c), np.zeros(2), xs, reverse=1), x)
    carry, ys = tl.graph.load(path)(x)
    expected, history = np.zeros(2), []
    for row in x[::-1]:
        history.append(expected)
        expected = expected * 2.0 + row
    np.testing.assert_array_equal(carry.numpy(), expected)
    np.testing.assert_array_equal(ys.numpy(), np.stack(history[::-1]))


@pytest.mark.parametrize("value", ["x", {"$dtype": "int32"}, {"$slice": [None, None, None]}, {"$dict": []}])
def test_a_number_attribute_holding_a_string_dtype_or_slice_is_a_format_error(tmp_path, value):
    path = _saved(tmp_path, lambda i: tl.one_hot(i, 4, on_value=2.0), np.array([0, 3]))
    with pytest.raises(GraphFormatError, match=r"\(OneHot\).*on_value.*not a number"):
        tl.graph.load(_damaged(path, "OneHot", "on_value", value))


# ---------------------------------------------------------------- a while loop mapped by tl.vmap, traced
def _doubled_below(limit):
    """Doubles a float64 scalar while it is below ``limit``, at most 4 times, counting the steps."""

    def f(x):
        count, value = tl.while_loop(
            lambda s: s[1] < limit, lambda s: (s[0] + 1, s[1] * 2.0), (tl.tensor(0), x), maximum_iterations=4
        )
        return count, value

    return f


def _doubled_below_numpy(xs, limit):
    counts, values = [], []
    for v in xs:
        k = 0
        while v < limit and k < 4:
            v, k = v * 2.0, k + 1
        counts.append(k)
        values.append(v)
    return np.array(counts), np.array(values)


def test_a_bounded_while_loop_whose_predicate_differs_per_element_maps_when_traced():
    # Elements stop after 0, 1, 3 and 4 (the bound) steps; traced, vmap has no values to test, so the loop
    # runs to its bound keeping each element's values from where it stopped (JAX's batched while loop).
    xs = np.array([20.0, 6.0, 1.5, 0.25])
    f = _doubled_below(10.0)
    counts, values = tl.function(tl.vmap(f))(tl.tensor(xs))
    want_counts, want_values = _doubled_below_numpy(xs, 10.0)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(values.numpy(), want_values)
    eager_counts, eager_values = tl.vmap(f)(tl.tensor(xs))
    np.testing.assert_array_equal(eager_values.numpy(), values.numpy())


def test_the_gradient_of_a_mapped_bounded_while_loop_traced_is_two_to_the_steps():
    xs = np.array([20.0, 6.0, 1.5, 0.25])
    grad = tl.grad(lambda x: _doubled_below(10.0)(x)[1])
    got = tl.function(tl.vmap(grad))(tl.tensor(xs)).numpy()
    np.testing.assert_array_equal(got, 2.0 ** _doubled_below_numpy(xs, 10.0)[0])


def test_an_unbounded_while_loop_mapped_and_traced_is_one_while_over_the_batch():
    # It raised UnmappableLoopError; now one While node runs while any element goes on, each element keeping
    # its values once its own predicate is false (JAX's batching rule), as eager vmap and a NumPy loop give.
    def f(x):
        return tl.while_loop(lambda s: s[1] < 10.0, lambda s: (s[0] + 1, s[1] * 2.0), (0, x))

    traced = tl.function(tl.vmap(f))
    for xs in (np.array([20.0, 6.0, 1.5, 0.25]), np.array([3.0, 0.01, 9.99])):
        counts, values = traced(tl.tensor(xs))
        want_values, want_counts = xs.copy(), np.zeros(len(xs), np.int64)
        for i in range(len(xs)):
            while want_values[i] < 10.0:
                want_values[i], want_counts[i] = want_values[i] * 2.0, want_counts[i] + 1
        np.testing.assert_array_equal(counts.numpy(), want_counts)
        np.testing.assert_array_equal(values.numpy(), want_values)
        eager_counts, eager_values = tl.vmap(f)(tl.tensor(xs))
        np.testing.assert_array_equal(eager_counts.numpy(), want_counts)
    assert sum("While" in str(n.op.name) for n in traced.get_graph(np.zeros(4)).nodes) == 1
    rows = tl.function(tl.vmap(lambda x: tl.while_loop(lambda v: tl.sum(v) < 5.0, lambda v: v + 1.0, x)))
    np.testing.assert_array_equal(rows(np.array([[0.0, 1.0], [10.0, 0.0]])).numpy(), [[2.0, 3.0], [10.0, 0.0]])


# ---------------------------------------------------------------- signed complex zeros, eager and traced
SIGNED_COMPLEX_ZEROS = [0j, complex(0.0, -0.0), complex(-0.0, 0.0), complex(-0.0, -0.0)]


def _signs(values) -> list:
    values = np.asarray(values)
    return [np.signbit(values.real).tolist(), np.signbit(values.imag).tolist()]


def test_a_complex_zero_keeps_its_signs_next_to_a_tensor_after_another_zero():
    # The weak-scalar constants are shared by value: complex(-0.0, -0.0) == 0j, so one zero stood for all.
    a = np.array([1.0, -2.0], np.float32)
    for first in SIGNED_COMPLEX_ZEROS:
        tl.tensor(a) * first
        for value in SIGNED_COMPLEX_ZEROS:
            assert _signs((tl.tensor(a) * value).numpy()) == _signs(a * value), (first, value)
            assert _signs((value - tl.tensor(a)).numpy()) == _signs(value - a), (first, value)


# ---------------------------------------------------------------- a weak float rounded once
# 1 + 2**-11 + 2**-30 rounds up to float16 directly, but through float32 it is a tie (1 + 2**-11) that rounds
# down to 1.0: a Python float meets a float16 tensor at NumPy's value, rounded once.
DOUBLE_ROUNDING = [1 + 2**-11 + 2**-30, -(3 + 2**-9 + 2**-40), 0.1]


@pytest.mark.parametrize("s", DOUBLE_ROUNDING)
def test_a_python_float_argument_beside_float16_is_rounded_once_as_numpy_does(s):
    x = np.array([1.0, -2.0, 0.5], np.float16)
    expected = x * np.float16(s)
    f = tl.function(lambda x, s: x * s)
    np.testing.assert_array_equal(f(x, s).numpy(), expected)
    np.testing.assert_array_equal((tl.tensor(x) * s).numpy(), expected)
    g = tl.function(lambda s: tl.cast(s, "float16"))
    assert g(s).numpy().tobytes() == tl.cast(s, "float16").numpy().tobytes() == np.float16(s).tobytes()
    assert tl.function(lambda s: tl.cast(s, "float64"))(s).numpy() == tl.cast(s, "float64").numpy() == s


@settings(deadline=None)
@given(st.floats(-6e4, 6e4))
def test_a_python_float_argument_beside_float16_matches_numpy(s):
    x = np.array([1.0, -0.5], np.float16)
    np.testing.assert_array_equal(tl.function(lambda x, s: x + s)(x, s).numpy(), x + np.float16(s))


def test_a_complex_argument_keys_the_cache_by_its_signed_zeros_and_nan():
    # A Python complex is a static value: 0j == complex(-0.0, -0.0) hashes alike, so a cache keyed by == ran
    # the graph traced for the other zero; a NaN never equals itself, so every call traced again.
    a = np.array([1.0, -2.0], np.float32)
    for static in (False, True):
        f = tl.function(lambda x, c: x * c, static_argnums=(1,) if static else ())
        for value in SIGNED_COMPLEX_ZEROS:
            assert _signs(f(a, value).numpy()) == _signs(a * value), (static, value)
        for _ in range(3):
            got = f(a, complex(np.nan, 1.0)).numpy()
        np.testing.assert_array_equal(got, a * complex(np.nan, 1.0))
        assert f.trace_count == len(SIGNED_COMPLEX_ZEROS) + 1


# ---------------------------------------------------------------- results computed from Python floats alone
def test_a_result_computed_from_python_float_arguments_alone_promotes_weakly():
    # Eagerly ``lr * 2.0`` is a Python float, weak beside a tensor; JAX's jit returns it weakly typed too. Traced,
    # it came back a strong float64 tensor, so ``x32 + f(lr)`` was float64.
    f = tl.function(lambda lr, x: (lr * 2.0, -lr, x * lr))
    x32 = np.array([1.0, 2.5], np.float32)
    for lr in (0.1, 3.0):
        scaled, negated, product = f(lr, x32)
        assert float(scaled) == lr * 2.0 and float(negated) == -lr
        for value, python in ((scaled, lr * 2.0), (negated, -lr)):
            np.testing.assert_array_equal((tl.tensor(x32) + value).numpy(), x32 + python)
            assert (tl.tensor(x32) + value).dtype == np.float32
            assert (tl.tensor(np.array([1, 2])) + value).dtype == (np.array([1, 2]) + python).dtype
        assert product.dtype == np.float32

"""Contract: values are immutable; a write through a result reaches nothing tensorlib holds (issue 7, point 2)."""

import numpy as np
import pytest

import tensorlib as tl


def _write(array):
    array[0] = 99.0


@pytest.mark.parametrize(
    "view",
    [
        tl.identity,
        lambda a: tl.reshape(a, (2, 2)),
        lambda a: tl.multiply(a, 1.0),
        lambda a: tl.transpose(tl.reshape(a, (2, 2))),
        lambda a: tl.identity(a)[1:],
    ],
    ids=["identity", "reshape", "times_one", "transpose", "slice"],
)
def test_results_of_a_callers_array_do_not_alias_it(view):
    caller = np.arange(4.0)
    out = view(caller)
    before = out.numpy().copy()
    caller[:] = -1.0  # the caller writes to its own array afterwards
    np.testing.assert_array_equal(out.numpy(), before)
    with pytest.raises(ValueError, match="read-only"):
        _write(out.numpy())  # and cannot write through the result
    np.testing.assert_array_equal(caller, [-1.0] * 4)


def test_a_callers_array_mutated_between_forward_and_gradient_does_not_change_it():
    caller = np.array([1.0, 2.0, 3.0])
    x = tl.tensor([1.0, 1.0, 1.0], dtype="float64")
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sum(x * caller)
    caller[:] = 100.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 2.0, 3.0])


def test_variable_numpy_is_read_only_and_assign_does_not_change_old_reads():
    v = tl.Variable([1.0, 2.0], dtype="float64")
    with pytest.raises(ValueError, match="read-only"):
        _write(v.numpy())
    old = v.read_value()
    snapshot = v.numpy()
    v.assign([5.0, 6.0])
    assert old.numpy().tolist() == [1.0, 2.0] and snapshot.tolist() == [1.0, 2.0]
    assert v.numpy().tolist() == [5.0, 6.0]


def test_variable_made_from_a_callers_array_owns_its_value():
    caller = np.array([1.0, 2.0])
    v = tl.Variable(caller)
    caller[0] = 50.0
    v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [2.0, 3.0] and caller.tolist() == [50.0, 2.0]


def test_np_array_of_a_tensor_is_a_writable_copy():
    t = tl.tensor([1.0, 2.0])
    a = np.array(t)
    a[0] = 7.0
    assert t.numpy().tolist() == [1.0, 2.0]


def test_traced_identity_output_does_not_alias_the_callers_argument():
    f = tl.function(lambda x: x * 1.0)  # simplified to its input by the graph passes
    caller = np.array([1.0, 2.0])
    out = f(caller)
    caller[0] = 42.0
    assert out.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="read-only"):
        _write(out.numpy())
    reshaped = tl.function(lambda x: tl.reshape(x, (2, 1)))(caller)
    caller[1] = -3.0
    assert reshaped.numpy().ravel().tolist() == [42.0, 2.0]


def test_a_traced_constant_returned_twice_cannot_be_corrupted():
    f = tl.function(lambda: tl.tensor([1.0, 2.0]) * 2.0)
    first = f()
    with pytest.raises(ValueError, match="read-only"):
        _write(first.numpy())
    assert f().numpy().tolist() == [2.0, 4.0] and first.numpy().tolist() == [2.0, 4.0]


@pytest.mark.parametrize("size", [2, 16, 1000])
def test_closed_over_arrays_are_read_by_reference_at_every_size(size):
    data = np.ones(size)
    f = tl.function(lambda x: tl.sum(x * data))
    assert float(f(np.float64(2.0))) == 2.0 * size
    data[:] = 3.0  # small arrays are no longer frozen into the graph
    assert float(f(np.float64(2.0))) == 6.0 * size
    assert f.trace_count == 1
    assert [c.name for c in f.get_graph(np.float64(2.0)).captures] == ["data"]


@pytest.mark.parametrize(
    "use",
    [
        lambda x, data: x @ data,
        lambda x, data: tl.matmul(x, data),
        lambda x, data: x * tl.mean(data),
        lambda x, data: x + tl.vstack([data, data])[:2],
        lambda x, data: x * tl.linalg.det(data),
    ],
    ids=["@", "matmul", "mean", "vstack", "det"],
)
def test_arrays_given_to_public_functions_are_captured_by_reference_too(use):
    # Public functions that reshape their inputs before the op convert them as an op does: a
    # closed-over array is a capture, not a copy frozen into the graph.
    data = np.eye(2)
    f = tl.function(lambda x: use(x, data))
    x = tl.ones((2, 2), dtype="float64")
    before = f(x).numpy().copy()
    np.testing.assert_allclose(before, use(x, np.eye(2)).numpy())
    data *= 3.0
    np.testing.assert_allclose(f(x).numpy(), use(x, 3.0 * np.eye(2)).numpy())
    assert np.array_equal(before, use(x, np.eye(2)).numpy())
    assert [c.name for c in f.get_graph(x).captures] == ["data"]
    assert f.trace_count == 1


def test_a_temporary_view_of_a_closed_over_array_is_read_by_reference():
    weights = np.ones((3, 2))
    f = tl.function(lambda x: x @ weights.T)  # weights.T dies with the trace, but it views weights
    x = tl.ones((1, 2), dtype="float64")
    assert f(x).numpy().tolist() == [[2.0, 2.0, 2.0]]
    weights[:] = 2.0
    assert f(x).numpy().tolist() == [[4.0, 4.0, 4.0]]
    # A view of a temporary is itself a temporary: frozen into the graph as a constant.
    g = tl.function(lambda x: x * np.arange(4.0)[::2])
    assert g(x).numpy().tolist() == [[0.0, 2.0]] and g.get_graph(x).captures == []


def test_closed_over_array_output_does_not_alias_the_array():
    data = np.array([1.0, 2.0])
    f = tl.function(lambda: tl.identity(data))
    out = f()
    data[0] = 9.0
    assert out.numpy().tolist() == [1.0, 2.0]
    assert f().numpy().tolist() == [9.0, 2.0]


def test_unary_plus_and_vmap_of_a_variable_are_its_value_now():
    # +v and tl.vmap(lambda a: a)(v) returned the Variable itself: a later assign changed the results.
    v = tl.Variable([1.0, 2.0])
    plus, mapped, traced = +v, tl.vmap(lambda a: a)(v), tl.function(lambda: +v)()
    with tl.GradientTape() as tape:
        y = tl.sum(tl.vmap(lambda a: a * a)(v)) + tl.sum(+v)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [3.0, 5.0])  # 2 v + 1: gradients still reach v
    v.assign([5.0, 6.0])
    for result in (plus, mapped, traced):
        assert not isinstance(result, tl.Variable)
        np.testing.assert_array_equal(result.numpy(), [1.0, 2.0])

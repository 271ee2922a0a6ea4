"""One check before a Variable changes (dispatch.check_assignable): eager, traced and compiled assigns agree."""

import numpy as np
import pytest

import tensorlib as tl

MESSAGE = (
    r"^Variable\.assign: variable 'v' \(shape \(2,\), float32\) was read by a GradientTape that is still "
    r"recording; its gradient would mix old and new values"
)


def _assign_eagerly(v):
    v.assign([0.0, 0.0])


_assign_traced = tl.function(lambda v: v.assign(tl.zeros((2,))))


def _assign_by_a_graph_call(v):
    graph = tl.function(lambda: v.assign(tl.zeros((2,)))).get_graph()
    graph()


@pytest.mark.parametrize(
    "assign", [_assign_eagerly, _assign_traced, _assign_by_a_graph_call], ids=["eager", "traced", "graph call"]
)
def test_assigning_a_variable_a_recording_tape_read_raises_the_same_error(assign):
    v = tl.Variable([1.0, 2.0], name="v")
    with tl.GradientTape() as tape:
        y = tl.sum(v * v)
        with pytest.raises(RuntimeError, match=MESSAGE):
            assign(v)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])  # the value is untouched
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])
    assign(v)  # after the tape stopped recording, the same assignment works
    np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])


def test_a_value_on_another_backend_is_refused_naming_both():
    v = tl.Variable([1.0], name="w")
    other = tl.backends.Backend("isolated_other", np)
    with tl.testing.isolated_registries():
        tl.backends.register(other)
        with pytest.raises(
            ValueError,
            match=r"^Variable\.assign: value is on backend isolated_other, "
            r"variable 'w' on numpy",
        ):
            tl.dispatch.check_assignable(v, other)


# ------------------------------------------------------------------ integers too wide for the variable
@pytest.mark.parametrize(
    "value",
    [np.array([2**40, 1]), [2**40, 1], tl.tensor(np.array([2**40, 1])), np.array([-(2**31) - 10, 0])],
    ids=["int64 array", "list", "int64 tensor", "below int32"],
)
@pytest.mark.parametrize("how", ["assign", "assign_add"])
def test_an_integer_the_variable_cannot_hold_is_an_overflow_error_and_leaves_the_variable(value, how):
    v = tl.Variable(np.array([3, 4], np.int32), name="count")
    # assign_add adds first: a list is then the Add's input, read at int32
    with pytest.raises(OverflowError, match=rf"(^Variable\.{how}.*'count'|^Add: input 'y').*int32"):
        getattr(v, how)(value)
    np.testing.assert_array_equal(v.numpy(), [3, 4])  # not wrapped: 2**40 became 0 in int32
    assert v.dtype == tl.int32


def test_wider_integers_that_fit_are_assigned_and_a_traced_one_is_checked_when_it_runs():
    v = tl.Variable(np.array([3, 4], np.int32), name="count")
    v.assign(np.array([-(2**31), 2**31 - 1]))
    np.testing.assert_array_equal(v.numpy(), [-(2**31), 2**31 - 1])
    v.assign(tl.tensor(np.array([5, 6])))
    np.testing.assert_array_equal(v.numpy(), [5, 6])
    tl.function(lambda a: v.assign(a))(tl.tensor(np.array([7, 8])))  # fits: assigned, as eagerly
    np.testing.assert_array_equal(v.numpy(), [7, 8])
    with pytest.raises(OverflowError, match=r"Variable\.assign: .*'count' int32 holds 1099511627776"):
        tl.function(lambda a: v.assign(a))(tl.tensor(np.array([2**40, 8])))
    tl.function(lambda a: v.assign(tl.cast(a, "int32")))(tl.tensor(np.array([9, 8])))
    np.testing.assert_array_equal(v.numpy(), [9, 8])


def test_a_list_next_to_an_int32_tensor_is_not_wrapped():
    x = tl.tensor(np.array([1, 2], np.int32))
    with pytest.raises(OverflowError, match=r"^Add: input 'y' holds 1099511627776, which does not fit in int32"):
        x + [2**40, 1]
    np.testing.assert_array_equal((x + [2**20, -5]).numpy(), np.array([2**20 + 1, -3], np.int32))

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

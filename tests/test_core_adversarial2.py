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

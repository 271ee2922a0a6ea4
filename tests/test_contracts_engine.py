"""Engine tests that kill real bugs (issue 7, point 9): sources that are intermediates, one-shot tapes."""

import numpy as np
import pytest

import tensorlib as tl


def f64(v):
    return tl.tensor(v, dtype="float64")


def test_gradient_with_respect_to_a_source_that_is_also_an_intermediate():
    x = f64([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        h = 2.0 * x
        tape.watch(h)
        y = tl.sum(h * h + x)
    gx, gh = tape.gradient(y, [x, h])
    # dy/dh = 2h = 4x (h held fixed for x's total derivative: through h and directly)
    np.testing.assert_array_equal(gh.numpy(), [4.0, 8.0])
    np.testing.assert_array_equal(gx.numpy(), 2.0 * np.array([4.0, 8.0]) + 1.0)


def test_intermediate_source_requested_alone_and_first():
    x = f64(3.0)
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * x
        y = tl.sin(h)
    assert tape.gradient(y, h).numpy().item() == pytest.approx(np.cos(9.0), rel=1e-15)
    gh, gx = tape.gradient(y, [h, x])
    assert gx.numpy().item() == pytest.approx(np.cos(9.0) * 6.0, rel=1e-15)
    assert gh.numpy().item() == pytest.approx(np.cos(9.0), rel=1e-15)


@pytest.mark.parametrize("first", ["gradient", "jacobian"])
@pytest.mark.parametrize("second", ["gradient", "jacobian"])
def test_a_non_persistent_tape_refuses_a_second_use(first, second):
    x = f64([1.0, 2.0])
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    getattr(tape, first)(y, x)
    with pytest.raises(
        RuntimeError,
        match=rf"GradientTape.{second}: a non-persistent GradientTape can compute "
        r"gradients only once",
    ):
        getattr(tape, second)(y, x)


def test_a_persistent_tape_gives_the_same_answer_twice():
    x = f64([1.0, 2.0])
    with tl.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
    first = tape.jacobian(y, x).numpy()
    np.testing.assert_array_equal(first, np.diag([3.0, 12.0]))
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), first)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 12.0])

"""The user toolkit attacked as an adversary: ``tl.testing.check_grads`` must fail on deliberately wrong
gradients (registered here) and pass right ones at large magnitudes; ``tl.profile`` must record honestly.

References: float64 central differences, the closed-form derivatives of the functions checked, and
JAX's ``check_grads`` / torch's ``gradcheck`` semantics (an absolute plus relative tolerance on each
checked quantity).
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads


def _square_with(name, rule):
    """``x * x``, element by element, with the gradient ``rule(node, g)``."""
    op = tl.ops.defop(name, inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: x * x)
    tl.grad.register_gradient(name, rule)
    return op


def _wrong_in_the_last(shape, how):
    """A mask that is 1 everywhere but in the last element (or row) of ``shape``."""

    def rule(node, g):
        mask = np.ones(shape)
        mask[-1] = how
        return g * 2.0 * node.inputs[0] * tl.tensor(mask.astype(node.inputs[0].dtype))

    return rule


@pytest.mark.parametrize(
    "shape, dtype, how",
    [
        ((16,), np.float32, -1.0),  # a sign error in one element
        ((256,), np.float32, -1.0),
        ((4096,), np.float64, -1.0),
        ((4096,), np.float64, 2.0),  # a factor of 2 in one element
        ((16, 64), np.float32, 2.0),  # wrong for the last batch element only
    ],
)
def test_reverse_mode_catches_a_gradient_wrong_in_one_element_of_a_batch(shape, dtype, how):
    # d(x^2)/dx = 2x; the registered rule is wrong in the last element (or row) only.  With random
    # Gaussian directions and a tolerance summing |u_k (J v)_k| over the output, about one seed in
    # three let these pass; every seed must fail, naming the op and the argument.
    name = f"ToolsWrongInLast{'x'.join(map(str, shape))}{np.dtype(dtype).name}{'Sign' if how < 0 else 'Double'}"
    op = _square_with(name, _wrong_in_the_last(shape, how))
    x = np.random.default_rng(1).uniform(0.5, 1.5, shape).astype(dtype)
    for seed in range(6):
        with pytest.raises(
            AssertionError, match=rf"reverse-mode \(vjp\) derivative of {name} with respect to argument 0"
        ):
            check_grads(op, [x], modes=("rev",), seed=seed)


def test_reverse_mode_passes_right_gradients_of_large_outputs():
    # No false alarms from the tighter tolerance: right gradients of many-element float32 and float64 ops.
    rng = np.random.default_rng(2)
    right = _square_with("ToolsRightSquare", lambda node, g: g * 2.0 * node.inputs[0])
    for seed in range(3):
        for dtype in (np.float32, np.float64):
            check_grads(right, [rng.uniform(-2, 2, (64, 64)).astype(dtype)], modes=("rev",), seed=seed)
            check_grads(tl.tanh, [rng.standard_normal((64, 64)).astype(dtype)], seed=seed)
            a, b = rng.standard_normal((32, 48)).astype(dtype), rng.standard_normal((48, 24)).astype(dtype)
            check_grads(tl.matmul, [a, b], seed=seed)
            check_grads(lambda x: tl.nn.softmax(x, axis=-1), [rng.standard_normal((16, 40)).astype(dtype)], seed=seed)


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: x * 1e8, [1e8, 2e8]),
        (lambda x: x * x, [1e6, -3e6]),
        (lambda x: tl.sum(x * x), [1e-3, 1e8, -1.0]),
        (tl.sin, [1e5, -2e5]),
        (tl.log, [1e10, 3e12]),
    ],
)
def test_right_gradients_at_large_magnitudes_pass(f, x):
    # A fixed step of 1e-6 is below the float64 spacing at 1e8 and a percent of it at 1e6: the
    # rounded step made the numeric derivative of x * 1e8 at 1e8 come out 3% low, a false alarm.
    check_grads(f, [np.array(x)], order=2)


def test_a_wrong_gradient_at_large_magnitudes_still_fails():
    op = _square_with("ToolsSlightlyWrongSquare", lambda node, g: g * 2.001 * node.inputs[0])
    with pytest.raises(AssertionError, match="derivative of ToolsSlightlyWrongSquare with respect to argument 0"):
        check_grads(op, [np.array([1e6, -3e6, 2e7])])

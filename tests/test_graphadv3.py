"""Graph mode (tl.function) as an adversary, third round.

What it attacks, and against which references:
- the passes: an op declared ``side_effect`` (run for more than its result, as TensorFlow's stateful
  ``tf.print``) runs at every call of the traced function, as often as eagerly: it is never folded into a
  constant on constant inputs, nor merged with an identical call (the eager call count is the reference);
"""

import numpy as np

import tensorlib as tl


def _counting_op(name):
    """A side-effect op recording the sum of each input it sees, and the record."""
    seen = []
    op = tl.ops.defop(name, inputs=("x",), infer=lambda x: x, side_effect=True)

    @op.kernel("numpy")
    def _record(x):
        seen.append(float(np.sum(x)))
        return x

    tl.grad.not_differentiable(name)
    return op, seen


def test_a_side_effect_op_runs_at_every_call_as_often_as_eagerly():
    # Before: the call on a constant ran once, when the graph was optimized, and the two calls on x were
    # merged into one: 4 runs in three calls instead of 9.
    log, seen = _counting_op("TestGraphadv3Log")

    def f(x):
        log(tl.tensor(2.0))
        log(x)
        log(x)
        return x * 2.0

    traced = tl.function(f)
    for value in (1.0, 3.0, 5.0):
        f(tl.tensor(value))
    eager = list(seen)
    seen.clear()
    for value in (1.0, 3.0, 5.0):
        assert float(traced(tl.tensor(value))) == 2.0 * value
    assert eager == [2.0, 1.0, 1.0, 2.0, 3.0, 3.0, 2.0, 5.0, 5.0]
    assert seen == eager

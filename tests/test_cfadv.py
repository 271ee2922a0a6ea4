"""Control flow and graph files, adversarially (round 3): JAX's forms of ``tl.fori_loop`` and ``tl.scan`` (bounds,
the loop index's type, ``unroll=``, empty ranges), and every catalogue op through ``save -> load -> run``.

References: NumPy loops, float64 central differences, the graph before saving (bit for bit), and JAX
(``jax.lax.fori_loop``/``scan``) where installed.
"""

import numpy as np
import pytest

import tensorlib as tl

from _helpers import MODES


def _in_mode(mode, f):
    return f if mode == "eager" else tl.function(f)


# ------------------------------------------------------------------ fori_loop: JAX's forms
@pytest.mark.parametrize("mode", MODES)
def test_an_empty_fori_loop_never_returns_the_callers_array_or_variable(mode):
    # fori_loop(3, 1, f, a) returned `a` itself: writing to the NumPy array (or assigning the Variable) later
    # changed the "result", which DESIGN §6 forbids (values are immutable); the traced form returned a copy.
    a = np.array([1.0, 2.0])
    v = tl.Variable(np.array([3.0, 4.0]))
    got_a = _in_mode(mode, lambda x: tl.fori_loop(3, 1, lambda i, c: c * 2.0, x))(a)
    got_v = _in_mode(mode, lambda: tl.fori_loop(3, 1, lambda i, c: c * 2.0, v))()
    assert isinstance(got_a, tl.Tensor) and type(got_v) is tl.Tensor
    a[:] = -1.0
    v.assign(np.array([-5.0, -5.0]))
    np.testing.assert_array_equal(got_a.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(got_v.numpy(), [3.0, 4.0])

"""Elementwise functions at their awkward points: dtypes as NumPy 2 (float-valued functions of integers and
bools compute in float64), values bit for bit NumPy's ufuncs, gradients against float64 central differences."""

import numpy as np
import pytest

import tensorlib as tl

from _helpers import MODES, assert_same, run_in_mode

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BOOLS = np.array([True, False, True])
FLOAT_VALUED_UNARY = ["tan", "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "deg2rad", "rad2deg"]
FLOAT_VALUED_BINARY = ["hypot", "arctan2", "logaddexp", "logaddexp2"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FLOAT_VALUED_UNARY + FLOAT_VALUED_BINARY)
def test_float_valued_functions_of_bools_compute_in_float64(name, mode):
    # NumPy's ufuncs compute bools in float16: tl.hypot(True, True) was 1.4140625, sinh(True) 1.1748046875.
    n = 2 if name in FLOAT_VALUED_BINARY else 1
    got = run_in_mode(mode, getattr(tl, name), *[BOOLS] * n)
    assert_same(got, getattr(np, name)(*[BOOLS.astype(np.float64)] * n))


def _grads(mode, f, *args):
    """Gradients of sum(f) with respect to every argument, eagerly or traced."""
    g = tl.grad(lambda *a: tl.sum(f(*a)), argnums=tuple(range(len(args))))
    return [t.numpy() for t in run_in_mode(mode, g, *[np.asarray(a, np.float64) for a in args])]


INF = np.inf


@pytest.mark.parametrize("mode", MODES)
def test_hypot_gradient_at_the_origin_and_at_infinities(mode):
    # x / hypot was 0/0 at the origin and inf/inf beside an infinity: NaN where the limits are 0 and +-1.
    x, y = [INF, 0.0, 3.0, -INF, 0.0, 1e-300], [1.0, 0.0, -4.0, INF, -0.0, 1e-300]
    gx, gy = _grads(mode, tl.hypot, x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.6, -1.0, 0.0, np.sqrt(0.5)])
    np.testing.assert_array_equal(gy, [0.0, 0.0, -0.8, 1.0, 0.0, np.sqrt(0.5)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, base", [("logaddexp", np.e), ("logaddexp2", 2.0)])
def test_logaddexp_gradient_at_infinities(name, base, mode):
    # exp(x - out) was exp(inf - inf) = NaN at an infinite operand: the shares are the limits 1 and 0, and
    # equal infinities split as any tie does (DESIGN §6).
    x, y = [INF, INF, -INF, -INF, 0.0, 2.0], [0.0, INF, -INF, 1.0, 0.0, -1.0]
    gx, gy = _grads(mode, getattr(tl, name), x, y)
    finite = base**2.0 / (base**2.0 + base**-1.0)
    np.testing.assert_allclose(gx, [1.0, 0.5, 0.5, 0.0, 0.5, finite], rtol=1e-15)
    np.testing.assert_allclose(gy, [0.0, 0.5, 0.5, 1.0, 0.5, 1.0 - finite], rtol=1e-15)

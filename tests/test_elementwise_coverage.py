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
    args = [a if isinstance(a, np.ndarray) else np.asarray(a, np.float64) for a in args]
    return [t.numpy() for t in run_in_mode(mode, g, *args)]


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


# ---------------------------------------------------------------- NumPy's floating-point predicates and routines
SPECIAL = np.array([1.5, -0.0, 0.0, np.nan, np.inf, -np.inf, -2.0, 5e-324])
PREDICATES = ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_of_every_dtype_as_numpy(name, mode):
    for values in (SPECIAL, SPECIAL.astype(np.float32), np.array([3, -1, 0]), np.array([True, False])):
        assert_same(run_in_mode(mode, getattr(tl, name), values), getattr(np, name)(values))


def test_numpy_predicates_run_tensorlibs_and_are_traced():
    t = tl.tensor(SPECIAL)
    for name in PREDICATES:
        out = getattr(np, name)(t)
        assert isinstance(out, tl.Tensor), name
        assert_same(out, getattr(np, name)(SPECIAL))
    assert np.allclose(t, SPECIAL, equal_nan=True) is True and np.array_equal(t, SPECIAL) is False
    graph = tl.function(lambda x: np.isnan(x)).get_graph(t)
    assert "IsNan" in {node.op.name for node in graph.nodes}


@pytest.mark.parametrize("name", ["isposinf", "isneginf", "signbit", "cbrt", "copysign", "spacing", "frexp"])
def test_complex_inputs_are_refused_naming_the_op(name):
    n = 2 if name == "copysign" else 1
    with pytest.raises(TypeError, match=r"is not defined for complex numbers .*complex128"):
        getattr(tl, name)(*[tl.tensor(np.array([1 + 1j]))] * n)


def test_allclose_and_array_equal_give_bools_eagerly_and_tensors_traced():
    a = np.array([1.0, np.nan, np.inf])
    for b, kw in [(a, {}), (a, {"equal_nan": True}), (a + 1e-9, {"equal_nan": True}), (a[:2], {})]:
        want_close = np.allclose(a, b, **kw) if b.shape == a.shape else None
        if want_close is not None:
            assert tl.allclose(tl.tensor(a), b, **kw) is want_close
            assert bool(tl.function(lambda x, y: tl.allclose(x, y, **kw))(tl.tensor(a), tl.tensor(b))) is want_close
        want_equal = np.array_equal(a, b, **kw)
        assert tl.array_equal(tl.tensor(a), b, **kw) is want_equal
        assert bool(tl.function(lambda x, y: tl.array_equal(x, y, **kw))(tl.tensor(a), tl.tensor(b))) is want_equal
    # A list is read as NumPy reads it: [0.1] is float64 0.1, equal to a float64 tensor of 0.1.
    assert tl.array_equal(tl.tensor(np.array([0.1])), [0.1]) is True and tl.allclose(tl.tensor([]), []) is True


@pytest.mark.parametrize("mode", MODES)
def test_float_valued_routines_keep_numpys_values_and_dtypes(mode):
    x, y = SPECIAL, np.array([2.0, -1.0, -0.0, 0.0, 1.0, -3.0, 0.5, -0.0])
    for name in ["cbrt", "trunc", "fix", "rint", "spacing", "positive"]:
        for values in (x, x.astype(np.float32), np.array([8, -27, 0])):
            assert_same(run_in_mode(mode, getattr(tl, name), values), getattr(np, name)(values))
    for name in ["copysign", "heaviside", "nextafter", "fmod", "float_power"]:
        for a, b in [
            (x, y),
            (x.astype(np.float32), y.astype(np.float32)),
            (np.array([7, -7, 3]), np.array([2, 2, -2])),
        ]:
            assert_same(run_in_mode(mode, getattr(tl, name), a, b), getattr(np, name)(a, b))
    ints = np.array([12, -18, 0, 7]), np.array([8, 4, 0, -21])
    assert_same(run_in_mode(mode, tl.gcd, *ints), np.gcd(*ints))
    assert_same(run_in_mode(mode, tl.lcm, *ints), np.lcm(*ints))
    n = np.array([1, -1, 1100, -1100, 3, -1074, 2000, 0])
    assert_same(run_in_mode(mode, tl.ldexp, x, n), np.ldexp(x, n))
    for values in (x, x.astype(np.float32), np.array([8, -27, 0])):
        for got, want in zip(run_in_mode(mode, tl.frexp, values), np.frexp(values)):
            assert_same(got, want)


def test_float_power_is_numpys_bit_for_bit():
    # It was power of the inputs cast to float64: np.power and np.float_power differ in the last bit
    # (float_power(2.0, 0.1) ... 1 ulp apart on 1 of 20 random pairs).
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.0, 3.0, 400), rng.uniform(-4.0, 4.0, 400)
    for a, b in [(x, y), (x.astype(np.float32), y.astype(np.float32)), (x, 0.1)]:
        assert_same(tl.float_power(tl.tensor(a), b if np.isscalar(b) else tl.tensor(b)), np.float_power(a, b))


def test_float_power_of_a_list_of_tensors_keeps_their_gradient():
    g = tl.grad(lambda x: tl.sum(tl.float_power([x, 2.0], 2.0)))(tl.tensor(3.0))
    assert g.numpy().item() == 6.0


def test_float_power_is_float64_even_for_float32_and_python_numbers():
    out = tl.float_power(tl.tensor(np.array([2.0], np.float32)), 0.1)
    assert_same(out, np.float_power(np.float32(2.0), 0.1) * np.ones(1))  # 0.1 exactly, not float32(0.1)
    assert tl.float_power(tl.tensor([2]), tl.tensor(np.array([1j]))).dtype == np.complex128
    g = tl.grad(lambda x: tl.sum(tl.float_power(x, 3)))(tl.tensor(np.array([2.0], np.float32)))
    assert g.dtype == np.float32 and g.numpy().tolist() == [12.0]


@pytest.mark.parametrize("mode", MODES)
def test_routine_gradients_at_awkward_points(mode):
    # cbrt: 1 / (3 cbrt(x)**2), inf at 0 (JAX); copysign: +-1, 0 at x = 0 (PyTorch), +-1 at infinities (JAX);
    # none for the sign source; heaviside: only the value at 0; fmod: 1 and -trunc(x / y) (PyTorch, JAX).
    (g,) = _grads(mode, tl.cbrt, [0.0, 8.0, -27.0, np.inf])
    np.testing.assert_allclose(g, [np.inf, 1 / 12, 1 / 27, 0.0], rtol=1e-15)
    gx, gy = _grads(mode, tl.copysign, [0.0, 1.5, -2.0, np.inf, -np.inf], [2.0, -0.0, 3.0, -1.0, 1.0])
    np.testing.assert_array_equal(gx, [0.0, -1.0, -1.0, -1.0, -1.0])
    np.testing.assert_array_equal(gy, [0.0] * 5)
    gx, gy = _grads(mode, tl.heaviside, [-1.0, 0.0, 2.0], [0.5, 0.25, 3.0])
    np.testing.assert_array_equal(gx, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.0])
    gx, gy = _grads(mode, tl.fmod, [5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0])
    np.testing.assert_array_equal(gx, [1.0] * 4)
    np.testing.assert_array_equal(gy, [-2.0, 2.0, 2.0, -2.0])
    (g,) = _grads(mode, lambda x: tl.ldexp(x, tl.tensor([5, -3, 1100])), [0.0, 1.0, 1e-300])
    np.testing.assert_array_equal(g, np.ldexp(1.0, [5, -3, 1100]))
    (g,) = _grads(mode, lambda x: tl.frexp(x)[0], [3.0, -0.1, 1e-300])
    np.testing.assert_array_equal(g, 2.0 ** -np.frexp([3.0, -0.1, 1e-300])[1])


def test_routine_second_order_against_central_differences():
    x = np.array([0.7, -1.3, 2.2])
    tl.testing.check_grads(tl.cbrt, (x,), order=2)
    tl.testing.check_grads(lambda x: tl.copysign(x, -1.0) * x, (x,), order=2)
    tl.testing.check_grads(lambda x, y: tl.fmod(x, y), (x, np.array([0.4, 0.5, -0.9])), order=2)
    tl.testing.check_grads(lambda x: tl.float_power(x, 2.5), (np.abs(x),), order=2)


def test_bad_inputs_raise_one_clear_error():
    with pytest.raises(TypeError, match=r"Ldexp: the exponent must be an integer tensor .* got float32"):
        tl.ldexp(tl.tensor([1.0]), 2.0)
    with pytest.raises(TypeError, match=r"Gcd: needs integer inputs .* got float32"):
        tl.gcd(tl.tensor([4.0]), 2)
    with pytest.raises(TypeError, match=r"positive: needs a number, got a bool tensor"):
        tl.positive(tl.tensor([True]))
    with pytest.warns(RuntimeWarning, match=r"divide by zero encountered in fmod"):  # NumPy's 0 and warning
        assert tl.fmod(tl.tensor([3]), 0).numpy().tolist() == [0]
    with pytest.raises(ValueError, match=r"IsClose: .*\(2, 3\).*\(4,\)"):
        tl.allclose(tl.ones((2, 3)), tl.ones(4))


@pytest.mark.parametrize("mode", MODES)
def test_inverse_function_gradients_near_their_branch_points(mode):
    # 1 - x * x lost the last bits of x * x near |x| = 1: grad arctanh(0.99999999343) was 3e-9 off. With
    # x = 1 -+ d (d a power of two) the exact 1 - x**2 = 2d - d**2 is a float64 number.
    d = 2.0 ** -np.array([20.0, 30.0, 40.0, 45.0])
    below, above = 1.0 - d, 1.0 + d
    (g,) = _grads(mode, tl.arcsin, below)
    np.testing.assert_allclose(g, 1.0 / np.sqrt(2 * d - d * d), rtol=4e-16)
    (g,) = _grads(mode, tl.arccos, -below)
    np.testing.assert_allclose(g, -1.0 / np.sqrt(2 * d - d * d), rtol=4e-16)
    (g,) = _grads(mode, tl.arctanh, below)
    np.testing.assert_allclose(g, 1.0 / (2 * d - d * d), rtol=4e-16)
    (g,) = _grads(mode, tl.arccosh, above)
    np.testing.assert_allclose(g, 1.0 / np.sqrt(2 * d + d * d), rtol=4e-16)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "dtype, scale", [(np.float64, 1e200), (np.float64, 1e-200), (np.float32, 1e25), (np.float32, 1e-25)]
)
def test_arctan2_gradient_where_the_squared_radius_leaves_the_range(dtype, scale, mode):
    # x2 / (x1**2 + x2**2): the sum of squares overflowed (gradient 0) or underflowed (inf); at (3s, -4s)
    # the gradient is (-4, -3) / (25 s).
    x1, x2 = np.array([3.0 * scale], dtype), np.array([-4.0 * scale], dtype)
    g = tl.grad(lambda a, b: tl.sum(tl.arctan2(a, b)), argnums=(0, 1))
    g1, g2 = run_in_mode(mode, g, x1, x2)
    assert g1.dtype == dtype
    np.testing.assert_allclose(g1.numpy(), [-4.0 / 25.0 / scale], rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_allclose(g2.numpy(), [-3.0 / 25.0 / scale], rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("mode", MODES)
def test_clip_with_one_bound_and_np_clip_share_tl_clips_gradient(mode):
    # np.clip(t) was maximum then minimum, whose ties split: gradient 0.5 at a bound where tl.clip (and
    # torch.clamp) give 1; tl.clip refused a None bound that numpy.clip and torch.clamp take.
    x = np.array([0.0, 0.5, 1.0, 2.0, -1.0])
    for f, want in [
        (lambda t: np.clip(t, 0.0, 1.0), [1.0, 1.0, 1.0, 0.0, 0.0]),
        (lambda t: tl.clip(t, None, 1.0), [1.0, 1.0, 1.0, 0.0, 1.0]),
        (lambda t: np.clip(t, a_min=0.0, a_max=None), [1.0, 1.0, 1.0, 1.0, 0.0]),
        (lambda t: tl.clip(t, None, None), [1.0] * 5),
    ]:
        (g,) = _grads(mode, f, x)
        np.testing.assert_array_equal(g, want)
    assert_same(
        run_in_mode(mode, lambda t: tl.clip(t, None, 4), np.array([-5, 3, 9], np.int32)), np.array([-5, 3, 4], np.int32)
    )
    assert_same(run_in_mode(mode, lambda t: tl.clip(t, 0.5, None), x), np.clip(x, 0.5, None))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype, big", [(np.float64, 1e200), (np.float32, 1e30)])
def test_arcsinh_and_arccosh_gradients_at_large_x(dtype, big, mode):
    # sqrt(x*x + 1) and sqrt(x*x - 1) overflowed: the gradient 1/x came out 0.
    x = np.array([big, 3.0], dtype)
    (g,) = _grads(mode, tl.arcsinh, x)
    np.testing.assert_allclose(g, [1.0 / big, 1.0 / np.sqrt(10.0)], rtol=2e-7)
    (g,) = _grads(mode, tl.arccosh, x)
    np.testing.assert_allclose(g, [1.0 / big, 1.0 / np.sqrt(8.0)], rtol=2e-7)

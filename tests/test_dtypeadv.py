"""Adversarial dtype tests: binary ops over every pair of dtypes and Python scalars, comparisons with Python
ints past an integer dtype's range, shifts, float16 reductions and tl.special's polygamma.

References: NumPy 2's promotion and values (on the arrays as tensorlib holds them: int8, int16, uint8, uint16
in int32, uint32 in int64; DESIGN §6: float-valued functions of bools give float64, not NumPy's float16);
Python's exact integer comparisons; float64 NumPy/SciPy for the float16 reductions; scipy.special.
"""

import itertools
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import dtypes as _dt

DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32", "float64")
DTYPES += ("complex64", "complex128")
SCALARS = (True, 3, -2, 2.5, 1 + 1j)
_VALUES = {
    "b": ([True, False, True, False, True], [True, True, True, True, True]),
    "i": ([-3, 0, 2, 7, -1], [2, -2, 1, 3, -4]),
    "u": ([3, 0, 2, 7, 1], [2, 2, 1, 3, 4]),
    "f": ([-2.5, 0.0, 1.5, 3.0, -0.0], [2.0, -1.5, 0.5, 3.0, -2.0]),
    "c": ([1 + 2j, 0, -1.5 + 0.5j, 2, 1j], [1 - 1j, 2, 0.5j, 3, -1]),
}
BINARY = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "floor_divide",
    "remainder",
    "fmod",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "arctan2",
    "hypot",
    "logaddexp",
    "copysign",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
)


def _array(dtype, second=False):
    return np.array(_VALUES[np.dtype(dtype).kind][second], dtype=dtype)


def _held(value):
    """A NumPy operand as tensorlib holds it (int8 -> int32, uint32 -> int64); Python scalars unchanged."""
    return value.astype(_dt.of_array(value.dtype)) if isinstance(value, np.ndarray) else value


def _numpy(name, x, y):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return getattr(np, name)(_held(x), _held(y))
        except (TypeError, ValueError):  # NumPy refuses the pair (floats to bitwise, ints to negative powers)
            return None


def _expected_dtype(ref, x, y):
    d = _dt.of_array(np.asarray(ref).dtype)
    # DESIGN §6: float-valued functions of integers and bools are float64 (NumPy gives float16 for bools).
    if d == _dt.float16 and not any(getattr(v, "dtype", None) == _dt.float16 for v in (x, y)):
        return _dt.float64
    return d


def _pairs():
    for a, b in itertools.product(DTYPES, DTYPES):
        yield _array(a), _array(b, True)
    for a, s in itertools.product(DTYPES, SCALARS):
        yield _array(a), s
        yield s, _array(a, True)


@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_promote_and_compute_as_numpy_2_over_every_dtype_pair_and_python_scalar(name):
    failures = []
    for x, y in _pairs():
        ref = _numpy(name, x, y)
        if ref is None:
            continue
        tx = tl.tensor(x) if isinstance(x, np.ndarray) else x
        ty = tl.tensor(y) if isinstance(y, np.ndarray) else y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = getattr(tl, name)(tx, ty).numpy()
        expected = _expected_dtype(ref, x, y)
        label = f"{name}({getattr(x, 'dtype', repr(x))}, {getattr(y, 'dtype', repr(y))})"
        if got.dtype != expected:
            failures.append(f"{label}: dtype {got.dtype}, NumPy 2 gives {expected}")
        elif not np.allclose(got, np.asarray(ref).astype(expected), rtol=2e-3, atol=1e-6, equal_nan=True):
            failures.append(f"{label}: {got.tolist()}, NumPy gives {np.asarray(ref).tolist()}")
    assert not failures, "\n".join(failures[:20])


# ---------------------------------------------------------------- weak Python floats next to integers
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_a_python_float_next_to_integers_computes_in_float64_as_numpy_2(mode):
    # float32 rounded 2**24 + 1 to 2**24: int64 * 1.0 changed the value and int64 == 16777216.0 was True.
    big = np.array([2**24 + 1, -(2**40) - 3, 7])
    scale = tl.function(lambda x, s: x * s) if mode == "traced" else (lambda x, s: x * s)
    same = tl.function(lambda x, s: x == s) if mode == "traced" else (lambda x, s: x == s)
    product = scale(tl.tensor(big), 1.0)
    assert product.dtype == (big * 1.0).dtype == np.float64
    np.testing.assert_array_equal(product.numpy(), big * 1.0)
    np.testing.assert_array_equal(same(tl.tensor(big), 16777216.0).numpy(), big == 16777216.0)
    assert (tl.tensor([True]) + 0.5).dtype == np.float64 and (tl.tensor([3]) * 1j).dtype == np.complex128
    assert (tl.tensor(np.ones(2, np.float32)) * 1j).dtype == np.complex64  # a float tensor's width is kept


# ---------------------------------------------------------------- comparisons with Python ints past the dtype
_INT_DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "uint32")
_PAST = (2**64, 2**63, 2**63 - 1, 2**40, 2**31, 70000, 300, -1, -300, -(2**31) - 1, -(2**63), -(2**63) - 1, -(2**70))
_COMPARISONS = {
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
    "equal": lambda a, b: a == b,
    "not_equal": lambda a, b: a != b,
}


@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_comparisons_with_python_ints_outside_the_dtype_are_exact(dtype):
    # Int64 < 2**63 raised OverflowError (NumPy 2 answers True); int32 == 2**40 too.  Reference: Python's ints.
    info = np.iinfo(_dt.of_array(dtype) if dtype != "bool" else "int8")
    values = np.array([info.min, -1, 0, 1, info.max]).astype(dtype)
    t = tl.tensor(values)
    plain = [int(v) for v in values]
    for v, (name, python) in itertools.product(_PAST, _COMPARISONS.items()):
        expected = [python(a, v) for a in plain]
        reflected = [python(v, a) for a in plain]
        assert getattr(tl, name)(t, v).numpy().tolist() == expected, (name, dtype, v)
        assert getattr(tl, name)(v, t).numpy().tolist() == reflected, (name, dtype, v)
        assert python(t, v).numpy().tolist() == expected, (name, dtype, v)
        assert python(v, t).numpy().tolist() == reflected, (name, dtype, v)
    assert 2**63 not in t and tl.function(lambda x: x < 2**64)(t).numpy().all()


def test_arithmetic_with_a_python_int_outside_the_dtype_still_raises():
    with pytest.raises(OverflowError, match=r"Add: input 'y' 1099511627776 does not fit in int32"):
        tl.tensor(np.ones(2, np.int32)) + 2**40
    with pytest.raises(TypeError, match=r"Less: input 'x' has unsupported dtype uint64"):
        tl.less(np.ones(2, np.uint64), 2**40)


# ---------------------------------------------------------------- shifts
def _shift_operands():
    x = np.array([0, 1, -3, 127, -128, 5, 1, -1, 5, -5, 5, -5])
    n = np.array([0, 1, 2, 7, 8, 31, 63, 64, -1, -1, -70, 200])
    for a, b in itertools.product(_INT_DTYPES, _INT_DTYPES):
        xa = (x % 2 == 1) if a == "bool" else x.astype(a)
        nb = (n % 2 == 1) if b == "bool" else np.abs(n).astype(b) if b[0] == "u" else n.astype(b)
        yield xa, nb


@pytest.mark.parametrize("name, operator", [("left_shift", lambda a, b: a << b), ("right_shift", lambda a, b: a >> b)])
def test_shifts_match_numpy_for_every_integer_pair_and_counts_past_the_width(name, operator):
    # `t << 1` was a TypeError and tl had no left_shift/right_shift.  NumPy: a count past the width or
    # negative gives 0 (and -1 for a negative x shifted right).
    for x, n in _shift_operands():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(np, name)(_held(x), _held(n))
        ref = ref.astype(_dt.of_array(ref.dtype))
        for got in (getattr(tl, name)(x, n), operator(tl.tensor(x), n), operator(x, tl.tensor(n))):
            assert got.dtype == ref.dtype, (x.dtype, n.dtype)
            np.testing.assert_array_equal(got.numpy(), ref, err_msg=f"{name}({x.dtype}, {n.dtype})")
    with pytest.raises(TypeError, match=r"needs integer or bool inputs .* got float32"):
        operator(tl.tensor([1.0]), 1)


def test_shifts_on_the_array_api_backend_follow_numpy_past_the_width():
    # The generic kernel: C and the Array API leave these counts undefined.
    pytest.importorskip("array_api_strict")
    x, n = np.array([5, -5, 5, -5, 3, -3]), np.array([-1, -1, 64, 64, 2, 2])
    for name in ("left_shift", "right_shift"):
        got = getattr(tl, name)(tl.tensor(x, backend="array_api_strict"), tl.tensor(n, backend="array_api_strict"))
        np.testing.assert_array_equal(got.numpy(), getattr(np, name)(x, n), err_msg=name)


# ---------------------------------------------------------------- float16 reductions accumulate in float32
_SPREAD = np.array([300.0, -300.0] * 50 + [np.nan], np.float16)
_BIG = np.array([60000.0, 60000.0, 1.0, 60000.0], np.float16)
_FLOAT16_REDUCTIONS = [
    # (name, tensorlib, float64 reference): the answer is representable in float16; in float16 it was inf.
    ("std", lambda x: tl.std(x[:-1]), lambda a: np.std(a[:-1])),
    (
        "std ddof=1 axis",
        lambda x: tl.std(tl.reshape(x[:-1], (10, 10)), axis=1, ddof=1),
        lambda a: np.std(a[:-1].reshape(10, 10), axis=1, ddof=1),
    ),
    ("nanstd", tl.nanstd, np.nanstd),
    ("median", lambda x: tl.median(x[:-1]), lambda a: np.median(a[:-1])),
    ("median of big", lambda _: tl.median(_BIG), lambda _: np.median(_BIG.astype(np.float64))),
    (
        "nanmedian",
        lambda _: tl.nanmedian(np.append(_BIG, np.float16(np.nan))),
        lambda _: np.median(_BIG.astype(np.float64)),
    ),
    ("quantile", lambda _: tl.quantile(_BIG, 0.3), lambda _: np.quantile(_BIG.astype(np.float64), 0.3)),
    (
        "average",
        lambda _: tl.average(_BIG, weights=_BIG),
        lambda _: np.average(_BIG.astype(np.float64), weights=_BIG.astype(np.float64)),
    ),
    ("norm", lambda _: tl.linalg.norm(np.full(4096, 10, np.float16)), lambda _: 640.0),
    ("vector_norm ord=3", lambda _: tl.linalg.vector_norm(np.full(4096, 10, np.float16), ord=3), lambda _: 160.0),
    ("matrix fro", lambda _: tl.linalg.norm(np.full((64, 64), 10, np.float16), "fro"), lambda _: 640.0),
    ("matrix ord=2", lambda _: tl.linalg.matrix_norm(np.full((64, 64), 10, np.float16), ord=2), lambda _: 640.0),
    (
        "logsumexp",
        lambda _: tl.logsumexp(np.full(4096, 0.1, np.float16)),
        lambda _: np.log(4096) + np.float16(0.1).astype(np.float64),
    ),
]


@pytest.mark.parametrize("name, function, reference", _FLOAT16_REDUCTIONS, ids=[r[0] for r in _FLOAT16_REDUCTIONS])
def test_float16_reductions_accumulate_in_float32_and_round_once(name, function, reference):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = function(tl.tensor(_SPREAD))
        expected = np.asarray(reference(_SPREAD.astype(np.float64)))
    assert got.dtype == np.float16, name
    # Rounded once from float64: exactly the nearest float16 (average's quotient: within its rounding).
    np.testing.assert_allclose(got.numpy().astype(np.float64), expected.astype(np.float16), rtol=1e-3, err_msg=name)


def test_float16_std_gradient_is_the_float32_one_rounded():
    x = np.array([300.0, -300.0, 250.0, -310.0], np.float16)  # variance 84425: past float16
    g = tl.grad(lambda t: tl.std(t))(tl.tensor(x))
    centered = x.astype(np.float64) - x.astype(np.float64).mean()
    expected = centered / (len(x) * np.std(x.astype(np.float64)))  # d std / dx_i = (x_i - mean) / (n std)
    assert g.dtype == np.float16
    np.testing.assert_allclose(g.numpy().astype(np.float64), expected, rtol=2e-3)


# ---------------------------------------------------------------- tl.special.polygamma's order
@pytest.mark.parametrize("order", [2, np.int64(2), "tensor0d", "array", "tensor"])
def test_polygamma_takes_the_order_as_an_int_or_an_integer_array_or_tensor(order):
    # A 0-d int64 tensor (and any array) was "the order n must be a non-negative int"; SciPy and JAX take
    # integer arrays broadcasting against x.  Reference: scipy.special.polygamma, its gradient polygamma(n + 1).
    special = pytest.importorskip("scipy.special")
    n = {"tensor0d": tl.tensor(2), "array": np.array([[0], [1], [3]]), "tensor": tl.tensor([[0], [1], [3]])}
    n = n.get(order, order)
    plain = np.asarray(n.numpy() if isinstance(n, tl.Tensor) else n)
    x = np.array([0.5, 2.0, 7.5])
    out = tl.special.polygamma(n, tl.tensor(x, dtype="float64"))
    assert out.shape == np.broadcast_shapes(plain.shape, x.shape)
    np.testing.assert_allclose(out.numpy(), special.polygamma(plain, x), rtol=1e-12)

    def per_x(t):  # the orders' rows summed: each element of x feeds its own column only
        value = tl.special.polygamma(n, t)
        return tl.sum(value, axis=0) if plain.ndim else value

    g = tl.grad(lambda t: tl.sum(per_x(t)))(tl.tensor(x, dtype="float64"))
    np.testing.assert_allclose(
        g.numpy(),
        np.sum(special.polygamma(plain + 1, x), axis=0) if plain.ndim else special.polygamma(plain + 1, x),
        rtol=1e-10,
    )
    # Without SciPy's polygamma: the gradient is the derivative, by float64 central differences.
    step = 1e-6
    up, down = (per_x(tl.tensor(x + d, dtype="float64")).numpy() for d in (step, -step))
    np.testing.assert_allclose(g.numpy(), (up - down) / (2 * step), rtol=1e-5)


def test_polygamma_refuses_orders_that_are_not_non_negative_integers():
    # A bool order is SciPy's 0 or 1, not refused (tests/test_smallfix.py).
    for n in (-1, 1.5, np.array([1, -2]), tl.tensor([1.5]), -1.0, float("nan")):
        with pytest.raises(ValueError, match="Polygamma: the order n must be a non-negative integer"):
            tl.special.polygamma(n, tl.tensor(1.0))
    # Traced orders are an input of PolygammaOfOrders (tests/test_vmapadv2.py checks their values); a negative
    # one still raises, when the graph runs.
    with pytest.raises(ValueError, match="PolygammaOfOrders: the order n must be a non-negative integer, got -1"):
        tl.function(lambda n, x: tl.special.polygamma(n, x))(tl.tensor([0, -1]), tl.tensor([1.0, 1.0]))


# ---------------------------------------------------------------- NumPy's dtype= on sum, prod, mean, var, std and the nan forms
_INT32_EDGE = np.array([[2**31 - 1, 5], [1, -7]], np.int32)
_WITH_NAN = np.array([[0.1, 1.5], [2.5, np.nan]], np.float32)
_DTYPE_CASES = [
    ("sum", _INT32_EDGE, {"dtype": np.int32}),  # wraps around in int32, as NumPy's
    ("sum", _INT32_EDGE, {"dtype": "float32", "axis": 0}),
    ("sum", np.array([True, True, False]), {"dtype": bool}),
    ("sum", np.array([1.5, -2.5, 3.7]), {"dtype": np.int64}),  # each element truncated first
    ("prod", _INT32_EDGE, {"dtype": np.int32, "axis": 1}),
    ("mean", _WITH_NAN, {"dtype": np.float64, "axis": 1, "keepdims": True}),
    ("mean", _INT32_EDGE, {"dtype": np.float32}),
    ("nansum", _WITH_NAN, {"dtype": np.float64}),
    ("nanprod", _WITH_NAN, {"dtype": np.float64, "axis": 0}),
    ("nanmean", _WITH_NAN, {"dtype": np.float64, "axis": 0}),
    ("var", _INT32_EDGE, {"dtype": np.float32, "ddof": 1}),
    ("std", _WITH_NAN[:1], {"dtype": np.float64, "axis": 1}),
    ("nanvar", _WITH_NAN, {"dtype": np.float64}),
    ("nanstd", _WITH_NAN, {"dtype": np.float64, "axis": 1}),
]


@pytest.mark.parametrize("name, values, options", _DTYPE_CASES)
def test_reductions_take_numpys_dtype_argument(name, values, options):
    # np.sum(t, dtype=np.float64) raised "argument dtype=... is not supported on tensorlib Tensors".
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(values, **options)
        for got in (getattr(tl, name)(tl.tensor(values), **options), getattr(np, name)(tl.tensor(values), **options)):
            assert isinstance(got, tl.Tensor) and got.dtype == expected.dtype, (name, options)
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, err_msg=f"{name} {options}")


def test_a_float64_accumulator_keeps_the_float32_gradient():
    x = tl.tensor([1.0, 2.0])
    value, g = tl.value_and_grad(lambda t: tl.sum(t * t, dtype="float64"))(x)
    assert value.dtype == np.float64 and g.dtype == np.float32 and g.numpy().tolist() == [2.0, 4.0]


# ---------------------------------------------------------------- Python conversions of 0-d tensors
def test_float_and_int_of_a_complex_tensor_raise_as_numpy_0d_arrays_do():
    # float(tl.tensor(1 + 1j)) was 1.0 with a ComplexWarning (the imaginary part dropped); NumPy's 0-d
    # array (and JAX's, PyTorch's tensor) refuse.
    for convert in (float, int):
        with pytest.raises(TypeError):
            convert(np.asarray(1 + 1j))
        with pytest.raises(
            TypeError, match=rf"{convert.__name__}\(\) of a complex tensor \(shape \(\), dtype complex64"
        ):
            convert(tl.tensor(1 + 1j))
    assert complex(tl.tensor(1 + 2j)) == 1 + 2j and float(tl.tensor(2.5)) == 2.5 and int(tl.tensor(-2.7)) == -2


# ---------------------------------------------------------------- integer division by zero
@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name, op", [("floor_divide", "FloorDiv"), ("remainder", "FloorMod"), ("fmod", "Fmod")])
def test_integer_division_by_zero_is_numpys_zero_with_its_warning(traced, name, op):
    # NumPy's names give NumPy's values (0, and NumPy's RuntimeWarning), in eager and traced modes alike.
    run = getattr(tl, name)
    run = tl.function(run) if traced else run
    with pytest.warns(RuntimeWarning, match=f"divide by zero encountered in {name}"):
        got = run(tl.tensor(np.array([5, -5], np.int32)), tl.tensor(np.int32(0)))
    assert got.dtype == np.int32 and got.numpy().tolist() == [0, 0]


# ---------------------------------------------------------------- NumPy's where= and initial= on sum, prod, max, min
_A = np.array([[3.0, -1.0, 2.0], [0.5, 7.0, -4.0]])
_AI = np.array([[3, 1, 2], [5, 0, 2]], np.int32)
_M = np.array([True, False, True])
_MASKED_CASES = [
    ("sum", _A, {"where": _M}),
    ("sum", _A, {"initial": 10.0, "axis": 1}),
    ("sum", _AI, {"initial": 0.5}),  # initial takes the result's dtype (int64): adds 0, as NumPy
    ("sum", _AI, {"where": _M, "axis": 0, "keepdims": True}),
    ("sum", _A, {"where": np.array([[True], [False]]), "dtype": np.float32, "initial": 1.0}),
    ("prod", _AI, {"where": _M, "axis": 1}),
    ("prod", _A, {"initial": 2.0}),
    ("max", _A, {"initial": 4.0, "axis": 1}),
    ("max", _A, {"where": _M, "initial": -9.0, "axis": 1}),
    ("max", _A, {"where": np.zeros(3, bool), "initial": -1.0}),
    ("min", _AI, {"where": _M, "initial": 9}),
    ("max", _AI, {"initial": 5.5}),
    ("max", np.zeros((0, 3)), {"axis": 0, "initial": -1.0}),  # an empty slice's maximum is initial
    ("min", np.zeros((2, 0)), {"axis": 1, "initial": 5.0, "keepdims": True}),
]


@pytest.mark.parametrize("name, values, options", _MASKED_CASES)
def test_reductions_take_numpys_where_and_initial(name, values, options):
    # np.sum(t, where=m), np.max(t, initial=v) and np.add.reduce(t, initial=v) raised "not supported".
    expected = getattr(np, name)(values, **options)
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[name]
    reduce_options = {"axis": None, **options}  # ufunc.reduce's axis defaults to 0, the functions' to None
    for got in (
        getattr(tl, name)(tl.tensor(values), **options),
        getattr(np, name)(tl.tensor(values), **options),
        ufunc.reduce(tl.tensor(values), **reduce_options),
    ):
        assert isinstance(got, tl.Tensor) and got.dtype == np.asarray(expected).dtype, (name, options)
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=f"{name} {options}")


def test_masked_reductions_differentiate_the_kept_elements_only():
    x = tl.tensor(_A)
    g = tl.grad(lambda t: tl.sum(tl.max(t, axis=1, where=_M, initial=-9.0)))(x)
    np.testing.assert_array_equal(g.numpy(), [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])  # 3 and 2 of the kept columns
    g = tl.grad(lambda t: tl.prod(t, where=_M))(x)
    kept = np.where(_M, _A, 1.0)
    np.testing.assert_allclose(g.numpy(), np.where(_M, kept.prod() / kept, 0.0))
    with pytest.raises(ValueError, match=r"max: a where mask needs initial .* \(x shape \(2, 3\), float64\)"):
        tl.max(x, where=_M)


# ---------------------------------------------------------------- logsumexp's return_sign (SciPy's)
_SIGNED_CASES = [
    (np.array([1.0, 2.0]), np.array([1.0, -1.0]), {}),
    (np.array([1.0, 1.0]), np.array([1.0, -1.0]), {}),  # a zero sum: -inf, sign 0
    (np.array([1000.0, 999.0]), np.array([-1.0, 2.0]), {}),  # no overflow
    (np.array([[1.0, 5.0], [2.0, -1.0]]), np.array([[2.0, -0.5], [1.0, 1.0]]), {"axis": 0}),
    (np.array([[1.0, 2.0], [0.0, 0.0]]), np.array([1.0, -1.0]), {"axis": 1, "keepdims": True}),
    (np.array([3.0, np.inf]), np.array([1.0, 0.0]), {}),  # a zero weight drops its term
    (np.array([1 + 1j, 2.0]), None, {}),  # complex: sign exp(i arg(sum))
]


@pytest.mark.parametrize("x, b, options", _SIGNED_CASES)
def test_logsumexp_return_sign_matches_the_signed_sum(x, b, options):
    # tl.logsumexp had no return_sign: a negative weight's sum gave nan (SciPy's value without it).
    out, sign = tl.logsumexp(tl.tensor(x), b=None if b is None else tl.tensor(b), return_sign=True, **options)
    with np.errstate(all="ignore"):  # float64 NumPy, shifted by the largest kept x
        weights = np.broadcast_to(1.0 if b is None else b, x.shape)
        axis, keepdims = options.get("axis"), options.get("keepdims", False)
        top = np.max(np.where(weights == 0, -np.inf, x.real), axis=axis, keepdims=True)
        total = np.sum(np.where(weights == 0, 0, weights * np.exp(x - top)), axis=axis, keepdims=True)
        log, unit = np.log(np.abs(total)) + top, np.where(total == 0, 0, total / np.abs(total))
    if not keepdims:
        log, unit = np.squeeze(log, axis), np.squeeze(unit, axis)
    np.testing.assert_allclose(out.numpy(), log, rtol=1e-12)
    np.testing.assert_allclose(sign.numpy(), unit, rtol=1e-12)
    special = pytest.importorskip("scipy.special")
    expected = special.logsumexp(x, b=b, return_sign=True, **options)
    for got, want in zip((out, sign), expected):
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_logsumexp_return_sign_gradient_is_the_signed_softmax():
    x, b = np.array([1.0, 2.0, 0.5]), np.array([1.0, -1.0, 3.0])
    g = tl.grad(lambda t: tl.logsumexp(t, b=tl.tensor(b), return_sign=True)[0])(tl.tensor(x))
    np.testing.assert_allclose(g.numpy(), b * np.exp(x) / np.sum(b * np.exp(x)), rtol=1e-12)

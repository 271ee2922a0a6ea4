"""Contracts (DESIGN §6) over the functions added in the last sessions, and NumPy leftovers.

References are NumPy / SciPy (and closed forms); nothing expected here came from tensorlib itself.
"""

import numpy as np
import pytest

import tensorlib as tl

# ---------------------------------------------------------------- NumPy leftovers


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_argsort_of_a_0d_tensor_is_numpys(axis):
    ref = np.argsort(np.array(3.0), axis=axis)  # array([0]): NumPy sorts a 0-d input as its flattened one
    out = tl.argsort(tl.tensor(3.0), axis=axis)
    assert out.dtype == ref.dtype and out.numpy().tolist() == ref.tolist() and out.shape == ref.shape
    traced = tl.function(lambda x: tl.argsort(x, axis=axis))(np.array(2.0))
    assert traced.numpy().tolist() == ref.tolist()


@pytest.mark.parametrize("axis", [1, -2])
def test_argsort_of_a_0d_tensor_refuses_other_axes(axis):
    with pytest.raises(np.exceptions.AxisError):
        np.argsort(np.array(3.0), axis=axis)
    with pytest.raises(np.exceptions.AxisError, match="argsort"):
        tl.argsort(tl.tensor(3.0), axis=axis)


@pytest.mark.parametrize(
    "arr,mask,values,axis",
    [
        (np.arange(5.0), [True, False, True, False, True], [7.0, 8.0, 9.0], None),
        (np.arange(5.0), [True, False], 9.0, None),  # NumPy does not check the mask's length
        (np.arange(5.0), [False, True, False, False, False], [1.0, 2.0], None),
        (np.arange(6.0).reshape(2, 3), [True, False], 9.0, 0),
        (np.arange(6.0).reshape(2, 3), [False, False], 9.0, 0),
        (np.arange(6.0).reshape(2, 3), [False, True, True], [1.0, 2.0], 1),
    ],
)
def test_insert_with_a_boolean_mask_is_numpy_2s(arr, mask, values, axis):
    mask = np.array(mask)
    ref = np.insert(arr, mask, values, axis=axis)
    for obj in (mask, tl.tensor(mask)):
        out = tl.insert(tl.tensor(arr), obj, values, axis=axis)
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("obj", [np.array(True), np.ones((1, 2), bool)])
def test_insert_with_a_boolean_mask_not_1d_is_a_value_error_as_numpys(obj):
    with pytest.raises(ValueError, match="one dimensional"):
        np.insert(np.arange(5.0), obj, 1.0)
    with pytest.raises(ValueError, match=r"insert: boolean array argument obj must be one dimensional"):
        tl.insert(tl.tensor(np.arange(5.0)), obj, 1.0)


def _polynomials():
    rng = np.random.default_rng(1)
    out = [[1.0, -3.0, 2.0, 0.0, 0.0], [0.0, 1.0, -6.0, 11.0, -6.0, 0.0], [1.0, 5.0, 0.0, 3.0, 0.0, 0.0, 0.0]]
    for _ in range(40):
        p = rng.standard_normal(rng.integers(2, 8))
        out.append(np.concatenate([p, np.zeros(rng.integers(0, 3))]))
    return out


def test_roots_come_in_numpys_order():
    for p in _polynomials():
        for dtype, tol in ((np.float64, 1e-9), (np.float32, 1e-4)):
            q = np.asarray(p, dtype)
            ref = np.roots(q)
            out = tl.roots(tl.tensor(q)).numpy()
            assert out.shape == ref.shape, p
            np.testing.assert_allclose(out, ref, atol=tol, rtol=tol, err_msg=str(p))


def test_roots_with_a_trailing_zero_keep_their_gradient_in_numpys_order():
    # p = x^3 - 3x^2 + 2x (+ 0): roots 2, 1, 0 (np.roots' order); d r / d p_j = -r^(3-j) / p'(r).
    p = np.array([1.0, -3.0, 2.0, 0.0])
    r = np.roots(p).real
    dp = np.polyval(np.polyder(p), r)
    ref = -(r[:, None] ** np.arange(3, -1, -1)[None, :]) / dp[:, None]
    jac = tl.jacobian(lambda q: tl.real(tl.roots(q)))(tl.tensor(p)).numpy()
    np.testing.assert_allclose(jac, ref, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- int/bool inputs of float-valued functions

_BIG = 2**24 + 1  # not a float32: a float32 intermediate rounds it to 2**24

INT_TO_FLOAT64 = [
    ("log1mexp", tl.nn.log1mexp, lambda a: np.log(-np.expm1(-a)), [1, 2, 3, _BIG]),
    (
        "sparse_plus",
        tl.nn.sparse_plus,
        lambda a: np.where(a <= -1, 0.0, np.where(a >= 1, a, (a + 1) ** 2 / 4)),
        [-2, 0, 1, _BIG],
    ),
    ("sparse_sigmoid", tl.nn.sparse_sigmoid, lambda a: 0.5 * np.clip(a + 1, 0, 2), [-2, 0, 1, _BIG]),
    ("squareplus", lambda x: tl.nn.squareplus(x, 0.0), lambda a: (a + np.sqrt(a * a)) / 2, [0, 1, 3, _BIG]),
    ("logmeanexp", tl.nn.logmeanexp, lambda a: a.max() + np.log(np.mean(np.exp(a - a.max()))), [1, 2, 3, _BIG]),
    ("standardize", tl.nn.standardize, lambda a: (a - a.mean()) / np.sqrt(a.var() + 1e-5), [1, 2, 3, _BIG]),
]


@pytest.mark.parametrize("name,fn,ref,values", INT_TO_FLOAT64, ids=[c[0] for c in INT_TO_FLOAT64])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_nn_functions_of_integers_and_bools_are_float64_and_not_rounded(name, fn, ref, values, dtype):
    data = np.array(values, np.int64).astype(dtype)
    if dtype is np.bool_ and name == "log1mexp":
        data = np.array([True, True])
    expected = ref(data.astype(np.float64))
    for out in (fn(data), tl.function(fn)(data)):
        assert out.dtype == np.float64, (name, dtype, out.dtype)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------- eager vs traced: linear_transpose


def test_linear_transpose_applied_to_a_traced_cotangent_is_eagers():
    # Its shape/dtype check read the cotangent's value (np.asarray, a getattr default evaluated first), which a
    # traced tensor does not have: a TypeError under tl.function.
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = np.array([1.0, -2.0, 0.5])
    f_t = tl.linear_transpose(lambda x: a @ x, tl.TensorSpec((2,), "float64"))
    np.testing.assert_allclose(f_t(c)[0].numpy(), a.T @ c, rtol=1e-15)
    np.testing.assert_allclose(tl.function(lambda v: f_t(v)[0])(c).numpy(), a.T @ c, rtol=1e-15)
    traced_inside = tl.function(lambda x, v: tl.linear_transpose(lambda u: a @ u, x)(v)[0])
    np.testing.assert_allclose(traced_inside(np.zeros(2), c).numpy(), a.T @ c, rtol=1e-15)
    with pytest.raises(TypeError, match=r"expected \(float64\[3\]\), got \(float64\[2\]\)"):
        f_t(np.zeros(2))


# ---------------------------------------------------------------- Python ints outside the dtype name the argument


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: tl.full_like(np.arange(4, dtype=np.int32), 2**40), r"full_like .*value 1099511627776 does not fit"),
        (lambda: tl.full_like(np.arange(3), 2**64), r"full_like .*value 18446744073709551616 does not fit in int64"),
        (lambda: tl.full_like(np.arange(3), -(2**63) - 1), r"full_like .*value -9223372036854775809 does not fit"),
        (
            lambda: tl.function(lambda a: tl.full_like(a, 2**64))(np.arange(3)),
            r"full_like .*value 18446744073709551616 does not fit in int64",
        ),
        (
            lambda: tl.unique(np.arange(4, dtype=np.int32), size=6, fill_value=2**40),
            r"unique .*fill_value 1099511627776 does not fit in int32",
        ),
        (
            lambda: tl.unique(np.arange(6).reshape(2, 3), size=3, fill_value=2**64, axis=0),
            r"unique .*fill_value 18446744073709551616 does not fit in int64",
        ),
    ],
)
def test_a_python_int_fill_outside_the_dtype_is_an_overflow_error_naming_it(make, match):
    with pytest.raises(OverflowError, match=match):
        make()


def test_fills_that_fit_are_kept_exactly():
    np.testing.assert_array_equal(
        tl.full_like(np.arange(2, dtype=np.int32), 2**40, dtype="int64").numpy(), np.full(2, 2**40)
    )
    np.testing.assert_array_equal(tl.unique(np.arange(4), size=6, fill_value=2**62).numpy(), [0, 1, 2, 3, 2**62, 2**62])

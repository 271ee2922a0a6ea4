"""Cumulative ops (and the rounding of integers) probed as an adversary: each test pins a defect that was fixed, against an independent
reference (NumPy, exact products of Python floats, PyTorch where installed), eagerly and traced."""

import math

import numpy as np
import pytest
from _helpers import MODES, assert_same, run_in_mode

import tensorlib as tl


def _others(x, k, j, also=None):
    """The running product to j with entries k (and ``also``) left out, exactly (small integers)."""
    return math.prod(x[i] for i in range(j + 1) if i not in (k, also))


def _cumprod_vjp(x, g):
    return [sum(g[j] * _others(x, k, j) for j in range(k, len(x))) for k in range(len(x))]


def _cumprod_hvp(x, g, v):
    """d/dx_m of sum_k v_k * (the cumprod vjp of g)_k."""
    n = len(x)
    return [
        sum(v[k] * g[j] * _others(x, k, j, also=m) for k in range(n) if k != m for j in range(max(k, m), n))
        for m in range(n)
    ]


# ------------------------------------------------------------------ cumprod multiplies in order
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "x",
    [
        np.array([1e-30, 1e30, 1e30], np.float32),  # the scan's pairwise products overflowed: [.., inf]
        np.array([1e-300, 1e300, 1e300]),
        np.array([[1e-200, 3.0], [1e200, 0.5], [1e200, np.inf]]),
        np.array([1e-20 + 1j, 1e20 - 2j, 1e20 + 0j], np.complex64),
    ],
)
def test_cumprod_is_numpys_running_product(x, mode):
    assert_same(run_in_mode(mode, lambda t: tl.cumprod(t, axis=0), x), np.cumprod(x, axis=0))


@pytest.mark.parametrize("mode", MODES)
def test_prod_gradient_does_not_overflow_where_the_others_product_does_not(mode):
    x = np.array([1e-200, 1e200, 1e200, 1.0])
    got = run_in_mode(mode, tl.grad(tl.prod), x).numpy()
    np.testing.assert_array_equal(got[1:], [1.0, 1.0, 1e200])  # the last entry was inf
    assert got[0] == np.inf  # 1e400: the exact product of the others overflows


@pytest.mark.parametrize(
    "x, expected",
    [
        ([2.0, np.inf], [np.inf, 2.0]),  # P / x_j, the rule for unknown shapes, gave [inf, nan]
        ([1e200, 1e200, 1e-200], [1.0, 1.0, np.inf]),
        ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
    ],
)
def test_prod_gradient_with_unknown_dimensions_is_the_product_of_the_others(x, expected):
    f = tl.function(tl.grad(tl.prod), input_signature=[tl.TensorSpec((None,), "float64")])
    np.testing.assert_array_equal(f(np.array(x)).numpy(), expected)


# ------------------------------------------------------------------ cumprod gradient at zeros
CUMPROD_POINTS = [
    [2.0, 3.0, -1.0, 4.0],
    [2.0, 0.0, 3.0, 5.0],
    [0.0, 2.0, 0.0, 3.0, 4.0],  # two zeros: the second one's row of the hessian is not 0
    [3.0, 0.0, 0.0, 0.0, 2.0],
    [0.0],
    [-2.0],
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x", CUMPROD_POINTS)
def test_cumprod_gradient_and_hessian_are_exact_at_zeros(x, mode):
    g = [1.0, -2.0, 3.0, 0.5, 2.0][: len(x)]
    v = [0.5, 1.0, -1.0, 2.0, -3.0][: len(x)]

    def vjp(t):
        return tl.vjp(tl.cumprod, t)[1](tl.tensor(np.array(g)))[0]

    got = run_in_mode(mode, vjp, np.array(x)).numpy()
    np.testing.assert_allclose(got, _cumprod_vjp(x, g), rtol=1e-14)
    hvp = run_in_mode(mode, tl.grad(lambda t: tl.sum(vjp(t) * tl.tensor(np.array(v)))), np.array(x)).numpy()
    np.testing.assert_allclose(hvp, _cumprod_hvp(x, g, v), rtol=1e-14, atol=1e-14)


def test_cumprod_hessian_matches_torch_along_an_axis():
    torch = pytest.importorskip("torch")
    x = np.array([[0.0, 2.0, 0.0, 3.0], [1.5, -2.0, 0.5, 4.0], [2.0, 0.0, 0.0, 1.0]])
    g, v = np.arange(12.0).reshape(3, 4) - 5, np.linspace(-1, 1, 12).reshape(3, 4)
    tx = torch.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.cumprod(tx, 1), tx, torch.tensor(g), create_graph=True)
    (th,) = torch.autograd.grad(tg, tx, torch.tensor(v))

    def vjp(t):
        return tl.vjp(lambda u: tl.cumprod(u, axis=1), t)[1](tl.tensor(g))[0]

    np.testing.assert_allclose(vjp(tl.tensor(x)).numpy(), tg.detach().numpy(), rtol=1e-14)
    hvp = tl.grad(lambda t: tl.sum(vjp(t) * tl.tensor(v)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(hvp, th.numpy(), rtol=1e-14, atol=1e-14)


def test_cumprod_gradient_of_a_single_infinite_entry_is_the_output_gradient():
    # g * y / x gave inf / inf = NaN; y is x itself (PyTorch: g).
    got = tl.grad(lambda t: tl.sum(tl.cumprod(t, axis=1) * 3.0))(tl.tensor(np.array([[np.inf], [2.0]]))).numpy()
    np.testing.assert_array_equal(got, [[3.0], [3.0]])


# ------------------------------------------------------------------ round of integers is exact
def _round_half_even(v, k):
    q, r = divmod(v, 10**k)
    return (q + (2 * r > 10**k or (2 * r == 10**k and q % 2 == 1))) * 10**k


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("k", [1, 2, 3, 17, 18, 19, 25])
def test_round_of_int64_to_tens_is_exact(k, mode):
    # Divided in float64: 2**60 + 12345 to -2 places gave 1152921504606859264, no multiple of 100.
    values = [2**60 + 12345, 2**53 + 1, -(2**62) - 5 * 10**17, 125, 135, -125, -135, 150, 0, 2**63 - 1, -(2**63)]
    values += [5 * 10**18, -5 * 10**18, 6 * 10**18, -6 * 10**18]  # ties and halves at the largest scale
    want = [(_round_half_even(v, k) + 2**63) % 2**64 - 2**63 for v in values]  # int64 arithmetic wraps around
    assert_same(run_in_mode(mode, lambda t: tl.round(t, -k), np.array(values)), np.array(want))


@pytest.mark.parametrize("k", [1, 4, 9, 10])
def test_round_of_int32_to_tens_is_exact_and_stays_int32(k):
    values = np.array([2**31 - 5 * 10**8, -(2**30), 12345, -12355, 25, -25, 0], np.int32)
    want = np.array([_round_half_even(int(v), k) for v in values], np.int32)
    assert_same(tl.round(tl.tensor(values), -k), want)


# ------------------------------------------------------------------ cummax / cummin
@pytest.mark.parametrize("mode", MODES)
def test_cummax_gradient_goes_to_the_last_tied_position_and_nan_propagates(mode):
    x = np.array([1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan])  # torch.cummax indices: [0, 1, 2, 2, 4, 4, 6]
    assert_same(run_in_mode(mode, tl.cummax, x), np.maximum.accumulate(x))
    got = run_in_mode(mode, tl.grad(lambda t: tl.sum(tl.cummax(t) * tl.tensor(np.arange(1.0, 8.0)))), x)
    np.testing.assert_array_equal(got.numpy(), [1.0, 2.0, 7.0, 0.0, 11.0, 0.0, 7.0])


def test_cummin_matches_torch_values_and_gradient():
    torch = pytest.importorskip("torch")
    x = np.array([[2.0, 1.0, 1.0, 3.0, 0.0, -0.0], [4.0, 4.0, -np.inf, 7.0, np.nan, -1.0]])
    g = np.arange(12.0).reshape(2, 6)
    tx = torch.tensor(x, requires_grad=True)
    values = torch.cummin(tx, 1).values
    (tg,) = torch.autograd.grad(values, tx, torch.tensor(g))
    got = tl.cummin(tl.tensor(x), axis=1)
    np.testing.assert_array_equal(got.numpy(), values.detach().numpy())
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(values.detach().numpy()))
    _, vjp = tl.vjp(lambda t: tl.cummin(t, axis=1), tl.tensor(x))
    np.testing.assert_array_equal(vjp(tl.tensor(g))[0].numpy(), tg.numpy())


def test_cummax_of_bools_and_ints_and_numpys_accumulate():
    b = np.array([[False, True, False], [False, False, True]])
    assert_same(tl.cummax(tl.tensor(b), axis=1), np.maximum.accumulate(b, axis=1))
    assert_same(tl.cummin(tl.tensor(b), axis=0), np.minimum.accumulate(b, axis=0))
    i = np.array([3, -1, 4, 1, -5], np.int32)
    assert_same(np.maximum.accumulate(tl.tensor(i)), np.maximum.accumulate(i))


# ------------------------------------------------------------------ cumulative_sum / cumulative_prod
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize(
    "x, kwargs",
    [
        (np.array([1, 2, 3], np.int32), {"include_initial": True}),
        (np.arange(6.0).reshape(2, 3) - 2, {"axis": -1, "include_initial": True}),
        (np.array([[True, False], [True, True]]), {"axis": 0, "dtype": bool}),
        (np.array([2**20, 2**20, 2**20], np.int64), {"dtype": np.int32}),  # accumulated in int32: wraps
        (np.zeros((2, 0)), {"axis": 1, "include_initial": True}),
    ],
)
def test_cumulative_sum_and_prod_are_numpys(name, x, kwargs):
    assert_same(getattr(tl, name)(tl.tensor(x), **kwargs), getattr(np, name)(x, **kwargs))
    assert_same(getattr(np, name)(tl.tensor(x), **kwargs), getattr(np, name)(x, **kwargs))


def test_cumulative_sum_needs_an_axis_beyond_one_dimension():
    with pytest.raises(ValueError, match=r"cumulative_sum: an input of more than one dimension needs an axis"):
        tl.cumulative_sum(tl.ones((2, 2)))


# ------------------------------------------------------------------ logcumsumexp
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reverse", [False, True])
def test_logcumsumexp_is_numpys_logaddexp_accumulate_without_overflow(mode, reverse):
    x = np.array([[1000.0, 1000.0, -np.inf, -1000.0], [-np.inf, -np.inf, 0.0, 800.0]])
    want = np.logaddexp.accumulate(x[:, ::-1] if reverse else x, axis=1)
    got = run_in_mode(mode, lambda t: tl.logcumsumexp(t, axis=1, reverse=reverse), x)
    assert_same(got, want[:, ::-1] if reverse else want)


@pytest.mark.parametrize("reverse", [False, True])
def test_logcumsumexp_gradient_and_hessian_match_torch_far_from_zero(reverse):
    torch = pytest.importorskip("torch")
    x = np.array([[700.0, -700.0, 699.0, 0.5], [-800.0, -801.0, -799.5, -900.0]])
    g, v = np.array([[1.0, -2.0, 0.5, 3.0], [-1.0, 0.0, 2.0, 1.0]]), np.linspace(-1.0, 1.0, 8).reshape(2, 4)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.logcumsumexp(tx.flip(1), 1).flip(1) if reverse else torch.logcumsumexp(tx, 1)
    (tg,) = torch.autograd.grad(ty, tx, torch.tensor(g), create_graph=True)
    (th,) = torch.autograd.grad(tg, tx, torch.tensor(v))

    def vjp(t):
        return tl.vjp(lambda u: tl.logcumsumexp(u, axis=1, reverse=reverse), t)[1](tl.tensor(g))[0]

    np.testing.assert_allclose(vjp(tl.tensor(x)).numpy(), tg.detach().numpy(), rtol=1e-12, atol=1e-300)
    hvp = tl.grad(lambda t: tl.sum(vjp(t) * tl.tensor(v)))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(hvp, th.numpy(), rtol=1e-10, atol=1e-300)
    assert_same(np.logaddexp.accumulate(tl.tensor(x), axis=1), np.logaddexp.accumulate(x, axis=1))


# ------------------------------------------------------------------ cumsum/cumprod dtype=, diff's edges
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, bool])
def test_cumsum_and_cumprod_take_numpys_dtype(name, dtype):
    # np.cumsum(tensor, dtype=...) raised "argument dtype is not supported on tensorlib Tensors".
    x = np.array([[2**20, 3, 0], [2**20, -1, 5]], np.int64)
    assert_same(getattr(np, name)(tl.tensor(x), axis=0, dtype=dtype), getattr(np, name)(x, axis=0, dtype=dtype))


@pytest.mark.parametrize("where", ["prepend", "append"])
@pytest.mark.parametrize("shape", [(1, 1), (2,), (3, 2)])
def test_diff_edges_that_do_not_fit_name_diff(where, shape):
    # The error came from ConcatV2, naming neither diff nor which argument.
    with pytest.raises(ValueError, match=rf"^diff: {where} must be a scalar or match a outside axis 1, got shape"):
        tl.diff(tl.ones((2, 3)), axis=1, **{where: np.ones(shape)})
